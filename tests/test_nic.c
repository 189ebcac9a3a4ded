/* The NIC: the central map, messages out as cells round robin over
 * destinations, per-VOQ pauses, cells carried through switches by the
 * forwarding rule and reassembled per source and route, and every drop. */
#include "testlib.h"

#include <stdlib.h>

#include "rifl/nic.h"

static rifl_topology *gen(const char *spec)
{
    rifl_topology *t = NULL;
    char err[256];
    if (rifl_topo_generate(spec, &t, err, sizeof err) != RIFL_OK)
        return NULL;
    return t;
}

/* Carry a cell from host node `from` to where its route leads, switch by
 * switch with the forwarding rule and header update; the host node reached,
 * or -1. */
static int carry(const rifl_topology *t, unsigned from, uint8_t *cell)
{
    rifl_l2_hdr h;
    memcpy(h.b, cell, RIFL_L2_HDR_BYTES);
    int u = t->nodes[from].peer[0];
    unsigned in = t->nodes[from].peer_port[0];
    while (u >= 0 && t->nodes[u].is_switch) {
        unsigned out;
        if (rifl_l2_forward(t->nodes[u].nports, in, &h, &out) != RIFL_L2_FWD_UNICAST)
            return -1;
        rifl_l2_hdr_advance(&h, in, out);
        int next = t->nodes[u].peer[out];
        in = t->nodes[u].peer_port[out];
        u = next;
    }
    memcpy(cell, h.b, RIFL_L2_HDR_BYTES);
    return u;
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

static void t_map(void)
{
    rifl_topology *t = gen("leafspine:4x3x2");
    REQUIRE(t);
    rifl_nic_map *m = NULL;
    char err[256];
    REQUIRE(rifl_nic_map_create(t, 8, &m, err, sizeof err) == RIFL_OK);
    CHECK_EQ_U(rifl_nic_map_hosts(m), 8);
    unsigned c;
    /* same leaf: one route of one hop; other leaves: one per spine */
    const rifl_nic_route *r = rifl_nic_map_routes(m, 0, 1, &c);
    CHECK_EQ_U(c, 1);
    CHECK_EQ_U(r[0].hops, 1);
    CHECK_EQ_U(r[0].voq, 1); /* leaf0 port 1 leads to h1 */
    r = rifl_nic_map_routes(m, 0, 7, &c);
    CHECK_EQ_U(c, 3);
    for (unsigned k = 0; k < c; k++) {
        CHECK_EQ_U(r[k].hops, 3);
        CHECK_EQ_U(r[k].voq, 2 + k); /* leaf port H + j to spine j */
        CHECK_EQ_I(rifl_nic_map_follow(m, 0, r[k].rel, r[k].hops), 7);
    }
    CHECK(rifl_nic_map_routes(m, 3, 3, &c) == NULL && c == 0);
    CHECK(rifl_nic_map_routes(m, 0, 8, &c) == NULL && c == 0);
    CHECK_EQ_I(rifl_nic_map_host_of(m, (unsigned)rifl_nic_map_node(m, 5)), 5);
    CHECK_EQ_I(rifl_nic_map_host_of(m, (unsigned)rifl_topo_find(t, "spine0")), -1);
    rifl_nic_map_free(m);
    /* capped: one path only */
    REQUIRE(rifl_nic_map_create(t, 1, &m, err, sizeof err) == RIFL_OK);
    rifl_nic_map_routes(m, 0, 7, &c);
    CHECK_EQ_U(c, 1);
    rifl_nic_map_free(m);
    CHECK_EQ_I(rifl_nic_map_create(t, 0, &m, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "max_paths") != NULL);
    CHECK_EQ_I(rifl_nic_map_create(t, 65, &m, err, sizeof err), RIFL_ERR_CONFIG);
    rifl_topo_free(t);
    /* one host is no network */
    rifl_topology *one = NULL;
    const char *text = "switch s 2\nhost a\nlink a s:0\n";
    REQUIRE(rifl_topo_parse(text, strlen(text), &one, err, sizeof err) == RIFL_OK);
    CHECK_EQ_I(rifl_nic_map_create(one, 4, &m, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "two or more") != NULL);
    rifl_topo_free(one);
    /* a host no other can reach */
    text = "switch s1 2\nswitch s2 2\nhost a\nhost b\nhost c\n"
           "link a s1:0\nlink b s1:1\nlink c s2:0\n";
    REQUIRE(rifl_topo_parse(text, strlen(text), &one, err, sizeof err) == RIFL_OK);
    CHECK_EQ_I(rifl_nic_map_create(one, 4, &m, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(err, "disconnected") != NULL, "%s", err);
    rifl_topo_free(one);
}

/* Every host sends messages of many sizes to every other host over every
 * path; the cells are carried by the forwarding rule, interleaved across
 * sources at each receiver, and the messages come out whole. */
static void t_end_to_end(void)
{
    const char *specs[] = { "single:5", "leafspine:3x2x2", "fattree:4" };
    for (unsigned s = 0; s < 3; s++) {
        rifl_topology *t = gen(specs[s]);
        REQUIRE(t);
        rifl_nic_map *m = NULL;
        char err[256];
        REQUIRE(rifl_nic_map_create(t, 4, &m, err, sizeof err) == RIFL_OK);
        unsigned H = rifl_nic_map_hosts(m);
        rifl_nic **nic = calloc(H, sizeof *nic);
        REQUIRE(nic);
        rifl_nic_config cfg = rifl_nic_default_config;
        cfg.tx_messages = 64;
        for (unsigned h = 0; h < H; h++)
            REQUIRE(rifl_nic_create(&cfg, m, h, &nic[h], err, sizeof err) == RIFL_OK);
        /* messages: sizes 1..1100 spread, 3 per (src, dst), flows 0..2 */
        enum { PER = 3, MAXLEN = 1100 };
        size_t nmsg = (size_t)H * H * PER;
        uint8_t *msgs = malloc(nmsg * MAXLEN);
        size_t *lens = calloc(nmsg, sizeof *lens);
        uint8_t *got = calloc(nmsg, MAXLEN);
        size_t *got_len = calloc(nmsg, sizeof *got_len);
        unsigned *done = calloc(nmsg, sizeof *done);
        /* which message each (dst, src, context) is receiving */
        REQUIRE(msgs && lens && got && got_len && done);
        for (unsigned a = 0; a < H; a++)
            for (unsigned b = 0; b < H; b++)
                for (unsigned k = 0; a != b && k < PER; k++) {
                    size_t i = ((size_t)a * H + b) * PER + k;
                    lens[i] = 1 + (i * 397) % MAXLEN;
                    fill(msgs + i * MAXLEN, lens[i], (unsigned)i);
                    REQUIRE(rifl_nic_post(nic[a], b, k, msgs + i * MAXLEN, lens[i], i, 0) ==
                            RIFL_OK);
                }
        /* each round every host sends one cell; the cells of a round arrive
         * in host order, so every receiver sees sources interleaved */
        uint64_t now = 1, cells = 0, bad = 0, wrong_src = 0, wrong_back = 0;
        unsigned paths_back = 0;
        size_t *cur = calloc((size_t)H * H * 4, sizeof *cur); /* (dst, src, ctx) -> msg */
        REQUIRE(cur);
        for (int busy = 1; busy; now++) {
            busy = 0;
            for (unsigned a = 0; a < H; a++) {
                uint8_t cell[RIFL_L2_CELL_BYTES];
                rifl_nic_tx tx;
                if (!rifl_nic_next_cell(nic[a], now, cell, &tx))
                    continue;
                busy = 1;
                cells++;
                int to = carry(t, (unsigned)rifl_nic_map_node(m, a), cell);
                int b = to < 0 ? -1 : rifl_nic_map_host_of(m, (unsigned)to);
                if (b != (int)tx.dst) {
                    bad++;
                    continue;
                }
                rifl_nic_rx rx;
                if (rifl_nic_receive(nic[b], now, cell, sizeof cell, &rx) != RIFL_OK) {
                    bad++;
                    continue;
                }
                wrong_src += rx.src != a;
                /* the way back: the cell's route reversed, which leads to
                 * its source and is one of the map's routes to it */
                unsigned nback;
                const rifl_nic_route *back = rifl_nic_map_routes(m, b, a, &nback);
                bool back_ok = rx.path >= 0 && (unsigned)rx.path < nback &&
                               back[rx.path].hops == rx.hops &&
                               !memcmp(back[rx.path].rel, rx.route, rx.hops) &&
                               rifl_nic_map_follow(m, (unsigned)b, rx.route, rx.hops) == (int)a;
                wrong_back += !back_ok;
                paths_back |= back_ok ? 1u << rx.path : 0;
                size_t *slot = &cur[((size_t)b * H + a) * 4 + rx.context];
                if (rx.first)
                    *slot = tx.tag;
                size_t i = *slot;
                if (rx.offset + rx.len > MAXLEN || rx.msg_len != lens[i]) {
                    bad++;
                    continue;
                }
                memcpy(got + i * MAXLEN + rx.offset, rx.data, rx.len);
                got_len[i] += rx.len;
                if (rx.last)
                    done[i]++;
            }
        }
        CHECK_EQ_U(bad, 0);
        CHECK_EQ_U(wrong_src, 0);
        CHECK_EQ_U(wrong_back, 0);
        /* (one route between two hosts of a single switch; several in the
         * others, and answers go back on each) */
        CHECK(s == 0 ? paths_back == 1 : paths_back > 1);
        size_t complete = 0, wrong = 0;
        for (size_t i = 0; i < nmsg; i++) {
            if (!lens[i])
                continue;
            complete += done[i] == 1 && got_len[i] == lens[i];
            wrong += memcmp(got + i * MAXLEN, msgs + i * MAXLEN, lens[i]) != 0;
        }
        CHECK_EQ_U(complete, (size_t)H * (H - 1) * PER);
        CHECK_EQ_U(wrong, 0);
        uint64_t rx_cells = 0;
        for (unsigned h = 0; h < H; h++) {
            const rifl_nic_stats *st = rifl_nic_get_stats(nic[h]);
            rx_cells += st->cells_rx;
            CHECK_EQ_U(st->msg_rx, (H - 1) * PER);
            CHECK_EQ_U(st->rx_no_context + st->rx_bad_route + st->rx_bad_header, 0);
            CHECK_EQ_U(rifl_nic_tx_messages(nic[h]), 0);
            rifl_nic_free(nic[h]);
        }
        CHECK_EQ_U(rx_cells, cells);
        free(cur); free(msgs); free(lens); free(got); free(got_len); free(done); free(nic);
        rifl_nic_map_free(m);
        rifl_topo_free(t);
    }
}

/* A paused first-hop VOQ holds its destination and no other; cells of one
 * destination leave in order; head times follow the cells ahead. */
static void t_pause(void)
{
    rifl_topology *t = gen("single:4");
    REQUIRE(t);
    rifl_nic_map *m = NULL;
    rifl_nic *n = NULL;
    char err[256];
    REQUIRE(rifl_nic_map_create(t, 1, &m, err, sizeof err) == RIFL_OK);
    REQUIRE(rifl_nic_create(&rifl_nic_default_config, m, 0, &n, err, sizeof err) == RIFL_OK);
    uint8_t a[600], b[10];
    fill(a, sizeof a, 1);
    fill(b, sizeof b, 2);
    REQUIRE(rifl_nic_post(n, 1, 0, a, sizeof a, 100, 5) == RIFL_OK); /* 3 cells */
    REQUIRE(rifl_nic_post(n, 2, 0, b, sizeof b, 200, 6) == RIFL_OK); /* 1 cell */
    CHECK_EQ_U(rifl_nic_tx_cells(n), 4);
    unsigned c;
    unsigned voq1 = rifl_nic_map_routes(m, 0, 1, &c)[0].voq;
    CHECK_EQ_U(voq1, 1);
    rifl_l2_fc on = { .on_valid = true, .on_queue = (uint8_t)voq1 };
    REQUIRE(rifl_nic_fc(n, &on) == RIFL_OK);
    CHECK(rifl_nic_paused(n, voq1));
    uint8_t cell[RIFL_L2_CELL_BYTES];
    rifl_nic_tx tx;
    REQUIRE(rifl_nic_next_cell(n, 10, cell, &tx) == 1);
    CHECK_EQ_U(tx.dst, 2);
    CHECK_EQ_U(tx.tag, 200);
    CHECK(tx.last);
    CHECK_EQ_U(tx.head, 6);
    CHECK_EQ_I(rifl_nic_next_cell(n, 11, cell, &tx), 0); /* only h1's, paused */
    CHECK(rifl_nic_get_stats(n)->paused_skips > 0);
    rifl_l2_fc off = { .off_valid = true, .off_queue = (uint8_t)voq1 };
    REQUIRE(rifl_nic_fc(n, &off) == RIFL_OK);
    for (unsigned k = 0; k < 3; k++) {
        REQUIRE(rifl_nic_next_cell(n, 20 + k, cell, &tx) == 1);
        CHECK_EQ_U(tx.dst, 1);
        CHECK_EQ_U(tx.index, k);
        CHECK_EQ_U(tx.cells, 3);
        CHECK_EQ_U(tx.posted, 5);
        /* head: first when the queue started (posted at 5), then when the
         * cell ahead left */
        CHECK_EQ_U(tx.head, k == 0 ? 5 : 20 + k - 1);
        CHECK(tx.last == (k == 2));
    }
    CHECK_EQ_I(rifl_nic_next_cell(n, 30, cell, &tx), 0);
    CHECK_EQ_U(rifl_nic_get_stats(n)->msg_sent, 2);
    /* round robin: two destinations take turns */
    for (unsigned k = 0; k < 4; k++) {
        REQUIRE(rifl_nic_post(n, 1, 0, b, 1, k, 40) == RIFL_OK);
        REQUIRE(rifl_nic_post(n, 3, 0, b, 1, k, 40) == RIFL_OK);
    }
    unsigned prev = 99, alternations = 0;
    while (rifl_nic_next_cell(n, 50, cell, &tx) == 1) {
        alternations += tx.dst != prev;
        prev = tx.dst;
    }
    CHECK_EQ_U(alternations, 8);
    rifl_nic_free(n);
    rifl_nic_map_free(m);
    rifl_topo_free(t);
}

/* Virtual lanes: a cell for host d goes on VL d mod vls; a destination
 * whose VL has no credit waits, the others go on. */
static void t_block_vls(void)
{
    rifl_topology *t = gen("single:4");
    REQUIRE(t);
    rifl_nic_map *m = NULL;
    rifl_nic *n = NULL;
    char err[256];
    REQUIRE(rifl_nic_map_create(t, 1, &m, err, sizeof err) == RIFL_OK);
    rifl_nic_config cfg = rifl_nic_default_config;
    cfg.vls = 16;
    CHECK_EQ_I(rifl_nic_create(&cfg, m, 0, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "virtual lanes") != NULL);
    cfg.vls = 2;
    REQUIRE(rifl_nic_create(&cfg, m, 0, &n, err, sizeof err) == RIFL_OK);
    CHECK_EQ_I(rifl_nic_block_vls(n, 1u << 2), RIFL_ERR_INVALID_ARG);
    uint8_t b[10];
    fill(b, sizeof b, 2);
    REQUIRE(rifl_nic_post(n, 1, 0, b, sizeof b, 1, 0) == RIFL_OK); /* VL 1 */
    REQUIRE(rifl_nic_post(n, 2, 0, b, sizeof b, 2, 0) == RIFL_OK); /* VL 0 */
    REQUIRE(rifl_nic_post(n, 3, 0, b, sizeof b, 3, 0) == RIFL_OK); /* VL 1 */
    REQUIRE(rifl_nic_block_vls(n, 1u << 1) == RIFL_OK);
    uint8_t cell[RIFL_L2_CELL_BYTES];
    rifl_nic_tx tx;
    REQUIRE(rifl_nic_next_cell(n, 1, cell, &tx) == 1);
    CHECK_EQ_U(tx.dst, 2);
    CHECK_EQ_U(tx.vl, 0);
    CHECK_EQ_I(rifl_nic_next_cell(n, 2, cell, &tx), 0);
    CHECK(rifl_nic_get_stats(n)->credit_skips >= 2);
    CHECK_EQ_U(rifl_nic_get_stats(n)->paused_skips, 0);
    REQUIRE(rifl_nic_block_vls(n, 0) == RIFL_OK);
    REQUIRE(rifl_nic_next_cell(n, 3, cell, &tx) == 1);
    CHECK(tx.vl == 1 && (tx.dst == 1 || tx.dst == 3));
    rifl_nic_free(n);
    rifl_nic_map_free(m);
    rifl_topo_free(t);
}

static void t_refusals(void)
{
    rifl_topology *t = gen("single:3");
    REQUIRE(t);
    rifl_nic_map *m = NULL;
    rifl_nic *n = NULL, *r = NULL;
    char err[256];
    REQUIRE(rifl_nic_map_create(t, 2, &m, err, sizeof err) == RIFL_OK);
    rifl_nic_config cfg = { .tx_messages = 2 };
    CHECK_EQ_I(rifl_nic_create(&cfg, m, 3, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "hosts 0 to 2") != NULL);
    cfg.tx_messages = 0;
    CHECK_EQ_I(rifl_nic_create(&cfg, m, 0, &n, err, sizeof err), RIFL_ERR_CONFIG);
    cfg.tx_messages = 2;
    REQUIRE(rifl_nic_create(&cfg, m, 0, &n, err, sizeof err) == RIFL_OK);
    REQUIRE(rifl_nic_create(&cfg, m, 1, &r, err, sizeof err) == RIFL_OK);
    uint8_t b[4] = { 1, 2, 3, 4 };
    CHECK_EQ_I(rifl_nic_post(n, 0, 0, b, 4, 0, 0), RIFL_ERR_INVALID_ARG); /* itself */
    CHECK_EQ_I(rifl_nic_post(n, 3, 0, b, 4, 0, 0), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_nic_post(n, 1, 0, b, 0, 0, 0), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_nic_post(n, 1, 0, NULL, 4, 0, 0), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_nic_post(n, 1, 0, b, RIFL_L2_MSG_MAX + 1, 0, 0), RIFL_ERR_INVALID_ARG);
    REQUIRE(rifl_nic_post(n, 1, 0, b, 4, 0, 0) == RIFL_OK);
    REQUIRE(rifl_nic_post(n, 2, 0, b, 4, 0, 0) == RIFL_OK);
    CHECK_EQ_I(rifl_nic_post(n, 1, 0, b, 4, 0, 0), RIFL_ERR_AGAIN);
    CHECK_EQ_U(rifl_nic_get_stats(n)->post_refused, 1);

    /* drops at the receiver, each counted */
    uint8_t cell[RIFL_L2_CELL_BYTES];
    rifl_nic_tx tx;
    rifl_nic_rx rx;
    do
        REQUIRE(rifl_nic_next_cell(n, 1, cell, &tx) == 1);
    while (tx.dst != 1);
    uint8_t good[RIFL_L2_CELL_BYTES];
    memcpy(good, cell, sizeof cell);
    REQUIRE(carry(t, (unsigned)rifl_nic_map_node(m, 0), good) >= 0);
    CHECK_EQ_I(rifl_nic_receive(r, 2, good, sizeof good - 1, &rx), RIFL_ERR_FRAME);
    CHECK_EQ_U(rifl_nic_get_stats(r)->rx_bad_len, 1);
    /* not carried: a hop left */
    CHECK_EQ_I(rifl_nic_receive(r, 2, cell, sizeof cell, &rx), RIFL_ERR_FRAME);
    CHECK_EQ_U(rifl_nic_get_stats(r)->rx_bad_header, 1);
    /* a return route to nowhere: port 7 of a 3-port switch */
    uint8_t forged[RIFL_L2_CELL_BYTES];
    memcpy(forged, good, sizeof good);
    forged[5] = 7;
    CHECK_EQ_I(rifl_nic_receive(r, 2, forged, sizeof forged, &rx), RIFL_ERR_FRAME);
    CHECK_EQ_U(rifl_nic_get_stats(r)->rx_bad_route, 1);
    /* a reserved protocol, and a length of 0 */
    memcpy(forged, good, sizeof good);
    forged[RIFL_L2_HDR_BYTES] = 0x07;
    CHECK_EQ_I(rifl_nic_receive(r, 2, forged, sizeof forged, &rx), RIFL_ERR_FRAME);
    memcpy(forged, good, sizeof good);
    memset(forged + RIFL_L2_HDR_BYTES + 1, 0, 3);
    CHECK_EQ_I(rifl_nic_receive(r, 2, forged, sizeof forged, &rx), RIFL_ERR_FRAME);
    CHECK_EQ_U(rifl_nic_get_stats(r)->rx_reserved, 2);
    /* the good cell still goes through */
    REQUIRE(rifl_nic_receive(r, 2, good, sizeof good, &rx) == RIFL_OK);
    CHECK(rx.first && rx.last && rx.len == 4 && rx.src == 0 && !memcmp(rx.data, b, 4));
    CHECK_EQ_U(rifl_nic_get_stats(r)->cells_rx, 1);
    rifl_nic_free(n);
    rifl_nic_free(r);
    rifl_nic_map_free(m);
    rifl_topo_free(t);
}

/* More routes in use from one source than contexts: the cell is refused. */
static void t_contexts(void)
{
    rifl_topology *t = gen("leafspine:2x3x1");
    REQUIRE(t);
    rifl_nic_map *m3 = NULL, *m1 = NULL;
    rifl_nic *s = NULL, *d = NULL;
    char err[256];
    REQUIRE(rifl_nic_map_create(t, 3, &m3, err, sizeof err) == RIFL_OK);
    REQUIRE(rifl_nic_map_create(t, 1, &m1, err, sizeof err) == RIFL_OK);
    REQUIRE(rifl_nic_create(&rifl_nic_default_config, m3, 0, &s, err, sizeof err) == RIFL_OK);
    REQUIRE(rifl_nic_create(&rifl_nic_default_config, m1, 1, &d, err, sizeof err) == RIFL_OK);
    static uint8_t big[600];
    /* three flows on three paths, each a 3-cell message */
    unsigned paths_used = 0;
    for (uint64_t f = 0; f < 64 && paths_used != 7; f++) {
        unsigned p = rifl_topo_flow_path(0, 1, f, 3);
        if (paths_used & (1u << p))
            continue;
        paths_used |= 1u << p;
        REQUIRE(rifl_nic_post(s, 1, f, big, sizeof big, p, 0) == RIFL_OK);
    }
    REQUIRE(paths_used == 7);
    uint8_t cell[3][RIFL_L2_CELL_BYTES];
    rifl_nic_tx tx;
    int rc[3];
    for (unsigned k = 0; k < 3; k++) {
        REQUIRE(rifl_nic_next_cell(s, 1, cell[k], &tx) == 1);
        REQUIRE(carry(t, (unsigned)rifl_nic_map_node(m3, 0), cell[k]) >= 0);
    }
    /* the three cells are the first message's (one destination, in order) */
    rifl_nic_rx rx;
    for (unsigned k = 0; k < 3; k++)
        rc[k] = rifl_nic_receive(d, 2, cell[k], RIFL_L2_CELL_BYTES, &rx);
    CHECK(rc[0] == RIFL_OK && rc[1] == RIFL_OK && rc[2] == RIFL_OK);
    CHECK(rx.last);
    /* next message's first cell on another path takes the free context; a
     * third route while that one is in progress has none */
    uint8_t c2[RIFL_L2_CELL_BYTES], c3[RIFL_L2_CELL_BYTES];
    REQUIRE(rifl_nic_next_cell(s, 1, c2, &tx) == 1);
    carry(t, (unsigned)rifl_nic_map_node(m3, 0), c2);
    CHECK_EQ_I(rifl_nic_receive(d, 3, c2, sizeof c2, &rx), RIFL_OK);
    REQUIRE(rifl_nic_next_cell(s, 1, c3, &tx) == 1);
    REQUIRE(rifl_nic_next_cell(s, 1, c3, &tx) == 1);
    REQUIRE(rifl_nic_next_cell(s, 1, c3, &tx) == 1); /* third message, first cell */
    carry(t, (unsigned)rifl_nic_map_node(m3, 0), c3);
    CHECK_EQ_I(rifl_nic_receive(d, 4, c3, sizeof c3, &rx), RIFL_ERR_AGAIN);
    CHECK_EQ_U(rifl_nic_get_stats(d)->rx_no_context, 1);
    rifl_nic_free(s);
    rifl_nic_free(d);
    rifl_nic_map_free(m3);
    rifl_nic_map_free(m1);
    rifl_topo_free(t);
}

/* A whole message with its own prefix (an RDMA bundle) goes into cells as
 * it is, on the route the caller names, and arrives byte for byte with its
 * prefix reported; prefixes that are reserved or disagree are refused. */
static void t_post_msg(void)
{
    rifl_topology *t = gen("leafspine:2x3x1");
    REQUIRE(t);
    rifl_nic_map *m = NULL;
    rifl_nic *s = NULL, *d = NULL;
    char err[256];
    REQUIRE(rifl_nic_map_create(t, 3, &m, err, sizeof err) == RIFL_OK);
    REQUIRE(rifl_nic_create(&rifl_nic_default_config, m, 0, &s, err, sizeof err) == RIFL_OK);
    REQUIRE(rifl_nic_create(&rifl_nic_default_config, m, 1, &d, err, sizeof err) == RIFL_OK);
    static uint8_t bundle[4 + 700];
    fill(bundle + 4, 700, 9);
    bundle[0] = RIFL_L2_PROTO_RDMA;
    bundle[1] = 3; /* packet count: the NIC does not look */
    bundle[2] = 700 >> 8;
    bundle[3] = 700 & 0xFF;
    unsigned c;
    rifl_nic_map_routes(m, 0, 1, &c);
    REQUIRE(c == 3);
    CHECK_EQ_I(rifl_nic_post_msg(s, 1, 3, bundle, sizeof bundle, 0, 0), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_nic_post_msg(s, 1, 0, bundle, sizeof bundle - 1, 0, 0),
               RIFL_ERR_INVALID_ARG); /* the prefix says 700 */
    CHECK_EQ_I(rifl_nic_post_msg(s, 1, 0, bundle, 4, 0, 0), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_nic_post_msg(s, 0, 0, bundle, sizeof bundle, 0, 0), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_nic_post_msg(NULL, 1, 0, bundle, sizeof bundle, 0, 0), RIFL_ERR_INVALID_ARG);
    bundle[0] = 0x07;
    CHECK_EQ_I(rifl_nic_post_msg(s, 1, 0, bundle, sizeof bundle, 0, 0), RIFL_ERR_INVALID_ARG);
    bundle[0] = RIFL_L2_PROTO_RDMA;
    CHECK_EQ_U(rifl_nic_get_stats(s)->msg_posted, 0);
    /* on route 2, and a data message with its own prefix on route 1 */
    REQUIRE(rifl_nic_post_msg(s, 1, 2, bundle, sizeof bundle, 77, 3) == RIFL_OK);
    uint8_t data[4 + 10] = { RIFL_L2_PROTO_DATA, 0, 0, 10 };
    fill(data + 4, 10, 4);
    REQUIRE(rifl_nic_post_msg(s, 1, 1, data, sizeof data, 78, 3) == RIFL_OK);
    CHECK_EQ_U(rifl_nic_tx_cells(s), 3 + 1);
    static uint8_t got[704];
    size_t have = 0;
    uint8_t cell[RIFL_L2_CELL_BYTES];
    rifl_nic_tx tx;
    rifl_nic_rx rx;
    for (unsigned k = 0; k < 3; k++) {
        REQUIRE(rifl_nic_next_cell(s, 4, cell, &tx) == 1);
        CHECK_EQ_U(tx.path, 2);
        CHECK_EQ_U(tx.tag, 77);
        CHECK_EQ_U(tx.cells, 3);
        CHECK(tx.last == (k == 2));
        if (k == 2) /* padded with zeros */
            for (unsigned i = RIFL_L2_HDR_BYTES + 704 - 512; i < RIFL_L2_CELL_BYTES; i++)
                CHECK_EQ_U(cell[i], 0);
        REQUIRE(carry(t, (unsigned)rifl_nic_map_node(m, 0), cell) >= 0);
        REQUIRE(rifl_nic_receive(d, 5, cell, sizeof cell, &rx) == RIFL_OK);
        CHECK_EQ_U(rx.proto, RIFL_L2_PROTO_RDMA);
        CHECK_EQ_U(rx.msg_len, 700);
        CHECK_EQ_U(rx.offset, have);
        if (k == 0)
            CHECK(rx.first && !memcmp(rx.prefix, bundle, 4));
        memcpy(got + have, rx.data, rx.len);
        have += rx.len;
    }
    CHECK(rx.last);
    CHECK_EQ_U(have, 700);
    CHECK(!memcmp(got, bundle + 4, 700));
    REQUIRE(rifl_nic_next_cell(s, 4, cell, &tx) == 1);
    CHECK_EQ_U(tx.path, 1);
    REQUIRE(carry(t, (unsigned)rifl_nic_map_node(m, 0), cell) >= 0);
    REQUIRE(rifl_nic_receive(d, 6, cell, sizeof cell, &rx) == RIFL_OK);
    CHECK(rx.first && rx.last && rx.proto == RIFL_L2_PROTO_DATA && rx.len == 10 &&
          !memcmp(rx.data, data + 4, 10));
    rifl_nic_free(s);
    rifl_nic_free(d);
    rifl_nic_map_free(m);
    rifl_topo_free(t);
}

TEST_MAIN({ "map", t_map }, { "end_to_end", t_end_to_end }, { "pause", t_pause },
          { "block_vls", t_block_vls },
          { "refusals", t_refusals }, { "contexts", t_contexts },
          { "post_msg", t_post_msg })

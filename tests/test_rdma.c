/* The RDMA engine (rifl/rdma.h): engines joined back to back by a wire in
 * this file that can lose, duplicate, reorder and damage bundles; every
 * transfer checked byte for byte, target memory checked with canaries
 * where an access must fail. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/rdma.h"
#include "rifl/rng.h"
#include "rifl/sim/rdmasim.h"
#include "testlib.h"

#define NODES 3
#define PD 7
#define MEM (1u << 20)

struct pkt_msg {
    uint64_t at;
    unsigned to;
    rifl_rdma_route from;
    size_t len;
    uint8_t b[RIFL_RDMA_BUNDLE_CAP];
};

struct wire {
    rifl_rdma *e[NODES];
    uint8_t *mem[NODES];
    rifl_rdma_mr mr[NODES];
    struct pkt_msg *q;
    size_t qn, qcap;
    uint64_t now, delay;
    rifl_rng rng;
    double loss, dup, reorder;
    /* called on every bundle before it travels: may change its bytes;
     * returns false to drop it */
    bool (*tamper)(struct wire *w, struct pkt_msg *m);
    unsigned tampered;
    bool serve_faults;
    uint64_t sent;
};

static void wire_init(struct wire *w, const rifl_rdma_config *base, uint64_t seed)
{
    memset(w, 0, sizeof *w);
    w->delay = 500;
    rifl_rng_seed(&w->rng, seed);
    for (unsigned n = 0; n < NODES; n++) {
        rifl_rdma_config c = base ? *base : rifl_rdma_default_config;
        c.node = n + 1;
        char msg[128];
        REQUIRE(rifl_rdma_open(&c, &w->e[n], msg, sizeof msg) == RIFL_OK);
        for (unsigned m = 0; m < NODES; m++)
            REQUIRE(rifl_rdma_add_node(w->e[n], m + 1, 2) == RIFL_OK);
        REQUIRE(rifl_rdma_alloc_pd(w->e[n], PD) == RIFL_OK);
        w->mem[n] = calloc(MEM, 1);
        REQUIRE(w->mem[n] != NULL);
        REQUIRE(rifl_rdma_reg_mr(w->e[n], PD, w->mem[n], MEM,
                                 RIFL_RDMA_LOCAL_WRITE | RIFL_RDMA_REMOTE_WRITE |
                                     RIFL_RDMA_REMOTE_READ,
                                 &w->mr[n]) == RIFL_OK);
    }
    w->qcap = 64;
    w->q = malloc(w->qcap * sizeof *w->q);
}

static void wire_free(struct wire *w)
{
    for (unsigned n = 0; n < NODES; n++) {
        rifl_rdma_close(w->e[n]);
        free(w->mem[n]);
    }
    free(w->q);
}

static void wire_push(struct wire *w, const struct pkt_msg *m)
{
    if (w->qn == w->qcap) {
        w->qcap *= 2;
        w->q = realloc(w->q, w->qcap * sizeof *w->q);
    }
    w->q[w->qn++] = *m;
}

/* One step of 100 ns: engines send (one bundle each), messages due are
 * delivered, timers run. */
static void wire_step(struct wire *w)
{
    w->now += 100;
    for (unsigned n = 0; n < NODES; n++) {
        struct pkt_msg m;
        rifl_rdma_route to;
        size_t len = rifl_rdma_output(w->e[n], w->now, true, m.b, sizeof m.b, &to);
        if (!len)
            continue;
        w->sent++;
        m.len = len;
        m.to = to.node - 1;
        m.from = (rifl_rdma_route){ n + 1, to.route };
        m.at = w->now + w->delay;
        if (w->reorder > 0 && rifl_rng_double(&w->rng) < w->reorder)
            m.at += rifl_rng_below(&w->rng, 20 * w->delay);
        if (w->tamper && !w->tamper(w, &m))
            continue;
        if (w->loss > 0 && rifl_rng_double(&w->rng) < w->loss)
            continue;
        wire_push(w, &m);
        if (w->dup > 0 && rifl_rng_double(&w->rng) < w->dup) {
            m.at += rifl_rng_below(&w->rng, 4 * w->delay);
            wire_push(w, &m);
        }
    }
    for (size_t i = 0; i < w->qn;) {
        if (w->q[i].at <= w->now) {
            struct pkt_msg *m = &w->q[i];
            CHECK_EQ_I(rifl_rdma_input(w->e[m->to], w->now, m->b, m->len, m->from), RIFL_OK);
            w->q[i] = w->q[--w->qn];
        } else {
            i++;
        }
    }
    for (unsigned n = 0; n < NODES; n++) {
        if (w->serve_faults) {
            uint64_t page;
            while (rifl_rdma_poll_fault(w->e[n], &page))
                rifl_rdma_page_in(w->e[n], page, w->now);
        }
        if (rifl_rdma_next_due(w->e[n]) <= w->now)
            rifl_rdma_advance(w->e[n], w->now);
    }
}

/* Run until `e` has `want` completions (into wc) or `limit` ns pass. */
static unsigned wire_wait(struct wire *w, unsigned node, rifl_rdma_wc *wc, unsigned want,
                          uint64_t limit)
{
    unsigned got = 0;
    uint64_t end = w->now + limit;
    while (got < want && w->now < end) {
        wire_step(w);
        got += rifl_rdma_poll_cq(w->e[node], wc + got, want - got);
    }
    return got;
}

static void fill_random(uint8_t *p, size_t n, uint64_t seed)
{
    rifl_rng r;
    rifl_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rifl_rng_next(&r);
}

/* ---- cases --------------------------------------------------------------------------------- */

static void t_config_refused(void)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    rifl_rdma *e = NULL;
    char msg[160] = "";
    c.bundle_packets = 256;
    CHECK_EQ_I(rifl_rdma_open(&c, &e, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "bundle_packets") != NULL);
    c = rifl_rdma_default_config;
    c.mapping = RIFL_RDMA_MAP_CELL;
    c.bundle_packets = 2;
    CHECK_EQ_I(rifl_rdma_open(&c, &e, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "cell") != NULL);
    c = rifl_rdma_default_config;
    c.mapping = (rifl_rdma_mapping)3;
    CHECK_EQ_I(rifl_rdma_open(&c, &e, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "mapping") != NULL);
    c = rifl_rdma_default_config;
    c.node = 0x3FFFFF;
    CHECK_EQ_I(rifl_rdma_open(&c, &e, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "node") != NULL);
    CHECK(e == NULL);
    CHECK_EQ_I(rifl_rdma_open(NULL, &e, msg, sizeof msg), RIFL_ERR_INVALID_ARG);
    CHECK(strcmp(rifl_rdma_strerror(RIFL_ERR_RETRY_EXCEEDED), "E_RETRY_EXCEEDED") == 0);
    CHECK(strcmp(rifl_rdma_strerror(RIFL_ERR_AGAIN), "E_NO_RESOURCES") == 0);
}

static void t_write_notify(void)
{
    struct wire w;
    wire_init(&w, NULL, 1);
    fill_random(w.mem[0], 20000, 11);
    rifl_rdma_notification n = { rifl_rdma_gva_word(2, w.mr[1].va + 900000), 0xC0FFEE, 77 };
    /* 20000 bytes to an address 100 bytes past a 256 boundary: three blocks */
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va + 16284, 20000, 3, &n,
                                    42, w.now),
               RIFL_OK);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_U(wc.wr_id, 42);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK_EQ_U(wc.op, RIFL_RDMA_OP_WRITE);
    CHECK_EQ_U(wc.bytes, 20000);
    CHECK(memcmp(w.mem[1] + 16284, w.mem[0], 20000) == 0);
    CHECK(w.mem[1][16283] == 0 && w.mem[1][16284 + 20000] == 0);
    rifl_rdma_record rec;
    rifl_rdma_record_unpack(w.mem[1] + 900000, &rec);
    CHECK_EQ_U(rec.cookie, 0xC0FFEE);
    CHECK_EQ_U(rec.transfer_length, 20000);
    CHECK_EQ_U(rec.immediate, 77);
    CHECK_EQ_U(rec.src_node, 1);
    CHECK_EQ_U(rec.pdid, PD);
    CHECK(rec.written);
    const rifl_rdma_stats *s = rifl_rdma_get_stats(w.e[0]), *t = rifl_rdma_get_stats(w.e[1]);
    CHECK_EQ_U(s->blocks_acked, 3);
    CHECK_EQ_U(t->acks_tx, 3);
    CHECK_EQ_U(t->notifications_written, 1);
    CHECK_EQ_U(s->retransmitted_blocks, 0);
    CHECK_EQ_U(rifl_rdma_pending(w.e[0]), 0);
    wire_free(&w);
}

/* The packets the engine cuts from a block are the layout's. */
static uint64_t cut_seen;
static rifl_rdma_seg cut_list[256];
static unsigned cut_n;
static bool record_cuts(struct wire *w, struct pkt_msg *m)
{
    rifl_rdma_bundle_reader rd;
    rifl_rdma_bundle_reader_init(&rd, m->b + 4, m->len - 4, m->b[1]);
    rifl_rdma_packet p;
    rifl_rdma_check ck;
    while (rifl_rdma_bundle_next(&rd, &p, &ck) == RIFL_RDMA_WALK_PACKET)
        if (p.hdr.type == RIFL_RDMA_WRITE && cut_n < 256)
            cut_list[cut_n++] = (rifl_rdma_seg){ p.hdr.dst_va, p.hdr.length, p.ftr.pkt_index,
                                                 p.ftr.first, p.ftr.last };
    cut_seen++;
    return true;
}

static void t_packets_follow_layout(void)
{
    struct wire w;
    wire_init(&w, NULL, 2);
    w.tamper = record_cuts;
    cut_n = 0;
    uint64_t dst = w.mr[1].va + 16384 + 77; /* one block: inside one 16 KB window */
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va + 5, 2, dst, 9000, 0, NULL, 1, w.now),
               RIFL_OK);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    rifl_rdma_seg want[64];
    unsigned n = rifl_rdma_block_packets(dst, 9000, false, want);
    CHECK_EQ_U(cut_n, n);
    for (unsigned i = 0; i < n && i < cut_n; i++) {
        CHECK_EQ_U(cut_list[i].dst_va, want[i].dst_va);
        CHECK_EQ_U(cut_list[i].len, want[i].len);
        CHECK_EQ_U(cut_list[i].pkt_index, want[i].pkt_index);
        CHECK_EQ_U(cut_list[i].first, want[i].first);
        CHECK_EQ_U(cut_list[i].last, want[i].last);
    }
    CHECK(cut_list[0].len == 256 - 77);
    wire_free(&w);
}

static void t_read_and_send(void)
{
    struct wire w;
    wire_init(&w, NULL, 3);
    fill_random(w.mem[2] + 1000, 50000, 5);
    CHECK_EQ_I(rifl_rdma_post_read(w.e[0], PD, w.mr[0].va + 300, 3, w.mr[2].va + 1000, 50000, 1,
                                   99, w.now),
               RIFL_OK);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 2000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK_EQ_U(wc.op, RIFL_RDMA_OP_READ);
    CHECK_EQ_U(wc.wr_id, 99);
    CHECK(memcmp(w.mem[0] + 300, w.mem[2] + 1000, 50000) == 0);

    REQUIRE(rifl_rdma_create_mailbox(w.e[1], PD, 5, 2) == RIFL_OK);
    const char hello[] = "hello, mailbox";
    CHECK_EQ_I(rifl_rdma_post_send(w.e[0], PD, 2, 5, hello, sizeof hello, 7, w.now), RIFL_OK);
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK_EQ_U(wc.op, RIFL_RDMA_OP_SEND);
    char got[300];
    size_t len = 0;
    uint32_t src = 0;
    CHECK_EQ_I(rifl_rdma_poll_mailbox(w.e[1], PD, 5, got, sizeof got, &len, &src), 1);
    CHECK_EQ_U(len, sizeof hello);
    CHECK_EQ_U(src, 1);
    CHECK(memcmp(got, hello, sizeof hello) == 0);
    CHECK_EQ_I(rifl_rdma_poll_mailbox(w.e[1], PD, 5, got, sizeof got, &len, &src), 0);
    /* a full mailbox NACKs NO_CONTEXT; the send goes through once it is read */
    for (int i = 0; i < 3; i++)
        CHECK_EQ_I(rifl_rdma_post_send(w.e[0], PD, 2, 5, hello, 4, 10 + i, w.now), RIFL_OK);
    rifl_rdma_wc wcs[3];
    unsigned got_n = wire_wait(&w, 0, wcs, 2, 1000000);
    CHECK_EQ_U(got_n, 2);
    CHECK(rifl_rdma_get_stats(w.e[1])->nacks_tx[RIFL_RDMA_NACK_NO_CONTEXT] > 0);
    for (int i = 0; i < 2; i++)
        CHECK_EQ_I(rifl_rdma_poll_mailbox(w.e[1], PD, 5, got, sizeof got, &len, &src), 1);
    CHECK_EQ_U(wire_wait(&w, 0, wcs, 1, 1000000), 1);
    CHECK_EQ_I(wcs[0].status, RIFL_OK);
    CHECK_EQ_I(rifl_rdma_poll_mailbox(w.e[1], PD, 5, got, sizeof got, &len, &src), 1);
    /* the node that served the read saw its blocks acknowledged */
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[2])->read_requests_served, 1);
    wire_free(&w);
}

/* Every access the target must refuse: its memory stays as it was. */
static void t_protection(void)
{
    struct wire w;
    wire_init(&w, NULL, 4);
    memset(w.mem[1], 0xA5, MEM);
    uint8_t other[8192], ro[8192], edge[8192];
    memset(other, 0x3C, sizeof other);
    memset(ro, 0x3C, sizeof ro);
    memset(edge, 0x3C, sizeof edge);
    rifl_rdma_mr mr_other, mr_ro, mr_edge;
    /* only the first half of `edge` is registered: the rest is a canary */
    REQUIRE(rifl_rdma_reg_mr(w.e[1], PD, edge, 4096, RIFL_RDMA_REMOTE_WRITE, &mr_edge) == RIFL_OK);
    REQUIRE(rifl_rdma_alloc_pd(w.e[1], 9) == RIFL_OK);
    REQUIRE(rifl_rdma_reg_mr(w.e[1], 9, other, sizeof other, RIFL_RDMA_REMOTE_WRITE, &mr_other) ==
            RIFL_OK);
    REQUIRE(rifl_rdma_reg_mr(w.e[1], PD, ro, sizeof ro, RIFL_RDMA_REMOTE_READ, &mr_ro) == RIFL_OK);
    fill_random(w.mem[0], 8192, 9);
    uint8_t first50[50];
    memcpy(first50, w.mem[0], sizeof first50); /* a read below overwrites them */
    struct {
        uint64_t dst, len;
    } bad[] = {
        { mr_other.va, 100 },                 /* another domain's region */
        { mr_ro.va + 10, 100 },               /* no remote write */
        { mr_edge.va + 4096 - 50, 100 },      /* past the region's end: the
                                                 packet inside it is written */
        { w.mr[1].va - 4096, 100 },           /* between regions */
    };
    rifl_rdma_wc wc;
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, bad[i].dst, bad[i].len, 0,
                                        NULL, i, w.now),
                   RIFL_OK);
        REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
        CHECK_EQ_I(wc.status, RIFL_ERR_REMOTE_PROTECTION);
    }
    /* a notification aimed at memory of another domain */
    rifl_rdma_notification n = { rifl_rdma_gva_word(2, mr_other.va), 1, 2 };
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va + 4096, 64, 0, &n, 5,
                                    w.now),
               RIFL_OK);
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_ERR_REMOTE_PROTECTION);
    /* a read of memory without remote read */
    CHECK_EQ_I(rifl_rdma_post_read(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va, 64, 0, 6, w.now),
               RIFL_OK);
    /* (the target's main region has every right: allowed) */
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK_EQ_I(rifl_rdma_post_read(w.e[0], PD, w.mr[0].va, 2, mr_other.va, 64, 0, 7, w.now),
               RIFL_OK);
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_ERR_REMOTE_PROTECTION);
    /* canaries: nothing written where it was refused (protection is per
     * packet: a packet inside a region is written, the one outside is not) */
    for (size_t i = 0; i < sizeof other; i++)
        if (other[i] != 0x3C || ro[i] != 0x3C) {
            CHECK_MSG(0, "byte %zu of a protected region changed", i);
            break;
        }
    for (size_t i = 4096; i < sizeof edge; i++)
        if (edge[i] != 0x3C) {
            CHECK_MSG(0, "byte %zu past the region's end changed", i);
            break;
        }
    CHECK(memcmp(edge + 4096 - 50, first50, 50) == 0);
    CHECK(rifl_rdma_get_stats(w.e[1])->protection_violations >= 6);
    /* local checks refuse before anything is sent */
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va + MEM - 10, 2, w.mr[1].va, 100, 0,
                                    NULL, 8, w.now),
               RIFL_ERR_PROTECTION);
    CHECK_EQ_I(rifl_rdma_post_read(w.e[0], 9, w.mr[0].va, 2, w.mr[1].va, 100, 0, 8, w.now),
               RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 77, w.mr[1].va, 100, 0, NULL, 8,
                                    w.now),
               RIFL_ERR_UNREACHABLE);
    wire_free(&w);
}

/* A damaged payload is NACKed and nothing of it is written; the block is
 * sent again. */
static bool damage_first(struct wire *w, struct pkt_msg *m)
{
    if (w->tampered || m->from.node != 1)
        return true;
    /* the first WRITE packet's first payload byte */
    m->b[4 + 16] ^= 0xFF;
    w->tampered++;
    return true;
}

static void t_payload_crc(void)
{
    struct wire w;
    wire_init(&w, NULL, 5);
    w.tamper = damage_first;
    memset(w.mem[1], 0x11, 4096);
    fill_random(w.mem[0], 200, 3);
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va, 200, 0, NULL, 1, w.now),
               RIFL_OK);
    /* deliver the damaged bundle alone: the target memory is untouched */
    for (int i = 0; i < 7; i++)
        wire_step(&w);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[1])->nacks_tx[RIFL_RDMA_NACK_CRC], 1);
    CHECK(w.mem[1][0] == 0x11 && w.mem[1][199] == 0x11);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK(memcmp(w.mem[1], w.mem[0], 200) == 0);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->retransmitted_blocks, 1);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->nacks_rx[RIFL_RDMA_NACK_CRC], 1);
    wire_free(&w);
}

/* Header and footer check codes: dropped without a word, counted. */
static bool flip_header(struct wire *w, struct pkt_msg *m)
{
    if (w->tampered < 2 && m->from.node == 1) {
        m->b[4 + (w->tampered ? 16 + 256 + 3 : 5)] ^= 0x10;
        w->tampered++;
    }
    return true;
}

static void t_check_codes(void)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    c.block_timeout_ns = 20000;
    struct wire w;
    wire_init(&w, &c, 6);
    w.tamper = flip_header;
    fill_random(w.mem[0], 4096, 4);
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va, 4096, 0, NULL, 1, w.now),
               RIFL_OK);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK(memcmp(w.mem[1], w.mem[0], 4096) == 0);
    const rifl_rdma_stats *t = rifl_rdma_get_stats(w.e[1]);
    CHECK_EQ_U(t->hdr_edc_errors, 1);
    CHECK_EQ_U(t->ftr_crc_errors, 1);
    CHECK(rifl_rdma_get_stats(w.e[0])->timeouts >= 1);
    uint64_t nacks = 0;
    for (unsigned i = 1; i < RIFL_RDMA_STATUS_COUNT; i++)
        nacks += t->nacks_tx[i];
    CHECK_EQ_U(nacks, 0);
    wire_free(&w);
}

/* Destination pages not resident: NACKed, raised, served, sent again. */
static void t_page_faults(void)
{
    struct wire w;
    wire_init(&w, NULL, 7);
    w.serve_faults = true;
    fill_random(w.mem[0], 65536, 8);
    CHECK_EQ_I(rifl_rdma_set_resident(w.e[1], w.mr[1].va + 8192, 3 * 4096, false), RIFL_OK);
    CHECK_EQ_I(rifl_rdma_set_resident(w.e[0], w.mr[0].va + 40000, 1, false), RIFL_OK);
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va, 65536, 0, NULL, 1,
                                    w.now),
               RIFL_OK);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 5000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK(memcmp(w.mem[1], w.mem[0], 65536) == 0);
    CHECK(rifl_rdma_get_stats(w.e[1])->nacks_tx[RIFL_RDMA_NACK_PAGE_FAULT] >= 1);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->src_page_faults, 1);
    CHECK(rifl_rdma_get_stats(w.e[0])->retransmitted_blocks >= 2);
    wire_free(&w);
}

/* A link that swallows everything: 16 retries, then RETRY_EXCEEDED; a read
 * that never gets its data times out. */
static bool drop_all(struct wire *w, struct pkt_msg *m)
{
    (void)w;
    (void)m;
    return false;
}

static void t_give_up(void)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    c.block_timeout_ns = 10000;
    c.block_timeout_max_ns = 20000;
    c.read_timeout_ns = 100000;
    struct wire w;
    wire_init(&w, &c, 8);
    w.tamper = drop_all;
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va, 100, 0, NULL, 1, w.now),
               RIFL_OK);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 10000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_ERR_RETRY_EXCEEDED);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->timeouts, 16);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->retransmitted_blocks, 15);
    CHECK_EQ_I(rifl_rdma_post_read(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va, 100, 0, 2, w.now),
               RIFL_OK);
    REQUIRE(wire_wait(&w, 0, &wc, 1, 10000000) == 1);
    CHECK(wc.status == RIFL_ERR_TIMEOUT || wc.status == RIFL_ERR_RETRY_EXCEEDED);
    CHECK_EQ_U(rifl_rdma_pending(w.e[0]), 0);
    wire_free(&w);
}

/* Seeded random transfers both ways through loss, duplication and
 * reordering: every one completes, every byte arrives. */
static void random_run(uint64_t seed, double loss, double dup, double reorder, bool gbn,
                       unsigned transfers, rifl_rdma_mapping mapping)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    c.mapping = mapping;
    c.block_timeout_ns = 50000;
    c.block_timeout_max_ns = 400000;
    c.go_back_n = gbn;
    struct wire w;
    wire_init(&w, &c, seed);
    w.loss = loss;
    w.dup = dup;
    w.reorder = reorder;
    rifl_rng r;
    rifl_rng_seed(&r, seed * 31 + 7);
    for (unsigned n = 0; n < NODES; n++)
        fill_random(w.mem[n], MEM / 2, seed + n);
    /* each transfer: node a writes [src, src+len) of its lower half to a
     * slice of node b's upper half no other transfer touches */
    unsigned done = 0, posted = 0;
    uint64_t slot = (MEM / 2) / 16;
    struct {
        unsigned a, b;
        uint64_t src, dst, len;
        bool read;
    } t[16];
    unsigned active = 0;
    bool busy[16] = { false };
    while (done < transfers && w.now < 2000000000ull) {
        while (posted < transfers && active < 8) {
            unsigned k = 0;
            while (busy[k])
                k++;
            unsigned a = (unsigned)rifl_rng_below(&r, NODES), b = (a + 1 + (unsigned)rifl_rng_below(&r, NODES - 1)) % NODES;
            uint64_t len = 1 + rifl_rng_below(&r, rifl_rng_below(&r, 2) ? 300 : slot - 300);
            uint64_t src = rifl_rng_below(&r, MEM / 2 - len);
            uint64_t dst = MEM / 2 + k * slot + rifl_rng_below(&r, slot - len);
            bool read = rifl_rng_below(&r, 3) == 0;
            t[k].a = a, t[k].b = b, t[k].src = src, t[k].dst = dst, t[k].len = len, t[k].read = read;
            int rc = read ? rifl_rdma_post_read(w.e[b], PD, w.mr[b].va + dst, a + 1,
                                                w.mr[a].va + src, len,
                                                (unsigned)rifl_rng_below(&r, 32), k, w.now)
                          : rifl_rdma_post_write(w.e[a], PD, w.mr[a].va + src, b + 1,
                                                 w.mr[b].va + dst, len,
                                                 (unsigned)rifl_rng_below(&r, 32), NULL, k, w.now);
            CHECK_EQ_I(rc, RIFL_OK);
            busy[k] = true;
            active++;
            posted++;
        }
        wire_step(&w);
        for (unsigned n = 0; n < NODES; n++) {
            rifl_rdma_wc wc;
            while (rifl_rdma_poll_cq(w.e[n], &wc, 1)) {
                unsigned k = (unsigned)wc.wr_id;
                CHECK_EQ_I(wc.status, RIFL_OK);
                CHECK(k < 16 && busy[k]);
                if (k >= 16 || !busy[k])
                    continue;
                CHECK_MSG(memcmp(w.mem[t[k].b] + t[k].dst, w.mem[t[k].a] + t[k].src, t[k].len) == 0,
                          "transfer %u (%s of %llu bytes) arrived damaged", done,
                          t[k].read ? "read" : "write", (unsigned long long)t[k].len);
                busy[k] = false;
                active--;
                done++;
            }
        }
    }
    CHECK_EQ_U(done, transfers);
    uint64_t retx = 0;
    for (unsigned n = 0; n < NODES; n++)
        retx += rifl_rdma_get_stats(w.e[n])->retransmitted_blocks;
    if (loss > 0)
        CHECK(retx > 0);
    else
        CHECK_EQ_U(retx, 0);
    wire_free(&w);
}

static void t_random_clean(void)
{
    random_run(test_seed + 100, 0, 0, 0, false, 60, RIFL_RDMA_MAP_BUNDLE);
}
static void t_random_lossy(void)
{
    unsigned n = test_long_run ? 2000 : 60;
    random_run(test_seed + 200, 0.02, 0.02, 0.1, false, n, RIFL_RDMA_MAP_BUNDLE);
}
static void t_random_go_back_n(void)
{
    random_run(test_seed + 300, 0.02, 0.01, 0.05, true, 40, RIFL_RDMA_MAP_BUNDLE);
}
static void t_random_cell(void)
{
    random_run(test_seed + 400, 0, 0, 0, false, 40, RIFL_RDMA_MAP_CELL);
    /* a packet per message: a 12 KB block is 55 messages, so 2% loss would
     * fail two attempts in three and now and then all 16; 0.5% fails one in four */
    random_run(test_seed + 500, 0.005, 0.02, 0.1, false, test_long_run ? 1000 : 40,
               RIFL_RDMA_MAP_CELL);
}
static void t_random_compact(void)
{
    random_run(test_seed + 600, 0, 0, 0, false, 40, RIFL_RDMA_MAP_COMPACT);
    random_run(test_seed + 700, 0.02, 0.02, 0.1, false, test_long_run ? 1000 : 40,
               RIFL_RDMA_MAP_COMPACT);
}

/* The cell mapping: one packet per message, no prefix, at most one cell,
 * packets cut at 224 bytes and 4 KB pages with indexes from 0, blocks of
 * at most 12 KB.  The compact mapping: packets of 22 + length bytes in
 * bundles of 11. */
static rifl_rdma_mapping seen_mapping;
static unsigned seen_msgs, seen_bad;
static uint64_t cut_lo;
static bool check_mapping(struct wire *w, struct pkt_msg *m)
{
    (void)w;
    seen_msgs++;
    rifl_rdma_packet p;
    if (seen_mapping == RIFL_RDMA_MAP_CELL) {
        if (m->len > 256 || rifl_rdma_packet_parse(m->b, m->len, &p) != RIFL_RDMA_PKT_OK ||
            p.bytes != m->len || (p.hdr.type == RIFL_RDMA_WRITE && p.hdr.length > 224))
            seen_bad++;
        /* the first block's packets (the round robin interleaves blocks) */
        if (m->from.node == 1 && cut_n < 256 && p.hdr.type == RIFL_RDMA_WRITE &&
            p.hdr.dst_va >= cut_lo && p.hdr.dst_va < cut_lo + 12288)
            cut_list[cut_n++] = (rifl_rdma_seg){ p.hdr.dst_va, p.hdr.length, p.ftr.pkt_index,
                                                 p.ftr.first, p.ftr.last };
        return true;
    }
    rifl_rdma_bundle_reader rd;
    rifl_rdma_bundle_reader_init(&rd, m->b + 4, m->len - 4, m->b[1]);
    rd.compact = true;
    rifl_rdma_check ck;
    unsigned n = 0;
    rifl_rdma_walk wk;
    while ((wk = rifl_rdma_bundle_next(&rd, &p, &ck)) == RIFL_RDMA_WALK_PACKET) {
        n++;
        if (ck != RIFL_RDMA_PKT_OK || p.bytes != rifl_rdma_compact_bytes(p.hdr.type, p.hdr.length))
            seen_bad++;
    }
    if (wk != RIFL_RDMA_WALK_END || n > 11)
        seen_bad++;
    return true;
}

static void t_mappings(void)
{
    for (int k = 0; k < 2; k++) {
        rifl_rdma_config c = rifl_rdma_default_config;
        c.mapping = seen_mapping = k ? RIFL_RDMA_MAP_COMPACT : RIFL_RDMA_MAP_CELL;
        struct wire w;
        wire_init(&w, &c, 9 + k);
        w.tamper = check_mapping;
        seen_msgs = seen_bad = cut_n = 0;
        fill_random(w.mem[0], 40000, 21);
        uint64_t dst = cut_lo = w.mr[1].va + 16384 + 100;
        CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, dst, 40000, 0, NULL, 1, w.now),
                   RIFL_OK);
        rifl_rdma_wc wc;
        REQUIRE(wire_wait(&w, 0, &wc, 1, 2000000) == 1);
        CHECK_EQ_I(wc.status, RIFL_OK);
        CHECK(memcmp(w.mem[1] + 16384 + 100, w.mem[0], 40000) == 0);
        CHECK(seen_msgs > 0);
        CHECK_EQ_U(seen_bad, 0);
        const rifl_rdma_stats *s = rifl_rdma_get_stats(w.e[0]);
        if (k == 0) {
            /* 16284 bytes in the first window: 12288 + 3996; then 16384: 12288 +
             * 4096; then 7332 */
            CHECK_EQ_U(s->blocks_acked, 5);
            CHECK_EQ_U(s->bundles_tx, s->cells_tx);
            /* the first block's packets, against the layout's */
            rifl_rdma_seg want[64];
            unsigned n = rifl_rdma_block_packets(dst, 12288, true, want);
            CHECK(n > 0 && cut_n == n);
            for (unsigned i = 0; i < n && i < cut_n; i++) {
                CHECK_EQ_U(cut_list[i].dst_va, want[i].dst_va);
                CHECK_EQ_U(cut_list[i].len, want[i].len);
                CHECK_EQ_U(cut_list[i].pkt_index, want[i].pkt_index);
            }
        } else {
            CHECK_EQ_U(s->blocks_acked, 3);
            CHECK(s->cells_tx < s->tx_bytes / 256 + s->bundles_tx + 1);
        }
        wire_free(&w);
    }
    /* the compact format against the spec's: the same fields, fewer bytes */
    rifl_rdma_hdr h = { RIFL_RDMA_WRITE, 7, 2, 0x10004100, 16, 1 };
    rifl_rdma_ftr f = { .src_node = 1, .tid = 5, .gen = 3, .first = true, .last = true,
                        .pkt_index = 1 };
    uint8_t pl[16], a[64], b[64];
    for (int i = 0; i < 16; i++)
        pl[i] = (uint8_t)i;
    size_t la, lb;
    REQUIRE(rifl_rdma_packet_build(&h, &f, pl, a, sizeof a, &la) == RIFL_OK);
    REQUIRE(rifl_rdma_compact_build(&h, &f, pl, b, sizeof b, &lb) == RIFL_OK);
    CHECK_EQ_U(la, 48);
    CHECK_EQ_U(lb, 38);
    CHECK(memcmp(a, b, 14) == 0 && memcmp(a + 16, b + 14, 16) == 0 && memcmp(a + 32, b + 30, 8) == 0);
    rifl_rdma_packet p;
    CHECK_EQ_I(rifl_rdma_compact_parse(b, lb, &p), RIFL_RDMA_PKT_OK);
    CHECK_EQ_U(p.hdr.dst_va, 0x10004100);
    CHECK_EQ_U(p.ftr.tid, 5);
    CHECK(p.payload == b + 14);
    CHECK_EQ_I(rifl_rdma_compact_parse(b, lb - 1, &p), RIFL_RDMA_PKT_SHORT);
    CHECK_EQ_U(rifl_rdma_compact_bytes(RIFL_RDMA_RESP, 0), 22);
    /* capacity: compact bundles of 11 in 12 cells, 91.7% of the cells' bytes */
    CHECK(fabs(rifl_rdma_capacity_map_gbps(100, 256, 11, RIFL_RDMA_MAP_COMPACT) -
               100.0 * 2816 / (12 * 9 * 32)) < 1e-9);
    CHECK(fabs(rifl_rdma_capacity_map_gbps(100, 256, 1, RIFL_RDMA_MAP_CELL) -
               rifl_rdma_capacity_gbps(100, 256, 7, true)) < 1e-9);
}

/* The simulator: the route's capacity at 16 KB writes, and a run whose
 * faults all recover. */
static void t_sim(void)
{
    rifl_rdmasim_config c = rifl_rdmasim_default_config;
    c.size = 16384;
    c.bytes = 4000000;
    c.link_gbps = 100;
    rifl_rdmasim_result r;
    char msg[200];
    REQUIRE(rifl_rdmasim_run(&c, &r, msg, sizeof msg) == RIFL_OK);
    CHECK(r.verified);
    CHECK(r.ratio >= 0.97 && r.ratio <= 1.0);
    CHECK_EQ_U(r.failed, 0);
    /* the compact mapping carries more over the same link, and near its own
     * capacity; the cell mapping delivers too */
    double bundle_gbps = r.throughput_gbps;
    c.mapping = RIFL_RDMA_MAP_COMPACT;
    REQUIRE(rifl_rdmasim_run(&c, &r, msg, sizeof msg) == RIFL_OK);
    CHECK(r.verified);
    CHECK_EQ_U(r.bundle_packets, 11);
    CHECK(r.ratio >= 0.97);
    CHECK(r.throughput_gbps > 1.03 * bundle_gbps);
    c.mapping = RIFL_RDMA_MAP_CELL;
    REQUIRE(rifl_rdmasim_run(&c, &r, msg, sizeof msg) == RIFL_OK);
    CHECK(r.verified);
    CHECK_EQ_U(r.cells, r.bundles);
    c.mapping = RIFL_RDMA_MAP_BUNDLE;
    c.page_fault = 0.02;
    c.payload_crc = 0.001;
    c.drop = 0.0002;
    c.op = RIFL_RDMASIM_READ;
    REQUIRE(rifl_rdmasim_run(&c, &r, msg, sizeof msg) == RIFL_OK);
    CHECK(r.verified);
    CHECK(r.sender.retransmitted_blocks > 0);
    c.size = 300;
    c.op = RIFL_RDMASIM_SEND;
    CHECK_EQ_I(rifl_rdmasim_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "256") != NULL);
}

TEST_MAIN({ "config_refused", t_config_refused }, { "write_notify", t_write_notify },
          { "packets_follow_layout", t_packets_follow_layout },
          { "read_and_send", t_read_and_send }, { "protection", t_protection },
          { "payload_crc", t_payload_crc }, { "check_codes", t_check_codes },
          { "page_faults", t_page_faults }, { "give_up", t_give_up },
          { "random_clean", t_random_clean }, { "random_lossy", t_random_lossy },
          { "random_go_back_n", t_random_go_back_n }, { "random_cell", t_random_cell },
          { "random_compact", t_random_compact }, { "mappings", t_mappings }, { "sim", t_sim })

/* The port (rifl/port.h): packets per virtual lane over a lane with either
 * flow control, no loss when the reader stalls, credits that come back,
 * packets the port must drop (a VL not in use, too long), the Layer 2
 * endpoint through a relay that does what a switch does to the header, with
 * sources interleaved, and every configuration refusal. */
#include "testlib.h"

#include "rifl/port.h"
#include "rifl/rng.h"

#define F 256

/* two ports joined by wire bytes, one frame slot per call, no delay */
struct link {
    rifl_port *p[2];
    uint64_t now;
};

static void step(struct link *l)
{
    uint8_t w[2][F / 8];
    for (int i = 0; i < 2; i++)
        REQUIRE(rifl_port_tx(l->p[i], l->now, w[i]) == RIFL_OK);
    for (int i = 0; i < 2; i++)
        rifl_port_rx(l->p[i], l->now, w[1 - i], NULL);
    l->now++;
}

static rifl_port_config base_config(rifl_port_fc fc, unsigned vls)
{
    rifl_port_config c = rifl_port_default_config;
    c.lane.rx_lock_frames = 0; /* frames arrive aligned */
    c.fc = fc;
    c.vls = vls;
    c.vl_byte = vls > 1 || fc == RIFL_PORT_FC_CREDIT;
    c.max_packet = 2000;
    c.credit.rx_buffer_bytes = 8192;
    c.l2_sources = 0;
    return c;
}

static bool make_link(struct link *l, const rifl_port_config *a, const rifl_port_config *b)
{
    memset(l, 0, sizeof *l);
    char msg[256] = "";
    int rc = rifl_port_create(a, NULL, &l->p[0], msg, sizeof msg);
    CHECK_MSG(rc == RIFL_OK, "%s", msg);
    if (rc == RIFL_OK)
        rc = rifl_port_create(b, NULL, &l->p[1], msg, sizeof msg);
    CHECK_MSG(rc == RIFL_OK, "%s", msg);
    return rc == RIFL_OK;
}

static void free_link(struct link *l)
{
    rifl_port_free(l->p[0]);
    rifl_port_free(l->p[1]);
}

/* packet `seq` of VL v: its length and bytes */
static size_t fill(uint8_t *b, unsigned v, uint64_t seq, size_t max)
{
    size_t len = 1 + (seq * 131 + v * 17) % max;
    for (size_t i = 0; i < len; i++)
        b[i] = (uint8_t)(seq * 7 + v * 31 + i);
    return len;
}

/* Port 0 sends `n` packets per VL while port 1's reader reads only in some
 * slots; everything arrives in order per VL, nothing is dropped. */
static void run_vls(rifl_port_fc fc, unsigned vls, unsigned n, unsigned read_every)
{
    rifl_port_config c = base_config(fc, vls);
    c.rx_queue_bytes = 4096;
    struct link l;
    if (!make_link(&l, &c, &c))
        return;
    uint64_t sent[RIFL_FC_MAX_DATA_VLS] = { 0 }, got[RIFL_FC_MAX_DATA_VLS] = { 0 };
    uint8_t pkt[2000], in[2000], want[2000];
    unsigned bad = 0;
    for (unsigned t = 0; t < 2000000; t++) {
        bool done = true;
        for (unsigned v = 0; v < vls; v++) {
            while (sent[v] < n) {
                size_t len = fill(pkt, v, sent[v], c.max_packet);
                if (rifl_port_send(l.p[0], v, pkt, len) != RIFL_OK)
                    break;
                sent[v]++;
            }
            if (t % read_every == 0) {
                /* a fast reader takes all there is, a slow one a packet */
                size_t len;
                while (rifl_port_read(l.p[1], v, l.now, in, sizeof in, &len) == RIFL_OK) {
                    size_t wl = fill(want, v, got[v], c.max_packet);
                    if (len != wl || memcmp(in, want, len))
                        bad++;
                    got[v]++;
                    if (read_every > 1)
                        break;
                }
            }
            done = done && got[v] == n;
        }
        if (done)
            break;
        step(&l);
    }
    const rifl_port_stats *a = rifl_port_get_stats(l.p[0]), *b = rifl_port_get_stats(l.p[1]);
    CHECK_EQ_U(bad, 0);
    for (unsigned v = 0; v < vls; v++) {
        CHECK_EQ_U(got[v], n);
        CHECK_EQ_U(a->tx_packets[v], n);
        CHECK_EQ_U(b->rx_packets[v], n);
        CHECK_EQ_U(a->tx_bytes[v], b->rx_bytes[v]);
    }
    CHECK_EQ_U(b->rx_bad_vl + b->rx_too_long + b->rx_credit_drops + b->rx_queue_full, 0);
    const rifl_lane_stats *lb = rifl_lane_get_stats(rifl_port_lane(l.p[1]));
    CHECK_EQ_U(lb->rx_overflow, 0);
    if (fc == RIFL_PORT_FC_CREDIT) {
        CHECK(a->fcp_tx > 0 && b->fcp_tx > 0);
        CHECK_EQ_U(a->fcp_rx, b->fcp_tx);
        CHECK(rifl_port_credit(l.p[0]) != NULL);
        /* the receiver's space came back: its next FCPs give the sender
         * the whole buffer again */
        for (int k = 0; k < 20000; k++)
            step(&l);
        for (unsigned v = 0; v < vls; v++) {
            const rifl_fc_rx *rx = rifl_credit_rx_regs(rifl_port_credit(l.p[1]), v);
            const rifl_fc_tx *tx = rifl_credit_tx_regs(rifl_port_credit(l.p[0]), v);
            CHECK_EQ_U(rx->free_chunks, rx->capacity);
            CHECK_EQ_U(rx->abr, tx->fctbs);
        }
        CHECK(rifl_port_next_due(l.p[0], l.now) > l.now);
        CHECK(rifl_port_next_due(l.p[0], l.now) != UINT64_MAX);
    } else {
        CHECK(rifl_port_credit(l.p[0]) == NULL);
        CHECK_EQ_U(rifl_port_next_due(l.p[0], l.now), UINT64_MAX);
        if (read_every > 1)
            CHECK_MSG(rifl_lane_get_stats(rifl_port_lane(l.p[1]))->fc_on_sent > 0,
                      "%u VLs, %llu slots", vls, (unsigned long long)l.now);
    }
    free_link(&l);
}

static void t_lane_fc(void)
{
    run_vls(RIFL_PORT_FC_LANE, 1, 300, 1);
    run_vls(RIFL_PORT_FC_LANE, 3, 300, 1);
    run_vls(RIFL_PORT_FC_LANE, 3, 300, 300); /* a slow reader: the lane pauses the sender */
    run_vls(RIFL_PORT_FC_LANE, 1, 300, 97);
}

static void t_credit_fc(void)
{
    run_vls(RIFL_PORT_FC_CREDIT, 1, 300, 1);
    run_vls(RIFL_PORT_FC_CREDIT, 4, 300, 1);
    run_vls(RIFL_PORT_FC_CREDIT, 4, 300, 211); /* credits run out and come back */
}

/* A reader that stops: with credits the sender stops when the buffer's
 * credit is used, and nothing is dropped. */
static void t_credit_stall(void)
{
    rifl_port_config c = base_config(RIFL_PORT_FC_CREDIT, 2);
    struct link l;
    if (!make_link(&l, &c, &c))
        return;
    uint8_t pkt[2000];
    uint64_t sent = 0;
    for (int t = 0; t < 30000; t++) {
        size_t len = fill(pkt, 0, sent, 1000);
        if (rifl_port_send(l.p[0], 0, pkt, len) == RIFL_OK)
            sent++;
        step(&l);
    }
    const rifl_port_stats *b = rifl_port_get_stats(l.p[1]);
    CHECK(b->rx_bytes[0] == 0);
    CHECK(rifl_port_tx_queued(l.p[0], 0) > 0); /* waiting for credit */
    size_t held = 0, len;
    unsigned held_pkts = 0;
    while (rifl_port_peek(l.p[1], 0, &len) == RIFL_OK) {
        uint8_t in[2000];
        REQUIRE(rifl_port_read(l.p[1], 0, l.now, in, sizeof in, &len) == RIFL_OK);
        held += len;
        held_pkts++;
    }
    CHECK(held > 0 && held <= 8192);
    CHECK_EQ_U(b->rx_credit_drops + b->rx_queue_full, 0);
    printf("  a stalled reader holds %zu bytes in %u packets of an 8192-byte buffer\n", held,
           held_pkts);
    free_link(&l);
}

/* A peer that starts its credit engine again (an FCP of Op 1 arrives)
 * while this end's reader has left its buffer full: nothing is lost, and
 * every packet the peer sent is read in the end. */
static void t_credit_peer_reinit(void)
{
    rifl_port_config c = base_config(RIFL_PORT_FC_CREDIT, 1);
    c.max_packet = 1024;
    struct link l;
    if (!make_link(&l, &c, &c))
        return;
    uint8_t pkt[1024], in[2000];
    uint64_t sent = 0, got = 0;
    for (int t = 0; t < 20000; t++) {
        size_t len = fill(pkt, 0, sent, 1024);
        if (rifl_port_send(l.p[0], 0, pkt, len) == RIFL_OK)
            sent++;
        step(&l);
    }
    const rifl_fc_rx *rx = rifl_credit_rx_regs(rifl_port_credit(l.p[1]), 0);
    REQUIRE(rx != NULL);
    CHECK_EQ_U(rx->free_chunks, 0); /* the reader let the buffer fill */
    /* what a peer starting again sends: an FCP of Op 1, its registers reset
     * (FCTBS 0: nothing sent since) */
    rifl_fcp f = { .op = RIFL_FCP_OP_INIT, .fctbs = 0, .vl = 0, .fccl = 128 };
    uint8_t b[RIFL_FC_FCP_BYTES];
    rifl_fcp_encode(&f, b);
    REQUIRE(rifl_lane_send_ext(rifl_port_lane(l.p[0]), RIFL_FCP_EXT_CODE, b, sizeof b) ==
            RIFL_OK);
    for (int t = 0; t < 20000; t++) {
        size_t len = fill(pkt, 0, sent, 1024);
        if (rifl_port_send(l.p[0], 0, pkt, len) == RIFL_OK)
            sent++;
        step(&l);
    }
    CHECK_EQ_U(rifl_credit_get_stats(rifl_port_credit(l.p[1]))->peer_reinits, 1);
    /* the reader wakes: everything comes, in order */
    uint64_t bad = 0;
    for (int t = 0; t < 100000 && got < sent; t++) {
        size_t len;
        while (rifl_port_read(l.p[1], 0, l.now, in, sizeof in, &len) == RIFL_OK) {
            size_t want = fill(pkt, 0, got, 1024);
            bad += len != want || memcmp(in, pkt, len) != 0;
            got++;
        }
        step(&l);
    }
    const rifl_port_stats *st = rifl_port_get_stats(l.p[1]);
    CHECK_EQ_U(st->rx_queue_full, 0);
    CHECK_EQ_U(st->rx_credit_drops, 0);
    CHECK_EQ_U(got, sent);
    CHECK_EQ_U(bad, 0);
    free_link(&l);
}

/* An FCP the lane refused waits in the port for the next slot.  When the
 * peer starts again (its FCP of Op 1 arrives) before that slot, the waiting
 * FCP is dropped: it carries the FCTBS and FCCL from before the restart,
 * and the restarted peer would take that old FCTBS as its ABR and advertise
 * credit it does not have. */
static void t_credit_stale_fcp(void)
{
    rifl_port_config a = base_config(RIFL_PORT_FC_CREDIT, 1), b = a;
    a.max_packet = b.max_packet = 1024;
    a.lane.ext_queue_frames = 1; /* one frame queued refuses the next */
    struct link l;
    if (!make_link(&l, &a, &b))
        return;
    uint8_t pkt[1024], in[2000];
    uint64_t sent = 0, got = 0;
    size_t len;
    /* traffic from A moves A's FCTBS away from 0, B reading all of it */
    for (int t = 0; t < 20000; t++) {
        if (sent < 200 && rifl_port_send(l.p[0], 0, pkt, fill(pkt, 0, sent, 1024)) == RIFL_OK)
            sent++;
        step(&l);
        while (rifl_port_read(l.p[1], 0, l.now, in, sizeof in, &len) == RIFL_OK)
            got++;
    }
    REQUIRE(got == 200);
    rifl_credit *ca = (rifl_credit *)rifl_port_credit(l.p[0]);
    rifl_credit *cb = (rifl_credit *)rifl_port_credit(l.p[1]);
    REQUIRE(rifl_credit_tx_regs(ca, 0)->fctbs != 0);
    REQUIRE(rifl_credit_state(ca) == RIFL_FC_LINK_ACTIVE);
    const rifl_credit_stats *sb = rifl_credit_get_stats(cb);
    uint64_t resyncs = sb->abr_resyncs;
    /* to the slot in which A's next periodic FCP falls due */
    uint64_t due = rifl_port_next_due(l.p[0], l.now);
    REQUIRE(due != UINT64_MAX);
    while (l.now < due)
        step(&l);
    /* A's extension queue full: that FCP is refused and waits; B starts
     * again in the same slot and its FCP of Op 1 reaches A at once */
    uint8_t other = 0;
    REQUIRE(rifl_lane_send_ext(rifl_port_lane(l.p[0]), RIFL_FCP_EXT_CODE + 1, &other, 1) ==
            RIFL_OK);
    uint64_t refused = rifl_port_get_stats(l.p[0])->fcp_refused;
    rifl_credit_set_state(cb, RIFL_FC_LINK_INIT);
    step(&l);
    CHECK_EQ_U(rifl_port_get_stats(l.p[0])->fcp_refused, refused + 1);
    CHECK_EQ_U(rifl_credit_get_stats(ca)->peer_reinits, 1);
    CHECK(!rifl_port_fcp_waiting(l.p[0])); /* dropped, not offered again */
    for (int t = 0; t < 5000; t++)
        step(&l);
    /* B never took A's old FCTBS for its ABR */
    CHECK_EQ_U(sb->abr_resyncs, resyncs);
    CHECK_EQ_U(rifl_credit_state(ca), RIFL_FC_LINK_ACTIVE);
    CHECK_EQ_U(rifl_credit_state(cb), RIFL_FC_LINK_ACTIVE);
    CHECK_EQ_U(rifl_credit_rx_regs(cb, 0)->abr, rifl_credit_tx_regs(ca, 0)->fctbs);
    /* and the link carries data again, none of it dropped */
    for (int t = 0; t < 20000 && got < 300; t++) {
        if (sent < 300 && rifl_port_send(l.p[0], 0, pkt, fill(pkt, 0, sent, 1024)) == RIFL_OK)
            sent++;
        step(&l);
        while (rifl_port_read(l.p[1], 0, l.now, in, sizeof in, &len) == RIFL_OK)
            got++;
    }
    CHECK_EQ_U(got, 300);
    CHECK_EQ_U(sb->rx_overflow, 0);
    CHECK_EQ_U(rifl_port_get_stats(l.p[1])->rx_credit_drops, 0);
    free_link(&l);
}

static void refused(const rifl_port_config *c, const char *needle);

/* Two credit ports on 128-bit frames (16 symbol times a slot), sending
 * each other packets as large as `max_packet` on every VL as fast as credit
 * allows: the worst time between two FCPs of one VL, measured where they
 * arrive, against what the configuration check computes. */
static uint64_t fcp_gap_run(unsigned vls, uint32_t max_packet, uint32_t period,
                            unsigned per_slot, uint64_t *bound)
{
    enum { FB = 16 };
    rifl_port_config c = base_config(RIFL_PORT_FC_CREDIT, vls);
    c.lane.frame_bits = FB * 8;
    c.lane.fid_bits = 10;
    c.lane.tx_queue_frames = 2 * (max_packet + 1) / (FB - 2) + 8;
    c.max_packet = max_packet;
    c.tx_queue_bytes = 2 * (max_packet + 16);
    c.credit.rx_buffer_bytes = 131008;
    c.credit.fcp_period = period;
    c.fcp_per_slot = per_slot;
    *bound = rifl_port_fcp_worst_gap(&c);
    char msg[300] = "";
    int rc = rifl_port_config_check(&c, msg, sizeof msg);
    CHECK_MSG(rc == RIFL_OK, "%s", msg);
    rifl_port *p[2] = { NULL, NULL };
    for (int i = 0; i < 2 && rc == RIFL_OK; i++) {
        rc = rifl_port_create(&c, NULL, &p[i], msg, sizeof msg);
        CHECK_MSG(rc == RIFL_OK, "%s", msg);
    }
    if (rc != RIFL_OK) {
        rifl_port_free(p[0]);
        return UINT64_MAX;
    }
    static uint8_t pkt[65536], in[65536];
    memset(pkt, 0x5A, sizeof pkt);
    uint64_t worst = 0, last[2][RIFL_FC_MAX_DATA_VLS], seen[2][RIFL_FC_MAX_DATA_VLS];
    memset(seen, 0, sizeof seen);
    uint64_t now = 0;
    for (; now < 200000; now++) {
        bool run = now < 150000; /* then the senders stop and all drains */
        for (int i = 0; i < 2; i++)
            for (unsigned v = 0; v < vls && run; v++)
                while (rifl_port_send(p[i], v, pkt, max_packet) == RIFL_OK)
                    ;
        uint8_t w[2][FB];
        int tx = RIFL_OK;
        for (int i = 0; i < 2; i++)
            tx |= rifl_port_tx(p[i], now, w[i]);
        if (tx != RIFL_OK) {
            CHECK_EQ_I(tx, RIFL_OK);
            break;
        }
        for (int i = 0; i < 2; i++) {
            rifl_port_rx(p[i], now, w[1 - i], NULL);
            size_t len;
            for (unsigned v = 0; v < vls; v++)
                while (rifl_port_read(p[i], v, now, in, sizeof in, &len) == RIFL_OK)
                    ;
            /* FCPs of the other port arriving here, per VL */
            const rifl_credit_stats *st = rifl_credit_get_stats(rifl_port_credit(p[i]));
            for (unsigned v = 0; v < vls; v++) {
                if (st->vl[v].fcp_rx == seen[i][v])
                    continue;
                if (seen[i][v] && (now - last[i][v]) * FB > worst)
                    worst = (now - last[i][v]) * FB;
                seen[i][v] = st->vl[v].fcp_rx;
                last[i][v] = now;
            }
        }
    }
    for (int i = 0; i < 2; i++) {
        const rifl_credit *ce = rifl_port_credit(p[i]), *peer = rifl_port_credit(p[1 - i]);
        const rifl_credit_stats *st = rifl_credit_get_stats(ce);
        CHECK_EQ_U(rifl_credit_state(ce), RIFL_FC_LINK_ACTIVE);
        CHECK_EQ_U(st->rx_overflow, 0);
        /* an FCP sent past a packet still in the lane carried the FCTBS
         * from before it: the receiver never had to correct its ABR */
        CHECK_EQ_U(st->abr_resyncs, 0);
        for (unsigned v = 0; v < vls; v++) {
            CHECK_MSG(st->vl[v].rx_packets > 10, "VL%u got %llu packets", v,
                      (unsigned long long)st->vl[v].rx_packets);
            const rifl_fc_rx *rx = rifl_credit_rx_regs(ce, v);
            CHECK_EQ_U(rx->abr, rifl_credit_tx_regs(peer, v)->fctbs);
            CHECK_EQ_U(rx->free_chunks, rx->capacity);
        }
        CHECK_EQ_U(rifl_port_get_stats(p[i])->rx_credit_drops, 0);
    }
    rifl_port_free(p[0]);
    rifl_port_free(p[1]);
    return worst;
}

/* The FCPs of one VL come within 65536 symbol times of each other (the
 * InfiniBand rule) and within what the check computes, however large the
 * packets: an FCP does not wait for a packet in progress.  (It did: 60,000-
 * byte packets on 128-bit frames took 4286 slots, and with the lane's
 * start-up the FCPs of a period of 1024 came 84,240 symbol times apart.) */
static void t_credit_fcp_gap(void)
{
    static const struct {
        unsigned vls, per_slot;
        uint32_t max_packet, period;
    } runs[] = {
        { 1, 1, 60000, 1024 },
        { 3, 1, 60000, 1024 },
        { 3, 0, 60000, 1000 },
        { 2, 1, 20000, 40000 },
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        uint64_t bound = 0;
        uint64_t worst = fcp_gap_run(runs[k].vls, runs[k].max_packet, runs[k].period,
                                     runs[k].per_slot, &bound);
        printf("  %u VLs, %u-byte packets, period %u: worst gap %llu symbol times, "
               "check's bound %llu\n", runs[k].vls, runs[k].max_packet, runs[k].period,
               (unsigned long long)worst, (unsigned long long)bound);
        CHECK(worst >= runs[k].period);
        CHECK_MSG(worst <= bound, "measured %llu above the bound %llu", (unsigned long long)worst,
                  (unsigned long long)bound);
        CHECK(bound < 65536);
    }
    /* the check refuses a lane where the bound reaches 65536 (the engine,
     * which knows no frames, accepts it) */
    rifl_port_config c = base_config(RIFL_PORT_FC_CREDIT, 15);
    c.lane.frame_bits = 2048;
    c.max_packet = 256;
    c.credit.fcp_period = 64000;
    rifl_credit_config cc = c.credit;
    cc.data_vls = 15;
    cc.max_packet_bytes = 256;
    char msg[400] = "";
    CHECK_EQ_I(rifl_credit_config_check(&cc, msg, sizeof msg), RIFL_OK);
    CHECK_EQ_U(rifl_port_fcp_worst_gap(&c), (250 + 14) * 256);
    refused(&c, "could come 67584 symbol times after the last of its VL");
    refused(&c, "lower the FCP period to at most 61696");
    c.credit.fcp_period = 61696;
    CHECK_EQ_U(rifl_port_fcp_worst_gap(&c), 65280);
    c.credit.fcp_period = 61697;
    CHECK_EQ_U(rifl_port_fcp_worst_gap(&c), 65536);
    refused(&c, "lower the FCP period to at most 61696");
    /* FCPs that would take every slot */
    c = base_config(RIFL_PORT_FC_CREDIT, 4);
    c.lane.frame_bits = 128;
    c.lane.fid_bits = 10;
    c.max_packet = 100;
    c.credit.fcp_period = 64;
    refused(&c, "use a period of at least 65");
    c.credit.fcp_period = 65;
    CHECK_EQ_I(rifl_port_config_check(&c, msg, sizeof msg), RIFL_OK);
}

/* packets the port cannot take: a VL byte naming a VL not in use, no VL
 * byte at all, a packet longer than any it takes */
static void t_bad_packets(void)
{
    rifl_port_config c = base_config(RIFL_PORT_FC_LANE, 2);
    rifl_lane_config lc = c.lane;
    rifl_lane *raw;
    REQUIRE(rifl_lane_create(&lc, &raw, NULL, 0) == RIFL_OK);
    rifl_port *p;
    REQUIRE(rifl_port_create(&c, NULL, &p, NULL, 0) == RIFL_OK);
    uint8_t big[2100];
    memset(big, 1, sizeof big);
    big[0] = 9;
    REQUIRE(rifl_lane_send(raw, big, 10) == RIFL_OK);  /* VL 9 of 2 */
    REQUIRE(rifl_lane_send(raw, big, 1) == RIFL_OK);   /* the VL byte alone */
    big[0] = 1;
    REQUIRE(rifl_lane_send(raw, big, 2001 + 50) == RIFL_OK); /* 50 bytes too long */
    REQUIRE(rifl_lane_send(raw, big, 5) == RIFL_OK);   /* a good one */
    uint8_t w[2][F / 8];
    for (uint64_t t = 0; t < 2000; t++) {
        rifl_lane_tx(raw, t, w[0]);
        rifl_port_tx(p, t, w[1]);
        rifl_lane_rx(raw, t, w[1], NULL);
        rifl_port_rx(p, t, w[0], NULL);
        uint8_t x[16];
        size_t n;
        while (rifl_lane_read(raw, x, sizeof x, &n, NULL) == RIFL_OK)
            ;
    }
    const rifl_port_stats *s = rifl_port_get_stats(p);
    CHECK_EQ_U(s->rx_bad_vl, 2);
    CHECK_EQ_U(s->rx_too_long, 1);
    size_t len;
    uint8_t in[100];
    CHECK_EQ_I(rifl_port_read(p, 1, 0, in, sizeof in, &len), RIFL_OK);
    CHECK_EQ_U(len, 4);
    CHECK_EQ_I(rifl_port_read(p, 1, 0, in, sizeof in, &len), RIFL_ERR_AGAIN);
    CHECK_EQ_I(rifl_port_read(p, 0, 0, in, sizeof in, &len), RIFL_ERR_AGAIN);
    /* the API's own refusals */
    CHECK_EQ_I(rifl_port_send(p, 2, in, 1), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_port_send(p, 0, in, 0), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_port_send(p, 0, big, 2001), RIFL_ERR_TOO_BIG);
    CHECK_EQ_I(rifl_port_read_msg(p, 0, 0, in, sizeof in, &len, NULL, NULL, NULL),
               RIFL_ERR_STATE);
    rifl_port_free(p);
    rifl_lane_free(raw);
}

/* ---- Layer 2 endpoint through a relay ------------------------------------------- */

/* Senders s0, s1 and receiver r, each linked to one port of a 3-port
 * "switch": relay ports 0, 1, 2.  The relay does what a switch does to a
 * cell: the forwarding rule and the header update. */
struct net {
    struct link l[3];   /* l[i].p[0] = endpoint i, l[i].p[1] = relay port i */
};

static void net_step(struct net *n)
{
    for (unsigned i = 0; i < 3; i++)
        step(&n->l[i]);
    uint8_t cell[RIFL_L2_CELL_BYTES];
    for (unsigned in = 0; in < 3; in++) {
        rifl_port *rp = n->l[in].p[1];
        size_t len;
        /* one cell per input and slot, so the sources interleave */
        if (rifl_port_peek(rp, 0, &len) != RIFL_OK)
            continue;
        rifl_l2_hdr h;
        REQUIRE(rifl_port_read(rp, 0, 0, cell, sizeof cell, &len) == RIFL_OK);
        memcpy(h.b, cell, RIFL_L2_HDR_BYTES);
        unsigned out;
        if (rifl_l2_forward(3, in, &h, &out) != RIFL_L2_FWD_UNICAST)
            continue;
        rifl_l2_hdr_advance(&h, in, out);
        memcpy(cell, h.b, RIFL_L2_HDR_BYTES);
        REQUIRE(rifl_port_send(n->l[out].p[1], 0, cell, len) == RIFL_OK);
    }
}

static bool make_net(struct net *n, unsigned sources)
{
    rifl_port_config c = rifl_port_default_config;
    c.lane.rx_lock_frames = 0;
    c.tx_queue_bytes = 1 << 20;
    c.rx_queue_bytes = 1 << 20;
    c.l2_sources = sources;
    c.l2_max_msg = 20000;
    for (unsigned i = 0; i < 3; i++)
        if (!make_link(&n->l[i], &c, &c))
            return false;
    return true;
}

static void free_net(struct net *n)
{
    for (unsigned i = 0; i < 3; i++)
        free_link(&n->l[i]);
}

static void t_l2_endpoint(void)
{
    struct net n;
    if (!make_net(&n, 4)) {
        free_net(&n);
        return;
    }
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed ^ 0x2e2);
    /* to the receiver on relay port 2: from input 0 that is relative port
     * 1, from input 1 relative port 1 too */
    uint8_t route0[1] = { (uint8_t)rifl_l2_rel_port(3, 0, 2) };
    uint8_t route1[1] = { (uint8_t)rifl_l2_rel_port(3, 1, 2) };
    enum { MSGS = 40 };
    static uint8_t msg[2][MSGS][20000];
    size_t mlen[2][MSGS];
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < MSGS; k++) {
            mlen[s][k] = 1 + rifl_rng_below(&rng, k % 5 == 0 ? 20000 : 700);
            for (size_t b = 0; b < mlen[s][k]; b++)
                msg[s][k][b] = (uint8_t)rifl_rng_next(&rng);
        }
    unsigned sent[2] = { 0, 0 }, got[2] = { 0, 0 }, wrong = 0;
    static uint8_t in[20000];
    for (int t = 0; t < 300000 && (got[0] < MSGS || got[1] < MSGS); t++) {
        for (int s = 0; s < 2; s++)
            if (sent[s] < MSGS &&
                rifl_port_send_msg(n.l[s].p[0], 0, s ? route1 : route0, 1, msg[s][sent[s]],
                                   mlen[s][sent[s]]) == RIFL_OK)
                sent[s]++;
        net_step(&n);
        size_t len;
        unsigned proto, hops;
        uint8_t back[RIFL_L2_MAX_HOPS];
        while (rifl_port_read_msg(n.l[2].p[0], 0, 0, in, sizeof in, &len, &proto, back, &hops) ==
               RIFL_OK) {
            /* the route back names the relay port the message came in on */
            int s = back[0] == rifl_l2_rel_port(3, 2, 0) ? 0 : 1;
            if (hops != 1 || proto != RIFL_L2_PROTO_DATA || got[s] >= MSGS ||
                len != mlen[s][got[s]] || memcmp(in, msg[s][got[s]], len))
                wrong++;
            got[s]++;
        }
    }
    CHECK_EQ_U(got[0], MSGS);
    CHECK_EQ_U(got[1], MSGS);
    CHECK_EQ_U(wrong, 0);
    const rifl_port_stats *r = rifl_port_get_stats(n.l[2].p[0]);
    const rifl_port_stats *a = rifl_port_get_stats(n.l[0].p[0]);
    CHECK_EQ_U(r->msg_rx, 2 * MSGS);
    CHECK_EQ_U(a->msg_tx, MSGS);
    CHECK_EQ_U(r->cells_rx, a->cells_tx + rifl_port_get_stats(n.l[1].p[0])->cells_tx);
    CHECK_EQ_U(r->cell_misrouted + r->cell_no_context + r->msg_too_big + r->msg_reserved, 0);
    free_net(&n);
}

/* One context for two interleaved sources: the second one's cells are
 * counted and dropped; cells with hops left, a reserved protocol, a message
 * larger than the endpoint takes. */
static void t_l2_drops(void)
{
    struct net n;
    if (!make_net(&n, 1)) {
        free_net(&n);
        return;
    }
    uint8_t route[1] = { 1 };
    static uint8_t m[30000];
    memset(m, 7, sizeof m);
    REQUIRE(rifl_port_send_msg(n.l[0].p[0], 0, route, 1, m, 2000) == RIFL_OK);
    REQUIRE(rifl_port_send_msg(n.l[1].p[0], 0, route, 1, m, 2000) == RIFL_OK);
    for (int t = 0; t < 3000; t++)
        net_step(&n);
    static uint8_t in[30000];
    size_t len;
    int got = 0;
    while (rifl_port_read_msg(n.l[2].p[0], 0, 0, in, sizeof in, &len, NULL, NULL, NULL) ==
           RIFL_OK)
        got++;
    const rifl_port_stats *r = rifl_port_get_stats(n.l[2].p[0]);
    CHECK_EQ_I(got, 1);
    CHECK(r->cell_no_context > 0);
    /* two hops asked for, one switch on the way: the cell arrives with a hop
     * to go */
    uint8_t route2[2] = { 1, 0 };
    REQUIRE(rifl_port_send_msg(n.l[0].p[0], 0, route2, 2, m, 10) == RIFL_OK);
    /* larger than the endpoint's 20000 bytes */
    REQUIRE(rifl_port_send_msg(n.l[0].p[0], 0, route, 1, m, 25000) == RIFL_OK);
    REQUIRE(rifl_port_send_msg(n.l[0].p[0], 0, route, 1, m, 100) == RIFL_OK);
    for (int t = 0; t < 3000; t++)
        net_step(&n);
    got = 0;
    while (rifl_port_read_msg(n.l[2].p[0], 0, 0, in, sizeof in, &len, NULL, NULL, NULL) ==
           RIFL_OK)
        got += len == 100;
    CHECK_EQ_I(got, 1);
    CHECK_EQ_U(r->cell_misrouted, 1);
    CHECK_EQ_U(r->msg_too_big, 1);
    /* a cell whose prefix names a reserved protocol */
    uint8_t cell[RIFL_L2_CELL_BYTES] = { 0 };
    rifl_l2_hdr h;
    REQUIRE(rifl_l2_hdr_make(&h, route, 1) == RIFL_OK);
    memcpy(cell, h.b, RIFL_L2_HDR_BYTES);
    cell[RIFL_L2_HDR_BYTES] = 0x7f;
    cell[RIFL_L2_HDR_BYTES + 3] = 1;
    REQUIRE(rifl_port_send(n.l[0].p[0], 0, cell, sizeof cell) == RIFL_OK);
    uint64_t reserved = r->msg_reserved; /* so far: cells of the source that had no context */
    for (int t = 0; t < 300; t++)
        net_step(&n);
    CHECK_EQ_I(rifl_port_read_msg(n.l[2].p[0], 0, 0, in, sizeof in, &len, NULL, NULL, NULL),
               RIFL_ERR_AGAIN);
    CHECK_EQ_U(r->msg_reserved, reserved + 1);
    /* refusals of the sending side */
    CHECK_EQ_I(rifl_port_send_msg(n.l[0].p[0], 0, route, 0, m, 10), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_port_send_msg(n.l[0].p[0], 0, route, 1, m, 0), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_port_send_msg(n.l[0].p[0], 1, route, 1, m, 10), RIFL_ERR_INVALID_ARG);
    free_net(&n);
}

/* A message of more cells than the credit engine's queue ever holds is
 * too big, not a wait. */
static void t_credit_msg_too_big(void)
{
    rifl_port_config c = base_config(RIFL_PORT_FC_CREDIT, 1);
    c.max_packet = 1024;
    c.credit.rx_buffer_bytes = 32768;
    c.tx_queue_bytes = 1u << 20;
    char msg[256] = "";
    rifl_port *p = NULL;
    int rc = rifl_port_create(&c, NULL, &p, msg, sizeof msg);
    CHECK_MSG(rc == RIFL_OK, "%s", msg);
    if (rc != RIFL_OK)
        return;
    static uint8_t m[100 * RIFL_L2_CELL_BYTES];
    uint8_t route[1] = { 1 };
    size_t cells = rifl_l2_msg_cells(sizeof m);
    REQUIRE(cells > c.credit.tx_queue_packets);
    CHECK_EQ_I(rifl_port_send_msg(p, 0, route, 1, m, sizeof m), RIFL_ERR_TOO_BIG);
    CHECK_EQ_U(rifl_port_get_stats(p)->tx_refused, 0);
    CHECK_EQ_I(rifl_port_send_msg(p, 0, route, 1, m, 10 * RIFL_L2_CELL_BYTES), RIFL_OK);
    rifl_port_free(p);
}

/* ---- configuration ------------------------------------------------------------------- */

static void refused(const rifl_port_config *c, const char *needle)
{
    char msg[512] = "";
    rifl_port *p = NULL;
    CHECK_EQ_I(rifl_port_create(c, NULL, &p, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(p == NULL);
    CHECK_MSG(strstr(msg, needle) != NULL, "'%s' not in '%s'", needle, msg);
}

static void t_config(void)
{
    rifl_port_config c = base_config(RIFL_PORT_FC_LANE, 1);
    c.vls = 0;
    refused(&c, "0 virtual lanes: use 1 to 15");
    c = base_config(RIFL_PORT_FC_LANE, 2);
    c.vl_byte = false;
    refused(&c, "set vl_byte");
    c = base_config(RIFL_PORT_FC_CREDIT, 1);
    c.vl_byte = false;
    refused(&c, "set vl_byte");
    c = base_config(RIFL_PORT_FC_LANE, 1);
    c.max_packet = 70000;
    refused(&c, "use 1 to 65535");
    c = base_config(RIFL_PORT_FC_LANE, 1);
    c.tx_queue_bytes = 100;
    refused(&c, "cannot hold a packet");
    c = base_config(RIFL_PORT_FC_LANE, 1);
    c.lane.tx_queue_frames = 64;
    c.max_packet = 1500;
    refused(&c, "must hold two of the largest packets");
    c = base_config(RIFL_PORT_FC_LANE, 1);
    c.l2_sources = 4;
    c.max_packet = 100;
    refused(&c, "Layer 2 endpoint sends cells of 262 bytes");
    c = base_config(RIFL_PORT_FC_LANE, 1);
    c.l2_sources = 65536;
    c.l2_max_msg = 1 << 20;
    refused(&c, "at most 1 GiB");
    c = base_config(RIFL_PORT_FC_CREDIT, 2);
    c.credit.fcp_period = 0;
    refused(&c, "period");
    c = base_config(RIFL_PORT_FC_LANE, 1);
    c.lane.fid_bits = 20;
    refused(&c, "frame-ID width");
    c = base_config(RIFL_PORT_FC_LANE, 1);
    c.fc = (rifl_port_fc)5;
    refused(&c, "unknown flow control");
    /* an FCP does not fit an extension frame of a 64-bit frame */
    c = base_config(RIFL_PORT_FC_CREDIT, 1);
    c.lane.frame_bits = 64;
    c.lane.fid_bits = 10;
    c.max_packet = 100;
    refused(&c, "use frames of at least 128 bits");
    /* a lane made elsewhere must suit the port */
    c = base_config(RIFL_PORT_FC_CREDIT, 2);
    rifl_lane *lane;
    REQUIRE(rifl_lane_create(&rifl_lane_default_config, &lane, NULL, 0) == RIFL_OK);
    char msg[256] = "";
    rifl_port *p = NULL;
    CHECK_EQ_I(rifl_port_create(&c, lane, &p, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "RIFL_LANE_FC_NONE") != NULL);
    c.fc = RIFL_PORT_FC_LANE;
    CHECK_EQ_I(rifl_port_create(&c, lane, &p, msg, sizeof msg), RIFL_OK);
    CHECK(rifl_port_lane(p) == lane);
    rifl_port_free(p);
    rifl_lane_free(lane); /* the caller's lane outlives the port */
    /* the lane given is checked, not the one the configuration describes */
    c = base_config(RIFL_PORT_FC_LANE, 1);
    rifl_lane_config small = c.lane;
    small.tx_queue_frames = 16;
    REQUIRE(rifl_lane_create(&small, &lane, NULL, 0) == RIFL_OK);
    p = NULL;
    CHECK_EQ_I(rifl_port_create(&c, lane, &p, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(p == NULL);
    CHECK(strstr(msg, "must hold two of the largest packets") != NULL);
    rifl_lane_free(lane);
    CHECK_EQ_I(rifl_port_create(NULL, NULL, &p, msg, sizeof msg), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_port_create(&c, NULL, NULL, msg, sizeof msg), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_port_config_check(&rifl_port_default_config, msg, sizeof msg), RIFL_OK);
}

/* An RDMA bundle (prefix 0x02, packet count, bytes) read off the endpoint
 * whole, prefix first, as rifl_rdma_input takes it. */
static void t_l2_rdma_bundle(void)
{
    struct net n;
    if (!make_net(&n, 4)) {
        free_net(&n);
        return;
    }
    enum { BYTES = 300 };
    uint8_t bundle[RIFL_L2_MSG_PREFIX_BYTES + BYTES];
    bundle[0] = RIFL_L2_PROTO_RDMA;
    bundle[1] = 3; /* packets */
    bundle[2] = BYTES >> 8;
    bundle[3] = BYTES & 0xFF;
    for (unsigned i = 0; i < BYTES; i++)
        bundle[RIFL_L2_MSG_PREFIX_BYTES + i] = (uint8_t)(i * 7 + 1);
    uint8_t route[1] = { (uint8_t)rifl_l2_rel_port(3, 0, 2) };
    rifl_l2_hdr h;
    REQUIRE(rifl_l2_hdr_make(&h, route, 1) == RIFL_OK);
    /* the cells as a NIC cuts them: the prefix, then the bytes, the last
     * cell padded with zeros */
    uint8_t cell[RIFL_L2_CELL_BYTES];
    size_t per = RIFL_L2_CELL_BYTES - RIFL_L2_HDR_BYTES;
    for (size_t off = 0; off < sizeof bundle; off += per) {
        memset(cell, 0, sizeof cell);
        memcpy(cell, h.b, RIFL_L2_HDR_BYTES);
        size_t k = sizeof bundle - off < per ? sizeof bundle - off : per;
        memcpy(cell + RIFL_L2_HDR_BYTES, bundle + off, k);
        REQUIRE(rifl_port_send(n.l[0].p[0], 0, cell, sizeof cell) == RIFL_OK);
    }
    uint8_t in[1000];
    size_t len = 0;
    unsigned proto = 0;
    int rc = RIFL_ERR_AGAIN;
    for (int t = 0; t < 20000 && rc == RIFL_ERR_AGAIN; t++) {
        net_step(&n);
        rc = rifl_port_read_msg(n.l[2].p[0], 0, 0, in, sizeof in, &len, &proto, NULL, NULL);
    }
    CHECK_EQ_I(rc, RIFL_OK);
    CHECK_EQ_U(proto, RIFL_L2_PROTO_RDMA);
    CHECK_EQ_U(len, sizeof bundle);
    CHECK(len == sizeof bundle && memcmp(in, bundle, len) == 0);
    free_net(&n);
}

TEST_MAIN({ "lane_fc", t_lane_fc }, { "credit_fc", t_credit_fc },
          { "credit_stall", t_credit_stall }, { "credit_peer_reinit", t_credit_peer_reinit },
          { "credit_stale_fcp", t_credit_stale_fcp },
          { "credit_fcp_gap", t_credit_fcp_gap },
          { "bad_packets", t_bad_packets }, { "credit_msg_too_big", t_credit_msg_too_big },
          { "l2_endpoint", t_l2_endpoint }, { "l2_drops", t_l2_drops },
          { "l2_rdma_bundle", t_l2_rdma_bundle }, { "config", t_config })

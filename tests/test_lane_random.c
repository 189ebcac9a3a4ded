/* Randomised two-lane runs over an in-memory channel: long delays,
 * independent seeded bit errors per direction, packets of 1 to 9000 bytes,
 * random receiver back-pressure.  Every packet must arrive once, in order,
 * intact, in both directions.  `--long` runs 10 million frame slots per
 * case (both directions at once). */
#include "testlib.h"

#include "rifl/lane.h"
#include "rifl/sim/pair.h"
#include "rifl/sim/traffic.h"

struct side {
    uint64_t next_seq;        /* next packet to offer */
    uint8_t *pkt;
    size_t pkt_len;
    bool pending;
    rifl_validator val;       /* checks what the other side sends us */
    double ready;             /* probability that our user reads this slot */
};

struct run_cfg {
    unsigned fid_bits;        /* 0 = the smallest safe width */
    unsigned replay_tail;     /* 0 = automatic */
    bool unsafe;              /* allow undersized settings (to show why not) */
    unsigned frame_bits;
    unsigned delay_frames;
    double ber[2];
    uint64_t slots;
    uint64_t seed;
    size_t min_len, max_len;
    bool backpressure;
};

/* Frame-level oracle for one direction: every new data frame other than a
 * filler that the sender puts on the wire (user data, flow-control and
 * extension frames) must be delivered exactly once, in order, unchanged.
 * Fillers carry nothing and are left out on both sides.  Frames are
 * remembered as 64-bit hashes in a ring. */
#define ORACLE_RING (1u << 16)
struct oracle {
    uint64_t *hash;
    uint64_t sent, delivered, mismatches, overrun;
    uint64_t sniff_tx, sniff_rx;   /* descrambler states of the sniffers */
};

/* With RIFL_TEST_TRACE set, the first wrong delivery prints the last slots. */
#define TRACE_N 4096
struct trace_rec {
    uint64_t t;
    uint8_t st[2], res[2], ferr[2], pretr[2], replay[2];
    uint16_t txid, rxid;
    uint8_t txsyn, rxkind, rxres;
    uint16_t rxthr;
    uint16_t btxid, arxid;
    uint8_t btxsyn, arxres;
};

static uint64_t frame_hash(unsigned meta, const uint8_t *payload, unsigned n)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ meta;
    for (unsigned i = 0; i < n; i++)
        h = (h ^ payload[i]) * 0x100000001b3ULL;
    return h;
}

struct run_result {
    uint64_t oracle_sent, oracle_delivered, oracle_mismatch;
    uint64_t sent[2], ok[2];
    uint64_t replays, verify_fail, overflow, fc_on;
    bool clean;
    bool drained;
};

static void run(const struct run_cfg *rc, struct run_result *out)
{
    memset(out, 0, sizeof *out);
    rifl_pair_config pc = { .lane = rifl_lane_default_config };
    pc.lane.frame_bits = rc->frame_bits;
    /* a link whose one-way delay is exactly delay_frames slots */
    pc.lane.link.transceiver_ns = 0;
    pc.lane.link.cable_m = rc->delay_frames * (double)rc->frame_bits /
                           pc.lane.link.lane_rate_gbps / pc.lane.link.ns_per_m;
    pc.lane.fid_bits = rc->fid_bits ? rc->fid_bits
                                    : rifl_lane_min_fid_bits(&pc.lane.link, rc->frame_bits,
                                                             pc.lane.pipeline_frames);
    pc.lane.replay_tail_frames = rc->replay_tail;
    pc.lane.allow_unsafe_fid = rc->unsafe;
    pc.lane.tx_queue_frames = 2048;
    pc.ber[0] = rc->ber[0];
    pc.ber[1] = rc->ber[1];
    pc.seed[0] = rc->seed * 2 + 1;
    pc.seed[1] = rc->seed * 2 + 2;
    pc.delay_frames = rc->delay_frames;
    rifl_pair *p;
    char msg[512];
    int r = rifl_pair_create(&pc, &p, msg, sizeof msg);
    CHECK_MSG(r == RIFL_OK, "%s", msg);
    if (r != RIFL_OK)
        return;

    rifl_rng rng;
    rifl_rng_seed(&rng, rc->seed);
    struct side sd[2];
    uint64_t stream_seed[2] = { rc->seed ^ 0xA, rc->seed ^ 0xB }; /* A->B, B->A */
    for (int i = 0; i < 2; i++) {
        memset(&sd[i], 0, sizeof sd[i]);
        sd[i].pkt = malloc(rc->max_len);
        /* side i validates the stream sent by the other side */
        rifl_validator_init(&sd[i].val, stream_seed[1 - i], rc->min_len, rc->max_len);
        sd[i].ready = 1.0;
    }
    uint8_t *rbuf = malloc(rc->max_len);
    uint64_t limit = rc->slots;
    uint64_t drain_limit = limit + 2000000;
    bool sending = true;
    struct oracle orc = { .hash = calloc(ORACLE_RING, sizeof(uint64_t)) };
    bool tracing = getenv("RIFL_TEST_TRACE") != NULL;
    struct trace_rec *trace = tracing ? calloc(TRACE_N, sizeof *trace) : NULL;
    unsigned F = rc->frame_bits, pb = rifl_payload_bytes(F);
    for (uint64_t t = 0;; t++) {
        if (t == limit) {
            /* errors stop: whatever is still in flight must now get through */
            sending = false;
            rifl_phy_channel_set_ber(p->phy[0], 0);
            rifl_phy_channel_set_ber(p->phy[1], 0);
        }
        if (!sending) {
            bool done = true;
            for (int i = 0; i < 2; i++)
                if (sd[1 - i].val.next_seq < sd[i].next_seq || sd[i].pending)
                    done = false;
            if (done && !out->drained) {
                out->drained = true;
                /* let frames still in flight (flow-control notices) land */
                drain_limit = t + 4 * (2u << pc.lane.fid_bits) + 4 * rc->delay_frames;
            }
            if (out->drained && orc.delivered == orc.sent)
                break;
            if (t >= drain_limit)
                break;
        }
        for (int i = 0; i < 2; i++) {
            struct side *s = &sd[i];
            /* offer packets */
            if (sending && !s->pending) {
                s->pkt_len = rifl_packet_len(stream_seed[i], s->next_seq, rc->min_len, rc->max_len);
                rifl_packet_fill(stream_seed[i], s->next_seq, s->pkt, s->pkt_len);
                s->pending = true;
            }
            if (s->pending && rifl_lane_send(p->lane[i], s->pkt, s->pkt_len) == RIFL_OK) {
                s->pending = false;
                s->next_seq++;
                out->sent[i]++;
            }
            /* back-pressure: the user is ready with a probability that
             * changes every few thousand slots (sometimes stalling
             * altogether), and reads a random amount */
            if (rc->backpressure && (t & 4095) == 0) {
                double u = rifl_rng_double(&rng);
                s->ready = u < 0.25 ? 0.0 : u < 0.5 ? 0.002 + 0.02 * rifl_rng_double(&rng)
                                               : rifl_rng_double(&rng);
            }
            if (!sending)
                s->ready = 1.0;
            if (rifl_rng_double(&rng) < s->ready) {
                size_t want = rc->backpressure ? 1 + rifl_rng_below(&rng, 3000) : rc->max_len;
                size_t n;
                int eop;
                while (want && rifl_lane_read(p->lane[i], rbuf, want < rc->max_len ? want : rc->max_len,
                                              &n, &eop) == RIFL_OK) {
                    rifl_validator_feed(&s->val, rbuf, n, eop);
                    want = want > n ? want - n : 0;
                    if (!rc->backpressure)
                        want = rc->max_len;
                }
            }
        }
        /* one slot, with the oracle watching A -> B */
        uint64_t replayed = rifl_lane_get_stats(p->lane[0])->tx_replayed;
        uint8_t wire[2][RIFL_FRAME_MAX_BYTES];
        rifl_lane_tx(p->lane[0], wire[0]);
        rifl_lane_tx(p->lane[1], wire[1]);
        rifl_frame_info fi;
        uint8_t pay[RIFL_PAYLOAD_MAX_BYTES];
        rifl_frame_decode(wire[0], F, &orc.sniff_tx, pay, &fi);
        if (fi.syn == RIFL_SYN_DATA && fi.kind != RIFL_KIND_FILLER &&
            rifl_lane_get_stats(p->lane[0])->tx_replayed == replayed) {
            if (orc.sent - orc.delivered >= ORACLE_RING)
                orc.overrun++;
            orc.hash[orc.sent++ % ORACLE_RING] = frame_hash(fi.meta, pay, pb);
        }
        const uint8_t *to_b = rifl_phy_step(p->phy[0], t, wire[0]);
        const uint8_t *to_a = rifl_phy_step(p->phy[1], t, wire[1]);
        rifl_frame_info ai;
        int arx = rifl_lane_rx(p->lane[0], to_a, &ai);
        if (trace) {
            struct trace_rec *tr = &trace[t % TRACE_N];
            uint64_t tmp = 0;
            rifl_frame_info bt;
            rifl_frame_decode(wire[1], F, &tmp, NULL, &bt);
            tr->btxid = bt.id;
            tr->btxsyn = (uint8_t)bt.syn;
            tr->arxid = to_a ? ai.id : 0xFFFF;
            tr->arxres = (uint8_t)arx;
        }
        rifl_frame_info bi;
        uint8_t bpay[RIFL_PAYLOAD_MAX_BYTES];
        if (to_b)
            rifl_frame_decode(to_b, F, &orc.sniff_rx, bpay, &bi);
        int rxres = rifl_lane_rx(p->lane[1], to_b, NULL);
        if (trace) {
            struct trace_rec *tr = &trace[t % TRACE_N];
            tr->t = t;
            for (int k = 0; k < 2; k++) {
                rifl_lane_flags f = rifl_lane_get_flags(p->lane[k]);
                tr->st[k] = (uint8_t)rifl_lane_state(p->lane[k]);
                tr->ferr[k] = f.frame_error;
                tr->pretr[k] = f.peer_retransmit;
                tr->replay[k] = f.replay_active;
            }
            tr->txid = fi.id;
            tr->txsyn = (uint8_t)fi.syn;
            tr->rxid = to_b ? bi.id : 0xFFFF;
            tr->rxkind = to_b ? (uint8_t)bi.kind : 99;
            tr->rxres = (uint8_t)rxres;
        }
        if (rxres == RIFL_RX_DELIVERED && bi.kind != RIFL_KIND_FILLER) {
            uint64_t idx = orc.delivered++;
            if (idx >= orc.sent || orc.hash[idx % ORACLE_RING] != frame_hash(bi.meta, bpay, pb)) {
                if (trace && orc.mismatches == 0) {
                    printf("first wrong delivery at slot %llu (delivery %llu); trace:\n",
                           (unsigned long long)t, (unsigned long long)idx);
                    for (uint64_t k = t >= TRACE_N - 1 ? t - TRACE_N + 1 : 0; k <= t; k++) {
                        struct trace_rec *tr = &trace[k % TRACE_N];
                        printf("%llu A:%s fe%d pr%d rp%d tx(syn%u id%u) | B:%s fe%d pr%d rp%d "
                               "rx(id%u %s %s)\n", (unsigned long long)tr->t,
                               rifl_tx_state_name(tr->st[0]), tr->ferr[0], tr->pretr[0],
                               tr->replay[0], tr->txsyn, tr->txid,
                               rifl_tx_state_name(tr->st[1]), tr->ferr[1], tr->pretr[1],
                               tr->replay[1], tr->rxid,
                               tr->rxkind < RIFL_KIND_COUNT ? rifl_frame_kind_name(tr->rxkind) : "-",
                               rifl_rx_result_name(tr->rxres));
                    }
                }
                orc.mismatches++;
            }
        }
        p->slot++;
    }
    if (trace && !out->drained) {
        printf("NOT DRAINED trace (last slots):\n");
        for (int k = 0; k < 2; k++)
            printf("lane %c: %s, next ID %u, expecting %u, frame error %d\n", 'A' + k,
                   rifl_tx_state_name(rifl_lane_state(p->lane[k])), rifl_lane_next_id(p->lane[k]),
                   rifl_lane_expected_id(p->lane[k]), rifl_lane_get_flags(p->lane[k]).frame_error);
        for (uint64_t k = p->slot > 600 ? p->slot - 600 : 0; k < p->slot; k++) {
            struct trace_rec *tr = &trace[k % TRACE_N];
            printf("%llu A:%s fe%d pr%d rp%d tx(syn%u id%u) rx(id%u %s) | B:%s fe%d pr%d rp%d "
                   "tx(syn%u id%u) rx(id%u %s %s)\n", (unsigned long long)tr->t,
                   rifl_tx_state_name(tr->st[0]), tr->ferr[0], tr->pretr[0],
                   tr->replay[0], tr->txsyn, tr->txid, tr->arxid, rifl_rx_result_name(tr->arxres),
                   rifl_tx_state_name(tr->st[1]), tr->ferr[1], tr->pretr[1],
                   tr->replay[1], tr->btxsyn, tr->btxid, tr->rxid,
                   tr->rxkind < RIFL_KIND_COUNT ? rifl_frame_kind_name(tr->rxkind) : "-",
                   rifl_rx_result_name(tr->rxres));
        }
    }
    out->oracle_sent = orc.sent;
    out->oracle_delivered = orc.delivered;
    out->oracle_mismatch = orc.mismatches + orc.overrun;
    free(orc.hash);
    free(trace);
    for (int i = 0; i < 2; i++) {
        const rifl_lane_stats *st = rifl_lane_get_stats(p->lane[i]);
        out->ok[1 - i] = sd[i].val.st.packets_ok;
        out->replays += st->tx_replay_cycles;
        out->verify_fail += st->rx_verify_fail;
        out->overflow += st->rx_overflow;
        out->fc_on += st->fc_on_sent;
    }
    out->clean = rifl_validator_clean(&sd[0].val) && rifl_validator_clean(&sd[1].val);
    printf("  F=%u delay=%u K=%u ber=%.0e/%.0e slots=%llu: packets sent %llu/%llu ok %llu/%llu, "
           "replay cycles %llu, verify failures %llu, overflow nacks %llu, fc on %llu, "
           "A->B frames %llu/%llu delivered, %llu wrong%s\n",
           rc->frame_bits, rc->delay_frames, pc.lane.fid_bits, rc->ber[0], rc->ber[1],
           (unsigned long long)p->slot, (unsigned long long)out->sent[0],
           (unsigned long long)out->sent[1], (unsigned long long)out->ok[0],
           (unsigned long long)out->ok[1], (unsigned long long)out->replays,
           (unsigned long long)out->verify_fail, (unsigned long long)out->overflow,
           (unsigned long long)out->fc_on, (unsigned long long)out->oracle_delivered,
           (unsigned long long)out->oracle_sent, (unsigned long long)out->oracle_mismatch,
           out->drained ? "" : "  NOT DRAINED");
    for (int i = 0; i < 2; i++) {
        if (!rifl_validator_clean(&sd[i].val))
            printf("  side %d validator: lost %llu dup %llu reordered %llu corrupted %llu\n", i,
                   (unsigned long long)sd[i].val.st.lost,
                   (unsigned long long)sd[i].val.st.duplicated,
                   (unsigned long long)sd[i].val.st.reordered,
                   (unsigned long long)sd[i].val.st.corrupted);
        free(sd[i].pkt);
        rifl_validator_free(&sd[i].val);
    }
    free(rbuf);
    rifl_pair_free(p);
}

static uint64_t check_lossless(const struct run_cfg *rc)
{
    struct run_result r;
    run(rc, &r);
    CHECK(r.clean);
    CHECK(r.drained);
    CHECK_EQ_U(r.ok[0], r.sent[0]);
    CHECK_EQ_U(r.ok[1], r.sent[1]);
    CHECK(r.sent[0] > 0 && r.sent[1] > 0);
    CHECK_EQ_U(r.oracle_mismatch, 0);
    CHECK_EQ_U(r.oracle_delivered, r.oracle_sent);
    return r.fc_on;
}

static uint64_t slots(uint64_t short_run)
{
    return test_long_run ? 10000000ULL : short_run;
}

/* BER sweep 1e-9 .. 1e-4, several hundred frames of delay, back-pressure */
static void t_ber_sweep_backpressure(void)
{
    static const double bers[] = { 1e-9, 1e-7, 1e-6, 1e-5, 1e-4 };
    uint64_t fc = 0;
    for (size_t i = 0; i < sizeof bers / sizeof bers[0]; i++) {
        struct run_cfg rc = {
            .frame_bits = 256, .delay_frames = 300, .ber = { bers[i], bers[i] * 0.5 },
            .slots = slots(400000), .seed = test_seed * 100 + i, .min_len = 1,
            .max_len = 9000, .backpressure = true,
        };
        fc += check_lossless(&rc);
    }
    CHECK(fc > 0); /* back-pressure did drive flow control */
}

/* every frame width, with errors and back-pressure */
static void t_frame_widths(void)
{
    static const unsigned widths[] = { 64, 128, 256, 512, 1024, 2048 };
    uint64_t fc = 0;
    for (size_t i = 0; i < 6; i++) {
        struct run_cfg rc = {
            .frame_bits = widths[i], .delay_frames = 200, .ber = { 2e-6, 1e-6 },
            .slots = slots(200000), .seed = test_seed * 7 + i, .min_len = 1,
            .max_len = 9000, .backpressure = true,
        };
        fc += check_lossless(&rc);
    }
    CHECK(fc > 0);
}

/* no back-pressure, error-free: the link runs at full rate with no replay */
static void t_clean_full_rate(void)
{
    struct run_cfg rc = {
        .frame_bits = 256, .delay_frames = 57, .ber = { 0, 0 }, .slots = 200000,
        .seed = test_seed, .min_len = 1, .max_len = 9000, .backpressure = false,
    };
    struct run_result r;
    run(&rc, &r);
    CHECK(r.clean && r.drained);
    CHECK_EQ_U(r.replays, 0);
    CHECK_EQ_U(r.verify_fail, 0);
    CHECK_EQ_U(r.ok[0], r.sent[0]);
}

/* The sizing rule is enforced: an undersized frame-ID width is refused with
 * the smallest safe value named, and forcing it anyway loses data. */
static void t_undersized_fid_refused(void)
{
    rifl_lane_config c = rifl_lane_default_config;
    c.link.transceiver_ns = 0;
    c.link.cable_m = 300 * 256 / 112.0 / 5.0; /* 300 frames one way */
    c.fid_bits = 8;
    char msg[512] = "";
    rifl_lane *l = NULL;
    CHECK_EQ_I(rifl_lane_create(&c, &l, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(l == NULL);
    printf("  refused: %s\n", msg);
    CHECK(strstr(msg, "frame-ID width 8 is too small") != NULL);
    CHECK(strstr(msg, "smallest safe frame-ID width is 10") != NULL);
    c.fid_bits = 13;
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "at most 12") != NULL);
    c.fid_bits = 10;
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_OK);

    /* forced: replays no longer reach back far enough and the receiver
     * takes newer frames that carry the same ID: wrong data is delivered */
    struct run_cfg rc = {
        .fid_bits = 7, .unsafe = true, .frame_bits = 256, .delay_frames = 300,
        .ber = { 1e-6, 1e-6 }, .slots = 300000, .seed = test_seed, .min_len = 1,
        .max_len = 9000, .backpressure = false,
    };
    struct run_result r;
    run(&rc, &r);
    CHECK(r.oracle_mismatch > 0 || !r.clean);
}

/* The closing part of a replay cycle must cover a round trip: with the
 * paper's 2^K/2 on a link whose round trip is longer, the peer's last
 * retransmit requests always outlive the cycle, every cycle restarts and the
 * link never gets back to new data. */
static void t_short_replay_tail_breaks(void)
{
    rifl_lane_config c = rifl_lane_default_config;
    c.link.transceiver_ns = 0;
    c.link.cable_m = 300 * 256 / 112.0 / 5.0;
    c.fid_bits = 10;
    c.replay_tail_frames = 512;
    char msg[512] = "";
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    printf("  refused: %s\n", msg);
    CHECK(strstr(msg, "replay tail of 512") != NULL);
    /* where half the replay buffer covers the round trip, the paper's tail
     * of 2^K/2 slots is kept */
    c.link.cable_m = 2;
    c.fid_bits = 8;
    c.replay_tail_frames = 0;
    CHECK_EQ_U(rifl_lane_replay_tail(&c), 128);

    struct run_cfg rc = {
        .replay_tail = 512, .unsafe = true, .frame_bits = 256, .delay_frames = 300,
        .ber = { 2e-6, 2e-6 }, .slots = 600000, .seed = test_seed, .min_len = 1,
        .max_len = 9000, .backpressure = false,
    };
    struct run_result r;
    run(&rc, &r);
    CHECK(r.oracle_mismatch > 0 || !r.clean || !r.drained);
    CHECK(r.replays > 100);
}

TEST_MAIN({ "ber_sweep_backpressure", t_ber_sweep_backpressure },
          { "undersized_fid_refused", t_undersized_fid_refused },
          { "short_replay_tail_breaks", t_short_replay_tail_breaks },
          { "frame_widths", t_frame_widths },
          { "clean_full_rate", t_clean_full_rate })

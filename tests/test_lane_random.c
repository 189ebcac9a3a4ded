/* Randomised two-lane runs over an in-memory channel (the link simulator,
 * stepping every slot with the wire bytes): long delays, independent seeded
 * bit errors per direction, packets of 1 to 9000 bytes, random receiver
 * back-pressure through the simulator's read hook, and a frame-level oracle
 * watching every slot through its observer.  Every packet must arrive once,
 * in order, intact, in both directions.  `--long` runs 10 million frame slots per
 * case (both directions at once). */
#include "testlib.h"

#include "rifl/lane.h"
#include "rifl/sim/linksim.h"

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

/* What the test watches through the simulator's hooks. */
struct watch {
    const struct run_cfg *rc;
    rifl_rng rng;
    double ready[2];          /* per direction: probability its reader reads */
    unsigned F, pb;
    uint64_t replayed;        /* A's replayed frames so far */
    struct oracle orc;
    struct trace_rec *trace;
    uint64_t sniff_arx;       /* descrambler of what reaches A (trace) */
};

/* Back-pressure: the reader is ready with a probability that changes every
 * few thousand slots (sometimes stalling altogether), and reads a random
 * amount; once the errors stop it reads everything. */
static size_t read_budget(void *ctx, unsigned dir, uint64_t t)
{
    struct watch *w = ctx;
    const struct run_cfg *rc = w->rc;
    if (rc->backpressure && (t & 4095) == 0) {
        double u = rifl_rng_double(&w->rng);
        w->ready[dir] = u < 0.25 ? 0.0 : u < 0.5 ? 0.002 + 0.02 * rifl_rng_double(&w->rng)
                                               : rifl_rng_double(&w->rng);
    }
    if (t >= rc->slots)
        w->ready[dir] = 1.0;
    if (!(rifl_rng_double(&w->rng) < w->ready[dir]))
        return 0;
    return rc->backpressure ? 1 + rifl_rng_below(&w->rng, 3000) : SIZE_MAX;
}

static void print_trace(const struct watch *w, uint64_t from, uint64_t to, bool both)
{
    for (uint64_t k = from; k <= to; k++) {
        const struct trace_rec *tr = &w->trace[k % TRACE_N];
        printf("%llu A:%s fe%d pr%d rp%d tx(syn%u id%u)", (unsigned long long)tr->t,
               rifl_tx_state_name(tr->st[0]), tr->ferr[0], tr->pretr[0], tr->replay[0],
               tr->txsyn, tr->txid);
        if (both)
            printf(" rx(id%u %s)", tr->arxid, rifl_rx_result_name(tr->arxres));
        printf(" | B:%s fe%d pr%d rp%d", rifl_tx_state_name(tr->st[1]), tr->ferr[1],
               tr->pretr[1], tr->replay[1]);
        if (both)
            printf(" tx(syn%u id%u)", tr->btxsyn, tr->btxid);
        printf(" rx(id%u %s %s)\n", tr->rxid,
               tr->rxkind < RIFL_KIND_COUNT ? rifl_frame_kind_name(tr->rxkind) : "-",
               rifl_rx_result_name(tr->rxres));
    }
}

static void record(struct watch *w, const rifl_linksim_slot *sl, const rifl_frame_info *fi,
                   const rifl_frame_info *bi, bool to_b)
{
    const rifl_pair_slot *ws = sl->wire;
    struct trace_rec *tr = &w->trace[sl->t % TRACE_N];
    tr->t = sl->t;
    for (int k = 0; k < 2; k++) {
        rifl_lane_flags f = rifl_lane_get_flags(sl->pair->lane[k]);
        tr->st[k] = (uint8_t)rifl_lane_state(sl->pair->lane[k]);
        tr->ferr[k] = f.frame_error;
        tr->pretr[k] = f.peer_retransmit;
        tr->replay[k] = f.replay_active;
    }
    uint64_t tmp = 0;
    rifl_frame_info bt, ai;
    rifl_frame_decode(ws->sent[1].wire, w->F, &tmp, NULL, &bt);
    tr->btxid = bt.id;
    tr->btxsyn = (uint8_t)bt.syn;
    bool to_a = ws->arrived[0].form == RIFL_PHY_WIRE;
    if (to_a)
        rifl_frame_decode(ws->arrived[0].data, w->F, &w->sniff_arx, NULL, &ai);
    tr->arxid = to_a ? ai.id : 0xFFFF;
    tr->arxres = (uint8_t)ws->rx[0];
    tr->txid = fi->id;
    tr->txsyn = (uint8_t)fi->syn;
    tr->rxid = to_b ? bi->id : 0xFFFF;
    tr->rxkind = to_b ? (uint8_t)bi->kind : 99;
    tr->rxres = (uint8_t)ws->rx[1];
}

/* The frame-level oracle on A -> B, after every slot: A's new frames as it
 * sent them, B's deliveries as they arrived.  Satisfied when every frame
 * sent was delivered. */
static bool observe(void *ctx, const rifl_linksim_slot *sl)
{
    struct watch *w = ctx;
    struct oracle *orc = &w->orc;
    const rifl_pair_slot *ws = sl->wire;
    rifl_frame_info fi, bi;
    uint8_t pay[RIFL_PAYLOAD_MAX_BYTES], bpay[RIFL_PAYLOAD_MAX_BYTES];
    rifl_frame_decode(ws->sent[0].wire, w->F, &orc->sniff_tx, pay, &fi);
    uint64_t replayed = rifl_lane_get_stats(sl->pair->lane[0])->tx_replayed;
    if (fi.syn == RIFL_SYN_DATA && fi.kind != RIFL_KIND_FILLER && replayed == w->replayed) {
        if (orc->sent - orc->delivered >= ORACLE_RING)
            orc->overrun++;
        orc->hash[orc->sent++ % ORACLE_RING] = frame_hash(fi.meta, pay, w->pb);
    }
    w->replayed = replayed;
    bool to_b = ws->arrived[1].form == RIFL_PHY_WIRE;
    if (to_b)
        rifl_frame_decode(ws->arrived[1].data, w->F, &orc->sniff_rx, bpay, &bi);
    if (w->trace)
        record(w, sl, &fi, &bi, to_b);
    if (ws->rx[1] == RIFL_RX_DELIVERED && bi.kind != RIFL_KIND_FILLER) {
        uint64_t idx = orc->delivered++;
        if (idx >= orc->sent || orc->hash[idx % ORACLE_RING] != frame_hash(bi.meta, bpay, w->pb)) {
            if (w->trace && orc->mismatches == 0) {
                printf("first wrong delivery at slot %llu (delivery %llu); trace:\n",
                       (unsigned long long)sl->t, (unsigned long long)idx);
                print_trace(w, sl->t >= TRACE_N - 1 ? sl->t - TRACE_N + 1 : 0, sl->t, false);
            }
            orc->mismatches++;
        }
    }
    return orc->delivered == orc->sent;
}

static void run(const struct run_cfg *rc, struct run_result *out)
{
    memset(out, 0, sizeof *out);
    rifl_linksim_config c;
    rifl_linksim_defaults(&c);
    c.lane.frame_bits = rc->frame_bits;
    /* a link whose one-way delay is exactly delay_frames slots */
    c.lane.link.transceiver_ns = 0;
    c.lane.link.cable_m = rc->delay_frames * (double)rc->frame_bits /
                          c.lane.link.lane_rate_gbps / c.lane.link.ns_per_m;
    c.lane.fid_bits = rc->fid_bits ? rc->fid_bits
                                   : rifl_lane_min_fid_bits(&c.lane.link, rc->frame_bits,
                                                            c.lane.pipeline_frames);
    c.lane.replay_tail_frames = rc->replay_tail;
    c.lane.allow_unsafe_fid = rc->unsafe;
    c.lane.tx_queue_frames = 2048;
    c.delay_frames = rc->delay_frames;
    c.ber[0] = rc->ber[0];
    c.ber[1] = rc->ber[1];
    c.seeds_given = true;
    c.channel_seed[0] = rc->seed * 2 + 1;
    c.channel_seed[1] = rc->seed * 2 + 2;
    c.stream_seed[0] = rc->seed ^ 0xA; /* A -> B */
    c.stream_seed[1] = rc->seed ^ 0xB;
    c.min_len = rc->min_len;
    c.max_len = rc->max_len;
    c.bytes = 0;
    c.fast = false;
    c.encode_all = true;  /* the oracle reads the wire */
    c.users_first = true;
    /* errors stop at rc->slots: whatever is still in flight must then get
     * through; once it has, frames still in flight (flow-control notices)
     * get time to land */
    c.offer_slots = rc->slots;
    c.max_slots = rc->slots + 2000000;
    c.settle_slots = 4 * (2u << c.lane.fid_bits) + 4 * rc->delay_frames;
    struct watch w = { .rc = rc, .ready = { 1.0, 1.0 }, .F = rc->frame_bits,
                       .pb = rifl_payload_bytes(rc->frame_bits),
                       .orc = { .hash = calloc(ORACLE_RING, sizeof(uint64_t)) } };
    rifl_rng_seed(&w.rng, rc->seed);
    if (getenv("RIFL_TEST_TRACE"))
        w.trace = calloc(TRACE_N, sizeof *w.trace);
    c.read_budget = read_budget;
    c.observe = observe;
    c.hook_ctx = &w;
    rifl_linksim_result res;
    char msg[512];
    int r = rifl_linksim_run(&c, &res, msg, sizeof msg);
    CHECK_MSG(r == RIFL_OK, "%s", msg);
    if (r != RIFL_OK) {
        free(w.orc.hash);
        free(w.trace);
        return;
    }
    out->drained = res.complete;
    if (w.trace && !out->drained) {
        printf("NOT DRAINED trace (last slots):\n");
        print_trace(&w, res.slots > 600 ? res.slots - 600 : 0, res.slots - 1, true);
    }
    out->oracle_sent = w.orc.sent;
    out->oracle_delivered = w.orc.delivered;
    out->oracle_mismatch = w.orc.mismatches + w.orc.overrun;
    free(w.orc.hash);
    free(w.trace);
    for (int i = 0; i < 2; i++) {
        const rifl_lane_stats *st = &res.lane[i];
        out->sent[i] = res.offered_packets[i];
        out->ok[i] = res.val[i].packets_ok;
        out->replays += st->tx_replay_cycles;
        out->verify_fail += st->rx_verify_fail;
        out->overflow += st->rx_overflow;
        out->fc_on += st->fc_on_sent;
    }
    out->clean = res.lossless;
    printf("  F=%u delay=%u K=%u ber=%.0e/%.0e slots=%llu: packets sent %llu/%llu ok %llu/%llu, "
           "replay cycles %llu, verify failures %llu, overflow nacks %llu, fc on %llu, "
           "A->B frames %llu/%llu delivered, %llu wrong%s\n",
           rc->frame_bits, rc->delay_frames, c.lane.fid_bits, rc->ber[0], rc->ber[1],
           (unsigned long long)res.slots, (unsigned long long)out->sent[0],
           (unsigned long long)out->sent[1], (unsigned long long)out->ok[0],
           (unsigned long long)out->ok[1], (unsigned long long)out->replays,
           (unsigned long long)out->verify_fail, (unsigned long long)out->overflow,
           (unsigned long long)out->fc_on, (unsigned long long)out->oracle_delivered,
           (unsigned long long)out->oracle_sent, (unsigned long long)out->oracle_mismatch,
           out->drained ? "" : "  NOT DRAINED");
    for (int i = 0; i < 2; i++)
        if (!rifl_validator_clean(&(rifl_validator){ .st = res.val[i] }))
            printf("  direction %d validator: lost %llu dup %llu reordered %llu corrupted %llu\n",
                   i, (unsigned long long)res.val[i].lost,
                   (unsigned long long)res.val[i].duplicated,
                   (unsigned long long)res.val[i].reordered,
                   (unsigned long long)res.val[i].corrupted);
    rifl_linksim_result_free(&res);
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

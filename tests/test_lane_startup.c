/* Start-up under bit errors: two ends of a link come out of reset while the
 * cable corrupts up to 40% of the frames, then the errors stop.  Every run
 * must reach NORMAL both ways, deliver user data both ways within a bounded
 * time after the errors stop, and lose, duplicate, reorder or corrupt
 * nothing.  The ends are two rifl lanes, a rifl lane against an independent
 * model of the link-layer rules (tests/spec_lane.h), or two models.
 *
 * Parameters are drawn from a seeded generator: frame width 64, 256 or 2048
 * bits; a frame-ID width K of 6 to 10 and a cable that puts RTT_frames + 2
 * below 2^(K-1) in half the runs and at or above it in the other half; a
 * frame error rate of 0 to 40% per direction; an error phase of 1 to 40 x 2^K
 * slots, sometimes in bursts; receivers that stall (flow control, full
 * buffers).  (White noise, BER 0.5, is left out: a random frame passes
 * verification with probability 2^-12, so such bursts deliver wrong data
 * now and then by design, whatever the state machine does.)
 * `--long` runs ten times as many seeds. */
#include <math.h>

#include "testlib.h"

#include "rifl/lane.h"
#include "rifl/rng.h"
#include "rifl/sim/pair.h"
#include "rifl/sim/traffic.h"
#include "spec_lane.h"

#define MAX_PKT 3000

struct end {
    rifl_lane *lane;          /* a rifl lane, or */
    struct spec_lane *spec;   /* the model */
    rifl_validator val;       /* checks what the other end sends */
    uint64_t stream;          /* seed of the packets this end sends */
    uint64_t next_seq, sent;
    uint8_t pkt[MAX_PKT];
    size_t len;
    bool pending;
};

static void end_tx(struct end *e, uint64_t now, uint8_t *wire)
{
    if (e->lane)
        rifl_lane_tx(e->lane, now, wire);
    else
        spec_lane_tx(e->spec, wire);
}

static void end_rx(struct end *e, uint64_t now, const uint8_t *wire)
{
    if (e->lane)
        rifl_lane_rx(e->lane, now, wire, NULL);
    else
        spec_lane_rx(e->spec, wire);
}

static bool end_normal(const struct end *e)
{
    return e->lane ? rifl_lane_state(e->lane) == RIFL_TX_NORMAL : e->spec->state == SPEC_NORMAL;
}

/* offer the next packet; true when one was taken */
static void end_offer(struct end *e)
{
    if (!e->pending) {
        e->len = rifl_packet_len(e->stream, e->next_seq, 1, MAX_PKT);
        rifl_packet_fill(e->stream, e->next_seq, e->pkt, e->len);
        e->pending = true;
    }
    bool ok = e->lane ? rifl_lane_send(e->lane, e->pkt, e->len) == RIFL_OK
                      : spec_lane_send(e->spec, e->pkt, e->len);
    if (ok) {
        e->pending = false;
        e->next_seq++;
        e->sent++;
    }
}

/* read what arrived; returns true when a packet was completed */
static bool end_read(struct end *e)
{
    uint8_t buf[MAX_PKT];
    bool any = false;
    if (e->lane) {
        size_t n;
        int eop;
        while (rifl_lane_read(e->lane, buf, sizeof buf, &n, &eop) == RIFL_OK) {
            rifl_validator_feed(&e->val, buf, n, eop);
            any |= eop != 0;
        }
    } else {
        size_t n;
        int eop;
        while ((n = spec_lane_read(e->spec, buf, &eop)) > 0) {
            rifl_validator_feed(&e->val, buf, n, eop);
            any |= eop != 0;
        }
    }
    return any;
}

enum peer_kind { LANE_LANE, LANE_SPEC, SPEC_SPEC };

struct su_cfg {
    enum peer_kind kind;
    bool hw_tail;             /* the model uses the hardware's 2^(K-1) tail */
    unsigned F, K, delay;     /* delay: one-way, in frame slots */
    unsigned lock;            /* rx_lock_frames of the rifl lanes */
    double fer[2];            /* frame error rate A->B, B->A */
    uint64_t err_slots;
    bool bursty, stalls;
    uint64_t seed;
};

struct su_result {
    int64_t first[2];         /* slot of the first packet delivered A->B, B->A */
    bool normal_after[2];     /* NORMAL at the end of the run */
    bool clean, drained;
    uint64_t sent[2], ok[2], slots;
    rifl_validator_stats val[2]; /* [i]: direction i (0 = A->B) */
};

static double ber_for(double fer, unsigned F) { return fer > 0 ? 1 - pow(1 - fer, 1.0 / F) : 0; }

/* Slots the link may take, after the errors stop, to deliver and drain:
 * a replay cycle or two, the wait of 2^K slots after an error, 2^K start-up
 * fillers, flow control and the transmit queue, with a margin. */
static uint64_t recovery_bound(const struct su_cfg *c)
{
    uint64_t n = 1u << c->K, rtt = 2ull * c->delay + 2;
    return 24 * n + 12 * rtt + 4096 + 64ull * c->lock;
}

static int run_startup(const struct su_cfg *c, struct su_result *r)
{
    memset(r, 0, sizeof *r);
    r->first[0] = r->first[1] = -1;
    unsigned N = 1u << c->K, rtt = 2 * c->delay + 2;
    unsigned tail = N / 2 > rtt + 16 ? N / 2 : rtt + 16;
    struct end ends[2];
    memset(ends, 0, sizeof ends);
    struct spec_lane specs[2];
    rifl_phy *ch[2] = { NULL, NULL };
    int rc = -1;
    for (int i = 0; i < 2; i++) {
        bool spec = c->kind == SPEC_SPEC || (c->kind == LANE_SPEC && i == 1);
        ends[i].stream = c->seed * 4 + 11 + (uint64_t)i;
        if (spec) {
            if (spec_lane_init(&specs[i], c->F, c->K, c->hw_tail ? N / 2 : tail, 512))
                goto out;
            ends[i].spec = &specs[i];
        } else {
            /* a link whose round trip is exactly 2 x delay + 2 frames: one
             * frame per ns, 4 ns per metre (exact in binary), no transceiver
             * latency */
            rifl_lane_config lc = rifl_lane_default_config;
            lc.frame_bits = c->F;
            lc.fid_bits = c->K;
            lc.link.lane_rate_gbps = c->F;
            lc.link.ns_per_m = 4;
            lc.link.transceiver_ns = 0;
            lc.link.cable_m = c->delay / 4.0;
            lc.tx_queue_frames = 512;
            lc.rx_lock_frames = c->lock;
            char msg[512];
            if (rifl_lane_create(&lc, &ends[i].lane, msg, sizeof msg) != RIFL_OK) {
                fprintf(stderr, "  lane refused: %s\n", msg);
                goto out;
            }
        }
        rifl_phy_channel_config cc = { .frame_bits = c->F, .delay_frames = c->delay,
                                       .ber = ber_for(c->fer[i], c->F),
                                       .seed = c->seed * 2 + 1 + i };
        if (rifl_phy_channel_create(&cc, &ch[i], NULL, 0) != RIFL_OK)
            goto out;
    }
    for (int i = 0; i < 2; i++)
        rifl_validator_init(&ends[i].val, ends[1 - i].stream, 1, MAX_PKT);

    rifl_rng rng;
    rifl_rng_seed(&rng, c->seed * 7 + 3);
    uint64_t limit = c->err_slots + recovery_bound(c);
    bool stalled = false, offering = true;
    uint8_t wire[2][RIFL_FRAME_MAX_BYTES];
    uint64_t t;
    for (t = 0; t < limit; t++) {
        if (t == c->err_slots) {
            for (int i = 0; i < 2; i++)
                rifl_phy_channel_set_ber(ch[i], 0);
            stalled = false;
        } else if (t < c->err_slots && t % N == 0) {
            if (c->bursty) {
                bool quiet = rifl_rng_below(&rng, 8) < 3;
                for (int i = 0; i < 2; i++)
                    rifl_phy_channel_set_ber(ch[i], quiet ? 0 : ber_for(c->fer[i], c->F));
            }
            if (c->stalls)
                stalled = rifl_rng_below(&rng, 3) == 0;
        }
        /* after the errors: stop offering once both ways delivered */
        if (t > c->err_slots && r->first[0] >= 0 && r->first[1] >= 0)
            offering = false;
        for (int i = 0; i < 2; i++) {
            if (offering)
                end_offer(&ends[i]);
            if (!stalled && end_read(&ends[i]) && r->first[1 - i] < 0)
                r->first[1 - i] = (int64_t)t;
        }
        if (!offering && ends[1].val.next_seq == ends[0].sent && ends[0].val.next_seq == ends[1].sent &&
            end_normal(&ends[0]) && end_normal(&ends[1]))
            break;
        end_tx(&ends[0], t, wire[0]);
        end_tx(&ends[1], t, wire[1]);
        const uint8_t *to_b = rifl_phy_step(ch[0], t, wire[0]);
        const uint8_t *to_a = rifl_phy_step(ch[1], t, wire[1]);
        end_rx(&ends[0], t, to_a);
        end_rx(&ends[1], t, to_b);
    }
    r->slots = t;
    r->drained = t < limit;
    for (int i = 0; i < 2; i++) {
        r->sent[i] = ends[i].sent;
        r->ok[i] = ends[1 - i].val.st.packets_ok;
        r->normal_after[i] = end_normal(&ends[i]);
        r->val[i] = ends[1 - i].val.st;
    }
    r->clean = rifl_validator_clean(&ends[0].val) && rifl_validator_clean(&ends[1].val);
    rc = 0;
out:
    for (int i = 0; i < 2; i++) {
        rifl_lane_free(ends[i].lane);
        if (ends[i].spec)
            spec_lane_free(ends[i].spec);
        rifl_validator_free(&ends[i].val);
        rifl_phy_free(ch[i]);
    }
    return rc;
}

static bool result_ok(const struct su_cfg *c, const struct su_result *r)
{
    return r->clean && r->drained && r->first[0] >= 0 && r->first[1] >= 0 &&
           r->ok[0] == r->sent[0] && r->ok[1] == r->sent[1] && r->sent[0] > 0 && r->sent[1] > 0 &&
           r->normal_after[0] && r->normal_after[1] && (uint64_t)r->first[0] < c->err_slots + recovery_bound(c);
}

static const char *kind_name(enum peer_kind k)
{
    return k == LANE_LANE ? "lane/lane" : k == LANE_SPEC ? "lane/model" : "model/model";
}

static void print_run(const char *tag, const struct su_cfg *c, const struct su_result *r)
{
    printf("  %s %s seed %llu: F=%u K=%u delay=%u (RTT+2 %s 2^(K-1)) FER %.2f/%.2f, %llu error slots%s%s%s:"
           " first delivery %lld/%lld, sent %llu/%llu ok %llu/%llu, %s, %s, NORMAL %d/%d\n",
           tag, kind_name(c->kind), (unsigned long long)c->seed, c->F, c->K, c->delay,
           2 * c->delay + 4 >= (1u << (c->K - 1)) ? ">=" : "<", c->fer[0], c->fer[1],
           (unsigned long long)c->err_slots, c->bursty ? ", bursts" : "", c->stalls ? ", stalls" : "", c->hw_tail ? ", 2^(K-1) tail" : "",
           (long long)r->first[0], (long long)r->first[1], (unsigned long long)r->sent[0],
           (unsigned long long)r->sent[1], (unsigned long long)r->ok[0], (unsigned long long)r->ok[1],
           r->clean ? "clean" : "NOT CLEAN", r->drained ? "drained" : "NOT DRAINED", r->normal_after[0],
           r->normal_after[1]);
    for (int i = 0; i < 2; i++)
        if (r->val[i].lost || r->val[i].duplicated || r->val[i].reordered || r->val[i].corrupted)
            printf("    %s: lost %llu duplicated %llu reordered %llu corrupted %llu\n",
                   i ? "B->A" : "A->B", (unsigned long long)r->val[i].lost,
                   (unsigned long long)r->val[i].duplicated, (unsigned long long)r->val[i].reordered,
                   (unsigned long long)r->val[i].corrupted);
}

/* Draw the parameters of run `i`. */
static void draw(struct su_cfg *c, enum peer_kind kind, uint64_t i)
{
    static const unsigned widths[] = { 64, 256, 2048 };
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed * 1000003 + i * 7919 + (uint64_t)kind);
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->seed = test_seed * 100000 + i;
    c->F = widths[i % 3];
    c->K = 6 + (unsigned)rifl_rng_below(&rng, 5);
    unsigned half = 1u << (c->K - 1);
    /* RTT = 2 d + 2 must leave 32 frames of the 2^K (sizing rule) */
    unsigned dmax = ((1u << c->K) - 34) / 2;
    unsigned dsplit = (half - 4 + 1) / 2; /* smallest d with RTT + 2 >= 2^(K-1) */
    if ((i / 3) % 2)
        c->delay = dsplit + (unsigned)rifl_rng_below(&rng, dmax - dsplit + 1);
    else
        c->delay = 1 + (unsigned)rifl_rng_below(&rng, dsplit - 1);
    c->lock = rifl_rng_below(&rng, 2) ? 64 : 0;
    for (int d = 0; d < 2; d++)
        c->fer[d] = rifl_rng_below(&rng, 5) == 0 ? 0 : 0.4 * rifl_rng_double(&rng);
    c->err_slots = (uint64_t)(1u << c->K) * (1 + rifl_rng_below(&rng, 40));
    c->bursty = rifl_rng_below(&rng, 3) == 0;
    c->stalls = rifl_rng_below(&rng, 2) == 0;
    /* the hardware's tail is safe only while RTT + 2 < 2^(K-1) */
    c->hw_tail = kind != LANE_LANE && 2 * c->delay + 4 < half && rifl_rng_below(&rng, 2);
}

static void storm(enum peer_kind kind, unsigned runs)
{
    unsigned bad = 0, above = 0;
    uint64_t worst = 0, worst_seed = 0, slots = 0;
    for (unsigned i = 0; i < runs; i++) {
        struct su_cfg c;
        draw(&c, kind, i);
        struct su_result r;
        REQUIRE(run_startup(&c, &r) == 0);
        above += 2 * c.delay + 4 >= (1u << (c.K - 1));
        slots += r.slots;
        if (!result_ok(&c, &r)) {
            if (bad++ < 10)
                print_run("FAILED", &c, &r);
            continue;
        }
        int64_t last = r.first[0] > r.first[1] ? r.first[0] : r.first[1];
        uint64_t after = last > (int64_t)c.err_slots ? (uint64_t)last - c.err_slots : 0;
        if (after > worst) {
            worst = after;
            worst_seed = i;
        }
    }
    printf("  %s: %u runs (%u with RTT+2 >= 2^(K-1)), %llu slots; %u failed; longest start after the"
           " errors stopped: %llu slots (run %llu)\n",
           kind_name(kind), runs, above, (unsigned long long)slots, bad, (unsigned long long)worst,
           (unsigned long long)worst_seed);
    CHECK(above > runs / 3 && runs - above > runs / 3);
    CHECK_EQ_U(bad, 0);
}

static void t_startup_storm(void) { storm(LANE_LANE, test_long_run ? 10000 : 240); }
static void t_startup_against_model(void) { storm(LANE_SPEC, test_long_run ? 3000 : 120); }
static void t_model_against_model(void) { storm(SPEC_SPEC, test_long_run ? 500 : 30); }

/* The demo's link (256-bit frames, 10 m, K = 8): at every BER up to 2e-3
 * both directions deliver, losslessly, at the latest soon after the errors
 * stop; up to 1e-6 they start within a few round trips of start-up, errors
 * or not. */
static void t_demo_link(void)
{
    static const double bers[] = { 1e-7, 1e-6, 1e-5, 2e-5, 5e-5, 1e-4, 3e-4, 1e-3, 2e-3 };
    unsigned seeds = test_long_run ? 20 : 2;
    unsigned delay = rifl_link_delay_frames(&rifl_lane_default_config.link, 256);
    for (size_t b = 0; b < sizeof bers / sizeof bers[0]; b++) {
        for (unsigned s = 0; s < seeds; s++) {
            struct su_cfg c = { .kind = LANE_LANE, .F = 256, .K = 8, .delay = delay, .lock = 64,
                                .err_slots = 100000, .seed = test_seed * 31 + s * 101 + b };
            double fer = 1 - pow(1 - bers[b], 256);
            c.fer[0] = c.fer[1] = fer;
            struct su_result r;
            REQUIRE(run_startup(&c, &r) == 0);
            bool ok = result_ok(&c, &r);
            if (bers[b] <= 1e-6)
                ok = ok && r.first[0] < 2000 && r.first[1] < 2000;
            if (!ok || s == 0)
                printf("  BER %g (FER %.4f): first delivery at slot %lld / %lld%s\n", bers[b], fer,
                       (long long)r.first[0], (long long)r.first[1],
                       r.first[0] >= (int64_t)c.err_slots ? " (after the errors stopped)" : "");
            CHECK_MSG(ok, "BER %g seed %llu", bers[b], (unsigned long long)c.seed);
        }
    }
}

TEST_MAIN({ "startup_storm", t_startup_storm },
          { "startup_against_model", t_startup_against_model },
          { "model_against_model", t_model_against_model },
          { "demo_link", t_demo_link })

/* Link simulator: the fast path gives exactly the run that plain stepping
 * gives, the channel's error count matches its BER, runs are lossless and
 * reproducible, bad settings are refused with a clear message; the driver's
 * course (packets in parts, the phase where errors stop, the slot order)
 * and its hooks (read decisions, the observer, settle slots). */
#include <math.h>

#include "testlib.h"

#include "rifl/rng.h"
#include "rifl/sim/linksim.h"
#include "rifl/sim/pair.h"

static rifl_linksim_config base(uint64_t seed, double ber, uint64_t bytes)
{
    rifl_linksim_config c;
    rifl_linksim_defaults(&c);
    c.seed = seed;
    c.ber[0] = ber;
    c.ber[1] = ber;
    c.bytes = bytes;
    return c;
}

static bool run_ok(const rifl_linksim_config *c, rifl_linksim_result *r)
{
    char msg[512] = "";
    int rc = rifl_linksim_run(c, r, msg, sizeof msg);
    CHECK_MSG(rc == RIFL_OK, "%s", msg);
    return rc == RIFL_OK;
}

/* The run stepped slot by slot (a) and with the fast paths (b); false
 * (nothing to free) when either failed. */
static bool run_plain_and_fast(rifl_linksim_config *c, rifl_linksim_result *a,
                               rifl_linksim_result *b)
{
    c->fast = false;
    if (!run_ok(c, a))
        return false;
    c->fast = true;
    if (!run_ok(c, b)) {
        rifl_linksim_result_free(a);
        return false;
    }
    return true;
}

static void same_stats(const rifl_linksim_result *a, const rifl_linksim_result *b)
{
    CHECK_EQ_U(a->slots, b->slots);
    for (int i = 0; i < 2; i++) {
        CHECK(memcmp(&a->lane[i], &b->lane[i], sizeof a->lane[i]) == 0);
        CHECK(memcmp(&a->ch[i], &b->ch[i], sizeof a->ch[i]) == 0);
        CHECK(memcmp(&a->val[i], &b->val[i], sizeof a->val[i]) == 0);
        CHECK_EQ_U(a->offered_bytes[i], b->offered_bytes[i]);
        CHECK_EQ_I(a->first_read[i], b->first_read[i]);
        CHECK_EQ_U(a->window[i], b->window[i]);
    }
    CHECK_EQ_U(a->lat.n, b->lat.n);
    CHECK(a->lat.sum == b->lat.sum);
    CHECK_EQ_U(a->lat.max, b->lat.max);
    CHECK_EQ_U(a->lat_last.max, b->lat_last.max);
    CHECK_EQ_U(rifl_hist_quantile(&a->lat, 0.99), rifl_hist_quantile(&b->lat, 0.99));
    CHECK_EQ_U(rifl_hist_quantile(&a->lat, 0.5), rifl_hist_quantile(&b->lat, 0.5));
}

static void print_lane_diff(const rifl_linksim_result *a, const rifl_linksim_result *b)
{
    for (int i = 0; i < 2; i++) {
        const uint64_t *x = (const uint64_t *)&a->lane[i], *y = (const uint64_t *)&b->lane[i];
        for (size_t k = 0; k < sizeof a->lane[i] / 8; k++)
            if (x[k] != y[k])
                printf("  lane %d counter #%zu: plain %llu fast %llu\n", i, k,
                       (unsigned long long)x[k], (unsigned long long)y[k]);
    }
}

/* fast path against plain stepping, over a range of error rates, packet
 * sizes, loads and links (every run ends when its bytes are delivered, so
 * the end of a fast-forward is checked too) */
static void t_fast_equals_plain(void)
{
    struct {
        double ber;
        size_t lo, hi;
        double load;
        unsigned F;
        double cable;
    } cases[] = {
        { 0, 1, 8192, 1.0, 256, 10 },
        { 1e-7, 1, 8192, 1.0, 256, 10 },
        { 1e-6, 1, 1500, 1.0, 256, 10 },
        { 3e-6, 64, 64, 1.0, 512, 30 },
        { 1e-6, 1, 300, 0.6, 256, 2 },
        { 2e-7, 1, 9000, 0.3, 128, 10 },
        { 1e-5, 1, 8192, 1.0, 256, 10 },
        { 3e-7, 1, 40, 0.45, 256, 10 }, /* the user acts in most slots */
        { 1e-7, 8000, 8192, 0.97, 1024, 100 },
        { 5e-7, 1, 2000, 1.0, 256, 10 }, /* with receiver stalls (below) */
    };
    uint64_t fast_total = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rifl_linksim_config c = base(test_seed * 31 + i, cases[i].ber,
                                     test_long_run ? 20000000 : 3000000);
        c.min_len = cases[i].lo;
        c.max_len = cases[i].hi;
        c.load = cases[i].load;
        c.lane.frame_bits = cases[i].F;
        c.lane.link.cable_m = cases[i].cable;
        c.lane.fid_bits = rifl_lane_min_fid_bits(&c.lane.link, c.lane.frame_bits,
                                                 c.lane.pipeline_frames);
        if (cases[i].hi > 8192)
            c.lane.tx_queue_frames = 4096;
        if (i == sizeof cases / sizeof cases[0] - 1) {
            c.rx_stall = 3000;
            c.rx_period = 20000;
        }
        /* reference: every frame built and decoded, every slot stepped */
        rifl_linksim_result a, b;
        c.fast = false;
        c.encode_all = true;
        if (!run_ok(&c, &a))
            continue;
        c.fast = true;
        c.encode_all = (i & 1) != 0; /* fast path with both frame carriages */
        if (!run_ok(&c, &b)) {
            rifl_linksim_result_free(&a);
            continue;
        }
        printf("  ber %.0e sizes %zu..%zu load %.2f F %u: %llu slots, %llu fast in %llu skips, "
               "%llu+%llu packets\n", cases[i].ber, cases[i].lo, cases[i].hi, cases[i].load,
               cases[i].F, (unsigned long long)a.slots, (unsigned long long)b.fast_slots,
               (unsigned long long)b.skips, (unsigned long long)a.val[0].packets_ok,
               (unsigned long long)a.val[1].packets_ok);
        same_stats(&a, &b);
        if (memcmp(&a.lane[0], &b.lane[0], sizeof a.lane[0]) ||
            memcmp(&a.lane[1], &b.lane[1], sizeof a.lane[1]))
            print_lane_diff(&a, &b);
        CHECK(a.lossless && b.lossless && a.complete && b.complete);
        CHECK_EQ_U(a.fast_slots, 0);
        fast_total += b.fast_slots;
        rifl_linksim_result_free(&a);
        rifl_linksim_result_free(&b);
    }
    CHECK(fast_total > 0);
}


/* Recoveries carried as counts (linksim_carry.c): runs where most hits are
 * alone give exactly the plain run, counter by counter, with most hits
 * carried; over error rates, loads, sizes, frame widths, frame-ID widths,
 * one-sided errors, an offer_slots end, ON/OFF flow control and no delay,
 * each with its own seed. */
static void t_carried_equals_plain(void)
{
    struct {
        double ber0, ber1;
        size_t lo, hi;
        double load;
        unsigned F, K;
        uint64_t offer;
    } cases[] = {
        { 3e-7, 3e-7, 1, 8192, 1.0, 256, 0, 0 },
        { 5e-7, 0, 1, 1500, 1.0, 256, 0, 0 },
        { 0, 5e-7, 64, 64, 1.0, 256, 0, 0 },
        { 3e-7, 2e-7, 1, 8192, 0.7, 256, 0, 0 },
        { 2e-7, 2e-7, 1, 9000, 1.0, 512, 0, 0 },
        { 6e-7, 6e-7, 1, 4000, 1.0, 128, 0, 0 },
        { 5e-8, 5e-8, 1, 8192, 1.0, 256, 10, 0 },
        { 3e-7, 3e-7, 1, 2000, 0.3, 256, 0, 0 },
        { 3e-7, 3e-7, 1, 8192, 1.0, 256, 0, 1500000 },
        { 3e-7, 3e-7, 1, 3000, 1.0, 256, 0, 0 }, /* ON/OFF flow control */
        { 1e-6, 1e-6, 1, 8192, 1.0, 256, 0, 0 }, /* no delay: D = 0 */
    };
    const size_t n_cases = sizeof cases / sizeof cases[0];
    uint64_t hits_all = 0, carried_all = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rifl_linksim_config c = base(test_seed * 37 + i, 0, test_long_run ? 100000000 : 12000000);
        if (cases[i].K)
            c.bytes *= 4; /* (recoveries of 2^10 frames need hits far apart) */
        c.ber[0] = cases[i].ber0;
        c.ber[1] = cases[i].ber1;
        c.min_len = cases[i].lo;
        c.max_len = cases[i].hi;
        c.load = cases[i].load;
        c.lane.frame_bits = cases[i].F;
        c.lane.fid_bits = cases[i].K ? cases[i].K
                                     : rifl_lane_min_fid_bits(&c.lane.link, c.lane.frame_bits,
                                                              c.lane.pipeline_frames);
        if (cases[i].hi > 8192)
            c.lane.tx_queue_frames = 4096;
        if (cases[i].offer) {
            c.bytes = 0;
            c.offer_slots = cases[i].offer;
            c.max_slots = cases[i].offer + 200000;
        }
        if (i == n_cases - 2) {
            c.lane.fc_mode = RIFL_LANE_FC_ONOFF;
            c.lane.rx_buffer_frames = 700;
        }
        if (i == n_cases - 1) {
            c.lane.link.cable_m = 0;
            c.lane.link.transceiver_ns = 1;
            c.lane.pipeline_frames = 1;
            c.lane.fid_bits = rifl_lane_min_fid_bits(&c.lane.link, c.lane.frame_bits,
                                                     c.lane.pipeline_frames);
        }
        rifl_linksim_result a, b;
        if (!run_plain_and_fast(&c, &a, &b))
            continue;
        uint64_t hits = b.ch[0].frames_hit + b.ch[1].frames_hit;
        printf("  ber %.0e/%.0e load %.2f F %u K %u: %llu slots, %llu hits, %llu carried\n",
               cases[i].ber0, cases[i].ber1, cases[i].load, cases[i].F, c.lane.fid_bits,
               (unsigned long long)a.slots, (unsigned long long)hits,
               (unsigned long long)b.carried);
        same_stats(&a, &b);
        if (memcmp(&a.lane[0], &b.lane[0], sizeof a.lane[0]) ||
            memcmp(&a.lane[1], &b.lane[1], sizeof a.lane[1]))
            print_lane_diff(&a, &b);
        CHECK(a.lossless && b.lossless && a.complete == b.complete);
        CHECK_EQ_U(a.carried, 0);
        /* (each way's first lone hit is stepped, to learn from) */
        CHECK_MSG(b.carried > 0 || hits < 40, "none of %llu hits carried",
                  (unsigned long long)hits);
        hits_all += hits;
        carried_all += b.carried;
        rifl_linksim_result_free(&a);
        rifl_linksim_result_free(&b);
    }
    CHECK_MSG(carried_all * 3 > hits_all, "%llu of %llu hits carried",
              (unsigned long long)carried_all, (unsigned long long)hits_all);
}

/* frames carried by content give exactly the run that building and decoding
 * every frame gives, also where corrupted frames are frequent (receivers out
 * of step after many of them, undetected errors at 1e-3), with random reads,
 * flow control and every frame width */
static void t_content_equals_wire(void)
{
    struct {
        double ber;
        unsigned F;
        double rx_ready;
    } cases[] = {
        { 2e-6, 256, 1.0 }, { 1e-5, 64, 1.0 },  { 3e-7, 2048, 1.0 }, { 5e-6, 128, 0.5 },
        { 1e-6, 512, 0.9 }, { 1e-6, 1024, 1.0 }, { 1e-3, 256, 1.0 }, /* (no progress) */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rifl_linksim_config c = base(test_seed * 57 + i, cases[i].ber, 0);
        c.max_slots = test_long_run ? 3000000 : 300000;
        c.max_len = 3000;
        c.lane.frame_bits = cases[i].F;
        c.lane.fid_bits = rifl_lane_min_fid_bits(&c.lane.link, c.lane.frame_bits,
                                                 c.lane.pipeline_frames);
        c.lane.tx_queue_frames = 4096;
        c.rx_ready = cases[i].rx_ready;
        if (i == 4)
            c.lane.fc_mode = RIFL_LANE_FC_ONOFF;
        rifl_linksim_result a, b;
        c.encode_all = true;
        if (!run_ok(&c, &a))
            continue;
        c.encode_all = false;
        if (!run_ok(&c, &b)) {
            rifl_linksim_result_free(&a);
            continue;
        }
        printf("  ber %.0e F %u: %llu frames hit, %llu+%llu packets, %llu corrupted\n",
               cases[i].ber, cases[i].F,
               (unsigned long long)(a.ch[0].frames_hit + a.ch[1].frames_hit),
               (unsigned long long)a.val[0].packets_ok, (unsigned long long)a.val[1].packets_ok,
               (unsigned long long)(a.val[0].corrupted + a.val[1].corrupted));
        same_stats(&a, &b);
        if (cases[i].ber < 1e-4)
            CHECK(a.val[0].packets_ok + a.val[1].packets_ok > 10);
        CHECK(a.ch[0].frames_hit + a.ch[1].frames_hit > 20);
        rifl_linksim_result_free(&a);
        rifl_linksim_result_free(&b);
    }
}

/* stepping by reference (no bytes on the cables through error-free slots)
 * gives exactly the run of plain stepping by content, for every kind of
 * user and up to error rates where damaged frames follow each other: every
 * frame slot between two damaged ones, damaged frames still in flight when
 * a stretch starts, stretches ending before their first frames arrive */
static void t_ref_equals_plain(void)
{
    struct {
        double ber;
        unsigned F;
        double rx_ready, load;
        int mode; /* 0 whole packets, 1 parts, 2 users first, 3 ON/OFF flow control,
                     4 receiver stalls, 5 errors stop at offer_slots */
        double cable;
    } cases[] = {
        { 1e-5, 256, 1.0, 1.0, 0, 10 },  { 3e-5, 256, 1.0, 1.0, 0, 10 },
        { 2e-6, 512, 0.7, 1.0, 0, 10 },  { 1e-5, 256, 1.0, 1.0, 1, 10 },
        { 5e-6, 128, 1.0, 0.5, 2, 30 },  { 4e-6, 256, 0.3, 1.0, 3, 10 },
        { 1e-5, 64, 1.0, 1.0, 4, 10 },   { 1e-4, 256, 1.0, 1.0, 0, 10 },
        { 2e-5, 1024, 1.0, 0.8, 5, 100 }, { 1e-6, 256, 1.0, 1.0, 0, 0.5 },
        { 2e-5, 256, 1.0, 1.0, 5, 10 },
    };
    uint64_t ref_total = 0, quiet_total = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rifl_linksim_config c = base(test_seed * 71 + i, cases[i].ber, 0);
        c.carry = false; /* (every recovery stepped: carrying has its own test) */
        c.max_slots = test_long_run ? 4000000 : 400000;
        c.max_len = 3000;
        c.lane.frame_bits = cases[i].F;
        c.lane.link.cable_m = cases[i].cable;
        c.lane.fid_bits = rifl_lane_min_fid_bits(&c.lane.link, c.lane.frame_bits,
                                                 c.lane.pipeline_frames);
        c.lane.tx_queue_frames = 4096;
        c.rx_ready = cases[i].rx_ready;
        c.load = cases[i].load;
        switch (cases[i].mode) {
        case 1: c.offer = RIFL_LINKSIM_PARTS; c.max_len = 20000; break;
        case 2: c.users_first = true; break;
        case 3: c.lane.fc_mode = RIFL_LANE_FC_ONOFF; c.lane.rx_buffer_frames = 700; break;
        case 4: c.rx_stall = 2000; c.rx_period = 9000; break;
        case 5: c.offer_slots = c.max_slots / 2; break;
        default: break;
        }
        rifl_linksim_result a, b;
        if (!run_plain_and_fast(&c, &a, &b))
            continue;
        printf("  ber %.0e F %u mode %d: %llu slots, %llu by reference (%llu quiet), %llu fast, "
               "%llu frames hit, %llu+%llu packets\n", cases[i].ber, cases[i].F, cases[i].mode,
               (unsigned long long)a.slots, (unsigned long long)b.ref_slots,
               (unsigned long long)b.quiet_slots,
               (unsigned long long)b.fast_slots,
               (unsigned long long)(a.ch[0].frames_hit + a.ch[1].frames_hit),
               (unsigned long long)a.val[0].packets_ok, (unsigned long long)a.val[1].packets_ok);
        same_stats(&a, &b);
        if (memcmp(&a.lane[0], &b.lane[0], sizeof a.lane[0]) ||
            memcmp(&a.lane[1], &b.lane[1], sizeof a.lane[1]))
            print_lane_diff(&a, &b);
        CHECK(a.lossless && b.lossless);
        CHECK_EQ_U(a.ref_slots, 0);
        /* the fast path takes over in the same slots as when the slots
         * outside it are stepped one at a time by content */
        rifl_linksim_result e;
        c.encode_all = true;
        if (run_ok(&c, &e)) {
            CHECK_EQ_U(e.ref_slots, 0);
            CHECK_EQ_U(e.fast_slots, b.fast_slots);
            CHECK_EQ_U(e.skips, b.skips);
            rifl_linksim_result_free(&e);
        }
        /* most slots go by reference or fast: only damaged ones and the few
         * after them are stepped by content */
        CHECK(b.ref_slots + b.fast_slots > b.slots / 2);
        CHECK(a.ch[0].frames_hit + a.ch[1].frames_hit > 20);
        ref_total += b.ref_slots;
        quiet_total += b.quiet_slots;
        CHECK(b.quiet_slots <= b.ref_slots);
        rifl_linksim_result_free(&a);
        rifl_linksim_result_free(&b);
    }
    CHECK(ref_total > 0);
    CHECK(quiet_total > 0); /* quiet runs were among them */
}

/* the channel flips bits at the requested rate: the count over N bits is
 * within 5 standard deviations of N x BER */
static void t_channel_ber(void)
{
    static const double bers[] = { 1e-2, 1e-3, 1e-4, 1e-5 };
    for (size_t i = 0; i < 4; i++) {
        rifl_phy_channel_config cc = { .frame_bits = 256, .delay_frames = 3, .ber = bers[i],
                                       .seed = test_seed + i };
        rifl_phy *ch;
        REQUIRE(rifl_phy_channel_create(&cc, &ch, NULL, 0) == RIFL_OK);
        uint8_t f[32] = { 0 };
        uint64_t frames = (uint64_t)(4000.0 / (bers[i] * 256)) + 1000;
        uint64_t seen = 0;
        for (uint64_t k = 0; k < frames; k++) {
            const uint8_t *o = rifl_phy_step(ch, k, f);
            if (o)
                for (int b = 0; b < 32; b++)
                    seen += (uint64_t)__builtin_popcount(o[b]);
        }
        const rifl_phy_stats *st = rifl_phy_get_stats(ch);
        double expect = bers[i] * (double)st->bits, sd = sqrt(expect * (1 - bers[i]));
        printf("  BER %g: %llu bit errors in %llu bits, expected %.0f +- %.0f\n", bers[i],
               (unsigned long long)st->bit_errors, (unsigned long long)st->bits, expect, sd);
        CHECK(fabs((double)st->bit_errors - expect) < 5 * sd);
        /* what came out of the channel carries exactly the flipped bits */
        CHECK(seen <= st->bit_errors && seen + 3 * 256 >= st->bit_errors);
        rifl_phy_free(ch);
    }
    /* at low rates through the simulator (fast path included) */
    rifl_linksim_config c = base(test_seed, 1e-7, 40000000);
    rifl_linksim_result r;
    if (run_ok(&c, &r)) {
        for (int d = 0; d < 2; d++) {
            double expect = 1e-7 * (double)r.ch[d].bits, sd = sqrt(expect);
            printf("  BER 1e-7 direction %d: %llu bit errors in %llu bits, expected %.0f +- "
                   "%.0f\n", d, (unsigned long long)r.ch[d].bit_errors,
                   (unsigned long long)r.ch[d].bits, expect, sd);
            CHECK(fabs((double)r.ch[d].bit_errors - expect) < 5 * sd);
        }
        CHECK(r.fast_slots > r.slots / 2);
        rifl_linksim_result_free(&r);
    }
}

/* nothing lost, duplicated, reordered or corrupted across the BER range */
static void t_lossless_sweep(void)
{
    for (int e = 0; e <= 16; e++) {
        double ber = 1e-9 * pow(10.0, e * 0.25);
        rifl_linksim_config c = base(test_seed * 1000 + (uint64_t)e, ber,
                                     test_long_run ? 50000000 : ber > 1e-6 ? 300000 : 2000000);
        rifl_linksim_result r;
        if (!run_ok(&c, &r))
            continue;
        uint64_t bad = r.val[0].lost + r.val[1].lost + r.val[0].duplicated +
                       r.val[1].duplicated + r.val[0].reordered + r.val[1].reordered +
                       r.val[0].corrupted + r.val[1].corrupted;
        CHECK_EQ_U(bad, 0);
        CHECK(r.lossless && r.complete);
        CHECK(r.val[0].bytes_ok >= c.bytes && r.val[1].bytes_ok >= c.bytes);
        if (ber >= 1e-6)
            CHECK(r.lane[0].tx_replay_cycles + r.lane[1].tx_replay_cycles > 0);
        rifl_linksim_result_free(&r);
    }
}

/* slow receivers: flow control keeps the receive buffers from overflowing
 * and nothing is lost, with and without bit errors */
static void t_backpressure(void)
{
    static const double bers[] = { 0, 1e-6 };
    for (int i = 0; i < 2; i++) {
        rifl_linksim_config c = base(test_seed * 5 + (uint64_t)i, bers[i], 1000000);
        c.rx_ready = 0.5;
        c.rx_stall = 3000; /* receivers read only 1000 slots out of 4000 */
        c.rx_period = 4000;
        rifl_linksim_result r;
        if (!run_ok(&c, &r))
            continue;
        CHECK(r.lossless && r.complete);
        CHECK(r.lane[0].fc_on_sent + r.lane[1].fc_on_sent > 0);
        CHECK(r.goodput_gbps < 0.5 * 104.6); /* the receivers set the pace */
        rifl_linksim_result_free(&r);
    }
}

/* identical seeds, identical runs; another seed, another run */
static void t_deterministic(void)
{
    rifl_linksim_config c = base(test_seed + 77, 1e-6, 2000000);
    rifl_linksim_result a, b, d;
    if (!run_ok(&c, &a))
        return;
    if (run_ok(&c, &b)) {
        same_stats(&a, &b);
        rifl_linksim_result_free(&b);
    }
    c.seed++;
    if (run_ok(&c, &d)) {
        CHECK(d.ch[0].bit_errors != a.ch[0].bit_errors || d.slots != a.slots ||
              d.val[0].packets_ok != a.val[0].packets_ok);
        rifl_linksim_result_free(&d);
    }
    rifl_linksim_result_free(&a);
}

static void refused(rifl_linksim_config *c, const char *needle)
{
    char msg[512] = "";
    rifl_linksim_result r;
    CHECK_EQ_I(rifl_linksim_run(c, &r, msg, sizeof msg), RIFL_ERR_CONFIG);
    printf("  refused: %s\n", msg);
    CHECK_MSG(strstr(msg, needle) != NULL, "'%s' not in '%s'", needle, msg);
}

/* A pair of lanes whose frames in flight both ways (the cables' delay lines
 * and the pair's own records) would take more than RIFL_PHY_MAX_BYTES is
 * refused, naming the settings, although each cable alone is within its
 * limits; a shorter one is made. */
static void t_pair_size(void)
{
    /* (memory alone: delays far beyond what 2^K covers) */
    rifl_pair_config pc = { .lane = rifl_lane_default_config, .delay_frames = 1u << 22 };
    pc.lane.allow_unsafe_fid = true;
    rifl_pair *p = NULL;
    char msg[512] = "";
    CHECK_EQ_I(rifl_pair_create(&pc, &p, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(p == NULL);
    CHECK_MSG(strstr(msg, "pair of lanes") && strstr(msg, "lower delay_frames") &&
              strstr(msg, "1024 MiB"), "%s", msg);
    rifl_phy_channel_config cc = { .frame_bits = pc.lane.frame_bits,
                                   .delay_frames = pc.delay_frames };
    rifl_phy *ch = NULL;
    CHECK_EQ_I(rifl_phy_channel_create(&cc, &ch, msg, sizeof msg), RIFL_OK);
    rifl_phy_free(ch);
    pc.delay_frames = 1u << 16;
    CHECK_EQ_I(rifl_pair_create(&pc, &p, msg, sizeof msg), RIFL_OK);
    rifl_pair_free(p);
}

static void check_agrees(rifl_linksim_config *c, const char *needle);

/* A one-way delay given to the pair (not taken from the link) must pass
 * the lanes' rule for the frame-ID width: 2^K >= 32 + 2 x D + pipeline
 * frames, or a frame replayed after 2^K others would verify as the wrong
 * one and corrupt packets. */
static void t_pair_delay_vs_fid(void)
{
    rifl_pair_config pc = { .lane = rifl_lane_default_config };
    rifl_pair *p = NULL;
    char msg[512] = "";
    unsigned K = pc.lane.fid_bits, pipe = pc.lane.pipeline_frames;
    unsigned dmax = ((1u << K) - 32 - pipe) / 2;
    pc.delay_frames = dmax + 1;
    CHECK_EQ_I(rifl_pair_create(&pc, &p, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(p == NULL);
    char want[96];
    snprintf(want, sizeof want, "use fid_bits %u or more, or a delay of at most %u frames",
             K + 1, dmax);
    CHECK_MSG(strstr(msg, want) != NULL, "'%s' not in '%s'", want, msg);
    pc.delay_frames = dmax;
    CHECK_EQ_I(rifl_pair_create(&pc, &p, msg, sizeof msg), RIFL_OK);
    rifl_pair_free(p);
    p = NULL;
    pc.delay_frames = dmax + 1;
    pc.lane.fid_bits = K + 1;
    CHECK_EQ_I(rifl_pair_create(&pc, &p, msg, sizeof msg), RIFL_OK);
    rifl_pair_free(p);
    /* the link simulator refuses it too, before running */
    rifl_linksim_config c = base(1, 0, 1000);
    c.delay_frames = dmax + 1;
    check_agrees(&c, "is too long for frame-ID width");
}

/* rifl_linksim_check refuses what rifl_linksim_run refuses, with the same
 * message: a delay longer than a pair's cables take (2^32 - 1 frames, or
 * 2^24 + 1), or one whose frames in flight take too much memory. */
static void check_agrees(rifl_linksim_config *c, const char *needle)
{
    char cmsg[512] = "", rmsg[512] = "";
    rifl_linksim_result r;
    int crc = rifl_linksim_check(c, cmsg, sizeof cmsg);
    int rrc = rifl_linksim_run(c, &r, rmsg, sizeof rmsg);
    CHECK_EQ_I(crc, RIFL_ERR_CONFIG);
    CHECK_EQ_I(rrc, RIFL_ERR_CONFIG);
    CHECK_MSG(strcmp(cmsg, rmsg) == 0, "check '%s', run '%s'", cmsg, rmsg);
    CHECK_MSG(strstr(cmsg, needle) != NULL, "'%s' not in '%s'", needle, cmsg);
}

static void t_check_agrees_run(void)
{
    rifl_linksim_config c = base(1, 0, 1000);
    c.delay_frames = UINT32_MAX;
    check_agrees(&c, "delay of 4294967295 frames is too long; use at most 16777216 "
                     "(delay_frames");
    c.delay_frames = (1u << 24) + 1;
    check_agrees(&c, "use at most 16777216 (delay_frames");
    c.serial = true;
    check_agrees(&c, "use at most 16777216 (delay_frames");
    c.serial = false;
    c.delay_frames = 1u << 22;
    check_agrees(&c, "lower delay_frames");
    /* a bonded link carried in pairs: the skew lengthens its lanes' lines */
    c = base(1, 0, 1000);
    c.lanes = 2;
    c.delay_frames = 1;
    c.lane_skew_bits[1] = (1u << 22) * c.lane.frame_bits;
    check_agrees(&c, "pair of lanes with a one-way delay of 4194305 frames");
}

/* A validator of an absurd size is refused before anything is allocated;
 * the link simulator refuses packets the validator cannot take, in its
 * check as in its run. */
static void t_validator_sizes(void)
{
    rifl_validator v;
    memset(&v, 0xA5, sizeof v);
    CHECK_EQ_I(rifl_validator_init(&v, 1, 1, SIZE_MAX), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_validator_init(&v, 1, SIZE_MAX, SIZE_MAX), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_validator_init(&v, 1, 1, RIFL_VALIDATOR_MAX_LEN + 1), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_validator_init(NULL, 1, 1, 64), RIFL_ERR_INVALID_ARG);
    REQUIRE(rifl_validator_init(&v, 7, 1, 64) == RIFL_OK);
    uint8_t pkt[64];
    size_t len = rifl_packet_len(7, 0, 1, 64);
    rifl_packet_fill(7, 0, pkt, len);
    CHECK_EQ_I(rifl_validator_feed(&v, pkt, len, 1), 0);
    rifl_validator_free(&v);
    rifl_linksim_config c = base(1, 0, 1000);
    c.offer = RIFL_LINKSIM_PARTS;
    c.max_len = RIFL_VALIDATOR_MAX_LEN + 1;
    check_agrees(&c, "use packets of at most 1073741824 bytes");
}

static void t_bad_config(void)
{
    rifl_linksim_config c = base(1, -1e-9, 1000);
    refused(&c, "out of range");
    c = base(1, 0.7, 1000);
    refused(&c, "out of range");
    c = base(1, 0, 1000);
    c.lane.link.cable_m = 200; /* K = 8 is too small for 200 m */
    refused(&c, "smallest safe frame-ID width is 10");
    c = base(1, 0, 1000);
    c.lane.link.cable_m = 5000;
    c.lane.fid_bits = 12;
    refused(&c, "too long for RIFL");
    c = base(1, 0, 1000);
    c.max_len = 40000;
    refused(&c, "do not fit the transmit queue");
    c = base(1, 0, 1000);
    c.load = 0;
    refused(&c, "offered load");
    c = base(1, 0, 0);
    refused(&c, "no end");
    c = base(1, 0, 1000);
    c.settle_slots = 10;
    refused(&c, "settle slots wait for an observer");
    c = base(1, 0, 1000);
    c.offer = (rifl_linksim_offer)7;
    refused(&c, "offer mode 7 is unknown");
}

/* ---- the driver's course and hooks ---------------------------------------- */

struct watch {
    uint64_t calls, last_t, complete_calls;
    bool in_order;
    uint64_t first_complete;
    bool satisfied_after_complete; /* what the observer answers once complete */
    uint64_t budget_calls[2];
    uint64_t hold_until;           /* direction 0's reader waits until then */
};

static bool watch_observe(void *ctx, const rifl_linksim_slot *sl)
{
    struct watch *w = ctx;
    if (w->calls && sl->t != w->last_t + 1)
        w->in_order = false;
    if (sl->pair == NULL || sl->wire == NULL || sl->wire->now != sl->t)
        w->in_order = false;
    w->last_t = sl->t;
    w->calls++;
    if (sl->complete && !w->complete_calls++)
        w->first_complete = sl->t;
    return sl->complete && w->satisfied_after_complete;
}

static size_t watch_budget(void *ctx, unsigned dir, uint64_t t)
{
    struct watch *w = ctx;
    w->budget_calls[dir]++;
    return dir == 0 && t < w->hold_until ? 0 : SIZE_MAX;
}

/* packets larger than the transmit queue go in parts, one call per slot;
 * after offer_slots no new packet starts and the cables stop flipping bits,
 * and the run ends once everything is delivered */
static void t_parts_and_phases(void)
{
    rifl_linksim_config c = base(test_seed + 5, 1e-5, 0);
    c.lane.tx_queue_frames = 64;           /* 1984 bytes */
    c.min_len = 1;
    c.max_len = 20000;
    c.offer = RIFL_LINKSIM_PARTS;
    c.fast = false;
    c.offer_slots = 200000;
    c.max_slots = 2000000;
    rifl_linksim_result r;
    if (!run_ok(&c, &r))
        return;
    CHECK(r.complete && r.lossless);
    CHECK(r.slots > c.offer_slots && r.slots < c.max_slots);
    for (int i = 0; i < 2; i++) {
        CHECK(r.offered_packets[i] > 10);
        CHECK_EQ_U(r.val[i].packets_ok, r.offered_packets[i]);
        CHECK_EQ_U(r.val[i].bytes_ok, r.offered_bytes[i]);
        CHECK_EQ_U(r.lane[i].tx_bytes, r.offered_bytes[i]);
        CHECK_EQ_U(r.held_bytes[i], 0);
        CHECK(r.ch[i].bit_errors > 0);
        /* errors stopped at offer_slots: no more than that many frames
         * could be hit */
        CHECK(r.ch[i].frames_hit <= c.offer_slots);
        CHECK(r.first_read[i] >= 0);
    }
    rifl_linksim_result_free(&r);
    /* the same packets whole do not fit the queue */
    c.offer = RIFL_LINKSIM_WHOLE;
    refused(&c, "do not fit the transmit queue");
}

/* the observer sees every stepped slot in order; the read hook decides when
 * each reader reads; settle slots run on after completion until the observer
 * is satisfied or they are used up */
static void t_hooks(void)
{
    for (int users_first = 0; users_first < 2; users_first++) {
        struct watch w = { .in_order = true, .satisfied_after_complete = true,
                           .hold_until = 5000 };
        rifl_linksim_config c = base(test_seed + 9, 1e-6, 300000);
        c.users_first = users_first;
        c.observe = watch_observe;
        c.read_budget = watch_budget;
        c.hook_ctx = &w;
        rifl_linksim_result r;
        if (!run_ok(&c, &r))
            return;
        CHECK(r.complete && r.lossless);
        CHECK(w.in_order);
        CHECK_EQ_U(r.fast_slots, 0); /* a read hook turns the fast path off */
        CHECK_EQ_U(w.calls, r.slots);
        /* one read decision per direction and users' side */
        CHECK_EQ_U(w.budget_calls[0], r.slots + (users_first ? 0 : 1));
        CHECK_EQ_U(w.budget_calls[1], w.budget_calls[0]);
        CHECK(r.first_read[0] >= (int64_t)w.hold_until);
        CHECK(r.first_read[1] < (int64_t)w.hold_until);
        rifl_linksim_result_free(&r);

        /* settle: an observer never satisfied keeps the run going for
         * exactly settle_slots after completion, first seen between slots
         * right after the observer's slot with the users first, at the
         * boundary before it otherwise */
        struct watch w2 = { .in_order = true };
        c.hook_ctx = &w2;
        c.read_budget = NULL;
        c.settle_slots = 777;
        c.fast = false; /* the observer sees every slot */
        if (!run_ok(&c, &r))
            return;
        CHECK(r.complete);
        CHECK(w2.complete_calls > 0);
        CHECK_MSG(r.slots == w2.first_complete + (users_first ? 1 : 0) + 777,
                  "users first %d: %llu slots, first complete after slot %llu", users_first,
                  (unsigned long long)r.slots, (unsigned long long)w2.first_complete);
        rifl_linksim_result_free(&r);
    }
}

/* given seeds are used as given: the derived ones given back reproduce the
 * run exactly */
static void t_seeds_given(void)
{
    rifl_linksim_config c = base(test_seed + 3, 2e-6, 1000000);
    rifl_linksim_result a, b;
    if (!run_ok(&c, &a))
        return;
    c.seeds_given = true;
    for (int i = 0; i < 2; i++) {
        c.channel_seed[i] = a.channel_seed[i];
        c.stream_seed[i] = a.stream_seed[i];
    }
    if (run_ok(&c, &b)) {
        same_stats(&a, &b);
        CHECK_EQ_U(b.channel_seed[0], a.channel_seed[0]);
        CHECK_EQ_U(b.stream_seed[1], a.stream_seed[1]);
        rifl_linksim_result_free(&b);
    }
    c.stream_seed[0] ^= 1;
    if (run_ok(&c, &b)) {
        CHECK(b.offered_bytes[0] != a.offered_bytes[0] || b.val[0].bytes_ok != a.val[0].bytes_ok ||
              b.slots != a.slots);
        rifl_linksim_result_free(&b);
    }
    rifl_linksim_result_free(&a);
}

/* Packet bytes are splitmix64's outputs, one word after another, from a
 * state derived from the stream seed and the packet number: the filler (in
 * blocks, vectorised where the CPU allows) gives exactly the words of the
 * plain sequential generator, at every length and buffer alignment, and
 * writes nothing past the packet. */
static void t_packet_fill(void)
{
    uint8_t want[600], got[600 + 80];
    const uint64_t seeds[3] = { 1, 0x0123456789abcdefULL, UINT64_MAX };
    for (unsigned si = 0; si < 3; si++)
        for (uint64_t seq = 0; seq < 40; seq += 13)
            for (size_t len = 0; len <= 600; len += len < 80 ? 1 : 37) {
                uint64_t x = seeds[si] ^ 0x5bd1e995u ^ (seq * 0xd1342543de82ef95ULL);
                x = rifl_splitmix64(&x);
                for (size_t i = 0; i < len; i += 8) {
                    uint64_t v = rifl_splitmix64(&x);
                    memcpy(want + i, &v, len - i < 8 ? len - i : 8);
                }
                for (size_t off = 0; off < 3; off++) {
                    memset(got, 0xA5, sizeof got);
                    rifl_packet_fill(seeds[si], seq, got + off, len);
                    CHECK(memcmp(got + off, want, len) == 0);
                    CHECK(got[off + len] == 0xA5 && (off == 0 || got[off - 1] == 0xA5));
                }
            }
}

static void t_histogram(void)
{
    rifl_hist h;
    REQUIRE(rifl_hist_init(&h) == RIFL_OK);
    for (uint64_t v = 1; v <= 1000; v++)
        rifl_hist_add(&h, v);
    rifl_hist_add(&h, 100000);
    CHECK_EQ_U(rifl_hist_quantile(&h, 0.5), 501);
    CHECK_EQ_U(rifl_hist_quantile(&h, 0.99), 991);
    CHECK_EQ_U(rifl_hist_quantile(&h, 1.0), 100000);
    CHECK_EQ_U(h.max, 100000);
    CHECK(fabs(rifl_hist_avg(&h) - (500500.0 + 100000.0) / 1001.0) < 1e-9);
    rifl_hist_free(&h);
}

/* Serial lanes: frames as bit streams that each receiver's aligner must
 * find, from random bit offsets, with bit errors on every wire bit and bit
 * slips at the receivers.  Everything offered arrives once, in order,
 * unaltered; the lanes come up; a slip costs an unlock and a relock. */
static uint64_t bad_count(const rifl_linksim_result *r)
{
    return r->val[0].lost + r->val[1].lost + r->val[0].duplicated + r->val[1].duplicated +
           r->val[0].reordered + r->val[1].reordered + r->val[0].corrupted + r->val[1].corrupted;
}

static void t_serial_lanes(void)
{
    struct {
        double ber, slip;
        unsigned frame_bits;
    } cases[] = {
        { 0, 0, 256 }, { 1e-6, 0, 256 }, { 0, 2e-4, 256 }, { 1e-5, 1e-4, 256 },
        { 1e-6, 1e-4, 64 }, { 1e-6, 3e-4, 1024 },
    };
    unsigned n = sizeof cases / sizeof cases[0];
    for (unsigned k = 0; k < n; k++) {
        /* bytes enough for 12 slips each way on average, so that a run
         * without any (the checks below) is as good as impossible */
        uint64_t bytes = 1000000;
        if (cases[k].slip > 0 &&
            12.0 / cases[k].slip * rifl_payload_bytes(cases[k].frame_bits) > (double)bytes)
            bytes = (uint64_t)(12.0 / cases[k].slip * rifl_payload_bytes(cases[k].frame_bits));
        rifl_linksim_config c = base(test_seed * 37 + k, cases[k].ber,
                                     test_long_run ? 20000000 : bytes);
        c.lane.frame_bits = cases[k].frame_bits;
        if (cases[k].frame_bits == 64)
        {
            c.lane.fid_bits = 10; /* 2^K covers the longer round trip in frames */
            c.max_len = 4096;    /* and packets fit the queue of small frames */
        }
        c.serial = true;
        c.up_log2 = 12;
        rifl_rng r;
        rifl_rng_seed(&r, test_seed * 41 + k);
        for (int i = 0; i < 2; i++) {
            c.bit_offset[i] = (unsigned)rifl_rng_below(&r, cases[k].frame_bits);
            c.slip_rate[i] = cases[k].slip;
        }
        rifl_linksim_result res;
        if (!run_ok(&c, &res))
            continue;
        CHECK_EQ_U(bad_count(&res), 0);
        CHECK_MSG(res.lossless && res.complete, "case %u", k);
        CHECK(res.startup_slots > 0);
        uint64_t slips = 0;
        for (int i = 0; i < 2; i++)
            slips += res.serial[i].slips_lost + res.serial[i].slips_repeated;
        /* first lock after a search of at most the whole cycle of candidates,
         * then 2^12 words of rx_up; a slip before both lanes are up starts
         * one lane's search and rx_up again, so with slips the bound is
         * that many searches longer */
        uint64_t once = 7 * (uint64_t)cases[k].frame_bits + 64 + (4096u * 64 / cases[k].frame_bits) +
                        3 * res.delay_frames;
        CHECK_MSG(res.startup_slots < once * (1 + slips), "case %u: up after %llu slots, %llu slips",
                  k, (unsigned long long)res.startup_slots, (unsigned long long)slips);
        if (cases[k].slip == 0)
            CHECK_MSG(res.startup_slots < once, "case %u: up after %llu slots", k,
                      (unsigned long long)res.startup_slots);
        for (int i = 0; i < 2; i++) {
            /* locked at the end, or unlocked by a slip not yet found again */
            CHECK(res.aligner[i].locks >= 1);
            CHECK(res.aligner[i].locks == res.aligner[i].unlocks + 1 ||
                  res.aligner[i].locks == res.aligner[i].unlocks);
            CHECK_EQ_U(res.lane[i].rx_align_lost, res.aligner[1 - i].unlocks);
        }
        if (cases[k].slip > 0) {
            CHECK(slips > 0);
            CHECK(res.aligner[0].unlocks + res.aligner[1].unlocks > 0);
            /* a repeated bit is found at the next candidate, a lost one only
             * after the whole search */
            const rifl_phy_serial_stats *ss = &res.serial[0];
            if (ss->recovered_lost && ss->recovered_repeated)
                CHECK(ss->recovery_frames_lost / ss->recovered_lost >
                      ss->recovery_frames_repeated / ss->recovered_repeated);
            CHECK(res.serial[0].recovered_lost + res.serial[0].recovered_repeated +
                  res.serial[1].recovered_lost + res.serial[1].recovered_repeated > 0);
        } else {
            CHECK_EQ_U(slips, 0);
        }
        if (cases[k].ber > 0 || cases[k].slip > 0)
            CHECK(res.lane[0].tx_replay_cycles + res.lane[1].tx_replay_cycles > 0);
        rifl_linksim_result_free(&res);
    }
    /* the same run twice is the same run */
    rifl_linksim_config c = base(test_seed * 43, 1e-6, 300000);
    c.serial = true;
    c.up_log2 = 12;
    c.bit_offset[0] = 77;
    c.bit_offset[1] = 201;
    c.slip_rate[0] = c.slip_rate[1] = 1e-5;
    rifl_linksim_result a, b;
    if (run_ok(&c, &a)) {
        if (run_ok(&c, &b)) {
            same_stats(&a, &b);
            CHECK(memcmp(&a.aligner, &b.aligner, sizeof a.aligner) == 0);
            rifl_linksim_result_free(&b);
        }
        rifl_linksim_result_free(&a);
    }
    /* offsets and slips without serial lanes are refused */
    c = base(1, 0, 1000);
    c.slip_rate[0] = 1e-3;
    refused(&c, "serial");
    c = base(1, 0, 1000);
    c.serial = true;
    c.slip_rate[1] = 2;
    refused(&c, "slip rate");
    /* long bit offsets lengthen the round trip: whole frames of them must
     * be in the pipeline, which then sizes replay buffer and tail; with
     * them there, a run that replays is lossless */
    /* (BER and bytes such that bit errors are all but certain: about a
     * hundred frames hit in a run) */
    c = base(test_seed * 47, 3e-6, 200000);
    c.serial = true;
    c.up_log2 = 12;
    c.bit_offset[0] = c.bit_offset[1] = 20000;
    c.lane.fid_bits = 9;
    unsigned extra = rifl_linksim_offset_frames(&c);
    CHECK_EQ_U(extra, 2 * (20000 / c.lane.frame_bits));
    refused(&c, "bit offsets");
    c.lane.pipeline_frames += extra;
    if (run_ok(&c, &a)) {
        CHECK(a.lossless);
        CHECK(a.lane[0].rx_frame_errors + a.lane[1].rx_frame_errors > 0);
        rifl_linksim_result_free(&a);
    }
    /* below one frame each way: the round trip's margin */
    c.bit_offset[0] = c.bit_offset[1] = c.lane.frame_bits - 1;
    CHECK_EQ_U(rifl_linksim_offset_frames(&c), 0);
}

/* Bonded links (rifl/bond.h): 2 to 16 lanes, spatial, temporal and mixed,
 * aligned or serial, with bit errors (and slips) on every lane: everything
 * offered arrives once, in order, unaltered; the per-lane results add up
 * to the link's. */
static void t_bonded_links(void)
{
    struct {
        unsigned lanes, group;
        double ber, slip;
        bool serial;
    } cases[] = {
        { 2, 2, 1e-7, 0, false }, { 4, 1, 1e-7, 0, false }, { 4, 2, 3e-7, 0, false },
        { 16, 4, 5e-8, 0, false }, { 4, 4, 1e-7, 1e-4, true }, { 4, 1, 1e-7, 1e-4, true },
        { 8, 2, 0, 5e-5, true },
    };
    unsigned n = sizeof cases / sizeof cases[0];
    for (unsigned k = 0; k < n; k++) {
        /* (serial cases with slips: bytes enough for dozens of slips each
         * way, whatever the seed) */
        rifl_linksim_config c = base(test_seed * 53 + k, cases[k].ber,
                                     test_long_run ? 20000000 : cases[k].slip > 0 ? 10000000 : 1000000);
        c.lanes = cases[k].lanes;
        c.group_lanes = cases[k].group;
        c.lane.link.lane_rate_gbps = 112.0 / cases[k].lanes;
        c.lane.fid_bits = 7;
        if (cases[k].serial) {
            c.serial = true;
            c.up_log2 = 12;
            rifl_rng r;
            rifl_rng_seed(&r, test_seed * 59 + k);
            for (int d = 0; d < 2; d++) {
                c.slip_rate[d] = cases[k].slip;
                for (unsigned i = 0; i < cases[k].lanes; i++)
                    c.lane_bit_offset[d][i] = (unsigned)rifl_rng_below(&r, 256);
            }
        }
        rifl_linksim_result res;
        if (!run_ok(&c, &res))
            continue;
        CHECK_MSG(bad_count(&res) == 0 && res.lossless && res.complete, "case %u", k);
        CHECK_EQ_U(res.nlanes, cases[k].lanes);
        uint64_t data = 0, words_rx = res.bond[1].rx_words + res.bond[0].rx_words;
        for (unsigned i = 0; i < res.nlanes; i++)
            data += res.lanes[i].lane[0].tx_frames[RIFL_KIND_DATA];
        CHECK_EQ_U(data, res.lane[0].tx_frames[RIFL_KIND_DATA]);
        CHECK_EQ_U(res.bond[0].tx_words + res.bond[1].tx_words, words_rx);
        CHECK_EQ_U(res.bond[1].rx_packets, res.val[0].packets_ok);
        if (cases[k].serial)
            CHECK(res.startup_slots > 0);
        if (cases[k].slip > 0)
            for (int d = 0; d < 2; d++)
                CHECK_MSG(res.serial[d].slips_lost + res.serial[d].slips_repeated > 0, "case %u", k);
        /* temporal bonding spreads words over every lane */
        if (cases[k].group == 1)
            for (unsigned i = 0; i < res.nlanes; i++)
                CHECK(res.lanes[i].lane[0].tx_frames[RIFL_KIND_DATA] > 0);
        rifl_linksim_result_free(&res);
    }
    /* skew: whole frames on aligned lanes, bits on serial ones; the round
     * trip covers the slowest lane */
    for (int serial = 0; serial < 2; serial++) {
        rifl_linksim_config c = base(test_seed * 61 + (uint64_t)serial, 2e-7, 1000000);
        c.lanes = 4;
        c.group_lanes = serial ? 4 : 2;
        c.lane.link.lane_rate_gbps = 28;
        c.lane.fid_bits = 8;
        static const unsigned frames_skew[4] = { 0, 2560, 7680, 256 };
        static const unsigned bits_skew[4] = { 3, 1000, 9001, 77 };
        unsigned most = 0;
        for (int i = 0; i < 4; i++) {
            c.lane_skew_bits[i] = serial ? bits_skew[i] : frames_skew[i];
            most = c.lane_skew_bits[i] > most ? c.lane_skew_bits[i] : most;
        }
        c.lane.pipeline_frames += 2 * ((most + 255) / 256);
        if (serial) {
            c.serial = true;
            c.up_log2 = 12;
        }
        rifl_linksim_result res;
        if (!run_ok(&c, &res))
            continue;
        CHECK_MSG(bad_count(&res) == 0 && res.lossless && res.complete, "skew, serial %d", serial);
        rifl_linksim_result_free(&res);
        c.lane.pipeline_frames = 2;
        refused(&c, "round trip must include the skew");
        c.lane.allow_unsafe_fid = true; /* only the skew rule left to refuse it */
        c.lane.rx_buffer_frames = 90;
        c.lane_skew_bits[1] = 40 * 256;
        refused(&c, "too large");
        c.lane.allow_unsafe_fid = false;
        c.lane.rx_buffer_frames = 0;
        if (!serial) {
            c.lane_skew_bits[1] = 1000;
            refused(&c, "whole number");
        }
    }
    {
        /* a line's bit offset skews its lane as much as a longer line */
        rifl_linksim_config c = base(1, 0, 1000);
        c.lanes = 4;
        c.serial = true;
        c.up_log2 = 12;
        c.lane.fid_bits = 8;
        c.lane.allow_unsafe_fid = true;
        c.lane.rx_buffer_frames = 90;
        c.lane_bit_offset[1][3] = 35 * 256;
        refused(&c, "skew and bit offsets");
        c.lane_bit_offset[1][3] = (1u << 24) + 1;
        refused(&c, "bit offset 16777217 of lane 3");
        c.lane_bit_offset[1][3] = 100;
        c.serial = false;
        refused(&c, "need serial lanes");
    }
    rifl_linksim_config c = base(1, 0, 1000);
    c.lane_skew_bits[1] = 256;
    refused(&c, "skew between lanes needs a bonded link");
    c = base(1, 0, 1000);
    c.lanes = 3;
    refused(&c, "2, 4, 8 or 16 lanes");
    c.lanes = 4;
    c.group_lanes = 8;
    refused(&c, "groups of 8 lanes");
    c.group_lanes = 0;
    c.load = 0.5;
    refused(&c, "saturation");
    c = base(1, 0, 1000);
    c.group_lanes = 2;
    refused(&c, "bonded link");
}

/* Bonded links on one clock with aligned lanes go by lane pairs, stepped by
 * reference, and through steady stretches by the lanes' accelerator; the
 * general driver (fast off) models every line itself and steps every slot.
 * Both take the same course, lane by lane and counter by counter:
 * groupings, skew, flow control by a slow reader, wire bytes, wide frames,
 * packet sizes, high and low BER. */
static void t_bonded_pairs_equal_general(void)
{
    struct {
        unsigned lanes, group, F;
        double ber, rx_ready;
        bool skew, wire;
    } cases[] = {
        { 2, 2, 256, 8e-6, 1.0, false, false },  { 4, 1, 256, 5e-6, 1.0, false, false },
        { 4, 2, 256, 3e-6, 1.0, true, false },   { 8, 8, 512, 2e-6, 0.6, false, false },
        { 16, 4, 256, 1e-6, 1.0, false, false }, { 4, 4, 256, 4e-6, 1.0, false, true },
        { 4, 2, 2048, 1e-6, 1.0, false, false }, { 4, 4, 256, 1e-7, 1.0, false, false },
        { 4, 1, 256, 2e-7, 1.0, false, false },  { 8, 2, 512, 1e-7, 1.0, false, false },
        { 2, 1, 1024, 3e-8, 1.0, false, false },
    };
    uint64_t fast_total = 0;
    for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint64_t bytes = cases[k].ber <= 2e-7 ? 20000000 : 400000;
        rifl_linksim_config c = base(test_seed * 67 + k, cases[k].ber,
                                     test_long_run ? 10 * bytes : bytes);
        c.lanes = cases[k].lanes;
        c.group_lanes = cases[k].group;
        c.lane.frame_bits = cases[k].F;
        c.lane.link.lane_rate_gbps = 112.0 / cases[k].lanes;
        c.lane.fid_bits = 7;
        c.rx_ready = cases[k].rx_ready;
        c.encode_all = cases[k].wire;
        c.max_len = 3000;
        if (cases[k].skew) {
            static const unsigned skew[4] = { 0, 512, 256, 768 };
            for (int i = 0; i < 4; i++)
                c.lane_skew_bits[i] = skew[i];
            c.lane.pipeline_frames += 6;
        }
        rifl_linksim_result a, b;
        if (!run_plain_and_fast(&c, &a, &b))
            continue;
        printf("  %u lanes, groups of %u, F %u, ber %.0e: %llu slots, %llu by reference, "
               "%llu in %llu stretches, %llu frames hit\n", cases[k].lanes, cases[k].group,
               cases[k].F, cases[k].ber, (unsigned long long)b.slots,
               (unsigned long long)b.ref_slots, (unsigned long long)b.fast_slots,
               (unsigned long long)b.skips,
               (unsigned long long)(b.ch[0].frames_hit + b.ch[1].frames_hit));
        fast_total += b.fast_slots;
        /* stretches need one delay on every lane, and a reader that
         * always reads */
        if (cases[k].skew || cases[k].rx_ready < 1 || cases[k].wire)
            CHECK_EQ_U(b.fast_slots, 0);
        if (cases[k].ber <= 2e-7)
            CHECK(b.fast_slots > b.slots / 2);
        /* the general driver's lines hold a frame for the lane's skew and
         * the driver for the rest of the delay; a pair's cable holds it for
         * all of it: frames in flight at the end count as delivered in the
         * first */
        CHECK_EQ_U(a.nlanes, b.nlanes);
        for (int e = 0; e < 2; e++) {
            uint64_t held = 0;
            for (unsigned i = 0; i < b.nlanes; i++) {
                uint64_t skew = c.lane_skew_bits[i] / c.lane.frame_bits;
                CHECK_EQ_U(a.lanes[i].ch[e].delivered + skew, a.lanes[i].ch[e].frames);
                CHECK_EQ_U(b.lanes[i].ch[e].delivered + skew + b.delay_frames,
                           b.lanes[i].ch[e].frames);
                held += b.delay_frames;
                a.lanes[i].ch[e].delivered = b.lanes[i].ch[e].delivered;
            }
            CHECK_EQ_U(b.ch[e].delivered + held, a.ch[e].delivered);
            a.ch[e].delivered = b.ch[e].delivered;
        }
        same_stats(&a, &b);
        for (unsigned i = 0; i < a.nlanes; i++)
            CHECK_MSG(memcmp(&a.lanes[i], &b.lanes[i], sizeof a.lanes[i]) == 0, "case %u lane %u",
                      k, i);
        CHECK(memcmp(a.bond, b.bond, sizeof a.bond) == 0);
        CHECK(a.efficiency == b.efficiency);
        CHECK(a.lossless && b.lossless && a.complete && b.complete);
        CHECK(a.ch[0].frames_hit + a.ch[1].frames_hit > 3);
        CHECK_EQ_U(a.ref_slots + a.fast_slots, 0);
        if (!cases[k].wire)
            CHECK(b.ref_slots + b.fast_slots > b.slots / 2);
        rifl_linksim_result_free(&a);
        rifl_linksim_result_free(&b);
    }
    CHECK(fast_total > 0);
}

/* Clock offsets (rifl-multilane §3): the faster end asks for compensation
 * slots at the rate r = ppm / (10^6 + ppm) of its slots, every lane sends
 * them, nothing is lost, no request ever finds a lane behind; the slower
 * end asks for none; an offset beyond the tolerance is refused. */
static void t_clock_offsets(void)
{
    struct {
        unsigned lanes;
        double ppm, ber;
        bool serial;
    } cases[] = {
        { 1, 200, 0, false }, { 4, 200, 1e-7, false }, { 4, -150, 1e-7, false },
        { 2, 1000, 0, true }, { 4, 200, 1e-7, true },
    };
    for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rifl_linksim_config c = base(test_seed * 67 + k, cases[k].ber,
                                     test_long_run ? 50000000 : 4000000);
        c.lanes = cases[k].lanes;
        c.lane.link.lane_rate_gbps = 112.0 / cases[k].lanes;
        c.lane.fid_bits = cases[k].lanes == 1 ? 8 : 7;
        c.ppm = cases[k].ppm;
        c.ppm_tolerance = 1000;
        if (cases[k].serial) {
            c.serial = true;
            c.up_log2 = 12;
        }
        rifl_linksim_result res;
        if (!run_ok(&c, &res))
            continue;
        CHECK_MSG(bad_count(&res) == 0 && res.lossless && res.complete, "case %u", k);
        int fast = c.ppm > 0 ? 0 : 1;
        double p = fabs(c.ppm) * 1e-6;
        double expect = (double)res.slots * p / (1.0 + p);
        CHECK_MSG(fabs((double)res.comp_requests[fast] - expect) <= 0.05 * expect + 3,
                  "case %u: %llu requests in %llu slots, %.1f expected", k,
                  (unsigned long long)res.comp_requests[fast], (unsigned long long)res.slots,
                  expect);
        CHECK_MSG(res.comp_requests[1 - fast] <= 3, "case %u: the slower end asked %llu", k,
                  (unsigned long long)res.comp_requests[1 - fast]);
        CHECK_EQ_U(res.lane[0].tx_comp_overdue + res.lane[1].tx_comp_overdue, 0);
        /* every request is sent on every lane (the last ones may be owed) */
        CHECK(res.lane[fast].tx_clock_comp + 2 * res.nlanes >=
              res.comp_requests[fast] * res.nlanes);
        rifl_linksim_result_free(&res);
    }
    rifl_linksim_config c = base(1, 0, 1000);
    c.ppm = 250;
    refused(&c, "beyond the tolerance of 200 ppm");
    c.ppm_tolerance = 300;
    c.load = 0.5;
    refused(&c, "saturation");
}

/* Lane faults (rifl-multilane §5): a dead lane is reported down at both
 * ends and its group stops, without a wrong byte; crossed lines (no lane
 * tags) scramble the bonded stream, which the validator sees. */
static void t_lane_faults(void)
{
    rifl_linksim_config c = base(test_seed * 71, 0, 1000000000);
    c.lanes = 4;
    c.lane.link.lane_rate_gbps = 28;
    c.lane.fid_bits = 7;
    c.serial = true;
    c.up_log2 = 12;
    for (int d = 0; d < 2; d++)
        for (unsigned i = 0; i < 4; i++)
            c.lane_bit_offset[d][i] = 10 + i; /* lanes come up together */
    c.dead = true;
    c.dead_lane = 2;
    c.dead_at = 8000;
    c.max_slots = 20000;
    rifl_linksim_result r;
    if (run_ok(&c, &r)) {
        CHECK(r.lanes[2].lane_down[0] >= 1 && r.lanes[2].lane_down[1] >= 1);
        for (unsigned i = 0; i < 4; i++)
            if (i != 2)
                CHECK_EQ_U(r.lanes[i].lane_down[0] + r.lanes[i].lane_down[1], 0);
        CHECK(r.val[0].packets_ok > 0 && !r.complete);
        CHECK_EQ_U(bad_count(&r), 0);
        /* nothing moved once the lane was dead: the group stays paused */
        CHECK(r.lane[0].tx_state_slots[RIFL_TX_SEND_PAUSE] > 4 * 5000);
        rifl_linksim_result_free(&r);
    }
    c = base(test_seed * 73, 0, 1000000);
    c.lanes = 4;
    c.lane.link.lane_rate_gbps = 28;
    c.lane.fid_bits = 6;
    c.swapped = true;
    c.swap_lanes[0] = 1;
    c.swap_lanes[1] = 2;
    c.max_slots = 20000;
    if (run_ok(&c, &r)) {
        CHECK(r.val[0].corrupted + r.val[1].corrupted > 0 && !r.lossless);
        rifl_linksim_result_free(&r);
    }
    /* with lane tags the crossed lanes are found and carry no user data */
    c.serial = true;
    c.up_log2 = 12;
    c.lane_tags = true;
    c.lane.fid_bits = 7;
    if (run_ok(&c, &r)) {
        CHECK_EQ_U(r.val[0].packets_ok + r.val[1].packets_ok, 0);
        CHECK_EQ_U(bad_count(&r), 0);
        for (unsigned i = 0; i < 4; i++) {
            uint64_t swaps = r.lanes[i].lane[0].rx_lane_swap + r.lanes[i].lane[1].rx_lane_swap;
            CHECK(i == 1 || i == 2 ? swaps >= 2 : swaps == 0);
        }
        rifl_linksim_result_free(&r);
    }
    /* and lanes in place come up with their tags and carry everything */
    c.swapped = false;
    c.max_slots = 0;
    c.ber[0] = c.ber[1] = 1e-7;
    if (run_ok(&c, &r)) {
        CHECK(r.lossless && r.complete && r.val[0].packets_ok > 0);
        CHECK_EQ_U(r.lane[0].rx_lane_swap + r.lane[1].rx_lane_swap, 0);
        rifl_linksim_result_free(&r);
    }
    c.swapped = true;
    c.max_slots = 0;
    refused(&c, "crossed lanes");
    c.serial = false;
    c.max_slots = 100;
    refused(&c, "lane tags need serial lanes");
    c.serial = true;
    c.lane_tags = false;
    c.max_slots = 100;
    c.swap_lanes[1] = 1;
    refused(&c, "cannot be swapped");
    c = base(1, 0, 1000);
    c.lanes = 4;
    c.dead = true;
    c.dead_lane = 1;
    c.max_slots = 100;
    refused(&c, "needs serial lanes");
}

/* Seeded random serial links mixing everything at once: lanes (1 to 8, any
 * grouping), BER, clock offset, skew in bits, bit slips, lane tags; nothing
 * is lost, duplicated, reordered or corrupted. */
static void t_serial_mixed(void)
{
    rifl_rng r;
    rifl_rng_seed(&r, test_seed * 79);
    unsigned rounds = test_long_run ? 40 : 6;
    for (unsigned k = 0; k < rounds; k++) {
        rifl_linksim_config c = base(test_seed * 83 + k, 0, test_long_run ? 20000000 : 1000000);
        unsigned L = 1u << rifl_rng_below(&r, 4);
        c.lanes = L;
        c.group_lanes = 1u << rifl_rng_below(&r, (uint64_t)__builtin_ctz(L) + 1);
        c.lane.link.lane_rate_gbps = 112.0 / L;
        c.serial = true;
        c.up_log2 = 12;
        c.lane_tags = rifl_rng_below(&r, 2);
        double ber = 1e-8 * (double)(1 + rifl_rng_below(&r, 30)) / c.group_lanes;
        c.ber[0] = c.ber[1] = ber;
        c.ppm = (double)rifl_rng_below(&r, 401) - 200.0;
        unsigned most = 0;
        for (unsigned i = 0; i < L; i++) {
            c.lane_skew_bits[i] = L > 1 ? (unsigned)rifl_rng_below(&r, 3000) : 0;
            most = c.lane_skew_bits[i] > most ? c.lane_skew_bits[i] : most;
            for (int d = 0; d < 2; d++)
                c.lane_bit_offset[d][i] = (unsigned)rifl_rng_below(&r, 256);
        }
        c.lane.pipeline_frames += 2 * ((most + 255) / 256);
        c.slip_rate[0] = c.slip_rate[1] = 2e-5 * (double)rifl_rng_below(&r, 3);
        c.lane.fid_bits = rifl_lane_min_fid_bits(&c.lane.link, c.lane.frame_bits,
                                                 c.lane.pipeline_frames + RIFL_LANE_RX_HOLD);
        rifl_linksim_result res;
        if (!run_ok(&c, &res))
            continue;
        CHECK_MSG(bad_count(&res) == 0 && res.lossless && res.complete,
                  "round %u: %u lanes in groups of %u, BER %g, %g ppm, slips %g", k, L,
                  c.group_lanes, ber, c.ppm, c.slip_rate[0]);
        CHECK_EQ_U(res.lane[0].tx_comp_overdue + res.lane[1].tx_comp_overdue, 0);
        rifl_linksim_result_free(&res);
    }
}


/* ---- stepping by reference, against stepping by content ----------------- */

/* Three copies of one link: `plain` stepped by content slot by slot, `ref`
 * by reference a slot at a time, `quiet` by reference with the lanes' quiet
 * runs; both by-reference copies end and begin their stretches at random
 * slots (frames built by content for errors are then among the frames
 * rebuilt).  The same user calls go to all three.  Every lane counter, the
 * frame IDs, the flags and the replay buffers must agree throughout.  Some quiet runs deliver
 * frames: then the other copies read everything after every slot, the quiet
 * copy after the run, the run's list of delivery slots must be where the
 * plain copy delivered, and the bytes read must be the same.  Some send
 * frames from the transmit queues (none, some or all of those queued): the
 * run's list of send slots and frame IDs must be where the plain copy sent
 * them. */
struct pair_trio {
    rifl_pair *p[3];
    uint64_t read_hash[3][2];
};

/* Three copies of the link pc describes; false (with a message) when one
 * cannot be made. */
static bool trio_make(struct pair_trio *t, const rifl_pair_config *pc)
{
    char msg[256] = "";
    for (int k = 0; k < 3; k++)
        CHECK_MSG(rifl_pair_create(pc, &t->p[k], msg, sizeof msg) == RIFL_OK, "%s", msg);
    return t->p[0] && t->p[1] && t->p[2];
}

/* Copy k's user reads everything lane i has, into its hash. */
static void trio_drain(struct pair_trio *t, int k, int i)
{
    uint8_t buf[9000];
    size_t got;
    int eop;
    while (rifl_lane_read(t->p[k]->lane[i], buf, sizeof buf, &got, &eop) == RIFL_OK &&
           (got || eop)) {
        uint64_t h = t->read_hash[k][i];
        for (size_t b = 0; b < got; b++)
            h = (h ^ buf[b]) * 0x100000001B3ULL;
        if (eop) /* packet ends, not how the reads cut the bytes */
            h = (h ^ 0x1FF) * 0x100000001B3ULL;
        t->read_hash[k][i] = h;
    }
}

static bool lanes_agree(struct pair_trio *t, uint64_t slot)
{
    for (int k = 1; k < 3; k++)
        for (int i = 0; i < 2; i++) {
            const rifl_lane *a = t->p[0]->lane[i], *b = t->p[k]->lane[i];
            rifl_lane_flags fa = rifl_lane_get_flags(a), fb = rifl_lane_get_flags(b);
            bool same = memcmp(rifl_lane_get_stats(a), rifl_lane_get_stats(b),
                               sizeof(rifl_lane_stats)) == 0 &&
                        memcmp(&fa, &fb, sizeof fa) == 0 &&
                        rifl_lane_next_id(a) == rifl_lane_next_id(b) &&
                        rifl_lane_expected_id(a) == rifl_lane_expected_id(b) &&
                        rifl_lane_state(a) == rifl_lane_state(b);
            same = same && t->read_hash[k][i] == t->read_hash[0][i];
            /* the replay buffers too, record by record */
            unsigned nfid = rifl_lane_replay_frames(a);
            size_t rb = rifl_lane_get_config(a)->frame_bits / 8 - 1;
            for (unsigned id = 0; same && id < nfid; id++)
                same = memcmp(rifl_lane_replay_record(a, id), rifl_lane_replay_record(b, id),
                              rb) == 0;
            CHECK_MSG(same, "copy %d lane %d differs from plain stepping at slot %llu", k, i,
                      (unsigned long long)slot);
            if (!same)
                return false;
        }
    return true;
}

/* Quiet runs against stepping at BERs ber0/ber1 (channel seeds seed, seed
 * + 1): at least min_stops runs must end at their streak stop (long streaks
 * are rare on a lossy link). */
static void quiet_runs_case(double ber0, double ber1, uint64_t seed, uint64_t min_stops)
{
    rifl_pair_config pc = { .lane = rifl_lane_default_config };
    pc.ber[0] = ber0;
    pc.ber[1] = ber1;
    pc.seed[0] = seed;
    pc.seed[1] = seed + 1;
    struct pair_trio t = { { NULL, NULL, NULL }, { { 0 } } };
    uint64_t at[2][64], sent_at[2][64], delivered_in_runs = 0, sent_in_runs = 0;
    uint16_t sent_id[2][64];
    if (!trio_make(&t, &pc))
        goto out;
    rifl_rng rng;
    rifl_rng_seed(&rng, 99);
    uint8_t pkt[3000];
    for (size_t i = 0; i < sizeof pkt; i++)
        pkt[i] = (uint8_t)(i * 7 + 1);
    uint64_t quiet_slots = 0, stretches = 0, rebuilt_after_hit = 0, stops_hit = 0;
    uint64_t ended_hits_in_flight = 0;
    unsigned pstreak[2] = { 0, 0 }; /* the plain copy's streaks of new frames */
    const uint64_t N = 1000000;
    while (t.p[0]->slot < N) {
        uint64_t now = t.p[0]->slot;
        /* the users: sometimes a packet each way, reads now and then */
        size_t len = 1 + (size_t)(rifl_rng_next(&rng) % sizeof pkt);
        bool send = rifl_rng_next(&rng) % 16 == 0, read = rifl_rng_next(&rng) % 4 == 0;
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 2; i++) {
                if (send)
                    rifl_lane_send(t.p[k]->lane[i], pkt, len);
                if (read)
                    trio_drain(&t, k, i);
            }
        /* by-reference copies: stretches begin and end at random */
        uint64_t r = rifl_rng_next(&rng);
        for (int k = 1; k < 3; k++) {
            rifl_pair *p = t.p[k];
            if (p->by_ref && r % 512 == 0) {
                bool behind = false;
                for (unsigned e = 0; e < p->delay_frames; e++)
                    for (int i = 0; i < 2; i++)
                        behind |= p->ref[i][e].data == RIFL_LANE_REF_NONE ||
                                  p->ref[i][e].id == RIFL_LANE_REF_NO_ID;
                rebuilt_after_hit += behind && k == 1;
                ended_hits_in_flight += behind && k == 2;
                CHECK(rifl_pair_ref_end(p) == RIFL_OK);
            } else if (!p->by_ref && rifl_pair_ref_room(p) && r % 3 == 0) {
                CHECK(rifl_pair_ref_begin(p) == RIFL_OK);
                stretches += k == 1;
            }
        }
        /* one slot, or a quiet run and as many slots for the others */
        uint64_t n = 0;
        bool with_del = rifl_rng_next(&rng) % 2 == 0, with_io = false;
        rifl_lane_quiet_io io = { .at = { at[0], at[1] }, .cap = with_del ? 64 : 0,
                                  .sent_at = { sent_at[0], sent_at[1] },
                                  .sent_id = { sent_id[0], sent_id[1] }, .sent_cap = 64 };
        if (t.p[2]->by_ref && t.p[1]->by_ref && !send && !read) {
            if (with_del)
                for (int k = 0; k < 3; k++)
                    for (int i = 0; i < 2; i++)
                        trio_drain(&t, k, i);
            /* sends from the queues: none, some, or as many as queued */
            for (int i = 0; i < 2; i++) {
                unsigned queued = rifl_lane_tx_backlog(t.p[2]->lane[i]);
                uint64_t r3 = rifl_rng_next(&rng) % 3;
                io.send_max[i] = r3 == 0 ? 0 : r3 == 1 ? queued : (unsigned)(r3 % (queued + 1));
            }
            /* streaks from the plain copy; a stop now and then */
            io.streak[0] = pstreak[0];
            io.streak[1] = pstreak[1];
            io.streak_stop = rifl_rng_next(&rng) % 2 ? 0 : 1 + (unsigned)(rifl_rng_next(&rng) % 80);
            with_io = with_del || io.send_max[0] || io.send_max[1];
            n = rifl_pair_ref_quiet(t.p[2], 1 + rifl_rng_next(&rng) % 300, with_io ? &io : NULL);
            if (!with_del)
                CHECK(io.n[0] == 0 && io.n[1] == 0);
        }
        quiet_slots += n;
        unsigned seen[2] = { 0, 0 }, seen_sent[2] = { 0, 0 };
        for (uint64_t j = 0; j < (n ? n : 1); j++) {
            uint64_t d0[2], s0[2], f0[2], h0[2];
            for (int i = 0; i < 2; i++) {
                const rifl_lane_stats *st = rifl_lane_get_stats(t.p[0]->lane[i]);
                d0[i] = st->rx_delivered[RIFL_KIND_DATA];
                s0[i] = st->tx_frames[RIFL_KIND_DATA];
                f0[i] = st->tx_frames[RIFL_KIND_FILLER];
                h0[i] = rifl_phy_get_stats(t.p[0]->phy[i])->frames_hit;
            }
            if (n && with_io && io.streak_stop && pstreak[0] >= io.streak_stop &&
                pstreak[1] >= io.streak_stop)
                CHECK_MSG(false, "quiet run went on past its streak stop at slot %llu",
                          (unsigned long long)(now + j));
            rifl_pair_step(t.p[0], NULL);
            for (int i = 0; i < 2; i++) {
                const rifl_lane_stats *st = rifl_lane_get_stats(t.p[0]->lane[i]);
                bool fresh = st->tx_frames[RIFL_KIND_DATA] != s0[i] ||
                             st->tx_frames[RIFL_KIND_FILLER] != f0[i];
                /* (a frame hit on its way does not carry the streak) */
                bool hit = rifl_phy_get_stats(t.p[0]->phy[i])->frames_hit != h0[i];
                pstreak[i] = fresh && !hit ? pstreak[i] + 1 : 0;
            }
            if (t.p[1]->by_ref)
                rifl_pair_ref_step(t.p[1]);
            else
                rifl_pair_step(t.p[1], NULL);
            for (int i = 0; n && i < 2; i++) {
                const rifl_lane *l0 = t.p[0]->lane[i];
                if (rifl_lane_get_stats(l0)->tx_frames[RIFL_KIND_DATA] != s0[i]) {
                    unsigned nfid = 1u << rifl_lane_get_config(l0)->fid_bits;
                    unsigned id = (rifl_lane_next_id(l0) + nfid - 1) % nfid;
                    CHECK_MSG(seen_sent[i] < io.sent[i] && io.sent_at[i][seen_sent[i]] == now + j &&
                                  io.sent_id[i][seen_sent[i]] == id,
                              "lane %d sent frame %u at slot %llu, not as the quiet run listed", i,
                              id, (unsigned long long)(now + j));
                    seen_sent[i]++;
                }
            }
            for (int i = 0; n && with_del && i < 2; i++) {
                if (rifl_lane_get_stats(t.p[0]->lane[i])->rx_delivered[RIFL_KIND_DATA] != d0[i]) {
                    CHECK_MSG(seen[i] < io.n[i] && io.at[i][seen[i]] == now + j,
                              "lane %d delivered at slot %llu, not as the quiet run listed", i,
                              (unsigned long long)(now + j));
                    seen[i]++;
                }
                trio_drain(&t, 0, i);
                trio_drain(&t, 1, i);
            }
        }
        if (n && with_io && io.streak_stop && pstreak[0] >= io.streak_stop &&
            pstreak[1] >= io.streak_stop)
            stops_hit++;
        for (int i = 0; n && i < 2; i++) {
            /* (without io the run keeps no streaks) */
            if (with_io)
                CHECK_EQ_U(io.streak[i], pstreak[i]);
            CHECK_EQ_U(seen_sent[i], io.sent[i]);
            CHECK(io.sent[i] <= io.send_max[i]);
            sent_in_runs += io.sent[i];
        }
        for (int i = 0; n && with_del && i < 2; i++) {
            CHECK_EQ_U(seen[i], io.n[i]);
            delivered_in_runs += io.n[i];
            trio_drain(&t, 2, i);
        }
        if (!n) {
            if (t.p[2]->by_ref)
                rifl_pair_ref_step(t.p[2]);
            else
                rifl_pair_step(t.p[2], NULL);
        }
        if ((n || now % 97 == 0) && !lanes_agree(&t, now))
            goto out;
    }
    for (int k = 1; k < 3; k++)
        if (t.p[k]->by_ref)
            CHECK(rifl_pair_ref_end(t.p[k]) == RIFL_OK);
    lanes_agree(&t, t.p[0]->slot);
    for (int k = 1; k < 3; k++)
        for (int i = 0; i < 2; i++)
            CHECK(rifl_phy_get_stats(t.p[0]->phy[i])->frames_hit ==
                  rifl_phy_get_stats(t.p[k]->phy[i])->frames_hit);
    printf("  %llu slots, %llu in quiet runs, %llu stretches, %llu ended with frames built "
           "for errors in flight, %llu frames hit, %llu frames delivered and %llu sent in quiet "
           "runs, %llu runs ended at their streak stop\n",
           (unsigned long long)N, (unsigned long long)quiet_slots, (unsigned long long)stretches,
           (unsigned long long)rebuilt_after_hit,
           (unsigned long long)rifl_phy_get_stats(t.p[0]->phy[0])->frames_hit,
           (unsigned long long)delivered_in_runs, (unsigned long long)sent_in_runs,
           (unsigned long long)stops_hit);
    /* frame hits the quiet runs carried, some in flight where a stretch
     * ended */
    uint64_t qh = t.p[2]->quiet_hits[0] + t.p[2]->quiet_hits[1];
    printf("  %llu frame hits carried through quiet runs, %llu stretches ended with damaged "
           "frames in flight\n", (unsigned long long)qh, (unsigned long long)ended_hits_in_flight);
    CHECK(qh > 100);
    CHECK(ended_hits_in_flight > 10);
    CHECK_EQ_U(t.p[2]->hit_faults, 0);
    CHECK(quiet_slots > N / 4);
    CHECK(delivered_in_runs > 1000);
    CHECK(sent_in_runs > 1000);
    CHECK(stops_hit >= min_stops);
    CHECK(rebuilt_after_hit > 10);
    CHECK(rifl_lane_get_stats(t.p[0]->lane[0])->rx_delivered[RIFL_KIND_DATA] > 1000);
out:
    for (int k = 0; k < 3; k++)
        rifl_pair_free(t.p[k]);
}

static void t_quiet_runs_equal_steps(void) { quiet_runs_case(4e-6, 2e-6, 11, 101); }

/* Near the Fig 9 sweep's worst point: the lanes replay most of the time,
 * cycle after cycle. */
static void t_quiet_runs_equal_steps_lossy(void) { quiet_runs_case(2e-5, 1e-5, 21, 5); }

/* rifl_lane_stretch.keep_source: a queue left by a stretch is built as it
 * is sent, frame for frame what building it at once gives, and a frame its
 * source fails to give goes as a filler, counted. */
struct frame_src {
    unsigned pbytes;
    uint64_t fail_at;   /* the data frame the source fails on */
    uint8_t bytes[RIFL_FRAME_MAX_BYTES];
};

static int frame_src_data(void *ctx, uint64_t x, const uint8_t **pkt, size_t *len, size_t *index)
{
    struct frame_src *f = ctx;
    if (x == f->fail_at)
        return -1;
    for (unsigned i = 0; i < f->pbytes; i++)
        f->bytes[i] = (uint8_t)(x * 37 + i);
    *pkt = f->bytes;
    *len = f->pbytes;
    *index = 0;
    return 0;
}

static void t_keep_source(void)
{
    enum { QUEUED = 6 };
    rifl_pair_config pc = { .lane = rifl_lane_default_config };
    rifl_pair *p[3] = { NULL, NULL, NULL };
    char msg[256] = "";
    uint8_t got[3][QUEUED * RIFL_FRAME_MAX_BYTES];
    size_t ngot[3] = { 0, 0, 0 };
    for (int k = 0; k < 3; k++) {
        CHECK_MSG(rifl_pair_create(&pc, &p[k], msg, sizeof msg) == RIFL_OK, "%s", msg);
        if (!p[k])
            goto out;
    }
    const unsigned D = p[0]->delay_frames, nfid = 1u << pc.lane.fid_bits;
    int64_t *log = malloc(nfid * sizeof *log);
    if (!log)
        goto out;
    for (unsigned i = 0; i < nfid; i++)
        log[i] = -1;
    for (int k = 0; k < 3; k++) {
        /* start-up with nothing to send, then a stretch of fillers after
         * which lane A's queue holds QUEUED data frames: built at once
         * (k = 0), as sent (k = 1), as sent with frame 2 failing (k = 2) */
        while (p[k]->slot < 100000 && !rifl_lane_steady(p[k]->lane[0], p[k]->lane[1], D))
            rifl_pair_step(p[k], NULL);
        CHECK(rifl_lane_steady(p[k]->lane[0], p[k]->lane[1], D));
        struct frame_src src = { rifl_payload_bytes(pc.lane.frame_bits), k == 2 ? 2 : UINT64_MAX,
                                 { 0 } };
        uint64_t m = nfid + D;
        rifl_lane_stretch st[2];
        for (int i = 0; i < 2; i++)
            st[i] = (rifl_lane_stretch){ .slots = m, .fill_sent = m, .fill_recv = m,
                                         .sent_by_id = log, .data = frame_src_data, .ctx = &src,
                                         .keep_source = k > 0 };
        st[0].queue_end = QUEUED;
        CHECK(rifl_pair_advance(p[k], st) == RIFL_OK);
        CHECK_EQ_U(rifl_lane_tx_backlog(p[k]->lane[0]), QUEUED);
        for (unsigned n = 0; n < 2 * D + QUEUED + 16; n++) {
            rifl_pair_step(p[k], NULL);
            size_t len;
            int eop;
            while (rifl_lane_read(p[k]->lane[1], got[k] + ngot[k], sizeof got[k] - ngot[k], &len,
                                  &eop) == RIFL_OK && (len || eop))
                ngot[k] += len;
        }
        CHECK_EQ_U(rifl_lane_tx_backlog(p[k]->lane[0]), 0);
        CHECK_EQ_U(rifl_lane_get_stats(p[k]->lane[0])->tx_source_errors, (k == 2));
        CHECK_EQ_U(rifl_lane_get_stats(p[k]->lane[0])->tx_frames[RIFL_KIND_DATA], QUEUED);
    }
    /* the receiver got the queued frames' bytes, in order, but frame 2's
     * where the source failed */
    const unsigned pb = rifl_payload_bytes(pc.lane.frame_bits);
    CHECK_EQ_U(ngot[0], QUEUED * pb);
    CHECK(ngot[1] == ngot[0] && memcmp(got[0], got[1], ngot[0]) == 0);
    CHECK_EQ_U(ngot[2], (QUEUED - 1) * pb);
    for (unsigned x = 0, at = 0; x < QUEUED && ngot[0] == QUEUED * pb; x++) {
        CHECK_EQ_U(got[0][x * pb + 1], (uint8_t)(x * 37 + 1));
        if (x == 2)
            continue;
        CHECK(ngot[2] >= (at + 1) * pb && memcmp(got[2] + at * pb, got[0] + x * pb, pb) == 0);
        at++;
    }
    free(log);
out:
    for (int k = 0; k < 3; k++)
        rifl_pair_free(p[k]);
}

/* Quiet runs against stepping on arbitrary input: two copies of a link
 * stepped by reference whose cables, a delay at a time, are overwritten
 * alike with made-up frames (runs of one key, RETRANSMIT, IDLE, PAUSE or
 * another, and data frames with IDs near what the receiver expects), so
 * that the lanes go through states and turns a cable with random bit
 * errors seldom gives them (a RETRANSMIT flag falling in the last slot of
 * a replay cycle, PAUSE in the middle of one).  One copy steps slot by
 * slot, the other takes quiet runs where it can; both must agree. */
static void t_quiet_runs_crafted(void)
{
    rifl_pair_config pc = { .lane = rifl_lane_default_config };
    struct pair_trio t = { { NULL, NULL, NULL }, { { 0 } } };
    char msg[256] = "";
    for (int k = 0; k < 2; k++)
        CHECK_MSG(rifl_pair_create(&pc, &t.p[k], msg, sizeof msg) == RIFL_OK, "%s", msg);
    if (!t.p[0] || !t.p[1])
        goto out;
    t.p[2] = t.p[1];
    static uint8_t rec[RIFL_FRAME_MAX_BYTES];
    rec[0] = RIFL_META_FULL;
    for (size_t i = 1; i < sizeof rec; i++)
        rec[i] = (uint8_t)(i * 13);
    const uint16_t keys[4] = { RIFL_KEY_RETRANSMIT, RIFL_KEY_IDLE, RIFL_KEY_PAUSE, 0x0100 };
    uint8_t pkt[2000];
    memset(pkt, 0x5A, sizeof pkt);
    rifl_rng rng;
    rifl_rng_seed(&rng, 7);
    /* start-up, error-free, with traffic */
    while (t.p[0]->slot < 5000)
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < 2 && t.p[k]->slot % 8 == 0; i++) {
                rifl_lane_send(t.p[k]->lane[i], pkt, sizeof pkt);
                trio_drain(&t, k, i);
            }
            rifl_pair_step(t.p[k], NULL);
        }
    for (int k = 0; k < 2; k++)
        CHECK(rifl_pair_ref_room(t.p[k]) && rifl_pair_ref_begin(t.p[k]) == RIFL_OK);
    const unsigned D = t.p[0]->delay_frames, kmask = (1u << pc.lane.fid_bits) - 1;
    uint64_t quiet = 0, cycles_before = 0;
    for (int i = 0; i < 2; i++)
        cycles_before += rifl_lane_get_stats(t.p[0]->lane[i])->tx_replay_cycles;
    for (int window = 0; window < 20000 && t.p[0]->by_ref && t.p[1]->by_ref; window++) {
        /* what each lane receives next: made up, the same for both copies */
        for (int i = 0; i < 2; i++) {
            unsigned e = 0;
            const rifl_lane *rx = t.p[0]->lane[1 - i];
            while (e < D) {
                uint64_t r = rifl_rng_next(&rng);
                unsigned len = 1 + (unsigned)(r % 24), kind = (unsigned)(r >> 8) % 6;
                unsigned id = (rifl_lane_expected_id(rx) + (unsigned)(r >> 16) % 5 - 2) & kmask;
                for (unsigned n = 0; n < len && e < D; n++, e++) {
                    rifl_lane_ref f = kind < 4 ? (rifl_lane_ref){ NULL, keys[kind], (uint16_t)id, 0 }
                                               : (rifl_lane_ref){ rec, 0, (uint16_t)id, 1 };
                    if (kind >= 4)
                        id = (id + 1) & kmask;
                    unsigned pos = (t.p[0]->ref_pos + e) % D;
                    t.p[0]->ref[i][pos] = f;
                    t.p[1]->ref[i][pos] = f;
                }
            }
        }
        /* through them: quiet runs in copy 1 where it can, steps in copy 0 */
        uint64_t end = t.p[0]->slot + D;
        while (t.p[1]->slot < end) {
            /* deliveries in half of the runs (the readers have read all) */
            uint64_t at[2][64];
            rifl_lane_quiet_io io = { .at = { at[0], at[1] }, .cap = 64 };
            bool del = rifl_rng_next(&rng) % 2;
            uint64_t n = rifl_pair_ref_quiet(t.p[1], end - t.p[1]->slot, del ? &io : NULL);
            quiet += n;
            for (uint64_t j = 0; j < (n ? n : 1); j++)
                rifl_pair_ref_step(t.p[0]);
            if (!n)
                rifl_pair_ref_step(t.p[1]);
            for (int i = 0; i < 2; i++) {
                trio_drain(&t, 0, i);
                trio_drain(&t, 1, i);
                t.read_hash[2][i] = t.read_hash[1][i]; /* (copy 2 is copy 1) */
            }
            if (!lanes_agree(&t, t.p[0]->slot))
                goto out;
        }
    }
    uint64_t cycles = 0;
    for (int i = 0; i < 2; i++)
        cycles += rifl_lane_get_stats(t.p[0]->lane[i])->tx_replay_cycles;
    printf("  %llu slots, %llu in quiet runs, %llu replay cycles\n",
           (unsigned long long)t.p[0]->slot, (unsigned long long)quiet,
           (unsigned long long)(cycles - cycles_before));
    CHECK(quiet > t.p[0]->slot / 4);
    CHECK(cycles - cycles_before > 100);
out:
    rifl_pair_free(t.p[0]);
    rifl_pair_free(t.p[1]);
}

/* Idle stretches (rifl_pair_idle_skip) against stepping: three copies of
 * a link with bit errors both ways and packets now and then, `plain`
 * stepped by content, `ref` by reference, `idle` by reference with every
 * idle stretch it may take skipped in one call (random lengths, up to the
 * next packet).  Every lane counter, frame ID, flag, replay buffer, cable
 * counter and byte read must agree after every skip. */
static void t_idle_skip_equals_steps(void)
{
    rifl_pair_config pc = { .lane = rifl_lane_default_config };
    pc.ber[0] = pc.ber[1] = 2e-7;
    pc.seed[0] = test_seed * 2 + 5;
    pc.seed[1] = test_seed * 2 + 6;
    struct pair_trio t = { { NULL, NULL, NULL }, { { 0 } } };
    if (!trio_make(&t, &pc))
        goto out;
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed + 77);
    uint8_t pkt[3000];
    for (size_t i = 0; i < sizeof pkt; i++)
        pkt[i] = (uint8_t)(i * 11 + 3);
    uint64_t skipped = 0, skips = 0, refused = 0;
    const uint64_t N = test_long_run ? 20000000 : 2000000;
    uint64_t next_pkt = 100;
    bool ok = true;
    while (ok && t.p[0]->slot < N) {
        uint64_t slot = t.p[0]->slot;
        if (slot >= next_pkt) {
            /* a packet one way or both, then a quiet gap */
            size_t len = 1 + rifl_rng_below(&rng, sizeof pkt);
            int dirs = (int)rifl_rng_below(&rng, 3);
            for (int k = 0; k < 3; k++)
                for (int i = 0; i < 2; i++)
                    if (dirs == 2 || dirs == i)
                        rifl_lane_send(t.p[k]->lane[i], pkt, len);
            next_pkt = slot + 1 + rifl_rng_below(&rng, rifl_rng_below(&rng, 2) ? 300 : 20000);
        }
        uint64_t room = rifl_pair_idle_room(t.p[2]);
        uint64_t gap = next_pkt - slot;
        if (room && gap > 1 && rifl_rng_below(&rng, 4)) {
            uint64_t m = 1 + rifl_rng_below(&rng, room < gap ? room : gap);
            CHECK_EQ_I(rifl_pair_idle_skip(t.p[2], m), RIFL_OK);
            for (uint64_t j = 0; j < m; j++) {
                rifl_pair_step(t.p[0], NULL);
                if (!t.p[1]->by_ref && rifl_pair_ref_room(t.p[1]))
                    rifl_pair_ref_begin(t.p[1]);
                if (t.p[1]->by_ref)
                    rifl_pair_ref_step(t.p[1]);
                else
                    rifl_pair_step(t.p[1], NULL);
                for (int i = 0; i < 2; i++) {
                    trio_drain(&t, 0, i);
                    trio_drain(&t, 1, i);
                }
            }
            for (int i = 0; i < 2; i++)
                trio_drain(&t, 2, i);
            skipped += m;
            skips++;
            /* the same cables: references settled, then compared */
            if (t.p[1]->by_ref)
                rifl_pair_ref_end(t.p[1]);
            for (int i = 0; i < 2; i++)
                for (int k = 1; k < 3; k++)
                    ok = ok && memcmp(rifl_phy_get_stats(t.p[0]->phy[i]),
                                      rifl_phy_get_stats(t.p[k]->phy[i]),
                                      sizeof(rifl_phy_stats)) == 0;
            CHECK_MSG(ok, "cable counters differ after a skip at slot %llu",
                      (unsigned long long)slot);
            ok = ok && lanes_agree(&t, t.p[0]->slot);
            CHECK_EQ_U(t.p[2]->slot, t.p[0]->slot);
            continue;
        }
        if (room < gap && room)
            refused++;
        rifl_pair_step(t.p[0], NULL);
        for (int k = 1; k < 3; k++) {
            if (!t.p[k]->by_ref && rifl_pair_ref_room(t.p[k]))
                rifl_pair_ref_begin(t.p[k]);
            if (t.p[k]->by_ref)
                rifl_pair_ref_step(t.p[k]);
            else
                rifl_pair_step(t.p[k], NULL);
        }
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 2; i++)
                trio_drain(&t, k, i);
    }
    uint64_t hits = rifl_phy_get_stats(t.p[0]->phy[0])->frames_hit +
                    rifl_phy_get_stats(t.p[0]->phy[1])->frames_hit;
    printf("  %llu slots, %llu skipped in %llu idle stretches, %llu frames hit\n",
           (unsigned long long)t.p[0]->slot, (unsigned long long)skipped,
           (unsigned long long)skips, (unsigned long long)hits);
    CHECK(ok);
    CHECK(skipped > N / 4);
    CHECK(hits > 20);
    CHECK(rifl_lane_get_stats(t.p[0]->lane[0])->tx_replay_cycles > 5);
    CHECK(t.read_hash[0][0] == t.read_hash[2][0] && t.read_hash[0][1] == t.read_hash[2][1]);
    /* nothing to skip while a lane has something queued */
    rifl_lane_send(t.p[2]->lane[0], pkt, 100);
    CHECK_EQ_U(rifl_pair_idle_room(t.p[2]), 0);
    CHECK_EQ_I(rifl_pair_idle_skip(t.p[2], 1), RIFL_ERR_STATE);
    CHECK_EQ_U(rifl_pair_idle_room(NULL), 0);
out:
    for (int k = 0; k < 3; k++)
        rifl_pair_free(t.p[k]);
}

/* One serial lane whose ends run on clocks apart goes through the bonded
 * driver: the bit offset of each direction is simulated there as on one
 * clock (the aligner slides past as many bits either way). */
static void t_one_lane_ppm_offset(void)
{
    const unsigned offs[2] = { 10, 200 };
    for (unsigned k = 0; k < 2; k++) {
        uint64_t slides[2];
        for (int p = 0; p < 2; p++) {
            rifl_linksim_config c;
            rifl_linksim_defaults(&c);
            c.serial = true;
            c.up_log2 = 12;
            c.bytes = 200000;
            c.ppm = p ? 50 : 0;
            c.bit_offset[0] = c.bit_offset[1] = offs[k];
            rifl_linksim_result r;
            char msg[600] = "";
            int rc = rifl_linksim_run(&c, &r, msg, sizeof msg);
            CHECK_MSG(rc == RIFL_OK, "%s", msg);
            if (rc != RIFL_OK)
                return;
            CHECK(r.complete && r.lossless);
            slides[p] = r.aligner[0].slides;
            rifl_linksim_result_free(&r);
        }
        CHECK_MSG(slides[0] == offs[k] && slides[1] == offs[k],
                  "offset %u: %llu slides on one clock, %llu at 50 ppm", offs[k],
                  (unsigned long long)slides[0], (unsigned long long)slides[1]);
    }
}

/* A stream that can no longer complete ends the run (stall_slots).  A
 * frame-ID width far below the sizing rule (allowed only through
 * allow_unsafe_fid) lets a frame pass as another: on bonded lanes the
 * lanes' segments then fall out of step and every later packet is wrong, so
 * without the limit the run would wait for them forever. */
static void t_stalled_stream_ends(void)
{
    for (unsigned lanes = 2; lanes <= 4; lanes *= 2) {
        rifl_linksim_config c = base(test_seed * 61 + lanes, 1e-5, 4000000);
        c.lanes = lanes;
        c.lane.link.lane_rate_gbps = 112.0 / lanes;
        c.lane.fid_bits = 5;
        c.lane.allow_unsafe_fid = true;
        c.stall_slots = 1u << 16;
        rifl_linksim_result res;
        if (!run_ok(&c, &res))
            continue;
        CHECK_MSG(!res.lossless && res.stalled && !res.complete,
                  "%u lanes: lossless %d stalled %d complete %d after %llu slots", lanes,
                  res.lossless, res.stalled, res.complete, (unsigned long long)res.slots);
        /* it ended within the limit of the last packet that arrived whole */
        CHECK(res.slots < (uint64_t)2 * (1u << 16) + res.window[0] + res.window[1]);
        rifl_linksim_result_free(&res);
        /* the same lanes at a safe width are lossless and never stall (at a
         * BER at which a bonded link still carries much) */
        c.lane.fid_bits = 7;
        c.lane.allow_unsafe_fid = false;
        c.ber[0] = c.ber[1] = 1e-7;
        c.bytes = 1000000;
        if (!run_ok(&c, &res))
            continue;
        CHECK(res.lossless && res.complete && !res.stalled);
        rifl_linksim_result_free(&res);
    }
}

TEST_MAIN({ "quiet_runs_equal_steps", t_quiet_runs_equal_steps },
          { "stalled_stream_ends", t_stalled_stream_ends },
          { "carried_equals_plain", t_carried_equals_plain },
          { "quiet_runs_crafted", t_quiet_runs_crafted },
          { "keep_source", t_keep_source },
          { "quiet_runs_equal_steps_lossy", t_quiet_runs_equal_steps_lossy },
          { "idle_skip_equals_steps", t_idle_skip_equals_steps },
          { "fast_equals_plain", t_fast_equals_plain }, { "ref_equals_plain", t_ref_equals_plain },
          { "content_equals_wire", t_content_equals_wire }, { "channel_ber", t_channel_ber },
          { "lossless_sweep", t_lossless_sweep }, { "backpressure", t_backpressure }, { "deterministic", t_deterministic },
          { "bad_config", t_bad_config }, { "pair_size", t_pair_size },
          { "pair_delay_vs_fid", t_pair_delay_vs_fid },
          { "check_agrees_run", t_check_agrees_run },
          { "validator_sizes", t_validator_sizes },
          { "histogram", t_histogram },
          { "packet_fill", t_packet_fill },
          { "parts_and_phases", t_parts_and_phases }, { "hooks", t_hooks },
          { "seeds_given", t_seeds_given }, { "serial_lanes", t_serial_lanes },
          { "bonded_links", t_bonded_links },
          { "bonded_pairs_equal_general", t_bonded_pairs_equal_general }, { "clock_offsets", t_clock_offsets },
          { "lane_faults", t_lane_faults }, { "serial_mixed", t_serial_mixed },
          { "one_lane_ppm_offset", t_one_lane_ppm_offset })

/* Link simulator: the fast path gives exactly the run that plain stepping
 * gives, the channel's error count matches its BER, runs are lossless and
 * reproducible, bad settings are refused with a clear message. */
#include <math.h>

#include "testlib.h"

#include "rifl/linksim.h"

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

static void same_stats(const rifl_linksim_result *a, const rifl_linksim_result *b)
{
    CHECK_EQ_U(a->slots, b->slots);
    for (int i = 0; i < 2; i++) {
        CHECK(memcmp(&a->lane[i], &b->lane[i], sizeof a->lane[i]) == 0);
        CHECK(memcmp(&a->ch[i], &b->ch[i], sizeof a->ch[i]) == 0);
        CHECK(memcmp(&a->val[i], &b->val[i], sizeof a->val[i]) == 0);
        CHECK_EQ_U(a->offered_bytes[i], b->offered_bytes[i]);
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
 * sizes, loads and links */
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
        rifl_linksim_result a, b;
        c.fast = false;
        if (!run_ok(&c, &a))
            continue;
        c.fast = true;
        if (!run_ok(&c, &b)) {
            rifl_linksim_result_free(&a);
            continue;
        }
        printf("  ber %.0e sizes %zu..%zu load %.1f F %u: %llu slots, %llu fast in %llu skips, "
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

TEST_MAIN({ "fast_equals_plain", t_fast_equals_plain })

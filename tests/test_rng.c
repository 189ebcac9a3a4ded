/* The seeded generator's derived draws: geometric values by table
 * (rifl_geo) against the log() formula of rifl_rng_geometric. */
#include <math.h>

#include "testlib.h"

#include "rifl/rng.h"

/* rifl_rng_geometric's formula for the 53-bit draw x */
static uint64_t geo_formula(double p, uint64_t x)
{
    double u = 1.0 - (double)x * (1.0 / 9007199254740992.0);
    double v = floor(log(u) / log1p(-p));
    return v < 1.8e19 ? (uint64_t)v : UINT64_MAX;
}

static const double probs[] = {
    1e-9, 1e-6, 1e-3, 0.01, 0.1, 0.25, 0.3, 0.5, 0.9, 0.9 / 0.91, 0.999, 1 - 1e-9, 1 - 1e-15,
};
#define NPROBS (sizeof probs / sizeof probs[0])

/* Around every threshold of the table (and every band edge), each x of a
 * window, and the first and last draws. */
static void t_geo_thresholds(void)
{
    static rifl_geo g; /* 4 KB: not on the stack */
    unsigned bad = 0, tried = 0;
    const uint64_t top = 1ull << 53;
    for (unsigned n = 0; n < NPROBS; n++) {
        rifl_geo_init(&g, probs[n]);
        CHECK(g.k_end >= 1);
        for (unsigned k = 0; k + 1 < g.k_end; k++) {
            uint64_t at[3] = { g.band[k].lo, g.band[k].hi,
                               (uint64_t)ldexp(-expm1((double)(k + 1) * g.lp), 53) };
            for (unsigned a = 0; a < 3; a++)
                for (int64_t d = -300; d <= 300; d++) {
                    int64_t x = (int64_t)at[a] + d;
                    if (x < 0 || (uint64_t)x >= top)
                        continue;
                    tried++;
                    bad += rifl_geo_of(&g, (uint64_t)x) != geo_formula(probs[n], (uint64_t)x);
                }
        }
        for (uint64_t x = 0; x < 1000; x++) {
            bad += rifl_geo_of(&g, x) != geo_formula(probs[n], x);
            bad += rifl_geo_of(&g, top - 1 - x) != geo_formula(probs[n], top - 1 - x);
            tried += 2;
        }
    }
    CHECK_EQ_U(bad, 0);
    CHECK(tried > 100000);
}

/* Random draws: the same values as rifl_rng_geometric, and the generators
 * stay in step (one number drawn per value). */
static void t_geo_draws(void)
{
    static rifl_geo g;
    unsigned bad = 0;
    unsigned rounds = test_long_run ? 2000000 : 100000;
    for (unsigned n = 0; n < NPROBS; n++) {
        rifl_geo_init(&g, probs[n]);
        rifl_rng a, b;
        rifl_rng_seed(&a, test_seed + n);
        rifl_rng_seed(&b, test_seed + n);
        for (unsigned r = 0; r < rounds; r++)
            bad += rifl_geo_draw(&g, &a) != rifl_rng_geometric(&b, probs[n]);
        CHECK(rifl_rng_next(&a) == rifl_rng_next(&b));
    }
    CHECK_EQ_U(bad, 0);
    /* p outside (0, 1): no draw */
    rifl_rng a;
    rifl_rng_seed(&a, 1);
    rifl_geo_init(&g, 1.0);
    CHECK_EQ_U(rifl_geo_draw(&g, &a), 0);
    rifl_geo_init(&g, 0.0);
    CHECK_EQ_U(rifl_geo_draw(&g, &a), UINT64_MAX);
    rifl_rng b;
    rifl_rng_seed(&b, 1);
    CHECK(rifl_rng_next(&a) == rifl_rng_next(&b));
}

TEST_MAIN({ "geo_thresholds", t_geo_thresholds }, { "geo_draws", t_geo_draws })

/* rifl: explicit, seeded pseudo-random generator (xoshiro256**, seeded
 * through splitmix64).  Every random choice in the library, the simulators
 * and the tests draws from a rifl_rng the caller owns, so a run is
 * reproducible from its seed. */
#ifndef RIFL_RNG_H
#define RIFL_RNG_H

#include <stdint.h>
#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rifl_rng {
    uint64_t s[4];
} rifl_rng;

static inline uint64_t rifl_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline void rifl_rng_seed(rifl_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = rifl_splitmix64(&x);
}

static inline uint64_t rifl_rng_next(rifl_rng *r)
{
    uint64_t *s = r->s;
    uint64_t v = s[1] * 5;
    uint64_t result = ((v << 7) | (v >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* Uniform double in [0, 1). */
static inline double rifl_rng_double(rifl_rng *r)
{
    return (double)(rifl_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n), n > 0 (Lemire's multiply-shift, unbiased). */
static inline uint64_t rifl_rng_below(rifl_rng *r, uint64_t n)
{
    uint64_t x = rifl_rng_next(r);
    __uint128_t m = (__uint128_t)x * n;
    uint64_t l = (uint64_t)m;
    if (l < n) {
        uint64_t t = (0 - n) % n;
        while (l < t) {
            x = rifl_rng_next(r);
            m = (__uint128_t)x * n;
            l = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* Uniform integer in [lo, hi], lo <= hi. */
static inline uint64_t rifl_rng_range(rifl_rng *r, uint64_t lo, uint64_t hi)
{
    return lo + rifl_rng_below(r, hi - lo + 1);
}

/* Bernoulli trial with probability p. */
static inline int rifl_rng_chance(rifl_rng *r, double p)
{
    return rifl_rng_double(r) < p;
}

/* Number of failures before the first success of a Bernoulli(p) process
 * (geometric on {0,1,...}); used to skip ahead to the next bit error.
 * Returns UINT64_MAX when p <= 0. */
static inline uint64_t rifl_rng_geometric(rifl_rng *r, double p)
{
    if (p <= 0.0)
        return UINT64_MAX;
    if (p >= 1.0)
        return 0;
    double u = 1.0 - rifl_rng_double(r); /* (0, 1] */
    double g = floor(log(u) / log1p(-p));
    if (!(g < 1.8e19))
        return UINT64_MAX;
    return (uint64_t)g;
}

/* ---- geometric draws by table ------------------------------------------
 * rifl_rng_geometric takes a log() per draw.  A rifl_geo answers the same
 * draws (the same value from the same generator state, one number drawn)
 * mostly by comparing the 53-bit draw x with thresholds: g >= k exactly
 * when log(1 - x/2^53) / log(1 - p) >= k, that is when x is at least
 * x_k = 2^53 (1 - (1 - p)^k).  Each x_k is computed to within a few units
 * and surrounded by a band of 2^20 + x_k/2^30 units; a draw inside a band,
 * or beyond the table, takes the log() as rifl_rng_geometric does, so no
 * rounding difference can change an answer (outside the bands the quotient
 * is further than 1e-12 from an integer, far beyond the few units in the
 * last place by which log() and the division can err). */
#define RIFL_GEO_TABLE 255

typedef struct rifl_geo {
    double p, lp;             /* the probability and log(1 - p) */
    unsigned k_end;           /* entries in use, the last one a stop */
    struct {
        uint64_t lo, hi;      /* the band around x_(k+1) */
    } band[RIFL_GEO_TABLE + 1];
} rifl_geo;

static inline void rifl_geo_init(rifl_geo *g, double p)
{
    g->p = p;
    g->lp = p > 0.0 && p < 1.0 ? log1p(-p) : 0.0;
    g->k_end = 0;
    if (!(p > 0.0 && p < 1.0))
        return;
    const double top = 9007199254740992.0; /* 2^53: x ranges over [0, 2^53) */
    unsigned k = 0;
    for (; k < RIFL_GEO_TABLE; k++) {
        double xk = ldexp(-expm1((double)(k + 1) * g->lp), 53);
        double m = 1048576.0 + xk * (1.0 / 1073741824.0);
        if (xk - m >= top) {
            /* no draw reaches x_(k+1): an x above the bands so far is k */
            g->band[k].lo = g->band[k].hi = UINT64_MAX;
            g->k_end = k + 1;
            return;
        }
        g->band[k].lo = xk - m > 0 ? (uint64_t)(xk - m) : 0;
        g->band[k].hi = (uint64_t)(xk + m) + 1;
    }
    /* beyond the table: every x is sent to log() */
    g->band[k].lo = g->band[k].hi = 0;
    g->k_end = k + 1;
}

/* The geometric value of the 53-bit draw x (x = rifl_rng_next() >> 11),
 * for 0 < p < 1. */
static inline uint64_t rifl_geo_of(const rifl_geo *g, uint64_t x)
{
    unsigned k = 0;
    while (x >= g->band[k].lo) {
        if (x < g->band[k].hi || k + 1 == g->k_end) {
            double u = 1.0 - (double)x * (1.0 / 9007199254740992.0); /* (0, 1] */
            double v = floor(log(u) / g->lp);
            return v < 1.8e19 ? (uint64_t)v : UINT64_MAX;
        }
        k++;
    }
    return k;
}

/* The same value as rifl_rng_geometric(r, g->p) from the same state. */
static inline uint64_t rifl_geo_draw(const rifl_geo *g, rifl_rng *r)
{
    if (g->p <= 0.0)
        return UINT64_MAX;
    if (g->p >= 1.0)
        return 0;
    return rifl_geo_of(g, rifl_rng_next(r) >> 11);
}

#ifdef __cplusplus
}
#endif
#endif

/* rifl: latency histogram with exact counts per value (values are frame
 * slots, so the resolution is one slot), for averages and percentiles. */
#ifndef RIFL_LATENCY_H
#define RIFL_LATENCY_H

#include "rifl/api.h"

#include <stdint.h>

#include "rifl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rifl_hist {
    uint64_t *count;     /* count[v] for v < cap */
    uint64_t cap;
    uint64_t n, over;    /* samples; samples >= cap (kept as max only) */
    uint64_t min, max;
    double sum;
} rifl_hist;

RIFL_API int rifl_hist_init(rifl_hist *h);
RIFL_API void rifl_hist_free(rifl_hist *h);
/* Add one sample (the table grows up to 2^24 values; larger ones only
 * count towards n, sum and max). */
RIFL_API void rifl_hist_add(rifl_hist *h, uint64_t v);
/* Add every sample of `src`. */
RIFL_API void rifl_hist_merge(rifl_hist *dst, const rifl_hist *src);
RIFL_API double rifl_hist_avg(const rifl_hist *h);
/* Smallest value v with at least q of the samples <= v (0 < q <= 1). */
RIFL_API uint64_t rifl_hist_quantile(const rifl_hist *h, double q);

#ifdef __cplusplus
}
#endif
#endif

/* Latency histogram: exact counts per slot value. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/sim/latency.h"

#define HIST_MAX_CAP (1ull << 24)

int rifl_hist_init(rifl_hist *h)
{
    if (!h)
        return RIFL_ERR_INVALID_ARG;
    memset(h, 0, sizeof *h);
    h->cap = 1024;
    h->count = calloc(h->cap, sizeof *h->count);
    h->min = UINT64_MAX;
    return h->count ? RIFL_OK : RIFL_ERR_NOMEM;
}

void rifl_hist_free(rifl_hist *h)
{
    if (!h)
        return;
    free(h->count);
    h->count = NULL;
    h->cap = 0;
}

static void grow(rifl_hist *h, uint64_t v)
{
    uint64_t cap = h->cap;
    if (!cap)
        return; /* freed or never made: the sample counts as over */
    while (cap <= v && cap < HIST_MAX_CAP)
        cap *= 2;
    if (cap == h->cap)
        return;
    uint64_t *c = realloc(h->count, cap * sizeof *c);
    if (!c)
        return; /* keep the old table: the sample counts as over */
    memset(c + h->cap, 0, (cap - h->cap) * sizeof *c);
    h->count = c;
    h->cap = cap;
}

void rifl_hist_add(rifl_hist *h, uint64_t v)
{
    if (!h)
        return;
    if (v >= h->cap)
        grow(h, v);
    if (v < h->cap)
        h->count[v]++;
    else
        h->over++;
    h->n++;
    h->sum += (double)v;
    if (v > h->max)
        h->max = v;
    if (v < h->min)
        h->min = v;
}

void rifl_hist_merge(rifl_hist *d, const rifl_hist *s)
{
    if (s->max >= d->cap)
        grow(d, s->max);
    for (uint64_t v = 0; v < s->cap; v++) {
        if (!s->count[v])
            continue;
        if (v < d->cap)
            d->count[v] += s->count[v];
        else
            d->over += s->count[v];
    }
    d->over += s->over;
    d->n += s->n;
    d->sum += s->sum;
    if (s->max > d->max)
        d->max = s->max;
    if (s->min < d->min)
        d->min = s->min;
}

double rifl_hist_avg(const rifl_hist *h)
{
    return h && h->n ? h->sum / (double)h->n : 0.0;
}

uint64_t rifl_hist_quantile(const rifl_hist *h, double q)
{
    if (!h->n)
        return 0;
    uint64_t need = (uint64_t)ceil(q * (double)h->n);
    if (need < 1)
        need = 1;
    uint64_t acc = 0;
    for (uint64_t v = 0; v < h->cap; v++) {
        acc += h->count[v];
        if (acc >= need)
            return v;
    }
    return h->max;
}

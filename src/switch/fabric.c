/* Batcher-Banyan fabric model: a bitonic (Batcher) sorting network on the
 * destination addresses, idle lines sorting last, followed by a self-routing
 * omega banyan of log2(M) stages of 2x2 elements.  The banyan records every
 * pair of cells that meet on the same element output. */
#include <stdlib.h>
#include <string.h>

#include "rifl/switch.h"
#include "switch_priv.h"

struct rifl_fabric {
    unsigned n, m, stages;
    uint16_t *key;    /* [m] destination, m = idle */
    int16_t *who;     /* [m] input whose cell is on the line */
    uint16_t *pos;    /* [m] scratch */
    uint32_t *mark;   /* [m] stage stamp of the last cell on each line */
    uint32_t stamp;
    uint16_t (*cmp)[2];  /* comparators of the sorting network, in order */
    uint8_t *cmp_up;     /* 1: ascending comparator */
    unsigned ncmp;
};

int rifl_fabric_create(unsigned nports, rifl_fabric **out)
{
    if (!out || nports < 2 || nports > RIFL_L2_MAX_PORTS)
        return RIFL_ERR_INVALID_ARG;
    rifl_fabric *f = calloc(1, sizeof *f);
    if (!f)
        return RIFL_ERR_NOMEM;
    f->n = nports;
    f->m = 1;
    while (f->m < nports) {
        f->m <<= 1;
        f->stages++;
    }
    f->key = calloc(f->m, sizeof *f->key);
    f->who = calloc(f->m, sizeof *f->who);
    f->pos = calloc(f->m, sizeof *f->pos);
    f->mark = calloc(f->m, sizeof *f->mark);
    /* the bitonic network of M lines: M/2 comparators per pass,
     * log2(M) (log2(M) + 1) / 2 passes */
    size_t maxc = (size_t)(f->m / 2) * (f->stages * (f->stages + 1) / 2 + 1);
    f->cmp = calloc(maxc, sizeof *f->cmp);
    f->cmp_up = calloc(maxc, 1);
    if (!f->key || !f->who || !f->pos || !f->mark || !f->cmp || !f->cmp_up) {
        rifl_fabric_free(f);
        return RIFL_ERR_NOMEM;
    }
    for (unsigned k = 2; k <= f->m; k <<= 1)
        for (unsigned j = k >> 1; j > 0; j >>= 1)
            for (unsigned i = 0; i < f->m; i++) {
                unsigned l = i ^ j;
                if (l <= i)
                    continue;
                /* stored as (line getting the minimum, line getting the
                 * maximum): an ascending comparator puts the minimum on i */
                int up = (i & k) == 0;
                f->cmp[f->ncmp][0] = (uint16_t)(up ? i : l);
                f->cmp[f->ncmp][1] = (uint16_t)(up ? l : i);
                f->cmp_up[f->ncmp] = (uint8_t)up;
                f->ncmp++;
            }
    *out = f;
    return RIFL_OK;
}

void rifl_fabric_free(rifl_fabric *f)
{
    if (!f)
        return;
    free(f->key);
    free(f->who);
    free(f->pos);
    free(f->mark);
    free(f->cmp);
    free(f->cmp_up);
    free(f);
}

static void bitonic_sort(rifl_fabric *f)
{
    uint16_t *key = f->key;
    int16_t *who = f->who;
    /* keys and inputs travel together: pack them into one word per line */
    uint32_t line[RIFL_L2_MAX_PORTS];
    for (unsigned l = 0; l < f->m; l++)
        line[l] = ((uint32_t)key[l] << 16) | (uint16_t)who[l];
    /* a comparator orders by key, then by input (all words differ) */
    const uint16_t (*cmp)[2] = (const uint16_t (*)[2])f->cmp;
    for (unsigned c = 0, nc = f->ncmp; c < nc; c++) {
        unsigned x = cmp[c][0], y = cmp[c][1];
        uint32_t a = line[x], b = line[y];
        uint32_t lo = a < b ? a : b;
        line[x] = lo;
        line[y] = a ^ b ^ lo;
    }
    for (unsigned l = 0; l < f->m; l++) {
        key[l] = (uint16_t)(line[l] >> 16);
        who[l] = (int16_t)(uint16_t)line[l];
    }
}

unsigned rifl_fabric_route(rifl_fabric *f, const int16_t *dest, int16_t *at_output,
                           bool sort)
{
    if (!f || !dest || !at_output)
        return 0;
    const unsigned m = f->m, n = f->n;
    unsigned S = f->stages;
    for (unsigned l = 0; l < m; l++) {
        int d = l < n ? dest[l] : -1;
        f->key[l] = (uint16_t)(d >= 0 && (unsigned)d < n ? (unsigned)d : m);
        f->who[l] = (int16_t)(d >= 0 && (unsigned)d < n ? (int)l : -1);
    }
    for (unsigned o = 0; o < n; o++)
        at_output[o] = -1;
    if (sort)
        bitonic_sort(f);
    /* active cells and their current line */
    unsigned cnt = 0;
    for (unsigned l = 0; l < m; l++)
        if (f->key[l] < m) {
            f->key[cnt] = f->key[l];
            f->who[cnt] = f->who[l];
            f->pos[cnt] = (uint16_t)l;
            cnt++;
        }
    unsigned collisions = 0;
    if (m <= 64) {
        /* small fabrics: one bit per line and stage */
        for (unsigned s = 0; s < S; s++) {
            uint64_t used = 0;
            for (unsigned c = 0; c < cnt; c++) {
                unsigned p = f->pos[c];
                unsigned q = ((p << 1) | (p >> (S - 1))) & (m - 1);
                q = (q & ~1u) | ((f->key[c] >> (S - 1 - s)) & 1u);
                collisions += (unsigned)((used >> q) & 1u);
                used |= 1ull << q;
                f->pos[c] = (uint16_t)q;
            }
        }
        S = 0; /* done */
    }
    for (unsigned s = 0; s < S; s++) {
        uint32_t st = ++f->stamp;
        if (st == 0) {
            memset(f->mark, 0, m * sizeof *f->mark);
            st = f->stamp = 1;
        }
        for (unsigned c = 0; c < cnt; c++) {
            unsigned p = f->pos[c];
            /* perfect shuffle (rotate left), then the 2x2 element sets the
             * low bit from the destination bit of this stage */
            unsigned q = ((p << 1) | (p >> (S - 1))) & (m - 1);
            q = (q & ~1u) | ((f->key[c] >> (S - 1 - s)) & 1u);
            if (f->mark[q] == st)
                collisions++;
            f->mark[q] = st;
            f->pos[c] = (uint16_t)q;
        }
    }
    for (unsigned c = 0; c < cnt; c++)
        if (f->pos[c] < n && f->key[c] == f->pos[c] && at_output[f->pos[c]] < 0)
            at_output[f->pos[c]] = f->who[c];
    return collisions;
}

/* Why distinct destinations need no routing: the sorter puts k cells with
 * distinct destinations on lines 0..k-1 in ascending order (idle lines sort
 * last).  In the omega banyan of S stages, after stage s a cell that entered
 * on line x bound for d is on the line made of the low S-s bits of x above
 * the high s bits of d.  Two cells x < y bound for d < e meet there only if
 * y - x is a multiple of 2^(S-s) and d, e share their high s bits, so
 * e - d < 2^(S-s) <= y - x; but sorted and compact, e - d >= y - x.  So
 * they never meet and every cell reaches its own output: the full model
 * would answer 0 collisions.  Duplicates (or anything else) take the full
 * model, which counts them exactly as rifl_fabric_route does. */
unsigned rifl_fabric_check(rifl_fabric *f, const int16_t *dest, int16_t *at_output)
{
    if (!f || !dest || !at_output)
        return 0;
    const unsigned n = f->n;
    uint64_t seen[BS_WORDS(RIFL_L2_MAX_PORTS)] = { 0 };
    for (unsigned o = 0; o < n; o++)
        at_output[o] = -1;
    for (unsigned i = 0; i < n; i++) {
        int d = dest[i];
        if (d < 0 || (unsigned)d >= n)
            continue;
        if (bs_get(seen, (unsigned)d))
            return rifl_fabric_route(f, dest, at_output, true);
        bs_set(seen, (unsigned)d);
        at_output[d] = (int16_t)i;
    }
    return 0;
}

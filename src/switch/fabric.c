/* Batcher-Banyan fabric model: a bitonic (Batcher) sorting network on the
 * destination addresses, idle lines sorting last, followed by a self-routing
 * omega banyan of log2(M) stages of 2x2 elements.  The banyan records every
 * pair of cells that meet on the same element output. */
#include <stdlib.h>
#include <string.h>

#include "rifl/switch.h"

struct rifl_fabric {
    unsigned n, m, stages;
    uint16_t *key;    /* [m] destination, m = idle */
    int16_t *who;     /* [m] input whose cell is on the line */
    uint16_t *pos;    /* [m] scratch */
    uint32_t *mark;   /* [m] stage stamp of the last cell on each line */
    uint32_t stamp;
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
    if (!f->key || !f->who || !f->pos || !f->mark) {
        rifl_fabric_free(f);
        return RIFL_ERR_NOMEM;
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
    free(f);
}

static void bitonic_sort(rifl_fabric *f)
{
    const unsigned m = f->m;
    uint16_t *key = f->key;
    int16_t *who = f->who;
    for (unsigned k = 2; k <= m; k <<= 1)
        for (unsigned j = k >> 1; j > 0; j >>= 1)
            for (unsigned i = 0; i < m; i++) {
                unsigned l = i ^ j;
                if (l <= i)
                    continue;
                int up = (i & k) == 0;
                if ((key[i] > key[l]) == up && key[i] != key[l]) {
                    uint16_t tk = key[i];
                    key[i] = key[l];
                    key[l] = tk;
                    int16_t tw = who[i];
                    who[i] = who[l];
                    who[l] = tw;
                }
            }
}

unsigned rifl_fabric_route(rifl_fabric *f, const int16_t *dest, int16_t *at_output,
                           bool sort)
{
    const unsigned m = f->m, n = f->n, S = f->stages;
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

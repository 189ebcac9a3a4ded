/* Bit-set helpers shared by the switch components (private). */
#ifndef RIFL_SWITCH_PRIV_H
#define RIFL_SWITCH_PRIV_H

#include <stdint.h>

#include "rifl/switch.h"

#define BS_WORDS(n) (((n) + 63u) / 64u)

static inline void bs_set(uint64_t *b, unsigned i) { b[i >> 6] |= 1ull << (i & 63); }
static inline void bs_clr(uint64_t *b, unsigned i) { b[i >> 6] &= ~(1ull << (i & 63)); }
static inline int bs_get(const uint64_t *b, unsigned i) { return (int)((b[i >> 6] >> (i & 63)) & 1); }

/* First set bit of (a & m) at or after `start` (round robin over n bits,
 * wrapping), or -1.  `m` may be NULL (all ones). */
static inline int bs_next_rr(const uint64_t *a, const uint64_t *m, unsigned words,
                             unsigned start)
{
    unsigned w0 = start >> 6;
    uint64_t first = a[w0] & (m ? m[w0] : ~0ull);
    uint64_t hi = first & (~0ull << (start & 63));
    if (hi)
        return (int)(w0 * 64 + (unsigned)__builtin_ctzll(hi));
    for (unsigned k = 1; k <= words; k++) {
        unsigned w = (w0 + k) % words;
        uint64_t v = a[w] & (m ? m[w] : ~0ull);
        if (w == w0)
            v &= ~(~0ull << (start & 63));
        if (v)
            return (int)(w * 64 + (unsigned)__builtin_ctzll(v));
    }
    return -1;
}

/* rifl_islip_run on requests given by the caller: reqT = n rows of
 * ceil(n/64) words, bit i of row o = input i requests output o (the
 * switch passes its own table of non-empty VOQs, without a copy), and
 * outs = the outputs whose row is not empty (others may be set too).
 * Only the entries of match of the inputs matched are written; `matched`
 * (ceil(n/64) words) receives the set of those inputs. */
unsigned islip_run_on(rifl_islip *s, const uint64_t *reqT, const uint64_t *outs,
                      int16_t *match, unsigned *iter_matches, uint64_t *matched);

#endif

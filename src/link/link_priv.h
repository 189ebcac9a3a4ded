/* Private helpers shared by the link-layer sources. Not installed. */
#ifndef RIFL_LINK_PRIV_H
#define RIFL_LINK_PRIV_H

#include <stdint.h>
#include <string.h>

#define RIFL_CRC12_POLY 0x02Fu

static inline uint64_t rifl_load_be64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline void rifl_store_be64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, 8);
}

/* CRC over frame words already loaded big-endian (nwords = F/64). */
uint16_t rifl_crc12_words(const uint64_t *w, unsigned nwords);

#endif

/* ---- word-parallel scrambler core ------------------------------------
 *
 * The scrambled region of a frame of F = 64*m bits is frame bits [2, F-12),
 * L = F-14 bits.  It is handled as m chunks of 64 bits; chunk i is region
 * bits [64i, 64i+64), the last chunk holding only 50 valid bits (top bits).
 *
 * The scrambler computes s[t] = d[t] ^ s[t-13] ^ s[t-33].  Inside one 64-bit
 * chunk (most significant bit = earliest) that is S = S0 ^ u(S), where u is
 * "shift right by 13 and by 33" and S0 holds d plus the taps that reach back
 * into the history H (bit 0 = most recent bit).  Since u^8 = 0 on a 64-bit
 * word, S = (1+u)(1+u^2)(1+u^4) S0 = (1+y^52)(1+y^26)(1+y^13+y^33) S0, three
 * shift-XOR stages instead of a bit loop. */

static inline uint64_t rifl_scr_chunk(uint64_t d, uint64_t h)
{
    uint64_t s = d ^ (h << 51) ^ (h << 31);
    s ^= (s >> 13) ^ (s >> 33);
    s ^= s >> 26;
    s ^= s >> 52;
    return s;
}

static inline uint64_t rifl_descr_chunk(uint64_t s, uint64_t h)
{
    return s ^ (s >> 13) ^ (s >> 33) ^ (h << 51) ^ (h << 31);
}

/* Region chunks of a frame held in words w[0..m-1]. */
static inline uint64_t rifl_region_chunk(const uint64_t *w, unsigned i, unsigned m)
{
    if (i + 1 < m)
        return (w[i] << 2) | (w[i + 1] >> 62);
    return (w[i] << 2) & ~(uint64_t)0x3FFF; /* last: 50 valid bits */
}

/* History after a chunk: full chunks replace it, the 50-bit last chunk
 * shifts in. */
static inline uint64_t rifl_hist_after(uint64_t h, uint64_t s, unsigned last)
{
    return last ? ((h << 50) | (s >> 14)) : s;
}

/* Write region chunks c[0..m-1] back into frame words w, keeping SYN and
 * VCODE bits from w. */
static inline void rifl_region_store(uint64_t *w, const uint64_t *c, unsigned m)
{
    uint64_t syn = w[0] & 0xC000000000000000ULL;
    uint64_t vcode = w[m - 1] & 0xFFFu;
    for (unsigned i = 0; i < m; i++) {
        uint64_t v = c[i] >> 2;
        if (i > 0)
            v |= c[i - 1] << 62;
        w[i] = v;
    }
    w[0] = (w[0] & 0x3FFFFFFFFFFFFFFFULL) | syn;
    w[m - 1] = (w[m - 1] & ~(uint64_t)0xFFF) | vcode;
}

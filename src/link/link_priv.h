/* Private helpers shared by the link-layer sources. Not installed. */
#ifndef RIFL_LINK_PRIV_H
#define RIFL_LINK_PRIV_H

#include <stdint.h>
#include <string.h>

#include "rifl/frame.h"

#define RIFL_CRC12_POLY 0x02Fu

/* Scrambler state after sending a data frame (META bits, P/8 payload bytes)
 * or a control frame (key) from state `scr`, without building the frame.
 * frame_bits must be a supported width. */
uint64_t rifl_frame_scrambler_after(unsigned frame_bits, unsigned meta, const uint8_t *payload,
                                    uint64_t scr);
uint64_t rifl_frame_scrambler_after_control(unsigned frame_bits, uint16_t key, uint64_t scr);

/* The state after a frame is linear in the state before it and in the
 * frame's contents: after(h, frame) = after(h, zeros) ^ after(0, frame).
 * A simulator computes it for every frame it carries by content; the first
 * part is a table lookup (one table per byte of the 33-bit state, and the
 * top bit alone), which keeps the frame-to-frame dependency short, and the
 * second does not wait for the state at all. */
typedef struct rifl_scr_map {
    uint64_t byte[4][256];
    uint64_t top;
} rifl_scr_map;

/* Tables for frames of frame_bits bits. */
void rifl_scr_map_init(rifl_scr_map *t, unsigned frame_bits);

static inline uint64_t rifl_scr_map_apply(const rifl_scr_map *t, uint64_t h)
{
    return t->byte[0][h & 0xFF] ^ t->byte[1][(h >> 8) & 0xFF] ^ t->byte[2][(h >> 16) & 0xFF] ^
           t->byte[3][(h >> 24) & 0xFF] ^ (t->top & (0 - ((h >> 32) & 1)));
}

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

/* Tables of crc12.c: pos[d][b] = b * x^(8d+12) mod G (d = 0..31) and
 * chain[k][b] = b * x^(256+8k) mod G. */
/* floor(x^e / G) for the CRC-12 generator G, its bits above x^63 dropped */
uint64_t rifl_crc12_xpow_quotient(unsigned e);
/* x^e mod G, the remainder the quotient above leaves */
uint16_t rifl_crc12_xpow(unsigned e);
const uint16_t (*rifl_crc12_pos_table(void))[256];
const uint16_t (*rifl_crc12_chain_table(void))[256];

/* XOR of the table entries of the 8 bytes of `v`, the last byte at
 * distance `d0` from the end of its 32-byte block. */
static inline uint16_t rifl_crc_word(const uint16_t (*pos)[256], uint64_t v, unsigned d0)
{
    return (uint16_t)(pos[d0 + 7][v >> 56] ^ pos[d0 + 6][(v >> 48) & 0xFF] ^
                      pos[d0 + 5][(v >> 40) & 0xFF] ^ pos[d0 + 4][(v >> 32) & 0xFF] ^
                      pos[d0 + 3][(v >> 24) & 0xFF] ^ pos[d0 + 2][(v >> 16) & 0xFF] ^
                      pos[d0 + 1][(v >> 8) & 0xFF] ^ pos[d0][v & 0xFF]);
}

#if defined(__PCLMUL__) && defined(__SSE4_1__)
#include <immintrin.h>
#define RIFL_CRC_CLMUL 1
/* Carry-less multiply constants (crc12.c): k[j] = x^(64j+12) mod G;
 * kp[j] = { k[2j+1], k[2j] } as one vector (low, high) for a pair of words;
 * x64 = x^64 mod G, fold = { x64, 0 }; mu = floor(x^64 / G) (Barrett); g = G.
 * Also used by the vector batch codec (frame_batch.c). */
struct rifl_crc_clmul {
    __m128i kp[16];
    __m128i fold;
    uint64_t k[32];
    uint64_t x64, mu, g;
};
extern struct rifl_crc_clmul rifl_crc_clmul_consts;

/* Reduce the XOR of the word products (degree < 76, in a vector) to the
 * 12-bit remainder. */
static inline uint16_t rifl_crc_reduce(__m128i acc)
{
    const struct rifl_crc_clmul *c = &rifl_crc_clmul_consts;
    /* fold the bits above x^64: high half times x^64 mod G */
    acc = _mm_xor_si128(acc, _mm_clmulepi64_si128(acc, c->fold, 0x01));
    uint64_t lo = (uint64_t)_mm_cvtsi128_si64(acc);
    /* Barrett: q = floor(lo / G), remainder = lo - q*G */
    __m128i t = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)(lo >> 12)),
                                     _mm_cvtsi64_si128((long long)c->mu), 0x00);
    uint64_t q = ((uint64_t)_mm_cvtsi128_si64(t) >> 52) |
                 ((uint64_t)_mm_extract_epi64(t, 1) << 12);
    __m128i qg = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)q),
                                      _mm_cvtsi64_si128((long long)c->g), 0x00);
    return (uint16_t)((lo ^ (uint64_t)_mm_cvtsi128_si64(qg)) & 0xFFF);
}

/* CRC-12 of a frame held in m big-endian words (VCODE bits ignored): the
 * frame polynomial times x^12 is the XOR of each word times its constant
 * x^(64j+12) mod G (two words per vector), reduced once. */
static inline __attribute__((always_inline)) uint16_t
rifl_crc12_words(const uint64_t *w, unsigned m)
{
    const struct rifl_crc_clmul *c = &rifl_crc_clmul_consts;
    uint64_t last = w[m - 1] & ~(uint64_t)0xFFF;
    if (m == 1)
        return rifl_crc_reduce(_mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)last),
                                                    _mm_cvtsi64_si128((long long)c->k[0]), 0));
    __m128i acc = _mm_setzero_si128();
    _Pragma("GCC unroll 16")
    for (unsigned i = 0; i < m; i += 2) {
        uint64_t hi = i + 2 == m ? last : w[i + 1];
        __m128i v = _mm_set_epi64x((long long)hi, (long long)w[i]);
        __m128i k = c->kp[(m - 2 - i) / 2];
        acc = _mm_xor_si128(acc, _mm_clmulepi64_si128(v, k, 0x00));
        acc = _mm_xor_si128(acc, _mm_clmulepi64_si128(v, k, 0x11));
    }
    return rifl_crc_reduce(acc);
}

/* The same from the frame's bytes, two words per 16-byte load. */
static inline __attribute__((always_inline)) uint16_t
rifl_crc12_wire(const uint8_t *f, unsigned m)
{
    const struct rifl_crc_clmul *c = &rifl_crc_clmul_consts;
    if (m == 1) {
        uint64_t last = rifl_load_be64(f) & ~(uint64_t)0xFFF;
        return rifl_crc_reduce(_mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)last),
                                                    _mm_cvtsi64_si128((long long)c->k[0]), 0));
    }
    const __m128i swap = _mm_set_epi8(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    __m128i acc = _mm_setzero_si128();
    _Pragma("GCC unroll 16")
    for (unsigned i = 0; i < m; i += 2) {
        __m128i v = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(f + 8 * i)), swap);
        if (i + 2 == m)
            v = _mm_and_si128(v, _mm_set_epi64x((long long)~(uint64_t)0xFFF, -1));
        __m128i k = c->kp[(m - 2 - i) / 2];
        acc = _mm_xor_si128(acc, _mm_clmulepi64_si128(v, k, 0x00));
        acc = _mm_xor_si128(acc, _mm_clmulepi64_si128(v, k, 0x11));
    }
    return rifl_crc_reduce(acc);
}
#else
/* CRC-12 of a frame held in m big-endian words (VCODE bits ignored).  With
 * a constant m the compiler unrolls it into independent table lookups. */
static inline __attribute__((always_inline)) uint16_t
rifl_crc12_words(const uint64_t *w, unsigned m)
{
    const uint16_t (*pos)[256] = rifl_crc12_pos_table();
    uint64_t last = w[m - 1] & ~(uint64_t)0xFFF;
    if (m < 4) {
        uint16_t r = rifl_crc_word(pos, last, 0);
        _Pragma("GCC unroll 32")
        for (unsigned i = 0; i + 1 < m; i++)
            r ^= rifl_crc_word(pos, w[i], 8 * (m - 1 - i));
        return r;
    }
    const uint16_t (*chain)[256] = rifl_crc12_chain_table();
    uint16_t r = 0;
    _Pragma("GCC unroll 32")
    for (unsigned b = 0; b < m; b += 4) {
        uint64_t w3 = b + 4 == m ? last : w[b + 3];
        uint16_t blk = (uint16_t)(rifl_crc_word(pos, w[b], 24) ^ rifl_crc_word(pos, w[b + 1], 16) ^
                                  rifl_crc_word(pos, w[b + 2], 8) ^ rifl_crc_word(pos, w3, 0));
        r = (uint16_t)(chain[0][r & 0xFF] ^ chain[1][r >> 8] ^ blk);
    }
    return r;
}

static inline __attribute__((always_inline)) uint16_t
rifl_crc12_wire(const uint8_t *f, unsigned m)
{
    uint64_t w[32];
    for (unsigned i = 0; i < m; i++)
        w[i] = rifl_load_be64(f + 8 * i);
    return rifl_crc12_words(w, m);
}
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
#if defined(RIFL_CRC_CLMUL) && defined(RIFL_SCR_CLMUL)
    /* (Off by default: fewer instructions, but a longer dependency chain
     * from one frame to the next, and measured slower.)  The product expands to shifts by 0, 13, 26, 33, 39, 52 and 59: s XOR
     * the high half of s times sum(x^(64-k)), one carry-less multiply. */
    const uint64_t p = (1ULL << 51) | (1ULL << 38) | (1ULL << 31) | (1ULL << 25) |
                       (1ULL << 12) | (1ULL << 5);
    __m128i t = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)s),
                                     _mm_cvtsi64_si128((long long)p), 0x00);
    return s ^ (uint64_t)_mm_extract_epi64(t, 1);
#else
    s ^= (s >> 13) ^ (s >> 33);
    s ^= s >> 26;
    s ^= s >> 52;
    return s;
#endif
}

/* (hi:lo) >> n, the low 64 bits: one SHRD on x86-64 */
static inline uint64_t rifl_funnel(uint64_t hi, uint64_t lo, unsigned n)
{
    return (uint64_t)((((unsigned __int128)hi << 64) | lo) >> n);
}

static inline uint64_t rifl_descr_chunk(uint64_t s, uint64_t h)
{
    return s ^ rifl_funnel(h, s, 13) ^ rifl_funnel(h, s, 33);
}

/* Region chunks of a frame held in words w[0..m-1]. */
static inline uint64_t rifl_region_chunk(const uint64_t *w, unsigned i, unsigned m)
{
    if (i + 1 < m)
        return rifl_funnel(w[i], w[i + 1], 62);
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
    _Pragma("GCC unroll 32")
    for (unsigned i = 0; i < m; i++) {
        uint64_t v = c[i] >> 2;
        if (i > 0)
            v |= c[i - 1] << 62;
        w[i] = v;
    }
    w[0] = (w[0] & 0x3FFFFFFFFFFFFFFFULL) | syn;
    w[m - 1] = (w[m - 1] & ~(uint64_t)0xFFF) | vcode;
}

/* Kind, payload length and end-of-packet of a frame whose syn, meta and
 * format are filled in.  RIFL_ERR_FRAME for a partial frame with an
 * impossible byte count (the length is clamped). */
static inline int rifl_frame_classify(rifl_frame_info *info, unsigned pbytes)
{
    info->payload_len = 0;
    info->eop = 0;
    if (info->syn == RIFL_SYN_CONTROL) {
        info->kind = RIFL_KIND_CONTROL;
        return RIFL_OK;
    }
    if (info->syn != RIFL_SYN_DATA) {
        info->kind = RIFL_KIND_INVALID;
        return RIFL_OK;
    }
    switch (info->meta) {
    case RIFL_META_NONE:
        info->kind = info->format == RIFL_FMT_FILLER ? RIFL_KIND_FILLER
                   : info->format == RIFL_FMT_FC_ON  ? RIFL_KIND_FC_ON
                   : info->format == RIFL_FMT_FC_OFF ? RIFL_KIND_FC_OFF
                   : RIFL_KIND_EXT;
        return RIFL_OK;
    case RIFL_META_FULL:
    case RIFL_META_FULL_EOP:
        info->kind = RIFL_KIND_DATA;
        info->payload_len = pbytes;
        info->eop = info->meta == RIFL_META_FULL_EOP;
        return RIFL_OK;
    default: /* partial, end of packet */
        info->kind = RIFL_KIND_DATA;
        info->eop = 1;
        info->payload_len = info->format;
        if (info->format == 0 || info->format >= pbytes) {
            info->payload_len = info->format >= pbytes ? pbytes - 1 : 0;
            return RIFL_ERR_FRAME;
        }
        return RIFL_OK;
    }
}

#endif

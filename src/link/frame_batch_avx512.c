/* Batch codec, AVX-512 path: eight frames at a time, one frame per 64-bit
 * lane, for frames of 256 to 2048 bits (m = F/64 = 4 to 32 words).
 *
 * - Frames move between memory and lanes by transposes in registers: eight
 *   rows of eight words (one 64-byte load per frame and block of eight
 *   words) become eight vectors of one word of every frame in three rounds
 *   of two-table permutes, the last of which also swaps the bytes of each
 *   word to big-endian order.  256-bit frames and their 30-byte payloads are
 *   picked from whole-vector loads by byte permutes.
 * - The CRC of each lane is a carry-less multiply of each word by
 *   x^(64j+12) mod G (VPCLMULQDQ, two lanes per 128-bit product), then one
 *   Barrett reduction for all eight lanes.
 * - The scrambler's state is a remainder modulo Q = w^33 + w^20 + 1 in the
 *   basis of frame_batch_priv.h, so the state each frame starts from comes
 *   from the frames' plain words by carry-less multiplies as well: every
 *   frame's contribution, scaled by a per-lane power of w, a prefix XOR over
 *   the lanes and one more multiply give the eight starting states at once.
 *   The only dependency from one group of eight to the next is that last
 *   multiply.  Then each lane scrambles its frame from its own state.
 * - Decode descrambles the wire words where they are (the history of a
 *   frame's first word is the end of the frame before, one lane down) and
 *   shifts the result once, by the four SYN and META bits, into payload
 *   words.  The receiver's check (SYN, META and ID against the expected ID)
 *   is one compare per eight frames; only frames that fail it get a record. */
#include "frame_batch_priv.h"

#ifdef RIFL_BATCH_X86
#include <immintrin.h>

#define AVX512                                                                            \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vbmi2,vpclmulqdq"))) \
    static inline __attribute__((always_inline))

/* Constants, computed once by the set-up (part of the dispatch state). */
static struct {
    /* per width (0..3: m = 4, 8, 16, 32), word i and lane j:
     * w^(F-43-64i-(j+1)L) mod Q, the weight of plain word i of frame j */
    uint64_t ek[4][32][8];
    /* per width and lane j: w^((j+1)L) mod Q */
    uint64_t ck[4][8];
    /* x^(64j+12) mod G: the CRC weight of the word j places from the end */
    uint64_t crck[32];
    uint64_t crc_mu; /* floor(x^76 / G) without its top bit x^64 */
    /* byte permutes: the last transpose round (low and high halves) and the
     * 256-bit frames' regroupings, each with the byte swap of every word */
    uint8_t tr_lo[64], tr_hi[64], z_lo[64], z_hi[64];
    uint8_t pl_a[4][64], pl_b[4][64], ps_a[4][64], ps_b[4][64];
    uint64_t ps_mask[4];
} kc;

/* ---- transposes ------------------------------------------------------- */

/* 64 byte indices picking, for output word q, the bytes of input word
 * src[q] (0..15 over two tables) in reverse order. */
static void byte_index(uint8_t *idx, const int src[8])
{
    for (int q = 0; q < 8; q++)
        for (int r = 0; r < 8; r++)
            idx[8 * q + r] = (uint8_t)(8 * src[q] + 7 - r);
}

AVX512 __m512i perm2q(__m512i a, const long long *ix, __m512i b)
{
    return _mm512_permutex2var_epi64(a, _mm512_loadu_si512(ix), b);
}

AVX512 __m512i perm2b(__m512i a, const uint8_t *ix, __m512i b)
{
    return _mm512_permutex2var_epi8(a, _mm512_loadu_si512(ix), b);
}

static const long long ix_pairs_lo[8] = { 0, 8, 1, 9, 2, 10, 3, 11 };
static const long long ix_pairs_hi[8] = { 4, 12, 5, 13, 6, 14, 7, 15 };
static const long long ix_quads_lo[8] = { 0, 1, 8, 9, 2, 3, 10, 11 };
static const long long ix_quads_hi[8] = { 4, 5, 12, 13, 6, 7, 14, 15 };
static const long long ix_cols_lo[8] = { 0, 4, 8, 12, 1, 5, 9, 13 };
static const long long ix_cols_hi[8] = { 2, 6, 10, 14, 3, 7, 11, 15 };

/* 8x8 words: r[k] word i <-> c[i] lane k, bytes swapped; its own inverse.
 * Written out: every value stays in a register. */
AVX512 void tr8x8(const __m512i *r, __m512i *c)
{
    /* words 0-3 and 4-7 of frame pairs (0,1), (2,3), (4,5), (6,7) */
    __m512i a0 = perm2q(r[0], ix_pairs_lo, r[1]), a1 = perm2q(r[0], ix_pairs_hi, r[1]);
    __m512i a2 = perm2q(r[2], ix_pairs_lo, r[3]), a3 = perm2q(r[2], ix_pairs_hi, r[3]);
    __m512i a4 = perm2q(r[4], ix_pairs_lo, r[5]), a5 = perm2q(r[4], ix_pairs_hi, r[5]);
    __m512i a6 = perm2q(r[6], ix_pairs_lo, r[7]), a7 = perm2q(r[6], ix_pairs_hi, r[7]);
    /* word pairs (0,1), (2,3), (4,5), (6,7) of frames 0-3, then of 4-7 */
    __m512i b0 = perm2q(a0, ix_quads_lo, a2), b1 = perm2q(a0, ix_quads_hi, a2);
    __m512i b2 = perm2q(a1, ix_quads_lo, a3), b3 = perm2q(a1, ix_quads_hi, a3);
    __m512i b4 = perm2q(a4, ix_quads_lo, a6), b5 = perm2q(a4, ix_quads_hi, a6);
    __m512i b6 = perm2q(a5, ix_quads_lo, a7), b7 = perm2q(a5, ix_quads_hi, a7);
    c[0] = perm2b(b0, kc.tr_lo, b4);
    c[1] = perm2b(b0, kc.tr_hi, b4);
    c[2] = perm2b(b1, kc.tr_lo, b5);
    c[3] = perm2b(b1, kc.tr_hi, b5);
    c[4] = perm2b(b2, kc.tr_lo, b6);
    c[5] = perm2b(b2, kc.tr_hi, b6);
    c[6] = perm2b(b3, kc.tr_lo, b7);
    c[7] = perm2b(b3, kc.tr_hi, b7);
}

/* 256-bit frames: four vectors of two frames each -> four words of eight */
AVX512 void tr_z_to_w(const __m512i *z, __m512i *w)
{
    __m512i t0 = perm2q(z[0], ix_cols_lo, z[1]), t1 = perm2q(z[0], ix_cols_hi, z[1]);
    __m512i t2 = perm2q(z[2], ix_cols_lo, z[3]), t3 = perm2q(z[2], ix_cols_hi, z[3]);
    w[0] = perm2b(t0, kc.tr_lo, t2);
    w[1] = perm2b(t0, kc.tr_hi, t2);
    w[2] = perm2b(t1, kc.tr_lo, t3);
    w[3] = perm2b(t1, kc.tr_hi, t3);
}

AVX512 void tr_w_to_z(const __m512i *w, __m512i *z)
{
    __m512i u0 = perm2q(w[0], ix_pairs_lo, w[1]), u1 = perm2q(w[0], ix_pairs_hi, w[1]);
    __m512i u2 = perm2q(w[2], ix_pairs_lo, w[3]), u3 = perm2q(w[2], ix_pairs_hi, w[3]);
    z[0] = perm2b(u0, kc.z_lo, u2);
    z[1] = perm2b(u0, kc.z_hi, u2);
    z[2] = perm2b(u1, kc.z_lo, u3);
    z[3] = perm2b(u1, kc.z_hi, u3);
}

/* Frames as rows: m words each at base + k*stride; block b of eight words
 * (or the four words of a 256-bit frame) into lanes.  `tail` is the byte
 * mask of a frame's last block (payloads end two bytes short of it). */
AVX512 void load_words(unsigned m, const uint8_t *base, size_t stride, uint64_t tail,
                       __m512i *c)
{
    if (m == 4) {
        __m512i z[4];
        _Pragma("GCC unroll 4")
        for (int q = 0; q < 4; q++)
            z[q] = _mm512_loadu_si512(base + 64 * q);
        tr_z_to_w(z, c);
        return;
    }
    _Pragma("GCC unroll 4")
    for (unsigned b = 0; b < m / 8; b++) {
        __m512i r[8];
        uint64_t mask = b + 1 == m / 8 ? tail : ~0ULL;
        for (int k = 0; k < 8; k++)
            r[k] = _mm512_maskz_loadu_epi8(mask, base + k * stride + 64 * b);
        tr8x8(r, c + 8 * b);
    }
}

AVX512 void store_words(unsigned m, uint8_t *base, size_t stride, uint64_t tail,
                        const __m512i *c)
{
    if (m == 4) {
        __m512i z[4];
        tr_w_to_z(c, z);
        _Pragma("GCC unroll 4")
        for (int q = 0; q < 4; q++)
            _mm512_storeu_si512(base + 64 * q, z[q]);
        return;
    }
    _Pragma("GCC unroll 4")
    for (unsigned b = 0; b < m / 8; b++) {
        __m512i r[8];
        uint64_t mask = b + 1 == m / 8 ? tail : ~0ULL;
        tr8x8(c + 8 * b, r);
        for (int k = 0; k < 8; k++)
            _mm512_mask_storeu_epi8(base + k * stride + 64 * b, mask, r[k]);
    }
}

/* 256-bit frames' payloads, 30 bytes each: eight in 240 bytes */
AVX512 void load_payload30(const uint8_t *pl, __m512i *p)
{
    __m512i l0 = _mm512_loadu_si512(pl), l1 = _mm512_loadu_si512(pl + 64);
    __m512i l2 = _mm512_loadu_si512(pl + 120);
    __m512i l3 = _mm512_maskz_loadu_epi8(0x00FFFFFFFFFFFFFFULL, pl + 184);
    _Pragma("GCC unroll 4")
    for (int i = 0; i < 4; i++)
        p[i] = _mm512_mask_blend_epi64(0xF0, perm2b(l0, kc.pl_a[i], l1),
                                       perm2b(l2, kc.pl_b[i], l3));
}

AVX512 void store_payload30(uint8_t *pl, const __m512i *p)
{
    _Pragma("GCC unroll 4")
    for (int q = 0; q < 4; q++) {
        __m512i o = _mm512_mask_blend_epi8(kc.ps_mask[q], perm2b(p[0], kc.ps_a[q], p[1]),
                                           perm2b(p[2], kc.ps_b[q], p[3]));
        _mm512_mask_storeu_epi8(pl + 64 * q, q == 3 ? 0x0000FFFFFFFFFFFFULL : ~0ULL, o);
    }
}

/* ---- carry-less arithmetic on eight lanes ----------------------------- */

/* The lanes' 128-bit products, even lanes' in `ev` and odd lanes' in `od`,
 * as (low, high) words per lane. */
AVX512 void split128(__m512i ev, __m512i od, __m512i *lo, __m512i *hi)
{
    *lo = _mm512_unpacklo_epi64(ev, od);
    *hi = _mm512_unpackhi_epi64(ev, od);
}

/* Barrett step shared by both reductions: the quotient of (hi:lo) >> s by a
 * polynomial whose floor(x^(64+s)/P) is x^64 + mu */
AVX512 __m512i quotient(__m512i lo, __m512i hi, int s, uint64_t mu)
{
    __m512i b = s == 33 ? _mm512_shrdi_epi64(lo, hi, 33) : _mm512_shrdi_epi64(lo, hi, 12);
    __m512i k = _mm512_set1_epi64((long long)mu);
    __m512i qe = _mm512_clmulepi64_epi128(b, k, 0x00), qo = _mm512_clmulepi64_epi128(b, k, 0x01);
    return _mm512_xor_si512(_mm512_unpackhi_epi64(qe, qo), b);
}

/* remainders mod Q (33 bits) of products below x^97 */
AVX512 __m512i scr_reduce(__m512i ev, __m512i od)
{
    __m512i lo, hi;
    split128(ev, od, &lo, &hi);
    __m512i q = quotient(lo, hi, 33, RIFL_SCR_MU);
    /* q * Q = q + q w^20 + q w^33: the last term has no low bits */
    __m512i r = _mm512_ternarylogic_epi64(lo, q, _mm512_slli_epi64(q, 20), 0x96);
    return _mm512_and_si512(r, _mm512_set1_epi64((long long)RIFL_SCRAMBLER_MASK));
}

/* remainders mod G (the CRC, 12 bits) of products below x^76 */
AVX512 __m512i crc_reduce(__m512i ev, __m512i od)
{
    __m512i lo, hi;
    split128(ev, od, &lo, &hi);
    __m512i q = quotient(lo, hi, 12, kc.crc_mu);
    /* the low 12 bits of q * G, G = x^12 + x^5 + x^3 + x^2 + x + 1 */
    __m512i t = _mm512_ternarylogic_epi64(q, _mm512_slli_epi64(q, 1), _mm512_slli_epi64(q, 2),
                                          0x96);
    t = _mm512_ternarylogic_epi64(t, _mm512_slli_epi64(q, 3), _mm512_slli_epi64(q, 5), 0x96);
    return _mm512_ternarylogic_epi64(lo, t, _mm512_set1_epi64(0xFFF), 0x28); /* (a^b)&c */
}

/* ---- scrambler -------------------------------------------------------- */

/* (1+u)(1+u^2)(1+u^4) per lane, u = shift right by 13 and by 33 */
AVX512 __m512i inv8(__m512i s)
{
    s = _mm512_ternarylogic_epi64(s, _mm512_srli_epi64(s, 13), _mm512_srli_epi64(s, 33), 0x96);
    s = _mm512_xor_si512(s, _mm512_srli_epi64(s, 26));
    return _mm512_xor_si512(s, _mm512_srli_epi64(s, 52));
}

/* 64 scrambled bits per lane from plain bits d and the 33 bits before */
AVX512 __m512i scr8(__m512i d, __m512i h)
{
    return inv8(_mm512_ternarylogic_epi64(d, _mm512_slli_epi64(h, 51), _mm512_slli_epi64(h, 31),
                                          0x96));
}

/* T of frame_batch_priv.h per lane */
AVX512 __m512i t_basis(__m512i g)
{
    return _mm512_ternarylogic_epi64(g, _mm512_slli_epi64(g, 20),
                                     _mm512_set1_epi64(0x1FFFLL << 20), 0x78); /* a^(b&c) */
}

/* The scrambler states the eight frames start from, from their plain words
 * y (wire-aligned, SYN and VCODE bits zero).  `g` holds the state before
 * the group in T's basis in every lane and `h` the states after each frame
 * of the group before (lane 7: the state before this group); both move on
 * by eight frames. */
AVX512 __m512i start_states(unsigned m, unsigned wi, const __m512i *y, __m512i *g, __m512i *h)
{
    __m512i ev = _mm512_setzero_si512(), od = _mm512_setzero_si512();
    _Pragma("GCC unroll 32")
    for (unsigned i = 0; i < m; i++) {
        __m512i k = _mm512_loadu_si512(kc.ek[wi][i]);
        ev = _mm512_xor_si512(ev, _mm512_clmulepi64_epi128(y[i], k, 0x00));
        od = _mm512_xor_si512(od, _mm512_clmulepi64_epi128(y[i], k, 0x11));
    }
    /* lane j: e_j / w^((j+1)L); prefix XOR over the lanes, plus the state
     * before, times w^((j+1)L): the state after frame j */
    __m512i a = scr_reduce(ev, od), z = _mm512_setzero_si512();
    a = _mm512_xor_si512(a, _mm512_alignr_epi64(a, z, 7));
    a = _mm512_xor_si512(a, _mm512_alignr_epi64(a, z, 6));
    a = _mm512_ternarylogic_epi64(a, _mm512_alignr_epi64(a, z, 4), *g, 0x96);
    __m512i k = _mm512_loadu_si512(kc.ck[wi]);
    __m512i after = scr_reduce(_mm512_clmulepi64_epi128(a, k, 0x00),
                               _mm512_clmulepi64_epi128(a, k, 0x11));
    *g = _mm512_permutexvar_epi64(_mm512_set1_epi64(7), after);
    __m512i hn = t_basis(after);
    __m512i start = _mm512_alignr_epi64(hn, *h, 7);
    *h = hn;
    return start;
}

/* ---- encode ----------------------------------------------------------- */

/* The wire-aligned plain words y (SYN and VCODE bits zero) of payload words
 * p[0..cnt) that start at word `at` of m, `prev` the payload word before
 * them; d0 gets region chunk 0 (META, then payload) when at is 0. */
AVX512 void plain_words(unsigned m, unsigned at, unsigned cnt, const __m512i *p, __m512i prev,
                        __m512i metav, __m512i *d0, __m512i *y)
{
    _Pragma("GCC unroll 8")
    for (unsigned i = 0; i < cnt; i++) {
        if (at + i == 0) {
            *d0 = _mm512_shrdi_epi64(p[0], metav, 2);
            y[0] = _mm512_srli_epi64(*d0, 2);
        } else {
            y[i] = _mm512_shrdi_epi64(p[i], i ? p[i - 1] : prev, 4);
        }
        if (at + i == m - 1)
            y[i] = _mm512_andnot_si512(_mm512_set1_epi64(0xFFF), y[i]);
    }
}

/* Accumulate the CRC products of words w[0..cnt) starting at word `at` */
AVX512 void crc_acc(unsigned m, unsigned at, unsigned cnt, const __m512i *w, __m512i *ev,
                    __m512i *od)
{
    _Pragma("GCC unroll 8")
    for (unsigned i = 0; i < cnt; i++) {
        __m512i k = _mm512_set1_epi64((long long)kc.crck[m - 1 - at - i]);
        *ev = _mm512_xor_si512(*ev, _mm512_clmulepi64_epi128(w[i], k, 0x00));
        *od = _mm512_xor_si512(*od, _mm512_clmulepi64_epi128(w[i], k, 0x01));
    }
}

/* Scramble plain words y[0..cnt) into wire words w, `prev` the wire word
 * before (for word 0: d0 from its start state, then SYN) */
AVX512 void scramble_words(unsigned at, unsigned cnt, const __m512i *y, __m512i prev,
                           __m512i d0, __m512i start, __m512i synv, __m512i *w)
{
    _Pragma("GCC unroll 8")
    for (unsigned i = 0; i < cnt; i++) {
        if (at + i == 0)
            w[0] = _mm512_or_si512(_mm512_srli_epi64(scr8(d0, start), 2), synv);
        else
            w[i] = scr8(y[i], i ? w[i - 1] : prev);
    }
}

/* The last wire word gets VCODE = CRC XOR frame ID */
AVX512 __m512i with_vcode(__m512i wl, __m512i ev, __m512i od, const uint16_t *ids)
{
    __m512i crc = crc_reduce(ev, od);
    __m512i idv = _mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)ids));
    return _mm512_ternarylogic_epi64(_mm512_andnot_si512(_mm512_set1_epi64(0xFFF), wl), crc,
                                     idv, 0xF6); /* a | (b ^ c) */
}

/* Encoding runs in two passes over up to four groups of eight frames: the
 * first loads the payloads and finds each group's start states (the only
 * link from group to group), the second scrambles, adds the CRCs and
 * stores, each group on its own, so that the groups' work overlaps. */
#define ENC_GROUPS 4

struct enc_plan {
    __m512i y[32];        /* plain words, wire-aligned */
    __m512i d0, start;    /* region chunk 0 and the states the frames start from */
};

/* Pass one for a group: payload words to plain words and start states */
AVX512 void encode_plan(unsigned m, unsigned wi, const uint8_t *pl, const uint8_t *meta,
                        struct enc_plan *e, __m512i *g, __m512i *h)
{
    __m512i metav = _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)meta));
    if (m == 4) {
        __m512i p[4];
        load_payload30(pl, p);
        plain_words(4, 0, 4, p, p[0], metav, &e->d0, e->y);
    } else {
        __m512i prev = _mm512_setzero_si512();
        const size_t pb = 8 * m - 2;
        for (unsigned b = 0; b < m / 8; b++) {
            __m512i r[8], p[8];
            uint64_t mask = b + 1 == m / 8 ? 0x3FFFFFFFFFFFFFFFULL : ~0ULL;
            _Pragma("GCC unroll 8")
            for (int k = 0; k < 8; k++)
                r[k] = _mm512_maskz_loadu_epi8(mask, pl + k * pb + 64 * b);
            tr8x8(r, p);
            plain_words(m, 8 * b, 8, p, prev, metav, &e->d0, e->y + 8 * b);
            prev = p[7];
        }
    }
    e->start = start_states(m, wi, e->y, g, h);
}

/* Pass two for a group: scrambled words, VCODE, wire bytes */
AVX512 void encode_emit(unsigned m, uint8_t *wire, const uint8_t *syn, const uint16_t *ids,
                        const struct enc_plan *e)
{
    __m512i synv = _mm512_slli_epi64(_mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)syn)),
                                     62);
    __m512i ev = _mm512_setzero_si512(), od = _mm512_setzero_si512();
    if (m == 4) {
        __m512i w[4];
        scramble_words(0, 4, e->y, e->d0, e->d0, e->start, synv, w);
        w[3] = _mm512_andnot_si512(_mm512_set1_epi64(0xFFF), w[3]);
        crc_acc(4, 0, 4, w, &ev, &od);
        w[3] = with_vcode(w[3], ev, od, ids);
        store_words(4, wire, 32, ~0ULL, w);
        return;
    }
    __m512i prev = e->d0;
    for (unsigned b = 0; b < m / 8; b++) {
        __m512i w[8], r[8];
        scramble_words(8 * b, 8, e->y + 8 * b, prev, e->d0, e->start, synv, w);
        prev = w[7];
        if (b + 1 == m / 8)
            w[7] = _mm512_andnot_si512(_mm512_set1_epi64(0xFFF), w[7]);
        crc_acc(m, 8 * b, 8, w, &ev, &od);
        if (b + 1 == m / 8)
            w[7] = with_vcode(w[7], ev, od, ids);
        tr8x8(w, r);
        _Pragma("GCC unroll 8")
        for (int k = 0; k < 8; k++)
            _mm512_storeu_si512(wire + k * 8 * m + 64 * b, r[k]);
    }
}

AVX512 unsigned encode_m(unsigned m, unsigned wi, uint8_t *wire, unsigned n, const uint8_t *syn,
                         const uint8_t *meta, const uint8_t *payloads, const uint16_t *ids,
                         uint64_t *scr)
{
    const size_t fb = 8 * m, pb = 8 * m - 2;
    uint64_t h0 = *scr & RIFL_SCRAMBLER_MASK;
    __m512i g = _mm512_set1_epi64((long long)rifl_scr_t(h0)), h = _mm512_set1_epi64((long long)h0);
    struct enc_plan plan[ENC_GROUPS];
    unsigned done = 0;
    while (done + 8 <= n) {
        unsigned groups = (n - done) / 8 < ENC_GROUPS ? (n - done) / 8 : ENC_GROUPS;
        for (unsigned q = 0; q < groups; q++) {
            unsigned j = done + 8 * q;
            encode_plan(m, wi, payloads + j * pb, meta + j, &plan[q], &g, &h);
        }
        for (unsigned q = 0; q < groups; q++) {
            unsigned j = done + 8 * q;
            encode_emit(m, wire + j * fb, syn + j, ids + j, &plan[q]);
        }
        done += 8 * groups;
    }
    *scr = (uint64_t)_mm_cvtsi128_si64(_mm512_castsi512_si128(
        _mm512_permutexvar_epi64(_mm512_set1_epi64(7), h)));
    return done;
}

/* ---- decode ----------------------------------------------------------- */

/* Every lane's fields to the slow path: frames that are not plain (with
 * `expect`) or all (without).  `plain` has a bit per plain lane. */
AVX512 void report8(unsigned m, struct rifl_batch_out *out, unsigned j0, __m512i w0, __m512i x0,
                    __m512i vcode, __m512i crc, __m512i first, __m512i last, unsigned plain)
{
    uint64_t sw[8], sx[8], sv[8], sc[8], sf[8], sl[8];
    _mm512_storeu_si512(sw, w0);
    _mm512_storeu_si512(sx, x0);
    _mm512_storeu_si512(sv, vcode);
    _mm512_storeu_si512(sc, crc);
    _mm512_storeu_si512(sf, first);
    _mm512_storeu_si512(sl, last);
    for (unsigned k = 0; k < 8; k++)
        if (!((plain >> k) & 1))
            rifl_batch_report(out, j0 + k, (unsigned)(sw[k] >> 62), (unsigned)(sx[k] >> 60) & 3,
                              (unsigned)sv[k], (unsigned)sc[k], sf[k],
                              (unsigned)(sl[k] >> 16) & 0xFF, 8 * m - 2);
}

/* Descramble wire words w[0..cnt) in place (the wire's alignment), `prev`
 * the wire word before w[0] */
AVX512 void descramble_words(unsigned cnt, const __m512i *w, __m512i prev, __m512i *x)
{
    _Pragma("GCC unroll 8")
    for (unsigned i = 0; i < cnt; i++) {
        __m512i b = i ? w[i - 1] : prev;
        x[i] = _mm512_ternarylogic_epi64(w[i], _mm512_shrdi_epi64(w[i], b, 13),
                                         _mm512_shrdi_epi64(w[i], b, 33), 0x96);
    }
}

/* Word 0 descrambled: its history is the end of the frame one lane down
 * (hv), whose last two bits stand in for SYN so that the stream runs on */
AVX512 __m512i descramble_first(__m512i w0, __m512i hv)
{
    __m512i top2 = _mm512_set1_epi64((long long)(3ULL << 62));
    __m512i v = _mm512_ternarylogic_epi64(top2, _mm512_slli_epi64(hv, 62), w0, 0xCA);
    __m512i x;
    descramble_words(1, &v, _mm512_srli_epi64(hv, 2), &x);
    return x;
}

/* Payload words: the descrambled bits after SYN and META; x[cnt] is the
 * next word's (or none for the frame's last) */
AVX512 void payload_words(unsigned cnt, const __m512i *x, __m512i next, int last, __m512i *p)
{
    _Pragma("GCC unroll 8")
    for (unsigned i = 0; i < cnt; i++) {
        if (i + 1 < cnt)
            p[i] = _mm512_shldi_epi64(x[i], x[i + 1], 4);
        else
            p[i] = last ? _mm512_slli_epi64(x[i], 4) : _mm512_shldi_epi64(x[i], next, 4);
    }
}

/* The receiver's check of eight frames and the records of those that need
 * one.  w0, x0: first wire word and its descrambled bits; p0, pl: first
 * and last payload words. */
AVX512 void check8(unsigned m, struct rifl_batch_out *out, unsigned j0, __m512i w0, __m512i x0,
                   __m512i vcode, __m512i crc, __m512i p0, __m512i pl)
{
    unsigned plain = 0;
    if (out->expect) {
        /* SYN 01, META 01 and the expected ID, as one 16-bit value */
        __m512i top2 = _mm512_set1_epi64((long long)(3ULL << 62));
        __m512i sm = _mm512_ternarylogic_epi64(top2, w0, x0, 0xCA);
        __m512i got = _mm512_ternarylogic_epi64(_mm512_srli_epi64(sm, 48),
                                                _mm512_set1_epi64(0xF000), crc, 0xEA);
        got = _mm512_xor_si512(got, vcode); /* ((sm>>48) & 0xF000) | crc, then ^ vcode */
        __m512i want = _mm512_or_si512(
            _mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)(out->expect + j0))),
            _mm512_set1_epi64(0x5000));
        plain = _mm512_cmpeq_epi64_mask(got, want);
    }
    if (plain != 0xFF)
        report8(m, out, j0, w0, x0, vcode, crc, p0, pl, plain);
}

AVX512 void decode8_w4(const uint8_t *wire, uint8_t *pl, struct rifl_batch_out *out,
                       unsigned j0, __m512i *hprev)
{
    __m512i w[4], x[4], p[4];
    load_words(4, wire, 32, ~0ULL, w);
    __m512i vcode = _mm512_and_si512(w[3], _mm512_set1_epi64(0xFFF));
    __m512i hl = _mm512_srli_epi64(w[3], 12), hv = _mm512_alignr_epi64(hl, *hprev, 7);
    *hprev = hl;
    x[0] = descramble_first(w[0], hv);
    descramble_words(3, w + 1, w[0], x + 1);
    payload_words(4, x, x[0], 1, p);
    if (pl)
        store_payload30(pl, p);
    __m512i ev = _mm512_setzero_si512(), od = _mm512_setzero_si512();
    w[3] = _mm512_andnot_si512(_mm512_set1_epi64(0xFFF), w[3]);
    crc_acc(4, 0, 4, w, &ev, &od);
    check8(4, out, j0, w[0], x[0], vcode, crc_reduce(ev, od), p[0], p[3]);
}

/* Wider frames, eight words at a time; the last block first, for the
 * histories.  A block's payload words wait for the next block's first
 * descrambled word. */
AVX512 void decode8_wide(unsigned m, const uint8_t *wire, uint8_t *pl,
                         struct rifl_batch_out *out, unsigned j0, __m512i *hprev)
{
    const unsigned nb = m / 8;
    const size_t fb = 8 * m, pb = 8 * m - 2;
    __m512i wl[8], r[8], x[8], xp[8], p[8];
    _Pragma("GCC unroll 8")
    for (int k = 0; k < 8; k++)
        r[k] = _mm512_loadu_si512(wire + k * fb + 64 * (nb - 1));
    tr8x8(r, wl);
    __m512i vcode = _mm512_and_si512(wl[7], _mm512_set1_epi64(0xFFF));
    __m512i hl = _mm512_srli_epi64(wl[7], 12), hv = _mm512_alignr_epi64(hl, *hprev, 7);
    *hprev = hl;
    __m512i ev = _mm512_setzero_si512(), od = _mm512_setzero_si512(), prev = hv;
    __m512i w0 = prev, x0 = prev, p0 = prev;
    for (unsigned b = 0; b < nb; b++) {
        __m512i w[8];
        if (b + 1 < nb) {
            _Pragma("GCC unroll 8")
            for (int k = 0; k < 8; k++)
                r[k] = _mm512_loadu_si512(wire + k * fb + 64 * b);
            tr8x8(r, w);
        } else {
            _Pragma("GCC unroll 8")
            for (int k = 0; k < 8; k++)
                w[k] = wl[k];
            /* the VCODE bits out of the CRC (they reach no payload bit in
             * the descrambler either) */
            w[7] = _mm512_andnot_si512(_mm512_set1_epi64(0xFFF), wl[7]);
        }
        if (b == 0) {
            x[0] = descramble_first(w[0], hv);
            w0 = w[0];
            x0 = x[0];
            descramble_words(7, w + 1, w[0], x + 1);
        } else {
            descramble_words(7, w + 1, w[0], x + 1);
            descramble_words(1, w, prev, x);
        }
        prev = w[7];
        crc_acc(m, 8 * b, 8, w, &ev, &od);
        if (b > 0) {
            payload_words(8, xp, x[0], 0, p);
            if (b == 1)
                p0 = p[0];
            if (pl) {
                tr8x8(p, r);
                _Pragma("GCC unroll 8")
                for (int k = 0; k < 8; k++)
                    _mm512_storeu_si512(pl + k * pb + 64 * (b - 1), r[k]);
            }
        }
        _Pragma("GCC unroll 8")
        for (int k = 0; k < 8; k++)
            xp[k] = x[k];
    }
    payload_words(8, xp, xp[0], 1, p);
    if (nb == 1)
        p0 = p[0];
    if (pl) {
        tr8x8(p, r);
        _Pragma("GCC unroll 8")
        for (int k = 0; k < 8; k++)
            _mm512_mask_storeu_epi8(pl + k * pb + 64 * (nb - 1), 0x3FFFFFFFFFFFFFFFULL, r[k]);
    }
    check8(m, out, j0, w0, x0, vcode, crc_reduce(ev, od), p0, p[7]);
}

AVX512 void decode8(unsigned m, const uint8_t *wire, uint8_t *pl, struct rifl_batch_out *out,
                    unsigned j0, __m512i *hprev)
{
    if (m == 4)
        decode8_w4(wire, pl, out, j0, hprev);
    else
        decode8_wide(m, wire, pl, out, j0, hprev);
}

AVX512 unsigned decode_m(unsigned m, const uint8_t *wire, unsigned n, uint64_t *descr,
                         uint8_t *payloads, struct rifl_batch_out *out)
{
    __m512i h = _mm512_set1_epi64((long long)(*descr & RIFL_SCRAMBLER_MASK));
    unsigned done;
    for (done = 0; done + 8 <= n; done += 8)
        decode8(m, wire + (size_t)done * 8 * m,
                payloads ? payloads + (size_t)done * (8 * m - 2) : NULL, out, done, &h);
    *descr = (uint64_t)_mm_cvtsi128_si64(_mm512_castsi512_si128(
                 _mm512_permutexvar_epi64(_mm512_set1_epi64(7), h))) & RIFL_SCRAMBLER_MASK;
    return done;
}

/* ---- one function per width ------------------------------------------- */

#define KERNEL_WIDTH(M, WI)                                                              \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vbmi2,vpclmulqdq"), \
                   noinline)) static unsigned                                            \
    encode_w##M(uint8_t *wire, unsigned n, const uint8_t *syn, const uint8_t *meta,      \
                const uint8_t *payloads, const uint16_t *ids, uint64_t *scr)             \
    {                                                                                    \
        return encode_m(M, WI, wire, n, syn, meta, payloads, ids, scr);                  \
    }                                                                                    \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vbmi2,vpclmulqdq"), \
                   noinline)) static unsigned                                            \
    decode_w##M(const uint8_t *wire, unsigned n, uint64_t *descr, uint8_t *payloads,     \
                struct rifl_batch_out *out)                                              \
    {                                                                                    \
        return decode_m(M, wire, n, descr, payloads, out);                               \
    }
KERNEL_WIDTH(4, 0)
KERNEL_WIDTH(8, 1)
KERNEL_WIDTH(16, 2)
KERNEL_WIDTH(32, 3)

static unsigned k_encode(uint8_t *wire, unsigned frame_bits, unsigned n, const uint8_t *syn,
                         const uint8_t *meta, const uint8_t *payloads, const uint16_t *ids,
                         uint64_t *scr)
{
    switch (frame_bits) {
    case 256: return encode_w4(wire, n, syn, meta, payloads, ids, scr);
    case 512: return encode_w8(wire, n, syn, meta, payloads, ids, scr);
    case 1024: return encode_w16(wire, n, syn, meta, payloads, ids, scr);
    default: return encode_w32(wire, n, syn, meta, payloads, ids, scr);
    }
}

static unsigned k_decode(const uint8_t *wire, unsigned frame_bits, unsigned n, uint64_t *descr,
                         uint8_t *payloads, struct rifl_batch_out *out)
{
    switch (frame_bits) {
    case 256: return decode_w4(wire, n, descr, payloads, out);
    case 512: return decode_w8(wire, n, descr, payloads, out);
    case 1024: return decode_w16(wire, n, descr, payloads, out);
    default: return decode_w32(wire, n, descr, payloads, out);
    }
}

static int k_width(unsigned frame_bits)
{
    return frame_bits >= 256 && frame_bits <= 2048 && rifl_frame_width_check(frame_bits) == RIFL_OK;
}

/* ---- set-up ----------------------------------------------------------- */

static void setup_permutes(void)
{
    const int lo[8] = { 0, 1, 2, 3, 8, 9, 10, 11 }, hi[8] = { 4, 5, 6, 7, 12, 13, 14, 15 };
    const int zl[8] = { 0, 1, 8, 9, 2, 3, 10, 11 }, zh[8] = { 4, 5, 12, 13, 6, 7, 14, 15 };
    byte_index(kc.tr_lo, lo);
    byte_index(kc.tr_hi, hi);
    byte_index(kc.z_lo, zl);
    byte_index(kc.z_hi, zh);
    /* 30-byte payloads: word i of frame k is at byte 30k + 8i */
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 8; k++)
            for (int r = 0; r < 8; r++) {
                int src = 30 * k + 8 * i + 7 - r;
                kc.pl_a[i][8 * k + r] = (uint8_t)(k < 4 ? src : 0);
                kc.pl_b[i][8 * k + r] = (uint8_t)(k < 4 ? 0 : src - 120);
            }
    for (int q = 0; q < 4; q++) {
        kc.ps_mask[q] = 0;
        for (int t = 0; t < 64; t++) {
            int b = 64 * q + t, k = b / 30, pos = b % 30, i = pos / 8, r = pos % 8;
            int src = b < 240 ? 64 * (i & 1) + 8 * k + 7 - r : 0;
            kc.ps_a[q][t] = (uint8_t)src;
            kc.ps_b[q][t] = (uint8_t)src;
            if (b < 240 && i >= 2)
                kc.ps_mask[q] |= 1ULL << t;
        }
    }
}

static int k_setup(void)
{
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("avx512vbmi") ||
        !__builtin_cpu_supports("avx512vbmi2") || !__builtin_cpu_supports("vpclmulqdq"))
        return 0;
    for (unsigned wi = 0; wi < 4; wi++) {
        long F = 256L << wi, L = F - 14;
        for (long i = 0; i < F / 64; i++)
            for (long j = 0; j < 8; j++)
                kc.ek[wi][i][j] = rifl_scr_wpow(F - 43 - 64 * i - (j + 1) * L);
        for (long j = 0; j < 8; j++)
            kc.ck[wi][j] = rifl_scr_wpow((j + 1) * L);
    }
    for (unsigned j = 0; j < 32; j++)
        kc.crck[j] = rifl_crc_xpow(64 * j + 12);
    /* floor(x^76 / G) by long division */
    uint64_t q = 0, rem = 1;
    for (int k = 0; k < 76; k++) {
        rem <<= 1;
        q <<= 1;
        if (rem & 0x1000u) {
            rem ^= 0x1000u | RIFL_CRC12_POLY;
            q |= 1;
        }
    }
    kc.crc_mu = q; /* the top bit, x^64, falls off the 64-bit word */
    setup_permutes();
    return 1;
}

const struct rifl_batch_kernel rifl_batch_avx512 = {
    "avx512", "AVX-512 F, BW, VL, VBMI and VBMI2 with VPCLMULQDQ", k_setup, k_width, k_encode,
    k_decode,
};
#endif

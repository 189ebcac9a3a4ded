/* Batch codec, AVX-512 path: eight frames at a time, one frame per 64-bit
 * lane, for frames of 256 to 2048 bits (m = F/64 = 4 to 32 words).
 *
 * - Frames move between memory and lanes by transposes in registers, four
 *   words at a time: a 256-bit load and a 256-bit insert put the same four
 *   words of frames k and k+4 in one vector (the transpose's first round),
 *   then an unpack and a two-table byte permute make vectors of one word of
 *   all eight frames, each word's bytes swapped to big-endian order on the
 *   way.  Stores run the same steps backwards and write 256-bit halves.
 *   (The wire bytes of eight 256-bit frames are contiguous: there vectors
 *   hold frames 2k and 2k+1 and move as whole 512-bit ones.)  A
 *   payload's end (its last word has 6 bytes) is loaded and stored with
 *   byte masks; the 30-byte payloads of 256-bit frames are moved as 32-byte
 *   rows, masked only at the end of a batch.  The shuffles are what every
 *   step here competes for.  On Zen 5 a two-table byte permute (VPERMT2B)
 *   costs what a qword permute does, so it replaces a qword permute and a
 *   byte shuffle; on Sapphire Rapids it takes two cycles of the shuffle
 *   port, about what the pair costs there.
 * - The CRC: a byte permute puts byte k of a word of the eight frames in
 *   lane k, where bit matrices (GF2P8AFFINEQB, one per lane and word) give
 *   each byte's share of CRC bits 0-7 and 8-11, already reduced mod G; the
 *   words' shares are XORed, and at the end the lanes.  (Carry-less
 *   multiplies, as on the AVX2 path, take two VPCLMULQDQ per word and a
 *   Barrett reduction; on Zen 5 a VPCLMULQDQ costs about five times a
 *   GF2P8AFFINEQB or a byte permute.)
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
    __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,vpclmulqdq,gfni"))) \
    static inline __attribute__((always_inline))

/* The carry-less multiply constants, shared with the AVX2 path and
 * computed once by the set-up */
#define KC rifl_batch_k

/* ---- transposes ------------------------------------------------------- */

/* The transposes' last round: word pairs (0,2) and (1,3) of two vectors,
 * every word's bytes reversed on the way (big-endian), in one two-table byte
 * permute: byte t of qword q of the result is byte 7-t of qword ix[q] of
 * the two vectors (0-7 the first, 8-15 the second). */
#define QW_SWAP(q) 8 * (q) + 7, 8 * (q) + 6, 8 * (q) + 5, 8 * (q) + 4, 8 * (q) + 3, \
                   8 * (q) + 2, 8 * (q) + 1, 8 * (q)
static const uint8_t ix_even[64] = { QW_SWAP(0), QW_SWAP(1), QW_SWAP(8), QW_SWAP(9),
                                     QW_SWAP(4), QW_SWAP(5), QW_SWAP(12), QW_SWAP(13) };
static const uint8_t ix_odd[64] = { QW_SWAP(2), QW_SWAP(3), QW_SWAP(10), QW_SWAP(11),
                                    QW_SWAP(6), QW_SWAP(7), QW_SWAP(14), QW_SWAP(15) };

AVX512 __m512i perm_swap(__m512i a, const uint8_t *ix, __m512i b)
{
    return _mm512_permutex2var_epi8(a, _mm512_loadu_si512(ix), b);
}

/* The rounds after the loads: qword unpacks of vectors 0-1 and 2-3, then
 * the last round by the permutes `ie` and `io` */
AVX512 void unpack_perm(const __m512i *a, const uint8_t *ie, const uint8_t *io, __m512i *c)
{
    __m512i l01 = _mm512_unpacklo_epi64(a[0], a[1]), h01 = _mm512_unpackhi_epi64(a[0], a[1]);
    __m512i l23 = _mm512_unpacklo_epi64(a[2], a[3]), h23 = _mm512_unpackhi_epi64(a[2], a[3]);
    c[0] = perm_swap(l01, ie, l23);
    c[1] = perm_swap(h01, ie, h23);
    c[2] = perm_swap(l01, io, l23);
    c[3] = perm_swap(h01, io, h23);
}

/* Four words of eight frames, rows k and k+4 sharing a vector: `mask` has a
 * bit per byte of the 32 at `off` in each row (all but the last two at a
 * payload's end).  The first round of the transpose is in the loads, the
 * rest is an unpack and a byte permute (with the byte swap) per word. */
AVX512 void load_half(const uint8_t *base, size_t stride, size_t off, uint32_t mask, __m512i *c)
{
    __m512i a[4];
    _Pragma("GCC unroll 4")
    for (int k = 0; k < 4; k++) {
        const uint8_t *lo = base + k * stride + off, *hi = base + (k + 4) * stride + off;
        if (mask == 0xFFFFFFFFu) {
            a[k] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)lo)),
                                      _mm256_loadu_si256((const __m256i *)hi), 1);
        } else {
            a[k] = _mm512_maskz_loadu_epi8(mask, lo);
            a[k] = _mm512_mask_loadu_epi8(a[k], (uint64_t)mask << 32, hi - 32);
        }
    }
    unpack_perm(a, ix_even, ix_odd, c);
}

/* The inverse: the last round of the transpose is in the stores */
AVX512 void store_half(uint8_t *base, size_t stride, size_t off, uint32_t mask,
                       const __m512i *c)
{
    __m512i l01 = perm_swap(c[0], ix_even, c[2]), l23 = perm_swap(c[0], ix_odd, c[2]);
    __m512i h01 = perm_swap(c[1], ix_even, c[3]), h23 = perm_swap(c[1], ix_odd, c[3]);
    __m512i a[4] = { _mm512_unpacklo_epi64(l01, h01), _mm512_unpackhi_epi64(l01, h01),
                     _mm512_unpacklo_epi64(l23, h23), _mm512_unpackhi_epi64(l23, h23) };
    _Pragma("GCC unroll 4")
    for (int k = 0; k < 4; k++) {
        uint8_t *lo = base + k * stride + off, *hi = base + (k + 4) * stride + off;
        if (mask == 0xFFFFFFFFu) {
            _mm256_storeu_si256((__m256i *)lo, _mm512_castsi512_si256(a[k]));
            _mm256_storeu_si256((__m256i *)hi, _mm512_extracti64x4_epi64(a[k], 1));
        } else {
            _mm512_mask_storeu_epi8(lo, mask, a[k]);
            _mm512_mask_storeu_epi8(hi - 32, (uint64_t)mask << 32, a[k]);
        }
    }
}

/* The same for 256-bit frames, whose eight frames are 256 contiguous bytes:
 * vector k holds frames 2k and 2k+1, so that every load and store is a
 * whole 512-bit one.  Only the permutes' words differ. */
static const uint8_t ix4_even[64] = { QW_SWAP(0), QW_SWAP(4), QW_SWAP(1), QW_SWAP(5),
                                      QW_SWAP(8), QW_SWAP(12), QW_SWAP(9), QW_SWAP(13) };
static const uint8_t ix4_odd[64] = { QW_SWAP(2), QW_SWAP(6), QW_SWAP(3), QW_SWAP(7),
                                     QW_SWAP(10), QW_SWAP(14), QW_SWAP(11), QW_SWAP(15) };
static const uint8_t ix4_lo[64] = { QW_SWAP(0), QW_SWAP(2), QW_SWAP(8), QW_SWAP(10),
                                    QW_SWAP(1), QW_SWAP(3), QW_SWAP(9), QW_SWAP(11) };
static const uint8_t ix4_hi[64] = { QW_SWAP(4), QW_SWAP(6), QW_SWAP(12), QW_SWAP(14),
                                    QW_SWAP(5), QW_SWAP(7), QW_SWAP(13), QW_SWAP(15) };

AVX512 void load_wire4(const uint8_t *base, __m512i *c)
{
    __m512i a[4];
    _Pragma("GCC unroll 4")
    for (int k = 0; k < 4; k++)
        a[k] = _mm512_loadu_si512(base + 64 * k);
    unpack_perm(a, ix4_even, ix4_odd, c);
}

AVX512 void store_wire4(uint8_t *base, const __m512i *c)
{
    __m512i l01 = perm_swap(c[0], ix4_lo, c[2]), l23 = perm_swap(c[0], ix4_hi, c[2]);
    __m512i h01 = perm_swap(c[1], ix4_lo, c[3]), h23 = perm_swap(c[1], ix4_hi, c[3]);
    _mm512_storeu_si512(base, _mm512_unpacklo_epi64(l01, h01));
    _mm512_storeu_si512(base + 64, _mm512_unpackhi_epi64(l01, h01));
    _mm512_storeu_si512(base + 128, _mm512_unpacklo_epi64(l23, h23));
    _mm512_storeu_si512(base + 192, _mm512_unpackhi_epi64(l23, h23));
}

/* The payloads of eight 256-bit frames, 30 contiguous bytes each: 256-bit
 * stores of 32 bytes, row after row, so that the two bytes a row writes
 * past its end are written over by the next row's store.  With `end` (no
 * payload after these eight) the last row is stored with a byte mask. */
AVX512 void store_pay4(uint8_t *base, const __m512i *c, int end)
{
    __m512i l01 = perm_swap(c[0], ix_even, c[2]), l23 = perm_swap(c[0], ix_odd, c[2]);
    __m512i h01 = perm_swap(c[1], ix_even, c[3]), h23 = perm_swap(c[1], ix_odd, c[3]);
    __m512i a[4] = { _mm512_unpacklo_epi64(l01, h01), _mm512_unpackhi_epi64(l01, h01),
                     _mm512_unpacklo_epi64(l23, h23), _mm512_unpackhi_epi64(l23, h23) };
    _Pragma("GCC unroll 4")
    for (int k = 0; k < 4; k++)
        _mm256_storeu_si256((__m256i *)(base + 30 * k), _mm512_castsi512_si256(a[k]));
    _Pragma("GCC unroll 3")
    for (int k = 0; k < 3; k++)
        _mm256_storeu_si256((__m256i *)(base + 30 * (k + 4)), _mm512_extracti64x4_epi64(a[k], 1));
    if (end)
        _mm512_mask_storeu_epi8(base + 30 * 7 - 32, 0x3FFFFFFFull << 32, a[3]);
    else
        _mm256_storeu_si256((__m256i *)(base + 30 * 7), _mm512_extracti64x4_epi64(a[3], 1));
}

/* ---- carry-less arithmetic on eight lanes ----------------------------- */

/* The lanes' 128-bit products, even lanes' in `ev` and odd lanes' in `od`,
 * as (low, high) words per lane. */
AVX512 void split128(__m512i ev, __m512i od, __m512i *lo, __m512i *hi)
{
    *lo = _mm512_unpacklo_epi64(ev, od);
    *hi = _mm512_unpackhi_epi64(ev, od);
}

/* Barrett step: the quotient of (hi:lo) >> 33 by a polynomial whose
 * floor(x^97/P) is x^64 + mu */
AVX512 __m512i quotient(__m512i lo, __m512i hi, uint64_t mu)
{
    __m512i b = _mm512_shrdi_epi64(lo, hi, 33);
    __m512i k = _mm512_set1_epi64((long long)mu);
    __m512i qe = _mm512_clmulepi64_epi128(b, k, 0x00), qo = _mm512_clmulepi64_epi128(b, k, 0x01);
    return _mm512_xor_si512(_mm512_unpackhi_epi64(qe, qo), b);
}

/* remainders mod Q (33 bits) of products below x^97 */
AVX512 __m512i scr_reduce(__m512i ev, __m512i od)
{
    __m512i lo, hi;
    split128(ev, od, &lo, &hi);
    __m512i q = quotient(lo, hi, RIFL_SCR_MU);
    /* q * Q = q + q w^20 + q w^33: the last term has no low bits */
    __m512i r = _mm512_ternarylogic_epi64(lo, q, _mm512_slli_epi64(q, 20), 0x96);
    return _mm512_and_si512(r, _mm512_set1_epi64((long long)RIFL_SCRAMBLER_MASK));
}

/* ---- scrambler -------------------------------------------------------- */

/* (1+u)(1+u^2)(1+u^4) per lane, u = shift right by 13 and by 33; on 64
 * bits u^2 = y^26 and u^4 = y^52, and (1+y^26)(1+y^52) = 1+y^26+y^52 */
AVX512 __m512i inv8(__m512i s)
{
    s = _mm512_ternarylogic_epi64(s, _mm512_srli_epi64(s, 13), _mm512_srli_epi64(s, 33), 0x96);
    return _mm512_ternarylogic_epi64(s, _mm512_srli_epi64(s, 26), _mm512_srli_epi64(s, 52), 0x96);
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
/* The weighted sums of plain words y[0..cnt) starting at word `at`, even
 * lanes' products into ev and odd lanes' into od */
AVX512 void start_acc(unsigned wi, unsigned at, unsigned cnt, const __m512i *y, __m512i *ev,
                      __m512i *od)
{
    _Pragma("GCC unroll 8")
    for (unsigned i = 0; i < cnt; i += 2) {
        __m512i k0 = _mm512_loadu_si512(KC.ek[wi][at + i]);
        __m512i k1 = _mm512_loadu_si512(KC.ek[wi][at + i + 1]);
        *ev = _mm512_ternarylogic_epi64(*ev, _mm512_clmulepi64_epi128(y[i], k0, 0x00),
                                        _mm512_clmulepi64_epi128(y[i + 1], k1, 0x00), 0x96);
        *od = _mm512_ternarylogic_epi64(*od, _mm512_clmulepi64_epi128(y[i], k0, 0x11),
                                        _mm512_clmulepi64_epi128(y[i + 1], k1, 0x11), 0x96);
    }
}

/* The states after the sums of start_acc */
AVX512 __m512i start_states(unsigned wi, __m512i ev, __m512i od, __m512i *g, __m512i *h)
{
    /* lane j: e_j / w^((j+1)L); prefix XOR over the lanes, plus the state
     * before, times w^((j+1)L): the state after frame j */
    __m512i a = scr_reduce(ev, od), z = _mm512_setzero_si512();
    a = _mm512_xor_si512(a, _mm512_alignr_epi64(a, z, 7));
    a = _mm512_xor_si512(a, _mm512_alignr_epi64(a, z, 6));
    a = _mm512_ternarylogic_epi64(a, _mm512_alignr_epi64(a, z, 4), *g, 0x96);
    __m512i k = _mm512_loadu_si512(KC.ck[wi]);
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

/* Byte k of the words of eight frames into lane k, for the CRC's bit
 * matrices: byte 8k+f of the result is byte 8f+k of the word vector */
static const uint8_t ix_bytes_t[64] = {
    0, 8, 16, 24, 32, 40, 48, 56, 1, 9, 17, 25, 33, 41, 49, 57,
    2, 10, 18, 26, 34, 42, 50, 58, 3, 11, 19, 27, 35, 43, 51, 59,
    4, 12, 20, 28, 36, 44, 52, 60, 5, 13, 21, 29, 37, 45, 53, 61,
    6, 14, 22, 30, 38, 46, 54, 62, 7, 15, 23, 31, 39, 47, 55, 63,
};

/* Accumulate the CRC bits of words w[0..cnt) starting at word `at`: each
 * word's bytes transposed, then one bit-matrix multiply per byte for CRC
 * bits 0-7 (into lo) and one for bits 8-11 (into hi), two words per
 * three-way XOR.  Byte f of lane k of lo and hi is what byte k of frame f's
 * words gives. */
AVX512 void crc_acc(unsigned m, unsigned at, unsigned cnt, const __m512i *w, __m512i *lo,
                    __m512i *hi)
{
    const __m512i bt = _mm512_loadu_si512(ix_bytes_t);
    _Pragma("GCC unroll 4")
    for (unsigned i = 0; i < cnt; i += 2) {
        const uint64_t(*k0)[8] = KC.crc_gf[m - 1 - at - i], (*k1)[8] = KC.crc_gf[m - 2 - at - i];
        __m512i t0 = _mm512_permutexvar_epi8(bt, w[i]), t1 = _mm512_permutexvar_epi8(bt, w[i + 1]);
        *lo = _mm512_ternarylogic_epi64(
            *lo, _mm512_gf2p8affine_epi64_epi8(t0, _mm512_loadu_si512(k0[0]), 0),
            _mm512_gf2p8affine_epi64_epi8(t1, _mm512_loadu_si512(k1[0]), 0), 0x96);
        *hi = _mm512_ternarylogic_epi64(
            *hi, _mm512_gf2p8affine_epi64_epi8(t0, _mm512_loadu_si512(k0[1]), 0),
            _mm512_gf2p8affine_epi64_epi8(t1, _mm512_loadu_si512(k1[1]), 0), 0x96);
    }
}

/* The eight CRCs XOR x (eight 16-bit values), one per lane: the bytes f of
 * the eight lanes of lo and hi XORed, as 16-bit values, then XOR word f of
 * x into lane f */
AVX512 __m512i crc_fold(__m512i lo, __m512i hi, __m128i x)
{
    __m512i u = _mm512_xor_si512(_mm512_unpacklo_epi8(lo, hi), _mm512_unpackhi_epi8(lo, hi));
    u = _mm512_xor_si512(u, _mm512_shuffle_i64x2(u, u, 0x4E));
    u = _mm512_xor_si512(u, _mm512_shuffle_i64x2(u, u, 0xB1));
    return _mm512_cvtepu16_epi64(_mm_xor_si128(_mm512_castsi512_si128(u), x));
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

/* The last wire word gets VCODE = CRC XOR frame ID in its low 12 bits */
AVX512 __m512i with_vcode(__m512i wl, __m512i lo, __m512i hi, const uint16_t *ids)
{
    __m512i v = crc_fold(lo, hi, _mm_loadu_si128((const __m128i *)ids));
    return _mm512_ternarylogic_epi64(wl, _mm512_set1_epi64(0xFFF), v, 0xBA); /* (a & ~b) | c */
}

/* Encoding runs in two passes over up to four groups of eight frames: the
 * first loads the payloads and finds each group's start states (the only
 * link from group to group), the second scrambles, adds the CRCs and
 * stores, each group on its own, so that the groups' work overlaps. */
#define ENC_GROUPS 4

struct enc_plan {
    __m512i y[32];        /* plain words, wire-aligned */
    __m512i d0, start;    /* region chunk 0 and the states the frames start from */
    __m512i prev, lo, hi; /* pass two: the wire word before, the CRC bits */
};

/* Pass one for a group: payload words to plain words and start states */
AVX512 void encode_plan(unsigned m, unsigned wi, const uint8_t *pl, const uint8_t *meta, int end,
                        struct enc_plan *e, __m512i *g, __m512i *h)
{
    __m512i metav = _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)meta));
    __m512i ev = _mm512_setzero_si512(), od = _mm512_setzero_si512();
    if (m == 4) {
        /* 32 bytes a row, the next row's first two in the VCODE bits,
         * unless no payload follows (`end`) */
        __m512i p[4];
        load_half(pl, 30, 0, end ? 0x3FFFFFFFu : ~0u, p);
        plain_words(4, 0, 4, p, p[0], metav, &e->d0, e->y);
        start_acc(wi, 0, 4, e->y, &ev, &od);
    } else {
        /* each block's sums while its plain words are at hand */
        __m512i prev = _mm512_setzero_si512();
        const size_t pb = 8 * m - 2;
        for (unsigned b = 0; b < m / 8; b++) {
            __m512i p[8], y[8];
            load_half(pl, pb, 64 * b, ~0u, p);
            load_half(pl, pb, 64 * b + 32, b + 1 == m / 8 ? 0x3FFFFFFFu : ~0u, p + 4);
            plain_words(m, 8 * b, 8, p, prev, metav, &e->d0, y);
            start_acc(wi, 8 * b, 8, y, &ev, &od);
            _Pragma("GCC unroll 8")
            for (unsigned k = 0; k < 8; k++)
                e->y[8 * b + k] = y[k];
            prev = p[7];
        }
    }
    e->start = start_states(wi, ev, od, g, h);
    e->prev = e->d0;
}

/* Pass two, 256-bit frames: scrambled words, VCODE, wire bytes */
AVX512 void encode_emit4(uint8_t *wire, const uint8_t *syn, const uint16_t *ids,
                         const struct enc_plan *e)
{
    __m512i synv = _mm512_slli_epi64(_mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)syn)),
                                     62);
    __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512(), w[4];
    scramble_words(0, 4, e->y, e->d0, e->d0, e->start, synv, w);
    crc_acc(4, 0, 4, w, &lo, &hi);
    w[3] = with_vcode(w[3], lo, hi, ids);
    store_wire4(wire, w);
}

/* Pass two, wider frames: block b of eight words of a group.  The groups
 * of a pass go block by block, so that their scrambler chains (one per lane,
 * word after word) run side by side. */
AVX512 void encode_emit_block(unsigned m, unsigned b, uint8_t *wire, const uint8_t *syn,
                              const uint16_t *ids, struct enc_plan *e)
{
    __m512i synv = _mm512_slli_epi64(_mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)syn)),
                                     62);
    __m512i w[8];
    if (b == 0) {
        e->lo = _mm512_setzero_si512();
        e->hi = _mm512_setzero_si512();
    }
    scramble_words(8 * b, 8, e->y + 8 * b, e->prev, e->d0, e->start, synv, w);
    e->prev = w[7];
    crc_acc(m, 8 * b, 8, w, &e->lo, &e->hi);
    if (b + 1 == m / 8)
        w[7] = with_vcode(w[7], e->lo, e->hi, ids);
    store_half(wire, 8 * m, 64 * b, ~0u, w);
    store_half(wire, 8 * m, 64 * b + 32, ~0u, w + 4);
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
            encode_plan(m, wi, payloads + j * pb, meta + j, j + 8 == n, &plan[q], &g, &h);
        }
        for (unsigned b = 0; b < (m == 4 ? 1 : m / 8); b++)
            for (unsigned q = 0; q < groups; q++) {
                unsigned j = done + 8 * q;
                if (m == 4)
                    encode_emit4(wire + j * fb, syn + j, ids + j, &plan[q]);
                else
                    encode_emit_block(m, b, wire + j * fb, syn + j, ids + j, &plan[q]);
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
                       unsigned j0, int end, __m512i *hprev)
{
    __m512i w[4], x[4], p[4];
    load_wire4(wire, w);
    __m512i vcode = _mm512_and_si512(w[3], _mm512_set1_epi64(0xFFF));
    __m512i hl = _mm512_srli_epi64(w[3], 12), hv = _mm512_alignr_epi64(hl, *hprev, 7);
    *hprev = hl;
    x[0] = descramble_first(w[0], hv);
    descramble_words(3, w + 1, w[0], x + 1);
    payload_words(4, x, x[0], 1, p);
    if (pl)
        store_pay4(pl, p, end);
    __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
    crc_acc(4, 0, 4, w, &lo, &hi);
    check8(4, out, j0, w[0], x[0], vcode, crc_fold(lo, hi, _mm_setzero_si128()), p[0], p[3]);
}

/* Wider frames, eight words at a time; the last block first, for the
 * histories.  A block's payload words wait for the next block's first
 * descrambled word. */
AVX512 void decode8_wide(unsigned m, const uint8_t *wire, uint8_t *pl,
                         struct rifl_batch_out *out, unsigned j0, __m512i *hprev)
{
    const unsigned nb = m / 8;
    const size_t fb = 8 * m, pb = 8 * m - 2;
    __m512i wl[8], x[8], xp[8], p[8];
    load_half(wire, fb, 64 * (nb - 1), ~0u, wl);
    load_half(wire, fb, 64 * (nb - 1) + 32, ~0u, wl + 4);
    __m512i vcode = _mm512_and_si512(wl[7], _mm512_set1_epi64(0xFFF));
    __m512i hl = _mm512_srli_epi64(wl[7], 12), hv = _mm512_alignr_epi64(hl, *hprev, 7);
    *hprev = hl;
    __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512(), prev = hv;
    __m512i w0 = prev, x0 = prev, p0 = prev;
    for (unsigned b = 0; b < nb; b++) {
        __m512i w[8];
        if (b + 1 < nb) {
            load_half(wire, fb, 64 * b, ~0u, w);
            load_half(wire, fb, 64 * b + 32, ~0u, w + 4);
        } else {
            _Pragma("GCC unroll 8")
            for (int k = 0; k < 8; k++)
                w[k] = wl[k];
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
        crc_acc(m, 8 * b, 8, w, &lo, &hi);
        if (b > 0) {
            payload_words(8, xp, x[0], 0, p);
            if (b == 1)
                p0 = p[0];
            if (pl) {
                store_half(pl, pb, 64 * (b - 1), ~0u, p);
                store_half(pl, pb, 64 * (b - 1) + 32, ~0u, p + 4);
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
        store_half(pl, pb, 64 * (nb - 1), ~0u, p);
        store_half(pl, pb, 64 * (nb - 1) + 32, 0x3FFFFFFFu, p + 4);
    }
    check8(m, out, j0, w0, x0, vcode, crc_fold(lo, hi, _mm_setzero_si128()), p0, p[7]);
}

AVX512 void decode8(unsigned m, const uint8_t *wire, uint8_t *pl, struct rifl_batch_out *out,
                    unsigned j0, int end, __m512i *hprev)
{
    if (m == 4)
        decode8_w4(wire, pl, out, j0, end, hprev);
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
                payloads ? payloads + (size_t)done * (8 * m - 2) : NULL, out, done,
                done + 8 == n, &h);
    *descr = (uint64_t)_mm_cvtsi128_si64(_mm512_castsi512_si128(
                 _mm512_permutexvar_epi64(_mm512_set1_epi64(7), h))) & RIFL_SCRAMBLER_MASK;
    return done;
}

/* ---- one function per width ------------------------------------------- */

#define KERNEL_WIDTH(M, WI)                                                              \
    __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,vpclmulqdq,gfni"), \
                   noinline)) static unsigned                                            \
    encode_w##M(uint8_t *wire, unsigned n, const uint8_t *syn, const uint8_t *meta,      \
                const uint8_t *payloads, const uint16_t *ids, uint64_t *scr)             \
    {                                                                                    \
        return encode_m(M, WI, wire, n, syn, meta, payloads, ids, scr);                  \
    }                                                                                    \
    __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,vpclmulqdq,gfni"), \
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

static int k_setup(void)
{
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512vbmi") || !__builtin_cpu_supports("avx512vbmi2") ||
        !__builtin_cpu_supports("vpclmulqdq") || !__builtin_cpu_supports("gfni"))
        return 0;
    rifl_batch_consts_init();
    return 1;
}

const struct rifl_batch_kernel rifl_batch_avx512 = {
    "avx512", "AVX-512 F, BW, VBMI and VBMI2 with VPCLMULQDQ and GFNI", k_setup, k_width, k_encode,
    k_decode,
};
#endif

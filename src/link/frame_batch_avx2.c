/* Batch codec, AVX2 path: four frames at a time, one frame per 64-bit lane
 * of a 256-bit vector, for frames of 256 to 2048 bits, on CPUs with AVX2 and
 * PCLMULQDQ.
 *
 * The same method as the AVX-512 path (frame_batch_avx512.c) with the tools
 * AVX2 has: frames go into lanes by 4x4 transposes whose first round is in
 * 128-bit loads; the carry-less multiplies (the CRC, and the scrambler states
 * the frames start from) run on 128-bit PCLMULQDQ, one lane's product each;
 * funnel shifts and three-way XORs are two or three instructions each.  A
 * payload's last two bytes are outside it, so the last 16 bytes of a frame
 * are read ending at its end and shifted into place, and written back
 * overlapping the 16 bytes before. */
#include "frame_batch_priv.h"

#ifdef RIFL_BATCH_X86
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,pclmul,sse4.1"))) static inline \
    __attribute__((always_inline))
#define KC rifl_batch_k

/* ---- lanes and transposes -------------------------------------------- */

AVX2 __m256i bswap4(__m256i v)
{
    const __m256i m = _mm256_set_epi8(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                      10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_shuffle_epi8(v, m);
}

/* (hi:lo) >> n, the low 64 bits, per lane */
AVX2 __m256i shrd4(__m256i lo, __m256i hi, int n)
{
    return _mm256_or_si256(_mm256_srli_epi64(lo, n), _mm256_slli_epi64(hi, 64 - n));
}

AVX2 __m256i xor3(__m256i a, __m256i b, __m256i c)
{
    return _mm256_xor_si256(a, _mm256_xor_si256(b, c));
}

/* 16 bytes of a row at `off`; with `tail`, the row ends two bytes short of
 * them: read up to its end and shift */
AVX2 __m128i load16(const uint8_t *p, int tail)
{
    if (!tail)
        return _mm_loadu_si128((const __m128i *)p);
    return _mm_bsrli_si128(_mm_loadu_si128((const __m128i *)(p - 2)), 2);
}

/* Four words (32 bytes at `off`) of four frames, rows at base + k*stride,
 * into lanes: c[i] lane k = word i of frame k, big-endian */
AVX2 void load_block(const uint8_t *base, size_t stride, size_t off, int tail, __m256i *c)
{
    const uint8_t *r0 = base + off, *r1 = r0 + stride, *r2 = r1 + stride, *r3 = r2 + stride;
    __m256i x0 = _mm256_inserti128_si256(_mm256_castsi128_si256(load16(r0, 0)), load16(r2, 0), 1);
    __m256i x1 = _mm256_inserti128_si256(_mm256_castsi128_si256(load16(r1, 0)), load16(r3, 0), 1);
    __m256i y0 = _mm256_inserti128_si256(_mm256_castsi128_si256(load16(r0 + 16, tail)),
                                         load16(r2 + 16, tail), 1);
    __m256i y1 = _mm256_inserti128_si256(_mm256_castsi128_si256(load16(r1 + 16, tail)),
                                         load16(r3 + 16, tail), 1);
    x0 = bswap4(x0);
    x1 = bswap4(x1);
    y0 = bswap4(y0);
    y1 = bswap4(y1);
    c[0] = _mm256_unpacklo_epi64(x0, x1);
    c[1] = _mm256_unpackhi_epi64(x0, x1);
    c[2] = _mm256_unpacklo_epi64(y0, y1);
    c[3] = _mm256_unpackhi_epi64(y0, y1);
}

/* 16 bytes x to p; with `tail`, the row ends two bytes short: write the 16
 * ending at its end, the first two taken from `before` (the row's 16 bytes
 * before x) */
AVX2 void store16(uint8_t *p, __m128i x, __m128i before, int tail)
{
    if (!tail)
        _mm_storeu_si128((__m128i *)p, x);
    else
        _mm_storeu_si128((__m128i *)(p - 2), _mm_alignr_epi8(x, before, 14));
}

AVX2 void store_block(uint8_t *base, size_t stride, size_t off, int tail, const __m256i *c)
{
    uint8_t *r0 = base + off, *r1 = r0 + stride, *r2 = r1 + stride, *r3 = r2 + stride;
    __m256i x0 = bswap4(_mm256_unpacklo_epi64(c[0], c[1]));
    __m256i x1 = bswap4(_mm256_unpackhi_epi64(c[0], c[1]));
    __m256i y0 = bswap4(_mm256_unpacklo_epi64(c[2], c[3]));
    __m256i y1 = bswap4(_mm256_unpackhi_epi64(c[2], c[3]));
    __m128i x0h = _mm256_extracti128_si256(x0, 1), x1h = _mm256_extracti128_si256(x1, 1);
    _mm_storeu_si128((__m128i *)r0, _mm256_castsi256_si128(x0));
    _mm_storeu_si128((__m128i *)r2, x0h);
    _mm_storeu_si128((__m128i *)r1, _mm256_castsi256_si128(x1));
    _mm_storeu_si128((__m128i *)r3, x1h);
    store16(r0 + 16, _mm256_castsi256_si128(y0), _mm256_castsi256_si128(x0), tail);
    store16(r2 + 16, _mm256_extracti128_si256(y0, 1), x0h, tail);
    store16(r1 + 16, _mm256_castsi256_si128(y1), _mm256_castsi256_si128(x1), tail);
    store16(r3 + 16, _mm256_extracti128_si256(y1, 1), x1h, tail);
}

/* ---- carry-less arithmetic, one 128-bit product per lane -------------- */

/* acc[k] ^= lane k of v times lane k of the constants (four at kk, or `k1`
 * in every lane when kk is NULL) */
AVX2 void clmul_acc(__m128i *acc, __m256i v, const uint64_t *kk, uint64_t k1)
{
    __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
    __m128i k01 = kk ? _mm_loadu_si128((const __m128i *)kk) : _mm_set1_epi64x((long long)k1);
    __m128i k23 = kk ? _mm_loadu_si128((const __m128i *)(kk + 2)) : k01;
    acc[0] = _mm_xor_si128(acc[0], _mm_clmulepi64_si128(lo, k01, 0x00));
    acc[1] = _mm_xor_si128(acc[1], _mm_clmulepi64_si128(lo, k01, 0x11));
    acc[2] = _mm_xor_si128(acc[2], _mm_clmulepi64_si128(hi, k23, 0x00));
    acc[3] = _mm_xor_si128(acc[3], _mm_clmulepi64_si128(hi, k23, 0x11));
}

/* Barrett: the four products' low words, and the quotients of
 * (product >> s) by the polynomial whose floor(x^(64+s)/P) is x^64 + mu */
AVX2 __m256i quotient4(const __m128i *acc, int s, uint64_t mu, __m256i *lo)
{
    *lo = _mm256_set_m128i(_mm_unpacklo_epi64(acc[2], acc[3]), _mm_unpacklo_epi64(acc[0], acc[1]));
    __m256i hi = _mm256_set_m128i(_mm_unpackhi_epi64(acc[2], acc[3]),
                                  _mm_unpackhi_epi64(acc[0], acc[1]));
    __m256i b = s == 33 ? shrd4(*lo, hi, 33) : shrd4(*lo, hi, 12);
    __m128i b01 = _mm256_castsi256_si128(b), b23 = _mm256_extracti128_si256(b, 1);
    __m128i k = _mm_set1_epi64x((long long)mu);
    __m128i t0 = _mm_clmulepi64_si128(b01, k, 0x00), t1 = _mm_clmulepi64_si128(b01, k, 0x01);
    __m128i t2 = _mm_clmulepi64_si128(b23, k, 0x00), t3 = _mm_clmulepi64_si128(b23, k, 0x01);
    return _mm256_xor_si256(
        _mm256_set_m128i(_mm_unpackhi_epi64(t2, t3), _mm_unpackhi_epi64(t0, t1)), b);
}

/* remainders mod Q (33 bits) of products below x^97 */
AVX2 __m256i scr_reduce4(const __m128i *acc)
{
    __m256i lo, q = quotient4(acc, 33, RIFL_SCR_MU, &lo);
    return _mm256_and_si256(xor3(lo, q, _mm256_slli_epi64(q, 20)),
                            _mm256_set1_epi64x((long long)RIFL_SCRAMBLER_MASK));
}

/* remainders mod G (the CRC, 12 bits) of products below x^76 */
AVX2 __m256i crc_reduce4(const __m128i *acc)
{
    __m256i lo, q = quotient4(acc, 12, KC.crc_mu, &lo);
    __m256i t = xor3(q, _mm256_slli_epi64(q, 1), _mm256_slli_epi64(q, 2));
    t = xor3(t, _mm256_slli_epi64(q, 3), _mm256_slli_epi64(q, 5));
    return _mm256_and_si256(_mm256_xor_si256(lo, t), _mm256_set1_epi64x(0xFFF));
}

/* CRC-12 of four frames of m words (the last word's VCODE bits zero) */
AVX2 __m256i crc4(unsigned m, const __m256i *w)
{
    __m128i acc[4] = { _mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128(),
                       _mm_setzero_si128() };
    _Pragma("GCC unroll 32")
    for (unsigned i = 0; i < m; i++)
        clmul_acc(acc, w[i], NULL, KC.crck[m - 1 - i]);
    return crc_reduce4(acc);
}

/* ---- scrambler -------------------------------------------------------- */

AVX2 __m256i scr4(__m256i d, __m256i h)
{
    __m256i s = xor3(d, _mm256_slli_epi64(h, 51), _mm256_slli_epi64(h, 31));
    s = xor3(s, _mm256_srli_epi64(s, 13), _mm256_srli_epi64(s, 33));
    return xor3(s, _mm256_srli_epi64(s, 26), _mm256_srli_epi64(s, 52)); /* (1+y^26)(1+y^52) */
}

AVX2 __m256i descr4(__m256i w, __m256i prev)
{
    return xor3(w, shrd4(w, prev, 13), shrd4(w, prev, 33));
}

/* lane 3 of v in every lane */
AVX2 __m256i last_lane(__m256i v)
{
    return _mm256_permute4x64_epi64(v, 0xFF);
}

/* lanes moved up one, lane 0 from lane 3 of `before` */
AVX2 __m256i lanes_up(__m256i v, __m256i before)
{
    return _mm256_blend_epi32(_mm256_permute4x64_epi64(v, 0x90), last_lane(before), 0x03);
}

/* The scrambler states the four frames start from (as the AVX-512 path's
 * start_states, four lanes) */
AVX2 __m256i start_states4(unsigned m, unsigned wi, const __m256i *y, __m256i *g, __m256i *h)
{
    __m128i acc[4] = { _mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128(),
                       _mm_setzero_si128() };
    _Pragma("GCC unroll 32")
    for (unsigned i = 0; i < m; i++)
        clmul_acc(acc, y[i], KC.ek[wi][i], 0);
    __m256i a = scr_reduce4(acc), z = _mm256_setzero_si256();
    a = _mm256_xor_si256(a, lanes_up(a, z));
    a = xor3(a, _mm256_permute2x128_si256(a, a, 0x08), *g);
    __m128i p[4] = { _mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128(),
                     _mm_setzero_si128() };
    clmul_acc(p, a, KC.ck[wi], 0);
    __m256i after = scr_reduce4(p);
    *g = last_lane(after);
    __m256i hn = _mm256_xor_si256(after, _mm256_and_si256(_mm256_slli_epi64(after, 20),
                                                          _mm256_set1_epi64x(0x1FFFLL << 20)));
    __m256i start = lanes_up(hn, *h);
    *h = hn;
    return start;
}

/* ---- encode ----------------------------------------------------------- */

AVX2 void encode4(unsigned m, unsigned wi, uint8_t *wire, const uint8_t *syn,
                  const uint8_t *meta, const uint8_t *pl, const uint16_t *ids, __m256i *g,
                  __m256i *h)
{
    __m256i p[32], y[32];
    const size_t pb = 8 * m - 2;
    for (unsigned b = 0; b < m / 4; b++)
        load_block(pl, pb, 32 * b, b + 1 == m / 4, p + 4 * b);
    uint32_t m4, s4, i4[2];
    memcpy(&m4, meta, 4);
    memcpy(&s4, syn, 4);
    memcpy(i4, ids, 8);
    __m256i metav = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128((int)m4));
    __m256i synv = _mm256_slli_epi64(_mm256_cvtepu8_epi64(_mm_cvtsi32_si128((int)s4)), 62);
    /* region chunk 0, then the plain words as on the wire */
    __m256i d0 = shrd4(p[0], metav, 2);
    y[0] = _mm256_srli_epi64(d0, 2);
    _Pragma("GCC unroll 32")
    for (unsigned i = 1; i < m; i++)
        y[i] = shrd4(p[i], p[i - 1], 4);
    __m256i low12 = _mm256_set1_epi64x(0xFFF);
    y[m - 1] = _mm256_andnot_si256(low12, y[m - 1]);
    __m256i start = start_states4(m, wi, y, g, h);
    p[0] = _mm256_or_si256(_mm256_srli_epi64(scr4(d0, start), 2), synv);
    _Pragma("GCC unroll 32")
    for (unsigned i = 1; i < m; i++)
        p[i] = scr4(y[i], p[i - 1]);
    p[m - 1] = _mm256_andnot_si256(low12, p[m - 1]);
    __m256i crc = crc4(m, p);
    __m256i idv = _mm256_cvtepu16_epi64(_mm_loadl_epi64((const __m128i *)i4));
    p[m - 1] = _mm256_or_si256(p[m - 1], _mm256_xor_si256(crc, idv));
    for (unsigned b = 0; b < m / 4; b++)
        store_block(wire, 8 * m, 32 * b, 0, p + 4 * b);
}

AVX2 unsigned encode_m(unsigned m, unsigned wi, uint8_t *wire, unsigned n, const uint8_t *syn,
                       const uint8_t *meta, const uint8_t *payloads, const uint16_t *ids,
                       uint64_t *scr)
{
    uint64_t h0 = *scr & RIFL_SCRAMBLER_MASK;
    __m256i g = _mm256_set1_epi64x((long long)rifl_scr_t(h0)), h = _mm256_set1_epi64x((long long)h0);
    unsigned done;
    for (done = 0; done + 4 <= n; done += 4)
        encode4(m, wi, wire + (size_t)done * 8 * m, syn + done, meta + done,
                payloads + (size_t)done * (8 * m - 2), ids + done, &g, &h);
    *scr = (uint64_t)_mm256_extract_epi64(h, 3);
    return done;
}

/* ---- decode ----------------------------------------------------------- */

AVX2 void check4(unsigned m, struct rifl_batch_out *out, unsigned j0, __m256i w0, __m256i x0,
                 __m256i vcode, __m256i crc, __m256i p0, __m256i plast)
{
    unsigned plain = 0;
    if (out->expect) {
        /* SYN 01, META 01 and the expected ID, as one 16-bit value */
        __m256i top2 = _mm256_set1_epi64x((long long)(3ULL << 62));
        __m256i sm = _mm256_or_si256(_mm256_and_si256(top2, w0), _mm256_andnot_si256(top2, x0));
        __m256i got = _mm256_and_si256(_mm256_srli_epi64(sm, 48), _mm256_set1_epi64x(0xF000));
        got = xor3(got, crc, vcode);
        uint64_t e4;
        memcpy(&e4, out->expect + j0, 8);
        __m256i want = _mm256_or_si256(_mm256_cvtepu16_epi64(_mm_cvtsi64_si128((long long)e4)),
                                       _mm256_set1_epi64x(0x5000));
        plain = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(got, want)));
    }
    if (plain == 0xF)
        return;
    uint64_t sw[4], sx[4], sv[4], sc[4], sf[4], sl[4];
    _mm256_storeu_si256((__m256i *)sw, w0);
    _mm256_storeu_si256((__m256i *)sx, x0);
    _mm256_storeu_si256((__m256i *)sv, vcode);
    _mm256_storeu_si256((__m256i *)sc, crc);
    _mm256_storeu_si256((__m256i *)sf, p0);
    _mm256_storeu_si256((__m256i *)sl, plast);
    for (unsigned k = 0; k < 4; k++)
        if (!((plain >> k) & 1))
            rifl_batch_report(out, j0 + k, (unsigned)(sw[k] >> 62), (unsigned)(sx[k] >> 60) & 3,
                              (unsigned)sv[k], (unsigned)sc[k], sf[k],
                              (unsigned)(sl[k] >> 16) & 0xFF, 8 * m - 2);
}

AVX2 void decode4(unsigned m, const uint8_t *wire, uint8_t *pl, struct rifl_batch_out *out,
                  unsigned j0, __m256i *hprev)
{
    __m256i w[32], x[32];
    for (unsigned b = 0; b < m / 4; b++)
        load_block(wire, 8 * m, 32 * b, 0, w + 4 * b);
    __m256i low12 = _mm256_set1_epi64x(0xFFF), wlast = w[m - 1];
    __m256i vcode = _mm256_and_si256(wlast, low12);
    /* each frame's history is the end of the frame one lane down; its last
     * two bits stand in for SYN so that the stream runs on */
    __m256i hl = _mm256_srli_epi64(wlast, 12), hv = lanes_up(hl, *hprev);
    *hprev = hl;
    __m256i top2 = _mm256_set1_epi64x((long long)(3ULL << 62));
    __m256i v0 = _mm256_or_si256(_mm256_andnot_si256(top2, w[0]), _mm256_slli_epi64(hv, 62));
    x[0] = descr4(v0, _mm256_srli_epi64(hv, 2));
    _Pragma("GCC unroll 32")
    for (unsigned i = 1; i < m; i++)
        x[i] = descr4(w[i], w[i - 1]);
    w[m - 1] = _mm256_andnot_si256(low12, wlast);
    __m256i crc = crc4(m, w);
    __m256i w0 = w[0];
    /* payload words (reusing w[]) */
    _Pragma("GCC unroll 32")
    for (unsigned i = 0; i + 1 < m; i++)
        w[i] = _mm256_or_si256(_mm256_slli_epi64(x[i], 4), _mm256_srli_epi64(x[i + 1], 60));
    w[m - 1] = _mm256_slli_epi64(x[m - 1], 4);
    if (pl)
        for (unsigned b = 0; b < m / 4; b++)
            store_block(pl, 8 * m - 2, 32 * b, b + 1 == m / 4, w + 4 * b);
    check4(m, out, j0, w0, x[0], vcode, crc, w[0], w[m - 1]);
}

AVX2 unsigned decode_m(unsigned m, const uint8_t *wire, unsigned n, uint64_t *descr,
                       uint8_t *payloads, struct rifl_batch_out *out)
{
    __m256i h = _mm256_set1_epi64x((long long)(*descr & RIFL_SCRAMBLER_MASK));
    unsigned done;
    for (done = 0; done + 4 <= n; done += 4)
        decode4(m, wire + (size_t)done * 8 * m,
                payloads ? payloads + (size_t)done * (8 * m - 2) : NULL, out, done, &h);
    *descr = (uint64_t)_mm256_extract_epi64(h, 3) & RIFL_SCRAMBLER_MASK;
    return done;
}

/* ---- one function per width ------------------------------------------- */

#define KERNEL_WIDTH(M, WI)                                                           \
    __attribute__((target("avx2,pclmul,sse4.1"), noinline)) static unsigned          \
    encode_w##M(uint8_t *wire, unsigned n, const uint8_t *syn, const uint8_t *meta,   \
                const uint8_t *payloads, const uint16_t *ids, uint64_t *scr)          \
    {                                                                                 \
        return encode_m(M, WI, wire, n, syn, meta, payloads, ids, scr);               \
    }                                                                                 \
    __attribute__((target("avx2,pclmul,sse4.1"), noinline)) static unsigned          \
    decode_w##M(const uint8_t *wire, unsigned n, uint64_t *descr, uint8_t *payloads,  \
                struct rifl_batch_out *out)                                           \
    {                                                                                 \
        return decode_m(M, wire, n, descr, payloads, out);                            \
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

static int k_setup(void)
{
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("pclmul") ||
        !__builtin_cpu_supports("sse4.1"))
        return 0;
    rifl_batch_consts_init();
    return 1;
}

const struct rifl_batch_kernel rifl_batch_avx2 = {
    "avx2", "AVX2 and PCLMULQDQ", k_setup, k_width, k_encode, k_decode,
};
#endif

/* Batch encode / decode of consecutive frames of one stream.
 *
 * Same results as calling rifl_frame_encode / rifl_frame_decode frame by
 * frame, bit for bit.  On x86-64 CPUs with AVX-512 (F, BW, VBMI2) and
 * VPCLMULQDQ, frames of 256 bits and more go eight at a time, one frame per
 * 64-bit vector lane:
 *
 * - decode has no chain from frame to frame: the descrambler history of
 *   frame k is the end of frame k-1, which has arrived;
 * - encode does: frame k's scrambled bits depend on the last 33 bits of frame
 *   k-1.  The scrambler is linear, so the history after a frame is
 *   F(data) XOR M(history before), where F is the frame scrambled from a zero
 *   history (computed for all eight lanes at once) and M a fixed linear map
 *   of 33 bits (five byte-indexed tables).  A short scalar chain over M gives
 *   every frame's history; then all eight frames are scrambled in the lanes.
 * - the CRC of each lane is the same carry-less multiply and Barrett
 *   reduction as the scalar path, with VPCLMULQDQ on the 128-bit lanes. */
#include "rifl/frame.h"
#include "link_priv.h"

/* needs the carry-less multiply constants of the scalar CRC (x86-64 build) */
#if defined(__x86_64__) && defined(RIFL_CRC_CLMUL)
#define RIFL_BATCH_AVX512 1
#include <immintrin.h>
#endif

#ifdef RIFL_BATCH_AVX512
#define RIFL_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi2,vpclmulqdq")))

static int have_avx512;
/* Per supported width (index 0..3 = 256, 512, 1024, 2048 bits): M, the
 * history a zero-data frame leaves, by history byte. */
static uint64_t mtab[4][5][256];

static int width_index(unsigned frame_bits)
{
    switch (frame_bits) {
    case 256: return 0;
    case 512: return 1;
    case 1024: return 2;
    case 2048: return 3;
    default: return -1;
    }
}

__attribute__((constructor)) static void batch_init(void)
{
    __builtin_cpu_init();
    have_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi2") &&
                  __builtin_cpu_supports("vpclmulqdq");
    if (!have_avx512)
        return; /* the tables below serve the vector path only */
    for (int wi = 0; wi < 4; wi++) {
        unsigned F = 256u << wi;
        for (int byte = 0; byte < 5; byte++)
            for (int v = 0; v < 256; v++) {
                uint8_t f[RIFL_FRAME_MAX_BYTES] = { 0 };
                uint64_t h = ((uint64_t)v << (8 * byte)) & RIFL_SCRAMBLER_MASK;
                mtab[wi][byte][v] = rifl_scramble(f, F, h);
            }
    }
}

RIFL_AVX512 static inline __m512i bswap64x8(__m512i v)
{
    const __m512i m = _mm512_set_epi8(
        8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1,
        2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
        14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    return _mm512_shuffle_epi8(v, m);
}

/* (1+u)(1+u^2)(1+u^4) of the scrambler, per lane */
RIFL_AVX512 static inline __m512i inv8(__m512i s)
{
    s = _mm512_ternarylogic_epi64(s, _mm512_srli_epi64(s, 13), _mm512_srli_epi64(s, 33), 0x96);
    s = _mm512_xor_si512(s, _mm512_srli_epi64(s, 26));
    return _mm512_xor_si512(s, _mm512_srli_epi64(s, 52));
}

/* one 64-bit scrambler chunk per lane: data d, history h */
RIFL_AVX512 static inline __m512i scr8(__m512i d, __m512i h)
{
    return inv8(_mm512_ternarylogic_epi64(d, _mm512_slli_epi64(h, 51),
                                          _mm512_slli_epi64(h, 31), 0x96));
}

/* CRC-12 of eight frames of m words each (VCODE bits zero); lane k of the
 * result holds frame k's CRC. */
RIFL_AVX512 static inline __attribute__((always_inline)) __m512i
crc8(const __m512i *w, unsigned m)
{
    __m512i ev = _mm512_setzero_si512(), od = _mm512_setzero_si512();
    /* even frames: low qword of each 128-bit lane; odd: high qword */
    _Pragma("GCC unroll 32")
    for (unsigned i = 0; i < m; i++) {
        __m512i k = _mm512_set1_epi64((long long)rifl_crc_clmul_consts.k[m - 1 - i]);
        ev = _mm512_xor_si512(ev, _mm512_clmulepi64_epi128(w[i], k, 0x00));
        od = _mm512_xor_si512(od, _mm512_clmulepi64_epi128(w[i], k, 0x01));
    }
    const struct rifl_crc_clmul *cc = &rifl_crc_clmul_consts;
    __m512i fold = _mm512_set1_epi64((long long)cc->x64), mu = _mm512_set1_epi64((long long)cc->mu);
    __m512i g = _mm512_set1_epi64((long long)cc->g);
    __m512i acc[2] = { ev, od };
    for (int i = 0; i < 2; i++) {
        __m512i a = acc[i];
        a = _mm512_xor_si512(a, _mm512_clmulepi64_epi128(a, fold, 0x01));
        __m512i t = _mm512_clmulepi64_epi128(_mm512_srli_epi64(a, 12), mu, 0x00);
        __m512i q = _mm512_or_si512(_mm512_srli_epi64(t, 52),
                                    _mm512_slli_epi64(_mm512_bsrli_epi128(t, 8), 12));
        __m512i qg = _mm512_clmulepi64_epi128(q, g, 0x00);
        acc[i] = _mm512_and_si512(_mm512_xor_si512(a, qg), _mm512_set1_epi64(0xFFF));
    }
    /* frame 2j's result is in qword 2j of acc[0], frame 2j+1's in qword 2j of
     * acc[1]: move the odd ones up one qword and merge */
    return _mm512_mask_blend_epi64(0xAA, acc[0], _mm512_bslli_epi128(acc[1], 8));
}

RIFL_AVX512 static inline __attribute__((always_inline)) unsigned
encode_x8(unsigned m, const uint64_t (*mt)[256], uint8_t *wire, unsigned n, const uint8_t *syn,
          const uint8_t *meta, const uint8_t *payloads, const uint16_t *ids, uint64_t *scr)
{
    const long long fb = 8 * m, pb = 8 * m - 2;
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i poff = _mm512_set_epi64(7 * pb, 6 * pb, 5 * pb, 4 * pb, 3 * pb, 2 * pb, pb, 0);
    const __m512i woff = _mm512_slli_epi64(lane, (unsigned)__builtin_ctz((unsigned)fb));
    const __m512i m33 = _mm512_set1_epi64((long long)RIFL_SCRAMBLER_MASK);
    __m512i d[32], s[32];
    uint64_t h = *scr & RIFL_SCRAMBLER_MASK;
    unsigned done;
    for (done = 0; done + 8 <= n; done += 8) {
        const uint8_t *pl = payloads + (size_t)done * (size_t)pb;
        /* plain region chunks: META then payload */
        __m512i prev = _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(meta + done)));
        _Pragma("GCC unroll 32")
        for (unsigned i = 0; i < m; i++) {
            __m512i p;
            if (i + 1 < m)
                p = bswap64x8(_mm512_i64gather_epi64(poff, pl + 8 * i, 1));
            else
                p = _mm512_slli_epi64(bswap64x8(_mm512_i64gather_epi64(poff, pl + 8 * i - 2, 1)),
                                      16);
            d[i] = _mm512_shrdi_epi64(p, prev, 2);
            prev = p;
        }
        d[m - 1] = _mm512_and_si512(d[m - 1], _mm512_set1_epi64(~(long long)0x3FFF));
        /* zero-history pass: the history each frame leaves, F(data) */
        __m512i z = inv8(d[0]);
        _Pragma("GCC unroll 32")
        for (unsigned i = 1; i < m; i++)
            z = scr8(d[i], z);
        uint64_t fz[8], hist[8];
        _mm512_storeu_si512(fz, _mm512_and_si512(_mm512_srli_epi64(z, 14), m33));
        for (int k = 0; k < 8; k++) {
            hist[k] = h;
            h = fz[k] ^ mt[0][h & 0xFF] ^ mt[1][(h >> 8) & 0xFF] ^ mt[2][(h >> 16) & 0xFF] ^
                mt[3][(h >> 24) & 0xFF] ^ mt[4][h >> 32];
        }
        /* the frames scrambled with their true histories */
        s[0] = scr8(d[0], _mm512_loadu_si512(hist));
        _Pragma("GCC unroll 32")
        for (unsigned i = 1; i < m; i++)
            s[i] = scr8(d[i], s[i - 1]);
        __m512i sv = _mm512_slli_epi64(
            _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(syn + done))), 62);
        /* frame words (reusing d[]) */
        d[0] = _mm512_or_si512(_mm512_srli_epi64(s[0], 2), sv);
        _Pragma("GCC unroll 32")
        for (unsigned i = 1; i < m; i++)
            d[i] = _mm512_shrdi_epi64(s[i], s[i - 1], 2);
        d[m - 1] = _mm512_and_si512(d[m - 1], _mm512_set1_epi64(~(long long)0xFFF));
        __m512i crc = crc8(d, m);
        __m512i idv = _mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)(ids + done)));
        d[m - 1] = _mm512_or_si512(d[m - 1], _mm512_and_si512(_mm512_xor_si512(crc, idv),
                                                              _mm512_set1_epi64(0xFFF)));
        uint8_t *wl = wire + (size_t)done * (size_t)fb;
        _Pragma("GCC unroll 32")
        for (unsigned i = 0; i < m; i++)
            _mm512_i64scatter_epi64(wl + 8 * i, woff, bswap64x8(d[i]), 1);
    }
    *scr = h;
    return done;
}

RIFL_AVX512 static inline __attribute__((always_inline)) unsigned
decode_x8(unsigned m, const uint8_t *wire, unsigned n, uint64_t *descr, uint8_t *payloads,
          rifl_frame_info *infos, int *bad)
{
    const long long fb = 8 * m, pb = 8 * m - 2;
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i poff = _mm512_set_epi64(7 * pb, 6 * pb, 5 * pb, 4 * pb, 3 * pb, 2 * pb, pb, 0);
    const __m512i woff = _mm512_slli_epi64(lane, (unsigned)__builtin_ctz((unsigned)fb));
    __m512i w[32], r[32];
    uint64_t h = *descr & RIFL_SCRAMBLER_MASK;
    unsigned done;
    for (done = 0; done + 8 <= n; done += 8) {
        const uint8_t *wl = wire + (size_t)done * (size_t)fb;
        _Pragma("GCC unroll 32")
        for (unsigned i = 0; i < m; i++)
            w[i] = bswap64x8(_mm512_i64gather_epi64(woff, wl + 8 * i, 1));
        __m512i vcode = _mm512_and_si512(w[m - 1], _mm512_set1_epi64(0xFFF));
        __m512i wlast = w[m - 1];
        w[m - 1] = _mm512_andnot_si512(_mm512_set1_epi64(0xFFF), wlast);
        __m512i crc = crc8(w, m);
        __m512i syn = _mm512_srli_epi64(w[0], 62);
        /* scrambled region chunks */
        _Pragma("GCC unroll 32")
        for (unsigned i = 0; i + 1 < m; i++)
            r[i] = _mm512_shldi_epi64(w[i], w[i + 1], 2);
        r[m - 1] = _mm512_and_si512(_mm512_slli_epi64(wlast, 2),
                                    _mm512_set1_epi64(~(long long)0x3FFF));
        /* descramble (into w[]): chunk 0's history is the end of the frame
         * before, one lane down */
        __m512i last = _mm512_srli_epi64(r[m - 1], 14);
        __m512i hv = _mm512_alignr_epi64(last, _mm512_set1_epi64((long long)h), 7);
        _Pragma("GCC unroll 32")
        for (unsigned i = 0; i < m; i++) {
            __m512i hi = i ? r[i - 1] : hv;
            w[i] = _mm512_ternarylogic_epi64(r[i], _mm512_shrdi_epi64(r[i], hi, 13),
                                             _mm512_shrdi_epi64(r[i], hi, 33), 0x96);
        }
        uint64_t lastv[8];
        _mm512_storeu_si512(lastv, last);
        h = lastv[7] & RIFL_SCRAMBLER_MASK;
        /* payload words (into r[]) */
        _Pragma("GCC unroll 32")
        for (unsigned i = 0; i + 1 < m; i++)
            r[i] = _mm512_shldi_epi64(w[i], w[i + 1], 2);
        r[m - 1] = _mm512_slli_epi64(w[m - 1], 2);
        if (payloads) {
            uint8_t *pl = payloads + (size_t)done * (size_t)pb;
            _Pragma("GCC unroll 32")
            for (unsigned i = 0; i + 1 < m; i++)
                _mm512_i64scatter_epi64(pl + 8 * i, poff, bswap64x8(r[i]), 1);
            _mm512_i64scatter_epi64(pl + 8 * m - 10, poff,
                                    bswap64x8(_mm512_shrdi_epi64(r[m - 1], r[m - 2], 16)), 1);
        }
        uint64_t sy[8], vc[8], cr[8], me[8], fi[8], la[8];
        _mm512_storeu_si512(sy, syn);
        _mm512_storeu_si512(vc, vcode);
        _mm512_storeu_si512(cr, crc);
        _mm512_storeu_si512(me, _mm512_srli_epi64(w[0], 62));
        _mm512_storeu_si512(fi, r[0]);
        _mm512_storeu_si512(la, r[m - 1]);
        for (int k = 0; k < 8; k++) {
            rifl_frame_info *info = &infos[done + k];
            info->syn = (unsigned)sy[k];
            info->vcode = (uint16_t)vc[k];
            info->crc = (uint16_t)cr[k];
            info->id = (uint16_t)(cr[k] ^ vc[k]);
            info->meta = (unsigned)me[k];
            info->key = (uint16_t)((me[k] << 14) | (fi[k] >> 50));
            info->format = (uint8_t)(la[k] >> 16);
            if (rifl_frame_classify(info, (unsigned)pb) != RIFL_OK)
                *bad = 1;
        }
    }
    *descr = h;
    return done;
}

#define RIFL_BATCH_WIDTH(M, WI)                                                   \
    RIFL_AVX512 static unsigned encode_x8_##M(uint8_t *wire, unsigned n,          \
                                              const uint8_t *syn, const uint8_t *meta, \
                                              const uint8_t *payloads, const uint16_t *ids, \
                                              uint64_t *scr)                      \
    {                                                                             \
        return encode_x8(M, mtab[WI], wire, n, syn, meta, payloads, ids, scr);    \
    }                                                                             \
    RIFL_AVX512 static unsigned decode_x8_##M(const uint8_t *wire, unsigned n,    \
                                              uint64_t *descr, uint8_t *payloads, \
                                              rifl_frame_info *infos, int *bad)   \
    {                                                                             \
        return decode_x8(M, wire, n, descr, payloads, infos, bad);                \
    }
RIFL_BATCH_WIDTH(4, 0)
RIFL_BATCH_WIDTH(8, 1)
RIFL_BATCH_WIDTH(16, 2)
RIFL_BATCH_WIDTH(32, 3)

static unsigned encode_vec(unsigned frame_bits, uint8_t *wire, unsigned n, const uint8_t *syn,
                           const uint8_t *meta, const uint8_t *payloads, const uint16_t *ids,
                           uint64_t *scr)
{
    switch (frame_bits) {
    case 256: return encode_x8_4(wire, n, syn, meta, payloads, ids, scr);
    case 512: return encode_x8_8(wire, n, syn, meta, payloads, ids, scr);
    case 1024: return encode_x8_16(wire, n, syn, meta, payloads, ids, scr);
    default: return encode_x8_32(wire, n, syn, meta, payloads, ids, scr);
    }
}

static unsigned decode_vec(unsigned frame_bits, const uint8_t *wire, unsigned n, uint64_t *descr,
                           uint8_t *payloads, rifl_frame_info *infos, int *bad)
{
    switch (frame_bits) {
    case 256: return decode_x8_4(wire, n, descr, payloads, infos, bad);
    case 512: return decode_x8_8(wire, n, descr, payloads, infos, bad);
    case 1024: return decode_x8_16(wire, n, descr, payloads, infos, bad);
    default: return decode_x8_32(wire, n, descr, payloads, infos, bad);
    }
}
#endif

int rifl_frame_encode_batch(uint8_t *wire, unsigned frame_bits, unsigned n,
                            const uint8_t *syn, const uint8_t *meta, const uint8_t *payloads,
                            const uint16_t *ids, uint64_t *scr)
{
    if (!wire || !syn || !meta || !payloads || !ids || !scr ||
        rifl_frame_width_check(frame_bits) != RIFL_OK)
        return RIFL_ERR_INVALID_ARG;
    for (unsigned j = 0; j < n; j++)
        if (syn[j] > 3 || meta[j] > 3 || ids[j] > 0xFFF)
            return RIFL_ERR_INVALID_ARG;
    unsigned fb = frame_bits / 8, pb = rifl_payload_bytes(frame_bits), done = 0;
#ifdef RIFL_BATCH_AVX512
    if (have_avx512 && width_index(frame_bits) >= 0)
        done = encode_vec(frame_bits, wire, n, syn, meta, payloads, ids, scr);
#endif
    for (unsigned j = done; j < n; j++)
        rifl_frame_encode(wire + (size_t)j * fb, frame_bits, syn[j], meta[j],
                          payloads + (size_t)j * pb, ids[j], scr);
    return RIFL_OK;
}

int rifl_frame_decode_batch(const uint8_t *wire, unsigned frame_bits, unsigned n,
                            uint64_t *descr, uint8_t *payloads, rifl_frame_info *infos)
{
    if (!wire || !descr || !infos || rifl_frame_width_check(frame_bits) != RIFL_OK)
        return RIFL_ERR_INVALID_ARG;
    unsigned fb = frame_bits / 8, pb = rifl_payload_bytes(frame_bits), done = 0;
    int bad = 0;
#ifdef RIFL_BATCH_AVX512
    if (have_avx512 && width_index(frame_bits) >= 0)
        done = decode_vec(frame_bits, wire, n, descr, payloads, infos, &bad);
#endif
    for (unsigned j = done; j < n; j++)
        if (rifl_frame_decode(wire + (size_t)j * fb, frame_bits, descr,
                              payloads ? payloads + (size_t)j * pb : NULL, &infos[j]) != RIFL_OK)
            bad = 1;
    return bad ? RIFL_ERR_FRAME : RIFL_OK;
}

int rifl_frame_batch_simd(unsigned frame_bits)
{
#ifdef RIFL_BATCH_AVX512
    return have_avx512 && width_index(frame_bits) >= 0;
#else
    (void)frame_bits;
    return 0;
#endif
}

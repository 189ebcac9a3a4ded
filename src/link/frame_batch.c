/* Batch encode / decode of consecutive frames of one stream.
 *
 * Same results as calling rifl_frame_encode / rifl_frame_decode frame by
 * frame, bit for bit.  On x86-64 CPUs with AVX-512 (F, BW, VBMI2) and
 * VPCLMULQDQ, 256-bit frames go eight at a time, one frame per 64-bit vector
 * lane:
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

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RIFL_BATCH_AVX512 1
#include <immintrin.h>
#endif

#ifdef RIFL_BATCH_AVX512
#define RIFL_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi2,vpclmulqdq")))

static int have_avx512;
static uint64_t mtab[5][256]; /* M for 256-bit frames, by history byte */
static uint64_t crc_k[4];     /* x^(64j+12) mod G, j = 0..3 */
static uint64_t crc_x64, crc_mu, crc_g;

static uint64_t mulx_mod12(uint64_t r)
{
    r <<= 1;
    if (r & 0x1000u)
        r ^= 0x1000u | RIFL_CRC12_POLY;
    return r;
}

__attribute__((constructor)) static void batch_init(void)
{
    __builtin_cpu_init();
    have_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi2") &&
                  __builtin_cpu_supports("vpclmulqdq");
    /* M: the history after a zero-data frame, for each history bit */
    for (int byte = 0; byte < 5; byte++)
        for (int v = 0; v < 256; v++) {
            uint8_t f[32] = { 0 };
            uint64_t h = ((uint64_t)v << (8 * byte)) & RIFL_SCRAMBLER_MASK;
            mtab[byte][v] = rifl_scramble(f, 256, h);
        }
    uint64_t r = 1;
    for (int k = 0; k < 12; k++)
        r = mulx_mod12(r);
    for (int j = 0; j < 4; j++) {
        crc_k[j] = r;
        for (int k = 0; k < 64; k++)
            r = mulx_mod12(r);
    }
    r = 1;
    for (int k = 0; k < 64; k++)
        r = mulx_mod12(r);
    crc_x64 = r;
    crc_g = 0x1000u | RIFL_CRC12_POLY;
    uint64_t q = 0;
    uint32_t rem = 1;
    for (int k = 0; k < 64; k++) {
        rem <<= 1;
        q <<= 1;
        if (rem & 0x1000u) {
            rem ^= 0x1000u | RIFL_CRC12_POLY;
            q |= 1;
        }
    }
    crc_mu = q;
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

/* CRC-12 of eight 256-bit frames given as four word vectors (VCODE bits
 * zero); the result lane k holds frame k's CRC. */
RIFL_AVX512 static inline __m512i crc8(__m512i w0, __m512i w1, __m512i w2, __m512i w3)
{
    __m512i k3 = _mm512_set1_epi64((long long)crc_k[3]), k2 = _mm512_set1_epi64((long long)crc_k[2]);
    __m512i k1 = _mm512_set1_epi64((long long)crc_k[1]), k0 = _mm512_set1_epi64((long long)crc_k[0]);
    /* even frames: low qword of each 128-bit lane; odd: high qword */
    __m512i ev = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(w0, k3, 0x00),
                                           _mm512_clmulepi64_epi128(w1, k2, 0x00),
                                           _mm512_clmulepi64_epi128(w2, k1, 0x00), 0x96);
    ev = _mm512_xor_si512(ev, _mm512_clmulepi64_epi128(w3, k0, 0x00));
    __m512i od = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(w0, k3, 0x01),
                                           _mm512_clmulepi64_epi128(w1, k2, 0x01),
                                           _mm512_clmulepi64_epi128(w2, k1, 0x01), 0x96);
    od = _mm512_xor_si512(od, _mm512_clmulepi64_epi128(w3, k0, 0x01));
    __m512i fold = _mm512_set1_epi64((long long)crc_x64), mu = _mm512_set1_epi64((long long)crc_mu);
    __m512i g = _mm512_set1_epi64((long long)crc_g);
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
    /* result of frame 2j is in qword 2j of acc[0], of frame 2j+1 in qword 2j
     * of acc[1]: move the odd ones up one qword and merge */
    return _mm512_mask_blend_epi64(0xAA, acc[0], _mm512_bslli_epi128(acc[1], 8));
}

RIFL_AVX512 static unsigned encode256x8(uint8_t *wire, unsigned n, const uint8_t *syn,
                                        const uint8_t *meta, const uint8_t *payloads,
                                        const uint16_t *ids, uint64_t *scr)
{
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i poff = _mm512_set_epi64(210, 180, 150, 120, 90, 60, 30, 0);
    const __m512i woff = _mm512_slli_epi64(lane, 5);
    const __m512i m33 = _mm512_set1_epi64((long long)RIFL_SCRAMBLER_MASK);
    uint64_t h = *scr & RIFL_SCRAMBLER_MASK;
    unsigned done;
    for (done = 0; done + 8 <= n; done += 8) {
        const uint8_t *pl = payloads + (size_t)done * 30;
        __m512i p0 = bswap64x8(_mm512_i64gather_epi64(poff, pl, 1));
        __m512i p1 = bswap64x8(_mm512_i64gather_epi64(_mm512_add_epi64(poff, _mm512_set1_epi64(8)), pl, 1));
        __m512i p2 = bswap64x8(_mm512_i64gather_epi64(_mm512_add_epi64(poff, _mm512_set1_epi64(16)), pl, 1));
        __m512i p3 = _mm512_slli_epi64(
            bswap64x8(_mm512_i64gather_epi64(_mm512_add_epi64(poff, _mm512_set1_epi64(22)), pl, 1)), 16);
        __m512i mv = _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(meta + done)));
        __m512i d0 = _mm512_shrdi_epi64(p0, mv, 2);
        __m512i d1 = _mm512_shrdi_epi64(p1, p0, 2);
        __m512i d2 = _mm512_shrdi_epi64(p2, p1, 2);
        __m512i d3 = _mm512_and_si512(_mm512_shrdi_epi64(p3, p2, 2),
                                      _mm512_set1_epi64(~(long long)0x3FFF));
        /* zero-history pass: the history each frame leaves, F(data) */
        __m512i z0 = inv8(d0);
        __m512i z1 = scr8(d1, z0);
        __m512i z2 = scr8(d2, z1);
        __m512i z3 = scr8(d3, z2);
        uint64_t fz[8], hist[8];
        _mm512_storeu_si512(fz, _mm512_and_si512(_mm512_srli_epi64(z3, 14), m33));
        for (int k = 0; k < 8; k++) {
            hist[k] = h;
            h = fz[k] ^ mtab[0][h & 0xFF] ^ mtab[1][(h >> 8) & 0xFF] ^
                mtab[2][(h >> 16) & 0xFF] ^ mtab[3][(h >> 24) & 0xFF] ^ mtab[4][h >> 32];
        }
        __m512i hv = _mm512_loadu_si512(hist);
        __m512i s0 = scr8(d0, hv);
        __m512i s1 = scr8(d1, s0);
        __m512i s2 = scr8(d2, s1);
        __m512i s3 = scr8(d3, s2);
        __m512i sv = _mm512_slli_epi64(
            _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(syn + done))), 62);
        __m512i w0 = _mm512_or_si512(_mm512_srli_epi64(s0, 2), sv);
        __m512i w1 = _mm512_shrdi_epi64(s1, s0, 2);
        __m512i w2 = _mm512_shrdi_epi64(s2, s1, 2);
        __m512i w3 = _mm512_and_si512(_mm512_shrdi_epi64(s3, s2, 2),
                                      _mm512_set1_epi64(~(long long)0xFFF));
        __m512i crc = crc8(w0, w1, w2, w3);
        __m512i idv = _mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)(ids + done)));
        w3 = _mm512_or_si512(w3, _mm512_and_si512(_mm512_xor_si512(crc, idv),
                                                  _mm512_set1_epi64(0xFFF)));
        uint8_t *wl = wire + (size_t)done * 32;
        _mm512_i64scatter_epi64(wl, woff, bswap64x8(w0), 1);
        _mm512_i64scatter_epi64(wl + 8, woff, bswap64x8(w1), 1);
        _mm512_i64scatter_epi64(wl + 16, woff, bswap64x8(w2), 1);
        _mm512_i64scatter_epi64(wl + 24, woff, bswap64x8(w3), 1);
    }
    *scr = h;
    return done;
}

RIFL_AVX512 static unsigned decode256x8(const uint8_t *wire, unsigned n, uint64_t *descr,
                                        uint8_t *payloads, rifl_frame_info *infos, int *bad)
{
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i poff = _mm512_set_epi64(210, 180, 150, 120, 90, 60, 30, 0);
    const __m512i woff = _mm512_slli_epi64(lane, 5);
    uint64_t h = *descr & RIFL_SCRAMBLER_MASK;
    unsigned done;
    for (done = 0; done + 8 <= n; done += 8) {
        const uint8_t *wl = wire + (size_t)done * 32;
        __m512i w0 = bswap64x8(_mm512_i64gather_epi64(woff, wl, 1));
        __m512i w1 = bswap64x8(_mm512_i64gather_epi64(woff, wl + 8, 1));
        __m512i w2 = bswap64x8(_mm512_i64gather_epi64(woff, wl + 16, 1));
        __m512i w3 = bswap64x8(_mm512_i64gather_epi64(woff, wl + 24, 1));
        __m512i vcode = _mm512_and_si512(w3, _mm512_set1_epi64(0xFFF));
        __m512i crc = crc8(w0, w1, w2, _mm512_andnot_si512(_mm512_set1_epi64(0xFFF), w3));
        /* scrambled region chunks and the descrambler histories */
        __m512i r0 = _mm512_shldi_epi64(w0, w1, 2);
        __m512i r1 = _mm512_shldi_epi64(w1, w2, 2);
        __m512i r2 = _mm512_shldi_epi64(w2, w3, 2);
        __m512i r3 = _mm512_and_si512(_mm512_slli_epi64(w3, 2),
                                      _mm512_set1_epi64(~(long long)0x3FFF));
        __m512i last = _mm512_srli_epi64(r3, 14);
        __m512i hv = _mm512_alignr_epi64(last, _mm512_set1_epi64((long long)h), 7);
        __m512i d0 = _mm512_ternarylogic_epi64(r0, _mm512_shrdi_epi64(r0, hv, 13),
                                               _mm512_shrdi_epi64(r0, hv, 33), 0x96);
        __m512i d1 = _mm512_ternarylogic_epi64(r1, _mm512_shrdi_epi64(r1, r0, 13),
                                               _mm512_shrdi_epi64(r1, r0, 33), 0x96);
        __m512i d2 = _mm512_ternarylogic_epi64(r2, _mm512_shrdi_epi64(r2, r1, 13),
                                               _mm512_shrdi_epi64(r2, r1, 33), 0x96);
        __m512i d3 = _mm512_ternarylogic_epi64(r3, _mm512_shrdi_epi64(r3, r2, 13),
                                               _mm512_shrdi_epi64(r3, r2, 33), 0x96);
        uint64_t lastv[8];
        _mm512_storeu_si512(lastv, last);
        h = lastv[7] & RIFL_SCRAMBLER_MASK;
        __m512i q0 = _mm512_shldi_epi64(d0, d1, 2);
        __m512i q1 = _mm512_shldi_epi64(d1, d2, 2);
        __m512i q2 = _mm512_shldi_epi64(d2, d3, 2);
        __m512i q3 = _mm512_slli_epi64(d3, 2);
        if (payloads) {
            uint8_t *pl = payloads + (size_t)done * 30;
            _mm512_i64scatter_epi64(pl, poff, bswap64x8(q0), 1);
            _mm512_i64scatter_epi64(pl + 8, poff, bswap64x8(q1), 1);
            _mm512_i64scatter_epi64(pl + 16, poff, bswap64x8(q2), 1);
            _mm512_i64scatter_epi64(pl + 22, poff, bswap64x8(_mm512_shrdi_epi64(q3, q2, 16)), 1);
        }
        uint64_t sy[8], vc[8], cr[8], me[8], fi[8], la[8];
        _mm512_storeu_si512(sy, _mm512_srli_epi64(w0, 62));
        _mm512_storeu_si512(vc, vcode);
        _mm512_storeu_si512(cr, crc);
        _mm512_storeu_si512(me, _mm512_srli_epi64(d0, 62));
        _mm512_storeu_si512(fi, q0);
        _mm512_storeu_si512(la, q3);
        for (int k = 0; k < 8; k++) {
            rifl_frame_info *info = &infos[done + k];
            info->syn = (unsigned)sy[k];
            info->vcode = (uint16_t)vc[k];
            info->crc = (uint16_t)cr[k];
            info->id = (uint16_t)(cr[k] ^ vc[k]);
            info->meta = (unsigned)me[k];
            info->key = (uint16_t)((me[k] << 14) | (fi[k] >> 50));
            info->format = (uint8_t)(la[k] >> 16);
            if (rifl_frame_classify(info, 30) != RIFL_OK)
                *bad = 1;
        }
    }
    *descr = h;
    return done;
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
    if (frame_bits == 256 && have_avx512)
        done = encode256x8(wire, n, syn, meta, payloads, ids, scr);
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
    if (frame_bits == 256 && have_avx512)
        done = decode256x8(wire, n, descr, payloads, infos, &bad);
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
    return frame_bits == 256 && have_avx512;
#else
    (void)frame_bits;
    return 0;
#endif
}

/* Batch encode / decode of consecutive frames of one stream, and the choice
 * of code path.
 *
 * Every path gives bit for bit what rifl_frame_encode / rifl_frame_decode
 * give frame by frame.  The paths, best first: "avx512" (eight frames per
 * 512-bit vector, frame_batch_avx512.c), "avx2" (four per 256-bit vector,
 * frame_batch_avx2.c) and "portable" (the frame-at-a-time calls in a loop).
 * The best one the CPU runs is chosen once, when the library is loaded, or
 * the one named by the environment variable RIFL_CODEC_PATH when the CPU
 * runs it; rifl_frame_batch_set_path changes it. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/frame.h"
#include "frame_batch_priv.h"

static int portable_setup(void) { return 1; }
static int portable_width(unsigned frame_bits) { (void)frame_bits; return 0; }

static const struct rifl_batch_kernel batch_portable = {
    "portable", "nothing", portable_setup, portable_width, NULL, NULL,
};

/* best first */
static const struct rifl_batch_kernel *const kernels[] = {
#ifdef RIFL_BATCH_X86
    &rifl_batch_avx512,
    &rifl_batch_avx2,
#endif
    &batch_portable,
};
#define NKERNELS (sizeof kernels / sizeof kernels[0])

/* The one-time dispatch state: which paths the CPU runs (set once, when the
 * library is loaded) and the path in use. */
static unsigned char kernel_ok[NKERNELS];
static const struct rifl_batch_kernel *active = &batch_portable;

static int kernel_index(const char *name)
{
    for (unsigned i = 0; i < NKERNELS; i++)
        if (!strcmp(kernels[i]->name, name))
            return (int)i;
    return -1;
}

__attribute__((constructor)) static void batch_dispatch_init(void)
{
#ifdef RIFL_BATCH_X86
    __builtin_cpu_init();
#endif
    const struct rifl_batch_kernel *best = NULL;
    for (unsigned i = 0; i < NKERNELS; i++) {
        kernel_ok[i] = (unsigned char)(kernels[i]->setup() != 0);
        if (kernel_ok[i] && !best)
            best = kernels[i];
    }
    const char *env = getenv("RIFL_CODEC_PATH");
    int want = env ? kernel_index(env) : -1;
    __atomic_store_n(&active, want >= 0 && kernel_ok[want] ? kernels[want] : best,
                     __ATOMIC_RELEASE);
}

static const struct rifl_batch_kernel *batch_kernel(void)
{
    return __atomic_load_n(&active, __ATOMIC_ACQUIRE);
}

const char *rifl_frame_batch_path_name(unsigned i)
{
    return i < NKERNELS ? kernels[i]->name : NULL;
}

int rifl_frame_batch_path_check(const char *name, char *msg, size_t msglen)
{
    if (!name)
        return rifl_null_arg(msg, msglen, "rifl_frame_batch_path_check", "name");
    int k = kernel_index(name);
    if (k < 0) {
        rifl_msg(msg, msglen, "no codec path named '%s'; the paths are avx512, avx2 and "
                 "portable", name);
        return RIFL_ERR_INVALID_ARG;
    }
    if (!kernel_ok[k]) {
        rifl_msg(msg, msglen, "codec path %s: the CPU lacks %s", name, kernels[k]->needs);
        return RIFL_ERR_UNSUPPORTED;
    }
    return RIFL_OK;
}

const char *rifl_frame_batch_path(void)
{
    return batch_kernel()->name;
}

int rifl_frame_batch_set_path(const char *name)
{
    if (!name) {
        for (unsigned i = 0; i < NKERNELS; i++)
            if (kernel_ok[i]) {
                __atomic_store_n(&active, kernels[i], __ATOMIC_RELEASE);
                break;
            }
        return RIFL_OK;
    }
    int rc = rifl_frame_batch_path_check(name, NULL, 0);
    if (rc == RIFL_OK)
        __atomic_store_n(&active, kernels[kernel_index(name)], __ATOMIC_RELEASE);
    return rc;
}

int rifl_frame_batch_simd(unsigned frame_bits)
{
    return batch_kernel()->width_ok(frame_bits);
}

/* Any bit above the fields' widths (SYN and META 2 bits, IDs 12), eight
 * frames a step in 64-bit words, without branches. */
static bool fields_too_wide(const uint8_t *syn, const uint8_t *meta, const uint16_t *ids,
                            unsigned n)
{
    uint64_t b = 0, w = 0;
    unsigned j = 0;
    for (; j + 8 <= n; j += 8) {
        uint64_t s8, m8, i8[2];
        memcpy(&s8, syn + j, sizeof s8);
        memcpy(&m8, meta + j, sizeof m8);
        memcpy(i8, ids + j, sizeof i8);
        b |= s8 | m8;
        w |= i8[0] | i8[1];
    }
    unsigned high = (b & 0xFCFCFCFCFCFCFCFCull) != 0 || (w & 0xF000F000F000F000ull) != 0;
    for (; j < n; j++)
        high |= ((unsigned)syn[j] | meta[j]) >> 2 | (unsigned)ids[j] >> 12;
    return high != 0;
}

int rifl_frame_encode_batch(uint8_t *wire, unsigned frame_bits, unsigned n,
                            const uint8_t *syn, const uint8_t *meta, const uint8_t *payloads,
                            const uint16_t *ids, uint64_t *scr)
{
    if (!wire || !syn || !meta || !payloads || !ids || !scr ||
        rifl_frame_width_check(frame_bits) != RIFL_OK)
        return RIFL_ERR_INVALID_ARG;
    if (fields_too_wide(syn, meta, ids, n))
        return RIFL_ERR_INVALID_ARG;
    unsigned fb = frame_bits / 8, pb = rifl_payload_bytes(frame_bits), done = 0;
    const struct rifl_batch_kernel *k = batch_kernel();
    if (k->width_ok(frame_bits))
        done = k->encode(wire, frame_bits, n, syn, meta, payloads, ids, scr);
    for (unsigned j = done; j < n; j++)
        rifl_frame_encode(wire + (size_t)j * fb, frame_bits, syn[j], meta[j],
                          payloads + (size_t)j * pb, ids[j], scr);
    return RIFL_OK;
}

/* The frames a kernel left, one at a time. */
static void decode_rest(const uint8_t *wire, unsigned frame_bits, unsigned from, unsigned n,
                        uint64_t *descr, uint8_t *payloads, struct rifl_batch_out *out)
{
    unsigned fb = frame_bits / 8, pb = rifl_payload_bytes(frame_bits);
    for (unsigned j = from; j < n; j++) {
        rifl_frame_info info;
        int rc = rifl_frame_decode(wire + (size_t)j * fb, frame_bits, descr,
                                   payloads ? payloads + (size_t)j * pb : NULL, &info);
        if (out->expect) {
            if (info.syn == RIFL_SYN_DATA && info.meta == RIFL_META_FULL &&
                info.id == out->expect[j])
                continue;
            out->odd[j / 64] |= 1ULL << (j % 64);
            out->nodd++;
        }
        out->infos[j] = info;
        if (rc != RIFL_OK)
            out->bad = 1;
    }
}

static void decode_run(const uint8_t *wire, unsigned frame_bits, unsigned n, uint64_t *descr,
                       uint8_t *payloads, struct rifl_batch_out *out)
{
    unsigned done = 0;
    const struct rifl_batch_kernel *k = batch_kernel();
    if (k->width_ok(frame_bits))
        done = k->decode(wire, frame_bits, n, descr, payloads, out);
    decode_rest(wire, frame_bits, done, n, descr, payloads, out);
}

int rifl_frame_decode_batch(const uint8_t *wire, unsigned frame_bits, unsigned n,
                            uint64_t *descr, uint8_t *payloads, rifl_frame_info *infos)
{
    if (!wire || !descr || !infos || rifl_frame_width_check(frame_bits) != RIFL_OK)
        return RIFL_ERR_INVALID_ARG;
    struct rifl_batch_out out = { NULL, infos, NULL, 0, 0 };
    decode_run(wire, frame_bits, n, descr, payloads, &out);
    return out.bad ? RIFL_ERR_FRAME : RIFL_OK;
}

int rifl_frame_decode_verify(const uint8_t *wire, unsigned frame_bits, unsigned n,
                             uint64_t *descr, const uint16_t *expect, uint8_t *payloads,
                             uint64_t *odd, rifl_frame_info *infos)
{
    if (!wire || !descr || !expect || !odd || !infos ||
        rifl_frame_width_check(frame_bits) != RIFL_OK)
        return RIFL_ERR_INVALID_ARG;
    memset(odd, 0, (size_t)(n + 63) / 64 * sizeof *odd);
    struct rifl_batch_out out = { expect, infos, odd, 0, 0 };
    decode_run(wire, frame_bits, n, descr, payloads, &out);
    return (int)out.nodd;
}

#ifdef RIFL_BATCH_X86
/* ---- the vector paths' constants ----------------------------------- */

struct rifl_batch_consts rifl_batch_k;

/* a * b mod Q for a, b < 2^33, bit by bit */
static uint64_t scr_mulmod(uint64_t a, uint64_t b)
{
    uint64_t r = 0;
    for (int i = 32; i >= 0; i--) {
        r <<= 1;
        if (r >> 33)
            r ^= RIFL_SCR_Q;
        if ((b >> i) & 1)
            r ^= a;
    }
    return r;
}

/* w^n mod Q, n may be negative: w^-1 = w^32 + w^19, since
 * w * (w^32 + w^19) = Q + 1 */
static uint64_t scr_wpow(long n)
{
    uint64_t base = n < 0 ? (1ULL << 32) | (1ULL << 19) : 2, r = 1;
    for (unsigned long e = n < 0 ? (unsigned long)-n : (unsigned long)n; e; e >>= 1) {
        if (e & 1)
            r = scr_mulmod(r, base);
        base = scr_mulmod(base, base);
    }
    return r;
}

void rifl_batch_consts_init(void)
{
    static int done;
    if (done)
        return;
    struct rifl_batch_consts *k = &rifl_batch_k;
    uint64_t down = scr_wpow(-64);
    for (unsigned wi = 0; wi < 4; wi++) {
        long F = 256L << wi, L = F - 14;
        for (long j = 0; j < 8; j++) {
            uint64_t v = scr_wpow(F - 43 - (j + 1) * L);
            for (long i = 0; i < F / 64; i++, v = scr_mulmod(v, down))
                k->ek[wi][i][j] = v;
            k->ck[wi][j] = scr_wpow((j + 1) * L);
        }
    }
    for (unsigned j = 0; j < 32; j++)
        k->crck[j] = rifl_crc12_xpow(12 + 64 * j);
    /* floor(x^76 / G); its top bit, x^64, falls off */
    k->crc_mu = rifl_crc12_xpow_quotient(76);
    /* GF2P8AFFINEQB computes result bit t of a byte as the parity of the
     * byte AND matrix byte 7 - t */
    for (unsigned r = 0; r < 32; r++) {
        uint64_t c = rifl_crc12_xpow(12 + 64 * r); /* the weight of bit 0 */
        for (unsigned b = 0; b < 64; b++) {
            if (r > 0 || b >= 12)
                for (unsigned t = 0; t < 12; t++)
                    if ((c >> t) & 1)
                        k->crc_gf[r][t / 8][b / 8] |= 1ULL << (8 * (7 - t % 8) + b % 8);
            c <<= 1;
            if (c & 0x1000u)
                c ^= 0x1000u | RIFL_CRC12_POLY;
        }
    }
    done = 1;
}
#endif

/* The batch codec's code paths (frame_batch.c dispatches between them).
 * Not installed. */
#ifndef RIFL_FRAME_BATCH_PRIV_H
#define RIFL_FRAME_BATCH_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "rifl/frame.h"
#include "link_priv.h"

/* Vector kernels are built on x86-64 with GCC or Clang, each function with
 * its own target attribute, so that the library runs on any x86-64 CPU and
 * picks them at run time. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RIFL_BATCH_X86 1
#endif

/* What a decode kernel reports besides the payload bytes.  With `expect`
 * (rifl_frame_decode_verify), frame j is plain when it is a data frame with
 * META 01 whose ID equals expect[j]; any other frame gets its bit in `odd`
 * and its infos[] entry.  Without (`expect` NULL, rifl_frame_decode_batch),
 * every frame gets its infos[] entry. */
struct rifl_batch_out {
    const uint16_t *expect;
    rifl_frame_info *infos;
    uint64_t *odd;   /* bit j % 64 of word j / 64; cleared by the caller */
    unsigned nodd;   /* frames that are not plain */
    int bad;         /* a frame had an impossible byte count */
};

/* One code path.  The kernels take frames from the start of the batch in
 * groups and return how many they did; the caller finishes the rest with the
 * frame-at-a-time calls. */
struct rifl_batch_kernel {
    const char *name;
    const char *needs; /* what the CPU must have, for messages */
    /* 1 when the CPU has what the path needs (and its constants are ready);
     * called once, by the dispatcher's set-up */
    int (*setup)(void);
    int (*width_ok)(unsigned frame_bits);
    unsigned (*encode)(uint8_t *wire, unsigned frame_bits, unsigned n, const uint8_t *syn,
                       const uint8_t *meta, const uint8_t *payloads, const uint16_t *ids,
                       uint64_t *scr);
    unsigned (*decode)(const uint8_t *wire, unsigned frame_bits, unsigned n, uint64_t *descr,
                       uint8_t *payloads, struct rifl_batch_out *out);
};

extern const struct rifl_batch_kernel rifl_batch_avx512;
extern const struct rifl_batch_kernel rifl_batch_avx2;

/* A decoded frame's fields into its record: kind, length and end of packet
 * as rifl_frame_decode gives them.  `first` is the first payload word (the
 * key's last 14 bits on top), `format` the last payload byte. */
static inline int rifl_batch_info(rifl_frame_info *info, unsigned syn, unsigned meta,
                                  unsigned vcode, unsigned crc, uint64_t first, unsigned format,
                                  unsigned pbytes)
{
    info->syn = syn;
    info->meta = meta;
    info->vcode = (uint16_t)vcode;
    info->crc = (uint16_t)crc;
    info->id = (uint16_t)(crc ^ vcode);
    info->key = (uint16_t)((meta << 14) | (unsigned)(first >> 50));
    info->format = (uint8_t)format;
    return rifl_frame_classify(info, pbytes);
}

/* The result of one decoded frame, for a kernel's slow path: its record
 * (every frame without `expect`, the frames that are not plain with it) and
 * its bit in out->odd. */
static inline void rifl_batch_report(struct rifl_batch_out *out, unsigned j, unsigned syn,
                                     unsigned meta, unsigned vcode, unsigned crc, uint64_t first,
                                     unsigned format, unsigned pbytes)
{
    if (out->expect) {
        if (syn == RIFL_SYN_DATA && meta == RIFL_META_FULL && (crc ^ vcode) == out->expect[j])
            return;
        out->odd[j / 64] |= 1ULL << (j % 64);
        out->nodd++;
    }
    if (rifl_batch_info(&out->infos[j], syn, meta, vcode, crc, first, format, pbytes) != RIFL_OK)
        out->bad = 1;
}

/* ---- polynomial constants shared by the vector kernels -----------------
 *
 * The scrambler's state is a remainder.  Write the state h (the last 33
 * scrambled bits, bit 0 the newest) as g = T(h) = h ^ ((h & 0x1FFF) << 20)
 * (T is its own inverse).  Then one scrambled bit d moves g to
 * w * g + d * w^33 mod Q, Q = w^33 + w^20 + 1: the scrambler is a CRC over
 * Q in that basis.  After a frame whose scrambled region is L = F - 14 bits,
 * g' = w^L * g + e with e = w^33 * D mod Q, D the region's plain bits as a
 * polynomial (first bit highest).  So the state a frame leaves is one
 * carry-less multiply away from the state before it, and e comes from the
 * frame's data alone: no bit-serial chain from frame to frame. */
#define RIFL_SCR_Q ((1ULL << 33) | (1ULL << 20) | 1ULL)
/* Barrett constant floor(w^97 / Q) without its top bit w^64 */
#define RIFL_SCR_MU 0x0008004082001020ULL

/* The vector paths' carry-less multiply constants, per frame width
 * (index 0..3: 256, 512, 1024, 2048 bits, m = F/64 words) and lane j of
 * eight (the AVX2 path uses the first four). */
struct rifl_batch_consts {
    /* w^(F-43-64i-(j+1)L) mod Q: the weight of plain word i (wire-aligned,
     * SYN and VCODE bits zero) of the frame in lane j, scaled by w^-(j+1)L */
    uint64_t ek[4][32][8];
    /* w^((j+1)L) mod Q */
    uint64_t ck[4][8];
    /* x^(64j+12) mod G: the CRC weight of the word j places from the end */
    uint64_t crck[32];
    uint64_t crc_mu; /* floor(x^76 / G) without its top bit x^64 */
    /* The same CRC weights as GF2P8AFFINEQB bit matrices (AVX-512 path), for
     * the word r places from the end with its bytes transposed (lane k holds
     * byte k of eight frames): [r][0][k] gives CRC bits 0-7 of such a byte,
     * [r][1][k] bits 8-11.  The last word's 12 VCODE bits weigh nothing. */
    uint64_t crc_gf[32][2][8];
};
/* Filled once by rifl_batch_consts_init, from a path's set-up (which the
 * dispatcher runs once, when the library is loaded). */
extern struct rifl_batch_consts rifl_batch_k;
void rifl_batch_consts_init(void);

static inline uint64_t rifl_scr_t(uint64_t h)
{
    return h ^ ((h & 0x1FFFu) << 20);
}

#endif

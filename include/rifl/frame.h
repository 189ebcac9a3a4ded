/* rifl: the RIFL link-layer frame codec for one lane.
 *
 * Wire format: docs/link-layer.md, link rules §1-§5.  A frame is F bits
 * (F = 64, 128, 256, 512, 1024 or 2048) held in F/8 bytes, first bit sent =
 * most significant bit of byte 0:
 *
 *   | SYN (2) | META (2) | PAYLOAD (F-16) | VCODE (12) |
 *             \______ scrambled ________/
 *
 * VCODE = CRC12(frame as sent, VCODE bits zero) XOR frame ID.  The scrambler
 * is the self-synchronising 1 + x^13 + x^33 over the scrambled regions of
 * consecutive frames taken as one bit stream.  A scrambler state is a
 * uint64_t whose bit 0 is the most recent scrambled bit (only the low 33 bits
 * matter).
 *
 * Nothing here allocates or keeps hidden state; all calls are reentrant. */
#ifndef RIFL_FRAME_H
#define RIFL_FRAME_H

#include "rifl/api.h"

#include <stddef.h>
#include <stdint.h>
#include "rifl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIFL_FRAME_MIN_BITS 64
#define RIFL_FRAME_MAX_BITS 2048
#define RIFL_FRAME_MAX_BYTES (RIFL_FRAME_MAX_BITS / 8)
#define RIFL_PAYLOAD_MAX_BYTES (RIFL_FRAME_MAX_BYTES - 2)
#define RIFL_FID_MAX_BITS 12
#define RIFL_SCRAMBLER_MASK 0x1FFFFFFFFULL /* 33 bits */

/* SYN field */
enum {
    RIFL_SYN_DATA = 1,    /* 01 */
    RIFL_SYN_CONTROL = 2  /* 10 */
};

/* META field of data frames: bit 1 = end of packet, bit 0 = all bytes valid */
enum {
    RIFL_META_NONE = 0,        /* filler / flow control / extension */
    RIFL_META_FULL = 1,        /* full frame inside a packet */
    RIFL_META_PARTIAL_EOP = 2, /* last frame, fewer than P/8 bytes */
    RIFL_META_FULL_EOP = 3     /* last frame, exactly P/8 bytes */
};

/* Last payload byte of META=00 frames */
enum {
    RIFL_FMT_FILLER = 0x00,
    RIFL_FMT_FC_ON = 0x01,   /* "stop sending me user data" */
    RIFL_FMT_FC_OFF = 0x02,  /* "resume" */
    RIFL_FMT_EXT_MIN = 0x03  /* 0x03..0xFF: extension frames for upper layers */
};

/* Control keys (16 bits: the two META bits then the first 14 payload bits) */
enum {
    RIFL_KEY_IDLE = 0x0001,
    RIFL_KEY_PAUSE = 0x0010,
    RIFL_KEY_RETRANSMIT = 0x1000
};

typedef enum rifl_frame_kind {
    RIFL_KIND_DATA = 0,  /* META != 00: user bytes */
    RIFL_KIND_FILLER,    /* META 00, last byte 0x00 */
    RIFL_KIND_FC_ON,     /* META 00, last byte 0x01 */
    RIFL_KIND_FC_OFF,    /* META 00, last byte 0x02 */
    RIFL_KIND_EXT,       /* META 00, last byte >= 0x03 (upper-layer frame) */
    RIFL_KIND_CONTROL,   /* SYN 10 */
    RIFL_KIND_INVALID,   /* SYN 00 or 11: alignment lost */
    RIFL_KIND_COUNT
} rifl_frame_kind;

/* Lower-case name of a kind: "data", "filler", "fc_on", "fc_off", "ext",
 * "control", "invalid". */
RIFL_API const char *rifl_frame_kind_name(rifl_frame_kind k);

/* RIFL_OK when F is a supported frame width, else RIFL_ERR_INVALID_ARG. */
RIFL_API int rifl_frame_width_check(unsigned frame_bits);

static inline unsigned rifl_payload_bytes(unsigned frame_bits)
{
    return (frame_bits - 16) / 8;
}

/* What the CRC and scrambler calls below return for a NULL frame or an
 * unsupported frame width: values no real CRC (12 bits) or scrambler state
 * (33 bits) can take. */
#define RIFL_CRC12_INVALID 0xFFFFu
#define RIFL_SCRAMBLER_INVALID UINT64_MAX

/* CRC-12 (poly 0x02F, init 0, no reflection, no final XOR, MSB first) of a
 * frame: a direct-form CRC register run over all F bits with the VCODE bits
 * taken as zero (the VCODE bits in the buffer are ignored).  Table driven.
 * RIFL_CRC12_INVALID for a NULL frame or an unsupported width. */
RIFL_API uint16_t rifl_crc12(const uint8_t *frame, unsigned frame_bits);

/* Scramble (descramble) the scrambled region of `frame` in place, continuing
 * from `state`; returns the state after the frame.  SYN and VCODE bits are left
 * untouched.  Word-parallel.  RIFL_SCRAMBLER_INVALID (frame untouched) for a
 * NULL frame or an unsupported width. */
RIFL_API uint64_t rifl_scramble(uint8_t *frame, unsigned frame_bits, uint64_t state);
RIFL_API uint64_t rifl_descramble(uint8_t *frame, unsigned frame_bits, uint64_t state);

/* Bit-at-a-time reference versions of the three calls above, kept as the
 * test oracle and as readable documentation of the algorithms (same answers
 * for bad arguments). */
RIFL_API uint16_t rifl_crc12_ref(const uint8_t *frame, unsigned frame_bits);
RIFL_API uint64_t rifl_scramble_ref(uint8_t *frame, unsigned frame_bits, uint64_t state);
RIFL_API uint64_t rifl_descramble_ref(uint8_t *frame, unsigned frame_bits, uint64_t state);

/* Build one wire frame.
 *   syn       RIFL_SYN_DATA or RIFL_SYN_CONTROL (0 and 3, illegal on a link,
 *             build frames a receiver must refuse: for tests)
 *   meta      two META bits (for a control frame: the key's first two bits)
 *   payload   F/8-2 plain payload bytes (for a control frame: the key's last
 *             14 bits then zeros); NULL means all zero
 *   frame_id  the sender's frame-ID counter (< 4096)
 *   scr       scrambler state in (its low 33 bits), updated to the state
 *             after this frame
 * Writes F/8 bytes to `wire`.  Returns RIFL_OK or RIFL_ERR_INVALID_ARG (the
 * state RIFL_SCRAMBLER_INVALID, which a refused scramble returns, included). */
RIFL_API int rifl_frame_encode(uint8_t *wire, unsigned frame_bits, unsigned syn,
                               unsigned meta, const uint8_t *payload, unsigned frame_id,
                               uint64_t *scr);

/* Build a control frame carrying `key`. */
RIFL_API int rifl_frame_encode_control(uint8_t *wire, unsigned frame_bits, uint16_t key,
                                       unsigned frame_id, uint64_t *scr);

/* A received frame taken apart. */
typedef struct rifl_frame_info {
    unsigned syn;           /* raw SYN bits, 0..3 */
    unsigned meta;          /* descrambled META bits */
    uint16_t vcode;         /* received VCODE */
    uint16_t crc;           /* CRC12 of the received bits */
    uint16_t id;            /* crc ^ vcode: the frame ID this frame claims */
    uint16_t key;           /* control frames: 16-bit key */
    uint8_t format;         /* last payload byte (META 00 frames) */
    rifl_frame_kind kind;
    unsigned payload_len;   /* valid user bytes (data frames), else 0 */
    unsigned eop;           /* 1 when a data frame ends a packet */
} rifl_frame_info;

/* Take a received wire frame apart.  `descr` is the receiver's descrambler
 * state (the last 33 received scrambled bits) and is updated.  `payload`
 * (may be NULL) receives the F/8-2 descrambled payload bytes.  The caller
 * compares info->id with its expected frame ID to verify the frame: a frame
 * is good exactly when they are equal.  Frames whose META/format contradict
 * each other (a partial frame claiming 0 or >= P/8 valid bytes) are reported
 * with kind RIFL_KIND_DATA and payload_len clamped, and RIFL_ERR_FRAME is
 * returned so the caller can count them; everything else returns RIFL_OK. */
RIFL_API int rifl_frame_decode(const uint8_t *wire, unsigned frame_bits, uint64_t *descr,
                               uint8_t *payload, rifl_frame_info *info);

/* Batch versions: n consecutive frames of one stream, frame j from syn[j],
 * meta[j], the payload at payloads + j*(F/8-2) and ids[j], written to
 * wire + j*(F/8); the scrambler state runs through them.  Bit for bit the same
 * as calling rifl_frame_encode n times, on every code path (see
 * rifl_frame_batch_path). */
RIFL_API int rifl_frame_encode_batch(uint8_t *wire, unsigned frame_bits, unsigned n,
                                     const uint8_t *syn, const uint8_t *meta,
                                     const uint8_t *payloads, const uint16_t *ids,
                                     uint64_t *scr);

/* n consecutive received frames; infos[j] as rifl_frame_decode gives; the
 * payloads (may be NULL) at payloads + j*(F/8-2).  RIFL_ERR_FRAME when any
 * frame had an impossible byte count (see rifl_frame_decode). */
RIFL_API int rifl_frame_decode_batch(const uint8_t *wire, unsigned frame_bits, unsigned n,
                                     uint64_t *descr, uint8_t *payloads, rifl_frame_info *infos);

/* A receiver's batch call: n consecutive received frames decoded and
 * verified against the frame IDs it expects, expect[j] for frame j.  Frame j
 * is plain when it is a good data frame inside a packet: SYN data, META 01
 * (full, not the end of a packet) and ID (CRC XOR VCODE) equal to expect[j].
 * Every frame's descrambled payload goes to payloads + j*(F/8-2) (payloads
 * may be NULL).  For every frame that is not plain, bit j % 64 of
 * odd[j / 64] is set and infos[j] is filled as rifl_frame_decode fills it;
 * the infos of plain frames are not written.  odd holds (n + 63) / 64 words,
 * all written; infos holds n records.  Returns the number of frames that are
 * not plain (0: all n are good full data frames in order), or
 * RIFL_ERR_INVALID_ARG. */
RIFL_API int rifl_frame_decode_verify(const uint8_t *wire, unsigned frame_bits, unsigned n,
                                      uint64_t *descr, const uint16_t *expect,
                                      uint8_t *payloads, uint64_t *odd,
                                      rifl_frame_info *infos);

/* The batch calls' code paths.  rifl_frame_batch_path_name(i) names path i,
 * best first ("avx512": AVX-512 with VPCLMULQDQ, eight frames per vector;
 * "avx2": AVX2 with PCLMULQDQ, four frames per vector; "portable": the
 * frame-at-a-time calls), NULL past the last.  The vector paths run frames of
 * 256 to 2048 bits; narrower frames go one at a time.  The best path the CPU
 * runs is chosen when the library is loaded, or the one named by the
 * environment variable RIFL_CODEC_PATH if the CPU runs it. */
RIFL_API const char *rifl_frame_batch_path_name(unsigned i);

/* RIFL_OK when the CPU runs path `name`; RIFL_ERR_UNSUPPORTED when it does
 * not, RIFL_ERR_INVALID_ARG for an unknown name, each with a message (such as
 * "codec path avx512: the CPU lacks AVX-512 ...") in msg (may be NULL). */
RIFL_API int rifl_frame_batch_path_check(const char *name, char *msg, size_t msglen);

/* The path the batch calls use now. */
RIFL_API const char *rifl_frame_batch_path(void);

/* Use path `name` from now on (NULL: the best the CPU runs again); as
 * rifl_frame_batch_path_check answers, the path unchanged on an error.  For
 * tests and benchmarks: not to be called while another thread is inside a
 * batch call. */
RIFL_API int rifl_frame_batch_set_path(const char *name);

/* 1 when the batch calls use vector instructions for this frame width on the
 * path in use. */
RIFL_API int rifl_frame_batch_simd(unsigned frame_bits);

#ifdef __cplusplus
}
#endif
#endif

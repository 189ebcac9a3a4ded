/* rifl: a lane as a serial bit stream (docs/multilane.md; lane rules
 * rifl-multilane §1-§2): the wire bit order of a frame in 64-bit transceiver
 * words, and the receive aligner that finds frame boundaries in a word
 * stream received at an unknown bit offset.
 *
 * Wire order.  Frame bit b (bit 0 = first SYN bit, the most significant bit
 * of byte 0) is bit 63 - (b mod 64) of word b div 64: word w is bytes
 * 8w .. 8w+7 of the frame read as a big-endian number.  Each word goes on
 * the wire least significant bit first.  A receiving transceiver hands over
 * 64 consecutive wire bits per word, the earliest in bit 0, so a word
 * stream received in step with the frames reproduces the frame's words.
 *
 * The aligner is a sans-I/O engine: it takes received words one at a time
 * (rifl_aligner_push) and hands back a frame each time one is complete at
 * its current candidate start, with whether the lane is aligned and up.  It
 * works on whole words with shifts; it allocates nothing and keeps all its
 * state in a caller-owned rifl_aligner. */
#ifndef RIFL_SERIAL_H
#define RIFL_SERIAL_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/counter.h"
#include "rifl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Frame bytes (F/8) to its F/64 transceiver words, and back.  F is a frame
 * width of the link rules of at least 64 bits (64, 128, ... 2048); returns
 * RIFL_ERR_INVALID_ARG otherwise. */
RIFL_API int rifl_serial_words(const uint8_t *frame, unsigned frame_bits, uint64_t *words);
RIFL_API int rifl_serial_frame(const uint64_t *words, unsigned frame_bits, uint8_t *frame);

/* Whether a frame's first word carries a valid SYN header (01 or 10). */
static inline bool rifl_serial_header_valid(uint64_t word0)
{
    unsigned syn = (unsigned)(word0 >> 62);
    return syn == 1u || syn == 2u;
}

/* rx_up: the counter that must stay aligned for 2^up_log2 words
 * (rifl-multilane §2).  20 is the reference's hardware; its simulation
 * build uses 12. */
#define RIFL_ALIGNER_UP_LOG2 20
#define RIFL_ALIGNER_UP_LOG2_SIM 12

typedef struct rifl_aligner_config {
    unsigned frame_bits;    /* F: 64 .. 2048, a power of two */
    unsigned up_log2;       /* 1 .. 24; 0 means RIFL_ALIGNER_UP_LOG2 */
} rifl_aligner_config;

typedef struct rifl_aligner_stats {
    uint64_t words;         /* words received */
    uint64_t frames;        /* frames handed back (at any candidate start) */
    uint64_t headers_valid; /* headers checked and found valid */
    uint64_t headers_invalid;
    uint64_t locks;         /* became aligned */
    uint64_t unlocks;       /* lost alignment (two invalid headers in a window) */
    uint64_t slides;        /* moves to the next candidate start */
    uint64_t ups;           /* rx_up rose */
    uint64_t downs;         /* rx_up fell */
} rifl_aligner_stats;

/* What a pushed word did (bits of rifl_aligner_result.events). */
enum {
    RIFL_ALIGNER_FRAME = 1u << 0,  /* frame[] holds a complete frame */
    RIFL_ALIGNER_LOCK = 1u << 1,   /* became aligned at this word */
    RIFL_ALIGNER_UNLOCK = 1u << 2, /* lost alignment and slid */
    RIFL_ALIGNER_SLIDE = 1u << 3,  /* moved to the next candidate start */
    RIFL_ALIGNER_UP = 1u << 4,     /* rx_up rose */
    RIFL_ALIGNER_DOWN = 1u << 5    /* rx_up fell */
};

typedef struct rifl_aligner_result {
    unsigned events;
    bool aligned;           /* after this word */
    bool up;                /* after this word */
} rifl_aligner_result;

/* The aligner's state.  Caller-owned (one per lane); its fields are the
 * aligner's own: read them through the functions below. */
typedef struct rifl_aligner {
    unsigned F, words_per_frame;
    uint32_t up_max;
    uint64_t prev;          /* the last word received */
    bool have_prev;
    unsigned bit;           /* candidate start: bit offset in a word, 0..63 */
    unsigned phase;         /* words of the current frame assembled */
    unsigned skip;          /* words to drop before the next frame starts */
    unsigned next_bit;      /* offset from the next frame on (after a slide) */
    bool slide_pending;
    unsigned candidate;     /* 0 .. F-1: which start is tried, cyclically */
    unsigned window;        /* checks in this window, 0..16 */
    unsigned valid, invalid;
    bool aligned;
    uint32_t up_count;
    bool up;
    uint64_t frame[32];     /* the frame being assembled, as words */
    rifl_aligner_stats st;
} rifl_aligner;

/* Sets `a` to its state at reset: not aligned, rx_up counter 0, candidate
 * start 0 (bit 0 of the first word received).  Returns RIFL_ERR_CONFIG,
 * with a message naming the setting, when cfg is out of range. */
RIFL_API int rifl_aligner_init(rifl_aligner *a, const rifl_aligner_config *cfg, char *msg,
                               size_t msglen);

/* One received word (64 wire bits, earliest in bit 0).  When a frame is
 * complete at the current candidate start, its F/8 bytes go to `frame`
 * (which may be NULL) and the result has RIFL_ALIGNER_FRAME; its header is
 * checked by the lock, slip and window rules.  The frame is one the lane
 * should take only while the result says aligned (verification and storing
 * only while up). */
RIFL_API rifl_aligner_result rifl_aligner_push(rifl_aligner *a, uint64_t word, uint8_t *frame);

/* The candidate start tried now: bits from the start of the stream, modulo
 * F, at which the aligner expects a frame to begin. */
RIFL_API unsigned rifl_aligner_offset(const rifl_aligner *a);
RIFL_API bool rifl_aligner_aligned(const rifl_aligner *a);
RIFL_API bool rifl_aligner_up(const rifl_aligner *a);
/* The rx_up counter, 0 .. 2^up_log2. */
RIFL_API uint32_t rifl_aligner_up_count(const rifl_aligner *a);
RIFL_API const rifl_aligner_stats *rifl_aligner_get_stats(const rifl_aligner *a);
/* Every counter of rifl_aligner_stats, named and explained (rifl/counter.h). */
RIFL_API const rifl_counter *rifl_aligner_counters(size_t *count);

#ifdef __cplusplus
}
#endif
#endif

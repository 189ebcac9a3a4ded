/* rifl: building blocks for simulating links: a one-way channel (delay line
 * with seeded random bit errors), a deterministic packet source and a
 * validator that checks every delivered byte.
 *
 * Everything is driven in frame slots by the caller and draws randomness
 * only from seeds given in the configuration. */
#ifndef RIFL_SIM_H
#define RIFL_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/error.h"
#include "rifl/frame.h"
#include "rifl/lane.h"
#include "rifl/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- channel: one direction of a cable ---------------------------------- */

typedef struct rifl_channel_config {
    unsigned frame_bits;
    unsigned delay_frames;  /* whole frame slots from send to receive (>= 0) */
    double ber;             /* independent bit error probability, 0..0.5 */
    uint64_t seed;
} rifl_channel_config;

typedef struct rifl_channel_stats {
    uint64_t frames;          /* frames carried */
    uint64_t bits;            /* bits carried */
    uint64_t bit_errors;      /* bits flipped */
    uint64_t frames_hit;      /* frames with at least one flipped bit */
} rifl_channel_stats;

typedef struct rifl_channel rifl_channel;

int rifl_channel_create(const rifl_channel_config *cfg, rifl_channel **out,
                        char *msg, size_t msglen);
void rifl_channel_free(rifl_channel *ch);

/* One slot: put `sent` (F/8 bytes, may be NULL for "nothing sent") on the
 * wire and return the frame leaving the far end in this slot, after bit
 * errors, or NULL while the line is still filling.  The returned pointer is
 * valid until the next call.  Bit errors are drawn by skipping ahead a
 * geometric number of bits to the next error, so an error-free frame costs
 * one comparison. */
const uint8_t *rifl_channel_step(rifl_channel *ch, const uint8_t *sent);

const rifl_channel_stats *rifl_channel_get_stats(const rifl_channel *ch);

/* Change the bit error rate from the next frame on (0 stops errors). */
int rifl_channel_set_ber(rifl_channel *ch, double ber);

/* Fast-forward support.  Frames that can still be put on the wire before
 * the next bit error (UINT64_MAX when the error rate is 0). */
uint64_t rifl_channel_clear_frames(const rifl_channel *ch);
/* Account for `frames` error-free frames sent without stepping (at most
 * rifl_channel_clear_frames()): statistics, the distance to the next error
 * and the ring position advance as if rifl_channel_step had carried them.
 * The caller rewrites the frames left in flight with
 * rifl_channel_inflight(). */
void rifl_channel_skip(rifl_channel *ch, uint64_t frames);
/* The ring entry of the frame that leaves `k` + 1 slots from now
 * (k < delay_frames), marked as holding a frame; F/8 writable bytes. */
uint8_t *rifl_channel_inflight(rifl_channel *ch, unsigned k);

/* Frames carried by content (rifl_lane_tx_frame / rifl_lane_rx_frame): only
 * a frame the channel corrupts is built, and its bits flipped.  A channel
 * carries frames either this way or as wire bytes, not both. */
typedef struct rifl_channel_frame {
    rifl_lane_frame f;       /* the frame as sent (f.rec points into the channel) */
    const uint8_t *wire;     /* bits were flipped: receive these F/8 bytes
                                instead; NULL for a clean frame */
} rifl_channel_frame;

/* Where the frame sent in this slot goes: fill it with rifl_lane_tx_frame
 * (the frame is written in place, never copied as a whole), then step. */
rifl_lane_frame *rifl_channel_frame_in(rifl_channel *ch);
/* rifl_channel_step for frames by content: `sent` says whether the entry
 * from rifl_channel_frame_in holds a frame (its record is copied into the
 * channel); draws the same errors as rifl_channel_step would.  Returns the
 * frame leaving the far end, valid until the next call, or NULL. */
const rifl_channel_frame *rifl_channel_step_frame(rifl_channel *ch, bool sent);
/* rifl_channel_inflight for frames by content: put the clean frame `f`
 * (record copied) in the entry that leaves k + 1 slots from now. */
void rifl_channel_inflight_frame(rifl_channel *ch, unsigned k, const rifl_lane_frame *f);

/* ---- deterministic packets ----------------------------------------------- */

/* Packet `seq` of stream `seed`: its length (uniform in [min_len, max_len])
 * and content are a pure function of (seed, seq), so a receiver can check a
 * packet without a copy of what was sent. */
size_t rifl_packet_len(uint64_t seed, uint64_t seq, size_t min_len, size_t max_len);
void rifl_packet_fill(uint64_t seed, uint64_t seq, uint8_t *buf, size_t len);

/* ---- validator ------------------------------------------------------------ */

typedef struct rifl_validator_stats {
    uint64_t packets_ok, bytes_ok;
    uint64_t lost;        /* packets skipped over (detected by a later one) */
    uint64_t duplicated;  /* a packet delivered again */
    uint64_t reordered;   /* an older packet after a newer one */
    uint64_t corrupted;   /* a packet matching no expected one */
} rifl_validator_stats;

typedef struct rifl_validator {
    uint64_t seed;
    size_t min_len, max_len;
    uint64_t next_seq;     /* sequence number expected next */
    uint8_t *buf;          /* packet being assembled (max_len bytes) */
    uint8_t *ref;          /* scratch for the expected packet */
    size_t have;           /* bytes of the current packet so far */
    bool overlong;
    rifl_validator_stats st;
    /* optional packet-length model replacing rifl_packet_len(seed, seq,
     * min_len, max_len) (min_len/max_len then only bound the buffer) */
    size_t (*len_fn)(void *ctx, uint64_t seq);
    void *len_ctx;
} rifl_validator;

int rifl_validator_init(rifl_validator *v, uint64_t seed, size_t min_len, size_t max_len);
void rifl_validator_free(rifl_validator *v);
/* Feed bytes as read from a lane; `eop` ends a packet.  Returns the sequence
 * number of the packet completed (>= 0) when eop is set and it matched,
 * -1 when no packet completed, -2 when a completed packet was wrong. */
int64_t rifl_validator_feed(rifl_validator *v, const uint8_t *data, size_t len, int eop);
/* True when nothing was lost, duplicated, reordered or corrupted. */
bool rifl_validator_clean(const rifl_validator *v);

#ifdef __cplusplus
}
#endif

/* ---- two lanes back to back ------------------------------------------------ */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rifl_pair_config {
    rifl_lane_config lane;   /* both ends use it */
    double ber[2];           /* [0]: A -> B, [1]: B -> A */
    uint64_t seed[2];        /* channel seeds, one per direction */
    unsigned delay_frames;   /* one-way delay; 0 = from lane.link */
    bool encode_all;         /* build and decode every frame's wire bytes;
                                otherwise frames travel by content (same
                                results, see rifl_lane_tx_frame) */
} rifl_pair_config;

typedef struct rifl_pair {
    rifl_lane *lane[2];      /* [0] = A, [1] = B */
    rifl_channel *ch[2];     /* [0] carries A -> B, [1] carries B -> A */
    uint64_t slot;
    unsigned delay_frames;
    bool encode_all;
    uint8_t wire[2][RIFL_FRAME_MAX_BYTES]; /* sent in the last slot (encode_all) */
} rifl_pair;

/* One-way delay of a link in whole frame slots (rounded to nearest). */
unsigned rifl_link_delay_frames(const rifl_link_params *link, unsigned frame_bits);

int rifl_pair_create(const rifl_pair_config *cfg, rifl_pair **out, char *msg,
                     size_t msglen);
void rifl_pair_free(rifl_pair *p);
/* One slot: both lanes send, both channels carry, both lanes receive.
 * `res` (may be NULL) gets the two rifl_rx_result values (A's, B's). */
void rifl_pair_step(rifl_pair *p, int res[2]);

#ifdef __cplusplus
}
#endif
#endif

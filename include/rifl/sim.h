/* rifl: building blocks for simulating links: a deterministic packet
 * source, a validator that checks every delivered byte, and two lanes back
 * to back over simulated cables (rifl_phy_channel, rifl/phy.h).
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
#include "rifl/phy.h"
#include "rifl/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    rifl_phy *phy[2];        /* simulated cables: [0] carries A -> B, [1] B -> A */
    uint64_t slot;
    unsigned delay_frames;
    bool encode_all;
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

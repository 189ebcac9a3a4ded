/* rifl: link simulator.  Two lane engines back to back over two channels
 * with seeded random bit errors, a traffic generator at each end and a
 * validator checking every delivered packet at the other end, with latency
 * stamps.  Long error-free stretches in steady state are fast-forwarded in
 * bulk (same results as stepping every slot, see docs/simulator.md). */
#ifndef RIFL_LINKSIM_H
#define RIFL_LINKSIM_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/lane.h"
#include "rifl/phy.h"
#include "rifl/sim/latency.h"
#include "rifl/sim/traffic.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rifl_linksim_config {
    rifl_lane_config lane;     /* both ends */
    double ber[2];             /* [0]: A -> B, [1]: B -> A */
    uint64_t seed;             /* every random choice derives from it */
    uint64_t bytes;            /* payload bytes offered per direction (0: no limit) */
    uint64_t max_slots;        /* stop after this many frame slots (0: no limit) */
    double load;               /* offered load per direction as a fraction of
                                  the frame rate, (0, 1]; 1 saturates */
    size_t min_len, max_len;   /* packet sizes, uniform in [min, max] */
    const size_t *len_list;    /* or drawn uniformly from this list */
    unsigned len_count;
    double rx_ready;           /* probability that a receiving user reads in a
                                  slot, (0, 1]; 1 = always drained */
    uint64_t rx_stall, rx_period; /* reads stop for rx_stall slots out of every
                                  rx_period (0 = never) */
    unsigned delay_frames;     /* one-way delay; 0 = from lane.link */
    bool fast;                 /* fast-forward error-free steady stretches */
    bool encode_all;           /* build and decode every frame's wire bytes
                                  (same results, slower: for checking) */
    /* called now and then with the fraction done */
    void (*progress)(void *ctx, double fraction, uint64_t slots);
    void *progress_ctx;
} rifl_linksim_config;

/* Defaults: the paper's reference link (rifl_lane_default_config), packets
 * uniform in 1..8192 bytes, saturating, 10 MB per direction, fast path on. */
RIFL_API void rifl_linksim_defaults(rifl_linksim_config *cfg);

typedef struct rifl_linksim_result {
    uint64_t seed;
    uint64_t channel_seed[2], stream_seed[2];
    unsigned delay_frames;
    double frame_ns;             /* one frame slot */
    uint64_t slots;              /* frame slots simulated */
    uint64_t fast_slots, skips;  /* of which fast-forwarded, in how many runs */
    uint64_t offered_packets[2], offered_bytes[2]; /* per direction */
    uint64_t window[2];          /* measuring window per direction: slots up
                                    to the last delivery (or the whole run) */
    double goodput_gbps;         /* delivered payload, mean of the directions */
    double efficiency;           /* payload bits / line bits, mean of the directions */
    rifl_validator_stats val[2]; /* [0]: A -> B traffic, checked at B */
    rifl_lane_stats lane[2];
    rifl_phy_stats ch[2];
    rifl_hist lat;               /* packet latency in slots, both directions:
                                    first bit sent to last bit read */
    rifl_hist lat_last;          /* last frame of the packet sent to read */
    bool complete;               /* every offered packet arrived */
    bool lossless;               /* nothing lost, duplicated, reordered, corrupted */
} rifl_linksim_result;

/* Check a configuration; RIFL_ERR_CONFIG with a message naming the problem
 * and the fix. */
RIFL_API int rifl_linksim_check(const rifl_linksim_config *cfg, char *msg, size_t msglen);

/* Run a simulation.  `res` must be released with rifl_linksim_result_free
 * after RIFL_OK. */
RIFL_API int rifl_linksim_run(const rifl_linksim_config *cfg, rifl_linksim_result *res,
                              char *msg, size_t msglen);
RIFL_API void rifl_linksim_result_free(rifl_linksim_result *res);

/* Seeds derived from the run seed: channel of direction d, packet stream of
 * direction d. */
RIFL_API uint64_t rifl_linksim_seed(uint64_t seed, unsigned what);

#ifdef __cplusplus
}
#endif
#endif

/* rifl: the link simulator, the one driver of two lanes back to back.  Two
 * lane engines over two cables with seeded random bit errors, a sending user
 * at each end and a receiving user checking every delivered packet at the
 * other end, with latency stamps.  Long error-free stretches in steady state
 * are fast-forwarded in bulk (same results as stepping every slot, see
 * docs/simulator.md).  `rifl sim link`, `rifl demo` and the randomised tests
 * all run on it; hooks let a caller decide when its users read and watch
 * every slot. */
#ifndef RIFL_LINKSIM_H
#define RIFL_LINKSIM_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/bond.h"
#include "rifl/lane.h"
#include "rifl/phy.h"
#include "rifl/sim/latency.h"
#include "rifl/sim/pair.h"
#include "rifl/sim/traffic.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a sending user hands packets to its lane. */
typedef enum rifl_linksim_offer {
    RIFL_LINKSIM_WHOLE = 0,  /* whole packets (rifl_lane_send), as many per
                                slot as the transmit queue takes */
    RIFL_LINKSIM_PARTS = 1   /* one rifl_lane_send_part call per slot: a
                                packet goes in as the queue makes room, so
                                packets may be larger than the queue */
} rifl_linksim_offer;

/* What an observer sees after each slot stepped one at a time. */
typedef struct rifl_linksim_slot {
    uint64_t t;                   /* the slot just stepped */
    const rifl_pair *pair;        /* the lanes and cables */
    const rifl_pair_slot *wire;   /* what the slot did */
    bool complete;                /* everything offered was delivered */
} rifl_linksim_slot;

/* stall_slots' default: 2^22 slots, far beyond any recovery of a link
 * that still carries data (the longest, a serial lane's start-up at the
 * reference's rx_up, takes about 2^20 words) */
#define RIFL_LINKSIM_STALL_SLOTS ((uint64_t)1 << 22)

typedef struct rifl_linksim_config {
    rifl_lane_config lane;     /* both ends */
    double ber[2];             /* [0]: A -> B, [1]: B -> A */
    uint64_t seed;             /* every random choice derives from it */
    uint64_t bytes;            /* payload bytes offered per direction (0: no limit) */
    uint64_t max_slots;        /* stop after this many frame slots (0: no limit) */
    uint64_t stall_slots;      /* a run whose checks found a packet lost or
                                  corrupted ends once no packet has arrived
                                  whole for this many slots while some are
                                  still due (0: RIFL_LINKSIM_STALL_SLOTS):
                                  such a stream may never complete */
    double load;               /* offered load per direction as a fraction of
                                  the frame rate, (0, 1]; 1 saturates */
    size_t min_len, max_len;   /* packet sizes, uniform in [min, max] */
    const size_t *len_list;    /* or drawn uniformly from this list */
    unsigned len_count;
    double rx_ready;           /* probability that a receiving user reads in a
                                  slot, (0, 1]; 1 = always drained */
    uint64_t rx_stall, rx_period; /* reads stop for rx_stall slots out of every
                                  rx_period (0 = never) */
    unsigned delay_frames;     /* one-way delay; 0 = from lane.link (a delay
                                  given must fit the frame-ID width as the
                                  link's round trip does: 2^K >= 32 + 2 x delay
                                  + pipeline frames) */
    bool fast;                 /* fast-forward error-free steady stretches
                                  (runs with whole packets, users after the
                                  wire and no read_budget hook) */
    bool encode_all;           /* build and decode every frame's wire bytes
                                  (same results, slower: for checking) */
    bool carry;                /* with fast: the recovery from a frame hit
                                  with no other hit near goes as counts, the
                                  course learned from the first such hit
                                  each way (same results; default on) */
    /* serial lanes (rifl/serial.h, rifl_phy_serial): each direction a bit
     * stream in which the receiver's aligner must find the frames; off:
     * frames arrive aligned (the single-lane model) */
    bool serial;
    unsigned bit_offset[2];    /* bits each line carries beyond the delay
                                  (pipeline_frames must cover them: see
                                  rifl_linksim_offset_frames) */
    double slip_rate[2];       /* bit slips per received frame, 0 .. 1 */
    unsigned up_log2;          /* the aligners' rx_up length: 2^up_log2 words
                                  (0: 20, the reference; 12: its simulation
                                  build) */
    /* bonded links (rifl/bond.h): lanes > 1 runs a bonded end of `lanes`
     * lanes at each side (groups of group_lanes, 0: all of them), every
     * lane with its own cable (or serial line) per direction, its own
     * errors and, serial, its own bit offset (lane_bit_offset[dir][lane]);
     * whole packets at saturation only, no fast path, no hooks */
    unsigned lanes;            /* 0 or 1: one lane, the model above */
    unsigned group_lanes;
    unsigned lane_bit_offset[2][RIFL_BOND_MAX_LANES];
    /* skew: lane i's lines (both directions) are this many bits longer;
     * whole frames unless the lanes are serial.  Within a group the skew
     * must stay below a third of the receive buffer (rifl-multilane §4.4),
     * and the lanes' round trip (pipeline_frames) must include twice the
     * largest */
    unsigned lane_skew_bits[RIFL_BOND_MAX_LANES];
    /* clock offset: end A's clock runs ppm faster than end B's (negative:
     * slower), each end compensating as rifl-multilane §3 says; any offset
     * runs on the bonded driver (one lane or more).  Offsets beyond
     * ppm_tolerance (0: 200) are refused */
    double ppm, ppm_tolerance;
    /* faults (rifl-multilane §5), on bonded links: lane dead_lane's lines
     * carry nothing from its ends' slot dead_at on, both directions (serial
     * lanes only: its receivers lose alignment); lanes swap_lanes[0] and
     * [1] have their lines crossed, both directions alike */
    bool dead;
    unsigned dead_lane;
    uint64_t dead_at;
    bool swapped;
    unsigned swap_lanes[2];
    bool lane_tags;            /* serial lanes tag their control frames and
                                  check the tags (rifl-multilane §5.1) */
    /* the run's course (all 0: users after the wire, whole packets, errors
     * and packets throughout) */
    rifl_linksim_offer offer;
    bool users_first;          /* a slot is: the users (send, read), then the
                                  wire; a run of N slots ends after slot
                                  N-1's wire.  Default: the wire, then the
                                  users, who also act once before slot 0, so
                                  a run ends with the users having read what
                                  its last slot delivered */
    uint64_t offer_slots;      /* at this slot new packets and bit errors
                                  stop (0: never); the run then ends when
                                  everything offered is delivered */
    uint64_t settle_slots;     /* then up to this many more slots, until the
                                  observer is satisfied */
    bool seeds_given;          /* use these seeds instead of those derived
                                  from `seed` (rifl_linksim_seed) */
    uint64_t channel_seed[2], stream_seed[2];
    /* bytes the receiving user of direction `dir` reads in slot t: 0 for
     * none, SIZE_MAX for all there is (NULL: rx_ready and rx_stall decide) */
    size_t (*read_budget)(void *ctx, unsigned dir, uint64_t t);
    /* called after every slot stepped one at a time (never for the
     * fast-forwarded ones); returns true when it needs no more slots (see
     * settle_slots) */
    bool (*observe)(void *ctx, const rifl_linksim_slot *slot);
    void *hook_ctx;
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
    uint64_t ref_slots;          /* and of the others, stepped by reference
                                    (rifl_pair_ref_step) */
    uint64_t quiet_slots;        /* of which in quiet runs: the lanes stepped,
                                    the users' side in one step */
    uint64_t carried;            /* frame hits whose recovery the fast path
                                    carried as counts (a recovery learned) */
    uint64_t quiet_hits;         /* frame hits quiet runs went through (see
                                    docs/simulator.md, "Frame hits inside
                                    quiet runs") */
    uint64_t offered_packets[2], offered_bytes[2]; /* per direction: packets
                                    the lane took whole, and their bytes */
    uint64_t held_bytes[2];      /* bytes of a packet the sending user still
                                    held at the end (not taken by the lane) */
    int64_t first_read[2];       /* slot of the first bytes read per
                                    direction, -1 for none */
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
    uint64_t startup_slots;      /* serial lanes: slots until both lanes were
                                    first up (0: never) */
    rifl_aligner_stats aligner[2]; /* serial lanes: [0] the aligner of A -> B */
    rifl_phy_serial_stats serial[2];
    /* bonded runs: lane[], ch[], aligner[] and serial[] above sum the lanes;
     * per lane, [0] is end A's lane (A -> B line, aligner at B), [1] end B's */
    unsigned nlanes;
    struct rifl_linksim_lane {
        rifl_lane_stats lane[2];
        rifl_phy_stats ch[2];
        rifl_aligner_stats aligner[2];
        rifl_phy_serial_stats serial[2];
        uint64_t lane_down[2];          /* [e]: reported down at end e's receiver */
        /* [e]: with lane tags, the tag end e's receiver last settled on (the
         * peer lane's number and lane count; -1: none) */
        int peer_lane[2], peer_lanes[2];
    } lanes[RIFL_BOND_MAX_LANES];
    rifl_bond_stats bond[2];
    uint64_t comp_requests[2];   /* compensation slots each end asked its lanes for */
    bool complete;               /* every offered packet arrived */
    bool stalled;                /* ended by stall_slots: packets were lost
                                    or corrupted and none arrived whole
                                    since */
    bool lossless;               /* nothing lost, duplicated, reordered, corrupted */
} rifl_linksim_result;

/* Check a configuration; RIFL_ERR_CONFIG with a message naming the problem
 * and the fix. */
RIFL_API int rifl_linksim_check(const rifl_linksim_config *cfg, char *msg, size_t msglen);

/* Frames the serial lines' bit offsets add to the lanes' round trip beyond
 * what pipeline_frames must already hold for the skew (twice the largest, in
 * whole frames): each direction's slowest line, skew and offset together,
 * in whole frames (the part below one frame, like the line delay's rounding
 * to whole slots, is left to the round trip's margin).  0 without serial
 * lanes.  pipeline_frames must include them too: rifl_linksim_check refuses
 * it otherwise. */
RIFL_API unsigned rifl_linksim_offset_frames(const rifl_linksim_config *cfg);

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

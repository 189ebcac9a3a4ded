/* rifl simulation: two lanes back to back over two simulated cables
 * (rifl_phy_channel, rifl/phy.h), stepped one frame slot at a time. */
#ifndef RIFL_SIM_PAIR_H
#define RIFL_SIM_PAIR_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stdint.h>

#include "rifl/error.h"
#include "rifl/lane.h"
#include "rifl/phy.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rifl_pair_config {
    rifl_lane_config lane;   /* both ends use it */
    double ber[2];           /* [0]: A -> B, [1]: B -> A */
    uint64_t seed[2];        /* channel seeds, one per direction */
    unsigned delay_frames;   /* one-way delay; 0 = from lane.link (checked
                                against the frame-ID width: 2^K >= 32 + 2 x
                                delay + pipeline frames) */
    bool encode_all;         /* build and decode every frame's wire bytes;
                                otherwise frames travel by content (same
                                results, see rifl_lane_tx_frame) */
    /* serial lanes (rifl_phy_serial): each direction a bit stream that the
     * receiver's aligner must find the frames in; off: aligned frames over
     * rifl_phy_channel */
    bool serial;
    unsigned bit_offset[2];  /* bits each line carries beyond delay_frames */
    double slip_rate[2];     /* bit slips per received frame */
    unsigned up_log2;        /* the aligners' rx_up length (0: 20) */
    /* lanes made by the caller (both or neither, configured as `lane`
     * says), for example lane i of two bonded ends (rifl/bond.h): the pair
     * moves their frames and never frees them.  NULL: the pair makes its
     * own. */
    rifl_lane *lanes[2];
} rifl_pair_config;

#define RIFL_PAIR_HITS 32

typedef struct rifl_pair {
    rifl_lane *lane[2];      /* [0] = A, [1] = B */
    rifl_phy *phy[2];        /* simulated cables: [0] carries A -> B, [1] B -> A */
    uint64_t slot;
    unsigned delay_frames;
    bool encode_all;
    size_t sent_bytes;       /* bytes of a frame as it goes on the cable */
    bool serial;             /* serial lanes: the PHYs' aligners drive the lanes */
    bool rx_aligned[2], rx_up[2]; /* [i]: what lane i was last told */
    uint64_t startup_slot;   /* slot at which both lanes were first up (0: not yet) */
    bool own_lanes;          /* the pair made its lanes and frees them */
    /* stepping by reference (rifl_pair_ref_begin) */
    rifl_lane_ref *ref[2];   /* [i]: frames in flight from lane i, a ring of
                                delay_frames (data RIFL_LANE_REF_NONE: not
                                by reference, see ref_frame) */
    struct rifl_pair_inflight *ref_frame[2]; /* the same ring: frames in the
                                cable by content or as wire bytes */
    unsigned ref_pos;        /* the entry of the frames arriving in this slot */
    bool by_ref;             /* between rifl_pair_ref_begin and _end */
    uint64_t ref_from;       /* slot at which it began */
    bool ref_conv[2];        /* the frames in flight on phy[i] when it began
                                went on as references (rifl_pair_ref_begin) */
    uint64_t hits_seen[2];   /* frames hit on phy[i] after the last slot */
    bool last_hit[2];        /* the last slot's frame on phy[i] was hit (by
                                reference: and its damage spills into the
                                next frame, which must be built too) */
    uint64_t hit_slot[2];    /* the slot of the last frame hit on cable phy[i],
                                + 1 (0: none yet; not kept for serial lanes) */
    uint64_t ref_clear[2];   /* frames lane i sends before the next is hit */
    uint64_t ref_pend[2];    /* frames sent by reference, not yet through phy[i] */
    uint8_t *ref_store[2];   /* [i]: delay_frames + 1 places for lane i's frames
                                built by content in a stretch: the content,
                                then its wire bytes when damaged */
    unsigned ref_next[2];    /* the place the next one takes */
    size_t ref_stride, content_bytes;
    /* frame hits that quiet runs carry (rifl_pair_ref_quiet): the hit frame
     * keeps its SYN, verifies as no frame ID and leaves the far end's
     * descrambler as an undamaged frame would, whatever the frame (the
     * codec is linear: a frame of zeros stands for all) */
    struct rifl_pair_hits {
        uint64_t at[RIFL_PAIR_HITS];    /* the cable's frame count at the hit */
        uint16_t key[RIFL_PAIR_HITS];   /* a hit control frame's key XOR this */
        bool quiet[RIFL_PAIR_HITS];     /* a quiet run can carry it */
        unsigned n, first;
        bool more;                      /* more hits may follow the last */
    } hits[2];               /* [i]: cable phy[i]'s next hits, peeked */
    uint64_t run_at[2][RIFL_PAIR_HITS];  /* a run's hits, from its first slot */
    uint16_t run_key[2][RIFL_PAIR_HITS];
    rifl_lane_ref run_sent[2][RIFL_PAIR_HITS];
    uint8_t zero_wire[RIFL_FRAME_MAX_BYTES]; /* a data frame of zeros, ID 0,
                                from scrambler state 0 */
    uint64_t zero_after;     /* the scrambler after it */
    uint16_t zero_key;       /* its key field */
    uint64_t quiet_hits[2];  /* frame hits quiet runs carried, per cable */
    uint64_t hit_faults;     /* of those, frames that did not come out as
                                foreseen (never, unless the codec changed) */
    /* idle stretches (rifl_pair_idle_skip) */
    int64_t *idle_log;       /* 2^K entries, all -1: every frame a filler */
    rifl_lane_frame *idle_frames[2]; /* [i]: lane i's frames left in flight */
} rifl_pair;

/* A frame in flight while stepping by reference that is not a reference:
 * sent before by content or as damaged wire bytes (still in the cable). */
typedef struct rifl_pair_inflight {
    const void *frame;       /* the cable's frame */
    uint8_t form;            /* of `frame`: a rifl_phy_form */
} rifl_pair_inflight;

/* What one slot of a pair did, for observers. */
typedef struct rifl_pair_slot {
    uint64_t now;                   /* the slot */
    rifl_phy_form form;             /* of the frames sent: content or wire bytes */
    union {
        rifl_lane_frame content;
        uint8_t wire[RIFL_FRAME_MAX_BYTES];
    } sent[2];                      /* [i]: lane i's frame as it went on the cable
                                       (its first sent_bytes bytes) */
    rifl_phy_frame arrived[2];      /* [i]: what reached lane i (form NONE:
                                       nothing); valid until the next step */
    int rx[2];                      /* [i]: lane i's rifl_rx_result */
} rifl_pair_slot;

/* One-way delay of a link in whole frame slots (rounded to nearest). */
RIFL_API unsigned rifl_link_delay_frames(const rifl_link_params *link, unsigned frame_bits);

RIFL_API int rifl_pair_create(const rifl_pair_config *cfg, rifl_pair **out, char *msg,
                              size_t msglen);
RIFL_API void rifl_pair_free(rifl_pair *p);
/* One slot: both lanes send, both channels carry, both lanes receive.
 * With serial lanes each lane is first held at power-up, then told by the
 * aligner of the line it receives from whether it is aligned and up (its
 * send side sees its own rx_up: a lane is a group of one); it is released
 * from the hold once that aligner has locked.
 * `seen` (NULL when nobody looks) gets what happened. */
RIFL_API void rifl_pair_step(rifl_pair *p, rifl_pair_slot *seen);

/* Stepping by reference (rifl_lane_ref in rifl/lane.h): frames go on the
 * cables as references, no bytes built or copied, and the cables' error
 * processes are skipped over; only a frame an error falls in, and the frame
 * after it (the receiver's descrambler may still be off), are built by
 * content and put through the cable's errors (rifl_phy_channel_pass).  The
 * frames already in flight (damaged ones too) arrive as they are, and the
 * lanes decide and count exactly as with rifl_pair_step.  rifl_pair_ref_room
 * says whether slots may go by reference now (UINT64_MAX: any number; 0:
 * none: the pair carries wire bytes or serial lanes, or is still starting);
 * rifl_pair_ref_begin starts, rifl_pair_ref_step steps one slot,
 * rifl_pair_ref_end puts the frames sent in between that are still in
 * flight back on the cables by content.  rifl_pair_step must not be called
 * in between; the bit error rate changes through rifl_pair_set_ber. */
RIFL_API uint64_t rifl_pair_ref_room(rifl_pair *p);
RIFL_API int rifl_pair_ref_begin(rifl_pair *p);
RIFL_API void rifl_pair_ref_step(rifl_pair *p);
/* Quiet slots by reference (rifl_lane_quiet_run), at most `max` (within
 * `room`): the slots stepped, as many rifl_pair_ref_step calls would; with
 * `io`, user data frames delivered in sequence and sent from the transmit
 * queues go on with the run (under rifl_lane_quiet_run's promises: the
 * caller reads each delivered frame in the slot after it arrived, and its
 * users queue nothing during the run). */
RIFL_API uint64_t rifl_pair_ref_quiet(rifl_pair *p, uint64_t max, rifl_lane_quiet_io *io);
RIFL_API int rifl_pair_ref_end(rifl_pair *p);
/* Idle stretches, by the lanes' accelerator (rifl_lane_advance in
 * rifl/lane.h).  While both lanes are steady with nothing queued and every
 * frame in flight is an undamaged filler, each slot only sends a filler
 * each way and receives one, until a bit error falls in a frame.
 * rifl_pair_idle_room says how many slots may go so from here (0: none; it
 * needs frames by content or by reference, not wire bytes or serial
 * lanes), and rifl_pair_idle_skip carries the pair through m of them in
 * one call, leaving lanes, cables and counters as m rifl_pair_step calls
 * would.  The caller promises not to queue anything on either lane in
 * them.  Stepping by reference ends there (rifl_pair_ref_end). */
RIFL_API uint64_t rifl_pair_idle_room(const rifl_pair *p);
RIFL_API int rifl_pair_idle_skip(rifl_pair *p, uint64_t m);
/* Any steady stretch of m = st[0].slots slots (rifl_lane_advance in
 * rifl/lane.h, st[i] for lane i's direction): the caller works out what
 * the users did and promises that every frame in flight is an undamaged
 * new one the receiver takes in sequence; m must stay within both cables'
 * clear slots.  The lanes and cables are left as m rifl_pair_step calls
 * would leave them; stepping by reference ends there. */
RIFL_API int rifl_pair_advance(rifl_pair *p, const rifl_lane_stretch st[2]);
/* Change cable i's bit error rate from the next frame on (also while
 * stepping by reference). */
RIFL_API int rifl_pair_set_ber(rifl_pair *p, int i, double ber);
/* Frames lane i can still send before an error falls in one
 * (rifl_phy_clear_slots of cable i, also while stepping by reference). */
RIFL_API uint64_t rifl_pair_clear_slots(const rifl_pair *p, int i);

#ifdef __cplusplus
}
#endif
#endif

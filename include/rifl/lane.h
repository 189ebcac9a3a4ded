/* rifl: the RIFL lane engine, a sans-I/O state machine for one lane
 * (docs/link-layer.md, link rules §6-§9).
 *
 * The engine is driven one frame slot at a time; time is the slot number
 * `now`, passed in every call.  In every slot the caller
 *   1. asks for the one frame to send:      rifl_lane_tx(lane, now, wire_out)
 *   2. hands over the frame received:       rifl_lane_rx(lane, now, wire_in, info)
 * (wire_in may be NULL when nothing arrived in that slot, e.g. before the
 * cable delay has passed; a receiver whose clock is slower than the
 * sender's may get two frames in one slot, and calls rifl_lane_rx twice).
 * The transmit side takes every slot in order: a slot repeated or skipped
 * is refused (RIFL_ERR_STATE, counted in slot_errors), as is a receive slot
 * before the last.  What the receiver learns in slot t acts on the frame
 * sent in slot t+1.  Frames are F/8-byte arrays, first bit sent = most
 * significant bit of byte 0, so a simulator, a socket loop or a hardware test
 * bench linked against the library can all drive it.
 *
 * On the user side, rifl_lane_send() takes whole packets of any length (1
 * byte up to the transmit queue size) or refuses them with RIFL_ERR_AGAIN
 * while the queue is full; rifl_lane_read() hands back received bytes in
 * order, marking the end of each packet.
 *
 * The engine never reads a clock, never touches I/O, and allocates only in
 * rifl_lane_create(). */
#ifndef RIFL_LANE_H
#define RIFL_LANE_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/counter.h"
#include "rifl/error.h"
#include "rifl/frame.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- link parameters and the frame-ID sizing rule (link rules §9) ------ */

typedef struct rifl_link_params {
    double lane_rate_gbps;   /* serial rate of the lane */
    double cable_m;          /* cable length */
    double ns_per_m;         /* propagation delay (5 ns/m fibre or copper; at
                                least RIFL_LINK_MIN_NS_PER_M) */
    double transceiver_ns;   /* fixed one-way transceiver (GT) latency */
} rifl_link_params;
/* Light in vacuum: no cable propagates faster (1 / 299,792,458 m/s). */
#define RIFL_LINK_MIN_NS_PER_M 3.33564

/* Round trip in frame slots: 2 * (transceiver + cable) converted to frames at
 * the lane rate, plus `extra_frames` of pipeline delay. */
RIFL_API double rifl_link_rtt_frames(const rifl_link_params *link, unsigned frame_bits,
                                     unsigned extra_frames);

/* Smallest safe frame-ID width: ceil(log2(16 + 16 + RTT_frames)).  May exceed
 * 12, which means no frame-ID width is safe for that link. */
RIFL_API unsigned rifl_lane_min_fid_bits(const rifl_link_params *link, unsigned frame_bits,
                                         unsigned extra_frames);
/* The same rule for a round trip given in frame slots (a delay set by hand
 * rather than from a link): the smallest K with 2^K >= 32 + rtt_frames, at
 * most 31. */
RIFL_API unsigned rifl_lane_fid_bits_for_rtt(double rtt_frames);

/* ---- configuration ----------------------------------------------------- */

typedef enum rifl_lane_fc_mode {
    RIFL_LANE_FC_ONOFF = 0, /* the ON/OFF flow-control frames of link rules §3 */
    RIFL_LANE_FC_NONE = 1   /* no ON/OFF frames: an upper layer (credits)
                               keeps the receive buffer from filling */
} rifl_lane_fc_mode;

typedef struct rifl_lane_config {
    unsigned frame_bits;       /* F: 64, 128, 256, 512, 1024 or 2048 */
    unsigned fid_bits;         /* K: 5..12, checked against the link */
    rifl_link_params link;     /* the link this lane runs on */
    unsigned pipeline_frames;  /* engine + PHY pipeline added to the round
                                  trip, in frames (both directions together) */
    unsigned tx_queue_frames;  /* user transmit queue, in frames */
    unsigned rx_buffer_frames; /* receive (flow-control) buffer; 0 = 2^(K+1) */
    unsigned fc_on_frames;     /* ON when occupancy > this; 0 = floor(2/3 of buffer) */
    unsigned fc_off_frames;    /* OFF when occupancy < this; 0 = floor(1/3 of buffer) */
    rifl_lane_fc_mode fc_mode;
    unsigned rx_lock_frames;   /* consecutive legal SYN headers before the
                                  receiver counts as aligned; 0 = aligned
                                  from the start (frames arrive aligned) */
    unsigned ext_queue_frames; /* extension-frame queues, each direction */
    unsigned replay_tail_frames; /* control slots closing a replay cycle;
                                  0 = max(2^(K-1), RTT_frames + 16), see
                                  rifl_lane_replay_tail() */
    bool reference_peer;       /* the peer closes its replay cycles after
                                  2^(K-1) slots, as the authors' hardware
                                  does: that is safe only while RTT_frames +
                                  2 < 2^(K-1), and other links are refused
                                  (docs/link-layer.md, rule R1) */
    bool allow_unsafe_fid;     /* accept a K below the sizing rule (only for
                                  experiments showing why it is refused) */
    bool lane_tags;            /* rifl-multilane §5.1: control frames carry
                                  0xA5, lane_index and lane_count after the
                                  key, and the receiver checks the tags it
                                  gets (off: frames as the reference's) */
    unsigned lane_index, lane_count; /* this lane's number and the link's lanes */
    unsigned rx_hold_frames;   /* a lane whose alignment comes from outside
                                  (a serial lane): frames accepted are held
                                  until this many more frames have arrived
                                  aligned, and dropped and replayed if the
                                  aligner unlocks first (docs/multilane.md);
                                  0: no hold.  Ignored by other lanes */
} rifl_lane_config;

/* Frames a serial lane holds back until its aligner has checked that many
 * more headers (rx_hold_frames). */
#define RIFL_LANE_RX_HOLD 32

/* The reference lane of the paper "RIFL: A Reliable Link Layer Network
 * Protocol for Data Center Communication": F = 256, K = 8, 112 Gbit/s (4 x 28 Gbit/s
 * treated as one lane), 10 m cable at 5 ns/m, 80 ns transceiver latency. */
RIFL_API extern const rifl_lane_config rifl_lane_default_config;
/* The same as an initializer, for configurations that hold a lane's. */
#define RIFL_LANE_DEFAULTS                                                    \
    {                                                                         \
        .frame_bits = 256,                                                    \
        .fid_bits = 8,                                                        \
        .link = {                                                             \
            .lane_rate_gbps = 112.0,                                          \
            .cable_m = 10.0,                                                  \
            .ns_per_m = 5.0,                                                  \
            .transceiver_ns = 80.0,                                           \
        },                                                                    \
        .pipeline_frames = 2,                                                 \
        .tx_queue_frames = 1024,                                              \
        .rx_buffer_frames = 0,                                                \
        .fc_on_frames = 0,                                                    \
        .fc_off_frames = 0,                                                   \
        .fc_mode = RIFL_LANE_FC_ONOFF,                                        \
        .rx_lock_frames = 64,                                                 \
        .ext_queue_frames = 64,                                               \
        .replay_tail_frames = 0,                                              \
        .allow_unsafe_fid = false,                                            \
        .rx_hold_frames = RIFL_LANE_RX_HOLD,                                  \
    }

/* Length of the closing part of a replay cycle that a configuration gets
 * (max(2^(K-1), RTT_frames + 16) unless replay_tail_frames sets it), and the
 * shortest safe one, RTT_frames rounded up plus 16 slots. */
struct rifl_lane_config;
RIFL_API unsigned rifl_lane_replay_tail(const struct rifl_lane_config *cfg);
RIFL_API unsigned rifl_lane_min_replay_tail(const struct rifl_lane_config *cfg);

/* Check a configuration.  On refusal returns RIFL_ERR_CONFIG and writes a
 * message naming the problem and the smallest safe value (or the supported
 * values) to `msg`; RIFL_ERR_INVALID_ARG for a NULL configuration. */
/* rifl_lane_config_check for a serial lane (one whose alignment comes from
 * outside), which also needs its replay buffer to cover its held frames:
 * 2^K >= 32 + RTT_frames + rx_hold_frames. */
RIFL_API int rifl_lane_serial_check(const rifl_lane_config *cfg, char *msg, size_t msglen);
RIFL_API int rifl_lane_config_check(const rifl_lane_config *cfg, char *msg, size_t msglen);

/* ---- lifetime ------------------------------------------------------------ */

typedef struct rifl_lane rifl_lane;

/* Allocates everything the lane will ever need.  `msg` (may be NULL)
 * explains a refusal: RIFL_ERR_INVALID_ARG for a NULL `cfg` or `out`,
 * RIFL_ERR_CONFIG for a configuration that is refused. */
RIFL_API int rifl_lane_create(const rifl_lane_config *cfg, rifl_lane **out, char *msg,
                              size_t msglen);
RIFL_API void rifl_lane_free(rifl_lane *lane);
/* Bytes allocated by rifl_lane_create for this lane. */
RIFL_API size_t rifl_lane_memory(const rifl_lane *lane);
/* The bytes rifl_lane_create would allocate for a lane of cfg (what
 * rifl_lane_memory then says), without making one; 0 for a configuration
 * it refuses. */
RIFL_API size_t rifl_lane_config_memory(const rifl_lane_config *cfg);
RIFL_API const rifl_lane_config *rifl_lane_get_config(const rifl_lane *lane);

/* ---- per-slot frame interface ------------------------------------------ */

/* Produce the frame to send in slot `now` (F/8 bytes). */
RIFL_API int rifl_lane_tx(rifl_lane *lane, uint64_t now, uint8_t *wire);

/* What the receiver did with one frame. */
typedef enum rifl_rx_result {
    RIFL_RX_EMPTY = 0,      /* wire was NULL: nothing received this slot */
    RIFL_RX_NOT_ALIGNED,    /* receiver not aligned yet: frame ignored */
    RIFL_RX_VERIFY_FAIL,    /* VCODE did not match: dropped, frame_error */
    RIFL_RX_DELIVERED,      /* good data frame, new: delivered/applied */
    RIFL_RX_SKIPPED,        /* good data frame already delivered (replay)
                               or inside the 16-frame verification run */
    RIFL_RX_CONTROL,        /* good control frame */
    RIFL_RX_OVERFLOW,       /* good and new, but the receive buffer was
                               full: treated as lost, retransmission asked */
    RIFL_RX_NOT_UP          /* aligned but not up (a serial lane's rx_up):
                               the key monitor saw it, nothing else did */
} rifl_rx_result;

RIFL_API const char *rifl_rx_result_name(rifl_rx_result r);

/* Consume the frame received in slot `now`.  Returns a rifl_rx_result
 * (>= 0) or a negative error.  `info` (may be NULL) receives the decoded
 * frame. */
RIFL_API int rifl_lane_rx(rifl_lane *lane, uint64_t now, const uint8_t *wire,
                          rifl_frame_info *info);

/* ---- frames by content (for simulators) --------------------------------
 *
 * A simulated channel leaves almost every frame as it was sent, and a
 * receiver whose descrambler is in step with the sender decodes such a frame
 * into exactly what the sender put in.  These calls let a simulator carry
 * frames by content and build the wire bytes only where they matter: for a
 * frame the channel corrupts, and for a clean frame reaching a receiver that
 * is out of step (after a corrupted one).  The lane then behaves exactly as
 * with rifl_lane_tx / rifl_lane_rx. */

/* A frame as the sender chose it, self-contained: it can be copied, and a
 * PHY carries its first rifl_lane_frame_bytes(F) bytes (the record is cut
 * to the frame width). */
typedef struct rifl_lane_frame {
    uint64_t scr;         /* sender's scrambler state before the frame */
    uint64_t scr_next;    /* and after it */
    uint16_t key;         /* control frame: its key */
    uint16_t id;          /* the value XORed into the CRC (12 bits) */
    uint8_t data;         /* 1: a data frame, 0: a control frame, 2: a
                                 control frame with a lane tag */
    uint8_t rec[RIFL_FRAME_MAX_BYTES - 1]; /* data frame (and tagged control
                                             frame): META byte, then the P/8
                                             payload bytes */
} rifl_lane_frame;

/* Bytes of a rifl_lane_frame that hold a frame of frame_bits bits, a
 * multiple of its alignment (frames can be stored end to end). */
RIFL_API size_t rifl_lane_frame_bytes(unsigned frame_bits);

/* The n wire frames at `wire` (F/8 bytes apart) received in slot `now`, as
 * n calls of rifl_lane_rx would take them (n 0: nothing received), decoded
 * in batch calls of the codec (rifl_frame_decode_batch): for a receiver
 * that gets frames in bunches, a datagram PHY's.  RIFL_OK, or
 * RIFL_ERR_STATE for a slot out of turn and RIFL_ERR_INVALID_ARG, as
 * rifl_lane_rx. */
RIFL_API int rifl_lane_rx_batch(rifl_lane *lane, uint64_t now, const uint8_t *wire, unsigned n);
/* rifl_lane_tx without building the frame. */
RIFL_API int rifl_lane_tx_frame(rifl_lane *lane, uint64_t now, rifl_lane_frame *f);
/* For a sender that encodes its frames in batches (a datagram PHY,
 * rifl_phy_udp_set_encoder): rifl_lane_tx_frame leaves the scrambler
 * states out (scr is the state only in the first record after each batch,
 * RIFL_LANE_SCR_FOLLOWS in the others, and scr_next is always
 * RIFL_LANE_SCR_FOLLOWS), which saves a pass over each frame's bits; the
 * batch encoder (rifl_lane_phy_encode_batch) works them out and gives the
 * lane its state back.  Until it has, rifl_lane_tx answers RIFL_ERR_STATE,
 * and so does turning the mode off. */
#define RIFL_LANE_SCR_FOLLOWS UINT64_MAX
RIFL_API int rifl_lane_defer_scrambler(rifl_lane *lane, bool on);
/* The wire bytes (F/8) of a frame from rifl_lane_tx_frame. */
RIFL_API int rifl_lane_frame_encode(const rifl_lane_frame *f, unsigned frame_bits, uint8_t *wire);
/* The same as a PHY's encode function (rifl_phy_encode_fn in rifl/phy.h):
 * `lane` is the sending lane. */
RIFL_API void rifl_lane_phy_encode(const void *frame, uint8_t *wire, void *lane);
/* The wire bytes of n frames from rifl_lane_tx_frame, the records `stride`
 * bytes apart (at least rifl_lane_frame_bytes), the frames written F/8
 * bytes apart: the same bytes as rifl_lane_frame_encode of each, in batch
 * calls of the codec (rifl_frame_encode_batch) over each run of frames of
 * one stream (each starting from the scrambler state the last ended in).
 * A record whose scr is RIFL_LANE_SCR_FOLLOWS (rifl_lane_defer_scrambler)
 * goes on from the frame before it; the first may not.  *scr_after (may be
 * NULL) gets the scrambler state after the last frame. */
RIFL_API int rifl_lane_frames_encode(const void *frames, size_t stride, unsigned n,
                                     unsigned frame_bits, uint8_t *wire, uint64_t *scr_after);
/* The same as a PHY's batch encode function (rifl_phy_encode_batch_fn in
 * rifl/phy.h): `lane` is the sending lane.  When the frames are the last
 * the lane made with its scrambler deferred, the lane takes the state
 * after them. */
RIFL_API void rifl_lane_phy_encode_batch(const void *frames, size_t stride, unsigned n,
                                         uint8_t *wire, void *lane);
/* rifl_lane_rx of the frame exactly as sent (f NULL: nothing received).  The
 * frame is encoded and decoded for real when the receiver's descrambler is
 * not in step with f->scr, or when `info` is asked for. */
RIFL_API int rifl_lane_rx_frame(rifl_lane *lane, uint64_t now, const rifl_lane_frame *f,
                                rifl_frame_info *info);

/* ---- frames by reference (for simulators) ------------------------------
 *
 * Through a stretch in which the channel flips no bit, a simulator can carry
 * frames as references: which record (in the sending lane's replay buffer),
 * key and ID a frame has, and no bytes.  The lanes take the same decisions
 * and count the same as with frames by content; only the scramblers stand
 * still.  At the end of the stretch rifl_lane_ref_frame turns the
 * references still in flight back into frames by content, with scrambler
 * states that continue from the last frame sent by content, so that
 * stepping by content carries on in step.  A referenced record stays valid while the
 * frame is in flight as long as the one-way delay is shorter than 2^K
 * frames. */
typedef struct rifl_lane_ref {
    const uint8_t *rec;   /* data frame: its record (META byte, payload) */
    uint16_t key;         /* control frame: its key */
    uint16_t id;          /* frame ID, or RIFL_LANE_REF_NO_ID */
    uint8_t data;         /* 1: data frame, 0: control frame (no lane tags) */
} rifl_lane_ref;
/* The ID of a frame damaged on its way that verifies as no frame ID of the
 * lane (CRC XOR ID gives a value at or above 2^K): the receiver sees its
 * SYN (`data`) and, for a control frame, its key, and fails verification
 * whatever it expects.  A data frame's `rec` must still point at a record
 * (the frame as sent will do): its bytes change nothing. */
#define RIFL_LANE_REF_NO_ID 0xFFFF

/* rifl_lane_tx_frame by reference. */
RIFL_API int rifl_lane_tx_ref(rifl_lane *lane, uint64_t now, rifl_lane_ref *f);
/* rifl_lane_rx_frame by reference: the frame arrives as sent (f NULL:
 * nothing received).  RIFL_ERR_INVALID_ARG for a tagged or malformed
 * reference. */
RIFL_API int rifl_lane_rx_ref(rifl_lane *lane, uint64_t now, const rifl_lane_ref *f);
/* A frame sent by reference, by content (for a PHY that carries frames by
 * content): its scrambler states continue from the sender's, which stands
 * still while frames go by reference; build the frames still in flight
 * oldest first. */
RIFL_API int rifl_lane_ref_frame(rifl_lane *sender, const rifl_lane_ref *ref, rifl_lane_frame *f);
/* The next frame built by content (rifl_lane_ref_frame, rifl_lane_tx_frame)
 * follows on from scrambler state `scr` (a frame's scr field): for a
 * simulator that rebuilds the frames in flight in order, when frames it
 * built by content while others went by reference sit among them. */
RIFL_API int rifl_lane_ref_chain(rifl_lane *sender, uint64_t scr);
/* The receiver's descrambler state: a frame by content whose scr field is
 * this one arrives in step (rifl_lane_rx_frame decodes nothing). */
RIFL_API uint64_t rifl_lane_rx_scrambler(const rifl_lane *receiver);

/* ---- accelerator (for simulators) --------------------------------------
 *
 * A simulated link spends most of its time in stretches where nothing
 * happens but data: both lanes in NORMAL, no flags, no error, every frame
 * arriving good and in sequence.  Such a stretch is fully determined by a
 * few counts, and rifl_lane_advance carries both lanes of a link through it
 * in one call instead of one call per slot.  The caller (which models the
 * users and the channel) picks a stretch in which the channel flips no bit,
 * counts what the users did, and puts the frames left in flight back on its
 * channel.  Runs take exactly the course they take slot by slot. */

/* True when the link a <-> b is in steady state: both lanes in NORMAL with
 * nothing pending (no flag, replay, error wait, flow control, extension
 * frame, unread byte or clock-compensation slot) and each receiver expecting
 * the frame its peer sent `delay` slots ago. */
RIFL_API bool rifl_lane_steady(const rifl_lane *a, const rifl_lane *b, unsigned delay);

/* One direction of a stretch: lane[i] sends, lane[1-i] receives.  Data
 * frames are numbered across the sender's stream, from 0 for its first. */
typedef struct rifl_lane_stretch {
    uint64_t slots;             /* frame slots of the stretch (the same both ways) */
    /* sender: `slots` new frames, data frames and fillers */
    uint64_t data_sent, fill_sent;
    const int64_t *sent_by_id;  /* 2^K entries: the data frame carried by the
                                   newest frame sent with that ID, -1 for a
                                   filler (frames before the stretch included) */
    uint64_t queue_first, queue_end; /* data frames in the transmit queue after */
    uint64_t tx_packets, tx_bytes, tx_rejected; /* the sending user's calls */
    /* receiver: `slots` frames delivered, and what its user read */
    uint64_t data_recv, fill_recv;
    uint64_t rx_packets, rx_bytes;
    /* where data frame x comes from: the packet's bytes and x's frame index
     * in it (0 = its first frame); 0, or -1 when unknown.  The bytes must
     * stay valid until the next call: frames are asked for oldest first, and
     * the other frames of the packet last given are taken from it without a
     * call */
    int (*data)(void *ctx, uint64_t x, const uint8_t **pkt, size_t *len, size_t *index);
    void *ctx;
    /* instead of `data`, for a sender whose frames are not plain runs of
     * packets (a bonded end's lane): the bytes data frame x carries (1 to
     * the payload size, all of it unless they end a packet) and whether
     * they end a packet; 0, or -1 when unknown */
    int (*segment)(void *ctx, uint64_t x, const uint8_t **bytes, size_t *len, bool *end);
    /* the source stays: until the lane sends them, or is advanced or
     * freed, it answers (as above, the bytes valid until its next call)
     * for the data frames left in the transmit queue, whose records are
     * then made as they are sent, not here.  A frame the source fails to
     * give then goes as a filler, counted in tx_source_errors */
    bool keep_source;
    /* recoveries inside the stretch, carried as counts: lane[i]'s counters
     * beyond those of the new frames it sent and received (added as they
     * are, modulo 2^64: an entry may stand for a decrease).  With them,
     * fewer than `slots` new frames may go each way, and the link must be
     * steady again at the end (NULL: none) */
    const struct rifl_lane_stats *extra;
} rifl_lane_stretch;

/* Counters `add` added to `to`, entry by entry, modulo 2^64 (extras,
 * which may stand for decreases, summed). */
RIFL_API void rifl_lane_stats_add(struct rifl_lane_stats *to, const struct rifl_lane_stats *add);

/* The counters rifl_lane_advance adds to a lane for the new frames it sent
 * in stretch `tx` and received in `rx` (its peer's), the extras aside:
 * what a recovery stepped slot by slot adds beyond these are its extras. */
RIFL_API void rifl_lane_stretch_stats(const rifl_lane_stretch *tx, const rifl_lane_stretch *rx,
                                      struct rifl_lane_stats *add);

/* Carry the steady link lane[0] <-> lane[1] (each direction `delay` frame
 * slots long) through dir[0] and dir[1].  Afterwards inflight[i][0 ..
 * delay-1] holds, by content and oldest first, the frames in flight from
 * lane[i]: put them back on the channel.  RIFL_ERR_STATE when the link is not steady or
 * a data frame's source is unknown, RIFL_ERR_INVALID_ARG for inconsistent
 * counts. */
RIFL_API int rifl_lane_advance(rifl_lane *lane[2], unsigned delay, const rifl_lane_stretch dir[2],
                               rifl_lane_frame *inflight[2]);

/* Quiet runs.  While a link recovers from errors most slots reach no user:
 * each sender replays, sends RETRANSMIT or waits with IDLE (error wait or
 * the peer's flow control), and each receiver fails verification or skips
 * frames it already has.  rifl_lane_quiet_run steps the link lane[0] <->
 * lane[1] by reference through such slots, from slot `now`, at most `max`:
 * cable[i] is the ring of `delay` frames in flight from lane[i], entry *pos
 * arriving (at lane[1 - i]) in slot `now` and replaced by lane[i]'s frame of
 * that slot, exactly as rifl_lane_tx_ref and rifl_lane_rx_ref would.  It
 * stops before the first slot in which a lane would send a new frame (data,
 * filler, flow-control notice, extension) or deliver one (but see `io`
 * below), or a frame arriving is not a reference (data ==
 * RIFL_LANE_REF_NONE), and returns the slots stepped (0 also when a lane is
 * not past start-up, aligned and up, uses lane tags, holds frames or owes
 * compensation slots).  *pos moves on with the slots.
 *
 * With `io` given, a run can also carry what its users see:
 *
 * - Deliveries (io->cap > 0): a user data frame a lane accepts in sequence
 *   no longer ends the run: it goes into the lane's receive queue, as
 *   rifl_lane_rx_ref would put it, and its slot into io->at[i] (io->n[i] of
 *   them, the run stopping before a list or a receive queue would
 *   overflow).  The caller promises to read every such frame in the slot
 *   after it arrived, as a user reading everything each slot would, so flow
 *   control sees an empty receive queue at every send; deliveries are made
 *   only when both receive queues are empty at the start.
 * - Sends (io->send_max[i] > 0): lane[i] sends up to that many user data
 *   frames from its transmit queue, as rifl_lane_tx_ref would, once its
 *   start-up is over (2^K new frames and fillers sent); their slots and
 *   frame IDs go into io->sent_at[i] and io->sent_id[i] (io->sent[i] of
 *   them, at most io->sent_cap).  The caller promises that its user queues
 *   nothing during the run: set send_max so that the run ends before the
 *   queue has room for what the user would give next.  An empty queue (a
 *   filler would go) still ends the run.
 * - Streaks, for a simulator that hands steady stretches to a fast path
 *   once both lanes have sent new frames in some number of slots in a row:
 *   io->streak[i] holds lane[i]'s count of such slots up to now, and the
 *   run leaves it where it ends.  With io->streak_stop > 0 the run ends
 *   after the first slot in which both counts reach it (at once, 0 slots,
 *   when they already have).
 *
 * - Frame hits: lane[i]'s frame of slot io->hit_at[i][k] of the run (k <
 *   io->hits[i], slots counted from `now`, ascending) is one the cable
 *   damages so that it verifies as no frame ID and keeps its SYN: it goes
 *   into cable[i] with ID RIFL_LANE_REF_NO_ID, a control frame's key XORed
 *   with io->hit_key[i][k], and the frame as sent into io->hit_sent[i][k].
 *   Such a slot ends lane[i]'s streak (the frame is not seen as sent in
 *   sequence).  The run sets io->hits_done[i] to the hits it went through.
 *
 * Fillers, flow-control notices and extension frames always end the run.
 * io == NULL: none of these. */
#define RIFL_LANE_REF_NONE 0xFF
typedef struct rifl_lane_quiet_io {
    /* deliveries */
    uint64_t *at[2];        /* slots of the frames lane[i] delivered, oldest first */
    unsigned cap;           /* room in each list (0: no deliveries) */
    unsigned n[2];          /* set by the run */
    /* sends */
    unsigned send_max[2];   /* user data frames lane[i] may send (0: none) */
    uint64_t *sent_at[2];   /* slots they were sent in, oldest first */
    uint16_t *sent_id[2];   /* their frame IDs */
    unsigned sent_cap;      /* room in each list */
    unsigned sent[2];       /* set by the run */
    /* streaks */
    unsigned streak[2];     /* slots in a row, up to now, in which lane[i] sent a
                               new frame */
    unsigned streak_stop;   /* end the run where both reach this (0: never) */
    /* frame hits */
    const uint64_t *hit_at[2];  /* slots of lane[i]'s frames hit, from `now` */
    const uint16_t *hit_key[2]; /* what a hit control frame's key is XORed with */
    rifl_lane_ref *hit_sent[2]; /* the frames hit, as sent */
    unsigned hits[2];       /* entries in those lists */
    unsigned hits_done[2];  /* set by the run */
} rifl_lane_quiet_io;
RIFL_API uint64_t rifl_lane_quiet_run(rifl_lane *lane[2], uint64_t now, rifl_lane_ref *cable[2],
                                      unsigned delay, unsigned *pos, uint64_t max,
                                      rifl_lane_quiet_io *io);

/* Count n sends refused for lack of room, as n calls of rifl_lane_send
 * with a packet that does not fit would (tx_rejected), without making them:
 * for a simulator that steps slots in bulk and knows its user would have
 * been refused in each. */
RIFL_API int rifl_lane_count_refused(rifl_lane *lane, uint64_t n);

/* ---- user interface ------------------------------------------------------ */

/* Queue one whole packet.  RIFL_ERR_AGAIN when the transmit queue lacks room
 * now (nothing is taken; try again after some slots), RIFL_ERR_TOO_BIG when
 * the packet can never fit the queue, RIFL_ERR_INVALID_ARG for len == 0. */
RIFL_API int rifl_lane_send(rifl_lane *lane, const void *pkt, size_t len);

/* Queue part of a packet, for packets of any length (larger than the
 * transmit queue).  Takes as many whole frames' worth of bytes (P/8 each) as
 * fit now and reports them in *taken; with `end` set and all of `len`
 * fitting, it also takes the tail and ends the packet.  Call again with the
 * rest (less than one frame's bytes without `end` is never taken: pass it
 * with what follows).  RIFL_OK (even when *taken is 0: the queue is full,
 * counted in tx_rejected), or RIFL_ERR_INVALID_ARG for len == 0. */
RIFL_API int rifl_lane_send_part(rifl_lane *lane, const void *data, size_t len, int end,
                                 size_t *taken);

/* Bytes of packet data the transmit queue can take right now. */
RIFL_API size_t rifl_lane_send_space(const rifl_lane *lane);

/* Read received bytes in order.  Copies up to `cap` bytes of the current
 * packet into `buf`, never crossing a packet boundary; *eop = 1 when the
 * bytes returned end a packet.  Returns RIFL_OK, RIFL_ERR_AGAIN when no
 * byte is waiting, or RIFL_ERR_INVALID_ARG for a NULL buffer or cap == 0
 * (which could never make progress). */
RIFL_API int rifl_lane_read(rifl_lane *lane, void *buf, size_t cap, size_t *len, int *eop);

/* Received frames waiting in the receive buffer. */
RIFL_API unsigned rifl_lane_rx_backlog(const rifl_lane *lane);

/* Frame by frame, for a layer that places each frame itself (channel
 * bonding, rifl/bond.h).  rifl_lane_tx_ready: the frame sent in the next
 * slot would be the head of the transmit queue, were there one (NORMAL,
 * free to send user data: no replay, no error wait, no flow-control stop or
 * notice, no extension frame, no compensation slot due).
 * rifl_lane_send_frame queues one frame of `len` bytes (1 .. P/8; only a
 * packet's last frame, `end`, may be shorter), as rifl_lane_send would cut
 * it; RIFL_ERR_AGAIN when the queue is full.  rifl_lane_peek_frame gives
 * the frame at the head of the receive buffer (its bytes, and whether it
 * ends a packet), RIFL_ERR_AGAIN when there is none to read;
 * rifl_lane_pop_frame takes it. */
RIFL_API bool rifl_lane_tx_ready(const rifl_lane *lane);
RIFL_API unsigned rifl_lane_tx_backlog(const rifl_lane *lane);
RIFL_API int rifl_lane_send_frame(rifl_lane *lane, const void *data, size_t len, bool end);
RIFL_API int rifl_lane_peek_frame(const rifl_lane *lane, const uint8_t **data, size_t *len,
                                  bool *end);
RIFL_API int rifl_lane_pop_frame(rifl_lane *lane);

/* Extension frames: META-00 data frames whose last payload byte is a format
 * code >= RIFL_FMT_EXT_MIN, for upper layers (per-queue flow control,
 * credit packets).  They are numbered, replayed and delivered in order like
 * user data, ahead of queued user data.  `len` <= P/8 - 1. */
RIFL_API int rifl_lane_send_ext(rifl_lane *lane, uint8_t code, const void *data, size_t len);
RIFL_API int rifl_lane_read_ext(rifl_lane *lane, uint8_t *code, void *buf, size_t cap,
                                size_t *len);

/* ---- inputs from the PHY ------------------------------------------------- */

/* Force the receiver's alignment state (a PHY that aligns frames itself).
 * From the first call on, alignment is the caller's: the receiver no longer
 * locks (rx_lock_frames) or loses alignment by itself. */
RIFL_API void rifl_lane_set_rx_aligned(rifl_lane *lane, bool aligned);
/* A serial lane's rx_up (rifl/serial.h, lane rules rifl-multilane §2):
 * while aligned but not up, received frames go through the key monitor
 * only; verification and storing wait, and the expected frame ID, the
 * delivery threshold and frame_error stay as they are, and the sender sends
 * PAUSE (SEND_PAUSE, link rules §8).  Up from the start unless told
 * otherwise. */
RIFL_API void rifl_lane_set_rx_up(rifl_lane *lane, bool up);
/* What the send side sees of its group's receivers (rx_up ANDed over the
 * lanes of a bonded group, rifl-multilane §4.3): while it is down the lane
 * sends PAUSE (SEND_PAUSE).  Up from the start unless told otherwise. */
RIFL_API void rifl_lane_set_group_up(rifl_lane *lane, bool up);
/* The power-up hold (rifl-multilane §2): while held, the send side stays in
 * reset, sending PAUSE with frame ID 0, and starts INIT when released.
 * RIFL_ERR_STATE once INIT has begun (the hold is for power-up only). */
RIFL_API int rifl_lane_hold_tx(rifl_lane *lane, bool hold);
/* Clock compensation (rifl-multilane §3): `n` more compensation slots owed.
 * Each slot in which the lane sends a control frame, in any state, pays one;
 * in NORMAL a slot is an IDLE while any is owed. */
RIFL_API void rifl_lane_add_pause_slots(rifl_lane *lane, unsigned n);

/* ---- state and counters -------------------------------------------------- */

typedef enum rifl_tx_state {
    RIFL_TX_INIT = 0,
    RIFL_TX_SEND_PAUSE,
    RIFL_TX_PAUSE,
    RIFL_TX_RETRANS,
    RIFL_TX_SEND_RETRANS,
    RIFL_TX_NORMAL,
    RIFL_TX_STATE_COUNT
} rifl_tx_state;

RIFL_API const char *rifl_tx_state_name(rifl_tx_state s);

typedef struct rifl_lane_flags {
    bool rx_aligned;       /* local receiver aligned */
    bool rx_up;            /* local receiver up (rifl_lane_set_rx_up) */
    bool group_up;         /* the send side's view of its group */
    bool tx_hold;          /* send side held at power-up */
    bool tag_ok;           /* lane tags: 8 tags in a row named this lane and count */
    bool frame_error;      /* local receiver has seen a bad frame */
    bool peer_pause;       /* PAUSE flag from the peer */
    bool peer_retransmit;  /* RETRANSMIT flag from the peer */
    bool peer_fc_on;       /* peer asked us to stop user data */
    bool local_fc_on;      /* we asked the peer to stop */
    bool replay_active;    /* a replay cycle is running */
} rifl_lane_flags;

/* The control keys a receiver counts one by one (rx_keys). */
typedef enum rifl_key_index {
    RIFL_KEYIDX_IDLE = 0,
    RIFL_KEYIDX_PAUSE,
    RIFL_KEYIDX_RETRANSMIT,
    RIFL_KEYIDX_COUNT
} rifl_key_index;

typedef struct rifl_lane_stats {
    /* transmit */
    uint64_t tx_slots;
    uint64_t tx_state_slots[RIFL_TX_STATE_COUNT];
    uint64_t tx_frames[RIFL_KIND_COUNT];   /* new frames sent, by kind */
    uint64_t tx_idle, tx_pause, tx_retransmit; /* control frames by key */
    uint64_t tx_replayed;        /* data frames sent again in replays */
    uint64_t tx_replay_cycles;   /* replay cycles started */
    uint64_t tx_clock_comp;      /* pause slots spent for clock compensation */
    uint64_t tx_comp_overdue;    /* compensation requests that found 2 slots owed
                                    already (never, when requests come as the
                                    rules say) */
    uint64_t tx_fc_wait;         /* slots idled because the peer had FC ON */
    uint64_t tx_err_wait;        /* slots idled after a local frame error */
    uint64_t tx_packets, tx_bytes;   /* user packets/bytes accepted */
    uint64_t tx_rejected;        /* rifl_lane_send calls refused (queue full) */
    uint64_t tx_ext;             /* extension frames accepted */
    uint64_t tx_ext_rejected;    /* rifl_lane_send_ext calls refused (queue full) */
    uint64_t tx_source_errors;   /* queued data frames a stretch's source
                                    (rifl_lane_stretch.keep_source) failed
                                    to give: sent as fillers */
    /* receive */
    uint64_t rx_slots;           /* rifl_lane_rx calls */
    uint64_t rx_empty;           /* slots with no frame */
    uint64_t rx_not_aligned;     /* frames ignored while not aligned */
    uint64_t rx_not_up;          /* frames seen by the key monitor only: aligned, not up */
    uint64_t rx_lane_swap;       /* lane tags: 8 tags in a row named another
                                    lane or lane count */
    uint64_t rx_untagged;        /* lane tags: control frames received without one */
    uint64_t rx_hold_dropped;    /* frames held for alignment, dropped when the
                                    aligner unlocked (the peer replays them) */
    uint64_t rx_bad_syn;         /* frames with an illegal SYN (00/11) */
    uint64_t rx_align_lost;      /* times alignment was lost */
    uint64_t rx_verify_fail;     /* frames failing verification */
    uint64_t rx_frame_errors;    /* times frame_error was raised */
    uint64_t rx_good_data;       /* good data frames */
    uint64_t rx_skipped;         /* good data frames not delivered (replays,
                                    verification run) */
    uint64_t rx_control;         /* good control frames */
    uint64_t rx_delivered[RIFL_KIND_COUNT]; /* new data frames by kind */
    uint64_t rx_bad_format;      /* delivered partial frames with a bad count */
    uint64_t rx_overflow;        /* new frames refused: receive buffer full */
    uint64_t rx_keys[RIFL_KEYIDX_COUNT]; /* control frames seen, by key */
    uint64_t rx_unknown_key;     /* control frames with another key */
    uint64_t flag_pause_raised, flag_retransmit_raised;
    uint64_t fc_on_sent, fc_off_sent;       /* flow-control events we sent */
    uint64_t fc_on_received, fc_off_received;
    uint64_t rx_packets, rx_bytes;          /* user packets/bytes read */
    uint64_t rx_ext;             /* extension frames read by the user */
    uint64_t slot_errors;        /* calls refused: a transmit slot repeated
                                    or skipped, a receive slot before the last */
} rifl_lane_stats;

RIFL_API rifl_tx_state rifl_lane_state(const rifl_lane *lane);
/* The frame ID the sender gives its next data frame (its frame-ID counter). */
RIFL_API unsigned rifl_lane_next_id(const rifl_lane *lane);
/* The frame ID the receiver expects next (a frame verifies when it claims
 * exactly this ID). */
RIFL_API unsigned rifl_lane_expected_id(const rifl_lane *lane);
/* Frames the replay buffer holds: 2^K (0 for NULL). */
RIFL_API unsigned rifl_lane_replay_frames(const rifl_lane *lane);
/* The record the replay buffer keeps under frame ID `id` (META byte, then
 * the payload: F/8 - 1 bytes), as a replay would send it; NULL for an ID
 * beyond 2^K - 1.  For inspection, as a hardware model's buffer is read. */
RIFL_API const uint8_t *rifl_lane_replay_record(const rifl_lane *lane, unsigned id);
RIFL_API rifl_lane_flags rifl_lane_get_flags(const rifl_lane *lane);
/* With lane tags (rifl-multilane 5.1): true once the same tag has come in 8
 * control frames in a row, with the peer lane's number and the peer's lane
 * count it gives; a tag other than this lane's own is what rx_lane_swap
 * counts (a swap, or a peer with another lane count). */
RIFL_API bool rifl_lane_peer_tag(const rifl_lane *lane, unsigned *peer_lane,
                                 unsigned *peer_lanes);
RIFL_API const rifl_lane_stats *rifl_lane_get_stats(const rifl_lane *lane);
/* Every counter of rifl_lane_stats, named and explained (rifl/counter.h),
 * arrays one entry per element; *count gets their number. */
RIFL_API const rifl_counter *rifl_lane_counters(size_t *count);

#ifdef __cplusplus
}
#endif
#endif

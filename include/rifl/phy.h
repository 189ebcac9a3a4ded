/* rifl: the PHY boundary, the one interface through which a lane's frames
 * reach its peer.
 *
 * A PHY carries one direction: the frames one lane sends to the other end.
 * Time is the sender's frame slot, `now`, passed in every call.  In each
 * slot the driver takes the buffer of this slot's frame
 * (rifl_phy_tx_buffer), lets the lane fill it, and exchanges it
 * (rifl_phy_exchange) for the frames that arrive at the far end in this
 * slot: none or one on a PHY with a fixed delay, two now and then when the
 * receiver's clock is slower than the sender's, a batch when a datagram
 * arrives.  A slot without a frame is exchanged as RIFL_PHY_NONE.
 *
 * A frame travels in one of two forms.  RIFL_PHY_WIRE: its F/8 bytes in the
 * order of the link rules (docs/link-layer.md, §1).  RIFL_PHY_CONTENT: the
 * sender's own description of the frame (for a lane, a rifl_lane_frame), of
 * a size fixed when the PHY is made, which the PHY copies but never reads;
 * when it needs the bytes (to flip bits, to fill a datagram) it asks the
 * sender's encode function.  A receiver must take both forms: content is the
 * frame exactly as sent.  Simulated PHYs carry content, so most frames are
 * never built; PHYs that put frames on a real medium take wire bytes.
 *
 * The lane needs every frame sent to reach it, whole or damaged, in order:
 * with a self-synchronising scrambler and a CRC over scrambled bits, the
 * frame after one that vanished can verify with its first bits wrong.  A
 * PHY that can lose frames (a datagram PHY) hands the lane a frame that
 * fails verification in their place (docs/udp.md).
 *
 * How each PHY maps onto this: docs/architecture.md. */
#ifndef RIFL_PHY_H
#define RIFL_PHY_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/counter.h"
#include "rifl/error.h"
#include "rifl/serial.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rifl_phy_form {
    RIFL_PHY_NONE = 0,    /* no frame in this slot */
    RIFL_PHY_CONTENT = 1, /* the sender's description (content_bytes) */
    RIFL_PHY_WIRE = 2     /* F/8 wire bytes */
} rifl_phy_form;

/* A frame that arrived. */
typedef struct rifl_phy_frame {
    rifl_phy_form form;
    const void *data;     /* content or wire bytes; valid until the next call */
} rifl_phy_frame;

/* The sender's codec: the wire bytes (F/8) of a frame given by content. */
typedef void (*rifl_phy_encode_fn)(const void *content, uint8_t *wire, void *ctx);
/* The same for n frames sent one after the other, their descriptions
 * `stride` bytes apart, the wire bytes written F/8 bytes apart. */
typedef void (*rifl_phy_encode_batch_fn)(const void *contents, size_t stride, unsigned n,
                                         uint8_t *wire, void *ctx);

typedef struct rifl_phy_stats {
    uint64_t frames;      /* frames put on the medium */
    uint64_t bits;        /* their bits */
    uint64_t bit_errors;  /* bits flipped on the way */
    uint64_t frames_hit;  /* frames with at least one bit flipped */
    uint64_t delivered;   /* frames handed to the far end */
    uint64_t dropped;     /* frames that never arrive (the PHY counts why) */
} rifl_phy_stats;

typedef struct rifl_phy rifl_phy;

/* ---- using a PHY --------------------------------------------------------- */

/* The buffer that receives this slot's frame in `form` (content_bytes or
 * F/8 bytes), or NULL when this PHY does not carry that form. */
static inline void *rifl_phy_tx_buffer(rifl_phy *phy, rifl_phy_form form);
/* Slot `now`: the frame in the buffer of `form` (RIFL_PHY_NONE: no frame)
 * goes on, and the frames arriving at the far end in this slot come back in
 * out[], at most `max`; returns how many.  A frame in a form the PHY does
 * not carry (rifl_phy_carries) goes nowhere, counted in `dropped`. */
static inline unsigned rifl_phy_exchange(rifl_phy *phy, uint64_t now, rifl_phy_form form,
                                         rifl_phy_frame *out, unsigned max);
/* The same for a caller with wire bytes: `sent` (F/8 bytes, NULL for no
 * frame) goes on; the wire bytes arriving in this slot come back (valid
 * until the next call), or NULL. */
RIFL_API const uint8_t *rifl_phy_step(rifl_phy *phy, uint64_t now, const uint8_t *sent);
/* The next slot at which the PHY needs a call although no frame is sent
 * (a timer: a datagram to flush, a keepalive); UINT64_MAX for none. */
RIFL_API uint64_t rifl_phy_next_due(const rifl_phy *phy, uint64_t now);
static inline const rifl_phy_stats *rifl_phy_get_stats(const rifl_phy *phy);
/* Every counter of rifl_phy_stats, named and explained (rifl/counter.h). */
RIFL_API const rifl_counter *rifl_phy_counters(size_t *count);
/* Whether this PHY carries frames in `form`. */
static inline int rifl_phy_carries(const rifl_phy *phy, rifl_phy_form form);
RIFL_API void rifl_phy_free(rifl_phy *phy);

/* Simulated PHYs, for an accelerated simulator (rifl_lane_advance): the
 * frames that can still be sent before the next bit error (UINT64_MAX: no
 * error will come; 0 from PHYs that cannot say), putting `slots` error-free
 * frames through without stepping (statistics and error process move on as
 * if rifl_phy_exchange had carried them), and the buffer of the frame in
 * flight that leaves k + 1 slots from now (k < delay), to rewrite it, and
 * the form that frame is in now (damaged frames are wire bytes).  The others
 * answer 0, RIFL_ERR_STATE, NULL and RIFL_PHY_NONE. */
RIFL_API uint64_t rifl_phy_clear_slots(const rifl_phy *phy);
RIFL_API int rifl_phy_skip(rifl_phy *phy, uint64_t slots);
RIFL_API void *rifl_phy_inflight(rifl_phy *phy, unsigned k, rifl_phy_form form);
RIFL_API rifl_phy_form rifl_phy_inflight_form(const rifl_phy *phy, unsigned k);

/* ---- implementing a PHY -------------------------------------------------- */

typedef struct rifl_phy_ops {
    const char *name;
    unsigned (*exchange)(rifl_phy *phy, uint64_t now, rifl_phy_form form, rifl_phy_frame *out,
                         unsigned max);
    uint64_t (*next_due)(const rifl_phy *phy, uint64_t now); /* may be NULL */
    uint64_t (*clear_slots)(const rifl_phy *phy);            /* may be NULL */
    int (*skip)(rifl_phy *phy, uint64_t slots);              /* may be NULL */
    void *(*inflight)(rifl_phy *phy, unsigned k, rifl_phy_form form); /* may be NULL */
    rifl_phy_form (*inflight_form)(const rifl_phy *phy, unsigned k);  /* may be NULL */
    void (*destroy)(rifl_phy *phy);
} rifl_phy_ops;

/* Every PHY starts with this header, and keeps tx[] pointing at the buffers
 * of the next slot's frame (NULL for a form it does not carry). */
struct rifl_phy {
    const rifl_phy_ops *ops;
    unsigned forms;          /* bit (1 << form) for each form it carries */
    unsigned frame_bytes;    /* F/8 */
    void *tx[3];             /* by rifl_phy_form */
    rifl_phy_stats st;
};

static inline void *rifl_phy_tx_buffer(rifl_phy *phy, rifl_phy_form form)
{
    return (unsigned)form < 3 ? phy->tx[form] : NULL;
}

static inline int rifl_phy_carries(const rifl_phy *phy, rifl_phy_form form)
{
    return (unsigned)form < 8 && (phy->forms >> form) & 1u;
}

/* The form a frame sent in `form` goes in: RIFL_PHY_NONE, counted in
 * `dropped`, when this PHY does not carry it (it never arrives). */
static inline rifl_phy_form rifl_phy_sent_form(rifl_phy *phy, rifl_phy_form form)
{
    if (form != RIFL_PHY_NONE && !rifl_phy_carries(phy, form)) {
        phy->st.dropped++;
        return RIFL_PHY_NONE;
    }
    return form;
}

static inline unsigned rifl_phy_exchange(rifl_phy *phy, uint64_t now, rifl_phy_form form,
                                         rifl_phy_frame *out, unsigned max)
{
    if (!phy || (max && !out))
        return 0;
    return phy->ops->exchange(phy, now, rifl_phy_sent_form(phy, form), out, max);
}

static inline const rifl_phy_stats *rifl_phy_get_stats(const rifl_phy *phy) { return &phy->st; }

/* ---- the PHYs of this library ------------------------------------------- */

/* The most memory the frames of one PHY may take: a simulated cable's,
 * loopback's or serial lane's delay line, a UDP or raw-Ethernet PHY's receive
 * queue (and a simulated pair of lanes, rifl/sim/pair.h, in all).  Each
 * setting has its own limit, but their product can be larger: a PHY whose
 * settings multiply past this is refused with RIFL_ERR_CONFIG and a message
 * naming the settings to lower. */
#define RIFL_PHY_MAX_BYTES (UINT64_C(1) << 30)

/* A simulated cable: a delay line of whole frames with independent random
 * bit errors at a given rate, drawn from its own seeded generator by
 * skipping to the next error, so an error-free frame costs one comparison. */
typedef struct rifl_phy_channel_config {
    unsigned frame_bits;
    unsigned delay_frames;    /* slots from send to receive (0: same slot) */
    double ber;               /* 0 .. 0.5 */
    uint64_t seed;
    size_t content_bytes;     /* 0: wire bytes only */
    rifl_phy_encode_fn encode;/* needed with content_bytes */
    void *encode_ctx;
} rifl_phy_channel_config;

RIFL_API int rifl_phy_channel_create(const rifl_phy_channel_config *cfg, rifl_phy **out, char *msg,
                                     size_t msglen);
/* Change the bit error rate from the next frame on (0 stops errors). */
RIFL_API int rifl_phy_channel_set_ber(rifl_phy *phy, double ber);
/* rifl_phy_exchange of a channel, for a simulator that made its channels
 * and calls them directly (the call can then be inlined). */
RIFL_API unsigned rifl_phy_channel_exchange(rifl_phy *phy, uint64_t now, rifl_phy_form form,
                                            rifl_phy_frame *out, unsigned max);

/* One frame, given by content, through a channel's bit errors but not its
 * delay line, for a simulator that keeps the frames in flight itself (as
 * rifl_phy_skip, one slot): counted as sent and delivered; when an error
 * falls in it, its wire bytes (the channel's encode function), damaged, go
 * to `wire` and the answer is 1, else 0.  RIFL_ERR_INVALID_ARG for a PHY
 * that is not a channel carrying frames by content, or a NULL buffer. */
RIFL_API int rifl_phy_channel_pass(rifl_phy *phy, const void *content, uint8_t *wire);

/* An error-hit frame ahead on a channel: `frame` frames from now (0: the
 * next frame sent), with the positions of its first bits flipped (bit 0 is
 * the first on the wire). */
#define RIFL_PHY_HIT_BITS 8
typedef struct rifl_phy_hit {
    uint64_t frame;
    unsigned nbits;                   /* bits flipped in it */
    uint16_t bit[RIFL_PHY_HIT_BITS];  /* the first min(nbits, 8) of them */
} rifl_phy_hit;

/* The next hit frames of a channel, at most `max` of them into `out`,
 * without moving its error process: the frames rifl_phy_skip and
 * rifl_phy_channel_pass will find hit, and their bits.  Returns how many
 * (fewer when errors stop); 0 for a NULL or non-channel PHY. */
RIFL_API unsigned rifl_phy_channel_peek(const rifl_phy *phy, rifl_phy_hit *out, unsigned max);
/* rifl_phy_skip over `frames` frames that may include hit ones: each hit
 * frame's errors are drawn and counted exactly as rifl_phy_channel_pass
 * would, its bytes left alone (a simulator that carries the frames' effect
 * by other means).  RIFL_ERR_INVALID_ARG for a NULL or non-channel PHY or a
 * count that would wrap the bit counter. */
RIFL_API int rifl_phy_channel_skip_hits(rifl_phy *phy, uint64_t frames);

/* A loopback: wire bytes back after a fixed delay, unchanged, the way a
 * cable plugged back into its own port or a test bench's pattern loop does.
 * It carries wire bytes only. */
RIFL_API int rifl_phy_loopback_create(unsigned frame_bits, unsigned delay_frames, rifl_phy **out,
                                      char *msg, size_t msglen);

/* A serial lane: the sender's frames go on the line as a bit stream in the
 * wire bit order of rifl/serial.h (64-bit transceiver words, least
 * significant bit first), with independent bit errors on every wire bit,
 * SYN included.  The line is delay_frames frame times plus delay_bits bits
 * long (a lane's bit offset, or its skew against other lanes) and carries
 * seeded random bits before the sender's first frame arrives.  The
 * receiving transceiver hands out F/64 words per slot; a bit slip there
 * loses or repeats one bit.  The receive aligner (rifl_aligner) finds the
 * frames: they come out as wire bytes, 0, 1 or 2 per slot, each with the
 * aligner's state when it was complete (rifl_phy_serial_rx_state), which
 * the lane behind must be told (rifl_lane_set_rx_aligned, _rx_up). */
typedef struct rifl_phy_serial_config {
    unsigned frame_bits;
    unsigned delay_frames;    /* whole frame times on the line */
    unsigned delay_bits;      /* and this many bits more */
    double ber;               /* per wire bit, 0 .. 0.5 */
    double slip_rate;         /* bit slips per received frame, 0 .. 1 */
    uint64_t seed;
    unsigned up_log2;         /* the aligner's rx_up length (rifl_aligner_config) */
    size_t content_bytes;     /* 0: the sender gives wire bytes only */
    rifl_phy_encode_fn encode;/* needed with content_bytes */
    void *encode_ctx;
} rifl_phy_serial_config;

typedef struct rifl_phy_serial_stats {
    uint64_t slips_lost;      /* bit slips that lost a bit */
    uint64_t slips_repeated;  /* bit slips that repeated a bit */
    uint64_t slips_refused;   /* slips not made: the line held too few or
                                 too many bits for one */
    /* recoveries: from a slip (the first of several close together) to the
     * aligner's rx_up back up, in frames handed out, by the first slip's
     * kind */
    uint64_t recovered_lost, recovered_repeated;
    uint64_t recovery_frames_lost, recovery_frames_repeated; /* totals */
    uint64_t recovery_max_lost, recovery_max_repeated;
    uint64_t slips_undone;    /* slips put back by slips the other way before
                                 the aligner unlocked: nothing to recover */
} rifl_phy_serial_stats;

/* What the aligner said of a frame handed out. */
typedef struct rifl_phy_serial_rx {
    bool aligned, up;
} rifl_phy_serial_rx;

RIFL_API int rifl_phy_serial_create(const rifl_phy_serial_config *cfg, rifl_phy **out, char *msg,
                                    size_t msglen);
/* The aligner's state for frame k (0 or 1) of the last exchange. */
RIFL_API rifl_phy_serial_rx rifl_phy_serial_rx_state(const rifl_phy *phy, unsigned k);
RIFL_API const rifl_aligner *rifl_phy_serial_aligner(const rifl_phy *phy);
RIFL_API const rifl_phy_serial_stats *rifl_phy_serial_get_stats(const rifl_phy *phy);
/* A bit slip of the receiving transceiver now, before the next word it
 * hands out (fault injection, besides slip_rate): `lose` skips a bit, else
 * one is read twice.  RIFL_ERR_STATE, counted in slips_refused, when the
 * line holds too few or too many bits for it. */
RIFL_API int rifl_phy_serial_slip(rifl_phy *phy, bool lose);

/* ---- UDP ------------------------------------------------------------------
 *
 * A lane over UDP (docs/udp.md): the frames of several slots, as wire bytes,
 * go in one datagram behind a 20-byte header that carries the sender's link
 * epoch and the sequence number of its first frame.  Unlike the simulated
 * PHYs, which carry one direction, a UDP PHY is one end of the link: the
 * frames it is given go to the peer, and `exchange` returns the frames that
 * arrived here from the peer (a batch: up to `max`).  Datagrams may be lost,
 * duplicated, reordered or late; the receiving end takes frames only in
 * sequence order, so a datagram that comes after a later one, twice, from
 * another epoch or malformed is dropped and counted.  Where frames went
 * missing (a gap in the sequence, a full receive queue) the lane is handed
 * an erasure first, a frame that fails verification, and recovers by replay
 * as from a damaged frame.  The erasure decodes to frame ID 0xFFF, so lanes
 * over UDP have at most 11 frame-ID bits. */
#define RIFL_UDP_HEADER_BYTES 20
#define RIFL_UDP_MAX_FRAMES 64    /* frames per datagram */

typedef struct rifl_udp_header {
    unsigned frame_bits;      /* 64 .. 2048 */
    unsigned count;           /* frames that follow, 1 .. RIFL_UDP_MAX_FRAMES */
    uint32_t epoch;           /* the sender's link epoch */
    uint64_t seq;             /* sequence number of the first frame */
} rifl_udp_header;

/* Write the header of a datagram (RIFL_UDP_HEADER_BYTES). */
RIFL_API int rifl_udp_header_write(const rifl_udp_header *h, uint8_t *out);
/* Read and check a datagram of `len` bytes: RIFL_OK with *h filled when the
 * header is well formed and `len` is exactly the header plus its frames,
 * RIFL_ERR_FRAME otherwise. */
RIFL_API int rifl_udp_header_read(const uint8_t *dgram, size_t len, rifl_udp_header *h);

typedef struct rifl_phy_udp_config {
    unsigned frame_bits;
    int fd;                     /* a bound UDP socket to use (the PHY closes
                                   it), or -1 to open one on `local` */
    const char *local;          /* "ADDRESS:PORT" to bind, numeric (port 0:
                                   any); with fd -1 */
    const char *remote;         /* "ADDRESS:PORT" of the peer, numeric */
    unsigned frames_per_datagram; /* 1 .. RIFL_UDP_MAX_FRAMES (0: 16) */
    unsigned flush_slots;       /* a part-filled datagram goes at most this
                                   many slots after its first frame (0:
                                   frames_per_datagram) */
    uint32_t epoch;             /* this end's link epoch, not 0 */
    unsigned rx_frames;         /* receive queue, frames (0: 4096) */
    unsigned rx_every_slots;    /* read the socket at every this many
                                   exchanges (0 or 1: at each; at most 64):
                                   fewer system calls when slots are short,
                                   frames wait up to that many slots more
                                   (rifl_phy_udp_poll reads at once) */
    double loss;                /* drop each datagram sent with this
                                   probability (0 .. 1; tests) */
    double dup;                 /* send each datagram twice with this
                                   probability (0 .. 1; tests) */
    uint64_t seed;              /* of the loss, duplication and bit error
                                   draws */
    double ber;                 /* flip each bit of the frames sent with this
                                   probability (0 .. 0.5; tests) */
    unsigned gso_datagrams;     /* UDP only, 0 or 1: one system call per
                                   datagram.  More: datagrams are held, up to
                                   this many (and 64 KB), and go out
                                   together in one call with UDP
                                   segmentation offload (UDP_SEGMENT) at
                                   rifl_phy_udp_push, a flush, or when the
                                   hold is full; the socket also takes
                                   coalesced datagrams (UDP_GRO).  A kernel
                                   that refuses either: one call each, as
                                   with 0.  At most 64. */
} rifl_phy_udp_config;

typedef struct rifl_phy_udp_stats {
    uint64_t dgrams_sent, dgrams_received;
    uint64_t tx_lost;           /* datagrams dropped by `loss` */
    uint64_t tx_duplicated;     /* sent twice by `dup` */
    uint64_t tx_failed;         /* the socket refused them (full, or an
                                   error: tx_last_errno) */
    int tx_last_errno;
    uint64_t rx_malformed;      /* bad header or size */
    uint64_t rx_other_width;    /* datagrams and probes of another frame
                                   width than this end's: a peer set up
                                   differently (peer_frame_bits); those of
                                   an epoch not the peer's are counted in
                                   rx_foreign or rx_stale too */
    unsigned peer_frame_bits;   /* that width, from the peer's epoch (its
                                   new one, once one showed) or from any
                                   while none is known (0: none seen since
                                   the start, the last rifl_phy_udp_rejoin
                                   or the last new epoch of the peer's) */
    uint64_t rx_foreign;        /* another epoch than the peer's, not one it
                                   left: a restart of the peer
                                   (peer_epoch_new), or an old datagram,
                                   which shows none (frames or an
                                   announcement once this end probed; one
                                   of another frame width) */
    uint64_t rx_stale;          /* of an epoch the peer left (retired at
                                   rifl_phy_udp_rejoin): old, dropped */
    uint64_t rx_late;           /* before what was taken already: duplicate,
                                   reordered or late */
    uint64_t rx_missing;        /* frames never received (gaps in sequence) */
    uint64_t rx_far_held;       /* datagrams and announcements starting more
                                   than 4096 frames beyond the next one
                                   expected, dropped until one starting
                                   at or after where such a one ended
                                   confirms the jump (a stray datagram
                                   never confirmed, or a copy of it, moves
                                   nothing) */
    uint64_t rx_jumps;          /* such jumps confirmed and taken (after a
                                   long outage: rx_missing counts the gap) */
    uint64_t rx_overflow;       /* frames dropped: receive queue full */
    uint64_t rx_erasures;       /* erasures handed to the lane for them */
    uint32_t peer_epoch;        /* the peer's epoch (0: nothing from it yet) */
    uint32_t peer_epoch_new;    /* a new epoch of the peer's, seen and not
                                   adopted yet (0: none): the peer restarted */
    uint32_t epoch;             /* this end's epoch (config's, until a rejoin
                                   gives a new one) */
    uint64_t rejoins;           /* rifl_phy_udp_rejoin calls */
    uint64_t rx_next;           /* sequence number of the next frame expected
                                   from the peer: the peer's frames taken or
                                   counted missing so far */
    uint64_t probes_sent;       /* probe datagrams sent (rifl_phy_udp_probe) */
    uint64_t probes_answered;   /* the peer's probes answered */
    uint64_t probe_answers;     /* answers to our probes kept for the driver */
    uint64_t probe_answers_dropped; /* answers dropped: too many not taken */
    uint64_t peer_probe_value;  /* the value of the peer's latest probe or
                                   answer (rifl_phy_udp_set_probe_value);
                                   0 again when a new epoch of the peer's
                                   shows, and none taken from then until
                                   rifl_phy_udp_rejoin */
    uint64_t announcements;     /* sequence announcements sent */
    uint64_t rx_announcements;  /* and received (frames they showed missing
                                   are counted in rx_missing) */
    /* raw Ethernet only (0 over UDP, where the connected socket filters) */
    uint64_t rx_not_peer;       /* frames dropped: not from the peer's MAC
                                   address, or not addressed to this end */
    uint64_t rx_own;            /* this end's own outgoing frames, dropped
                                   (kernels without PACKET_IGNORE_OUTGOING) */
    uint64_t rx_padded;         /* datagrams shorter than Ethernet's 46-byte
                                   minimum payload that came padded: taken */
    uint64_t rx_buffer_bytes;   /* the socket's receive buffer, as the
                                   kernel granted it (4 MB asked) */
    /* gso_datagrams above 1 */
    uint64_t tx_calls;          /* system calls that sent datagrams of frames */
    uint64_t gso_sends;         /* of them, calls that sent several at once */
    uint64_t gso_fallbacks;     /* the kernel refused segmentation offload:
                                   one call per datagram since */
    uint64_t gro_reads;         /* datagrams read that held several coalesced */
    uint64_t gro_off;           /* 1: the kernel refused UDP_GRO */
} rifl_phy_udp_stats;

/* Make the PHY: bad addresses, an epoch of 0 or out-of-range settings are
 * refused with RIFL_ERR_CONFIG and a message; a socket that cannot be
 * opened, bound or connected gives RIFL_ERR_IO and the system's reason.
 * The frames an exchange hands out (wire bytes) lie end to end, F/8 bytes
 * apart from out[0].data, so a lane can take them in one batch
 * (rifl_lane_rx_batch); the raw-Ethernet PHY's too. */
RIFL_API int rifl_phy_udp_create(const rifl_phy_udp_config *cfg, rifl_phy **out, char *msg,
                                 size_t msglen);
/* The datagram counters of a UDP or raw-Ethernet PHY (NULL for others).
 * The calls below, rifl_phy_udp_poll to rifl_phy_udp_probe_answer, work on
 * both kinds too. */
RIFL_API const rifl_phy_udp_stats *rifl_phy_udp_get_stats(const rifl_phy *phy);
/* The port the PHY's socket is bound to (0 on error). */
RIFL_API unsigned rifl_phy_udp_local_port(const rifl_phy *phy);
/* For the driver that paces the PHY in real time (rifl/udplink.h): read the
 * datagrams waiting now without a slot (their frames join the receive
 * queue, probes are answered); send the part-filled datagram now; the
 * socket, to wait for datagrams with poll(). */
RIFL_API int rifl_phy_udp_poll(rifl_phy *phy);
RIFL_API int rifl_phy_udp_flush(rifl_phy *phy);
/* Send the datagrams held for one call (gso_datagrams above 1); the
 * part-filled datagram stays.  A driver calls it after each batch of
 * slots. */
RIFL_API int rifl_phy_udp_push(rifl_phy *phy);
RIFL_API int rifl_phy_udp_fd(const rifl_phy *phy);
/* Carry frames by content as well (RIFL_PHY_CONTENT, descriptions of
 * content_bytes, 1 to 4096): a datagram's frames are built from them by one
 * call of `encode` when it is complete, so a codec that encodes frames in
 * batches does it once per datagram instead of once per slot (a lane:
 * rifl_lane_phy_encode_batch, with rifl_lane_frame_bytes).  Frames given
 * as wire bytes still go as they are.  A part-filled datagram is sent
 * first.  RIFL_ERR_INVALID_ARG for another PHY or a bad size. */
RIFL_API int rifl_phy_udp_set_encoder(rifl_phy *phy, size_t content_bytes,
                                      rifl_phy_encode_batch_fn encode, void *ctx);
/* Round-trip probes (docs/udp.md, "Probes"): send a probe carrying
 * `token`; the peer's PHY answers it with the same token whenever it
 * receives (exchange or poll).  rifl_phy_udp_probe_answer takes the token
 * of the oldest answer received, false when there is none.  RIFL_ERR_IO
 * when the socket refused the probe (counted in tx_failed).  Probes and
 * answers also carry a value this end publishes (set_probe_value; 0 at
 * first), which the peer sees in peer_probe_value: the two drivers agree
 * on the round trip that way.  A probe names the epoch its sender knows
 * for the peer; its value is taken only when that is this end's epoch, so
 * a value a driver sees was published for this start of this end, and it
 * is dropped when a new epoch of the peer's shows, so that it was
 * published by the peer's current start. */
RIFL_API int rifl_phy_udp_probe(rifl_phy *phy, uint64_t token);
RIFL_API int rifl_phy_udp_set_probe_value(rifl_phy *phy, uint64_t value);
/* Send the part-filled datagram, then a sequence announcement: a probe
 * datagram telling the peer the sequence number of this end's next frame,
 * so that frames of lost datagrams show as missing (an erasure) although
 * no datagram follows them.  A driver that stops sending (its window shut)
 * announces now and then. */
RIFL_API int rifl_phy_udp_announce(rifl_phy *phy);
RIFL_API bool rifl_phy_udp_probe_answer(rifl_phy *phy, uint64_t *token);
/* Start over with the peer's new epoch (docs/udp.md, "Epochs and
 * restarts"), after a datagram of an epoch the peer never had showed it
 * restarted (peer_epoch_new): the peer's old epoch, and the one its probe
 * said it had before, are retired (their datagrams are dropped from now
 * on, counted in rx_stale), the new one is adopted, and this end takes
 * `epoch` as its own (0: keeps its own; the old one goes in its probes as
 * the one before).  Sequence numbers start from 0 both ways, and the
 * frames received and not handed out, the part-filled datagram, the probe
 * answers not taken, the value published and the peer's, and the frame
 * width heard from the peer (peer_frame_bits) are dropped.
 * RIFL_ERR_INVALID_ARG for another kind of PHY. */
RIFL_API int rifl_phy_udp_rejoin(rifl_phy *phy, uint32_t epoch);

/* ---- Raw Ethernet ---------------------------------------------------------
 *
 * The same datagrams straight in Ethernet frames (docs/udp.md, "Raw
 * Ethernet"): an AF_PACKET socket on one interface, EtherType 0x88B5 (IEEE
 * local experimental), each datagram the payload of one Ethernet frame to
 * the peer's MAC address, zero-padded to Ethernet's 46-byte minimum.  The
 * receiving end takes only frames from the peer's MAC address to its own
 * (the others are counted in rx_not_peer), and accepts padding: a payload
 * longer than its header says, but no longer than 46 bytes.  Everything
 * else is as over UDP: the header, the sequence and epoch rules, erasures,
 * probes, the injected faults and the counters (rifl_phy_udp_get_stats and
 * the other rifl_phy_udp_* calls).  Opening the socket needs root or
 * CAP_NET_RAW. */
#define RIFL_ETH_TYPE 0x88B5
#define RIFL_ETH_MIN_PAYLOAD 46   /* bytes: shorter datagrams are padded */

typedef struct rifl_phy_eth_config {
    unsigned frame_bits;
    const char *ifname;         /* the interface, e.g. "eth1" */
    const char *peer_mac;       /* the peer's MAC address, six hex bytes:
                                   "02:00:00:00:00:01" (or with '-') */
    unsigned frames_per_datagram; /* 1 .. RIFL_UDP_MAX_FRAMES (0: 16); a
                                   datagram (20 + this x F/8 bytes) must fit
                                   the interface's MTU */
    unsigned flush_slots;       /* as rifl_phy_udp_config */
    uint32_t epoch;             /* this end's link epoch, not 0 */
    unsigned rx_frames;         /* receive queue, frames (0: 4096) */
    unsigned rx_every_slots;    /* as rifl_phy_udp_config */
    double loss, dup;           /* as rifl_phy_udp_config (tests) */
    uint64_t seed;
    double ber;
} rifl_phy_eth_config;

/* A MAC address as six hex bytes separated by ':' or '-' (the same
 * throughout), two digits each: RIFL_OK, or RIFL_ERR_PARSE for anything
 * else. */
RIFL_API int rifl_eth_mac_parse(const char *text, uint8_t mac[6]);
/* An interface's MAC address and MTU (either pointer may be NULL):
 * RIFL_ERR_CONFIG with a message for a name that is not valid or an
 * interface this machine does not have. */
RIFL_API int rifl_eth_interface(const char *ifname, uint8_t mac[6], unsigned *mtu, char *msg,
                                size_t msglen);
/* Make the PHY: a bad interface name, an unknown interface, a MAC address
 * that is not six hex bytes or not a unicast one, a datagram larger than
 * the interface's MTU (the message says how many frames per datagram
 * fit), an epoch of 0 or an out-of-range setting give RIFL_ERR_CONFIG; a
 * socket that cannot be opened (not root, no CAP_NET_RAW) or bound gives
 * RIFL_ERR_IO; each with a message saying what to do. */
RIFL_API int rifl_phy_eth_create(const rifl_phy_eth_config *cfg, rifl_phy **out, char *msg,
                                 size_t msglen);
/* This end's MAC address, read from the interface (RIFL_ERR_INVALID_ARG
 * when `phy` is not a raw-Ethernet PHY). */
RIFL_API int rifl_phy_eth_local_mac(const rifl_phy *phy, uint8_t mac[6]);

#ifdef __cplusplus
}
#endif
#endif

/* rifl: one lane over a UDP PHY in real time (docs/udp.md, "The driver").
 *
 * The lane and the PHY are sans-I/O engines that count time in frame
 * slots.  This driver is what runs them on a real socket: it reads no clock
 * itself either (every call takes `now_ns`, a monotonic time in
 * nanoseconds, from its caller; rifl_udplink_service is the one call that
 * reads CLOCK_MONOTONIC and waits in poll()), and it
 *
 *  - probes the round trip at start-up (probe datagrams of the UDP PHY),
 *    agrees on it with the peer (the larger of the two ends' estimates) and
 *    sizes the lane's frame-ID width K from it, refusing when no K <= 11
 *    fits;
 *  - paces slots at the lane rate, F / rate ns each, never running more
 *    than `window` slots ahead of the last frame it got from the peer (so
 *    a stalled peer stalls this end too, and the lane's round trip in slots
 *    stays within what K covers, whatever the scheduler does);
 *  - follows the idle rule: after the last activity it keeps sending at
 *    the lane rate for `hold_slots` slots (about one round trip, so a lost
 *    tail is found), then sends one slot per keepalive interval, sleeping
 *    in poll() in between, and wakes at once for data to send or frames
 *    from the peer;
 *  - resets jointly when the peer restarts (a datagram of an epoch the
 *    peer never had): this end drops its lane, takes a new epoch, and both
 *    probe and start new lanes together; datagrams of the old epochs are
 *    dropped.  The lane is then NULL until the link runs again, and what
 *    the old lane held is lost (counted in `resets`, `reset_tx_frames`,
 *    `reset_rx_frames`): a user reading a packet in parts starts over when
 *    `resets` changes.
 *
 * The user sends and reads through the lane (rifl_udplink_lane) with
 * rifl_lane_send and rifl_lane_read, as with any lane. */
#ifndef RIFL_UDPLINK_H
#define RIFL_UDPLINK_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/capture.h"
#include "rifl/counter.h"
#include "rifl/error.h"
#include "rifl/lane.h"
#include "rifl/phy.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rifl_udplink_config {
    rifl_phy_udp_config udp;   /* the PHY: frame width, socket, peer,
                                  datagrams, epoch, injected faults;
                                  rx_every_slots 0: the driver reads the
                                  socket about every 4 us while slots run;
                                  epoch 0 (the default): drawn from the
                                  clock and the process, so that a restart
                                  shows as a new epoch */
    rifl_lane_config lane;     /* the lane; the driver sets its frame width
                                  (udp's), link, pipeline_frames and, when
                                  fid_bits is 0, fid_bits from the round
                                  trip */
    double rate_gbps;          /* lane rate: one slot every F / rate ns */
    uint64_t rtt_ns;           /* 0: probe the round trip at start-up;
                                  otherwise size for this one (the probes
                                  then only carry it to the peer, so that
                                  both ends start together) */
    unsigned probes;           /* answers to collect (0: 16); up to four
                                  times as many while the estimate fits no
                                  K */
    uint64_t probe_interval_ns;/* between probes (0: 200 us) */
    uint64_t probe_timeout_ns; /* give up when the peer has not agreed by
                                  then (0: 5 s), counted from the first
                                  step or a joint reset: new epochs of the
                                  peer's while probing do not put it off */
    uint64_t keepalive_ns;     /* one slot per this while idle (0: 1 ms) */
    unsigned batch_slots;      /* most slots run per step (0: 64) */
    const char *eth_ifname;    /* set: run over raw Ethernet on this
                                  interface (rifl_phy_eth_create) instead of
                                  UDP; udp's frame width, datagram, epoch and
                                  fault settings apply, its fd must be -1 */
    const char *eth_peer_mac;  /* with eth_ifname: the peer's MAC address */
} rifl_udplink_config;

/* Defaults for the fields that have them: the reference lane with its
 * queue of 4096 frames, 2048-bit frames, 16 frames per datagram, 1 Gbit/s. */
RIFL_API void rifl_udplink_defaults(rifl_udplink_config *cfg);

/* What a round trip makes of the link. */
typedef struct rifl_udplink_sizing {
    double slot_ns;            /* F / rate */
    uint64_t rtt_ns;           /* the round trip sized for */
    unsigned rtt_slots;        /* it in slots, rounded up */
    unsigned window;           /* slots this end may run ahead of the last
                                  frame it got from the peer: rtt_slots + 2
                                  x flush_slots + 16 */
    unsigned hold_slots;       /* full-rate slots after the last activity:
                                  the window */
    unsigned pipeline_frames;  /* the lane's round trip: 2 x window + 2 x
                                  frames per datagram + 8 */
    unsigned fid_bits;         /* K: ceil(log2(32 + pipeline_frames)) */
} rifl_udplink_sizing;

/* Size the link for a round trip of `rtt_ns`: RIFL_ERR_CONFIG with a
 * message naming the problem and the fix when no K <= 11 covers it (or the
 * configuration's fid_bits is too small), RIFL_ERR_INVALID_ARG for a NULL
 * argument or a rate that is not positive. */
RIFL_API int rifl_udplink_size(const rifl_udplink_config *cfg, uint64_t rtt_ns,
                               rifl_udplink_sizing *out, char *msg, size_t msglen);

typedef struct rifl_udplink_stats {
    uint64_t slots;            /* slots run */
    uint64_t keepalive_slots;  /* of them, while idle: on the keepalive
                                  timer, or for frames from the peer */
    uint64_t idle_periods;     /* times the link went idle */
    uint64_t peer_wakes;       /* times this end, idle, went back to the
                                  lane rate because the peer's window was
                                  shut or nearly on it */
    uint64_t window_stalls;    /* times the window shut: this end waited
                                  for the peer's frames (while shut it
                                  announces its sequence number once per
                                  keepalive interval) */
    uint64_t schedule_resets;  /* times this end fell more than 1 ms behind
                                  the lane rate and gave the lost slots up */
    uint64_t probe_samples;    /* round trips measured */
    uint64_t rtt_min_ns, rtt_median_ns, rtt_max_ns; /* of them */
    uint64_t rtt_local_ns;     /* this end's estimate: twice the shortest */
    uint64_t rtt_peer_ns;      /* the peer's */
    uint64_t resets;           /* joint resets (docs/udp.md, "Epochs and
                                  restarts"): the peer restarted while the
                                  lane ran; this end dropped its lane, took
                                  a new epoch and probed again */
    uint64_t reset_tx_frames;  /* frames queued to send that resets dropped */
    uint64_t reset_rx_frames;  /* frames received and not read that resets
                                  dropped */
    uint64_t peer_epochs_adopted; /* new epochs of the peer taken while
                                  probing (no lane to drop) */
    uint64_t captured_frames;  /* frames written to the capture */
    uint64_t capture_skipped;  /* frames not written: past the capture's
                                  limit, or its file failed */
} rifl_udplink_stats;

typedef struct rifl_udplink rifl_udplink;

/* Make the PHY (the socket) and check the settings; the lane is made when
 * the round trip is known.  RIFL_ERR_CONFIG / RIFL_ERR_IO with a message as
 * rifl_phy_udp_create (rifl_phy_eth_create with eth_ifname). */
RIFL_API int rifl_udplink_create(const rifl_udplink_config *cfg, rifl_udplink **out, char *msg,
                                 size_t msglen);
RIFL_API void rifl_udplink_free(rifl_udplink *link);

/* Do what is due at `now_ns`: probe, or run the slots due.  *wake_ns gets
 * the time of the next thing due (a datagram from the peer may come
 * sooner: wait on rifl_udplink_fd).  Returns RIFL_OK; RIFL_ERR_IO when the
 * peer did not answer the probes in time; RIFL_ERR_CONFIG when no K fits
 * the round trip; the message says why and what to do. */
RIFL_API int rifl_udplink_step(rifl_udplink *link, uint64_t now_ns, uint64_t *wake_ns,
                               char *msg, size_t msglen);
/* Read CLOCK_MONOTONIC, step, and wait in poll() until the next thing due
 * or a datagram, at most `max_wait_ns` (a wait shorter than 50 us is not
 * slept: the call returns and the caller steps again).  The same returns as
 * rifl_udplink_step. */
RIFL_API int rifl_udplink_service(rifl_udplink *link, uint64_t max_wait_ns, char *msg,
                                  size_t msglen);
/* CLOCK_MONOTONIC in nanoseconds. */
RIFL_API uint64_t rifl_udplink_clock_ns(void);

/* Capture every frame this end's lane sends (direction 0: source MAC
 * 02:52:46:00:00:0a, this end) and every frame handed to it from the peer
 * (direction 1, source ...0b), erasures included, up to `max_frames` in
 * all (0: no limit), in `cap`, which stays the caller's to close
 * (docs/capture.md, "A real link").  Each direction's records are numbered
 * from 0 in the order of the slots, again from 0 after a joint reset, and
 * carry its sender's epoch; time stamps count from the first frame
 * captured.  NULL stops capturing. */
RIFL_API void rifl_udplink_set_capture(rifl_udplink *link, rifl_capture *cap, uint64_t max_frames);

/* Whether the round trip is known and the lane runs. */
RIFL_API bool rifl_udplink_running(const rifl_udplink *link);
/* Whether the link is idle (keepalive slots only). */
RIFL_API bool rifl_udplink_idle(const rifl_udplink *link);
/* The lane (NULL until running), the PHY, the socket, the sizing. */
RIFL_API rifl_lane *rifl_udplink_lane(rifl_udplink *link);
RIFL_API rifl_phy *rifl_udplink_phy(rifl_udplink *link);
RIFL_API int rifl_udplink_fd(const rifl_udplink *link);
RIFL_API const rifl_udplink_sizing *rifl_udplink_get_sizing(const rifl_udplink *link);
RIFL_API const rifl_udplink_stats *rifl_udplink_get_stats(const rifl_udplink *link);
/* Every counter of rifl_udplink_stats, named and explained. */
RIFL_API const rifl_counter *rifl_udplink_counters(size_t *count);

#ifdef __cplusplus
}
#endif
#endif

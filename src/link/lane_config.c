/* Lane configuration: defaults, the frame-ID sizing rule (link rules §9) and
 * the checks that refuse unsafe configurations. */
#include <math.h>
#include <stdio.h>

#include "rifl/lane.h"

const rifl_lane_config rifl_lane_default_config = RIFL_LANE_DEFAULTS;

double rifl_link_rtt_frames(const rifl_link_params *link, unsigned frame_bits,
                            unsigned extra_frames)
{
    if (!link || !frame_bits)
        return 0;
    double rtt_ns = 2.0 * (link->transceiver_ns + link->cable_m * link->ns_per_m);
    return rtt_ns * link->lane_rate_gbps / (double)frame_bits + (double)extra_frames;
}

unsigned rifl_lane_fid_bits_for_rtt(double rtt_frames)
{
    double need = 32.0 + rtt_frames;
    unsigned k = 0;
    while ((double)(1u << k) < need && k < 31)
        k++;
    return k;
}

unsigned rifl_lane_min_fid_bits(const rifl_link_params *link, unsigned frame_bits,
                                unsigned extra_frames)
{
    return rifl_lane_fid_bits_for_rtt(rifl_link_rtt_frames(link, frame_bits, extra_frames));
}

unsigned rifl_lane_min_replay_tail(const rifl_lane_config *c)
{
    if (!c)
        return 0;
    /* link rules §8 (rule R1): the newest replayed frame reaches the peer
     * half a round trip after it is sent and the peer's first frame that
     * shows it back in step takes the other half; 16 slots more make the
     * RETRANSMIT flag seen at the end of the cycle a fresh one */
    double rtt = rifl_link_rtt_frames(&c->link, c->frame_bits, c->pipeline_frames);
    return (unsigned)ceil(rtt) + 16;
}

unsigned rifl_lane_replay_tail(const rifl_lane_config *c)
{
    if (!c)
        return 0;
    if (c->replay_tail_frames)
        return c->replay_tail_frames;
    unsigned half = (1u << c->fid_bits) / 2;
    unsigned need = rifl_lane_min_replay_tail(c);
    return half > need ? half : need;
}

/* refuse a configuration with an explanation */
#define refuse(msg, msglen, ...) (rifl_msg((msg), (msglen), __VA_ARGS__), RIFL_ERR_CONFIG)

/* Frame width and frame-ID width on their own. */
static int check_widths(const rifl_lane_config *c, char *msg, size_t msglen)
{
    if (rifl_frame_width_check(c->frame_bits) != RIFL_OK)
        return refuse(msg, msglen,
                      "frame width %u bits is not supported; use 64, 128, 256, 512, "
                      "1024 or 2048", c->frame_bits);
    if (c->fid_bits > RIFL_FID_MAX_BITS)
        return refuse(msg, msglen,
                      "frame-ID width %u exceeds 12 bits (the verification code is 12 "
                      "bits wide); use a frame-ID width of at most 12", c->fid_bits);
    if (c->fid_bits < 5)
        return refuse(msg, msglen,
                      "frame-ID width %u is below 5: the receiver's 16-frame verification "
                      "run needs more than 16 frame IDs; use at least 5 (and what the "
                      "link needs)", c->fid_bits);
    return RIFL_OK;
}

/* The physical link: rate, cable length, propagation and transceiver delay. */
static int check_link(const rifl_link_params *l, char *msg, size_t msglen)
{
    if (!(l->lane_rate_gbps > 0) || !isfinite(l->lane_rate_gbps))
        return refuse(msg, msglen, "lane rate %g Gbit/s must be a positive number",
                      l->lane_rate_gbps);
    if (!(l->cable_m >= 0) || !isfinite(l->cable_m))
        return refuse(msg, msglen, "cable length %g m must be zero or positive", l->cable_m);
    if (!(l->ns_per_m > 0) || !isfinite(l->ns_per_m))
        return refuse(msg, msglen, "propagation delay %g ns/m must be positive "
                      "(5 ns/m for fibre or copper)", l->ns_per_m);
    if (l->ns_per_m < RIFL_LINK_MIN_NS_PER_M)
        return refuse(msg, msglen, "propagation delay %g ns/m is faster than light (%.4f "
                      "ns/m in vacuum); use 5 ns/m for fibre or copper, or a longer cable",
                      l->ns_per_m, RIFL_LINK_MIN_NS_PER_M);
    if (!(l->transceiver_ns >= 0) || !isfinite(l->transceiver_ns))
        return refuse(msg, msglen, "transceiver latency %g ns must be zero or positive",
                      l->transceiver_ns);
    return RIFL_OK;
}

/* The frame-ID width against the round trip of rtt frames. */
static int check_fid_for_link(const rifl_lane_config *c, double rtt, char *msg,
                              size_t msglen)
{
    const rifl_link_params *l = &c->link;
    unsigned kmin = rifl_lane_min_fid_bits(l, c->frame_bits, c->pipeline_frames);
    if (kmin > RIFL_FID_MAX_BITS)
        return refuse(msg, msglen,
                      "the link is too long for RIFL: its round trip of %.1f frames "
                      "(2 x (%g ns + %g m x %g ns/m) at %g Gbit/s, %u-bit frames, plus %u "
                      "pipeline frames) needs a frame-ID width of %u, above the maximum "
                      "of 12; shorten the cable, lower the lane rate or use wider frames",
                      rtt, l->transceiver_ns, l->cable_m, l->ns_per_m, l->lane_rate_gbps,
                      c->frame_bits, c->pipeline_frames, kmin);
    if (c->fid_bits < kmin && !c->allow_unsafe_fid)
        return refuse(msg, msglen,
                      "frame-ID width %u is too small for this link: the round trip is "
                      "%.1f frames (2 x (%g ns + %g m x %g ns/m) at %g Gbit/s, %u-bit "
                      "frames, plus %u pipeline frames) and the replay buffer of 2^K "
                      "frames must cover 32 + RTT = %.1f; the smallest safe frame-ID "
                      "width is %u",
                      c->fid_bits, rtt, l->transceiver_ns, l->cable_m, l->ns_per_m,
                      l->lane_rate_gbps, c->frame_bits, c->pipeline_frames, 32.0 + rtt,
                      kmin);
    return RIFL_OK;
}

/* Queue sizes, the receive buffer and the flow-control thresholds and mode. */
static int check_buffers(const rifl_lane_config *c, double rtt, char *msg, size_t msglen)
{
    if (c->tx_queue_frames < 1 || c->tx_queue_frames > (1u << 24))
        return refuse(msg, msglen, "transmit queue of %u frames: use 1 to 16777216",
                      c->tx_queue_frames);
    if (c->ext_queue_frames < 1 || c->ext_queue_frames > (1u << 16))
        return refuse(msg, msglen, "extension queue of %u frames: use 1 to 65536",
                      c->ext_queue_frames);
    unsigned buf = c->rx_buffer_frames ? c->rx_buffer_frames : 2u << c->fid_bits;
    if (buf > (1u << 24))
        return refuse(msg, msglen, "receive buffer of %u frames: use at most 16777216", buf);
    unsigned safe_buf = (unsigned)ceil(1.5 * rtt);
    if (buf < safe_buf && !c->allow_unsafe_fid)
        return refuse(msg, msglen,
                      "receive buffer of %u frames is below 1.5 round trips (%.1f frames): "
                      "flow control could not stop the peer in time; use at least %u "
                      "frames (or 0 for the default 2^(K+1))", buf, 1.5 * rtt, safe_buf);
    unsigned on = c->fc_on_frames ? c->fc_on_frames : buf * 2 / 3;
    unsigned off = c->fc_off_frames ? c->fc_off_frames : buf / 3;
    if (c->fc_mode == RIFL_LANE_FC_ONOFF && !(off < on && on < buf))
        return refuse(msg, msglen,
                      "flow-control thresholds OFF=%u and ON=%u must satisfy OFF < ON < "
                      "buffer size %u; leave both 0 for 1/3 and 2/3 of the buffer", off, on, buf);
    if (c->fc_mode != RIFL_LANE_FC_ONOFF && c->fc_mode != RIFL_LANE_FC_NONE)
        return refuse(msg, msglen, "unknown flow-control mode %d; use ONOFF or NONE",
                      (int)c->fc_mode);
    return RIFL_OK;
}

/* The replay tail and, with a reference peer, the frame-ID width its replay
 * cycles need. */
static int check_replay(const rifl_lane_config *c, double rtt, char *msg, size_t msglen)
{
    unsigned tail_rtt = rifl_lane_min_replay_tail(c), half = (1u << c->fid_bits) / 2;
    unsigned tail_min = half > tail_rtt ? half : tail_rtt;
    if (c->replay_tail_frames && c->replay_tail_frames < tail_min && !c->allow_unsafe_fid)
        return refuse(msg, msglen,
                      "replay tail of %u slots is shorter than max(2^(K-1), one round trip "
                      "plus 16) = max(%u, %u) slots: the peer's last retransmit requests "
                      "could restart a replay after it is back in step, and it would take "
                      "stale frames as new; use at least %u (or 0 for automatic)",
                      c->replay_tail_frames, half, tail_rtt, tail_min);
    if (c->reference_peer && ceil(rtt) + 2 >= (double)(1u << c->fid_bits) / 2 &&
        !c->allow_unsafe_fid) {
        unsigned k = c->fid_bits;
        while (k < RIFL_FID_MAX_BITS && ceil(rtt) + 2 >= (double)(1u << k) / 2)
            k++;
        if (ceil(rtt) + 2 >= (double)(1u << k) / 2)
            return refuse(msg, msglen,
                          "with a peer that closes its replay cycles after 2^(K-1) slots (the "
                          "authors' hardware), a round trip of %.1f frames needs RTT + 2 < "
                          "2^(K-1), which no frame-ID width up to 12 gives; shorten the cable, "
                          "lower the lane rate or use wider frames", rtt);
        return refuse(msg, msglen,
                      "with a peer that closes its replay cycles after 2^(K-1) = %u slots (the "
                      "authors' hardware), a round trip of %.1f frames is unsafe: the peer's "
                      "stale retransmit requests can restart a replay after this lane is back "
                      "in step and old frames would be delivered as new; use a frame-ID width "
                      "of at least %u (RTT + 2 < 2^(K-1)), on both ends",
                      (1u << c->fid_bits) / 2, rtt, k);
    }
    return RIFL_OK;
}

int rifl_lane_serial_check(const rifl_lane_config *c, char *msg, size_t msglen)
{
    int rc = rifl_lane_config_check(c, msg, msglen);
    if (rc != RIFL_OK || !c->rx_hold_frames || c->allow_unsafe_fid)
        return rc;
    /* a lane rolls back over its held frames: the peer's replay buffer must
     * reach that much further back */
    double rtt = rifl_link_rtt_frames(&c->link, c->frame_bits, c->pipeline_frames);
    double need = 32.0 + rtt + c->rx_hold_frames;
    if ((double)(1u << c->fid_bits) < need)
        return refuse(msg, msglen,
                      "serial lanes hold %u frames until alignment is confirmed, so the "
                      "replay buffer of 2^K = %u frames must cover 32 + RTT (%.1f) + %u = "
                      "%.1f; use a larger frame-ID width or a shorter hold",
                      c->rx_hold_frames, 1u << c->fid_bits, rtt, c->rx_hold_frames, need);
    return RIFL_OK;
}

int rifl_lane_config_check(const rifl_lane_config *c, char *msg, size_t msglen)
{
    if (!c)
        return rifl_null_arg(msg, msglen, "rifl_lane_config_check", "the configuration");
    int rc = check_widths(c, msg, msglen);
    if (rc == RIFL_OK)
        rc = check_link(&c->link, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    double rtt = rifl_link_rtt_frames(&c->link, c->frame_bits, c->pipeline_frames);
    rc = check_fid_for_link(c, rtt, msg, msglen);
    if (rc == RIFL_OK)
        rc = check_buffers(c, rtt, msg, msglen);
    if (rc == RIFL_OK)
        rc = check_replay(c, rtt, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    if (c->replay_tail_frames > (1u << 20))
        return refuse(msg, msglen, "replay tail of %u slots: use at most 1048576",
                      c->replay_tail_frames);
    if (c->rx_lock_frames > 65536)
        return refuse(msg, msglen, "alignment lock of %u frames: use 0 to 65536",
                      c->rx_lock_frames);
    if (c->lane_tags && (c->lane_count < 1 || c->lane_count > 16 || c->lane_index >= c->lane_count))
        return refuse(msg, msglen, "lane tags name lane %u of %u lanes: use a lane count of 1 "
                      "to 16 and a lane number below it", c->lane_index, c->lane_count);
    if (c->rx_hold_frames > 4096)
        return refuse(msg, msglen, "a hold of %u frames for alignment: use 0 to 4096 (%u by "
                      "default)", c->rx_hold_frames, RIFL_LANE_RX_HOLD);
    return RIFL_OK;
}

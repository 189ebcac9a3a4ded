/* One lane over a UDP or raw-Ethernet PHY in real time (rifl/udplink.h; docs/udp.md, "The
 * driver"): round-trip probes and K from them, slots paced at the lane rate
 * and held within a window of the peer's, and the idle rule.  Time comes in
 * as `now_ns`; only rifl_udplink_service reads the clock and waits. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rifl/rng.h"
#include "rifl/udplink.h"

#define MAX_SAMPLES 256
#define LAG_NS 1000000u       /* behind the schedule by more: give it up */
#define SHORT_WAIT_NS 50000u  /* waits shorter than this are not slept */
#define OWN_EPOCHS 8          /* this end's epochs remembered: a new one differs */
#define RX_EVERY_NS 4000.0    /* the socket is read about this often while slots run */

struct rifl_udplink {
    rifl_udplink_config cfg;
    rifl_phy *phy;
    rifl_lane *lane;
    rifl_udplink_sizing sz;
    rifl_udplink_stats st;
    bool running, idle;
    /* probing */
    bool probe_started, published;
    uint64_t probe_start_ns, probe_next_ns;
    uint64_t adopted_at_start;    /* peer_epochs_adopted when this start-up began */
    uint64_t other_width_at_start; /* rx_other_width then */
    uint64_t first_answer_ns;     /* when the first answer came; 0: none yet */
    uint64_t samples[MAX_SAMPLES];
    unsigned nsamples;
    /* slots */
    uint64_t slot;                /* the next slot to run */
    uint64_t base_slot, base_ns;  /* slot base_slot + k is due at base_ns + k x slot_ns */
    uint64_t last_busy;           /* the last slot with activity */
    uint64_t next_keepalive_ns;
    uint64_t next_announce_ns;    /* while the window is shut */
    bool shut;                    /* the window was shut at the last step */
    uint64_t activity;            /* the lane counters that mean activity, summed */
    uint64_t recovery;            /* those that mean a recovery, summed */
    uint64_t worth_sent, worth_at;/* frames worth a replay sent, and the new
                                     frames sent by the last of them */
    rifl_phy_frame *in;
    unsigned in_max;
    uint32_t own[OWN_EPOCHS];     /* this end's epochs so far, a ring */
    unsigned n_own;
    /* capture */
    rifl_capture *cap;
    uint64_t cap_max, cap_t0, now_ns;
    uint64_t cap_seq[2];          /* frames sent, and handed to the lane */
    char peer[160];               /* the peer, for messages (name_peer) */
};

void rifl_udplink_defaults(rifl_udplink_config *cfg)
{
    if (!cfg)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->lane = rifl_lane_default_config;
    cfg->lane.fid_bits = 0;
    cfg->lane.tx_queue_frames = 4096;
    cfg->udp.frame_bits = 2048;
    cfg->udp.fd = -1;
    cfg->udp.frames_per_datagram = 16;
    cfg->udp.gso_datagrams = 8;
    cfg->udp.epoch = 0; /* drawn at rifl_udplink_create */
    cfg->rate_gbps = 1.0;
}

static unsigned fpd_of(const rifl_udplink_config *c)
{
    return c->udp.frames_per_datagram ? c->udp.frames_per_datagram : 16;
}

static unsigned flush_of(const rifl_udplink_config *c)
{
    return c->udp.flush_slots ? c->udp.flush_slots : fpd_of(c);
}

/* The peer, for messages: its UDP address, or its MAC address on an
 * interface (raw Ethernet).  Written at rifl_udplink_create, while the
 * strings of the settings are the caller's to keep: they need not outlive
 * the call. */
static void name_peer(rifl_udplink *l, const rifl_udplink_config *c)
{
    if (c->eth_ifname)
        snprintf(l->peer, sizeof l->peer, "%s on %s", c->eth_peer_mac ? c->eth_peer_mac : "?",
                 c->eth_ifname);
    else
        snprintf(l->peer, sizeof l->peer, "%s", c->udp.remote ? c->udp.remote : "(socket given)");
}

/* What the probes carry for the driver: its round-trip estimate (bits 0 to
 * 47, ns) and a digest of the settings K is sized from besides the round
 * trip (bits 48 to 63), so that ends set up differently are refused rather
 * than choosing different K and never agreeing. */
#define RTT_BITS 48
#define RTT_MASK ((UINT64_C(1) << RTT_BITS) - 1)

static uint64_t sizing_digest(const rifl_udplink_config *c)
{
    uint64_t rate;
    memcpy(&rate, &c->rate_gbps, sizeof rate);
    const uint64_t v[4] = { rate, fpd_of(c), flush_of(c), c->lane.fid_bits };
    uint64_t h = UINT64_C(1469598103934665603); /* FNV-1a over the bytes */
    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 8; b++) {
            h ^= (v[i] >> (8 * b)) & 0xFF;
            h *= UINT64_C(1099511628211);
        }
    return (h ^ h >> 16 ^ h >> 32 ^ h >> 48) & 0xFFFF;
}

static uint64_t probe_value(const rifl_udplink_config *c, uint64_t rtt_ns)
{
    if (rtt_ns > RTT_MASK)
        rtt_ns = RTT_MASK;
    return sizing_digest(c) << RTT_BITS | (rtt_ns ? rtt_ns : 1);
}

int rifl_udplink_size(const rifl_udplink_config *cfg, uint64_t rtt_ns, rifl_udplink_sizing *out,
                      char *msg, size_t msglen)
{
    if (!cfg || !out)
        return rifl_null_arg(msg, msglen, "rifl_udplink_size", cfg ? "out" : "cfg");
    if (!(cfg->rate_gbps > 0) || !(cfg->rate_gbps <= 1e4)) {
        rifl_msg(msg, msglen, "lane rate %g Gbit/s is out of range; give a rate above 0 and at "
                 "most 10000 Gbit/s", cfg->rate_gbps);
        return RIFL_ERR_INVALID_ARG;
    }
    unsigned F = cfg->udp.frame_bits, fpd = fpd_of(cfg), flush = flush_of(cfg);
    if (rifl_frame_width_check(F) != RIFL_OK) {
        rifl_msg(msg, msglen, "frame width %u is not supported; use 64, 128, 256, 512, 1024 "
                 "or 2048", F);
        return RIFL_ERR_CONFIG;
    }
    rifl_udplink_sizing s;
    memset(&s, 0, sizeof s);
    s.slot_ns = F / cfg->rate_gbps;
    s.rtt_ns = rtt_ns;
    double rs = ceil((double)rtt_ns / s.slot_ns);
    /* the largest round trip 11 ID bits cover: 2 x window + 2 x fpd + 8
     * <= 2^11 - 32, window = rtt + 2 x flush + 16 */
    double budget = (2048.0 - 32 - 8 - 2.0 * fpd) / 2 - 2.0 * flush - 16;
    if (rs > budget) {
        double fit = floor(budget * F / (double)rtt_ns * 1000) / 1000;
        if (budget >= 1 && fit < 0.001)
            rifl_msg(msg, msglen, "a round trip of %.1f us is %.0f slots of %u bits at %g "
                     "Gbit/s, more than the %.0f that 11 frame-ID bits (the most a link over "
                     "UDP or raw Ethernet takes) cover with %u frames per datagram, and no "
                     "lane rate from 0.001 Gbit/s up fits it; use wider frames, fewer frames "
                     "per datagram, or a path with a shorter round trip",
                     rtt_ns / 1e3, rs, F, cfg->rate_gbps, budget, fpd);
        else if (budget < 1)
            rifl_msg(msg, msglen, "%u frames per datagram, sent after at most %u slots, take "
                     "more of the %u-slot reach of 11 frame-ID bits than a round trip leaves; "
                     "use fewer frames per datagram", fpd, flush, 2048 - 32);
        else
            rifl_msg(msg, msglen, "a round trip of %.1f us is %.0f slots of %u bits at %g "
                     "Gbit/s, more than the %.0f that 11 frame-ID bits (the most a link over "
                     "UDP or raw Ethernet takes) cover with %u frames per datagram; lower the "
                     "lane rate to %.3g Gbit/s or "
                     "less, use fewer frames per datagram, or a path with a shorter round trip",
                     rtt_ns / 1e3, rs, F, cfg->rate_gbps, budget, fpd, fit);
        return RIFL_ERR_CONFIG;
    }
    s.rtt_slots = (unsigned)rs;
    s.window = s.rtt_slots + 2 * flush + 16;
    s.hold_slots = s.window;
    s.pipeline_frames = 2 * s.window + 2 * fpd + 8;
    rifl_link_params link = { cfg->rate_gbps, 0, 5.0, 0 };
    s.fid_bits = rifl_lane_min_fid_bits(&link, F, s.pipeline_frames);
    if (cfg->lane.fid_bits) {
        if (cfg->lane.fid_bits < s.fid_bits || cfg->lane.fid_bits > 11) {
            rifl_msg(msg, msglen, "%u frame-ID bits do not fit this link: its round trip of "
                     "%u slots needs %u to 11 over UDP or raw Ethernet; give fid_bits 0 to size "
                     "it from the round trip", cfg->lane.fid_bits, s.pipeline_frames, s.fid_bits);
            return RIFL_ERR_CONFIG;
        }
        s.fid_bits = cfg->lane.fid_bits;
    }
    *out = s;
    return RIFL_OK;
}

int rifl_udplink_create(const rifl_udplink_config *cfg, rifl_udplink **out, char *msg,
                        size_t msglen)
{
    if (!cfg || !out)
        return rifl_null_arg(msg, msglen, "rifl_udplink_create", cfg ? "out" : "cfg");
    *out = NULL;
    rifl_udplink_sizing s;
    /* without a round trip (probed at start-up) the settings are checked for
     * the shortest one: what no round trip fits is refused now */
    int rc = rifl_udplink_size(cfg, cfg->rtt_ns ? cfg->rtt_ns : 1, &s, msg, msglen);
    if (rc == RIFL_OK && cfg->probes > MAX_SAMPLES) {
        rifl_msg(msg, msglen, "%u probes are too many; use at most %u", cfg->probes,
                 MAX_SAMPLES);
        rc = RIFL_ERR_CONFIG;
    }
    /* the PHY's receive queue and the frames it hands out (F/8 bytes each),
     * and this driver's list of the frames a read hands over (l->in): one
     * PHY's memory, held to RIFL_PHY_MAX_BYTES as the PHY holds its own
     * part (a queue beyond 2^24 frames the PHY refuses, with its message) */
    uint64_t rx = cfg->udp.rx_frames ? cfg->udp.rx_frames : 4096;
    uint64_t rx_bytes = rx * (2 * (uint64_t)(cfg->udp.frame_bits / 8) + sizeof(rifl_phy_frame));
    if (rc == RIFL_OK && rx <= (1u << 24) && rx_bytes > RIFL_PHY_MAX_BYTES) {
        rifl_msg(msg, msglen, "a receive queue of %llu frames of %u bits takes %llu MiB (the "
                 "queue and the frames handed out, %u bytes a frame each, and the driver's "
                 "list of them, %zu bytes a frame), more than the %llu MiB a PHY may take; "
                 "lower rx_frames or frame_bits",
                 (unsigned long long)rx, cfg->udp.frame_bits,
                 (unsigned long long)(rx_bytes >> 20), cfg->udp.frame_bits / 8,
                 sizeof(rifl_phy_frame), (unsigned long long)(RIFL_PHY_MAX_BYTES >> 20));
        rc = RIFL_ERR_CONFIG;
    }
    if (rc != RIFL_OK) {
        if (cfg->udp.fd >= 0)
            close(cfg->udp.fd); /* given to the link, which would have closed it */
        return rc == RIFL_ERR_INVALID_ARG ? RIFL_ERR_CONFIG : rc;
    }
    rifl_udplink *l = calloc(1, sizeof *l);
    if (!l) {
        if (cfg->udp.fd >= 0)
            close(cfg->udp.fd);
        return RIFL_ERR_NOMEM;
    }
    l->cfg = *cfg;
    rifl_udplink_config *c = &l->cfg;
    name_peer(l, c);
    if (!c->udp.epoch) {
        /* a new epoch for every start of this end, so that the peer tells
         * a restart from the lane it knew (never 0) */
        uint64_t x = rifl_udplink_clock_ns() ^ (uint64_t)getpid() << 32 ^ (uintptr_t)l;
        c->udp.epoch = (uint32_t)rifl_splitmix64(&x) | 1u;
    }
    if (!c->probes)
        c->probes = 16;
    if (!c->probe_interval_ns)
        c->probe_interval_ns = 200000;
    if (!c->probe_timeout_ns)
        c->probe_timeout_ns = 5000000000ull;
    if (!c->keepalive_ns)
        c->keepalive_ns = 1000000;
    if (!c->batch_slots)
        c->batch_slots = 64;
    c->udp.rx_frames = c->udp.rx_frames ? c->udp.rx_frames : 4096;
    if (!c->udp.rx_every_slots) {
        /* one read of the socket per slot costs a system call per slot,
         * most of them finding nothing when slots are short: read about
         * every 4 us instead (every slot at 1 Gbit/s and 2048-bit frames,
         * every 5th at 3 Gbit/s), at most every 16th */
        double every = RX_EVERY_NS / ((double)c->udp.frame_bits / c->rate_gbps);
        c->udp.rx_every_slots = every < 1 ? 1 : every > 16 ? 16 : (unsigned)every;
    }
    if (c->eth_ifname && c->udp.fd >= 0) {
        close(c->udp.fd);
        c->udp.fd = -1;
        free(l);
        rifl_msg(msg, msglen, "a UDP socket was given with raw Ethernet (eth_ifname): give "
                 "udp.fd -1 there");
        return RIFL_ERR_CONFIG;
    }
    if (c->eth_ifname) {
        const rifl_phy_udp_config *u = &c->udp;
        rifl_phy_eth_config e = { .frame_bits = u->frame_bits, .ifname = c->eth_ifname,
                                  .peer_mac = c->eth_peer_mac,
                                  .frames_per_datagram = u->frames_per_datagram,
                                  .flush_slots = u->flush_slots, .epoch = u->epoch,
                                  .rx_frames = u->rx_frames, .rx_every_slots = u->rx_every_slots,
                                  .loss = u->loss, .dup = u->dup,
                                  .seed = u->seed, .ber = u->ber };
        rc = rifl_phy_eth_create(&e, &l->phy, msg, msglen);
    } else {
        rc = rifl_phy_udp_create(&c->udp, &l->phy, msg, msglen);
    }
    if (rc == RIFL_OK) {
        l->in_max = c->udp.rx_frames;
        l->in = calloc(l->in_max, sizeof *l->in);
        if (!l->in)
            rc = RIFL_ERR_NOMEM;
    }
    if (rc != RIFL_OK) {
        rifl_udplink_free(l);
        return rc;
    }
    l->own[l->n_own++] = c->udp.epoch;
    *out = l;
    return RIFL_OK;
}

void rifl_udplink_free(rifl_udplink *l)
{
    if (!l)
        return;
    rifl_lane_free(l->lane);
    rifl_phy_free(l->phy);
    free(l->in);
    free(l);
}

/* ---- start-up: the round trip ------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The round trip is known: size the link and make the lane. */
static int start(rifl_udplink *l, uint64_t rtt_ns, uint64_t now_ns, char *msg, size_t msglen)
{
    int rc = rifl_udplink_size(&l->cfg, rtt_ns, &l->sz, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    rifl_lane_config lc = l->cfg.lane;
    lc.frame_bits = l->cfg.udp.frame_bits;
    lc.fid_bits = l->sz.fid_bits;
    lc.link.lane_rate_gbps = l->cfg.rate_gbps;
    lc.link.cable_m = 0;
    lc.link.transceiver_ns = 0;
    lc.pipeline_frames = l->sz.pipeline_frames;
    rc = rifl_lane_create(&lc, &l->lane, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    rc = rifl_phy_udp_set_encoder(l->phy, rifl_lane_frame_bytes(lc.frame_bits),
                                  rifl_lane_phy_encode_batch, l->lane);
    if (rc != RIFL_OK) {
        rifl_msg(msg, msglen, "out of memory for the frames of a datagram");
        return rc;
    }
    /* a datagram's frames are scrambled in its batch too, unless a capture
     * wants each frame's bytes as it is sent */
    rifl_lane_defer_scrambler(l->lane, !l->cap);
    l->running = true;
    l->base_slot = 0;
    l->base_ns = now_ns;
    return RIFL_OK;
}

static int probe_step(rifl_udplink *l, uint64_t now_ns, uint64_t *wake_ns, char *msg,
                      size_t msglen)
{
    if (!l->probe_started) {
        /* a start-up begins: at the first step, or after a joint reset
         * (not when the peer's new epoch is adopted while probing: the
         * timeout counts from here whatever the peer does) */
        l->probe_started = true;
        l->probe_start_ns = l->probe_next_ns = now_ns;
        l->adopted_at_start = l->st.peer_epochs_adopted;
        l->other_width_at_start = rifl_phy_udp_get_stats(l->phy)->rx_other_width;
    }
    rifl_phy_udp_poll(l->phy);
    uint64_t token;
    /* only probes sent after the first answer came are timed: the ones
     * sent before it may have waited in the peer's socket until the peer
     * started (a process starting, a TAP device being made), and their
     * round trips would be the peer's start-up time */
    while (rifl_phy_udp_probe_answer(l->phy, &token)) {
        if (!l->first_answer_ns)
            l->first_answer_ns = now_ns ? now_ns : 1;
        else if (token >= l->first_answer_ns && token <= now_ns &&
                 l->nsamples < MAX_SAMPLES && !l->cfg.rtt_ns)
            l->samples[l->nsamples++] = now_ns - token;
    }
    if (!l->published && l->cfg.rtt_ns) {
        /* a round trip given: nothing to measure, but the probes still
         * carry it, so that both ends start together (the handshake) */
        l->st.rtt_local_ns = l->cfg.rtt_ns;
        rifl_phy_udp_set_probe_value(l->phy, probe_value(&l->cfg, l->cfg.rtt_ns));
        l->published = true;
    }
    if (!l->published && l->nsamples >= l->cfg.probes) {
        uint64_t sorted[MAX_SAMPLES];
        memcpy(sorted, l->samples, l->nsamples * sizeof sorted[0]);
        qsort(sorted, l->nsamples, sizeof sorted[0], cmp_u64);
        /* twice the shortest, at least 1 ns (0 means "none yet" to the
         * peer).  The shortest is the path's own round trip; the longer
         * ones are mostly the scheduler's.  A round trip longer than the
         * estimate costs speed (the window shuts), never data, while an
         * estimate a busy machine stretched would make K, and so every
         * replay cycle, longer for the life of the link: on a lossy path
         * replay cycles longer than the time between losses never end.
         * An estimate no K covers may be a busy machine's too: probing
         * goes on, up to four times the samples, before it is published
         * (and the link refused). */
        uint64_t r = 2 * sorted[0];
        unsigned most = 4 * l->cfg.probes < MAX_SAMPLES ? 4 * l->cfg.probes : MAX_SAMPLES;
        rifl_udplink_sizing fit;
        if (l->nsamples >= most || rifl_udplink_size(&l->cfg, r, &fit, NULL, 0) == RIFL_OK) {
            l->st.probe_samples = l->nsamples;
            l->st.rtt_min_ns = sorted[0];
            l->st.rtt_median_ns = sorted[l->nsamples / 2];
            l->st.rtt_max_ns = sorted[l->nsamples - 1];
            l->st.rtt_local_ns = r ? r : 1;
            rifl_phy_udp_set_probe_value(l->phy, probe_value(&l->cfg, l->st.rtt_local_ns));
            l->published = true;
        }
    }
    const rifl_phy_udp_stats *us = rifl_phy_udp_get_stats(l->phy);
    if (us->peer_frame_bits) {
        rifl_msg(msg, msglen, "the peer %s uses %u-bit frames and this end %u-bit ones: a "
                 "link needs the same frame width at both ends (frame_bits, --frame-bits)",
                 l->peer, us->peer_frame_bits,
                 l->cfg.udp.frame_bits);
        return RIFL_ERR_CONFIG;
    }
    uint64_t peer = us->peer_probe_value & RTT_MASK;
    if (us->peer_probe_value && us->peer_probe_value >> RTT_BITS != sizing_digest(&l->cfg)) {
        /* the peer learns of the mismatch from this end's value too, so
         * that both ends stop and say why (a few probes: one may be lost) */
        if (!l->published)
            rifl_phy_udp_set_probe_value(l->phy, probe_value(&l->cfg, 0));
        for (int k = 0; k < 3; k++)
            rifl_phy_udp_probe(l->phy, now_ns);
        char kb[16] = "automatic";
        if (l->cfg.lane.fid_bits)
            snprintf(kb, sizeof kb, "%u", l->cfg.lane.fid_bits);
        rifl_msg(msg, msglen, "the peer %s sizes its lane from other settings than this end "
                 "(%g Gbit/s, %u frames per datagram, frame-ID bits %s): the two would "
                 "choose different K and never agree; give both ends the same lane rate, "
                 "frames per datagram and frame-ID bits (--rate-gbps, --frames-per-datagram)",
                 l->peer, l->cfg.rate_gbps, fpd_of(&l->cfg), kb);
        return RIFL_ERR_CONFIG;
    }
    if (l->published && peer) {
        l->st.rtt_peer_ns = peer;
        /* one more probe, so that the peer hears our value even if it
         * missed the answers that carried it */
        rifl_phy_udp_probe(l->phy, now_ns);
        uint64_t rtt = peer > l->st.rtt_local_ns ? peer : l->st.rtt_local_ns;
        return start(l, rtt, now_ns, msg, msglen);
    }
    uint64_t restarts = l->st.peer_epochs_adopted - l->adopted_at_start;
    if (now_ns - l->probe_start_ns > l->cfg.probe_timeout_ns && restarts) {
        rifl_msg(msg, msglen, "the peer %s restarted %llu time%s (a new epoch each time) while "
                 "this end probed, and the start-up did not end in %.1f s: %u round trips "
                 "measured since its last start (%u needed) and %s; check that one program, "
                 "started once, runs at that address and that it does not stop on an error",
                 l->peer, (unsigned long long)restarts, restarts == 1 ? "" : "s",
                 l->cfg.probe_timeout_ns / 1e9, l->nsamples, l->cfg.probes,
                 peer ? "its estimate received" : "no estimate from it");
        return RIFL_ERR_IO;
    }
    uint64_t other_width = us->rx_other_width - l->other_width_at_start;
    if (now_ns - l->probe_start_ns > l->cfg.probe_timeout_ns && other_width) {
        /* (of a start of the peer's this end had not adopted: the peer
         * itself stops with the width error) */
        rifl_msg(msg, msglen, "the peer %s did not answer with %u-bit frames in %.1f s, but "
                 "%llu datagram%s of another frame width came from a new start of it: give "
                 "both ends the same frame width (frame_bits, --frame-bits)", l->peer,
                 l->cfg.udp.frame_bits, l->cfg.probe_timeout_ns / 1e9,
                 (unsigned long long)other_width, other_width == 1 ? "" : "s");
        return RIFL_ERR_CONFIG;
    }
    if (now_ns - l->probe_start_ns > l->cfg.probe_timeout_ns) {
        rifl_msg(msg, msglen, "the peer %s did not answer: %u round trips measured (%u "
                 "needed) and %s in %.1f s; start the other end, and check its address and "
                 "that %s reaches it", l->peer,
                 l->nsamples, l->cfg.probes,
                 peer ? "its estimate received" : "no estimate from it",
                 l->cfg.probe_timeout_ns / 1e9,
                 l->cfg.eth_ifname ? "Ethernet of type 0x88B5" : "UDP");
        return RIFL_ERR_IO;
    }
    if (now_ns >= l->probe_next_ns) {
        rifl_phy_udp_probe(l->phy, now_ns);
        l->probe_next_ns = now_ns + l->cfg.probe_interval_ns;
    }
    *wake_ns = l->probe_next_ns;
    return RIFL_OK;
}

/* ---- slots ------------------------------------------------------------------ */

/* Frames the lane sent new that a replay must bring back (data,
 * upper-layer and flow-control frames: all but fillers). */
static uint64_t sent_worth(const rifl_lane_stats *s)
{
    return s->tx_frames[RIFL_KIND_DATA] + s->tx_frames[RIFL_KIND_EXT] +
           s->tx_frames[RIFL_KIND_FC_ON] + s->tx_frames[RIFL_KIND_FC_OFF];
}

/* The lane counters whose change means the link carries something for its
 * users: frames worth a replay sent, data and upper-layer frames
 * delivered, flow control received, start-up's PAUSE. */
static uint64_t user_activity(const rifl_lane_stats *s)
{
    return sent_worth(s) + s->tx_pause + s->rx_delivered[RIFL_KIND_DATA] +
           s->rx_delivered[RIFL_KIND_EXT] + s->fc_on_received + s->fc_off_received;
}

/* Those whose change means a recovery from errors: replayed frames, the
 * IDLE slots after an error, RETRANSMIT, control frames and replayed data
 * received, frames failing verification. */
static uint64_t recovery_activity(const rifl_lane_stats *s)
{
    return s->tx_replayed + s->tx_idle + s->tx_retransmit + s->rx_skipped + s->rx_control +
           s->rx_verify_fail;
}

/* Whether the lane has something to do besides sending fillers.  For its
 * users: data queued, sent or delivered, flow control, start-up (its first
 * 2^K slots and 2^K new fillers, PAUSE on either side), which must run at
 * the lane rate, or a packet queued now would wait for slots paced by the
 * peer's keepalives.  A recovery from errors (a replay either way, the
 * error wait, RETRANSMIT) counts only while the lane's own replay buffer
 * holds a frame worth bringing back: one that moves fillers alone runs in
 * idle slots.  Otherwise a lossy path would keep an idle link at the lane
 * rate for good, each recovery's datagrams losing some and starting the
 * next.  A peer whose replay does carry data is busy itself and this end
 * keeps up with it (peer_waiting), and data queued here is busy at once. */
static bool busy(rifl_udplink *l)
{
    const rifl_lane_stats *s = rifl_lane_get_stats(l->lane);
    rifl_lane_flags f = rifl_lane_get_flags(l->lane);
    rifl_tx_state state = rifl_lane_state(l->lane);
    uint64_t worth = sent_worth(s);
    uint64_t all = worth + s->tx_frames[RIFL_KIND_FILLER];
    if (worth != l->worth_sent) {
        l->worth_sent = worth;
        l->worth_at = all;
    }
    uint64_t u = user_activity(s), r = recovery_activity(s);
    bool user_changed = u != l->activity;
    bool recovery_changed = r != l->recovery;
    l->activity = u;
    l->recovery = r;
    unsigned nfid = rifl_lane_replay_frames(l->lane);
    bool starting = s->tx_frames[RIFL_KIND_FILLER] < nfid || state == RIFL_TX_INIT ||
                    state == RIFL_TX_SEND_PAUSE || state == RIFL_TX_PAUSE || f.peer_pause;
    if (user_changed || starting || rifl_lane_tx_backlog(l->lane) > 0 || f.peer_fc_on ||
        f.local_fc_on)
        return true;
    bool replay_worth = all - l->worth_at < nfid;
    return replay_worth && (recovery_changed || !rifl_lane_tx_ready(l->lane) ||
                            state != RIFL_TX_NORMAL || f.replay_active || f.frame_error ||
                            f.peer_retransmit);
}

/* One frame into the capture: direction 0 sent, 1 received. */
static void capture(rifl_udplink *l, unsigned dir, const uint8_t *wire)
{
    uint64_t seq = l->cap_seq[dir]++;
    if (l->cap_max && l->st.captured_frames >= l->cap_max) {
        l->st.capture_skipped++;
        return;
    }
    if (!l->st.captured_frames && !l->st.capture_skipped)
        l->cap_t0 = l->now_ns;
    const rifl_phy_udp_stats *u = rifl_phy_udp_get_stats(l->phy);
    if (rifl_capture_frame_epoch(l->cap, dir, dir ? u->peer_epoch : u->epoch, seq,
                                 l->now_ns - l->cap_t0, wire) == RIFL_OK)
        l->st.captured_frames++;
    else
        l->st.capture_skipped++;
}

static void run_slot(rifl_udplink *l)
{
    unsigned n;
    if (l->cap) {
        /* the wire bytes now, for the capture */
        uint8_t *w = rifl_phy_tx_buffer(l->phy, RIFL_PHY_WIRE);
        rifl_lane_tx(l->lane, l->slot, w);
        n = rifl_phy_exchange(l->phy, l->slot, RIFL_PHY_WIRE, l->in, l->in_max);
        capture(l, 0, w); /* as sent: after the bit errors injected, still in the datagram */
    } else {
        /* by content: the PHY builds a datagram's frames in one batch */
        rifl_lane_tx_frame(l->lane, l->slot, rifl_phy_tx_buffer(l->phy, RIFL_PHY_CONTENT));
        n = rifl_phy_exchange(l->phy, l->slot, RIFL_PHY_CONTENT, l->in, l->in_max);
    }
    for (unsigned k = 0; l->cap && k < n; k++)
        capture(l, 1, l->in[k].data);
    /* the frames come end to end (rifl_phy_udp_create): one batch */
    rifl_lane_rx_batch(l->lane, l->slot, n ? l->in[0].data : NULL, n);
    if (busy(l))
        l->last_busy = l->slot;
    l->slot++;
    l->st.slots++;
}

/* Whether a datagram showed a new epoch of the peer's. */
static bool peer_new(const rifl_udplink *l)
{
    return rifl_phy_udp_get_stats(l->phy)->peer_epoch_new != 0;
}

/* Whether the window lets this end run its next slot: no more than
 * `window` slots beyond the last frame of the peer's taken. */
static bool window_open(rifl_udplink *l)
{
    return l->slot < rifl_phy_udp_get_stats(l->phy)->rx_next + l->sz.window;
}

/* The window is shut: this end waits for the peer's frames.  Everything
 * it sent goes out (the part-filled datagram), and once per keepalive
 * interval a sequence announcement tells the peer how far it got: were
 * its last datagrams lost, and the peer waiting for them in turn, neither
 * end would send again. */
static void window_shut(rifl_udplink *l, uint64_t now_ns)
{
    if (!l->shut) {
        l->shut = true;
        rifl_phy_udp_flush(l->phy);
        l->next_announce_ns = now_ns + l->cfg.keepalive_ns;
        l->st.window_stalls++;
    } else if (now_ns >= l->next_announce_ns) {
        rifl_phy_udp_announce(l->phy);
        l->next_announce_ns = now_ns + l->cfg.keepalive_ns;
    }
}

static uint64_t slot_time(const rifl_udplink *l, uint64_t slot)
{
    return l->base_ns + (uint64_t)((double)(slot - l->base_slot) * l->sz.slot_ns);
}

static void go_active(rifl_udplink *l, uint64_t now_ns)
{
    l->idle = false;
    l->base_slot = l->slot;
    l->base_ns = now_ns;
}

/* Whether the peer may be waiting for this end's slots: it has run so far
 * ahead of the frames it can have of this end's that its window is shut,
 * or nearly (its last datagram's worth).  An idle end runs a slot only per
 * keepalive or arrival, so a peer that became busy first would otherwise
 * wait up to a keepalive interval for each of them. */
static bool peer_waiting(rifl_udplink *l)
{
    uint64_t peer = rifl_phy_udp_get_stats(l->phy)->rx_next;
    return peer + flush_of(&l->cfg) >= l->slot + l->sz.window;
}

/* Whether the peer's slots that reached this end are more than this end
 * has run.  An end going idle first catches up with them: stopping as soon
 * as the peer waits no more would leave the two a window apart, and over a
 * lossy path (each lost datagram one slot fewer run at the other end) every
 * step further would wake it again. */
static bool peer_ahead(rifl_udplink *l)
{
    return rifl_phy_udp_get_stats(l->phy)->rx_next > l->slot;
}

static void idle_step(rifl_udplink *l, uint64_t now_ns, uint64_t *wake_ns)
{
    uint64_t before = rifl_phy_udp_get_stats(l->phy)->rx_next;
    rifl_phy_udp_poll(l->phy);
    bool arrived = rifl_phy_udp_get_stats(l->phy)->rx_next != before;
    bool due = now_ns >= l->next_keepalive_ns;
    bool open = window_open(l);
    if (!open && (arrived || due))
        window_shut(l, now_ns);
    if (open)
        l->shut = false;
    if ((arrived || due) && open) {
        /* a slot for the frames that came (not flushed: it goes with the
         * next keepalive, so that keepalives never answer each other), or
         * the keepalive, flushed */
        run_slot(l);
        l->st.keepalive_slots++;
        if (due) {
            rifl_phy_udp_flush(l->phy);
            l->next_keepalive_ns = now_ns + l->cfg.keepalive_ns;
        }
    } else if (due) {
        l->next_keepalive_ns = now_ns + l->cfg.keepalive_ns;
    }
    /* a slot with activity (its last_busy is the slot just run), data to
     * send, or a peer waiting for this end's slots: back to the lane rate */
    bool busy_now = l->last_busy + 1 == l->slot || rifl_lane_tx_backlog(l->lane) > 0;
    if (busy_now || peer_waiting(l)) {
        /* the hold period counts from here after activity; for a waiting
         * peer the end runs only until it has caught up (active_step): a
         * round trip of slots after it would put this end as far ahead,
         * and the two would wake each other */
        go_active(l, now_ns);
        if (busy_now)
            l->last_busy = l->slot;
        else
            l->st.peer_wakes++;
        *wake_ns = now_ns;
        return;
    }
    *wake_ns = l->next_keepalive_ns;
}

static void active_step(rifl_udplink *l, uint64_t now_ns, uint64_t *wake_ns)
{
    double ahead = now_ns > l->base_ns ? (double)(now_ns - l->base_ns) / l->sz.slot_ns : 0;
    uint64_t due = l->base_slot + (uint64_t)ahead + 1; /* slots [slot, due) are due */
    uint64_t lag = (uint64_t)(LAG_NS / l->sz.slot_ns) + l->cfg.batch_slots;
    if (due > l->slot + lag) {
        l->st.schedule_resets++;
        l->base_slot = l->slot;
        l->base_ns = now_ns;
        due = l->slot + 1;
    }
    bool stalled = false;
    for (unsigned n = 0; l->slot < due && n < l->cfg.batch_slots && !peer_new(l); n++) {
        if (!window_open(l)) {
            rifl_phy_udp_poll(l->phy);
            if (!window_open(l)) {
                stalled = true;
                break;
            }
        }
        l->shut = false;
        run_slot(l);
    }
    if (stalled) {
        window_shut(l, now_ns);
        /* wait for the peer's frames (the socket wakes the caller) */
        *wake_ns = l->next_announce_ns;
        /* nothing moves while the window is shut: what was due is given
         * up, not made up for in a burst afterwards */
        l->base_slot = l->slot;
        l->base_ns = now_ns;
        return;
    }
    if (busy(l))
        l->last_busy = l->slot ? l->slot - 1 : 0;
    if (l->slot >= l->last_busy + 1 + l->sz.hold_slots && !peer_ahead(l)) {
        /* the idle rule: a round trip of slots after the last activity,
         * then keepalives */
        rifl_phy_udp_flush(l->phy);
        l->idle = true;
        l->st.idle_periods++;
        l->next_keepalive_ns = now_ns + l->cfg.keepalive_ns;
        *wake_ns = l->next_keepalive_ns;
        return;
    }
    *wake_ns = l->slot < due ? now_ns : slot_time(l, l->slot);
}

/* ---- a restart of the peer: the joint reset -------------------------------- */

/* This end's next epoch: drawn by splitmix64 from the current one and the
 * number of resets, not 0 and none this end had before. */
static uint32_t next_epoch(rifl_udplink *l)
{
    uint32_t cur = rifl_phy_udp_get_stats(l->phy)->epoch;
    uint64_t x = (uint64_t)cur << 32 ^ l->st.resets;
    for (;;) {
        uint32_t e = (uint32_t)rifl_splitmix64(&x) | 1u;
        bool used = false;
        for (unsigned i = 0; i < l->n_own && i < OWN_EPOCHS; i++)
            used |= l->own[i] == e;
        if (!used) {
            l->own[l->n_own++ % OWN_EPOCHS] = e;
            return e;
        }
    }
}

/* The peer restarted (a datagram of an epoch it never had came).  Its old
 * lane is gone, so this end's must go too, never one side alone (a lane
 * that survives its peer's reset keeps its frame IDs and replay buffer,
 * and the streams are misread or duplicated: rifl-multilane.md 4.4).  A
 * running end drops its lane (the frames queued to send, and those
 * received and not read, are counted), takes a new epoch, so that the
 * peer can tell its new datagrams from the old ones still in flight, and
 * probes again; both ends then start new lanes together, exactly as at
 * first, the probe timeout counted from the reset.  An end still probing
 * only adopts the peer's new epoch and probes again at once: it has no
 * lane, and sent no frames, in its own epoch.  Its start-up goes on from
 * when it began, so that a peer restarting again and again cannot put the
 * probe timeout off for ever. */
static void rejoin(rifl_udplink *l)
{
    uint32_t epoch = 0;
    if (l->running) {
        l->st.resets++;
        l->st.reset_tx_frames += rifl_lane_tx_backlog(l->lane);
        l->st.reset_rx_frames += rifl_lane_rx_backlog(l->lane);
        rifl_lane_free(l->lane);
        l->lane = NULL;
        l->running = false;
        l->idle = false;
        epoch = next_epoch(l);
        l->probe_started = false;
    } else {
        l->st.peer_epochs_adopted++;
        l->probe_next_ns = 0; /* a probe at the next step */
    }
    rifl_phy_udp_rejoin(l->phy, epoch);
    l->published = false;
    l->first_answer_ns = 0;
    l->nsamples = 0;
    l->slot = 0;
    l->last_busy = 0;
    l->shut = false;
    l->activity = l->recovery = l->worth_sent = l->worth_at = 0;
    l->cap_seq[0] = l->cap_seq[1] = 0;
}

int rifl_udplink_step(rifl_udplink *l, uint64_t now_ns, uint64_t *wake_ns, char *msg,
                      size_t msglen)
{
    if (!l || !wake_ns)
        return rifl_null_arg(msg, msglen, "rifl_udplink_step", l ? "wake_ns" : "link");
    *wake_ns = now_ns;
    l->now_ns = now_ns;
    if (peer_new(l))
        rejoin(l);
    int rc = RIFL_OK;
    if (!l->running)
        rc = probe_step(l, now_ns, wake_ns, msg, msglen);
    else if (l->idle)
        idle_step(l, now_ns, wake_ns);
    else
        active_step(l, now_ns, wake_ns);
    if (rc == RIFL_OK && peer_new(l)) {
        rejoin(l);
        *wake_ns = now_ns;
    }
    /* the datagrams of this step's slots go out together */
    rifl_phy_udp_push(l->phy);
    return rc;
}

uint64_t rifl_udplink_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int rifl_udplink_service(rifl_udplink *l, uint64_t max_wait_ns, char *msg, size_t msglen)
{
    if (!l)
        return rifl_null_arg(msg, msglen, "rifl_udplink_service", "link");
    uint64_t now = rifl_udplink_clock_ns(), wake = now;
    int rc = rifl_udplink_step(l, now, &wake, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    uint64_t wait = wake > now ? wake - now : 0;
    if (wait > max_wait_ns)
        wait = max_wait_ns;
    if (wait < SHORT_WAIT_NS)
        return RIFL_OK;
    struct pollfd p = { .fd = rifl_phy_udp_fd(l->phy), .events = POLLIN };
    struct timespec ts = { (time_t)(wait / 1000000000u), (long)(wait % 1000000000u) };
    if (ppoll(&p, 1, &ts, NULL) < 0 && errno != EINTR) {
        rifl_msg(msg, msglen, "waiting for datagrams failed: %s", strerror(errno));
        return RIFL_ERR_IO;
    }
    return RIFL_OK;
}

void rifl_udplink_set_capture(rifl_udplink *l, rifl_capture *cap, uint64_t max_frames)
{
    if (!l)
        return;
    if (cap && l->lane) {
        /* frame by frame from now on: the frames waiting for the
         * datagram's batch go first */
        rifl_phy_udp_flush(l->phy);
        rifl_lane_defer_scrambler(l->lane, false);
    }
    l->cap = cap;
    l->cap_max = max_frames;
}

bool rifl_udplink_running(const rifl_udplink *l) { return l && l->running; }
bool rifl_udplink_idle(const rifl_udplink *l) { return l && l->running && l->idle; }
rifl_lane *rifl_udplink_lane(rifl_udplink *l) { return l ? l->lane : NULL; }
rifl_phy *rifl_udplink_phy(rifl_udplink *l) { return l ? l->phy : NULL; }
int rifl_udplink_fd(const rifl_udplink *l) { return l ? rifl_phy_udp_fd(l->phy) : -1; }

const rifl_udplink_sizing *rifl_udplink_get_sizing(const rifl_udplink *l)
{
    return l && l->running ? &l->sz : NULL;
}

const rifl_udplink_stats *rifl_udplink_get_stats(const rifl_udplink *l)
{
    return l ? &l->st : NULL;
}

#define C(f, m) RIFL_COUNTER(rifl_udplink_stats, f, m)
static const rifl_counter udplink_counters[] = {
    C(slots, "slots run"),
    C(keepalive_slots, "slots run while idle: keepalives, or for frames from the peer"),
    C(idle_periods, "times the link went idle"),
    C(peer_wakes, "times an idle end went back to the lane rate for a peer waiting on its window"),
    C(window_stalls, "times the window shut: this end waited for the peer's frames"),
    C(schedule_resets, "times this end fell more than 1 ms behind the lane rate"),
    C(probe_samples, "round trips measured at start-up"),
    C(rtt_min_ns, "shortest round trip measured, ns"),
    C(rtt_median_ns, "median round trip measured, ns"),
    C(rtt_max_ns, "longest round trip measured, ns"),
    C(rtt_local_ns, "this end's round-trip estimate (twice the shortest), ns"),
    C(rtt_peer_ns, "the peer's round-trip estimate, ns"),
    C(resets, "joint resets: the peer restarted while the lane ran, so this end dropped its "
      "lane, took a new epoch and probed again"),
    C(reset_tx_frames, "frames queued to send that the resets dropped"),
    C(reset_rx_frames, "frames received and not read that the resets dropped"),
    C(peer_epochs_adopted, "new epochs of the peer adopted while probing (no lane to drop)"),
    C(captured_frames, "frames written to the capture"),
    C(capture_skipped, "frames not captured: past the capture's limit, or its file failed"),
};
#undef C

RIFL_COUNTER_TABLE(rifl_udplink_counters, udplink_counters, rifl_udplink_stats)

/* Two lanes connected back to back by two simulated cables (PHYs). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/sim/pair.h"

#include "pair_priv.h"

unsigned rifl_link_delay_frames(const rifl_link_params *link, unsigned frame_bits)
{
    if (!link || !frame_bits)
        return 0;
    double ns = link->transceiver_ns + link->cable_m * link->ns_per_m;
    double frames = ns * link->lane_rate_gbps / (double)frame_bits;
    if (!(frames >= 0))
        return 0;
    /* (a delay beyond what an unsigned holds saturates: it is refused as
     * too long, not wrapped to a short one) */
    return frames >= (double)UINT_MAX ? UINT_MAX : (unsigned)llround(frames);
}

static size_t round16(size_t n) { return (n + 15) & ~(size_t)15; }

unsigned pair_delay(const rifl_pair_config *cfg)
{
    return cfg->delay_frames ? cfg->delay_frames
                             : rifl_link_delay_frames(&cfg->lane.link, cfg->lane.frame_bits);
}

uint64_t pair_flight_bytes(const rifl_pair_config *cfg)
{
    unsigned D = pair_delay(cfg), F = cfg->lane.frame_bits;
    if (rifl_frame_width_check(F) != RIFL_OK)
        return 0;
    /* bytes per slot of delay, each way: at most what the cable's delay
     * line takes (a serial line: its bits, doubled as it is rounded to a
     * power of two, and the room for slips), and the pair's own records of
     * the frames in flight */
    uint64_t fb = F / 8, per, fixed = 0;
    size_t content = cfg->encode_all ? 0 : rifl_lane_frame_bytes(F);
    if (cfg->serial) {
        per = 2 * fb;
        fixed = 2 * (2048 + 4 * fb + (uint64_t)(cfg->bit_offset[0] > cfg->bit_offset[1]
                                                     ? cfg->bit_offset[0]
                                                     : cfg->bit_offset[1]) / 8) + content;
    } else {
        size_t a = _Alignof(max_align_t);
        per = fb + (content + a - 1) / a * a + 1;
        if (!cfg->encode_all)
            per += sizeof(rifl_lane_ref) + sizeof(rifl_pair_inflight) + round16(content) +
                   round16(fb) + sizeof(rifl_lane_frame);
    }
    return 2 * (((uint64_t)D + 1) * per + fixed);
}

int pair_check(const rifl_pair_config *cfg, char *msg, size_t msglen)
{
    unsigned D = pair_delay(cfg), F = cfg->lane.frame_bits;
    if (D > PAIR_MAX_DELAY) {
        rifl_msg(msg, msglen, "a one-way delay of %u frames is too long; use at most %u "
                 "(delay_frames, or when it is 0 a shorter cable or transceiver delay)", D,
                 PAIR_MAX_DELAY);
        return RIFL_ERR_CONFIG;
    }
    if (rifl_frame_width_check(F) != RIFL_OK)
        return RIFL_OK; /* (the lanes' check names it) */
    uint64_t bytes = pair_flight_bytes(cfg);
    if (bytes > RIFL_PHY_MAX_BYTES) {
        rifl_msg(msg, msglen, "a pair of lanes with a one-way delay of %u frames of %u bits "
                 "takes %llu MiB for the frames in flight both ways, more than the %llu MiB "
                 "it may take; lower delay_frames (when it is 0: a shorter cable or "
                 "transceiver delay) or frame_bits", D, F, (unsigned long long)(bytes >> 20),
                 (unsigned long long)(RIFL_PHY_MAX_BYTES >> 20));
        return RIFL_ERR_CONFIG;
    }
    if (cfg->delay_frames && !cfg->lane.allow_unsafe_fid && cfg->lane.fid_bits < 31) {
        /* the lanes check their frame-ID width against the link's round
         * trip; a delay given here must pass the same rule, or frames
         * replayed after 2^K others pass verification as the wrong ones */
        double rtt = 2.0 * D + cfg->lane.pipeline_frames, need = 32.0 + rtt;
        if ((double)(1u << cfg->lane.fid_bits) < need) {
            unsigned k = rifl_lane_fid_bits_for_rtt(rtt);
            rifl_msg(msg, msglen, "a one-way delay of %u frames (delay_frames) is too long "
                     "for frame-ID width %u: the replay buffer of 2^K frames must cover 32 + "
                     "the round trip (2 x %u + %u pipeline frames) = %.0f; use fid_bits %u or "
                     "more, or a delay of at most %u frames", D, cfg->lane.fid_bits, D,
                     cfg->lane.pipeline_frames, need, k,
                     (1u << cfg->lane.fid_bits) > 32 + cfg->lane.pipeline_frames
                         ? ((1u << cfg->lane.fid_bits) - 32 - cfg->lane.pipeline_frames) / 2
                         : 0);
            return RIFL_ERR_CONFIG;
        }
    }
    return RIFL_OK;
}

void rifl_pair_free(rifl_pair *p)
{
    if (!p)
        return;
    for (int i = 0; i < 2; i++) {
        if (p->own_lanes)
            rifl_lane_free(p->lane[i]);
        rifl_phy_free(p->phy[i]);
        free(p->ref[i]);
        free(p->ref_frame[i]);
        free(p->ref_store[i]);
        free(p->idle_frames[i]);
    }
    free(p->idle_log);
    free(p);
}

int rifl_pair_create(const rifl_pair_config *cfg, rifl_pair **out, char *msg,
                     size_t msglen)
{
    if (!cfg || !out)
        return rifl_null_arg(msg, msglen, "rifl_pair_create", cfg ? "out" : "cfg");
    *out = NULL;
    int rc = pair_check(cfg, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    rifl_pair *p = calloc(1, sizeof *p);
    if (!p)
        return RIFL_ERR_NOMEM;
    p->encode_all = cfg->encode_all;
    p->sent_bytes = cfg->encode_all ? cfg->lane.frame_bits / 8
                                    : rifl_lane_frame_bytes(cfg->lane.frame_bits);
    p->delay_frames = pair_delay(cfg);
    p->serial = cfg->serial;
    if (cfg->serial) {
        rc = rifl_lane_serial_check(&cfg->lane, msg, msglen);
        if (rc != RIFL_OK) {
            free(p);
            return rc;
        }
    }
    if (!cfg->lanes[0] != !cfg->lanes[1]) {
        free(p);
        rifl_msg(msg, msglen, "rifl_pair_create: give both lanes or neither");
        return RIFL_ERR_INVALID_ARG;
    }
    p->own_lanes = !cfg->lanes[0];
    for (int i = 0; i < 2 && rc == RIFL_OK; i++) {
        if (cfg->lanes[i])
            p->lane[i] = cfg->lanes[i];
        else
            rc = rifl_lane_create(&cfg->lane, &p->lane[i], msg, msglen);
    }
    for (int i = 0; i < 2 && rc == RIFL_OK && cfg->serial; i++) {
        rifl_phy_serial_config sc = {
            .frame_bits = cfg->lane.frame_bits,
            .delay_frames = p->delay_frames,
            .delay_bits = cfg->bit_offset[i],
            .ber = cfg->ber[i],
            .slip_rate = cfg->slip_rate[i],
            .seed = cfg->seed[i],
            .up_log2 = cfg->up_log2,
            .content_bytes = cfg->encode_all ? 0 : rifl_lane_frame_bytes(cfg->lane.frame_bits),
            .encode = rifl_lane_phy_encode,
            .encode_ctx = p->lane[i],
        };
        rc = rifl_phy_serial_create(&sc, &p->phy[i], msg, msglen);
        if (rc == RIFL_OK) {
            /* power-up: held, not aligned, not up, until the aligner says */
            rifl_lane_hold_tx(p->lane[i], true);
            rifl_lane_set_rx_aligned(p->lane[i], false);
            rifl_lane_set_rx_up(p->lane[i], false);
            rifl_lane_set_group_up(p->lane[i], false);
        }
    }
    for (int i = 0; i < 2 && rc == RIFL_OK && !cfg->serial; i++) {
        /* frames travel by content unless every frame is to be built */
        rifl_phy_channel_config cc = {
            .frame_bits = cfg->lane.frame_bits,
            .delay_frames = p->delay_frames,
            .ber = cfg->ber[i],
            .seed = cfg->seed[i],
            .content_bytes = cfg->encode_all ? 0 : rifl_lane_frame_bytes(cfg->lane.frame_bits),
            .encode = rifl_lane_phy_encode,
            .encode_ctx = p->lane[i],
        };
        rc = rifl_phy_channel_create(&cc, &p->phy[i], msg, msglen);
    }
    for (int i = 0; i < 2 && rc == RIFL_OK && !cfg->serial && !cfg->encode_all; i++) {
        size_t n = p->delay_frames ? p->delay_frames : 1;
        p->content_bytes = rifl_lane_frame_bytes(cfg->lane.frame_bits);
        p->ref_stride = round16(p->content_bytes) + round16(cfg->lane.frame_bits / 8);
        p->ref[i] = calloc(n, sizeof *p->ref[i]);
        p->ref_frame[i] = calloc(n, sizeof *p->ref_frame[i]);
        p->ref_store[i] = calloc(n + 1, p->ref_stride);
        p->idle_frames[i] = calloc(n, sizeof *p->idle_frames[i]);
        if (!p->ref[i] || !p->ref_frame[i] || !p->ref_store[i] || !p->idle_frames[i])
            rc = RIFL_ERR_NOMEM;
    }
    if (rc == RIFL_OK && !cfg->serial && !cfg->encode_all) {
        size_t ids = rifl_lane_replay_frames(p->lane[0]);
        p->idle_log = malloc(ids * sizeof *p->idle_log);
        if (!p->idle_log)
            rc = RIFL_ERR_NOMEM;
        for (size_t k = 0; p->idle_log && k < ids; k++)
            p->idle_log[k] = -1;
    }
    if (rc == RIFL_OK && !cfg->serial && !cfg->encode_all) {
        /* the frame that stands for every frame hit (hit_quiet) */
        static const uint8_t zero[RIFL_PAYLOAD_MAX_BYTES];
        unsigned F = cfg->lane.frame_bits;
        uint64_t scr = 0;
        uint8_t payload[RIFL_PAYLOAD_MAX_BYTES];
        rifl_frame_info fi = { 0 };
        rc = rifl_frame_encode(p->zero_wire, F, RIFL_SYN_DATA, RIFL_META_FULL, zero, 0, &scr);
        p->zero_after = scr & RIFL_SCRAMBLER_MASK;
        scr = 0;
        if (rc == RIFL_OK) {
            rifl_frame_decode(p->zero_wire, F, &scr, payload, &fi);
            p->zero_key = fi.key;
        }
    }
    if (rc != RIFL_OK) {
        rifl_pair_free(p);
        return rc;
    }
    *out = p;
    return RIFL_OK;
}

/* Lane `l` puts its frame of this slot in the PHY's buffer (and a copy of
 * its `copy_bytes` in `copy` when someone looks); returns the form. */
static inline __attribute__((always_inline)) rifl_phy_form build(rifl_lane *l, rifl_phy *phy,
                                                                  uint64_t now, bool wire,
                                                                  void *copy, size_t copy_bytes)
{
    rifl_phy_form form = wire ? RIFL_PHY_WIRE : RIFL_PHY_CONTENT;
    void *buf = rifl_phy_tx_buffer(phy, form);
    if (wire)
        rifl_lane_tx(l, now, buf);
    else
        rifl_lane_tx_frame(l, now, buf);
    if (copy)
        memcpy(copy, buf, copy_bytes);
    return form;
}

/* Lane `l` receives what arrived (n: 0 or 1 frames). */
static int receive(rifl_lane *l, uint64_t now, const rifl_phy_frame *in, unsigned n)
{
    if (!n)
        return rifl_lane_rx(l, now, NULL, NULL);
    if (in->form == RIFL_PHY_WIRE)
        return rifl_lane_rx(l, now, in->data, NULL);
    return rifl_lane_rx_frame(l, now, in->data, NULL);
}

/* Lane `l` (index i) told what the aligner of its incoming line says of a
 * frame. */
static void serial_state(rifl_pair *p, int i, rifl_phy_serial_rx st)
{
    rifl_lane *l = p->lane[i];
    if (st.aligned != p->rx_aligned[i]) {
        rifl_lane_set_rx_aligned(l, st.aligned);
        p->rx_aligned[i] = st.aligned;
        if (st.aligned)
            rifl_lane_hold_tx(l, false);
    }
    if (st.up != p->rx_up[i]) {
        rifl_lane_set_rx_up(l, st.up);
        rifl_lane_set_group_up(l, st.up);
        p->rx_up[i] = st.up;
    }
}

/* A slot of a pair of serial lanes: 0, 1 or 2 frames arrive at each end,
 * each with its aligner's state. */
static void serial_step(rifl_pair *p, rifl_pair_slot *seen)
{
    uint64_t now = p->slot;
    rifl_phy_frame in[2][2];
    unsigned n[2];
    for (int i = 0; i < 2; i++) {
        rifl_phy_form form = build(p->lane[i], p->phy[i], now, p->encode_all,
                                   seen ? (void *)&seen->sent[i] : NULL, p->sent_bytes);
        n[1 - i] = rifl_phy_exchange(p->phy[i], now, form, in[1 - i], 2);
    }
    int r[2] = { RIFL_RX_EMPTY, RIFL_RX_EMPTY };
    for (int i = 0; i < 2; i++) {
        if (!n[i]) {
            r[i] = rifl_lane_rx(p->lane[i], now, NULL, NULL);
            continue;
        }
        for (unsigned k = 0; k < n[i]; k++) {
            serial_state(p, i, rifl_phy_serial_rx_state(p->phy[1 - i], k));
            r[i] = rifl_lane_rx(p->lane[i], now, in[i][k].data, NULL);
        }
    }
    if (!p->startup_slot && p->rx_up[0] && p->rx_up[1])
        p->startup_slot = now + 1;
    if (seen) {
        seen->now = now;
        seen->form = p->encode_all ? RIFL_PHY_WIRE : RIFL_PHY_CONTENT;
        for (int i = 0; i < 2; i++) {
            seen->arrived[i] = n[i] ? in[i][0] : (rifl_phy_frame){ RIFL_PHY_NONE, NULL };
            seen->rx[i] = r[i];
        }
    }
    p->slot++;
}

/* The slot loop of every link simulation: the lanes' and cables' per-slot
 * calls are inlined into it (they sit in other layers, out of the
 * compiler's usual reach). */
__attribute__((flatten)) void rifl_pair_step(rifl_pair *p, rifl_pair_slot *seen)
{
    if (!p)
        return;
    if (p->serial) {
        serial_step(p, seen);
        return;
    }
    uint64_t now = p->slot;
    rifl_phy_frame in[2];
    unsigned n[2];
    for (int i = 0; i < 2; i++) {
        /* the pair made its PHYs: cables, called directly */
        rifl_phy_form form = build(p->lane[i], p->phy[i], now, p->encode_all,
                                   seen ? (void *)&seen->sent[i] : NULL, p->sent_bytes);
        n[1 - i] = rifl_phy_channel_exchange(p->phy[i], now, form, &in[1 - i], 1);
    }
    for (int i = 0; i < 2; i++) {
        /* whether this slot's frame was damaged (rifl_pair_ref_room) */
        uint64_t h = rifl_phy_get_stats(p->phy[i])->frames_hit;
        p->last_hit[i] = h != p->hits_seen[i];
        p->hits_seen[i] = h;
        if (p->last_hit[i])
            p->hit_slot[i] = now + 1;
    }
    int r0 = receive(p->lane[0], now, &in[0], n[0]);
    int r1 = receive(p->lane[1], now, &in[1], n[1]);
    if (seen) {
        seen->now = now;
        seen->form = p->encode_all ? RIFL_PHY_WIRE : RIFL_PHY_CONTENT;
        for (int i = 0; i < 2; i++)
            seen->arrived[i] = n[i] ? in[i] : (rifl_phy_frame){ RIFL_PHY_NONE, NULL };
        seen->rx[0] = r0;
        seen->rx[1] = r1;
    }
    p->slot++;
}

/* ---- stepping by reference ----------------------------------------------- */

uint64_t rifl_pair_ref_room(rifl_pair *p)
{
    /* a frame sent by reference points at its record in the replay buffer,
     * which must outlive its time in flight */
    unsigned D = p->delay_frames;
    if (!p->ref[0] || p->by_ref || D == 0 || D >= rifl_lane_replay_frames(p->lane[0]) ||
        p->slot <= D)
        return 0;
    return UINT64_MAX;
}

/* The frames in flight on cable i, all undamaged and by content, one chain
 * of scrambler states that begins where the far end's descrambler stands:
 * they can go on as references, the sender's scrambler put back to where
 * the first began (as if all had been sent by reference). */
static bool inflight_as_refs(rifl_pair *p, int i)
{
    rifl_lane *tx = p->lane[i], *rx = p->lane[1 - i];
    unsigned nfid = rifl_lane_replay_frames(tx);
    uint64_t chain = rifl_lane_rx_scrambler(rx) & RIFL_SCRAMBLER_MASK, first = chain;
    for (unsigned k = 0; k < p->delay_frames; k++) {
        const rifl_pair_inflight *e = &p->ref_frame[i][k];
        const rifl_lane_frame *f = e->frame;
        if (e->form != RIFL_PHY_CONTENT || f->data > 1 || f->id >= nfid ||
            f->scr == RIFL_LANE_SCR_FOLLOWS || f->scr_next == RIFL_LANE_SCR_FOLLOWS ||
            (f->scr & RIFL_SCRAMBLER_MASK) != chain)
            return false;
        chain = f->scr_next & RIFL_SCRAMBLER_MASK;
    }
    for (unsigned k = 0; k < p->delay_frames; k++) {
        const rifl_lane_frame *f = p->ref_frame[i][k].frame;
        p->ref[i][k] = (rifl_lane_ref){ f->data ? f->rec : NULL, f->key, f->id, f->data };
    }
    rifl_lane_ref_chain(tx, first);
    return true;
}

int rifl_pair_ref_begin(rifl_pair *p)
{
    if (!rifl_pair_ref_room(p))
        return RIFL_ERR_STATE;
    for (int i = 0; i < 2; i++) {
        for (unsigned k = 0; k < p->delay_frames; k++) {
            /* the cable's frames stay where they are until the end */
            rifl_pair_inflight *e = &p->ref_frame[i][k];
            rifl_phy_form form = rifl_phy_inflight_form(p->phy[i], k);
            e->form = (uint8_t)form;
            e->frame = form == RIFL_PHY_NONE ? NULL : rifl_phy_inflight(p->phy[i], k, form);
            if (!e->frame)
                return RIFL_ERR_STATE;
            p->ref[i][k].data = RIFL_LANE_REF_NONE;
        }
        /* frames by content that the far end would take in step go on as
         * references (their records stay in the cable meanwhile), so that
         * their arrivals need not end quiet runs */
        p->ref_conv[i] = !p->encode_all && inflight_as_refs(p, i);
        p->ref_clear[i] = rifl_phy_clear_slots(p->phy[i]);
        p->ref_pend[i] = 0;
        p->hits[i].n = p->hits[i].first = 0;
    }
    p->ref_pos = 0;
    p->ref_from = p->slot;
    p->by_ref = true;
    return RIFL_OK;
}

/* Bring cable i's error process up to date with the frames sent by
 * reference. */
static int ref_settle(rifl_pair *p, int i)
{
    int rc = rifl_phy_skip(p->phy[i], p->ref_pend[i]);
    p->ref_pend[i] = 0;
    return rc;
}

/* Entry r of a cable's ring is a frame built by content (its bytes in
 * ref_frame): one not by reference, or one damaged that stands in the ring
 * for what the far end makes of it (ref_build). */
static inline bool ref_built(const rifl_lane_ref *r)
{
    return r->data == RIFL_LANE_REF_NONE || r->id == RIFL_LANE_REF_NO_ID;
}

/* What the far end makes of damaged frame f (wire bytes `wire`), decoded
 * from the scrambler state f began at.  Returns true when the damage spills
 * into the next frame: the far end's descrambler is left in another state
 * than f leaves it (the last bits hit), so the next frame must be built too
 * and decoded from its wire bytes (rifl_lane_rx_frame).  Otherwise *as is
 * the reference that stands for the damaged frame, when there is one: it
 * has a legal SYN and verifies as an ID above 2^K - 1, so it fails
 * verification whatever the receiver expects, and the receiver sees only
 * its SYN and, for a control frame, its key (else as->data is
 * RIFL_LANE_REF_NONE).  The descrambler's state after a frame depends on
 * the frame's bits alone. */
static bool damaged(const rifl_lane *l, const rifl_lane_frame *f, const uint8_t *wire,
                    rifl_lane_ref *as)
{
    uint8_t payload[RIFL_PAYLOAD_MAX_BYTES];
    rifl_frame_info fi;
    uint64_t descr = f->scr & RIFL_SCRAMBLER_MASK;
    rifl_frame_decode(wire, rifl_lane_get_config(l)->frame_bits, &descr, payload, &fi);
    as->data = RIFL_LANE_REF_NONE;
    if (descr != (f->scr_next & RIFL_SCRAMBLER_MASK))
        return true;
    if ((fi.syn == RIFL_SYN_DATA || fi.syn == RIFL_SYN_CONTROL) &&
        fi.id >= rifl_lane_replay_frames(l))
        *as = (rifl_lane_ref){ f->rec, fi.key, RIFL_LANE_REF_NO_ID, fi.syn == RIFL_SYN_DATA };
    return false;
}

/* Lane i's frame of this slot is hit, or follows one whose damage spills
 * into it: built by content and put through the cable's errors.  A damaged
 * frame that a reference can stand for goes into the ring as that
 * reference (quiet runs then carry its arrival), and the sender's scrambler
 * goes back to where the frame began, as if it had been sent by reference:
 * the far end takes it by reference too and its descrambler stays where it
 * was. */
static __attribute__((noinline)) void ref_build(rifl_pair *p, int i, uint64_t now, unsigned pos)
{
    uint8_t *buf = p->ref_store[i] + (size_t)p->ref_next[i] * p->ref_stride;
    p->ref_next[i] = p->ref_next[i] == p->delay_frames ? 0 : p->ref_next[i] + 1;
    rifl_lane_frame *f = (rifl_lane_frame *)(void *)buf;
    uint8_t *wire = buf + round16(p->content_bytes);
    rifl_lane *l = p->lane[i];
    bool after_spill = p->last_hit[i];
    rifl_lane_tx_frame(l, now, f);
    ref_settle(p, i);
    bool hit = rifl_phy_channel_pass(p->phy[i], f, wire) != 0;
    rifl_lane_ref as = { NULL, 0, 0, RIFL_LANE_REF_NONE };
    p->last_hit[i] = hit && damaged(l, f, wire, &as);
    if (after_spill || as.data == RIFL_LANE_REF_NONE) {
        p->ref[i][pos].data = RIFL_LANE_REF_NONE;
    } else {
        p->ref[i][pos] = as;
        rifl_lane_ref_chain(l, f->scr);
    }
    p->ref_frame[i][pos].frame = hit ? (const void *)wire : (const void *)f;
    p->ref_frame[i][pos].form = (uint8_t)(hit ? RIFL_PHY_WIRE : RIFL_PHY_CONTENT);
    if (hit)
        p->hit_slot[i] = now + 1;
    p->ref_clear[i] = rifl_phy_clear_slots(p->phy[i]);
}

/* Lane `l` receives a frame in flight while stepping by reference. */
static inline void ref_receive(rifl_lane *l, uint64_t now, const rifl_lane_ref *r,
                               const rifl_pair_inflight *e)
{
    if (r->data != RIFL_LANE_REF_NONE)
        rifl_lane_rx_ref(l, now, r);
    else if (e->form == RIFL_PHY_WIRE)
        rifl_lane_rx(l, now, e->frame, NULL);
    else
        rifl_lane_rx_frame(l, now, e->frame, NULL);
}

__attribute__((flatten)) void rifl_pair_ref_step(rifl_pair *p)
{
    uint64_t now = p->slot;
    unsigned pos = p->ref_pos;
    rifl_lane_ref out[2];
    rifl_pair_inflight outf[2];
    for (int i = 0; i < 2; i++) {
        rifl_lane_ref *r = &p->ref[i][pos];
        out[i] = *r;
        if (r->data == RIFL_LANE_REF_NONE) /* (a frame built: read below) */
            outf[i] = p->ref_frame[i][pos];
        if (p->ref_clear[i] && !p->last_hit[i]) {
            rifl_lane_tx_ref(p->lane[i], now, r);
            if (p->ref_clear[i] != UINT64_MAX)
                p->ref_clear[i]--;
            p->ref_pend[i]++;
        } else {
            ref_build(p, i, now, pos);
        }
    }
    p->ref_pos = pos + 1 == p->delay_frames ? 0 : pos + 1;
    ref_receive(p->lane[0], now, &out[1], &outf[1]);
    ref_receive(p->lane[1], now, &out[0], &outf[0]);
    p->slot++;
}

bool pair_hit_flip(const rifl_phy_hit *h, uint8_t *wire, unsigned frame_bits)
{
    if (h->nbits == 0 || h->nbits > RIFL_PHY_HIT_BITS)
        return false;
    for (unsigned b = 0; b < h->nbits; b++) {
        if (h->bit[b] >= frame_bits)
            return false;
        wire[h->bit[b] >> 3] ^= (uint8_t)(0x80u >> (h->bit[b] & 7));
    }
    return true;
}

/* Hit h is one a quiet run can carry: whatever frame it falls in, that
 * frame keeps its SYN, verifies as an ID of 2^K or more and leaves the far
 * end's descrambler where the undamaged frame would (what ref_build makes a
 * reference of).  The damage to a frame does not depend on its bits (the
 * codec is linear), so a frame of zeros stands for all; *kx is what the
 * damage XORs into a control frame's key. */
static bool hit_quiet(const rifl_pair *p, const rifl_phy_hit *h, uint16_t *kx)
{
    unsigned F = rifl_lane_get_config(p->lane[0])->frame_bits;
    uint8_t wire[RIFL_FRAME_MAX_BYTES], payload[RIFL_PAYLOAD_MAX_BYTES];
    memcpy(wire, p->zero_wire, F / 8);
    if (!pair_hit_flip(h, wire, F))
        return false;
    uint64_t descr = 0;
    rifl_frame_info fi;
    rifl_frame_decode(wire, F, &descr, payload, &fi);
    *kx = (uint16_t)(fi.key ^ p->zero_key);
    return fi.syn == RIFL_SYN_DATA && fi.id >= rifl_lane_replay_frames(p->lane[0]) &&
           (descr & RIFL_SCRAMBLER_MASK) == p->zero_after;
}

/* Cable i's next hits, peeked from where its error process stands. */
static void hits_peek(rifl_pair *p, int i)
{
    struct rifl_pair_hits *c = &p->hits[i];
    rifl_phy_hit h[RIFL_PAIR_HITS];
    unsigned n = rifl_phy_channel_peek(p->phy[i], h, RIFL_PAIR_HITS);
    uint64_t base = rifl_phy_get_stats(p->phy[i])->frames;
    for (unsigned k = 0; k < n; k++) {
        c->at[k] = base + h[k].frame;
        c->quiet[k] = hit_quiet(p, &h[k], &c->key[k]);
    }
    c->n = n;
    c->first = 0;
    c->more = n == RIFL_PAIR_HITS;
}

/* The hits a quiet run of at most `max` slots carries on cable i, into
 * io; returns the slots the run may take: up to the first hit it cannot
 * carry, or past the last one known. */
static uint64_t hits_plan(rifl_pair *p, int i, uint64_t max, rifl_lane_quiet_io *io)
{
    io->hits[i] = 0;
    io->hit_at[i] = p->run_at[i];
    io->hit_key[i] = p->run_key[i];
    io->hit_sent[i] = p->run_sent[i];
    if (p->ref_clear[i] >= max)
        return max;
    struct rifl_pair_hits *c = &p->hits[i];
    /* the cable's frame count at lane i's next frame, and at the next hit */
    uint64_t next = rifl_phy_get_stats(p->phy[i])->frames + p->ref_pend[i];
    uint64_t hit = next + p->ref_clear[i];
    while (c->first < c->n && c->at[c->first] < hit)
        c->first++;
    if (c->first >= c->n || c->at[c->first] != hit) {
        hits_peek(p, i);
        while (c->first < c->n && c->at[c->first] < hit)
            c->first++;
        if (c->first >= c->n || c->at[c->first] != hit)
            return p->ref_clear[i];
    }
    unsigned m = 0;
    for (unsigned k = c->first; k < c->n; k++) {
        uint64_t at = c->at[k] - next;
        if (at >= max)
            return max;
        if (!c->quiet[k])
            return at;
        p->run_at[i][m] = at;
        p->run_key[i][m++] = c->key[k];
        io->hits[i] = m;
    }
    return c->more ? c->at[c->n - 1] - next + 1 : max;
}

/* After a quiet run of n slots from slot now0 (ring entry pos0): cable i's
 * error process through the hits it carried, each drawn as
 * rifl_phy_channel_pass would; those still in flight built by content
 * and put through the cable's errors as ref_build does, so that the end of
 * the stretch can rebuild them. */
static int hits_land(rifl_pair *p, int i, uint64_t n, const rifl_lane_quiet_io *io,
                     unsigned pos0, uint64_t now0)
{
    unsigned d = io->hits_done[i], D = p->delay_frames;
    uint64_t pend = p->ref_pend[i], done = 0;
    rifl_phy *phy = p->phy[i];
    rifl_lane *l = p->lane[i];
    for (unsigned k = 0; k < d; k++) {
        uint64_t at = p->run_at[i][k];
        if (at + D < n)
            continue; /* (no longer in flight: only its errors are drawn) */
        if (rifl_phy_channel_skip_hits(phy, pend + at - done) != RIFL_OK)
            return RIFL_ERR_STATE;
        uint8_t *buf = p->ref_store[i] + (size_t)p->ref_next[i] * p->ref_stride;
        p->ref_next[i] = p->ref_next[i] == D ? 0 : p->ref_next[i] + 1;
        rifl_lane_frame *f = (rifl_lane_frame *)(void *)buf;
        uint8_t *wire = buf + round16(p->content_bytes);
        if (rifl_lane_ref_frame(l, &p->run_sent[i][k], f) != RIFL_OK ||
            rifl_lane_ref_chain(l, f->scr) != RIFL_OK)
            return RIFL_ERR_STATE;
        rifl_lane_ref as;
        if (rifl_phy_channel_pass(phy, f, wire) != 1 || damaged(l, f, wire, &as) ||
            as.id != RIFL_LANE_REF_NO_ID)
            p->hit_faults++;
        p->ref_frame[i][(pos0 + at) % D] = (rifl_pair_inflight){ wire, RIFL_PHY_WIRE };
        done = pend + at + 1;
    }
    if (d) {
        uint64_t last = pend + p->run_at[i][d - 1] + 1;
        if (last > done && rifl_phy_channel_skip_hits(phy, last - done) != RIFL_OK)
            return RIFL_ERR_STATE;
        done = last;
        p->hit_slot[i] = now0 + p->run_at[i][d - 1] + 1;
        p->quiet_hits[i] += d;
    }
    p->ref_pend[i] = pend + n - done;
    uint64_t clear = rifl_phy_clear_slots(phy);
    p->ref_clear[i] = clear == UINT64_MAX ? UINT64_MAX : clear - p->ref_pend[i];
    return RIFL_OK;
}

uint64_t rifl_pair_ref_quiet(rifl_pair *p, uint64_t max, rifl_lane_quiet_io *io)
{
    if (io)
        io->n[0] = io->n[1] = io->sent[0] = io->sent[1] = 0;
    if (!p || !p->by_ref || p->last_hit[0] || p->last_hit[1])
        return 0;
    for (int i = 0; i < 2; i++) {
        uint64_t cap = io ? hits_plan(p, i, max, io) : p->ref_clear[i];
        if (cap < max)
            max = cap;
    }
    unsigned pos0 = p->ref_pos;
    uint64_t now0 = p->slot;
    uint64_t n = rifl_lane_quiet_run(p->lane, p->slot, p->ref, p->delay_frames, &p->ref_pos, max,
                                     io);
    for (int i = 0; i < 2; i++) {
        if (io && io->hits_done[i]) {
            if (hits_land(p, i, n, io, pos0, now0) != RIFL_OK)
                p->hit_faults++;
            continue;
        }
        if (p->ref_clear[i] != UINT64_MAX)
            p->ref_clear[i] -= n;
        p->ref_pend[i] += n;
    }
    p->slot += n;
    return n;
}

/* The content of a frame built in a stretch (ref_build): it sits before
 * its wire bytes when those were damaged. */
static const rifl_lane_frame *built_content(const rifl_pair *p, const rifl_pair_inflight *e)
{
    const uint8_t *buf = e->frame;
    if (e->form == RIFL_PHY_WIRE)
        buf -= round16(p->content_bytes);
    return (const rifl_lane_frame *)(const void *)buf;
}

/* Entry k of the frames lane i sent in the stretch that are still in
 * flight (k from `first`, oldest first), by content: `chain` is the
 * scrambler state it follows on from (UINT64_MAX: the sender's own). */
static int ref_rebuild(rifl_pair *p, int i, unsigned k, uint64_t *chain)
{
    unsigned D = p->delay_frames;
    unsigned e = (p->ref_pos + k) % D;
    const rifl_lane_ref *r = &p->ref[i][e];
    const rifl_pair_inflight *m = &p->ref_frame[i][e];
    rifl_lane *l = p->lane[i];
    if (*chain != UINT64_MAX && rifl_lane_ref_chain(l, *chain) != RIFL_OK)
        return RIFL_ERR_STATE;
    if (!ref_built(r)) {
        rifl_lane_frame *f = rifl_phy_inflight(p->phy[i], k, RIFL_PHY_CONTENT);
        if (!f)
            return RIFL_ERR_STATE;
        /* (a frame in flight when the stretch began refers to its own
         * record in the cable) */
        uint8_t rec[RIFL_FRAME_MAX_BYTES];
        rifl_lane_ref own = *r;
        if (r->data && r->rec == f->rec) {
            memcpy(rec, r->rec, rifl_lane_get_config(l)->frame_bits / 8 - 1);
            own.rec = rec;
        }
        if (rifl_lane_ref_frame(l, &own, f) != RIFL_OK)
            return RIFL_ERR_STATE;
        if (*chain != UINT64_MAX)
            *chain = f->scr_next;
        return RIFL_OK;
    }
    const rifl_lane_frame *old = built_content(p, m);
    rifl_lane_frame now;
    memcpy(&now, old, p->content_bytes);
    if (*chain != UINT64_MAX && old->scr != *chain) {
        /* it follows frames rebuilt before it: the same frame from the new
         * state, with the same bits damaged */
        rifl_lane_ref again = { old->data == 1 ? old->rec : NULL, old->key, old->id, old->data };
        if (rifl_lane_ref_frame(l, &again, &now) != RIFL_OK)
            return RIFL_ERR_STATE;
    }
    if (*chain != UINT64_MAX)
        *chain = now.scr_next;
    void *dst = rifl_phy_inflight(p->phy[i], k, (rifl_phy_form)m->form);
    if (!dst)
        return RIFL_ERR_STATE;
    if (m->form != RIFL_PHY_WIRE) {
        memcpy(dst, &now, p->content_bytes);
        return RIFL_OK;
    }
    if (now.scr == old->scr) {
        memcpy(dst, m->frame, p->phy[i]->frame_bytes);
        return RIFL_OK;
    }
    unsigned F = rifl_lane_get_config(l)->frame_bits;
    uint8_t a[RIFL_FRAME_MAX_BYTES], b[RIFL_FRAME_MAX_BYTES];
    rifl_lane_frame_encode(old, F, a);
    rifl_lane_frame_encode(&now, F, b);
    uint8_t *w = dst;
    const uint8_t *hw = m->frame;
    for (unsigned j = 0; j < F / 8; j++)
        w[j] = (uint8_t)(hw[j] ^ a[j] ^ b[j]);
    return RIFL_OK;
}

int rifl_pair_ref_end(rifl_pair *p)
{
    if (!p->by_ref)
        return RIFL_ERR_STATE;
    p->by_ref = false;
    uint64_t m = p->slot - p->ref_from;
    unsigned D = p->delay_frames;
    /* the frames sent before the stretch that are still in flight stay in
     * the cable as they are; those sent in it go back by content (or as
     * damaged wire bytes), their scrambler states one chain.  Frames sent
     * by reference did not move the sender's scrambler, nor did damaged
     * frames that went into the ring as references, and the far end's
     * descrambler stands where the oldest frame built in flight began: the
     * chain starts there, and every frame after is rebuilt from it */
    for (int i = 0; i < 2; i++) {
        if (ref_settle(p, i) != RIFL_OK)
            return RIFL_ERR_STATE;
        /* (those that went on as references are in the chain too) */
        unsigned first = m < D && !p->ref_conv[i] ? (unsigned)(D - m) : 0;
        p->ref_conv[i] = false;
        uint64_t chain = UINT64_MAX;
        for (unsigned k = first; k < D && chain == UINT64_MAX; k++) {
            unsigned e = (p->ref_pos + k) % D;
            if (ref_built(&p->ref[i][e]))
                chain = built_content(p, &p->ref_frame[i][e])->scr;
        }
        for (unsigned k = first; k < D; k++)
            if (ref_rebuild(p, i, k, &chain) != RIFL_OK)
                return RIFL_ERR_STATE;
        if (chain != UINT64_MAX && rifl_lane_ref_chain(p->lane[i], chain) != RIFL_OK)
            return RIFL_ERR_STATE;
        p->hits_seen[i] = rifl_phy_get_stats(p->phy[i])->frames_hit;
    }
    return RIFL_OK;
}

int rifl_pair_set_ber(rifl_pair *p, int i, double ber)
{
    if (!p || i < 0 || i > 1 || p->serial)
        return RIFL_ERR_INVALID_ARG;
    if (p->by_ref && ref_settle(p, i) != RIFL_OK)
        return RIFL_ERR_STATE;
    p->hits[i].n = p->hits[i].first = 0; /* (the hits peeked are no longer ahead) */
    int rc = rifl_phy_channel_set_ber(p->phy[i], ber);
    if (rc == RIFL_OK && p->by_ref)
        p->ref_clear[i] = rifl_phy_clear_slots(p->phy[i]);
    return rc;
}

uint64_t rifl_pair_clear_slots(const rifl_pair *p, int i)
{
    if (!p || i < 0 || i > 1)
        return 0;
    return p->by_ref ? p->ref_clear[i] : rifl_phy_clear_slots(p->phy[i]);
}

/* ---- idle stretches ------------------------------------------------------ */

static bool filler_rec(const uint8_t *rec, size_t pb)
{
    return (rec[0] & 3u) == 0 && rec[pb] == RIFL_FMT_FILLER;
}

/* The k-th oldest frame in flight on cable i is an undamaged filler. */
static bool inflight_filler(const rifl_pair *p, int i, unsigned k, size_t pb)
{
    unsigned D = p->delay_frames;
    if (p->by_ref) {
        const rifl_lane_ref *r = &p->ref[i][(p->ref_pos + k) % D];
        if (ref_built(r)) {
            const rifl_pair_inflight *e = &p->ref_frame[i][(p->ref_pos + k) % D];
            const rifl_lane_frame *f = e->frame;
            return e->form == RIFL_PHY_CONTENT && f && f->data == 1 && filler_rec(f->rec, pb);
        }
        return r->data == 1 && filler_rec(r->rec, pb);
    }
    if (rifl_phy_inflight_form(p->phy[i], k) != RIFL_PHY_CONTENT)
        return false;
    /* rifl_phy_inflight marks the entry with the form asked for: the same */
    const rifl_lane_frame *f = rifl_phy_inflight(p->phy[i], k, RIFL_PHY_CONTENT);
    return f && f->data == 1 && filler_rec(f->rec, pb);
}

uint64_t rifl_pair_idle_room(const rifl_pair *p)
{
    if (!p || !p->idle_log)
        return 0;
    unsigned D = p->delay_frames;
    if (D == 0 || p->slot <= D || D > rifl_lane_replay_frames(p->lane[0]) ||
        !rifl_lane_steady(p->lane[0], p->lane[1], D) || rifl_lane_tx_backlog(p->lane[0]) ||
        rifl_lane_tx_backlog(p->lane[1]))
        return 0;
    size_t pb = rifl_payload_bytes(rifl_lane_get_config(p->lane[0])->frame_bits);
    for (int i = 0; i < 2; i++)
        for (unsigned k = 0; k < D; k++)
            if (!inflight_filler(p, i, k, pb))
                return 0;
    uint64_t a = rifl_pair_clear_slots(p, 0), b = rifl_pair_clear_slots(p, 1);
    return a < b ? a : b;
}

int rifl_pair_advance(rifl_pair *p, const rifl_lane_stretch st[2])
{
    if (!p || !st || st[0].slots != st[1].slots)
        return RIFL_ERR_INVALID_ARG;
    uint64_t m = st[0].slots;
    if (m == 0)
        return RIFL_OK;
    if (!p->idle_log || m > rifl_pair_clear_slots(p, 0) || m > rifl_pair_clear_slots(p, 1))
        return RIFL_ERR_STATE;
    if (p->by_ref && rifl_pair_ref_end(p) != RIFL_OK)
        return RIFL_ERR_STATE;
    unsigned D = p->delay_frames;
    if (rifl_lane_advance(p->lane, D, st, p->idle_frames) != RIFL_OK)
        return RIFL_ERR_STATE;
    for (int i = 0; i < 2; i++) {
        if (rifl_phy_skip(p->phy[i], m) != RIFL_OK)
            return RIFL_ERR_STATE;
        for (unsigned k = 0; k < D; k++) {
            void *to = rifl_phy_inflight(p->phy[i], k, RIFL_PHY_CONTENT);
            if (!to)
                return RIFL_ERR_STATE;
            memcpy(to, &p->idle_frames[i][k], p->content_bytes);
        }
        p->hits_seen[i] = rifl_phy_get_stats(p->phy[i])->frames_hit;
        p->last_hit[i] = false;
    }
    p->slot += m;
    return RIFL_OK;
}

int rifl_pair_idle_skip(rifl_pair *p, uint64_t m)
{
    if (!p)
        return RIFL_ERR_INVALID_ARG;
    if (m == 0)
        return RIFL_OK;
    if (m > rifl_pair_idle_room(p))
        return RIFL_ERR_STATE;
    rifl_lane_stretch st[2];
    for (int i = 0; i < 2; i++)
        st[i] = (rifl_lane_stretch){ .slots = m, .fill_sent = m, .sent_by_id = p->idle_log,
                                     .fill_recv = m };
    return rifl_pair_advance(p, st);
}

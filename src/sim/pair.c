/* Two lanes connected back to back by two simulated cables (PHYs). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/sim/pair.h"

unsigned rifl_link_delay_frames(const rifl_link_params *link, unsigned frame_bits)
{
    double ns = link->transceiver_ns + link->cable_m * link->ns_per_m;
    double frames = ns * link->lane_rate_gbps / (double)frame_bits;
    return (unsigned)llround(frames);
}

void rifl_pair_free(rifl_pair *p)
{
    if (!p)
        return;
    for (int i = 0; i < 2; i++) {
        rifl_lane_free(p->lane[i]);
        rifl_phy_free(p->phy[i]);
        free(p->ref[i]);
    }
    free(p);
}

int rifl_pair_create(const rifl_pair_config *cfg, rifl_pair **out, char *msg,
                     size_t msglen)
{
    if (!cfg || !out)
        return rifl_null_arg(msg, msglen, "rifl_pair_create", cfg ? "out" : "cfg");
    *out = NULL;
    rifl_pair *p = calloc(1, sizeof *p);
    if (!p)
        return RIFL_ERR_NOMEM;
    p->encode_all = cfg->encode_all;
    p->sent_bytes = cfg->encode_all ? cfg->lane.frame_bits / 8
                                    : rifl_lane_frame_bytes(cfg->lane.frame_bits);
    p->delay_frames = cfg->delay_frames ? cfg->delay_frames
                                        : rifl_link_delay_frames(&cfg->lane.link,
                                                                 cfg->lane.frame_bits);
    p->serial = cfg->serial;
    if (cfg->serial) {
        int rc = rifl_lane_serial_check(&cfg->lane, msg, msglen);
        if (rc != RIFL_OK) {
            free(p);
            return rc;
        }
    }
    int rc = RIFL_OK;
    for (int i = 0; i < 2 && rc == RIFL_OK; i++)
        rc = rifl_lane_create(&cfg->lane, &p->lane[i], msg, msglen);
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
        p->ref[i] = calloc(p->delay_frames ? p->delay_frames : 1, sizeof *p->ref[i]);
        if (!p->ref[i])
            rc = RIFL_ERR_NOMEM;
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
    unsigned D = p->delay_frames;
    if (!p->ref[0] || p->by_ref || D == 0 || D >= rifl_lane_replay_frames(p->lane[0]) ||
        p->slot <= D || p->last_hit[0] || p->last_hit[1])
        return 0;
    uint64_t a = rifl_phy_clear_slots(p->phy[0]), b = rifl_phy_clear_slots(p->phy[1]);
    return a < b ? a : b;
}

int rifl_pair_ref_begin(rifl_pair *p)
{
    if (!rifl_pair_ref_room(p))
        return RIFL_ERR_STATE;
    for (int i = 0; i < 2; i++)
        for (unsigned k = 0; k < p->delay_frames; k++) {
            /* the cable's frames stay where they are until the end */
            rifl_pair_inflight *e = &p->ref[i][k];
            rifl_phy_form form = rifl_phy_inflight_form(p->phy[i], k);
            e->form = (uint8_t)form;
            e->frame = form == RIFL_PHY_NONE ? NULL : rifl_phy_inflight(p->phy[i], k, form);
            if (!e->frame)
                return RIFL_ERR_STATE;
        }
    p->ref_pos = 0;
    p->ref_from = p->slot;
    p->by_ref = true;
    return RIFL_OK;
}

/* Lane `l` receives a frame in flight while stepping by reference. */
static inline void ref_receive(rifl_lane *l, uint64_t now, const rifl_pair_inflight *e)
{
    if (!e->frame)
        rifl_lane_rx_ref(l, now, &e->ref);
    else if (e->form == RIFL_PHY_WIRE)
        rifl_lane_rx(l, now, e->frame, NULL);
    else
        rifl_lane_rx_frame(l, now, e->frame, NULL);
}

__attribute__((flatten)) void rifl_pair_ref_step(rifl_pair *p)
{
    uint64_t now = p->slot;
    rifl_pair_inflight out[2];
    for (int i = 0; i < 2; i++) {
        rifl_pair_inflight *e = &p->ref[i][p->ref_pos];
        out[i] = *e;
        e->frame = NULL;
        rifl_lane_tx_ref(p->lane[i], now, &e->ref);
    }
    p->ref_pos = p->ref_pos + 1 == p->delay_frames ? 0 : p->ref_pos + 1;
    ref_receive(p->lane[0], now, &out[1]);
    ref_receive(p->lane[1], now, &out[0]);
    p->slot++;
}

int rifl_pair_ref_end(rifl_pair *p)
{
    if (!p->by_ref)
        return RIFL_ERR_STATE;
    p->by_ref = false;
    uint64_t m = p->slot - p->ref_from;
    unsigned D = p->delay_frames;
    /* the frames sent before the stretch that are still in flight stay in
     * the cable as they are; those sent by reference are built by content,
     * their scrambler states following on from the last frame sent by
     * content (the sender's scrambler has not moved since) */
    unsigned first = m < D ? (unsigned)(D - m) : 0;
    for (int i = 0; i < 2; i++) {
        if (rifl_phy_skip(p->phy[i], m) != RIFL_OK)
            return RIFL_ERR_STATE;
        for (unsigned k = first; k < D; k++) {
            const rifl_pair_inflight *e = &p->ref[i][(p->ref_pos + k) % D];
            rifl_lane_frame *f = rifl_phy_inflight(p->phy[i], k, RIFL_PHY_CONTENT);
            if (e->frame || !f || rifl_lane_ref_frame(p->lane[i], &e->ref, f) != RIFL_OK)
                return RIFL_ERR_STATE;
        }
    }
    return RIFL_OK;
}

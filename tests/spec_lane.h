/* A RIFL lane written straight from the link-layer rules (docs/link-layer.md,
 * "The rules rifl implements"): control-frame monitor, receiver, sender state
 * machine, replay cycle, ON/OFF flow control and packet framing, each in the
 * most literal form, with no fast paths and nothing shared with src/link/
 * except the frame codec.  Tests run the lane engine against it to show that
 * rifl interoperates with any peer that follows the rules to the letter.
 *
 * Options model the authors' hardware where it differs from the project's
 * rules: a replay tail of exactly 2^(K-1) slots, and user data allowed after
 * 2^K NORMAL slots instead of 2^K new fillers. */
#ifndef RIFL_TEST_SPEC_LANE_H
#define RIFL_TEST_SPEC_LANE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/frame.h"

enum { SPEC_INIT, SPEC_SEND_PAUSE, SPEC_PAUSE, SPEC_RETRANS, SPEC_SEND_RETRANS, SPEC_NORMAL };

struct spec_lane {
    unsigned F, K, N, pb;       /* frame bits, ID bits, 2^K, payload bytes */
    unsigned tail;              /* replay-cycle tail, slots */
    bool count_normal_slots;    /* hardware's start-up rule (see above) */
    /* sender */
    uint64_t scr;
    unsigned fid, init, state;
    bool replaying;
    unsigned rslot;
    uint8_t *replay;            /* N records: META byte, then pb bytes */
    unsigned new_fillers, normal_slots, since_err;
    bool fc_sent_on, peer_fc_on;
    uint8_t *txq;               /* queued user frames (records) */
    unsigned txq_cap, txq_head, txq_count;
    /* receiver */
    uint64_t descr;
    unsigned rfid, thr;
    bool ferr;
    unsigned pcount, rcount, run;
    uint8_t *rxq;               /* delivered user frames (records) */
    unsigned rxq_cap, rxq_head, rxq_count;
    /* counters */
    uint64_t cycles, verify_fail, overflow, normal_total;
};

static inline unsigned spec_rec(const struct spec_lane *s) { return 1 + s->pb; }

static inline int spec_lane_init(struct spec_lane *s, unsigned F, unsigned K, unsigned tail,
                                 unsigned txq_frames)
{
    memset(s, 0, sizeof *s);
    s->F = F;
    s->K = K;
    s->N = 1u << K;
    s->pb = F / 8 - 2;
    s->tail = tail;
    s->thr = 16 % s->N;
    s->since_err = s->N;
    s->txq_cap = txq_frames;
    s->rxq_cap = 2 * s->N;
    s->replay = calloc(s->N, spec_rec(s));
    s->txq = calloc(txq_frames, spec_rec(s));
    s->rxq = calloc(s->rxq_cap, spec_rec(s));
    return s->replay && s->txq && s->rxq ? 0 : -1;
}

static inline void spec_lane_free(struct spec_lane *s)
{
    free(s->replay);
    free(s->txq);
    free(s->rxq);
}

/* Queue one packet as frames (META 01 ..., then 11 or 10 with the count in
 * the last payload byte).  Returns false when the queue lacks room. */
static inline bool spec_lane_send(struct spec_lane *s, const uint8_t *p, size_t len)
{
    size_t frames = (len + s->pb - 1) / s->pb;
    if (len == 0 || frames > s->txq_cap - s->txq_count)
        return false;
    for (size_t k = 0; k < frames; k++) {
        uint8_t *r = s->txq + (size_t)((s->txq_head + s->txq_count) % s->txq_cap) * spec_rec(s);
        size_t left = len - k * s->pb;
        memset(r, 0, spec_rec(s));
        if (left > s->pb) {
            r[0] = 1;
            memcpy(r + 1, p + k * s->pb, s->pb);
        } else if (left == s->pb) {
            r[0] = 3;
            memcpy(r + 1, p + k * s->pb, s->pb);
        } else {
            r[0] = 2;
            memcpy(r + 1, p + k * s->pb, left);
            r[s->pb] = (uint8_t)left;
        }
        s->txq_count++;
    }
    return true;
}

/* The oldest delivered frame, or NULL; spec_lane_pop() removes it. */
static inline const uint8_t *spec_lane_peek(const struct spec_lane *s)
{
    return s->rxq_count ? s->rxq + (size_t)s->rxq_head * spec_rec(s) : NULL;
}
static inline void spec_lane_pop(struct spec_lane *s)
{
    s->rxq_head = (s->rxq_head + 1) % s->rxq_cap;
    s->rxq_count--;
}

static inline void spec_send_data(struct spec_lane *s, uint8_t *wire, const uint8_t *rec)
{
    uint8_t *slot = s->replay + (size_t)s->fid * spec_rec(s);
    if (slot != rec)
        memcpy(slot, rec, spec_rec(s));
    rifl_frame_encode(wire, s->F, RIFL_SYN_DATA, slot[0], slot + 1, s->fid, &s->scr);
    s->fid = (s->fid + 1) % s->N;
}

static inline void spec_send_meta00(struct spec_lane *s, uint8_t *wire, uint8_t format)
{
    uint8_t rec[RIFL_PAYLOAD_MAX_BYTES + 1] = { 0 };
    rec[s->pb] = format;
    spec_send_data(s, wire, rec);
}

static inline void spec_send_control(struct spec_lane *s, uint8_t *wire, uint16_t key)
{
    rifl_frame_encode_control(wire, s->F, key, s->fid, &s->scr);
}

/* One slot of the sender: the frame to put on the wire. */
static inline void spec_lane_tx(struct spec_lane *s, uint8_t *wire)
{
    bool pause = s->pcount == 8, retx = s->rcount == 8;
    if (s->ferr)
        s->since_err = 0;
    if (s->init < s->N)
        s->state = SPEC_INIT;
    else if (pause)
        s->state = SPEC_PAUSE;
    else if (retx || s->replaying)
        s->state = SPEC_RETRANS;
    else if (s->ferr)
        s->state = SPEC_SEND_RETRANS;
    else
        s->state = SPEC_NORMAL;

    switch (s->state) {
    case SPEC_INIT:
        memset(s->replay + (size_t)s->init * spec_rec(s), 0, spec_rec(s));
        s->init++;
        spec_send_control(s, wire, RIFL_KEY_PAUSE);
        return;
    case SPEC_PAUSE:
        /* project rule: RETRANSMIT instead of IDLE while frame_error is up */
        spec_send_control(s, wire, s->ferr ? RIFL_KEY_RETRANSMIT : RIFL_KEY_IDLE);
        return;
    case SPEC_SEND_RETRANS:
        spec_send_control(s, wire, RIFL_KEY_RETRANSMIT);
        return;
    case SPEC_RETRANS:
        if (!s->replaying) {
            s->replaying = true;
            s->rslot = 0;
            s->cycles++;
        }
        if (s->rslot < 2 * s->N && s->rslot % 2 == 0)
            spec_send_data(s, wire, s->replay + (size_t)s->fid * spec_rec(s));
        else
            spec_send_control(s, wire, s->ferr ? RIFL_KEY_RETRANSMIT : RIFL_KEY_IDLE);
        if (++s->rslot == 2 * s->N + s->tail) {
            if (retx) {
                s->rslot = 0;
                s->cycles++;
            } else {
                s->replaying = false;
            }
        }
        return;
    default:
        break;
    }
    /* NORMAL */
    s->normal_total++;
    bool resume_wait = s->since_err < s->N;
    if (s->since_err < s->N)
        s->since_err++;
    bool user_ok = s->count_normal_slots ? s->normal_slots >= s->N : s->new_fillers >= s->N;
    s->normal_slots++;
    unsigned occ = s->rxq_count;
    if (!s->fc_sent_on && occ > s->rxq_cap * 2 / 3) {
        s->fc_sent_on = true;
        spec_send_meta00(s, wire, RIFL_FMT_FC_ON);
        return;
    }
    if (s->fc_sent_on && occ < s->rxq_cap / 3) {
        s->fc_sent_on = false;
        spec_send_meta00(s, wire, RIFL_FMT_FC_OFF);
        return;
    }
    if (s->peer_fc_on || resume_wait) {
        spec_send_control(s, wire, RIFL_KEY_IDLE);
        return;
    }
    if (user_ok && s->txq_count) {
        spec_send_data(s, wire, s->txq + (size_t)s->txq_head * spec_rec(s));
        s->txq_head = (s->txq_head + 1) % s->txq_cap;
        s->txq_count--;
        return;
    }
    spec_send_meta00(s, wire, RIFL_FMT_FILLER);
    if (s->new_fillers < s->N)
        s->new_fillers++;
}

/* One slot of the receiver (wire may be NULL: nothing arrived). */
static inline void spec_lane_rx(struct spec_lane *s, const uint8_t *wire)
{
    if (!wire)
        return;
    uint8_t pay[RIFL_PAYLOAD_MAX_BYTES];
    rifl_frame_info fi;
    rifl_frame_decode(wire, s->F, &s->descr, pay, &fi);
    /* monitor: keys read without verification */
    if (fi.syn == RIFL_SYN_CONTROL) {
        s->pcount = fi.key == RIFL_KEY_PAUSE ? (s->pcount < 8 ? s->pcount + 1 : 8) : 0;
        s->rcount = fi.key == RIFL_KEY_RETRANSMIT ? (s->rcount < 8 ? s->rcount + 1 : 8) : 0;
    } else if (s->run == 16) {
        s->pcount = s->rcount = 0;
    }
    if (fi.syn == RIFL_SYN_DATA || (fi.syn == RIFL_SYN_CONTROL && fi.key == RIFL_KEY_IDLE))
        s->run = s->run < 16 ? s->run + 1 : 16;
    else
        s->run = 0;
    /* verification and delivery */
    bool in_step = (s->rfid + 1) % s->N == s->thr;
    bool good = fi.id == s->rfid;
    if (good && fi.syn == RIFL_SYN_DATA && s->rfid == s->thr) {
        bool user = fi.meta != 0;
        if (user && s->rxq_count == s->rxq_cap) {
            good = false; /* no room: handled like a failed verification */
            s->overflow++;
        } else {
            if (user) {
                uint8_t *r = s->rxq + (size_t)((s->rxq_head + s->rxq_count) % s->rxq_cap) * spec_rec(s);
                r[0] = (uint8_t)fi.meta;
                memcpy(r + 1, pay, s->pb);
                s->rxq_count++;
            } else if (fi.format == RIFL_FMT_FC_ON) {
                s->peer_fc_on = true;
            } else if (fi.format == RIFL_FMT_FC_OFF) {
                s->peer_fc_on = false;
            }
            s->thr = (s->thr + 1) % s->N;
        }
    }
    if (!good) {
        s->verify_fail++;
        s->rfid = (s->thr + s->N - 16) % s->N;
        s->ferr = true;
        return;
    }
    if (fi.syn == RIFL_SYN_DATA)
        s->rfid = (s->rfid + 1) % s->N;
    if (s->ferr && in_step)
        s->ferr = false;
}

/* Read the oldest delivered frame's bytes into buf (room for pb bytes).
 * Returns the number of bytes (0 when nothing waits); *eop is set when the
 * frame ends a packet. */
static inline size_t spec_lane_read(struct spec_lane *s, uint8_t *buf, int *eop)
{
    const uint8_t *q = spec_lane_peek(s);
    if (!q)
        return 0;
    size_t valid = q[0] == 2 ? q[s->pb] : s->pb;
    if (valid > s->pb)
        valid = s->pb;
    memcpy(buf, q + 1, valid);
    *eop = (q[0] & 2u) != 0;
    spec_lane_pop(s);
    return valid;
}

#endif

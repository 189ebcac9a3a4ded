/* Quiet runs of a link stepped by reference (lane.h, "Accelerator"): both
 * lanes carried through slots in which nothing reaches a user.
 *
 * While a link recovers from errors most slots look alike: each sender
 * replays, sends RETRANSMIT or waits with IDLE, and each receiver fails
 * verification or skips frames it already has.  Such a slot moves frame IDs,
 * replay positions, the key monitor and counters, and nothing else.  This
 * loop does exactly what rifl_lane_tx_ref and rifl_lane_rx_ref would do in
 * those slots, with the state that changes held in locals and the counters
 * summed at the end, and stops before the first slot that would do anything
 * more: a new frame sent, a frame delivered, or a frame arriving that is not
 * a plain reference. */
#include <string.h>

#include "lane_priv.h"

/* How a sender in NORMAL fares in a quiet run: its flow-control notice,
 * extension frames and the peer's flow control cannot change within one. */
enum normal_mode {
    NORMAL_NEVER,      /* it sends something new */
    NORMAL_ERR_WAIT,   /* it waits out its error wait, then sends */
    NORMAL_ALWAYS,     /* it waits for the peer's flow control */
    NORMAL_SEND        /* it waits out its error wait, then sends user data
                          from its transmit queue, within the run */
};

/* What a quiet slot changes, for one lane. */
struct quiet {
    /* send side */
    unsigned fid, replay_slot, nse;
    unsigned taken;        /* user data frames sent from the transmit queue */
    bool replay_active;
    enum normal_mode normal;
    bool peer_fc_on;
    rifl_tx_state state;
    /* receive side */
    unsigned rfid, thr, pc, rc, run;
    bool fe;
    bool peer_pause, peer_retx; /* out only: the flags, read off the counts
                                   (a flag is up exactly while its count is 8) */
    bool track;            /* the SYN window is kept (own aligner) and not empty */
    uint64_t syn_window;
    unsigned syn_bad;
    /* counters; the others follow from these and the slots */
    uint64_t state_slots[RIFL_TX_STATE_COUNT];
    uint64_t retx, replayed, cycles;
    uint64_t keys[4];      /* by RIFL_KEYIDX_*, then other keys */
    uint64_t frame_errors, good_data, delivered, control, pause_raised, retx_raised;
};

enum { CHUNK = 64 };

/* What one lane does for its users in one chunk of a run: the user data
 * frames it delivers and those it sends. */
struct chunk_io {
    const uint8_t *rec[CHUNK];
    uint8_t at[CHUNK];  /* slot within the chunk */
    unsigned n;
    unsigned room;      /* at most this many (0: none allowed) */
    uint8_t sent_at[CHUNK];
    uint16_t sent_id[CHUNK];
    unsigned sent;
    unsigned send_room; /* at most this many */
    /* the replay buffer entries the sends overwrote, oldest first, so that
     * the chunk can be taken back */
    uint8_t undo[CHUNK][RIFL_FRAME_MAX_BYTES - 1];
};

/* A record the peer sent is a user data frame the receiver would store
 * without complaint (no filler, notice or extension, no bad byte count). */
static bool plain_data(const rifl_lane *l, const uint8_t *rec)
{
    rifl_frame_info fi = { .syn = RIFL_SYN_DATA, .meta = rec[0] & 3u, .format = rec[l->pbytes] };
    return rifl_frame_classify(&fi, l->pbytes) == RIFL_OK && fi.kind == RIFL_KIND_DATA;
}

/* The lane can go through quiet slots at all, from slot `now`. */
static bool quiet_ok(const rifl_lane *l, uint64_t now)
{
    return l->tx_started && l->tx_next == now && l->rx_last <= now &&
           l->init_slots >= l->nfid && !l->tx_hold && l->aligned && l->group_up && l->rx_up &&
           !l->tagged && l->held_count == 0 && l->pause_pending == 0;
}

static void quiet_load(struct quiet *q, const rifl_lane *l, bool sends)
{
    memset(q, 0, sizeof *q);
    q->fid = l->fid;
    q->replay_slot = l->replay_slot;
    q->nse = l->normal_since_err;
    q->replay_active = l->replay_active;
    q->state = l->state;
    bool started = l->new_frames >= 16;
    bool fc = l->cfg.fc_mode == RIFL_LANE_FC_ONOFF && started &&
              (l->rxq.count > l->on_thr ||
               (l->rxq.count >= l->off_thr && l->fc_sent_on)) != l->fc_sent_on;
    bool ext = l->txext.count && started;
    /* user data: after start-up (send_new then changes no more counts) */
    bool user = sends && l->new_fillers >= l->nfid && l->new_frames >= l->nfid;
    q->normal = fc ? NORMAL_NEVER
              : ext ? NORMAL_ERR_WAIT
              : l->peer_fc_on ? NORMAL_ALWAYS
              : user ? NORMAL_SEND : NORMAL_ERR_WAIT;
    q->peer_fc_on = l->peer_fc_on;
    q->rfid = l->rfid;
    q->thr = l->thr;
    q->pc = l->pause_count;
    q->rc = l->retx_count;
    q->run = l->data_run;
    q->fe = l->frame_error;
    q->syn_window = l->syn_window;
    q->syn_bad = l->syn_bad_in_window;
    q->track = l->cfg.rx_lock_frames != 0 && !l->align_ext && l->syn_window != 0;
}

static void quiet_store(const struct quiet *q, rifl_lane *l, uint64_t n)
{
    rifl_lane_stats *st = &l->st;
    txq_taken(l, (unsigned)q->taken);
    st->tx_frames[RIFL_KIND_DATA] += q->taken;
    l->fid = q->fid;
    l->replay_slot = q->replay_slot;
    l->normal_since_err = q->nse;
    l->replay_active = q->replay_active;
    l->state = q->state;
    l->rfid = q->rfid;
    l->thr = q->thr;
    l->pause_count = q->pc;
    l->retx_count = q->rc;
    l->data_run = q->run;
    l->frame_error = q->fe;
    l->peer_pause = q->peer_pause;
    l->peer_retransmit = q->peer_retx;
    l->syn_window = q->syn_window;
    l->syn_bad_in_window = q->syn_bad;
    l->rx_seen += n;
    l->tx_next += n;
    l->rx_last = l->tx_next - 1;
    st->tx_slots += n;
    st->rx_slots += n;
    for (int s = 0; s < RIFL_TX_STATE_COUNT; s++)
        st->tx_state_slots[s] += q->state_slots[s];
    /* every slot sent a replayed or new data frame, a RETRANSMIT or an
     * IDLE */
    st->tx_retransmit += q->retx;
    st->tx_idle += n - q->retx - q->replayed - q->taken;
    st->tx_replayed += q->replayed;
    st->tx_replay_cycles += q->cycles;
    /* NORMAL in a quiet run sends user data or waits, for the peer's flow
     * control or its error wait */
    if (q->peer_fc_on)
        st->tx_fc_wait += q->state_slots[RIFL_TX_NORMAL];
    else
        st->tx_err_wait += q->state_slots[RIFL_TX_NORMAL] - q->taken;
    for (int k = 0; k < RIFL_KEYIDX_COUNT; k++)
        st->rx_keys[k] += q->keys[k];
    st->rx_unknown_key += q->keys[3];
    /* every frame verified (a data frame skipped, a control frame) or not */
    st->rx_verify_fail += n - q->good_data - q->control;
    st->rx_frame_errors += q->frame_errors;
    st->rx_good_data += q->good_data;
    st->rx_skipped += q->good_data - q->delivered;
    st->rx_delivered[RIFL_KIND_DATA] += q->delivered;
    st->rx_control += q->control;
    st->flag_pause_raised += q->pause_raised;
    st->flag_retransmit_raised += q->retx_raised;
}

/* The receive side of a quiet slot.  The key monitor's three counts sit
 * in one word (few registers are left in the loops below): the PAUSE
 * count in bits 0-3, the RETRANSMIT count in bits 4-7, the run of data
 * and IDLE frames from bit 8.  Its flags are the counts at 8 (link rules
 * §6). */
enum { KM_RC = 4, KM_RUN = 8 };

struct rx {
    unsigned rfid, thr, km;
    unsigned back; /* (thr - 16) mod 2^K: where an error sends rfid */
    bool fe;
};

/* (a count never exceeds 8, so its bit 3 is the flag) */
static inline bool rx_pause(const struct rx *s) { return s->km & 8u; }
static inline bool rx_retx(const struct rx *s) { return s->km & 8u << KM_RC; }

/* Frame r ends a quiet run at the receiver: it is no reference, or it would
 * be delivered where that is not allowed. */
static inline bool rx_stops(const rifl_lane *l, const struct rx *s, const rifl_lane_ref *r,
                            const struct chunk_io *io)
{
    unsigned d = r->data;
    return d && (d > 1 || (r->id == s->rfid && s->rfid == s->thr &&
                           (io->n == io->room || !plain_data(l, r->rec))));
}

/* The key monitor km after frame r arrives, its key counted. */
static inline __attribute__((always_inline)) unsigned rx_km(struct quiet *q, unsigned km,
                                                             const rifl_lane_ref *r)
{
    if (r->data) /* (the run stops at 16, its bit 4) */
        return km & 16u << KM_RUN ? 16u << KM_RUN : km + (1u << KM_RUN);
    const uint16_t k = r->key;
    if (k == RIFL_KEY_RETRANSMIT) {
        unsigned rc = km >> KM_RC & 15u;
        q->keys[RIFL_KEYIDX_RETRANSMIT]++;
        q->retx_raised += rc == 7;
        return (rc + (rc < 8)) << KM_RC;
    }
    if (k == RIFL_KEY_IDLE) {
        unsigned run = km >> KM_RUN;
        q->keys[RIFL_KEYIDX_IDLE]++;
        return (run + (run < 16)) << KM_RUN;
    }
    if (k == RIFL_KEY_PAUSE) {
        unsigned pc = km & 15u;
        q->keys[RIFL_KEYIDX_PAUSE]++;
        q->pause_raised += pc == 7;
        return pc + (pc < 8);
    }
    q->keys[3]++;
    return 0;
}

/* rx_frame on frame r, slot j of the chunk: the key monitor, then
 * verification. */
static inline __attribute__((always_inline)) void
rx_step(struct quiet *q, struct rx *s, const rifl_lane_ref *r, unsigned kmask,
        struct chunk_io *io, uint64_t j)
{
    const unsigned d = r->data;
    s->km = rx_km(q, s->km, r);
    if (r->id != s->rfid) {
        q->frame_errors += !s->fe;
        s->fe = true;
        s->rfid = s->back;
        return;
    }
    if (((s->rfid + 1) & kmask) == s->thr)
        s->fe = false;
    if (d) {
        q->good_data++;
        if (s->rfid == s->thr) {
            io->rec[io->n] = r->rec;
            io->at[io->n++] = (uint8_t)j;
            s->thr = (s->thr + 1) & kmask;
            s->back = (s->back + 1) & kmask;
        }
        s->rfid = (s->rfid + 1) & kmask;
    } else {
        q->control++;
    }
}

/* What a RETRANS slot needs besides the receiver. */
struct retrans {
    uint8_t *replay;
    size_t stride;
    unsigned kmask, fid;
    unsigned replayed, retx;
    bool anyfe; /* the receiver was in error at the start of a slot */
};

/* One RETRANS slot at j: a replayed frame (`data`) or a key, then the
 * receive side.  False, with nothing done, when the run stops before it
 * (j == w included). */
static inline __attribute__((always_inline)) bool
retrans_slot(struct quiet *q, const rifl_lane *l, struct rx *rx, struct retrans *t,
             const rifl_lane_ref *in, rifl_lane_ref *out, uint64_t j, uint64_t w,
             struct chunk_io *io, bool data)
{
    const rifl_lane_ref *r = in + j;
    if (j == w || rx_stops(l, rx, r, io))
        return false;
    t->anyfe |= rx->fe;
    if (data) {
        out[j] = (rifl_lane_ref){ t->replay + (size_t)t->fid * t->stride, 0, (uint16_t)t->fid, 1 };
        t->fid = (t->fid + 1) & t->kmask;
        t->replayed++;
    } else {
        out[j] = (rifl_lane_ref){ NULL, rx->fe ? RIFL_KEY_RETRANSMIT : RIFL_KEY_IDLE,
                                  (uint16_t)t->fid, 0 };
        t->retx += rx->fe;
    }
    rx_step(q, rx, r, t->kmask, io, j);
    return true;
}

/* Runs of frames that change nothing but the key monitor and counts,
 * taken in one pass rather than a slot at a time: the result is that of
 * rx_step on each. */

/* A run of k RETRANSMIT or IDLE frames (`key`) with the expected ID,
 * arriving while verification neither fails nor ends an error: control
 * frames, the key monitor's count of that key going up (to 8 or 16) and
 * the others cleared. */
static inline void rx_key_run(struct quiet *q, struct rx *s, uint16_t key, uint64_t k)
{
    q->control += k;
    if (key == RIFL_KEY_RETRANSMIT) {
        unsigned rc = s->km >> KM_RC & 15u;
        q->keys[RIFL_KEYIDX_RETRANSMIT] += k;
        q->retx_raised += rc <= 7 && rc + k >= 8;
        s->km = (unsigned)(rc + k < 8 ? rc + k : 8) << KM_RC;
    } else {
        unsigned run = s->km >> KM_RUN;
        q->keys[RIFL_KEYIDX_IDLE] += k;
        s->km = (unsigned)(run + k < 16 ? run + k : 16) << KM_RUN;
    }
}

/* A run of k frames that fail verification (data frames and `idle` IDLE
 * frames among them) while the receiver is in error and expects the frame
 * its error sent it back to: the run of data and IDLE frames goes up (to
 * 16); an IDLE frame, or a data frame once the run is at 16, clears the
 * other counts. */
static inline void rx_fail_run(struct quiet *q, struct rx *s, uint64_t k, uint64_t idle)
{
    unsigned run = s->km >> KM_RUN;
    unsigned to = (unsigned)(run + k < 16 ? run + k : 16);
    q->keys[RIFL_KEYIDX_IDLE] += idle;
    s->km = idle || k > 16u - run ? to << KM_RUN : (s->km & 0xFFu) | to << KM_RUN;
}

/* A key run for RETRANS slots: frames from in[j] (at most lim of them)
 * that are RETRANSMIT or IDLE, all the same key, with the ID the receiver
 * expects, while its error state cannot change. */
static inline uint64_t key_run_len(const struct rx *s, const rifl_lane_ref *in, uint64_t j,
                                   uint64_t lim, unsigned kmask)
{
    const rifl_lane_ref *h = in + j;
    if (!lim || h->data || h->id != s->rfid ||
        (h->key != RIFL_KEY_RETRANSMIT && h->key != RIFL_KEY_IDLE) ||
        (s->fe && ((s->rfid + 1) & kmask) == s->thr))
        return 0;
    uint64_t k = 1;
    while (k < lim && !h[k].data && h[k].key == h->key && h[k].id == h->id)
        k++;
    return k;
}

/* Pairs of RETRANS slots (a replayed frame, then RETRANSMIT) from in[j], at
 * most lim slots, while the receiver is in error and waits for the frame
 * its error sent it back to: every frame that is neither that one nor
 * built for an error fails, and moves the key monitor alone.  Returns the
 * slots done, an odd count only when PAUSE went up after a replayed frame;
 * *paused when PAUSE went up in the last of them. */
static inline uint64_t wait_pairs(struct quiet *q, struct rx *rx, struct retrans *t,
                                  const rifl_lane_ref *in, rifl_lane_ref *out, uint64_t j,
                                  uint64_t lim, bool *paused)
{
    const unsigned back = rx->back, kmask = t->kmask;
    unsigned km = rx->km, fid = t->fid;
    uint64_t k = 0;
    *paused = false;
    for (; k + 2 <= lim; k += 2) {
        const rifl_lane_ref *f = in + j + k;
        if (f[0].id == back || f[1].id == back || (f[0].data | f[1].data) > 1)
            break;
        out[j + k] = (rifl_lane_ref){ t->replay + (size_t)fid * t->stride, 0, (uint16_t)fid, 1 };
        fid = (fid + 1) & kmask;
        out[j + k + 1] = (rifl_lane_ref){ NULL, RIFL_KEY_RETRANSMIT, (uint16_t)fid, 0 };
        km = rx_km(q, km, f);
        if (km & 8u) {
            k++;
            *paused = true;
            break;
        }
        km = rx_km(q, km, f + 1);
        if (km & 8u) {
            k += 2;
            *paused = true;
            break;
        }
    }
    if (k) {
        rx->km = km;
        t->fid = fid;
        t->replayed += (unsigned)(k + 1) / 2;
        t->retx += (unsigned)k / 2;
        t->anyfe = true;
    }
    return k;
}

/* RETRANS slots past the replayed frames (RETRANSMIT) from in[j], at most
 * lim, while the receiver is in error and waits, as in wait_pairs.
 * Returns the slots done; *paused when PAUSE went up in the last. */
static inline uint64_t wait_keys(struct quiet *q, struct rx *rx, struct retrans *t,
                                 const rifl_lane_ref *in, rifl_lane_ref *out, uint64_t j,
                                 uint64_t lim, bool *paused)
{
    const unsigned back = rx->back;
    const rifl_lane_ref key = { NULL, RIFL_KEY_RETRANSMIT, (uint16_t)t->fid, 0 };
    unsigned km = rx->km;
    uint64_t k = 0;
    *paused = false;
    for (; k < lim; k++) {
        const rifl_lane_ref *f = in + j + k;
        if (f->id == back || f->data > 1)
            break;
        out[j + k] = key;
        km = rx_km(q, km, f);
        if (km & 8u) {
            k++;
            *paused = true;
            break;
        }
    }
    if (k) {
        rx->km = km;
        t->retx += (unsigned)k;
        t->anyfe = true;
    }
    return k;
}

/* RETRANS slots from *j while *rs < end (*rs even): a replayed frame and a
 * key in turn.  False when the run stops or PAUSE ends RETRANS (the slots
 * done counted in *j and *rs). */
static inline __attribute__((always_inline)) bool
retrans_pairs(struct quiet *q, const rifl_lane *l, struct rx *rx, struct retrans *t,
              const rifl_lane_ref *in, rifl_lane_ref *out, uint64_t *j, uint64_t w,
              struct chunk_io *io, unsigned *rs, unsigned end)
{
    uint64_t n = *j;
    unsigned r = *rs;
    bool on = true;
    while (r < end) {
        if (rx->fe && rx->rfid == rx->back) {
            bool paused;
            uint64_t k = wait_pairs(q, rx, t, in, out, n, (w - n < end - r ? w - n : end - r),
                                    &paused);
            n += k;
            r += (unsigned)k;
            if (paused)
                goto stop;
            if (k)
                continue;
        }
        /* a run of keys in: pairs of a replayed frame and a key out */
        uint64_t k = key_run_len(rx, in, n, (w - n < end - r ? w - n : end - r), t->kmask) & ~1ull;
        if (k) {
            const uint16_t key = in[n].key;
            const bool fe = rx->fe;
            const uint16_t kout = fe ? RIFL_KEY_RETRANSMIT : RIFL_KEY_IDLE;
            unsigned fid = t->fid;
            for (uint64_t i = n; i < n + k; i += 2) {
                out[i] = (rifl_lane_ref){ t->replay + (size_t)fid * t->stride, 0, (uint16_t)fid, 1 };
                fid = (fid + 1) & t->kmask;
                out[i + 1] = (rifl_lane_ref){ NULL, kout, (uint16_t)fid, 0 };
            }
            t->fid = fid;
            t->replayed += (unsigned)(k / 2);
            t->retx += fe ? (unsigned)(k / 2) : 0;
            t->anyfe |= fe;
            rx_key_run(q, rx, key, k);
            n += k;
            r += (unsigned)k;
            continue;
        }
        if (!retrans_slot(q, l, rx, t, in, out, n, w, io, true))
            goto stop;
        n++;
        r++;
        if (rx_pause(rx))
            goto stop;
        if (!retrans_slot(q, l, rx, t, in, out, n, w, io, false))
            goto stop;
        n++;
        r++;
        if (rx_pause(rx))
            goto stop;
    }
    goto done;
stop:
    on = false;
done:
    *j = n;
    *rs = r;
    return on;
}

/* Lane l, state *q, through at most w quiet slots: frame j arrives from
 * in[j] and its own goes to out[j].  Returns the slots done: it stops
 * before the first slot that is not quiet for this lane.
 *
 * The send side's state changes seldom: while it replays (or sends
 * RETRANSMIT) a loop of its own carries it, with less to decide per slot;
 * any other slot goes through the general one. */
static uint64_t lane_run(struct quiet *q, rifl_lane *l, const rifl_lane_ref *in,
                         rifl_lane_ref *out, uint64_t w, struct chunk_io *io)
{
    const unsigned nfid = l->nfid, kmask = l->kmask, replay_len = l->replay_len;
    const enum normal_mode normal = q->normal;
    uint8_t *const replay = l->replay;
    const size_t stride = l->txq.stride;
    const unsigned queued = l->txq.count;
    /* the state in locals; the counters stay in *q */
    unsigned fid = q->fid, replay_slot = q->replay_slot, nse = q->nse;
    bool replay_active = q->replay_active;
    struct rx rx = { q->rfid, q->thr, q->pc | q->rc << KM_RC | q->run << KM_RUN,
                     (q->thr - 16) & kmask, q->fe };
    rifl_tx_state state = q->state;
    uint64_t j = 0;
    io->n = 0;
    io->sent = 0;
    while (j < w) {
        bool pp = rx_pause(&rx), pr = rx_retx(&rx);
        if (!pp && (pr || replay_active)) {
            uint64_t j0 = j;
            struct retrans t = { replay, stride, kmask, fid, 0, 0, false };
            if (!replay_active) {
                if (rx_stops(l, &rx, in + j, io))
                    break;
                replay_active = true;
                replay_slot = 0;
                q->cycles++;
            }
            /* the cycle's first 2 * nfid slots: replayed frames and keys
             * in turn, and nothing but PAUSE ends them */
            if (replay_slot < 2 * nfid && (replay_slot & 1u)) {
                if (!retrans_slot(q, l, &rx, &t, in, out, j, w, io, false))
                    goto retrans_end;
                j++;
                replay_slot++;
                if (rx_pause(&rx))
                    goto retrans_end;
            }
            if (!retrans_pairs(q, l, &rx, &t, in, out, &j, w, io, &replay_slot, 2 * nfid))
                goto retrans_end;
            /* the rest: keys; at the end another cycle if the peer asked
             * before the last slot, else RETRANS ends unless it asks in it
             * (then the next pass of the loop around starts another) */
            for (;;) {
                if (rx.fe && rx.rfid == rx.back && replay_slot + 1 < replay_len) {
                    /* (all but the cycle's last slot) */
                    bool paused;
                    uint64_t lim = replay_len - 1 - replay_slot;
                    uint64_t k = wait_keys(q, &rx, &t, in, out, j, w - j < lim ? w - j : lim,
                                           &paused);
                    j += k;
                    replay_slot += (unsigned)k;
                    if (paused)
                        break;
                }
                bool asked = rx_retx(&rx);
                if (!retrans_slot(q, l, &rx, &t, in, out, j, w, io, false))
                    goto retrans_end;
                j++;
                if (++replay_slot >= replay_len) {
                    if (!asked) {
                        replay_active = false;
                        break;
                    }
                    replay_slot = 0;
                    q->cycles++;
                }
                if (rx_pause(&rx))
                    break;
                /* a new cycle: its replayed frames and keys in turn */
                if (!retrans_pairs(q, l, &rx, &t, in, out, &j, w, io, &replay_slot, 2 * nfid))
                    goto retrans_end;
            }
        retrans_end:
            fid = t.fid;
            if (t.anyfe)
                nse = 0;
            q->replayed += t.replayed;
            q->retx += t.retx;
            if (j > j0) {
                state = RIFL_TX_RETRANS;
                q->state_slots[state] += j - j0;
            }
            if (j < w && rx_stops(l, &rx, in + j, io))
                break;
            continue;
        }
        if (!pp && rx.fe) {
            /* SEND_RETRANS: RETRANSMIT until the peer replays or the
             * errors end */
            uint64_t j0 = j;
            const rifl_lane_ref key = { NULL, RIFL_KEY_RETRANSMIT, (uint16_t)fid, 0 };
            while (j < w) {
                if (rx.rfid == rx.back) {
                    /* frames that fail (data and IDLE frames without the
                     * ID it went back to) in one pass */
                    uint64_t k = 0, idle = 0;
                    for (; j + k < w; k++) {
                        const rifl_lane_ref *r = in + j + k;
                        if (r->id == rx.rfid || r->data > 1 ||
                            (!r->data && r->key != RIFL_KEY_IDLE))
                            break;
                        idle += !r->data;
                        out[j + k] = key;
                    }
                    if (k) {
                        rx_fail_run(q, &rx, k, idle);
                        j += k;
                        continue;
                    }
                }
                if (rx_stops(l, &rx, in + j, io))
                    break;
                out[j] = key;
                rx_step(q, &rx, in + j, kmask, io, j);
                j++;
                if (rx_pause(&rx) || rx_retx(&rx) || !rx.fe)
                    break;
            }
            if (j > j0) {
                nse = 0;
                state = RIFL_TX_SEND_RETRANS;
                q->state_slots[state] += j - j0;
                q->retx += j - j0;
            }
            if (j < w && rx_stops(l, &rx, in + j, io))
                break;
            continue;
        }
        if (!pp && (normal == NORMAL_ALWAYS || (normal != NORMAL_NEVER && nse < nfid))) {
            /* NORMAL waiting, for the peer's flow control or out its error
             * wait: IDLE while the receiver takes frames in sequence */
            const uint64_t lim = normal == NORMAL_ALWAYS || w - j < nfid - nse ? w : j + (nfid - nse);
            const rifl_lane_ref idle = { NULL, RIFL_KEY_IDLE, (uint16_t)fid, 0 };
            uint64_t j0 = j;
            while (j < lim && !rx_stops(l, &rx, in + j, io)) {
                out[j] = idle;
                rx_step(q, &rx, in + j, kmask, io, j);
                j++;
                if (rx.km & (8u | 8u << KM_RC) || rx.fe)
                    break;
            }
            if (j > j0) {
                state = RIFL_TX_NORMAL;
                q->state_slots[state] += j - j0;
                nse = j - j0 < nfid - nse ? nse + (unsigned)(j - j0) : nfid;
                continue;
            }
        }
        /* one slot of PAUSE or NORMAL */
        const rifl_lane_ref *r = in + j;
        if (rx_stops(l, &rx, r, io))
            break;
        rifl_lane_ref f = { NULL, RIFL_KEY_IDLE, (uint16_t)fid, 0 };
        if (rx.fe)
            nse = 0;
        if (pp) {
            /* PAUSE: IDLE, or RETRANSMIT while a replay is awaited */
            state = RIFL_TX_PAUSE;
            if (rx.fe) {
                f.key = RIFL_KEY_RETRANSMIT;
                q->retx++;
            }
        } else {
            /* NORMAL: it waits out its error wait or for the peer's flow
             * control, or sends user data where allowed; anything else is
             * not quiet */
            if (!(normal == NORMAL_ALWAYS || (normal != NORMAL_NEVER && nse < nfid) ||
                  (normal == NORMAL_SEND && io->sent < io->send_room && q->taken < queued)))
                break;
            state = RIFL_TX_NORMAL;
            if (nse < nfid) {
                nse++;
            } else if (normal == NORMAL_SEND) {
                /* send_new: the queue's oldest record, kept in the replay
                 * buffer under its ID (what it overwrites kept too) */
                uint8_t *slot = replay + (size_t)fid * stride;
                rec_copy(io->undo[io->sent], slot, stride);
                txq_need(l, (unsigned)q->taken);
                rec_copy(slot, ring_at(&l->txq, q->taken), stride);
                l->replay_z[fid] = RIFL_LANE_Z_UNKNOWN;
                io->sent_at[io->sent] = (uint8_t)j;
                io->sent_id[io->sent++] = (uint16_t)fid;
                q->taken++;
                f = (rifl_lane_ref){ slot, 0, (uint16_t)fid, 1 };
                fid = (fid + 1) & kmask;
            }
        }
        q->state_slots[state]++;
        out[j] = f;
        rx_step(q, &rx, r, kmask, io, j);
        j++;
    }
    if (q->track && j) {
        /* legal frames only: the window moves on with zeros */
        uint64_t win = q->syn_window;
        q->syn_bad -= (unsigned)__builtin_popcountll(j >= 64 ? win : win >> (64 - j));
        q->syn_window = j >= 64 ? 0 : win << j;
    }
    q->fid = fid;
    q->replay_slot = replay_slot;
    q->nse = nse;
    q->replay_active = replay_active;
    q->rfid = rx.rfid;
    q->thr = rx.thr;
    q->pc = rx.km & 15u;
    q->rc = rx.km >> KM_RC & 15u;
    q->run = rx.km >> KM_RUN;
    q->fe = rx.fe;
    q->peer_pause = rx_pause(&rx);
    q->peer_retx = rx_retx(&rx);
    q->state = state;
    return j;
}

/* What lane l did for its users in a chunk that began at slot t0: the
 * frames it delivered into its receive queue, and their slots and those of
 * its sends into the lists. */
static void commit_io(rifl_lane *l, struct quiet *q, const struct chunk_io *c, uint64_t t0,
                      rifl_lane_quiet_io *io, int i)
{
    for (unsigned k = 0; k < c->n; k++) {
        /* (the room was counted before the chunk; stored as rx_frame would:
         * the META bits, then the payload) */
        ring_store(&l->rxq, c->rec[k][0] & 3u, c->rec[k] + 1, l->pbytes);
        io->at[i][io->n[i]++] = t0 + c->at[k];
        q->delivered++;
    }
    for (unsigned k = 0; k < c->sent; k++) {
        io->sent_at[i][io->sent[i]] = t0 + c->sent_at[k];
        io->sent_id[i][io->sent[i]++] = c->sent_id[k];
    }
}

/* Take lane l's chunk back to its start (*q from `start`, and the replay
 * buffer entries its sends overwrote, newest first: an entry can be written
 * twice in a chunk) and go through its first w slots again. */
static void run_again(struct quiet *q, const struct quiet *start, rifl_lane *l,
                      const rifl_lane_ref *in, rifl_lane_ref *out, uint64_t w, struct chunk_io *c)
{
    for (unsigned k = c->sent; k-- > 0;)
        rec_copy(l->replay + (size_t)c->sent_id[k] * l->txq.stride, c->undo[k], l->txq.stride);
    *q = *start;
    lane_run(q, l, in, out, w, c);
}

/* The slots of a chunk in which a lane sent a new frame that no hit
 * spoiled, as bits: the slots that carry its streak on. */
static uint64_t seq_slots(const struct chunk_io *c, uint64_t hits)
{
    uint64_t m = 0;
    for (unsigned k = 0; k < c->sent; k++)
        m |= 1ull << c->sent_at[k];
    return m & ~hits;
}

/* A lane's streak (slots in a row in which it sent a new frame) after the
 * first `upto` slots of a chunk, from `streak` before it. */
static unsigned streak_after(uint64_t seq, uint64_t upto, unsigned streak)
{
    if (!upto)
        return streak;
    uint64_t gaps = ~seq & (upto >= 64 ? ~0ull : (1ull << upto) - 1);
    if (!gaps)
        return streak + (unsigned)upto;
    return (unsigned)(upto - 1 - (uint64_t)(63 - __builtin_clzll(gaps)));
}

/* The slots of a chunk up to and including the first after which both
 * lanes' streaks reach `stop` (`upto` when none does); sent[i]: lane i's
 * new frames in the chunk. */
static uint64_t streak_cut(const uint64_t seq[2], const unsigned sent[2], uint64_t upto,
                           const unsigned streak[2], unsigned stop)
{
    if (sent[0] + streak[0] < stop || sent[1] + streak[1] < stop)
        return upto;
    unsigned s[2] = { streak[0], streak[1] };
    for (uint64_t j = 0; j < upto; j++) {
        for (int i = 0; i < 2; i++)
            s[i] = seq[i] >> j & 1u ? s[i] + 1 : 0;
        if (s[0] >= stop && s[1] >= stop)
            return j + 1;
    }
    return upto;
}

/* Lane i's hits ahead in the run (from entry k on) that fall in the chunk
 * of slots [n, n + w), as bits. */
static uint64_t chunk_hits(const rifl_lane_quiet_io *io, int i, unsigned k, uint64_t n, uint64_t w)
{
    uint64_t m = 0;
    for (; k < io->hits[i] && io->hit_at[i][k] < n + w; k++)
        m |= 1ull << (io->hit_at[i][k] - n);
    return m;
}

/* The run, a chunk at a time: within `delay` slots what each lane receives
 * was sent before the chunk, so each lane goes through the chunk on its
 * own, its frames written aside and put on the cable once both are
 * through.  When lane 1 stops before lane 0, lane 0's chunk is taken back
 * (the replay buffer entries its sends wrote, its state) and it goes again
 * from the chunk's start to where lane 1 stopped.  When both lanes'
 * streaks reach io->streak_stop inside a chunk, both are taken back and go
 * again up to that slot. */
uint64_t rifl_lane_quiet_run(rifl_lane *lane[2], uint64_t now, rifl_lane_ref *cable[2],
                             unsigned delay, unsigned *pos, uint64_t max,
                             rifl_lane_quiet_io *io)
{
    if (io)
        io->n[0] = io->n[1] = io->sent[0] = io->sent[1] = io->hits_done[0] = io->hits_done[1] = 0;
    if (!lane || !lane[0] || !lane[1] || !cable || !cable[0] || !cable[1] || !pos ||
        delay == 0 || *pos >= delay || lane[0]->nfid != lane[1]->nfid || max == 0 ||
        (io && io->cap && (!io->at[0] || !io->at[1])))
        return 0;
    bool sends[2] = { false, false };
    for (int i = 0; io && i < 2; i++) {
        if (io->send_max[i] && io->sent_cap && (!io->sent_at[i] || !io->sent_id[i]))
            return 0;
        sends[i] = io->send_max[i] && io->sent_cap;
        if (io->hits[i] && (!io->hit_at[i] || !io->hit_key[i] || !io->hit_sent[i]))
            return 0;
        for (unsigned k = 1; k < io->hits[i]; k++)
            if (io->hit_at[i][k] <= io->hit_at[i][k - 1])
                return 0;
    }
    unsigned p = *pos;
    rifl_lane_ref *c0 = cable[0], *c1 = cable[1];
    if (c0[p].data > 1 || c1[p].data > 1 || !quiet_ok(lane[0], now) || !quiet_ok(lane[1], now))
        return 0;
    unsigned stop = io ? io->streak_stop : 0;
    unsigned streak[2] = { io ? io->streak[0] : 0, io ? io->streak[1] : 0 };
    if (stop && streak[0] >= stop && streak[1] >= stop)
        return 0;
    struct quiet q[2], keep, keep1;
    quiet_load(&q[0], lane[0], sends[0]);
    quiet_load(&q[1], lane[1], sends[1]);
    /* deliveries: only from empty receive queues, so that the flow control
     * the lanes load (from the queue now) is what a reading user leaves */
    bool deliver = io && io->cap && lane[0]->rxq.count == 0 && lane[1]->rxq.count == 0 &&
                   !lane[0]->align_ext && !lane[1]->align_ext;
    struct chunk_io cio[2];
    rifl_lane_ref out0[CHUNK], out1[CHUNK];
    uint64_t n = 0;
    while (n < max) {
        for (int i = 0; i < 2; i++) {
            unsigned room = 0, send_room = 0;
            if (deliver) {
                unsigned qroom = lane[i]->rxq.cap - lane[i]->rxq.count;
                unsigned lroom = io->cap - io->n[i];
                room = qroom < lroom ? qroom : lroom;
            }
            if (sends[i]) {
                unsigned total = io->send_max[i] < io->sent_cap ? io->send_max[i] : io->sent_cap;
                send_room = total - io->sent[i];
            }
            cio[i].room = room < CHUNK ? room : CHUNK;
            cio[i].send_room = send_room < CHUNK ? send_room : CHUNK;
        }
        uint64_t w = max - n;
        if (w > delay - p)
            w = delay - p;
        if (w > CHUNK)
            w = CHUNK;
        /* each lane writes its frames aside: the cables keep the frames
         * sent before the chunk until both are through it */
        keep = q[0];
        keep1 = q[1];
        /* lane 1 stops before the first frame built for an error that
         * reaches it: lane 0 goes no further, or it would be taken back */
        uint64_t wr = 0;
        while (wr + 4 <= w && (c0[p + wr].data | c0[p + wr + 1].data | c0[p + wr + 2].data |
                               c0[p + wr + 3].data) <= 1)
            wr += 4; /* (values above 1 have a bit above bit 0) */
        while (wr < w && c0[p + wr].data <= 1)
            wr++;
        uint64_t j0 = lane_run(&q[0], lane[0], c1 + p, out0, wr, &cio[0]);
        uint64_t j1 = lane_run(&q[1], lane[1], c0 + p, out1, j0, &cio[1]);
        if (j1 < j0)
            run_again(&q[0], &keep, lane[0], c1 + p, out0, j1, &cio[0]);
        bool ended = j1 < w;
        if (io) {
            uint64_t hm[2], seq[2];
            for (int i = 0; i < 2; i++) {
                hm[i] = chunk_hits(io, i, io->hits_done[i], n, j1);
                seq[i] = seq_slots(&cio[i], hm[i]);
            }
            const unsigned sent[2] = { cio[0].sent, cio[1].sent };
            uint64_t cut = stop ? streak_cut(seq, sent, j1, streak, stop) : j1;
            if (cut < j1) {
                /* both lanes back to the chunk's start, and on to the cut */
                run_again(&q[0], &keep, lane[0], c1 + p, out0, cut, &cio[0]);
                run_again(&q[1], &keep1, lane[1], c0 + p, out1, cut, &cio[1]);
                j1 = cut;
            }
            for (int i = 0; i < 2; i++) {
                streak[i] = streak_after(seq[i], j1, streak[i]);
                /* the frames hit: what the far end makes of them */
                rifl_lane_ref *o = i ? out1 : out0;
                unsigned k = io->hits_done[i];
                for (; k < io->hits[i] && io->hit_at[i][k] < n + j1; k++) {
                    rifl_lane_ref *f = &o[io->hit_at[i][k] - n];
                    io->hit_sent[i][k] = *f;
                    f->id = RIFL_LANE_REF_NO_ID;
                    if (!f->data)
                        f->key ^= io->hit_key[i][k];
                }
                io->hits_done[i] = k;
            }
            ended |= stop && streak[0] >= stop && streak[1] >= stop;
        }
        memcpy(c0 + p, out0, (size_t)j1 * sizeof *out0);
        memcpy(c1 + p, out1, (size_t)j1 * sizeof *out1);
        if (io)
            for (int i = 0; i < 2; i++)
                commit_io(lane[i], &q[i], &cio[i], now + n, io, i);
        n += j1;
        p = p + j1 == delay ? 0 : p + (unsigned)j1;
        if (ended)
            break;
    }
    if (n) {
        quiet_store(&q[0], lane[0], n);
        quiet_store(&q[1], lane[1], n);
        *pos = p;
        if (io) {
            io->streak[0] = streak[0];
            io->streak[1] = streak[1];
        }
    }
    return n;
}

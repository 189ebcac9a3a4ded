/* The RIFL lane engine (link rules §6-§9): sender state machine, replay
 * buffer, receiver verification and delivery, control-key monitor, receive
 * buffer with ON/OFF flow control, user queues.
 *
 * Storage is allocated once in rifl_lane_create.  Every queue is a ring of
 * fixed-size frame records: byte 0 = META (or the extension format code),
 * bytes 1..P/8 = payload. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/lane.h"
#include "lane_priv.h"
#include "link_priv.h"

static const char *const state_names[RIFL_TX_STATE_COUNT] = {
    "INIT", "SEND_PAUSE", "PAUSE", "RETRANS", "SEND_RETRANS", "NORMAL",
};

const char *rifl_tx_state_name(rifl_tx_state s)
{
    return (unsigned)s < RIFL_TX_STATE_COUNT ? state_names[s] : "?";
}

static const char *const rx_names[] = {
    "empty", "not_aligned", "verify_fail", "delivered", "skipped", "control", "overflow",
    "not_up",
};

const char *rifl_rx_result_name(rifl_rx_result r)
{
    return (unsigned)r < sizeof rx_names / sizeof rx_names[0] ? rx_names[r] : "?";
}

/* ------------------------------------------------------------------------ */

/* The one block rifl_lane_create allocates for a lane of (checked) cfg: the
 * lane, a replay key per frame ID, the held frames, and the records of the
 * replay buffer, the queues and the fixed frames.  rifl_lane_config_memory
 * counts by it too, so an estimate made before a network exists is what
 * its lanes then take. */
static size_t lane_bytes(const rifl_lane_config *cfg)
{
    unsigned stride = cfg->frame_bits / 8 - 1; /* META byte + P/8 payload bytes */
    unsigned nfid = 1u << cfg->fid_bits;
    unsigned rxcap = cfg->rx_buffer_frames ? cfg->rx_buffer_frames : 2 * nfid;
    size_t recs = (size_t)nfid + cfg->tx_queue_frames + 2u * cfg->ext_queue_frames + rxcap + 6;
    size_t held_cap = (size_t)cfg->rx_hold_frames + 1;
    return sizeof(rifl_lane) + (size_t)nfid * sizeof(uint64_t) +
           held_cap * sizeof(struct held_frame) + recs * stride;
}

size_t rifl_lane_config_memory(const rifl_lane_config *cfg)
{
    return cfg && rifl_lane_config_check(cfg, NULL, 0) == RIFL_OK ? lane_bytes(cfg) : 0;
}

int rifl_lane_create(const rifl_lane_config *cfg, rifl_lane **out, char *msg,
                     size_t msglen)
{
    if (!out)
        return rifl_null_arg(msg, msglen, "rifl_lane_create", "out");
    *out = NULL;
    int rc = rifl_lane_config_check(cfg, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    unsigned F = cfg->frame_bits;
    unsigned stride = F / 8 - 1; /* META byte + P/8 payload bytes */
    unsigned nfid = 1u << cfg->fid_bits;
    unsigned rxcap = cfg->rx_buffer_frames ? cfg->rx_buffer_frames : 2 * nfid;
    size_t held_cap = (size_t)cfg->rx_hold_frames + 1;
    size_t bytes = lane_bytes(cfg);
    rifl_lane *l = calloc(1, bytes);
    if (!l)
        return RIFL_ERR_NOMEM;
    l->cfg = *cfg;
    l->cfg.rx_buffer_frames = rxcap;
    l->F = F;
    l->fbytes = F / 8;
    l->pbytes = rifl_payload_bytes(F);
    l->nfid = nfid;
    l->kmask = nfid - 1;
    l->on_thr = cfg->fc_on_frames ? cfg->fc_on_frames : rxcap * 2 / 3;
    l->off_thr = cfg->fc_off_frames ? cfg->fc_off_frames : rxcap / 3;
    l->memory = bytes;
    uint8_t *p = (uint8_t *)(l + 1);
    l->replay_z = (uint64_t *)p;
    for (unsigned k = 0; k < nfid; k++)
        l->replay_z[k] = RIFL_LANE_Z_UNKNOWN;
    p += (size_t)nfid * sizeof(uint64_t);
    l->held = (struct held_frame *)p;
    l->held_cap = (unsigned)held_cap;
    p += held_cap * sizeof(struct held_frame);
    l->replay = p;
    p += (size_t)nfid * stride;
    l->txq = (ring){ p, cfg->tx_queue_frames, 0, 0, stride };
    p += (size_t)cfg->tx_queue_frames * stride;
    l->txext = (ring){ p, cfg->ext_queue_frames, 0, 0, stride };
    p += (size_t)cfg->ext_queue_frames * stride;
    l->rxext = (ring){ p, cfg->ext_queue_frames, 0, 0, stride };
    p += (size_t)cfg->ext_queue_frames * stride;
    l->rxq = (ring){ p, rxcap, 0, 0, stride };
    p += (size_t)rxcap * stride;
    l->meta00 = p; /* filler, FC ON, FC OFF: META 00 and the format byte */
    for (unsigned f = 0; f < 3; f++)
        l->meta00[(size_t)f * stride + l->pbytes] = (uint8_t)f;
    if (cfg->lane_tags) {
        /* IDLE, PAUSE, RETRANSMIT: the key's last 14 bits lead the
         * payload, then 0xA5, the lane and the link's lane count */
        static const uint16_t keys[3] = { RIFL_KEY_IDLE, RIFL_KEY_PAUSE, RIFL_KEY_RETRANSMIT };
        l->tagged = l->meta00 + 3u * stride;
        for (unsigned k = 0; k < 3; k++) {
            uint8_t *rec = l->tagged + (size_t)k * stride;
            uint16_t key = keys[k] & 0x3FFFu;
            rec[0] = (uint8_t)(keys[k] >> 14);
            rec[1] = (uint8_t)(key >> 6);
            rec[2] = (uint8_t)((key & 0x3Fu) << 2);
            rec[3] = 0xA5;
            rec[4] = (uint8_t)cfg->lane_index;
            rec[5] = (uint8_t)cfg->lane_count;
            l->tagged_z[k] = rifl_frame_scrambler_after(F, rec[0], rec + 1, 0);
        }
    }

    rifl_scr_map_init(&l->scr_map, F);
    l->scr_idle = rifl_frame_scrambler_after_control(F, RIFL_KEY_IDLE, 0);
    l->scr_retx = rifl_frame_scrambler_after_control(F, RIFL_KEY_RETRANSMIT, 0);
    l->replay_len = 2 * nfid + rifl_lane_replay_tail(cfg);
    l->normal_since_err = nfid; /* no error seen yet: no resume wait */
    l->thr = 16 & l->kmask;
    l->aligned = cfg->rx_lock_frames == 0;
    l->rx_up = true;
    l->group_up = true;
    l->state = RIFL_TX_INIT;
    *out = l;
    return RIFL_OK;
}

void rifl_lane_free(rifl_lane *l) { free(l); }
size_t rifl_lane_memory(const rifl_lane *l) { return l ? l->memory : 0; }
const rifl_lane_config *rifl_lane_get_config(const rifl_lane *l) { return &l->cfg; }
rifl_tx_state rifl_lane_state(const rifl_lane *l) { return l->state; }
unsigned rifl_lane_expected_id(const rifl_lane *l) { return l->rfid; }
unsigned rifl_lane_next_id(const rifl_lane *l) { return l->fid; }
unsigned rifl_lane_replay_frames(const rifl_lane *l) { return l ? l->nfid : 0; }
const rifl_lane_stats *rifl_lane_get_stats(const rifl_lane *l) { return &l->st; }

bool rifl_lane_peer_tag(const rifl_lane *l, unsigned *peer_lane, unsigned *peer_lanes)
{
    if (!l || !l->cfg.lane_tags || l->tag_run < 8)
        return false;
    if (peer_lane)
        *peer_lane = l->tag_lane;
    if (peer_lanes)
        *peer_lanes = l->tag_count;
    return true;
}

rifl_lane_flags rifl_lane_get_flags(const rifl_lane *l)
{
    rifl_lane_flags f = {
        .rx_aligned = l->aligned,
        .rx_up = l->rx_up,
        .group_up = l->group_up,
        .tx_hold = l->tx_hold,
        .tag_ok = l->tag_ok,
        .frame_error = l->frame_error,
        .peer_pause = l->peer_pause,
        .peer_retransmit = l->peer_retransmit,
        .peer_fc_on = l->peer_fc_on,
        .local_fc_on = l->fc_sent_on,
        .replay_active = l->replay_active,
    };
    return f;
}

static void monitor_clear(rifl_lane *l);
static void drop_held(rifl_lane *l);

void rifl_lane_set_rx_aligned(rifl_lane *l, bool aligned)
{
    if (!l)
        return;
    l->align_ext = true;
    if (l->aligned && !aligned)
        l->st.rx_align_lost++;
    if (!aligned)
        drop_held(l);
    if (!aligned)
        monitor_clear(l);
    l->aligned = aligned;
    l->lock_count = 0;
    l->syn_window = 0;
    l->syn_bad_in_window = 0;
}

void rifl_lane_set_rx_up(rifl_lane *l, bool up)
{
    if (l)
        l->rx_up = up;
}

void rifl_lane_set_group_up(rifl_lane *l, bool up)
{
    if (l)
        l->group_up = up;
}

int rifl_lane_hold_tx(rifl_lane *l, bool hold)
{
    if (!l)
        return RIFL_ERR_INVALID_ARG;
    if (hold && l->init_slots > 0)
        return RIFL_ERR_STATE;
    l->tx_hold = hold;
    return RIFL_OK;
}

void rifl_lane_add_pause_slots(rifl_lane *l, unsigned n)
{
    /* every state pays at least every second slot: more than 2 owed is a
     * request the lane could not have kept up with */
    if (n && (uint64_t)l->pause_pending + n > 2)
        l->st.tx_comp_overdue++;
    l->pause_pending = n > UINT32_MAX - l->pause_pending ? UINT32_MAX : l->pause_pending + n;
}

/* ---- transmit ------------------------------------------------------------ */

static inline uint8_t *replay_rec(const rifl_lane *l, unsigned id)
{
    return l->replay + (size_t)id * l->txq.stride;
}

const uint8_t *rifl_lane_replay_record(const rifl_lane *l, unsigned id)
{
    return l && id < l->nfid ? replay_rec(l, id) : NULL;
}

/* The tx path chooses the frame (a struct tx_choice); rifl_lane_tx then
 * builds it, rifl_lane_tx_frame hands it out by content. */
static struct tx_choice send_control(rifl_lane *l, uint16_t key)
{
    unsigned k;
    if (key == RIFL_KEY_IDLE) {
        l->st.tx_idle++;
        k = 0;
    } else if (key == RIFL_KEY_PAUSE) {
        l->st.tx_pause++;
        k = 1;
    } else {
        l->st.tx_retransmit++;
        k = 2;
    }
    const uint8_t *ctl = l->tagged ? l->tagged + (size_t)k * l->txq.stride : NULL;
    return (struct tx_choice){ NULL, key, (uint16_t)l->fid, ctl };
}

/* Send the data frame record `rec` (META + payload) with the current ID and
 * keep it in the replay buffer. */
static struct tx_choice send_data(rifl_lane *l, const uint8_t *rec)
{
    /* the frame is built from the caller's record (written long ago, so its
     * loads need no store forwarding); the replay buffer keeps a copy */
    struct tx_choice f = { rec, 0, (uint16_t)l->fid, NULL };
    uint8_t *slot = replay_rec(l, l->fid);
    if (slot != rec) {
        rec_copy(slot, rec, l->txq.stride);
        l->replay_z[l->fid] = RIFL_LANE_Z_UNKNOWN;
    }
    l->fid = (l->fid + 1) & l->kmask;
    return f;
}

/* A new (not replayed) data frame.  The peer's receiver never delivers IDs
 * 0..15 after reset, so nothing but fillers goes out before 16 new frames,
 * and no user data before 2^K new fillers (link rules §8). */
static struct tx_choice send_new(rifl_lane *l, const uint8_t *rec)
{
    if (l->new_frames < l->nfid)
        l->new_frames++;
    return send_data(l, rec);
}

static struct tx_choice send_meta00(rifl_lane *l, uint8_t format, rifl_frame_kind kind)
{
    /* filler and flow-control records are built once, at creation */
    l->st.tx_frames[kind]++;
    if (kind == RIFL_KIND_FILLER && l->new_fillers < l->nfid)
        l->new_fillers++;
    return send_new(l, l->meta00 + (size_t)format * l->txq.stride);
}

static rifl_tx_state next_state(const rifl_lane *l)
{
    if (l->init_slots < l->nfid)
        return RIFL_TX_INIT;
    if (!l->aligned || !l->rx_up || !l->group_up || (l->tagged && !l->tag_ok))
        return RIFL_TX_SEND_PAUSE;
    if (l->peer_pause)
        return RIFL_TX_PAUSE;
    if (l->peer_retransmit || l->replay_active)
        return RIFL_TX_RETRANS;
    if (l->frame_error)
        return RIFL_TX_SEND_RETRANS;
    return RIFL_TX_NORMAL;
}

/* A replay cycle (link rules §8): in the first 2 x 2^K slots even slots
 * send the oldest buffered frame (which goes back into its entry, so the
 * buffer turns once) and odd slots a RETRANSMIT or IDLE; the tail sends only
 * those.  The cycle starts again if the peer's RETRANSMIT flag is still up at
 * its end.  During start-up the buffer still holds some of the fillers put in
 * at INIT: they are replayed like sent frames, with the IDs they were given. */
static struct tx_choice tx_retrans(rifl_lane *l)
{
    struct tx_choice f;
    if (!l->replay_active) {
        l->replay_active = true;
        l->replay_slot = 0;
        l->st.tx_replay_cycles++;
    }
    if (l->replay_slot < 2 * l->nfid && (l->replay_slot & 1u) == 0) {
        f = send_data(l, replay_rec(l, l->fid));
        l->st.tx_replayed++;
    } else {
        f = send_control(l, l->frame_error ? RIFL_KEY_RETRANSMIT : RIFL_KEY_IDLE);
    }
    if (++l->replay_slot >= l->replay_len) {
        if (l->peer_retransmit) {
            l->replay_slot = 0;
            l->st.tx_replay_cycles++;
        } else {
            l->replay_active = false;
        }
    }
    return f;
}

/* ON/OFF flow control: whether the peer should be stopped, by the receive
 * buffer's occupancy against the thresholds (unchanged between them). */
static bool fc_want(const rifl_lane *l)
{
    unsigned occ = l->rxq.count;
    if (occ > l->on_thr)
        return true;
    if (occ < l->off_thr)
        return false;
    return l->fc_sent_on;
}

static struct tx_choice tx_normal(rifl_lane *l)
{
    /* user data only after 2^K new fillers (link rules §8, rule R3) */
    bool user_ok = l->new_fillers >= l->nfid;
    bool err_wait = l->normal_since_err < l->nfid;
    if (l->normal_since_err < l->nfid)
        l->normal_since_err++;

    if (l->pause_pending) { /* paid for by tx_choose: it is a control frame */
        l->st.tx_clock_comp++;
        return send_control(l, RIFL_KEY_IDLE);
    }
    bool started = l->new_frames >= 16; /* peer delivers from ID 16 on */
    if (l->cfg.fc_mode == RIFL_LANE_FC_ONOFF) {
        bool want = fc_want(l);
        if (want != l->fc_sent_on && started) {
            l->fc_sent_on = want;
            if (want) {
                l->st.fc_on_sent++;
                return send_meta00(l, RIFL_FMT_FC_ON, RIFL_KIND_FC_ON);
            }
            l->st.fc_off_sent++;
            return send_meta00(l, RIFL_FMT_FC_OFF, RIFL_KIND_FC_OFF);
        }
    }
    if (l->txext.count && !err_wait && started) {
        struct tx_choice f = send_new(l, ring_at(&l->txext, 0));
        ring_pop(&l->txext);
        l->st.tx_frames[RIFL_KIND_EXT]++;
        return f;
    }
    if (l->peer_fc_on) {
        l->st.tx_fc_wait++;
        return send_control(l, RIFL_KEY_IDLE);
    }
    if (err_wait) {
        l->st.tx_err_wait++;
        return send_control(l, RIFL_KEY_IDLE);
    }
    if (user_ok && l->txq.count) {
        txq_need(l, 0);
        struct tx_choice f = send_new(l, ring_at(&l->txq, 0));
        txq_taken(l, 1);
        l->st.tx_frames[RIFL_KIND_DATA]++;
        return f;
    }
    return send_meta00(l, RIFL_FMT_FILLER, RIFL_KIND_FILLER);
}

bool rifl_lane_tx_ready(const rifl_lane *l)
{
    /* next_state() and tx_normal() without their side effects */
    if (!l || l->tx_hold || l->init_slots < l->nfid || !l->aligned || !l->rx_up || !l->group_up ||
        (l->tagged && !l->tag_ok) ||
        l->peer_pause || l->peer_retransmit || l->replay_active || l->frame_error)
        return false;
    if (l->new_fillers < l->nfid || l->normal_since_err < l->nfid || l->pause_pending)
        return false;
    bool started = l->new_frames >= 16;
    if (l->cfg.fc_mode == RIFL_LANE_FC_ONOFF && started && fc_want(l) != l->fc_sent_on)
        return false;
    if (l->txext.count && started)
        return false;
    return !l->peer_fc_on;
}

/* Choices travel by value: they stay in registers (a struct written field
 * by field and read back whole would stall store forwarding). */
static struct tx_choice tx_choose_state(rifl_lane *l);

/* Clock compensation (rifl-multilane §3, rule 3): every slot in which the
 * lane sends a control frame, in any state, pays one compensation slot
 * owed. */
static struct tx_choice tx_choose(rifl_lane *l)
{
    struct tx_choice c = tx_choose_state(l);
    if (!c.rec && l->pause_pending)
        l->pause_pending--;
    return c;
}

static struct tx_choice tx_choose_state(rifl_lane *l)
{
    if (l->frame_error)
        l->normal_since_err = 0;
    rifl_tx_state s = next_state(l);
    l->state = s;
    l->st.tx_slots++;
    l->st.tx_state_slots[s]++;
    switch (s) {
    case RIFL_TX_INIT: {
        if (l->tx_hold) /* held in reset: PAUSE with ID 0 */
            return send_control(l, RIFL_KEY_PAUSE);
        /* fill the replay buffer with filler frames, IDs 0 .. 2^K-1 */
        uint8_t *rec = replay_rec(l, l->init_slots);
        memset(rec, 0, l->txq.stride);
        l->replay_z[l->init_slots] = RIFL_LANE_Z_UNKNOWN;
        l->init_slots++;
        return send_control(l, RIFL_KEY_PAUSE);
    }
    case RIFL_TX_SEND_PAUSE:
        return send_control(l, RIFL_KEY_PAUSE);
    case RIFL_TX_PAUSE:
        /* (project rule: a receiver waiting for a replay keeps asking for
         * it while paused, so the peer replays before it sends anything
         * new) */
        return send_control(l, l->frame_error ? RIFL_KEY_RETRANSMIT : RIFL_KEY_IDLE);
    case RIFL_TX_RETRANS:
        return tx_retrans(l);
    case RIFL_TX_SEND_RETRANS:
        return send_control(l, RIFL_KEY_RETRANSMIT);
    default:
        return tx_normal(l);
    }
}

static void encode_frame(unsigned F, const struct tx_choice *f, uint8_t *wire, uint64_t *scr)
{
    if (f->rec)
        rifl_frame_encode(wire, F, RIFL_SYN_DATA, f->rec[0] & 3u, f->rec + 1, f->id, scr);
    else if (f->ctl)
        rifl_frame_encode(wire, F, RIFL_SYN_CONTROL, f->ctl[0] & 3u, f->ctl + 1, f->id, scr);
    else
        rifl_frame_encode_control(wire, F, f->key, f->id, scr);
}

int rifl_lane_tx(rifl_lane *l, uint64_t now, uint8_t *wire)
{
    if (!l || !wire)
        return RIFL_ERR_INVALID_ARG;
    if (l->scr_behind)
        return RIFL_ERR_STATE; /* frames by content wait for their encoder */
    if (!rifl_lane_tx_slot(l, now))
        return RIFL_ERR_STATE;
    struct tx_choice c = tx_choose(l);
    encode_frame(l->F, &c, wire, &l->scr);
    return RIFL_OK;
}

int rifl_lane_tx_frame(rifl_lane *l, uint64_t now, rifl_lane_frame *f)
{
    if (!l || !f)
        return RIFL_ERR_INVALID_ARG;
    if (!rifl_lane_tx_slot(l, now))
        return RIFL_ERR_STATE;
    struct tx_choice c = tx_choose(l);
    if (l->scr_deferred) {
        /* the frame without its scrambler states: the batch encoder
         * works them out from the first frame's (rifl_lane_frames_encode) */
        rifl_lane_fill_record(l, c, f);
        f->scr = l->scr_behind ? RIFL_LANE_SCR_FOLLOWS : l->scr;
        f->scr_next = RIFL_LANE_SCR_FOLLOWS;
        l->scr_behind = true;
        return RIFL_OK;
    }
    rifl_lane_fill_frame(l, c, f);
    return RIFL_OK;
}

int rifl_lane_defer_scrambler(rifl_lane *l, bool on)
{
    if (!l || (!on && l->scr_behind))
        return l ? RIFL_ERR_STATE : RIFL_ERR_INVALID_ARG;
    l->scr_deferred = on;
    return RIFL_OK;
}

int rifl_lane_tx_ref(rifl_lane *l, uint64_t now, rifl_lane_ref *f)
{
    if (!l || !f || l->tagged)
        return RIFL_ERR_INVALID_ARG;
    if (!rifl_lane_tx_slot(l, now))
        return RIFL_ERR_STATE;
    struct tx_choice c = tx_choose(l);
    /* a data frame's record as the replay buffer keeps it under its ID:
     * there it outlives the frame's time in flight */
    f->rec = c.rec ? replay_rec(l, c.id) : NULL;
    f->key = c.key;
    f->id = c.id;
    f->data = c.rec != NULL;
    return RIFL_OK;
}

int rifl_lane_ref_frame(rifl_lane *l, const rifl_lane_ref *ref, rifl_lane_frame *f)
{
    if (!l || !ref || !f || ref->id > l->kmask || ref->data > 1 || (ref->data && !ref->rec))
        return RIFL_ERR_INVALID_ARG;
    struct tx_choice c = { ref->data ? ref->rec : NULL, ref->key, ref->id, NULL };
    rifl_lane_fill_frame(l, c, f);
    return RIFL_OK;
}

int rifl_lane_ref_chain(rifl_lane *l, uint64_t scr)
{
    if (!l)
        return RIFL_ERR_INVALID_ARG;
    l->scr = scr;
    return RIFL_OK;
}

uint64_t rifl_lane_rx_scrambler(const rifl_lane *l) { return l ? l->descr : 0; }

size_t rifl_lane_frame_bytes(unsigned frame_bits)
{
    if (rifl_frame_width_check(frame_bits) != RIFL_OK)
        return 0;
    /* rounded up so that frames laid end to end stay aligned */
    size_t n = offsetof(rifl_lane_frame, rec) + frame_bits / 8 - 1;
    size_t a = _Alignof(rifl_lane_frame);
    return (n + a - 1) / a * a;
}

int rifl_lane_frame_encode(const rifl_lane_frame *f, unsigned frame_bits, uint8_t *wire)
{
    if (!f || !wire || rifl_frame_width_check(frame_bits) != RIFL_OK || f->id > 0xFFF)
        return RIFL_ERR_INVALID_ARG;
    uint64_t scr = f->scr & RIFL_SCRAMBLER_MASK;
    struct tx_choice c = { f->data == 1 ? f->rec : NULL, f->key, f->id,
                           f->data == 2 ? f->rec : NULL };
    encode_frame(frame_bits, &c, wire, &scr);
    return RIFL_OK;
}

void rifl_lane_phy_encode(const void *frame, uint8_t *wire, void *lane)
{
    rifl_lane_frame_encode(frame, ((const rifl_lane *)lane)->F, wire);
}

/* Frames for one batch call of the codec, at most this many at a time. */
#define ENCODE_BATCH 32

int rifl_lane_frames_encode(const void *frames, size_t stride, unsigned n, unsigned frame_bits,
                            uint8_t *wire, uint64_t *scr_after)
{
    if ((n && (!frames || !wire)) || rifl_frame_width_check(frame_bits) != RIFL_OK ||
        stride < rifl_lane_frame_bytes(frame_bits) ||
        (n && ((const rifl_lane_frame *)frames)->scr == RIFL_LANE_SCR_FOLLOWS))
        return RIFL_ERR_INVALID_ARG;
    uint64_t scr = 0;
    const unsigned fb = frame_bits / 8, pb = rifl_payload_bytes(frame_bits);
    uint8_t syn[ENCODE_BATCH], meta[ENCODE_BATCH];
    uint16_t ids[ENCODE_BATCH];
    uint8_t pay[ENCODE_BATCH * RIFL_PAYLOAD_MAX_BYTES];
    const uint8_t *base = frames;
    unsigned done = 0;
    while (done < n) {
        const rifl_lane_frame *first = (const rifl_lane_frame *)(base + done * stride);
        /* a frame that follows on goes on from the state the last batch
         * ended in */
        if (first->scr != RIFL_LANE_SCR_FOLLOWS)
            scr = first->scr & RIFL_SCRAMBLER_MASK;
        uint64_t chain = scr;
        unsigned k = 0;
        /* a run of frames of one stream: each starts where the last ended */
        for (; k < ENCODE_BATCH && done + k < n; k++) {
            const rifl_lane_frame *f = (const rifl_lane_frame *)(base + (done + k) * stride);
            if (f->scr != RIFL_LANE_SCR_FOLLOWS && (f->scr & RIFL_SCRAMBLER_MASK) != chain)
                break;
            if (f->id > 0xFFF)
                return RIFL_ERR_INVALID_ARG;
            chain = f->scr_next & RIFL_SCRAMBLER_MASK;
            uint8_t *p = pay + (size_t)k * pb;
            ids[k] = f->id;
            if (f->data) {
                /* a data frame, or a control frame with a lane tag: META
                 * and payload as kept */
                syn[k] = f->data == 1 ? RIFL_SYN_DATA : RIFL_SYN_CONTROL;
                meta[k] = f->rec[0] & 3u;
                memcpy(p, f->rec + 1, pb);
            } else {
                /* a control frame: the key's top two bits in META, its
                 * last 14 leading the payload (as rifl_frame_encode_control
                 * lays them out) */
                syn[k] = RIFL_SYN_CONTROL;
                meta[k] = (uint8_t)(f->key >> 14);
                memset(p, 0, pb);
                p[0] = (uint8_t)((f->key & 0x3FFFu) >> 6);
                p[1] = (uint8_t)((f->key & 0x3Fu) << 2);
            }
        }
        int rc = rifl_frame_encode_batch(wire + (size_t)done * fb, frame_bits, k, syn, meta, pay,
                                         ids, &scr);
        if (rc != RIFL_OK)
            return rc;
        done += k;
    }
    if (scr_after)
        *scr_after = scr;
    return RIFL_OK;
}

void rifl_lane_phy_encode_batch(const void *frames, size_t stride, unsigned n, uint8_t *wire,
                                void *lane)
{
    rifl_lane *l = lane;
    uint64_t scr;
    if (rifl_lane_frames_encode(frames, stride, n, l->F, wire, &scr) == RIFL_OK && n &&
        l->scr_behind) {
        /* the records were the lane's last: its state is theirs now */
        l->scr = scr;
        l->scr_behind = false;
    }
}

/* ---- receive ------------------------------------------------------------- */

/* Control-frame monitor, link rules §6, run on every frame while the lane
 * is aligned.  A count goes up on its key and is cleared by any other control
 * key; a run of more than 16 data (or IDLE) frames clears both.  A flag is up
 * exactly while its count is 8. */
static void monitor_frame(rifl_lane *l, unsigned syn, uint16_t key)
{
    if (syn == RIFL_SYN_CONTROL) {
        bool pause = key == RIFL_KEY_PAUSE, retx = key == RIFL_KEY_RETRANSMIT;
        l->pause_count = pause ? l->pause_count + (l->pause_count < 8) : 0;
        l->retx_count = retx ? l->retx_count + (l->retx_count < 8) : 0;
        if (key == RIFL_KEY_IDLE)
            l->st.rx_keys[RIFL_KEYIDX_IDLE]++;
        else if (pause)
            l->st.rx_keys[RIFL_KEYIDX_PAUSE]++;
        else if (retx)
            l->st.rx_keys[RIFL_KEYIDX_RETRANSMIT]++;
        else
            l->st.rx_unknown_key++;
    } else if (l->data_run == 16) {
        l->pause_count = 0;
        l->retx_count = 0;
    }
    /* (the key is read off every frame, an illegal SYN's too) */
    bool run = syn == RIFL_SYN_DATA || key == RIFL_KEY_IDLE;
    l->data_run = run ? l->data_run + (l->data_run < 16) : 0;

    bool pause_flag = l->pause_count == 8, retx_flag = l->retx_count == 8;
    if (pause_flag && !l->peer_pause)
        l->st.flag_pause_raised++;
    if (retx_flag && !l->peer_retransmit)
        l->st.flag_retransmit_raised++;
    l->peer_pause = pause_flag;
    l->peer_retransmit = retx_flag;
}

/* While the lane is not aligned every count is 0 and both flags are down;
 * lane tags start again. */
static void monitor_clear(rifl_lane *l)
{
    l->pause_count = l->retx_count = l->data_run = 0;
    l->peer_pause = l->peer_retransmit = false;
    l->tag_run = 0;
    l->tag_ok = false;
}

/* Lane tags (rifl-multilane §5.1), read from control frames like keys:
 * 8 agreeing tags in a row decide whether the lane receives the peer lane
 * of its own number on a link of its own lane count. */
static void track_tag(rifl_lane *l, const uint8_t *payload)
{
    if (!payload || payload[2] != 0xA5) {
        l->tag_run = 0;
        l->st.rx_untagged++;
        return;
    }
    if (l->tag_run && payload[3] == l->tag_lane && payload[4] == l->tag_count) {
        if (l->tag_run < 8)
            l->tag_run++;
        else
            return;
    } else {
        l->tag_lane = payload[3];
        l->tag_count = payload[4];
        l->tag_run = 1;
    }
    if (l->tag_run < 8)
        return;
    bool own = l->tag_lane == l->cfg.lane_index && l->tag_count == l->cfg.lane_count;
    if (!own)
        l->st.rx_lane_swap++;
    l->tag_ok = own;
}

/* Alignment loss: 16 illegal SYN headers within the last 64 frames.  Returns
 * false when this frame made the lane lose alignment. */
static bool track_alignment(rifl_lane *l, bool legal)
{
    if (l->cfg.rx_lock_frames == 0 || l->align_ext)
        return true;
    bool out = (l->syn_window >> 63) & 1u;
    l->syn_window = (l->syn_window << 1) | (legal ? 0u : 1u);
    l->syn_bad_in_window += (legal ? 0u : 1u);
    l->syn_bad_in_window -= out ? 1u : 0u;
    if (l->syn_bad_in_window >= 16) {
        l->aligned = false;
        l->st.rx_align_lost++;
        l->lock_count = 0;
        l->syn_window = 0;
        l->syn_bad_in_window = 0;
        monitor_clear(l);
        l->st.rx_not_aligned++;
        return false;
    }
    return true;
}

/* A frame not taken: raise frame_error and roll the expected ID back 16
 * frames (link rules §7), so the peer's replay brings it again. */
static int rx_reject(rifl_lane *l, int result)
{
    if (!l->frame_error)
        l->st.rx_frame_errors++;
    l->frame_error = true;
    l->rfid = (l->thr - 16) & l->kmask;
    return result;
}

static int rx_frame(rifl_lane *l, const rifl_frame_info *fi, const uint8_t *payload, int drc);

/* rifl_lane_rx once the slot is checked */
static int rx_wire(rifl_lane *l, const uint8_t *wire, rifl_frame_info *info)
{
    l->st.rx_slots++;
    if (!wire) {
        l->st.rx_empty++;
        return RIFL_RX_EMPTY;
    }
    rifl_frame_info local;
    rifl_frame_info *fi = info ? info : &local;
    uint8_t payload[RIFL_PAYLOAD_MAX_BYTES];
    int drc = rifl_frame_decode(wire, l->F, &l->descr, payload, fi);
    return rx_frame(l, fi, payload, drc);
}

int rifl_lane_rx(rifl_lane *l, uint64_t now, const uint8_t *wire, rifl_frame_info *info)
{
    if (!l)
        return RIFL_ERR_INVALID_ARG;
    if (!rifl_lane_rx_slot(l, now))
        return RIFL_ERR_STATE;
    return rx_wire(l, wire, info);
}

/* Frames decoded per batch call of the codec in rifl_lane_rx_batch. */
#define RX_BATCH 32

int rifl_lane_rx_batch(rifl_lane *l, uint64_t now, const uint8_t *wire, unsigned n)
{
    if (!l || (n && !wire))
        return RIFL_ERR_INVALID_ARG;
    if (!rifl_lane_rx_slot(l, now))
        return RIFL_ERR_STATE;
    if (!n) {
        rx_wire(l, NULL, NULL);
        return RIFL_OK;
    }
    const unsigned fb = l->F / 8;
    uint8_t payloads[RX_BATCH * RIFL_PAYLOAD_MAX_BYTES];
    rifl_frame_info infos[RX_BATCH];
    for (unsigned done = 0; done < n;) {
        unsigned k = n - done < RX_BATCH ? n - done : RX_BATCH;
        /* the descrambler runs through the frames whatever the lane makes
         * of them, so decoding them first is what rx_wire does one by one */
        rifl_frame_decode_batch(wire + (size_t)done * fb, l->F, k, &l->descr, payloads, infos);
        for (unsigned j = 0; j < k; j++) {
            l->st.rx_slots++;
            int drc = rifl_frame_classify(&infos[j], l->pbytes);
            rx_frame(l, &infos[j], payloads + (size_t)j * l->pbytes, drc);
        }
        done += k;
    }
    return RIFL_OK;
}

/* A frame received in step: the decoder would return exactly what the
 * sender put in (data: 1 a data frame, 2 a tagged control frame; rec its
 * record). */
static int rx_in_step(rifl_lane *l, uint16_t key, uint16_t id, uint8_t data, const uint8_t *rec)
{
    l->st.rx_slots++;
    rifl_frame_info fi;
    const uint8_t *payload = NULL;
    if (data == 1) {
        payload = rec + 1;
        fi.syn = RIFL_SYN_DATA;
        fi.meta = rec[0] & 3u;
        fi.key = (uint16_t)(fi.meta << 14 | (unsigned)payload[0] << 6 | payload[1] >> 2);
        fi.format = payload[l->pbytes - 1];
    } else {
        fi.syn = RIFL_SYN_CONTROL;
        fi.meta = key >> 14;
        fi.key = key;
        fi.format = 0; /* payload bytes after the key are zero, or a tag */
        if (data == 2)
            payload = rec + 1;
    }
    fi.id = id;
    fi.crc = 0;
    fi.vcode = 0;
    int drc = rifl_frame_classify(&fi, l->pbytes);
    return rx_frame(l, &fi, payload, drc);
}

int rifl_lane_rx_frame(rifl_lane *l, uint64_t now, const rifl_lane_frame *f,
                       rifl_frame_info *info)
{
    if (!l || (f && f->id > 0xFFF))
        return RIFL_ERR_INVALID_ARG;
    if (!rifl_lane_rx_slot(l, now))
        return RIFL_ERR_STATE;
    if (!f)
        return rx_wire(l, NULL, info);
    if (info || f->scr != l->descr) {
        uint8_t wire[RIFL_FRAME_MAX_BYTES];
        rifl_lane_frame_encode(f, l->F, wire);
        return rx_wire(l, wire, info);
    }
    l->descr = f->scr_next;
    return rx_in_step(l, f->key, f->id, f->data, f->rec);
}

int rifl_lane_rx_ref(rifl_lane *l, uint64_t now, const rifl_lane_ref *f)
{
    if (!l || (f && ((f->id > l->kmask && f->id != RIFL_LANE_REF_NO_ID) || f->data > 1 ||
                     (f->data && !f->rec))))
        return RIFL_ERR_INVALID_ARG;
    if (!rifl_lane_rx_slot(l, now))
        return RIFL_ERR_STATE;
    if (!f)
        return rx_wire(l, NULL, NULL);
    return rx_in_step(l, f->key, f->id, f->data, f->rec);
}

/* A frame delivered takes effect: flow-control notices apply, and it is
 * counted. */
static void delivered(rifl_lane *l, unsigned kind)
{
    if (kind == RIFL_KIND_FC_ON) {
        if (l->cfg.fc_mode == RIFL_LANE_FC_ONOFF)
            l->peer_fc_on = true;
        l->st.fc_on_received++;
    } else if (kind == RIFL_KIND_FC_OFF) {
        l->peer_fc_on = false;
        l->st.fc_off_received++;
    }
    l->st.rx_delivered[kind]++;
}

/* Held frames whose wait is over: readable, applied, counted. */
static void release_held(rifl_lane *l)
{
    while (l->held_count && l->held[l->held_head].at <= l->rx_seen) {
        unsigned kind = l->held[l->held_head].kind;
        if (kind == RIFL_KIND_DATA)
            l->held_data--;
        else if (kind == RIFL_KIND_EXT)
            l->held_ext--;
        delivered(l, kind);
        l->held_head = l->held_head + 1 == l->held_cap ? 0 : l->held_head + 1;
        l->held_count--;
    }
}

/* The aligner unlocked: the held frames may have been misread.  They are
 * dropped as if the first of them had failed verification, so the peer
 * replays them all. */
static void drop_held(rifl_lane *l)
{
    if (!l->held_count)
        return;
    l->rxq.count -= l->held_data;
    l->rxext.count -= l->held_ext;
    l->thr = (l->thr - l->held_count) & l->kmask;
    l->st.rx_hold_dropped += l->held_count;
    l->held_count = l->held_data = l->held_ext = 0;
    l->held_head = 0;
    if (!l->frame_error)
        l->st.rx_frame_errors++;
    l->frame_error = true;
    l->rfid = (l->thr - 16) & l->kmask;
}

/* Everything after decoding. */
static int rx_frame(rifl_lane *l, const rifl_frame_info *fi, const uint8_t *payload, int drc)
{
    bool legal = fi->syn == RIFL_SYN_DATA || fi->syn == RIFL_SYN_CONTROL;
    if (!legal)
        l->st.rx_bad_syn++;

    if (!l->aligned) {
        l->lock_count = legal ? l->lock_count + 1 : 0;
        if (!l->align_ext && l->lock_count >= l->cfg.rx_lock_frames) {
            l->aligned = true;
            l->syn_window = 0;
            l->syn_bad_in_window = 0;
        }
        l->st.rx_not_aligned++;
        return RIFL_RX_NOT_ALIGNED;
    }
    if (!track_alignment(l, legal))
        return RIFL_RX_NOT_ALIGNED;
    monitor_frame(l, fi->syn, fi->key);
    if (l->tagged && fi->syn == RIFL_SYN_CONTROL)
        track_tag(l, payload);
    if (!l->rx_up) {
        l->st.rx_not_up++;
        return RIFL_RX_NOT_UP;
    }
    l->rx_seen++;
    if (l->held_count)
        release_held(l);

    if (fi->id != l->rfid) {
        l->st.rx_verify_fail++;
        return rx_reject(l, RIFL_RX_VERIFY_FAIL);
    }
    bool in_step = ((l->rfid + 1) & l->kmask) == l->thr;
    int res = RIFL_RX_CONTROL;
    if (fi->syn == RIFL_SYN_DATA) {
        l->st.rx_good_data++;
        if (l->rfid == l->thr) {
            bool ok = true;
            bool hold = l->align_ext && l->cfg.rx_hold_frames;
            if (fi->kind == RIFL_KIND_DATA) {
                if (drc == RIFL_ERR_FRAME)
                    l->st.rx_bad_format++;
                ok = ring_store(&l->rxq, (uint8_t)fi->meta, payload, l->pbytes);
                l->held_data += ok && hold;
            } else if (fi->kind == RIFL_KIND_EXT) {
                ok = ring_store(&l->rxext, fi->format, payload, l->pbytes);
                l->held_ext += ok && hold;
            }
            if (!ok) {
                /* no room: handle it like a lost frame, so the peer replays it
                 * once the user has made room; nothing is dropped */
                l->st.rx_overflow++;
                return rx_reject(l, RIFL_RX_OVERFLOW);
            }
            if (hold) {
                struct held_frame *h = &l->held[(l->held_head + l->held_count) % l->held_cap];
                h->at = l->rx_seen + l->cfg.rx_hold_frames;
                h->kind = (uint8_t)fi->kind;
                l->held_count++;
            } else {
                delivered(l, fi->kind);
            }
            l->thr = (l->thr + 1) & l->kmask;
            res = RIFL_RX_DELIVERED;
        } else {
            l->st.rx_skipped++;
            res = RIFL_RX_SKIPPED;
        }
        l->rfid = (l->rfid + 1) & l->kmask;
    } else if (fi->syn == RIFL_SYN_CONTROL) {
        l->st.rx_control++;
    } else {
        return res; /* an illegal SYN (counted above) that checks: no data,
                       no control, and not a frame that ends frame_error */
    }
    if (l->frame_error && in_step)
        l->frame_error = false;
    return res;
}

/* ---- user side ----------------------------------------------------------- */

size_t rifl_lane_send_space(const rifl_lane *l)
{
    if (!l)
        return 0;
    return (size_t)(l->txq.cap - l->txq.count) * l->pbytes;
}

/* Segment `len` bytes into frame records; `end` marks the last frame of the
 * packet.  The caller has checked the room. */
static size_t frames_of(const rifl_lane *l, size_t len)
{
    return len / l->pbytes + (len % l->pbytes != 0); /* (no wrap near SIZE_MAX) */
}

static void enqueue(rifl_lane *l, const uint8_t *p, size_t len, bool end)
{
    size_t frames = frames_of(l, len);
    for (size_t k = 0; k < frames; k++) {
        rifl_lane_make_record(l, p, len, k, end, ring_tail(&l->txq));
        ring_push(&l->txq);
    }
}

int rifl_lane_send_part(rifl_lane *l, const void *data, size_t len, int end, size_t *taken)
{
    if (!l || !taken || (!data && len) || len == 0)
        return RIFL_ERR_INVALID_ARG;
    *taken = 0;
    size_t room = l->txq.cap - l->txq.count;
    size_t need = frames_of(l, len);
    if (end && need <= room) {
        enqueue(l, data, len, true);
        *taken = len;
        l->st.tx_packets++;
    } else {
        size_t full = len / l->pbytes;
        if (full == need && end)
            full--; /* keep the packet's last frame until it can end it */
        if (full > room)
            full = room;
        enqueue(l, data, full * l->pbytes, false);
        *taken = full * l->pbytes;
        if (!full && !room)
            l->st.tx_rejected++; /* (less than a frame without its end is no refusal) */
    }
    l->st.tx_bytes += *taken;
    return RIFL_OK;
}

int rifl_lane_send(rifl_lane *l, const void *pkt, size_t len)
{
    if (!l || (!pkt && len) || len == 0)
        return RIFL_ERR_INVALID_ARG;
    /* ceil(len / P) > n exactly when len > n P: no division per call */
    if (len > (size_t)l->txq.cap * l->pbytes)
        return RIFL_ERR_TOO_BIG;
    if (len > (size_t)(l->txq.cap - l->txq.count) * l->pbytes) {
        l->st.tx_rejected++;
        return RIFL_ERR_AGAIN;
    }
    enqueue(l, pkt, len, true);
    l->st.tx_packets++;
    l->st.tx_bytes += len;
    return RIFL_OK;
}

int rifl_lane_count_refused(rifl_lane *l, uint64_t n)
{
    if (!l)
        return RIFL_ERR_INVALID_ARG;
    /* (a count that would pass 2^64 - 1 stays there) */
    l->st.tx_rejected = l->st.tx_rejected > UINT64_MAX - n ? UINT64_MAX : l->st.tx_rejected + n;
    return RIFL_OK;
}

static unsigned rec_valid(const rifl_lane *l, const uint8_t *rec)
{
    if (rec[0] == RIFL_META_PARTIAL_EOP) {
        unsigned n = rec[l->pbytes];
        if (n == 0)
            return 0;
        return n < l->pbytes ? n : l->pbytes - 1;
    }
    return l->pbytes;
}

int rifl_lane_read(rifl_lane *l, void *buf, size_t cap, size_t *len, int *eop)
{
    if (!l || !buf || cap == 0)
        return RIFL_ERR_INVALID_ARG;
    size_t n = 0;
    int end = 0;
    unsigned frames = l->rxq.count - l->held_data; /* held frames wait */
    if (!frames) {
        if (len)
            *len = 0;
        if (eop)
            *eop = 0;
        return RIFL_ERR_AGAIN;
    }
    while (frames && (n < cap || rec_valid(l, ring_at(&l->rxq, 0)) == 0)) {
        /* (a partial frame claiming zero bytes, counted as rx_bad_format at
         * receive, still ends its packet) */
        const uint8_t *rec = ring_at(&l->rxq, 0);
        unsigned valid = rec_valid(l, rec);
        unsigned avail = valid - l->rx_offset;
        size_t take = cap - n < avail ? cap - n : avail;
        if (take)
            memcpy((uint8_t *)buf + n, rec + 1 + l->rx_offset, take);
        n += take;
        l->rx_offset += (unsigned)take;
        if (l->rx_offset == valid) {
            bool last = rec[0] & 2u;
            ring_pop(&l->rxq);
            frames--;
            l->rx_offset = 0;
            if (last) {
                end = 1;
                l->st.rx_packets++;
                break;
            }
        }
    }
    l->st.rx_bytes += n;
    if (len)
        *len = n;
    if (eop)
        *eop = end;
    return RIFL_OK;
}

unsigned rifl_lane_rx_backlog(const rifl_lane *l) { return l->rxq.count; }
unsigned rifl_lane_tx_backlog(const rifl_lane *l) { return l ? l->txq.count : 0; }

int rifl_lane_send_frame(rifl_lane *l, const void *data, size_t len, bool end)
{
    if (!l || !data || len == 0 || len > l->pbytes || (!end && len != l->pbytes))
        return RIFL_ERR_INVALID_ARG;
    if (l->txq.count >= l->txq.cap) {
        l->st.tx_rejected++;
        return RIFL_ERR_AGAIN;
    }
    rifl_lane_make_record(l, data, len, 0, end, ring_tail(&l->txq));
    ring_push(&l->txq);
    l->st.tx_bytes += len;
    l->st.tx_packets += end;
    return RIFL_OK;
}

int rifl_lane_peek_frame(const rifl_lane *l, const uint8_t **data, size_t *len, bool *end)
{
    if (!l || !data || !len || !end)
        return RIFL_ERR_INVALID_ARG;
    if (l->rxq.count == l->held_data || l->rx_offset)
        return RIFL_ERR_AGAIN;
    const uint8_t *rec = ring_at(&l->rxq, 0);
    *data = rec + 1;
    *len = rec_valid(l, rec);
    *end = rec[0] & 2u;
    return RIFL_OK;
}

int rifl_lane_pop_frame(rifl_lane *l)
{
    const uint8_t *d;
    size_t n;
    bool end;
    int rc = rifl_lane_peek_frame(l, &d, &n, &end);
    if (rc != RIFL_OK)
        return rc;
    ring_pop(&l->rxq);
    l->st.rx_bytes += n;
    l->st.rx_packets += end;
    return RIFL_OK;
}

int rifl_lane_send_ext(rifl_lane *l, uint8_t code, const void *data, size_t len)
{
    if (!l || code < RIFL_FMT_EXT_MIN || len > l->pbytes - 1 || (!data && len))
        return RIFL_ERR_INVALID_ARG;
    if (l->txext.count >= l->txext.cap) {
        l->st.tx_ext_rejected++;
        return RIFL_ERR_AGAIN;
    }
    uint8_t *rec = ring_tail(&l->txext);
    memset(rec, 0, l->txext.stride);
    rec[0] = RIFL_META_NONE;
    if (len)
        memcpy(rec + 1, data, len);
    rec[l->pbytes] = code;
    ring_push(&l->txext);
    l->st.tx_ext++;
    return RIFL_OK;
}

int rifl_lane_read_ext(rifl_lane *l, uint8_t *code, void *buf, size_t cap, size_t *len)
{
    if (!l || (!buf && cap))
        return RIFL_ERR_INVALID_ARG;
    if (l->rxext.count == l->held_ext)
        return RIFL_ERR_AGAIN;
    const uint8_t *rec = ring_at(&l->rxext, 0);
    size_t n = l->pbytes - 1;
    if (cap < n)
        return RIFL_ERR_BUFFER;
    if (code)
        *code = rec[0];
    memcpy(buf, rec + 1, n);
    if (len)
        *len = n;
    ring_pop(&l->rxext);
    l->st.rx_ext++;
    return RIFL_OK;
}

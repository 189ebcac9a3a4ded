/* Private state of the lane engine, shared by the sources of src/link/ (and
 * by library code that needs to look inside, such as a simulator's fast
 * path).  Not installed; not part of the API. */
#ifndef RIFL_LANE_PRIV_H
#define RIFL_LANE_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rifl/lane.h"
#include "link_priv.h"

/* A ring of fixed-size records. */
typedef struct ring {
    uint8_t *mem;
    unsigned cap, head, count, stride;
} ring;

static inline uint8_t *ring_at(const ring *r, unsigned i)
{
    unsigned idx = r->head + i;
    if (idx >= r->cap)
        idx -= r->cap;
    return r->mem + (size_t)idx * r->stride;
}
static inline uint8_t *ring_tail(const ring *r) { return ring_at(r, r->count); }
static inline void ring_push(ring *r) { r->count++; }
static inline void ring_pop(ring *r)
{
    r->head = r->head + 1 == r->cap ? 0 : r->head + 1;
    r->count--;
}

/* n bytes of a record copied: those of 256-bit frames (31 and 30 bytes)
 * in two overlapping 16-byte moves rather than a call. */
static inline void rec_copy(void *dst, const void *src, size_t n)
{
    if (n >= 16 && n <= 32) {
        memcpy(dst, src, 16);
        memcpy((uint8_t *)dst + n - 16, (const uint8_t *)src + n - 16, 16);
    } else {
        memcpy(dst, src, n);
    }
}

/* A record of a frame received: its first byte, then the payload; false
 * when the ring is full. */
static inline bool ring_store(ring *r, uint8_t first, const uint8_t *payload, unsigned pbytes)
{
    if (r->count >= r->cap)
        return false;
    uint8_t *rec = ring_tail(r);
    rec[0] = first;
    rec_copy(rec + 1, payload, pbytes);
    ring_push(r);
    return true;
}

/* The packet a stretch's source gave last: data frames first .. first +
 * frames - 1 come from its bytes, so consecutive frames of one packet cost
 * one call. */
struct lane_source_pkt {
    uint64_t first, frames;
    const uint8_t *bytes;
    size_t len;
};

struct rifl_lane {
    rifl_lane_config cfg;
    unsigned F, fbytes, pbytes, nfid, kmask;
    unsigned on_thr, off_thr;
    size_t memory;

    /* ---- time: frame slots, passed in every call ---- */
    uint64_t tx_next;          /* the slot the next frame is sent in */
    bool tx_started;           /* tx_next is set (by the first call) */
    uint64_t rx_last;          /* the slot of the last frame received */

    /* ---- transmit ---- */
    uint64_t scr;              /* scrambler state */
    bool scr_deferred;         /* rifl_lane_defer_scrambler: records by content
                                  leave the state to their batch encoder */
    bool scr_behind;           /* ... and records were made since it last
                                  gave the state back: scr is behind */
    rifl_scr_map scr_map;      /* scrambler state over one frame of zeros */
    uint64_t scr_idle, scr_retx; /* state after an IDLE / RETRANSMIT from 0 */
    unsigned fid;              /* frame-ID counter */
    unsigned init_slots;       /* INIT progress */
    bool replay_active;
    unsigned replay_slot, replay_len;
    unsigned new_frames;       /* new data frames sent since reset (saturates) */
    unsigned new_fillers;      /* new filler frames sent since reset (saturates) */
    unsigned normal_since_err;
    unsigned pause_pending;    /* clock-compensation pause slots */
    bool fc_sent_on;           /* last flow-control notice we sent */
    bool peer_fc_on;           /* peer told us to stop user data */
    uint8_t *replay;           /* 2^K records (META + payload) */
    uint64_t *replay_z;        /* per record: its part of the scrambler state
                                  after it (RIFL_LANE_Z_UNKNOWN: not known yet) */
    uint8_t *meta00;           /* records of a filler, FC ON and FC OFF */
    uint8_t *tagged;           /* lane tags: records of IDLE, PAUSE and
                                  RETRANSMIT with the tag, and their parts of
                                  the scrambler state */
    uint64_t tagged_z[3];
    ring txq;                  /* user data frames */
    /* queued data frames not built yet (rifl_lane_stretch.keep_source):
     * ring positions lz_pos .. lz_pos + lz_n - 1, counted from the head,
     * carry data frames lz_x on, made from lz_src when first read */
    unsigned lz_pos, lz_n;
    uint64_t lz_x;
    rifl_lane_stretch lz_src;
    struct lane_source_pkt lz_pkt; /* the packet lz_src gave last */
    ring txext;                /* extension frames */
    rifl_tx_state state;

    /* ---- receive ---- */
    uint64_t descr;
    bool aligned;
    bool align_ext;            /* alignment comes from the PHY's aligner */
    bool rx_up;                /* rx_up of a serial lane (true otherwise) */
    bool group_up;             /* the send side's view of its group's rx_up */
    bool tx_hold;              /* power-up hold: PAUSE with ID 0, no INIT */
    unsigned lock_count;
    uint64_t syn_window;       /* last 64 SYN checks, bit = 1 when illegal */
    unsigned syn_bad_in_window;
    unsigned rfid, thr;
    bool frame_error;
    /* control-frame monitor (link rules §6): the PAUSE and RETRANSMIT
     * counts (0..8; a flag is up while its count is 8) and the run of data
     * or IDLE frames (0..16) */
    unsigned pause_count, retx_count, data_run;
    bool peer_pause, peer_retransmit;
    ring rxq;                  /* delivered user data frames */
    ring rxext;                /* delivered extension frames */
    unsigned rx_offset;        /* bytes already read from rxq head */
    /* lane tags received: the last tag, how many in a row, and whether 8
     * in a row named this lane */
    uint8_t tag_lane, tag_count;
    unsigned tag_run;
    bool tag_ok;
    /* frames accepted but held until alignment is confirmed (serial lanes,
     * cfg.rx_hold_frames): a ring of their kinds and release counts; the
     * data and extension frames among them sit at the tails of rxq and
     * rxext, not readable yet */
    uint64_t rx_seen;          /* frames received aligned and up */
    struct held_frame {
        uint64_t at;           /* released when rx_seen reaches it */
        uint8_t kind;
    } *held;
    unsigned held_cap, held_head, held_count, held_data, held_ext;

    rifl_lane_stats st;
};


/* Record (META byte + payload) of frame k of the `len` bytes at p, as the
 * transmit queue holds it; `end`: these bytes end a packet.  The one
 * segmentation rule of the lane, used by rifl_lane_send and the
 * accelerator. */
static inline void rifl_lane_make_record(const rifl_lane *l, const uint8_t *p, size_t len,
                                         size_t k, bool end, uint8_t *rec)
{
    size_t pb = l->pbytes, off = k * pb, left = len - off;
    if (left > pb || (left == pb && !end)) {
        rec[0] = RIFL_META_FULL;
        memcpy(rec + 1, p + off, pb);
    } else if (left == pb) {
        rec[0] = RIFL_META_FULL_EOP;
        memcpy(rec + 1, p + off, pb);
    } else {
        rec[0] = RIFL_META_PARTIAL_EOP;
        memcpy(rec + 1, p + off, left);
        memset(rec + 1 + left, 0, pb - left);
        rec[pb] = (uint8_t)left; /* format byte: valid count */
    }
}

#define RIFL_LANE_Z_UNKNOWN UINT64_MAX

/* The sender's choice for a slot: a data frame's record (META byte and
 * payload, in the lane), or a control frame's key; and its frame ID. */
struct tx_choice {
    const uint8_t *rec;   /* NULL for a control frame */
    uint16_t key, id;
    const uint8_t *ctl;   /* a control frame's record with its lane tag, or NULL */
};

/* Builds the queued records not built yet up to ring position `pos`
 * (lane_accel.c); txq_need does nothing when they are built. */
void rifl_lane_txq_build(rifl_lane *l, unsigned pos);
static inline void txq_need(rifl_lane *l, unsigned pos)
{
    if (l->lz_n && pos >= l->lz_pos)
        rifl_lane_txq_build(l, pos);
}

/* n records leave the queue's head (built: they were read). */
static inline void txq_taken(rifl_lane *l, unsigned n)
{
    unsigned h = l->txq.head + n; /* (n <= count <= cap) */
    l->txq.head = h >= l->txq.cap ? h - l->txq.cap : h;
    l->txq.count -= n;
    l->lz_pos -= n < l->lz_pos ? n : l->lz_pos;
}

/* Frame `c` chosen, not built: its content in f (the scrambler states
 * aside). */
static inline __attribute__((always_inline)) void
rifl_lane_fill_record(const rifl_lane *l, struct tx_choice c, rifl_lane_frame *f)
{
    f->key = c.key;
    f->id = c.id;
    f->data = c.rec ? 1 : c.ctl ? 2 : 0;
    if (c.rec || c.ctl)
        memcpy(f->rec, c.rec ? c.rec : c.ctl, l->txq.stride);
}

/* Frame `c` chosen, not built: give f its content and the scrambler states
 * before and after it, and move the lane's scrambler on. */
static inline __attribute__((always_inline)) void
rifl_lane_fill_frame(rifl_lane *l, struct tx_choice choice, rifl_lane_frame *f)
{
    /* by value: the choice's fields come straight from the registers they
     * were chosen in (read back from memory, its narrow stores would stall
     * the wider loads) */
    const struct tx_choice *c = &choice;
    rifl_lane_fill_record(l, choice, f);
    f->scr = l->scr;
    /* the contents' part of the next state does not wait for the state */
    uint64_t z;
    if (c->rec) {
        /* a data frame's record is the one in the replay buffer under its
         * ID: replays reuse what its first sending worked out */
        z = l->replay_z[c->id];
        if (z == RIFL_LANE_Z_UNKNOWN) {
            z = rifl_frame_scrambler_after(l->F, c->rec[0] & 3u, c->rec + 1, 0);
            l->replay_z[c->id] = z;
        }
    } else if (c->ctl)
        z = l->tagged_z[(size_t)(c->ctl - l->tagged) / l->txq.stride];
    else if (c->key == RIFL_KEY_IDLE)
        z = l->scr_idle;
    else if (c->key == RIFL_KEY_RETRANSMIT)
        z = l->scr_retx;
    else
        z = rifl_frame_scrambler_after_control(l->F, c->key, 0);
    l->scr = rifl_scr_map_apply(&l->scr_map, l->scr) ^ z;
    f->scr_next = l->scr;
}


/* The transmit slot `now` is the next one (the first call sets the count);
 * false, counted, when a slot is repeated or skipped. */
static inline bool rifl_lane_tx_slot(rifl_lane *l, uint64_t now)
{
    if (l->tx_started && now != l->tx_next) {
        l->st.slot_errors++;
        return false;
    }
    l->tx_started = true;
    l->tx_next = now + 1;
    return true;
}

/* The receive slot `now` is not before the last one (two frames may arrive
 * in one slot when the clocks differ, none in another). */
static inline bool rifl_lane_rx_slot(rifl_lane *l, uint64_t now)
{
    if (now < l->rx_last) {
        l->st.slot_errors++;
        return false;
    }
    l->rx_last = now;
    return true;
}

#endif

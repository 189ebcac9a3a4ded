/* The lane's accelerator: both lanes of a link carried through a stretch of
 * error-free steady operation in one call (lane.h, "Accelerator").
 *
 * In steady state every slot sends one new frame each way and every frame
 * arrives good and in sequence, so the stretch is known from counts alone:
 * how many data frames and fillers each side sent, what the receiving users
 * read.  The caller (a simulator that also models the users) supplies those
 * counts and which data frame each frame ID carried last; the accelerator
 * moves frame IDs, receive windows and counters on, and rebuilds what must
 * hold real bytes afterwards with the engine's own segmentation: the replay
 * buffer entries sent in the stretch and the transmit queue (or, when its
 * source stays, the queue's records one by one as they are sent).  It then hands
 * back, by content, the frames left in flight, re-encoded from the replay
 * buffer, and sets each receiver's descrambler to the state they start
 * from, so both ends stay consistent. */
#include <string.h>

#include "lane_priv.h"

static bool lane_steady(const rifl_lane *l)
{
    return l->state == RIFL_TX_NORMAL && l->init_slots >= l->nfid && l->aligned &&
           l->rx_up && l->group_up && !l->tx_hold &&
           !l->peer_pause && !l->peer_retransmit && !l->replay_active && !l->frame_error &&
           l->normal_since_err >= l->nfid && l->new_fillers >= l->nfid &&
           l->pause_pending == 0 && !l->fc_sent_on && !l->peer_fc_on &&
           l->txext.count == 0 && l->rxext.count == 0 && l->rxq.count == 0 &&
           l->rx_offset == 0 && l->data_run == 16 && l->pause_count == 0 &&
           l->retx_count == 0 && l->rfid == l->thr;
}

bool rifl_lane_steady(const rifl_lane *a, const rifl_lane *b, unsigned delay)
{
    if (!a || !b || a->nfid != b->nfid || !lane_steady(a) || !lane_steady(b))
        return false;
    /* each receiver expects the frame its peer sent `delay` slots ago */
    return b->rfid == ((a->fid - delay) & a->kmask) && a->rfid == ((b->fid - delay) & b->kmask);
}

/* Record of the frame that carried data frame x (x < 0: a filler). */
static int stretch_record(const rifl_lane *l, const rifl_lane_stretch *s, struct lane_source_pkt *p,
                          int64_t x, uint8_t *rec)
{
    if (x < 0) {
        memcpy(rec, l->meta00 + (size_t)RIFL_FMT_FILLER * l->txq.stride, l->txq.stride);
        return RIFL_OK;
    }
    uint64_t ux = (uint64_t)x;
    if (s->segment) {
        const uint8_t *bytes;
        size_t len;
        bool end;
        if (s->segment(s->ctx, ux, &bytes, &len, &end) != 0 || !bytes || len == 0 ||
            len > l->pbytes || (!end && len != l->pbytes))
            return RIFL_ERR_STATE;
        rifl_lane_make_record(l, bytes, len, 0, end, rec);
        return RIFL_OK;
    }
    if (!p->bytes || ux < p->first || ux - p->first >= p->frames) {
        const uint8_t *pkt;
        size_t len, k;
        if (!s->data || s->data(s->ctx, ux, &pkt, &len, &k) != 0 || !pkt ||
            k >= (len + l->pbytes - 1) / l->pbytes)
            return RIFL_ERR_STATE;
        *p = (struct lane_source_pkt){ ux - k, (len + l->pbytes - 1) / l->pbytes, pkt, len };
    }
    rifl_lane_make_record(l, p->bytes, p->len, (size_t)(ux - p->first), true, rec);
    return RIFL_OK;
}

void rifl_lane_txq_build(rifl_lane *l, unsigned pos)
{
    while (l->lz_n && l->lz_pos <= pos) {
        uint8_t *rec = ring_at(&l->txq, l->lz_pos);
        if (stretch_record(l, &l->lz_src, &l->lz_pkt, (int64_t)l->lz_x, rec) != RIFL_OK) {
            /* the source broke its promise: a filler goes instead, counted */
            memcpy(rec, l->meta00 + (size_t)RIFL_FMT_FILLER * l->txq.stride, l->txq.stride);
            l->st.tx_source_errors++;
        }
        l->lz_pos++;
        l->lz_n--;
        l->lz_x++;
    }
}

void rifl_lane_stretch_stats(const rifl_lane_stretch *tx, const rifl_lane_stretch *rx,
                             rifl_lane_stats *add)
{
    if (!add)
        return;
    memset(add, 0, sizeof *add);
    if (tx) {
        add->tx_slots = tx->slots;
        add->tx_state_slots[RIFL_TX_NORMAL] = tx->slots;
        add->tx_frames[RIFL_KIND_DATA] = tx->data_sent;
        add->tx_frames[RIFL_KIND_FILLER] = tx->fill_sent;
        add->tx_packets = tx->tx_packets;
        add->tx_bytes = tx->tx_bytes;
        add->tx_rejected = tx->tx_rejected;
    }
    if (rx) {
        uint64_t recv = rx->data_recv + rx->fill_recv;
        add->rx_slots = rx->slots;
        add->rx_good_data = recv;
        add->rx_delivered[RIFL_KIND_DATA] = rx->data_recv;
        add->rx_delivered[RIFL_KIND_FILLER] = rx->fill_recv;
        add->rx_packets = rx->rx_packets;
        add->rx_bytes = rx->rx_bytes;
    }
}

void rifl_lane_stats_add(rifl_lane_stats *to, const rifl_lane_stats *add)
{
    _Static_assert(sizeof *to % sizeof(uint64_t) == 0, "counters are 64-bit");
    if (!to || !add)
        return;
    uint64_t a[sizeof *to / sizeof(uint64_t)], b[sizeof a / sizeof a[0]];
    memcpy(a, to, sizeof a);
    memcpy(b, add, sizeof b);
    for (size_t k = 0; k < sizeof a / sizeof a[0]; k++)
        a[k] += b[k];
    memcpy(to, a, sizeof a);
}

/* The sending side of lane `l` over the stretch `s`. */
static int advance_tx(rifl_lane *l, const rifl_lane_stretch *s)
{
    uint64_t sent = s->data_sent + s->fill_sent;
    l->fid = (unsigned)((l->fid + sent) & l->kmask);
    l->tx_next += s->slots;
    struct lane_source_pkt src = { 0, 0, NULL, 0 };
    /* the replay buffer entries of the frames sent in the stretch */
    uint64_t n = sent < l->nfid ? sent : l->nfid;
    for (uint64_t k = 0; k < n; k++) {
        unsigned id = (unsigned)(l->fid - n + k) & l->kmask;
        l->replay_z[id] = RIFL_LANE_Z_UNKNOWN;
        int rc = stretch_record(l, s, &src, s->sent_by_id[id],
                                l->replay + (size_t)id * l->txq.stride);
        if (rc != RIFL_OK)
            return rc;
    }
    /* the transmit queue: the data frames not sent yet, built here or, when
     * the source stays, as they are sent */
    l->txq.head = 0;
    l->txq.count = 0;
    l->lz_n = 0;
    if (s->queue_end - s->queue_first > l->txq.cap)
        return RIFL_ERR_STATE;
    if (s->keep_source) {
        l->txq.count = (unsigned)(s->queue_end - s->queue_first);
        l->lz_pos = 0;
        l->lz_n = l->txq.count;
        l->lz_x = s->queue_first;
        l->lz_src = *s;
        /* the packet it gave last stays valid until its next call, and
         * only the lane calls it */
        l->lz_pkt = src;
        return RIFL_OK;
    }
    for (uint64_t x = s->queue_first; x < s->queue_end; x++) {
        int rc = stretch_record(l, s, &src, (int64_t)x, ring_tail(&l->txq));
        if (rc != RIFL_OK)
            return rc;
        ring_push(&l->txq);
    }
    return RIFL_OK;
}

/* The receiving side of lane `l` over the stretch `s` (its peer's). */
static void advance_rx(rifl_lane *l, const rifl_lane_stretch *s)
{
    uint64_t recv = s->data_recv + s->fill_recv;
    l->rfid = (unsigned)((l->rfid + recv) & l->kmask);
    l->thr = l->rfid;
    l->rx_last += s->slots;
    if (l->cfg.rx_lock_frames) {
        /* a frame with a legal SYN arrived in every slot: zeros shift into
         * the SYN window */
        l->syn_window = s->slots >= 64 ? 0 : l->syn_window << s->slots;
        l->syn_bad_in_window = (unsigned)__builtin_popcountll(l->syn_window);
    }
}

int rifl_lane_advance(rifl_lane *lane[2], unsigned delay, const rifl_lane_stretch dir[2],
                      rifl_lane_frame *inflight[2])
{
    if (!lane || !dir || !inflight || !lane[0] || !lane[1] ||
        !rifl_lane_steady(lane[0], lane[1], delay) || delay > lane[0]->nfid)
        return RIFL_ERR_STATE;
    for (int i = 0; i < 2; i++) {
        const rifl_lane_stretch *s = &dir[i];
        uint64_t sent = s->data_sent + s->fill_sent, recv = s->data_recv + s->fill_recv;
        bool extra = dir[0].extra || dir[1].extra;
        if (!s->sent_by_id || (delay && !inflight[i]) || s->slots != dir[0].slots ||
            (extra ? sent > s->slots : sent != s->slots) || recv != sent)
            return RIFL_ERR_INVALID_ARG;
    }
    for (int i = 0; i < 2; i++) {
        int rc = advance_tx(lane[i], &dir[i]);
        if (rc != RIFL_OK)
            return rc;
        advance_rx(lane[1 - i], &dir[i]);
    }
    for (int i = 0; i < 2; i++) {
        rifl_lane_stats add;
        rifl_lane_stretch_stats(&dir[i], &dir[1 - i], &add);
        rifl_lane_stats_add(&lane[i]->st, &add);
        if (dir[i].extra)
            rifl_lane_stats_add(&lane[i]->st, dir[i].extra);
    }
    /* the frames in flight, re-encoded from the replay buffer from the
     * sender's scrambler state on; the receiver starts from that state */
    for (int i = 0; i < 2; i++) {
        rifl_lane *tx = lane[i];
        uint64_t s0 = tx->scr;
        for (unsigned k = 0; k < delay; k++) {
            unsigned id = (tx->fid - delay + k) & tx->kmask;
            struct tx_choice c = { tx->replay + (size_t)id * tx->txq.stride, 0, (uint16_t)id,
                                   NULL };
            rifl_lane_fill_frame(tx, c, &inflight[i][k]);
        }
        lane[1 - i]->descr = s0;
    }
    return RIFL_OK;
}

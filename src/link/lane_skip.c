/* Fast-forward of a lane through steady error-free stretches (see
 * lane_skip.h).  Only counters and sequence state move here; the simulator
 * rebuilds the frames that must exist afterwards (replay buffer, transmit
 * queue, frames in flight). */
#include <string.h>

#include "lane_priv.h"
#include "lane_skip.h"

bool rifl_lane_skip_steady(const rifl_lane *l)
{
    return l->state == RIFL_TX_NORMAL && l->init_slots >= l->nfid && l->aligned &&
           !l->peer_pause && !l->peer_retransmit && !l->replay_active && !l->frame_error &&
           l->normal_since_err >= l->nfid && l->new_fillers >= l->nfid &&
           l->pause_pending == 0 && !l->fc_sent_on && !l->peer_fc_on &&
           l->txext.count == 0 && l->rxext.count == 0 && l->rxq.count == 0 &&
           l->rx_offset == 0 && l->data_run == 16 && l->pause_count == 0 &&
           l->retx_count == 0 && l->rfid == l->thr;
}

unsigned rifl_lane_skip_fid(const rifl_lane *l) { return l->fid; }
unsigned rifl_lane_skip_rfid(const rifl_lane *l) { return l->rfid; }
unsigned rifl_lane_skip_kmask(const rifl_lane *l) { return l->kmask; }

uint8_t *rifl_lane_skip_replay(rifl_lane *l, unsigned id)
{
    return l->replay + (size_t)(id & l->kmask) * l->txq.stride;
}

void rifl_lane_skip_make_record(const rifl_lane *l, const uint8_t *pkt, size_t len,
                                size_t k, uint8_t *rec)
{
    size_t pb = l->pbytes;
    size_t off = k * pb;
    size_t left = len - off;
    if (left > pb) {
        rec[0] = RIFL_META_FULL;
        memcpy(rec + 1, pkt + off, pb);
    } else if (left == pb) {
        rec[0] = RIFL_META_FULL_EOP;
        memcpy(rec + 1, pkt + off, pb);
    } else {
        rec[0] = RIFL_META_PARTIAL_EOP;
        memcpy(rec + 1, pkt + off, left);
        memset(rec + 1 + left, 0, pb - left);
        rec[pb] = (uint8_t)left;
    }
}

void rifl_lane_skip_filler_record(const rifl_lane *l, uint8_t *rec)
{
    memset(rec, 0, l->txq.stride);
    rec[l->pbytes] = RIFL_FMT_FILLER;
}

void rifl_lane_skip_txq_clear(rifl_lane *l)
{
    l->txq.head = 0;
    l->txq.count = 0;
}

uint8_t *rifl_lane_skip_txq_push(rifl_lane *l)
{
    uint8_t *rec = ring_tail(&l->txq);
    ring_push(&l->txq);
    return rec;
}

void rifl_lane_skip_encode(rifl_lane *l, unsigned id, uint8_t *wire)
{
    const uint8_t *rec = rifl_lane_skip_replay(l, id);
    rifl_frame_encode(wire, l->F, RIFL_SYN_DATA, rec[0] & 3u, rec + 1, id & l->kmask, &l->scr);
}

void rifl_lane_skip_frame(rifl_lane *l, unsigned id, rifl_lane_frame *f)
{
    const uint8_t *rec = rifl_lane_skip_replay(l, id);
    f->rec = rec;
    f->key = 0;
    f->id = (uint16_t)(id & l->kmask);
    rifl_lane_frame_advance(l, f);
}

uint64_t rifl_lane_skip_scrambler(const rifl_lane *l) { return l->scr; }
void rifl_lane_skip_set_descrambler(rifl_lane *l, uint64_t s) { l->descr = s; }

void rifl_lane_skip_advance(rifl_lane *l, const rifl_lane_skip_counts *c)
{
    rifl_lane_stats *st = &l->st;
    uint64_t sent = c->data_sent + c->fill_sent;
    uint64_t recv = c->data_recv + c->fill_recv;
    l->fid = (unsigned)((l->fid + sent) & l->kmask);
    l->rfid = (unsigned)((l->rfid + recv) & l->kmask);
    l->thr = l->rfid;
    st->tx_slots += c->slots;
    st->tx_state_slots[RIFL_TX_NORMAL] += c->slots;
    st->tx_frames[RIFL_KIND_DATA] += c->data_sent;
    st->tx_frames[RIFL_KIND_FILLER] += c->fill_sent;
    st->tx_packets += c->tx_packets;
    st->tx_bytes += c->tx_bytes;
    st->tx_rejected += c->tx_rejected;
    st->rx_slots += c->slots;
    st->rx_good_data += recv;
    st->rx_delivered[RIFL_KIND_DATA] += c->data_recv;
    st->rx_delivered[RIFL_KIND_FILLER] += c->fill_recv;
    st->rx_packets += c->rx_packets;
    st->rx_bytes += c->rx_bytes;
    if (l->cfg.rx_lock_frames) {
        /* every frame received was legal: shift zeros into the SYN window */
        l->syn_window = recv >= 64 ? 0 : l->syn_window << recv;
        l->syn_bad_in_window = (unsigned)__builtin_popcountll(l->syn_window);
    }
}

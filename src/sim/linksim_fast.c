/* The link simulator's fast path.  When both lanes are in steady NORMAL
 * state, every frame now in flight is a new error-free frame the receiver
 * will accept in sequence, both users read everything at once and neither
 * cable will flip a bit in the next m frames, the next m slots are fully
 * determined: each lane sends the next m new frames (queued data, or fillers
 * when its queue is empty) and receives and delivers m frames.  The fast
 * path counts those slots (no frame is built, no byte moved), keeping the
 * users, packet stamps and validators in step, and hands the counts to the
 * lane's accelerator (rifl_lane_advance), which brings both lanes to where
 * stepping would have left them; the frames left in flight go back on the
 * cables.  Whether a damaged frame is detected depends only on the error
 * pattern (the CRC is linear and error positions come from the cable's own
 * generator), so a run with the fast path takes exactly the course of plain
 * stepping: tests/test_linksim.c compares the two counter by counter. */
#include <string.h>

#include "linksim_priv.h"

/* The simulator's own conditions: the cheap ones. */
static bool users_steady(const struct sim *s)
{
    if (!s->fast_possible)
        return false;
    for (int i = 0; i < 2; i++) {
        const struct dir *d = &s->d[i];
        if (d->streak < s->D || d->val.next_seq != d->recv_cur || d->val.overlong ||
            d->sf != rifl_lane_get_stats(d->tx)->tx_frames[RIFL_KIND_DATA])
            return false;
    }
    return true;
}

/* Bytes of a partly read packet were read for real and will not be
 * compared at its end: compare them now (never skip past a bad prefix, so
 * the validator sees the whole packet). */
static bool prefixes_good(struct sim *s)
{
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        if (!d->val.have)
            continue;
        if (d->checked_seq != d->recv_cur || d->checked_have != d->val.have) {
            const struct pkt *p = rifl_linksim_pkt_at(d, d->recv_cur);
            d->checked_seq = d->recv_cur;
            d->checked_have = d->val.have;
            d->prefix_ok = d->val.have <= p->len &&
                           memcmp(d->val.buf, rifl_linksim_content(s, d, d->recv_cur),
                                  d->val.have) == 0;
        }
        if (!d->prefix_ok)
            return false;
    }
    return true;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Slots that can be fast-forwarded from slot t (0: step this one). */
uint64_t rifl_linksim_skip_room(struct sim *s, uint64_t t)
{
    const rifl_linksim_config *c = s->cfg;
    if (!users_steady(s) || !rifl_lane_steady(s->pair->lane[0], s->pair->lane[1], s->D) ||
        !prefixes_good(s))
        return 0;
    uint64_t m = min64(rifl_phy_clear_slots(s->d[0].ch), rifl_phy_clear_slots(s->d[1].ch));
    if (c->max_slots)
        m = min64(m, c->max_slots - t);
    if (c->offer_slots && t < c->offer_slots)
        m = min64(m, c->offer_slots - t);
    if (c->rx_stall) {
        uint64_t r = (t + 1) % c->rx_period;
        if (r < c->rx_stall)
            return 0;
        m = min64(m, c->rx_period - r);
    }
    if (m < (uint64_t)s->D + s->nfid + 64)
        return 0;
    return m;
}

/* Packet holding data frame `x` (binary search over the kept packets). */
static uint64_t packet_of_frame(const struct dir *d, uint64_t x)
{
    uint64_t lo = d->oldest, hi = d->next_seq; /* first > x is in (lo, hi] */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (rifl_linksim_pkt_at(d, mid)->first <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* rifl_lane_stretch.data: the packet holding data frame x */
static int frame_source(void *ctx, uint64_t x, const uint8_t **pkt, size_t *len, size_t *index)
{
    struct dir *d = ctx;
    uint64_t seq = packet_of_frame(d, x);
    const struct pkt *p = rifl_linksim_pkt_at(d, seq);
    if (x < p->first || x >= p->first + p->nf)
        return -1;
    *pkt = rifl_linksim_content(d->sim, d, seq);
    *len = p->len;
    *index = (size_t)(x - p->first);
    return 0;
}

/* One emulated slot u: both lanes send a new frame, both receive one, then
 * the users act. */
static int emulate_slot(struct sim *s, uint64_t u)
{
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        unsigned id = d->efid;
        if (d->q) {
            d->log[id] = (int64_t)d->sf;
            rifl_linksim_stamp_sent(d, d->sf, u);
            d->sf++;
            d->q--;
            d->c.data_sent++;
        } else {
            d->log[id] = -1;
            d->c.fill_sent++;
        }
        d->efid = (id + 1) & s->kmask;
    }
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        int64_t x = d->log[d->erfid];
        d->erfid = (d->erfid + 1) & s->kmask;
        if (x < 0) {
            d->c.fill_recv++;
            continue;
        }
        d->c.data_recv++;
        struct pkt *p = rifl_linksim_pkt_at(d, d->recv_cur);
        if ((uint64_t)x == p->first + p->nf - 1) {
            d->c.rx_bytes += p->len - (uint64_t)(p->nf - 1) * s->pb;
            d->c.rx_packets++;
            d->val.st.packets_ok++;
            d->val.st.bytes_ok += p->len;
            d->val.have = 0;
            rifl_linksim_delivered(s, d, d->recv_cur, u + 1);
            d->recv_cur++;
            d->val.next_seq = d->recv_cur;
        } else {
            d->c.rx_bytes += s->pb;
            d->val.have += s->pb;
        }
    }
    for (int i = 0; i < 2; i++) {
        int rc = rifl_linksim_generate(s, &s->d[i], false);
        if (rc != RIFL_OK)
            return rc;
    }
    return RIFL_OK;
}

/* After j emulated slots: the lanes through the accelerator, the frames
 * left in flight back on the cables, the users' buffers. */
static int land(struct sim *s, uint64_t j)
{
    rifl_lane_stretch st[2];
    rifl_lane_frame *inflight[2];
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        st[i] = (rifl_lane_stretch){
            .slots = j, .data_sent = d->c.data_sent, .fill_sent = d->c.fill_sent,
            .sent_by_id = d->log, .queue_first = d->sf, .queue_end = d->qf,
            .tx_packets = d->c.tx_packets, .tx_bytes = d->c.tx_bytes,
            .tx_rejected = d->c.tx_rejected, .data_recv = d->c.data_recv,
            .fill_recv = d->c.fill_recv, .rx_packets = d->c.rx_packets,
            .rx_bytes = d->c.rx_bytes, .data = frame_source, .ctx = d,
        };
        inflight[i] = d->inflight;
    }
    if (rifl_lane_advance(s->pair->lane, s->D, st, inflight) != RIFL_OK)
        return RIFL_ERR_STATE;
    unsigned F = s->cfg->lane.frame_bits;
    size_t fb = rifl_lane_frame_bytes(F);
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        if (rifl_phy_skip(d->ch, j) != RIFL_OK)
            return RIFL_ERR_STATE;
        for (unsigned k = 0; k < s->D; k++) {
            if (s->cfg->encode_all)
                rifl_lane_frame_encode(&d->inflight[k], F, rifl_phy_inflight(d->ch, k, RIFL_PHY_WIRE));
            else
                memcpy(rifl_phy_inflight(d->ch, k, RIFL_PHY_CONTENT), &d->inflight[k], fb);
        }
        if (d->val.have)
            memcpy(d->val.buf, rifl_linksim_content(s, d, d->recv_cur), d->val.have);
        d->streak = j;
        const rifl_lane_stats *ls = rifl_lane_get_stats(d->tx);
        d->prev_new = ls->tx_frames[RIFL_KIND_DATA] + ls->tx_frames[RIFL_KIND_FILLER];
        d->prev_hit = rifl_phy_get_stats(d->ch)->frames_hit;
    }
    s->pair->slot += j;
    return RIFL_OK;
}

/* Fast-forward up to m slots from slot t; *done gets the slots done. */
int rifl_linksim_skip(struct sim *s, uint64_t t, uint64_t m, uint64_t *done)
{
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        memset(&d->c, 0, sizeof d->c);
        d->q = s->txcap - rifl_lane_send_space(d->tx) / s->pb;
        d->efid = rifl_lane_next_id(d->tx);
        d->erfid = rifl_lane_expected_id(d->rx);
    }
    uint64_t j = 0;
    while (j < m) {
        int rc = emulate_slot(s, t + j);
        if (rc != RIFL_OK)
            return rc;
        j++;
        if (s->cfg->bytes && rifl_linksim_all_done(s))
            break;
    }
    *done = j;
    return land(s, j);
}

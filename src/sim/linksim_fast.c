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

/* Slots from t on before the slot limit or offer_slots (*cap), and before
 * the next frame hit (*first). */
static void stretch_bounds(struct sim *s, uint64_t t, uint64_t *first, uint64_t *cap)
{
    const rifl_linksim_config *c = s->cfg;
    uint64_t m = UINT64_MAX;
    if (c->max_slots)
        m = min64(m, c->max_slots - t);
    if (c->offer_slots && t < c->offer_slots)
        m = min64(m, c->offer_slots - t);
    *cap = m;
    *first = min64(rifl_pair_clear_slots(s->pair, 0), rifl_pair_clear_slots(s->pair, 1));
}

/* A stretch needs room for the frames in flight, the replay buffer and a
 * margin. */
static uint64_t stretch_min(const struct sim *s)
{
    return (uint64_t)s->D + s->nfid + 64;
}

uint64_t rifl_linksim_skip_hold(struct sim *s, uint64_t t)
{
    uint64_t first, cap;
    stretch_bounds(s, t, &first, &cap);
    uint64_t m = min64(first, cap);
    /* (a hit to learn from is not passed in a quiet run) */
    if (m < stretch_min(s) && m < cap && rifl_linksim_learn_wanted(s, t, first, false))
        return 0;
    if (m < stretch_min(s) && (s->rec[0].ok || s->rec[1].ok))
        m = rifl_linksim_plan(s, t, first, cap);
    return m < stretch_min(s) ? m : 0;
}

/* Slots that can be fast-forwarded from slot t (0: step this one). */
uint64_t rifl_linksim_skip_room(struct sim *s, uint64_t t)
{
    const rifl_linksim_config *c = s->cfg;
    if (!users_steady(s) || !rifl_lane_steady(s->pair->lane[0], s->pair->lane[1], s->D) ||
        !prefixes_good(s))
        return 0;
    uint64_t first, cap;
    stretch_bounds(s, t, &first, &cap);
    uint64_t m = rifl_linksim_plan(s, t, first, cap);
    if (m == first && m < cap && rifl_linksim_learn_wanted(s, t, first, true))
        return m < stretch_min(s) ? 0 : m;
    if (c->rx_stall) {
        uint64_t r = (t + 1) % c->rx_period;
        if (r < c->rx_stall)
            return 0;
        m = min64(m, c->rx_period - r);
    }
    if (m < stretch_min(s))
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
    /* frames are asked for in order: most are in the packet asked last */
    uint64_t seq = d->src_seq;
    const struct pkt *h = seq >= d->oldest && seq < d->next_seq ? rifl_linksim_pkt_at(d, seq) : NULL;
    if (!h || x < h->first || x >= h->first + h->nf)
        seq = packet_of_frame(d, x);
    d->src_seq = seq;
    const struct pkt *p = rifl_linksim_pkt_at(d, seq);
    if (x < p->first || x >= p->first + p->nf)
        return -1;
    *pkt = rifl_linksim_content_in(d, &d->scache, seq);
    *len = p->len;
    *index = (size_t)(x - p->first);
    return 0;
}

/* ---- one direction through a fast-forward, packet by packet ------------
 *
 * In a steady stretch slot u (counted from the stretch's first slot t)
 * sends the next queued data frame, or a filler when the queue is empty;
 * the peer receives it at slot u + D; then the sending user offers packets.
 * Between the slots where the user's offer changes something (a packet
 * taken, the next one made pending, the end of the bytes) the queue only
 * drains and the user only counts refusals or waits for credit, so those
 * slots go in one step.  A packet is delivered at the slot its last frame
 * was sent plus D. */
struct emu {
    uint64_t t;          /* the stretch's first slot */
    uint64_t u;          /* slots emulated */
    uint64_t limit;      /* slots to emulate: the stretch, or up to completion */
    uint64_t comp;       /* slot after which the direction is complete, or ~0 */
    uint64_t sf0;        /* data frames sent before the stretch */
    uint64_t xslot, xend; /* data frames sent up to slot xslot (for the receiver) */
    uint64_t have0;      /* bytes of a partly received packet at the start */
    uint64_t rx_bytes;   /* bytes of the packets delivered in the stretch */
};

/* (u: the ordinal of the first of the n new frames in the stretch) */
static void push_run(struct dir *d, uint64_t u, int64_t x, uint64_t n)
{
    struct run *r = &d->runs[d->run_head ? d->run_head - 1 : d->nruns - 1];
    if (r->n && r->u + r->n == u && ((x < 0 && r->x < 0) ||
                                     (x >= 0 && r->x >= 0 && (uint64_t)r->x + r->n == (uint64_t)x))) {
        r->n += n; /* continues the last run */
        return;
    }
    d->runs[d->run_head] = (struct run){ u, n, x };
    d->run_head = d->run_head + 1 == d->nruns ? 0 : d->run_head + 1;
}

/* Send stamps of the packets whose first or last frame is among the n data
 * frames from x0, sent from slot a0 on. */
static void stamp_run(struct dir *d, uint64_t x0, uint64_t n, uint64_t a0)
{
    while (d->send_cur < d->next_seq) {
        struct pkt *p = rifl_linksim_pkt_at(d, d->send_cur);
        if (p->first >= x0 + n)
            return;
        if (p->first >= x0)
            p->t_first = a0 + (p->first - x0);
        uint64_t last = p->first + p->nf - 1;
        if (last >= x0 + n)
            return;
        p->t_last = a0 + (last - x0);
        d->send_cur++;
    }
}

/* The next k slots' sends: a new frame in each (sends), or none (slots of
 * a recovery carried that send none). */
static void send_slots(struct dir *d, struct emu *e, uint64_t k, bool sends)
{
    if (!sends) {
        if (e->xslot >= e->u && e->xslot < e->u + k)
            e->xend = d->sf;
        e->u += k;
        return;
    }
    uint64_t nd = d->q < k ? d->q : k, o = d->c.data_sent + d->c.fill_sent;
    if (e->xslot >= e->u && e->xslot < e->u + k)
        e->xend = d->sf + (e->xslot - e->u < nd ? e->xslot - e->u + 1 : nd);
    if (nd) {
        push_run(d, o, (int64_t)d->sf, nd);
        stamp_run(d, d->sf, nd, e->t + e->u);
        d->sf += nd;
        d->q -= nd;
    }
    if (k > nd)
        push_run(d, o + nd, -1, k - nd);
    d->c.data_sent += nd;
    d->c.fill_sent += k - nd;
    e->u += k;
}

/* Whether direction i sends a new frame in slot ts (in a window, as its
 * recovery did), and for how many slots from ts on that holds (at most
 * lim). */
static uint64_t sends_run(const struct sim *s, struct dir *d, int i, uint64_t ts, uint64_t lim,
                          bool *sends)
{
    while (d->wsend < s->nwin && s->win[d->wsend].at + s->rec[s->win[d->wsend].h].L <= ts)
        d->wsend++;
    *sends = true;
    if (d->wsend == s->nwin)
        return lim;
    const struct window *w = &s->win[d->wsend];
    if (ts < w->at)
        return min64(w->at - ts, lim);
    const struct recovery *r = &s->rec[w->h];
    *sends = r->tx[i][ts - w->at];
    return min64(r->run[i][ts - w->at], lim);
}

/* Packets whose last frame arrived in the slots emulated so far; and the
 * slot of the first bytes read, when the first data frame arrived among
 * them (read in the slot after it, as the reader does). */
static void deliver(struct sim *s, struct dir *d, struct emu *e)
{
    if (d->first_read < 0 && d->recv_cur < d->next_seq) {
        const struct pkt *p = rifl_linksim_pkt_at(d, d->recv_cur);
        if (p->first < d->sf) {
            unsigned w = d->wrecv;
            uint64_t r = rifl_linksim_arrival(s, (int)(d - s->d), p->t_first, &w);
            if (r < e->t + e->u)
                d->first_read = (int64_t)r + 1;
        }
    }
    while (d->recv_cur < d->send_cur) {
        struct pkt *p = rifl_linksim_pkt_at(d, d->recv_cur);
        /* (a frame sent D slots or more before the next window arrives D
         * slots after it was sent) */
        uint64_t r = d->wrecv == s->nwin || p->t_last + s->D < s->win[d->wrecv].at
                         ? p->t_last + s->D
                         : rifl_linksim_arrival(s, (int)(d - s->d), p->t_last, &d->wrecv);
        if (r >= e->t + e->u)
            return;
        d->c.rx_packets++;
        d->val.st.packets_ok++;
        d->val.st.bytes_ok += p->len;
        e->rx_bytes += p->len;
        rifl_linksim_delivered(s, d, d->recv_cur, r + 1);
        d->recv_cur++;
        d->val.next_seq = d->recv_cur;
        d->val.have = 0;
    }
}

/* Slots from now in which the sending user changes nothing but counts (a
 * refusal, or credit it waits for); 0 when it acts in the next slot.  In
 * slots that send no new frame the queue keeps its frames. */
static uint64_t quiet_slots(const struct sim *s, const struct dir *d, bool sends)
{
    if (d->done)
        return UINT64_MAX;
    if (d->pending && !sends)
        return d->q + d->pnf > s->txcap ? UINT64_MAX : 0;
    if (d->pending) /* taken once the queue, after a send, has room */
        return d->q + d->pnf > s->txcap + 1 ? d->q + d->pnf - s->txcap - 1 : 0;
    if (s->cfg->bytes && d->offered_bytes >= s->cfg->bytes)
        return 0;
    if (s->stopped)
        return UINT64_MAX;
    if (!s->load_fx || d->credit + s->load_fx > 0)
        return 0;
    return (uint64_t)(-d->credit) / (uint64_t)s->load_fx; /* credit > 0 after one more */
}

static void quiet(const struct sim *s, struct dir *d, uint64_t k)
{
    if (d->done)
        return;
    if (d->pending)
        d->c.tx_rejected += k;
    if (s->load_fx)
        d->credit = rifl_linksim_credit_add(d->credit, s->load_fx, k);
}

/* Once no packet will come, the slot after which everything is delivered. */
static void find_completion(const struct sim *s, const struct dir *d, struct emu *e)
{
    if (!(s->cfg->bytes || s->cfg->offer_slots) || e->comp != UINT64_MAX ||
        !(d->done || s->stopped) || d->pending)
        return;
    uint64_t v = e->u ? e->u - 1 : 0, r = v;
    if (d->recv_cur != d->next_seq) {
        if (d->send_cur == d->next_seq) /* last frame sent: arrives D later */
            r = rifl_linksim_pkt_at(d, d->next_seq - 1)->t_last + s->D - e->t;
        else                            /* the queue's last frame goes at u + q - 1 */
            r = e->u + d->q - 1 + s->D;
    }
    e->comp = r > v ? r : v;
    if (e->comp + 1 < e->limit)
        e->limit = e->comp + 1;
}

static int emulate(struct sim *s, struct dir *d, struct emu *e)
{
    int i = (int)(d - s->d);
    find_completion(s, d, e);
    while (e->u < e->limit) {
        bool sends = true;
        uint64_t left = e->limit - e->u;
        if (d->wsend < s->nwin) {
            uint64_t ts = e->t + e->u, at = s->win[d->wsend].at;
            if (ts < at) /* (before the next window: steady) */
                left = min64(left, at - ts);
            else
                left = sends_run(s, d, i, ts, left, &sends);
        }
        uint64_t k = quiet_slots(s, d, sends);
        if (k) {
            k = k < left ? k : left;
            send_slots(d, e, k, sends);
            quiet(s, d, k);
            deliver(s, d, e);
            continue;
        }
        send_slots(d, e, 1, sends);
        deliver(s, d, e);
        int rc = rifl_linksim_generate(s, d, false);
        if (rc != RIFL_OK)
            return rc;
        find_completion(s, d, e);
    }
    return RIFL_OK;
}

static void emu_start(struct sim *s, struct dir *d, struct emu *e, uint64_t t, uint64_t m)
{
    memset(&d->c, 0, sizeof d->c);
    d->q = s->txcap - rifl_lane_send_space(d->tx) / s->pb;
    d->efid = rifl_lane_next_id(d->tx);
    d->erfid = rifl_lane_expected_id(d->rx);
    memset(d->runs, 0, d->nruns * sizeof *d->runs);
    d->run_head = 0;
    d->wsend = d->wrecv = 0;
    *e = (struct emu){ .t = t, .limit = m, .comp = UINT64_MAX, .sf0 = d->sf,
                       .xslot = m - 1 - s->D, .have0 = d->val.have };
}

/* The counts the lanes' accelerator needs, and the frame log, after j
 * slots. */
static void emu_finish(struct sim *s, struct dir *d, const struct emu *e, uint64_t j)
{
    /* data frames in flight at the start: received in the stretch */
    uint64_t inflight = 0;
    for (unsigned k = 0; k < s->D; k++)
        inflight += d->log[(d->erfid + k) & s->kmask] >= 0;
    uint64_t xend = e->comp < j ? d->sf : e->xend;
    d->c.data_recv = xend - (e->sf0 - inflight);
    /* steady at both ends: as many new frames taken as sent */
    d->c.fill_recv = d->c.data_sent + d->c.fill_sent - d->c.data_recv;
    uint64_t have = 0;
    if (d->recv_cur != d->next_seq) {
        const struct pkt *p = rifl_linksim_pkt_at(d, d->recv_cur);
        have = xend > p->first ? (xend - p->first) * s->pb : 0;
    }
    d->val.have = have;
    d->c.rx_bytes = e->rx_bytes + have - e->have0;
    /* the frame IDs of the last new frames, newest first */
    uint64_t nnew = d->c.data_sent + d->c.fill_sent;
    uint64_t from = nnew > s->nfid ? nnew - s->nfid : 0;
    for (unsigned i = 1; i <= d->nruns; i++) {
        const struct run *r = &d->runs[(d->run_head + d->nruns - i) % d->nruns];
        if (!r->n || r->u + r->n <= from)
            break;
        for (uint64_t u = r->u > from ? r->u : from; u < r->u + r->n; u++)
            d->log[(d->efid + u) & s->kmask] = r->x < 0 ? -1 : r->x + (int64_t)(u - r->u);
    }
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
            .keep_source = true, .extra = s->nwin ? &s->xtra[i] : NULL,
        };
        inflight[i] = d->inflight;
    }
    if (rifl_lane_advance(s->pair->lane, s->D, st, inflight) != RIFL_OK)
        return RIFL_ERR_STATE;
    unsigned F = s->cfg->lane.frame_bits;
    size_t fb = rifl_lane_frame_bytes(F);
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        if ((s->nwin ? rifl_phy_channel_skip_hits(d->ch, j) : rifl_phy_skip(d->ch, j)) != RIFL_OK)
            return RIFL_ERR_STATE;
        /* (hits passed are no hit of the last slot) */
        s->pair->hits_seen[i] = rifl_phy_get_stats(d->ch)->frames_hit;
        for (unsigned k = 0; k < s->D; k++) {
            if (s->cfg->encode_all)
                rifl_lane_frame_encode(&d->inflight[k], F, rifl_phy_inflight(d->ch, k, RIFL_PHY_WIRE));
            else
                memcpy(rifl_phy_inflight(d->ch, k, RIFL_PHY_CONTENT), &d->inflight[k], fb);
        }
        if (d->val.have)
            memcpy(d->val.buf, rifl_linksim_content(s, d, d->recv_cur), d->val.have);
        d->streak = j;
        if (s->nwin) {
            const struct window *w = &s->win[s->nwin - 1];
            const struct recovery *r = &s->rec[w->h];
            d->streak = s->pair->slot + j - (w->at + r->L) + r->streak[i];
        }
        const rifl_lane_stats *ls = rifl_lane_get_stats(d->tx);
        d->prev_new = ls->tx_frames[RIFL_KIND_DATA] + ls->tx_frames[RIFL_KIND_FILLER];
        d->prev_hit = rifl_phy_get_stats(d->ch)->frames_hit;
    }
    s->pair->slot += j;
    return RIFL_OK;
}

/* Fast-forward up to m slots from slot t; *done gets the slots done: m,
 * or fewer when everything is delivered before. */
int rifl_linksim_skip(struct sim *s, uint64_t t, uint64_t m, uint64_t *done)
{
    struct emu e[2];
    for (int i = 0; i < 2; i++) {
        emu_start(s, &s->d[i], &e[i], t, m);
        int rc = emulate(s, &s->d[i], &e[i]);
        if (rc != RIFL_OK)
            return rc;
    }
    uint64_t j = m;
    if (e[0].comp < m && e[1].comp < m)
        j = (e[0].comp > e[1].comp ? e[0].comp : e[1].comp) + 1;
    /* (no end of the run falls inside a window: the plan sees to it) */
    while (s->nwin && s->win[s->nwin - 1].at >= t + j)
        s->nwin--;
    if (s->nwin && s->win[s->nwin - 1].at + s->rec[s->win[s->nwin - 1].h].L > t + j)
        return RIFL_ERR_STATE;
    memset(s->xtra, 0, sizeof s->xtra);
    for (unsigned w = 0; w < s->nwin; w++)
        for (int i = 0; i < 2; i++)
            rifl_lane_stats_add(&s->xtra[i], &s->rec[s->win[w].h].extra[i]);
    s->res->carried += s->nwin;
    for (int i = 0; i < 2; i++) {
        /* a direction complete before the other only sends fillers */
        e[i].limit = j;
        int rc = emulate(s, &s->d[i], &e[i]);
        if (rc != RIFL_OK)
            return rc;
        emu_finish(s, &s->d[i], &e[i], j);
    }
    *done = j;
    return land(s, j);
}

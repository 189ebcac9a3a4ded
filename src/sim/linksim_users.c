/* The link simulator's users: the sending user of each direction hands
 * packets to its lane (whole, or in parts), the receiving user reads what
 * its lane delivers and checks it; both keep the packet records the latency
 * stamps and the fast path work from. */
#include <stdlib.h>

#include "linksim_priv.h"

size_t rifl_linksim_len(const rifl_linksim_config *c, uint64_t seed, uint64_t seq)
{
    if (c->len_count) {
        uint64_t x = seed ^ (seq * 0x9fb21c651e98df25ULL) ^ 0x1157;
        return c->len_list[rifl_splitmix64(&x) % c->len_count];
    }
    return rifl_packet_len(seed, seq, c->min_len, c->max_len);
}

size_t rifl_linksim_len_cb(void *ctx, uint64_t seq)
{
    const struct rifl_linksim_len_ctx *l = ctx;
    return rifl_linksim_len(l->cfg, l->seed, seq);
}

size_t rifl_linksim_pkt_len(const struct sim *s, const struct dir *d, uint64_t seq)
{
    return rifl_linksim_len(s->cfg, d->stream_seed, seq);
}

struct pkt *rifl_linksim_pkt_at(const struct dir *d, uint64_t seq)
{
    return &d->ring[seq & d->rmask];
}

static int add_packet(struct sim *s, struct dir *d, uint64_t seq, uint32_t len, uint32_t nf)
{
    /* drop packets that are delivered and older than the replay window */
    while (d->oldest < d->recv_cur && d->oldest < d->send_cur &&
           rifl_linksim_pkt_at(d, d->oldest)->first + rifl_linksim_pkt_at(d, d->oldest)->nf +
                   s->nfid + 1 <= d->sf)
        d->oldest++;
    if (seq - d->oldest > d->rmask) {
        uint64_t cap = (d->rmask + 1) * 2;
        struct pkt *r = malloc(cap * sizeof *r);
        if (!r)
            return RIFL_ERR_NOMEM;
        for (uint64_t q = d->oldest; q < seq; q++)
            r[q & (cap - 1)] = *rifl_linksim_pkt_at(d, q);
        free(d->ring);
        d->ring = r;
        d->rmask = cap - 1;
    }
    struct pkt *p = rifl_linksim_pkt_at(d, seq);
    p->first = d->qf;
    p->nf = nf;
    p->len = len;
    p->t_first = p->t_last = 0;
    d->qf += nf;
    return RIFL_OK;
}

const uint8_t *rifl_linksim_content_in(struct dir *d, struct content_cache *c, uint64_t seq)
{
    if (!c->ok || c->seq != seq) {
        rifl_packet_fill(d->stream_seed, seq, c->buf, rifl_linksim_pkt_at(d, seq)->len);
        c->seq = seq;
        c->ok = true;
    }
    return c->buf;
}

const uint8_t *rifl_linksim_content(struct sim *s, struct dir *d, uint64_t seq)
{
    (void)s;
    return rifl_linksim_content_in(d, &d->cache, seq);
}

/* The next packet, when the user has one to give now. */
static bool next_packet(struct sim *s, struct dir *d)
{
    const rifl_linksim_config *c = s->cfg;
    if (c->bytes && d->offered_bytes >= c->bytes) {
        d->done = true;
        return false;
    }
    if (s->stopped || (s->load_fx && d->credit <= 0))
        return false;
    d->plen = (uint32_t)rifl_linksim_pkt_len(s, d, d->next_seq);
    d->pnf = (d->plen + s->pb - 1) / s->pb;
    d->poff = 0;
    d->pending = true;
    if (s->load_fx)
        d->credit -= (int64_t)d->pnf << RIFL_LINKSIM_CREDIT_SHIFT;
    return true;
}

/* The lane took the whole of the pending packet. */
static void taken(struct dir *d)
{
    d->offered_bytes += d->plen;
    d->next_seq++;
    d->pending = false;
}

/* Parts: one rifl_lane_send_part call per slot.  The packet's record is
 * made when it is created (its frames enter the queue in order from then
 * on). */
static int offer_parts(struct sim *s, struct dir *d)
{
    if (!d->pending) {
        if (!next_packet(s, d))
            return RIFL_OK;
        rifl_packet_fill(d->stream_seed, d->next_seq, d->pkt, d->plen);
        int rc = add_packet(s, d, d->next_seq, d->plen, d->pnf);
        if (rc != RIFL_OK)
            return rc;
    }
    size_t got;
    if (rifl_lane_send_part(d->tx, d->pkt + d->poff, d->plen - d->poff, 1, &got) != RIFL_OK)
        return RIFL_ERR_STATE;
    d->poff += got;
    if (d->poff == d->plen)
        taken(d);
    return RIFL_OK;
}

/* Sending user of one direction for one slot.  `real`: hand packets to the
 * lane; otherwise count their frames in d->q (fast path). */
int rifl_linksim_generate(struct sim *s, struct dir *d, bool real)
{
    const rifl_linksim_config *c = s->cfg;
    if (d->done)
        return RIFL_OK;
    if (s->load_fx)
        d->credit = rifl_linksim_credit_add(d->credit, s->load_fx, 1);
    if (c->offer == RIFL_LINKSIM_PARTS)
        return offer_parts(s, d);
    for (;;) {
        if (!d->pending && !next_packet(s, d))
            return RIFL_OK;
        /* room in frames, compared without dividing the bytes */
        bool fits = real ? (uint64_t)d->pnf * s->pb <= rifl_lane_send_space(d->tx)
                         : d->pnf <= s->txcap - d->q;
        if (!fits) {
            if (real)
                rifl_lane_send(d->tx, d->pkt, d->plen); /* refused and counted */
            else
                d->c.tx_rejected++;
            return RIFL_OK;
        }
        if (real) {
            rifl_packet_fill(d->stream_seed, d->next_seq, d->pkt, d->plen);
            if (rifl_lane_send(d->tx, d->pkt, d->plen) != RIFL_OK)
                return RIFL_ERR_STATE;
        } else {
            d->q += d->pnf;
            d->c.tx_packets++;
            d->c.tx_bytes += d->plen;
        }
        int rc = add_packet(s, d, d->next_seq, d->plen, d->pnf);
        if (rc != RIFL_OK)
            return rc;
        taken(d);
    }
}

void rifl_linksim_stamp_sent(struct dir *d, uint64_t idx, uint64_t t)
{
    struct pkt *p = rifl_linksim_pkt_at(d, d->send_cur);
    if (idx == p->first)
        p->t_first = t;
    if (idx == p->first + p->nf - 1) {
        p->t_last = t;
        d->send_cur++;
    }
}

void rifl_linksim_delivered(struct sim *s, struct dir *d, uint64_t seq, uint64_t t)
{
    struct pkt *p = rifl_linksim_pkt_at(d, seq);
    rifl_hist_add(&s->res->lat, t - p->t_first);
    rifl_hist_add(&s->res->lat_last, t - p->t_last);
    d->last_read = t;
}

/* Bytes the receiving user of direction i reads in slot t. */
static size_t read_budget(struct sim *s, unsigned i, uint64_t t)
{
    const rifl_linksim_config *c = s->cfg;
    if (c->read_budget)
        return c->read_budget(c->hook_ctx, i, t);
    if (c->rx_stall && t % c->rx_period < c->rx_stall)
        return 0;
    if (c->rx_ready < 1.0 && !(rifl_rng_double(&s->rng) < c->rx_ready))
        return 0;
    return SIZE_MAX;
}

/* n bytes just read into d->rbuf (eop: they end a packet), in slot t: to
 * the validator, and a packet completed stamped. */
static void took(struct sim *s, struct dir *d, size_t n, int eop, uint64_t t)
{
    uint64_t before = d->val.next_seq;
    int64_t r = rifl_validator_feed(&d->val, d->rbuf, n, eop);
    if (r >= 0 && (uint64_t)r < d->next_seq && (uint64_t)r >= d->oldest)
        rifl_linksim_delivered(s, d, (uint64_t)r, t);
    if (eop && d->val.next_seq != before)
        d->recv_cur = d->val.next_seq;
}

static void read_side(struct sim *s, struct dir *d, size_t budget, uint64_t t)
{
    size_t n;
    int eop;
    while (budget) {
        size_t cap = budget < s->maxlen ? budget : s->maxlen;
        if (rifl_lane_read(d->rx, d->rbuf, cap, &n, &eop) != RIFL_OK)
            break;
        if (d->first_read < 0)
            d->first_read = (int64_t)t;
        if (budget != SIZE_MAX)
            budget -= n;
        took(s, d, n, eop, t);
    }
}

/* Direction d's reader takes the n frames a quiet run delivered, frame m
 * having arrived in slot at[m] + shift, as it would have one slot after
 * each arrival: a packet completes in the slot after its last frame. */
void rifl_linksim_read_arrived(struct sim *s, struct dir *d, const uint64_t *at, unsigned n,
                               uint64_t shift)
{
    unsigned used = 0;
    size_t got;
    int eop;
    while (used < n) {
        unsigned before = rifl_lane_rx_backlog(d->rx);
        if (rifl_lane_read(d->rx, d->rbuf, s->maxlen, &got, &eop) != RIFL_OK)
            break;
        used += before - rifl_lane_rx_backlog(d->rx);
        uint64_t t = at[used ? used - 1 : 0] + shift + 1;
        if (d->first_read < 0)
            d->first_read = (int64_t)(at[0] + shift + 1);
        took(s, d, got, eop, t);
    }
}

/* The users' side of slot t: both senders, then both readers. */
int rifl_linksim_user_side(struct sim *s, uint64_t t)
{
    for (int i = 0; i < 2; i++) {
        int rc = rifl_linksim_generate(s, &s->d[i], true);
        if (rc != RIFL_OK)
            return rc;
    }
    for (unsigned i = 0; i < 2; i++) {
        size_t budget = read_budget(s, i, t);
        if (budget && rifl_lane_rx_backlog(s->d[i].rx)) /* (nothing to read: no call) */
            read_side(s, &s->d[i], budget, t);
    }
    return RIFL_OK;
}

/* Every packet the users will give was taken and delivered. */
bool rifl_linksim_stalled(const rifl_linksim_config *c, const rifl_validator *v, bool due,
                          uint64_t last_read, uint64_t t)
{
    uint64_t w = c->stall_slots ? c->stall_slots : RIFL_LINKSIM_STALL_SLOTS;
    return t >= last_read && t - last_read >= w && due && !rifl_validator_clean(v);
}

bool rifl_linksim_all_done(const struct sim *s)
{
    for (int i = 0; i < 2; i++) {
        const struct dir *d = &s->d[i];
        if (!(d->done || s->stopped) || d->pending || d->recv_cur != d->next_seq)
            return false;
    }
    return true;
}

/* The link simulator for bonded links (rifl_linksim_config.lanes > 1): a
 * bonded end (rifl/bond.h) at each side, one cable or serial line per lane
 * and direction, a sending user per end offering whole packets at
 * saturation, a receiving user checking every packet it reads, latency
 * stamps.
 *
 * Two drivers.  The general one models each lane's line itself: frames in
 * flight with their arrival times, so that the ends can run on clocks ppm
 * apart, over serial lines, with lanes crossed or dead.  When the ends share
 * one clock and the lanes receive aligned frames, lane i of the two ends is
 * instead a rifl_pair (rifl/sim/pair.h) on the bond's own lanes, stepped by
 * reference: no frame is built or copied unless a bit error falls in it,
 * and steady stretches go through the lanes' accelerator (bondsim_fast.c).
 * Within a slot the two ends touch nothing of each other's (every line is
 * at least a frame long), so both drivers take the same course, counter for
 * counter; `fast` off keeps the general one, and tests/test_linksim.c
 * compares them.
 *
 * A packet's first and last narrow words are known when it is queued (the
 * words are counted across packets), so its send stamps are the slots at
 * which the bond placed those words. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bondsim_priv.h"

int rifl_bondsim_pkt_add(struct bdir *d, uint64_t seq, uint64_t nwords, size_t len)
{
    if (seq - d->oldest > d->rmask) {
        uint64_t cap = (d->rmask + 1) * 2;
        struct bpkt *r = malloc(cap * sizeof *r);
        if (!r)
            return RIFL_ERR_NOMEM;
        for (uint64_t q = d->oldest; q < seq; q++)
            r[q & (cap - 1)] = *bpkt_at(d, q);
        free(d->ring);
        d->ring = r;
        d->rmask = cap - 1;
    }
    *bpkt_at(d, seq) = (struct bpkt){ d->words, d->words + nwords - 1, 0, 0, len };
    d->words += nwords;
    return RIFL_OK;
}

/* The sending user: whole packets, as many as the bond's queue takes. */
static int offer(struct bsim *s, struct bdir *d)
{
    const rifl_linksim_config *c = s->cfg;
    while (!d->done) {
        if (!d->pending) {
            if (c->bytes && d->offered_bytes >= c->bytes) {
                d->done = true;
                break;
            }
            d->plen = rifl_linksim_len(c, d->stream_seed, d->next_seq);
            rifl_packet_fill(d->stream_seed, d->next_seq, d->pkt, d->plen);
            d->pending = true;
        }
        int rc = rifl_bond_send(d->tx, d->pkt, d->plen);
        if (rc == RIFL_ERR_AGAIN)
            break;
        if (rc != RIFL_OK)
            return RIFL_ERR_STATE;
        rc = rifl_bondsim_pkt_add(d, d->next_seq, (d->plen + s->wbytes - 1) / s->wbytes, d->plen);
        if (rc != RIFL_OK)
            return rc;
        d->offered_bytes += d->plen;
        d->next_seq++;
        d->pending = false;
    }
    return RIFL_OK;
}

/* Send stamps of the packets whose first or last word was placed by now. */
static void stamp(struct bdir *d, uint64_t t)
{
    uint64_t placed = rifl_bond_get_stats(d->tx)->tx_words;
    while (d->stamp_cur < d->next_seq) {
        struct bpkt *p = bpkt_at(d, d->stamp_cur);
        if (p->first >= placed)
            return;
        if (!p->t_first)
            p->t_first = t + 1; /* +1: 0 means not stamped */
        if (p->last >= placed)
            return;
        p->t_last = t + 1;
        d->stamp_cur++;
    }
}

/* The receiving user of direction d reads at slot t. */
static void read_side(struct bsim *s, struct bdir *d, uint64_t t)
{
    const rifl_linksim_config *c = s->cfg;
    if (c->rx_stall && t % c->rx_period < c->rx_stall)
        return;
    if (c->rx_ready < 1.0 && !(rifl_rng_double(&s->rng) < c->rx_ready))
        return;
    for (;;) {
        size_t n;
        int eop;
        if (rifl_bond_read(d->rx, d->rbuf, s->maxlen, &n, &eop) != RIFL_OK)
            break;
        if (d->first_read < 0)
            d->first_read = (int64_t)t;
        /* the validator gathers a packet's parts itself */
        int64_t r = rifl_validator_feed(&d->val, d->rbuf, n, eop);
        if (r >= 0 && (uint64_t)r < d->next_seq && (uint64_t)r >= d->oldest) {
            const struct bpkt *p = bpkt_at(d, (uint64_t)r);
            rifl_hist_add(&s->res->lat, t - (p->t_first - 1));
            rifl_hist_add(&s->res->lat_last, t - (p->t_last - 1));
            d->last_read = t;
        }
        if (eop)
            while (d->oldest < d->val.next_seq && d->oldest < d->stamp_cur)
                d->oldest++;
    }
}

/* A frame on its way to a lane: when it arrives (in units of end B's
 * slots), in which form, what the aligner said of it, its bytes. */
struct flight {
    double at;
    uint8_t form;
    rifl_phy_serial_rx st;
};

static uint8_t *flight_data(const struct bsim *s, struct flight *f) { (void)s; return (uint8_t *)(f + 1); }

static struct flight *flight_at(const struct bsim *s, unsigned e, unsigned i, uint64_t n)
{
    return (struct flight *)(s->fl[e][i] + (n & s->fmask) * s->fstride);
}

/* rifl-multilane §5.2: a lane whose rx_up is low while another lane of the
 * end has been up for the last 2^20 words is down, reported once per
 * occurrence.  A shorter rx_up (up_log2, the reference's simulation build)
 * shortens that window too, but only once every lane of the end has been
 * up at the same time: before, the lanes may still be finding their bit
 * offsets, a search of thousands of words, and a lane slower to lock than
 * another is not down.  A longer rx_up leaves the window at 2^20. */
static void lanes_down(struct bsim *s, unsigned e, uint64_t k)
{
    uint64_t wpf = s->cfg->lane.frame_bits / 64;
    uint64_t window = s->all_up_once[e] ? s->up_words : (uint64_t)1 << RIFL_ALIGNER_UP_LOG2;
    bool other_long_up = false, all_up = true;
    for (unsigned i = 0; i < s->L; i++) {
        bool up = rifl_lane_get_flags(rifl_bond_lane(s->end[e], i)).rx_up;
        if (up && !s->was_up[e][i])
            s->up_since[e][i] = k;
        s->was_up[e][i] = up;
        all_up &= up;
        if (up)
            s->down_told[e][i] = false;
        if (up && (k - s->up_since[e][i]) * wpf >= window)
            other_long_up = true;
    }
    s->all_up_once[e] |= all_up;
    for (unsigned i = 0; i < s->L && other_long_up; i++)
        if (!s->was_up[e][i] && !s->down_told[e][i]) {
            s->down_told[e][i] = true;
            s->res->lanes[i].lane_down[e]++;
        }
}

/* End e's slot s->k[e]: its sending user, its bond and lanes send (the
 * lines carry each frame to the far end, where it arrives D of this end's
 * slots later), its lanes receive what has arrived by the end of the slot
 * (0, 1 or 2 frames when the clocks differ), its compensation detector, its
 * receiving user. */
static int end_slot(struct bsim *s, unsigned e)
{
    uint64_t k = s->k[e];
    double t1 = (double)(k + 1) / s->rate[e];
    int rc = offer(s, &s->d[e]);
    if (rc != RIFL_OK)
        return rc;
    rifl_bond_place(s->end[e]);
    stamp(&s->d[e], (uint64_t)((double)k / s->rate[e] + 0.5));
    for (unsigned i = 0; i < s->L; i++) {
        rifl_lane *l = rifl_bond_lane(s->end[e], i);
        rifl_phy *ph = s->line[e][i];
        rifl_phy_form form = s->cfg->encode_all ? RIFL_PHY_WIRE : RIFL_PHY_CONTENT;
        if (form == RIFL_PHY_WIRE)
            rifl_lane_tx(l, k, rifl_phy_tx_buffer(ph, form));
        else
            rifl_lane_tx_frame(l, k, rifl_phy_tx_buffer(ph, form));
        rifl_phy_frame out[2];
        /* a dead lane's transmitter puts nothing on its line */
        if (s->cfg->dead && i == s->cfg->dead_lane && k >= s->cfg->dead_at)
            form = RIFL_PHY_NONE;
        unsigned n = rifl_phy_exchange(ph, k, form, out, 2);
        /* crossed lines reach the other lane of the pair at the far end */
        unsigned to = i;
        if (s->cfg->swapped && i == s->cfg->swap_lanes[0])
            to = s->cfg->swap_lanes[1];
        else if (s->cfg->swapped && i == s->cfg->swap_lanes[1])
            to = s->cfg->swap_lanes[0];
        for (unsigned q = 0; q < n; q++) {
            unsigned far = 1 - e;
            if (s->fcount[far][to] > s->fmask)
                return RIFL_ERR_STATE;
            struct flight *f = flight_at(s, far, to, s->fhead[far][to] + s->fcount[far][to]);
            f->at = (double)(k + s->D) / s->rate[e];
            f->form = (uint8_t)out[q].form;
            f->st = s->serial ? rifl_phy_serial_rx_state(ph, q) : (rifl_phy_serial_rx){ true, true };
            memcpy(flight_data(s, f), out[q].data,
                   out[q].form == RIFL_PHY_WIRE ? s->wire_bytes : s->content_bytes);
            s->fcount[far][to]++;
        }
    }
    for (unsigned i = 0; i < s->L; i++) {
        rifl_lane *l = rifl_bond_lane(s->end[e], i);
        unsigned got = 0;
        while (s->fcount[e][i]) {
            struct flight *f = flight_at(s, e, i, s->fhead[e][i]);
            if (!(f->at < t1))
                break;
            if (s->serial)
                rifl_bond_rx_state(s->end[e], i, f->st.aligned, f->st.up);
            if (f->form == RIFL_PHY_WIRE)
                rifl_lane_rx(l, k, flight_data(s, f), NULL);
            else
                rifl_lane_rx_frame(l, k, (const rifl_lane_frame *)flight_data(s, f), NULL);
            s->fhead[e][i]++;
            s->fcount[e][i]--;
            got++;
        }
        if (!got)
            rifl_lane_rx(l, k, NULL, NULL);
        if (i == s->det_lane)
            s->det_frames[e] += got;
    }
    if (s->serial)
        lanes_down(s, e, k);
    /* clock compensation, rifl-multilane §3 rule 2: from the first frame on
     * the detector's lane, local slots against frames received; each new
     * largest lead of the slots asks every lane for one compensation slot */
    if (s->det_on[e] || s->det_frames[e]) {
        s->det_on[e] = true;
        s->det_slots[e]++;
        int64_t lead = (int64_t)s->det_slots[e] - (int64_t)s->det_frames[e];
        if (lead > s->det_max[e]) {
            s->det_max[e] = lead;
            for (unsigned i = 0; i < s->L; i++)
                rifl_lane_add_pause_slots(rifl_bond_lane(s->end[e], i), 1);
            s->res->comp_requests[e]++;
        }
    }
    read_side(s, &s->d[1 - e], (uint64_t)(t1 + 0.5));
    s->k[e]++;
    return RIFL_OK;
}

/* Slot k of both ends on one clock, lane i of the two ends a pair: each
 * end's sending user and bond, every pair's slot (both lanes send, both
 * lines carry, both lanes receive), each end's receiving user, end A's
 * first as the general driver has them. */
static int pairs_slot(struct bsim *s)
{
    uint64_t k = s->k[1];
    /* The users' calls are skipped where they would change nothing but a
     * count: a sending user refused is refused again until a word is
     * placed, stamps move only with words placed, and a reader that found
     * nothing finds nothing until a lane delivers a data frame. */
    bool fresh = s->fresh;
    s->fresh = false;
    for (int e = 0; e < 2; e++) {
        struct bdir *d = &s->d[e];
        if (fresh || s->offer_due[e]) {
            int rc = offer(s, d);
            if (rc != RIFL_OK)
                return rc;
        } else if (!d->done) {
            rifl_bond_count_refused(d->tx, 1);
        }
        s->offer_due[e] = rifl_bond_place(s->end[e]) != 0;
        if (fresh || s->offer_due[e])
            stamp(d, k);
    }
    unsigned by_ref = 0;
    for (unsigned i = 0; i < s->L; i++) {
        if (!s->pair_ref[i] && rifl_pair_ref_room(s->pair[i])) {
            if (rifl_pair_ref_begin(s->pair[i]) != RIFL_OK)
                return RIFL_ERR_STATE;
            s->pair_ref[i] = true;
        }
        if (s->pair_ref[i]) {
            rifl_pair_ref_step(s->pair[i]);
            by_ref++;
        } else {
            rifl_pair_step(s->pair[i], NULL);
        }
    }
    if (by_ref == s->L)
        s->res->ref_slots++;
    for (int e = 0; e < 2; e++) {
        /* end e reads direction 1 - e */
        uint64_t got = 0;
        for (unsigned i = 0; i < s->L; i++)
            got += s->lane_st[e][i]->rx_delivered[RIFL_KIND_DATA];
        if (fresh || got != s->rx_data[e] || !s->read_skip) {
            s->rx_data[e] = got;
            read_side(s, &s->d[1 - e], k + 1);
        }
    }
    rifl_bondsim_fast_slot(s, k);
    s->k[0]++;
    s->k[1]++;
    return RIFL_OK;
}

static bool all_up(const struct bsim *s)
{
    for (int e = 0; e < 2; e++)
        for (unsigned i = 0; i < s->L; i++)
            if (!rifl_lane_get_flags(rifl_bond_lane(s->end[e], i)).rx_up)
                return false;
    return true;
}

static bool all_done(const struct bsim *s)
{
    for (int i = 0; i < 2; i++) {
        const struct bdir *d = &s->d[i];
        if (!d->done || d->pending || d->val.next_seq != d->next_seq)
            return false;
    }
    return true;
}

/* A direction whose stream can no longer complete (stall_slots) */
static bool stalled(const struct bsim *s, uint64_t t)
{
    for (int i = 0; i < 2; i++) {
        const struct bdir *d = &s->d[i];
        bool due = !d->done || d->pending || d->val.next_seq != d->next_seq;
        if (rifl_linksim_stalled(s->cfg, &d->val, due, d->last_read, t))
            return true;
    }
    return false;
}

/* The seed of end e's line of lane i. */
static uint64_t line_seed(const rifl_linksim_result *res, int e, unsigned i)
{
    uint64_t x = res->channel_seed[e] ^ (0x9e3779b97f4a7c15ULL * (i + 1));
    return rifl_splitmix64(&x);
}

static int make(struct bsim *s, char *msg, size_t msglen)
{
    const rifl_linksim_config *c = s->cfg;
    rifl_linksim_result *res = s->res;
    s->L = c->lanes > 1 ? c->lanes : 1;
    s->serial = c->serial;
    s->maxlen = c->max_len;
    for (unsigned i = 0; i < c->len_count; i++)
        s->maxlen = c->len_list[i] > s->maxlen ? c->len_list[i] : s->maxlen;
    rifl_bond_config bc = { .lane = c->lane, .lanes = s->L, .group_lanes = c->group_lanes,
                            .lane_tags = c->lane_tags,
                            .tx_queue_bytes = s->maxlen + 4 > 65536 ? s->maxlen + 4 : 65536 };
    for (int e = 0; e < 2; e++) {
        int rc = rifl_bond_create(&bc, &s->end[e], msg, msglen);
        if (rc != RIFL_OK)
            return rc;
        if (s->serial && (rc = rifl_bond_hold(s->end[e])) != RIFL_OK)
            return rc;
    }
    s->wbytes = rifl_bond_group_lanes(s->end[0]) * rifl_payload_bytes(c->lane.frame_bits);
    unsigned D = c->delay_frames ? c->delay_frames
                                 : rifl_link_delay_frames(&c->lane.link, c->lane.frame_bits);
    res->delay_frames = D;
    s->D = D;
    s->by_pairs = c->fast && !s->serial && c->ppm == 0 && !c->swapped && !c->dead;
    s->fresh = true;
    for (int e = 0; e < 2; e++)
        for (unsigned i = 0; i < s->L; i++)
            s->lane_st[e][i] = rifl_lane_get_stats(rifl_bond_lane(s->end[e], i));
    /* a reader that reads every slot can wait for a lane's data frame */
    s->read_skip = c->rx_ready >= 1.0 && !c->rx_stall;
    for (unsigned i = 0; s->by_pairs && i < s->L; i++) {
        rifl_pair_config pc = {
            .lane = c->lane, .ber = { c->ber[0], c->ber[1] },
            .delay_frames = D + c->lane_skew_bits[i] / c->lane.frame_bits,
            .encode_all = c->encode_all,
            .lanes = { rifl_bond_lane(s->end[0], i), rifl_bond_lane(s->end[1], i) },
        };
        for (int e = 0; e < 2; e++)
            pc.seed[e] = line_seed(res, e, i);
        int rc = rifl_pair_create(&pc, &s->pair[i], msg, msglen);
        if (rc != RIFL_OK)
            return rc;
    }
    /* the lines carry frames at once; the delay is the driver's, in the
     * sending end's own slots */
    for (int e = 0; e < 2 && !s->by_pairs; e++)
        for (unsigned i = 0; i < s->L; i++) {
            uint64_t seed = line_seed(res, e, i);
            size_t cb = c->encode_all ? 0 : rifl_lane_frame_bytes(c->lane.frame_bits);
            rifl_lane *l = rifl_bond_lane(s->end[e], i);
            int rc;
            if (s->serial) {
                rifl_phy_serial_config sc = {
                    .frame_bits = c->lane.frame_bits,
                    .delay_frames = c->lane_skew_bits[i] / c->lane.frame_bits,
                    /* (one lane: its direction's bit_offset, as the
                     * checks take it) */
                    .delay_bits = (c->lanes > 1 ? c->lane_bit_offset[e][i] : c->bit_offset[e]) +
                                  c->lane_skew_bits[i] % c->lane.frame_bits,
                    .ber = c->ber[e],
                    .slip_rate = c->slip_rate[e], .seed = seed, .up_log2 = c->up_log2,
                    .content_bytes = cb, .encode = rifl_lane_phy_encode, .encode_ctx = l,
                };
                rc = rifl_phy_serial_create(&sc, &s->line[e][i], msg, msglen);
            } else {
                rifl_phy_channel_config cc = {
                    .frame_bits = c->lane.frame_bits,
                    .delay_frames = c->lane_skew_bits[i] / c->lane.frame_bits,
                    .ber = c->ber[e],
                    .seed = seed, .content_bytes = cb, .encode = rifl_lane_phy_encode,
                    .encode_ctx = l,
                };
                rc = rifl_phy_channel_create(&cc, &s->line[e][i], msg, msglen);
            }
            if (rc != RIFL_OK)
                return rc;
        }
    for (int i = 0; i < 2; i++) {
        struct bdir *d = &s->d[i];
        d->tx = s->end[i];
        d->rx = s->end[1 - i];
        d->stream_seed = res->stream_seed[i];
        d->rmask = 4095;
        d->first_read = -1;
        d->ring = calloc(d->rmask + 1, sizeof *d->ring);
        d->pkt = malloc(s->maxlen);
        d->rbuf = malloc(s->maxlen);
        if (!d->ring || !d->pkt || !d->rbuf)
            return RIFL_ERR_NOMEM;
        int rc = rifl_validator_init(&d->val, d->stream_seed, c->len_count ? 1 : c->min_len,
                                     s->maxlen);
        if (rc != RIFL_OK)
            return rc;
        if (c->len_count) {
            d->lctx = (struct rifl_linksim_len_ctx){ c, d->stream_seed };
            d->val.len_fn = rifl_linksim_len_cb;
            d->val.len_ctx = &d->lctx;
        }
    }
    rifl_rng_seed(&s->rng, rifl_linksim_seed(c->seed, 4));
    /* end A's clock runs ppm faster than end B's, which keeps the nominal
     * rate */
    s->rate[0] = 1.0 + c->ppm * 1e-6;
    s->rate[1] = 1.0;
    s->det_lane = s->L / 2 ? s->L / 2 - 1 : 0;
    /* (a longer rx_up than the reference's keeps the spec's window) */
    unsigned up_log2 = c->up_log2 ? c->up_log2 : RIFL_ALIGNER_UP_LOG2;
    s->up_words = (uint64_t)1 << (up_log2 < RIFL_ALIGNER_UP_LOG2 ? up_log2 : RIFL_ALIGNER_UP_LOG2);
    s->wire_bytes = c->lane.frame_bits / 8;
    s->content_bytes = rifl_lane_frame_bytes(c->lane.frame_bits);
    size_t a = _Alignof(max_align_t);
    size_t data = s->wire_bytes > s->content_bytes ? s->wire_bytes : s->content_bytes;
    s->fstride = (sizeof(struct flight) + data + a - 1) / a * a;
    uint64_t cap = 16;
    while (cap < 2u * (D + 8))
        cap <<= 1;
    s->fmask = cap - 1;
    for (int e = 0; e < 2 && !s->by_pairs; e++)
        for (unsigned i = 0; i < s->L; i++)
            if (!(s->fl[e][i] = calloc(cap, s->fstride)))
                return RIFL_ERR_NOMEM;
    return rifl_bondsim_fast_init(s);
}

static void sum_stats(uint64_t *to, const uint64_t *from, size_t bytes)
{
    for (size_t k = 0; k < bytes / sizeof(uint64_t); k++)
        to[k] += from[k];
}

static void collect(struct bsim *s, uint64_t t)
{
    const rifl_linksim_config *c = s->cfg;
    rifl_linksim_result *res = s->res;
    res->slots = t;
    res->complete = all_done(s);
    res->nlanes = s->L;
    for (int e = 0; e < 2; e++) {
        res->bond[e] = *rifl_bond_get_stats(s->end[e]);
        for (unsigned i = 0; i < s->L; i++) {
            struct rifl_linksim_lane *ln = &res->lanes[i];
            ln->lane[e] = *rifl_lane_get_stats(rifl_bond_lane(s->end[e], i));
            unsigned pl, pn;
            bool tag = rifl_lane_peer_tag(rifl_bond_lane(s->end[e], i), &pl, &pn);
            ln->peer_lane[e] = tag ? (int)pl : -1;
            ln->peer_lanes[e] = tag ? (int)pn : -1;
            ln->ch[e] = *rifl_phy_get_stats(s->by_pairs ? s->pair[i]->phy[e] : s->line[e][i]);
            sum_stats((uint64_t *)&res->lane[e], (const uint64_t *)&ln->lane[e], sizeof ln->lane[e]);
            sum_stats((uint64_t *)&res->ch[e], (const uint64_t *)&ln->ch[e], sizeof ln->ch[e]);
            if (s->serial) {
                ln->aligner[e] = *rifl_aligner_get_stats(rifl_phy_serial_aligner(s->line[e][i]));
                ln->serial[e] = *rifl_phy_serial_get_stats(s->line[e][i]);
                sum_stats((uint64_t *)&res->aligner[e], (const uint64_t *)&ln->aligner[e],
                          sizeof ln->aligner[e]);
                sum_stats((uint64_t *)&res->serial[e], (const uint64_t *)&ln->serial[e],
                          sizeof ln->serial[e]);
                /* the longest recovery of any lane, not a sum */
                rifl_phy_serial_stats *tot = &res->serial[e];
                tot->recovery_max_lost -= ln->serial[e].recovery_max_lost;
                tot->recovery_max_repeated -= ln->serial[e].recovery_max_repeated;
                if (ln->serial[e].recovery_max_lost > tot->recovery_max_lost)
                    tot->recovery_max_lost = ln->serial[e].recovery_max_lost;
                if (ln->serial[e].recovery_max_repeated > tot->recovery_max_repeated)
                    tot->recovery_max_repeated = ln->serial[e].recovery_max_repeated;
            }
        }
    }
    double gsum = 0, esum = 0;
    for (int i = 0; i < 2; i++) {
        struct bdir *d = &s->d[i];
        res->val[i] = d->val.st;
        res->offered_packets[i] = d->next_seq;
        res->offered_bytes[i] = d->offered_bytes;
        res->held_bytes[i] = d->pending ? d->plen : 0;
        res->first_read[i] = d->first_read;
        rifl_linksim_window(c, res, i, d->last_read, t, s->L, &esum, &gsum);
    }
    res->goodput_gbps = gsum / 2;
    res->efficiency = esum / 2;
    res->lossless = rifl_validator_clean(&s->d[0].val) && rifl_validator_clean(&s->d[1].val);
}

static void bsim_free(struct bsim *s)
{
    rifl_bondsim_fast_free(s);
    for (unsigned i = 0; i < RIFL_BOND_MAX_LANES; i++)
        rifl_pair_free(s->pair[i]); /* (before the bonds: the lanes are theirs) */
    for (int e = 0; e < 2; e++) {
        rifl_bond_free(s->end[e]);
        for (unsigned i = 0; i < RIFL_BOND_MAX_LANES; i++)
            rifl_phy_free(s->line[e][i]);
        for (unsigned i = 0; i < RIFL_BOND_MAX_LANES; i++)
            free(s->fl[e][i]);
        free(s->d[e].ring);
        free(s->d[e].pkt);
        free(s->d[e].rbuf);
        rifl_validator_free(&s->d[e].val);
    }
}

int rifl_linksim_run_bonded(const rifl_linksim_config *cfg, rifl_linksim_result *res, char *msg,
                            size_t msglen)
{
    struct bsim S, *s = &S;
    memset(s, 0, sizeof S);
    s->cfg = cfg;
    s->res = res;
    res->frame_ns = cfg->lane.frame_bits / cfg->lane.link.lane_rate_gbps;
    int rc = make(s, msg, msglen);
    uint64_t t = 0, next_report = 1u << 14;
    while (rc == RIFL_OK) {
        /* end B keeps the nominal clock: its slots count the run, which
         * ends with the slot in which the last packet is read (end B's
         * slot runs even when end A read it) */
        t = s->k[1];
        unsigned e = s->by_pairs || (double)s->k[0] / s->rate[0] <= (double)s->k[1] / s->rate[1]
                         ? 0 : 1; /* (the driver by lane pairs steps both ends at once) */
        if ((e == 0 && all_done(s)) || (cfg->max_slots && t >= cfg->max_slots))
            break;
        if (e == 0 && stalled(s, t)) {
            res->stalled = true;
            break;
        }
        if (s->by_pairs) {
            uint64_t did = 0;
            rc = rifl_bondsim_stretch(s, &did);
            s->fresh |= did != 0;
            if (rc == RIFL_OK && !did)
                rc = pairs_slot(s);
        } else {
            rc = end_slot(s, e);
        }
        if (rc != RIFL_OK)
            break;
        if (s->serial && !res->startup_slots && all_up(s))
            res->startup_slots = s->k[1];
        if (cfg->progress && t >= next_report) {
            double f = cfg->bytes ? (double)(s->d[0].val.st.bytes_ok + s->d[1].val.st.bytes_ok) /
                                        (2.0 * (double)cfg->bytes)
                                  : 0;
            if (cfg->max_slots && (double)t / (double)cfg->max_slots > f)
                f = (double)t / (double)cfg->max_slots;
            cfg->progress(cfg->progress_ctx, f > 1 ? 1 : f, t);
            next_report = t + (1u << 14);
        }
    }
    for (unsigned i = 0; i < s->L && rc == RIFL_OK; i++)
        if (s->pair_ref[i]) {
            rc = rifl_pair_ref_end(s->pair[i]) == RIFL_OK ? RIFL_OK : RIFL_ERR_STATE;
            s->pair_ref[i] = false;
        }
    if (rc == RIFL_OK)
        collect(s, t);
    else if (rc == RIFL_ERR_STATE)
        rifl_msg(msg, msglen, "internal error: bonded simulator out of step at slot %llu",
                 (unsigned long long)t);
    else if (rc == RIFL_ERR_NOMEM)
        rifl_msg(msg, msglen, "out of memory");
    bsim_free(s);
    return rc;
}

/* The bonded link simulator's fast path, for its driver by lane pairs
 * (bondsim.c): both ends on one clock, aligned lanes of one delay, readers
 * that take everything in every slot.
 *
 * When every lane pair is steady (rifl_lane_steady), no frame in flight is
 * damaged and no cable flips a bit in the next m slots, those m slots are
 * fully determined.  Each end's bond places one word per group per slot
 * from its queue, which its user keeps topped up; every lane sends the
 * segment its group's word gives it, or a filler; D slots later the word
 * arrives whole at the far end and is read at once.  A stretch works this
 * out from packet lengths alone, no byte made or moved, one direction at a
 * time and the slots in which a bond places a word of every group of one
 * packet, none its last, as one bulk run, keeping the users,
 * the packet stamps, the validators and the latency histograms in step,
 * then hands the counts to the lanes' accelerator through each pair
 * (rifl_pair_advance) and to each bond (rifl_bond_advance), which rebuild
 * what must hold real bytes: replay buffers, frames in flight, queues.  A
 * run takes exactly the course of stepping every slot: tests/test_linksim.c
 * compares the two counter by counter. */
#include <stdlib.h>
#include <string.h>

#include "bondsim_priv.h"

/* Slots to wait after a failed try. */
#define STRETCH_WAIT 8

int rifl_bondsim_fast_init(struct bsim *s)
{
    const rifl_linksim_config *c = s->cfg;
    bool ok = s->by_pairs && !c->encode_all && c->rx_ready >= 1.0 && !c->rx_stall;
    for (unsigned i = 0; i < s->L; i++)
        ok = ok && c->lane_skew_bits[i] == 0;
    if (!ok)
        return RIFL_OK;
    unsigned nfid = rifl_lane_replay_frames(rifl_bond_lane(s->end[0], 0));
    s->kmask = nfid - 1;
    uint64_t cap = 16;
    while (cap < (uint64_t)s->D + 2)
        cap <<= 1;
    s->pmask = cap - 1;
    for (int e = 0; e < 2; e++) {
        s->placed[e] = calloc(cap, sizeof *s->placed[e]);
        s->pcache[e] = malloc(s->maxlen);
        s->pcache_seq[e] = UINT64_MAX;
        s->runs[e] = calloc(2 * cap, sizeof *s->runs[e]);
        s->pre[e] = calloc(cap, sizeof *s->pre[e]);
        if (!s->placed[e] || !s->pcache[e] || !s->runs[e] || !s->pre[e])
            return RIFL_ERR_NOMEM;
        for (unsigned i = 0; i < s->L; i++) {
            s->seglog[e][i] = calloc(nfid, sizeof *s->seglog[e][i]);
            s->sent_by_id[e][i] = malloc(nfid * sizeof *s->sent_by_id[e][i]);
            if (!s->seglog[e][i] || !s->sent_by_id[e][i])
                return RIFL_ERR_NOMEM;
        }
    }
    s->stretch_ok = true;
    return RIFL_OK;
}

void rifl_bondsim_fast_free(struct bsim *s)
{
    for (int e = 0; e < 2; e++) {
        free(s->placed[e]);
        free(s->pcache[e]);
        free(s->runs[e]);
        free(s->pre[e]);
        for (unsigned i = 0; i < RIFL_BOND_MAX_LANES; i++) {
            free(s->seglog[e][i]);
            free(s->sent_by_id[e][i]);
        }
    }
}

void rifl_bondsim_fast_slot(struct bsim *s, uint64_t k)
{
    if (!s->stretch_ok)
        return;
    for (int e = 0; e < 2; e++)
        s->placed[e][k & s->pmask] = rifl_bond_get_stats(s->end[e])->tx_words;
}

static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Slots a stretch may take from the next slot on (0: none). */
static uint64_t stretch_room(const struct bsim *s)
{
    const rifl_linksim_config *c = s->cfg;
    uint64_t t = s->k[1], D = s->D;
    uint64_t least = D + s->kmask + 1 + 64;
    if (t < 2 * least || !rifl_bond_steady(s->end[0]) || !rifl_bond_steady(s->end[1]))
        return 0;
    uint64_t m = c->max_slots ? c->max_slots - t : UINT64_MAX;
    uint64_t per_slot = (uint64_t)(s->L / rifl_bond_group_lanes(s->end[0])) * s->wbytes;
    size_t qcap = rifl_bond_max_packet(s->end[0]) + RIFL_BOND_PACKET_OVERHEAD;
    for (int e = 0; e < 2; e++) {
        const struct bdir *d = &s->d[e];
        if (d->done || d->first_read < 0 || d->val.overlong)
            return 0;
        /* the users stay short of their last bytes: the run's end is
         * stepped */
        if (c->bytes) {
            uint64_t margin = qcap + s->maxlen;
            if (d->offered_bytes + margin >= c->bytes)
                return 0;
            m = min64(m, (c->bytes - d->offered_bytes - margin) / per_slot);
        }
    }
    for (unsigned i = 0; i < s->L; i++) {
        if (!rifl_lane_steady(rifl_bond_lane(s->end[0], i), rifl_bond_lane(s->end[1], i), s->D))
            return 0;
        for (int e = 0; e < 2; e++) {
            /* a damaged frame must have arrived */
            uint64_t hit = s->pair[i]->hit_slot[e];
            if (hit && t <= hit + D + 1)
                return 0;
            m = min64(m, rifl_pair_clear_slots(s->pair[i], e));
        }
    }
    return m >= least ? m : 0;
}

/* A bonded end's geometry: S lanes a group, G groups (powers of two), pb
 * payload bytes a frame, wb a word. */
struct geo {
    unsigned S, G, pb;
    size_t wb;
};

/* One direction of a stretch: end e's user and bond send, the far end's
 * bond and user read. */
struct emu {
    struct geo g;
    unsigned e;
    uint64_t txw, head, vq;     /* words placed, the queue's head packet, its bytes */
    bool newpend;               /* a packet was made and waits */
    rifl_bond_stretch tx;       /* end e's sending side */
    uint64_t rxw, rseq, have;   /* words taken, the packet being read, its bytes read */
    uint64_t rx_words, rx_packets, rx_bytes;
    /* slots in which every lane sent, and took, a full segment of a word
     * that does not end its packet: counted once for all lanes */
    uint64_t all_tx, all_rx;
    unsigned fid0[RIFL_BOND_MAX_LANES];
    uint64_t x[RIFL_BOND_MAX_LANES];   /* each lane's data frames sent in the stretch */
    uint64_t tx_bytes[RIFL_BOND_MAX_LANES], tx_pk[RIFL_BOND_MAX_LANES];
    uint64_t rx_data[RIFL_BOND_MAX_LANES], rx_bytes_l[RIFL_BOND_MAX_LANES],
        rx_pk[RIFL_BOND_MAX_LANES];
    /* the placements the far end has still to read (s->runs[e]), and its
     * next slot of the stretch */
    uint64_t rh, rn, ku;
};

/* Word w of packet p: its offset and bytes, its segments, the lane of its
 * first segment, whether it ends the packet. */
struct word {
    size_t off, len;
    unsigned segs, top;
    bool last;
};

static inline struct word word_of(const struct geo *g, const struct bpkt *p, uint64_t w)
{
    struct word x;
    x.off = (size_t)(w - p->first) * g->wb;
    size_t rem = p->len - x.off;
    x.last = rem <= g->wb;
    x.len = x.last ? rem : g->wb;
    x.segs = x.len == g->wb ? g->S : (unsigned)((x.len + g->pb - 1) / g->pb);
    x.top = (unsigned)(w & (g->G - 1)) * g->S + g->S - 1;
    return x;
}

static int emu_start(struct bsim *s, struct emu *em, unsigned e)
{
    struct bdir *d = &s->d[e];
    memset(em, 0, sizeof *em);
    em->e = e;
    em->g.S = rifl_bond_group_lanes(s->end[e]);
    em->g.G = s->L / em->g.S;
    em->g.wb = s->wbytes;
    em->g.pb = s->wbytes / em->g.S;
    em->txw = rifl_bond_get_stats(s->end[e])->tx_words;
    em->head = d->stamp_cur;
    for (uint64_t q = em->head; q < d->next_seq; q++)
        em->vq += bpkt_at(d, q)->len + RIFL_BOND_PACKET_OVERHEAD;
    /* the bond's queue as the users' bookkeeping has it */
    uint64_t off = 0;
    if (em->head < d->next_seq)
        off = (em->txw - bpkt_at(d, em->head)->first) * s->wbytes;
    uint64_t queued = d->next_seq - em->head;
    if (rifl_bond_tx_backlog(s->end[e]) != em->vq - RIFL_BOND_PACKET_OVERHEAD * queued - off)
        return RIFL_ERR_STATE;
    em->rxw = rifl_bond_get_stats(s->end[1 - e])->rx_words;
    em->rseq = d->val.next_seq;
    em->have = d->val.have;
    for (unsigned i = 0; i < s->L; i++)
        em->fid0[i] = rifl_lane_next_id(rifl_bond_lane(s->end[e], i));
    return RIFL_OK;
}

/* The sending user, as offer() in bondsim.c, by lengths. */
static int emu_offer(struct bsim *s, struct emu *em, size_t qcap)
{
    struct bdir *d = &s->d[em->e];
    for (;;) {
        if (!d->pending) {
            d->plen = rifl_linksim_len(s->cfg, d->stream_seed, d->next_seq);
            d->pending = true;
            em->newpend = true;
        }
        if (d->plen + RIFL_BOND_PACKET_OVERHEAD > qcap - em->vq) {
            em->tx.tx_rejected++;
            return RIFL_OK;
        }
        int rc = rifl_bondsim_pkt_add(d, d->next_seq, (d->plen + s->wbytes - 1) / s->wbytes,
                                      d->plen);
        if (rc != RIFL_OK)
            return rc;
        em->vq += d->plen + RIFL_BOND_PACKET_OVERHEAD;
        em->tx.tx_packets++;
        em->tx.tx_bytes += d->plen;
        d->offered_bytes += d->plen;
        d->next_seq++;
        d->pending = false;
    }
}

/* Fold the slots counted for all lanes into each lane's counts. */
static void flush_all(struct emu *em, unsigned L)
{
    for (unsigned i = 0; i < L; i++) {
        em->x[i] += em->all_tx;
        em->tx_bytes[i] += em->all_tx * em->g.pb;
        em->rx_data[i] += em->all_rx;
        em->rx_bytes_l[i] += em->all_rx * em->g.pb;
    }
    em->all_tx = em->all_rx = 0;
}

/* The bond in slot u of the stretch (slot k): a word for every group, its
 * segments onto their lanes, fillers on the others; the packet stamps as
 * stamp() in bondsim.c has them.  `log`: the frames are among the last
 * 2^K of the stretch, whose bytes the lanes' accelerator asks for. */
static void emu_place(struct bsim *s, struct emu *em, uint64_t u, uint64_t k, unsigned kmask,
                      bool log)
{
    const struct geo *g = &em->g;
    unsigned e = em->e;
    struct bdir *d = &s->d[e];
    uint32_t used = 0;
    if (log && em->all_tx)
        flush_all(em, s->L);
    if (!log && em->head < d->next_seq) {
        /* most slots: G words of one packet, none its last */
        struct bpkt *p = bpkt_at(d, em->head);
        if (p->last >= em->txw + g->G) {
            if (em->txw == p->first)
                p->t_first = k + 1;
            em->txw += g->G;
            em->tx.tx_words += g->G;
            em->all_tx++;
            s->placed[e][k & s->pmask] = em->txw;
            return;
        }
    }
    for (unsigned n = 0; n < g->G && em->head < d->next_seq; n++) {
        struct bpkt *p = bpkt_at(d, em->head);
        struct word w = word_of(g, p, em->txw);
        if (w.off == 0)
            p->t_first = k + 1;
        for (unsigned q = 0; q < w.segs; q++) {
            unsigned lane = w.top - q;
            size_t at = (size_t)q * g->pb, len = w.len - at < g->pb ? w.len - at : g->pb;
            bool end = w.last && q == w.segs - 1;
            uint64_t x = em->x[lane]++;
            em->tx_bytes[lane] += len;
            em->tx_pk[lane] += end;
            if (log) {
                s->seglog[e][lane][x & kmask] = (struct bseg){
                    em->head, (uint32_t)(w.off + at), (uint32_t)p->len, (uint16_t)len, end };
                s->sent_by_id[e][lane][(em->fid0[lane] + u) & kmask] = (int64_t)x;
                used |= 1u << lane;
            }
        }
        em->txw++;
        em->tx.tx_words++;
        if (w.last) {
            p->t_last = k + 1;
            em->vq -= p->len + RIFL_BOND_PACKET_OVERHEAD;
            em->head++;
            d->stamp_cur = em->head;
        }
    }
    for (unsigned i = 0; log && i < s->L; i++)
        if (!(used & (1u << i)))
            s->sent_by_id[e][i][(em->fid0[i] + u) & kmask] = -1;
    s->placed[e][k & s->pmask] = em->txw;
}

/* The far end in slot k: the words placed D slots before (by then, avail
 * of them) arrive, whole, and its user reads them, as read_side() in
 * bondsim.c. */
static void emu_read(struct bsim *s, struct emu *em, uint64_t k, uint64_t avail)
{
    struct bdir *d = &s->d[em->e];
    unsigned pb = em->g.pb;
    uint64_t n = avail - em->rxw;
    if (n && n % em->g.G == 0 && bpkt_at(d, em->rseq)->last >= avail) {
        /* whole rounds of full words of one packet, none its last */
        em->all_rx += n / em->g.G;
        em->rxw = avail;
        em->rx_words += n;
        em->rx_bytes += n * em->g.wb;
        em->have += n * em->g.wb;
        return;
    }
    while (em->rxw < avail) {
        const struct bpkt *p = bpkt_at(d, em->rseq);
        struct word w = word_of(&em->g, p, em->rxw);
        for (unsigned q = 0; q < w.segs; q++) {
            unsigned lane = w.top - q;
            size_t at = (size_t)q * pb;
            em->rx_data[lane]++;
            em->rx_bytes_l[lane] += w.len - at < pb ? w.len - at : pb;
            em->rx_pk[lane] += w.last && q == w.segs - 1;
        }
        em->rxw++;
        em->rx_words++;
        em->rx_bytes += w.len;
        em->have += w.len;
        if (!w.last)
            continue;
        uint64_t t = k + 1;
        em->rx_packets++;
        d->val.st.packets_ok++;
        d->val.st.bytes_ok += p->len;
        rifl_hist_add(&s->res->lat, t - (p->t_first - 1));
        rifl_hist_add(&s->res->lat_last, t - (p->t_last - 1));
        d->last_read = t;
        em->rseq++;
        em->have = 0;
        d->val.next_seq = em->rseq;
        while (d->oldest < d->val.next_seq && d->oldest < d->stamp_cur)
            d->oldest++;
    }
}

/* Stretch slots u .. u + n - 1 placed (see struct brun). */
static void run_push(struct bsim *s, struct emu *em, uint64_t u, uint64_t n, bool bulk)
{
    uint64_t rmask = 2 * s->pmask + 1;
    uint64_t txw = bulk ? em->txw - (n - 1) * em->g.G : em->txw;
    s->runs[em->e][(em->rh + em->rn++) & rmask] = (struct brun){ u, n, txw, bulk };
}

/* The far end's slots of the stretch up to `end` (not included): each
 * reads what was placed D slots before, a bulk run's slots at once (every
 * one brings a word of every group, none ending its packet: read as
 * emu_read's first case would, slot by slot). */
static void emu_read_to(struct bsim *s, struct emu *em, uint64_t t, uint64_t end)
{
    uint64_t rmask = 2 * s->pmask + 1, D = s->D;
    const struct brun *runs = s->runs[em->e];
    while (em->ku < end) {
        uint64_t k = em->ku;
        if (k < D) {
            emu_read(s, em, t + k, s->pre[em->e][k]);
            em->ku++;
            continue;
        }
        uint64_t j = k - D;
        const struct brun *r = &runs[em->rh & rmask];
        while (r->u + r->n <= j) {
            em->rh++;
            em->rn--;
            r = &runs[em->rh & rmask];
        }
        if (!r->bulk) {
            emu_read(s, em, t + k, r->txw);
            em->ku++;
            continue;
        }
        uint64_t q = r->u + r->n - j;
        if (q > end - k)
            q = end - k;
        uint64_t w = q * em->g.G;
        em->all_rx += q;
        em->rxw += w;
        em->rx_words += w;
        em->rx_bytes += w * em->g.wb;
        em->have += w * em->g.wb;
        em->ku += q;
    }
}

/* Slots from the next on (at most `room`) in which end e's bond would
 * place a word of every group of its head packet, none its last. */
static uint64_t bulk_slots(const struct bsim *s, const struct emu *em, uint64_t room)
{
    const struct bdir *d = &s->d[em->e];
    if (em->head >= d->next_seq)
        return 0;
    const struct bpkt *p = bpkt_at(d, em->head);
    if (p->last < em->txw + em->g.G)
        return 0;
    uint64_t r = (p->last - em->txw) / em->g.G;
    return r < room ? r : room;
}

/* Direction e through the m slots of a stretch from slot t: its sending
 * user offers and its bond places, slot by slot or a bulk run at once,
 * and the far end reads, D slots behind and never behind the slot before
 * the next placed (so that the users' shared records are as stepping would
 * leave them at each offer). */
static int emu_direction(struct bsim *s, struct emu *em, uint64_t t, uint64_t m)
{
    unsigned kmask = s->kmask;
    size_t qcap = rifl_bond_max_packet(s->end[0]) + RIFL_BOND_PACKET_OVERHEAD;
    uint64_t log_from = m > kmask + 1u ? m - kmask - 1u : 0, P = s->pmask + 1;
    for (uint64_t k = 0; k < s->D; k++)
        s->pre[em->e][k] = s->placed[em->e][(t + k - s->D) & s->pmask];
    for (uint64_t u = 0; u < m;) {
        emu_read_to(s, em, t, u);
        int rc = emu_offer(s, em, qcap);
        if (rc != RIFL_OK)
            return rc;
        uint64_t r = u < log_from ? bulk_slots(s, em, log_from - u) : 0;
        if (r < 2) {
            emu_place(s, em, u, t + u, kmask, u >= log_from);
            run_push(s, em, u, 1, false);
            u++;
            continue;
        }
        /* the user's offers in the other slots find the queue as full */
        struct bpkt *p = bpkt_at(&s->d[em->e], em->head);
        if (em->txw == p->first)
            p->t_first = t + u + 1;
        uint64_t txw0 = em->txw;
        em->txw += r * em->g.G;
        em->tx.tx_words += r * em->g.G;
        em->tx.tx_rejected += r - 1;
        em->all_tx += r;
        /* (the ring, for the slots stepped after the stretch: its last
         * slots are placed one by one, in all but the shortest) */
        for (uint64_t j = u + r + P > m ? (r > P ? r - P : 0) : r; j < r; j++)
            s->placed[em->e][(t + u + j) & s->pmask] = txw0 + (j + 1) * em->g.G;
        run_push(s, em, u, r, true);
        u += r;
    }
    emu_read_to(s, em, t, m);
    return RIFL_OK;
}

/* Direction e's packet seq (of `len` bytes), whole. */
static const uint8_t *packet(struct bsim *s, unsigned e, uint64_t seq, size_t len)
{
    if (s->pcache_seq[e] != seq) {
        rifl_packet_fill(s->d[e].stream_seed, seq, s->pcache[e], len);
        s->pcache_seq[e] = seq;
    }
    return s->pcache[e];
}

struct seg_ctx {
    struct bsim *s;
    unsigned e, i;
    uint64_t head;
};

static int segment(void *ctx, uint64_t x, const uint8_t **bytes, size_t *len, bool *end)
{
    struct seg_ctx *c = ctx;
    struct bsim *s = c->s;
    const struct bseg *g = &s->seglog[c->e][c->i][x & s->kmask];
    *bytes = packet(s, c->e, g->seq, g->len) + g->off;
    *len = g->n;
    *end = g->end;
    return 0;
}

static int queued_packet(void *ctx, size_t k, const uint8_t **bytes, size_t *len)
{
    struct seg_ctx *c = ctx;
    uint64_t seq = c->head + k;
    *len = bpkt_at(&c->s->d[c->e], seq)->len;
    *bytes = packet(c->s, c->e, seq, *len);
    return 0;
}

/* After m emulated slots: the lanes and cables through each pair, the
 * bonds, the users' buffers. */
static int land(struct bsim *s, struct emu em[2], uint64_t m)
{
    struct seg_ctx sc[2][RIFL_BOND_MAX_LANES];
    flush_all(&em[0], s->L);
    flush_all(&em[1], s->L);
    for (unsigned i = 0; i < s->L; i++) {
        rifl_lane_stretch st[2];
        for (unsigned e = 0; e < 2; e++) {
            const struct emu *a = &em[e];
            sc[e][i] = (struct seg_ctx){ s, e, i, 0 };
            st[e] = (rifl_lane_stretch){
                .slots = m, .data_sent = a->x[i], .fill_sent = m - a->x[i],
                .sent_by_id = s->sent_by_id[e][i], .queue_first = a->x[i],
                .queue_end = a->x[i], .tx_packets = a->tx_pk[i], .tx_bytes = a->tx_bytes[i],
                .data_recv = a->rx_data[i], .fill_recv = m - a->rx_data[i],
                .rx_packets = a->rx_pk[i], .rx_bytes = a->rx_bytes_l[i],
                .segment = segment, .ctx = &sc[e][i],
            };
        }
        if (rifl_pair_advance(s->pair[i], st) != RIFL_OK)
            return RIFL_ERR_STATE;
        s->pair_ref[i] = false;
    }
    for (unsigned e = 0; e < 2; e++) {
        struct bdir *d = &s->d[e];
        rifl_bond_stretch b = em[e].tx;
        const struct emu *r = &em[1 - e]; /* what end e reads */
        b.rx_words = r->rx_words;
        b.rx_packets = r->rx_packets;
        b.rx_bytes = r->rx_bytes;
        struct seg_ctx q = { s, e, 0, em[e].head };
        b.queued = (size_t)(d->next_seq - em[e].head);
        b.head_off = b.queued ? (size_t)(em[e].txw - bpkt_at(d, em[e].head)->first) * s->wbytes : 0;
        b.packet = queued_packet;
        b.ctx = &q;
        if (rifl_bond_advance(s->end[e], &b) != RIFL_OK)
            return RIFL_ERR_STATE;
    }
    for (unsigned e = 0; e < 2; e++) {
        struct bdir *d = &s->d[e];
        if (em[e].newpend && d->pending)
            rifl_packet_fill(d->stream_seed, d->next_seq, d->pkt, d->plen);
        d->val.have = em[e].have;
        if (em[e].have)
            memcpy(d->val.buf, packet(s, e, em[e].rseq, bpkt_at(d, em[e].rseq)->len),
                   em[e].have);
    }
    s->k[0] += m;
    s->k[1] += m;
    s->res->fast_slots += m;
    s->res->skips++;
    return RIFL_OK;
}

int rifl_bondsim_stretch(struct bsim *s, uint64_t *done)
{
    *done = 0;
    if (!s->stretch_ok)
        return RIFL_OK;
    if (s->stretch_wait) {
        s->stretch_wait--;
        return RIFL_OK;
    }
    uint64_t m = stretch_room(s);
    if (!m) {
        s->stretch_wait = STRETCH_WAIT;
        return RIFL_OK;
    }
    struct emu em[2];
    uint64_t t = s->k[1];
    for (unsigned e = 0; e < 2; e++) {
        int rc = emu_start(s, &em[e], e);
        if (rc != RIFL_OK)
            return rc;
        /* everything that arrived was read */
        if (em[e].rxw != s->placed[e][(t - 1 - s->D) & s->pmask]) {
            s->stretch_wait = STRETCH_WAIT;
            return RIFL_OK;
        }
    }
    /* (the directions share nothing in a stretch) */
    for (unsigned e = 0; e < 2; e++) {
        int rc = emu_direction(s, &em[e], t, m);
        if (rc != RIFL_OK)
            return rc;
    }
    int rc = land(s, em, m);
    if (rc == RIFL_OK)
        *done = m;
    return rc;
}

/* Link simulator: two lanes, two channels, traffic generators, validators,
 * latency stamps, and a fast path through error-free steady stretches.
 *
 * The run is a loop over frame slots; slot t is "user side of slot t" (the
 * generators queue packets, the receiving users read) followed by "wire side
 * of slot t" (rifl_pair_step semantics: both lanes send, both channels carry,
 * both lanes receive).
 *
 * Fast path.  When both lanes are in steady NORMAL state, every frame now in
 * flight is a new error-free frame the receiver will accept in sequence, both
 * users read everything at once and neither channel will flip a bit in the
 * next m frames, the next m slots are fully determined: each lane sends the
 * next m new frames (queued data, or fillers when its queue is empty) and
 * receives and delivers m frames.  The fast path replays those slots with
 * frame counters only (no frame is built, no byte moved), keeping the
 * generators, packet stamps and validators in step, and then rebuilds what
 * must hold real bytes afterwards: the replay buffers' entries sent during
 * the skip, the transmit queues, and the frames left in flight (re-encoded
 * from the replay buffer; the receiver's descrambler is set to the state the
 * re-encoding started from, so both ends stay consistent).  Whether a
 * corrupted frame is detected depends only on the error pattern (the CRC is
 * linear and error positions come from the channel's own generator), so a
 * run with the fast path takes exactly the same course as plain stepping:
 * tests/test_linksim.c compares the two counter by counter. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/sim/linksim.h"
#include "rifl/sim/pair.h"

struct pkt {
    uint64_t first;          /* index of its first data frame in the stream */
    uint64_t t_first, t_last; /* slots its first / last frame was first sent */
    uint32_t nf, len;
};

struct dir {
    rifl_lane *tx, *rx;      /* sender, receiver */
    rifl_phy *ch;
    uint64_t stream_seed;
    /* generator */
    uint64_t next_seq;       /* next packet to create */
    bool pending, done;
    uint32_t plen, pnf;
    double credit;
    uint64_t offered_bytes;
    uint64_t qf;             /* data frames queued so far */
    /* packets between generator and validator */
    struct pkt *ring;
    uint64_t rmask, oldest;
    uint64_t send_cur;       /* packet whose frames are being sent */
    uint64_t sf;             /* new data frames sent so far */
    uint64_t recv_cur;       /* next packet the receiver completes */
    /* per frame ID: data frame index of the last new frame with that ID, or
     * -1 for a filler */
    int64_t *log;
    uint64_t streak;         /* slots in a row with a new, unhit frame sent */
    uint64_t prev_new, prev_hit;
    rifl_validator val;
    uint8_t *pkt, *rbuf, *cache;
    uint64_t cache_seq;
    bool cache_ok;
    uint64_t last_read;      /* slot of the last completed packet */
    uint64_t checked_seq, checked_have; /* partly read packet whose bytes so far */
    bool prefix_ok;                     /* were compared with the expected ones */
    /* emulation state during a skip */
    uint64_t q;              /* transmit-queue frames */
    unsigned efid, erfid;
    struct {                 /* what the users and lanes did in it */
        uint64_t data_sent, fill_sent, data_recv, fill_recv;
        uint64_t tx_packets, tx_bytes, tx_rejected, rx_packets, rx_bytes;
    } c;
    rifl_lane_frame *inflight; /* frames left in flight after it */
    struct sim *sim;
};

struct sim {
    const rifl_linksim_config *cfg;
    rifl_linksim_result *res;
    rifl_pair *pair;
    struct dir d[2];
    unsigned pb, nfid, kmask, D;
    uint64_t txcap;
    rifl_rng rng;
};

uint64_t rifl_linksim_seed(uint64_t seed, unsigned what)
{
    uint64_t x = seed ^ (0x6a09e667f3bcc909ULL * (what + 1));
    return rifl_splitmix64(&x);
}

void rifl_linksim_defaults(rifl_linksim_config *c)
{
    memset(c, 0, sizeof *c);
    c->lane = rifl_lane_default_config;
    c->seed = 1;
    c->bytes = 10000000;
    c->load = 1.0;
    c->min_len = 1;
    c->max_len = 8192;
    c->rx_ready = 1.0;
    c->fast = true;
}

static int refuse(char *msg, size_t n, const char *text)
{
    if (msg && n)
        snprintf(msg, n, "%s", text);
    return RIFL_ERR_CONFIG;
}

int rifl_linksim_check(const rifl_linksim_config *c, char *msg, size_t n)
{
    char buf[512];
    if (!c)
        return rifl_null_arg(msg, n, "rifl_linksim_check", "the configuration");
    for (int i = 0; i < 2; i++)
        if (!(c->ber[i] >= 0.0 && c->ber[i] <= 0.5)) {
            snprintf(buf, sizeof buf, "bit error rate %g (%s) is out of range; use a value "
                     "from 0 to 0.5", c->ber[i], i ? "B -> A" : "A -> B");
            return refuse(msg, n, buf);
        }
    int rc = rifl_lane_config_check(&c->lane, msg, n);
    if (rc != RIFL_OK)
        return rc;
    if (!(c->load > 0.0 && c->load <= 1.0)) {
        snprintf(buf, sizeof buf, "offered load %g is out of range; use a fraction of the "
                 "line rate above 0 and at most 1", c->load);
        return refuse(msg, n, buf);
    }
    if (!(c->rx_ready > 0.0 && c->rx_ready <= 1.0)) {
        snprintf(buf, sizeof buf, "receiver read probability %g is out of range; use a value "
                 "above 0 and at most 1", c->rx_ready);
        return refuse(msg, n, buf);
    }
    if (c->rx_stall && c->rx_stall >= c->rx_period) {
        snprintf(buf, sizeof buf, "receiver stall of %llu slots needs a longer period than "
                 "%llu slots", (unsigned long long)c->rx_stall,
                 (unsigned long long)c->rx_period);
        return refuse(msg, n, buf);
    }
    size_t lo = c->min_len, hi = c->max_len;
    if (c->len_count) {
        lo = SIZE_MAX;
        hi = 0;
        for (unsigned i = 0; i < c->len_count; i++) {
            lo = c->len_list[i] < lo ? c->len_list[i] : lo;
            hi = c->len_list[i] > hi ? c->len_list[i] : hi;
        }
    }
    size_t qbytes = (size_t)c->lane.tx_queue_frames * rifl_payload_bytes(c->lane.frame_bits);
    if (lo < 1 || hi < lo) {
        snprintf(buf, sizeof buf, "packet sizes %zu..%zu bytes: use sizes of at least 1 byte "
                 "with min <= max", lo, hi);
        return refuse(msg, n, buf);
    }
    if (hi > qbytes || hi > UINT32_MAX) {
        snprintf(buf, sizeof buf, "packets of %zu bytes do not fit the transmit queue of %u "
                 "frames (%zu bytes); use packets of at most %zu bytes or a longer queue",
                 hi, c->lane.tx_queue_frames, qbytes, qbytes);
        return refuse(msg, n, buf);
    }
    if (!c->bytes && !c->max_slots)
        return refuse(msg, n, "the run has no end: give a byte count or a frame count");
    return RIFL_OK;
}

/* ---- packets ------------------------------------------------------------- */

static size_t list_len(const rifl_linksim_config *c, uint64_t seed, uint64_t seq)
{
    uint64_t x = seed ^ (seq * 0x9fb21c651e98df25ULL) ^ 0x1157;
    return c->len_list[rifl_splitmix64(&x) % c->len_count];
}

struct len_ctx {
    const rifl_linksim_config *cfg;
    uint64_t seed;
};

static size_t len_cb(void *ctx, uint64_t seq)
{
    struct len_ctx *l = ctx;
    return list_len(l->cfg, l->seed, seq);
}

static size_t pkt_len(const struct sim *s, const struct dir *d, uint64_t seq)
{
    if (s->cfg->len_count)
        return list_len(s->cfg, d->stream_seed, seq);
    return rifl_packet_len(d->stream_seed, seq, s->cfg->min_len, s->cfg->max_len);
}

static struct pkt *pkt_at(const struct dir *d, uint64_t seq)
{
    return &d->ring[seq & d->rmask];
}

static int add_packet(struct sim *s, struct dir *d, uint64_t seq, uint32_t len, uint32_t nf)
{
    /* drop packets that are delivered and older than the replay window */
    while (d->oldest < d->recv_cur && d->oldest < d->send_cur &&
           pkt_at(d, d->oldest)->first + pkt_at(d, d->oldest)->nf + s->nfid + 1 <= d->sf)
        d->oldest++;
    if (seq - d->oldest > d->rmask) {
        uint64_t cap = (d->rmask + 1) * 2;
        struct pkt *r = malloc(cap * sizeof *r);
        if (!r)
            return RIFL_ERR_NOMEM;
        for (uint64_t q = d->oldest; q < seq; q++)
            r[q & (cap - 1)] = *pkt_at(d, q);
        free(d->ring);
        d->ring = r;
        d->rmask = cap - 1;
    }
    struct pkt *p = pkt_at(d, seq);
    p->first = d->qf;
    p->nf = nf;
    p->len = len;
    p->t_first = p->t_last = 0;
    d->qf += nf;
    d->offered_bytes += len;
    return RIFL_OK;
}

/* Content of packet `seq` (cached). */
static const uint8_t *content(struct sim *s, struct dir *d, uint64_t seq)
{
    if (!d->cache_ok || d->cache_seq != seq) {
        rifl_packet_fill(d->stream_seed, seq, d->cache, pkt_at(d, seq)->len);
        d->cache_seq = seq;
        d->cache_ok = true;
    }
    (void)s;
    return d->cache;
}

/* Packet holding data frame `x` (binary search over the kept packets). */
static uint64_t packet_of_frame(const struct dir *d, uint64_t x)
{
    uint64_t lo = d->oldest, hi = d->next_seq; /* first > x is in (lo, hi] */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (pkt_at(d, mid)->first <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Generator of one direction for one slot.  `real`: queue real packets into
 * the lane; otherwise count frames in d->q (fast path). */
static int generate(struct sim *s, struct dir *d, bool real)
{
    const rifl_linksim_config *c = s->cfg;
    if (d->done)
        return RIFL_OK;
    if (c->load < 1.0) {
        d->credit += c->load;
        if (d->credit > 1.0)
            d->credit = 1.0;
    }
    for (;;) {
        if (!d->pending) {
            if (c->bytes && d->offered_bytes >= c->bytes) {
                d->done = true;
                return RIFL_OK;
            }
            if (c->load < 1.0 && d->credit <= 0.0)
                return RIFL_OK;
            d->plen = (uint32_t)pkt_len(s, d, d->next_seq);
            d->pnf = (d->plen + s->pb - 1) / s->pb;
            d->pending = true;
            if (c->load < 1.0)
                d->credit -= d->pnf;
        }
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
        d->next_seq++;
        d->pending = false;
    }
}

static void stamp_sent(struct dir *d, uint64_t idx, uint64_t t)
{
    struct pkt *p = pkt_at(d, d->send_cur);
    if (idx == p->first)
        p->t_first = t;
    if (idx == p->first + p->nf - 1) {
        p->t_last = t;
        d->send_cur++;
    }
}

static void delivered(struct sim *s, struct dir *d, uint64_t seq, uint64_t t)
{
    struct pkt *p = pkt_at(d, seq);
    rifl_hist_add(&s->res->lat, t - p->t_first);
    rifl_hist_add(&s->res->lat_last, t - p->t_last);
    d->last_read = t;
}

static bool reads_in(const struct sim *s, uint64_t t)
{
    const rifl_linksim_config *c = s->cfg;
    return !(c->rx_stall && t % c->rx_period < c->rx_stall);
}

/* User side of slot t, plain. */
static int user_side(struct sim *s, uint64_t t)
{
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        int rc = generate(s, d, true);
        if (rc != RIFL_OK)
            return rc;
    }
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        bool ready = reads_in(s, t);
        if (ready && s->cfg->rx_ready < 1.0)
            ready = rifl_rng_double(&s->rng) < s->cfg->rx_ready;
        if (!ready)
            continue;
        size_t n;
        int eop;
        while (rifl_lane_read(d->rx, d->rbuf, s->cfg->max_len, &n, &eop) == RIFL_OK) {
            uint64_t before = d->val.next_seq;
            int64_t r = rifl_validator_feed(&d->val, d->rbuf, n, eop);
            if (r >= 0 && (uint64_t)r < d->next_seq && (uint64_t)r >= d->oldest)
                delivered(s, d, (uint64_t)r, t);
            if (eop && d->val.next_seq != before)
                d->recv_cur = d->val.next_seq;
        }
    }
    return RIFL_OK;
}

/* Wire side of slot t, plain, plus the bookkeeping the fast path needs. */
static void wire_side(struct sim *s, uint64_t t)
{
    rifl_pair_step(s->pair, NULL);
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        const rifl_lane_stats *st = rifl_lane_get_stats(d->tx);
        uint64_t nd = st->tx_frames[RIFL_KIND_DATA];
        uint64_t nnew = nd + st->tx_frames[RIFL_KIND_FILLER];
        uint64_t hit = rifl_phy_get_stats(d->ch)->frames_hit;
        bool fresh = nnew != d->prev_new;
        if (fresh) {
            unsigned id = (rifl_lane_next_id(d->tx) - 1) & s->kmask;
            d->log[id] = nd != d->sf ? (int64_t)d->sf : -1;
        }
        if (nd != d->sf) {
            stamp_sent(d, d->sf, t);
            d->sf++;
        }
        if (fresh && hit == d->prev_hit && rifl_lane_state(d->tx) == RIFL_TX_NORMAL)
            d->streak++;
        else
            d->streak = 0;
        d->prev_new = nnew;
        d->prev_hit = hit;
    }
}

/* ---- fast path ------------------------------------------------------------ */

static uint64_t skip_room(struct sim *s, uint64_t t)
{
    const rifl_linksim_config *c = s->cfg;
    if (!c->fast || c->rx_ready < 1.0)
        return 0;
    /* the simulator's own conditions first: they are the cheap ones */
    for (int i = 0; i < 2; i++) {
        const struct dir *d = &s->d[i];
        if (d->streak < s->D || d->val.next_seq != d->recv_cur || d->val.overlong ||
            d->sf != rifl_lane_get_stats(d->tx)->tx_frames[RIFL_KIND_DATA])
            return 0;
    }
    if (!rifl_lane_steady(s->pair->lane[0], s->pair->lane[1], s->D))
        return 0;
    /* bytes of a partly read packet were read for real and will not be
     * compared at its end: compare them now (never skip past a bad prefix,
     * so the validator sees the whole packet) */
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        if (!d->val.have)
            continue;
        if (d->checked_seq != d->recv_cur || d->checked_have != d->val.have) {
            const struct pkt *p = pkt_at(d, d->recv_cur);
            d->checked_seq = d->recv_cur;
            d->checked_have = d->val.have;
            d->prefix_ok = d->val.have <= p->len &&
                           memcmp(d->val.buf, content(s, d, d->recv_cur),
                                  d->val.have) == 0;
        }
        if (!d->prefix_ok)
            return 0;
    }
    uint64_t m = UINT64_MAX;
    for (int i = 0; i < 2; i++) {
        uint64_t f = rifl_phy_clear_slots(s->d[i].ch);
        m = f < m ? f : m;
    }
    if (c->max_slots)
        m = c->max_slots - t < m ? c->max_slots - t : m;
    if (c->rx_stall) {
        uint64_t r = (t + 1) % c->rx_period;
        if (r < c->rx_stall)
            return 0;
        m = c->rx_period - r < m ? c->rx_period - r : m;
    }
    if (m < (uint64_t)s->D + s->nfid + 64)
        return 0;
    return m;
}

static bool all_done(const struct sim *s)
{
    for (int i = 0; i < 2; i++) {
        const struct dir *d = &s->d[i];
        if (!d->done || d->pending || d->recv_cur != d->next_seq)
            return false;
    }
    return true;
}

/* rifl_lane_stretch.data: the packet holding data frame x */
static int frame_source(void *ctx, uint64_t x, const uint8_t **pkt, size_t *len, size_t *index)
{
    struct dir *d = ctx;
    uint64_t seq = packet_of_frame(d, x);
    const struct pkt *p = pkt_at(d, seq);
    if (x < p->first || x >= p->first + p->nf)
        return -1;
    *pkt = content(d->sim, d, seq);
    *len = p->len;
    *index = (size_t)(x - p->first);
    return 0;
}

/* Fast-forward up to m slots from slot t; returns the slots done. */
static int skip(struct sim *s, uint64_t t, uint64_t m, uint64_t *done)
{
    uint64_t pb = s->pb;
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        memset(&d->c, 0, sizeof d->c);
        d->q = s->txcap - rifl_lane_send_space(d->tx) / pb;
        d->efid = rifl_lane_next_id(d->tx);
        d->erfid = rifl_lane_expected_id(d->rx);
    }
    uint64_t j = 0;
    while (j < m) {
        uint64_t u = t + j;
        for (int i = 0; i < 2; i++) {
            struct dir *d = &s->d[i];
            unsigned id = d->efid;
            if (d->q) {
                d->log[id] = (int64_t)d->sf;
                stamp_sent(d, d->sf, u);
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
            if (x >= 0) {
                d->c.data_recv++;
                struct pkt *p = pkt_at(d, d->recv_cur);
                if ((uint64_t)x == p->first + p->nf - 1) {
                    d->c.rx_bytes += p->len - (uint64_t)(p->nf - 1) * pb;
                    d->c.rx_packets++;
                    d->val.st.packets_ok++;
                    d->val.st.bytes_ok += p->len;
                    d->val.have = 0;
                    delivered(s, d, d->recv_cur, u + 1);
                    d->recv_cur++;
                    d->val.next_seq = d->recv_cur;
                } else {
                    d->c.rx_bytes += pb;
                    d->val.have += pb;
                }
            } else {
                d->c.fill_recv++;
            }
        }
        for (int i = 0; i < 2; i++) {
            int rc = generate(s, &s->d[i], false);
            if (rc != RIFL_OK)
                return rc;
        }
        j++;
        if (s->cfg->bytes && all_done(s))
            break;
    }
    /* the lanes: counters, frame IDs, receive windows, replay buffers and
     * transmit queues, and the frames left in flight */
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
    int rc = rifl_lane_advance(s->pair->lane, s->D, st, inflight);
    if (rc != RIFL_OK)
        return RIFL_ERR_STATE;
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        if (rifl_phy_skip(d->ch, j) != RIFL_OK)
            return RIFL_ERR_STATE;
        size_t fb = rifl_lane_frame_bytes(s->cfg->lane.frame_bits);
        for (unsigned k = 0; k < s->D; k++) {
            if (s->cfg->encode_all)
                rifl_lane_frame_encode(&d->inflight[k], s->cfg->lane.frame_bits,
                                       rifl_phy_inflight(d->ch, k, RIFL_PHY_WIRE));
            else
                memcpy(rifl_phy_inflight(d->ch, k, RIFL_PHY_CONTENT), &d->inflight[k], fb);
        }
        if (d->val.have)
            memcpy(d->val.buf, content(s, d, d->recv_cur), d->val.have);
        d->streak = j;
        const rifl_lane_stats *ls = rifl_lane_get_stats(d->tx);
        d->prev_new = ls->tx_frames[RIFL_KIND_DATA] + ls->tx_frames[RIFL_KIND_FILLER];
        d->prev_hit = rifl_phy_get_stats(d->ch)->frames_hit;
    }
    s->pair->slot += j;
    *done = j;
    return RIFL_OK;
}

/* ---- run ------------------------------------------------------------------ */

void rifl_linksim_result_free(rifl_linksim_result *r)
{
    if (!r)
        return;
    rifl_hist_free(&r->lat);
    rifl_hist_free(&r->lat_last);
}

static void progress(const struct sim *s, uint64_t t)
{
    const rifl_linksim_config *c = s->cfg;
    if (!c->progress)
        return;
    double f = 0;
    if (c->bytes) {
        uint64_t got = s->d[0].val.st.bytes_ok + s->d[1].val.st.bytes_ok;
        f = (double)got / (2.0 * (double)c->bytes);
    }
    if (c->max_slots) {
        double g = (double)t / (double)c->max_slots;
        f = g > f ? g : f;
    }
    c->progress(c->progress_ctx, f > 1 ? 1 : f, t);
}

int rifl_linksim_run(const rifl_linksim_config *cfg, rifl_linksim_result *res, char *msg,
                     size_t msglen)
{
    if (!cfg || !res)
        return rifl_null_arg(msg, msglen, "rifl_linksim_run", cfg ? "res" : "cfg");
    memset(res, 0, sizeof *res);
    int rc = rifl_linksim_check(cfg, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    struct sim S, *s = &S;
    memset(s, 0, sizeof S);
    s->cfg = cfg;
    s->res = res;
    res->seed = cfg->seed;
    rifl_pair_config pc = { .lane = cfg->lane, .delay_frames = cfg->delay_frames,
                            .encode_all = cfg->encode_all };
    struct len_ctx lctx[2];
    size_t maxlen = cfg->max_len;
    if (cfg->len_count) {
        maxlen = 0;
        for (unsigned i = 0; i < cfg->len_count; i++)
            maxlen = cfg->len_list[i] > maxlen ? cfg->len_list[i] : maxlen;
    }
    for (int i = 0; i < 2; i++) {
        pc.ber[i] = cfg->ber[i];
        pc.seed[i] = res->channel_seed[i] = rifl_linksim_seed(cfg->seed, (unsigned)i);
        res->stream_seed[i] = rifl_linksim_seed(cfg->seed, 2u + (unsigned)i);
    }
    rc = rifl_pair_create(&pc, &s->pair, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    s->pb = rifl_payload_bytes(cfg->lane.frame_bits);
    s->nfid = 1u << cfg->lane.fid_bits;
    s->kmask = s->nfid - 1;
    s->D = s->pair->delay_frames;
    s->txcap = cfg->lane.tx_queue_frames;
    rifl_rng_seed(&s->rng, rifl_linksim_seed(cfg->seed, 4));
    res->delay_frames = s->D;
    res->frame_ns = cfg->lane.frame_bits / cfg->lane.link.lane_rate_gbps;
    if (rifl_hist_init(&res->lat) || rifl_hist_init(&res->lat_last))
        rc = RIFL_ERR_NOMEM;
    for (int i = 0; i < 2 && rc == RIFL_OK; i++) {
        struct dir *d = &s->d[i];
        d->tx = s->pair->lane[i];
        d->rx = s->pair->lane[1 - i];
        d->ch = s->pair->phy[i];
        d->stream_seed = res->stream_seed[i];
        d->rmask = 4095;
        d->sim = s;
        d->ring = calloc(d->rmask + 1, sizeof *d->ring);
        d->log = malloc(s->nfid * sizeof *d->log);
        d->inflight = calloc(s->D ? s->D : 1, sizeof *d->inflight);
        d->pkt = malloc(maxlen);
        d->rbuf = malloc(maxlen);
        d->cache = malloc(maxlen);
        if (!d->ring || !d->log || !d->pkt || !d->rbuf || !d->cache || !d->inflight)
            rc = RIFL_ERR_NOMEM;
        else
            rc = rifl_validator_init(&d->val, d->stream_seed,
                                     cfg->len_count ? 1 : cfg->min_len, maxlen);
        if (rc == RIFL_OK && cfg->len_count) {
            lctx[i] = (struct len_ctx){ cfg, d->stream_seed };
            d->val.len_fn = len_cb;
            d->val.len_ctx = &lctx[i];
        }
        if (d->log)
            for (unsigned k = 0; k < s->nfid; k++)
                d->log[k] = -1;
    }
    uint64_t t = 0;
    if (rc == RIFL_OK)
        rc = user_side(s, 0);
    uint64_t next_report = 1u << 16;
    while (rc == RIFL_OK) {
        if (cfg->bytes && all_done(s))
            break;
        if (cfg->max_slots && t >= cfg->max_slots)
            break;
        uint64_t m = skip_room(s, t);
        if (m) {
            uint64_t did = 0;
            rc = skip(s, t, m, &did);
            t += did;
            res->fast_slots += did;
            res->skips++;
            if (t >= next_report) {
                progress(s, t);
                next_report = t + (1u << 16);
            }
            continue;
        }
        wire_side(s, t);
        t++;
        rc = user_side(s, t);
        if (t >= next_report) {
            progress(s, t);
            next_report = t + (1u << 16);
        }
    }
    if (rc == RIFL_ERR_STATE && msg)
        snprintf(msg, msglen, "internal error: simulator bookkeeping out of step at slot %llu",
                 (unsigned long long)t);
    if (rc == RIFL_ERR_NOMEM && msg)
        snprintf(msg, msglen, "out of memory");
    if (rc == RIFL_OK) {
        res->slots = t;
        res->complete = all_done(s);
        double gsum = 0, esum = 0;
        for (int i = 0; i < 2; i++) {
            struct dir *d = &s->d[i];
            res->val[i] = d->val.st;
            res->lane[i] = *rifl_lane_get_stats(s->pair->lane[i]);
            res->ch[i] = *rifl_phy_get_stats(s->pair->phy[i]);
            res->offered_packets[i] = d->next_seq;
            res->offered_bytes[i] = d->offered_bytes;
            uint64_t w = cfg->bytes && res->complete ? d->last_read : t;
            if (!w)
                w = 1;
            res->window[i] = w;
            double bits = 8.0 * (double)d->val.st.bytes_ok;
            esum += bits / ((double)w * cfg->lane.frame_bits);
            gsum += bits / ((double)w * res->frame_ns);
        }
        res->goodput_gbps = gsum / 2;
        res->efficiency = esum / 2;
        res->lossless = rifl_validator_clean(&s->d[0].val) && rifl_validator_clean(&s->d[1].val);
        progress(s, t);
    }
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        free(d->ring);
        free(d->log);
        free(d->inflight);
        free(d->pkt);
        free(d->rbuf);
        free(d->cache);
        rifl_validator_free(&d->val);
    }
    rifl_pair_free(s->pair);
    if (rc != RIFL_OK)
        rifl_linksim_result_free(res);
    return rc;
}

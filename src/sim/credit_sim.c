/* Discrete-event simulator: traffic on data VLs from port A to port B under
 * credit-based or ON/OFF flow control, over a raw lossy channel. */
#include "rifl/sim/credit_sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/rng.h"

const char *rifl_csim_mode_name(rifl_csim_mode m)
{
    return m == RIFL_CSIM_CREDIT ? "credit" : m == RIFL_CSIM_ONOFF ? "onoff" : "unknown";
}

void rifl_csim_default_config(rifl_csim_config *c)
{
    memset(c, 0, sizeof *c);
    c->mode = RIFL_CSIM_CREDIT;
    c->vls = 2;
    c->duration = 10000000;
    c->one_way = 2000;
    c->buffer_bytes = 32768;
    c->chunk_bytes = 64;
    c->min_len = 64;
    c->max_len = 2048;
    for (unsigned v = 0; v < RIFL_FC_MAX_DATA_VLS; v++) {
        c->load[v] = 1.0;
        c->drain[v] = 1.0;
    }
    c->hol_vl = -1;
    c->fcp_period = 4096;
    c->on_frac = 2.0 / 3.0;
    c->off_frac = 1.0 / 3.0;
    c->seed = 1;
}

/* ---- growable FIFO of fixed-size items ----------------------------------- */

struct fifo {
    void *buf;
    size_t item, cap, head, count;
};

static int fifo_push(struct fifo *f, const void *x)
{
    if (f->count == f->cap) {
        size_t ncap = f->cap ? f->cap * 2 : 64;
        char *nb = malloc(ncap * f->item);
        if (!nb)
            return RIFL_ERR_NOMEM;
        for (size_t i = 0; i < f->count; i++)
            memcpy(nb + i * f->item, (char *)f->buf + ((f->head + i) % f->cap) * f->item,
                   f->item);
        free(f->buf);
        f->buf = nb;
        f->cap = ncap;
        f->head = 0;
    }
    memcpy((char *)f->buf + ((f->head + f->count) % f->cap) * f->item, x, f->item);
    f->count++;
    return RIFL_OK;
}

static void *fifo_front(struct fifo *f)
{
    return f->count ? (char *)f->buf + f->head * f->item : NULL;
}

static void fifo_pop(struct fifo *f)
{
    f->head = (f->head + 1) % f->cap;
    f->count--;
}

/* ---- simulation state ----------------------------------------------------- */

enum { IT_DATA, IT_FCP, IT_XOFF, IT_XON };

struct item {
    uint64_t at;      /* arrival time of the last byte */
    uint8_t kind, vl, corrupt;
    uint32_t len;
    uint8_t fcp[RIFL_FC_FCP_BYTES];
};

struct chan {
    struct fifo q;
    uint64_t last_at;
};

struct pkt {
    uint32_t len;
    uint8_t vl;
};

struct consumer {
    bool stalled, busy;
    bool paused;          /* service interrupted by a stall */
    uint64_t remaining;   /* service time left while paused */
    uint64_t toggle_at;   /* next stall change (UINT64_MAX: none) */
    uint64_t done_at;     /* service end when busy */
    uint64_t last_delivery;
    double unstalled;     /* symbol times not stalled within duration */
    uint64_t since;       /* start of the current unstalled stretch */
};

struct sim {
    const rifl_csim_config *cfg;
    rifl_csim_result *res;
    rifl_rng rng;
    uint64_t now;
    bool quiet;           /* traffic over: no sources, stalls or faults */
    rifl_credit *a, *b;
    struct chan ab, ba;
    uint64_t a_busy, b_busy;
    /* sources */
    struct fifo src[RIFL_FC_MAX_DATA_VLS];     /* uint32 lengths */
    uint64_t next_gen[RIFL_FC_MAX_DATA_VLS];
    /* receiver side */
    struct fifo rxq[RIFL_FC_MAX_DATA_VLS];     /* struct pkt, credit mode */
    struct fifo shared;                        /* struct pkt, on/off mode */
    uint64_t occupancy;                        /* on/off: bytes held */
    uint64_t held[RIFL_FC_MAX_DATA_VLS];       /* bytes held per VL */
    struct consumer con[RIFL_FC_MAX_DATA_VLS];
    struct consumer shared_con;                /* on/off: the FIFO's server */
    /* on/off sender */
    struct fifo txq[RIFL_FC_MAX_DATA_VLS];     /* uint32 lengths */
    rifl_vlarb arb;
    bool peer_off;        /* A: B asked us to stop */
    bool sent_off;        /* B: we asked A to stop */
    struct fifo notices;  /* B: XON/XOFF waiting for the link (uint8) */
    uint64_t data_in_flight;
};

/* An exponential draw of mean `mean` in whole symbol times; a draw beyond
 * 2^62 (a load so small that the next packet never comes) is 2^62, not a
 * wrapped number. */
static uint64_t exp_draw(rifl_rng *r, double mean)
{
    double u = 1.0 - rifl_rng_double(r);
    double x = -log(u) * mean;
    return x < 4611686018427387904.0 ? (uint64_t)x : (uint64_t)1 << 62;
}

static uint32_t rand_len(struct sim *s)
{
    return (uint32_t)rifl_rng_range(&s->rng, s->cfg->min_len, s->cfg->max_len);
}

static int chan_send(struct sim *s, struct chan *c, struct item *it, uint64_t wire)
{
    uint64_t at = s->now + wire + s->cfg->one_way;
    if (s->cfg->jitter && !s->quiet)
        at += rifl_rng_below(&s->rng, s->cfg->jitter + 1);
    if (at < c->last_at)
        at = c->last_at; /* the channel keeps order */
    c->last_at = at;
    it->at = at;
    int rc = fifo_push(&c->q, it);
    if (c->q.count > s->res->max_in_flight)
        s->res->max_in_flight = c->q.count;
    return rc;
}

/* Send an FCP through the faulty channel. */
static int send_fcp(struct sim *s, struct chan *c, const uint8_t *fcp)
{
    s->res->fcp_sent++;
    if (!s->quiet && s->cfg->fcp_loss > 0 && rifl_rng_chance(&s->rng, s->cfg->fcp_loss)) {
        s->res->fcp_lost++;
        return RIFL_OK;
    }
    struct item it = { .kind = IT_FCP, .len = RIFL_FC_FCP_BYTES };
    memcpy(it.fcp, fcp, RIFL_FC_FCP_BYTES);
    if (!s->quiet && s->cfg->fcp_corrupt > 0 && rifl_rng_chance(&s->rng, s->cfg->fcp_corrupt)) {
        unsigned nb = (unsigned)rifl_rng_range(&s->rng, 1, 2);
        unsigned b0 = (unsigned)rifl_rng_below(&s->rng, 48), b1;
        do
            b1 = (unsigned)rifl_rng_below(&s->rng, 48);
        while (b1 == b0);
        it.fcp[b0 / 8] ^= (uint8_t)(0x80u >> (b0 % 8));
        if (nb == 2)
            it.fcp[b1 / 8] ^= (uint8_t)(0x80u >> (b1 % 8));
        s->res->fcp_corrupted++;
    }
    return chan_send(s, c, &it, RIFL_FC_FCP_BYTES);
}

static int send_data(struct sim *s, unsigned vl, uint32_t len)
{
    struct item it = { .kind = IT_DATA, .vl = (uint8_t)vl, .len = len };
    if (!s->quiet && s->cfg->data_corrupt > 0 &&
        rifl_rng_chance(&s->rng, s->cfg->data_corrupt)) {
        it.corrupt = 1;
        s->res->data_corrupted++;
    }
    s->res->vl[vl].sent_bytes += len;
    uint64_t wire = (uint64_t)len + s->cfg->overhead;
    s->a_busy = s->now + wire;
    s->data_in_flight++;
    return chan_send(s, &s->ab, &it, wire);
}

/* ---- sources ---------------------------------------------------------------- */

static int feed(struct sim *s, unsigned v)
{
    const rifl_csim_config *c = s->cfg;
    if (!s->quiet) {
        if (c->load[v] >= 1.0) {
            while (s->src[v].count < 2) {
                uint32_t len = rand_len(s);
                s->res->vl[v].offered_bytes += len;
                if (fifo_push(&s->src[v], &len))
                    return RIFL_ERR_NOMEM;
            }
        } else if (c->load[v] > 0) {
            while (s->next_gen[v] <= s->now) {
                uint32_t len = rand_len(s);
                s->res->vl[v].offered_bytes += len;
                if (fifo_push(&s->src[v], &len))
                    return RIFL_ERR_NOMEM;
                double mean = (c->min_len + c->max_len) / 2.0 / c->load[v];
                s->next_gen[v] += 1 + exp_draw(&s->rng, mean);
            }
        }
    }
    /* hand packets to the sender's queue */
    while (s->src[v].count) {
        uint32_t len = *(uint32_t *)fifo_front(&s->src[v]);
        if (c->mode == RIFL_CSIM_CREDIT) {
            if (rifl_credit_enqueue(s->a, v, len, 0) != RIFL_OK)
                break;
        } else {
            if (s->txq[v].count >= 64)
                break;
            if (fifo_push(&s->txq[v], &len))
                return RIFL_ERR_NOMEM;
        }
        fifo_pop(&s->src[v]);
    }
    return RIFL_OK;
}

/* ---- consumers -------------------------------------------------------------- */

static bool stalled_now(struct sim *s, unsigned v)
{
    const rifl_csim_config *c = s->cfg;
    if (s->quiet)
        return false;
    if (c->drain[v] <= 0)
        return true; /* a consumer that never takes anything */
    if (c->hol_vl == (int)v && s->now >= c->hol_start && s->now < c->hol_end)
        return true;
    return s->con[v].stalled;
}

static void account_unstalled(struct sim *s, unsigned v, bool was, bool is)
{
    struct consumer *k = &s->con[v];
    uint64_t end = s->cfg->duration;
    if (!was && is) {
        uint64_t t = s->now < end ? s->now : end;
        if (t > k->since)
            k->unstalled += (double)(t - k->since);
    } else if (was && !is) {
        k->since = s->now;
    }
}

static void update_stalls(struct sim *s)
{
    const rifl_csim_config *c = s->cfg;
    for (unsigned v = 0; v < c->vls; v++) {
        struct consumer *k = &s->con[v];
        while (!s->quiet && k->toggle_at <= s->now) {
            k->stalled = !k->stalled;
            double mean = k->stalled ? c->stall_off : c->stall_on;
            uint64_t d = c->stall_fixed ? (uint64_t)mean : 1 + exp_draw(&s->rng, mean);
            k->toggle_at += d ? d : 1;
        }
    }
}

static int deliver(struct sim *s, unsigned vl, uint32_t len)
{
    rifl_csim_vl_result *r = &s->res->vl[vl];
    if (s->now <= s->cfg->duration) {
        r->delivered_bytes += len;
        if (s->cfg->hol_vl >= 0) {
            if (s->now < s->cfg->hol_start)
                r->pre_bytes += len;
            else if (s->now < s->cfg->hol_end)
                r->hol_bytes += len;
            else
                r->post_bytes += len;
        }
    }
    r->delivered_total += len;
    r->delivered_packets++;
    s->held[vl] -= len;
    if (s->cfg->mode == RIFL_CSIM_CREDIT)
        return rifl_credit_rx_release(s->b, vl, len, s->now);
    s->occupancy -= len;
    if (s->sent_off && (double)s->occupancy < s->cfg->off_frac * (double)s->cfg->buffer_bytes) {
        uint8_t k = IT_XON;
        s->sent_off = false;
        return fifo_push(&s->notices, &k);
    }
    return RIFL_OK;
}

static uint64_t service_time(struct sim *s, unsigned vl, uint32_t len)
{
    double d = s->cfg->drain[vl];
    if (s->quiet && d < 1.0)
        d = 1.0; /* the drain after the run empties every buffer */
    if (d <= 0)
        return UINT64_MAX / 4;
    uint64_t t = (uint64_t)ceil(len / d);
    return t ? t : 1;
}

/* VL v has data somewhere on its way: at the source, queued to send, or at
 * the receiver (a packet on the wire alone is not seen) */
static bool vl_has_data(const struct sim *s, unsigned v)
{
    if (s->src[v].count || s->rxq[v].count || s->txq[v].count || s->held[v])
        return true;
    return s->cfg->mode == RIFL_CSIM_CREDIT && rifl_credit_queued(s->a, v) > 0;
}

/* The gap clock of VL v starts again while it has nothing to deliver or its
 * consumer is stalled: neither is a gap. */
static void gap_idle(struct sim *s, unsigned v)
{
    if (stalled_now(s, v) || !vl_has_data(s, v))
        s->con[v].last_delivery = s->now;
}

static void note_gap(struct sim *s, unsigned v, struct consumer *k)
{
    /* a gap counts only while the consumer is free and data is waiting
     * somewhere (source or sender queue) */
    if (s->now > k->last_delivery && s->now <= s->cfg->duration) {
        uint64_t g = s->now - k->last_delivery;
        if (g > s->res->vl[v].max_gap)
            s->res->vl[v].max_gap = g;
    }
    k->last_delivery = s->now;
}

static int run_consumers(struct sim *s)
{
    const rifl_csim_config *c = s->cfg;
    if (c->mode == RIFL_CSIM_CREDIT) {
        for (unsigned v = 0; v < c->vls; v++) {
            struct consumer *k = &s->con[v];
            for (;;) {
                if (k->busy && !k->paused && k->done_at <= s->now) {
                    struct pkt *p = fifo_front(&s->rxq[v]);
                    uint32_t len = p->len;
                    fifo_pop(&s->rxq[v]);
                    k->busy = false;
                    note_gap(s, v, k);
                    int rc = deliver(s, v, len);
                    if (rc)
                        return rc;
                }
                if (k->busy || !s->rxq[v].count)
                    break;
                if (stalled_now(s, v))
                    break; /* (no gap: gap_idle below) */
                struct pkt *p = fifo_front(&s->rxq[v]);
                k->busy = true;
                k->done_at = s->now + service_time(s, v, p->len);
            }
            gap_idle(s, v);
        }
        return RIFL_OK;
    }
    struct consumer *k = &s->shared_con;
    for (;;) {
        if (k->busy && !k->paused && k->done_at <= s->now) {
            struct pkt p = *(struct pkt *)fifo_front(&s->shared);
            fifo_pop(&s->shared);
            k->busy = false;
            note_gap(s, p.vl, &s->con[p.vl]);
            int rc = deliver(s, p.vl, p.len);
            if (rc)
                return rc;
        }
        if (k->busy || !s->shared.count)
            break;
        struct pkt *p = fifo_front(&s->shared);
        if (stalled_now(s, p->vl))
            break; /* the head blocks everything behind it */
        k->busy = true;
        k->done_at = s->now + service_time(s, p->vl, p->len);
    }
    for (unsigned v = 0; v < c->vls; v++)
        gap_idle(s, v);
    return RIFL_OK;
}

/* ---- arrivals ----------------------------------------------------------------- */

static int arrive_b(struct sim *s, struct item *it)
{
    const rifl_csim_config *c = s->cfg;
    if (it->kind == IT_FCP) {
        if (c->mode == RIFL_CSIM_CREDIT && rifl_credit_rx_fcp(s->b, it->fcp, it->len, s->now))
            s->res->fcp_rejected++;
        return RIFL_OK;
    }
    if (it->corrupt) {
        if (c->mode == RIFL_CSIM_CREDIT)
            rifl_credit_rx_corrupt(s->b);
        return RIFL_OK;
    }
    struct pkt p = { it->len, it->vl };
    if (c->mode == RIFL_CSIM_CREDIT) {
        int rc = rifl_credit_rx_data(s->b, it->vl, it->len);
        if (rc != RIFL_OK) {
            s->res->vl[it->vl].drops++;
            return RIFL_OK;
        }
        s->held[it->vl] += it->len;
        if (s->held[it->vl] > s->res->vl[it->vl].max_occupancy)
            s->res->vl[it->vl].max_occupancy = s->held[it->vl];
        return fifo_push(&s->rxq[it->vl], &p);
    }
    if (s->occupancy + it->len > c->buffer_bytes) {
        s->res->vl[it->vl].drops++;
        s->res->rx_overflow++;
        return RIFL_OK;
    }
    s->occupancy += it->len;
    s->held[it->vl] += it->len;
    if (s->held[it->vl] > s->res->vl[it->vl].max_occupancy)
        s->res->vl[it->vl].max_occupancy = s->held[it->vl];
    if (!s->sent_off && (double)s->occupancy > c->on_frac * (double)c->buffer_bytes) {
        uint8_t k = IT_XOFF;
        s->sent_off = true;
        if (fifo_push(&s->notices, &k))
            return RIFL_ERR_NOMEM;
    }
    return fifo_push(&s->shared, &p);
}

static int arrive_a(struct sim *s, struct item *it)
{
    if (it->kind == IT_FCP) {
        if (s->cfg->mode == RIFL_CSIM_CREDIT && rifl_credit_rx_fcp(s->a, it->fcp, it->len, s->now))
            s->res->fcp_rejected++;
    } else if (it->kind == IT_XOFF) {
        s->peer_off = true;
    } else if (it->kind == IT_XON) {
        s->peer_off = false;
    }
    return RIFL_OK;
}

/* ---- transmitters --------------------------------------------------------------- */

static int transmit(struct sim *s)
{
    const rifl_csim_config *c = s->cfg;
    int rc;
    if (c->mode == RIFL_CSIM_CREDIT) {
        rifl_credit_item it;
        if (s->a_busy <= s->now && rifl_credit_poll(s->a, s->now, &it) == RIFL_OK) {
            if (it.kind == RIFL_CREDIT_ITEM_FCP) {
                s->a_busy = s->now + RIFL_FC_FCP_BYTES;
                if ((rc = send_fcp(s, &s->ab, it.fcp)))
                    return rc;
            } else if ((rc = send_data(s, it.vl, it.len))) {
                return rc;
            }
        }
        /* B sends only FCPs */
        if (s->b_busy <= s->now && rifl_credit_poll(s->b, s->now, &it) == RIFL_OK) {
            s->b_busy = s->now + RIFL_FC_FCP_BYTES;
            if ((rc = send_fcp(s, &s->ba, it.fcp)))
                return rc;
        }
        return RIFL_OK;
    }
    if (s->a_busy <= s->now && !s->peer_off) {
        uint32_t head[RIFL_FC_NUM_VLS] = { 0 };
        for (unsigned v = 0; v < c->vls; v++)
            if (s->txq[v].count)
                head[v] = *(uint32_t *)fifo_front(&s->txq[v]);
        int vl = rifl_vlarb_pick(&s->arb, head, 0x7FFFu);
        if (vl >= 0) {
            fifo_pop(&s->txq[vl]);
            if ((rc = send_data(s, (unsigned)vl, head[vl])))
                return rc;
        }
    }
    if (s->b_busy <= s->now && s->notices.count) {
        struct item it = { .kind = *(uint8_t *)fifo_front(&s->notices), .len = 8 };
        fifo_pop(&s->notices);
        if (it.kind == IT_XOFF)
            s->res->xoff_sent++;
        else
            s->res->xon_sent++;
        s->b_busy = s->now + 8;
        /* notices are frames RIFL never loses, only delays: no faults */
        if ((rc = chan_send(s, &s->ba, &it, 8)))
            return rc;
    }
    return RIFL_OK;
}

/* ---- main loop ------------------------------------------------------------------ */

/* A stall interrupts the packet in service; it resumes where it stopped. */
static void pause_resume(struct sim *s, unsigned v, bool stall)
{
    struct consumer *k = &s->con[v];
    if (s->cfg->mode == RIFL_CSIM_ONOFF) {
        k = &s->shared_con;
        struct pkt *p = fifo_front(&s->shared);
        if (!p || p->vl != v)
            return;
    }
    if (stall && k->busy && !k->paused) {
        k->paused = true;
        k->remaining = k->done_at > s->now ? k->done_at - s->now : 0;
    } else if (!stall && k->paused) {
        k->paused = false;
        k->done_at = s->now + k->remaining;
    }
}

static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static bool all_idle(struct sim *s)
{
    /* FCPs never stop flowing: only data counts */
    if (s->data_in_flight || s->notices.count || s->shared.count)
        return false;
    for (unsigned v = 0; v < s->cfg->vls; v++) {
        if (s->src[v].count || s->rxq[v].count || s->txq[v].count || s->con[v].busy)
            return false;
        if (s->cfg->mode == RIFL_CSIM_CREDIT && rifl_credit_queued(s->a, v))
            return false;
    }
    return !s->shared_con.busy;
}

static int check_config(const rifl_csim_config *c, char *msg, size_t msglen)
{
    if (c->mode != RIFL_CSIM_CREDIT && c->mode != RIFL_CSIM_ONOFF) {
        rifl_msg(msg, msglen, "mode %d is unknown; use RIFL_CSIM_CREDIT or RIFL_CSIM_ONOFF",
                 (int)c->mode);
        return RIFL_ERR_CONFIG;
    }
    if (c->vls < 1 || c->vls > RIFL_FC_MAX_DATA_VLS) {
        rifl_msg(msg, msglen, "%u VLs; use 1..15", c->vls);
        return RIFL_ERR_CONFIG;
    }
    for (unsigned v = 0; v < c->vls; v++) {
        if (!(c->load[v] >= 0 && c->load[v] <= 1e3)) {
            rifl_msg(msg, msglen, "load %g on VL %u; use 0 to 1000 (1 or more: always "
                     "backlogged)", c->load[v], v);
            return RIFL_ERR_CONFIG;
        }
        if (!(c->drain[v] >= 0 && c->drain[v] <= 1e3)) {
            rifl_msg(msg, msglen, "consumer rate %g on VL %u; use 0 (a consumer that never "
                     "takes anything) to 1000 (a fraction of the line)", c->drain[v], v);
            return RIFL_ERR_CONFIG;
        }
    }
    if (c->duration > 1000000000000ull || c->one_way > 1000000000ull || c->jitter > 1000000000ull) {
        rifl_msg(msg, msglen, "duration %llu, one-way delay %llu, jitter %llu symbol times; use "
                 "at most 1e12, 1e9 and 1e9", (unsigned long long)c->duration,
                 (unsigned long long)c->one_way, (unsigned long long)c->jitter);
        return RIFL_ERR_CONFIG;
    }
    if (c->overhead > 65536) {
        rifl_msg(msg, msglen, "overhead of %u bytes per packet; use at most 65536", c->overhead);
        return RIFL_ERR_CONFIG;
    }
    if (!(c->stall_on >= 0 && c->stall_on <= 1e12 && c->stall_off >= 0 && c->stall_off <= 1e12)) {
        rifl_msg(msg, msglen, "consumer stalls of mean run %g and mean stall %g; use 0 to 1e12 "
                 "symbol times each", c->stall_on, c->stall_off);
        return RIFL_ERR_CONFIG;
    }
    if (c->hol_vl >= 0 && ((unsigned)c->hol_vl >= c->vls || c->hol_start > c->hol_end)) {
        rifl_msg(msg, msglen, "stall window on VL %d from %llu to %llu; use a VL below %u "
                 "(-1: none) and a start no later than the end", c->hol_vl,
                 (unsigned long long)c->hol_start, (unsigned long long)c->hol_end, c->vls);
        return RIFL_ERR_CONFIG;
    }
    if (c->min_len < 1 || c->max_len < c->min_len || c->max_len > 65536) {
        rifl_msg(msg, msglen, "packet sizes %u..%u; use 1 <= min <= max <= 65536",
                 c->min_len, c->max_len);
        return RIFL_ERR_CONFIG;
    }
    if (c->duration < 1) {
        rifl_msg(msg, msglen, "duration must be at least one symbol time");
        return RIFL_ERR_CONFIG;
    }
    if (c->mode == RIFL_CSIM_ONOFF &&
        (c->buffer_bytes < c->max_len || !(c->off_frac < c->on_frac) || c->off_frac < 0 ||
         c->on_frac > 1)) {
        rifl_msg(msg, msglen, "on/off mode needs a buffer of at least one packet (%u bytes)"
                 " and 0 <= off threshold < on threshold <= 1", c->max_len);
        return RIFL_ERR_CONFIG;
    }
    if ((c->stall_on > 0) != (c->stall_off > 0)) {
        rifl_msg(msg, msglen, "random stalls need both a mean run and a mean stall length");
        return RIFL_ERR_CONFIG;
    }
    double probs[3] = { c->data_corrupt, c->fcp_loss, c->fcp_corrupt };
    for (int i = 0; i < 3; i++)
        if (!(probs[i] >= 0 && probs[i] < 1)) {
            rifl_msg(msg, msglen, "fault probabilities must be in [0, 1); got %g", probs[i]);
            return RIFL_ERR_CONFIG;
        }
    return RIFL_OK;
}

static void free_sim(struct sim *s)
{
    rifl_credit_free(s->a);
    rifl_credit_free(s->b);
    free(s->ab.q.buf);
    free(s->ba.q.buf);
    free(s->shared.buf);
    free(s->notices.buf);
    for (unsigned v = 0; v < RIFL_FC_MAX_DATA_VLS; v++) {
        free(s->src[v].buf);
        free(s->rxq[v].buf);
        free(s->txq[v].buf);
    }
}

/* The arbiter's tables: the configured ones, or the default for c->vls. */
static rifl_vlarb_config arb_config(const rifl_csim_config *c)
{
    rifl_vlarb_config arb = c->arb;
    if (arb.n_high + arb.n_low == 0)
        rifl_vlarb_default_config(&arb, c->vls);
    return arb;
}

/* The credit engine's configuration for a run in credit mode. */
static rifl_credit_config credit_config(const rifl_csim_config *c)
{
    rifl_credit_config cc = rifl_credit_default_config;
    cc.data_vls = c->vls;
    cc.rx_buffer_bytes = c->buffer_bytes;
    cc.chunk_bytes = c->chunk_bytes;
    cc.fcp_period = c->fcp_period;
    cc.fcp_min_gap = c->fcp_min_gap;
    cc.tx_queue_packets = 64;
    cc.max_packet_bytes = c->max_len;
    cc.arb = arb_config(c);
    return cc;
}

int rifl_csim_check(const rifl_csim_config *c, char *msg, size_t msglen)
{
    if (!c)
        return rifl_null_arg(msg, msglen, "rifl_csim_check", "cfg");
    int rc = check_config(c, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    if (c->mode == RIFL_CSIM_CREDIT) {
        rifl_credit_config cc = credit_config(c);
        return rifl_credit_config_check(&cc, msg, msglen);
    }
    rifl_vlarb arb;
    rifl_vlarb_config ac = arb_config(c);
    return rifl_vlarb_init(&arb, &ac, c->vls, msg, msglen);
}

static int setup(struct sim *s, const rifl_csim_config *c, char *msg, size_t msglen)
{
    rifl_rng_seed(&s->rng, c->seed);
    for (unsigned v = 0; v < RIFL_FC_MAX_DATA_VLS; v++) {
        s->src[v].item = sizeof(uint32_t);
        s->txq[v].item = sizeof(uint32_t);
        s->rxq[v].item = sizeof(struct pkt);
        s->con[v].toggle_at = UINT64_MAX;
    }
    s->ab.q.item = s->ba.q.item = sizeof(struct item);
    s->shared.item = sizeof(struct pkt);
    s->notices.item = 1;
    rifl_vlarb_config arb = arb_config(c);
    if (c->mode == RIFL_CSIM_CREDIT) {
        rifl_credit_config cc = credit_config(c);
        int rc = rifl_credit_create(&cc, &s->a, msg, msglen);
        if (rc == RIFL_OK)
            rc = rifl_credit_create(&cc, &s->b, msg, msglen);
        if (rc != RIFL_OK)
            return rc;
    } else {
        int rc = rifl_vlarb_init(&s->arb, &arb, c->vls, msg, msglen);
        if (rc != RIFL_OK)
            return rc;
    }
    for (unsigned v = 0; v < c->vls; v++) {
        struct consumer *k = &s->con[v];
        if (c->stall_on > 0) {
            /* start with a run of random length so VLs are out of phase */
            k->toggle_at = c->stall_fixed
                               ? (uint64_t)(c->stall_on * (0.5 + rifl_rng_double(&s->rng)))
                               : 1 + exp_draw(&s->rng, c->stall_on);
        }
        if (c->load[v] > 0 && c->load[v] < 1.0)
            s->next_gen[v] = exp_draw(&s->rng, (c->min_len + c->max_len) / 2.0 /
                                                          c->load[v]);
    }
    return RIFL_OK;
}

/* Items whose last byte has arrived, A to B and then B to A. */
static int arrivals(struct sim *s)
{
    int rc = RIFL_OK;
    while (rc == RIFL_OK && s->ab.q.count &&
           ((struct item *)fifo_front(&s->ab.q))->at <= s->now) {
        struct item it = *(struct item *)fifo_front(&s->ab.q);
        fifo_pop(&s->ab.q);
        if (it.kind == IT_DATA)
            s->data_in_flight--;
        rc = arrive_b(s, &it);
    }
    while (rc == RIFL_OK && s->ba.q.count &&
           ((struct item *)fifo_front(&s->ba.q))->at <= s->now) {
        struct item it = *(struct item *)fifo_front(&s->ba.q);
        fifo_pop(&s->ba.q);
        rc = arrive_a(s, &it);
    }
    return rc;
}

/* Everything that happens at time s->now; stalled_prev[v] holds whether VL v
 * was stalled at the previous event. */
static int step(struct sim *s, bool *stalled_prev)
{
    const rifl_csim_config *c = s->cfg;
    s->res->events++;
    if (!s->quiet && s->now >= c->duration)
        s->quiet = true;
    update_stalls(s);
    for (unsigned v = 0; v < c->vls; v++) {
        bool st = stalled_now(s, v);
        account_unstalled(s, v, stalled_prev[v], st);
        if (st != stalled_prev[v])
            pause_resume(s, v, st);
        stalled_prev[v] = st;
    }
    int rc = arrivals(s);
    if (rc == RIFL_OK)
        rc = run_consumers(s);
    for (unsigned v = 0; rc == RIFL_OK && v < c->vls; v++)
        rc = feed(s, v);
    if (rc == RIFL_OK)
        rc = transmit(s);
    return rc;
}

/* The time of the next event after s->now (UINT64_MAX: none), not counting
 * the end of the drain phase. */
static uint64_t next_event(struct sim *s)
{
    const rifl_csim_config *c = s->cfg;
    uint64_t next = UINT64_MAX;
    if (!s->quiet)
        next = c->duration;
    if (s->ab.q.count)
        next = min64(next, ((struct item *)fifo_front(&s->ab.q))->at);
    if (s->ba.q.count)
        next = min64(next, ((struct item *)fifo_front(&s->ba.q))->at);
    if (s->a_busy > s->now)
        next = min64(next, s->a_busy);
    if (s->b_busy > s->now)
        next = min64(next, s->b_busy);
    if (c->mode == RIFL_CSIM_CREDIT) {
        next = min64(next, rifl_credit_next_due(s->a, s->now));
        next = min64(next, rifl_credit_next_due(s->b, s->now));
    }
    for (unsigned v = 0; v < c->vls; v++) {
        if (s->con[v].busy && !s->con[v].paused)
            next = min64(next, s->con[v].done_at);
        if (!s->quiet) {
            next = min64(next, s->con[v].toggle_at);
            if (c->load[v] > 0 && c->load[v] < 1.0)
                next = min64(next, s->next_gen[v]);
        }
    }
    if (s->shared_con.busy && !s->shared_con.paused)
        next = min64(next, s->shared_con.done_at);
    if (!s->quiet && c->hol_vl >= 0) {
        if (c->hol_start > s->now)
            next = min64(next, c->hol_start);
        if (c->hol_end > s->now)
            next = min64(next, c->hol_end);
    }
    return next;
}

/* Fill in the results of a finished run. */
static void collect_results(struct sim *s, const bool *stalled_prev)
{
    const rifl_csim_config *c = s->cfg;
    rifl_csim_result *res = s->res;
    res->end_time = s->now;
    double cap_all = 0;
    for (unsigned v = 0; v < c->vls; v++) {
        rifl_csim_vl_result *r = &res->vl[v];
        struct consumer *k = &s->con[v];
        if (!stalled_prev[v] && c->duration > k->since)
            k->unstalled += (double)(c->duration - k->since);
        r->capacity_bytes = k->unstalled * c->drain[v];
        r->throughput = (double)r->delivered_bytes / (double)c->duration;
        r->efficiency = r->capacity_bytes > 0 ? r->delivered_bytes / r->capacity_bytes : 0;
        res->total_delivered += r->delivered_bytes;
        cap_all += r->capacity_bytes;
        if (c->mode == RIFL_CSIM_CREDIT) {
            const rifl_fc_tx *tx = rifl_credit_tx_regs(s->a, v);
            const rifl_fc_rx *rx = rifl_credit_rx_regs(s->b, v);
            uint32_t space = rifl_fc_rx_space(rx);
            if (space > RIFL_FC_CREDIT_CAP)
                space = RIFL_FC_CREDIT_CAP;
            r->final_credit = rifl_fc_tx_credit(tx);
            r->final_space = space;
            r->final_abr_ok = rx->abr == tx->fctbs;
            res->leaked_blocks += r->final_credit > space ? r->final_credit - space
                                                          : space - r->final_credit;
        }
    }
    res->total_throughput = (double)res->total_delivered / (double)c->duration;
    res->efficiency = cap_all > 0 ? res->total_delivered / cap_all : 0;
    if (c->mode == RIFL_CSIM_CREDIT) {
        const rifl_credit_stats *sb = rifl_credit_get_stats(s->b);
        res->abr_resyncs = sb->abr_resyncs;
        res->rx_overflow = sb->rx_overflow;
        res->converged = res->leaked_blocks == 0;
        for (unsigned v = 0; v < c->vls; v++) {
            const rifl_fc_rx *rx = rifl_credit_rx_regs(s->b, v);
            res->converged &= res->vl[v].final_abr_ok && rx->free_chunks == rx->capacity;
        }
    }
}

int rifl_csim_run(const rifl_csim_config *c, rifl_csim_result *res, char *msg,
                  size_t msglen)
{
    if (!c || !res)
        return rifl_null_arg(msg, msglen, "rifl_csim_run", c ? "res" : "cfg");
    memset(res, 0, sizeof *res);
    int rc = rifl_csim_check(c, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    struct sim s;
    memset(&s, 0, sizeof s);
    s.cfg = c;
    s.res = res;
    rc = setup(&s, c, msg, msglen);
    uint64_t settle = 0; /* end of the drain phase once every queue is empty */
    /* enough for one FCTBS from A and then one FCCL from B, each delayed */
    uint64_t margin = 2 * ((uint64_t)c->fcp_period + c->one_way + c->jitter + 64) + 64;
    bool stalled_prev[RIFL_FC_MAX_DATA_VLS] = { false };
    while (rc == RIFL_OK) {
        rc = step(&s, stalled_prev);
        if (rc != RIFL_OK)
            break;
        uint64_t next = next_event(&s);
        if (s.quiet) {
            if (!settle && all_idle(&s))
                settle = s.now + margin;
            if (settle) {
                if (s.now >= settle)
                    break;
                next = min64(next, settle);
            }
        }
        if (next == UINT64_MAX || next <= s.now) {
            if (next == UINT64_MAX)
                break;
            next = s.now + 1;
        }
        s.now = next;
    }
    if (rc != RIFL_OK) {
        if (rc == RIFL_ERR_NOMEM)
            rifl_msg(msg, msglen, "out of memory while simulating");
        free_sim(&s);
        return rc;
    }
    collect_results(&s, stalled_prev);
    free_sim(&s);
    return RIFL_OK;
}

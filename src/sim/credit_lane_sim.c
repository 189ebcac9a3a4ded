/* Credit-based flow control carried by two RIFL lanes (FC_NONE mode, FCPs in
 * extension frames, one VL byte per packet) against the lanes' own ON/OFF
 * flow control, driven one frame slot at a time. */
#include "rifl/sim/credit_sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/sim/pair.h"
#include "rifl/sim/traffic.h"

void rifl_clane_default_config(rifl_clane_config *c)
{
    memset(c, 0, sizeof *c);
    c->credit = true;
    c->lane = rifl_lane_default_config;
    c->vls = 2;
    c->slots = 200000;
    c->buffer_bytes = 16384;
    c->min_len = 64;
    c->max_len = 1024;
    for (unsigned v = 0; v < RIFL_FC_MAX_DATA_VLS; v++) {
        c->load[v] = 1.0;
        c->drain[v] = 1.0;
    }
    c->hol_vl = -1;
    c->fcp_period = 4096;
    c->seed = 1;
}

struct vlq {             /* lengths of packets held at B for one VL */
    uint32_t *len;
    unsigned head, count, cap;
};

struct cl {
    const rifl_clane_config *cfg;
    rifl_clane_result *res;
    rifl_pair *pair;
    rifl_credit *a, *b;
    rifl_vlarb arb;      /* on/off mode sender */
    unsigned fb, pay;    /* frame bytes, payload bytes per frame */
    uint64_t slot, now;  /* now in symbol times */
    bool quiet;
    size_t lane_cap;     /* A's empty transmit queue, bytes */
    uint8_t *pkt, *ref;  /* scratch: outgoing packet, expected content */
    uint64_t next_seq[RIFL_FC_MAX_DATA_VLS];  /* A: next packet per VL */
    uint64_t pending[RIFL_FC_MAX_DATA_VLS];   /* A: generated, not queued */
    double gen_acc[RIFL_FC_MAX_DATA_VLS];
    uint64_t generated[RIFL_FC_MAX_DATA_VLS]; /* A: packets the source made */
    uint64_t queued_seq[RIFL_FC_MAX_DATA_VLS]; /* A: next seq to hand over */
    uint64_t exp_seq[RIFL_FC_MAX_DATA_VLS];   /* B: next seq expected */
    uint8_t *rbuf;       /* B: packet being read */
    size_t rlen;
    bool staged;         /* on/off: a whole packet waits in rbuf */
    struct vlq q[RIFL_FC_MAX_DATA_VLS];
    bool busy[RIFL_FC_MAX_DATA_VLS];
    uint64_t done_at[RIFL_FC_MAX_DATA_VLS];
    uint8_t fcp_b[RIFL_FC_FCP_BYTES];
    bool fcp_b_pending;
};

static uint64_t vseed(const struct cl *s, unsigned v)
{
    return s->cfg->seed * 1000003u + v + 1;
}

static uint32_t pkt_len(const struct cl *s, unsigned v, uint64_t seq)
{
    return (uint32_t)rifl_packet_len(vseed(s, v), seq, s->cfg->min_len, s->cfg->max_len);
}

static bool stalled(const struct cl *s, unsigned v)
{
    const rifl_clane_config *c = s->cfg;
    if (s->quiet)
        return false;
    if (c->drain[v] <= 0)
        return true;
    return c->hol_vl == (int)v && s->slot >= c->hol_start && s->slot < c->hol_end;
}

static uint64_t service(const struct cl *s, unsigned v, uint32_t len)
{
    double d = s->cfg->drain[v];
    if (s->quiet && d < 1.0)
        d = 1.0;
    /* the drain rate is a fraction of the payload rate: pay bytes per fb
     * symbol times */
    double t = ceil((double)len * s->fb / (s->pay * d));
    return t < 1 ? 1 : (uint64_t)t;
}

static void generate(struct cl *s)
{
    const rifl_clane_config *c = s->cfg;
    for (unsigned v = 0; v < c->vls; v++) {
        if (s->quiet)
            continue;
        if (c->load[v] >= 1.0) {
            if (s->pending[v] < 2)
                s->pending[v] = 2;
            continue;
        }
        s->gen_acc[v] += c->load[v] * s->pay;
        for (;;) {
            uint32_t len = pkt_len(s, v, s->generated[v]);
            if (s->gen_acc[v] < len)
                break;
            s->gen_acc[v] -= len;
            s->generated[v]++;
            s->pending[v]++;
        }
    }
}

static int put_packet(struct cl *s, unsigned v, uint64_t seq)
{
    uint32_t len = pkt_len(s, v, seq);
    s->pkt[0] = (uint8_t)v;
    rifl_packet_fill(vseed(s, v), seq, s->pkt + 1, len);
    int rc = rifl_lane_send(s->pair->lane[0], s->pkt, len + 1u);
    if (rc == RIFL_OK) {
        s->res->sent_packets[v]++;
        s->res->sent_bytes[v] += len;
    }
    return rc;
}

/* Extension frames overtake user data still queued in the lane, so an FCP
 * must not be handed over while packets it already counts in FCTBS wait in
 * the queue: B would count them twice (once from FCTBS, once on arrival)
 * and advertise credit it does not have.  A therefore feeds the lane only
 * when its user queue is empty; the lane takes the first frame in the same
 * slot, so the link loses no slot by it.  (On/off mode keeps a short queue.) */
static bool lane_has_room(struct cl *s)
{
    size_t space = rifl_lane_send_space(s->pair->lane[0]);
    size_t in_queue = s->lane_cap - space;
    if (s->cfg->credit)
        return in_queue == 0;
    return space >= s->cfg->max_len + 1u && in_queue < 2u * (s->cfg->max_len + 1u);
}

static int sender(struct cl *s)
{
    const rifl_clane_config *c = s->cfg;
    rifl_lane *la = s->pair->lane[0];
    if (c->credit) {
        for (unsigned v = 0; v < c->vls; v++)
            while (s->pending[v] &&
                   rifl_credit_enqueue(s->a, v, pkt_len(s, v, s->queued_seq[v]),
                                       s->queued_seq[v]) == RIFL_OK) {
                s->queued_seq[v]++;
                s->pending[v]--;
            }
        rifl_credit_item it;
        while (lane_has_room(s) && rifl_credit_poll(s->a, s->now, &it) == RIFL_OK) {
            int rc;
            if (it.kind == RIFL_CREDIT_ITEM_FCP) {
                rc = rifl_lane_send_ext(la, RIFL_FCP_EXT_CODE, it.fcp, RIFL_FC_FCP_BYTES);
                if (rc == RIFL_OK)
                    s->res->fcp_sent++;
                else if (rc == RIFL_ERR_AGAIN) {
                    s->res->fcp_ext_full++;
                    rc = RIFL_OK; /* A's FCTBS goes again in the next period */
                }
            } else {
                rc = put_packet(s, it.vl, it.tag);
            }
            if (rc != RIFL_OK)
                return rc;
        }
        /* B returns credit */
        if (!s->fcp_b_pending && rifl_credit_poll(s->b, s->now, &it) == RIFL_OK) {
            memcpy(s->fcp_b, it.fcp, RIFL_FC_FCP_BYTES);
            s->fcp_b_pending = true;
            s->res->fcp_sent++; /* handed over below, retried until taken */
        }
        if (s->fcp_b_pending) {
            if (rifl_lane_send_ext(s->pair->lane[1], RIFL_FCP_EXT_CODE, s->fcp_b,
                                   RIFL_FC_FCP_BYTES) == RIFL_OK)
                s->fcp_b_pending = false;
            else
                s->res->fcp_ext_full++;
        }
        return RIFL_OK;
    }
    while (lane_has_room(s)) {
        uint32_t head[RIFL_FC_NUM_VLS] = { 0 };
        for (unsigned v = 0; v < c->vls; v++)
            if (s->pending[v])
                head[v] = pkt_len(s, v, s->next_seq[v]);
        int v = rifl_vlarb_pick(&s->arb, head, 0x7FFFu);
        if (v < 0)
            break;
        int rc = put_packet(s, (unsigned)v, s->next_seq[v]);
        if (rc != RIFL_OK)
            return rc;
        s->next_seq[v]++;
        s->pending[v]--;
    }
    return RIFL_OK;
}

static int vlq_push(struct vlq *q, uint32_t len)
{
    if (q->count == q->cap) {
        unsigned ncap = q->cap ? q->cap * 2 : 64;
        uint32_t *n = malloc(ncap * sizeof *n);
        if (!n)
            return RIFL_ERR_NOMEM;
        for (unsigned i = 0; i < q->count; i++)
            n[i] = q->len[(q->head + i) % q->cap];
        free(q->len);
        q->len = n;
        q->cap = ncap;
        q->head = 0;
    }
    q->len[(q->head + q->count) % q->cap] = len;
    q->count++;
    return RIFL_OK;
}

/* Check a whole packet read at B; returns its VL or -1. */
static int check_packet(struct cl *s)
{
    if (s->rlen < 2 || s->rbuf[0] >= s->cfg->vls) {
        s->res->bad_packets++;
        return -1;
    }
    unsigned v = s->rbuf[0];
    uint32_t len = (uint32_t)(s->rlen - 1);
    uint64_t seq = s->exp_seq[v]++;
    if (len != pkt_len(s, v, seq)) {
        s->res->bad_packets++;
        return (int)v;
    }
    rifl_packet_fill(vseed(s, v), seq, s->ref, len);
    if (memcmp(s->ref, s->rbuf + 1, len))
        s->res->bad_packets++;
    return (int)v;
}

static void delivered(struct cl *s, unsigned v, uint32_t len)
{
    s->res->delivered_packets[v]++;
    if (s->slot < s->cfg->slots) {
        s->res->delivered_bytes[v] += len;
        if (s->cfg->hol_vl >= 0 && s->slot >= s->cfg->hol_start && s->slot < s->cfg->hol_end)
            s->res->hol_bytes[v] += len;
    }
}

static int receiver(struct cl *s)
{
    const rifl_clane_config *c = s->cfg;
    rifl_lane *la = s->pair->lane[0], *lb = s->pair->lane[1];
    uint8_t code, buf[64];
    size_t n;
    /* FCPs in extension frames, both ends */
    while (rifl_lane_read_ext(la, &code, buf, sizeof buf, &n) == RIFL_OK)
        if (c->credit && code == RIFL_FCP_EXT_CODE)
            rifl_credit_rx_fcp(s->a, buf, n, s->now);
    while (rifl_lane_read_ext(lb, &code, buf, sizeof buf, &n) == RIFL_OK)
        if (c->credit && code == RIFL_FCP_EXT_CODE)
            rifl_credit_rx_fcp(s->b, buf, n, s->now);
    /* consumers finish */
    for (unsigned v = 0; v < c->vls; v++)
        if (s->busy[v] && s->done_at[v] <= s->now) {
            s->busy[v] = false;
            if (c->credit) {
                struct vlq *q = &s->q[v];
                uint32_t len = q->len[q->head];
                q->head = (q->head + 1) % q->cap;
                q->count--;
                delivered(s, v, len);
                rifl_credit_rx_release(s->b, v, len, s->now);
            } else {
                delivered(s, v, (uint32_t)(s->rlen - 1));
                s->staged = false;
                s->rlen = 0;
            }
        }
    /* read packets off the lane */
    for (;;) {
        if (!c->credit && s->staged)
            break; /* on/off: one packet at a time, the rest waits in the lane */
        int eop = 0;
        size_t got = 0;
        size_t room = c->max_len + 1u - s->rlen;
        if (room == 0) {
            s->res->bad_packets++;
            s->rlen = 0;
            room = c->max_len + 1u;
        }
        if (rifl_lane_read(lb, s->rbuf + s->rlen, room, &got, &eop) != RIFL_OK)
            break;
        s->rlen += got;
        if (!eop)
            continue;
        int v = check_packet(s);
        if (c->credit) {
            uint32_t len = (uint32_t)(s->rlen - 1);
            s->rlen = 0;
            if (v < 0)
                continue;
            if (rifl_credit_rx_data(s->b, (unsigned)v, len) != RIFL_OK) {
                s->res->credit_drops++;
                continue;
            }
            if (vlq_push(&s->q[v], len))
                return RIFL_ERR_NOMEM;
        } else if (v < 0) {
            s->rlen = 0;
        } else {
            s->staged = true;
        }
    }
    /* consumers start */
    for (unsigned v = 0; v < c->vls; v++) {
        if (s->busy[v] || stalled(s, v))
            continue;
        if (c->credit && s->q[v].count) {
            s->busy[v] = true;
            s->done_at[v] = s->now + service(s, v, s->q[v].len[s->q[v].head]);
        } else if (!c->credit && s->staged && s->rbuf[0] == v) {
            s->busy[v] = true;
            s->done_at[v] = s->now + service(s, v, (uint32_t)(s->rlen - 1));
        }
    }
    return RIFL_OK;
}

static bool all_delivered(const struct cl *s)
{
    for (unsigned v = 0; v < s->cfg->vls; v++)
        if (s->res->delivered_packets[v] < s->res->sent_packets[v] || s->pending[v] ||
            (s->cfg->credit && rifl_credit_queued(s->a, v)))
            return false;
    return true;
}

static bool consistent(const struct cl *s)
{
    for (unsigned v = 0; v < s->cfg->vls; v++) {
        const rifl_fc_tx *tx = rifl_credit_tx_regs(s->a, v);
        const rifl_fc_rx *rx = rifl_credit_rx_regs(s->b, v);
        uint32_t space = rifl_fc_rx_space(rx);
        if (space > RIFL_FC_CREDIT_CAP)
            space = RIFL_FC_CREDIT_CAP;
        if (rifl_fc_tx_credit(tx) != space || rx->abr != tx->fctbs ||
            rx->free_chunks != rx->capacity)
            return false;
    }
    return true;
}

static rifl_credit_config clane_credit_config(const rifl_clane_config *c)
{
    rifl_credit_config cc = rifl_credit_default_config;
    cc.data_vls = c->vls;
    cc.rx_buffer_bytes = c->buffer_bytes;
    cc.fcp_period = c->fcp_period;
    cc.max_packet_bytes = c->max_len;
    return cc;
}

int rifl_clane_check(const rifl_clane_config *c, char *msg, size_t msglen)
{
    if (!c)
        return rifl_null_arg(msg, msglen, "rifl_clane_check", "cfg");
    if (c->vls < 1 || c->vls > RIFL_FC_MAX_DATA_VLS || c->min_len < 1 ||
        c->max_len < c->min_len || c->max_len > 65535) {
        rifl_msg(msg, msglen, "need 1..15 VLs and packet sizes 1 <= min <= max <= 65535");
        return RIFL_ERR_CONFIG;
    }
    if (!(c->ber >= 0 && c->ber <= 0.5)) {
        rifl_msg(msg, msglen, "bit error rate %g is out of range; use a value from 0 to 0.5",
                 c->ber);
        return RIFL_ERR_CONFIG;
    }
    rifl_lane_config lc = c->lane;
    lc.fc_mode = c->credit ? RIFL_LANE_FC_NONE : RIFL_LANE_FC_ONOFF;
    int rc = rifl_lane_config_check(&lc, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    size_t cap = (size_t)lc.tx_queue_frames * rifl_payload_bytes(lc.frame_bits);
    if (cap < 2u * (c->max_len + 1u)) {
        rifl_msg(msg, msglen, "the lane transmit queue (%zu bytes) must hold two of the"
                 " largest packets; raise tx_queue_frames", cap);
        return RIFL_ERR_CONFIG;
    }
    if (c->credit) {
        rifl_credit_config cc = clane_credit_config(c);
        return rifl_credit_config_check(&cc, msg, msglen);
    }
    rifl_vlarb arb;
    rifl_vlarb_config ac;
    rifl_vlarb_default_config(&ac, c->vls);
    return rifl_vlarb_init(&arb, &ac, c->vls, msg, msglen);
}

int rifl_clane_run(const rifl_clane_config *c, rifl_clane_result *res, char *msg,
                   size_t msglen)
{
    if (!c || !res)
        return rifl_null_arg(msg, msglen, "rifl_clane_run", c ? "res" : "cfg");
    memset(res, 0, sizeof *res);
    int rc = rifl_clane_check(c, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    struct cl s;
    memset(&s, 0, sizeof s);
    s.cfg = c;
    s.res = res;
    rifl_pair_config pc = { .lane = c->lane };
    pc.lane.fc_mode = c->credit ? RIFL_LANE_FC_NONE : RIFL_LANE_FC_ONOFF;
    pc.ber[0] = pc.ber[1] = c->ber;
    pc.seed[0] = c->seed * 2 + 11;
    pc.seed[1] = c->seed * 2 + 12;
    rc = rifl_pair_create(&pc, &s.pair, msg, msglen);
    if (rc == RIFL_OK && c->credit) {
        rifl_credit_config cc = clane_credit_config(c);
        rc = rifl_credit_create(&cc, &s.a, msg, msglen);
        if (rc == RIFL_OK)
            rc = rifl_credit_create(&cc, &s.b, msg, msglen);
    } else if (rc == RIFL_OK) {
        rifl_vlarb_config ac;
        rifl_vlarb_default_config(&ac, c->vls);
        rc = rifl_vlarb_init(&s.arb, &ac, c->vls, msg, msglen);
    }
    s.fb = pc.lane.frame_bits / 8;
    s.pay = s.fb - 2;
    s.pkt = malloc(c->max_len + 1u);
    s.ref = malloc(c->max_len + 1u);
    s.rbuf = malloc(c->max_len + 1u);
    if (rc == RIFL_OK && (!s.pkt || !s.ref || !s.rbuf))
        rc = RIFL_ERR_NOMEM;
    if (rc == RIFL_OK)
        s.lane_cap = rifl_lane_send_space(s.pair->lane[0]);
    uint64_t limit = c->slots * 4 + 2000000, settle = 0;
    uint64_t margin = 2 * (c->fcp_period / s.fb + 1) + 8 * (rifl_link_delay_frames(
                          &pc.lane.link, pc.lane.frame_bits) + 64);
    while (rc == RIFL_OK && s.slot < limit) {
        s.now = s.slot * s.fb;
        s.quiet = s.slot >= c->slots;
        generate(&s);
        rc = sender(&s);
        if (rc != RIFL_OK)
            break;
        rifl_pair_step(s.pair, NULL);
        rc = receiver(&s);
        s.slot++;
        if (s.quiet) {
            if (!settle && all_delivered(&s))
                settle = s.slot + margin;
            /* bit errors go on during the drain, so replays may delay the
             * last FCPs: wait for the credit state to agree (the result
             * reports whether it did) */
            if (settle && s.slot >= settle && (!c->credit || consistent(&s) ||
                                               s.slot >= settle + 20 * margin))
                break;
        }
    }
    if (rc == RIFL_OK) {
        res->slots_run = s.slot;
        uint64_t tot = 0;
        res->lossless = res->bad_packets == 0 && res->credit_drops == 0;
        for (unsigned v = 0; v < c->vls; v++) {
            tot += res->delivered_bytes[v];
            res->lossless &= res->delivered_packets[v] == res->sent_packets[v];
        }
        res->throughput = (double)tot / ((double)c->slots * s.pay);
        for (int i = 0; i < 2; i++) {
            const rifl_lane_stats *ls = rifl_lane_get_stats(s.pair->lane[i]);
            res->replays += ls->tx_replay_cycles;
            res->fc_onoff_sent += ls->fc_on_sent + ls->fc_off_sent;
        }
        res->lane_rx_overflow = rifl_lane_get_stats(s.pair->lane[1])->rx_overflow;
        if (c->credit)
            res->converged = consistent(&s);
        if (!settle) {
            rifl_msg(msg, msglen, "the link did not drain within %llu slots",
                     (unsigned long long)limit);
            res->lossless = false;
        }
    }
    rifl_pair_free(s.pair);
    rifl_credit_free(s.a);
    rifl_credit_free(s.b);
    free(s.pkt);
    free(s.ref);
    free(s.rbuf);
    for (unsigned v = 0; v < RIFL_FC_MAX_DATA_VLS; v++)
        free(s.q[v].len);
    return rc;
}

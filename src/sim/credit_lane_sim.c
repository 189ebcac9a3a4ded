/* Credit-based flow control carried by two RIFL lanes against the lanes'
 * own ON/OFF flow control, driven one frame slot at a time: a port
 * (rifl/port.h) at each end, A sending, B receiving through consumers that
 * drain each VL at a set rate. */
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

struct cl {
    const rifl_clane_config *cfg;
    rifl_clane_result *res;
    rifl_pair *pair;
    rifl_port *a, *b;    /* A sends the packets, B receives them */
    unsigned fb, pay;    /* frame bytes, payload bytes per frame */
    uint64_t slot, now;  /* now in symbol times */
    bool quiet;
    uint8_t *pkt, *rbuf; /* scratch: a packet out, a packet read */
    uint8_t *ref;        /* scratch: expected content */
    uint64_t next_seq[RIFL_FC_MAX_DATA_VLS];  /* A: next packet to queue per VL */
    uint64_t pending[RIFL_FC_MAX_DATA_VLS];   /* A: generated, not queued */
    double gen_acc[RIFL_FC_MAX_DATA_VLS];
    uint64_t generated[RIFL_FC_MAX_DATA_VLS]; /* A: packets the source made */
    uint64_t exp_seq[RIFL_FC_MAX_DATA_VLS];   /* B: next seq expected */
    bool busy[RIFL_FC_MAX_DATA_VLS];
    uint64_t done_at[RIFL_FC_MAX_DATA_VLS];
    uint64_t bad;        /* packets read at B with the wrong length or bytes */
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

static uint64_t service(const struct cl *s, unsigned v, size_t len)
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
            /* a backlogged source holds two packets; with the lane's flow
             * control the port's queue is the source's (with credits the
             * port queues descriptors besides) */
            uint64_t held = s->pending[v] + (c->credit ? 0 : rifl_port_tx_queued(s->a, v));
            if (held < 2)
                s->pending[v] += 2 - held;
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

/* A's source queues what it has on its port; then both ports hand their
 * lanes what flow control lets go. */
static void sender(struct cl *s)
{
    for (unsigned v = 0; v < s->cfg->vls; v++)
        while (s->pending[v]) {
            uint32_t len = pkt_len(s, v, s->next_seq[v]);
            rifl_packet_fill(vseed(s, v), s->next_seq[v], s->pkt, len);
            if (rifl_port_send(s->a, v, s->pkt, len) != RIFL_OK)
                break;
            s->next_seq[v]++;
            s->pending[v]--;
        }
    rifl_port_feed(s->a, s->slot);
    rifl_port_feed(s->b, s->slot);
}

/* A packet read at B: the next of its VL, byte for byte? */
static void check_packet(struct cl *s, unsigned v, size_t len)
{
    uint64_t seq = s->exp_seq[v]++;
    if (len != pkt_len(s, v, seq)) {
        s->bad++;
        return;
    }
    rifl_packet_fill(vseed(s, v), seq, s->ref, len);
    if (memcmp(s->ref, s->rbuf, len))
        s->bad++;
}

static void delivered(struct cl *s, unsigned v, size_t len)
{
    s->res->delivered_packets[v]++;
    if (s->slot < s->cfg->slots) {
        s->res->delivered_bytes[v] += len;
        if (s->cfg->hol_vl >= 0 && s->slot >= s->cfg->hol_start && s->slot < s->cfg->hol_end)
            s->res->hol_bytes[v] += len;
    }
}

/* B's consumers: those done take their packet off the port (its space, or
 * its credit, goes back), both ports take what arrived off their lanes, and
 * idle consumers start on the next packet of their VL. */
static void receiver(struct cl *s)
{
    const rifl_clane_config *c = s->cfg;
    for (unsigned v = 0; v < c->vls; v++)
        if (s->busy[v] && s->done_at[v] <= s->now) {
            size_t len;
            s->busy[v] = false;
            if (rifl_port_read(s->b, v, s->slot, s->rbuf, c->max_len, &len) != RIFL_OK)
                continue;
            check_packet(s, v, len);
            delivered(s, v, len);
        }
    rifl_port_collect(s->a, s->slot);
    rifl_port_collect(s->b, s->slot);
    for (unsigned v = 0; v < c->vls; v++) {
        size_t len;
        if (s->busy[v] || stalled(s, v) || rifl_port_peek(s->b, v, &len) != RIFL_OK)
            continue;
        s->busy[v] = true;
        s->done_at[v] = s->now + service(s, v, len);
    }
}

static bool all_delivered(const struct cl *s)
{
    const rifl_port_stats *st = rifl_port_get_stats(s->a);
    for (unsigned v = 0; v < s->cfg->vls; v++)
        if (s->res->delivered_packets[v] < st->tx_packets[v] || s->pending[v] ||
            rifl_port_tx_queued(s->a, v))
            return false;
    return true;
}

static bool consistent(const struct cl *s)
{
    for (unsigned v = 0; v < s->cfg->vls; v++) {
        const rifl_fc_tx *tx = rifl_credit_tx_regs(rifl_port_credit(s->a), v);
        const rifl_fc_rx *rx = rifl_credit_rx_regs(rifl_port_credit(s->b), v);
        uint32_t space = rifl_fc_rx_space(rx);
        if (space > RIFL_FC_CREDIT_CAP)
            space = RIFL_FC_CREDIT_CAP;
        if (rifl_fc_tx_credit(tx) != space || rx->abr != tx->fctbs ||
            rx->free_chunks != rx->capacity)
            return false;
    }
    return true;
}

/* The port at either end: A hands over every FCP that is due and drops
 * those its lane refuses (its next periodic FCP repeats them), B one per
 * slot, offered again until taken. */
static rifl_port_config clane_port_config(const rifl_clane_config *c, bool sender_end)
{
    rifl_port_config pc = rifl_port_default_config;
    pc.lane = c->lane;
    pc.fc = c->credit ? RIFL_PORT_FC_CREDIT : RIFL_PORT_FC_LANE;
    pc.vls = c->vls;
    pc.vl_byte = true;
    pc.max_packet = c->max_len;
    pc.credit = rifl_credit_default_config;
    pc.credit.rx_buffer_bytes = c->buffer_bytes;
    pc.credit.fcp_period = c->fcp_period;
    /* never fuller than the credit engine's descriptor queue */
    pc.tx_queue_bytes = pc.credit.tx_queue_packets * (c->max_len + 4u);
    pc.rx_queue_bytes = 0; /* one packet held at a time: the lane holds the rest */
    pc.fcp_per_slot = sender_end ? 0 : 1;
    pc.fcp_drop_refused = sender_end;
    pc.l2_sources = 0;
    return pc;
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
    for (unsigned v = 0; v < c->vls; v++)
        if (!(c->load[v] >= 0 && c->load[v] <= 1e3 && c->drain[v] >= 0 && c->drain[v] <= 1e3)) {
            rifl_msg(msg, msglen, "VL %u: load %g and consumer rate %g; use 0 to 1000 each "
                     "(fractions of the lane's payload rate)", v, c->load[v], c->drain[v]);
            return RIFL_ERR_CONFIG;
        }
    if (c->hol_vl >= 0 && ((unsigned)c->hol_vl >= c->vls || c->hol_start > c->hol_end)) {
        rifl_msg(msg, msglen, "stall window on VL %d from slot %llu to %llu; use a VL below %u "
                 "(-1: none) and a start no later than the end", c->hol_vl,
                 (unsigned long long)c->hol_start, (unsigned long long)c->hol_end, c->vls);
        return RIFL_ERR_CONFIG;
    }
    rifl_port_config pc = clane_port_config(c, true);
    return rifl_port_config_check(&pc, msg, msglen);
}

/* The result from the ports, the lanes and the consumers. */
static void collect(struct cl *s, uint64_t limit, uint64_t settle, char *msg, size_t msglen)
{
    const rifl_clane_config *c = s->cfg;
    rifl_clane_result *res = s->res;
    const rifl_port_stats *a = rifl_port_get_stats(s->a), *b = rifl_port_get_stats(s->b);
    res->slots_run = s->slot;
    res->bad_packets = s->bad + b->rx_bad_vl + b->rx_too_long;
    res->credit_drops = b->rx_credit_drops;
    /* FCPs A handed over, and every one B took from its engine */
    res->fcp_sent = a->fcp_tx + b->fcp_tx + (rifl_port_fcp_waiting(s->b) ? 1 : 0);
    res->fcp_ext_full = a->fcp_refused + b->fcp_refused;
    uint64_t tot = 0;
    res->lossless = res->bad_packets == 0 && res->credit_drops == 0;
    for (unsigned v = 0; v < c->vls; v++) {
        res->sent_packets[v] = a->tx_packets[v];
        res->sent_bytes[v] = a->tx_bytes[v];
        tot += res->delivered_bytes[v];
        res->lossless &= res->delivered_packets[v] == res->sent_packets[v];
    }
    res->throughput = (double)tot / ((double)c->slots * s->pay);
    for (int i = 0; i < 2; i++) {
        const rifl_lane_stats *ls = rifl_lane_get_stats(s->pair->lane[i]);
        res->replays += ls->tx_replay_cycles;
        res->fc_onoff_sent += ls->fc_on_sent + ls->fc_off_sent;
    }
    res->lane_rx_overflow = rifl_lane_get_stats(s->pair->lane[1])->rx_overflow;
    if (c->credit)
        res->converged = consistent(s);
    res->drained = settle != 0;
    if (!settle) {
        rifl_msg(msg, msglen, "the link did not drain within %llu slots", (unsigned long long)limit);
        res->lossless = false;
    }
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
    rifl_port_config ac = clane_port_config(c, true), bc = clane_port_config(c, false);
    rifl_pair_config pc = { .lane = c->lane };
    pc.lane.fc_mode = c->credit ? RIFL_LANE_FC_NONE : RIFL_LANE_FC_ONOFF;
    pc.ber[0] = pc.ber[1] = c->ber;
    pc.seed[0] = c->seed * 2 + 11;
    pc.seed[1] = c->seed * 2 + 12;
    rc = rifl_pair_create(&pc, &s.pair, msg, msglen);
    if (rc == RIFL_OK)
        rc = rifl_port_create(&ac, s.pair->lane[0], &s.a, msg, msglen);
    if (rc == RIFL_OK)
        rc = rifl_port_create(&bc, s.pair->lane[1], &s.b, msg, msglen);
    s.fb = pc.lane.frame_bits / 8;
    s.pay = s.fb - 2;
    s.pkt = malloc(c->max_len + 1u);
    s.ref = malloc(c->max_len + 1u);
    s.rbuf = malloc(c->max_len + 1u);
    if (rc == RIFL_OK && (!s.pkt || !s.ref || !s.rbuf))
        rc = RIFL_ERR_NOMEM;
    uint64_t limit = c->slots * 4 + 2000000, settle = 0;
    uint64_t margin = 2 * (c->fcp_period / s.fb + 1) + 8 * (rifl_link_delay_frames(
                          &pc.lane.link, pc.lane.frame_bits) + 64);
    while (rc == RIFL_OK && s.slot < limit) {
        s.now = s.slot * s.fb;
        s.quiet = s.slot >= c->slots;
        generate(&s);
        sender(&s);
        if (c->observe) {
            rifl_pair_slot seen;
            rifl_pair_step(s.pair, &seen);
            c->observe(c->observe_ctx, &seen);
        } else {
            rifl_pair_step(s.pair, NULL);
        }
        receiver(&s);
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
    if (rc == RIFL_OK)
        collect(&s, limit, settle, msg, msglen);
    rifl_port_free(s.a);
    rifl_port_free(s.b);
    rifl_pair_free(s.pair);
    free(s.pkt);
    free(s.ref);
    free(s.rbuf);
    return rc;
}

/* One port's credit flow-control engine: per-VL registers, transmit
 * descriptor queues, FCP timers, link state and the VL arbiter. */
#include "rifl/credit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const rifl_credit_config rifl_credit_default_config = RIFL_CREDIT_DEFAULTS;

struct desc {
    uint32_t len;
    uint64_t tag;
};

struct txq {
    struct desc *ring;
    uint32_t head, count;
};

struct rifl_credit {
    rifl_credit_config cfg;
    rifl_fc_link_state state;
    rifl_vlarb arb;
    rifl_fc_tx tx[RIFL_FC_MAX_DATA_VLS];
    rifl_fc_rx rx[RIFL_FC_MAX_DATA_VLS];
    struct txq q[RIFL_FC_NUM_VLS];
    uint64_t last_fcp[RIFL_FC_MAX_DATA_VLS];  /* time the last FCP went */
    bool fcp_sent_once[RIFL_FC_MAX_DATA_VLS];
    bool credit_pending[RIFL_FC_MAX_DATA_VLS]; /* credit returned, FCP owed */
    bool heard[RIFL_FC_MAX_DATA_VLS];          /* an FCP arrived on this VL */
    unsigned fcp_rr;                           /* round-robin start for FCPs */
    unsigned vl15_held;
    rifl_credit_stats st;
};

const char *rifl_fc_link_state_name(rifl_fc_link_state s)
{
    switch (s) {
    case RIFL_FC_LINK_INIT: return "init";
    case RIFL_FC_LINK_ARM: return "arm";
    case RIFL_FC_LINK_ACTIVE: return "active";
    default: return "unknown";
    }
}

int rifl_credit_config_check(const rifl_credit_config *cfg, char *msg, size_t msglen)
{
    if (!cfg)
        return rifl_null_arg(msg, msglen, "rifl_credit_config_check", "the configuration");
    if (cfg->data_vls < 1 || cfg->data_vls > RIFL_FC_MAX_DATA_VLS) {
        if (msg)
            snprintf(msg, msglen, "%u data VLs requested; use 1..15 (VL15 is management)",
                     cfg->data_vls);
        return RIFL_ERR_CONFIG;
    }
    if (cfg->fcp_period < 1 || cfg->fcp_period > RIFL_FC_FCP_MAX_PERIOD) {
        if (msg)
            snprintf(msg, msglen, "FCP period of %u symbol times; a receiver must send an"
                     " FCP per VL at least every 65536 symbol times, use 1..65536",
                     cfg->fcp_period);
        return RIFL_ERR_CONFIG;
    }
    if ((uint64_t)cfg->fcp_period <= (uint64_t)RIFL_FC_FCP_BYTES * cfg->data_vls) {
        /* FCPs go before data: one per VL per period would leave no time */
        if (msg)
            snprintf(msg, msglen, "FCP period of %u symbol times with %u data VLs: their FCPs "
                     "(%u symbol times each) would fill the link and no data would go; use a "
                     "period of at least %u", cfg->fcp_period, cfg->data_vls, RIFL_FC_FCP_BYTES,
                     RIFL_FC_FCP_BYTES * cfg->data_vls + 1);
        return RIFL_ERR_CONFIG;
    }
    if (cfg->tx_queue_packets < 1 || cfg->tx_queue_packets > (1u << 24)) {
        if (msg)
            snprintf(msg, msglen, "transmit queue of %u packets; use 1..16777216",
                     cfg->tx_queue_packets);
        return RIFL_ERR_CONFIG;
    }
    if (cfg->max_packet_bytes < 1 ||
        cfg->max_packet_bytes > (RIFL_FC_CREDIT_CAP - 1) * RIFL_FC_BLOCK_BYTES) {
        if (msg)
            snprintf(msg, msglen, "largest packet of %u bytes; the credit check is exact"
                     " only below 2048 blocks, so use 1..131008", cfg->max_packet_bytes);
        return RIFL_ERR_CONFIG;
    }
    /* A VL's FCP falls due `fcp_period` after its last and may then wait
     * for a packet already going and for the other VLs' FCPs due before it:
     * it must still go before 65536 symbol times have passed */
    uint64_t worst = (uint64_t)cfg->fcp_period + cfg->max_packet_bytes +
                     (uint64_t)RIFL_FC_FCP_BYTES * (cfg->data_vls - 1);
    if (worst >= RIFL_FC_FCP_MAX_PERIOD) {
        long long fcps = (long long)RIFL_FC_FCP_BYTES * (cfg->data_vls - 1);
        long long period = (long long)(RIFL_FC_FCP_MAX_PERIOD - 1) - cfg->max_packet_bytes - fcps;
        long long packet = (long long)(RIFL_FC_FCP_MAX_PERIOD - 1) - cfg->fcp_period - fcps;
        char fix[96];
        if (period >= (long long)RIFL_FC_FCP_BYTES * cfg->data_vls + 1)
            snprintf(fix, sizeof fix, "lower the FCP period to at most %lld", period);
        else
            snprintf(fix, sizeof fix, "lower the largest packet to at most %lld bytes",
                     packet > 0 ? packet : 1);
        if (msg)
            snprintf(msg, msglen, "FCP period of %u symbol times, packets of up to %u bytes and "
                     "%u data VLs: an FCP could come %llu symbol times after the last one of its "
                     "VL, and it must come within 65535; %s", cfg->fcp_period,
                     cfg->max_packet_bytes, cfg->data_vls, (unsigned long long)worst, fix);
        return RIFL_ERR_CONFIG;
    }
    if (cfg->vl15_rx_packets < 1) {
        if (msg)
            snprintf(msg, msglen, "VL15 needs a receive buffer of at least one packet");
        return RIFL_ERR_CONFIG;
    }
    uint32_t need = rifl_fc_blocks(cfg->max_packet_bytes);
    for (unsigned v = 0; v < cfg->data_vls; v++) {
        uint64_t bytes = cfg->vl_buffer_bytes[v] ? cfg->vl_buffer_bytes[v]
                                                  : cfg->rx_buffer_bytes;
        rifl_fc_rx probe;
        char sub[200] = "";
        if (rifl_fc_rx_init(&probe, bytes, cfg->chunk_bytes, sub, sizeof sub) != RIFL_OK) {
            if (msg)
                snprintf(msg, msglen, "VL%u: %s", v, sub);
            return RIFL_ERR_CONFIG;
        }
        uint32_t space = rifl_fc_rx_space(&probe);
        if (space > RIFL_FC_CREDIT_CAP)
            space = RIFL_FC_CREDIT_CAP;
        if (space < need) {
            if (msg)
                snprintf(msg, msglen,
                         "VL%u: an empty receive buffer guarantees only %u blocks but the"
                         " largest packet (%u bytes) needs %u, so it could never be sent;"
                         " give the VL at least %llu bytes or lower the largest packet",
                         v, space, cfg->max_packet_bytes, need,
                         (unsigned long long)need * cfg->chunk_bytes);
            return RIFL_ERR_CONFIG;
        }
    }
    rifl_vlarb arb;
    rifl_vlarb_config ac = cfg->arb;
    if (ac.n_high + ac.n_low == 0)
        rifl_vlarb_default_config(&ac, cfg->data_vls);
    return rifl_vlarb_init(&arb, &ac, cfg->data_vls, msg, msglen);
}

/* The registers back to their start.  Packets received and not yet read
 * keep their space (an engine starting again advertises only the space
 * that is free, and their release later gives it back); the VL15 packets
 * held stay counted for the same reason. */
static void reset_registers(rifl_credit *c)
{
    for (unsigned v = 0; v < c->cfg.data_vls; v++) {
        uint64_t bytes = c->cfg.vl_buffer_bytes[v] ? c->cfg.vl_buffer_bytes[v]
                                                   : c->cfg.rx_buffer_bytes;
        uint32_t held = c->rx[v].capacity - c->rx[v].free_chunks;
        rifl_fc_tx_reset(&c->tx[v]);
        rifl_fc_rx_init(&c->rx[v], bytes, c->cfg.chunk_bytes, NULL, 0);
        c->rx[v].free_chunks -= held < c->rx[v].free_chunks ? held : c->rx[v].free_chunks;
        c->fcp_sent_once[v] = false;
        c->credit_pending[v] = false;
        c->heard[v] = false;
        c->last_fcp[v] = 0;
    }
}

int rifl_credit_create(const rifl_credit_config *cfg, rifl_credit **out, char *msg,
                       size_t msglen)
{
    if (!out)
        return rifl_null_arg(msg, msglen, "rifl_credit_create", "out");
    *out = NULL;
    int rc = rifl_credit_config_check(cfg, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    rifl_credit *c = calloc(1, sizeof *c);
    if (!c)
        return RIFL_ERR_NOMEM;
    c->cfg = *cfg;
    if (c->cfg.arb.n_high + c->cfg.arb.n_low == 0)
        rifl_vlarb_default_config(&c->cfg.arb, cfg->data_vls);
    rifl_vlarb_init(&c->arb, &c->cfg.arb, cfg->data_vls, NULL, 0);
    for (unsigned v = 0; v < RIFL_FC_NUM_VLS; v++) {
        if (v >= cfg->data_vls && v != RIFL_FC_VL15)
            continue;
        c->q[v].ring = calloc(cfg->tx_queue_packets, sizeof(struct desc));
        if (!c->q[v].ring) {
            rifl_credit_free(c);
            return RIFL_ERR_NOMEM;
        }
    }
    reset_registers(c);
    c->state = RIFL_FC_LINK_INIT;
    *out = c;
    return RIFL_OK;
}

void rifl_credit_free(rifl_credit *c)
{
    if (!c)
        return;
    for (unsigned v = 0; v < RIFL_FC_NUM_VLS; v++)
        free(c->q[v].ring);
    free(c);
}

rifl_fc_link_state rifl_credit_state(const rifl_credit *c)
{
    return c ? c->state : RIFL_FC_LINK_INIT;
}

void rifl_credit_set_state(rifl_credit *c, rifl_fc_link_state s)
{
    if (!c || s == c->state || (unsigned)s > RIFL_FC_LINK_ACTIVE)
        return;
    if (s == RIFL_FC_LINK_INIT)
        reset_registers(c);
    c->state = s;
    c->st.state_changes++;
}

static int vl_ok(const rifl_credit *c, unsigned vl)
{
    return c && (vl < c->cfg.data_vls || vl == RIFL_FC_VL15);
}

int rifl_credit_enqueue(rifl_credit *c, unsigned vl, uint32_t len, uint64_t tag)
{
    if (!c || !vl_ok(c, vl) || len == 0)
        return RIFL_ERR_INVALID_ARG;
    if (len > c->cfg.max_packet_bytes)
        return RIFL_ERR_TOO_BIG;
    struct txq *q = &c->q[vl];
    if (q->count >= c->cfg.tx_queue_packets)
        return RIFL_ERR_AGAIN;
    struct desc *d = &q->ring[(q->head + q->count) % c->cfg.tx_queue_packets];
    d->len = len;
    d->tag = tag;
    q->count++;
    return RIFL_OK;
}

unsigned rifl_credit_queued(const rifl_credit *c, unsigned vl)
{
    return vl_ok(c, vl) ? c->q[vl].count : 0;
}

/* INIT -> ARM (auto_activate): an FCP heard on every data VL, and one of
 * Op 1 sent on every data VL, so that a peer still active learns that this
 * end started again before it sees an FCP of Op 0. */
static void maybe_arm(rifl_credit *c)
{
    if (!c->cfg.auto_activate || c->state != RIFL_FC_LINK_INIT)
        return;
    for (unsigned v = 0; v < c->cfg.data_vls; v++)
        if (!c->heard[v] || !c->fcp_sent_once[v])
            return;
    rifl_credit_set_state(c, RIFL_FC_LINK_ARM);
}

/* Is an FCP for VL v due at `now`?  Returns 0 (no), 1 (credit return),
 * 2 (period ran out or never sent). */
static int fcp_due(const rifl_credit *c, unsigned v, uint64_t now)
{
    if (!c->fcp_sent_once[v])
        return 2;
    /* (a `now` before the last FCP counts as no time passed) */
    uint64_t since = now > c->last_fcp[v] ? now - c->last_fcp[v] : 0;
    if (since >= c->cfg.fcp_period)
        return 2;
    if (c->credit_pending[v] && since >= c->cfg.fcp_min_gap)
        return 1;
    return 0;
}

uint64_t rifl_credit_next_due(const rifl_credit *c, uint64_t now)
{
    uint64_t best = UINT64_MAX;
    if (!c)
        return best;
    for (unsigned v = 0; v < c->cfg.data_vls; v++) {
        uint64_t t;
        if (!c->fcp_sent_once[v])
            t = now;
        else {
            uint64_t last = c->last_fcp[v];
            t = last > UINT64_MAX - c->cfg.fcp_period ? UINT64_MAX : last + c->cfg.fcp_period;
            if (c->credit_pending[v]) {
                uint64_t g = last > UINT64_MAX - c->cfg.fcp_min_gap ? UINT64_MAX
                                                                     : last + c->cfg.fcp_min_gap;
                if (g < t)
                    t = g;
            }
        }
        if (t <= now)
            t = now + 1; /* due already: the caller polls when the link frees */
        if (t < best)
            best = t;
    }
    return best;
}

static void pop(rifl_credit *c, unsigned vl)
{
    struct txq *q = &c->q[vl];
    q->head = (q->head + 1) % c->cfg.tx_queue_packets;
    q->count--;
}

/* An FCP that is due into *item, round robin over the VLs; false for
 * none. */
static bool poll_fcp(rifl_credit *c, uint64_t now, rifl_credit_item *item)
{
    unsigned n = c->cfg.data_vls;
    for (unsigned k = 0; k < n; k++) {
        unsigned v = (c->fcp_rr + k) % n;
        int why = fcp_due(c, v, now);
        if (!why)
            continue;
        rifl_fcp f = {
            .op = c->state == RIFL_FC_LINK_INIT ? RIFL_FCP_OP_INIT : RIFL_FCP_OP_NORMAL,
            .fctbs = c->tx[v].fctbs,
            .vl = (uint8_t)v,
            .fccl = rifl_fc_rx_fccl(&c->rx[v]),
        };
        rifl_fcp_encode(&f, item->fcp);
        item->kind = RIFL_CREDIT_ITEM_FCP;
        item->vl = v;
        item->len = RIFL_FC_FCP_BYTES;
        c->fcp_sent_once[v] = true;
        c->credit_pending[v] = false;
        c->last_fcp[v] = now;
        c->fcp_rr = (v + 1) % n;
        c->st.fcp_tx++;
        c->st.vl[v].fcp_tx++;
        if (f.op == RIFL_FCP_OP_INIT)
            c->st.fcp_tx_init++;
        if (why == 1)
            c->st.fcp_tx_credit++;
        else
            c->st.fcp_tx_periodic++;
        maybe_arm(c);
        return true;
    }
    return false;
}

int rifl_credit_poll_fcp(rifl_credit *c, uint64_t now, rifl_credit_item *item)
{
    if (!c || !item)
        return RIFL_ERR_INVALID_ARG;
    memset(item, 0, sizeof *item);
    return poll_fcp(c, now, item) ? RIFL_OK : RIFL_ERR_AGAIN;
}

int rifl_credit_poll(rifl_credit *c, uint64_t now, rifl_credit_item *item)
{
    if (!c || !item)
        return RIFL_ERR_INVALID_ARG;
    memset(item, 0, sizeof *item);
    /* 1. FCPs that are due, round robin over the VLs */
    if (poll_fcp(c, now, item))
        return RIFL_OK;
    /* 2. packets: VL15 in any state, data VLs only when active */
    unsigned n = c->cfg.data_vls;
    uint32_t head[RIFL_FC_NUM_VLS] = { 0 };
    uint32_t sendable = 0;
    if (c->q[RIFL_FC_VL15].count)
        head[RIFL_FC_VL15] = c->q[RIFL_FC_VL15].ring[c->q[RIFL_FC_VL15].head].len;
    if (c->state == RIFL_FC_LINK_ACTIVE) {
        for (unsigned v = 0; v < n; v++) {
            if (!c->q[v].count)
                continue;
            head[v] = c->q[v].ring[c->q[v].head].len;
            if (rifl_fc_tx_may_send(&c->tx[v], rifl_fc_blocks(head[v])))
                sendable |= 1u << v;
            else
                c->st.vl[v].credit_waits++;
        }
    }
    int vl = rifl_vlarb_pick(&c->arb, head, sendable);
    if (vl < 0)
        return RIFL_ERR_AGAIN;
    struct desc d = c->q[vl].ring[c->q[vl].head];
    pop(c, (unsigned)vl);
    item->kind = RIFL_CREDIT_ITEM_DATA;
    item->vl = (unsigned)vl;
    item->len = d.len;
    item->tag = d.tag;
    if (vl == (int)RIFL_FC_VL15) {
        c->st.vl15_tx++;
    } else {
        uint32_t b = rifl_fc_blocks(d.len);
        rifl_fc_tx_sent(&c->tx[vl], b); /* checked above: cannot fail */
        c->st.vl[vl].tx_blocks += b;
    }
    c->st.vl[vl].tx_packets++;
    c->st.vl[vl].tx_bytes += d.len;
    return RIFL_OK;
}

int rifl_credit_rx_fcp(rifl_credit *c, const uint8_t *fcp, size_t len, uint64_t now)
{
    (void)now;
    if (!c || !fcp)
        return RIFL_ERR_INVALID_ARG;
    rifl_fcp f;
    rifl_fcp_status why;
    if (rifl_fcp_decode(fcp, len, &f, &why) != RIFL_OK) {
        c->st.fcp_rx_drop[why]++;
        return RIFL_ERR_FRAME;
    }
    if (f.vl >= c->cfg.data_vls) {
        /* VL15 is never flow controlled; unused VLs have no registers */
        c->st.fcp_rx_bad_vl++;
        return RIFL_ERR_FRAME;
    }
    /* An FCP of Op 1 on an active link: the peer has re-initialised (its
     * registers are 0 again).  This end starts again too, or it would apply
     * the peer's new FCCL to its old FCTBS and overrun the peer's buffer. */
    bool reinit = f.op == RIFL_FCP_OP_INIT && c->state == RIFL_FC_LINK_ACTIVE;
    /* On a correct link FCTBS <= FCCL <= FCTBS + 2048 (mod 4096) whenever an
     * FCP arrives: the sender never passes CL, FCCL never falls, and ABR
     * never exceeds FCTBS.  A value outside that window can only come from
     * an undetected corruption or a broken peer; taking it would hand out
     * credit the receiver does not have, so the whole FCP is dropped.  The
     * FCCL is checked against the FCTBS it will meet (0 after starting
     * again), and before anything changes: a dropped FCP, Op 1 or not,
     * moves no register and no link state, only its counter. */
    uint16_t fctbs = reinit ? 0 : c->tx[f.vl].fctbs;
    if (rifl_fc_sub(f.fccl, fctbs) > RIFL_FC_CREDIT_CAP) {
        c->st.fcp_rx_bad_fccl++;
        return RIFL_ERR_FRAME;
    }
    /* An FCP of Op 1 comes from a peer in LinkInitialize, which has sent no
     * data since its registers were reset: its FCTBS is 0.  Another value
     * would move ABR, and with it the FCCL this end grants, past the blocks
     * the peer really sent, so the FCP is dropped like a bad FCCL. */
    if (f.op == RIFL_FCP_OP_INIT && f.fctbs != 0) {
        c->st.fcp_rx_bad_fctbs++;
        return RIFL_ERR_FRAME;
    }
    if (reinit) {
        rifl_credit_set_state(c, RIFL_FC_LINK_INIT);
        c->st.peer_reinits++;
    }
    c->st.fcp_rx_good++;
    c->st.vl[f.vl].fcp_rx++;
    /* Both operands carry valid FCTBS and FCCL; Op only tells the peer's
     * link state (1 = still initialising). */
    rifl_fc_tx_set_limit(&c->tx[f.vl], f.fccl);
    rifl_fc_rx *rx = &c->rx[f.vl];
    uint64_t before = rx->resync_blocks;
    if (f.fctbs != rx->abr) {
        rifl_fc_rx_resync(rx, f.fctbs);
        c->st.abr_resyncs++;
        c->st.abr_resync_blocks += rx->resync_blocks - before;
    }
    c->heard[f.vl] = true;
    maybe_arm(c);
    if (c->cfg.auto_activate && c->state == RIFL_FC_LINK_ARM && f.op == RIFL_FCP_OP_NORMAL)
        rifl_credit_set_state(c, RIFL_FC_LINK_ACTIVE);
    return RIFL_OK;
}

int rifl_credit_rx_data(rifl_credit *c, unsigned vl, uint32_t len)
{
    if (!vl_ok(c, vl) || len == 0)
        return RIFL_ERR_INVALID_ARG;
    if (vl == RIFL_FC_VL15) {
        if (c->vl15_held >= c->cfg.vl15_rx_packets) {
            c->st.vl15_drops++;
            return RIFL_ERR_AGAIN;
        }
        c->vl15_held++;
        c->st.vl15_rx++;
        c->st.vl[vl].rx_packets++;
        c->st.vl[vl].rx_bytes += len;
        return RIFL_OK;
    }
    if (c->state == RIFL_FC_LINK_INIT) {
        c->st.rx_not_ready++;
        return RIFL_ERR_STATE;
    }
    if (rifl_fc_rx_accept(&c->rx[vl], rifl_fc_blocks(len)) != RIFL_OK) {
        c->st.rx_overflow++;
        c->st.vl[vl].rx_drops++;
        return RIFL_ERR_AGAIN;
    }
    c->st.vl[vl].rx_packets++;
    c->st.vl[vl].rx_bytes += len;
    return RIFL_OK;
}

void rifl_credit_rx_corrupt(rifl_credit *c)
{
    if (c)
        c->st.rx_corrupt++;
}

int rifl_credit_rx_release(rifl_credit *c, unsigned vl, uint32_t len, uint64_t now)
{
    (void)now;
    if (!vl_ok(c, vl) || len == 0)
        return RIFL_ERR_INVALID_ARG;
    if (vl == RIFL_FC_VL15) {
        if (!c->vl15_held)
            return RIFL_ERR_INVALID_ARG;
        c->vl15_held--;
        return RIFL_OK;
    }
    int rc = rifl_fc_rx_release(&c->rx[vl], rifl_fc_blocks(len));
    if (rc == RIFL_OK)
        c->credit_pending[vl] = true;
    return rc;
}

const rifl_fc_tx *rifl_credit_tx_regs(const rifl_credit *c, unsigned vl)
{
    return c && vl < c->cfg.data_vls ? &c->tx[vl] : NULL;
}

const rifl_fc_rx *rifl_credit_rx_regs(const rifl_credit *c, unsigned vl)
{
    return c && vl < c->cfg.data_vls ? &c->rx[vl] : NULL;
}

const rifl_credit_stats *rifl_credit_get_stats(const rifl_credit *c)
{
    return c ? &c->st : NULL;
}
const rifl_vlarb *rifl_credit_arbiter(const rifl_credit *c) { return c ? &c->arb : NULL; }
const rifl_credit_config *rifl_credit_get_config(const rifl_credit *c)
{
    return c ? &c->cfg : NULL;
}

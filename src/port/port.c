/* A port: a lane with flow control and virtual lanes (rifl/port.h).  This
 * file is the packet side; port_l2.c is the Layer 2 endpoint. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port_priv.h"

const rifl_port_config rifl_port_default_config = {
    .lane = RIFL_LANE_DEFAULTS,
    .fc = RIFL_PORT_FC_LANE,
    .vls = 1,
    .vl_byte = false,
    .max_packet = RIFL_L2_CELL_BYTES,
    .tx_queue_bytes = 65536,
    .rx_queue_bytes = 65536,
    .credit = RIFL_CREDIT_DEFAULTS,
    .fcp_per_slot = 1,
    .fcp_drop_refused = false,
    .l2_sources = 16,
    .l2_max_msg = 65536,
};

/* ---- configuration ------------------------------------------------------------ */

static rifl_lane_config lane_config(const rifl_port_config *c)
{
    rifl_lane_config lc = c->lane;
    lc.fc_mode = c->fc == RIFL_PORT_FC_CREDIT ? RIFL_LANE_FC_NONE : RIFL_LANE_FC_ONOFF;
    return lc;
}

static rifl_credit_config credit_config(const rifl_port_config *c)
{
    rifl_credit_config cc = c->credit;
    cc.data_vls = c->vls;
    cc.max_packet_bytes = c->max_packet;
    return cc;
}

static int refuse(char *msg, size_t msglen, const char *what)
{
    rifl_msg(msg, msglen, "%s", what);
    return RIFL_ERR_CONFIG;
}

/* The checks of the port's own settings. */
static int check_own(const rifl_port_config *c, char *msg, size_t msglen)
{
    if (c->fc != RIFL_PORT_FC_LANE && c->fc != RIFL_PORT_FC_CREDIT)
        return refuse(msg, msglen, "unknown flow control; use RIFL_PORT_FC_LANE or "
                                   "RIFL_PORT_FC_CREDIT");
    if (c->vls < 1 || c->vls > RIFL_FC_MAX_DATA_VLS) {
        rifl_msg(msg, msglen, "%u virtual lanes: use 1 to %u", c->vls, RIFL_FC_MAX_DATA_VLS);
        return RIFL_ERR_CONFIG;
    }
    if (!c->vl_byte && (c->vls > 1 || c->fc == RIFL_PORT_FC_CREDIT))
        return refuse(msg, msglen, "packets need their VL byte with credits or more than one "
                                   "virtual lane; set vl_byte");
    if (c->max_packet < 1 || c->max_packet > 65535) {
        rifl_msg(msg, msglen, "largest packet of %u bytes: use 1 to 65535", c->max_packet);
        return RIFL_ERR_CONFIG;
    }
    if ((uint64_t)c->tx_queue_bytes < (uint64_t)c->max_packet + PKTQ_HDR) {
        rifl_msg(msg, msglen, "a transmit queue of %u bytes per VL cannot hold a packet of "
                 "%u bytes; use at least %u", c->tx_queue_bytes, c->max_packet,
                 c->max_packet + PKTQ_HDR);
        return RIFL_ERR_CONFIG;
    }
    if (c->l2_sources) {
        if (c->max_packet < RIFL_L2_CELL_BYTES) {
            rifl_msg(msg, msglen, "a Layer 2 endpoint sends cells of %u bytes: raise the "
                     "largest packet from %u, or use no endpoint (l2_sources 0)",
                     RIFL_L2_CELL_BYTES, c->max_packet);
            return RIFL_ERR_CONFIG;
        }
        if (c->l2_sources > 65536 || c->l2_max_msg < 1 || c->l2_max_msg > RIFL_L2_MSG_MAX ||
            (uint64_t)c->l2_sources * c->l2_max_msg > (1ull << 30)) {
            rifl_msg(msg, msglen, "a Layer 2 endpoint of %u sources with messages of up to %u "
                     "bytes: use 1 to 65536 sources, messages of 1 to %u bytes, at most 1 GiB "
                     "in all", c->l2_sources, c->l2_max_msg, RIFL_L2_MSG_MAX);
            return RIFL_ERR_CONFIG;
        }
    }
    return RIFL_OK;
}

/* The longest time between two FCPs of one VL on a lane of `frame_bits`,
 * in symbol times (bytes): an FCP goes at the first frame slot after it
 * falls due, past any packet still in the lane, and then waits behind the
 * other VLs' FCPs, one extension frame a slot. */
static uint64_t lane_fcp_gap(uint32_t period, unsigned vls, unsigned frame_bits)
{
    uint64_t fb = frame_bits / 8;
    return ((period + fb - 1) / fb + vls - 1) * fb;
}

uint64_t rifl_port_fcp_worst_gap(const rifl_port_config *c)
{
    if (!c || c->fc != RIFL_PORT_FC_CREDIT || c->lane.frame_bits < 16)
        return 0;
    return lane_fcp_gap(c->credit.fcp_period, c->vls, c->lane.frame_bits);
}

/* Credits on a lane: each FCP takes a frame slot, and the FCPs of one VL
 * must come within 65536 symbol times of each other (the engine checks the
 * period's range itself). */
static int check_lane_fcps(const rifl_port_config *c, const rifl_lane_config *lc, char *msg,
                           size_t msglen)
{
    uint32_t period = c->credit.fcp_period;
    if (c->fc != RIFL_PORT_FC_CREDIT || period < 1 || period > RIFL_FC_FCP_MAX_PERIOD)
        return RIFL_OK;
    unsigned fb = lc->frame_bits / 8;
    if ((uint64_t)period <= (uint64_t)fb * c->vls) {
        rifl_msg(msg, msglen, "FCP period of %u symbol times with %u virtual lanes on %u-bit "
                 "frames: each FCP takes a frame slot (%u symbol times) and theirs would fill "
                 "the lane, no data would go; use a period of at least %u", period, c->vls,
                 lc->frame_bits, fb, fb * c->vls + 1);
        return RIFL_ERR_CONFIG;
    }
    uint64_t gap = lane_fcp_gap(period, c->vls, lc->frame_bits);
    if (gap >= RIFL_FC_FCP_MAX_PERIOD) {
        uint64_t most = ((RIFL_FC_FCP_MAX_PERIOD - 1) / fb - (c->vls - 1)) * fb;
        rifl_msg(msg, msglen, "FCP period of %u symbol times with %u virtual lanes on %u-bit "
                 "frames: an FCP goes at the first frame slot (%u symbol times) after it falls "
                 "due and may wait a slot for each other VL's, so it could come %llu symbol "
                 "times after the last of its VL, and it must come within 65535; lower the FCP "
                 "period to at most %llu", period, c->vls, lc->frame_bits, fb,
                 (unsigned long long)gap, (unsigned long long)most);
        return RIFL_ERR_CONFIG;
    }
    return RIFL_OK;
}

/* What the port needs of its lane (its own, or one given to it). */
static int check_lane(const rifl_port_config *c, const rifl_lane_config *lc, char *msg,
                      size_t msglen)
{
    unsigned vlb = c->vl_byte ? 1 : 0;
    size_t pb = rifl_payload_bytes(lc->frame_bits);
    size_t cap = (size_t)lc->tx_queue_frames * pb;
    if (cap < 2u * (c->max_packet + vlb)) {
        rifl_msg(msg, msglen, "the lane transmit queue (%zu bytes) must hold two of the"
                 " largest packets; raise tx_queue_frames", cap);
        return RIFL_ERR_CONFIG;
    }
    if (c->fc == RIFL_PORT_FC_CREDIT && pb - 1 < RIFL_FC_FCP_BYTES) {
        rifl_msg(msg, msglen, "credit flow control sends each %u-byte FCP in one extension "
                 "frame, which carries at most %zu bytes with %u-bit frames; use frames of "
                 "at least 128 bits", RIFL_FC_FCP_BYTES, pb - 1, lc->frame_bits);
        return RIFL_ERR_CONFIG;
    }
    return check_lane_fcps(c, lc, msg, msglen);
}

int rifl_port_config_check(const rifl_port_config *c, char *msg, size_t msglen)
{
    if (!c)
        return rifl_null_arg(msg, msglen, "rifl_port_config_check", "cfg");
    int rc = check_own(c, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    rifl_lane_config lc = lane_config(c);
    rc = rifl_lane_config_check(&lc, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    rc = check_lane(c, &lc, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    if (c->fc == RIFL_PORT_FC_CREDIT) {
        rifl_credit_config cc = credit_config(c);
        return rifl_credit_config_check(&cc, msg, msglen);
    }
    rifl_vlarb arb;
    rifl_vlarb_config ac = c->arb;
    if (ac.n_high + ac.n_low == 0)
        rifl_vlarb_default_config(&ac, c->vls);
    return rifl_vlarb_init(&arb, &ac, c->vls, msg, msglen);
}

/* ---- life ----------------------------------------------------------------------- */

void rifl_port_free(rifl_port *p)
{
    if (!p)
        return;
    if (p->own_lane)
        rifl_lane_free(p->lane);
    rifl_credit_free(p->credit);
    for (unsigned v = 0; v < RIFL_FC_MAX_DATA_VLS; v++) {
        pktq_free(&p->txq[v]);
        pktq_free(&p->rxq[v]);
    }
    if (p->src)
        for (unsigned i = 0; i < p->cfg.l2_sources; i++)
            free(p->src[i].r.buf);
    free(p->src);
    free(p->cell);
    free(p->scratch);
    free(p->asm_buf);
    free(p);
}

/* Receive queue of one VL: with credits, everything the credit buffer can
 * hold (a packet takes at least one 64-byte chunk, plus its length). */
static size_t rx_queue_bytes(const rifl_port *p, unsigned v)
{
    if (p->cfg.fc != RIFL_PORT_FC_CREDIT)
        return p->cfg.rx_queue_bytes;
    const rifl_credit_config *cc = rifl_credit_get_config(p->credit);
    uint64_t buf = cc->vl_buffer_bytes[v] ? cc->vl_buffer_bytes[v] : cc->rx_buffer_bytes;
    return (size_t)(buf + (buf / 64 + 1) * PKTQ_HDR);
}

static int make_parts(rifl_port *p, char *msg, size_t msglen)
{
    const rifl_port_config *c = &p->cfg;
    int rc = RIFL_OK;
    if (c->fc == RIFL_PORT_FC_CREDIT) {
        rifl_credit_config cc = credit_config(c);
        rc = rifl_credit_create(&cc, &p->credit, msg, msglen);
    } else {
        rifl_vlarb_config ac = c->arb;
        if (ac.n_high + ac.n_low == 0)
            rifl_vlarb_default_config(&ac, c->vls);
        rc = rifl_vlarb_init(&p->arb, &ac, c->vls, msg, msglen);
    }
    if (rc != RIFL_OK)
        return rc;
    for (unsigned v = 0; v < c->vls; v++)
        if (pktq_init(&p->txq[v], c->tx_queue_bytes) || pktq_init(&p->rxq[v], rx_queue_bytes(p, v)))
            return RIFL_ERR_NOMEM;
    p->scratch = malloc(c->max_packet + 1u);
    p->asm_buf = malloc(c->max_packet + 1u);
    if (!p->scratch || !p->asm_buf)
        return RIFL_ERR_NOMEM;
    if (c->l2_sources) {
        p->src = calloc(c->l2_sources, sizeof *p->src);
        p->cell = malloc(RIFL_L2_CELL_BYTES);
        if (!p->src || !p->cell)
            return RIFL_ERR_NOMEM;
        for (unsigned i = 0; i < c->l2_sources; i++) {
            uint8_t *b = malloc(c->l2_max_msg);
            if (!b)
                return RIFL_ERR_NOMEM;
            rifl_l2_reasm_init(&p->src[i].r, b, c->l2_max_msg);
        }
    }
    return RIFL_OK;
}

int rifl_port_create(const rifl_port_config *cfg, rifl_lane *lane, rifl_port **out, char *msg,
                     size_t msglen)
{
    if (!cfg || !out)
        return rifl_null_arg(msg, msglen, "rifl_port_create", cfg ? "out" : "cfg");
    *out = NULL;
    int rc = rifl_port_config_check(cfg, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    rifl_lane_config lc = lane_config(cfg);
    if (lane && rifl_lane_get_config(lane)->fc_mode != lc.fc_mode)
        return refuse(msg, msglen, cfg->fc == RIFL_PORT_FC_CREDIT
                                       ? "a port with credits needs a lane without ON/OFF flow "
                                         "control (fc_mode RIFL_LANE_FC_NONE)"
                                       : "a port with the lane's flow control needs a lane with "
                                         "fc_mode RIFL_LANE_FC_ONOFF");
    if (lane && (rc = check_lane(cfg, rifl_lane_get_config(lane), msg, msglen)) != RIFL_OK)
        return rc;
    rifl_port *p = calloc(1, sizeof *p);
    if (!p)
        return RIFL_ERR_NOMEM;
    p->cfg = *cfg;
    p->lane = lane;
    if (!lane) {
        rc = rifl_lane_create(&lc, &p->lane, msg, msglen);
        p->own_lane = rc == RIFL_OK;
    }
    if (rc == RIFL_OK)
        rc = make_parts(p, msg, msglen);
    if (rc != RIFL_OK) {
        if (rc == RIFL_ERR_NOMEM)
            rifl_msg(msg, msglen, "out of memory for the port's queues");
        rifl_port_free(p);
        return rc;
    }
    const rifl_lane_config *real = rifl_lane_get_config(p->lane);
    p->fb = real->frame_bits / 8;
    p->vlb = cfg->vl_byte ? 1 : 0;
    p->lane_cap = (size_t)real->tx_queue_frames * rifl_payload_bytes(real->frame_bits);
    *out = p;
    return RIFL_OK;
}

rifl_lane *rifl_port_lane(rifl_port *p)
{
    return p ? p->lane : NULL;
}

const rifl_port_config *rifl_port_get_config(const rifl_port *p)
{
    return p ? &p->cfg : NULL;
}

const rifl_credit *rifl_port_credit(const rifl_port *p)
{
    return p ? p->credit : NULL;
}

const rifl_port_stats *rifl_port_get_stats(const rifl_port *p)
{
    return p ? &p->st : NULL;
}

/* ---- sending -------------------------------------------------------------------- */

int rifl_port_send(rifl_port *p, unsigned vl, const void *pkt, size_t len)
{
    if (!p || !pkt || len == 0 || vl >= p->cfg.vls)
        return RIFL_ERR_INVALID_ARG;
    if (len > p->cfg.max_packet)
        return RIFL_ERR_TOO_BIG;
    if (!pktq_fits(&p->txq[vl], len)) {
        p->st.tx_refused++;
        return RIFL_ERR_AGAIN;
    }
    if (p->credit) {
        int rc = rifl_credit_enqueue(p->credit, vl, (uint32_t)len, 0);
        if (rc != RIFL_OK) {
            if (rc == RIFL_ERR_AGAIN)
                p->st.tx_refused++;
            return rc;
        }
    }
    pktq_push(&p->txq[vl], pkt, len);
    return RIFL_OK;
}

unsigned rifl_port_tx_queued(const rifl_port *p, unsigned vl)
{
    return p && vl < p->cfg.vls ? p->txq[vl].count : 0;
}

bool rifl_port_fcp_waiting(const rifl_port *p)
{
    return p && p->fcp_waiting;
}

/* The head packet of `vl` into the lane, behind its VL byte. */
static int put_packet(rifl_port *p, unsigned vl)
{
    struct pktq *q = &p->txq[vl];
    size_t len = pktq_head_len(q);
    p->scratch[0] = (uint8_t)vl;
    pktq_pop(q, p->scratch + p->vlb, len);
    int rc = rifl_lane_send(p->lane, p->scratch, len + p->vlb);
    if (rc == RIFL_OK) {
        p->st.tx_packets[vl]++;
        p->st.tx_bytes[vl] += len;
        p->lane_vl = vl;
        p->lane_blocks = rifl_fc_blocks(len);
        p->lane_counted = true;
    }
    return rc;
}

/* Room in the lane's transmit queue for the next packet.  With credits the
 * queue must be empty (extension frames overtake queued data); with the
 * lane's flow control it takes a largest packet and holds fewer than two. */
static bool lane_has_room(const rifl_port *p)
{
    size_t space = rifl_lane_send_space(p->lane);
    size_t in_queue = p->lane_cap - space;
    if (p->credit)
        return in_queue == 0;
    size_t big = (size_t)p->cfg.max_packet + p->vlb;
    return space >= big && in_queue < 2 * big;
}

/* One FCP to the lane; false when it stays waiting.  `fcp` is the FCP as
 * the engine made it.  While frames of the last packet still wait in the
 * lane's transmit queue, the FCP's extension frame goes before them and
 * reaches the receiver before that packet ends: it then carries the FCTBS
 * from before that packet, which the receiver counts on its arrival. */
static bool hand_fcp(rifl_port *p, const uint8_t *fcp)
{
    uint8_t wire[RIFL_FC_FCP_BYTES];
    memcpy(wire, fcp, sizeof wire);
    rifl_fcp f;
    if (p->lane_counted && rifl_lane_send_space(p->lane) < p->lane_cap &&
        rifl_fcp_decode(fcp, RIFL_FC_FCP_BYTES, &f, NULL) == RIFL_OK && f.vl == p->lane_vl) {
        f.fctbs = rifl_fc_sub(f.fctbs, p->lane_blocks);
        rifl_fcp_encode(&f, wire);
    }
    if (rifl_lane_send_ext(p->lane, RIFL_FCP_EXT_CODE, wire, RIFL_FC_FCP_BYTES) == RIFL_OK) {
        p->st.fcp_tx++;
        return true;
    }
    p->st.fcp_refused++;
    if (p->cfg.fcp_drop_refused) {
        p->st.fcp_dropped++;
        return true;
    }
    if (fcp != p->fcp)
        memcpy(p->fcp, fcp, RIFL_FC_FCP_BYTES);
    p->fcp_waiting = true;
    return false;
}

static void feed_credit(rifl_port *p, uint64_t now)
{
    uint64_t t = now * p->fb;
    unsigned fcps = 0, limit = p->cfg.fcp_per_slot;
    if (p->fcp_waiting) {
        p->fcp_waiting = false;
        if (!hand_fcp(p, p->fcp))
            return;
        fcps++;
    }
    /* FCPs go as they fall due, past a packet still in the lane (its
     * frames would hold them for as long as the packet takes); packets only
     * into an empty lane.  A packet handed over before the engine started
     * again is in no FCTBS it sends now: FCPs wait for it to leave. */
    rifl_credit_item it;
    for (;;) {
        bool room = lane_has_room(p);
        if ((limit && fcps >= limit) || (!room && !p->lane_counted))
            break;
        if ((room ? rifl_credit_poll(p->credit, t, &it)
                  : rifl_credit_poll_fcp(p->credit, t, &it)) != RIFL_OK)
            break;
        if (it.kind == RIFL_CREDIT_ITEM_FCP) {
            fcps++;
            if (!hand_fcp(p, it.fcp))
                return;
        } else if (put_packet(p, it.vl) != RIFL_OK) {
            return; /* cannot happen: the lane's queue was empty */
        }
    }
}

static void feed_lane(rifl_port *p)
{
    while (lane_has_room(p)) {
        uint32_t head[RIFL_FC_NUM_VLS] = { 0 };
        for (unsigned v = 0; v < p->cfg.vls; v++)
            if (p->txq[v].count)
                head[v] = (uint32_t)pktq_head_len(&p->txq[v]);
        int v = rifl_vlarb_pick(&p->arb, head, 0x7FFFu);
        if (v < 0 || put_packet(p, (unsigned)v) != RIFL_OK)
            return;
    }
}

void rifl_port_feed(rifl_port *p, uint64_t now)
{
    if (!p)
        return;
    if (p->credit)
        feed_credit(p, now);
    else
        feed_lane(p);
}

uint64_t rifl_port_next_due(const rifl_port *p, uint64_t now)
{
    if (!p || !p->credit)
        return UINT64_MAX;
    if (p->fcp_waiting)
        return now + 1;
    uint64_t t = rifl_credit_next_due(p->credit, now * p->fb);
    if (t == UINT64_MAX)
        return t;
    uint64_t slot = (t + p->fb - 1) / p->fb;
    return slot > now ? slot : now + 1;
}

/* ---- receiving ------------------------------------------------------------------ */

/* A whole packet in asm_buf: sort it into its VL.  False when it has to
 * stay there (FC_LANE, its VL queue is full). */
static bool place_packet(rifl_port *p)
{
    unsigned vl = 0;
    if (p->vlb) {
        if (p->asm_len < 2 || p->asm_buf[0] >= p->cfg.vls) {
            p->st.rx_bad_vl++;
            p->asm_len = 0;
            return true;
        }
        vl = p->asm_buf[0];
    }
    const uint8_t *data = p->asm_buf + p->vlb;
    size_t len = p->asm_len - p->vlb;
    if (p->credit && rifl_credit_rx_data(p->credit, vl, (uint32_t)len) != RIFL_OK) {
        p->st.rx_credit_drops++;
        p->asm_len = 0;
        return true;
    }
    if (!pktq_fits(&p->rxq[vl], len)) {
        if (p->credit) {
            /* (the queue holds the whole credit buffer: a sender keeping
             * to its credit never gets here) the space taken goes back */
            p->st.rx_queue_full++;
            rifl_credit_rx_release(p->credit, vl, (uint32_t)len, 0);
            p->asm_len = 0;
            return true;
        }
        p->staged = true;
        p->staged_vl = vl;
        return false;
    }
    pktq_push(&p->rxq[vl], data, len);
    p->asm_len = 0;
    return true;
}

static void collect_ext(rifl_port *p, uint64_t now)
{
    uint8_t code, buf[RIFL_PAYLOAD_MAX_BYTES];
    size_t n;
    while (rifl_lane_read_ext(p->lane, &code, buf, sizeof buf, &n) == RIFL_OK) {
        if (p->credit && code == RIFL_FCP_EXT_CODE) {
            p->st.fcp_rx++;
            uint64_t reinits = rifl_credit_get_stats(p->credit)->peer_reinits;
            rifl_credit_rx_fcp(p->credit, buf, n, now * p->fb);
            /* the engine started again: an FCP still waiting carries the
             * registers from before, and a packet still in the lane is in
             * no FCTBS the engine sends from now on */
            if (rifl_credit_get_stats(p->credit)->peer_reinits != reinits) {
                p->fcp_waiting = false;
                p->lane_counted = false;
            }
        } else {
            p->st.ext_other++;
        }
    }
}

void rifl_port_collect(rifl_port *p, uint64_t now)
{
    if (!p)
        return;
    collect_ext(p, now);
    size_t full = (size_t)p->cfg.max_packet + p->vlb;
    for (;;) {
        if (p->staged) {
            if (!pktq_fits(&p->rxq[p->staged_vl], p->asm_len - p->vlb))
                return; /* the lane holds the rest: its flow control acts */
            p->staged = false;
            place_packet(p);
            continue;
        }
        if (p->asm_len == full) {
            p->st.rx_too_long++; /* longer than any packet: drop it, to its end */
            p->asm_len = 0;
            p->discard = true;
        }
        size_t got = 0;
        int eop = 0;
        if (rifl_lane_read(p->lane, p->asm_buf + p->asm_len, full - p->asm_len, &got, &eop) !=
            RIFL_OK)
            return;
        if (p->discard) {
            p->discard = !eop;
            continue;
        }
        p->asm_len += got;
        if (eop && !place_packet(p))
            return;
    }
}

int rifl_port_peek(const rifl_port *p, unsigned vl, size_t *len)
{
    if (!p || !len || vl >= p->cfg.vls)
        return RIFL_ERR_INVALID_ARG;
    if (p->rxq[vl].count) {
        *len = pktq_head_len(&p->rxq[vl]);
        return RIFL_OK;
    }
    if (p->staged && p->staged_vl == vl) {
        *len = p->asm_len - p->vlb;
        return RIFL_OK;
    }
    return RIFL_ERR_AGAIN;
}

int rifl_port_read(rifl_port *p, unsigned vl, uint64_t now, void *buf, size_t cap, size_t *len)
{
    if (!p || !buf || !len)
        return RIFL_ERR_INVALID_ARG;
    size_t n;
    int rc = rifl_port_peek(p, vl, &n);
    if (rc != RIFL_OK)
        return rc;
    if (n > cap)
        return RIFL_ERR_TOO_BIG;
    if (p->rxq[vl].count) {
        pktq_pop(&p->rxq[vl], buf, n);
    } else {
        memcpy(buf, p->asm_buf + p->vlb, n);
        p->staged = false;
        p->asm_len = 0;
    }
    if (p->credit)
        rifl_credit_rx_release(p->credit, vl, (uint32_t)n, now * p->fb);
    p->st.rx_packets[vl]++;
    p->st.rx_bytes[vl] += n;
    *len = n;
    return RIFL_OK;
}

/* ---- one slot with wire bytes ----------------------------------------------------- */

int rifl_port_tx(rifl_port *p, uint64_t now, uint8_t *wire)
{
    if (!p || !wire)
        return RIFL_ERR_INVALID_ARG;
    rifl_port_feed(p, now);
    return rifl_lane_tx(p->lane, now, wire);
}

int rifl_port_rx(rifl_port *p, uint64_t now, const uint8_t *wire, rifl_frame_info *info)
{
    if (!p)
        return RIFL_ERR_INVALID_ARG;
    int r = rifl_lane_rx(p->lane, now, wire, info);
    rifl_port_collect(p, now);
    return r;
}

/* The port's Layer 2 endpoint (docs/layer2.md): messages out as cells, the
 * cells that arrive reassembled per source, a source known by the route
 * back to it. */
#include <string.h>

#include "port_priv.h"

int rifl_port_send_msg(rifl_port *p, unsigned vl, const uint8_t *route, unsigned hops,
                       const void *msg, size_t len)
{
    if (!p || !route || !msg || vl >= p->cfg.vls || len == 0 || len > RIFL_L2_MSG_MAX)
        return RIFL_ERR_INVALID_ARG;
    rifl_l2_hdr h;
    if (rifl_l2_hdr_make(&h, route, hops) != RIFL_OK)
        return RIFL_ERR_INVALID_ARG;
    if (p->cfg.max_packet < RIFL_L2_CELL_BYTES)
        return RIFL_ERR_TOO_BIG;
    size_t cells = rifl_l2_msg_cells(len);
    struct pktq *q = &p->txq[vl];
    uint64_t need = (uint64_t)cells * (RIFL_L2_CELL_BYTES + PKTQ_HDR);
    if (need > q->cap ||
        (p->credit && rifl_credit_get_config(p->credit)->tx_queue_packets < cells))
        return RIFL_ERR_TOO_BIG; /* more than the queues ever hold */
    if (need > q->cap - q->used ||
        (p->credit && rifl_credit_get_config(p->credit)->tx_queue_packets -
                              rifl_credit_queued(p->credit, vl) < cells)) {
        p->st.tx_refused++;
        return RIFL_ERR_AGAIN;
    }
    uint8_t cell[RIFL_L2_CELL_BYTES];
    memcpy(cell, h.b, RIFL_L2_HDR_BYTES);
    for (size_t i = 0; i < cells; i++) {
        rifl_l2_msg_cell(msg, len, i, cell + RIFL_L2_HDR_BYTES);
        if (rifl_port_send(p, vl, cell, sizeof cell) != RIFL_OK)
            return RIFL_ERR_STATE; /* room was checked above */
    }
    p->st.msg_tx++;
    p->st.cells_tx += cells;
    return RIFL_OK;
}

/* The source a cell comes from: the one with its return route, else a
 * free one; NULL when every context is busy with another source. */
static struct l2_source *source_of(rifl_port *p, unsigned vl, const uint8_t *route,
                                   unsigned hops)
{
    struct l2_source *free_src = NULL;
    for (unsigned i = 0; i < p->cfg.l2_sources; i++) {
        struct l2_source *s = &p->src[i];
        if (!s->used) {
            if (!free_src)
                free_src = s;
            continue;
        }
        if (s->vl == vl && s->hops == hops && !memcmp(s->route, route, hops))
            return s;
    }
    if (free_src) {
        free_src->used = true;
        free_src->vl = vl;
        free_src->hops = hops;
        memcpy(free_src->route, route, hops);
    }
    return free_src;
}

/* A source whose message is complete, the one that completed first. */
static struct l2_source *ready_source(rifl_port *p, unsigned vl)
{
    struct l2_source *best = NULL;
    for (unsigned i = 0; i < p->cfg.l2_sources; i++) {
        struct l2_source *s = &p->src[i];
        if (s->used && s->ready && s->vl == vl && (!best || s->last_cell < best->last_cell))
            best = s;
    }
    return best;
}

/* The first bytes of the packet waiting first on `vl` (it has n or more). */
static void head_bytes(const rifl_port *p, unsigned vl, uint8_t *out, size_t n)
{
    const struct pktq *q = &p->rxq[vl];
    if (q->count)
        pktq_read(q, q->head + PKTQ_HDR, out, n);
    else
        memcpy(out, p->asm_buf + p->vlb, n);
}

/* One cell off the VL into its source's reassembly.  RIFL_ERR_AGAIN when
 * no cell waits; RIFL_OK otherwise (the cell may have been dropped, or left
 * waiting because its source holds a complete message not yet read). */
static int take_cell(rifl_port *p, unsigned vl, uint64_t now)
{
    size_t n;
    if (rifl_port_peek(p, vl, &n) != RIFL_OK)
        return RIFL_ERR_AGAIN;
    if (n != RIFL_L2_CELL_BYTES) {
        if (rifl_port_read(p, vl, now, p->scratch, p->cfg.max_packet, &n) == RIFL_OK)
            p->st.cell_bad_len++;
        return RIFL_OK;
    }
    rifl_l2_hdr h;
    head_bytes(p, vl, h.b, RIFL_L2_HDR_BYTES);
    uint8_t route[RIFL_L2_MAX_HOPS];
    unsigned hops = 0;
    int bad = rifl_l2_remain_hops(&h) != 0 ? 1
              : rifl_l2_reverse_route(&h, route, &hops) != RIFL_OK ? 2 : 0;
    struct l2_source *s = bad ? NULL : source_of(p, vl, route, hops);
    if (s && s->ready)
        return RIFL_OK; /* its message is read first */
    rifl_port_read(p, vl, now, p->cell, RIFL_L2_CELL_BYTES, &n);
    p->st.cells_rx++;
    if (bad == 1)
        p->st.cell_misrouted++;
    else if (bad == 2)
        p->st.cell_bad_route++;
    else if (!s)
        p->st.cell_no_context++;
    if (!s)
        return RIFL_OK;
    size_t len;
    int rc = rifl_l2_reasm_push(&s->r, p->cell + RIFL_L2_HDR_BYTES, &len);
    s->last_cell = ++p->cells_seen;
    if (rc == 1) {
        s->ready = true;
        s->ready_len = len;
    } else if (rc == RIFL_ERR_TOO_BIG) {
        p->st.msg_too_big++;
    } else if (rc == RIFL_ERR_FRAME) {
        p->st.msg_reserved++;
    }
    if (!s->ready && !s->r.in_msg)
        s->used = false; /* nothing of this source is held: free the context */
    return RIFL_OK;
}

int rifl_port_read_msg(rifl_port *p, unsigned vl, uint64_t now, void *buf, size_t cap,
                       size_t *len, unsigned *proto, uint8_t route[RIFL_L2_MAX_HOPS],
                       unsigned *hops)
{
    if (!p || !buf || !len || vl >= p->cfg.vls)
        return RIFL_ERR_INVALID_ARG;
    if (!p->src)
        return RIFL_ERR_STATE;
    struct l2_source *s = ready_source(p, vl);
    while (!s) {
        if (take_cell(p, vl, now) != RIFL_OK)
            return RIFL_ERR_AGAIN;
        s = ready_source(p, vl);
    }
    /* an RDMA bundle whole, its prefix first, as rifl_rdma_input takes it */
    size_t pre = s->r.proto == RIFL_L2_PROTO_RDMA ? RIFL_L2_MSG_PREFIX_BYTES : 0;
    if (s->ready_len + pre > cap)
        return RIFL_ERR_TOO_BIG;
    uint8_t *out = buf;
    if (pre) {
        out[0] = RIFL_L2_PROTO_RDMA;
        out[1] = (uint8_t)s->r.count;
        out[2] = (uint8_t)(s->ready_len >> 8);
        out[3] = (uint8_t)s->ready_len;
    }
    memcpy(out + pre, s->r.buf, s->ready_len);
    *len = s->ready_len + pre;
    if (proto)
        *proto = s->r.proto;
    if (route)
        memcpy(route, s->route, s->hops);
    if (hops)
        *hops = s->hops;
    s->ready = false;
    if (!s->r.in_msg)
        s->used = false;
    p->st.msg_rx++;
    return RIFL_OK;
}

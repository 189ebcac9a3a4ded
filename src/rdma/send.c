/* The send unit: the round-robin scheduler over active transactions, the
 * packetizer (one packet a visit, cut at 256-byte destination boundaries,
 * source bytes read from registered memory), and the Layer 2 adapter that
 * stages packets per route and hands out bundles. */
#include <string.h>

#include "rdma_priv.h"

void rdma_sched_push(rifl_rdma *e, unsigned tid)
{
    struct block *b = &e->blocks[tid];
    if (b->in_sched)
        return;
    b->in_sched = true;
    e->sched[(e->sh + e->sn++) % TIDS] = (uint16_t)tid;
}

/* ---- the adapter's stages ---------------------------------------------------------------- */

static void list_route(rifl_rdma *e, unsigned slot, unsigned route)
{
    struct route_q *q = &e->nodes[slot].q[route];
    if (q->listed)
        return;
    q->listed = true;
    e->active[(e->ah + e->an++) % e->active_cap] = slot << 5 | route;
}

/* Build a packet into the pool; its index, or -1 (cannot happen for the
 * engine's own fields: they are checked before). */
static int pool_build(rifl_rdma *e, const rifl_rdma_hdr *h, const rifl_rdma_ftr *f,
                      const uint8_t *payload)
{
    unsigned i = e->pool_free[--e->pool_nfree];
    size_t len;
    int rc = e->cfg.mapping == RIFL_RDMA_MAP_COMPACT
                 ? rifl_rdma_compact_build(h, f, payload, e->pool[i], RIFL_RDMA_MAX_PACKET, &len)
                 : rifl_rdma_packet_build(h, f, payload, e->pool[i], RIFL_RDMA_MAX_PACKET, &len);
    if (rc != RIFL_OK) {
        e->pool_nfree++;
        return -1;
    }
    e->pool_len[i] = (uint16_t)len;
    return (int)i;
}

static bool stage(rifl_rdma *e, unsigned slot, unsigned route, bool prio, const rifl_rdma_hdr *h,
                  const rifl_rdma_ftr *f, const uint8_t *payload)
{
    struct route_q *q = &e->nodes[slot].q[route];
    /* (data leaves the pool's last packets to responses, which go first) */
    if (!e->pool_nfree || (!prio && e->pool_nfree <= POOL_PRIO_RESERVE) ||
        (prio ? q->pn == PRIO_SLOTS : q->dn == e->cfg.stage_packets))
        return false;
    int i = pool_build(e, h, f, payload);
    if (i < 0)
        return false;
    if (prio)
        q->prio[(q->ph + q->pn++) % PRIO_SLOTS] = (uint16_t)i;
    else
        q->data[(q->dh + q->dn++) % e->cfg.stage_packets] = (uint16_t)i;
    e->staged++;
    list_route(e, slot, route);
    return true;
}

bool rdma_stage_response(rifl_rdma *e, rifl_rdma_route to, const rifl_rdma_hdr *h,
                         const rifl_rdma_ftr *f)
{
    int slot = rdma_node_slot(e, to.node);
    if (slot < 0 || !stage(e, (unsigned)slot, to.route % e->nodes[slot].routes, true, h, f, NULL)) {
        e->st.responses_dropped++;
        return false;
    }
    return true;
}

unsigned rifl_rdma_staged(const rifl_rdma *e) { return e ? e->staged : 0; }

/* ---- the packetizer ------------------------------------------------------------------------ */

enum cut_result { CUT_NO_ROOM, CUT_MORE, CUT_DONE };

static enum cut_result cut(rifl_rdma *e, unsigned tid, uint64_t now)
{
    struct block *b = &e->blocks[tid];
    struct xfer *t = &e->xf[b->xf];
    struct node *n = &e->nodes[b->node_ix];
    unsigned route = b->path % n->routes;
    rifl_rdma_hdr h = { .pdid = t->pdid, .dst_node = b->dst_node, .path = b->path };
    rifl_rdma_ftr f = { .src_node = e->cfg.node, .tid = tid, .gen = b->gen,
                        .attempt = b->attempt, .notify = b->send_notify };
    if (b->went_whole && now - b->whole_at > e->life_ns) { /* past its longest life */
        rdma_block_expire(e, tid, now);
        return CUT_DONE;
    }
    if (b->off == b->len) { /* only the NOTIFY is left */
        if (!rdma_notify_ready(e, tid)) {
            b->state = B_HOLD;
            return CUT_DONE;
        }
        uint8_t pl[RIFL_RDMA_NOTIFY_BYTES];
        rifl_rdma_notify_pack(&t->nt, pl);
        h.type = RIFL_RDMA_NOTIFY;
        h.dst_va = b->dst_va;
        h.length = RIFL_RDMA_NOTIFY_BYTES;
        if (!stage(e, (unsigned)b->node_ix, route, true, &h, &f, pl))
            return CUT_NO_ROOM;
        b->notify_sent = true;
        e->st.tx_packets++;
        rdma_block_sent(e, tid, now);
        return CUT_DONE;
    }
    uint64_t dst = b->dst_va + b->off;
    unsigned len;
    const uint8_t *src;
    if (b->inline_data) {
        len = b->len;
        src = t->inline_payload;
    } else {
        /* to the next 256 bytes of the destination; with cells to 224 bytes
         * or the page's end */
        unsigned room = RIFL_RDMA_MAX_PAYLOAD - (unsigned)(dst % RIFL_RDMA_MAX_PAYLOAD);
        if (e->cfg.mapping == RIFL_RDMA_MAP_CELL) {
            room = RIFL_RDMA_PAGE - (unsigned)(dst % RIFL_RDMA_PAGE);
            if (room > RIFL_RDMA_CELL_PAYLOAD)
                room = RIFL_RDMA_CELL_PAYLOAD;
        }
        len = b->len - b->off < room ? b->len - b->off : room;
        uint64_t sva = b->src_va + b->off, page;
        const struct region *r = &e->regions[t->src_region];
        if (!rdma_resident(e, t->src_region, sva, len, &page)) {
            /* the packet is not sent; the block waits for the page */
            rdma_raise_fault(e, t->src_region, page);
            b->state = B_PAGE;
            b->wait_page = page;
            e->st.src_page_faults++;
            return CUT_DONE;
        }
        src = r->mem + (sva - r->va);
        f.pkt_index = e->cfg.mapping == RIFL_RDMA_MAP_CELL ? b->pkt_n : (unsigned)(dst >> 8) & 63u;
    }
    h.type = b->type;
    h.dst_va = dst;
    h.length = len;
    f.first = b->off == 0;
    f.last = b->off + len == b->len;
    if (!stage(e, (unsigned)b->node_ix, route, false, &h, &f, src))
        return CUT_NO_ROOM;
    e->st.tx_packets++;
    b->off += len;
    b->pkt_n++;
    if (b->off < b->len)
        return CUT_MORE;
    rdma_chain_done(e, tid); /* the next block of its chain may go */
    if (b->send_notify && !b->notify_sent) {
        if (rdma_notify_ready(e, tid))
            return CUT_MORE; /* the NOTIFY on the next visit */
        b->state = B_HOLD;
        return CUT_DONE;
    }
    rdma_block_sent(e, tid, now);
    return CUT_DONE;
}

/* Visit the active transactions round robin, one packet each, until a
 * pass places nothing. */
static void schedule(rifl_rdma *e, uint64_t now)
{
    for (;;) {
        unsigned placed = 0, n = e->sn;
        for (unsigned i = 0; i < n && e->sn; i++) {
            unsigned tid = e->sched[e->sh];
            e->sh = (e->sh + 1) % TIDS;
            e->sn--;
            struct block *b = &e->blocks[tid];
            b->in_sched = false;
            if (b->state != B_ACTIVE)
                continue;
            enum cut_result r = cut(e, tid, now);
            if (r == CUT_NO_ROOM) {
                e->st.scheduler_reenqueues++;
                rdma_sched_push(e, tid);
            } else {
                placed++;
                if (r == CUT_MORE && b->state == B_ACTIVE)
                    rdma_sched_push(e, tid);
            }
        }
        if (!placed)
            return;
    }
}

/* ---- bundles out ----------------------------------------------------------------------------- */

/* The packet at the head of a route's queues (responses and notifications
 * first): its pool index. */
static unsigned head_of(const struct route_q *q, bool *prio)
{
    *prio = q->pn != 0;
    return *prio ? q->prio[q->ph] : q->data[q->dh];
}

/* Take the head packet off its queue and give its buffer back. */
static void pop_head(rifl_rdma *e, struct route_q *q, bool prio, unsigned i)
{
    if (prio) {
        q->ph = (q->ph + 1) % PRIO_SLOTS;
        q->pn--;
    } else {
        q->dh = (q->dh + 1) % e->cfg.stage_packets;
        q->dn--;
    }
    e->pool_free[e->pool_nfree++] = (uint16_t)i;
    e->staged--;
}

/* Drop every packet staged for node slot `slot` (its engine restarted:
 * they were for the old one, responses included). */
void rdma_unstage_node(rifl_rdma *e, unsigned slot)
{
    struct node *n = &e->nodes[slot];
    for (unsigned r = 0; r < n->routes; r++) {
        struct route_q *q = &n->q[r];
        while (q->pn || q->dn) {
            bool prio;
            unsigned i = head_of(q, &prio);
            pop_head(e, q, prio, i);
            e->st.restart_dropped++;
        }
    }
}

static size_t bundle_from(rifl_rdma *e, struct route_q *q, uint8_t *buf, size_t cap)
{
    bool prio;
    size_t len = 0;
    if (e->cfg.mapping == RIFL_RDMA_MAP_CELL) { /* a packet alone, no prefix */
        unsigned i = head_of(q, &prio);
        len = e->pool_len[i];
        memcpy(buf, e->pool[i], len);
        pop_head(e, q, prio, i);
    } else {
        rifl_rdma_bundle bb;
        rifl_rdma_bundle_init(&bb, buf, cap);
        bb.compact = e->cfg.mapping == RIFL_RDMA_MAP_COMPACT;
        while (bb.count < e->cfg.bundle_packets && (q->pn || q->dn)) {
            unsigned i = head_of(q, &prio);
            if (rifl_rdma_bundle_add(&bb, e->pool[i], e->pool_len[i]) != RIFL_OK)
                break;
            pop_head(e, q, prio, i);
        }
        if (rifl_rdma_bundle_finish(&bb, &len) != RIFL_OK)
            return 0;
    }
    e->st.bundles_tx++;
    e->st.tx_bytes += len;
    e->st.cells_tx += (len + 255) / 256;
    return len;
}

/* What both outputs do first: check the caller's buffer, then serve read
 * requests, issue blocks and cut packets; false when nothing may go. */
static bool output_prepare(rifl_rdma *e, uint64_t now, const uint8_t *buf, size_t cap,
                           const rifl_rdma_route *to)
{
    if (!e || !buf || !to || cap < RIFL_RDMA_BUNDLE_PREFIX + (size_t)e->cfg.bundle_packets *
                                        RIFL_RDMA_MAX_PACKET)
        return false;
    rdma_serve_requests(e, now);
    rdma_issue(e, now);
    schedule(e, now);
    return true;
}

size_t rifl_rdma_output(rifl_rdma *e, uint64_t now, bool idle, uint8_t *buf, size_t cap,
                        rifl_rdma_route *to)
{
    if (!output_prepare(e, now, buf, cap, to))
        return 0;
    for (unsigned k = e->an; k; k--) {
        uint32_t id = e->active[e->ah];
        e->ah = (e->ah + 1) % e->active_cap;
        e->an--;
        unsigned slot = id >> 5, route = id & 31u;
        struct route_q *q = &e->nodes[slot].q[route];
        unsigned have = q->pn + q->dn;
        if (!have) {
            q->listed = false;
            continue;
        }
        e->active[(e->ah + e->an++) % e->active_cap] = id; /* to the back */
        if (have < e->cfg.bundle_packets && !idle)
            continue;
        size_t len = bundle_from(e, q, buf, cap);
        if (!q->pn && !q->dn) {
            q->listed = false;
            e->an--; /* it was put at the back just now */
        }
        *to = (rifl_rdma_route){ e->nodes[slot].node, route };
        return len;
    }
    return 0;
}

size_t rifl_rdma_output_to(rifl_rdma *e, uint64_t now, uint32_t node, bool idle, uint8_t *buf,
                           size_t cap, rifl_rdma_route *to)
{
    int slot = e ? rdma_node_slot(e, node) : -1;
    if (slot < 0 || !output_prepare(e, now, buf, cap, to))
        return 0;
    struct node *n = &e->nodes[slot];
    for (unsigned k = 0; k < n->routes; k++) {
        unsigned route = (n->next_route + k) % n->routes;
        struct route_q *q = &n->q[route];
        unsigned have = q->pn + q->dn;
        if (!have || (have < e->cfg.bundle_packets && !idle))
            continue;
        n->next_route = (route + 1) % n->routes;
        *to = (rifl_rdma_route){ node, route };
        return bundle_from(e, q, buf, cap);
    }
    return 0;
}

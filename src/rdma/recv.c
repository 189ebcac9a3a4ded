/* The receiver: bundles walked packet by packet, each packet checked in
 * the order of docs/rdma.md (check codes, decode, context, payload CRC,
 * protection, residency) before a byte is written; 256 contexts, 16-way
 * set associative, with a 64-bit block bitmap each; one ACK per completed
 * block and one NACK per failed attempt. */
#include <string.h>

#include "rifl/l2.h"
#include "rdma_priv.h"

struct rx {
    rifl_rdma *e;
    uint64_t now;
    rifl_rdma_route from;
    const rifl_rdma_packet *p;
    int slot;            /* a data packet's source in the route table, -1 none */
};

static void respond(struct rx *x, unsigned status)
{
    rifl_rdma *e = x->e;
    const rifl_rdma_packet *p = x->p;
    rifl_rdma_hdr h = { .type = RIFL_RDMA_RESP, .pdid = p->hdr.pdid, .dst_node = p->ftr.src_node,
                        .dst_va = RIFL_RDMA_PERIPHERAL(0), .length = 0, .path = p->hdr.path };
    rifl_rdma_ftr f = { .src_node = e->cfg.node, .tid = p->ftr.tid, .gen = p->ftr.gen,
                        .attempt = p->ftr.attempt, .status = status };
    if (!rdma_stage_response(e, x->from, &h, &f))
        return;
    e->st.tx_packets++;
    if (status == RIFL_RDMA_ACK)
        e->st.acks_tx++;
    else
        e->st.nacks_tx[status]++;
}

/* A NACK where no context holds the attempt's failed mark: once per
 * attempt of a (source, TID), remembered per set; the attempt's other
 * packets are dropped unanswered. */
static void nack_once(struct rx *x, unsigned status)
{
    const rifl_rdma_ftr *f = &x->p->ftr;
    struct nack_memo *m = &x->e->nacked[(f->tid ^ f->src_node) % CTX_SETS];
    if (m->valid && m->src == f->src_node && m->tid == f->tid && m->gen == f->gen &&
        m->attempt == f->attempt) {
        x->e->st.nacks_coalesced++;
        return;
    }
    *m = (struct nack_memo){ true, (uint8_t)f->attempt, (uint16_t)f->tid, (uint16_t)f->gen,
                             f->src_node };
    respond(x, status);
}

static bool is_peripheral(uint64_t va) { return (va >> 39) == 7u; }
static unsigned peripheral_index(uint64_t va) { return (unsigned)(va >> 32) & 127u; }

/* Step 2: fields that agree with each other and with this node. */
static bool decode_ok(const rifl_rdma *e, const rifl_rdma_packet *p)
{
    const rifl_rdma_hdr *h = &p->hdr;
    const rifl_rdma_ftr *f = &p->ftr;
    if (h->dst_node != e->cfg.node)
        return false;
    uint64_t va = h->dst_va;
    if (e->cfg.mapping == RIFL_RDMA_MAP_CELL && h->length > RIFL_RDMA_CELL_PAYLOAD)
        return false; /* a packet must fit its cell */
    switch (h->type) {
    case RIFL_RDMA_WRITE:
        if (is_peripheral(va)) {
            unsigned i = peripheral_index(va);
            return (va & 0xFFFFFFFFu) == 0 && i >= RIFL_RDMA_MAILBOX_FIRST && f->first &&
                   f->last && f->pkt_index == 0 && !f->notify;
        }
        /* with the cell mapping pkt_index counts the block's packets */
        return (va % RIFL_RDMA_PAGE) + h->length <= RIFL_RDMA_PAGE &&
               (e->cfg.mapping == RIFL_RDMA_MAP_CELL || f->pkt_index == ((va >> 8) & 63u));
    case RIFL_RDMA_READ_REQ:
        return va == RIFL_RDMA_PERIPHERAL(0) && f->first && f->last && f->pkt_index == 0 &&
               !f->notify;
    case RIFL_RDMA_NOTIFY:
        return f->notify && !f->first && !f->last && f->pkt_index == 0;
    default:
        return false;
    }
}

/* The source's `done` entry for the packet's TID, whatever it holds; NULL
 * for a source outside the route table (it could not be answered anyway). */
static uint16_t *seen_entry(const struct rx *x)
{
    return x->slot < 0 ? NULL : &x->e->nodes[x->slot].done[x->p->ftr.tid & (TIDS - 1)];
}

/* That entry while it holds: a block remembered, a packet of which came
 * within block_memory_ns ("Forgetting" in rdma_priv.h); else NULL. */
static uint16_t *remembered(const struct rx *x)
{
    uint16_t *v = seen_entry(x);
    if (!v || !(*v & DONE_VALID))
        return NULL;
    uint64_t at = x->e->nodes[x->slot].done_at[x->p->ftr.tid & (TIDS - 1)];
    return x->now - at <= x->e->memory_ns ? v : NULL;
}

/* Whether entry `v` refuses packet `f` as a new block: `f` is of an older
 * block, or of v's own block completed here. */
static bool refuses(uint16_t v, const rifl_rdma_ftr *f)
{
    return ((v & DONE_COMPLETE) && DONE_GEN(v) == f->gen) ||
           rifl_rdma_gen_newer(DONE_GEN(v), f->gen);
}

/* A packet of the remembered block came: the memory of it lasts from now. */
static void refresh(const struct rx *x)
{
    const uint16_t *v = remembered(x);
    if (v && DONE_GEN(*v) == x->p->ftr.gen)
        x->e->nodes[x->slot].done_at[x->p->ftr.tid & (TIDS - 1)] = x->now;
}

/* The entry now names the packet's block, as `v`. */
static void remember(const struct rx *x, uint16_t v)
{
    if (x->slot < 0)
        return;
    unsigned tid = x->p->ftr.tid & (TIDS - 1);
    x->e->nodes[x->slot].done[tid] = v;
    x->e->nodes[x->slot].done_at[tid] = x->now;
}

/* The `done` entry of the packet's block, when that block completed here
 * (its ACK may have been lost, or an earlier attempt held up on its way),
 * whatever the attempt: the context that knew may have gone to another
 * block since.  NULL for a block not completed here. */
static uint16_t *completed_before(const struct rx *x)
{
    uint16_t *v = remembered(x);
    return v && (*v & DONE_COMPLETE) && DONE_GEN(*v) == x->p->ftr.gen ? v : NULL;
}

/* The packet is of a block older than the last one of its TID begun here
 * (one on its way since before the sender let its TID go): stale. */
static bool older_than_seen(const struct rx *x)
{
    const uint16_t *v = remembered(x);
    return v && rifl_rdma_gen_newer(DONE_GEN(*v), x->p->ftr.gen);
}

/* The completed block of the packet is ACKed for its attempt: its `done`
 * entry keeps the latest attempt ACKed, so that it is ACKed once. */
static void remember_ack(const struct rx *x)
{
    const rifl_rdma_ftr *f = &x->p->ftr;
    uint16_t *v = completed_before(x);
    if (v && f->attempt > DONE_ATTEMPT(*v))
        remember(x, DONE_ENTRY(f->gen, f->attempt));
}

/* Way `c` (NULL: none to take) starts holding the packet's (src, tid,
 * gen): a new block, returned, which the `done` entry now names; a packet
 * of a block completed here before, which `c` holds as done, ACKed once
 * per new attempt and dropped (NULL), never delivered again; or a packet
 * of an older block, dropped (NULL) and `c` left as it was. */
static struct ctx *start(struct rx *x, struct ctx *c)
{
    rifl_rdma *e = x->e;
    const rifl_rdma_ftr *f = &x->p->ftr;
    if (older_than_seen(x)) {
        e->st.stale_dropped++;
        return NULL;
    }
    uint16_t *v = completed_before(x);
    unsigned acked = v ? DONE_ATTEMPT(*v) : 0;
    bool again = v && f->attempt > acked; /* a new attempt: its ACK was lost */
    if (c)
        *c = (struct ctx){ .state = v ? C_DONE : C_ACTIVE, .src = f->src_node,
                           .tid = (uint16_t)f->tid, .gen = (uint16_t)f->gen,
                           .attempt = (uint8_t)f->attempt,
                           .acked_attempt = !v ? -1 : again ? (int16_t)f->attempt
                                                            : (int16_t)acked,
                           .first = -1, .last = -1, .last_time = x->now, .done_time = x->now };
    if (!v) {
        if (c) { /* older blocks of the TID are stale from now on */
            const uint16_t *s = seen_entry(x);
            if (s && (*s & DONE_VALID) && refuses(*s, f)) /* (held no longer) */
                e->st.memory_expired++;
            remember(x, DONE_BEGUN(f->gen));
        }
        return c;
    }
    e->st.duplicates_dropped++;
    e->st.duplicates_remembered++;
    refresh(x);
    if (again) {
        *v = DONE_ENTRY(f->gen, f->attempt);
        respond(x, RIFL_RDMA_ACK);
    }
    return NULL;
}

/* Step 3: the context of (src, tid), or a new one; NULL when the packet
 * is dropped here (duplicate, stale) or has no context (NACKed). */
static struct ctx *lookup(struct rx *x)
{
    rifl_rdma *e = x->e;
    const rifl_rdma_ftr *f = &x->p->ftr;
    unsigned set = (f->tid ^ f->src_node) % CTX_SETS;
    struct ctx *way = &e->ctx[set * CTX_WAYS];
    for (unsigned w = 0; w < CTX_WAYS; w++) {
        struct ctx *c = &way[w];
        if (c->state == C_FREE || c->src != f->src_node || c->tid != f->tid)
            continue;
        /* idle: an ACTIVE context whose block stopped coming, or any context
         * whose block is no longer remembered ("Forgetting", rdma_priv.h) */
        uint64_t age = x->now - c->last_time;
        bool idle = (c->state == C_ACTIVE && age >= e->cfg.context_idle_ns) ||
                    age > e->memory_ns;
        if (c->gen == f->gen && !idle) {
            refresh(x);
            if (c->state == C_DONE) {
                c->last_time = x->now; /* (remembered from now) */
                e->st.duplicates_dropped++;
                if ((int)f->attempt > c->acked_attempt) { /* the ACK was lost */
                    c->acked_attempt = (int16_t)f->attempt;
                    remember_ack(x);
                    respond(x, RIFL_RDMA_ACK);
                }
                return NULL;
            }
            if (f->attempt < c->attempt) {
                e->st.stale_dropped++;
                return NULL;
            }
            if (f->attempt > c->attempt) { /* a retry: start the block over */
                if (completed_before(x)) /* (this context began after it completed) */
                    return start(x, c);
                c->attempt = (uint8_t)f->attempt;
                c->bitmap = 0;
                c->first = c->last = -1;
                c->have_notify = c->failed = false;
            }
            c->last_time = x->now;
            return c;
        }
        if (idle || rifl_rdma_gen_newer(f->gen, c->gen)) /* afresh */
            return start(x, c);
        e->st.stale_dropped++;
        return NULL;
    }
    /* a miss: a free way (or one idle too long), else the way done longest ago */
    struct ctx *take = NULL;
    for (unsigned w = 0; w < CTX_WAYS && !take; w++)
        if (way[w].state == C_FREE ||
            (way[w].state == C_ACTIVE && x->now - way[w].last_time >= e->cfg.context_idle_ns))
            take = &way[w];
    for (unsigned w = 0; w < CTX_WAYS && !take; w++)
        if (way[w].state == C_DONE) {
            take = &way[w];
            for (unsigned v = w + 1; v < CTX_WAYS; v++)
                if (way[v].state == C_DONE && way[v].done_time < take->done_time)
                    take = &way[v];
        }
    if (!take) {
        if (completed_before(x) || older_than_seen(x))
            return start(x, NULL); /* dropped (and ACKed) all the same */
        nack_once(x, RIFL_RDMA_NACK_NO_CONTEXT);
        return NULL;
    }
    /* a context holds the TID's attempts from now on */
    struct nack_memo *m = &e->nacked[set];
    if (m->valid && m->src == f->src_node && m->tid == f->tid)
        m->valid = false;
    return start(x, take);
}

static void fail(struct rx *x, struct ctx *c, unsigned status)
{
    c->failed = true;
    if (status == RIFL_RDMA_NACK_PROTECTION)
        x->e->st.protection_violations++;
    respond(x, status);
}

/* Where a notification record goes: memory (a region index, >= 0), the
 * completion mailbox (-2) or a user mailbox (-3, *mb set); -1 refused. */
static int record_target(rifl_rdma *e, uint16_t pdid, uint64_t target, struct mailbox **mb)
{
    if (rifl_rdma_gva_node(target) != e->cfg.node)
        return -1;
    uint64_t va = rifl_rdma_gva_va(target);
    if (is_peripheral(va)) {
        unsigned i = peripheral_index(va);
        if ((va & 0xFFFFFFFFu) != 0)
            return -1;
        if (i == 1)
            return rdma_pd(e, pdid) ? -2 : -1;
        *mb = i >= RIFL_RDMA_MAILBOX_FIRST ? rdma_mailbox(e, pdid, i) : NULL;
        return *mb ? -3 : -1;
    }
    return rdma_region_find(e, pdid, va, RIFL_RDMA_RECORD_BYTES, RIFL_RDMA_REMOTE_WRITE);
}

static void complete_block(struct rx *x, struct ctx *c)
{
    rifl_rdma *e = x->e;
    if (c->wants_notify) {
        rifl_rdma_notify n;
        rifl_rdma_notify_unpack(c->notify, &n);
        uint8_t rec[RIFL_RDMA_RECORD_BYTES];
        rifl_rdma_record_pack(n.cookie, n.transfer_length, n.immediate, c->src, c->pdid, c->tid,
                              rec);
        struct mailbox *mb = NULL;
        int where = record_target(e, c->pdid, n.target, &mb);
        if (where == -3 && !rdma_mailbox_put(mb, rec, sizeof rec, c->src)) {
            fail(x, c, RIFL_RDMA_NACK_NO_CONTEXT); /* filled up since the NOTIFY came */
            return;
        }
        if (where >= 0) {
            const struct region *r = &e->regions[where];
            memcpy(r->mem + (rifl_rdma_gva_va(n.target) - r->va), rec, sizeof rec);
        } else if (where == -2) {
            rdma_read_record(e, c->src, c->pdid, rec, x->now);
        } else if (where == -3) {
            e->st.mailbox_messages++;
        }
        e->st.notifications_written++;
    }
    c->state = C_DONE;
    c->done_time = x->now;
    c->acked_attempt = (int16_t)x->p->ftr.attempt;
    remember(x, DONE_ENTRY(c->gen, c->attempt)); /* remembered past the context */
    respond(x, RIFL_RDMA_ACK);
}

static void data_packet(struct rx *x, rifl_rdma_check check)
{
    rifl_rdma *e = x->e;
    const rifl_rdma_packet *p = x->p;
    const rifl_rdma_hdr *h = &p->hdr;
    const rifl_rdma_ftr *f = &p->ftr;
    /* 2: decode */
    if (check == RIFL_RDMA_PKT_BAD_LENGTH || !decode_ok(e, p)) {
        nack_once(x, RIFL_RDMA_NACK_DECODE);
        return;
    }
    /* 3: context */
    struct ctx *c = lookup(x);
    if (!c)
        return;
    if (c->failed || (h->type != RIFL_RDMA_NOTIFY && (c->bitmap >> f->pkt_index & 1u)) ||
        (h->type == RIFL_RDMA_NOTIFY && c->have_notify)) {
        e->st.duplicates_dropped++;
        return;
    }
    c->pdid = h->pdid;
    /* 4: payload */
    if (check == RIFL_RDMA_PKT_BAD_PAYLOAD) {
        fail(x, c, RIFL_RDMA_NACK_CRC);
        return;
    }
    /* 5: protection, and 6: residency and room; nothing written before */
    uint64_t page;
    if (h->type == RIFL_RDMA_WRITE && is_peripheral(h->dst_va)) {
        struct mailbox *mb = rdma_mailbox(e, h->pdid, peripheral_index(h->dst_va));
        if (!mb) {
            fail(x, c, RIFL_RDMA_NACK_PROTECTION);
            return;
        }
        if (!rdma_mailbox_put(mb, p->payload, h->length, f->src_node)) {
            fail(x, c, RIFL_RDMA_NACK_NO_CONTEXT);
            return;
        }
        e->st.mailbox_messages++;
    } else if (h->type == RIFL_RDMA_WRITE) {
        int r = rdma_region_find(e, h->pdid, h->dst_va, h->length, RIFL_RDMA_REMOTE_WRITE);
        if (r < 0) {
            fail(x, c, RIFL_RDMA_NACK_PROTECTION);
            return;
        }
        if (!rdma_resident(e, r, h->dst_va, h->length, &page)) {
            e->st.dst_page_faults++;
            rdma_raise_fault(e, r, page);
            fail(x, c, RIFL_RDMA_NACK_PAGE_FAULT);
            return;
        }
        const struct region *g = &e->regions[r];
        memcpy(g->mem + (h->dst_va - g->va), p->payload, h->length);
    } else if (h->type == RIFL_RDMA_READ_REQ) {
        rifl_rdma_read_req rq;
        rifl_rdma_read_req_unpack(p->payload, &rq);
        if (rq.length == 0 || rifl_rdma_gva_node(rq.dst) != f->src_node ||
            rdma_region_find(e, h->pdid, rq.src_va, rq.length, RIFL_RDMA_REMOTE_READ) < 0) {
            fail(x, c, RIFL_RDMA_NACK_PROTECTION);
            return;
        }
        if (e->rn == e->cfg.req_fifo) {
            fail(x, c, RIFL_RDMA_NACK_NO_CONTEXT);
            return;
        }
        e->req[(e->rh + e->rn++) % e->cfg.req_fifo] =
            (struct read_req){ rq, h->pdid, h->path, f->src_node };
    } else { /* NOTIFY */
        rifl_rdma_notify n;
        struct mailbox *mb = NULL;
        int where = rifl_rdma_notify_unpack(p->payload, &n) == RIFL_OK
                        ? record_target(e, h->pdid, n.target, &mb)
                        : -1;
        if (where == -1) {
            fail(x, c, RIFL_RDMA_NACK_PROTECTION);
            return;
        }
        if (where >= 0 &&
            !rdma_resident(e, where, rifl_rdma_gva_va(n.target), RIFL_RDMA_RECORD_BYTES, &page)) {
            e->st.dst_page_faults++;
            rdma_raise_fault(e, where, page);
            fail(x, c, RIFL_RDMA_NACK_PAGE_FAULT);
            return;
        }
        if (where == -3 && mb->count == mb->depth) {
            fail(x, c, RIFL_RDMA_NACK_NO_CONTEXT);
            return;
        }
        memcpy(c->notify, p->payload, RIFL_RDMA_NOTIFY_BYTES);
        c->have_notify = true;
    }
    if (h->type != RIFL_RDMA_NOTIFY) {
        c->bitmap |= 1ull << f->pkt_index;
        if (f->first)
            c->first = (int16_t)f->pkt_index;
        if (f->last)
            c->last = (int16_t)f->pkt_index;
    }
    if (f->notify)
        c->wants_notify = true;
    /* complete: both ends seen, every bit between, and the NOTIFY if one is due */
    if (c->first < 0 || c->last < c->first || (c->wants_notify && !c->have_notify))
        return;
    unsigned span = (unsigned)(c->last - c->first) + 1;
    uint64_t need = (span == 64 ? ~0ull : ((1ull << span) - 1)) << c->first;
    if ((c->bitmap & need) == need)
        complete_block(x, c);
}

/* One packet, as the walk found it; false when the rest of its bundle is
 * dropped. */
static bool one_packet(struct rx *x, rifl_rdma_packet *p, rifl_rdma_check check)
{
    rifl_rdma *e = x->e;
    if (check == RIFL_RDMA_PKT_SKIPPED) {
        e->st.skipped_packets++;
        return true;
    }
    if (check == RIFL_RDMA_PKT_BAD_FTR) { /* 1: the rest of the bundle goes too */
        e->st.ftr_crc_errors++;
        return false;
    }
    e->st.rx_packets++;
    x->p = p;
    if (p->hdr.type == RIFL_RDMA_RESP) {
        /* 2: a response for this node, to its engine mailbox */
        if (p->hdr.dst_node == e->cfg.node && p->hdr.dst_va == RIFL_RDMA_PERIPHERAL(0) &&
            check == RIFL_RDMA_PKT_OK)
            rdma_response(e, p, x->now);
        else
            e->st.stale_responses++;
        return true;
    }
    x->slot = rdma_node_slot(e, p->ftr.src_node);
    if (x->slot >= 0 && x->now < e->nodes[x->slot].quiet_until) { /* a restart's quiet time */
        e->st.quiet_dropped++;
        return true;
    }
    data_packet(x, check);
    return true;
}

/* A walk or parse that stopped: count why. */
static void dropped(rifl_rdma *e, rifl_rdma_check check)
{
    if (check == RIFL_RDMA_PKT_BAD_HDR)
        e->st.hdr_edc_errors++;
    else
        e->st.bundle_errors++;
}

int rifl_rdma_input(rifl_rdma *e, uint64_t now, const uint8_t *msg, size_t len,
                    rifl_rdma_route from)
{
    if (!e || (!msg && len))
        return RIFL_ERR_INVALID_ARG;
    struct rx x = { e, now, from, NULL, -1 };
    rifl_rdma_packet p;
    rifl_rdma_check check = RIFL_RDMA_PKT_OK;
    if (e->cfg.mapping == RIFL_RDMA_MAP_CELL) { /* one packet, the cell's padding after it */
        check = rifl_rdma_packet_parse(msg, len, &p);
        if (check == RIFL_RDMA_PKT_SHORT || check == RIFL_RDMA_PKT_BAD_HDR ||
            check == RIFL_RDMA_PKT_RESERVED ||
            check == RIFL_RDMA_PKT_OVERSIZE)
            dropped(e, check);
        else
            one_packet(&x, &p, check);
    } else if (len < RIFL_RDMA_BUNDLE_PREFIX || msg[0] != RIFL_L2_PROTO_RDMA ||
               ((size_t)msg[2] << 8 | msg[3]) > len - RIFL_RDMA_BUNDLE_PREFIX) {
        e->st.bundle_errors++;
    } else {
        rifl_rdma_bundle_reader rd;
        rifl_rdma_bundle_reader_init(&rd, msg + RIFL_RDMA_BUNDLE_PREFIX,
                                     (size_t)msg[2] << 8 | msg[3], msg[1]);
        rd.compact = e->cfg.mapping == RIFL_RDMA_MAP_COMPACT;
        for (;;) {
            rifl_rdma_walk w = rifl_rdma_bundle_next(&rd, &p, &check);
            if (w == RIFL_RDMA_WALK_END)
                break;
            if (w == RIFL_RDMA_WALK_DROPPED) {
                dropped(e, check);
                break;
            }
            if (!one_packet(&x, &p, check))
                break;
        }
    }
    rdma_serve_requests(e, now);
    rdma_issue(e, now);
    return RIFL_OK;
}

/* A node's engine is a new one.  Forgetting its old engine's blocks is
 * safe: the old engine sends nothing more, and what it sent that is still
 * on its way comes within quiet_ns (the caller's word), in which every
 * packet from the node is dropped unanswered.  After it only the new
 * engine's packets come, and none of its blocks was delivered here before
 * the memory was emptied, so no block can be delivered twice, nor one be
 * ACKed as a duplicate of another; from then on its blocks are remembered
 * as any source's ("Forgetting" in rdma_priv.h). */
int rifl_rdma_forget_node(rifl_rdma *e, uint32_t node, uint64_t quiet_ns, uint64_t now)
{
    int s = e ? rdma_node_slot(e, node) : -1;
    if (s < 0)
        return RIFL_ERR_INVALID_ARG;
    struct node *n = &e->nodes[s];
    /* its blocks: remembered, held in contexts, NACKed without one */
    memset(n->done, 0, TIDS * sizeof *n->done);
    memset(n->done_at, 0, TIDS * sizeof *n->done_at);
    for (unsigned i = 0; i < CTX_SETS * CTX_WAYS; i++)
        if (e->ctx[i].state != C_FREE && e->ctx[i].src == node)
            e->ctx[i].state = C_FREE;
    for (unsigned i = 0; i < CTX_SETS; i++)
        if (e->nacked[i].valid && e->nacked[i].src == node)
            e->nacked[i].valid = false;
    /* what this engine had for the old one: packets staged, transfers,
     * read requests */
    rdma_unstage_node(e, (unsigned)s);
    rdma_fail_node(e, node, now);
    /* the old engine's packets still on their way are dropped, not taken
     * for the new one's */
    n->quiet_until = now + (quiet_ns < UINT64_MAX - now ? quiet_ns : UINT64_MAX - now);
    return RIFL_OK;
}

/* The transfer layer (the thesis's co-processor): work requests cut into
 * 16 KB blocks, one transaction ID each; chains of work requests whose
 * blocks wait (DB) for the block before them; responses matched to
 * blocks; selective retransmission after a NACK, a timeout or a source
 * page fault; reads served as writes back to their initiator; the
 * timers. */
#include <string.h>

#include "rdma_priv.h"

static unsigned xf_alloc(rifl_rdma *e)
{
    unsigned x = e->xf_free_head;
    if (x == XF_NONE)
        return XF_NONE;
    e->xf_free_head = e->xf[x].next_issue;
    struct xfer *t = &e->xf[x];
    memset(t, 0, sizeof *t);
    t->src_region = -1;
    t->next_issue = XF_NONE;
    t->chain_prev = t->chain_next = XF_NONE;
    return x;
}

/* A new transfer of `kind` with the fields every kind sets. */
static struct xfer *xf_new(rifl_rdma *e, unsigned *x, enum xf_kind kind, uint16_t pdid,
                           uint64_t wr_id, uint64_t now, uint32_t dst_node, uint64_t dst_va,
                           uint64_t len, unsigned blocks, unsigned path)
{
    *x = xf_alloc(e);
    struct xfer *t = &e->xf[*x];
    t->kind = kind;
    t->pdid = pdid;
    t->wr_id = wr_id;
    t->posted = now;
    t->dst_node = dst_node;
    t->dst_va = dst_va;
    t->len = len;
    t->blocks_total = blocks;
    t->next_path = path;
    return t;
}

/* Put a new transfer at the end of the list of those with blocks to issue. */
static void xf_start(rifl_rdma *e, unsigned x)
{
    struct xfer *t = &e->xf[x];
    t->issuing = true;
    t->next_issue = XF_NONE;
    if (e->issue_tail == XF_NONE)
        e->issue_head = x;
    else
        e->xf[e->issue_tail].next_issue = x;
    e->issue_tail = x;
    e->pending++;
}

/* A transfer set up by a post: into its chain when `chain` is not NULL
 * (*chain is the transfer before it, XF_NONE for the first, and becomes
 * this one), onto the issue list, and its first blocks issued. */
static void xf_post(rifl_rdma *e, unsigned x, unsigned *chain, uint64_t now)
{
    if (chain) {
        struct xfer *t = &e->xf[x];
        unsigned prev = *chain;
        t->chain = true;
        if (prev != XF_NONE && e->xf[prev].kind != XF_FREE && e->xf[prev].chain) {
            t->chain_prev = prev;
            e->xf[prev].chain_next = x;
        }
        *chain = x;
    }
    xf_start(e, x);
    rdma_issue(e, now);
}

/* The blocks of `len` bytes to `dst_va`: one per 16 KB window, or with
 * the cell mapping one per 12 KB within each window. */
static unsigned blocks_of(const rifl_rdma *e, uint64_t dst_va, uint64_t len)
{
    const uint64_t W = RIFL_RDMA_BLOCK_MAX, C = RIFL_RDMA_CELL_BLOCK_MAX;
    bool cell = e->cfg.mapping == RIFL_RDMA_MAP_CELL;
    uint64_t first = W - dst_va % W;
    if (first > len)
        first = len;
    uint64_t full = (len - first) / W, last = len - first - full * W;
    uint64_t n = cell ? (first + C - 1) / C + 2 * full + (last + C - 1) / C
                      : 1 + full + (last ? 1 : 0);
    return (unsigned)n;
}

/* Checks every post shares: the domain, the queue room, the route. */
static int post_common(rifl_rdma *e, uint16_t pdid, uint32_t node, struct pd **pd)
{
    *pd = rdma_pd(e, pdid);
    if (!*pd)
        return RIFL_ERR_INVALID_ARG;
    if (node > RIFL_RDMA_NODE_MAX)
        return RIFL_ERR_INVALID_ARG;
    if (rdma_node_slot(e, node) < 0)
        return RIFL_ERR_UNREACHABLE;
    /* the last sixteenth of the transfer slots (at least one) is for
     * serving the peers' reads: two nodes whose own reads took every slot
     * would each wait for the other to serve them */
    unsigned reserve = e->n_xf >= 16 ? e->n_xf / 16 : e->n_xf > 1 ? 1 : 0;
    if (e->pending + e->cn >= e->cfg.cq_depth || e->xf_free_head == XF_NONE ||
        e->pending + reserve >= e->n_xf)
        return RIFL_ERR_AGAIN;
    return RIFL_OK;
}

static int post_write(rifl_rdma *e, uint16_t pdid, uint64_t src_va, uint32_t dst_node,
                      uint64_t dst_va, uint64_t len, unsigned path,
                      const rifl_rdma_notification *notify, uint64_t wr_id, uint64_t now,
                      unsigned *chain)
{
    /* memory only: the peripherals' window is for sends and the engine */
    if (!e || len == 0 || len > UINT32_MAX || path > 31 || dst_va >= RIFL_RDMA_PERIPHERAL_BASE ||
        len > RIFL_RDMA_PERIPHERAL_BASE - dst_va)
        return RIFL_ERR_INVALID_ARG;
    if (notify && rifl_rdma_gva_node(notify->target) != dst_node)
        return RIFL_ERR_INVALID_ARG; /* the record is written on the receiving node */
    uint64_t nva = notify ? rifl_rdma_gva_va(notify->target) : 0;
    if (notify && nva >= RIFL_RDMA_PERIPHERAL_BASE && nva < RIFL_RDMA_PERIPHERAL(2))
        return RIFL_ERR_INVALID_ARG; /* the engine's own mailboxes: its requests and reads */
    struct pd *pd;
    int rc = post_common(e, pdid, dst_node, &pd);
    if (rc)
        return rc;
    int reg = rdma_region_find(e, pdid, src_va, len, 0);
    if (reg < 0)
        return RIFL_ERR_PROTECTION;
    if (pd->writes >= e->cfg.transfers_per_pd)
        return RIFL_ERR_AGAIN;
    unsigned x;
    struct xfer *t = xf_new(e, &x, XF_WRITE, pdid, wr_id, now, dst_node, dst_va, len,
                            blocks_of(e, dst_va, len), path);
    t->src_region = reg;
    t->src_va = src_va;
    if (notify) {
        t->notify = true;
        t->nt = (rifl_rdma_notify){ notify->target, notify->cookie, (uint32_t)len,
                                    notify->immediate };
    }
    pd->writes++;
    xf_post(e, x, chain, now);
    return RIFL_OK;
}

int rifl_rdma_post_write(rifl_rdma *e, uint16_t pdid, uint64_t src_va, uint32_t dst_node,
                         uint64_t dst_va, uint64_t len, unsigned path,
                         const rifl_rdma_notification *notify, uint64_t wr_id, uint64_t now)
{
    return post_write(e, pdid, src_va, dst_node, dst_va, len, path, notify, wr_id, now, NULL);
}

static int post_read(rifl_rdma *e, uint16_t pdid, uint64_t dst_va, uint32_t src_node,
                     uint64_t src_va, uint64_t len, unsigned path, uint64_t wr_id, uint64_t now,
                     unsigned *chain)
{
    if (!e || len == 0 || len > UINT32_MAX || path > 31 || src_va > RIFL_RDMA_VA_MASK ||
        len > RIFL_RDMA_VA_MASK + 1 - src_va)
        return RIFL_ERR_INVALID_ARG;
    struct pd *pd;
    int rc = post_common(e, pdid, src_node, &pd);
    if (rc)
        return rc;
    if (rdma_region_find(e, pdid, dst_va, len, RIFL_RDMA_REMOTE_WRITE) < 0)
        return RIFL_ERR_PROTECTION;
    if (pd->reads >= e->cfg.transfers_per_pd)
        return RIFL_ERR_AGAIN;
    unsigned x;
    struct xfer *t = xf_new(e, &x, XF_READ, pdid, wr_id, now, src_node, RIFL_RDMA_PERIPHERAL(0),
                            len, 1, path);
    t->deadline = now + e->cfg.read_timeout_ns;
    t->read_tag = ++e->read_serial;
    if (t->deadline < e->due_min)
        e->due_min = t->deadline;
    rifl_rdma_read_req rq = {
        .src_va = src_va,
        .dst = rifl_rdma_gva_word(e->cfg.node, dst_va),
        .length = (uint32_t)len,
        .immediate = t->read_tag, /* echoed by the record: this read's, not an
                                     older one's of the same wr_id */
        .cookie = wr_id,
        .notify_target = rifl_rdma_gva_word(e->cfg.node, RIFL_RDMA_PERIPHERAL(1)),
    };
    rifl_rdma_read_req_pack(&rq, t->inline_payload);
    t->inline_len = RIFL_RDMA_READ_REQ_BYTES;
    pd->reads++;
    xf_post(e, x, chain, now);
    return RIFL_OK;
}

int rifl_rdma_post_read(rifl_rdma *e, uint16_t pdid, uint64_t dst_va, uint32_t src_node,
                        uint64_t src_va, uint64_t len, unsigned path, uint64_t wr_id, uint64_t now)
{
    return post_read(e, pdid, dst_va, src_node, src_va, len, path, wr_id, now, NULL);
}

static int post_send(rifl_rdma *e, uint16_t pdid, uint32_t node, unsigned mailbox,
                     const void *buf, size_t len, uint64_t wr_id, uint64_t now, unsigned *chain)
{
    if (!e || !buf || len == 0 || len > RIFL_RDMA_MAX_PAYLOAD ||
        mailbox < RIFL_RDMA_MAILBOX_FIRST || mailbox > RIFL_RDMA_MAILBOX_LAST)
        return RIFL_ERR_INVALID_ARG;
    /* a mailbox message is one packet: in a cell, at most a cell's payload */
    if (e->cfg.mapping == RIFL_RDMA_MAP_CELL && len > RIFL_RDMA_CELL_PAYLOAD)
        return RIFL_ERR_INVALID_ARG;
    struct pd *pd;
    int rc = post_common(e, pdid, node, &pd);
    if (rc)
        return rc;
    if (pd->writes >= e->cfg.transfers_per_pd)
        return RIFL_ERR_AGAIN;
    unsigned x;
    struct xfer *t = xf_new(e, &x, XF_SEND, pdid, wr_id, now, node,
                            RIFL_RDMA_PERIPHERAL(mailbox), len, 1, 0);
    memcpy(t->inline_payload, buf, len);
    t->inline_len = (unsigned)len;
    pd->writes++;
    xf_post(e, x, chain, now);
    return RIFL_OK;
}

int rifl_rdma_post_send(rifl_rdma *e, uint16_t pdid, uint32_t node, unsigned mailbox,
                        const void *buf, size_t len, uint64_t wr_id, uint64_t now)
{
    return post_send(e, pdid, node, mailbox, buf, len, wr_id, now, NULL);
}

int rifl_rdma_post_chain(rifl_rdma *e, const rifl_rdma_wr *wr, unsigned n, unsigned *posted,
                         uint64_t now)
{
    if (posted)
        *posted = 0;
    if (!e || !wr || n == 0)
        return RIFL_ERR_INVALID_ARG;
    unsigned chain = XF_NONE;
    for (unsigned i = 0; i < n; i++) {
        const rifl_rdma_wr *w = &wr[i];
        int rc;
        switch (w->op) {
        case RIFL_RDMA_OP_WRITE:
            rc = post_write(e, w->pdid, w->local_va, w->node, w->remote_va, w->len, w->path,
                            w->notify, w->wr_id, now, &chain);
            break;
        case RIFL_RDMA_OP_READ:
            rc = post_read(e, w->pdid, w->local_va, w->node, w->remote_va, w->len, w->path,
                           w->wr_id, now, &chain);
            break;
        case RIFL_RDMA_OP_SEND:
            rc = w->len > RIFL_RDMA_MAX_PAYLOAD
                     ? RIFL_ERR_INVALID_ARG
                     : post_send(e, w->pdid, w->node, w->mailbox, w->buf, (size_t)w->len,
                                 w->wr_id, now, &chain);
            break;
        default:
            rc = RIFL_ERR_INVALID_ARG;
            break;
        }
        if (rc != RIFL_OK)
            return rc;
        if (posted)
            *posted = i + 1;
    }
    return RIFL_OK;
}

/* ---- chaining (the descriptor's DB, chained and dependency_id) ---------------------------- */

/* Block `tid` of use `use`, if it still waits in B_DB, goes. */
static void chain_release(rifl_rdma *e, unsigned tid, unsigned use)
{
    struct block *s = &e->blocks[tid];
    if (s->state == B_DB && s->use == use) {
        s->state = B_ACTIVE;
        rdma_sched_push(e, tid);
    }
}

/* Block `tid` has cut its last data packet: `done`, once; the block that
 * waits for it goes (a retry later does not restart it). */
void rdma_chain_done(rifl_rdma *e, unsigned tid)
{
    struct block *b = &e->blocks[tid];
    if (b->done)
        return;
    b->done = true;
    if (b->chained) {
        b->chained = false;
        chain_release(e, b->dep_tid, b->dep_use);
    }
}

/* Block `tid` is let go before it was done (its transfer finished): the
 * block waiting for it now waits for the block it waited for, or goes
 * when there is none, so that no block is left waiting for nothing. */
void rdma_chain_drop(rifl_rdma *e, unsigned tid)
{
    struct block *x = &e->blocks[tid];
    if (x->done)
        return;
    struct block *p = NULL;
    if (x->state == B_DB) /* only a held block has a block holding it */
        for (unsigned t = 0; t < TIDS && !p; t++) {
            struct block *c = &e->blocks[t];
            if (t != tid && c->state != B_FREE && c->chained && c->dep_tid == tid &&
                c->dep_use == x->use)
                p = c;
        }
    if (p) {
        p->chained = x->chained;
        p->dep_tid = x->dep_tid;
        p->dep_use = x->dep_use;
    } else if (x->chained) {
        chain_release(e, x->dep_tid, x->dep_use);
    }
    x->chained = false;
}

/* A chained transfer issues no block while the transfer before it in its
 * chain has blocks to issue: the chain's blocks are issued in its order. */
static bool chain_held(const rifl_rdma *e, const struct xfer *t)
{
    if (t->chain_prev == XF_NONE)
        return false;
    const struct xfer *p = &e->xf[t->chain_prev];
    return p->issued < p->len;
}

/* A finished transfer leaves its chain; the one after it follows the one
 * before it. */
static void chain_leave(rifl_rdma *e, unsigned x)
{
    struct xfer *t = &e->xf[x];
    if (!t->chain)
        return;
    if (t->chain_prev != XF_NONE)
        e->xf[t->chain_prev].chain_next = t->chain_next;
    if (t->chain_next != XF_NONE)
        e->xf[t->chain_next].chain_prev = t->chain_prev;
    t->chain_prev = t->chain_next = XF_NONE;
    t->chain = false;
}

/* ---- issuing blocks ----------------------------------------------------------------------- */

static bool issue_block(rifl_rdma *e, unsigned x, struct node *n, int nix)
{
    struct xfer *t = &e->xf[x];
    if (!e->tf_count || n->inflight >= e->cfg.blocks_per_node)
        return false;
    unsigned tid = e->tid_free[e->tf_head];
    e->tf_head = (e->tf_head + 1) % TIDS;
    e->tf_count--;
    /* in a chain: the block before this one (the transfer's last, or the
     * last of the transfer before it), if it has not cut all its data yet */
    struct block *pred = NULL;
    if (t->chain) {
        const struct xfer *pt = t->has_tail ? t
                                : t->chain_prev != XF_NONE ? &e->xf[t->chain_prev] : NULL;
        if (pt && pt->has_tail) {
            struct block *c = &e->blocks[pt->tail_tid];
            if (c->state != B_FREE && c->use == pt->tail_use && !c->done)
                pred = c;
        }
    }
    struct block *b = &e->blocks[tid];
    unsigned in_sched = b->in_sched;
    memset(b, 0, sizeof *b);
    b->in_sched = in_sched;
    b->xf = x;
    b->node_ix = nix;
    b->dst_node = t->dst_node;
    b->use = ++e->tid_use[tid];
    /* the generation counts the TID's uses towards this node, so that the
     * node sees them in order, one after the other (one never seen, if
     * its block is let go unsent), however often the TID goes elsewhere
     * in between: the node's memory of the TID's last block is never
     * taken for a later one, nor a new block for an older one */
    b->gen = n->sent[tid] = (uint16_t)((n->sent[tid] + 1) & 1023u);
    /* block k on path (p0 + k) mod n, n the node's routes (rdma.md 6.3) */
    b->path = t->next_path % e->nodes[nix].routes;
    t->next_path = b->path + 1;
    b->k = t->blocks_out + t->blocks_acked;
    if (t->kind == XF_WRITE || t->kind == XF_SERVE) {
        uint64_t dst = t->dst_va + t->issued;
        b->type = RIFL_RDMA_WRITE;
        b->dst_va = dst;
        b->src_va = t->src_va + t->issued;
        b->len = rifl_rdma_block_len(dst, t->len - t->issued,
                                     e->cfg.mapping == RIFL_RDMA_MAP_CELL);
    } else {
        b->type = t->kind == XF_READ ? RIFL_RDMA_READ_REQ : RIFL_RDMA_WRITE;
        b->dst_va = t->dst_va;
        b->len = t->inline_len;
        b->inline_data = true;
    }
    t->issued += t->kind == XF_WRITE || t->kind == XF_SERVE ? b->len : t->len;
    b->last_block = t->issued == t->len;
    b->send_notify = b->last_block && t->notify;
    if (b->last_block)
        t->last_tid = tid;
    t->blocks_out++;
    n->inflight++;
    if (t->chain) {
        t->has_tail = true;
        t->tail_tid = tid;
        t->tail_use = b->use;
    }
    if (pred) { /* DB: held until pred has cut its last data packet */
        pred->chained = true;
        pred->dep_tid = tid;
        pred->dep_use = b->use;
        b->state = B_DB;
        e->st.chain_waits++;
        return true;
    }
    b->state = B_ACTIVE;
    rdma_sched_push(e, tid);
    return true;
}

void rdma_issue(rifl_rdma *e, uint64_t now)
{
    (void)now;
    unsigned prev = XF_NONE;
    for (unsigned x = e->issue_head; x != XF_NONE && e->tf_count;) {
        struct xfer *t = &e->xf[x];
        unsigned next = t->next_issue;
        int nix = rdma_node_slot(e, t->dst_node);
        while (t->issued < t->len && !chain_held(e, t) && issue_block(e, x, &e->nodes[nix], nix))
            ;
        if (t->issued == t->len) { /* all issued: off the list */
            t->issuing = false;
            if (prev == XF_NONE)
                e->issue_head = next;
            else
                e->xf[prev].next_issue = next;
            if (e->issue_tail == x)
                e->issue_tail = prev;
        } else {
            prev = x;
        }
        x = next;
    }
}

/* Take a transfer off the issue list (it failed before all was issued). */
static void issue_unlink(rifl_rdma *e, unsigned x)
{
    unsigned prev = XF_NONE;
    for (unsigned y = e->issue_head; y != XF_NONE; prev = y, y = e->xf[y].next_issue)
        if (y == x) {
            unsigned next = e->xf[y].next_issue;
            if (prev == XF_NONE)
                e->issue_head = next;
            else
                e->xf[prev].next_issue = next;
            if (e->issue_tail == y)
                e->issue_tail = prev;
            break;
        }
    e->xf[x].issuing = false;
}

static void xf_finish(rifl_rdma *e, unsigned x, int status, uint64_t now)
{
    if (e->xf[x].issuing)
        issue_unlink(e, x);
    chain_leave(e, x);
    rdma_complete(e, x, status, now);
}

/* `node`'s engine restarted: this engine's transfers to it (writes, sends,
 * reads of its memory, reads served for it) end with E_PEER_RESTARTED,
 * whatever of them the old engine took being gone with it, and its read
 * requests not yet served are dropped: the new engine never asked. */
void rdma_fail_node(rifl_rdma *e, uint32_t node, uint64_t now)
{
    for (unsigned x = 0; x < e->n_xf; x++)
        if (e->xf[x].kind != XF_FREE && e->xf[x].dst_node == node) {
            e->st.restart_failed++;
            xf_finish(e, x, RIFL_ERR_PEER_RESTARTED, now);
        }
    const unsigned fifo = e->cfg.req_fifo;
    unsigned keep = 0;
    for (unsigned k = 0; k < e->rn; k++) {
        const struct read_req *q = &e->req[(e->rh + k) % fifo];
        if (q->from == node)
            e->st.restart_dropped++;
        else
            e->req[(e->rh + keep++) % fifo] = *q;
    }
    e->rn = keep;
}

/* ---- a block's life ------------------------------------------------------------------------- */

static uint64_t timeout_of(const rifl_rdma *e, const struct block *b)
{
    uint64_t t = e->cfg.block_timeout_ns;
    for (unsigned i = 0; i < b->timeouts && t < e->cfg.block_timeout_max_ns; i++)
        t *= 2;
    return t < e->cfg.block_timeout_max_ns ? t : e->cfg.block_timeout_max_ns;
}

bool rdma_notify_ready(const rifl_rdma *e, unsigned tid)
{
    const struct block *b = &e->blocks[tid];
    const struct xfer *t = &e->xf[b->xf];
    return t->issued == t->len && t->blocks_acked + 1 == t->blocks_total;
}

void rdma_block_sent(rifl_rdma *e, unsigned tid, uint64_t now)
{
    struct block *b = &e->blocks[tid];
    if (!b->went_whole) { /* it may complete at its receiver from now on */
        b->went_whole = true;
        b->whole_at = now;
    }
    b->state = B_SENT;
    b->due = now + timeout_of(e, b);
    if (b->due < e->due_min)
        e->due_min = b->due;
    e->st.blocks_sent++;
}

/* Block `tid` would cut a packet more than life_ns after it first went
 * whole (a retry held up by a source page, say): its receiver may have
 * forgotten it by the time the packet came, and take a retry of a block
 * it completed for a new one.  Its transfer fails instead ("Forgetting"
 * in rdma_priv.h). */
void rdma_block_expire(rifl_rdma *e, unsigned tid, uint64_t now)
{
    e->st.blocks_expired++;
    xf_finish(e, e->blocks[tid].xf, RIFL_ERR_RETRY_EXCEEDED, now);
}

/* Send block `tid` again, whole, as a new attempt on the next path. */
static void reinit(rifl_rdma *e, unsigned tid, uint64_t now)
{
    struct block *b = &e->blocks[tid];
    if (b->attempt == RIFL_RDMA_ATTEMPT_MAX) {
        xf_finish(e, b->xf, RIFL_ERR_RETRY_EXCEEDED, now);
        return;
    }
    b->attempt++;
    b->path = (b->path + 1) % e->nodes[b->node_ix].routes;
    b->off = 0;
    b->pkt_n = 0;
    b->notify_sent = false;
    b->state = B_ACTIVE;
    e->st.retransmitted_blocks++;
    rdma_sched_push(e, tid);
}

/* Go-back-N (for comparison): the transfer's later blocks already sent go
 * again too. */
static void go_back(rifl_rdma *e, unsigned tid, uint64_t now)
{
    unsigned x = e->blocks[tid].xf, k = e->blocks[tid].k;
    for (unsigned t = 0; t < TIDS; t++) {
        struct block *b = &e->blocks[t];
        if (t != tid && b->xf == x && b->k > k &&
            (b->state == B_SENT || b->state == B_HOLD || b->state == B_ACTIVE)) {
            reinit(e, t, now);
            if (e->xf[x].kind == XF_FREE)
                return;
        }
    }
}

static void retry(rifl_rdma *e, unsigned tid, uint64_t now)
{
    unsigned x = e->blocks[tid].xf;
    reinit(e, tid, now);
    if (e->cfg.go_back_n && e->xf[x].kind != XF_FREE)
        go_back(e, tid, now);
}

static void block_acked(rifl_rdma *e, unsigned tid, uint64_t now)
{
    struct block *b = &e->blocks[tid];
    unsigned x = b->xf;
    struct xfer *t = &e->xf[x];
    rdma_chain_drop(e, tid); /* (done already, unless the answer was not to this use) */
    e->nodes[b->node_ix].inflight--;
    b->state = B_FREE;
    e->tid_free[(e->tf_head + e->tf_count++) % TIDS] = (uint16_t)tid;
    t->blocks_out--;
    t->blocks_acked++;
    e->st.blocks_acked++;
    if (t->kind == XF_READ) {
        t->request_acked = true; /* completes when the data's record comes */
    } else if (t->blocks_acked == t->blocks_total) {
        xf_finish(e, x, RIFL_OK, now);
    } else if (t->notify && t->issued == t->len && e->blocks[t->last_tid].state == B_HOLD &&
               rdma_notify_ready(e, t->last_tid)) {
        e->blocks[t->last_tid].state = B_ACTIVE; /* its NOTIFY may go now */
        rdma_sched_push(e, t->last_tid);
    }
    rdma_issue(e, now);
}

void rdma_response(rifl_rdma *e, const rifl_rdma_packet *p, uint64_t now)
{
    const rifl_rdma_ftr *f = &p->ftr;
    struct block *b = &e->blocks[f->tid & (TIDS - 1)];
    unsigned tid = f->tid & (TIDS - 1);
    if (f->status >= RIFL_RDMA_STATUS_COUNT) {
        e->st.stale_responses++;
        return;
    }
    if (f->status != RIFL_RDMA_ACK)
        e->st.nacks_rx[f->status]++;
    if (b->state == B_FREE || b->state == B_DB || b->dst_node != f->src_node ||
        b->gen != f->gen || f->attempt > b->attempt) {
        e->st.stale_responses++;
        return;
    }
    if (f->status == RIFL_RDMA_ACK) {
        e->st.acks_rx++;
        block_acked(e, tid, now);
        return;
    }
    /* a NACK counts for the current attempt only, once */
    if (f->attempt != b->attempt || b->state == B_RETRY || b->state == B_PAGE) {
        e->st.stale_responses++;
        return;
    }
    /* (PAGE_FAULT waits double per consecutive fault: another NACK ends
     * the run) */
    if (f->status != RIFL_RDMA_NACK_PAGE_FAULT)
        b->page_faults = 0;
    switch (f->status) {
    case RIFL_RDMA_NACK_PROTECTION:
        xf_finish(e, b->xf, RIFL_ERR_REMOTE_PROTECTION, now);
        return;
    case RIFL_RDMA_NACK_PAGE_FAULT: {
        uint64_t wait = e->cfg.page_fault_retry_ns;
        for (unsigned i = 0; i < b->page_faults && wait < e->cfg.block_timeout_max_ns; i++)
            wait *= 2;
        b->page_faults++;
        b->state = B_RETRY;
        b->due = now + wait;
        if (b->due < e->due_min)
            e->due_min = b->due;
        return;
    }
    case RIFL_RDMA_NACK_NO_CONTEXT:
        b->state = B_RETRY;
        b->due = now + e->cfg.no_context_retry_ns;
        if (b->due < e->due_min)
            e->due_min = b->due;
        return;
    default: /* CRC, DECODE: at once */
        retry(e, tid, now);
        return;
    }
}

/* ---- reads ------------------------------------------------------------------------------------ */

void rdma_read_record(rifl_rdma *e, uint32_t src, uint16_t pdid, const uint8_t *record,
                      uint64_t now)
{
    rifl_rdma_record rec;
    rifl_rdma_record_unpack(record, &rec);
    uint64_t cookie = rec.cookie;
    unsigned best = XF_NONE;
    for (unsigned x = 0; x < e->n_xf; x++) {
        const struct xfer *t = &e->xf[x];
        if (t->kind == XF_READ && t->wr_id == cookie && t->read_tag == rec.immediate &&
            t->dst_node == src && t->pdid == pdid &&
            (best == XF_NONE || t->posted < e->xf[best].posted))
            best = x;
    }
    if (best != XF_NONE)
        xf_finish(e, best, RIFL_OK, now);
    else
        e->st.stale_responses++;
}

void rdma_serve_requests(rifl_rdma *e, uint64_t now)
{
    /* in order, except that a domain at its limit of serves keeps its
     * requests (in their order) without holding back other domains' */
    const unsigned fifo = e->cfg.req_fifo;
    unsigned keep = 0, k = 0;
    for (; k < e->rn; k++) {
        if (e->xf_free_head == XF_NONE)
            break; /* every request waits for a transfer to finish */
        struct read_req *q = &e->req[(e->rh + k) % fifo];
        struct pd *pd = rdma_pd(e, q->pdid);
        if (pd && pd->serves >= e->cfg.transfers_per_pd) {
            e->req[(e->rh + keep++) % fifo] = *q; /* (checked when its turn comes) */
            continue;
        }
        int reg = pd ? rdma_region_find(e, q->pdid, q->r.src_va, q->r.length,
                                        RIFL_RDMA_REMOTE_READ)
                     : -1;
        uint32_t to = rifl_rdma_gva_node(q->r.dst);
        /* (the data must fit the 42-bit VAs of its headers all the way, or
         * its blocks could never be built) */
        bool fits = q->r.length <= RIFL_RDMA_VA_MASK + 1 - rifl_rdma_gva_va(q->r.dst);
        if (reg < 0 || !fits || rdma_node_slot(e, to) < 0) {
            e->st.failed_transfers++; /* unregistered since, or no way back */
            continue;
        }
        unsigned x;
        uint64_t dst_va = rifl_rdma_gva_va(q->r.dst);
        struct xfer *t = xf_new(e, &x, XF_SERVE, q->pdid, 0, now, to, dst_va, q->r.length,
                                blocks_of(e, dst_va, q->r.length), q->path);
        t->src_region = reg;
        t->src_va = q->r.src_va;
        t->notify = true;
        t->nt = (rifl_rdma_notify){ q->r.notify_target, q->r.cookie, q->r.length,
                                    q->r.immediate };
        pd->serves++;
        xf_start(e, x);
    }
    /* the requests not looked at stay behind those kept */
    for (; k < e->rn; k++)
        e->req[(e->rh + keep++) % fifo] = e->req[(e->rh + k) % fifo];
    e->rn = keep;
}

/* ---- timers ------------------------------------------------------------------------------------ */

uint64_t rifl_rdma_next_due(const rifl_rdma *e)
{
    return e ? e->due_min : UINT64_MAX;
}

void rifl_rdma_advance(rifl_rdma *e, uint64_t now)
{
    if (!e)
        return;
    for (unsigned t = 0; t < TIDS; t++) {
        struct block *b = &e->blocks[t];
        if (b->state == B_SENT && b->due <= now) {
            e->st.timeouts++;
            b->timeouts++;
            retry(e, t, now);
        } else if (b->state == B_RETRY && b->due <= now) {
            retry(e, t, now);
        }
    }
    for (unsigned x = 0; x < e->n_xf; x++)
        if (e->xf[x].kind == XF_READ && e->xf[x].deadline <= now)
            xf_finish(e, x, RIFL_ERR_TIMEOUT, now);
    /* the next timer, exactly */
    uint64_t due = UINT64_MAX;
    for (unsigned t = 0; t < TIDS; t++) {
        const struct block *b = &e->blocks[t];
        if ((b->state == B_SENT || b->state == B_RETRY) && b->due < due)
            due = b->due;
    }
    for (unsigned x = 0; x < e->n_xf; x++)
        if (e->xf[x].kind == XF_READ && e->xf[x].deadline < due)
            due = e->xf[x].deadline;
    e->due_min = due;
    rdma_serve_requests(e, now);
    rdma_issue(e, now);
}

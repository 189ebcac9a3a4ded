/* The RDMA engine's set-up and its host side: configuration, the route
 * table, protection domains, registered memory and its residency,
 * mailboxes, the completion queue and the counters. */
#include <stdlib.h>
#include <string.h>

#include "rdma_priv.h"

const rifl_rdma_config rifl_rdma_default_config = {
    .node = 0,
    .mapping = RIFL_RDMA_MAP_BUNDLE,
    .bundle_packets = 0,
    .stage_packets = 0,
    .max_nodes = 256,
    .max_regions = 256,
    .max_pds = 64,
    .max_mailboxes = 64,
    .cq_depth = 4096,
    .max_transfers = 1024,
    .blocks_per_node = 16,
    .transfers_per_pd = 32,
    .req_fifo = 64,
    .block_timeout_ns = 1000000,
    .block_timeout_max_ns = 8000000,
    .page_fault_retry_ns = 20000,
    .no_context_retry_ns = 10000,
    .context_idle_ns = 16000000,
    .block_memory_ns = 0,
    .read_timeout_ns = 100000000,
    .go_back_n = false,
};

#define FIRST_VA 0x10000000ull

/* L ("Forgetting" in rdma_priv.h): 16 attempts of a block, each after the
 * longest wait there can be between two: a timeout (block_timeout_max_ns;
 * 2x: a page fault's doubled wait stops past it) or a NO_CONTEXT wait. */
static uint64_t block_life(const rifl_rdma_config *c)
{
    uint64_t w = 2 * c->block_timeout_max_ns;
    if (c->page_fault_retry_ns > w)
        w = c->page_fault_retry_ns;
    if (c->no_context_retry_ns > w)
        w = c->no_context_retry_ns;
    return (RIFL_RDMA_ATTEMPT_MAX + 1) * w;
}

static int check_config(const rifl_rdma_config *c, char *msg, size_t msglen)
{
#define RANGE(f, lo, hi)                                                                   \
    if ((uint64_t)c->f < (uint64_t)(lo) || (uint64_t)c->f > (uint64_t)(hi)) {              \
        rifl_msg(msg, msglen, "rdma: %s is %llu; give %llu to %llu", #f,                  \
                 (unsigned long long)c->f, (unsigned long long)(lo),                      \
                 (unsigned long long)(hi));                                               \
        return RIFL_ERR_CONFIG;                                                            \
    }
    RANGE(node, 0, RIFL_RDMA_NODE_MAX);
    if (!rifl_rdma_mapping_name(c->mapping)) {
        rifl_msg(msg, msglen, "rdma: mapping is %d; give RIFL_RDMA_MAP_BUNDLE, _CELL or _COMPACT",
                 (int)c->mapping);
        return RIFL_ERR_CONFIG;
    }
    if (c->mapping == RIFL_RDMA_MAP_CELL && c->bundle_packets > 1) {
        rifl_msg(msg, msglen, "rdma: bundle_packets is %u with the cell mapping, which sends "
                 "one packet per cell; give 0 or 1", c->bundle_packets);
        return RIFL_ERR_CONFIG;
    }
    RANGE(bundle_packets, 1, 255);
    RANGE(stage_packets, c->bundle_packets, 255);
    RANGE(max_nodes, 1, 65536);
    RANGE(max_regions, 1, 65536);
    RANGE(max_pds, 1, 65536);
    RANGE(max_mailboxes, 0, 126 * 64);
    RANGE(cq_depth, 1, 1u << 20);
    RANGE(max_transfers, 1, 1u << 20);
    RANGE(blocks_per_node, 1, TIDS);
    RANGE(transfers_per_pd, 1, 1024);
    RANGE(req_fifo, 1, 65536);
    RANGE(block_timeout_ns, 1000, 10000000000ull);
    RANGE(block_timeout_max_ns, c->block_timeout_ns, 100000000000ull);
    RANGE(page_fault_retry_ns, 1, 10000000000ull);
    RANGE(no_context_retry_ns, 1, 10000000000ull);
    RANGE(context_idle_ns, 1000, 1000000000000ull);
    RANGE(read_timeout_ns, 1000, 1000000000000ull);
#undef RANGE
    uint64_t least = 2 * block_life(c);
    const uint64_t most = 1000000000000000ull;
    if (c->block_memory_ns && (c->block_memory_ns < least || c->block_memory_ns > most)) {
        rifl_msg(msg, msglen, "rdma: block_memory_ns is %llu; give 0 (twice a block's longest "
                 "life, %llu with these timers) or %llu to %llu: a block must be remembered "
                 "as long as its packets can come",
                 (unsigned long long)c->block_memory_ns, (unsigned long long)least,
                 (unsigned long long)least, (unsigned long long)most);
        return RIFL_ERR_CONFIG;
    }
    return RIFL_OK;
}

int rifl_rdma_open(const rifl_rdma_config *cfg, rifl_rdma **out, char *msg, size_t msglen)
{
    if (!out)
        return rifl_null_arg(msg, msglen, "rifl_rdma_open", "out");
    *out = NULL;
    if (!cfg)
        return rifl_null_arg(msg, msglen, "rifl_rdma_open", "cfg");
    rifl_rdma_config c = *cfg; /* 0 for N or the stage: the mapping's */
    if (!c.bundle_packets)
        c.bundle_packets = rifl_rdma_mapping_packets(c.mapping);
    if (!c.stage_packets)
        c.stage_packets = 2 * c.bundle_packets < 255 ? 2 * c.bundle_packets : 255;
    int rc = check_config(&c, msg, msglen);
    if (rc)
        return rc;
    rifl_rdma *e = calloc(1, sizeof *e);
    if (!e)
        return RIFL_ERR_NOMEM;
    e->cfg = c;
    cfg = &e->cfg;
    unsigned slots = 2;
    while (slots < 2 * cfg->max_nodes)
        slots <<= 1;
    e->node_slots = slots;
    e->nodes = calloc(slots, sizeof *e->nodes);
    e->regions = calloc(cfg->max_regions, sizeof *e->regions);
    e->pds = calloc(cfg->max_pds, sizeof *e->pds);
    e->mailboxes = calloc(cfg->max_mailboxes ? cfg->max_mailboxes : 1, sizeof *e->mailboxes);
    e->n_xf = cfg->max_transfers;
    e->xf = calloc(e->n_xf, sizeof *e->xf);
    e->pool = malloc((size_t)POOL_PACKETS * sizeof *e->pool);
    e->pool_len = calloc(POOL_PACKETS, sizeof *e->pool_len);
    e->pool_free = malloc(POOL_PACKETS * sizeof *e->pool_free);
    e->active_cap = cfg->max_nodes * RIFL_RDMA_MAX_ROUTES;
    e->active = malloc((size_t)e->active_cap * sizeof *e->active);
    e->req = calloc(cfg->req_fifo, sizeof *e->req);
    e->cq = calloc(cfg->cq_depth, sizeof *e->cq);
    e->stage_mem = malloc((size_t)slots * RIFL_RDMA_MAX_ROUTES * cfg->stage_packets *
                          sizeof *e->stage_mem);
    e->done_mem = calloc((size_t)cfg->max_nodes * 2 * TIDS, sizeof *e->done_mem);
    e->done_at_mem = calloc((size_t)cfg->max_nodes * TIDS, sizeof *e->done_at_mem);
    if (!e->nodes || !e->regions || !e->pds || !e->mailboxes || !e->xf || !e->pool ||
        !e->pool_len || !e->pool_free || !e->active || !e->req || !e->cq || !e->stage_mem ||
        !e->done_mem || !e->done_at_mem) {
        rifl_rdma_close(e);
        return RIFL_ERR_NOMEM;
    }
    for (unsigned i = 0; i < slots; i++)
        for (unsigned r = 0; r < RIFL_RDMA_MAX_ROUTES; r++)
            e->nodes[i].q[r].data =
                e->stage_mem + ((size_t)i * RIFL_RDMA_MAX_ROUTES + r) * cfg->stage_packets;
    for (unsigned i = 0; i < POOL_PACKETS; i++)
        e->pool_free[i] = (uint16_t)(POOL_PACKETS - 1 - i);
    e->pool_nfree = POOL_PACKETS;
    for (unsigned t = 0; t < TIDS; t++)
        e->tid_free[t] = (uint16_t)t;
    e->tf_count = TIDS;
    for (unsigned i = 0; i < e->n_xf; i++)
        e->xf[i].next_issue = i + 1 < e->n_xf ? i + 1 : XF_NONE;
    e->xf_free_head = 0;
    e->issue_head = e->issue_tail = XF_NONE;
    e->next_va = FIRST_VA;
    e->due_min = UINT64_MAX;
    e->life_ns = block_life(cfg);
    e->memory_ns = cfg->block_memory_ns ? cfg->block_memory_ns : 2 * e->life_ns;
    *out = e;
    return RIFL_OK;
}

void rifl_rdma_close(rifl_rdma *e)
{
    if (!e)
        return;
    if (e->regions)
        for (unsigned i = 0; i < e->cfg.max_regions; i++) {
            free(e->regions[i].absent);
            free(e->regions[i].raised);
        }
    if (e->mailboxes)
        for (unsigned i = 0; i < e->cfg.max_mailboxes; i++) {
            free(e->mailboxes[i].msg);
            free(e->mailboxes[i].len);
            free(e->mailboxes[i].src);
        }
    free(e->nodes);
    free(e->regions);
    free(e->pds);
    free(e->mailboxes);
    free(e->xf);
    free(e->pool);
    free(e->pool_len);
    free(e->pool_free);
    free(e->active);
    free(e->req);
    free(e->cq);
    free(e->stage_mem);
    free(e->done_mem);
    free(e->done_at_mem);
    free(e);
}

uint32_t rifl_rdma_node(const rifl_rdma *e) { return e ? e->cfg.node : 0; }

/* ---- the route table ----------------------------------------------------------------------- */

static unsigned node_hash(uint32_t node, unsigned slots)
{
    return (unsigned)((node * 0x9E3779B1u) >> 7) & (slots - 1);
}

int rdma_node_slot(const rifl_rdma *e, uint32_t node)
{
    unsigned i = node_hash(node, e->node_slots);
    for (unsigned n = 0; n < e->node_slots; n++, i = (i + 1) & (e->node_slots - 1)) {
        if (!e->nodes[i].used)
            return -1;
        if (e->nodes[i].node == node)
            return (int)i;
    }
    return -1;
}

int rifl_rdma_add_node(rifl_rdma *e, uint32_t node, unsigned routes)
{
    if (!e || node > RIFL_RDMA_NODE_MAX || routes < 1 || routes > RIFL_RDMA_MAX_ROUTES)
        return RIFL_ERR_INVALID_ARG;
    int s = rdma_node_slot(e, node);
    if (s >= 0) {
        struct node *n = &e->nodes[s];
        for (unsigned r = routes; r < n->routes; r++)
            if (n->q[r].dn || n->q[r].pn)
                return RIFL_ERR_STATE; /* packets still staged on a route dropped */
        n->routes = routes;
        return RIFL_OK;
    }
    if (e->nodes_used == e->cfg.max_nodes)
        return RIFL_ERR_AGAIN;
    unsigned i = node_hash(node, e->node_slots);
    while (e->nodes[i].used)
        i = (i + 1) & (e->node_slots - 1);
    e->nodes[i].used = true;
    e->nodes[i].node = node;
    e->nodes[i].routes = routes;
    e->nodes[i].inflight = 0;
    e->nodes[i].done = e->done_mem + (size_t)e->nodes_used * 2 * TIDS; /* (nodes stay) */
    e->nodes[i].sent = e->nodes[i].done + TIDS;
    e->nodes[i].done_at = e->done_at_mem + (size_t)e->nodes_used * TIDS;
    e->nodes[i].quiet_until = 0;
    e->nodes_used++;
    return RIFL_OK;
}

/* ---- protection domains -------------------------------------------------------------------- */

struct pd *rdma_pd(rifl_rdma *e, uint16_t pdid)
{
    for (unsigned i = 0; i < e->cfg.max_pds; i++)
        if (e->pds[i].used && e->pds[i].pdid == pdid)
            return &e->pds[i];
    return NULL;
}

int rifl_rdma_alloc_pd(rifl_rdma *e, uint16_t pdid)
{
    if (!e)
        return RIFL_ERR_INVALID_ARG;
    if (rdma_pd(e, pdid))
        return RIFL_ERR_STATE;
    for (unsigned i = 0; i < e->cfg.max_pds; i++)
        if (!e->pds[i].used) {
            e->pds[i] = (struct pd){ .used = true, .pdid = pdid };
            return RIFL_OK;
        }
    return RIFL_ERR_AGAIN;
}

int rifl_rdma_dealloc_pd(rifl_rdma *e, uint16_t pdid)
{
    if (!e)
        return RIFL_ERR_INVALID_ARG;
    struct pd *p = rdma_pd(e, pdid);
    if (!p)
        return RIFL_ERR_INVALID_ARG;
    if (p->objects || p->writes || p->reads || p->serves)
        return RIFL_ERR_STATE;
    p->used = false;
    return RIFL_OK;
}

/* ---- memory ---------------------------------------------------------------------------------- */

int rifl_rdma_reg_mr(rifl_rdma *e, uint16_t pdid, void *addr, size_t len, unsigned access,
                     rifl_rdma_mr *mr)
{
    if (!e || !addr || !mr || len == 0 || (access & ~7u))
        return RIFL_ERR_INVALID_ARG;
    struct pd *p = rdma_pd(e, pdid);
    if (!p)
        return RIFL_ERR_INVALID_ARG;
    /* no region is larger than the space below the peripheral window (and
     * its page count, worked out below, cannot wrap) */
    if (len > RIFL_RDMA_PERIPHERAL_BASE - RIFL_RDMA_PAGE)
        return RIFL_ERR_INVALID_ARG;
    uint64_t pages = (len + RIFL_RDMA_PAGE - 1) / RIFL_RDMA_PAGE;
    /* regions are laid out one after another with a page between them,
     * below the peripheral window */
    if (e->next_va + (pages + 1) * RIFL_RDMA_PAGE > RIFL_RDMA_PERIPHERAL_BASE)
        return RIFL_ERR_AGAIN;
    for (unsigned i = 0; i < e->cfg.max_regions; i++) {
        struct region *r = &e->regions[i];
        if (r->used)
            continue;
        uint8_t *absent = calloc(pages, 1), *raised = calloc(pages, 1);
        if (!absent || !raised) {
            free(absent);
            free(raised);
            return RIFL_ERR_NOMEM;
        }
        *r = (struct region){ true, pdid, access, e->next_va, len, addr, absent, raised };
        e->next_va += (pages + 1) * RIFL_RDMA_PAGE;
        if (i >= e->regions_hi)
            e->regions_hi = i + 1;
        p->objects++;
        *mr = (rifl_rdma_mr){ r->va, len, pdid, access, i };
        return RIFL_OK;
    }
    return RIFL_ERR_AGAIN;
}

int rifl_rdma_dereg_mr(rifl_rdma *e, const rifl_rdma_mr *mr)
{
    if (!e || !mr || mr->handle >= e->cfg.max_regions)
        return RIFL_ERR_INVALID_ARG;
    struct region *r = &e->regions[mr->handle];
    if (!r->used || r->va != mr->va)
        return RIFL_ERR_INVALID_ARG;
    for (unsigned i = 0; i < e->n_xf; i++)
        if (e->xf[i].kind != XF_FREE && e->xf[i].src_region == (int)mr->handle)
            return RIFL_ERR_STATE;
    struct pd *p = rdma_pd(e, r->pdid);
    if (p)
        p->objects--;
    free(r->absent);
    free(r->raised);
    *r = (struct region){ 0 };
    return RIFL_OK;
}

int rdma_region_of(const rifl_rdma *e, uint64_t va)
{
    for (unsigned i = 0; i < e->regions_hi; i++) {
        const struct region *r = &e->regions[i];
        if (r->used && va >= r->va && va - r->va < r->len)
            return (int)i;
    }
    return -1;
}

/* The region of `pdid` holding [va, va + len) whole, with the rights
 * `need`; -1 when there is none. */
int rdma_region_find(const rifl_rdma *e, uint16_t pdid, uint64_t va, uint64_t len, unsigned need)
{
    int i = rdma_region_of(e, va);
    if (i < 0)
        return -1;
    const struct region *r = &e->regions[i];
    if (r->pdid != pdid || (r->access & need) != need || len > r->len - (va - r->va))
        return -1;
    return i;
}

bool rdma_resident(const rifl_rdma *e, int region, uint64_t va, uint64_t len, uint64_t *page)
{
    const struct region *r = &e->regions[region];
    uint64_t first = (va - r->va) / RIFL_RDMA_PAGE;
    uint64_t last = (va - r->va + (len ? len - 1 : 0)) / RIFL_RDMA_PAGE;
    for (uint64_t p = first; p <= last; p++)
        if (r->absent[p]) {
            *page = r->va + p * RIFL_RDMA_PAGE;
            return false;
        }
    return true;
}

void rdma_raise_fault(rifl_rdma *e, int region, uint64_t page_va)
{
    struct region *r = &e->regions[region];
    uint64_t p = (page_va - r->va) / RIFL_RDMA_PAGE;
    if (r->raised[p] || e->fn == FAULT_RING)
        return; /* raised already (or the ring is full: raised again on the next
                  * touch, or for a block stopped at it, once the ring has room) */
    r->raised[p] = 1;
    e->faults[(e->fh + e->fn++) % FAULT_RING] = page_va;
}

int rifl_rdma_set_resident(rifl_rdma *e, uint64_t va, size_t len, bool resident)
{
    if (!e || len == 0)
        return RIFL_ERR_INVALID_ARG;
    int i = rdma_region_of(e, va);
    if (i < 0)
        return RIFL_ERR_INVALID_ARG;
    struct region *r = &e->regions[i];
    if (len > r->len - (va - r->va))
        return RIFL_ERR_INVALID_ARG;
    for (uint64_t p = (va - r->va) / RIFL_RDMA_PAGE; p <= (va - r->va + len - 1) / RIFL_RDMA_PAGE;
         p++) {
        r->absent[p] = !resident;
        if (resident)
            r->raised[p] = 0;
    }
    /* blocks stopped at a source page made resident go again at the next
     * rifl_rdma_advance, as rifl_rdma_page_in has them */
    for (unsigned t = 0; resident && t < TIDS; t++) {
        struct block *b = &e->blocks[t];
        if (b->state == B_PAGE && b->wait_page >= (va & ~(uint64_t)(RIFL_RDMA_PAGE - 1)) &&
            b->wait_page < va + len) {
            b->state = B_RETRY;
            b->due = 0;
            e->due_min = 0;
        }
    }
    return RIFL_OK;
}

bool rifl_rdma_poll_fault(rifl_rdma *e, uint64_t *page_va)
{
    if (!e || !page_va || !e->fn)
        return false;
    *page_va = e->faults[e->fh];
    e->fh = (e->fh + 1) % FAULT_RING;
    e->fn--;
    /* a block that stopped at a source page while the ring was full waits
     * for that page with no timer: its fault goes in now that there is room */
    for (unsigned t = 0; t < TIDS && e->fn < FAULT_RING; t++) {
        const struct block *b = &e->blocks[t];
        if (b->state != B_PAGE)
            continue;
        int i = rdma_region_of(e, b->wait_page);
        if (i >= 0 && !e->regions[i].raised[(b->wait_page - e->regions[i].va) / RIFL_RDMA_PAGE])
            rdma_raise_fault(e, i, b->wait_page);
    }
    return true;
}

int rifl_rdma_page_in(rifl_rdma *e, uint64_t page_va, uint64_t now)
{
    if (!e)
        return RIFL_ERR_INVALID_ARG;
    page_va &= ~(uint64_t)(RIFL_RDMA_PAGE - 1);
    int i = rdma_region_of(e, page_va);
    if (i < 0)
        return RIFL_ERR_INVALID_ARG;
    struct region *r = &e->regions[i];
    uint64_t p = (page_va - r->va) / RIFL_RDMA_PAGE;
    r->absent[p] = 0;
    r->raised[p] = 0;
    /* blocks stopped at this source page go again, as a new attempt */
    for (unsigned t = 0; t < TIDS; t++) {
        struct block *b = &e->blocks[t];
        if (b->state == B_PAGE && b->wait_page == page_va) {
            b->state = B_RETRY;
            b->due = now;
            if (now < e->due_min)
                e->due_min = now;
        }
    }
    return RIFL_OK;
}

/* ---- mailboxes ------------------------------------------------------------------------------- */

struct mailbox *rdma_mailbox(rifl_rdma *e, uint16_t pdid, unsigned index)
{
    for (unsigned i = 0; i < e->cfg.max_mailboxes; i++)
        if (e->mailboxes[i].used && e->mailboxes[i].pdid == pdid &&
            e->mailboxes[i].index == index)
            return &e->mailboxes[i];
    return NULL;
}

int rifl_rdma_create_mailbox(rifl_rdma *e, uint16_t pdid, unsigned index, unsigned depth)
{
    if (!e || index < RIFL_RDMA_MAILBOX_FIRST || index > RIFL_RDMA_MAILBOX_LAST || depth < 1 ||
        depth > 65536)
        return RIFL_ERR_INVALID_ARG;
    struct pd *p = rdma_pd(e, pdid);
    if (!p)
        return RIFL_ERR_INVALID_ARG;
    if (rdma_mailbox(e, pdid, index))
        return RIFL_ERR_STATE;
    for (unsigned i = 0; i < e->cfg.max_mailboxes; i++) {
        struct mailbox *m = &e->mailboxes[i];
        if (m->used)
            continue;
        m->msg = malloc((size_t)depth * sizeof *m->msg);
        m->len = malloc(depth * sizeof *m->len);
        m->src = malloc(depth * sizeof *m->src);
        if (!m->msg || !m->len || !m->src) {
            free(m->msg);
            free(m->len);
            free(m->src);
            *m = (struct mailbox){ 0 };
            return RIFL_ERR_NOMEM;
        }
        m->used = true;
        m->pdid = pdid;
        m->index = index;
        m->depth = depth;
        m->head = m->count = 0;
        p->objects++;
        return RIFL_OK;
    }
    return RIFL_ERR_AGAIN;
}

bool rdma_mailbox_put(struct mailbox *m, const uint8_t *msg, unsigned len, uint32_t src)
{
    if (m->count == m->depth)
        return false;
    unsigned at = (m->head + m->count++) % m->depth;
    memcpy(m->msg[at], msg, len);
    m->len[at] = (uint16_t)len;
    m->src[at] = src;
    return true;
}

int rifl_rdma_poll_mailbox(rifl_rdma *e, uint16_t pdid, unsigned index, void *buf, size_t cap,
                           size_t *len, uint32_t *src_node)
{
    if (!e || (!buf && cap))
        return RIFL_ERR_INVALID_ARG;
    struct mailbox *m = rdma_mailbox(e, pdid, index);
    if (!m)
        return RIFL_ERR_INVALID_ARG;
    if (!m->count)
        return 0;
    unsigned n = m->len[m->head];
    memcpy(buf, m->msg[m->head], n < cap ? n : cap);
    if (len)
        *len = n;
    if (src_node)
        *src_node = m->src[m->head];
    m->head = (m->head + 1) % m->depth;
    m->count--;
    return 1;
}

/* ---- completions ---------------------------------------------------------------------------- */

void rdma_complete(rifl_rdma *e, unsigned x, int status, uint64_t now)
{
    struct xfer *t = &e->xf[x];
    struct pd *p = rdma_pd(e, t->pdid);
    if (p) {
        if (t->kind == XF_READ)
            p->reads--;
        else if (t->kind == XF_SERVE)
            p->serves--;
        else
            p->writes--;
    }
    if (t->kind == XF_SERVE) {
        if (status == RIFL_OK)
            e->st.read_requests_served++;
        else
            e->st.failed_transfers++;
    } else {
        /* posts are refused while the queue could overflow, so there is room */
        static const rifl_rdma_op op[] = { [XF_WRITE] = RIFL_RDMA_OP_WRITE,
                                           [XF_READ] = RIFL_RDMA_OP_READ,
                                           [XF_SEND] = RIFL_RDMA_OP_SEND };
        rifl_rdma_wc *wc = &e->cq[(e->ch + e->cn++) % e->cfg.cq_depth];
        *wc = (rifl_rdma_wc){ t->wr_id, status, op[t->kind], t->len, t->posted, now };
        e->st.completions++;
        if (status != RIFL_OK)
            e->st.failed_transfers++;
    }
    /* its blocks still in flight are let go: their answers are stale now */
    for (unsigned b = 0; t->blocks_out && b < TIDS; b++) {
        struct block *k = &e->blocks[b];
        if (k->state != B_FREE && k->xf == x) {
            rdma_chain_drop(e, b); /* no block of a chain waits for it in vain */
            if (k->node_ix >= 0) {
                struct node *n = &e->nodes[k->node_ix];
                n->inflight--;
                /* never cut a packet: its node never saw its generation,
                 * which the TID's next block to the node takes */
                if (k->attempt == 0 && k->pkt_n == 0 && !k->notify_sent && n->sent[b] == k->gen)
                    n->sent[b] = (uint16_t)((k->gen - 1) & 1023u);
            }
            k->state = B_FREE;
            e->tid_free[(e->tf_head + e->tf_count++) % TIDS] = (uint16_t)b;
            t->blocks_out--;
        }
    }
    t->kind = XF_FREE;
    t->next_issue = e->xf_free_head;
    e->xf_free_head = x;
    e->pending--;
}

unsigned rifl_rdma_poll_cq(rifl_rdma *e, rifl_rdma_wc *wc, unsigned max)
{
    if (!e || !wc)
        return 0;
    unsigned n = 0;
    while (n < max && e->cn) {
        wc[n++] = e->cq[e->ch];
        e->ch = (e->ch + 1) % e->cfg.cq_depth;
        e->cn--;
    }
    return n;
}

unsigned rifl_rdma_pending(const rifl_rdma *e) { return e ? e->pending : 0; }

/* ---- counters ------------------------------------------------------------------------------ */

const rifl_rdma_stats *rifl_rdma_get_stats(const rifl_rdma *e) { return e ? &e->st : NULL; }

#define S rifl_rdma_stats
static const rifl_counter rdma_counters[] = {
    RIFL_COUNTER(S, tx_packets, "packets sent"),
    RIFL_COUNTER(S, rx_packets, "packets received"),
    RIFL_COUNTER(S, tx_bytes, "bytes of bundles sent (prefix included)"),
    RIFL_COUNTER(S, bundles_tx, "bundles (Layer 2 messages) sent"),
    RIFL_COUNTER(S, cells_tx, "Layer 2 cells those bundles take"),
    RIFL_COUNTER(S, blocks_sent, "block attempts whose packets all went"),
    RIFL_COUNTER(S, blocks_acked, "blocks acknowledged"),
    RIFL_COUNTER(S, retransmitted_blocks, "blocks sent again (NACK, timeout or source fault)"),
    RIFL_COUNTER_AT(S, "nacks_tx_unused", nacks_tx, 0, "always 0 (ACKs are acks_tx)"),
    RIFL_COUNTER_AT(S, "nacks_tx_page_fault", nacks_tx, 1, "NACKs sent: page not resident"),
    RIFL_COUNTER_AT(S, "nacks_tx_no_context", nacks_tx, 2, "NACKs sent: no context or mailbox full"),
    RIFL_COUNTER_AT(S, "nacks_tx_crc", nacks_tx, 3, "NACKs sent: payload CRC wrong"),
    RIFL_COUNTER_AT(S, "nacks_tx_decode", nacks_tx, 4, "NACKs sent: inconsistent fields"),
    RIFL_COUNTER_AT(S, "nacks_tx_protection", nacks_tx, 5, "NACKs sent: protection"),
    RIFL_COUNTER_AT(S, "nacks_rx_unused", nacks_rx, 0, "always 0 (ACKs are acks_rx)"),
    RIFL_COUNTER_AT(S, "nacks_rx_page_fault", nacks_rx, 1, "NACKs received: page not resident"),
    RIFL_COUNTER_AT(S, "nacks_rx_no_context", nacks_rx, 2, "NACKs received: no context or mailbox full"),
    RIFL_COUNTER_AT(S, "nacks_rx_crc", nacks_rx, 3, "NACKs received: payload CRC wrong"),
    RIFL_COUNTER_AT(S, "nacks_rx_decode", nacks_rx, 4, "NACKs received: inconsistent fields"),
    RIFL_COUNTER_AT(S, "nacks_rx_protection", nacks_rx, 5, "NACKs received: protection"),
    RIFL_COUNTER(S, acks_tx, "ACKs sent"),
    RIFL_COUNTER(S, acks_rx, "ACKs received for a block in flight"),
    RIFL_COUNTER(S, timeouts, "blocks that timed out"),
    RIFL_COUNTER(S, src_page_faults, "blocks stopped at a source page not resident"),
    RIFL_COUNTER(S, dst_page_faults, "packets NACKed for a destination page not resident"),
    RIFL_COUNTER(S, duplicates_dropped, "packets dropped as duplicates"),
    RIFL_COUNTER(S, duplicates_remembered, "of them, packets of a block completed here whose "
                                           "context had gone to another (any attempt; a new "
                                           "one ACKed again)"),
    RIFL_COUNTER(S, stale_dropped, "packets of an older generation or attempt dropped "
                                   "(with no context, older than the TID's last block begun "
                                   "here)"),
    RIFL_COUNTER(S, protection_violations, "packets refused by the protection checks"),
    RIFL_COUNTER(S, hdr_edc_errors, "headers whose hdr_edc failed (rest of bundle dropped)"),
    RIFL_COUNTER(S, ftr_crc_errors, "footers whose ftr_crc failed (rest of bundle dropped)"),
    RIFL_COUNTER(S, bundle_errors, "bundles cut short: bad prefix, reserved type, bad count"),
    RIFL_COUNTER(S, skipped_packets, "reserved header-only packets skipped"),
    RIFL_COUNTER(S, notifications_written, "notification records written"),
    RIFL_COUNTER(S, scheduler_reenqueues, "scheduler visits that found no room and moved on"),
    RIFL_COUNTER(S, responses_dropped, "responses dropped: their route's queue, or the "
                                       "packet pool's reserve, was full"),
    RIFL_COUNTER(S, stale_responses, "responses matching no block in flight"),
    RIFL_COUNTER(S, read_requests_served, "reads served as writes back to their initiator"),
    RIFL_COUNTER(S, completions, "completions queued"),
    RIFL_COUNTER(S, failed_transfers, "transfers that failed"),
    RIFL_COUNTER(S, mailbox_messages, "messages put into user mailboxes"),
    RIFL_COUNTER(S, chain_waits, "blocks held (DB) behind the block before them in a chain"),
    RIFL_COUNTER(S, nacks_coalesced, "packets dropped unanswered: their attempt was NACKed "
                                     "without a context"),
    RIFL_COUNTER(S, memory_expired, "packets taken for a new block that the memory of their "
                                    "TID's last block here, no packet of which came for "
                                    "block_memory_ns, would have dropped (as older, or as that "
                                    "block's own)"),
    RIFL_COUNTER(S, quiet_dropped, "packets (not responses) dropped unanswered in the quiet "
                                   "time after rifl_rdma_forget_node: its old engine's still on "
                                   "their way, or its new one's, sent again later"),
    RIFL_COUNTER(S, blocks_expired, "blocks given up (E_RETRY_EXCEEDED) with a packet to cut "
                                    "past their longest life (a retry held up by a source "
                                    "page), when a receiver may have forgotten them"),
    RIFL_COUNTER(S, restart_failed, "this engine's transfers to a node, and reads served for "
                                    "it, failed (E_PEER_RESTARTED) by rifl_rdma_forget_node"),
    RIFL_COUNTER(S, restart_dropped, "packets staged for a node, and its read requests not yet "
                                     "served, dropped by rifl_rdma_forget_node: its old "
                                     "engine's"),
};
#undef S
RIFL_COUNTER_TABLE(rifl_rdma_counters, rdma_counters, rifl_rdma_stats)

const char *rifl_rdma_strerror(int status)
{
    switch (status) {
    case RIFL_OK: return "OK";
    case RIFL_ERR_INVALID_ARG: return "E_INVAL";
    case RIFL_ERR_AGAIN: return "E_NO_RESOURCES";
    case RIFL_ERR_UNREACHABLE: return "E_NO_ROUTE";
    case RIFL_ERR_PROTECTION: return "E_LOCAL_PROTECTION";
    case RIFL_ERR_REMOTE_PROTECTION: return "E_REMOTE_PROTECTION";
    case RIFL_ERR_RETRY_EXCEEDED: return "E_RETRY_EXCEEDED";
    case RIFL_ERR_TIMEOUT: return "E_TIMEOUT";
    case RIFL_ERR_PEER_RESTARTED: return "E_PEER_RESTARTED";
    default: return rifl_strerror(status);
    }
}

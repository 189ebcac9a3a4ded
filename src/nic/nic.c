/* The NIC: per-destination queues, cells out as per-VOQ flow control lets
 * them go, cells in checked and reassembled per source and route. */
#include <stdlib.h>
#include <string.h>

#include "nic_priv.h"

const rifl_nic_config rifl_nic_default_config = {
    .tx_messages = 1024,
    .vls = 1,
};

void rifl_nic_free(rifl_nic *n)
{
    if (!n)
        return;
    free(n->msg);
    free(n->dst);
    free(n->ready);
    free(n->ctx);
    free(n);
}

/* The arrays rifl_nic_create allocates, in elements: its messages, a queue
 * and a ready bit per destination, and hosts x paths receive contexts (so
 * a network's NICs hold hosts^2 x paths).  rifl_nic_memory counts by
 * these. */
struct nic_sizes {
    size_t msg, dst, ready, ctx;
};

static struct nic_sizes nic_sizes(unsigned tx_messages, unsigned hosts, unsigned paths)
{
    return (struct nic_sizes){ .msg = tx_messages, .dst = hosts, .ready = (hosts + 63) / 64,
                               .ctx = (size_t)hosts * paths };
}

uint64_t rifl_nic_memory(const rifl_nic_config *cfg, unsigned hosts, unsigned max_paths)
{
    if (!cfg)
        return 0;
    struct nic_sizes z = nic_sizes(cfg->tx_messages, hosts, max_paths);
    return sizeof(rifl_nic) + (uint64_t)z.msg * sizeof(struct nic_msg) +
           (uint64_t)z.dst * sizeof(struct nic_dst) + (uint64_t)z.ready * sizeof(uint64_t) +
           (uint64_t)z.ctx * sizeof(struct nic_ctx);
}

int rifl_nic_create(const rifl_nic_config *cfg, const rifl_nic_map *map, unsigned host,
                    rifl_nic **out, char *msg, size_t msglen)
{
    if (!out || !map || !cfg) {
        rifl_msg(msg, msglen, "rifl_nic_create: %s is NULL",
                 !out ? "out" : !map ? "map" : "cfg");
        return RIFL_ERR_INVALID_ARG;
    }
    *out = NULL;
    if (cfg->tx_messages < 1 || cfg->tx_messages >= NIC_NONE) {
        rifl_msg(msg, msglen, "tx_messages = %u: give 1 or more messages", cfg->tx_messages);
        return RIFL_ERR_CONFIG;
    }
    if (cfg->vls > RIFL_NIC_MAX_VLS) {
        rifl_msg(msg, msglen, "vls = %u: give 1 to %u virtual lanes", cfg->vls,
                 RIFL_NIC_MAX_VLS);
        return RIFL_ERR_CONFIG;
    }
    if (host >= map->hosts) {
        rifl_msg(msg, msglen, "host %u: the network has hosts 0 to %u", host, map->hosts - 1);
        return RIFL_ERR_CONFIG;
    }
    rifl_nic *n = calloc(1, sizeof *n);
    if (!n)
        return RIFL_ERR_NOMEM;
    n->cfg = *cfg;
    n->map = map;
    n->host = host;
    n->vls = cfg->vls ? cfg->vls : 1;
    n->hosts = map->hosts;
    struct nic_sizes z = nic_sizes(cfg->tx_messages, map->hosts, map->paths);
    n->words = (unsigned)z.ready;
    n->msg = calloc(z.msg, sizeof *n->msg);
    n->dst = calloc(z.dst, sizeof *n->dst);
    n->ready = calloc(z.ready, sizeof *n->ready);
    n->ctx = calloc(z.ctx, sizeof *n->ctx);
    if (!n->msg || !n->dst || !n->ready || !n->ctx) {
        rifl_nic_free(n);
        return RIFL_ERR_NOMEM;
    }
    for (unsigned i = 0; i < cfg->tx_messages; i++)
        n->msg[i].next = i + 1 < cfg->tx_messages ? i + 1 : NIC_NONE;
    n->free_msg = 0;
    for (unsigned d = 0; d < map->hosts; d++)
        n->dst[d].head = n->dst[d].tail = NIC_NONE;
    *out = n;
    return RIFL_OK;
}

unsigned rifl_nic_host(const rifl_nic *n) { return n ? n->host : 0; }

/* ---- sending ------------------------------------------------------------------ */

/* Queue message bytes for `dst` on route `path`; `raw`: they carry their
 * own prefix and go into cells as they are. */
static int enqueue(rifl_nic *n, unsigned dst, unsigned path, const void *data, size_t len,
                   bool raw, uint64_t tag, uint64_t now)
{
    if (n->free_msg == NIC_NONE) {
        n->st.post_refused++;
        return RIFL_ERR_AGAIN;
    }
    unsigned count;
    const rifl_nic_route *r = rifl_nic_map_routes(n->map, n->host, dst, &count);
    uint32_t i = n->free_msg;
    struct nic_msg *m = &n->msg[i];
    n->free_msg = m->next;
    m->data = data;
    m->tag = tag;
    m->posted = now;
    m->len = (uint32_t)len;
    m->raw = raw;
    m->cells = raw ? (uint32_t)((len + RIFL_L2_CELL_PAYLOAD - 1) / RIFL_L2_CELL_PAYLOAD)
                   : (uint32_t)rifl_l2_msg_cells(len);
    m->sent = 0;
    m->next = NIC_NONE;
    m->path = (uint8_t)path;
    m->voq = r[path].voq;
    struct nic_dst *d = &n->dst[dst];
    if (d->tail == NIC_NONE) {
        d->head = i;
        d->head_since = now;
        n->ready[dst >> 6] |= 1ull << (dst & 63);
    } else {
        n->msg[d->tail].next = i;
    }
    d->tail = i;
    n->queued++;
    n->queued_cells += m->cells;
    n->st.msg_posted++;
    return RIFL_OK;
}

int rifl_nic_post(rifl_nic *n, unsigned dst, uint64_t flow, const void *data, size_t len,
                  uint64_t tag, uint64_t now)
{
    if (!n || !data || dst >= n->hosts || dst == n->host || len == 0 || len > RIFL_L2_MSG_MAX)
        return RIFL_ERR_INVALID_ARG;
    unsigned count;
    rifl_nic_map_routes(n->map, n->host, dst, &count);
    return enqueue(n, dst, rifl_topo_flow_path(n->host, dst, flow, count), data, len, false,
                   tag, now);
}

int rifl_nic_post_msg(rifl_nic *n, unsigned dst, unsigned path, const void *data, size_t len,
                      uint64_t tag, uint64_t now)
{
    if (!n || !data || dst >= n->hosts || dst == n->host ||
        len <= RIFL_L2_MSG_PREFIX_BYTES || len > RIFL_L2_MSG_PREFIX_BYTES + RIFL_L2_MSG_MAX)
        return RIFL_ERR_INVALID_ARG;
    unsigned count;
    rifl_nic_map_routes(n->map, n->host, dst, &count);
    if (path >= count)
        return RIFL_ERR_INVALID_ARG;
    const uint8_t *p = data;
    uint64_t body = p[0] == RIFL_L2_PROTO_DATA   ? (uint64_t)p[1] << 16 | (uint64_t)p[2] << 8 | p[3]
                    : p[0] == RIFL_L2_PROTO_RDMA ? (uint64_t)p[2] << 8 | p[3]
                                                 : 0;
    if (body + RIFL_L2_MSG_PREFIX_BYTES != len)
        return RIFL_ERR_INVALID_ARG; /* reserved protocol, or the prefix's length is not len's */
    return enqueue(n, dst, path, data, len, true, tag, now);
}

static inline bool voq_paused(const rifl_nic *n, unsigned q)
{
    return (n->paused[q >> 6] >> (q & 63)) & 1;
}

/* The next destination at or after the round-robin pointer whose head cell
 * may go, or -1. */
static int pick(rifl_nic *n)
{
    unsigned W = n->words, start = n->rr;
    for (unsigned k = 0; k <= W; k++) {
        unsigned w = (start >> 6) + k;
        if (w >= W)
            w -= W;
        uint64_t bits = n->ready[w];
        if (k == 0)
            bits &= ~0ull << (start & 63);
        else if (k == W)
            bits &= ~(~0ull << (start & 63));
        for (; bits; bits &= bits - 1) {
            unsigned d = w * 64 + (unsigned)__builtin_ctzll(bits);
            if (voq_paused(n, n->msg[n->dst[d].head].voq)) {
                n->st.paused_skips++;
                continue;
            }
            if (n->vl_blocked && (n->vl_blocked >> (d % n->vls)) & 1) {
                n->st.credit_skips++;
                continue;
            }
            return (int)d;
        }
    }
    return -1;
}

int rifl_nic_next_cell(rifl_nic *n, uint64_t now, uint8_t cell[RIFL_L2_CELL_BYTES],
                       rifl_nic_tx *tx)
{
    if (!n || !cell || !n->queued)
        return 0;
    int pd = pick(n);
    if (pd < 0)
        return 0;
    unsigned d = (unsigned)pd;
    struct nic_dst *q = &n->dst[d];
    uint32_t i = q->head;
    struct nic_msg *m = &n->msg[i];
    unsigned count;
    const rifl_nic_route *r = rifl_nic_map_routes(n->map, n->host, d, &count) + m->path;
    rifl_l2_hdr h;
    rifl_l2_hdr_make(&h, r->rel, r->hops);
    memcpy(cell, h.b, RIFL_L2_HDR_BYTES);
    if (m->raw) {
        size_t off = (size_t)m->sent * RIFL_L2_CELL_PAYLOAD, k = m->len - off;
        if (k > RIFL_L2_CELL_PAYLOAD)
            k = RIFL_L2_CELL_PAYLOAD;
        memcpy(cell + RIFL_L2_HDR_BYTES, m->data + off, k);
        memset(cell + RIFL_L2_HDR_BYTES + k, 0, RIFL_L2_CELL_PAYLOAD - k);
    } else {
        rifl_l2_msg_cell(m->data, m->len, m->sent, cell + RIFL_L2_HDR_BYTES);
    }
    if (tx) {
        tx->dst = d;
        tx->path = m->path;
        tx->voq = m->voq;
        tx->vl = d % n->vls;
        tx->tag = m->tag;
        tx->index = m->sent;
        tx->cells = m->cells;
        tx->posted = m->posted;
        tx->head = q->head_since > m->posted ? q->head_since : m->posted;
    }
    q->head_since = now;
    m->sent++;
    n->queued_cells--;
    n->st.cells_tx++;
    bool last = m->sent == m->cells;
    if (tx)
        tx->last = last;
    if (last) {
        q->head = m->next;
        if (q->head == NIC_NONE) {
            q->tail = NIC_NONE;
            n->ready[d >> 6] &= ~(1ull << (d & 63));
        }
        m->next = n->free_msg;
        m->data = NULL;
        n->free_msg = i;
        n->queued--;
        n->st.msg_sent++;
    }
    n->rr = d + 1 < n->hosts ? d + 1 : 0;
    return 1;
}

int rifl_nic_fc(rifl_nic *n, const rifl_l2_fc *fc)
{
    if (!n || !fc)
        return RIFL_ERR_INVALID_ARG;
    if (fc->on_valid) {
        n->st.fc_on++;
        n->paused[fc->on_queue >> 6] |= 1ull << (fc->on_queue & 63);
    }
    if (fc->off_valid) {
        n->st.fc_off++;
        n->paused[fc->off_queue >> 6] &= ~(1ull << (fc->off_queue & 63));
    }
    return RIFL_OK;
}

bool rifl_nic_paused(const rifl_nic *n, unsigned voq)
{
    return n && voq < 256 && voq_paused(n, voq);
}

int rifl_nic_block_vls(rifl_nic *n, uint32_t mask)
{
    if (!n || mask >> n->vls)
        return RIFL_ERR_INVALID_ARG;
    n->vl_blocked = mask;
    return RIFL_OK;
}

unsigned rifl_nic_tx_messages(const rifl_nic *n) { return n ? n->queued : 0; }
uint64_t rifl_nic_tx_cells(const rifl_nic *n) { return n ? n->queued_cells : 0; }

/* ---- receiving ------------------------------------------------------------------ */

/* The context of source `src` for `route`: the one holding it, else one
 * with no message in progress (taken over); NULL when all are busy. */
static struct nic_ctx *context_of(rifl_nic *n, unsigned src, const uint8_t *route,
                                  unsigned hops, unsigned *index)
{
    unsigned P = n->map->paths;
    struct nic_ctx *c = n->ctx + (size_t)src * P, *spare = NULL;
    for (unsigned k = 0; k < P; k++) {
        if (c[k].hops == hops && !memcmp(c[k].route, route, hops)) {
            *index = k;
            return &c[k];
        }
        if (!spare && !nic_ctx_busy(&c[k])) {
            spare = &c[k];
            *index = k;
        }
    }
    if (spare) {
        memset(spare->route, 0, sizeof spare->route);
        memcpy(spare->route, route, hops);
        spare->hops = (uint8_t)hops;
        /* which of this host's routes to the source is the way back */
        unsigned count;
        const rifl_nic_route *r = rifl_nic_map_routes(n->map, n->host, src, &count);
        spare->path = -1;
        for (unsigned k = 0; k < count && spare->path < 0; k++)
            if (r[k].hops == hops && !memcmp(r[k].rel, route, hops))
                spare->path = (int8_t)k;
    }
    return spare;
}

int rifl_nic_receive(rifl_nic *n, uint64_t now, const uint8_t *cell, size_t len,
                     rifl_nic_rx *rx)
{
    if (!n || !cell || !rx)
        return RIFL_ERR_INVALID_ARG;
    if (len != RIFL_L2_CELL_BYTES) {
        n->st.rx_bad_len++;
        return RIFL_ERR_FRAME;
    }
    rifl_l2_hdr h;
    memcpy(h.b, cell, RIFL_L2_HDR_BYTES);
    uint8_t route[RIFL_L2_MAX_HOPS];
    unsigned hops;
    if (rifl_l2_remain_hops(&h) != 0 || rifl_l2_reverse_route(&h, route, &hops) != RIFL_OK) {
        n->st.rx_bad_header++;
        return RIFL_ERR_FRAME;
    }
    int src = rifl_nic_map_follow(n->map, n->host, route, hops);
    if (src < 0 || (unsigned)src == n->host) {
        n->st.rx_bad_route++;
        return RIFL_ERR_FRAME;
    }
    unsigned k = 0;
    struct nic_ctx *c = context_of(n, (unsigned)src, route, hops, &k);
    if (!c) {
        n->st.rx_no_context++;
        return RIFL_ERR_AGAIN;
    }
    const uint8_t *p = cell + RIFL_L2_HDR_BYTES;
    memset(rx, 0, sizeof *rx);
    rx->src = (unsigned)src;
    rx->context = k;
    memcpy(rx->route, route, sizeof rx->route);
    rx->hops = hops;
    rx->path = c->path;
    if (!nic_ctx_busy(c)) {
        unsigned proto = p[0];
        uint64_t ml = 0;
        if (proto == RIFL_L2_PROTO_DATA)
            ml = (uint64_t)p[1] << 16 | (uint64_t)p[2] << 8 | p[3];
        else if (proto == RIFL_L2_PROTO_RDMA)
            ml = (uint64_t)p[2] << 8 | p[3];
        if (ml == 0) {
            n->st.rx_reserved++;
            return RIFL_ERR_FRAME;
        }
        c->proto = (uint8_t)proto;
        c->msg_len = (uint32_t)ml;
        c->got = 0;
        rx->first = true;
        memcpy(rx->prefix, p, RIFL_L2_MSG_PREFIX_BYTES);
        p += RIFL_L2_MSG_PREFIX_BYTES;
    }
    size_t room = (size_t)(RIFL_L2_CELL_BYTES - (p - cell));
    uint64_t left = c->msg_len - c->got;
    rx->data = p;
    rx->len = left < room ? (size_t)left : room;
    rx->offset = c->got;
    rx->msg_len = c->msg_len;
    rx->proto = c->proto;
    c->got += (uint32_t)rx->len;
    n->st.cells_rx++;
    if (c->got == c->msg_len) {
        rx->last = true;
        n->st.msg_rx++;
    }
    (void)now;
    return RIFL_OK;
}

const rifl_nic_stats *rifl_nic_get_stats(const rifl_nic *n) { return n ? &n->st : NULL; }

#define C(f, m) RIFL_COUNTER(rifl_nic_stats, f, m)
static const rifl_counter nic_counters[] = {
    C(msg_posted, "messages accepted for sending"),
    C(post_refused, "messages refused: every message slot in use"),
    C(cells_tx, "cells handed out to the link"),
    C(msg_sent, "messages whose last cell was handed out"),
    C(paused_skips, "times a destination's head cell waited for a paused VOQ"),
    C(credit_skips, "times a destination's head cell waited for credit on its virtual lane"),
    C(fc_on, "per-VOQ flow-control ONs received (VOQ paused)"),
    C(fc_off, "per-VOQ flow-control OFFs received (VOQ resumed)"),
    C(cells_rx, "cells delivered"),
    C(msg_rx, "messages whose last cell was delivered"),
    C(rx_bad_len, "cells dropped: not one cell long"),
    C(rx_bad_header, "cells dropped: hops left or a bad hop count"),
    C(rx_bad_route, "cells dropped: the return route leads to no host"),
    C(rx_reserved, "cells dropped: a first cell of a reserved protocol or length 0"),
    C(rx_no_context, "cells dropped: every receive context of the source busy"),
};
RIFL_COUNTER_TABLE(rifl_nic_counters, nic_counters, rifl_nic_stats)

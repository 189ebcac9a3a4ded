/* `rifl sim rdma`: RDMA engines on hosts over a path model of RIFL Layer 2
 * (rifl/sim/rdmasim.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/bond.h"
#include "rifl/credit.h"
#include "rifl/frame.h"
#include "rifl/l2.h"
#include "rifl/nic.h"
#include "rifl/rdma.h"
#include "rifl/rng.h"
#include "rifl/sim/rdmasim.h"

#include "netsim_priv.h"

const rifl_rdmasim_config rifl_rdmasim_default_config = {
    .senders = 1,
    .op = RIFL_RDMASIM_WRITE,
    .size = 1000000,
    .flows = 32,
    .bytes = 64000000,
    .link_gbps = 10,
    .frame_bits = 256,
    .hops = 1,
    .paths = 1,
    .link_ns = 100,
    .switch_ns = 200,
    .mapping = RIFL_RDMA_MAP_BUNDLE,
    .bundle_packets = 0,
    .go_back_n = false,
    .block_timeout_ns = 1e6,
    .page_fault = 0,
    .page_in_ns = 10000,
    .payload_crc = 0,
    .drop = 0,
    .wrong_pd = false,
    .seed = 1,
    .max_ns = 1e10,
    .topo = NULL,
    .fc = RIFL_NET_FC_VOQ,
    .ber = 0,
    .victim = false,
    .max_memory_gb = 0,
};

#define MAX_HOSTS 64
#define VICTIM_MAX 65536u  /* the victim's transfers: short, so that its rate
                              counted in whole transfers is exact enough */
#define PD_DATA 1
#define PD_OTHER 2
#define MAILBOX 2
/* a receiver's credit per VL, in cells, as rifl_net_create allows */
#define CREDIT_CELLS_MAX                                                                    \
    (RIFL_FC_CREDIT_CAP / ((RIFL_L2_CELL_BYTES + RIFL_FC_BLOCK_BYTES - 1) / RIFL_FC_BLOCK_BYTES))

/* The most and fewest lanes of the topology's bonded links (a link's own
 * lanes, else `lanes`); 0 and 0 with none. */
static void bonded_lanes(const rifl_topology *t, unsigned lanes, unsigned *most,
                         unsigned *fewest)
{
    *most = *fewest = 0;
    for (unsigned v = 0; v < t->nnodes; v++)
        for (unsigned p = 0; p < t->nodes[v].nports; p++) {
            unsigned nl = net_link_lanes(t, lanes, v, p);
            if (t->nodes[v].peer[p] < 0 || nl < 2)
                continue;
            if (nl > *most)
                *most = nl;
            if (!*fewest || nl < *fewest)
                *fewest = nl;
        }
}

/* The lanes and groups of a run over a network, by the rule rifl_net_create
 * holds its links to; and groups only where a link is bonded. */
static int check_net_lanes(const rifl_rdmasim_config *c, char *msg, size_t msglen)
{
    unsigned most, fewest;
    bonded_lanes(c->topo, c->lanes, &most, &fewest);
    enum net_lanes_fault lf = net_lanes_rule(c->lanes, c->group_lanes, fewest);
    if (lf == NET_LANES_COUNT)
        rifl_msg(msg, msglen, "lanes is %u; give 1, 2, 4, 8 or 16 lanes per link (0: 1)",
                 c->lanes);
    else if (lf == NET_LANES_GROUP)
        rifl_msg(msg, msglen, "group_lanes is %u; give a power of two up to a bonded link's "
                 "lanes (0: all of them, spatial only; 1: temporal only)", c->group_lanes);
    else if (c->group_lanes && !most)
        rifl_msg(msg, msglen, "group_lanes is %u without bonded links: no link has more than "
                 "one lane; give group_lanes 0, or lanes 2 to 16 (or a topology whose links "
                 "have lanes)", c->group_lanes);
    else if (lf == NET_LANES_UNFIT)
        rifl_msg(msg, msglen, "group_lanes is %u and a bonded link has %u lanes; give "
                 "group_lanes up to %u (0: all of a link's lanes)", c->group_lanes, fewest,
                 fewest);
    else
        return RIFL_OK;
    return RIFL_ERR_CONFIG;
}

int rifl_rdmasim_check(const rifl_rdmasim_config *c, char *msg, size_t msglen)
{
    if (!c)
        return rifl_null_arg(msg, msglen, "rifl_rdmasim_check", "cfg");
#define BAD(...)                                                                            \
    do {                                                                                    \
        rifl_msg(msg, msglen, __VA_ARGS__);                                                 \
        return RIFL_ERR_CONFIG;                                                             \
    } while (0)
    if (c->senders < 1 || c->senders >= MAX_HOSTS)
        BAD("senders is %u; give 1 to %u", c->senders, MAX_HOSTS - 1);
    if (c->op > RIFL_RDMASIM_SEND)
        BAD("op is %d; give write, read or send", (int)c->op);
    if (c->size < 1 || c->size > (c->op == RIFL_RDMASIM_SEND ? 256u : 1u << 30))
        BAD("size is %llu bytes; give 1 to %s", (unsigned long long)c->size,
            c->op == RIFL_RDMASIM_SEND ? "256 for sends (one mailbox message)" : "1 GiB");
    if (c->flows < 1 || c->flows > 1024)
        BAD("flows is %u; give 1 to 1024", c->flows);
    if (c->op == RIFL_RDMASIM_READ && c->flows * c->senders * (c->victim ? 2u : 1u) > 1024)
        BAD("reads: host 0 posts flows x senders%s = %u reads at once in its one domain, which "
            "holds at most 1024; lower flows or senders", c->victim ? " x 2 (the victim's)" : "",
            c->flows * c->senders * (c->victim ? 2u : 1u));
    if ((double)c->flows * (double)c->size * c->senders > 4e9)
        BAD("flows x size x senders is %.3g bytes of buffers; keep it under 4 GB",
            (double)c->flows * (double)c->size * c->senders);
    if (c->bytes < 1 || c->bytes / c->size > 100000000)
        BAD("bytes gives %llu transfers per sender; give 1 to 1e8 of them",
            (unsigned long long)(c->bytes / c->size));
    if (!(c->link_gbps >= 0.001 && c->link_gbps <= 10000))
        BAD("link_gbps is %g; give 0.001 to 10000", c->link_gbps);
    if (rifl_frame_width_check(c->frame_bits) != RIFL_OK)
        BAD("frame_bits is %u; give 64, 128, 256, 512, 1024 or 2048", c->frame_bits);
    if (c->hops < 1 || c->hops > RIFL_L2_MAX_HOPS)
        BAD("hops is %u; give 1 to %u", c->hops, RIFL_L2_MAX_HOPS);
    if (c->paths < 1 || c->paths > RIFL_RDMA_MAX_ROUTES)
        BAD("paths is %u; give 1 to %u", c->paths, RIFL_RDMA_MAX_ROUTES);
    if (!(c->link_ns >= 0 && c->link_ns <= 1e9) || !(c->switch_ns >= 0 && c->switch_ns <= 1e9))
        BAD("link_ns and switch_ns must be 0 to 1e9");
    if (!rifl_rdma_mapping_name(c->mapping))
        BAD("mapping is %d; give bundle, cell or compact", (int)c->mapping);
    if (c->bundle_packets > 227)
        BAD("bundle_packets is %u; give 1 to 227 (a bundle holds at most 65535 bytes), or 0 "
            "for the mapping's", c->bundle_packets);
    if (c->mapping == RIFL_RDMA_MAP_CELL && c->op == RIFL_RDMASIM_SEND &&
        c->size > RIFL_RDMA_CELL_PAYLOAD)
        BAD("size is %llu bytes for sends with the cell mapping, whose mailbox messages hold "
            "at most %u (rdma spec 7.3); give 1 to %u, or the bundle or compact mapping",
            (unsigned long long)c->size, RIFL_RDMA_CELL_PAYLOAD, RIFL_RDMA_CELL_PAYLOAD);
    if (c->mapping == RIFL_RDMA_MAP_CELL && c->bundle_packets > 1)
        BAD("bundle_packets is %u with the cell mapping (one packet per cell); give 0 or 1",
            c->bundle_packets);
    if (!(c->block_timeout_ns >= 1000 && c->block_timeout_ns <= 1e10))
        BAD("block_timeout_ns is %g; give 1000 to 1e10", c->block_timeout_ns);
    if (!(c->page_fault >= 0 && c->page_fault <= 1) || !(c->payload_crc >= 0 && c->payload_crc <= 0.5) ||
        !(c->drop >= 0 && c->drop <= 0.5))
        BAD("fault rates: page-fault 0 to 1, payload-crc and drop 0 to 0.5");
    if (c->payload_crc > 0 && c->mapping == RIFL_RDMA_MAP_COMPACT)
        BAD("payload_crc is %g with the compact mapping, which has no payload check (it "
            "relies on the RIFL link, which delivers every byte unchanged); damage payloads "
            "only with the bundle or cell mapping", c->payload_crc);
    if (!(c->page_in_ns >= 0 && c->page_in_ns <= 1e9))
        BAD("page_in_ns is %g; give 0 to 1e9", c->page_in_ns);
    if (!(c->max_ns > 0 && c->max_ns <= 1e13))
        BAD("max_ns is %g; give up to 1e13", c->max_ns);
    if (c->topo) {
        unsigned need = c->senders + 1 + (c->victim ? 1 : 0);
        if (c->topo->nhosts < need)
            BAD("the topology has %u hosts; %u senders to host 0%s need %u", c->topo->nhosts,
                c->senders, c->victim ? " and the victim" : "", need);
        if (c->max_ns > 1e12)
            BAD("max_ns is %g over a network, which runs at most 1e12 ns (1000 s); give "
                "max_ns (--max-s) up to that", c->max_ns);
        if (c->mapping == RIFL_RDMA_MAP_CELL)
            BAD("the cell mapping over a network: its packets carry no Layer 2 header for "
                "the NICs to route; give the bundle or compact mapping with a topology");
        if (c->drop > 0)
            BAD("drop is %g over a network: its links lose nothing (replays repair bit "
                "errors); give drop 0, or use the path model (no topology)", c->drop);
        if (c->fc != RIFL_NET_FC_VOQ && c->fc != RIFL_NET_FC_LINK &&
            c->fc != RIFL_NET_FC_CREDIT)
            BAD("fc is %d; give voq, credit or link", (int)c->fc);
        if (!(c->ber >= 0 && c->ber < 1e-3))
            BAD("ber is %g; give 0 to 1e-3 (exclusive)", c->ber);
        if (!(c->max_memory_gb >= 0 && c->max_memory_gb <= 1e6))
            BAD("max_memory_gb is %g; give 0 (no limit) to 1e6", c->max_memory_gb);
        if (c->fc != RIFL_NET_FC_CREDIT && (c->vls || c->credit_cells))
            BAD("%s is %u with %s flow control: virtual lanes and their credit are for credit "
                "flow control; give %s 0, or fc credit", c->vls ? "vls" : "credit_cells",
                c->vls ? c->vls : c->credit_cells,
                c->fc == RIFL_NET_FC_VOQ ? "per-VOQ" : "link-level",
                c->vls ? "vls" : "credit_cells");
        if (c->vls > RIFL_FC_MAX_DATA_VLS)
            BAD("vls is %u; give 1 to %u virtual lanes (0: 4)", c->vls, RIFL_FC_MAX_DATA_VLS);
        if (c->credit_cells > CREDIT_CELLS_MAX)
            BAD("credit_cells is %u; give 1 to %u cells per virtual lane (a receiver "
                "advertises at most %u blocks of %u bytes; 0: the 1.5-round-trip rule)",
                c->credit_cells, CREDIT_CELLS_MAX, RIFL_FC_CREDIT_CAP, RIFL_FC_BLOCK_BYTES);
        int rc = check_net_lanes(c, msg, msglen);
        if (rc != RIFL_OK)
            return rc;
    } else if (c->max_memory_gb != 0) {
        BAD("max_memory_gb is %g without a network (a topology): it limits a network's "
            "memory; give max_memory_gb 0, or a topology", c->max_memory_gb);
    } else if (c->victim || c->ber > 0) {
        BAD("%s needs a network (a topology): the path model has no shared links%s",
            c->victim ? "a victim flow" : "a bit error rate",
            c->victim ? "" : " or lanes");
    } else if (c->lanes > 1 || c->group_lanes || c->vls || c->credit_cells) {
        const char *what = c->lanes > 1 ? "lanes" : c->group_lanes ? "group_lanes"
                           : c->vls ? "vls" : "credit_cells";
        BAD("%s is %u without a network (a topology): the path model has no lanes or "
            "flow control; give %s %s, or a topology", what,
            c->lanes > 1 ? c->lanes : c->group_lanes ? c->group_lanes
                                      : c->vls ? c->vls : c->credit_cells,
            what, c->lanes > 1 ? "0 or 1" : "0");
    }
    if (c->victim && c->op != RIFL_RDMASIM_WRITE)
        BAD("a victim flow is of writes; give op write");
#undef BAD
    return RIFL_OK;
}

/* ---- the network ------------------------------------------------------------------------- */

struct msg {
    double at;
    unsigned to;
    rifl_rdma_route from;
    size_t len;
    uint8_t *bytes;
};

struct fault {
    double at;
    unsigned host;
    uint64_t page;
};

struct host {
    rifl_rdma *e;
    uint8_t *buf;             /* memory: source or target slices */
    rifl_rdma_mr mr;
    uint8_t *rec;             /* notification records, one per flow */
    rifl_rdma_mr rec_mr;
    double up_free, down_free;
    uint8_t *queued;          /* the bundle waiting beside the one on the wire */
    size_t queued_len;
    rifl_rdma_route queued_to;
    uint64_t posted, done;    /* transfers */
    uint64_t *seq;            /* per flow: transfers posted */
    uint64_t *seen;           /* per flow, sends of 8 bytes or more: the number
                                 the flow's next message in the mailbox may
                                 not be below */
    double *post_ns;
    /* sends under 8 bytes, which have no room for their flow and number:
     * the bytes of each one posted and not yet found in the mailbox */
    uint64_t *short_sent;
    size_t nshort, short_cap;
    uint64_t short_failed;    /* of them failed otherwise than refused */
    uint64_t bytes_done;      /* payload of its successful transfers */
    double done_ns;           /* its last completion */
    /* over a network: bundles waiting in the NIC, their buffers, and the
     * messages being reassembled per source and receive context */
    uint8_t **nb;             /* [nbufs] */
    uint32_t *nb_free;
    unsigned nb_nfree;
    uint8_t *nb_dst;          /* [nbufs]: its destination */
    unsigned *nic_to;         /* [nhosts]: bundles waiting in the NIC per destination */
    uint8_t **rx;             /* [nhosts * paths], allocated when first used */
    size_t *rx_len;
};

struct sim {
    const rifl_rdmasim_config *c;
    rifl_rdmasim_result *r;
    rifl_rng rng;
    unsigned nhosts;
    struct host h[MAX_HOSTS];
    uint64_t stride, per_sender;
    unsigned n;               /* N */
    double cell_ns, hop_ns;
    struct msg *q;            /* a binary heap on `at` */
    size_t qn, qcap;
    struct fault *f;
    size_t fn, fcap;
    uint8_t *out;
    size_t out_cap;
    double now, last_done;
    double lat_sum;
    bool oom;
    /* over a network */
    rifl_net *net;
    unsigned victim;          /* the victim host, or 0 */
    uint64_t victim_size;     /* its transfers: size, at most 64 KiB */
    unsigned rx_paths;        /* receive contexts per source */
    uint64_t target_notes;    /* host 0's notifications seen */
    uint64_t victim_bytes;
};

static void heap_push(struct sim *s, struct msg m)
{
    if (s->qn == s->qcap) {
        size_t cap = s->qcap ? 2 * s->qcap : 256;
        struct msg *q = realloc(s->q, cap * sizeof *q);
        if (!q) {
            s->oom = true;
            free(m.bytes);
            return;
        }
        s->q = q;
        s->qcap = cap;
    }
    size_t i = s->qn++;
    while (i && s->q[(i - 1) / 2].at > m.at) {
        s->q[i] = s->q[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->q[i] = m;
}

static struct msg heap_pop(struct sim *s)
{
    struct msg top = s->q[0], last = s->q[--s->qn];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->qn)
            break;
        if (c + 1 < s->qn && s->q[c + 1].at < s->q[c].at)
            c++;
        if (s->q[c].at >= last.at)
            break;
        s->q[i] = s->q[c];
        i = c;
    }
    if (s->qn)
        s->q[i] = last;
    return top;
}

/* Damage the payload of one WRITE packet at `pkt` with probability P. */
static void damage_one(struct sim *s, uint8_t *pkt, const rifl_rdma_packet *p)
{
    if (p->hdr.type == RIFL_RDMA_WRITE && p->hdr.length &&
        rifl_rng_double(&s->rng) < s->c->payload_crc) {
        pkt[RIFL_RDMA_HDR_BYTES + rifl_rng_below(&s->rng, p->hdr.length)] ^= 0x5A;
        s->r->damaged_packets++;
    }
}

/* Damage the payloads of WRITE packets in a message (a bundle, or with the
 * cell mapping one packet), each with probability P. */
static void damage(struct sim *s, uint8_t *b, size_t len)
{
    rifl_rdma_packet p;
    if (s->c->mapping == RIFL_RDMA_MAP_CELL) {
        if (rifl_rdma_packet_parse(b, len, &p) == RIFL_RDMA_PKT_OK)
            damage_one(s, b, &p);
        return;
    }
    rifl_rdma_bundle_reader rd;
    rifl_rdma_bundle_reader_init(&rd, b + RIFL_RDMA_BUNDLE_PREFIX, len - RIFL_RDMA_BUNDLE_PREFIX,
                                 b[1]);
    size_t off = RIFL_RDMA_BUNDLE_PREFIX;
    rifl_rdma_check ck;
    while (rifl_rdma_bundle_next(&rd, &p, &ck) == RIFL_RDMA_WALK_PACKET) {
        damage_one(s, b + off, &p);
        off += p.bytes;
    }
}

/* Put a bundle on host a's link toward its destination at time t0. */
static void transmit(struct sim *s, unsigned a, const uint8_t *b, size_t len, rifl_rdma_route to)
{
    unsigned dst = to.node;
    uint64_t cells = (len + RIFL_L2_CELL_PAYLOAD - 1) / RIFL_L2_CELL_PAYLOAD;
    double t0 = s->now > s->h[a].up_free ? s->now : s->h[a].up_free;
    double up_end = t0 + (double)cells * s->cell_ns;
    s->h[a].up_free = up_end;
    s->r->cells += cells;
    s->r->bundles++;
    bool lost = false;
    if (s->c->drop > 0)
        for (uint64_t i = 0; i < cells; i++)
            if (rifl_rng_double(&s->rng) < s->c->drop) {
                s->r->dropped_cells++;
                lost = true;
            }
    if (lost) {
        s->r->dropped_bundles++;
        return; /* the receiving NIC never completes the message */
    }
    /* the last switch sends the cells on the receiver's link one at a time */
    double arrive = up_end + s->hop_ns;
    double end = arrive + s->cell_ns;
    double busy = s->h[dst].down_free + (double)cells * s->cell_ns;
    if (busy > end)
        end = busy;
    s->h[dst].down_free = end;
    struct msg m = { end + s->c->link_ns, dst, { (uint32_t)a, to.route }, len, malloc(len) };
    if (!m.bytes) {
        s->oom = true;
        return;
    }
    memcpy(m.bytes, b, len);
    if (s->c->payload_crc > 0)
        damage(s, m.bytes, len);
    heap_push(s, m);
}

/* Host a's port: the link takes the waiting bundle when it is free, and the
 * engine fills the place beside it (only full bundles while the link is
 * busy, whatever is staged once the port is empty). */
static void pump(struct sim *s, unsigned a)
{
    struct host *h = &s->h[a];
    for (;;) {
        if (h->up_free > s->now) {
            if (!h->queued_len) {
                rifl_rdma_route to;
                size_t n = rifl_rdma_output(h->e, (uint64_t)s->now, false, h->queued, s->out_cap, &to);
                if (n) {
                    h->queued_len = n;
                    h->queued_to = to;
                }
            }
            return;
        }
        if (h->queued_len) {
            transmit(s, a, h->queued, h->queued_len, h->queued_to);
            h->queued_len = 0;
            continue;
        }
        rifl_rdma_route to;
        size_t n = rifl_rdma_output(h->e, (uint64_t)s->now, true, s->out, s->out_cap, &to);
        if (!n)
            return;
        transmit(s, a, s->out, n, to);
    }
}

/* ---- transfers ----------------------------------------------------------------------------- */

static void fill(uint8_t *p, uint64_t n, uint64_t seed)
{
    uint64_t x = seed;
    for (uint64_t i = 0; i < n; i += 8) {
        uint64_t v = rifl_splitmix64(&x);
        memcpy(p + i, &v, n - i < 8 ? n - i : 8);
    }
}

static uint64_t flow_seed(const struct sim *s, unsigned host, unsigned flow, uint64_t seq)
{
    return s->c->seed * 0x9E3779B97F4A7C15ull ^ ((uint64_t)host << 48) ^ ((uint64_t)flow << 32) ^ seq;
}

/* The bytes of a send under 8 bytes, as one number (zeros beyond them). */
static uint64_t short_send(const uint8_t *m, size_t len)
{
    uint64_t v = 0;
    memcpy(&v, m, len);
    return v;
}

/* Take one send of bytes `v` out of a sender's sends under 8 bytes: false
 * when none is waiting. */
static bool short_take(struct host *h, uint64_t v)
{
    for (size_t i = 0; i < h->nshort; i++)
        if (h->short_sent[i] == v) {
            h->short_sent[i] = h->short_sent[--h->nshort];
            return true;
        }
    return false;
}

static void short_add(struct sim *s, struct host *h, uint64_t v)
{
    if (h->nshort == h->short_cap) {
        size_t cap = h->short_cap ? 2 * h->short_cap : 64;
        uint64_t *p = realloc(h->short_sent, cap * sizeof *p);
        if (!p) {
            s->oom = true;
            return;
        }
        h->short_sent = p;
        h->short_cap = cap;
    }
    h->short_sent[h->nshort++] = v;
}

static int post(struct sim *s, unsigned a, unsigned flow)
{
    struct host *h = &s->h[a];
    const rifl_rdmasim_config *c = s->c;
    uint64_t off = (uint64_t)flow * s->stride;
    uint64_t seq = h->seq[flow]++;
    uint64_t now = (uint64_t)s->now;
    unsigned path = (unsigned)((flow + a) % 32);
    int rc;
    h->post_ns[flow] = s->now;
    if (flow >= c->flows) { /* the victim flow: host 1 to the victim host */
        fill(h->buf + off, s->victim_size, flow_seed(s, a, flow, seq));
        return rifl_rdma_post_write(h->e, PD_DATA, h->mr.va + off, s->victim,
                                    s->h[s->victim].mr.va + (uint64_t)(flow - c->flows) * s->stride,
                                    s->victim_size, path, NULL, flow, now);
    }
    h->posted++;
    switch (c->op) {
    case RIFL_RDMASIM_WRITE: {
        fill(h->buf + off, c->size, flow_seed(s, a, flow, seq));
        rifl_rdma_notification n = {
            rifl_rdma_gva_word(0, s->h[0].rec_mr.va + ((a - 1) * c->flows + flow) * 32u),
            flow, (uint32_t)seq };
        rc = rifl_rdma_post_write(h->e, PD_DATA, h->mr.va + off, 0,
                                  s->h[0].mr.va + (uint64_t)(a - 1) * c->flows * s->stride + off,
                                  c->size, path, &n, flow, now);
        break;
    }
    case RIFL_RDMASIM_READ:
        /* host 0 reads sender a's slice `flow` into its own */
        fill(h->buf + off, c->size, flow_seed(s, a, flow, seq));
        rc = rifl_rdma_post_read(s->h[0].e, PD_DATA,
                                 s->h[0].mr.va + (uint64_t)(a - 1) * c->flows * s->stride + off,
                                 a, h->mr.va + off, c->size, path,
                                 (uint64_t)a << 32 | flow, now);
        break;
    default: {
        uint8_t m[256];
        fill(m, c->size, flow_seed(s, a, flow, seq));
        if (c->size >= 8)
            memcpy(m, &seq, 4), memcpy(m + 4, &flow, 4);
        rc = rifl_rdma_post_send(h->e, PD_DATA, 0, MAILBOX, m, c->size, flow, now);
        if (rc == RIFL_OK && c->size < 8)
            short_add(s, h, short_send(m, c->size));
        break;
    }
    }
    return rc;
}

static void completed(struct sim *s, unsigned a, const rifl_rdma_wc *wc)
{
    const rifl_rdmasim_config *c = s->c;
    rifl_rdmasim_result *r = s->r;
    unsigned flow = (unsigned)(wc->wr_id & 0xFFFFFFFFu);
    struct host *h = &s->h[a];
    uint64_t all = s->per_sender * c->senders;
    if (flow >= c->flows) { /* the victim flow */
        uint64_t off = (uint64_t)flow * s->stride;
        if (wc->status != RIFL_OK ||
            memcmp(h->buf + off, s->h[s->victim].buf + (uint64_t)(flow - c->flows) * s->stride,
                   s->victim_size))
            r->mismatches++;
        else if (r->transfers < all) {
            r->victim_transfers++;
            s->victim_bytes += s->victim_size;
        }
        if (r->transfers < all && post(s, a, flow) != RIFL_OK)
            r->mismatches++;
        return;
    }
    r->transfers++;
    h->done++;
    double lat = s->now - h->post_ns[flow];
    s->lat_sum += lat;
    if (lat < r->latency_ns_min)
        r->latency_ns_min = lat;
    s->last_done = s->now;
    if (wc->status != RIFL_OK) {
        if (c->op == RIFL_RDMASIM_SEND && c->size < 8 &&
            wc->status == RIFL_ERR_REMOTE_PROTECTION) {
            /* the target refused it: it never reaches the mailbox */
            uint8_t m[8];
            fill(m, c->size, flow_seed(s, a, flow, h->seq[flow] - 1));
            short_take(h, short_send(m, c->size));
        } else if (c->op == RIFL_RDMASIM_SEND && c->size < 8) {
            h->short_failed++; /* (it may or may not have arrived) */
        }
        if (!r->failed)
            r->first_error = wc->status;
        r->failed++;
    } else {
        r->bytes += c->size;
        h->bytes_done += c->size;
        h->done_ns = s->now;
        uint64_t off = (uint64_t)flow * s->stride;
        const uint8_t *want = h->buf + off;
        const uint8_t *got = s->h[0].buf + (uint64_t)(a - 1) * c->flows * s->stride + off;
        if (c->op != RIFL_RDMASIM_SEND && memcmp(want, got, c->size))
            r->mismatches++;
        /* a send is acknowledged once its message is in the mailbox, which
         * is read before completions are: a flow's message numbers arrive
         * in order, one at a time, so the one completing (number seq - 1)
         * has been seen.  Shorter sends are counted at the end. */
        if (c->op == RIFL_RDMASIM_SEND && c->size >= 8 && h->seen[flow] < h->seq[flow]) {
            r->mismatches++;
            r->acked_missing++;
        }
    }
    if (h->posted < s->per_sender)
        post(s, a, flow);
}

/* Host 0's mailbox (sends): every message checked against what was sent,
 * and each one at most once.  A message of 8 bytes or more starts with its
 * number and flow, from which its other bytes follow; a flow posts its
 * next send once the last one completed, which it does only once the
 * message is in the mailbox, so a flow's messages arrive in the order of
 * their numbers (a send that failed may be missing), and a number not
 * above the last one seen is a message delivered twice.  A shorter one
 * must be one of its sender's messages posted and not yet seen, byte for
 * byte. */
static void drain_mailbox(struct sim *s)
{
    uint8_t m[256], want[256];
    size_t len;
    uint32_t src;
    while (rifl_rdma_poll_mailbox(s->h[0].e, PD_DATA, MAILBOX, m, sizeof m, &len, &src) == 1) {
        if (src < 1 || src > s->c->senders || len != s->c->size) {
            s->r->mismatches++;
            continue;
        }
        if (len < 8) {
            if (!short_take(&s->h[src], short_send(m, len)))
                s->r->mismatches++;
            continue;
        }
        uint32_t seq, flow;
        memcpy(&seq, m, 4);
        memcpy(&flow, m + 4, 4);
        fill(want, len, flow_seed(s, src, flow, seq));
        memcpy(want, &seq, 4), memcpy(want + 4, &flow, 4);
        if (flow >= s->c->flows || memcmp(want, m, len)) {
            s->r->mismatches++;
            continue;
        }
        uint64_t *seen = &s->h[src].seen[flow];
        if (seq < *seen) /* (numbers below 2^32: at most 1e8 transfers per sender) */
            s->r->mismatches++;
        else
            *seen = (uint64_t)seq + 1;
    }
}

static void watch_records(struct sim *s)
{
    struct host *t = &s->h[0];
    for (unsigned i = 0; i < s->c->senders * s->c->flows; i++) {
        uint8_t *rec = t->rec + (size_t)i * 32;
        if (rec[31] != 1)
            continue;
        rec[31] = 0;
        unsigned a = 1 + i / s->c->flows, flow = i % s->c->flows;
        double lat = s->now - s->h[a].post_ns[flow];
        if (lat < s->r->notify_ns_min)
            s->r->notify_ns_min = lat;
    }
}

static void poll_all(struct sim *s)
{
    rifl_rdma_wc wc[64];
    unsigned n;
    if (s->c->op == RIFL_RDMASIM_READ) {
        while ((n = rifl_rdma_poll_cq(s->h[0].e, wc, 64)))
            for (unsigned i = 0; i < n; i++)
                completed(s, (unsigned)(wc[i].wr_id >> 32), &wc[i]);
    } else {
        for (unsigned a = 1; a <= s->c->senders; a++)
            while ((n = rifl_rdma_poll_cq(s->h[a].e, wc, 64)))
                for (unsigned i = 0; i < n; i++)
                    completed(s, a, &wc[i]);
    }
}

static void faults(struct sim *s)
{
    for (unsigned a = 0; a < s->nhosts; a++) {
        uint64_t page;
        while (rifl_rdma_poll_fault(s->h[a].e, &page)) {
            if (s->fn == s->fcap) {
                size_t cap = s->fcap ? 2 * s->fcap : 64;
                struct fault *f = realloc(s->f, cap * sizeof *f);
                if (!f) {
                    s->oom = true;
                    return;
                }
                s->f = f;
                s->fcap = cap;
            }
            s->f[s->fn++] = (struct fault){ s->now + s->c->page_in_ns, a, page };
        }
    }
    for (size_t i = 0; i < s->fn;) {
        if (s->f[i].at <= s->now) {
            rifl_rdma_page_in(s->h[s->f[i].host].e, s->f[i].page, (uint64_t)s->now);
            s->r->page_faults_served++;
            s->f[i] = s->f[--s->fn];
        } else {
            i++;
        }
    }
}


/* Sends under 8 bytes still missing from the mailbox at the end of a
 * finished run: more than the ones that failed (which may or may not have
 * arrived) means acknowledged ones never arrived. */
static void short_missing(struct sim *s)
{
    if (s->c->op != RIFL_RDMASIM_SEND || s->c->size >= 8 || s->r->transfers !=
        s->per_sender * s->c->senders)
        return;
    for (unsigned a = 1; a <= s->c->senders; a++) {
        const struct host *h = &s->h[a];
        if (h->nshort > h->short_failed) {
            s->r->mismatches += h->nshort - h->short_failed;
            s->r->acked_missing += h->nshort - h->short_failed;
        }
    }
}

/* ---- over a network (rifl sim net) ---------------------------------------------------------- */

/* What every host does once per cell time, done at host 0's turn: timers,
 * page faults, completions. */
static void net_engines(struct sim *s)
{
    for (unsigned a = 0; a < s->nhosts; a++)
        if (rifl_rdma_next_due(s->h[a].e) <= (uint64_t)s->now)
            rifl_rdma_advance(s->h[a].e, (uint64_t)s->now);
    faults(s);
    if (s->c->op == RIFL_RDMASIM_SEND)
        drain_mailbox(s);
    uint64_t notes = rifl_rdma_get_stats(s->h[0].e)->notifications_written;
    if (notes != s->target_notes && s->c->op == RIFL_RDMASIM_WRITE)
        watch_records(s);
    s->target_notes = notes;
    poll_all(s);
}

/* Host a's NIC takes bundles per destination, two waiting at most each. */
static int net_pump(struct sim *s, unsigned a)
{
    struct host *h = &s->h[a];
    for (unsigned d = 0; d < s->nhosts; d++) {
        if (d == a)
            continue;
        while (h->nic_to[d] < 2 && h->nb_nfree) {
            unsigned i = h->nb_free[h->nb_nfree - 1];
            rifl_rdma_route to;
            size_t len = rifl_rdma_output_to(h->e, (uint64_t)s->now, d, h->nic_to[d] == 0,
                                             h->nb[i], s->out_cap, &to);
            if (!len)
                break;
            s->r->cells += (len + RIFL_L2_CELL_PAYLOAD - 1) / RIFL_L2_CELL_PAYLOAD;
            s->r->bundles++;
            if (s->c->payload_crc > 0)
                damage(s, h->nb[i], len);
            int rc = rifl_net_post(s->net, a, d, to.route, h->nb[i], len, i);
            if (rc != RIFL_OK)
                return rc; /* the NIC holds far more than these buffers */
            h->nb_nfree--;
            h->nb_dst[i] = (uint8_t)d;
            h->nic_to[d]++;
        }
    }
    return RIFL_OK;
}

static int net_tick(void *ctx, rifl_net *n, unsigned host, double now_ns)
{
    (void)n;
    struct sim *s = ctx;
    s->now = now_ns;
    if (host == 0)
        net_engines(s);
    if (host >= s->nhosts)
        return RIFL_OK;
    int rc = net_pump(s, host);
    return s->oom ? RIFL_ERR_NOMEM : rc;
}

static void net_sent(void *ctx, unsigned host, uint64_t tag)
{
    struct sim *s = ctx;
    struct host *h = &s->h[host];
    h->nic_to[h->nb_dst[tag]]--;
    h->nb_free[h->nb_nfree++] = (uint32_t)tag;
}

/* A cell at host `host`: the bundle it belongs to is put together per
 * source and receive context, and handed to the engine whole. */
static void net_deliver(void *ctx, rifl_net *n, unsigned host, const rifl_nic_rx *rx,
                        double now_ns)
{
    (void)n;
    struct sim *s = ctx;
    if (host >= s->nhosts || rx->src >= s->nhosts || rx->proto != RIFL_L2_PROTO_RDMA ||
        rx->context >= s->rx_paths) {
        s->r->mismatches++; /* nothing else travels here */
        return;
    }
    struct host *h = &s->h[host];
    size_t k = (size_t)rx->src * s->rx_paths + rx->context;
    if (!h->rx[k] && !(h->rx[k] = malloc(s->out_cap))) {
        s->oom = true;
        return;
    }
    if (rx->first) {
        memcpy(h->rx[k], rx->prefix, RIFL_L2_MSG_PREFIX_BYTES);
        h->rx_len[k] = RIFL_L2_MSG_PREFIX_BYTES;
    }
    if (h->rx_len[k] + rx->len > s->out_cap) {
        s->r->mismatches++; /* larger than any bundle the engines make */
        h->rx_len[k] = 0;
        return;
    }
    memcpy(h->rx[k] + h->rx_len[k], rx->data, rx->len);
    h->rx_len[k] += rx->len;
    if (rx->last) {
        s->now = now_ns;
        /* answers take the message's route back (rdma.md section 1); a
         * topology whose way back is none of the routes the engine knows
         * (an asymmetric file) answers on the first */
        unsigned routes = rifl_net_paths(s->net, host, rx->src);
        if (routes > s->c->paths)
            routes = s->c->paths;
        unsigned back = rx->path >= 0 && (unsigned)rx->path < routes ? (unsigned)rx->path : 0;
        rifl_rdma_input(h->e, (uint64_t)now_ns, h->rx[k], h->rx_len[k],
                        (rifl_rdma_route){ rx->src, back });
        h->rx_len[k] = 0;
    }
}

static bool net_done(void *ctx)
{
    struct sim *s = ctx;
    return s->oom || s->r->transfers >= s->per_sender * s->c->senders;
}

static const rifl_net_app net_app = {
    .tick = net_tick, .deliver = net_deliver, .sent = net_sent, .done = net_done,
};

/* The frame rate the transfers share: the links' rate, or over a topology
 * whose links give their own, the slower of host 0's link and the senders'
 * links together (hosts numbered in the order the topology lists them).
 * Links between switches are not counted. */
static double bottleneck_gbps(const rifl_rdmasim_config *c)
{
    if (!c->topo)
        return c->link_gbps;
    double to0 = -1, senders = 0;
    unsigned h = 0;
    for (unsigned v = 0; v < c->topo->nnodes && h <= c->senders; v++) {
        const rifl_topo_node *nd = &c->topo->nodes[v];
        if (nd->is_switch)
            continue;
        double g = nd->attr[0].rate_gbps > 0 ? nd->attr[0].rate_gbps : c->link_gbps;
        if (h == 0)
            to0 = g;
        else
            senders += g;
        h++;
    }
    if (to0 < 0)
        return c->link_gbps;
    return senders > 0 && senders < to0 ? senders : to0;
}

static int net_create(struct sim *s, rifl_net_app *app, char *msg, size_t msglen)
{
    const rifl_rdmasim_config *c = s->c;
    *app = net_app;
    app->ctx = s;
    rifl_net_config nc = rifl_net_default_config;
    nc.topo = c->topo;
    nc.fc = c->fc;
    nc.vls = c->vls;
    nc.credit_cells = c->credit_cells;
    nc.lanes = c->lanes;
    nc.group_lanes = c->group_lanes;
    nc.link_gbps = c->link_gbps;
    nc.frame_bits = c->frame_bits;
    nc.ber = c->ber;
    nc.max_paths = c->paths;
    nc.seed = c->seed;
    nc.warmup_ns = 0;
    nc.window_ns = c->max_ns;
    nc.drain_ns = 0;
    nc.app = app;
    nc.max_memory_gb = c->max_memory_gb;
    s->rx_paths = c->paths;
    return rifl_net_create(&nc, &s->net, msg, msglen);
}

/* Run the network until the transfers are done (or max_ns). */
static int net_run(struct sim *s, char *msg, size_t msglen)
{
    int rc;
    while ((rc = rifl_net_run(s->net, 1u << 16)) == 0)
        ;
    if (rc < 0) {
        rifl_msg(msg, msglen, "rdma sim: the network simulation stopped: %s", rifl_strerror(rc));
        return rc;
    }
    rifl_net_result nr;
    if ((rc = rifl_net_result_get(s->net, &nr)) != RIFL_OK)
        return rc;
    rifl_rdmasim_result *r = s->r;
    r->replays = nr.replays;
    r->fc_frames = nr.fc_frames;
    r->max_voq_cells = nr.max_voq_cells;
    r->link_verify_fails = nr.verify_fails;
    r->cell_p99_ns = nr.latency.p99;
    if (nr.dropped || nr.corrupt)
        r->mismatches += nr.dropped + nr.corrupt;
    rifl_net_result_free(&nr);
    return RIFL_OK;
}

/* ---- set-up and the run -------------------------------------------------------------------- */

static int setup(struct sim *s, char *msg, size_t msglen)
{
    const rifl_rdmasim_config *c = s->c;
    s->nhosts = c->senders + 1;
    if (c->victim) {
        s->victim = s->nhosts++;
        s->victim_size = c->size < VICTIM_MAX ? c->size : VICTIM_MAX;
    }
    unsigned per_frame = c->frame_bits / 8 - 2;
    unsigned f = (RIFL_L2_CELL_BYTES + per_frame - 1) / per_frame;
    s->cell_ns = f * c->frame_bits / c->link_gbps;
    s->hop_ns = c->hops * (c->link_ns + c->switch_ns);
    s->stride = (c->size + RIFL_RDMA_PAGE - 1) / RIFL_RDMA_PAGE * RIFL_RDMA_PAGE;
    s->per_sender = (c->bytes + c->size - 1) / c->size;
    s->n = c->bundle_packets ? c->bundle_packets : rifl_rdma_mapping_packets(c->mapping);
    s->out_cap = RIFL_RDMA_BUNDLE_PREFIX + (size_t)s->n * RIFL_RDMA_MAX_PACKET;
    s->out = malloc(s->out_cap);
    if (!s->out)
        return RIFL_ERR_NOMEM;
    rifl_rdma_config ec = rifl_rdma_default_config;
    ec.mapping = c->mapping;
    ec.bundle_packets = s->n;
    ec.stage_packets = 0;
    ec.max_nodes = s->nhosts;
    ec.block_timeout_ns = (uint64_t)c->block_timeout_ns;
    ec.block_timeout_max_ns = 8 * ec.block_timeout_ns;
    ec.go_back_n = c->go_back_n;
    unsigned most = c->flows * (c->victim ? 2 : 1);
    /* (reads: host 0 posts every sender's in its one domain) */
    unsigned per_pd = most * (c->op == RIFL_RDMASIM_READ ? c->senders : 1);
    ec.transfers_per_pd = per_pd > 32 ? per_pd : 32;
    if (c->op == RIFL_RDMASIM_READ) {
        /* a read waits behind every read posted before it: its timeout
         * covers them all at the link rate, four times over (at least the
         * engine's 100 ms), or a read that is only queued fails while its
         * data still comes */
        double ns = 4.0 * per_pd * (double)c->size * 8.0 / c->link_gbps;
        if (ns > (double)ec.read_timeout_ns)
            ec.read_timeout_ns = ns < 1e12 ? (uint64_t)ns : 1000000000000ull;
    }
    /* (and the sixteenth the engine keeps for serving reads beyond that) */
    unsigned need = most * (c->op == RIFL_RDMASIM_READ ? c->senders : 1) + 64;
    ec.max_transfers = need + need / 15 + 16;
    if (ec.max_transfers < 1024)
        ec.max_transfers = 1024;
    ec.req_fifo = c->flows > 64 ? c->flows : 64;
    ec.cq_depth = ec.max_transfers + 64;
    uint64_t target_bytes = (uint64_t)c->senders * c->flows * s->stride;
    for (unsigned a = 0; a < s->nhosts; a++) {
        struct host *h = &s->h[a];
        ec.node = a;
        int rc = rifl_rdma_open(&ec, &h->e, msg, msglen);
        if (rc)
            return rc;
        for (unsigned b = 0; b < s->nhosts; b++) {
            unsigned routes = c->paths;
            if (s->net && b != a) { /* the routes the topology has, up to paths */
                routes = rifl_net_paths(s->net, a, b);
                if (routes > c->paths)
                    routes = c->paths;
            }
            rifl_rdma_add_node(h->e, b, routes ? routes : 1);
        }
        rifl_rdma_alloc_pd(h->e, PD_DATA);
        rifl_rdma_alloc_pd(h->e, PD_OTHER);
        unsigned flows = c->flows * (a == 1 && c->victim ? 2 : 1);
        uint64_t bytes = a ? (uint64_t)flows * s->stride : target_bytes;
        h->buf = calloc(bytes ? bytes : 1, 1);
        h->queued = malloc(s->out_cap);
        h->seq = calloc(flows, sizeof *h->seq);
        h->seen = calloc(flows, sizeof *h->seen);
        h->post_ns = calloc(flows, sizeof *h->post_ns);
        if (!h->buf || !h->queued || !h->seq || !h->seen || !h->post_ns)
            return RIFL_ERR_NOMEM;
        if (s->net) {
            unsigned nbufs = 2 * s->nhosts;
            h->nb = calloc(nbufs, sizeof *h->nb);
            h->nb_free = calloc(nbufs, sizeof *h->nb_free);
            h->nb_dst = calloc(nbufs, 1);
            h->nic_to = calloc(s->nhosts, sizeof *h->nic_to);
            h->rx = calloc((size_t)s->nhosts * s->rx_paths, sizeof *h->rx);
            h->rx_len = calloc((size_t)s->nhosts * s->rx_paths, sizeof *h->rx_len);
            if (!h->nb || !h->nb_free || !h->nb_dst || !h->nic_to || !h->rx || !h->rx_len)
                return RIFL_ERR_NOMEM;
            for (unsigned i = 0; i < nbufs; i++) {
                if (!(h->nb[i] = malloc(s->out_cap)))
                    return RIFL_ERR_NOMEM;
                h->nb_free[h->nb_nfree++] = nbufs - 1 - i;
            }
        }
        /* with wrong_pd the remote side's memory is in another domain: the
         * target's for writes and sends, the data's node for reads */
        bool other = c->wrong_pd && (c->op == RIFL_RDMASIM_READ ? a != 0 : a == 0);
        uint16_t pd = other ? PD_OTHER : PD_DATA;
        unsigned acc = RIFL_RDMA_LOCAL_WRITE | RIFL_RDMA_REMOTE_WRITE | RIFL_RDMA_REMOTE_READ;
        rc = rifl_rdma_reg_mr(h->e, pd, h->buf, bytes, acc, &h->mr);
        if (rc)
            return rc;
        if (a == 0) {
            h->rec = calloc((size_t)c->senders * c->flows, 32);
            if (!h->rec)
                return RIFL_ERR_NOMEM;
            rc = rifl_rdma_reg_mr(h->e, pd, h->rec, (size_t)c->senders * c->flows * 32, acc,
                                  &h->rec_mr);
            if (rc)
                return rc;
            rc = rifl_rdma_create_mailbox(h->e, pd, MAILBOX, 4096);
            if (rc)
                return rc;
            if (c->wrong_pd)
                memset(h->buf, 0xC5, bytes); /* a canary that must stay */
        }
        if (c->page_fault > 0 && a == 0) /* the target's pages */
            for (uint64_t p = 0; p < (bytes + RIFL_RDMA_PAGE - 1) / RIFL_RDMA_PAGE; p++)
                if (rifl_rng_double(&s->rng) < c->page_fault)
                    rifl_rdma_set_resident(h->e, h->mr.va + p * RIFL_RDMA_PAGE,
                                           RIFL_RDMA_PAGE < bytes - p * RIFL_RDMA_PAGE
                                               ? RIFL_RDMA_PAGE
                                               : bytes - p * RIFL_RDMA_PAGE,
                                           false);
    }
    return RIFL_OK;
}

static void teardown(struct sim *s)
{
    for (unsigned a = 0; a < s->nhosts; a++) {
        rifl_rdma_close(s->h[a].e);
        free(s->h[a].buf);
        free(s->h[a].rec);
        free(s->h[a].queued);
        free(s->h[a].seq);
        free(s->h[a].seen);
        free(s->h[a].post_ns);
        free(s->h[a].short_sent);
        if (s->h[a].nb)
            for (unsigned i = 0; i < 2 * s->nhosts; i++)
                free(s->h[a].nb[i]);
        if (s->h[a].rx)
            for (size_t i = 0; i < (size_t)s->nhosts * s->rx_paths; i++)
                free(s->h[a].rx[i]);
        free(s->h[a].nb);
        free(s->h[a].nb_free);
        free(s->h[a].nb_dst);
        free(s->h[a].nic_to);
        free(s->h[a].rx);
        free(s->h[a].rx_len);
    }
    rifl_net_free(s->net);
    for (size_t i = 0; i < s->qn; i++)
        free(s->q[i].bytes);
    free(s->q);
    free(s->f);
    free(s->out);
}

int rifl_rdmasim_run(const rifl_rdmasim_config *c, rifl_rdmasim_result *r, char *msg,
                     size_t msglen)
{
    if (!r)
        return rifl_null_arg(msg, msglen, "rifl_rdmasim_run", "res");
    int rc = rifl_rdmasim_check(c, msg, msglen);
    if (rc)
        return rc;
    memset(r, 0, sizeof *r);
    r->latency_ns_min = INFINITY;
    r->notify_ns_min = INFINITY;
    struct sim *s = calloc(1, sizeof *s);
    if (!s)
        return RIFL_ERR_NOMEM;
    s->c = c;
    s->r = r;
    rifl_rng_seed(&s->rng, c->seed);
    rifl_net_app app;
    rc = c->topo ? net_create(s, &app, msg, msglen) : RIFL_OK;
    if (rc == RIFL_OK)
        rc = setup(s, msg, msglen);
    if (rc) {
        if (rc == RIFL_ERR_NOMEM)
            rifl_msg(msg, msglen, "out of memory for %u hosts with %u flows of %llu bytes",
                     s->nhosts, c->flows, (unsigned long long)c->size);
        teardown(s);
        free(s);
        return rc;
    }
    for (unsigned a = 1; a <= c->senders; a++)
        for (unsigned f = 0; f < c->flows && s->h[a].posted < s->per_sender; f++)
            if ((rc = post(s, a, f)) != RIFL_OK) {
                rifl_msg(msg, msglen, "rdma sim: transfer %u of host %u could not be posted: %s (%s)",
                         f, a, rifl_rdma_strerror(rc), rifl_strerror(rc));
                teardown(s);
                free(s);
                return RIFL_ERR_STATE;
            }
    for (unsigned f = c->flows; s->victim && f < 2 * c->flows; f++)
        if ((rc = post(s, 1, f)) != RIFL_OK) {
            rifl_msg(msg, msglen, "rdma sim: victim transfer %u could not be posted: %s",
                     f - c->flows, rifl_rdma_strerror(rc));
            teardown(s);
            free(s);
            return RIFL_ERR_STATE;
        }
    uint64_t want = s->per_sender * c->senders;
    if (s->net && (rc = net_run(s, msg, msglen)) != RIFL_OK) {
        teardown(s);
        free(s);
        return rc;
    }
    while (!s->net && r->transfers < want && !s->oom) {
        while (s->qn && s->q[0].at <= s->now) {
            struct msg m = heap_pop(s);
            uint64_t before = rifl_rdma_get_stats(s->h[m.to].e)->notifications_written;
            rifl_rdma_input(s->h[m.to].e, (uint64_t)s->now, m.bytes, m.len, m.from);
            free(m.bytes);
            if (m.to == 0 && rifl_rdma_get_stats(s->h[0].e)->notifications_written != before &&
                c->op == RIFL_RDMASIM_WRITE)
                watch_records(s);
        }
        for (unsigned a = 0; a < s->nhosts; a++)
            if (rifl_rdma_next_due(s->h[a].e) <= (uint64_t)s->now)
                rifl_rdma_advance(s->h[a].e, (uint64_t)s->now);
        faults(s);
        if (c->op == RIFL_RDMASIM_SEND)
            drain_mailbox(s);
        poll_all(s);
        for (unsigned a = 0; a < s->nhosts; a++)
            pump(s, a);
        /* the next event */
        double next = s->qn ? s->q[0].at : INFINITY;
        for (unsigned a = 0; a < s->nhosts; a++) {
            double due = (double)rifl_rdma_next_due(s->h[a].e);
            if (due < next)
                next = due;
            if (s->h[a].up_free > s->now && s->h[a].up_free < next)
                next = s->h[a].up_free;
        }
        for (size_t i = 0; i < s->fn; i++)
            if (s->f[i].at < next)
                next = s->f[i].at;
        if (!(next < INFINITY) || next > c->max_ns)
            break;
        /* time is continuous here (a cell at 100 Gbit/s is 23.04 ns); the
         * engines see whole nanoseconds */
        s->now = next > s->now ? next : s->now + 1;
    }
    if (c->op == RIFL_RDMASIM_SEND)
        drain_mailbox(s);
    r->finished = r->transfers == want;
    short_missing(s);
    r->sim_ns = s->last_done;
    r->throughput_gbps = s->last_done > 0 ? (double)r->bytes * 8 / s->last_done : 0;
    r->bundle_packets = s->n;
    r->capacity_gbps = rifl_rdma_capacity_map_gbps(bottleneck_gbps(c), c->frame_bits, s->n,
                                                   c->mapping);
    r->ratio = r->capacity_gbps > 0 ? r->throughput_gbps / r->capacity_gbps : 0;
    r->latency_ns_mean = r->transfers ? s->lat_sum / (double)r->transfers : 0;
    if (!(r->latency_ns_min < INFINITY))
        r->latency_ns_min = 0;
    if (!(r->notify_ns_min < INFINITY))
        r->notify_ns_min = 0;
    r->verified = r->mismatches == 0 && r->finished;
    if (c->wrong_pd) { /* nothing may have reached the target's memory */
        uint64_t bytes = (uint64_t)c->senders * c->flows * s->stride;
        for (uint64_t i = 0; i < bytes; i++)
            if (s->h[0].buf[i] != 0xC5) {
                r->verified = false;
                break;
            }
    }
    for (unsigned a = 0; a < s->nhosts; a++) {
        const rifl_rdma_stats *st = rifl_rdma_get_stats(s->h[a].e);
        r->retransmitted_blocks += st->retransmitted_blocks;
        r->timeouts += st->timeouts;
        for (unsigned k = 1; k < RIFL_RDMA_STATUS_COUNT; k++)
            r->nacks += st->nacks_rx[k];
    }
    r->sender_gbps_min = INFINITY;
    for (unsigned a = 1; a <= c->senders; a++) {
        double g = s->h[a].done_ns > 0 ? (double)s->h[a].bytes_done * 8 / s->h[a].done_ns : 0;
        if (g < r->sender_gbps_min)
            r->sender_gbps_min = g;
        if (g > r->sender_gbps_max)
            r->sender_gbps_max = g;
    }
    r->victim_gbps = s->last_done > 0 ? (double)s->victim_bytes * 8 / s->last_done : 0;
    r->sender = *rifl_rdma_get_stats(s->h[1].e);
    r->target = *rifl_rdma_get_stats(s->h[0].e);
    bool oom = s->oom;
    teardown(s);
    free(s);
    if (oom) {
        rifl_msg(msg, msglen, "rdma sim: out of memory while running");
        return RIFL_ERR_NOMEM;
    }
    return RIFL_OK;
}

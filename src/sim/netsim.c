/* A rack over real RIFL links: NICs, switches and a lane pair per link,
 * driven one frame slot at a time (rifl/sim/netsim.h). */
#include "rifl/sim/netsim.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/bond.h"
#include "rifl/credit.h"
#include "rifl/frame.h"
#include "rifl/lane.h"
#include "rifl/nic.h"
#include "rifl/port.h"
#include "rifl/rng.h"
#include "rifl/sim/latency.h"
#include "rifl/sim/pair.h"

#include "netsim_priv.h"
#include "pair_priv.h"

const rifl_net_config rifl_net_default_config = {
    .topo = NULL,
    .fc = RIFL_NET_FC_VOQ,
    .pattern = RIFL_NET_UNIFORM,
    .arrivals = RIFL_NET_BERNOULLI,
    .load = 0.1,
    .msg_min = 252,
    .msg_max = 252,
    .burst_bytes = 1024,
    .incast = 8,
    .link_gbps = 100.0,
    .frame_bits = 256,
    .cable_m = 2.0,
    .transceiver_ns = 80.0,
    .switch_ns = 160.0,
    .ber = 0.0,
    .iterations = 3,
    .voq_cells = 0,
    .vls = 0,
    .credit_cells = 0,
    .max_paths = 8,
    .nic_messages = 1024,
    .warmup_ns = 10000.0,
    .window_ns = 50000.0,
    .drain_ns = 1000000.0,
    .seed = 1,
    .pcie_gbps = 0.0,
    .pcie_rtt_ns = 2500.0,
    .max_memory_gb = 0.0,     /* no limit (rifl sim net gives one) */
};

#define MSG_CAP (1u << 20)   /* largest message */
#define NIC_MESSAGES_MAX (1u << 24) /* messages a NIC queues, at most */
#define MAX_MEMORY_GB 1e6 /* the highest memory limit one may give */
#define NONE UINT32_MAX
/* a cell in credit blocks of 64 bytes */
#define CELL_BLOCKS ((RIFL_L2_CELL_BYTES + RIFL_FC_BLOCK_BYTES - 1) / RIFL_FC_BLOCK_BYTES)
#define CREDIT_CELLS_MAX (RIFL_FC_CREDIT_CAP / CELL_BLOCKS)

/* A cell in the network, from the NIC to its destination. */
struct rec {
    uint64_t gen, head, sent;
    uint64_t in[RIFL_L2_MAX_HOPS], out[RIFL_L2_MAX_HOPS];
    uint32_t msg, next;
    uint32_t index;
    uint8_t vl;               /* FC_CREDIT: its virtual lane */
    uint8_t payload[RIFL_L2_CELL_PAYLOAD];
};

struct msg {
    uint64_t gen;
    uint64_t ready;          /* host interface: slot it is read into the NIC */
    uint32_t src, dst, len, cells, arrived, next;
    uint32_t shift;          /* its bytes: pattern + shift */
    bool measured;
};

/* Records, by index, with a free list (see pool_take). */
struct pool {
    void *base;
    uint32_t n, free;
};

/* Tags of the cells in flight on one link direction, in order (the lane
 * delivers packets in order, exactly once). */
struct tagq {
    uint32_t *v;
    unsigned head, len, mask;
};

/* One end of a link. */
struct end {
    bool is_switch;
    unsigned idx, port;       /* host number, or switch and port */
    uint8_t buf[RIFL_L2_CELL_BYTES]; /* a cell being read */
    unsigned have;
    bool full;                /* a whole cell waits here (switch input, FC_LINK) */
    uint32_t rec;             /* its record */
};

/* Credits of one link direction, FC_CREDIT: the sender's registers and
 * the receiver's, per VL. */
struct cred {
    rifl_fc_tx tx[RIFL_FC_MAX_DATA_VLS];
    rifl_fc_rx rx[RIFL_FC_MAX_DATA_VLS];
    uint32_t freed[RIFL_FC_MAX_DATA_VLS];    /* receiver: cells freed since its last FCP */
    uint64_t last_fcp[RIFL_FC_MAX_DATA_VLS]; /* ... and when that FCP went */
};
/* a receiver's FCP for a VL goes once it has freed a quarter of the VL's
 * buffer, or, having freed anything, once FCP_WAIT cell times have passed
 * since its last FCP */
#define FCP_WAIT 16

struct link {
    rifl_pair *pair;          /* one lane each way; NULL when bonded */
    /* a bonded link: an end per side, a pair per lane (lane i of each end) */
    unsigned nl;              /* lanes: 1, or 2 to 16 when bonded */
    rifl_bond *bond[2];
    rifl_pair *lp[RIFL_BOND_MAX_LANES];
    bool lp_ref[RIFL_BOND_MAX_LANES];
    uint64_t step_mbps;       /* each lane's rate (the link's / nl) */
    /* an idle link is parked: not stepped from slot park_t on, for at most
     * park_room slots, then carried through them in one call
     * (rifl_pair_idle_skip) when that runs out or anything is sent on it */
    bool parked;
    uint64_t park_t, park_room;
    uint64_t last_send;       /* slot anything was last sent on it, either way */
    struct cred *cr;          /* FC_CREDIT: [i] the direction end i sends */
    uint32_t fcp_due[2];      /* FC_CREDIT: VLs whose FCP end i owes */
    struct end end[2];
    struct tagq q[2];         /* [i]: from lane i to lane 1 - i */
    bool by_ref;
    uint64_t bytes0[2];       /* lane tx_bytes at the window's start */
    uint64_t bytes1[2];       /* and at its end */
    uint64_t fc_frames[2];    /* per-VOQ frames sent by end i */
    double cable_m, ber[2];   /* its cable, each direction's BER */
    uint64_t rate_mbps;       /* its rate */
    uint64_t acc;             /* lanes slower than the network's step: a
                                 frame slot when acc, step_mbps more each
                                 network slot, reaches base_mbps */
};

struct pend_fc {
    rifl_l2_fc fc;
    bool valid;
};

struct sw {
    rifl_switch *sw;
    unsigned n;
    unsigned *link, *side;    /* per port */
    rifl_cell *out, *pipe;    /* pipe: [pipe_len][n] */
    uint8_t *outv, *pipev, *fcv;
    rifl_l2_fc *fc;
    struct pend_fc *pend;     /* [n][PEND] FC frames the lane refused */
    unsigned *npend;
    unsigned *in_pipe;        /* per output */
};
#define PEND 8

struct host {
    rifl_nic *nic;
    uint64_t *left;           /* finite workload: bytes still to send, by destination */
    uint32_t *act;            /* its destinations with bytes left */
    unsigned nact;
    bool done;
    unsigned link, side;
    rifl_rng rng;
    uint64_t next_cell;       /* cell slot of the next message */
    uint64_t train_left;      /* cells left in this train's draw (0: no train) */
    unsigned train_dst, a2a;
    uint32_t waiting;         /* a message the NIC (or the host interface's
                                 queue) refused, or NONE */
    uint64_t flow;
    rifl_geo idle;            /* cell times between trains, for the load on
                                 its own link */
    /* host interface: messages being read from host memory, in order (a
     * ring), and when each DMA direction is free again, ns */
    uint32_t *dma;
    unsigned dma_head, dma_len;
    double tx_free_ns, rx_free_ns;
    uint64_t rx_bytes;        /* payload delivered here in the window */
};

struct rifl_net {
    rifl_net_config cfg;
    rifl_nic_map *map;
    unsigned H, S, L, link_count;
    struct host *host;
    struct sw *sw;
    struct link *link;
    unsigned C, pipe_len, pipe_pos;
    uint64_t t, warm, win_end, limit;
    uint64_t lane_steps;      /* frame slots stepped, summed over the lanes */
    uint64_t idle_steps;      /* ... of them in idle skips */
    double slot_ns;
    uint64_t base_mbps;       /* the fastest link's rate: its frame slot is the
                                 time step */
    double offered_frac;      /* mean over hosts of their link's rate / base */
    struct pool recs, msgs;   /* cells in the network, messages */
    uint8_t *pattern;         /* 2 * MSG_CAP bytes */
    unsigned *perm;
    rifl_geo train;
    double mean_cells, mean_bytes;
    rifl_rng rng;
    rifl_hist lat, head, mct;
    double seg_sum[RIFL_L2_MAX_HOPS + 1][RIFL_NET_MAX_SEGMENTS];
    uint64_t seg_n[RIFL_L2_MAX_HOPS + 1][RIFL_NET_MAX_SEGMENTS];
    uint64_t gen_cells, deliv_cells, done_msgs, outstanding;
    uint64_t corrupt, stalls, inconsistent, nic_drops, lost, victim_bytes, victim_cells;
    uint64_t voq_full_waits;
    bool window_done, finished, app_done;
    unsigned senders, senders_done;  /* finite workload */
    uint64_t total_bytes, deliv_bytes;
    unsigned vls, credit_cells;  /* FC_CREDIT */
    unsigned fcp_batch;          /* FC_CREDIT: cells freed that call for an FCP */
};

/* ---- pools -------------------------------------------------------------------- */

/* A pool of records of `size` bytes with a uint32_t free-list link at
 * `link`: pool_take gives the index of a free one, growing the pool
 * (doubling) when none is free; NONE when memory runs out. */
static inline uint32_t *pool_link(const struct pool *p, size_t size, size_t link, uint32_t i)
{
    return (uint32_t *)((char *)p->base + (size_t)i * size + link);
}

static uint32_t pool_take(struct pool *p, size_t size, size_t link)
{
    if (p->free == NONE) {
        uint32_t old = p->n, grow = old ? old : 4096;
        void *b = realloc(p->base, (size_t)(old + grow) * size);
        if (!b)
            return NONE;
        p->base = b;
        for (uint32_t i = old; i < old + grow; i++)
            *pool_link(p, size, link, i) = i + 1 < old + grow ? i + 1 : NONE;
        p->free = old;
        p->n = old + grow;
    }
    uint32_t i = p->free;
    p->free = *pool_link(p, size, link, i);
    return i;
}

static void pool_put(struct pool *p, size_t size, size_t link, uint32_t i)
{
    *pool_link(p, size, link, i) = p->free;
    p->free = i;
}

#define REC(n, i) (((struct rec *)(n)->recs.base)[i])
#define MSG(n, i) (((struct msg *)(n)->msgs.base)[i])

static uint32_t rec_new(rifl_net *n)
{
    return pool_take(&n->recs, sizeof(struct rec), offsetof(struct rec, next));
}

static void rec_free(rifl_net *n, uint32_t i)
{
    pool_put(&n->recs, sizeof(struct rec), offsetof(struct rec, next), i);
}

static uint32_t msg_new(rifl_net *n)
{
    return pool_take(&n->msgs, sizeof(struct msg), offsetof(struct msg, next));
}

static void msg_free(rifl_net *n, uint32_t i)
{
    pool_put(&n->msgs, sizeof(struct msg), offsetof(struct msg, next), i);
}

static bool tag_push(struct tagq *q, uint32_t v)
{
    if (q->len > q->mask)
        return false;
    q->v[(q->head + q->len++) & q->mask] = v;
    return true;
}

static uint32_t tag_pop(struct tagq *q)
{
    if (!q->len)
        return NONE;
    uint32_t v = q->v[q->head];
    q->head = (q->head + 1) & q->mask;
    q->len--;
    return v;
}

/* ---- set-up ------------------------------------------------------------------- */

void rifl_net_free(rifl_net *n)
{
    if (!n)
        return;
    for (unsigned h = 0; n->host && h < n->H; h++) {
        rifl_nic_free(n->host[h].nic);
        free(n->host[h].left);
        free(n->host[h].act);
        free(n->host[h].dma);
    }
    for (unsigned s = 0; n->sw && s < n->S; s++) {
        struct sw *w = &n->sw[s];
        rifl_switch_free(w->sw);
        free(w->link); free(w->side); free(w->out); free(w->pipe); free(w->outv);
        free(w->pipev); free(w->fcv); free(w->fc); free(w->pend); free(w->npend);
        free(w->in_pipe);
    }
    for (unsigned l = 0; n->link && l < n->L; l++) {
        struct link *k = &n->link[l];
        rifl_pair_free(k->pair);
        for (unsigned i = 0; i < RIFL_BOND_MAX_LANES; i++)
            rifl_pair_free(k->lp[i]);
        rifl_bond_free(k->bond[0]);
        rifl_bond_free(k->bond[1]);
        free(n->link[l].cr);
        free(n->link[l].q[0].v);
        free(n->link[l].q[1].v);
    }
    free(n->host); free(n->sw); free(n->link); free(n->recs.base); free(n->msgs.base);
    free(n->pattern); free(n->perm);
    rifl_hist_free(&n->lat);
    rifl_hist_free(&n->head);
    rifl_hist_free(&n->mct);
    rifl_nic_map_free(n->map);
    free(n);
}

/* A message size CDF as rifl_net_cdf_parse gives it: 1 to RIFL_NET_CDF_MAX
 * points, each of 1 to MSG_CAP bytes at a P in [0, 1], neither decreasing,
 * the last P 1. */
static int check_cdf(const rifl_net_cdf *d, char *err, size_t errlen)
{
    if (d->n < 1 || d->n > RIFL_NET_CDF_MAX) {
        rifl_msg(err, errlen, "message size CDF: %u points; give 1 to %d (rifl_net_cdf_parse "
                              "reads them from text)", d->n, RIFL_NET_CDF_MAX);
        return RIFL_ERR_CONFIG;
    }
    for (unsigned k = 0; k < d->n; k++) {
        if (d->bytes[k] < 1 || d->bytes[k] > MSG_CAP) {
            rifl_msg(err, errlen, "message size CDF, point %u of %u: %u bytes; give 1 to %u",
                     k + 1, d->n, d->bytes[k], MSG_CAP);
            return RIFL_ERR_CONFIG;
        }
        if (!(d->p[k] >= 0 && d->p[k] <= 1)) {
            rifl_msg(err, errlen, "message size CDF, point %u of %u: P = %g; give a "
                                  "probability from 0 to 1", k + 1, d->n, d->p[k]);
            return RIFL_ERR_CONFIG;
        }
        if (k && (d->bytes[k] < d->bytes[k - 1] || d->p[k] < d->p[k - 1])) {
            rifl_msg(err, errlen, "message size CDF, point %u of %u: %u bytes at P = %g after "
                                  "%u at %g; sizes and P must not decrease", k + 1, d->n,
                     d->bytes[k], d->p[k], d->bytes[k - 1], d->p[k - 1]);
            return RIFL_ERR_CONFIG;
        }
    }
    if (d->p[d->n - 1] != 1) {
        rifl_msg(err, errlen, "message size CDF, point %u of %u: the last P is %g; it must be "
                              "1 (every message is at most the largest size)", d->n, d->n,
                 d->p[d->n - 1]);
        return RIFL_ERR_CONFIG;
    }
    return RIFL_OK;
}

static int check(const rifl_net_config *c, char *err, size_t errlen)
{
    if (!c->topo) {
        rifl_msg(err, errlen, "no topology: give one (a file or single:N, leafspine:LxSxH, "
                              "fattree:K)");
        return RIFL_ERR_CONFIG;
    }
    if (!(c->load > 0 && c->load <= 1)) {
        rifl_msg(err, errlen, "load = %g: give the offered load as a fraction in (0, 1]",
                 c->load);
        return RIFL_ERR_CONFIG;
    }
    if (c->sizes && check_cdf(c->sizes, err, errlen) != RIFL_OK)
        return RIFL_ERR_CONFIG;
    if (c->msg_min < 1 || c->msg_max < c->msg_min || c->msg_max > MSG_CAP) {
        rifl_msg(err, errlen, "message sizes %u..%u: give 1 <= min <= max <= %u bytes",
                 c->msg_min, c->msg_max, MSG_CAP);
        return RIFL_ERR_CONFIG;
    }
    if (!(c->link_gbps >= 1 && c->link_gbps <= 10000)) {
        rifl_msg(err, errlen, "link rate %g Gbit/s: give 1 to 10000", c->link_gbps);
        return RIFL_ERR_CONFIG;
    }
    if (!(c->ber >= 0 && c->ber < 1e-3)) {
        rifl_msg(err, errlen, "BER %g: give 0 to 1e-3 (exclusive)", c->ber);
        return RIFL_ERR_CONFIG;
    }
    if (!(c->cable_m >= 0 && c->cable_m <= 1000) ||
        !(c->transceiver_ns >= 0 && c->transceiver_ns <= 10000) ||
        !(c->switch_ns >= 0 && c->switch_ns <= 100000)) {
        rifl_msg(err, errlen, "cable %g m, transceiver %g ns, switch %g ns: give 0..1000 m, "
                              "0..10000 ns and 0..100000 ns",
                 c->cable_m, c->transceiver_ns, c->switch_ns);
        return RIFL_ERR_CONFIG;
    }
    if (!(c->warmup_ns >= 0) || !(c->window_ns > 0) || !(c->drain_ns >= 0) ||
        c->warmup_ns + c->window_ns + c->drain_ns > 1e12) {
        rifl_msg(err, errlen, "warm-up %g ns, window %g ns, drain %g ns: give a window > 0 "
                              "and at most 1000 s in all",
                 c->warmup_ns, c->window_ns, c->drain_ns);
        return RIFL_ERR_CONFIG;
    }
    if ((unsigned)c->pattern > RIFL_NET_ALL_TO_ALL ||
        (c->arrivals != RIFL_NET_BERNOULLI && c->arrivals != RIFL_NET_BURSTY)) {
        rifl_msg(err, errlen, "pattern %d or arrivals %d is unknown; use a rifl_net_pattern and "
                 "RIFL_NET_BERNOULLI or RIFL_NET_BURSTY", (int)c->pattern, (int)c->arrivals);
        return RIFL_ERR_CONFIG;
    }
    if (c->arrivals == RIFL_NET_BURSTY && !(c->burst_bytes >= 1)) {
        rifl_msg(err, errlen, "burst %g bytes: give a mean burst of 1 byte or more",
                 c->burst_bytes);
        return RIFL_ERR_CONFIG;
    }
    if (c->pattern == RIFL_NET_INCAST &&
        (c->incast < 1 || (uint64_t)c->incast + 2 > c->topo->nhosts)) {
        rifl_msg(err, errlen, "incast %u: give incast (--incast) 1 to %u senders for a "
                              "topology of %u hosts (hosts 1..N send to host 0, host N+1 "
                              "receives the victim flow), or a larger topology",
                 c->incast, c->topo->nhosts >= 3 ? c->topo->nhosts - 2 : 0, c->topo->nhosts);
        return RIFL_ERR_CONFIG;
    }
    if (c->observe && c->observe_host >= c->topo->nhosts) {
        rifl_msg(err, errlen, "watched host %u: the topology has hosts 0 to %u",
                 c->observe_host, c->topo->nhosts - 1);
        return RIFL_ERR_CONFIG;
    }
    if (c->bytes_per_flow > (uint64_t)1e12) {
        rifl_msg(err, errlen, "%llu bytes per flow: give at most 1e12 (0: a steady-state "
                              "window)", (unsigned long long)c->bytes_per_flow);
        return RIFL_ERR_CONFIG;
    }
    if (c->frame_bits < 64 || c->frame_bits > 2048 || (c->frame_bits & (c->frame_bits - 1))) {
        rifl_msg(err, errlen, "%u-bit frames: give 64, 128, 256, 512, 1024 or 2048",
                 c->frame_bits);
        return RIFL_ERR_CONFIG;
    }
    if (c->fc != RIFL_NET_FC_VOQ && c->fc != RIFL_NET_FC_LINK && c->fc != RIFL_NET_FC_CREDIT) {
        rifl_msg(err, errlen, "unknown flow control: use voq, credit or link");
        return RIFL_ERR_CONFIG;
    }
    if (c->vls > RIFL_FC_MAX_DATA_VLS) {
        rifl_msg(err, errlen, "%u virtual lanes: give 1 to %u (0: 4)", c->vls,
                 RIFL_FC_MAX_DATA_VLS);
        return RIFL_ERR_CONFIG;
    }
    if (c->credit_cells > CREDIT_CELLS_MAX) {
        rifl_msg(err, errlen, "%u cells of credit per virtual lane: give 1 to %u (a receiver "
                              "advertises at most 2048 blocks of 64 bytes; 0: the "
                              "1.5-round-trip rule)",
                 c->credit_cells, CREDIT_CELLS_MAX);
        return RIFL_ERR_CONFIG;
    }
    if (c->fc == RIFL_NET_FC_CREDIT && c->frame_bits >= 16 &&
        rifl_payload_bytes(c->frame_bits) < RIFL_FC_FCP_BYTES + 1) {
        rifl_msg(err, errlen, "%u-bit frames cannot carry an 8-byte flow control packet in "
                              "an extension frame: give 128-bit frames or wider for credits",
                 c->frame_bits);
        return RIFL_ERR_CONFIG;
    }
    if (!(c->pcie_gbps == 0 || (c->pcie_gbps >= 1 && c->pcie_gbps <= 10000)) ||
        !(c->pcie_rtt_ns >= 0 && c->pcie_rtt_ns <= 1e6)) {
        rifl_msg(err, errlen, "host interface %g Gbit/s, round trip %g ns: give 1 to 10000 "
                              "Gbit/s (0: none) and 0 to 1e6 ns (the paper's NIC: 90 Gbit/s, "
                              "2500 ns)", c->pcie_gbps, c->pcie_rtt_ns);
        return RIFL_ERR_CONFIG;
    }
    if (c->app && (!c->app->tick || !c->app->deliver || !c->app->sent || !c->app->done)) {
        rifl_msg(err, errlen, "a host application needs its tick, deliver, sent and done calls");
        return RIFL_ERR_CONFIG;
    }
    enum net_lanes_fault lf = net_lanes_rule(c->lanes, c->group_lanes, 0);
    if (lf == NET_LANES_COUNT) {
        rifl_msg(err, errlen, "%u lanes per link: give 1, 2, 4, 8 or 16", c->lanes);
        return RIFL_ERR_CONFIG;
    }
    if (lf == NET_LANES_GROUP) {
        rifl_msg(err, errlen, "groups of %u lanes: give a power of two up to a bonded link's "
                              "lanes (0: all of them, spatial only; 1: temporal only)",
                 c->group_lanes);
        return RIFL_ERR_CONFIG;
    }
    if (c->app && c->pcie_gbps > 0) {
        rifl_msg(err, errlen, "a host application runs without the host interface: give "
                              "pcie_gbps 0");
        return RIFL_ERR_CONFIG;
    }
    if (c->pcie_gbps > 0 && c->nic_messages == 0) {
        rifl_msg(err, errlen, "a host interface needs room for messages: give nic_messages "
                              "of 1 or more");
        return RIFL_ERR_CONFIG;
    }
    if (c->nic_messages < 1 || c->nic_messages > NIC_MESSAGES_MAX) {
        rifl_msg(err, errlen, "%u messages queued per NIC: give nic_messages (--nic-messages) "
                              "of 1 to %u", c->nic_messages, NIC_MESSAGES_MAX);
        return RIFL_ERR_CONFIG;
    }
    if (!(c->max_memory_gb >= 0 && c->max_memory_gb <= MAX_MEMORY_GB)) {
        rifl_msg(err, errlen, "a memory limit of %g GB: give 0 to %g (0: no limit)",
                 c->max_memory_gb, MAX_MEMORY_GB);
        return RIFL_ERR_CONFIG;
    }
    return RIFL_OK;
}

/* The mean message in cells and bytes, and the mean train in cells: a
 * bursty train whose draw is geometric with parameter p and counts cells
 * ends with the message in which the draw runs out; the draw being
 * memoryless, a message of c cells ends it with probability 1 - (1 - p)^c
 * whatever came before, so by Wald's identity a train holds
 * E[c] / E[1 - (1 - p)^c] cells (p = 1: one message). */
static void mean_sizes(const rifl_net_config *c, double p, double *cells, double *bytes,
                       double *train)
{
    double sc = 0, sb = 0, sq = 0, k = 0;
    const unsigned Q = 1u << 14;
    /* the CDF's mean over evenly spaced quantiles, or every size of the range */
    uint64_t from = c->sizes ? 0 : c->msg_min, to = c->sizes ? Q - 1 : c->msg_max;
    for (uint64_t i = from; i <= to; i++, k++) {
        uint64_t b = c->sizes ? rifl_net_cdf_size(c->sizes, (i + 0.5) / Q) : i;
        double n = (double)rifl_l2_msg_cells(b);
        sc += n;
        sb += (double)b;
        sq += 1 - pow(1 - p, n);
    }
    *cells = sc / k;
    *bytes = sb / k;
    *train = sc / sq;
}

enum net_lanes_fault net_lanes_rule(unsigned lanes, unsigned group_lanes, unsigned link_lanes)
{
    unsigned L = lanes ? lanes : 1, S = group_lanes;
    if (L > RIFL_BOND_MAX_LANES || (L & (L - 1)))
        return NET_LANES_COUNT;
    if (S > RIFL_BOND_MAX_LANES || (S & (S - 1)))
        return NET_LANES_GROUP;
    if (link_lanes > 1 && S > link_lanes)
        return NET_LANES_UNFIT;
    return NET_LANES_OK;
}

unsigned net_link_lanes(const rifl_topology *t, unsigned lanes, unsigned v, unsigned p)
{
    int own = t->nodes[v].attr ? t->nodes[v].attr[p].lanes : 0;
    return own > 0 ? (unsigned)own : lanes ? lanes : 1;
}

/* The lanes of a link of `cable_m` metres, `xcvr_ns` of transceivers and
 * `rate_gbps` (each below 0: the run's): the run's lane settings, K the
 * smallest safe one for its round trip (at least 5, as rifl sim link: a
 * replay resends 2^K frames, so a larger K costs goodput at every error).
 * `what` names the link in a message, or all links (`all`). */
static int link_lane(const rifl_net_config *cfg, const rifl_lane_config *base, double cable_m,
                     double xcvr_ns, double rate_gbps, unsigned lanes, const char *what,
                     bool all, rifl_lane_config *lc, char *err, size_t errlen)
{
    *lc = *base;
    lc->link.cable_m = cable_m >= 0 ? cable_m : cfg->cable_m;
    lc->link.transceiver_ns = xcvr_ns >= 0 ? xcvr_ns : cfg->transceiver_ns;
    /* a bonded link's lanes share its rate */
    lc->link.lane_rate_gbps = (rate_gbps >= 0 ? rate_gbps : cfg->link_gbps) / lanes;
    unsigned K = rifl_lane_min_fid_bits(&lc->link, lc->frame_bits, lc->pipeline_frames);
    if (K > 12) {
        rifl_msg(err, errlen, "%s of %g m at %g Gbit/s %s too long for any frame-ID width "
                              "(K would be %u > 12): shorten the cables or lower the rate",
                 what, lc->link.cable_m, lc->link.lane_rate_gbps,
                 all ? "are" : "is", K);
        return RIFL_ERR_CONFIG;
    }
    lc->fid_bits = K < 5 ? 5 : K;
    return RIFL_OK;
}

/* Cells that can still arrive at a VOQ once it asked for a pause, over a
 * link of lane settings lc: those on the wire both ways, those queued
 * upstream (a switch's pipeline and its lane's queue), and a cell time of
 * reading on each side. */
static unsigned link_rtt_cells(const rifl_net *n, const rifl_lane_config *lc, unsigned lanes)
{
    unsigned D = rifl_link_delay_frames(&lc->link, lc->frame_bits);
    uint64_t rate = (uint64_t)llround(lc->link.lane_rate_gbps * 1000);
    /* the link's frames in network slots (a slower link's are longer) */
    uint64_t frames = 2 * D + 2 * lc->pipeline_frames;
    /* a bonded link's lanes are slower: a replay on the lane that carries
     * the flow-control frames (2^K of its frames) holds a pause back for
     * several cell times, while the other direction goes on */
    if (lanes > 1)
        frames += 1u << lc->fid_bits;
    uint64_t wire = (frames * n->base_mbps + rate - 1) / rate;
    return (unsigned)((wire + n->C - 1) / n->C) + n->pipe_len + 4 + 2;
}

/* Room for the tags of the cells in flight one way over a link of lane
 * settings lc: a sender's queue, the wire, a replay's worth and the
 * receiver's buffer, in cells, with room to spare; a power of two. */
static unsigned link_tag_room(const rifl_net *n, const rifl_lane_config *lc, unsigned lanes)
{
    unsigned D = rifl_link_delay_frames(&lc->link, lc->frame_bits);
    unsigned rxbuf = lc->rx_buffer_frames ? lc->rx_buffer_frames : 2u << lc->fid_bits;
    unsigned need = lanes * (lc->tx_queue_frames + D + (1u << lc->fid_bits) + rxbuf) / n->C + 16;
    unsigned cap = 1;
    while (cap < need)
        cap <<= 1;
    return cap;
}

/* "the link A[:port] - B[:port]" for the link at port p of node v. */
static void link_name(const rifl_net_config *cfg, unsigned v, unsigned p, char *what,
                      size_t cap)
{
    const rifl_topology *t = cfg->topo;
    const rifl_topo_node *a = &t->nodes[v], *b = &t->nodes[a->peer[p]];
    char ea[48], eb[48];
    snprintf(ea, sizeof ea, "%s", a->name);
    snprintf(eb, sizeof eb, "%s", b->name);
    if (a->is_switch)
        snprintf(ea + strlen(ea), sizeof ea - strlen(ea), ":%u", p);
    if (b->is_switch)
        snprintf(eb + strlen(eb), sizeof eb - strlen(eb), ":%u", a->peer_port[p]);
    snprintf(what, cap, "the link %s - %s", ea, eb);
}

/* The lane settings of the link at port p of node v, and its lanes.  (Of
 * the configuration alone: the memory estimate runs it before the network
 * exists.) */
static int port_lane(const rifl_net_config *cfg, const rifl_lane_config *base, unsigned v,
                     unsigned p, rifl_lane_config *lc, unsigned *lanes, char *err,
                     size_t errlen)
{
    const rifl_topo_link_attr *at = &cfg->topo->nodes[v].attr[p];
    *lanes = net_link_lanes(cfg->topo, cfg->lanes, v, p);
    if (at->cable_m < 0 && at->transceiver_ns < 0 && at->rate_gbps < 0 && at->lanes <= 0) {
        *lc = *base;
        return RIFL_OK;
    }
    char what[112];
    link_name(cfg, v, p, what, sizeof what);
    return link_lane(cfg, base, at->cable_m, at->transceiver_ns, at->rate_gbps, *lanes, what,
                     false, lc, err, errlen);
}

/* Each switch's VOQs sized for the longest round trip among its links. */
static int switch_rtts(const rifl_net *n, const rifl_lane_config *base, unsigned *rtt,
                       char *err, size_t errlen)
{
    const rifl_topology *t = n->cfg.topo;
    unsigned s = 0, dflt = link_rtt_cells(n, base, n->cfg.lanes ? n->cfg.lanes : 1);
    for (unsigned v = 0; v < t->nnodes; v++) {
        const rifl_topo_node *a = &t->nodes[v];
        if (!a->is_switch)
            continue;
        rtt[s] = dflt;
        for (unsigned p = 0; p < a->nports; p++) {
            if (a->peer[p] < 0)
                continue;
            rifl_lane_config lc;
            unsigned lanes;
            int rc = port_lane(&n->cfg, base, v, p, &lc, &lanes, err, errlen);
            if (rc != RIFL_OK)
                return rc;
            unsigned r = link_rtt_cells(n, &lc, lanes);
            if (r > RIFL_SWITCH_MAX_RTT) {
                const rifl_topo_node *b = &t->nodes[a->peer[p]];
                rifl_msg(err, errlen, "the link %s:%u - %s has a round trip of %u cell times "
                         "of the network's fastest link, beyond a switch's %u: give it a "
                         "higher rate, fewer lanes or a shorter cable, or the network's other "
                         "links a lower rate (--link-gbps)", a->name, p, b->name, r,
                         RIFL_SWITCH_MAX_RTT);
                return RIFL_ERR_CONFIG;
            }
            if (r > rtt[s])
                rtt[s] = r;
        }
        s++;
    }
    return RIFL_OK;
}

/* A bonded link: an end on each side whose lanes, lane i of one end with
 * lane i of the other, are pairs of their own, each with its own error
 * processes.  An end's queue holds as many cells as a lane's would. */
static int make_bonded(rifl_net *n, struct link *k, const rifl_pair_config *pc, char *err,
                       size_t errlen)
{
    rifl_bond_config bc = {
        .lane = pc->lane,
        .lanes = k->nl,
        .group_lanes = n->cfg.group_lanes,
        .tx_queue_bytes = (pc->lane.tx_queue_frames / n->C) *
                          (RIFL_L2_CELL_BYTES + RIFL_BOND_PACKET_OVERHEAD),
    };
    for (int e = 0; e < 2; e++) {
        int rc = rifl_bond_create(&bc, &k->bond[e], err, errlen);
        if (rc != RIFL_OK)
            return rc;
    }
    for (unsigned i = 0; i < k->nl; i++) {
        rifl_pair_config lp = *pc;
        lp.lanes[0] = rifl_bond_lane(k->bond[0], i);
        lp.lanes[1] = rifl_bond_lane(k->bond[1], i);
        for (int d = 0; d < 2; d++) {
            uint64_t x = pc->seed[d] ^ (0xD1B54A32D192ED03ull * (i + 1));
            lp.seed[d] = rifl_splitmix64(&x);
        }
        int rc = rifl_pair_create(&lp, &k->lp[i], err, errlen);
        if (rc != RIFL_OK)
            return rc;
    }
    return RIFL_OK;
}

static int make_links(rifl_net *n, const rifl_lane_config *base, char *err, size_t errlen)
{
    const rifl_topology *t = n->cfg.topo;
    unsigned l = 0;
    int *sw_of = calloc(t->nnodes, sizeof *sw_of);
    if (!sw_of)
        return RIFL_ERR_NOMEM;
    unsigned s = 0;
    for (unsigned v = 0; v < t->nnodes; v++)
        sw_of[v] = t->nodes[v].is_switch ? (int)s++ : -1;
    int rc = RIFL_OK;
    for (unsigned v = 0; v < t->nnodes && rc == RIFL_OK; v++) {
        const rifl_topo_node *a = &t->nodes[v];
        for (unsigned p = 0; p < a->nports && rc == RIFL_OK; p++) {
            int u = a->peer[p];
            if (u < 0 || (unsigned)u < v || ((unsigned)u == v && a->peer_port[p] < p))
                continue;
            struct link *k = &n->link[l];
            rifl_pair_config pc;
            memset(&pc, 0, sizeof pc);
            unsigned lanes;
            rc = port_lane(&n->cfg, base, v, p, &pc.lane, &lanes, err, errlen);
            if (rc != RIFL_OK)
                break;
            /* end 0 is a, its port sends what lane 0 sends */
            double ab = a->attr[p].tx_ber, ba = t->nodes[u].attr[a->peer_port[p]].tx_ber;
            pc.ber[0] = ab >= 0 ? ab : n->cfg.ber;
            pc.ber[1] = ba >= 0 ? ba : n->cfg.ber;
            unsigned qcap = link_tag_room(n, &pc.lane, lanes);
            k->cable_m = pc.lane.link.cable_m;
            k->nl = lanes;
            if (net_lanes_rule(n->cfg.lanes, n->cfg.group_lanes, lanes) == NET_LANES_UNFIT) {
                char what[112];
                link_name(&n->cfg, v, p, what, sizeof what);
                rifl_msg(err, errlen, "groups of %u lanes do not fit %s of %u lanes: give "
                                      "--group-lanes up to %u (0: all of a link's lanes)",
                         n->cfg.group_lanes, what, lanes, lanes);
                rc = RIFL_ERR_CONFIG;
                break;
            }
            k->step_mbps = (uint64_t)llround(pc.lane.link.lane_rate_gbps * 1000);
            k->rate_mbps = k->step_mbps * k->nl;
            k->ber[0] = pc.ber[0];
            k->ber[1] = pc.ber[1];
            pc.seed[0] = n->cfg.seed * 0x9E3779B97F4A7C15ull + 2 * l + 1;
            pc.seed[1] = n->cfg.seed * 0x9E3779B97F4A7C15ull + 2 * l + 2;
            if (k->nl == 1)
                rc = rifl_pair_create(&pc, &k->pair, err, errlen);
            else
                rc = make_bonded(n, k, &pc, err, errlen);
            if (rc != RIFL_OK)
                break;
            unsigned nodes[2] = { v, (unsigned)u }, ports[2] = { p, a->peer_port[p] };
            for (int i = 0; i < 2; i++) {
                struct end *e = &k->end[i];
                const rifl_topo_node *x = &t->nodes[nodes[i]];
                e->is_switch = x->is_switch;
                e->port = ports[i];
                e->rec = NONE;
                if (x->is_switch) {
                    e->idx = (unsigned)sw_of[nodes[i]];
                    n->sw[e->idx].link[ports[i]] = l;
                    n->sw[e->idx].side[ports[i]] = (unsigned)i;
                } else {
                    e->idx = (unsigned)rifl_nic_map_host_of(n->map, nodes[i]);
                    n->host[e->idx].link = l;
                    n->host[e->idx].side = (unsigned)i;
                }
                k->q[i].mask = qcap - 1;
                k->q[i].v = malloc(qcap * sizeof(uint32_t));
                if (!k->q[i].v)
                    rc = RIFL_ERR_NOMEM;
            }
            l++;
        }
    }
    /* a switch output leading to another switch obeys its flow control */
    for (unsigned k = 0; k < l && rc == RIFL_OK; k++)
        for (int i = 0; i < 2; i++) {
            struct end *a = &n->link[k].end[i], *b = &n->link[k].end[1 - i];
            if (a->is_switch && b->is_switch)
                rifl_switch_set_downstream(n->sw[a->idx].sw, a->port, n->sw[b->idx].n, b->port);
        }
    n->link_count = l;
    free(sw_of);
    return rc;
}

static int finite_setup(rifl_net *n);

/* ---- credits (FC_CREDIT) ---------------------------------------------------------
 * Every link direction has a sender's registers and a receiver's per VL
 * (rifl/credit.h).  A cell costs CELL_BLOCKS blocks, charged when the NIC
 * hands it to its lane or the switch switches it to the output; the
 * receiver takes it in when it reads the cell off its lane and frees it
 * when the cell leaves: at a host at once, at a switch when the cell is
 * switched on.  The receiving end owes an FCP for a VL once it has freed a
 * quarter of the VL's buffer since its last one, or, having freed
 * anything, once FCP_WAIT cell times have passed since its last FCP (so a
 * sender never waits long for the rest); it
 * goes in an extension frame, and every VL's first FCP goes at the start.  The lane delivers every frame exactly once
 * and in order, so no block is ever lost and the FCTBS an FCP carries is
 * not needed to correct ABR: the receiver takes the FCCL only (project
 * rule, docs/netsim.md). */

/* The VLs a link direction's sender (credits c) has no credit for. */
static uint32_t credit_blocked(const rifl_net *n, const struct cred *c)
{
    uint32_t m = 0;
    for (unsigned v = 0; v < n->vls; v++)
        if (!rifl_fc_tx_may_send(&c->tx[v], CELL_BLOCKS))
            m |= 1u << v;
    return m;
}

/* Tell end `side` of link l (its NIC, or its switch's output) which VLs
 * wait. */
static void credit_apply(rifl_net *n, unsigned l, unsigned side)
{
    struct link *k = &n->link[l];
    const struct end *e = &k->end[side];
    uint32_t m = credit_blocked(n, &k->cr[side]);
    if (e->is_switch)
        rifl_switch_block_vls(n->sw[e->idx].sw, e->port, m);
    else
        rifl_nic_block_vls(n->host[e->idx].nic, m);
}

/* End `side` of link l sends a cell on `vl`. */
static void credit_charge(rifl_net *n, unsigned l, unsigned side, unsigned vl)
{
    if (rifl_fc_tx_sent(&n->link[l].cr[side].tx[vl], CELL_BLOCKS) != RIFL_OK)
        n->inconsistent++; /* sent without credit */
    credit_apply(n, l, side);
}

/* End `side` of link l read a cell on `vl` off its lane. */
static void credit_accept(rifl_net *n, unsigned l, unsigned side, unsigned vl)
{
    if (rifl_fc_rx_accept(&n->link[l].cr[1 - side].rx[vl], CELL_BLOCKS) != RIFL_OK)
        n->inconsistent++; /* more than the credit given */
}

/* A cell end `side` of link l took in has left it. */
static void credit_release(rifl_net *n, unsigned l, unsigned side, unsigned vl)
{
    struct cred *c = &n->link[l].cr[1 - side];
    if (rifl_fc_rx_release(&c->rx[vl], CELL_BLOCKS) != RIFL_OK)
        n->inconsistent++;
    if (++c->freed[vl] >= n->fcp_batch)
        n->link[l].fcp_due[side] |= 1u << vl;
}

/* ---- a link's ends: one lane, or a bonded end ------------------------------------
 * Cells go through the lane, or the bond that spreads them over its lanes.
 * Extension frames (per-VOQ flow control, FCPs) do not belong to the packet
 * stream: a bonded end sends them on its lane 0 and reads them from any
 * lane (project rule, docs/netsim.md). */

static inline rifl_lane *ext_lane(struct link *k, unsigned side)
{
    return k->pair ? k->pair->lane[side] : rifl_bond_lane(k->bond[side], 0);
}

/* A parked link's skipped slots, up to slot n->t (not yet stepped). */
static void unpark(rifl_net *n, struct link *k)
{
    if (!k->parked)
        return;
    k->parked = false;
    uint64_t m = n->t - k->park_t;
    if (rifl_pair_idle_skip(k->pair, m) != RIFL_OK)
        n->inconsistent++;
    k->by_ref = k->pair->by_ref; /* a skip ends stepping by reference */
    n->lane_steps += 2 * m;
    n->idle_steps += 2 * m;
}

/* The lane end `side` of link k sends its extension frames on, the link
 * brought up to date first. */
static inline rifl_lane *ext_lane_tx(rifl_net *n, struct link *k, unsigned side)
{
    unpark(n, k);
    k->last_send = n->t;
    return ext_lane(k, side);
}

static int link_read_ext(struct link *k, unsigned side, uint8_t *code, void *buf, size_t cap,
                         size_t *len)
{
    if (k->pair)
        return rifl_lane_read_ext(k->pair->lane[side], code, buf, cap, len);
    for (unsigned i = 0; i < k->nl; i++)
        if (rifl_lane_read_ext(rifl_bond_lane(k->bond[side], i), code, buf, cap, len) ==
            RIFL_OK)
            return RIFL_OK;
    return RIFL_ERR_AGAIN;
}

static inline int link_send(rifl_net *n, struct link *k, unsigned side, const void *cell,
                            size_t len)
{
    unpark(n, k);
    k->last_send = n->t;
    return k->pair ? rifl_lane_send(k->pair->lane[side], cell, len)
                   : rifl_bond_send(k->bond[side], cell, len);
}

static inline int link_read(struct link *k, unsigned side, void *buf, size_t cap, size_t *got,
                            int *eop)
{
    return k->pair ? rifl_lane_read(k->pair->lane[side], buf, cap, got, eop)
                   : rifl_bond_read(k->bond[side], buf, cap, got, eop);
}

/* The end's queue can take `cells` more cells now. */
static inline bool link_room(const rifl_net *n, struct link *k, unsigned side, unsigned cells)
{
    if (k->pair) /* a cell takes C whole frames of the lane's queue */
        return rifl_lane_send_space(k->pair->lane[side]) >=
               (size_t)cells * n->C * rifl_payload_bytes(n->cfg.frame_bits);
    return rifl_bond_send_space(k->bond[side]) + RIFL_BOND_PACKET_OVERHEAD >=
           (size_t)cells * (RIFL_L2_CELL_BYTES + RIFL_BOND_PACKET_OVERHEAD);
}

/* The end's queue runs short: one more cell keeps the link busy until the
 * next cell time.  A lane takes a cell's frames at one a slot, so less than
 * a cell waiting is short.  A bonded end takes whole words, up to a word
 * per group in each of its (slower) lanes' slots: in one cell time it may
 * take more than a cell, so less than two cells waiting is short. */
static inline bool link_short(const rifl_net *n, struct link *k, unsigned side)
{
    return k->pair ? rifl_lane_tx_backlog(k->pair->lane[side]) < n->C
                   : rifl_bond_tx_backlog(k->bond[side]) < 2 * RIFL_L2_CELL_BYTES;
}

/* Payload bytes the end has taken to send. */
static uint64_t link_tx_bytes(struct link *k, unsigned side)
{
    return k->pair ? rifl_lane_get_stats(k->pair->lane[side])->tx_bytes
                   : rifl_bond_get_stats(k->bond[side])->tx_bytes;
}

/* End `side` of link l hands its lane the FCPs it owes; those refused wait
 * for the next cell time. */
static void fcp_send(rifl_net *n, unsigned l, unsigned side)
{
    struct link *k = &n->link[l];
    struct cred *in = &k->cr[1 - side];
    rifl_lane *ln = NULL;
    for (unsigned v = 0; v < n->vls; v++)
        if (in->freed[v] && n->t - in->last_fcp[v] >= (uint64_t)FCP_WAIT * n->C)
            k->fcp_due[side] |= 1u << v;
    while (k->fcp_due[side]) {
        unsigned v = (unsigned)__builtin_ctz(k->fcp_due[side]);
        rifl_fcp f = { .op = RIFL_FCP_OP_NORMAL, .fctbs = k->cr[side].tx[v].fctbs,
                       .vl = (uint8_t)v, .fccl = rifl_fc_rx_fccl(&in->rx[v]) };
        uint8_t b[RIFL_FC_FCP_BYTES];
        rifl_fcp_encode(&f, b);
        if (!ln)
            ln = ext_lane_tx(n, k, side);
        if (rifl_lane_send_ext(ln, RIFL_FCP_EXT_CODE, b, sizeof b) != RIFL_OK)
            return;
        k->fcp_due[side] &= ~(1u << v);
        in->freed[v] = 0;
        in->last_fcp[v] = n->t;
        k->fc_frames[side]++;
    }
}

/* End `side` of link l reads the FCPs that came in: each sets the credit
 * limit of its VL. */
static void fcp_read(rifl_net *n, unsigned l, unsigned side)
{
    struct link *k = &n->link[l];
    uint8_t code, data[RIFL_PAYLOAD_MAX_BYTES]; /* (a whole frame's payload, at any F) */
    size_t len;
    bool any = false;
    while (link_read_ext(k, side, &code, data, sizeof data, &len) == RIFL_OK) {
        rifl_fcp f;
        if (code != RIFL_FCP_EXT_CODE || rifl_fcp_decode(data, len, &f, NULL) != RIFL_OK ||
            f.vl >= n->vls) {
            n->inconsistent++; /* nothing else is sent in extension frames here */
            continue;
        }
        rifl_fc_tx_set_limit(&k->cr[side].tx[f.vl], f.fccl);
        any = true;
    }
    if (any)
        credit_apply(n, l, side);
}

static int credit_setup(rifl_net *n, char *err, size_t errlen)
{
    uint64_t bytes = (uint64_t)n->credit_cells * CELL_BLOCKS * RIFL_FC_BLOCK_BYTES;
    n->fcp_batch = n->credit_cells / 4 ? n->credit_cells / 4 : 1;
    for (unsigned l = 0; l < n->L; l++) {
        struct link *k = &n->link[l];
        if (!(k->cr = calloc(2, sizeof *k->cr)))
            return RIFL_ERR_NOMEM;
        for (int i = 0; i < 2; i++)
            for (unsigned v = 0; v < n->vls; v++) {
                rifl_fc_tx_reset(&k->cr[i].tx[v]);
                int rc = rifl_fc_rx_init(&k->cr[i].rx[v], bytes, RIFL_FC_BLOCK_BYTES, err,
                                         errlen);
                if (rc != RIFL_OK)
                    return rc;
            }
        /* no credit until the first FCPs arrive */
        k->fcp_due[0] = k->fcp_due[1] = (1u << n->vls) - 1;
        credit_apply(n, l, 0);
        credit_apply(n, l, 1);
    }
    return RIFL_OK;
}

static bool sends(const rifl_net *n, unsigned h);

/* The lane settings of every link without settings of its own, and what
 * follows from them: the fastest link's rate (its frame slot is the time
 * step, and the switches and NICs work in its cell times), a cell's frame
 * slots C and the switch pipeline in cell times.  Links without a rate of
 * their own run at link_gbps. */
static int base_lane(const rifl_net_config *cfg, rifl_lane_config *lc, double *fastest,
                     unsigned *C, unsigned *pipe_len, char *err, size_t errlen)
{
    const rifl_topology *t = cfg->topo;
    rifl_lane_config base = rifl_lane_default_config;
    base.frame_bits = cfg->frame_bits;
    base.link.lane_rate_gbps = cfg->link_gbps;
    base.link.ns_per_m = 5.0;
    *fastest = cfg->link_gbps;
    for (unsigned v = 0; v < t->nnodes; v++)
        for (unsigned p = 0; p < t->nodes[v].nports; p++)
            if (t->nodes[v].peer[p] >= 0 && t->nodes[v].attr[p].rate_gbps > *fastest)
                *fastest = t->nodes[v].attr[p].rate_gbps;
    int rc = link_lane(cfg, &base, -1, -1, -1, cfg->lanes ? cfg->lanes : 1, "links", true, lc,
                       err, errlen);
    if (rc != RIFL_OK)
        return rc;
    unsigned pb = rifl_payload_bytes(lc->frame_bits);
    *C = (RIFL_L2_CELL_BYTES + pb - 1) / pb;
    double cell_ns = *C * (cfg->frame_bits / *fastest);
    *pipe_len = (unsigned)llround(cfg->switch_ns / cell_ns);
    if (*pipe_len < 1)
        *pipe_len = 1;
    lc->tx_queue_frames = (*pipe_len + 4) * *C;
    return RIFL_OK;
}

/* ---- memory -----------------------------------------------------------------------
 * A network's memory grows with its host pairs: the map holds every pair's
 * routes and every NIC a receive context per source and route, each
 * hosts^2 x max_paths in all (a fat tree of 22-port switches with 64 paths:
 * over 10 GB).  rifl_net_create adds it up before it allocates anything, by
 * the sizes the parts allocate (rifl_nic_map_memory, rifl_nic_memory,
 * rifl_lane_config_memory, pair_flight_bytes), and refuses a network above
 * max_memory_gb, so that a run too large for the machine is a message, not
 * the system killing the process part way.  Not counted: the switches
 * (their VOQ pools are reserved and touched only as cells fill them), the
 * links' tag rings, and the cells and messages in flight, which grow with
 * the load. */
struct mem {
    uint64_t routes;          /* the map */
    uint64_t contexts;        /* the NICs' receive contexts */
    uint64_t messages;        /* the NICs' message slots, the host interfaces' queues */
    uint64_t links;           /* every link's lane engines and frames in flight */
    uint64_t other;           /* the NICs' destination queues, a finite workload's tables */
};

static uint64_t mem_total(const struct mem *m)
{
    return m->routes + m->contexts + m->messages + m->links + m->other;
}

static void mem_count(const rifl_net_config *cfg, struct mem *m)
{
    memset(m, 0, sizeof *m);
    const rifl_topology *t = cfg->topo;
    uint64_t H = t->nhosts;
    unsigned P = cfg->max_paths;
    m->routes = rifl_nic_map_memory(t, P);
    /* a NIC's share for its contexts is what its paths add, the share for
     * its messages what they add: the rest is per destination */
    rifl_nic_config nc = rifl_nic_default_config, bare = nc;
    nc.tx_messages = cfg->nic_messages;
    bare.tx_messages = 0;
    uint64_t nic = rifl_nic_memory(&nc, t->nhosts, P),
             no_msg = rifl_nic_memory(&bare, t->nhosts, P),
             no_ctx = rifl_nic_memory(&bare, t->nhosts, 0);
    m->contexts = H * (no_msg - no_ctx);
    m->messages = H * (nic - no_msg);
    m->other = H * no_ctx;
    if (cfg->pcie_gbps > 0)
        m->messages += H * cfg->nic_messages * sizeof *((struct host *)NULL)->dma;
    if (cfg->bytes_per_flow && !cfg->app)
        m->other += H * H * (sizeof *((struct host *)NULL)->left +
                             sizeof *((struct host *)NULL)->act);
    /* each link's pairs of lanes, one or one per bonded lane, as
     * make_links makes them (settings that rifl_net_create refuses count
     * nothing: it says why) */
    rifl_lane_config base;
    double fastest;
    unsigned C, pipe_len;
    if (base_lane(cfg, &base, &fastest, &C, &pipe_len, NULL, 0) != RIFL_OK)
        return;
    for (unsigned v = 0; v < t->nnodes; v++) {
        const rifl_topo_node *a = &t->nodes[v];
        for (unsigned p = 0; p < a->nports; p++) {
            int u = a->peer[p];
            if (u < 0 || (unsigned)u < v || ((unsigned)u == v && a->peer_port[p] < p))
                continue;
            rifl_pair_config pc;
            memset(&pc, 0, sizeof pc);
            unsigned lanes;
            if (port_lane(cfg, &base, v, p, &pc.lane, &lanes, NULL, 0) == RIFL_OK)
                m->links += lanes * (2 * rifl_lane_config_memory(&pc.lane) +
                                     pair_flight_bytes(&pc));
        }
    }
}

uint64_t rifl_net_memory(const rifl_net_config *cfg)
{
    if (!cfg || !cfg->topo)
        return 0;
    struct mem m;
    mem_count(cfg, &m);
    return mem_total(&m);
}

/* RIFL_ERR_CONFIG with the estimate, its parts and the fix when the network
 * would take more than max_memory_gb. */
static int mem_check(const rifl_net_config *cfg, char *err, size_t errlen)
{
    if (cfg->max_memory_gb == 0)
        return RIFL_OK;
    struct mem m;
    mem_count(cfg, &m);
    double gb = (double)mem_total(&m) / 1e9;
    if (gb <= cfg->max_memory_gb)
        return RIFL_OK;
    /* the fix for the largest part: the paths make the routes and the
     * contexts, the NICs' queues the message slots, the links the rest */
    const char *fix;
    if (m.routes + m.contexts >= m.messages && m.routes + m.contexts >= m.links + m.other)
        fix = "give fewer paths per host pair (max_paths, --paths) or a smaller topology";
    else if (m.messages >= m.links + m.other)
        fix = "give fewer messages per NIC (nic_messages, --nic-messages) or a smaller "
              "topology";
    else
        fix = "give a smaller topology";
    rifl_msg(err, errlen, "this network would take about %.3g GB of memory, more than the "
                          "limit of %g GB (%u hosts, %u paths per host pair: routes %.3g GB, "
                          "NIC receive contexts %.3g GB, NIC message slots %.3g GB, links "
                          "%.3g GB, the rest %.3g GB); %s, or raise the limit "
                          "(max_memory_gb, --max-memory-gb; 0: none)",
             gb, cfg->max_memory_gb, cfg->topo->nhosts, cfg->max_paths, m.routes / 1e9,
             m.contexts / 1e9, m.messages / 1e9, m.links / 1e9, m.other / 1e9, fix);
    return RIFL_ERR_CONFIG;
}

int rifl_net_create(const rifl_net_config *cfg, rifl_net **out, char *err, size_t errlen)
{
    if (!cfg || !out)
        return rifl_null_arg(err, errlen, "rifl_net_create", !cfg ? "cfg" : "out");
    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    int rc = check(cfg, err, errlen);
    if (rc == RIFL_OK)
        rc = mem_check(cfg, err, errlen);
    if (rc != RIFL_OK)
        return rc;
    rifl_net *n = calloc(1, sizeof *n);
    if (!n) {
        rc = RIFL_ERR_NOMEM;
        goto fail;
    }
    n->cfg = *cfg;
    const rifl_topology *t = cfg->topo;
    n->recs.free = n->msgs.free = NONE;
    rc = rifl_nic_map_create(t, cfg->max_paths, &n->map, err, errlen);
    if (rc != RIFL_OK)
        goto fail;
    n->H = t->nhosts;
    n->S = t->nswitches;
    n->L = t->nlinks;
    if (n->S == 0) {
        rifl_msg(err, errlen, "the topology has no switch: hosts reach each other through "
                              "switches");
        rc = RIFL_ERR_CONFIG;
        goto fail;
    }
    rifl_lane_config lc;
    double fastest;
    rc = base_lane(cfg, &lc, &fastest, &n->C, &n->pipe_len, err, errlen);
    if (rc != RIFL_OK)
        goto fail;
    n->base_mbps = (uint64_t)llround(fastest * 1000);
    n->slot_ns = cfg->frame_bits / fastest;
    rifl_switch_config sc = rifl_switch_default_config;
    sc.flow_control = cfg->fc == RIFL_NET_FC_VOQ;
    sc.check_fabric = false;
    n->host = calloc(n->H, sizeof *n->host);
    n->sw = calloc(n->S, sizeof *n->sw);
    n->link = calloc(n->L, sizeof *n->link);
    n->pattern = malloc(2 * (size_t)MSG_CAP);
    n->perm = calloc(n->H, sizeof *n->perm);
    if (!n->host || !n->sw || !n->link || !n->pattern || !n->perm) {
        rc = RIFL_ERR_NOMEM;
        goto fail;
    }
    rifl_rng_seed(&n->rng, cfg->seed);
    for (size_t i = 0; i < 2 * (size_t)MSG_CAP; i += 8) {
        uint64_t x = rifl_rng_next(&n->rng);
        memcpy(n->pattern + i, &x, 8);
    }
    unsigned *rtt = calloc(n->S, sizeof *rtt);
    if (!rtt) {
        rc = RIFL_ERR_NOMEM;
        goto fail;
    }
    rc = switch_rtts(n, &lc, rtt, err, errlen);
    if (rc == RIFL_OK && cfg->fc == RIFL_NET_FC_CREDIT) {
        /* every receiver's buffer per VL: the 1.5-round-trip rule for the
         * network's longest round trip, unless given */
        unsigned most = 0;
        for (unsigned k = 0; k < n->S; k++)
            most = rtt[k] > most ? rtt[k] : most;
        n->vls = cfg->vls ? cfg->vls : 4;
        n->credit_cells = cfg->credit_cells ? cfg->credit_cells : rifl_switch_min_voq_cells(most);
        if (n->credit_cells > CREDIT_CELLS_MAX) {
            rifl_msg(err, errlen, "the links' round trip asks for %u cells of credit per "
                                  "virtual lane, more than a receiver can advertise (%u): "
                                  "shorten the cables or give --credit-cells",
                     n->credit_cells, CREDIT_CELLS_MAX);
            rc = RIFL_ERR_CONFIG;
        }
    }
    unsigned s = 0;
    for (unsigned v = 0; v < t->nnodes && rc == RIFL_OK; v++) {
        if (!t->nodes[v].is_switch)
            continue;
        sc.rtt_slots = rtt[s];
        sc.voq_cells = cfg->voq_cells ? cfg->voq_cells : rifl_switch_min_voq_cells(rtt[s]);
        /* with credits an input holds at most its VLs' buffers, all of
         * which may be for one output */
        if (cfg->fc == RIFL_NET_FC_CREDIT && sc.voq_cells < n->vls * n->credit_cells)
            sc.voq_cells = n->vls * n->credit_cells;
        struct sw *w = &n->sw[s++];
        w->n = sc.nports = t->nodes[v].nports;
        sc.iterations = cfg->iterations < w->n ? cfg->iterations : w->n;
        rc = rifl_switch_create(&sc, &w->sw, err, errlen);
        if (rc != RIFL_OK)
            break;
        size_t np = w->n;
        w->link = calloc(np, sizeof *w->link);
        w->side = calloc(np, sizeof *w->side);
        w->out = calloc(np, sizeof *w->out);
        w->pipe = calloc(np * n->pipe_len, sizeof *w->pipe);
        w->outv = calloc(np, 1);
        w->pipev = calloc(np * n->pipe_len, 1);
        w->fcv = calloc(np, 1);
        w->fc = calloc(np, sizeof *w->fc);
        w->pend = calloc(np * PEND, sizeof *w->pend);
        w->npend = calloc(np, sizeof *w->npend);
        w->in_pipe = calloc(np, sizeof *w->in_pipe);
        if (!w->link || !w->side || !w->out || !w->pipe || !w->outv || !w->pipev || !w->fcv ||
            !w->fc || !w->pend || !w->npend || !w->in_pipe) {
            rc = RIFL_ERR_NOMEM;
            break;
        }
        for (unsigned p = 0; p < w->n; p++)
            w->link[p] = UINT32_MAX;
    }
    free(rtt);
    if (rc != RIFL_OK)
        goto fail;
    rifl_nic_config nc = rifl_nic_default_config;
    nc.tx_messages = cfg->nic_messages;
    nc.vls = n->vls ? n->vls : 1;
    for (unsigned h = 0; h < n->H; h++) {
        struct host *x = &n->host[h];
        rc = rifl_nic_create(&nc, n->map, h, &x->nic, err, errlen);
        if (rc != RIFL_OK)
            goto fail;
        rifl_rng_seed(&x->rng, cfg->seed * 1000003u + h + 7);
        x->waiting = NONE;
        x->link = UINT32_MAX;
        if (cfg->pcie_gbps > 0 && !(x->dma = malloc(cfg->nic_messages * sizeof *x->dma))) {
            rc = RIFL_ERR_NOMEM;
            goto fail;
        }
    }
    rc = make_links(n, &lc, err, errlen);
    if (rc == RIFL_OK && n->link_count != n->L) {
        rifl_msg(err, errlen, "the topology counts %u links, %u were found", n->L,
                 n->link_count);
        rc = RIFL_ERR_CONFIG;
    }
    if (rc != RIFL_OK)
        goto fail;
    if (cfg->fc == RIFL_NET_FC_CREDIT && (rc = credit_setup(n, err, errlen)) != RIFL_OK)
        goto fail;
    /* a switch port left unlinked is held: nothing can leave by it */
    for (unsigned k = 0; k < n->S; k++)
        for (unsigned p = 0; p < n->sw[k].n; p++)
            if (n->sw[k].link[p] == UINT32_MAX)
                rifl_switch_hold_output(n->sw[k].sw, p, true);
    for (unsigned h = 0; h < n->H; h++)
        if (n->host[h].link == UINT32_MAX) {
            rifl_msg(err, errlen, "host %s has no link",
                     t->nodes[rifl_nic_map_node(n->map, h)].name);
            rc = RIFL_ERR_CONFIG;
            goto fail;
        }
    if (cfg->observe && n->link[n->host[cfg->observe_host].link].nl > 1) {
        rifl_msg(err, errlen, "host %s's link is bonded: a capture watches a link of one "
                              "lane; watch a host on a single-lane link",
                 t->nodes[rifl_nic_map_node(n->map, cfg->observe_host)].name);
        rc = RIFL_ERR_CONFIG;
        goto fail;
    }
    if (cfg->observe && n->link[n->host[cfg->observe_host].link].rate_mbps != n->base_mbps) {
        rifl_msg(err, errlen, "host %s's link is slower than the network's fastest: a "
                              "capture is of a link stepped every slot; watch a host on a "
                              "link of the fastest rate",
                 t->nodes[rifl_nic_map_node(n->map, cfg->observe_host)].name);
        rc = RIFL_ERR_CONFIG;
        goto fail;
    }
    /* traffic */
    /* a bursty train's draw: 1 + a geometric number of further cells */
    double B = cfg->burst_bytes / RIFL_L2_CELL_PAYLOAD, train;
    if (cfg->arrivals != RIFL_NET_BURSTY || B < 1)
        B = 1;
    mean_sizes(cfg, 1.0 / B, &n->mean_cells, &n->mean_bytes, &train);
    if (cfg->arrivals == RIFL_NET_BURSTY)
        rifl_geo_init(&n->train, 1.0 / B);
    /* each host offers `load` of its own link's cell slots */
    n->offered_frac = 0;
    for (unsigned h = 0; h < n->H; h++) {
        double frac = (double)n->link[n->host[h].link].rate_mbps / (double)n->base_mbps;
        double load = cfg->load * frac;
        double idle = train * (1 - load) / load;
        rifl_geo_init(&n->host[h].idle, 1.0 / (1.0 + idle));
        if (sends(n, h)) /* (incast: only its senders offer anything) */
            n->offered_frac += frac / n->H;
    }
    /* a derangement for the permutation pattern */
    for (unsigned h = 0; h < n->H; h++)
        n->perm[h] = h;
    for (;;) {
        for (unsigned h = n->H - 1; h > 0; h--) {
            unsigned j = (unsigned)rifl_rng_below(&n->rng, h + 1), tmp = n->perm[h];
            n->perm[h] = n->perm[j];
            n->perm[j] = tmp;
        }
        unsigned fixed = 0;
        for (unsigned h = 0; h < n->H; h++)
            fixed += n->perm[h] == h;
        if (!fixed)
            break;
    }
    if ((rc = rifl_hist_init(&n->lat)) || (rc = rifl_hist_init(&n->head)) ||
        (rc = rifl_hist_init(&n->mct)))
        goto fail;
    n->warm = (uint64_t)ceil(cfg->warmup_ns / n->slot_ns);
    n->win_end = n->warm + (uint64_t)ceil(cfg->window_ns / n->slot_ns);
    n->limit = n->win_end + (uint64_t)ceil(cfg->drain_ns / n->slot_ns);
    if (cfg->app) {
        /* the application's run, measured whole */
        n->warm = 0;
        n->win_end = UINT64_MAX;
    } else if (cfg->bytes_per_flow) {
        /* every message counts; the run ends when the workload has arrived */
        n->warm = 0;
        n->win_end = UINT64_MAX;
        n->limit = UINT64_MAX;
        rc = finite_setup(n);
        if (rc != RIFL_OK)
            goto fail;
    }
    for (unsigned h = 0; h < n->H; h++)
        n->host[h].next_cell = rifl_geo_draw(&n->host[h].idle, &n->host[h].rng);
    *out = n;
    return RIFL_OK;
fail:
    if (rc == RIFL_ERR_NOMEM && err && errlen && !err[0])
        rifl_msg(err, errlen, "out of memory for a network of %u hosts, %u switches and %u "
                 "links with %u messages queued per NIC; lower nic_messages (--nic-messages), "
                 "the buffers or the network's size", cfg->topo->nhosts, cfg->topo->nswitches,
                 cfg->topo->nlinks, cfg->nic_messages);
    rifl_net_free(n);
    return rc;
}

/* ---- traffic ---------------------------------------------------------------------- */

static bool sends(const rifl_net *n, unsigned h)
{
    if (n->cfg.pattern == RIFL_NET_INCAST)
        return h >= 1 && h <= n->cfg.incast;
    return true;
}

/* A finite workload: every sending host's destinations, each owed
 * bytes_per_flow. */
static int finite_setup(rifl_net *n)
{
    for (unsigned h = 0; h < n->H; h++) {
        struct host *x = &n->host[h];
        x->left = calloc(n->H, sizeof *x->left);
        x->act = calloc(n->H, sizeof *x->act);
        if (!x->left || !x->act)
            return RIFL_ERR_NOMEM;
        if (!sends(n, h))
            continue;
        for (unsigned d = 0; d < n->H; d++) {
            bool to;
            switch (n->cfg.pattern) {
            case RIFL_NET_PERMUTATION: to = d == n->perm[h]; break;
            case RIFL_NET_INCAST: to = d == 0 || (h == 1 && d == n->cfg.incast + 1); break;
            default: to = d != h;
            }
            if (to) {
                x->left[d] = n->cfg.bytes_per_flow;
                x->act[x->nact++] = d;
                n->total_bytes += n->cfg.bytes_per_flow;
            }
        }
        n->senders++;
    }
    return RIFL_OK;
}

/* Finite workload: the destination of host h's next train, among those
 * still owed bytes. */
static unsigned pick_finite(rifl_net *n, unsigned h)
{
    struct host *x = &n->host[h];
    if (n->cfg.pattern == RIFL_NET_ALL_TO_ALL) {
        x->a2a = (x->a2a + 1) % x->nact;
        return x->act[x->a2a];
    }
    return x->act[rifl_rng_below(&x->rng, x->nact)];
}

/* Finite workload: `len` bytes more for h -> d; a destination paid off
 * leaves the list, a host with none left is done. */
static void finite_take(rifl_net *n, unsigned h, unsigned d, uint32_t len)
{
    struct host *x = &n->host[h];
    x->left[d] -= len;
    if (x->left[d])
        return;
    for (unsigned k = 0; k < x->nact; k++)
        if (x->act[k] == d) {
            x->act[k] = x->act[--x->nact];
            break;
        }
    if (!x->nact) {
        x->done = true;
        n->senders_done++;
    }
}

static unsigned pick_dst(rifl_net *n, unsigned h)
{
    struct host *x = &n->host[h];
    switch (n->cfg.pattern) {
    case RIFL_NET_PERMUTATION:
        return n->perm[h];
    case RIFL_NET_INCAST:
        if (h == 1 && rifl_rng_below(&x->rng, 2))
            return n->cfg.incast + 1;
        return 0;
    case RIFL_NET_ALL_TO_ALL:
        x->a2a = (x->a2a + 1) % (n->H - 1);
        return (h + 1 + x->a2a) % n->H;
    default: {
        unsigned d = (unsigned)rifl_rng_below(&x->rng, n->H - 1);
        return d >= h ? d + 1 : d;
    }
    }
}

/* Message i into host x's NIC, in it from `now`: *taken says whether the
 * NIC took it (the host's flow number moves on).  A full NIC is no error;
 * the caller counts the source's stall. */
static int nic_take(rifl_net *n, struct host *x, uint32_t i, uint64_t now, bool *taken)
{
    const struct msg *m = &MSG(n, i);
    int rc = rifl_nic_post(x->nic, m->dst, x->flow, n->pattern + m->shift, m->len, i, now);
    *taken = rc == RIFL_OK;
    if (rc == RIFL_OK)
        x->flow++;
    return rc == RIFL_ERR_AGAIN ? RIFL_OK : rc;
}

/* How far (slots) sending host h is from having made every message of the
 * window, 0 when it has: a host whose NIC is full makes its next message
 * only when the one it holds is taken, so its messages' times can fall
 * behind the clock. */
static uint64_t host_lag(const rifl_net *n, unsigned h)
{
    const struct host *x = &n->host[h];
    if (!sends(n, h) || x->done || x->next_cell * n->C >= n->win_end)
        return 0;
    return n->win_end - x->next_cell * n->C;
}

/* Some sending host has not yet made every message of the window. */
static bool window_lagging(const rifl_net *n)
{
    for (unsigned h = 0; h < n->H; h++)
        if (host_lag(n, h))
            return true;
    return false;
}

/* Every message of the window made and arrived. */
static bool window_complete(const rifl_net *n)
{
    return n->window_done && n->outstanding == 0 && !window_lagging(n);
}

/* Host h's message of cell slot `c`, made and posted (or left waiting). */
static int generate(rifl_net *n, unsigned h, uint64_t c)
{
    struct host *x = &n->host[h];
    if (x->waiting == NONE) {
        if (!sends(n, h) || x->done || x->next_cell > c)
            return RIFL_OK;
        bool finite = n->cfg.bytes_per_flow != 0;
        if (finite && x->train_left && !x->left[x->train_dst])
            x->train_left = 0; /* the train's destination is paid off */
        if (!x->train_left) {
            x->train_dst = finite ? pick_finite(n, h) : pick_dst(n, h);
            x->train_left = 1;
            if (n->cfg.arrivals == RIFL_NET_BURSTY)
                x->train_left += rifl_geo_draw(&n->train, &x->rng);
        }
        uint32_t len = n->cfg.sizes ? rifl_net_cdf_size(n->cfg.sizes, rifl_rng_double(&x->rng))
                       : n->cfg.msg_min == n->cfg.msg_max
                           ? n->cfg.msg_min
                           : (uint32_t)rifl_rng_range(&x->rng, n->cfg.msg_min, n->cfg.msg_max);
        if (finite) {
            if (len > x->left[x->train_dst])
                len = (uint32_t)x->left[x->train_dst];
            finite_take(n, h, x->train_dst, len);
        }
        uint32_t i = msg_new(n);
        if (i == NONE)
            return RIFL_ERR_NOMEM;
        struct msg *m = &MSG(n, i);
        m->gen = x->next_cell * n->C;
        m->src = h;
        m->dst = x->train_dst;
        m->len = len;
        m->cells = (uint32_t)rifl_l2_msg_cells(len);
        m->arrived = 0;
        m->shift = (uint32_t)(rifl_rng_next(&x->rng) % MSG_CAP);
        m->measured = m->gen >= n->warm && m->gen < n->win_end;
        if (m->measured) {
            n->gen_cells += m->cells;
            n->outstanding++;
        }
        x->waiting = i;
        /* the next message: back to back in a train, else after an idle gap */
        x->next_cell += m->cells;
        /* a bursty train's draw counts cells and ends with the message in
         * which it runs out; a Bernoulli train is one message */
        x->train_left -= n->cfg.arrivals == RIFL_NET_BURSTY && m->cells < x->train_left
                             ? m->cells
                             : x->train_left;
        if (x->train_left == 0)
            x->next_cell += rifl_geo_draw(&x->idle, &x->rng);
    }
    struct msg *m = &MSG(n, x->waiting);
    if (n->cfg.pcie_gbps > 0) {
        /* the host interface reads it: queued behind the reads before */
        if (x->dma_len == n->cfg.nic_messages) {
            n->stalls++;
            return RIFL_OK;
        }
        double now = (double)n->t * n->slot_ns;
        double start = x->tx_free_ns > now ? x->tx_free_ns : now;
        double bytes_ns = m->len * 8.0 / n->cfg.pcie_gbps;
        x->tx_free_ns = start + bytes_ns;
        m->ready = (uint64_t)ceil((start + n->cfg.pcie_rtt_ns + bytes_ns) / n->slot_ns);
        unsigned at = x->dma_head + x->dma_len++;
        x->dma[at < n->cfg.nic_messages ? at : at - n->cfg.nic_messages] = x->waiting;
        x->waiting = NONE;
        return RIFL_OK;
    }
    bool taken;
    int rc = nic_take(n, x, x->waiting, m->gen, &taken);
    if (taken)
        x->waiting = NONE;
    else if (rc == RIFL_OK)
        n->stalls++;
    return rc;
}

/* ---- one cell time at the hosts and switches ---------------------------------- */

/* Read what has arrived of the next cell at end `e` of link l (received by
 * lane `side`): true when a whole cell is in e->buf (its record popped). */
static bool read_cell(rifl_net *n, unsigned l, unsigned side, struct end *e)
{
    struct link *k = &n->link[l];
    for (;;) {
        size_t got = 0;
        int eop = 0;
        if (link_read(k, side, e->buf + e->have, sizeof e->buf - e->have, &got, &eop) != RIFL_OK)
            return false;
        e->have += (unsigned)got;
        if (eop) {
            bool whole = e->have == RIFL_L2_CELL_BYTES;
            e->have = 0;
            e->rec = tag_pop(&n->link[l].q[1 - side]);
            if (!whole || e->rec == NONE) {
                n->inconsistent++;
                continue;
            }
            return true;
        }
        if (e->have == sizeof e->buf) {
            n->inconsistent++; /* longer than a cell */
            e->have = 0;
        }
    }
}

/* The next per-VOQ flow-control frame waiting at end `side` of link k: true
 * with *fc set, false when none waits (other extension frames are not sent
 * here, so one is an inconsistency). */
static bool next_fc(rifl_net *n, struct link *k, unsigned side, rifl_l2_fc *fc)
{
    uint8_t code, data[RIFL_PAYLOAD_MAX_BYTES]; /* (a whole frame's payload, at any F) */
    size_t len;
    while (link_read_ext(k, side, &code, data, sizeof data, &len) == RIFL_OK) {
        if (code == RIFL_L2_FC_CODE && rifl_l2_fc_unpack(data, len, fc) == RIFL_OK)
            return true;
        n->inconsistent++;
    }
    return false;
}

static void read_fc_switch(rifl_net *n, struct sw *w, unsigned p)
{
    rifl_l2_fc fc;
    while (next_fc(n, &n->link[w->link[p]], w->side[p], &fc))
        rifl_switch_fc_receive(w->sw, p, &fc);
}

/* A measured cell arrived at `now`: its latencies and each hop's share. */
static void measure_cell(rifl_net *n, const struct rec *r, const uint8_t *cell, size_t bytes,
                         uint64_t now)
{
    n->deliv_cells++;
    n->deliv_bytes += bytes;
    rifl_hist_add(&n->lat, now - r->gen);
    rifl_hist_add(&n->head, now - r->head);
    /* segments: host queue, NIC to link, then link and switch per hop */
    rifl_l2_hdr hd;
    memcpy(hd.b, cell, RIFL_L2_HDR_BYTES);
    unsigned hops = rifl_l2_total_hops(&hd);
    if (hops > RIFL_L2_MAX_HOPS)
        hops = RIFL_L2_MAX_HOPS;
    double *s = n->seg_sum[hops];
    uint64_t *c = n->seg_n[hops];
    s[0] += (double)(r->head - r->gen);
    s[1] += (double)(r->sent - r->head);
    uint64_t prev = r->sent;
    unsigned k = 2;
    for (unsigned j = 0; j < hops; j++) {
        s[k++] += (double)(r->in[j] - prev);
        s[k++] += (double)(r->out[j] - r->in[j]);
        prev = r->out[j];
    }
    s[k++] += (double)(now - prev);
    for (unsigned j = 0; j < k; j++)
        c[j]++;
}

/* A cell for a host application: measured, then handed over. */
static void deliver_app(rifl_net *n, unsigned h, struct end *e)
{
    struct host *x = &n->host[h];
    struct rec *r = &REC(n, e->rec);
    rifl_nic_rx rx;
    if (rifl_nic_receive(x->nic, n->t, e->buf, RIFL_L2_CELL_BYTES, &rx) != RIFL_OK) {
        n->nic_drops++; /* counted by the NIC */
        n->lost++;
    } else {
        measure_cell(n, r, e->buf, rx.len, n->t);
        x->rx_bytes += rx.len;
        n->cfg.app->deliver(n->cfg.app->ctx, n, h, &rx, (double)n->t * n->slot_ns);
    }
    rec_free(n, e->rec);
    e->rec = NONE;
}

static void deliver(rifl_net *n, unsigned h, struct end *e)
{
    if (n->cfg.app) {
        deliver_app(n, h, e);
        return;
    }
    struct host *x = &n->host[h];
    struct rec *r = &REC(n, e->rec);
    struct msg *m = &MSG(n, r->msg);
    rifl_nic_rx rx;
    int rc = rifl_nic_receive(x->nic, n->t, e->buf, RIFL_L2_CELL_BYTES, &rx);
    if (rc != RIFL_OK) {
        /* counted by the NIC; the cell's message never completes */
        n->nic_drops++;
        n->lost += m->measured;
        rec_free(n, e->rec);
        e->rec = NONE;
        return;
    }
    uint64_t expect_off = r->index == 0 ? 0 : (uint64_t)r->index * 256 - 4;
    if (rx.src != m->src || h != m->dst || rx.offset != expect_off || rx.msg_len != m->len ||
        memcmp(rx.data, n->pattern + m->shift + rx.offset, rx.len) != 0)
        n->corrupt++;
    uint64_t now = n->t;
    if (n->cfg.pcie_gbps > 0) {
        /* the payload written to host memory, behind the writes before:
         * the cell has arrived (and counts in the window) when its last
         * byte is there */
        double t_ns = (double)n->t * n->slot_ns;
        double start = x->rx_free_ns > t_ns ? x->rx_free_ns : t_ns;
        x->rx_free_ns = start + rx.len * 8.0 / n->cfg.pcie_gbps;
        now = (uint64_t)ceil((x->rx_free_ns + n->cfg.pcie_rtt_ns / 2) / n->slot_ns);
    }
    if (now >= n->warm && now < n->win_end) {
        x->rx_bytes += rx.len;
        if (m->src == 1 && n->cfg.pattern == RIFL_NET_INCAST && h == n->cfg.incast + 1) {
            n->victim_bytes += rx.len;
            n->victim_cells++;
        }
    }
    if (m->measured)
        measure_cell(n, r, e->buf, rx.len, now);
    if (++m->arrived == m->cells) {
        if (m->measured) {
            n->done_msgs++;
            n->outstanding--;
            rifl_hist_add(&n->mct, now - m->gen);
        }
        msg_free(n, r->msg);
    }
    rec_free(n, e->rec);
    e->rec = NONE;
}

/* Host interface: whether the cells waiting to be written to host memory
 * fill the NIC's receive buffer. */
#define DMA_RX_CELLS 16
static bool rx_dma_full(const rifl_net *n, const struct host *x)
{
    if (n->cfg.pcie_gbps <= 0)
        return false;
    double backlog_ns = x->rx_free_ns - (double)n->t * n->slot_ns;
    return backlog_ns >= DMA_RX_CELLS * RIFL_L2_CELL_PAYLOAD * 8.0 / n->cfg.pcie_gbps;
}

/* Host interface: the messages read into the NIC by now, posted in order
 * while it takes them. */
static int dma_post(rifl_net *n, unsigned h)
{
    struct host *x = &n->host[h];
    while (x->dma_len) {
        uint32_t i = x->dma[x->dma_head];
        struct msg *m = &MSG(n, i);
        if (m->ready > n->t)
            return RIFL_OK;
        bool taken;
        int rc = nic_take(n, x, i, n->t, &taken);
        if (!taken)
            return rc;
        x->dma_head = x->dma_head + 1 == n->cfg.nic_messages ? 0 : x->dma_head + 1;
        x->dma_len--;
    }
    return RIFL_OK;
}

static int host_cell_time(rifl_net *n, unsigned h)
{
    struct host *x = &n->host[h];
    struct link *k = &n->link[x->link];
    struct end *e = &k->end[x->side];
    bool credit = n->cfg.fc == RIFL_NET_FC_CREDIT;
    /* flow control from the switch */
    if (credit) {
        fcp_read(n, x->link, x->side);
    } else {
        rifl_l2_fc fc;
        while (next_fc(n, k, x->side, &fc))
            rifl_nic_fc(x->nic, &fc);
    }
    /* arrivals; with a host interface, only while the NIC's receive buffer
     * (DMA_RX_CELLS cells waiting to be written) has room: else the lane's
     * receive buffer fills and its flow control holds the switch */
    while (!rx_dma_full(n, x) && read_cell(n, x->link, x->side, e)) {
        if (credit) {
            /* taken in and handed on at once */
            unsigned vl = REC(n, e->rec).vl;
            credit_accept(n, x->link, x->side, vl);
            credit_release(n, x->link, x->side, vl);
        }
        deliver(n, h, e);
    }
    /* the source, then the NIC: one cell in the lane's queue behind the one
     * going out keeps the link busy */
    int rc = n->cfg.app ? n->cfg.app->tick(n->cfg.app->ctx, n, h, (double)n->t * n->slot_ns)
                        : generate(n, h, n->t / n->C);
    if (rc > 0)
        rc = RIFL_OK;
    if (rc == RIFL_OK && n->cfg.pcie_gbps > 0)
        rc = dma_post(n, h);
    if (rc != RIFL_OK)
        return rc;
    if (link_short(n, k, x->side)) {
        uint8_t cell[RIFL_L2_CELL_BYTES];
        rifl_nic_tx tx;
        if (rifl_nic_next_cell(x->nic, n->t, cell, &tx) == 1) {
            uint32_t ri = rec_new(n);
            if (ri == NONE)
                return RIFL_ERR_NOMEM;
            struct rec *r = &REC(n, ri);
            if (n->cfg.app) {
                /* the application's message: from its post */
                r->gen = tx.posted;
                r->msg = NONE;
                n->gen_cells++;
                if (tx.last)
                    n->cfg.app->sent(n->cfg.app->ctx, h, tx.tag);
            } else {
                r->gen = MSG(n, tx.tag).gen;
                r->msg = (uint32_t)tx.tag;
            }
            r->head = tx.head;
            r->sent = n->t;
            r->index = tx.index;
            r->vl = (uint8_t)tx.vl;
            if (link_send(n, k, x->side, cell, sizeof cell) != RIFL_OK ||
                !tag_push(&k->q[x->side], ri))
                n->inconsistent++;
            if (credit)
                credit_charge(n, x->link, x->side, tx.vl);
        }
    }
    if (credit)
        fcp_send(n, x->link, x->side);
    return RIFL_OK;
}

static void switch_cell_time(rifl_net *n, unsigned s)
{
    struct sw *w = &n->sw[s];
    uint64_t cslot = n->t / n->C;
    bool credit = n->cfg.fc == RIFL_NET_FC_CREDIT;
    /* inputs: flow control from downstream, then at most one cell each */
    for (unsigned p = 0; p < w->n; p++) {
        if (w->link[p] == UINT32_MAX)
            continue;
        if (credit)
            fcp_read(n, w->link[p], w->side[p]);
        else
            read_fc_switch(n, w, p);
        struct end *e = &n->link[w->link[p]].end[w->side[p]];
        if (!e->full) {
            if (!read_cell(n, w->link[p], w->side[p], e))
                continue;
            e->full = true;
        }
        rifl_cell c;
        memset(&c, 0, sizeof c);
        memcpy(c.hdr.b, e->buf, RIFL_L2_HDR_BYTES);
        if (!credit) {
            /* its VOQ is full: the lane holds the rest.  With per-VOQ flow
             * control this happens only when an ON notice came too late: a
             * replay on the link back held it up longer than the VOQ's
             * headroom lasts.  The cell waits instead of being dropped. */
            unsigned o;
            if (rifl_l2_forward(w->n, p, &c.hdr, &o) == RIFL_L2_FWD_UNICAST &&
                rifl_switch_voq_len(w->sw, p, o) >= rifl_switch_get_config(w->sw)->voq_cells) {
                n->voq_full_waits++;
                continue;
            }
        }
        struct rec *r = &REC(n, e->rec);
        memcpy(r->payload, e->buf + RIFL_L2_HDR_BYTES, RIFL_L2_CELL_PAYLOAD);
        unsigned hop = rifl_l2_total_hops(&c.hdr) - rifl_l2_remain_hops(&c.hdr);
        if (hop < RIFL_L2_MAX_HOPS)
            r->in[hop] = n->t;
        c.stamp = e->rec;
        c.vl = r->vl;
        c.src = (uint16_t)p; /* its input, for the credit it frees when it leaves */
        if (credit)
            credit_accept(n, w->link[p], w->side[p], r->vl);
        int v = rifl_switch_input(w->sw, p, &c, cslot);
        if (v != RIFL_SW_STORED) {
            /* dropped and counted by the switch */
            n->lost += r->msg == NONE || MSG(n, r->msg).measured;
            rec_free(n, e->rec);
            if (credit)
                credit_release(n, w->link[p], w->side[p], c.vl);
        }
        e->full = false;
        e->rec = NONE;
    }
    /* outputs whose lane cannot take one more cell are held */
    for (unsigned o = 0; o < w->n; o++) {
        if (w->link[o] == UINT32_MAX)
            continue;
        bool hold = !link_room(n, &n->link[w->link[o]], w->side[o], w->in_pipe[o] + 1);
        rifl_switch_hold_output(w->sw, o, hold);
    }
    rifl_switch_step(w->sw, cslot, w->out, w->outv, w->fc, w->fcv);
    /* the pipeline: cells switched now leave pipe_len cell times later */
    unsigned slot_in = n->pipe_pos; /* emptied below, refilled after */
    rifl_cell *row_in = w->pipe + (size_t)slot_in * w->n;
    uint8_t *vin = w->pipev + (size_t)slot_in * w->n;
    rifl_cell *row = w->pipe + (size_t)n->pipe_pos * w->n;
    uint8_t *vrow = w->pipev + (size_t)n->pipe_pos * w->n;
    for (unsigned o = 0; o < w->n; o++) {
        if (!vrow[o])
            continue;
        vrow[o] = 0;
        w->in_pipe[o]--;
        unsigned l = w->link[o], side = w->side[o];
        uint32_t ri = (uint32_t)row[o].stamp;
        struct rec *r = &REC(n, ri);
        uint8_t cell[RIFL_L2_CELL_BYTES];
        memcpy(cell, row[o].hdr.b, RIFL_L2_HDR_BYTES);
        memcpy(cell + RIFL_L2_HDR_BYTES, r->payload, RIFL_L2_CELL_PAYLOAD);
        unsigned hop = rifl_l2_total_hops(&row[o].hdr) - rifl_l2_remain_hops(&row[o].hdr) - 1;
        if (hop < RIFL_L2_MAX_HOPS)
            r->out[hop] = n->t;
        if (link_send(n, &n->link[l], side, cell, sizeof cell) != RIFL_OK ||
            !tag_push(&n->link[l].q[side], ri))
            n->inconsistent++;
    }
    for (unsigned o = 0; o < w->n; o++)
        if (w->outv[o]) {
            row_in[o] = w->out[o];
            vin[o] = 1;
            w->in_pipe[o]++;
            if (credit) {
                /* the cell left its input's buffer, and takes credit on
                 * the output's link */
                unsigned in = w->out[o].src, vl = w->out[o].vl;
                credit_release(n, w->link[in], w->side[in], vl);
                credit_charge(n, w->link[o], w->side[o], vl);
            }
        }
    /* per-VOQ flow-control frames upstream, those refused before first */
    for (unsigned p = 0; p < w->n; p++) {
        if (w->link[p] == UINT32_MAX)
            continue;
        struct pend_fc *q = w->pend + (size_t)p * PEND;
        if (w->fcv[p]) {
            if (w->npend[p] == PEND)
                n->inconsistent++;
            else
                q[w->npend[p]++] = (struct pend_fc){ w->fc[p], true };
        }
        if (credit) {
            fcp_send(n, w->link[p], w->side[p]);
            continue;
        }
        rifl_lane *ln = w->npend[p] ? ext_lane_tx(n, &n->link[w->link[p]], w->side[p]) : NULL;
        unsigned sent = 0;
        while (sent < w->npend[p]) {
            uint8_t data[3];
            rifl_l2_fc_pack(&q[sent].fc, data);
            if (rifl_lane_send_ext(ln, RIFL_L2_FC_CODE, data, sizeof data) != RIFL_OK)
                break;
            n->link[w->link[p]].fc_frames[w->side[p]]++;
            sent++;
        }
        if (sent) {
            memmove(q, q + sent, (w->npend[p] - sent) * sizeof *q);
            w->npend[p] -= sent;
        }
    }
}

/* ---- the links ----------------------------------------------------------------- */

/* A link is parked once nothing was sent on it for PARK_QUIET slots (a
 * short gap costs more to skip than to step: the frames in flight and the
 * replay buffer are rebuilt) and no error falls in the next PARK_MIN. */
#define PARK_QUIET 1024
#define PARK_MIN 64

static void step_pair(rifl_pair *p, bool *by_ref, bool by_content)
{
    if (by_content && *by_ref) {
        rifl_pair_ref_end(p);
        *by_ref = false;
    }
    if (!*by_ref && !by_content && rifl_pair_ref_room(p) && rifl_pair_ref_begin(p) == RIFL_OK)
        *by_ref = true;
    if (*by_ref)
        rifl_pair_ref_step(p);
    else
        rifl_pair_step(p, NULL);
}

/* One frame slot of link k's lanes; a bonded end first places the words
 * its groups can take (rifl_bond_place) before its lanes send. */
static void step_link(rifl_net *n, struct link *k, bool by_content)
{
    if (k->pair) {
        step_pair(k->pair, &k->by_ref, by_content);
        n->lane_steps += 2;
        return;
    }
    rifl_bond_place(k->bond[0]);
    rifl_bond_place(k->bond[1]);
    for (unsigned i = 0; i < k->nl; i++)
        step_pair(k->lp[i], &k->lp_ref[i], by_content);
    n->lane_steps += 2 * k->nl;
}

/* Park link k after its slot n->t when it is idle for long enough to be
 * worth it (nothing queued either way, only fillers in flight). */
static void park(rifl_net *n, struct link *k)
{
    rifl_pair *p = k->pair;
    if (n->t - k->last_send < PARK_QUIET || rifl_lane_tx_backlog(p->lane[0]) ||
        rifl_lane_tx_backlog(p->lane[1]))
        return;
    uint64_t room = rifl_pair_idle_room(p);
    if (room < PARK_MIN)
        return;
    k->parked = true;
    k->park_t = n->t + 1;
    k->park_room = room;
}

static void window_start(rifl_net *n)
{
    for (unsigned l = 0; l < n->L; l++)
        for (int i = 0; i < 2; i++)
            n->link[l].bytes0[i] = link_tx_bytes(&n->link[l], (unsigned)i);
}

/* What each link direction sent by the window's end (its utilisation
 * counts no drain). */
static void window_end(rifl_net *n)
{
    for (unsigned l = 0; l < n->L; l++)
        for (int i = 0; i < 2; i++)
            n->link[l].bytes1[i] = link_tx_bytes(&n->link[l], (unsigned)i);
}

int rifl_net_run(rifl_net *n, uint64_t slots)
{
    if (!n)
        return RIFL_ERR_INVALID_ARG;
    if (n->finished)
        return 1;
    int rc = RIFL_OK;
    for (uint64_t k = 0; k < slots && !n->finished && rc == RIFL_OK; k++) {
        if (n->t == n->warm)
            window_start(n);
        if (n->t % n->C == 0) {
            for (unsigned h = 0; h < n->H && rc == RIFL_OK; h++)
                rc = host_cell_time(n, h);
            if (rc != RIFL_OK)
                break; /* (the links still brought up to date below) */
            for (unsigned s = 0; s < n->S; s++)
                switch_cell_time(n, s);
            n->pipe_pos = n->pipe_pos + 1 == n->pipe_len ? 0 : n->pipe_pos + 1;
            if (n->cfg.app && n->cfg.app->done(n->cfg.app->ctx)) {
                n->window_done = true;
                n->finished = true;
                n->app_done = true;
                break;
            }
        }
        unsigned watched = n->cfg.observe && n->t < n->cfg.observe_slots
                               ? n->host[n->cfg.observe_host].link
                               : UINT32_MAX;
        for (unsigned l = 0; l < n->L; l++) {
            struct link *lk = &n->link[l];
            if (l == watched)
                continue;
            if (lk->parked) {
                if (n->t - lk->park_t < lk->park_room)
                    continue;
                unpark(n, lk);
            }
            if (lk->step_mbps < n->base_mbps) {
                /* slower lanes: a frame slot of their own now and then */
                lk->acc += lk->step_mbps;
                if (lk->acc < n->base_mbps)
                    continue;
                lk->acc -= n->base_mbps;
            }
            step_link(n, lk, n->cfg.by_content);
            if (n->t % n->C == 0 && lk->pair && lk->step_mbps == n->base_mbps &&
                !n->cfg.by_content &&
                !(n->cfg.observe && l == n->host[n->cfg.observe_host].link))
                park(n, lk);
        }
        if (n->cfg.observe && n->t < n->cfg.observe_slots) {
            /* the watched link: stepped by content, seen */
            const struct host *x = &n->host[n->cfg.observe_host];
            struct link *wl = &n->link[x->link];
            if (wl->by_ref) {
                rifl_pair_ref_end(wl->pair);
                wl->by_ref = false;
            }
            rifl_pair_slot seen;
            rifl_pair_step(wl->pair, &seen);
            n->lane_steps += 2;
            n->cfg.observe(n->cfg.observe_ctx, &seen, x->side);
        }
        n->t++;
        if (n->t == n->win_end)
            window_end(n);
        if (n->t == n->win_end ||
            (n->cfg.bytes_per_flow && n->senders_done == n->senders && !n->window_done)) {
            /* a finite workload: the last message is made (the waiting
             * ones still count), and the drain limit starts */
            n->window_done = true;
            if (n->cfg.bytes_per_flow)
                n->limit = n->t + (uint64_t)ceil(n->cfg.drain_ns / n->slot_ns);
        }
        if (window_complete(n) || n->t >= n->limit)
            n->finished = true;
    }
    /* between calls every link is up to date (its counters read true),
     * after an error too */
    for (unsigned l = 0; l < n->L; l++)
        unpark(n, &n->link[l]);
    if (rc != RIFL_OK)
        return rc;
    if (n->inconsistent)
        return RIFL_ERR_STATE;
    return n->finished ? 1 : 0;
}

double rifl_net_progress(const rifl_net *n)
{
    if (!n || n->finished)
        return 1.0;
    double f = n->cfg.app ? (double)n->t / (double)(n->limit ? n->limit : 1)
               : n->cfg.bytes_per_flow
                   ? (double)n->deliv_bytes / (double)(n->total_bytes ? n->total_bytes : 1)
                   : (double)n->t / (double)(n->win_end ? n->win_end : 1);
    return f < 0.99 ? f : 0.99;
}

/* ---- results ------------------------------------------------------------------- */

static rifl_net_pct pct(const rifl_hist *h, double ns)
{
    rifl_net_pct p = { 0 };
    p.samples = h->n;
    if (!h->n)
        return p;
    p.p1 = (double)rifl_hist_quantile(h, 0.01) * ns;
    p.p50 = (double)rifl_hist_quantile(h, 0.5) * ns;
    p.p75 = (double)rifl_hist_quantile(h, 0.75) * ns;
    p.p90 = (double)rifl_hist_quantile(h, 0.9) * ns;
    p.p95 = (double)rifl_hist_quantile(h, 0.95) * ns;
    p.p99 = (double)rifl_hist_quantile(h, 0.99) * ns;
    p.p999 = (double)rifl_hist_quantile(h, 0.999) * ns;
    p.max = (double)h->max * ns;
    p.mean = rifl_hist_avg(h) * ns;
    return p;
}

static void end_name(const rifl_net *n, const struct end *e, char *out, size_t cap)
{
    const rifl_topology *t = n->cfg.topo;
    if (e->is_switch) {
        unsigned s = 0;
        for (unsigned v = 0; v < t->nnodes; v++)
            if (t->nodes[v].is_switch && s++ == e->idx) {
                snprintf(out, cap, "%s:%u", t->nodes[v].name, e->port);
                return;
            }
    }
    snprintf(out, cap, "%s", t->nodes[rifl_nic_map_node(n->map, e->idx)].name);
}

int rifl_net_result_get(const rifl_net *n, rifl_net_result *r)
{
    if (!n || !r)
        return RIFL_ERR_INVALID_ARG;
    memset(r, 0, sizeof *r);
    r->finished = n->cfg.app ? n->app_done : window_complete(n);
    r->hosts = n->H;
    r->switches = n->S;
    r->links = n->L;
    r->slot_ns = n->slot_ns;
    r->cell_slots = n->C;
    r->cell_ns = n->C * n->slot_ns;
    r->slots = n->t;
    r->lane_slots = n->lane_steps;
    r->idle_lane_slots = n->idle_steps;
    r->sim_ns = (double)n->t * n->slot_ns;
    r->latency = pct(&n->lat, n->slot_ns);
    r->latency_head = pct(&n->head, n->slot_ns);
    r->mct = pct(&n->mct, n->slot_ns);
    for (unsigned h = 1; h <= RIFL_L2_MAX_HOPS; h++) {
        r->path_cells[h] = n->seg_n[h][0];
        for (unsigned k = 0; k < 2 * h + 3; k++)
            r->segment_ns[h][k] =
                n->seg_n[h][k] ? n->seg_sum[h][k] / (double)n->seg_n[h][k] * n->slot_ns : 0;
    }
    r->generated_cells = n->gen_cells;
    r->delivered_cells = n->deliv_cells;
    r->completed_messages = n->done_msgs;
    r->corrupt = n->corrupt + n->inconsistent;
    r->source_stalls = n->stalls;
    r->voq_full_waits = n->voq_full_waits;
    if (!n->cfg.app && !n->cfg.bytes_per_flow)
        for (unsigned h = 0; h < n->H; h++) {
            uint64_t lag = host_lag(n, h);
            r->lagging_sources += lag != 0;
            if ((double)lag * n->slot_ns > r->source_lag_ns)
                r->source_lag_ns = (double)lag * n->slot_ns;
        }
    r->lost = n->lost;
    r->undelivered = n->gen_cells - n->deliv_cells - n->lost;
    uint64_t dropped = n->nic_drops;
    for (unsigned s = 0; s < n->S; s++) {
        rifl_switch_stats st;
        rifl_switch_get_stats(n->sw[s].sw, &st);
        dropped += st.drop_misrouted + st.drop_invalid + st.drop_overflow;
        r->fc_frames += st.fc_frames_sent;
        r->cell_hops += st.cells_out;
        if (st.max_voq_cells > r->max_voq_cells)
            r->max_voq_cells = st.max_voq_cells;
    }
    r->dropped = dropped;
    if (n->cfg.fc == RIFL_NET_FC_CREDIT) {
        r->vls = n->vls;
        r->credit_cells = n->credit_cells;
        for (unsigned s = 0; s < n->S; s++) {
            rifl_switch_stats st;
            rifl_switch_get_stats(n->sw[s].sw, &st);
            r->credit_waits += st.credit_blocked_requests;
        }
        for (unsigned h = 0; h < n->H; h++)
            r->credit_waits += rifl_nic_get_stats(n->host[h].nic)->credit_skips;
    }
    r->link = calloc(2 * (size_t)n->L, sizeof *r->link);
    if (!r->link)
        return RIFL_ERR_NOMEM;
    r->finite = n->cfg.bytes_per_flow != 0 || n->cfg.app;
    double win_ns = r->finite ? r->sim_ns : n->cfg.window_ns;
    uint64_t win_slots = r->finite ? n->t : n->win_end - n->warm;
    for (unsigned l = 0; l < n->L; l++)
        for (int i = 0; i < 2; i++) {
            struct link *k = &n->link[l];
            rifl_net_link *o = &r->link[2 * l + (unsigned)i];
            /* the lanes' counters, summed over a bonded link's */
            uint64_t replays = 0, fails = 0, lane_fc = 0;
            for (unsigned j = 0; j < k->nl; j++) {
                rifl_pair *pr = k->pair ? k->pair : k->lp[j];
                const rifl_lane_stats *ls = rifl_lane_get_stats(pr->lane[i]);
                replays += ls->tx_replay_cycles;
                fails += rifl_lane_get_stats(pr->lane[1 - i])->rx_verify_fail;
                lane_fc += ls->fc_on_sent + ls->fc_off_sent;
            }
            const rifl_pair *p0 = k->pair ? k->pair : k->lp[0];
            end_name(n, &k->end[i], o->from, sizeof o->from);
            end_name(n, &k->end[1 - i], o->to, sizeof o->to);
            uint64_t bytes = n->t <= n->warm      ? 0
                             : n->t < n->win_end ? link_tx_bytes(k, (unsigned)i) - k->bytes0[i]
                                                 : k->bytes1[i] - k->bytes0[i];
            double cap = (double)(n->t < n->win_end ? (n->t > n->warm ? n->t - n->warm : 0)
                                                     : win_slots) *
                         rifl_payload_bytes(n->cfg.frame_bits) * (double)k->rate_mbps /
                         (double)n->base_mbps;
            o->utilisation = cap > 0 ? (double)bytes / cap : 0;
            o->rate_gbps = (double)k->rate_mbps / 1000;
            o->lanes = k->nl;
            o->cable_m = k->cable_m;
            o->ber = k->ber[i];
            o->fid_bits = rifl_lane_get_config(p0->lane[i])->fid_bits;
            o->delay_frames = p0->delay_frames;
            o->replays = replays;
            o->verify_fails = fails;
            o->fc_frames = k->fc_frames[i] + lane_fc;
            r->replays += o->replays;
            r->verify_fails += o->verify_fails;
            r->fc_frames += lane_fc;
            if (n->cfg.fc == RIFL_NET_FC_CREDIT)
                r->fc_frames += k->fc_frames[i]; /* FCPs */
        }
    r->throughput_gbps_min = 1e300;
    for (unsigned h = 0; h < n->H; h++) {
        double g = (double)n->host[h].rx_bytes * 8 / win_ns;
        r->throughput_gbps_mean += g / n->H;
        if (g < r->throughput_gbps_min)
            r->throughput_gbps_min = g;
        if (g > r->throughput_gbps_max)
            r->throughput_gbps_max = g;
    }
    r->offered_gbps = n->cfg.load * n->offered_frac * n->mean_bytes / n->mean_cells * 8 /
                      r->cell_ns;
    r->victim_gbps = (double)n->victim_bytes * 8 / win_ns;
    r->victim_cells = n->victim_cells;
    return RIFL_OK;
}

int rifl_net_post(rifl_net *n, unsigned host, unsigned dst, unsigned path, const void *msg,
                  size_t len, uint64_t tag)
{
    if (!n || host >= n->H)
        return RIFL_ERR_INVALID_ARG;
    if (!n->cfg.app)
        return RIFL_ERR_STATE;
    return rifl_nic_post_msg(n->host[host].nic, dst, path, msg, len, tag, n->t);
}

double rifl_net_slot_ns(const rifl_net *n)
{
    return n ? n->slot_ns : 0;
}

unsigned rifl_net_paths(const rifl_net *n, unsigned src, unsigned dst)
{
    if (!n || src >= n->H || dst >= n->H || src == dst)
        return 0;
    unsigned count;
    rifl_nic_map_routes(n->map, src, dst, &count);
    return count;
}

const struct rifl_nic *rifl_net_nic(const rifl_net *n, unsigned host)
{
    return n && host < n->H ? n->host[host].nic : NULL;
}

void rifl_net_result_free(rifl_net_result *r)
{
    if (r) {
        free(r->link);
        r->link = NULL;
    }
}

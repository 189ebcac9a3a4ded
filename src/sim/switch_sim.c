/* Cell-time simulator of hosts around RIFL Layer 2 switches: traffic
 * sources, fixed-delay links, per-VOQ flow control, delivery checks and
 * statistics.  Sans-I/O: the caller drives it; all memory is allocated by
 * rifl_ssim_create. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/rng.h"
#include "rifl/sim/switch_sim.h"

#define HIST_MAX (1u << 18)
/* flow-control frames travel encoded: the payload of one 256-bit link frame */
#define FC_BYTES 30
typedef struct fc_wire {
    uint8_t b[FC_BYTES];
} fc_wire;
#define MAX_HOSTS 1024

const rifl_ssim_config rifl_ssim_default_config = {
    .nports = 32,
    .scheduler = RIFL_SCHED_ISLIP,
    .iterations = 3,
    .load = 0.9,
    .traffic = RIFL_TRAFFIC_BERNOULLI,
    .packet_bytes = 256,
    .var_min = 64,
    .var_max = 2048,
    .burst_bytes = 1024,
    .bytes_per_pair = 2500000,
    .latency = 17,
    .voq_cells = 0,
    .fc_on = 0,
    .fc_off = 0,
    .check_fabric = true,
    .seed = 1,
    .max_slots = 0,
    .topo = NULL,
    .host_fifo = false,
    .host_fifo_cells = 16,
    .broadcast = 0,
};

const double rifl_ssim_percentiles[RIFL_SSIM_NPCT] = { 1, 50, 75, 90, 95, 99, 100 };

enum { PEER_NONE = 0, PEER_HOST, PEER_SWITCH };

struct peer {
    uint8_t kind;
    uint16_t port;    /* port on the peer (switch) */
    uint32_t idx;     /* host or switch index */
    uint32_t delay;
};

struct ssw {
    rifl_switch *sw;
    unsigned n;
    struct peer *peer;       /* [n] */
    /* rings by slot: entry k * n + p arrives at port p in the slots
     * t = k (mod R) */
    rifl_cell *in_ring;      /* [R][n] cells arriving at input p */
    uint8_t *in_valid;
    fc_wire *fc_ring;        /* [R][n] FC arriving at output p from downstream */
    uint8_t *fc_valid;
    rifl_cell *out;
    uint8_t *outv;
    rifl_l2_fc *fc;
    uint8_t *fcv;
};

/* What a host keeps per destination, in one place and small: a cell is
 * generated, queued and sent with one cache line. */
struct pair {
    uint64_t remaining;      /* bytes still to generate */
    uint32_t queue;          /* cells waiting in the host */
    uint32_t next_seq;       /* sequence number of the next cell */
};

/* The generation slots of the cells a host holds for one destination, in
 * order (a ring of cap entries from head; the pair's queue counts them),
 * their low 32 bits: a cell's wait is told exactly up to WAIT_MAX. */
struct gq {
    uint32_t *v;
    uint32_t head, cap;
};

/* hosts_one_cell writes a cell's two tags as one 32-bit word */
_Static_assert(offsetof(rifl_cell, dst) == offsetof(rifl_cell, src) + 2,
               "a cell's destination tag follows its source tag");

/* A cell's stamp: the slot it left its host (low STAMP_BITS bits) and how
 * long it waited there (the rest, saturated). */
#define STAMP_BITS 40
#define STAMP_MASK ((1ull << STAMP_BITS) - 1)
#define WAIT_MAX ((1ull << (64 - STAMP_BITS)) - 1)

struct host {
    struct peer up;          /* the switch port it hangs on */
    uint64_t paused[4];      /* first-hop VOQs paused */
    struct pair *pair;       /* [H] by destination (a row of rifl_ssim.pair) */
    uint64_t *ready;         /* [HW] destinations with cells */
    unsigned rr;
    uint64_t backlog;
    uint16_t *active;        /* destinations with bytes left */
    unsigned nactive;
    bool in_train;
    bool bcast_train;        /* the train is broadcast */
    unsigned train_dst;
    unsigned next_dst;       /* destination of the next train (nactive > 0) */
    uint64_t burst_left;     /* bursty: cells left in the train's draw */
    uint32_t cells_left;     /* cells left in the packet */
    uint64_t next_start;
    rifl_rng rng;
    uint16_t *fifo;          /* FIFO mode: destinations in generation order */
    uint64_t *fifo_gen;      /* ... and the slots they were generated */
    unsigned fifo_head, fifo_len;
};

struct rifl_ssim {
    rifl_ssim_config cfg;
    unsigned H, HW, S, R;
    struct ssw *sw;
    struct host *host;
    /* what arrives at the hosts, by slot: entry k * H + h (see struct ssw) */
    rifl_cell *rx_ring;      /* [R][H] */
    uint8_t *rx_valid;
    fc_wire *fc_ring;        /* [R][H] */
    uint8_t *fc_valid;
    unsigned k;              /* ring entry of this slot: t mod R */
    struct pair *pair;       /* [H*H], source by destination */
    struct gq *gq;           /* [H*H], source by destination */
    /* topology mode: the route and first-hop VOQ of every pair (a single
     * switch derives them from the ports) */
    rifl_l2_hdr *route;      /* [H*H] */
    uint8_t *first_q;        /* [H*H] */
    uint32_t *expect;        /* [H*H], source by destination: next sequence number */
    /* broadcast runs: [H*H], source by receiver, the next sequence number
     * of the source's broadcast cells (which a host numbers in the entry
     * of its own pair: pair[h] of host h, a destination it never has) */
    uint32_t *bexpect;
    /* latency histograms, side by side (the two are mostly equal, so one
     * cache line takes both counts): [l][0] from leaving the host, [l][1]
     * from generation */
    uint64_t (*hist)[2];
    uint64_t lat_max, lat_sum, lat_n, gen_max, gen_sum, wait_clipped;
    uint64_t t;
    uint64_t generated, delivered, payload, lost, duplicated, misdelivered;
    uint64_t backlog_sum, backlog_max, fc_to_hosts, stalls, hol, fc_bad;
    unsigned hosts_done;
    double off_p, burst_p;
    rifl_geo off_geo, burst_geo; /* the two geometric laws */
    /* the idle period's draw without rifl_geo_of's loop (off_draw): the
     * first off_n lower band edges of off_geo (UINT64_MAX past its end)
     * and, one place on, their upper edges (off_hi[0] = 0); off_n = 0 when
     * the draw goes through geometric() */
    unsigned off_n;
    uint64_t off_lo[8], off_hi[9];
    /* hosts_one_cell may do the hosts' work: trains of one cell, a single
     * switch, and a cell's first 8 bytes laid out as it writes them */
    bool fast_hosts;
    unsigned voq_cells, fc_on, fc_off, rtt;
    bool finished;
    bool oom;                /* a host's queue of generation slots could not grow */
    bool identity_q;         /* single switch: first-hop VOQ = destination */
    bool single;             /* single switch: port p leads to host p (wire_single) */
    /* trains of one packet of one cell (Bernoulli traffic of 256-byte
     * packets) into per-destination queues: generate's short way */
    bool one_cell;
    /* single switch: the row of the switch's input ring that the cells the
     * hosts send in this slot go to (entry h for host h) */
    rifl_cell *in_row;
    uint8_t *in_vrow;
    uint64_t last_delivery;
    /* the stall check: the slot of the last delivery or check, whether a
     * check found cells held since, and the verdict */
    uint64_t progress_t;
    bool stall_armed, stalled;
    uint64_t stall_slots, stalled_cells;
};


static inline void bset(uint64_t *b, unsigned i) { b[i >> 6] |= 1ull << (i & 63); }
static inline void bclr(uint64_t *b, unsigned i) { b[i >> 6] &= ~(1ull << (i & 63)); }
static inline int bget(const uint64_t *b, unsigned i) { return (int)((b[i >> 6] >> (i & 63)) & 1); }

/* failures before the first success (0 when p = 1), at most 1e15 */
static uint64_t geometric(rifl_rng *r, const rifl_geo *g)
{
    uint64_t v = rifl_geo_draw(g, r);
    return v < (uint64_t)1e15 ? v : (uint64_t)1e15;
}

void rifl_ssim_free(rifl_ssim *s)
{
    if (!s)
        return;
    for (unsigned k = 0; s->sw && k < s->S; k++) {
        struct ssw *w = &s->sw[k];
        rifl_switch_free(w->sw);
        free(w->peer); free(w->in_ring); free(w->in_valid); free(w->fc_ring);
        free(w->fc_valid); free(w->out); free(w->outv); free(w->fc); free(w->fcv);
    }
    for (unsigned h = 0; s->host && h < s->H; h++) {
        struct host *x = &s->host[h];
        free(x->ready); free(x->active); free(x->fifo); free(x->fifo_gen);
    }
    for (size_t i = 0; s->gq && i < (size_t)s->H * s->H; i++)
        free(s->gq[i].v);
    free(s->gq);
    free(s->sw);
    free(s->host);
    free(s->rx_ring);
    free(s->rx_valid);
    free(s->fc_ring);
    free(s->fc_valid);
    free(s->pair);
    free(s->route);
    free(s->first_q);
    free(s->expect);
    free(s->bexpect);
    free(s->hist);
    free(s);
}

/* The mean packet in cells (returned) and bytes, and the mean length in
 * cells of a bursty train whose draw has a mean of B cells.  The draw n is
 * geometric (P(n = k) = p (1 - p)^(k - 1), p = 1 / B) and counts cells,
 * but a train ends only with a packet: the one in which the count runs
 * out.  The draw being memoryless, a packet of c cells ends the train with
 * probability 1 - (1 - p)^c whatever came before, so a train holds
 * 1 / E[1 - (1-p)^c] packets on average and, by Wald's identity,
 * E[c] / E[1 - (1-p)^c] cells. */
static double mean_cells(const rifl_ssim_config *c, double B, double *mean_bytes, double *train)
{
    const double p = 1.0 / B;
    if (c->packet_bytes) {
        double cells = (double)((c->packet_bytes + 255) / 256);
        *mean_bytes = c->packet_bytes;
        /* packets of one cell: a train is its draw */
        *train = cells == 1 ? B : cells / (1 - pow(1 - p, cells));
        return cells;
    }
    double sc = 0, sb = 0, sq = 0;
    for (unsigned b = c->var_min; b <= c->var_max; b++) {
        double cells = (double)((b + 255) / 256);
        sc += cells;
        sb += b;
        sq += 1 - pow(1 - p, cells);
    }
    double n = c->var_max - c->var_min + 1;
    *mean_bytes = sb / n;
    *train = sc / sq;
    return sc / n;
}

static int check_cfg(const rifl_ssim_config *c, char *err, size_t errlen)
{
    if (!(c->load > 0 && c->load <= 1)) {
        rifl_msg(err, errlen, "load = %g: use a fraction of the line rate in (0, 1]", c->load);
        return RIFL_ERR_CONFIG;
    }
    if (c->packet_bytes && c->packet_bytes % 256) {
        rifl_msg(err, errlen, "packet-bytes = %u: fixed packets are a multiple of 256 bytes "
               "(use 0 for variable sizes)", c->packet_bytes);
        return RIFL_ERR_CONFIG;
    }
    if (c->packet_bytes > 1u << 20) {
        rifl_msg(err, errlen, "packet-bytes = %u: at most 1 MiB", c->packet_bytes);
        return RIFL_ERR_CONFIG;
    }
    if (!c->packet_bytes && (c->var_min < 1 || c->var_max < c->var_min || c->var_max > 65536)) {
        rifl_msg(err, errlen, "variable packet sizes %u..%u: need 1 <= min <= max <= 65536",
               c->var_min, c->var_max);
        return RIFL_ERR_CONFIG;
    }
    if (c->traffic != RIFL_TRAFFIC_BERNOULLI && c->traffic != RIFL_TRAFFIC_BURSTY) {
        rifl_msg(err, errlen, "traffic %d is unknown; use RIFL_TRAFFIC_BERNOULLI or "
                 "RIFL_TRAFFIC_BURSTY", (int)c->traffic);
        return RIFL_ERR_CONFIG;
    }
    if (c->traffic == RIFL_TRAFFIC_BURSTY && !(c->burst_bytes >= 1 && c->burst_bytes <= 1e9)) {
        rifl_msg(err, errlen, "burst-bytes = %g: use 1 to 1e9", c->burst_bytes);
        return RIFL_ERR_CONFIG;
    }
    if (c->bytes_per_pair < 1) {
        rifl_msg(err, errlen, "bytes-per-pair = 0: every pair needs some data to send");
        return RIFL_ERR_CONFIG;
    }
    if (c->host_fifo && (c->host_fifo_cells < 1 || c->host_fifo_cells > 65535)) {
        rifl_msg(err, errlen, "host-fifo-cells = %u: use 1 to 65535", c->host_fifo_cells);
        return RIFL_ERR_CONFIG;
    }
    if (!c->topo && (c->nports < 2 || c->nports > RIFL_L2_MAX_PORTS)) {
        rifl_msg(err, errlen, "ports = %u: a switch has 2 to %d ports", c->nports,
                 RIFL_L2_MAX_PORTS);
        return RIFL_ERR_CONFIG;
    }
    if (c->scheduler == RIFL_SCHED_ISLIP &&
        (c->iterations < 1 || c->iterations > RIFL_L2_MAX_PORTS ||
         (!c->topo && c->iterations > c->nports))) {
        rifl_msg(err, errlen, "iterations = %u: iSLIP runs 1 to %u iterations on a %u-port switch",
                 c->iterations, c->topo ? RIFL_L2_MAX_PORTS : c->nports,
                 c->topo ? RIFL_L2_MAX_PORTS : c->nports);
        return RIFL_ERR_CONFIG;
    }
    if (c->watch && (c->topo || c->watch_host >= c->nports)) {
        rifl_msg(err, errlen, c->topo ? "watching a host's link needs the single-switch mode "
                                        "(no topology)"
                                      : "watched host %u: the switch has hosts 0 to %u",
                 c->watch_host, c->nports - 1);
        return RIFL_ERR_CONFIG;
    }
    if (!(c->broadcast >= 0 && c->broadcast <= 1)) {
        rifl_msg(err, errlen, "broadcast = %g: use a fraction of the trains in [0, 1]",
                 c->broadcast);
        return RIFL_ERR_CONFIG;
    }
    if (c->broadcast > 0 && c->topo) {
        rifl_msg(err, errlen, "broadcast traffic needs the single-switch mode (no topology): "
                 "a broadcast cell ends its route at the first switch");
        return RIFL_ERR_CONFIG;
    }
    if (c->latency < 2 || c->latency > 100000) {
        rifl_msg(err, errlen, "latency = %u: use 2 to 100000 cell times", c->latency);
        return RIFL_ERR_CONFIG;
    }
    return RIFL_OK;
}

static int alloc_host(struct host *x, unsigned H, unsigned HW, unsigned fifo)
{
    x->fifo = calloc(fifo ? fifo : 1, sizeof *x->fifo);
    x->fifo_gen = calloc(fifo ? fifo : 1, sizeof *x->fifo_gen);
    x->ready = calloc(HW, sizeof *x->ready);
    x->active = calloc(H, sizeof *x->active);
    return x->fifo && x->fifo_gen && x->ready && x->active ? 0 : -1;
}

static int alloc_sw(struct ssw *w, unsigned n, unsigned R)
{
    w->n = n;
    w->peer = calloc(n, sizeof *w->peer);
    w->in_ring = calloc((size_t)n * R, sizeof *w->in_ring);
    w->in_valid = calloc((size_t)n * R, 1);
    w->fc_ring = calloc((size_t)n * R, sizeof *w->fc_ring);
    w->fc_valid = calloc((size_t)n * R, 1);
    w->out = calloc(n, sizeof *w->out);
    w->outv = calloc(n, 1);
    w->fc = calloc(n, sizeof *w->fc);
    w->fcv = calloc(n, 1);
    return w->peer && w->in_ring && w->in_valid && w->fc_ring && w->fc_valid && w->out &&
           w->outv && w->fc && w->fcv ? 0 : -1;
}

/* The round trip of a link of delay d from a switch, slots: to another
 * switch 2 x d + 2; to a host up the host's way, down, and the slot
 * between (a host's cell made in a slot is in the switch's input the next
 * slot at the soonest: a delay of 0 is 1 that way). */
static uint64_t link_rtt(uint64_t d, bool to_switch)
{
    return to_switch ? 2 * d + 2 : (d ? d : 1) + d + 1;
}

/* Host and switch counts: from the topology, or N hosts on one N-port
 * switch; refuses counts the simulator cannot take. */
static int count_nodes(const rifl_ssim_config *cfg, unsigned *nh, unsigned *ns, char *err,
                       size_t errlen)
{
    const rifl_topology *T = cfg->topo;
    unsigned H, S;
    if (T) {
        H = T->nhosts;
        S = T->nswitches;
        if (S == 0) {
            rifl_msg(err, errlen, "topology has no switch; add 'switch NAME PORTS' lines");
            return RIFL_ERR_CONFIG;
        }
    } else {
        if (cfg->nports < 2 || cfg->nports > RIFL_L2_MAX_PORTS) {
            rifl_msg(err, errlen, "ports = %u: a switch has 2 to %d ports", cfg->nports,
                   RIFL_L2_MAX_PORTS);
            return RIFL_ERR_CONFIG;
        }
        H = cfg->nports;
        S = 1;
    }
    if (H < 2 || H > MAX_HOSTS) {
        rifl_msg(err, errlen, "%s%u host%s: the simulator takes 2 to %d hosts%s",
                 T ? "the topology has " : "", H, H == 1 ? "" : "s", MAX_HOSTS,
                 T && H < 2 ? "; add 'host NAME' lines and link them" : "");
        return RIFL_ERR_CONFIG;
    }
    /* every link's round trip within what a switch takes */
    for (unsigned i = 0; T && i < T->nnodes; i++) {
        const rifl_topo_node *nd = &T->nodes[i];
        for (unsigned p = 0; nd->is_switch && p < nd->nports; p++) {
            int pn = nd->peer[p];
            if (pn < 0)
                continue;
            bool both = T->nodes[pn].is_switch;
            uint64_t d = nd->delay[p], rt = link_rtt(d, both);
            if (rt > RIFL_SWITCH_MAX_RTT) {
                char peer[RIFL_TOPO_NAME_MAX + 16];
                if (both)
                    snprintf(peer, sizeof peer, "%s:%u", T->nodes[pn].name, nd->peer_port[p]);
                else
                    snprintf(peer, sizeof peer, "%s", T->nodes[pn].name);
                rifl_msg(err, errlen, "link %s:%u - %s: delay %llu slots makes a round trip "
                         "of %llu slots, above the switches' %d; use a delay of at most %d",
                         nd->name, p, peer, (unsigned long long)d, (unsigned long long)rt,
                         RIFL_SWITCH_MAX_RTT, (RIFL_SWITCH_MAX_RTT - (both ? 2 : 1)) / 2);
                return RIFL_ERR_CONFIG;
            }
        }
    }
    *nh = H;
    *ns = S;
    return RIFL_OK;
}

/* Number the hosts and the switches of T in the order of its nodes
 * (host_of[i], sw_of[i]: -1 when node i is not one); returns the longest
 * link delay. */
static unsigned number_nodes(const rifl_topology *T, int *host_of, int *sw_of)
{
    unsigned nh = 0, ns = 0, maxdelay = 0;
    for (unsigned i = 0; i < T->nnodes; i++) {
        host_of[i] = sw_of[i] = -1;
        if (T->nodes[i].is_switch)
            sw_of[i] = (int)ns++;
        else
            host_of[i] = (int)nh++;
        for (unsigned p = 0; p < T->nodes[i].nports; p++)
            if (T->nodes[i].peer[p] >= 0 && T->nodes[i].delay[p] > maxdelay)
                maxdelay = T->nodes[i].delay[p];
    }
    return maxdelay;
}

/* The per-pair tables, the histogram and every host's buffers; nonzero when
 * out of memory. */
static int alloc_tables(rifl_ssim *s, const rifl_ssim_config *cfg)
{
    const unsigned H = s->H;
    s->sw = calloc(s->S, sizeof *s->sw);
    s->host = calloc(H, sizeof *s->host);
    s->pair = calloc((size_t)H * H, sizeof *s->pair);
    s->gq = calloc((size_t)H * H, sizeof *s->gq);
    if (cfg->topo) {
        s->route = calloc((size_t)H * H, sizeof *s->route);
        s->first_q = calloc((size_t)H * H, 1);
    }
    s->expect = calloc((size_t)H * H, sizeof *s->expect);
    if (cfg->broadcast > 0)
        s->bexpect = calloc((size_t)H * H, sizeof *s->bexpect);
    s->hist = calloc(HIST_MAX, sizeof *s->hist);
    size_t ring = (size_t)s->R * H;
    s->rx_ring = calloc(ring, sizeof *s->rx_ring);
    s->rx_valid = calloc(ring, 1);
    s->fc_ring = calloc(ring, sizeof *s->fc_ring);
    s->fc_valid = calloc(ring, 1);
    int bad = !s->sw || !s->host || !s->pair || !s->gq || !s->expect ||
              (cfg->broadcast > 0 && !s->bexpect) ||
              (cfg->topo && (!s->route || !s->first_q)) ||
              !s->hist || !s->rx_ring || !s->rx_valid || !s->fc_ring || !s->fc_valid;
    for (unsigned h = 0; !bad && h < H; h++) {
        s->host[h].pair = s->pair + (size_t)h * H;
        bad = alloc_host(&s->host[h], H, s->HW, cfg->host_fifo ? cfg->host_fifo_cells : 1);
    }
    return bad;
}

/* Single switch: host p on port p, the latency split between the two
 * directions, one-hop routes; nonzero when out of memory. */
static int wire_single(rifl_ssim *s, const rifl_ssim_config *cfg)
{
    unsigned n = cfg->nports;
    unsigned dup = (cfg->latency + 1) / 2, ddown = cfg->latency / 2;
    int bad = alloc_sw(&s->sw[0], n, s->R);
    for (unsigned p = 0; !bad && p < n; p++) {
        s->sw[0].peer[p] = (struct peer){ PEER_HOST, 0, p, ddown };
        s->host[p].up = (struct peer){ PEER_SWITCH, (uint16_t)p, 0, dup };
    }
    s->rtt = dup + ddown + 1;
    s->identity_q = true; /* routes: pair_route; first-hop VOQ: the destination */
    s->single = true;     /* cells to the hosts: switch_step_single */
    return bad;
}

/* Topology: the peer of every host and switch port, and the longest round
 * trip over a link; nonzero when out of memory. */
static int wire_topo(rifl_ssim *s, const rifl_topology *T, const int *host_of,
                     const int *sw_of)
{
    int bad = 0;
    s->rtt = 1;
    for (unsigned i = 0; !bad && i < T->nnodes; i++) {
        const rifl_topo_node *nd = &T->nodes[i];
        if (!nd->is_switch) {
            struct host *x = &s->host[host_of[i]];
            int pn = nd->peer[0];
            /* (a host's cell made in a slot is in the switch's input the
             * next slot at the soonest: a link of delay 0 is 1 that way) */
            if (pn >= 0)
                x->up = (struct peer){ PEER_SWITCH, (uint16_t)nd->peer_port[0],
                                       (uint32_t)sw_of[pn],
                                       nd->delay[0] ? nd->delay[0] : 1 };
            continue;
        }
        struct ssw *w = &s->sw[sw_of[i]];
        bad = alloc_sw(w, nd->nports, s->R);
        for (unsigned p = 0; !bad && p < nd->nports; p++) {
            int pn = nd->peer[p];
            if (pn < 0)
                continue;
            unsigned d = nd->delay[p];
            if (T->nodes[pn].is_switch) {
                w->peer[p] = (struct peer){ PEER_SWITCH, (uint16_t)nd->peer_port[p],
                                            (uint32_t)sw_of[pn], d };
                if (link_rtt(d, true) > s->rtt)
                    s->rtt = (unsigned)link_rtt(d, true);
            } else {
                w->peer[p] = (struct peer){ PEER_HOST, 0, (uint32_t)host_of[pn], d };
                if (link_rtt(d, false) > s->rtt)
                    s->rtt = (unsigned)link_rtt(d, false);
            }
        }
    }
    return bad;
}

/* Topology: routes between every pair of hosts, none once *bad is set; sets
 * *bad when out of memory and returns the code of a pair without a route
 * (message in err). */
static int route_topo(rifl_ssim *s, const rifl_topology *T, const int *host_of, int *bad,
                      char *err, size_t errlen)
{
    const unsigned H = s->H;
    unsigned *node_of_host = malloc(H * sizeof *node_of_host);
    if (!node_of_host)
        *bad = 1;
    for (unsigned i = 0; !*bad && i < T->nnodes; i++)
        if (host_of[i] >= 0)
            node_of_host[host_of[i]] = i;
    for (unsigned a = 0; !*bad && a < H; a++)
        for (unsigned b = 0; !*bad && b < H; b++) {
            if (a == b)
                continue;
            rifl_topo_route r;
            int rc = rifl_topo_route_hosts(T, node_of_host[a], node_of_host[b], &r, err, errlen);
            if (rc) {
                free(node_of_host);
                return rc;
            }
            rifl_l2_hdr_make(&s->route[(size_t)a * H + b], r.rel, r.hops);
            s->first_q[(size_t)a * H + b] = (uint8_t)r.out_port[0];
        }
    free(node_of_host);
    return RIFL_OK;
}

/* Create the switches, each with the round trip and flow control of the
 * configuration, and tell them which switch is downstream of each port. */
static int make_switches(rifl_ssim *s, const rifl_ssim_config *cfg, char *err, size_t errlen)
{
    for (unsigned k = 0; k < s->S; k++) {
        struct ssw *w = &s->sw[k];
        rifl_switch_config sc = rifl_switch_default_config;
        sc.nports = w->n;
        sc.scheduler = cfg->scheduler;
        sc.iterations = cfg->iterations;
        sc.rtt_slots = s->rtt;
        sc.broadcast = cfg->broadcast > 0;
        /* (the minimum: 1.5 round trips, and the headroom of broadcast) */
        sc.voq_cells = cfg->voq_cells ? cfg->voq_cells
                                      : rifl_switch_min_voq_cells(s->rtt) +
                                            (sc.broadcast ? rifl_switch_broadcast_room(w->n) : 0);
        sc.fc_on = cfg->fc_on;
        sc.fc_off = cfg->fc_off;
        sc.check_fabric = cfg->check_fabric;
        if (sc.iterations > sc.nports)
            sc.iterations = sc.nports;
        int rc = rifl_switch_create(&sc, &w->sw, err, errlen);
        if (rc)
            return rc;
        const rifl_switch_config *got = rifl_switch_get_config(w->sw);
        s->voq_cells = got->voq_cells;
        s->fc_on = got->fc_on;
        s->fc_off = got->fc_off;
        for (unsigned p = 0; p < w->n; p++)
            if (w->peer[p].kind == PEER_SWITCH)
                rifl_switch_set_downstream(w->sw, p, s->sw[w->peer[p].idx].n, w->peer[p].port);
    }
    return RIFL_OK;
}

/* off_geo's table of bands, its first off_n entries apart (off_draw); none
 * when the law needs no draw or the edges are not in order. */
static void off_table(rifl_ssim *s)
{
    const rifl_geo *g = &s->off_geo;
    s->off_n = 0;
    if (!(g->p > 0.0 && g->p < 1.0))
        return;
    /* two edges when a draw is seldom 2 or more, eight otherwise */
    const unsigned n = g->p >= 0.5 ? 2 : 8;
    s->off_hi[0] = 0;
    for (unsigned j = 0; j < 8; j++) {
        const bool in = j < n && j < g->k_end;
        s->off_lo[j] = in ? g->band[j].lo : UINT64_MAX;
        s->off_hi[j + 1] = in ? g->band[j].hi : 0;
        if (in && j && (s->off_lo[j] < s->off_lo[j - 1] || s->off_hi[j + 1] < s->off_hi[j]))
            return;
    }
    s->off_n = n;
}

/* geometric(r, &s->off_geo): the same value from the same draw.  The
 * answer is the number k of lower band edges at or below x when x lies in
 * none of the bands, which, the edges being in order, is x >= the upper
 * edge of band k - 1 (x lies below every lower edge not counted); a draw
 * in a band, or beyond the edges kept, goes through rifl_geo_of.  Neither
 * the count nor the test takes a branch on the value, which follows the
 * traffic. */
static inline __attribute__((always_inline)) uint64_t off_draw(const rifl_ssim *s,
                                                                rifl_rng *r)
{
    if (!s->off_n)
        return geometric(r, &s->off_geo);
    const uint64_t x = rifl_rng_next(r) >> 11;
    unsigned k = (unsigned)(x >= s->off_lo[0]) + (unsigned)(x >= s->off_lo[1]);
    if (s->off_n > 2)
        for (unsigned j = 2; j < 8; j++)
            k += (unsigned)(x >= s->off_lo[j]);
    if (__builtin_expect((k == s->off_n) | (x < s->off_hi[k]), 0)) {
        const uint64_t v = rifl_geo_of(&s->off_geo, x);
        return v < (uint64_t)1e15 ? v : (uint64_t)1e15;
    }
    return k;
}

/* Whether a cell's first 8 bytes are the header, then `bytes` and `vl`
 * (in the two bytes after it, little-endian), as hosts_one_cell writes
 * them in one word. */
static bool cell_head_word(void)
{
    rifl_cell c;
    memset(&c, 0, sizeof c);
    c.hdr.b[0] = 0x11;
    c.hdr.b[1] = 0x5a;
    c.bytes = 256;
    const uint64_t want = 0x11u | 0x5au << 8 | (uint64_t)256 << (8 * RIFL_L2_HDR_BYTES);
    uint64_t got;
    memcpy(&got, &c, sizeof got);
    return got == want;
}

/* The destination of a host's next train.  It is the draw that follows the
 * idle period's in the host's stream (nothing else is drawn in between, and
 * the destinations left cannot change before the train starts), made now
 * so that the destination's state is in the cache when the train starts. */
static inline __attribute__((always_inline)) void
draw_next_dst(const rifl_ssim *s, struct host *x, rifl_rng *rng, unsigned h)
{
    if (!x->nactive)
        return;
    unsigned k = (unsigned)rifl_rng_below(rng, x->nactive);
    /* Until a destination is done, active[] lists the others in order, so
     * entry k is k + (k >= h), found without reading it. */
    x->next_dst = x->nactive == s->H - 1 ? k + (k >= h) : x->active[k];
    __builtin_prefetch(&x->pair[x->next_dst], 1);
}

/* The on/off laws of the traffic sources for the offered load, and each
 * host's seed, bytes to send and first start time. */
static void init_traffic(rifl_ssim *s, const rifl_ssim_config *cfg)
{
    const unsigned H = s->H;
    double B = cfg->burst_bytes / 256.0;
    if (cfg->traffic != RIFL_TRAFFIC_BURSTY || B < 1)
        B = 1;
    s->burst_p = 1.0 / B;
    double mbytes, train, mc = mean_cells(cfg, B, &mbytes, &train);
    /* idle slots per train so that the payload offered is `load`: a
     * Bernoulli train is one packet, a bursty one `train` cells */
    double g = cfg->traffic == RIFL_TRAFFIC_BURSTY
                   ? train * (mbytes / (256.0 * cfg->load * mc) - 1)
                   : mbytes / (256.0 * cfg->load) - mc;
    if (g < 0)
        g = 0;
    s->off_p = 1.0 / (1.0 + g);
    rifl_geo_init(&s->off_geo, s->off_p);
    rifl_geo_init(&s->burst_geo, s->burst_p);
    for (unsigned h = 0; h < H; h++) {
        struct host *x = &s->host[h];
        rifl_rng_seed(&x->rng, cfg->seed * 0x9e3779b97f4a7c15ull + h + 1);
        for (unsigned d = 0; d < H; d++)
            if (d != h) {
                x->pair[d].remaining = cfg->bytes_per_pair;
                x->active[x->nactive++] = (uint16_t)d;
            }
        x->next_start = geometric(&x->rng, &s->off_geo);
        draw_next_dst(s, x, &x->rng, h);
    }
}

int rifl_ssim_create(const rifl_ssim_config *cfg, rifl_ssim **out, char *err, size_t errlen)
{
    if (!cfg || !out)
        return rifl_null_arg(err, errlen, "rifl_ssim_create", cfg ? "out" : "cfg");
    *out = NULL;
    int rc = check_cfg(cfg, err, errlen);
    if (rc)
        return rc;
    const rifl_topology *T = cfg->topo;
    unsigned H, S;
    rc = count_nodes(cfg, &H, &S, err, errlen);
    if (rc)
        return rc;
    rifl_ssim *s = calloc(1, sizeof *s);
    if (!s)
        return RIFL_ERR_NOMEM;
    s->cfg = *cfg;
    s->cfg.topo = NULL;
    s->H = H;
    s->HW = (H + 63) / 64;
    s->S = S;
    /* node index maps for topology mode */
    int *host_of = NULL, *sw_of = NULL;
    unsigned maxdelay = cfg->latency;
    if (T) {
        host_of = malloc(T->nnodes * sizeof *host_of);
        sw_of = malloc(T->nnodes * sizeof *sw_of);
        if (!host_of || !sw_of) {
            free(host_of);
            free(sw_of);
            rifl_ssim_free(s);
            return RIFL_ERR_NOMEM;
        }
        maxdelay = number_nodes(T, host_of, sw_of);
    }
    s->R = maxdelay + 2;
    int bad = alloc_tables(s, cfg);
    /* wiring */
    if (!bad && !T) {
        bad = wire_single(s, cfg);
    } else if (!bad) {
        bad = wire_topo(s, T, host_of, sw_of);
        rc = route_topo(s, T, host_of, &bad, err, errlen);
        if (rc) {
            free(host_of);
            free(sw_of);
            rifl_ssim_free(s);
            return rc;
        }
    }
    free(host_of);
    free(sw_of);
    if (bad) {
        rifl_ssim_free(s);
        rifl_msg(err, errlen, "out of memory for %u hosts", H);
        return RIFL_ERR_NOMEM;
    }
    rc = make_switches(s, cfg, err, errlen);
    if (rc) {
        rifl_ssim_free(s);
        return rc;
    }
    init_traffic(s, cfg);
    s->one_cell = cfg->packet_bytes == 256 && cfg->traffic == RIFL_TRAFFIC_BERNOULLI &&
                  !cfg->host_fifo && !(cfg->broadcast > 0);
    s->fast_hosts = s->one_cell && s->single && cell_head_word();
    off_table(s);
    s->stall_slots = 100000 + 16 * (uint64_t)s->rtt;
    *out = s;
    return RIFL_OK;
}

static inline __attribute__((always_inline)) void new_packet(rifl_ssim *s, struct host *x)
{
    uint64_t size = s->cfg.packet_bytes
                        ? s->cfg.packet_bytes
                        : rifl_rng_range(&x->rng, s->cfg.var_min, s->cfg.var_max);
    uint64_t *rem = &x->pair[x->train_dst].remaining;
    if (size > *rem)
        size = *rem;
    *rem -= size;
    s->payload += size;
    x->cells_left = (uint32_t)((size + 255) / 256);
}

/* The header of the cells from host h to host d: one hop on a single
 * switch (host p on port p), the topology's route otherwise. */
static inline void pair_route(const rifl_ssim *s, unsigned h, unsigned d, rifl_l2_hdr *hdr)
{
    if (s->identity_q) {
        /* rifl_l2_hdr_make of the one-hop route to port d (d != h), written
         * directly: total = remain = 1, dst port 1 = d's relative number */
        hdr->b[0] = 0x11;
        /* d - 1 above h: which side of h the destination lies is random,
         * and GCC made a branch of d < h ? d : d - 1 */
        hdr->b[1] = (uint8_t)(d - (d > h));
        memset(&hdr->b[2], 0, RIFL_L2_HDR_BYTES - 2);
    } else {
        *hdr = s->route[(size_t)h * s->H + d];
    }
}

/* The VOQ of the first switch that cells from h to d enter. */
static inline unsigned first_hop_q(const rifl_ssim *s, unsigned h, unsigned d)
{
    return s->identity_q ? d : s->first_q[(size_t)h * s->H + d];
}

/* The ring entry of the slot `delay` slots from now (delay < R). */
static inline unsigned ring_at(const rifl_ssim *s, unsigned delay)
{
    unsigned at = s->k + delay;
    return at >= s->R ? at - s->R : at;
}

/* Queue the generation slot of a cell for d behind the pair's others
 * (`queued` of them); nonzero when out of memory. */
static int gq_push(struct gq *q, uint32_t queued, uint64_t gen)
{
    if (queued == q->cap) {
        uint32_t cap = q->cap ? 2 * q->cap : 8;
        uint32_t *v = malloc(cap * sizeof *v);
        if (!v)
            return -1;
        for (uint32_t i = 0; i < queued; i++)
            v[i] = q->v[(q->head + i) & (q->cap - 1)];
        free(q->v);
        q->v = v;
        q->cap = cap;
        q->head = 0;
    }
    q->v[(q->head + queued) & (q->cap - 1)] = (uint32_t)gen;
    return 0;
}

/* The generation slot of the pair's oldest cell, taken off; `now` gives
 * the high bits. */
static inline uint64_t gq_pop(struct gq *q, uint64_t now)
{
    uint32_t g = q->v[q->head];
    q->head = (q->head + 1) & (q->cap - 1);
    return now - (uint32_t)((uint32_t)now - g);
}

static inline void inject(rifl_ssim *s, struct host *x, unsigned h, unsigned d, uint64_t gen)
{
    struct pair *pr = &x->pair[d];
    rifl_cell *c;
    uint8_t *valid;
    if (s->single) {
        /* host h on port h, every host the same delay: this slot's row */
        c = s->in_row + h;
        valid = s->in_vrow + h;
    } else {
        struct ssw *w = &s->sw[x->up.idx];
        size_t at = (size_t)ring_at(s, x->up.delay) * w->n + x->up.port;
        c = &w->in_ring[at];
        valid = &w->in_valid[at];
    }
    /* filled in place: a cell built aside and copied would be read back
     * before its parts are all written; d = h is the host's broadcast
     * queue (single switch) */
    pair_route(s, h, d, &c->hdr);
    if (d == h)
        c->hdr.b[1] = RIFL_L2_BROADCAST;
    c->bytes = 256;
    c->src = (uint16_t)h;
    c->dst = (uint16_t)d;
    c->seq = pr->next_seq++;
    uint64_t wait = s->t - gen;
    if (wait > WAIT_MAX) {
        wait = WAIT_MAX;
        s->wait_clipped++;
    }
    c->stamp = (s->t & STAMP_MASK) | wait << STAMP_BITS;
    *valid = 1;
}

/* Destination d, with no bytes left, leaves host x's destinations. */
static inline __attribute__((always_inline)) void retire_dst(rifl_ssim *s, struct host *x,
                                                             unsigned d)
{
    for (unsigned k = 0; k < x->nactive; k++)
        if (x->active[k] == d) {
            x->active[k] = x->active[--x->nactive];
            break;
        }
    if (!x->nactive)
        s->hosts_done++;
}

/* The idle period and the next train's destination of host h: the next two
 * draws of its stream, its state held apart meanwhile (in registers). */
static inline __attribute__((always_inline)) void next_train(rifl_ssim *s, struct host *x,
                                                             unsigned h)
{
    rifl_rng rng = x->rng;
    x->next_start = s->t + 1 + off_draw(s, &rng);
    draw_next_dst(s, x, &rng, h);
    x->rng = rng;
}

/* The end of host h's train to d. */
static inline __attribute__((always_inline)) void end_train(rifl_ssim *s, struct host *x,
                                                            unsigned h, unsigned d)
{
    x->in_train = false;
    if (!x->pair[d].remaining)
        retire_dst(s, x, d);
    next_train(s, x, h);
}

static void generate(rifl_ssim *s, struct host *x, unsigned h)
{
    if (s->one_cell) {
        /* what follows for trains of one packet of one cell, queued by
         * destination, at the start of a train */
        if (!x->nactive || s->t < x->next_start)
            return;
        const unsigned d = x->train_dst = x->next_dst;
        struct pair *pr = &x->pair[d];
        const uint64_t size = pr->remaining < 256 ? pr->remaining : 256;
        pr->remaining -= size;
        s->payload += size;
        s->generated++;
        if (!x->backlog && x->up.kind == PEER_SWITCH && !bget(x->paused, first_hop_q(s, h, d))) {
            /* send_cell, next in the slot, would find this cell alone and
             * send it: it goes now, without being queued */
            inject(s, x, h, d, s->t);
            x->rr = d + 1 == s->H ? 0 : d + 1;
        } else {
            if (gq_push(&s->gq[(size_t)h * s->H + d], pr->queue, s->t))
                s->oom = true;
            pr->queue++;
            bset(x->ready, d);
            x->backlog++;
        }
        end_train(s, x, h, d);
        return;
    }
    if (s->cfg.host_fifo && x->fifo_len == s->cfg.host_fifo_cells) {
        /* closed loop: the source waits for room, its clock stands still */
        if (x->in_train || (x->nactive && s->t >= x->next_start)) {
            s->stalls++;
            if (!x->in_train)
                x->next_start = s->t + 1;
        }
        return;
    }
    if (!x->in_train) {
        if (!x->nactive || s->t < x->next_start)
            return;
        x->train_dst = x->next_dst;
        x->burst_left = s->cfg.traffic == RIFL_TRAFFIC_BURSTY
                            ? 1 + geometric(&x->rng, &s->burst_geo)
                            : 1;
        x->in_train = true;
        x->bcast_train = s->cfg.broadcast > 0 && rifl_rng_chance(&x->rng, s->cfg.broadcast);
        new_packet(s, x);
    }
    unsigned d = x->train_dst;
    /* the queue of the cell: its destination's, or the broadcast queue */
    unsigned q = x->bcast_train ? h : d;
    if (s->cfg.host_fifo) {
        unsigned at = x->fifo_head + x->fifo_len++;
        at = at < s->cfg.host_fifo_cells ? at : at - s->cfg.host_fifo_cells;
        x->fifo[at] = (uint16_t)q;
        x->fifo_gen[at] = s->t;
    } else {
        if (gq_push(&s->gq[(size_t)h * s->H + q], x->pair[q].queue, s->t))
            s->oom = true;
        x->pair[q].queue++;
        bset(x->ready, q); /* set already unless the queue was empty */
    }
    x->backlog++;
    s->generated += x->bcast_train ? s->H - 1 : 1;
    /* the train's draw counts cells; a Bernoulli train's single cell
     * ends it with its packet */
    x->burst_left -= x->burst_left != 0;
    if (--x->cells_left)
        return;
    if (x->pair[d].remaining && x->burst_left) {
        new_packet(s, x);
        return;
    }
    end_train(s, x, h, d);
}

/* Destinations in word w of host h's ready set whose first-hop VOQ is not
 * paused. */
static inline uint64_t eligible_word(const rifl_ssim *s, const struct host *x, unsigned h,
                                     unsigned w)
{
    if (s->identity_q)
        return x->ready[w] & ~x->paused[w]; /* the first-hop VOQ is the destination */
    uint64_t el = 0;
    for (uint64_t v = x->ready[w]; v; v &= v - 1) {
        unsigned d = w * 64 + (unsigned)__builtin_ctzll(v);
        if (!bget(x->paused, s->first_q[(size_t)h * s->H + d]))
            el |= 1ull << (d & 63);
    }
    return el;
}

/* next_eligible for a single switch of 65 to 256 ports (2 to 4 words):
 * where the destination lies follows the traffic, so there is no branch on
 * it.  The words are taken in the order of the search, word w0 = rr / 64
 * twice (its part from rr on first, its part below rr last), as bits of a
 * mask of the non-empty ones, and the first of those picks the word. */
static inline int next_eligible_4(const struct host *x, unsigned HW)
{
    /* e[k] and e[k + 4]: eligible destinations of word k (0 past the
     * last); e[w0] and e[w0 + 4] then become the two parts of word w0 */
    uint64_t e[8];
    e[0] = e[4] = x->ready[0] & ~x->paused[0];
    e[1] = e[5] = x->ready[1] & ~x->paused[1];
    e[2] = e[6] = HW > 2 ? x->ready[2] & ~x->paused[2] : 0;
    e[3] = e[7] = HW > 3 ? x->ready[3] & ~x->paused[3] : 0;
    unsigned nz = (unsigned)(e[0] != 0) | (unsigned)(e[1] != 0) << 1 |
                  (unsigned)(e[2] != 0) << 2 | (unsigned)(e[3] != 0) << 3;
    const unsigned w0 = x->rr >> 6;
    const uint64_t from = ~0ull << (x->rr & 63);
    const uint64_t hi = e[w0] & from, lo = e[w0] & ~from;
    e[w0] = hi;
    e[w0 + 4] = lo;
    /* bit k of `order`: the (k+1)-th part looked at is not empty */
    unsigned order = ((nz | nz << 4) >> w0) & 0x0e;
    order |= (unsigned)(hi != 0) | (unsigned)(lo != 0) << 4;
    /* with no bit at all, p points past the parts and the answer is -1 */
    const unsigned p = w0 + (unsigned)__builtin_ctz(order | 0x20);
    const int found = (int)(((p & 3) << 6) + (unsigned)__builtin_ctzll(e[p & 7] | 1ull << 63));
    return order ? found : -1;
}

/* The first eligible destination at or after x->rr, wrapping round the HW
 * words, or -1; each word is looked at when the search reaches it. */
static inline int next_eligible(const rifl_ssim *s, const struct host *x, unsigned h)
{
    const unsigned HW = s->HW, w0 = x->rr >> 6, b = x->rr & 63;
    if (s->identity_q && HW > 1 && HW <= 4)
        return next_eligible_4(x, HW);
    uint64_t first = eligible_word(s, x, h, w0);
    uint64_t v = first & (~0ull << b);
    if (HW == 1) {
        /* no branch on which side of the pointer the destination lies */
        v |= first & (0 - (uint64_t)(v == 0)); /* by mask: GCC made a branch of ?: */
        return v ? __builtin_ctzll(v) : -1;
    }
    if (v)
        return (int)(w0 * 64 + (unsigned)__builtin_ctzll(v));
    for (unsigned w = w0 + 1; w < HW; w++)
        if ((v = eligible_word(s, x, h, w)))
            return (int)(w * 64 + (unsigned)__builtin_ctzll(v));
    for (unsigned w = 0; w < w0; w++)
        if ((v = eligible_word(s, x, h, w)))
            return (int)(w * 64 + (unsigned)__builtin_ctzll(v));
    v = first & ~(~0ull << b);
    if (v)
        return (int)(w0 * 64 + (unsigned)__builtin_ctzll(v));
    return -1;
}

/* FIFO host: the head cell goes unless its first-hop VOQ is paused. */
static void send_fifo(rifl_ssim *s, struct host *x, unsigned h)
{
    unsigned d = x->fifo[x->fifo_head];
    if (bget(x->paused, first_hop_q(s, h, d))) {
        s->hol++;
        return;
    }
    uint64_t gen = x->fifo_gen[x->fifo_head];
    if (++x->fifo_head == s->cfg.host_fifo_cells)
        x->fifo_head = 0;
    x->fifo_len--;
    x->backlog--;
    inject(s, x, h, d, gen);
}

/* Per-destination host: round robin from x->rr over the destinations with
 * cells whose first-hop VOQ is not paused. */
static inline __attribute__((always_inline)) void send_cell(rifl_ssim *s, unsigned h)
{
    struct host *x = &s->host[h];
    if (!x->backlog || x->up.kind != PEER_SWITCH)
        return;
    if (s->cfg.host_fifo) {
        send_fifo(s, x, h);
        return;
    }
    int d = next_eligible(s, x, h);
    if (d < 0)
        return;
    struct gq *row = s->gq + (size_t)h * s->H;
    inject(s, x, h, (unsigned)d, gq_pop(&row[d], s->t));
    /* the next destination's oldest stamp, read a slot from now, is likely
     * out of the cache when the host keeps queues */
    const struct gq *nq = &row[(unsigned)d + 1 == s->H ? 0 : (unsigned)d + 1];
    if (nq->cap)
        __builtin_prefetch(&nq->v[nq->head]);
    /* an emptied queue clears its ready bit (no branch: the queues of a
     * loaded host keep emptying and filling) */
    uint64_t emptied = --x->pair[d].queue == 0;
    x->ready[(unsigned)d >> 6] &= ~(emptied << (d & 63));
    x->backlog--;
    x->rr = (unsigned)d + 1 == s->H ? 0 : (unsigned)d + 1;
}

static void receive_cell(rifl_ssim *s, unsigned h, const rifl_cell *c)
{
    s->delivered++;
    s->last_delivery = s->t;
    s->progress_t = s->t;
    s->stall_armed = false;
    uint32_t *e;
    if (rifl_l2_remain_hops(&c->hdr) == 0 && c->dst == h && c->src < s->H) {
        e = &s->expect[(size_t)c->src * s->H + h];
    } else if (s->bexpect && rifl_l2_remain_hops(&c->hdr) == 0 && c->dst == c->src &&
               c->src < s->H && c->src != h) {
        /* a broadcast cell (tagged with its source as destination) */
        e = &s->bexpect[(size_t)c->src * s->H + h];
    } else {
        s->misdelivered++;
        return;
    }
    if (c->seq == *e)
        (*e)++;
    else if (c->seq > *e) {
        s->lost += c->seq - *e;
        *e = c->seq + 1;
    } else
        s->duplicated++;
    uint64_t lat = s->t - (c->stamp & STAMP_MASK), gl = lat + (c->stamp >> STAMP_BITS);
    s->hist[lat < HIST_MAX ? lat : HIST_MAX - 1][0]++;
    s->hist[gl < HIST_MAX ? gl : HIST_MAX - 1][1]++;
    if (lat > s->lat_max)
        s->lat_max = lat;
    if (gl > s->gen_max)
        s->gen_max = gl;
    s->lat_sum += lat;
    s->gen_sum += gl;
    s->lat_n++;
}

static uint64_t dropped_now(const rifl_ssim *s)
{
    uint64_t d = 0;
    for (unsigned k = 0; k < s->S; k++) {
        rifl_switch_stats st;
        rifl_switch_get_stats(s->sw[k].sw, &st);
        d += st.drop_misrouted + st.drop_invalid + st.drop_overflow;
    }
    return d;
}

/* The flags f[0..n) (n <= 64) as bits, bit h set when f[h] != 0. */
static inline uint64_t flag_bits(const uint8_t *f, unsigned n)
{
    uint64_t bits = 0;
    unsigned h = 0;
    for (; h + 8 <= n; h += 8) {
        uint64_t v;
        memcpy(&v, f + h, sizeof v);
        v |= v >> 4; /* the low bit of each byte: any bit of the byte */
        v |= v >> 2;
        v |= v >> 1;
        /* the low bits of the 8 bytes gathered in the top byte */
        bits |= (((v & 0x0101010101010101ull) * 0x0102040810204080ull) >> 56) << h;
    }
    for (; h < n; h++)
        bits |= (uint64_t)(f[h] != 0) << h;
    return bits;
}

/* Eight bytes of flags from p on, for skipping idle ports eight at a time. */
static inline uint64_t flags8(const uint8_t *f, unsigned p)
{
    uint64_t v;
    memcpy(&v, f + p, sizeof v);
    return v;
}

/* 1. cells arriving at the inputs of switch x, and flow control at its
 * outputs from downstream, in this slot */
static void switch_arrivals(rifl_ssim *s, struct ssw *x)
{
    const unsigned n = x->n;
    const size_t row = (size_t)s->k * n;
    uint8_t *iv = x->in_valid + row, *fv = x->fc_valid + row;
    /* the cells, then the flow control (neither changes what the other
     * does) */
    rifl_switch_input_row(x->sw, x->in_ring + row, iv, s->t);
    memset(iv, 0, n);
    for (unsigned p = 0; p < n; p++) {
        if (!(p & 7) && p + 8 <= n && !flags8(fv, p)) {
            p += 7;
            continue;
        }
        if (fv[p]) {
            fv[p] = 0;
            rifl_l2_fc f;
            if (rifl_l2_fc_decode(x->fc_ring[row + p].b, FC_BYTES, &f) == RIFL_OK)
                rifl_switch_fc_receive(x->sw, p, &f);
            else
                s->fc_bad++;
        }
    }
}

/* Broadcast runs: host h's broadcast queue is queue h, never a first-hop
 * VOQ of its own (the switch has no VOQ from port h to port h); its cells
 * wait while any first-hop VOQ is paused, so its pause bit is set while
 * any other is. */
static void broadcast_pause(struct host *x, unsigned h)
{
    bclr(x->paused, h);
    uint64_t any = 0;
    for (unsigned w = 0; w < 4; w++)
        any |= x->paused[w];
    if (any)
        bset(x->paused, h);
}

/* generate's short way and send_cell, then the backlog counts, for every
 * host of a single switch with trains of one cell (s->one_cell): the same
 * steps in the same order, with what does not change during the slot
 * (the slot, the row of the input ring) read once, and the counts of
 * cells and bytes made kept apart until the end of the slot.  A host
 * that holds no cell after sending adds nothing to the backlog counts. */
static void hosts_one_cell(rifl_ssim *s)
{
    const unsigned H = s->H;
    const uint64_t t = s->t;
    rifl_cell *const in_row = s->in_row;
    uint8_t *const in_vrow = s->in_vrow;
    uint64_t bl = 0, made = 0, bytes = 0;
    for (unsigned h = 0; h < H; h++) {
        struct host *x = &s->host[h];
        if (x->nactive && t >= x->next_start) {
            const unsigned d = x->train_dst = x->next_dst;
            struct pair *pr = &x->pair[d];
            const uint64_t size = pr->remaining < 256 ? pr->remaining : 256;
            const uint64_t left = pr->remaining - size;
            pr->remaining = left;
            bytes += size;
            made++;
            if (!x->backlog && !bget(x->paused, d)) {
                /* inject(s, x, h, d, t), the cell written as whole words:
                 * the one-hop header (dst port 1 = d's relative number),
                 * 256 bytes on VL 0, the tags, a wait of 0 */
                rifl_cell *c = in_row + h;
                const uint64_t head = 0x11u | (uint64_t)(d - (d > h)) << 8 |
                                      (uint64_t)256 << (8 * RIFL_L2_HDR_BYTES);
                const uint32_t tags = h | d << 16;
                memcpy(c, &head, sizeof head);
                memcpy(&c->src, &tags, sizeof tags);
                c->seq = pr->next_seq++;
                c->stamp = t & STAMP_MASK;
                in_vrow[h] = 1;
                /* (d + 1) mod H, by mask: GCC made a branch of ?: */
                x->rr = (d + 1) & (0u - (d + 1 != H));
            } else {
                if (gq_push(&s->gq[(size_t)h * H + d], pr->queue, t))
                    s->oom = true;
                pr->queue++;
                bset(x->ready, d);
                x->backlog++;
            }
            /* end_train(s, x, h, d) (x->in_train is never set here) */
            if (!left)
                retire_dst(s, x, d);
            next_train(s, x, h);
        }
        if (x->backlog) {
            send_cell(s, h);
            bl += x->backlog;
            if (x->backlog > s->backlog_max)
                s->backlog_max = x->backlog;
        }
    }
    s->generated += made;
    s->payload += bytes;
    s->backlog_sum += bl;
}

/* 2. hosts: receive, obey flow control, generate, send */
static void host_slot(rifl_ssim *s)
{
    const unsigned H = s->H;
    const size_t row = (size_t)s->k * H;
    uint8_t *rv = s->rx_valid + row, *fv = s->fc_valid + row;
    if (s->single) {
        const size_t in = (size_t)ring_at(s, s->host[0].up.delay) * H;
        s->in_row = s->sw[0].in_ring + in;
        s->in_vrow = s->sw[0].in_valid + in;
    }
    /* Three passes over the hosts: the cells received, the flow control,
     * then each host generates and sends (what a host receives changes
     * nothing in what it generates and sends, and the hosts do not touch
     * each other).  Which hosts receive a cell follows the traffic, so the
     * first pass goes over them as bits: a test per host mispredicted at
     * random. */
    for (unsigned base = 0; base < H; base += 64) {
        uint64_t bits = flag_bits(rv + base, H - base < 64 ? H - base : 64);
        for (; bits; bits &= bits - 1) {
            const unsigned h = base + (unsigned)__builtin_ctzll(bits);
            receive_cell(s, h, &s->rx_ring[row + h]);
        }
    }
    memset(rv, 0, H);
    for (unsigned h = 0; h < H; h++) {
        if (!(h & 7) && h + 8 <= H && !flags8(fv, h)) {
            h += 7;
            continue;
        }
        if (fv[h]) {
            fv[h] = 0;
            struct host *x = &s->host[h];
            rifl_l2_fc f;
            if (rifl_l2_fc_decode(s->fc_ring[row + h].b, FC_BYTES, &f) != RIFL_OK) {
                s->fc_bad++;
            } else {
                if (f.on_valid)
                    bset(x->paused, f.on_queue);
                if (f.off_valid)
                    bclr(x->paused, f.off_queue);
                if (s->bexpect)
                    broadcast_pause(x, h);
            }
        }
    }
    if (s->fast_hosts) {
        hosts_one_cell(s);
        return;
    }
    uint64_t bl = 0;
    for (unsigned h = 0; h < H; h++) {
        struct host *x = &s->host[h];
        generate(s, x, h);
        send_cell(s, h);
        bl += x->backlog;
        if (x->backlog > s->backlog_max)
            s->backlog_max = x->backlog;
    }
    s->backlog_sum += bl;
}

/* 3. switch x steps; what leaves its ports goes onto the links */
static void switch_step(rifl_ssim *s, struct ssw *x)
{
    rifl_switch_step(x->sw, s->t, x->out, x->outv, x->fc, x->fcv);
    const unsigned n = x->n;
    for (unsigned p = 0; p < n; p++) {
        if (!(p & 7) && p + 8 <= n && !(flags8(x->outv, p) | flags8(x->fcv, p))) {
            p += 7;
            continue;
        }
        const struct peer *pe = &x->peer[p];
        if (!x->outv[p] && !x->fcv[p])
            continue;
        unsigned at = ring_at(s, 1 + pe->delay);
        if (pe->kind == PEER_HOST) {
            size_t e = (size_t)at * s->H + pe->idx;
            if (x->outv[p]) {
                s->rx_ring[e] = x->out[p];
                s->rx_valid[e] = 1;
                /* the receiver's sequence check, wanted when the cell arrives */
                if (x->out[p].src < s->H)
                    __builtin_prefetch(&s->expect[(size_t)x->out[p].src * s->H + pe->idx], 1);
            }
            if (x->fcv[p]) {
                rifl_l2_fc_encode(&x->fc[p], s->fc_ring[e].b, FC_BYTES);
                s->fc_valid[e] = 1;
                s->fc_to_hosts++;
            }
        } else if (pe->kind == PEER_SWITCH) {
            struct ssw *y = &s->sw[pe->idx];
            size_t e = (size_t)at * y->n + pe->port;
            if (x->outv[p]) {
                y->in_ring[e] = x->out[p];
                y->in_valid[e] = 1;
            }
            if (x->fcv[p]) {
                rifl_l2_fc_encode(&x->fc[p], y->fc_ring[e].b, FC_BYTES);
                y->fc_valid[e] = 1;
            }
        }
    }
}

/* 3, single switch: port p leads to host p, every link with the same
 * delay, so the switch writes the cells it sends straight into the hosts'
 * receive ring, in the row of the slot they arrive in (a row the hosts
 * have read and cleared: its slot is R slots on from one already done). */
static void switch_step_single(rifl_ssim *s, struct ssw *x)
{
    const size_t row = (size_t)ring_at(s, 1 + x->peer[0].delay) * s->H;
    rifl_switch_step(x->sw, s->t, s->rx_ring + row, s->rx_valid + row, x->fc, x->fcv);
    const unsigned n = x->n;
    for (unsigned p = 0; p < n; p++) {
        if (!(p & 7) && p + 8 <= n && !flags8(x->fcv, p)) {
            p += 7;
            continue;
        }
        if (x->fcv[p]) {
            rifl_l2_fc_encode(&x->fc[p], s->fc_ring[row + p].b, FC_BYTES);
            s->fc_valid[row + p] = 1;
            s->fc_to_hosts++;
        }
    }
}

/* The watched host's link in this slot (single switch): the host's cell
 * sits in this slot's input row, the switch's cell and flow-control frame
 * in the row of the slot they arrive in. */
static void watch_slot(rifl_ssim *s)
{
    unsigned h = s->cfg.watch_host;
    size_t row = (size_t)ring_at(s, 1 + s->sw[0].peer[0].delay) * s->H;
    rifl_ssim_watch w = { .t = s->t, .up_valid = s->in_vrow[h] != 0,
                          .down_valid = s->rx_valid[row + h] != 0,
                          .fc_valid = s->fc_valid[row + h] != 0 };
    if (w.up_valid)
        w.up = s->in_row[h];
    if (w.down_valid)
        w.down = s->rx_ring[row + h];
    if (w.fc_valid && rifl_l2_fc_decode(s->fc_ring[row + h].b, FC_BYTES, &w.fc) != RIFL_OK)
        w.fc_valid = false;
    if (w.up_valid || w.down_valid || w.fc_valid)
        s->cfg.watch(s->cfg.watch_ctx, &w);
}

static void slot(rifl_ssim *s)
{
    for (unsigned w = 0; w < s->S; w++)
        switch_arrivals(s, &s->sw[w]);
    host_slot(s);
    if (s->single) {
        switch_step_single(s, &s->sw[0]);
        if (s->cfg.watch)
            watch_slot(s);
    } else
        for (unsigned w = 0; w < s->S; w++)
            switch_step(s, &s->sw[w]);
    s->t++;
    if (++s->k == s->R)
        s->k = 0;
}

int rifl_ssim_run(rifl_ssim *s, uint64_t slots)
{
    if (!s)
        return RIFL_ERR_INVALID_ARG;
    for (uint64_t n = 0; n < slots && !s->finished; n++) {
        if (s->cfg.max_slots && s->t >= s->cfg.max_slots)
            return 0;
        slot(s);
        if (s->oom)
            return RIFL_ERR_NOMEM;
        if (s->hosts_done == s->H && s->delivered + dropped_now(s) >= s->generated) {
            int busy = 0;
            for (unsigned h = 0; h < s->H && !busy; h++)
                busy = s->host[h].in_train || s->host[h].backlog;
            if (!busy)
                s->finished = true;
        }
        if (!s->finished && s->t - s->progress_t > s->stall_slots) {
            /* no delivery for stall_slots: cells held now and still held,
             * none delivered, after as long again have waited longer than
             * any path takes, round trips of flow control included; each
             * waits on another (VOQs held by downstream flow control in a
             * cycle) */
            uint64_t gone = s->delivered + dropped_now(s);
            if (s->generated <= gone) {
                s->stall_armed = false;
            } else if (s->stall_armed) {
                s->stalled = true;
                s->stalled_cells = s->generated - gone;
                return 1;
            } else {
                s->stall_armed = true;
            }
            s->progress_t = s->t;
        }
    }
    return s->finished || s->stalled ? 1 : 0;
}

double rifl_ssim_progress(const rifl_ssim *s)
{
    double total = (double)s->cfg.bytes_per_pair * s->H * (s->H - 1);
    double done = (double)s->delivered / ((double)s->generated + 1) *
                  ((double)s->payload / total);
    return done > 1 ? 1 : done;
}

/* The percentiles of latency histogram `which` of n samples, the largest max;
 * the last is max itself. */
static void percentiles(const uint64_t (*hist)[2], unsigned which, uint64_t n, uint64_t max,
                        uint64_t out[RIFL_SSIM_NPCT])
{
    for (unsigned k = 0; k < RIFL_SSIM_NPCT && n; k++) {
        uint64_t want = (uint64_t)ceil(rifl_ssim_percentiles[k] / 100.0 * (double)n);
        if (want < 1)
            want = 1;
        uint64_t acc = 0;
        for (uint64_t l = 0; l < HIST_MAX; l++) {
            acc += hist[l][which];
            if (acc >= want) {
                out[k] = l == HIST_MAX - 1 ? max : l;
                break;
            }
        }
    }
    if (n)
        out[RIFL_SSIM_NPCT - 1] = max;
}

void rifl_ssim_result_get(const rifl_ssim *s, rifl_ssim_result *r)
{
    memset(r, 0, sizeof *r);
    r->finished = s->finished;
    r->stalled = s->stalled;
    r->stalled_cells = s->stalled_cells;
    r->stalled_slots = s->stalled ? s->t - s->last_delivery : 0;
    r->slots = s->finished ? s->last_delivery + 1 : s->t;
    r->hosts = s->H;
    r->switches = s->S;
    r->payload_bytes = s->payload;
    r->cells_generated = s->generated;
    r->cells_delivered = s->delivered;
    double cap = (double)s->H * (double)(r->slots ? r->slots : 1);
    r->utilization = (double)s->payload / (256.0 * cap);
    if (!s->finished)
        r->utilization = 0; /* only meaningful for a finished run */
    r->cell_utilization = (double)s->delivered / cap;
    r->lat_samples = s->lat_n;
    r->lat_mean = s->lat_n ? (double)s->lat_sum / (double)s->lat_n : 0;
    r->gen_mean = s->lat_n ? (double)s->gen_sum / (double)s->lat_n : 0;
    percentiles(s->hist, 0, s->lat_n, s->lat_max, r->lat_pct);
    percentiles(s->hist, 1, s->lat_n, s->gen_max, r->gen_pct);
    r->lost = s->lost;
    r->duplicated = s->duplicated;
    r->misdelivered = s->misdelivered;
    uint64_t voq_total = 0;
    for (unsigned k = 0; k < s->S; k++) {
        rifl_switch_stats st;
        rifl_switch_get_stats(s->sw[k].sw, &st);
        uint64_t *a = (uint64_t *)&r->sw;
        const uint64_t *b = (const uint64_t *)&st;
        uint64_t maxv = r->sw.max_voq_cells;
        for (size_t f = 0; f < sizeof st / sizeof(uint64_t); f++)
            a[f] += b[f]; /* every field is a count, summed over switches ... */
        r->sw.max_voq_cells = maxv > st.max_voq_cells ? maxv : st.max_voq_cells; /* ... but this */
        voq_total += (uint64_t)s->sw[k].n * s->sw[k].n;
    }
    r->sw.slots = s->t;
    r->dropped = r->sw.drop_misrouted + r->sw.drop_invalid + r->sw.drop_overflow;
    r->fc_frames_to_hosts = s->fc_to_hosts;
    r->host_backlog_max = s->backlog_max;
    r->source_stalls = s->stalls;
    r->hol_blocked = s->hol;
    r->fc_decode_errors = s->fc_bad;
    r->host_backlog_mean = s->t ? (double)s->backlog_sum / ((double)s->t * s->H) : 0;
    r->voq_mean = s->t && voq_total ? (double)r->sw.occupancy_sum / ((double)s->t * voq_total)
                                     : 0;
    r->voq_cells = s->voq_cells;
    r->fc_on = s->fc_on;
    r->fc_off = s->fc_off;
    r->rtt_slots = s->rtt;
}

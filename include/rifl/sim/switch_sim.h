/* rifl: cell-time simulator of hosts around RIFL Layer 2 switches
 * (sans-I/O: the caller drives it slot by slot; no clock, no files).
 *
 * Without a topology: N hosts on one N-port switch; everything outside the
 * VOQs and the scheduler is a fixed latency (paper: 17 cell times), split
 * into the host->switch link (ceil(L/2) slots) and the switch->host link
 * (floor(L/2)); crossing the fabric takes one more slot, so an unqueued
 * cell's latency is L + 1.  With a topology: every link has its own delay,
 * routes are the shortest source routes.
 *
 * Traffic per host: trains of packets separated by geometric idle periods.
 * Bernoulli: one packet per train, uniform random destination.  Bursty: a
 * geometric number of packets (mean burst_bytes of data) to one destination.
 * Cells of a train enter the host one per slot (line rate); the idle mean
 * is set so the offered payload load is `load`.  Each host sends exactly
 * bytes_per_pair to every other host, then stops; the run ends when every
 * cell has been delivered.  Hosts keep one queue per destination and send
 * one cell per slot, round robin over destinations whose first-hop VOQ is
 * not paused by flow control.  With host_fifo, a host instead keeps one FIFO
 * in generation order: when the head cell's VOQ is paused the host waits
 * (head-of-line blocking at the source), and when the FIFO is full the
 * traffic source stalls (a closed-loop generator).  Flow-control frames
 * travel encoded (rifl_l2_fc_encode, 30-byte payload of a 256-bit link
 * frame) with the delay of their link.  Latency = slot of
 * delivery - slot the cell left its host.
 *
 * Broadcast (single switch only): a fraction of the trains are broadcast;
 * their cells carry dst port 1 = 255, the switch copies each into every VOQ
 * of the input but the host's own, and every other host receives it.  The
 * data of a broadcast train counts against the pair of the destination
 * drawn for it, as a unicast train's would.  A host keeps its broadcast
 * cells in a queue of their own, taking its turn in the round robin, and
 * sends one only while none of its first-hop VOQs is paused (in FIFO mode
 * a broadcast head cell waits until then).  cells_generated and the drops
 * count a broadcast cell once per host it is meant for. */
#ifndef RIFL_SWITCH_SIM_H
#define RIFL_SWITCH_SIM_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/error.h"
#include "rifl/l2.h"
#include "rifl/switch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rifl_traffic {
    RIFL_TRAFFIC_BERNOULLI = 0,
    RIFL_TRAFFIC_BURSTY = 1
} rifl_traffic;

struct rifl_ssim_watch;

typedef struct rifl_ssim_config {
    unsigned nports;          /* single-switch mode: hosts = ports */
    rifl_sched scheduler;
    unsigned iterations;      /* iSLIP iterations, 1 to the port count; with a
                                 topology, a switch with fewer ports than
                                 this runs as many as it has ports */
    double load;              /* offered payload load per host, (0, 1] */
    rifl_traffic traffic;
    unsigned packet_bytes;    /* fixed packet size (multiple of 256); 0 = variable */
    unsigned var_min, var_max;/* variable sizes: uniform in [var_min, var_max] */
    double burst_bytes;       /* bursty: a train's draw is geometric in cells,
                                 burst_bytes / 256 on average (at least 1) */
    uint64_t bytes_per_pair;  /* data each host sends to each other host */
    unsigned latency;         /* fixed latency outside queues and scheduler */
    unsigned voq_cells;       /* 0 = the minimum of the 1.5-round-trip rule */
    unsigned fc_on, fc_off;   /* 0 = derived */
    bool check_fabric;
    uint64_t seed;
    uint64_t max_slots;       /* give up after this many slots (0 = no limit) */
    const rifl_topology *topo;/* NULL = single switch */
    bool host_fifo;           /* hosts send in generation order (see below) */
    unsigned host_fifo_cells; /* FIFO mode: cells a host buffers before its
                                 traffic source stalls */
    /* Watching one host's link (single switch only; NULL: none): `watch` is
     * called in every slot in which host `watch_host` sends a cell or the
     * switch sends it a cell or a flow-control frame, with what left each
     * end in that slot (for packet captures, docs/capture.md). */
    void (*watch)(void *ctx, const struct rifl_ssim_watch *w);
    void *watch_ctx;
    unsigned watch_host;
    double broadcast;         /* fraction of trains sent to every other host,
                                 [0, 1] (single switch only; 0 = none) */
} rifl_ssim_config;

/* What crossed the watched host's link in slot `t`, as it left its end. */
typedef struct rifl_ssim_watch {
    uint64_t t;
    bool up_valid;            /* the host sent `up` to the switch */
    bool down_valid;          /* the switch sent `down` to the host */
    bool fc_valid;            /* the switch sent the host `fc` */
    rifl_cell up, down;
    rifl_l2_fc fc;
} rifl_ssim_watch;

RIFL_API extern const rifl_ssim_config rifl_ssim_default_config;

#define RIFL_SSIM_NPCT 7
extern const double rifl_ssim_percentiles[RIFL_SSIM_NPCT]; /* 1 50 75 90 95 99 100 */

typedef struct rifl_ssim_result {
    bool finished;            /* every cell delivered or dropped */
    bool stalled;             /* stopped: cells held and none delivered for
                                 twice 100,000 slots plus 16 round trips of
                                 the longest link (a deadlock) */
    uint64_t stalled_cells;   /* the cells held then */
    uint64_t stalled_slots;   /* and the slots since the last delivery */
    uint64_t slots;           /* slots simulated (last delivery + 1 when finished) */
    unsigned hosts, switches;
    uint64_t payload_bytes;   /* message data generated */
    uint64_t cells_generated; /* a broadcast cell once per host it is for */
    uint64_t cells_delivered;
    double utilization;       /* payload bytes / (hosts x 256 x slots) */
    double cell_utilization;  /* cells delivered / (hosts x slots) */
    uint64_t lat_pct[RIFL_SSIM_NPCT]; /* cell latency percentiles, cell times,
                                         from when the cell left its host */
    double lat_mean;
    uint64_t lat_samples;
    /* the same from when the cell was generated: its wait in the host's
     * queue (behind other cells, paused VOQs) included */
    uint64_t gen_pct[RIFL_SSIM_NPCT];
    double gen_mean;
    /* checks at the hosts */
    uint64_t lost;            /* gaps in a pair's sequence */
    uint64_t duplicated;      /* repeated or older sequence numbers */
    uint64_t misdelivered;    /* reached the wrong host or with hops left */
    /* switches, summed */
    rifl_switch_stats sw;
    uint64_t dropped;         /* misrouted + invalid + overflow, all switches */
    uint64_t fc_frames_to_hosts;
    uint64_t host_backlog_max;/* cells waiting in one host, highest seen */
    uint64_t source_stalls;   /* FIFO mode: slots a source waited for space */
    uint64_t hol_blocked;     /* FIFO mode: slots a host's head cell was paused */
    uint64_t fc_decode_errors;/* flow-control frames that failed to decode */
    double host_backlog_mean; /* cells waiting per host, mean over slots */
    double voq_mean;          /* mean cells per VOQ, over all N x N of each
                                 switch (the N that never hold one included) */
    unsigned voq_cells;       /* allocation per VOQ used */
    unsigned fc_on, fc_off, rtt_slots;
} rifl_ssim_result;

typedef struct rifl_ssim rifl_ssim;

/* Check the configuration, compute routes and allocate everything. */
RIFL_API int rifl_ssim_create(const rifl_ssim_config *cfg, rifl_ssim **out, char *err,
                              size_t errlen);
RIFL_API void rifl_ssim_free(rifl_ssim *s);
/* Run up to `slots` more slots; returns 1 when the run is over (finished,
 * or stalled: cells held and none delivered for long, which over routes
 * whose VOQ waits form a cycle is a flow-control deadlock), 0 otherwise,
 * RIFL_ERR_NOMEM when a host's queue could not grow. */
RIFL_API int rifl_ssim_run(rifl_ssim *s, uint64_t slots);
/* Fraction of the generated data delivered so far (for progress). */
RIFL_API double rifl_ssim_progress(const rifl_ssim *s);
RIFL_API void rifl_ssim_result_get(const rifl_ssim *s, rifl_ssim_result *r);

#ifdef __cplusplus
}
#endif
#endif

/* rifl simulation: a rack of hosts and RIFL Layer 2 switches joined by real
 * RIFL links (`rifl sim net`).
 *
 * Every link is a pair of lane engines (rifl/sim/pair.h), one per
 * direction, with its own delay, rate and bit error rate: cells travel as
 * link-layer packets, per-VOQ flow-control frames as extension frames, and
 * both take frame slots and are replayed after errors.  Hosts have a NIC
 * (rifl/nic.h); switches are rifl_switch engines stepped once per cell
 * time, with a pipeline delay before each output link.  Error-free
 * stretches go frame by reference (rifl_pair_ref_step: the same decisions
 * and counts as frames by content).
 *
 * Time is the frame slot of the links (F bits at the link rate); switches
 * and hosts act once per cell time (the frames one cell takes).  Traffic:
 * each host makes trains of messages separated by geometric idle periods so
 * that its offered load is `load` of its link's cell slots; a message
 * enters its NIC when generated (the NIC's queue is the host's), and when
 * the NIC has no room the source waits (closed loop, counted).
 *
 * Measured over a window after a warm-up: every cell of a message generated
 * in the window is followed to its destination (the run goes on, traffic
 * included, until they have all arrived), with its latency from the
 * message's generation and from the moment it reached the head of its NIC
 * queue, each hop's share, and every byte compared. */
#ifndef RIFL_SIM_NETSIM_H
#define RIFL_SIM_NETSIM_H

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

struct rifl_pair_slot;
struct rifl_nic;
struct rifl_nic_rx;
typedef struct rifl_net rifl_net;

/* A host application in place of the generated traffic (an RDMA engine per
 * host, for example: `rifl sim rdma --net`).  Once per cell time the
 * simulator calls `tick` for every host, before that host's NIC picks its
 * next cell, and the application posts whole messages (each with its own
 * endpoint prefix) with rifl_net_post; `deliver` gets every cell that
 * arrives at a host, as its NIC reassembled it; `sent` says a message's
 * last cell has left its NIC, so its bytes are free again; after the
 * hosts, `done` says whether the run is over.  Time is `now_ns`, the
 * simulated nanoseconds.  With an application the run has no warm-up or
 * window: it is measured whole, from slot 0 until `done` (or until
 * warmup_ns + window_ns + drain_ns: then `finished` is false). */
typedef struct rifl_net_app {
    void *ctx;
    int (*tick)(void *ctx, rifl_net *n, unsigned host, double now_ns); /* a negative error stops the run */
    void (*deliver)(void *ctx, rifl_net *n, unsigned host, const struct rifl_nic_rx *rx,
                    double now_ns);
    void (*sent)(void *ctx, unsigned host, uint64_t tag);
    bool (*done)(void *ctx);
} rifl_net_app;

typedef enum rifl_net_fc {
    RIFL_NET_FC_VOQ = 0,  /* per-VOQ ON/OFF (paper 004) over the lanes' own */
    RIFL_NET_FC_LINK = 1, /* the lanes' ON/OFF only: an input whose next cell's
                             VOQ is full stops reading its lane */
    RIFL_NET_FC_CREDIT = 2 /* InfiniBand credits per virtual lane on every link
                             (rifl/credit.h), over the lanes' own ON/OFF */
} rifl_net_fc;

typedef enum rifl_net_pattern {
    RIFL_NET_UNIFORM = 0,     /* each train to a random other host */
    RIFL_NET_PERMUTATION,     /* each host to one other, a random derangement */
    RIFL_NET_INCAST,          /* hosts 1..incast to host 0; host 1 also sends
                                 half its trains to host incast + 1 (the victim
                                 flow); the others idle */
    RIFL_NET_ALL_TO_ALL       /* each host's trains go to every other in turn */
} rifl_net_pattern;

typedef enum rifl_net_arrivals {
    RIFL_NET_BERNOULLI = 0,   /* trains of one message */
    RIFL_NET_BURSTY = 1       /* trains of messages back to back, a geometric
                                 number of cells (burst_bytes / 256 on average)
                                 rounded up to the end of a message */
} rifl_net_arrivals;

/* Message sizes from a CDF file: text, one point per line, "BYTES P" (P the
 * fraction of messages of at most BYTES bytes, 0..1, or a percentage when
 * the last is 100), '#' comments; bytes 1..1 MiB and P both
 * non-decreasing, the last P 1 (100%).  Sizes are drawn by linear
 * interpolation between the points (below the first, its size). */
#define RIFL_NET_CDF_MAX 256
typedef struct rifl_net_cdf {
    unsigned n;
    uint32_t bytes[RIFL_NET_CDF_MAX];
    double p[RIFL_NET_CDF_MAX];
} rifl_net_cdf;

/* RIFL_ERR_PARSE with "line N: problem; fix" in err. */
RIFL_API int rifl_net_cdf_parse(const char *text, size_t len, rifl_net_cdf *cdf, char *err,
                                size_t errlen);
/* The size for a uniform draw u in [0, 1). */
RIFL_API uint32_t rifl_net_cdf_size(const rifl_net_cdf *cdf, double u);

typedef struct rifl_net_config {
    const rifl_topology *topo;
    rifl_net_fc fc;
    rifl_net_pattern pattern;
    rifl_net_arrivals arrivals;
    double load;              /* offered cells per cell slot per host, (0, 1] */
    unsigned msg_min, msg_max;/* message bytes, uniform (equal: fixed), 1..1 MiB */
    const rifl_net_cdf *sizes;/* or from a CDF (NULL: msg_min..msg_max); one
                                 built by hand must hold what
                                 rifl_net_cdf_parse gives (P as fractions),
                                 else rifl_net_create names the point */
    double burst_bytes;       /* bursty: a train's draw is geometric in cells,
                                 burst_bytes / 256 on average (at least 1) */
    unsigned incast;          /* incast senders */
    double link_gbps;         /* every link's rate (a topology file's link
                                 may give one of its own); the frame slot of
                                 the fastest link is the time step, and
                                 switches and NICs work in its cell times */
    unsigned frame_bits;      /* F */
    unsigned lanes;           /* lanes per link (0 or 1: one lane; 2, 4, 8,
                                 16: a bonded link, rifl/bond.h, each lane
                                 at the link's rate / lanes, every lane its
                                 own errors) */
    unsigned group_lanes;     /* bonded: lanes per group (0: all, spatial
                                 only; 1: temporal only) */
    double cable_m, transceiver_ns; /* per link; 5 ns/m (a topology file's
                                       link may give its own) */
    double switch_ns;         /* switch pipeline, input to output link */
    double ber;               /* every link, both directions (a topology
                                 file's link may give its own) */
    unsigned iterations;      /* iSLIP iterations (at most a switch's ports) */
    unsigned voq_cells;       /* 0: the 1.5-round-trip rule; FC_CREDIT raises
                                 it to vls x credit_cells, an input's whole
                                 credit, which a VOQ never exceeds */
    unsigned vls;             /* FC_CREDIT: data virtual lanes, 1..15 (0: 4); a
                                 cell for host d goes on VL d mod vls */
    unsigned credit_cells;    /* FC_CREDIT: each receiver's buffer per VL, in
                                 cells, 1..409 (0: the 1.5-round-trip rule) */
    unsigned max_paths;       /* routes per host pair, 1..64 */
    unsigned nic_messages;    /* messages a NIC queues */
    double warmup_ns, window_ns;
    double drain_ns;          /* at most this long after the window for the
                                 window's cells to arrive */
    uint64_t bytes_per_flow;  /* 0: the steady-state window above; else a
                                 finite workload: each sending host sends
                                 this many bytes to each of its
                                 destinations (every other host; its
                                 permutation partner; incast: host 0, and
                                 the victim from host 1), every message
                                 measured, the run ending when all have
                                 arrived (at most drain_ns after the last
                                 message was made) */
    uint64_t seed;
    bool by_content;          /* every frame by content, never by reference
                                 (slower; the results are the same) */
    /* Watching the link of host `observe_host` (for packet captures):
     * `observe` is called in each of the first observe_slots frame slots
     * with what crossed it (rifl_pair_step's view); `host_lane` says which
     * of the pair's lanes is the host's.  That link goes by content while
     * watched (the results stay the same).  NULL: nothing watched. */
    void (*observe)(void *ctx, const struct rifl_pair_slot *seen, unsigned host_lane);
    void *observe_ctx;
    unsigned observe_host;
    uint64_t observe_slots;
    /* The NIC's host interface (PCIe DMA; 0: none, messages appear in the
     * NIC and cells leave it instantly).  Sending, the NIC reads a message
     * from host memory: it enters the NIC's queue a round trip after its
     * read started plus its bytes at pcie_gbps, reads one after another at
     * that rate, at most nic_messages waiting to be read.  Receiving, each
     * cell's payload is written to host memory at pcie_gbps, in order,
     * arriving half a round trip after its write started: latency and
     * completion times end there.  The paper's NIC: about 90 Gbit/s and
     * 2.5 us. */
    double pcie_gbps;         /* 0: no host interface; else 1 to 10000 */
    double pcie_rtt_ns;       /* its round trip, 0 to 1e6 */
    const rifl_net_app *app;  /* NULL: the traffic above; else the hosts run
                                 this application (no host interface) */
    double max_memory_gb;     /* refuse a network that rifl_net_memory puts
                                 above this many GB (1e9 bytes), 0 to 1e6
                                 (0: no limit) */
} rifl_net_config;

/* single:32 at 10% load, Bernoulli, uniform, one-cell messages (252 bytes),
 * per-VOQ flow control, 100 Gbit/s links with F = 256, 2 m cables and 80 ns
 * transceivers, a switch pipeline that makes an unloaded one-switch path 17
 * cell times, BER 0, iSLIP with 3 iterations, 8 paths, 10 us warm-up and 50
 * us window, no memory limit.  `topo` must be set. */
RIFL_API extern const rifl_net_config rifl_net_default_config;

#define RIFL_NET_MAX_SEGMENTS (2 * RIFL_L2_MAX_HOPS + 3)

typedef struct rifl_net_pct {
    double p50, p99, p999, max, mean; /* ns */
    uint64_t samples;
    double p1, p75, p90, p95;         /* ns (the paper's Table I columns) */
} rifl_net_pct;

/* One link direction. */
typedef struct rifl_net_link {
    char from[RIFL_TOPO_NAME_MAX + 4], to[RIFL_TOPO_NAME_MAX + 4]; /* node:port */
    double cable_m, ber;      /* the link's cable and this direction's bit
                                 error rate (the topology's, or the run's) */
    double rate_gbps;         /* the link's rate */
    unsigned lanes;           /* its lanes (1: not bonded) */
    unsigned fid_bits;        /* K of the link's lanes */
    unsigned delay_frames;    /* one-way delay in frame slots */
    double utilisation;       /* cell bytes sent / link capacity, in the window */
    uint64_t replays;         /* replay cycles */
    uint64_t verify_fails;    /* frames failing verification */
    uint64_t fc_frames;       /* per-VOQ and lane-level flow-control frames */
} rifl_net_link;

typedef struct rifl_net_result {
    bool finished;            /* every cell of the window (or workload) arrived */
    bool finite;              /* a finite workload, not a window */
    unsigned hosts, switches, links;
    double slot_ns, cell_ns;
    unsigned cell_slots;      /* frame slots per cell */
    uint64_t slots;           /* frame slots simulated */
    uint64_t lane_slots;      /* frame slots stepped, summed over every lane
                                 (two per link, or two per lane of a bonded
                                 one; a slower link's are fewer) */
    uint64_t idle_lane_slots; /* of those, carried through idle stretches in
                                 one call each (rifl_pair_idle_skip) */
    uint64_t cell_hops;       /* cells switched, every switch, whole run */
    double sim_ns;
    rifl_net_pct latency, latency_head, mct;
    /* per path length h (switches, 1..5): cells of the window that took
     * such a path, and their mean ns per segment: [0] host queue
     * (generation to the head of the NIC queue), [1] head of the queue to
     * the link, then per switch the link into it and the switch itself
     * (input to output link), and last the link to the destination:
     * 2 h + 3 segments */
    uint64_t path_cells[RIFL_L2_MAX_HOPS + 1];
    double segment_ns[RIFL_L2_MAX_HOPS + 1][RIFL_NET_MAX_SEGMENTS];
    /* totals (the window's cells, and whole-run drops) */
    uint64_t generated_cells, delivered_cells, completed_messages;
    uint64_t dropped;         /* cells dropped anywhere in the run */
    uint64_t lost;            /* cells of the window dropped */
    uint64_t undelivered;     /* cells of the window still on their way at the end */
    uint64_t corrupt;         /* cells delivered with wrong bytes, source or place */
    uint64_t replays, fc_frames, max_voq_cells;
    uint64_t voq_full_waits;  /* cell times a switch input kept a cell whose VOQ
                                 was full and stopped reading its lane (FC_VOQ:
                                 an ON notice that came late, held up by a
                                 replay on its link; FC_LINK: its flow control) */
    uint64_t credit_waits;    /* FC_CREDIT: times a NIC's or a switch's next cell
                                 waited for credit on its VL */
    unsigned vls, credit_cells; /* FC_CREDIT: as run */
    uint64_t source_stalls;   /* cell slots a source waited for its NIC */
    /* window runs: sources that had not made all of the window's messages
     * when the run ended (their NICs took messages slower than the load
     * asks: not counted in generated_cells or undelivered), and how far
     * the furthest was from the window's end */
    unsigned lagging_sources;
    double source_lag_ns;
    uint64_t verify_fails;
    double throughput_gbps_mean, throughput_gbps_min, throughput_gbps_max; /* per host */
    double offered_gbps;      /* per host, payload (hosts that send nothing count as 0) */
    double victim_gbps;       /* incast: the victim flow's delivered payload rate */
    uint64_t victim_cells;
    rifl_net_link *link;      /* [2 * links]: each link both ways */
} rifl_net_result;

typedef struct rifl_net rifl_net;

RIFL_API int rifl_net_create(const rifl_net_config *cfg, rifl_net **out, char *err,
                             size_t errlen);
/* The bytes rifl_net_create would allocate for cfg's network, counted
 * before anything is allocated by the sizes its parts allocate: what grows
 * with host pairs (every pair's routes and every NIC's receive contexts,
 * hosts^2 x max_paths each), the NICs' message slots and every link's lane
 * engines.  Not counted: the switches' VOQ pools (reserved, touched only as
 * cells fill them), the links' delay lines, the cells in flight.  The
 * receive contexts are touched as sources first send to a host, so a short
 * run may stay below it. */
RIFL_API uint64_t rifl_net_memory(const rifl_net_config *cfg);
RIFL_API void rifl_net_free(rifl_net *n);
/* Run up to `slots` more frame slots; 1 when finished (window over and its
 * cells delivered, or the drain limit reached), 0 otherwise, a negative
 * error when the simulation found itself inconsistent. */
RIFL_API int rifl_net_run(rifl_net *n, uint64_t slots);
/* Fraction of the run done, for progress. */
RIFL_API double rifl_net_progress(const rifl_net *n);
/* The result (its link array owned by the caller: rifl_net_result_free). */
RIFL_API int rifl_net_result_get(const rifl_net *n, rifl_net_result *r);
RIFL_API void rifl_net_result_free(rifl_net_result *r);
/* For a host application: post a whole message (with its prefix, see
 * rifl_nic_post_msg) from `host` to `dst` on route `path` (below
 * rifl_net_paths); `tag` comes back in the application's `sent`.  The bytes
 * must stay until then.  RIFL_ERR_AGAIN when the NIC's queue is full,
 * RIFL_ERR_INVALID_ARG for a bad host, route or message, RIFL_ERR_STATE
 * without an application. */
RIFL_API int rifl_net_post(rifl_net *n, unsigned host, unsigned dst, unsigned path,
                           const void *msg, size_t len, uint64_t tag);
/* Routes from host `src` to host `dst` (0 for a bad pair). */
RIFL_API unsigned rifl_net_paths(const rifl_net *n, unsigned src, unsigned dst);
/* The network's time step, ns: the frame slot of its fastest link (the
 * slot numbers the observer gets count these). */
RIFL_API double rifl_net_slot_ns(const rifl_net *n);
/* Host h's NIC (its counters), or NULL. */
RIFL_API const struct rifl_nic *rifl_net_nic(const rifl_net *n, unsigned host);

#ifdef __cplusplus
}
#endif
#endif

/* rifl simulation: RDMA engines on hosts joined by a RIFL Layer 2 path
 * (`rifl sim rdma`).
 *
 * Each host runs a rifl_rdma engine.  Hosts 1..senders post transfers to
 * host 0 (one sender: the thesis's point-to-point runs; several: an
 * incast), `flows` outstanding each, every transfer checked byte for byte
 * when it completes.  The network between them is a path model: a bundle
 * is cut into Layer 2 cells, each cell a link packet of
 * ceil(262 / (F/8 - 2)) frames at the link rate; the sender's link sends
 * its cells one after another, they cross `hops` switches (each a link and
 * a switch pipeline of fixed delay) and queue for the receiver's link,
 * which sends one cell at a time.  The host's port holds one bundle beside
 * the one on the wire, so bundles are full while there is work.  RIFL links
 * lose nothing; the faults are injected on purpose. */
#ifndef RIFL_SIM_RDMASIM_H
#define RIFL_SIM_RDMASIM_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/error.h"
#include "rifl/rdma.h"
#include "rifl/sim/netsim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rifl_rdmasim_op {
    RIFL_RDMASIM_WRITE = 0,
    RIFL_RDMASIM_READ = 1,    /* host 0 reads from the senders' memory */
    RIFL_RDMASIM_SEND = 2     /* to a user mailbox, 1..256 bytes */
} rifl_rdmasim_op;

typedef struct rifl_rdmasim_config {
    unsigned senders;         /* hosts sending to host 0, 1..63 */
    rifl_rdmasim_op op;
    uint64_t size;            /* bytes per transfer */
    unsigned flows;           /* outstanding transfers per sender, 1..1024 */
    uint64_t bytes;           /* payload per sender in all (rounded up to transfers) */
    double link_gbps;         /* frame bit rate of every link */
    unsigned frame_bits;      /* F */
    unsigned hops;            /* switches on the path, 1..5 */
    unsigned paths;           /* routes between two hosts, 1..32 */
    double link_ns;           /* each link's cable and transceivers */
    double switch_ns;         /* each switch's pipeline */
    rifl_rdma_mapping mapping;/* how packets ride on Layer 2 */
    unsigned bundle_packets;  /* N; 0: the mapping's (7, 1, 11) */
    bool go_back_n;           /* resend later blocks too (for comparison) */
    double block_timeout_ns;
    /* faults */
    double page_fault;        /* each 4 KB destination page not resident at first touch */
    double page_in_ns;        /* time to serve a page fault */
    double payload_crc;       /* each WRITE packet's payload damaged before it leaves */
    double drop;              /* each cell dropped at a switch (its bundle lost) */
    bool wrong_pd;            /* the remote memory is in another protection
                                 domain: host 0's for writes and sends, the
                                 senders' for reads (host 0's then stays
                                 untouched) */
    uint64_t seed;
    double max_ns;            /* give up after this much simulated time */
    /* Over a `rifl sim net` network instead of the path model: hosts with
     * NICs, switches, and links that are pairs of lane engines (flow-control
     * frames take slots, bit errors cause replays).  NULL: the path model.
     * The topology's hosts 0..senders (and the victim) run engines; hops,
     * link_ns, switch_ns and drop do not apply (the topology and sim net's
     * defaults give the path); paths is the routes per host pair used, at
     * most 32.  Bundles go into the NIC per destination, two waiting at
     * most; completions are seen at the next cell time. */
    const rifl_topology *topo;
    rifl_net_fc fc;           /* with topo: per-VOQ, credit or link-level flow control */
    unsigned vls, credit_cells; /* with topo and credit: as rifl_net_config's
                                   (else 0: refused, having no effect) */
    unsigned lanes, group_lanes; /* with topo: bonded links, as rifl_net_config's
                                    (else lanes 0 or 1 and group_lanes 0;
                                    group_lanes needs a bonded link) */
    double ber;               /* with topo: every link's bit error rate */
    bool victim;              /* with topo, writes: host 1 also writes to host
                                 senders + 1 (a destination nobody else uses)
                                 all through the run, `flows` transfers more
                                 of `size` bytes, at most 64 KiB */
    double max_memory_gb;     /* with topo: refuse a network above this many GB,
                                 as rifl_net_config's (0: no limit) */
} rifl_rdmasim_config;

/* One sender, writes of 1 MB, 32 flows, 64 MB, 10 Gbit/s links, F = 256,
 * 1 hop, 1 path, 100 ns per link (2 m and 2 x 40 ns transceivers), 200 ns
 * per switch, the spec's bundles of 7, 1 ms block timeout, no faults (page-in 10 us), seed 1,
 * at most 10 s simulated. */
RIFL_API extern const rifl_rdmasim_config rifl_rdmasim_default_config;

typedef struct rifl_rdmasim_result {
    uint64_t transfers;       /* completed, every sender */
    uint64_t failed;          /* of them with an error status */
    int first_error;          /* the first failed transfer's status */
    uint64_t bytes;           /* payload of the successful ones */
    bool verified;            /* every byte compared (and, with wrong_pd,
                                 the target's memory untouched) */
    uint64_t mismatches;      /* transfers whose bytes differed, or not
                                 delivered though acknowledged */
    uint64_t acked_missing;   /* of them: sends completed without an error
                                 that were not in the target's mailbox */
    bool finished;            /* all transfers completed before max_ns */
    double sim_ns;            /* first post to last completion */
    double throughput_gbps;   /* bytes x 8 / sim_ns, every sender */
    double capacity_gbps;     /* docs/rdma.md: what host 0's link can carry with
                                 this mapping and N */
    unsigned bundle_packets;  /* N as used */
    double ratio;
    double latency_ns_mean;   /* post to completion */
    double latency_ns_min;
    double notify_ns_min;     /* post to the record written at the target
                                 (writes with a notification: the first) */
    uint64_t cells, bundles, dropped_cells, dropped_bundles, damaged_packets;
    uint64_t page_faults_served;
    /* every host's engine together */
    uint64_t retransmitted_blocks, nacks, timeouts;
    double sender_gbps_min, sender_gbps_max; /* each sender's bytes x 8 / the time of its
                                                last completion */
    /* with topo */
    double victim_gbps;       /* the victim flow's completed bytes x 8 / sim_ns */
    uint64_t victim_transfers;
    uint64_t replays, fc_frames, max_voq_cells, link_verify_fails;
    double cell_p99_ns;       /* cell latency, post to arrival, every cell */
    rifl_rdma_stats sender;   /* host 1's counters */
    rifl_rdma_stats target;   /* host 0's counters */
} rifl_rdmasim_result;

/* RIFL_ERR_CONFIG with a message naming the setting. */
RIFL_API int rifl_rdmasim_check(const rifl_rdmasim_config *cfg, char *msg, size_t msglen);
RIFL_API int rifl_rdmasim_run(const rifl_rdmasim_config *cfg, rifl_rdmasim_result *res,
                              char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif
#endif

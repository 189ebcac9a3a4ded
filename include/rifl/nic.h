/* rifl: the RIFL NIC of a host in a Layer 2 network (sans-I/O).
 *
 * The NIC of paper 004 between a host and the first switch:
 *
 *   - sending: the host posts messages for other hosts, named by their
 *     number; the NIC keeps one queue per destination, cuts each message
 *     into cells with the endpoint message format (rifl/l2.h, a 4-byte
 *     prefix then the bytes) and hands out one cell at a time, round robin
 *     over the destinations whose head cell may go.  A destination whose
 *     first-hop virtual output queue (VOQ) the switch has paused with a
 *     per-VOQ flow-control frame waits; the others go on, so a paused VOQ
 *     never blocks another destination.  Messages are not copied: the
 *     NIC reads their bytes from the caller's memory as their cells leave
 *     (as a NIC reads host memory by DMA), so a message's bytes must stay
 *     valid until its last cell has been handed out (rifl_nic_tx.last).
 *   - routes: from a central map built from the topology: every shortest
 *     route to each destination (up to max_paths of them).  A message keeps
 *     one route, chosen by a hash of (source, destination, flow)
 *     (rifl_topo_flow_path), so its cells arrive in order.
 *   - receiving: every cell's return route is checked against the map (it
 *     must lead back to a host); cells are reassembled per source and route
 *     (one message at a time on each, as the sender never interleaves two
 *     messages on one route) and handed to the caller as they arrive, with
 *     their place in the message (as a NIC writes them to host memory).
 *
 * Time `now` is the caller's (any unit, the same in every call): it stamps
 * when a message was posted and when each cell reached the head of its
 * queue.  All memory is allocated by rifl_nic_create. */
#ifndef RIFL_NIC_H
#define RIFL_NIC_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/counter.h"
#include "rifl/error.h"
#include "rifl/l2.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIFL_NIC_MAX_PATHS 64
#define RIFL_NIC_MAX_VLS 15   /* InfiniBand's data VLs, VL0..VL14 */

/* ---- the central map ---------------------------------------------------------
 * Built once from the topology and shared by every NIC of the network: for
 * each ordered pair of hosts, every shortest route (up to max_paths, in the
 * order rifl_topo_routes_hosts gives them).  The topology must outlive the
 * map (return routes are checked on it). */
typedef struct rifl_nic_route {
    uint8_t rel[RIFL_L2_MAX_HOPS]; /* the header's route bytes */
    uint8_t hops;                  /* 1..5 */
    uint8_t voq;                   /* first-hop VOQ: the first switch's output */
} rifl_nic_route;

typedef struct rifl_nic_map rifl_nic_map;

/* RIFL_ERR_CONFIG with a message when max_paths is not 1..64, the topology
 * has fewer than two hosts, or a host cannot reach another in five hops. */
RIFL_API int rifl_nic_map_create(const rifl_topology *topo, unsigned max_paths,
                                 rifl_nic_map **out, char *msg, size_t msglen);
RIFL_API void rifl_nic_map_free(rifl_nic_map *map);
/* The bytes rifl_nic_map_create allocates for topo and max_paths, without
 * making the map (its routes: hosts^2 x max_paths of 7 bytes). */
RIFL_API uint64_t rifl_nic_map_memory(const rifl_topology *topo, unsigned max_paths);
/* Hosts are numbered in the order the topology lists them, from 0. */
RIFL_API unsigned rifl_nic_map_hosts(const rifl_nic_map *map);
RIFL_API unsigned rifl_nic_map_max_paths(const rifl_nic_map *map);
/* The topology node of host `host`, or -1. */
RIFL_API int rifl_nic_map_node(const rifl_nic_map *map, unsigned host);
/* The host number of topology node `node`, or -1 (a switch). */
RIFL_API int rifl_nic_map_host_of(const rifl_nic_map *map, unsigned node);
/* The routes from host `src` to host `dst` (*count of them; NULL and 0 for
 * src == dst or a number out of range). */
RIFL_API const rifl_nic_route *rifl_nic_map_routes(const rifl_nic_map *map, unsigned src,
                                                   unsigned dst, unsigned *count);
/* The host a route taken from host `from` leads to, or -1 (for a cell's
 * return route: the host that sent it). */
RIFL_API int rifl_nic_map_follow(const rifl_nic_map *map, unsigned from, const uint8_t *route,
                                 unsigned hops);

/* ---- a NIC --------------------------------------------------------------------- */

typedef struct rifl_nic_config {
    unsigned tx_messages; /* messages posted and not yet sent, at most */
    unsigned vls;         /* virtual lanes the cells go on, 1..15 (0 counts as
                             1): a cell for host d goes on VL d mod vls, as
                             an InfiniBand host picks a service level */
} rifl_nic_config;

/* 1024 messages, one virtual lane. */
RIFL_API extern const rifl_nic_config rifl_nic_default_config;

typedef struct rifl_nic rifl_nic;

/* The NIC of host number `host` on `map` (which must outlive it).  It keeps
 * one receive context per source and route (max_paths per source).
 * RIFL_ERR_CONFIG with a message for a bad configuration or host number. */
RIFL_API int rifl_nic_create(const rifl_nic_config *cfg, const rifl_nic_map *map,
                             unsigned host, rifl_nic **out, char *msg, size_t msglen);
RIFL_API void rifl_nic_free(rifl_nic *nic);
/* The bytes rifl_nic_create allocates for a NIC of cfg on a map of `hosts`
 * hosts and max_paths routes per pair, without making it (its receive
 * contexts: hosts x max_paths of 16 bytes). */
RIFL_API uint64_t rifl_nic_memory(const rifl_nic_config *cfg, unsigned hosts,
                                  unsigned max_paths);
RIFL_API unsigned rifl_nic_host(const rifl_nic *nic);

/* ---- sending ---------------------------------------------------------------- */

/* Post a data message of 1..RIFL_L2_MSG_MAX bytes for host `dst` on flow
 * `flow` (which picks its route).  `tag` is the caller's, reported with each
 * of its cells.  RIFL_ERR_AGAIN when tx_messages are already queued,
 * RIFL_ERR_INVALID_ARG for a bad destination (this host included), length
 * or a NULL message. */
RIFL_API int rifl_nic_post(rifl_nic *nic, unsigned dst, uint64_t flow, const void *msg,
                           size_t len, uint64_t tag, uint64_t now);
/* Post a whole endpoint message that already starts with its 4-byte prefix
 * (rifl-l2.md section 1: an RDMA bundle from rifl_rdma_output, or a data
 * message built by the caller) for host `dst` on route `path` (an index
 * into rifl_nic_map_routes; the caller spreads its own traffic).  The NIC
 * cuts it into cells as they are and pads the last.  RIFL_ERR_INVALID_ARG
 * as rifl_nic_post, and for a path out of range or a prefix that is
 * reserved or disagrees with `len`; RIFL_ERR_AGAIN when the queue is full. */
RIFL_API int rifl_nic_post_msg(rifl_nic *nic, unsigned dst, unsigned path, const void *msg,
                               size_t len, uint64_t tag, uint64_t now);

/* What rifl_nic_next_cell handed out. */
typedef struct rifl_nic_tx {
    unsigned dst;        /* destination host */
    unsigned path;       /* its route, an index into rifl_nic_map_routes */
    unsigned voq;        /* the first-hop VOQ (the first switch's output) */
    unsigned vl;         /* its virtual lane: dst mod vls */
    uint64_t tag;        /* the message's */
    uint32_t index;      /* cell number in the message, from 0 */
    uint32_t cells;      /* cells of the message */
    bool last;           /* the message's last cell: its bytes are free */
    uint64_t posted;     /* `now` of rifl_nic_post */
    uint64_t head;       /* when this cell reached the head of its queue */
} rifl_nic_tx;

/* The next cell to send in `now`: 1 with the cell (header and 256 bytes)
 * written, 0 when no destination has a cell that may go. */
RIFL_API int rifl_nic_next_cell(rifl_nic *nic, uint64_t now, uint8_t cell[RIFL_L2_CELL_BYTES],
                                rifl_nic_tx *tx);
/* A per-VOQ flow-control frame from the first switch: ON pauses a VOQ,
 * OFF resumes it. */
RIFL_API int rifl_nic_fc(rifl_nic *nic, const rifl_l2_fc *fc);
/* Whether the first-hop VOQ `voq` is paused. */
RIFL_API bool rifl_nic_paused(const rifl_nic *nic, unsigned voq);
/* Credit flow control: the virtual lanes (bit v for VL v) whose next cell
 * has no credit on the link to the first switch.  A destination whose VL is
 * blocked waits; the others go on.  RIFL_ERR_INVALID_ARG for a VL beyond
 * vls. */
RIFL_API int rifl_nic_block_vls(rifl_nic *nic, uint32_t mask);
/* Messages queued and not yet fully sent; cells of them still to send. */
RIFL_API unsigned rifl_nic_tx_messages(const rifl_nic *nic);
RIFL_API uint64_t rifl_nic_tx_cells(const rifl_nic *nic);

/* ---- receiving -------------------------------------------------------------- */

/* What one cell delivered. */
typedef struct rifl_nic_rx {
    unsigned src;            /* the source host */
    unsigned context;        /* its receive context (one per route in use) */
    uint8_t route[RIFL_L2_MAX_HOPS]; /* the route back to the source (the
                                        cell's route reversed), `hops` bytes */
    unsigned hops;
    int path;                /* that route's index among the map's routes to
                                the source (rifl_nic_map_routes), -1 when it
                                is not one of them */
    unsigned proto;          /* the message's protocol (RIFL_L2_PROTO_*) */
    uint64_t msg_len;        /* bytes after the prefix */
    uint64_t offset;         /* of `data` in the message */
    const uint8_t *data;     /* this cell's message bytes (inside the cell) */
    size_t len;
    bool first, last;        /* the message's first and last cell */
    uint8_t prefix[RIFL_L2_MSG_PREFIX_BYTES]; /* the message's prefix (first cell) */
} rifl_nic_rx;

/* A cell (RIFL_L2_CELL_BYTES) arrived.  RIFL_OK with *rx filled, or the
 * cell is dropped and counted: RIFL_ERR_FRAME for a cell of the wrong
 * length, with hops left or a bad header, whose return route leads to no
 * host, or that starts a message with a reserved protocol or length 0;
 * RIFL_ERR_AGAIN when every receive context of its source is busy with
 * another route. */
RIFL_API int rifl_nic_receive(rifl_nic *nic, uint64_t now, const uint8_t *cell, size_t len,
                              rifl_nic_rx *rx);

/* ---- counters ------------------------------------------------------------------ */

typedef struct rifl_nic_stats {
    uint64_t msg_posted;     /* messages accepted */
    uint64_t post_refused;   /* rifl_nic_post calls refused: queue full */
    uint64_t cells_tx;       /* cells handed out */
    uint64_t msg_sent;       /* messages whose last cell was handed out */
    uint64_t paused_skips;   /* times a destination's head cell waited for a paused VOQ */
    uint64_t credit_skips;   /* times a destination's head cell waited for credit */
    uint64_t fc_on, fc_off;  /* flow-control frames' ON and OFF */
    uint64_t cells_rx;       /* cells delivered */
    uint64_t msg_rx;         /* messages whose last cell was delivered */
    uint64_t rx_bad_len;     /* dropped: not one cell long */
    uint64_t rx_bad_header;  /* dropped: hops left or a bad hop count */
    uint64_t rx_bad_route;   /* dropped: return route leads to no host */
    uint64_t rx_reserved;    /* dropped: first cell of a reserved protocol or length 0 */
    uint64_t rx_no_context;  /* dropped: every context of the source busy */
} rifl_nic_stats;

RIFL_API const rifl_nic_stats *rifl_nic_get_stats(const rifl_nic *nic);
RIFL_API const rifl_counter *rifl_nic_counters(size_t *count);

#ifdef __cplusplus
}
#endif
#endif

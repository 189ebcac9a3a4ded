/* The NIC's private state (rifl/nic.h). */
#ifndef RIFL_NIC_PRIV_H
#define RIFL_NIC_PRIV_H

#include <stdint.h>

#include "rifl/nic.h"

struct rifl_nic_map {
    const rifl_topology *topo;
    unsigned hosts, paths;
    unsigned *host_node;      /* [hosts] */
    int *node_host;           /* [nodes]: host number or -1 */
    rifl_nic_route *routes;   /* [src][dst][paths] */
    uint8_t *count;           /* [src][dst] */
};

#define NIC_NONE UINT32_MAX

/* A message posted and not yet sent. */
struct nic_msg {
    const uint8_t *data;
    uint64_t tag, posted;
    uint32_t len, cells, sent; /* bytes; cells; cells handed out */
    uint32_t next;             /* next message of its destination, or NIC_NONE */
    uint8_t path, voq;
    bool raw;                  /* carries its own prefix */
};

/* A destination's queue. */
struct nic_dst {
    uint32_t head, tail;       /* messages, or NIC_NONE */
    uint64_t head_since;       /* when the head cell became head */
};

/* A receive context: the message in progress from one source on one route.
 * Every NIC has one per source and route, hosts x paths of them, so a
 * network holds hosts^2 x paths: kept to 16 bytes.  A message's length
 * fits 32 bits (24 for data, 16 for RDMA), and it is in progress while
 * fewer of its bytes have come than it has (no flag of its own). */
struct nic_ctx {
    uint8_t route[RIFL_L2_MAX_HOPS];
    uint8_t hops;              /* 0: unused */
    uint8_t proto;
    int8_t path;               /* the route back among the map's (-1: none) */
    uint32_t msg_len, got;     /* bytes after the prefix; of them received */
};
_Static_assert(sizeof(struct nic_ctx) == 16, "a receive context is 16 bytes");

static inline bool nic_ctx_busy(const struct nic_ctx *c) { return c->got < c->msg_len; }

struct rifl_nic {
    rifl_nic_config cfg;
    const rifl_nic_map *map;
    unsigned host, hosts, words;
    struct nic_msg *msg;       /* [tx_messages] */
    uint32_t free_msg;         /* free list through next */
    unsigned queued;           /* messages queued */
    uint64_t queued_cells;     /* cells still to send */
    struct nic_dst *dst;       /* [hosts] */
    uint64_t *ready;           /* [words]: destinations with a message */
    unsigned rr;               /* next destination to look at first */
    uint64_t paused[4];        /* first-hop VOQs paused */
    unsigned vls;              /* virtual lanes (>= 1) */
    uint32_t vl_blocked;       /* VLs without credit */
    struct nic_ctx *ctx;       /* [hosts][paths] */
    rifl_nic_stats st;
};

#endif

/* The port's state, shared by its packet side (port.c) and its Layer 2
 * endpoint (port_l2.c). */
#ifndef RIFL_PORT_PRIV_H
#define RIFL_PORT_PRIV_H

#include "rifl/port.h"

#include "pktq.h"

/* One source being reassembled, known by the route back to it. */
struct l2_source {
    bool used;
    unsigned hops;
    uint8_t route[RIFL_L2_MAX_HOPS];
    unsigned vl;
    rifl_l2_reasm r;
    bool ready;             /* a complete message waits in r.buf */
    size_t ready_len;
    uint64_t last_cell;     /* order of use, to hand out in arrival order */
};

struct rifl_port {
    rifl_port_config cfg;
    rifl_lane *lane;
    bool own_lane;
    rifl_credit *credit;
    rifl_vlarb arb;
    unsigned fb;              /* frame bytes: credit time units per slot */
    unsigned vlb;             /* 1 with the VL byte, else 0 */
    size_t lane_cap;          /* the lane's empty transmit queue, bytes */
    struct pktq txq[RIFL_FC_MAX_DATA_VLS], rxq[RIFL_FC_MAX_DATA_VLS];
    uint8_t *scratch;         /* a packet on its way into the lane */
    uint8_t *asm_buf;         /* a packet coming off the lane */
    size_t asm_len;
    bool discard;             /* the rest of a too-long packet is dropped */
    bool staged;              /* FC_LANE: asm_buf holds a whole packet whose
                                 VL queue is full */
    unsigned staged_vl;
    uint8_t fcp[RIFL_FC_FCP_BYTES];  /* as the engine made it */
    bool fcp_waiting;
    unsigned lane_vl;         /* FC_CREDIT: VL and blocks of the last packet */
    uint32_t lane_blocks;     /* handed to the lane (until it has left) */
    bool lane_counted;        /* ... and the engine's FCTBS counts it (false
                                 once the engine started again) */
    rifl_port_stats st;
    /* Layer 2 endpoint */
    struct l2_source *src;
    uint8_t *cell;            /* one cell, header and payload */
    uint64_t cells_seen;
};

#endif

/* rifl: a port, one end of a RIFL link as a NIC or a switch port uses it.
 *
 * A port puts together a lane (later a bonded link), flow control, virtual
 * lanes and the Layer 2 endpoint:
 *
 *   - packets are queued per virtual lane (VL) and handed to the lane as
 *     flow control allows: with RIFL_PORT_FC_LANE the lane's own ON/OFF flow
 *     control protects the link and an arbiter (rifl_vlarb) picks the VL
 *     whose packet goes next; with RIFL_PORT_FC_CREDIT each VL has its own
 *     credits (rifl/credit.h), the lane runs without ON/OFF frames, and
 *     Flow Control Packets travel in extension frames;
 *   - on receipt, packets are sorted into per-VL receive queues; reading one
 *     frees its space (and returns its credit);
 *   - the Layer 2 endpoint sends a message as cells (a 6-byte header with
 *     the route, 256 bytes of the message) and reassembles the cells that
 *     arrive, per source (docs/layer2.md).  It does not take a switch's
 *     per-VOQ flow-control frames (format code 3: counted in ext_other and
 *     dropped), so it is an end for links without a switch in between, or
 *     with credits; toward a switch use the NIC (rifl/nic.h), which obeys
 *     them.
 *
 * Carrying credits on a lane (project rule, docs/credit-flow-control.md):
 * every packet starts with one VL byte (0..14) followed by its bytes, and
 * credits count the bytes after it; an FCP travels as an extension frame
 * with format code RIFL_FCP_EXT_CODE, its 8 bytes first.  The lane delivers
 * both in order and replays them after errors, so an FCP is never lost on a
 * lane, only delayed.  Extension frames overtake user data still queued in
 * the lane, so with credits a packet is handed to the lane only when its
 * transmit queue is empty: an FCP must not count packets still waiting
 * behind it.  FCPs go as they fall due, past the frames of a packet still
 * in the queue; such an FCP carries the FCTBS from before that packet.
 *
 * Sans-I/O: the port never reads a clock or touches a device.  Time `now`
 * is the lane's frame slot, passed in every call.  In each slot the driver
 * calls rifl_port_feed (what may go is handed to the lane), lets the lane
 * send and receive through its PHY, then calls rifl_port_collect (what
 * arrived is taken off the lane); rifl_port_tx and rifl_port_rx do both
 * halves with wire bytes. */
#ifndef RIFL_PORT_H
#define RIFL_PORT_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/counter.h"
#include "rifl/credit.h"
#include "rifl/error.h"
#include "rifl/l2.h"
#include "rifl/lane.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Extension-frame format code of an FCP on a lane (project rule). */
#define RIFL_FCP_EXT_CODE 0x04

typedef enum rifl_port_fc {
    RIFL_PORT_FC_LANE = 0,   /* the lane's ON/OFF flow control */
    RIFL_PORT_FC_CREDIT = 1  /* per-VL credits, FCPs in extension frames */
} rifl_port_fc;

typedef struct rifl_port_config {
    rifl_lane_config lane;     /* fc_mode is set from `fc` */
    rifl_port_fc fc;
    unsigned vls;              /* data VLs, 1..15 */
    bool vl_byte;              /* packets start with their VL byte (needed
                                  with credits or more than one VL; without
                                  it a packet is exactly what was sent, as
                                  a Layer 2 cell must be) */
    uint32_t max_packet;       /* largest packet in bytes, without the VL
                                  byte, 1..65535 */
    uint32_t tx_queue_bytes;   /* per VL, packets waiting to go */
    uint32_t rx_queue_bytes;   /* FC_LANE, per VL: packets held for the
                                  reader besides the one the port holds
                                  while its VL is full (0: only that one);
                                  FC_CREDIT: the credit buffer sets it */
    rifl_vlarb_config arb;     /* FC_LANE: n_high + n_low == 0 for the
                                  default table */
    rifl_credit_config credit; /* FC_CREDIT: data_vls and max_packet_bytes
                                  come from vls and max_packet */
    unsigned fcp_per_slot;     /* FC_CREDIT: FCPs handed to the lane in one
                                  slot, 0 for every one that is due */
    bool fcp_drop_refused;     /* FC_CREDIT: an FCP the lane's extension
                                  queue refuses is dropped (its VL's next
                                  FCP carries the same registers) instead of
                                  being offered again in the next slot */
    unsigned l2_sources;       /* Layer 2 endpoint: sources reassembled at
                                  once (0: no endpoint) */
    uint32_t l2_max_msg;       /* largest message reassembled, bytes */
} rifl_port_config;

/* A Layer 2 port: the reference lane, its ON/OFF flow control, one VL, no
 * VL byte, packets of up to one cell, 64 KiB queued per direction, FCPs one
 * per slot and retried, an endpoint for 16 sources and messages of up to
 * 64 KiB. */
RIFL_API extern const rifl_port_config rifl_port_default_config;

RIFL_API int rifl_port_config_check(const rifl_port_config *cfg, char *msg, size_t msglen);

/* FC_CREDIT: the longest time, in symbol times (bytes), between two FCPs
 * of one VL that a port of this configuration sends on a lane of
 * cfg->lane's frame width while the lane sends new frames (a replay or an
 * error wait stops every frame, FCPs too): the period rounded up to a frame
 * slot, plus a slot for each other VL's FCP due at once.  An FCP does not
 * wait for a packet in progress.  rifl_port_config_check refuses a
 * configuration where this reaches 65536.  0 without credits. */
RIFL_API uint64_t rifl_port_fcp_worst_gap(const rifl_port_config *cfg);

typedef struct rifl_port rifl_port;

/* A port with its own lane (lane == NULL), or on a lane the caller made,
 * which must be configured as this port needs (fc_mode; the caller frees
 * it after the port).  RIFL_ERR_CONFIG with a message naming the problem. */
RIFL_API int rifl_port_create(const rifl_port_config *cfg, rifl_lane *lane, rifl_port **out,
                              char *msg, size_t msglen);
RIFL_API void rifl_port_free(rifl_port *port);
/* The lane, for the driver that moves its frames. */
RIFL_API rifl_lane *rifl_port_lane(rifl_port *port);
RIFL_API const rifl_port_config *rifl_port_get_config(const rifl_port *port);
/* The credit engine (FC_CREDIT), NULL otherwise. */
RIFL_API const rifl_credit *rifl_port_credit(const rifl_port *port);

/* ---- sending ---------------------------------------------------------------- */

/* Queue a packet of 1..max_packet bytes on `vl`.  RIFL_ERR_AGAIN when the
 * VL's queue lacks room now, RIFL_ERR_TOO_BIG above max_packet,
 * RIFL_ERR_INVALID_ARG for a bad VL, len 0 or a NULL packet. */
RIFL_API int rifl_port_send(rifl_port *port, unsigned vl, const void *pkt, size_t len);
/* Packets waiting on `vl`. */
RIFL_API unsigned rifl_port_tx_queued(const rifl_port *port, unsigned vl);
/* Before the lane sends in slot `now`: hand it what flow control lets go. */
RIFL_API void rifl_port_feed(rifl_port *port, uint64_t now);
/* True while an FCP refused by the lane waits to be offered again. */
RIFL_API bool rifl_port_fcp_waiting(const rifl_port *port);
/* The next slot after `now` at which the port has something to do with no
 * other input (an FCP falls due); UINT64_MAX for none. */
RIFL_API uint64_t rifl_port_next_due(const rifl_port *port, uint64_t now);

/* ---- receiving -------------------------------------------------------------- */

/* After the lane received in slot `now`: take FCPs and packets off it.
 * Call it after every frame the lane receives (rifl_port_rx does both):
 * FCPs are taken before packets, so with credits an FCP that came after
 * the last frame of a packet, in the same call, would have its FCTBS
 * (which counts that packet) set ABR before the packet adds its blocks
 * again. */
RIFL_API void rifl_port_collect(rifl_port *port, uint64_t now);
/* Length of the packet waiting first on `vl`: RIFL_OK, or RIFL_ERR_AGAIN
 * when none waits. */
RIFL_API int rifl_port_peek(const rifl_port *port, unsigned vl, size_t *len);
/* Take that packet (its space, and with credits its credit, goes back).
 * RIFL_ERR_TOO_BIG when it is larger than `cap` (it stays). */
RIFL_API int rifl_port_read(rifl_port *port, unsigned vl, uint64_t now, void *buf, size_t cap,
                            size_t *len);

/* ---- one slot with wire bytes ---------------------------------------------- */

/* rifl_port_feed, then the lane's frame of slot `now` (rifl_lane_tx). */
RIFL_API int rifl_port_tx(rifl_port *port, uint64_t now, uint8_t *wire);
/* The lane receives (rifl_lane_rx, `wire` NULL for no frame), then
 * rifl_port_collect.  Returns the lane's rifl_rx_result. */
RIFL_API int rifl_port_rx(rifl_port *port, uint64_t now, const uint8_t *wire,
                          rifl_frame_info *info);

/* ---- Layer 2 endpoint --------------------------------------------------------- */

/* Send a data message of 1..RIFL_L2_MSG_MAX bytes on `vl` along `route`
 * (`hops` relative output ports, 1..5) as cells, all queued at once.
 * RIFL_ERR_AGAIN when they do not all fit now, RIFL_ERR_TOO_BIG when they
 * never can (or max_packet is below a cell), RIFL_ERR_INVALID_ARG for a bad
 * route, VL or length. */
RIFL_API int rifl_port_send_msg(rifl_port *port, unsigned vl, const uint8_t *route,
                                unsigned hops, const void *msg, size_t len);
/* The next complete message on `vl`: its bytes, length, protocol and the
 * route back to its source (a data message's bytes after its prefix; an
 * RDMA bundle whole, its 4-byte prefix first, as rifl_rdma_input takes
 * it).  Takes cells off the VL until one completes.
 * RIFL_ERR_AGAIN when none is complete, RIFL_ERR_TOO_BIG when it is larger
 * than `cap` (it waits), RIFL_ERR_STATE without an endpoint. */
RIFL_API int rifl_port_read_msg(rifl_port *port, unsigned vl, uint64_t now, void *buf,
                                size_t cap, size_t *len, unsigned *proto,
                                uint8_t route[RIFL_L2_MAX_HOPS], unsigned *hops);

/* ---- counters ------------------------------------------------------------------ */

typedef struct rifl_port_stats {
    uint64_t tx_packets[RIFL_FC_MAX_DATA_VLS], tx_bytes[RIFL_FC_MAX_DATA_VLS];
    uint64_t tx_refused;      /* rifl_port_send calls refused: queue full */
    uint64_t rx_packets[RIFL_FC_MAX_DATA_VLS], rx_bytes[RIFL_FC_MAX_DATA_VLS];
    uint64_t rx_bad_vl;       /* packets dropped: no VL byte or a VL not in use */
    uint64_t rx_too_long;     /* packets dropped: longer than max_packet */
    uint64_t rx_credit_drops; /* packets the credit receiver refused */
    uint64_t rx_queue_full;   /* packets dropped: no room in their VL queue
                                 although credit said there was */
    uint64_t fcp_tx;          /* FCPs handed to the lane */
    uint64_t fcp_refused;     /* times the lane's extension queue was full */
    uint64_t fcp_dropped;     /* refused FCPs given up */
    uint64_t fcp_rx;          /* FCPs taken off the lane */
    uint64_t ext_other;       /* extension frames of another format */
    /* Layer 2 endpoint */
    uint64_t msg_tx, cells_tx;
    uint64_t msg_rx, cells_rx;
    uint64_t cell_bad_len;    /* packets on an endpoint VL that are not a cell */
    uint64_t cell_misrouted;  /* cells with hops still to go */
    uint64_t cell_bad_route;  /* cells whose header gives no route back */
    uint64_t cell_no_context; /* cells from a source beyond l2_sources */
    uint64_t msg_too_big;     /* messages beyond l2_max_msg, dropped */
    uint64_t msg_reserved;    /* first cells of a reserved protocol, dropped */
} rifl_port_stats;

RIFL_API const rifl_port_stats *rifl_port_get_stats(const rifl_port *port);
/* Every counter of rifl_port_stats, named and explained (rifl/counter.h). */
RIFL_API const rifl_counter *rifl_port_counters(size_t *count);

#ifdef __cplusplus
}
#endif
#endif

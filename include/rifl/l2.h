/* rifl: RIFL Layer 2 protocol (sans-I/O).
 *
 * Cells: a 6-byte Layer 2 header followed by 256 payload bytes.  The header
 * carries a source route of up to five hops, one relative output port per
 * switch.  This header gives the header accessors, the forwarding rule and
 * header update of a switch, route reversal, endpoint segmentation and
 * reassembly, the per-VOQ flow-control frame codec, and topology files with
 * route computation.  See docs/layer2.md for the rules and the project's
 * decisions. */
#ifndef RIFL_L2_H
#define RIFL_L2_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIFL_L2_HDR_BYTES 6
#define RIFL_L2_CELL_PAYLOAD 256
#define RIFL_L2_CELL_BYTES (RIFL_L2_HDR_BYTES + RIFL_L2_CELL_PAYLOAD)
#define RIFL_L2_MAX_HOPS 5
#define RIFL_L2_MAX_PORTS 256
#define RIFL_L2_BROADCAST 255

/* ---- header --------------------------------------------------------------
 * byte 0: total hops (high nibble), remain hops (low nibble)
 * bytes 1..5: dst port 1..5 (dst port 1 = next hop) */
typedef struct rifl_l2_hdr {
    uint8_t b[RIFL_L2_HDR_BYTES];
} rifl_l2_hdr;

static inline unsigned rifl_l2_total_hops(const rifl_l2_hdr *h) { return h->b[0] >> 4; }
static inline unsigned rifl_l2_remain_hops(const rifl_l2_hdr *h) { return h->b[0] & 15u; }
/* k = 1..5 */
static inline unsigned rifl_l2_dst_port(const rifl_l2_hdr *h, unsigned k) { return h->b[k]; }
static inline void rifl_l2_set_total_hops(rifl_l2_hdr *h, unsigned v)
{
    h->b[0] = (uint8_t)((h->b[0] & 0x0f) | ((v & 15u) << 4));
}
static inline void rifl_l2_set_remain_hops(rifl_l2_hdr *h, unsigned v)
{
    h->b[0] = (uint8_t)((h->b[0] & 0xf0) | (v & 15u));
}
static inline void rifl_l2_set_dst_port(rifl_l2_hdr *h, unsigned k, unsigned v)
{
    h->b[k] = (uint8_t)v;
}

/* Build the header a source sends: `hops` (1..5) route bytes, total = remain
 * = hops, unused dst port fields zero.  RIFL_ERR_INVALID_ARG otherwise. */
RIFL_API int rifl_l2_hdr_make(rifl_l2_hdr *h, const uint8_t *route, unsigned hops);

/* Relative port number of output `out` seen from input `in` (out != in):
 * the value a source writes so that a switch entered on `in` forwards to
 * `out`.  Also the return index of a cell that came in on `out` and leaves on
 * `in`.  Returns -1 if out == in or either is >= nports. */
RIFL_API int rifl_l2_rel_port(unsigned nports, unsigned in, unsigned out);

/* ---- forwarding rule ------------------------------------------------------ */
typedef enum rifl_l2_fwd {
    RIFL_L2_FWD_UNICAST = 0,   /* *out_port set */
    RIFL_L2_FWD_BROADCAST,     /* to every port but the input */
    RIFL_L2_FWD_MISROUTED,     /* remain hops == 0 at a switch: drop */
    RIFL_L2_FWD_INVALID        /* bad dst port or inconsistent hop counts: drop */
} rifl_l2_fwd;

/* Decide where a cell entering input `in_port` of an `nports`-port switch
 * goes.  Returns a rifl_l2_fwd value (>= 0), or RIFL_ERR_INVALID_ARG when
 * nports is not 2..256 or in_port >= nports.  The output port of a unicast
 * cell goes to *out_port; NULL asks for the decision only. */
RIFL_API int rifl_l2_forward(unsigned nports, unsigned in_port, const rifl_l2_hdr *h,
                             unsigned *out_port);

/* Header update as the cell enters the fabric from input `in_port` towards
 * output `out_port`: remain hops - 1, dst ports rotate left one byte, and
 * dst port 5 gets the return index (the relative number of the input seen
 * from the output).  The caller has checked the cell with rifl_l2_forward. */
RIFL_API void rifl_l2_hdr_advance(rifl_l2_hdr *h, unsigned in_port, unsigned out_port);

/* Route back to the source of a cell that has arrived (remain hops == 0):
 * the last `total hops` dst port fields read backwards.  Returns RIFL_OK, or
 * RIFL_ERR_FRAME if the header has not arrived or has a bad hop count. */
RIFL_API int rifl_l2_reverse_route(const rifl_l2_hdr *arrived, uint8_t route[RIFL_L2_MAX_HOPS],
                                   unsigned *hops);
/* Same, as a ready header to answer the source. */
RIFL_API int rifl_l2_hdr_reply(const rifl_l2_hdr *arrived, rifl_l2_hdr *reply);

/* ---- endpoint message format (project rule, docs/layer2.md section 3) ----
 * Every message starts with a 4-byte prefix in its first cell: byte 0 the
 * protocol, then for a data message (0x01) the bytes after the prefix as a
 * 24-bit big-endian number (1 to 2^24 - 1), for an RDMA bundle (0x02) byte 1
 * the packet count and bytes 2-3 the bytes after the prefix.  The message
 * bytes follow; the last cell is padded with zeros.  Other protocol values
 * are reserved: the receiver drops such a cell and counts it.  Cells of one
 * source arrive in order (RIFL is lossless and each source-destination pair
 * uses one queue per hop), so the receiver needs no sequence numbers. */
#define RIFL_L2_MSG_PREFIX_BYTES 4
#define RIFL_L2_PROTO_DATA 0x01
#define RIFL_L2_PROTO_RDMA 0x02
#define RIFL_L2_MSG_MAX 0xffffffu   /* largest data message */

/* Cells of a data message of msg_len bytes: ceil((4 + msg_len) / 256); 0
 * for a length above RIFL_L2_MSG_MAX (no message has it). */
RIFL_API size_t rifl_l2_msg_cells(size_t msg_len);
/* Fill cell number `index` (0-based) of a data message of 1 to
 * RIFL_L2_MSG_MAX bytes.  RIFL_ERR_INVALID_ARG for a length outside that
 * range or an index past the last cell. */
RIFL_API int rifl_l2_msg_cell(const void *msg, size_t msg_len, size_t index,
                              uint8_t cell[RIFL_L2_CELL_PAYLOAD]);

/* Reassembly of the messages from one source.  The caller owns `buf`. */
typedef struct rifl_l2_reasm {
    uint8_t *buf;
    size_t cap;
    uint64_t need;      /* bytes of the current message still to come */
    uint64_t msg_len;   /* length of the current message */
    uint64_t got;       /* bytes stored so far */
    bool in_msg;
    bool skipping;      /* current message does not fit: cells discarded */
    unsigned proto;     /* protocol of the current (or last) message */
    unsigned count;     /* RDMA bundle: its packet count */
    uint64_t messages;  /* messages completed */
    uint64_t cells;     /* cells pushed */
    uint64_t too_big;   /* messages dropped because they exceed cap */
    uint64_t reserved;  /* first cells dropped: reserved protocol or zero length */
} rifl_l2_reasm;

RIFL_API void rifl_l2_reasm_init(rifl_l2_reasm *r, uint8_t *buf, size_t cap);
/* Push the next cell payload.  Returns 1 when a message is complete
 * (*msg_len set, bytes in r->buf, r->proto and r->count tell what it is), 0
 * when more cells are needed, RIFL_ERR_TOO_BIG when a message longer than
 * the buffer starts (its cells are then discarded and counted in too_big),
 * or RIFL_ERR_FRAME when a first cell carries a reserved protocol or a zero
 * length (the cell is dropped and counted in `reserved`); RIFL_ERR_INVALID_ARG
 * for a NULL argument. */
RIFL_API int rifl_l2_reasm_push(rifl_l2_reasm *r, const uint8_t cell[RIFL_L2_CELL_PAYLOAD],
                                size_t *msg_len);

/* ---- per-VOQ flow-control frame (docs/layer2.md section 4, project encoding) --------
 * A link-layer data frame, META 00, last payload byte 0x03; payload byte 0 =
 * flags (bit 7 ON valid, bit 6 OFF valid), byte 1 = ON queue, byte 2 = OFF
 * queue, every other byte zero.  ON = "stop sending to this queue", OFF =
 * "resume". */
#define RIFL_L2_FC_CODE 0x03
#define RIFL_L2_FC_ON_VALID 0x80
#define RIFL_L2_FC_OFF_VALID 0x40

typedef struct rifl_l2_fc {
    bool on_valid;
    bool off_valid;
    uint8_t on_queue;
    uint8_t off_queue;
} rifl_l2_fc;

/* Whole payload (payload_len = P/8 bytes, >= 4). */
RIFL_API int rifl_l2_fc_encode(const rifl_l2_fc *fc, uint8_t *payload, size_t payload_len);
/* RIFL_ERR_FRAME if the format byte is not 0x03, reserved flag bits or
 * padding bytes are not zero, or a queue number is set without its flag. */
RIFL_API int rifl_l2_fc_decode(const uint8_t *payload, size_t payload_len, rifl_l2_fc *fc);
/* The 3 data bytes for rifl_lane_send_ext(lane, RIFL_L2_FC_CODE, data, 3). */
RIFL_API void rifl_l2_fc_pack(const rifl_l2_fc *fc, uint8_t data[3]);
RIFL_API int rifl_l2_fc_unpack(const uint8_t *data, size_t len, rifl_l2_fc *fc);

/* ---- topology files and routes --------------------------------------------
 * Text, one statement per line, '#' comments:
 *   switch NAME PORTS          a switch with PORTS ports (2..256)
 *   host NAME                  an endpoint with one port
 *   link A[:PORT] B[:PORT] [delay SLOTS] [cable M] [transceiver NS]
 *        [rate GBPS] [ber X] [ber-ab X] [ber-ba X]
 * A host end takes no port; a switch end needs one.  Names are
 * [A-Za-z0-9_.-], at most 31 characters.  A link's settings after its ends
 * come in any order, each once: `delay` is the fixed delay of `rifl sim
 * switch` (cell slots); `cable` (metres), `transceiver` (ns of both ends'
 * transceivers), `rate` (Gbit/s) and the bit error rates are the link's
 * own in `rifl sim net`, where a link without them takes the run's (`ber`
 * both ways, `ber-ab` from A to B, `ber-ba` from B to A). */
#define RIFL_TOPO_NAME_MAX 32
#define RIFL_TOPO_MAX_NODES 4096
#define RIFL_TOPO_DEFAULT_DELAY 8
#define RIFL_TOPO_MAX_CABLE_M 1000.0
#define RIFL_TOPO_MAX_TRANSCEIVER_NS 10000.0
#define RIFL_TOPO_MAX_BER 1e-3 /* exclusive */
#define RIFL_TOPO_MAX_RATE_GBPS 10000.0 /* a rate is at least 1 Gbit/s */
#define RIFL_TOPO_MAX_LANES 16 /* lanes of a bonded link: 1, 2, 4, 8 or 16 */

/* A link's own settings at one of its ports; a value below 0 is not given
 * (the run's setting applies). */
typedef struct rifl_topo_link_attr {
    double cable_m;         /* the cable, metres (both ends hold it) */
    double transceiver_ns;  /* both ends' transceivers, ns (both ends hold it) */
    double tx_ber;          /* bit error rate of what this port sends */
    double rate_gbps;       /* the link's rate, Gbit/s (both ends hold it) */
    int lanes;              /* its lanes, 1 to 16 (more than 1: bonded; 0: not
                               given) (both ends hold it) */
} rifl_topo_link_attr;

typedef struct rifl_topo_node {
    char name[RIFL_TOPO_NAME_MAX];
    bool is_switch;
    unsigned nports;        /* 1 for a host */
    int *peer;              /* per port: node index or -1 */
    unsigned *peer_port;    /* per port: port on the peer */
    unsigned *delay;        /* per port: link delay in cell slots */
    rifl_topo_link_attr *attr; /* per port: the link's own settings */
} rifl_topo_node;

typedef struct rifl_topology {
    rifl_topo_node *nodes;
    unsigned nnodes;
    unsigned nhosts, nswitches;
    unsigned nlinks;
} rifl_topology;

/* Parse a topology.  On error returns RIFL_ERR_PARSE (or RIFL_ERR_NOMEM) and
 * writes "line N: problem; fix" into err. */
RIFL_API int rifl_topo_parse(const char *text, size_t len, rifl_topology **out, char *err,
                             size_t errlen);
RIFL_API void rifl_topo_free(rifl_topology *t);
/* Node index by name, or -1. */
RIFL_API int rifl_topo_find(const rifl_topology *t, const char *name);

/* A computed route between two hosts. */
typedef struct rifl_topo_route {
    unsigned hops;                       /* switches on the way (1..5) */
    uint8_t rel[RIFL_L2_MAX_HOPS];       /* header route bytes */
    int sw[RIFL_L2_MAX_HOPS];            /* switch node per hop */
    unsigned in_port[RIFL_L2_MAX_HOPS];  /* physical input port per hop */
    unsigned out_port[RIFL_L2_MAX_HOPS]; /* physical output port per hop */
} rifl_topo_route;

/* Shortest route (fewest switches; ties broken by lowest port numbers) from
 * host `src` to host `dst` (node indices).  RIFL_ERR_UNREACHABLE with a
 * message when no path exists or the shortest needs more than 5 hops;
 * RIFL_ERR_INVALID_ARG when an index is not a host or src == dst. */
RIFL_API int rifl_topo_route_hosts(const rifl_topology *t, unsigned src, unsigned dst,
                                   rifl_topo_route *route, char *err, size_t errlen);

/* Every shortest route from host `src` to host `dst`, at most `max` of
 * them, in the order of the output ports taken (so the first is the one
 * rifl_topo_route_hosts gives); *count says how many were written.  The
 * errors of rifl_topo_route_hosts. */
RIFL_API int rifl_topo_routes_hosts(const rifl_topology *t, unsigned src, unsigned dst,
                                    rifl_topo_route *routes, unsigned max, unsigned *count,
                                    char *err, size_t errlen);

/* rifl_topo_routes_hosts from every host to host `dst` at once (one search
 * instead of one per source): the routes from node s go to routes[s * max
 * ...], their number to counts[s] (0 for switches and dst); `routes` has
 * room for nnodes * max, `counts` for nnodes.  The same routes in the same
 * order, and the same errors, for the first source without a route. */
RIFL_API int rifl_topo_routes_to(const rifl_topology *t, unsigned dst, rifl_topo_route *routes,
                                 unsigned max, unsigned *counts, char *err, size_t errlen);

/* The path a flow keeps, of `paths` shortest routes: a hash of source,
 * destination and flow number, so every cell of a message takes one path
 * and flows spread over all of them. */
RIFL_API unsigned rifl_topo_flow_path(unsigned src, unsigned dst, uint64_t flow,
                                      unsigned paths);

/* Where a route leads: the node index of the host a cell sent by host `from`
 * with this route (`hops` relative ports) reaches, by the forwarding rule
 * at every switch; -1 when it ends at a switch, runs into an unlinked port
 * or leads back to `from`.  A receiver checks a cell's return route with it
 * (rifl_l2_reverse_route gives the route). */
RIFL_API int rifl_topo_follow(const rifl_topology *t, unsigned from, const uint8_t *route,
                              unsigned hops);

/* A virtual output queue of a switch of a topology: its node index and
 * the physical ports it joins. */
typedef struct rifl_topo_voq {
    int sw;
    unsigned in_port, out_port;
} rifl_topo_voq;

/* Whether the routes the simulators take can deadlock under per-VOQ flow
 * control: the first `paths` shortest routes (rifl_topo_routes_to) between
 * every pair of linked hosts.  A cell at the head of a VOQ of its route
 * waits for room in the next VOQ of the route; routes whose waits close a
 * cycle can fill every VOQ of it and stop for good under load (a ring of
 * switches with shortest routes does), routes without one cannot.  *len
 * gets the length of a cycle found (0: none), and cycle[] its first `max`
 * VOQs, each waiting on the next and the last on the first.  The errors
 * of rifl_topo_routes_to, RIFL_ERR_INVALID_ARG for a NULL topology or len
 * or no paths, RIFL_ERR_NOMEM (messages in err). */
RIFL_API int rifl_topo_wait_cycle(const rifl_topology *t, unsigned paths, rifl_topo_voq *cycle,
                                  unsigned max, unsigned *len, char *err, size_t errlen);

/* Topologies by name, as the topology text they stand for:
 *   single:N          N hosts h0.. on one switch s0 (port i to host i)
 *   leafspine:LxSxH   L leaves leaf0.. with H hosts each (h0.. in leaf
 *                     order, leaf ports 0..H-1), S spines spine0.. (leaf
 *                     port H + j to spine j, spine port i to leaf i)
 *   fattree:K         the three-tier fat tree of K-port switches (K even):
 *                     K pods of K/2 edge (edgeP.E) and K/2 aggregation
 *                     (aggP.A) switches, (K/2)^2 cores (coreJ), K^3/4
 *                     hosts; hosts of different pods are 5 switches apart
 * Links get the default delay.  RIFL_ERR_CONFIG with a message for a bad
 * name or size. */
RIFL_API int rifl_topo_generate(const char *spec, rifl_topology **out, char *err,
                                size_t errlen);
/* Whether `spec` names a generator (starts "single:", "leafspine:" or
 * "fattree:") rather than a file. */
RIFL_API bool rifl_topo_is_generator(const char *spec);

#ifdef __cplusplus
}
#endif
#endif

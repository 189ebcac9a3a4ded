/* rifl: the RIFL Layer 2 switch model (sans-I/O, slot-driven).
 *
 * N ports (2..256).  Each input module holds one virtual output queue (VOQ)
 * per output with statically allocated space.  Every cell slot a scheduler
 * picks which cells cross the fabric:
 *   - iSLIP (McKeown): request, grant, accept, repeated for a configurable
 *     number of iterations; grant and accept pointers move only on accepts
 *     of the first iteration.  The matched cells then go through a
 *     Batcher-Banyan model (bitonic sorting network + self-routing omega
 *     banyan) that checks no two cells collide inside the fabric.
 *   - SAFC: the ideal statically allocated fully connected switch (a
 *     dedicated queue per input-output pair; every output takes one cell
 *     from any input every slot, oldest first).
 * Per-VOQ flow control: a cell stored in VOQ q that makes it exceed its ON
 * threshold queues an ON for q to the upstream sender; a cell leaving q that
 * makes it drop to its OFF threshold queues an OFF.  Upstream hears of
 * changes only: no OFF for a queue it was not told to stop sending to, no
 * second ON, and an ON not yet sent when its OFF comes is dropped with it.
 * Each input sends at most one flow-control frame (one ON + one OFF) per
 * slot, ONs first; the ONs owed are sent round robin over the queues, so an
 * ON waits for at most one ON of each other queue of its input.
 *
 * Broadcast (dst port 1 = 255) is taken only by a switch configured for it
 * (`broadcast`); another drops broadcast cells as invalid.  A broadcast
 * cell is copied into every VOQ of its input in one slot, so it can make
 * all N - 1 of them pass their ON threshold at once; their ONs leave one
 * per slot, the last N - 2 slots late, and its queue takes N - 2 more cells
 * meanwhile.  A switch that takes broadcast keeps that headroom in every
 * VOQ (rifl_switch_broadcast_room).
 *
 * Time is the cell slot `now` (one cell per port and slot), passed to
 * rifl_switch_input (or rifl_switch_input_row) and rifl_switch_step; the
 * switch needs a step every slot (it has no timers to wait for).  All
 * memory is allocated by rifl_switch_create. */
#ifndef RIFL_SWITCH_H
#define RIFL_SWITCH_H

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

/* A cell as the switch stores it: the header plus opaque bookkeeping that the
 * switch carries along unchanged (the 256 payload bytes are not modelled). */
typedef struct rifl_cell {
    rifl_l2_hdr hdr;
    unsigned bytes : 12; /* payload bytes that are message data (<= 256) */
    unsigned vl : 4;     /* its virtual lane (rifl_switch_block_vls), 0..14 */
    uint16_t src;     /* caller's tags */
    uint16_t dst;
    uint32_t seq;
    uint64_t stamp;
} rifl_cell;

typedef enum rifl_sched {
    RIFL_SCHED_ISLIP = 0,
    RIFL_SCHED_SAFC = 1
} rifl_sched;

/* The longest input link round trip a switch takes, slots. */
#define RIFL_SWITCH_MAX_RTT 40000

typedef struct rifl_switch_config {
    unsigned nports;      /* 2..256 */
    rifl_sched scheduler;
    unsigned iterations;  /* iSLIP iterations, 1..nports */
    unsigned voq_cells;   /* space of each VOQ, in cells */
    unsigned rtt_slots;   /* input link round trip: cells that can still arrive
                             after an ON threshold is crossed, plus one
                             (1 .. RIFL_SWITCH_MAX_RTT) */
    unsigned fc_on;       /* ON threshold (cells); 0 = voq_cells - rtt_slots */
    unsigned fc_off;      /* OFF threshold (cells); 0 = fc_on / 2 */
    bool flow_control;    /* send per-VOQ flow control (default true) */
    bool check_fabric;    /* run the Batcher-Banyan model every slot (iSLIP) */
    bool broadcast;       /* take broadcast cells (default false); with flow
                             control, each VOQ then needs the headroom of
                             rifl_switch_broadcast_room on top: voq_cells >=
                             fc_on + rtt_slots + rifl_switch_broadcast_room */
} rifl_switch_config;

/* The switch of the paper "A Lightweight Routing Layer Using a Reliable
 * Link-Layer Protocol": 32 ports, iSLIP with 3 iterations, VOQs sized by the
 * 1.5-round-trip rule for an 18-slot round trip. */
RIFL_API extern const rifl_switch_config rifl_switch_default_config;

/* Cells of VOQ space the 1.5-round-trip rule asks for. */
RIFL_API unsigned rifl_switch_min_voq_cells(unsigned rtt_slots);
/* Cells of VOQ space a switch of `nports` ports that takes broadcast needs
 * on top of the ON threshold and the round trip: nports - 2, the slots the
 * last of the ONs a broadcast cell can raise at once waits behind the
 * others (0 below 2 ports). */
RIFL_API unsigned rifl_switch_broadcast_room(unsigned nports);

/* Check a configuration (fills in derived thresholds in *cfg).  Refuses
 * unsafe VOQ sizes with a message naming the rule and the fix. */
RIFL_API int rifl_switch_config_check(rifl_switch_config *cfg, char *err, size_t errlen);

typedef struct rifl_switch rifl_switch;

RIFL_API int rifl_switch_create(const rifl_switch_config *cfg, rifl_switch **out, char *err,
                                size_t errlen);
RIFL_API void rifl_switch_free(rifl_switch *sw);
/* The switch's configuration, derived thresholds filled in (NULL for a
 * NULL switch). */
RIFL_API const rifl_switch_config *rifl_switch_get_config(const rifl_switch *sw);

/* What happened to a cell offered to an input. */
typedef enum rifl_switch_verdict {
    RIFL_SW_STORED = 0,     /* stored in one VOQ (or every copy of a broadcast) */
    RIFL_SW_DROP_MISROUTED, /* remain hops == 0 */
    RIFL_SW_DROP_INVALID,   /* bad dst port or hop counts, or a broadcast
                               cell on a switch without `broadcast` */
    RIFL_SW_DROP_OVERFLOW   /* VOQ full (flow control ignored or undersized) */
} rifl_switch_verdict;

/* A cell arrives at input `port` in cell slot `now` (at most one per input
 * per slot).  Applies the forwarding rule and stores the cell.  Returns a
 * verdict (>= 0) or RIFL_ERR_INVALID_ARG for a bad port. */
RIFL_API int rifl_switch_input(rifl_switch *sw, unsigned port, const rifl_cell *cell,
                               uint64_t now);
/* The cells arriving at every input in cell slot `now`: cells[p] arrives at
 * input p for each p with valid[p] != 0 (nports entries each), as if by
 * rifl_switch_input in port order.  Returns RIFL_OK, or RIFL_ERR_INVALID_ARG
 * for a NULL argument. */
RIFL_API int rifl_switch_input_row(rifl_switch *sw, const rifl_cell *cells,
                                   const uint8_t *valid, uint64_t now);

/* Cell slot `now` of scheduling and switching.  `out[o]` receives the cell leaving
 * output o (header already updated) and out_valid[o] = 1; fc[i] receives the
 * flow-control frame input i sends upstream this slot and fc_valid[i] = 1.
 * Arrays have nports entries; fc/fc_valid may be NULL.  Returns the number of
 * cells switched, or RIFL_ERR_STATE for a slot already stepped (each slot
 * once, in order; slots may be left out when nothing happens);
 * RIFL_ERR_INVALID_ARG for a NULL argument or `now` = UINT64_MAX. */
RIFL_API int rifl_switch_step(rifl_switch *sw, uint64_t now, rifl_cell *out, uint8_t *out_valid,
                              rifl_l2_fc *fc, uint8_t *fc_valid);

/* Output `port` leads to input `in_port` of a downstream switch with
 * `nports` ports (not called: it leads to an endpoint).  Needed to apply
 * flow control received from that switch. */
RIFL_API int rifl_switch_set_downstream(rifl_switch *sw, unsigned port, unsigned nports,
                                        unsigned in_port);
/* A flow-control frame from downstream arrived on output `port`.  A notice
 * naming a queue beyond the downstream switch's ports (set_downstream) is
 * ignored and counted (fc_bad_queue), and the call returns RIFL_ERR_FRAME
 * after applying the frame's other notice. */
RIFL_API int rifl_switch_fc_receive(rifl_switch *sw, unsigned port, const rifl_l2_fc *fc);

/* Hold output `port` (true) or let it go again: a held output is left out
 * of scheduling, its cells wait in their VOQs.  For a caller whose output
 * link cannot take a cell now (its lane's queue is full or paused). */
RIFL_API int rifl_switch_hold_output(rifl_switch *sw, unsigned port, bool hold);

/* Credit flow control: the virtual lanes (bit v for VL v) without credit
 * for one more cell on output `port`'s link.  A VOQ whose head cell is on
 * such a VL is left out of scheduling; the other VOQs of the output go on.
 * The caller charges the credit of each cell the output sends. */
RIFL_API int rifl_switch_block_vls(rifl_switch *sw, unsigned port, uint32_t mask);

/* Cells in VOQ (in, out); 0 for a NULL switch or a port that does not
 * exist. */
RIFL_API unsigned rifl_switch_voq_len(const rifl_switch *sw, unsigned in, unsigned out);
/* Cells stored in the whole switch (0 for a NULL switch). */
RIFL_API uint64_t rifl_switch_cells_held(const rifl_switch *sw);

typedef struct rifl_switch_stats {
    uint64_t slots;              /* rifl_switch_step calls */
    uint64_t cells_in;           /* cells offered to inputs */
    uint64_t cells_stored;       /* VOQ insertions (broadcast copies count) */
    uint64_t cells_out;          /* cells switched */
    uint64_t broadcasts;         /* broadcast cells accepted */
    uint64_t drop_misrouted;
    uint64_t drop_invalid;
    uint64_t drop_overflow;
    uint64_t fabric_collisions;  /* cells the Batcher-Banyan model found colliding */
    uint64_t fabric_checks;      /* slots checked by the fabric model (those
                                    with cells through the fabric) */
    uint64_t fc_frames_sent;     /* frames sent upstream */
    uint64_t fc_on_sent;
    uint64_t fc_off_sent;
    uint64_t fc_on_received;     /* from downstream */
    uint64_t fc_off_received;
    uint64_t fc_blocked_requests;/* VOQ heads held back by downstream flow control */
    uint64_t credit_blocked_requests; /* VOQ heads held back: no credit on their VL */
    uint64_t held_outputs;       /* slots x outputs with cells left out while held */
    uint64_t max_voq_cells;      /* highest VOQ occupancy seen */
    uint64_t occupancy_sum;      /* sum over slots of cells held */
    uint64_t islip_matches_iter[4]; /* matches made in iterations 1, 2, 3, 4+ */
    uint64_t slot_errors;        /* steps refused: a slot stepped again or earlier */
    uint64_t fc_bad_queue;       /* flow-control notices from downstream naming a
                                    queue its switch does not have: ignored */
} rifl_switch_stats;

RIFL_API void rifl_switch_get_stats(const rifl_switch *sw, rifl_switch_stats *st);
/* Every counter of rifl_switch_stats, named and explained (rifl/counter.h). */
RIFL_API const rifl_counter *rifl_switch_counters(size_t *count);

/* ---- building blocks, exposed for tests and tools ------------------------ */

/* iSLIP on its own: N ports, request bitsets in, matching out. */
typedef struct rifl_islip rifl_islip;
RIFL_API int rifl_islip_create(unsigned nports, unsigned iterations, rifl_islip **out);
RIFL_API void rifl_islip_free(rifl_islip *s);
/* Set/clear the request of input i for output o (RIFL_ERR_INVALID_ARG
 * when either is not a port). */
RIFL_API int rifl_islip_request(rifl_islip *s, unsigned i, unsigned o, bool on);
RIFL_API void rifl_islip_clear_requests(rifl_islip *s);
/* Load all requests at once: req = n rows of ceil(n/64) words (bit o of row
 * i = input i requests output o), reqT = its transpose.  Does nothing when
 * any argument is NULL (the requests stay as they were). */
RIFL_API void rifl_islip_load(rifl_islip *s, const uint64_t *req, const uint64_t *reqT);
/* Run one slot: match[i] = output matched to input i or -1.  Returns the
 * number of matches; iter_matches (may be NULL, >= iterations entries)
 * receives matches per iteration. */
RIFL_API unsigned rifl_islip_run(rifl_islip *s, int16_t *match, unsigned *iter_matches);
/* An output's grant pointer, an input's accept pointer (UINT_MAX for a
 * port that does not exist). */
RIFL_API unsigned rifl_islip_grant_ptr(const rifl_islip *s, unsigned o);
RIFL_API unsigned rifl_islip_accept_ptr(const rifl_islip *s, unsigned i);

/* Batcher-Banyan fabric model. */
typedef struct rifl_fabric rifl_fabric;
RIFL_API int rifl_fabric_create(unsigned nports, rifl_fabric **out);
RIFL_API void rifl_fabric_free(rifl_fabric *f);
/* dest[i] = output wanted by input i, or -1.  Sorts the cells through the
 * bitonic network and routes them through the banyan; at_output[o] = input
 * whose cell reached output o, or -1.  Returns the number of collisions
 * inside the banyan (0 exactly when the destinations are unique).  With
 * `sort` false the banyan gets the cells unsorted (for demonstrations). */
RIFL_API unsigned rifl_fabric_route(rifl_fabric *f, const int16_t *dest, int16_t *at_output,
                                    bool sort);
/* The check of every slot's matching: the result of
 * rifl_fabric_route(f, dest, at_output, true), found without routing when
 * the destinations are distinct (a sorted set of distinct destinations
 * never collides in the banyan, so every cell reaches its output) and by
 * the full model otherwise.  (The switch looks for a repeated output while
 * it dequeues and calls this only for a matching with one.)  Both return
 * 0 and write nothing when any pointer argument is NULL. */
RIFL_API unsigned rifl_fabric_check(rifl_fabric *f, const int16_t *dest, int16_t *at_output);

#ifdef __cplusplus
}
#endif
#endif

/* rifl: channel bonding (docs/multilane.md; lane rules rifl-multilane §4):
 * L lanes carrying one packet stream.
 *
 * The lanes are numbered in transceiver order and grouped: groups of S
 * lanes, G = L / S groups (S = L: spatial only; S = 1: temporal only).  A
 * packet's bytes are cut into narrow words of S x P/8 bytes, each packet
 * starting a new one.  Narrow word n, counted over the whole stream since
 * reset, goes to group n mod G; within the group its segment k (P/8 bytes)
 * goes to lane S - 1 - k, all in one slot.  In a packet's last word the lane
 * holding the last byte ends the packet (META 11, or 10 with the byte count)
 * and the lanes below it get nothing.  The receiver takes words from the
 * groups in the same order.
 *
 * The bond is sans-I/O like the lane: it owns L lane engines (reach them
 * with rifl_bond_lane to drive their PHYs and read their counters) and, in
 * each slot, places the words the groups can take now (rifl_bond_place)
 * before the caller runs the lanes' send sides.  It allocates only in
 * rifl_bond_create. */
#ifndef RIFL_BOND_H
#define RIFL_BOND_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/counter.h"
#include "rifl/error.h"
#include "rifl/lane.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIFL_BOND_MAX_LANES 16
/* Bytes of the send queue a packet takes besides its own: its length. */
#define RIFL_BOND_PACKET_OVERHEAD 4

typedef struct rifl_bond_config {
    rifl_lane_config lane;     /* every lane's */
    unsigned lanes;            /* L: 1, 2, 4, 8 or 16 */
    unsigned group_lanes;      /* S: a power of two up to L (0: L, spatial only) */
    size_t tx_queue_bytes;     /* packets waiting to be placed (0: 64 KiB) */
    bool lane_tags;            /* every lane tags its control frames with its
                                  number and L, and a group is up only while
                                  each lane's tags name the lane itself
                                  (rifl-multilane §5.1) */
} rifl_bond_config;

typedef struct rifl_bond_stats {
    uint64_t tx_packets;       /* packets accepted */
    uint64_t tx_bytes;
    uint64_t tx_rejected;      /* rifl_bond_send calls refused: queue full */
    uint64_t tx_words;         /* narrow words placed on the lanes */
    uint64_t tx_waits;         /* slots the group whose turn it was could not take its word */
    uint64_t rx_words;         /* narrow words taken from the lanes */
    uint64_t rx_packets;       /* packets read */
    uint64_t rx_bytes;
    uint64_t rx_bad_words;     /* words with a short segment that did not end a packet */
} rifl_bond_stats;

typedef struct rifl_bond rifl_bond;

RIFL_API int rifl_bond_create(const rifl_bond_config *cfg, rifl_bond **out, char *msg,
                              size_t msglen);
RIFL_API void rifl_bond_free(rifl_bond *bond);
RIFL_API unsigned rifl_bond_lanes(const rifl_bond *bond);
RIFL_API unsigned rifl_bond_group_lanes(const rifl_bond *bond);
/* Lane i, 0 .. L-1 in transceiver order. */
RIFL_API rifl_lane *rifl_bond_lane(rifl_bond *bond, unsigned i);

/* A packet of 1 .. rifl_bond_max_packet bytes, queued whole or refused
 * (RIFL_ERR_AGAIN while the queue lacks room, RIFL_ERR_TOO_BIG beyond the
 * queue). */
RIFL_API int rifl_bond_send(rifl_bond *bond, const void *pkt, size_t len);
RIFL_API size_t rifl_bond_max_packet(const rifl_bond *bond);
/* Count n sends refused for lack of room, as n calls of rifl_bond_send
 * with a packet that does not fit would (tx_rejected), without making
 * them: for a simulator whose user would have been refused in each of n
 * slots in which no word was placed. */
RIFL_API int rifl_bond_count_refused(rifl_bond *bond, uint64_t n);
/* Bytes of a packet the queue can take right now (0: none). */
RIFL_API size_t rifl_bond_send_space(const rifl_bond *bond);
/* Bytes queued and not yet placed on the lanes. */
RIFL_API size_t rifl_bond_tx_backlog(const rifl_bond *bond);
/* Before the lanes send in a slot: the narrow words whose groups can take
 * them now go onto their lanes, in order, at most one per group; the first
 * that cannot go waits, and so do all after it.  Returns the words placed. */
RIFL_API unsigned rifl_bond_place(rifl_bond *bond);
/* Received bytes in order, as rifl_lane_read: up to `cap` bytes, `eop` set
 * when they end a packet (the next call starts the next packet);
 * RIFL_ERR_AGAIN when no word is complete. */
RIFL_API int rifl_bond_read(rifl_bond *bond, void *buf, size_t cap, size_t *len, int *eop);

/* The aligner of lane i's receive side (rifl/serial.h): the lane is told,
 * and the send sides of its group see their group up only while every lane
 * of the group is up (rifl-multilane §4.3).  From the first report on the
 * lane follows its aligner only (it no longer locks by itself), whatever
 * that report says.  With `hold`, every lane's send side is held at
 * power-up until all L lanes have been aligned once; RIFL_ERR_STATE, with
 * no lane changed, once a lane has begun sending. */
RIFL_API void rifl_bond_rx_state(rifl_bond *bond, unsigned i, bool aligned, bool up);
RIFL_API int rifl_bond_hold(rifl_bond *bond);

RIFL_API const rifl_bond_stats *rifl_bond_get_stats(const rifl_bond *bond);
RIFL_API const rifl_counter *rifl_bond_counters(size_t *count);

/* ---- accelerator (for simulators) --------------------------------------
 *
 * A simulator that carries a bonded end's lanes through a steady stretch
 * with the lanes' accelerator (rifl_lane_advance in rifl/lane.h) works out
 * what the bond did in it (every word placed in turn, every word taken as
 * its frames arrived, everything read) and hands the bond the counts and
 * the transmit queue as it is afterwards. */

/* True when no word is partly read: a stretch may start. */
RIFL_API bool rifl_bond_steady(const rifl_bond *bond);

typedef struct rifl_bond_stretch {
    uint64_t tx_words;                          /* words placed */
    uint64_t tx_packets, tx_bytes, tx_rejected; /* the sending user's calls */
    uint64_t rx_words, rx_packets, rx_bytes;    /* words taken, what was read */
    /* the transmit queue afterwards: `queued` packets, of which the first
     * (the head) has head_off bytes placed; packet(ctx, k, ...) gives the
     * k-th one's bytes (valid until the next call); 0 or -1 when unknown */
    size_t queued, head_off;
    int (*packet)(void *ctx, size_t k, const uint8_t **bytes, size_t *len);
    void *ctx;
} rifl_bond_stretch;

/* RIFL_ERR_STATE when the bond is not steady, the queue does not fit or a
 * packet is unknown (the bond is then left with an empty queue). */
RIFL_API int rifl_bond_advance(rifl_bond *bond, const rifl_bond_stretch *s);

#ifdef __cplusplus
}
#endif
#endif

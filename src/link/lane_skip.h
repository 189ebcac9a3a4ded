/* Private fast-forward interface of the lane engine, for simulators that
 * advance long error-free stretches in bulk (src/sim/linksim.c).  Not part of
 * the API: the caller must establish, slot by slot, everything the
 * functions below assume. */
#ifndef RIFL_LANE_SKIP_H
#define RIFL_LANE_SKIP_H

#include <stdbool.h>
#include <stdint.h>

#include "rifl/lane.h"

/* True when the lane is in steady NORMAL operation both ways: up, no flags,
 * no replay, no error wait, no pause slots owed, flow control OFF both ways
 * with an empty receive buffer, no extension frames, receiver in step
 * (expecting exactly the next new frame).  In that state every slot sends one
 * new frame and every good in-sequence data frame received is delivered. */
bool rifl_lane_skip_steady(const rifl_lane *l);

unsigned rifl_lane_skip_fid(const rifl_lane *l);   /* next ID to send */
unsigned rifl_lane_skip_rfid(const rifl_lane *l);  /* next ID expected */
unsigned rifl_lane_skip_kmask(const rifl_lane *l);

/* Record (META byte + payload) of the replay-buffer entry `id`. */
uint8_t *rifl_lane_skip_replay(rifl_lane *l, unsigned id);

/* Build the transmit-queue record number `k` of a packet exactly as
 * rifl_lane_send would. */
void rifl_lane_skip_make_record(const rifl_lane *l, const uint8_t *pkt, size_t len,
                                size_t k, uint8_t *rec);
/* A filler record. */
void rifl_lane_skip_filler_record(const rifl_lane *l, uint8_t *rec);

/* Empty the transmit queue / append one record to it. */
void rifl_lane_skip_txq_clear(rifl_lane *l);
uint8_t *rifl_lane_skip_txq_push(rifl_lane *l);

/* Encode replay-buffer entry `id` as a data frame with the lane's scrambler. */
void rifl_lane_skip_encode(rifl_lane *l, unsigned id, uint8_t *wire);
/* The same frame by content (rifl_lane_tx_frame). */
void rifl_lane_skip_frame(rifl_lane *l, unsigned id, rifl_lane_frame *f);
uint64_t rifl_lane_skip_scrambler(const rifl_lane *l);
void rifl_lane_skip_set_descrambler(rifl_lane *l, uint64_t state);

/* What happened in `slots` skipped slots. */
typedef struct rifl_lane_skip_counts {
    uint64_t slots;
    uint64_t data_sent, fill_sent;       /* new frames sent */
    uint64_t data_recv, fill_recv;       /* frames received and delivered */
    uint64_t tx_packets, tx_bytes, tx_rejected; /* user send side */
    uint64_t rx_packets, rx_bytes;       /* user read side */
} rifl_lane_skip_counts;

/* Advance frame IDs, receiver window and every counter. */
void rifl_lane_skip_advance(rifl_lane *l, const rifl_lane_skip_counts *c);

#endif

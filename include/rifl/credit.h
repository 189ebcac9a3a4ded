/* rifl: credit-based link-level flow control with virtual lanes, in the
 * InfiniBand style (docs/credit-flow-control.md).
 *
 * Four parts, each usable alone:
 *
 *   1. Register arithmetic for one data virtual lane (VL): the sender's FCTBS
 *      and credit limit CL, the receiver's ABR, Free Space Count and FCCL.
 *      All are 12-bit registers counting 64-byte blocks modulo 4096.  A
 *      packet of NP blocks may go when (CL - (FCTBS + NP)) mod 4096 <= 2048.
 *   2. The 8-byte Flow Control Packet (FCP) codec with its LPCRC.
 *   3. A VL arbiter: high- and low-priority weighted tables plus a limit on
 *      high-priority traffic; VL15 (management) always first, never credit
 *      checked.
 *   4. rifl_credit: one port's flow-control engine (all VLs, FCP timers,
 *      link state, transmit descriptor queues, the arbiter).
 *
 * Everything is sans-I/O: no clock reads, no I/O, no globals.  Time enters as
 * symbol times (one symbol time = the time to send one byte) passed by the
 * caller.  rifl_credit allocates only in rifl_credit_create(); the other
 * parts work on caller-owned structs and never allocate. */
#ifndef RIFL_CREDIT_H
#define RIFL_CREDIT_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- constants ----------------------------------------------------------- */

#define RIFL_FC_BLOCK_BYTES 64u        /* one flow-control block (FCB) */
#define RIFL_FC_REG_MOD 4096u          /* registers are 12 bits wide */
#define RIFL_FC_REG_MASK 0xFFFu
#define RIFL_FC_CREDIT_CAP 2048u       /* most credit ever advertised */
#define RIFL_FC_MAX_DATA_VLS 15u       /* VL0..VL14 */
#define RIFL_FC_VL15 15u               /* management VL: no flow control */
#define RIFL_FC_NUM_VLS 16u
#define RIFL_FC_FCP_BYTES 8u
#define RIFL_FC_FCP_MAX_PERIOD 65536u  /* symbol times between FCPs per VL */

/* ---- 1. register arithmetic ---------------------------------------------- */

/* Blocks a packet of `bytes` occupies: bytes / 64 rounded up. */
static inline uint32_t rifl_fc_blocks(uint64_t bytes)
{
    return (uint32_t)((bytes + RIFL_FC_BLOCK_BYTES - 1) / RIFL_FC_BLOCK_BYTES);
}

/* (a - b) mod 4096 on 12-bit registers. */
static inline uint16_t rifl_fc_sub(uint32_t a, uint32_t b)
{
    return (uint16_t)((a - b) & RIFL_FC_REG_MASK);
}

/* The same difference computed as the text's worked example does it:
 * a + (ones' complement of b) + 1, all in 12 bits. */
RIFL_API uint16_t rifl_fc_sub_ones_complement(uint16_t a, uint16_t b);

/* The credit check: may a packet of `np` blocks go with credit limit `cl`
 * and `fctbs` blocks already sent?  True when (CL - CR) mod 4096 <= 2048,
 * CR = (FCTBS + NP) mod 4096.  Exact for 1 <= np <= 2047 (np = 2048 with no
 * credit also gives 2048); rifl_fc_tx_may_send() refuses np >= 2048. */
static inline bool rifl_fc_may_send(uint16_t cl, uint16_t fctbs, uint32_t np)
{
    return rifl_fc_sub(cl, (uint32_t)fctbs + np) <= RIFL_FC_CREDIT_CAP;
}

/* Sender registers of one data VL. */
typedef struct rifl_fc_tx {
    uint16_t fctbs;   /* Flow Control Total Blocks Sent, mod 4096 */
    uint16_t cl;      /* Credit Limit: last FCCL received */
} rifl_fc_tx;

RIFL_API void rifl_fc_tx_reset(rifl_fc_tx *tx);
/* Credit check for a packet of `blocks` blocks (always false for 2048 or
 * more: the largest packet is 2047 blocks, 131008 bytes). */
RIFL_API bool rifl_fc_tx_may_send(const rifl_fc_tx *tx, uint32_t blocks);
/* Record a packet sent: FCTBS += blocks.  RIFL_ERR_AGAIN (nothing changes)
 * when the credit check fails. */
RIFL_API int rifl_fc_tx_sent(rifl_fc_tx *tx, uint32_t blocks);
/* Apply the FCCL of a received FCP: CL = fccl. */
RIFL_API void rifl_fc_tx_set_limit(rifl_fc_tx *tx, uint16_t fccl);
/* Blocks the sender may still send: (CL - FCTBS) mod 4096 when that is at
 * most 2048, else 0 (CL behind FCTBS never happens on a correct link). */
RIFL_API uint32_t rifl_fc_tx_credit(const rifl_fc_tx *tx);

/* Receiver registers of one data VL.  Space is allocated in chunks of
 * `chunk_blocks` blocks (1 = block granular); a packet of n blocks takes
 * ceil(n / chunk_blocks) chunks.  Because a 1-block packet may take a whole
 * chunk, the space the receiver can guarantee for any mix of packets is one
 * block per free chunk, and that worst case is what it advertises. */
typedef struct rifl_fc_rx {
    uint16_t abr;            /* Adjusted Blocks Received, mod 4096 */
    uint32_t chunk_blocks;   /* allocation unit in blocks (>= 1) */
    uint32_t capacity;       /* buffer size in chunks (<= 4095) */
    uint32_t free_chunks;    /* Free Space Count, in chunks */
    uint64_t accepted, accepted_blocks; /* packets/blocks taken in */
    uint64_t released, released_blocks; /* packets/blocks handed up */
    uint64_t overflow;       /* packets dropped: no room (sender broke the
                                credit rule) */
    uint64_t resyncs;        /* FCTBS updates that changed ABR */
    uint64_t resync_blocks;  /* blocks ABR moved by those updates */
} rifl_fc_rx;

/* Set up an empty receiver of `buffer_bytes` bytes allocated in chunks of
 * `chunk_bytes` (a multiple of 64; 64 = block granular).  Refuses sizes that
 * do not fit the 12-bit Free Space Count, with a message. */
RIFL_API int rifl_fc_rx_init(rifl_fc_rx *rx, uint64_t buffer_bytes, uint32_t chunk_bytes,
                             char *msg, size_t msglen);
/* Chunks a packet of `blocks` blocks takes (UINT32_MAX for a receiver
 * never set up). */
RIFL_API uint32_t rifl_fc_rx_chunks(const rifl_fc_rx *rx, uint32_t blocks);
/* Blocks the receiver can take from any mix of packets without discard. */
RIFL_API uint32_t rifl_fc_rx_space(const rifl_fc_rx *rx);
/* FCCL = ABR + min(space, 2048), mod 4096. */
RIFL_API uint16_t rifl_fc_rx_fccl(const rifl_fc_rx *rx);
/* A data packet of `blocks` blocks arrived: store it (ABR += blocks, space
 * shrinks) and return RIFL_OK, or drop and count it (RIFL_ERR_AGAIN) when it
 * does not fit or is 0 or 2048 blocks and more (no credit covers those). */
RIFL_API int rifl_fc_rx_accept(rifl_fc_rx *rx, uint32_t blocks);
/* A stored packet of `blocks` blocks was handed to the upper layer.
 * RIFL_ERR_INVALID_ARG when that frees more than is held, or for a size
 * accept would refuse. */
RIFL_API int rifl_fc_rx_release(rifl_fc_rx *rx, uint32_t blocks);
/* FCTBS from the sender: ABR = fctbs (counted when it changes ABR). */
RIFL_API void rifl_fc_rx_resync(rifl_fc_rx *rx, uint16_t fctbs);

/* ---- 2. Flow Control Packet ---------------------------------------------- */

/* Wire format (8 bytes, most significant bit of byte 0 sent first):
 *
 *   byte 0..3: Op (4) | FCTBS (12) | VL (4) | FCCL (12)   big-endian word
 *   byte 4..5: LPCRC, big-endian
 *   byte 6..7: reserved, sent 0, ignored on receive
 *
 * LPCRC: CRC-16, polynomial 0x100B (x^16 + x^12 + x^3 + x + 1), initial
 * value 0xFFFF, over bytes 0..3 taken most significant bit first, no
 * reflection, no final XOR. */
enum {
    RIFL_FCP_OP_NORMAL = 0,
    RIFL_FCP_OP_INIT = 1
};

typedef struct rifl_fcp {
    uint8_t op;      /* 4 bits */
    uint16_t fctbs;  /* 12 bits */
    uint8_t vl;      /* 4 bits */
    uint16_t fccl;   /* 12 bits */
} rifl_fcp;

typedef enum rifl_fcp_status {
    RIFL_FCP_GOOD = 0,
    RIFL_FCP_SHORT,     /* fewer than 8 bytes */
    RIFL_FCP_BAD_CRC,   /* LPCRC mismatch */
    RIFL_FCP_BAD_OP,    /* reserved operand (2..15) */
    RIFL_FCP_STATUS_COUNT
} rifl_fcp_status;

RIFL_API const char *rifl_fcp_status_name(rifl_fcp_status s);

/* CRC-16 of the LPCRC over n bytes. */
RIFL_API uint16_t rifl_fcp_crc16(const uint8_t *p, size_t n);
/* Encode (fields are masked to their widths). */
RIFL_API void rifl_fcp_encode(const rifl_fcp *f, uint8_t out[RIFL_FC_FCP_BYTES]);
/* Decode and check.  Returns RIFL_OK, or RIFL_ERR_FRAME with *status saying
 * why the packet must be discarded.  `status` may be NULL. */
RIFL_API int rifl_fcp_decode(const uint8_t *in, size_t len, rifl_fcp *out,
                             rifl_fcp_status *status);

/* ---- 3. VL arbiter -------------------------------------------------------- */

#define RIFL_VLARB_MAX_ENTRIES 64u
#define RIFL_VLARB_UNLIMITED 255u  /* high_limit: no limit */

typedef struct rifl_vlarb_entry {
    uint8_t vl;      /* data VL 0..14 */
    uint8_t weight;  /* 64-byte units per turn; 0 = entry skipped */
} rifl_vlarb_entry;

typedef struct rifl_vlarb_config {
    rifl_vlarb_entry high[RIFL_VLARB_MAX_ENTRIES];
    unsigned n_high;
    rifl_vlarb_entry low[RIFL_VLARB_MAX_ENTRIES];
    unsigned n_low;
    /* High-priority bytes, in 4096-byte units, that may go while a
     * low-priority packet waits; 0 = one packet; 255 = unlimited. */
    unsigned high_limit;
} rifl_vlarb_config;

typedef struct rifl_vlarb {
    rifl_vlarb_config cfg;
    unsigned cur[2];        /* current entry, [0] = high, [1] = low */
    int32_t left[2];        /* weight left in the current entry, in blocks */
    int32_t debt[2][RIFL_VLARB_MAX_ENTRIES]; /* overrun owed by each entry */
    uint64_t high_bytes;    /* high-priority bytes sent while a low-priority
                               packet waited, since the last low one */
    uint64_t picks[RIFL_FC_NUM_VLS];
    uint64_t bytes[RIFL_FC_NUM_VLS];
    uint64_t high_limit_yields; /* low packets sent because the limit hit */
} rifl_vlarb;

/* Parse "vl:weight,vl:weight,..." (e.g. "0:32,1:16").  An empty string (or
 * NULL) = no entries.  `out` and `n` are required (RIFL_ERR_INVALID_ARG);
 * `out` holds RIFL_VLARB_MAX_ENTRIES entries, and a longer table is refused
 * (RIFL_ERR_PARSE, as is a VL above 14 or a weight above 255).  *n is set
 * only on success; after an error `out` may hold some entries. */
RIFL_API int rifl_vlarb_parse_table(const char *s, rifl_vlarb_entry *out, unsigned *n,
                                    char *msg, size_t msglen);
/* Default: every data VL 0..n_vls-1 in the low table with weight 16. */
RIFL_API void rifl_vlarb_default_config(rifl_vlarb_config *cfg, unsigned n_vls);
/* Check and load a configuration for `n_vls` data VLs. */
RIFL_API int rifl_vlarb_init(rifl_vlarb *arb, const rifl_vlarb_config *cfg, unsigned n_vls,
                             char *msg, size_t msglen);
/* Pick the VL whose head packet goes next.  head_bytes[vl] = size of the
 * packet at the head of VL vl's queue (0 = empty); sendable = bit vl set
 * when that packet has the credit to go.  VL15 (head_bytes[15] > 0) always
 * wins and needs no credit.  The pick is committed (weights and limit are
 * charged).  Returns the VL, or RIFL_ERR_AGAIN when nothing may go. */
RIFL_API int rifl_vlarb_pick(rifl_vlarb *arb, const uint32_t head_bytes[RIFL_FC_NUM_VLS],
                             uint32_t sendable);

/* ---- 4. one port's engine ------------------------------------------------- */

typedef enum rifl_fc_link_state {
    RIFL_FC_LINK_INIT = 0,  /* LinkInitialize: FCPs with Op 1; only VL15 */
    RIFL_FC_LINK_ARM,       /* LinkArm: FCPs with Op 0; data received, not sent */
    RIFL_FC_LINK_ACTIVE     /* LinkActive: FCPs with Op 0; data both ways */
} rifl_fc_link_state;

RIFL_API const char *rifl_fc_link_state_name(rifl_fc_link_state s);

typedef struct rifl_credit_config {
    unsigned data_vls;            /* 1..15 */
    uint64_t rx_buffer_bytes;     /* receive buffer per data VL */
    uint64_t vl_buffer_bytes[RIFL_FC_MAX_DATA_VLS]; /* per-VL override, 0 = above */
    uint32_t chunk_bytes;         /* receive allocation unit, multiple of 64 */
    uint32_t fcp_period;          /* symbol times between FCPs of one VL,
                                     1..65536 */
    uint32_t fcp_min_gap;         /* least symbol times between two credit-
                                     return FCPs of one VL (0 = at once) */
    uint32_t tx_queue_packets;    /* descriptors queued per VL */
    uint32_t max_packet_bytes;    /* largest packet accepted for sending,
                                     at most 2047 blocks (131008 bytes) */
    unsigned vl15_rx_packets;     /* VL15 receive buffer, in packets (>= 1) */
    bool auto_activate;           /* INIT -> ARM once every data VL has heard
                                     an FCP and sent one (of Op 1); ARM ->
                                     ACTIVE once the peer sends Op 0.  (With
                                     or without it, an active end that
                                     receives Op 1, a peer that started
                                     again, goes back to INIT.) */
    rifl_vlarb_config arb;        /* n_high + n_low == 0: default table */
} rifl_credit_config;

/* 4 data VLs of 32 KiB, block-granular, FCP every 4096 symbol times, 64
 * descriptors per VL, 4 KiB packets, 4 VL15 buffers, auto activation. */
RIFL_API extern const rifl_credit_config rifl_credit_default_config;
/* The same as an initializer, for configurations that hold one. */
#define RIFL_CREDIT_DEFAULTS                                                  \
    {                                                                         \
        .data_vls = 4,                                                        \
        .rx_buffer_bytes = 32768,                                             \
        .chunk_bytes = 64,                                                    \
        .fcp_period = 4096,                                                   \
        .fcp_min_gap = 0,                                                     \
        .tx_queue_packets = 64,                                               \
        .max_packet_bytes = 4096,                                             \
        .vl15_rx_packets = 4,                                                 \
        .auto_activate = true,                                                \
    }

RIFL_API int rifl_credit_config_check(const rifl_credit_config *cfg, char *msg, size_t msglen);

typedef struct rifl_credit rifl_credit;

RIFL_API int rifl_credit_create(const rifl_credit_config *cfg, rifl_credit **out, char *msg,
                                size_t msglen);
RIFL_API void rifl_credit_free(rifl_credit *c);

RIFL_API rifl_fc_link_state rifl_credit_state(const rifl_credit *c);
/* Move the link state (what a subnet manager does); going back to INIT
 * resets every register, as a link re-initialisation does. */
RIFL_API void rifl_credit_set_state(rifl_credit *c, rifl_fc_link_state s);

/* Queue a packet descriptor for VL `vl` (0..data_vls-1, or 15).  `tag` is
 * the caller's handle, returned when the packet is picked.  RIFL_ERR_AGAIN
 * when the VL's queue is full, RIFL_ERR_TOO_BIG above max_packet_bytes,
 * RIFL_ERR_INVALID_ARG for a bad VL or len 0. */
RIFL_API int rifl_credit_enqueue(rifl_credit *c, unsigned vl, uint32_t len, uint64_t tag);
/* Descriptors waiting on a VL. */
RIFL_API unsigned rifl_credit_queued(const rifl_credit *c, unsigned vl);

typedef enum rifl_credit_item_kind {
    RIFL_CREDIT_ITEM_FCP = 1,
    RIFL_CREDIT_ITEM_DATA = 2
} rifl_credit_item_kind;

typedef struct rifl_credit_item {
    rifl_credit_item_kind kind;
    uint8_t fcp[RIFL_FC_FCP_BYTES];  /* ITEM_FCP: the packet to send */
    unsigned vl;                     /* the VL concerned */
    uint32_t len;                    /* ITEM_DATA: packet bytes */
    uint64_t tag;                    /* ITEM_DATA: the caller's handle */
} rifl_credit_item;

/* The link is free at time `now`: what goes next?  FCPs that are due come
 * first, then the arbiter's choice among packets with credit.  Returns
 * RIFL_OK with *item filled (a data packet is charged to FCTBS and dequeued),
 * or RIFL_ERR_AGAIN when nothing may go now. */
RIFL_API int rifl_credit_poll(rifl_credit *c, uint64_t now, rifl_credit_item *item);
/* Only an FCP that is due, never a data packet: for a caller whose channel
 * is still busy with a packet but can send an FCP past it.  RIFL_OK with
 * *item filled, or RIFL_ERR_AGAIN when no FCP is due. */
RIFL_API int rifl_credit_poll_fcp(rifl_credit *c, uint64_t now, rifl_credit_item *item);
/* Earliest time > now at which an FCP falls due with no other input
 * (UINT64_MAX: none). */
RIFL_API uint64_t rifl_credit_next_due(const rifl_credit *c, uint64_t now);

/* An FCP arrived (len bytes).  Good FCPs update CL (from FCCL) and ABR (from
 * FCTBS) of their VL; the rest are counted and dropped (RIFL_ERR_FRAME). */
RIFL_API int rifl_credit_rx_fcp(rifl_credit *c, const uint8_t *fcp, size_t len, uint64_t now);
/* A good data packet of `len` bytes arrived on `vl`.  RIFL_OK: stored;
 * RIFL_ERR_AGAIN: dropped, no room (counted; VL15 may do this);
 * RIFL_ERR_STATE: dropped, link in INIT (counted). */
RIFL_API int rifl_credit_rx_data(rifl_credit *c, unsigned vl, uint32_t len);
/* A data packet failed its link check and was dropped (counted).  Its
 * blocks come back when the sender's next FCTBS resynchronises ABR. */
RIFL_API void rifl_credit_rx_corrupt(rifl_credit *c);
/* The upper layer took a stored packet of `len` bytes off `vl`: free its
 * space and schedule a credit-return FCP. */
RIFL_API int rifl_credit_rx_release(rifl_credit *c, unsigned vl, uint32_t len, uint64_t now);

/* Register views for one data VL. */
RIFL_API const rifl_fc_tx *rifl_credit_tx_regs(const rifl_credit *c, unsigned vl);
RIFL_API const rifl_fc_rx *rifl_credit_rx_regs(const rifl_credit *c, unsigned vl);

typedef struct rifl_credit_vl_stats {
    uint64_t tx_packets, tx_bytes, tx_blocks;
    uint64_t credit_waits;   /* polls where this VL's head lacked credit */
    uint64_t rx_packets, rx_bytes;
    uint64_t rx_drops;       /* packets dropped: no room */
    uint64_t fcp_tx, fcp_rx;
} rifl_credit_vl_stats;

typedef struct rifl_credit_stats {
    uint64_t fcp_tx;             /* FCPs sent */
    uint64_t fcp_tx_init;        /* ... of which with Op 1 */
    uint64_t fcp_tx_credit;      /* ... sent to return credit */
    uint64_t fcp_tx_periodic;    /* ... sent because the period ran out */
    uint64_t fcp_rx_good;
    uint64_t fcp_rx_drop[RIFL_FCP_STATUS_COUNT]; /* by reason */
    uint64_t fcp_rx_bad_vl;      /* good FCPs naming VL15 or an unused VL */
    uint64_t fcp_rx_bad_fccl;    /* FCPs whose FCCL lies outside FCTBS ..
                                    FCTBS + 2048 (impossible on a correct
                                    link): dropped */
    uint64_t fcp_rx_bad_fctbs;   /* FCPs of Op 1 whose FCTBS is not 0 (a
                                    peer initialising has sent no data):
                                    dropped */
    uint64_t peer_reinits;       /* FCPs of Op 1 on an active link: the peer
                                    re-initialised, and so did this end */
    uint64_t abr_resyncs;        /* FCTBS values that corrected ABR */
    uint64_t abr_resync_blocks;
    uint64_t rx_corrupt;         /* data packets failing their link check */
    uint64_t rx_not_ready;       /* data packets dropped in INIT state */
    uint64_t rx_overflow;        /* data-VL packets dropped, no room */
    uint64_t vl15_tx, vl15_rx, vl15_drops;
    uint64_t state_changes;
    rifl_credit_vl_stats vl[RIFL_FC_NUM_VLS];
} rifl_credit_stats;

RIFL_API const rifl_credit_stats *rifl_credit_get_stats(const rifl_credit *c);
RIFL_API const rifl_vlarb *rifl_credit_arbiter(const rifl_credit *c);
RIFL_API const rifl_credit_config *rifl_credit_get_config(const rifl_credit *c);

#ifdef __cplusplus
}
#endif
#endif

/* rifl: the RDMA engine (docs/rdma.md) with a verbs-like interface.
 *
 * One engine per node: it takes work requests (RDMA write, read, send to a
 * mailbox), cuts them into 16 KB blocks and 256-byte packets, packs the
 * packets into Layer 2 messages ("bundles"), and on the far side checks,
 * writes and acknowledges them block by block.  A block that is NACKed or
 * not answered in time is sent again whole (selective retransmission);
 * completions come out of a completion queue.
 *
 * Sans-I/O: the engine never reads a clock or moves a byte by itself.  Every
 * call takes `now` in nanoseconds (any origin, never decreasing); messages
 * leave through rifl_rdma_output into the caller's buffer, with the node and
 * route they go to, and enter through rifl_rdma_input with the route they
 * came on; rifl_rdma_next_due says when rifl_rdma_advance must run for the
 * timers.  Memory is reached only through regions the caller registered.
 * All memory is allocated by rifl_rdma_open and rifl_rdma_reg_mr /
 * rifl_rdma_create_mailbox; nothing in the data path allocates.
 *
 * Completion statuses are the project's error codes: RIFL_OK, and for a
 * failed transfer RIFL_ERR_REMOTE_PROTECTION (the target refused it),
 * RIFL_ERR_RETRY_EXCEEDED (a block's 16 retries used up, or a retry held
 * up past the block's longest life, by a source page say),
 * RIFL_ERR_TIMEOUT (a read whose data never came) or
 * RIFL_ERR_PEER_RESTARTED (the target's engine restarted before the
 * transfer finished: rifl_rdma_forget_node). */
#ifndef RIFL_RDMA_H
#define RIFL_RDMA_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/counter.h"
#include "rifl/error.h"
#include "rifl/rdma_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIFL_RDMA_MAX_ROUTES 32      /* routes to one node */
#define RIFL_RDMA_PAGE 4096u         /* residency is per 4 KB page */
#define RIFL_RDMA_PERIPHERAL_BASE 0x38000000000ull
/* The VA of peripheral `i` (0: engine mailbox, 1: completion mailbox,
 * 2-127: user mailboxes). */
#define RIFL_RDMA_PERIPHERAL(i) (RIFL_RDMA_PERIPHERAL_BASE | ((uint64_t)(i) << 32))
#define RIFL_RDMA_MAILBOX_FIRST 2
#define RIFL_RDMA_MAILBOX_LAST 127

typedef struct rifl_rdma_config {
    uint32_t node;               /* this engine's node, 0..0x3FFFFE */
    rifl_rdma_mapping mapping;   /* how packets ride on Layer 2 (both ends the same) */
    unsigned bundle_packets;     /* N: packets in a full bundle, 1..255; 0: the
                                    mapping's (7, 1 for cells, 11 for compact) */
    unsigned stage_packets;      /* packets staged per route, N..255; 0: 2 N */
    unsigned max_nodes;          /* nodes in the route table, 1..65536 */
    unsigned max_regions;        /* registered regions at once */
    unsigned max_pds;            /* protection domains at once */
    unsigned max_mailboxes;      /* user mailboxes at once */
    unsigned cq_depth;           /* completions waiting to be polled */
    unsigned max_transfers;      /* transfers in flight at once, reads served included;
                                    posts leave the last sixteenth (at least one) to
                                    serving reads */
    unsigned blocks_per_node;    /* blocks in flight to one node (16) */
    unsigned transfers_per_pd;   /* write (and, apart, read) transfers per PD (32) */
    unsigned req_fifo;           /* engine mailbox: READ_REQs waiting (64) */
    uint64_t block_timeout_ns;   /* first timeout of a block (1 ms) */
    uint64_t block_timeout_max_ns; /* doubled per timeout up to this (8 ms) */
    uint64_t page_fault_retry_ns;  /* after a PAGE_FAULT NACK (20 us, doubled) */
    uint64_t no_context_retry_ns;  /* after a NO_CONTEXT NACK (10 us) */
    uint64_t context_idle_ns;    /* a receive context idle this long is free (16 ms) */
    uint64_t block_memory_ns;    /* a source's last block of each TID is remembered this
                                    long after its last packet (docs/rdma.md,
                                    "Forgetting"); 0: twice a block's longest life, 32 x
                                    the longest wait between its attempts (the largest of
                                    2 x block_timeout_max_ns, page_fault_retry_ns and
                                    no_context_retry_ns): 512 ms by default; else at least
                                    that */
    uint64_t read_timeout_ns;    /* a read whose data never comes fails (100 ms) */
    bool go_back_n;              /* on a NACK or timeout resend the block and every
                                    later block of its transfer already sent, as
                                    InfiniBand RC does (for comparison; off) */
} rifl_rdma_config;

/* node 0, the spec's bundles with the mapping's N (7) and 2 N staged, 256 nodes, 256 regions, 64 domains, 64
 * mailboxes, 4096 completions, 1024 transfers, and the limits and timers
 * of docs/rdma.md. */
RIFL_API extern const rifl_rdma_config rifl_rdma_default_config;

typedef struct rifl_rdma rifl_rdma;

/* RIFL_ERR_CONFIG with a message naming the setting and its range. */
RIFL_API int rifl_rdma_open(const rifl_rdma_config *cfg, rifl_rdma **out, char *msg,
                            size_t msglen);
RIFL_API void rifl_rdma_close(rifl_rdma *e);
RIFL_API uint32_t rifl_rdma_node(const rifl_rdma *e);

/* The route table: `node` is reached over `routes` (1..32) routes; path p
 * of a block takes route p mod routes.  The own node is a loopback (its
 * messages come out of rifl_rdma_output like any other).  Calling it again
 * changes the count.  RIFL_ERR_INVALID_ARG for a bad node or count,
 * RIFL_ERR_AGAIN when max_nodes are already known. */
RIFL_API int rifl_rdma_add_node(rifl_rdma *e, uint32_t node, unsigned routes);

/* ---- protection domains, memory, mailboxes ------------------------------------- */

/* Allocate protection domain `pdid` (its number is the remote capability:
 * a packet's pdid must match a region's).  RIFL_ERR_STATE if it exists,
 * RIFL_ERR_AGAIN when max_pds exist. */
RIFL_API int rifl_rdma_alloc_pd(rifl_rdma *e, uint16_t pdid);
/* RIFL_ERR_STATE while it has regions, mailboxes or transfers. */
RIFL_API int rifl_rdma_dealloc_pd(rifl_rdma *e, uint16_t pdid);

enum {
    RIFL_RDMA_LOCAL_WRITE = 1u,  /* reads may land here */
    RIFL_RDMA_REMOTE_WRITE = 2u, /* peers may write here (and read data lands here) */
    RIFL_RDMA_REMOTE_READ = 4u   /* peers may read from here */
};

/* A registered region: `len` bytes of the caller's memory at `addr`, seen
 * by peers at the engine-chosen `va` (4 KB aligned; regions never share a
 * page).  Every page starts resident. */
typedef struct rifl_rdma_mr {
    uint64_t va;
    size_t len;
    uint16_t pdid;
    unsigned access;
    unsigned handle;
} rifl_rdma_mr;

RIFL_API int rifl_rdma_reg_mr(rifl_rdma *e, uint16_t pdid, void *addr, size_t len,
                              unsigned access, rifl_rdma_mr *mr);
RIFL_API int rifl_rdma_dereg_mr(rifl_rdma *e, const rifl_rdma_mr *mr);

/* Page faults, simulated: a page not resident is never read or written;
 * a packet that needs it is NACKed (destination) or its block stops
 * (source) and the page is raised for service: rifl_rdma_poll_fault hands
 * it out once, and rifl_rdma_page_in makes it resident again (blocks that
 * waited on it go again).  rifl_rdma_set_resident with `resident` does the
 * same for a range of pages, the blocks going again at the next
 * rifl_rdma_advance. */
RIFL_API int rifl_rdma_set_resident(rifl_rdma *e, uint64_t va, size_t len, bool resident);
RIFL_API bool rifl_rdma_poll_fault(rifl_rdma *e, uint64_t *page_va);
RIFL_API int rifl_rdma_page_in(rifl_rdma *e, uint64_t page_va, uint64_t now);

/* User mailbox `index` (2..127) of `pdid`, holding up to `depth` messages
 * of up to 256 bytes (sends, and notification records aimed at it). */
RIFL_API int rifl_rdma_create_mailbox(rifl_rdma *e, uint16_t pdid, unsigned index,
                                      unsigned depth);

/* ---- work requests -------------------------------------------------------------- */

/* A notification the target node writes when a write's data has all
 * arrived: a 32-byte record (cookie, length | immediate, source | pdid |
 * tid, byte 31 = 1) at `target` (node | VA: memory registered to the same
 * domain for remote write, or a mailbox of it). */
typedef struct rifl_rdma_notification {
    uint64_t target;
    uint64_t cookie;
    uint32_t immediate;
} rifl_rdma_notification;

/* Write `len` bytes (1 .. 2^31) from local `src_va` (a region of `pdid`)
 * to `dst_node` at `dst_va`, on path `path` (the first block's; the next
 * take the next paths), with a notification when `notify` is not NULL.
 * Completes when every block is acknowledged.  RIFL_ERR_PROTECTION for a
 * local range outside a region of the domain, RIFL_ERR_UNREACHABLE for a
 * node without routes, RIFL_ERR_AGAIN when the domain has its transfers
 * in flight or the completion queue could overflow, RIFL_ERR_INVALID_ARG
 * otherwise (a destination that reaches the peripherals' window, a
 * notification to peripheral 0 or 1 or to another node among them). */
RIFL_API int rifl_rdma_post_write(rifl_rdma *e, uint16_t pdid, uint64_t src_va,
                                  uint32_t dst_node, uint64_t dst_va, uint64_t len,
                                  unsigned path, const rifl_rdma_notification *notify,
                                  uint64_t wr_id, uint64_t now);
/* Read `len` bytes from `src_node` at `src_va` into local `dst_va` (a
 * region of `pdid` with remote write: the data arrives as writes).
 * Completes when the data's notification reaches this node's completion
 * mailbox, or with RIFL_ERR_TIMEOUT after read_timeout_ns. */
RIFL_API int rifl_rdma_post_read(rifl_rdma *e, uint16_t pdid, uint64_t dst_va,
                                 uint32_t src_node, uint64_t src_va, uint64_t len,
                                 unsigned path, uint64_t wr_id, uint64_t now);
/* Send 1..256 bytes (copied now) to user mailbox `mailbox` of `pdid` at
 * `node`; with the cell mapping 1..224, what one cell holds. */
RIFL_API int rifl_rdma_post_send(rifl_rdma *e, uint16_t pdid, uint32_t node, unsigned mailbox,
                                 const void *buf, size_t len, uint64_t wr_id, uint64_t now);

typedef enum rifl_rdma_op {
    RIFL_RDMA_OP_WRITE = 1,
    RIFL_RDMA_OP_READ = 2,
    RIFL_RDMA_OP_SEND = 3
} rifl_rdma_op;

/* One work request of a chain (rifl_rdma_post_chain): the arguments of
 * rifl_rdma_post_write, _read or _send in one place. */
typedef struct rifl_rdma_wr {
    rifl_rdma_op op;          /* RIFL_RDMA_OP_WRITE, _READ or _SEND */
    uint16_t pdid;
    uint32_t node;            /* write, send: the destination; read: the data's node */
    uint64_t local_va;        /* write: the source; read: where the data lands */
    uint64_t remote_va;       /* write: the destination; read: the source */
    uint64_t len;
    unsigned path;            /* write, read */
    const rifl_rdma_notification *notify; /* write: NULL for none */
    unsigned mailbox;         /* send */
    const void *buf;          /* send: the bytes (copied at the post) */
    uint64_t wr_id;
} rifl_rdma_wr;

/* Post `n` work requests as one chain (the spec's double buffering: `DB`,
 * `chained`, `dependency_id`): their blocks are sent one after another,
 * the blocks of wr[0] in order, then those of wr[1], ...: each block is
 * held until the block before it has cut its last data packet for the
 * first time, then goes.  A retry of a block neither holds nor restarts
 * the blocks after it; a read chains its request (the data comes from the
 * far node on its own).  Completions are each request's own and may come
 * in any order; a transfer that fails leaves the chain and the others keep
 * their order (docs/rdma.md).  Requests are posted in order until one is
 * refused: returns RIFL_OK when all were posted, else the refused one's
 * status (what its rifl_rdma_post_* would return; RIFL_ERR_INVALID_ARG
 * also for NULL, n = 0 or an unknown op), those before it posted and
 * chained.  *posted (may be NULL) is how many were posted. */
RIFL_API int rifl_rdma_post_chain(rifl_rdma *e, const rifl_rdma_wr *wr, unsigned n,
                                  unsigned *posted, uint64_t now);

typedef struct rifl_rdma_wc {
    uint64_t wr_id;
    int status;               /* RIFL_OK or a RIFL_ERR_* (see above) */
    rifl_rdma_op op;
    uint64_t bytes;
    uint64_t posted, done;    /* `now` of the post and of the completion */
} rifl_rdma_wc;

/* Up to `max` completions, oldest first; returns how many. */
RIFL_API unsigned rifl_rdma_poll_cq(rifl_rdma *e, rifl_rdma_wc *wc, unsigned max);

/* The oldest message of a user mailbox: 1 with it copied (up to `cap`
 * bytes, *len its length, *src_node the sender), 0 when empty. */
RIFL_API int rifl_rdma_poll_mailbox(rifl_rdma *e, uint16_t pdid, unsigned index, void *buf,
                                    size_t cap, size_t *len, uint32_t *src_node);

/* ---- the wire side (sans-I/O) ------------------------------------------------------ */

/* Where a message goes, or came from: a node and one of its routes. */
typedef struct rifl_rdma_route {
    uint32_t node;
    unsigned route;
} rifl_rdma_route;

/* The next bundle to send, a whole Layer 2 message (prefix 0x02, count,
 * bytes, then the packets; with the cell mapping one packet alone) written
 * to `buf` (`cap` of at least RIFL_RDMA_BUNDLE_CAP bytes): returns its
 * length, or 0 when nothing may go.  A route with N packets staged sends a full bundle; with `idle`
 * (the caller's port has nothing queued) a route sends whatever it has.
 * Responses and notifications go first. */
#define RIFL_RDMA_BUNDLE_CAP (RIFL_RDMA_BUNDLE_PREFIX + 255 * RIFL_RDMA_MAX_PACKET)
RIFL_API size_t rifl_rdma_output(rifl_rdma *e, uint64_t now, bool idle, uint8_t *buf,
                                 size_t cap, rifl_rdma_route *to);
/* The same for one destination: the next bundle for `node`, its routes
 * taken in turn, with `idle` meaning the caller's queue toward that node is
 * empty.  For a port with a queue per destination (a NIC), which asks for
 * each destination it can take a bundle for, so that a destination that
 * is held never fills the port with its bundles. */
RIFL_API size_t rifl_rdma_output_to(rifl_rdma *e, uint64_t now, uint32_t node, bool idle,
                                    uint8_t *buf, size_t cap, rifl_rdma_route *to);
/* Packets staged and not yet in a bundle. */
RIFL_API unsigned rifl_rdma_staged(const rifl_rdma *e);

/* A message arrived from `from` (the node that sent it and the route its
 * answers take back).  Malformed bundles and packets are dropped and
 * counted, never fatal: RIFL_OK, or RIFL_ERR_INVALID_ARG for NULL. */
RIFL_API int rifl_rdma_input(rifl_rdma *e, uint64_t now, const uint8_t *msg, size_t len,
                             rifl_rdma_route from);

/* The engine of `node` is a new one: the node restarted (its process, its
 * engine), and its generations start again from the beginning.  This
 * engine forgets what it remembers of the old one's blocks (the last block
 * of each TID, and the receive contexts and NACKs of its blocks), so that
 * the new engine's blocks are never taken for the old one's (dropped as
 * stale, or as duplicates of completed blocks: ACKed and never
 * delivered), and for the next `quiet_ns` drops every packet from `node`
 * but responses, unanswered (counted in quiet_dropped): give the longest a
 * packet of the old engine may still be on its way here, 0 when none can
 * be (a link that dropped what it held when the node restarted, as
 * rifl_udplink's joint reset does).  The new engine's blocks dropped in
 * that time are sent again after their timeouts.  Call it only for a new
 * engine: forgetting a live one's blocks would let a retry of a completed
 * block be delivered again.  What this engine had for the old engine ends
 * too: its transfers to `node` (writes, sends, reads of its memory)
 * complete with RIFL_ERR_PEER_RESTARTED and the reads it serves for it
 * fail (restart_failed), its packets staged for `node` and the read
 * requests it has not served yet are dropped (restart_dropped)
 * (docs/rdma.md, "A node restarts").  RIFL_ERR_INVALID_ARG for a node not
 * in the route table. */
RIFL_API int rifl_rdma_forget_node(rifl_rdma *e, uint32_t node, uint64_t quiet_ns, uint64_t now);

/* When rifl_rdma_advance must next run (UINT64_MAX: no timer). */
RIFL_API uint64_t rifl_rdma_next_due(const rifl_rdma *e);
/* Run the timers due by `now`: timeouts, delayed retries, reads given up. */
RIFL_API void rifl_rdma_advance(rifl_rdma *e, uint64_t now);

/* Transfers posted and not completed. */
RIFL_API unsigned rifl_rdma_pending(const rifl_rdma *e);

/* ---- counters -------------------------------------------------------------------- */

typedef struct rifl_rdma_stats {
    uint64_t tx_packets, rx_packets, tx_bytes, bundles_tx, cells_tx;
    uint64_t blocks_sent, blocks_acked, retransmitted_blocks;
    uint64_t nacks_tx[RIFL_RDMA_STATUS_COUNT]; /* [0] unused: ACKs are acks_tx */
    uint64_t nacks_rx[RIFL_RDMA_STATUS_COUNT];
    uint64_t acks_tx, acks_rx;
    uint64_t timeouts, src_page_faults, dst_page_faults;
    uint64_t duplicates_dropped, stale_dropped, protection_violations;
    uint64_t hdr_edc_errors, ftr_crc_errors, bundle_errors, skipped_packets;
    uint64_t notifications_written, scheduler_reenqueues, responses_dropped;
    uint64_t stale_responses, read_requests_served, completions, failed_transfers;
    uint64_t mailbox_messages, chain_waits, nacks_coalesced, duplicates_remembered;
    uint64_t memory_expired, quiet_dropped, blocks_expired;
    uint64_t restart_failed, restart_dropped;
} rifl_rdma_stats;

RIFL_API const rifl_rdma_stats *rifl_rdma_get_stats(const rifl_rdma *e);
RIFL_API const rifl_counter *rifl_rdma_counters(size_t *count);
/* The spec's name of a status code (RIFL_OK: "OK", RIFL_ERR_INVALID_ARG:
 * "E_INVAL", ...). */
RIFL_API const char *rifl_rdma_strerror(int status);

#ifdef __cplusplus
}
#endif
#endif

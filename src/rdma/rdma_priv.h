/* The RDMA engine's private state, shared by its roles: engine.c (set-up,
 * memory, mailboxes, completions), transfer.c (work requests, blocks,
 * responses, timers), send.c (scheduler, packetizer, bundles) and recv.c
 * (the receiver). */
#ifndef RIFL_RDMA_PRIV_H
#define RIFL_RDMA_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "rifl/rdma.h"

#define TIDS RIFL_RDMA_TIDS
#define POOL_PACKETS 4096u       /* built packets waiting in the adapter */
#define POOL_PRIO_RESERVE 512u   /* of them, kept for responses and notifications:
                                    data is not staged into the last ones */
#define PRIO_SLOTS 32u           /* responses and notifications per route */
#define CTX_WAYS 16u
#define CTX_SETS 16u
#define FAULT_RING 256u
#define NO_PKT 0xFFFFu

/* ---- memory ------------------------------------------------------------------------ */

struct region {
    bool used;
    uint16_t pdid;
    unsigned access;
    uint64_t va;
    size_t len;
    uint8_t *mem;
    uint8_t *absent;   /* one byte per page: 1 not resident */
    uint8_t *raised;   /* one byte per page: fault raised and not yet served */
};

struct pd {
    bool used;
    uint16_t pdid;
    unsigned writes, reads, serves; /* transfers in flight */
    unsigned objects;               /* regions and mailboxes */
};

struct mailbox {
    bool used;
    uint16_t pdid;
    unsigned index, depth, head, count;
    uint8_t (*msg)[RIFL_RDMA_MAX_PAYLOAD];
    uint16_t *len;
    uint32_t *src;
};

/* ---- routes and the adapter's stages -------------------------------------------------- */

struct route_q {
    uint16_t *data;     /* stage_packets pool indexes, a ring */
    uint16_t prio[PRIO_SLOTS];
    unsigned dh, dn, ph, pn;
    bool listed;        /* in the engine's ring of routes with packets */
};

struct node {
    bool used;
    uint32_t node;
    unsigned routes;
    unsigned inflight;  /* blocks in flight to it */
    unsigned next_route;/* rifl_rdma_output_to: the route to look at first */
    uint16_t *done;     /* [TIDS]: the block of each of its TIDs seen here
                           last (DONE_* below), 0 for none */
    uint64_t *done_at;  /* [TIDS]: when a packet of that block last came */
    uint64_t quiet_until; /* its packets but responses are dropped before this
                           (rifl_rdma_forget_node) */
    uint16_t *sent;     /* [TIDS]: the generation of each TID's last block
                           issued to it (a TID's generations count its uses
                           towards one node) */
    struct route_q q[RIFL_RDMA_MAX_ROUTES];
};

/* A node's `done` entry: the generation of the TID's last block begun
 * here, whether it completed and, if so, the latest attempt of it ACKed.
 * It outlives the block's context, so that a packet of a completed block,
 * of any attempt, is not taken for a new block once the context has gone
 * to another (a retry whose ACK was lost is ACKed again, once per attempt;
 * an earlier attempt held up on its way is dropped), nor a packet of an
 * older block still on its way (the node's generations of a TID come in
 * order, `sent`). */
#define DONE_VALID 0x8000u
#define DONE_COMPLETE 0x4000u
#define DONE_BEGUN(gen) ((uint16_t)(DONE_VALID | (gen)))
#define DONE_ENTRY(gen, attempt)                                                                  \
    ((uint16_t)(DONE_VALID | DONE_COMPLETE | (unsigned)(attempt) << 10 | (gen)))
#define DONE_GEN(v) ((unsigned)(v) & 1023u)
#define DONE_ATTEMPT(v) ((unsigned)(v) >> 10 & 15u)

/* Forgetting.  A generation alone cannot tell a TID's next block from the
 * one 1024 uses later, nor an older block from one 512-1023 uses later: if
 * a source used a TID towards this node 512 times or more and none of
 * those blocks reached it (all lost, say, while a link was down), its next
 * block would look older than the one remembered and be dropped as stale
 * until its transfer failed, and at 1024 uses it would look like the
 * completed block (ACKed, never delivered).  So the memory of a block, its
 * `done` entry and its context, lasts M = block_memory_ns after the last
 * packet of that block came; after that it refuses nothing, and the TID's
 * next packet starts a new block.  With W the longest wait between two
 * attempts of a block (max(2 x block_timeout_max_ns, page_fault_retry_ns,
 * no_context_retry_ns): a timeout, or the wait after a NACK) and L = 16 W,
 * the sender cuts no packet of a block later than L after the block first
 * went whole (all its packets and its NOTIFY cut: only then can it
 * complete anywhere); a block held up longer (a source page not resident,
 * or a port holding its packets back that long) gives up instead
 * (blocks_expired).  M is
 * at least 2 L.  This is safe, no block delivered twice and none ACKed
 * without being delivered, provided (1) a packet reaches this node within
 * M - L of being cut (256 ms by default, against round trips of
 * microseconds) and (2) a source does not use one TID towards this node
 * 1024 times, none of them reaching it, within M.  A packet P that the
 * memory E of its TID would refuse is
 *  - of an older block: its source let that block go before it issued E's
 *    block, so P was cut before E's first packet, which came before E was
 *    last refreshed, and P comes within M - L of that;
 *  - or of E's own block, completed here: P was cut no later than L after
 *    the block first went whole, which was before it completed here, and
 *    every packet of the block refreshes E; P comes within L + (M - L) = M
 *    of the last packet of the block before it.
 * Either way E still holds when P comes.  And while E holds, (2) keeps a
 * new block of the TID from having E's generation, so it is never taken
 * for E's block (ACKed, never delivered).  Such a use ends only when its
 * transfer fails.  Where transfers fail by timeouts, each failure takes a
 * block that lived at least 100 ms by default (16 timeouts, or a read's
 * timeout) and ends at most one use of the TID, with at most
 * blocks_per_node (16) blocks in flight to the node: 1024 such uses take
 * at least 6.4 s at the defaults.  Transfers failing at once (a block
 * refused, or damaged 16 times) while another of their blocks is lost whole
 * each time could break (2); nothing else here guards that case, as
 * nothing did before the memory had a limit.  (With 512 to 1023 such uses
 * within M, the next block is dropped as stale until E lapses.)  A source whose engine restarts is
 * forgotten by rifl_rdma_forget_node. */

/* ---- transfers and blocks --------------------------------------------------------------- */

enum xf_kind { XF_FREE = 0, XF_WRITE, XF_READ, XF_SEND, XF_SERVE };

struct xfer {
    enum xf_kind kind;
    uint16_t pdid;
    uint64_t wr_id;
    uint64_t posted;
    int src_region;     /* where its source bytes are (writes, serves) */
    uint64_t src_va;
    uint32_t dst_node;
    uint64_t dst_va;
    uint64_t len;
    uint64_t issued;    /* bytes cut into blocks so far */
    unsigned blocks_total, blocks_acked, blocks_out;
    unsigned next_path;
    bool notify;
    rifl_rdma_notify nt;
    int status;         /* a failure waiting for its blocks to be let go */
    uint64_t deadline;  /* reads: when they fail */
    unsigned last_tid;  /* the block that carries the notification */
    bool request_acked; /* reads: the READ_REQ was accepted */
    uint32_t read_tag;  /* reads: the immediate of its READ_REQ, which its
                           record echoes (rifl_rdma.read_serial) */
    unsigned next_issue;/* in the list of transfers with blocks to issue */
    bool issuing;
    /* chaining (rifl_rdma_post_chain): the transfers before and after it in
     * its chain (XF_NONE at the ends), and the last block it issued */
    bool chain;
    unsigned chain_prev, chain_next;
    bool has_tail;
    unsigned tail_tid, tail_use;
    /* sends and read requests: the single packet's payload */
    uint8_t inline_payload[RIFL_RDMA_MAX_PAYLOAD];
    unsigned inline_len;
};

enum blk_state {
    B_FREE = 0,
    B_ACTIVE,   /* in the scheduler: packets (or its NOTIFY) to cut */
    B_HOLD,     /* data sent; its NOTIFY waits for the transfer's other blocks */
    B_SENT,     /* all sent, waiting for its response (timer armed) */
    B_RETRY,    /* NACKed: re-initiated at `due` */
    B_PAGE,     /* stopped at a source page not resident */
    B_DB        /* double buffered: waits for the block before it in its chain
                   to cut its last data packet (never in the scheduler, no
                   timer) */
};

struct block {
    enum blk_state state;
    unsigned xf;        /* its transfer */
    unsigned type;      /* WRITE, READ_REQ */
    uint32_t dst_node;
    uint64_t dst_va;
    uint64_t src_va;
    uint32_t len;
    uint32_t off;       /* bytes cut so far in this attempt */
    unsigned pkt_n;     /* packets cut so far in this attempt */
    bool last_block;    /* of its transfer */
    bool send_notify;
    bool notify_sent;   /* this attempt's NOTIFY went */
    unsigned gen, attempt, path;
    unsigned use;       /* the TID's use, for the engine's own references
                           (gen counts uses towards dst_node only) */
    unsigned timeouts, page_faults;
    uint64_t due;       /* B_SENT: timeout; B_RETRY: re-initiation */
    uint64_t wait_page; /* B_PAGE */
    int node_ix;
    unsigned k;         /* its place among the transfer's blocks */
    bool in_sched;      /* in the scheduler's ring */
    bool inline_data;   /* a send or read request: the transfer's own bytes */
    bool done;          /* every data packet cut once (the descriptor's `done`) */
    bool chained;       /* dep_tid (of use dep_use) waits in B_DB for it */
    unsigned dep_tid, dep_use; /* the descriptor's dependency_id, and its use */
    bool went_whole;    /* an attempt cut all its packets (and its NOTIFY) */
    uint64_t whole_at;  /* when the first one did: no packet is cut later
                           than life_ns after it ("Forgetting" above) */
};

/* ---- the receiver ----------------------------------------------------------------------- */

enum ctx_state { C_FREE = 0, C_ACTIVE, C_DONE };

struct ctx {
    uint8_t state;
    bool failed, have_notify, wants_notify;
    uint32_t src;
    uint16_t tid, gen, pdid;
    uint8_t attempt;
    int16_t acked_attempt;  /* -1: none */
    int16_t first, last;    /* packet indexes seen, -1 none */
    uint64_t bitmap;
    uint64_t last_time, done_time;
    uint8_t notify[RIFL_RDMA_NOTIFY_BYTES];
};

/* The last attempt of a set NACKed without a context (a miss with no way
 * to take, or a packet that failed decoding): its other packets are
 * dropped unanswered, so that an attempt gets one NACK, as one with a
 * context does through its failed mark. */
struct nack_memo {
    bool valid;
    uint8_t attempt;
    uint16_t tid, gen;
    uint32_t src;
};

struct read_req {
    rifl_rdma_read_req r;
    uint16_t pdid;
    unsigned path;
    uint32_t from;
};

/* ---- the engine ---------------------------------------------------------------------------- */

struct rifl_rdma {
    rifl_rdma_config cfg;
    rifl_rdma_stats st;
    uint32_t read_serial;     /* reads posted: each READ_REQ's immediate */

    struct node *nodes;       /* max_nodes, open addressing on the node number */
    unsigned node_slots;      /* a power of two, at least 2 max_nodes */
    unsigned nodes_used;
    uint16_t *stage_mem;
    uint16_t *done_mem;       /* max_nodes x 2 TIDS: each node's `done` and `sent` */
    uint64_t *done_at_mem;    /* max_nodes x TIDS: each node's `done_at` */
    uint64_t life_ns;         /* L: 16 x the longest wait between a block's attempts */
    uint64_t memory_ns;       /* M: block_memory_ns, or 2 L */

    struct region *regions;
    unsigned regions_hi;      /* regions at this index and above are unused */
    uint64_t next_va;
    struct pd *pds;
    struct mailbox *mailboxes;

    struct xfer *xf;
    unsigned n_xf;
    unsigned xf_free_head;    /* free list through next_issue */
    unsigned pending;         /* transfers not completed */
    unsigned issue_head;      /* transfers with blocks to issue, in post order */
    unsigned issue_tail;

    struct block blocks[TIDS];
    unsigned tid_use[TIDS];   /* each TID's uses: a block's `use` */
    uint16_t tid_free[TIDS];
    unsigned tf_head, tf_count;
    uint16_t sched[TIDS];     /* the scheduler's round robin */
    unsigned sh, sn;

    uint8_t (*pool)[RIFL_RDMA_MAX_PACKET];
    uint16_t *pool_len;
    uint16_t *pool_free;
    unsigned pool_nfree;
    unsigned staged;

    uint32_t *active;         /* routes with packets: node slot << 5 | route */
    unsigned ah, an, active_cap;

    struct ctx ctx[CTX_SETS * CTX_WAYS];
    struct nack_memo nacked[CTX_SETS];

    struct read_req *req;     /* the engine mailbox's request FIFO */
    unsigned rh, rn;

    rifl_rdma_wc *cq;
    unsigned ch, cn;

    uint64_t due_min;         /* no timer is due before this (a lower bound) */
    uint64_t faults[FAULT_RING];
    unsigned fh, fn;
};

#define XF_NONE 0xFFFFFFFFu

/* engine.c */
int rdma_node_slot(const rifl_rdma *e, uint32_t node);
int rdma_region_find(const rifl_rdma *e, uint16_t pdid, uint64_t va, uint64_t len,
                     unsigned need);
int rdma_region_of(const rifl_rdma *e, uint64_t va);
bool rdma_resident(const rifl_rdma *e, int region, uint64_t va, uint64_t len,
                   uint64_t *page);
void rdma_raise_fault(rifl_rdma *e, int region, uint64_t page_va);
struct pd *rdma_pd(rifl_rdma *e, uint16_t pdid);
struct mailbox *rdma_mailbox(rifl_rdma *e, uint16_t pdid, unsigned index);
bool rdma_mailbox_put(struct mailbox *m, const uint8_t *msg, unsigned len, uint32_t src);
void rdma_complete(rifl_rdma *e, unsigned xf, int status, uint64_t now);

/* transfer.c */
void rdma_issue(rifl_rdma *e, uint64_t now);
void rdma_response(rifl_rdma *e, const rifl_rdma_packet *p, uint64_t now);
void rdma_block_sent(rifl_rdma *e, unsigned tid, uint64_t now);
bool rdma_notify_ready(const rifl_rdma *e, unsigned tid);
void rdma_read_record(rifl_rdma *e, uint32_t src, uint16_t pdid, const uint8_t *record,
                      uint64_t now);
void rdma_serve_requests(rifl_rdma *e, uint64_t now);
void rdma_chain_done(rifl_rdma *e, unsigned tid);
void rdma_chain_drop(rifl_rdma *e, unsigned tid);
void rdma_block_expire(rifl_rdma *e, unsigned tid, uint64_t now);
void rdma_fail_node(rifl_rdma *e, uint32_t node, uint64_t now);
void rdma_unstage_node(rifl_rdma *e, unsigned slot);

/* send.c */
void rdma_sched_push(rifl_rdma *e, unsigned tid);
bool rdma_stage_response(rifl_rdma *e, rifl_rdma_route to, const rifl_rdma_hdr *h,
                         const rifl_rdma_ftr *f);

#endif

/* The link simulator's state, shared by its parts: the run (linksim.c), the
 * users on both ends (linksim_users.c) and the fast path
 * (linksim_fast.c). */
#ifndef RIFL_SIM_LINKSIM_PRIV_H
#define RIFL_SIM_LINKSIM_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "rifl/sim/linksim.h"
#include "rifl/sim/pair.h"

/* A packet between its sender and the validator. */
struct pkt {
    uint64_t first;           /* index of its first data frame in the stream */
    uint64_t t_first, t_last; /* slots its first / last frame was first sent */
    uint32_t nf, len;
};

/* Slots [u, u + n) of a fast-forward sent data frames x, x + 1, ... (or
 * fillers when x < 0). */
struct run {
    uint64_t u, n;
    int64_t x;
};

/* A recovery learned (linksim_carry.c): what a frame hit on direction h's
 * cable sets off when it is the only one for a while, from the slot the
 * hit frame is sent in (slot 0) until the link is steady again (slot L).
 * Per direction i: */
struct recovery {
    bool ok;
    uint64_t L;
    uint64_t sent[2];          /* new frames sent in it */
    uint8_t *tx[2];            /* [u]: a new frame sent in slot u */
    uint32_t *run[2];          /* [u]: slots from u on alike in that */
    uint32_t *nth[2];          /* [u]: new frames sent before slot u */
    uint32_t *arr[2];          /* [k]: slot in which the receiver took the
                                  k-th new frame, from the one sent D slots
                                  before slot 0 (k < sent) */
    uint64_t streak[2];        /* the streaks at the end */
    rifl_lane_stats extra[2];  /* lane i's counters beyond those of its new
                                  frames (rifl_lane_stretch.extra) */
};

/* A frame hit in a stretch whose recovery goes as counts. */
struct window {
    uint64_t at; /* the slot the hit frame is sent in */
    int h;       /* its direction */
};
#define RIFL_LINKSIM_WINDOWS 32
/* Recoveries stepped to learn from that meet another hit (or the run's
 * end) before the run gives up learning. */
#define RIFL_LINKSIM_LEARN_TRIES 16

/* One direction: a sending user, a lane sending, a cable, a lane receiving,
 * a receiving user. */
struct dir {
    rifl_lane *tx, *rx;       /* sender, receiver */
    rifl_phy *ch;
    uint64_t stream_seed;
    /* sending user */
    uint64_t next_seq;        /* next packet to create */
    bool pending, done;       /* a packet waits to be taken; no more packets */
    uint32_t plen, pnf;
    size_t poff;              /* bytes of it taken so far (parts) */
    int64_t credit;           /* frames the load allows, fixed point (see below) */
    uint64_t offered_bytes;
    uint64_t qf;              /* data frames queued so far */
    /* packets between sender and validator */
    struct pkt *ring;
    uint64_t rmask, oldest;
    uint64_t send_cur;        /* packet whose frames are being sent */
    uint64_t sf;              /* new data frames sent so far */
    uint64_t recv_cur;        /* next packet the receiver completes */
    /* per frame ID: data frame index of the last new frame with that ID, or
     * -1 for a filler */
    int64_t *log;
    uint64_t streak;          /* slots in a row with a new, unhit frame sent */
    uint64_t prev_new, prev_hit;
    bool fresh;               /* the last slot sent a new frame */
    uint64_t learn_acc;       /* frames taken in a recovery being learned */
    /* receiving user */
    rifl_validator val;
    uint8_t *pkt, *rbuf;
    /* packet contents made last: for the users, and for the lane's
     * accelerator (frame_source), whose queue is read between the users' */
    struct content_cache { uint8_t *buf; uint64_t seq; bool ok; } cache, scache;
    uint64_t last_read;       /* slot of the last completed packet */
    int64_t first_read;       /* slot of the first bytes read, -1 before */
    uint64_t checked_seq, checked_have; /* partly read packet whose bytes so far */
    bool prefix_ok;                     /* were compared with the expected ones */
    /* emulation state during a fast-forward (linksim_fast.c) */
    uint64_t q;               /* transmit-queue frames */
    unsigned efid, erfid;
    struct run *runs;         /* what the last slots sent, a ring */
    unsigned nruns, run_head; /* ring size (2^K + 4), next entry */
    struct {                  /* what the users and lanes did in it */
        uint64_t data_sent, fill_sent, data_recv, fill_recv;
        uint64_t tx_packets, tx_bytes, tx_rejected, rx_packets, rx_bytes;
    } c;
    unsigned wsend, wrecv;     /* windows its sends and deliveries are at */
    rifl_lane_frame *inflight; /* frames left in flight after it */
    uint64_t src_seq;          /* packet of the frame the lanes asked for last */
    struct sim *sim;
};

struct sim {
    const rifl_linksim_config *cfg;
    rifl_linksim_result *res;
    rifl_pair *pair;
    struct dir d[2];
    unsigned pb, nfid, kmask, D;
    uint64_t txcap;
    size_t maxlen;            /* largest packet */
    bool stopped;             /* offer_slots reached: no new packets */
    bool fast_possible;       /* the run may fast-forward (linksim_fast.c) */
    bool ref_possible;        /* and step by reference (rifl_pair_ref_step) */
    int64_t load_fx;          /* offered load per slot in credit units; 0: saturate */
    rifl_rng rng;
    rifl_pair_slot seen;      /* the last slot, for the observer */
    unsigned quiet_wait;      /* quiet slots to step one at a time before the
                                 lanes' quiet runs are tried again */
    /* recoveries carried as counts (linksim_carry.c) */
    bool carry_possible;
    uint64_t rec_max;         /* longest recovery learned */
    struct recovery rec[2];   /* by the direction of the hit */
    struct {
        int state;            /* LEARN_* */
        int h;
        uint64_t at;          /* the hit frame's slot */
        uint64_t hits0[2], acc0[2];
        rifl_lane_stats st0[2];
        unsigned fails;
        uint64_t declined;    /* first hit (slot + 1) found no use to learn from */
    } learn;
    struct window win[RIFL_LINKSIM_WINDOWS]; /* the stretch's */
    unsigned nwin;
    rifl_lane_stats xtra[2];  /* their extras, per lane */
    uint64_t plan_hit;        /* first hit (absolute slot + 1) the last plan
                                 found not carried; 0: none */
    uint64_t del_at[2][256];  /* slots of the frames a quiet run delivered */
    uint64_t sent_at[2][256]; /* slots and IDs of the frames it sent */
    uint16_t sent_id[2][256];
};

/* A quiet run of the lanes shorter than this is followed by
 * RIFL_LINKSIM_QUIET_WAIT quiet slots stepped one at a time. */
#define RIFL_LINKSIM_QUIET_SHORT 16
#define RIFL_LINKSIM_QUIET_WAIT 16

/* Offered load below 1: a token bucket of at most one frame, counted in
 * units of 2^-30 frames so that k slots of refill are one exact step. */
#define RIFL_LINKSIM_CREDIT_SHIFT 30
#define RIFL_LINKSIM_CREDIT_ONE ((int64_t)1 << RIFL_LINKSIM_CREDIT_SHIFT)

static inline int64_t rifl_linksim_credit_add(int64_t credit, int64_t per_slot, uint64_t slots)
{
    int64_t room = RIFL_LINKSIM_CREDIT_ONE - credit;
    if (room <= 0)
        return credit;
    if (slots >= (uint64_t)room / (uint64_t)per_slot + 1)
        return RIFL_LINKSIM_CREDIT_ONE;
    int64_t c = credit + (int64_t)slots * per_slot;
    return c > RIFL_LINKSIM_CREDIT_ONE ? RIFL_LINKSIM_CREDIT_ONE : c;
}

/* linksim_users.c */
size_t rifl_linksim_len(const rifl_linksim_config *c, uint64_t seed, uint64_t seq);
/* the validator's length model with a list of sizes (rifl_validator.len_fn) */
struct rifl_linksim_len_ctx {
    const rifl_linksim_config *cfg;
    uint64_t seed;
};
size_t rifl_linksim_len_cb(void *ctx, uint64_t seq);
size_t rifl_linksim_pkt_len(const struct sim *s, const struct dir *d, uint64_t seq);
const uint8_t *rifl_linksim_content(struct sim *s, struct dir *d, uint64_t seq);
const uint8_t *rifl_linksim_content_in(struct dir *d, struct content_cache *c, uint64_t seq);
struct pkt *rifl_linksim_pkt_at(const struct dir *d, uint64_t seq);
int rifl_linksim_generate(struct sim *s, struct dir *d, bool real);
void rifl_linksim_stamp_sent(struct dir *d, uint64_t idx, uint64_t t);
void rifl_linksim_delivered(struct sim *s, struct dir *d, uint64_t seq, uint64_t t);
int rifl_linksim_user_side(struct sim *s, uint64_t t);
void rifl_linksim_read_arrived(struct sim *s, struct dir *d, const uint64_t *at, unsigned n,
                               uint64_t shift);
bool rifl_linksim_all_done(const struct sim *s);
/* Whether a direction's stream has stalled at slot t (stall_slots in
 * rifl/sim/linksim.h): its checks found a packet lost or corrupted, packets
 * are still due, and none arrived whole since last_read. */
bool rifl_linksim_stalled(const rifl_linksim_config *c, const rifl_validator *v, bool due,
                          uint64_t last_read, uint64_t t);

/* linksim.c: direction i's measuring window and its share of the goodput
 * and efficiency sums, for `lanes` lanes; once per direction */
void rifl_linksim_window(const rifl_linksim_config *c, rifl_linksim_result *res, int i,
                         uint64_t last_read, uint64_t t, unsigned lanes, double *esum,
                         double *gsum);

/* bondsim.c: a run of bonded links (cfg->lanes > 1) */
int rifl_linksim_run_bonded(const rifl_linksim_config *cfg, rifl_linksim_result *res, char *msg,
                            size_t msglen);

/* linksim_carry.c */
enum { LEARN_IDLE, LEARN_ARMED, LEARN_RECORDING };
int rifl_linksim_carry_init(struct sim *s);
void rifl_linksim_carry_free(struct sim *s);
/* Slots of a stretch from slot t with the recoveries it carries planned
 * (s->win), at most cap: up to the first hit not carried.  `first` is the
 * slots to the first hit, which the caller found. */
uint64_t rifl_linksim_plan(struct sim *s, uint64_t t, uint64_t first, uint64_t cap);
/* The first hit, `first` slots from slot t, is one to learn from, alone
 * for as long as a recovery may take; learning armed when `arm`. */
bool rifl_linksim_learn_wanted(struct sim *s, uint64_t t, uint64_t first, bool arm);
/* The slot at which direction i's frame sent at slot ts arrives (the
 * stretch's windows from *cur on). */
uint64_t rifl_linksim_arrival(const struct sim *s, int i, uint64_t ts, unsigned *cur);
/* After slot t's wire side: a recovery being learned records it. */
void rifl_linksim_learn_slot(struct sim *s, uint64_t t);
/* Before slot t: learning armed for it begins. */
void rifl_linksim_learn_begin(struct sim *s, uint64_t t);

/* linksim_fast.c */
uint64_t rifl_linksim_skip_room(struct sim *s, uint64_t t);
/* Slots from t on in which skip_room stays 0 whatever the lanes and users
 * do: a frame hit (or the end) comes too soon for a stretch; 0 when none
 * is known. */
uint64_t rifl_linksim_skip_hold(struct sim *s, uint64_t t);
int rifl_linksim_skip(struct sim *s, uint64_t t, uint64_t m, uint64_t *done);

#endif

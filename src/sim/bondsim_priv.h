/* The bonded link simulator's own parts (bondsim.c, bondsim_fast.c). */
#ifndef RIFL_SIM_BONDSIM_PRIV_H
#define RIFL_SIM_BONDSIM_PRIV_H

#include "linksim_priv.h"

#include "rifl/bond.h"

/* A packet between its sending user and the validator. */
struct bpkt {
    uint64_t first, last;     /* narrow words */
    uint64_t t_first, t_last; /* slots they were placed, + 1 (0: not yet) */
    size_t len;
};

/* The bytes a lane's data frame carries: bytes off .. off + n - 1 of packet
 * seq (len bytes), and whether they end it. */
struct bseg {
    uint64_t seq;
    uint32_t off, len;        /* (len: the packet's) */
    uint16_t n;
    uint8_t end;
};

/* Slots u .. u + n - 1 of a steady stretch: the words placed by the end
 * of the first (txw), and, in a bulk run, G more in each of the others (a
 * word of every group, none ending its packet). */
struct brun {
    uint64_t u, n, txw;
    bool bulk;
};

/* One direction: end `tx` sends, end `rx` receives. */
struct bdir {
    rifl_bond *tx, *rx;
    uint64_t stream_seed;
    uint64_t next_seq;        /* next packet to make */
    bool pending, done;
    size_t plen;
    uint64_t offered_bytes;
    uint64_t words;           /* narrow words of the packets queued so far */
    struct bpkt *ring;        /* packets queued and not yet read */
    uint64_t rmask, oldest, stamp_cur;
    rifl_validator val;
    struct rifl_linksim_len_ctx lctx;
    uint8_t *pkt, *rbuf;
    uint64_t last_read;
    int64_t first_read;
};

struct bsim {
    const rifl_linksim_config *cfg;
    rifl_linksim_result *res;
    unsigned L, wbytes;
    size_t maxlen;
    rifl_bond *end[2];
    rifl_phy *line[2][RIFL_BOND_MAX_LANES]; /* [e][i]: end e's lane i outwards */
    struct bdir d[2];
    rifl_rng rng;
    bool serial;
    double rate[2];           /* slots per unit of time: end A runs ppm faster */
    uint64_t k[2];            /* each end's next slot */
    unsigned D;               /* line delay, in the sending end's slots */
    /* frames on their way to end e's lane i: rings of records */
    uint8_t *fl[2][RIFL_BOND_MAX_LANES];
    uint64_t fhead[2][RIFL_BOND_MAX_LANES], fcount[2][RIFL_BOND_MAX_LANES], fmask;
    size_t fstride, wire_bytes, content_bytes;
    /* lane down: since when each receiver has been up, and whether its
     * being down was reported (rifl-multilane §5.2) */
    uint64_t up_since[2][RIFL_BOND_MAX_LANES];
    bool was_up[2][RIFL_BOND_MAX_LANES], down_told[2][RIFL_BOND_MAX_LANES];
    bool all_up_once[2]; /* every lane of the end has been up at once */
    uint64_t up_words;
    /* the driver by lane pairs (ends on one clock, aligned lanes) */
    bool by_pairs;
    rifl_pair *pair[RIFL_BOND_MAX_LANES];
    bool fresh;               /* the users' calls are due in the next slot */
    bool offer_due[2];        /* end e placed a word in the last slot */
    bool read_skip;           /* reads may wait for data frames delivered */
    uint64_t rx_data[2];      /* end e's lanes' data frames delivered, by the
                                 last read */
    const rifl_lane_stats *lane_st[2][RIFL_BOND_MAX_LANES];
    bool pair_ref[RIFL_BOND_MAX_LANES]; /* stepping by reference */
    /* steady stretches by the lanes' accelerator (bondsim_fast.c) */
    bool stretch_ok;          /* the settings allow them */
    unsigned kmask;           /* 2^K - 1: the lanes' frame IDs */
    unsigned stretch_wait;    /* slots before the next try */
    uint64_t *placed[2];      /* [e]: end e's words placed by the end of a
                                 slot, a ring of pmask + 1 slots */
    uint64_t pmask;
    struct brun *runs[2];     /* [e]: a stretch's placements not yet read,
                                 a ring of 2 (pmask + 1) */
    uint64_t *pre[2];         /* [e]: the D slots' placements before it */
    struct bseg *seglog[2][RIFL_BOND_MAX_LANES]; /* end e's lane i: its data
                                 frames' bytes, by number, 2^K of them */
    int64_t *sent_by_id[2][RIFL_BOND_MAX_LANES];
    uint8_t *pcache[2];       /* direction e's packet pcache_seq[e], whole */
    uint64_t pcache_seq[2];
    /* each end's compensation detector */
    unsigned det_lane;
    bool det_on[2];
    uint64_t det_slots[2], det_frames[2];
    int64_t det_max[2];
};

static inline struct bpkt *bpkt_at(const struct bdir *d, uint64_t seq) { return &d->ring[seq & d->rmask]; }

int rifl_bondsim_pkt_add(struct bdir *d, uint64_t seq, uint64_t nwords, size_t len);
/* The fast path: set up (after the bonds and pairs are made), the record
 * of a slot stepped (slot k, after every pair's step), and a stretch from
 * the next slot when one may go (0: none, step a slot). */
int rifl_bondsim_fast_init(struct bsim *s);
void rifl_bondsim_fast_slot(struct bsim *s, uint64_t k);
int rifl_bondsim_stretch(struct bsim *s, uint64_t *done);
void rifl_bondsim_fast_free(struct bsim *s);

#endif

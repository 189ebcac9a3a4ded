/* Unit tests of the lane engine's state machine, one transition at a time:
 * the test plays the peer, building the frames the lane receives and
 * decoding the frames it sends. */
#include "testlib.h"

#include "rifl/lane.h"
#include "rifl/sim/pair.h"
#include "rifl/rng.h"

#define F 256
#define K 6
#define N (1u << K)

struct peer {
    uint64_t scr;     /* scrambler of frames we send to the lane */
    unsigned fid;     /* our frame-ID counter */
    uint64_t descr;   /* descrambler of the lane's frames */
    uint8_t wire[32];
    uint64_t now;     /* the lane's next slot */
};

static rifl_lane *make_lane(unsigned lock)
{
    rifl_lane_config c = rifl_lane_default_config;
    c.frame_bits = F;
    c.fid_bits = K;
    c.link.cable_m = 1;
    c.link.transceiver_ns = 0;
    c.rx_lock_frames = lock;
    c.tx_queue_frames = 64;
    rifl_lane *l = NULL;
    char msg[256];
    int rc = rifl_lane_create(&c, &l, msg, sizeof msg);
    if (rc)
        fprintf(stderr, "  %s\n", msg);
    return l;
}

/* frames the peer sends */
static const uint8_t *ctl(struct peer *p, uint16_t key)
{
    rifl_frame_encode_control(p->wire, F, key, p->fid, &p->scr);
    return p->wire;
}
static const uint8_t *data(struct peer *p, unsigned meta, const uint8_t *pay)
{
    rifl_frame_encode(p->wire, F, RIFL_SYN_DATA, meta, pay, p->fid, &p->scr);
    p->fid = (p->fid + 1) & (N - 1);
    return p->wire;
}
static const uint8_t *filler(struct peer *p)
{
    uint8_t z[30] = { 0 };
    return data(p, 0, z);
}
static const uint8_t *meta00(struct peer *p, uint8_t fmt)
{
    uint8_t z[30] = { 0 };
    z[29] = fmt;
    return data(p, 0, z);
}

/* one slot: the lane sends (decoded into fi), then receives `in` */
static int slot(rifl_lane *l, struct peer *p, const uint8_t *in, rifl_frame_info *fi,
                uint8_t *payload)
{
    uint8_t w[32];
    rifl_lane_tx(l, p->now, w);
    rifl_frame_decode(w, F, &p->descr, payload, fi);
    return rifl_lane_rx(l, p->now++, in, NULL);
}

/* bring a lane to NORMAL with the peer's first 16 fillers sent */
static void bring_up(rifl_lane *l, struct peer *p)
{
    rifl_frame_info fi;
    for (unsigned i = 0; i < N; i++)
        slot(l, p, ctl(p, RIFL_KEY_IDLE), &fi, NULL);
    for (unsigned i = 0; i < N; i++) /* our N fillers out, peer's fillers in */
        slot(l, p, filler(p), &fi, NULL);
}

static void t_init_and_pause_states(void)
{
    rifl_lane *l = make_lane(64);
    REQUIRE(l);
    struct peer p = { 0 };
    rifl_frame_info fi;
    for (unsigned i = 0; i < N; i++) {
        slot(l, &p, NULL, &fi, NULL);
        CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_INIT);
        CHECK_EQ_U(fi.kind, RIFL_KIND_CONTROL);
        CHECK_EQ_U(fi.key, RIFL_KEY_PAUSE);
        CHECK_EQ_U(fi.id, 0);
    }
    /* not aligned: SEND_PAUSE; 63 legal SYN headers are not enough */
    for (int i = 0; i < 63; i++) {
        CHECK_EQ_I(slot(l, &p, ctl(&p, RIFL_KEY_PAUSE), &fi, NULL), RIFL_RX_NOT_ALIGNED);
        CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_SEND_PAUSE);
        CHECK_EQ_U(fi.key, RIFL_KEY_PAUSE);
    }
    slot(l, &p, ctl(&p, RIFL_KEY_PAUSE), &fi, NULL); /* 64th: aligned now */
    CHECK(rifl_lane_get_flags(l).rx_aligned);
    /* 7 PAUSE keys do not raise the flag, an IDLE resets the count */
    for (int i = 0; i < 7; i++)
        slot(l, &p, ctl(&p, RIFL_KEY_PAUSE), &fi, NULL);
    CHECK(!rifl_lane_get_flags(l).peer_pause);
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
    for (int i = 0; i < 7; i++)
        slot(l, &p, ctl(&p, RIFL_KEY_PAUSE), &fi, NULL);
    CHECK(!rifl_lane_get_flags(l).peer_pause);
    slot(l, &p, ctl(&p, RIFL_KEY_PAUSE), &fi, NULL);
    CHECK(rifl_lane_get_flags(l).peer_pause);
    CHECK_EQ_U(rifl_lane_get_stats(l)->flag_pause_raised, 1);
    /* PAUSE state sends IDLE */
    slot(l, &p, ctl(&p, RIFL_KEY_PAUSE), &fi, NULL);
    CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_PAUSE);
    CHECK_EQ_U(fi.key, RIFL_KEY_IDLE);
    /* a control frame with any other key drops the flag at once */
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
    CHECK(!rifl_lane_get_flags(l).peer_pause);
    /* raised again; 16 data frames in a row keep it, the 17th drops it */
    for (int i = 0; i < 8; i++)
        slot(l, &p, ctl(&p, RIFL_KEY_PAUSE), &fi, NULL);
    CHECK(rifl_lane_get_flags(l).peer_pause);
    for (int i = 0; i < 16; i++)
        slot(l, &p, filler(&p), &fi, NULL);
    CHECK(rifl_lane_get_flags(l).peer_pause);
    slot(l, &p, filler(&p), &fi, NULL);
    CHECK(!rifl_lane_get_flags(l).peer_pause);
    CHECK_EQ_U(rifl_lane_get_stats(l)->flag_pause_raised, 2);
    /* losing alignment: 16 illegal SYN headers within 64 frames */
    uint8_t bad[32];
    memcpy(bad, ctl(&p, RIFL_KEY_IDLE), 32);
    bad[0] &= 0x3F; /* SYN 00 */
    for (int i = 0; i < 16; i++)
        slot(l, &p, bad, &fi, NULL);
    CHECK(!rifl_lane_get_flags(l).rx_aligned);
    CHECK_EQ_U(rifl_lane_get_stats(l)->rx_align_lost, 1);
    CHECK_EQ_U(rifl_lane_get_stats(l)->rx_bad_syn, 16);
    slot(l, &p, NULL, &fi, NULL);
    CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_SEND_PAUSE);
    rifl_lane_free(l);
}

/* rifl-link section 7: frame_error ends with a good data or control frame
 * while the receiver is back in step; a frame with an illegal SYN whose
 * code checks (only an undetected error or a broken peer makes one) is
 * neither, and leaves it raised. */
static void t_illegal_syn_keeps_frame_error(void)
{
    rifl_lane *l = make_lane(0);
    REQUIRE(l);
    struct peer p = { 0 };
    rifl_frame_info fi;
    bring_up(l, &p);
    p.fid = (p.fid + 5) & (N - 1); /* frames missed: frame_error */
    slot(l, &p, filler(&p), &fi, NULL);
    REQUIRE(rifl_lane_get_flags(l).frame_error);
    /* the peer replays from the ID expected, 16 before the next new one:
     * after 15 the receiver is in step again, the error still raised */
    p.fid = rifl_lane_expected_id(l);
    for (int i = 0; i < 15; i++)
        CHECK_EQ_I(slot(l, &p, filler(&p), &fi, NULL), RIFL_RX_SKIPPED);
    REQUIRE(rifl_lane_get_flags(l).frame_error);
    uint64_t bad_syn = rifl_lane_get_stats(l)->rx_bad_syn;
    uint64_t control = rifl_lane_get_stats(l)->rx_control;
    for (unsigned syn = 0; syn <= 3; syn += 3) {
        REQUIRE(rifl_frame_encode(p.wire, F, syn, 0, NULL, p.fid, &p.scr) == RIFL_OK);
        slot(l, &p, p.wire, &fi, NULL);
        CHECK_MSG(rifl_lane_get_flags(l).frame_error, "a good frame with SYN %u ended "
                  "frame_error", syn);
    }
    CHECK_EQ_U(rifl_lane_get_stats(l)->rx_bad_syn, bad_syn + 2);
    CHECK_EQ_U(rifl_lane_get_stats(l)->rx_control, control);
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
    CHECK(!rifl_lane_get_flags(l).frame_error);
    CHECK_EQ_U(rifl_lane_get_stats(l)->rx_control, control + 1);
    rifl_lane_free(l);
}

/* Project rule (docs/link-layer.md): a receiver waiting for a replay keeps
 * asking for it while the peer pauses it, RETRANSMIT instead of IDLE, so
 * that the peer, once it resumes, replays before it sends anything new. */
static void t_pause_asks_replay(void)
{
    rifl_lane *l = make_lane(0);
    REQUIRE(l);
    struct peer p = { 0 };
    rifl_frame_info fi;
    bring_up(l, &p);
    /* a frame whose ID is not the one expected: frame_error */
    p.fid = (p.fid + 5) & (N - 1);
    slot(l, &p, filler(&p), &fi, NULL);
    CHECK(rifl_lane_get_flags(l).frame_error);
    slot(l, &p, ctl(&p, RIFL_KEY_PAUSE), &fi, NULL);
    CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_SEND_RETRANS);
    CHECK_EQ_U(fi.key, RIFL_KEY_RETRANSMIT);
    for (int i = 0; i < 7; i++)
        slot(l, &p, ctl(&p, RIFL_KEY_PAUSE), &fi, NULL);
    CHECK(rifl_lane_get_flags(l).peer_pause);
    uint64_t retx = rifl_lane_get_stats(l)->tx_retransmit;
    for (int i = 0; i < 20; i++) {
        slot(l, &p, ctl(&p, RIFL_KEY_PAUSE), &fi, NULL);
        CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_PAUSE);
        CHECK_EQ_U(fi.kind, RIFL_KIND_CONTROL);
        CHECK_EQ_U(fi.key, RIFL_KEY_RETRANSMIT);
    }
    CHECK_EQ_U(rifl_lane_get_stats(l)->tx_retransmit, retx + 20);
    CHECK_EQ_U(rifl_lane_get_stats(l)->tx_state_slots[RIFL_TX_PAUSE], 20);
    /* the pause ends: still waiting, so SEND_RETRANS */
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
    CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_SEND_RETRANS);
    CHECK_EQ_U(fi.key, RIFL_KEY_RETRANSMIT);
    /* the peer replays from the ID the receiver went back to: back in step,
     * paused again, the lane sends IDLE as before */
    p.fid = (p.fid - 5 - 16 - 1) & (N - 1);
    for (int i = 0; i < 40 && rifl_lane_get_flags(l).frame_error; i++)
        slot(l, &p, filler(&p), &fi, NULL);
    CHECK(!rifl_lane_get_flags(l).frame_error);
    for (int i = 0; i < 9; i++)
        slot(l, &p, ctl(&p, RIFL_KEY_PAUSE), &fi, NULL);
    CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_PAUSE);
    CHECK_EQ_U(fi.key, RIFL_KEY_IDLE);
    rifl_lane_free(l);
}

/* The control-frame monitor of link rules §6, frame by frame.  Each step is
 * a received frame (a control key, a data frame 'D', a frame with an illegal
 * SYN 'X') and the PAUSE and RETRANSMIT flags expected after it. */
struct mon_step {
    char kind;      /* 'P' PAUSE, 'R' RETRANSMIT, 'I' IDLE, 'K' damaged key,
                       'D' data, 'X' illegal SYN, 'Y' illegal SYN with the
                       IDLE key's bits */
    unsigned times; /* repeated this many times */
    int pause, retx; /* flags after the last of them */
};

static const uint8_t *mon_frame(struct peer *p, char kind)
{
    static uint8_t bad[32];
    switch (kind) {
    case 'P': return ctl(p, RIFL_KEY_PAUSE);
    case 'R': return ctl(p, RIFL_KEY_RETRANSMIT);
    case 'I': return ctl(p, RIFL_KEY_IDLE);
    case 'K': return ctl(p, RIFL_KEY_PAUSE | 0x0001); /* a key damaged by a bit error */
    case 'D': return filler(p);
    default:
        memcpy(bad, ctl(p, kind == 'Y' ? RIFL_KEY_IDLE : RIFL_KEY_PAUSE), 32);
        bad[0] &= 0x3F; /* SYN 00 */
        return bad;
    }
}

static void run_monitor(const char *name, const struct mon_step *steps, size_t n)
{
    rifl_lane *l = make_lane(0);
    REQUIRE(l);
    struct peer p = { 0 };
    rifl_frame_info fi;
    for (size_t i = 0; i < n; i++) {
        for (unsigned k = 0; k < steps[i].times; k++)
            slot(l, &p, mon_frame(&p, steps[i].kind), &fi, NULL);
        rifl_lane_flags f = rifl_lane_get_flags(l);
        CHECK_MSG(f.peer_pause == (steps[i].pause != 0) && f.peer_retransmit == (steps[i].retx != 0),
                  "%s, step %zu (%u x '%c'): PAUSE %d RETRANSMIT %d, expected %d %d", name, i,
                  steps[i].times, steps[i].kind, f.peer_pause, f.peer_retransmit,
                  steps[i].pause, steps[i].retx);
    }
    rifl_lane_free(l);
}

static void t_monitor_rule(void)
{
    /* a flag rises on the 8th frame with its key */
    static const struct mon_step rise[] = { { 'P', 7, 0, 0 }, { 'P', 1, 1, 0 }, { 'P', 5, 1, 0 } };
    /* and falls at once on a control frame with another key */
    static const struct mon_step other_key[] = {
        { 'P', 8, 1, 0 }, { 'R', 1, 0, 0 }, { 'R', 6, 0, 0 }, { 'R', 1, 0, 1 },
        { 'I', 1, 0, 0 }, { 'P', 8, 1, 0 }, { 'K', 1, 0, 0 }, { 'R', 8, 0, 1 },
        { 'P', 1, 0, 0 },
    };
    /* up to 16 data frames neither count nor break a run; the 17th in a row
     * clears both counts */
    static const struct mon_step data_run[] = {
        { 'P', 4, 0, 0 }, { 'D', 16, 0, 0 }, { 'P', 4, 1, 0 }, { 'D', 16, 1, 0 },
        { 'D', 1, 0, 0 }, { 'P', 4, 0, 0 }, { 'D', 17, 0, 0 }, { 'P', 4, 0, 0 },
    };
    /* IDLE frames extend the run like data frames (and, being another key,
     * clear the counts themselves) */
    static const struct mon_step idle_run[] = {
        { 'R', 8, 0, 1 }, { 'D', 10, 0, 1 }, { 'I', 1, 0, 0 }, { 'R', 8, 0, 1 },
        { 'I', 1, 0, 0 }, { 'R', 8, 0, 1 }, { 'D', 15, 0, 1 }, { 'X', 1, 0, 1 },
        { 'D', 16, 0, 1 }, { 'D', 1, 0, 0 },
    };
    /* an illegal SYN breaks the data run; like a data frame, it clears the
     * counts only when 16 data frames came before it */
    static const struct mon_step illegal[] = {
        { 'P', 8, 1, 0 }, { 'X', 3, 1, 0 }, { 'D', 15, 1, 0 }, { 'X', 1, 1, 0 },
        { 'D', 16, 1, 0 }, { 'X', 1, 0, 0 },
    };
    /* the run counts frames with SYN 01 or the IDLE key, whatever the SYN
     * (the key is read off every frame): an illegal SYN carrying IDLE's
     * bits extends it */
    static const struct mon_step idle_key[] = {
        { 'R', 8, 0, 1 }, { 'D', 15, 0, 1 }, { 'Y', 1, 0, 1 }, { 'D', 1, 0, 0 },
        { 'P', 8, 1, 0 }, { 'Y', 16, 1, 0 }, { 'X', 1, 0, 0 },
    };
    run_monitor("idle_key", idle_key, sizeof idle_key / sizeof idle_key[0]);
    run_monitor("rise", rise, sizeof rise / sizeof rise[0]);
    run_monitor("other_key", other_key, sizeof other_key / sizeof other_key[0]);
    run_monitor("data_run", data_run, sizeof data_run / sizeof data_run[0]);
    run_monitor("idle_run", idle_run, sizeof idle_run / sizeof idle_run[0]);
    run_monitor("illegal", illegal, sizeof illegal / sizeof illegal[0]);

    /* every count is 0 while the lane is not aligned */
    rifl_lane *l = make_lane(0);
    REQUIRE(l);
    struct peer p = { 0 };
    rifl_frame_info fi;
    for (int i = 0; i < 8; i++)
        slot(l, &p, ctl(&p, RIFL_KEY_RETRANSMIT), &fi, NULL);
    CHECK(rifl_lane_get_flags(l).peer_retransmit);
    rifl_lane_set_rx_aligned(l, false);
    CHECK(!rifl_lane_get_flags(l).peer_retransmit);
    rifl_lane_set_rx_aligned(l, true);
    for (int i = 0; i < 7; i++)
        slot(l, &p, ctl(&p, RIFL_KEY_RETRANSMIT), &fi, NULL);
    CHECK(!rifl_lane_get_flags(l).peer_retransmit);
    rifl_lane_free(l);
}

/* The control frames of a start-up that used to deadlock: the peer's INIT
 * sends 2^K PAUSE frames (the lane's PAUSE flag rises), then its receiver,
 * which saw a damaged frame during start-up, asks for a retransmission with
 * RETRANSMIT frames, as a peer following the link rules does.  The lane must drop
 * PAUSE on the first RETRANSMIT and replay, oldest frame first, the frames
 * the peer needs (IDs 0..15 after reset); a lane that holds PAUSE until 16
 * data or IDLE frames arrive keeps sending IDLE, and both wait forever. */
static void t_monitor_startup_sequence(void)
{
    rifl_lane *l = make_lane(0);
    REQUIRE(l);
    struct peer p = { 0 };
    rifl_frame_info fi;
    for (unsigned i = 0; i < N; i++) /* both INITs */
        slot(l, &p, ctl(&p, RIFL_KEY_PAUSE), &fi, NULL);
    CHECK(rifl_lane_get_flags(l).peer_pause);
    slot(l, &p, ctl(&p, RIFL_KEY_PAUSE), &fi, NULL);
    CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_PAUSE);
    slot(l, &p, ctl(&p, RIFL_KEY_RETRANSMIT), &fi, NULL);
    CHECK(!rifl_lane_get_flags(l).peer_pause);
    unsigned next_id = 0, data = 0, out_of_order = 0;
    for (unsigned t = 0; t < 4 * N; t++) {
        slot(l, &p, ctl(&p, RIFL_KEY_RETRANSMIT), &fi, NULL);
        if (fi.syn == RIFL_SYN_DATA) {
            out_of_order += fi.id != next_id;
            next_id = (fi.id + 1) & (N - 1);
            data++;
        }
    }
    CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_RETRANS);
    CHECK(rifl_lane_get_flags(l).peer_retransmit);
    CHECK(data >= 16);
    CHECK_EQ_U(out_of_order, 0);
    CHECK(rifl_lane_get_stats(l)->tx_replay_cycles >= 1);
    rifl_lane_free(l);
}

/* Link rules §8, rule R3: user data goes out only after 2^K new filler
 * frames, even when a receive error at start-up forces IDLE slots among the
 * first NORMAL slots (a sender counting NORMAL slots would start early). */
static void t_user_data_after_fillers(void)
{
    rifl_lane *l = make_lane(0);
    REQUIRE(l);
    struct peer p = { 0 };
    rifl_frame_info fi;
    for (unsigned i = 0; i < N; i++)
        slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
    uint8_t pkt[30] = { 9 };
    CHECK_EQ_I(rifl_lane_send(l, pkt, sizeof pkt), RIFL_OK);
    /* NORMAL; in its 4th slot the peer's frame arrives damaged */
    for (int i = 0; i < 3; i++)
        slot(l, &p, filler(&p), &fi, NULL);
    uint8_t bad[32];
    memcpy(bad, filler(&p), 32);
    bad[20] ^= 0x10;
    CHECK_EQ_I(slot(l, &p, bad, &fi, NULL), RIFL_RX_VERIFY_FAIL);
    /* the peer replays from ID 0: the lane is back in step after 16 */
    p.fid = 0;
    for (int i = 0; i < 16; i++)
        slot(l, &p, filler(&p), &fi, NULL);
    CHECK(!rifl_lane_get_flags(l).frame_error);
    unsigned fillers = 0, idles = 0, normal = 0;
    int first_data_id = -1;
    for (unsigned t = 0; t < 4 * N && first_data_id < 0; t++) {
        slot(l, &p, filler(&p), &fi, NULL);
        if (rifl_lane_state(l) != RIFL_TX_NORMAL)
            continue;
        normal++;
        if (fi.kind == RIFL_KIND_FILLER)
            fillers++;
        else if (fi.kind == RIFL_KIND_CONTROL)
            idles++;
        else if (fi.kind == RIFL_KIND_DATA)
            first_data_id = (int)fi.id;
    }
    uint64_t new_fillers = rifl_lane_get_stats(l)->tx_frames[RIFL_KIND_FILLER];
    printf("  %u IDLE slots forced after the error; user data after %llu new fillers, ID %d\n",
           idles, (unsigned long long)new_fillers, first_data_id);
    CHECK(idles > 0);
    CHECK_EQ_U(new_fillers, N);
    CHECK_EQ_I(first_data_id, 0); /* the 2^K+1-th new frame */
    rifl_lane_free(l);
}

/* The replay cycle's tail (link rules §8, rule R1): max(2^(K-1), RTT + 16)
 * slots, RTT rounded up to whole frames. */
static void t_replay_tail_length(void)
{
    rifl_lane_config c = rifl_lane_default_config; /* 10 m: RTT 115.75 frames */
    CHECK_EQ_U(rifl_lane_min_replay_tail(&c), 116 + 16);
    CHECK_EQ_U(rifl_lane_replay_tail(&c), 132);
    c.link.cable_m = 2; /* RTT 80.75: half the buffer (128) is longer */
    CHECK_EQ_U(rifl_lane_replay_tail(&c), 128);
    /* a configured tail: at least max(2^(K-1), RTT + 16), here 2^(K-1) */
    c.replay_tail_frames = 97;
    char msg[512];
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "use at least 128") != NULL);
    c.replay_tail_frames = 127;
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    c.replay_tail_frames = 128;
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_OK);
    CHECK_EQ_U(rifl_lane_replay_tail(&c), 128);
    /* on the 10 m cable the round trip sets it */
    c.link.cable_m = 10;
    c.replay_tail_frames = 131;
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "use at least 132") != NULL);
}

static void t_normal_fillers_then_data(void)
{
    rifl_lane *l = make_lane(0);
    REQUIRE(l);
    struct peer p = { 0 };
    rifl_frame_info fi;
    for (unsigned i = 0; i < N; i++)
        slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
    /* 70-byte packet: 30 + 30 + 10 */
    uint8_t pkt[70];
    for (int i = 0; i < 70; i++)
        pkt[i] = (uint8_t)(i + 1);
    CHECK_EQ_I(rifl_lane_send(l, pkt, 70), RIFL_OK);
    /* N fillers with IDs 0..N-1 first, although data is waiting */
    for (unsigned i = 0; i < N; i++) {
        slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
        CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_NORMAL);
        CHECK_EQ_U(fi.kind, RIFL_KIND_FILLER);
        CHECK_EQ_U(fi.id, i);
    }
    uint8_t pay[30];
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, pay);
    CHECK_EQ_U(fi.meta, RIFL_META_FULL);
    CHECK(memcmp(pay, pkt, 30) == 0);
    CHECK_EQ_U(fi.id, 0);
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, pay);
    CHECK_EQ_U(fi.meta, RIFL_META_FULL);
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, pay);
    CHECK_EQ_U(fi.meta, RIFL_META_PARTIAL_EOP);
    CHECK_EQ_U(fi.payload_len, 10);
    CHECK_EQ_U(pay[29], 10);
    CHECK(memcmp(pay, pkt + 60, 10) == 0);
    /* exactly 30 bytes: one full end-of-packet frame */
    CHECK_EQ_I(rifl_lane_send(l, pkt, 30), RIFL_OK);
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, pay);
    CHECK_EQ_U(fi.meta, RIFL_META_FULL_EOP);
    /* nothing queued: filler */
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, pay);
    CHECK_EQ_U(fi.kind, RIFL_KIND_FILLER);
    /* clock compensation: an IDLE pause slot */
    rifl_lane_add_pause_slots(l, 2);
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, pay);
    CHECK_EQ_U(fi.kind, RIFL_KIND_CONTROL);
    CHECK_EQ_U(fi.key, RIFL_KEY_IDLE);
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, pay);
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, pay);
    CHECK_EQ_U(fi.kind, RIFL_KIND_FILLER);
    CHECK_EQ_U(rifl_lane_get_stats(l)->tx_clock_comp, 2);
    /* user queue limits */
    CHECK_EQ_I(rifl_lane_send(l, pkt, 0), RIFL_ERR_INVALID_ARG);
    uint8_t big[64 * 30 + 1];
    memset(big, 1, sizeof big);
    CHECK_EQ_I(rifl_lane_send(l, big, sizeof big), RIFL_ERR_TOO_BIG);
    CHECK_EQ_I(rifl_lane_send(l, big, 64 * 30), RIFL_OK);
    CHECK_EQ_I(rifl_lane_send(l, pkt, 1), RIFL_ERR_AGAIN);
    CHECK_EQ_U(rifl_lane_get_stats(l)->tx_rejected, 1);
    /* refusals counted in bulk, as a simulator stepping quiet slots does */
    CHECK_EQ_I(rifl_lane_count_refused(l, 5), RIFL_OK);
    CHECK_EQ_U(rifl_lane_get_stats(l)->tx_rejected, 6);
    CHECK_EQ_I(rifl_lane_count_refused(NULL, 1), RIFL_ERR_INVALID_ARG);
    rifl_lane_free(l);
}

static void t_receiver_rule(void)
{
    rifl_lane *l = make_lane(0);
    REQUIRE(l);
    struct peer p = { 0 };
    rifl_frame_info fi;
    uint8_t pay[30] = { 0 };
    for (unsigned i = 0; i < N; i++)
        slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
    /* IDs 0..15 are verified but never delivered */
    for (int i = 0; i < 16; i++) {
        pay[0] = (uint8_t)i;
        CHECK_EQ_I(slot(l, &p, data(&p, RIFL_META_FULL, pay), &fi, NULL), RIFL_RX_SKIPPED);
    }
    CHECK_EQ_U(rifl_lane_rx_backlog(l), 0);
    pay[0] = 16;
    CHECK_EQ_I(slot(l, &p, data(&p, RIFL_META_FULL_EOP, pay), &fi, NULL), RIFL_RX_DELIVERED);
    uint8_t buf[64];
    size_t n;
    int eop;
    CHECK_EQ_I(rifl_lane_read(l, buf, sizeof buf, &n, &eop), RIFL_OK);
    CHECK(n == 30 && eop == 1 && buf[0] == 16);
    CHECK_EQ_I(rifl_lane_read(l, buf, sizeof buf, &n, &eop), RIFL_ERR_AGAIN);
    /* a corrupted frame: verification fails, frame_error, roll back 16 */
    uint8_t bad[32];
    pay[0] = 17;
    memcpy(bad, data(&p, RIFL_META_FULL_EOP, pay), 32);
    bad[10] ^= 0x04;
    CHECK_EQ_I(slot(l, &p, bad, &fi, NULL), RIFL_RX_VERIFY_FAIL);
    CHECK(rifl_lane_get_flags(l).frame_error);
    CHECK_EQ_U(rifl_lane_expected_id(l), (17 - 16) & (N - 1));
    /* the lane asks for a retransmission */
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
    CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_SEND_RETRANS);
    CHECK_EQ_U(fi.key, RIFL_KEY_RETRANSMIT);
    /* the peer replays from ID 1: 1..16 are skipped, error clears at 16,
     * 17 is delivered once */
    p.fid = 1;
    for (int i = 1; i <= 16; i++) {
        pay[0] = (uint8_t)i;
        CHECK_EQ_I(slot(l, &p, data(&p, RIFL_META_FULL_EOP, pay), &fi, NULL), RIFL_RX_SKIPPED);
    }
    CHECK(!rifl_lane_get_flags(l).frame_error);
    pay[0] = 17;
    CHECK_EQ_I(slot(l, &p, data(&p, RIFL_META_FULL_EOP, pay), &fi, NULL), RIFL_RX_DELIVERED);
    CHECK_EQ_I(rifl_lane_read(l, buf, sizeof buf, &n, &eop), RIFL_OK);
    CHECK(buf[0] == 17);
    /* after an error the sender idles 2^K NORMAL slots before new data */
    unsigned idles = 0;
    for (unsigned i = 0; i < N + 2; i++) {
        slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
        idles += fi.kind == RIFL_KIND_CONTROL;
    }
    CHECK(idles >= N - 2 && idles <= N);
    /* two failures: the corrupted frame, and the peer's IDLE that still
     * carried its counter (18) while the lane expected ID 1 */
    CHECK_EQ_U(rifl_lane_get_stats(l)->rx_verify_fail, 2);
    rifl_lane_free(l);
}

static void t_retransmit_cycle(void)
{
    rifl_lane *l = make_lane(0);
    REQUIRE(l);
    struct peer p = { 0 };
    rifl_frame_info fi;
    bring_up(l, &p);
    /* 8 RETRANSMIT keys raise the flag */
    for (int i = 0; i < 8; i++)
        slot(l, &p, ctl(&p, RIFL_KEY_RETRANSMIT), &fi, NULL);
    CHECK(rifl_lane_get_flags(l).peer_retransmit);
    unsigned tail = rifl_lane_replay_tail(rifl_lane_get_config(l));
    /* 2^K replays, oldest first (the oldest has the ID of the counter),
     * interleaved with IDLE; then the tail */
    unsigned first = rifl_lane_get_stats(l)->tx_frames[RIFL_KIND_FILLER] & (N - 1);
    unsigned replayed = 0, order_bad = 0;
    for (unsigned s = 0; s < 2 * N + tail; s++) {
        slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
        if (s == 0)
            CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_RETRANS);
        if (s < 2 * N && s % 2 == 0) {
            replayed += fi.syn == RIFL_SYN_DATA;
            order_bad += fi.id != ((first + s / 2) & (N - 1));
        } else {
            order_bad += fi.kind != RIFL_KIND_CONTROL || fi.key != RIFL_KEY_IDLE;
        }
    }
    CHECK_EQ_U(replayed, N);
    CHECK_EQ_U(order_bad, 0);
    CHECK_EQ_U(rifl_lane_get_stats(l)->tx_replayed, N);
    /* the first IDLE received during the cycle dropped the flag: NORMAL */
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
    CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_NORMAL);
    CHECK_EQ_U(rifl_lane_get_stats(l)->tx_replay_cycles, 1);
    /* a flag still raised at the end restarts the cycle */
    for (int i = 0; i < 8; i++)
        slot(l, &p, ctl(&p, RIFL_KEY_RETRANSMIT), &fi, NULL);
    for (unsigned s = 0; s < 2 * N + tail + 1; s++)
        slot(l, &p, ctl(&p, RIFL_KEY_RETRANSMIT), &fi, NULL);
    slot(l, &p, ctl(&p, RIFL_KEY_RETRANSMIT), &fi, NULL);
    CHECK_EQ_U(rifl_lane_get_stats(l)->tx_replay_cycles, 3);
    CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_RETRANS);
    rifl_lane_free(l);
}

static void t_flow_control(void)
{
    rifl_lane *l = make_lane(0);
    REQUIRE(l);
    struct peer p = { 0 };
    rifl_frame_info fi;
    bring_up(l, &p); /* the peer's IDs 16.. will be delivered */
    unsigned buf = 2 * N, on = buf * 2 / 3, off = buf / 3;
    uint8_t pay[30] = { 1 };
    /* fill the receive buffer past ON without reading */
    unsigned fc_on_at = 0;
    for (unsigned i = 0; i < on + 1; i++) {
        slot(l, &p, data(&p, RIFL_META_FULL_EOP, pay), &fi, NULL);
        if (fi.kind == RIFL_KIND_FC_ON && !fc_on_at)
            fc_on_at = i + 1;
    }
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
    if (fi.kind == RIFL_KIND_FC_ON && !fc_on_at)
        fc_on_at = on + 2;
    CHECK_EQ_U(fc_on_at, on + 2); /* the slot after occupancy exceeded ON */
    CHECK(rifl_lane_get_flags(l).local_fc_on);
    CHECK_EQ_U(rifl_lane_get_stats(l)->fc_on_sent, 1);
    /* read down below OFF: FC OFF follows */
    uint8_t b[30];
    size_t n;
    int eop;
    while (rifl_lane_rx_backlog(l) >= off)
        rifl_lane_read(l, b, sizeof b, &n, &eop);
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
    CHECK_EQ_U(fi.kind, RIFL_KIND_FC_OFF);
    CHECK_EQ_U(rifl_lane_get_stats(l)->fc_off_sent, 1);
    /* peer's FC ON stops our user data; FC OFF resumes it */
    slot(l, &p, meta00(&p, RIFL_FMT_FC_ON), &fi, NULL);
    CHECK(rifl_lane_get_flags(l).peer_fc_on);
    CHECK_EQ_I(rifl_lane_send(l, pay, 30), RIFL_OK);
    slot(l, &p, filler(&p), &fi, NULL);
    CHECK_EQ_U(fi.kind, RIFL_KIND_CONTROL);
    CHECK_EQ_U(rifl_lane_get_stats(l)->tx_fc_wait, 1);
    slot(l, &p, meta00(&p, RIFL_FMT_FC_OFF), &fi, NULL);
    slot(l, &p, filler(&p), &fi, NULL);
    CHECK_EQ_U(fi.kind, RIFL_KIND_DATA);
    /* a full receive buffer refuses a new frame without losing it */
    while (rifl_lane_rx_backlog(l) < buf)
        CHECK_EQ_I(slot(l, &p, data(&p, RIFL_META_FULL_EOP, pay), &fi, NULL), RIFL_RX_DELIVERED);
    CHECK_EQ_I(slot(l, &p, data(&p, RIFL_META_FULL_EOP, pay), &fi, NULL), RIFL_RX_OVERFLOW);
    CHECK(rifl_lane_get_flags(l).frame_error);
    CHECK_EQ_U(rifl_lane_get_stats(l)->rx_overflow, 1);
    rifl_lane_free(l);
}

static void t_extension_frames(void)
{
    rifl_lane *a = make_lane(0), *b = make_lane(0);
    REQUIRE(a && b);
    uint8_t msg[29];
    for (int i = 0; i < 29; i++)
        msg[i] = (uint8_t)(100 + i);
    CHECK_EQ_I(rifl_lane_send_ext(a, 2, msg, 3), RIFL_ERR_INVALID_ARG); /* code < 3 */
    CHECK_EQ_I(rifl_lane_send_ext(a, 4, msg, 30), RIFL_ERR_INVALID_ARG); /* too long */
    CHECK_EQ_I(rifl_lane_send_ext(a, 4, msg, 29), RIFL_OK);
    /* a full extension queue refuses, counted */
    unsigned more = 0;
    while (rifl_lane_send_ext(b, 5, msg, 1) == RIFL_OK && more < 1000)
        more++;
    CHECK(more > 0 && more < 1000);
    CHECK_EQ_I(rifl_lane_send_ext(b, 5, msg, 1), RIFL_ERR_AGAIN);
    CHECK_EQ_U(rifl_lane_get_stats(b)->tx_ext, more);
    CHECK_EQ_U(rifl_lane_get_stats(b)->tx_ext_rejected, 2);
    CHECK_EQ_U(rifl_lane_get_stats(a)->tx_ext_rejected, 0);
    CHECK_EQ_I(rifl_lane_send(a, "hello", 5), RIFL_OK);
    uint8_t wa[32], wb[32];
    for (uint64_t t = 0; t < 4 * N; t++) {
        rifl_lane_tx(a, t, wa);
        rifl_lane_tx(b, t, wb);
        rifl_lane_rx(a, t, wb, NULL);
        rifl_lane_rx(b, t, wa, NULL);
    }
    uint8_t code, out[64];
    size_t n;
    CHECK_EQ_I(rifl_lane_read_ext(b, &code, out, sizeof out, &n), RIFL_OK);
    CHECK(code == 4 && n == 29 && memcmp(out, msg, 29) == 0);
    CHECK_EQ_I(rifl_lane_read_ext(b, &code, out, sizeof out, &n), RIFL_ERR_AGAIN);
    int eop;
    CHECK_EQ_I(rifl_lane_read(b, out, sizeof out, &n, &eop), RIFL_OK);
    CHECK(n == 5 && eop && memcmp(out, "hello", 5) == 0);
    rifl_lane_free(a);
    rifl_lane_free(b);
}

/* A packet far larger than the transmit queue goes through in parts and
 * arrives as one packet, byte for byte. */
static void t_packet_larger_than_queue(void)
{
    rifl_lane *a = make_lane(0), *b = make_lane(0); /* 64-frame queues */
    REQUIRE(a && b);
    enum { LEN = 100000 + 7 };
    static uint8_t pkt[LEN], got[LEN + 64];
    for (int i = 0; i < LEN; i++)
        pkt[i] = (uint8_t)(i * 31 + 7);
    CHECK_EQ_I(rifl_lane_send(a, pkt, LEN), RIFL_ERR_TOO_BIG);
    size_t sent = 0, have = 0, n;
    int eop = 0, ended = 0;
    uint8_t wa[32], wb[32];
    for (int t = 0; t < 20000 && !ended; t++) {
        if (sent < LEN) {
            size_t taken;
            CHECK_EQ_I(rifl_lane_send_part(a, pkt + sent, LEN - sent, 1, &taken), RIFL_OK);
            sent += taken;
        }
        rifl_lane_tx(a, (uint64_t)t, wa);
        rifl_lane_tx(b, (uint64_t)t, wb);
        rifl_lane_rx(a, (uint64_t)t, wb, NULL);
        rifl_lane_rx(b, (uint64_t)t, wa, NULL);
        while (!ended && rifl_lane_read(b, got + have, sizeof got - have, &n, &eop) == RIFL_OK) {
            have += n;
            ended = eop;
        }
    }
    CHECK(ended);
    CHECK_EQ_U(have, LEN);
    CHECK(memcmp(got, pkt, LEN) == 0);
    CHECK_EQ_U(rifl_lane_get_stats(a)->tx_packets, 1);
    CHECK_EQ_U(rifl_lane_get_stats(b)->rx_packets, 1);
    size_t taken;
    CHECK_EQ_I(rifl_lane_send_part(a, pkt, 0, 0, &taken), RIFL_ERR_INVALID_ARG);
    /* less than a frame without its end: nothing taken, and no refusal
     * (the queue has room) */
    uint64_t rejected = rifl_lane_get_stats(a)->tx_rejected;
    CHECK_EQ_I(rifl_lane_send_part(a, pkt, 5, 0, &taken), RIFL_OK);
    CHECK_EQ_U(taken, 0);
    CHECK_EQ_U(rifl_lane_get_stats(a)->tx_rejected, rejected);
    /* a length near SIZE_MAX is frames enough to never fit, not 0 of them:
     * only whole frames up to the room are taken */
    uint64_t packets = rifl_lane_get_stats(a)->tx_packets;
    size_t room = rifl_lane_send_space(a);
    CHECK_EQ_I(rifl_lane_send_part(a, pkt, SIZE_MAX, 1, &taken), RIFL_OK);
    CHECK_EQ_U(taken, room);
    CHECK_EQ_U(rifl_lane_get_stats(a)->tx_packets, packets);
    CHECK_EQ_U(rifl_lane_send_space(a), 0);
    CHECK_EQ_I(rifl_lane_send_part(a, pkt, 5, 0, &taken), RIFL_OK);
    CHECK_EQ_U(rifl_lane_get_stats(a)->tx_rejected, rejected + 1);
    /* compensation requests: a huge one is overdue, not wrapped */
    uint64_t overdue = rifl_lane_get_stats(a)->tx_comp_overdue;
    rifl_lane_add_pause_slots(a, 1);
    rifl_lane_add_pause_slots(a, UINT32_MAX);
    CHECK_EQ_U(rifl_lane_get_stats(a)->tx_comp_overdue, overdue + 1);
    rifl_lane_free(a);
    rifl_lane_free(b);
}

static void t_config_refusals(void)
{
    rifl_lane_config c = rifl_lane_default_config;
    char msg[512];
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_OK);
    c.frame_bits = 300;
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "use 64, 128, 256, 512, 1024 or 2048") != NULL);
    c = rifl_lane_default_config;
    c.fid_bits = 7; /* the reference 10 m link needs 8 */
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "smallest safe frame-ID width is 8") != NULL);
    c.fid_bits = 12;
    c.link.cable_m = 2000; /* ~2.5k frames of round trip */
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "too long") != NULL);
    c = rifl_lane_default_config;
    c.link.ns_per_m = -1;
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    c.link.ns_per_m = 1; /* faster than light */
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(msg, "faster than light") && strstr(msg, "use 5 ns/m"), "%s", msg);
    c.link.ns_per_m = RIFL_LINK_MIN_NS_PER_M;
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_OK);
    c = rifl_lane_default_config;
    c.rx_buffer_frames = 100; /* below 1.5 RTT */
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "1.5 round trips") != NULL);
    c = rifl_lane_default_config;
    c.fc_on_frames = 100;
    c.fc_off_frames = 200;
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    /* a peer with the hardware's replay tail of 2^(K-1): on the reference
     * 10 m link (RTT 115.75 frames) K = 8 gives 116 + 2 < 128; a 20 m link
     * (RTT 159.5) meets the sizing rule with K = 8 but needs K = 9 here */
    c = rifl_lane_default_config;
    c.reference_peer = true;
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_OK);
    c.link.cable_m = 20;
    c.reference_peer = false;
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_OK);
    c.reference_peer = true;
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "frame-ID width of at least 9") != NULL);
    c.fid_bits = 9;
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_OK);
    c.fid_bits = 12;
    c.link.cable_m = 900; /* RTT about 4000 frames: 2^11 is not enough */
    CHECK_EQ_I(rifl_lane_config_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "no frame-ID width up to 12") != NULL || strstr(msg, "too long") != NULL);
    /* the sizing rule, link rules §9: 10 m, 80 ns, 112 Gbit/s, 256 bits */
    CHECK_EQ_U(rifl_lane_min_fid_bits(&rifl_lane_default_config.link, 256, 2), 8);
    rifl_lane *l;
    CHECK_EQ_I(rifl_lane_create(NULL, &l, msg, sizeof msg), RIFL_ERR_INVALID_ARG);
}

/* The sizing rule on a round trip in frames: 2^K just covers 32 + RTT (a
 * round trip that makes 32 + RTT a power of two takes that power, a hair
 * more the next), at most 31; and on a link it is the rule on that link's
 * round trip. */
static void t_fid_bits_for_rtt(void)
{
    CHECK_EQ_U(rifl_lane_fid_bits_for_rtt(0), 5);
    CHECK_EQ_U(rifl_lane_fid_bits_for_rtt(0.5), 6);
    CHECK_EQ_U(rifl_lane_fid_bits_for_rtt(96), 7);
    CHECK_EQ_U(rifl_lane_fid_bits_for_rtt(97), 8);
    CHECK_EQ_U(rifl_lane_fid_bits_for_rtt(4064), 12);
    CHECK_EQ_U(rifl_lane_fid_bits_for_rtt(4064.25), 13);
    CHECK_EQ_U(rifl_lane_fid_bits_for_rtt(-32), 0);
    CHECK_EQ_U(rifl_lane_fid_bits_for_rtt(1e12), 31);
    rifl_link_params link = rifl_lane_default_config.link;
    const double cables[] = { 0, 10, 20, 100, 900 };
    for (unsigned i = 0; i < 5; i++) {
        link.cable_m = cables[i];
        for (unsigned w = 64; w <= 2048; w *= 2) {
            double rtt = rifl_link_rtt_frames(&link, w, 2);
            CHECK_MSG(rifl_lane_min_fid_bits(&link, w, 2) == rifl_lane_fid_bits_for_rtt(rtt),
                      "%g m, %u-bit frames: RTT %.2f", cables[i], w, rtt);
        }
    }
}

/* What rifl_lane_config_memory says before a lane exists is what the lane
 * then takes, over the settings that size it; a refused configuration
 * counts nothing. */
static void t_config_memory(void)
{
    rifl_lane_config c = rifl_lane_default_config;
    c.link.cable_m = 1;
    c.link.transceiver_ns = 0;
    const unsigned widths[] = { 64, 256, 2048 }, fids[] = { 6, 8, 12 };
    for (unsigned i = 0; i < 3; i++) {
        c.frame_bits = widths[i];
        c.fid_bits = fids[i];
        c.tx_queue_frames = 100 * (i + 1);
        c.rx_buffer_frames = i == 1 ? 5000 : 0;
        rifl_lane *l = NULL;
        char msg[256] = "";
        int rc = rifl_lane_create(&c, &l, msg, sizeof msg);
        CHECK_MSG(rc == RIFL_OK, "%s", msg);
        if (rc != RIFL_OK)
            continue;
        CHECK(rifl_lane_config_memory(&c) == rifl_lane_memory(l));
        CHECK(rifl_lane_memory(l) > 0);
        rifl_lane_free(l);
    }
    c.frame_bits = 100; /* not a width a lane takes */
    CHECK(rifl_lane_config_memory(&c) == 0);
    CHECK(rifl_lane_config_memory(NULL) == 0);
}

/* Frames by content (rifl_lane_tx_frame / rifl_lane_rx_frame) against wire
 * bytes, in lock step: two copies of a link, one carried as wire bytes and
 * one by content, with the same packets and the same corrupted frames
 * (one in 150, and a receiver is out of step after one in eight of them).  Every frame
 * sent, every receive result and every counter must agree. */
static void t_frames_by_content(void)
{
    rifl_lane *w[2] = { make_lane(4), make_lane(4) }; /* wire bytes */
    rifl_lane *c[2] = { make_lane(4), make_lane(4) }; /* by content */
    /* by content with the scrambler left to a batch encoder, as a datagram
     * PHY runs it: the frames gathered, encoded every 1 to 40 slots */
    rifl_lane *d[2] = { make_lane(4), make_lane(4) };
    REQUIRE(w[0] && w[1] && c[0] && c[1] && d[0] && d[1]);
    for (int i = 0; i < 2; i++)
        CHECK_EQ_I(rifl_lane_defer_scrambler(d[i], true), RIFL_OK);
    static rifl_lane_frame pend[2][40];
    static uint8_t pend_w[2][40][32], pend_enc[40 * 32];
    unsigned npend[2] = { 0, 0 }, deferred_bad = 0, deferred_frames = 0, refused = 0, flushes = 0;
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed * 977 + 5);
    enum { D = 3 };
    uint8_t inflight[2][D][32];
    rifl_lane_frame fr[2][D];
    bool hit[2][D] = { { false } };
    uint8_t pkt[200], buf[256];
    unsigned mismatched_tx = 0, mismatched_rx = 0, out_of_step = 0, hits = 0;
    uint64_t sniff[2] = { 0, 0 }; /* descrambler of the frames arriving at lane 1-i */
    /* the last frames sent by content and as wire bytes, for the batch
     * encoder: runs of them end at random slots */
    enum { H = 64 };
    static rifl_lane_frame hist_f[2][H];
    static uint8_t hist_w[2][H][32], batch[H * 32];
    unsigned batches = 0, batch_frames = 0, batch_bad = 0, controls = 0;
    for (unsigned t = 0; t < 60000; t++) {
        for (int i = 0; i < 2; i++) {
            if (rifl_rng_below(&rng, 8) == 0) {
                size_t len = 1 + rifl_rng_below(&rng, sizeof pkt);
                for (size_t k = 0; k < len; k++)
                    pkt[k] = (uint8_t)rifl_rng_next(&rng);
                int r1 = rifl_lane_send(w[i], pkt, len), r2 = rifl_lane_send(c[i], pkt, len);
                CHECK_EQ_U(r1, r2);
                CHECK_EQ_I(rifl_lane_send(d[i], pkt, len), r1);
            }
        }
        unsigned slot_i = t % D;
        for (int i = 0; i < 2; i++) {
            uint8_t *wire = inflight[i][slot_i];
            rifl_lane_frame f;
            uint8_t check[32];
            bool arrived = t >= D;
            /* the frames leaving now were sent D slots ago */
            uint8_t in_wire[32];
            if (arrived)
                memcpy(in_wire, wire, 32);
            rifl_lane_frame in_f = fr[i][slot_i]; /* frames are self-contained */
            bool in_hit = hit[i][slot_i];

            rifl_lane_tx(w[i], t, wire);
            rifl_lane_tx_frame(c[i], t, &f);
            rifl_lane_frame_encode(&f, F, check);
            if (memcmp(check, wire, 32) != 0)
                mismatched_tx++;
            hist_f[i][t % H] = f;
            memcpy(hist_w[i][t % H], wire, 32);
            rifl_lane_tx_frame(d[i], t, &pend[i][npend[i]]);
            memcpy(pend_w[i][npend[i]++], wire, 32);
            if (npend[i] == 40 || rifl_rng_below(&rng, 12) == 0) {
                uint8_t dummy[32];
                refused += rifl_lane_tx(d[i], t + 1, dummy) == RIFL_ERR_STATE;
                refused += rifl_lane_defer_scrambler(d[i], false) == RIFL_ERR_STATE;
                rifl_lane_phy_encode_batch(pend[i], sizeof pend[i][0], npend[i], pend_enc, d[i]);
                for (unsigned k = 0; k < npend[i]; k++)
                    deferred_bad += memcmp(pend_enc + k * 32, pend_w[i][k], 32) != 0;
                deferred_frames += npend[i];
                npend[i] = 0;
                flushes++;
            }
            controls += f.data == 0;
            if (t >= H && rifl_rng_below(&rng, 16) == 0) {
                unsigned r = 1 + (unsigned)rifl_rng_below(&rng, H), from = t + 1 - r;
                rifl_lane_frame run[H];
                for (unsigned k = 0; k < r; k++)
                    run[k] = hist_f[i][(from + k) % H];
                CHECK_EQ_I(rifl_lane_frames_encode(run, sizeof run[0], r, F, batch, NULL), RIFL_OK);
                for (unsigned k = 0; k < r; k++)
                    batch_bad += memcmp(batch + k * 32, hist_w[i][(from + k) % H], 32) != 0;
                batches++;
                batch_frames += r;
            }
            fr[i][slot_i] = f;
            hit[i][slot_i] = rifl_rng_below(&rng, 150) == 0;
            if (hit[i][slot_i]) {
                unsigned nbits = 1 + (unsigned)rifl_rng_below(&rng, 3);
                for (unsigned b = 0; b < nbits; b++) {
                    unsigned bit = (unsigned)rifl_rng_below(&rng, F);
                    wire[bit >> 3] ^= (uint8_t)(0x80u >> (bit & 7));
                }
                hits++;
            }
            if (!arrived)
                continue;
            rifl_lane *rw = w[1 - i], *rc = c[1 - i];
            int a = rifl_lane_rx(rw, t, in_wire, NULL);
            int b;
            if (!in_hit && sniff[i] != in_f.scr)
                out_of_step++; /* clean, but the receiver decodes it wrong */
            rifl_frame_info fi;
            rifl_frame_decode(in_wire, F, &sniff[i], NULL, &fi);
            if (in_hit)
                b = rifl_lane_rx(rc, t, in_wire, NULL);
            else
                b = rifl_lane_rx_frame(rc, t, &in_f, NULL);
            if (a != b)
                mismatched_rx++;
            if (rifl_lane_rx(d[1 - i], t, in_wire, NULL) != a)
                mismatched_rx++;
        }
        for (int i = 0; i < 2; i++) {
            size_t n1 = 0, n2 = 0;
            int e1 = 0, e2 = 0;
            while (rifl_lane_read(w[i], buf, sizeof buf, &n1, &e1) == RIFL_OK) {
                uint8_t other[256];
                CHECK(rifl_lane_read(c[i], other, sizeof other, &n2, &e2) == RIFL_OK);
                CHECK(n1 == n2 && e1 == e2 && memcmp(buf, other, n1) == 0);
            }
            CHECK(rifl_lane_read(c[i], buf, sizeof buf, &n2, &e2) == RIFL_ERR_AGAIN);
            while (rifl_lane_read(d[i], buf, sizeof buf, &n2, &e2) == RIFL_OK)
                ;
        }
    }
    printf("  %u corrupted frames, %u clean frames after them rejected\n", hits, out_of_step);
    printf("  %u batches of %u frames encoded (%u control frames sent)\n", batches, batch_frames,
           controls);
    CHECK_EQ_U(batch_bad, 0);
    printf("  %u frames encoded with the scrambler deferred\n", deferred_frames);
    CHECK_EQ_U(deferred_bad, 0);
    CHECK(deferred_frames > 100000);
    /* while frames wait for the encoder, no frame-at-a-time call */
    CHECK_EQ_U(refused, 2 * flushes);
    CHECK(flushes > 1000);
    CHECK(batches > 5000 && controls > 1000);
    /* records of no one stream: each run is encoded from its own state */
    {
        rifl_lane_frame two[2] = { hist_f[0][0], hist_f[1][0] };
        uint8_t a[32], b[32];
        CHECK_EQ_I(rifl_lane_frames_encode(two, sizeof two[0], 2, F, batch, NULL), RIFL_OK);
        rifl_lane_frame_encode(&two[0], F, a);
        rifl_lane_frame_encode(&two[1], F, b);
        CHECK(memcmp(batch, a, 32) == 0 && memcmp(batch + 32, b, 32) == 0);
        CHECK_EQ_I(rifl_lane_frames_encode(two, 8, 2, F, batch, NULL), RIFL_ERR_INVALID_ARG);
        CHECK_EQ_I(rifl_lane_frames_encode(NULL, sizeof two[0], 2, F, batch, NULL),
                   RIFL_ERR_INVALID_ARG);
        CHECK_EQ_I(rifl_lane_frames_encode(two, sizeof two[0], 0, F, NULL, NULL), RIFL_OK);
    }
    CHECK_EQ_U(mismatched_tx, 0);
    CHECK_EQ_U(mismatched_rx, 0);
    CHECK(hits > 500 && out_of_step > 30);
    for (int i = 0; i < 2; i++) {
        CHECK(memcmp(rifl_lane_get_stats(w[i]), rifl_lane_get_stats(c[i]),
                     sizeof(rifl_lane_stats)) == 0);
        CHECK(rifl_lane_get_stats(w[i])->rx_delivered[RIFL_KIND_DATA] > 1000);
    }
    /* asked for the decoded frame, the lane decodes for real */
    rifl_lane_frame f;
    uint8_t wire[32];
    rifl_lane_tx_frame(c[0], 60000, &f);
    rifl_lane_frame_encode(&f, F, wire);
    rifl_frame_info fi1, fi2;
    rifl_frame_decode(wire, F, &sniff[0], NULL, &fi1);
    rifl_lane_rx_frame(c[1], 60000, &f, &fi2);
    CHECK(fi1.id == fi2.id && fi1.crc == fi2.crc && fi1.vcode == fi2.vcode &&
          fi1.key == fi2.key && fi1.kind == fi2.kind);
    CHECK(rifl_lane_rx_frame(NULL, 0, &f, NULL) == RIFL_ERR_INVALID_ARG);
    CHECK(rifl_lane_tx_frame(c[0], 60001, NULL) == RIFL_ERR_INVALID_ARG);
    CHECK(rifl_lane_frame_encode(&f, 100, wire) == RIFL_ERR_INVALID_ARG);
    for (int i = 0; i < 2; i++) {
        CHECK(rifl_lane_get_stats(d[i])->rx_delivered[RIFL_KIND_DATA] ==
              rifl_lane_get_stats(w[i])->rx_delivered[RIFL_KIND_DATA]);
        CHECK(rifl_lane_get_stats(d[i])->tx_frames[RIFL_KIND_DATA] ==
              rifl_lane_get_stats(w[i])->tx_frames[RIFL_KIND_DATA]);
        /* caught up: back to the frame-at-a-time calls */
        rifl_lane_phy_encode_batch(pend[i], sizeof pend[i][0], npend[i], pend_enc, d[i]);
        CHECK_EQ_I(rifl_lane_defer_scrambler(d[i], false), RIFL_OK);
        rifl_lane_free(w[i]);
        rifl_lane_free(c[i]);
        rifl_lane_free(d[i]);
    }
}

/* Frames received in bunches (rifl_lane_rx_batch) against one call per
 * frame: two copies of a link driven alike, their frames held back and let
 * through 0 to 4 at a time in the same slots, one in 400 corrupted, the
 * receiving lanes taking a bunch in one batch call in one copy and frame by
 * frame in the other.  Every frame sent, every packet read and every
 * counter must agree. */
static void t_rx_batch(void)
{
    rifl_lane *a[2] = { make_lane(4), make_lane(4) }; /* frame by frame */
    rifl_lane *b[2] = { make_lane(4), make_lane(4) }; /* in bunches */
    REQUIRE(a[0] && a[1] && b[0] && b[1]);
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed * 131 + 7);
    enum { Q = 16 };
    uint8_t q[2][Q][32], pkt[200], buf[256], other[256];
    unsigned head[2] = { 0, 0 }, count[2] = { 0, 0 }, tx_bad = 0, bunches = 0, hits = 0;
    for (unsigned t = 0; t < 50000; t++) {
        for (int i = 0; i < 2; i++)
            if (rifl_rng_below(&rng, 8) == 0) {
                size_t len = 1 + rifl_rng_below(&rng, sizeof pkt);
                for (size_t k = 0; k < len; k++)
                    pkt[k] = (uint8_t)rifl_rng_next(&rng);
                CHECK_EQ_I(rifl_lane_send(a[i], pkt, len), rifl_lane_send(b[i], pkt, len));
            }
        for (int i = 0; i < 2; i++) {
            uint8_t wa[32], wb[32];
            rifl_lane_tx(a[i], t, wa);
            rifl_lane_tx(b[i], t, wb);
            tx_bad += memcmp(wa, wb, 32) != 0;
            if (rifl_rng_below(&rng, 400) == 0) {
                unsigned bit = (unsigned)rifl_rng_below(&rng, F);
                wa[bit >> 3] ^= (uint8_t)(0x80u >> (bit & 7));
                hits++;
            }
            REQUIRE(count[i] < Q);
            memcpy(q[i][(head[i] + count[i]++) % Q], wa, 32);
        }
        for (int i = 0; i < 2; i++) {
            /* a bunch: the oldest k frames, contiguous */
            unsigned k = count[i] >= 4 ? count[i] : (unsigned)rifl_rng_below(&rng, count[i] + 1);
            uint8_t bunch[Q * 32];
            for (unsigned j = 0; j < k; j++)
                memcpy(bunch + j * 32, q[i][(head[i] + j) % Q], 32);
            head[i] = (head[i] + k) % Q;
            count[i] -= k;
            if (!k)
                rifl_lane_rx(a[1 - i], t, NULL, NULL);
            for (unsigned j = 0; j < k; j++)
                rifl_lane_rx(a[1 - i], t, bunch + j * 32, NULL);
            CHECK_EQ_I(rifl_lane_rx_batch(b[1 - i], t, bunch, k), RIFL_OK);
            bunches += k > 1;
        }
        for (int i = 0; i < 2; i++) {
            size_t n1 = 0, n2 = 0;
            int e1 = 0, e2 = 0;
            while (rifl_lane_read(a[i], buf, sizeof buf, &n1, &e1) == RIFL_OK) {
                CHECK(rifl_lane_read(b[i], other, sizeof other, &n2, &e2) == RIFL_OK);
                CHECK(n1 == n2 && e1 == e2 && memcmp(buf, other, n1) == 0);
            }
            CHECK(rifl_lane_read(b[i], buf, sizeof buf, &n2, &e2) == RIFL_ERR_AGAIN);
        }
    }
    printf("  %u bunches of two or more frames, %u frames corrupted\n", bunches, hits);
    CHECK_EQ_U(tx_bad, 0);
    CHECK(bunches > 20000 && hits > 150);
    for (int i = 0; i < 2; i++) {
        CHECK(memcmp(rifl_lane_get_stats(a[i]), rifl_lane_get_stats(b[i]),
                     sizeof(rifl_lane_stats)) == 0);
        CHECK(rifl_lane_get_stats(a[i])->rx_delivered[RIFL_KIND_DATA] > 1000);
        CHECK(rifl_lane_get_stats(a[i])->tx_replay_cycles > 50);
    }
    CHECK_EQ_I(rifl_lane_rx_batch(b[0], 1, buf, 1), RIFL_ERR_STATE); /* a slot gone by */
    CHECK_EQ_I(rifl_lane_rx_batch(b[0], 50000, NULL, 1), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_lane_rx_batch(NULL, 50000, buf, 1), RIFL_ERR_INVALID_ARG);
    for (int i = 0; i < 2; i++) {
        rifl_lane_free(a[i]);
        rifl_lane_free(b[i]);
    }
}

/* Time: the transmit side takes every slot once, in order; the receive side
 * any number of frames per slot, never going back.  Refused calls change
 * nothing but their counter. */
static void t_slot_rule(void)
{
    rifl_lane *l = make_lane(0);
    REQUIRE(l);
    uint8_t w[32], w2[32];
    CHECK_EQ_I(rifl_lane_tx(l, 1000, w), RIFL_OK); /* the first call sets the count */
    CHECK_EQ_I(rifl_lane_tx(l, 1001, w), RIFL_OK);
    memset(w2, 0xA5, sizeof w2);
    CHECK_EQ_I(rifl_lane_tx(l, 1001, w2), RIFL_ERR_STATE); /* repeated */
    CHECK_EQ_I(rifl_lane_tx(l, 1003, w2), RIFL_ERR_STATE); /* skipped */
    CHECK_EQ_U(w2[0], 0xA5);                               /* nothing written */
    CHECK_EQ_U(rifl_lane_get_stats(l)->tx_slots, 2);
    rifl_lane_frame f;
    CHECK_EQ_I(rifl_lane_tx_frame(l, 1000, &f), RIFL_ERR_STATE);
    CHECK_EQ_I(rifl_lane_tx_frame(l, 1002, &f), RIFL_OK);
    CHECK_EQ_I(rifl_lane_rx(l, 1001, NULL, NULL), RIFL_RX_EMPTY);
    CHECK_EQ_I(rifl_lane_rx(l, 1002, w, NULL) >= 0, 1);
    CHECK_EQ_I(rifl_lane_rx(l, 1002, NULL, NULL), RIFL_RX_EMPTY); /* two in one slot */
    CHECK_EQ_I(rifl_lane_rx(l, 1001, NULL, NULL), RIFL_ERR_STATE); /* back in time */
    CHECK_EQ_I(rifl_lane_rx_frame(l, 1000, NULL, NULL), RIFL_ERR_STATE);
    CHECK_EQ_U(rifl_lane_get_stats(l)->rx_slots, 3);
    CHECK_EQ_U(rifl_lane_get_stats(l)->slot_errors, 5);
    rifl_lane_free(l);
}

/* A serial lane's inputs (rifl-multilane §2, §4.3): the power-up hold sends
 * PAUSE with ID 0 and delays INIT; while the group is down the lane sends
 * PAUSE; while aligned but not up only the key monitor sees frames, and
 * the expected ID, threshold and frame_error stay as they were. */
static void t_serial_lane_inputs(void)
{
    rifl_lane *l = make_lane(0);
    REQUIRE(l);
    struct peer p = { 0 };
    rifl_frame_info fi;
    uint8_t pay[30] = { 0 };
    CHECK_EQ_I(rifl_lane_hold_tx(l, true), RIFL_OK);
    CHECK(rifl_lane_get_flags(l).tx_hold);
    for (unsigned i = 0; i < 3 * N; i++) {
        slot(l, &p, NULL, &fi, NULL);
        CHECK(fi.kind == RIFL_KIND_CONTROL && fi.key == RIFL_KEY_PAUSE && fi.id == 0);
    }
    CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_INIT);
    CHECK_EQ_I(rifl_lane_hold_tx(l, false), RIFL_OK);
    /* released: INIT takes its 2^K slots from here */
    for (unsigned i = 0; i < N; i++) {
        slot(l, &p, NULL, &fi, NULL);
        CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_INIT);
    }
    CHECK_EQ_I(rifl_lane_hold_tx(l, true), RIFL_ERR_STATE);
    CHECK(!rifl_lane_get_flags(l).tx_hold);
    /* group down: SEND_PAUSE although this lane is aligned */
    rifl_lane_set_group_up(l, false);
    rifl_lane_set_rx_up(l, false);
    for (unsigned i = 0; i < 4; i++) {
        CHECK_EQ_I(slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL), RIFL_RX_NOT_UP);
        CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_SEND_PAUSE);
        CHECK_EQ_U(fi.key, RIFL_KEY_PAUSE);
    }
    /* its own receiver not up, the group left up: SEND_PAUSE as well */
    rifl_lane_set_group_up(l, true);
    for (unsigned i = 0; i < 2; i++) {
        CHECK_EQ_I(slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL), RIFL_RX_NOT_UP);
        CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_SEND_PAUSE);
        CHECK_EQ_U(fi.key, RIFL_KEY_PAUSE);
        CHECK(!rifl_lane_tx_ready(l));
    }
    rifl_lane_set_group_up(l, false);
    /* not up: the monitor still counts keys (8 PAUSE raise the flag), and
     * no frame is verified or stored */
    for (unsigned i = 0; i < 8; i++)
        CHECK_EQ_I(slot(l, &p, ctl(&p, RIFL_KEY_PAUSE), &fi, NULL), RIFL_RX_NOT_UP);
    CHECK(rifl_lane_get_flags(l).peer_pause);
    unsigned rfid = rifl_lane_expected_id(l);
    p.fid = 40; /* an ID the lane does not expect: would fail verification */
    CHECK_EQ_I(slot(l, &p, data(&p, RIFL_META_FULL_EOP, pay), &fi, NULL), RIFL_RX_NOT_UP);
    CHECK_EQ_U(rifl_lane_expected_id(l), rfid);
    CHECK(!rifl_lane_get_flags(l).frame_error);
    CHECK_EQ_U(rifl_lane_get_stats(l)->rx_verify_fail, 0);
    CHECK_EQ_U(rifl_lane_get_stats(l)->rx_not_up, 15);
    CHECK_EQ_U(rifl_lane_rx_backlog(l), 0);
    /* up again: verification resumes where it stopped */
    rifl_lane_set_rx_up(l, true);
    rifl_lane_set_group_up(l, true);
    p.fid = rfid;
    CHECK_EQ_I(slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL), RIFL_RX_CONTROL);
    CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_PAUSE); /* the PAUSE flag was still up */
    CHECK_EQ_I(slot(l, &p, filler(&p), &fi, NULL), RIFL_RX_SKIPPED);
    CHECK_EQ_U(rifl_lane_expected_id(l), (rfid + 1) & (N - 1));
    CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_NORMAL);
    CHECK(rifl_lane_get_flags(l).rx_up && rifl_lane_get_flags(l).group_up);
    rifl_lane_set_rx_aligned(NULL, false); /* (no lane: nothing, no crash) */
    /* alignment set from outside stays the caller's: legal frames do not
     * lock the lane again */
    rifl_lane_set_rx_aligned(l, false);
    for (unsigned i = 0; i < 100; i++)
        CHECK_EQ_I(slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL), RIFL_RX_NOT_ALIGNED);
    CHECK(!rifl_lane_get_flags(l).rx_aligned);
    rifl_lane_set_rx_aligned(l, true);
    CHECK_EQ_I(slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL), RIFL_RX_CONTROL);
    rifl_lane_free(l);
}

/* The hold of a serial lane (rx_hold_frames): a frame accepted becomes
 * readable only after that many more frames arrived aligned; an unlock
 * drops the held frames and rolls the lane back so the peer replays them,
 * and nothing is read twice. */
static void t_serial_hold(void)
{
    rifl_lane_config c = rifl_lane_default_config;
    c.frame_bits = F;
    c.fid_bits = K;
    c.link.cable_m = 1;
    c.link.transceiver_ns = 0;
    c.rx_lock_frames = 0;
    c.tx_queue_frames = 64;
    c.rx_hold_frames = 4;
    rifl_lane *l = NULL;
    REQUIRE(rifl_lane_create(&c, &l, NULL, 0) == RIFL_OK);
    struct peer p = { 0 };
    rifl_frame_info fi;
    bring_up(l, &p);
    rifl_lane_set_rx_aligned(l, true); /* alignment from outside: the hold applies */
    uint8_t pay[30] = { 0 }, buf[64];
    size_t n;
    int eop;
    pay[0] = 0xA1;
    CHECK_EQ_I(slot(l, &p, data(&p, RIFL_META_FULL_EOP, pay), &fi, NULL), RIFL_RX_DELIVERED);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_I(rifl_lane_read(l, buf, sizeof buf, &n, &eop), RIFL_ERR_AGAIN);
        slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
    }
    CHECK_EQ_I(rifl_lane_read(l, buf, sizeof buf, &n, &eop), RIFL_ERR_AGAIN);
    CHECK_EQ_U(rifl_lane_rx_backlog(l), 1); /* it holds its place in the buffer */
    slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL); /* the 4th frame after it */
    CHECK_EQ_I(rifl_lane_read(l, buf, sizeof buf, &n, &eop), RIFL_OK);
    CHECK(n == 30 && eop && buf[0] == 0xA1);
    /* two more accepted, then the aligner unlocks: both dropped */
    unsigned first = p.fid;
    uint64_t delivered = rifl_lane_get_stats(l)->rx_delivered[RIFL_KIND_DATA];
    for (int i = 0; i < 2; i++) {
        pay[0] = (uint8_t)(0xB0 + i);
        CHECK_EQ_I(slot(l, &p, data(&p, RIFL_META_FULL_EOP, pay), &fi, NULL), RIFL_RX_DELIVERED);
    }
    CHECK_EQ_U(rifl_lane_get_stats(l)->rx_delivered[RIFL_KIND_DATA], delivered);
    rifl_lane_set_rx_aligned(l, false);
    CHECK_EQ_U(rifl_lane_get_stats(l)->rx_hold_dropped, 2);
    CHECK_EQ_U(rifl_lane_rx_backlog(l), 0);
    CHECK(rifl_lane_get_flags(l).frame_error);
    CHECK_EQ_U(rifl_lane_expected_id(l), (first - 16) & (N - 1));
    CHECK_EQ_I(rifl_lane_read(l, buf, sizeof buf, &n, &eop), RIFL_ERR_AGAIN);
    /* aligned again; the peer replays from 16 frames before: the two come
     * once, after the hold */
    rifl_lane_set_rx_aligned(l, true);
    p.fid = (first - 16) & (N - 1);
    for (int i = 0; i < 16; i++)
        CHECK_EQ_I(slot(l, &p, filler(&p), &fi, NULL), RIFL_RX_SKIPPED);
    CHECK(!rifl_lane_get_flags(l).frame_error);
    for (int i = 0; i < 2; i++) {
        pay[0] = (uint8_t)(0xB0 + i);
        CHECK_EQ_I(slot(l, &p, data(&p, RIFL_META_FULL_EOP, pay), &fi, NULL), RIFL_RX_DELIVERED);
    }
    for (int i = 0; i < 4; i++)
        slot(l, &p, ctl(&p, RIFL_KEY_IDLE), &fi, NULL);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_I(rifl_lane_read(l, buf, sizeof buf, &n, &eop), RIFL_OK);
        CHECK(n == 30 && buf[0] == 0xB0 + i);
    }
    CHECK_EQ_I(rifl_lane_read(l, buf, sizeof buf, &n, &eop), RIFL_ERR_AGAIN);
    CHECK_EQ_U(rifl_lane_get_stats(l)->rx_delivered[RIFL_KIND_DATA], delivered + 2);
    rifl_lane_free(l);
}

/* rifl_lane_tx_ready predicts the next slot exactly: over a lossy link with
 * replays, flow control (slow readers), extension frames and compensation
 * slots, a lane that says ready sends its queue's head frame, and one that
 * does not sends no user frame.  Frames placed one at a time come out whole
 * and in order through rifl_lane_peek_frame / rifl_lane_pop_frame. */
static void t_tx_ready_predicts(void)
{
    rifl_pair_config pc = { .lane = rifl_lane_default_config, .ber = { 1e-6, 1e-6 },
                            .seed = { test_seed * 3, test_seed * 5 } };
    pc.lane.rx_buffer_frames = 512;
    rifl_pair *p = NULL;
    REQUIRE(rifl_pair_create(&pc, &p, NULL, 0) == RIFL_OK);
    rifl_rng r;
    rifl_rng_seed(&r, test_seed * 7);
    unsigned pb = rifl_payload_bytes(pc.lane.frame_bits);
    uint64_t sent[2] = { 0, 0 }, got[2] = { 0, 0 }, wrong = 0, mispredicted = 0, ready_n = 0;
    uint8_t buf[64];
    unsigned slots = test_long_run ? 2000000 : 200000;
    for (unsigned t = 0; t < slots; t++) {
        bool ready[2];
        unsigned backlog[2];
        uint64_t data[2];
        for (int i = 0; i < 2; i++) {
            rifl_lane *l = p->lane[i];
            /* frames numbered by their first byte pairs; last frames shorter */
            while (rifl_lane_tx_backlog(l) < 8) {
                bool end = rifl_rng_below(&r, 4) == 0;
                size_t len = end ? 1 + rifl_rng_below(&r, pb) : pb;
                memset(buf, 0, sizeof buf);
                memcpy(buf, &sent[i], 4);
                if (rifl_lane_send_frame(l, buf, len < 4 ? 4 : len, end) != RIFL_OK)
                    break;
                sent[i]++;
            }
            if (rifl_rng_below(&r, 5000) == 0)
                rifl_lane_add_pause_slots(l, 1 + (unsigned)rifl_rng_below(&r, 3));
            if (rifl_rng_below(&r, 3000) == 0)
                rifl_lane_send_ext(l, RIFL_FMT_EXT_MIN, "x", 1);
            ready[i] = rifl_lane_tx_ready(l);
            backlog[i] = rifl_lane_tx_backlog(l);
            data[i] = rifl_lane_get_stats(l)->tx_frames[RIFL_KIND_DATA];
        }
        rifl_pair_step(p, NULL);
        for (int i = 0; i < 2; i++) {
            rifl_lane *l = p->lane[i];
            uint64_t d = rifl_lane_get_stats(l)->tx_frames[RIFL_KIND_DATA] - data[i];
            ready_n += ready[i];
            if (d != (ready[i] && backlog[i] ? 1u : 0u))
                mispredicted++;
            /* slow readers now and then, so flow control turns on */
            if ((t / 20000) % 3 == 2)
                continue;
            const uint8_t *f;
            size_t n;
            bool end;
            uint8_t code, ext[64];
            while (rifl_lane_read_ext(l, &code, ext, sizeof ext, &n) == RIFL_OK)
                ; /* extension frames are read too, or their queue fills */
            while (rifl_lane_peek_frame(l, &f, &n, &end) == RIFL_OK) {
                uint32_t idx;
                memcpy(&idx, f, 4);
                wrong += idx != (uint32_t)got[i];
                got[i]++;
                rifl_lane_pop_frame(l);
            }
        }
    }
    CHECK_EQ_U(mispredicted, 0);
    CHECK_EQ_U(wrong, 0);
    CHECK(ready_n > slots / 4 && ready_n < 2 * (uint64_t)slots);
    CHECK(got[0] > 1000 && got[1] > 1000);
    const rifl_lane_stats *a = rifl_lane_get_stats(p->lane[0]);
    CHECK(a->tx_replay_cycles > 0 && a->fc_on_sent > 0 && a->tx_clock_comp > 0 && a->tx_ext > 0);
    rifl_pair_free(p);
}

/* Lane tags (rifl-multilane §5.1): every control frame carries 0xA5, the
 * lane's number and the lane count after its key, its CRC over them; the
 * key reads as before; content and wire bytes agree; a receiver decides
 * after 8 agreeing tags whether they name it. */
static void t_lane_tags(void)
{
    rifl_lane_config c = rifl_lane_default_config;
    c.lane_tags = true;
    c.lane_index = 2;
    c.lane_count = 4;
    rifl_lane *a = NULL, *b = NULL;
    REQUIRE(rifl_lane_create(&c, &a, NULL, 0) == RIFL_OK);
    REQUIRE(rifl_lane_create(&c, &b, NULL, 0) == RIFL_OK);
    uint64_t descr = 0;
    bool first = true;
    unsigned wrong = 0;
    for (uint64_t t = 0; t < 300; t++) {
        uint8_t w[32], w2[32], pay[30];
        rifl_lane_frame f;
        rifl_lane_tx(a, t, w);
        rifl_lane_tx_frame(b, t, &f);
        rifl_lane_frame_encode(&f, 256, w2);
        wrong += memcmp(w, w2, 32) != 0;
        rifl_frame_info fi;
        if (first) { /* the descrambler finds its state from the first frame */
            descr = f.scr;
            first = false;
        }
        int rc = rifl_frame_decode(w, 256, &descr, pay, &fi);
        if (fi.kind == RIFL_KIND_CONTROL) {
            CHECK(rc == RIFL_OK && fi.id == f.id && f.data == 2);
            CHECK(fi.key == RIFL_KEY_PAUSE);
            CHECK(pay[2] == 0xA5 && pay[3] == 2 && pay[4] == 4);
        }
    }
    CHECK_EQ_U(wrong, 0);
    /* a receiver with tags: 8 tags naming it make it tag_ok; 8 naming lane
     * 1 make a swap; an untagged control frame restarts the count */
    rifl_lane_config rc_ = rifl_lane_default_config;
    rc_.frame_bits = F;
    rc_.fid_bits = K;
    rc_.link.cable_m = 1;
    rc_.link.transceiver_ns = 0;
    rc_.rx_lock_frames = 0;
    rc_.lane_tags = true;
    rc_.lane_index = 2;
    rc_.lane_count = 4;
    rifl_lane *l = NULL;
    REQUIRE(rifl_lane_create(&rc_, &l, NULL, 0) == RIFL_OK);
    struct peer p = { 0 };
    rifl_frame_info fi;
    uint8_t tagged[30] = { 0 };
    tagged[0] = RIFL_KEY_PAUSE >> 6;
    tagged[1] = (RIFL_KEY_PAUSE & 0x3F) << 2;
    tagged[2] = 0xA5;
    tagged[3] = 2;
    tagged[4] = 4;
    for (int i = 0; i < 7; i++) {
        rifl_frame_encode(p.wire, F, RIFL_SYN_CONTROL, 0, tagged, p.fid, &p.scr);
        slot(l, &p, p.wire, &fi, NULL);
    }
    CHECK(!rifl_lane_get_flags(l).tag_ok);
    CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_INIT);
    slot(l, &p, ctl(&p, RIFL_KEY_PAUSE), &fi, NULL); /* untagged: starts again */
    CHECK_EQ_U(rifl_lane_get_stats(l)->rx_untagged, 1);
    for (int i = 0; i < 8; i++) {
        rifl_frame_encode(p.wire, F, RIFL_SYN_CONTROL, 0, tagged, p.fid, &p.scr);
        slot(l, &p, p.wire, &fi, NULL);
    }
    CHECK(rifl_lane_get_flags(l).tag_ok);
    tagged[3] = 1;
    for (int i = 0; i < 8; i++) {
        rifl_frame_encode(p.wire, F, RIFL_SYN_CONTROL, 0, tagged, p.fid, &p.scr);
        slot(l, &p, p.wire, &fi, NULL);
    }
    CHECK(!rifl_lane_get_flags(l).tag_ok);
    CHECK_EQ_U(rifl_lane_get_stats(l)->rx_lane_swap, 1);
    /* a lane whose tags are wrong sends PAUSE once out of INIT */
    for (unsigned i = 0; i < N; i++)
        slot(l, &p, NULL, &fi, NULL);
    CHECK_EQ_U(rifl_lane_state(l), RIFL_TX_SEND_PAUSE);
    CHECK(!rifl_lane_tx_ready(l));
    rifl_lane_free(l);
    rifl_lane_free(a);
    rifl_lane_free(b);
    c.lane_index = 4;
    CHECK_EQ_I(rifl_lane_create(&c, &a, NULL, 0), RIFL_ERR_CONFIG);
}

/* frames by reference: two links fed the same packets, one carrying frames
 * by content throughout, the other by reference from slot 3000 to 9000 (then
 * by content again, the references still in flight built by content, oldest
 * first), count the same and deliver the same bytes in every slot; bad
 * references are refused */
struct carried {
    bool by_ref;
    rifl_lane_ref ref;
    rifl_lane_frame fr;
};

static void t_frames_by_reference(void)
{
    rifl_lane *c[2] = { make_lane(4), make_lane(4) };
    rifl_lane *r[2] = { make_lane(4), make_lane(4) };
    REQUIRE(c[0] && c[1] && r[0] && r[1]);
    enum { D = 3 };
    static rifl_lane_frame fc[2][D];
    static struct carried fr[2][D];
    uint8_t pkt[300], b1[600], b2[600];
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed * 131 + 7);
    unsigned stat_diffs = 0, read_diffs = 0, rc_diffs = 0;
    uint64_t bytes = 0;
    for (unsigned t = 0; t < 12000; t++) {
        bool by_ref = t >= 3000 && t < 9000;
        if (t == 9000)
            for (int i = 0; i < 2; i++)
                for (unsigned k = 0; k < D; k++) {
                    struct carried *e = &fr[i][(t + k) % D];
                    if (e->by_ref)
                        CHECK_EQ_I(rifl_lane_ref_frame(r[i], &e->ref, &e->fr), RIFL_OK);
                    e->by_ref = false;
                }
        for (int i = 0; i < 2; i++) {
            size_t len = 1 + rifl_rng_below(&rng, sizeof pkt);
            for (size_t k = 0; k < len; k++)
                pkt[k] = (uint8_t)rifl_rng_next(&rng);
            rc_diffs += rifl_lane_send(c[i], pkt, len) != rifl_lane_send(r[i], pkt, len);
        }
        rifl_lane_frame oc[2];
        struct carried orr[2];
        unsigned e = t % D;
        for (int i = 0; i < 2; i++) {
            oc[i] = fc[i][e];
            orr[i] = fr[i][e];
            CHECK_EQ_I(rifl_lane_tx_frame(c[i], t, &fc[i][e]), RIFL_OK);
            fr[i][e].by_ref = by_ref;
            if (by_ref)
                CHECK_EQ_I(rifl_lane_tx_ref(r[i], t, &fr[i][e].ref), RIFL_OK);
            else
                CHECK_EQ_I(rifl_lane_tx_frame(r[i], t, &fr[i][e].fr), RIFL_OK);
        }
        for (int i = 0; i < 2; i++) {
            const struct carried *o = &orr[1 - i];
            int a = rifl_lane_rx_frame(c[i], t, t >= D ? &oc[1 - i] : NULL, NULL);
            int b = t < D ? rifl_lane_rx_frame(r[i], t, NULL, NULL)
                    : o->by_ref ? rifl_lane_rx_ref(r[i], t, &o->ref)
                                : rifl_lane_rx_frame(r[i], t, &o->fr, NULL);
            rc_diffs += a != b;
            size_t n1 = 0, n2 = 0;
            int e1 = 0, e2 = 0;
            rifl_lane_read(c[i], b1, sizeof b1, &n1, &e1);
            rifl_lane_read(r[i], b2, sizeof b2, &n2, &e2);
            read_diffs += n1 != n2 || e1 != e2 || memcmp(b1, b2, n1) != 0;
            bytes += n1;
            stat_diffs += memcmp(rifl_lane_get_stats(c[i]), rifl_lane_get_stats(r[i]),
                                 sizeof(rifl_lane_stats)) != 0;
        }
    }
    CHECK_EQ_U(stat_diffs, 0);
    CHECK_EQ_U(read_diffs, 0);
    CHECK_EQ_U(rc_diffs, 0);
    CHECK(bytes > 100000);
    CHECK(rifl_lane_get_stats(r[0])->tx_frames[RIFL_KIND_DATA] > 1000);
    /* refused: an ID beyond 2^K, a tagged or unknown kind, a data frame
     * without its record, NULL */
    rifl_lane_ref bad = { NULL, 0, (uint16_t)(1u << K), 0 };
    CHECK_EQ_I(rifl_lane_rx_ref(r[0], 20000, &bad), RIFL_ERR_INVALID_ARG);
    bad = (rifl_lane_ref){ NULL, 0, 1, 2 };
    CHECK_EQ_I(rifl_lane_rx_ref(r[0], 20000, &bad), RIFL_ERR_INVALID_ARG);
    bad = (rifl_lane_ref){ NULL, 0, 1, 1 };
    CHECK_EQ_I(rifl_lane_rx_ref(r[0], 20000, &bad), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_lane_ref_frame(r[0], &bad, &fr[0][0].fr), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_lane_tx_ref(r[0], 20000, NULL), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_lane_rx_ref(NULL, 0, NULL), RIFL_ERR_INVALID_ARG);
    for (int i = 0; i < 2; i++) {
        rifl_lane_free(c[i]);
        rifl_lane_free(r[i]);
    }
}

TEST_MAIN({ "init_and_pause_states", t_init_and_pause_states },
          { "pause_asks_replay", t_pause_asks_replay },
          { "illegal_syn_keeps_frame_error", t_illegal_syn_keeps_frame_error },
          { "slot_rule", t_slot_rule },
          { "monitor_rule", t_monitor_rule },
          { "monitor_startup_sequence", t_monitor_startup_sequence },
          { "user_data_after_fillers", t_user_data_after_fillers },
          { "replay_tail_length", t_replay_tail_length },
          { "normal_fillers_then_data", t_normal_fillers_then_data },
          { "receiver_rule", t_receiver_rule },
          { "retransmit_cycle", t_retransmit_cycle },
          { "flow_control", t_flow_control },
          { "extension_frames", t_extension_frames },
          { "frames_by_content", t_frames_by_content }, { "rx_batch", t_rx_batch },
          { "frames_by_reference", t_frames_by_reference },
          { "packet_larger_than_queue", t_packet_larger_than_queue },
          { "config_refusals", t_config_refusals }, { "fid_bits_for_rtt", t_fid_bits_for_rtt },
          { "config_memory", t_config_memory },
          { "serial_lane_inputs", t_serial_lane_inputs }, { "serial_hold", t_serial_hold },
          { "tx_ready_predicts", t_tx_ready_predicts }, { "lane_tags", t_lane_tags })

/* Channel bonding (rifl/bond.h, rifl-multilane §4): the worked examples of
 * docs/multilane.md byte for byte per lane (spatial, temporal, two groups
 * of two), then seeded random bonded links with bit errors and skew on
 * every lane, whose packets must all arrive once, in order, unaltered. */
#include "testlib.h"

#include "rifl/bond.h"
#include "rifl/phy.h"
#include "rifl/rng.h"
#include "rifl/sim/pair.h"

#define MAXL RIFL_BOND_MAX_LANES

/* Two bonded ends joined lane by lane by simulated cables. */
struct blink {
    rifl_bond *b[2];
    rifl_phy *ch[2][MAXL];    /* [e][i]: end e's lane i to the other end's lane i */
    unsigned L;
    uint64_t now;
    /* user data frames end 0 sent new, per lane: META, bytes */
    struct sent {
        uint8_t meta, n, data[32]; /* the frame's valid bytes */
    } *log[MAXL];
    unsigned nlog[MAXL], cap;
};

static void blink_free(struct blink *k)
{
    for (int e = 0; e < 2; e++) {
        rifl_bond_free(k->b[e]);
        for (unsigned i = 0; i < k->L; i++)
            rifl_phy_free(k->ch[e][i]);
    }
    for (unsigned i = 0; i < k->L; i++)
        free(k->log[i]);
}

static bool blink_make(struct blink *k, unsigned L, unsigned S, double ber, uint64_t seed,
                       const unsigned *skew)
{
    memset(k, 0, sizeof *k);
    k->L = L;
    rifl_bond_config bc = { .lane = rifl_lane_default_config, .lanes = L, .group_lanes = S };
    unsigned most = 0;
    for (unsigned i = 0; skew && i < L; i++)
        most = skew[i] > most ? skew[i] : most;
    /* the lanes' round trip includes the slowest lane's extra delay */
    bc.lane.pipeline_frames += 2 * most;
    char msg[300];
    for (int e = 0; e < 2; e++)
        if (rifl_bond_create(&bc, &k->b[e], msg, sizeof msg) != RIFL_OK) {
            fprintf(stderr, "  %s\n", msg);
            return false;
        }
    unsigned D = rifl_link_delay_frames(&bc.lane.link, bc.lane.frame_bits);
    for (int e = 0; e < 2; e++)
        for (unsigned i = 0; i < L; i++) {
            rifl_phy_channel_config cc = {
                .frame_bits = bc.lane.frame_bits, .delay_frames = D + (skew ? skew[i] : 0),
                .ber = ber, .seed = seed * 1000 + (uint64_t)e * 100 + i,
                .content_bytes = rifl_lane_frame_bytes(bc.lane.frame_bits),
                .encode = rifl_lane_phy_encode, .encode_ctx = rifl_bond_lane(k->b[e], i),
            };
            if (rifl_phy_channel_create(&cc, &k->ch[e][i], msg, sizeof msg) != RIFL_OK) {
                fprintf(stderr, "  %s\n", msg);
                return false;
            }
        }
    k->cap = 4096;
    for (unsigned i = 0; i < L; i++)
        k->log[i] = calloc(k->cap, sizeof *k->log[i]);
    return true;
}

static void blink_step(struct blink *k)
{
    rifl_phy_frame in[2][MAXL];
    unsigned n[2][MAXL];
    for (int e = 0; e < 2; e++) {
        rifl_bond_place(k->b[e]);
        for (unsigned i = 0; i < k->L; i++) {
            rifl_lane *l = rifl_bond_lane(k->b[e], i);
            uint64_t before = rifl_lane_get_stats(l)->tx_frames[RIFL_KIND_DATA];
            rifl_lane_frame *f = rifl_phy_tx_buffer(k->ch[e][i], RIFL_PHY_CONTENT);
            rifl_lane_tx_frame(l, k->now, f);
            if (e == 0 && rifl_lane_get_stats(l)->tx_frames[RIFL_KIND_DATA] != before &&
                k->nlog[i] < k->cap) {
                unsigned pb = rifl_payload_bytes(256);
                uint8_t meta = f->rec[0] & 3u;
                struct sent *s = &k->log[i][k->nlog[i]++];
                s->meta = meta;
                s->n = (uint8_t)(meta == RIFL_META_PARTIAL_EOP ? f->rec[pb] : pb);
                memcpy(s->data, f->rec + 1, s->n <= sizeof s->data ? s->n : sizeof s->data);
            }
            n[1 - e][i] = rifl_phy_channel_exchange(k->ch[e][i], k->now, RIFL_PHY_CONTENT,
                                                    &in[1 - e][i], 1);
        }
    }
    /* a frame hit by an error arrives as wire bytes, the others by content */
    for (int e = 0; e < 2; e++)
        for (unsigned i = 0; i < k->L; i++) {
            rifl_lane *l = rifl_bond_lane(k->b[e], i);
            if (!n[e][i])
                rifl_lane_rx(l, k->now, NULL, NULL);
            else if (in[e][i].form == RIFL_PHY_WIRE)
                rifl_lane_rx(l, k->now, in[e][i].data, NULL);
            else
                rifl_lane_rx_frame(l, k->now, in[e][i].data, NULL);
        }
    k->now++;
}

/* byte j of packet p */
static uint8_t pbyte(unsigned p, size_t j) { return (uint8_t)(p * 37u + j * 7u + 1u); }

/* ---- the worked examples ------------------------------------------------- */

/* One user data frame a lane sends: META and bytes [from, from + n) of
 * packet p. */
struct expect {
    unsigned lane, p, from, n, meta;
};

#define FULL RIFL_META_FULL
#define EOP RIFL_META_FULL_EOP
#define PART RIFL_META_PARTIAL_EOP

static const unsigned sizes[] = { 100, 61, 120, 121 };

/* docs/multilane.md, "Worked examples": 4 lanes, F = 256 (30 bytes per
 * frame), packets of 100, 61, 120 and 121 bytes */
static const struct expect spatial[] = {
    { 3, 0, 0, 30, FULL }, { 2, 0, 30, 30, FULL }, { 1, 0, 60, 30, FULL }, { 0, 0, 90, 10, PART },
    { 3, 1, 0, 30, FULL }, { 2, 1, 30, 30, FULL }, { 1, 1, 60, 1, PART },
    { 3, 2, 0, 30, FULL }, { 2, 2, 30, 30, FULL }, { 1, 2, 60, 30, FULL }, { 0, 2, 90, 30, EOP },
    { 3, 3, 0, 30, FULL }, { 2, 3, 30, 30, FULL }, { 1, 3, 60, 30, FULL }, { 0, 3, 90, 30, FULL },
    { 3, 3, 120, 1, PART },
};
static const struct expect temporal[] = {
    { 0, 0, 0, 30, FULL }, { 1, 0, 30, 30, FULL }, { 2, 0, 60, 30, FULL }, { 3, 0, 90, 10, PART },
    { 0, 1, 0, 30, FULL }, { 1, 1, 30, 30, FULL }, { 2, 1, 60, 1, PART },
    { 3, 2, 0, 30, FULL }, { 0, 2, 30, 30, FULL }, { 1, 2, 60, 30, FULL }, { 2, 2, 90, 30, EOP },
    { 3, 3, 0, 30, FULL }, { 0, 3, 30, 30, FULL }, { 1, 3, 60, 30, FULL }, { 2, 3, 90, 30, FULL },
    { 3, 3, 120, 1, PART },
};
static const struct expect mixed[] = { /* two groups of two */
    { 1, 0, 0, 30, FULL }, { 0, 0, 30, 30, FULL }, { 3, 0, 60, 30, FULL }, { 2, 0, 90, 10, PART },
    { 1, 1, 0, 30, FULL }, { 0, 1, 30, 30, FULL }, { 3, 1, 60, 1, PART },
    { 1, 2, 0, 30, FULL }, { 0, 2, 30, 30, FULL }, { 3, 2, 60, 30, FULL }, { 2, 2, 90, 30, EOP },
    { 1, 3, 0, 30, FULL }, { 0, 3, 30, 30, FULL }, { 3, 3, 60, 30, FULL }, { 2, 3, 90, 30, FULL },
    { 1, 3, 120, 1, PART },
};

static void worked(unsigned S, const struct expect *ex, unsigned nex)
{
    struct blink k;
    REQUIRE(blink_make(&k, 4, S, 0, test_seed, NULL));
    for (int t = 0; t < 2000; t++) /* bring-up */
        blink_step(&k);
    uint8_t pkt[256];
    for (unsigned p = 0; p < 4; p++) {
        for (size_t j = 0; j < sizes[p]; j++)
            pkt[j] = pbyte(p, j);
        CHECK_EQ_I(rifl_bond_send(k.b[0], pkt, sizes[p]), RIFL_OK);
    }
    for (int t = 0; t < 400; t++)
        blink_step(&k);
    /* each lane's frames, in order, as the table says */
    unsigned next[4] = { 0, 0, 0, 0 }, bad = 0;
    for (unsigned x = 0; x < nex; x++) {
        const struct expect *e = &ex[x];
        if (next[e->lane] >= k.nlog[e->lane]) {
            bad++;
            continue;
        }
        const struct sent *s = &k.log[e->lane][next[e->lane]++];
        unsigned wrong = 0;
        for (unsigned j = 0; j < e->n && j < s->n && j < sizeof s->data; j++)
            wrong += s->data[j] != pbyte(e->p, e->from + j);
        if (s->meta != e->meta || s->n != e->n || wrong) {
            fprintf(stderr, "  S=%u row %u: lane %u sent META %u, %u bytes, %u of them wrong; "
                    "expected META %u, %u bytes from byte %u of packet %u\n", S, x, e->lane,
                    s->meta, s->n, wrong, e->meta, e->n, e->from, e->p);
            bad++;
        }
    }
    for (unsigned i = 0; i < 4; i++)
        CHECK_EQ_U(next[i], k.nlog[i]);
    CHECK_EQ_U(bad, 0);
    /* and the far end reads the packets back */
    for (unsigned p = 0; p < 4; p++) {
        size_t n = 0;
        int eop = 0;
        CHECK_EQ_I(rifl_bond_read(k.b[1], pkt, sizeof pkt, &n, &eop), RIFL_OK);
        CHECK(n == sizes[p] && eop);
        unsigned wrong = 0;
        for (size_t j = 0; j < n; j++)
            wrong += pkt[j] != pbyte(p, j);
        CHECK_EQ_U(wrong, 0);
    }
    size_t n;
    int eop;
    CHECK_EQ_I(rifl_bond_read(k.b[1], pkt, sizeof pkt, &n, &eop), RIFL_ERR_AGAIN);
    blink_free(&k);
}

static void t_worked_spatial(void) { worked(4, spatial, sizeof spatial / sizeof spatial[0]); }
static void t_worked_temporal(void) { worked(1, temporal, sizeof temporal / sizeof temporal[0]); }
static void t_worked_mixed(void) { worked(2, mixed, sizeof mixed / sizeof mixed[0]); }

/* ---- random bonded links ------------------------------------------------- */

static void t_random_links(void)
{
    rifl_rng r;
    rifl_rng_seed(&r, test_seed * 11);
    unsigned rounds = test_long_run ? 60 : 10;
    for (unsigned round = 0; round < rounds; round++) {
        unsigned L = 1u << rifl_rng_below(&r, 5);
        unsigned S = 1u << rifl_rng_below(&r, (uint64_t)__builtin_ctz(L) + 1);
        /* a replay on any lane of a group stops the group: wide groups get
         * lower rates, so every run moves */
        double ber = round % 3 == 0 ? 0 : 1e-7 * (double)(1 + rifl_rng_below(&r, 15)) / S;
        unsigned skew[MAXL];
        for (unsigned i = 0; i < L; i++)
            skew[i] = (unsigned)rifl_rng_below(&r, 40); /* below B/3 of K = 8 */
        struct blink k;
        if (!blink_make(&k, L, S, ber, test_seed * 100 + round, skew)) {
            CHECK(0);
            continue;
        }
        unsigned packets = test_long_run ? 3000 : 300, sent = 0, got = 0, wrong = 0;
        size_t off = 0;
        static uint8_t pkt[4096], rbuf[4096];
        size_t len = 0;
        uint64_t slots = 0;
        while (got < packets && slots < 4000000) {
            while (sent < packets) {
                size_t n = 1 + (size_t)rifl_rng_below(&r, 3000);
                for (size_t j = 0; j < n; j++)
                    pkt[j] = pbyte(sent, j);
                if (rifl_bond_send(k.b[0], pkt, n) != RIFL_OK)
                    break;
                sent++;
            }
            blink_step(&k);
            slots++;
            size_t n;
            int eop;
            while (got < packets && rifl_bond_read(k.b[1], rbuf + off, sizeof rbuf - off, &n,
                                                   &eop) == RIFL_OK) {
                off += n;
                if (!eop)
                    continue;
                len = off;
                for (size_t j = 0; j < len; j++)
                    wrong += rbuf[j] != pbyte(got, j);
                got++;
                off = 0;
            }
        }
        CHECK_MSG(got == packets && wrong == 0,
                  "L=%u S=%u BER %g: %u of %u packets, %u wrong bytes after %llu slots", L, S,
                  ber, got, packets, wrong, (unsigned long long)slots);
        if (got != packets)
            for (unsigned i = 0; i < L; i++) {
                rifl_lane *la = rifl_bond_lane(k.b[0], i), *lb = rifl_bond_lane(k.b[1], i);
                fprintf(stderr, "  lane %u: A %s backlog %u ready %d fc %d; B %s rx %u\n", i,
                        rifl_tx_state_name(rifl_lane_state(la)), rifl_lane_tx_backlog(la),
                        rifl_lane_tx_ready(la), rifl_lane_get_flags(la).peer_fc_on,
                        rifl_tx_state_name(rifl_lane_state(lb)), rifl_lane_rx_backlog(lb));
            }
        const rifl_bond_stats *a = rifl_bond_get_stats(k.b[0]), *b = rifl_bond_get_stats(k.b[1]);
        CHECK_EQ_U(a->tx_words, b->rx_words);
        CHECK_EQ_U(b->rx_bad_words, 0);
        CHECK_EQ_U(b->rx_packets, packets);
        /* every frame hit on the way to B was replayed by A */
        uint64_t replays = 0, hit = 0;
        for (unsigned i = 0; i < L; i++) {
            replays += rifl_lane_get_stats(rifl_bond_lane(k.b[0], i))->tx_replay_cycles;
            hit += rifl_phy_get_stats(k.ch[0][i])->frames_hit;
        }
        CHECK(hit == 0 || replays > 0);
        if (ber == 0)
            CHECK_EQ_U(hit, 0);
        blink_free(&k);
    }
}

static void t_refused(void)
{
    rifl_bond *b = NULL;
    char msg[300] = "";
    rifl_bond_config c = { .lane = rifl_lane_default_config, .lanes = 3 };
    CHECK_EQ_I(rifl_bond_create(&c, &b, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "lanes") != NULL);
    c.lanes = 32;
    CHECK_EQ_I(rifl_bond_create(&c, &b, msg, sizeof msg), RIFL_ERR_CONFIG);
    c.lanes = 4;
    c.group_lanes = 8;
    CHECK_EQ_I(rifl_bond_create(&c, &b, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "groups") != NULL);
    c.group_lanes = 3;
    CHECK_EQ_I(rifl_bond_create(&c, &b, msg, sizeof msg), RIFL_ERR_CONFIG);
    c.group_lanes = 0;
    /* tags are the bond's to set: it numbers the lanes */
    c.lane.lane_tags = true;
    c.lane.lane_index = 0;
    c.lane.lane_count = 1;
    CHECK_EQ_I(rifl_bond_create(&c, &b, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "lane tags") != NULL);
    c.lane = rifl_lane_default_config;
    c.tx_queue_bytes = 8;
    CHECK_EQ_I(rifl_bond_create(&c, &b, msg, sizeof msg), RIFL_ERR_CONFIG);
    c.tx_queue_bytes = 100;
    REQUIRE(rifl_bond_create(&c, &b, msg, sizeof msg) == RIFL_OK);
    CHECK_EQ_U(rifl_bond_group_lanes(b), 4);
    CHECK_EQ_U(rifl_bond_max_packet(b), 96);
    uint8_t p[200] = { 0 };
    CHECK_EQ_I(rifl_bond_send(b, p, 97), RIFL_ERR_TOO_BIG);
    CHECK_EQ_I(rifl_bond_send(b, p, 0), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_bond_send(b, p, 60), RIFL_OK);
    CHECK_EQ_I(rifl_bond_send(b, p, 60), RIFL_ERR_AGAIN);
    CHECK_EQ_U(rifl_bond_get_stats(b)->tx_rejected, 1);
    /* refusals counted without the calls, as a simulator stepping in bulk
     * does */
    CHECK_EQ_I(rifl_bond_count_refused(b, 5), RIFL_OK);
    CHECK_EQ_U(rifl_bond_get_stats(b)->tx_rejected, 6);
    CHECK_EQ_I(rifl_bond_count_refused(NULL, 1), RIFL_ERR_INVALID_ARG);
    CHECK(rifl_bond_lane(b, 4) == NULL && rifl_bond_lane(b, 3) != NULL);
    size_t n = 0;
    const rifl_counter *t = rifl_bond_counters(&n);
    CHECK(t && n == sizeof(rifl_bond_stats) / sizeof(uint64_t));
    rifl_bond_free(b);
}

/* The send queue's room and backlog: a packet costs its bytes and a
 * 4-byte length; the backlog falls word by word as the bond places them. */
static void t_queue(void)
{
    struct blink k;
    REQUIRE(blink_make(&k, 4, 4, 0, 1, NULL));
    rifl_bond *b = k.b[0];
    size_t cap = rifl_bond_max_packet(b) + 4;
    CHECK_EQ_U(rifl_bond_send_space(b), cap - 4);
    CHECK_EQ_U(rifl_bond_tx_backlog(b), 0);
    uint8_t p[1000] = { 0 };
    CHECK_EQ_I(rifl_bond_send(b, p, 1000), RIFL_OK);
    CHECK_EQ_I(rifl_bond_send(b, p, 300), RIFL_OK);
    CHECK_EQ_U(rifl_bond_send_space(b), cap - 1308 - 4);
    CHECK_EQ_U(rifl_bond_tx_backlog(b), 1300);
    /* nothing is placed before the lanes are up; then a word (4 segments
     * of P/8 bytes) a slot until both packets are out */
    unsigned word = 4 * rifl_payload_bytes(256);
    for (unsigned t = 0; t < 4000 && rifl_bond_tx_backlog(b); t++) {
        size_t before = rifl_bond_tx_backlog(b);
        blink_step(&k);
        size_t placed = before - rifl_bond_tx_backlog(b);
        /* whole words, or a packet's last part */
        CHECK(placed == 0 || placed == word || placed == 1000 % word || placed == 300 % word);
    }
    CHECK_EQ_U(rifl_bond_tx_backlog(b), 0);
    CHECK_EQ_U(rifl_bond_get_stats(b)->tx_words,
               (1000 + word - 1) / word + (300 + word - 1) / word);
    CHECK_EQ_U(rifl_bond_send_space(b), cap - 4);
    CHECK_EQ_U(rifl_bond_send_space(NULL), 0);
    CHECK_EQ_U(rifl_bond_tx_backlog(NULL), 0);
    blink_free(&k);
}

/* Without rifl_bond_hold, the aligners' first reports still reach the
 * lanes: a lane not up verifies nothing and its group is down. */
static void t_rx_state_unheld(void)
{
    rifl_bond *b = NULL;
    char msg[300] = "";
    rifl_bond_config c = { .lane = rifl_lane_default_config, .lanes = 2 };
    c.lane.rx_lock_frames = 0; /* an outside aligner */
    REQUIRE(rifl_bond_create(&c, &b, msg, sizeof msg) == RIFL_OK);
    for (unsigned i = 0; i < 2; i++) {
        rifl_lane_flags f = rifl_lane_get_flags(rifl_bond_lane(b, i));
        CHECK(f.rx_up && f.group_up);
    }
    rifl_bond_rx_state(b, 0, true, false);
    rifl_bond_rx_state(b, 1, true, true);
    for (unsigned i = 0; i < 2; i++) {
        rifl_lane_flags f = rifl_lane_get_flags(rifl_bond_lane(b, i));
        CHECK(f.rx_aligned);
        CHECK(f.rx_up == (i == 1));
        CHECK(!f.group_up);
    }
    rifl_bond_rx_state(b, 0, true, true);
    for (unsigned i = 0; i < 2; i++)
        CHECK(rifl_lane_get_flags(rifl_bond_lane(b, i)).group_up);
    rifl_bond_free(b);
}

/* The power-up hold ends when every lane has aligned after it, whatever
 * the aligners said before. */
static void t_hold(void)
{
    rifl_bond *b = NULL;
    char msg[300] = "";
    rifl_bond_config c = { .lane = rifl_lane_default_config, .lanes = 4 };
    c.lane.rx_lock_frames = 0;
    REQUIRE(rifl_bond_create(&c, &b, msg, sizeof msg) == RIFL_OK);
    for (unsigned i = 0; i < 4; i++) {
        rifl_bond_rx_state(b, i, false, false);
        rifl_bond_rx_state(b, i, true, true);
    }
    CHECK_EQ_I(rifl_bond_hold(b), RIFL_OK);
    for (unsigned i = 0; i < 4; i++) {
        rifl_lane_flags f = rifl_lane_get_flags(rifl_bond_lane(b, i));
        CHECK(f.tx_hold && !f.rx_aligned && !f.group_up);
    }
    for (unsigned i = 0; i < 3; i++)
        rifl_bond_rx_state(b, i, true, false);
    for (unsigned i = 0; i < 4; i++)
        CHECK(rifl_lane_get_flags(rifl_bond_lane(b, i)).tx_hold);
    rifl_bond_rx_state(b, 3, true, false);
    for (unsigned i = 0; i < 4; i++)
        CHECK(!rifl_lane_get_flags(rifl_bond_lane(b, i)).tx_hold);
    CHECK_EQ_I(rifl_bond_hold(NULL), RIFL_ERR_INVALID_ARG);
    rifl_bond_free(b);
}

/* A lane follows its aligner from the first report on, even when that
 * report says what the lane already holds: a lane told "not aligned" from
 * its first slot never locks by itself (it would after 64 legal SYNs). */
static void t_first_report(void)
{
    rifl_bond_config c = { .lane = rifl_lane_default_config, .lanes = 1 };
    rifl_bond *b[2];
    char msg[300] = "";
    for (int e = 0; e < 2; e++)
        REQUIRE(rifl_bond_create(&c, &b[e], msg, sizeof msg) == RIFL_OK);
    CHECK(!rifl_lane_get_flags(rifl_bond_lane(b[1], 0)).rx_aligned);
    uint8_t w[2][RIFL_FRAME_MAX_BYTES];
    unsigned aligned_slots = 0;
    for (uint64_t t = 0; t < 2000; t++) {
        rifl_bond_rx_state(b[1], 0, false, false);
        for (int e = 0; e < 2; e++)
            rifl_lane_tx(rifl_bond_lane(b[e], 0), t, w[e]);
        for (int e = 0; e < 2; e++)
            rifl_lane_rx(rifl_bond_lane(b[e], 0), t, w[1 - e], NULL);
        aligned_slots += rifl_lane_get_flags(rifl_bond_lane(b[1], 0)).rx_aligned;
    }
    CHECK_EQ_U(aligned_slots, 0);
    CHECK(rifl_lane_get_stats(rifl_bond_lane(b[1], 0))->rx_not_aligned >= 1900);
    rifl_bond_free(b[0]);
    rifl_bond_free(b[1]);
}

/* The power-up hold takes every lane or none: a lane that has begun
 * sending refuses it, and the lanes before it are not left held. */
static void t_hold_all_or_none(void)
{
    rifl_bond_config c = { .lane = rifl_lane_default_config, .lanes = 2 };
    c.lane.rx_lock_frames = 0;
    rifl_bond *b = NULL;
    char msg[300] = "";
    REQUIRE(rifl_bond_create(&c, &b, msg, sizeof msg) == RIFL_OK);
    uint8_t w[RIFL_FRAME_MAX_BYTES];
    for (uint64_t t = 0; t < 3; t++)
        rifl_lane_tx(rifl_bond_lane(b, 1), t, w); /* lane 1 has begun */
    rifl_lane_flags before = rifl_lane_get_flags(rifl_bond_lane(b, 0));
    CHECK_EQ_I(rifl_bond_hold(b), RIFL_ERR_STATE);
    rifl_lane_flags f = rifl_lane_get_flags(rifl_bond_lane(b, 0));
    CHECK(!f.tx_hold);
    CHECK(f.rx_aligned == before.rx_aligned && f.rx_up == before.rx_up &&
          f.group_up == before.group_up);
    rifl_bond_free(b);
}

TEST_MAIN({ "worked_spatial", t_worked_spatial }, { "worked_temporal", t_worked_temporal },
          { "worked_mixed", t_worked_mixed }, { "random_links", t_random_links },
          { "refused", t_refused }, { "queue", t_queue },
          { "rx_state_unheld", t_rx_state_unheld }, { "hold", t_hold },
          { "first_report", t_first_report }, { "hold_all_or_none", t_hold_all_or_none })

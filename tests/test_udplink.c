/* The real-time driver of a lane over UDP (rifl/udplink.h; docs/udp.md,
 * "The driver"), run on two loopback sockets with a made-up clock, so that
 * nothing here depends on how fast the machine is: K from the round trip
 * and its refusal, probes agreeing on one round trip at both ends, every
 * packet delivered through lost datagrams, a stalled peer stalling this end
 * (the window), and the idle rule (after the last data the datagram rate
 * falls to the keepalive rate, and data sent later still goes through). */
#include "testlib.h"
#include "phy_lanes.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rifl/lane.h"
#include "rifl/sim/traffic.h"
#include "rifl/udplink.h"

static void t_sizing(void)
{
    rifl_udplink_config c;
    rifl_udplink_defaults(&c);
    rifl_udplink_sizing s;
    char msg[512] = "";
    /* 50 us at 1 Gbit/s with 2048-bit frames: 25 slots; window 25 + 2 x 16
     * + 16 = 73; the lane's round trip 2 x 73 + 2 x 16 + 8 = 186; K =
     * ceil(log2(32 + 186)) = 8 */
    CHECK_EQ_I(rifl_udplink_size(&c, 50000, &s, msg, sizeof msg), RIFL_OK);
    CHECK_EQ_U(s.rtt_slots, 25);
    CHECK_EQ_U(s.window, 73);
    CHECK_EQ_U(s.hold_slots, 73);
    CHECK_EQ_U(s.pipeline_frames, 186);
    CHECK_EQ_U(s.fid_bits, 8);
    /* K grows with the round trip, up to 11 */
    unsigned last = 0;
    for (uint64_t rtt = 1000; rtt < 2000000; rtt *= 2) {
        if (rifl_udplink_size(&c, rtt, &s, NULL, 0) != RIFL_OK)
            break;
        CHECK(s.fid_bits >= last && s.fid_bits <= 11);
        CHECK((1u << s.fid_bits) >= 32 + s.pipeline_frames);
        last = s.fid_bits;
    }
    CHECK_EQ_U(last, 11);
    /* 10 ms at 1 Gbit/s is refused, naming the rate that fits, which fits */
    CHECK_EQ_I(rifl_udplink_size(&c, 10000000, &s, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(msg, "lower the lane rate to") && strstr(msg, "11 frame-ID bits"), "%s", msg);
    const char *r = strstr(msg, "rate to ");
    double fit = r ? atof(r + 8) : 0;
    CHECK(fit > 0 && fit < 1);
    c.rate_gbps = fit;
    CHECK_EQ_I(rifl_udplink_size(&c, 10000000, &s, msg, sizeof msg), RIFL_OK);
    CHECK_EQ_U(s.fid_bits, 11);
    /* a round trip no lane rate fits (64-bit frames, 100 ms): said so, no
     * rate of 0 suggested */
    rifl_udplink_defaults(&c);
    c.udp.frame_bits = 64;
    CHECK_EQ_I(rifl_udplink_size(&c, 100000000, &s, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(msg, "no lane rate") && !strstr(msg, "rate to 0 "), "%s", msg);
    /* datagrams too big for any round trip */
    rifl_udplink_defaults(&c);
    c.udp.frames_per_datagram = 64;
    c.udp.flush_slots = 1000;
    CHECK_EQ_I(rifl_udplink_size(&c, 1000, &s, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(msg, "fewer frames per datagram") != NULL, "%s", msg);
    /* a K given that is too small, or too large for UDP */
    rifl_udplink_defaults(&c);
    c.lane.fid_bits = 7;
    CHECK_EQ_I(rifl_udplink_size(&c, 50000, &s, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(msg, "fid_bits 0") != NULL, "%s", msg);
    c.lane.fid_bits = 12;
    CHECK_EQ_I(rifl_udplink_size(&c, 50000, &s, msg, sizeof msg), RIFL_ERR_CONFIG);
    c.lane.fid_bits = 10;
    CHECK_EQ_I(rifl_udplink_size(&c, 50000, &s, msg, sizeof msg), RIFL_OK);
    CHECK_EQ_U(s.fid_bits, 10);
    c.rate_gbps = 0;
    CHECK_EQ_I(rifl_udplink_size(&c, 50000, &s, msg, sizeof msg), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_udplink_size(NULL, 50000, &s, msg, sizeof msg), RIFL_ERR_INVALID_ARG);
}

/* Two ends on loopback, and a made-up clock. */
struct pair {
    rifl_udplink *l[2];
    uint64_t now;
    /* the packets each end sent and the other checked */
    uint64_t sent[2], got[2], bad;
    uint8_t buf[2][2000];
    size_t have[2];
    unsigned stream[2];   /* the packet stream each end sends */
    uint64_t resets[2];   /* the ends' resets the test has seen */
};

/* the frame width of end 1 in the next make_pair (0: the default) */
static unsigned pair_bits1;
static double pair_rate1; /* end 1's lane rate, when above 0 */

static bool make_pair(struct pair *p, double loss, double rate, uint64_t rtt_ns)
{
    memset(p, 0, sizeof *p);
    p->now = 1000000000ull;
    p->stream[0] = 40;
    p->stream[1] = 41;
    int fd[2];
    unsigned port[2];
    for (int i = 0; i < 2; i++)
        if ((fd[i] = test_bound_socket(&port[i])) < 0) {
            printf("  no loopback UDP socket: skipped\n");
            if (i)
                close(fd[0]);
            return false;
        }
    for (int i = 0; i < 2; i++) {
        char remote[64];
        snprintf(remote, sizeof remote, "127.0.0.1:%u", port[1 - i]);
        rifl_udplink_config c;
        rifl_udplink_defaults(&c);
        c.udp.fd = fd[i];
        c.udp.remote = remote;
        c.udp.epoch = 10u + (unsigned)i;
        c.udp.loss = loss;
        c.udp.seed = test_seed * 2 + (unsigned)i;
        c.rate_gbps = rate;
        c.rtt_ns = rtt_ns;
        if (i == 1 && pair_bits1)
            c.udp.frame_bits = pair_bits1;
        if (i == 1 && pair_rate1 > 0)
            c.rate_gbps = pair_rate1;
        char msg[512] = "";
        int rc = rifl_udplink_create(&c, &p->l[i], msg, sizeof msg);
        CHECK_MSG(rc == RIFL_OK, "%s", msg);
        if (rc != RIFL_OK)
            return false;
    }
    return true;
}

static void free_pair(struct pair *p)
{
    rifl_udplink_free(p->l[0]);
    rifl_udplink_free(p->l[1]);
}

static size_t pkt_len(uint64_t seq) { return 1 + (size_t)((seq * 2654435761u) % 1500); }

/* Read and check what arrived at end i. */
static void drain(struct pair *p, int i)
{
    rifl_lane *lane = rifl_udplink_lane(p->l[i]);
    if (!lane)
        return;
    for (;;) {
        size_t len = 0;
        int eop = 0;
        if (rifl_lane_read(lane, p->buf[i] + p->have[i], sizeof p->buf[i] - p->have[i], &len,
                           &eop) != RIFL_OK)
            return;
        p->have[i] += len;
        if (!eop)
            continue;
        uint8_t want[2000];
        size_t wl = pkt_len(p->got[i]);
        rifl_packet_fill(p->stream[1 - i], p->got[i], want, wl);
        p->bad += p->have[i] != wl || memcmp(p->buf[i], want, wl) != 0;
        p->got[i]++;
        p->have[i] = 0;
    }
}

/* Step both ends (those in `which`, a bit each) every dt ns for `steps`
 * steps; while `offer` is set, each keeps its lane's queue fed with
 * numbered packets, up to `limit` each. */
static int pump(struct pair *p, unsigned which, uint64_t dt, uint64_t steps, uint64_t limit)
{
    for (uint64_t k = 0; k < steps; k++) {
        p->now += dt;
        for (int i = 0; i < 2; i++) {
            if (!(which >> i & 1))
                continue;
            uint64_t wake;
            char msg[512] = "";
            int rc = rifl_udplink_step(p->l[i], p->now, &wake, msg, sizeof msg);
            if (rc != RIFL_OK) {
                printf("  end %d: %s\n", i, msg);
                return rc;
            }
            uint64_t resets = rifl_udplink_get_stats(p->l[i])->resets;
            if (resets != p->resets[i]) {
                /* a joint reset: the lane is new, what it sends a new
                 * stream, what it reads from the peer's new lane starts
                 * over */
                p->resets[i] = resets;
                p->stream[i] += 10;
                p->sent[i] = p->got[i] = p->have[i] = 0;
            }
            rifl_lane *lane = rifl_udplink_lane(p->l[i]);
            while (lane && p->sent[i] < limit) {
                uint8_t pkt[2000];
                size_t n = pkt_len(p->sent[i]);
                rifl_packet_fill(p->stream[i], p->sent[i], pkt, n);
                if (rifl_lane_send(lane, pkt, n) != RIFL_OK)
                    break;
                p->sent[i]++;
            }
            drain(p, i);
        }
    }
    return RIFL_OK;
}

static uint64_t dgrams(struct pair *p, int i)
{
    return rifl_phy_udp_get_stats(rifl_udplink_phy(p->l[i]))->dgrams_sent;
}

/* Probes at both ends: one round trip agreed, one K, the lane made. */
static void t_probe_agree(void)
{
    struct pair p;
    if (!make_pair(&p, 0, 1.0, 0)) {
        free_pair(&p);
        return;
    }
    /* 10 us steps: each end answers the other's probes when it steps */
    CHECK_EQ_I(pump(&p, 3, 10000, 2000, 0), RIFL_OK);
    for (int i = 0; i < 2; i++) {
        CHECK(rifl_udplink_running(p.l[i]));
        const rifl_udplink_stats *s = rifl_udplink_get_stats(p.l[i]);
        CHECK(s->probe_samples >= 16);
        CHECK(s->rtt_min_ns <= s->rtt_median_ns && s->rtt_median_ns <= s->rtt_max_ns);
        CHECK(s->rtt_local_ns > 0 && s->rtt_peer_ns > 0);
    }
    const rifl_udplink_sizing *a = rifl_udplink_get_sizing(p.l[0]);
    const rifl_udplink_sizing *b = rifl_udplink_get_sizing(p.l[1]);
    REQUIRE(a && b);
    CHECK_EQ_U(a->rtt_ns, b->rtt_ns);
    CHECK_EQ_U(a->fid_bits, b->fid_bits);
    CHECK_EQ_U(rifl_lane_replay_frames(rifl_udplink_lane(p.l[0])), 1u << a->fid_bits);
    free_pair(&p);
}

/* The peer starts late: the probes sent before it ran waited in its
 * socket, and their answers come all at once when it starts.  Those are
 * not round trips of the path: the estimate is made from probes sent after
 * the first answer came, the same as when both start together. */
static void t_probe_late_peer(void)
{
    struct pair p;
    if (!make_pair(&p, 0, 1.0, 0)) {
        free_pair(&p);
        return;
    }
    /* end 0 alone for 10 ms: 50 probes wait in end 1's socket */
    CHECK_EQ_I(pump(&p, 1, 10000, 1000, 0), RIFL_OK);
    CHECK(!rifl_udplink_running(p.l[0]));
    CHECK_EQ_I(pump(&p, 3, 10000, 2000, 0), RIFL_OK);
    for (int i = 0; i < 2; i++) {
        CHECK(rifl_udplink_running(p.l[i]));
        const rifl_udplink_stats *s = rifl_udplink_get_stats(p.l[i]);
        CHECK(s->probe_samples >= 16);
        /* an answer comes at the asker's next step: 10 or 20 us */
        CHECK_MSG(s->rtt_max_ns <= 20000, "end %d: round trips %" PRIu64 " to %" PRIu64 " ns",
                  i, s->rtt_min_ns, s->rtt_max_ns);
    }
    const rifl_udplink_sizing *a = rifl_udplink_get_sizing(p.l[0]);
    const rifl_udplink_sizing *b = rifl_udplink_get_sizing(p.l[1]);
    REQUIRE(a && b);
    CHECK(a->rtt_ns <= 40000 && a->rtt_ns == b->rtt_ns);
    free_pair(&p);
}

/* No peer: the probes time out with a message that says what to do. */
static void t_probe_timeout(void)
{
    struct pair p;
    if (!make_pair(&p, 0, 1.0, 0)) {
        free_pair(&p);
        return;
    }
    int rc = RIFL_OK;
    for (unsigned k = 0; k < 1000 && rc == RIFL_OK; k++) {
        uint64_t wake;
        char msg[512] = "";
        p.now += 10000000; /* 10 ms */
        rc = rifl_udplink_step(p.l[0], p.now, &wake, msg, sizeof msg);
        if (rc != RIFL_OK)
            CHECK_MSG(strstr(msg, "did not answer") && strstr(msg, "start the other end"), "%s",
                      msg);
    }
    CHECK_EQ_I(rc, RIFL_ERR_IO);
    CHECK(!rifl_udplink_running(p.l[0]));
    free_pair(&p);
}

/* The peer named in the messages is the driver's copy of its address:
 * the caller's string need not outlive rifl_udplink_create. */
static void t_peer_name(void)
{
    unsigned port;
    int peer = test_bound_socket(&port); /* never read: no answers */
    if (peer < 0) {
        printf("  no loopback UDP socket: skipped\n");
        return;
    }
    char remote[64], want[128];
    snprintf(remote, sizeof remote, "127.0.0.1:%u", port);
    snprintf(want, sizeof want, "the peer %s did not answer", remote);
    rifl_udplink_config c;
    rifl_udplink_defaults(&c);
    c.udp.local = "127.0.0.1:0";
    c.udp.remote = remote;
    c.udp.epoch = 10;
    rifl_udplink *l = NULL;
    char msg[512] = "";
    int rc = rifl_udplink_create(&c, &l, msg, sizeof msg);
    CHECK_MSG(rc == RIFL_OK, "%s", msg);
    memset(remote, 'X', sizeof remote - 1); /* the caller's string, reused */
    uint64_t now = 1000000000ull;
    for (unsigned k = 0; k < 1000 && rc == RIFL_OK; k++) {
        uint64_t wake;
        now += 10000000; /* 10 ms */
        rc = rifl_udplink_step(l, now, &wake, msg, sizeof msg);
    }
    CHECK_EQ_I(rc, RIFL_ERR_IO);
    CHECK_MSG(strstr(msg, want) != NULL, "%s", msg);
    rifl_udplink_free(l);
    close(peer);
}

/* Ends of different frame widths: each refuses the other's probes, counts
 * them and stops with a message naming both widths, never "up" with every
 * datagram dropped. */
/* Both ends stepped, 100 us at a time, until both stop (at most 0.2 s):
 * what each returned and said. */
static void step_until_refused(struct pair *p, int rc[2], char msg[2][512])
{
    rc[0] = rc[1] = RIFL_OK;
    msg[0][0] = msg[1][0] = 0;
    for (unsigned k = 0; k < 2000 && (rc[0] == RIFL_OK || rc[1] == RIFL_OK); k++) {
        p->now += 100000;
        for (int i = 0; i < 2; i++) {
            uint64_t wake;
            if (rc[i] == RIFL_OK)
                rc[i] = rifl_udplink_step(p->l[i], p->now, &wake, msg[i], 512);
        }
    }
}

static void t_other_width(void)
{
    struct pair p;
    pair_bits1 = 1024;
    bool made = make_pair(&p, 0, 1.0, 0);
    pair_bits1 = 0;
    if (!made) {
        free_pair(&p);
        return;
    }
    REQUIRE(rifl_udplink_phy(p.l[0]) != NULL);
    int rc[2];
    char msg[2][512];
    step_until_refused(&p, rc, msg);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_I(rc[i], RIFL_ERR_CONFIG);
        CHECK_MSG(strstr(msg[i], "same frame width") != NULL, "%s", msg[i]);
        const rifl_phy_udp_stats *s = rifl_phy_udp_get_stats(rifl_udplink_phy(p.l[i]));
        CHECK(s->rx_other_width > 0);
        CHECK_EQ_U(s->peer_frame_bits, (i ? 2048u : 1024u));
        CHECK_EQ_U(s->rx_malformed, 0);
        CHECK(!rifl_udplink_running(p.l[i]));
    }
    CHECK_MSG(strstr(msg[0], "uses 1024-bit frames and this end 2048-bit") != NULL, "%s",
              msg[0]);
    free_pair(&p);
}

/* The default epoch is drawn at every start (never 0), so that a restart
 * of an end shows as a new epoch to its peer. */
static void t_default_epoch(void)
{
    uint32_t ep[2] = { 0, 0 };
    for (int i = 0; i < 2; i++) {
        unsigned port;
        int fd = test_bound_socket(&port);
        if (fd < 0) {
            printf("  no loopback UDP socket: skipped\n");
            return;
        }
        rifl_udplink_config c;
        rifl_udplink_defaults(&c);
        CHECK_EQ_U(c.udp.epoch, 0);
        c.udp.fd = fd;
        c.udp.remote = "127.0.0.1:9";
        rifl_udplink *l = NULL;
        char msg[512] = "";
        int rc = rifl_udplink_create(&c, &l, msg, sizeof msg);
        CHECK_MSG(rc == RIFL_OK, "%s", msg);
        if (rc != RIFL_OK)
            return;
        ep[i] = rifl_phy_udp_get_stats(rifl_udplink_phy(l))->epoch;
        rifl_udplink_free(l);
    }
    CHECK(ep[0] != 0 && ep[1] != 0 && ep[0] != ep[1]);
}

/* Ends sized from other settings (here the lane rate) would choose
 * different K: both refuse at start-up, naming the settings. */
static void t_other_sizing(void)
{
    struct pair p;
    pair_rate1 = 8.0;
    bool made = make_pair(&p, 0, 1.0, 0);
    pair_rate1 = 0;
    if (!made) {
        free_pair(&p);
        return;
    }
    int rc[2];
    char msg[2][512];
    step_until_refused(&p, rc, msg);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_I(rc[i], RIFL_ERR_CONFIG);
        CHECK_MSG(strstr(msg[i], "give both ends the same lane rate") != NULL, "%s", msg[i]);
        CHECK(!rifl_udplink_running(p.l[i]));
    }
    CHECK_MSG(strstr(msg[1], "(8 Gbit/s") != NULL, "%s", msg[1]);
    free_pair(&p);
}

/* A round trip no K covers: refused when the link is made (given) or when
 * the probes end (measured). */
static void t_refused(void)
{
    rifl_udplink_config c;
    rifl_udplink_defaults(&c);
    c.udp.local = "127.0.0.1:0";
    c.udp.remote = "127.0.0.1:9";
    c.rtt_ns = 100000000; /* 100 ms */
    rifl_udplink *l = NULL;
    char msg[512] = "";
    CHECK_EQ_I(rifl_udplink_create(&c, &l, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(l == NULL);
    CHECK_MSG(strstr(msg, "lower the lane rate") != NULL, "%s", msg);
    c.rtt_ns = 0;
    c.probes = 1000;
    CHECK_EQ_I(rifl_udplink_create(&c, &l, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(msg, "probes") != NULL, "%s", msg);
    CHECK_EQ_I(rifl_udplink_create(NULL, &l, msg, sizeof msg), RIFL_ERR_INVALID_ARG);
    /* measured: 10 us steps make a round trip of some 10 us or more, which
     * at 10 Tbit/s with 2048-bit frames is far beyond 11 ID bits */
    struct pair p;
    if (!make_pair(&p, 0, 10000.0, 0)) {
        free_pair(&p);
        return;
    }
    int rc = RIFL_OK;
    for (unsigned k = 0; k < 3000 && rc == RIFL_OK; k++) {
        p.now += 10000;
        for (int i = 0; i < 2 && rc == RIFL_OK; i++) {
            uint64_t wake;
            rc = rifl_udplink_step(p.l[i], p.now, &wake, msg, sizeof msg);
        }
    }
    CHECK_EQ_I(rc, RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(msg, "round trip") && strstr(msg, "lower the lane rate"), "%s", msg);
    /* refused only after probing on to four times the samples */
    CHECK_EQ_U(rifl_udplink_get_stats(p.l[0])->probe_samples, 64);
    free_pair(&p);
}

/* A busy start: the first 16 round trips are 1 ms, which at 1 Gbit/s no K
 * covers; the probes go on, the later ones are short, and the link starts
 * on them instead of being refused. */
static void t_probe_busy_start(void)
{
    struct pair p;
    if (!make_pair(&p, 0, 1.0, 0)) {
        free_pair(&p);
        return;
    }
    CHECK_EQ_I(pump(&p, 3, 1000000, 20, 0), RIFL_OK);
    CHECK(!rifl_udplink_running(p.l[0]) && !rifl_udplink_running(p.l[1]));
    CHECK_EQ_I(pump(&p, 3, 10000, 2000, 0), RIFL_OK);
    for (int i = 0; i < 2; i++) {
        CHECK(rifl_udplink_running(p.l[i]));
        const rifl_udplink_stats *s = rifl_udplink_get_stats(p.l[i]);
        CHECK(s->probe_samples > 16 && s->probe_samples <= 64);
        CHECK(s->rtt_min_ns <= 20000 && s->rtt_max_ns >= 1000000);
    }
    free_pair(&p);
}

/* Packets both ways through 1% datagram loss: every one once, in order,
 * intact, with replays. */
static void t_lossless(void)
{
    struct pair p;
    if (!make_pair(&p, 0.01, 1.0, 0)) {
        free_pair(&p);
        return;
    }
    uint64_t n = test_long_run ? 20000 : 1500;
    /* 1 us steps: about one slot of 2.048 us in two */
    CHECK_EQ_I(pump(&p, 3, 1000, test_long_run ? 8000000 : 1000000, n), RIFL_OK);
    CHECK_EQ_U(p.bad, 0);
    CHECK_EQ_U(p.got[0], n);
    CHECK_EQ_U(p.got[1], n);
    uint64_t replays = 0;
    for (int i = 0; i < 2; i++) {
        replays += rifl_lane_get_stats(rifl_udplink_lane(p.l[i]))->tx_replay_cycles;
        CHECK(rifl_phy_udp_get_stats(rifl_udplink_phy(p.l[i]))->tx_lost > 0);
    }
    printf("  %llu replay cycles\n", (unsigned long long)replays);
    CHECK(replays > 0);
    free_pair(&p);
}

/* A peer that stops stepping: this end runs at most a window ahead of the
 * peer's last frame it got, then stops, and sends nothing more. */
static void t_window(void)
{
    struct pair p;
    if (!make_pair(&p, 0, 1.0, 20000)) {
        free_pair(&p);
        return;
    }
    CHECK_EQ_I(pump(&p, 3, 1000, 20000, 0), RIFL_OK);
    /* end 1 stalled for 100 ms while end 0 has data to send */
    CHECK_EQ_I(pump(&p, 1, 1000, 100000, UINT64_MAX), RIFL_OK);
    const rifl_udplink_stats *s = rifl_udplink_get_stats(p.l[0]);
    uint64_t heard = rifl_phy_udp_get_stats(rifl_udplink_phy(p.l[0]))->rx_next;
    unsigned w = rifl_udplink_get_sizing(p.l[0])->window;
    CHECK(s->slots <= heard + w);
    CHECK(s->window_stalls > 0);
    uint64_t d = dgrams(&p, 0);
    CHECK_EQ_I(pump(&p, 1, 1000, 100000, UINT64_MAX), RIFL_OK);
    CHECK(dgrams(&p, 0) <= d + 1);
    /* the peer comes back: both run on, and what end 0 sent arrives */
    uint64_t before = s->slots;
    CHECK_EQ_I(pump(&p, 3, 1000, 20000, p.sent[0]), RIFL_OK);
    CHECK(s->slots > before + 1000);
    CHECK(p.got[1] > 100);
    CHECK_EQ_U(p.bad, 0);
    free_pair(&p);
}

/* The idle rule: after the last data the link goes idle and the datagram
 * rate falls to the keepalive rate (1 ms: at most about 1 datagram per
 * keepalive and end, against ~30 per ms at the lane rate); data sent later
 * wakes it and arrives. */
static void t_idle(void)
{
    struct pair p;
    if (!make_pair(&p, 0, 1.0, 0)) {
        free_pair(&p);
        return;
    }
    CHECK_EQ_I(pump(&p, 3, 1000, 200000, 200), RIFL_OK); /* 200 ms */
    CHECK_EQ_U(p.got[0], 200);
    CHECK_EQ_U(p.got[1], 200);
    for (int i = 0; i < 2; i++)
        CHECK(rifl_udplink_idle(p.l[i]));
    /* a second of idle, in 50 us steps */
    uint64_t d0[2] = { dgrams(&p, 0), dgrams(&p, 1) };
    uint64_t k0 = rifl_udplink_get_stats(p.l[0])->keepalive_slots;
    CHECK_EQ_I(pump(&p, 3, 50000, 20000, 200), RIFL_OK);
    uint64_t both = 0;
    for (int i = 0; i < 2; i++) {
        uint64_t d = dgrams(&p, i) - d0[i];
        printf("  end %d: %llu datagrams in 1 s idle\n", i, (unsigned long long)d);
        /* at most a keepalive per ms, and one per 16 slots run for the
         * peer's datagrams (fewer at the end that is ahead: the window
         * holds its keepalives back until the other's come) */
        CHECK(d <= 1300);
        both += d;
        CHECK(rifl_udplink_idle(p.l[i]));
        /* idle once, and once more after each catch-up with a peer that
         * was a window ahead (at most one: then neither is) */
        const rifl_udplink_stats *st = rifl_udplink_get_stats(p.l[i]);
        CHECK(st->peer_wakes <= 1);
        CHECK_EQ_U(st->idle_periods, 1 + st->peer_wakes);
    }
    /* the link stays alive: keepalives go */
    CHECK(both >= 1000);
    CHECK(rifl_udplink_get_stats(p.l[0])->keepalive_slots - k0 >= 100);
    /* data again: it wakes the link and arrives */
    CHECK_EQ_I(pump(&p, 3, 1000, 200000, 400), RIFL_OK);
    CHECK_EQ_U(p.got[0], 400);
    CHECK_EQ_U(p.got[1], 400);
    CHECK_EQ_U(p.bad, 0);
    for (int i = 0; i < 2; i++) {
        const rifl_udplink_stats *st = rifl_udplink_get_stats(p.l[i]);
        CHECK(st->peer_wakes <= 2);
        CHECK_EQ_U(st->idle_periods, 2 + st->peer_wakes);
    }
    free_pair(&p);
}

/* The idle rule over a lossy path: keepalives lost start recoveries that
 * move fillers only, and those run in idle slots, not at the lane rate
 * (else each recovery's datagrams lose some and start the next, and the
 * link never idles); data sent afterwards still arrives, all of it. */
static void t_idle_lossy(void)
{
    struct pair p;
    if (!make_pair(&p, 0.05, 1.0, 0)) {
        free_pair(&p);
        return;
    }
    /* (at 5% lost a recovery often loses datagrams of its own: up to
     * 2 s, in 100 ms steps) */
    for (int k = 0; k < 20 && (p.got[0] < 200 || p.got[1] < 200); k++)
        CHECK_EQ_I(pump(&p, 3, 1000, 100000, 200), RIFL_OK);
    CHECK_EQ_U(p.got[0], 200);
    CHECK_EQ_U(p.got[1], 200);
    CHECK_EQ_I(pump(&p, 3, 1000, 100000, 200), RIFL_OK); /* the hold, and on */
    /* a second with nothing to send, in 50 us steps */
    uint64_t d0[2] = { dgrams(&p, 0), dgrams(&p, 1) };
    uint64_t r0 = rifl_lane_get_stats(rifl_udplink_lane(p.l[0]))->tx_replay_cycles +
                  rifl_lane_get_stats(rifl_udplink_lane(p.l[1]))->tx_replay_cycles;
    CHECK_EQ_I(pump(&p, 3, 50000, 20000, 200), RIFL_OK);
    for (int i = 0; i < 2; i++) {
        uint64_t d = dgrams(&p, i) - d0[i];
        printf("  end %d: %llu datagrams in 1 s with 5%% lost, %llu catch-ups\n", i,
               (unsigned long long)d,
               (unsigned long long)rifl_udplink_get_stats(p.l[i])->peer_wakes);
        /* the keepalives, and catching up with a peer that lost fewer
         * (about 30 datagrams per ms at the lane rate; 24,700 in this
         * second when recoveries ran at it) */
        CHECK(d <= 1500);
        CHECK(d >= 300);
    }
    /* an end that lost more of the other's datagrams ran fewer slots and
     * caught up when the other waited for it */
    CHECK(rifl_udplink_get_stats(p.l[0])->peer_wakes + rifl_udplink_get_stats(p.l[1])->peer_wakes >
          0);
    /* keepalives were lost and recovered from */
    CHECK(rifl_lane_get_stats(rifl_udplink_lane(p.l[0]))->tx_replay_cycles +
          rifl_lane_get_stats(rifl_udplink_lane(p.l[1]))->tx_replay_cycles > r0);
    /* data again: all of it arrives, in order */
    for (int k = 0; k < 20 && (p.got[0] < 400 || p.got[1] < 400); k++)
        CHECK_EQ_I(pump(&p, 3, 1000, 100000, 400), RIFL_OK);
    CHECK_EQ_U(p.got[0], 400);
    CHECK_EQ_U(p.got[1], 400);
    CHECK_EQ_U(p.bad, 0);
    free_pair(&p);
}

/* Step both ends every dt ns until end `to` has read a whole packet;
 * returns the virtual time it took (0: not within `limit` ns). */
static uint64_t until_read(struct pair *p, int to, uint64_t dt, uint64_t limit)
{
    uint64_t t0 = p->now, want = p->got[to] + 1;
    while (p->now - t0 < limit) {
        if (pump(p, 3, dt, 1, 0) != RIFL_OK)
            return 0;
        if (p->got[to] >= want)
            return p->now - t0;
    }
    return 0;
}

/* Request and response over a link that idles between exchanges: each
 * exchange costs about the round trip and the datagrams' filling, not a
 * keepalive interval (1 ms) waiting for an idle peer. */
static void t_exchange(void)
{
    struct pair p;
    if (!make_pair(&p, 0, 1.0, 60000)) {
        free_pair(&p);
        return;
    }
    CHECK_EQ_I(pump(&p, 3, 1000, 100000, 0), RIFL_OK); /* up, then idle */
    REQUIRE(rifl_udplink_lane(p.l[0]) && rifl_udplink_lane(p.l[1]));
    uint64_t worst = 0, sum = 0;
    const unsigned n = 200;
    for (unsigned k = 0; k < n; k++) {
        /* think times from 0 to 2 ms, so that some exchanges find the
         * link idle */
        CHECK_EQ_I(pump(&p, 3, 1000, (k * 37u) % 2000, 0), RIFL_OK);
        uint64_t t = 0;
        for (int i = 0; i < 2; i++) {
            uint8_t pkt[2000];
            size_t len = pkt_len(p.sent[i]);
            rifl_packet_fill(p.stream[i], p.sent[i], pkt, len);
            REQUIRE(rifl_lane_send(rifl_udplink_lane(p.l[i]), pkt, len) == RIFL_OK);
            p.sent[i]++;
            uint64_t d = until_read(&p, 1 - i, 1000, 100000000);
            REQUIRE(d > 0);
            t += d;
        }
        sum += t;
        worst = t > worst ? t : worst;
    }
    printf("  %u exchanges: mean %.1f us, worst %.1f us\n", n, (double)sum / n / 1e3,
           (double)worst / 1e3);
    /* each way: the round trip's half, a datagram's filling at each end
     * (16 slots), and a margin of as much again */
    const rifl_udplink_sizing *z = rifl_udplink_get_sizing(p.l[0]);
    double bound = 2 * (60000 + 2 * 16 * z->slot_ns);
    CHECK_MSG((double)worst < bound, "worst exchange %.1f us, bound %.1f us", worst / 1e3,
              bound / 1e3);
    CHECK_EQ_U(p.bad, 0);
    free_pair(&p);
}

/* A datagram of one frame of `bits` bits and `epoch` sent on `fd`
 * (connected to the other end). */
static void send_frame_bits(int fd, unsigned bits, uint32_t epoch)
{
    uint8_t d[RIFL_UDP_HEADER_BYTES + 256];
    memset(d, 0, sizeof d);
    rifl_udp_header h = { bits, 1, epoch, 5 };
    REQUIRE(rifl_udp_header_write(&h, d) == RIFL_OK);
    size_t len = RIFL_UDP_HEADER_BYTES + bits / 8;
    REQUIRE(send(fd, d, len, 0) == (ssize_t)len);
}

/* A datagram of frames of `epoch` sent on `fd`, in the ends' width. */
static void send_epoch(int fd, uint32_t epoch)
{
    send_frame_bits(fd, 2048, epoch);
}

/* A peer restart mid-stream: end 1 is destroyed while both send, and a new
 * end 1 (a new epoch) made on the same port.  End 0 sees the new epoch,
 * drops its lane (counting what it held), takes a new epoch and probes
 * again with the new end: the link comes back, and from then on each end
 * reads only the other's new stream, from its first packet, in order
 * (an old packet, a duplicate or a gap would not match).  Datagrams of the
 * epochs left behind are dropped and counted, and cause no reset. */
static void t_restart(void)
{
    struct pair p;
    if (!make_pair(&p, 0, 1.0, 0)) {
        free_pair(&p);
        return;
    }
    /* 100 ms of packets both ways, the queues kept full */
    CHECK_EQ_I(pump(&p, 3, 1000, 100000, UINT64_MAX), RIFL_OK);
    CHECK(p.got[0] > 100 && p.got[1] > 100);
    CHECK_EQ_U(p.bad, 0);
    unsigned port1 = rifl_phy_udp_local_port(rifl_udplink_phy(p.l[1]));
    unsigned port0 = rifl_phy_udp_local_port(rifl_udplink_phy(p.l[0]));
    REQUIRE(port0 && port1);
    uint32_t old0 = rifl_phy_udp_get_stats(rifl_udplink_phy(p.l[0]))->epoch;
    CHECK_EQ_U(old0, 10);
    /* end 1 goes; end 0 runs on alone for 20 ms (its window shuts) */
    rifl_udplink_free(p.l[1]);
    p.l[1] = NULL;
    CHECK_EQ_I(pump(&p, 1, 1000, 20000, UINT64_MAX), RIFL_OK);
    CHECK(rifl_udplink_running(p.l[0]));
    CHECK_EQ_U(rifl_udplink_get_stats(p.l[0])->resets, 0);
    /* a new end 1 on the same port, epoch 12 */
    char local[64], remote[64];
    snprintf(local, sizeof local, "127.0.0.1:%u", port1);
    snprintf(remote, sizeof remote, "127.0.0.1:%u", port0);
    rifl_udplink_config c;
    rifl_udplink_defaults(&c);
    c.udp.local = local;
    c.udp.remote = remote;
    c.udp.epoch = 12;
    c.udp.seed = test_seed * 2 + 7;
    char msg[512] = "";
    int rc = rifl_udplink_create(&c, &p.l[1], msg, sizeof msg);
    CHECK_MSG(rc == RIFL_OK, "%s", msg);
    if (rc != RIFL_OK) {
        rifl_udplink_free(p.l[0]);
        return;
    }
    p.stream[1] = 43;
    p.sent[1] = p.got[1] = p.have[1] = 0;
    /* 300 ms: the joint reset, then 300 packets each way */
    CHECK_EQ_I(pump(&p, 3, 1000, 300000, 300), RIFL_OK);
    for (int i = 0; i < 2; i++)
        CHECK(rifl_udplink_running(p.l[i]));
    CHECK_EQ_U(p.got[0], 300);
    CHECK_EQ_U(p.got[1], 300);
    CHECK_EQ_U(p.bad, 0);
    const rifl_udplink_stats *s0 = rifl_udplink_get_stats(p.l[0]);
    const rifl_udplink_stats *s1 = rifl_udplink_get_stats(p.l[1]);
    const rifl_phy_udp_stats *u0 = rifl_phy_udp_get_stats(rifl_udplink_phy(p.l[0]));
    const rifl_phy_udp_stats *u1 = rifl_phy_udp_get_stats(rifl_udplink_phy(p.l[1]));
    printf("  end 0: resets %llu, frames dropped %llu queued + %llu unread, new epoch %u; "
           "end 1: peer epochs adopted %llu, stale datagrams %llu\n",
           (unsigned long long)s0->resets, (unsigned long long)s0->reset_tx_frames,
           (unsigned long long)s0->reset_rx_frames, (unsigned)u0->epoch,
           (unsigned long long)s1->peer_epochs_adopted, (unsigned long long)u1->rx_stale);
    CHECK_EQ_U(s0->resets, 1);
    CHECK_EQ_U(s1->resets, 0);
    CHECK(s0->reset_tx_frames > 0); /* its queue was full */
    CHECK(u0->epoch != old0 && u0->epoch != 0);
    CHECK_EQ_U(u0->peer_epoch, 12);
    CHECK_EQ_U(u1->peer_epoch, u0->epoch);
    CHECK_EQ_U(u0->peer_epoch_new + u1->peer_epoch_new, 0);
    CHECK(u0->rx_foreign > 0);     /* the new end's first probes */
    /* datagrams of the epochs left behind: dropped and counted, no reset */
    uint64_t st0 = u0->rx_stale, st1 = u1->rx_stale;
    send_epoch(rifl_udplink_fd(p.l[1]), 11);
    send_epoch(rifl_udplink_fd(p.l[0]), old0);
    CHECK_EQ_I(pump(&p, 3, 1000, 50000, 400), RIFL_OK);
    CHECK_EQ_U(u0->rx_stale, st0 + 1);
    CHECK_EQ_U(u1->rx_stale, st1 + 1);
    CHECK_EQ_U(s0->resets, 1);
    CHECK_EQ_U(s1->resets, 0);
    CHECK_EQ_U(p.got[0], 400);
    CHECK_EQ_U(p.got[1], 400);
    CHECK_EQ_U(p.bad, 0);
    free_pair(&p);
}

/* A new end 1 on `port1`, its peer on `port0`, of `epoch` and `bits`-bit
 * frames (0: the default). */
static bool new_end1(struct pair *p, unsigned port1, unsigned port0, uint32_t epoch,
                     unsigned bits)
{
    char local[64], remote[64];
    snprintf(local, sizeof local, "127.0.0.1:%u", port1);
    snprintf(remote, sizeof remote, "127.0.0.1:%u", port0);
    rifl_udplink_config c;
    rifl_udplink_defaults(&c);
    c.udp.local = local;
    c.udp.remote = remote;
    c.udp.epoch = epoch;
    c.udp.seed = test_seed * 2 + epoch;
    if (bits)
        c.udp.frame_bits = bits;
    char msg[512] = "";
    int rc = rifl_udplink_create(&c, &p->l[1], msg, sizeof msg);
    CHECK_MSG(rc == RIFL_OK, "%s", msg);
    return rc == RIFL_OK;
}

/* End 1 goes and a new one (`epoch`, `bits`-bit frames, 0: the default)
 * takes its port; false, with both ends freed, when it cannot be made. */
static bool replace_end1(struct pair *p, unsigned port1, unsigned port0, uint32_t epoch,
                         unsigned bits)
{
    rifl_udplink_free(p->l[1]);
    p->l[1] = NULL;
    if (new_end1(p, port1, port0, epoch, bits))
        return true;
    rifl_udplink_free(p->l[0]);
    p->l[0] = NULL;
    return false;
}

/* End 1's user starts a new stream and the link carries `n` packets each
 * way: both ends running, every packet whole. */
static void comes_back(struct pair *p, unsigned n)
{
    p->stream[1] = 43;
    p->sent[1] = p->got[1] = p->have[1] = 0;
    CHECK_EQ_I(pump(p, 3, 1000, 300000, n), RIFL_OK);
    for (int i = 0; i < 2; i++)
        CHECK(rifl_udplink_running(p->l[i]));
    CHECK_EQ_U(p->got[0], n);
    CHECK_EQ_U(p->got[1], n);
    CHECK_EQ_U(p->bad, 0);
}

/* The peer restarts with another frame width, stops on it (its probes
 * were answered in the running end's width), and restarts again with the
 * right one: the running end, which heard the wrong width while it ran
 * (counted, of an epoch not its peer's: the width not kept), rejoins the
 * new peer and the link comes back, instead of its probing stopping on the
 * width of the peer's start before. */
static void t_restart_other_width(void)
{
    struct pair p;
    if (!make_pair(&p, 0, 1.0, 0)) {
        free_pair(&p);
        return;
    }
    CHECK_EQ_I(pump(&p, 3, 1000, 20000, 100), RIFL_OK);
    REQUIRE(rifl_udplink_running(p.l[0]) && rifl_udplink_running(p.l[1]));
    unsigned port0 = rifl_phy_udp_local_port(rifl_udplink_phy(p.l[0]));
    unsigned port1 = rifl_phy_udp_local_port(rifl_udplink_phy(p.l[1]));
    REQUIRE(port0 && port1);
    const rifl_phy_udp_stats *u0 = rifl_phy_udp_get_stats(rifl_udplink_phy(p.l[0]));
    uint64_t foreign = u0->rx_foreign;
    if (!replace_end1(&p, port1, port0, 12, 1024))
        return;
    /* the 1024-bit end stops; end 0 runs on, its probes counted */
    int rc = RIFL_OK;
    char msg[512] = "";
    for (unsigned k = 0; k < 2000 && rc == RIFL_OK; k++) {
        CHECK_EQ_I(pump(&p, 1, 1000, 1, 0), RIFL_OK);
        uint64_t wake;
        rc = rifl_udplink_step(p.l[1], p.now, &wake, msg, sizeof msg);
    }
    CHECK_EQ_I(rc, RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(msg, "same frame width") != NULL, "%s", msg);
    CHECK(u0->rx_other_width > 0);
    CHECK_EQ_U(u0->rx_foreign - foreign, u0->rx_other_width);
    CHECK_EQ_U(u0->peer_frame_bits, 0);
    CHECK(rifl_udplink_running(p.l[0]));
    /* end 1 again, of end 0's width: the joint reset, the link back */
    if (!replace_end1(&p, port1, port0, 13, 0))
        return;
    comes_back(&p, 100);
    CHECK_EQ_U(rifl_udplink_get_stats(p.l[0])->resets, 1);
    CHECK_EQ_U(u0->peer_epoch, 13);
    CHECK_EQ_U(u0->peer_frame_bits, 0);
    free_pair(&p);
}

/* A probe question as a peer would send it on `fd` (connected to the
 * other end): `bits`-bit frames, the sender's `epoch`, a token, no value,
 * no epoch known for the receiver and none before. */
static void send_probe_ask(int fd, unsigned bits, uint32_t epoch, uint64_t token)
{
    uint8_t d[RIFL_UDP_HEADER_BYTES + 16];
    memset(d, 0, sizeof d);
    d[0] = 'R';
    d[1] = 'F';
    d[2] = 1;
    d[3] = (uint8_t)__builtin_ctz(bits);
    d[6] = 1; /* a question */
    for (int k = 0; k < 4; k++)
        d[8 + k] = (uint8_t)(epoch >> (24 - 8 * k));
    for (int k = 0; k < 8; k++)
        d[12 + k] = (uint8_t)(token >> (56 - 8 * k));
    REQUIRE(send(fd, d, sizeof d, 0) == (ssize_t)sizeof d);
}

/* A peer that restarts again and again while this end probes (a new epoch
 * every millisecond, never an answer): each new epoch is adopted, but the
 * start-up still ends at the probe timeout, counted from its beginning,
 * with an error that names the peer and says that it kept restarting;
 * the restarts do not put the timeout off for ever. */
static void t_probe_restarting_peer(void)
{
    struct pair p;
    if (!make_pair(&p, 0, 1.0, 0)) {
        free_pair(&p);
        return;
    }
    /* end 1 is never stepped: its socket only sends the made-up probes */
    int fd1 = rifl_udplink_fd(p.l[1]);
    uint64_t t0 = p.now;
    int rc = RIFL_OK;
    char msg[512] = "";
    uint32_t epoch = 100;
    for (unsigned k = 0; k < 200000 && rc == RIFL_OK; k++) {
        p.now += 100000; /* 100 us: 20 s at most */
        if (k % 10 == 0)
            send_probe_ask(fd1, 2048, epoch++, k);
        uint64_t wake;
        rc = rifl_udplink_step(p.l[0], p.now, &wake, msg, sizeof msg);
    }
    const rifl_udplink_stats *s = rifl_udplink_get_stats(p.l[0]);
    printf("  stopped after %.3f s, %llu epochs of the peer adopted: %s\n",
           (double)(p.now - t0) / 1e9, (unsigned long long)s->peer_epochs_adopted, msg);
    CHECK_EQ_I(rc, RIFL_ERR_IO);
    CHECK(!rifl_udplink_running(p.l[0]));
    /* the default 5 s, and the step that saw it pass */
    CHECK(p.now - t0 > 5000000000ull && p.now - t0 <= 5000200000ull);
    CHECK(s->peer_epochs_adopted > 1000);
    CHECK_MSG(strstr(msg, "127.0.0.1:") && strstr(msg, "restarted") &&
              strstr(msg, "5.0 s"), "%s", msg);
    free_pair(&p);
}

/* One read of the socket brings a probe of another frame width and then a
 * probe of a new epoch of the peer's in the right width (the peer stopped
 * on the wrong width and restarted with the right one, both before this
 * end read its socket).  The wrong-width probe is counted and answered,
 * the width it named is forgotten with the peer's start it came from, and
 * the new epoch is adopted as if its probe had come alone: this end probes
 * on and the link comes up with the new peer, instead of stopping on the
 * width of the start before. */
static void t_probe_width_then_restart(void)
{
    struct pair p;
    if (!make_pair(&p, 0, 1.0, 0)) {
        free_pair(&p);
        return;
    }
    /* a few probes each way: each end knows the other's epoch, none has
     * its 16 round trips yet */
    CHECK_EQ_I(pump(&p, 3, 10000, 3, 0), RIFL_OK);
    REQUIRE(!rifl_udplink_running(p.l[0]) && !rifl_udplink_running(p.l[1]));
    const rifl_phy_udp_stats *u0 = rifl_phy_udp_get_stats(rifl_udplink_phy(p.l[0]));
    REQUIRE(u0->peer_epoch == 11);
    unsigned port0 = rifl_phy_udp_local_port(rifl_udplink_phy(p.l[0]));
    unsigned port1 = rifl_phy_udp_local_port(rifl_udplink_phy(p.l[1]));
    REQUIRE(port0 && port1);
    /* end 1 goes; a new one (epoch 13) on its port, whose socket sends, for
     * end 0's next read, a probe of the start it replaced (epoch 12, 1024-bit
     * frames) and then its own first probe */
    if (!replace_end1(&p, port1, port0, 13, 0))
        return;
    int fd1 = rifl_udplink_fd(p.l[1]);
    send_probe_ask(fd1, 1024, 12, 1);
    send_probe_ask(fd1, 2048, 13, 2);
    p.now += 10000;
    uint64_t wake;
    char msg[512] = "";
    int rc = rifl_udplink_step(p.l[0], p.now, &wake, msg, sizeof msg);
    CHECK_MSG(rc == RIFL_OK, "%s", msg);
    CHECK_EQ_U(u0->rx_other_width, 1);
    CHECK_EQ_U(u0->probes_answered > 0, 1);
    CHECK_EQ_U(u0->peer_epoch, 13);
    CHECK_EQ_U(u0->peer_epoch_new, 0);
    CHECK_EQ_U(u0->peer_frame_bits, 0);
    CHECK_EQ_U(rifl_udplink_get_stats(p.l[0])->peer_epochs_adopted, 1);
    /* the link comes up with the new end 1 */
    comes_back(&p, 100);
    CHECK_EQ_U(u0->peer_epoch, 13);
    CHECK_EQ_U(u0->rx_other_width, 1);
    free_pair(&p);
}

/* One read of the socket brings the probes of a start of the peer's that
 * published its round-trip estimate, and then a probe of the peer's next
 * start (the peer stopped and restarted, both before this end read its
 * socket).  The value the old start published is forgotten with it: sized
 * from other settings (here a lane rate of 8 Gbit/s, which the new start
 * corrected), it does not stop this end with the error naming the
 * settings; sized as this end is, it does not start a lane that the new
 * epoch resets at once.  The new epoch is adopted as if its probe had come
 * alone, and the link comes up with it, with no reset at either end. */
static void t_probe_value_then_restart(void)
{
    for (int other = 0; other < 2; other++) {
        struct pair p;
        pair_rate1 = other ? 8.0 : 0;
        bool made = make_pair(&p, 0, 1.0, 20000); /* the round trip given */
        pair_rate1 = 0;
        if (!made) {
            free_pair(&p);
            return;
        }
        /* end 0 probes; end 1 (epoch 11) answers it, publishes its value at
         * once and probes with it, naming end 0's epoch */
        uint64_t wake;
        char msg[512] = "";
        p.now += 10000;
        REQUIRE(rifl_udplink_step(p.l[0], p.now, &wake, msg, sizeof msg) == RIFL_OK);
        REQUIRE(rifl_udplink_step(p.l[1], p.now, &wake, msg, sizeof msg) == RIFL_OK);
        REQUIRE(rifl_phy_udp_get_stats(rifl_udplink_phy(p.l[1]))->peer_epoch == 10);
        unsigned port0 = rifl_phy_udp_local_port(rifl_udplink_phy(p.l[0]));
        unsigned port1 = rifl_phy_udp_local_port(rifl_udplink_phy(p.l[1]));
        REQUIRE(port0 && port1);
        /* end 1 goes; a new one (epoch 13, end 0's settings) on its port
         * probes before end 0 reads */
        if (!replace_end1(&p, port1, port0, 13, 0))
            return;
        send_probe_ask(rifl_udplink_fd(p.l[1]), 2048, 13, 2);
        p.now += 10000;
        int rc = rifl_udplink_step(p.l[0], p.now, &wake, msg, sizeof msg);
        CHECK_MSG(rc == RIFL_OK, "old end 1 at %s Gbit/s: %s", other ? "8" : "1", msg);
        const rifl_phy_udp_stats *u0 = rifl_phy_udp_get_stats(rifl_udplink_phy(p.l[0]));
        const rifl_udplink_stats *s0 = rifl_udplink_get_stats(p.l[0]);
        CHECK(!rifl_udplink_running(p.l[0]));
        CHECK_EQ_U(s0->resets, 0);
        CHECK_EQ_U(s0->peer_epochs_adopted, 1);
        CHECK_EQ_U(u0->epoch, 10);
        CHECK_EQ_U(u0->peer_epoch, 13);
        CHECK_EQ_U(u0->peer_epoch_new, 0);
        CHECK_EQ_U(u0->peer_probe_value, 0);
        /* the link comes up with the new end 1 */
        comes_back(&p, 100);
        for (int i = 0; i < 2; i++)
            CHECK_EQ_U(rifl_udplink_get_stats(p.l[i])->resets, 0);
        CHECK_EQ_U(u0->peer_epoch, 13);
        free_pair(&p);
    }
}

/* A late datagram of another frame width from a start of the peer's before
 * the one this end adopted (that start stopped on the width, the peer
 * restarted with the right one, and the old start's datagrams were held up
 * on the way): counted (rx_other_width) and dropped as a datagram of an
 * epoch not the peer's (rx_foreign), its width not kept, and the link comes
 * up with the peer's start that uses the right width.  The same width from
 * the epoch adopted still stops start-up with the error naming both
 * widths. */
static void t_probe_late_other_width(void)
{
    for (int adopted = 0; adopted < 2; adopted++) {
        struct pair p;
        if (!make_pair(&p, 0, 1.0, 0)) {
            free_pair(&p);
            return;
        }
        /* a few probes each way: end 0 knows end 1's epoch, 11 */
        CHECK_EQ_I(pump(&p, 3, 10000, 3, 0), RIFL_OK);
        REQUIRE(!rifl_udplink_running(p.l[0]) && !rifl_udplink_running(p.l[1]));
        const rifl_phy_udp_stats *u0 = rifl_phy_udp_get_stats(rifl_udplink_phy(p.l[0]));
        REQUIRE(u0->peer_epoch == 11);
        uint64_t foreign = u0->rx_foreign;
        /* a probe and a datagram of frames of 1024 bits: of epoch 12 (the
         * start before), or of 11 */
        uint32_t epoch = adopted ? 11 : 12;
        int fd1 = rifl_udplink_fd(p.l[1]);
        send_probe_ask(fd1, 1024, epoch, 1);
        send_frame_bits(fd1, 1024, epoch);
        p.now += 10000;
        uint64_t wake;
        char msg[512] = "";
        int rc = rifl_udplink_step(p.l[0], p.now, &wake, msg, sizeof msg);
        CHECK_EQ_U(u0->rx_other_width, 2);
        CHECK_EQ_U(u0->peer_epoch, 11);
        CHECK_EQ_U(u0->peer_epoch_new, 0);
        if (adopted) {
            CHECK_EQ_I(rc, RIFL_ERR_CONFIG);
            CHECK_MSG(strstr(msg, "uses 1024-bit frames and this end 2048-bit") != NULL, "%s",
                      msg);
            CHECK_EQ_U(u0->peer_frame_bits, 1024);
            CHECK_EQ_U(u0->rx_foreign, foreign);
            free_pair(&p);
            continue;
        }
        CHECK_MSG(rc == RIFL_OK, "%s", msg);
        CHECK_EQ_U(u0->peer_frame_bits, 0);
        CHECK_EQ_U(u0->rx_foreign, foreign + 2);
        /* the link comes up with end 1 */
        CHECK_EQ_I(pump(&p, 3, 1000, 300000, 100), RIFL_OK);
        for (int i = 0; i < 2; i++)
            CHECK(rifl_udplink_running(p.l[i]));
        const rifl_udplink_stats *s0 = rifl_udplink_get_stats(p.l[0]);
        CHECK_EQ_U(s0->resets + s0->peer_epochs_adopted, 0);
        CHECK_EQ_U(u0->peer_epoch, 11);
        CHECK_EQ_U(u0->rx_other_width, 2);
        CHECK_EQ_U(p.got[0], 100);
        CHECK_EQ_U(p.got[1], 100);
        CHECK_EQ_U(p.bad, 0);
        free_pair(&p);
    }
}

/* The peer starts again with another frame width while this end probes
 * with its old start adopted, and the old start says nothing more: the
 * new start's datagrams are of an epoch this end has not adopted, so they
 * set no width, but when the time is up the error names them and the fix,
 * not "did not answer". */
static void t_probe_new_start_other_width(void)
{
    struct pair p;
    if (!make_pair(&p, 0, 1.0, 0)) {
        free_pair(&p);
        return;
    }
    CHECK_EQ_I(pump(&p, 3, 10000, 3, 0), RIFL_OK);
    const rifl_phy_udp_stats *u0 = rifl_phy_udp_get_stats(rifl_udplink_phy(p.l[0]));
    REQUIRE(u0->peer_epoch == 11 && !rifl_udplink_running(p.l[0]));
    int fd1 = rifl_udplink_fd(p.l[1]);
    char msg[512] = "";
    int rc = RIFL_OK;
    uint64_t start = p.now;
    for (uint32_t k = 1; rc == RIFL_OK && p.now - start < 10000000000ull; k++) {
        send_probe_ask(fd1, 1024, 12, k);
        p.now += 100000000; /* 100 ms */
        uint64_t wake;
        rc = rifl_udplink_step(p.l[0], p.now, &wake, msg, sizeof msg);
    }
    CHECK_EQ_I(rc, RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(msg, "did not answer with 2048-bit frames in 5.0 s") &&
                  strstr(msg, "of another frame width came from a new start of it") &&
                  strstr(msg, "--frame-bits"), "%s", msg);
    CHECK_EQ_U(u0->peer_frame_bits, 0);
    CHECK(u0->rx_other_width >= 40);
    free_pair(&p);
}

/* The driver's list of the frames a read hands over (rx_frames entries)
 * counts against RIFL_PHY_MAX_BYTES with the PHY's queue: 2^21 frames of
 * 2048 bits fill the 1 GiB with the queue alone (twice 512 MiB), and the
 * list's 32 MiB more are refused before anything is allocated, naming the
 * settings. */
static void t_rx_size(void)
{
    rifl_udplink_config c;
    rifl_udplink_defaults(&c);
    c.udp.local = "127.0.0.1:0";
    c.udp.remote = "127.0.0.1:9";
    c.udp.rx_frames = 1u << 21;
    rifl_udplink *l = NULL;
    char msg[512] = "";
    int rc = rifl_udplink_create(&c, &l, msg, sizeof msg);
    CHECK_EQ_I(rc, RIFL_ERR_CONFIG);
    CHECK(l == NULL);
    char mib[32]; /* 1056 MiB with 16-byte entries */
    snprintf(mib, sizeof mib, "%llu MiB",
             (unsigned long long)(((uint64_t)c.udp.rx_frames *
                                   (2 * 256 + sizeof(rifl_phy_frame))) >> 20));
    CHECK_MSG(strstr(msg, "2097152 frames of 2048 bits") && strstr(msg, mib) &&
              strstr(msg, "lower rx_frames or frame_bits"), "%s", msg);
    rifl_udplink_free(l);
    /* a socket given is closed on the refusal, as on every other */
    unsigned port;
    int fd = test_bound_socket(&port);
    if (fd >= 0) {
        c.udp.local = NULL;
        c.udp.fd = fd;
        l = NULL;
        CHECK_EQ_I(rifl_udplink_create(&c, &l, msg, sizeof msg), RIFL_ERR_CONFIG);
        CHECK(l == NULL);
        CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
        rifl_udplink_free(l);
    }
}

/* A packet sent as soon as the link is up, while the peer has nothing to
 * send: the lanes' start-up (no user data before 2^K new fillers) runs at
 * the lane rate at both ends, so it arrives within a few times 2^K slots
 * of the made-up clock, not at the pace of the peer's keepalives (about 60
 * ms here). */
static void t_first_packet(void)
{
    struct pair p;
    if (!make_pair(&p, 0, 1.0, 0)) {
        free_pair(&p);
        return;
    }
    uint64_t sent_at = 0;
    for (unsigned k = 0; k < 100000 && !p.got[1]; k++) {
        p.now += 10000;
        for (int i = 0; i < 2; i++) {
            uint64_t wake;
            char msg[512] = "";
            REQUIRE(rifl_udplink_step(p.l[i], p.now, &wake, msg, sizeof msg) == RIFL_OK);
        }
        rifl_lane *lane = rifl_udplink_lane(p.l[0]);
        if (lane && !sent_at) {
            uint8_t pkt[2000];
            size_t n = pkt_len(0);
            rifl_packet_fill(p.stream[0], 0, pkt, n);
            REQUIRE(rifl_lane_send(lane, pkt, n) == RIFL_OK);
            p.sent[0] = 1;
            sent_at = p.now;
        }
        drain(&p, 1);
    }
    CHECK_EQ_U(p.got[1], 1);
    CHECK_EQ_U(p.bad, 0);
    const rifl_udplink_sizing *z = rifl_udplink_get_sizing(p.l[0]);
    printf("  first packet arrived %.3f ms after it was sent (K %u, %.1f ns slots, window %u)\n",
           (double)(p.now - sent_at) / 1e6, z->fid_bits, z->slot_ns, z->window);
    /* the start-up is 2^K slots of initialisation and 2^K new fillers:
     * allow twice that and a window */
    CHECK(p.now - sent_at < ((4u << z->fid_bits) + z->window) * z->slot_ns);
    free_pair(&p);
}

TEST_MAIN({ "sizing", t_sizing }, { "first_packet", t_first_packet }, { "probe_agree", t_probe_agree },
          { "probe_late_peer", t_probe_late_peer },
          { "probe_busy_start", t_probe_busy_start },
          { "probe_timeout", t_probe_timeout },
          { "peer_name", t_peer_name }, { "refused", t_refused },
          { "other_width", t_other_width },
          { "other_sizing", t_other_sizing },
          { "default_epoch", t_default_epoch },
          { "lossless", t_lossless }, { "window", t_window }, { "idle", t_idle },
          { "idle_lossy", t_idle_lossy },
          { "restart", t_restart },
          { "restart_other_width", t_restart_other_width },
          { "probe_restarting_peer", t_probe_restarting_peer },
          { "probe_width_then_restart", t_probe_width_then_restart },
          { "probe_value_then_restart", t_probe_value_then_restart },
          { "probe_late_other_width", t_probe_late_other_width },
          { "rx_size", t_rx_size },
          { "probe_new_start_other_width", t_probe_new_start_other_width }, { "exchange", t_exchange })

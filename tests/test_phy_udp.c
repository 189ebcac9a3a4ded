/* The UDP PHY (rifl/phy.h, "UDP"; docs/udp.md) on loopback, no root: the
 * datagram header read and written, refused settings, two lanes across two
 * real sockets with datagrams lost and duplicated delivering every packet
 * once and in order, and datagrams that come late, twice, from another
 * epoch or malformed dropped and counted, and the rejoin after a restart
 * of the peer. */
#include "testlib.h"
#include "phy_lanes.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rifl/frame.h"
#include "rifl/lane.h"
#include "rifl/phy.h"
#include "rifl/sim/traffic.h"

#define F 256
#define FB (F / 8)

static void t_header(void)
{
    uint8_t d[RIFL_UDP_HEADER_BYTES + 3 * FB];
    memset(d, 0xA5, sizeof d);
    rifl_udp_header h = { F, 3, 0xDEADBEEF, 0x0102030405060708ULL }, g;
    CHECK_EQ_I(rifl_udp_header_write(&h, d), RIFL_OK);
    CHECK(d[0] == 'R' && d[1] == 'F' && d[2] == 1 && d[3] == 8 && d[4] == 0 && d[5] == 3);
    CHECK(d[8] == 0xDE && d[11] == 0xEF && d[12] == 1 && d[19] == 8);
    CHECK_EQ_I(rifl_udp_header_read(d, sizeof d, &g), RIFL_OK);
    CHECK_EQ_U(g.frame_bits, F);
    CHECK_EQ_U(g.count, 3);
    CHECK_EQ_U(g.epoch, 0xDEADBEEF);
    CHECK_EQ_U(g.seq, 0x0102030405060708ULL);
    /* malformed: short, a byte too many, bad magic, version, width, count,
     * reserved bits */
    CHECK_EQ_I(rifl_udp_header_read(d, sizeof d - 1, &g), RIFL_ERR_FRAME);
    CHECK_EQ_I(rifl_udp_header_read(d, sizeof d + 0 - FB, &g), RIFL_ERR_FRAME);
    CHECK_EQ_I(rifl_udp_header_read(d, 10, &g), RIFL_ERR_FRAME);
    size_t fields[] = { 0, 2, 3, 5, 7 };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        uint8_t e[sizeof d];
        memcpy(e, d, sizeof d);
        e[fields[i]] ^= 0x40;
        CHECK_EQ_I(rifl_udp_header_read(e, sizeof e, &g), RIFL_ERR_FRAME);
    }
    h.count = 0;
    CHECK_EQ_I(rifl_udp_header_write(&h, d), RIFL_ERR_INVALID_ARG);
    h.count = RIFL_UDP_MAX_FRAMES + 1;
    CHECK_EQ_I(rifl_udp_header_write(&h, d), RIFL_ERR_INVALID_ARG);
    h = (rifl_udp_header){ 100, 1, 1, 0 };
    CHECK_EQ_I(rifl_udp_header_write(&h, d), RIFL_ERR_INVALID_ARG);
    /* no sender has epoch 0, and no frame's number wraps */
    h = (rifl_udp_header){ F, 3, 0, 5 };
    CHECK_EQ_I(rifl_udp_header_write(&h, d), RIFL_OK);
    CHECK_EQ_I(rifl_udp_header_read(d, sizeof d, &g), RIFL_ERR_FRAME);
    h = (rifl_udp_header){ F, 3, 7, UINT64_MAX - 2 };
    CHECK_EQ_I(rifl_udp_header_write(&h, d), RIFL_OK);
    CHECK_EQ_I(rifl_udp_header_read(d, sizeof d, &g), RIFL_ERR_FRAME);
    h.seq = UINT64_MAX - 3;
    CHECK_EQ_I(rifl_udp_header_write(&h, d), RIFL_OK);
    CHECK_EQ_I(rifl_udp_header_read(d, sizeof d, &g), RIFL_OK);
}

static void refused(const rifl_phy_udp_config *c, int want, const char *needle)
{
    rifl_phy *p = NULL;
    char msg[512] = "";
    int rc = rifl_phy_udp_create(c, &p, msg, sizeof msg);
    CHECK_EQ_I(rc, want);
    CHECK(p == NULL);
    CHECK_MSG(strstr(msg, needle) != NULL, "message '%s' lacks '%s'", msg, needle);
    rifl_phy_free(p);
}

static void t_bad_config(void)
{
    rifl_phy_udp_config c = { .frame_bits = F, .fd = -1, .local = "127.0.0.1:0",
                              .remote = "127.0.0.1:9", .epoch = 1 };
    rifl_phy_udp_config b = c;
    b.epoch = 0;
    refused(&b, RIFL_ERR_CONFIG, "epoch 0");
    b = c;
    b.remote = "localhost";
    refused(&b, RIFL_ERR_CONFIG, "ADDRESS:PORT");
    b = c;
    b.remote = "no.such.host:80";
    refused(&b, RIFL_ERR_CONFIG, "numeric");
    b = c;
    b.local = "127.0.0.1:99999";
    refused(&b, RIFL_ERR_CONFIG, "port from 0 to 65535");
    b = c;
    /* leading zeros past five digits: a port no one writes, and an
     * address that would not fit a state file */
    b.local = "127.0.0.1:000000000000000000041071";
    refused(&b, RIFL_ERR_CONFIG, "port from 0 to 65535");
    b = c;
    b.remote = "::1:7000"; /* [::1]:7000, or [::1:7000] without a port? */
    refused(&b, RIFL_ERR_CONFIG, "in brackets");
    b = c;
    b.frames_per_datagram = RIFL_UDP_MAX_FRAMES + 1;
    refused(&b, RIFL_ERR_CONFIG, "frames per datagram");
    b = c;
    b.frame_bits = 100;
    refused(&b, RIFL_ERR_CONFIG, "frame width");
    b = c;
    b.loss = 1.5;
    refused(&b, RIFL_ERR_CONFIG, "probability");
    b = c;
    b.rx_every_slots = 65;
    refused(&b, RIFL_ERR_CONFIG, "use 1 to 64");
    b = c;
    b.gso_datagrams = 65;
    refused(&b, RIFL_ERR_CONFIG, "datagrams per send");
    /* each within its limit, but a queue of 8 GiB */
    b = c;
    b.frame_bits = 2048;
    b.rx_frames = 1u << 24;
    refused(&b, RIFL_ERR_CONFIG, "lower rx_frames or frame_bits");
    b = c;
    b.local = "192.0.2.1:0"; /* an address this machine does not have */
    refused(&b, RIFL_ERR_IO, "cannot open");
    /* port 0 binds any port, but names no peer */
    b = c;
    b.remote = "127.0.0.1:0";
    refused(&b, RIFL_ERR_CONFIG, "port 0, which no peer listens on");
    /* one end IPv4, the other IPv6 */
    b = c;
    b.remote = "[::1]:7000";
    refused(&b, RIFL_ERR_CONFIG, "IPv4 and the peer's [::1]:7000 IPv6");
    /* a socket given is the PHY's, refused settings or not: closed */
    b = c;
    b.epoch = 0;
    b.fd = socket(AF_INET, SOCK_DGRAM, 0);
    REQUIRE(b.fd >= 0);
    refused(&b, RIFL_ERR_CONFIG, "epoch 0");
    CHECK(fcntl(b.fd, F_GETFD) == -1 && errno == EBADF);
    rifl_phy *p = NULL;
    CHECK_EQ_I(rifl_phy_udp_create(NULL, &p, NULL, 0), RIFL_ERR_INVALID_ARG);
    CHECK(rifl_phy_udp_get_stats(NULL) == NULL);
    CHECK_EQ_U(rifl_phy_udp_local_port(NULL), 0);
}

/* Two ends: end i's PHY sends to end 1-i's socket (reading it at every
 * `ends_rx_every`-th exchange, 0: at each). */
static unsigned ends_rx_every;
static unsigned ends_gso; /* gso_datagrams of both ends */

struct ends {
    rifl_phy *phy[2];
    int spare;          /* a second descriptor of end 0's socket */
    unsigned port[2];
};

static bool make_ends(struct ends *e, unsigned fpd, double loss, double twice, uint64_t seed)
{
    int fd[2];
    for (int i = 0; i < 2; i++) {
        fd[i] = test_bound_socket(&e->port[i]);
        if (fd[i] < 0) {
            printf("  no loopback UDP socket: skipped\n");
            return false;
        }
    }
    e->spare = dup(fd[0]);
    for (int i = 0; i < 2; i++) {
        char remote[64];
        snprintf(remote, sizeof remote, "127.0.0.1:%u", e->port[1 - i]);
        rifl_phy_udp_config c = { .frame_bits = F, .fd = fd[i], .remote = remote,
                                  .frames_per_datagram = fpd, .epoch = 100u + (unsigned)i,
                                  .loss = loss, .dup = twice, .seed = seed + (unsigned)i,
                                  .rx_every_slots = ends_rx_every,
                                  .gso_datagrams = ends_gso };
        char msg[256] = "";
        int rc = rifl_phy_udp_create(&c, &e->phy[i], msg, sizeof msg);
        CHECK_MSG(rc == RIFL_OK, "%s", msg);
        if (rc != RIFL_OK)
            return false;
        CHECK_EQ_U(rifl_phy_udp_local_port(e->phy[i]), e->port[i]);
    }
    return true;
}

static void free_ends(struct ends *e)
{
    rifl_phy_free(e->phy[0]);
    rifl_phy_free(e->phy[1]);
    if (e->spare >= 0)
        close(e->spare);
}


static void t_lanes_clean(void)
{
    struct ends e = { .spare = -1 };
    if (!make_ends(&e, 16, 0, 0, test_seed)) {
        free_ends(&e);
        return;
    }
    uint64_t got = 0, replays = 0;
    test_run_lanes(e.phy, F, 16, 20000, &got, &replays);
    CHECK(got > 300);
    for (int i = 0; i < 2; i++) {
        const rifl_phy_udp_stats *s = rifl_phy_udp_get_stats(e.phy[i]);
        CHECK(s->dgrams_sent > 1000);
        CHECK_EQ_U(s->rx_late + s->rx_missing + s->rx_malformed + s->rx_foreign, 0);
        CHECK_EQ_U(s->peer_epoch, 100u + (unsigned)(1 - i));
        /* a larger receive buffer than the default was asked for: the
         * kernel grants at least its default (212992 bytes on Linux) */
        CHECK(s->rx_buffer_bytes >= 212992);
    }
    free_ends(&e);
}

static void t_lanes_lossy(void)
{
    struct ends e = { .spare = -1 };
    unsigned fpd = 8;
    if (!make_ends(&e, fpd, 0.005, 0.01, test_seed * 3)) {
        free_ends(&e);
        return;
    }
    uint64_t got = 0, replays = 0;
    test_run_lanes(e.phy, F, fpd, test_long_run ? 400000 : 60000, &got, &replays);
    printf("  %llu packets delivered, %llu replay cycles\n", (unsigned long long)got,
           (unsigned long long)replays);
    CHECK(got > 200);
    CHECK(replays > 5);
    for (int i = 0; i < 2; i++) {
        const rifl_phy_udp_stats *s = rifl_phy_udp_get_stats(e.phy[i]);
        CHECK(s->tx_lost > 0 && s->tx_duplicated > 0);
        CHECK(s->rx_late > 0 && s->rx_missing > 0 && s->rx_erasures > 0);
    }
    free_ends(&e);
}

/* Datagrams held and sent several to a system call (UDP_SEGMENT), read
 * coalesced (UDP_GRO): every packet once and in order, clean and with
 * datagrams lost and duplicated; the calls show the batches.  A kernel that
 * refuses either still delivers everything, one call per datagram. */
static void t_lanes_gso(void)
{
    struct ends e = { .spare = -1 };
    ends_gso = 8;
    test_push_every = 40; /* two and a half datagrams: one is being filled */
    bool made = make_ends(&e, 16, 0, 0, test_seed);
    ends_gso = 0;
    if (!made) {
        test_push_every = 0;
        free_ends(&e);
        return;
    }
    uint64_t got = 0, replays = 0;
    test_run_lanes(e.phy, F, 16, 20000, &got, &replays);
    CHECK(got > 300);
    CHECK_EQ_U(replays, 0);
    for (int i = 0; i < 2; i++) {
        const rifl_phy_udp_stats *s = rifl_phy_udp_get_stats(e.phy[i]);
        printf("  end %d: %llu datagrams in %llu calls (%llu of several), %llu coalesced reads, "
               "fallbacks %llu, UDP_GRO %s\n", i, (unsigned long long)s->dgrams_sent,
               (unsigned long long)s->tx_calls, (unsigned long long)s->gso_sends,
               (unsigned long long)s->gro_reads, (unsigned long long)s->gso_fallbacks,
               s->gro_off ? "refused" : "on");
        CHECK_EQ_U(s->rx_late + s->rx_missing + s->rx_malformed, 0);
        if (!s->gso_fallbacks) {
            /* 2 or 3 datagrams of 16 frames each 40 slots: one call */
            CHECK(s->gso_sends > 0 && s->tx_calls * 2 <= s->dgrams_sent);
        }
        if (!s->gro_off && !rifl_phy_udp_get_stats(e.phy[1 - i])->gso_fallbacks)
            CHECK(s->gro_reads > 0);
    }
    free_ends(&e);
    /* lost and duplicated datagrams among the held ones */
    e = (struct ends){ .spare = -1 };
    ends_gso = 8;
    test_push_every = 44;
    made = make_ends(&e, 8, 0.005, 0.01, test_seed * 5);
    ends_gso = 0;
    if (made) {
        test_run_lanes(e.phy, F, 8, 60000, &got, &replays);
        CHECK(got > 200 && replays > 5);
        for (int i = 0; i < 2; i++) {
            const rifl_phy_udp_stats *s = rifl_phy_udp_get_stats(e.phy[i]);
            CHECK(s->tx_lost > 0 && s->tx_duplicated > 0 && s->rx_late > 0);
        }
    }
    test_push_every = 0;
    free_ends(&e);
}

/* Frames by content, each datagram's built in one batch call and the
 * frames received decoded in batches: every packet once and in order,
 * clean and with datagrams lost and duplicated.  A frame by content into a
 * PHY without an encoder is counted, not sent; bad encoders are refused. */
static void t_lanes_content(void)
{
    for (int lossy = 0; lossy < 2; lossy++) {
        struct ends e = { .spare = -1 };
        unsigned fpd = lossy ? 8 : 16;
        if (!make_ends(&e, fpd, lossy ? 0.005 : 0, lossy ? 0.01 : 0, test_seed * 7 + lossy)) {
            free_ends(&e);
            return;
        }
        uint64_t got = 0, replays = 0;
        test_by_content = true;
        test_run_lanes(e.phy, F, fpd, lossy ? 60000 : 20000, &got, &replays);
        test_by_content = false;
        printf("  %s: %llu packets delivered, %llu replay cycles\n", lossy ? "lossy" : "clean",
               (unsigned long long)got, (unsigned long long)replays);
        CHECK(got > 200);
        CHECK(lossy ? replays > 5 : replays == 0);
        free_ends(&e);
    }
    struct ends e = { .spare = -1 };
    if (!make_ends(&e, 4, 0, 0, test_seed)) {
        free_ends(&e);
        return;
    }
    CHECK(rifl_phy_tx_buffer(e.phy[0], RIFL_PHY_CONTENT) == NULL);
    CHECK(!rifl_phy_carries(e.phy[0], RIFL_PHY_CONTENT));
    rifl_phy_frame in[4];
    rifl_phy_exchange(e.phy[0], 0, RIFL_PHY_CONTENT, in, 4);
    CHECK_EQ_U(rifl_phy_get_stats(e.phy[0])->dropped, 1);
    CHECK_EQ_U(rifl_phy_get_stats(e.phy[0])->frames, 0);
    CHECK_EQ_I(rifl_phy_udp_set_encoder(e.phy[0], 0, rifl_lane_phy_encode_batch, NULL),
               RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_phy_udp_set_encoder(e.phy[0], 64, NULL, NULL), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_phy_udp_set_encoder(NULL, 64, rifl_lane_phy_encode_batch, NULL),
               RIFL_ERR_INVALID_ARG);
    free_ends(&e);
}

/* Datagrams from the peer's port that must not be taken. */
static void t_dropped_datagrams(void)
{
    struct ends e = { .spare = -1 };
    if (!make_ends(&e, 4, 0, 0, test_seed)) {
        free_ends(&e);
        return;
    }
    rifl_phy *b = e.phy[1];
    rifl_phy_frame in[64];
    uint8_t d[RIFL_UDP_HEADER_BYTES + 4 * FB];
    /* frames 0..3 of epoch 100: taken */
    rifl_udp_header h = { F, 4, 100, 0 };
    rifl_udp_header_write(&h, d);
    for (unsigned k = 0; k < 4; k++)
        memset(d + RIFL_UDP_HEADER_BYTES + k * FB, (int)k, FB);
    REQUIRE(send(e.spare, d, sizeof d, 0) == (ssize_t)sizeof d);
    /* again (a duplicate), then an older part, another epoch, a bad one */
    REQUIRE(send(e.spare, d, sizeof d, 0) == (ssize_t)sizeof d);
    h.epoch = 555;
    h.seq = 4;
    rifl_udp_header_write(&h, d);
    REQUIRE(send(e.spare, d, sizeof d, 0) == (ssize_t)sizeof d);
    REQUIRE(send(e.spare, d, 7, 0) == 7);
    /* frames 6..9 of epoch 100: 4 and 5 missing */
    h.epoch = 100;
    h.seq = 6;
    rifl_udp_header_write(&h, d);
    REQUIRE(send(e.spare, d, sizeof d, 0) == (ssize_t)sizeof d);
    /* 4 frames, an erasure for the missing 4 and 5, 4 frames */
    unsigned n = 0;
    for (unsigned t = 0; t < 20 && n < 9; t++)
        n += rifl_phy_exchange(b, t, RIFL_PHY_NONE, in + n, 64 - n);
    CHECK_EQ_U(n, 9);
    if (n == 9)
        CHECK(((const uint8_t *)in[n - 1].data)[0] == 3);
    const rifl_phy_udp_stats *s = rifl_phy_udp_get_stats(b);
    CHECK_EQ_U(s->dgrams_received, 2);
    CHECK_EQ_U(s->rx_late, 1);
    CHECK_EQ_U(s->rx_foreign, 1);
    CHECK_EQ_U(s->rx_malformed, 1);
    CHECK_EQ_U(s->rx_missing, 2);
    CHECK_EQ_U(s->rx_erasures, 1);
    CHECK_EQ_U(s->peer_epoch, 100);
    free_ends(&e);
}

/* Empty datagrams from the peer's port: each dropped and counted as
 * malformed, with coalesced reads (UDP_GRO) and without, and the datagram
 * after them still taken. */
static void t_empty_datagrams(void)
{
    for (unsigned gso = 0; gso <= 8; gso += 8) {
        ends_gso = gso;
        struct ends e = { .spare = -1 };
        bool made = make_ends(&e, 4, 0, 0, test_seed);
        ends_gso = 0;
        if (!made) {
            free_ends(&e);
            return;
        }
        rifl_phy *b = e.phy[1];
        for (unsigned k = 0; k < 5; k++)
            REQUIRE(send(e.spare, "", 0, 0) == 0);
        uint8_t d[RIFL_UDP_HEADER_BYTES + 4 * FB];
        rifl_udp_header h = { F, 4, 100, 0 };
        rifl_udp_header_write(&h, d);
        memset(d + RIFL_UDP_HEADER_BYTES, 7, 4 * FB);
        REQUIRE(send(e.spare, d, sizeof d, 0) == (ssize_t)sizeof d);
        rifl_phy_frame in[8];
        unsigned n = 0;
        for (unsigned t = 0; t < 20 && n < 4; t++)
            n += rifl_phy_exchange(b, t, RIFL_PHY_NONE, in + n, 8 - n);
        CHECK_EQ_U(n, 4);
        const rifl_phy_udp_stats *s = rifl_phy_udp_get_stats(b);
        CHECK_MSG(s->rx_malformed == 5, "gso %u: %llu malformed of 5 empty datagrams", gso,
                  (unsigned long long)s->rx_malformed);
        CHECK_EQ_U(s->dgrams_received, 1);
        free_ends(&e);
    }
}

/* Probes answered with their token and the answerer's value; poll and
 * flush without a slot; bits flipped at the bit error rate, counted. */
static void t_probes_ber(void)
{
    struct ends e = { .spare = -1 };
    if (!make_ends(&e, 16, 0, 0, test_seed)) {
        free_ends(&e);
        return;
    }
    rifl_phy *a = e.phy[0], *b = e.phy[1];
    CHECK(rifl_phy_udp_fd(a) >= 0);
    CHECK_EQ_I(rifl_phy_udp_fd(NULL), -1);
    CHECK_EQ_I(rifl_phy_udp_set_probe_value(b, 4242), RIFL_OK);
    CHECK_EQ_I(rifl_phy_udp_probe(a, 77), RIFL_OK);
    CHECK_EQ_I(rifl_phy_udp_probe(a, 78), RIFL_OK);
    uint64_t tok = 0;
    CHECK(!rifl_phy_udp_probe_answer(a, &tok));
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK); /* b answers */
    CHECK_EQ_I(rifl_phy_udp_poll(a), RIFL_OK); /* a takes the answers */
    CHECK(rifl_phy_udp_probe_answer(a, &tok) && tok == 77);
    CHECK(rifl_phy_udp_probe_answer(a, &tok) && tok == 78);
    CHECK(!rifl_phy_udp_probe_answer(a, &tok));
    const rifl_phy_udp_stats *sa = rifl_phy_udp_get_stats(a), *sb = rifl_phy_udp_get_stats(b);
    CHECK_EQ_U(sa->probes_sent, 2);
    CHECK_EQ_U(sb->probes_answered, 2);
    CHECK_EQ_U(sa->probe_answers, 2);
    CHECK_EQ_U(sa->peer_probe_value, 4242);
    CHECK_EQ_U(sb->peer_probe_value, 0);
    CHECK_EQ_U(sb->rx_malformed + sa->rx_malformed, 0);
    /* a frame sent and flushed at once arrives by poll alone */
    uint8_t *w = rifl_phy_tx_buffer(a, RIFL_PHY_WIRE);
    memset(w, 0x5A, FB);
    rifl_phy_frame in[4];
    CHECK_EQ_U(rifl_phy_exchange(a, 0, RIFL_PHY_WIRE, in, 4), 0);
    CHECK_EQ_U(sa->dgrams_sent, 0);
    CHECK_EQ_I(rifl_phy_udp_flush(a), RIFL_OK);
    CHECK_EQ_U(sa->dgrams_sent, 1);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_next, 1);
    CHECK_EQ_U(rifl_phy_exchange(b, 0, RIFL_PHY_NONE, in, 4), 1);
    CHECK(((const uint8_t *)in[0].data)[FB - 1] == 0x5A);
    CHECK_EQ_I(rifl_phy_udp_poll(NULL), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_phy_udp_flush(NULL), RIFL_ERR_INVALID_ARG);
    free_ends(&e);
    /* bit errors: 1e-3 over 2000 frames of 256 bits, about 512 flips */
    rifl_phy_udp_config c = { .frame_bits = F, .fd = -1, .local = "127.0.0.1:0",
                              .remote = "127.0.0.1:9", .epoch = 1, .ber = 1e-3,
                              .seed = test_seed };
    rifl_phy *p = NULL;
    char msg[256] = "";
    REQUIRE(rifl_phy_udp_create(&c, &p, msg, sizeof msg) == RIFL_OK);
    uint64_t flipped = 0;
    for (unsigned t = 0; t < 2000; t++) {
        w = rifl_phy_tx_buffer(p, RIFL_PHY_WIRE);
        memset(w, 0, FB);
        rifl_phy_exchange(p, t, RIFL_PHY_WIRE, in, 0);
        /* the frame is flipped in the datagram buffer before it goes */
    }
    const rifl_phy_stats *ps = rifl_phy_get_stats(p);
    flipped = ps->bit_errors;
    CHECK(flipped > 350 && flipped < 700);
    CHECK(ps->frames_hit > 0 && ps->frames_hit <= flipped);
    rifl_phy_free(p);
    c.ber = 0.6;
    refused(&c, RIFL_ERR_CONFIG, "bit error rate");
}

/* A probe datagram as a peer of `bits`-bit frames would send it: `kind`
 * (1 asks, 2 answers), the sender's epoch, a token, its value, the epoch it
 * knows for the receiver and its epoch before. */
static void send_probe_bits(int fd, unsigned bits, unsigned kind, uint32_t epoch,
                            uint64_t token, uint64_t value, uint32_t echo, uint32_t prev)
{
    uint8_t d[RIFL_UDP_HEADER_BYTES + 16];
    memset(d, 0, sizeof d);
    d[0] = 'R';
    d[1] = 'F';
    d[2] = 1;
    d[3] = (uint8_t)__builtin_ctz(bits);
    d[6] = (uint8_t)kind;
    for (int k = 0; k < 4; k++) {
        d[8 + k] = (uint8_t)(epoch >> (24 - 8 * k));
        d[28 + k] = (uint8_t)(echo >> (24 - 8 * k));
        d[32 + k] = (uint8_t)(prev >> (24 - 8 * k));
    }
    for (int k = 0; k < 8; k++) {
        d[12 + k] = (uint8_t)(token >> (56 - 8 * k));
        d[20 + k] = (uint8_t)(value >> (56 - 8 * k));
    }
    REQUIRE(send(fd, d, sizeof d, 0) == (ssize_t)sizeof d);
}

/* The same from a peer of the ends' width (256-bit frames). */
static void send_probe_dgram(int fd, unsigned kind, uint32_t epoch, uint64_t token,
                             uint64_t value, uint32_t echo, uint32_t prev)
{
    send_probe_bits(fd, F, kind, epoch, token, value, echo, prev);
}

/* 4 frames of `epoch` from `seq`, each filled with its sequence number. */
static void send_frames(int fd, uint32_t epoch, uint64_t seq)
{
    uint8_t d[RIFL_UDP_HEADER_BYTES + 4 * FB];
    rifl_udp_header h = { F, 4, epoch, seq };
    rifl_udp_header_write(&h, d);
    for (unsigned k = 0; k < 4; k++)
        memset(d + RIFL_UDP_HEADER_BYTES + k * FB, (int)(seq + k), FB);
    REQUIRE(send(fd, d, sizeof d, 0) == (ssize_t)sizeof d);
}

/* A restart of the peer as the PHY sees it (docs/udp.md, "Epochs and
 * restarts"): datagrams of a new epoch are dropped and the epoch noted;
 * rifl_phy_udp_rejoin adopts it, retires the old one (its datagrams then
 * stale), drops what was queued, starts sequence numbers from 0 and gives
 * this end a new epoch, which its probes carry; a probe's value is taken
 * only when it names this end's epoch. */
static void t_rejoin(void)
{
    struct ends e = { .spare = -1 };
    if (!make_ends(&e, 4, 0, 0, test_seed)) {
        free_ends(&e);
        return;
    }
    rifl_phy *a = e.phy[0], *b = e.phy[1];
    const rifl_phy_udp_stats *sa = rifl_phy_udp_get_stats(a), *sb = rifl_phy_udp_get_stats(b);
    rifl_phy_frame in[16];
    send_frames(e.spare, 100, 0);
    unsigned n = 0;
    for (unsigned t = 0; t < 20 && n < 4; t++)
        n += rifl_phy_exchange(b, t, RIFL_PHY_NONE, in + n, 16 - n);
    CHECK_EQ_U(n, 4);
    CHECK_EQ_U(sb->peer_epoch, 100);
    CHECK_EQ_U(sb->epoch, 101);
    /* frames 4..7 queued, not handed out; then the peer restarts: its
     * probe (epoch 300, before it 100) and its frames are not taken */
    send_frames(e.spare, 100, 4);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_next, 8);
    send_probe_dgram(e.spare, 1, 300, 9, 0, 0, 100);
    send_frames(e.spare, 300, 0);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_foreign, 2);
    CHECK_EQ_U(sb->peer_epoch_new, 300);
    CHECK_EQ_U(sb->peer_epoch, 100);
    CHECK_EQ_U(sb->probes_answered, 0);
    /* the rejoin: epoch 300 adopted, this end's 555, nothing of before */
    CHECK_EQ_I(rifl_phy_udp_rejoin(b, 555), RIFL_OK);
    CHECK_EQ_U(sb->peer_epoch, 300);
    CHECK_EQ_U(sb->peer_epoch_new, 0);
    CHECK_EQ_U(sb->epoch, 555);
    CHECK_EQ_U(sb->rejoins, 1);
    CHECK_EQ_U(sb->rx_next, 0);
    CHECK_EQ_U(rifl_phy_exchange(b, 100, RIFL_PHY_NONE, in, 16), 0);
    /* old datagrams are stale; the new epoch's frames from 0 are taken */
    send_frames(e.spare, 100, 8);
    send_frames(e.spare, 300, 0);
    n = 0;
    for (unsigned t = 101; t < 120 && n < 4; t++)
        n += rifl_phy_exchange(b, t, RIFL_PHY_NONE, in + n, 16 - n);
    CHECK_EQ_U(n, 4);
    if (n == 4)
        CHECK(((const uint8_t *)in[3].data)[0] == 3);
    CHECK_EQ_U(sb->rx_stale, 1);
    CHECK_EQ_U(sb->rx_next, 4);
    CHECK_EQ_U(sb->rx_missing + sb->rx_erasures, 0);
    /* a now plays the restarted peer: its epoch 300 (a rejoin with
     * nothing new from b only takes the epoch given).  b's probes carry
     * 555, which a fixes as b's, and a's answer names 555, so its value
     * is b's to take */
    CHECK_EQ_I(rifl_phy_udp_rejoin(a, 300), RIFL_OK);
    CHECK_EQ_U(sa->epoch, 300);
    CHECK_EQ_U(sa->peer_epoch, 0);
    CHECK_EQ_I(rifl_phy_udp_set_probe_value(a, 42), RIFL_OK);
    CHECK_EQ_I(rifl_phy_udp_probe(b, 7), RIFL_OK);
    CHECK_EQ_I(rifl_phy_udp_poll(a), RIFL_OK);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sa->peer_epoch, 555);
    CHECK_EQ_U(sa->probes_answered, 1);
    CHECK_EQ_U(sb->probe_answers, 1);
    CHECK_EQ_U(sb->peer_probe_value, 42);
    /* a probe naming another epoch than b's is answered, its value not taken */
    send_probe_dgram(e.spare, 1, 300, 10, 77, 999, 0);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->probes_answered, 1);
    CHECK_EQ_U(sb->peer_probe_value, 42);
    send_probe_dgram(e.spare, 1, 300, 11, 78, 555, 0);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->probes_answered, 2);
    CHECK_EQ_U(sb->peer_probe_value, 78);
    /* b has probed: frames or an announcement of an epoch the peer never
     * had are old ones, no restart */
    uint64_t foreign = sb->rx_foreign, malformed = sb->rx_malformed;
    send_frames(e.spare, 777, 0);
    send_probe_dgram(e.spare, 3, 777, 50, 0, 0, 0);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_foreign, foreign + 2);
    CHECK_EQ_U(sb->peer_epoch_new, 0);
    CHECK_EQ_U(sb->peer_epoch, 300);
    /* epoch 0 and a sequence number that would wrap: malformed; frames
     * and an announcement far ahead, not where each other ends: held, and
     * nothing moves */
    uint64_t next = sb->rx_next;
    send_frames(e.spare, 0, next);
    send_frames(e.spare, 300, UINT64_MAX - 1);
    send_frames(e.spare, 300, next + (UINT64_C(1) << 24) + 1);
    send_probe_dgram(e.spare, 3, 300, next + (UINT64_C(1) << 25), 0, 0, 0);
    send_probe_dgram(e.spare, 1, 0, 12, 0, 0, 0);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_malformed, malformed + 3);
    CHECK_EQ_U(sb->rx_far_held, 2);
    CHECK_EQ_U(sb->rx_jumps, 0);
    CHECK_EQ_U(sb->rx_next, next);
    CHECK_EQ_U(sb->rx_missing, 0);
    CHECK_EQ_I(rifl_phy_udp_rejoin(NULL, 1), RIFL_ERR_INVALID_ARG);
    free_ends(&e);
}

/* Another frame width is taken from a datagram or probe that is well
 * formed in its own width only: anything else starting with "RF" (too
 * short, of the wrong length, another version, reserved bytes set, epoch
 * 0, no legal width) is malformed and leaves peer_frame_bits alone. */
static void t_other_width_malformed(void)
{
    struct ends e = { .spare = -1 };
    if (!make_ends(&e, 4, 0, 0, test_seed)) {
        free_ends(&e);
        return;
    }
    rifl_phy *b = e.phy[1];
    const rifl_phy_udp_stats *sb = rifl_phy_udp_get_stats(b);
    const uint8_t four[4] = { 'R', 'F', 0xEE, 7 };
    REQUIRE(send(e.spare, four, sizeof four, 0) == (ssize_t)sizeof four);
    /* one frame of 1024 bits, well formed, then broken a byte at a time */
    uint8_t d[RIFL_UDP_HEADER_BYTES + 128];
    memset(d, 0, sizeof d);
    rifl_udp_header h = { 1024, 1, 100, 0 };
    REQUIRE(rifl_udp_header_write(&h, d) == RIFL_OK);
    REQUIRE(send(e.spare, d, sizeof d - 1, 0) == (ssize_t)sizeof d - 1);
    REQUIRE(send(e.spare, d, RIFL_UDP_HEADER_BYTES, 0) == RIFL_UDP_HEADER_BYTES);
    const unsigned at[] = { 2, 3, 5, 6, 7, 8 };
    const uint8_t to[] = { 2, 12, 2, 1, 1, 0 };
    for (unsigned k = 0; k < sizeof at / sizeof at[0]; k++) {
        uint8_t c[sizeof d];
        memcpy(c, d, sizeof d);
        c[at[k]] = to[k];
        if (at[k] == 8)
            c[9] = c[10] = c[11] = 0; /* epoch 0 */
        REQUIRE(send(e.spare, c, sizeof c, 0) == (ssize_t)sizeof c);
    }
    /* probes of 1024 bits with epoch 0, and of no legal width */
    uint8_t p[RIFL_UDP_HEADER_BYTES + 16];
    memset(p, 0, sizeof p);
    p[0] = 'R';
    p[1] = 'F';
    p[2] = 1;
    p[3] = 10;
    p[6] = 1;
    REQUIRE(send(e.spare, p, sizeof p, 0) == (ssize_t)sizeof p);
    p[3] = 3;
    p[11] = 100;
    REQUIRE(send(e.spare, p, sizeof p, 0) == (ssize_t)sizeof p);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_malformed, 11);
    CHECK_EQ_U(sb->rx_other_width, 0);
    CHECK_EQ_U(sb->peer_frame_bits, 0);
    CHECK_EQ_U(sb->probes_answered, 0);
    /* well formed in 1024 bits: a datagram and a probe */
    REQUIRE(send(e.spare, d, sizeof d, 0) == (ssize_t)sizeof d);
    p[3] = 10;
    REQUIRE(send(e.spare, p, sizeof p, 0) == (ssize_t)sizeof p);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_malformed, 11);
    CHECK_EQ_U(sb->rx_other_width, 2);
    CHECK_EQ_U(sb->peer_frame_bits, 1024);
    CHECK_EQ_U(sb->peer_epoch, 0);
    CHECK_EQ_U(sb->probes_answered, 1); /* (answered all the same) */
    free_ends(&e);
}

/* What came from a start of the peer's that it left is not kept.  The
 * value of its probes is forgotten when a new epoch of the peer's shows
 * (a probe of the old start after that gives none either), and a datagram
 * or probe of another frame width keeps its width (peer_frame_bits) only
 * when it is of the peer's epoch (the new one, once one shows), or of any
 * before one is known: one of another epoch is counted as other epochs'
 * datagrams are (rx_foreign, rx_stale). */
static void t_left_epoch(void)
{
    struct ends e = { .spare = -1 };
    if (!make_ends(&e, 4, 0, 0, test_seed)) {
        free_ends(&e);
        return;
    }
    rifl_phy *b = e.phy[1];
    const rifl_phy_udp_stats *sb = rifl_phy_udp_get_stats(b);
    uint8_t d[RIFL_UDP_HEADER_BYTES + 128];
    memset(d, 0, sizeof d);
    rifl_udp_header h = { 1024, 1, 555, 0 };
    /* the peer (epoch 100) probes with a value, naming b's epoch; one frame
     * of 1024 bits of another epoch, 555, comes after it */
    send_probe_dgram(e.spare, 1, 100, 1, 4242, 101, 0);
    REQUIRE(rifl_udp_header_write(&h, d) == RIFL_OK);
    REQUIRE(send(e.spare, d, sizeof d, 0) == (ssize_t)sizeof d);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->peer_epoch, 100);
    CHECK_EQ_U(sb->peer_probe_value, 4242);
    CHECK_EQ_U(sb->rx_other_width, 1);
    CHECK_EQ_U(sb->rx_foreign, 1);
    CHECK_EQ_U(sb->peer_frame_bits, 0);
    CHECK_EQ_U(sb->peer_epoch_new, 0);
    /* the peer restarts (epoch 300), and an answer and a 1024-bit probe of
     * its start before come after the new one's probe */
    send_probe_dgram(e.spare, 1, 300, 2, 0, 0, 0);
    send_probe_dgram(e.spare, 2, 100, 3, 4343, 101, 0);
    send_probe_bits(e.spare, 1024, 1, 100, 4, 0, 101, 0);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->peer_epoch_new, 300);
    CHECK_EQ_U(sb->peer_probe_value, 0);
    CHECK_EQ_U(sb->rx_other_width, 2);
    CHECK_EQ_U(sb->rx_foreign, 3);
    CHECK_EQ_U(sb->peer_frame_bits, 0);
    /* 300 adopted, 100 retired: a 1024-bit probe of 100 is stale, one of
     * 300 the peer's */
    CHECK_EQ_I(rifl_phy_udp_rejoin(b, 0), RIFL_OK);
    send_probe_bits(e.spare, 1024, 1, 100, 5, 0, 101, 0);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_stale, 1);
    CHECK_EQ_U(sb->rx_other_width, 3);
    CHECK_EQ_U(sb->peer_frame_bits, 0);
    send_probe_bits(e.spare, 1024, 1, 300, 6, 0, 101, 0);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_other_width, 4);
    CHECK_EQ_U(sb->peer_frame_bits, 1024);
    CHECK_EQ_U(sb->rx_foreign + sb->rx_stale, 4);
    CHECK_EQ_U(sb->peer_epoch, 300);
    free_ends(&e);
}

/* Frames a stray datagram far ahead would silence: a start more than 4096
 * frames beyond the next one expected is held until a second datagram or
 * announcement starts within 4096 frames of where it ended (docs/udp.md);
 * the peer's real datagrams go on meanwhile, and a confirmed jump leaves
 * a gap the lane replays. */
static void t_jump(void)
{
    struct ends e = { .spare = -1 };
    if (!make_ends(&e, 4, 0, 0, test_seed)) {
        free_ends(&e);
        return;
    }
    rifl_phy *b = e.phy[1];
    const rifl_phy_udp_stats *sb = rifl_phy_udp_get_stats(b);
    rifl_phy_frame in[16];
    const uint64_t near = 4096;
    send_frames(e.spare, 100, 0);
    /* exactly 4096 ahead of 4: taken at once, a gap of 4096 */
    send_frames(e.spare, 100, 4 + near);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_next, 8 + near);
    CHECK_EQ_U(sb->rx_missing, near);
    CHECK_EQ_U(sb->rx_far_held, 0);
    unsigned n = 0;
    for (unsigned t = 0; t < 20 && n < 9; t++)
        n += rifl_phy_exchange(b, t, RIFL_PHY_NONE, in + n, 16 - n);
    CHECK_EQ_U(n, 9); /* 4 frames, an erasure, 4 frames */
    /* one stray datagram a frame further: held; the real ones go on */
    uint64_t next = sb->rx_next, missing = sb->rx_missing;
    send_frames(e.spare, 100, next + near + 1);
    send_frames(e.spare, 100, next);
    send_frames(e.spare, 100, next + 4);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_far_held, 1);
    CHECK_EQ_U(sb->rx_next, next + 8);
    CHECK_EQ_U(sb->rx_late + sb->rx_malformed, 0);
    CHECK_EQ_U(sb->rx_missing, missing);
    n = 0;
    for (unsigned t = 20; t < 40 && n < 8; t++)
        n += rifl_phy_exchange(b, t, RIFL_PHY_NONE, in + n, 16 - n);
    CHECK_EQ_U(n, 8);
    if (n == 8)
        CHECK(((const uint8_t *)in[7].data)[0] == (uint8_t)(next + 7));
    /* an outage: the first datagram after it is held, the next (one lost
     * between them) confirms the jump */
    next = sb->rx_next;
    uint64_t far = next + 1000000000;
    send_frames(e.spare, 100, far);
    send_frames(e.spare, 100, far + 8);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_far_held, 2);
    CHECK_EQ_U(sb->rx_jumps, 1);
    CHECK_EQ_U(sb->rx_next, far + 12);
    CHECK_EQ_U(sb->rx_missing, missing + (far + 8 - next));
    n = 0;
    for (unsigned t = 40; t < 60 && n < 5; t++)
        n += rifl_phy_exchange(b, t, RIFL_PHY_NONE, in + n, 16 - n);
    CHECK_EQ_U(n, 5); /* the erasure, then the 4 frames after the gap */
    if (n == 5)
        CHECK(((const uint8_t *)in[4].data)[0] == (uint8_t)(far + 11));
    /* announcements likewise: a lone one far ahead moves nothing, a second
     * near where it said confirms it */
    next = sb->rx_next;
    send_probe_dgram(e.spare, 3, 100, next + 5 * near, 0, 0, 0);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_next, next);
    CHECK_EQ_U(sb->rx_far_held, 3);
    send_probe_dgram(e.spare, 3, 100, next + 5 * near + 100, 0, 0, 0);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_next, next + 5 * near + 100);
    CHECK_EQ_U(sb->rx_jumps, 2);
    /* a rejoin (sequence numbers from 0) forgets a held jump: a datagram
     * after where it ended is held anew, not taken as its confirmation */
    far = sb->rx_next + 10 * near;
    send_frames(e.spare, 100, far);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_far_held, 4);
    CHECK_EQ_I(rifl_phy_udp_rejoin(b, 555), RIFL_OK);
    send_frames(e.spare, 100, far + 8);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_far_held, 5);
    CHECK_EQ_U(sb->rx_jumps, 2);
    CHECK_EQ_U(sb->rx_next, 0);
    free_ends(&e);
}

/* A stray datagram far ahead that comes twice (duplicated on the way), or
 * an announcement far ahead that comes twice, or one overlapping the held
 * datagram: none confirms the jump, the held one stays held and the real
 * datagrams after it are taken (docs/udp.md: a lone stray datagram moves
 * nothing). */
static void t_jump_repeat(void)
{
    struct ends e = { .spare = -1 };
    if (!make_ends(&e, 4, 0, 0, test_seed)) {
        free_ends(&e);
        return;
    }
    rifl_phy *b = e.phy[1];
    const rifl_phy_udp_stats *sb = rifl_phy_udp_get_stats(b);
    rifl_phy_frame in[16];
    const uint64_t far = 1000000000;
    send_frames(e.spare, 100, 0);
    send_frames(e.spare, 100, far);
    send_frames(e.spare, 100, far);
    send_frames(e.spare, 100, far + 2); /* overlaps the held one */
    send_frames(e.spare, 100, 4);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_jumps, 0);
    CHECK_EQ_U(sb->rx_far_held, 3);
    CHECK_EQ_U(sb->rx_next, 8);
    CHECK_EQ_U(sb->rx_late + sb->rx_missing + sb->rx_malformed, 0);
    CHECK_EQ_U(sb->dgrams_received, 2);
    unsigned n = 0;
    for (unsigned t = 0; t < 20 && n < 8; t++)
        n += rifl_phy_exchange(b, t, RIFL_PHY_NONE, in + n, 16 - n);
    CHECK_EQ_U(n, 8);
    if (n == 8)
        CHECK(((const uint8_t *)in[7].data)[0] == 7);
    /* an announcement far ahead, twice: held both times */
    send_probe_dgram(e.spare, 3, 100, 2 * far, 0, 0, 0);
    send_probe_dgram(e.spare, 3, 100, 2 * far, 0, 0, 0);
    send_frames(e.spare, 100, 8);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_jumps, 0);
    CHECK_EQ_U(sb->rx_far_held, 5);
    CHECK_EQ_U(sb->rx_announcements, 0);
    CHECK_EQ_U(sb->rx_next, 12);
    CHECK_EQ_U(sb->rx_late + sb->rx_missing, 0);
    /* frames from where the held announcement said: the jump is taken */
    send_frames(e.spare, 100, 2 * far);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_jumps, 1);
    CHECK_EQ_U(sb->rx_next, 2 * far + 4);
    CHECK_EQ_U(sb->rx_missing, 2 * far - 12);
    free_ends(&e);
}

/* rx_every_slots: the socket is read at every 4th exchange only (frames
 * that came wait for it), and at once by rifl_phy_udp_poll; lanes across
 * such ends still deliver every packet. */
static void t_rx_every(void)
{
    ends_rx_every = 4;
    struct ends e = { .spare = -1 };
    bool made = make_ends(&e, 4, 0, 0, test_seed);
    ends_rx_every = 0;
    if (!made) {
        free_ends(&e);
        return;
    }
    rifl_phy *b = e.phy[1];
    const rifl_phy_udp_stats *sb = rifl_phy_udp_get_stats(b);
    rifl_phy_frame in[16];
    send_frames(e.spare, 100, 0);
    nanosleep(&(struct timespec){ 0, 20000000 }, NULL); /* it is in b's socket */
    unsigned got[4];
    for (unsigned t = 0; t < 4; t++)
        got[t] = rifl_phy_exchange(b, t, RIFL_PHY_NONE, in, 16);
    CHECK_EQ_U(got[0] + got[1] + got[2], 0);
    CHECK_EQ_U(got[3], 4);
    send_frames(e.spare, 100, 4);
    nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
    CHECK_EQ_I(rifl_phy_udp_poll(b), RIFL_OK);
    CHECK_EQ_U(sb->rx_next, 8);
    CHECK_EQ_U(rifl_phy_exchange(b, 4, RIFL_PHY_NONE, in, 16), 4);
    free_ends(&e);
    ends_rx_every = 8;
    made = make_ends(&e, 16, 0, 0, test_seed);
    ends_rx_every = 0;
    if (made) {
        uint64_t n = 0, replays = 0;
        test_run_lanes(e.phy, F, 16, 20000, &n, &replays);
        CHECK(n > 300);
    }
    free_ends(&e);
}

/* Slots near 2^64: a frame sent there waits for the rest of its datagram
 * as anywhere else (the flush deadline saturates instead of wrapping to a
 * slot long past), and the deadline next_due gives is not before it. */
static void t_late_slots(void)
{
    struct ends e;
    if (!make_ends(&e, 16, 0, 0, 1)) {
        free_ends(&e);
        return;
    }
    const rifl_phy_udp_stats *st = rifl_phy_udp_get_stats(e.phy[0]);
    uint64_t scr = 0;
    uint8_t pay[RIFL_PAYLOAD_MAX_BYTES] = { 0 };
    rifl_phy_frame in[16];
    uint64_t t0 = UINT64_MAX - 8;
    for (uint64_t t = t0; t < t0 + 4; t++) {
        uint8_t *w = rifl_phy_tx_buffer(e.phy[0], RIFL_PHY_WIRE);
        rifl_frame_encode(w, F, RIFL_SYN_DATA, 1, pay, (unsigned)(t & 0xFFF), &scr);
        rifl_phy_exchange(e.phy[0], t, RIFL_PHY_WIRE, in, 16);
    }
    CHECK_EQ_U(st->dgrams_sent, 0);
    CHECK_EQ_U(rifl_phy_next_due(e.phy[0], t0 + 3), UINT64_MAX);
    /* the last slot of all: the datagram is still held, until a flush */
    rifl_phy_exchange(e.phy[0], UINT64_MAX - 1, RIFL_PHY_NONE, in, 16);
    CHECK_EQ_U(st->dgrams_sent, 0);
    CHECK_EQ_I(rifl_phy_udp_flush(e.phy[0]), RIFL_OK);
    CHECK_EQ_U(st->dgrams_sent, 1);
    CHECK_EQ_U(rifl_phy_next_due(e.phy[0], UINT64_MAX), UINT64_MAX);
    free_ends(&e);
}

TEST_MAIN({ "header", t_header }, { "bad_config", t_bad_config }, { "lanes_content", t_lanes_content },
          { "lanes_clean", t_lanes_clean }, { "lanes_lossy", t_lanes_lossy },
          { "lanes_gso", t_lanes_gso },
          { "dropped_datagrams", t_dropped_datagrams }, { "empty_datagrams", t_empty_datagrams },
          { "probes_ber", t_probes_ber },
          { "rejoin", t_rejoin },
          { "other_width_malformed", t_other_width_malformed },
          { "left_epoch", t_left_epoch }, { "jump", t_jump },
          { "jump_repeat", t_jump_repeat }, { "rx_every", t_rx_every },
          { "late_slots", t_late_slots })

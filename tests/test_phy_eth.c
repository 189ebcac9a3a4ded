/* The raw-Ethernet PHY (rifl/phy.h, "Raw Ethernet"; docs/udp.md).  Always:
 * MAC addresses parsed, and settings refused without root (bad MAC text,
 * bad or unknown interface names).  With root and `ip`: a veth pair made
 * for the test (unique names, deleted at the end whatever happens), two
 * lanes across its ends, clean and with datagrams lost and duplicated,
 * every byte checked; frames from another MAC address and malformed ones
 * dropped and counted; Ethernet padding taken off up to the 46-byte
 * minimum and no further; a datagram larger than the MTU refused.  Without
 * root or `ip` the program says what is missing and exits 77 (skipped). */
#define _GNU_SOURCE
#include "testlib.h"
#include "phy_lanes.h"

#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rifl/frame.h"
#include "rifl/lane.h"
#include "rifl/phy.h"
#include "rifl/sim/traffic.h"

#define SKIP 77

/* ---- without root ---------------------------------------------------------- */

static void t_mac_parse(void)
{
    uint8_t m[6] = { 0 };
    CHECK_EQ_I(rifl_eth_mac_parse("02:00:5e:AB:cd:01", m), RIFL_OK);
    CHECK(m[0] == 0x02 && m[1] == 0 && m[2] == 0x5E && m[3] == 0xAB && m[4] == 0xCD &&
          m[5] == 1);
    CHECK_EQ_I(rifl_eth_mac_parse("0a-0b-0c-0d-0e-0f", m), RIFL_OK);
    CHECK(m[0] == 0x0A && m[5] == 0x0F);
    const char *bad[] = { "", "02:00:00:00:00", "02:00:00:00:00:001", "02:00:00:00:00:0",
                          "02:00:00:00:00:0g", "02-00:00:00:00:01", "02.00.00.00.00.01",
                          "2:0:0:0:0:1", " 02:00:00:00:00:01", "02:00:00:00:00:01 ",
                          "0x:00:00:00:00:01" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t keep[6] = { 9, 9, 9, 9, 9, 9 };
        memcpy(m, keep, 6);
        CHECK_MSG(rifl_eth_mac_parse(bad[i], m) == RIFL_ERR_PARSE, "'%s' was taken", bad[i]);
        CHECK(!memcmp(m, keep, 6)); /* untouched */
    }
    CHECK_EQ_I(rifl_eth_mac_parse(NULL, m), RIFL_ERR_PARSE);
    CHECK_EQ_I(rifl_eth_mac_parse("02:00:00:00:00:01", NULL), RIFL_ERR_PARSE);
}

static void refused(const rifl_phy_eth_config *c, int want, const char *needle)
{
    rifl_phy *p = NULL;
    char msg[512] = "";
    int rc = rifl_phy_eth_create(c, &p, msg, sizeof msg);
    CHECK_MSG(rc == want, "got %d, want %d: %s", rc, want, msg);
    CHECK(p == NULL);
    CHECK_MSG(strstr(msg, needle) != NULL, "message '%s' lacks '%s'", msg, needle);
    rifl_phy_free(p);
}

static void t_bad_config(void)
{
    rifl_phy_eth_config c = { .frame_bits = 256, .ifname = "lo",
                              .peer_mac = "02:00:00:00:00:01", .epoch = 1 };
    rifl_phy_eth_config b = c;
    b.peer_mac = "02:00:00:00:00";
    refused(&b, RIFL_ERR_CONFIG, "six hex bytes");
    b.peer_mac = NULL;
    refused(&b, RIFL_ERR_CONFIG, "six hex bytes");
    b.peer_mac = "ff:ff:ff:ff:ff:ff";
    refused(&b, RIFL_ERR_CONFIG, "unicast");
    b.peer_mac = "00:00:00:00:00:00";
    refused(&b, RIFL_ERR_CONFIG, "unicast");
    b = c;
    b.ifname = "";
    refused(&b, RIFL_ERR_CONFIG, "not valid");
    b.ifname = NULL;
    refused(&b, RIFL_ERR_CONFIG, "not valid");
    b.ifname = "a/b";
    refused(&b, RIFL_ERR_CONFIG, "not valid");
    b.ifname = "has space";
    refused(&b, RIFL_ERR_CONFIG, "not valid");
    b.ifname = "sixteen-letters0";
    refused(&b, RIFL_ERR_CONFIG, "not valid");
    char none[IFNAMSIZ];
    snprintf(none, sizeof none, "rfn%u", (unsigned)getpid());
    b.ifname = none;
    refused(&b, RIFL_ERR_CONFIG, "no network interface");
    b = c;
    b.epoch = 0;
    refused(&b, RIFL_ERR_CONFIG, "epoch 0");
    b = c;
    b.frames_per_datagram = RIFL_UDP_MAX_FRAMES + 1;
    refused(&b, RIFL_ERR_CONFIG, "frames per datagram");
    b = c;
    b.frame_bits = 100;
    refused(&b, RIFL_ERR_CONFIG, "frame width");
    rifl_phy *p = NULL;
    CHECK_EQ_I(rifl_phy_eth_create(NULL, &p, NULL, 0), RIFL_ERR_INVALID_ARG);
    uint8_t mac[6];
    CHECK_EQ_I(rifl_phy_eth_local_mac(NULL, mac), RIFL_ERR_INVALID_ARG);
    /* the loopback interface: an MTU, read without root */
    unsigned mtu = 0;
    char msg[256] = "";
    CHECK_EQ_I(rifl_eth_interface("lo", mac, &mtu, msg, sizeof msg), RIFL_OK);
    CHECK(mtu >= 1280);
    CHECK_EQ_I(rifl_eth_interface("a/b", NULL, NULL, msg, sizeof msg), RIFL_ERR_CONFIG);
    /* without the right to open AF_PACKET sockets: refused, saying what
     * is needed */
    int probe = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (probe >= 0)
        close(probe);
    else if (errno == EPERM || errno == EACCES)
        refused(&c, RIFL_ERR_IO, "needs root or the CAP_NET_RAW capability");
}

/* ---- the veth pair ---------------------------------------------------------- */

static char ip_path[64];
static char veth[2][IFNAMSIZ];
static volatile sig_atomic_t veth_made;

/* Run `ip` with the arguments `args` (NULL-terminated), no shell; its
 * exit status (127: it could not be run). */
static int run_ip(char *const *args, bool quiet)
{
    char *argv[12];
    argv[0] = ip_path;
    size_t n = 0;
    while (args[n] && n < 10) {
        argv[n + 1] = args[n];
        n++;
    }
    argv[n + 1] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return 127;
    if (pid == 0) {
        if (quiet && !freopen("/dev/null", "w", stderr))
            _exit(127);
        execv(ip_path, argv);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void veth_delete(void)
{
    if (veth_made) {
        veth_made = 0; /* deleting one end deletes the pair */
        char *del[] = { "link", "del", veth[0], NULL };
        if (run_ip(del, false) != 0)
            fprintf(stderr, "could not delete the veth pair %s/%s: delete it with 'ip link "
                    "del %s'\n", veth[0], veth[1], veth[0]);
    }
}

static void on_signal(int sig)
{
    veth_delete();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Make the veth pair, both ends up; false with what is missing said. */
static bool veth_make(void)
{
    if (geteuid() != 0) {
        printf("skipped: the raw-Ethernet cases need root (to make a veth pair and open "
               "AF_PACKET sockets); run this test as root\n");
        return false;
    }
    const char *dirs[] = { "/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip" };
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0] && !ip_path[0]; i++)
        if (access(dirs[i], X_OK) == 0)
            snprintf(ip_path, sizeof ip_path, "%s", dirs[i]);
    if (!ip_path[0]) {
        printf("skipped: the raw-Ethernet cases need the 'ip' command (Debian package "
               "iproute2; scripts/install-deps.sh installs it)\n");
        return false;
    }
    snprintf(veth[0], sizeof veth[0], "rft%ua", (unsigned)getpid());
    snprintf(veth[1], sizeof veth[1], "rft%ub", (unsigned)getpid());
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);
    atexit(veth_delete);
    char *add[] = { "link", "add", veth[0], "type", "veth", "peer", "name", veth[1], NULL };
    if (run_ip(add, false) != 0) {
        printf("skipped: cannot make a veth pair (ip link add %s type veth peer name %s "
               "failed: no CAP_NET_ADMIN, or no veth support in this kernel)\n", veth[0],
               veth[1]);
        return false;
    }
    veth_made = 1;
    for (int i = 0; i < 2; i++) {
        char *up[] = { "link", "set", veth[i], "up", NULL };
        if (run_ip(up, false) != 0) {
            printf("cannot bring %s up\n", veth[i]);
            return false;
        }
    }
    return true;
}

static int mac_text(const char *ifname, char *out, size_t n, uint8_t mac[6])
{
    uint8_t m[6];
    int rc = rifl_eth_interface(ifname, m, NULL, NULL, 0);
    snprintf(out, n, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
    if (mac)
        memcpy(mac, m, 6);
    return rc;
}

/* End i on veth[i], to the MAC address of veth[1-i]. */
static bool make_ends(rifl_phy *phy[2], unsigned F, unsigned fpd, double loss, double twice,
                      uint64_t seed)
{
    phy[0] = phy[1] = NULL;
    for (int i = 0; i < 2; i++) {
        char peer[32];
        CHECK(mac_text(veth[1 - i], peer, sizeof peer, NULL) == RIFL_OK);
        rifl_phy_eth_config c = { .frame_bits = F, .ifname = veth[i], .peer_mac = peer,
                                  .frames_per_datagram = fpd, .epoch = 100u + (unsigned)i,
                                  .loss = loss, .dup = twice, .seed = seed + (unsigned)i };
        char msg[256] = "";
        int rc = rifl_phy_eth_create(&c, &phy[i], msg, sizeof msg);
        CHECK_MSG(rc == RIFL_OK, "%s", msg);
        if (rc != RIFL_OK)
            return false;
        uint8_t mine[6], want[6];
        char t[32];
        CHECK_EQ_I(rifl_phy_eth_local_mac(phy[i], mine), RIFL_OK);
        CHECK_EQ_I(mac_text(veth[i], t, sizeof t, want), RIFL_OK);
        CHECK(!memcmp(mine, want, 6));
    }
    return true;
}

static void sleep_us(long us)
{
    struct timespec ts = { 0, us * 1000 };
    nanosleep(&ts, NULL);
}


static void t_lanes_clean(void)
{
    rifl_phy *phy[2];
    if (make_ends(phy, 256, 16, 0, 0, test_seed)) {
        uint64_t got = 0, replays = 0;
        test_run_lanes(phy, 256, 16, 20000, &got, &replays);
        CHECK(got > 300);
        for (int i = 0; i < 2; i++) {
            const rifl_phy_udp_stats *s = rifl_phy_udp_get_stats(phy[i]);
            CHECK(s->dgrams_sent > 1000 && s->dgrams_received > 1000);
            CHECK_EQ_U(s->rx_malformed + s->rx_foreign + s->rx_not_peer + s->rx_own, 0);
            CHECK_EQ_U(s->peer_epoch, 100u + (unsigned)(1 - i));
        }
    }
    rifl_phy_free(phy[0]);
    rifl_phy_free(phy[1]);
}

static void t_lanes_lossy(void)
{
    rifl_phy *phy[2];
    unsigned fpd = 4; /* 20 + 4 x 256 bytes: within a 1500-byte MTU */
    if (make_ends(phy, 2048, fpd, 0.005, 0.01, test_seed * 3)) {
        uint64_t got = 0, replays = 0;
        test_run_lanes(phy, 2048, fpd, 60000, &got, &replays);
        printf("  %llu packets delivered, %llu replay cycles\n", (unsigned long long)got,
               (unsigned long long)replays);
        CHECK(got > 200);
        CHECK(replays > 5);
        for (int i = 0; i < 2; i++) {
            const rifl_phy_udp_stats *s = rifl_phy_udp_get_stats(phy[i]);
            CHECK(s->tx_lost > 0 && s->tx_duplicated > 0);
            CHECK(s->rx_late > 0 && s->rx_missing > 0 && s->rx_erasures > 0);
            CHECK_EQ_U(s->rx_malformed + s->rx_not_peer + s->rx_own, 0);
        }
    }
    rifl_phy_free(phy[0]);
    rifl_phy_free(phy[1]);
}

static bool raw_send(int fd, const uint8_t dst[6], const uint8_t src[6], const uint8_t *payload,
                     size_t len)
{
    uint8_t f[14 + 2048];
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    f[12] = RIFL_ETH_TYPE >> 8;
    f[13] = RIFL_ETH_TYPE & 0xFF;
    memcpy(f + 14, payload, len);
    struct sockaddr_ll a;
    memset(&a, 0, sizeof a);
    a.sll_family = AF_PACKET;
    a.sll_ifindex = (int)if_nametoindex(veth[0]);
    a.sll_halen = 6;
    memcpy(a.sll_addr, dst, 6);
    return sendto(fd, f, 14 + len, 0, (struct sockaddr *)&a, sizeof a) == (ssize_t)(14 + len);
}

/* Poll `p` until `counter` moves from `before`, at most a second. */
static bool wait_count(rifl_phy *p, const uint64_t *counter, uint64_t before)
{
    for (int k = 0; k < 10000 && *counter == before; k++) {
        rifl_phy_udp_poll(p);
        if (*counter == before)
            sleep_us(100);
    }
    return *counter != before;
}

/* Frames that must not be taken, and padding: hand-made frames from a raw
 * socket on veth[0] to end B on veth[1]. */
static void t_dropped_padded(void)
{
    rifl_phy *phy[2];
    int fd = -1;
    if (!make_ends(phy, 64, 1, 0, 0, test_seed))
        goto out;
    rifl_phy *a = phy[0], *b = phy[1];
    const rifl_phy_udp_stats *sb = rifl_phy_udp_get_stats(b), *sa = rifl_phy_udp_get_stats(a);
    uint8_t mac_a[6], mac_b[6], other[6] = { 0x02, 0x52, 0x46, 0, 0, 0x99 };
    char t[32];
    REQUIRE(mac_text(veth[0], t, sizeof t, mac_a) == RIFL_OK);
    REQUIRE(mac_text(veth[1], t, sizeof t, mac_b) == RIFL_OK);
    /* a raw socket to put hand-made Ethernet frames on veth[0] */
    fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    uint8_t d[RIFL_UDP_HEADER_BYTES + 8 * 5 + 8];
    memset(d, 0, sizeof d);
    /* frame 0 of epoch 100, padded to 46 bytes: taken */
    rifl_udp_header h = { 64, 1, 100, 0 };
    rifl_udp_header_write(&h, d);
    memset(d + RIFL_UDP_HEADER_BYTES, 0xA1, 8);
    REQUIRE(raw_send(fd, mac_b, mac_a, d, RIFL_ETH_MIN_PAYLOAD));
    CHECK(wait_count(b, &sb->dgrams_received, 0));
    CHECK_EQ_U(sb->rx_padded, 1);
    CHECK_EQ_U(sb->rx_next, 1);
    /* frame 1 with a byte beyond the 46-byte minimum: malformed */
    h.seq = 1;
    rifl_udp_header_write(&h, d);
    REQUIRE(raw_send(fd, mac_b, mac_a, d, RIFL_ETH_MIN_PAYLOAD + 1));
    CHECK(wait_count(b, &sb->rx_malformed, 0));
    /* five frames (60 bytes, no padding needed) with a byte more: malformed */
    h.count = 5;
    rifl_udp_header_write(&h, d);
    REQUIRE(raw_send(fd, mac_b, mac_a, d, RIFL_UDP_HEADER_BYTES + 5 * 8 + 1));
    CHECK(wait_count(b, &sb->rx_malformed, 1));
    /* a bad magic, padded: malformed */
    d[0] = 'X';
    REQUIRE(raw_send(fd, mac_b, mac_a, d, RIFL_ETH_MIN_PAYLOAD));
    CHECK(wait_count(b, &sb->rx_malformed, 2));
    /* a good datagram from another MAC address: not the peer's */
    h.count = 1;
    rifl_udp_header_write(&h, d);
    REQUIRE(raw_send(fd, mac_b, other, d, RIFL_ETH_MIN_PAYLOAD));
    CHECK(wait_count(b, &sb->rx_not_peer, 0));
    /* frames 1..5, unpadded: taken */
    h.count = 5;
    h.seq = 1;
    rifl_udp_header_write(&h, d);
    for (unsigned k = 0; k < 5; k++)
        memset(d + RIFL_UDP_HEADER_BYTES + 8 * k, 0xB0 + (int)k, 8);
    REQUIRE(raw_send(fd, mac_b, mac_a, d, RIFL_UDP_HEADER_BYTES + 5 * 8));
    CHECK(wait_count(b, &sb->dgrams_received, 1));
    CHECK_EQ_U(sb->rx_next, 6);
    rifl_phy_frame in[16];
    unsigned n = rifl_phy_exchange(b, 0, RIFL_PHY_NONE, in, 16);
    CHECK_EQ_U(n, 6);
    if (n == 6) {
        CHECK(((const uint8_t *)in[0].data)[7] == 0xA1);
        CHECK(((const uint8_t *)in[5].data)[0] == 0xB4);
    }
    CHECK_EQ_U(sb->dgrams_received, 2);
    CHECK_EQ_U(sb->rx_padded, 1);
    CHECK_EQ_U(sb->rx_malformed, 3);
    CHECK_EQ_U(sb->rx_not_peer, 1);
    CHECK_EQ_U(sb->rx_missing + sb->rx_late + sb->rx_foreign, 0);
    /* a probe (36 bytes, sent padded to 46) answered across the pair; a's
     * own frames never come back to it */
    CHECK_EQ_I(rifl_phy_udp_probe(a, 5), RIFL_OK);
    CHECK(wait_count(b, &sb->probes_answered, 0));
    CHECK(wait_count(a, &sa->probe_answers, 0));
    uint64_t tok = 0;
    CHECK(rifl_phy_udp_probe_answer(a, &tok) && tok == 5);
    CHECK_EQ_U(sb->rx_padded, 2);
    CHECK_EQ_U(sa->rx_padded, 1);
    CHECK_EQ_U(sa->dgrams_received + sa->rx_not_peer + sa->rx_own + sa->rx_malformed, 0);
out:
    if (fd >= 0)
        close(fd);
    rifl_phy_free(phy[0]);
    rifl_phy_free(phy[1]);
}

/* A datagram larger than the interface's MTU is refused, saying what fits. */
static void t_mtu(void)
{
    unsigned mtu = 0;
    char msg[512] = "";
    REQUIRE(rifl_eth_interface(veth[0], NULL, &mtu, msg, sizeof msg) == RIFL_OK);
    CHECK_EQ_U(mtu, 1500); /* a new veth's */
    rifl_phy_eth_config c = { .frame_bits = 2048, .ifname = veth[0],
                              .peer_mac = "02:00:00:00:00:01", .frames_per_datagram = 16,
                              .epoch = 1 };
    refused(&c, RIFL_ERR_CONFIG, "use at most 5 frames per datagram");
    refused(&c, RIFL_ERR_CONFIG, "MTU of 1500");
    c.frames_per_datagram = 5; /* 20 + 5 x 256 = 1300 */
    rifl_phy *p = NULL;
    CHECK_EQ_I(rifl_phy_eth_create(&c, &p, msg, sizeof msg), RIFL_OK);
    rifl_phy_free(p);
    c.frames_per_datagram = 6; /* 1556 */
    refused(&c, RIFL_ERR_CONFIG, "1556 bytes");
}

int main(int argc, char **argv)
{
    (void)argc;
    static const struct test_case always[] = { { "mac_parse", t_mac_parse },
                                               { "bad_config", t_bad_config } };
    static const struct test_case veth_cases[] = {
        { "mtu", t_mtu }, { "dropped_padded", t_dropped_padded },
        { "lanes_clean", t_lanes_clean }, { "lanes_lossy", t_lanes_lossy } };
    char *args[] = { argv[0], NULL };
    int rc = test_run_main(1, args, always, sizeof always / sizeof always[0]);
    if (rc != 0)
        return rc;
    if (!veth_make()) {
        veth_delete();
        return SKIP;
    }
    rc = test_run_main(1, args, veth_cases, sizeof veth_cases / sizeof veth_cases[0]);
    veth_delete();
    return rc;
}

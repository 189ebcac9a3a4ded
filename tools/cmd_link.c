/* `rifl link bench --phy udp|eth`: both ends of a lane as two processes,
 * over UDP on loopback or over raw Ethernet across a veth pair made for the
 * run (root), driven in real time (rifl/udplink.h).  Seeded
 * random packets each way (or one way), every byte checked at the
 * receiver, then request/response exchanges timed at the client
 * (docs/udp.md, "rifl link bench"). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "rifl/lane.h"
#include "rifl/rng.h"
#include "rifl/sim/traffic.h"
#include "rifl/udplink.h"

#define MAX_PACKET 9000
#define FIN 0xF1      /* the client's last packet: one byte */
#define FIN_ACK 0xF2  /* the server's answer to it */

struct bench_opts {
    const char *phy, *pcap;
    double loss, ber, rate;
    uint64_t bytes, requests, request_bytes, seed, frame_bits, fpd, timeout, keepalive_us;
    uint64_t gso;
    uint64_t pcap_frames;
    bool one_way, json;
};

/* Seeds of everything random, drawn from --seed. */
struct seeds {
    uint64_t phy[2];      /* loss and bit error draws of each end's PHY */
    uint64_t traffic[2];  /* packet sizes and contents each end sends */
    uint32_t epoch[2];
};

static void derive_seeds(uint64_t seed, struct seeds *s)
{
    uint64_t x = seed;
    for (int i = 0; i < 2; i++) {
        s->phy[i] = rifl_splitmix64(&x);
        s->traffic[i] = rifl_splitmix64(&x);
        s->epoch[i] = (uint32_t)rifl_splitmix64(&x) | 1u;
    }
}

/* What one end reports to the parent (through a pipe). */
struct end_result {
    int status;              /* 0: ran to the end; 2: failed (msg) */
    char msg[400];
    rifl_udplink_sizing sz;
    rifl_udplink_stats link;
    rifl_lane_stats lane;
    rifl_phy_udp_stats udp;
    rifl_phy_stats phy;
    uint64_t expect_bytes, bytes_ok, packets_ok, bad_packets;
    double data_s;           /* first data byte to last, at this receiver */
    uint64_t rpc_done, rpc_bad;
    double rpc_us[6];        /* p50, p99, p999, min, max, mean (client) */
};

static size_t packet_size(rifl_rng *r) { return (size_t)rifl_rng_range(r, 1, MAX_PACKET); }

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Where an end runs: a UDP socket and the peer's port, or an interface
 * and the peer's MAC address. */
struct where {
    int fd;
    unsigned peer_port;
    const char *ifname;
    char peer_mac[32];
};

/* One end: i = 0 is the client of the request phase, 1 the server. */
struct end {
    int i;
    const struct bench_opts *o;
    const struct seeds *sd;
    rifl_udplink *link;
    rifl_lane *lane;
    struct end_result *res;
    uint64_t deadline;
    /* sending data */
    rifl_rng tx_sizes;
    uint64_t tx_pkt, tx_bytes, tx_total;
    /* receiving */
    rifl_rng rx_sizes;
    uint8_t buf[16384];
    size_t have;
    uint64_t rx_pkt, rx_done;     /* data packets and bytes taken */
    uint64_t t_first, t_last;
    /* requests */
    uint64_t *lat;
    uint64_t rpc_sent_at;
    bool rpc_started, fin_sent, done;
};

static int fail(struct end *e, const char *fmt, const char *what)
{
    snprintf(e->res->msg, sizeof e->res->msg, fmt, what);
    e->res->status = 2;
    return 2;
}

/* The link's work for up to max_wait_ns; 2 on an error or past the deadline. */
static int serve(struct end *e, uint64_t max_wait_ns, const char *phase)
{
    int rc = rifl_udplink_service(e->link, max_wait_ns, e->res->msg, sizeof e->res->msg);
    if (rc != RIFL_OK) {
        e->res->status = 2;
        return 2;
    }
    if (rifl_udplink_clock_ns() > e->deadline)
        return fail(e, "end timed out %s; give more time with --timeout, or fewer --bytes or "
                    "--requests", phase);
    return 0;
}

static bool data_sent(const struct end *e)
{
    return e->tx_bytes >= e->tx_total && rifl_lane_tx_backlog(e->lane) == 0;
}

static void feed_data(struct end *e)
{
    uint8_t pkt[MAX_PACKET];
    while (e->tx_bytes < e->tx_total) {
        rifl_rng save = e->tx_sizes;
        size_t n = packet_size(&e->tx_sizes);
        if (n > e->tx_total - e->tx_bytes)
            n = (size_t)(e->tx_total - e->tx_bytes);
        rifl_packet_fill(e->sd->traffic[e->i], e->tx_pkt, pkt, n);
        if (rifl_lane_send(e->lane, pkt, n) != RIFL_OK) {
            e->tx_sizes = save; /* the same size next time */
            return;
        }
        e->tx_pkt++;
        e->tx_bytes += n;
    }
}

static void send_bytes(struct end *e, uint64_t stream, uint64_t seq, size_t n)
{
    uint8_t pkt[MAX_PACKET];
    rifl_packet_fill(stream, seq, pkt, n);
    while (rifl_lane_send(e->lane, pkt, n) == RIFL_ERR_AGAIN)
        if (serve(e, 0, "sending a request or response"))
            return;
}

static void send_mark(struct end *e, uint8_t mark)
{
    while (rifl_lane_send(e->lane, &mark, 1) == RIFL_ERR_AGAIN)
        if (serve(e, 0, "sending the end of the run"))
            return;
}

/* A whole packet arrived: check it against what the peer sent there. */
static void take_packet(struct end *e, const uint8_t *p, size_t n)
{
    struct end_result *r = e->res;
    uint8_t want[MAX_PACKET];
    uint64_t now = rifl_udplink_clock_ns();
    if (e->rx_done < r->expect_bytes) {
        /* the data phase: sizes and contents from the peer's seed */
        uint64_t left = r->expect_bytes - e->rx_done;
        size_t wl = packet_size(&e->rx_sizes);
        if (wl > left)
            wl = (size_t)left;
        rifl_packet_fill(e->sd->traffic[1 - e->i], e->rx_pkt, want, wl);
        if (!e->t_first)
            e->t_first = now;
        if (n == wl && !memcmp(p, want, wl)) {
            r->packets_ok++;
            r->bytes_ok += wl;
        } else {
            r->bad_packets++;
        }
        e->rx_done += wl;
        e->rx_pkt++;
        e->t_last = now;
        return;
    }
    /* the request phase */
    uint64_t k = r->rpc_done;
    size_t rb = (size_t)e->o->request_bytes;
    if (e->i == 1) {
        if (n == 1 && p[0] == FIN) {
            send_mark(e, FIN_ACK);
            e->done = true;
            return;
        }
        rifl_packet_fill(e->sd->traffic[0] ^ 0x5245515545535400ull, k, want, rb);
        if (n != rb || memcmp(p, want, rb))
            r->rpc_bad++;
        r->rpc_done++;
        send_bytes(e, e->sd->traffic[1] ^ 0x5245535041524500ull, k, rb);
        return;
    }
    if (n == 1 && p[0] == FIN_ACK && e->fin_sent) {
        e->done = true;
        return;
    }
    rifl_packet_fill(e->sd->traffic[1] ^ 0x5245535041524500ull, k, want, rb);
    if (n != rb || memcmp(p, want, rb) || !e->rpc_started)
        r->rpc_bad++;
    if (k < e->o->requests)
        e->lat[k] = now - e->rpc_sent_at;
    r->rpc_done++;
    if (r->rpc_done < e->o->requests) {
        e->rpc_sent_at = rifl_udplink_clock_ns();
        send_bytes(e, e->sd->traffic[0] ^ 0x5245515545535400ull, r->rpc_done, rb);
    } else if (!e->fin_sent) {
        send_mark(e, FIN);
        e->fin_sent = true;
    }
}

static void read_packets(struct end *e)
{
    for (;;) {
        size_t len = 0;
        int eop = 0;
        if (rifl_lane_read(e->lane, e->buf + e->have, sizeof e->buf - e->have, &len, &eop) !=
            RIFL_OK)
            return;
        e->have += len;
        if (!eop && e->have < sizeof e->buf)
            continue;
        if (!eop) /* longer than any packet sent: wrong */
            e->res->bad_packets++;
        else
            take_packet(e, e->buf, e->have);
        e->have = 0;
    }
}

static void percentiles(struct end *e)
{
    uint64_t n = e->o->requests;
    if (!e->lat || !n || e->res->rpc_done < n)
        return;
    qsort(e->lat, n, sizeof e->lat[0], cmp_u64);
    double ps[3] = { 0.50, 0.99, 0.999 }, sum = 0;
    for (int k = 0; k < 3; k++) {
        uint64_t rank = (uint64_t)(ps[k] * (double)n + 0.999999);
        e->res->rpc_us[k] = e->lat[(rank ? rank : 1) - 1] / 1e3;
    }
    for (uint64_t k = 0; k < n; k++)
        sum += (double)e->lat[k];
    e->res->rpc_us[3] = e->lat[0] / 1e3;
    e->res->rpc_us[4] = e->lat[n - 1] / 1e3;
    e->res->rpc_us[5] = sum / (double)n / 1e3;
}

static int run_end(struct end *e)
{
    struct end_result *r = e->res;
    /* start-up: the round trip */
    while (!rifl_udplink_running(e->link))
        if (serve(e, 10000000, "waiting for the peer's round-trip probes"))
            return 2;
    e->lane = rifl_udplink_lane(e->link);
    /* data */
    while (!(data_sent(e) && e->rx_done >= r->expect_bytes)) {
        feed_data(e);
        read_packets(e);
        if (serve(e, 1000000, "in the data phase"))
            return 2;
    }
    r->data_s = e->t_last > e->t_first ? (e->t_last - e->t_first) / 1e9 : 0;
    /* requests: the client sends one, the server answers each */
    if (e->i == 0) {
        e->rpc_started = true;
        if (e->o->requests) {
            e->rpc_sent_at = rifl_udplink_clock_ns();
            send_bytes(e, e->sd->traffic[0] ^ 0x5245515545535400ull, 0,
                       (size_t)e->o->request_bytes);
        } else {
            send_mark(e, FIN);
            e->fin_sent = true;
        }
    }
    while (!e->done && !r->status) {
        read_packets(e);
        if (!e->done && serve(e, 1000000, "in the request phase"))
            return 2;
    }
    if (r->status)
        return 2;
    percentiles(e);
    /* the server stays until its answer is through: idle, nothing to send,
     * and no datagram from the client for 100 ms (or 3 s at most) */
    if (e->i == 1) {
        uint64_t last_rx = rifl_udplink_clock_ns(), seen = 0, end = last_rx + 3000000000ull;
        for (;;) {
            uint64_t got = rifl_phy_udp_get_stats(rifl_udplink_phy(e->link))->dgrams_received;
            uint64_t now = rifl_udplink_clock_ns();
            if (got != seen) {
                seen = got;
                last_rx = now;
            }
            if (now > end || (rifl_udplink_idle(e->link) && now > last_rx + 100000000))
                break;
            read_packets(e);
            int rc = rifl_udplink_service(e->link, 10000000, r->msg, sizeof r->msg);
            if (rc != RIFL_OK)
                break;
        }
    }
    return 0;
}

/* A child process: end i at `w`, its result down `out`. */
static int child(int i, const struct where *w, const struct bench_opts *o,
                 const struct seeds *sd, int out)
{
    struct end_result *r = calloc(1, sizeof *r);
    struct end e;
    memset(&e, 0, sizeof e);
    if (!r)
        return 2;
    e.i = i;
    e.o = o;
    e.sd = sd;
    e.res = r;
    e.deadline = rifl_udplink_clock_ns() + o->timeout * 1000000000ull;
    bool sends = i == 0 || !o->one_way, receives = i == 1 || !o->one_way;
    e.tx_total = sends ? o->bytes : 0;
    r->expect_bytes = receives ? o->bytes : 0;
    rifl_rng_seed(&e.tx_sizes, sd->traffic[i]);
    rifl_rng_seed(&e.rx_sizes, sd->traffic[1 - i]);
    if (i == 0 && o->requests && !(e.lat = calloc(o->requests, sizeof *e.lat))) {
        r->status = 2;
        snprintf(r->msg, sizeof r->msg, "no memory for %" PRIu64 " latencies", o->requests);
    }
    char remote[64];
    snprintf(remote, sizeof remote, "127.0.0.1:%u", w->peer_port);
    rifl_udplink_config c;
    rifl_udplink_defaults(&c);
    c.udp.frame_bits = (unsigned)o->frame_bits;
    if (w->ifname) {
        c.eth_ifname = w->ifname;
        c.eth_peer_mac = w->peer_mac;
    } else {
        c.udp.fd = w->fd;
        c.udp.remote = remote;
    }
    c.udp.frames_per_datagram = (unsigned)o->fpd;
    c.udp.gso_datagrams = (unsigned)o->gso;
    c.udp.epoch = sd->epoch[i];
    c.udp.loss = o->loss;
    c.udp.ber = o->ber;
    c.udp.seed = sd->phy[i];
    c.rate_gbps = o->rate;
    c.keepalive_ns = o->keepalive_us * 1000;
    if (!r->status && rifl_udplink_create(&c, &e.link, r->msg, sizeof r->msg) != RIFL_OK)
        r->status = 2;
    /* --pcap: end A captures what it sends and what it receives */
    rifl_capture *cap = NULL;
    char cmsg[300] = "";
    if (!r->status && i == 0 && o->pcap) {
        if (rifl_capture_open(o->pcap, c.udp.frame_bits, c.udp.epoch, &cap, cmsg, sizeof cmsg) !=
            RIFL_OK) {
            r->status = 2;
            snprintf(r->msg, sizeof r->msg, "--pcap: %s", cmsg);
        } else {
            rifl_udplink_set_capture(e.link, cap, o->pcap_frames);
        }
    }
    if (!r->status)
        run_end(&e);
    if (cap) {
        rifl_udplink_set_capture(e.link, NULL, 0);
        if (rifl_capture_close(cap, cmsg, sizeof cmsg) != RIFL_OK && !r->status) {
            r->status = 2;
            snprintf(r->msg, sizeof r->msg, "--pcap: %s", cmsg);
        }
    }
    if (e.link) {
        if (rifl_udplink_get_sizing(e.link))
            r->sz = *rifl_udplink_get_sizing(e.link);
        r->link = *rifl_udplink_get_stats(e.link);
        if (e.lane)
            r->lane = *rifl_lane_get_stats(e.lane);
        r->udp = *rifl_phy_udp_get_stats(rifl_udplink_phy(e.link));
        r->phy = *rifl_phy_get_stats(rifl_udplink_phy(e.link));
    }
    int st = r->status;
    ssize_t wrote = write(out, r, sizeof *r);
    rifl_udplink_free(e.link);
    free(e.lat);
    free(r);
    return wrote == (ssize_t)sizeof *r ? st : 2;
}

/* A UDP socket bound to an ephemeral loopback port. */
static int bound_socket(unsigned *port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &n) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

/* ---- the veth pair of --phy eth ------------------------------------------ */

static char ip_path[64];
static char veth[2][IFNAMSIZ];
static volatile sig_atomic_t veth_made;
static volatile pid_t ends_pid[2] = { -1, -1 }; /* stopped with the bench */

/* Run `ip` with the arguments `args` (NULL-terminated), no shell; its exit
 * status, 127 when it could not be run.  Only async-signal-safe calls: a
 * signal handler deletes the pair with it. */
static int run_ip(char *const *args, bool quiet)
{
    char *argv[12];
    size_t n = 0;
    argv[0] = ip_path;
    while (args[n] && n < 10) {
        argv[n + 1] = args[n];
        n++;
    }
    argv[n + 1] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return 127;
    if (pid == 0) {
        if (quiet) {
            int null = open("/dev/null", O_WRONLY);
            if (null >= 0)
                dup2(null, 2);
        }
        execve(ip_path, argv, environ);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return 128;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void veth_delete(void)
{
    if (!veth_made)
        return;
    veth_made = 0; /* deleting one end deletes the pair */
    char *del[] = { "link", "del", veth[0], NULL };
    if (run_ip(del, false) != 0) {
        static const char m[] = "error: could not delete the veth pair; delete it with "
                                "'ip link del ";
        (void)!write(2, m, sizeof m - 1);
        (void)!write(2, veth[0], strlen(veth[0]));
        (void)!write(2, "'\n", 2);
    }
}

/* SIGINT, SIGTERM and SIGHUP held back while a veth pair or an end comes
 * into being and is recorded, so that the handler always knows what to undo:
 * a signal in between is delivered when they are released. */
static void stop_signals_hold(sigset_t *was)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGHUP);
    sigprocmask(SIG_BLOCK, &s, was);
}

static void stop_signals_release(const sigset_t *was) { sigprocmask(SIG_SETMASK, was, NULL); }

static void on_signal(int sig)
{
    for (int i = 0; i < 2; i++)
        if (ends_pid[i] > 0) {
            kill(ends_pid[i], SIGTERM);
            waitpid(ends_pid[i], NULL, 0);
        }
    veth_delete();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Ctrl-C, SIGTERM or a closed terminal stop the ends (and remove a veth
 * pair made) before the bench goes. */
static void catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* Make a veth pair of unique names, both ends up with an MTU of 9000, and
 * read their MAC addresses; 2 with what is missing said. */
static int veth_make(struct where w[2])
{
    if (geteuid() != 0) {
        fprintf(stderr, "error: --phy eth needs root: it makes a veth pair and opens raw "
                "Ethernet (AF_PACKET) sockets; run it as root, or use --phy udp\n");
        return 2;
    }
    const char *paths[] = { "/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip" };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0] && !ip_path[0]; i++)
        if (access(paths[i], X_OK) == 0)
            snprintf(ip_path, sizeof ip_path, "%s", paths[i]);
    if (!ip_path[0]) {
        fprintf(stderr, "error: --phy eth needs the 'ip' command to make a veth pair (Debian "
                "package iproute2: apt-get install iproute2)\n");
        return 2;
    }
    snprintf(veth[0], sizeof veth[0], "rfb%ua", (unsigned)getpid());
    snprintf(veth[1], sizeof veth[1], "rfb%ub", (unsigned)getpid());
    catch_stop_signals();
    atexit(veth_delete);
    char *add[] = { "link", "add", veth[0], "type", "veth", "peer", "name", veth[1], NULL };
    sigset_t was;
    stop_signals_hold(&was);
    int st = run_ip(add, true);
    if (st == 0)
        veth_made = 1;
    stop_signals_release(&was);
    if (st != 0) {
        fprintf(stderr, "error: cannot make a veth pair (%s link add %s type veth peer name %s "
                "exited with %d): this kernel has no veth support, or this process no "
                "CAP_NET_ADMIN\n", ip_path, veth[0], veth[1], st);
        return 2;
    }
    for (int i = 0; i < 2; i++) {
        char *up[] = { "link", "set", "dev", veth[i], "mtu", "9000", "up", NULL };
        if (run_ip(up, false) != 0) {
            fprintf(stderr, "error: cannot bring %s up with an MTU of 9000\n", veth[i]);
            return 2;
        }
    }
    for (int i = 0; i < 2; i++) {
        uint8_t m[6];
        char msg[256];
        if (rifl_eth_interface(veth[1 - i], m, NULL, msg, sizeof msg) != RIFL_OK) {
            fprintf(stderr, "error: %s\n", msg);
            return 2;
        }
        w[i].fd = -1;
        w[i].ifname = veth[i];
        snprintf(w[i].peer_mac, sizeof w[i].peer_mac, "%02x:%02x:%02x:%02x:%02x:%02x", m[0],
                 m[1], m[2], m[3], m[4], m[5]);
    }
    return 0;
}

static bool read_all(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, (char *)buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        got += (size_t)k;
    }
    return true;
}

static double gbps(const struct end_result *r)
{
    return r->data_s > 0 ? r->bytes_ok * 8.0 / r->data_s / 1e9 : 0;
}

static void print_json(const struct bench_opts *o, const struct seeds *sd,
                       const struct end_result *r, bool lossless, double wall)
{
    const struct end_result *a = &r[0], *b = &r[1];
    /* direction d is sent by end d and received by end 1-d */
    printf("{\"phy\": \"%s\", \"seed\": %" PRIu64 ", \"seeds\": {\"phy\": [%" PRIu64 ", %" PRIu64
           "], \"traffic\": [%" PRIu64 ", %" PRIu64 "]}, ", o->phy, o->seed, sd->phy[0], sd->phy[1],
           sd->traffic[0], sd->traffic[1]);
    printf("\"frame_bits\": %" PRIu64 ", \"frames_per_datagram\": %" PRIu64
           ", \"rate_gbps\": %g, \"loss\": %g, \"ber\": %g, \"fid_bits\": %u, \"rtt_us\": %.1f, "
           "\"rtt_slots\": %u, \"window_slots\": %u, ",
           o->frame_bits, o->fpd, o->rate, o->loss, o->ber, a->sz.fid_bits, a->sz.rtt_ns / 1e3,
           a->sz.rtt_slots, a->sz.window);
    printf("\"rtt_probe_us\": {\"min\": %.1f, \"median\": %.1f, \"max\": %.1f}, ",
           (a->link.rtt_min_ns < b->link.rtt_min_ns ? a : b)->link.rtt_min_ns / 1e3,
           a->link.rtt_median_ns / 1e3,
           (a->link.rtt_max_ns > b->link.rtt_max_ns ? a : b)->link.rtt_max_ns / 1e3);
    printf("\"bytes\": %" PRIu64 ", \"one_way\": %s, \"goodput_gbps\": %.3f, ", o->bytes,
           o->one_way ? "true" : "false", gbps(b) + gbps(a));
    for (int d = 0; d < 2; d++) {
        const struct end_result *rx = &r[1 - d];
        printf("\"%s\": {\"bytes_checked\": %" PRIu64 ", \"packets_ok\": %" PRIu64
               ", \"packets_bad\": %" PRIu64 ", \"seconds\": %.4f, \"goodput_gbps\": %.3f}, ",
               d ? "b_to_a" : "a_to_b", rx->bytes_ok, rx->packets_ok, rx->bad_packets, rx->data_s,
               gbps(rx));
    }
    uint64_t replays = a->lane.tx_replay_cycles + b->lane.tx_replay_cycles;
    printf("\"replays\": %" PRIu64 ", \"frames_replayed\": %" PRIu64
           ", \"dropped_datagrams\": %" PRIu64 ", \"missing_frames\": %" PRIu64
           ", \"verify_failures\": %" PRIu64 ", \"bit_errors\": %" PRIu64
           ", \"late_datagrams\": %" PRIu64 ", \"send_failures\": %" PRIu64 ", ",
           replays, a->lane.tx_replayed + b->lane.tx_replayed, a->udp.tx_lost + b->udp.tx_lost,
           a->udp.rx_missing + b->udp.rx_missing,
           a->lane.rx_verify_fail + b->lane.rx_verify_fail, a->phy.bit_errors + b->phy.bit_errors,
           a->udp.rx_late + b->udp.rx_late, a->udp.tx_failed + b->udp.tx_failed);
    printf("\"lossless\": %s, \"requests\": %" PRIu64 ", \"request_bytes\": %" PRIu64
           ", \"requests_bad\": %" PRIu64 ", ",
           lossless ? "true" : "false", a->rpc_done, o->request_bytes, a->rpc_bad + b->rpc_bad);
    if (o->requests)
        printf("\"rpc_us\": {\"p50\": %.1f, \"p99\": %.1f, \"p999\": %.1f, \"min\": %.1f, "
               "\"max\": %.1f, \"mean\": %.1f}, ", a->rpc_us[0], a->rpc_us[1], a->rpc_us[2],
               a->rpc_us[3], a->rpc_us[4], a->rpc_us[5]);
    else
        printf("\"rpc_us\": null, ");
    printf("\"pcap\": ");
    if (o->pcap)
        json_str(stdout, o->pcap);
    else
        printf("null");
    printf(", ");
    printf("\"ends\": [");
    for (int i = 0; i < 2; i++) {
        const rifl_lane_stats *L = &r[i].lane;
        printf("%s{\"slots\": %" PRIu64 ", \"keepalive_slots\": %" PRIu64 ", \"idle_periods\": %"
               PRIu64 ", \"peer_wakes\": %" PRIu64 ", \"window_stalls\": %" PRIu64
               ", \"schedule_resets\": %" PRIu64
               ", \"datagrams_sent\": %" PRIu64 ", \"datagrams_received\": %" PRIu64,
               i ? ", " : "", r[i].link.slots, r[i].link.keepalive_slots, r[i].link.idle_periods,
               r[i].link.peer_wakes, r[i].link.window_stalls, r[i].link.schedule_resets,
               r[i].udp.dgrams_sent,
               r[i].udp.dgrams_received);
        printf(", \"epoch\": %" PRIu32 ", \"frames_received\": %" PRIu64 ", \"tx_frames\": "
               "{\"data\": %" PRIu64 ", \"filler\": %" PRIu64 ", \"fc_on\": %" PRIu64
               ", \"fc_off\": %" PRIu64 ", \"ext\": %" PRIu64 "}, \"tx_replayed\": %" PRIu64
               ", \"tx_idle\": %" PRIu64 ", \"tx_pause\": %" PRIu64 ", \"tx_retransmit\": %"
               PRIu64 ", \"rx_delivered_data\": %" PRIu64 ", \"captured_frames\": %" PRIu64
               ", \"capture_skipped\": %" PRIu64 ", \"tx_calls\": %" PRIu64 ", \"gso_sends\": %"
               PRIu64 ", \"gso_fallbacks\": %" PRIu64 ", \"gro_reads\": %" PRIu64 "}",
               r[i].udp.epoch, r[i].phy.delivered, L->tx_frames[RIFL_KIND_DATA],
               L->tx_frames[RIFL_KIND_FILLER], L->tx_frames[RIFL_KIND_FC_ON],
               L->tx_frames[RIFL_KIND_FC_OFF], L->tx_frames[RIFL_KIND_EXT], L->tx_replayed,
               L->tx_idle, L->tx_pause, L->tx_retransmit, L->rx_delivered[RIFL_KIND_DATA],
               r[i].link.captured_frames, r[i].link.capture_skipped, r[i].udp.tx_calls,
               r[i].udp.gso_sends, r[i].udp.gso_fallbacks, r[i].udp.gro_reads);
    }
    printf("], \"wall_s\": %.2f}\n", wall);
}

static void print_text(const struct bench_opts *o, const struct end_result *r, bool lossless,
                       double wall)
{
    const struct end_result *a = &r[0], *b = &r[1];
    if (!strcmp(o->phy, "eth"))
        printf("rifl link bench: raw Ethernet over a veth pair (%s, %s; MTU 9000), two "
               "processes; ", veth[0], veth[1]);
    else
        printf("rifl link bench: UDP on loopback, two processes; ");
    printf("%" PRIu64 "-bit frames, %" PRIu64 " per datagram, lane rate %g Gbit/s, K=%u (round trip %.1f us = %u slots), loss %g"
           ", seed %" PRIu64 "\n", o->frame_bits, o->fpd, o->rate, a->sz.fid_bits,
           a->sz.rtt_ns / 1e3, a->sz.rtt_slots, o->loss, o->seed);
    for (int d = 0; d < 2; d++) {
        const struct end_result *rx = &r[1 - d];
        if (!rx->expect_bytes)
            continue;
        printf("  %s: %" PRIu64 " bytes in %" PRIu64 " packets checked, %" PRIu64
               " wrong; goodput %.3f Gbit/s\n", d ? "B -> A" : "A -> B", rx->bytes_ok,
               rx->packets_ok + rx->bad_packets, rx->bad_packets, gbps(rx));
    }
    printf("  replays %" PRIu64 ", datagrams dropped %" PRIu64 ", frames missing %" PRIu64
           ", verify failures %" PRIu64 "\n",
           a->lane.tx_replay_cycles + b->lane.tx_replay_cycles, a->udp.tx_lost + b->udp.tx_lost,
           a->udp.rx_missing + b->udp.rx_missing, a->lane.rx_verify_fail + b->lane.rx_verify_fail);
    if (o->requests)
        printf("  %" PRIu64 " requests of %" PRIu64 " bytes: p50 %.1f us, p99 %.1f us, p999 %.1f "
               "us\n", a->rpc_done, o->request_bytes, a->rpc_us[0], a->rpc_us[1], a->rpc_us[2]);
    if (o->pcap)
        printf("  capture: %" PRIu64 " frames sent and received at end A in %s (%" PRIu64
               " more not captured)\n", a->link.captured_frames, o->pcap, a->link.capture_skipped);
    printf("lossless: %s\n", lossless ? "yes (every byte arrived once, in order, unchanged)"
                                      : "NO (bytes were lost, duplicated, reordered or corrupted)");
    printf("ran %.2f s\n", wall);
}

static int run(int argc, char **argv)
{
    struct bench_opts o = { .phy = NULL, .rate = 1.0, .bytes = 50000000, .requests = 10000,
                            .request_bytes = 1024, .seed = 1, .frame_bits = 2048, .fpd = 16, .gso = 8,
                            .timeout = 120, .keepalive_us = 1000, .pcap_frames = 100000 };
    struct cli_opt opts[] = {
        { "phy", CLI_STRING, &o.phy, "the PHY under the lane: udp (on loopback) or eth (raw "
          "Ethernet over a veth pair made for the run; root)", 0, 0 },
        { "bytes", CLI_BYTES, &o.bytes, "bytes of random packets each way (1 to 9000 bytes "
          "each)", 0, 1e13 },
        { "one-way", CLI_FLAG, &o.one_way, "send --bytes from A to B only", 0, 0 },
        { "requests", CLI_UINT, &o.requests, "request/response exchanges timed after the data",
          0, 1e8 },
        { "request-bytes", CLI_UINT, &o.request_bytes, "size of each request and response", 2,
          MAX_PACKET },
        { "loss", CLI_DOUBLE, &o.loss, "drop each datagram with this probability, each "
          "direction on its own", 0, 0.5 },
        { "ber", CLI_DOUBLE, &o.ber, "flip each bit of the frames sent with this probability",
          0, 1e-3 },
        { "rate-gbps", CLI_DOUBLE, &o.rate, "lane rate the slots are paced at, Gbit/s", 0.001,
          1000 },
        { "frame-bits", CLI_UINT, &o.frame_bits, "frame width: 64, 128, 256, 512, 1024 or 2048",
          64, 2048 },
        { "frames-per-datagram", CLI_UINT, &o.fpd, "frames gathered into one datagram", 1,
          RIFL_UDP_MAX_FRAMES },
        { "keepalive-us", CLI_UINT, &o.keepalive_us, "one slot per this many microseconds "
          "while idle", 10, 1e6 },
        { "gso", CLI_UINT, &o.gso, "UDP: datagrams sent together in one system call with "
          "segmentation offload, and read coalesced (0 or 1: one call each)", 0, 64 },
        { "seed", CLI_UINT, &o.seed, "seed of every random choice (packets, loss, bit errors)", 0,
          18446744073709551615.0 },
        { "timeout", CLI_UINT, &o.timeout, "seconds each end may run before it gives up", 1,
          86400 },
        { "json", CLI_FLAG, &o.json, "print the result as one JSON object", 0, 0 },
        { "pcap", CLI_STRING, &o.pcap, "write the frames end A sends and receives to this pcap "
          "file (docs/capture.md)", 0, 0 },
        { "pcap-frames", CLI_UINT, &o.pcap_frames, "capture the first N frames only", 1, 1e12 },
        CLI_END,
    };
    int rc = cli_parse(argc, argv, opts, "--phy udp|eth [options]",
                       "Runs both ends of a RIFL lane as two processes: over UDP on\n"
                       "loopback (--phy udp, no root), or over raw Ethernet (EtherType 0x88B5)\n"
                       "across a veth pair made for the run and deleted at its end\n"
                       "(--phy eth, root and the ip command).  Slots are paced in real time at\n"
                       "--rate-gbps, K sized from the round trip probed at start-up.  Each end\n"
                       "sends --bytes of seeded random packets, and the receiver checks every\n"
                       "byte; then A sends --requests requests of --request-bytes, B answers\n"
                       "each, and A times them.\n"
                       "Exits 0 when the link was lossless, 1 when it was not, 2 on an error.",
                       NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (!o.phy)
        return cli_fail(opts, "phy", "no PHY given; use --phy udp (UDP on loopback) or --phy "
                        "eth (raw Ethernet over a veth pair; root)");
    if (strcmp(o.phy, "udp") && strcmp(o.phy, "eth"))
        return cli_fail(opts, "phy", "PHY '%s' is not supported; use --phy udp or --phy eth",
                        o.phy);
    if (cli_frame_width(opts, "frame-bits", o.frame_bits))
        return 2;
    if (!strcmp(o.phy, "eth") &&
        cli_unused(opts, "gso", "over raw Ethernet (segmentation offload is UDP's)"))
        return 2;
    if (!o.pcap && cli_unused(opts, "pcap-frames", "without --pcap"))
        return 2;
    if (!o.bytes && !o.requests)
        return cli_fail(opts, "bytes,requests", "nothing to do; give --bytes or --requests "
                        "above 0");
    struct seeds sd;
    derive_seeds(o.seed, &sd);
    /* the sizing the ends will do, checked here for a round trip of 0, so
     * that settings no round trip fits are refused before anything runs */
    rifl_udplink_config c;
    rifl_udplink_defaults(&c);
    c.udp.frame_bits = (unsigned)o.frame_bits;
    c.udp.frames_per_datagram = (unsigned)o.fpd;
    c.rate_gbps = o.rate;
    rifl_udplink_sizing sz;
    char msg[512];
    if (rifl_udplink_size(&c, 1, &sz, msg, sizeof msg) != RIFL_OK)
        return cli_fail(opts, "frames-per-datagram", "%s", msg);
    if (o.pcap) {
        /* a file that cannot be written is refused now, not by end A once
         * both ends are up (which opens it again, from the start) */
        rifl_capture *cap;
        if (rifl_capture_open(o.pcap, (unsigned)o.frame_bits, sd.epoch[0], &cap, msg,
                              sizeof msg) != RIFL_OK)
            return cli_fail(opts, "pcap", "%s", msg);
        if (rifl_capture_close(cap, msg, sizeof msg) != RIFL_OK)
            return cli_fail(opts, "pcap", "%s", msg);
    }
    struct where w[2];
    memset(w, 0, sizeof w);
    w[0].fd = w[1].fd = -1;
    if (!strcmp(o.phy, "eth")) {
        if (veth_make(w)) {
            veth_delete();
            return 2;
        }
    } else {
        unsigned port[2];
        for (int i = 0; i < 2; i++)
            if ((w[i].fd = bound_socket(&port[i])) < 0) {
                fprintf(stderr, "error: cannot open a UDP socket on 127.0.0.1: %s\n",
                        strerror(errno));
                if (i)
                    close(w[0].fd);
                return 2;
            }
        w[0].peer_port = port[1];
        w[1].peer_port = port[0];
    }
    fflush(stdout);
    fflush(stderr);
    double t0 = cli_now();
    pid_t pid[2] = { -1, -1 };
    int pipes[2][2];
    catch_stop_signals();
    for (int i = 0; i < 2; i++) {
        sigset_t was;
        stop_signals_hold(&was);
        if (pipe(pipes[i]) != 0 || (pid[i] = fork()) < 0) {
            stop_signals_release(&was);
            fprintf(stderr, "error: cannot start the ends: %s\n", strerror(errno));
            if (i && pid[0] > 0) {
                kill(pid[0], SIGTERM);
                waitpid(pid[0], NULL, 0);
            }
            veth_delete();
            return 2;
        }
        if (pid[i] == 0) {
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            signal(SIGHUP, SIG_DFL);
            stop_signals_release(&was);
            close(pipes[i][0]);
            if (w[1 - i].fd >= 0)
                close(w[1 - i].fd);
            _exit(child(i, &w[i], &o, &sd, pipes[i][1]));
        }
        ends_pid[i] = pid[i];
        stop_signals_release(&was);
        close(pipes[i][1]);
    }
    for (int i = 0; i < 2; i++)
        if (w[i].fd >= 0)
            close(w[i].fd);
    struct end_result r[2];
    bool got[2];
    for (int i = 0; i < 2; i++) {
        got[i] = read_all(pipes[i][0], &r[i], sizeof r[i]);
        close(pipes[i][0]);
    }
    int wst[2] = { 0, 0 };
    for (int i = 0; i < 2; i++) {
        waitpid(pid[i], &wst[i], 0);
        ends_pid[i] = -1;
    }
    double wall = cli_now() - t0;
    veth_delete();
    for (int i = 0; i < 2; i++) {
        if (!got[i]) {
            fprintf(stderr, "error: end %c ended without a result (%s %d)\n", 'A' + i,
                    WIFSIGNALED(wst[i]) ? "signal" : "exit status",
                    WIFSIGNALED(wst[i]) ? WTERMSIG(wst[i]) : WEXITSTATUS(wst[i]));
            return 2;
        }
        if (r[i].status) {
            fprintf(stderr, "error: end %c: %s\n", 'A' + i, r[i].msg);
            if (strstr(r[i].msg, "lane rate"))
                fprintf(stderr, "(the lane rate is --rate-gbps, the datagrams' frames "
                        "--frames-per-datagram)\n");
            return 2;
        }
    }
    bool lossless = true;
    for (int i = 0; i < 2; i++)
        lossless = lossless && r[i].bad_packets == 0 && r[i].bytes_ok == r[i].expect_bytes &&
                   r[i].rpc_bad == 0;
    lossless = lossless && r[0].rpc_done == o.requests && r[1].rpc_done == o.requests;
    if (o.json)
        print_json(&o, &sd, r, lossless, wall);
    else
        print_text(&o, r, lossless, wall);
    return lossless ? 0 : 1;
}

const struct rifl_command rifl_cmd_link = {
    "link bench", "a lane between two processes, over UDP on loopback or raw Ethernet over "
    "a veth pair: goodput, lossless check, request latency", run
};

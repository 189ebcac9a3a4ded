/* `rifl link up`: one end of a RIFL lane over UDP to a peer, run in real
 * time (rifl/udplink.h) until stopped, optionally joined to a TAP device so
 * that IP runs over the link (docs/link-daemon.md).  Its counters go to a
 * state file that `rifl link status` shows and `rifl link down` uses to stop
 * it; on a terminal a line of live counters is shown as well. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "rifl/lane.h"
#include "rifl/udplink.h"

#define MAX_FRAME 65536 /* largest packet taken from or given to the TAP device */

struct up_opts {
    const char *phy, *local, *remote, *name, *tap, *state_dir, *ifname, *peer_mac, *pcap;
    double rate, loss, ber;
    uint64_t frame_bits, fpd, seed, keepalive_us, mtu, connect_s, duration_s, pcap_frames, gso;
    bool quiet;
};

/* What the end did so far, beside the engines' own counters. */
struct up_counts {
    uint64_t tap_in, tap_in_bytes;    /* frames taken from the TAP device */
    uint64_t tap_in_dropped;          /* frames from it the lane could not take
                                         (longer than the MTU + 14 it was sized
                                         for) */
    uint64_t tap_out, tap_out_bytes;  /* frames written to it */
    uint64_t tap_write_failed;        /* frames the device refused */
    uint64_t rx_packets, rx_bytes;    /* packets the lane delivered */
    uint64_t rx_too_big;              /* delivered packets too large to hand on */
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }

/* The TAP device `name`, up, with `mtu`; -1 after a message. */
static int open_tap(const char *name, unsigned mtu)
{
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "error: --tap: cannot open /dev/net/tun: %s; a TAP device needs the tun "
                "module and root (or CAP_NET_ADMIN)\n", strerror(errno));
        return -1;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
    if (ioctl(fd, TUNSETIFF, &ifr) != 0) {
        fprintf(stderr, "error: --tap %s: cannot create the TAP device: %s%s\n", name,
                strerror(errno), errno == EPERM ? "; run as root (or with CAP_NET_ADMIN)" :
                errno == EBUSY ? "; the name is taken: choose another" : "");
        close(fd);
        return -1;
    }
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int bad = s < 0;
    if (!bad) {
        ifr.ifr_mtu = (int)mtu;
        bad = ioctl(s, SIOCSIFMTU, &ifr) != 0;
    }
    if (!bad && !(bad = ioctl(s, SIOCGIFFLAGS, &ifr) != 0)) {
        ifr.ifr_flags |= IFF_UP;
        bad = ioctl(s, SIOCSIFFLAGS, &ifr) != 0;
    }
    if (bad) {
        fprintf(stderr, "error: --tap %s: cannot set its MTU to %u and bring it up: %s\n", name,
                mtu, strerror(errno));
        if (s >= 0)
            close(s);
        close(fd);
        return -1;
    }
    close(s);
    return fd;
}

struct up {
    const struct up_opts *o;
    rifl_udplink *link;
    int tap;
    char state_path[4096];
    struct up_counts n;
    uint8_t rbuf[MAX_FRAME];
    size_t rlen;
    bool rskip;               /* dropping the rest of a packet too large */
    uint64_t t_start;
    /* for the rates shown */
    uint64_t last_t, last_tx, last_rx;
    double tx_gbps, rx_gbps;
    uint64_t resets;          /* the driver's joint resets seen */
};

/* The lane's counters (all zero before it runs). */
static const rifl_lane_stats *lst(const struct up *u)
{
    static const rifl_lane_stats zero;
    rifl_lane *l = rifl_udplink_lane(u->link);
    return l ? rifl_lane_get_stats(l) : &zero;
}
#define LANE(u, f) (lst(u)->f)

static void update_rates(struct up *u, uint64_t now)
{
    uint64_t tx = LANE(u, tx_bytes), rx = LANE(u, rx_bytes);
    if (u->last_t && now > u->last_t) {
        double s = (double)(now - u->last_t) / 1e9;
        u->tx_gbps = 8.0 * (double)(tx - u->last_tx) / s / 1e9;
        u->rx_gbps = 8.0 * (double)(rx - u->last_rx) / s / 1e9;
    }
    u->last_t = now;
    u->last_tx = tx;
    u->last_rx = rx;
}

static const char *state_word(const struct up *u)
{
    if (!rifl_udplink_running(u->link))
        return "probing";
    return rifl_udplink_idle(u->link) ? "up, idle" : "up";
}

static void write_state(struct up *u, uint64_t now)
{
    const struct up_opts *o = u->o;
    const rifl_udplink_sizing *sz = rifl_udplink_get_sizing(u->link);
    const rifl_udplink_stats *ls = rifl_udplink_get_stats(u->link);
    const rifl_phy_udp_stats *us = rifl_phy_udp_get_stats(rifl_udplink_phy(u->link));
    bool run = rifl_udplink_running(u->link);
    char j[4096];
    int len = snprintf(j, sizeof j,
             "{\"name\": \"%s\", \"pid\": %ld, \"phy\": \"%s\", \"local\": \"%s\", \"remote\": "
             "\"%s\", \"tap\": \"%s\", \"state\": \"%s\", \"uptime_s\": %.1f, \"rtt_us\": %.1f, "
             "\"fid_bits\": %u, \"rate_gbps\": %g, \"tx_gbps\": %.4f, \"rx_gbps\": %.4f, "
             "\"tx_packets\": %" PRIu64 ", \"tx_bytes\": %" PRIu64 ", \"rx_packets\": %" PRIu64
             ", \"rx_bytes\": %" PRIu64 ", \"replays\": %" PRIu64 ", \"replayed_frames\": %" PRIu64
             ", \"verify_failures\": %" PRIu64 ", \"datagrams_sent\": %" PRIu64
             ", \"datagrams_received\": %" PRIu64 ", \"datagrams_dropped\": %" PRIu64
             ", \"frames_missing\": %" PRIu64 ", \"datagrams_late\": %" PRIu64
             ", \"datagrams_foreign\": %" PRIu64 ", \"datagrams_malformed\": %" PRIu64
             ", \"datagrams_other_width\": %" PRIu64 ", \"send_failures\": %" PRIu64
             ", \"slots\": %" PRIu64 ", \"keepalive_slots\": %" PRIu64 ", \"tap_in\": %" PRIu64
             ", \"tap_out\": %" PRIu64 ", \"tap_write_failed\": %" PRIu64
             ", \"rx_too_big\": %" PRIu64 ", \"epoch\": %" PRIu32 ", \"peer_epoch\": %" PRIu32
             ", \"resets\": %" PRIu64 ", \"reset_tx_frames\": %" PRIu64
             ", \"reset_rx_frames\": %" PRIu64 ", \"datagrams_stale\": %" PRIu64
             ", \"captured_frames\": %" PRIu64 ", \"window_stalls\": %" PRIu64
             ", \"schedule_resets\": %" PRIu64 ", \"idle_periods\": %" PRIu64
             ", \"peer_wakes\": %" PRIu64 ", \"frames_overflow\": %" PRIu64
             ", \"erasures\": %" PRIu64 ", \"tap_in_dropped\": %" PRIu64
             ", \"datagrams_far_held\": %" PRIu64 ", \"jumps\": %" PRIu64 "}\n",
             o->name, (long)getpid(), o->phy, o->local, o->remote, o->tap ? o->tap : "",
             state_word(u), (double)(now - u->t_start) / 1e9,
             run ? (double)sz->rtt_ns / 1e3 : 0.0, run ? sz->fid_bits : 0, o->rate, u->tx_gbps,
             u->rx_gbps, LANE(u, tx_packets), LANE(u, tx_bytes), LANE(u, rx_packets),
             LANE(u, rx_bytes), LANE(u, tx_replay_cycles), LANE(u, tx_replayed),
             LANE(u, rx_verify_fail), us->dgrams_sent, us->dgrams_received, us->tx_lost,
             us->rx_missing, us->rx_late, us->rx_foreign, us->rx_malformed,
             us->rx_other_width, us->tx_failed, ls->slots,
             ls->keepalive_slots, u->n.tap_in, u->n.tap_out, u->n.tap_write_failed,
             u->n.rx_too_big, us->epoch, us->peer_epoch, ls->resets, ls->reset_tx_frames,
             ls->reset_rx_frames, us->rx_stale, ls->captured_frames, ls->window_stalls,
             ls->schedule_resets, ls->idle_periods, ls->peer_wakes, us->rx_overflow,
             us->rx_erasures, u->n.tap_in_dropped, us->rx_far_held, us->rx_jumps);
    if (len < 0 || (size_t)len >= sizeof j) {
        /* (names and addresses are bounded well below this) */
        if (!o->quiet)
            fprintf(stderr, "warning: the state of %s is too long for the state file; not "
                    "written\n", o->name);
        return;
    }
    if (cli_link_state_write(u->state_path, j) != 0 && !o->quiet)
        fprintf(stderr, "warning: cannot write the state file %s: %s\n", u->state_path,
                strerror(errno));
}

static void live_line(const struct up *u)
{
    const rifl_phy_udp_stats *us = rifl_phy_udp_get_stats(rifl_udplink_phy(u->link));
    const rifl_udplink_sizing *sz = rifl_udplink_get_sizing(u->link);
    bool run = rifl_udplink_running(u->link);
    fprintf(stderr, "\r%s %s: rtt %.0f us K=%u | tx %.3f rx %.3f Gbit/s | replays %" PRIu64
            " verify-fail %" PRIu64 " missing %" PRIu64 " late %" PRIu64 " resets %" PRIu64 "   ",
            u->o->name, state_word(u), run ? (double)sz->rtt_ns / 1e3 : 0.0,
            run ? sz->fid_bits : 0, u->tx_gbps, u->rx_gbps, LANE(u, tx_replay_cycles),
            LANE(u, rx_verify_fail), us->rx_missing, us->rx_late,
            rifl_udplink_get_stats(u->link)->resets);
}

/* Packets the lane delivered: to the TAP device, or counted. */
static bool drain_lane(struct up *u)
{
    rifl_lane *l = rifl_udplink_lane(u->link);
    bool any = false;
    for (;;) {
        size_t n;
        int eop;
        if (rifl_lane_read(l, u->rbuf + u->rlen, sizeof u->rbuf - u->rlen, &n, &eop) != RIFL_OK)
            return any;
        any = true;
        u->rlen += n;
        if (!eop) {
            if (u->rlen == sizeof u->rbuf) { /* larger than any frame: not handed on */
                if (!u->rskip)
                    u->n.rx_too_big++;
                u->rskip = true;
                u->rlen = 0;
            }
            continue;
        }
        if (!u->rskip) {
            u->n.rx_packets++;
            u->n.rx_bytes += u->rlen;
            if (u->tap >= 0) {
                if (write(u->tap, u->rbuf, u->rlen) == (ssize_t)u->rlen) {
                    u->n.tap_out++;
                    u->n.tap_out_bytes += u->rlen;
                } else {
                    u->n.tap_write_failed++;
                }
            }
        }
        u->rskip = false;
        u->rlen = 0;
    }
}

/* Frames from the TAP device into the lane while it has room for one. */
static bool feed_lane(struct up *u)
{
    rifl_lane *l = rifl_udplink_lane(u->link);
    bool any = false;
    uint8_t buf[MAX_FRAME];
    while (u->tap >= 0 && rifl_lane_send_space(l) >= u->o->mtu + 14) {
        ssize_t n = read(u->tap, buf, sizeof buf);
        if (n <= 0)
            break;
        if (rifl_lane_send(l, buf, (size_t)n) != RIFL_OK) {
            /* longer than the MTU + 14 the room was checked for (a VLAN
             * tag, a device whose MTU was raised): dropped, counted */
            u->n.tap_in_dropped++;
            continue;
        }
        u->n.tap_in++;
        u->n.tap_in_bytes += (uint64_t)n;
        any = true;
    }
    return any;
}

static int run_link(struct up *u)
{
    const struct up_opts *o = u->o;
    char msg[512];
    uint64_t next_state = 0, next_line = 0, end = 0;
    bool tty = isatty(2) && !o->quiet, announced = false;
    u->t_start = rifl_udplink_clock_ns();
    if (o->duration_s)
        end = u->t_start + o->duration_s * 1000000000ull;
    int status = 0;
    while (!stop_signal) {
        uint64_t now = rifl_udplink_clock_ns(), wake = now;
        if (end && now >= end)
            break;
        if (rifl_udplink_step(u->link, now, &wake, msg, sizeof msg) != RIFL_OK) {
            fprintf(stderr, "%serror: %s\n", tty ? "\n" : "", msg);
            status = 2;
            break;
        }
        bool busy = false;
        if (rifl_udplink_running(u->link)) {
            if (!announced) {
                const rifl_udplink_sizing *sz = rifl_udplink_get_sizing(u->link);
                fprintf(stderr, "rifl link up: %s is up: round trip %.1f us, K=%u, lane rate %g "
                        "Gbit/s%s%s\n", o->name, (double)sz->rtt_ns / 1e3, sz->fid_bits, o->rate,
                        o->tap ? ", TAP device " : "", o->tap ? o->tap : "");
                announced = true;
            }
            bool drained = drain_lane(u), fed = feed_lane(u); /* both, always */
            busy = drained || fed;
        }
        const rifl_udplink_stats *ls = rifl_udplink_get_stats(u->link);
        if (ls->resets != u->resets) {
            /* the peer restarted: the driver dropped the lane and probes
             * again with it (a joint reset on new epochs); a packet read
             * in part is of the old lane */
            u->resets = ls->resets;
            u->rlen = 0;
            u->rskip = false;
            announced = false;
            fprintf(stderr, "%srifl link up: %s: the peer restarted (new epoch %08" PRIx32 "): "
                    "joint reset, %" PRIu64 " frames queued to send and %" PRIu64 " received "
                    "and unread dropped so far; probing the round trip again\n",
                    tty ? "\n" : "", o->name,
                    rifl_phy_udp_get_stats(rifl_udplink_phy(u->link))->peer_epoch,
                    ls->reset_tx_frames, ls->reset_rx_frames);
        }
        if (now >= next_state) {
            update_rates(u, now);
            write_state(u, now);
            next_state = now + 500000000ull;
        }
        if (tty && now >= next_line) {
            live_line(u);
            next_line = now + 1000000000ull;
        }
        if (busy)
            continue;
        now = rifl_udplink_clock_ns();
        uint64_t until = wake < next_state ? wake : next_state;
        if (end && end < until)
            until = end;
        if (until <= now + 50000)
            continue; /* less than 50 us: no sleep */
        struct pollfd pf[2] = { { rifl_udplink_fd(u->link), POLLIN, 0 }, { u->tap, POLLIN, 0 } };
        int nfd = 1;
        rifl_lane *l = rifl_udplink_lane(u->link);
        if (u->tap >= 0 && l && rifl_lane_send_space(l) >= o->mtu + 14)
            nfd = 2;
        uint64_t w = until - now;
        struct timespec ts = { (time_t)(w / 1000000000u), (long)(w % 1000000000u) };
        if (ppoll(pf, (nfds_t)nfd, &ts, NULL) < 0 && errno != EINTR) {
            fprintf(stderr, "%serror: waiting for the socket failed: %s\n", tty ? "\n" : "",
                    strerror(errno));
            status = 2;
            break;
        }
    }
    if (tty)
        fputc('\n', stderr);
    return status;
}

static int run(int argc, char **argv)
{
    struct up_opts o = { .rate = 1.0, .frame_bits = 2048, .fpd = 16, .gso = 8, .seed = 1,
                         .keepalive_us = 1000, .mtu = 1500, .connect_s = 30,
                         .pcap_frames = 100000 };
    struct cli_opt opts[] = {
        { "phy", CLI_STRING, &o.phy, "the PHY under the lane: udp, or eth (raw Ethernet, root)",
          0, 0 },
        { "local", CLI_STRING, &o.local, "udp: ADDRESS:PORT to bind, numeric (e.g. "
          "10.0.0.1:7000)", 0, 0 },
        { "remote", CLI_STRING, &o.remote, "udp: ADDRESS:PORT of the peer, numeric", 0, 0 },
        { "interface", CLI_STRING, &o.ifname, "eth: the network interface to the peer", 0, 0 },
        { "peer-mac", CLI_STRING, &o.peer_mac, "eth: the peer's MAC address, e.g. "
          "02:00:00:00:00:02", 0, 0 },
        { "name", CLI_STRING, &o.name, "the link's name for status and down (default: the TAP "
          "device's, or 'rifl')", 0, 0 },
        { "tap", CLI_STRING, &o.tap, "create this TAP device and carry its Ethernet frames over "
          "the link (root)", 0, 0 },
        { "mtu", CLI_UINT, &o.mtu, "MTU of the TAP device (a frame of MTU + 14 bytes is one "
          "packet on the lane)", 576, MAX_FRAME - 14 - 1 },
        { "rate-gbps", CLI_DOUBLE, &o.rate, "lane rate the slots are paced at, Gbit/s", 0.001,
          1000 },
        { "frame-bits", CLI_UINT, &o.frame_bits, "frame width: 64 to 2048, a power of two", 64,
          2048 },
        { "frames-per-datagram", CLI_UINT, &o.fpd, "frames gathered into one datagram", 1,
          RIFL_UDP_MAX_FRAMES },
        { "keepalive-us", CLI_UINT, &o.keepalive_us, "one slot per this many microseconds "
          "while idle", 10, 1e6 },
        { "gso", CLI_UINT, &o.gso, "UDP: datagrams sent together in one system call with "
          "segmentation offload, and read coalesced (0 or 1: one call each)", 0, 64 },
        { "loss", CLI_DOUBLE, &o.loss, "drop each datagram sent with this probability (tests)",
          0, 0.5 },
        { "ber", CLI_DOUBLE, &o.ber, "flip each bit of the frames sent with this probability "
          "(tests)", 0, 1e-3 },
        { "seed", CLI_UINT, &o.seed, "seed of the loss and bit-error draws", 0,
          18446744073709551615.0 },
        { "connect-s", CLI_UINT, &o.connect_s, "seconds to wait for the peer at start-up", 1,
          86400 },
        { "duration-s", CLI_UINT, &o.duration_s, "stop after this many seconds (0: run until "
          "stopped)", 0, 1e9 },
        { "state-dir", CLI_STRING, &o.state_dir, "where the state file goes (default /run/rifl "
          "for root)", 0, 0 },
        { "quiet", CLI_FLAG, &o.quiet, "no live counters on the terminal", 0, 0 },
        { "pcap", CLI_STRING, &o.pcap, "write every frame this end sends and receives to this "
          "pcap file (docs/capture.md)", 0, 0 },
        { "pcap-frames", CLI_UINT, &o.pcap_frames, "capture the first N frames only", 1, 1e12 },
        CLI_END,
    };
    int rc = cli_parse(argc, argv, opts, "--phy udp --local ADDR:PORT --remote ADDR:PORT "
                       "[--tap NAME] [options]  |  --phy eth --interface IF --peer-mac MAC ...",
                       "Brings up one end of a RIFL lane over UDP (or raw Ethernet, EtherType\n"
                       "0x88B5, with --phy eth) to a peer that runs the same\n"
                       "command, and runs it until stopped (Ctrl-C, SIGTERM or rifl link down).\n"
                       "The round trip is probed at start-up and K sized from it; slots are paced\n"
                       "at --rate-gbps; an idle link sends keepalives only.  With --tap the\n"
                       "Ethernet frames of a TAP device cross the link, so IP runs over it\n"
                       "(docs/link-daemon.md).  Counters: rifl link status.",
                       NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (!o.phy)
        return cli_fail(opts, "phy", "no PHY given; use --phy udp or --phy eth");
    bool eth = !strcmp(o.phy, "eth");
    if (!eth && strcmp(o.phy, "udp"))
        return cli_fail(opts, "phy", "PHY '%s' is not supported; use --phy udp or --phy eth",
                        o.phy);
    if (!eth && (!o.local || !o.remote))
        return cli_fail(opts, "local,remote", "both ends' addresses are needed: --local "
                        "ADDR:PORT (this end) and --remote ADDR:PORT (the peer)");
    if (eth && (!o.ifname || !o.peer_mac))
        return cli_fail(opts, "interface,peer-mac", "raw Ethernet needs --interface IF (this "
                        "end's interface to the peer) and --peer-mac MAC (the peer's address)");
    if (eth && (o.local || o.remote))
        return cli_fail(opts, "local,remote", "--local and --remote are UDP addresses; over raw "
                        "Ethernet give --interface and --peer-mac only");
    if (eth) {
        o.local = o.ifname;
        o.remote = o.peer_mac;
    }
    if (cli_frame_width(opts, "frame-bits", o.frame_bits))
        return 2;
    if (eth && cli_unused(opts, "gso", "over raw Ethernet (segmentation offload is UDP's)"))
        return 2;
    if (!o.pcap && cli_unused(opts, "pcap-frames", "without --pcap"))
        return 2;
    if (o.tap) {
        /* a TAP frame (MTU + 14 bytes) is one packet on the lane: its
         * transmit queue must hold one whole */
        rifl_udplink_config d;
        rifl_udplink_defaults(&d);
        unsigned pb = rifl_payload_bytes((unsigned)o.frame_bits);
        uint64_t room = (uint64_t)d.lane.tx_queue_frames * pb;
        if (o.mtu + 14 > room)
            return cli_fail(opts, "mtu,frame-bits", "a TAP frame of MTU %llu + 14 bytes does "
                            "not fit the lane's transmit queue of %u frames of %u-bit frames "
                            "(%llu bytes); use an MTU of at most %llu or wider frames",
                            (unsigned long long)o.mtu, d.lane.tx_queue_frames,
                            (unsigned)o.frame_bits, (unsigned long long)room,
                            (unsigned long long)(room - 14));
    }
    if (!o.name)
        o.name = o.tap ? o.tap : "rifl";
    if (!cli_link_name_ok(o.name))
        return cli_fail(opts, o.tap && o.name == o.tap ? "tap" : "name", "'%s' cannot name a "
                        "link: use 1 to 15 letters, digits, '-', '_' or '.'", o.name);
    if (o.tap && (strlen(o.tap) >= IFNAMSIZ || !cli_link_name_ok(o.tap)))
        return cli_fail(opts, "tap", "'%s' cannot name a network device: use 1 to 15 letters, "
                        "digits, '-', '_' or '.'", o.tap);
    char dir[2048];
    if (cli_link_state_dir(o.state_dir, dir, sizeof dir))
        return 2;
    struct up *u = calloc(1, sizeof *u);
    if (!u) {
        fprintf(stderr, "error: out of memory\n");
        return 2;
    }
    u->o = &o;
    u->tap = -1;
    cli_link_state_path(dir, o.name, u->state_path, sizeof u->state_path);
    FILE *old = fopen(u->state_path, "r");
    if (old) {
        char text[4096] = "";
        size_t got = fread(text, 1, sizeof text - 1, old);
        text[got] = 0;
        fclose(old);
        long pid = cli_link_state_pid(text);
        if (cli_link_alive(pid)) {
            fprintf(stderr, "error: a link named '%s' is already up (process %ld); stop it with "
                    "rifl link down --name %s, or choose another --name\n", o.name, pid, o.name);
            free(u);
            return 2;
        }
    }
    rifl_udplink_config c;
    rifl_udplink_defaults(&c);
    c.udp.frame_bits = (unsigned)o.frame_bits;
    c.udp.frames_per_datagram = (unsigned)o.fpd;
    c.udp.gso_datagrams = (unsigned)o.gso;
    if (eth) {
        c.eth_ifname = o.ifname;
        c.eth_peer_mac = o.peer_mac;
    } else {
        c.udp.local = o.local;
        c.udp.remote = o.remote;
    }
    c.udp.fd = -1;
    /* a new epoch at every start, so the peer never takes this start's
     * datagrams for an earlier one's */
    c.udp.epoch = (uint32_t)(rifl_udplink_clock_ns() ^ ((uint64_t)getpid() << 20)) | 1u;
    c.udp.loss = o.loss;
    c.udp.ber = o.ber;
    c.udp.seed = o.seed;
    c.rate_gbps = o.rate;
    c.keepalive_ns = o.keepalive_us * 1000;
    c.probe_timeout_ns = o.connect_s * 1000000000ull;
    char msg[512];
    if (rifl_udplink_create(&c, &u->link, msg, sizeof msg) != RIFL_OK) {
        fprintf(stderr, "error: %s\n", msg);
        free(u);
        return 2;
    }
    int status = 2;
    rifl_capture *cap = NULL;
    if (o.pcap) {
        if (rifl_capture_open(o.pcap, c.udp.frame_bits, c.udp.epoch, &cap, msg, sizeof msg) !=
            RIFL_OK) {
            fprintf(stderr, "error: --pcap: %s\n", msg);
            goto out;
        }
        rifl_udplink_set_capture(u->link, cap, o.pcap_frames);
    }
    if (o.tap && (u->tap = open_tap(o.tap, (unsigned)o.mtu)) < 0)
        goto out;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL); /* (a closed terminal) */
    signal(SIGPIPE, SIG_IGN);
    fprintf(stderr, "rifl link up: %s: %s -> %s, waiting for the peer (up to %" PRIu64 " s)\n",
            o.name, o.local, o.remote, o.connect_s);
    status = run_link(u);
    if (status == 0)
        fprintf(stderr, "rifl link up: %s stopped: %" PRIu64 " packets sent, %" PRIu64
                " received, %" PRIu64 " replays\n", o.name, LANE(u, tx_packets),
                LANE(u, rx_packets), LANE(u, tx_replay_cycles));
out:
    if (cap) {
        const rifl_udplink_stats *ls = rifl_udplink_get_stats(u->link);
        rifl_udplink_set_capture(u->link, NULL, 0);
        if (rifl_capture_close(cap, msg, sizeof msg) != RIFL_OK) {
            fprintf(stderr, "error: --pcap: %s\n", msg);
            status = 2;
        } else {
            fprintf(stderr, "rifl link up: %s: %" PRIu64 " frames captured in %s (%" PRIu64
                    " more not captured)\n", o.name, ls->captured_frames, o.pcap,
                    ls->capture_skipped);
        }
    }
    unlink(u->state_path);
    if (u->tap >= 0)
        close(u->tap);
    rifl_udplink_free(u->link);
    free(u);
    return status;
}

const struct rifl_command rifl_cmd_link_up = {
    "link up", "one end of a RIFL lane over UDP or raw Ethernet to a peer, optionally with a "
    "TAP device, until stopped", run
};

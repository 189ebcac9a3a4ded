/* The RDMA write of rdma_write.c between two processes over a real RIFL
 * lane: the program forks, and each process runs one node: its RDMA engine
 * and its end of a lane over UDP on 127.0.0.1 (rifl/udplink.h).  Node 2
 * (the child) sends node 1 the address of its registered memory; node 1
 * (the parent) writes 1 MB there with a notification; node 2 waits for the
 * notification record and checks every byte.  Node 1 then sends "done":
 * node 2 stays until it comes, so that its last ACKs reach node 1, and node
 * 1 serves its link until node 2 has exited.  Both sockets are bound to
 * ports the kernel picks before the fork, so each end knows the other's
 * port, and the program runs beside any other.
 *
 * This is a direct link, host to host, with no switch.  Each bundle is a
 * whole Layer 2 message that starts with its 4-byte prefix (0x02, packet
 * count, bytes after the prefix); it is cut into 256-byte segments as the
 * Layer 2 endpoint cuts a message into cells, one lane packet each.  The
 * first segment's prefix says how many bytes follow, and a lane delivers
 * packets in order, so the receiver rebuilds the bundle by appending.  With
 * no switch to steer them the segments carry no cell header, and the last
 * one is not padded (the lane keeps each packet's length).  Over switches
 * the NIC sends the bundle as cells (rifl_nic_post_msg in rifl/nic.h): the
 * 6-byte Layer 2 header with the route in front of each segment, the last
 * padded to 256 bytes; the receiving NIC reassembles per source and route,
 * and per-VOQ flow control can hold one destination while others go on
 * (`rifl sim rdma --net` runs the engines so, docs/rdma.md); a direct link
 * has one destination and the lane's own flow control.
 *
 * A link run by two processes stalls whenever the scheduler stops one,
 * for milliseconds on a busy machine.  The engine's timers are sized for
 * hardware, where a block's packets follow each other within microseconds
 * (a block is sent again after 1 ms without its ACK, and a receiver
 * forgets a block none of whose packets came for 16 ms), so here a block
 * is sent again after 20 ms (doubled up to 200 ms) and forgotten after
 * 200 ms.  The link is sized for a round trip of 50 us instead of probing
 * it: loopback takes microseconds, and what probes measure on a busy
 * machine is the scheduler, up to round trips no frame-ID width covers; a
 * longer round trip than the one sized for costs speed, never data
 * (docs/udp.md).  Between two machines, leave rtt_ns at 0 to probe.  With
 * 2048-bit frames (254 bytes each) a segment takes two.
 *
 * Exits 0 when node 1's completion says OK and node 2 found the record and
 * every byte; otherwise it says what went wrong and exits 1, within 5 s.
 * Build: cc rdma_udp.c $(pkg-config --cflags --libs rifl) */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rifl/rdma.h>
#include <rifl/udplink.h>

#define BYTES (1 << 20)
#define SEGMENT 256
#define MAILBOX 2                   /* each node's: the address, and "done" */
#define TIMEOUT_NS 5000000000ull    /* wall time for the whole run */
#define QUEUED_FRAMES 32            /* take bundles while fewer frames wait */

static uint8_t mem[BYTES + 4096];   /* the registered memory: data, then the record */

struct node {
    rifl_rdma *e;
    rifl_udplink *link;
    uint32_t peer;
    uint8_t out[RIFL_RDMA_BUNDLE_CAP]; /* the bundle being cut */
    uint8_t in[RIFL_RDMA_BUNDLE_CAP];  /* the bundle being rebuilt */
    size_t have;
    uint64_t resets, segments;
    char msg[512];
};

/* One turn of a node: run the link, segments in, bundles out, timers.
 * Returns 0, or -1 with n->msg saying why. */
static int turn(struct node *n)
{
    uint64_t now = rifl_udplink_clock_ns(), due = rifl_rdma_next_due(n->e);
    uint64_t wait = due > now ? due - now : 0;
    if (rifl_udplink_service(n->link, wait < 1000000 ? wait : 1000000, n->msg,
                             sizeof n->msg) != RIFL_OK)
        return -1;
    now = rifl_udplink_clock_ns();
    rifl_lane *lane = rifl_udplink_lane(n->link);
    if (lane) { /* NULL while probing the round trip */
        if (rifl_udplink_get_stats(n->link)->resets != n->resets) {
            n->resets = rifl_udplink_get_stats(n->link)->resets;
            n->have = 0; /* a joint reset lost the rest: the engine sends the block again */
            /* a joint reset follows only a restart of the peer's end, which
             * its process makes once: the peer's engine is a new one, whose
             * blocks must not be taken for the old one's, and the reset
             * dropped all the old one sent (no quiet time) */
            rifl_rdma_forget_node(n->e, n->peer, 0, now);
        }
        size_t len;
        int eop;
        while (rifl_lane_read(lane, n->in + n->have, sizeof n->in - n->have, &len, &eop) ==
               RIFL_OK) {
            n->have += len;
            size_t whole = 4 + ((size_t)n->in[2] << 8 | n->in[3]);
            if (eop && n->have >= 4 && n->have >= whole) {
                rifl_rdma_input(n->e, now, n->in, whole, (rifl_rdma_route){ n->peer, 0 });
                n->have = 0;
            }
        }
        /* a bundle at a time while the lane's queue is short: a block's
         * timeout runs from when its last packet leaves the engine (`to` is
         * always the peer, route 0: there is no other) */
        rifl_rdma_route to;
        while (rifl_lane_tx_backlog(lane) < QUEUED_FRAMES &&
               (len = rifl_rdma_output(n->e, now, rifl_lane_tx_backlog(lane) == 0, n->out,
                                       sizeof n->out, &to)))
            for (size_t off = 0; off < len; off += SEGMENT, n->segments++)
                if (rifl_lane_send(lane, n->out + off, len - off < SEGMENT ? len - off : SEGMENT)
                    != RIFL_OK) {
                    snprintf(n->msg, sizeof n->msg, "the lane refused a segment");
                    return -1;
                }
    }
    if (rifl_rdma_next_due(n->e) <= now)
        rifl_rdma_advance(n->e, now);
    return 0;
}

/* A UDP socket bound to a port of 127.0.0.1 the kernel picks. */
static int bound_socket(unsigned *port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

/* Node 1: wait for node 2's address, write, wait for the completion, then
 * tell node 2 and serve the link until it has exited. */
static int writer(struct node *n, const rifl_rdma_mr *mr, pid_t child, uint64_t deadline)
{
    for (int i = 0; i < BYTES; i++)
        mem[i] = (uint8_t)(i * 7 + 3);
    uint8_t buf[256];
    size_t len;
    uint32_t src;
    int posted = 0, completed = 0, st = -1;
    uint64_t segments = 0, resent = 0; /* at the completion */
    rifl_rdma_wc wc = { 0 };
    const char *why = NULL;
    while (!why && waitpid(child, &st, WNOHANG) == 0) {
        if (rifl_udplink_clock_ns() > deadline)
            why = completed ? "node 2 did not finish within 5 s" : "no completion within 5 s";
        else if (turn(n) != 0)
            why = n->msg;
        uint64_t now = rifl_udplink_clock_ns();
        if (!why && !posted &&
            rifl_rdma_poll_mailbox(n->e, 7, MAILBOX, buf, sizeof buf, &len, &src) == 1) {
            uint64_t va = 0; /* node 2's region, 8 bytes big-endian */
            for (size_t i = 0; i < 8 && i < len; i++)
                va = va << 8 | buf[i];
            rifl_rdma_notification note = { rifl_rdma_gva_word(2, va + BYTES), 0xC0FFEE, 42 };
            int rc = rifl_rdma_post_write(n->e, 7, mr->va, 2, va, BYTES, 0, &note, 1, now);
            if (rc != RIFL_OK)
                why = rifl_rdma_strerror(rc);
            posted = 1;
        }
        if (!why && posted && !completed && rifl_rdma_poll_cq(n->e, &wc, 1)) {
            completed = 1;
            segments = n->segments;
            resent = rifl_rdma_get_stats(n->e)->retransmitted_blocks;
            if (wc.status != RIFL_OK)
                why = "the write failed";
            else if (rifl_rdma_post_send(n->e, 7, 2, MAILBOX, "done", 4, 2, now) != RIFL_OK)
                why = "cannot send \"done\"";
        }
    }
    if (why) { /* stop node 2, and reap it */
        kill(child, SIGKILL);
        waitpid(child, &st, 0);
        fprintf(stderr, "node 1: %s\n", why);
    }
    int node2_ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    char how[64] = "not completed";
    if (completed)
        snprintf(how, sizeof how, "%s after %llu us", rifl_rdma_strerror(wc.status),
                 (unsigned long long)((wc.done - wc.posted) / 1000));
    printf("node 1: write of %d bytes %s, in %llu segments, %llu blocks sent again; node 2 %s\n",
           BYTES, how, (unsigned long long)segments, (unsigned long long)resent,
           node2_ok ? "found every byte" : WIFEXITED(st) ? "failed" : "was stopped");
    return completed && wc.status == RIFL_OK && node2_ok ? 0 : 1;
}

/* Node 2: send node 1 the address of the region, then serve the link until
 * node 1 says "done"; check the record and the data once the record is in. */
static int target(struct node *n, const rifl_rdma_mr *mr, uint64_t deadline)
{
    uint8_t buf[256];
    size_t len, bad = 0;
    uint32_t src;
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)(mr->va >> (56 - 8 * i));
    if (rifl_rdma_post_send(n->e, 7, 1, MAILBOX, buf, 8, 1, rifl_udplink_clock_ns()) != RIFL_OK) {
        fprintf(stderr, "node 2: cannot send the address\n");
        return 1;
    }
    rifl_rdma_record r = { 0 };
    while (rifl_rdma_poll_mailbox(n->e, 7, MAILBOX, buf, sizeof buf, &len, &src) != 1) {
        if (rifl_udplink_clock_ns() > deadline) {
            fprintf(stderr, "node 2: no \"done\" from node 1 within 5 s\n");
            return 1;
        }
        if (turn(n) != 0) {
            fprintf(stderr, "node 2: %s\n", n->msg);
            return 1;
        }
        if (!r.written && mem[BYTES + 31] == 1) { /* byte 31 of the record comes last */
            rifl_rdma_record_unpack(mem + BYTES, &r);
            while (bad < BYTES && mem[bad] == (uint8_t)(bad * 7 + 3))
                bad++;
            printf("node 2: notification record (cookie %#llx, immediate %u, %u bytes "
                   "from node %u); data %s", (unsigned long long)r.cookie, r.immediate,
                   r.transfer_length, r.src_node, bad == BYTES ? "all equal\n" : "differs");
            if (bad < BYTES)
                printf(" from byte %zu\n", bad);
            fflush(stdout);
        }
    }
    if (!r.written)
        fprintf(stderr, "node 2: no notification record\n");
    int ok = r.written && r.cookie == 0xC0FFEE && r.immediate == 42 &&
             r.transfer_length == BYTES && bad == BYTES;
    return ok ? 0 : 1;
}

int main(void)
{
    int fd[2];
    unsigned port[2];
    for (int i = 0; i < 2; i++)
        if ((fd[i] = bound_socket(&port[i])) < 0) {
            perror("a UDP socket on 127.0.0.1");
            return 1;
        }
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    int me = child == 0; /* 0: node 1, the parent; 1: node 2, the child */
    close(fd[1 - me]);

    static struct node n;
    n.peer = 2 - (uint32_t)me;
    rifl_rdma_config cfg = rifl_rdma_default_config;
    cfg.node = (uint32_t)me + 1;
    cfg.block_timeout_ns = 20000000; /* timers for a link in software: see the top */
    cfg.block_timeout_max_ns = 200000000;
    cfg.context_idle_ns = 200000000;
    char remote[32];
    snprintf(remote, sizeof remote, "127.0.0.1:%u", port[1 - me]);
    rifl_udplink_config lc;
    rifl_udplink_defaults(&lc); /* 2048-bit frames at 1 Gbit/s */
    lc.udp.fd = fd[me];
    lc.udp.remote = remote;
    lc.rtt_ns = 50000; /* see the top */
    rifl_rdma_mr mr;
    if (rifl_rdma_open(&cfg, &n.e, n.msg, sizeof n.msg) != RIFL_OK ||
        rifl_udplink_create(&lc, &n.link, n.msg, sizeof n.msg) != RIFL_OK ||
        rifl_rdma_add_node(n.e, n.peer, 1) != RIFL_OK || /* one route: the lane */
        rifl_rdma_alloc_pd(n.e, 7) != RIFL_OK ||
        rifl_rdma_reg_mr(n.e, 7, mem, sizeof mem, RIFL_RDMA_LOCAL_WRITE | RIFL_RDMA_REMOTE_WRITE,
                         &mr) != RIFL_OK ||
        rifl_rdma_create_mailbox(n.e, 7, MAILBOX, 4) != RIFL_OK) {
        fprintf(stderr, "node %d: cannot set up: %s\n", me + 1,
                n.msg[0] ? n.msg : "the RDMA engine refused a step");
        if (child > 0) {
            kill(child, SIGKILL);
            waitpid(child, NULL, 0);
        }
        return 1;
    }
    n.msg[0] = '\0';
    uint64_t deadline = rifl_udplink_clock_ns() + TIMEOUT_NS;
    int rc = me ? target(&n, &mr, deadline) : writer(&n, &mr, child, deadline);
    rifl_udplink_free(n.link);
    rifl_rdma_close(n.e);
    return rc;
}

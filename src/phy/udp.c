/* One end of a lane over UDP (rifl/phy.h, "UDP"; docs/udp.md): the socket
 * under the datagram logic of dgram.c, connected to the peer so that the
 * kernel drops datagrams from anyone else. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "dgram.h"

/* The UDP PHY: the datagram core, and what a read with UDP_GRO gave that
 * is not handed out yet (several datagrams the kernel coalesced). */
struct udp {
    struct dgram d;
    bool gro;                     /* the socket has UDP_GRO */
    uint8_t *gbuf;                /* a coalesced read, GRO_BYTES */
    size_t glen, goff, gseg;      /* its length, what is handed out, segment size */
};
#define GRO_BYTES 65536

static bool udp_send(struct dgram *u, const uint8_t *buf, size_t len)
{
    return send(u->fd, buf, len, MSG_DONTWAIT) == (ssize_t)len;
}

/* Several datagrams of `seg` bytes in one call: the kernel cuts them
 * (UDP segmentation offload). */
static bool udp_send_segments(struct dgram *u, const uint8_t *buf, size_t len, size_t seg)
{
    struct iovec v = { (void *)buf, len };
    union {
        char b[CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = ctl.b,
                        .msg_controllen = sizeof ctl.b };
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    uint16_t s16 = (uint16_t)seg;
    memcpy(CMSG_DATA(c), &s16, sizeof s16);
    return sendmsg(u->fd, &m, MSG_DONTWAIT) == (ssize_t)len;
}

/* One read with UDP_GRO into the PHY's buffer: -1 when nothing waits, 0
 * for an empty datagram (malformed, and counted as such by the caller), 1
 * otherwise.  A read without the kernel's segment size is one datagram. */
static int gro_read(struct udp *g)
{
    struct iovec v = { g->gbuf, GRO_BYTES };
    union {
        char b[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = ctl.b,
                        .msg_controllen = sizeof ctl.b };
    ssize_t got = recvmsg(g->d.fd, &m, MSG_DONTWAIT);
    if (got < 0)
        return -1;
    if (got == 0)
        return 0;
    g->glen = (size_t)got;
    g->goff = 0;
    g->gseg = (size_t)got;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
            int seg;
            memcpy(&seg, CMSG_DATA(c), sizeof seg);
            if (seg > 0 && (size_t)seg < g->glen) {
                g->gseg = (size_t)seg;
                g->d.st.gro_reads++;
            }
        }
    return 1;
}

static unsigned udp_recv(struct dgram *u, uint8_t *const *bufs, size_t cap, size_t *lens,
                         unsigned n)
{
    struct udp *g = (struct udp *)u;
    if (!g->gro)
        return dgram_recv_batch(u->fd, bufs, cap, lens, n, NULL, 0, NULL);
    /* the datagrams of coalesced reads, one at a time into bufs (one
     * longer than cap is too long: cap bytes of it, which shows) */
    unsigned k = 0;
    while (k < n) {
        if (g->goff == g->glen) {
            int r = gro_read(g);
            if (r < 0)
                break;
            if (r == 0) {
                lens[k++] = 0; /* an empty datagram: what the batch reader gives */
                continue;
            }
        }
        size_t len = g->glen - g->goff < g->gseg ? g->glen - g->goff : g->gseg;
        size_t take = len < cap ? len : cap;
        memcpy(bufs[k], g->gbuf + g->goff, take);
        lens[k++] = take;
        g->goff += len;
    }
    return k;
}

static const dgram_io udp_io = { .send = udp_send, .send_segments = udp_send_segments,
                                 .recv = udp_recv };

static void udp_destroy(rifl_phy *p)
{
    free(((struct udp *)p)->gbuf);
    dgram_destroy(p);
}

static const rifl_phy_ops udp_ops = {
    .name = "udp", .exchange = dgram_exchange, .next_due = dgram_next_due,
    .destroy = udp_destroy,
};

/* "ADDRESS:PORT" (IPv6 as [ADDRESS]:PORT), numeric, into an address. */
static int parse_addr(const char *text, const char *what, bool any_port, struct addrinfo **res,
                      char *msg, size_t msglen)
{
    char host[256];
    const char *colon = text ? strrchr(text, ':') : NULL;
    size_t hl = colon ? (size_t)(colon - text) : 0;
    if (!text || !colon || hl == 0 || hl >= sizeof host || !colon[1]) {
        rifl_msg(msg, msglen, "%s address '%s' is not ADDRESS:PORT; give it as e.g. "
                 "127.0.0.1:7000 or [::1]:7000", what, text ? text : "(none)");
        return RIFL_ERR_CONFIG;
    }
    if (text[0] == '[' && hl >= 2 && text[hl - 1] == ']') {
        memcpy(host, text + 1, hl - 2);
        host[hl - 2] = 0;
    } else {
        memcpy(host, text, hl);
        host[hl] = 0;
        if (strchr(host, ':')) {
            /* ::1:7000 could be [::1]:7000 or [::1:7000] without a port */
            rifl_msg(msg, msglen, "%s address '%s': an IPv6 address goes in brackets, as "
                     "[::1]:7000", what, text);
            return RIFL_ERR_CONFIG;
        }
    }
    char *end = NULL;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (*end || port > 65535 || colon[1] < '0' || colon[1] > '9' || strlen(colon + 1) > 5) {
        rifl_msg(msg, msglen, "%s address '%s' has no valid port; give a port from %d to 65535",
                 what, text, any_port ? 0 : 1);
        return RIFL_ERR_CONFIG;
    }
    if (port == 0 && !any_port) {
        /* (0 binds any free port, but names no peer's) */
        rifl_msg(msg, msglen, "%s address '%s' has port 0, which no peer listens on; give the "
                 "port the other end binds, 1 to 65535", what, text);
        return RIFL_ERR_CONFIG;
    }
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    int rc = getaddrinfo(host, colon + 1, &hints, res);
    if (rc != 0) {
        rifl_msg(msg, msglen, "%s address '%s': %s; give a numeric address and a port from 0 "
                 "to 65535", what, text, gai_strerror(rc));
        return RIFL_ERR_CONFIG;
    }
    return RIFL_OK;
}

static int open_socket(struct dgram *u, const rifl_phy_udp_config *c, char *msg, size_t msglen)
{
    struct addrinfo *remote = NULL, *local = NULL;
    int rc = parse_addr(c->remote, "remote", false, &remote, msg, msglen);
    if (rc == RIFL_OK && c->fd < 0)
        rc = parse_addr(c->local, "local", true, &local, msg, msglen);
    if (rc == RIFL_OK && c->fd < 0) {
        u->fd = socket(local->ai_family, SOCK_DGRAM, 0);
        if (u->fd < 0 || bind(u->fd, local->ai_addr, local->ai_addrlen) != 0) {
            rifl_msg(msg, msglen, "cannot open a UDP socket on %s: %s", c->local, strerror(errno));
            rc = RIFL_ERR_IO;
        }
    }
    if (rc == RIFL_OK && local && local->ai_family != remote->ai_family) {
        rifl_msg(msg, msglen, "the local address %s is IPv%d and the peer's %s IPv%d: give "
                 "both ends' addresses in one family", c->local,
                 local->ai_family == AF_INET6 ? 6 : 4, c->remote,
                 remote->ai_family == AF_INET6 ? 6 : 4);
        rc = RIFL_ERR_CONFIG;
    }
    if (rc == RIFL_OK && connect(u->fd, remote->ai_addr, remote->ai_addrlen) != 0) {
        rifl_msg(msg, msglen, "cannot reach the peer %s: %s", c->remote, strerror(errno));
        rc = RIFL_ERR_IO;
    }
    if (rc == RIFL_OK)
        dgram_socket_buffers(u);
    if (rc == RIFL_OK && fcntl(u->fd, F_SETFL, fcntl(u->fd, F_GETFL) | O_NONBLOCK) != 0) {
        rifl_msg(msg, msglen, "cannot make the UDP socket non-blocking: %s", strerror(errno));
        rc = RIFL_ERR_IO;
    }
    if (remote)
        freeaddrinfo(remote);
    if (local)
        freeaddrinfo(local);
    return rc;
}

int rifl_phy_udp_create(const rifl_phy_udp_config *cfg, rifl_phy **out, char *msg, size_t msglen)
{
    if (!cfg || !out)
        return rifl_null_arg(msg, msglen, "rifl_phy_udp_create", cfg ? "out" : "cfg");
    *out = NULL;
    struct dgram *u = NULL;
    int rc = dgram_create(cfg, &udp_ops, &udp_io, sizeof(struct udp), &u, msg, msglen);
    if (rc != RIFL_OK && cfg->fd >= 0)
        close(cfg->fd); /* (the PHY's, refused or not) */
    if (rc != RIFL_OK)
        return rc;
    u->fd = cfg->fd; /* the PHY's from now on, closed with it */
    rc = open_socket(u, &u->cfg, msg, msglen);
    if (rc == RIFL_OK && u->hold_max > 1) {
        /* coalesced reads: when the kernel takes UDP_GRO */
        struct udp *g = (struct udp *)u;
        int one = 1;
        if (setsockopt(u->fd, SOL_UDP, UDP_GRO, &one, sizeof one) == 0) {
            g->gbuf = malloc(GRO_BYTES);
            g->gro = g->gbuf != NULL;
            if (!g->gbuf)
                rc = RIFL_ERR_NOMEM;
        } else {
            u->st.gro_off = 1;
        }
    }
    if (rc != RIFL_OK) {
        udp_destroy(&u->phy);
        return rc;
    }
    *out = &u->phy;
    return RIFL_OK;
}

unsigned rifl_phy_udp_local_port(const rifl_phy *p)
{
    if (!p || p->ops != &udp_ops)
        return 0;
    struct sockaddr_storage a;
    socklen_t n = sizeof a;
    if (getsockname(((const struct dgram *)p)->fd, (struct sockaddr *)&a, &n) != 0)
        return 0;
    if (a.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&a)->sin_port);
    if (a.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
    return 0;
}

/* One end of a lane over UDP (rifl/phy.h, "UDP"; docs/udp.md): frames as
 * wire bytes, several slots' frames to a datagram behind a header with the
 * sender's link epoch and the sequence number of the first frame.  The
 * receiving side takes frames in sequence order only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "rifl/frame.h"
#include "rifl/phy.h"
#include "rifl/rng.h"

/* ---- the header ------------------------------------------------------------
 *
 *   0  2  magic "RF"           8  4  epoch (big-endian)
 *   2  1  version (1)         12  8  sequence number of the first frame
 *   3  1  log2 of frame bits          (big-endian)
 *   4  2  frames that follow
 *   6  2  zero
 */
#define UDP_VERSION 1

static void put_be(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static uint64_t get_be(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

int rifl_udp_header_write(const rifl_udp_header *h, uint8_t *out)
{
    if (!h || !out || rifl_frame_width_check(h->frame_bits) != RIFL_OK || h->count == 0 ||
        h->count > RIFL_UDP_MAX_FRAMES)
        return RIFL_ERR_INVALID_ARG;
    out[0] = 'R';
    out[1] = 'F';
    out[2] = UDP_VERSION;
    out[3] = (uint8_t)__builtin_ctz(h->frame_bits);
    put_be(out + 4, h->count, 2);
    put_be(out + 6, 0, 2);
    put_be(out + 8, h->epoch, 4);
    put_be(out + 12, h->seq, 8);
    return RIFL_OK;
}

int rifl_udp_header_read(const uint8_t *d, size_t len, rifl_udp_header *h)
{
    if (!d || !h || len < RIFL_UDP_HEADER_BYTES || d[0] != 'R' || d[1] != 'F' ||
        d[2] != UDP_VERSION || d[3] < 6 || d[3] > 11 || get_be(d + 6, 2) != 0)
        return RIFL_ERR_FRAME;
    unsigned F = 1u << d[3], n = (unsigned)get_be(d + 4, 2);
    if (n == 0 || n > RIFL_UDP_MAX_FRAMES || len != RIFL_UDP_HEADER_BYTES + (size_t)n * (F / 8))
        return RIFL_ERR_FRAME;
    h->frame_bits = F;
    h->count = n;
    h->epoch = (uint32_t)get_be(d + 8, 4);
    h->seq = get_be(d + 12, 8);
    return RIFL_OK;
}

/* ---- the PHY ---------------------------------------------------------------- */

#define RX_BATCH 16 /* datagrams read per receive call */
#define PROBE_RING 64 /* probe answers kept until the driver takes them */

/* A probe datagram: the 20-byte header with no frames, byte 6 saying
 * which kind, the token (the seq field) echoed by the peer, then 8 bytes:
 * a value the sender's driver publishes (its round-trip estimate). */
#define PROBE_BYTES (RIFL_UDP_HEADER_BYTES + 8)
#define PROBE_ASK 1
#define PROBE_ANSWER 2
#define PROBE_SEQ 3   /* the token is the sender's next sequence number */

struct udp {
    rifl_phy phy;
    rifl_phy_udp_config cfg;
    int fd;
    unsigned fb;                  /* F/8 */
    size_t dgram_bytes;           /* largest datagram */
    /* sending */
    uint8_t *out;                 /* the datagram being filled */
    unsigned out_count;
    uint64_t out_first;           /* slot of its first frame */
    uint64_t tx_seq;              /* sequence number of the next frame */
    rifl_rng rng;
    /* receiving */
    uint8_t *in[RX_BATCH];
    uint64_t rx_next;             /* sequence number of the next frame to take */
    uint8_t *q;                   /* queue of frames received, a ring */
    unsigned q_cap, q_head, q_count;
    uint8_t *handed;              /* frames handed out by the last exchange */
    uint8_t erasure[RIFL_FRAME_MAX_BYTES]; /* a frame that fails verification */
    bool erase;                   /* frames went missing: an erasure goes first */
    uint64_t gap;                 /* bits sent until the next bit error (ber) */
    uint64_t answers[PROBE_RING]; /* tokens of probe answers not taken yet */
    uint64_t probe_value;         /* the value our probes and answers carry */
    unsigned ans_head, ans_count;
    rifl_phy_udp_stats st;
};

static struct udp *as_udp(rifl_phy *p) { return (struct udp *)p; }
static const struct udp *as_cudp(const rifl_phy *p) { return (const struct udp *)p; }

static void send_dgram(struct udp *u)
{
    if (!u->out_count)
        return;
    rifl_udp_header h = { u->cfg.frame_bits, u->out_count, u->cfg.epoch,
                          u->tx_seq - u->out_count };
    rifl_udp_header_write(&h, u->out);
    size_t len = RIFL_UDP_HEADER_BYTES + (size_t)u->out_count * u->fb;
    u->out_count = 0;
    if (u->cfg.loss > 0 && rifl_rng_double(&u->rng) < u->cfg.loss) {
        u->st.tx_lost++;
        return;
    }
    unsigned copies = 1;
    if (u->cfg.dup > 0 && rifl_rng_double(&u->rng) < u->cfg.dup) {
        copies = 2;
        u->st.tx_duplicated++;
    }
    for (unsigned c = 0; c < copies; c++) {
        if (send(u->fd, u->out, len, MSG_DONTWAIT) == (ssize_t)len) {
            u->st.dgrams_sent++;
        } else {
            u->st.tx_failed++;
            u->st.tx_last_errno = errno;
        }
    }
}

/* Flip the bits of a frame sent that the bit error rate hits: `gap` counts
 * the bits still clear before the next error. */
static void flip_bits(struct udp *u, uint8_t *frame)
{
    uint64_t bits = 8u * (uint64_t)u->fb, hits = 0;
    while (u->gap < bits) {
        frame[u->gap >> 3] ^= (uint8_t)(0x80u >> (u->gap & 7));
        hits++;
        uint64_t g = rifl_rng_geometric(&u->rng, u->cfg.ber);
        u->gap = g >= UINT64_MAX - bits ? UINT64_MAX : u->gap + 1 + g;
    }
    if (u->gap != UINT64_MAX)
        u->gap -= bits;
    if (hits) {
        u->phy.st.bit_errors += hits;
        u->phy.st.frames_hit++;
    }
}

/* Send a probe datagram of `kind` with `token`. */
static int send_probe(struct udp *u, unsigned kind, uint64_t token)
{
    uint8_t d[PROBE_BYTES];
    memset(d, 0, sizeof d);
    d[0] = 'R';
    d[1] = 'F';
    d[2] = UDP_VERSION;
    d[3] = (uint8_t)__builtin_ctz(u->cfg.frame_bits);
    d[6] = (uint8_t)kind;
    put_be(d + 8, u->cfg.epoch, 4);
    put_be(d + 12, token, 8);
    put_be(d + RIFL_UDP_HEADER_BYTES, u->probe_value, 8);
    if (send(u->fd, d, sizeof d, MSG_DONTWAIT) != (ssize_t)sizeof d) {
        u->st.tx_failed++;
        u->st.tx_last_errno = errno;
        return RIFL_ERR_IO;
    }
    return RIFL_OK;
}

/* A probe datagram (a header with no frames, kind in byte 6, and a value):
 * a question is answered at once with its token, an answer's token is kept
 * for the driver, and the value of either is the peer's latest.  False
 * when the datagram is not a probe. */
static bool take_probe(struct udp *u, const uint8_t *d, size_t len)
{
    if (len != PROBE_BYTES || d[0] != 'R' || d[1] != 'F' || d[2] != UDP_VERSION ||
        d[4] != 0 || d[5] != 0 || d[7] != 0 || d[6] < PROBE_ASK || d[6] > PROBE_SEQ)
        return false;
    uint64_t token = get_be(d + 12, 8);
    if (d[6] == PROBE_SEQ) {
        /* the peer has sent frames up to `token`: those not here went
         * missing, as a gap before a datagram would show */
        uint32_t epoch = (uint32_t)get_be(d + 8, 4);
        u->st.rx_announcements++;
        if (u->st.peer_epoch && epoch == u->st.peer_epoch && token > u->rx_next) {
            u->st.rx_missing += token - u->rx_next;
            u->erase = true;
            u->rx_next = token;
            u->st.rx_next = token;
        }
        return true;
    }
    u->st.peer_probe_value = get_be(d + RIFL_UDP_HEADER_BYTES, 8);
    if (d[6] == PROBE_ASK) {
        u->st.probes_answered++;
        send_probe(u, PROBE_ANSWER, token);
    } else if (u->ans_count == PROBE_RING) {
        u->st.probe_answers_dropped++;
    } else {
        u->st.probe_answers++;
        u->answers[(u->ans_head + u->ans_count++) % PROBE_RING] = token;
    }
    return true;
}

/* A frame onto the receive queue; false when it is full. */
static bool enqueue(struct udp *u, const uint8_t *frame)
{
    if (u->q_count == u->q_cap)
        return false;
    unsigned e = (u->q_head + u->q_count) % u->q_cap;
    memcpy(u->q + (size_t)e * u->fb, frame, u->fb);
    u->q_count++;
    return true;
}

/* Frames of one datagram into the receive queue, in sequence order only.
 * Where frames went missing (a gap in the sequence, or a full queue) the
 * lane must not take the next frame as the one after the last it got: the
 * scrambler is self-synchronising and the CRC covers scrambled bits, so a
 * frame after a missing control frame would verify with its first bits
 * descrambled wrongly.  An erasure (a frame that fails verification) goes
 * in first, which puts the lane into replay as a damaged frame would. */
static void take_dgram(struct udp *u, const uint8_t *d, size_t len)
{
    rifl_udp_header h;
    if (take_probe(u, d, len))
        return;
    if (rifl_udp_header_read(d, len, &h) != RIFL_OK || h.frame_bits != u->cfg.frame_bits) {
        u->st.rx_malformed++;
        return;
    }
    if (!u->st.peer_epoch)
        u->st.peer_epoch = h.epoch;
    if (h.epoch != u->st.peer_epoch) {
        u->st.rx_foreign++;
        return;
    }
    if (h.seq + h.count <= u->rx_next) {
        u->st.rx_late++;
        return;
    }
    unsigned skip = 0;
    if (h.seq < u->rx_next) { /* overlaps what was taken: the rest only */
        skip = (unsigned)(u->rx_next - h.seq);
    } else if (h.seq > u->rx_next) {
        u->st.rx_missing += h.seq - u->rx_next;
        u->erase = true;
    }
    u->st.dgrams_received++;
    for (unsigned k = skip; k < h.count; k++) {
        if (u->erase && enqueue(u, u->erasure)) {
            u->erase = false;
            u->st.rx_erasures++;
        }
        if (u->erase || !enqueue(u, d + RIFL_UDP_HEADER_BYTES + (size_t)k * u->fb)) {
            u->st.rx_overflow++;
            u->erase = true;
        }
    }
    u->rx_next = h.seq + h.count;
    u->st.rx_next = u->rx_next;
}

static void receive(struct udp *u)
{
    for (;;) {
        struct mmsghdr m[RX_BATCH];
        struct iovec v[RX_BATCH];
        memset(m, 0, sizeof m);
        for (unsigned i = 0; i < RX_BATCH; i++) {
            v[i].iov_base = u->in[i];
            v[i].iov_len = u->dgram_bytes + 1; /* one byte more: too long shows */
            m[i].msg_hdr.msg_iov = &v[i];
            m[i].msg_hdr.msg_iovlen = 1;
        }
        int n = recvmmsg(u->fd, m, RX_BATCH, MSG_DONTWAIT, NULL);
        if (n <= 0)
            return;
        for (int i = 0; i < n; i++)
            take_dgram(u, u->in[i], m[i].msg_len);
        if (n < RX_BATCH)
            return;
    }
}

static unsigned udp_exchange(rifl_phy *p, uint64_t now, rifl_phy_form form, rifl_phy_frame *out,
                             unsigned max)
{
    struct udp *u = as_udp(p);
    if (form == RIFL_PHY_WIRE) {
        /* the frame was written into the datagram in place (tx[WIRE]) */
        if (u->cfg.ber > 0)
            flip_bits(u, p->tx[RIFL_PHY_WIRE]);
        if (!u->out_count)
            u->out_first = now;
        u->out_count++;
        u->tx_seq++;
        p->st.frames++;
        p->st.bits += 8u * u->fb;
    }
    if (u->out_count == u->cfg.frames_per_datagram ||
        (u->out_count && now >= u->out_first + u->cfg.flush_slots - 1))
        send_dgram(u);
    p->tx[RIFL_PHY_WIRE] = u->out + RIFL_UDP_HEADER_BYTES + (size_t)u->out_count * u->fb;
    receive(u);
    /* frames handed out stay valid until the next call: copied out of the
     * ring, which the next receive may refill */
    unsigned n = u->q_count < max ? u->q_count : max;
    for (unsigned k = 0; k < n; k++) {
        memcpy(u->handed + (size_t)k * u->fb, u->q + (size_t)u->q_head * u->fb, u->fb);
        u->q_head = u->q_head + 1 == u->q_cap ? 0 : u->q_head + 1;
        out[k].form = RIFL_PHY_WIRE;
        out[k].data = u->handed + (size_t)k * u->fb;
    }
    u->q_count -= n;
    p->st.delivered += n;
    return n;
}

static uint64_t udp_next_due(const rifl_phy *p, uint64_t now)
{
    const struct udp *u = as_cudp(p);
    (void)now;
    return u->out_count ? u->out_first + u->cfg.flush_slots - 1 : UINT64_MAX;
}

static void udp_destroy(rifl_phy *p)
{
    struct udp *u = as_udp(p);
    if (u->fd >= 0)
        close(u->fd);
    free(u->out);
    for (unsigned i = 0; i < RX_BATCH; i++)
        free(u->in[i]);
    free(u->q);
    free(u->handed);
    free(u);
}

static const rifl_phy_ops udp_ops = {
    .name = "udp", .exchange = udp_exchange, .next_due = udp_next_due, .destroy = udp_destroy,
};

/* "ADDRESS:PORT" (IPv6 as [ADDRESS]:PORT), numeric, into an address. */
static int parse_addr(const char *text, const char *what, struct addrinfo **res, char *msg,
                      size_t msglen)
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
    }
    char *end = NULL;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (*end || port > 65535 || colon[1] < '0' || colon[1] > '9') {
        rifl_msg(msg, msglen, "%s address '%s' has no valid port; give a port from 0 to 65535",
                 what, text);
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

static int open_socket(struct udp *u, const rifl_phy_udp_config *c, char *msg, size_t msglen)
{
    struct addrinfo *remote = NULL, *local = NULL;
    int rc = parse_addr(c->remote, "remote", &remote, msg, msglen);
    if (rc == RIFL_OK && c->fd < 0)
        rc = parse_addr(c->local, "local", &local, msg, msglen);
    if (rc == RIFL_OK && c->fd < 0) {
        u->fd = socket(local->ai_family, SOCK_DGRAM, 0);
        if (u->fd < 0 || bind(u->fd, local->ai_addr, local->ai_addrlen) != 0) {
            rifl_msg(msg, msglen, "cannot open a UDP socket on %s: %s", c->local, strerror(errno));
            rc = RIFL_ERR_IO;
        }
    }
    if (rc == RIFL_OK && connect(u->fd, remote->ai_addr, remote->ai_addrlen) != 0) {
        rifl_msg(msg, msglen, "cannot reach the peer %s: %s", c->remote, strerror(errno));
        rc = RIFL_ERR_IO;
    }
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
    rifl_phy_udp_config c = *cfg;
    if (!c.frames_per_datagram)
        c.frames_per_datagram = 16;
    if (!c.flush_slots)
        c.flush_slots = c.frames_per_datagram;
    if (!c.rx_frames)
        c.rx_frames = 4096;
    if (rifl_frame_width_check(c.frame_bits) != RIFL_OK) {
        rifl_msg(msg, msglen, "frame width %u is not supported; use 64, 128, 256, 512, 1024 "
                 "or 2048", c.frame_bits);
        return RIFL_ERR_CONFIG;
    }
    if (c.frames_per_datagram > RIFL_UDP_MAX_FRAMES) {
        rifl_msg(msg, msglen, "%u frames per datagram is too many; use 1 to %u",
                 c.frames_per_datagram, RIFL_UDP_MAX_FRAMES);
        return RIFL_ERR_CONFIG;
    }
    if (c.flush_slots > (1u << 24) || c.rx_frames > (1u << 24)) {
        rifl_msg(msg, msglen, "flush after %u slots or a receive queue of %u frames is too "
                 "large; use at most 16777216", c.flush_slots, c.rx_frames);
        return RIFL_ERR_CONFIG;
    }
    if (c.epoch == 0) {
        rifl_msg(msg, msglen, "link epoch 0 is reserved; give each start of an end a new "
                 "non-zero epoch (e.g. from the clock)");
        return RIFL_ERR_CONFIG;
    }
    if (!(c.loss >= 0 && c.loss <= 1) || !(c.dup >= 0 && c.dup <= 1)) {
        rifl_msg(msg, msglen, "datagram loss %g or duplication %g is out of range; use a "
                 "probability from 0 to 1", c.loss, c.dup);
        return RIFL_ERR_CONFIG;
    }
    if (!(c.ber >= 0 && c.ber <= 0.5)) {
        rifl_msg(msg, msglen, "bit error rate %g is out of range; use 0 to 0.5", c.ber);
        return RIFL_ERR_CONFIG;
    }
    struct udp *u = calloc(1, sizeof *u);
    if (!u) {
        if (c.fd >= 0)
            close(c.fd);
        return RIFL_ERR_NOMEM;
    }
    u->fd = c.fd; /* the PHY's from now on, closed with it */
    u->phy.ops = &udp_ops;
    u->phy.forms = 1u << RIFL_PHY_WIRE;
    u->phy.frame_bytes = c.frame_bits / 8;
    u->cfg = c;
    u->fb = c.frame_bits / 8;
    u->dgram_bytes = RIFL_UDP_HEADER_BYTES + (size_t)RIFL_UDP_MAX_FRAMES * u->fb;
    u->q_cap = c.rx_frames;
    rifl_rng_seed(&u->rng, c.seed);
    u->gap = rifl_rng_geometric(&u->rng, c.ber);
    int rc = RIFL_OK;
    u->out = calloc(1, u->dgram_bytes);
    u->q = calloc(u->q_cap, u->fb);
    u->handed = calloc(u->q_cap, u->fb);
    for (unsigned i = 0; i < RX_BATCH; i++)
        if (!(u->in[i] = malloc(u->dgram_bytes + 1)))
            rc = RIFL_ERR_NOMEM;
    if (!u->out || !u->q || !u->handed)
        rc = RIFL_ERR_NOMEM;
    if (rc == RIFL_OK)
        rc = open_socket(u, &c, msg, msglen);
    if (rc != RIFL_OK) {
        udp_destroy(&u->phy);
        return rc;
    }
    u->phy.tx[RIFL_PHY_WIRE] = u->out + RIFL_UDP_HEADER_BYTES;
    /* the erasure: a data frame whose verification code gives frame ID
     * 0xFFF whatever the receiver's descrambler holds (the CRC covers the
     * scrambled bits), an ID no lane of fewer than 12 ID bits expects */
    uint8_t zero[RIFL_PAYLOAD_MAX_BYTES] = { 0 };
    uint64_t scr = 0;
    rifl_frame_encode(u->erasure, c.frame_bits, RIFL_SYN_DATA, 0, zero, 0xFFF, &scr);
    *out = &u->phy;
    return RIFL_OK;
}

const rifl_phy_udp_stats *rifl_phy_udp_get_stats(const rifl_phy *p)
{
    return p && p->ops == &udp_ops ? &as_cudp(p)->st : NULL;
}

unsigned rifl_phy_udp_local_port(const rifl_phy *p)
{
    if (!p || p->ops != &udp_ops)
        return 0;
    struct sockaddr_storage a;
    socklen_t n = sizeof a;
    if (getsockname(as_cudp(p)->fd, (struct sockaddr *)&a, &n) != 0)
        return 0;
    if (a.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&a)->sin_port);
    if (a.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
    return 0;
}

int rifl_phy_udp_poll(rifl_phy *p)
{
    if (!p || p->ops != &udp_ops)
        return RIFL_ERR_INVALID_ARG;
    receive(as_udp(p));
    return RIFL_OK;
}

int rifl_phy_udp_flush(rifl_phy *p)
{
    if (!p || p->ops != &udp_ops)
        return RIFL_ERR_INVALID_ARG;
    struct udp *u = as_udp(p);
    send_dgram(u);
    p->tx[RIFL_PHY_WIRE] = u->out + RIFL_UDP_HEADER_BYTES;
    return RIFL_OK;
}

int rifl_phy_udp_fd(const rifl_phy *p)
{
    return p && p->ops == &udp_ops ? as_cudp(p)->fd : -1;
}

int rifl_phy_udp_probe(rifl_phy *p, uint64_t token)
{
    if (!p || p->ops != &udp_ops)
        return RIFL_ERR_INVALID_ARG;
    struct udp *u = as_udp(p);
    u->st.probes_sent++;
    return send_probe(u, PROBE_ASK, token);
}

int rifl_phy_udp_set_probe_value(rifl_phy *p, uint64_t value)
{
    if (!p || p->ops != &udp_ops)
        return RIFL_ERR_INVALID_ARG;
    as_udp(p)->probe_value = value;
    return RIFL_OK;
}

int rifl_phy_udp_announce(rifl_phy *p)
{
    if (!p || p->ops != &udp_ops)
        return RIFL_ERR_INVALID_ARG;
    struct udp *u = as_udp(p);
    send_dgram(u);
    p->tx[RIFL_PHY_WIRE] = u->out + RIFL_UDP_HEADER_BYTES;
    u->st.announcements++;
    return send_probe(u, PROBE_SEQ, u->tx_seq);
}

bool rifl_phy_udp_probe_answer(rifl_phy *p, uint64_t *token)
{
    if (!p || p->ops != &udp_ops || !token)
        return false;
    struct udp *u = as_udp(p);
    if (!u->ans_count)
        return false;
    *token = u->answers[u->ans_head];
    u->ans_head = (u->ans_head + 1) % PROBE_RING;
    u->ans_count--;
    return true;
}

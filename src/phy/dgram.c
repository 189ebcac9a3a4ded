/* The datagram logic of the UDP and raw-Ethernet PHYs (rifl/phy.h, "UDP"
 * and "Raw Ethernet"; docs/udp.md): frames as wire bytes, several slots'
 * frames to a datagram behind a header with the sender's link epoch and the
 * sequence number of the first frame.  The receiving side takes frames in
 * sequence order only.  The sockets are in udp.c and eth.c. */
#define _GNU_SOURCE /* recvmmsg */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dgram.h"

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
    uint32_t epoch = (uint32_t)get_be(d + 8, 4);
    uint64_t seq = get_be(d + 12, 8);
    /* (no sender has epoch 0, and no frame's number wraps) */
    if (epoch == 0 || seq > UINT64_MAX - n)
        return RIFL_ERR_FRAME;
    h->frame_bits = F;
    h->count = n;
    h->epoch = epoch;
    h->seq = seq;
    return RIFL_OK;
}

/* ---- the PHY ---------------------------------------------------------------- */

#define PROBE_ASK 1
#define PROBE_ANSWER 2
#define PROBE_SEQ 3   /* the token is the sender's next sequence number */

/* The datagram being filled: frames already in it stay where they are for
 * the lane's next frame (tx[WIRE]). */
static void set_tx(struct dgram *u)
{
    u->phy.tx[RIFL_PHY_WIRE] = u->out + RIFL_UDP_HEADER_BYTES + (size_t)u->out_count * u->fb;
    if (u->encode)
        u->phy.tx[RIFL_PHY_CONTENT] = u->recs + (size_t)u->out_count * u->rec_bytes;
}

/* Flip the bits of a frame sent that the bit error rate hits: `gap` counts
 * the bits still clear before the next error. */
static void flip_bits(struct dgram *u, uint8_t *frame);

/* The frames of the datagram being filled that are still records, encoded
 * in place (in order, so the bit errors fall as they would frame by
 * frame). */
static void encode_records(struct dgram *u)
{
    unsigned n = u->out_count - u->out_wire;
    if (!n)
        return;
    uint8_t *wire = u->out + RIFL_UDP_HEADER_BYTES + (size_t)u->out_wire * u->fb;
    u->encode(u->recs + (size_t)u->out_wire * u->rec_bytes, u->rec_bytes, n, wire,
              u->encode_ctx);
    if (u->cfg.ber > 0)
        for (unsigned k = 0; k < n; k++)
            flip_bits(u, wire + (size_t)k * u->fb);
    u->out_wire = u->out_count;
}

static void count_failed(struct dgram *u, unsigned n)
{
    u->st.tx_failed += n;
    u->st.tx_last_errno = errno;
}

/* Send the datagrams held: each run of one size (its last may be shorter)
 * in one call where the PHY can, else one call each.  The datagram being
 * filled moves to the front of the buffer. */
static void push(struct dgram *u)
{
    unsigned i = 0;
    size_t off = 0;
    while (i < u->held) {
        size_t seg = u->held_len[i], total = seg;
        unsigned j = i + 1;
        while (u->hold_max > 1 && j < u->held && u->held_len[j - 1] == seg &&
               u->held_len[j] <= seg)
            total += u->held_len[j++];
        const uint8_t *b = u->txbuf + off;
        unsigned n = j - i;
        bool done = false;
        if (n > 1 && u->io->send_segments && !u->gso_off) {
            u->st.tx_calls++;
            if (u->io->send_segments(u, b, total, seg)) {
                u->st.dgrams_sent += n;
                u->st.gso_sends++;
                done = true;
            } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
                count_failed(u, n); /* full: lost, as one datagram would be */
                done = true;
            } else {
                /* refused: one call per datagram from now on */
                u->gso_off = true;
                u->st.gso_fallbacks++;
            }
        }
        for (size_t o = 0; !done && o < total; o += seg) {
            size_t len = total - o < seg ? total - o : seg;
            u->st.tx_calls++;
            if (u->io->send(u, b + o, len))
                u->st.dgrams_sent++;
            else
                count_failed(u, 1);
        }
        off += total;
        i = j;
    }
    if (u->held && u->out != u->txbuf) {
        memmove(u->txbuf, u->out, RIFL_UDP_HEADER_BYTES + (size_t)u->out_count * u->fb);
        u->out = u->txbuf;
        set_tx(u);
    }
    u->held = 0;
    u->held_bytes = 0;
}

/* The datagram being filled is complete: its header written, it is held
 * (twice when duplicated, not at all when lost), and the held ones go when
 * the hold is full, or at once after a part-filled one (so that a run of
 * one size ends there). */
static void send_dgram(struct dgram *u)
{
    if (!u->out_count)
        return;
    encode_records(u);
    u->out_wire = 0;
    rifl_udp_header h = { u->cfg.frame_bits, u->out_count, u->cfg.epoch,
                          u->tx_seq - u->out_count };
    rifl_udp_header_write(&h, u->out);
    size_t len = RIFL_UDP_HEADER_BYTES + (size_t)u->out_count * u->fb;
    u->out_count = 0;
    if (u->cfg.loss > 0 && rifl_rng_double(&u->rng) < u->cfg.loss) {
        u->st.tx_lost++;
        return; /* the next datagram is filled in its place */
    }
    unsigned copies = 1;
    if (u->cfg.dup > 0 && rifl_rng_double(&u->rng) < u->cfg.dup) {
        copies = 2;
        u->st.tx_duplicated++;
        memcpy(u->out + len, u->out, len);
    }
    for (unsigned c = 0; c < copies; c++) {
        u->held_len[u->held++] = (uint16_t)len;
        u->held_bytes += len;
    }
    u->out = u->txbuf + u->held_bytes;
    /* (room for two more, a duplicate's copy included, within 64 KB and
     * within hold_max datagrams) */
    if (u->held + (u->cfg.dup > 0) >= u->hold_max || len < u->full_len ||
        u->held_bytes + 2 * u->full_len > DGRAM_GSO_BYTES)
        push(u);
}

static void flip_bits(struct dgram *u, uint8_t *frame)
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
static int send_probe(struct dgram *u, unsigned kind, uint64_t token)
{
    push(u); /* what is held goes first: a probe may announce how far it got */
    uint8_t d[DGRAM_PROBE_BYTES];
    memset(d, 0, sizeof d);
    d[0] = 'R';
    d[1] = 'F';
    d[2] = UDP_VERSION;
    d[3] = (uint8_t)__builtin_ctz(u->cfg.frame_bits);
    d[6] = (uint8_t)kind;
    put_be(d + 8, u->cfg.epoch, 4);
    put_be(d + 12, token, 8);
    put_be(d + RIFL_UDP_HEADER_BYTES, u->probe_value, 8);
    put_be(d + RIFL_UDP_HEADER_BYTES + 8, u->st.peer_epoch, 4);
    put_be(d + RIFL_UDP_HEADER_BYTES + 12, u->prev_epoch, 4);
    if (!u->io->send(u, d, sizeof d)) {
        u->st.tx_failed++;
        u->st.tx_last_errno = errno;
        return RIFL_ERR_IO;
    }
    return RIFL_OK;
}

static bool retired(const struct dgram *u, uint32_t epoch)
{
    unsigned n = u->n_retired < DGRAM_RETIRED ? u->n_retired : DGRAM_RETIRED;
    for (unsigned i = 0; i < n; i++)
        if (u->retired[i] == epoch)
            return true;
    return false;
}

static void retire(struct dgram *u, uint32_t epoch)
{
    if (epoch && !retired(u, epoch))
        u->retired[u->n_retired++ % DGRAM_RETIRED] = epoch;
}

/* Whether a datagram of the peer's `epoch` is taken: the first one fixes
 * the peer's epoch; one of an epoch the peer left (the one a rejoin
 * retired, or the one a probe says the peer had before) is old
 * (rx_stale); one of an epoch it never had shows it restarted
 * (rx_foreign): noted in peer_epoch_new, with the epoch it had before
 * (`prev`, from a probe; 0 from a datagram of frames), for the driver's
 * rifl_phy_udp_rejoin; a frame width (peer_frame_bits) or a probe's value
 * (peer_probe_value) heard before it was the peer's before that restart
 * and is forgotten, as the rejoin would: a peer that stopped on another
 * width or on other sizing settings and restarted with the right ones,
 * both before this end read its socket, is taken as if its new probe had
 * come alone.  Once this end probes, only a probe (`probe`: a
 * question or an answer) fixes the peer's epoch or shows a new one: a peer
 * that starts sends probes before anything else, so frames or an
 * announcement of an epoch not the peer's are old ones (rx_foreign, and
 * nothing more). */
static bool epoch_taken(struct dgram *u, uint32_t epoch, uint32_t prev, bool probe)
{
    if (retired(u, epoch)) {
        u->st.rx_stale++;
        return false;
    }
    if (!probe && u->st.probes_sent && epoch != u->st.peer_epoch) {
        u->st.rx_foreign++;
        return false;
    }
    if (!u->st.peer_epoch)
        u->st.peer_epoch = epoch;
    if (epoch == u->st.peer_epoch) {
        /* what the peer had before is old, whether or not it came here */
        if (prev && prev != epoch)
            retire(u, prev);
        return true;
    }
    u->st.rx_foreign++;
    if (epoch != u->st.peer_epoch_new || prev)
        u->new_prev = prev;
    u->st.peer_epoch_new = epoch;
    u->st.peer_frame_bits = 0;
    u->st.peer_probe_value = 0;
    return false;
}

/* Byte 3 of a header otherwise well formed (log2 of the frame width) of
 * the sender's `epoch` names a legal width other than this end's: dropped
 * and counted.  The width is kept for the driver when the datagram is of
 * the peer's epoch (its new one, once one showed), or of any while none is
 * known.  One of another epoch is counted as other epochs' datagrams are
 * (rx_stale, rx_foreign), and its width is not kept: a late one of a start
 * the peer left (it stopped on that width and restarted with this end's)
 * must not stop the start-up with the peer's start of the right width.  (A
 * new start of another width learns this end's from the answers and stops
 * on it itself.) */
static bool other_width(struct dgram *u, uint8_t lg, uint32_t epoch)
{
    if (lg < 6 || lg > 11 || (1u << lg) == u->cfg.frame_bits)
        return false;
    u->st.rx_other_width++;
    uint32_t peer = u->st.peer_epoch_new ? u->st.peer_epoch_new : u->st.peer_epoch;
    if (retired(u, epoch))
        u->st.rx_stale++;
    else if (peer && epoch != peer)
        u->st.rx_foreign++;
    else
        u->st.peer_frame_bits = 1u << lg;
    return true;
}

/* Whether frames from `seq` on (a datagram's first, or where an
 * announcement says the peer got to) may be taken.  Up to DGRAM_NEAR frames
 * beyond the next one expected, at once.  A start further ahead is a jump:
 * a peer's real datagrams after a long outage, or one stray or forged
 * datagram, which taken alone would make every real datagram after it late
 * and silence the link.  So a jump is held (dropped and counted) and taken
 * only when a second datagram or announcement starts at or after where the
 * held one ended (`end`), and within DGRAM_NEAR frames of it, as the next
 * datagrams after an outage do.  A copy of the held one (a duplicated
 * stray datagram or announcement) or one overlapping it confirms nothing:
 * it is held in its place. */
static bool jump_taken(struct dgram *u, uint64_t seq, uint64_t end)
{
    if (seq <= u->rx_next || seq - u->rx_next <= DGRAM_NEAR)
        return true;
    bool again = seq == u->far_seq && end == u->far_end;
    if (u->far_held && !again && seq >= u->far_end && seq - u->far_end <= DGRAM_NEAR) {
        u->far_held = false;
        u->st.rx_jumps++;
        return true;
    }
    u->far_held = true;
    u->far_seq = seq;
    u->far_end = end;
    u->st.rx_far_held++;
    return false;
}

/* A probe datagram (a header with no frames, kind in byte 6, a value, the
 * epoch the sender knows for this end, and the sender's epoch before):
 * a question is answered at once with its token, an answer's token is kept
 * for the driver, and the value of either is the peer's latest when the
 * probe names this end's epoch.  Probes of another epoch than the peer's
 * are dropped as datagrams of frames are.  False when the datagram is not
 * a probe. */
static bool take_probe(struct dgram *u, const uint8_t *d, size_t len)
{
    if (len != DGRAM_PROBE_BYTES || d[0] != 'R' || d[1] != 'F' || d[2] != UDP_VERSION ||
        d[4] != 0 || d[5] != 0 || d[7] != 0 || d[6] < PROBE_ASK || d[6] > PROBE_SEQ)
        return false;
    uint64_t token = get_be(d + 12, 8);
    uint32_t epoch = (uint32_t)get_be(d + 8, 4);
    if (epoch == 0 || d[3] < 6 || d[3] > 11) {
        u->st.rx_malformed++; /* (no sender has epoch 0, nor such a width) */
        return true;
    }
    if (other_width(u, d[3], epoch)) {
        /* answered all the same, so that the peer learns this end's width */
        if (d[6] == PROBE_ASK) {
            u->st.probes_answered++;
            send_probe(u, PROBE_ANSWER, token);
        }
        return true;
    }
    if (!epoch_taken(u, epoch, (uint32_t)get_be(d + RIFL_UDP_HEADER_BYTES + 12, 4),
                     d[6] != PROBE_SEQ))
        return true;
    if (d[6] == PROBE_SEQ) {
        /* the peer has sent frames up to `token`: those not here went
         * missing, as a gap before a datagram would show */
        if (!jump_taken(u, token, token))
            return true;
        u->st.rx_announcements++;
        if (token > u->rx_next) {
            u->st.rx_missing += token - u->rx_next;
            u->erase = true;
            u->rx_next = token;
            u->st.rx_next = token;
        }
        return true;
    }
    /* (not once a new epoch of the peer's showed: a start it left) */
    if ((uint32_t)get_be(d + RIFL_UDP_HEADER_BYTES + 8, 4) == u->cfg.epoch &&
        !u->st.peer_epoch_new)
        u->st.peer_probe_value = get_be(d + RIFL_UDP_HEADER_BYTES, 8);
    if (d[6] == PROBE_ASK) {
        u->st.probes_answered++;
        send_probe(u, PROBE_ANSWER, token);
    } else if (u->ans_count == DGRAM_PROBE_RING) {
        u->st.probe_answers_dropped++;
    } else {
        u->st.probe_answers++;
        u->answers[(u->ans_head + u->ans_count++) % DGRAM_PROBE_RING] = token;
    }
    return true;
}

/* A frame onto the receive queue; false when it is full. */
static bool enqueue(struct dgram *u, const uint8_t *frame)
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
static void take_dgram(struct dgram *u, const uint8_t *d, size_t len)
{
    rifl_udp_header h;
    if (take_probe(u, d, len))
        return;
    /* (another width only from a datagram well formed in its own width) */
    if (rifl_udp_header_read(d, len, &h) != RIFL_OK) {
        u->st.rx_malformed++;
        return;
    }
    if (other_width(u, d[3], h.epoch))
        return;
    if (!epoch_taken(u, h.epoch, 0, false))
        return;
    if (!jump_taken(u, h.seq, h.seq + h.count))
        return;
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

static void receive(struct dgram *u)
{
    for (;;) {
        size_t lens[DGRAM_RX_BATCH];
        /* one byte more than the largest datagram: one too long shows */
        unsigned n = u->io->recv(u, u->in, u->dgram_bytes + 1, lens, DGRAM_RX_BATCH);
        for (unsigned i = 0; i < n; i++)
            if (lens[i] != DGRAM_SKIP)
                take_dgram(u, u->in[i], lens[i]);
        if (n < DGRAM_RX_BATCH)
            return;
    }
}

/* The slot at which the part-filled datagram must go: flush_slots - 1
 * after its first frame, saturating (a slot near 2^64 would wrap to a
 * deadline long past, and every frame would go in a datagram of its own). */
static uint64_t flush_due(const struct dgram *u)
{
    uint64_t wait = u->cfg.flush_slots - 1;
    return u->out_first > UINT64_MAX - wait ? UINT64_MAX : u->out_first + wait;
}

unsigned dgram_exchange(rifl_phy *p, uint64_t now, rifl_phy_form form, rifl_phy_frame *out,
                        unsigned max)
{
    struct dgram *u = (struct dgram *)p;
    if (form == RIFL_PHY_CONTENT && !u->encode) {
        /* not carried (rifl_phy_tx_buffer gave NULL): counted, not sent */
        p->st.dropped++;
        form = RIFL_PHY_NONE;
    }
    if (form == RIFL_PHY_WIRE) {
        /* the frame was written into the datagram in place (tx[WIRE]);
         * records before it are built first, in order */
        encode_records(u);
        if (u->cfg.ber > 0)
            flip_bits(u, p->tx[RIFL_PHY_WIRE]);
        u->out_wire++;
    }
    /* (a record by content was written beside the datagram, tx[CONTENT]) */
    if (form == RIFL_PHY_WIRE || form == RIFL_PHY_CONTENT) {
        if (!u->out_count)
            u->out_first = now;
        u->out_count++;
        u->tx_seq++;
        p->st.frames++;
        p->st.bits += 8u * u->fb;
    }
    if (u->out_count == u->cfg.frames_per_datagram ||
        (u->out_count && now >= flush_due(u)))
        send_dgram(u);
    set_tx(u);
    if (++u->since_rx >= u->cfg.rx_every_slots) {
        u->since_rx = 0;
        receive(u);
    }
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

uint64_t dgram_next_due(const rifl_phy *p, uint64_t now)
{
    const struct dgram *u = (const struct dgram *)p;
    (void)now;
    return u->out_count ? flush_due(u) : UINT64_MAX;
}

void dgram_destroy(rifl_phy *p)
{
    struct dgram *u = (struct dgram *)p;
    if (u->fd >= 0)
        close(u->fd);
    free(u->txbuf);
    for (unsigned i = 0; i < DGRAM_RX_BATCH; i++)
        free(u->in[i]);
    free(u->q);
    free(u->handed);
    free(u->recs);
    free(u);
}

struct dgram *dgram_of(rifl_phy *p)
{
    return p && p->ops->exchange == dgram_exchange ? (struct dgram *)p : NULL;
}

const struct dgram *dgram_cof(const rifl_phy *p)
{
    return p && p->ops->exchange == dgram_exchange ? (const struct dgram *)p : NULL;
}

void dgram_socket_buffers(struct dgram *u)
{
    /* the default (some 200 KB) holds about 25 datagrams of 16 frames of
     * 2048 bits, as the kernel counts them: an end descheduled for a
     * millisecond at 10 Gbit/s overflows it, and every datagram dropped
     * costs a replay cycle */
    int want = (int)DGRAM_SOCKET_BUFFER, got = 0;
    socklen_t n = sizeof got;
    (void)setsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof want);
    (void)setsockopt(u->fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
    if (getsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &got, &n) == 0 && got > 0)
        u->st.rx_buffer_bytes = (uint64_t)got;
}

size_t dgram_claimed_bytes(const uint8_t *d, size_t len)
{
    if (!d || len < 8 || d[0] != 'R' || d[1] != 'F' || d[3] < 6 || d[3] > 11)
        return 0;
    unsigned n = (unsigned)get_be(d + 4, 2);
    return n ? RIFL_UDP_HEADER_BYTES + (size_t)n * ((1u << d[3]) / 8) : DGRAM_PROBE_BYTES;
}

int dgram_check(rifl_phy_udp_config *cfg, char *msg, size_t msglen)
{
    rifl_phy_udp_config c = *cfg;
    if (!c.frames_per_datagram)
        c.frames_per_datagram = 16;
    if (!c.flush_slots)
        c.flush_slots = c.frames_per_datagram;
    if (!c.rx_frames)
        c.rx_frames = 4096;
    if (!c.rx_every_slots)
        c.rx_every_slots = 1;
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
    if (c.gso_datagrams > DGRAM_GSO_MAX) {
        rifl_msg(msg, msglen, "%u datagrams per send is too many; use 0 to %u (0 or 1: one "
                 "system call per datagram)", c.gso_datagrams, DGRAM_GSO_MAX);
        return RIFL_ERR_CONFIG;
    }
    if (c.rx_every_slots > 64) {
        rifl_msg(msg, msglen, "reading the socket every %u slots is too seldom; use 1 to 64",
                 c.rx_every_slots);
        return RIFL_ERR_CONFIG;
    }
    if (c.flush_slots > (1u << 24) || c.rx_frames > (1u << 24)) {
        rifl_msg(msg, msglen, "flush after %u slots or a receive queue of %u frames is too "
                 "large; use at most 16777216", c.flush_slots, c.rx_frames);
        return RIFL_ERR_CONFIG;
    }
    /* the queue and the frames handed out of it, F/8 bytes each */
    uint64_t qbytes = 2 * (uint64_t)c.rx_frames * (c.frame_bits / 8);
    if (qbytes > RIFL_PHY_MAX_BYTES) {
        rifl_msg(msg, msglen, "a receive queue of %u frames of %u bits takes %llu MiB, more "
                 "than the %llu MiB a PHY may take; lower rx_frames or frame_bits",
                 c.rx_frames, c.frame_bits, (unsigned long long)(qbytes >> 20),
                 (unsigned long long)(RIFL_PHY_MAX_BYTES >> 20));
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
    *cfg = c;
    return RIFL_OK;
}

int dgram_create(const rifl_phy_udp_config *cfg, const rifl_phy_ops *ops, const dgram_io *io,
                 size_t size, struct dgram **out, char *msg, size_t msglen)
{
    *out = NULL;
    rifl_phy_udp_config c = *cfg;
    int rc = dgram_check(&c, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    struct dgram *u = calloc(1, size < sizeof *u ? sizeof *u : size);
    if (!u)
        return RIFL_ERR_NOMEM;
    u->fd = -1;
    u->io = io;
    u->phy.ops = ops;
    u->phy.forms = 1u << RIFL_PHY_WIRE;
    u->phy.frame_bytes = c.frame_bits / 8;
    u->cfg = c;
    u->st.epoch = c.epoch;
    u->fb = c.frame_bits / 8;
    u->dgram_bytes = RIFL_UDP_HEADER_BYTES + (size_t)RIFL_UDP_MAX_FRAMES * u->fb;
    u->q_cap = c.rx_frames;
    rifl_rng_seed(&u->rng, c.seed);
    u->gap = rifl_rng_geometric(&u->rng, c.ber);
    /* held datagrams (at most 64 KB, two more for a duplicate and the one
     * being filled) */
    u->full_len = RIFL_UDP_HEADER_BYTES + (size_t)c.frames_per_datagram * u->fb;
    u->hold_max = c.gso_datagrams > 1 ? c.gso_datagrams : 1;
    if (u->hold_max > 1 && DGRAM_GSO_BYTES / u->full_len < u->hold_max)
        u->hold_max = (unsigned)(DGRAM_GSO_BYTES / u->full_len);
    if (u->hold_max < 1)
        u->hold_max = 1;
    u->txbuf = calloc(1, u->hold_max > 1 ? DGRAM_GSO_BYTES + 2 * u->dgram_bytes
                                         : 3 * u->dgram_bytes);
    u->out = u->txbuf;
    u->q = calloc(u->q_cap, u->fb);
    u->handed = calloc(u->q_cap, u->fb);
    for (unsigned i = 0; i < DGRAM_RX_BATCH; i++)
        if (!(u->in[i] = malloc(u->dgram_bytes + 1)))
            rc = RIFL_ERR_NOMEM;
    if (!u->txbuf || !u->q || !u->handed)
        rc = RIFL_ERR_NOMEM;
    if (rc != RIFL_OK) {
        dgram_destroy(&u->phy);
        return rc;
    }
    u->phy.tx[RIFL_PHY_WIRE] = u->out + RIFL_UDP_HEADER_BYTES;
    /* the erasure: a data frame whose verification code gives frame ID
     * 0xFFF whatever the receiver's descrambler holds (the CRC covers the
     * scrambled bits), an ID no lane of fewer than 12 ID bits expects */
    uint8_t zero[RIFL_PAYLOAD_MAX_BYTES] = { 0 };
    uint64_t scr = 0;
    rifl_frame_encode(u->erasure, c.frame_bits, RIFL_SYN_DATA, 0, zero, 0xFFF, &scr);
    *out = u;
    return RIFL_OK;
}

/* ---- the calls of both PHYs (rifl_phy_udp_*) ------------------------------ */

const rifl_phy_udp_stats *rifl_phy_udp_get_stats(const rifl_phy *p)
{
    return dgram_cof(p) ? &dgram_cof(p)->st : NULL;
}


int rifl_phy_udp_poll(rifl_phy *p)
{
    struct dgram *u = dgram_of(p);
    if (!u)
        return RIFL_ERR_INVALID_ARG;
    receive(u);
    return RIFL_OK;
}

int rifl_phy_udp_flush(rifl_phy *p)
{
    struct dgram *u = dgram_of(p);
    if (!u)
        return RIFL_ERR_INVALID_ARG;
    send_dgram(u);
    push(u);
    set_tx(u);
    return RIFL_OK;
}

int rifl_phy_udp_set_encoder(rifl_phy *p, size_t content_bytes, rifl_phy_encode_batch_fn encode,
                             void *ctx)
{
    struct dgram *u = dgram_of(p);
    if (!u || !encode || content_bytes < 1 || content_bytes > 4096)
        return RIFL_ERR_INVALID_ARG;
    /* the datagram being filled goes first, so that every record left is
     * of the new size and encoder */
    send_dgram(u);
    push(u);
    uint8_t *recs = calloc(RIFL_UDP_MAX_FRAMES, content_bytes);
    if (!recs)
        return RIFL_ERR_NOMEM;
    free(u->recs);
    u->recs = recs;
    u->rec_bytes = content_bytes;
    u->encode = encode;
    u->encode_ctx = ctx;
    u->phy.forms |= 1u << RIFL_PHY_CONTENT;
    set_tx(u);
    return RIFL_OK;
}

int rifl_phy_udp_push(rifl_phy *p)
{
    struct dgram *u = dgram_of(p);
    if (!u)
        return RIFL_ERR_INVALID_ARG;
    push(u);
    return RIFL_OK;
}

int rifl_phy_udp_fd(const rifl_phy *p)
{
    return dgram_cof(p) ? dgram_cof(p)->fd : -1;
}

int rifl_phy_udp_probe(rifl_phy *p, uint64_t token)
{
    struct dgram *u = dgram_of(p);
    if (!u)
        return RIFL_ERR_INVALID_ARG;
    u->st.probes_sent++;
    return send_probe(u, PROBE_ASK, token);
}

int rifl_phy_udp_set_probe_value(rifl_phy *p, uint64_t value)
{
    struct dgram *u = dgram_of(p);
    if (!u)
        return RIFL_ERR_INVALID_ARG;
    u->probe_value = value;
    return RIFL_OK;
}

int rifl_phy_udp_announce(rifl_phy *p)
{
    struct dgram *u = dgram_of(p);
    if (!u)
        return RIFL_ERR_INVALID_ARG;
    send_dgram(u);
    push(u);
    set_tx(u);
    u->st.announcements++;
    return send_probe(u, PROBE_SEQ, u->tx_seq);
}

bool rifl_phy_udp_probe_answer(rifl_phy *p, uint64_t *token)
{
    struct dgram *u = dgram_of(p);
    if (!u || !token || !u->ans_count)
        return false;
    *token = u->answers[u->ans_head];
    u->ans_head = (u->ans_head + 1) % DGRAM_PROBE_RING;
    u->ans_count--;
    return true;
}

int rifl_phy_udp_rejoin(rifl_phy *p, uint32_t epoch)
{
    struct dgram *u = dgram_of(p);
    if (!u)
        return RIFL_ERR_INVALID_ARG;
    if (u->st.peer_epoch_new) {
        retire(u, u->st.peer_epoch);
        if (u->new_prev != u->st.peer_epoch_new)
            retire(u, u->new_prev);
        u->st.peer_epoch = u->st.peer_epoch_new;
    }
    u->st.peer_epoch_new = 0;
    u->new_prev = 0;
    /* a width heard before was the peer's before it restarted */
    u->st.peer_frame_bits = 0;
    if (epoch && epoch != u->cfg.epoch) {
        u->prev_epoch = u->cfg.epoch;
        u->cfg.epoch = epoch;
        u->st.epoch = epoch;
    }
    /* sequence numbers from 0 both ways; nothing of before goes on */
    u->out_count = 0;
    u->out_wire = 0;
    u->held = 0;
    u->held_bytes = 0;
    u->out = u->txbuf;
    u->tx_seq = 0;
    set_tx(u);
    u->rx_next = 0;
    u->st.rx_next = 0;
    u->q_head = u->q_count = 0;
    u->erase = false;
    u->far_held = false;
    u->ans_head = u->ans_count = 0;
    u->probe_value = 0;
    u->st.peer_probe_value = 0;
    u->st.rejoins++;
    return RIFL_OK;
}

unsigned dgram_recv_batch(int fd, uint8_t *const *bufs, size_t cap, size_t *lens, unsigned n,
                          void *names, unsigned name_size, unsigned *name_lens)
{
    struct mmsghdr m[DGRAM_RX_BATCH];
    struct iovec v[DGRAM_RX_BATCH];
    if (n > DGRAM_RX_BATCH)
        n = DGRAM_RX_BATCH;
    memset(m, 0, sizeof m);
    for (unsigned i = 0; i < n; i++) {
        v[i].iov_base = bufs[i];
        v[i].iov_len = cap;
        m[i].msg_hdr.msg_iov = &v[i];
        m[i].msg_hdr.msg_iovlen = 1;
        if (names) {
            m[i].msg_hdr.msg_name = (char *)names + (size_t)i * name_size;
            m[i].msg_hdr.msg_namelen = name_size;
        }
    }
    int got = recvmmsg(fd, m, n, MSG_DONTWAIT, NULL);
    if (got <= 0)
        return 0;
    for (int i = 0; i < got; i++) {
        lens[i] = m[i].msg_len;
        if (name_lens)
            name_lens[i] = m[i].msg_hdr.msg_namelen;
    }
    return (unsigned)got;
}

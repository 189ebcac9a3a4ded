/* Channel bonding (rifl/bond.h, rifl-multilane §4): narrow words across
 * groups of lanes, segments across the lanes of a group.
 *
 * The send side keeps whole packets in a byte ring (a 4-byte length, then
 * the bytes) and the position in the packet at its head.  The receive side
 * assembles one narrow word at a time from the heads of its group's lanes
 * and hands its bytes out. */
#include <stdlib.h>
#include <string.h>

#include "rifl/bond.h"

#define DEFAULT_QUEUE (64u * 1024u)

struct rifl_bond {
    unsigned L, S, G, pb, word_bytes;
    rifl_lane *lane[RIFL_BOND_MAX_LANES];
    /* send side */
    uint8_t *q;                /* packet ring */
    size_t qcap, qhead, qused; /* bytes */
    size_t off;                /* bytes of the head packet placed */
    size_t hlen;               /* the head packet's length (qused > 0) */
    size_t qpackets;           /* packets in the ring */
    uint64_t tx_word;          /* narrow words placed since reset */
    /* receive side */
    uint64_t rx_word;          /* narrow words taken since reset */
    uint8_t *word;             /* the word being read */
    size_t wlen, woff;
    bool wend;                 /* it ends a packet */
    /* alignment of each lane's receiver */
    bool aligned[RIFL_BOND_MAX_LANES], up[RIFL_BOND_MAX_LANES];
    uint32_t aligned_once;     /* bit per lane */
    uint32_t reported;         /* bit per lane: its aligner has reported */
    bool held;
    bool tags;                 /* lane tags: a lane counts as up only with its tags right */
    bool eff[RIFL_BOND_MAX_LANES]; /* what the group's AND last saw of each lane */
    rifl_bond_stats st;
};

static bool pow2(unsigned x) { return x && (x & (x - 1)) == 0; }

void rifl_bond_free(rifl_bond *b)
{
    if (!b)
        return;
    for (unsigned i = 0; i < b->L; i++)
        rifl_lane_free(b->lane[i]);
    free(b->q);
    free(b->word);
    free(b);
}

int rifl_bond_create(const rifl_bond_config *cfg, rifl_bond **out, char *msg, size_t msglen)
{
    if (!cfg || !out)
        return rifl_null_arg(msg, msglen, "rifl_bond_create", cfg ? "out" : "cfg");
    *out = NULL;
    unsigned L = cfg->lanes, S = cfg->group_lanes ? cfg->group_lanes : cfg->lanes;
    if (!pow2(L) || L > RIFL_BOND_MAX_LANES) {
        rifl_msg(msg, msglen, "bonded link of %u lanes: use 1, 2, 4, 8 or 16 lanes", L);
        return RIFL_ERR_CONFIG;
    }
    if (!pow2(S) || S > L) {
        rifl_msg(msg, msglen, "groups of %u lanes on a link of %u: use a power of two up to %u "
                 "(%u: spatial only, 1: temporal only)", S, L, L, L);
        return RIFL_ERR_CONFIG;
    }
    size_t qcap = cfg->tx_queue_bytes ? cfg->tx_queue_bytes : DEFAULT_QUEUE;
    if (qcap < 16 || qcap > ((size_t)1 << 30)) {
        rifl_msg(msg, msglen, "bond transmit queue of %zu bytes: use 16 bytes to 1 GiB (0: "
                 "64 KiB)", qcap);
        return RIFL_ERR_CONFIG;
    }
    if (cfg->lane.lane_tags && !cfg->lane_tags) {
        rifl_msg(msg, msglen, "lane tags set in the lanes' configuration and not in the bond's: "
                 "set the bond's lane_tags (it numbers the lanes 0 to %u) and leave the lanes'", L - 1);
        return RIFL_ERR_CONFIG;
    }
    int rc = rifl_lane_config_check(&cfg->lane, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    rifl_bond *b = calloc(1, sizeof *b);
    if (!b)
        return RIFL_ERR_NOMEM;
    b->L = L;
    b->S = S;
    b->G = L / S;
    b->pb = rifl_payload_bytes(cfg->lane.frame_bits);
    b->word_bytes = S * b->pb;
    b->qcap = qcap;
    b->q = malloc(qcap);
    b->word = malloc(b->word_bytes);
    rc = b->q && b->word ? RIFL_OK : RIFL_ERR_NOMEM;
    b->tags = cfg->lane_tags;
    for (unsigned i = 0; i < L && rc == RIFL_OK; i++) {
        rifl_lane_config lc = cfg->lane;
        if (cfg->lane_tags) {
            lc.lane_tags = true;
            lc.lane_index = i;
            lc.lane_count = L;
        }
        rc = rifl_lane_create(&lc, &b->lane[i], msg, msglen);
        if (rc == RIFL_OK) {
            /* what the bond knows of each lane starts as the lane starts,
             * so that the first report of its aligner reaches it */
            rifl_lane_flags f = rifl_lane_get_flags(b->lane[i]);
            b->aligned[i] = f.rx_aligned;
            b->up[i] = f.rx_up;
            b->eff[i] = f.group_up;
        }
    }
    if (rc != RIFL_OK) {
        rifl_bond_free(b);
        return rc;
    }
    *out = b;
    return RIFL_OK;
}

unsigned rifl_bond_lanes(const rifl_bond *b) { return b ? b->L : 0; }
unsigned rifl_bond_group_lanes(const rifl_bond *b) { return b ? b->S : 0; }
rifl_lane *rifl_bond_lane(rifl_bond *b, unsigned i) { return b && i < b->L ? b->lane[i] : NULL; }
size_t rifl_bond_max_packet(const rifl_bond *b) { return b ? b->qcap - 4 : 0; }
const rifl_bond_stats *rifl_bond_get_stats(const rifl_bond *b) { return b ? &b->st : NULL; }

/* ---- the packet ring ----------------------------------------------------- */

static void ring_put(rifl_bond *b, size_t at, const uint8_t *p, size_t n)
{
    size_t i = at % b->qcap, first = b->qcap - i < n ? b->qcap - i : n;
    memcpy(b->q + i, p, first);
    memcpy(b->q, p + first, n - first);
}

static void ring_get(const rifl_bond *b, size_t at, uint8_t *p, size_t n)
{
    size_t i = at % b->qcap, first = b->qcap - i < n ? b->qcap - i : n;
    memcpy(p, b->q + i, first);
    memcpy(p + first, b->q, n - first);
}

/* A packet at the tail of the ring (it fits). */
static void queue_packet(rifl_bond *b, const void *pkt, size_t len)
{
    uint8_t h[4] = { (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
                     (uint8_t)len };
    ring_put(b, b->qhead + b->qused, h, 4);
    ring_put(b, b->qhead + b->qused + 4, pkt, len);
    if (!b->qused)
        b->hlen = len;
    b->qused += len + 4;
    b->qpackets++;
}

int rifl_bond_send(rifl_bond *b, const void *pkt, size_t len)
{
    if (!b || !pkt || len == 0)
        return RIFL_ERR_INVALID_ARG;
    if (len > b->qcap - 4)
        return RIFL_ERR_TOO_BIG;
    if (len + 4 > b->qcap - b->qused) {
        b->st.tx_rejected++;
        return RIFL_ERR_AGAIN;
    }
    queue_packet(b, pkt, len);
    b->st.tx_packets++;
    b->st.tx_bytes += len;
    return RIFL_OK;
}

int rifl_bond_count_refused(rifl_bond *b, uint64_t n)
{
    if (!b)
        return RIFL_ERR_INVALID_ARG;
    /* (a count that would pass 2^64 - 1 stays there) */
    b->st.tx_rejected = b->st.tx_rejected > UINT64_MAX - n ? UINT64_MAX : b->st.tx_rejected + n;
    return RIFL_OK;
}

size_t rifl_bond_send_space(const rifl_bond *b)
{
    size_t free_bytes = b ? b->qcap - b->qused : 0;
    return free_bytes > RIFL_BOND_PACKET_OVERHEAD ? free_bytes - RIFL_BOND_PACKET_OVERHEAD : 0;
}

size_t rifl_bond_tx_backlog(const rifl_bond *b)
{
    if (!b || !b->qused)
        return 0;
    /* every packet's bytes and its 4-byte length, less the length of each
     * and the head packet's bytes already placed */
    return b->qused - RIFL_BOND_PACKET_OVERHEAD * b->qpackets - b->off;
}

/* ---- send side ----------------------------------------------------------- */

/* Lane `i` sends the frame given to it in this very slot. */
static bool lane_free(const rifl_bond *b, unsigned i)
{
    return rifl_lane_tx_ready(b->lane[i]) && rifl_lane_tx_backlog(b->lane[i]) == 0;
}

__attribute__((flatten)) unsigned rifl_bond_place(rifl_bond *b)
{
    if (!b)
        return 0;
    uint32_t used = 0; /* groups given a word in this slot */
    unsigned placed = 0;
    uint8_t seg[RIFL_PAYLOAD_MAX_BYTES];
    while (b->qused) {
        unsigned g = (unsigned)(b->tx_word & (b->G - 1)); /* (G: a power of two) */
        if (used & (1u << g))
            break;
        unsigned top = g * b->S + b->S - 1; /* segment 0's lane */
        /* (segment 0's lane first: while a lane recovers, most slots end
         * here) */
        bool ready = lane_free(b, top);
        size_t len = b->hlen;
        size_t wlen = len - b->off < b->word_bytes ? len - b->off : b->word_bytes;
        unsigned m = (unsigned)((wlen + b->pb - 1) / b->pb); /* segments */
        for (unsigned k = 1; k < m && ready; k++)
            ready = lane_free(b, top - k);
        if (!ready) {
            b->st.tx_waits++;
            break;
        }
        bool last = b->off + wlen == len;
        for (unsigned k = 0; k < m; k++) {
            size_t at = (size_t)k * b->pb, n = wlen - at < b->pb ? wlen - at : b->pb;
            ring_get(b, b->qhead + 4 + b->off + at, seg, n);
            rifl_lane_send_frame(b->lane[top - k], seg, n, last && k == m - 1);
        }
        b->off += wlen;
        b->tx_word++;
        b->st.tx_words++;
        used |= 1u << g;
        placed++;
        if (last) {
            b->qhead = (b->qhead + 4 + len) % b->qcap;
            b->qused -= 4 + len;
            b->qpackets--;
            b->off = 0;
            if (b->qused) {
                uint8_t h[4];
                ring_get(b, b->qhead, h, 4);
                b->hlen = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
            }
        }
    }
    return placed;
}

/* ---- receive side -------------------------------------------------------- */

/* The next narrow word from the group whose turn it is, when each lane
 * that carries part of it has its frame at the head of its buffer. */
static bool take_word(rifl_bond *b)
{
    unsigned g = (unsigned)(b->rx_word & (b->G - 1));
    unsigned top = g * b->S + b->S - 1;
    unsigned m = 0;
    bool end = false;
    for (unsigned k = 0; k < b->S && !end; k++) {
        const uint8_t *d;
        size_t n;
        if (rifl_lane_peek_frame(b->lane[top - k], &d, &n, &end) != RIFL_OK)
            return false;
        m++;
    }
    size_t w = 0;
    for (unsigned k = 0; k < m; k++) {
        const uint8_t *d;
        size_t n;
        bool e;
        rifl_lane_peek_frame(b->lane[top - k], &d, &n, &e);
        if (n < b->pb && !e)
            b->st.rx_bad_words++;
        memcpy(b->word + w, d, n);
        w += n;
        rifl_lane_pop_frame(b->lane[top - k]);
    }
    b->wlen = w;
    b->woff = 0;
    b->wend = end;
    b->rx_word++;
    b->st.rx_words++;
    return true;
}

int rifl_bond_read(rifl_bond *b, void *buf, size_t cap, size_t *len, int *eop)
{
    if (!b || !buf || cap == 0 || !len)
        return RIFL_ERR_INVALID_ARG;
    size_t n = 0;
    int end = 0;
    while (n < cap) {
        if (b->woff == b->wlen && !take_word(b))
            break;
        size_t k = cap - n < b->wlen - b->woff ? cap - n : b->wlen - b->woff;
        memcpy((uint8_t *)buf + n, b->word + b->woff, k);
        n += k;
        b->woff += k;
        if (b->woff == b->wlen && b->wend) {
            b->wend = false;
            end = 1;
            b->st.rx_packets++;
            break;
        }
    }
    b->st.rx_bytes += n;
    if (len)
        *len = n;
    if (eop)
        *eop = end;
    return n || end ? RIFL_OK : RIFL_ERR_AGAIN;
}

/* ---- accelerator --------------------------------------------------------- */

bool rifl_bond_steady(const rifl_bond *b)
{
    return b && b->woff == b->wlen && !b->wend;
}

int rifl_bond_advance(rifl_bond *b, const rifl_bond_stretch *s)
{
    if (!rifl_bond_steady(b) || !s || (s->queued && !s->packet))
        return RIFL_ERR_STATE;
    b->tx_word += s->tx_words;
    b->rx_word += s->rx_words;
    b->st.tx_words += s->tx_words;
    b->st.tx_packets += s->tx_packets;
    b->st.tx_bytes += s->tx_bytes;
    b->st.tx_rejected += s->tx_rejected;
    b->st.rx_words += s->rx_words;
    b->st.rx_packets += s->rx_packets;
    b->st.rx_bytes += s->rx_bytes;
    b->qhead = b->qused = b->qpackets = b->off = 0;
    for (size_t k = 0; k < s->queued; k++) {
        const uint8_t *p;
        size_t len;
        if (s->packet(s->ctx, k, &p, &len) != 0 || !p || !len || len + 4 > b->qcap - b->qused ||
            (k == 0 && s->head_off >= len)) {
            b->qused = b->qpackets = 0;
            return RIFL_ERR_STATE;
        }
        queue_packet(b, p, len);
    }
    b->off = s->queued ? s->head_off : 0;
    return RIFL_OK;
}

/* ---- what the lanes share ------------------------------------------------ */

int rifl_bond_hold(rifl_bond *b)
{
    if (!b)
        return RIFL_ERR_INVALID_ARG;
    /* all lanes or none: a lane that has begun sending refuses, and the
     * lanes held before it go back as they were */
    bool was[RIFL_BOND_MAX_LANES];
    for (unsigned i = 0; i < b->L; i++) {
        was[i] = rifl_lane_get_flags(b->lane[i]).tx_hold;
        int rc = rifl_lane_hold_tx(b->lane[i], true);
        if (rc != RIFL_OK) {
            while (i-- > 0)
                rifl_lane_hold_tx(b->lane[i], was[i]);
            return rc;
        }
    }
    for (unsigned i = 0; i < b->L; i++) {
        rifl_lane_set_rx_aligned(b->lane[i], false);
        rifl_lane_set_rx_up(b->lane[i], false);
        rifl_lane_set_group_up(b->lane[i], false);
        b->aligned[i] = b->up[i] = b->eff[i] = false;
    }
    /* every lane aligns again before the hold ends */
    b->aligned_once = 0;
    b->held = true;
    return RIFL_OK;
}

void rifl_bond_rx_state(rifl_bond *b, unsigned i, bool aligned, bool up)
{
    if (!b || i >= b->L)
        return;
    /* a lane follows its aligner from the first report on, even one that
     * says what the lane already holds (a lane aligns itself until told) */
    const bool first = !(b->reported & 1u << i);
    b->reported |= 1u << i;
    if (first || aligned != b->aligned[i]) {
        rifl_lane_set_rx_aligned(b->lane[i], aligned);
        b->aligned[i] = aligned;
        if (aligned)
            b->aligned_once |= 1u << i;
    }
    if (b->held && b->aligned_once == (1u << b->L) - 1) {
        for (unsigned j = 0; j < b->L; j++)
            rifl_lane_hold_tx(b->lane[j], false);
        b->held = false;
    }
    if (first || up != b->up[i]) {
        rifl_lane_set_rx_up(b->lane[i], up);
        b->up[i] = up;
    }
    /* the send sides see the group up while every lane of it is up (and,
     * with lane tags, receives the peer lane it should) */
    bool eff = up && (!b->tags || rifl_lane_get_flags(b->lane[i]).tag_ok);
    if (first || eff != b->eff[i]) {
        b->eff[i] = eff;
        unsigned base = i / b->S * b->S;
        bool all = true;
        for (unsigned j = base; j < base + b->S; j++)
            all = all && b->eff[j];
        for (unsigned j = base; j < base + b->S; j++)
            rifl_lane_set_group_up(b->lane[j], all);
    }
}

#define C(f, m) RIFL_COUNTER(rifl_bond_stats, f, m)
static const rifl_counter bond_counters[] = {
    C(tx_packets, "packets accepted"),
    C(tx_bytes, "bytes accepted"),
    C(tx_rejected, "rifl_bond_send calls refused: queue full"),
    C(tx_words, "narrow words placed on the lanes"),
    C(tx_waits, "slots the group whose turn it was could not take its word"),
    C(rx_words, "narrow words taken from the lanes"),
    C(rx_packets, "packets read"),
    C(rx_bytes, "bytes read"),
    C(rx_bad_words, "words with a short segment that did not end a packet"),
};
RIFL_COUNTER_TABLE(rifl_bond_counters, bond_counters, rifl_bond_stats)

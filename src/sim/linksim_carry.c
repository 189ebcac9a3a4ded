/* Recoveries carried as counts by the link simulator's fast path.
 *
 * At a low bit error rate nearly every frame hit is alone: the link is
 * steady when the hit frame is sent, and steady again some hundreds of
 * slots later, with no other hit in between.  What the lanes do in those
 * slots does not depend on the data: the receiver rejects the damaged
 * frame (a frame that keeps its data SYN and verifies as an ID above
 * 2^K - 1 is rejected whatever the receiver expects, and the codec is
 * linear, so that depends on the error bits alone), sends RETRANSMIT, the
 * sender replays, both wait out their error waits, and new frames flow
 * again.  So the simulator learns that course once per direction, stepping
 * slot by slot: which slots send a new frame each way, in which slot each
 * frame is taken by the receiver, and every lane counter beyond those of
 * the new frames.  Afterwards the fast path plans such hits into its
 * stretches ("windows") and goes through them like steady slots: the users
 * see the sends and arrivals of the course learned, the lanes are landed
 * once with the counters added (rifl_lane_stretch.extra), and the cables
 * draw the hits' errors without building frames.  Runs take exactly the
 * course of stepping, which tests/test_linksim.c checks counter by
 * counter. */
#include <stdlib.h>
#include <string.h>

#include "rifl/frame.h"
#include "rifl/phy.h"

#include "linksim_priv.h"
#include "pair_priv.h"

/* Upcoming hits looked at per cable when planning a stretch. */
enum { PEEK = 16 };

int rifl_linksim_carry_init(struct sim *s)
{
    s->carry_possible = s->fast_possible && s->cfg->carry && !s->cfg->rx_stall && !s->cfg->encode_all &&
                        !s->cfg->observe;
    if (!s->carry_possible)
        return RIFL_OK;
    /* a recovery: RETRANSMIT for a round trip, replays of 2^K frames with
     * keys between, error waits of 2^K slots, the round trips between */
    s->rec_max = 8ull * s->nfid + 16ull * s->D + 1024;
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < 2; i++) {
            struct recovery *r = &s->rec[h];
            r->tx[i] = malloc(s->rec_max);
            r->run[i] = malloc(s->rec_max * sizeof *r->run[i]);
            r->nth[i] = malloc(s->rec_max * sizeof *r->nth[i]);
            r->arr[i] = malloc((s->rec_max + s->D) * sizeof *r->arr[i]);
            if (!r->tx[i] || !r->run[i] || !r->nth[i] || !r->arr[i])
                return RIFL_ERR_NOMEM;
        }
    return RIFL_OK;
}

void rifl_linksim_carry_free(struct sim *s)
{
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < 2; i++) {
            free(s->rec[h].tx[i]);
            free(s->rec[h].run[i]);
            free(s->rec[h].nth[i]);
            free(s->rec[h].arr[i]);
        }
}

/* Hit h is one a learned recovery stands for: the hit frame keeps its data
 * SYN and verifies as an ID of 2^K or more, and when its damage spills
 * through the descrambler into the next frame, so does that one, with
 * nothing left after it.  A frame of zeros from scrambler state 0 stands
 * for any frame (the outcome depends on the error bits alone). */
static bool hit_carried(const struct sim *s, const rifl_phy_hit *h)
{
    unsigned F = s->cfg->lane.frame_bits;
    uint8_t wire[2][RIFL_FRAME_MAX_BYTES], zero[RIFL_PAYLOAD_MAX_BYTES] = { 0 };
    uint8_t out[RIFL_PAYLOAD_MAX_BYTES];
    uint64_t scr = 0, clean[2];
    for (int k = 0; k < 2; k++) {
        if (rifl_frame_encode(wire[k], F, RIFL_SYN_DATA, RIFL_META_FULL, zero, (unsigned)k,
                              &scr) != RIFL_OK)
            return false;
        clean[k] = scr;
    }
    if (!pair_hit_flip(h, wire[0], F))
        return false;
    uint64_t descr = 0;
    for (int k = 0; k < 2; k++) {
        /* the hit frame (ID 0 here) must come out with another ID: the
         * receiver expects its own; a frame damaged by a spill arrives
         * when the receiver expects who knows what, so its ID must be one
         * no frame has */
        rifl_frame_info fi;
        if (rifl_frame_decode(wire[k], F, &descr, out, &fi) != RIFL_OK ||
            fi.syn != RIFL_SYN_DATA || (k ? fi.id < s->nfid : fi.id == 0))
            return false;
        if ((descr & RIFL_SCRAMBLER_MASK) == (clean[k] & RIFL_SCRAMBLER_MASK))
            return true;
    }
    return false;
}

/* Frames cable i's error process is behind the slots stepped (by
 * reference, its skips come later). */
static uint64_t phy_lag(const struct sim *s, int i)
{
    return s->pair->by_ref ? s->pair->ref_pend[i] : 0;
}

/* The cable's next hits, in slots from now. */
static unsigned peek(const struct sim *s, int i, rifl_phy_hit *h, unsigned max)
{
    unsigned n = rifl_phy_channel_peek(s->d[i].ch, h, max);
    uint64_t lag = phy_lag(s, i);
    for (unsigned k = 0; k < n; k++) {
        if (h[k].frame < lag)
            return 0;
        h[k].frame -= lag;
    }
    return n;
}

/* Neither user can finish, nor the run stop offering, before slot `end`
 * (from slot t): no end of the run can fall inside a window. */
static bool users_clear(const struct sim *s, uint64_t t, uint64_t end)
{
    const rifl_linksim_config *c = s->cfg;
    if (s->stopped || (c->offer_slots && end + 1 >= c->offer_slots) ||
        (c->max_slots && end >= c->max_slots))
        return false;
    for (int i = 0; i < 2; i++) {
        const struct dir *d = &s->d[i];
        if (d->done)
            return false;
        /* the queue takes at most its room and a frame a slot, and a
         * packet may be pending */
        uint64_t most = d->offered_bytes + (end - t + 2 + s->txcap) * s->pb + s->maxlen;
        if (c->bytes && most >= c->bytes)
            return false;
    }
    return true;
}

uint64_t rifl_linksim_plan(struct sim *s, uint64_t t, uint64_t first, uint64_t cap)
{
    s->nwin = 0;
    uint64_t m = first < cap ? first : cap;
    if (!s->carry_possible || (!s->rec[0].ok && !s->rec[1].ok) || first >= cap ||
        s->plan_hit == t + first + 1)
        return m;
    rifl_phy_hit h[2][PEEK];
    unsigned n[2], k[2] = { 0, 0 };
    for (int i = 0; i < 2; i++)
        n[i] = peek(s, i, h[i], PEEK);
    for (;;) {
        int c = -1;
        uint64_t a = UINT64_MAX;
        for (int i = 0; i < 2; i++)
            if (k[i] < n[i] && h[i][k[i]].frame < a) {
                a = h[i][k[i]].frame;
                c = i;
            }
        if (c < 0)
            return cap; /* (the last hit peeked is never carried: no more) */
        if (a >= cap)
            return cap;
        if (s->nwin == 0 && a != first)
            return m; /* (the cables and the pair disagree: step) */
        const struct recovery *r = &s->rec[c];
        /* the next hit after this one, either cable (unknown: this one) */
        uint64_t next = k[c] + 1 < n[c] ? h[c][k[c] + 1].frame : n[c] == PEEK ? a : UINT64_MAX;
        uint64_t other = k[1 - c] < n[1 - c] ? h[1 - c][k[1 - c]].frame
                         : n[1 - c] == PEEK ? a : UINT64_MAX;
        next = next < other ? next : other;
        bool ok = r->ok && s->nwin < RIFL_LINKSIM_WINDOWS && a + r->L <= next &&
                  a + r->L <= cap && hit_carried(s, &h[c][k[c]]) &&
                  users_clear(s, t, t + a + r->L);
        if (!ok) {
            if (s->nwin == 0)
                s->plan_hit = t + a + 1;
            return a;
        }
        s->win[s->nwin++] = (struct window){ t + a, c };
        k[c]++;
    }
}

bool rifl_linksim_learn_wanted(struct sim *s, uint64_t t, uint64_t first, bool arm)
{
    if (!s->carry_possible || s->learn.state != LEARN_IDLE ||
        s->learn.fails >= RIFL_LINKSIM_LEARN_TRIES || (s->rec[0].ok && s->rec[1].ok))
        return false;
    /* the hit at `first`, and no other on either cable for as long as a
     * recovery may take (where hits come closer, none is learned: the
     * stepping would be in vain) */
    if (s->learn.declined == t + first + 1)
        return false;
    rifl_phy_hit h[2][2];
    unsigned n[2];
    int c = -1;
    for (int i = 0; i < 2; i++) {
        n[i] = peek(s, i, h[i], 2);
        if (n[i] && h[i][0].frame == first) {
            if (c >= 0)
                return false; /* both cables hit in one slot */
            c = i;
        }
    }
    uint64_t clear = first + s->rec_max;
    if (c < 0 || s->rec[c].ok || !hit_carried(s, &h[c][0]) ||
        !users_clear(s, t, t + clear) || (n[c] == 2 && h[c][1].frame <= clear) ||
        (n[1 - c] && h[1 - c][0].frame <= clear)) {
        s->learn.declined = t + first + 1; /* (the users only come nearer their end) */
        return false;
    }
    if (!arm)
        return true;
    s->learn.state = LEARN_ARMED;
    s->learn.h = c;
    s->learn.at = t + first;
    return true;
}

static uint64_t accepted(const struct dir *d)
{
    const rifl_lane_stats *st = rifl_lane_get_stats(d->rx);
    return st->rx_delivered[RIFL_KIND_DATA] + st->rx_delivered[RIFL_KIND_FILLER];
}

static void learn_fail(struct sim *s)
{
    s->learn.state = LEARN_IDLE;
    s->learn.fails++;
}

static bool learn_finish(struct sim *s, uint64_t L);

void rifl_linksim_learn_begin(struct sim *s, uint64_t t)
{
    if (s->learn.state == LEARN_RECORDING) {
        /* steady again (the users have read the last slot's frames): the
         * recovery ends before slot t */
        if (t > s->learn.at + s->D + 1 &&
            rifl_lane_steady(s->pair->lane[0], s->pair->lane[1], s->D) &&
            s->d[0].streak >= s->D && s->d[1].streak >= s->D) {
            s->learn.state = LEARN_IDLE;
            if (!learn_finish(s, t - s->learn.at))
                s->learn.fails++;
        }
        return;
    }
    if (s->learn.state != LEARN_ARMED || t < s->learn.at)
        return;
    if (t > s->learn.at || !rifl_lane_steady(s->pair->lane[0], s->pair->lane[1], s->D) ||
        s->d[0].streak < s->D || s->d[1].streak < s->D) {
        learn_fail(s);
        return;
    }
    for (int i = 0; i < 2; i++) {
        s->learn.st0[i] = *rifl_lane_get_stats(s->pair->lane[i]);
        s->learn.hits0[i] = rifl_phy_get_stats(s->d[i].ch)->frames_hit;
        s->learn.acc0[i] = accepted(&s->d[i]);
        s->rec[s->learn.h].sent[i] = 0;
        s->d[i].learn_acc = 0;
    }
    s->learn.state = LEARN_RECORDING;
}

/* Lane counters as 64-bit entries. */
enum { NSTAT = sizeof(rifl_lane_stats) / sizeof(uint64_t) };
static void stats_words(const rifl_lane_stats *st, uint64_t w[NSTAT])
{
    memcpy(w, st, sizeof *st);
}

/* The course recorded up to slot L - 1: the tables, the counts, the
 * extras. */
static bool learn_finish(struct sim *s, uint64_t L)
{
    struct recovery *r = &s->rec[s->learn.h];
    for (int i = 0; i < 2; i++) {
        uint64_t hits = rifl_phy_get_stats(s->d[i].ch)->frames_hit - s->learn.hits0[i];
        if (hits != (i == s->learn.h) || accepted(&s->d[i]) - s->learn.acc0[i] != r->sent[i])
            return false;
    }
    r->L = L;
    for (int i = 0; i < 2; i++) {
        uint32_t n = 0;
        for (uint64_t u = 0; u < L; u++) {
            r->nth[i][u] = n;
            n += r->tx[i][u];
        }
        for (uint64_t u = L; u-- > 0;)
            r->run[i][u] = u + 1 < L && r->tx[i][u + 1] == r->tx[i][u] ? r->run[i][u + 1] + 1 : 1;
        r->streak[i] = s->d[i].streak;
    }
    /* each lane's counters beyond what its new frames add */
    rifl_lane_stats delta[2];
    rifl_lane_stretch dir[2];
    for (int i = 0; i < 2; i++) {
        uint64_t a[NSTAT], b[NSTAT];
        stats_words(rifl_lane_get_stats(s->pair->lane[i]), a);
        stats_words(&s->learn.st0[i], b);
        for (unsigned k = 0; k < NSTAT; k++)
            a[k] -= b[k];
        memcpy(&delta[i], a, sizeof a);
    }
    for (int i = 0; i < 2; i++) {
        const rifl_lane_stats *tx = &delta[i], *rx = &delta[1 - i];
        dir[i] = (rifl_lane_stretch){
            .slots = L, .data_sent = tx->tx_frames[RIFL_KIND_DATA],
            .fill_sent = tx->tx_frames[RIFL_KIND_FILLER], .tx_packets = tx->tx_packets,
            .tx_bytes = tx->tx_bytes, .tx_rejected = tx->tx_rejected,
            .data_recv = rx->rx_delivered[RIFL_KIND_DATA],
            .fill_recv = rx->rx_delivered[RIFL_KIND_FILLER], .rx_packets = rx->rx_packets,
            .rx_bytes = rx->rx_bytes,
        };
    }
    for (int i = 0; i < 2; i++) {
        rifl_lane_stats add;
        rifl_lane_stretch_stats(&dir[i], &dir[1 - i], &add);
        uint64_t a[NSTAT], b[NSTAT];
        stats_words(&delta[i], a);
        stats_words(&add, b);
        for (unsigned k = 0; k < NSTAT; k++)
            a[k] -= b[k];
        memcpy(&r->extra[i], a, sizeof a);
    }
    r->ok = true;
    s->plan_hit = 0;
    return true;
}

void rifl_linksim_learn_slot(struct sim *s, uint64_t t)
{
    if (s->learn.state != LEARN_RECORDING || t < s->learn.at)
        return;
    struct recovery *r = &s->rec[s->learn.h];
    uint64_t u = t - s->learn.at;
    if (u >= s->rec_max || s->stopped || s->d[0].done || s->d[1].done) {
        learn_fail(s);
        return;
    }
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        r->tx[i][u] = d->fresh;
        r->sent[i] += d->fresh;
        /* (with D = 0 a frame is taken in the slot it is sent) */
        uint64_t got = accepted(d) - s->learn.acc0[i];
        if (got > r->sent[i] + s->D) {
            learn_fail(s);
            return;
        }
        while (d->learn_acc < got)
            r->arr[i][d->learn_acc++] = (uint32_t)u;
    }
}

uint64_t rifl_linksim_arrival(const struct sim *s, int i, uint64_t ts, unsigned *cur)
{
    while (*cur < s->nwin && s->win[*cur].at + s->rec[s->win[*cur].h].L <= ts + s->D)
        (*cur)++;
    if (*cur < s->nwin) {
        const struct window *w = &s->win[*cur];
        const struct recovery *r = &s->rec[w->h];
        if (ts + s->D >= w->at) {
            uint64_t k = ts < w->at ? ts + s->D - w->at : s->D + r->nth[i][ts - w->at];
            if (k < r->sent[i])
                return w->at + r->arr[i][k];
        }
    }
    return ts + s->D;
}

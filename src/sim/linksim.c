/* The link simulator's run: two lanes over two cables (rifl_pair), the users
 * on both ends (linksim_users.c) and the fast path (linksim_fast.c).
 *
 * Slot t has a users' side (the sending users hand packets to their lanes,
 * the receiving users read and check) and a wire side (rifl_pair_step: both
 * lanes send, both cables carry, both lanes receive).  By default the wire
 * side comes first and the users act once before slot 0; with users_first
 * each slot starts with the users.  Between slots the run checks its ends:
 * the slot where packets and errors stop, everything delivered, the slot
 * limit. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linksim_priv.h"
#include "pair_priv.h"

uint64_t rifl_linksim_seed(uint64_t seed, unsigned what)
{
    uint64_t x = seed ^ (0x6a09e667f3bcc909ULL * (what + 1));
    return rifl_splitmix64(&x);
}

void rifl_linksim_defaults(rifl_linksim_config *c)
{
    memset(c, 0, sizeof *c);
    c->lane = rifl_lane_default_config;
    c->seed = 1;
    c->bytes = 10000000;
    c->load = 1.0;
    c->min_len = 1;
    c->max_len = 8192;
    c->rx_ready = 1.0;
    c->fast = true;
    c->carry = true;
}

static int refuse(char *msg, size_t n, const char *text)
{
    if (msg && n)
        snprintf(msg, n, "%s", text);
    return RIFL_ERR_CONFIG;
}

unsigned rifl_linksim_offset_frames(const rifl_linksim_config *c)
{
    if (!c || !c->serial || c->lane.frame_bits == 0)
        return 0;
    const uint64_t F = c->lane.frame_bits;
    unsigned L = c->lanes > 1 ? (c->lanes > RIFL_BOND_MAX_LANES ? RIFL_BOND_MAX_LANES : c->lanes)
                              : 1;
    uint64_t need = 0, skew = 0;
    for (int e = 0; e < 2; e++) {
        uint64_t most = 0;
        for (unsigned i = 0; i < L; i++) {
            uint64_t k = c->lanes > 1 ? c->lane_skew_bits[i] : 0;
            uint64_t off = c->lanes > 1 ? c->lane_bit_offset[e][i] : c->bit_offset[e];
            most = k + off > most ? k + off : most;
            skew = k > skew ? k : skew;
        }
        need += most / F;
    }
    /* (the skew, twice its largest in whole frames, is the caller's) */
    uint64_t had = 2 * ((skew + F - 1) / F);
    uint64_t extra = need > had ? need - had : 0;
    return extra > UINT_MAX ? UINT_MAX : (unsigned)extra;
}

/* The lanes' round trip (pipeline_frames, `skew` frames of it for the
 * skew) leaves out what the bit offsets add: refused with a message. */
static bool offset_short(const rifl_linksim_config *c, unsigned skew, char *msg, size_t n)
{
    unsigned extra = rifl_linksim_offset_frames(c);
    if (!extra || c->lane.allow_unsafe_fid || c->lane.pipeline_frames - skew >= extra)
        return false;
    char buf[400];
    snprintf(buf, sizeof buf, "the lanes' round trip must include the bit offsets: they make "
             "the lines %u whole frames longer, so the pipeline needs at least %u frames "
             "(--pipeline; the command line adds them when it sizes the link), so that replay "
             "buffer and replay tail cover them", extra, skew + extra);
    refuse(msg, n, buf);
    return true;
}

int rifl_linksim_check(const rifl_linksim_config *c, char *msg, size_t n)
{
    char buf[512], buf2[512];
    if (!c)
        return rifl_null_arg(msg, n, "rifl_linksim_check", "the configuration");
    for (int i = 0; i < 2; i++) {
        if (!(c->slip_rate[i] >= 0.0 && c->slip_rate[i] <= 1.0)) {
            snprintf(buf, sizeof buf, "slip rate %g (%s) is out of range; use bit slips per "
                     "received frame from 0 to 1", c->slip_rate[i], i ? "B -> A" : "A -> B");
            return refuse(msg, n, buf);
        }
        if (c->bit_offset[i] > (1u << 24)) {
            snprintf(buf, sizeof buf, "bit offset %u (%s) is too large; use at most 16777216",
                     c->bit_offset[i], i ? "B -> A" : "A -> B");
            return refuse(msg, n, buf);
        }
        unsigned L = c->lanes > 1 && c->lanes <= RIFL_BOND_MAX_LANES ? c->lanes : 0;
        bool lane_offsets = false;
        for (unsigned k = 0; k < L; k++) {
            if (c->lane_bit_offset[i][k] > (1u << 24)) {
                snprintf(buf, sizeof buf, "bit offset %u of lane %u (%s) is too large; use at "
                         "most 16777216", c->lane_bit_offset[i][k], k, i ? "B -> A" : "A -> B");
                return refuse(msg, n, buf);
            }
            lane_offsets |= c->lane_bit_offset[i][k] != 0;
        }
        if (!c->serial && (c->slip_rate[i] > 0 || c->bit_offset[i] || lane_offsets)) {
            snprintf(buf, sizeof buf, "bit offsets and slips need serial lanes; turn them "
                     "on (serial, --serial)");
            return refuse(msg, n, buf);
        }
    }
    if (c->serial) {
        int rc = rifl_lane_serial_check(&c->lane, msg, n);
        if (rc != RIFL_OK)
            return rc;
    }
    /* the pairs of lanes the run makes (sim_init; a bonded link carried in
     * pairs, bondsim.c, one per lane, skew included): their delay and
     * memory, refused here as rifl_pair_create would refuse them */
    rifl_pair_config pc = { .lane = c->lane, .delay_frames = c->delay_frames,
                            .encode_all = c->encode_all, .serial = c->serial,
                            .bit_offset = { c->bit_offset[0], c->bit_offset[1] } };
    int prc = pair_check(&pc, msg, n);
    if (prc != RIFL_OK)
        return prc;
    unsigned F0 = c->lane.frame_bits;
    if (c->lanes > 1 && c->lanes <= RIFL_BOND_MAX_LANES && c->fast && !c->serial &&
        c->ppm == 0 && !c->swapped && !c->dead && rifl_frame_width_check(F0) == RIFL_OK) {
        unsigned D = pair_delay(&pc);
        for (unsigned i = 0; i < c->lanes; i++) {
            pc.delay_frames = D + c->lane_skew_bits[i] / F0;
            if ((prc = pair_check(&pc, msg, n)) != RIFL_OK)
                return prc;
        }
    }
    double tol = c->ppm_tolerance > 0 ? c->ppm_tolerance : 200.0;
    if (!(fabs(c->ppm) <= tol) || !(c->ppm_tolerance >= 0 && c->ppm_tolerance <= 10000)) {
        snprintf(buf, sizeof buf, "a clock offset of %g ppm is beyond the tolerance of %g ppm "
                 "(each end within +-%g ppm); raise the tolerance (ppm_tolerance, "
                 "--ppm-tolerance, at most 10000) if the link is built for it",
                 c->ppm, tol, tol / 2);
        return refuse(msg, n, buf);
    }
    if ((c->lanes > 1 || c->ppm != 0) &&
        (c->load < 1.0 || c->offer != RIFL_LINKSIM_WHOLE || c->users_first || c->offer_slots ||
         c->settle_slots || c->read_budget || c->observe))
        return refuse(msg, n, "bonded links and clock offsets run whole packets at saturation "
                              "(load 1), without observers, read hooks or phases");
    if ((c->lanes > 1 || c->ppm != 0) && c->delay_frames == 0 &&
        rifl_link_delay_frames(&c->lane.link, c->lane.frame_bits) == 0)
        return refuse(msg, n, "bonded links and clock offsets need lines of at least one frame "
                              "time: lengthen the cable or the transceiver delay");
    if (c->lane_tags && !c->serial)
        return refuse(msg, n, "lane tags need serial lanes (--serial): tags are checked "
                              "where the aligner runs");
    if (c->dead || c->swapped) {
        unsigned L = c->lanes > 1 ? c->lanes : 1;
        if (L < 2 && c->swapped)
            return refuse(msg, n, "swapping lanes needs a bonded link: set lanes (--lanes) to "
                                  "2 or more");
        if (c->dead && c->dead_lane >= L) {
            snprintf(buf, sizeof buf, "lane %u cannot die on a link of %u lane%s: name a lane "
                     "from 0 to %u", c->dead_lane, L, L > 1 ? "s" : "", L - 1);
            return refuse(msg, n, buf);
        }
        if (c->dead && (!c->serial || !(c->max_slots || c->dead_at == UINT64_MAX))) {
            snprintf(buf, sizeof buf, "a dead lane (lane %u of %u) needs serial lanes "
                     "(--serial), whose aligners lose it, and a bound on the run (--frames): "
                     "its group stays paused for good", c->dead_lane, L);
            return refuse(msg, n, buf);
        }
        if (c->swapped && !c->max_slots)
            return refuse(msg, n, "crossed lanes scramble the bonded stream, or with lane tags "
                                  "keep it from carrying user data at all: give a bound on the "
                                  "run (--frames)");
        if (c->swapped && (c->swap_lanes[0] >= L || c->swap_lanes[1] >= L ||
                           c->swap_lanes[0] == c->swap_lanes[1])) {
            snprintf(buf, sizeof buf, "lanes %u and %u cannot be swapped on a link of %u lanes: "
                     "name two different lanes, 0 to %u", c->swap_lanes[0], c->swap_lanes[1],
                     L, L - 1);
            return refuse(msg, n, buf);
        }
    }
    if (c->lanes > 1) {
        if (c->lanes > RIFL_BOND_MAX_LANES || (c->lanes & (c->lanes - 1)))
            return refuse(msg, n, "a bonded link has 2, 4, 8 or 16 lanes");
        unsigned S = c->group_lanes ? c->group_lanes : c->lanes;
        if (S > c->lanes || (S & (S - 1))) {
            snprintf(buf, sizeof buf, "groups of %u lanes on a link of %u: use a power of two "
                     "up to %u (%u: spatial, 1: temporal)", S, c->lanes, c->lanes, c->lanes);
            return refuse(msg, n, buf);
        }
        for (unsigned i = c->lanes; i < RIFL_BOND_MAX_LANES; i++)
            if (c->lane_skew_bits[i]) {
                snprintf(buf, sizeof buf, "a skew is given for lane %u, which a link of %u "
                         "lanes does not have: give one value per lane (--skew-bits)", i,
                         c->lanes);
                return refuse(msg, n, buf);
            }
        unsigned F = c->lane.frame_bits, most = 0;
        unsigned rxbuf = c->lane.rx_buffer_frames ? c->lane.rx_buffer_frames
                                                : 2u << c->lane.fid_bits;
        for (unsigned g = 0; g < c->lanes; g += S) {
            /* what the lanes of a group differ by, in the direction where
             * they differ most: the skew and, serial, each line's bit
             * offset */
            uint64_t spread = 0;
            for (int e = 0; e < 2; e++) {
                uint64_t lo = UINT64_MAX, hi = 0;
                for (unsigned i = g; i < g + S; i++) {
                    unsigned k = c->lane_skew_bits[i];
                    if (k % F && !c->serial) {
                        snprintf(buf2, sizeof buf2, "a skew of %u bits on lane %u is not a "
                                 "whole number of %u-bit frames: lanes that receive aligned "
                                 "frames are skewed by whole frames; use serial lanes "
                                 "(--serial) for bits", k, i, F);
                        return refuse(msg, n, buf2);
                    }
                    uint64_t d = (uint64_t)k + c->lane_bit_offset[e][i];
                    lo = d < lo ? d : lo;
                    hi = d > hi ? d : hi;
                    most = k > most ? k : most;
                }
                spread = hi - lo > spread ? hi - lo : spread;
            }
            double frames = (double)spread / F;
            if (frames >= rxbuf / 3.0) {
                snprintf(buf2, sizeof buf2, "a skew of %.2f frames between the lanes of group "
                         "%u (skew and bit offsets) is too large: skew must stay below a third "
                         "of the receive buffer (%u frames / 3 = %.1f) for flow control to work "
                         "(rifl-multilane 4.4); use less skew or a larger receive buffer",
                         frames, g / S, rxbuf, rxbuf / 3.0);
                return refuse(msg, n, buf2);
            }
        }
        unsigned need = 2 * ((most + F - 1) / F);
        if (c->lane.pipeline_frames < need && !c->lane.allow_unsafe_fid) {
            snprintf(buf2, sizeof buf2, "the lanes' round trip must include the skew: a lane "
                     "%u bits late needs a pipeline of at least %u frames (--pipeline), so "
                     "that replay buffer and replay tail cover the slowest lane", most, need);
            return refuse(msg, n, buf2);
        }
        if (offset_short(c, need, msg, n))
            return RIFL_ERR_CONFIG;
    } else if (c->group_lanes > 1) {
        return refuse(msg, n, "groups of lanes need a bonded link: set lanes (--lanes) to 2 "
                              "or more");
    } else {
        for (unsigned i = 0; i < RIFL_BOND_MAX_LANES; i++)
            if (c->lane_skew_bits[i])
                return refuse(msg, n, "skew between lanes needs a bonded link: set lanes "
                                      "(--lanes) to 2 or more");
    }
    if (c->lanes <= 1 && offset_short(c, 0, msg, n))
        return RIFL_ERR_CONFIG;
    if (c->up_log2 > 24)
        return refuse(msg, n, "up_log2 is at most 24; use 20 (the reference) or 12 (its "
                              "simulation build)");
    for (int i = 0; i < 2; i++)
        if (!(c->ber[i] >= 0.0 && c->ber[i] <= 0.5)) {
            snprintf(buf, sizeof buf, "bit error rate %g (%s) is out of range; use a value "
                     "from 0 to 0.5", c->ber[i], i ? "B -> A" : "A -> B");
            return refuse(msg, n, buf);
        }
    int rc = rifl_lane_config_check(&c->lane, msg, n);
    if (rc != RIFL_OK)
        return rc;
    if (!(c->load > 0.0 && c->load <= 1.0)) {
        snprintf(buf, sizeof buf, "offered load %g is out of range; use a fraction of the "
                 "line rate above 0 and at most 1", c->load);
        return refuse(msg, n, buf);
    }
    if (!(c->rx_ready > 0.0 && c->rx_ready <= 1.0)) {
        snprintf(buf, sizeof buf, "receiver read probability %g is out of range; use a value "
                 "above 0 and at most 1", c->rx_ready);
        return refuse(msg, n, buf);
    }
    if (c->rx_stall && c->rx_stall >= c->rx_period) {
        snprintf(buf, sizeof buf, "receiver stall of %llu slots needs a longer period than "
                 "%llu slots", (unsigned long long)c->rx_stall,
                 (unsigned long long)c->rx_period);
        return refuse(msg, n, buf);
    }
    size_t lo = c->min_len, hi = c->max_len;
    if (c->len_count && !c->len_list) {
        snprintf(buf, sizeof buf, "len_count is %u but no len_list gives the lengths",
                 c->len_count);
        return refuse(msg, n, buf);
    }
    if (c->len_count) {
        lo = SIZE_MAX;
        hi = 0;
        for (unsigned i = 0; i < c->len_count; i++) {
            lo = c->len_list[i] < lo ? c->len_list[i] : lo;
            hi = c->len_list[i] > hi ? c->len_list[i] : hi;
        }
    }
    size_t qbytes = (size_t)c->lane.tx_queue_frames * rifl_payload_bytes(c->lane.frame_bits);
    if (lo < 1 || hi < lo) {
        snprintf(buf, sizeof buf, "packet sizes %zu..%zu bytes: use sizes of at least 1 byte "
                 "with min <= max", lo, hi);
        return refuse(msg, n, buf);
    }
    if (c->offer != RIFL_LINKSIM_WHOLE && c->offer != RIFL_LINKSIM_PARTS) {
        snprintf(buf, sizeof buf, "packet offer mode %d is unknown; use RIFL_LINKSIM_WHOLE or "
                 "RIFL_LINKSIM_PARTS", (int)c->offer);
        return refuse(msg, n, buf);
    }
    if (hi > RIFL_VALIDATOR_MAX_LEN) {
        snprintf(buf, sizeof buf, "packets of %zu bytes: use packets of at most %zu bytes "
                 "(1 GiB, what the validator takes)", hi, RIFL_VALIDATOR_MAX_LEN);
        return refuse(msg, n, buf);
    }
    if (c->offer == RIFL_LINKSIM_WHOLE && hi > qbytes) {
        snprintf(buf, sizeof buf, "packets of %zu bytes do not fit the transmit queue of %u "
                 "frames (%zu bytes); use packets of at most %zu bytes or a longer queue",
                 hi, c->lane.tx_queue_frames, qbytes, qbytes);
        return refuse(msg, n, buf);
    }
    if (!c->bytes && !c->max_slots)
        return refuse(msg, n, "the run has no end: give a byte count or a frame count");
    if (c->settle_slots && !c->observe)
        return refuse(msg, n, "settle slots wait for an observer that is satisfied; give an "
                      "observer or no settle slots");
    return RIFL_OK;
}

/* ---- run ------------------------------------------------------------------ */

void rifl_linksim_result_free(rifl_linksim_result *r)
{
    if (!r)
        return;
    rifl_hist_free(&r->lat);
    rifl_hist_free(&r->lat_last);
}

/* One direction's buffers and users. */
static int dir_init(struct sim *s, int i, struct rifl_linksim_len_ctx *lctx)
{
    const rifl_linksim_config *cfg = s->cfg;
    struct dir *d = &s->d[i];
    d->tx = s->pair->lane[i];
    d->rx = s->pair->lane[1 - i];
    d->ch = s->pair->phy[i];
    d->stream_seed = s->res->stream_seed[i];
    d->rmask = 4095;
    d->sim = s;
    d->first_read = -1;
    d->ring = calloc(d->rmask + 1, sizeof *d->ring);
    d->log = malloc(s->nfid * sizeof *d->log);
    d->inflight = calloc(s->D ? s->D : 1, sizeof *d->inflight);
    d->nruns = s->nfid + 4;
    d->runs = calloc(d->nruns, sizeof *d->runs);
    d->pkt = malloc(s->maxlen);
    d->rbuf = malloc(s->maxlen);
    d->cache.buf = malloc(s->maxlen);
    d->scache.buf = malloc(s->maxlen);
    if (d->log)
        for (unsigned k = 0; k < s->nfid; k++)
            d->log[k] = -1;
    if (!d->ring || !d->log || !d->pkt || !d->rbuf || !d->cache.buf || !d->scache.buf ||
        !d->inflight || !d->runs)
        return RIFL_ERR_NOMEM;
    int rc = rifl_validator_init(&d->val, d->stream_seed, cfg->len_count ? 1 : cfg->min_len,
                                 s->maxlen);
    if (rc == RIFL_OK && cfg->len_count) {
        *lctx = (struct rifl_linksim_len_ctx){ cfg, d->stream_seed };
        d->val.len_fn = rifl_linksim_len_cb;
        d->val.len_ctx = lctx;
    }
    return rc;
}

static void sim_free(struct sim *s)
{
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        free(d->ring);
        free(d->log);
        free(d->inflight);
        free(d->runs);
        free(d->pkt);
        free(d->rbuf);
        free(d->cache.buf);
        free(d->scache.buf);
        rifl_validator_free(&d->val);
    }
    rifl_linksim_carry_free(s);
    rifl_pair_free(s->pair);
}

/* The lanes, the cables, the seeds and both directions. */
static int sim_init(struct sim *s, const rifl_linksim_config *cfg, rifl_linksim_result *res,
                    struct rifl_linksim_len_ctx lctx[2], char *msg, size_t msglen)
{
    s->cfg = cfg;
    s->res = res;
    res->seed = cfg->seed;
    rifl_pair_config pc = { .lane = cfg->lane, .delay_frames = cfg->delay_frames,
                            .encode_all = cfg->encode_all, .serial = cfg->serial,
                            .up_log2 = cfg->up_log2 };
    if (cfg->lane_tags) {
        pc.lane.lane_tags = true;
        pc.lane.lane_index = 0;
        pc.lane.lane_count = 1;
    }
    s->maxlen = cfg->max_len;
    if (cfg->len_count) {
        s->maxlen = 0;
        for (unsigned i = 0; i < cfg->len_count; i++)
            s->maxlen = cfg->len_list[i] > s->maxlen ? cfg->len_list[i] : s->maxlen;
    }
    for (int i = 0; i < 2; i++) {
        res->channel_seed[i] = cfg->seeds_given ? cfg->channel_seed[i]
                                                : rifl_linksim_seed(cfg->seed, (unsigned)i);
        res->stream_seed[i] = cfg->seeds_given ? cfg->stream_seed[i]
                                               : rifl_linksim_seed(cfg->seed, 2u + (unsigned)i);
        pc.ber[i] = cfg->ber[i];
        pc.bit_offset[i] = cfg->bit_offset[i];
        pc.slip_rate[i] = cfg->slip_rate[i];
        pc.seed[i] = res->channel_seed[i];
    }
    int rc = rifl_pair_create(&pc, &s->pair, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    s->pb = rifl_payload_bytes(cfg->lane.frame_bits);
    s->nfid = 1u << cfg->lane.fid_bits;
    s->kmask = s->nfid - 1;
    s->D = s->pair->delay_frames;
    s->txcap = cfg->lane.tx_queue_frames;
    s->ref_possible = cfg->fast && !cfg->serial && !cfg->encode_all && !cfg->observe;
    s->fast_possible = cfg->fast && !cfg->serial && cfg->rx_ready >= 1.0 &&
                       cfg->offer == RIFL_LINKSIM_WHOLE &&
                       !cfg->users_first && !cfg->read_budget;
    if (cfg->load < 1.0) {
        s->load_fx = llround(cfg->load * (double)RIFL_LINKSIM_CREDIT_ONE);
        if (s->load_fx < 1)
            s->load_fx = 1;
    }
    rifl_rng_seed(&s->rng, rifl_linksim_seed(cfg->seed, 4));
    res->delay_frames = s->D;
    res->frame_ns = cfg->lane.frame_bits / cfg->lane.link.lane_rate_gbps;
    if (rifl_hist_init(&res->lat) || rifl_hist_init(&res->lat_last))
        return RIFL_ERR_NOMEM;
    for (int i = 0; i < 2 && rc == RIFL_OK; i++)
        rc = dir_init(s, i, &lctx[i]);
    if (rc == RIFL_OK)
        rc = rifl_linksim_carry_init(s);
    return rc;
}

/* Wire side of slot t, plus the bookkeeping the fast path and the latency
 * stamps need; the observer's say when there is one (true otherwise). */
static bool after_wire(struct sim *s, uint64_t t);

static bool wire_side(struct sim *s, uint64_t t)
{
    rifl_pair_step(s->pair, s->cfg->observe ? &s->seen : NULL);
    return after_wire(s, t);
}

static bool after_wire(struct sim *s, uint64_t t)
{
    const rifl_linksim_config *c = s->cfg;
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        const rifl_lane_stats *st = rifl_lane_get_stats(d->tx);
        uint64_t nd = st->tx_frames[RIFL_KIND_DATA];
        d->fresh = false;
        if (!s->fast_possible) {
            if (nd != d->sf) {
                rifl_linksim_stamp_sent(d, d->sf, t);
                d->sf++;
            }
            continue;
        }
        uint64_t nnew = nd + st->tx_frames[RIFL_KIND_FILLER];
        uint64_t hit = rifl_phy_get_stats(d->ch)->frames_hit;
        bool fresh = nnew != d->prev_new;
        if (fresh) {
            unsigned id = (rifl_lane_next_id(d->tx) - 1) & s->kmask;
            d->log[id] = nd != d->sf ? (int64_t)d->sf : -1;
        }
        if (nd != d->sf) {
            rifl_linksim_stamp_sent(d, d->sf, t);
            d->sf++;
        }
        if (fresh && hit == d->prev_hit && rifl_lane_state(d->tx) == RIFL_TX_NORMAL)
            d->streak++;
        else
            d->streak = 0;
        d->prev_new = nnew;
        d->prev_hit = hit;
        d->fresh = fresh;
    }
    if (s->learn.state == LEARN_RECORDING)
        rifl_linksim_learn_slot(s, t);
    if (!c->observe)
        return true;
    rifl_linksim_slot seen = { .t = t, .pair = s->pair, .wire = &s->seen,
                               .complete = rifl_linksim_all_done(s) };
    return c->observe(c->hook_ctx, &seen);
}

static void progress(const struct sim *s, uint64_t t)
{
    const rifl_linksim_config *c = s->cfg;
    if (!c->progress)
        return;
    double f = 0;
    if (c->bytes) {
        uint64_t got = s->d[0].val.st.bytes_ok + s->d[1].val.st.bytes_ok;
        f = (double)got / (2.0 * (double)c->bytes);
    }
    if (c->max_slots) {
        double g = (double)t / (double)c->max_slots;
        f = g > f ? g : f;
    }
    c->progress(c->progress_ctx, f > 1 ? 1 : f, t);
}

/* Where the run stands between slots. */
struct course {
    uint64_t t;
    bool satisfied;       /* the observer's last say */
    bool complete_seen;
    uint64_t complete_at; /* first slot boundary with everything delivered */
};

/* Between slots: packets and errors stop at offer_slots; true when the run
 * ends here. */
static bool at_boundary(struct sim *s, struct course *k)
{
    const rifl_linksim_config *c = s->cfg;
    if (c->offer_slots && k->t == c->offer_slots && !s->stopped) {
        s->stopped = true;
        rifl_pair_set_ber(s->pair, 0, 0);
        rifl_pair_set_ber(s->pair, 1, 0);
    }
    if (rifl_linksim_all_done(s)) {
        if (!k->complete_seen) {
            k->complete_seen = true;
            k->complete_at = k->t;
        }
        if (!c->settle_slots || k->satisfied || k->t >= k->complete_at + c->settle_slots)
            return true;
    }
    for (int i = 0; i < 2; i++) {
        const struct dir *d = &s->d[i];
        bool due = d->pending || d->recv_cur != d->next_seq || !(d->done || s->stopped);
        if (rifl_linksim_stalled(c, &d->val, due, d->last_read, k->t)) {
            s->res->stalled = true;
            return true;
        }
    }
    return c->max_slots && k->t >= c->max_slots;
}

/* ---- quiet slots -----------------------------------------------------------
 *
 * While the link recovers, most slots change nothing the users or the
 * bookkeeping see: neither lane sends a new frame (data or filler) and
 * neither receiving lane has anything to read.  If each sending user would
 * then be refused in every slot (its pending packet does not fit the queue,
 * which only a new data frame sent could change) or has nothing more to
 * give, such slots need the lanes stepped and nothing else: the refusals
 * are counted in one call, the fast path's streaks are 0 after them, and no
 * end of the run can fall inside (all_done needs a delivery; the slot limit
 * and offer_slots cap the run). */

/* The users' side of slots in a quiet run: the same in every slot. */
static bool users_quiet(struct sim *s)
{
    const rifl_linksim_config *c = s->cfg;
    if (c->users_first || c->offer != RIFL_LINKSIM_WHOLE || s->load_fx || c->rx_ready < 1.0 ||
        c->read_budget || c->rx_stall)
        return false;
    for (int i = 0; i < 2; i++) {
        const struct dir *d = &s->d[i];
        if (rifl_lane_rx_backlog(d->rx))
            return false;
        if (!d->done && !(d->pending &&
                          (uint64_t)d->pnf * s->pb > rifl_lane_send_space(d->tx)))
            return false;
    }
    return true;
}

/* New frames sent by both lanes so far: a change means a slot was not quiet. */
static uint64_t new_frames(const struct sim *s)
{
    const rifl_lane_stats *a = rifl_lane_get_stats(s->pair->lane[0]);
    const rifl_lane_stats *b = rifl_lane_get_stats(s->pair->lane[1]);
    return a->tx_frames[RIFL_KIND_DATA] + a->tx_frames[RIFL_KIND_FILLER] +
           b->tx_frames[RIFL_KIND_DATA] + b->tx_frames[RIFL_KIND_FILLER];
}

/* The fast path may take over: it first needs D slots in a row of new,
 * unhit frames each way (streak[i] of them). */
static bool fast_ready_at(const struct sim *s, const unsigned streak[2])
{
    return !s->cfg->users_first && s->fast_possible && streak[0] >= s->D && streak[1] >= s->D;
}

static unsigned streak_of(const struct dir *d)
{
    return d->streak > UINT_MAX ? UINT_MAX : (unsigned)d->streak;
}

static bool fast_ready(const struct sim *s)
{
    unsigned streak[2] = { streak_of(&s->d[0]), streak_of(&s->d[1]) };
    return fast_ready_at(s, streak);
}

/* A quiet run ended at a frame hit: one sent in the last slot or sent
 * next, or one arriving next. */
static bool hit_near(const rifl_pair *p)
{
    for (int i = 0; i < 2; i++)
        if (p->last_hit[i] || p->ref_clear[i] == 0 ||
            p->ref[i][p->ref_pos].data == RIFL_LANE_REF_NONE)
            return true;
    return false;
}

/* User data frames lane i (sending direction i) may send in a quiet run:
 * while the pending packet does not fit its queue, the user is refused
 * every slot, so the run ends before the send that makes room for it; a
 * user with nothing more to give lets the queue drain. */
static unsigned send_max(const struct sim *s, int i)
{
    const struct dir *d = &s->d[i];
    unsigned queued = rifl_lane_tx_backlog(d->tx);
    if (d->pending) {
        uint64_t fits_at = s->txcap - d->pnf; /* queued frames at which it fits */
        return queued > fits_at + 1 ? (unsigned)(queued - fits_at - 1) : 0;
    }
    return d->done ? queued : 0;
}

/* The frames lane i sent in a quiet run, its slots shifted by `shift` to
 * the run's own: their bookkeeping as after_wire's. */
static void sent_in_run(struct sim *s, int i, const rifl_lane_quiet_io *io, uint64_t shift)
{
    struct dir *d = &s->d[i];
    unsigned n = io->sent[i];
    if (s->fast_possible)
        d->prev_new += n;
    for (unsigned k = 0; k < n; k++) {
        if (s->fast_possible)
            d->log[io->sent_id[i][k]] = (int64_t)d->sf;
        rifl_linksim_stamp_sent(d, d->sf, io->sent_at[i][k] + shift);
        d->sf++;
    }
}

/* Step slots by reference from k->t while they are quiet, at most `cap`.
 * Returns the quiet slots done (their bookkeeping done too); *more is set
 * when one more slot was stepped that was not quiet: the caller finishes
 * it. */
static uint64_t quiet_run(struct sim *s, struct course *k, uint64_t cap, bool *more)
{
    uint64_t before = new_frames(s), j = 0;
    *more = false;
    /* frames delivered in a run are read after it, each in the slot after
     * its arrival as the users' side would; no end of the run can come
     * with them while a user still has packets to give */
    bool deliver = !s->stopped && (!s->d[0].done || !s->d[1].done);
    rifl_lane_quiet_io io = {
        .at = { s->del_at[0], s->del_at[1] },
        .cap = deliver ? (unsigned)(sizeof s->del_at[0] / sizeof s->del_at[0][0]) : 0,
        .sent_at = { s->sent_at[0], s->sent_at[1] },
        .sent_id = { s->sent_id[0], s->sent_id[1] },
        .sent_cap = (unsigned)(sizeof s->sent_at[0] / sizeof s->sent_at[0][0]),
        /* the fast path's streaks (after_wire): it may take over where both
         * reach D */
        .streak = { streak_of(&s->d[0]), streak_of(&s->d[1]) },
    };
    while (j < cap) {
        /* the lanes' own quiet runs first, then a slot at a time; where
         * their runs come out short (each costs a set-up), a few slots go
         * one at a time before the next try */
        if (s->quiet_wait) {
            s->quiet_wait--;
        } else {
            uint64_t from = s->pair->slot, t0 = k->t + j, room = cap - j;
            /* once both streaks reach D the caller steps a slot at a time
             * and asks the fast path, unless a frame hit comes too soon for
             * it: up to then the run goes on */
            io.streak_stop = s->fast_possible ? s->D : 0;
            if (fast_ready_at(s, io.streak)) {
                uint64_t hold = rifl_linksim_skip_hold(s, t0);
                if (!hold)
                    break;
                io.streak_stop = 0;
                room = hold < room ? hold : room;
            }
            for (int i = 0; i < 2; i++)
                io.send_max[i] = send_max(s, i);
            uint64_t q = rifl_pair_ref_quiet(s->pair, room, &io);
            /* (after_wire would have taken note of the hits it carried) */
            for (int i = 0; i < 2; i++)
                if (io.hits_done[i])
                    s->d[i].prev_hit = rifl_phy_get_stats(s->d[i].ch)->frames_hit;
            /* sends first: a packet may leave and arrive in one run */
            for (int i = 0; q && i < 2; i++)
                sent_in_run(s, i, &io, t0 - from);
            for (int i = 0; i < 2; i++) /* (lane i receives direction 1 - i) */
                if (io.n[i])
                    rifl_linksim_read_arrived(s, &s->d[1 - i], io.at[i], io.n[i], t0 - from);
            before = new_frames(s);
            j += q;
            if (j == cap || (io.streak_stop && fast_ready_at(s, io.streak)))
                break;
            /* (a run cut short by a frame hit, sent now or soon, is no
             * sign that the lanes are busy) */
            if (q < RIFL_LINKSIM_QUIET_SHORT && !hit_near(s->pair))
                s->quiet_wait = RIFL_LINKSIM_QUIET_WAIT;
        }
        rifl_pair_ref_step(s->pair);
        if (new_frames(s) != before || rifl_lane_rx_backlog(s->d[0].rx) ||
            rifl_lane_rx_backlog(s->d[1].rx)) {
            *more = true;
            break;
        }
        /* a quiet slot: its after_wire would have ended the streaks and
         * taken note of a frame hit in it */
        io.streak[0] = io.streak[1] = 0;
        for (int i = 0; i < 2; i++)
            s->d[i].prev_hit = rifl_phy_get_stats(s->d[i].ch)->frames_hit;
        j++;
    }
    if (!j)
        return 0;
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        if (!d->done)
            rifl_lane_count_refused(d->tx, j);
        d->streak = io.streak[i];
    }
    uint64_t t0 = k->t;
    k->t += j;
    k->satisfied = true;
    s->res->ref_slots += j;
    s->res->quiet_slots += j;
    if ((t0 & ~(uint64_t)0xFFFF) != (k->t & ~(uint64_t)0xFFFF))
        progress(s, k->t);
    return j;
}

/* Slots stepped by reference (rifl_pair_ref_step): the same slots as
 * below, without bytes on the cables, quiet ones in runs, up to a boundary
 * or where the fast path could take over. */
static int by_reference(struct sim *s, struct course *k)
{
    const rifl_linksim_config *c = s->cfg;
    if (rifl_pair_ref_begin(s->pair) != RIFL_OK)
        return RIFL_ERR_STATE;
    int rc = RIFL_OK;
    for (;;) {
        bool stepped = false;
        if (users_quiet(s)) {
            /* no boundary inside: offer_slots and the slot limit cap it */
            uint64_t cap = UINT64_MAX;
            if (c->max_slots && c->max_slots - k->t < cap)
                cap = c->max_slots - k->t;
            if (c->offer_slots && k->t < c->offer_slots && c->offer_slots - k->t < cap)
                cap = c->offer_slots - k->t;
            uint64_t q = quiet_run(s, k, cap, &stepped);
            if (!stepped && q) {
                if (at_boundary(s, k) || (fast_ready(s) && rifl_linksim_skip_room(s, k->t)) ||
                    s->learn.state != LEARN_IDLE)
                    break;
                continue;
            }
        }
        if (c->users_first && (rc = rifl_linksim_user_side(s, k->t)) != RIFL_OK)
            break;
        if (!stepped)
            rifl_pair_ref_step(s->pair);
        k->satisfied = after_wire(s, k->t);
        k->t++;
        s->res->ref_slots++;
        if (!c->users_first && (rc = rifl_linksim_user_side(s, k->t)) != RIFL_OK)
            break;
        if (at_boundary(s, k) || (fast_ready(s) && rifl_linksim_skip_room(s, k->t)) ||
            s->learn.state != LEARN_IDLE)
            break;
        if (!(k->t & 0xFFFF))
            progress(s, k->t);
    }
    if (rifl_pair_ref_end(s->pair) != RIFL_OK)
        return RIFL_ERR_STATE;
    return rc;
}

static int run_slots(struct sim *s, struct course *k)
{
    const rifl_linksim_config *c = s->cfg;
    uint64_t next_report = 1u << 16;
    int rc = RIFL_OK;
    if (!c->users_first)
        rc = rifl_linksim_user_side(s, 0);
    while (rc == RIFL_OK && !at_boundary(s, k)) {
        if (s->learn.state != LEARN_IDLE)
            rifl_linksim_learn_begin(s, k->t);
        /* (a recovery being learned is stepped by content, slot by slot) */
        uint64_t m = c->users_first || s->learn.state == LEARN_RECORDING
                         ? 0 : rifl_linksim_skip_room(s, k->t);
        if (!m && s->learn.state == LEARN_ARMED)
            rifl_linksim_learn_begin(s, k->t); /* (armed for this very slot) */
        bool r = !m && s->ref_possible && s->learn.state == LEARN_IDLE &&
                 rifl_pair_ref_room(s->pair);
        if (m) {
            uint64_t did = 0;
            rc = rifl_linksim_skip(s, k->t, m, &did);
            k->t += did;
            s->res->fast_slots += did;
            s->res->skips++;
        } else if (r) {
            rc = by_reference(s, k);
        } else {
            if (c->users_first)
                rc = rifl_linksim_user_side(s, k->t);
            if (rc != RIFL_OK)
                break;
            k->satisfied = wire_side(s, k->t);
            k->t++;
            if (!c->users_first)
                rc = rifl_linksim_user_side(s, k->t);
        }
        if (k->t >= next_report) {
            progress(s, k->t);
            next_report = k->t + (1u << 16);
        }
    }
    return rc;
}

void rifl_linksim_window(const rifl_linksim_config *c, rifl_linksim_result *res, int i,
                         uint64_t last_read, uint64_t t, unsigned lanes, double *esum,
                         double *gsum)
{
    /* a finite run is measured up to its last delivery */
    uint64_t w = c->bytes && res->complete ? last_read : t;
    if (!w)
        w = 1;
    res->window[i] = w;
    double bits = 8.0 * (double)res->val[i].bytes_ok;
    *esum += bits / ((double)w * lanes * c->lane.frame_bits);
    *gsum += bits / ((double)w * res->frame_ns);
}

static void collect(struct sim *s, uint64_t t)
{
    const rifl_linksim_config *cfg = s->cfg;
    rifl_linksim_result *res = s->res;
    res->slots = t;
    res->startup_slots = s->pair->startup_slot;
    res->quiet_hits = s->pair->quiet_hits[0] + s->pair->quiet_hits[1];
    res->complete = rifl_linksim_all_done(s);
    double gsum = 0, esum = 0;
    for (int i = 0; i < 2; i++) {
        struct dir *d = &s->d[i];
        res->val[i] = d->val.st;
        res->lane[i] = *rifl_lane_get_stats(s->pair->lane[i]);
        res->ch[i] = *rifl_phy_get_stats(s->pair->phy[i]);
        if (cfg->serial) {
            res->aligner[i] = *rifl_aligner_get_stats(rifl_phy_serial_aligner(s->pair->phy[i]));
            res->serial[i] = *rifl_phy_serial_get_stats(s->pair->phy[i]);
        }
        res->offered_packets[i] = d->next_seq;
        res->offered_bytes[i] = d->offered_bytes;
        res->held_bytes[i] = d->pending ? d->plen - d->poff : 0;
        res->first_read[i] = d->first_read;
        rifl_linksim_window(cfg, res, i, d->last_read, t, 1, &esum, &gsum);
    }
    res->goodput_gbps = gsum / 2;
    res->efficiency = esum / 2;
    res->lossless = rifl_validator_clean(&s->d[0].val) && rifl_validator_clean(&s->d[1].val);
}

int rifl_linksim_run(const rifl_linksim_config *cfg, rifl_linksim_result *res, char *msg,
                     size_t msglen)
{
    if (!cfg || !res)
        return rifl_null_arg(msg, msglen, "rifl_linksim_run", cfg ? "res" : "cfg");
    memset(res, 0, sizeof *res);
    int rc = rifl_linksim_check(cfg, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    if (cfg->lanes > 1 || cfg->ppm != 0 || cfg->dead || cfg->swapped) {
        res->seed = cfg->seed;
        for (int i = 0; i < 2; i++) {
            res->channel_seed[i] = cfg->seeds_given ? cfg->channel_seed[i]
                                                    : rifl_linksim_seed(cfg->seed, (unsigned)i);
            res->stream_seed[i] = cfg->seeds_given ? cfg->stream_seed[i]
                                                   : rifl_linksim_seed(cfg->seed, 2u + (unsigned)i);
        }
        if (rifl_hist_init(&res->lat) || rifl_hist_init(&res->lat_last)) {
            rifl_linksim_result_free(res);
            return RIFL_ERR_NOMEM;
        }
        rc = rifl_linksim_run_bonded(cfg, res, msg, msglen);
        if (rc != RIFL_OK)
            rifl_linksim_result_free(res);
        return rc;
    }
    struct sim S, *s = &S;
    memset(s, 0, sizeof S);
    struct rifl_linksim_len_ctx lctx[2];
    struct course k = { 0 };
    rc = sim_init(s, cfg, res, lctx, msg, msglen);
    if (rc == RIFL_OK)
        rc = run_slots(s, &k);
    if (rc == RIFL_ERR_STATE)
        rifl_msg(msg, msglen, "internal error: simulator bookkeeping out of step at slot %llu",
                 (unsigned long long)k.t);
    if (rc == RIFL_ERR_NOMEM)
        rifl_msg(msg, msglen, "out of memory");
    if (rc == RIFL_OK && s->pair->hit_faults) {
        /* (frame hits a quiet run carried must come out as foreseen) */
        rifl_msg(msg, msglen, "internal error: %llu frame hits carried through quiet runs "
                 "did not decode as foreseen; the results would differ from stepping slot "
                 "by slot (--fast false gives them)", (unsigned long long)s->pair->hit_faults);
        rc = RIFL_ERR_STATE;
    }
    if (rc == RIFL_OK) {
        collect(s, k.t);
        progress(s, k.t);
    }
    sim_free(s);
    if (rc != RIFL_OK)
        rifl_linksim_result_free(res);
    return rc;
}

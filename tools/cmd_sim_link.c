/* `rifl sim link`: simulate two RIFL lanes over a cable with bit errors,
 * with traffic both ways, and report goodput, bandwidth efficiency and
 * ratio, packet latency, every counter and the lossless verdict; or sweep
 * one setting over a range. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rifl/capture.h"
#include "rifl/lane.h"
#include "rifl/rng.h"
#include "rifl/sim/linksim.h"

struct opts {
    double ber, ber_ab, ber_ba;
    uint64_t bytes, frames, seed;
    uint64_t frame_bits, fid_bits, pipeline, txq, rxbuf, lock;
    double rate, cable, ns_per_m, xcvr;
    const char *size;
    double load, rx_ready;
    uint64_t rx_stall, rx_period;
    bool fast, carry, encode_all, csv, json, progress, reference, quiet;
    uint64_t jobs;
    const char *sweep;
    bool serial, lane_tags;
    uint64_t lanes, group_lanes;
    const char *bonding, *skew, *dead, *swap;
    const char *bit_offset;
    double slip_rate, ppm, ppm_tol;
    uint64_t up_log2, hold;
    const char *pcap;
    uint64_t pcap_slots;
};

static size_t size_list[256];
static const struct cli_opt *g_opts; /* the option table, for messages */

/* one packet size of --size: a byte count of at least 1 */
static int size_value(const char *s, size_t n, size_t *out)
{
    char buf[64];
    uint64_t v;
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (cli_parse_bytes(buf, &v) || v < 1 || v > RIFL_VALIDATOR_MAX_LEN)
        return -1;
    *out = (size_t)v;
    return 0;
}

/* --size: N, MIN-MAX (or MIN:MAX) or N1,N2,... */
static int parse_sizes(const char *s, rifl_linksim_config *c, bool quiet)
{
    c->len_list = NULL;
    c->len_count = 0;
    size_t n = strcspn(s, ",");
    if (s[n] == ',') {
        unsigned k = 0;
        const char *p = s;
        for (;;) {
            n = strcspn(p, ",");
            if (k == 256 || size_value(p, n, &size_list[k]))
                goto bad;
            k++;
            if (!p[n])
                break;
            p += n + 1;
        }
        c->len_list = size_list;
        c->len_count = k;
        c->min_len = 1;
        return 0;
    }
    size_t a, b;
    n = strcspn(s, "-:");
    if (size_value(s, n, &a))
        goto bad;
    b = a;
    if (s[n] && size_value(s + n + 1, strlen(s + n + 1), &b))
        goto bad;
    if (b < a)
        goto bad;
    c->min_len = a;
    c->max_len = b;
    return 0;
bad:
    if (!quiet)
        fprintf(stderr, "error: %s: '%s' is not a packet size; use N, MIN-MAX (MIN <= MAX) "
                "or a list N1,N2,... of at most 256 sizes, each from 1 byte to 1 GiB "
                "(e.g. 64, 1-8192 or 64,1500,9000)\n", cli_where(g_opts, "size"), s);
    return 2;
}

/* --bit-offset: "random" (each direction's from the seed: bits 0 .. F-1),
 * N (both directions) or A,B; --slip-rate for both directions */
static int parse_offsets(const struct opts *o, rifl_linksim_config *c, bool quiet)
{
    c->slip_rate[0] = c->slip_rate[1] = o->slip_rate;
    const char *s = o->bit_offset;
    if (!s || strcmp(s, "random") == 0) {
        if (!o->serial)
            return 0;
        rifl_rng r;
        rifl_rng_seed(&r, rifl_linksim_seed(o->seed, 6));
        for (int i = 0; i < 2; i++)
            c->bit_offset[i] = (unsigned)rifl_rng_below(&r, o->frame_bits);
        /* a bonded link's lanes each their own */
        for (int i = 0; i < 2; i++)
            for (unsigned k = 0; k < RIFL_BOND_MAX_LANES; k++)
                c->lane_bit_offset[i][k] =
                    k == 0 ? c->bit_offset[i] : (unsigned)rifl_rng_below(&r, o->frame_bits);
        return 0;
    }
    unsigned long long a, b;
    int used = 0;
    if (sscanf(s, "%llu,%llu%n", &a, &b, &used) == 2 && !s[used] && a <= (1u << 24) &&
        b <= (1u << 24)) {
        c->bit_offset[0] = (unsigned)a;
        c->bit_offset[1] = (unsigned)b;
    } else if (sscanf(s, "%llu%n", &a, &used) == 1 && !s[used] && a <= (1u << 24)) {
        c->bit_offset[0] = c->bit_offset[1] = (unsigned)a;
    } else {
        a = UINT64_MAX;
    }
    if (a != UINT64_MAX) {
        for (int i = 0; i < 2; i++)
            for (unsigned k = 0; k < RIFL_BOND_MAX_LANES; k++)
                c->lane_bit_offset[i][k] = c->bit_offset[i];
        return 0;
    }
    if (!quiet)
        fprintf(stderr, "error: %s: '%s' is not a bit offset; use random, N or A,B (bits, "
                "at most 16777216; A for A -> B, B for B -> A)\n",
                cli_where(g_opts, "bit-offset"), s);
    return 2;
}

/* --dead-lane I@SLOT and --swap-lanes I,J */
static int parse_faults(const struct opts *o, rifl_linksim_config *c, bool quiet)
{
    unsigned long long a, b;
    int used = 0;
    if (o->dead) {
        /* (digits only: scanf would take "-1" as 2^64 - 1, and clamp what is
         * too large to it) */
        size_t digits = strspn(o->dead, "0123456789@");
        if (o->dead[digits] || sscanf(o->dead, "%llu@%llu%n", &a, &b, &used) != 2 ||
            o->dead[used] || a > 15 || strlen(strchr(o->dead, '@') + 1) > 19) {
            if (!quiet)
                fprintf(stderr, "error: %s: '%s' is not a dead lane; use LANE@SLOT, e.g. 2@50000 "
                        "(lane 0 to 15, from that slot of its ends on, below 10^19)\n",
                        cli_where(g_opts, "dead-lane"), o->dead);
            return 2;
        }
        c->dead = true;
        c->dead_lane = (unsigned)a;
        c->dead_at = b;
    }
    if (o->swap) {
        if (sscanf(o->swap, "%llu,%llu%n", &a, &b, &used) != 2 || o->swap[used] || a > 15 ||
            b > 15) {
            if (!quiet)
                fprintf(stderr, "error: %s: '%s' is not a pair of lanes; use I,J, e.g. 1,2\n",
                        cli_where(g_opts, "swap-lanes"), o->swap);
            return 2;
        }
        c->swapped = true;
        c->swap_lanes[0] = (unsigned)a;
        c->swap_lanes[1] = (unsigned)b;
    }
    return 0;
}

/* --skew-bits A,B,...: lane i's lines are that many bits longer */
static int parse_skew(const struct opts *o, rifl_linksim_config *c, bool quiet)
{
    if (!o->skew)
        return 0;
    const char *p = o->skew;
    unsigned k = 0;
    for (;;) {
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || k == RIFL_BOND_MAX_LANES || v > (1u << 20) || (*end && *end != ','))
            break;
        c->lane_skew_bits[k++] = (unsigned)v;
        unsigned lanes = o->lanes ? (unsigned)o->lanes : 1;
        if (!*end && k != lanes) {
            if (!quiet)
                fprintf(stderr, "error: %s: '%s' gives %u value%s for a link of %u lane%s; "
                        "give one value per lane, lane 0 first\n", cli_where(g_opts, "skew-bits"),
                        o->skew, k, k == 1 ? "" : "s", lanes, lanes == 1 ? "" : "s");
            return 2;
        }
        if (!*end) {
            /* the lanes' round trip covers the slowest lane, both ways */
            unsigned most = 0;
            for (unsigned i = 0; i < k; i++)
                most = c->lane_skew_bits[i] > most ? c->lane_skew_bits[i] : most;
            c->lane.pipeline_frames += 2 * ((most + c->lane.frame_bits - 1) / c->lane.frame_bits);
            return 0;
        }
        p = end + 1;
    }
    if (!quiet)
        fprintf(stderr, "error: %s: '%s' is not a list of skews; use bits per lane, lane 0 "
                "first, e.g. 0,17,300,5 (at most 16 values of at most 1048576)\n",
                cli_where(g_opts, "skew-bits"), o->skew);
    return 2;
}

static int build_config(const struct opts *o, rifl_linksim_config *c, bool quiet)
{
    rifl_linksim_defaults(c);
    c->ber[0] = o->ber_ab >= 0 ? o->ber_ab : o->ber;
    c->ber[1] = o->ber_ba >= 0 ? o->ber_ba : o->ber;
    c->seed = o->seed;
    c->bytes = o->bytes;
    c->max_slots = o->frames;
    c->lane.frame_bits = (unsigned)o->frame_bits;
    c->lanes = o->lanes > 1 ? (unsigned)o->lanes : 0;
    /* the paper's link is 112 Gbit/s: its lanes share that unless --rate */
    c->lane.link.lane_rate_gbps = o->rate > 0 ? o->rate : 112.0 / (double)(o->lanes ? o->lanes : 1);
    c->lane.link.cable_m = o->cable;
    c->lane.link.ns_per_m = o->ns_per_m;
    c->lane.link.transceiver_ns = o->xcvr;
    c->lane.pipeline_frames = (unsigned)o->pipeline;
    /* skew and bit offsets before the frame-ID width: they lengthen the
     * round trip */
    c->serial = o->serial;
    int src = parse_skew(o, c, quiet);
    if (src || (src = parse_offsets(o, c, quiet)))
        return src;
    unsigned extra = rifl_linksim_offset_frames(c);
    c->lane.pipeline_frames = extra > UINT_MAX - c->lane.pipeline_frames
                                  ? UINT_MAX : c->lane.pipeline_frames + extra;
    c->lane.tx_queue_frames = (unsigned)o->txq;
    c->lane.rx_buffer_frames = (unsigned)o->rxbuf;
    c->lane.rx_lock_frames = (unsigned)o->lock;
    if (o->fid_bits)
        c->lane.fid_bits = (unsigned)o->fid_bits;
    else {
        /* serial lanes' replay buffers also cover their held frames */
        uint64_t held = o->serial ? o->hold : 0;
        held += c->lane.pipeline_frames;
        unsigned k = rifl_lane_min_fid_bits(&c->lane.link, c->lane.frame_bits,
                                            held > UINT_MAX ? UINT_MAX : (unsigned)held);
        /* beyond 12 bits no width fits: the check then says the link is too
         * long, and what to change */
        c->lane.fid_bits = k < 5 ? 5 : k > RIFL_FID_MAX_BITS ? RIFL_FID_MAX_BITS : k;
    }
    c->load = o->load;
    c->rx_ready = o->rx_ready;
    c->rx_stall = o->rx_stall;
    c->rx_period = o->rx_period;
    c->fast = o->fast;
    c->carry = o->carry;
    c->encode_all = o->encode_all;
    c->lane_tags = o->lane_tags;
    c->ppm = o->ppm;
    c->ppm_tolerance = o->ppm_tol;
    c->group_lanes = (unsigned)o->group_lanes;
    if (o->bonding) {
        unsigned S = 0;
        if (strcmp(o->bonding, "spatial") == 0) {
            S = c->lanes;
        } else if (strcmp(o->bonding, "temporal") == 0) {
            S = 1;
        } else {
            if (!quiet)
                fprintf(stderr, "error: %s: '%s' is not a bonding; use spatial (one group of "
                        "all lanes) or temporal (groups of one), or --group-lanes S\n",
                        cli_where(g_opts, "bonding"), o->bonding);
            return 2;
        }
        if (o->group_lanes && o->group_lanes != S) {
            if (!quiet)
                fprintf(stderr, "error: %s and %s: --bonding %s means groups of %u lanes, "
                        "--group-lanes asks for %llu; give one of them\n",
                        cli_where(g_opts, "bonding"), cli_where(g_opts, "group-lanes"),
                        o->bonding, S, (unsigned long long)o->group_lanes);
            return 2;
        }
        c->group_lanes = S;
    }
    c->up_log2 = (unsigned)o->up_log2;
    c->lane.rx_hold_frames = (unsigned)o->hold;
    int rc = parse_faults(o, c, quiet);
    if (rc)
        return rc;

    return parse_sizes(o->size, c, quiet);
}

/* for cli_blame: 0 when the settings pass the simulator's checks */
static int config_ok(void *ctx)
{
    rifl_linksim_config c;
    char msg[16];
    if (build_config(ctx, &c, true))
        return -1;
    return rifl_linksim_check(&c, msg, sizeof msg) == RIFL_OK ? 0 : -1;
}

/* ---- run-time estimate --------------------------------------------------- */

/* How long a run takes, before it starts.  The bandwidth ratio (goodput
 * against the error-free link) falls as exp(-C x (p_ab + p_ba)), p the
 * frame error rate of a direction, 1 - (1 - BER)^F: every frame error costs
 * a replay cycle, and the lane sends new data only after 2^K clean slots,
 * so C is about 2.7 x 2^K slots (fitted to runs of this simulator for F =
 * 64..2048 and K = 6..12; within about 10% for ratios above 0.03, about ten
 * times too low far below, so long runs are over-estimated).  The simulator
 * carries slots in replay cycles through the lanes' quiet runs (about 1e8
 * slots/s on the development machine) where a single lane's users keep it
 * saturated and read every slot, steps them one at a time otherwise (about
 * 2e7 slots/s for both lanes, half that with --encode-all), and
 * fast-forwards error-free stretches packet by packet (above 1e9 slots/s
 * with the default packet sizes); serial lanes and ends on different
 * clocks step every slot, bit streams and aligners included (about 4e6
 * slots/s); see docs/simulator.md.  A bonded link of L lanes carries L
 * frames a slot and steps L lane pairs (the speeds above over L), and
 * waits for its slowest lane: its ratio is the one-lane ratio to the
 * power L (within about 40% on 2 to 8 lanes, docs/simulator.md). */
#define EST_QUIET_SPEED 1e8
#define EST_STEP_SPEED 2e7
#define EST_SERIAL_SPEED 4e6
#define EST_SKIP_SPEED 1e9
#define EST_WARN_S 60.0            /* warn above a minute */
#define EST_REFUSE_S 86400.0       /* refuse above a day unless --frames bounds it */

struct estimate {
    double ratio;      /* bandwidth ratio */
    double frame_err;  /* frame error rate, mean of the directions */
    double cycle;      /* slots lost per frame error */
    double slots;      /* slots of the run */
    double seconds;    /* wall time, reference run included */
    double step_speed; /* slots a second where they are stepped one at a time */
};

static void estimate(const rifl_linksim_config *c, bool reference, struct estimate *e)
{
    unsigned F = c->lane.frame_bits;
    unsigned K = c->lane.fid_bits;
    double p[2];
    for (int i = 0; i < 2; i++)
        p[i] = c->ber[i] > 0 ? -expm1((double)F * log1p(-c->ber[i])) : 0.0;
    double L = c->lanes > 1 ? (double)c->lanes : 1.0;
    /* every slot stepped: serial lanes, or ends on different clocks */
    bool general = c->serial || c->ppm != 0;
    e->frame_err = (p[0] + p[1]) / 2;
    e->cycle = 2.7 * (double)(1u << K);
    e->ratio = exp(-e->cycle * L * (p[0] + p[1]));
    double share = c->load < e->ratio ? c->load : e->ratio;
    if (c->rx_stall && c->rx_period > c->rx_stall)
        share *= 1.0 - (double)c->rx_stall / (double)c->rx_period;
    double per_slot = L * (double)rifl_payload_bytes(F);
    double clean = c->bytes ? (double)c->bytes / (per_slot * c->load) : INFINITY;
    double slots = c->bytes ? (share > 0 ? (double)c->bytes / (per_slot * share) : INFINITY)
                            : INFINITY;
    if (c->max_slots) {
        if ((double)c->max_slots < slots)
            slots = (double)c->max_slots;
        if ((double)c->max_slots < clean)
            clean = (double)c->max_slots;
    }
    e->slots = slots;
    double stepped = c->fast && !general ? fmin(1.0, 0.05 + (1.0 - e->ratio)) : 1.0;
    /* quiet runs: one aligned lane, saturated, read every slot */
    bool quiet = c->fast && !general && L == 1 && !c->encode_all && c->load >= 1.0 &&
                 c->rx_ready >= 1.0 && !c->rx_stall;
    double step_speed = (general ? EST_SERIAL_SPEED : quiet ? EST_QUIET_SPEED : EST_STEP_SPEED) / L;
    if (c->encode_all)
        step_speed /= 2;
    e->step_speed = step_speed;
    e->seconds = slots * (stepped / step_speed + (1.0 - stepped) / EST_SKIP_SPEED);
    if (reference)
        e->seconds += clean / (general ? step_speed : EST_SKIP_SPEED);
}

/* the option to name for a long run: the bit error rate when it is what
 * makes the run long, else the byte count */
static const char *long_run_cause(const struct opts *o, const struct estimate *e)
{
    if (e->ratio < 0.5) {
        if (o->ber_ab >= 0 && o->ber_ba >= 0)
            return o->ber_ab >= o->ber_ba ? "ber-ab" : "ber-ba";
        if (o->ber_ab >= 0 && o->ber_ab > o->ber)
            return "ber-ab";
        if (o->ber_ba >= 0 && o->ber_ba > o->ber)
            return "ber-ba";
        return "ber";
    }
    return "bytes";
}

static void explain_estimate(char *buf, size_t n, const rifl_linksim_config *c,
                             const struct estimate *e)
{
    char slots[48], ratio[32];
    if (isfinite(e->slots))
        snprintf(slots, sizeof slots, "about %.2g frame slots", e->slots);
    else
        snprintf(slots, sizeof slots, "more frame slots than can be counted");
    /* below a millionth, the figure says nothing a reader can use */
    if (e->ratio < 1e-6)
        snprintf(ratio, sizeof ratio, "next to none");
    else
        snprintf(ratio, sizeof ratio, "%.2g", e->ratio);
    char bond[96] = "";
    if (c->lanes > 1)
        snprintf(bond, sizeof bond, " on each of %u lanes, and the bonded link waits for its "
                 "slowest lane", c->lanes);
    snprintf(buf, n, "at BER %g A->B and %g B->A frames of %u bits fail at %.3g%% per "
             "direction, each failure costs a replay cycle of about %.0f slots (2.7 x 2^K, "
             "K = %u)%s, so the link is estimated to carry %s of its error-free goodput; "
             "the run needs %s", c->ber[0], c->ber[1], c->lane.frame_bits,
             100 * e->frame_err, e->cycle, c->lane.fid_bits, bond, ratio, slots);
}

/* ---- progress ------------------------------------------------------------ */

struct prog {
    const char *what;
    bool force;
    double t0;
    double est_slots;   /* estimated slots of the run (0: unknown) */
};

static void on_progress(void *ctx, double f, uint64_t slots)
{
    struct prog *p = ctx;
    char extra[128];
    double dt = cli_now() - p->t0;
    /* when the bytes hardly move (a lossy link), count slots against the
     * estimate instead, marked as estimated */
    bool est = false;
    if (p->est_slots > 0 && isfinite(p->est_slots)) {
        double g = (double)slots / p->est_slots;
        if (g > 0.99)
            g = 0.99;
        if (g > f) {
            f = g;
            est = true;
        }
    }
    snprintf(extra, sizeof extra, "%.3g slots%s, %.1f s", (double)slots,
             est ? " (progress estimated from slots)" : "", dt);
    cli_progress(p->what, f, extra, p->force);
}

/* ---- output ------------------------------------------------------------- */

struct summary {
    double ratio;          /* bandwidth ratio, NAN when unknown */
    double ref_goodput;
    double wall;
};

static uint64_t sum_val(const rifl_linksim_result *r, size_t off)
{
    return *(const uint64_t *)((const char *)&r->val[0] + off) +
           *(const uint64_t *)((const char *)&r->val[1] + off);
}
#define VSUM(r, f) sum_val(r, offsetof(rifl_validator_stats, f))

static double q_ns(const rifl_linksim_result *r, const rifl_hist *h, double q)
{
    return (double)rifl_hist_quantile(h, q) * r->frame_ns;
}

static void print_human(const rifl_linksim_config *c, const rifl_linksim_result *r,
                        const struct summary *s)
{
    printf("link: %u-bit frames, %g Gbit/s, %g m cable at %g ns/m + %g ns transceiver = %u "
           "frames one way (%.2f ns per frame), frame-ID width %u\n",
           c->lane.frame_bits, c->lane.link.lane_rate_gbps, c->lane.link.cable_m,
           c->lane.link.ns_per_m, c->lane.link.transceiver_ns, r->delay_frames, r->frame_ns,
           c->lane.fid_bits);
    printf("seed: %llu\n", (unsigned long long)c->seed);
    printf("errors: BER %g A->B (channel seed %llu), %g B->A (channel seed %llu)\n", c->ber[0],
           (unsigned long long)r->channel_seed[0], c->ber[1],
           (unsigned long long)r->channel_seed[1]);
    unsigned L = r->nlanes ? r->nlanes : 1;
    if (r->nlanes)
        printf("bonded: %u lanes in groups of %u (%s), %g Gbit/s each\n", L,
               c->group_lanes ? c->group_lanes : L,
               c->group_lanes == 1 ? "temporal" : c->group_lanes && c->group_lanes < L ? "mixed" : "spatial",
               c->lane.link.lane_rate_gbps);
    if (c->ppm != 0)
        printf("clocks: end A %g ppm %s than end B; compensation slots asked for: %llu at A, "
               "%llu at B; sent: %llu at A, %llu at B\n", fabs(c->ppm),
               c->ppm > 0 ? "faster" : "slower", (unsigned long long)r->comp_requests[0],
               (unsigned long long)r->comp_requests[1], (unsigned long long)r->lane[0].tx_clock_comp,
               (unsigned long long)r->lane[1].tx_clock_comp);
    printf("run: %.4g frame slots (%.1f%% fast-forwarded, %.1f%% stepped by reference) in "
           "%.2f s = %.3g simulated frames/s both ways\n", (double)r->slots,
           r->slots ? 100.0 * (double)r->fast_slots / (double)r->slots : 0.0,
           r->slots ? 100.0 * (double)r->ref_slots / (double)r->slots : 0.0, s->wall,
           s->wall > 0 ? 2.0 * L * (double)r->slots / s->wall : 0.0);
    printf("delivered: %llu + %llu packets, %llu + %llu bytes (A->B + B->A)%s\n",
           (unsigned long long)r->val[0].packets_ok, (unsigned long long)r->val[1].packets_ok,
           (unsigned long long)r->val[0].bytes_ok, (unsigned long long)r->val[1].bytes_ok,
           r->complete ? "" : ", run stopped before everything offered arrived");
    if (r->stalled)
        printf("stalled: packets were lost or corrupted and none arrived whole in the last "
               "%llu slots; the run was ended there (this link cannot deliver its stream: see "
               "the counters below)\n",
               (unsigned long long)(c->stall_slots ? c->stall_slots : RIFL_LINKSIM_STALL_SLOTS));
    printf("goodput: %.3f Gbit/s per direction, bandwidth efficiency %.4f", r->goodput_gbps,
           r->efficiency);
    if (!isnan(s->ratio))
        printf(", bandwidth ratio %.4f (error-free run: %.3f Gbit/s)", s->ratio,
               s->ref_goodput);
    printf("\n");
    if (r->lat.n == 0)
        printf("latency: no packet was delivered\n");
    else {
        printf("latency (ns), first bit sent to last bit delivered: avg %.1f  p50 %.1f  p99 %.1f  "
               "p99.9 %.1f  max %.1f\n", rifl_hist_avg(&r->lat) * r->frame_ns,
               q_ns(r, &r->lat, 0.5), q_ns(r, &r->lat, 0.99), q_ns(r, &r->lat, 0.999),
               (double)r->lat.max * r->frame_ns);
        printf("latency (ns), last frame sent to delivered:          avg %.1f  p50 %.1f  p99 %.1f  "
               "p99.9 %.1f  max %.1f\n", rifl_hist_avg(&r->lat_last) * r->frame_ns,
               q_ns(r, &r->lat_last, 0.5), q_ns(r, &r->lat_last, 0.99),
               q_ns(r, &r->lat_last, 0.999), (double)r->lat_last.max * r->frame_ns);
    }
    if (c->serial) {
        printf("serial lanes: bit offsets %u (A->B) and %u (B->A), %g bit slips per frame, "
               "rx_up after 2^%u words, hold %u frames\n", c->bit_offset[0], c->bit_offset[1],
               c->slip_rate[0], c->up_log2 ? c->up_log2 : RIFL_ALIGNER_UP_LOG2,
               c->lane.rx_hold_frames);
        char every[48];
        if (c->lanes > 1)
            snprintf(every, sizeof every, "all %u lanes of both ends", c->lanes);
        else
            snprintf(every, sizeof every, "the lanes of both ends");
        if (r->startup_slots)
            printf("start-up: %s up after %llu slots (%.1f ns)\n", every,
                   (unsigned long long)r->startup_slots, (double)r->startup_slots * r->frame_ns);
        else if (c->dead && c->dead_at == 0)
            printf("start-up: %s never came up: lane %u was dead from the start\n", every,
                   c->dead_lane);
        else if (!c->up_log2 || c->up_log2 > 12)
            printf("start-up: %s never came up (use --up-log2 12 for the reference's "
                   "shorter simulation rx_up, or a longer run)\n", every);
        else
            printf("start-up: %s never came up in %llu slots (a longer run may bring them "
                   "up)\n", every, (unsigned long long)r->slots);
        uint64_t nl = r->serial[0].recovered_lost + r->serial[1].recovered_lost;
        uint64_t nr = r->serial[0].recovered_repeated + r->serial[1].recovered_repeated;
        if (nl || nr)
            printf("slip recovery (slip to rx_up back, frames): %llu lost bits, mean %.0f; %llu "
                   "repeated bits, mean %.0f\n", (unsigned long long)nl,
                   nl ? (double)(r->serial[0].recovery_frames_lost +
                                 r->serial[1].recovery_frames_lost) / (double)nl : 0.0,
                   (unsigned long long)nr,
                   nr ? (double)(r->serial[0].recovery_frames_repeated +
                                 r->serial[1].recovery_frames_repeated) / (double)nr : 0.0);
        for (int i = 0; i < 2; i++)
            printf("aligner %s: %llu locks, %llu unlocks, %llu slides, %llu bit slips\n",
                   i ? "B->A" : "A->B", (unsigned long long)r->aligner[i].locks,
                   (unsigned long long)r->aligner[i].unlocks,
                   (unsigned long long)r->aligner[i].slides,
                   (unsigned long long)(r->serial[i].slips_lost + r->serial[i].slips_repeated));
    }
    for (unsigned i = 0; i < r->nlanes; i++)
        for (int e = 0; e < 2; e++)
            if (r->lanes[i].lane_down[e])
                printf("lane %u down: reported %llu times at end %c\n", i,
                       (unsigned long long)r->lanes[i].lane_down[e], 'A' + e);
    /* lane tags (rifl-multilane 5.1): what each receiver settled on */
    for (unsigned i = 0; c->lane_tags && i < r->nlanes; i++)
        for (int e = 0; e < 2; e++) {
            const struct rifl_linksim_lane *ln = &r->lanes[i];
            if (ln->peer_lanes[e] >= 0 && (unsigned)ln->peer_lanes[e] != r->nlanes)
                printf("lane count mismatch: end %c's lane %u receives tags of a link of %d "
                       "lanes, this one has %u\n", 'A' + e, i, ln->peer_lanes[e], r->nlanes);
            else if (ln->peer_lane[e] >= 0 && (unsigned)ln->peer_lane[e] != i)
                printf("lane swap: end %c's local lane %u receives peer lane %d\n", 'A' + e, i,
                       ln->peer_lane[e]);
        }
    printf("channel: A->B %llu bit errors in %llu frames hit, B->A %llu in %llu\n",
           (unsigned long long)r->ch[0].bit_errors, (unsigned long long)r->ch[0].frames_hit,
           (unsigned long long)r->ch[1].bit_errors, (unsigned long long)r->ch[1].frames_hit);
    printf("lossless: %s (lost %llu, duplicated %llu, reordered %llu, corrupted %llu)\n",
           r->lossless ? "yes" : "NO", (unsigned long long)VSUM(r, lost),
           (unsigned long long)VSUM(r, duplicated), (unsigned long long)VSUM(r, reordered),
           (unsigned long long)VSUM(r, corrupted));
    size_t n;
    const rifl_counter *ct = rifl_lane_counters(&n);
    printf("counters:%*s %20s %20s\n", 17, "", r->nlanes ? "A (all lanes)" : "lane A",
           r->nlanes ? "B (all lanes)" : "lane B");
    for (size_t i = 0; i < n; i++) {
        uint64_t va = rifl_counter_value(&ct[i], &r->lane[0]);
        uint64_t vb = rifl_counter_value(&ct[i], &r->lane[1]);
        if (va || vb)
            printf("  %-24s %20llu %20llu\n", ct[i].name, (unsigned long long)va,
                   (unsigned long long)vb);
    }
}

static void print_json(const rifl_linksim_config *c, const rifl_linksim_result *r,
                       const struct summary *s, const char *extra)
{
    printf("{\"seed\": %llu, \"ber_ab\": %g, \"ber_ba\": %g, \"frame_bits\": %u, "
           "\"lane_rate_gbps\": %g, \"cable_m\": %g, \"transceiver_ns\": %g, "
           "\"delay_frames\": %u, \"fid_bits\": %u, \"frame_ns\": %.6f, \"slots\": %llu, "
           "\"fast_slots\": %llu, \"ref_slots\": %llu, \"quiet_slots\": %llu, "
           "\"carried\": %llu, \"quiet_hits\": %llu, \"wall_s\": %.3f, \"complete\": %s, "
           "\"stalled\": %s, ",
           (unsigned long long)c->seed, c->ber[0], c->ber[1], c->lane.frame_bits,
           c->lane.link.lane_rate_gbps, c->lane.link.cable_m, c->lane.link.transceiver_ns,
           r->delay_frames, c->lane.fid_bits, r->frame_ns, (unsigned long long)r->slots,
           (unsigned long long)r->fast_slots, (unsigned long long)r->ref_slots,
           (unsigned long long)r->quiet_slots, (unsigned long long)r->carried,
           (unsigned long long)r->quiet_hits, s->wall,
           r->complete ? "true" : "false", r->stalled ? "true" : "false");
    printf("\"channel_seed\": [%llu, %llu], \"bit_errors\": [%llu, %llu], "
           "\"frames_hit\": [%llu, %llu], ", (unsigned long long)r->channel_seed[0],
           (unsigned long long)r->channel_seed[1], (unsigned long long)r->ch[0].bit_errors,
           (unsigned long long)r->ch[1].bit_errors, (unsigned long long)r->ch[0].frames_hit,
           (unsigned long long)r->ch[1].frames_hit);
    if (c->serial) {
        printf("\"serial\": true, \"bit_offset\": [%u, %u], \"slip_rate\": [%g, %g], "
               "\"up_log2\": %u, \"hold_frames\": %u, \"startup_slots\": %llu, ",
               c->bit_offset[0], c->bit_offset[1], c->slip_rate[0], c->slip_rate[1],
               c->up_log2 ? c->up_log2 : RIFL_ALIGNER_UP_LOG2, c->lane.rx_hold_frames,
               (unsigned long long)r->startup_slots);
        size_t na;
        const rifl_counter *ca = rifl_aligner_counters(&na);
        printf("\"aligner\": [");
        for (int i = 0; i < 2; i++) {
            json_counters(stdout, ca, na, &r->aligner[i]);
            printf("%s", i ? "], " : ", ");
        }
        printf("\"slips\": [%llu, %llu], ",
               (unsigned long long)(r->serial[0].slips_lost + r->serial[0].slips_repeated),
               (unsigned long long)(r->serial[1].slips_lost + r->serial[1].slips_repeated));
        /* from a slip to rx_up back, in frames, both directions together */
        printf("\"slip_recovery\": {");
        for (int k = 0; k < 2; k++) {
            uint64_t n = k ? r->serial[0].recovered_repeated + r->serial[1].recovered_repeated
                           : r->serial[0].recovered_lost + r->serial[1].recovered_lost;
            uint64_t sum = k ? r->serial[0].recovery_frames_repeated +
                                   r->serial[1].recovery_frames_repeated
                             : r->serial[0].recovery_frames_lost + r->serial[1].recovery_frames_lost;
            uint64_t mx0 = k ? r->serial[0].recovery_max_repeated : r->serial[0].recovery_max_lost;
            uint64_t mx1 = k ? r->serial[1].recovery_max_repeated : r->serial[1].recovery_max_lost;
            printf("%s\"%s\": {\"count\": %llu, \"mean_frames\": %.1f, \"max_frames\": %llu}",
                   k ? ", " : "", k ? "bit_repeated" : "bit_lost", (unsigned long long)n,
                   n ? (double)sum / (double)n : 0.0,
                   (unsigned long long)(mx0 > mx1 ? mx0 : mx1));
        }
        printf(", \"undone\": %llu}, ",
               (unsigned long long)(r->serial[0].slips_undone + r->serial[1].slips_undone));
    }
    printf("\"packets\": [%llu, %llu], \"bytes\": [%llu, %llu], ",
           (unsigned long long)r->val[0].packets_ok, (unsigned long long)r->val[1].packets_ok,
           (unsigned long long)r->val[0].bytes_ok, (unsigned long long)r->val[1].bytes_ok);
    size_t n;
    const rifl_counter *ct = rifl_lane_counters(&n);
    for (int l = 0; l < 2; l++) {
        printf("\"lane_%c\": ", 'a' + l);
        json_counters(stdout, ct, n, &r->lane[l]);
        printf(", ");
    }
    if (c->ppm != 0)
        printf("\"ppm\": %g, \"comp_requests\": [%llu, %llu], ", c->ppm,
               (unsigned long long)r->comp_requests[0], (unsigned long long)r->comp_requests[1]);
    if (r->nlanes) {
        printf("\"group_lanes\": %u, \"lanes\": [", c->group_lanes ? c->group_lanes : r->nlanes);
        for (unsigned i = 0; i < r->nlanes; i++) {
            const struct rifl_linksim_lane *ln = &r->lanes[i];
            printf("%s{\"lane\": %u", i ? ", " : "", i);
            for (int d = 0; d < 2; d++) {
                /* direction d: end d's lane i sends, the other end's receives */
                const rifl_lane_stats *tx = &ln->lane[d], *rx = &ln->lane[1 - d];
                printf(", \"%s\": {\"comp_slots\": %llu, \"bit_errors\": %llu, \"frames_hit\": %llu, "
                       "\"replay_cycles\": %llu, \"replayed\": %llu, \"verify_fail\": %llu, "
                       "\"rx_overflow\": %llu, \"rx_hold_dropped\": %llu, \"data_frames\": %llu",
                       d ? "b_to_a" : "a_to_b", (unsigned long long)tx->tx_clock_comp,
                       (unsigned long long)ln->ch[d].bit_errors,
                       (unsigned long long)ln->ch[d].frames_hit,
                       (unsigned long long)tx->tx_replay_cycles,
                       (unsigned long long)tx->tx_replayed, (unsigned long long)rx->rx_verify_fail,
                       (unsigned long long)rx->rx_overflow, (unsigned long long)rx->rx_hold_dropped,
                       (unsigned long long)tx->tx_frames[RIFL_KIND_DATA]);
                if (c->serial)
                    printf(", \"lane_down\": %llu, \"lane_swap\": %llu, \"bit_offset\": %u, "
                           "\"locks\": %llu, \"unlocks\": %llu, \"slides\": %llu, "
                           "\"slips\": %llu",
                           (unsigned long long)ln->lane_down[1 - d],
                           (unsigned long long)rx->rx_lane_swap, c->lane_bit_offset[d][i],
                           (unsigned long long)ln->aligner[d].locks,
                           (unsigned long long)ln->aligner[d].unlocks,
                           (unsigned long long)ln->aligner[d].slides,
                           (unsigned long long)(ln->serial[d].slips_lost +
                                                ln->serial[d].slips_repeated));
                if (c->lane_tags) /* the tag the receiving end settled on */
                    printf(", \"peer_lane\": %d, \"peer_lanes\": %d", ln->peer_lane[1 - d],
                           ln->peer_lanes[1 - d]);
                printf("}");
            }
            printf("}");
        }
        printf("], ");
        size_t nb;
        const rifl_counter *cb = rifl_bond_counters(&nb);
        for (int e = 0; e < 2; e++) {
            printf("\"bond_%c\": ", 'a' + e);
            json_counters(stdout, cb, nb, &r->bond[e]);
            printf(", ");
        }
    }
    printf("\"goodput_gbps\": %.6f, \"efficiency\": %.6f, ", r->goodput_gbps, r->efficiency);
    if (isnan(s->ratio))
        printf("\"bandwidth_ratio\": null, ");
    else
        printf("\"bandwidth_ratio\": %.6f, ", s->ratio);
    printf("\"lost\": %llu, \"duplicated\": %llu, \"reordered\": %llu, \"corrupted\": %llu, "
           "\"lossless\": %s, ", (unsigned long long)VSUM(r, lost),
           (unsigned long long)VSUM(r, duplicated), (unsigned long long)VSUM(r, reordered),
           (unsigned long long)VSUM(r, corrupted), r->lossless ? "true" : "false");
    const rifl_hist *h[2] = { &r->lat, &r->lat_last };
    const char *hn[2] = { "latency_ns", "latency_last_frame_ns" };
    for (int k = 0; k < 2; k++)
        if (h[k]->n == 0) /* nothing delivered: no latency to give */
            printf("\"%s\": null%s", hn[k], k ? "" : ", ");
        else
            printf("\"%s\": {\"avg\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"p999\": %.3f, "
                   "\"max\": %.3f}%s", hn[k], rifl_hist_avg(h[k]) * r->frame_ns,
                   q_ns(r, h[k], 0.5), q_ns(r, h[k], 0.99), q_ns(r, h[k], 0.999),
                   (double)h[k]->max * r->frame_ns, k ? "" : ", ");
    printf("%s}\n", extra);
}

/* swept settings other than these get a column of their own, after the rest */
static const char csv_header[] =
    "ber,ber_ab,ber_ba,seed,frame_bits,bytes_per_dir,slots,fast_slots,wall_s,goodput_gbps,"
    "efficiency,bandwidth_ratio,lat_avg_ns,lat_p50_ns,lat_p99_ns,lat_p999_ns,lat_max_ns,"
    "last_avg_ns,last_p99_ns,last_max_ns,lost,duplicated,reordered,corrupted,lossless,"
    "complete,replay_cycles,verify_fail,bit_errors,frames_hit,stalled";
static const char *const csv_has[] = { "ber", "ber-ab", "ber-ba", "seed", "frame-bits", "bytes",
                                       NULL };


static bool in_csv(const char *key)
{
    for (const char *const *k = csv_has; *k; k++)
        if (!strcmp(*k, key))
            return true;
    return false;
}

static void print_csv(const rifl_linksim_config *c, const rifl_linksim_result *r,
                      const struct summary *s, const char *extra)
{
    printf("%g,%g,%g,%llu,%u,%llu,%llu,%llu,%.3f,%.6f,%.6f,", (c->ber[0] + c->ber[1]) / 2,
           c->ber[0], c->ber[1], (unsigned long long)c->seed, c->lane.frame_bits,
           (unsigned long long)c->bytes, (unsigned long long)r->slots,
           (unsigned long long)r->fast_slots, s->wall, r->goodput_gbps, r->efficiency);
    if (isnan(s->ratio))
        printf(",");
    else
        printf("%.6f,", s->ratio);
    if (r->lat.n == 0)
        printf(",,,,,,,,"); /* nothing delivered: the latency cells are empty */
    else
        printf("%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,", rifl_hist_avg(&r->lat) * r->frame_ns,
               q_ns(r, &r->lat, 0.5), q_ns(r, &r->lat, 0.99), q_ns(r, &r->lat, 0.999),
               (double)r->lat.max * r->frame_ns, rifl_hist_avg(&r->lat_last) * r->frame_ns,
               q_ns(r, &r->lat_last, 0.99), (double)r->lat_last.max * r->frame_ns);
    printf("%llu,%llu,%llu,%llu,%d,%d,%llu,%llu,%llu,%llu,%d%s\n", (unsigned long long)VSUM(r, lost),
           (unsigned long long)VSUM(r, duplicated), (unsigned long long)VSUM(r, reordered),
           (unsigned long long)VSUM(r, corrupted), r->lossless, r->complete,
           (unsigned long long)(r->lane[0].tx_replay_cycles + r->lane[1].tx_replay_cycles),
           (unsigned long long)(r->lane[0].rx_verify_fail + r->lane[1].rx_verify_fail),
           (unsigned long long)(r->ch[0].bit_errors + r->ch[1].bit_errors),
           (unsigned long long)(r->ch[0].frames_hit + r->ch[1].frames_hit), r->stalled, extra);
    fflush(stdout);
}

/* ---- running ------------------------------------------------------------ */

static int simulate(const rifl_linksim_config *c, rifl_linksim_result *r, const char *what,
                    bool force, double est_slots, double *wall)
{
    rifl_linksim_config cc = *c;
    struct prog p = { what, force, cli_now(), est_slots };
    cc.progress = on_progress;
    cc.progress_ctx = &p;
    char msg[1024] = "";
    int rc = rifl_linksim_run(&cc, r, msg, sizeof msg);
    cli_progress_done(force);
    *wall = cli_now() - p.t0;
    if (rc != RIFL_OK) {
        fprintf(stderr, "error: %s\n", msg[0] ? msg : "simulation failed");
        return 2;
    }
    return 0;
}

/* error-free run of the same configuration, for the bandwidth ratio */
static int reference(const rifl_linksim_config *c, bool force, double *goodput)
{
    rifl_linksim_config z = *c;
    z.ber[0] = z.ber[1] = 0;
    z.fast = true;
    rifl_linksim_result r;
    double wall;
    int rc = simulate(&z, &r, "error-free reference", force, 0, &wall);
    if (rc)
        return rc;
    *goodput = r.goodput_gbps;
    rifl_linksim_result_free(&r);
    return 0;
}

/* one sweep point: its configuration, reference goodput and result */
struct point {
    char label[256];         /* "ber = 1e-05, load = 0.5" */
    char csv[256];           /* ",0.5": swept values without a CSV column */
    char json[512];          /* ", \"sweep\": {\"load\": 0.5}" */
    rifl_linksim_config c;
    struct estimate est;
    double ref;
    bool with_ref;           /* --reference at this point */
    rifl_linksim_result r;
    double wall;
    int rc;
};

/* print one finished point; returns the exit status it contributes */
static int print_point(const struct opts *o, bool sweep, struct point *pt, int i)
{
    if (pt->rc)
        return 2;
    if (sweep && !o->csv && !o->json)
        printf("%s== %s\n", i ? "\n" : "", pt->label);
    struct summary s = { NAN, pt->ref, pt->wall };
    if (pt->with_ref && pt->ref > 0)
        s.ratio = pt->r.goodput_gbps / pt->ref;
    if (o->json)
        print_json(&pt->c, &pt->r, &s, pt->json);
    else if (o->csv)
        print_csv(&pt->c, &pt->r, &s, pt->csv);
    else
        print_human(&pt->c, &pt->r, &s);
    fflush(stdout);
    int status = pt->r.lossless ? 0 : 1;
    rifl_linksim_result_free(&pt->r);
    return status;
}

static bool is_ber_key(const char *k)
{
    return !strcmp(k, "ber") || !strcmp(k, "ber-ab") || !strcmp(k, "ber-ba");
}

/* the settings of one point (the current option values), checked */
static int prepare_point(const struct cli_opt *opts, struct opts *o, struct point *pt)
{
    const char *dir[2] = { "ber-ab", "ber-ba" };
    double v[2] = { o->ber_ab, o->ber_ba };
    for (int d = 0; d < 2; d++)
        if (v[d] < 0 && v[d] != -1)
            return cli_fail(opts, dir[d], "%g is not a bit error rate; use -1 (the same as "
                            "--ber) or a value from 0 to 0.5", v[d]);
    if (o->rx_period && !o->rx_stall)
        return cli_fail(opts, "rx-period", "a period needs --rx-stall N (slots without "
                        "reading in every period); drop --rx-period or add --rx-stall");
    if (build_config(o, &pt->c, false))
        return 2;
    char msg[1024] = "";
    if (rifl_linksim_check(&pt->c, msg, sizeof msg) != RIFL_OK)
        return cli_blame(opts, config_ok, o, msg);
    pt->with_ref = o->reference;
    estimate(&pt->c, o->reference, &pt->est);
    return 0;
}

#define LINK_OPTS 47 /* the options of `rifl sim link`, the end marker included */

/* The option table of `rifl sim link`, pointing into *o. */
static void link_options(struct opts *o, struct cli_opt opts[LINK_OPTS])
{
        const struct cli_opt table[] = {
            { "ber", CLI_DOUBLE, &o->ber, "bit error rate, both directions", 0, 0.5 },
            { "ber-ab", CLI_DOUBLE, &o->ber_ab, "bit error rate A -> B (-1: --ber)", -1, 0.5 },
            { "ber-ba", CLI_DOUBLE, &o->ber_ba, "bit error rate B -> A (-1: --ber)", -1, 0.5 },
            { "bytes", CLI_BYTES, &o->bytes, "payload bytes offered per direction (0: no limit, "
              "then --frames ends the run)", 0, 1e15 },
            { "frames", CLI_UINT, &o->frames, "stop after this many frame slots (0: no limit)", 0,
              1e15 },
            { "seed", CLI_UINT, &o->seed, "run seed (channels, packets, receivers derive from it)",
              0, 18446744073709551615.0 },
            { "frame-bits", CLI_UINT, &o->frame_bits, "frame width F: 64, 128, 256, 512, 1024 or "
              "2048", 64, 2048 },
            { "fid-bits", CLI_UINT, &o->fid_bits, "frame-ID width K (0: smallest safe, at least 5)",
              0, 12 },
            { "rate", CLI_DOUBLE, &o->rate, "lane rate, Gbit/s (0: 112 / lanes)", 0, 100000 },
            { "cable", CLI_DOUBLE, &o->cable, "cable length, m", 0, 100000 },
            { "ns-per-m", CLI_DOUBLE, &o->ns_per_m, "propagation delay, ns/m", RIFL_LINK_MIN_NS_PER_M, 10000 },
            { "transceiver-ns", CLI_DOUBLE, &o->xcvr, "one-way transceiver latency, ns", 0, 1e7 },
            { "pipeline", CLI_UINT, &o->pipeline, "engine pipeline added to the round trip, frames",
              0, 1000000 },
            { "txq", CLI_UINT, &o->txq, "transmit queue, frames", 1, 16777216 },
            { "rx-buffer", CLI_UINT, &o->rxbuf, "receive buffer, frames (0: 2^(K+1))", 0, 16777216 },
            { "lock", CLI_UINT, &o->lock, "legal SYN headers before the receiver is aligned", 0,
              65536 },
            { "size", CLI_STRING, &o->size, "packet sizes in bytes: N, MIN-MAX (uniform) or "
              "N1,N2,.. (at most 256)", 0, 0 },
            { "load", CLI_DOUBLE, &o->load, "offered load per direction, fraction of the line, above "
              "0 (1: saturate)", 0, 1 },
            { "rx-ready", CLI_DOUBLE, &o->rx_ready, "probability that a receiver reads in a slot, "
              "above 0", 0, 1 },
            { "rx-stall", CLI_UINT, &o->rx_stall, "receivers stop reading for N slots ...", 0, 1e15 },
            { "rx-period", CLI_UINT, &o->rx_period, "... out of every N slots", 0, 1e15 },
            { "fast", CLI_BOOL, &o->fast, "fast-forward error-free stretches", 0, 0 },
            { "carry", CLI_BOOL, &o->carry, "with --fast: recoveries from lone frame hits go as "
              "counts, learned from the first such hit each way (same results)", 0, 0 },
            { "encode-all", CLI_FLAG, &o->encode_all, "build and decode every frame's wire bytes "
              "(same results, slower: a check)", 0, 0 },
            { "reference", CLI_BOOL, &o->reference, "run error-free too, for the bandwidth ratio", 0, 0 },
            { "lanes", CLI_UINT, &o->lanes, "lanes of the link: 1, or 2 to 16 bonded (rifl/bond.h; "
              "docs/multilane.md)", 1, 16 },
            { "bonding", CLI_STRING, &o->bonding, "bonded lanes: spatial (one group of all lanes) "
              "or temporal (groups of one)", 0, 0 },
            { "group-lanes", CLI_UINT, &o->group_lanes, "bonded lanes: groups of S lanes (0: all, "
              "spatial)", 0, 16 },
            { "skew-bits", CLI_STRING, &o->skew, "bonded lanes: extra line length per lane in bits, "
              "lane 0 first (whole frames unless --serial); the round trip grows to match", 0, 0 },
            { "ppm", CLI_DOUBLE, &o->ppm, "clock offset: end A's clock runs this many ppm faster "
              "than end B's (negative: slower); compensation as rifl-multilane section 3", -10000,
              10000 },
            { "ppm-tolerance", CLI_DOUBLE, &o->ppm_tol, "largest clock offset accepted, ppm", 0,
              10000 },
            { "dead-lane", CLI_STRING, &o->dead, "bonded serial lanes: LANE@SLOT, that lane's lines "
              "carry nothing from that slot on (needs --frames)", 0, 0 },
            { "swap-lanes", CLI_STRING, &o->swap, "bonded lanes: I,J, their lines crossed both "
              "ways", 0, 0 },
            { "lane-tags", CLI_FLAG, &o->lane_tags, "serial lanes tag their control frames with "
              "their number and check the tags they get (rifl-multilane 5.1)", 0, 0 },
            { "serial", CLI_FLAG, &o->serial, "serial lanes: each direction a bit stream in which "
              "the receiver's aligner finds the frames (docs/multilane.md)", 0, 0 },
            { "bit-offset", CLI_STRING, &o->bit_offset, "serial lanes: bits each line carries "
              "beyond the cable delay: random (from the seed), N, or A,B per direction", 0, 0 },
            { "slip-rate", CLI_DOUBLE, &o->slip_rate, "serial lanes: bit slips per received frame, "
              "each direction", 0, 1 },
            { "up-log2", CLI_UINT, &o->up_log2, "serial lanes: rx_up after 2^N aligned words (20: "
              "the reference; 12: its simulation build)", 1, 24 },
            { "hold", CLI_UINT, &o->hold, "serial lanes: frames held until that many more "
              "arrived aligned (0: none)", 0, 4096 },
            { "pcap", CLI_STRING, &o->pcap, "write the frames that arrive at both ends to this "
              "pcap file (docs/capture.md; every slot is stepped)", 0, 0 },
            { "pcap-slots", CLI_UINT, &o->pcap_slots, "capture the first N slots only", 1, 1e12 },
            { "sweep", CLI_STRING, &o->sweep, "runs over values, 'KEY=FROM:TO:STEP KEY2=V1,V2' (STEP "
              "+D or xF), e.g. ber=1e-12:1e-5:x10^0.25", 0, 0 },
            { "csv", CLI_FLAG, &o->csv, "CSV: a header and one line per run", 0, 0 },
            { "json", CLI_FLAG, &o->json, "JSON: one summary object per run", 0, 0 },
            { "progress", CLI_FLAG, &o->progress, "progress line even when stderr is not a terminal", 0, 0 },
            { "jobs", CLI_UINT, &o->jobs, "sweep points run at once (0 = one per CPU); results do not "
              "depend on it", 0, 256 },
            CLI_END,
        };
    _Static_assert(sizeof table / sizeof table[0] == LINK_OPTS, "LINK_OPTS counts the options");
    memcpy(opts, table, sizeof table);
}

/* A sweep point's label for people, and its swept values for CSV and JSON. */
static void label_point(const struct cli_sweep *sw, struct point *pt, size_t i)
{
    size_t L = 0;
    for (unsigned k = 0; k < sw->nkeys && L < sizeof pt->label; k++)
        L += (size_t)snprintf(pt->label + L, sizeof pt->label - L, "%s%s = %s", k ? ", " : "",
                              sw->key[k].opt->name, cli_sweep_value(sw, i, k));
    size_t C = 0, J = (size_t)snprintf(pt->json, sizeof pt->json, ", \"sweep\": {");
    for (unsigned k = 0; k < sw->nkeys; k++) {
        const char *v = cli_sweep_value(sw, i, k);
        bool numeric = cli_json_number(v);
        if (!in_csv(sw->key[k].opt->name) && C < sizeof pt->csv)
            C += (size_t)snprintf(pt->csv + C, sizeof pt->csv - C, ",%s", v);
        if (J < sizeof pt->json)
            J += (size_t)snprintf(pt->json + J, sizeof pt->json - J, "%s\"%s\": %s%s%s",
                                  k ? ", " : "", sw->key[k].opt->name, numeric ? "" : "\"", v,
                                  numeric ? "" : "\"");
    }
    if (J < sizeof pt->json)
        snprintf(pt->json + J, sizeof pt->json - J, "}");
}

/* What the points will cost, checked before anything runs. */
struct plan {
    double total_s, longest_s;
    int longest;
};

/* Every point's settings, and its estimated run time: a point estimated
 * above a day needs --frames.  Nonzero when one is refused. */
static int prepare_points(const struct cli_opt *opts, struct opts *o, struct cli_sweep *sw,
                          struct point *pts, size_t npoints, struct plan *pl)
{
    for (size_t i = 0; i < npoints; i++) {
        if (o->sweep) {
            label_point(sw, &pts[i], i);
            if (cli_sweep_apply(sw, i, opts))
                return -1;
        }
        if (prepare_point(opts, o, &pts[i]))
            return -1;
        const struct estimate *e = &pts[i].est;
        pl->total_s += e->seconds;
        if (e->seconds > pl->longest_s) {
            pl->longest_s = e->seconds;
            pl->longest = (int)i;
        }
        if (e->seconds > EST_REFUSE_S && !pts[i].c.max_slots) {
            char why[600], dur[32];
            explain_estimate(why, sizeof why, &pts[i].c, e);
            cli_format_duration(dur, sizeof dur, e->seconds);
            const char *cause = long_run_cause(o, e);
            bool at_point = o->sweep && !cli_sweep_has(sw, cause);
            fprintf(stderr, "error: %s%s%s%s: %s, about %s here; a run estimated above a day "
                    "needs a bound: add --frames N to stop after N frame slots (it then "
                    "reports what arrived; about %.2g slots run per second), or lower --%s\n",
                    cli_where(opts, cause), at_point ? ", at sweep point (" : "",
                    at_point ? pts[i].label : "", at_point ? ")" : "", why, dur,
                    e->step_speed, cause);
            return -1;
        }
    }
    return 0;
}


/* A warning when the whole run is estimated above a minute. */
static void warn_long(const struct opts *o, const struct point *pts, const struct plan *pl,
                      unsigned jobs)
{
    double wall_est = fmax(pl->total_s / (jobs ? jobs : 1), pl->longest_s);
    if (wall_est <= EST_WARN_S)
        return;
    char why[600], dur[32];
    explain_estimate(why, sizeof why, &pts[pl->longest].c, &pts[pl->longest].est);
    cli_format_duration(dur, sizeof dur, wall_est);
    fprintf(stderr, "warning: this run is estimated to take about %s%s%s%s: %s; --frames N "
            "stops each run after N frame slots and a smaller --bytes shortens it\n", dur,
            o->sweep ? " (longest point: " : "", o->sweep ? pts[pl->longest].label : "",
            o->sweep ? ")" : "", why);
}

static void print_csv_header(const struct opts *o, const struct cli_sweep *sw)
{
    fputs(csv_header, stdout);
    for (unsigned k = 0; o->sweep && k < sw->nkeys; k++)
        if (!in_csv(sw->key[k].opt->name))
            printf(",%s", sw->key[k].opt->name);
    putchar('\n');
}

/* The error-free references, in order.  A reference depends on everything
 * but the bit error rates, so a point whose other settings equal the point
 * before shares its reference. */
static int run_references(const struct opts *o, const struct cli_sweep *sw, struct point *pts,
                          size_t npoints)
{
    double ref_goodput = NAN;
    for (size_t i = 0; i < npoints; i++) {
        bool same = i > 0;
        for (unsigned k = 0; o->sweep && same && k < sw->nkeys; k++)
            if (!is_ber_key(sw->key[k].opt->name) &&
                strcmp(cli_sweep_value(sw, i, k), cli_sweep_value(sw, i - 1, k)))
                same = false;
        if (i > 0 && pts[i].with_ref && !pts[i - 1].with_ref)
            same = false; /* no reference was run for the point before */
        if (pts[i].with_ref && !same && reference(&pts[i].c, o->progress, &ref_goodput))
            return -1;
        pts[i].ref = pts[i].with_ref ? ref_goodput : NAN;
    }
    return 0;
}

/* The points one after the other; returns the worst exit status. */
/* --pcap: the observer writes what arrives at each end, slot by slot */
struct capture_run {
    rifl_capture *cap;
    unsigned frame_bits;
    double frame_ns;
    uint64_t slots;          /* slots to capture */
    bool failed;
};

static bool capture_slot(void *ctx, const rifl_linksim_slot *s)
{
    struct capture_run *c = ctx;
    if (c->failed || s->t >= c->slots)
        return true;
    uint64_t t_ns = (uint64_t)llround((double)s->t * c->frame_ns);
    if (cli_pcap_arrivals(c->cap, s->wire->arrived, c->frame_bits, s->t, t_ns) != RIFL_OK)
        c->failed = true;
    return true;
}

static int run_captured(const struct opts *o, struct point *pt)
{
    struct capture_run c = { NULL, pt->c.lane.frame_bits,
                             pt->c.lane.frame_bits / pt->c.lane.link.lane_rate_gbps,
                             o->pcap_slots, false };
    char msg[512] = "";
    if (rifl_capture_open(o->pcap, c.frame_bits, 1, &c.cap, msg, sizeof msg) != RIFL_OK) {
        fprintf(stderr, "error: --pcap: %s\n", msg);
        return 2;
    }
    pt->c.observe = capture_slot;
    pt->c.hook_ctx = &c;
    pt->c.fast = false;
    pt->rc = simulate(&pt->c, &pt->r, "simulating", o->progress, pt->est.slots, &pt->wall);
    uint64_t frames = rifl_capture_get_stats(c.cap)->frames;
    if (pt->rc) {
        /* (the simulation said why) */
        if (rifl_capture_close(c.cap, msg, sizeof msg) == RIFL_OK && !c.failed)
            fprintf(stderr, "rifl sim link: the run failed; the %llu frames before are in %s\n",
                    (unsigned long long)frames, o->pcap);
        return 2;
    }
    if (rifl_capture_close(c.cap, msg, sizeof msg) != RIFL_OK || c.failed) {
        fprintf(stderr, "error: --pcap: %s\n", msg[0] ? msg : "writing the capture failed");
        if (!pt->rc)
            rifl_linksim_result_free(&pt->r);
        return 2;
    }
    fprintf(stderr, "rifl sim link: %llu frames captured to %s (K=%u)\n",
            (unsigned long long)frames, o->pcap, pt->c.lane.fid_bits);
    return print_point(o, false, pt, 0);
}

static int run_serial(const struct opts *o, struct point *pts, size_t npoints)
{
    if (o->pcap)
        return run_captured(o, &pts[0]);
    int status = 0;
    for (size_t i = 0; i < npoints; i++) {
        char what[64];
        snprintf(what, sizeof what, "simulating (point %zu of %zu)", i + 1, npoints);
        pts[i].rc = simulate(&pts[i].c, &pts[i].r, o->sweep ? what : "simulating", o->progress,
                             pts[i].est.slots, &pts[i].wall);
        int st = print_point(o, o->sweep != NULL, &pts[i], (int)i);
        status = st > status ? st : status;
    }
    return status;
}

struct sweep_run {
    const struct opts *o;
    struct point *pts;
};

/* Point i on a worker thread (cli_jobs.c). */
static void run_one(void *ctx, size_t i)
{
    struct point *pt = &((struct sweep_run *)ctx)->pts[i];
    rifl_linksim_config cc = pt->c;
    cc.progress = NULL; /* the main thread reports progress */
    double t0 = cli_now();
    char msg[1024] = "";
    int rc = rifl_linksim_run(&cc, &pt->r, msg, sizeof msg);
    if (rc != RIFL_OK)
        fprintf(stderr, "error: point %zu: %s\n", i + 1, msg[0] ? msg : "simulation failed");
    pt->wall = cli_now() - t0;
    pt->rc = rc == RIFL_OK ? 0 : 2;
}

static int print_one(void *ctx, size_t i)
{
    struct sweep_run *sr = ctx;
    return print_point(sr->o, true, &sr->pts[i], (int)i);
}

/* The points on `jobs` threads, longest first so that they do not finish
 * alone; each run has its own seeds and state, so the results do not depend
 * on the number of jobs, and they are printed in sweep order.  Returns the
 * worst exit status, or -1 without memory. */
static int run_parallel(const struct opts *o, struct point *pts, size_t npoints, unsigned jobs)
{
    double *cost = malloc(npoints * sizeof *cost);
    if (!cost) {
        fprintf(stderr, "error: out of memory\n");
        return -1;
    }
    for (size_t i = 0; i < npoints; i++)
        cost[i] = pts[i].est.seconds;
    struct sweep_run sr = { o, pts };
    struct cli_jobs j = { .n = npoints, .cost = cost, .run = run_one, .print = print_one,
                          .ctx = &sr, .progress = o->progress };
    int status = cli_jobs_run(&j, jobs);
    free(cost);
    return status;
}

/* Everything after the options: check every point, then run them. */
static int run_points(const struct cli_opt *opts, struct opts *o, struct cli_sweep *sw,
                      struct point *pts, size_t npoints)
{
    struct plan pl = { 0 };
    if (prepare_points(opts, o, sw, pts, npoints, &pl))
        return 2;
    unsigned jobs = cli_job_count(o->jobs, npoints);
    warn_long(o, pts, &pl, jobs);
    bool seed_swept = o->sweep && cli_sweep_has(sw, "seed");
    if (seed_swept)
        fprintf(stderr, "rifl sim link: the seed of each point is in its sweep values\n");
    else
        fprintf(stderr, "rifl sim link: seed %llu\n", (unsigned long long)o->seed);
    if (o->csv)
        print_csv_header(o, sw);
    if (run_references(o, sw, pts, npoints))
        return 2;
    int status = jobs <= 1 ? run_serial(o, pts, npoints) : run_parallel(o, pts, npoints, jobs);
    if (status < 0)
        return 2;
    if (!seed_swept)
        fprintf(stderr, "seed %llu\n", (unsigned long long)o->seed);
    return status;
}

static int run(int argc, char **argv)
{
    struct opts o = {
        .ber = 0, .ber_ab = -1, .ber_ba = -1, .bytes = 10000000, .frames = 0, .seed = 1,
        .frame_bits = 256, .fid_bits = 0, .pipeline = 2, .txq = 1024, .rxbuf = 0, .lock = 64,
        .rate = 0, .lanes = 1, .cable = 10, .ns_per_m = 5, .xcvr = 80, .size = "1-8192", .load = 1,
        .rx_ready = 1, .fast = true, .carry = true, .reference = true, .up_log2 = 20,
        .hold = RIFL_LANE_RX_HOLD, .ppm_tol = 200, .pcap_slots = 100000,
    };
    struct cli_opt opts[LINK_OPTS];
    link_options(&o, opts);
    g_opts = opts;
    int rc = cli_parse(argc, argv, opts, "[options]",
                       "Simulates two RIFL lanes connected by a cable with random bit errors,\n"
                       "saturating (or loaded) traffic both ways, and a validator checking every\n"
                       "delivered byte.  Defaults: the paper's reference link (256-bit frames,\n"
                       "112 Gbit/s, 10 m cable, 80 ns transceivers), packets of 1 to 8192 bytes.\n"
                       "The run time is estimated before the run: a warning names --frames and\n"
                       "--bytes above a minute, and a run estimated above a day (a lossy link\n"
                       "that delivers almost nothing) is refused unless --frames bounds it.",
                       NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (o.csv && o.json)
        return cli_fail(opts, "csv,json", "choose one of --csv and --json");
    if (o.pcap && o.sweep)
        return cli_fail(opts, "pcap", "a capture is of one run: drop --sweep, or run each point "
                        "on its own with --pcap");
    if (o.pcap && (o.lanes > 1 || o.serial || o.ppm != 0))
        return cli_fail(opts, "pcap", "captures are of one aligned lane per direction on one "
                        "clock: drop --lanes, --serial and --ppm");
    if (o.pcap)
        o.jobs = 1;
    struct cli_sweep sw = { 0 };
    static const char *const fixed[] = { "sweep", "size", "csv", "json", "progress", "jobs",
                                         NULL };
    if (o.sweep && cli_sweep_parse(&sw, o.sweep, opts, fixed,
                                   "; sweep a numeric setting such as ber, load, cable or bytes"))
        return 2;
    /* settings that would change nothing (unless the sweep makes them
     * count at some point) */
    bool serial = o.serial || cli_sweep_has(&sw, "serial");
    bool bonded = o.lanes > 1 || cli_sweep_has(&sw, "lanes");
    if ((!serial && (cli_unused(opts, "hold", "without serial lanes (--serial)") ||
                     cli_unused(opts, "up-log2", "without serial lanes (--serial)"))) ||
        (!bonded && cli_unused(opts, "bonding", "on one lane (give --lanes 2 or more)")) ||
        (!o.pcap && cli_unused(opts, "pcap-slots", "without --pcap")) ||
        (!o.sweep && cli_unused(opts, "jobs", "without --sweep")) ||
        (!o.fast && cli_unused(opts, "carry", "with --fast false (every slot is stepped)"))) {
        cli_sweep_free(&sw);
        return 2;
    }
    size_t npoints = o.sweep ? sw.npoints : 1;
    struct point *pts = calloc(npoints, sizeof *pts);
    int status = 2;
    if (pts)
        status = run_points(opts, &o, &sw, pts, npoints);
    else
        fprintf(stderr, "error: out of memory\n");
    free(pts);
    cli_sweep_free(&sw);
    return status;
}

const struct rifl_command rifl_cmd_sim_link = {
    "sim link", "simulate a RIFL link with bit errors: goodput, latency, lossless check", run
};

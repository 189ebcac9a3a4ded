/* `rifl sim link`: simulate two RIFL lanes over a cable with bit errors,
 * with traffic both ways, and report goodput, bandwidth efficiency and
 * ratio, packet latency, every counter and the lossless verdict; or sweep
 * one setting over a range. */
#include <math.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rifl/linksim.h"

struct opts {
    double ber, ber_ab, ber_ba;
    uint64_t bytes, frames, seed;
    uint64_t frame_bits, fid_bits, pipeline, txq, rxbuf, lock;
    double rate, cable, ns_per_m, xcvr;
    const char *size;
    double load, rx_ready;
    uint64_t rx_stall, rx_period;
    bool fast, encode_all, csv, json, progress, reference, quiet;
    uint64_t jobs;
    const char *sweep;
};

static size_t size_list[256];

static int parse_sizes(const char *s, rifl_linksim_config *c)
{
    char *end;
    c->len_list = NULL;
    c->len_count = 0;
    if (strchr(s, ',')) {
        unsigned n = 0;
        const char *p = s;
        while (*p) {
            unsigned long long v = strtoull(p, &end, 10);
            if (end == p || (*end && *end != ',') || n >= 256 || v == 0)
                goto bad;
            size_list[n++] = (size_t)v;
            p = *end ? end + 1 : end;
        }
        c->len_list = size_list;
        c->len_count = n;
        c->min_len = 1;
        return 0;
    }
    unsigned long long a = strtoull(s, &end, 10);
    if (end == s)
        goto bad;
    unsigned long long b = a;
    if (*end == '-' || *end == ':') {
        const char *q = end + 1;
        b = strtoull(q, &end, 10);
        if (end == q)
            goto bad;
    }
    if (*end || a == 0 || b < a)
        goto bad;
    c->min_len = (size_t)a;
    c->max_len = (size_t)b;
    return 0;
bad:
    fprintf(stderr, "error: option --size: '%s' is not a packet size; use N, MIN-MAX or a "
            "list N1,N2,... of sizes of at least 1 byte\n", s);
    return 2;
}

static int build_config(const struct opts *o, rifl_linksim_config *c)
{
    rifl_linksim_defaults(c);
    c->ber[0] = o->ber_ab >= 0 ? o->ber_ab : o->ber;
    c->ber[1] = o->ber_ba >= 0 ? o->ber_ba : o->ber;
    c->seed = o->seed;
    c->bytes = o->bytes;
    c->max_slots = o->frames;
    c->lane.frame_bits = (unsigned)o->frame_bits;
    c->lane.link.lane_rate_gbps = o->rate;
    c->lane.link.cable_m = o->cable;
    c->lane.link.ns_per_m = o->ns_per_m;
    c->lane.link.transceiver_ns = o->xcvr;
    c->lane.pipeline_frames = (unsigned)o->pipeline;
    c->lane.tx_queue_frames = (unsigned)o->txq;
    c->lane.rx_buffer_frames = (unsigned)o->rxbuf;
    c->lane.rx_lock_frames = (unsigned)o->lock;
    if (o->fid_bits)
        c->lane.fid_bits = (unsigned)o->fid_bits;
    else {
        unsigned k = rifl_lane_min_fid_bits(&c->lane.link, c->lane.frame_bits,
                                            c->lane.pipeline_frames);
        c->lane.fid_bits = k < 5 ? 5 : k;
    }
    c->load = o->load;
    c->rx_ready = o->rx_ready;
    c->rx_stall = o->rx_stall;
    c->rx_period = o->rx_period;
    c->fast = o->fast;
    c->encode_all = o->encode_all;
    return parse_sizes(o->size, c);
}

struct prog {
    const char *what;
    bool force;
    double t0;
};

static void on_progress(void *ctx, double f, uint64_t slots)
{
    struct prog *p = ctx;
    char extra[96];
    double dt = cli_now() - p->t0;
    snprintf(extra, sizeof extra, "%.3g slots, %.1f s", (double)slots, dt);
    cli_progress(p->what, f, extra, p->force);
}

/* ---- output ------------------------------------------------------------- */

struct counter {
    const char *name;
    size_t off;
};
#define C(f) { #f, offsetof(rifl_lane_stats, f) }
static const struct counter counters[] = {
    C(tx_slots), C(tx_idle), C(tx_pause), C(tx_retransmit), C(tx_replayed),
    C(tx_replay_cycles), C(tx_clock_comp), C(tx_fc_wait), C(tx_err_wait),
    C(tx_packets), C(tx_bytes), C(tx_rejected), C(tx_ext), C(rx_slots), C(rx_empty),
    C(rx_not_aligned), C(rx_bad_syn), C(rx_align_lost), C(rx_verify_fail),
    C(rx_frame_errors), C(rx_good_data), C(rx_skipped), C(rx_control), C(rx_bad_format),
    C(rx_overflow), C(rx_unknown_key), C(flag_pause_raised), C(flag_retransmit_raised),
    C(fc_on_sent), C(fc_off_sent), C(fc_on_received), C(fc_off_received), C(rx_packets),
    C(rx_bytes), C(rx_ext),
};
#undef C

/* every counter as (name, value) pairs, arrays expanded */
static unsigned all_counters(const rifl_lane_stats *st, const char **names, uint64_t *vals)
{
    static char buf[64][40];
    unsigned n = 0, b = 0;
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
        names[n] = counters[i].name;
        vals[n++] = *(const uint64_t *)((const char *)st + counters[i].off);
    }
    for (int s = 0; s < RIFL_TX_STATE_COUNT; s++) {
        snprintf(buf[b], sizeof buf[b], "tx_state_%s", rifl_tx_state_name((rifl_tx_state)s));
        for (char *p = buf[b]; *p; p++)
            *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        names[n] = buf[b++];
        vals[n++] = st->tx_state_slots[s];
    }
    for (int k = 0; k < RIFL_KIND_COUNT; k++) {
        snprintf(buf[b], sizeof buf[b], "tx_frames_%s", rifl_frame_kind_name((rifl_frame_kind)k));
        names[n] = buf[b++];
        vals[n++] = st->tx_frames[k];
        snprintf(buf[b], sizeof buf[b], "rx_delivered_%s",
                 rifl_frame_kind_name((rifl_frame_kind)k));
        names[n] = buf[b++];
        vals[n++] = st->rx_delivered[k];
    }
    static const char *keys[3] = { "rx_key_idle", "rx_key_pause", "rx_key_retransmit" };
    for (int k = 0; k < 3; k++) {
        names[n] = keys[k];
        vals[n++] = st->rx_keys[k];
    }
    return n;
}

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
    printf("run: %.4g frame slots (%.1f%% fast-forwarded) in %.2f s = %.3g simulated "
           "frames/s both ways\n", (double)r->slots,
           r->slots ? 100.0 * (double)r->fast_slots / (double)r->slots : 0.0, s->wall,
           s->wall > 0 ? 2.0 * (double)r->slots / s->wall : 0.0);
    printf("delivered: %llu + %llu packets, %llu + %llu bytes (A->B + B->A)%s\n",
           (unsigned long long)r->val[0].packets_ok, (unsigned long long)r->val[1].packets_ok,
           (unsigned long long)r->val[0].bytes_ok, (unsigned long long)r->val[1].bytes_ok,
           r->complete ? "" : ", run stopped before everything offered arrived");
    printf("goodput: %.3f Gbit/s per direction, bandwidth efficiency %.4f", r->goodput_gbps,
           r->efficiency);
    if (!isnan(s->ratio))
        printf(", bandwidth ratio %.4f (error-free run: %.3f Gbit/s)", s->ratio,
               s->ref_goodput);
    printf("\n");
    printf("latency (ns), first bit sent to last bit delivered: avg %.1f  p50 %.1f  p99 %.1f  "
           "p99.9 %.1f  max %.1f\n", rifl_hist_avg(&r->lat) * r->frame_ns,
           q_ns(r, &r->lat, 0.5), q_ns(r, &r->lat, 0.99), q_ns(r, &r->lat, 0.999),
           (double)r->lat.max * r->frame_ns);
    printf("latency (ns), last frame sent to delivered:          avg %.1f  p50 %.1f  p99 %.1f  "
           "p99.9 %.1f  max %.1f\n", rifl_hist_avg(&r->lat_last) * r->frame_ns,
           q_ns(r, &r->lat_last, 0.5), q_ns(r, &r->lat_last, 0.99),
           q_ns(r, &r->lat_last, 0.999), (double)r->lat_last.max * r->frame_ns);
    printf("channel: A->B %llu bit errors in %llu frames hit, B->A %llu in %llu\n",
           (unsigned long long)r->ch[0].bit_errors, (unsigned long long)r->ch[0].frames_hit,
           (unsigned long long)r->ch[1].bit_errors, (unsigned long long)r->ch[1].frames_hit);
    printf("lossless: %s (lost %llu, duplicated %llu, reordered %llu, corrupted %llu)\n",
           r->lossless ? "yes" : "NO", (unsigned long long)VSUM(r, lost),
           (unsigned long long)VSUM(r, duplicated), (unsigned long long)VSUM(r, reordered),
           (unsigned long long)VSUM(r, corrupted));
    const char *na[128], *nb[128];
    uint64_t va[128], vb[128];
    unsigned n = all_counters(&r->lane[0], na, va);
    all_counters(&r->lane[1], nb, vb);
    printf("counters:%*s %20s %20s\n", 17, "", "lane A", "lane B");
    for (unsigned i = 0; i < n; i++)
        if (va[i] || vb[i])
            printf("  %-24s %20llu %20llu\n", na[i], (unsigned long long)va[i],
                   (unsigned long long)vb[i]);
}

static void print_json(const rifl_linksim_config *c, const rifl_linksim_result *r,
                       const struct summary *s)
{
    printf("{\"seed\": %llu, \"ber_ab\": %g, \"ber_ba\": %g, \"frame_bits\": %u, "
           "\"lane_rate_gbps\": %g, \"cable_m\": %g, \"transceiver_ns\": %g, "
           "\"delay_frames\": %u, \"fid_bits\": %u, \"frame_ns\": %.6f, \"slots\": %llu, "
           "\"fast_slots\": %llu, \"wall_s\": %.3f, \"complete\": %s, ",
           (unsigned long long)c->seed, c->ber[0], c->ber[1], c->lane.frame_bits,
           c->lane.link.lane_rate_gbps, c->lane.link.cable_m, c->lane.link.transceiver_ns,
           r->delay_frames, c->lane.fid_bits, r->frame_ns, (unsigned long long)r->slots,
           (unsigned long long)r->fast_slots, s->wall, r->complete ? "true" : "false");
    printf("\"channel_seed\": [%llu, %llu], \"bit_errors\": [%llu, %llu], "
           "\"frames_hit\": [%llu, %llu], ", (unsigned long long)r->channel_seed[0],
           (unsigned long long)r->channel_seed[1], (unsigned long long)r->ch[0].bit_errors,
           (unsigned long long)r->ch[1].bit_errors, (unsigned long long)r->ch[0].frames_hit,
           (unsigned long long)r->ch[1].frames_hit);
    printf("\"packets\": [%llu, %llu], \"bytes\": [%llu, %llu], ",
           (unsigned long long)r->val[0].packets_ok, (unsigned long long)r->val[1].packets_ok,
           (unsigned long long)r->val[0].bytes_ok, (unsigned long long)r->val[1].bytes_ok);
    for (int l = 0; l < 2; l++) {
        const char *nm[128];
        uint64_t v[128];
        unsigned n = all_counters(&r->lane[l], nm, v);
        printf("\"lane_%c\": {", 'a' + l);
        for (unsigned i = 0; i < n; i++)
            printf("%s\"%s\": %llu", i ? ", " : "", nm[i], (unsigned long long)v[i]);
        printf("}, ");
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
        printf("\"%s\": {\"avg\": %.3f, \"p50\": %.3f, \"p99\": %.3f, \"p999\": %.3f, "
               "\"max\": %.3f}%s", hn[k], rifl_hist_avg(h[k]) * r->frame_ns, q_ns(r, h[k], 0.5),
               q_ns(r, h[k], 0.99), q_ns(r, h[k], 0.999), (double)h[k]->max * r->frame_ns,
               k ? "" : ", ");
    printf("}\n");
}

static const char csv_header[] =
    "ber,ber_ab,ber_ba,seed,frame_bits,bytes_per_dir,slots,fast_slots,wall_s,goodput_gbps,"
    "efficiency,bandwidth_ratio,lat_avg_ns,lat_p50_ns,lat_p99_ns,lat_p999_ns,lat_max_ns,"
    "last_avg_ns,last_p99_ns,last_max_ns,lost,duplicated,reordered,corrupted,lossless,"
    "complete,replay_cycles,verify_fail,bit_errors,frames_hit\n";

static void print_csv(const rifl_linksim_config *c, const rifl_linksim_result *r,
                      const struct summary *s)
{
    printf("%g,%g,%g,%llu,%u,%llu,%llu,%llu,%.3f,%.6f,%.6f,", (c->ber[0] + c->ber[1]) / 2,
           c->ber[0], c->ber[1], (unsigned long long)c->seed, c->lane.frame_bits,
           (unsigned long long)c->bytes, (unsigned long long)r->slots,
           (unsigned long long)r->fast_slots, s->wall, r->goodput_gbps, r->efficiency);
    if (isnan(s->ratio))
        printf(",");
    else
        printf("%.6f,", s->ratio);
    printf("%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,", rifl_hist_avg(&r->lat) * r->frame_ns,
           q_ns(r, &r->lat, 0.5), q_ns(r, &r->lat, 0.99), q_ns(r, &r->lat, 0.999),
           (double)r->lat.max * r->frame_ns, rifl_hist_avg(&r->lat_last) * r->frame_ns,
           q_ns(r, &r->lat_last, 0.99), (double)r->lat_last.max * r->frame_ns);
    printf("%llu,%llu,%llu,%llu,%d,%d,%llu,%llu,%llu,%llu\n", (unsigned long long)VSUM(r, lost),
           (unsigned long long)VSUM(r, duplicated), (unsigned long long)VSUM(r, reordered),
           (unsigned long long)VSUM(r, corrupted), r->lossless, r->complete,
           (unsigned long long)(r->lane[0].tx_replay_cycles + r->lane[1].tx_replay_cycles),
           (unsigned long long)(r->lane[0].rx_verify_fail + r->lane[1].rx_verify_fail),
           (unsigned long long)(r->ch[0].bit_errors + r->ch[1].bit_errors),
           (unsigned long long)(r->ch[0].frames_hit + r->ch[1].frames_hit));
    fflush(stdout);
}

/* ---- running ------------------------------------------------------------ */

static int simulate(const rifl_linksim_config *c, rifl_linksim_result *r, const char *what,
                    bool force, double *wall)
{
    rifl_linksim_config cc = *c;
    struct prog p = { what, force, cli_now() };
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
    int rc = simulate(&z, &r, "error-free reference", force, &wall);
    if (rc)
        return rc;
    *goodput = r.goodput_gbps;
    rifl_linksim_result_free(&r);
    return 0;
}

struct sweep {
    char key[32];
    double start, stop, step;
    bool mult;
};

static int parse_sweep(const char *s, struct sweep *sw)
{
    const char *eq = strchr(s, '=');
    if (!eq || eq == s || (size_t)(eq - s) >= sizeof sw->key)
        goto bad;
    memcpy(sw->key, s, (size_t)(eq - s));
    sw->key[eq - s] = '\0';
    char *end;
    sw->start = strtod(eq + 1, &end);
    if (*end != ':')
        goto bad;
    sw->stop = strtod(end + 1, &end);
    if (*end != ':')
        goto bad;
    const char *st = end + 1;
    sw->mult = false;
    if (*st == 'x' || *st == '*') {
        sw->mult = true;
        st++;
    } else if (*st == '+')
        st++;
    double v = strtod(st, &end);
    if (end == st)
        goto bad;
    if (*end == '^') {
        const char *e = end + 1;
        double ex = strtod(e, &end);
        if (end == e)
            goto bad;
        v = pow(v, ex);
    }
    if (*end)
        goto bad;
    sw->step = v;
    if (sw->mult ? !(v > 1.0) || !(sw->start > 0) : !(v > 0.0))
        goto bad;
    if (!(sw->stop >= sw->start))
        goto bad;
    return 0;
bad:
    fprintf(stderr, "error: option --sweep: '%s' is not a sweep; use KEY=START:STOP:STEP with "
            "STEP as +D (add) or xF (multiply, F > 1, e.g. x10^0.25), such as "
            "ber=1e-12:1e-5:x10^0.25\n", s);
    return 2;
}

/* one sweep point: its configuration, reference goodput and result */
struct point {
    char val[64];
    rifl_linksim_config c;
    double ref;
    rifl_linksim_result r;
    double wall;
    int rc;
    bool done;
};

struct pool {
    struct point *pts;
    const int *order;        /* points in the order they start */
    int n, next, finished;
    pthread_mutex_t lock;
};

/* Rough work of a point, so that the longest start first and do not finish
 * alone at the end: frames to send, times the slots each frame error costs
 * (a replay cycle of about 2^(K+1) slots). */
static double point_cost(const rifl_linksim_config *c)
{
    unsigned F = c->lane.frame_bits;
    double frames = c->bytes ? (double)c->bytes / rifl_payload_bytes(F) : (double)c->max_slots;
    if (c->max_slots && (double)c->max_slots < frames)
        frames = (double)c->max_slots;
    double hit = 0;
    for (int i = 0; i < 2; i++)
        hit += 1.0 - pow(1.0 - c->ber[i], F);
    double replay = 2.0 * (double)(1u << (c->lane.fid_bits ? c->lane.fid_bits : 10));
    return frames * (1.0 + hit * replay);
}

struct ranked {
    double cost;
    int i;
};

static int by_cost(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return x->i - y->i;
}

static void *worker(void *arg)
{
    struct pool *pl = arg;
    for (;;) {
        pthread_mutex_lock(&pl->lock);
        int i = pl->next < pl->n ? pl->order[pl->next++] : -1;
        pthread_mutex_unlock(&pl->lock);
        if (i < 0)
            return NULL;
        struct point *pt = &pl->pts[i];
        rifl_linksim_config cc = pt->c;
        cc.progress = NULL; /* the main thread reports progress */
        double t0 = cli_now();
        char msg[1024] = "";
        int rc = rifl_linksim_run(&cc, &pt->r, msg, sizeof msg);
        if (rc != RIFL_OK)
            fprintf(stderr, "error: point %d: %s\n", i + 1, msg[0] ? msg : "simulation failed");
        pthread_mutex_lock(&pl->lock);
        pt->wall = cli_now() - t0;
        pt->rc = rc == RIFL_OK ? 0 : 2;
        pt->done = true;
        pl->finished++;
        pthread_mutex_unlock(&pl->lock);
    }
}

/* print one finished point; returns the exit status it contributes */
static int print_point(const struct opts *o, const char *key, struct point *pt, int i)
{
    if (pt->rc)
        return 2;
    if (key && !o->csv && !o->json)
        printf("%s== %s = %s\n", i ? "\n" : "", key, pt->val);
    struct summary s = { NAN, pt->ref, pt->wall };
    if (o->reference && pt->ref > 0)
        s.ratio = pt->r.goodput_gbps / pt->ref;
    if (o->json)
        print_json(&pt->c, &pt->r, &s);
    else if (o->csv)
        print_csv(&pt->c, &pt->r, &s);
    else
        print_human(&pt->c, &pt->r, &s);
    fflush(stdout);
    int status = pt->r.lossless ? 0 : 1;
    rifl_linksim_result_free(&pt->r);
    return status;
}

static int run(int argc, char **argv)
{
    struct opts o = {
        .ber = 0, .ber_ab = -1, .ber_ba = -1, .bytes = 10000000, .frames = 0, .seed = 1,
        .frame_bits = 256, .fid_bits = 0, .pipeline = 2, .txq = 1024, .rxbuf = 0, .lock = 64,
        .rate = 112, .cable = 10, .ns_per_m = 5, .xcvr = 80, .size = "1-8192", .load = 1,
        .rx_ready = 1, .fast = true, .reference = true,
    };
    struct cli_opt opts[] = {
        { "ber", CLI_DOUBLE, &o.ber, "bit error rate, both directions", 0, 0 },
        { "ber-ab", CLI_DOUBLE, &o.ber_ab, "bit error rate A -> B (-1: --ber)", 0, 0 },
        { "ber-ba", CLI_DOUBLE, &o.ber_ba, "bit error rate B -> A (-1: --ber)", 0, 0 },
        { "bytes", CLI_BYTES, &o.bytes, "payload bytes offered per direction (0: no limit)", 0, 0 },
        { "frames", CLI_UINT, &o.frames, "stop after this many frame slots (0: no limit)", 0, 0 },
        { "seed", CLI_UINT, &o.seed, "run seed (channels, packets, receivers derive from it)", 0, 0 },
        { "frame-bits", CLI_UINT, &o.frame_bits, "frame width F: 64 .. 2048", 0, 0 },
        { "fid-bits", CLI_UINT, &o.fid_bits, "frame-ID width K (0: smallest safe)", 0, 0 },
        { "rate", CLI_DOUBLE, &o.rate, "lane rate, Gbit/s", 0, 0 },
        { "cable", CLI_DOUBLE, &o.cable, "cable length, m", 0, 0 },
        { "ns-per-m", CLI_DOUBLE, &o.ns_per_m, "propagation delay, ns/m", 0, 0 },
        { "transceiver-ns", CLI_DOUBLE, &o.xcvr, "one-way transceiver latency, ns", 0, 0 },
        { "pipeline", CLI_UINT, &o.pipeline, "engine pipeline added to the round trip, frames", 0, 0 },
        { "txq", CLI_UINT, &o.txq, "transmit queue, frames", 0, 0 },
        { "rx-buffer", CLI_UINT, &o.rxbuf, "receive buffer, frames (0: 2^(K+1))", 0, 0 },
        { "lock", CLI_UINT, &o.lock, "legal SYN headers before the receiver is aligned", 0, 0 },
        { "size", CLI_STRING, &o.size, "packet sizes in bytes: N, MIN-MAX (uniform) or N1,N2,..", 0, 0 },
        { "load", CLI_DOUBLE, &o.load, "offered load per direction, fraction of the line (1: saturate)", 0, 0 },
        { "rx-ready", CLI_DOUBLE, &o.rx_ready, "probability that a receiver reads in a slot", 0, 0 },
        { "rx-stall", CLI_UINT, &o.rx_stall, "receivers stop reading for N slots ...", 0, 0 },
        { "rx-period", CLI_UINT, &o.rx_period, "... out of every N slots", 0, 0 },
        { "fast", CLI_BOOL, &o.fast, "fast-forward error-free stretches", 0, 0 },
        { "encode-all", CLI_FLAG, &o.encode_all, "build and decode every frame's wire bytes "
          "(same results, slower: a check)", 0, 0 },
        { "reference", CLI_BOOL, &o.reference, "run error-free too, for the bandwidth ratio", 0, 0 },
        { "sweep", CLI_STRING, &o.sweep, "KEY=START:STOP:STEP, e.g. ber=1e-12:1e-5:x10^0.25", 0, 0 },
        { "csv", CLI_FLAG, &o.csv, "CSV: a header and one line per run", 0, 0 },
        { "json", CLI_FLAG, &o.json, "JSON: one summary object per run", 0, 0 },
        { "progress", CLI_FLAG, &o.progress, "progress line even when stderr is not a terminal", 0, 0 },
        { "jobs", CLI_UINT, &o.jobs, "sweep points run at once (0 = one per CPU); results do not "
          "depend on it", 0, 256 },
        CLI_END,
    };
    int rc = cli_parse(argc, argv, opts, "[options]",
                       "Simulates two RIFL lanes connected by a cable with random bit errors,\n"
                       "saturating (or loaded) traffic both ways, and a validator checking every\n"
                       "delivered byte.  Defaults: the paper's reference link (256-bit frames,\n"
                       "112 Gbit/s, 10 m cable, 80 ns transceivers), packets of 1 to 8192 bytes.",
                       NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (o.csv && o.json) {
        fprintf(stderr, "error: choose one of --csv and --json\n");
        return 2;
    }
    struct sweep sw;
    int npoints = 1;
    if (o.sweep) {
        if (parse_sweep(o.sweep, &sw))
            return 2;
        if (!strcmp(sw.key, "sweep") || !strcmp(sw.key, "size") || !strcmp(sw.key, "csv") ||
            !strcmp(sw.key, "json")) {
            fprintf(stderr, "error: option --sweep: '%s' cannot be swept; sweep a numeric "
                    "setting such as ber, load, cable or bytes\n", sw.key);
            return 2;
        }
        npoints = 0;
        for (int i = 0; i < 100000; i++) {
            double v = sw.mult ? sw.start * pow(sw.step, i) : sw.start + sw.step * i;
            if (v > sw.stop * (1 + 1e-9))
                break;
            npoints++;
        }
    }
    fprintf(stderr, "rifl sim link: seed %llu\n", (unsigned long long)o.seed);
    if (o.csv)
        fputs(csv_header, stdout);
    /* Every point's configuration and error-free reference first (in order),
     * then the points themselves, several at once when --jobs allows: each
     * run has its own seeds and state, so the results are the same whatever
     * the number of jobs; they are printed in sweep order. */
    struct point *pts = calloc((size_t)npoints, sizeof *pts);
    if (!pts) {
        fprintf(stderr, "error: out of memory\n");
        return 2;
    }
    double ref_goodput = NAN;
    bool ref_done = false;
    int status = 0;
    for (int i = 0; i < npoints; i++) {
        if (o.sweep) {
            double v = sw.mult ? sw.start * pow(sw.step, i) : sw.start + sw.step * i;
            char where[96];
            snprintf(pts[i].val, sizeof pts[i].val, "%.6g", v);
            snprintf(where, sizeof where, "sweep point %d", i + 1);
            if (cli_set(opts, sw.key, pts[i].val, where)) {
                free(pts);
                return 2;
            }
        }
        if (build_config(&o, &pts[i].c)) {
            free(pts);
            return 2;
        }
        char msg[1024] = "";
        if (rifl_linksim_check(&pts[i].c, msg, sizeof msg) != RIFL_OK) {
            fprintf(stderr, "error: %s\n", msg);
            free(pts);
            return 2;
        }
        /* the error-free reference depends on everything but the BER */
        bool ber_only = o.sweep && (!strcmp(sw.key, "ber") || !strcmp(sw.key, "ber-ab") ||
                                    !strcmp(sw.key, "ber-ba") || !strcmp(sw.key, "ber_ab") ||
                                    !strcmp(sw.key, "ber_ba"));
        if (o.reference && (!ref_done || !ber_only)) {
            if (reference(&pts[i].c, o.progress, &ref_goodput)) {
                free(pts);
                return 2;
            }
            ref_done = true;
        }
        pts[i].ref = ref_goodput;
    }
    unsigned jobs = (unsigned)o.jobs;
    if (jobs == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = n > 0 ? (unsigned)n : 1;
    }
    if (jobs > (unsigned)npoints)
        jobs = (unsigned)npoints;
    if (jobs > 256)
        jobs = 256;
    if (jobs <= 1) {
        for (int i = 0; i < npoints; i++) {
            char what[64];
            snprintf(what, sizeof what, "simulating (point %d of %d)", i + 1, npoints);
            pts[i].rc = simulate(&pts[i].c, &pts[i].r, o.sweep ? what : "simulating", o.progress,
                                 &pts[i].wall);
            status |= print_point(&o, o.sweep ? sw.key : NULL, &pts[i], i);
        }
    } else {
        int *order = malloc((size_t)npoints * sizeof *order);
        struct ranked *rk = malloc((size_t)npoints * sizeof *rk);
        if (!order || !rk) {
            fprintf(stderr, "error: out of memory\n");
            free(order);
            free(rk);
            free(pts);
            return 2;
        }
        for (int i = 0; i < npoints; i++)
            rk[i] = (struct ranked){ point_cost(&pts[i].c), i };
        qsort(rk, (size_t)npoints, sizeof *rk, by_cost);
        for (int i = 0; i < npoints; i++)
            order[i] = rk[i].i;
        free(rk);
        struct pool pool = { pts, order, npoints, 0, 0, PTHREAD_MUTEX_INITIALIZER };
        pthread_t th[256];
        unsigned started = 0;
        for (unsigned j = 0; j < jobs; j++)
            if (pthread_create(&th[j], NULL, worker, &pool) == 0)
                started++;
        if (started == 0)
            worker(&pool);
        /* print in order as points finish */
        for (int i = 0; i < npoints; i++) {
            for (;;) {
                pthread_mutex_lock(&pool.lock);
                bool done = pts[i].done;
                int finished = pool.finished;
                pthread_mutex_unlock(&pool.lock);
                if (done)
                    break;
                if (o.progress || isatty(2)) {
                    char extra[64];
                    snprintf(extra, sizeof extra, "%d of %d points done, %u jobs", finished,
                             npoints, started);
                    cli_progress("sweep", (double)finished / npoints, extra, o.progress);
                }
                struct timespec ts = { 0, 50 * 1000 * 1000 };
                nanosleep(&ts, NULL);
            }
            status |= print_point(&o, o.sweep ? sw.key : NULL, &pts[i], i);
        }
        for (unsigned j = 0; j < started; j++)
            pthread_join(th[j], NULL);
        free(order);
        cli_progress_done(o.progress);
    }
    free(pts);
    fprintf(stderr, "seed %llu\n", (unsigned long long)o.seed);
    return status;
}

const struct rifl_command rifl_cmd_sim_link = {
    "sim link", "simulate a RIFL link with bit errors: goodput, latency, lossless check", run
};

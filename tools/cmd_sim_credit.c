/* `rifl sim credit`: credit-based link-level flow control with virtual
 * lanes, simulated over a raw lossy channel, against RIFL-style ON/OFF flow
 * control; plus the experiments of docs/credit-flow-control.md. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rifl/capture.h"
#include "rifl/sim/credit_sim.h"
#include "rifl/sim/pair.h"

struct opts {
    const char *mode, *experiment, *loads, *drains, *high, *low, *rtts, *csv, *pcap;
    FILE *csv_file;       /* --csv, opened once the settings are accepted */
    unsigned vls_run;     /* VLs of the runs: --vls, or what the experiment uses */
    uint64_t vls, duration, rtt, jitter, buffer, chunk, min_len, max_len;
    uint64_t fcp_period, fcp_min_gap, overhead, high_limit, seed, pcap_slots;
    double load, drain, stall_on, stall_off, data_corrupt, fcp_loss, fcp_corrupt;
    double on_frac, off_frac, hol_start, hol_end, target, ber, cable_m;
    int64_t hol_vl;
    bool stall_fixed, json, quiet;
};

static const struct cli_opt *g_opts; /* the option table, for messages */

enum experiment { EXP_NONE, EXP_BUFFER, EXP_CURVE, EXP_HOL };

static enum experiment experiment_of(const struct opts *o)
{
    if (!o->experiment)
        return EXP_NONE;
    if (!strcmp(o->experiment, "buffer"))
        return EXP_BUFFER;
    if (!strcmp(o->experiment, "curve"))
        return EXP_CURVE;
    return EXP_HOL;
}

static bool lane_mode(const struct opts *o) { return !strncmp(o->mode, "lane-", 5); }

/* --loads / --drains: one value per VL of the runs */
static int vl_list(const struct opts *o, const char *name, const char *s, double *out,
                   bool quiet)
{
    char what[300];
    snprintf(what, sizeof what, "%s", cli_where(g_opts, name));
    int n = cli_parse_list(s, out, RIFL_FC_MAX_DATA_VLS, 0, 1000, quiet ? NULL : what);
    if (n < 0)
        return -1;
    if ((unsigned)n != o->vls_run) {
        if (quiet)
            return -1;
        cli_fail(g_opts, name, "%d value%s for %u VL%s; give exactly one per VL (%s)", n,
                 n == 1 ? "" : "s", o->vls_run, o->vls_run == 1 ? "" : "s",
                 experiment_of(o) == EXP_NONE ? "--vls" : "the experiment's VLs");
        return -1;
    }
    return 0;
}

static int build_config(const struct opts *o, rifl_csim_config *c, bool quiet)
{
    rifl_csim_default_config(c);
    c->mode = !strcmp(o->mode, "onoff") ? RIFL_CSIM_ONOFF : RIFL_CSIM_CREDIT;
    c->vls = o->vls_run;
    c->duration = o->duration;
    c->one_way = o->rtt / 2;
    c->jitter = o->jitter;
    c->buffer_bytes = o->buffer;
    c->chunk_bytes = (uint32_t)o->chunk;
    c->min_len = (uint32_t)o->min_len;
    c->max_len = (uint32_t)o->max_len;
    for (unsigned v = 0; v < RIFL_FC_MAX_DATA_VLS; v++) {
        c->load[v] = o->load;
        c->drain[v] = o->drain;
    }
    if (o->loads && vl_list(o, "loads", o->loads, c->load, quiet))
        return 2;
    if (o->drains && vl_list(o, "drains", o->drains, c->drain, quiet))
        return 2;
    c->stall_on = o->stall_on;
    c->stall_off = o->stall_off;
    c->stall_fixed = o->stall_fixed;
    c->hol_vl = (int)o->hol_vl;
    c->hol_start = (uint64_t)(o->hol_start * (double)o->duration);
    c->hol_end = (uint64_t)(o->hol_end * (double)o->duration);
    c->data_corrupt = o->data_corrupt;
    c->fcp_loss = o->fcp_loss;
    c->fcp_corrupt = o->fcp_corrupt;
    c->fcp_period = (uint32_t)o->fcp_period;
    c->fcp_min_gap = (uint32_t)o->fcp_min_gap;
    c->overhead = (uint32_t)o->overhead;
    c->on_frac = o->on_frac;
    c->off_frac = o->off_frac;
    c->seed = o->seed;
    char msg[256];
    const char *tab[2] = { o->high, o->low };
    const char *name[2] = { "high", "low" };
    if ((o->high && *o->high) || (o->low && *o->low)) {
        for (int i = 0; i < 2; i++)
            if (rifl_vlarb_parse_table(tab[i], i ? c->arb.low : c->arb.high,
                                       i ? &c->arb.n_low : &c->arb.n_high, msg, sizeof msg)) {
                if (!quiet)
                    cli_fail(g_opts, name[i], "%s", msg);
                return 2;
            }
        c->arb.high_limit = (unsigned)o->high_limit;
    }
    return 0;
}

/* the link of the buffer and curve experiments at a round trip of `rtt`
 * symbol times: one VL, stalls of fixed lengths scaled to the round trip */
static void at_rtt(const struct opts *o, rifl_csim_config *c, uint64_t rtt)
{
    c->one_way = rtt / 2;
    c->vls = 1;
    c->stall_fixed = true;
    c->stall_on = o->stall_on * (double)rtt;
    c->stall_off = o->stall_off * (double)rtt;
}

/* the settings of a representative run of the experiment, for checking */
static void experiment_point(const struct opts *o, rifl_csim_config *c)
{
    switch (experiment_of(o)) {
    case EXP_BUFFER:
    case EXP_CURVE: {
        uint64_t rtt = o->rtt;
        if (experiment_of(o) == EXP_BUFFER) {
            double r[32];
            int n = cli_parse_list(o->rtts, r, 32, 2, 1e9, "--rtts");
            rtt = n > 0 ? (uint64_t)r[0] : 2;
        }
        at_rtt(o, c, rtt);
        c->buffer_bytes = (6 * rtt + 4 * (uint64_t)c->max_len + 63) / 64 * 64;
        if (c->buffer_bytes > RIFL_FC_REG_MASK * 64ull)
            c->buffer_bytes = RIFL_FC_REG_MASK * 64ull;
        break;
    }
    case EXP_HOL:
        c->hol_vl = 1;
        break;
    case EXP_NONE:
        break;
    }
    if (c->duration == 0 || c->duration > 1000)
        c->duration = 1000;
}

/* for cli_blame and the check before the runs: the library's check of the
 * settings (both modes for an experiment, at its first point) */
static int raw_ok_msg(const struct opts *o, char *msg, size_t len)
{
    rifl_csim_config c;
    if (build_config(o, &c, true))
        return -1;
    experiment_point(o, &c);
    for (int m = 0; m < 2; m++) {
        if (experiment_of(o) == EXP_NONE && m != (int)c.mode)
            continue;
        rifl_csim_config cc = c;
        cc.mode = m ? RIFL_CSIM_ONOFF : RIFL_CSIM_CREDIT;
        if (m && experiment_of(o) == EXP_HOL)
            cc.buffer_bytes *= 2;
        if (rifl_csim_check(&cc, msg, len) != RIFL_OK)
            return -1;
    }
    return 0;
}

static int raw_ok(void *ctx)
{
    char msg[256];
    return raw_ok_msg(ctx, msg, sizeof msg);
}

static int run_one(const rifl_csim_config *c, rifl_csim_result *r)
{
    char msg[256] = "";
    int rc = rifl_csim_run(c, r, msg, sizeof msg);
    if (rc != RIFL_OK) {
        fprintf(stderr, "error: %s\n", msg[0] ? msg : rifl_strerror(rc));
        return 2;
    }
    return 0;
}

/* close --csv, reporting a write error */
static int close_csv(struct opts *o)
{
    if (!o->csv_file)
        return 0;
    int bad = ferror(o->csv_file);
    bad |= fclose(o->csv_file);
    o->csv_file = NULL;
    if (bad) {
        fprintf(stderr, "error: %s: writing '%s' failed: %s\n", cli_where(g_opts, "csv"),
                o->csv, strerror(errno));
        return 2;
    }
    return 0;
}

/* A count of one mode only: null in the other. */
static void json_count(const char *key, uint64_t v, bool applies)
{
    if (applies)
        printf(",\"%s\":%" PRIu64, key, v);
    else
        printf(",\"%s\":null", key);
}

static void print_result(const rifl_csim_config *c, const rifl_csim_result *r, bool json)
{
    if (json) {
        bool credit = c->mode == RIFL_CSIM_CREDIT;
        printf("{\"mode\":\"%s\",\"seed\":%" PRIu64 ",\"vls\":%u,\"duration\":%" PRIu64
               ",\"rtt\":%" PRIu64 ",\"buffer_bytes\":%" PRIu64 ",\"throughput\":%.6f"
               ",\"efficiency\":%.6f", rifl_csim_mode_name(c->mode), c->seed, c->vls,
               c->duration, 2 * c->one_way, c->buffer_bytes, r->total_throughput,
               r->efficiency);
        json_count("fcp_sent", r->fcp_sent, credit);
        json_count("fcp_lost", r->fcp_lost, credit);
        json_count("fcp_corrupted", r->fcp_corrupted, credit);
        json_count("fcp_rejected", r->fcp_rejected, credit);
        printf(",\"data_corrupted\":%" PRIu64, r->data_corrupted);
        json_count("abr_resyncs", r->abr_resyncs, credit);
        printf(",\"rx_overflow\":%" PRIu64, r->rx_overflow);
        json_count("xoff", r->xoff_sent, !credit);
        json_count("xon", r->xon_sent, !credit);
        json_count("leaked_blocks", r->leaked_blocks, credit);
        printf(",\"converged\":%s,\"vl\":[",
               credit ? (r->converged ? "true" : "false") : "null");
        for (unsigned v = 0; v < c->vls; v++) {
            const rifl_csim_vl_result *x = &r->vl[v];
            printf("%s{\"vl\":%u,\"offered\":%" PRIu64 ",\"sent\":%" PRIu64
                   ",\"delivered\":%" PRIu64 ",\"throughput\":%.6f,\"efficiency\":%.6f"
                   ",\"drops\":%" PRIu64 ",\"max_occupancy\":%" PRIu64 ",\"hol_bytes\":%" PRIu64
                   ",\"max_gap\":%" PRIu64 "}",
                   v ? "," : "", v, x->offered_bytes, x->sent_bytes, x->delivered_bytes,
                   x->throughput, x->efficiency, x->drops, x->max_occupancy, x->hol_bytes,
                   x->max_gap);
        }
        printf("]}\n");
        return;
    }
    printf("mode %s, %u VL%s, RTT %" PRIu64 " symbol times, buffer %" PRIu64
           " bytes%s, %" PRIu64 " symbol times, seed %" PRIu64 "\n",
           rifl_csim_mode_name(c->mode), c->vls, c->vls > 1 ? "s" : "", 2 * c->one_way,
           c->buffer_bytes, c->mode == RIFL_CSIM_CREDIT ? " per VL" : " shared", c->duration,
           c->seed);
    printf("  VL  offered_B    delivered_B  throughput  efficiency  drops  max_held_B");
    printf(c->hol_vl >= 0 ? "  in_stall_B\n" : "\n");
    for (unsigned v = 0; v < c->vls; v++) {
        const rifl_csim_vl_result *x = &r->vl[v];
        printf("  %2u  %-11" PRIu64 "  %-11" PRIu64 "  %10.4f  %10.4f  %5" PRIu64
               "  %10" PRIu64,
               v, x->offered_bytes, x->delivered_bytes, x->throughput, x->efficiency, x->drops,
               x->max_occupancy);
        if (c->hol_vl >= 0)
            printf("  %10" PRIu64, x->hol_bytes);
        printf("\n");
    }
    printf("  total throughput %.4f of the line, efficiency %.4f\n", r->total_throughput,
           r->efficiency);
    if (c->mode == RIFL_CSIM_CREDIT)
        printf("  FCPs sent %" PRIu64 ", lost %" PRIu64 ", corrupted %" PRIu64
               ", rejected %" PRIu64 "; data corrupted %" PRIu64 ", ABR resyncs %" PRIu64
               "; overflow drops %" PRIu64 "; credit after drain: %s (leaked %" PRIu64
               " blocks)\n",
               r->fcp_sent, r->fcp_lost, r->fcp_corrupted, r->fcp_rejected, r->data_corrupted,
               r->abr_resyncs, r->rx_overflow, r->converged ? "consistent" : "INCONSISTENT",
               r->leaked_blocks);
    else
        printf("  OFF notices %" PRIu64 ", ON notices %" PRIu64 "; data corrupted %" PRIu64
               "; overflow drops %" PRIu64 "\n",
               r->xoff_sent, r->xon_sent, r->data_corrupted, r->rx_overflow);
}

/* ---- experiment: buffer needed for full throughput against RTT ------------ */

/* One run of the search at c->buffer_bytes: *good when it reaches the
 * target without a drop.  A buffer the settings refuse (too small for the
 * largest packet's credit) counts as not good. */
static int search_run(const rifl_csim_config *c, double target, bool *good, unsigned *runs)
{
    rifl_csim_result r;
    *good = false;
    if (rifl_csim_check(c, NULL, 0) != RIFL_OK)
        return 0;
    if (run_one(c, &r))
        return 2;
    (*runs)++;
    *good = r.efficiency >= target && !r.rx_overflow && !r.vl[0].drops;
    return 0;
}

/* Smallest buffer (bytes, multiple of 64) with efficiency >= target and no
 * drop, by bisection between lo and hi; 0 when even hi fails. */
static int min_buffer(rifl_csim_config *c, double target, uint64_t lo, uint64_t hi,
                      uint64_t *out, unsigned *runs)
{
    bool good;
    c->buffer_bytes = hi;
    if (search_run(c, target, &good, runs))
        return 2;
    if (!good) {
        *out = 0;
        return 0;
    }
    while (hi - lo > 64) {
        uint64_t mid = (lo + hi) / 2 / 64 * 64;
        if (mid <= lo)
            break;
        c->buffer_bytes = mid;
        if (search_run(c, target, &good, runs))
            return 2;
        if (good)
            hi = mid;
        else
            lo = mid;
    }
    *out = hi;
    return 0;
}

static int experiment_buffer(const struct opts *o, rifl_csim_config *base)
{
    double rtts[32];
    int n = cli_parse_list(o->rtts, rtts, 32, 2, 1e9, "--rtts");
    if (n <= 0)
        return 2;
    FILE *csv = o->csv_file;
    printf("# buffer for efficiency >= %.3f with no drop; 1 VL, consumer stalls %g RTT"
           " every %g RTT of running, packets %u..%u B, seed %" PRIu64 "\n",
           o->target, o->stall_off, o->stall_on, base->min_len, base->max_len, base->seed);
    printf("| RTT (symbol times) | credit: buffer (B) | credit: x RTT | on/off %.2f/%.2f:"
           " buffer (B) | on/off: x RTT |\n|---|---|---|---|---|\n",
           base->on_frac, base->off_frac);
    if (csv)
        fprintf(csv, "# rtt credit_bytes onoff_bytes (0 = not reachable)\n");
    unsigned runs = 0;
    for (int i = 0; i < n; i++) {
        uint64_t rtt = (uint64_t)rtts[i];
        rifl_csim_config c = *base;
        at_rtt(o, &c, rtt);
        c.duration = o->duration ? o->duration : 400 * rtt;
        if (c.duration < 4000000)
            c.duration = 4000000; /* start-up (link activation) stays below 0.2% */
        uint64_t res[2];
        for (int m = 0; m < 2; m++) {
            c.mode = m ? RIFL_CSIM_ONOFF : RIFL_CSIM_CREDIT;
            uint64_t lo = (c.max_len + 63) / 64 * 64 - 64;
            uint64_t hi = 6 * rtt + 4 * (uint64_t)c.max_len;
            hi = (hi + 63) / 64 * 64;
            if (!m && hi > RIFL_FC_REG_MASK * (uint64_t)c.chunk_bytes)
                hi = RIFL_FC_REG_MASK * (uint64_t)c.chunk_bytes; /* 4095 chunks at most */
            if (min_buffer(&c, o->target, lo, hi, &res[m], &runs))
                return 2;
            cli_progress("sim credit buffer sweep", (i * 2.0 + m + 1) / (2.0 * n), NULL, false);
        }
        char a[64], b[64];
        if (res[0])
            snprintf(a, sizeof a, "%" PRIu64 " | %.2f", res[0], (double)res[0] / (double)rtt);
        else
            snprintf(a, sizeof a, "not reachable | -");
        if (res[1])
            snprintf(b, sizeof b, "%" PRIu64 " | %.2f", res[1], (double)res[1] / (double)rtt);
        else
            snprintf(b, sizeof b, "not reachable | -");
        printf("| %" PRIu64 " | %s | %s |\n", rtt, a, b);
        if (csv)
            fprintf(csv, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", rtt, res[0], res[1]);
        fflush(stdout);
    }
    cli_progress_done(false);
    printf("# %u simulation runs\n", runs);
    return 0;
}

/* ---- experiment: efficiency against buffer at one RTT --------------------- */

static int experiment_curve(const struct opts *o, rifl_csim_config *base)
{
    FILE *csv = o->csv_file;
    uint64_t rtt = o->rtt;
    printf("# efficiency against buffer, RTT %" PRIu64 " symbol times, 1 VL, consumer"
           " stalls %g RTT every %g RTT, seed %" PRIu64 "\n",
           rtt, o->stall_off, o->stall_on, base->seed);
    printf("| buffer (x RTT) | credit: efficiency | credit: drops | on/off: efficiency |"
           " on/off: drops |\n|---|---|---|---|---|\n");
    if (csv)
        fprintf(csv, "# buffer_rtts credit_eff credit_drops onoff_eff onoff_drops\n");
    bool refused_said[2] = { false, false }, raised_said = false;
    uint64_t prev_buffer = 0;
    for (double x = 0.25; x <= 4.0001; x += 0.25) {
        rifl_csim_config c = *base;
        at_rtt(o, &c, rtt);
        c.buffer_bytes = (uint64_t)(x * (double)rtt) / 64 * 64;
        double x_label = x; /* the buffer in RTTs, or what it was raised to */
        if (c.buffer_bytes < c.max_len) {
            /* a buffer holds at least one packet: the row gives the buffer
             * it ran with, once */
            c.buffer_bytes = (c.max_len + 63) / 64 * 64;
            if (!raised_said)
                fprintf(stderr, "note: a buffer below one packet of --max-len %u bytes is "
                        "raised to %" PRIu64 " bytes (%.2f RTT); the table starts there\n",
                        c.max_len, c.buffer_bytes, (double)c.buffer_bytes / (double)rtt);
            raised_said = true;
            x_label = (double)c.buffer_bytes / (double)rtt;
        }
        if (c.buffer_bytes == prev_buffer)
            continue;
        prev_buffer = c.buffer_bytes;
        rifl_csim_result r[2];
        char eff[2][32], drops[2][32], ceff[2][32], cdrops[2][32];
        for (int m = 0; m < 2; m++) {
            c.mode = m ? RIFL_CSIM_ONOFF : RIFL_CSIM_CREDIT;
            char why[256] = "";
            if (rifl_csim_check(&c, why, sizeof why) != RIFL_OK) {
                /* (a buffer this mode cannot have: its row says so) */
                if (!refused_said[m])
                    fprintf(stderr, "note: %s: %s; its rows say refused\n",
                            rifl_csim_mode_name(c.mode), why);
                refused_said[m] = true;
                snprintf(eff[m], sizeof eff[m], "refused");
                snprintf(drops[m], sizeof drops[m], "-");
                snprintf(ceff[m], sizeof ceff[m], "nan");
                snprintf(cdrops[m], sizeof cdrops[m], "nan");
                continue;
            }
            if (run_one(&c, &r[m]))
                return 2;
            snprintf(eff[m], sizeof eff[m], "%.4f", r[m].efficiency);
            snprintf(drops[m], sizeof drops[m], "%" PRIu64, r[m].vl[0].drops);
            snprintf(ceff[m], sizeof ceff[m], "%.5f", r[m].efficiency);
            snprintf(cdrops[m], sizeof cdrops[m], "%" PRIu64, r[m].vl[0].drops);
        }
        printf("| %.2f | %s | %s | %s | %s |\n", x_label, eff[0], drops[0], eff[1], drops[1]);
        if (csv)
            fprintf(csv, "%.3f %s %s %s %s\n", x_label, ceff[0], cdrops[0], ceff[1], cdrops[1]);
    }
    return 0;
}

/* ---- experiment: head-of-line blocking --------------------------------------- */

/* delivered bytes per symbol time in a window, "-" for an empty window */
static void rate_text(char *buf, size_t n, uint64_t bytes, uint64_t len, const char *empty)
{
    if (len)
        snprintf(buf, n, "%.3f", (double)bytes / (double)len);
    else
        snprintf(buf, n, "%s", empty);
}

static int experiment_hol(const struct opts *o, rifl_csim_config *base)
{
    FILE *csv = o->csv_file;
    printf("# head-of-line blocking: 2 VLs offered %.2f and %.2f of the line; VL1's consumer"
           " stalls from %.0f%% to %.0f%% of the run; RTT %" PRIu64 ", buffer %" PRIu64
           " B (credit: per VL, on/off: shared, twice that), seed %" PRIu64 "\n",
           base->load[0], base->load[1], o->hol_start * 100, o->hol_end * 100, 2 * base->one_way,
           base->buffer_bytes, base->seed);
    printf("| mode | VL0 before stall | VL0 during stall | VL1 during stall | VL0 after |"
           " drops |\n|---|---|---|---|---|---|\n");
    if (csv)
        fprintf(csv, "# mode vl0_before vl0_during vl1_during vl0_after drops (delivered "
                "bytes per symbol time; - = empty window)\n");
    for (int m = 0; m < 2; m++) {
        rifl_csim_config c = *base;
        c.vls = 2;
        c.hol_vl = 1;
        c.mode = m ? RIFL_CSIM_ONOFF : RIFL_CSIM_CREDIT;
        if (m)
            c.buffer_bytes = 2 * base->buffer_bytes; /* same total memory */
        rifl_csim_result r;
        if (run_one(&c, &r))
            return 2;
        uint64_t len[3] = { c.hol_start, c.hol_end - c.hol_start, c.duration - c.hol_end };
        char t[4][32];
        rate_text(t[0], sizeof t[0], r.vl[0].pre_bytes, len[0], "-");
        rate_text(t[1], sizeof t[1], r.vl[0].hol_bytes, len[1], "-");
        rate_text(t[2], sizeof t[2], r.vl[1].hol_bytes, len[1], "-");
        rate_text(t[3], sizeof t[3], r.vl[0].post_bytes, len[2], "-");
        uint64_t drops = r.vl[0].drops + r.vl[1].drops;
        printf("| %s | %s | %s | %s | %s | %" PRIu64 " |\n", rifl_csim_mode_name(c.mode),
               t[0], t[1], t[2], t[3], drops);
        if (csv)
            fprintf(csv, "%s %s %s %s %s %" PRIu64 "\n", rifl_csim_mode_name(c.mode), t[0],
                    t[1], t[2], t[3], drops);
    }
    return 0;
}

/* ---- lane modes: two RIFL lanes back to back ------------------------------ */

static void build_lanes(const struct opts *o, rifl_clane_config *c)
{
    rifl_clane_default_config(c);
    c->credit = !strcmp(o->mode, "lane-credit");
    c->vls = (unsigned)o->vls;
    c->slots = o->duration;
    c->buffer_bytes = o->buffer;
    c->min_len = (uint32_t)o->min_len;
    c->max_len = (uint32_t)o->max_len;
    for (unsigned v = 0; v < RIFL_FC_MAX_DATA_VLS; v++) {
        c->load[v] = o->load;
        c->drain[v] = o->drain;
    }
    if (o->loads)
        vl_list(o, "loads", o->loads, c->load, true);
    if (o->drains)
        vl_list(o, "drains", o->drains, c->drain, true);
    c->hol_vl = (int)o->hol_vl;
    c->hol_start = (uint64_t)(o->hol_start * (double)c->slots);
    c->hol_end = (uint64_t)(o->hol_end * (double)c->slots);
    c->ber = o->ber;
    c->fcp_period = (uint32_t)o->fcp_period;
    c->lane.link.cable_m = o->cable_m;
    /* a frame-ID width the cable allows (the default 8 covers 10 m) */
    unsigned k = rifl_lane_min_fid_bits(&c->lane.link, c->lane.frame_bits,
                                        c->lane.pipeline_frames);
    if (k > c->lane.fid_bits && k <= RIFL_FID_MAX_BITS)
        c->lane.fid_bits = k;
    c->seed = o->seed;
}

static int lanes_ok(void *ctx)
{
    rifl_clane_config c;
    char msg[256];
    build_lanes(ctx, &c);
    return rifl_clane_check(&c, msg, sizeof msg) == RIFL_OK ? 0 : -1;
}

/* --pcap in the lane modes: the frames that arrive at both lanes */
struct lane_capture {
    rifl_capture *cap;
    unsigned frame_bits;
    double frame_ns;
    uint64_t slot, slots;
    bool failed;
};

static void capture_lanes(void *ctx, const rifl_pair_slot *seen)
{
    struct lane_capture *c = ctx;
    if (!c->failed && c->slot < c->slots &&
        cli_pcap_arrivals(c->cap, seen->arrived, c->frame_bits, c->slot,
                          (uint64_t)llround((double)c->slot * c->frame_ns)) != RIFL_OK)
        c->failed = true;
    c->slot++;
}

/* A single run estimated above a minute gets a warning before it starts.
 * Measured on the project's machines: the raw channel modes simulate
 * about 2e8 symbol times a second, the lane modes about 6e6 frame slots;
 * the estimate takes half of each. */
static void warn_long_run(const struct opts *o)
{
    if (experiment_of(o) == EXP_BUFFER || experiment_of(o) == EXP_CURVE)
        return; /* their rows show progress */
    double rate = lane_mode(o) ? 3e6 : 1e8, secs = (double)o->duration / rate;
    if (secs <= 60)
        return;
    char t[32];
    cli_format_duration(t, sizeof t, secs);
    fprintf(stderr, "warning: this run is estimated to take about %s (%s: %" PRIu64 " %s at "
            "about %.0e a second); a shorter --duration runs faster\n", t,
            lane_mode(o) ? "lane mode" : "raw channel", o->duration,
            lane_mode(o) ? "frame slots" : "symbol times", rate);
}

static int run_lanes(const struct opts *o)
{
    rifl_clane_config c;
    build_lanes(o, &c);
    rifl_clane_result r;
    char msg[256] = "";
    struct lane_capture lc = { NULL, c.lane.frame_bits,
                               c.lane.frame_bits / c.lane.link.lane_rate_gbps, 0, o->pcap_slots,
                               false };
    if (o->pcap) {
        if (rifl_clane_check(&c, msg, sizeof msg) != RIFL_OK)
            return cli_blame(g_opts, lanes_ok, (void *)o, msg);
        if (rifl_capture_open(o->pcap, c.lane.frame_bits, 1, &lc.cap, msg, sizeof msg) !=
            RIFL_OK) {
            fprintf(stderr, "error: %s: %s\n", cli_where(g_opts, "pcap"), msg);
            return 2;
        }
        c.observe = capture_lanes;
        c.observe_ctx = &lc;
    }
    int rc = rifl_clane_run(&c, &r, msg, sizeof msg);
    if (lc.cap) {
        char cmsg[256] = "";
        uint64_t frames = rifl_capture_get_stats(lc.cap)->frames;
        if (rifl_capture_close(lc.cap, cmsg, sizeof cmsg) != RIFL_OK || lc.failed) {
            fprintf(stderr, "error: %s: %s\n", cli_where(g_opts, "pcap"),
                    cmsg[0] ? cmsg : "writing the capture failed");
            return 2;
        }
        fprintf(stderr, "rifl sim credit: %llu frames captured to %s\n",
                (unsigned long long)frames, o->pcap);
    }
    if (rc == RIFL_ERR_CONFIG)
        return cli_blame(g_opts, lanes_ok, (void *)o, msg);
    if (rc != RIFL_OK) {
        fprintf(stderr, "error: %s\n", msg[0] ? msg : rifl_strerror(rc));
        return 2;
    }
    uint64_t win = c.hol_end - c.hol_start;
    double pay = (double)(c.lane.frame_bits / 8 - 2);
    int status = r.lossless && (!c.credit || r.converged) ? 0 : 1;
    if (o->json) {
        printf("{\"mode\":\"%s\",\"seed\":%" PRIu64 ",\"vls\":%u,\"slots\":%" PRIu64
               ",\"frame_bits\":%u,\"fid_bits\":%u,\"cable_m\":%g,\"ber\":%g"
               ",\"throughput\":%.6f,\"lossless\":%s,\"bad_packets\":%" PRIu64
               ",\"replay_cycles\":%" PRIu64 ",\"lane_rx_overflow\":%" PRIu64
               ",\"drained\":%s", o->mode,
               c.seed, c.vls, c.slots, c.lane.frame_bits, c.lane.fid_bits, c.lane.link.cable_m,
               c.ber, r.throughput, r.lossless ? "true" : "false", r.bad_packets, r.replays,
               r.lane_rx_overflow, r.drained ? "true" : "false");
        if (c.credit)
            printf(",\"fcp_sent\":%" PRIu64 ",\"credit_drops\":%" PRIu64 ",\"converged\":%s",
                   r.fcp_sent, r.credit_drops, r.converged ? "true" : "false");
        else
            printf(",\"fc_onoff_sent\":%" PRIu64, r.fc_onoff_sent);
        printf(",\"vl\":[");
        for (unsigned v = 0; v < c.vls; v++) {
            printf("%s{\"vl\":%u,\"sent_packets\":%" PRIu64 ",\"delivered_packets\":%" PRIu64
                   ",\"throughput\":%.6f", v ? "," : "", v, r.sent_packets[v],
                   r.delivered_packets[v], (double)r.delivered_bytes[v] / ((double)c.slots * pay));
            if (c.hol_vl >= 0)
                printf(",\"in_stall\":%.6f", (double)r.hol_bytes[v] / ((double)win * pay));
            printf("}");
        }
        printf("]}\n");
        return status;
    }
    printf("mode %s: two RIFL lanes (F=%u, K=%u, %.0f m), %u VL%s, %" PRIu64
           " slots, BER %g, seed %" PRIu64 "\n",
           o->mode, c.lane.frame_bits, c.lane.fid_bits, c.lane.link.cable_m, c.vls,
           c.vls > 1 ? "s" : "", c.slots, c.ber, c.seed);
    printf("  VL  sent_pkts  delivered_pkts  throughput%s\n",
           c.hol_vl >= 0 ? "  in_stall" : "");
    for (unsigned v = 0; v < c.vls; v++) {
        printf("  %2u  %9" PRIu64 "  %14" PRIu64 "  %10.4f", v, r.sent_packets[v],
               r.delivered_packets[v], (double)r.delivered_bytes[v] / ((double)c.slots * pay));
        if (c.hol_vl >= 0)
            printf("  %8.4f", (double)r.hol_bytes[v] / ((double)win * pay));
        printf("\n");
    }
    /* packets still on their way at the drain limit are not lost: said
     * apart, with what to change */
    const bool stuck = !r.drained && r.bad_packets == 0 && r.credit_drops == 0;
    printf("  throughput %.4f of the lane payload rate; %s; bad packets %" PRIu64
           "; replay cycles %" PRIu64 "; lane rx overflow %" PRIu64 "\n",
           r.throughput, r.lossless ? "lossless" : stuck ? "NOT DRAINED" : "NOT LOSSLESS",
           r.bad_packets, r.replays, r.lane_rx_overflow);
    if (stuck)
        printf("  not drained: %s, packets still on their way and none lost or bad (the lane's "
               "replays leave it little or no progress at this BER: lower --ber, or give more "
               "--duration)\n", msg[0] ? msg : "the run ended before everything arrived");
    if (c.credit)
        printf("  FCPs sent %" PRIu64 " (extension frames, code 0x%02x); credit drops %" PRIu64
               "; credit after drain: %s\n",
               r.fcp_sent, RIFL_FCP_EXT_CODE, r.credit_drops,
               r.converged ? "consistent" : "INCONSISTENT");
    else
        printf("  ON/OFF flow-control frames sent %" PRIu64 "\n", r.fc_onoff_sent);
    return status;
}

/* ---- checks before anything runs -------------------------------------------- */

/* --mode and --experiment: known names that go together */
static int check_choices(const struct cli_opt *t, const struct opts *o, enum experiment e,
                         bool lanes)
{
    if (strcmp(o->mode, "credit") && strcmp(o->mode, "onoff") && strcmp(o->mode, "lane-credit") &&
        strcmp(o->mode, "lane-onoff"))
        return cli_fail(t, "mode", "'%s' is unknown; use credit, onoff, lane-credit or "
                        "lane-onoff", o->mode);
    if (o->experiment && strcmp(o->experiment, "buffer") && strcmp(o->experiment, "curve") &&
        strcmp(o->experiment, "hol"))
        return cli_fail(t, "experiment", "'%s' is unknown; use buffer, curve or hol",
                        o->experiment);
    if (e != EXP_NONE && lanes)
        return cli_fail(t, "mode,experiment", "the experiments run on the raw channel; drop "
                        "--mode %s or --experiment", o->mode);
    if (e != EXP_NONE && (cli_unused(t, "mode", "with --experiment (it runs credit and "
                                     "onoff side by side)") ||
                          cli_unused(t, "json", "with --experiment (it prints tables; "
                                     "--csv FILE writes the data)")))
        return 2;
    if (e == EXP_NONE && o->csv)
        return cli_fail(t, "csv", "--csv writes the data of an experiment (--experiment "
                        "buffer, curve or hol); a single run prints a summary, or JSON with "
                        "--json");
    return 0;
}

/* options the experiment sets itself or does not use */
static int check_experiment_unused(const struct cli_opt *t, enum experiment e)
{
    if (e != EXP_NONE && cli_unused(t, "vls", "with --experiment (buffer and curve use 1 VL, "
                                    "hol 2)"))
        return 2;
    if ((e == EXP_BUFFER || e == EXP_CURVE) &&
        (cli_unused(t, "buffer", "with --experiment buffer or curve (the experiment varies "
                    "the buffer)") ||
         cli_unused(t, "stall-fixed", "with --experiment buffer or curve (their stalls are "
                    "always of fixed length)")))
        return 2;
    if (e == EXP_BUFFER && cli_unused(t, "rtt", "with --experiment buffer (it runs the RTTs "
                                      "of --rtts)"))
        return 2;
    if (e != EXP_BUFFER && (cli_unused(t, "rtts", "without --experiment buffer") ||
                            cli_unused(t, "target", "without --experiment buffer")))
        return 2;
    if (e == EXP_HOL && cli_unused(t, "hol-vl", "with --experiment hol (VL1 stalls)"))
        return 2;
    if ((e == EXP_BUFFER || e == EXP_CURVE) &&
        cli_unused(t, "hol-vl", "with --experiment buffer or curve (the consumer stalls as "
                   "--stall-on and --stall-off say)"))
        return 2;
    return 0;
}

/* options of the other modes: the raw channel's in the lane modes, the lanes'
 * in the raw ones, credit and on/off settings in the other of the two */
static int check_mode_unused(const struct cli_opt *t, const struct opts *o, enum experiment e,
                             bool lanes)
{
    static const char *const raw_only[] = { "rtt", "jitter", "chunk", "stall-on", "stall-off",
        "stall-fixed", "data-corrupt", "fcp-loss", "fcp-corrupt", "fcp-min-gap", "overhead",
        "on-frac", "off-frac", "high", "low", "high-limit", NULL };
    if (lanes) {
        for (const char *const *n = raw_only; *n; n++)
            if (cli_unused(t, *n, "in the lane modes (it belongs to the raw channel modes "
                           "credit and onoff)"))
                return 2;
        if (!strcmp(o->mode, "lane-onoff") &&
            (cli_unused(t, "buffer", "with --mode lane-onoff (the lanes' own buffers "
                        "apply)") ||
             cli_unused(t, "fcp-period", "with --mode lane-onoff (no credits)")))
            return 2;
    } else if (cli_unused(t, "ber", "in the raw channel modes (the lane modes have bit "
                          "errors; the raw channel has --data-corrupt and --fcp-loss)") ||
               cli_unused(t, "cable-m", "in the raw channel modes (--rtt sets the delay)"))
        return 2;
    if (!lanes && !strcmp(o->mode, "credit") && e == EXP_NONE &&
        (cli_unused(t, "on-frac", "with --mode credit (on/off thresholds)") ||
         cli_unused(t, "off-frac", "with --mode credit (on/off thresholds)")))
        return 2;
    if (!lanes && !strcmp(o->mode, "onoff") && e == EXP_NONE) {
        static const char *const credit_only[] = { "chunk", "fcp-period", "fcp-min-gap",
                                                   "fcp-loss", "fcp-corrupt", NULL };
        for (const char *const *n = credit_only; *n; n++)
            if (cli_unused(t, *n, "with --mode onoff (credit mode only)"))
                return 2;
    }
    if (!((o->high && *o->high) || (o->low && *o->low)) &&
        cli_unused(t, "high-limit", "without --high or --low tables"))
        return 2;
    return 0;
}

/* the per-VL lists, the RTTs and the stall window */
static int check_lists(const struct cli_opt *t, const struct opts *o, enum experiment e,
                       bool lanes)
{
    if (o->loads && cli_is_set(t, "load"))
        return cli_fail(t, "load,loads", "give one of --load (every VL) and --loads (per VL)");
    if (o->drains && cli_is_set(t, "drain"))
        return cli_fail(t, "drain,drains", "give one of --drain (every VL) and --drains (per "
                        "VL)");
    /* lists: one value per VL, each in range */
    double tmp[RIFL_FC_MAX_DATA_VLS];
    if ((o->loads && vl_list(o, "loads", o->loads, tmp, false)) ||
        (o->drains && vl_list(o, "drains", o->drains, tmp, false)))
        return 2;
    if (e == EXP_BUFFER) {
        double r[32];
        int n = cli_parse_list(o->rtts, r, 32, 2, 1e9, cli_where(t, "rtts"));
        if (n < 0)
            return 2;
        for (int i = 0; i < n; i++)
            if (r[i] != floor(r[i]) || fmod(r[i], 2))
                return cli_fail(t, "rtts", "%g is not an even whole number of symbol times "
                                "(each direction is delayed by RTT/2)", r[i]);
    }
    if (!lanes && o->rtt % 2)
        return cli_fail(t, "rtt", "%" PRIu64 " is odd; give an even round trip (each "
                        "direction is delayed by RTT/2)", o->rtt);
    if (o->hol_vl >= (int64_t)o->vls_run)
        return cli_fail(t, "hol-vl", "VL %" PRId64 " does not exist with %u VL%s; use -1 "
                        "(none) or 0 to %u", o->hol_vl, o->vls_run, o->vls_run == 1 ? "" : "s",
                        o->vls_run - 1);
    bool hol = o->hol_vl >= 0 || e == EXP_HOL;
    if (!hol && (cli_unused(t, "hol-start", "without --hol-vl (or --experiment hol)") ||
                 cli_unused(t, "hol-end", "without --hol-vl (or --experiment hol)")))
        return 2;
    if (hol && !(o->hol_start < o->hol_end))
        return cli_fail(t, "hol-start,hol-end", "the stall window starts at %g and ends at %g "
                        "of the run; the start must come before the end", o->hol_start,
                        o->hol_end);
    if (hol && o->duration && (uint64_t)(o->hol_end * (double)o->duration) ==
                                  (uint64_t)(o->hol_start * (double)o->duration))
        return cli_fail(t, "hol-start,hol-end", "the stall window, %g to %g of a run of %" PRIu64
                        " symbol times (slots in lane modes), holds none of them; lengthen "
                        "--duration or widen the window", o->hol_start, o->hol_end, o->duration);
    return 0;
}

/* relations the library also refuses, checked here to name both options;
 * then the duration and that --csv can be written */
static int check_relations(const struct cli_opt *t, const struct opts *o, enum experiment e,
                           bool lanes)
{
    if (o->min_len > o->max_len)
        return cli_fail(t, "min-len,max-len", "the smallest packet (%" PRIu64 " bytes) is "
                        "larger than the largest (%" PRIu64 ")", o->min_len, o->max_len);
    if ((o->stall_on > 0) != (o->stall_off > 0))
        return cli_fail(t, "stall-on,stall-off", "random stalls need both a mean run "
                        "(--stall-on) and a mean stall (--stall-off)");
    if (!(o->off_frac < o->on_frac))
        return cli_fail(t, "on-frac,off-frac", "the OFF notice threshold --on-frac (%g) must "
                        "be above the ON notice threshold --off-frac (%g)", o->on_frac,
                        o->off_frac);
    if (o->chunk % 64)
        return cli_fail(t, "chunk", "%" PRIu64 " bytes is not a multiple of 64 bytes",
                        o->chunk);
    if (o->duration == 0 && (e == EXP_NONE || e == EXP_HOL))
        return cli_fail(t, "duration", "0 is automatic only with --experiment buffer or "
                        "curve; give the %s to run", lanes ? "frame slots" : "symbol times");
    if (o->csv) {
        char what[300];
        snprintf(what, sizeof what, "%s", cli_where(t, "csv"));
        if (cli_check_output(o->csv, what))
            return 2;
    }
    return 0;
}

static int check_options(const struct cli_opt *t, struct opts *o)
{
    bool lanes = lane_mode(o);
    enum experiment e = experiment_of(o);
    if (check_choices(t, o, e, lanes))
        return 2;
    o->vls_run = e == EXP_BUFFER || e == EXP_CURVE ? 1 : e == EXP_HOL ? 2 : (unsigned)o->vls;
    if (check_experiment_unused(t, e) || check_mode_unused(t, o, e, lanes) ||
        check_lists(t, o, e, lanes) || check_relations(t, o, e, lanes))
        return 2;
    return 0;
}

/* Open --csv for writing, once nothing can refuse the run any more (a
 * refused run leaves an existing file as it was). */
static int open_csv(const struct cli_opt *t, struct opts *o)
{
    if (!o->csv || o->csv_file)
        return 0;
    o->csv_file = fopen(o->csv, "w");
    if (!o->csv_file) {
        fprintf(stderr, "error: %s: cannot write '%s': %s\n", cli_where(t, "csv"), o->csv,
                strerror(errno));
        return 2;
    }
    return 0;
}

/* the experiment's table (and --csv data) */
static int run_experiment(struct opts *o, rifl_csim_config *c)
{
    enum experiment e = experiment_of(o);
    int rc;
    printf("seed %" PRIu64 "\n", o->seed);
    if (e == EXP_BUFFER)
        rc = experiment_buffer(o, c);
    else if (e == EXP_CURVE) {
        if (!o->duration)
            c->duration = 400 * o->rtt < 4000000 ? 4000000 : 400 * o->rtt;
        rc = experiment_curve(o, c);
    } else
        rc = experiment_hol(o, c);
    int crc = close_csv(o);
    return rc ? rc : crc;
}

static int run_parsed(int argc, char **argv, const struct cli_opt *opts, struct opts *o)
{
    int rc = cli_parse(argc, argv, opts, "[options]",
                       "Simulate link-level flow control on a link from port A to port B:"
                       " credit-based with virtual lanes (InfiniBand style) or ON/OFF (RIFL"
                       " style), over a channel with delay, jitter, FCP loss and corruption.",
                       NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (check_options(opts, o))
        return 2;
    if (o->pcap && (!lane_mode(o) || o->experiment))
        return cli_fail(opts, "pcap", "captures are of the lane modes' single run: use --mode "
                        "lane-credit or lane-onoff without --experiment");
    if (!o->pcap && cli_is_set(opts, "pcap-slots"))
        return cli_fail(opts, "pcap-slots", "it chooses what --pcap captures: add --pcap FILE");
    warn_long_run(o);
    if (lane_mode(o))
        return run_lanes(o);
    rifl_csim_config c;
    char msg[256] = "";
    if (build_config(o, &c, false))
        return 2;
    /* a short run of the same settings: refusals before any output */
    if (raw_ok_msg(o, msg, sizeof msg))
        return cli_blame(opts, raw_ok, o, msg);
    if (open_csv(opts, o))
        return 2;
    if (experiment_of(o) != EXP_NONE)
        return run_experiment(o, &c);
    rifl_csim_result r;
    if (run_one(&c, &r))
        return 2;
    print_result(&c, &r, o->json);
    if (c.mode == RIFL_CSIM_CREDIT && (!r.converged || r.rx_overflow))
        return 1;
    return 0;
}

static int run(int argc, char **argv)
{
    static struct opts o = { /* static: CLI strings stay reachable */
        .mode = "credit", .experiment = NULL, .rtts = "1000,2000,4000,8000,16000,32000,64000",
        .vls = 2, .duration = 4000000, .rtt = 4000, .buffer = 32768, .chunk = 64,
        .min_len = 64, .max_len = 2048, .fcp_period = 4096, .high_limit = 255, .seed = 1,
        .load = 1.0, .drain = 1.0, .on_frac = 2.0 / 3.0, .off_frac = 1.0 / 3.0,
        .hol_vl = -1, .hol_start = 0.25, .hol_end = 0.75, .target = 0.98,
        .cable_m = 10, .pcap_slots = 100000,
    };
    const struct cli_opt opts[] = {
        { "mode", CLI_STRING, &o.mode, "credit (per-VL credits, FCPs) or onoff (one shared"
          " buffer, ON/OFF notices) over the raw channel; lane-credit or lane-onoff over two"
          " RIFL lanes (--duration then counts frame slots)", 0, 0 },
        { "vls", CLI_UINT, &o.vls, "data VLs carrying traffic", 1, 15 },
        { "duration", CLI_UINT, &o.duration, "symbol times of traffic (with --experiment buffer"
          " or curve, 0 = 400 RTT and at least 4M per run)", 0, 1e12 },
        { "rtt", CLI_UINT, &o.rtt, "round trip in symbol times (byte times), even", 0, 1e9 },
        { "jitter", CLI_UINT, &o.jitter, "extra random delay per item, order kept", 0, 1e9 },
        { "buffer", CLI_BYTES, &o.buffer, "receive buffer: per VL (credit) or shared (onoff)",
          64, 1e12 },
        { "chunk", CLI_BYTES, &o.chunk, "receive allocation unit (multiple of 64)", 64, 1e9 },
        { "min-len", CLI_UINT, &o.min_len, "smallest packet, bytes", 1, 65536 },
        { "max-len", CLI_UINT, &o.max_len, "largest packet, bytes", 1, 65536 },
        { "load", CLI_DOUBLE, &o.load, "offered load per VL, fraction of the line (>= 1:"
          " always backlogged)", 0, 1e3 },
        { "loads", CLI_STRING, &o.loads, "per-VL offered loads, one per VL, e.g. 0.5,0.2", 0,
          0 },
        { "drain", CLI_DOUBLE, &o.drain, "receiver consumer rate per VL, fraction of the line",
          0, 1e3 },
        { "drains", CLI_STRING, &o.drains, "per-VL consumer rates, one per VL", 0, 0 },
        { "stall-on", CLI_DOUBLE, &o.stall_on, "mean consumer run between stalls, symbol"
          " times (in experiments: RTTs)", 0, 1e12 },
        { "stall-off", CLI_DOUBLE, &o.stall_off, "mean consumer stall, symbol times (in"
          " experiments: RTTs)", 0, 1e12 },
        { "stall-fixed", CLI_FLAG, &o.stall_fixed, "runs and stalls of exactly the mean length",
          0, 0 },
        { "hol-vl", CLI_INT, &o.hol_vl, "VL whose consumer stalls in the window (-1: none)",
          -1, 14 },
        { "hol-start", CLI_DOUBLE, &o.hol_start, "stall window start, fraction of the run",
          0, 1 },
        { "hol-end", CLI_DOUBLE, &o.hol_end, "stall window end, fraction of the run", 0, 1 },
        { "data-corrupt", CLI_DOUBLE, &o.data_corrupt, "probability a data packet is corrupted",
          0, 0.99 },
        { "fcp-loss", CLI_DOUBLE, &o.fcp_loss, "probability an FCP is lost", 0, 0.99 },
        { "fcp-corrupt", CLI_DOUBLE, &o.fcp_corrupt, "probability an FCP has 1-2 bits"
          " flipped", 0, 0.99 },
        { "fcp-period", CLI_UINT, &o.fcp_period, "symbol times between FCPs of a VL", 1,
          65536 },
        { "fcp-min-gap", CLI_UINT, &o.fcp_min_gap, "least gap between credit-return FCPs", 0,
          65536 },
        { "overhead", CLI_UINT, &o.overhead, "wire bytes added to every data packet", 0,
          65536 },
        { "on-frac", CLI_DOUBLE, &o.on_frac, "on/off: OFF notice above this fill", 0, 1 },
        { "off-frac", CLI_DOUBLE, &o.off_frac, "on/off: ON notice below this fill", 0, 1 },
        { "high", CLI_STRING, &o.high, "high-priority table VL:WEIGHT,... (64-byte units)",
          0, 0 },
        { "low", CLI_STRING, &o.low, "low-priority table VL:WEIGHT,...", 0, 0 },
        { "high-limit", CLI_UINT, &o.high_limit, "high-priority limit, 4096-byte units"
          " (255: none)", 0, 255 },
        { "ber", CLI_DOUBLE, &o.ber, "lane modes: bit error rate on the lanes", 0, 0.01 },
        { "cable-m", CLI_DOUBLE, &o.cable_m, "lane modes: cable length in metres", 0, 1e5 },
        { "seed", CLI_UINT, &o.seed, "random seed", 0, 18446744073709551615.0 },
        { "experiment", CLI_STRING, &o.experiment, "buffer (min buffer vs RTT), curve"
          " (efficiency vs buffer at --rtt) or hol (head-of-line blocking)", 0, 0 },
        { "rtts", CLI_STRING, &o.rtts, "--experiment buffer: RTTs to try (even, at most 32)",
          0, 0 },
        { "target", CLI_DOUBLE, &o.target, "--experiment buffer: efficiency to reach", 0, 1 },
        { "csv", CLI_STRING, &o.csv, "experiments: also write the data for gnuplot to this "
          "file", 0, 0 },
        { "json", CLI_FLAG, &o.json, "print the result of a run as one JSON object", 0, 0 },
        { "pcap", CLI_STRING, &o.pcap, "lane modes: write the frames that arrive at both lanes "
          "to this pcap file (docs/capture.md)", 0, 0 },
        { "pcap-slots", CLI_UINT, &o.pcap_slots, "--pcap: capture the first N frame slots", 1,
          1e12 },
        CLI_END
    };
    g_opts = opts;
    return run_parsed(argc, argv, opts, &o);
}

const struct rifl_command rifl_cmd_sim_credit = {
    "sim credit", "credit-based flow control with virtual lanes vs ON/OFF (simulation)", run
};

/* `rifl sim credit`: credit-based link-level flow control with virtual
 * lanes, simulated over a raw lossy channel, against RIFL-style ON/OFF flow
 * control; plus the experiments of docs/credit-flow-control.md. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rifl/credit_sim.h"

struct opts {
    const char *mode, *experiment, *loads, *drains, *high, *low, *rtts, *csv;
    uint64_t vls, duration, rtt, jitter, buffer, chunk, min_len, max_len;
    uint64_t fcp_period, fcp_min_gap, overhead, high_limit, seed;
    double load, drain, stall_on, stall_off, data_corrupt, fcp_loss, fcp_corrupt;
    double on_frac, off_frac, hol_start, hol_end, target, ber, cable_m;
    int64_t hol_vl;
    bool stall_fixed, json, quiet;
};

static int parse_list(const char *s, double *out, unsigned max, const char *what)
{
    unsigned k = 0;
    const char *p = s;
    while (p && *p) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || k >= max) {
            fprintf(stderr, "error: --%s '%s': expected up to %u numbers separated by commas\n",
                    what, s, max);
            return -1;
        }
        out[k++] = v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') {
            fprintf(stderr, "error: --%s '%s': expected numbers separated by commas\n", what, s);
            return -1;
        }
    }
    return (int)k;
}

static int build_config(const struct opts *o, rifl_csim_config *c)
{
    rifl_csim_default_config(c);
    if (!strcmp(o->mode, "credit"))
        c->mode = RIFL_CSIM_CREDIT;
    else if (!strcmp(o->mode, "onoff"))
        c->mode = RIFL_CSIM_ONOFF;
    else {
        fprintf(stderr, "error: --mode '%s' unknown; use credit, onoff, lane-credit or"
                " lane-onoff\n", o->mode);
        return 2;
    }
    c->vls = (unsigned)o->vls;
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
    if (o->loads && parse_list(o->loads, c->load, RIFL_FC_MAX_DATA_VLS, "loads") < 0)
        return 2;
    if (o->drains && parse_list(o->drains, c->drain, RIFL_FC_MAX_DATA_VLS, "drains") < 0)
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
    if ((o->high && *o->high) || (o->low && *o->low)) {
        if (rifl_vlarb_parse_table(o->high, c->arb.high, &c->arb.n_high, msg, sizeof msg) ||
            rifl_vlarb_parse_table(o->low, c->arb.low, &c->arb.n_low, msg, sizeof msg)) {
            fprintf(stderr, "error: %s\n", msg);
            return 2;
        }
        c->arb.high_limit = (unsigned)o->high_limit;
    }
    return 0;
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

static void print_result(const rifl_csim_config *c, const rifl_csim_result *r, bool json)
{
    if (json) {
        printf("{\"mode\":\"%s\",\"seed\":%" PRIu64 ",\"vls\":%u,\"duration\":%" PRIu64
               ",\"rtt\":%" PRIu64 ",\"buffer_bytes\":%" PRIu64 ",\"throughput\":%.6f"
               ",\"efficiency\":%.6f,\"fcp_sent\":%" PRIu64 ",\"fcp_lost\":%" PRIu64
               ",\"fcp_corrupted\":%" PRIu64 ",\"fcp_rejected\":%" PRIu64
               ",\"data_corrupted\":%" PRIu64 ",\"abr_resyncs\":%" PRIu64
               ",\"rx_overflow\":%" PRIu64 ",\"xoff\":%" PRIu64 ",\"xon\":%" PRIu64
               ",\"leaked_blocks\":%" PRIu64 ",\"converged\":%s,\"vl\":[",
               rifl_csim_mode_name(c->mode), c->seed, c->vls, c->duration, 2 * c->one_way,
               c->buffer_bytes, r->total_throughput, r->efficiency, r->fcp_sent, r->fcp_lost,
               r->fcp_corrupted, r->fcp_rejected, r->data_corrupted, r->abr_resyncs,
               r->rx_overflow, r->xoff_sent, r->xon_sent, r->leaked_blocks,
               c->mode == RIFL_CSIM_CREDIT ? (r->converged ? "true" : "false") : "null");
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

/* Smallest buffer (bytes, multiple of 64) with efficiency >= target and no
 * drop, by bisection between lo and hi; 0 when even hi fails. */
static int min_buffer(rifl_csim_config *c, double target, uint64_t lo, uint64_t hi,
                      uint64_t *out, unsigned *runs)
{
    rifl_csim_result r;
    c->buffer_bytes = hi;
    if (run_one(c, &r))
        return 2;
    (*runs)++;
    if (r.efficiency < target || r.rx_overflow || r.vl[0].drops) {
        *out = 0;
        return 0;
    }
    while (hi - lo > 64) {
        uint64_t mid = (lo + hi) / 2 / 64 * 64;
        if (mid <= lo)
            break;
        c->buffer_bytes = mid;
        if (run_one(c, &r))
            return 2;
        (*runs)++;
        if (r.efficiency >= target && !r.rx_overflow && !r.vl[0].drops)
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
    int n = parse_list(o->rtts, rtts, 32, "rtts");
    if (n <= 0)
        return 2;
    FILE *csv = NULL;
    if (o->csv && !(csv = fopen(o->csv, "w"))) {
        fprintf(stderr, "error: cannot write '%s'\n", o->csv);
        return 2;
    }
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
        c.one_way = rtt / 2;
        c.vls = 1;
        c.stall_fixed = true;
        c.stall_on = o->stall_on * (double)rtt;
        c.stall_off = o->stall_off * (double)rtt;
        c.duration = o->duration ? o->duration : 400 * rtt;
        if (c.duration < 4000000)
            c.duration = 4000000; /* start-up (link activation) stays below 0.2% */
        uint64_t res[2];
        for (int m = 0; m < 2; m++) {
            c.mode = m ? RIFL_CSIM_ONOFF : RIFL_CSIM_CREDIT;
            uint64_t lo = (c.max_len + 63) / 64 * 64 - 64;
            uint64_t hi = 6 * rtt + 4 * (uint64_t)c.max_len;
            if (!m && hi > RIFL_FC_REG_MASK * 64ull)
                hi = RIFL_FC_REG_MASK * 64ull; /* the 12-bit Free Space Count */
            hi = (hi + 63) / 64 * 64;
            if (min_buffer(&c, o->target, lo, hi, &res[m], &runs)) {
                if (csv)
                    fclose(csv);
                return 2;
            }
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
    if (csv)
        fclose(csv);
    return 0;
}

/* ---- experiment: efficiency against buffer at one RTT --------------------- */

static int experiment_curve(const struct opts *o, rifl_csim_config *base)
{
    FILE *csv = NULL;
    if (o->csv && !(csv = fopen(o->csv, "w"))) {
        fprintf(stderr, "error: cannot write '%s'\n", o->csv);
        return 2;
    }
    uint64_t rtt = o->rtt;
    printf("# efficiency against buffer, RTT %" PRIu64 " symbol times, 1 VL, consumer"
           " stalls %g RTT every %g RTT, seed %" PRIu64 "\n",
           rtt, o->stall_off, o->stall_on, base->seed);
    printf("| buffer (x RTT) | credit: efficiency | credit: drops | on/off: efficiency |"
           " on/off: drops |\n|---|---|---|---|---|\n");
    if (csv)
        fprintf(csv, "# buffer_rtts credit_eff credit_drops onoff_eff onoff_drops\n");
    for (double x = 0.25; x <= 4.0001; x += 0.25) {
        rifl_csim_config c = *base;
        c.vls = 1;
        c.stall_fixed = true;
        c.stall_on = o->stall_on * (double)rtt;
        c.stall_off = o->stall_off * (double)rtt;
        c.buffer_bytes = (uint64_t)(x * (double)rtt) / 64 * 64;
        if (c.buffer_bytes < c.max_len)
            c.buffer_bytes = (c.max_len + 63) / 64 * 64;
        rifl_csim_result r[2];
        for (int m = 0; m < 2; m++) {
            c.mode = m ? RIFL_CSIM_ONOFF : RIFL_CSIM_CREDIT;
            if (run_one(&c, &r[m])) {
                if (csv)
                    fclose(csv);
                return 2;
            }
        }
        printf("| %.2f | %.4f | %" PRIu64 " | %.4f | %" PRIu64 " |\n", x, r[0].efficiency,
               r[0].vl[0].drops, r[1].efficiency, r[1].vl[0].drops);
        if (csv)
            fprintf(csv, "%.3f %.5f %" PRIu64 " %.5f %" PRIu64 "\n", x, r[0].efficiency,
                    r[0].vl[0].drops, r[1].efficiency, r[1].vl[0].drops);
    }
    if (csv)
        fclose(csv);
    return 0;
}

/* ---- experiment: head-of-line blocking --------------------------------------- */

static int experiment_hol(const struct opts *o, rifl_csim_config *base)
{
    printf("# head-of-line blocking: 2 VLs each offered %.2f of the line; VL1's consumer"
           " stalls from %.0f%% to %.0f%% of the run; RTT %" PRIu64 ", buffer %" PRIu64
           " B (credit: per VL, on/off: shared, twice that), seed %" PRIu64 "\n",
           base->load[0], o->hol_start * 100, o->hol_end * 100, 2 * base->one_way,
           base->buffer_bytes, base->seed);
    printf("| mode | VL0 before stall | VL0 during stall | VL1 during stall | VL0 after |"
           " drops |\n|---|---|---|---|---|---|\n");
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
        double len[3] = { (double)c.hol_start, (double)(c.hol_end - c.hol_start),
                          (double)(c.duration - c.hol_end) };
        uint64_t d0[3] = { r.vl[0].pre_bytes, r.vl[0].hol_bytes, r.vl[0].post_bytes };
        uint64_t d1 = r.vl[1].hol_bytes;
        printf("| %s | %.3f | %.3f | %.3f | %.3f | %" PRIu64 " |\n", rifl_csim_mode_name(c.mode),
               d0[0] / len[0], d0[1] / len[1], d1 / len[1], d0[2] / len[2],
               r.vl[0].drops + r.vl[1].drops);
    }
    return 0;
}

/* ---- lane modes: two RIFL lanes back to back ------------------------------ */

static int run_lanes(const struct opts *o)
{
    rifl_clane_config c;
    rifl_clane_default_config(&c);
    c.credit = !strcmp(o->mode, "lane-credit");
    c.vls = (unsigned)o->vls;
    c.slots = o->duration;
    c.buffer_bytes = o->buffer;
    c.min_len = (uint32_t)o->min_len;
    c.max_len = (uint32_t)o->max_len;
    for (unsigned v = 0; v < RIFL_FC_MAX_DATA_VLS; v++) {
        c.load[v] = o->load;
        c.drain[v] = o->drain;
    }
    if (o->loads && parse_list(o->loads, c.load, RIFL_FC_MAX_DATA_VLS, "loads") < 0)
        return 2;
    if (o->drains && parse_list(o->drains, c.drain, RIFL_FC_MAX_DATA_VLS, "drains") < 0)
        return 2;
    c.hol_vl = (int)o->hol_vl;
    c.hol_start = (uint64_t)(o->hol_start * (double)c.slots);
    c.hol_end = (uint64_t)(o->hol_end * (double)c.slots);
    c.ber = o->ber;
    c.fcp_period = (uint32_t)o->fcp_period;
    c.lane.link.cable_m = o->cable_m;
    c.seed = o->seed;
    rifl_clane_result r;
    char msg[256] = "";
    int rc = rifl_clane_run(&c, &r, msg, sizeof msg);
    if (rc != RIFL_OK) {
        fprintf(stderr, "error: %s\n", msg[0] ? msg : rifl_strerror(rc));
        return 2;
    }
    uint64_t win = c.hol_end - c.hol_start;
    double pay = (double)(c.lane.frame_bits / 8 - 2);
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
            printf("  %8.4f", win ? (double)r.hol_bytes[v] / ((double)win * pay) : 0.0);
        printf("\n");
    }
    printf("  throughput %.4f of the lane payload rate; %s; bad packets %" PRIu64
           "; replay cycles %" PRIu64 "; lane rx overflow %" PRIu64 "\n",
           r.throughput, r.lossless ? "lossless" : "NOT LOSSLESS", r.bad_packets, r.replays,
           r.lane_rx_overflow);
    if (c.credit)
        printf("  FCPs sent %" PRIu64 " (extension frames, code 0x%02x); credit drops %" PRIu64
               "; credit after drain: %s\n",
               r.fcp_sent, RIFL_FCP_EXT_CODE, r.credit_drops,
               r.converged ? "consistent" : "INCONSISTENT");
    else
        printf("  ON/OFF flow-control frames sent %" PRIu64 "\n", r.fc_onoff_sent);
    return r.lossless && (!c.credit || r.converged) ? 0 : 1;
}

static int run(int argc, char **argv)
{
    static struct opts o = { /* static: CLI strings stay reachable */
        .mode = "credit", .experiment = NULL, .rtts = "1000,2000,4000,8000,16000,32000,64000",
        .vls = 2, .duration = 4000000, .rtt = 4000, .buffer = 32768, .chunk = 64,
        .min_len = 64, .max_len = 2048, .fcp_period = 4096, .high_limit = 255, .seed = 1,
        .load = 1.0, .drain = 1.0, .on_frac = 2.0 / 3.0, .off_frac = 1.0 / 3.0,
        .hol_vl = -1, .hol_start = 0.25, .hol_end = 0.75, .target = 0.98,
        .cable_m = 10,
    };
    const struct cli_opt opts[] = {
        { "mode", CLI_STRING, &o.mode, "credit (per-VL credits, FCPs) or onoff (one shared"
          " buffer, ON/OFF notices) over the raw channel; lane-credit or lane-onoff over two"
          " RIFL lanes (--duration then counts frame slots)", 0, 0 },
        { "vls", CLI_UINT, &o.vls, "data VLs carrying traffic", 1, 15 },
        { "duration", CLI_UINT, &o.duration, "symbol times of traffic (with --experiment buffer or curve, 0 ="
          " 400 RTT and at least 4M per run)", 0, 1e12 },
        { "rtt", CLI_UINT, &o.rtt, "round trip in symbol times (byte times)", 0, 1e9 },
        { "jitter", CLI_UINT, &o.jitter, "extra random delay per item, order kept", 0, 1e9 },
        { "buffer", CLI_BYTES, &o.buffer, "receive buffer: per VL (credit) or shared (onoff)",
          64, 1e12 },
        { "chunk", CLI_BYTES, &o.chunk, "receive allocation unit (multiple of 64)", 64, 1e9 },
        { "min-len", CLI_UINT, &o.min_len, "smallest packet, bytes", 1, 65536 },
        { "max-len", CLI_UINT, &o.max_len, "largest packet, bytes", 1, 65536 },
        { "load", CLI_DOUBLE, &o.load, "offered load per VL, fraction of the line (>= 1:"
          " always backlogged)", 0, 1e3 },
        { "loads", CLI_STRING, &o.loads, "per-VL offered loads, e.g. 0.5,0.2", 0, 0 },
        { "drain", CLI_DOUBLE, &o.drain, "receiver consumer rate per VL, fraction of the line",
          0, 1e3 },
        { "drains", CLI_STRING, &o.drains, "per-VL consumer rates", 0, 0 },
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
        { "seed", CLI_UINT, &o.seed, "random seed", 0, 1.8e19 },
        { "experiment", CLI_STRING, &o.experiment, "buffer (min buffer vs RTT), curve"
          " (efficiency vs buffer at --rtt) or hol (head-of-line blocking)", 0, 0 },
        { "rtts", CLI_STRING, &o.rtts, "--experiment buffer: RTTs to try", 0, 0 },
        { "target", CLI_DOUBLE, &o.target, "--experiment buffer: efficiency to reach", 0, 1 },
        { "csv", CLI_STRING, &o.csv, "experiments: also write the data for gnuplot here",
          0, 0 },
        { "json", CLI_FLAG, &o.json, "print the result as one JSON object", 0, 0 },
        CLI_END
    };
    int rc = cli_parse(argc, argv, opts, "[options]",
                       "Simulate link-level flow control on a link from port A to port B:"
                       " credit-based with virtual lanes (InfiniBand style) or ON/OFF (RIFL"
                       " style), over a channel with delay, jitter, FCP loss and corruption.",
                       NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (!strncmp(o.mode, "lane-", 5)) {
        if (strcmp(o.mode, "lane-credit") && strcmp(o.mode, "lane-onoff")) {
            fprintf(stderr, "error: --mode '%s' unknown; use credit, onoff, lane-credit or"
                    " lane-onoff\n", o.mode);
            return 2;
        }
        if (o.experiment) {
            fprintf(stderr, "error: the experiments run on the raw channel; drop --mode %s"
                    " or --experiment\n", o.mode);
            return 2;
        }
        return run_lanes(&o);
    }
    rifl_csim_config c;
    if (build_config(&o, &c))
        return 2;
    if (o.experiment) {
        printf("seed %" PRIu64 "\n", o.seed);
        if (!strcmp(o.experiment, "buffer"))
            return experiment_buffer(&o, &c);
        if (!strcmp(o.experiment, "curve")) {
            if (!o.duration)
                c.duration = 400 * o.rtt < 4000000 ? 4000000 : 400 * o.rtt;
            return experiment_curve(&o, &c);
        }
        if (!strcmp(o.experiment, "hol"))
            return experiment_hol(&o, &c);
        fprintf(stderr, "error: --experiment '%s' unknown; use buffer, curve or hol\n",
                o.experiment);
        return 2;
    }
    rifl_csim_result r;
    if (run_one(&c, &r))
        return 2;
    print_result(&c, &r, o.json);
    if (c.mode == RIFL_CSIM_CREDIT && (!r.converged || r.rx_overflow))
        return 1;
    return 0;
}

const struct rifl_command rifl_cmd_sim_credit = {
    "sim credit", "credit-based flow control with virtual lanes vs ON/OFF (simulation)", run
};

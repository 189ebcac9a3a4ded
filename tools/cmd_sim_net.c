/* `rifl sim net`: hosts with RIFL NICs and RIFL Layer 2 switches joined by
 * real RIFL links (rifl/sim/netsim.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "rifl/capture.h"
#include "rifl/nic.h"
#include "rifl/sim/netsim.h"
#include "rifl/sim/pair.h"

struct opts {
    const char *topology, *fc, *traffic, *pattern, *pcap, *pcap_host, *msg_cdf;
    rifl_net_cdf cdf;
    double load, burst_bytes, link_gbps, cable_m, transceiver_ns, switch_ns, ber;
    double pcie_gbps, pcie_rtt_ns;
    double warmup_us, time_us, drain_us;
    double max_memory_gb;
    uint64_t msg_bytes, msg_min, msg_max, incast, frame_bits, iterations, voq_cells, paths;
    uint64_t vls, credit_cells, lanes, group_lanes;
    uint64_t nic_messages, seed, pcap_slots, jobs, bytes_per_flow;
    const char *sweep, *plot, *plot_y;
    bool json, csv, progress, links, by_content;
};

static const char *fc_name(rifl_net_fc f)
{
    return f == RIFL_NET_FC_LINK ? "link" : f == RIFL_NET_FC_CREDIT ? "credit" : "voq";
}
static const char *pattern_name(rifl_net_pattern p)
{
    static const char *const names[] = { "uniform", "permutation", "incast", "all-to-all" };
    return names[p];
}

/* Whether a sweep (NULL: none) varies option `name`. */
static bool swept(const struct cli_sweep *sw, const char *name)
{
    return sw && cli_sweep_has(sw, name);
}

/* Options the other settings make meaningless are refused, unless a sweep
 * varies the setting that decides it. */
static int check_unused(const struct cli_opt *t, const struct opts *o,
                        const rifl_topology *topo, const struct cli_sweep *sw)
{
    if (!swept(sw, "traffic") && strcasecmp(o->traffic, "bursty") &&
        cli_unused(t, "burst-bytes", "with --traffic bernoulli (bursty traffic only)"))
        return 2;
    if (!swept(sw, "pattern") && strcasecmp(o->pattern, "incast")) {
        char why[128];
        snprintf(why, sizeof why, "with --pattern %s (the senders of --pattern incast)",
                 o->pattern);
        if (cli_unused(t, "incast", why))
            return 2;
    }
    if (!swept(sw, "lanes") && cli_group_lanes_unused(t, topo, o->lanes))
        return 2;
    /* (--link-gbps still sets the time step when it is the fastest) */
    static const char *const per_link[] = { "lanes", "cable-m", "transceiver-ns", "ber" };
    for (size_t i = 0; i < sizeof per_link / sizeof *per_link; i++)
        if (!swept(sw, per_link[i]) && cli_topo_gives_unused(t, topo, per_link[i]))
            return 2;
    if (!swept(sw, "bytes-per-flow") && o->bytes_per_flow) {
        static const char why[] = "with --bytes-per-flow (a finite workload measures every "
                                  "message; the window is the steady state's, "
                                  "--bytes-per-flow 0)";
        if (cli_unused(t, "warmup-us", why) || cli_unused(t, "time-us", why))
            return 2;
    }
    /* (the network raises smaller VOQs to an input's credit, and larger
     * ones never fill: an input holds no more than its credit) */
    if (!swept(sw, "fc") && !strcasecmp(o->fc, "credit") &&
        cli_unused(t, "voq-cells", "with --fc credit (the VOQs are sized to hold an input's "
                   "whole credit, --vls x --credit-cells cells, and never fill)"))
        return 2;
    return 0;
}

/* --msg-min above --msg-max: the message names the setting to change, the
 * one a sweep varies or else the one the user gave (both if both are). */
static int empty_range(const struct cli_opt *t, const struct cli_sweep *sw, unsigned lo,
                       unsigned hi)
{
    bool smin = swept(sw, "msg-min"), smax = swept(sw, "msg-max");
    bool blame_max = smax != smin ? smax : !cli_is_set(t, "msg-min");
    bool blame_min = smax != smin ? smin : !cli_is_set(t, "msg-max");
    if (blame_max && !blame_min)
        return cli_fail(t, "msg-max", "msg-max %u is below --msg-min %u%s, so the range "
                        "%u..%u is empty; give msg-max of at least %u, or a smaller --msg-min",
                        hi, lo, cli_is_set(t, "msg-min") ? "" : " (its default)", lo, hi, lo);
    if (blame_min && !blame_max)
        return cli_fail(t, "msg-min", "msg-min %u is above --msg-max %u%s, so the range "
                        "%u..%u is empty; give msg-min of at most %u, or a larger --msg-max",
                        lo, hi, cli_is_set(t, "msg-max") ? "" : " (its default)", lo, hi, hi);
    return cli_fail(t, "msg-min,msg-max", "the range %u..%u is empty; give min <= max", lo,
                    hi);
}

static int build(const struct cli_opt *t, const struct opts *o, const rifl_topology *topo,
                 const struct cli_sweep *sw, rifl_net_config *c)
{
    *c = rifl_net_default_config;
    c->topo = topo;
    if (!strcasecmp(o->fc, "voq"))
        c->fc = RIFL_NET_FC_VOQ;
    else if (!strcasecmp(o->fc, "link"))
        c->fc = RIFL_NET_FC_LINK;
    else if (!strcasecmp(o->fc, "credit"))
        c->fc = RIFL_NET_FC_CREDIT;
    else
        return cli_fail(t, "fc", "'%s' is unknown; use voq, credit or link", o->fc);
    if (c->fc != RIFL_NET_FC_CREDIT && (cli_is_set(t, "vls") || cli_is_set(t, "credit-cells")))
        return cli_fail(t, cli_is_set(t, "vls") ? "vls" : "credit-cells",
                        "virtual lanes and their credit are for --fc credit; add it, or drop "
                        "this option");
    c->vls = (unsigned)o->vls;
    c->credit_cells = (unsigned)o->credit_cells;
    if (!strcasecmp(o->traffic, "bernoulli"))
        c->arrivals = RIFL_NET_BERNOULLI;
    else if (!strcasecmp(o->traffic, "bursty"))
        c->arrivals = RIFL_NET_BURSTY;
    else
        return cli_fail(t, "traffic", "'%s' is unknown; use bernoulli or bursty", o->traffic);
    static const char *const pats[] = { "uniform", "permutation", "incast", "all-to-all" };
    unsigned p = 0;
    while (p < 4 && strcasecmp(o->pattern, pats[p]))
        p++;
    if (p == 4)
        return cli_fail(t, "pattern", "'%s' is unknown; use uniform, permutation, incast or "
                                      "all-to-all", o->pattern);
    c->pattern = (rifl_net_pattern)p;
    c->load = o->load;
    c->msg_min = c->msg_max = (unsigned)o->msg_bytes;
    if (o->msg_cdf) {
        if (cli_is_set(t, "msg-bytes") || cli_is_set(t, "msg-min") || cli_is_set(t, "msg-max"))
            return cli_fail(t, "msg-cdf", "sizes come from the CDF file: drop --msg-bytes, "
                                          "--msg-min and --msg-max");
        c->sizes = &o->cdf;
    } else if (cli_is_set(t, "msg-min") || cli_is_set(t, "msg-max")) {
        if (cli_is_set(t, "msg-bytes"))
            return cli_fail(t, "msg-bytes,msg-min", "give a fixed size or a range, not both");
        c->msg_min = (unsigned)o->msg_min;
        c->msg_max = (unsigned)o->msg_max;
        if (c->msg_min > c->msg_max)
            return empty_range(t, sw, c->msg_min, c->msg_max);
    }
    c->burst_bytes = o->burst_bytes;
    c->incast = (unsigned)o->incast;
    c->link_gbps = o->link_gbps;
    c->frame_bits = (unsigned)o->frame_bits;
    if (c->frame_bits < 64 || c->frame_bits > 2048 || (c->frame_bits & (c->frame_bits - 1)))
        return cli_fail(t, "frame-bits", "%u: use 64, 128, 256, 512, 1024 or 2048",
                        c->frame_bits);
    c->lanes = (unsigned)o->lanes;
    c->group_lanes = (unsigned)o->group_lanes;
    if (c->lanes & (c->lanes - 1))
        return cli_fail(t, "lanes", "%u: use 1, 2, 4, 8 or 16", c->lanes);
    if (c->group_lanes & (c->group_lanes - 1))
        return cli_fail(t, "group-lanes", "%u: use a power of two up to a bonded link's "
                        "lanes (0: all of them, spatial only; 1: temporal only)",
                        c->group_lanes);
    c->cable_m = o->cable_m;
    c->transceiver_ns = o->transceiver_ns;
    c->switch_ns = o->switch_ns;
    if (o->ber >= RIFL_TOPO_MAX_BER)
        return cli_fail(t, "ber", "%g is not below 1e-3; give a bit error rate from 0 up to, "
                        "not including, 1e-3", o->ber);
    c->ber = o->ber;
    c->iterations = (unsigned)o->iterations;
    c->voq_cells = (unsigned)o->voq_cells;
    c->max_paths = (unsigned)o->paths;
    c->nic_messages = (unsigned)o->nic_messages;
    c->max_memory_gb = o->max_memory_gb;
    c->pcie_gbps = o->pcie_gbps;
    c->pcie_rtt_ns = o->pcie_rtt_ns;
    if (c->pcie_gbps != 0 && !(c->pcie_gbps >= 1 && c->pcie_gbps <= 10000))
        return cli_fail(t, "pcie-gbps", "%g Gbit/s: give 1 to 10000 (0: no host interface; "
                                        "the paper's NIC: 90)", c->pcie_gbps);
    if (!(c->pcie_rtt_ns >= 0 && c->pcie_rtt_ns <= 1e6))
        return cli_fail(t, "pcie-rtt-ns", "%g ns: give 0 to 1e6 (the paper's NIC: 2500)",
                        c->pcie_rtt_ns);
    if (cli_is_set(t, "pcie-rtt-ns") && c->pcie_gbps == 0)
        return cli_fail(t, "pcie-rtt-ns", "there is no host interface: add --pcie-gbps "
                                          "(e.g. 90)");
    c->warmup_ns = o->warmup_us * 1000;
    c->window_ns = o->time_us * 1000;
    c->drain_ns = o->drain_us * 1000;
    c->seed = o->seed;
    c->by_content = o->by_content;
    c->bytes_per_flow = o->bytes_per_flow;
    return check_unused(t, o, topo, sw);
}

static void json_pct(FILE *f, const char *name, const rifl_net_pct *p, double scale)
{
    fprintf(f, "\"%s\": {\"p50\": %.6g, \"p99\": %.6g, \"p999\": %.6g, \"max\": %.6g, "
               "\"mean\": %.6g, \"samples\": %llu, \"p1\": %.6g, \"p75\": %.6g, "
               "\"p90\": %.6g, \"p95\": %.6g}",
            name, p->p50 * scale, p->p99 * scale, p->p999 * scale, p->max * scale,
            p->mean * scale, (unsigned long long)p->samples, p->p1 * scale, p->p75 * scale,
            p->p90 * scale, p->p95 * scale);
}

static void print_json(FILE *f, const struct opts *o, const rifl_net_config *c,
                       const rifl_net_result *r, bool links)
{
    fprintf(f, "{\"topology\": ");
    json_str(f, o->topology);
    if (c->sizes) {
        fprintf(f, ", \"msg_cdf\": ");
        json_str(f, o->msg_cdf);
    }
    fprintf(f, ", \"hosts\": %u, \"switches\": %u, \"link_count\": %u, \"fc\": \"%s\", "
               "\"traffic\": \"%s\", \"pattern\": \"%s\", \"load\": %g, \"msg_min\": %u, "
               "\"msg_max\": %u, \"ber\": %g, \"link_gbps\": %g, \"frame_bits\": %u, "
               "\"lanes\": %u, \"group_lanes\": %u, \"seed\": %llu,\n",
            r->hosts, r->switches, r->links, fc_name(c->fc),
            c->arrivals == RIFL_NET_BURSTY ? "bursty" : "bernoulli", pattern_name(c->pattern),
            c->load, c->msg_min, c->msg_max, c->ber, c->link_gbps, c->frame_bits,
            c->lanes ? c->lanes : 1, c->group_lanes ? c->group_lanes : (c->lanes ? c->lanes : 1),
            (unsigned long long)c->seed);
    if (c->fc == RIFL_NET_FC_CREDIT)
        fprintf(f, " \"vls\": %u, \"credit_cells\": %u, \"credit_waits\": %llu,\n", r->vls,
                r->credit_cells, (unsigned long long)r->credit_waits);
    if (c->pcie_gbps > 0)
        fprintf(f, " \"pcie_gbps\": %g, \"pcie_rtt_ns\": %g,\n", c->pcie_gbps, c->pcie_rtt_ns);
    if (r->finite)
        fprintf(f, " \"measure\": \"finite workload: %llu bytes per flow, every message\", "
                   "\"bytes_per_flow\": %llu,",
                (unsigned long long)c->bytes_per_flow, (unsigned long long)c->bytes_per_flow);
    else
        fprintf(f, " \"measure\": \"steady state: messages generated in a %g us window after "
                   "%g us of warm-up\",",
                c->window_ns / 1000, c->warmup_ns / 1000);
    fprintf(f, " \"finished\": %s, \"sim_us\": %.6g, \"slot_ns\": %.6g, \"cell_ns\": %.6g,\n",
            r->finished ? "true" : "false", r->sim_ns / 1000, r->slot_ns, r->cell_ns);
    fprintf(f, " ");
    json_pct(f, "latency_ns", &r->latency, 1);
    fprintf(f, ",\n ");
    json_pct(f, "latency_head_ns", &r->latency_head, 1);
    fprintf(f, ",\n ");
    json_pct(f, "mct_us", &r->mct, 1e-3);
    fprintf(f, ",\n \"hops\": [");
    bool first = true;
    for (unsigned h = 1; h <= RIFL_L2_MAX_HOPS; h++) {
        if (!r->path_cells[h])
            continue;
        fprintf(f, "%s{\"switches\": %u, \"cells\": %llu, \"segment_ns\": [", first ? "" : ", ",
                h, (unsigned long long)r->path_cells[h]);
        for (unsigned k = 0; k < 2 * h + 3; k++)
            fprintf(f, "%s%.4g", k ? ", " : "", r->segment_ns[h][k]);
        fprintf(f, "]}");
        first = false;
    }
    fprintf(f, "],\n \"throughput_gbps\": {\"mean\": %.6g, \"min\": %.6g, \"max\": %.6g, "
               "\"offered\": %.6g}",
            r->throughput_gbps_mean, r->throughput_gbps_min, r->throughput_gbps_max,
            r->offered_gbps);
    if (c->pattern == RIFL_NET_INCAST)
        fprintf(f, ", \"victim_gbps\": %.6g", r->victim_gbps);
    fprintf(f, ",\n \"generated_cells\": %llu, \"delivered_cells\": %llu, "
               "\"completed_messages\": %llu, \"dropped\": %llu, \"lost\": %llu, "
               "\"undelivered\": %llu, \"corrupt\": %llu, \"replays\": %llu, "
               "\"fc_frames\": %llu, \"max_voq_cells\": %llu, \"voq_full_waits\": %llu, "
               "\"source_stalls\": %llu, "
               "\"lagging_sources\": %u, \"source_lag_us\": %.6g, "
               "\"verify_fails\": %llu, \"lane_slots\": %llu, \"idle_lane_slots\": %llu",
            (unsigned long long)r->generated_cells, (unsigned long long)r->delivered_cells,
            (unsigned long long)r->completed_messages, (unsigned long long)r->dropped,
            (unsigned long long)r->lost, (unsigned long long)r->undelivered,
            (unsigned long long)r->corrupt, (unsigned long long)r->replays,
            (unsigned long long)r->fc_frames, (unsigned long long)r->max_voq_cells,
            (unsigned long long)r->voq_full_waits,
            (unsigned long long)r->source_stalls, r->lagging_sources, r->source_lag_ns / 1000,
            (unsigned long long)r->verify_fails,
            (unsigned long long)r->lane_slots, (unsigned long long)r->idle_lane_slots);
    fprintf(f, ",\n \"links\": [");
    for (unsigned i = 0; links && i < 2 * r->links; i++) {
        const rifl_net_link *l = &r->link[i];
        fprintf(f, "%s\n  {\"from\": ", i ? "," : "");
        json_str(f, l->from);
        fprintf(f, ", \"to\": ");
        json_str(f, l->to);
        fprintf(f, ", \"rate_gbps\": %g, \"lanes\": %u, \"cable_m\": %g, \"ber\": %g, "
                   "\"fid_bits\": %u, \"delay_frames\": %u",
                l->rate_gbps, l->lanes, l->cable_m, l->ber, l->fid_bits, l->delay_frames);
        fprintf(f, ", \"utilisation\": %.4f, \"replays\": %llu, \"verify_fails\": %llu, "
                   "\"fc_frames\": %llu}",
                l->utilisation, (unsigned long long)l->replays,
                (unsigned long long)l->verify_fails, (unsigned long long)l->fc_frames);
    }
    fprintf(f, "]}\n");
}

/* The CSV's result columns, in order. */
static const char *const result_cols[] = {
    "latency_p50_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns", "head_p50_ns",
    "head_p99_ns", "head_p999_ns", "mct_p50_us", "mct_p99_us", "throughput_gbps",
    "delivered_cells", "dropped", "lost", "replays", "fc_frames", "max_voq_cells", "finished",
    NULL
};

static void print_csv_header(FILE *f, const struct cli_sweep *sw)
{
    /* the settings that vary (the swept keys; else load and BER), then the
     * results: numbers only, for rifl plot */
    for (unsigned k = 0; sw && k < sw->nkeys; k++)
        fprintf(f, "%s,", sw->key[k].opt->name);
    if (!sw)
        fprintf(f, "load,ber,");
    for (unsigned i = 0; result_cols[i]; i++)
        fprintf(f, "%s%s", result_cols[i], result_cols[i + 1] ? "," : "\n");
}

/* ---- --plot: a sweep of one setting drawn with gnuplot ------------------------ */

#define PLOT_MAX_Y 8

struct net_plot {
    char csv[1024], gp[1024];   /* the data beside the figure, the script */
    const char *xkey;
    unsigned ycol[PLOT_MAX_Y];  /* result column indices */
    unsigned ny;
    bool logx;
    FILE *f;                    /* the data, while the points are written */
};

/* --plot and --plot-y checked before any run: a sweep of one numeric
 * setting, known columns, paths that can be written. */
static int plot_setup(const struct cli_opt *t, const struct opts *o, const struct cli_sweep *sw,
                      struct net_plot *pl)
{
    memset(pl, 0, sizeof *pl);
    if (sw->nkeys != 1)
        return cli_fail(t, "plot", "it draws a sweep of one setting (this one varies %u); "
                                   "give one, or draw the --csv with rifl plot", sw->nkeys);
    for (size_t i = 0; i < sw->npoints; i++) {
        char *end = NULL;
        const char *v = cli_sweep_value(sw, i, 0);
        strtod(v, &end);
        if (end == v || *end)
            return cli_fail(t, "plot", "the swept %s has the value '%s', not a number: sweep "
                                       "a number (load, ber, ...) or draw the --csv yourself",
                            sw->key[0].opt->name, v);
    }
    pl->xkey = sw->key[0].opt->name;
    pl->logx = !strcmp(pl->xkey, "ber");
    char ys[512];
    snprintf(ys, sizeof ys, "%s", o->plot_y);
    for (char *save = NULL, *y = strtok_r(ys, ",", &save); y; y = strtok_r(NULL, ",", &save)) {
        unsigned c = 0;
        while (result_cols[c] && strcmp(result_cols[c], y))
            c++;
        if (!result_cols[c]) {
            char list[600] = "";
            for (unsigned i = 0; result_cols[i]; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                         result_cols[i]);
            return cli_fail(t, "plot-y", "'%s' is not a column; use some of %s", y, list);
        }
        if (pl->ny == PLOT_MAX_Y)
            return cli_fail(t, "plot-y", "at most %d columns", PLOT_MAX_Y);
        pl->ycol[pl->ny++] = c;
    }
    if (!pl->ny)
        return cli_fail(t, "plot-y", "give at least one column, e.g. latency_p99_ns");
    size_t n = strlen(o->plot);
    if (n < 5 || strcmp(o->plot + n - 4, ".png"))
        return cli_fail(t, "plot", "'%s': give a .png file, e.g. latency.png", o->plot);
    if (n - 4 + 5 > sizeof pl->csv)
        return cli_fail(t, "plot", "the path is too long");
    snprintf(pl->csv, sizeof pl->csv, "%.*s.csv", (int)(n - 4), o->plot);
    snprintf(pl->gp, sizeof pl->gp, "%.*s.gp", (int)(n - 4), o->plot);
    if (cli_check_output(o->plot, cli_where(t, "plot")) ||
        cli_check_output(pl->csv, cli_where(t, "plot")))
        return 2;
    return 0;
}

static void write_net_plot(FILE *g, void *ctx)
{
    const struct net_plot *pl = ctx;
    fprintf(g, "set datafile separator ','\nset grid\nset key top left\nset xlabel ");
    cli_gp_quote(g, pl->xkey);
    fprintf(g, " noenhanced\n");
    if (pl->logx)
        fprintf(g, "set logscale x\nset format x '10^{%%L}'\n");
    /* the y axis's unit, when the columns share one */
    static const char *const units[][2] = { { "_ns", "ns" }, { "_us", "us" },
                                            { "_gbps", "Gbit/s" } };
    for (unsigned u = 0; u < sizeof units / sizeof units[0]; u++) {
        unsigned same = 0;
        for (unsigned i = 0; i < pl->ny; i++) {
            const char *c = result_cols[pl->ycol[i]];
            size_t n = strlen(c), k = strlen(units[u][0]);
            same += n > k && !strcmp(c + n - k, units[u][0]);
        }
        if (same == pl->ny)
            fprintf(g, "set ylabel '%s'\n", units[u][1]);
    }
    fprintf(g, "plot ");
    for (unsigned i = 0; i < pl->ny; i++) {
        fprintf(g, "%s", i ? ", " : "");
        cli_gp_quote_path(g, pl->csv);
        /* column 1 is the swept setting, the results follow */
        fprintf(g, " using 1:%u skip 1 with linespoints lw 2 title ", pl->ycol[i] + 2);
        cli_gp_quote(g, result_cols[pl->ycol[i]]);
        fprintf(g, " noenhanced");
    }
    fprintf(g, "\n");
}

static void print_csv(FILE *f, const rifl_net_config *c, const rifl_net_result *r,
                      const struct cli_sweep *sw, size_t point)
{
    for (unsigned k = 0; sw && k < sw->nkeys; k++)
        fprintf(f, "%s,", cli_sweep_value(sw, point, k));
    if (!sw)
        fprintf(f, "%g,%g,", c->load, c->ber);
    fprintf(f, "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%llu,%llu,%llu,%llu,"
               "%llu,%llu,%d\n",
            r->latency.p50, r->latency.p99, r->latency.p999,
            r->latency.max, r->latency_head.p50, r->latency_head.p99, r->latency_head.p999,
            r->mct.p50 / 1000, r->mct.p99 / 1000, r->throughput_gbps_mean,
            (unsigned long long)r->delivered_cells, (unsigned long long)r->dropped,
            (unsigned long long)r->lost, (unsigned long long)r->replays,
            (unsigned long long)r->fc_frames, (unsigned long long)r->max_voq_cells,
            r->finished ? 1 : 0);
}

/* The slowest and fastest link rates: --link-gbps, or a topology link's
 * own rate. */
static void link_rates(const rifl_net_config *c, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = 0;
    const rifl_topology *t = c->topo;
    for (unsigned v = 0; t && v < t->nnodes; v++)
        for (unsigned p = 0; p < t->nodes[v].nports; p++) {
            if (t->nodes[v].peer[p] < 0)
                continue;
            double own = t->nodes[v].attr[p].rate_gbps, g = own > 0 ? own : c->link_gbps;
            *lo = g < *lo ? g : *lo;
            *hi = g > *hi ? g : *hi;
        }
    if (*hi == 0)
        *lo = *hi = c->link_gbps;
}

static void print_summary(FILE *f, const struct opts *o, const rifl_net_config *c,
                          const rifl_net_result *r, double secs)
{
    double lo, hi;
    link_rates(c, &lo, &hi);
    char rates[64];
    if (lo == hi)
        snprintf(rates, sizeof rates, "%g Gbit/s", lo);
    else
        snprintf(rates, sizeof rates, "%g to %g Gbit/s", lo, hi);
    fprintf(f, "rifl sim net: %s, %u hosts, %u switches, %u links at %s (F=%u, "
               "cell time %.2f ns)\n",
            o->topology, r->hosts, r->switches, r->links, rates, c->frame_bits, r->cell_ns);
    unsigned bonded = 0;
    for (unsigned i = 0; i < r->links; i++)
        bonded += r->link[2 * i].lanes > 1;
    if (c->lanes > 1)
        fprintf(f, "  bonded links: %u lanes of %g Gbit/s each, groups of %u (%s)\n", c->lanes,
                c->link_gbps / c->lanes, c->group_lanes ? c->group_lanes : c->lanes,
                !c->group_lanes || c->group_lanes == c->lanes ? "spatial"
                : c->group_lanes == 1                         ? "temporal"
                                                              : "spatial within, temporal across");
    else if (bonded && c->group_lanes)
        fprintf(f, "  bonded links: %u of the %u, lanes as the topology gives, groups of %u\n",
                bonded, r->links, c->group_lanes);
    else if (bonded)
        fprintf(f, "  bonded links: %u of the %u, lanes as the topology gives, spatial\n",
                bonded, r->links);
    char sizes[300];
    if (c->sizes)
        snprintf(sizes, sizeof sizes, "message sizes from %s", o->msg_cdf);
    else
        snprintf(sizes, sizeof sizes, "messages %u..%u bytes", c->msg_min, c->msg_max);
    fprintf(f, "  traffic: %s %s, load %g, %s, flow control %s, BER %g, seed %llu\n",
            c->arrivals == RIFL_NET_BURSTY ? "bursty" : "bernoulli", pattern_name(c->pattern),
            c->load, sizes, fc_name(c->fc), c->ber, (unsigned long long)c->seed);
    if (c->fc == RIFL_NET_FC_CREDIT)
        fprintf(f, "  credits: %u virtual lanes (VL = destination mod %u), %u cells per VL "
                   "and receiver; cells waited for credit %llu times\n",
                r->vls, r->vls, r->credit_cells, (unsigned long long)r->credit_waits);
    if (c->pcie_gbps > 0)
        fprintf(f, "  host interface: PCIe DMA at %g Gbit/s, %g ns round trip (latency to "
                   "host memory)\n", c->pcie_gbps, c->pcie_rtt_ns);
    if (r->finite)
        fprintf(f, "  finite workload: %llu bytes per flow; %s after %.1f us simulated (%.2f s)\n",
                (unsigned long long)c->bytes_per_flow,
                r->finished ? "all of it arrived" : "NOT all of it arrived", r->sim_ns / 1000,
                secs);
    else
        fprintf(f, "  window: %g us after %g us warm-up; %s after %.1f us simulated (%.2f s)\n",
                c->window_ns / 1000, c->warmup_ns / 1000,
                r->finished ? "all its cells arrived" : "NOT all its cells arrived",
                r->sim_ns / 1000, secs);
    if (!r->finite && !r->finished && r->lagging_sources)
        fprintf(f, "  %u sources had not made all of the window's messages (the furthest %.1f us "
                   "short of its end): their NICs took messages slower than the load asks; "
                   "raise --nic-messages or --drain-us, or lower --load\n",
                r->lagging_sources, r->source_lag_ns / 1000);
    fprintf(f, "  latency (from generation):  p50 %.0f ns  p99 %.0f ns  p99.9 %.0f ns  max "
               "%.0f ns\n",
            r->latency.p50, r->latency.p99, r->latency.p999, r->latency.max);
    fprintf(f, "  latency (from queue head):  p50 %.0f ns  p99 %.0f ns  p99.9 %.0f ns  max "
               "%.0f ns\n",
            r->latency_head.p50, r->latency_head.p99, r->latency_head.p999,
            r->latency_head.max);
    fprintf(f, "  message completion: p50 %.3f us  p99 %.3f us\n", r->mct.p50 / 1000,
            r->mct.p99 / 1000);
    fprintf(f, "  throughput per host: mean %.2f Gbit/s (offered %.2f)", r->throughput_gbps_mean,
            r->offered_gbps);
    if (c->pattern == RIFL_NET_INCAST)
        fprintf(f, ", victim flow %.2f Gbit/s", r->victim_gbps);
    fprintf(f, "\n  cells: %llu generated, %llu delivered, %llu dropped, %llu lost, %llu "
               "corrupt; %llu replays, %llu flow-control frames, max VOQ %llu cells\n",
            (unsigned long long)r->generated_cells, (unsigned long long)r->delivered_cells,
            (unsigned long long)r->dropped, (unsigned long long)r->lost,
            (unsigned long long)r->corrupt, (unsigned long long)r->replays,
            (unsigned long long)r->fc_frames, (unsigned long long)r->max_voq_cells);
    if (r->voq_full_waits)
        fprintf(f, "  %llu cell times a switch input held a cell at a full VOQ (%s)\n",
                (unsigned long long)r->voq_full_waits,
                c->fc == RIFL_NET_FC_LINK ? "its lane's flow control"
                                          : "an ON notice held up by a replay");
}

/* --pcap: the frames that arrive at both ends of one host's link */
struct net_capture {
    rifl_capture *cap;
    unsigned frame_bits;
    double slot_ns;
    uint64_t slot;
    bool failed;
    unsigned fid_bits; /* K of the captured link */
};

static void capture_link(void *ctx, const rifl_pair_slot *seen, unsigned host_lane)
{
    struct net_capture *c = ctx;
    /* direction 0: host to switch, whichever lane of the pair the host's is */
    rifl_phy_frame arrived[2] = { seen->arrived[host_lane], seen->arrived[1 - host_lane] };
    if (cli_pcap_arrivals(c->cap, arrived, c->frame_bits, c->slot,
                          (uint64_t)((double)c->slot * c->slot_ns)) != RIFL_OK)
        c->failed = true;
    c->slot++;
}

/* ---- sweeps: points run on --jobs threads, printed in order ------------------ */

struct point {
    rifl_net_config cfg;
    rifl_net_result res;
    double secs;
    int rc;                   /* rifl_net_run's last, or an error */
};

struct sweep_run {
    const struct opts *o;
    const struct cli_sweep *sw;
    struct point *pt;
    struct net_plot *plot;      /* NULL without --plot */
};

static void point_run(void *ctx, size_t i)
{
    struct point *p = &((struct sweep_run *)ctx)->pt[i];
    rifl_net *n = NULL;
    char err[512];
    p->rc = rifl_net_create(&p->cfg, &n, err, sizeof err);
    if (p->rc != RIFL_OK)
        return;
    double t0 = cli_now();
    while ((p->rc = rifl_net_run(n, 100000)) == 0)
        ;
    p->secs = cli_now() - t0;
    if (p->rc >= 0 && rifl_net_result_get(n, &p->res) != RIFL_OK)
        p->rc = RIFL_ERR_NOMEM;
    rifl_net_free(n);
}

static int point_print(void *ctx, size_t i)
{
    struct sweep_run *w = ctx;
    struct point *p = &w->pt[i];
    if (p->rc < 0) {
        fprintf(stderr, "error: point %zu of the sweep: %s\n", i + 1, rifl_strerror(p->rc));
        return 1;
    }
    const rifl_net_result *r = &p->res;
    if (w->plot)
        print_csv(w->plot->f, &p->cfg, r, w->sw, i);
    if (w->o->csv) {
        print_csv(stdout, &p->cfg, r, w->sw, i);
    } else if (w->o->json) {
        printf("%s", i ? ",\n" : "");
        print_json(stdout, w->o, &p->cfg, r, w->o->links);
    } else {
        for (unsigned k = 0; k < w->sw->nkeys; k++)
            printf("%s%s=%s", k ? " " : "", w->sw->key[k].opt->name,
                   cli_sweep_value(w->sw, i, k));
        printf(": latency p50 %.0f p99 %.0f p99.9 %.0f ns, from queue head p99 %.0f ns, "
               "%.2f Gbit/s per host (offered %.2f), %llu replays, %llu dropped, %llu lost%s "
               "(%.2f s)\n",
               r->latency.p50, r->latency.p99, r->latency.p999, r->latency_head.p99,
               r->throughput_gbps_mean, r->offered_gbps, (unsigned long long)r->replays,
               (unsigned long long)r->dropped, (unsigned long long)r->lost,
               r->finished ? "" : ", NOT all of the window's cells arrived", p->secs);
    }
    int status = r->dropped || r->lost || r->corrupt ? 1 : 0;
    rifl_net_result_free(&p->res);
    return status;
}

static int by_size_down(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Points run at once add up: the most of `jobs` whose largest estimates
 * together stay within the points' memory limit (the lowest one given),
 * said on stderr when that is fewer than `jobs`. */
static unsigned jobs_within_memory(const struct cli_opt *table, const struct point *pt, size_t n,
                                   unsigned jobs)
{
    double limit = 0;
    for (size_t i = 0; i < n; i++)
        if (pt[i].cfg.max_memory_gb > 0 && (limit == 0 || pt[i].cfg.max_memory_gb < limit))
            limit = pt[i].cfg.max_memory_gb;
    uint64_t *est = limit > 0 && jobs > 1 ? malloc(n * sizeof *est) : NULL;
    if (!est)
        return jobs; /* (without memory for the list, as before: each point within the limit) */
    for (size_t i = 0; i < n; i++)
        est[i] = rifl_net_memory(&pt[i].cfg);
    qsort(est, n, sizeof *est, by_size_down);
    unsigned fit = 0;
    double sum = 0;
    while (fit < jobs && (sum += (double)est[fit]) <= limit * 1e9)
        fit++;
    if (fit < 1)
        fit = 1;
    if (fit < jobs)
        fprintf(stderr, "note: %u sweep points at once could take about %.3g GB, more than the "
                "limit of %g GB (%s); running %u at a time\n", jobs, sum / 1e9, limit,
                cli_where(table, "max-memory-gb"), fit);
    free(est);
    return fit;
}

static int run_sweep(const struct cli_opt *table, struct opts *o, const rifl_topology *topo,
                     const struct cli_sweep *sw)
{
    struct point *pt = calloc(sw->npoints, sizeof *pt);
    double *cost = calloc(sw->npoints, sizeof *cost);
    if (!pt || !cost) {
        free(pt);
        free(cost);
        fprintf(stderr, "error: out of memory for %zu points\n", sw->npoints);
        return 2;
    }
    /* every point is built and checked before any runs */
    int status = 0;
    unsigned most_paths = 0; /* the most routes per pair of a point with per-VOQ flow control */
    for (size_t i = 0; i < sw->npoints && !status; i++) {
        if (cli_sweep_apply(sw, i, table) || build(table, o, topo, sw, &pt[i].cfg)) {
            status = 2;
            break;
        }
        rifl_net *n = NULL;
        char err[512];
        if (rifl_net_create(&pt[i].cfg, &n, err, sizeof err) != RIFL_OK) {
            fprintf(stderr, "error: point %zu of %s: %s\n", i + 1, cli_where(table, "sweep"),
                    err);
            status = 2;
        }
        rifl_net_free(n);
        if (!status && pt[i].cfg.fc == RIFL_NET_FC_VOQ && pt[i].cfg.max_paths > most_paths)
            most_paths = pt[i].cfg.max_paths;
        /* cost: simulated time x load x links */
        cost[i] = (pt[i].cfg.warmup_ns + pt[i].cfg.window_ns) * pt[i].cfg.load;
    }
    /* (more paths only add waits: a cycle of any point's routes is one of these) */
    if (!status && most_paths)
        cli_warn_wait_cycle(table, "topology", topo, most_paths);
    struct net_plot plot;
    if (!status && o->plot && (status = plot_setup(table, o, sw, &plot)) == 0) {
        if (!(plot.f = fopen(plot.csv, "w"))) {
            fprintf(stderr, "error: %s: cannot write %s: %s\n", cli_where(table, "plot"),
                    plot.csv, strerror(errno));
            status = 2;
        } else {
            print_csv_header(plot.f, sw);
        }
    }
    if (!status) {
        if (o->csv)
            print_csv_header(stdout, sw);
        if (o->json)
            printf("{\"runs\": [\n");
        struct sweep_run w = { o, sw, pt, o->plot ? &plot : NULL };
        struct cli_jobs j = { sw->npoints, cost, point_run, point_print, &w, o->progress };
        unsigned jobs = cli_job_count(o->jobs, sw->npoints);
        status = cli_jobs_run(&j, jobs_within_memory(table, pt, sw->npoints, jobs));
        if (status < 0)
            status = 2;
        if (o->json)
            printf("]}\n");
    }
    if (o->plot && plot.f) {
        if (fclose(plot.f) != 0 && !status) {
            fprintf(stderr, "error: %s: writing %s failed\n", cli_where(table, "plot"),
                    plot.csv);
            status = 2;
        }
        if (!status)
            status = cli_gnuplot(o->plot, cli_where(table, "plot"), plot.gp, write_net_plot,
                                 &plot);
        if (!status)
            fprintf(stderr, "plot written to %s (data %s, script %s)\n", o->plot, plot.csv,
                    plot.gp);
    }
    free(pt);
    free(cost);
    return status;
}

static int run(int argc, char **argv)
{
    struct opts o = {
        .topology = "single:32", .fc = "voq", .traffic = "bernoulli", .pattern = "uniform",
        .load = 0.1, .burst_bytes = 1024, .link_gbps = 100, .cable_m = 2,
        .transceiver_ns = 80, .switch_ns = rifl_net_default_config.switch_ns, .ber = 0,
        .warmup_us = 10, .time_us = 50, .drain_us = 1000, .msg_bytes = 252, .msg_min = 252,
        .msg_max = 252, .incast = 8, .frame_bits = 256, .iterations = 3, .voq_cells = 0,
        .paths = 8, .nic_messages = 1024, .vls = 4, .lanes = 1, .group_lanes = 0, .credit_cells = 0, .pcie_gbps = 0, .pcie_rtt_ns = 2500, .seed = 1,
        .pcap_host = "h0", .pcap_slots = 100000, .plot_y = "latency_p99_ns,head_p99_ns",
        /* (a machine of 16 GB keeps room for the rest; fattree:22 with 64
         * paths, about 11.5 GB, is refused at once instead of running the
         * machine out of memory) */
        .max_memory_gb = 8,
    };
    struct cli_opt table[] = {
        { "topology", CLI_STRING, &o.topology,
          "single:N, leafspine:LxSxH, fattree:K or a topology file", 0, 0 },
        { "load", CLI_DOUBLE, &o.load, "offered load per host, fraction of its link's cells",
          1e-9, 1 },
        { "traffic", CLI_STRING, &o.traffic, "arrivals: bernoulli or bursty", 0, 0 },
        { "pattern", CLI_STRING, &o.pattern,
          "destinations: uniform, permutation, incast or all-to-all", 0, 0 },
        { "incast", CLI_UINT, &o.incast,
          "--pattern incast: senders h1..hN to h0; h1 also sends to h(N+1), the victim flow",
          1, 1024 },
        { "msg-bytes", CLI_UINT, &o.msg_bytes,
          "fixed message size (252 bytes fill one cell with the 4-byte prefix)", 1, 1 << 20 },
        { "msg-min", CLI_UINT, &o.msg_min, "message sizes uniform from this...", 1, 1 << 20 },
        { "msg-max", CLI_UINT, &o.msg_max, "...to this", 1, 1 << 20 },
        { "msg-cdf", CLI_STRING, &o.msg_cdf,
          "message sizes from a CDF file: lines \"BYTES P\" (docs/netsim.md)", 0, 0 },
        { "burst-bytes", CLI_DOUBLE, &o.burst_bytes,
          "--traffic bursty: mean cells x 256 of a train's draw", 1, 1e9 },
        { "fc", CLI_STRING, &o.fc,
          "flow control: voq (per-VOQ ON/OFF), credit (InfiniBand credits per virtual lane) "
          "or link (lanes only)", 0, 0 },
        { "vls", CLI_UINT, &o.vls,
          "--fc credit: virtual lanes; a cell for host d goes on VL d mod vls", 1, 15 },
        { "credit-cells", CLI_UINT, &o.credit_cells,
          "--fc credit: each receiver's buffer per VL, in cells (0: the 1.5-RTT rule)", 0,
          409 },
        { "ber", CLI_DOUBLE, &o.ber, "bit error rate of every link, both ways, below 1e-3 (a "
          "topology file's link may give its own)", 0, 1e-3 },
        { "link-gbps", CLI_DOUBLE, &o.link_gbps,
          "rate of every link without its own in the topology file (the fastest link's "
          "frame slot is the time step)", 1, 10000 },
        { "frame-bits", CLI_UINT, &o.frame_bits, "frame width F", 64, 2048 },
        { "lanes", CLI_UINT, &o.lanes,
          "lanes per link: 1, or 2 to 16 bonded, each at the link's rate / lanes (a "
          "topology file's link may give its own) (docs/netsim.md)", 1, 16 },
        { "group-lanes", CLI_UINT, &o.group_lanes,
          "bonded links: lanes per group (0: all, spatial only; 1: temporal only)", 0, 16 },
        { "cable-m", CLI_DOUBLE, &o.cable_m, "cable length per link, 5 ns/m (a topology "
          "file's link may give its own)", 0, 1000 },
        { "transceiver-ns", CLI_DOUBLE, &o.transceiver_ns, "transceiver latency per link", 0,
          10000 },
        { "switch-ns", CLI_DOUBLE, &o.switch_ns,
          "switch pipeline from input link to output link", 0, 100000 },
        { "iterations", CLI_UINT, &o.iterations,
          "iSLIP iterations (a switch with fewer ports runs as many as it has)", 1, 256 },
        { "voq-cells", CLI_UINT, &o.voq_cells,
          "--fc voq or link: VOQ size in cells (0: the 1.5-RTT rule)", 0, 65535 },
        { "paths", CLI_UINT, &o.paths, "shortest routes used per host pair", 1, 64 },
        { "nic-messages", CLI_UINT, &o.nic_messages,
          "messages a NIC queues before its source waits", 1, 1 << 24 },
        { "max-memory-gb", CLI_DOUBLE, &o.max_memory_gb,
          "refuse a network whose memory, estimated before anything is allocated, is above "
          "this many GB (0: no limit) (docs/netsim.md)", 0, 1e6 },
        { "pcie-gbps", CLI_DOUBLE, &o.pcie_gbps,
          "the NIC's host interface, PCIe DMA each way (0: none; the paper's NIC: 90): "
          "messages are read from host memory, cells written to it", 0, 10000 },
        { "pcie-rtt-ns", CLI_DOUBLE, &o.pcie_rtt_ns,
          "the host interface's round trip (a read: one, a write: half)", 0, 1e6 },
        { "bytes-per-flow", CLI_BYTES, &o.bytes_per_flow,
          "a finite workload (e.g. 2.5MB as in the paper): each host sends this much to each "
          "destination, every message measured (0: the steady-state window)", 0, 1e12 },
        { "warmup-us", CLI_DOUBLE, &o.warmup_us,
          "steady state (--bytes-per-flow 0): warm-up before the window", 0, 1e9 },
        { "time-us", CLI_DOUBLE, &o.time_us,
          "steady state (--bytes-per-flow 0): the measured window", 1e-3, 1e9 },
        { "drain-us", CLI_DOUBLE, &o.drain_us,
          "at most this long after the window (a finite workload: after its last message "
          "is made) for the cells to arrive", 0, 1e9 },
        { "seed", CLI_UINT, &o.seed, "seed of every random choice", 0, 0 },
        { "by-content", CLI_FLAG, &o.by_content,
          "every frame by content, none by reference (slower, same results)", 0, 0 },
        { "pcap", CLI_STRING, &o.pcap,
          "write the frames of one host's link to this pcap file (docs/capture.md)", 0, 0 },
        { "pcap-host", CLI_STRING, &o.pcap_host, "--pcap: the host whose link is captured", 0,
          0 },
        { "pcap-slots", CLI_UINT, &o.pcap_slots, "--pcap: capture the first N frame slots", 1,
          1e9 },
        { "sweep", CLI_STRING, &o.sweep,
          "runs over settings, e.g. 'load=0.3:1:0.1 fc=voq,link' (one output row each)", 0,
          0 },
        { "jobs", CLI_UINT, &o.jobs, "sweep points run at once (0: one per core)", 0, 256 },
        { "json", CLI_FLAG, &o.json, "JSON on stdout", 0, 0 },
        { "csv", CLI_FLAG, &o.csv, "CSV on stdout", 0, 0 },
        { "plot", CLI_STRING, &o.plot, "draw the sweep (of one numeric setting) into this PNG "
          "with gnuplot, its data and script beside it", 0, 0 },
        { "plot-y", CLI_STRING, &o.plot_y, "the plotted CSV columns, comma-separated", 0, 0 },
        { "links", CLI_FLAG, &o.links, "JSON: every link direction under \"links\"", 0, 0 },
        { "progress", CLI_FLAG, &o.progress, "progress on stderr even when not a terminal", 0,
          0 },
        CLI_END,
    };
    int prc = cli_parse(argc, argv, table, "[options]",
                        "Simulate a rack: hosts with RIFL NICs and RIFL Layer 2 switches "
                        "joined by real RIFL links (lane engines, per-VOQ flow control as "
                        "link frames, replays on bit errors).  Latency is measured from "
                        "each message's generation and from the head of its NIC queue, for "
                        "the cells of messages generated in a window after a warm-up.",
                        NULL, 0, NULL);
    if (prc)
        return prc == 1 ? 0 : 2;
    if (o.json && o.csv)
        return cli_fail(table, "json,csv", "choose one output format");
    if (o.msg_cdf) {
        size_t len;
        char *text = cli_read_named(o.msg_cdf, cli_where(table, "msg-cdf"), &len);
        if (!text)
            return 2;
        char err[256];
        int prc2 = rifl_net_cdf_parse(text, len, &o.cdf, err, sizeof err);
        free(text);
        if (prc2 != RIFL_OK) {
            fprintf(stderr, "error: %s: %s: %s\n", cli_where(table, "msg-cdf"), o.msg_cdf, err);
            return 2;
        }
    }
    if (!o.pcap && (cli_is_set(table, "pcap-host") || cli_is_set(table, "pcap-slots")))
        return cli_fail(table, "pcap-host,pcap-slots", "they choose what --pcap captures: add "
                                                       "--pcap FILE");
    if (o.sweep) {
        if (o.pcap)
            return cli_fail(table, "pcap,sweep", "a capture is of one run: drop one of them");
        struct cli_sweep sw = { 0 };
        static const char *const fixed[] = { "sweep", "jobs", "csv", "json", "links",
                                             "topology", "progress", "pcap", "pcap-host",
                                             "pcap-slots", "plot", "plot-y", "msg-cdf",
                                             NULL };
        if (cli_sweep_parse(&sw, o.sweep, table, fixed,
                            " (it shapes the output or the network, not a run)"))
            return 2;
        rifl_topology *topo = NULL;
        int st = cli_load_topology(table, o.topology, &topo);
        if (!st)
            st = run_sweep(table, &o, topo, &sw);
        rifl_topo_free(topo);
        cli_sweep_free(&sw);
        return st;
    }
    if (cli_is_set(table, "jobs"))
        return cli_fail(table, "jobs", "it sets how many sweep points run at once: add --sweep");
    if (o.plot)
        return cli_fail(table, "plot", "it draws a sweep: add --sweep, e.g. --sweep "
                                       "load=0.1:0.9:0.2");
    if (cli_is_set(table, "plot-y"))
        return cli_fail(table, "plot-y", "it picks what --plot draws: add --plot FIG.png and "
                                         "--sweep");
    rifl_topology *topo = NULL;
    if (cli_load_topology(table, o.topology, &topo))
        return 2;
    rifl_net_config c;
    if (build(table, &o, topo, NULL, &c)) {
        rifl_topo_free(topo);
        return 2;
    }
    /* (the time step, the fastest link's frame slot, comes from the network) */
    struct net_capture cap = { NULL, c.frame_bits, 0, 0, false, 0 };
    int cap_host = -1;
    if (!o.pcap && (cli_is_set(table, "pcap-host") || cli_is_set(table, "pcap-slots"))) {
        rifl_topo_free(topo);
        return cli_fail(table, "pcap-host,pcap-slots", "they choose what --pcap captures: add "
                                                       "--pcap FILE");
    }
    if (o.pcap) {
        int node = rifl_topo_find(topo, o.pcap_host);
        if (node < 0 || topo->nodes[node].is_switch) {
            rifl_topo_free(topo);
            return cli_fail(table, "pcap-host", "'%s' is not a host of %s; hosts are named "
                                                "h0, h1, ... in the generators",
                            o.pcap_host, o.topology);
        }
        cap_host = 0;
        for (int v = 0; v < node; v++)
            cap_host += !topo->nodes[v].is_switch;
        char msg[256];
        if (rifl_capture_open(o.pcap, c.frame_bits, 1, &cap.cap, msg, sizeof msg) != RIFL_OK) {
            fprintf(stderr, "error: %s: %s\n", cli_where(table, "pcap"), msg);
            rifl_topo_free(topo);
            return 2;
        }
        c.observe = capture_link;
        c.observe_ctx = &cap;
        c.observe_host = (unsigned)cap_host;
        c.observe_slots = o.pcap_slots;
    }
    rifl_net *net = NULL;
    char err[512];
    int rc = rifl_net_create(&c, &net, err, sizeof err);
    if (rc != RIFL_OK) {
        fprintf(stderr, "error: %s\n", err);
        if (cap.cap)
            rifl_capture_close(cap.cap, NULL, 0);
        rifl_topo_free(topo);
        return 2;
    }
    /* (after rifl_net_create, which refuses a network over the memory limit
     * before the check would go through all its routes) */
    if (c.fc == RIFL_NET_FC_VOQ)
        cli_warn_wait_cycle(table, "topology", topo, c.max_paths);
    cap.slot_ns = rifl_net_slot_ns(net);
    double t0 = cli_now();
    int r;
    while ((r = rifl_net_run(net, 20000)) == 0)
        cli_progress("sim net", rifl_net_progress(net), NULL, o.progress);
    cli_progress_done(o.progress);
    double secs = cli_now() - t0;
    int status = 0;
    if (r < 0) {
        fprintf(stderr, "error: the simulation found a cell out of place (%s): this is a "
                        "bug, please report it with the command line\n",
                rifl_strerror(r));
        status = 1;
    }
    rifl_net_result res;
    if (rifl_net_result_get(net, &res) != RIFL_OK) {
        fprintf(stderr, "error: out of memory\n");
        status = 1;
    } else {
        if (o.json)
            print_json(stdout, &o, &c, &res, o.links);
        else if (o.csv) {
            print_csv_header(stdout, NULL);
            print_csv(stdout, &c, &res, NULL, 0);
        }
        else
            print_summary(stdout, &o, &c, &res, secs);
        if (res.dropped || res.lost || res.corrupt)
            status = 1;
        /* the captured link's K, for the dissector */
        for (unsigned i = 0; cap.cap && i < 2 * res.links; i++)
            if (!strcmp(res.link[i].from, o.pcap_host))
                cap.fid_bits = res.link[i].fid_bits;
        rifl_net_result_free(&res);
    }
    if (cap.cap) {
        uint64_t frames = rifl_capture_get_stats(cap.cap)->frames;
        const rifl_nic_stats *ns = rifl_nic_get_stats(rifl_net_nic(net, (unsigned)cap_host));
        char cmsg[256] = "";
        if (rifl_capture_close(cap.cap, cmsg, sizeof cmsg) != RIFL_OK || cap.failed) {
            fprintf(stderr, "error: %s: %s\n", cli_where(table, "pcap"),
                    cmsg[0] ? cmsg : "writing the capture failed");
            status = 2;
        } else {
            fprintf(stderr, "rifl sim net: %llu frames of %s's link captured to %s (K=%u; the "
                            "first %llu of %llu frame slots; its NIC sent %llu cells and "
                            "received %llu in the run)\n",
                    (unsigned long long)frames, o.pcap_host, o.pcap, cap.fid_bits,
                    (unsigned long long)cap.slot, (unsigned long long)res.slots,
                    (unsigned long long)ns->cells_tx, (unsigned long long)ns->cells_rx);
        }
    }
    rifl_net_free(net);
    rifl_topo_free(topo);
    return status;
}

const struct rifl_command rifl_cmd_sim_net = {
    "sim net", "simulate hosts, NICs and switches joined by real RIFL links", run
};

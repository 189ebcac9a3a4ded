/* `rifl sim switch`: cell-time simulation of hosts around a RIFL Layer 2
 * switch (or a small multi-switch topology), with sweeps and plots. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "rifl/sim/switch_sim.h"

static const struct cli_opt *g_table; /* the option table, for messages */

struct opts {
    uint64_t ports, iterations, packet_bytes, var_min, var_max, bytes_per_pair, latency;
    uint64_t voq_cells, fc_on, fc_off, seed, max_slots, host_fifo_cells, jobs;
    uint64_t pcap_host, pcap_slots;
    double load, burst_bytes, cell_ns, broadcast;
    const char *scheduler, *traffic, *topology, *sweep, *plot, *plot_y, *host_queue, *plot_title;
    const char *pcap;
    bool csv, json, no_fabric_check, progress;
};

struct row {
    char label[160];   /* values of the swept keys other than the x key */
    double x;
    char vals[CLI_SWEEP_MAX_KEYS][32];
    char csv_extra[CLI_SWEEP_MAX_KEYS * 33]; /* swept values the CSV has no column for */
    rifl_ssim_config cfg;
    rifl_ssim_result r;
    double seconds;
    double cell_ns;
    double est_s;      /* estimated run time, for the order of parallel runs */
    int rc;            /* 0, or 2 when the run could not be made */
};

static const char *sched_name(rifl_sched s) { return s == RIFL_SCHED_SAFC ? "safc" : "islip"; }
static const char *traffic_name(rifl_traffic t)
{
    return t == RIFL_TRAFFIC_BURSTY ? "bursty" : "bernoulli";
}

static int build_cfg(const struct opts *o, rifl_ssim_config *c, const rifl_topology *topo,
                     bool quiet)
{
    *c = rifl_ssim_default_config;
    c->nports = (unsigned)o->ports;
    if (!strcasecmp(o->scheduler, "islip"))
        c->scheduler = RIFL_SCHED_ISLIP;
    else if (!strcasecmp(o->scheduler, "safc"))
        c->scheduler = RIFL_SCHED_SAFC;
    else
        return quiet ? 2 : cli_fail(g_table, "scheduler", "'%s' is unknown; use islip or safc",
                                    o->scheduler);
    if (!strcasecmp(o->traffic, "bernoulli"))
        c->traffic = RIFL_TRAFFIC_BERNOULLI;
    else if (!strcasecmp(o->traffic, "bursty") || !strcasecmp(o->traffic, "burst"))
        c->traffic = RIFL_TRAFFIC_BURSTY;
    else
        return quiet ? 2 : cli_fail(g_table, "traffic", "'%s' is unknown; use bernoulli or "
                                    "bursty", o->traffic);
    c->iterations = (unsigned)o->iterations;
    /* the default of 3 iterations on a smaller switch: as many as it has
     * ports (a value the user gave is checked as given) */
    if (!cli_is_set(g_table, "iterations") && !o->topology && c->iterations > o->ports)
        c->iterations = (unsigned)o->ports;
    c->load = o->load;
    c->packet_bytes = (unsigned)o->packet_bytes;
    c->var_min = (unsigned)o->var_min;
    c->var_max = (unsigned)o->var_max;
    c->burst_bytes = o->burst_bytes;
    c->bytes_per_pair = o->bytes_per_pair;
    c->latency = (unsigned)o->latency;
    c->voq_cells = (unsigned)o->voq_cells;
    c->fc_on = (unsigned)o->fc_on;
    c->fc_off = (unsigned)o->fc_off;
    c->seed = o->seed;
    c->max_slots = o->max_slots;
    c->check_fabric = !o->no_fabric_check;
    c->topo = topo;
    if (!strcasecmp(o->host_queue, "fifo"))
        c->host_fifo = true;
    else if (strcasecmp(o->host_queue, "per-dest"))
        return quiet ? 2 : cli_fail(g_table, "host-queue", "'%s' is unknown; use per-dest or "
                                    "fifo", o->host_queue);
    c->host_fifo_cells = (unsigned)o->host_fifo_cells;
    c->broadcast = o->broadcast;
    return 0;
}

static void json_pct(FILE *f, const char *name, const uint64_t *pct, double mean,
                     double scale)
{
    fprintf(f, "\"%s\": {", name);
    for (unsigned k = 0; k < RIFL_SSIM_NPCT; k++)
        fprintf(f, "%s\"p%g\": %.10g", k ? ", " : "", rifl_ssim_percentiles[k],
                (double)pct[k] * scale);
    fprintf(f, ", \"mean\": %.6g}", mean * scale);
}

static void print_json(FILE *f, const struct row *w, double cell_ns, const char *ind)
{
    const rifl_ssim_result *r = &w->r;
    const rifl_ssim_config *c = &w->cfg;
    /* (a topology's switches have their own port counts) */
    char ports[16] = "null";
    if (!c->topo)
        snprintf(ports, sizeof ports, "%u", c->nports);
    fprintf(f, "%s{\"scheduler\": \"%s\", \"iterations\": %u, \"traffic\": \"%s\", "
            "\"load\": %g, \"packet_bytes\": %u, \"ports\": %s, \"hosts\": %u, "
            "\"switches\": %u, \"bytes_per_pair\": %llu, \"seed\": %llu,\n",
            ind, sched_name(c->scheduler), c->iterations, traffic_name(c->traffic), c->load,
            c->packet_bytes, ports, r->hosts, r->switches,
            (unsigned long long)c->bytes_per_pair, (unsigned long long)c->seed);
    if (c->broadcast > 0)
        fprintf(f, "%s \"broadcast\": %g,\n", ind, c->broadcast);
    fprintf(f, "%s \"finished\": %s, \"stalled\": %s, \"slots\": %llu, \"utilization\": %.6f, "
            "\"cell_utilization\": %.6f,\n", ind, r->finished ? "true" : "false",
            r->stalled ? "true" : "false",
            (unsigned long long)r->slots, r->utilization, r->cell_utilization);
    fprintf(f, "%s ", ind);
    json_pct(f, "latency_cells", r->lat_pct, r->lat_mean, 1.0);
    fprintf(f, ",\n%s ", ind);
    json_pct(f, "latency_ns", r->lat_pct, r->lat_mean, cell_ns);
    fprintf(f, ",\n%s ", ind);
    json_pct(f, "latency_gen_cells", r->gen_pct, r->gen_mean, 1.0);
    fprintf(f, ",\n%s ", ind);
    json_pct(f, "latency_gen_ns", r->gen_pct, r->gen_mean, cell_ns);
    fprintf(f, ",\n%s \"dropped\": %llu, \"drops\": {\"misrouted\": %llu, \"invalid\": %llu, "
            "\"overflow\": %llu, \"fabric_collisions\": %llu},\n", ind,
            (unsigned long long)r->dropped, (unsigned long long)r->sw.drop_misrouted,
            (unsigned long long)r->sw.drop_invalid, (unsigned long long)r->sw.drop_overflow,
            (unsigned long long)r->sw.fabric_collisions);
    fprintf(f, "%s \"checks\": {\"lost\": %llu, \"duplicated\": %llu, \"misdelivered\": %llu, "
            "\"cells_generated\": %llu, \"cells_delivered\": %llu},\n", ind,
            (unsigned long long)r->lost, (unsigned long long)r->duplicated,
            (unsigned long long)r->misdelivered, (unsigned long long)r->cells_generated,
            (unsigned long long)r->cells_delivered);
    fprintf(f, "%s \"flow_control\": {\"frames\": %llu, \"on\": %llu, \"off\": %llu, "
            "\"blocked_requests\": %llu, \"decode_errors\": %llu},\n", ind,
            (unsigned long long)r->sw.fc_frames_sent,
            (unsigned long long)r->sw.fc_on_sent, (unsigned long long)r->sw.fc_off_sent,
            (unsigned long long)r->sw.fc_blocked_requests,
            (unsigned long long)r->fc_decode_errors);
    fprintf(f, "%s \"queues\": {\"voq_cells\": %u, \"fc_on\": %u, \"fc_off\": %u, "
            "\"rtt_slots\": %u, \"voq_mean\": %.6g, \"voq_max\": %llu, "
            "\"host_backlog_mean\": %.6g, \"host_backlog_max\": %llu, \"host_queue\": \"%s\", "
            "\"source_stalls\": %llu, \"paused_head_slots\": %llu}", ind, r->voq_cells,
            r->fc_on, r->fc_off, r->rtt_slots, r->voq_mean,
            (unsigned long long)r->sw.max_voq_cells, r->host_backlog_mean,
            (unsigned long long)r->host_backlog_max, c->host_fifo ? "fifo" : "per-dest",
            (unsigned long long)r->source_stalls, (unsigned long long)r->hol_blocked);
    /* every switch counter, summed over the switches */
    size_t n;
    const rifl_counter *ct = rifl_switch_counters(&n);
    fprintf(f, ",\n%s \"switch_counters\": ", ind);
    json_counters(f, ct, n, &r->sw);
    fputc('}', f);
}

/* Swept settings the CSV has a column for anyway. */
static bool csv_has(const char *name)
{
    static const char *const has[] = { "scheduler", "iterations", "traffic", "load",
                                       "packet-bytes", "seed", "host-queue", NULL };
    for (const char *const *h = has; *h; h++)
        if (!strcmp(*h, name))
            return true;
    return false;
}

/* The header, then a column for each other swept setting. */
static void print_csv_header(FILE *f, const struct cli_sweep *sw)
{
    fprintf(f, "scheduler,iterations,traffic,load,packet_bytes,seed,finished,slots,utilization,"
               "cell_utilization,p1,p50,p75,p90,p95,p99,p100,mean,dropped,overflow,misrouted,"
               "invalid,fabric_collisions,fc_on_sent,fc_off_sent,voq_mean,voq_max,host_backlog_mean,"
               "lost,duplicated,misdelivered,host_queue,gen_p50,gen_p99,gen_p100,gen_mean");
    for (unsigned k = 0; sw && k < sw->nkeys; k++) {
        if (csv_has(sw->key[k].opt->name))
            continue;
        fputc(',', f);
        for (const char *c = sw->key[k].opt->name; *c; c++)
            fputc(*c == '-' ? '_' : *c, f);
    }
    fputc('\n', f);
}

static void print_csv(FILE *f, const struct row *w)
{
    const rifl_ssim_result *r = &w->r;
    const rifl_ssim_config *c = &w->cfg;
    fprintf(f, "%s,%u,%s,%g,%u,%llu,%d,%llu,%.6f,%.6f", sched_name(c->scheduler), c->iterations,
            traffic_name(c->traffic), c->load, c->packet_bytes, (unsigned long long)c->seed,
            r->finished, (unsigned long long)r->slots, r->utilization, r->cell_utilization);
    for (unsigned k = 0; k < RIFL_SSIM_NPCT; k++)
        fprintf(f, ",%llu", (unsigned long long)r->lat_pct[k]);
    fprintf(f, ",%.3f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.4f,%llu,%.3f,%llu,%llu,%llu,%s",
            r->lat_mean, (unsigned long long)r->dropped,
            (unsigned long long)r->sw.drop_overflow, (unsigned long long)r->sw.drop_misrouted,
            (unsigned long long)r->sw.drop_invalid, (unsigned long long)r->sw.fabric_collisions,
            (unsigned long long)r->sw.fc_on_sent, (unsigned long long)r->sw.fc_off_sent,
            r->voq_mean, (unsigned long long)r->sw.max_voq_cells, r->host_backlog_mean,
            (unsigned long long)r->lost, (unsigned long long)r->duplicated,
            (unsigned long long)r->misdelivered, c->host_fifo ? "fifo" : "per-dest");
    /* from generation: p50, p99 and the largest */
    fprintf(f, ",%llu,%llu,%llu,%.3f%s\n", (unsigned long long)r->gen_pct[1],
            (unsigned long long)r->gen_pct[5], (unsigned long long)r->gen_pct[RIFL_SSIM_NPCT - 1],
            r->gen_mean, w->csv_extra);
}

static void print_summary(FILE *f, const struct row *w, double cell_ns)
{
    const rifl_ssim_result *r = &w->r;
    const rifl_ssim_config *c = &w->cfg;
    char size[64];
    if (c->packet_bytes)
        snprintf(size, sizeof size, "%u-byte packets", c->packet_bytes);
    else
        snprintf(size, sizeof size, "%u..%u-byte packets", c->var_min, c->var_max);
    fprintf(f, "%u hosts, %u switch%s, %s", r->hosts, r->switches, r->switches > 1 ? "es" : "",
            sched_name(c->scheduler));
    if (c->scheduler == RIFL_SCHED_ISLIP)
        fprintf(f, "(%u)", c->iterations);
    fprintf(f, ", %s, load %.2f, %s, %.3g MB per pair, seed %llu\n", traffic_name(c->traffic),
            c->load, size, (double)c->bytes_per_pair / 1e6, (unsigned long long)c->seed);
    if (c->broadcast > 0)
        fprintf(f, "  broadcast          %g of the trains to every other host\n", c->broadcast);
    fprintf(f, "  run                %llu slots (%.3f ms simulated), %s, %.2f s wall\n",
            (unsigned long long)r->slots, (double)r->slots * cell_ns * 1e-6,
            r->finished  ? "all data delivered"
            : r->stalled ? "NOT FINISHED (stalled)"
                         : "NOT FINISHED (max-slots reached)",
            w->seconds);
    if (r->stalled)
        fprintf(f, "  stalled            %llu cells held and none delivered for %llu slots: a "
                "flow-control deadlock, VOQs holding each other back in a cycle (routes round a "
                "ring of switches do this); use a topology or routes without such a cycle, or "
                "a lower load\n",
                (unsigned long long)r->stalled_cells,
                (unsigned long long)r->stalled_slots);
    fprintf(f, "  utilization        %.4f of the line rate (cells %.4f)\n", r->utilization,
            r->cell_utilization);
    fprintf(f, "  latency, cells    ");
    for (unsigned k = 0; k < RIFL_SSIM_NPCT; k++)
        fprintf(f, " p%g %llu", rifl_ssim_percentiles[k], (unsigned long long)r->lat_pct[k]);
    fprintf(f, "  mean %.1f\n  latency, ns       ", r->lat_mean);
    for (unsigned k = 0; k < RIFL_SSIM_NPCT; k++)
        fprintf(f, " p%g %.0f", rifl_ssim_percentiles[k], (double)r->lat_pct[k] * cell_ns);
    fprintf(f, "\n  from generation   ");
    for (unsigned k = 0; k < RIFL_SSIM_NPCT; k++)
        fprintf(f, " p%g %llu", rifl_ssim_percentiles[k], (unsigned long long)r->gen_pct[k]);
    fprintf(f, "  mean %.1f (cells; the host's queue included)", r->gen_mean);
    fprintf(f, "\n  VOQs               %u cells each (ON above %u, OFF at %u, round trip %u "
            "slots); mean %.2f, max %llu\n", r->voq_cells, r->fc_on, r->fc_off, r->rtt_slots,
            r->voq_mean, (unsigned long long)r->sw.max_voq_cells);
    fprintf(f, "  %-19sbacklog mean %.1f cells, max %llu; source stalls %llu, "
            "paused-head slots %llu\n", c->host_fifo ? "hosts (fifo)" : "hosts (per-dest)",
            r->host_backlog_mean, (unsigned long long)r->host_backlog_max,
            (unsigned long long)r->source_stalls, (unsigned long long)r->hol_blocked);
    fprintf(f, "  flow control       %llu frames (%llu ON, %llu OFF), %llu requests held back, "
            "%llu undecodable\n",
            (unsigned long long)r->sw.fc_frames_sent, (unsigned long long)r->sw.fc_on_sent,
            (unsigned long long)r->sw.fc_off_sent,
            (unsigned long long)r->sw.fc_blocked_requests,
            (unsigned long long)r->fc_decode_errors);
    fprintf(f, "  drops              %llu (misrouted %llu, invalid %llu, VOQ overflow %llu); "
            "fabric collisions %llu in %llu checked slots\n", (unsigned long long)r->dropped,
            (unsigned long long)r->sw.drop_misrouted, (unsigned long long)r->sw.drop_invalid,
            (unsigned long long)r->sw.drop_overflow,
            (unsigned long long)r->sw.fabric_collisions,
            (unsigned long long)r->sw.fabric_checks);
    fprintf(f, "  delivery checks    %llu cells: lost %llu, duplicated %llu, misdelivered %llu\n",
            (unsigned long long)r->cells_delivered, (unsigned long long)r->lost,
            (unsigned long long)r->duplicated, (unsigned long long)r->misdelivered);
}

static double plot_value(const struct row *w, const char *y)
{
    if (!strcmp(y, "utilization"))
        return w->r.utilization;
    for (unsigned k = 0; k < RIFL_SSIM_NPCT; k++) {
        char name[16];
        snprintf(name, sizeof name, "p%g", rifl_ssim_percentiles[k]);
        if (!strcmp(y, name))
            return (double)w->r.lat_pct[k];
    }
    return w->r.lat_mean;
}

/* --plot-y: utilization, mean or a latency percentile */
static int check_plot_y(const char *y)
{
    char list[160] = "utilization, mean";
    bool ok = !strcmp(y, "utilization") || !strcmp(y, "mean");
    for (unsigned k = 0; k < RIFL_SSIM_NPCT; k++) {
        char name[16];
        snprintf(name, sizeof name, "p%g", rifl_ssim_percentiles[k]);
        ok = ok || !strcmp(y, name);
        size_t L = strlen(list);
        snprintf(list + L, sizeof list - L, ", %s", name);
    }
    if (ok)
        return 0;
    return cli_fail(g_table, "plot-y", "'%s' is not a plotted value; use one of %s", y, list);
}

/* FIG.png -> FIG.dat and FIG.gp beside it */
static int plot_paths(const char *png, char *dat, char *gp, size_t n)
{
    size_t L = strlen(png);
    if (L > 4 && !strcasecmp(png + L - 4, ".png"))
        L -= 4;
    if ((size_t)snprintf(dat, n, "%.*s.dat", (int)L, png) >= n ||
        (size_t)snprintf(gp, n, "%.*s.gp", (int)L, png) >= n)
        return cli_fail(g_table, "plot", "the path is too long");
    return 0;
}

/* check before the runs that the plot and its data and script can be written */
static int check_plot(const char *png)
{
    char dat[1024], gp[1024], what[300];
    snprintf(what, sizeof what, "%s", cli_where(g_table, "plot"));
    if (cli_check_output(png, what) || plot_paths(png, dat, gp, sizeof dat) ||
        cli_check_output(dat, what) || cli_check_output(gp, what))
        return 2;
    const char *base = strrchr(png, '/');
    base = base ? base + 1 : png;
    if (!strcasecmp(base, ".png"))
        return cli_fail(g_table, "plot", "'%s' has no name before .png; use e.g. fig.png", png);
    return 0;
}

/* the gnuplot script's drawing: one line per label */
struct plot_body {
    const char *dat, *xkey, *ykey, *title;
    char (*labels)[160];
    unsigned nl;
};

static void write_plot_body(FILE *f, void *ctx)
{
    const struct plot_body *p = ctx;
    fprintf(f, "set grid\nset key left top\nset xlabel ");
    cli_gp_quote(f, p->xkey);
    fprintf(f, "\n");
    if (!strcmp(p->ykey, "utilization"))
        fprintf(f, "set ylabel 'bandwidth utilization'\nset yrange [0:1.05]\n");
    else
        fprintf(f, "set ylabel 'latency %s (cell times)'\nset logscale y\n", p->ykey);
    if (p->title) {
        fprintf(f, "set title ");
        cli_gp_quote(f, p->title);
        fprintf(f, "\n");
    }
    fprintf(f, "plot ");
    for (unsigned k = 0; k < p->nl; k++) {
        fprintf(f, "%s", k ? ", \\\n     " : "");
        cli_gp_quote_path(f, p->dat);
        fprintf(f, " index %u using 1:2 with linespoints lw 2 title ", k);
        cli_gp_quote(f, p->labels[k][0] ? p->labels[k] : p->ykey);
    }
    if (!strcmp(p->ykey, "utilization") && !strcmp(p->xkey, "load"))
        fprintf(f, ", \\\n     x with lines dt 2 lc rgb 'gray' title 'offered load'");
    fprintf(f, "\n");
}

static int write_plot(const char *png, const struct row *rows, unsigned nrows, const char *xkey,
                      const char *ykey, const char *title)
{
    char dat[1024], gp[1024];
    if (plot_paths(png, dat, gp, sizeof dat))
        return 2;
    FILE *f = fopen(dat, "w");
    if (!f) {
        fprintf(stderr, "error: cannot write '%s': %s\n", dat, strerror(errno));
        return 2;
    }
    /* one block per label */
    char (*labels)[160] = calloc(nrows ? nrows : 1, sizeof *labels);
    if (!labels) {
        fclose(f);
        return 2;
    }
    unsigned nl = 0;
    for (unsigned i = 0; i < nrows; i++) {
        unsigned k = 0;
        while (k < nl && strcmp(labels[k], rows[i].label))
            k++;
        if (k == nl)
            snprintf(labels[nl++], 160, "%s", rows[i].label);
    }
    for (unsigned k = 0; k < nl; k++) {
        fprintf(f, "# %s\n# %s %s\n", labels[k][0] ? labels[k] : "run", xkey, ykey);
        for (unsigned i = 0; i < nrows; i++)
            if (!strcmp(rows[i].label, labels[k]))
                fprintf(f, "%g %.6g\n", rows[i].x, plot_value(&rows[i], ykey));
        fprintf(f, "\n\n");
    }
    if (fclose(f)) {
        fprintf(stderr, "error: cannot write '%s': %s\n", dat, strerror(errno));
        free(labels);
        return 2;
    }
    struct plot_body body = { dat, xkey, ykey, title, labels, nl };
    int rc = cli_gnuplot(png, cli_where(g_table, "plot"), gp, write_plot_body, &body);
    free(labels);
    if (rc)
        return rc;
    fprintf(stderr, "plot written to %s (data %s, script %s)\n", png, dat, gp);
    return 0;
}

/* Rough wall time of a run: each host sends bytes-per-pair to every other
 * host, one cell per slot at most, at the offered load, so the run lasts
 * about (hosts - 1) x cells per pair / load slots; the simulator handles
 * about 2e7 port-slots per second (rifl bench switch on the development
 * machine at 90% load: 1.1e6 slots/s with 32 ports, 8.8e4 with 256; a
 * topology of a few hosts, about 1.6e7). */
#define EST_PORT_SLOTS 2e7

static double estimate_seconds(const rifl_ssim_config *c, const rifl_topology *topo)
{
    double hosts = topo ? (double)topo->nhosts : (double)c->nports;
    double cell_bytes = 256;
    if (c->packet_bytes == 0) {
        /* variable sizes are padded to whole cells */
        double mean = (c->var_min + c->var_max) / 2.0;
        cell_bytes = 256 * mean / (256 * ceil(mean / 256));
    }
    double slots = (hosts - 1) * ceil((double)c->bytes_per_pair / cell_bytes) / c->load;
    if (c->max_slots && (double)c->max_slots < slots)
        slots = (double)c->max_slots;
    return slots * hosts / EST_PORT_SLOTS;
}

/* for cli_blame: 0 when the settings pass the simulator's checks */
struct check_ctx {
    const struct opts *o;
    const rifl_topology *topo;
};

static int config_ok(void *vctx)
{
    const struct check_ctx *x = vctx;
    rifl_ssim_config c;
    rifl_ssim *sim;
    char err[16];
    if (build_cfg(x->o, &c, x->topo, true))
        return -1;
    if (rifl_ssim_create(&c, &sim, err, sizeof err))
        return -1;
    rifl_ssim_free(sim);
    return 0;
}

/* settings the current values make meaningless (unless a sweep varies what
 * decides it) */
static int check_unused(const struct cli_opt *t, const struct opts *o, const struct cli_sweep *sw)
{
    if (o->topology && cli_unused(t, "ports", "with --topology (the topology file gives "
                                  "the switches and their ports)"))
        return 2;
    if (o->topology && cli_unused(t, "latency", "with --topology (each link's delay in the "
                                  "topology file gives its round trip: 'link A B delay D')"))
        return 2;
    if (!cli_sweep_has(sw, "scheduler") && !strcasecmp(o->scheduler, "safc") &&
        cli_unused(t, "iterations", "with --scheduler safc (iSLIP's iterations; SAFC has none)"))
        return 2;
    if (!cli_sweep_has(sw, "packet-bytes") && o->packet_bytes) {
        if (cli_unused(t, "var-min", "with fixed --packet-bytes (variable sizes need "
                       "--packet-bytes 0)") ||
            cli_unused(t, "var-max", "with fixed --packet-bytes (variable sizes need "
                       "--packet-bytes 0)"))
            return 2;
    }
    if (!cli_sweep_has(sw, "traffic") && !strcasecmp(o->traffic, "bernoulli") &&
        cli_unused(t, "burst-bytes", "with --traffic bernoulli (bursty traffic only)"))
        return 2;
    if (!cli_sweep_has(sw, "host-queue") && !strcasecmp(o->host_queue, "per-dest") &&
        cli_unused(t, "host-fifo-cells", "with --host-queue per-dest (fifo hosts only)"))
        return 2;
    if (!o->plot && (cli_unused(t, "plot-y", "without --plot FIG.png") ||
                     cli_unused(t, "plot-title", "without --plot FIG.png")))
        return 2;
    return 0;
}

static int run_parsed(int argc, char **argv, const struct cli_opt *table, struct opts *o);

static int run(int argc, char **argv)
{
    struct opts o = {
        .ports = 32, .iterations = 3, .packet_bytes = 256, .var_min = 64, .var_max = 2048,
        .bytes_per_pair = 2500000, .latency = 17, .voq_cells = 0, .fc_on = 0, .fc_off = 0,
        .seed = 1, .max_slots = 0, .load = 0.9, .burst_bytes = 1024, .cell_ns = 20,
        .scheduler = "islip", .traffic = "bernoulli", .topology = NULL, .sweep = NULL,
        .plot = NULL, .plot_y = "utilization", .host_queue = "per-dest", .host_fifo_cells = 16,
        .pcap_slots = 10000,
    };
    const struct cli_opt table[] = {
        { "ports", CLI_UINT, &o.ports, "switch ports = hosts (single-switch mode)", 2, 256 },
        { "scheduler", CLI_STRING, &o.scheduler, "islip or safc (ideal upper bound)", 0, 0 },
        { "iterations", CLI_UINT, &o.iterations, "iSLIP iterations per slot", 1, 256 },
        { "load", CLI_DOUBLE, &o.load, "offered load per host, fraction of the line rate", 0.0001, 1 },
        { "traffic", CLI_STRING, &o.traffic, "bernoulli or bursty (on/off, geometric)", 0, 0 },
        { "packet-bytes", CLI_UINT, &o.packet_bytes,
          "fixed packet size, a multiple of 256; 0 = variable sizes", 0, 1048576 },
        { "var-min", CLI_UINT, &o.var_min, "variable sizes: smallest packet (bytes)", 1, 65536 },
        { "var-max", CLI_UINT, &o.var_max, "variable sizes: largest packet (bytes)", 1, 65536 },
        { "burst-bytes", CLI_DOUBLE, &o.burst_bytes, "bursty: mean cells x 256 of a train's draw", 1, 1e9 },
        { "bytes-per-pair", CLI_BYTES, &o.bytes_per_pair,
          "data each host sends to each other host", 1, 1e12 },
        { "latency", CLI_UINT, &o.latency,
          "fixed latency outside queues and scheduler (cell times)", 2, 39999 },
        { "cell-ns", CLI_DOUBLE, &o.cell_ns, "cell time in ns (256 B at the line rate)", 0.001, 1e6 },
        { "voq-cells", CLI_UINT, &o.voq_cells, "cells per VOQ; 0 = minimum of the 1.5-RTT rule", 0, 65535 },
        { "fc-on", CLI_UINT, &o.fc_on, "flow-control ON threshold (cells); 0 = derived", 0, 65535 },
        { "fc-off", CLI_UINT, &o.fc_off, "flow-control OFF threshold (cells); 0 = derived", 0, 65535 },
        { "seed", CLI_UINT, &o.seed, "random seed (printed with every run)", 0,
          18446744073709551615.0 },
        { "max-slots", CLI_UINT, &o.max_slots, "stop after this many slots (0 = run to the end)",
          0, 1e15 },
        { "host-queue", CLI_STRING, &o.host_queue,
          "per-dest (a queue per destination) or fifo (one FIFO, blocks on a paused head)", 0, 0 },
        { "host-fifo-cells", CLI_UINT, &o.host_fifo_cells,
          "fifo hosts: cells buffered before the source stalls", 1, 65535 },
        { "broadcast", CLI_DOUBLE, &o.broadcast, "fraction of trains sent to every other host "
          "(single-switch mode)", 0, 1 },
        { "topology", CLI_STRING, &o.topology, "topology file, or single:N, leafspine:LxSxH or "
          "fattree:K (multi-switch mode; see docs/layer2.md)", 0, 0 },
        { "no-fabric-check", CLI_FLAG, &o.no_fabric_check,
          "skip the Batcher-Banyan collision check", 0, 0 },
        { "sweep", CLI_STRING, &o.sweep,
          "runs over values: 'KEY=V1,V2 KEY2=FROM:TO:STEP' (STEP +D or xF; any option above "
          "but --topology)", 0, 0 },
        { "plot", CLI_STRING, &o.plot, "write a gnuplot PNG of the sweep (needs --sweep), with "
          "its data (.dat) and script (.gp) beside it", 0, 0 },
        { "plot-y", CLI_STRING, &o.plot_y, "plotted value: utilization, mean or a latency "
          "percentile p1, p50, p75, p90, p95, p99, p100", 0, 0 },
        { "plot-title", CLI_STRING, &o.plot_title, "title of the plot", 0, 0 },
        { "pcap", CLI_STRING, &o.pcap, "write the frames of one host's link to this pcap file, "
          "as RIFL lanes would carry its cells and flow-control frames (docs/capture.md)", 0, 0 },
        { "pcap-host", CLI_UINT, &o.pcap_host, "--pcap: the host whose link is captured", 0, 255 },
        { "pcap-slots", CLI_UINT, &o.pcap_slots, "--pcap: capture the first N cell times", 1, 1e9 },
        { "csv", CLI_FLAG, &o.csv, "CSV rows instead of the summary", 0, 0 },
        { "json", CLI_FLAG, &o.json, "JSON instead of the summary", 0, 0 },
        { "progress", CLI_FLAG, &o.progress, "progress on stderr even when not a terminal", 0, 0 },
        { "jobs", CLI_UINT, &o.jobs, "sweep points run at once (0 = one per CPU); results do not "
          "depend on it", 0, 256 },
        CLI_END
    };
    g_table = table;
    /* string option values are owned by the CLI layer (tools/cli_opts.c) */
    return run_parsed(argc, argv, table, &o);
}

/* "scheduler=safc" -> "SAFC" and the like, for plot legends */
static void pretty_value(char *buf, size_t n, const char *key, const char *v)
{
    if (!strcmp(key, "scheduler"))
        snprintf(buf, n, "%s", !strcasecmp(v, "safc") ? "SAFC" : "iSLIP");
    else if (!strcmp(key, "packet-bytes"))
        snprintf(buf, n, "%s%s%s", strcmp(v, "0") ? "fixed " : "variable",
                 strcmp(v, "0") ? v : "", strcmp(v, "0") ? " B" : "");
    else
        snprintf(buf, n, "%.60s=%.31s", key, v);
}

int cli_load_topology(const struct cli_opt *table, const char *path, rifl_topology **topo)
{
    return cli_load_topology_as(table, "topology", path, topo);
}

int cli_load_topology_as(const struct cli_opt *table, const char *option, const char *path,
                         rifl_topology **topo)
{
    if (rifl_topo_is_generator(path)) {
        char err[512];
        if (rifl_topo_generate(path, topo, err, sizeof err) != RIFL_OK) {
            fprintf(stderr, "error: %s: %s\n", cli_where(table, option), err);
            return 2;
        }
        return 0;
    }
    size_t len;
    char *text = cli_read_named(path, cli_where(table, option), &len);
    if (!text)
        return 2;
    char err[512];
    int prc = rifl_topo_parse(text, len, topo, err, sizeof err);
    free(text);
    if (prc) {
        fprintf(stderr, "error: %s: %s: %s\n", cli_where(table, option), path, err);
        return 2;
    }
    return 0;
}

unsigned cli_warn_wait_cycle(const struct cli_opt *table, const char *option,
                             const rifl_topology *t, unsigned paths)
{
    enum { SHOWN = 6 };
    rifl_topo_voq cyc[SHOWN];
    unsigned len = 0;
    char err[512];
    if (rifl_topo_wait_cycle(t, paths, cyc, SHOWN, &len, err, sizeof err) != RIFL_OK)
        return 0; /* (the run itself reports a route missing or no memory) */
    if (!len)
        return 0;
    fprintf(stderr, "warning: %s: the routes can deadlock under load: the waits of their "
            "VOQs close a cycle of %u: ", cli_where(table, option), len);
    for (unsigned k = 0; k < len && k < SHOWN; k++)
        fprintf(stderr, "%s (in %u, out %u) -> ", t->nodes[cyc[k].sw].name, cyc[k].in_port,
                cyc[k].out_port);
    fprintf(stderr, "%s; every VOQ of it can fill and wait on the next for good (per-VOQ "
            "flow control, docs/layer2.md); routes over a tree, leaf-spine or fat tree close "
            "no such cycle\n", len > SHOWN ? "..." : t->nodes[cyc[0].sw].name);
    return len;
}

/* Whether any link has more than one lane: a topology file's link its own
 * lanes, the others `lanes`. */
static bool any_bonded(const rifl_topology *topo, uint64_t lanes)
{
    for (unsigned v = 0; topo && v < topo->nnodes; v++)
        for (unsigned p = 0; p < topo->nodes[v].nports; p++) {
            int own = topo->nodes[v].attr[p].lanes;
            if (topo->nodes[v].peer[p] >= 0 && (own > 0 ? (uint64_t)own : lanes) > 1)
                return true;
        }
    return false;
}

int cli_group_lanes_unused(const struct cli_opt *table, const struct rifl_topology *topo,
                           uint64_t lanes)
{
    if (any_bonded(topo, lanes))
        return 0;
    return cli_unused(table, "group-lanes",
                      lanes > 1 ? "without bonded links (the topology file gives every link "
                                  "one lane, whatever --lanes)"
                                : "without bonded links (--lanes 2 to 16, or a topology "
                                  "file's link with lanes 2 or more)");
}

/* Whether link setting `name` is given by every link of the topology (on
 * both of its ports): then the option of that name changes nothing. */
static bool every_link_gives(const rifl_topology *topo, const char *name)
{
    bool any = false;
    for (unsigned v = 0; topo && v < topo->nnodes; v++)
        for (unsigned p = 0; p < topo->nodes[v].nports; p++) {
            if (topo->nodes[v].peer[p] < 0)
                continue;
            const rifl_topo_link_attr *a = &topo->nodes[v].attr[p];
            bool own = !strcmp(name, "lanes")            ? a->lanes > 0
                       : !strcmp(name, "cable-m")        ? a->cable_m >= 0
                       : !strcmp(name, "transceiver-ns") ? a->transceiver_ns >= 0
                       : !strcmp(name, "ber")            ? a->tx_ber >= 0
                                                         : false;
            if (!own)
                return false;
            any = true;
        }
    return any;
}

int cli_topo_gives_unused(const struct cli_opt *table, const struct rifl_topology *topo,
                          const char *name)
{
    if (!every_link_gives(topo, name))
        return 0;
    const char *key = !strcmp(name, "cable-m")          ? "cable"
                      : !strcmp(name, "transceiver-ns") ? "transceiver"
                                                        : name;
    char why[160];
    snprintf(why, sizeof why, "with this topology file (every link gives its own '%s')", key);
    return cli_unused(table, name, why);
}

/* the swept key on the x axis: load when swept, else the first key; -1
 * without a sweep */
static int x_key(const struct cli_sweep *sw)
{
    int xk = -1;
    for (unsigned k = 0; k < sw->nkeys; k++)
        if (!strcmp(sw->key[k].opt->name, "load"))
            xk = (int)k;
    if (xk < 0 && sw->nkeys)
        xk = 0;
    return xk;
}

/* --plot: the x axis must be a number */
static int check_x_key(const struct cli_opt *table, const struct cli_sweep *sw, int xk)
{
    if (xk >= 0 && (sw->key[xk].opt->type == CLI_STRING || sw->key[xk].opt->type == CLI_FLAG ||
                    sw->key[xk].opt->type == CLI_BOOL)) {
        fprintf(stderr, "error: %s: the x axis is the first swept key, '%s', which is not a "
                "number; put a numeric key first (or sweep load)\n", cli_where(table, "plot"),
                sw->key[xk].opt->name);
        return 2;
    }
    return 0;
}

/* the swept values of point n, and its label: those of the keys but the x key */
static void label_row(struct row *w, const struct cli_sweep *sw, size_t n, int xk)
{
    w->label[0] = '\0';
    w->csv_extra[0] = '\0';
    for (unsigned k = 0; k < sw->nkeys; k++) {
        snprintf(w->vals[k], 32, "%s", cli_sweep_value(sw, n, k));
        if (!csv_has(sw->key[k].opt->name)) {
            size_t E = strlen(w->csv_extra);
            snprintf(w->csv_extra + E, sizeof w->csv_extra - E, ",%s", w->vals[k]);
        }
        if ((int)k == xk)
            continue;
        size_t L = strlen(w->label);
        char pretty[128];
        pretty_value(pretty, sizeof pretty, sw->key[k].opt->name, w->vals[k]);
        snprintf(w->label + L, sizeof w->label - L, "%s%s", L ? ", " : "", pretty);
    }
}

/* every point's settings are checked before anything runs; warns when the
 * runs will take long */
static int check_points(const struct cli_opt *table, struct opts *o, const struct cli_sweep *sw,
                        int xk, const rifl_topology *topo, struct row *rows, size_t total,
                        unsigned jobs)
{
    struct check_ctx cx = { o, topo };
    double est_s = 0, longest = 0;
    for (size_t n = 0; n < total; n++) {
        struct row *w = &rows[n];
        if (sw->nkeys && cli_sweep_apply(sw, n, table))
            return 2;
        label_row(w, sw, n, xk);
        if (xk >= 0)
            w->x = cli_opt_number(sw->key[xk].opt); /* as applied: 10KB is 10000 */
        w->cell_ns = o->cell_ns;
        if (check_unused(table, o, sw) || build_cfg(o, &w->cfg, topo, false))
            return 2;
        rifl_ssim *sim;
        char err[512];
        if (rifl_ssim_create(&w->cfg, &sim, err, sizeof err))
            return cli_blame(table, config_ok, &cx, err);
        rifl_ssim_free(sim);
        w->est_s = estimate_seconds(&w->cfg, topo);
        est_s += w->est_s;
        longest = fmax(longest, w->est_s);
    }
    est_s = fmax(est_s / jobs, longest);
    if (est_s > 60) {
        char dur[32];
        cli_format_duration(dur, sizeof dur, est_s);
        fprintf(stderr, "warning: this run is estimated to take about %s (every host sends "
                "--bytes-per-pair to every other host at --load; about %.2g port-slots "
                "simulated per second, %u run%s at once); --max-slots N stops each run after "
                "N slots and a smaller --bytes-per-pair or a higher --load shortens it\n", dur,
                EST_PORT_SLOTS, jobs, jobs > 1 ? "s" : "");
    }
    return 0;
}

/* simulate point w, number n of total, to its end or --max-slots (with its
 * own progress line unless `quiet`) */
static int simulate(const struct opts *o, struct row *w, size_t n, size_t total, bool quiet)
{
    rifl_ssim *sim;
    char err[512];
    int crc = rifl_ssim_create(&w->cfg, &sim, err, sizeof err);
    if (crc) {
        fprintf(stderr, "error: %s\n", err);
        return 2;
    }
    double t0 = cli_now();
    char what[64];
    snprintf(what, sizeof what, "run %zu/%zu", n + 1, total);
    int rrc;
    while (!(rrc = rifl_ssim_run(sim, 100000))) {
        rifl_ssim_result tmp;
        rifl_ssim_result_get(sim, &tmp);
        if (w->cfg.max_slots && tmp.slots >= w->cfg.max_slots)
            break;
        if (!quiet)
            cli_progress(what, rifl_ssim_progress(sim), NULL, o->progress);
    }
    if (!quiet)
        cli_progress_done(o->progress);
    if (rrc < 0) {
        fprintf(stderr, "error: out of memory for the hosts' queues\n");
        rifl_ssim_free(sim);
        return 2;
    }
    w->seconds = cli_now() - t0;
    rifl_ssim_result_get(sim, &w->r);
    rifl_ssim_free(sim);
    return 0;
}

/* print point w, number n of total, as a CSV row, JSON or a summary */
static void print_row(const struct opts *o, const struct row *w, size_t n, size_t total,
                      unsigned nsw)
{
    if (o->csv)
        print_csv(stdout, w);
    else if (o->json) {
        print_json(stdout, w, w->cell_ns, nsw ? "  " : "");
        printf(nsw && n + 1 < total ? ",\n" : "\n");
    } else {
        if (n)
            printf("\n");
        print_summary(stdout, w, w->cell_ns);
    }
    fflush(stdout);
}

/* the exit status point w contributes: 1 when its run did not finish or
 * failed a delivery check */
static int row_status(const struct row *w)
{
    const rifl_ssim_result *r = &w->r;
    return !r->finished || r->lost || r->duplicated || r->misdelivered ||
           r->sw.fabric_collisions;
}

struct par {
    const struct opts *o;
    struct row *rows;
    size_t total;
    unsigned nsw;
};

static void par_run(void *ctx, size_t i)
{
    struct par *p = ctx;
    p->rows[i].rc = simulate(p->o, &p->rows[i], i, p->total, true);
}

static int par_print(void *ctx, size_t i)
{
    struct par *p = ctx;
    if (p->rows[i].rc)
        return 2;
    print_row(p->o, &p->rows[i], i, p->total, p->nsw);
    return row_status(&p->rows[i]);
}

/* run the checked points, `jobs` at once, and print them in order: 0, 1
 * when a run did not finish or failed a delivery check, 2 on an error */
static int run_points(const struct opts *o, struct row *rows, size_t total,
                      const struct cli_sweep *sw, uint64_t seed, unsigned jobs)
{
    int status = 0;
    unsigned nsw = sw->nkeys;
    if (o->csv)
        print_csv_header(stdout, sw);
    /* (a swept seed is in each run only) */
    if (o->json && nsw && !cli_sweep_has(sw, "seed"))
        printf("{\"seed\": %llu, \"runs\": [\n", (unsigned long long)seed);
    else if (o->json && nsw)
        printf("{\"runs\": [\n");
    if (jobs > 1) {
        double *cost = malloc(total * sizeof *cost);
        if (!cost)
            return 2;
        for (size_t n = 0; n < total; n++)
            cost[n] = rows[n].est_s;
        struct par p = { o, rows, total, nsw };
        struct cli_jobs j = { total, cost, par_run, par_print, &p, o->progress };
        status = cli_jobs_run(&j, jobs);
        free(cost);
        if (status < 0)
            return 2;
    } else {
        for (size_t n = 0; n < total && status != 2; n++) {
            struct row *w = &rows[n];
            if (simulate(o, w, n, total, false)) {
                status = 2;
                break;
            }
            if (row_status(w))
                status = status ? status : 1;
            print_row(o, w, n, total, nsw);
        }
    }
    if (o->json && nsw && status != 2)
        printf("]}\n");
    return status;
}

static int run_parsed(int argc, char **argv, const struct cli_opt *table, struct opts *o)
{
    int rc = cli_parse(argc, argv, table, "[options]",
                       "Cell-time simulation of hosts around a RIFL Layer 2 switch: VOQs, iSLIP\n"
                       "or SAFC, per-VOQ flow control, Bernoulli or bursty traffic.  Defaults are\n"
                       "the paper's 32-port 100 Gbit/s switch (20 ns cells, iSLIP with 3\n"
                       "iterations, 17 cell times of fixed latency, 2.5 MB per pair).",
                       NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (o->csv && o->json)
        return cli_fail(table, "csv,json", "choose one of --csv and --json");
    if (o->plot && !o->sweep)
        return cli_fail(table, "plot", "--plot needs --sweep (e.g. --sweep load=0.1:1:0.1)");
    if (check_plot_y(o->plot_y))
        return 2;
    if (o->pcap && (o->sweep || o->topology))
        return cli_fail(table, "pcap", o->sweep ? "a capture is of one run: drop --sweep"
                                                : "captures need the single-switch mode: drop "
                                                  "--topology");
    if (o->pcap && o->pcap_host >= o->ports)
        return cli_fail(table, "pcap-host", "host %llu: the switch has hosts 0 to %llu",
                        (unsigned long long)o->pcap_host, (unsigned long long)o->ports - 1);
    if (!o->pcap && (cli_is_set(table, "pcap-host") || cli_is_set(table, "pcap-slots")))
        return cli_fail(table, "pcap-host,pcap-slots", "these choose what --pcap captures: "
                        "add --pcap FILE");
    if (o->plot && check_plot(o->plot))
        return 2;
    struct cli_sweep sw = { 0 };
    static const char *const fixed[] = { "sweep", "plot", "plot-y", "plot-title", "csv", "json",
                                         "topology", "progress", "jobs", NULL };
    if (o->sweep && cli_sweep_parse(&sw, o->sweep, table, fixed,
                                    " (it shapes the output or the network, not a run)"))
        return 2;
    rifl_topology *topo = NULL;
    if (o->topology && cli_load_topology(table, o->topology, &topo)) {
        cli_sweep_free(&sw);
        return 2;
    }
    if (topo)
        cli_warn_wait_cycle(table, "topology", topo, 1);
    for (unsigned v = 0; topo && v < topo->nnodes; v++) {
        const rifl_topo_node *nd = &topo->nodes[v];
        bool own = false;
        for (unsigned p = 0; p < nd->nports; p++)
            own |= nd->attr[p].cable_m >= 0 || nd->attr[p].transceiver_ns >= 0 ||
                   nd->attr[p].tx_ber >= 0;
        if (own) {
            fprintf(stderr, "warning: %s: the links' cable, transceiver and ber settings are "
                    "for `rifl sim net`; here links are fixed delays (their `delay`)\n",
                    cli_where(table, "topology"));
            break;
        }
    }
    size_t total = o->sweep ? sw.npoints : 1;
    int xk = x_key(&sw);
    struct row *rows = NULL;
    if ((o->plot && check_x_key(table, &sw, xk)) || !(rows = calloc(total, sizeof *rows))) {
        cli_sweep_free(&sw);
        rifl_topo_free(topo);
        return 2;
    }
    uint64_t seed = o->seed;
    unsigned jobs = cli_job_count(o->jobs, total);
    int status = check_points(table, o, &sw, xk, topo, rows, total, jobs);
    struct cli_swcap *cap = NULL;
    if (!status && o->pcap) {
        char msg[256];
        if (cli_swcap_open(&cap, o->pcap, o->cell_ns, (unsigned)o->latency,
                           (unsigned)o->pcap_host, o->pcap_slots, msg, sizeof msg) != RIFL_OK) {
            fprintf(stderr, "error: %s: %s\n", cli_where(table, "pcap"), msg);
            status = 2;
        }
        rows[0].cfg.watch = cli_swcap_watch;
        rows[0].cfg.watch_ctx = cap;
        rows[0].cfg.watch_host = (unsigned)o->pcap_host;
    }
    if (!status)
        status = run_points(o, rows, total, &sw, seed, jobs);
    if (cap) {
        char msg[256];
        if (cli_swcap_close(cap, rows[0].r.slots, o->pcap, msg, sizeof msg) != RIFL_OK) {
            fprintf(stderr, "error: %s: %s\n", cli_where(table, "pcap"), msg);
            status = 2;
        }
    }
    if (status != 2 && o->plot)
        status = write_plot(o->plot, rows, (unsigned)total,
                            xk >= 0 ? sw.key[xk].opt->name : "run", o->plot_y, o->plot_title)
                     ? 2 : status;
    free(rows);
    cli_sweep_free(&sw);
    rifl_topo_free(topo);
    return status;
}

const struct rifl_command rifl_cmd_sim_switch = {
    "sim switch", "simulate hosts around a RIFL Layer 2 switch (iSLIP/SAFC, flow control)", run
};

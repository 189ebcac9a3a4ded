/* `rifl sim rdma`: the RDMA engine between hosts over a RIFL Layer 2 path
 * (rifl/sim/rdmasim.h): throughput against the route's capacity, every
 * byte checked, faults injected on purpose. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rifl/rdma.h"
#include "rifl/sim/rdmasim.h"

struct opts {
    const char *op, *fault, *sizes, *mapping, *net, *fc;
    uint64_t size, bytes, flows, senders, hops, paths, frame_bits, bundle, seed;
    uint64_t vls, credit_cells, lanes, group_lanes;
    double link_gbps, link_ns, switch_ns, page_in_ns, timeout_us, max_s, ber, max_memory_gb;
    bool go_back_n, json, csv, victim;
    const rifl_topology *topo; /* --net, loaded */
};

/* --fault KIND:P[,KIND:P...]: page-fault, payload-crc, drop; and pd */
static int parse_faults(const char *spec, rifl_rdmasim_config *c, bool quiet)
{
    if (!spec || !*spec)
        return 0;
    char *copy = strdup(spec);
    if (!copy)
        return 2;
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "pd")) {
            c->wrong_pd = true;
            continue;
        }
        char *colon = strchr(tok, ':');
        double p;
        if (!colon || cli_parse_double(colon + 1, &p) || !(p >= 0 && p <= 1)) {
            if (!quiet)
                fprintf(stderr, "error: option --fault: '%s' is not KIND:P with a probability P "
                                "(page-fault:P up to 1, payload-crc:P and drop:P up to 0.5; "
                                "and pd alone)\n", tok);
            rc = 2;
            break;
        }
        *colon = '\0';
        if (!strcmp(tok, "page-fault"))
            c->page_fault = p;
        else if (!strcmp(tok, "payload-crc"))
            c->payload_crc = p;
        else if (!strcmp(tok, "drop"))
            c->drop = p;
        else {
            if (!quiet)
                fprintf(stderr, "error: option --fault: unknown fault '%s'; give page-fault:P, "
                                "payload-crc:P, drop:P or pd\n", tok);
            rc = 2;
            break;
        }
    }
    free(copy);
    return rc;
}

static void json_result(FILE *f, const rifl_rdmasim_config *c, const char *op, const char *net,
                        const rifl_rdmasim_result *r)
{
    fprintf(f, "{\"op\": ");
    json_str(f, op);
    fprintf(f, ", \"net\": ");
    json_str(f, net);
    fprintf(f, ", \"size\": %llu, \"flows\": %u, \"senders\": %u, \"hops\": %u, \"paths\": %u, "
               "\"link_gbps\": %g, \"frame_bits\": %u, \"mapping\": \"%s\", \"bundle_packets\": %u, "
               "\"go_back_n\": %s, "
               "\"seed\": %llu, ",
            (unsigned long long)c->size, c->flows, c->senders, c->hops, c->paths, c->link_gbps,
            c->frame_bits, rifl_rdma_mapping_name(c->mapping), r->bundle_packets,
            c->go_back_n ? "true" : "false",
            (unsigned long long)c->seed);
    fprintf(f, "\"throughput_gbps\": %.6g, \"capacity_gbps\": %.6g, \"ratio\": %.6g, "
               "\"verified\": %s, \"finished\": %s, \"completions\": %llu, \"failed\": %llu, "
               "\"acked_missing\": %llu, \"first_error\": ",
            r->throughput_gbps, r->capacity_gbps, r->ratio, r->verified ? "true" : "false",
            r->finished ? "true" : "false", (unsigned long long)r->transfers,
            (unsigned long long)r->failed, (unsigned long long)r->acked_missing);
    json_str(f, r->failed ? rifl_rdma_strerror(r->first_error) : "");
    fprintf(f, ", \"retransmitted_blocks\": %llu, \"nacks\": %llu, \"timeouts\": %llu, "
               "\"sim_us\": %.6g, \"latency_us_mean\": %.6g, \"latency_us_min\": %.6g, "
               "\"notify_us_min\": %.6g, \"cells\": %llu, \"bundles\": %llu, "
               "\"dropped_bundles\": %llu, \"damaged_packets\": %llu, \"page_faults_served\": %llu, ",
            (unsigned long long)r->retransmitted_blocks, (unsigned long long)r->nacks,
            (unsigned long long)r->timeouts, r->sim_ns / 1e3, r->latency_ns_mean / 1e3, r->latency_ns_min / 1e3,
            r->notify_ns_min / 1e3, (unsigned long long)r->cells, (unsigned long long)r->bundles,
            (unsigned long long)r->dropped_bundles, (unsigned long long)r->damaged_packets,
            (unsigned long long)r->page_faults_served);
    fprintf(f, "\"sender_gbps_min\": %.6g, \"sender_gbps_max\": %.6g, ", r->sender_gbps_min,
            r->sender_gbps_max);
    if (c->topo) {
        fprintf(f, "\"fc\": \"%s\", \"ber\": %g, \"victim\": %s, \"victim_gbps\": %.6g, "
                   "\"victim_transfers\": %llu, \"replays\": %llu, \"fc_frames\": %llu, "
                   "\"max_voq_cells\": %llu, \"link_verify_fails\": %llu, \"cell_p99_us\": %.6g, ",
                c->fc == RIFL_NET_FC_VOQ      ? "voq"
                : c->fc == RIFL_NET_FC_CREDIT ? "credit"
                                              : "link",
                c->ber, c->victim ? "true" : "false",
                r->victim_gbps, (unsigned long long)r->victim_transfers,
                (unsigned long long)r->replays, (unsigned long long)r->fc_frames,
                (unsigned long long)r->max_voq_cells, (unsigned long long)r->link_verify_fails,
                r->cell_p99_ns / 1e3);
        if (c->fc == RIFL_NET_FC_CREDIT)
            fprintf(f, "\"vls\": %u, ", c->vls);
        fprintf(f, "\"lanes\": %u, \"group_lanes\": %u, ", c->lanes ? c->lanes : 1,
                c->group_lanes);
    }
    size_t n;
    const rifl_counter *ct = rifl_rdma_counters(&n);
    fprintf(f, "\"sender\": ");
    json_counters(f, ct, n, &r->sender);
    fprintf(f, ", \"target\": ");
    json_counters(f, ct, n, &r->target);
    fprintf(f, "}\n");
}

static void summary(const rifl_rdmasim_config *c, const char *op, const char *net,
                    const rifl_rdmasim_result *r)
{
    if (c->topo)
        printf("rifl sim rdma: %s of %llu bytes, %u flows, %u sender%s over the network %s "
               "(%s flow control%s), up to %u path%s, %g Gbit/s links (unless the topology gives a "
               "link's rate), F=%u, BER %g, %s mapping, "
               "N=%u, seed %llu\n",
               op, (unsigned long long)c->size, c->flows, c->senders, c->senders == 1 ? "" : "s",
               net,
               c->fc == RIFL_NET_FC_VOQ      ? "per-VOQ"
               : c->fc == RIFL_NET_FC_CREDIT ? "credit"
                                             : "link-level",
               c->victim ? ", a victim flow" : "", c->paths, c->paths == 1 ? "" : "s",
               c->link_gbps, c->frame_bits, c->ber, rifl_rdma_mapping_name(c->mapping),
               r->bundle_packets, (unsigned long long)c->seed);
    else
        printf("rifl sim rdma: %s of %llu bytes, %u flows, %u sender%s, %u hop%s, %u path%s, "
               "%g Gbit/s links, F=%u, %s mapping, N=%u, seed %llu\n",
               op, (unsigned long long)c->size, c->flows, c->senders, c->senders == 1 ? "" : "s",
               c->hops, c->hops == 1 ? "" : "s", c->paths, c->paths == 1 ? "" : "s", c->link_gbps,
               c->frame_bits, rifl_rdma_mapping_name(c->mapping), r->bundle_packets,
               (unsigned long long)c->seed);
    printf("  %llu transfers completed (%llu failed%s%s), %.4g MB in %.4g us: %.4g Gbit/s of %.4g "
           "(ratio %.4f)\n",
           (unsigned long long)r->transfers, (unsigned long long)r->failed,
           r->failed ? ", first: " : "", r->failed ? rifl_rdma_strerror(r->first_error) : "",
           (double)r->bytes / 1e6, r->sim_ns / 1e3, r->throughput_gbps, r->capacity_gbps,
           r->ratio);
    printf("  latency post to completion: mean %.4g us, min %.4g us", r->latency_ns_mean / 1e3,
           r->latency_ns_min / 1e3);
    if (r->notify_ns_min > 0)
        printf("; post to notification written: min %.4g us", r->notify_ns_min / 1e3);
    printf("\n  %llu bundles, %llu cells; retransmitted blocks %llu, NACKs %llu, timeouts %llu, "
           "page faults served %llu, bundles dropped %llu, payloads damaged %llu\n",
           (unsigned long long)r->bundles, (unsigned long long)r->cells,
           (unsigned long long)r->retransmitted_blocks, (unsigned long long)r->nacks,
           (unsigned long long)r->timeouts, (unsigned long long)r->page_faults_served, (unsigned long long)r->dropped_bundles,
           (unsigned long long)r->damaged_packets);
    if (c->senders > 1)
        printf("  each sender: %.4g to %.4g Gbit/s\n", r->sender_gbps_min, r->sender_gbps_max);
    if (c->topo) {
        printf("  network: %llu link replays, %llu flow-control frames, largest VOQ %llu cells, "
               "cell latency p99 %.4g us\n",
               (unsigned long long)r->replays, (unsigned long long)r->fc_frames,
               (unsigned long long)r->max_voq_cells, r->cell_p99_ns / 1e3);
        if (c->victim)
            printf("  victim flow (host 1 to host %u): %.4g Gbit/s, %llu transfers\n",
                   c->senders + 1, r->victim_gbps, (unsigned long long)r->victim_transfers);
    }
    if (r->verified && !c->wrong_pd && r->failed)
        printf("  verified: yes for the %llu transfers that completed (every byte compared); "
               "%llu failed\n", (unsigned long long)(r->transfers - r->failed),
               (unsigned long long)r->failed);
    else if (r->acked_missing)
        printf("  verified: NO (%llu sends completed without an error never reached the "
               "target's mailbox)\n", (unsigned long long)r->acked_missing);
    else
        printf("  verified: %s%s\n", r->verified ? "yes" : "NO",
               r->verified ? (c->wrong_pd ? " (the target's memory untouched)"
                                          : " (every byte of every transfer compared)")
                           : (r->finished ? " (bytes differ)" : " (not every transfer completed)"));
}

/* The simulator's configuration from the options (0), or 2 for an
 * operation or fault list that does not parse (said unless `quiet`). */
static int build_cfg(const struct opts *o, rifl_rdmasim_config *c, bool quiet)
{
    *c = rifl_rdmasim_default_config;
    if (!strcmp(o->op, "write"))
        c->op = RIFL_RDMASIM_WRITE;
    else if (!strcmp(o->op, "read"))
        c->op = RIFL_RDMASIM_READ;
    else if (!strcmp(o->op, "send"))
        c->op = RIFL_RDMASIM_SEND;
    else
        return 2;
    if (!strcmp(o->mapping, "bundle"))
        c->mapping = RIFL_RDMA_MAP_BUNDLE;
    else if (!strcmp(o->mapping, "cell"))
        c->mapping = RIFL_RDMA_MAP_CELL;
    else if (!strcmp(o->mapping, "compact"))
        c->mapping = RIFL_RDMA_MAP_COMPACT;
    else
        return 2;
    c->size = o->size ? o->size : c->op == RIFL_RDMASIM_SEND ? 256 : 1000000;
    c->bytes = o->bytes;
    c->flows = (unsigned)o->flows;
    c->senders = (unsigned)o->senders;
    c->link_gbps = o->link_gbps;
    c->frame_bits = (unsigned)o->frame_bits;
    c->hops = (unsigned)o->hops;
    c->paths = (unsigned)o->paths;
    c->link_ns = o->link_ns;
    c->switch_ns = o->switch_ns;
    c->bundle_packets = (unsigned)o->bundle;
    c->go_back_n = o->go_back_n;
    c->block_timeout_ns = o->timeout_us * 1e3;
    c->page_in_ns = o->page_in_ns;
    c->seed = o->seed;
    c->max_ns = o->max_s * 1e9;
    c->topo = o->topo;
    c->ber = o->ber;
    c->victim = o->victim;
    c->max_memory_gb = o->topo ? o->max_memory_gb : 0;
    c->lanes = (unsigned)o->lanes;
    c->group_lanes = (unsigned)o->group_lanes;
    if (!strcmp(o->fc, "voq"))
        c->fc = RIFL_NET_FC_VOQ;
    else if (!strcmp(o->fc, "link"))
        c->fc = RIFL_NET_FC_LINK;
    else if (!strcmp(o->fc, "credit"))
        c->fc = RIFL_NET_FC_CREDIT;
    else
        return 2;
    if (c->fc == RIFL_NET_FC_CREDIT) { /* (--vls has a default of its own) */
        c->vls = (unsigned)o->vls;
        c->credit_cells = (unsigned)o->credit_cells;
    }
    return parse_faults(o->fault, c, quiet);
}

/* for cli_blame: 0 when the settings pass the simulator's checks */
static int config_ok(void *ctx)
{
    rifl_rdmasim_config c;
    char msg[16];
    if (build_cfg(ctx, &c, true))
        return -1;
    return rifl_rdmasim_check(&c, msg, sizeof msg) == RIFL_OK ? 0 : -1;
}

static int run_all(const struct cli_opt *opts, struct opts *op);

static int run(int argc, char **argv)
{
    struct opts o = {
        .op = "write", .mapping = "bundle", .fault = "", .sizes = "", .size = 0, .bytes = 64000000,
        .flows = 32, .senders = 1, .hops = 1, .paths = 1, .frame_bits = 256, .bundle = 0,
        .seed = 1, .link_gbps = 10, .link_ns = 100, .switch_ns = 200, .page_in_ns = 10000,
        .timeout_us = 1000, .max_s = 10, .net = "", .fc = "voq", .ber = 0, .vls = 4, .lanes = 1,
        .max_memory_gb = 8,
    };
    const struct cli_opt opts[] = {
        { "op", CLI_STRING, &o.op, "write, read or send (to a mailbox, 1 to 256 bytes)", 0, 0 },
        { "size", CLI_BYTES, &o.size, "bytes per transfer (0: 1 MB, and 256 for sends)", 0, 1073741824.0 },
        { "sizes", CLI_STRING, &o.sizes, "a comma-separated list of sizes: one run each, a table", 0, 0 },
        { "flows", CLI_UINT, &o.flows, "transfers outstanding per sender", 1, 1024 },
        { "bytes", CLI_BYTES, &o.bytes, "payload per sender in all (whole transfers)", 1, 1e14 },
        { "senders", CLI_UINT, &o.senders, "hosts sending to host 0 (more than 1: an incast)", 1, 63 },
        { "link-gbps", CLI_DOUBLE, &o.link_gbps, "frame bit rate of every link", 0.001, 10000 },
        { "frame-bits", CLI_UINT, &o.frame_bits, "frame width F", 64, 2048 },
        { "hops", CLI_UINT, &o.hops, "switches on the path", 1, 5 },
        { "paths", CLI_UINT, &o.paths, "routes between two hosts (blocks spread over them)", 1, 32 },
        { "link-ns", CLI_DOUBLE, &o.link_ns, "each link's cable and transceivers, ns", 0, 1e9 },
        { "switch-ns", CLI_DOUBLE, &o.switch_ns, "each switch's pipeline, ns", 0, 1e9 },
        { "mapping", CLI_STRING, &o.mapping,
          "bundle (the spec's), cell (one packet per cell) or compact (no check codes or "
          "padding: the link keeps every byte)", 0, 0 },
        { "bundle", CLI_UINT, &o.bundle, "packets in a full bundle (N; 0: the mapping's, 7, 1 or 11)", 0, 227 },
        { "go-back-n", CLI_BOOL, &o.go_back_n, "on a NACK or timeout resend the later blocks too", 0, 0 },
        { "timeout-us", CLI_DOUBLE, &o.timeout_us, "a block's first timeout", 1, 1e7 },
        { "fault", CLI_STRING, &o.fault,
          "faults: page-fault:P (destination pages), payload-crc:P (WRITE packets), drop:P "
          "(cells at a switch), pd (target in another domain); comma-separated", 0, 0 },
        { "page-in-ns", CLI_DOUBLE, &o.page_in_ns, "time to serve a page fault", 0, 1e9 },
        { "net", CLI_STRING, &o.net,
          "run over a sim net network instead of the path model: single:N, leafspine:LxSxH, "
          "fattree:K or a topology file (hosts 0..senders take part)", 0, 0 },
        { "fc", CLI_STRING, &o.fc, "with --net: voq (per-VOQ ON/OFF), credit (InfiniBand "
          "credits per virtual lane) or link (the lanes' only)", 0, 0 },
        { "vls", CLI_UINT, &o.vls,
          "with --fc credit: virtual lanes; a host's traffic goes on VL host mod vls", 1, 15 },
        { "credit-cells", CLI_UINT, &o.credit_cells,
          "with --fc credit: each receiver's buffer per VL, in cells (0: the 1.5-RTT rule)",
          0, 409 },
        { "lanes", CLI_UINT, &o.lanes,
          "with --net: lanes per link (2 to 16: bonded links, as sim net --lanes)", 1, 16 },
        { "group-lanes", CLI_UINT, &o.group_lanes,
          "with --net: lanes per group of a bonded link (0: all, spatial; 1: temporal)", 0,
          16 },
        { "ber", CLI_DOUBLE, &o.ber, "with --net: every link's bit error rate, below 1e-3", 0, 1e-3 },
        { "max-memory-gb", CLI_DOUBLE, &o.max_memory_gb,
          "with --net: refuse a network whose memory, estimated before anything is "
          "allocated, is above this many GB (0: no limit) (docs/netsim.md)", 0, 1e6 },
        { "victim", CLI_FLAG, &o.victim,
          "with --net: host 1 also writes to host senders+1 all through the run", 0, 0 },
        { "max-s", CLI_DOUBLE, &o.max_s, "give up after this much simulated time, s", 1e-6, 1e4 },
        { "seed", CLI_UINT, &o.seed, "run seed", 0, 0 },
        { "json", CLI_FLAG, &o.json, "one JSON object per run", 0, 0 },
        { "csv", CLI_FLAG, &o.csv, "CSV: a header and one line per run", 0, 0 },
        CLI_END
    };
    int rc = cli_parse(argc, argv, opts, "[options]",
                       "Runs the RDMA engine (docs/rdma.md) between hosts over a RIFL Layer 2 "
                       "path: senders post transfers to host 0, --flows at a time, each checked "
                       "byte for byte; prints the throughput against what the route can carry.",
                       NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (strcmp(o.op, "write") && strcmp(o.op, "read") && strcmp(o.op, "send"))
        return cli_fail(opts, "op", "'%s' is not an operation; give write, read or send", o.op);
    if (strcmp(o.mapping, "bundle") && strcmp(o.mapping, "cell") && strcmp(o.mapping, "compact"))
        return cli_fail(opts, "mapping", "'%s' is not a mapping; give bundle, cell or compact",
                        o.mapping);
    if (cli_frame_width(opts, "frame-bits", o.frame_bits))
        return 2;
    if (o.json && o.csv)
        return cli_fail(opts, "json,csv", "choose one output format");
    if (strcmp(o.fc, "voq") && strcmp(o.fc, "link") && strcmp(o.fc, "credit"))
        return cli_fail(opts, "fc", "'%s' is not a flow control; give voq, credit or link",
                        o.fc);
    if (strcmp(o.fc, "credit"))
        for (const char *const *k = (const char *const[]){ "vls", "credit-cells", NULL }; *k; k++)
            if (cli_unused(opts, *k, "without --fc credit (virtual lanes and their credit are "
                                     "for credit flow control)"))
                return 2;
    rifl_topology *topo = NULL;
    if (*o.net) {
        static const char *const path_only[] = { "hops", "link-ns", "switch-ns" };
        for (size_t i = 0; i < sizeof path_only / sizeof *path_only; i++)
            if (cli_unused(opts, path_only[i], "with --net: the topology and sim net's link and "
                                               "switch delays give the path"))
                return 2;
        if (o.link_gbps < 1)
            return cli_fail(opts, "link-gbps", "%g Gbit/s: with --net a link runs at 1 to "
                            "10000 Gbit/s (the path model goes lower)", o.link_gbps);
        if (cli_load_topology_as(opts, "net", o.net, &topo))
            return 2;
        static const char *const per_link[] = { "lanes", "ber" };
        bool unused = cli_group_lanes_unused(opts, topo, o.lanes);
        for (size_t i = 0; i < sizeof per_link / sizeof *per_link && !unused; i++)
            unused = cli_topo_gives_unused(opts, topo, per_link[i]);
        if (unused) {
            rifl_topo_free(topo);
            return 2;
        }
        o.topo = topo;
    } else {
        static const char *const net_only[] = { "fc", "ber", "victim", "lanes", "group-lanes",
                                                "max-memory-gb" };
        for (size_t i = 0; i < sizeof net_only / sizeof *net_only; i++)
            if (cli_unused(opts, net_only[i], "without --net (the path model has no lanes or "
                                              "shared switch)"))
                return 2;
    }
    int status = run_all(opts, &o);
    rifl_topo_free(topo);
    return status;
}

static int run_all(const struct cli_opt *opts, struct opts *o)
{
    int rc;
    rifl_rdmasim_config c;
    if (build_cfg(o, &c, false))
        return 2;
    double sizes[64];
    int nsizes = 1;
    sizes[0] = (double)c.size;
    if (*o->sizes) {
        if (cli_is_set(opts, "size"))
            return cli_fail(opts, "size,sizes", "--sizes runs each size it lists, so --size "
                            "would have no effect: give one of them");
        nsizes = 0;
        const char *p = o->sizes;
        while (*p) {
            char tok[64];
            size_t n = strcspn(p, ",");
            uint64_t v;
            if (n == 0 || n >= sizeof tok || nsizes == 64 || (p[n] == ',' && !p[n + 1]))
                return cli_fail(opts, "sizes", "give up to 64 sizes separated by commas");
            memcpy(tok, p, n);
            tok[n] = '\0';
            if (cli_parse_bytes(tok, &v) || v < 1 || v > (1u << 30))
                return cli_fail(opts, "sizes", "'%s' is not a size from 1 byte to 1 GiB", tok);
            sizes[nsizes++] = (double)v;
            p += n + (p[n] == ',');
        }
    }
    if (o->csv)
        printf("op,size,flows,senders,hops,paths,link_gbps,throughput_gbps,capacity_gbps,ratio,"
               "verified,completions,failed,retransmitted_blocks,nacks,timeouts,latency_us_mean\n");
    /* a run estimated above a minute gets a warning before it starts: the
     * bytes that cross host 0's link (every sender's --bytes, or what the
     * link carries in --max-s) at about 1e8 a second, half the slowest rate
     * measured on the project's machines */
    double moved = (double)c.bytes * c.senders, most = o->max_s * o->link_gbps * 1e9 / 8;
    double secs = (moved < most ? moved : most) * nsizes / 1e8;
    if (secs > 60) {
        char t[32];
        cli_format_duration(t, sizeof t, secs);
        fprintf(stderr, "warning: this run is estimated to take about %s (%.3g bytes to host 0%s "
                "at about 1e8 a second); fewer --bytes or a shorter --max-s runs faster\n", t,
                moved < most ? moved : most, nsizes > 1 ? " per size" : "");
    }
    int status = 0;
    for (int i = 0; i < nsizes; i++) {
        c.size = (uint64_t)sizes[i];
        char msg[1024] = "";
        if (rifl_rdmasim_check(&c, msg, sizeof msg) != RIFL_OK) {
            if (*o->sizes) {
                fprintf(stderr, "error: option --sizes (%llu): %s\n",
                        (unsigned long long)c.size, msg);
                return 2;
            }
            return cli_blame(opts, config_ok, o, msg);
        }
        rifl_rdmasim_result r;
        if (nsizes > 1 && !o->json && !o->csv)
            cli_progress("sim rdma", (double)i / nsizes, NULL, false);
        rc = rifl_rdmasim_run(&c, &r, msg, sizeof msg);
        if (rc) {
            fprintf(stderr, "error: %s\n", msg[0] ? msg : rifl_strerror(rc));
            return rc == RIFL_ERR_CONFIG ? 2 : 1; /* a setting the network refused */
        }
        if (o->json) {
            json_result(stdout, &c, o->op, o->net, &r);
        } else if (o->csv) {
            printf("%s,%llu,%u,%u,%u,%u,%g,%.6g,%.6g,%.6g,%s,%llu,%llu,%llu,%llu,%llu,%.6g\n", o->op,
                   (unsigned long long)c.size, c.flows, c.senders, c.hops, c.paths, c.link_gbps,
                   r.throughput_gbps, r.capacity_gbps, r.ratio, r.verified ? "true" : "false",
                   (unsigned long long)r.transfers, (unsigned long long)r.failed,
                   (unsigned long long)r.retransmitted_blocks, (unsigned long long)r.nacks,
                   (unsigned long long)r.timeouts, r.latency_ns_mean / 1e3);
        } else {
            summary(&c, o->op, o->net, &r);
        }
        fflush(stdout);
        /* wrong bytes or a run that could not finish is an error; transfers
         * failed by an injected protection fault are what was asked */
        if (!r.verified || (r.failed && !c.wrong_pd))
            status = 1;
    }
    if (nsizes > 1 && !o->json && !o->csv)
        cli_progress_done(false);
    return status;
}

const struct rifl_command rifl_cmd_sim_rdma = {
    "sim rdma", "the RDMA engine between hosts over a RIFL path (simulation)", run
};

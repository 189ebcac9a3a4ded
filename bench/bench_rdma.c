/* `rifl bench rdma`: how close the RDMA engine comes to what a route can
 * carry (docs/rdma.md, capacity_gbps), for writes and reads of 16 KB and
 * more at 10 and 100 Gbit/s, every byte checked; and how fast the
 * simulator runs (simulated payload per second of run time). */
#include <stdio.h>
#include <time.h>

#include "cli.h"
#include "rifl/sim/rdmasim.h"

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int run(int argc, char **argv)
{
    uint64_t bytes = 32000000, seed = 1;
    bool json = false;
    const struct cli_opt table[] = {
        { "bytes", CLI_BYTES, &bytes, "payload per run", 1000000, 1e12 },
        { "seed", CLI_UINT, &seed, "random seed", 0, 18446744073709551615.0 },
        { "json", CLI_FLAG, &json, "one JSON object per run", 0, 0 },
        CLI_END
    };
    int rc = cli_parse(argc, argv, table, "[options]",
                       "Throughput of `rifl sim rdma` (one sender, 1 hop, 32 transfers\n"
                       "outstanding) as a share of the route's capacity, writes and reads of\n"
                       "16 KB, 64 KB and 1 MB at 10 and 100 Gbit/s; the target is 0.97 from 16 KB.",
                       NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : 2;
    static const uint64_t sizes[] = { 16384, 65536, 1048576 };
    static const double rates[] = { 10, 100 };
    int status = 0;
    double worst = 1;
    if (!json)
        printf("%-6s %5s %9s %12s %12s %8s %9s %14s\n", "op", "Gbps", "size", "Gbit/s",
               "capacity", "ratio", "verified", "sim MB/s run");
    for (unsigned op = 0; op < 2; op++)
        for (unsigned ri = 0; ri < 2; ri++)
            for (unsigned si = 0; si < 3; si++) {
                rifl_rdmasim_config c = rifl_rdmasim_default_config;
                c.op = op ? RIFL_RDMASIM_READ : RIFL_RDMASIM_WRITE;
                c.size = sizes[si];
                c.bytes = bytes;
                c.link_gbps = rates[ri];
                c.seed = seed;
                rifl_rdmasim_result r;
                char msg[200] = "";
                double t0 = seconds();
                if (rifl_rdmasim_run(&c, &r, msg, sizeof msg) != RIFL_OK) {
                    fprintf(stderr, "error: %s\n", msg);
                    return 1;
                }
                double wall = seconds() - t0;
                if (!r.verified)
                    status = 1;
                if (r.ratio < worst)
                    worst = r.ratio;
                const char *name = op ? "read" : "write";
                if (json)
                    printf("{\"op\": \"%s\", \"link_gbps\": %g, \"size\": %llu, "
                           "\"throughput_gbps\": %.6g, \"capacity_gbps\": %.6g, \"ratio\": %.6g, "
                           "\"verified\": %s, \"wall_s\": %.4g, \"sim_mb_per_s\": %.6g}\n",
                           name, c.link_gbps, (unsigned long long)c.size, r.throughput_gbps,
                           r.capacity_gbps, r.ratio, r.verified ? "true" : "false", wall,
                           (double)r.bytes / 1e6 / wall);
                else
                    printf("%-6s %5g %9llu %12.4f %12.4f %8.4f %9s %14.1f\n", name, c.link_gbps,
                           (unsigned long long)c.size, r.throughput_gbps, r.capacity_gbps, r.ratio,
                           r.verified ? "yes" : "NO", (double)r.bytes / 1e6 / wall);
                fflush(stdout);
            }
    /* the compact mapping against the spec's bundles, 1 MB writes at 100 Gbit/s */
    double gbps[2];
    for (unsigned m = 0; m < 2; m++) {
        rifl_rdmasim_config c = rifl_rdmasim_default_config;
        c.size = 1048576;
        c.bytes = bytes;
        c.link_gbps = 100;
        c.seed = seed;
        c.mapping = m ? RIFL_RDMA_MAP_COMPACT : RIFL_RDMA_MAP_BUNDLE;
        rifl_rdmasim_result r;
        char msg[200] = "";
        if (rifl_rdmasim_run(&c, &r, msg, sizeof msg) != RIFL_OK) {
            fprintf(stderr, "error: %s\n", msg);
            return 1;
        }
        if (!r.verified)
            status = 1;
        gbps[m] = r.throughput_gbps;
    }
    if (json)
        printf("{\"compare\": \"compact mapping vs bundles\", \"size\": 1048576, \"link_gbps\": 100, "
               "\"bundle_gbps\": %.6g, \"compact_gbps\": %.6g, \"gain\": %.6g}\n",
               gbps[0], gbps[1], gbps[1] / gbps[0]);
    else
        printf("lowest ratio %.4f (target 0.97)\n"
               "compact mapping, 1 MB writes at 100 Gbit/s: %.4f Gbit/s against %.4f with the "
               "spec's bundles (x%.4f)\n",
               worst, gbps[1], gbps[0], gbps[1] / gbps[0]);
    return status;
}

const struct rifl_command rifl_cmd_bench_rdma = {
    "bench rdma", "RDMA engine throughput against the route's capacity (simulation)", run
};

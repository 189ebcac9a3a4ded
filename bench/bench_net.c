/* `rifl bench net`: simulation speed of the network simulator on
 * leafspine:8x8x8 (64 hosts, 8 leaves, 8 spines, 128 links) at 70% load and
 * BER 1e-9: lane slots and cell hops per second, and seconds per simulated
 * millisecond. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "rifl/sim/netsim.h"

static int run(int argc, char **argv)
{
    double us = 200, load = 0.7, ber = 1e-9;
    uint64_t seed = 1;
    const char *topology = "leafspine:8x8x8";
    bool json = false;
    const struct cli_opt table[] = {
        { "us", CLI_DOUBLE, &us, "simulated microseconds to time", 1, 1e7 },
        { "topology", CLI_STRING, &topology, "the network", 0, 0 },
        { "load", CLI_DOUBLE, &load, "offered load per host", 0.001, 1 },
        { "ber", CLI_DOUBLE, &ber, "bit error rate of every link", 0, 1e-4 },
        { "seed", CLI_UINT, &seed, "random seed", 0, 18446744073709551615.0 },
        { "json", CLI_FLAG, &json, "JSON output", 0, 0 },
        CLI_END
    };
    int rc = cli_parse(argc, argv, table, "[options]",
                       "Speed of `rifl sim net`: lane slots (two lanes per link, every frame\n"
                       "slot) and cell hops (cells switched) per second of run time.",
                       NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : 2;
    rifl_topology *topo = NULL;
    if (cli_load_topology(table, topology, &topo))
        return 2;
    rifl_net_config c = rifl_net_default_config;
    c.topo = topo;
    c.load = load;
    c.ber = ber;
    c.seed = seed;
    c.warmup_ns = 0;
    c.window_ns = us * 1000;
    c.drain_ns = 0;
    rifl_net *n = NULL;
    char err[512];
    if (rifl_net_create(&c, &n, err, sizeof err) != RIFL_OK) {
        fprintf(stderr, "error: %s\n", err);
        rifl_topo_free(topo);
        return 2;
    }
    double t0 = cli_now();
    while ((rc = rifl_net_run(n, 100000)) == 0)
        ;
    double dt = cli_now() - t0;
    rifl_net_result r;
    int grc = rifl_net_result_get(n, &r);
    rifl_net_free(n);
    rifl_topo_free(topo);
    if (rc < 0 || grc != RIFL_OK) {
        fprintf(stderr, "error: the run failed (%s)\n", rifl_strerror(rc < 0 ? rc : grc));
        return 1;
    }
    double lane_rate = (double)r.lane_slots / dt, hop_rate = (double)r.cell_hops / dt;
    double s_per_ms = dt / (r.sim_ns / 1e6);
    if (json)
        printf("{\"topology\": \"%s\", \"load\": %g, \"ber\": %g, \"sim_us\": %.6g, "
               "\"seconds\": %.4f, \"lane_slots_per_s\": %.0f, \"cell_hops_per_s\": %.0f, "
               "\"seconds_per_sim_ms\": %.4g, \"seed\": %llu}\n",
               topology, load, ber, r.sim_ns / 1000, dt, lane_rate, hop_rate, s_per_ms,
               (unsigned long long)seed);
    else
        printf("sim net %s load %g BER %g: %.3g lane slots/s, %.3g cell hops/s, %.2f s per "
               "simulated ms (%.0f us in %.2f s, seed %llu)\n",
               topology, load, ber, lane_rate, hop_rate, s_per_ms, r.sim_ns / 1000, dt,
               (unsigned long long)seed);
    rifl_net_result_free(&r);
    return 0;
}

const struct rifl_command rifl_cmd_bench_net = {
    "bench net", "network simulator speed: lane slots and cell hops per second", run
};

/* A seeded link simulation through librifl-sim: the paper's reference link
 * at a bit error rate of 1e-6 in each direction, checked for loss.
 * Build: cc link_sim.c $(pkg-config --cflags --libs rifl-sim) */
#include <stdio.h>

#include <rifl/sim/linksim.h>

int main(void)
{
    rifl_linksim_config cfg;
    rifl_linksim_defaults(&cfg);  /* reference link, 1..8192-byte packets */
    cfg.ber[0] = cfg.ber[1] = 1e-6;
    cfg.bytes = 1000000;          /* per direction */
    cfg.seed = 7;                 /* the same seed gives the same run */

    rifl_linksim_result res;
    char msg[256];
    if (rifl_linksim_run(&cfg, &res, msg, sizeof msg) != RIFL_OK) {
        fprintf(stderr, "simulation refused: %s\n", msg);
        return 1;
    }
    printf("seed %llu: %llu slots, goodput %.2f Gbit/s, %llu replay cycles, lossless: %s\n",
           (unsigned long long)res.seed, (unsigned long long)res.slots, res.goodput_gbps,
           (unsigned long long)(res.lane[0].tx_replay_cycles + res.lane[1].tx_replay_cycles),
           res.lossless ? "yes" : "no");
    int ok = res.lossless && res.complete;
    rifl_linksim_result_free(&res);
    return ok ? 0 : 1;
}

/* `rifl demo`: two lanes back to back over a 10 m cable at the paper's
 * reference settings, random packets both ways with random bit errors, and
 * a lossless check of every byte. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rifl/lane.h"
#include "rifl/sim/linksim.h"

struct demo_progress {
    uint64_t limit, drain;
};

static void show_progress(void *ctx, double fraction, uint64_t t)
{
    const struct demo_progress *p = ctx;
    (void)fraction;
    if (t < p->limit)
        cli_progress("running", (double)t / (double)p->limit, NULL, false);
    else
        cli_progress("draining", p->drain ? (double)(t - p->limit) / (double)p->drain : 1.0, NULL,
                     false);
}

static int run(int argc, char **argv)
{
    double ber = 1e-7, cable = 10.0;
    uint64_t slots = 4000000, seed = 1, frame_width = 256, max_len = 9000, drain = 10000000;
    bool json = false;
    struct cli_opt opts[] = {
        { "ber", CLI_DOUBLE, &ber, "bit error rate, both directions, while --slots last", 0, 0.5 },
        { "slots", CLI_UINT, &slots, "frame slots with errors and new packets (then the link drains "
          "without errors)", 1, 1e12 },
        { "drain", CLI_UINT, &drain, "frame slots the link gets after --slots to deliver what is "
          "queued and in flight", 0, 1e12 },
        { "seed", CLI_UINT, &seed, "seed for traffic and errors", 0, 18446744073709551615.0 },
        { "cable", CLI_DOUBLE, &cable, "cable length in metres", 0, 1000 },
        { "frame-width", CLI_UINT, &frame_width, "frame width in bits: 64, 128, 256, 512, 1024 or 2048",
          64, 2048 },
        { "max-packet", CLI_UINT, &max_len, "largest packet in bytes (sizes uniform from 1)", 1,
          1 << 20 },
        { "json", CLI_FLAG, &json, "print the result as one JSON object", 0, 0 },
        CLI_END,
    };
    int rc = cli_parse(argc, argv, opts, "[options]",
                       "Runs two RIFL lanes back to back over an in-memory cable (112 Gbit/s,\n"
                       "256-bit frames, 10 m at 5 ns/m, 80 ns transceivers), pushes random\n"
                       "packets of 1 to 9000 bytes both ways through random bit errors for\n"
                       "--slots frame slots, then lets the link drain without errors, and\n"
                       "checks that every byte arrives once, in order, unchanged.  Exits 1\n"
                       "when anything was lost or a direction never delivered.",
                       NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (cli_frame_width(opts, "frame-width", frame_width))
        return 2;

    /* the link: the reference lane on this cable, random packets both ways
     * handed over in parts, errors and new packets for --slots slots, then
     * the drain (the run's own checks: rifl/sim/linksim.h) */
    rifl_linksim_config lc;
    rifl_linksim_defaults(&lc);
    lc.lane.frame_bits = (unsigned)frame_width;
    lc.lane.link.cable_m = cable;
    lc.lane.fid_bits = rifl_lane_min_fid_bits(&lc.lane.link, lc.lane.frame_bits,
                                              lc.lane.pipeline_frames);
    if (lc.lane.fid_bits < 8)
        lc.lane.fid_bits = 8;
    if (lc.lane.fid_bits > RIFL_FID_MAX_BITS) /* the check explains the link is too long */
        lc.lane.fid_bits = RIFL_FID_MAX_BITS;
    lc.lane.tx_queue_frames = 4096;
    lc.ber[0] = lc.ber[1] = ber;
    lc.bytes = 0;
    lc.min_len = 1;
    lc.max_len = max_len;
    lc.fast = false;
    lc.offer = RIFL_LINKSIM_PARTS;
    lc.users_first = true;
    lc.offer_slots = slots;
    lc.max_slots = slots + drain;
    lc.seed = seed;
    lc.seeds_given = true;
    for (int i = 0; i < 2; i++) {
        lc.channel_seed[i] = seed * 4 + 1 + (uint64_t)i;
        lc.stream_seed[i] = seed * 1000 + 17 + (uint64_t)i;
    }
    struct demo_progress dp = { slots, drain };
    if (!json) {
        lc.progress = show_progress;
        lc.progress_ctx = &dp;
    }
    char msg[512];
    if (rifl_linksim_check(&lc, msg, sizeof msg) != RIFL_OK)
        return cli_fail(opts, "cable,frame-width", "%s", msg);
    const rifl_lane_config *l = &lc.lane;
    unsigned delay = rifl_link_delay_frames(&l->link, l->frame_bits);
    double frame_ns = l->frame_bits / l->link.lane_rate_gbps;
    if (!json)
        printf("rifl demo: seed %" PRIu64 ", %u-bit frames, K=%u, %.0f Gbit/s, %g m cable "
               "(%u frames one way), BER %g both ways for %" PRIu64 " slots (%.2f ms), "
               "then drained without errors\n",
               seed, l->frame_bits, l->fid_bits, l->link.lane_rate_gbps, l->link.cable_m,
               delay, ber, slots, slots * frame_ns * 1e-6);

    rifl_linksim_result res;
    double t0 = cli_now();
    if (rifl_linksim_run(&lc, &res, msg, sizeof msg) != RIFL_OK) {
        if (!json)
            cli_progress_done(false);
        fprintf(stderr, "error: %s\n", msg);
        return 2;
    }
    double wall = cli_now() - t0;
    if (!json)
        cli_progress_done(false);
    uint64_t t = res.slots, limit = slots;

    /* direction i: sent by lane i, checked at the other end */
    bool lossless = res.lossless, clean = res.lossless, started[2];
    uint64_t delivered[2], undelivered = 0, npkt[2], sent[2];
    int64_t startup[2];
    for (int i = 0; i < 2; i++) {
        const rifl_validator_stats *v = &res.val[i];
        delivered[i] = v->bytes_ok;
        npkt[i] = res.lane[i].tx_packets;
        sent[i] = res.lane[i].tx_bytes;
        startup[i] = res.first_read[i];
        started[i] = startup[i] >= 0;
        if (v->packets_ok != npkt[i] || v->bytes_ok != sent[i] || res.held_bytes[i])
            lossless = false;
        if (sent[i] > v->bytes_ok)
            undelivered += sent[i] - v->bytes_ok;
    }
    /* goodput over the slots actually simulated, errors and drain */
    double sim_s = (double)t * frame_ns * 1e-9;
    const rifl_lane_stats *a = &res.lane[0], *b = &res.lane[1];
    if (json) {
        printf("{\"seed\": %" PRIu64 ", \"ber\": %g, \"slots\": %" PRIu64 ", \"error_slots\": %" PRIu64
               ", \"frame_width\": %u, \"fid_bits\": %u, \"delay_frames\": %u, ",
               seed, ber, t, limit, l->frame_bits, l->fid_bits, res.delay_frames);
        for (int i = 0; i < 2; i++) {
            const rifl_lane_stats *s = i ? b : a;
            printf("\"%s\": {\"packets\": %" PRIu64 ", \"bytes_sent\": %" PRIu64
                   ", \"bytes_delivered\": %" PRIu64 ", \"goodput_gbps\": %.3f, ",
                   i ? "b_to_a" : "a_to_b", npkt[i], sent[i], delivered[i],
                   delivered[i] * 8.0 / sim_s / 1e9);
            if (started[i])
                printf("\"startup_slots\": %" PRId64 ", ", startup[i]);
            else
                printf("\"startup_slots\": null, ");
            printf("\"replay_cycles\": %" PRIu64 ", \"frames_replayed\": %" PRIu64
                   ", \"verify_failures_at_peer\": %" PRIu64 "}, ",
                   s->tx_replay_cycles, s->tx_replayed, (i ? a : b)->rx_verify_fail);
        }
        printf("\"lossless\": %s, \"wall_s\": %.3f}\n", lossless ? "true" : "false", wall);
    } else {
        for (int i = 0; i < 2; i++) {
            const rifl_lane_stats *s = i ? b : a;
            const rifl_phy_stats *c = &res.ch[i];
            printf("%s: %" PRIu64 " packets, %" PRIu64 " bytes sent, %" PRIu64
                   " delivered; goodput %.2f Gbit/s (line %.0f Gbit/s); %" PRIu64
                   " bit errors, %" PRIu64 " frames failed verification, %" PRIu64
                   " replay cycles (%" PRIu64 " frames replayed)\n",
                   i ? "B -> A" : "A -> B", npkt[i], sent[i], delivered[i],
                   delivered[i] * 8.0 / sim_s / 1e9, l->link.lane_rate_gbps, c->bit_errors,
                   (i ? a : b)->rx_verify_fail, s->tx_replay_cycles, s->tx_replayed);
            if (!started[i])
                printf("  %s never delivered user data\n", i ? "B -> A" : "A -> B");
            else if ((uint64_t)startup[i] >= limit)
                printf("  first user data delivered at slot %" PRId64 ", %" PRIu64
                       " slots after the errors stopped\n", startup[i], (uint64_t)startup[i] - limit);
            else
                printf("  first user data delivered at slot %" PRId64 "\n", startup[i]);
        }
        if (lossless)
            printf("lossless: yes (every byte sent was delivered once, in order, unchanged)\n");
        else if (clean)
            printf("lossless: NO (%" PRIu64 " bytes sent were not delivered when the run ended; "
                   "--drain gives the link more time)\n", undelivered);
        else
            printf("lossless: NO (bytes were lost, duplicated, reordered or corrupted)\n");
        printf("simulated %" PRIu64 " slots in %.2f s (%.1f M slots/s)\n", t, wall,
               (double)t / wall / 1e6);
    }
    rifl_linksim_result_free(&res);
    return lossless && started[0] && started[1] ? 0 : 1;
}

const struct rifl_command rifl_cmd_demo = {
    "demo", "two lanes back to back over a lossy 10 m cable, with a lossless check", run
};

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

struct demo_opts {
    double ber, cable;
    uint64_t slots, seed, frame_width, max_len, drain;
    bool json;
};

/* The link: the reference lane on this cable, random packets both ways
 * handed over in parts, errors and new packets for --slots slots, then the
 * drain (the run's own checks: rifl/sim/linksim.h). */
static void demo_config(const struct demo_opts *o, rifl_linksim_config *lc)
{
    rifl_linksim_defaults(lc);
    lc->lane.frame_bits = (unsigned)o->frame_width;
    lc->lane.link.cable_m = o->cable;
    lc->lane.fid_bits = rifl_lane_min_fid_bits(&lc->lane.link, lc->lane.frame_bits,
                                               lc->lane.pipeline_frames);
    if (lc->lane.fid_bits < 8)
        lc->lane.fid_bits = 8;
    if (lc->lane.fid_bits > RIFL_FID_MAX_BITS) /* the check explains the link is too long */
        lc->lane.fid_bits = RIFL_FID_MAX_BITS;
    lc->lane.tx_queue_frames = 4096;
    lc->ber[0] = lc->ber[1] = o->ber;
    lc->bytes = 0;
    lc->min_len = 1;
    lc->max_len = o->max_len;
    lc->fast = false;
    lc->offer = RIFL_LINKSIM_PARTS;
    lc->users_first = true;
    lc->offer_slots = o->slots;
    lc->max_slots = o->slots + o->drain;
    lc->seed = o->seed;
    lc->seeds_given = true;
    for (int i = 0; i < 2; i++) {
        lc->channel_seed[i] = o->seed * 4 + 1 + (uint64_t)i;
        lc->stream_seed[i] = o->seed * 1000 + 17 + (uint64_t)i;
    }
}

/* What the run showed, direction i: sent by lane i, checked at the other
 * end. */
struct verdict {
    bool lossless, clean, started[2];
    uint64_t delivered[2], undelivered, npkt[2], sent[2];
    int64_t startup[2];
};

static void judge(const rifl_linksim_result *res, struct verdict *v)
{
    v->lossless = v->clean = res->lossless;
    v->undelivered = 0;
    for (int i = 0; i < 2; i++) {
        const rifl_validator_stats *val = &res->val[i];
        v->delivered[i] = val->bytes_ok;
        v->npkt[i] = res->lane[i].tx_packets;
        v->sent[i] = res->lane[i].tx_bytes;
        v->startup[i] = res->first_read[i];
        v->started[i] = v->startup[i] >= 0;
        if (val->packets_ok != v->npkt[i] || val->bytes_ok != v->sent[i] || res->held_bytes[i])
            v->lossless = false;
        if (v->sent[i] > val->bytes_ok)
            v->undelivered += v->sent[i] - val->bytes_ok;
    }
}

static void print_json(const struct demo_opts *o, const rifl_linksim_config *lc,
                       const rifl_linksim_result *res, const struct verdict *v, double wall)
{
    const rifl_lane_config *l = &lc->lane;
    /* goodput over the slots actually simulated, errors and drain */
    double sim_s = (double)res->slots * res->frame_ns * 1e-9;
    printf("{\"seed\": %" PRIu64 ", \"ber\": %g, \"slots\": %" PRIu64 ", \"error_slots\": %" PRIu64
           ", \"frame_width\": %u, \"fid_bits\": %u, \"delay_frames\": %u, ",
           o->seed, o->ber, res->slots, o->slots, l->frame_bits, l->fid_bits, res->delay_frames);
    for (int i = 0; i < 2; i++) {
        const rifl_lane_stats *s = &res->lane[i], *peer = &res->lane[1 - i];
        printf("\"%s\": {\"packets\": %" PRIu64 ", \"bytes_sent\": %" PRIu64
               ", \"bytes_delivered\": %" PRIu64 ", \"goodput_gbps\": %.3f, ",
               i ? "b_to_a" : "a_to_b", v->npkt[i], v->sent[i], v->delivered[i],
               v->delivered[i] * 8.0 / sim_s / 1e9);
        if (v->started[i])
            printf("\"startup_slots\": %" PRId64 ", ", v->startup[i]);
        else
            printf("\"startup_slots\": null, ");
        printf("\"replay_cycles\": %" PRIu64 ", \"frames_replayed\": %" PRIu64
               ", \"verify_failures_at_peer\": %" PRIu64 "}, ",
               s->tx_replay_cycles, s->tx_replayed, peer->rx_verify_fail);
    }
    printf("\"lossless\": %s, \"wall_s\": %.3f}\n", v->lossless ? "true" : "false", wall);
}

static void print_text(const struct demo_opts *o, const rifl_linksim_config *lc,
                       const rifl_linksim_result *res, const struct verdict *v, double wall)
{
    const rifl_lane_config *l = &lc->lane;
    double sim_s = (double)res->slots * res->frame_ns * 1e-9;
    for (int i = 0; i < 2; i++) {
        const rifl_lane_stats *s = &res->lane[i], *peer = &res->lane[1 - i];
        const rifl_phy_stats *c = &res->ch[i];
        printf("%s: %" PRIu64 " packets, %" PRIu64 " bytes sent, %" PRIu64
               " delivered; goodput %.2f Gbit/s (line %.0f Gbit/s); %" PRIu64
               " bit errors, %" PRIu64 " frames failed verification, %" PRIu64
               " replay cycles (%" PRIu64 " frames replayed)\n",
               i ? "B -> A" : "A -> B", v->npkt[i], v->sent[i], v->delivered[i],
               v->delivered[i] * 8.0 / sim_s / 1e9, l->link.lane_rate_gbps, c->bit_errors,
               peer->rx_verify_fail, s->tx_replay_cycles, s->tx_replayed);
        if (!v->started[i])
            printf("  %s never delivered user data\n", i ? "B -> A" : "A -> B");
        else if ((uint64_t)v->startup[i] >= o->slots)
            printf("  first user data delivered at slot %" PRId64 ", %" PRIu64
                   " slots after the errors stopped\n", v->startup[i],
                   (uint64_t)v->startup[i] - o->slots);
        else
            printf("  first user data delivered at slot %" PRId64 "\n", v->startup[i]);
    }
    if (v->lossless)
        printf("lossless: yes (every byte sent was delivered once, in order, unchanged)\n");
    else if (v->clean)
        printf("lossless: NO (%" PRIu64 " bytes sent were not delivered when the run ended; "
               "--drain gives the link more time)\n", v->undelivered);
    else
        printf("lossless: NO (bytes were lost, duplicated, reordered or corrupted)\n");
    printf("simulated %" PRIu64 " slots in %.2f s (%.1f M slots/s)\n", res->slots, wall,
           (double)res->slots / wall / 1e6);
}

static int run(int argc, char **argv)
{
    struct demo_opts o = { .ber = 1e-7, .cable = 10.0, .slots = 4000000, .seed = 1,
                           .frame_width = 256, .max_len = 9000, .drain = 10000000 };
    struct cli_opt opts[] = {
        { "ber", CLI_DOUBLE, &o.ber, "bit error rate, both directions, while --slots last", 0,
          0.5 },
        { "slots", CLI_UINT, &o.slots, "frame slots with errors and new packets (then the link "
          "drains without errors)", 1, 1e12 },
        { "drain", CLI_UINT, &o.drain, "frame slots the link gets after --slots to deliver what "
          "is queued and in flight", 0, 1e12 },
        { "seed", CLI_UINT, &o.seed, "seed for traffic and errors", 0, 18446744073709551615.0 },
        { "cable", CLI_DOUBLE, &o.cable, "cable length in metres", 0, 1000 },
        { "frame-width", CLI_UINT, &o.frame_width, "frame width in bits: 64, 128, 256, 512, 1024 "
          "or 2048", 64, 2048 },
        { "max-packet", CLI_UINT, &o.max_len, "largest packet in bytes (sizes uniform from 1)",
          1, 1 << 20 },
        { "json", CLI_FLAG, &o.json, "print the result as one JSON object", 0, 0 },
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
    if (cli_frame_width(opts, "frame-width", o.frame_width))
        return 2;
    rifl_linksim_config lc;
    demo_config(&o, &lc);
    struct demo_progress dp = { o.slots, o.drain };
    if (!o.json) {
        lc.progress = show_progress;
        lc.progress_ctx = &dp;
    }
    char msg[512];
    if (rifl_linksim_check(&lc, msg, sizeof msg) != RIFL_OK)
        return cli_fail(opts, "cable,frame-width", "%s", msg);
    const rifl_lane_config *l = &lc.lane;
    unsigned delay = rifl_link_delay_frames(&l->link, l->frame_bits);
    double frame_ns = l->frame_bits / l->link.lane_rate_gbps;
    if (!o.json)
        printf("rifl demo: seed %" PRIu64 ", %u-bit frames, K=%u, %.0f Gbit/s, %g m cable "
               "(%u frames one way), BER %g both ways for %" PRIu64 " slots (%.2f ms), "
               "then drained without errors\n",
               o.seed, l->frame_bits, l->fid_bits, l->link.lane_rate_gbps, l->link.cable_m,
               delay, o.ber, o.slots, o.slots * frame_ns * 1e-6);
    rifl_linksim_result res;
    double t0 = cli_now();
    rc = rifl_linksim_run(&lc, &res, msg, sizeof msg);
    double wall = cli_now() - t0;
    if (!o.json)
        cli_progress_done(false);
    if (rc != RIFL_OK) {
        fprintf(stderr, "error: %s\n", msg);
        return 2;
    }
    struct verdict v;
    judge(&res, &v);
    if (o.json)
        print_json(&o, &lc, &res, &v, wall);
    else
        print_text(&o, &lc, &res, &v, wall);
    rifl_linksim_result_free(&res);
    return v.lossless && v.started[0] && v.started[1] ? 0 : 1;
}

const struct rifl_command rifl_cmd_demo = {
    "demo", "two lanes back to back over a lossy 10 m cable, with a lossless check", run
};

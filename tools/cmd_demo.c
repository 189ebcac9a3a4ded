/* `rifl demo`: two lanes back to back over a 10 m cable at the paper's
 * reference settings, random packets both ways with random bit errors, and
 * a lossless check of every byte. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rifl/lane.h"
#include "rifl/sim/pair.h"
#include "rifl/sim/traffic.h"

struct side {
    uint64_t seed;         /* packet stream this side sends */
    uint64_t next_seq;     /* packets handed over completely */
    uint8_t *pkt;
    size_t len, off;       /* packet being handed over, bytes taken so far */
    bool pending;
    uint64_t bytes_sent;
    int64_t first_slot;    /* slot of the first user bytes this side read */
    rifl_validator val;    /* checks the stream the other side sends */
};

/* Hand the current packet (or its rest) to the lane; packets larger than
 * the transmit queue go in parts. */
static void offer(rifl_lane *l, struct side *s)
{
    size_t taken;
    if (rifl_lane_send_part(l, s->pkt + s->off, s->len - s->off, 1, &taken) != RIFL_OK)
        return;
    s->off += taken;
    s->bytes_sent += taken;
    if (s->off == s->len) {
        s->pending = false;
        s->next_seq++;
    }
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

    rifl_pair_config pc = { .lane = rifl_lane_default_config };
    pc.lane.frame_bits = (unsigned)frame_width;
    pc.lane.link.cable_m = cable;
    pc.lane.fid_bits = rifl_lane_min_fid_bits(&pc.lane.link, pc.lane.frame_bits,
                                              pc.lane.pipeline_frames);
    if (pc.lane.fid_bits < 8)
        pc.lane.fid_bits = 8;
    if (pc.lane.fid_bits > RIFL_FID_MAX_BITS) /* the check explains the link is too long */
        pc.lane.fid_bits = RIFL_FID_MAX_BITS;
    pc.lane.tx_queue_frames = 4096;
    pc.ber[0] = pc.ber[1] = ber;
    pc.seed[0] = seed * 4 + 1;
    pc.seed[1] = seed * 4 + 2;
    rifl_pair *p;
    char msg[512];
    if (rifl_pair_create(&pc, &p, msg, sizeof msg) != RIFL_OK)
        return cli_fail(opts, "cable,frame-width", "%s", msg);
    const rifl_lane_config *lc = rifl_lane_get_config(p->lane[0]);
    double frame_ns = lc->frame_bits / lc->link.lane_rate_gbps;
    if (!json)
        printf("rifl demo: seed %" PRIu64 ", %u-bit frames, K=%u, %.0f Gbit/s, %g m cable "
               "(%u frames one way), BER %g both ways for %" PRIu64 " slots (%.2f ms), "
               "then drained without errors\n",
               seed, lc->frame_bits, lc->fid_bits, lc->link.lane_rate_gbps, lc->link.cable_m,
               p->delay_frames, ber, slots, slots * frame_ns * 1e-6);

    struct side sd[2];
    for (int i = 0; i < 2; i++) {
        memset(&sd[i], 0, sizeof sd[i]);
        sd[i].seed = seed * 1000 + 17 + (uint64_t)i;
        sd[i].pkt = malloc(max_len);
        sd[i].first_slot = -1;
    }
    uint8_t *rbuf = malloc(max_len);
    int vrc = 0;
    for (int i = 0; i < 2; i++)
        vrc |= rifl_validator_init(&sd[i].val, sd[1 - i].seed, 1, max_len);
    if (!sd[0].pkt || !sd[1].pkt || !rbuf || vrc) {
        fprintf(stderr, "error: out of memory for packets of up to %" PRIu64 " bytes\n", max_len);
        for (int i = 0; i < 2; i++) {
            free(sd[i].pkt);
            rifl_validator_free(&sd[i].val);
        }
        free(rbuf);
        rifl_pair_free(p);
        return 2;
    }
    /* after the error phase the link gets --drain slots to deliver what is
     * queued and in flight */
    uint64_t t, limit = slots, hard_limit = slots + drain;
    bool sending = true;
    double t0 = cli_now();
    for (t = 0; t < hard_limit; t++) {
        if (t == limit) {
            sending = false;
            rifl_phy_channel_set_ber(p->phy[0], 0);
            rifl_phy_channel_set_ber(p->phy[1], 0);
        }
        if (!sending && sd[1].val.next_seq == sd[0].next_seq &&
            sd[0].val.next_seq == sd[1].next_seq && !sd[0].pending && !sd[1].pending)
            break;
        for (int i = 0; i < 2; i++) {
            struct side *s = &sd[i];
            if (sending && !s->pending) {
                s->len = rifl_packet_len(s->seed, s->next_seq, 1, max_len);
                rifl_packet_fill(s->seed, s->next_seq, s->pkt, s->len);
                s->off = 0;
                s->pending = true;
            }
            if (s->pending)
                offer(p->lane[i], s);
            size_t n;
            int eop;
            while (rifl_lane_read(p->lane[i], rbuf, max_len, &n, &eop) == RIFL_OK) {
                if (s->first_slot < 0)
                    s->first_slot = (int64_t)t;
                rifl_validator_feed(&s->val, rbuf, n, eop);
            }
        }
        rifl_pair_step(p, NULL);
        if ((t & 0xFFFFF) == 0 && !json)
            cli_progress(sending ? "running" : "draining",
                         sending ? (double)t / (double)limit : (double)(t - limit) / (double)drain, NULL,
                         false);
    }
    double wall = cli_now() - t0;
    if (!json)
        cli_progress_done(false);

    /* direction i -> 1-i is checked by side 1-i */
    bool lossless = true, clean = true, started[2];
    uint64_t delivered[2], undelivered = 0;
    int64_t startup[2];
    for (int i = 0; i < 2; i++) {
        const rifl_validator *v = &sd[1 - i].val;
        delivered[i] = v->st.bytes_ok;
        startup[i] = sd[1 - i].first_slot;
        started[i] = startup[i] >= 0;
        clean &= rifl_validator_clean(v);
        if (!rifl_validator_clean(v) || v->st.packets_ok != sd[i].next_seq ||
            v->st.bytes_ok != sd[i].bytes_sent || sd[i].pending)
            lossless = false;
        if (sd[i].bytes_sent > v->st.bytes_ok)
            undelivered += sd[i].bytes_sent - v->st.bytes_ok;
    }
    /* goodput over the slots actually simulated, errors and drain */
    double sim_s = (double)t * frame_ns * 1e-9;
    const rifl_lane_stats *a = rifl_lane_get_stats(p->lane[0]), *b = rifl_lane_get_stats(p->lane[1]);
    if (json) {
        printf("{\"seed\": %" PRIu64 ", \"ber\": %g, \"slots\": %" PRIu64 ", \"error_slots\": %" PRIu64
               ", \"frame_width\": %u, \"fid_bits\": %u, \"delay_frames\": %u, ",
               seed, ber, t, limit, lc->frame_bits, lc->fid_bits, p->delay_frames);
        for (int i = 0; i < 2; i++) {
            const rifl_lane_stats *s = i ? b : a;
            printf("\"%s\": {\"packets\": %" PRIu64 ", \"bytes_sent\": %" PRIu64
                   ", \"bytes_delivered\": %" PRIu64 ", \"goodput_gbps\": %.3f, ",
                   i ? "b_to_a" : "a_to_b", sd[i].next_seq, sd[i].bytes_sent, delivered[i],
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
            const rifl_phy_stats *c = rifl_phy_get_stats(p->phy[i]);
            printf("%s: %" PRIu64 " packets, %" PRIu64 " bytes sent, %" PRIu64
                   " delivered; goodput %.2f Gbit/s (line %.0f Gbit/s); %" PRIu64
                   " bit errors, %" PRIu64 " frames failed verification, %" PRIu64
                   " replay cycles (%" PRIu64 " frames replayed)\n",
                   i ? "B -> A" : "A -> B", sd[i].next_seq, sd[i].bytes_sent, delivered[i],
                   delivered[i] * 8.0 / sim_s / 1e9, lc->link.lane_rate_gbps, c->bit_errors,
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
    for (int i = 0; i < 2; i++) {
        free(sd[i].pkt);
        rifl_validator_free(&sd[i].val);
    }
    free(rbuf);
    rifl_pair_free(p);
    return lossless && started[0] && started[1] ? 0 : 1;
}

const struct rifl_command rifl_cmd_demo = {
    "demo", "two lanes back to back over a lossy 10 m cable, with a lossless check", run
};

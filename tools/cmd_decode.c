/* `rifl decode`: take a file of wire frames apart, frame by frame, as a
 * freshly reset receiver that is aligned and up from the first line would. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rifl/lane.h"
#include "rifl/text.h"

static const char *key_name(uint16_t key)
{
    switch (key) {
    case RIFL_KEY_IDLE: return "IDLE";
    case RIFL_KEY_PAUSE: return "PAUSE";
    case RIFL_KEY_RETRANSMIT: return "RETRANSMIT";
    default: return "unknown";
    }
}

static int run(int argc, char **argv)
{
    uint64_t frame_width = 256, fid_width = 8;
    bool json = false, quiet = false, payload = false;
    struct cli_opt opts[] = {
        { "frame-width", CLI_UINT, &frame_width, "frame width in bits: 64, 128, 256, 512, 1024 "
          "or 2048", 64, 2048 },
        { "frame-id-width", CLI_UINT, &fid_width, "frame-ID width K in bits", 5, 12 },
        { "json", CLI_FLAG, &json, "one JSON object per frame, then a summary object", 0, 0 },
        { "quiet", CLI_FLAG, &quiet, "print the summary only (not with --json or --payload)",
          0, 0 },
        { "payload", CLI_FLAG, &payload, "also print each frame's delivered bytes in hex", 0, 0 },
        CLI_END,
    };
    char *pos[1];
    int npos = 0;
    int rc = cli_parse(argc, argv, opts, "[options] FILE|-",
                       "Reads wire frames (one hex frame per line, first bit sent = most\n"
                       "significant; '#' lines and blank lines skipped; when a line has several\n"
                       "fields the last one is the frame, so encode.vectors files work too) and\n"
                       "shows each frame's kind, frame ID, key or META, payload length,\n"
                       "verification result and what a receiver, reset and aligned at the first\n"
                       "line, delivers.",
                       pos, 1, &npos);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (quiet && json)
        return cli_fail(opts, "quiet,json", "choose one: --quiet prints the text summary only, "
                        "--json every frame and a summary object");
    if (quiet && payload)
        return cli_fail(opts, "quiet,payload", "--payload adds bytes to the per-frame lines "
                        "that --quiet leaves out; drop one of them");
    if (npos != 1) {
        fprintf(stderr, "error: give the frame file to decode (or - for standard input); "
                        "see rifl decode --help\n");
        return 2;
    }
    if (cli_frame_width(opts, "frame-width", frame_width))
        return 2;
    size_t len;
    char *text = cli_read_file(pos[0], &len);
    if (!text)
        return 2;
    unsigned fb = (unsigned)frame_width / 8, pb = fb - 2;
    rifl_frame_reader rd;
    uint8_t frame[RIFL_FRAME_MAX_BYTES];
    char err[256];
    int r;
    /* the whole file is read once before anything is printed: a bad line
     * gives the error alone */
    rifl_frame_reader_init(&rd, text, len, fb);
    while ((r = rifl_frame_reader_next(&rd, frame, err, sizeof err)) == 1)
        ;
    if (r < 0) {
        fprintf(stderr, "error: %s: %s\n", pos[0], err);
        free(text);
        return 2;
    }

    /* a receiver only: the link sizing does not matter for decoding */
    rifl_lane_config cfg = rifl_lane_default_config;
    cfg.frame_bits = (unsigned)frame_width;
    cfg.fid_bits = (unsigned)fid_width;
    cfg.link.cable_m = 0;
    cfg.link.transceiver_ns = 0;
    cfg.pipeline_frames = 0;
    cfg.rx_lock_frames = 0;
    rifl_lane *lane;
    char msg[512];
    if (rifl_lane_create(&cfg, &lane, msg, sizeof msg) != RIFL_OK) {
        fprintf(stderr, "error: %s\n", msg);
        free(text);
        return 2;
    }
    rifl_frame_reader_init(&rd, text, len, fb);
    uint64_t frames = 0, delivered = 0, kinds[RIFL_KIND_COUNT] = { 0 };
    if (!json && !quiet)
        printf("%8s  %-8s %5s %6s  %-12s %4s  %-8s %s\n", "index", "kind", "id", "expect",
               "key/meta", "len", "verify", "receiver");
    while ((r = rifl_frame_reader_next(&rd, frame, err, sizeof err)) == 1) {
        unsigned expect = rifl_lane_expected_id(lane);
        rifl_frame_info fi;
        int res = rifl_lane_rx(lane, frames, frame, &fi); /* a frame per slot */
        bool verified = res != RIFL_RX_VERIFY_FAIL;
        /* delivered = handed to the user: new user data; fillers are
         * dropped and flow-control frames applied, not delivered */
        bool deliv = res == RIFL_RX_DELIVERED && fi.kind == RIFL_KIND_DATA;
        bool applied = res == RIFL_RX_DELIVERED && fi.kind != RIFL_KIND_DATA;
        uint8_t buf[RIFL_PAYLOAD_MAX_BYTES];
        size_t n = 0, got;
        int eop = 0;
        while (rifl_lane_read(lane, buf + n, pb - n, &got, &eop) == RIFL_OK && n < pb) {
            n += got;
            if (eop || n == pb)
                break;
        }
        if (deliv)
            delivered++;
        kinds[fi.kind]++;
        const char *kind = rifl_frame_kind_name(fi.kind);
        if (json) {
            printf("{\"index\": %llu, \"kind\": \"%s\", \"frame_id\": %u, \"expected_id\": %u, ",
                   (unsigned long long)frames, kind, fi.id, expect);
            if (fi.kind == RIFL_KIND_CONTROL)
                printf("\"key\": %u, \"key_name\": \"%s\", ", fi.key, key_name(fi.key));
            printf("\"meta\": %u, \"payload_len\": %u, \"verified\": %s, \"delivered\": %s, "
                   "\"result\": \"%s\"", fi.meta, fi.payload_len, verified ? "true" : "false",
                   deliv ? "true" : "false", applied ? "applied" : rifl_rx_result_name(res));
            if (fi.kind == RIFL_KIND_DATA)
                printf(", \"eop\": %s", fi.eop ? "true" : "false");
            if (payload && deliv && n) {
                char hex[2 * RIFL_PAYLOAD_MAX_BYTES + 1];
                rifl_hex_encode(buf, n, hex);
                printf(", \"bytes\": \"%s\"", hex);
            }
            printf("}\n");
        } else if (!quiet) {
            char km[32];
            if (fi.kind == RIFL_KIND_CONTROL)
                snprintf(km, sizeof km, "%s", key_name(fi.key));
            else
                snprintf(km, sizeof km, "META=%u%u%s", fi.meta >> 1, fi.meta & 1,
                         fi.kind == RIFL_KIND_DATA && fi.eop ? " EOP" : "");
            printf("%8llu  %-8s %5u %6u  %-12s %4u  %-8s %s", (unsigned long long)frames, kind,
                   fi.id, expect, km, fi.payload_len, verified ? "ok" : "FAIL",
                   applied ? "applied" : rifl_rx_result_name(res));
            if (payload && deliv && n) {
                char hex[2 * RIFL_PAYLOAD_MAX_BYTES + 1];
                rifl_hex_encode(buf, n, hex);
                printf("  %s", hex);
            }
            putchar('\n');
        }
        frames++;
    }
    int status = 0;
    if (r < 0) {
        fprintf(stderr, "error: %s: %s\n", pos[0], err);
        status = 2;
    }
    const rifl_lane_stats *st = rifl_lane_get_stats(lane);
    if (json) {
        printf("{\"summary\": true, \"frames\": %llu, \"verify_failures\": %llu, "
               "\"delivered_frames\": %llu, \"delivered_bytes\": %llu, \"fc_on_applied\": %llu, "
               "\"fc_off_applied\": %llu, \"frame_width\": %llu, \"frame_id_width\": %llu",
               (unsigned long long)frames, (unsigned long long)st->rx_verify_fail,
               (unsigned long long)delivered, (unsigned long long)st->rx_bytes,
               (unsigned long long)st->rx_delivered[RIFL_KIND_FC_ON],
               (unsigned long long)st->rx_delivered[RIFL_KIND_FC_OFF], (unsigned long long)frame_width,
               (unsigned long long)fid_width);
        for (int k = 0; k < RIFL_KIND_COUNT; k++)
            printf(", \"%s\": %llu", rifl_frame_kind_name((rifl_frame_kind)k),
                   (unsigned long long)kinds[k]);
        printf("}\n");
    } else {
        printf("\n%llu frames (%u-bit, K=%llu): %llu failed verification, %llu user data "
               "frames delivered (%llu bytes), flow control ON/OFF applied %llu/%llu\n",
               (unsigned long long)frames, (unsigned)frame_width, (unsigned long long)fid_width,
               (unsigned long long)st->rx_verify_fail, (unsigned long long)delivered,
               (unsigned long long)st->rx_bytes,
               (unsigned long long)st->rx_delivered[RIFL_KIND_FC_ON],
               (unsigned long long)st->rx_delivered[RIFL_KIND_FC_OFF]);
        printf("kinds (as decoded, failed frames included):");
        for (int k = 0; k < RIFL_KIND_COUNT; k++)
            printf(" %s %llu", rifl_frame_kind_name((rifl_frame_kind)k),
                   (unsigned long long)kinds[k]);
        printf("\ncontrol keys: IDLE %llu, PAUSE %llu, RETRANSMIT %llu, other %llu\n",
               (unsigned long long)st->rx_keys[RIFL_KEYIDX_IDLE], (unsigned long long)st->rx_keys[RIFL_KEYIDX_PAUSE],
               (unsigned long long)st->rx_keys[RIFL_KEYIDX_RETRANSMIT], (unsigned long long)st->rx_unknown_key);
    }
    rifl_lane_free(lane);
    free(text);
    return status;
}

const struct rifl_command rifl_cmd_decode = {
    "decode", "take a file of wire frames apart, as a receiver would", run
};

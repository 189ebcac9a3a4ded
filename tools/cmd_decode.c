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

struct dopts {
    uint64_t frame_width, fid_width;
    bool json, quiet, payload;
    const char *file;
};

/* The options and the file name; 0 to go on, else the exit status + 1. */
static int decode_options(int argc, char **argv, struct dopts *d)
{
    *d = (struct dopts){ .frame_width = 256, .fid_width = 8 };
    struct cli_opt opts[] = {
        { "frame-width", CLI_UINT, &d->frame_width, "frame width in bits: 64, 128, 256, 512, "
          "1024 or 2048", 64, 2048 },
        { "frame-id-width", CLI_UINT, &d->fid_width, "frame-ID width K in bits", 5, 12 },
        { "json", CLI_FLAG, &d->json, "one JSON object per frame, then a summary object", 0, 0 },
        { "quiet", CLI_FLAG, &d->quiet, "print the summary only (not with --json or --payload)",
          0, 0 },
        { "payload", CLI_FLAG, &d->payload, "also print each frame's delivered bytes in hex", 0,
          0 },
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
        return rc == 1 ? 1 : 3;
    if (d->quiet && d->json)
        return 1 + cli_fail(opts, "quiet,json", "choose one: --quiet prints the text summary "
                            "only, --json every frame and a summary object");
    if (d->quiet && d->payload)
        return 1 + cli_fail(opts, "quiet,payload", "--payload adds bytes to the per-frame lines "
                            "that --quiet leaves out; drop one of them");
    if (npos != 1) {
        fprintf(stderr, "error: give the frame file to decode (or - for standard input); "
                        "see rifl decode --help\n");
        return 3;
    }
    if (cli_frame_width(opts, "frame-width", d->frame_width))
        return 3;
    d->file = pos[0];
    return 0;
}

/* The file, read and checked whole before anything is printed (a bad line
 * gives the error alone); NULL after the message. */
static char *load_frames(const struct dopts *d, size_t *len)
{
    char *text = cli_read_file(d->file, len);
    if (!text)
        return NULL;
    rifl_frame_reader rd;
    uint8_t frame[RIFL_FRAME_MAX_BYTES];
    char err[256];
    int r;
    rifl_frame_reader_init(&rd, text, *len, (unsigned)d->frame_width / 8);
    while ((r = rifl_frame_reader_next(&rd, frame, err, sizeof err)) == 1)
        ;
    if (r < 0) {
        fprintf(stderr, "error: %s: %s\n", d->file, err);
        free(text);
        return NULL;
    }
    return text;
}

/* A receiver only: the link sizing does not matter for decoding. */
static rifl_lane *make_receiver(const struct dopts *d)
{
    rifl_lane_config cfg = rifl_lane_default_config;
    cfg.frame_bits = (unsigned)d->frame_width;
    cfg.fid_bits = (unsigned)d->fid_width;
    cfg.link.cable_m = 0;
    cfg.link.transceiver_ns = 0;
    cfg.pipeline_frames = 0;
    cfg.rx_lock_frames = 0;
    rifl_lane *lane;
    char msg[512];
    if (rifl_lane_create(&cfg, &lane, msg, sizeof msg) != RIFL_OK) {
        fprintf(stderr, "error: %s\n", msg);
        return NULL;
    }
    return lane;
}

/* What the receiver made of one frame. */
struct decoded {
    uint64_t index;
    unsigned expect;
    rifl_frame_info fi;
    int res;
    bool verified, deliv, applied;
    bool bad_count; /* a partial frame's byte count outside 1 .. P/8 - 1 */
    uint8_t buf[RIFL_PAYLOAD_MAX_BYTES];
    size_t n;
};

static void print_frame_json(const struct dopts *d, const struct decoded *f)
{
    const rifl_frame_info *fi = &f->fi;
    printf("{\"index\": %llu, \"kind\": \"%s\", \"frame_id\": %u, \"expected_id\": %u, ",
           (unsigned long long)f->index, rifl_frame_kind_name(fi->kind), fi->id, f->expect);
    if (fi->kind == RIFL_KIND_CONTROL)
        printf("\"key\": %u, \"key_name\": \"%s\", ", fi->key, key_name(fi->key));
    printf("\"meta\": %u, \"payload_len\": %u, \"verified\": %s, \"delivered\": %s, "
           "\"result\": \"%s\"", fi->meta, fi->payload_len, f->verified ? "true" : "false",
           f->deliv ? "true" : "false", f->applied ? "applied" : rifl_rx_result_name(f->res));
    if (fi->kind == RIFL_KIND_DATA)
        printf(", \"eop\": %s", fi->eop ? "true" : "false");
    if (f->bad_count)
        printf(", \"bad_format\": true");
    if (d->payload && f->deliv && f->n) {
        char hex[2 * RIFL_PAYLOAD_MAX_BYTES + 1];
        rifl_hex_encode(f->buf, f->n, hex);
        printf(", \"bytes\": \"%s\"", hex);
    }
    printf("}\n");
}

static void print_frame_text(const struct dopts *d, const struct decoded *f)
{
    const rifl_frame_info *fi = &f->fi;
    char km[32];
    if (fi->kind == RIFL_KIND_CONTROL)
        snprintf(km, sizeof km, "%s", key_name(fi->key));
    else
        snprintf(km, sizeof km, "META=%u%u%s", fi->meta >> 1, fi->meta & 1,
                 fi->kind == RIFL_KIND_DATA && fi->eop ? " EOP" : "");
    printf("%8llu  %-8s %5u %6u  %-12s %4u  %-8s %s", (unsigned long long)f->index,
           rifl_frame_kind_name(fi->kind), fi->id, f->expect, km, fi->payload_len,
           f->verified ? "ok" : "FAIL", f->applied ? "applied" : rifl_rx_result_name(f->res));
    if (f->bad_count)
        printf("  (byte count %u outside 1..%u: bad format)", fi->format,
               (unsigned)d->frame_width / 8 - 3);
    if (d->payload && f->deliv && f->n) {
        char hex[2 * RIFL_PAYLOAD_MAX_BYTES + 1];
        rifl_hex_encode(f->buf, f->n, hex);
        printf("  %s", hex);
    }
    putchar('\n');
}

/* Frame `index` into the receiver, one frame per slot. */
static void receive(rifl_lane *lane, unsigned pb, uint64_t index, const uint8_t *frame,
                    struct decoded *f)
{
    f->index = index;
    f->expect = rifl_lane_expected_id(lane);
    uint64_t bad = rifl_lane_get_stats(lane)->rx_bad_format;
    f->res = rifl_lane_rx(lane, index, frame, &f->fi);
    f->bad_count = rifl_lane_get_stats(lane)->rx_bad_format != bad;
    f->verified = f->res != RIFL_RX_VERIFY_FAIL;
    /* delivered = handed to the user: new user data; fillers are dropped
     * and flow-control frames applied, not delivered */
    f->deliv = f->res == RIFL_RX_DELIVERED && f->fi.kind == RIFL_KIND_DATA;
    f->applied = f->res == RIFL_RX_DELIVERED && f->fi.kind != RIFL_KIND_DATA;
    size_t got;
    int eop = 0;
    f->n = 0;
    while (rifl_lane_read(lane, f->buf + f->n, pb - f->n, &got, &eop) == RIFL_OK && f->n < pb) {
        f->n += got;
        if (eop || f->n == pb)
            break;
    }
}

struct tally {
    uint64_t frames, delivered, kinds[RIFL_KIND_COUNT];
};

static void print_summary(const struct dopts *d, const rifl_lane_stats *st,
                          const struct tally *t)
{
    if (d->json) {
        printf("{\"summary\": true, \"frames\": %llu, \"verify_failures\": %llu, "
               "\"bad_format\": %llu, "
               "\"delivered_frames\": %llu, \"delivered_bytes\": %llu, \"fc_on_applied\": %llu, "
               "\"fc_off_applied\": %llu, \"frame_width\": %llu, \"frame_id_width\": %llu",
               (unsigned long long)t->frames, (unsigned long long)st->rx_verify_fail,
               (unsigned long long)st->rx_bad_format, (unsigned long long)t->delivered,
               (unsigned long long)st->rx_bytes,
               (unsigned long long)st->rx_delivered[RIFL_KIND_FC_ON],
               (unsigned long long)st->rx_delivered[RIFL_KIND_FC_OFF],
               (unsigned long long)d->frame_width, (unsigned long long)d->fid_width);
        for (int k = 0; k < RIFL_KIND_COUNT; k++)
            printf(", \"%s\": %llu", rifl_frame_kind_name((rifl_frame_kind)k),
                   (unsigned long long)t->kinds[k]);
        printf("}\n");
        return;
    }
    printf("\n%llu frames (%u-bit, K=%llu): %llu failed verification, %llu user data "
           "frames delivered (%llu bytes), flow control ON/OFF applied %llu/%llu\n",
           (unsigned long long)t->frames, (unsigned)d->frame_width,
           (unsigned long long)d->fid_width, (unsigned long long)st->rx_verify_fail,
           (unsigned long long)t->delivered, (unsigned long long)st->rx_bytes,
           (unsigned long long)st->rx_delivered[RIFL_KIND_FC_ON],
           (unsigned long long)st->rx_delivered[RIFL_KIND_FC_OFF]);
    if (st->rx_bad_format)
        printf("%llu delivered data frames had a byte count out of range (bad format)\n",
               (unsigned long long)st->rx_bad_format);
    printf("kinds (as decoded, failed frames included):");
    for (int k = 0; k < RIFL_KIND_COUNT; k++)
        printf(" %s %llu", rifl_frame_kind_name((rifl_frame_kind)k),
               (unsigned long long)t->kinds[k]);
    printf("\ncontrol keys: IDLE %llu, PAUSE %llu, RETRANSMIT %llu, other %llu\n",
           (unsigned long long)st->rx_keys[RIFL_KEYIDX_IDLE],
           (unsigned long long)st->rx_keys[RIFL_KEYIDX_PAUSE],
           (unsigned long long)st->rx_keys[RIFL_KEYIDX_RETRANSMIT],
           (unsigned long long)st->rx_unknown_key);
}

static int run(int argc, char **argv)
{
    struct dopts d;
    int rc = decode_options(argc, argv, &d);
    if (rc)
        return rc - 1;
    size_t len;
    char *text = load_frames(&d, &len);
    if (!text)
        return 2;
    rifl_lane *lane = make_receiver(&d);
    if (!lane) {
        free(text);
        return 2;
    }
    unsigned fb = (unsigned)d.frame_width / 8;
    rifl_frame_reader rd;
    rifl_frame_reader_init(&rd, text, len, fb);
    if (!d.json && !d.quiet)
        printf("%8s  %-8s %5s %6s  %-12s %4s  %-8s %s\n", "index", "kind", "id", "expect",
               "key/meta", "len", "verify", "receiver");
    struct tally t = { 0 };
    uint8_t frame[RIFL_FRAME_MAX_BYTES];
    char err[256];
    int r;
    while ((r = rifl_frame_reader_next(&rd, frame, err, sizeof err)) == 1) {
        struct decoded f;
        receive(lane, fb - 2, t.frames, frame, &f);
        t.delivered += f.deliv;
        t.kinds[f.fi.kind]++;
        if (d.json)
            print_frame_json(&d, &f);
        else if (!d.quiet)
            print_frame_text(&d, &f);
        t.frames++;
    }
    int status = 0;
    if (r < 0) {
        fprintf(stderr, "error: %s: %s\n", d.file, err);
        status = 2;
    }
    print_summary(&d, rifl_lane_get_stats(lane), &t);
    rifl_lane_free(lane);
    free(text);
    return status;
}

const struct rifl_command rifl_cmd_decode = {
    "decode", "take a file of wire frames apart, as a receiver would", run
};

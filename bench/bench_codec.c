/* `rifl bench codec`: encode + verify + decode throughput on one core, next
 * to memcpy of the same payload bytes measured in the same run (in the
 * spirit of `openssl speed`). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rifl/frame.h"
#include "rifl/rng.h"

#define NFRAMES 4096 /* working set: 4096 payloads, reused round robin */
#define BATCH 32     /* frames in flight between encoder and decoder */

struct result {
    unsigned frame_bits;
    double frames_per_s, payload_gbps, memcpy_gbps, ratio;
    uint64_t checksum;
};

static volatile uint64_t sink;

static void bench_width(unsigned F, double seconds, bool batch, struct result *r)
{
    unsigned pb = rifl_payload_bytes(F), fb = F / 8;
    uint8_t *payloads = malloc((size_t)NFRAMES * pb);
    uint8_t *out = malloc((size_t)NFRAMES * pb);
    rifl_rng rng;
    rifl_rng_seed(&rng, F);
    for (size_t i = 0; i < (size_t)NFRAMES * pb; i++)
        payloads[i] = (uint8_t)rifl_rng_next(&rng);

    /* encode + verify + decode: the sender encodes a batch of frames, the
     * receiver then verifies and decodes them, as frames cross a link */
    uint64_t scr = 0, descr = 0, frames = 0, bad = 0;
    uint8_t *wire = malloc((size_t)BATCH * fb);
    uint8_t syn[BATCH], meta[BATCH];
    uint16_t ids[BATCH];
    rifl_frame_info info[BATCH];
    memset(syn, RIFL_SYN_DATA, sizeof syn);
    memset(meta, RIFL_META_FULL, sizeof meta);
    double t0 = cli_now(), t1;
    unsigned id = 0;
    do {
        for (unsigned i = 0; i < NFRAMES; i += BATCH) {
            for (unsigned j = 0; j < BATCH; j++)
                ids[j] = (uint16_t)((id + j) & 0xFF);
            if (batch) {
                rifl_frame_encode_batch(wire, F, BATCH, syn, meta, payloads + (size_t)i * pb,
                                        ids, &scr);
                rifl_frame_decode_batch(wire, F, BATCH, &descr, out + (size_t)i * pb, info);
            } else {
                for (unsigned j = 0; j < BATCH; j++)
                    rifl_frame_encode(wire + (size_t)j * fb, F, syn[j], meta[j],
                                      payloads + (size_t)(i + j) * pb, ids[j], &scr);
                for (unsigned j = 0; j < BATCH; j++)
                    rifl_frame_decode(wire + (size_t)j * fb, F, &descr,
                                      out + (size_t)(i + j) * pb, &info[j]);
            }
            for (unsigned j = 0; j < BATCH; j++)
                bad += info[j].id != ids[j]; /* verification */
            id = (id + BATCH) & 0xFF;
        }
        frames += NFRAMES;
        t1 = cli_now();
    } while (t1 - t0 < seconds);
    free(wire);
    double codec_s = t1 - t0;
    if (bad || memcmp(out, payloads, (size_t)NFRAMES * pb)) {
        fprintf(stderr, "error: codec round trip failed at %u bits\n", F);
        exit(1);
    }

    /* memcpy of the same payload bytes, frame by frame */
    uint64_t copies = 0;
    t0 = cli_now();
    do {
        for (unsigned i = 0; i < NFRAMES; i++) {
            memcpy(out + (size_t)i * pb, payloads + (size_t)((i * 7) % NFRAMES) * pb, pb);
            __asm__ __volatile__("" ::"r"(out) : "memory");
        }
        copies += NFRAMES;
        t1 = cli_now();
    } while (t1 - t0 < seconds);
    double copy_s = t1 - t0;
    sink = out[0] + scr;

    r->frame_bits = F;
    r->frames_per_s = (double)frames / codec_s;
    r->payload_gbps = r->frames_per_s * pb * 8 / 1e9;
    r->memcpy_gbps = (double)copies / copy_s * pb * 8 / 1e9;
    r->ratio = r->payload_gbps / r->memcpy_gbps;
    (void)fb;
    free(payloads);
    free(out);
}

static int run(int argc, char **argv)
{
    bool json = false, single = false;
    double seconds = 1.0;
    const char *widths = "256,2048";
    struct cli_opt opts[] = {
        { "json", CLI_FLAG, &json, "one JSON object per frame width", 0, 0 },
        { "seconds", CLI_DOUBLE, &seconds, "measuring time per test", 0.01, 60 },
        { "widths", CLI_STRING, &widths, "comma-separated frame widths (64, 128, 256, 512, "
          "1024, 2048; at most 16)", 0, 0 },
        { "single", CLI_FLAG, &single, "frame-at-a-time calls instead of the batch calls", 0, 0 },
        CLI_END,
    };
    int rc = cli_parse(argc, argv, opts, "[--json] [--seconds S] [--widths 256,2048]",
                       "Measures frame encode + verify + decode throughput on one core and\n"
                       "memcpy of the same payload bytes in the same run.  The sender encodes\n"
                       "32 frames of one stream, the receiver verifies and decodes them, and\n"
                       "so on; --single uses the frame-at-a-time calls.",
                       NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : 2;
    /* the whole list is checked before anything is measured */
    double wv[16];
    int nw = cli_parse_list(widths, wv, 16, 64, 2048, cli_where(opts, "widths"));
    if (nw < 0)
        return 2;
    unsigned w[16];
    for (int i = 0; i < nw; i++) {
        if (wv[i] != floor(wv[i]))
            return cli_fail(opts, "widths", "%g is not a whole number of bits; use 64, 128, "
                            "256, 512, 1024 or 2048", wv[i]);
        if (cli_frame_width(opts, "widths", (uint64_t)wv[i]))
            return 2;
        w[i] = (unsigned)wv[i];
    }
    if (!json)
        printf("%-6s %14s %14s %14s %10s  %s\n", "bits", "frames/s", "payload Gb/s",
               "memcpy Gb/s", "ratio", "path");
    for (int i = 0; i < nw; i++) {
        unsigned F = w[i];
        struct result r;
        bench_width(F, seconds, !single, &r);
        if (json)
            printf("{\"frame_width\": %u, \"frames_per_s\": %.0f, \"payload_gbps\": %.3f, "
                   "\"memcpy_gbps\": %.3f, \"memcpy_ratio\": %.4f, \"api\": \"%s\", "
                   "\"vector\": %s}\n",
                   F, r.frames_per_s, r.payload_gbps, r.memcpy_gbps, r.ratio,
                   single ? "single" : "batch",
                   !single && rifl_frame_batch_simd(F) ? "true" : "false");
        else
            printf("%-6u %14.0f %14.2f %14.2f %10.4f  %s\n", F, r.frames_per_s,
                   r.payload_gbps, r.memcpy_gbps, r.ratio,
                   single ? "frame at a time"
                          : rifl_frame_batch_simd(F) ? "batch, AVX-512" : "batch, scalar");
        fflush(stdout);
    }
    return 0;
}

const struct rifl_command rifl_cmd_bench_codec = {
    "bench codec", "frame encode + verify + decode throughput vs memcpy", run
};

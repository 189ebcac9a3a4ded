/* `rifl bench codec`: encode + verify + decode throughput on one core, next
 * to a bulk memcpy of the same payload bytes measured in the same run (in
 * the spirit of `openssl speed`).
 *
 * One step: the sender encodes a batch of 32 consecutive frames of one
 * stream from prepared payloads (rifl_frame_encode_batch); the receiver
 * decodes them and verifies each against the frame ID it expects
 * (rifl_frame_decode_verify: SYN data, META full and CRC XOR VCODE equal to
 * the expected ID), writing the payload bytes.  Any frame that fails ends
 * the run with an error; the payloads of each round's last pass are compared
 * with what was sent, and one batch per pass as the round goes.
 *
 * The time of each test is split into rounds, and every round times memcpy
 * and then each path in turn, so that all of them see the same stretches of
 * a shared machine's load; the figures are the medians of the rounds. */
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
#define MAXPATHS 8
#define MAXROUNDS 1000

/* One path's figures over the rounds: medians, and the slowest and fastest
 * round's payload Gbit/s. */
struct result {
    double frames_per_s, payload_gbps, gbps_min, gbps_max, memcpy_gbps, ratio;
};

/* One path's codec state, carried from one round to the next. */
struct codec_state {
    uint64_t scr, descr;
    unsigned id, pass;
};

struct bench {
    unsigned F, pb, fb;
    uint8_t *payloads, *out, *wire;
};

/* One pass over the NFRAMES payloads; returns the frames that failed. */
static unsigned codec_pass(const struct bench *b, bool single, uint64_t *scr, uint64_t *descr,
                           unsigned *id)
{
    unsigned F = b->F, pb = b->pb, fb = b->fb, failed = 0;
    uint8_t syn[BATCH], meta[BATCH];
    uint16_t ids[BATCH];
    uint64_t odd[(BATCH + 63) / 64];
    rifl_frame_info info[BATCH];
    memset(syn, RIFL_SYN_DATA, sizeof syn);
    memset(meta, RIFL_META_FULL, sizeof meta);
    for (unsigned i = 0; i < NFRAMES; i += BATCH) {
        for (unsigned j = 0; j < BATCH; j++)
            ids[j] = (uint16_t)((*id + j) & 0xFF);
        const uint8_t *src = b->payloads + (size_t)i * pb;
        uint8_t *dst = b->out + (size_t)i * pb;
        if (!single) {
            rifl_frame_encode_batch(b->wire, F, BATCH, syn, meta, src, ids, scr);
            int rc = rifl_frame_decode_verify(b->wire, F, BATCH, descr, ids, dst, odd, info);
            failed += rc < 0 ? BATCH : (unsigned)rc;
        } else {
            for (unsigned j = 0; j < BATCH; j++)
                rifl_frame_encode(b->wire + (size_t)j * fb, F, syn[j], meta[j],
                                  src + (size_t)j * pb, ids[j], scr);
            for (unsigned j = 0; j < BATCH; j++) {
                rifl_frame_decode(b->wire + (size_t)j * fb, F, descr, dst + (size_t)j * pb,
                                  &info[j]);
                failed += info[j].id != ids[j] || info[j].syn != RIFL_SYN_DATA ||
                          info[j].meta != RIFL_META_FULL;
            }
        }
        *id = (*id + BATCH) & 0xFF;
    }
    return failed;
}

static void fail(unsigned F, const char *path, const char *what)
{
    fprintf(stderr, "error: %u-bit frames, path %s: %s\n", F, path, what);
    exit(1);
}

/* One round of one path for `seconds`; returns its frames per second. */
static double codec_round(const struct bench *b, double seconds, bool single, const char *path,
                          struct codec_state *st)
{
    uint64_t frames = 0;
    /* the memcpy before left the payloads in out: the decoder must write them */
    memset(b->out, 0, (size_t)NFRAMES * b->pb);
    double t0 = cli_now(), t1;
    do {
        if (codec_pass(b, single, &st->scr, &st->descr, &st->id))
            fail(b->F, path, "a frame failed verification");
        /* one batch per pass, a different one each time */
        size_t at = (size_t)(st->pass++ * 7 % (NFRAMES / BATCH)) * BATCH * b->pb;
        if (memcmp(b->out + at, b->payloads + at, (size_t)BATCH * b->pb))
            fail(b->F, path, "decoded payload differs from the payload sent");
        frames += NFRAMES;
        t1 = cli_now();
    } while (t1 - t0 < seconds);
    if (memcmp(b->out, b->payloads, (size_t)NFRAMES * b->pb))
        fail(b->F, path, "decoded payload differs from the payload sent");
    return (double)frames / (t1 - t0);
}

/* The check must catch a damaged frame: flip a bit and expect one. */
static void check_damage(const struct bench *b, const char *path)
{
    uint8_t syn[BATCH], meta[BATCH];
    uint16_t ids[BATCH];
    uint64_t odd[1], d = 0, s = 0;
    rifl_frame_info info[BATCH];
    memset(syn, RIFL_SYN_DATA, sizeof syn);
    memset(meta, RIFL_META_FULL, sizeof meta);
    for (unsigned j = 0; j < BATCH; j++)
        ids[j] = (uint16_t)j;
    rifl_frame_encode_batch(b->wire, b->F, BATCH, syn, meta, b->payloads, ids, &s);
    b->wire[5 * b->fb + 3] ^= 0x10;
    if (rifl_frame_decode_verify(b->wire, b->F, BATCH, &d, ids, b->out, odd, info) < 1 ||
        !((odd[0] >> 5) & 1))
        fail(b->F, path, "the verification missed a damaged frame");
}

/* memcpy of the same payload bytes: one call per batch of 32 frames */
static double memcpy_round(const struct bench *b, double seconds)
{
    uint64_t copies = 0;
    size_t bytes = (size_t)BATCH * b->pb;
    double t0 = cli_now(), t1;
    do {
        for (unsigned i = 0; i < NFRAMES; i += BATCH) {
            memcpy(b->out + (size_t)i * b->pb, b->payloads + (size_t)i * b->pb, bytes);
            __asm__ __volatile__("" ::"r"(b->out) : "memory");
        }
        copies += NFRAMES;
        t1 = cli_now();
    } while (t1 - t0 < seconds);
    return (double)copies / (t1 - t0) * b->pb * 8 / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (the mean of the middle two when n is even); sorts v. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One path's figures from its rounds' frames per second (sorted here) and
 * memcpy's Gbit/s in the same rounds.  The ratio is taken round by round,
 * each path against the memcpy of its own round. */
static void summarize(const struct bench *b, double *fps, const double *mc, int rounds,
                      struct result *r)
{
    double scale = b->pb * 8 / 1e9, ratio[MAXROUNDS], m[MAXROUNDS];
    for (int i = 0; i < rounds; i++) {
        ratio[i] = fps[i] * scale / mc[i];
        m[i] = mc[i];
    }
    r->ratio = median(ratio, rounds);
    r->memcpy_gbps = median(m, rounds);
    r->frames_per_s = median(fps, rounds);
    r->payload_gbps = r->frames_per_s * scale;
    r->gbps_min = fps[0] * scale;
    r->gbps_max = fps[rounds - 1] * scale;
}

static void print_line(bool json, bool single, unsigned F, const char *path,
                       const struct result *r, int rounds)
{
    int vec = !single && rifl_frame_batch_simd(F);
    if (json)
        printf("{\"frame_width\": %u, \"path\": \"%s\", \"rounds\": %d, "
               "\"frames_per_s\": %.0f, \"payload_gbps\": %.3f, \"payload_gbps_min\": %.3f, "
               "\"payload_gbps_max\": %.3f, \"memcpy_gbps\": %.3f, \"memcpy_ratio\": %.4f, "
               "\"api\": \"%s\", \"vector\": %s}\n",
               F, path, rounds, r->frames_per_s, r->payload_gbps, r->gbps_min, r->gbps_max,
               r->memcpy_gbps, r->ratio, single ? "single" : "batch", vec ? "true" : "false");
    else
        printf("%-6u %-9s %14.0f %14.2f %14.2f %10.4f  %s\n", F, path, r->frames_per_s,
               r->payload_gbps, r->memcpy_gbps, r->ratio,
               single ? "frame at a time" : vec ? "batch, vector" : "batch, frame by frame");
    fflush(stdout);
}

/* The speed targets (docs/benchmarks.md): payload Gbit/s on one core of
 * the batch calls on the best path, encode + verify + decode. */
static double target_gbps(unsigned F) { return F == 256 ? 45 : F == 2048 ? 64 : 0; }

/* Measures every path at width F in `rounds` rounds of seconds / rounds per
 * test (memcpy, then each path), prints a line per path and leaves the
 * first path's figures in *first. */
static void bench_width(unsigned F, double seconds, int rounds, bool json, bool single,
                        const char *const *paths, int npaths, struct result *first)
{
    struct bench b = { F, rifl_payload_bytes(F), F / 8, NULL, NULL, NULL };
    b.payloads = malloc((size_t)NFRAMES * b.pb);
    b.out = malloc((size_t)NFRAMES * b.pb);
    b.wire = malloc((size_t)BATCH * b.fb);
    double *mc = malloc((size_t)rounds * sizeof *mc);
    double *fps = malloc((size_t)rounds * (size_t)npaths * sizeof *fps);
    if (!b.payloads || !b.out || !b.wire || !mc || !fps)
        fail(F, "-", "out of memory");
    rifl_rng rng;
    rifl_rng_seed(&rng, F);
    for (size_t i = 0; i < (size_t)NFRAMES * b.pb; i++)
        b.payloads[i] = (uint8_t)rifl_rng_next(&rng);
    struct codec_state st[MAXPATHS];
    memset(st, 0, sizeof st);
    double slice = seconds / rounds;
    /* warm-up, not counted: one round's time (at most 0.1 s) of each test,
     * so that the first round does not pay for page faults, cold caches or
     * the core's switch to wide vectors */
    double warm = slice < 0.1 ? slice : 0.1;
    memcpy_round(&b, warm);
    for (int p = 0; p < npaths; p++) {
        rifl_frame_batch_set_path(paths[p]);
        codec_round(&b, warm, single, single ? "portable" : paths[p], &st[p]);
    }
    for (int i = 0; i < rounds; i++) {
        mc[i] = memcpy_round(&b, slice);
        for (int p = 0; p < npaths; p++) {
            rifl_frame_batch_set_path(paths[p]);
            fps[(size_t)p * rounds + i] =
                codec_round(&b, slice, single, single ? "portable" : paths[p], &st[p]);
        }
    }
    for (int p = 0; p < npaths; p++) {
        struct result r;
        rifl_frame_batch_set_path(paths[p]);
        if (!single)
            check_damage(&b, paths[p]);
        summarize(&b, fps + (size_t)p * rounds, mc, rounds, &r);
        print_line(json, single, F, single ? "portable" : paths[p], &r, rounds);
        if (p == 0)
            *first = r;
    }
    rifl_frame_batch_set_path(paths[0]);
    free(b.payloads);
    free(b.out);
    free(b.wire);
    free(mc);
    free(fps);
}

/* The paths to measure: the one in use (or --path), then with --all-paths
 * every other one the CPU runs. */
static int choose_paths(const struct cli_opt *opts, const char *path, bool all,
                        const char **paths)
{
    int n = 0;
    if (path) {
        char msg[200];
        if (rifl_frame_batch_path_check(path, msg, sizeof msg) != RIFL_OK)
            return -cli_fail(opts, "path", "%s", msg);
    }
    paths[n++] = path ? path : rifl_frame_batch_path();
    for (unsigned i = 0; all && rifl_frame_batch_path_name(i); i++) {
        const char *p = rifl_frame_batch_path_name(i);
        if (strcmp(p, paths[0]) && rifl_frame_batch_path_check(p, NULL, 0) == RIFL_OK &&
            n < MAXPATHS)
            paths[n++] = p;
    }
    return n;
}

static int parse_widths(const struct cli_opt *opts, const char *widths, unsigned *w)
{
    double wv[16];
    int nw = cli_parse_list(widths, wv, 16, 64, 2048, cli_where(opts, "widths"));
    if (nw < 0)
        return -2;
    for (int i = 0; i < nw; i++) {
        if (wv[i] != floor(wv[i]))
            return -cli_fail(opts, "widths", "%g is not a whole number of bits; use 64, 128, "
                             "256, 512, 1024 or 2048", wv[i]);
        if (cli_frame_width(opts, "widths", (uint64_t)wv[i]))
            return -2;
        w[i] = (unsigned)wv[i];
    }
    return nw;
}

static int run(int argc, char **argv)
{
    bool json = false, single = false, all = false;
    double seconds = 1.0;
    uint64_t rounds = 10;
    const char *widths = "256,2048", *path = NULL;
    struct cli_opt opts[] = {
        { "json", CLI_FLAG, &json, "one JSON object per frame width and path", 0, 0 },
        { "seconds", CLI_DOUBLE, &seconds, "measuring time per test, over all its rounds",
          0.01, 60 },
        { "rounds", CLI_UINT, &rounds, "rounds the time is split into; the figures are the "
          "medians of the rounds", 1, MAXROUNDS },
        { "widths", CLI_STRING, &widths, "comma-separated frame widths (64, 128, 256, 512, "
          "1024, 2048; at most 16)", 0, 0 },
        { "path", CLI_STRING, &path, "the batch calls' code path: avx512, avx2 or portable "
          "(default: the best the CPU runs)", 0, 0 },
        { "all-paths", CLI_FLAG, &all, "also every other path the CPU runs", 0, 0 },
        { "single", CLI_FLAG, &single, "frame-at-a-time calls instead of the batch calls", 0, 0 },
        CLI_END,
    };
    int rc = cli_parse(argc, argv, opts, "[--json] [--seconds S] [--rounds N] "
                       "[--widths 256,2048] [--path NAME] [--all-paths]",
                       "Measures frame encode + verify + decode throughput on one core and\n"
                       "memcpy of the same payload bytes in the same run.  The sender encodes\n"
                       "a batch of 32 frames of one stream, the receiver decodes them and\n"
                       "verifies each against the frame ID it expects (SYN, META and CRC XOR\n"
                       "VCODE), and so on; any frame failing ends the run with an error, and\n"
                       "the decoded payloads are compared with those sent.  memcpy copies\n"
                       "the same payload bytes, one call per batch.  The batch calls run on\n"
                       "the best code path the CPU has (the `path` field), or the one --path\n"
                       "names; --all-paths adds a line for every other path the CPU runs.\n"
                       "--single uses the frame-at-a-time calls.\n"
                       "\n"
                       "The time of each test (--seconds) is split into --rounds rounds: each\n"
                       "round times memcpy and then each path for seconds / rounds, so that\n"
                       "all of them see the same stretches of a shared machine's load, and a\n"
                       "short burst of other work moves one round, not a whole figure.  An\n"
                       "untimed warm-up of each test comes first.  Every figure printed is\n"
                       "the median of the rounds (frames/s, payload and memcpy Gbit/s); the\n"
                       "ratio is the median of the rounds' ratios, each path against the\n"
                       "memcpy of its own round.  The speed targets are checked against the\n"
                       "median payload Gbit/s.  --json adds the slowest and the fastest\n"
                       "round's payload Gbit/s (payload_gbps_min, payload_gbps_max).",
                       NULL, 0, NULL);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (single && (all || path))
        return cli_fail(opts, "single", "--single measures the frame-at-a-time calls; "
                        "--path and --all-paths choose among the batch calls' paths");
    /* everything is checked before anything is measured */
    unsigned w[16];
    int nw = parse_widths(opts, widths, w);
    if (nw < 0)
        return -nw;
    const char *paths[MAXPATHS];
    int np = choose_paths(opts, path, all, paths);
    if (np < 0)
        return -np;
    int nr = (int)rounds;
    if (!json) {
        printf("rounds: %d, each timing memcpy and then each path for %.3g s; the figures "
               "are their medians\n", nr, seconds / nr);
        printf("%-6s %-9s %14s %14s %14s %10s  %s\n", "bits", "path", "frames/s",
               "payload Gb/s", "memcpy Gb/s", "ratio", "calls");
    }
    struct result got[16];
    for (int i = 0; i < nw; i++)
        bench_width(w[i], seconds, nr, json, single, paths, np, &got[i]);
    /* the targets hold for the batch calls on the best path, by the median */
    for (int i = 0; i < nw && !json && !single && !path; i++)
        if (target_gbps(w[i]) > 0)
            printf("target at %u bits, %s path: %.0f Gbit/s, measured %.2f (median of %d "
                   "round%s, %.2f to %.2f): %s\n", w[i], paths[0], target_gbps(w[i]),
                   got[i].payload_gbps, nr, nr == 1 ? "" : "s", got[i].gbps_min, got[i].gbps_max,
                   got[i].payload_gbps >= target_gbps(w[i]) ? "met" : "missed");
    return 0;
}

const struct rifl_command rifl_cmd_bench_codec = {
    "bench codec", "frame encode + verify + decode throughput vs memcpy", run
};

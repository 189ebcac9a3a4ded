/* `rifl calc`: the paper's equations for a user's link, the paper's Tables
 * 2, 3 and 5, the Fig. 8 framing models, and a measurement of undetected
 * frame errors against Eq. 15. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rifl/sim/analysis.h"
#include "rifl/lane.h"

struct opts {
    uint64_t frame_bits, crc_bits, hd, pipeline, frames, seed, max_len;
    double rate, cable, ns_per_m, xcvr, ber, goodput, rtt;
    const char *sweep_csv, *bers;
    bool csv;
};

static const struct cli_opt *g_opts; /* the option table, for messages */

/* a duration in years, or a note when the frame failure ratio is 0 */
static void years_text(char *buf, size_t n, double y, double ber, bool csv)
{
    if (isfinite(y))
        snprintf(buf, n, csv ? "%.6g" : "%.4g years", y);
    else if (csv)
        snprintf(buf, n, "%s", "");
    else if (ber == 0)
        snprintf(buf, n, "unbounded (no bit errors)");
    else
        snprintf(buf, n, "beyond 1e300 years (the FFR is below the range of a double)");
}

static int link_cmd(const struct opts *o)
{
    unsigned F = (unsigned)o->frame_bits;
    if (cli_frame_width(g_opts, "frame-bits", o->frame_bits))
        return 2;
    if (o->goodput > o->rate)
        return cli_fail(g_opts, "goodput,rate", "a goodput of %g Gbit/s is above the line rate "
                        "of %g Gbit/s", o->goodput, o->rate);
    rifl_link_params lp = { o->rate, o->cable, o->ns_per_m, o->xcvr };
    double rtt_ns = 2 * (o->xcvr + o->cable * o->ns_per_m);
    double rtt_f = rifl_link_rtt_frames(&lp, F, (unsigned)o->pipeline);
    unsigned k13 = rifl_eq_fid_bits(o->rate, rtt_ns, F);
    unsigned keng = rifl_lane_min_fid_bits(&lp, F, (unsigned)o->pipeline);
    unsigned m = (unsigned)o->crc_bits;
    unsigned sv = rifl_eq_verification_bits(keng > m ? keng : m);
    double ffr = rifl_eq_ffr(F, m, (unsigned)o->hd, o->ber);
    double gp = o->goodput > 0 ? o->goodput : o->rate * rifl_eq_efficiency(F, sv);
    double dflt_buf = 2.0 * ldexp(1.0, (int)keng);
    rifl_fc_sizing fc = rifl_eq_fc(rtt_f, dflt_buf);
    double y_line = rifl_eq_mtbf_years(ffr, o->rate, F, 0.01);
    double y_gp = rifl_eq_mtbf_years(ffr, gp, F, 0.01);
    double y_mean = rifl_eq_mean_years(ffr, gp, F);
    char t1[64], t2[64], t3[64];
    years_text(t1, sizeof t1, y_line, o->ber, o->csv);
    years_text(t2, sizeof t2, y_gp, o->ber, o->csv);
    years_text(t3, sizeof t3, y_mean, o->ber, o->csv);
    if (o->csv) {
        printf("frame_bits,rate_gbps,cable_m,ns_per_m,transceiver_ns,pipeline_frames,rtt_ns,"
               "rtt_frames,fid_bits_eq13,fid_bits_engine,crc_bits,hd,verification_bits,"
               "efficiency,ber,ffr,mtbf_years_1pct_line,goodput_gbps,mtbf_years_1pct_goodput,"
               "mean_years_goodput,fc_min_buffer_frames,fc_default_buffer_frames,fc_on_frames,"
               "fc_off_frames\n");
        printf("%u,%g,%g,%g,%g,%llu,%.3f,%.3f,%u,%u,%u,%llu,%u,%.6f,%g,%.6g,%s,%.6g,%s,%s,"
               "%.3f,%.0f,%.3f,%.3f\n", F, o->rate, o->cable, o->ns_per_m, o->xcvr,
               (unsigned long long)o->pipeline, rtt_ns, rtt_f, k13, keng, m,
               (unsigned long long)o->hd, sv, rifl_eq_efficiency(F, sv), o->ber, ffr, t1, gp,
               t2, t3, fc.min_buffer, dflt_buf, fc.on, fc.off);
        return 0;
    }
    printf("link: %u-bit frames at %g Gbit/s, %g m x %g ns/m + %g ns transceivers: RTT %.1f ns "
           "= %.1f frames (with %llu pipeline frames)\n", F, o->rate, o->cable, o->ns_per_m,
           o->xcvr, rtt_ns, rtt_f, (unsigned long long)o->pipeline);
    printf("Eq. 13  frame-ID width for 2^K >= rate x RTT / F:        %u\n", k13);
    printf("        engine rule 2^K >= 32 + RTT (16-frame runs):     %u%s\n", keng,
           keng > 12 ? "  (above 12: link too long for RIFL)" : "");
    printf("Eq. 12/19 verification code (max(K, %u), = 4 mod 8):     %u bits\n", m, sv);
    printf("Eq. 11  bandwidth efficiency 1 - (S_ver + 4) / F:        %.4f\n",
           rifl_eq_efficiency(F, sv));
    printf("Eq. 15/16 FFR, %u-bit CRC with HD %llu at BER %g:          %.4g\n", m,
           (unsigned long long)o->hd, o->ber, ffr);
    printf("Eq. 14  time to 1%% failure probability at the line rate: %s\n", t1);
    printf("Eq. 26  same at %.3f Gbit/s of payload:                  %s\n", gp, t2);
    printf("        mean time to the first undetected frame there:   %s\n", t3);
    printf("Eq. 23  flow-control buffer >= 1.5 x RTT:                %.1f frames (default "
           "2^(K+1) = %.0f)\n", fc.min_buffer, dflt_buf);
    printf("Eq. 24/25 thresholds ON / OFF:                          %.1f / %.1f frames\n",
           fc.on, fc.off);
    return 0;
}

static const unsigned widths[] = { 128, 256, 512, 1024, 2048 };

static void table2(const struct opts *o)
{
    /* the paper's example link: 100 Gbit/s, RTT 500 ns, BER 1e-7 */
    double rate = 100, rtt = 500, ber = 1e-7;
    if (o->csv)
        printf("frame_bits,fid_bits,crc_bits,hd,mtbf_years_1pct,mtbf_years_mean\n");
    else
        printf("Table 2 (rate %g Gbit/s, RTT %g ns, BER %g; CRC: smallest m whose HD-4 limit "
               "2^(m-1)-1 covers F-2 bits)\n%-6s %4s %4s %3s %14s %14s\n", rate, rtt, ber, "F",
               "K", "m", "HD", "MTBF 1% (y)", "mean (y)");
    for (unsigned i = 0; i < 5; i++) {
        unsigned F = widths[i];
        unsigned k = rifl_eq_fid_bits(rate, rtt, F);
        unsigned m = rifl_eq_hd4_crc_bits(F - 2);
        double ffr = rifl_eq_ffr(F, m, 4, ber);
        double y1 = rifl_eq_mtbf_years(ffr, rate, F, 0.01), ym = rifl_eq_mean_years(ffr, rate, F);
        if (o->csv)
            printf("%u,%u,%u,4,%.4g,%.4g\n", F, k, m, y1, ym);
        else
            printf("%-6u %4u %4u %3u %14.3g %14.3g\n", F, k, m, 4, y1, ym);
    }
}

static void table3(const struct opts *o)
{
    if (o->csv)
        printf("frame_bits,verification_bits,efficiency\n");
    else
        printf("Table 3 (S_ver = smallest >= max(K, m) with S_ver = 4 mod 8)\n%-6s %6s %10s\n",
               "F", "S_ver", "Eff");
    for (unsigned i = 0; i < 5; i++) {
        unsigned F = widths[i];
        unsigned k = rifl_eq_fid_bits(100, 500, F), m = rifl_eq_hd4_crc_bits(F - 2);
        unsigned sv = rifl_eq_verification_bits(k > m ? k : m);
        if (o->csv)
            printf("%u,%u,%.6f\n", F, sv, rifl_eq_efficiency(F, sv));
        else
            printf("%-6u %6u %9.4f%%\n", F, sv, 100 * rifl_eq_efficiency(F, sv));
    }
}

/* goodput at the sweep point nearest to `ber` in a `rifl sim link --csv`
 * file (columns ber and goodput_gbps): 0 with *gp, 1 when no point is near,
 * 2 after a message about a bad file */
static int sweep_goodput(const char *path, double ber, double *gp, unsigned *frame_bits)
{
    size_t len;
    char *buf = cli_read_named(path, cli_where(g_opts, "sweep-csv"), &len);
    if (!buf)
        return 2;
    int cb = -1, cg = -1, cf = -1;
    double best = NAN, bestd = INFINITY, bestf = 0;
    unsigned lineno = 0;
    bool header = true, bad = false;
    char *p = buf;
    char *line;
    while (!bad && (line = cli_next_line(&p))) {
        lineno++;
        if (!line[0] || line[0] == '#')
            continue;
        int col = 0;
        double vb = NAN, vg = NAN, vf = 0;
        char *f = line;
        for (;;) {
            size_t fl = strcspn(f, ",");
            char end = f[fl];
            f[fl] = '\0';
            if (header) {
                if (!strcmp(f, "ber"))
                    cb = col;
                if (!strcmp(f, "goodput_gbps"))
                    cg = col;
                if (!strcmp(f, "frame_bits"))
                    cf = col;
            } else if (col == cf) {
                if (cli_parse_double(f, &vf) || vf < 0)
                    vf = -1;
            } else if (col == cb || col == cg) {
                double v;
                if (cli_parse_double(f, &v) || v < 0) {
                    fprintf(stderr, "error: %s: %s:%u: column '%s' holds '%s', not a number "
                            "(the file should come from rifl sim link --sweep ... --csv)\n",
                            cli_where(g_opts, "sweep-csv"), path, lineno,
                            col == cb ? "ber" : "goodput_gbps", f);
                    bad = true;
                    break;
                }
                if (col == cb)
                    vb = v;
                else
                    vg = v;
            }
            col++;
            if (!end)
                break;
            f += fl + 1;
        }
        if (bad)
            break;
        if (header && (cb < 0 || cg < 0)) {
            fprintf(stderr, "error: %s: %s has no 'ber' and 'goodput_gbps' columns (make it "
                    "with rifl sim link --sweep ... --csv)\n", cli_where(g_opts, "sweep-csv"),
                    path);
            bad = true;
            break;
        }
        if (!header && (isnan(vb) || isnan(vg))) {
            fprintf(stderr, "error: %s: %s:%u: the line has fewer columns than the header\n",
                    cli_where(g_opts, "sweep-csv"), path, lineno);
            bad = true;
            break;
        }
        if (!header && vb > 0 && fabs(log10(vb / ber)) < bestd) {
            bestd = fabs(log10(vb / ber));
            best = vg;
            bestf = vf;
        }
        header = false;
    }
    free(buf);
    if (!bad && header) {
        fprintf(stderr, "error: %s: %s is empty (make it with rifl sim link --sweep ... "
                "--csv)\n", cli_where(g_opts, "sweep-csv"), path);
        bad = true;
    }
    if (bad)
        return 2;
    if (!(bestd < 0.05))
        return 1;
    *gp = best;
    *frame_bits = bestf > 0 ? (unsigned)bestf : 0;
    return 0;
}

static int table5(const struct opts *o)
{
    static const double bers[4] = { 1e-11, 1e-9, 1e-7, 1e-5 };
    static const double paper[4] = { 1.81e23, 1.81e15, 1.88e8, 6.33 };
    unsigned F = 256, m = 12, hd = 4;
    double gp[4];
    for (int i = 0; i < 4; i++) {
        gp[i] = o->rate * rifl_payload_bytes(F) * 8.0 / F;
        if (!o->sweep_csv)
            continue;
        unsigned fb = 0;
        int rc = sweep_goodput(o->sweep_csv, bers[i], &gp[i], &fb);
        if (rc == 1)
            return cli_fail(g_opts, "sweep-csv", "%s has no point near BER %g (within 12%%); "
                            "make it with a sweep over it, e.g. --sweep ber=1e-11:1e-5:x10",
                            o->sweep_csv, bers[i]);
        if (rc)
            return 2;
        if (fb && fb != F)
            return cli_fail(g_opts, "sweep-csv", "%s: the point at BER %g ran %u-bit frames; "
                            "Table 5 is for %u-bit frames, so make the sweep with "
                            "--frame-bits %u", o->sweep_csv, bers[i], fb, F, F);
    }
    char src[160];
    if (o->sweep_csv)
        snprintf(src, sizeof src, " from %s", o->sweep_csv);
    else
        snprintf(src, sizeof src, " (no sweep file: payload line rate %.4g Gbit/s)", gp[0]);
    if (o->csv)
        printf("ber,goodput_gbps,ffr,mtbf_years_1pct,mtbf_years_mean,paper_years\n");
    else
        printf("Table 5: F = %u, %u-bit CRC with HD %u, Eq. 26 with the measured goodput%s\n"
               "%-8s %10s %11s %14s %14s %12s\n", F, m, hd, src, "BER", "Gbit/s", "FFR",
               "1% (y)", "mean (y)", "paper (y)");
    for (int i = 0; i < 4; i++) {
        double ffr = rifl_eq_ffr(F, m, hd, bers[i]);
        /* Eq. 26 counts time at the goodput: none delivered, no figure */
        double y[2] = { rifl_eq_mtbf_years(ffr, gp[i], F, 0.01),
                        rifl_eq_mean_years(ffr, gp[i], F) };
        char t[2][32];
        for (int k = 0; k < 2; k++) {
            if (gp[i] > 0 && isfinite(y[k]))
                snprintf(t[k], sizeof t[k], o->csv ? "%.4g" : "%.3g", y[k]);
            else
                snprintf(t[k], sizeof t[k], "%s", o->csv ? "" : "-");
        }
        if (o->csv)
            printf("%g,%.4f,%.4g,%s,%s,%.3g\n", bers[i], gp[i], ffr, t[0], t[1], paper[i]);
        else
            printf("%-8.0e %10.3f %11.3g %14s %14s %12.3g\n", bers[i], gp[i], ffr, t[0], t[1],
                   paper[i]);
    }
    return 0;
}

static void fig8(const struct opts *o)
{
    printf("payload_bytes,rifl256,rifl512,aurora64b66b,interlaken,ethernet100g\n");
    for (unsigned long L = 1; L <= o->max_len; L++) {
        double e = rifl_model_efficiency(RIFL_MODEL_ETHERNET, 0, L);
        printf("%lu,%.6f,%.6f,%.6f,%.6f,", L, rifl_model_efficiency(RIFL_MODEL_RIFL, 256, L),
               rifl_model_efficiency(RIFL_MODEL_RIFL, 512, L),
               rifl_model_efficiency(RIFL_MODEL_AURORA, 0, L),
               rifl_model_efficiency(RIFL_MODEL_INTERLAKEN, 0, L));
        if (e > 0)
            printf("%.6f\n", e);
        else
            printf("\n");
    }
}

/* "1/N" for one undetected frame in N hit, "-" when none was undetected */
static void per_text(char *buf, size_t n, uint64_t hit, uint64_t undetected)
{
    if (undetected)
        snprintf(buf, n, "1/%.0f", (double)hit / (double)undetected);
    else
        snprintf(buf, n, "-");
}

static int ffr_cmd(const struct opts *o)
{
    unsigned F = (unsigned)o->frame_bits;
    if (cli_frame_width(g_opts, "frame-bits", o->frame_bits))
        return 2;
    double bers[64];
    char what[300];
    snprintf(what, sizeof what, "%s", cli_where(g_opts, "bers"));
    int nb = cli_parse_list(o->bers, bers, 64, 0, 0.5, what);
    if (nb < 0)
        return 2;
    for (int i = 0; i < nb; i++)
        if (!(bers[i] >= 1e-30))
            return cli_fail(g_opts, "bers", "%g is not a bit error rate to measure; use rates "
                            "from 1e-30 to 0.5", bers[i]);
    /* about 7e6 frames per second (256-bit frames, development machine) */
    double est = (double)o->frames * nb * ((double)F / 256) / 7e6;
    if (est > 60) {
        char dur[32];
        cli_format_duration(dur, sizeof dur, est);
        fprintf(stderr, "warning: %llu frames at %d bit error rate%s take about %s; "
                "fewer --frames or --bers shorten it\n", (unsigned long long)o->frames, nb,
                nb == 1 ? "" : "s", dur);
    }
    fprintf(stderr, "rifl calc ffr: seed %llu\n", (unsigned long long)o->seed);
    if (o->csv)
        printf("ber,frames,hit,undetected,ffr_measured,ffr_eq15,ratio,undetected_below_4,"
                   "w4_hit,w4_undetected,w5_hit,w5_undetected,w6plus_hit,w6plus_undetected\n");
    else
        printf("undetected frame errors, %u-bit frames, %llu frames per BER (Eq. 15: 12-bit "
               "CRC, HD 4)\n%-8s %12s %10s %14s %14s %8s %10s %22s\n", F,
               (unsigned long long)o->frames, "BER", "frames hit", "undetected", "measured FFR",
               "Eq. 15 FFR", "ratio", "<4 errors", "undetected/hit: 4 5 6+");
    for (int i = 0; i < nb; i++) {
        double ber = bers[i];
        rifl_ffr_count c;
        rifl_ffr_measure(F, ber, o->frames, o->seed, &c);
        double meas = (double)c.undetected / (double)c.frames;
        double eq = rifl_eq_ffr(F, 12, 4, ber);
        char ratio[32];
        if (eq > 0)
            snprintf(ratio, sizeof ratio, "%.3f", meas / eq);
        else
            snprintf(ratio, sizeof ratio, "%s", o->csv ? "" : "-");
        uint64_t low = c.undetected_by_w[1] + c.undetected_by_w[2] + c.undetected_by_w[3];
        uint64_t h6 = 0, u6 = 0;
        for (int w = 6; w <= 16; w++) {
            h6 += c.hit_by_w[w];
            u6 += c.undetected_by_w[w];
        }
        if (o->csv)
            printf("%g,%llu,%llu,%llu,%.4g,%.4g,%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n", ber,
                   (unsigned long long)c.frames, (unsigned long long)c.hit,
                   (unsigned long long)c.undetected, meas, eq, ratio,
                   (unsigned long long)low, (unsigned long long)c.hit_by_w[4],
                   (unsigned long long)c.undetected_by_w[4], (unsigned long long)c.hit_by_w[5],
                   (unsigned long long)c.undetected_by_w[5], (unsigned long long)h6,
                   (unsigned long long)u6);
        else {
            char w4[32], w5[32], w6[32];
            per_text(w4, sizeof w4, c.hit_by_w[4], c.undetected_by_w[4]);
            per_text(w5, sizeof w5, c.hit_by_w[5], c.undetected_by_w[5]);
            per_text(w6, sizeof w6, h6, u6);
            printf("%-8g %12llu %10llu %14.4g %14.4g %8s %10llu   %s %s %s\n", ber,
                   (unsigned long long)c.hit, (unsigned long long)c.undetected, meas, eq, ratio,
                   (unsigned long long)low, w4, w5, w6);
        }
        fflush(stdout);
    }
    return 0;
}

/* which modes use each option; an option set for another mode is refused */
struct use {
    const char *name, *modes;
};
static const struct use uses[] = {
    { "frame-bits", "link ffr" }, { "rate", "link table5" }, { "cable", "link" },
    { "ns-per-m", "link" }, { "transceiver-ns", "link" }, { "pipeline", "link" },
    { "ber", "link" }, { "crc-bits", "link" }, { "hd", "link" }, { "goodput", "link" },
    { "sweep-csv", "table5" }, { "max-len", "fig8" }, { "bers", "ffr" }, { "frames", "ffr" },
    { "seed", "ffr" }, { "csv", "link table2 table3 table5 fig8 ffr" },
};

static int check_uses(const char *mode, const struct opts *o)
{
    for (size_t i = 0; i < sizeof uses / sizeof uses[0]; i++) {
        char list[64];
        snprintf(list, sizeof list, " %s ", uses[i].modes);
        char m[32];
        snprintf(m, sizeof m, " %s ", mode);
        if (strstr(list, m))
            continue;
        char why[200];
        snprintf(why, sizeof why, "in 'rifl calc %s' (it is used by: %s)", mode, uses[i].modes);
        if (cli_unused(g_opts, uses[i].name, why))
            return 2;
    }
    if (!strcmp(mode, "table5") && o->sweep_csv &&
        cli_unused(g_opts, "rate", "with --sweep-csv (the goodput comes from the file)"))
        return 2;
    return 0;
}

static int run(int argc, char **argv)
{
    struct opts o = {
        .frame_bits = 256, .crc_bits = 12, .hd = 4, .pipeline = 2, .frames = 10000000,
        .seed = 1, .max_len = 1500, .rate = 112, .cable = 10, .ns_per_m = 5, .xcvr = 80,
        .ber = 1e-7, .bers = "3e-2,1e-2,3e-3,1e-3",
    };
    struct cli_opt opts[] = {
        { "frame-bits", CLI_UINT, &o.frame_bits, "frame width F: 64, 128, 256, 512, 1024 or "
          "2048 (link, ffr)", 64, 2048 },
        { "rate", CLI_DOUBLE, &o.rate, "line rate, Gbit/s (link, table5)", 0.001, 100000 },
        { "cable", CLI_DOUBLE, &o.cable, "cable length, m (link)", 0, 100000 },
        { "ns-per-m", CLI_DOUBLE, &o.ns_per_m, "propagation delay, ns/m (link)", RIFL_LINK_MIN_NS_PER_M, 10000 },
        { "transceiver-ns", CLI_DOUBLE, &o.xcvr, "one-way transceiver latency, ns (link)", 0,
          1e7 },
        { "pipeline", CLI_UINT, &o.pipeline, "pipeline frames added to the round trip (link)",
          0, 1000000 },
        { "ber", CLI_DOUBLE, &o.ber, "bit error rate (link)", 0, 0.5 },
        { "crc-bits", CLI_UINT, &o.crc_bits, "checksum width m (link)", 1, 32 },
        { "hd", CLI_UINT, &o.hd, "Hamming distance of the checksum (link)", 1, 64 },
        { "goodput", CLI_DOUBLE, &o.goodput, "actual bandwidth for Eq. 26, Gbit/s; 0: the "
          "efficiency of full frames (link)", 0, 100000 },
        { "sweep-csv", CLI_STRING, &o.sweep_csv, "rifl sim link sweep CSV (table5)", 0, 0 },
        { "max-len", CLI_UINT, &o.max_len, "largest payload, bytes (fig8)", 1, 65536 },
        { "bers", CLI_STRING, &o.bers, "comma-separated bit error rates, at most 64 (ffr)", 0,
          0 },
        { "frames", CLI_UINT, &o.frames, "frames per bit error rate (ffr)", 1, 1e12 },
        { "seed", CLI_UINT, &o.seed, "seed (ffr)", 0, 18446744073709551615.0 },
        { "csv", CLI_FLAG, &o.csv, "CSV output (fig8 is always CSV)", 0, 0 },
        CLI_END,
    };
    g_opts = opts;
    char *pos[1];
    int np = 0;
    int rc = cli_parse(argc, argv, opts, "link|table2|table3|table5|fig8|ffr [options]",
                       "Evaluates the RIFL paper's equations:\n"
                       "  link    Eqs. 11-26 for your link (frame-ID and checksum widths,\n"
                       "          efficiency, MTBF, flow-control buffer)\n"
                       "  table2  minimal frame-ID and checksum widths per frame width\n"
                       "  table3  verification-code width and efficiency per frame width\n"
                       "  table5  MTBF against BER from Eq. 26 (with --sweep-csv: measured goodput)\n"
                       "  fig8    CSV of framing efficiency against payload size: RIFL 256/512,\n"
                       "          Aurora 64b/66b, Interlaken, 100G Ethernet models\n"
                       "  ffr     measured rate of corrupted frames passing verification vs Eq. 15",
                       pos, 1, &np);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (np != 1) {
        fprintf(stderr, "error: 'rifl calc' needs one of link, table2, table3, table5, fig8, "
                "ffr (see --help)\n");
        return 2;
    }
    static const char *const modes[] = { "link", "table2", "table3", "table5", "fig8", "ffr",
                                         NULL };
    bool known = false;
    for (const char *const *m = modes; *m; m++)
        known = known || !strcmp(*m, pos[0]);
    if (!known) {
        fprintf(stderr, "error: unknown calculation '%s'; use link, table2, table3, table5, "
                "fig8 or ffr\n", pos[0]);
        return 2;
    }
    if (check_uses(pos[0], &o))
        return 2;
    if (!strcmp(pos[0], "link"))
        return link_cmd(&o);
    if (!strcmp(pos[0], "table2")) {
        table2(&o);
        return 0;
    }
    if (!strcmp(pos[0], "table3")) {
        table3(&o);
        return 0;
    }
    if (!strcmp(pos[0], "table5"))
        return table5(&o);
    if (!strcmp(pos[0], "fig8")) {
        fig8(&o);
        return 0;
    }
    if (!strcmp(pos[0], "ffr"))
        return ffr_cmd(&o);
    fprintf(stderr, "error: unknown calculation '%s'; use link, table2, table3, table5, fig8 "
            "or ffr\n", pos[0]);
    return 2;
}

const struct rifl_command rifl_cmd_calc = {
    "calc", "the RIFL paper's equations: sizing, efficiency, MTBF, framing models", run
};

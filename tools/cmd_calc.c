/* `rifl calc`: the paper's equations for a user's link, the paper's Tables
 * 2, 3 and 5, the Fig. 8 framing models, and a measurement of undetected
 * frame errors against Eq. 15. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rifl/analysis.h"
#include "rifl/lane.h"

struct opts {
    uint64_t frame_bits, crc_bits, hd, pipeline, frames, seed, max_len;
    double rate, cable, ns_per_m, xcvr, ber, goodput, rtt;
    const char *sweep_csv, *bers;
    bool csv;
};

static int link_cmd(const struct opts *o)
{
    unsigned F = (unsigned)o->frame_bits;
    if (rifl_frame_width_check(F) != RIFL_OK) {
        fprintf(stderr, "error: frame width %u is not supported; use 64, 128, 256, 512, 1024 "
                "or 2048\n", F);
        return 2;
    }
    if (!(o->ber >= 0 && o->ber <= 0.5)) {
        fprintf(stderr, "error: bit error rate %g is out of range; use 0 to 0.5\n", o->ber);
        return 2;
    }
    rifl_link_params lp = { o->rate, o->cable, o->ns_per_m, o->xcvr };
    double rtt_ns = 2 * (o->xcvr + o->cable * o->ns_per_m);
    double rtt_f = rifl_link_rtt_frames(&lp, F, (unsigned)o->pipeline);
    unsigned k13 = rifl_eq_fid_bits(o->rate, rtt_ns, F);
    unsigned keng = rifl_lane_min_fid_bits(&lp, F, (unsigned)o->pipeline);
    unsigned m = (unsigned)o->crc_bits;
    unsigned sv = rifl_eq_verification_bits(keng > m ? keng : m);
    double ffr = rifl_eq_ffr(F, m, (unsigned)o->hd, o->ber);
    double gp = o->goodput > 0 ? o->goodput : o->rate * rifl_eq_efficiency(F, 12);
    rifl_fc_sizing fc = rifl_eq_fc(rtt_f, 2.0 * (1u << keng));
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
    printf("Eq. 14  time to 1%% failure probability at the line rate: %.4g years\n",
           rifl_eq_mtbf_years(ffr, o->rate, F, 0.01));
    printf("Eq. 26  same at %.3f Gbit/s of payload:                  %.4g years\n", gp,
           rifl_eq_mtbf_years(ffr, gp, F, 0.01));
    printf("        mean time to the first undetected frame there:   %.4g years\n",
           rifl_eq_mean_years(ffr, gp, F));
    printf("Eq. 23  flow-control buffer >= 1.5 x RTT:                %.1f frames (default "
           "2^(K+1) = %u)\n", fc.min_buffer, 2u << keng);
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
 * file (columns ber and goodput_gbps) */
static double sweep_goodput(const char *path, double ber, double *found)
{
    size_t len;
    char *buf = cli_read_file(path, &len);
    if (!buf)
        return NAN;
    int cb = -1, cg = -1;
    double best = NAN, bestd = INFINITY;
    char *save = NULL;
    bool header = true;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        int col = 0;
        double vb = NAN, vg = NAN;
        char *s2 = NULL;
        for (char *f = strtok_r(line, ",", &s2); f; f = strtok_r(NULL, ",", &s2), col++) {
            if (header) {
                if (!strcmp(f, "ber"))
                    cb = col;
                if (!strcmp(f, "goodput_gbps"))
                    cg = col;
            } else if (col == cb)
                vb = atof(f);
            else if (col == cg)
                vg = atof(f);
        }
        if (!header && vb > 0 && fabs(log10(vb / ber)) < bestd) {
            bestd = fabs(log10(vb / ber));
            best = vg;
            *found = vb;
        }
        header = false;
    }
    free(buf);
    if (cb < 0 || cg < 0) {
        fprintf(stderr, "error: %s has no 'ber' and 'goodput_gbps' columns (make it with "
                "rifl sim link --sweep ... --csv)\n", path);
        return NAN;
    }
    return bestd < 0.05 ? best : NAN;
}

static int table5(const struct opts *o)
{
    static const double bers[4] = { 1e-11, 1e-9, 1e-7, 1e-5 };
    static const double paper[4] = { 1.81e23, 1.81e15, 1.88e8, 6.33 };
    unsigned F = 256, m = 12, hd = 4;
    if (o->csv)
        printf("ber,goodput_gbps,ffr,mtbf_years_1pct,mtbf_years_mean,paper_years\n");
    else
        printf("Table 5: F = %u, %u-bit CRC with HD %u, Eq. 26 with the measured goodput%s%s\n"
               "%-8s %10s %11s %14s %14s %12s\n", F, m, hd,
               o->sweep_csv ? " from " : " (no sweep file: payload line rate 105 Gbit/s)",
               o->sweep_csv ? o->sweep_csv : "", "BER", "Gbit/s", "FFR", "1% (y)",
               "mean (y)", "paper (y)");
    for (int i = 0; i < 4; i++) {
        double gp = o->rate * rifl_payload_bytes(F) * 8.0 / F, at = bers[i];
        if (o->sweep_csv) {
            gp = sweep_goodput(o->sweep_csv, bers[i], &at);
            if (isnan(gp)) {
                fprintf(stderr, "error: no point near BER %g in %s\n", bers[i], o->sweep_csv);
                return 2;
            }
        }
        double ffr = rifl_eq_ffr(F, m, hd, bers[i]);
        double y1 = rifl_eq_mtbf_years(ffr, gp, F, 0.01), ym = rifl_eq_mean_years(ffr, gp, F);
        if (o->csv)
            printf("%g,%.4f,%.4g,%.4g,%.4g,%.3g\n", bers[i], gp, ffr, y1, ym, paper[i]);
        else
            printf("%-8.0e %10.3f %11.3g %14.3g %14.3g %12.3g\n", bers[i], gp, ffr, y1, ym,
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

static int ffr_cmd(const struct opts *o)
{
    unsigned F = (unsigned)o->frame_bits;
    if (rifl_frame_width_check(F) != RIFL_OK) {
        fprintf(stderr, "error: frame width %u is not supported\n", F);
        return 2;
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
    char *list = strdup(o->bers), *save = NULL;
    int rc = 0;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        double ber;
        if (cli_parse_double(tok, &ber) || !(ber > 0 && ber <= 0.5)) {
            fprintf(stderr, "error: '%s' is not a bit error rate above 0 and at most 0.5\n", tok);
            rc = 2;
            break;
        }
        rifl_ffr_count c;
        rifl_ffr_measure(F, ber, o->frames, o->seed, &c);
        double meas = (double)c.undetected / (double)c.frames;
        double eq = rifl_eq_ffr(F, 12, 4, ber);
        uint64_t low = c.undetected_by_w[1] + c.undetected_by_w[2] + c.undetected_by_w[3];
        uint64_t h6 = 0, u6 = 0;
        for (int w = 6; w <= 16; w++) {
            h6 += c.hit_by_w[w];
            u6 += c.undetected_by_w[w];
        }
        if (o->csv)
            printf("%g,%llu,%llu,%llu,%.4g,%.4g,%.3f,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n", ber,
                   (unsigned long long)c.frames, (unsigned long long)c.hit,
                   (unsigned long long)c.undetected, meas, eq, meas / eq,
                   (unsigned long long)low, (unsigned long long)c.hit_by_w[4],
                   (unsigned long long)c.undetected_by_w[4], (unsigned long long)c.hit_by_w[5],
                   (unsigned long long)c.undetected_by_w[5], (unsigned long long)h6,
                   (unsigned long long)u6);
        else
            printf("%-8g %12llu %10llu %14.4g %14.4g %8.3f %10llu   1/%.0f 1/%.0f 1/%.0f\n", ber,
                   (unsigned long long)c.hit, (unsigned long long)c.undetected, meas, eq,
                   meas / eq, (unsigned long long)low,
                   (double)c.hit_by_w[4] / (double)c.undetected_by_w[4],
                   (double)c.hit_by_w[5] / (double)c.undetected_by_w[5], (double)h6 / (double)u6);
        fflush(stdout);
    }
    free(list);
    return rc;
}

static int run(int argc, char **argv)
{
    struct opts o = {
        .frame_bits = 256, .crc_bits = 12, .hd = 4, .pipeline = 2, .frames = 10000000,
        .seed = 1, .max_len = 1500, .rate = 112, .cable = 10, .ns_per_m = 5, .xcvr = 80,
        .ber = 1e-7, .bers = "3e-2,1e-2,3e-3,1e-3",
    };
    struct cli_opt opts[] = {
        { "frame-bits", CLI_UINT, &o.frame_bits, "frame width F", 0, 0 },
        { "rate", CLI_DOUBLE, &o.rate, "line rate, Gbit/s", 0, 0 },
        { "cable", CLI_DOUBLE, &o.cable, "cable length, m", 0, 0 },
        { "ns-per-m", CLI_DOUBLE, &o.ns_per_m, "propagation delay, ns/m", 0, 0 },
        { "transceiver-ns", CLI_DOUBLE, &o.xcvr, "one-way transceiver latency, ns", 0, 0 },
        { "pipeline", CLI_UINT, &o.pipeline, "pipeline frames added to the round trip", 0, 0 },
        { "ber", CLI_DOUBLE, &o.ber, "bit error rate (link)", 0, 0 },
        { "crc-bits", CLI_UINT, &o.crc_bits, "checksum width m (link)", 1, 32 },
        { "hd", CLI_UINT, &o.hd, "Hamming distance of the checksum (link)", 1, 64 },
        { "goodput", CLI_DOUBLE, &o.goodput, "actual bandwidth for Eq. 26, Gbit/s (link)", 0, 0 },
        { "sweep-csv", CLI_STRING, &o.sweep_csv, "rifl sim link sweep CSV (table5)", 0, 0 },
        { "max-len", CLI_UINT, &o.max_len, "largest payload, bytes (fig8)", 1, 65536 },
        { "bers", CLI_STRING, &o.bers, "comma-separated bit error rates (ffr)", 0, 0 },
        { "frames", CLI_UINT, &o.frames, "frames per bit error rate (ffr)", 1, 1e12 },
        { "seed", CLI_UINT, &o.seed, "seed (ffr)", 0, 0 },
        { "csv", CLI_FLAG, &o.csv, "CSV output", 0, 0 },
        CLI_END,
    };
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
    if (!(o.rate > 0)) {
        fprintf(stderr, "error: rate %g Gbit/s must be positive\n", o.rate);
        return 2;
    }
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

/* The paper's equations against the paper's published tables, the framing
 * model against the simulator, and the measured undetected-error rate
 * against Eq. 15. */
#include <math.h>

#include "testlib.h"

#include "rifl/sim/analysis.h"
#include "rifl/sim/linksim.h"

static bool near(double a, double b, double rel) { return fabs(a - b) <= rel * fabs(b); }

/* Table 2 of the paper: 100 Gbit/s, RTT 500 ns, BER 1e-7 */
static void t_table2(void)
{
    static const unsigned F[5] = { 128, 256, 512, 1024, 2048 };
    static const unsigned K[5] = { 9, 8, 7, 6, 5 }, M[5] = { 8, 9, 10, 11, 12 };
    static const double mtbf[5] = { 9.7e4, 2.4e4, 5.9e3, 1.5e3, 3.6e2 };
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_U(rifl_eq_fid_bits(100, 500, F[i]), K[i]);
        unsigned m = rifl_eq_hd4_crc_bits(F[i] - 2);
        CHECK_EQ_U(m, M[i]);
        double y = rifl_eq_mtbf_years(rifl_eq_ffr(F[i], m, 4, 1e-7), 100, F[i], 0.01);
        CHECK_MSG(near(y, mtbf[i], 0.05), "F %u: %g years, paper %g", F[i], y, mtbf[i]);
    }
}

/* Table 3: S_ver = 12 everywhere, efficiency 1 - 16/F */
static void t_table3(void)
{
    static const unsigned F[5] = { 128, 256, 512, 1024, 2048 };
    static const double eff[5] = { 0.875, 0.9375, 0.9687, 0.9843, 0.9922 };
    for (int i = 0; i < 5; i++) {
        unsigned k = rifl_eq_fid_bits(100, 500, F[i]), m = rifl_eq_hd4_crc_bits(F[i] - 2);
        unsigned sv = rifl_eq_verification_bits(k > m ? k : m);
        CHECK_EQ_U(sv, 12);
        CHECK(fabs(rifl_eq_efficiency(F[i], sv) - eff[i]) < 2e-4);
    }
}

/* Table 5 in its mean-time reading with the payload rate (105 Gbit/s) */
static void t_table5(void)
{
    double g = 112.0 * 240 / 256;
    CHECK(near(rifl_eq_mean_years(rifl_eq_ffr(256, 12, 4, 1e-11), g, 256), 1.81e23, 0.02));
    CHECK(near(rifl_eq_mean_years(rifl_eq_ffr(256, 12, 4, 1e-9), g, 256), 1.81e15, 0.02));
    /* the 1%-probability reading is 99.5 times shorter */
    double f = rifl_eq_ffr(256, 12, 4, 1e-7);
    CHECK(near(rifl_eq_mean_years(f, g, 256) / rifl_eq_mtbf_years(f, g, 256, 0.01), 99.5, 0.01));
}

/* the RIFL framing model agrees with what the simulator delivers */
static void t_model_vs_sim(void)
{
    static const size_t sizes[] = { 1, 31, 64, 1500 };
    for (int i = 0; i < 4; i++) {
        rifl_linksim_config c;
        rifl_linksim_defaults(&c);
        c.min_len = c.max_len = sizes[i];
        c.bytes = 3000000;
        rifl_linksim_result r;
        char msg[256];
        REQUIRE(rifl_linksim_run(&c, &r, msg, sizeof msg) == RIFL_OK);
        double model = rifl_model_efficiency(RIFL_MODEL_RIFL, 256, sizes[i]);
        CHECK_MSG(near(r.efficiency, model, 0.01), "size %zu: simulated %f, model %f", sizes[i],
                  r.efficiency, model);
        rifl_linksim_result_free(&r);
    }
}

/* corrupted frames passing verification: none with 1-3 errors (HD 4), and
 * at a high BER the rate is that of Eq. 15 */
static void t_ffr_measured(void)
{
    rifl_ffr_count c;
    REQUIRE(rifl_ffr_measure(256, 3e-2, test_long_run ? 20000000 : 2000000, test_seed, &c) ==
            RIFL_OK);
    CHECK_EQ_U(c.undetected_by_w[1] + c.undetected_by_w[2] + c.undetected_by_w[3], 0);
    CHECK(c.hit_by_w[1] + c.hit_by_w[2] + c.hit_by_w[3] > 0);
    double meas = (double)c.undetected / (double)c.frames, eq = rifl_eq_ffr(256, 12, 4, 3e-2);
    double sd = sqrt((double)c.undetected) / (double)c.frames;
    printf("  BER 3e-2: %llu undetected of %llu frames: %.3g, Eq. 15 %.3g\n",
           (unsigned long long)c.undetected, (unsigned long long)c.frames, meas, eq);
    CHECK(fabs(meas - eq) < 5 * sd + 0.1 * eq);
}

TEST_MAIN({ "table2", t_table2 }, { "table3", t_table3 }, { "table5", t_table5 },
          { "model_vs_sim", t_model_vs_sim }, { "ffr_measured", t_ffr_measured })

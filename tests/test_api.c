/* The umbrella header compiles on its own, every error code has a text, and
 * the public calls answer bad arguments with an error (and, where they take
 * a message buffer, a message naming the argument) instead of crashing. */
#include "testlib.h"

#include "rifl/sim/sim.h"

static void t_error_texts(void)
{
    for (int e = 0; e >= RIFL_ERR_TIMEOUT; e--) {
        const char *t = rifl_strerror(e);
        CHECK(t != NULL && strcmp(t, "unknown error") != 0);
    }
    CHECK(strcmp(rifl_strerror(-999), "unknown error") == 0);
}

/* NULL output pointer and NULL configuration, for every call that creates
 * an object or runs a simulation from a configuration */
static void t_null_arguments(void)
{
    char msg[256];
#define NULL_CASE(call, fn, arg)                                                   \
    do {                                                                           \
        msg[0] = '\0';                                                             \
        CHECK_EQ_I(call, RIFL_ERR_INVALID_ARG);                                    \
        CHECK_MSG(strstr(msg, fn) && strstr(msg, arg), "message '%s'", msg);       \
    } while (0)
    rifl_lane *l = (rifl_lane *)&msg;
    NULL_CASE(rifl_lane_create(&rifl_lane_default_config, NULL, msg, sizeof msg),
              "rifl_lane_create", "out");
    NULL_CASE(rifl_lane_create(NULL, &l, msg, sizeof msg), "rifl_lane_config_check",
              "configuration");
    CHECK(l == NULL); /* *out is cleared before any refusal */
    NULL_CASE(rifl_lane_config_check(NULL, msg, sizeof msg), "rifl_lane_config_check",
              "configuration");
    rifl_credit *c;
    NULL_CASE(rifl_credit_create(&rifl_credit_default_config, NULL, msg, sizeof msg),
              "rifl_credit_create", "out");
    NULL_CASE(rifl_credit_create(NULL, &c, msg, sizeof msg), "rifl_credit_config_check",
              "configuration");
    rifl_phy_channel_config cc = { .frame_bits = 256 };
    rifl_phy *ch;
    NULL_CASE(rifl_phy_channel_create(&cc, NULL, msg, sizeof msg), "rifl_phy_channel_create",
              "out");
    NULL_CASE(rifl_phy_channel_create(NULL, &ch, msg, sizeof msg), "rifl_phy_channel_create",
              "cfg");
    NULL_CASE(rifl_phy_loopback_create(256, 1, NULL, msg, sizeof msg), "rifl_phy_loopback_create",
              "out");
    rifl_port *po;
    NULL_CASE(rifl_port_create(&rifl_port_default_config, NULL, NULL, msg, sizeof msg),
              "rifl_port_create", "out");
    NULL_CASE(rifl_port_create(NULL, NULL, &po, msg, sizeof msg), "rifl_port_create", "cfg");
    NULL_CASE(rifl_port_config_check(NULL, msg, sizeof msg), "rifl_port_config_check", "cfg");
    rifl_pair_config pc = { .lane = rifl_lane_default_config };
    rifl_pair *p;
    NULL_CASE(rifl_pair_create(&pc, NULL, msg, sizeof msg), "rifl_pair_create", "out");
    NULL_CASE(rifl_pair_create(NULL, &p, msg, sizeof msg), "rifl_pair_create", "cfg");
    /* the caller's lanes: both or neither */
    rifl_lane *own = NULL;
    REQUIRE(rifl_lane_create(&rifl_lane_default_config, &own, msg, sizeof msg) == RIFL_OK);
    pc.lanes[1] = own;
    NULL_CASE(rifl_pair_create(&pc, &p, msg, sizeof msg), "rifl_pair_create", "both lanes");
    rifl_lane_free(own);
    pc.lanes[1] = NULL;
    rifl_switch *sw;
    NULL_CASE(rifl_switch_create(&rifl_switch_default_config, NULL, msg, sizeof msg),
              "rifl_switch_create", "out");
    NULL_CASE(rifl_switch_create(NULL, &sw, msg, sizeof msg), "rifl_switch_create", "cfg");
    rifl_ssim *ss;
    NULL_CASE(rifl_ssim_create(&rifl_ssim_default_config, NULL, msg, sizeof msg),
              "rifl_ssim_create", "out");
    NULL_CASE(rifl_ssim_create(NULL, &ss, msg, sizeof msg), "rifl_ssim_create", "cfg");
    rifl_linksim_config lc;
    rifl_linksim_defaults(&lc);
    rifl_linksim_result lr;
    NULL_CASE(rifl_linksim_run(&lc, NULL, msg, sizeof msg), "rifl_linksim_run", "res");
    NULL_CASE(rifl_linksim_run(NULL, &lr, msg, sizeof msg), "rifl_linksim_run", "cfg");
    rifl_csim_config sc;
    rifl_csim_default_config(&sc);
    rifl_csim_result sr;
    NULL_CASE(rifl_csim_run(&sc, NULL, msg, sizeof msg), "rifl_csim_run", "res");
    NULL_CASE(rifl_csim_run(NULL, &sr, msg, sizeof msg), "rifl_csim_run", "cfg");
    rifl_clane_config lnc;
    rifl_clane_default_config(&lnc);
    rifl_clane_result lnr;
    NULL_CASE(rifl_clane_run(&lnc, NULL, msg, sizeof msg), "rifl_clane_run", "res");
    NULL_CASE(rifl_clane_run(NULL, &lnr, msg, sizeof msg), "rifl_clane_run", "cfg");
    NULL_CASE(rifl_csim_check(NULL, msg, sizeof msg), "rifl_csim_check", "cfg");
    NULL_CASE(rifl_clane_check(NULL, msg, sizeof msg), "rifl_clane_check", "cfg");
    /* the check-only calls refuse what the run calls refuse */
    CHECK_EQ_I(rifl_csim_check(&sc, msg, sizeof msg), RIFL_OK);
    CHECK_EQ_I(rifl_clane_check(&lnc, msg, sizeof msg), RIFL_OK);
    sc.vls = 0;
    lnc.vls = 0;
    CHECK_EQ_I(rifl_csim_check(&sc, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK_EQ_I(rifl_csim_run(&sc, &sr, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK_EQ_I(rifl_clane_check(&lnc, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK_EQ_I(rifl_clane_run(&lnc, &lnr, msg, sizeof msg), RIFL_ERR_CONFIG);
    rifl_clane_default_config(&lnc);
    lnc.lane.frame_bits = 100;
    CHECK_EQ_I(rifl_clane_check(&lnc, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "frame width 100") != NULL);
#undef NULL_CASE
    /* a refused configuration is RIFL_ERR_CONFIG, with the reason */
    rifl_lane_config bad = rifl_lane_default_config;
    bad.frame_bits = 100;
    CHECK_EQ_I(rifl_lane_create(&bad, &l, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "frame width 100") != NULL);
    /* and no message buffer at all is fine */
    CHECK_EQ_I(rifl_lane_create(NULL, &l, NULL, 0), RIFL_ERR_INVALID_ARG);
}

/* The codec's value-returning calls with a NULL frame or a width that is not
 * a RIFL frame width return their out-of-range marker and touch nothing. */
static void t_codec_bad_arguments(void)
{
    uint8_t f[RIFL_FRAME_MAX_BYTES * 2];
    memset(f, 0xA5, sizeof f);
    static const unsigned widths[] = { 0, 63, 100, 300, 4096, 65536, 0xFFFFFFFFu };
    CHECK_EQ_U(rifl_crc12(NULL, 256), RIFL_CRC12_INVALID);
    CHECK_EQ_U(rifl_crc12_ref(NULL, 256), RIFL_CRC12_INVALID);
    CHECK_EQ_U(rifl_scramble(NULL, 256, 5), RIFL_SCRAMBLER_INVALID);
    CHECK_EQ_U(rifl_descramble(NULL, 256, 5), RIFL_SCRAMBLER_INVALID);
    CHECK_EQ_U(rifl_scramble_ref(NULL, 256, 5), RIFL_SCRAMBLER_INVALID);
    CHECK_EQ_U(rifl_descramble_ref(NULL, 256, 5), RIFL_SCRAMBLER_INVALID);
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        CHECK_EQ_U(rifl_crc12(f, widths[i]), RIFL_CRC12_INVALID);
        CHECK_EQ_U(rifl_crc12_ref(f, widths[i]), RIFL_CRC12_INVALID);
        CHECK_EQ_U(rifl_scramble(f, widths[i], 1), RIFL_SCRAMBLER_INVALID);
        CHECK_EQ_U(rifl_descramble(f, widths[i], 1), RIFL_SCRAMBLER_INVALID);
    }
    for (size_t i = 0; i < sizeof f; i++)
        CHECK(f[i] == 0xA5);
    /* every real width gives a 12-bit CRC and a 33-bit state */
    for (unsigned w = 64; w <= 2048; w *= 2) {
        CHECK(rifl_crc12(f, w) <= 0xFFF);
        CHECK(rifl_scramble(f, w, 1) <= RIFL_SCRAMBLER_MASK);
    }
    rifl_frame_info fi;
    uint64_t st = 0;
    CHECK_EQ_I(rifl_frame_decode(NULL, 256, &st, NULL, &fi), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_frame_decode(f, 100, &st, NULL, &fi), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_frame_encode(f, 256, RIFL_SYN_DATA, 0, NULL, 4096, &st), RIFL_ERR_INVALID_ARG);
}

/* rifl_lane_read with no room to read into is an error, not RIFL_OK with
 * nothing read (which a caller would retry forever). */
static void t_lane_read_capacity(void)
{
    rifl_lane_config c = rifl_lane_default_config;
    c.rx_lock_frames = 0;
    rifl_lane *a, *b;
    REQUIRE(rifl_lane_create(&c, &a, NULL, 0) == RIFL_OK);
    REQUIRE(rifl_lane_create(&c, &b, NULL, 0) == RIFL_OK);
    uint8_t wa[32], wb[32], buf[64];
    size_t n = 99;
    int eop = 7;
    CHECK_EQ_I(rifl_lane_read(b, buf, 0, &n, &eop), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_lane_read(b, NULL, 10, &n, &eop), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_lane_read(b, buf, sizeof buf, &n, &eop), RIFL_ERR_AGAIN);
    CHECK_EQ_I(rifl_lane_send(a, "hello", 5), RIFL_OK);
    int got = 0;
    for (int t = 0; t < 2000 && !got; t++) {
        rifl_lane_tx(a, (uint64_t)t, wa);
        rifl_lane_tx(b, (uint64_t)t, wb);
        rifl_lane_rx(a, (uint64_t)t, wb, NULL);
        rifl_lane_rx(b, (uint64_t)t, wa, NULL);
        got = rifl_lane_rx_backlog(b) > 0;
    }
    REQUIRE(got);
    CHECK_EQ_I(rifl_lane_read(b, buf, 0, &n, &eop), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_lane_read(b, buf, 2, &n, &eop), RIFL_OK);
    CHECK(n == 2 && eop == 0 && memcmp(buf, "he", 2) == 0);
    CHECK_EQ_I(rifl_lane_read(b, buf, sizeof buf, &n, &eop), RIFL_OK);
    CHECK(n == 3 && eop == 1 && memcmp(buf, "llo", 3) == 0);
    rifl_lane_free(a);
    rifl_lane_free(b);
}

TEST_MAIN({ "error_texts", t_error_texts },
          { "null_arguments", t_null_arguments },
          { "codec_bad_arguments", t_codec_bad_arguments },
          { "lane_read_capacity", t_lane_read_capacity })

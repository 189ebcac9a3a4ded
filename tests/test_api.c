/* The umbrella header compiles on its own, every error code has a text, and
 * the public calls answer bad arguments with an error (and, where they take
 * a message buffer, a message naming the argument) instead of crashing. */
#include "testlib.h"

#include <math.h>

#include "rifl/sim/sim.h"
#include "rifl/udplink.h"

static void t_error_texts(void)
{
    for (int e = 0; e >= RIFL_ERR_PEER_RESTARTED; e--) {
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

/* Handles, outputs and sizes the callers got wrong: an error or a harmless
 * answer, never a crash or a wrapped number. */
static void t_handles_and_sizes(void)
{
    char msg[256] = "";
    /* a region larger than the address space below the peripheral window */
    rifl_rdma_config rc = rifl_rdma_default_config;
    rifl_rdma *e = NULL;
    REQUIRE(rifl_rdma_open(&rc, &e, msg, sizeof msg) == RIFL_OK);
    REQUIRE(rifl_rdma_alloc_pd(e, 1) == RIFL_OK);
    rifl_rdma_mr mr;
    uint8_t mem[64];
    CHECK_EQ_I(rifl_rdma_reg_mr(e, 1, mem, SIZE_MAX, 7, &mr), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_rdma_reg_mr(e, 1, mem, (size_t)RIFL_RDMA_PERIPHERAL_BASE, 7, &mr),
               RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_rdma_reg_mr(e, 1, mem, sizeof mem, 7, &mr), RIFL_OK);
    rifl_rdma_close(e);
    uint8_t buf[64] = { 0 };
    CHECK_EQ_I(rifl_rdma_packet_parse(buf, sizeof buf, NULL), RIFL_RDMA_PKT_NO_OUTPUT);
    CHECK_EQ_I(rifl_rdma_compact_parse(buf, sizeof buf, NULL), RIFL_RDMA_PKT_NO_OUTPUT);
    CHECK(strcmp(rifl_rdma_check_name(RIFL_RDMA_PKT_NO_OUTPUT), "no_output") == 0);
    CHECK_EQ_U(rifl_crc32c(NULL, 5), rifl_crc32c(buf, 0));
    CHECK_EQ_U(rifl_crc32c_portable(NULL, 5), rifl_crc32c(buf, 0));
    /* flow control and arbitration */
    rifl_vlarb_entry ent[RIFL_VLARB_MAX_ENTRIES];
    unsigned n = 99;
    CHECK_EQ_I(rifl_vlarb_parse_table("0:1", NULL, &n, msg, sizeof msg), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_vlarb_parse_table("0:1", ent, NULL, msg, sizeof msg), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_credit_poll(NULL, 0, NULL), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_fc_tx_sent(NULL, 1), RIFL_ERR_INVALID_ARG);
    /* Layer 2 */
    rifl_topology *t = NULL;
    CHECK_EQ_I(rifl_topo_generate("single:2", NULL, msg, sizeof msg), RIFL_ERR_INVALID_ARG);
    CHECK_MSG(strstr(msg, "out") != NULL, "message '%s'", msg);
    REQUIRE(rifl_topo_generate("single:2", &t, msg, sizeof msg) == RIFL_OK);
    CHECK_EQ_I(rifl_topo_find(t, NULL), -1);
    rifl_topo_free(t);
    CHECK_EQ_U(rifl_l2_msg_cells(SIZE_MAX), 0);
    CHECK_EQ_U(rifl_l2_msg_cells((size_t)RIFL_L2_MSG_MAX + 1), 0);
    CHECK_EQ_U(rifl_l2_msg_cells(RIFL_L2_MSG_MAX), (RIFL_L2_MSG_MAX + 4 + 255) / 256);
    size_t len = 0;
    uint8_t cell[RIFL_L2_CELL_PAYLOAD] = { 0 };
    rifl_l2_reasm_init(NULL, buf, sizeof buf);
    CHECK_EQ_I(rifl_l2_reasm_push(NULL, cell, &len), RIFL_ERR_INVALID_ARG);
    rifl_l2_reasm ra;
    rifl_l2_reasm_init(&ra, buf, sizeof buf);
    CHECK_EQ_I(rifl_l2_reasm_push(&ra, NULL, &len), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_l2_reasm_push(&ra, cell, NULL), RIFL_ERR_INVALID_ARG);
    uint8_t d3[3] = { 7, 7, 7 };
    rifl_l2_fc_pack(NULL, d3);
    CHECK(d3[0] == 7 && d3[1] == 7 && d3[2] == 7);
    rifl_l2_hdr_advance(NULL, 0, 1);
    rifl_l2_hdr h;
    uint8_t route[1] = { 0 };
    REQUIRE(rifl_l2_hdr_make(&h, route, 1) == RIFL_OK);
    CHECK_EQ_I(rifl_l2_hdr_reply(&h, NULL), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_l2_rel_port(300, 1, 2), -1);
    /* the switch */
    rifl_switch_stats sst;
    memset(&sst, 0xff, sizeof sst);
    rifl_switch_get_stats(NULL, &sst);
    CHECK_EQ_U(sst.cells_out, 0);
    CHECK_EQ_U(rifl_switch_cells_held(NULL), 0);
    int16_t match[8];
    CHECK_EQ_U(rifl_islip_run(NULL, match, NULL), 0);
    CHECK_EQ_U(rifl_fabric_route(NULL, match, match, false), 0);
    rifl_switch_config sc = rifl_switch_default_config;
    sc.nports = 8;
    rifl_switch *sw = NULL;
    REQUIRE(rifl_switch_create(&sc, &sw, msg, sizeof msg) == RIFL_OK);
    rifl_cell out[8];
    uint8_t valid[8];
    CHECK_EQ_I(rifl_switch_step(sw, UINT64_MAX, out, valid, NULL, NULL), RIFL_ERR_INVALID_ARG);
    /* a notice for queue 6 of a 4-port switch downstream: ignored, counted;
     * the frame's other notice still applies */
    REQUIRE(rifl_switch_set_downstream(sw, 0, 4, 1) == RIFL_OK);
    rifl_l2_fc fc = { .on_valid = true, .on_queue = 6, .off_valid = true, .off_queue = 2 };
    CHECK_EQ_I(rifl_switch_fc_receive(sw, 0, &fc), RIFL_ERR_FRAME);
    fc = (rifl_l2_fc){ .on_valid = true, .on_queue = 3 };
    CHECK_EQ_I(rifl_switch_fc_receive(sw, 0, &fc), RIFL_OK);
    rifl_switch_get_stats(sw, &sst);
    CHECK_EQ_U(sst.fc_bad_queue, 1);
    CHECK_EQ_U(sst.fc_on_received, 1);
    CHECK_EQ_U(sst.fc_off_received, 1);
    rifl_switch_free(sw);
    /* lanes, bonds, text */
    CHECK_EQ_U(rifl_lane_send_space(NULL), 0);
    CHECK(rifl_link_rtt_frames(NULL, 256, 0) == 0);
    CHECK_EQ_U(rifl_lane_replay_tail(NULL), 0);
    CHECK_EQ_U(rifl_lane_min_replay_tail(NULL), 0);
    rifl_lane *l = NULL;
    REQUIRE(rifl_lane_create(&rifl_lane_default_config, &l, msg, sizeof msg) == RIFL_OK);
    CHECK_EQ_I(rifl_lane_count_refused(l, UINT64_MAX), RIFL_OK);
    CHECK_EQ_I(rifl_lane_count_refused(l, UINT64_MAX), RIFL_OK);
    CHECK(rifl_lane_get_stats(l)->tx_rejected == UINT64_MAX);
    rifl_lane_free(l);
    rifl_bond_config bc = { .lane = rifl_lane_default_config, .lanes = 2 };
    rifl_bond *b = NULL;
    REQUIRE(rifl_bond_create(&bc, &b, msg, sizeof msg) == RIFL_OK);
    int eop = 0;
    CHECK_EQ_I(rifl_bond_read(b, buf, 10, NULL, &eop), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_bond_count_refused(b, UINT64_MAX), RIFL_OK);
    CHECK_EQ_I(rifl_bond_count_refused(b, 5), RIFL_OK);
    CHECK(rifl_bond_get_stats(b)->tx_rejected == UINT64_MAX);
    rifl_bond_free(b);
    rifl_hex_encode(NULL, 0, NULL);
    char hex[3] = "zz";
    rifl_hex_encode(NULL, 4, hex);
    CHECK(hex[0] == '\0');
    uint8_t frame[256];
    CHECK_EQ_I(rifl_frame_reader_next(NULL, frame, msg, sizeof msg), RIFL_ERR_INVALID_ARG);
    static const unsigned widths[] = { 0, 7, 257, 0xFFFFFFFFu };
    for (unsigned i = 0; i < 4; i++) {
        rifl_frame_reader fr;
        rifl_frame_reader_init(&fr, "00\n", 3, widths[i]);
        msg[0] = '\0';
        CHECK_EQ_I(rifl_frame_reader_next(&fr, frame, msg, sizeof msg), RIFL_ERR_INVALID_ARG);
        CHECK_MSG(strstr(msg, "64 to 2048 bits") != NULL, "message '%s'", msg);
    }
    /* the codec: the invalid scrambler state a refused scramble returns */
    uint64_t st = RIFL_SCRAMBLER_INVALID;
    CHECK_EQ_I(rifl_frame_encode(frame, 256, RIFL_SYN_DATA, 0, NULL, 1, &st), RIFL_ERR_INVALID_ARG);
}

/* PHYs and simulators with NULL objects, forms they do not carry, and
 * configurations with values that hung or crashed them: an error, a count
 * or a harmless answer. */
static void t_phys_and_sims(void)
{
    char msg[256] = "";
    rifl_phy_frame in[2];
    CHECK(rifl_phy_next_due(NULL, 0) == UINT64_MAX);
    CHECK_EQ_I(rifl_phy_skip(NULL, 1), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_U(rifl_phy_clear_slots(NULL), 0);
    CHECK(rifl_phy_inflight(NULL, 0, RIFL_PHY_WIRE) == NULL);
    CHECK(rifl_phy_step(NULL, 0, NULL) == NULL);
    CHECK_EQ_U(rifl_phy_exchange(NULL, 0, RIFL_PHY_WIRE, in, 2), 0);
    /* a wire-only channel given a frame by content, at a BER that hits it */
    rifl_phy_channel_config cc = { .frame_bits = 256, .delay_frames = 1, .ber = 0.5, .seed = 1 };
    rifl_phy *ch = NULL, *lo = NULL;
    REQUIRE(rifl_phy_channel_create(&cc, &ch, msg, sizeof msg) == RIFL_OK);
    CHECK_EQ_I(rifl_phy_channel_set_ber(ch, 0), RIFL_OK);
    CHECK_EQ_I(rifl_phy_skip(ch, UINT64_MAX), RIFL_ERR_INVALID_ARG); /* (bits would wrap) */
    CHECK_EQ_U(rifl_phy_get_stats(ch)->bits, 0);
    CHECK_EQ_I(rifl_phy_channel_set_ber(ch, 0.5), RIFL_OK);
    CHECK_EQ_U(rifl_phy_channel_exchange(ch, 0, RIFL_PHY_CONTENT, in, 2), 0);
    CHECK_EQ_U(rifl_phy_get_stats(ch)->dropped, 1);
    CHECK_EQ_U(rifl_phy_channel_exchange(ch, 1, RIFL_PHY_WIRE, NULL, 2), 0);
    REQUIRE(rifl_phy_loopback_create(256, 1, &lo, msg, sizeof msg) == RIFL_OK);
    CHECK_EQ_U(rifl_phy_channel_exchange(lo, 0, RIFL_PHY_WIRE, in, 2), 0);
    rifl_phy_free(lo);
    rifl_phy_free(ch);
    /* histograms: NULL, and one freed (it used to loop for ever) */
    CHECK_EQ_I(rifl_hist_init(NULL), RIFL_ERR_INVALID_ARG);
    rifl_hist h;
    REQUIRE(rifl_hist_init(&h) == RIFL_OK);
    rifl_hist_free(&h);
    rifl_hist_add(&h, 5000);
    CHECK_EQ_U(h.over, 1);
    rifl_hist_add(NULL, 1);
    rifl_hist_free(NULL);
    CHECK(rifl_hist_avg(NULL) == 0);
    CHECK(rifl_model_efficiency(RIFL_MODEL_RIFL, 16, 100) == 0);
    CHECK(rifl_model_efficiency(RIFL_MODEL_RIFL, 0, 100) == 0);
    CHECK_EQ_I(rifl_ffr_measure(512, 0.1, 10, 1, NULL), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_U(rifl_link_delay_frames(NULL, 512), 0);
    rifl_pair_step(NULL, NULL);
    CHECK(rifl_validator_feed(NULL, NULL, 0, 1) == -1);
    CHECK_EQ_I(rifl_ssim_run(NULL, 5), RIFL_ERR_INVALID_ARG);
    /* credit simulators: values that hung a run or grew it without bound */
    rifl_csim_config cs;
    rifl_csim_default_config(&cs);
    CHECK_EQ_I(rifl_csim_check(&cs, msg, sizeof msg), RIFL_OK);
    cs.drain[0] = NAN;
    CHECK_EQ_I(rifl_csim_check(&cs, msg, sizeof msg), RIFL_ERR_CONFIG);
    rifl_csim_default_config(&cs);
    cs.mode = (rifl_csim_mode)9;
    CHECK_EQ_I(rifl_csim_check(&cs, msg, sizeof msg), RIFL_ERR_CONFIG);
    rifl_csim_default_config(&cs);
    cs.one_way = (uint64_t)1 << 40;
    CHECK_EQ_I(rifl_csim_check(&cs, msg, sizeof msg), RIFL_ERR_CONFIG);
    rifl_csim_default_config(&cs);
    cs.overhead = UINT32_MAX;
    CHECK_EQ_I(rifl_csim_check(&cs, msg, sizeof msg), RIFL_ERR_CONFIG);
    rifl_csim_default_config(&cs);
    cs.load[0] = -1;
    CHECK_EQ_I(rifl_csim_check(&cs, msg, sizeof msg), RIFL_ERR_CONFIG);
    rifl_csim_default_config(&cs);
    cs.hol_vl = 14;
    CHECK_EQ_I(rifl_csim_check(&cs, msg, sizeof msg), RIFL_ERR_CONFIG);
    rifl_clane_config cl;
    rifl_clane_default_config(&cl);
    CHECK_EQ_I(rifl_clane_check(&cl, msg, sizeof msg), RIFL_OK);
    cl.load[0] = NAN;
    CHECK_EQ_I(rifl_clane_check(&cl, msg, sizeof msg), RIFL_ERR_CONFIG);
    rifl_clane_default_config(&cl);
    cl.hol_vl = 40;
    CHECK_EQ_I(rifl_clane_check(&cl, msg, sizeof msg), RIFL_ERR_CONFIG);
    /* link simulator: a count of lengths without the list */
    rifl_linksim_config lc;
    rifl_linksim_defaults(&lc);
    lc.len_count = 5;
    lc.len_list = NULL;
    CHECK_EQ_I(rifl_linksim_check(&lc, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(msg, "len_list") != NULL, "message '%s'", msg);
    /* unknown enum values */
    rifl_ssim_config sc = rifl_ssim_default_config;
    sc.traffic = (rifl_traffic)7;
    rifl_ssim *ss = NULL;
    CHECK_EQ_I(rifl_ssim_create(&sc, &ss, msg, sizeof msg), RIFL_ERR_CONFIG);
    rifl_topology *t = NULL;
    REQUIRE(rifl_topo_generate("single:4", &t, msg, sizeof msg) == RIFL_OK);
    rifl_net_config nc = rifl_net_default_config;
    nc.topo = t;
    nc.frame_bits = 3;
    rifl_net *net = NULL;
    CHECK_EQ_I(rifl_net_create(&nc, &net, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(msg, "3-bit frames") != NULL, "message '%s'", msg);
    nc.frame_bits = 256;
    nc.pattern = (rifl_net_pattern)9;
    CHECK_EQ_I(rifl_net_create(&nc, &net, msg, sizeof msg), RIFL_ERR_CONFIG);
    nc.pattern = RIFL_NET_INCAST;
    nc.incast = UINT32_MAX;
    CHECK_EQ_I(rifl_net_create(&nc, &net, msg, sizeof msg), RIFL_ERR_CONFIG);
    rifl_topo_free(t);
    /* a link daemon whose settings no round trip fits, before any probe */
    rifl_udplink_config uc;
    rifl_udplink_defaults(&uc);
    uc.lane.fid_bits = 99;
    rifl_udplink *ul = NULL;
    CHECK_EQ_I(rifl_udplink_create(&uc, &ul, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(ul == NULL);
}

TEST_MAIN({ "error_texts", t_error_texts },
          { "null_arguments", t_null_arguments },
          { "codec_bad_arguments", t_codec_bad_arguments },
          { "lane_read_capacity", t_lane_read_capacity },
          { "handles_and_sizes", t_handles_and_sizes },
          { "phys_and_sims", t_phys_and_sims })

/* Credit registers, FCP codec and VL arbiter: every worked example of the
 * link-level flow-control text, plus codec and arbiter properties. */
#include "testlib.h"

#include "rifl/credit.h"
#include "rifl/rng.h"

/* ---- worked examples ------------------------------------------------------ */

/* Send one packet of `blocks` through the registers, as the wire would. */
static int xfer(rifl_fc_tx *tx, rifl_fc_rx *rx, uint32_t blocks)
{
    if (rifl_fc_tx_sent(tx, blocks) != RIFL_OK)
        return -1;
    return rifl_fc_rx_accept(rx, blocks);
}

/* Deliver an FCP from the receiver: CL = FCCL. */
static void fcp_back(rifl_fc_tx *tx, const rifl_fc_rx *rx)
{
    rifl_fc_tx_set_limit(tx, rifl_fc_rx_fccl(rx));
}

static void t_example_startup(void)
{
    rifl_fc_tx tx;
    rifl_fc_rx rx;
    rifl_fc_tx_reset(&tx);
    REQUIRE(rifl_fc_rx_init(&rx, 3072 * 64, 64, NULL, 0) == RIFL_OK); /* 196,608 B */
    CHECK_EQ_U(rx.abr, 0);
    CHECK_EQ_U(rifl_fc_rx_space(&rx), 3072);
    /* step 3: more than 2048 free, so FCCL = ABR + 2048 */
    CHECK_EQ_U(rifl_fc_rx_fccl(&rx), 2048);
    /* step 4: initialisation FCP sets CL */
    fcp_back(&tx, &rx);
    CHECK_EQ_U(tx.cl, 2048);
    CHECK_EQ_U(tx.fctbs, 0);
    /* step 6: 10 blocks (640 bytes): CL - CR = 2048 - 10 = 2038 */
    CHECK_EQ_U(rifl_fc_blocks(640), 10);
    CHECK_EQ_U(rifl_fc_sub(tx.cl, tx.fctbs + 10u), 2038);
    CHECK(rifl_fc_tx_may_send(&tx, 10));
    /* steps 7-8 */
    CHECK_EQ_I(xfer(&tx, &rx, 10), RIFL_OK);
    CHECK_EQ_U(tx.fctbs, 10);
    CHECK_EQ_U(rx.abr, 10);
    CHECK_EQ_U(rifl_fc_rx_space(&rx), 3062);
    CHECK_EQ_U(rifl_fc_rx_fccl(&rx), 2058);
    /* step 9: 5 blocks (the text writes 190 bytes; 5 blocks are 257..320).
     * CL is still 2048, so CL - CR = 2048 - 15 = 2033 (the text prints 2038,
     * the margin of the previous step). */
    CHECK_EQ_U(rifl_fc_blocks(320), 5);
    CHECK_EQ_U(rifl_fc_blocks(257), 5);
    CHECK_EQ_U(rifl_fc_blocks(190), 3);
    CHECK_EQ_U(rifl_fc_sub(tx.cl, tx.fctbs + 5u), 2033);
    CHECK_EQ_I(xfer(&tx, &rx, 5), RIFL_OK);
    CHECK_EQ_U(tx.fctbs, 15);
    CHECK_EQ_U(rx.abr, 15);
    CHECK_EQ_U(rifl_fc_rx_space(&rx), 3057);
    CHECK_EQ_U(rifl_fc_rx_fccl(&rx), 2063);
    /* the block rule: bytes / 64 rounded up */
    CHECK_EQ_U(rifl_fc_blocks(1), 1);
    CHECK_EQ_U(rifl_fc_blocks(64), 1);
    CHECK_EQ_U(rifl_fc_blocks(65), 2);
    CHECK_EQ_U(rifl_fc_blocks(4096), 64);
}

/* Bring a 3072-block receiver to `total` blocks received with nothing
 * offloaded, in packets of random size, CL refreshed after each packet. */
static void fill_to(rifl_fc_tx *tx, rifl_fc_rx *rx, uint32_t total, rifl_rng *r)
{
    while (tx->fctbs < total) {
        uint32_t n = (uint32_t)rifl_rng_range(r, 1, 40);
        if (n > total - tx->fctbs)
            n = total - tx->fctbs;
        CHECK(rifl_fc_tx_may_send(tx, n));
        CHECK_EQ_I(xfer(tx, rx, n), RIFL_OK);
        fcp_back(tx, rx);
    }
}

static void t_example_free_space_below_2048(void)
{
    rifl_rng r;
    rifl_rng_seed(&r, test_seed);
    rifl_fc_tx tx;
    rifl_fc_rx rx;
    rifl_fc_tx_reset(&tx);
    REQUIRE(rifl_fc_rx_init(&rx, 3072 * 64, 64, NULL, 0) == RIFL_OK);
    fcp_back(&tx, &rx);
    /* step 13: 1024 blocks received, nothing offloaded, FCCL = 3072 */
    fill_to(&tx, &rx, 1024, &r);
    CHECK_EQ_U(rx.abr, 1024);
    CHECK_EQ_U(tx.fctbs, 1024);
    CHECK_EQ_U(rifl_fc_rx_space(&rx), 2048);
    CHECK_EQ_U(rifl_fc_rx_fccl(&rx), 3072);
    CHECK_EQ_U(tx.cl, 3072);
    /* steps 15-17: 3 more blocks */
    CHECK(rifl_fc_tx_may_send(&tx, 3));
    CHECK_EQ_I(xfer(&tx, &rx, 3), RIFL_OK);
    CHECK_EQ_U(tx.fctbs, 1027);
    CHECK_EQ_U(rx.abr, 1027);
    CHECK_EQ_U(rifl_fc_rx_space(&rx), 2045);
    CHECK_EQ_U(rifl_fc_rx_fccl(&rx), 3072);
    /* FCCL stays at 3072 while nothing is offloaded */
    uint32_t changed = 0;
    while (tx.fctbs < 2000) {
        uint32_t n = (uint32_t)rifl_rng_range(&r, 1, 30);
        CHECK_EQ_I(xfer(&tx, &rx, n), RIFL_OK);
        changed += rifl_fc_rx_fccl(&rx) != 3072;
    }
    CHECK_EQ_U(changed, 0);
}

static void t_example_buffer_full(void)
{
    rifl_rng r;
    rifl_rng_seed(&r, test_seed + 1);
    rifl_fc_tx tx;
    rifl_fc_rx rx;
    rifl_fc_tx_reset(&tx);
    REQUIRE(rifl_fc_rx_init(&rx, 3072 * 64, 64, NULL, 0) == RIFL_OK);
    fcp_back(&tx, &rx);
    fill_to(&tx, &rx, 3072, &r);
    /* figure 25-13: FCTBS = 3072, FCCL = CL = 3072, free space 0 */
    CHECK_EQ_U(tx.fctbs, 3072);
    CHECK_EQ_U(rifl_fc_rx_space(&rx), 0);
    CHECK_EQ_U(rifl_fc_rx_fccl(&rx), 3072);
    CHECK_EQ_U(tx.cl, 3072);
    /* a 1-block packet: CR = 3073 > CL, refused */
    CHECK_EQ_U((tx.fctbs + 1u) & 0xFFFu, 3073);
    CHECK(!rifl_fc_tx_may_send(&tx, 1));
    CHECK_EQ_I(rifl_fc_tx_sent(&tx, 1), RIFL_ERR_AGAIN);
    CHECK_EQ_U(tx.fctbs, 3072); /* a refusal changes nothing */
    CHECK_EQ_U(rifl_fc_tx_credit(&tx), 0);
    /* a receiver that got it anyway would drop it, counted */
    CHECK_EQ_I(rifl_fc_rx_accept(&rx, 1), RIFL_ERR_AGAIN);
    CHECK_EQ_U(rx.overflow, 1);
    CHECK_EQ_U(rx.abr, 3072);
    /* the receiver offloads one block: FCCL = 3073, sent in the next FCP */
    CHECK_EQ_I(rifl_fc_rx_release(&rx, 1), RIFL_OK);
    CHECK_EQ_U(rifl_fc_rx_fccl(&rx), 3073);
    CHECK(!rifl_fc_tx_may_send(&tx, 1)); /* not until the FCP arrives */
    fcp_back(&tx, &rx);
    CHECK_EQ_U(tx.cl, 3073);
    CHECK(rifl_fc_tx_may_send(&tx, 1));
    CHECK(!rifl_fc_tx_may_send(&tx, 2));
}

static void t_example_fccl_rollover(void)
{
    rifl_rng r;
    rifl_rng_seed(&r, test_seed + 2);
    rifl_fc_tx tx;
    rifl_fc_rx rx;
    rifl_fc_tx_reset(&tx);
    REQUIRE(rifl_fc_rx_init(&rx, 3072 * 64, 64, NULL, 0) == RIFL_OK);
    fcp_back(&tx, &rx);
    /* reach ABR = FCTBS = 3586 with 504 blocks free, so FCCL = 4090:
     * fill the buffer, offload 1018 blocks, send 514 more */
    fill_to(&tx, &rx, 3072, &r);
    for (int i = 0; i < 1018; i++)
        CHECK_EQ_I(rifl_fc_rx_release(&rx, 1), RIFL_OK);
    fcp_back(&tx, &rx);
    fill_to(&tx, &rx, 3586, &r);
    CHECK_EQ_U(rx.abr, 3586);
    CHECK_EQ_U(rifl_fc_rx_space(&rx), 504);
    CHECK_EQ_U(rifl_fc_rx_fccl(&rx), 4090);
    CHECK_EQ_U(tx.cl, 4090); /* the last FCCL sent */
    /* five blocks offloaded since: FCCL = 4095 */
    for (int i = 0; i < 5; i++)
        CHECK_EQ_I(rifl_fc_rx_release(&rx, 1), RIFL_OK);
    CHECK_EQ_U(rifl_fc_rx_fccl(&rx), 4095);
    /* step 1: one more; free space 510, 510 + 3586 = 4096 rolls over to 0 */
    CHECK_EQ_I(rifl_fc_rx_release(&rx, 1), RIFL_OK);
    CHECK_EQ_U(rifl_fc_rx_space(&rx), 510);
    CHECK_EQ_U(rifl_fc_rx_fccl(&rx), 0);
    /* step 2: transmitter still has CL = 4090; a 1-block packet: 4090 - 3587
     * = 503, go */
    CHECK_EQ_U(rifl_fc_sub(tx.cl, tx.fctbs + 1u), 503);
    CHECK(rifl_fc_tx_may_send(&tx, 1));
    /* steps 3-4 */
    CHECK_EQ_I(xfer(&tx, &rx, 1), RIFL_OK);
    CHECK_EQ_U(tx.fctbs, 3587);
    CHECK_EQ_U(tx.fctbs, 0xE03);
    CHECK_EQ_U(rx.abr, 3587);
    CHECK_EQ_U(rifl_fc_rx_space(&rx), 509);
    CHECK_EQ_U(rifl_fc_rx_fccl(&rx), 0); /* unchanged */
    /* steps 5-6: FCP, CL = 000h */
    fcp_back(&tx, &rx);
    CHECK_EQ_U(tx.cl, 0);
    /* step 7: CL - CR taken as a plain integer is negative ... */
    CHECK((int)tx.cl - (int)tx.fctbs < 0);
    /* ... but in 12 bits it is 509 = the free space.  The text adds 1FDh,
     * which is the two's complement of E03h: ones' complement 1FCh plus 1. */
    CHECK_EQ_U((~0xE03u) & 0xFFFu, 0x1FC);
    CHECK_EQ_U(rifl_fc_sub_ones_complement(0x000, 0xE03), 0x1FD);
    CHECK_EQ_U(rifl_fc_sub_ones_complement(tx.cl, tx.fctbs), 509);
    CHECK_EQ_U(rifl_fc_sub(tx.cl, tx.fctbs), 509);
    CHECK_EQ_U(rifl_fc_tx_credit(&tx), rifl_fc_rx_space(&rx));
    /* the next 1-block packet passes the check: (0 - 3588) mod 4096 = 508 */
    CHECK(rifl_fc_tx_may_send(&tx, 1));
    CHECK(rifl_fc_tx_may_send(&tx, 509));
    CHECK(!rifl_fc_tx_may_send(&tx, 510));
}

/* The modular check against the plain count, across every wrap position. */
static void t_register_wrap(void)
{
    rifl_rng r;
    rifl_rng_seed(&r, test_seed + 3);
    unsigned bad = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t sent = rifl_rng_below(&r, 1u << 30);
        uint32_t credit = (uint32_t)rifl_rng_below(&r, RIFL_FC_CREDIT_CAP + 1);
        uint32_t np = (uint32_t)rifl_rng_range(&r, 1, 2047);
        uint16_t cl = (uint16_t)((sent + credit) & 0xFFF);
        uint16_t fctbs = (uint16_t)(sent & 0xFFF);
        bool want = np <= credit;
        bad += rifl_fc_may_send(cl, fctbs, np) != want;
        rifl_fc_tx tx = { fctbs, cl };
        bad += rifl_fc_tx_may_send(&tx, np) != want;
        bad += rifl_fc_sub_ones_complement(cl, fctbs) != rifl_fc_sub(cl, fctbs);
    }
    CHECK_EQ_U(bad, 0);
    /* the one ambiguous case of the modular rule, and its guard */
    CHECK(rifl_fc_may_send(100, 100, 2048)); /* no credit, yet 2048 passes */
    rifl_fc_tx none = { 100, 100 };
    CHECK(!rifl_fc_tx_may_send(&none, 2048));
    CHECK(!rifl_fc_tx_may_send(&none, 1));
}

/* Chunked receivers advertise the worst case: one block per free chunk. */
static void t_chunked_receiver(void)
{
    rifl_fc_rx rx;
    char msg[256];
    REQUIRE(rifl_fc_rx_init(&rx, 1024, 128, msg, sizeof msg) == RIFL_OK);
    CHECK_EQ_U(rx.capacity, 8);
    CHECK_EQ_U(rifl_fc_rx_space(&rx), 8); /* not 16: small packets waste half */
    CHECK_EQ_U(rifl_fc_rx_fccl(&rx), 8);
    /* eight 1-block packets fill it exactly: advertising 16 would overflow */
    for (int i = 0; i < 8; i++)
        CHECK_EQ_I(rifl_fc_rx_accept(&rx, 1), RIFL_OK);
    CHECK_EQ_U(rifl_fc_rx_space(&rx), 0);
    CHECK_EQ_I(rifl_fc_rx_accept(&rx, 1), RIFL_ERR_AGAIN);
    for (int i = 0; i < 8; i++)
        CHECK_EQ_I(rifl_fc_rx_release(&rx, 1), RIFL_OK);
    /* 2-block packets use one chunk each: FCCL grows by one per packet */
    uint16_t f0 = rifl_fc_rx_fccl(&rx);
    CHECK_EQ_I(rifl_fc_rx_accept(&rx, 2), RIFL_OK);
    CHECK_EQ_U(rifl_fc_sub(rifl_fc_rx_fccl(&rx), f0), 1);
    /* any mix totalling the advertised space fits */
    rifl_rng r;
    rifl_rng_seed(&r, test_seed + 4);
    unsigned failures = 0;
    for (int trial = 0; trial < 2000; trial++) {
        REQUIRE(rifl_fc_rx_init(&rx, 64 * 512, 256, NULL, 0) == RIFL_OK);
        uint32_t budget = rifl_fc_rx_space(&rx);
        while (budget) {
            uint32_t n = (uint32_t)rifl_rng_range(&r, 1, budget < 9 ? budget : 9);
            failures += rifl_fc_rx_accept(&rx, n) != RIFL_OK;
            budget -= n;
        }
    }
    CHECK_EQ_U(failures, 0);
    /* sizes the 12-bit Free Space Count cannot hold are refused, explained */
    CHECK_EQ_I(rifl_fc_rx_init(&rx, 4096 * 64, 64, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "12-bit") != NULL);
    CHECK_EQ_I(rifl_fc_rx_init(&rx, 4096, 100, msg, sizeof msg), RIFL_ERR_CONFIG);
    REQUIRE(rifl_fc_rx_init(&rx, 4096, 64, msg, sizeof msg) == RIFL_OK);
    CHECK_EQ_I(rifl_fc_rx_release(&rx, 1), RIFL_ERR_INVALID_ARG); /* nothing held */
    /* sizes no credit covers take no space and free none, whatever their
     * chunk count would wrap to; a receiver never set up holds nothing */
    REQUIRE(rifl_fc_rx_init(&rx, 8192, 128, NULL, 0) == RIFL_OK);
    CHECK_EQ_I(rifl_fc_rx_accept(&rx, 0xFFFFFFFFu), RIFL_ERR_AGAIN);
    CHECK_EQ_I(rifl_fc_rx_accept(&rx, RIFL_FC_CREDIT_CAP), RIFL_ERR_AGAIN);
    CHECK_EQ_U(rx.free_chunks, 64);
    CHECK_EQ_U(rx.abr, 0);
    CHECK_EQ_I(rifl_fc_rx_accept(&rx, 2), RIFL_OK);
    CHECK_EQ_I(rifl_fc_rx_release(&rx, 0xFFFFFFFFu), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_U(rx.free_chunks, 63);
    CHECK_EQ_U(rx.released, 0);
    rifl_fc_rx zero;
    memset(&zero, 0, sizeof zero);
    CHECK_EQ_U(rifl_fc_rx_chunks(&zero, 1), UINT32_MAX);
    CHECK_EQ_I(rifl_fc_rx_accept(&zero, 1), RIFL_ERR_AGAIN);
    CHECK_EQ_I(rifl_fc_rx_accept(NULL, 1), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_fc_rx_release(NULL, 1), RIFL_ERR_INVALID_ARG);
}

static void t_cap_2048(void)
{
    rifl_fc_rx rx;
    REQUIRE(rifl_fc_rx_init(&rx, 4095 * 64, 64, NULL, 0) == RIFL_OK);
    CHECK_EQ_U(rifl_fc_rx_fccl(&rx), 2048);
    rifl_fc_tx tx;
    rifl_fc_tx_reset(&tx);
    rifl_fc_tx_set_limit(&tx, rifl_fc_rx_fccl(&rx));
    CHECK_EQ_U(rifl_fc_tx_credit(&tx), 2048);
    CHECK(rifl_fc_tx_may_send(&tx, 2047));
    CHECK(!rifl_fc_tx_may_send(&tx, 2048)); /* never: see rifl_fc_may_send */
    CHECK(!rifl_fc_tx_may_send(&tx, 2049));
    /* a resync moves ABR to FCTBS and counts it */
    rifl_fc_rx_resync(&rx, 100);
    CHECK_EQ_U(rx.abr, 100);
    CHECK_EQ_U(rx.resyncs, 1);
    CHECK_EQ_U(rx.resync_blocks, 100);
    rifl_fc_rx_resync(&rx, 100);
    CHECK_EQ_U(rx.resyncs, 1);
    CHECK_EQ_U(rifl_fc_rx_fccl(&rx), 2148);
}

/* ---- FCP codec ------------------------------------------------------------ */

/* Independent reference: polynomial division of the 32 message bits, the
 * first 16 inverted (initial value 0xFFFF), times x^16, by x^16 + 0x100B. */
static uint16_t ref_crc(uint32_t msg)
{
    uint64_t m = (uint64_t)(msg ^ 0xFFFF0000u) << 16;
    const uint64_t poly = 0x1100Bull;
    for (int bit = 47; bit >= 16; bit--)
        if (m >> bit & 1)
            m ^= poly << (bit - 16);
    return (uint16_t)m;
}

static void t_fcp_layout(void)
{
    rifl_fcp f = { .op = 1, .fctbs = 0xABC, .vl = 5, .fccl = 0x123 };
    uint8_t b[8];
    rifl_fcp_encode(&f, b);
    CHECK_EQ_U(b[0], 0x1A);
    CHECK_EQ_U(b[1], 0xBC);
    CHECK_EQ_U(b[2], 0x51);
    CHECK_EQ_U(b[3], 0x23);
    CHECK_EQ_U(b[6], 0);
    CHECK_EQ_U(b[7], 0);
    CHECK_EQ_U((unsigned)(b[4] << 8 | b[5]), ref_crc(0x1ABC5123u));
    /* the value docs/credit-flow-control.md gives for this FCP */
    CHECK_EQ_U(b[4], 0xB7);
    CHECK_EQ_U(b[5], 0xB4);
    CHECK_EQ_U(rifl_fcp_crc16((const uint8_t *)"123456789", 9), 0xBA6E);
    rifl_fcp g;
    rifl_fcp_status st;
    CHECK_EQ_I(rifl_fcp_decode(b, 8, &g, &st), RIFL_OK);
    CHECK_EQ_U(st, RIFL_FCP_GOOD);
    CHECK_EQ_U(g.op, 1);
    CHECK_EQ_U(g.fctbs, 0xABC);
    CHECK_EQ_U(g.vl, 5);
    CHECK_EQ_U(g.fccl, 0x123);
    /* reserved bits are ignored */
    b[6] = 0xFF;
    b[7] = 0x5A;
    CHECK_EQ_I(rifl_fcp_decode(b, 8, &g, &st), RIFL_OK);
    /* too short */
    CHECK_EQ_I(rifl_fcp_decode(b, 7, &g, &st), RIFL_ERR_FRAME);
    CHECK_EQ_U(st, RIFL_FCP_SHORT);
    /* CRC of an all-zero word and of the catalogue check string prefix */
    uint8_t z[4] = { 0, 0, 0, 0 };
    CHECK_EQ_U(rifl_fcp_crc16(z, 4), ref_crc(0));
    CHECK_EQ_U(rifl_fcp_crc16((const uint8_t *)"1234", 4), ref_crc(0x31323334u));
}

static void t_fcp_roundtrip(void)
{
    rifl_rng r;
    rifl_rng_seed(&r, test_seed + 5);
    unsigned bad = 0;
    for (int i = 0; i < 100000; i++) {
        rifl_fcp f = { (uint8_t)rifl_rng_below(&r, 2), (uint16_t)rifl_rng_below(&r, 4096),
                       (uint8_t)rifl_rng_below(&r, 16), (uint16_t)rifl_rng_below(&r, 4096) };
        uint8_t b[8];
        rifl_fcp_encode(&f, b);
        uint32_t w = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
        bad += (unsigned)(b[4] << 8 | b[5]) != ref_crc(w);
        rifl_fcp g;
        if (rifl_fcp_decode(b, 8, &g, NULL) != RIFL_OK)
            bad++;
        else
            bad += g.op != f.op || g.fctbs != f.fctbs || g.vl != f.vl || g.fccl != f.fccl;
    }
    CHECK_EQ_U(bad, 0);
}

static void t_fcp_bad_op(void)
{
    unsigned rejected = 0;
    for (unsigned op = 0; op < 16; op++) {
        uint8_t b[8];
        rifl_fcp f = { 0, 7, 1, 9 };
        rifl_fcp_encode(&f, b);
        b[0] = (uint8_t)((b[0] & 0x0F) | op << 4);
        uint16_t crc = rifl_fcp_crc16(b, 4);
        b[4] = (uint8_t)(crc >> 8);
        b[5] = (uint8_t)crc;
        rifl_fcp_status st;
        int rc = rifl_fcp_decode(b, 8, NULL, &st);
        if (op <= 1) {
            CHECK_EQ_I(rc, RIFL_OK);
        } else {
            CHECK_EQ_I(rc, RIFL_ERR_FRAME);
            CHECK_EQ_U(st, RIFL_FCP_BAD_OP);
            rejected++;
        }
    }
    CHECK_EQ_U(rejected, 14);
}

/* Every 1- and 2-bit error in the 48 checked bits is caught. */
static void t_fcp_bit_errors(void)
{
    rifl_rng r;
    rifl_rng_seed(&r, test_seed + 6);
    unsigned missed = 0, cases = 0;
    for (int k = 0; k < 20; k++) {
        rifl_fcp f = { (uint8_t)rifl_rng_below(&r, 2), (uint16_t)rifl_rng_below(&r, 4096),
                       (uint8_t)rifl_rng_below(&r, 16), (uint16_t)rifl_rng_below(&r, 4096) };
        uint8_t b[8];
        rifl_fcp_encode(&f, b);
        for (int i = 0; i < 48; i++)
            for (int j = i; j < 48; j++) {
                uint8_t c[8];
                memcpy(c, b, 8);
                c[i / 8] ^= (uint8_t)(0x80 >> (i % 8));
                if (j != i)
                    c[j / 8] ^= (uint8_t)(0x80 >> (j % 8));
                rifl_fcp_status st;
                cases++;
                if (rifl_fcp_decode(c, 8, NULL, &st) == RIFL_OK)
                    missed++;
            }
    }
    CHECK_EQ_U(cases, 20 * 48 * 49 / 2);
    CHECK_EQ_U(missed, 0);
}

/* ---- VL arbiter ------------------------------------------------------------ */

static void arb_from(rifl_vlarb *a, const char *high, const char *low, unsigned limit,
                     unsigned nvls)
{
    rifl_vlarb_config c;
    memset(&c, 0, sizeof c);
    char msg[256];
    CHECK_EQ_I(rifl_vlarb_parse_table(high, c.high, &c.n_high, msg, sizeof msg), RIFL_OK);
    CHECK_EQ_I(rifl_vlarb_parse_table(low, c.low, &c.n_low, msg, sizeof msg), RIFL_OK);
    c.high_limit = limit;
    CHECK_EQ_I(rifl_vlarb_init(a, &c, nvls, msg, sizeof msg), RIFL_OK);
}

static void t_arb_weights(void)
{
    rifl_vlarb a;
    arb_from(&a, "", "0:32,1:16,2:8", 255, 3);
    uint32_t head[16] = { 64, 64, 64 };
    uint64_t n[3] = { 0 };
    for (int i = 0; i < 7000; i++) {
        int vl = rifl_vlarb_pick(&a, head, 0x7);
        REQUIRE(vl >= 0 && vl < 3);
        n[vl]++;
    }
    /* 32 : 16 : 8 blocks per round, 56 packets per round */
    CHECK_EQ_U(n[0], 4000);
    CHECK_EQ_U(n[1], 2000);
    CHECK_EQ_U(n[2], 1000);
    /* random sizes: byte shares follow the weights within 5% */
    rifl_rng r;
    rifl_rng_seed(&r, test_seed + 7);
    arb_from(&a, "", "0:64,1:32,2:16,0:0", 255, 3);
    uint64_t bytes[3] = { 0 };
    for (int i = 0; i < 200000; i++) {
        for (int v = 0; v < 3; v++)
            head[v] = (uint32_t)rifl_rng_range(&r, 1, 512);
        int vl = rifl_vlarb_pick(&a, head, 0x7);
        REQUIRE(vl >= 0);
        bytes[vl] += head[vl];
    }
    double tot = (double)(bytes[0] + bytes[1] + bytes[2]);
    CHECK_MSG(bytes[0] / tot > 4.0 / 7 * 0.95 && bytes[0] / tot < 4.0 / 7 * 1.05, "%f",
              bytes[0] / tot);
    CHECK_MSG(bytes[1] / tot > 2.0 / 7 * 0.95 && bytes[1] / tot < 2.0 / 7 * 1.05, "%f",
              bytes[1] / tot);
    CHECK_MSG(bytes[2] / tot > 1.0 / 7 * 0.95 && bytes[2] / tot < 1.0 / 7 * 1.05, "%f",
              bytes[2] / tot);
}

static void t_arb_credit_and_vl15(void)
{
    rifl_vlarb a;
    arb_from(&a, "", "0:8,1:8", 255, 2);
    uint32_t head[16] = { 100, 100 };
    /* VL1 lacks credit: only VL0 goes */
    for (int i = 0; i < 20; i++)
        CHECK_EQ_I(rifl_vlarb_pick(&a, head, 0x1), 0);
    /* nobody has credit */
    CHECK_EQ_I(rifl_vlarb_pick(&a, head, 0), RIFL_ERR_AGAIN);
    /* empty queues */
    uint32_t empty[16] = { 0 };
    CHECK_EQ_I(rifl_vlarb_pick(&a, empty, 0x3), RIFL_ERR_AGAIN);
    /* VL15 wins without credit */
    head[15] = 256;
    CHECK_EQ_I(rifl_vlarb_pick(&a, head, 0), 15);
    CHECK_EQ_I(rifl_vlarb_pick(&a, head, 0x3), 15);
}

static void t_arb_high_limit(void)
{
    rifl_vlarb a;
    uint32_t head[16] = { 1024, 1024 };
    /* limit 1 = 4096 bytes: four 1 KiB high packets, then one low */
    arb_from(&a, "0:255", "1:16", 1, 2);
    char seq[64] = "";
    for (int i = 0; i < 15; i++)
        seq[i] = (char)('0' + rifl_vlarb_pick(&a, head, 0x3));
    CHECK_MSG(!strcmp(seq, "000010000100001"), "%s", seq);
    /* limit 0: one high packet at a time */
    arb_from(&a, "0:255", "1:16", 0, 2);
    for (int i = 0; i < 8; i++)
        seq[i] = (char)('0' + rifl_vlarb_pick(&a, head, 0x3));
    seq[8] = 0;
    CHECK_MSG(!strcmp(seq, "01010101"), "%s", seq);
    /* unlimited: low waits while high has packets */
    arb_from(&a, "0:255", "1:16", 255, 2);
    int low = 0;
    for (int i = 0; i < 100; i++)
        low += rifl_vlarb_pick(&a, head, 0x3) == 1;
    CHECK_EQ_I(low, 0);
    /* but low goes when high has no credit */
    CHECK_EQ_I(rifl_vlarb_pick(&a, head, 0x2), 1);
    /* the limit counts high bytes sent while a low packet waits: after a
     * burst of high packets alone, a low packet that comes waits for the
     * limit's 4096 bytes */
    arb_from(&a, "0:255", "1:255", 1, 2);
    uint32_t only_high[16] = { 1024, 0 };
    for (int i = 0; i < 100; i++)
        CHECK_EQ_I(rifl_vlarb_pick(&a, only_high, 0x3), 0);
    for (int i = 0; i < 10; i++)
        seq[i] = (char)('0' + rifl_vlarb_pick(&a, head, 0x3));
    seq[10] = 0;
    CHECK_MSG(!strcmp(seq, "0000100001"), "%s", seq);
}

/* Each table's round starts at its first entry. */
static void t_arb_first_entry(void)
{
    rifl_vlarb a;
    arb_from(&a, "", "0:4,1:4,2:4", 255, 3);
    uint32_t head[16] = { 64, 64, 64 };
    char seq[16];
    for (int i = 0; i < 12; i++)
        seq[i] = (char)('0' + rifl_vlarb_pick(&a, head, 0x7));
    seq[12] = 0;
    CHECK_MSG(!strcmp(seq, "000011112222"), "%s", seq);
    arb_from(&a, "2:1,1:1", "0:1", 0, 3);
    CHECK_EQ_I(rifl_vlarb_pick(&a, head, 0x7), 2);
}

static void t_arb_config_errors(void)
{
    rifl_vlarb_config c;
    rifl_vlarb a;
    char msg[256];
    memset(&c, 0, sizeof c);
    CHECK_EQ_I(rifl_vlarb_parse_table("0:16,1", c.low, &c.n_low, msg, sizeof msg),
               RIFL_ERR_PARSE);
    CHECK_EQ_I(rifl_vlarb_parse_table("0:256", c.low, &c.n_low, msg, sizeof msg),
               RIFL_ERR_PARSE);
    CHECK_EQ_I(rifl_vlarb_parse_table("15:1", c.low, &c.n_low, msg, sizeof msg),
               RIFL_ERR_PARSE);
    CHECK_EQ_I(rifl_vlarb_parse_table("0:16", c.low, &c.n_low, msg, sizeof msg), RIFL_OK);
    c.high_limit = 255;
    /* VL1 unreachable */
    CHECK_EQ_I(rifl_vlarb_init(&a, &c, 2, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "VL1") != NULL);
    /* entry beyond the VLs in use */
    CHECK_EQ_I(rifl_vlarb_parse_table("0:16,3:16", c.low, &c.n_low, msg, sizeof msg),
               RIFL_OK);
    CHECK_EQ_I(rifl_vlarb_init(&a, &c, 2, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "VL3") != NULL);
    /* a VL count outside 1..15, named with its range */
    CHECK_EQ_I(rifl_vlarb_init(&a, &c, 0, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "1 to 15") != NULL);
    CHECK_EQ_I(rifl_vlarb_init(&a, &c, 16, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "1 to 15") != NULL);
}

TEST_MAIN({"example_startup", t_example_startup},
          {"example_free_space_below_2048", t_example_free_space_below_2048},
          {"example_buffer_full", t_example_buffer_full},
          {"example_fccl_rollover", t_example_fccl_rollover},
          {"register_wrap", t_register_wrap},
          {"chunked_receiver", t_chunked_receiver},
          {"cap_2048", t_cap_2048},
          {"fcp_layout", t_fcp_layout},
          {"fcp_roundtrip", t_fcp_roundtrip},
          {"fcp_bad_op", t_fcp_bad_op},
          {"fcp_bit_errors", t_fcp_bit_errors},
          {"arb_weights", t_arb_weights},
          {"arb_credit_and_vl15", t_arb_credit_and_vl15},
          {"arb_high_limit", t_arb_high_limit},
          {"arb_first_entry", t_arb_first_entry},
          {"arb_config_errors", t_arb_config_errors})

/* Layer 2 header, forwarding rule, route reversal, message segmentation and
 * the per-VOQ flow-control frame codec. */
#include "testlib.h"

#include "rifl/l2.h"
#include "rifl/rng.h"

static rifl_l2_hdr hdr1(unsigned j, unsigned hops)
{
    uint8_t route[5] = { (uint8_t)j, 1, 2, 3, 4 };
    rifl_l2_hdr h;
    rifl_l2_hdr_make(&h, route, hops);
    return h;
}

static void t_header_fields(void)
{
    uint8_t route[5] = { 7, 200, 3, 9, 255 };
    rifl_l2_hdr h;
    CHECK_EQ_I(rifl_l2_hdr_make(&h, route, 5), RIFL_OK);
    CHECK_EQ_U(h.b[0], 0x55);
    CHECK_EQ_U(rifl_l2_total_hops(&h), 5);
    CHECK_EQ_U(rifl_l2_remain_hops(&h), 5);
    for (unsigned k = 1; k <= 5; k++)
        CHECK_EQ_U(rifl_l2_dst_port(&h, k), route[k - 1]);
    CHECK_EQ_I(rifl_l2_hdr_make(&h, route, 0), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_l2_hdr_make(&h, route, 6), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_l2_hdr_make(&h, route, 2), RIFL_OK);
    CHECK_EQ_U(h.b[0], 0x22);
    CHECK_EQ_U(h.b[3], 0); /* unused fields zero */
    rifl_l2_set_total_hops(&h, 9);
    rifl_l2_set_remain_hops(&h, 4);
    CHECK_EQ_U(h.b[0], 0x94);
    rifl_l2_set_dst_port(&h, 5, 77);
    CHECK_EQ_U(rifl_l2_dst_port(&h, 5), 77);
}

static void t_forward_rule(void)
{
    const unsigned N = 8;
    unsigned o = 99;
    /* j < i: output j */
    rifl_l2_hdr h = hdr1(2, 1);
    CHECK_EQ_I(rifl_l2_forward(N, 5, &h, &o), RIFL_L2_FWD_UNICAST);
    CHECK_EQ_U(o, 2);
    /* j = i: skips the input, output i + 1 */
    h = hdr1(5, 1);
    CHECK_EQ_I(rifl_l2_forward(N, 5, &h, &o), RIFL_L2_FWD_UNICAST);
    CHECK_EQ_U(o, 6);
    /* j = N - 2: the last output */
    h = hdr1(N - 2, 1);
    CHECK_EQ_I(rifl_l2_forward(N, 5, &h, &o), RIFL_L2_FWD_UNICAST);
    CHECK_EQ_U(o, N - 1);
    /* j = N - 2 from input N - 1: j < i, output N - 2 */
    CHECK_EQ_I(rifl_l2_forward(N, N - 1, &h, &o), RIFL_L2_FWD_UNICAST);
    CHECK_EQ_U(o, N - 2);
    /* j = N - 1: invalid from every input */
    h = hdr1(N - 1, 1);
    for (unsigned i = 0; i < N; i++)
        CHECK_EQ_I(rifl_l2_forward(N, i, &h, &o), RIFL_L2_FWD_INVALID);
    /* j between N and 254: invalid */
    h = hdr1(100, 1);
    CHECK_EQ_I(rifl_l2_forward(N, 0, &h, &o), RIFL_L2_FWD_INVALID);
    /* broadcast */
    h = hdr1(255, 1);
    CHECK_EQ_I(rifl_l2_forward(N, 3, &h, &o), RIFL_L2_FWD_BROADCAST);
    /* zero remaining hops: misrouted */
    h = hdr1(1, 1);
    rifl_l2_set_remain_hops(&h, 0);
    CHECK_EQ_I(rifl_l2_forward(N, 3, &h, &o), RIFL_L2_FWD_MISROUTED);
    /* inconsistent hop counts */
    h = hdr1(1, 2);
    rifl_l2_set_remain_hops(&h, 3);
    CHECK_EQ_I(rifl_l2_forward(N, 3, &h, &o), RIFL_L2_FWD_INVALID);
    rifl_l2_set_total_hops(&h, 7);
    CHECK_EQ_I(rifl_l2_forward(N, 3, &h, &o), RIFL_L2_FWD_INVALID);
    /* API errors */
    CHECK_EQ_I(rifl_l2_forward(N, N, &h, &o), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_l2_forward(1, 0, &h, &o), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_l2_forward(257, 0, &h, &o), RIFL_ERR_INVALID_ARG);
    /* 256-port switch: j = 254 from input 0 reaches port 255 */
    h = hdr1(254, 1);
    CHECK_EQ_I(rifl_l2_forward(256, 0, &h, &o), RIFL_L2_FWD_UNICAST);
    CHECK_EQ_U(o, 255);
}

/* rel_port is the inverse of the forwarding rule, exhaustively */
static void t_rel_port_inverse(void)
{
    unsigned sizes[] = { 2, 3, 8, 32, 256 };
    unsigned bad = 0;
    for (unsigned s = 0; s < 5; s++) {
        unsigned N = sizes[s];
        for (unsigned i = 0; i < N; i++)
            for (unsigned d = 0; d < N; d++) {
                int j = rifl_l2_rel_port(N, i, d);
                if (d == i) {
                    bad += j != -1;
                    continue;
                }
                rifl_l2_hdr h = hdr1((unsigned)j, 1);
                unsigned o = 9999;
                if (rifl_l2_forward(N, i, &h, &o) != RIFL_L2_FWD_UNICAST || o != d)
                    bad++;
            }
    }
    CHECK_EQ_U(bad, 0);
}

static void t_advance_return_index(void)
{
    uint8_t route[5] = { 4, 1, 0, 0, 0 };
    rifl_l2_hdr h;
    rifl_l2_hdr_make(&h, route, 2);
    /* input 6 of an 8-port switch, j = 4 < 6 -> output 4; return index of
     * input 6 seen from output 4 is 5 */
    unsigned o;
    REQUIRE(rifl_l2_forward(8, 6, &h, &o) == RIFL_L2_FWD_UNICAST && o == 4);
    rifl_l2_hdr_advance(&h, 6, o);
    CHECK_EQ_U(rifl_l2_remain_hops(&h), 1);
    CHECK_EQ_U(rifl_l2_total_hops(&h), 2);
    CHECK_EQ_U(h.b[1], 1);
    CHECK_EQ_U(h.b[5], 5);
    /* from input 0: return index 0 */
    rifl_l2_hdr_advance(&h, 0, 3);
    CHECK_EQ_U(rifl_l2_remain_hops(&h), 0);
    CHECK_EQ_U(h.b[5], 0);
    CHECK_EQ_U(h.b[4], 5);
    uint8_t back[5];
    unsigned hops;
    CHECK_EQ_I(rifl_l2_reverse_route(&h, back, &hops), RIFL_OK);
    CHECK_EQ_U(hops, 2);
    CHECK_EQ_U(back[0], 0);
    CHECK_EQ_U(back[1], 5);
    /* not arrived yet: refused */
    rifl_l2_hdr_make(&h, route, 2);
    CHECK_EQ_I(rifl_l2_reverse_route(&h, back, &hops), RIFL_ERR_FRAME);
}

/* Random chains of 1..5 switches: the reply route built from the arrived
 * header leads back through the same ports to the source. */
static void t_route_reversal(void)
{
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed ^ 0x51);
    unsigned rounds = test_long_run ? 200000 : 20000, bad = 0, checked = 0;
    for (unsigned r = 0; r < rounds; r++) {
        unsigned hops = 1 + (unsigned)rifl_rng_below(&rng, 5);
        unsigned n[5], in[5], out[5];
        uint8_t route[5];
        for (unsigned k = 0; k < hops; k++) {
            n[k] = 2 + (unsigned)rifl_rng_below(&rng, 255);
            in[k] = (unsigned)rifl_rng_below(&rng, n[k]);
            do
                out[k] = (unsigned)rifl_rng_below(&rng, n[k]);
            while (out[k] == in[k]);
            route[k] = (uint8_t)rifl_l2_rel_port(n[k], in[k], out[k]);
        }
        rifl_l2_hdr h;
        rifl_l2_hdr_make(&h, route, hops);
        for (unsigned k = 0; k < hops; k++) {
            unsigned o;
            if (rifl_l2_forward(n[k], in[k], &h, &o) != RIFL_L2_FWD_UNICAST || o != out[k]) {
                bad++;
                break;
            }
            rifl_l2_hdr_advance(&h, in[k], o);
        }
        CHECK(rifl_l2_remain_hops(&h) == 0);
        rifl_l2_hdr reply;
        if (rifl_l2_hdr_reply(&h, &reply) != RIFL_OK) {
            bad++;
            continue;
        }
        /* the reply enters switch k at out[k] and must leave at in[k] */
        for (int k = (int)hops - 1; k >= 0; k--) {
            unsigned o;
            if (rifl_l2_forward(n[k], out[k], &reply, &o) != RIFL_L2_FWD_UNICAST ||
                o != in[k]) {
                bad++;
                break;
            }
            rifl_l2_hdr_advance(&reply, out[k], o);
        }
        /* and the reply's own reversal is the original route */
        uint8_t again[5];
        unsigned hh;
        if (rifl_l2_reverse_route(&reply, again, &hh) != RIFL_OK || hh != hops ||
            memcmp(again, route, hops))
            bad++;
        checked++;
    }
    CHECK_EQ_U(bad, 0);
    CHECK_EQ_U(checked, rounds);
}

static void t_segment_roundtrip(void)
{
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed ^ 0x5e6);
    enum { MAXM = 5000 };
    static uint8_t msg[MAXM], rbuf[MAXM], cell[RIFL_L2_CELL_PAYLOAD];
    rifl_l2_reasm r;
    rifl_l2_reasm_init(&r, rbuf, sizeof rbuf);
    unsigned rounds = test_long_run ? 20000 : 2000, ok = 0;
    uint64_t cells = 0;
    for (unsigned k = 0; k < rounds; k++) {
        size_t L = k < 600 ? k + 1 : 1 + (size_t)rifl_rng_below(&rng, MAXM);
        for (size_t b = 0; b < L; b++)
            msg[b] = (uint8_t)rifl_rng_next(&rng);
        size_t nc = rifl_l2_msg_cells(L);
        CHECK_EQ_U(nc, (L + 4 + 255) / 256);
        int done = 0;
        size_t got = 0;
        for (size_t c = 0; c < nc; c++) {
            {
                int req_rc_ = rifl_l2_msg_cell(msg, L, c, cell);
                REQUIRE(req_rc_ == RIFL_OK);
            }
            int rc = rifl_l2_reasm_push(&r, cell, &got);
            cells++;
            if (c + 1 < nc)
                CHECK_EQ_I(rc, 0);
            else
                done = rc;
        }
        if (done == 1 && got == L && !memcmp(msg, rbuf, L))
            ok++;
    }
    CHECK_EQ_U(ok, rounds);
    CHECK_EQ_U(r.messages, rounds);
    CHECK_EQ_U(r.cells, cells);
    CHECK_EQ_I(rifl_l2_msg_cell(msg, 10, 1, cell), RIFL_ERR_INVALID_ARG);
    /* exact boundaries: 252 bytes fit one cell, 253 need two */
    CHECK_EQ_U(rifl_l2_msg_cells(252), 1);
    CHECK_EQ_U(rifl_l2_msg_cells(253), 2);
    /* the prefix: protocol 1, then the length in 24 bits */
    REQUIRE(rifl_l2_msg_cell(msg, 300, 0, cell) == RIFL_OK);
    CHECK_EQ_U(cell[0], RIFL_L2_PROTO_DATA);
    CHECK_EQ_U(cell[1], 0);
    CHECK_EQ_U(cell[2], 1);
    CHECK_EQ_U(cell[3], 300 - 256);
    CHECK(!memcmp(cell + 4, msg, 252));
    /* lengths outside 1 .. 2^24 - 1 are refused */
    CHECK_EQ_I(rifl_l2_msg_cell(msg, 0, 0, cell), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_l2_msg_cell(msg, (size_t)RIFL_L2_MSG_MAX + 1, 0, cell), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_U(rifl_l2_msg_cells(RIFL_L2_MSG_MAX), (RIFL_L2_MSG_MAX + 4 + 255) / 256);
}

/* an RDMA bundle's prefix (count, 16-bit length) is read; reserved
 * protocols and zero lengths are dropped and counted, and the next message
 * comes through */
static void t_segment_prefix(void)
{
    static uint8_t buf[1000], cell[RIFL_L2_CELL_PAYLOAD];
    rifl_l2_reasm r;
    rifl_l2_reasm_init(&r, buf, sizeof buf);
    size_t got = 0;
    memset(cell, 0, sizeof cell);
    cell[0] = RIFL_L2_PROTO_RDMA;
    cell[1] = 3;
    cell[2] = 0;
    cell[3] = 10;
    memcpy(cell + 4, "0123456789", 10);
    CHECK_EQ_I(rifl_l2_reasm_push(&r, cell, &got), 1);
    CHECK_EQ_U(got, 10);
    CHECK_EQ_U(r.proto, RIFL_L2_PROTO_RDMA);
    CHECK_EQ_U(r.count, 3);
    CHECK(!memcmp(buf, "0123456789", 10));
    for (unsigned p = 0; p < 256; p++) {
        if (p == RIFL_L2_PROTO_DATA || p == RIFL_L2_PROTO_RDMA)
            continue;
        cell[0] = (uint8_t)p;
        CHECK_EQ_I(rifl_l2_reasm_push(&r, cell, &got), RIFL_ERR_FRAME);
    }
    cell[0] = RIFL_L2_PROTO_DATA;
    cell[1] = cell[2] = cell[3] = 0;
    CHECK_EQ_I(rifl_l2_reasm_push(&r, cell, &got), RIFL_ERR_FRAME);
    CHECK_EQ_U(r.reserved, 254 + 1);
    CHECK(!r.in_msg);
    uint8_t msg[5] = { 9, 8, 7, 6, 5 };
    REQUIRE(rifl_l2_msg_cell(msg, 5, 0, cell) == RIFL_OK);
    CHECK_EQ_I(rifl_l2_reasm_push(&r, cell, &got), 1);
    CHECK_EQ_U(got, 5);
    CHECK_EQ_U(r.proto, RIFL_L2_PROTO_DATA);
    CHECK(!memcmp(buf, msg, 5));
}

static void t_segment_too_big(void)
{
    static uint8_t msg[1000], small[100], cell[RIFL_L2_CELL_PAYLOAD];
    for (unsigned b = 0; b < sizeof msg; b++)
        msg[b] = (uint8_t)b;
    rifl_l2_reasm r;
    rifl_l2_reasm_init(&r, small, sizeof small);
    size_t got = 0;
    int first = 0, later = 0;
    for (size_t c = 0; c < rifl_l2_msg_cells(1000); c++) {
        rifl_l2_msg_cell(msg, 1000, c, cell);
        int rc = rifl_l2_reasm_push(&r, cell, &got);
        if (c == 0)
            first = rc;
        else if (rc != 0)
            later++;
    }
    CHECK_EQ_I(first, RIFL_ERR_TOO_BIG);
    CHECK_EQ_I(later, 0);
    CHECK_EQ_U(r.too_big, 1);
    /* the next message that fits is delivered intact */
    rifl_l2_msg_cell(msg, 50, 0, cell);
    CHECK_EQ_I(rifl_l2_reasm_push(&r, cell, &got), 1);
    CHECK_EQ_U(got, 50);
    CHECK(!memcmp(small, msg, 50));
}

static void t_fc_codec(void)
{
    uint8_t p[30];
    unsigned bad = 0;
    for (unsigned flags = 0; flags < 4; flags++)
        for (unsigned q = 0; q < 256; q += 17) {
            rifl_l2_fc a = { flags & 1, (flags >> 1) & 1, (uint8_t)(flags & 1 ? q : 0),
                             (uint8_t)(flags & 2 ? 255 - q : 0) };
            CHECK_EQ_I(rifl_l2_fc_encode(&a, p, sizeof p), RIFL_OK);
            rifl_l2_fc b;
            if (rifl_l2_fc_decode(p, sizeof p, &b) != RIFL_OK || b.on_valid != a.on_valid ||
                b.off_valid != a.off_valid || b.on_queue != a.on_queue ||
                b.off_queue != a.off_queue)
                bad++;
        }
    CHECK_EQ_U(bad, 0);
    /* byte layout per spec: flags, ON queue, OFF queue, zeros, 0x03 last */
    rifl_l2_fc a = { true, true, 5, 9 };
    rifl_l2_fc_encode(&a, p, sizeof p);
    CHECK_EQ_U(p[0], 0xc0);
    CHECK_EQ_U(p[1], 5);
    CHECK_EQ_U(p[2], 9);
    CHECK_EQ_U(p[29], 0x03);
    unsigned nz = 0;
    for (unsigned k = 3; k < 29; k++)
        nz += p[k] != 0;
    CHECK_EQ_U(nz, 0);
    rifl_l2_fc b;
    p[29] = 0x02;
    CHECK_EQ_I(rifl_l2_fc_decode(p, sizeof p, &b), RIFL_ERR_FRAME);
    p[29] = 0x03;
    p[10] = 1;
    CHECK_EQ_I(rifl_l2_fc_decode(p, sizeof p, &b), RIFL_ERR_FRAME);
    p[10] = 0;
    /* any one padding byte set, at every position and for padding of every
     * length (whole words and a tail), is refused */
    unsigned missed = 0;
    for (size_t len = 3; len <= 40; len++) {
        uint8_t u[40] = { 0xc0, 1, 2 };
        if (rifl_l2_fc_unpack(u, len, &b) != RIFL_OK)
            missed++;
        for (size_t k = 3; k < len; k++) {
            u[k] = (uint8_t)(1u << (k & 7));
            if (rifl_l2_fc_unpack(u, len, &b) != RIFL_ERR_FRAME)
                missed++;
            u[k] = 0;
        }
    }
    CHECK_EQ_U(missed, 0);
    p[0] = 0x20;
    CHECK_EQ_I(rifl_l2_fc_decode(p, sizeof p, &b), RIFL_ERR_FRAME);
    p[0] = 0x80; /* OFF queue set without its flag */
    CHECK_EQ_I(rifl_l2_fc_decode(p, sizeof p, &b), RIFL_ERR_FRAME);
    uint8_t d[3];
    rifl_l2_fc c = { false, true, 0, 200 };
    rifl_l2_fc_pack(&c, d);
    CHECK_EQ_U(d[0], 0x40);
    CHECK_EQ_I(rifl_l2_fc_unpack(d, 3, &b), RIFL_OK);
    CHECK(b.off_valid && !b.on_valid && b.off_queue == 200);
    CHECK_EQ_I(rifl_l2_fc_encode(&c, p, 3), RIFL_ERR_INVALID_ARG);
}

TEST_MAIN({ "header_fields", t_header_fields }, { "forward_rule", t_forward_rule },
          { "rel_port_inverse", t_rel_port_inverse },
          { "advance_return_index", t_advance_return_index },
          { "route_reversal", t_route_reversal }, { "segment_roundtrip", t_segment_roundtrip },
          { "segment_too_big", t_segment_too_big }, { "segment_prefix", t_segment_prefix },
          { "fc_codec", t_fc_codec })

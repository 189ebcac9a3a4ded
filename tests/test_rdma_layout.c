/* How the RDMA engine lays data out (docs/rdma.md): blocks and packets by
 * the cutting rules, page-bound source reads, bundles built, cut into cells
 * by the Layer 2 endpoint, reassembled and walked, the notification record,
 * and the capacity arithmetic against the spec's table. */
#include <math.h>
#include <string.h>

#include "rifl/l2.h"
#include "rifl/rdma_wire.h"
#include "rifl/rng.h"
#include "testlib.h"

static void t_blocks(void)
{
    CHECK_EQ_U(rifl_rdma_block_len(0x1000, 100000, false), 12288);
    CHECK_EQ_U(rifl_rdma_block_len(0x4000, 100000, false), 16384);
    CHECK_EQ_U(rifl_rdma_block_len(0x4000, 100, false), 100);
    CHECK_EQ_U(rifl_rdma_block_len(0x4000, 100000, true), 12288);
    CHECK_EQ_U(rifl_rdma_block_len(0x7000, 100000, true), 4096);
    CHECK_EQ_U(rifl_rdma_block_len(0x4000, 0, false), 0);
    /* a transfer cut block by block covers its bytes once, no block
     * crossing a multiple of 16 KB */
    uint64_t at = 0x12345, left = 100000, blocks = 0, bad = 0;
    while (left) {
        uint32_t n = rifl_rdma_block_len(at, left, false);
        bad += n == 0 || (at % 16384) + n > 16384;
        at += n;
        left -= n;
        blocks++;
    }
    CHECK_EQ_U(bad, 0);
    CHECK_EQ_U(blocks, 7); /* 0x12345..0x2A9E4 lies in windows 4 to 10 of 16 KB */
}

static void t_packets(void)
{
    rifl_rdma_seg s[RIFL_RDMA_BLOCK_PACKETS];
    /* 1000 bytes from 0x10000080: 128, then 256 three times, then 104 */
    unsigned n = rifl_rdma_block_packets(0x10000080, 1000, false, s);
    CHECK_EQ_U(n, 5);
    static const unsigned lens[5] = { 128, 256, 256, 256, 104 };
    for (unsigned k = 0; k < 5 && n == 5; k++) {
        CHECK_EQ_U(s[k].len, lens[k]);
        CHECK_EQ_U(s[k].pkt_index, k);
        CHECK(s[k].first == (k == 0) && s[k].last == (k == 4));
    }
    CHECK_EQ_U(s[1].dst_va, 0x10000100);
    /* a whole window: 64 packets, indexes 0..63 */
    n = rifl_rdma_block_packets(0x8000, 16384, false, s);
    CHECK_EQ_U(n, 64);
    CHECK(n == 64 && s[63].pkt_index == 63 && s[63].last && s[0].first && s[40].len == 256);
    /* one packet: first and last */
    n = rifl_rdma_block_packets(0x8010, 16, false, s);
    CHECK(n == 1 && s[0].first && s[0].last && s[0].pkt_index == 0 && s[0].len == 16);
    /* cell mode: 224 bytes, cut at 4 KB pages, indexes from 0 */
    n = rifl_rdma_block_packets(0x4000, 12288, true, s);
    CHECK_EQ_U(n, 57); /* 3 pages of 18 x 224 + 64 */
    CHECK(s[18].len == 64 && s[18].dst_va == 0x4FC0 && s[19].dst_va == 0x5000 &&
          s[56].pkt_index == 56);
    /* refusals */
    CHECK_EQ_U(rifl_rdma_block_packets(0x3F00, 512, false, s), 0); /* crosses 16 KB */
    CHECK_EQ_U(rifl_rdma_block_packets(0x4000, 0, false, s), 0);
    CHECK_EQ_U(rifl_rdma_block_packets(0x4000, 12289, true, s), 0);
    /* random blocks: contiguous, complete, within the rules */
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed ^ 0xb1);
    unsigned wrong = 0, most_cells = 0;
    for (unsigned i = 0; i < (test_long_run ? 200000u : 20000u); i++) {
        bool cm = rifl_rng_below(&rng, 2);
        uint64_t dst = rifl_rng_next(&rng) & RIFL_RDMA_VA_MASK;
        uint64_t room = 16384 - dst % 16384;
        uint32_t len = 1 + (uint32_t)rifl_rng_below(&rng, room < 16384 ? room : 16384);
        if (cm && len > 12288)
            len = 12288;
        n = rifl_rdma_block_packets(dst, len, cm, s);
        uint64_t at = dst;
        wrong += n == 0;
        for (unsigned k = 0; k < n; k++) {
            uint64_t end = s[k].dst_va + s[k].len;
            wrong += s[k].dst_va != at || s[k].len == 0 || (s[k].dst_va / 4096) != ((end - 1) / 4096);
            if (cm)
                wrong += s[k].len > 224 || s[k].pkt_index != k;
            else
                wrong += (s[k].dst_va / 256) != ((end - 1) / 256) ||
                         s[k].pkt_index != ((s[k].dst_va >> 8) & 63);
            wrong += s[k].first != (k == 0) || s[k].last != (k + 1 == n);
            at = end;
        }
        wrong += at != dst + len;
        if (cm && n > most_cells)
            most_cells = n;
    }
    CHECK_EQ_U(wrong, 0);
    CHECK(most_cells <= 58);
}

static void t_source_reads(void)
{
    unsigned p[2];
    CHECK_EQ_U(rifl_rdma_source_reads(0xFF0, 256, p), 2);
    CHECK(p[0] == 16 && p[1] == 240);
    CHECK_EQ_U(rifl_rdma_source_reads(0x1000, 256, p), 1);
    CHECK(p[0] == 256 && p[1] == 0);
    CHECK_EQ_U(rifl_rdma_source_reads(0x1F00, 256, p), 1);
}

/* A WRITE of 256 bytes, packet k of a block. */
static size_t write_packet(unsigned k, uint8_t *out)
{
    uint8_t payload[256];
    for (unsigned i = 0; i < 256; i++)
        payload[i] = (uint8_t)(k * 31 + i);
    rifl_rdma_hdr h = { .type = RIFL_RDMA_WRITE, .pdid = 7, .dst_node = 2,
                        .dst_va = 0x10000000 + 256ull * k, .length = 256, .path = 3 };
    rifl_rdma_ftr f = { .src_node = 1, .tid = 9, .gen = 1, .first = k == 0, .pkt_index = k };
    size_t len = 0;
    rifl_rdma_packet_build(&h, &f, payload, out, RIFL_RDMA_MAX_PACKET, &len);
    return len;
}

static void t_bundles(void)
{
    static uint8_t buf[70000];
    uint8_t pkt[RIFL_RDMA_MAX_PACKET];
    rifl_rdma_bundle b;
    CHECK_EQ_I(rifl_rdma_bundle_init(&b, buf, sizeof buf), RIFL_OK);
    size_t len;
    CHECK_EQ_I(rifl_rdma_bundle_finish(&b, &len), RIFL_ERR_STATE);
    for (unsigned k = 0; k < 7; k++)
        CHECK_EQ_I(rifl_rdma_bundle_add(&b, pkt, write_packet(k, pkt)), RIFL_OK);
    CHECK_EQ_I(rifl_rdma_bundle_finish(&b, &len), RIFL_OK);
    CHECK_EQ_U(len, 4 + 7 * 288);
    CHECK(buf[0] == 0x02 && buf[1] == 7 && buf[2] == 0x07 && buf[3] == 0xE0);
    /* through the Layer 2 endpoint: cells, reassembled, then walked */
    size_t cells = (len + RIFL_L2_CELL_PAYLOAD - 1) / RIFL_L2_CELL_PAYLOAD;
    CHECK_EQ_U(cells, 8);
    static uint8_t msg[70000];
    rifl_l2_reasm r;
    rifl_l2_reasm_init(&r, msg, sizeof msg);
    size_t got = 0;
    int rc = 0;
    for (size_t c = 0; c < cells; c++) {
        uint8_t cell[RIFL_L2_CELL_PAYLOAD] = { 0 };
        size_t n = len - c * 256 < 256 ? len - c * 256 : 256;
        memcpy(cell, buf + c * 256, n);
        rc = rifl_l2_reasm_push(&r, cell, &got);
    }
    CHECK_EQ_I(rc, 1);
    CHECK_EQ_U(got, 7 * 288);
    CHECK_EQ_U(r.proto, RIFL_L2_PROTO_RDMA);
    CHECK_EQ_U(r.count, 7);
    rifl_rdma_bundle_reader rd;
    rifl_rdma_bundle_reader_init(&rd, msg, got, r.count);
    rifl_rdma_packet p;
    rifl_rdma_check c;
    unsigned seen = 0;
    rifl_rdma_walk w;
    while ((w = rifl_rdma_bundle_next(&rd, &p, &c)) == RIFL_RDMA_WALK_PACKET) {
        CHECK(c == RIFL_RDMA_PKT_OK && p.hdr.dst_va == 0x10000000 + 256ull * seen &&
              p.payload[5] == (uint8_t)(seen * 31 + 5));
        seen++;
    }
    CHECK_EQ_I(w, RIFL_RDMA_WALK_END);
    CHECK_EQ_U(seen, 7);
    /* a count that disagrees, either way */
    rifl_rdma_bundle_reader_init(&rd, buf + 4, len - 4, 8);
    while ((w = rifl_rdma_bundle_next(&rd, &p, &c)) == RIFL_RDMA_WALK_PACKET) {
    }
    CHECK_EQ_I(w, RIFL_RDMA_WALK_DROPPED);
    rifl_rdma_bundle_reader_init(&rd, buf + 4, len - 4, 6);
    seen = 0;
    while ((w = rifl_rdma_bundle_next(&rd, &p, &c)) == RIFL_RDMA_WALK_PACKET)
        seen++;
    CHECK(w == RIFL_RDMA_WALK_DROPPED && seen == 6);
    /* a bad footer is that packet's; a bad header ends the bundle */
    static uint8_t bad[70000];
    memcpy(bad, buf + 4, len - 4);
    bad[288 + 288 - 1] ^= 1;      /* packet 1's ftr_crc */
    bad[3 * 288 + 2] ^= 0x10;     /* packet 3's header */
    rifl_rdma_bundle_reader_init(&rd, bad, len - 4, 7);
    rifl_rdma_check checks[8];
    seen = 0;
    while ((w = rifl_rdma_bundle_next(&rd, &p, &c)) == RIFL_RDMA_WALK_PACKET && seen < 8)
        checks[seen++] = c;
    CHECK(w == RIFL_RDMA_WALK_DROPPED && seen == 3 && checks[0] == RIFL_RDMA_PKT_OK &&
          checks[1] == RIFL_RDMA_PKT_BAD_FTR && checks[2] == RIFL_RDMA_PKT_OK);
    CHECK_EQ_I(rifl_rdma_bundle_next(&rd, &p, &c), RIFL_RDMA_WALK_DROPPED);
    /* limits: 65535 bytes of packets, 255 packets */
    CHECK_EQ_I(rifl_rdma_bundle_init(&b, buf, sizeof buf), RIFL_OK);
    unsigned added = 0;
    while (rifl_rdma_bundle_add(&b, pkt, write_packet(0, pkt)) == RIFL_OK)
        added++;
    CHECK_EQ_U(added, 227); /* 227 x 288 = 65376; one more is 65664 */
    rifl_rdma_hdr rh = { .type = RIFL_RDMA_RESP, .dst_node = 1 };
    rifl_rdma_ftr rf = { .src_node = 2 };
    size_t rl;
    CHECK_EQ_I(rifl_rdma_packet_build(&rh, &rf, NULL, pkt, sizeof pkt, &rl), RIFL_OK);
    CHECK_EQ_I(rifl_rdma_bundle_init(&b, buf, sizeof buf), RIFL_OK);
    added = 0;
    while (rifl_rdma_bundle_add(&b, pkt, rl) == RIFL_OK)
        added++;
    CHECK_EQ_U(added, 255);
    CHECK_EQ_I(rifl_rdma_bundle_init(&b, buf, 100), RIFL_OK);
    CHECK_EQ_I(rifl_rdma_bundle_add(&b, pkt, write_packet(0, pkt)), RIFL_ERR_TOO_BIG);
    CHECK_EQ_I(rifl_rdma_bundle_add(&b, pkt, 17), RIFL_ERR_INVALID_ARG);
}

static void t_record(void)
{
    uint8_t r[32];
    rifl_rdma_record_pack(0x1122334455667788ull, 4096, 0xABCD, 1, 7, 5, r);
    static const uint8_t want[32] = {
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,
        0xAB, 0xCD, /* src_node 1 at 42, pdid 7 at 26, tid 5 at 16 */
        0x00, 0x00, 0x04, 0x00, 0x1C, 0x05, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0x01,
    };
    CHECK(memcmp(r, want, 32) == 0);
    rifl_rdma_record back;
    rifl_rdma_record_unpack(r, &back);
    CHECK_EQ_U(back.cookie, 0x1122334455667788ull);
    CHECK_EQ_U(back.transfer_length, 4096);
    CHECK_EQ_U(back.immediate, 0xABCD);
    CHECK_EQ_U(back.src_node, 1);
    CHECK_EQ_U(back.pdid, 7);
    CHECK_EQ_U(back.tid, 5);
    CHECK(back.written);
    r[31] = 0;
    rifl_rdma_record_unpack(r, &back);
    CHECK(!back.written);
}

static void t_capacity(void)
{
    /* the spec's table: F = 256 gives R x 7/9 */
    CHECK(fabs(rifl_rdma_capacity_gbps(10, 256, 7, false) - 70.0 / 9) < 1e-9);
    CHECK(fabs(rifl_rdma_capacity_gbps(100, 256, 7, false) - 77.78) < 0.01);
    static const struct {
        unsigned F;
        double pct;
    } t[] = { { 64, 63.6 }, { 128, 73.7 }, { 512, 70.0 }, { 1024, 58.3 }, { 2048, 43.8 } };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        double pct = rifl_rdma_capacity_gbps(100, t[k].F, 7, false);
        CHECK_MSG(fabs(pct - t[k].pct) < 0.05, "F=%u: %.2f%%, the spec %.1f%%", t[k].F, pct,
                  t[k].pct);
    }
    CHECK(fabs(rifl_rdma_capacity_gbps(100, 256, 15, false) - 78.4) < 0.05);
    /* larger bundles tend to 256/288 x 256/288 = 79.0% */
    double most = rifl_rdma_capacity_gbps(100, 256, 227, false);
    CHECK(most > 78.7 && most < 79.0);
    CHECK(fabs(rifl_rdma_capacity_gbps(100, 256, 0, true) - 77.78) < 0.01);
    CHECK(rifl_rdma_capacity_gbps(100, 256, 1, false) < 45); /* one packet, 2 cells */
    CHECK(rifl_rdma_capacity_gbps(100, 300, 7, false) == 0);
    CHECK(rifl_rdma_capacity_gbps(100, 256, 228, false) == 0);
}

TEST_MAIN({ "blocks", t_blocks }, { "packets", t_packets }, { "source_reads", t_source_reads },
          { "bundles", t_bundles }, { "record", t_record }, { "capacity", t_capacity })

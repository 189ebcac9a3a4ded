/* The RDMA engine's wire formats against the spec's worked examples
 * (docs/rdma.md): the check codes on "123456789", the one-packet WRITE and
 * its ACK byte for byte, every field at its bit positions, random round
 * trips, and every way a received packet can be refused. */
#include <string.h>

#include "rifl/rdma_wire.h"
#include "rifl/rng.h"
#include "testlib.h"

static const uint8_t check_string[9] = { '1', '2', '3', '4', '5', '6', '7', '8', '9' };

static void t_check_codes(void)
{
    CHECK_EQ_U(rifl_rdma_crc16(check_string, 9), 0x29B1);
    CHECK_EQ_U(rifl_rdma_crc8(check_string, 9), 0xF4);
    CHECK_EQ_U(rifl_crc32c(check_string, 9), 0xE3069283u);
    CHECK_EQ_U(rifl_crc32c(check_string, 0), 0);
    CHECK_EQ_U(rifl_crc32c_portable(check_string, 9), 0xE3069283u);
    /* the CPU's path against the portable one: every length and alignment */
    uint8_t buf[300];
    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 131 + 17);
    for (unsigned off = 0; off < 8; off++)
        for (unsigned n = 0; n + off <= sizeof buf; n += 1 + n / 16)
            CHECK_EQ_U(rifl_crc32c(buf + off, n), rifl_crc32c_portable(buf + off, n));
}

/* docs/rdma.md: node 1 to node 2, pdid 7, tid 5, gen 3, attempt 0; a
 * one-packet WRITE of bytes 00..0F to 0x10004100, path 1, and its ACK */
static const uint8_t ex_write_hdr[16] = { 0x10, 0x00, 0x70, 0x00, 0x00, 0x80, 0x01, 0x00,
                                          0x04, 0x10, 0x00, 0x80, 0x40, 0x00, 0x27, 0x21 };
static const uint8_t ex_write_ftr[16] = { 0x00, 0x00, 0x04, 0x05, 0x00, 0xC3, 0x02, 0x00,
                                          0x00, 0x00, 0x00, 0xD9, 0xC9, 0x08, 0xEB, 0x1B };
static const uint8_t ex_ack_hdr[16] = { 0x80, 0x00, 0x70, 0x00, 0x00, 0x78, 0x00, 0x00,
                                        0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0xF5, 0x4C };
static const uint8_t ex_ack_ftr[16] = { 0x00, 0x00, 0x08, 0x05, 0x00, 0xC0, 0x00, 0x00,
                                        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x58 };

static void example_write(rifl_rdma_hdr *h, rifl_rdma_ftr *f, uint8_t payload[16])
{
    *h = (rifl_rdma_hdr){ .type = RIFL_RDMA_WRITE, .pdid = 7, .dst_node = 2,
                          .dst_va = 0x10004100, .length = 16, .path = 1 };
    *f = (rifl_rdma_ftr){ .src_node = 1, .tid = 5, .gen = 3, .attempt = 0, .first = true,
                          .last = true, .pkt_index = 1 };
    for (int i = 0; i < 16; i++)
        payload[i] = (uint8_t)i;
}

static void t_worked_examples(void)
{
    rifl_rdma_hdr h;
    rifl_rdma_ftr f;
    uint8_t payload[16], pkt[RIFL_RDMA_MAX_PACKET];
    example_write(&h, &f, payload);
    size_t len = 0;
    CHECK_EQ_I(rifl_rdma_packet_build(&h, &f, payload, pkt, sizeof pkt, &len), RIFL_OK);
    CHECK_EQ_U(len, 48);
    CHECK(memcmp(pkt, ex_write_hdr, 16) == 0);
    CHECK(memcmp(pkt + 16, payload, 16) == 0);
    CHECK(memcmp(pkt + 32, ex_write_ftr, 16) == 0);
    /* the ACK: header to the sender's peripheral 0, footer from the responder */
    rifl_rdma_hdr ah = { .type = RIFL_RDMA_RESP, .pdid = 7, .dst_node = 1,
                         .dst_va = 0x38000000000ull, .length = 0, .path = 1 };
    rifl_rdma_ftr af = { .src_node = 2, .tid = 5, .gen = 3, .attempt = 0,
                         .status = RIFL_RDMA_ACK };
    CHECK_EQ_I(rifl_rdma_packet_build(&ah, &af, NULL, pkt, sizeof pkt, &len), RIFL_OK);
    CHECK_EQ_U(len, 32);
    CHECK(memcmp(pkt, ex_ack_hdr, 16) == 0);
    CHECK(memcmp(pkt + 16, ex_ack_ftr, 16) == 0);
    /* and back */
    uint8_t whole[48];
    memcpy(whole, ex_write_hdr, 16);
    memcpy(whole + 16, payload, 16);
    memcpy(whole + 32, ex_write_ftr, 16);
    rifl_rdma_packet p;
    CHECK_EQ_I(rifl_rdma_packet_parse(whole, sizeof whole, &p), RIFL_RDMA_PKT_OK);
    CHECK(p.hdr.type == 1 && p.hdr.pdid == 7 && p.hdr.dst_node == 2 &&
          p.hdr.dst_va == 0x10004100 && p.hdr.length == 16 && p.hdr.path == 1);
    CHECK(p.ftr.src_node == 1 && p.ftr.tid == 5 && p.ftr.gen == 3 && p.ftr.attempt == 0 &&
          p.ftr.first && p.ftr.last && !p.ftr.notify && p.ftr.pkt_index == 1 &&
          p.ftr.status == 0 && p.ftr.payload_crc == 0xD9C908EBu);
    CHECK(p.payload == whole + 16 && p.bytes == 48);
    uint8_t ack[32];
    memcpy(ack, ex_ack_hdr, 16);
    memcpy(ack + 16, ex_ack_ftr, 16);
    CHECK_EQ_I(rifl_rdma_packet_parse(ack, sizeof ack, &p), RIFL_RDMA_PKT_OK);
    CHECK(p.hdr.type == RIFL_RDMA_RESP && p.hdr.dst_va == 0x38000000000ull &&
          p.ftr.src_node == 2 && p.ftr.status == RIFL_RDMA_ACK && !p.payload && p.bytes == 32);
}

static bool hdr_equal(const rifl_rdma_hdr *a, const rifl_rdma_hdr *b)
{
    return a->type == b->type && a->pdid == b->pdid && a->dst_node == b->dst_node &&
           a->dst_va == b->dst_va && a->length == b->length && a->path == b->path;
}

static bool ftr_equal(const rifl_rdma_ftr *a, const rifl_rdma_ftr *b)
{
    return a->src_node == b->src_node && a->tid == b->tid && a->gen == b->gen &&
           a->attempt == b->attempt && a->first == b->first && a->last == b->last &&
           a->notify == b->notify && a->pkt_index == b->pkt_index && a->status == b->status &&
           a->payload_crc == b->payload_crc;
}

/* Each field alone at its maximum lands on exactly its bits. */
static unsigned popcount16(const uint8_t *b, unsigned from, unsigned n)
{
    unsigned c = 0;
    for (unsigned i = from; i < from + n; i++)
        c += (unsigned)__builtin_popcount(b[i]);
    return c;
}

static void t_field_positions(void)
{
    uint8_t b[16];
    struct {
        rifl_rdma_hdr h;
        unsigned bits, first_byte, first_mask;
    } hc[] = {
        { { .type = 15 }, 4, 0, 0xF0 },
        { { .pdid = 0xFFFF }, 16, 0, 0x0F },
        { { .dst_node = 0x3FFFFF }, 22, 2, 0x0F },
        { { .dst_va = RIFL_RDMA_VA_MASK }, 42, 5, 0x3F },
        { { .length = 256 }, 1, 10, 0x08 },
        { { .path = 31 }, 5, 11, 0x07 },
    };
    for (size_t k = 0; k < sizeof hc / sizeof hc[0]; k++) {
        CHECK_EQ_I(rifl_rdma_hdr_pack(&hc[k].h, b), RIFL_OK);
        CHECK_MSG(popcount16(b, 0, 14) == hc[k].bits, "header field %zu: %u bits", k,
                  popcount16(b, 0, 14));
        CHECK_MSG((b[hc[k].first_byte] & hc[k].first_mask) != 0, "header field %zu", k);
        rifl_rdma_hdr back;
        CHECK_EQ_I(rifl_rdma_hdr_unpack(b, &back), RIFL_OK);
        CHECK(hdr_equal(&back, &hc[k].h));
    }
    /* length 256 is bit 43, the top of its 9 bits: byte 10, 0x08 */
    rifl_rdma_ftr f = { .payload_crc = 0xFFFFFFFFu };
    CHECK_EQ_I(rifl_rdma_ftr_pack(&f, b), RIFL_OK);
    /* bits 39:8: bytes 11 to 14 */
    CHECK(b[11] == 0xFF && b[12] == 0xFF && b[13] == 0xFF && b[14] == 0xFF && b[10] == 0 &&
          popcount16(b, 0, 15) == 32);
    f = (rifl_rdma_ftr){ .status = 15 };
    CHECK_EQ_I(rifl_rdma_ftr_pack(&f, b), RIFL_OK);
    CHECK(b[6] == 0x01 && b[7] == 0xE0 && popcount16(b, 0, 15) == 4);
    f = (rifl_rdma_ftr){ .notify = true };
    CHECK_EQ_I(rifl_rdma_ftr_pack(&f, b), RIFL_OK);
    CHECK(b[6] == 0x80 && popcount16(b, 0, 15) == 1);
    f = (rifl_rdma_ftr){ .attempt = 15 };
    CHECK_EQ_I(rifl_rdma_ftr_pack(&f, b), RIFL_OK);
    CHECK(b[5] == 0x3C && popcount16(b, 0, 15) == 4);
    /* out of range */
    rifl_rdma_hdr bad = { .type = 16 };
    CHECK_EQ_I(rifl_rdma_hdr_pack(&bad, b), RIFL_ERR_INVALID_ARG);
    bad = (rifl_rdma_hdr){ .dst_va = RIFL_RDMA_VA_MASK + 1 };
    CHECK_EQ_I(rifl_rdma_hdr_pack(&bad, b), RIFL_ERR_INVALID_ARG);
    bad = (rifl_rdma_hdr){ .length = 257 };
    CHECK_EQ_I(rifl_rdma_hdr_pack(&bad, b), RIFL_ERR_INVALID_ARG);
    rifl_rdma_ftr badf = { .tid = 1024 };
    CHECK_EQ_I(rifl_rdma_ftr_pack(&badf, b), RIFL_ERR_INVALID_ARG);
    badf = (rifl_rdma_ftr){ .pkt_index = 64 };
    CHECK_EQ_I(rifl_rdma_ftr_pack(&badf, b), RIFL_ERR_INVALID_ARG);
}

static void t_random_roundtrip(void)
{
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed ^ 0x7d);
    unsigned n = test_long_run ? 200000 : 20000, bad = 0;
    static const unsigned types[] = { RIFL_RDMA_WRITE, RIFL_RDMA_READ_REQ, RIFL_RDMA_NOTIFY,
                                      RIFL_RDMA_RESP };
    for (unsigned i = 0; i < n; i++) {
        rifl_rdma_hdr h = { .type = types[rifl_rng_below(&rng, 4)],
                            .pdid = (uint16_t)rifl_rng_next(&rng),
                            .dst_node = (uint32_t)rifl_rng_below(&rng, 0x400000),
                            .dst_va = rifl_rng_next(&rng) & RIFL_RDMA_VA_MASK,
                            .path = (unsigned)rifl_rng_below(&rng, 32) };
        h.length = h.type == RIFL_RDMA_WRITE ? 1 + (unsigned)rifl_rng_below(&rng, 256)
                   : h.type == RIFL_RDMA_READ_REQ ? 40 : h.type == RIFL_RDMA_NOTIFY ? 32 : 0;
        rifl_rdma_ftr f = { .src_node = (uint32_t)rifl_rng_below(&rng, 0x400000),
                            .tid = (unsigned)rifl_rng_below(&rng, 1024),
                            .gen = (unsigned)rifl_rng_below(&rng, 1024),
                            .attempt = (unsigned)rifl_rng_below(&rng, 16),
                            .first = rifl_rng_below(&rng, 2), .last = rifl_rng_below(&rng, 2),
                            .notify = rifl_rng_below(&rng, 2),
                            .pkt_index = (unsigned)rifl_rng_below(&rng, 64),
                            .status = (unsigned)rifl_rng_below(&rng, 16) };
        uint8_t payload[256], pkt[RIFL_RDMA_MAX_PACKET + 16];
        for (unsigned k = 0; k < h.length; k++)
            payload[k] = (uint8_t)rifl_rng_next(&rng);
        size_t len;
        if (rifl_rdma_packet_build(&h, &f, payload, pkt, sizeof pkt, &len) != RIFL_OK) {
            bad++;
            continue;
        }
        /* a bundle goes on behind it */
        memset(pkt + len, 0xA5, sizeof pkt - len);
        rifl_rdma_packet p;
        f.payload_crc = h.length ? rifl_crc32c(payload, h.length) : 0;
        if (rifl_rdma_packet_parse(pkt, sizeof pkt, &p) != RIFL_RDMA_PKT_OK ||
            !hdr_equal(&p.hdr, &h) || !ftr_equal(&p.ftr, &f) || p.bytes != len ||
            len != rifl_rdma_packet_bytes(h.type, h.length) || len % 16 ||
            (h.length && memcmp(p.payload, payload, h.length)))
            bad++;
        /* the padding is zeros */
        for (size_t k = 16 + h.length; k < len - 16; k++)
            bad += pkt[k] != 0;
    }
    CHECK_EQ_U(bad, 0);
}

/* One bit flipped anywhere: the checks catch it in the spec's order. */
static void t_refusals(void)
{
    rifl_rdma_hdr h;
    rifl_rdma_ftr f;
    uint8_t payload[16], pkt[48], b[48];
    example_write(&h, &f, payload);
    size_t len;
    CHECK_EQ_I(rifl_rdma_packet_build(&h, &f, payload, pkt, sizeof pkt, &len), RIFL_OK);
    rifl_rdma_packet p;
    unsigned wrong = 0;
    for (unsigned bit = 0; bit < 48 * 8; bit++) {
        memcpy(b, pkt, sizeof b);
        b[bit / 8] ^= (uint8_t)(0x80u >> (bit % 8));
        rifl_rdma_check c = rifl_rdma_packet_parse(b, sizeof b, &p);
        rifl_rdma_check want = bit < 128   ? RIFL_RDMA_PKT_BAD_HDR
                               : bit < 256 ? RIFL_RDMA_PKT_BAD_PAYLOAD
                                           : RIFL_RDMA_PKT_BAD_FTR;
        if (c != want) {
            wrong++;
            fprintf(stderr, "  bit %u: %s\n", bit, rifl_rdma_check_name(c));
        }
    }
    CHECK_EQ_U(wrong, 0);
    CHECK_EQ_I(rifl_rdma_packet_parse(pkt, 15, &p), RIFL_RDMA_PKT_SHORT);
    CHECK_EQ_I(rifl_rdma_packet_parse(pkt, 47, &p), RIFL_RDMA_PKT_SHORT);
    CHECK_EQ_U(p.bytes, 48); /* known from the header all the same */
    /* reserved and header-only types */
    rifl_rdma_hdr r = { .type = 5 };
    CHECK_EQ_I(rifl_rdma_hdr_pack(&r, b), RIFL_OK);
    CHECK_EQ_I(rifl_rdma_packet_parse(b, 16, &p), RIFL_RDMA_PKT_RESERVED);
    r.type = RIFL_RDMA_RELEASE;
    CHECK_EQ_I(rifl_rdma_hdr_pack(&r, b), RIFL_OK);
    CHECK_EQ_I(rifl_rdma_packet_parse(b, 16, &p), RIFL_RDMA_PKT_SKIPPED);
    CHECK_EQ_U(p.bytes, 16);
    CHECK_EQ_U(rifl_rdma_packet_bytes(RIFL_RDMA_FLOW_RATE, 0), 16);
    /* a length field above 256 (the field holds up to 511): no packet has
     * that size, so the parser gives no size to step on */
    {
        uint8_t big[16 + 512 + 16] = { 0 };
        rifl_rdma_hdr o = { .type = RIFL_RDMA_WRITE, .length = 200 };
        CHECK_EQ_I(rifl_rdma_hdr_pack(&o, big), RIFL_OK);
        big[10] |= 0x08; /* bit 43, the field's top bit: length 456 */
        rifl_rdma_hdr back;
        uint16_t edc = rifl_rdma_crc16(big, 14);
        big[14] = (uint8_t)(edc >> 8);
        big[15] = (uint8_t)edc;
        CHECK_EQ_I(rifl_rdma_hdr_unpack(big, &back), RIFL_OK);
        CHECK_EQ_U(back.length, 456);
        CHECK_EQ_I(rifl_rdma_packet_parse(big, sizeof big, &p), RIFL_RDMA_PKT_OVERSIZE);
        CHECK_EQ_U(p.bytes, 0);
        CHECK_EQ_I(rifl_rdma_compact_parse(big, sizeof big, &p), RIFL_RDMA_PKT_OVERSIZE);
        CHECK_EQ_U(p.bytes, 0);
        /* in a bundle, the walk stops there */
        rifl_rdma_bundle_reader rd;
        rifl_rdma_bundle_reader_init(&rd, big, sizeof big, 1);
        rifl_rdma_check c;
        CHECK_EQ_I(rifl_rdma_bundle_next(&rd, &p, &c), RIFL_RDMA_WALK_DROPPED);
        CHECK_EQ_I(c, RIFL_RDMA_PKT_OVERSIZE);
        CHECK(strcmp(rifl_rdma_check_name(c), "oversize") == 0);
    }
    /* a length its type does not allow: checked after the footer */
    r = (rifl_rdma_hdr){ .type = RIFL_RDMA_NOTIFY, .length = 16 };
    CHECK_EQ_I(rifl_rdma_hdr_pack(&r, b), RIFL_OK);
    memset(b + 16, 0, 16);
    CHECK_EQ_I(rifl_rdma_ftr_pack(&f, b + 32), RIFL_OK);
    CHECK_EQ_I(rifl_rdma_packet_parse(b, 48, &p), RIFL_RDMA_PKT_BAD_LENGTH);
    CHECK_EQ_U(rifl_rdma_packet_bytes(RIFL_RDMA_NOTIFY, 16), 0);
    CHECK_EQ_U(rifl_rdma_packet_bytes(RIFL_RDMA_WRITE, 0), 0);
    CHECK_EQ_U(rifl_rdma_packet_bytes(RIFL_RDMA_RESP, 0), 32);
    CHECK_EQ_U(rifl_rdma_packet_bytes(RIFL_RDMA_READ_REQ, 40), 16 + 48 + 16);
    /* building refuses what it cannot send */
    CHECK_EQ_I(rifl_rdma_packet_build(&h, &f, payload, pkt, 47, &len), RIFL_ERR_TOO_BIG);
    CHECK_EQ_I(rifl_rdma_packet_build(&h, &f, NULL, pkt, sizeof pkt, &len), RIFL_ERR_INVALID_ARG);
    h.length = 0;
    CHECK_EQ_I(rifl_rdma_packet_build(&h, &f, payload, pkt, sizeof pkt, &len),
               RIFL_ERR_INVALID_ARG);
    CHECK(strcmp(rifl_rdma_status_name(RIFL_RDMA_NACK_PROTECTION), "protection") == 0);
    CHECK(strcmp(rifl_rdma_type_name(RIFL_RDMA_READ_REQ), "read_req") == 0);
}

static void t_payloads(void)
{
    rifl_rdma_notify n = { rifl_rdma_gva_word(3, 0x1234500), 0xC00C1E, 16384, 0xDEADBEEF }, m;
    uint8_t b[40];
    rifl_rdma_notify_pack(&n, b);
    CHECK(b[0] == 0x00 && b[1] == 0x00 && b[2] == 0x0C && b[23] == 0xEF && b[16] == 0 &&
          b[17] == 0 && b[18] == 0x40 && b[19] == 0);
    CHECK_EQ_I(rifl_rdma_notify_unpack(b, &m), RIFL_OK);
    CHECK(m.target == n.target && m.cookie == n.cookie &&
          m.transfer_length == n.transfer_length && m.immediate == n.immediate);
    CHECK_EQ_U(rifl_rdma_gva_node(m.target), 3);
    CHECK_EQ_U(rifl_rdma_gva_va(m.target), 0x1234500);
    b[31] = 1;
    CHECK_EQ_I(rifl_rdma_notify_unpack(b, &m), RIFL_ERR_FRAME);
    rifl_rdma_read_req r = { 0x1000, rifl_rdma_gva_word(9, 0x2000), 4096, 7, 99,
                             rifl_rdma_gva_word(9, 0x380 + 0ull) }, q;
    rifl_rdma_read_req_pack(&r, b);
    rifl_rdma_read_req_unpack(b, &q);
    CHECK(q.src_va == r.src_va && q.dst == r.dst && q.length == r.length &&
          q.immediate == r.immediate && q.cookie == r.cookie &&
          q.notify_target == r.notify_target);
    CHECK(b[7] == 0x00 && b[6] == 0x10 && b[20] == 0 && b[21] == 0 && b[22] == 0 && b[23] == 7);
    CHECK(rifl_rdma_gen_newer(3, 2) && rifl_rdma_gen_newer(0, 1023) &&
          rifl_rdma_gen_newer(511, 0) && !rifl_rdma_gen_newer(512, 0) &&
          !rifl_rdma_gen_newer(5, 5));
}

static void t_descriptor(void)
{
    rifl_rdma_desc d = { .src_va = 0x123456789ull, .dst = rifl_rdma_gva_word(0x3FFFFE, 0x40),
                         .db = true, .send_notify = true, .dependency_id = 1023, .chained = true,
                         .transfer_length = 16384, .pd = 0xBEEF, .gen = 1023, .attempt = 15,
                         .path = 31 },
                   e;
    uint64_t w[4];
    CHECK_EQ_I(rifl_rdma_desc_pack(&d, w), RIFL_OK);
    CHECK_EQ_U(w[2] >> 63, 1);
    CHECK_EQ_U((w[2] >> 59) & 1, 1);
    CHECK_EQ_U((w[2] >> 42) & 1023, 0); /* bytes_sent low bits: 0 */
    CHECK_EQ_U((w[2] >> 32) & 1023, 1023);
    CHECK_EQ_U((w[2] >> 16) & 0x7FFF, 16384);
    CHECK_EQ_U(w[2] & 0xFFFF, 0xBEEF);
    CHECK_EQ_U(w[3], (1023ull << 9) | (15ull << 5) | 31);
    CHECK_EQ_I(rifl_rdma_desc_unpack(w, &e), RIFL_OK);
    CHECK(e.src_va == d.src_va && e.dst == d.dst && e.db && !e.error && !e.acked && !e.done &&
          e.send_notify && e.bytes_sent == 0 && e.dependency_id == 1023 && e.chained &&
          e.transfer_length == 16384 && e.pd == 0xBEEF && e.gen == 1023 && e.attempt == 15 &&
          e.path == 31);
    d.bytes_sent = 0x7FFF;
    d.done = true;
    CHECK_EQ_I(rifl_rdma_desc_pack(&d, w), RIFL_OK);
    CHECK_EQ_U((w[2] >> 42) & 0x7FFF, 0x7FFF);
    CHECK_EQ_U((w[2] >> 57) & 1, 1);
    CHECK_EQ_I(rifl_rdma_desc_unpack(w, &e), RIFL_OK);
    CHECK(e.bytes_sent == 0x7FFF && e.done);
    w[3] |= 1ull << 40; /* unused bits set */
    CHECK_EQ_I(rifl_rdma_desc_unpack(w, &e), RIFL_ERR_FRAME);
    d.transfer_length = 0;
    CHECK_EQ_I(rifl_rdma_desc_pack(&d, w), RIFL_ERR_INVALID_ARG);
    d.transfer_length = 16385;
    CHECK_EQ_I(rifl_rdma_desc_pack(&d, w), RIFL_ERR_INVALID_ARG);
}

TEST_MAIN({ "check_codes", t_check_codes }, { "worked_examples", t_worked_examples },
          { "field_positions", t_field_positions }, { "random_roundtrip", t_random_roundtrip },
          { "refusals", t_refusals }, { "payloads", t_payloads }, { "descriptor", t_descriptor })

/* Unit tests of the CRC, the scrambler and the frame codec against the
 * bit-at-a-time reference implementations and hand-checked properties. */
#include "testlib.h"

#include "rifl/frame.h"
#include "rifl/rng.h"
#include "rifl/text.h"

static const unsigned widths[] = { 64, 128, 256, 512, 1024, 2048 };

static void random_frame(rifl_rng *r, uint8_t *f, unsigned F)
{
    for (unsigned i = 0; i < F / 8; i++)
        f[i] = (uint8_t)rifl_rng_next(r);
}

/* CRC of a one-bit message is x^k * x^12 mod G: check it against a
 * polynomial computed by hand for the lowest positions, and the fast
 * versions against the reference for random frames of every width. */
static void t_crc_reference(void)
{
    /* only the last bit before VCODE set: the frame polynomial is x^12 (the
     * 12 VCODE bits follow it), the CRC x^24 mod G.  By hand: x^12 = x^5 +
     * x^3 + x^2 + x + 1 (0x02F) mod G, and squaring in GF(2) doubles every
     * exponent: x^24 = x^10 + x^6 + x^4 + x^2 + 1 = 0x455. */
    uint8_t f[RIFL_FRAME_MAX_BYTES] = { 0 };
    f[256 / 8 - 2] = 0x10; /* bit F-13 */
    CHECK_EQ_U(rifl_crc12_ref(f, 256), 0x455);
    CHECK_EQ_U(rifl_crc12(f, 256), 0x455);
    memset(f, 0, sizeof f);
    CHECK_EQ_U(rifl_crc12(f, 256), 0);
    /* VCODE bits are ignored */
    f[31] = 0xFF;
    f[30] = 0x0F;
    CHECK_EQ_U(rifl_crc12(f, 256), 0);
    CHECK_EQ_U(rifl_crc12_ref(f, 256), 0);

    rifl_rng r;
    rifl_rng_seed(&r, test_seed);
    unsigned bad = 0, badw = 0;
    for (int n = 0; n < 3000; n++) {
        unsigned F = widths[n % 6];
        random_frame(&r, f, F);
        uint16_t ref = rifl_crc12_ref(f, F);
        if (rifl_crc12(f, F) != ref)
            bad++;
        /* the word-parallel CRC of the encoder: VCODE = CRC ^ ID of what it sent */
        uint8_t wire[RIFL_FRAME_MAX_BYTES];
        uint64_t scr = rifl_rng_next(&r);
        unsigned id = (unsigned)rifl_rng_below(&r, 4096);
        rifl_frame_encode(wire, F, RIFL_SYN_DATA, f[0] >> 6, f + 1, id, &scr);
        unsigned vcode = (unsigned)(wire[F / 8 - 2] & 0x0F) << 8 | wire[F / 8 - 1];
        if ((rifl_crc12_ref(wire, F) ^ id) != vcode)
            badw++;
    }
    CHECK_EQ_U(bad, 0);
    CHECK_EQ_U(badw, 0);
}

/* The CRC detects every 1-, 2- and 3-bit error in a 256-bit frame
 * (Hamming distance 4 for this length). */
static void t_crc_detects_small_errors(void)
{
    uint8_t f[32], g[32];
    rifl_rng r;
    rifl_rng_seed(&r, test_seed + 1);
    random_frame(&r, f, 256);
    uint16_t c0 = rifl_crc12(f, 256);
    unsigned missed = 0, tried = 0;
    for (unsigned a = 0; a < 244; a++) {
        memcpy(g, f, 32);
        g[a / 8] ^= (uint8_t)(0x80 >> (a % 8));
        missed += rifl_crc12(g, 256) == c0;
        tried++;
        for (unsigned b = a + 1; b < 244; b += 7) {
            uint8_t h[32];
            memcpy(h, g, 32);
            h[b / 8] ^= (uint8_t)(0x80 >> (b % 8));
            missed += rifl_crc12(h, 256) == c0;
            tried++;
            unsigned c = (b * 31 + a) % 244;
            if (c != a && c != b) {
                h[c / 8] ^= (uint8_t)(0x80 >> (c % 8));
                missed += rifl_crc12(h, 256) == c0;
                tried++;
            }
        }
    }
    printf("  %u error patterns of 1 to 3 bits, %u undetected\n", tried, missed);
    CHECK_EQ_U(missed, 0);
}

/* Word-parallel scrambler = bit-serial reference, for every width, over a
 * stream of frames; descrambling inverts scrambling; the descrambler
 * resynchronises 33 bits after a wrong state. */
static void t_scrambler(void)
{
    rifl_rng r;
    rifl_rng_seed(&r, test_seed + 2);
    for (size_t wi = 0; wi < 6; wi++) {
        unsigned F = widths[wi];
        uint64_t s_fast = 0, s_ref = 0, d_fast = 0, d_ref = 0;
        unsigned mismatch = 0, roundtrip = 0;
        for (int n = 0; n < 300; n++) {
            uint8_t plain[RIFL_FRAME_MAX_BYTES], a[RIFL_FRAME_MAX_BYTES], b[RIFL_FRAME_MAX_BYTES];
            random_frame(&r, plain, F);
            memcpy(a, plain, F / 8);
            memcpy(b, plain, F / 8);
            s_fast = rifl_scramble(a, F, s_fast);
            s_ref = rifl_scramble_ref(b, F, s_ref);
            if (memcmp(a, b, F / 8) || s_fast != s_ref)
                mismatch++;
            uint8_t c[RIFL_FRAME_MAX_BYTES];
            memcpy(c, a, F / 8);
            d_fast = rifl_descramble(c, F, d_fast);
            d_ref = rifl_descramble_ref(b, F, d_ref);
            if (memcmp(c, plain, F / 8) || memcmp(b, plain, F / 8) || d_fast != s_fast)
                roundtrip++;
        }
        CHECK_EQ_U(mismatch, 0);
        CHECK_EQ_U(roundtrip, 0);
    }
    /* self-synchronisation: a receiver starting with a wrong state gets the
     * first 33 scrambled bits of the stream wrong and nothing after them */
    uint8_t plain[2][32], wire[2][32];
    random_frame(&r, plain[0], 256);
    random_frame(&r, plain[1], 256);
    uint64_t st = 0x1234567;
    for (int i = 0; i < 2; i++) {
        memcpy(wire[i], plain[i], 32);
        st = rifl_scramble(wire[i], 256, st);
    }
    uint64_t wrong = 0x1ABCDEF01ULL;
    uint8_t out[2][32];
    for (int i = 0; i < 2; i++) {
        memcpy(out[i], wire[i], 32);
        wrong = rifl_descramble(out[i], 256, wrong);
    }
    CHECK(memcmp(out[1], plain[1], 32) == 0);
    /* bits 2+33.. of frame 0 are right again */
    unsigned errs_late = 0;
    for (unsigned bit = 2 + 33; bit < 256 - 12; bit++)
        errs_late += ((out[0][bit / 8] ^ plain[0][bit / 8]) >> (7 - bit % 8)) & 1;
    CHECK_EQ_U(errs_late, 0);
    CHECK(memcmp(out[0], plain[0], 32) != 0);
}

/* Encode/decode round trips for every width, META value and frame ID;
 * control keys land in META and the first 14 payload bits; the frame kind
 * follows META and the format byte. */
static void t_codec_roundtrip(void)
{
    rifl_rng r;
    rifl_rng_seed(&r, test_seed + 3);
    unsigned bad = 0;
    for (size_t wi = 0; wi < 6; wi++) {
        unsigned F = widths[wi], pb = rifl_payload_bytes(F);
        uint64_t es = 0, ds = 0;
        for (int n = 0; n < 400; n++) {
            uint8_t pay[RIFL_PAYLOAD_MAX_BYTES], out[RIFL_PAYLOAD_MAX_BYTES], w[RIFL_FRAME_MAX_BYTES];
            for (unsigned i = 0; i < pb; i++)
                pay[i] = (uint8_t)rifl_rng_next(&r);
            unsigned meta = n % 4, syn = 1 + (n % 7 == 0), id = (unsigned)rifl_rng_below(&r, 4096);
            CHECK_EQ_I(rifl_frame_encode(w, F, syn, meta, pay, id, &es), RIFL_OK);
            rifl_frame_info fi;
            rifl_frame_decode(w, F, &ds, out, &fi);
            if (fi.syn != syn || fi.meta != meta || fi.id != id || memcmp(out, pay, pb) ||
                es != ds || fi.crc != rifl_crc12_ref(w, F))
                bad++;
        }
    }
    CHECK_EQ_U(bad, 0);

    uint8_t w[32];
    uint64_t es = 0, ds = 0;
    rifl_frame_info fi;
    static const uint16_t keys[] = { RIFL_KEY_IDLE, RIFL_KEY_PAUSE, RIFL_KEY_RETRANSMIT, 0xBEEF };
    for (int k = 0; k < 4; k++) {
        rifl_frame_encode_control(w, 256, keys[k], 77, &es);
        rifl_frame_decode(w, 256, &ds, NULL, &fi);
        CHECK_EQ_U(fi.kind, RIFL_KIND_CONTROL);
        CHECK_EQ_U(fi.key, keys[k]);
        CHECK_EQ_U(fi.id, 77);
        CHECK_EQ_U(w[0] >> 6, 2); /* SYN 10 */
    }
    /* kinds of META-00 frames and partial frames */
    uint8_t pay[30] = { 0 };
    struct { uint8_t fmt; rifl_frame_kind k; } m00[] = {
        { 0, RIFL_KIND_FILLER }, { 1, RIFL_KIND_FC_ON }, { 2, RIFL_KIND_FC_OFF }, { 3, RIFL_KIND_EXT },
    };
    for (int i = 0; i < 4; i++) {
        pay[29] = m00[i].fmt;
        rifl_frame_encode(w, 256, RIFL_SYN_DATA, 0, pay, 5, &es);
        rifl_frame_decode(w, 256, &ds, NULL, &fi);
        CHECK_EQ_U(fi.kind, m00[i].k);
        CHECK_EQ_U(fi.payload_len, 0);
    }
    pay[29] = 7;
    rifl_frame_encode(w, 256, RIFL_SYN_DATA, RIFL_META_PARTIAL_EOP, pay, 5, &es);
    CHECK_EQ_I(rifl_frame_decode(w, 256, &ds, NULL, &fi), RIFL_OK);
    CHECK_EQ_U(fi.payload_len, 7);
    CHECK_EQ_U(fi.eop, 1);
    pay[29] = 30; /* impossible count */
    rifl_frame_encode(w, 256, RIFL_SYN_DATA, RIFL_META_PARTIAL_EOP, pay, 5, &es);
    CHECK_EQ_I(rifl_frame_decode(w, 256, &ds, NULL, &fi), RIFL_ERR_FRAME);
    rifl_frame_encode(w, 256, RIFL_SYN_DATA, RIFL_META_FULL_EOP, pay, 5, &es);
    rifl_frame_decode(w, 256, &ds, NULL, &fi);
    CHECK_EQ_U(fi.payload_len, 30);
    CHECK_EQ_U(fi.eop, 1);
    /* illegal SYN */
    rifl_frame_encode(w, 256, 3, 0, pay, 5, &es);
    rifl_frame_decode(w, 256, &ds, NULL, &fi);
    CHECK_EQ_U(fi.kind, RIFL_KIND_INVALID);
    /* bad arguments */
    CHECK_EQ_I(rifl_frame_encode(w, 200, 1, 0, pay, 0, &es), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_frame_encode(w, 256, 1, 4, pay, 0, &es), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_frame_encode(w, 256, 1, 0, pay, 4096, &es), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_frame_decode(w, 100, &ds, NULL, &fi), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_frame_width_check(4096), RIFL_ERR_INVALID_ARG);
}

/* Control frames: the table-driven state update equals scrambling the frame
 * (for every width, the three keys and random states). */
static void t_control_state(void)
{
    rifl_rng r;
    rifl_rng_seed(&r, test_seed + 11);
    static const uint16_t keys[] = { RIFL_KEY_IDLE, RIFL_KEY_PAUSE, RIFL_KEY_RETRANSMIT, 0x0F0F };
    unsigned bad = 0;
    for (int n = 0; n < 600; n++) {
        unsigned F = widths[n % 6];
        uint16_t key = keys[(n / 6) % 4];
        uint64_t s0 = rifl_rng_next(&r) & RIFL_SCRAMBLER_MASK, a = s0, b = s0;
        uint8_t w1[RIFL_FRAME_MAX_BYTES], w2[RIFL_FRAME_MAX_BYTES];
        uint8_t pay[RIFL_PAYLOAD_MAX_BYTES] = { 0 };
        pay[0] = (uint8_t)(key >> 6);
        pay[1] = (uint8_t)(key << 2);
        rifl_frame_encode_control(w1, F, key, 5, &a);
        rifl_frame_encode(w2, F, RIFL_SYN_CONTROL, key >> 14, pay, 5, &b);
        bad += a != b || memcmp(w1, w2, F / 8) != 0;
    }
    CHECK_EQ_U(bad, 0);
}

/* Spec example: the first frame of every recorded scenario is a PAUSE
 * control frame with ID 0 from a zero scrambler state. */
static void t_known_frame(void)
{
    uint8_t w[32], want[32];
    uint64_t s = 0;
    rifl_frame_encode_control(w, 256, RIFL_KEY_PAUSE, 0, &s);
    size_t n;
    const char *hex = "800400200102080040830018208084083001c20a0850a38018289084883008d4";
    CHECK_EQ_I(rifl_hex_decode(hex, strlen(hex), want, 32, &n), RIFL_OK);
    CHECK(memcmp(w, want, 32) == 0);
    CHECK_EQ_U(s, 0x108488300ULL); /* second line's scrambler state */
}

/* Hex and key=value parsers */
static void t_text_parsers(void)
{
    uint8_t b[4];
    size_t n;
    CHECK_EQ_I(rifl_hex_decode("0aFf", 4, b, 4, &n), RIFL_OK);
    CHECK(n == 2 && b[0] == 0x0a && b[1] == 0xff);
    CHECK_EQ_I(rifl_hex_decode("0g", 2, b, 4, &n), RIFL_ERR_PARSE);
    CHECK_EQ_I(rifl_hex_decode("abc", 3, b, 4, &n), RIFL_ERR_PARSE);
    CHECK_EQ_I(rifl_hex_decode("0011223344", 10, b, 4, &n), RIFL_ERR_BUFFER);

    const char *txt = "# c\n\n  0011223344556677 \n1 2 0011223344556677\nzz\n";
    rifl_frame_reader rd;
    rifl_frame_reader_init(&rd, txt, strlen(txt), 8);
    uint8_t f[8];
    char err[256];
    CHECK_EQ_I(rifl_frame_reader_next(&rd, f, err, sizeof err), 1);
    CHECK_EQ_U(rd.line, 3);
    CHECK_EQ_I(rifl_frame_reader_next(&rd, f, err, sizeof err), 1);
    CHECK_EQ_I(rifl_frame_reader_next(&rd, f, err, sizeof err), RIFL_ERR_PARSE);
    CHECK(strstr(err, "line 5") != NULL);
}

/* The batch calls give exactly what frame-by-frame calls give: valid frames
 * encoded and decoded, and arbitrary (corrupted) bytes decoded, for every
 * width and batch sizes that are not multiples of the vector width. */
static void t_batch_equals_scalar(void)
{
    rifl_rng r;
    rifl_rng_seed(&r, test_seed + 9);
    printf("  vector path for 256-bit frames: %s\n", rifl_frame_batch_simd(256) ? "yes" : "no");
    enum { MAXN = 77 };
    static uint8_t pay[MAXN * RIFL_PAYLOAD_MAX_BYTES], w1[MAXN * RIFL_FRAME_MAX_BYTES],
        w2[MAXN * RIFL_FRAME_MAX_BYTES], o1[MAXN * RIFL_PAYLOAD_MAX_BYTES],
        o2[MAXN * RIFL_PAYLOAD_MAX_BYTES];
    uint8_t syn[MAXN], meta[MAXN];
    uint16_t ids[MAXN];
    rifl_frame_info i1[MAXN], i2[MAXN];
    unsigned enc_bad = 0, dec_bad = 0, state_bad = 0;
    for (int round = 0; round < 120; round++) {
        unsigned F = widths[round % 6], fb = F / 8, pb = fb - 2;
        unsigned n = 1 + (unsigned)rifl_rng_below(&r, MAXN);
        for (unsigned j = 0; j < n * pb; j++)
            pay[j] = (uint8_t)rifl_rng_next(&r);
        for (unsigned j = 0; j < n; j++) {
            syn[j] = (uint8_t)(1 + rifl_rng_below(&r, 2));
            meta[j] = (uint8_t)rifl_rng_below(&r, 4);
            ids[j] = (uint16_t)rifl_rng_below(&r, 4096);
        }
        uint64_t s0 = rifl_rng_next(&r) & RIFL_SCRAMBLER_MASK, sa = s0, sb = s0;
        CHECK_EQ_I(rifl_frame_encode_batch(w1, F, n, syn, meta, pay, ids, &sa), RIFL_OK);
        for (unsigned j = 0; j < n; j++)
            rifl_frame_encode(w2 + j * fb, F, syn[j], meta[j], pay + j * pb, ids[j], &sb);
        enc_bad += memcmp(w1, w2, n * fb) != 0;
        state_bad += sa != sb;
        /* decode the clean stream, or a corrupted copy of it */
        if (round & 1)
            for (unsigned j = 0; j < n * fb; j += 1 + (unsigned)rifl_rng_below(&r, 40))
                w1[j] = (uint8_t)rifl_rng_next(&r);
        uint64_t da = s0, db = s0;
        int rca = rifl_frame_decode_batch(w1, F, n, &da, o1, i1);
        int rcb = RIFL_OK;
        for (unsigned j = 0; j < n; j++)
            if (rifl_frame_decode(w1 + j * fb, F, &db, o2 + j * pb, &i2[j]) != RIFL_OK)
                rcb = RIFL_ERR_FRAME;
        dec_bad += rca != rcb || da != db || memcmp(o1, o2, n * pb) != 0;
        for (unsigned j = 0; j < n; j++)
            dec_bad += i1[j].syn != i2[j].syn || i1[j].meta != i2[j].meta ||
                       i1[j].id != i2[j].id || i1[j].crc != i2[j].crc ||
                       i1[j].vcode != i2[j].vcode || i1[j].key != i2[j].key ||
                       i1[j].format != i2[j].format || i1[j].kind != i2[j].kind ||
                       i1[j].payload_len != i2[j].payload_len || i1[j].eop != i2[j].eop;
    }
    CHECK_EQ_U(enc_bad, 0);
    CHECK_EQ_U(state_bad, 0);
    CHECK_EQ_U(dec_bad, 0);
}

/* The batch encoder refuses a field wider than its bits (SYN and META 2,
 * the ID 12) wherever in the batch it sits, and writes nothing then. */
static void t_batch_refuses_wide_fields(void)
{
    enum { MAXN = 41 };
    static uint8_t pay[MAXN * RIFL_PAYLOAD_MAX_BYTES], wire[MAXN * RIFL_FRAME_MAX_BYTES];
    uint8_t syn[MAXN], meta[MAXN];
    uint16_t ids[MAXN];
    const unsigned ns[] = { 1, 7, 8, 9, 16, 31, 32, 33, 41 };
    unsigned missed = 0, refused_good = 0, cases = 0;
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        unsigned n = ns[k];
        for (unsigned at = 0; at < n; at++)
            for (int field = 0; field < 4; field++) {
                memset(syn, RIFL_SYN_DATA, sizeof syn);
                memset(meta, RIFL_META_FULL, sizeof meta);
                for (unsigned j = 0; j < MAXN; j++)
                    ids[j] = (uint16_t)(j * 97 % 4096);
                uint64_t s = 5;
                refused_good += rifl_frame_encode_batch(wire, 256, n, syn, meta, pay, ids, &s) !=
                                RIFL_OK;
                if (field == 0)
                    syn[at] = 4;
                else if (field == 1)
                    meta[at] = 0x80;
                else if (field == 2)
                    ids[at] = 4096;
                else
                    ids[at] = 0x8000;
                memset(wire, 0x5A, sizeof wire);
                s = 5;
                int rc = rifl_frame_encode_batch(wire, 256, n, syn, meta, pay, ids, &s);
                missed += rc != RIFL_ERR_INVALID_ARG || s != 5 || wire[0] != 0x5A;
                cases++;
            }
    }
    printf("  %u wide fields placed, %u missed, %u valid batches refused\n", cases, missed,
           refused_good);
    CHECK(cases > 0);
    CHECK_EQ_U(missed, 0);
    CHECK_EQ_U(refused_good, 0);
}

TEST_MAIN({ "crc_reference", t_crc_reference },
          { "batch_refuses_wide_fields", t_batch_refuses_wide_fields },
          { "batch_equals_scalar", t_batch_equals_scalar },
          { "crc_detects_small_errors", t_crc_detects_small_errors },
          { "scrambler", t_scrambler },
          { "codec_roundtrip", t_codec_roundtrip },
          { "known_frame", t_known_frame },
          { "control_state", t_control_state },
          { "text_parsers", t_text_parsers })

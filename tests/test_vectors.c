/* Golden vectors recorded from the authors' reference hardware, kept in
 * tests/vectors/rifl/ (formats in tests/vectors/README.md): the three checks,
 * for every scenario. */
#include "testlib.h"

#include "rifl/frame.h"
#include "rifl/lane.h"

#include "rifl/text.h"

static const char *const scenarios[] = {
    "rifl256_fid8_clean",
    "rifl256_fid8_ber3e-6_fc",
    "rifl512_fid7_ber1e-6",
    "rifl128_fid6_ber2e-6_fc",
};
#define NSCEN (sizeof scenarios / sizeof scenarios[0])

struct params {
    unsigned frame_width, fid_width, delay_beats;
    unsigned long encode_vectors, rx_frames, rx_fail, delivered;
};

static char *load(const char *scen, const char *file, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s", RIFL_VECTORS_DIR, scen, file);
    char *b = test_read_file(path, len);
    if (!b)
        fprintf(stderr, "  cannot read %s\n", path);
    return b;
}

static int read_params(const char *scen, struct params *p)
{
    size_t len;
    char *b = load(scen, "params.txt", &len);
    if (!b)
        return -1;
    memset(p, 0, sizeof *p);
    char *save = NULL;
    for (char *line = strtok_r(b, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char key[64];
        unsigned long v;
        if (sscanf(line, "%63s %lu", key, &v) != 2)
            continue;
        if (!strcmp(key, "frame_width")) p->frame_width = (unsigned)v;
        else if (!strcmp(key, "frame_id_width")) p->fid_width = (unsigned)v;
        else if (!strcmp(key, "encode_vectors")) p->encode_vectors = v;
        else if (!strcmp(key, "channel_delay_beats")) p->delay_beats = (unsigned)v;
        else if (!strcmp(key, "rx_frames")) p->rx_frames = v;
        else if (!strcmp(key, "rx_frames_failing_verification")) p->rx_fail = v;
        else if (!strcmp(key, "delivered_frames")) p->delivered = v;
    }
    free(b);
    return p->frame_width ? 0 : -1;
}

/* One parsed line of encode.vectors. */
struct enc_line {
    unsigned fid, syn, meta;
    uint64_t scr;
    uint8_t payload[RIFL_PAYLOAD_MAX_BYTES];
    uint8_t wire[RIFL_FRAME_MAX_BYTES];
};

static int parse_enc_line(char *line, unsigned fbytes, struct enc_line *e)
{
    char scr[32], pay[600], wire[600];
    if (sscanf(line, "%u %31s %u %u %599s %599s", &e->fid, scr, &e->syn, &e->meta, pay,
               wire) != 6)
        return -1;
    e->scr = strtoull(scr, NULL, 16);
    size_t n;
    if (rifl_hex_decode(pay, strlen(pay), e->payload, sizeof e->payload, &n) || n != fbytes - 2)
        return -1;
    if (rifl_hex_decode(wire, strlen(wire), e->wire, sizeof e->wire, &n) || n != fbytes)
        return -1;
    return 0;
}

/* Checks 1 and 3: the encoder maps the fields to wire_hex exactly, the
 * scrambler state column is the running state, and a running receiver decodes
 * the sender's stream back without a single verification failure. */
static void t_encode_and_clean_decode(void)
{
    for (size_t s = 0; s < NSCEN; s++) {
        struct params p;
        REQUIRE(read_params(scenarios[s], &p) == 0);
        size_t len;
        char *buf = load(scenarios[s], "encode.vectors", &len);
        REQUIRE(buf != NULL);
        unsigned fb = p.frame_width / 8;
        unsigned long lines = 0, enc_mismatch = 0, state_mismatch = 0, field_mismatch = 0,
                      verify_fail = 0;
        uint64_t scr = 0, descr = 0;
        unsigned expect_fid = 0; /* the receiver's running frame ID */
        unsigned kmask = (1u << p.fid_width) - 1;
        char *save = NULL;
        for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            if (line[0] == '#')
                continue;
            struct enc_line e;
            if (parse_enc_line(line, fb, &e)) {
                CHECK_MSG(0, "%s: unparsable line %lu", scenarios[s], lines + 1);
                break;
            }
            lines++;
            /* check 1: encode from the line's own fields */
            uint8_t out[RIFL_FRAME_MAX_BYTES];
            uint64_t st = e.scr;
            CHECK_EQ_I(rifl_frame_encode(out, p.frame_width, e.syn, e.meta, e.payload, e.fid, &st),
                       RIFL_OK);
            if (memcmp(out, e.wire, fb))
                enc_mismatch++;
            /* the state column is our running scrambler state */
            if (scr != e.scr)
                state_mismatch++;
            scr = st;
            /* check 3: a running receiver */
            uint8_t pay[RIFL_PAYLOAD_MAX_BYTES];
            rifl_frame_info info;
            rifl_frame_decode(e.wire, p.frame_width, &descr, pay, &info);
            if (info.id != expect_fid)
                verify_fail++;
            if (info.syn != e.syn || info.meta != e.meta || memcmp(pay, e.payload, fb - 2))
                field_mismatch++;
            if (info.syn == RIFL_SYN_DATA)
                expect_fid = (expect_fid + 1) & kmask;
        }
        free(buf);
        printf("  %s: %lu frames, %lu encode mismatches, %lu state mismatches, "
               "%lu decode mismatches, %lu verification failures\n",
               scenarios[s], lines, enc_mismatch, state_mismatch, field_mismatch, verify_fail);
        CHECK_EQ_U(lines, p.encode_vectors);
        CHECK_EQ_U(enc_mismatch, 0);
        CHECK_EQ_U(state_mismatch, 0);
        CHECK_EQ_U(field_mismatch, 0);
        CHECK_EQ_U(verify_fail, 0);
    }
}

/* Check 2: B's received frames, fed to a fresh receiver that is aligned and up
 * from the first line, fail verification exactly as often as the reference
 * receiver's did, and the delivered frames start with b_delivered.txt.  The
 * reference still held frames in its receive buffer when the recording
 * stopped, so rifl may deliver more after the last recorded line, but never
 * more than one replay window (2^K frames). */
static void t_receiver_matches_reference(void)
{
    for (size_t s = 0; s < NSCEN; s++) {
        struct params p;
        REQUIRE(read_params(scenarios[s], &p) == 0);
        rifl_lane_config cfg = rifl_lane_default_config;
        cfg.frame_bits = p.frame_width;
        cfg.fid_bits = p.fid_width;
        /* the recorded link: 64-bit beats on a 28 Gbit/s lane */
        cfg.link.lane_rate_gbps = 28.0;
        cfg.link.transceiver_ns = 0;
        cfg.link.cable_m = p.delay_beats * 64.0 / 28.0 / cfg.link.ns_per_m;
        cfg.rx_lock_frames = 0; /* frames arrive aligned */
        rifl_lane *lane = NULL;
        char msg[512] = "";
        int rc = rifl_lane_create(&cfg, &lane, msg, sizeof msg);
        CHECK_MSG(rc == RIFL_OK, "%s: %s", scenarios[s], msg);
        if (rc != RIFL_OK)
            continue;

        size_t rlen, dlen;
        char *rx = load(scenarios[s], "b_rx.frames", &rlen);
        char *dl = load(scenarios[s], "b_delivered.txt", &dlen);
        REQUIRE(rx && dl);
        unsigned fb = p.frame_width / 8, pb = fb - 2;
        rifl_frame_reader rd;
        rifl_frame_reader_init(&rd, rx, rlen, fb);
        uint8_t frame[RIFL_FRAME_MAX_BYTES];
        char err[256];
        unsigned long frames = 0, delivered = 0, mismatches = 0, extra = 0;
        char *dsave = NULL;
        char *dline = strtok_r(dl, "\n", &dsave);
        while (dline && dline[0] == '#')
            dline = strtok_r(NULL, "\n", &dsave);
        int r;
        while ((r = rifl_frame_reader_next(&rd, frame, err, sizeof err)) == 1) {
            rifl_lane_rx(lane, frames, frame, NULL); /* a frame per slot */
            frames++;
            uint8_t buf[RIFL_PAYLOAD_MAX_BYTES];
            size_t n;
            int eop;
            while (rifl_lane_read(lane, buf, pb, &n, &eop) == RIFL_OK) {
                delivered++;
                if (!dline) {
                    extra++;
                    continue;
                }
                char hex[2 * RIFL_PAYLOAD_MAX_BYTES + 1];
                rifl_hex_encode(buf, n, hex);
                int want_eop = dline[0] - '0';
                const char *want_hex = dline + 2;
                if (want_eop != eop || strcmp(want_hex, hex)) {
                    if (mismatches < 3)
                        fprintf(stderr, "  %s: delivery %lu: got %d %s, want %s\n",
                                scenarios[s], delivered, eop, hex, dline);
                    mismatches++;
                }
                dline = strtok_r(NULL, "\n", &dsave);
            }
        }
        CHECK_MSG(r == 0, "%s: %s", scenarios[s], err);
        const rifl_lane_stats *st = rifl_lane_get_stats(lane);
        printf("  %s: %lu frames, %llu failed verification (reference %lu), %lu delivered "
               "(reference %lu, %lu beyond it), %lu mismatches\n",
               scenarios[s], frames, (unsigned long long)st->rx_verify_fail, p.rx_fail,
               delivered, p.delivered, extra, mismatches);
        CHECK_EQ_U(frames, p.rx_frames);
        CHECK_EQ_U(st->rx_verify_fail, p.rx_fail);
        CHECK(dline == NULL); /* every reference delivery was reproduced */
        CHECK_EQ_U(delivered - extra, p.delivered); /* b_delivered.txt has delivered_frames lines */
        CHECK_MSG(extra <= (1ul << p.fid_width), "%s: %lu frames delivered beyond the recording, "
                  "more than one replay window (%lu)", scenarios[s], extra, 1ul << p.fid_width);
        CHECK_EQ_U(mismatches, 0);
        CHECK_EQ_U(st->rx_overflow, 0);
        free(rx);
        free(dl);
        rifl_lane_free(lane);
    }
}

TEST_MAIN({ "encode_and_clean_decode", t_encode_and_clean_decode },
          { "receiver_matches_reference", t_receiver_matches_reference })

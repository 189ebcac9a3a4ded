/* The PHY boundary (rifl/phy.h): the simulated cable and the loopback, each
 * through the one interface every PHY has.  The channel is checked as a
 * black box: frames by content and as wire bytes, its delay, its errors (a
 * damaged frame comes out as the sender's encoding with bits flipped), the
 * accelerator's skip and frames in flight; the loopback the same way, and
 * two lanes talk across a pair of loopbacks. */
#include "testlib.h"

#include <math.h>
#include <stddef.h>

#include "rifl/frame.h"
#include "rifl/lane.h"
#include "rifl/phy.h"

#define F 256
#define FB (F / 8)

/* content for the tests: 8 bytes, a sequence number; encoded as its bytes
 * repeated over the frame */
static void encode_seq(const void *content, uint8_t *wire, void *ctx)
{
    int *calls = ctx;
    (*calls)++;
    for (int i = 0; i < FB; i++)
        wire[i] = ((const uint8_t *)content)[i % 8];
}

static rifl_phy *make_channel(unsigned delay, double ber, uint64_t seed, int *calls)
{
    rifl_phy_channel_config cc = { .frame_bits = F, .delay_frames = delay, .ber = ber,
                                   .seed = seed, .content_bytes = 8, .encode = encode_seq,
                                   .encode_ctx = calls };
    rifl_phy *p = NULL;
    char msg[256];
    if (rifl_phy_channel_create(&cc, &p, msg, sizeof msg) != RIFL_OK)
        fprintf(stderr, "  %s\n", msg);
    return p;
}

static unsigned send_seq(rifl_phy *p, uint64_t now, uint64_t v, rifl_phy_frame *in)
{
    uint64_t *buf = rifl_phy_tx_buffer(p, RIFL_PHY_CONTENT);
    memcpy(buf, &v, 8);
    return rifl_phy_exchange(p, now, RIFL_PHY_CONTENT, in, 1);
}

/* content frames come out `delay` slots later, in order, never encoded */
static void t_channel_content_delay(void)
{
    int calls = 0;
    rifl_phy *p = make_channel(5, 0, 1, &calls);
    REQUIRE(p);
    CHECK(rifl_phy_carries(p, RIFL_PHY_CONTENT) && rifl_phy_carries(p, RIFL_PHY_WIRE));
    unsigned got = 0, late = 0, wrong = 0;
    for (uint64_t t = 0; t < 100; t++) {
        rifl_phy_frame in[2];
        unsigned n;
        if (t % 7 == 3)
            n = rifl_phy_exchange(p, t, RIFL_PHY_NONE, in, 2); /* an empty slot */
        else
            n = send_seq(p, t, t, in);
        if (t < 5) {
            late += n;
            continue;
        }
        bool expect = (t - 5) % 7 != 3;
        if (n != (expect ? 1u : 0u)) {
            wrong++;
            continue;
        }
        if (n) {
            uint64_t v;
            memcpy(&v, in[0].data, 8);
            wrong += in[0].form != RIFL_PHY_CONTENT || v != t - 5;
            got++;
        }
    }
    CHECK_EQ_U(late, 0);
    CHECK_EQ_U(wrong, 0);
    CHECK(got > 70);
    CHECK_EQ_U(calls, 0);
    CHECK_EQ_U(rifl_phy_get_stats(p)->delivered, got);
    rifl_phy_free(p);
    /* no delay: the same slot */
    p = make_channel(0, 0, 1, &calls);
    REQUIRE(p);
    rifl_phy_frame in;
    CHECK_EQ_U(send_seq(p, 0, 42, &in), 1);
    rifl_phy_free(p);
}

/* a damaged frame comes out as wire bytes: the sender's encoding with
 * exactly the counted bits flipped */
static void t_channel_errors(void)
{
    int calls = 0;
    rifl_phy *p = make_channel(3, 1e-3, 7, &calls);
    REQUIRE(p);
    uint64_t flipped = 0, damaged = 0, clean = 0;
    for (uint64_t t = 0; t < 20003; t++) {
        rifl_phy_frame in;
        unsigned n = t < 20000 /* then the last frames arrive */
                         ? send_seq(p, t, t * 0x9E3779B97F4A7C15ULL, &in)
                         : rifl_phy_exchange(p, t, RIFL_PHY_NONE, &in, 1);
        if (!n)
            continue;
        uint64_t v = (t - 3) * 0x9E3779B97F4A7C15ULL;
        if (in.form == RIFL_PHY_WIRE) {
            uint8_t ref[FB];
            encode_seq(&v, ref, &(int){ 0 });
            const uint8_t *w = in.data;
            for (int i = 0; i < FB; i++)
                flipped += (uint64_t)__builtin_popcount((unsigned)(w[i] ^ ref[i]));
            damaged++;
        } else {
            uint64_t got;
            memcpy(&got, in.data, 8);
            CHECK(got == v);
            clean++;
        }
    }
    const rifl_phy_stats *st = rifl_phy_get_stats(p);
    printf("  %llu damaged, %llu clean, %llu bits flipped\n", (unsigned long long)damaged,
           (unsigned long long)clean, (unsigned long long)flipped);
    CHECK(damaged > 1000);
    CHECK_EQ_U(damaged, st->frames_hit);
    CHECK_EQ_U(flipped, st->bit_errors);
    CHECK_EQ_U((uint64_t)calls, st->frames_hit);
    /* errors stop */
    CHECK_EQ_I(rifl_phy_channel_set_ber(p, 0), RIFL_OK);
    CHECK_EQ_U(rifl_phy_clear_slots(p), UINT64_MAX);
    CHECK_EQ_I(rifl_phy_channel_set_ber(p, 0.7), RIFL_ERR_INVALID_ARG);
    rifl_phy_free(p);
}

/* skipping error-free frames and rewriting the frames in flight */
static void t_channel_skip(void)
{
    int calls = 0;
    rifl_phy *p = make_channel(4, 1e-6, 3, &calls);
    REQUIRE(p);
    uint64_t clear = rifl_phy_clear_slots(p);
    REQUIRE(clear > 100 && clear != UINT64_MAX);
    CHECK_EQ_I(rifl_phy_skip(p, clear + 1), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_phy_skip(p, 100), RIFL_OK);
    CHECK_EQ_U(rifl_phy_clear_slots(p), clear - 100);
    CHECK_EQ_U(rifl_phy_get_stats(p)->frames, 100);
    for (unsigned k = 0; k < 4; k++) {
        uint64_t v = 1000 + k;
        void *b = rifl_phy_inflight(p, k, RIFL_PHY_CONTENT);
        REQUIRE(b);
        memcpy(b, &v, 8);
    }
    CHECK(rifl_phy_inflight(p, 4, RIFL_PHY_CONTENT) == NULL); /* only `delay` in flight */
    /* they leave first, in order */
    for (uint64_t t = 0; t < 4; t++) {
        rifl_phy_frame in;
        REQUIRE(rifl_phy_exchange(p, t, RIFL_PHY_NONE, &in, 1) == 1);
        uint64_t v;
        memcpy(&v, in.data, 8);
        CHECK_EQ_U(v, 1000 + t);
    }
    rifl_phy_free(p);
}

/* content of an odd size: every buffer the cable hands out is aligned for
 * any type, and lane frames laid end to end stay aligned */
static void t_content_aligned(void)
{
    int calls = 0;
    rifl_phy_channel_config cc = { .frame_bits = F, .delay_frames = 5, .seed = 1,
                                   .content_bytes = 13, .encode = encode_seq,
                                   .encode_ctx = &calls };
    rifl_phy *p = NULL;
    REQUIRE(rifl_phy_channel_create(&cc, &p, NULL, 0) == RIFL_OK);
    for (uint64_t t = 0; t < 12; t++) {
        uintptr_t a = (uintptr_t)rifl_phy_tx_buffer(p, RIFL_PHY_CONTENT);
        CHECK_EQ_U(a % _Alignof(max_align_t), 0);
        rifl_phy_frame in;
        rifl_phy_exchange(p, t, RIFL_PHY_CONTENT, &in, 1);
    }
    for (unsigned k = 0; k < 5; k++)
        CHECK_EQ_U((uintptr_t)rifl_phy_inflight(p, k, RIFL_PHY_CONTENT) % _Alignof(max_align_t), 0);
    rifl_phy_free(p);
    for (unsigned f = 64; f <= 2048; f += 8) {
        size_t n = rifl_lane_frame_bytes(f);
        if (n == 0)
            continue; /* not a frame width */
        CHECK_EQ_U(n % _Alignof(rifl_lane_frame), 0);
        CHECK(n >= offsetof(rifl_lane_frame, rec) + f / 8 - 1);
        CHECK(n <= sizeof(rifl_lane_frame));
    }
}

/* wire bytes in, wire bytes out; no content, no skipping */
static void t_loopback(void)
{
    rifl_phy *p;
    char msg[256];
    REQUIRE(rifl_phy_loopback_create(F, 2, &p, msg, sizeof msg) == RIFL_OK);
    CHECK(!rifl_phy_carries(p, RIFL_PHY_CONTENT) && rifl_phy_carries(p, RIFL_PHY_WIRE));
    CHECK(rifl_phy_tx_buffer(p, RIFL_PHY_CONTENT) == NULL);
    CHECK_EQ_U(rifl_phy_clear_slots(p), 0);
    CHECK_EQ_I(rifl_phy_skip(p, 1), RIFL_ERR_STATE);
    CHECK(rifl_phy_inflight(p, 0, RIFL_PHY_WIRE) == NULL);
    CHECK_EQ_U(rifl_phy_next_due(p, 0), UINT64_MAX);
    uint8_t f[FB];
    unsigned wrong = 0;
    for (uint64_t t = 0; t < 50; t++) {
        memset(f, (int)t, sizeof f);
        const uint8_t *o = rifl_phy_step(p, t, t % 5 ? f : NULL);
        uint64_t from = t - 2;
        bool expect = t >= 2 && from % 5;
        if ((o != NULL) != expect || (o && o[FB - 1] != (uint8_t)from))
            wrong++;
    }
    CHECK_EQ_U(wrong, 0);
    CHECK_EQ_U(rifl_phy_get_stats(p)->frames, 40);
    CHECK_EQ_U(rifl_phy_get_stats(p)->bit_errors, 0);
    /* a form it does not carry, or none at all: nothing goes, counted */
    rifl_phy_frame in[2];
    CHECK_EQ_U(rifl_phy_get_stats(p)->dropped, 0);
    for (uint64_t t = 50; t < 60; t++)
        rifl_phy_exchange(p, t, t & 1 ? RIFL_PHY_CONTENT : (rifl_phy_form)7, in, 2);
    CHECK_EQ_U(rifl_phy_get_stats(p)->dropped, 10);
    CHECK_EQ_U(rifl_phy_get_stats(p)->frames, 40);
    rifl_phy_free(p);
    CHECK_EQ_I(rifl_phy_loopback_create(300, 2, &p, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "frame width 300") != NULL);
}

/* two lanes over two loopbacks (wire bytes only): a packet goes through */
static void t_lanes_over_loopbacks(void)
{
    rifl_lane_config c = rifl_lane_default_config;
    c.rx_lock_frames = 0;
    rifl_lane *a, *b;
    rifl_phy *ab, *ba;
    REQUIRE(rifl_lane_create(&c, &a, NULL, 0) == RIFL_OK);
    REQUIRE(rifl_lane_create(&c, &b, NULL, 0) == RIFL_OK);
    REQUIRE(rifl_phy_loopback_create(F, 57, &ab, NULL, 0) == RIFL_OK);
    REQUIRE(rifl_phy_loopback_create(F, 57, &ba, NULL, 0) == RIFL_OK);
    uint8_t pkt[1000], got[1000];
    for (int i = 0; i < 1000; i++)
        pkt[i] = (uint8_t)(i * 7);
    CHECK_EQ_I(rifl_lane_send(a, pkt, sizeof pkt), RIFL_OK);
    size_t have = 0, n;
    int eop = 0;
    for (uint64_t t = 0; t < 3000 && !eop; t++) {
        rifl_phy_frame to_b, to_a;
        rifl_lane_tx(a, t, rifl_phy_tx_buffer(ab, RIFL_PHY_WIRE));
        unsigned nb = rifl_phy_exchange(ab, t, RIFL_PHY_WIRE, &to_b, 1);
        rifl_lane_tx(b, t, rifl_phy_tx_buffer(ba, RIFL_PHY_WIRE));
        unsigned na = rifl_phy_exchange(ba, t, RIFL_PHY_WIRE, &to_a, 1);
        rifl_lane_rx(b, t, nb ? to_b.data : NULL, NULL);
        rifl_lane_rx(a, t, na ? to_a.data : NULL, NULL);
        while (!eop && rifl_lane_read(b, got + have, sizeof got - have, &n, &eop) == RIFL_OK)
            have += n;
    }
    CHECK(eop);
    CHECK_EQ_U(have, sizeof pkt);
    CHECK(memcmp(got, pkt, sizeof pkt) == 0);
    rifl_lane_free(a);
    rifl_lane_free(b);
    rifl_phy_free(ab);
    rifl_phy_free(ba);
}

static void t_refused(void)
{
    rifl_phy *p;
    char msg[256];
    rifl_phy_channel_config cc = { .frame_bits = F, .content_bytes = 8 };
    CHECK_EQ_I(rifl_phy_channel_create(&cc, &p, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "encode") != NULL);
    cc = (rifl_phy_channel_config){ .frame_bits = F, .ber = 0.6 };
    CHECK_EQ_I(rifl_phy_channel_create(&cc, &p, msg, sizeof msg), RIFL_ERR_CONFIG);
    cc = (rifl_phy_channel_config){ .frame_bits = F, .delay_frames = 1u << 25 };
    CHECK_EQ_I(rifl_phy_channel_create(&cc, &p, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "too long") != NULL);
    rifl_phy_free(NULL);
}

/* Settings each within its own limit whose product is more memory than a
 * PHY may take (RIFL_PHY_MAX_BYTES) are refused, naming the settings;
 * below it they are taken. */
static void refused_size(int rc, rifl_phy *p, const char *msg, const char *names)
{
    CHECK_EQ_I(rc, RIFL_ERR_CONFIG);
    CHECK(p == NULL);
    CHECK_MSG(strstr(msg, names) != NULL && strstr(msg, "1024 MiB") != NULL,
              "message '%s' lacks '%s' or the limit", msg, names);
}

static void t_refused_size(void)
{
    rifl_phy *p = NULL;
    char msg[512] = "";
    /* a cable of 2^24 frames of 2048 bits: 4 GiB of wire bytes */
    rifl_phy_channel_config cc = { .frame_bits = 2048, .delay_frames = 1u << 24 };
    refused_size(rifl_phy_channel_create(&cc, &p, msg, sizeof msg), p, msg,
                 "lower delay_frames (a shorter cable) or frame_bits");
    /* 65536 frames of 65536 bytes of content: 4 GiB */
    cc = (rifl_phy_channel_config){ .frame_bits = 64, .delay_frames = 1u << 16,
                                    .content_bytes = 1u << 16, .encode = encode_seq };
    refused_size(rifl_phy_channel_create(&cc, &p, msg, sizeof msg), p, msg,
                 "frame_bits or content_bytes");
    refused_size(rifl_phy_loopback_create(2048, 1u << 24, &p, msg, sizeof msg), p, msg,
                 "lower delay_frames or frame_bits");
    rifl_phy_serial_config sc = { .frame_bits = 2048, .delay_frames = 1u << 24 };
    refused_size(rifl_phy_serial_create(&sc, &p, msg, sizeof msg), p, msg,
                 "lower delay_frames, delay_bits or frame_bits");
    /* within the limit: made */
    cc = (rifl_phy_channel_config){ .frame_bits = 2048, .delay_frames = 1u << 20 };
    CHECK_EQ_I(rifl_phy_channel_create(&cc, &p, msg, sizeof msg), RIFL_OK);
    rifl_phy_free(p);
    p = NULL;
    CHECK_EQ_I(rifl_phy_loopback_create(2048, 1u << 20, &p, msg, sizeof msg), RIFL_OK);
    rifl_phy_free(p);
    p = NULL;
    sc.delay_frames = 1u << 16;
    CHECK_EQ_I(rifl_phy_serial_create(&sc, &p, msg, sizeof msg), RIFL_OK);
    rifl_phy_free(p);
}

/* ---- the serial lane ----------------------------------------------------- */

static rifl_phy *make_serial(unsigned delay, unsigned bits, double ber, double slip, uint64_t seed)
{
    rifl_phy_serial_config sc = { .frame_bits = F, .delay_frames = delay, .delay_bits = bits,
                                  .ber = ber, .slip_rate = slip, .seed = seed, .up_log2 = 8 };
    rifl_phy *p = NULL;
    char msg[256];
    if (rifl_phy_serial_create(&sc, &p, msg, sizeof msg) != RIFL_OK)
        fprintf(stderr, "  %s\n", msg);
    return p;
}

/* frame i of a test stream: a real data frame whose payload names it */
static void serial_frame(uint64_t i, uint64_t *scr, uint8_t *w)
{
    uint8_t pay[30] = { 0 };
    memcpy(pay, &i, sizeof i);
    rifl_frame_encode(w, F, RIFL_SYN_DATA, 1, pay, (unsigned)(i & 0xFFF), scr);
}

#define SENT_RING 64

/* Wire frames through a line of 3 frames and `bits` bits.  Every frame the
 * aligner hands out while aligned is looked up among the last frames sent:
 * `wrong` counts those that are none of them, `gaps` the times one was not
 * the successor of the one before. */
static void serial_run(unsigned bits, double ber, double slip, uint64_t seed, unsigned slots,
                       uint64_t *locked_at, uint64_t *wrong, uint64_t *gaps)
{
    rifl_phy *p = make_serial(3, bits, ber, slip, seed);
    REQUIRE(p);
    CHECK(rifl_phy_carries(p, RIFL_PHY_WIRE) && !rifl_phy_carries(p, RIFL_PHY_CONTENT));
    static uint8_t sent[SENT_RING][FB];
    uint64_t scr = 1;
    int64_t last = -1;
    *locked_at = UINT64_MAX;
    *wrong = *gaps = 0;
    for (uint64_t t = 0; t < slots; t++) {
        uint8_t *w = rifl_phy_tx_buffer(p, RIFL_PHY_WIRE);
        serial_frame(t, &scr, w);
        memcpy(sent[t % SENT_RING], w, FB);
        rifl_phy_frame in[2];
        unsigned n = rifl_phy_exchange(p, t, RIFL_PHY_WIRE, in, 2);
        for (unsigned k = 0; k < n; k++) {
            if (!rifl_phy_serial_rx_state(p, k).aligned)
                continue;
            if (*locked_at == UINT64_MAX)
                *locked_at = t;
            int64_t idx = -1;
            for (uint64_t j = 0; j < SENT_RING && j <= t; j++)
                if (memcmp(sent[(t - j) % SENT_RING], in[k].data, FB) == 0) {
                    idx = (int64_t)(t - j);
                    break;
                }
            if (idx < 0) {
                (*wrong)++;
                continue;
            }
            if (last >= 0 && idx != last + 1)
                (*gaps)++;
            last = idx;
        }
    }
    const rifl_phy_stats *ps = rifl_phy_get_stats(p);
    CHECK_EQ_U(ps->frames, slots);
    CHECK_EQ_U(ps->bits, (uint64_t)slots * F);
    if (ber == 0)
        CHECK_EQ_U(ps->bit_errors, 0);
    const rifl_aligner *a = rifl_phy_serial_aligner(p);
    CHECK(a != NULL && rifl_aligner_get_stats(a)->words == (uint64_t)slots * (F / 64));
    rifl_phy_free(p);
}

static void t_serial_line(void)
{
    static const unsigned offsets[] = { 0, 1, 63, 64, 65, 200, 255 };
    for (unsigned i = 0; i < 7; i++) {
        uint64_t locked, wrong, gaps;
        serial_run(offsets[i], 0, 0, 10 + i, 3000, &locked, &wrong, &gaps);
        CHECK_MSG(locked < 1500, "offset %u: locked at slot %llu", offsets[i],
                  (unsigned long long)locked);
        CHECK_EQ_U(wrong, 0);
        CHECK_EQ_U(gaps, 0);
    }
}

/* Bit errors land on the wire bits at the configured rate. */
static void t_serial_errors(void)
{
    rifl_phy *p = make_serial(2, 17, 1e-3, 0, 99);
    REQUIRE(p);
    uint64_t scr = 1;
    for (uint64_t t = 0; t < 20000; t++) {
        serial_frame(t, &scr, rifl_phy_tx_buffer(p, RIFL_PHY_WIRE));
        rifl_phy_frame in[2];
        rifl_phy_exchange(p, t, RIFL_PHY_WIRE, in, 2);
    }
    const rifl_phy_stats *ps = rifl_phy_get_stats(p);
    double expect = 1e-3 * (double)ps->bits;
    CHECK_MSG(fabs((double)ps->bit_errors - expect) < 5 * sqrt(expect),
              "%llu bit errors, %.0f expected",
              (unsigned long long)ps->bit_errors, expect);
    CHECK(ps->frames_hit > 0 && ps->frames_hit <= ps->bit_errors);
    CHECK_EQ_U(ps->frames, 20000);
    /* slots without a frame put zeros on the line: no frames, bits or hits */
    uint64_t frames = ps->frames, bits = ps->bits, hit = ps->frames_hit;
    for (uint64_t t = 20000; t < 21000; t++) {
        rifl_phy_frame in[2];
        rifl_phy_exchange(p, t, RIFL_PHY_NONE, in, 2);
    }
    CHECK_EQ_U(ps->frames, frames);
    CHECK_EQ_U(ps->bits, bits);
    CHECK_EQ_U(ps->frames_hit, hit);
    rifl_phy_free(p);
}

/* Bit slips: each one loses or repeats a bit; the aligner unlocks and finds
 * the frames again, and what it hands out aligned is the frames sent. */
static void t_serial_slips(void)
{
    uint64_t locked, wrong, gaps;
    rifl_phy *p = make_serial(3, 5, 0, 2e-3, 7);
    REQUIRE(p);
    rifl_phy_free(p);
    serial_run(5, 0, 2e-3, 7, 60000, &locked, &wrong, &gaps);
    CHECK(locked < 1500);
    /* a misread frame is wrong until the aligner notices; frames missed
     * while it searches show as gaps */
    CHECK(gaps > 0);
    CHECK(wrong > 0);
    p = make_serial(3, 5, 0, 2e-3, 7);
    REQUIRE(p);
    uint64_t scr = 1;
    for (uint64_t t = 0; t < 60000; t++) {
        serial_frame(t, &scr, rifl_phy_tx_buffer(p, RIFL_PHY_WIRE));
        rifl_phy_frame in[2];
        rifl_phy_exchange(p, t, RIFL_PHY_WIRE, in, 2);
    }
    const rifl_phy_serial_stats *ss = rifl_phy_serial_get_stats(p);
    uint64_t slips = ss->slips_lost + ss->slips_repeated;
    CHECK_MSG(slips > 60 && slips < 180, "%llu slips in 60000 frames at 2e-3",
              (unsigned long long)slips);
    CHECK(ss->slips_lost > 0 && ss->slips_repeated > 0);
    const rifl_aligner_stats *as = rifl_aligner_get_stats(rifl_phy_serial_aligner(p));
    CHECK(as->unlocks > 0 && as->locks >= as->unlocks);
    rifl_phy_free(p);
}

/* Slips made on purpose: a slip put back by one the other way before the
 * aligner noticed is no recovery, and the next real slip's recovery is
 * timed from that slip, not from the one put back. */
static rifl_phy *serial_until_up(rifl_phy *p, uint64_t *t, uint64_t *scr, uint64_t limit)
{
    const rifl_aligner *a = rifl_phy_serial_aligner(p);
    for (uint64_t end = *t + limit; *t < end && !rifl_aligner_up(a); (*t)++) {
        serial_frame(*t, scr, rifl_phy_tx_buffer(p, RIFL_PHY_WIRE));
        rifl_phy_frame in[2];
        rifl_phy_exchange(p, *t, RIFL_PHY_WIRE, in, 2);
    }
    return p;
}

static void serial_slots(rifl_phy *p, uint64_t *t, uint64_t *scr, uint64_t n)
{
    for (uint64_t end = *t + n; *t < end; (*t)++) {
        serial_frame(*t, scr, rifl_phy_tx_buffer(p, RIFL_PHY_WIRE));
        rifl_phy_frame in[2];
        rifl_phy_exchange(p, *t, RIFL_PHY_WIRE, in, 2);
    }
}

static void t_serial_slip_undone(void)
{
    rifl_phy *p = make_serial(3, 9, 0, 0, 11);
    REQUIRE(p);
    const rifl_aligner *a = rifl_phy_serial_aligner(p);
    const rifl_phy_serial_stats *ss = rifl_phy_serial_get_stats(p);
    uint64_t t = 0, scr = 1;
    serial_until_up(p, &t, &scr, 20000);
    REQUIRE(rifl_aligner_up(a));
    /* a lost bit and a repeated one before the next word: no change */
    CHECK_EQ_I(rifl_phy_serial_slip(p, true), RIFL_OK);
    CHECK_EQ_I(rifl_phy_serial_slip(p, false), RIFL_OK);
    serial_slots(p, &t, &scr, 3000);
    CHECK(rifl_aligner_up(a));
    CHECK_EQ_U(rifl_aligner_get_stats(a)->unlocks, 0);
    CHECK_EQ_U(ss->slips_lost, 1);
    CHECK_EQ_U(ss->slips_repeated, 1);
    CHECK_EQ_U(ss->slips_undone, 1);
    /* then a real one, recovered within the search and rx_up */
    CHECK_EQ_I(rifl_phy_serial_slip(p, false), RIFL_OK);
    uint64_t t0 = t;
    serial_slots(p, &t, &scr, 10);
    serial_until_up(p, &t, &scr, 20000);
    REQUIRE(rifl_aligner_up(a));
    CHECK_EQ_U(rifl_aligner_get_stats(a)->unlocks, 1);
    CHECK_EQ_U(ss->recovered_repeated, 1);
    CHECK_EQ_U(ss->recovered_lost, 0);
    CHECK_MSG(ss->recovery_frames_repeated <= t - t0 + 1,
              "recovery of %llu frames in %llu slots",
              (unsigned long long)ss->recovery_frames_repeated, (unsigned long long)(t - t0));
    CHECK_EQ_U(ss->slips_undone, 1);
    CHECK_EQ_I(rifl_phy_serial_slip(NULL, true), RIFL_ERR_INVALID_ARG);
    rifl_phy_free(p);
}

static void t_serial_refused(void)
{
    rifl_phy *p = NULL;
    char msg[256] = "";
    rifl_phy_serial_config sc = { .frame_bits = 96 };
    CHECK_EQ_I(rifl_phy_serial_create(&sc, &p, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "frame_bits") != NULL);
    sc.frame_bits = F;
    sc.slip_rate = 1.5;
    CHECK_EQ_I(rifl_phy_serial_create(&sc, &p, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "slip rate") != NULL);
    sc.slip_rate = 0;
    sc.ber = -1;
    CHECK_EQ_I(rifl_phy_serial_create(&sc, &p, msg, sizeof msg), RIFL_ERR_CONFIG);
    sc.ber = 0;
    sc.content_bytes = 16;
    CHECK_EQ_I(rifl_phy_serial_create(&sc, &p, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "encode") != NULL);
    CHECK(p == NULL);
    CHECK(rifl_phy_serial_aligner(NULL) == NULL);
    CHECK(!rifl_phy_serial_rx_state(NULL, 0).aligned);
}


/* A frame put through the channel's errors on its own (a simulator that
 * keeps its frames in flight itself) is damaged exactly as it would be on
 * the delay line of a channel with the same seed, and the counts agree;
 * refused for a PHY that is not such a channel. */
static void t_channel_pass(void)
{
    int calls = 0;
    rifl_phy *line = make_channel(3, 2e-3, 5, &calls), *own = make_channel(3, 2e-3, 5, &calls);
    REQUIRE(line && own);
    uint64_t hits = 0;
    for (uint64_t t = 0; t < 5000; t++) {
        uint64_t v = t * 0x9E3779B97F4A7C15ULL;
        rifl_phy_frame in;
        send_seq(line, t, v, &in);
        uint8_t wire[FB];
        int hit = rifl_phy_channel_pass(own, &v, wire);
        REQUIRE(hit == 0 || hit == 1);
        hits += (unsigned)hit;
        /* the line's frame of slot t is damaged when its error count moved */
        bool line_hit = rifl_phy_get_stats(line)->frames_hit == hits;
        CHECK(line_hit);
        if (hit) {
            CHECK(rifl_phy_inflight_form(line, 2) == RIFL_PHY_WIRE);
            const uint8_t *lw = rifl_phy_inflight(line, 2, RIFL_PHY_WIRE);
            REQUIRE(lw);
            CHECK(memcmp(lw, wire, FB) == 0);
        }
    }
    CHECK(hits > 100);
    const rifl_phy_stats *a = rifl_phy_get_stats(line), *b = rifl_phy_get_stats(own);
    CHECK_EQ_U(a->frames, b->frames);
    CHECK_EQ_U(a->bit_errors, b->bit_errors);
    CHECK_EQ_U(rifl_phy_clear_slots(line), rifl_phy_clear_slots(own));
    uint8_t w[FB];
    uint64_t v = 0;
    CHECK_EQ_I(rifl_phy_channel_pass(own, NULL, w), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_phy_channel_pass(own, &v, NULL), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_phy_channel_pass(NULL, &v, w), RIFL_ERR_INVALID_ARG);
    rifl_phy *loop = NULL;
    REQUIRE(rifl_phy_loopback_create(F, 2, &loop, NULL, 0) == RIFL_OK);
    CHECK_EQ_I(rifl_phy_channel_pass(loop, &v, w), RIFL_ERR_INVALID_ARG);
    rifl_phy_free(loop);
    rifl_phy_free(line);
    rifl_phy_free(own);
}

/* The hits a channel shows ahead (rifl_phy_channel_peek) are the frames a
 * twin channel with the same seed finds hit when frames are passed one at
 * a time, with the same bits flipped; peeking moves nothing; skipping over
 * hits (rifl_phy_channel_skip_hits) leaves the channel where passing the
 * frames leaves it, counts included. */
static void t_channel_peek(void)
{
    int calls = 0;
    rifl_phy *a = make_channel(3, 1e-3, 5, &calls), *b = make_channel(3, 1e-3, 5, &calls);
    REQUIRE(a && b);
    rifl_phy_hit h[40], again[40];
    unsigned n = rifl_phy_channel_peek(a, h, 40);
    CHECK_EQ_U(n, 40);
    CHECK_EQ_U(rifl_phy_channel_peek(a, again, 40), 40);
    CHECK(memcmp(h, again, sizeof h) == 0);
    CHECK_EQ_U(h[0].frame, rifl_phy_clear_slots(a));
    uint64_t t = 0, multi = 0;
    for (unsigned k = 0; k < n; k++) {
        CHECK(k == 0 || h[k].frame > h[k - 1].frame);
        for (; t <= h[k].frame; t++) {
            uint64_t v = 0;
            uint8_t wire[FB], clean[FB];
            int hit = rifl_phy_channel_pass(b, &v, wire);
            CHECK_EQ_I(hit, t == h[k].frame);
            if (hit != 1)
                continue;
            /* the bits flipped, against the frame's clean bytes */
            int c2 = 0;
            encode_seq(&v, clean, &c2);
            unsigned nb = 0;
            for (unsigned bit = 0; bit < F; bit++)
                if ((wire[bit >> 3] ^ clean[bit >> 3]) & (0x80u >> (bit & 7))) {
                    if (nb < RIFL_PHY_HIT_BITS)
                        CHECK_EQ_U(h[k].bit[nb], bit);
                    nb++;
                }
            CHECK_EQ_U(nb, h[k].nbits);
            multi += nb > 1;
        }
    }
    CHECK(multi > 0);
    /* a's errors skipped over the same frames */
    CHECK_EQ_I(rifl_phy_channel_skip_hits(a, t), RIFL_OK);
    const rifl_phy_stats *x = rifl_phy_get_stats(a), *y = rifl_phy_get_stats(b);
    CHECK_EQ_U(x->frames, y->frames);
    CHECK_EQ_U(x->bits, y->bits);
    CHECK_EQ_U(x->bit_errors, y->bit_errors);
    CHECK_EQ_U(x->frames_hit, y->frames_hit);
    CHECK_EQ_U(x->delivered, y->delivered);
    CHECK_EQ_U(rifl_phy_clear_slots(a), rifl_phy_clear_slots(b));
    CHECK_EQ_U(rifl_phy_channel_peek(a, again, 1), 1);
    CHECK_EQ_U(rifl_phy_channel_peek(b, h, 1), 1);
    CHECK(memcmp(h, again, sizeof h[0]) == 0);
    /* refused or empty for what is not a channel */
    rifl_phy *loop = NULL;
    REQUIRE(rifl_phy_loopback_create(F, 2, &loop, NULL, 0) == RIFL_OK);
    CHECK_EQ_U(rifl_phy_channel_peek(loop, h, 4), 0);
    CHECK_EQ_U(rifl_phy_channel_peek(NULL, h, 4), 0);
    CHECK_EQ_U(rifl_phy_channel_peek(a, NULL, 4), 0);
    CHECK_EQ_I(rifl_phy_channel_skip_hits(loop, 1), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_phy_channel_skip_hits(NULL, 1), RIFL_ERR_INVALID_ARG);
    rifl_phy_free(loop);
    rifl_phy_free(a);
    rifl_phy_free(b);
}

TEST_MAIN({ "channel_pass", t_channel_pass }, { "channel_peek", t_channel_peek },
          { "channel_content_delay", t_channel_content_delay },
          { "channel_errors", t_channel_errors },
          { "channel_skip", t_channel_skip },
          { "content_aligned", t_content_aligned },
          { "loopback", t_loopback },
          { "lanes_over_loopbacks", t_lanes_over_loopbacks },
          { "refused", t_refused }, { "refused_size", t_refused_size },
          { "serial_line", t_serial_line },
          { "serial_errors", t_serial_errors }, { "serial_slips", t_serial_slips },
          { "serial_slip_undone", t_serial_slip_undone },
          { "serial_refused", t_serial_refused })

/* The PHY boundary (rifl/phy.h): the simulated cable and the loopback, each
 * through the one interface every PHY has.  The channel is checked as a
 * black box: frames by content and as wire bytes, its delay, its errors (a
 * damaged frame comes out as the sender's encoding with bits flipped), the
 * accelerator's skip and frames in flight; the loopback the same way, and
 * two lanes talk across a pair of loopbacks. */
#include "testlib.h"

#include <stddef.h>

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

TEST_MAIN({ "channel_content_delay", t_channel_content_delay },
          { "channel_errors", t_channel_errors },
          { "channel_skip", t_channel_skip },
          { "content_aligned", t_content_aligned },
          { "loopback", t_loopback },
          { "lanes_over_loopbacks", t_lanes_over_loopbacks },
          { "refused", t_refused })

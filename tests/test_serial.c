/* A lane as a serial bit stream (rifl/serial.h, rifl-multilane §1-§2): the
 * wire bit order, and the aligner against a bit-by-bit model of the same
 * rules, from every frame offset, through bit slips, damaged headers and
 * outages of the rx_up counter. */
#include "testlib.h"

#include "rifl/frame.h"
#include "rifl/rng.h"
#include "rifl/serial.h"

#define MAXF 2048
#define MAXFB (MAXF / 8)

/* ---- a stream of wire bits, written least significant bit first ---------- */

struct bits {
    uint64_t *w;          /* words */
    size_t cap, n;        /* bits written */
};

static void put_bits(struct bits *b, uint64_t v, unsigned k) /* k <= 64 low bits of v */
{
    if (k == 0)
        return;
    if (k < 64)
        v &= (1ULL << k) - 1;
    size_t word = b->n / 64;
    unsigned off = b->n % 64;
    if (word >= b->cap)
        return;
    /* bits at and above the write position are cleared */
    uint64_t keep = off ? b->w[word] & ((1ULL << off) - 1) : 0;
    b->w[word] = keep | (v << off);
    if (off && off + k > 64 && word + 1 < b->cap)
        b->w[word + 1] = v >> (64 - off);
    b->n += k;
}

static unsigned get_bit(const struct bits *b, size_t p)
{
    return (unsigned)(b->w[p / 64] >> (p % 64)) & 1u;
}

/* a frame's words onto the wire, each least significant bit first */
static void put_frame(struct bits *b, const uint8_t *frame, unsigned F)
{
    uint64_t w[MAXF / 64];
    rifl_serial_words(frame, F, w);
    for (unsigned i = 0; i < F / 64; i++)
        put_bits(b, w[i], 64);
}

/* n frames from the codec: data frames with random payloads and control
 * frames, scrambled, with frame IDs counting up */
static void make_frames(rifl_rng *r, unsigned F, unsigned n, uint8_t *out)
{
    uint64_t scr = rifl_rng_next(r);
    uint8_t payload[MAXFB];
    for (unsigned i = 0; i < n; i++) {
        uint8_t *f = out + (size_t)i * (F / 8);
        if (rifl_rng_below(r, 4) == 0) {
            static const uint16_t keys[] = { RIFL_KEY_IDLE, RIFL_KEY_PAUSE, RIFL_KEY_RETRANSMIT };
            rifl_frame_encode_control(f, F, keys[rifl_rng_below(r, 3)], i & 0xFFF, &scr);
        } else {
            for (unsigned k = 0; k < F / 8; k++)
                payload[k] = (uint8_t)rifl_rng_next(r);
            rifl_frame_encode(f, F, RIFL_SYN_DATA, 1, payload, i & 0xFFF, &scr);
        }
    }
}

/* ---- wire order ---------------------------------------------------------- */

static void t_wire_order(void)
{
    static const unsigned widths[] = { 64, 128, 256, 512, 1024, 2048 };
    rifl_rng r;
    rifl_rng_seed(&r, test_seed);
    for (unsigned wi = 0; wi < 6; wi++) {
        unsigned F = widths[wi];
        uint8_t f[MAXFB], back[MAXFB];
        uint64_t w[MAXF / 64];
        for (unsigned k = 0; k < F / 8; k++)
            f[k] = (uint8_t)rifl_rng_next(&r);
        REQUIRE(rifl_serial_words(f, F, w) == RIFL_OK);
        REQUIRE(rifl_serial_frame(w, F, back) == RIFL_OK);
        CHECK(memcmp(f, back, F / 8) == 0);
        /* frame bit b (MSB of byte 0 first) is word bit 63 - b mod 64 */
        unsigned wrong = 0;
        for (unsigned b = 0; b < F; b++) {
            unsigned fb = (f[b / 8] >> (7 - b % 8)) & 1u;
            unsigned wb = (unsigned)(w[b / 64] >> (63 - b % 64)) & 1u;
            wrong += fb != wb;
        }
        CHECK_EQ_U(wrong, 0);
        /* on the wire: wire position p carries frame bit 64 (p/64) + 63 - p%64 */
        uint64_t buf[MAXF / 64];
        struct bits s = { buf, MAXF / 64, 0 };
        put_frame(&s, f, F);
        wrong = 0;
        for (unsigned p = 0; p < F; p++) {
            unsigned b = 64 * (p / 64) + 63 - p % 64;
            wrong += get_bit(&s, p) != ((f[b / 8] >> (7 - b % 8)) & 1u);
        }
        CHECK_EQ_U(wrong, 0);
    }
    /* bytes 0..7 read as a big-endian number */
    uint8_t f[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    uint64_t w;
    REQUIRE(rifl_serial_words(f, 64, &w) == RIFL_OK);
    CHECK(w == 0x0102030405060708ULL);
    /* a data frame's first word ends on the wire with 1 then 0 (SYN 01) */
    uint8_t d[32];
    uint64_t scr = 1, dw[4];
    rifl_frame_encode(d, 256, RIFL_SYN_DATA, 1, NULL, 0, &scr);
    rifl_serial_words(d, 256, dw);
    CHECK(((dw[0] >> 62) & 1u) == 1 && (dw[0] >> 63) == 0);
    CHECK(rifl_serial_header_valid(dw[0]));
    rifl_frame_encode_control(d, 256, RIFL_KEY_IDLE, 0, &scr);
    rifl_serial_words(d, 256, dw);
    CHECK((dw[0] >> 62) == RIFL_SYN_CONTROL && rifl_serial_header_valid(dw[0]));
    CHECK(!rifl_serial_header_valid(0) && !rifl_serial_header_valid(UINT64_MAX));
    CHECK(rifl_serial_words(f, 32, &w) == RIFL_ERR_INVALID_ARG);
    CHECK(rifl_serial_words(f, 96, &w) == RIFL_ERR_INVALID_ARG);
    CHECK(rifl_serial_frame(NULL, 64, f) == RIFL_ERR_INVALID_ARG);
}

/* ---- a bit-by-bit model of the aligner's rules --------------------------- */

/* What one frame check did, in order, for comparing with the aligner. */
struct check_rec {
    uint8_t frame[MAXFB];
    bool aligned;
    unsigned events;      /* LOCK, UNLOCK, SLIDE */
};

/* The rules of rifl-multilane §2 on absolute bit positions: frames start at
 * s, s + F, ...; a slide makes the next one start at s + F + 1. */
static size_t model(const struct bits *b, unsigned F, struct check_rec *out, size_t max)
{
    size_t s = 0, n = 0;
    unsigned window = 0, v = 0, u = 0;
    bool aligned = false;
    while (n < max) {
        /* the aligner hands a frame out once the word after its last one
         * has arrived */
        size_t need = 64 * (s / 64 + F / 64 + 1);
        if (need > b->n / 64 * 64)
            break;
        struct check_rec *c = &out[n++];
        memset(c->frame, 0, F / 8);
        for (unsigned i = 0; i < F; i++) {
            /* frame bit b sits at wire position 64 (b/64) + 63 - b%64 */
            unsigned wp = 64 * (i / 64) + 63 - i % 64;
            c->frame[i / 8] |= (uint8_t)(get_bit(b, s + wp) << (7 - i % 8));
        }
        unsigned syn = c->frame[0] >> 6;
        bool valid = syn == 1 || syn == 2;
        unsigned v0 = v, u0 = u;
        c->events = 0;
        if (window == 16 || u0 >= 2)
            v = u = 0;
        else if (valid)
            v++;
        else
            u++;
        bool slide = false;
        if (u0 >= 2) {
            if (aligned)
                c->events |= RIFL_ALIGNER_UNLOCK;
            aligned = false;
            slide = true;
            c->events |= RIFL_ALIGNER_SLIDE;
        } else if (v0 >= 16 && !aligned) {
            aligned = true;
            c->events |= RIFL_ALIGNER_LOCK;
        }
        window = window == 16 ? 0 : window + 1;
        c->aligned = aligned;
        s += F + (slide ? 1 : 0);
    }
    return n;
}

/* The aligner over the same stream; its frame checks compared with the
 * model's, one by one.  Returns the number of frames. */
static size_t run_and_compare(const struct bits *b, unsigned F, unsigned up_log2,
                              struct check_rec *ref, size_t nref, rifl_aligner *a)
{
    rifl_aligner_config cfg = { .frame_bits = F, .up_log2 = up_log2 };
    char msg[200];
    if (rifl_aligner_init(a, &cfg, msg, sizeof msg) != RIFL_OK) {
        CHECK_MSG(0, "%s", msg);
        return 0;
    }
    size_t k = 0, bad = 0;
    uint8_t fr[MAXFB];
    unsigned ev = 0; /* the check is made at a frame's first word */
    for (size_t i = 0; i < b->n / 64; i++) {
        rifl_aligner_result r = rifl_aligner_push(a, b->w[i], fr);
        ev |= r.events & (RIFL_ALIGNER_LOCK | RIFL_ALIGNER_UNLOCK | RIFL_ALIGNER_SLIDE);
        if (!(r.events & RIFL_ALIGNER_FRAME))
            continue;
        if (k >= nref) {
            bad++;
            break;
        }
        const struct check_rec *c = &ref[k++];
        if (memcmp(fr, c->frame, F / 8) != 0 || r.aligned != c->aligned || ev != c->events) {
            if (!bad)
                fprintf(stderr, "  F=%u frame %zu differs from the model (events %x, model %x)\n",
                        F, k - 1, ev, c->events);
            bad++;
        }
        ev = 0;
    }
    CHECK_EQ_U(bad, 0);
    CHECK_EQ_U(k, nref);
    return k;
}

/* ---- locking ------------------------------------------------------------- */

/* A stream of `garbage` random bits, then n frames. */
static void stream(struct bits *b, rifl_rng *r, unsigned F, unsigned garbage, const uint8_t *frames,
                   unsigned n)
{
    b->n = 0;
    while (garbage >= 64) {
        put_bits(b, rifl_rng_next(r), 64);
        garbage -= 64;
    }
    put_bits(b, rifl_rng_next(r), garbage);
    for (unsigned i = 0; i < n; i++)
        put_frame(b, frames + (size_t)i * (F / 8), F);
}

/* The frames handed out from the last lock on are the frames sent, in
 * order, and the lane stays aligned; returns the frame count at that lock
 * (SIZE_MAX when it never locked). */
static size_t locked_on_sent(const struct check_rec *c, size_t n, const uint8_t *sent,
                             unsigned nsent, unsigned F)
{
    size_t lock = SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        if (c[i].events & RIFL_ALIGNER_LOCK)
            lock = i;
    if (lock == SIZE_MAX)
        return SIZE_MAX;
    /* which sent frame the lock check saw */
    size_t first = SIZE_MAX;
    for (unsigned j = 0; j < nsent; j++)
        if (memcmp(c[lock].frame, sent + (size_t)j * (F / 8), F / 8) == 0) {
            first = j;
            break;
        }
    if (first == SIZE_MAX)
        return SIZE_MAX;
    for (size_t i = lock; i < n; i++) {
        size_t j = first + (i - lock);
        if (j >= nsent || !c[i].aligned ||
            memcmp(c[i].frame, sent + j * (F / 8), F / 8) != 0)
            return SIZE_MAX;
    }
    return lock;
}

#define MAXFRAMES (6 * MAXF + 200)
static struct check_rec recs[MAXFRAMES];
static uint64_t words[MAXFRAMES * (MAXF / 64)];
static uint8_t sent[MAXFRAMES * (MAXF / 8)];

/* From every one of the F bit offsets the aligner locks on the frames, at
 * the same checks as the model, within one search cycle. */
static void lock_all_offsets(unsigned F, unsigned step)
{
    rifl_rng r;
    rifl_rng_seed(&r, test_seed * 31 + F);
    make_frames(&r, F, 6 * F + 200, sent);
    struct bits b = { words, sizeof words / sizeof words[0], 0 };
    unsigned failed = 0, tried = 0;
    size_t worst = 0;
    for (unsigned o = 0; o < F; o += step) {
        /* candidate o is reached after o others, about 5 frames each */
        unsigned nsent = 6 * (o + 1) + 200;
        stream(&b, &r, F, o, sent, nsent);
        size_t n = model(&b, F, recs, sizeof recs / sizeof recs[0]);
        rifl_aligner a;
        run_and_compare(&b, F, RIFL_ALIGNER_UP_LOG2_SIM, recs, n, &a);
        size_t lock = locked_on_sent(recs, n, sent, nsent, F);
        tried++;
        if (lock == SIZE_MAX || rifl_aligner_offset(&a) != o % F || !rifl_aligner_aligned(&a)) {
            if (!failed)
                fprintf(stderr, "  F=%u offset %u: no lasting lock on the frames sent\n", F, o);
            failed++;
            continue;
        }
        worst = lock > worst ? lock : worst;
    }
    CHECK_EQ_U(failed, 0);
    CHECK(tried > 0);
    /* offset o is the o-th candidate: never more than a cycle of ~5 frames
     * per candidate (at most 6), plus a window to lock */
    CHECK_MSG(worst <= 6 * (size_t)F + 34, "F=%u: slowest lock after %zu frames", F, worst);
}

static void t_lock_every_offset(void)
{
    lock_all_offsets(64, 1);
    lock_all_offsets(128, 1);
    lock_all_offsets(256, 1);
    lock_all_offsets(512, test_long_run ? 1 : 7);
    lock_all_offsets(1024, test_long_run ? 1 : 131);
    lock_all_offsets(2048, test_long_run ? 1 : 257);
}

/* ---- slips and damaged headers ------------------------------------------- */

/* Lock at offset 0, then one bit inserted (+1) or dropped (-1) in the
 * stream: the aligner unlocks and locks again on the frames that follow;
 * an inserted bit is the next candidate, a dropped one the last. */
static void slip(int dir)
{
    const unsigned F = 256, before = 60, after = 6 * 256 + 100;
    rifl_rng r;
    rifl_rng_seed(&r, test_seed * 7 + (unsigned)(dir + 1));
    make_frames(&r, F, before + after, sent);
    struct bits b = { words, sizeof words / sizeof words[0], 0 };
    for (unsigned i = 0; i < before; i++)
        put_frame(&b, sent + (size_t)i * (F / 8), F);
    uint8_t extra = (uint8_t)rifl_rng_next(&r);
    if (dir > 0) {
        put_bits(&b, extra, 1);
    } else {
        b.n--; /* the last bit of frame before-1 is lost */
    }
    for (unsigned i = before; i < before + after; i++)
        put_frame(&b, sent + (size_t)i * (F / 8), F);
    size_t n = model(&b, F, recs, sizeof recs / sizeof recs[0]);
    rifl_aligner a;
    run_and_compare(&b, F, RIFL_ALIGNER_UP_LOG2_SIM, recs, n, &a);
    const rifl_aligner_stats *st = rifl_aligner_get_stats(&a);
    CHECK(st->locks >= 2 && st->unlocks >= 1);
    size_t lock = locked_on_sent(recs, n, sent + (size_t)before * (F / 8), after, F);
    CHECK(lock != SIZE_MAX);
    CHECK(rifl_aligner_aligned(&a));
    CHECK_EQ_U(rifl_aligner_offset(&a), dir > 0 ? 1 : F - 1);
    if (dir > 0)
        CHECK_MSG(lock < before + 60, "relock after an inserted bit took %zu frames",
                  lock - before);
    else
        CHECK_MSG(lock > before + 3 * F, "a dropped bit relocks after a full search (%zu)",
                  lock - before);
}

static void t_slip_inserted_bit(void) { slip(+1); }
static void t_slip_dropped_bit(void) { slip(-1); }

/* Once locked: one damaged SYN per 17-frame window never unlocks; two in
 * one window unlock at the next check. */
static void t_damaged_headers(void)
{
    const unsigned F = 256, n = 400;
    rifl_rng r;
    rifl_rng_seed(&r, test_seed * 13);
    make_frames(&r, F, n, sent);
    /* from frame 40 on, every 17th frame has SYN 00 */
    for (unsigned i = 40; i < n; i += 17)
        sent[(size_t)i * (F / 8)] &= 0x3f;
    struct bits b = { words, sizeof words / sizeof words[0], 0 };
    for (unsigned i = 0; i < n; i++)
        put_frame(&b, sent + (size_t)i * (F / 8), F);
    size_t m = model(&b, F, recs, sizeof recs / sizeof recs[0]);
    rifl_aligner a;
    run_and_compare(&b, F, RIFL_ALIGNER_UP_LOG2_SIM, recs, m, &a);
    CHECK_EQ_U(rifl_aligner_get_stats(&a)->locks, 1);
    CHECK_EQ_U(rifl_aligner_get_stats(&a)->unlocks, 0);
    CHECK(rifl_aligner_get_stats(&a)->headers_invalid >= 20);
    CHECK(rifl_aligner_aligned(&a));

    /* two damaged in a row after frame 100: unlock at the check after */
    make_frames(&r, F, n, sent);
    sent[(size_t)100 * (F / 8)] |= 0xc0;
    sent[(size_t)101 * (F / 8)] |= 0xc0;
    b.n = 0;
    for (unsigned i = 0; i < n; i++)
        put_frame(&b, sent + (size_t)i * (F / 8), F);
    m = model(&b, F, recs, sizeof recs / sizeof recs[0]);
    run_and_compare(&b, F, RIFL_ALIGNER_UP_LOG2_SIM, recs, m, &a);
    size_t unlock_at = SIZE_MAX;
    for (size_t i = 0; i < m; i++)
        if (recs[i].events & RIFL_ALIGNER_UNLOCK) {
            unlock_at = i;
            break;
        }
    /* unless the two fall on either side of a window's end */
    CHECK(unlock_at == 102 || rifl_aligner_get_stats(&a)->unlocks == 0);
    CHECK(rifl_aligner_get_stats(&a)->locks >= 1);
}

/* rx_up: 2^n aligned words after the first lock; after an outage of u
 * words, u words after the lock that ends it. */
static void t_rx_up(void)
{
    const unsigned F = 256, up_log2 = 12;
    rifl_rng r;
    rifl_rng_seed(&r, test_seed * 17);
    unsigned nf = 3000;
    make_frames(&r, F, nf, sent);
    /* a bit inserted before frame 1500 causes an outage: the aligner
     * unlocks and finds the frames again one candidate on */
    struct bits b = { words, sizeof words / sizeof words[0], 0 };
    for (unsigned i = 0; i < nf; i++) {
        if (i == 1500)
            put_bits(&b, 1, 1);
        put_frame(&b, sent + (size_t)i * (F / 8), F);
    }
    rifl_aligner a;
    rifl_aligner_config cfg = { .frame_bits = F, .up_log2 = up_log2 };
    REQUIRE(rifl_aligner_init(&a, &cfg, NULL, 0) == RIFL_OK);
    size_t lock1 = SIZE_MAX, up1 = SIZE_MAX, unlock = SIZE_MAX, lock2 = SIZE_MAX,
           up2 = SIZE_MAX, down = SIZE_MAX;
    uint32_t top = 0;
    for (size_t i = 0; i < b.n / 64; i++) {
        rifl_aligner_result res = rifl_aligner_push(&a, b.w[i], NULL);
        if ((res.events & RIFL_ALIGNER_LOCK) && lock1 == SIZE_MAX)
            lock1 = i;
        else if (res.events & RIFL_ALIGNER_LOCK)
            lock2 = i;
        if ((res.events & RIFL_ALIGNER_UP) && up1 == SIZE_MAX)
            up1 = i;
        else if (res.events & RIFL_ALIGNER_UP)
            up2 = i;
        if ((res.events & RIFL_ALIGNER_UNLOCK) && unlock == SIZE_MAX) {
            unlock = i;
            top = rifl_aligner_up_count(&a);
        }
        if (res.events & RIFL_ALIGNER_DOWN)
            down = i;
        CHECK(res.up == (rifl_aligner_up_count(&a) == (1u << up_log2)));
    }
    REQUIRE(lock1 != SIZE_MAX && up1 != SIZE_MAX && unlock != SIZE_MAX && lock2 != SIZE_MAX);
    CHECK_EQ_U(up1 - lock1, 1u << up_log2);
    CHECK_EQ_U(top, 1u << up_log2);
    CHECK_EQ_U(down, unlock + 1);
    REQUIRE(up2 != SIZE_MAX);
    CHECK_EQ_U(up2 - lock2, lock2 - unlock);
    CHECK_EQ_U(rifl_aligner_get_stats(&a)->ups, 2);
    CHECK_EQ_U(rifl_aligner_get_stats(&a)->downs, 1);
}

/* Random streams: pure noise, frames with random bit errors and slips;
 * the aligner agrees with the model check by check. */
static void t_random_streams(void)
{
    static const unsigned widths[] = { 64, 128, 256, 512, 1024 };
    rifl_rng r;
    rifl_rng_seed(&r, test_seed * 101);
    unsigned rounds = test_long_run ? 400 : 40;
    for (unsigned k = 0; k < rounds; k++) {
        unsigned F = widths[rifl_rng_below(&r, 5)];
        unsigned nf = 2000;
        make_frames(&r, F, nf, sent);
        struct bits b = { words, sizeof words / sizeof words[0], 0 };
        double p = k % 4 == 0 ? 0.5 : 1e-3 * (double)rifl_rng_below(&r, 4);
        put_bits(&b, rifl_rng_next(&r), (unsigned)rifl_rng_below(&r, 64));
        for (unsigned i = 0; i < nf; i++) {
            uint64_t w[MAXF / 64];
            rifl_serial_words(sent + (size_t)i * (F / 8), F, w);
            for (unsigned j = 0; j < F / 64; j++) {
                uint64_t x = w[j];
                if (p >= 0.5)
                    x = rifl_rng_next(&r);
                else if (p > 0 && rifl_rng_double(&r) < p * 64)
                    x ^= 1ULL << rifl_rng_below(&r, 64);
                if (p > 0 && p < 0.5 && rifl_rng_double(&r) < p) {
                    if (rifl_rng_below(&r, 2))
                        put_bits(&b, x, 63); /* a bit lost */
                    else {
                        put_bits(&b, 0, 1);  /* a bit gained */
                        put_bits(&b, x, 64);
                    }
                } else {
                    put_bits(&b, x, 64);
                }
            }
        }
        size_t n = model(&b, F, recs, sizeof recs / sizeof recs[0]);
        rifl_aligner a;
        run_and_compare(&b, F, RIFL_ALIGNER_UP_LOG2_SIM, recs, n, &a);
        const rifl_aligner_stats *st = rifl_aligner_get_stats(&a);
        CHECK_EQ_U(st->frames, n);
        CHECK_EQ_U(st->words, b.n / 64);
        CHECK(rifl_aligner_up_count(&a) <= (1u << RIFL_ALIGNER_UP_LOG2_SIM));
    }
}

static void t_config(void)
{
    rifl_aligner a;
    char msg[200] = "";
    rifl_aligner_config c = { .frame_bits = 96 };
    CHECK(rifl_aligner_init(&a, &c, msg, sizeof msg) == RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "frame_bits") != NULL);
    c.frame_bits = 32;
    CHECK(rifl_aligner_init(&a, &c, msg, sizeof msg) == RIFL_ERR_CONFIG);
    c.frame_bits = 256;
    c.up_log2 = 25;
    CHECK(rifl_aligner_init(&a, &c, msg, sizeof msg) == RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "up_log2") != NULL);
    c.up_log2 = 0;
    REQUIRE(rifl_aligner_init(&a, &c, msg, sizeof msg) == RIFL_OK);
    CHECK(!rifl_aligner_aligned(&a) && !rifl_aligner_up(&a));
    CHECK_EQ_U(rifl_aligner_offset(&a), 0);
    CHECK(rifl_aligner_init(NULL, &c, msg, sizeof msg) == RIFL_ERR_INVALID_ARG);
    CHECK(rifl_aligner_init(&a, NULL, msg, sizeof msg) == RIFL_ERR_INVALID_ARG);
    rifl_aligner_result r = rifl_aligner_push(NULL, 0, NULL);
    CHECK(r.events == 0 && !r.aligned);
    size_t n = 0;
    const rifl_counter *t = rifl_aligner_counters(&n);
    CHECK(t && n == sizeof(rifl_aligner_stats) / sizeof(uint64_t));
}

TEST_MAIN({ "wire_order", t_wire_order }, { "lock_every_offset", t_lock_every_offset },
          { "slip_inserted_bit", t_slip_inserted_bit },
          { "slip_dropped_bit", t_slip_dropped_bit }, { "damaged_headers", t_damaged_headers },
          { "rx_up", t_rx_up }, { "random_streams", t_random_streams }, { "config", t_config })

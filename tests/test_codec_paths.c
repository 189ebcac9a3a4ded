/* The batch codec's code paths (rifl_frame_batch_path): every path the CPU
 * runs gives bit for bit what the portable path gives, on the golden vectors
 * and on seeded random batches of every width and of 0 to 40 frames (wire
 * bytes, scrambler states, decoded payloads and records, the receiver's
 * check), from buffers at any alignment, with damaged frames among those
 * decoded.  A path the CPU does not run is reported skipped with the reason,
 * and must be refused. */
/* MAP_ANONYMOUS */
#define _DEFAULT_SOURCE
#include "testlib.h"

#include <sys/mman.h>
#include <unistd.h>

#include "rifl/frame.h"
#include "rifl/rng.h"
#include "rifl/text.h"

#define MAXN 40
#define SLACK 64 /* room to place buffers at any alignment */

static const unsigned widths[] = { 64, 128, 256, 512, 1024, 2048 };

/* Switch to path `name`: 1 when the CPU runs it; otherwise 0, after
 * checking that it is refused and saying why it is skipped. */
static int use_path(const char *name)
{
    char msg[200] = "";
    int rc = rifl_frame_batch_path_check(name, msg, sizeof msg);
    if (rc == RIFL_OK) {
        CHECK_EQ_I(rifl_frame_batch_set_path(name), RIFL_OK);
        CHECK(strcmp(rifl_frame_batch_path(), name) == 0);
        return 1;
    }
    const char *before = rifl_frame_batch_path();
    CHECK_EQ_I(rc, RIFL_ERR_UNSUPPORTED);
    CHECK(strstr(msg, "lacks") != NULL);
    CHECK_EQ_I(rifl_frame_batch_set_path(name), RIFL_ERR_UNSUPPORTED);
    CHECK(strcmp(rifl_frame_batch_path(), before) == 0);
    printf("  skip %s: %s\n", name, msg);
    return 0;
}

/* ---- the path API ----------------------------------------------------- */

static void t_path_api(void)
{
    unsigned n = 0;
    const char *last = NULL;
    while (rifl_frame_batch_path_name(n))
        last = rifl_frame_batch_path_name(n++);
    REQUIRE(n >= 1);
    CHECK(strcmp(last, "portable") == 0);
#if defined(__x86_64__)
    CHECK_EQ_U(n, 3);
    CHECK(strcmp(rifl_frame_batch_path_name(0), "avx512") == 0);
    CHECK(strcmp(rifl_frame_batch_path_name(1), "avx2") == 0);
#endif
    printf("  path in use: %s\n", rifl_frame_batch_path());
    /* the one in use is the best the CPU runs */
    for (unsigned i = 0; i < n; i++)
        if (rifl_frame_batch_path_check(rifl_frame_batch_path_name(i), NULL, 0) == RIFL_OK) {
            CHECK(strcmp(rifl_frame_batch_path(), rifl_frame_batch_path_name(i)) == 0);
            break;
        }
    char msg[200] = "";
    CHECK_EQ_I(rifl_frame_batch_path_check("sse9", msg, sizeof msg), RIFL_ERR_INVALID_ARG);
    CHECK(strstr(msg, "sse9") && strstr(msg, "portable"));
    CHECK_EQ_I(rifl_frame_batch_path_check(NULL, msg, sizeof msg), RIFL_ERR_INVALID_ARG);
    const char *best = rifl_frame_batch_path();
    CHECK_EQ_I(rifl_frame_batch_set_path("sse9"), RIFL_ERR_INVALID_ARG);
    CHECK(strcmp(rifl_frame_batch_path(), best) == 0);
    CHECK_EQ_I(rifl_frame_batch_set_path("portable"), RIFL_OK);
    CHECK(strcmp(rifl_frame_batch_path(), "portable") == 0);
    CHECK_EQ_I(rifl_frame_batch_simd(256), 0);
    for (unsigned i = 0; i + 1 < n; i++)
        if (use_path(rifl_frame_batch_path_name(i))) {
            CHECK_EQ_I(rifl_frame_batch_simd(256), 1);
            CHECK_EQ_I(rifl_frame_batch_simd(2048), 1);
            CHECK_EQ_I(rifl_frame_batch_simd(64), 0);
        }
    CHECK_EQ_I(rifl_frame_batch_set_path(NULL), RIFL_OK);
    CHECK(strcmp(rifl_frame_batch_path(), best) == 0);
    CHECK(strcmp(rifl_strerror(RIFL_ERR_UNSUPPORTED), "unknown error") != 0);
    /* the receiver's call refuses what it cannot use */
    uint8_t wire[32] = { 0 }, pay[30];
    uint16_t expect[1] = { 0 };
    uint64_t d = 0, odd[1];
    rifl_frame_info info[1];
    CHECK_EQ_I(rifl_frame_decode_verify(wire, 256, 1, &d, NULL, pay, odd, info),
               RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_frame_decode_verify(wire, 255, 1, &d, expect, pay, odd, info),
               RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_frame_decode_verify(wire, 256, 1, &d, expect, pay, NULL, info),
               RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_frame_decode_verify(wire, 256, 0, &d, expect, pay, odd, info), 0);
}

/* ---- one batch on one path -------------------------------------------- */

struct batch {
    unsigned F, n, align[4];
    uint8_t syn[MAXN], meta[MAXN];
    uint16_t ids[MAXN], expect[MAXN];
    uint64_t scr;
    uint8_t pay[MAXN * RIFL_PAYLOAD_MAX_BYTES + SLACK];
    uint8_t rx[MAXN * RIFL_FRAME_MAX_BYTES + SLACK]; /* what is decoded */
};

struct result {
    uint8_t wire[MAXN * RIFL_FRAME_MAX_BYTES + SLACK], out[MAXN * RIFL_PAYLOAD_MAX_BYTES + SLACK];
    uint8_t vout[MAXN * RIFL_PAYLOAD_MAX_BYTES + SLACK];
    uint64_t scr, descr, vdescr, odd[1];
    int rc_enc, rc_dec, nodd;
    rifl_frame_info info[MAXN], vinfo[MAXN];
};

static void run_batch(const struct batch *b, struct result *r)
{
    memset(r, 0xA5, sizeof *r);
    uint8_t *wire = r->wire + b->align[0], *out = r->out + b->align[1];
    uint8_t *vout = r->vout + b->align[2];
    const uint8_t *pay = b->pay + b->align[3], *rx = b->rx + b->align[0];
    r->scr = b->scr;
    r->rc_enc = rifl_frame_encode_batch(wire, b->F, b->n, b->syn, b->meta, pay, b->ids, &r->scr);
    r->descr = b->scr;
    r->rc_dec = rifl_frame_decode_batch(rx, b->F, b->n, &r->descr, out, r->info);
    r->vdescr = b->scr;
    r->nodd = rifl_frame_decode_verify(rx, b->F, b->n, &r->vdescr, b->expect, vout, r->odd,
                                       r->vinfo);
}

static int same_info(const rifl_frame_info *a, const rifl_frame_info *b)
{
    return a->syn == b->syn && a->meta == b->meta && a->vcode == b->vcode && a->crc == b->crc &&
           a->id == b->id && a->key == b->key && a->format == b->format && a->kind == b->kind &&
           a->payload_len == b->payload_len && a->eop == b->eop;
}

static int untouched(const void *p, size_t len)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < len; i++)
        if (b[i] != 0xA5)
            return 0;
    return 1;
}

/* r against the portable path's p; returns the number of differences */
static unsigned compare(const struct batch *b, const struct result *r, const struct result *p)
{
    unsigned fb = b->F / 8, pb = fb - 2, d = 0;
    d += r->rc_enc != p->rc_enc || r->scr != p->scr;
    d += memcmp(r->wire + b->align[0], p->wire + b->align[0], (size_t)b->n * fb) != 0;
    d += r->rc_dec != p->rc_dec || r->descr != p->descr;
    d += memcmp(r->out + b->align[1], p->out + b->align[1], (size_t)b->n * pb) != 0;
    /* nothing written around the outputs */
    d += !untouched(r->out + b->align[1] + b->n * pb, SLACK - b->align[1]);
    d += !untouched(r->vout + b->align[2] + b->n * pb, SLACK - b->align[2]);
    d += !untouched(r->wire + b->align[0] + b->n * fb, SLACK - b->align[0]);
    d += !untouched(r->out, b->align[1]) || !untouched(r->vout, b->align[2]) ||
         !untouched(r->wire, b->align[0]);
    for (unsigned j = 0; j < b->n; j++)
        d += !same_info(&r->info[j], &p->info[j]);
    d += r->nodd != p->nodd || r->vdescr != p->vdescr || r->vdescr != r->descr;
    d += b->n && r->odd[0] != p->odd[0];
    d += memcmp(r->vout + b->align[2], p->vout + b->align[2], (size_t)b->n * pb) != 0;
    /* records of the frames that are not plain; the others untouched */
    for (unsigned j = 0; j < b->n; j++)
        if ((p->odd[0] >> j) & 1)
            d += !same_info(&r->vinfo[j], &p->vinfo[j]);
        else
            d += !untouched(&r->vinfo[j], sizeof r->vinfo[j]) ||
                 !untouched(&p->vinfo[j], sizeof p->vinfo[j]);
    return d;
}

/* A random batch: mostly full data frames with the expected IDs, some of
 * every other kind, some IDs not the expected ones, and in `damage` of the
 * rounds the decoded bytes damaged here and there. */
static void make_batch(rifl_rng *g, unsigned F, unsigned n, int damage, struct batch *b)
{
    unsigned fb = F / 8;
    b->F = F;
    b->n = n;
    for (int k = 0; k < 4; k++)
        b->align[k] = (unsigned)rifl_rng_below(g, SLACK);
    for (size_t j = 0; j < sizeof b->pay; j++)
        b->pay[j] = (uint8_t)rifl_rng_next(g);
    for (unsigned j = 0; j < n; j++) {
        int plain = rifl_rng_below(g, 4) != 0;
        b->syn[j] = (uint8_t)(plain ? RIFL_SYN_DATA : 1 + rifl_rng_below(g, 2));
        b->meta[j] = (uint8_t)(plain ? RIFL_META_FULL : rifl_rng_below(g, 4));
        b->ids[j] = (uint16_t)rifl_rng_below(g, 4096);
        b->expect[j] = rifl_rng_below(g, 8) ? b->ids[j] : (uint16_t)rifl_rng_below(g, 4096);
    }
    b->scr = rifl_rng_next(g) & RIFL_SCRAMBLER_MASK;
    /* what is decoded: the portable encoding, maybe damaged */
    uint64_t s = b->scr;
    rifl_frame_batch_set_path("portable");
    uint8_t *rx = b->rx + b->align[0];
    memset(b->rx, 0, sizeof b->rx);
    rifl_frame_encode_batch(rx, F, n, b->syn, b->meta, b->pay + b->align[3], b->ids, &s);
    if (damage)
        for (unsigned j = 0; j < n * fb; j += 1 + (unsigned)rifl_rng_below(g, 3 * fb))
            rx[j] ^= (uint8_t)(1u << rifl_rng_below(g, 8));
}

static void t_random_batches(void)
{
    static struct batch b;
    static struct result ref, got;
    for (unsigned pi = 0; rifl_frame_batch_path_name(pi); pi++) {
        const char *path = rifl_frame_batch_path_name(pi);
        if (!strcmp(path, "portable") || !use_path(path))
            continue;
        rifl_rng g;
        rifl_rng_seed(&g, test_seed * 1000 + 77 + pi);
        unsigned rounds = 0, diffs = 0, odd_seen = 0;
        for (unsigned wi = 0; wi < 6; wi++)
            for (unsigned n = 0; n <= MAXN; n++)
                for (int damage = 0; damage < 6; damage++) {
                    make_batch(&g, widths[wi], n, damage & 1, &b);
                    run_batch(&b, &ref); /* portable, set by make_batch */
                    rifl_frame_batch_set_path(path);
                    run_batch(&b, &got);
                    unsigned d = compare(&b, &got, &ref);
                    if (d && diffs < 5)
                        printf("  %s: %u-bit frames, %u in a batch%s: %u differences\n", path,
                               widths[wi], n, damage & 1 ? ", damaged" : "", d);
                    diffs += d;
                    odd_seen += ref.nodd > 0;
                    rounds++;
                }
        printf("  %s: %u random batches, %u differences from portable\n", path, rounds, diffs);
        CHECK_EQ_U(diffs, 0);
        CHECK(odd_seen > rounds / 4); /* the slow path was taken, often */
    }
    rifl_frame_batch_set_path(NULL);
}

/* A difference planted in the path's own output is found: the comparison
 * can fail. */
static void t_compare_catches(void)
{
    static struct batch b;
    static struct result ref, got;
    rifl_rng g;
    rifl_rng_seed(&g, test_seed + 5);
    make_batch(&g, 256, 16, 0, &b);
    run_batch(&b, &ref);
    got = ref;
    CHECK_EQ_U(compare(&b, &got, &ref), 0);
    got.wire[b.align[0] + 40] ^= 1;
    CHECK(compare(&b, &got, &ref) > 0);
    got = ref;
    got.vinfo[3].id ^= 1;
    got.odd[0] ^= 1ULL << 3;
    CHECK(compare(&b, &got, &ref) > 0);
    got = ref;
    got.out[b.align[1] + 16 * 30] = 0;
    CHECK(compare(&b, &got, &ref) > 0);
}

/* ---- the golden vectors --------------------------------------------- */

struct golden {
    unsigned F, n;
    uint8_t *syn, *meta, *pay, *wire;
    uint16_t *ids;
    uint64_t *scr;
};

static int load_golden(const char *scen, unsigned F, struct golden *v)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/encode.vectors", RIFL_VECTORS_DIR, scen);
    size_t len;
    char *buf = test_read_file(path, &len);
    if (!buf)
        return -1;
    unsigned fb = F / 8, cap = 0;
    for (size_t i = 0; i < len; i++)
        cap += buf[i] == '\n';
    v->F = F;
    v->n = 0;
    v->syn = malloc(cap + 1);
    v->meta = malloc(cap + 1);
    v->ids = malloc((cap + 1) * sizeof *v->ids);
    v->scr = malloc((cap + 1) * sizeof *v->scr);
    v->pay = malloc((size_t)(cap + 1) * (fb - 2));
    v->wire = malloc((size_t)(cap + 1) * fb);
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char scr[32], pay[600], wire[600];
        unsigned fid, syn, meta;
        size_t got;
        if (line[0] == '#' ||
            sscanf(line, "%u %31s %u %u %599s %599s", &fid, scr, &syn, &meta, pay, wire) != 6)
            continue;
        unsigned k = v->n++;
        v->syn[k] = (uint8_t)syn;
        v->meta[k] = (uint8_t)meta;
        v->ids[k] = (uint16_t)fid;
        v->scr[k] = strtoull(scr, NULL, 16);
        if (rifl_hex_decode(pay, strlen(pay), v->pay + (size_t)k * (fb - 2), fb - 2, &got) ||
            rifl_hex_decode(wire, strlen(wire), v->wire + (size_t)k * fb, fb, &got))
            v->n = 0;
    }
    free(buf);
    return v->n ? 0 : -1;
}

static void free_golden(struct golden *v)
{
    free(v->syn);
    free(v->meta);
    free(v->ids);
    free(v->scr);
    free(v->pay);
    free(v->wire);
}

/* Encode the recorded stream in batches of 0 to 40 frames; decode and check
 * the recorded wire frames the same way.  Returns the mismatches. */
static unsigned golden_on_path(const struct golden *v, rifl_rng *g)
{
    unsigned fb = v->F / 8, pb = fb - 2, bad = 0;
    uint8_t wire[MAXN * RIFL_FRAME_MAX_BYTES], pay[MAXN * RIFL_PAYLOAD_MAX_BYTES];
    uint64_t odd[1];
    rifl_frame_info info[MAXN];
    uint64_t scr = v->scr[0], descr = v->scr[0];
    for (unsigned j = 0; j < v->n;) {
        unsigned n = (unsigned)rifl_rng_below(g, MAXN + 1);
        if (n > v->n - j)
            n = v->n - j;
        rifl_frame_encode_batch(wire, v->F, n, v->syn + j, v->meta + j, v->pay + (size_t)j * pb,
                                v->ids + j, &scr);
        bad += memcmp(wire, v->wire + (size_t)j * fb, (size_t)n * fb) != 0;
        bad += j + n < v->n && scr != v->scr[j + n];
        int nodd = rifl_frame_decode_verify(v->wire + (size_t)j * fb, v->F, n, &descr,
                                            v->ids + j, pay, odd, info);
        bad += memcmp(pay, v->pay + (size_t)j * pb, (size_t)n * pb) != 0;
        bad += descr != scr;
        int want = 0;
        for (unsigned k = 0; k < n; k++) {
            int plain = v->syn[j + k] == RIFL_SYN_DATA && v->meta[j + k] == RIFL_META_FULL;
            want += !plain;
            bad += plain == (int)((odd[0] >> k) & 1);
            bad += !plain && (info[k].id != v->ids[j + k] || info[k].syn != v->syn[j + k]);
        }
        bad += nodd != want;
        j += n ? n : 0;
    }
    return bad;
}

/* The frames B received in a recording (with bit errors): the path's
 * decode in batches of 0 to 40 against the portable decode of the same
 * batches.  Returns the mismatches. */
static unsigned received_on_path(const char *scen, unsigned F, const char *path, rifl_rng *g,
                                 unsigned *frames)
{
    char file[1024];
    snprintf(file, sizeof file, "%s/%s/b_rx.frames", RIFL_VECTORS_DIR, scen);
    size_t len;
    char *buf = test_read_file(file, &len);
    if (!buf)
        return 1;
    unsigned fb = F / 8, pb = fb - 2, bad = 0, n = 0;
    uint8_t wire[MAXN * RIFL_FRAME_MAX_BYTES], p1[MAXN * RIFL_PAYLOAD_MAX_BYTES],
        p2[MAXN * RIFL_PAYLOAD_MAX_BYTES];
    rifl_frame_info i1[MAXN], i2[MAXN];
    uint64_t d1 = 0, d2 = 0;
    rifl_frame_reader rd;
    rifl_frame_reader_init(&rd, buf, len, fb);
    char err[200];
    *frames = 0;
    for (int more = 1; more;) {
        unsigned want = (unsigned)rifl_rng_below(g, MAXN + 1);
        for (n = 0; n < want; n++)
            if (rifl_frame_reader_next(&rd, wire + (size_t)n * fb, err, sizeof err) != 1) {
                more = 0;
                break;
            }
        rifl_frame_batch_set_path("portable");
        int rc1 = rifl_frame_decode_batch(wire, F, n, &d1, p1, i1);
        rifl_frame_batch_set_path(path);
        int rc2 = rifl_frame_decode_batch(wire, F, n, &d2, p2, i2);
        bad += rc1 != rc2 || d1 != d2 || memcmp(p1, p2, (size_t)n * pb) != 0;
        for (unsigned k = 0; k < n; k++)
            bad += !same_info(&i1[k], &i2[k]);
        *frames += n;
    }
    free(buf);
    return bad;
}

static void t_golden_vectors(void)
{
    static const struct { const char *scen; unsigned F; } scen[] = {
        { "rifl256_fid8_clean", 256 },
        { "rifl256_fid8_ber3e-6_fc", 256 },
        { "rifl512_fid7_ber1e-6", 512 },
        { "rifl128_fid6_ber2e-6_fc", 128 },
    };
    for (size_t s = 0; s < sizeof scen / sizeof scen[0]; s++) {
        struct golden v;
        REQUIRE(load_golden(scen[s].scen, scen[s].F, &v) == 0);
        for (unsigned pi = 0; rifl_frame_batch_path_name(pi); pi++) {
            const char *path = rifl_frame_batch_path_name(pi);
            if (!use_path(path))
                continue;
            rifl_rng g;
            rifl_rng_seed(&g, test_seed + s);
            unsigned bad = golden_on_path(&v, &g), rx;
            printf("  %s on %s: %u frames, %u mismatches\n", path, scen[s].scen, v.n, bad);
            CHECK_EQ_U(bad, 0);
            bad = received_on_path(scen[s].scen, scen[s].F, path, &g, &rx);
            printf("  %s on %s, frames received: %u, %u differences from portable\n", path,
                   scen[s].scen, rx, bad);
            CHECK_EQ_U(bad, 0);
            CHECK(rx > 1000);
        }
        free_golden(&v);
    }
    rifl_frame_batch_set_path(NULL);
}

/* Batches whose payloads, input or output, end where a page the process may
 * not touch begins: no path reads or writes a byte past them (the vector
 * paths move rows of the payloads in whole words where the next row
 * follows). */
static void t_batch_buffer_ends(void)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t span = (size_t)page * 4;
    uint8_t *map = mmap(NULL, span + (size_t)page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(map != MAP_FAILED);
    REQUIRE(mprotect(map + span, (size_t)page, PROT_NONE) == 0);
    static uint8_t wire[MAXN * 256], ref[MAXN * 256], syn[MAXN], meta[MAXN];
    static uint16_t ids[MAXN];
    static rifl_frame_info info[MAXN];
    uint64_t odd[1];
    memset(syn, RIFL_SYN_DATA, sizeof syn);
    memset(meta, RIFL_META_FULL, sizeof meta);
    unsigned runs = 0;
    for (unsigned pi = 0; rifl_frame_batch_path_name(pi); pi++) {
        const char *path = rifl_frame_batch_path_name(pi);
        if (rifl_frame_batch_path_check(path, NULL, 0) != RIFL_OK)
            continue;
        for (unsigned wi = 0; wi < 6; wi++)
            for (unsigned n = 1; n <= MAXN; n++) {
                unsigned F = widths[wi], pb = F / 8 - 2;
                uint8_t *pay = map + span - (size_t)n * pb;
                for (size_t j = 0; j < (size_t)n * pb; j++)
                    pay[j] = (uint8_t)(j * 7 + n);
                for (unsigned j = 0; j < n; j++)
                    ids[j] = (uint16_t)j;
                uint64_t s = 5, r = 5, d = 5;
                rifl_frame_batch_set_path("portable");
                rifl_frame_encode_batch(ref, F, n, syn, meta, pay, ids, &r);
                rifl_frame_batch_set_path(path);
                CHECK_EQ_I(rifl_frame_encode_batch(wire, F, n, syn, meta, pay, ids, &s), RIFL_OK);
                CHECK(memcmp(wire, ref, (size_t)n * F / 8) == 0 && s == r);
                /* decoded into the same place, after the page's end moved */
                memset(pay, 0, (size_t)n * pb);
                CHECK_EQ_I(rifl_frame_decode_verify(wire, F, n, &d, ids, pay, odd, info), 0);
                for (size_t j = 0; j < (size_t)n * pb; j++)
                    if (pay[j] != (uint8_t)(j * 7 + n)) {
                        CHECK(!"decoded payload differs");
                        break;
                    }
                runs++;
            }
    }
    rifl_frame_batch_set_path(NULL);
    printf("  %u batches ending at a page's end\n", runs);
    munmap(map, span + (size_t)page);
}

TEST_MAIN({ "path_api", t_path_api },
          { "batch_buffer_ends", t_batch_buffer_ends },
          { "random_batches", t_random_batches },
          { "compare_catches", t_compare_catches },
          { "golden_vectors", t_golden_vectors })

/* The switch: Batcher-Banyan fabric model, iSLIP properties, VOQs with
 * per-VOQ flow control, SAFC, drops and sizing checks. */
#include "testlib.h"

#include <limits.h>

#include "rifl/rng.h"
#include "rifl/switch.h"

static void shuffle(rifl_rng *r, int16_t *a, unsigned n)
{
    for (unsigned k = n; k > 1; k--) {
        unsigned j = (unsigned)rifl_rng_below(r, k);
        int16_t t = a[k - 1];
        a[k - 1] = a[j];
        a[j] = t;
    }
}

/* Unique destinations (random partial permutations, any port count) never
 * collide and every cell reaches its output. */
static void t_fabric_permutations(void)
{
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed ^ 0xfab);
    unsigned sizes[] = { 2, 3, 5, 8, 17, 32, 64, 100, 256 };
    unsigned rounds = test_long_run ? 20000 : 2000;
    unsigned coll = 0, misdelivered = 0, routed = 0;
    for (unsigned s = 0; s < 9; s++) {
        unsigned N = sizes[s];
        rifl_fabric *f;
        {
            int req_rc_ = rifl_fabric_create(N, &f);
            REQUIRE(req_rc_ == RIFL_OK);
        }
        int16_t perm[256], dest[256], at[256];
        for (unsigned r = 0; r < rounds; r++) {
            for (unsigned i = 0; i < N; i++)
                perm[i] = (int16_t)i;
            shuffle(&rng, perm, N);
            double fill = rifl_rng_double(&rng);
            for (unsigned i = 0; i < N; i++)
                dest[i] = rifl_rng_double(&rng) < fill ? perm[i] : -1;
            coll += rifl_fabric_route(f, dest, at, true);
            for (unsigned i = 0; i < N; i++)
                if (dest[i] >= 0) {
                    routed++;
                    if (at[dest[i]] != (int16_t)i)
                        misdelivered++;
                }
        }
        rifl_fabric_free(f);
    }
    CHECK_EQ_U(coll, 0);
    CHECK_EQ_U(misdelivered, 0);
    CHECK(routed > 1000);
}

/* Any set with a repeated destination is detected. */
static void t_fabric_duplicates_detected(void)
{
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed ^ 0xd0b);
    unsigned rounds = test_long_run ? 20000 : 3000, missed = 0;
    for (unsigned N = 2; N <= 64; N = N * 2 + 1) {
        rifl_fabric *f;
        {
            int req_rc_ = rifl_fabric_create(N, &f);
            REQUIRE(req_rc_ == RIFL_OK);
        }
        int16_t dest[256], at[256];
        for (unsigned r = 0; r < rounds; r++) {
            for (unsigned i = 0; i < N; i++)
                dest[i] = rifl_rng_chance(&rng, 0.5) ? (int16_t)rifl_rng_below(&rng, N) : -1;
            unsigned a = (unsigned)rifl_rng_below(&rng, N), b;
            do
                b = (unsigned)rifl_rng_below(&rng, N);
            while (b == a);
            dest[a] = dest[b] = (int16_t)rifl_rng_below(&rng, N);
            if (rifl_fabric_route(f, dest, at, true) == 0)
                missed++;
        }
        rifl_fabric_free(f);
    }
    CHECK_EQ_U(missed, 0);
}

/* The sorter matters: without it the banyan blocks some permutations. */
static void t_fabric_needs_sorter(void)
{
    rifl_fabric *f;
    {
        int req_rc_ = rifl_fabric_create(8, &f);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    int16_t at[8];
    /* 0->0 and 4->1 share the first-stage element in an omega banyan */
    int16_t dest[8] = { 0, -1, -1, -1, 1, -1, -1, -1 };
    CHECK(rifl_fabric_route(f, dest, at, false) > 0);
    CHECK_EQ_U(rifl_fabric_route(f, dest, at, true), 0);
    CHECK_EQ_I(at[0], 0);
    CHECK_EQ_I(at[1], 4);
    rifl_fabric_free(f);
}

/* rifl_fabric_check gives what the full model gives, collisions and
 * placement, for every destination vector of small fabrics (idle lines,
 * distinct and repeated destinations) and random ones of larger fabrics;
 * a repeated destination is still reported as a collision. */
static unsigned check_vs_model(rifl_fabric *f, const int16_t *dest, unsigned N,
                               unsigned *dup_missed)
{
    int16_t at_model[256], at_check[256];
    unsigned want = rifl_fabric_route(f, dest, at_model, true);
    unsigned got = rifl_fabric_check(f, dest, at_check);
    unsigned bad = got != want;
    for (unsigned o = 0; o < N; o++)
        bad += at_model[o] != at_check[o];
    uint8_t seen[256] = { 0 };
    int dup = 0;
    for (unsigned i = 0; i < N; i++)
        if (dest[i] >= 0)
            dup |= seen[dest[i]]++ > 0;
    if (dup && got == 0)
        (*dup_missed)++;
    return bad;
}

static void t_fabric_check_agrees(void)
{
    unsigned bad = 0, dup_missed = 0, vectors = 0;
    for (unsigned N = 2; N <= (test_long_run ? 7u : 6u); N++) {
        rifl_fabric *f;
        {
            int req_rc_ = rifl_fabric_create(N, &f);
            REQUIRE(req_rc_ == RIFL_OK);
        }
        int16_t dest[8];
        for (unsigned i = 0; i < N; i++)
            dest[i] = -1;
        for (;;) { /* every vector in {-1..N-1}^N, as an odometer */
            bad += check_vs_model(f, dest, N, &dup_missed);
            vectors++;
            unsigned k = 0;
            while (k < N && dest[k] == (int16_t)(N - 1))
                dest[k++] = -1;
            if (k == N)
                break;
            dest[k]++;
        }
        rifl_fabric_free(f);
    }
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed ^ 0xc4ec);
    unsigned sizes[] = { 8, 17, 32, 64, 100, 255, 256 };
    for (unsigned s = 0; s < 7; s++) {
        unsigned N = sizes[s];
        rifl_fabric *f;
        {
            int req_rc_ = rifl_fabric_create(N, &f);
            REQUIRE(req_rc_ == RIFL_OK);
        }
        int16_t perm[256], dest[256];
        for (unsigned r = 0; r < 1000; r++) {
            for (unsigned i = 0; i < N; i++)
                perm[i] = (int16_t)i;
            shuffle(&rng, perm, N);
            double fill = rifl_rng_double(&rng);
            for (unsigned i = 0; i < N; i++)
                dest[i] = rifl_rng_double(&rng) < fill ? perm[i] : -1;
            if (r & 1) /* odd rounds: one destination repeated */
                dest[rifl_rng_below(&rng, N)] = (int16_t)rifl_rng_below(&rng, N);
            bad += check_vs_model(f, dest, N, &dup_missed);
            vectors++;
        }
        rifl_fabric_free(f);
    }
    CHECK_EQ_U(bad, 0);
    CHECK_EQ_U(dup_missed, 0);
    CHECK(vectors > 100000);
    /* a repeated destination: two cells for output 2 */
    rifl_fabric *f;
    {
        int req_rc_ = rifl_fabric_create(4, &f);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    int16_t dest[4] = { 2, -1, 2, 0 }, at[4];
    CHECK(rifl_fabric_check(f, dest, at) > 0);
    rifl_fabric_free(f);
}

static int valid_matching(const int16_t *match, unsigned n, const uint8_t *req)
{
    uint8_t used[256] = { 0 };
    for (unsigned i = 0; i < n; i++) {
        int o = match[i];
        if (o < 0)
            continue;
        if ((unsigned)o >= n || used[o] || !req[i * n + (unsigned)o])
            return 0;
        used[o] = 1;
    }
    return 1;
}

/* Random request matrices: every matching is valid, and it is maximal after
 * N iterations (no unmatched input requests an unmatched output). */
static void t_islip_valid_matching(void)
{
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed ^ 0x15);
    unsigned bad = 0, nonmax = 0, runs = 0;
    static uint8_t req[64 * 64];
    int16_t match[64];
    unsigned sizes[] = { 2, 7, 32, 64 };
    for (unsigned s = 0; s < 4; s++) {
        unsigned N = sizes[s];
        for (unsigned iters = 1; iters <= 4; iters++) {
            unsigned it = iters == 4 || iters > N ? N : iters;
            rifl_islip *is;
            {
                int req_rc_ = rifl_islip_create(N, it, &is);
                REQUIRE(req_rc_ == RIFL_OK);
            }
            for (unsigned r = 0; r < 300; r++) {
                double p = rifl_rng_double(&rng);
                rifl_islip_clear_requests(is);
                for (unsigned k = 0; k < N * N; k++) {
                    req[k] = rifl_rng_chance(&rng, p);
                    if (req[k])
                        rifl_islip_request(is, k / N, k % N, true);
                }
                unsigned m = rifl_islip_run(is, match, NULL);
                unsigned cnt = 0;
                for (unsigned i = 0; i < N; i++)
                    cnt += match[i] >= 0;
                if (cnt != m || !valid_matching(match, N, req))
                    bad++;
                if (it == N) {
                    uint8_t out_used[64] = { 0 };
                    for (unsigned i = 0; i < N; i++)
                        if (match[i] >= 0)
                            out_used[match[i]] = 1;
                    for (unsigned i = 0; i < N; i++)
                        for (unsigned o = 0; o < N; o++)
                            if (match[i] < 0 && !out_used[o] && req[i * N + o])
                                nonmax++;
                }
                runs++;
            }
            rifl_islip_free(is);
        }
    }
    CHECK_EQ_U(bad, 0);
    CHECK_EQ_U(nonmax, 0);
    CHECK(runs > 1000);
}

/* Pointers move only on first-iteration accepts (McKeown's rule): a grant
 * accepted in iteration 2 leaves the output's pointer where it was. */
static void t_islip_pointer_rule(void)
{
    rifl_islip *is;
    {
        int req_rc_ = rifl_islip_create(4, 2, &is);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    int16_t match[4];
    unsigned per_iter[2];
    /* inputs 0 and 1 both request outputs 0 and 1; all pointers at 0, so
     * both outputs grant input 0, it accepts output 0, output 1 goes
     * unmatched in iteration 1 and grants input 1 in iteration 2 */
    rifl_islip_request(is, 0, 0, true);
    rifl_islip_request(is, 0, 1, true);
    rifl_islip_request(is, 1, 0, true);
    rifl_islip_request(is, 1, 1, true);
    CHECK_EQ_U(rifl_islip_run(is, match, per_iter), 2);
    CHECK_EQ_I(match[0], 0);
    CHECK_EQ_I(match[1], 1);
    CHECK_EQ_U(per_iter[0], 1);
    CHECK_EQ_U(per_iter[1], 1);
    CHECK_EQ_U(rifl_islip_grant_ptr(is, 0), 1);  /* one past input 0 */
    CHECK_EQ_U(rifl_islip_accept_ptr(is, 0), 1); /* one past output 0 */
    CHECK_EQ_U(rifl_islip_grant_ptr(is, 1), 0);  /* iteration-2 accept: unchanged */
    CHECK_EQ_U(rifl_islip_accept_ptr(is, 1), 0);
    /* next slot the pointers have desynchronised: a full match at once */
    CHECK_EQ_U(rifl_islip_run(is, match, per_iter), 2);
    CHECK_EQ_U(per_iter[0], 2);
    /* ports that do not exist are refused, not written */
    CHECK_EQ_I(rifl_islip_request(is, 4, 0, true), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_islip_request(is, 0, 4, true), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_islip_request(NULL, 0, 0, true), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_U(rifl_islip_grant_ptr(is, 4), UINT_MAX);
    CHECK_EQ_U(rifl_islip_accept_ptr(is, 9), UINT_MAX);
    rifl_islip_free(is);
}

/* One iteration, every VOQ always backlogged: the pointers desynchronise and
 * the switch reaches 100% throughput; every input-output pair is served
 * equally (no starvation). */
static void t_islip_desync_full_load(void)
{
    const unsigned N = 16;
    rifl_islip *is;
    {
        int req_rc_ = rifl_islip_create(N, 1, &is);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    for (unsigned i = 0; i < N; i++)
        for (unsigned o = 0; o < N; o++)
            rifl_islip_request(is, i, o, true);
    int16_t match[16];
    static unsigned served[16][16];
    memset(served, 0, sizeof served);
    unsigned late_full = 0, slots = 4000, warm = 2 * N;
    for (unsigned t = 0; t < slots; t++) {
        unsigned m = rifl_islip_run(is, match, NULL);
        if (t >= warm && m == N)
            late_full++;
        for (unsigned i = 0; i < N; i++)
            if (match[i] >= 0)
                served[i][match[i]]++;
    }
    CHECK_EQ_U(late_full, slots - warm);
    unsigned mn = ~0u, mx = 0;
    for (unsigned i = 0; i < N; i++)
        for (unsigned o = 0; o < N; o++) {
            if (served[i][o] < mn) mn = served[i][o];
            if (served[i][o] > mx) mx = served[i][o];
        }
    CHECK(mn > 0);
    CHECK_MSG(mx - mn <= 2, "served min %u max %u", mn, mx);
    rifl_islip_free(is);
}

/* Non-uniform persistent requests: no request waits more than N^2 slots
 * (iSLIP's starvation freedom). */
static void t_islip_no_starvation(void)
{
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed ^ 0x577);
    const unsigned N = 8;
    rifl_islip *is;
    {
        int req_rc_ = rifl_islip_create(N, 3, &is);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    uint8_t req[64];
    unsigned wait[64] = { 0 }, worst = 0;
    for (unsigned k = 0; k < N * N; k++) {
        req[k] = rifl_rng_chance(&rng, 0.6);
        if (k % (N + 1) == 0)
            req[k] = 1; /* every port has at least one request */
        if (req[k])
            rifl_islip_request(is, k / N, k % N, true);
    }
    int16_t match[8];
    for (unsigned t = 0; t < 5000; t++) {
        rifl_islip_run(is, match, NULL);
        for (unsigned k = 0; k < N * N; k++) {
            if (!req[k])
                continue;
            if (match[k / N] == (int16_t)(k % N))
                wait[k] = 0;
            else if (++wait[k] > worst)
                worst = wait[k];
        }
    }
    CHECK_MSG(worst <= N * N, "worst wait %u slots", worst);
    rifl_islip_free(is);
}

/* iSLIP as McKeown describes it, on a request matrix, one port at a time:
 * the matching and the pointers the bit-set scheduler must find. */
static void islip_plain(unsigned N, unsigned iters, const uint8_t *req, uint16_t *gptr,
                        uint16_t *aptr, int16_t *match)
{
    uint8_t in_free[256], out_free[256];
    int16_t grant[256];
    for (unsigned k = 0; k < N; k++) {
        in_free[k] = out_free[k] = 1;
        match[k] = -1;
    }
    for (unsigned it = 0; it < iters; it++) {
        for (unsigned o = 0; o < N; o++) {
            grant[o] = -1;
            for (unsigned k = 0; out_free[o] && k < N && grant[o] < 0; k++) {
                unsigned i = (gptr[o] + k) % N;
                if (in_free[i] && req[i * N + o])
                    grant[o] = (int16_t)i;
            }
        }
        for (unsigned i = 0; i < N; i++) {
            for (unsigned k = 0; k < N; k++) {
                unsigned o = (aptr[i] + k) % N;
                if (grant[o] == (int16_t)i) {
                    match[i] = (int16_t)o;
                    in_free[i] = out_free[o] = 0;
                    if (it == 0) {
                        gptr[o] = (uint16_t)((i + 1) % N);
                        aptr[i] = (uint16_t)((o + 1) % N);
                    }
                    break;
                }
            }
        }
    }
}

/* The scheduler against islip_plain over runs of random requests, on one
 * to four words of ports (the round-robin search over several words has
 * its own code), sparse and dense: same matchings, same pointers. */
static void t_islip_matches_plain(void)
{
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed ^ 0x5119);
    static uint8_t req[256 * 256];
    static const unsigned sizes[] = { 5, 63, 64, 65, 100, 128, 130, 192, 200, 255, 256 };
    unsigned bad = 0, ptr_bad = 0, runs = 0;
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const unsigned N = sizes[s];
        const unsigned iters = 1 + (unsigned)rifl_rng_below(&rng, 4);
        rifl_islip *is;
        {
            int req_rc_ = rifl_islip_create(N, iters, &is);
            REQUIRE(req_rc_ == RIFL_OK);
        }
        uint16_t gptr[256] = { 0 }, aptr[256] = { 0 };
        int16_t got[256], want[256];
        for (unsigned r = 0; r < (test_long_run ? 400u : 60u); r++) {
            /* from a few requests per row to most of them */
            double p = r % 3 == 0 ? 2.0 / N : rifl_rng_double(&rng);
            rifl_islip_clear_requests(is);
            for (unsigned k = 0; k < N * N; k++) {
                req[k] = rifl_rng_chance(&rng, p);
                if (req[k])
                    rifl_islip_request(is, k / N, k % N, true);
            }
            rifl_islip_run(is, got, NULL);
            islip_plain(N, iters, req, gptr, aptr, want);
            for (unsigned k = 0; k < N; k++) {
                bad += got[k] != want[k];
                ptr_bad += rifl_islip_grant_ptr(is, k) != gptr[k] ||
                           rifl_islip_accept_ptr(is, k) != aptr[k];
            }
            runs++;
        }
        rifl_islip_free(is);
    }
    CHECK_EQ_U(bad, 0);
    CHECK_EQ_U(ptr_bad, 0);
    CHECK(runs >= 600);
}

static rifl_cell mkcell(unsigned nports, unsigned in, unsigned out, unsigned src,
                        uint32_t seq)
{
    rifl_cell c;
    memset(&c, 0, sizeof c);
    uint8_t r = (uint8_t)rifl_l2_rel_port(nports, in, out);
    rifl_l2_hdr_make(&c.hdr, &r, 1);
    c.src = (uint16_t)src;
    c.dst = (uint16_t)out;
    c.seq = seq;
    c.bytes = 256;
    return c;
}

/* A held output is left out of scheduling under both schedulers: its cells
 * wait, other outputs go on, and released it takes its cells in order. */
static void t_hold_output(void)
{
    for (int sched = 0; sched < 2; sched++) {
        rifl_switch_config c = rifl_switch_default_config;
        c.nports = 70; /* more than one word of outputs */
        c.scheduler = sched ? RIFL_SCHED_SAFC : RIFL_SCHED_ISLIP;
        rifl_switch *sw = NULL;
        char err[256];
        REQUIRE(rifl_switch_create(&c, &sw, err, sizeof err) == RIFL_OK);
        CHECK_EQ_I(rifl_switch_hold_output(sw, 70, true), RIFL_ERR_INVALID_ARG);
        REQUIRE(rifl_switch_hold_output(sw, 66, true) == RIFL_OK);
        uint64_t now = 0;
        for (uint32_t k = 0; k < 3; k++) {
            rifl_cell a = mkcell(70, 1, 66, 1, k), b = mkcell(70, 2, 5, 2, k);
            CHECK_EQ_I(rifl_switch_input(sw, 1, &a, now), RIFL_SW_STORED);
            CHECK_EQ_I(rifl_switch_input(sw, 2, &b, now), RIFL_SW_STORED);
            now++;
        }
        rifl_cell out[70];
        uint8_t ov[70];
        unsigned to66 = 0, to5 = 0;
        for (unsigned k = 0; k < 6; k++, now++) {
            REQUIRE(rifl_switch_step(sw, now, out, ov, NULL, NULL) >= 0);
            to66 += ov[66];
            to5 += ov[5];
        }
        CHECK_EQ_U(to66, 0);
        CHECK_EQ_U(to5, 3);
        CHECK_EQ_U(rifl_switch_voq_len(sw, 1, 66), 3);
        rifl_switch_stats st;
        rifl_switch_get_stats(sw, &st);
        CHECK(st.held_outputs >= 6);
        REQUIRE(rifl_switch_hold_output(sw, 66, false) == RIFL_OK);
        uint32_t next = 0;
        for (unsigned k = 0; k < 6; k++, now++) {
            REQUIRE(rifl_switch_step(sw, now, out, ov, NULL, NULL) >= 0);
            if (ov[66])
                CHECK_EQ_U(out[66].seq, next++);
        }
        CHECK_EQ_U(next, 3);
        rifl_switch_free(sw);
    }
}

/* Blocked virtual lanes, under both schedulers: a VOQ whose head cell is on
 * a VL without credit at its output waits, another VOQ of the same output
 * whose head is on another VL goes, and unblocked the first follows. */
static void t_block_vls(void)
{
    for (int sched = 0; sched < 2; sched++) {
        rifl_switch_config c = rifl_switch_default_config;
        c.nports = 8;
        c.scheduler = sched ? RIFL_SCHED_SAFC : RIFL_SCHED_ISLIP;
        rifl_switch *sw = NULL;
        char err[256];
        REQUIRE(rifl_switch_create(&c, &sw, err, sizeof err) == RIFL_OK);
        CHECK_EQ_I(rifl_switch_block_vls(sw, 8, 1), RIFL_ERR_INVALID_ARG);
        CHECK_EQ_I(rifl_switch_block_vls(sw, 3, 1u << 15), RIFL_ERR_INVALID_ARG);
        REQUIRE(rifl_switch_block_vls(sw, 3, 1u << 2) == RIFL_OK);
        rifl_cell a = mkcell(8, 1, 3, 1, 0), b = mkcell(8, 2, 3, 2, 0);
        a.vl = 2; /* blocked at output 3 */
        b.vl = 0;
        CHECK_EQ_I(rifl_switch_input(sw, 1, &a, 0), RIFL_SW_STORED);
        CHECK_EQ_I(rifl_switch_input(sw, 2, &b, 0), RIFL_SW_STORED);
        rifl_cell out[8];
        uint8_t ov[8];
        uint64_t now = 1;
        unsigned from[3] = { 0, 0, 0 };
        for (unsigned k = 0; k < 4; k++, now++) {
            REQUIRE(rifl_switch_step(sw, now, out, ov, NULL, NULL) >= 0);
            if (ov[3])
                from[out[3].src]++;
        }
        CHECK_EQ_U(from[2], 1);
        CHECK_EQ_U(from[1], 0);
        CHECK_EQ_U(rifl_switch_voq_len(sw, 1, 3), 1);
        rifl_switch_stats st;
        rifl_switch_get_stats(sw, &st);
        CHECK(st.credit_blocked_requests >= 4);
        CHECK_EQ_U(st.fc_blocked_requests, 0);
        REQUIRE(rifl_switch_block_vls(sw, 3, 0) == RIFL_OK);
        REQUIRE(rifl_switch_step(sw, now, out, ov, NULL, NULL) == 1);
        CHECK(ov[3] && out[3].src == 1 && out[3].vl == 2);
        rifl_switch_free(sw);
    }
}

/* rifl_switch_input_row against rifl_switch_input port by port, on two
 * switches given the same cells: unicast cells to every output and, now
 * and then, a broadcast, a misrouted cell, a bad port, bad hop counts and
 * more cells than the VOQs take (no flow control).  Same verdicts in the
 * counters, same VOQs, same cells and flow control out.  The switches
 * without flow control take broadcast; those with it are too small for
 * broadcast and drop broadcast cells as invalid. */
static void t_input_row_as_input(void)
{
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed ^ 0x1a0);
    static const unsigned sizes[] = { 2, 7, 8, 32, 65, 256 };
    unsigned diff = 0, cells = 0;
    for (unsigned z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        const unsigned N = sizes[z];
        rifl_switch_config c = rifl_switch_default_config;
        c.nports = N;
        c.iterations = N < 3 ? N : 3;
        c.voq_cells = 4; /* small, to overflow (flow control is not obeyed) */
        c.rtt_slots = 2;
        c.flow_control = z % 2 == 0;
        c.broadcast = !c.flow_control;
        rifl_switch *a, *b;
        char err[200];
        {
            int req_rc_ = rifl_switch_create(&c, &a, err, sizeof err);
            REQUIRE(req_rc_ == RIFL_OK);
        }
        {
            int req_rc_ = rifl_switch_create(&c, &b, err, sizeof err);
            REQUIRE(req_rc_ == RIFL_OK);
        }
        static rifl_cell in[256], oa[256], ob[256];
        static uint8_t iv[256], va[256], vb[256], fva[256], fvb[256];
        static rifl_l2_fc fa[256], fb[256];
        for (uint64_t t = 0; t < 300; t++) {
            /* busy slots, idle ones, and runs to one output that overflow */
            double load = t % 50 < 10 ? 0.05 : 0.95;
            unsigned hot = (unsigned)rifl_rng_below(&rng, N);
            for (unsigned p = 0; p < N; p++) {
                iv[p] = (uint8_t)(rifl_rng_chance(&rng, load) ? 1 + rifl_rng_below(&rng, 3) : 0);
                unsigned o = t % 50 >= 40 && p != hot ? hot : (unsigned)rifl_rng_below(&rng, N);
                if (o == p)
                    o = (o + 1) % N;
                in[p] = mkcell(N, p, o, p, (uint32_t)t);
                in[p].stamp = t;
                switch (rifl_rng_below(&rng, 40)) {
                case 0: in[p].hdr.b[1] = RIFL_L2_BROADCAST; break;
                case 1: rifl_l2_set_remain_hops(&in[p].hdr, 0); break;
                case 2: in[p].hdr.b[1] = (uint8_t)(N - 1); break; /* past the last port */
                case 3: rifl_l2_set_total_hops(&in[p].hdr, 6); break;
                case 4: rifl_l2_set_remain_hops(&in[p].hdr, 3); break; /* above total */
                default: break;
                }
                if (iv[p]) {
                    rifl_switch_input(a, p, &in[p], t);
                    cells++;
                }
            }
            CHECK_EQ_I(rifl_switch_input_row(b, in, iv, t), RIFL_OK);
            int ma = rifl_switch_step(a, t, oa, va, fa, fva);
            int mb = rifl_switch_step(b, t, ob, vb, fb, fvb);
            diff += ma != mb;
            for (unsigned p = 0; p < N; p++) {
                diff += va[p] != vb[p] || fva[p] != fvb[p];
                if (va[p] && vb[p])
                    diff += memcmp(&oa[p], &ob[p], sizeof oa[p]) != 0;
                if (fva[p] && fvb[p])
                    diff += memcmp(&fa[p], &fb[p], sizeof fa[p]) != 0;
            }
        }
        for (unsigned i = 0; i < N; i++)
            for (unsigned o = 0; o < N; o++)
                diff += rifl_switch_voq_len(a, i, o) != rifl_switch_voq_len(b, i, o);
        rifl_switch_stats sa, sb;
        rifl_switch_get_stats(a, &sa);
        rifl_switch_get_stats(b, &sb);
        diff += memcmp(&sa, &sb, sizeof sa) != 0;
        CHECK(sa.drop_misrouted > 0 && sa.drop_invalid > 0);
        CHECK((sa.broadcasts > 0) == c.broadcast);
        CHECK(N == 2 || sa.drop_overflow > 0); /* 2 ports: a VOQ per output */
        rifl_switch_free(a);
        rifl_switch_free(b);
    }
    CHECK_EQ_U(diff, 0);
    CHECK(cells > 10000);
    CHECK_EQ_I(rifl_switch_input_row(NULL, NULL, NULL, 0), RIFL_ERR_INVALID_ARG);
}

/* Bad arguments get the documented neutral answer, never a crash: a NULL
 * switch, iSLIP or fabric, NULL arrays, ports that do not exist. */
static void t_bad_arguments(void)
{
    rifl_switch_config c = rifl_switch_default_config;
    c.nports = 4;
    c.iterations = 2;
    rifl_switch *sw = NULL;
    char err[200];
    {
        int req_rc_ = rifl_switch_create(&c, &sw, err, sizeof err);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    CHECK(rifl_switch_get_config(NULL) == NULL);
    CHECK(rifl_switch_get_config(sw) != NULL && rifl_switch_get_config(sw)->nports == 4);
    rifl_cell x = mkcell(4, 0, 2, 0, 0);
    CHECK_EQ_I(rifl_switch_input(sw, 0, &x, 0), RIFL_SW_STORED);
    CHECK_EQ_U(rifl_switch_voq_len(sw, 0, 2), 1);
    CHECK_EQ_U(rifl_switch_voq_len(NULL, 0, 2), 0);
    CHECK_EQ_U(rifl_switch_voq_len(sw, 4, 2), 0);
    CHECK_EQ_U(rifl_switch_voq_len(sw, 0, 4), 0);
    CHECK_EQ_U(rifl_switch_voq_len(sw, UINT_MAX, UINT_MAX), 0);
    CHECK_EQ_U(rifl_switch_cells_held(NULL), 0);
    rifl_switch_free(sw);

    /* iSLIP: a load with anything NULL leaves the requests as they were */
    rifl_islip *is = NULL;
    REQUIRE(rifl_islip_create(4, 1, &is) == RIFL_OK);
    REQUIRE(rifl_islip_request(is, 0, 1, true) == RIFL_OK);
    uint64_t all[4] = { 0xf, 0xf, 0xf, 0xf };
    rifl_islip_load(NULL, all, all);
    rifl_islip_load(is, NULL, all);
    rifl_islip_load(is, all, NULL);
    rifl_islip_load(is, NULL, NULL);
    int16_t match[4];
    CHECK_EQ_U(rifl_islip_run(is, match, NULL), 1);
    CHECK_EQ_I(match[0], 1);
    CHECK_EQ_I(match[1], -1);
    rifl_islip_free(is);

    /* fabric check: 0 collisions and nothing written, as rifl_fabric_route */
    rifl_fabric *f = NULL;
    REQUIRE(rifl_fabric_create(4, &f) == RIFL_OK);
    int16_t dest[4] = { 1, 1, 2, -1 }, at[4] = { 7, 7, 7, 7 };
    CHECK_EQ_U(rifl_fabric_check(NULL, dest, at), 0);
    CHECK_EQ_U(rifl_fabric_check(f, NULL, at), 0);
    CHECK_EQ_U(rifl_fabric_check(f, dest, NULL), 0);
    for (unsigned o = 0; o < 4; o++)
        CHECK_EQ_I(at[o], 7);
    CHECK_EQ_U(rifl_fabric_route(NULL, dest, at, true), 0);
    CHECK_EQ_U(rifl_fabric_route(f, NULL, at, true), 0);
    /* and with good arguments the duplicate is still found */
    CHECK(rifl_fabric_check(f, dest, at) > 0);
    rifl_fabric_free(f);
}

static void t_sizing_rule(void)
{
    char err[256];
    rifl_switch_config c = rifl_switch_default_config;
    CHECK_EQ_I(rifl_switch_config_check(&c, err, sizeof err), RIFL_OK);
    CHECK_EQ_U(c.fc_on, c.voq_cells - c.rtt_slots);
    c = rifl_switch_default_config;
    c.voq_cells = rifl_switch_min_voq_cells(c.rtt_slots) - 1;
    CHECK_EQ_I(rifl_switch_config_check(&c, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "1.5 round trips") != NULL);
    c = rifl_switch_default_config;
    c.fc_on = c.voq_cells - c.rtt_slots + 1;
    CHECK_EQ_I(rifl_switch_config_check(&c, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "fc-on") != NULL);
    /* (a threshold near UINT_MAX does not wrap the sum past the check) */
    c = rifl_switch_default_config;
    c.fc_on = UINT_MAX - 5;
    CHECK_EQ_I(rifl_switch_config_check(&c, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "fc-on") != NULL);
    CHECK_EQ_U(rifl_switch_min_voq_cells(UINT_MAX), UINT_MAX);
    c = rifl_switch_default_config;
    c.fc_on = 5;
    c.fc_off = 5;
    CHECK_EQ_I(rifl_switch_config_check(&c, err, sizeof err), RIFL_ERR_CONFIG);
    c = rifl_switch_default_config;
    c.nports = 257;
    CHECK_EQ_I(rifl_switch_config_check(&c, err, sizeof err), RIFL_ERR_CONFIG);
    c = rifl_switch_default_config;
    c.iterations = 0;
    CHECK_EQ_I(rifl_switch_config_check(&c, err, sizeof err), RIFL_ERR_CONFIG);
    rifl_switch *sw = NULL;
    c = rifl_switch_default_config;
    c.voq_cells = 3;
    CHECK_EQ_I(rifl_switch_create(&c, &sw, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(sw == NULL);
    /* broadcast: N - 2 cells more, for the ONs that wait behind the others */
    CHECK_EQ_U(rifl_switch_broadcast_room(32), 30);
    CHECK_EQ_U(rifl_switch_broadcast_room(2), 0);
    c = rifl_switch_default_config;
    c.broadcast = true;
    CHECK_EQ_I(rifl_switch_config_check(&c, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "unsafe with broadcast") != NULL);
    CHECK(strstr(err, "raise voq-cells to 57") != NULL);
    c = rifl_switch_default_config;
    c.broadcast = true;
    c.voq_cells = 56;
    CHECK_EQ_I(rifl_switch_config_check(&c, err, sizeof err), RIFL_ERR_CONFIG);
    c.voq_cells = 57;
    CHECK_EQ_I(rifl_switch_config_check(&c, err, sizeof err), RIFL_OK);
    CHECK_EQ_U(c.fc_on, 57 - 18 - 30);
    c = rifl_switch_default_config;
    c.broadcast = true;
    c.voq_cells = 57;
    c.fc_on = 10;
    CHECK_EQ_I(rifl_switch_config_check(&c, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "fc-on = 10 is unsafe with broadcast") != NULL);
    /* without flow control nothing is promised: any size will do */
    c = rifl_switch_default_config;
    c.broadcast = true;
    c.flow_control = false;
    c.voq_cells = 4;
    CHECK_EQ_I(rifl_switch_config_check(&c, err, sizeof err), RIFL_OK);
}

/* A broadcast cell that makes every VOQ of its input pass the ON threshold
 * at once: the ONs leave one per slot, each queue's once, so the last
 * leaves N - 2 slots after the first; the VOQ of the last, sized by the
 * rule, takes every cell a sender may send it until it hears its ON (and
 * is full then: the rule leaves no cell to spare). */
static void t_broadcast_ons(void)
{
    const unsigned N = 8;
    rifl_switch_config c = rifl_switch_default_config;
    c.nports = N;
    c.broadcast = true;
    c.voq_cells = rifl_switch_min_voq_cells(c.rtt_slots) + rifl_switch_broadcast_room(N);
    rifl_switch *sw;
    char err[300];
    {
        int req_rc_ = rifl_switch_create(&c, &sw, err, sizeof err);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    const rifl_switch_config *got = rifl_switch_get_config(sw);
    for (unsigned o = 0; o < N; o++)
        REQUIRE(rifl_switch_hold_output(sw, o, true) == RIFL_OK);
    /* input 3: broadcast cells, one a slot, until the ON threshold */
    rifl_cell out[8], x = mkcell(N, 3, 0, 3, 0);
    x.hdr.b[1] = RIFL_L2_BROADCAST;
    uint8_t ov[8], fv[8];
    rifl_l2_fc fc[8];
    uint64_t t = 0, sent_at[8] = { 0 };
    unsigned ons = 0;
    for (; t <= got->fc_on; t++) {
        CHECK_EQ_I(rifl_switch_input(sw, 3, &x, t), RIFL_SW_STORED);
        REQUIRE(rifl_switch_step(sw, t, out, ov, fc, fv) == 0);
        if (fv[3] && fc[3].on_valid) {
            sent_at[fc[3].on_queue] = t;
            ons++;
        }
    }
    const uint64_t first = t - 1;
    /* then unicast to queue 7, the last in the round robin from queue 0,
     * one cell a slot, for the round trip and the slots its ON waited */
    for (unsigned k = 0; k < c.rtt_slots - 1 + rifl_switch_broadcast_room(N); k++, t++) {
        rifl_cell y = mkcell(N, 3, 7, 3, k);
        CHECK_EQ_I(rifl_switch_input(sw, 3, &y, t), RIFL_SW_STORED);
        REQUIRE(rifl_switch_step(sw, t, out, ov, fc, fv) == 0);
        if (fv[3] && fc[3].on_valid) {
            CHECK(sent_at[fc[3].on_queue] == 0);
            sent_at[fc[3].on_queue] = t;
            ons++;
        }
    }
    CHECK_EQ_U(ons, N - 1);
    for (unsigned o = 0; o < N; o++)
        if (o != 3)
            CHECK(sent_at[o] >= first && sent_at[o] <= first + N - 2);
    CHECK_EQ_U(sent_at[7], first + N - 2);
    CHECK_EQ_U(rifl_switch_voq_len(sw, 3, 7), c.voq_cells);
    rifl_switch_stats st;
    rifl_switch_get_stats(sw, &st);
    CHECK_EQ_U(st.drop_overflow, 0);
    CHECK_EQ_U(st.fc_on_sent, N - 1);
    rifl_switch_free(sw);
}

static void t_drop_counters(void)
{
    rifl_switch_config c = rifl_switch_default_config;
    c.nports = 8;
    rifl_switch *sw;
    char err[200];
    /* a switch not made for broadcast drops broadcast cells as invalid */
    {
        int req_rc_ = rifl_switch_create(&c, &sw, err, sizeof err);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    rifl_cell b = mkcell(8, 2, 5, 0, 0);
    b.hdr.b[1] = RIFL_L2_BROADCAST;
    CHECK_EQ_I(rifl_switch_input(sw, 2, &b, 0), RIFL_SW_DROP_INVALID);
    for (unsigned o = 0; o < 8; o++)
        CHECK_EQ_U(rifl_switch_voq_len(sw, 2, o), 0);
    rifl_switch_stats s0;
    rifl_switch_get_stats(sw, &s0);
    CHECK_EQ_U(s0.drop_invalid, 1);
    CHECK_EQ_U(s0.broadcasts, 0);
    rifl_switch_free(sw);
    c.broadcast = true;
    c.voq_cells = rifl_switch_min_voq_cells(c.rtt_slots) + rifl_switch_broadcast_room(8);
    {
        int req_rc_ = rifl_switch_create(&c, &sw, err, sizeof err);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    rifl_cell x = mkcell(8, 2, 5, 0, 0);
    rifl_l2_set_remain_hops(&x.hdr, 0);
    CHECK_EQ_I(rifl_switch_input(sw, 2, &x, 0), RIFL_SW_DROP_MISROUTED);
    x = mkcell(8, 2, 5, 0, 0);
    x.hdr.b[1] = 7; /* j = N - 1 */
    CHECK_EQ_I(rifl_switch_input(sw, 2, &x, 0), RIFL_SW_DROP_INVALID);
    CHECK_EQ_I(rifl_switch_input(sw, 8, &x, 0), RIFL_ERR_INVALID_ARG);
    /* broadcast: a copy in every VOQ but the input's own port */
    x = mkcell(8, 2, 5, 0, 0);
    x.hdr.b[1] = 255;
    CHECK_EQ_I(rifl_switch_input(sw, 2, &x, 0), RIFL_SW_STORED);
    for (unsigned o = 0; o < 8; o++)
        CHECK_EQ_U(rifl_switch_voq_len(sw, 2, o), o == 2 ? 0 : 1);
    rifl_cell out[8];
    uint8_t ov[8];
    unsigned got = 0;
    for (unsigned t = 1; t < 20; t++) {
        rifl_switch_step(sw, t, out, ov, NULL, NULL);
        for (unsigned o = 0; o < 8; o++)
            if (ov[o]) {
                got++;
                /* return index of input 2 seen from o */
                CHECK_EQ_U(out[o].hdr.b[5], o < 2 ? 1 : 2);
                CHECK_EQ_U(rifl_l2_remain_hops(&out[o].hdr), 0);
            }
    }
    CHECK_EQ_U(got, 7);
    /* overflow when the sender ignores flow control */
    unsigned over = 0;
    for (unsigned k = 0; k < c.voq_cells + 3; k++) {
        rifl_cell y = mkcell(8, 1, 4, 1, k);
        if (rifl_switch_input(sw, 1, &y, 100 + k) == RIFL_SW_DROP_OVERFLOW)
            over++;
    }
    CHECK_EQ_U(over, 3);
    rifl_switch_stats st;
    rifl_switch_get_stats(sw, &st);
    CHECK_EQ_U(st.drop_misrouted, 1);
    CHECK_EQ_U(st.drop_invalid, 1);
    CHECK_EQ_U(st.drop_overflow, 3);
    CHECK_EQ_U(st.broadcasts, 1);
    CHECK_EQ_U(st.fabric_collisions, 0);
    CHECK(st.fc_on_sent == 0); /* no step since the overflow */
    rifl_switch_free(sw);
}

/* Hosts around a switch with link delays, overload (every host sends as
 * fast as flow control lets it, hot-spot destinations): no cell lost,
 * duplicated or reordered per pair, every VOQ within its allocation, no
 * fabric collision.  Run for iSLIP and SAFC. */
static void run_overload(rifl_sched sched, unsigned N, unsigned slots, uint64_t seed)
{
    rifl_switch_config c = rifl_switch_default_config;
    c.nports = N;
    c.scheduler = sched;
    const unsigned dup = 9, ddown = 8; /* host->switch, switch->host */
    c.rtt_slots = dup + ddown + 1;
    c.voq_cells = rifl_switch_min_voq_cells(c.rtt_slots);
    rifl_switch *sw;
    char err[256];
    {
        int req_rc_ = rifl_switch_create(&c, &sw, err, sizeof err);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    rifl_rng rng;
    rifl_rng_seed(&rng, seed);
    enum { MAXN = 32, L = 64 };
    static rifl_cell up[MAXN][L], down[MAXN][L];
    static uint8_t upv[MAXN][L], downv[MAXN][L];
    static rifl_l2_fc fcl[MAXN][L];
    static uint8_t fcv[MAXN][L];
    static uint8_t paused[MAXN][MAXN];
    static uint32_t next_seq[MAXN][MAXN], expect[MAXN][MAXN];
    memset(upv, 0, sizeof upv);
    memset(downv, 0, sizeof downv);
    memset(fcv, 0, sizeof fcv);
    memset(paused, 0, sizeof paused);
    memset(next_seq, 0, sizeof next_seq);
    memset(expect, 0, sizeof expect);
    rifl_cell out[MAXN];
    uint8_t ov[MAXN];
    rifl_l2_fc fc[MAXN];
    uint8_t fv[MAXN];
    uint64_t sent = 0, recv = 0, order_err = 0, wrong_dst = 0;
    unsigned quiet = 0;
    for (unsigned t = 0; t < slots + 400000 && quiet < L; t++) {
        quiet = t >= slots && !rifl_switch_cells_held(sw) ? quiet + 1 : 0;
        unsigned k = t % L;
        for (unsigned h = 0; h < N; h++) {
            if (upv[h][k]) {
                rifl_switch_input(sw, h, &up[h][k], t);
                upv[h][k] = 0;
            }
            if (downv[h][k]) {
                rifl_cell *x = &down[h][k];
                if (x->dst != h)
                    wrong_dst++;
                if (x->seq != expect[x->src][h])
                    order_err++;
                expect[x->src][h] = x->seq + 1;
                recv++;
                downv[h][k] = 0;
            }
            if (fcv[h][k]) {
                if (fcl[h][k].on_valid)
                    paused[h][fcl[h][k].on_queue] = 1;
                if (fcl[h][k].off_valid)
                    paused[h][fcl[h][k].off_queue] = 0;
                fcv[h][k] = 0;
            }
        }
        if (t < slots)
            for (unsigned h = 0; h < N; h++) {
                /* 3/4 of the time a hot spot (output 0 or 1), else uniform */
                unsigned d;
                do
                    d = rifl_rng_chance(&rng, 0.75) ? (unsigned)rifl_rng_below(&rng, 2)
                                                   : (unsigned)rifl_rng_below(&rng, N);
                while (d == h);
                if (paused[h][d])
                    continue; /* sender honours flow control */
                rifl_cell x = mkcell(N, h, d, h, next_seq[h][d]++);
                unsigned at = (t + dup) % L;
                up[h][at] = x;
                upv[h][at] = 1;
                sent++;
            }
        rifl_switch_step(sw, t, out, ov, fc, fv);
        for (unsigned o = 0; o < N; o++) {
            if (ov[o]) {
                unsigned at = (t + 1 + ddown) % L;
                down[o][at] = out[o];
                downv[o][at] = 1;
            }
            if (fv[o]) {
                unsigned at = (t + 1 + ddown) % L;
                fcl[o][at] = fc[o];
                fcv[o][at] = 1;
            }
        }
    }
    rifl_switch_stats st;
    rifl_switch_get_stats(sw, &st);
    CHECK_EQ_U(st.drop_overflow, 0);
    CHECK_EQ_U(st.fabric_collisions, 0);
    CHECK_MSG(st.max_voq_cells <= c.voq_cells, "max %llu > %u",
              (unsigned long long)st.max_voq_cells, c.voq_cells);
    CHECK(st.fc_on_sent > 0);   /* overload really happened */
    CHECK(st.fc_off_sent > 0);
    CHECK_EQ_U(recv, sent);
    CHECK_EQ_U(order_err, 0);
    CHECK_EQ_U(wrong_dst, 0);
    CHECK(sent > slots);
    rifl_switch_free(sw);
}

static void t_overload_islip(void)
{
    run_overload(RIFL_SCHED_ISLIP, 16, test_long_run ? 200000 : 20000, test_seed ^ 1);
}

static void t_overload_safc(void)
{
    run_overload(RIFL_SCHED_SAFC, 16, test_long_run ? 200000 : 20000, test_seed ^ 2);
}

/* Flow control from a downstream switch: an ON for downstream queue q holds
 * back exactly the VOQ heads whose next hop is q; the OFF releases them. */
static void t_downstream_flow_control(void)
{
    rifl_switch_config c = rifl_switch_default_config;
    c.nports = 4;
    rifl_switch *sw;
    char err[200];
    {
        int rc = rifl_switch_create(&c, &sw, err, sizeof err);
        REQUIRE(rc == RIFL_OK);
    }
    /* output 3 leads to input 1 of an 8-port switch */
    CHECK_EQ_I(rifl_switch_set_downstream(sw, 3, 8, 1), RIFL_OK);
    CHECK_EQ_I(rifl_switch_set_downstream(sw, 4, 8, 1), RIFL_ERR_INVALID_ARG);
    /* two cells from input 0 to output 3: next hop j=4 (downstream output
     * 5) and j=0 (downstream output 0) */
    uint8_t r1[2] = { 2, 4 }, r2[2] = { 2, 0 };
    rifl_cell a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    rifl_l2_hdr_make(&a.hdr, r1, 2);
    rifl_l2_hdr_make(&b.hdr, r2, 2);
    a.seq = 1;
    b.seq = 2;
    rifl_l2_fc on5 = { true, false, 5, 0 }, off5 = { false, true, 0, 5 };
    CHECK_EQ_I(rifl_switch_fc_receive(sw, 3, &on5), RIFL_OK);
    CHECK_EQ_I(rifl_switch_input(sw, 0, &a, 0), RIFL_SW_STORED);
    CHECK_EQ_I(rifl_switch_input(sw, 2, &b, 0), RIFL_SW_STORED);
    rifl_cell out[4];
    uint8_t ov[4];
    /* only b (next hop not paused) may leave */
    unsigned got_b = 0, got_a = 0;
    for (unsigned t = 1; t < 6; t++) {
        rifl_switch_step(sw, t, out, ov, NULL, NULL);
        if (ov[3] && out[3].seq == 1)
            got_a++;
        if (ov[3] && out[3].seq == 2)
            got_b++;
    }
    CHECK_EQ_U(got_a, 0);
    CHECK_EQ_U(got_b, 1);
    CHECK_EQ_U(rifl_switch_voq_len(sw, 0, 3), 1);
    CHECK_EQ_I(rifl_switch_fc_receive(sw, 3, &off5), RIFL_OK);
    rifl_switch_step(sw, 7, out, ov, NULL, NULL);
    CHECK(ov[3] && out[3].seq == 1);
    CHECK_EQ_U(out[3].hdr.b[1], 4); /* next hop's byte now first */
    rifl_switch_stats st;
    rifl_switch_get_stats(sw, &st);
    CHECK(st.fc_blocked_requests >= 4);
    CHECK_EQ_U(st.fc_on_received, 1);
    CHECK_EQ_U(st.fc_off_received, 1);
    rifl_switch_free(sw);
}

/* Input 0's flow-control notices while its VOQs to outputs 1..3 fill with
 * cells[o] cells (output o held for held[o] slots after they arrive), then
 * drain. */
static void fc_notices(const unsigned cells[4], const unsigned held[4], unsigned *ons,
                       unsigned *offs)
{
    rifl_switch_config c = rifl_switch_default_config;
    c.nports = 4;
    c.fc_on = 4;
    c.fc_off = 2;
    rifl_switch *sw = NULL;
    char err[200];
    *ons = *offs = 0;
    if (rifl_switch_create(&c, &sw, err, sizeof err) != RIFL_OK) {
        CHECK_MSG(false, "%s", err);
        return;
    }
    for (unsigned o = 1; o < 4; o++) {
        REQUIRE(rifl_switch_hold_output(sw, o, held[o] > 0) == RIFL_OK);
        for (unsigned k = 0; k < cells[o]; k++) {
            rifl_cell x = mkcell(4, 0, o, 0, k);
            CHECK_EQ_I(rifl_switch_input(sw, 0, &x, 0), RIFL_SW_STORED);
        }
    }
    rifl_cell out[4];
    uint8_t ov[4], fv[4];
    rifl_l2_fc fc[4];
    for (unsigned t = 1; t < 60; t++) {
        for (unsigned o = 1; o < 4; o++)
            if (held[o] && t == 1 + held[o])
                REQUIRE(rifl_switch_hold_output(sw, o, false) == RIFL_OK);
        rifl_switch_step(sw, t, out, ov, fc, fv);
        if (fv[0]) {
            *ons += fc[0].on_valid;
            *offs += fc[0].off_valid;
            /* a frame carries a notice, or is not sent */
            CHECK_MSG(fc[0].on_valid || fc[0].off_valid, "an empty flow-control frame at %u", t);
        }
    }
    rifl_switch_stats st;
    rifl_switch_get_stats(sw, &st);
    CHECK(st.fc_frames_sent <= st.fc_on_sent + st.fc_off_sent);
    for (unsigned o = 1; o < 4; o++)
        CHECK_EQ_U(rifl_switch_voq_len(sw, 0, o), 0);
    rifl_switch_free(sw);
}

/* Upstream hears of changes only (ON mark 4, OFF mark 2). */
static void t_fc_notices_change_only(void)
{
    unsigned ons, offs;
    /* never up to the ON mark: no OFF on the way down */
    fc_notices((const unsigned[4]){ 0, 3, 0, 0 }, (const unsigned[4]){ 0, 2, 0, 0 }, &ons, &offs);
    CHECK_EQ_U(ons, 0);
    CHECK_EQ_U(offs, 0);
    /* past the ON mark and held: one ON, then one OFF */
    fc_notices((const unsigned[4]){ 0, 8, 0, 0 }, (const unsigned[4]){ 0, 3, 0, 0 }, &ons, &offs);
    CHECK_EQ_U(ons, 1);
    CHECK_EQ_U(offs, 1);
    /* three queues past the ON mark at once (their ONs go one a slot, for 1
     * first): 3 drains to the OFF mark before its ON could go, and neither
     * is sent; 1 and 2, held, get their ON and later their OFF */
    fc_notices((const unsigned[4]){ 0, 5, 5, 5 }, (const unsigned[4]){ 0, 10, 10, 0 }, &ons,
               &offs);
    CHECK_EQ_U(ons, 2);
    CHECK_EQ_U(offs, 2);
}

TEST_MAIN({ "downstream_flow_control", t_downstream_flow_control },
          { "fc_notices_change_only", t_fc_notices_change_only },
          { "hold_output", t_hold_output }, { "block_vls", t_block_vls },
          { "fabric_permutations", t_fabric_permutations },
          { "fabric_duplicates_detected", t_fabric_duplicates_detected },
          { "fabric_needs_sorter", t_fabric_needs_sorter },
          { "fabric_check_agrees", t_fabric_check_agrees },
          { "islip_valid_matching", t_islip_valid_matching },
          { "islip_pointer_rule", t_islip_pointer_rule },
          { "islip_desync_full_load", t_islip_desync_full_load },
          { "islip_no_starvation", t_islip_no_starvation },
          { "islip_matches_plain", t_islip_matches_plain },
          { "sizing_rule", t_sizing_rule }, { "broadcast_ons", t_broadcast_ons },
          { "drop_counters", t_drop_counters },
          { "input_row_as_input", t_input_row_as_input },
          { "bad_arguments", t_bad_arguments },
          { "overload_islip", t_overload_islip }, { "overload_safc", t_overload_safc })

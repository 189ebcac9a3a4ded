/* iSLIP scheduler (McKeown 1999) on bit sets: request, grant, accept,
 * repeated; pointers move only on first-iteration accepts. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/switch.h"
#include "switch_priv.h"

struct rifl_islip {
    unsigned n, words, iterations;
    uint64_t *req;      /* [n][words]: outputs requested by input i */
    uint64_t *reqT;     /* [n][words]: inputs requesting output o */
    uint64_t *grants;   /* [n][words]: outputs granting input i (scratch) */
    uint64_t *free_in;  /* unmatched inputs (scratch) */
    uint64_t *free_out; /* unmatched outputs (scratch) */
    uint64_t *granted_in; /* inputs with a grant (scratch) */
    uint64_t *ones;     /* every port */
    uint16_t *gptr, *aptr;
};

int rifl_islip_create(unsigned nports, unsigned iterations, rifl_islip **out)
{
    if (!out || nports < 2 || nports > RIFL_L2_MAX_PORTS || iterations < 1 ||
        iterations > nports)
        return RIFL_ERR_INVALID_ARG;
    rifl_islip *s = calloc(1, sizeof *s);
    if (!s)
        return RIFL_ERR_NOMEM;
    s->n = nports;
    s->words = BS_WORDS(nports);
    s->iterations = iterations;
    size_t w = (size_t)nports * s->words;
    s->req = calloc(w, sizeof(uint64_t));
    s->reqT = calloc(w, sizeof(uint64_t));
    s->grants = calloc(w, sizeof(uint64_t));
    s->free_in = calloc(s->words, sizeof(uint64_t));
    s->free_out = calloc(s->words, sizeof(uint64_t));
    s->granted_in = calloc(s->words, sizeof(uint64_t));
    s->ones = calloc(s->words, sizeof(uint64_t));
    s->gptr = calloc(nports, sizeof(uint16_t));
    s->aptr = calloc(nports, sizeof(uint16_t));
    if (!s->req || !s->reqT || !s->grants || !s->free_in || !s->free_out || !s->gptr ||
        !s->aptr || !s->granted_in || !s->ones) {
        rifl_islip_free(s);
        return RIFL_ERR_NOMEM;
    }
    for (unsigned i = 0; i < nports; i++)
        bs_set(s->ones, i);
    *out = s;
    return RIFL_OK;
}

void rifl_islip_free(rifl_islip *s)
{
    if (!s)
        return;
    free(s->req);
    free(s->reqT);
    free(s->grants);
    free(s->free_in);
    free(s->free_out);
    free(s->granted_in);
    free(s->ones);
    free(s->gptr);
    free(s->aptr);
    free(s);
}

int rifl_islip_request(rifl_islip *s, unsigned i, unsigned o, bool on)
{
    if (!s || i >= s->n || o >= s->n)
        return RIFL_ERR_INVALID_ARG;
    if (on) {
        bs_set(s->req + (size_t)i * s->words, o);
        bs_set(s->reqT + (size_t)o * s->words, i);
    } else {
        bs_clr(s->req + (size_t)i * s->words, o);
        bs_clr(s->reqT + (size_t)o * s->words, i);
    }
    return RIFL_OK;
}

void rifl_islip_load(rifl_islip *s, const uint64_t *req, const uint64_t *reqT)
{
    if (!s || !req || !reqT)
        return;
    size_t w = (size_t)s->n * s->words;
    memcpy(s->req, req, w * sizeof(uint64_t));
    memcpy(s->reqT, reqT, w * sizeof(uint64_t));
}

void rifl_islip_clear_requests(rifl_islip *s)
{
    if (!s)
        return;
    size_t w = (size_t)s->n * s->words;
    memset(s->req, 0, w * sizeof(uint64_t));
    memset(s->reqT, 0, w * sizeof(uint64_t));
}

unsigned rifl_islip_grant_ptr(const rifl_islip *s, unsigned o)
{
    return s && o < s->n ? s->gptr[o] : UINT_MAX;
}

unsigned rifl_islip_accept_ptr(const rifl_islip *s, unsigned i)
{
    return s && i < s->n ? s->aptr[i] : UINT_MAX;
}

/* First set bit of (a & m) at or after `start`, wrapping round the W words
 * (2 to 4: at most 256 ports), or -1.  Where the bit lies follows the
 * traffic, so it is found without a branch on it: the words are taken in
 * the order of the search, word w0 = start / 64 twice (its bits from
 * `start` on first, those below last), as bits of a mask of the non-empty
 * ones, and the first of those picks the word. */
static inline int rr_first(const uint64_t *a, const uint64_t *m, unsigned W, unsigned start)
{
    /* v[k] and v[k + 4]: word k (0 past the last); v[w0] and v[w0 + 4]
     * then become the two parts of word w0 */
    uint64_t v[8];
    v[0] = v[4] = a[0] & m[0];
    v[1] = v[5] = a[1] & m[1];
    v[2] = v[6] = W > 2 ? a[2] & m[2] : 0;
    v[3] = v[7] = W > 3 ? a[3] & m[3] : 0;
    unsigned nz = (unsigned)(v[0] != 0) | (unsigned)(v[1] != 0) << 1 |
                  (unsigned)(v[2] != 0) << 2 | (unsigned)(v[3] != 0) << 3;
    const unsigned w0 = start >> 6;
    const uint64_t from = ~0ull << (start & 63);
    const uint64_t hi = v[w0] & from, lo = v[w0] & ~from;
    v[w0] = hi;
    v[w0 + 4] = lo;
    /* bit k of `order`: the (k+1)-th part looked at is not empty */
    unsigned order = ((nz | nz << 4) >> w0) & 0x0e;
    order |= (unsigned)(hi != 0) | (unsigned)(lo != 0) << 4;
    /* with no bit at all, p points at v[w0 + 5] past the parts: 0 is
     * left there, but the answer is -1 */
    const unsigned p = w0 + (unsigned)__builtin_ctz(order | 0x20);
    const int found = (int)(((p & 3) << 6) + (unsigned)__builtin_ctzll(v[p & 7] | 1ull << 63));
    return order ? found : -1;
}

/* Grant: every unmatched output with a request from an unmatched input
 * grants the first such input at or after its pointer (outputs without
 * requests, outside `outs`, have none to give).  Returns whether any output
 * granted; s->granted_in receives the inputs granted. */
static int grant_step(rifl_islip *s, const uint64_t *reqT, const uint64_t *outs)
{
    const unsigned W = s->words;
    int any = 0;
    for (unsigned w = 0; w < W; w++) {
        for (uint64_t o_bits = s->free_out[w] & outs[w]; o_bits; o_bits &= o_bits - 1) {
            unsigned o = w * 64 + (unsigned)__builtin_ctzll(o_bits);
            int i = rr_first(reqT + (size_t)o * W, s->free_in, W, s->gptr[o]);
            if (i < 0)
                continue;
            s->grants[(size_t)i * W + w] |= 1ull << (o & 63);
            s->granted_in[(unsigned)i >> 6] |= 1ull << (i & 63);
            any = 1;
        }
    }
    return any;
}

/* Accept: every input granted accepts the first output at or after its
 * pointer (each input's choice depends only on its own grants, so the
 * order of the inputs does not matter).  Returns the matches made. */
static unsigned accept_step(rifl_islip *s, unsigned it, int16_t *match)
{
    const unsigned n = s->n, W = s->words;
    unsigned made = 0;
    for (unsigned w = 0; w < W; w++) {
        uint64_t ins = s->granted_in[w];
        s->granted_in[w] = 0;
        for (; ins; ins &= ins - 1) {
            unsigned i = w * 64 + (unsigned)__builtin_ctzll(ins);
            uint64_t *g = s->grants + (size_t)i * W;
            unsigned o = (unsigned)rr_first(g, s->ones, W, s->aptr[i]);
            /* 2 to 4 words here; stores rather than a call to memset */
            g[0] = 0;
            g[1] = 0;
            if (W > 2) {
                g[2] = 0;
                if (W > 3)
                    g[3] = 0;
            }
            match[i] = (int16_t)o;
            s->free_in[w] &= ~(1ull << (i & 63));
            s->free_out[o >> 6] &= ~(1ull << (o & 63));
            if (it == 0) {
                s->gptr[o] = (uint16_t)(i + 1 == n ? 0 : i + 1);
                s->aptr[i] = (uint16_t)(o + 1 == n ? 0 : o + 1);
            }
            made++;
        }
    }
    return made;
}

/* Grant and accept of one iteration on up to 64 ports, the unmatched ports
 * in registers; the pointers move in the first iteration only.  Returns
 * the matches made. */
static inline __attribute__((always_inline)) unsigned
one_word_iteration(rifl_islip *s, const uint64_t *reqT, uint64_t *free_in, uint64_t *free_out,
                   int16_t *match, const bool first)
{
    const unsigned n = s->n;
    uint64_t *grants = s->grants;
    uint16_t *gptr = s->gptr, *aptr = s->aptr;
    uint64_t granted = 0;
    for (uint64_t o_bits = *free_out; o_bits; o_bits &= o_bits - 1) {
        unsigned o = (unsigned)__builtin_ctzll(o_bits);
        uint64_t r = reqT[o] & *free_in;
        if (!r)
            continue;
        uint64_t hi = r & (~0ull << gptr[o]);
        unsigned i = (unsigned)__builtin_ctzll(hi ? hi : r);
        grants[i] |= 1ull << o;
        granted |= 1ull << i;
    }
    /* every input granted accepts one output */
    uint64_t taken = 0;
    unsigned made = 0;
    for (uint64_t g_bits = granted; g_bits; g_bits &= g_bits - 1) {
        unsigned i = (unsigned)__builtin_ctzll(g_bits);
        uint64_t g = grants[i], hi = g & (~0ull << aptr[i]);
        grants[i] = 0;
        unsigned o = (unsigned)__builtin_ctzll(hi ? hi : g);
        match[i] = (int16_t)o;
        taken |= 1ull << o;
        if (first) {
            gptr[o] = (uint16_t)(i + 1 == n ? 0 : i + 1);
            aptr[i] = (uint16_t)(o + 1 == n ? 0 : o + 1);
        }
        made++;
    }
    *free_in &= ~granted;
    *free_out &= ~taken;
    return made;
}

/* islip_run_on for switches of up to 64 ports: one word per row. */
static unsigned islip_run_one_word(rifl_islip *s, const uint64_t *reqT, uint64_t outs,
                                   int16_t *match, unsigned *iter_matches, uint64_t *matched)
{
    uint64_t free_in = s->ones[0], free_out = outs;
    unsigned made = one_word_iteration(s, reqT, &free_in, &free_out, match, true);
    unsigned total = made;
    if (iter_matches)
        iter_matches[0] = made;
    for (unsigned it = 1; made && it < s->iterations; it++) {
        made = one_word_iteration(s, reqT, &free_in, &free_out, match, false);
        if (iter_matches)
            iter_matches[it] = made;
        total += made;
    }
    matched[0] = s->ones[0] & ~free_in;
    return total;
}

unsigned islip_run_on(rifl_islip *s, const uint64_t *reqT, const uint64_t *outs,
                      int16_t *match, unsigned *iter_matches, uint64_t *matched)
{
    const unsigned W = s->words;
    if (iter_matches)
        for (unsigned it = 0; it < s->iterations; it++)
            iter_matches[it] = 0;
    if (W == 1)
        return islip_run_one_word(s, reqT, outs[0], match, iter_matches, matched);
    /* all ports start unmatched */
    for (unsigned w = 0; w < W; w++)
        s->free_in[w] = s->free_out[w] = s->ones[w];
    unsigned total = 0;
    for (unsigned it = 0; it < s->iterations; it++) {
        if (!grant_step(s, reqT, outs))
            break;
        /* every input that got a grant accepts one, so no grant is left */
        unsigned made = accept_step(s, it, match);
        if (iter_matches)
            iter_matches[it] = made;
        total += made;
    }
    for (unsigned w = 0; w < W; w++)
        matched[w] = s->ones[w] & ~s->free_in[w];
    return total;
}

unsigned rifl_islip_run(rifl_islip *s, int16_t *match, unsigned *iter_matches)
{
    if (!s || !match)
        return 0;
    for (unsigned i = 0; i < s->n; i++)
        match[i] = -1;
    uint64_t outs[BS_WORDS(RIFL_L2_MAX_PORTS)] = { 0 }, matched[BS_WORDS(RIFL_L2_MAX_PORTS)];
    for (unsigned o = 0; o < s->n; o++)
        for (unsigned w = 0; w < s->words; w++)
            if (s->reqT[(size_t)o * s->words + w])
                bs_set(outs, o);
    return islip_run_on(s, s->reqT, outs, match, iter_matches, matched);
}

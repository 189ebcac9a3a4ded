/* iSLIP scheduler (McKeown 1999) on bit sets: request, grant, accept,
 * repeated; pointers move only on first-iteration accepts. */
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
    s->gptr = calloc(nports, sizeof(uint16_t));
    s->aptr = calloc(nports, sizeof(uint16_t));
    if (!s->req || !s->reqT || !s->grants || !s->free_in || !s->free_out || !s->gptr ||
        !s->aptr) {
        rifl_islip_free(s);
        return RIFL_ERR_NOMEM;
    }
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
    free(s->gptr);
    free(s->aptr);
    free(s);
}

void rifl_islip_request(rifl_islip *s, unsigned i, unsigned o, bool on)
{
    if (on) {
        bs_set(s->req + (size_t)i * s->words, o);
        bs_set(s->reqT + (size_t)o * s->words, i);
    } else {
        bs_clr(s->req + (size_t)i * s->words, o);
        bs_clr(s->reqT + (size_t)o * s->words, i);
    }
}

void rifl_islip_load(rifl_islip *s, const uint64_t *req, const uint64_t *reqT)
{
    size_t w = (size_t)s->n * s->words;
    memcpy(s->req, req, w * sizeof(uint64_t));
    memcpy(s->reqT, reqT, w * sizeof(uint64_t));
}

void rifl_islip_clear_requests(rifl_islip *s)
{
    size_t w = (size_t)s->n * s->words;
    memset(s->req, 0, w * sizeof(uint64_t));
    memset(s->reqT, 0, w * sizeof(uint64_t));
}

unsigned rifl_islip_grant_ptr(const rifl_islip *s, unsigned o) { return s->gptr[o]; }
unsigned rifl_islip_accept_ptr(const rifl_islip *s, unsigned i) { return s->aptr[i]; }

unsigned rifl_islip_run(rifl_islip *s, int16_t *match, unsigned *iter_matches)
{
    const unsigned n = s->n, W = s->words;
    for (unsigned i = 0; i < n; i++)
        match[i] = -1;
    /* all ports start unmatched */
    for (unsigned w = 0; w < W; w++) {
        unsigned bits = n - w * 64 >= 64 ? 64 : n - w * 64;
        s->free_in[w] = s->free_out[w] = bits == 64 ? ~0ull : ((1ull << bits) - 1);
    }
    unsigned total = 0;
    if (iter_matches)
        for (unsigned it = 0; it < s->iterations; it++)
            iter_matches[it] = 0;
    for (unsigned it = 0; it < s->iterations; it++) {
        /* grant: every unmatched output with a request from an unmatched
         * input grants the first one at or after its pointer */
        int any = 0;
        for (unsigned w = 0; w < W; w++) {
            uint64_t outs = s->free_out[w];
            while (outs) {
                unsigned o = w * 64 + (unsigned)__builtin_ctzll(outs);
                outs &= outs - 1;
                int i = bs_next_rr(s->reqT + (size_t)o * W, s->free_in, W, s->gptr[o]);
                if (i >= 0) {
                    bs_set(s->grants + (size_t)i * W, o);
                    any = 1;
                }
            }
        }
        if (!any)
            break;
        /* accept: every input with grants accepts the first output at or
         * after its pointer */
        unsigned made = 0;
        for (unsigned w = 0; w < W; w++) {
            uint64_t ins = s->free_in[w];
            while (ins) {
                unsigned i = w * 64 + (unsigned)__builtin_ctzll(ins);
                ins &= ins - 1;
                uint64_t *g = s->grants + (size_t)i * W;
                int o = -1;
                for (unsigned k = 0; k < W; k++)
                    if (g[k]) {
                        o = bs_next_rr(g, NULL, W, s->aptr[i]);
                        break;
                    }
                if (o < 0)
                    continue;
                memset(g, 0, W * sizeof(uint64_t));
                match[i] = (int16_t)o;
                bs_clr(s->free_in, i);
                bs_clr(s->free_out, (unsigned)o);
                if (it == 0) {
                    s->gptr[o] = (uint16_t)((i + 1) % n);
                    s->aptr[i] = (uint16_t)(((unsigned)o + 1) % n);
                }
                made++;
            }
        }
        /* every input that got a grant accepted one, so no grant is left */
        if (iter_matches)
            iter_matches[it] = made;
        total += made;
        if (!made)
            break;
    }
    return total;
}

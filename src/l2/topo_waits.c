/* Whether a topology's routes can deadlock under per-VOQ flow control
 * (rifl_topo_wait_cycle in rifl/l2.h).
 *
 * A VOQ is (switch, input port, output port).  A cell at the head of one
 * VOQ of its route goes on only when the next VOQ of its route, on the
 * switch behind the output port, has room: the first VOQ waits on the
 * second.  Routes whose waits close a cycle can fill every VOQ of the cycle
 * and stop for good (Dally and Seitz's channel dependency graph, with VOQs
 * for channels); routes whose waits form no cycle cannot, since some VOQ of
 * any set of full ones waits on none of the others.
 *
 * The waits are kept as a bit per (VOQ, output port of the next switch):
 * the next switch and its input port follow from the VOQ's output port, so
 * a VOQ waits on at most as many VOQs as that switch has ports.  A cycle is
 * found by a depth-first search with an explicit stack. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/l2.h"

struct waits {
    const rifl_topology *t;
    size_t *base;      /* per node: its first VOQ (switches only) */
    unsigned *sw;      /* the switches in node order (their bases rise) */
    unsigned nsw;
    size_t nvoq;
    unsigned words;    /* 64-bit words of wait bits per VOQ */
    uint64_t *bits;    /* [voq * words + w] */
};

static size_t voq_of(const struct waits *w, int sw, unsigned in, unsigned out)
{
    return w->base[sw] + (size_t)in * w->t->nodes[sw].nports + out;
}

static void voq_at(const struct waits *w, size_t v, rifl_topo_voq *q)
{
    /* the switch whose VOQs hold v: the last base at or below it */
    unsigned lo = 0, hi = w->nsw;
    while (hi - lo > 1) {
        unsigned mid = (lo + hi) / 2;
        if (w->base[w->sw[mid]] <= v)
            lo = mid;
        else
            hi = mid;
    }
    int sw = (int)w->sw[lo];
    unsigned n = w->t->nodes[sw].nports;
    size_t k = v - w->base[sw];
    q->sw = sw;
    q->in_port = (unsigned)(k / n);
    q->out_port = (unsigned)(k % n);
}

static int waits_init(struct waits *w, const rifl_topology *t)
{
    memset(w, 0, sizeof *w);
    w->t = t;
    w->base = calloc(t->nnodes ? t->nnodes : 1, sizeof *w->base);
    w->sw = malloc((t->nnodes ? t->nnodes : 1) * sizeof *w->sw);
    if (!w->base || !w->sw)
        return RIFL_ERR_NOMEM;
    unsigned most = 1;
    for (unsigned u = 0; u < t->nnodes; u++) {
        const rifl_topo_node *U = &t->nodes[u];
        if (!U->is_switch)
            continue;
        w->base[u] = w->nvoq;
        w->sw[w->nsw++] = u;
        w->nvoq += (size_t)U->nports * U->nports;
        most = U->nports > most ? U->nports : most;
    }
    w->words = (most + 63) / 64;
    w->bits = calloc(w->nvoq ? w->nvoq * w->words : 1, sizeof *w->bits);
    return w->bits ? RIFL_OK : RIFL_ERR_NOMEM;
}

static void waits_free(struct waits *w)
{
    free(w->base);
    free(w->sw);
    free(w->bits);
}

static void add_route(struct waits *w, const rifl_topo_route *r)
{
    for (unsigned k = 0; k + 1 < r->hops; k++) {
        size_t v = voq_of(w, r->sw[k], r->in_port[k], r->out_port[k]);
        unsigned o = r->out_port[k + 1];
        w->bits[v * w->words + o / 64] |= 1ULL << (o % 64);
    }
}

/* The VOQ v waits on with wait bit o: on the switch behind its output port */
static size_t next_voq(const struct waits *w, size_t v, unsigned o)
{
    rifl_topo_voq q;
    voq_at(w, v, &q);
    const rifl_topo_node *S = &w->t->nodes[q.sw];
    return voq_of(w, S->peer[q.out_port], S->peer_port[q.out_port], o);
}

/* Depth-first search from every VOQ: a wait on a VOQ still on the stack
 * closes a cycle, copied from the stack.  Returns the cycle's length or 0. */
static int find_cycle(const struct waits *w, rifl_topo_voq *cycle, unsigned max,
                      unsigned *len)
{
    *len = 0;
    uint8_t *color = calloc(w->nvoq ? w->nvoq : 1, 1); /* 0 new, 1 on the stack, 2 done */
    size_t *stack = malloc((w->nvoq ? w->nvoq : 1) * sizeof *stack);
    unsigned *next = malloc((w->nvoq ? w->nvoq : 1) * sizeof *next); /* wait bit to try */
    if (!color || !stack || !next) {
        free(color);
        free(stack);
        free(next);
        return RIFL_ERR_NOMEM;
    }
    const unsigned nbits = w->words * 64;
    for (size_t root = 0; root < w->nvoq && !*len; root++) {
        if (color[root])
            continue;
        size_t depth = 0;
        stack[depth] = root;
        next[depth++] = 0;
        color[root] = 1;
        while (depth && !*len) {
            size_t v = stack[depth - 1];
            const uint64_t *b = &w->bits[v * w->words];
            unsigned o = next[depth - 1];
            while (o < nbits && !((b[o / 64] >> (o % 64)) & 1))
                o++;
            if (o == nbits) {
                color[v] = 2;
                depth--;
                continue;
            }
            next[depth - 1] = o + 1;
            size_t u = next_voq(w, v, o);
            if (color[u] == 0) {
                color[u] = 1;
                stack[depth] = u;
                next[depth++] = 0;
            } else if (color[u] == 1) {
                size_t from = depth;
                while (stack[from - 1] != u)
                    from--;
                *len = (unsigned)(depth - (from - 1));
                for (size_t k = from - 1; k < depth && k - (from - 1) < max; k++)
                    voq_at(w, stack[k], &cycle[k - (from - 1)]);
            }
        }
    }
    free(color);
    free(stack);
    free(next);
    return RIFL_OK;
}

int rifl_topo_wait_cycle(const rifl_topology *t, unsigned paths, rifl_topo_voq *cycle,
                         unsigned max, unsigned *len, char *err, size_t errlen)
{
    if (!t || !len || paths == 0 || (max && !cycle)) {
        rifl_msg(err, errlen, "wait cycle: a topology, at least one path and somewhere to "
                 "put the cycle are needed");
        return RIFL_ERR_INVALID_ARG;
    }
    *len = 0;
    struct waits w;
    int rc = waits_init(&w, t);
    rifl_topo_route *routes = NULL;
    unsigned *counts = NULL;
    if (rc == RIFL_OK) {
        routes = malloc((size_t)t->nnodes * paths * sizeof *routes);
        counts = malloc(t->nnodes * sizeof *counts);
        if (!routes || !counts)
            rc = RIFL_ERR_NOMEM;
    }
    for (unsigned d = 0; rc == RIFL_OK && d < t->nnodes; d++) {
        if (t->nodes[d].is_switch || t->nodes[d].peer[0] < 0)
            continue;
        rc = rifl_topo_routes_to(t, d, routes, paths, counts, err, errlen);
        for (unsigned s = 0; rc == RIFL_OK && s < t->nnodes; s++)
            for (unsigned k = 0; k < counts[s]; k++)
                add_route(&w, &routes[(size_t)s * paths + k]);
    }
    if (rc == RIFL_OK)
        rc = find_cycle(&w, cycle, max, len);
    if (rc == RIFL_ERR_NOMEM)
        rifl_msg(err, errlen, "wait cycle: out of memory for %zu VOQs", w.nvoq);
    free(routes);
    free(counts);
    waits_free(&w);
    return rc;
}

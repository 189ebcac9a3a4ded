/* Topologies by name (single:N, leafspine:LxSxH, fattree:K), written as the
 * topology text they stand for and read by the one parser; and every
 * shortest route between two hosts, for spreading flows over paths. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/l2.h"

/* ---- generators ------------------------------------------------------------------ */

/* A growing text buffer. */
struct text {
    char *s;
    size_t len, cap;
    bool failed;
};

/* One line of text from `fmt` and up to six numbers. */
static void add(struct text *t, const char *fmt, unsigned a, unsigned b, unsigned c, unsigned d,
                unsigned e, unsigned f)
{
    if (t->failed)
        return;
    char line[128];
    int n = snprintf(line, sizeof line, fmt, a, b, c, d, e, f);
    if (n < 0 || (size_t)n >= sizeof line) {
        t->failed = true;
        return;
    }
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 4096;
        while (cap < t->len + (size_t)n + 1)
            cap *= 2;
        char *s = realloc(t->s, cap);
        if (!s) {
            t->failed = true;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
    memcpy(t->s + t->len, line, (size_t)n + 1);
    t->len += (size_t)n;
}

/* "NAME:" followed by up to three unsigned numbers separated by 'x'. */
static int numbers(const char *spec, size_t skip, unsigned want, unsigned v[3])
{
    const char *p = spec + skip;
    for (unsigned k = 0; k < want; k++) {
        if (*p < '0' || *p > '9')
            return -1;
        unsigned long x = 0;
        while (*p >= '0' && *p <= '9') {
            x = x * 10 + (unsigned long)(*p - '0');
            if (x > 100000)
                return -1;
            p++;
        }
        v[k] = (unsigned)x;
        if (k + 1 < want && *p++ != 'x')
            return -1;
    }
    return *p ? -1 : 0;
}

bool rifl_topo_is_generator(const char *spec)
{
    return spec && (!strncmp(spec, "single:", 7) || !strncmp(spec, "leafspine:", 10) ||
                    !strncmp(spec, "fattree:", 8));
}

static void gen_single(struct text *t, unsigned n)
{
    add(t, "switch s0 %u\n", n, 0, 0, 0, 0, 0);
    for (unsigned h = 0; h < n; h++)
        add(t, "host h%u\nlink h%u s0:%u\n", h, h, h, 0, 0, 0);
}

/* Leaf i: ports 0..H-1 to its hosts, H..H+S-1 to the spines; spine j: port
 * i to leaf i. */
static void gen_leafspine(struct text *t, unsigned L, unsigned S, unsigned H)
{
    for (unsigned i = 0; i < L; i++)
        add(t, "switch leaf%u %u\n", i, H + S, 0, 0, 0, 0);
    for (unsigned j = 0; j < S; j++)
        add(t, "switch spine%u %u\n", j, L, 0, 0, 0, 0);
    for (unsigned i = 0; i < L; i++)
        for (unsigned k = 0; k < H; k++)
            add(t, "host h%u\nlink h%u leaf%u:%u\n", i * H + k, i * H + k, i, k, 0, 0);
    for (unsigned i = 0; i < L; i++)
        for (unsigned j = 0; j < S; j++)
            add(t, "link leaf%u:%u spine%u:%u\n", i, H + j, j, i, 0, 0);
}

/* The three-tier fat tree of K-port switches: K pods of K/2 edge and K/2
 * aggregation switches, (K/2)^2 core switches, K^3/4 hosts.  Edge e of pod
 * p: ports 0..K/2-1 to hosts, K/2 + a to aggregation a of its pod;
 * aggregation a: port e to edge e, K/2 + c to core a*K/2 + c; core j: port p
 * to pod p.  Hosts in different pods are 5 switches apart, the most a
 * Layer 2 header allows. */
static void gen_fattree(struct text *t, unsigned K)
{
    unsigned h2 = K / 2;
    for (unsigned p = 0; p < K; p++)
        for (unsigned e = 0; e < h2; e++)
            add(t, "switch edge%u.%u %u\nswitch agg%u.%u %u\n", p, e, K, p, e, K);
    for (unsigned j = 0; j < h2 * h2; j++)
        add(t, "switch core%u %u\n", j, K, 0, 0, 0, 0);
    for (unsigned p = 0; p < K; p++)
        for (unsigned e = 0; e < h2; e++) {
            for (unsigned k = 0; k < h2; k++) {
                unsigned h = (p * h2 + e) * h2 + k;
                add(t, "host h%u\nlink h%u edge%u.%u:%u\n", h, h, p, e, k, 0);
            }
            for (unsigned a = 0; a < h2; a++)
                add(t, "link edge%u.%u:%u agg%u.%u:%u\n", p, e, h2 + a, p, a, e);
        }
    for (unsigned p = 0; p < K; p++)
        for (unsigned a = 0; a < h2; a++)
            for (unsigned c = 0; c < h2; c++)
                add(t, "link agg%u.%u:%u core%u:%u\n", p, a, h2 + c, a * h2 + c, p, 0);
}

int rifl_topo_generate(const char *spec, rifl_topology **out, char *err, size_t errlen)
{
    if (!spec || !out) {
        rifl_msg(err, errlen, "topology generator: %s", !spec ? "no specification given"
                                                             : "no place for the topology (out)");
        return RIFL_ERR_INVALID_ARG;
    }
    *out = NULL;
    struct text t = { 0 };
    unsigned v[3];
    if (!strncmp(spec, "single:", 7)) {
        if (numbers(spec, 7, 1, v) || v[0] < 2 || v[0] > RIFL_L2_MAX_PORTS) {
            rifl_msg(err, errlen, "'%.40s': use single:N with 2 to %u hosts on one switch", spec,
                     RIFL_L2_MAX_PORTS);
            return RIFL_ERR_CONFIG;
        }
        gen_single(&t, v[0]);
    } else if (!strncmp(spec, "leafspine:", 10)) {
        if (numbers(spec, 10, 3, v) || v[0] < 2 || v[1] < 1 || v[2] < 1 ||
            v[0] > RIFL_L2_MAX_PORTS || v[1] + v[2] > RIFL_L2_MAX_PORTS ||
            v[0] * (v[2] + 1) + v[1] > RIFL_TOPO_MAX_NODES) {
            rifl_msg(err, errlen, "'%.40s': use leafspine:LxSxH with L >= 2 leaves of up to %u "
                     "ports (S spines + H hosts each), at most %u nodes in all", spec,
                     RIFL_L2_MAX_PORTS, RIFL_TOPO_MAX_NODES);
            return RIFL_ERR_CONFIG;
        }
        gen_leafspine(&t, v[0], v[1], v[2]);
    } else if (!strncmp(spec, "fattree:", 8)) {
        bool bad = numbers(spec, 8, 1, v) != 0;
        uint64_t k = bad ? 0 : v[0]; /* (64 bits: K^3 of a large K wraps 32) */
        if (bad || k < 2 || k % 2 || k > RIFL_L2_MAX_PORTS ||
            k * k * k / 4 + k * k + k * k / 4 > RIFL_TOPO_MAX_NODES) {
            rifl_msg(err, errlen, "'%.40s': use fattree:K with K even, 2 to 22 (K-port "
                     "switches, K^3/4 hosts, at most %u nodes in all)", spec,
                     RIFL_TOPO_MAX_NODES);
            return RIFL_ERR_CONFIG;
        }
        gen_fattree(&t, v[0]);
    } else {
        rifl_msg(err, errlen, "'%.40s': unknown generator; use single:N, leafspine:LxSxH or "
                 "fattree:K", spec);
        return RIFL_ERR_CONFIG;
    }
    if (t.failed) {
        free(t.s);
        rifl_msg(err, errlen, "topology generator: out of memory");
        return RIFL_ERR_NOMEM;
    }
    int rc = rifl_topo_parse(t.s, t.len, out, err, errlen);
    free(t.s);
    return rc;
}

/* ---- every shortest route ---------------------------------------------------------- */

struct walk {
    const rifl_topology *t;
    const int *to_last;      /* switch hops from each switch to the last one */
    unsigned last, dst_port; /* the destination's switch and its port there */
    rifl_topo_route cur;
    rifl_topo_route *out;
    unsigned max, n;
};

/* Extend the route at hop k (switch u, entered by port in) towards the
 * last switch along shortest hops only. */
static void extend(struct walk *w, unsigned k, unsigned u, unsigned in)
{
    if (w->n == w->max)
        return;
    const rifl_topo_node *U = &w->t->nodes[u];
    w->cur.sw[k] = (int)u;
    w->cur.in_port[k] = in;
    if (u == w->last && w->to_last[u] == 0) {
        w->cur.out_port[k] = w->dst_port;
        w->cur.rel[k] = (uint8_t)rifl_l2_rel_port(U->nports, in, w->dst_port);
        w->out[w->n++] = w->cur;
        return;
    }
    for (unsigned p = 0; p < U->nports && w->n < w->max; p++) {
        int v = U->peer[p];
        if (p == in || v < 0 || !w->t->nodes[v].is_switch ||
            w->to_last[v] != w->to_last[u] - 1)
            continue;
        w->cur.out_port[k] = p;
        w->cur.rel[k] = (uint8_t)rifl_l2_rel_port(U->nports, in, p);
        extend(w, k + 1, (unsigned)v, U->peer_port[p]);
    }
}

/* Switch hops from every switch to switch `last` (-1: no way; every entry
 * -1 when last < 0), by one breadth-first search over switches: an array of
 * one entry per node for the caller to free, or NULL (said in err) when
 * memory runs out. */
static int *hops_to(const rifl_topology *t, int last, char *err, size_t errlen)
{
    unsigned n = t->nnodes;
    int *to_last = malloc(n * sizeof *to_last);
    unsigned *queue = malloc(n * sizeof *queue);
    if (!to_last || !queue) {
        free(to_last);
        free(queue);
        rifl_msg(err, errlen, "routes: out of memory");
        return NULL;
    }
    for (unsigned i = 0; i < n; i++)
        to_last[i] = -1;
    unsigned qh = 0, qt = 0;
    if (last >= 0) {
        to_last[last] = 0;
        queue[qt++] = (unsigned)last;
    }
    while (qh < qt) {
        unsigned u = queue[qh++];
        const rifl_topo_node *U = &t->nodes[u];
        for (unsigned p = 0; p < U->nports; p++) {
            int v = U->peer[p];
            if (v < 0 || !t->nodes[v].is_switch || to_last[v] >= 0)
                continue;
            to_last[v] = to_last[u] + 1;
            queue[qt++] = (unsigned)v;
        }
    }
    free(queue);
    return to_last;
}

/* The shortest routes of `hops` switches from host src to host dst, given
 * the hops of every switch to dst's: how many were written (at most max). */
static unsigned walk_routes(const rifl_topology *t, unsigned src, unsigned dst,
                            const int *to_last, unsigned hops, rifl_topo_route *routes,
                            unsigned max)
{
    struct walk w = { .t = t, .to_last = to_last, .last = (unsigned)t->nodes[dst].peer[0],
                      .dst_port = t->nodes[dst].peer_port[0], .out = routes, .max = max };
    memset(&w.cur, 0, sizeof w.cur);
    w.cur.hops = hops;
    for (unsigned k = hops; k < RIFL_L2_MAX_HOPS; k++)
        w.cur.sw[k] = -1;
    const rifl_topo_node *S = &t->nodes[src];
    extend(&w, 0, (unsigned)S->peer[0], S->peer_port[0]);
    return w.n;
}

int rifl_topo_routes_hosts(const rifl_topology *t, unsigned src, unsigned dst,
                           rifl_topo_route *routes, unsigned max, unsigned *count, char *err,
                           size_t errlen)
{
    if (!count || !routes || max == 0) {
        rifl_msg(err, errlen, "routes: no room given for the routes");
        return RIFL_ERR_INVALID_ARG;
    }
    *count = 0;
    /* the one shortest route first: it checks the hosts and gives the
     * length every other shortest route has */
    rifl_topo_route one;
    int rc = rifl_topo_route_hosts(t, src, dst, &one, err, errlen);
    if (rc != RIFL_OK)
        return rc;
    int *to_last = hops_to(t, t->nodes[dst].peer[0], err, errlen);
    if (!to_last)
        return RIFL_ERR_NOMEM;
    *count = walk_routes(t, src, dst, to_last, one.hops, routes, max);
    free(to_last);
    return RIFL_OK;
}

int rifl_topo_routes_to(const rifl_topology *t, unsigned dst, rifl_topo_route *routes,
                        unsigned max, unsigned *counts, char *err, size_t errlen)
{
    if (!t || !routes || !counts || max == 0 || dst >= t->nnodes || t->nodes[dst].is_switch) {
        rifl_msg(err, errlen, "routes: give a host as the destination and room for the routes");
        return RIFL_ERR_INVALID_ARG;
    }
    unsigned n = t->nnodes;
    memset(counts, 0, n * sizeof *counts);
    int last = t->nodes[dst].peer[0];
    int *to_last = hops_to(t, last, err, errlen);
    if (!to_last)
        return RIFL_ERR_NOMEM;
    int rc = RIFL_OK;
    for (unsigned s = 0; s < n && rc == RIFL_OK; s++) {
        if (s == dst || t->nodes[s].is_switch)
            continue;
        int first = t->nodes[s].peer[0];
        if (last < 0 || first < 0 || to_last[first] < 0 ||
            to_last[first] + 1 > RIFL_L2_MAX_HOPS) {
            /* no route: the one-pair search says why */
            rifl_topo_route one;
            rc = rifl_topo_route_hosts(t, s, dst, &one, err, errlen);
            if (rc == RIFL_OK) {
                rifl_msg(err, errlen, "routes: no route from '%s' to '%s'", t->nodes[s].name,
                         t->nodes[dst].name);
                rc = RIFL_ERR_UNREACHABLE;
            }
            break;
        }
        counts[s] = walk_routes(t, s, dst, to_last, (unsigned)to_last[first] + 1,
                                routes + (size_t)s * max, max);
    }
    free(to_last);
    return rc;
}

unsigned rifl_topo_flow_path(unsigned src, unsigned dst, uint64_t flow, unsigned paths)
{
    if (paths <= 1)
        return 0;
    /* splitmix64's finaliser over the flow's name */
    uint64_t z = ((uint64_t)src << 40) ^ ((uint64_t)dst << 20) ^ flow;
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (unsigned)(z % paths);
}

/* ---- following a route ---------------------------------------------------------- */

int rifl_topo_follow(const rifl_topology *t, unsigned from, const uint8_t *route, unsigned hops)
{
    if (!t || !route || from >= t->nnodes || t->nodes[from].is_switch || hops < 1 ||
        hops > RIFL_L2_MAX_HOPS)
        return -1;
    rifl_l2_hdr h;
    if (rifl_l2_hdr_make(&h, route, hops) != RIFL_OK)
        return -1;
    int u = t->nodes[from].peer[0];
    unsigned in = t->nodes[from].peer_port[0];
    for (unsigned k = 0; k < hops; k++) {
        if (u < 0 || !t->nodes[u].is_switch)
            return -1;
        const rifl_topo_node *sw = &t->nodes[u];
        unsigned o;
        if (rifl_l2_forward(sw->nports, in, &h, &o) != RIFL_L2_FWD_UNICAST || sw->peer[o] < 0)
            return -1;
        rifl_l2_hdr_advance(&h, in, o);
        in = sw->peer_port[o];
        u = sw->peer[o];
    }
    /* the route must end at a host, with no hop left */
    return u >= 0 && !t->nodes[u].is_switch && (unsigned)u != from ? u : -1;
}

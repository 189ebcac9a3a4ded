/* Topology files: parsing, line-numbered errors, shortest routes of at most
 * five hops, unreachable and too-far destinations. */
#include "testlib.h"

#include <stdlib.h>

#include "rifl/l2.h"

static rifl_topology *parse(const char *text, char *err, size_t errlen, int *rc)
{
    rifl_topology *t = NULL;
    *rc = rifl_topo_parse(text, strlen(text), &t, err, errlen);
    return t;
}

static void t_parse_ok(void)
{
    const char *text = "# two switches\n"
                       "switch s1 4\nswitch s2 8   # comment\n"
                       "host a\nhost b\nhost c\n"
                       "link a s1:0\nlink s1:3 s2:7 delay 20\nlink b:0 s2:1\n";
    char err[256];
    int rc;
    rifl_topology *t = parse(text, err, sizeof err, &rc);
    REQUIRE(rc == RIFL_OK && t);
    CHECK_EQ_U(t->nnodes, 5);
    CHECK_EQ_U(t->nswitches, 2);
    CHECK_EQ_U(t->nhosts, 3);
    CHECK_EQ_U(t->nlinks, 3);
    int s1 = rifl_topo_find(t, "s1"), s2 = rifl_topo_find(t, "s2");
    REQUIRE(s1 >= 0 && s2 >= 0);
    CHECK_EQ_I(t->nodes[s1].peer[3], s2);
    CHECK_EQ_U(t->nodes[s1].peer_port[3], 7);
    CHECK_EQ_U(t->nodes[s1].delay[3], 20);
    CHECK_EQ_U(t->nodes[s2].delay[7], 20);
    CHECK_EQ_U(t->nodes[s1].delay[0], RIFL_TOPO_DEFAULT_DELAY);
    CHECK_EQ_I(rifl_topo_find(t, "zzz"), -1);
    /* a -> b: s1 in 0 out 3 (rel 2), s2 in 7 out 1 (rel 1) */
    rifl_topo_route r;
    CHECK_EQ_I(rifl_topo_route_hosts(t, (unsigned)rifl_topo_find(t, "a"),
                                     (unsigned)rifl_topo_find(t, "b"), &r, err, sizeof err),
               RIFL_OK);
    CHECK_EQ_U(r.hops, 2);
    CHECK_EQ_U(r.rel[0], 2);
    CHECK_EQ_U(r.rel[1], 1);
    CHECK_EQ_U(r.in_port[1], 7);
    CHECK_EQ_U(r.out_port[1], 1);
    /* c is not linked */
    rc = rifl_topo_route_hosts(t, (unsigned)rifl_topo_find(t, "a"),
                               (unsigned)rifl_topo_find(t, "c"), &r, err, sizeof err);
    CHECK_EQ_I(rc, RIFL_ERR_UNREACHABLE);
    CHECK(strstr(err, "not linked") != NULL);
    rc = rifl_topo_route_hosts(t, (unsigned)s1, (unsigned)rifl_topo_find(t, "a"), &r, err,
                               sizeof err);
    CHECK_EQ_I(rc, RIFL_ERR_INVALID_ARG);
    rifl_topo_free(t);
}

/* A link's own settings: at both ports, each direction's BER at the port
 * that sends it, -1 where not given. */
static void t_link_settings(void)
{
    char err[256] = "";
    int rc;
    rifl_topology *t = parse("host a\nhost b\nhost c\nswitch s 4\n"
                             "link a s:0 cable 10.5 ber 1e-9\n"
                             "link s:1 b transceiver 40 ber-ab 2e-7 delay 3 rate 25\n"
                             "link c s:2 ber-ba 1E-6 cable 0 lanes 4\n",
                             err, sizeof err, &rc);
    CHECK_MSG(t != NULL, "%s", err);
    REQUIRE(t != NULL);
    const rifl_topo_node *a = &t->nodes[rifl_topo_find(t, "a")];
    const rifl_topo_node *b = &t->nodes[rifl_topo_find(t, "b")];
    const rifl_topo_node *c = &t->nodes[rifl_topo_find(t, "c")];
    const rifl_topo_node *s = &t->nodes[rifl_topo_find(t, "s")];
    CHECK(a->attr[0].cable_m == 10.5 && s->attr[0].cable_m == 10.5);
    CHECK(a->attr[0].transceiver_ns < 0 && s->attr[0].transceiver_ns < 0);
    CHECK(a->attr[0].tx_ber == 1e-9 && s->attr[0].tx_ber == 1e-9);
    CHECK_EQ_U(a->delay[0], RIFL_TOPO_DEFAULT_DELAY);
    /* s:1 is A: its port sends at 2e-7, b's at the run's */
    CHECK(s->attr[1].tx_ber == 2e-7 && b->attr[0].tx_ber < 0);
    CHECK(s->attr[1].transceiver_ns == 40 && b->attr[0].transceiver_ns == 40);
    CHECK(s->attr[1].cable_m < 0);
    CHECK(s->attr[1].rate_gbps == 25 && b->attr[0].rate_gbps == 25);
    CHECK(a->attr[0].rate_gbps < 0 && s->attr[0].rate_gbps < 0);
    CHECK_EQ_U(s->delay[1], 3);
    CHECK(c->attr[0].tx_ber < 0 && s->attr[2].tx_ber == 1e-6);
    CHECK(c->attr[0].cable_m == 0 && s->attr[2].cable_m == 0);
    CHECK(c->attr[0].lanes == 4 && s->attr[2].lanes == 4);
    CHECK(a->attr[0].lanes == 0 && s->attr[0].lanes == 0); /* not given */
    CHECK(s->attr[3].cable_m < 0 && s->attr[3].tx_ber < 0); /* unlinked */
    rifl_topo_free(t);
}

static void t_parse_errors(void)
{
    struct {
        const char *text;
        const char *want; /* substring of the message */
    } cases[] = {
        { "host a\nfoo bar\n", "line 2: unknown statement" },
        { "switch s 1\nhost a\n", "line 1: bad port count" },
        { "switch s 257\n", "bad port count" },
        { "host a\nhost a\n", "line 2: 'a' is declared twice" },
        { "host a\nswitch s 4\nlink a s:4\n", "line 3: bad port '4'" },
        { "host a\nswitch s 4\nlink a s\n", "needs a port" },
        { "host a\nswitch s 4\nlink a:1 s:0\n", "single port" },
        { "host a\nswitch s 4\nlink a s:0\nlink s:0 a\n", "line 4: port 0 of 's' is already linked" },
        { "host a\nhost b\nlink a b\n", "two hosts" },
        { "host a\nswitch s 4\nlink s:0 s:1\n", "to itself" },
        { "host a\nlink a s:0\n", "line 2: unknown node 's'" },
        { "host a\nswitch s 4\nlink a s:0 delay x\n", "bad delay" },
        { "host a\nswitch s 4\nlink a s:0 wait 3\n", "unknown link setting 'wait'" },
        { "host a\nswitch s 4\nlink a\n", "expected 'link" },
        { "host a\nswitch s 4\nlink a s:0 cable\n", "'cable' needs a value" },
        { "host a\nswitch s 4\nlink a s:0 cable -2\n", "bad cable length '-2'" },
        { "host a\nswitch s 4\nlink a s:0 cable 1001\n", "bad cable length" },
        { "host a\nswitch s 4\nlink a s:0 cable 2m\n", "bad cable length" },
        { "host a\nswitch s 4\nlink a s:0 transceiver nan\n", "bad transceiver" },
        { "host a\nswitch s 4\nlink a s:0 ber 1e-3\n", "bad bit error rate '1e-3'" },
        { "host a\nswitch s 4\nlink a s:0 ber-ab inf\n", "bad bit error rate" },
        { "host a\nswitch s 4\nlink a s:0 ber 1e-9 ber-ab 1e-9\n", "given twice" },
        { "host a\nswitch s 4\nlink a s:0 ber-ba 1e-9 ber 1e-9\n", "given twice" },
        { "host a\nswitch s 4\nlink a s:0 cable 1 cable 2\n", "given twice" },
        { "host a\nswitch s 4\nlink a s:0 delay 1 cable 2 transceiver 3 ber-ab 0 ber-ba 0 "
          "rate 9 lanes 4 delay 2 x\n", "too many words" },
        { "host a\nswitch s 4\nlink a s:0 rate 0.5\n", "bad rate '0.5'" },
        { "host a\nswitch s 4\nlink a s:0 rate 10001\n", "bad rate" },
        { "host a\nswitch s 4\nlink a s:0 lanes 3\n", "bad lane count '3'" },
        { "host a\nswitch s 4\nlink a s:0 lanes 32\n", "bad lane count" },
        { "host a\nswitch s 4\nlink a s:0 lanes 0\n", "bad lane count" },
        { "host a\nswitch s 4\nlink a s:0 lanes\n", "'lanes' needs a value, e.g. 'lanes 4'" },
        { "switch s 4\n", "no host" },
        { "host bad/name\n", "bad name" },
        { "host\n", "expected 'host NAME'" },
    };
    for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char err[256] = "";
        int rc;
        rifl_topology *t = parse(cases[k].text, err, sizeof err, &rc);
        CHECK_MSG(rc == RIFL_ERR_PARSE && t == NULL, "case %u accepted", k);
        CHECK_MSG(strstr(err, cases[k].want) != NULL, "case %u: '%s' lacks '%s'", k, err,
                  cases[k].want);
    }
    /* NUL inside the text */
    const char nul[] = "host a\n\0host b\n";
    rifl_topology *t = NULL;
    char err[256];
    CHECK_EQ_I(rifl_topo_parse(nul, sizeof nul - 1, &t, err, sizeof err), RIFL_ERR_PARSE);
}

/* A chain of k switches: routes of k hops; beyond 5 the route is refused
 * with a message; headers built from routes forward correctly hop by hop. */
static void t_chain_routes(void)
{
    for (unsigned k = 1; k <= 7; k++) {
        char text[2048];
        size_t n = 0;
        n += (size_t)snprintf(text + n, sizeof text - n, "host src\nhost dst\n");
        for (unsigned s = 0; s < k; s++)
            n += (size_t)snprintf(text + n, sizeof text - n, "switch s%u %u\n", s, 3 + s);
        n += (size_t)snprintf(text + n, sizeof text - n, "link src s0:1\n");
        for (unsigned s = 0; s + 1 < k; s++)
            n += (size_t)snprintf(text + n, sizeof text - n, "link s%u:2 s%u:0\n", s, s + 1);
        n += (size_t)snprintf(text + n, sizeof text - n, "link s%u:%u dst\n", k - 1, 2 + k - 1);
        char err[256];
        int rc;
        rifl_topology *t = parse(text, err, sizeof err, &rc);
        REQUIRE(rc == RIFL_OK);
        rifl_topo_route r;
        unsigned a = (unsigned)rifl_topo_find(t, "src"), b = (unsigned)rifl_topo_find(t, "dst");
        rc = rifl_topo_route_hosts(t, a, b, &r, err, sizeof err);
        if (k > 5) {
            CHECK_EQ_I(rc, RIFL_ERR_UNREACHABLE);
            CHECK(strstr(err, "at most 5 hops") != NULL);
        } else {
            CHECK_EQ_I(rc, RIFL_OK);
            CHECK_EQ_U(r.hops, k);
            rifl_l2_hdr h;
            rifl_l2_hdr_make(&h, r.rel, r.hops);
            for (unsigned s = 0; s < k; s++) {
                unsigned o;
                const rifl_topo_node *sw = &t->nodes[r.sw[s]];
                CHECK_EQ_I(rifl_l2_forward(sw->nports, r.in_port[s], &h, &o),
                           RIFL_L2_FWD_UNICAST);
                CHECK_EQ_U(o, r.out_port[s]);
                rifl_l2_hdr_advance(&h, r.in_port[s], o);
            }
            CHECK_EQ_U(rifl_l2_remain_hops(&h), 0);
            /* the reverse route is the computed route from dst to src */
            rifl_topo_route back;
            uint8_t rev[5];
            unsigned hops;
            {
                int req_rc_ = rifl_topo_route_hosts(t, b, a, &back, err, sizeof err);
                REQUIRE(req_rc_ == RIFL_OK);
            }
            {
                int req_rc_ = rifl_l2_reverse_route(&h, rev, &hops);
                REQUIRE(req_rc_ == RIFL_OK);
            }
            CHECK_EQ_U(hops, back.hops);
            CHECK(!memcmp(rev, back.rel, hops));
        }
        rifl_topo_free(t);
    }
}

/* Disconnected parts and the shortest of two paths. */
static void t_shortest_and_disconnected(void)
{
    const char *text = "host a\nhost b\nhost c\n"
                       "switch x 4\nswitch y 4\nswitch z 4\nswitch q 4\n"
                       "link a x:0\nlink b z:0\nlink c q:0\n"
                       "link x:1 y:0\nlink y:1 z:1\n" /* long way x-y-z */
                       "link x:2 z:2\n";              /* short way x-z */
    char err[256];
    int rc;
    rifl_topology *t = parse(text, err, sizeof err, &rc);
    REQUIRE(rc == RIFL_OK);
    rifl_topo_route r;
    CHECK_EQ_I(rifl_topo_route_hosts(t, 0, 1, &r, err, sizeof err), RIFL_OK);
    CHECK_EQ_U(r.hops, 2);
    CHECK_EQ_U(r.out_port[0], 2);
    CHECK_EQ_I(rifl_topo_route_hosts(t, 0, 2, &r, err, sizeof err), RIFL_ERR_UNREACHABLE);
    CHECK(strstr(err, "disconnected") != NULL);
    rifl_topo_free(t);
}

/* Walk a route's header through the topology by the forwarding rule: it
 * must take the route's ports and arrive at host dst with no hop left. */
static bool route_arrives(const rifl_topology *t, const rifl_topo_route *r, unsigned src,
                          unsigned dst)
{
    rifl_l2_hdr h;
    if (rifl_l2_hdr_make(&h, r->rel, r->hops) != RIFL_OK)
        return false;
    int u = t->nodes[src].peer[0];
    unsigned in = t->nodes[src].peer_port[0];
    for (unsigned k = 0; k < r->hops; k++) {
        unsigned o;
        const rifl_topo_node *sw = &t->nodes[u];
        if (u != r->sw[k] || in != r->in_port[k] ||
            rifl_l2_forward(sw->nports, in, &h, &o) != RIFL_L2_FWD_UNICAST ||
            o != r->out_port[k])
            return false;
        rifl_l2_hdr_advance(&h, in, o);
        in = sw->peer_port[o];
        u = sw->peer[o];
    }
    return u == (int)dst && rifl_l2_remain_hops(&h) == 0;
}

static bool same_route(const rifl_topo_route *a, const rifl_topo_route *b)
{
    if (a->hops != b->hops)
        return false;
    for (unsigned k = 0; k < a->hops; k++)
        if (a->sw[k] != b->sw[k] || a->in_port[k] != b->in_port[k] ||
            a->out_port[k] != b->out_port[k] || a->rel[k] != b->rel[k])
            return false;
    return true;
}

static void t_generators(void)
{
    static const struct {
        const char *spec;
        unsigned hosts, switches, links;
    } g[] = {
        { "single:32", 32, 1, 32 },
        { "leafspine:8x8x8", 64, 16, 64 + 64 },
        { "leafspine:2x3x5", 10, 5, 10 + 6 },
        { "fattree:4", 16, 20, 16 + 16 + 16 },
        { "fattree:16", 1024, 320, 1024 + 1024 + 1024 },
    };
    for (size_t k = 0; k < sizeof g / sizeof g[0]; k++) {
        rifl_topology *t = NULL;
        char err[256] = "";
        int rc = rifl_topo_generate(g[k].spec, &t, err, sizeof err);
        CHECK_MSG(rc == RIFL_OK, "%s: %s", g[k].spec, err);
        if (rc != RIFL_OK)
            continue;
        CHECK_EQ_U(t->nhosts, g[k].hosts);
        CHECK_EQ_U(t->nswitches, g[k].switches);
        CHECK_EQ_U(t->nlinks, g[k].links);
        /* every switch port is used */
        unsigned idle = 0;
        for (unsigned i = 0; i < t->nnodes; i++)
            for (unsigned p = 0; p < t->nodes[i].nports; p++)
                idle += t->nodes[i].peer[p] < 0;
        CHECK_MSG(idle == 0 || k == 1 || k == 2, "%s: %u idle ports", g[k].spec, idle);
        CHECK(rifl_topo_is_generator(g[k].spec));
        rifl_topo_free(t);
    }
    static const char *const bad[] = { "single:1", "single:300", "leafspine:1x2x3",
                                       "leafspine:8x8", "leafspine:4x200x100", "fattree:5",
                                       "fattree:24", "fattree:", "ring:4", "single:4x",
                                       "fattree:65536", "fattree:2642246" };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        rifl_topology *t = NULL;
        char err[256] = "";
        CHECK_MSG(rifl_topo_generate(bad[k], &t, err, sizeof err) == RIFL_ERR_CONFIG && !t &&
                      strstr(err, "use ") != NULL,
                  "%s accepted or no advice: %s", bad[k], err);
    }
    CHECK(!rifl_topo_is_generator("topo.txt"));
}

/* Every shortest route, by topology: how many, how long, all distinct,
 * each forwarding to its destination, the first the one route_hosts gives. */
static void t_all_routes(void)
{
    static const struct {
        const char *spec;
        const char *src, *dst;
        unsigned routes, hops;
    } c[] = {
        { "single:8", "h0", "h7", 1, 1 },
        { "leafspine:8x8x8", "h0", "h1", 1, 1 },    /* same leaf */
        { "leafspine:8x8x8", "h0", "h63", 8, 3 },   /* through any spine */
        { "fattree:4", "h0", "h1", 1, 1 },          /* same edge */
        { "fattree:4", "h0", "h2", 2, 3 },          /* same pod: two aggregations */
        { "fattree:4", "h0", "h15", 4, 5 },         /* across pods: four cores */
        { "fattree:8", "h0", "h127", 16, 5 },
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        rifl_topology *t = NULL;
        char err[256];
        REQUIRE(rifl_topo_generate(c[k].spec, &t, err, sizeof err) == RIFL_OK);
        unsigned a = (unsigned)rifl_topo_find(t, c[k].src), b = (unsigned)rifl_topo_find(t, c[k].dst);
        rifl_topo_route r[32], one;
        unsigned n = 0;
        CHECK_EQ_I(rifl_topo_routes_hosts(t, a, b, r, 32, &n, err, sizeof err), RIFL_OK);
        CHECK_MSG(n == c[k].routes, "%s %s->%s: %u routes", c[k].spec, c[k].src, c[k].dst, n);
        unsigned wrong = 0;
        for (unsigned i = 0; i < n; i++) {
            wrong += r[i].hops != c[k].hops || !route_arrives(t, &r[i], a, b);
            for (unsigned j = 0; j < i; j++)
                wrong += same_route(&r[i], &r[j]);
        }
        CHECK_MSG(wrong == 0, "%s %s->%s", c[k].spec, c[k].src, c[k].dst);
        CHECK_EQ_I(rifl_topo_route_hosts(t, a, b, &one, err, sizeof err), RIFL_OK);
        CHECK(n && same_route(&one, &r[0]));
        /* fewer asked for: the first ones */
        rifl_topo_route few[2];
        unsigned m = 0;
        CHECK_EQ_I(rifl_topo_routes_hosts(t, a, b, few, 2, &m, err, sizeof err), RIFL_OK);
        CHECK_EQ_U(m, n < 2 ? n : 2);
        CHECK(m == 0 || same_route(&few[0], &r[0]));
        rifl_topo_free(t);
    }
}

/* Every route leads where it was computed for, and the return route of a
 * cell that took it leads back to its source; wrong routes lead nowhere. */
static void t_follow(void)
{
    static const char *const specs[] = { "leafspine:4x3x3", "fattree:4" };
    for (size_t s = 0; s < 2; s++) {
        rifl_topology *t = NULL;
        char err[256];
        REQUIRE(rifl_topo_generate(specs[s], &t, err, sizeof err) == RIFL_OK);
        unsigned wrong = 0, checked = 0;
        for (unsigned a = 0; a < t->nnodes; a++)
            for (unsigned b = 0; b < t->nnodes; b++) {
                if (a == b || t->nodes[a].is_switch || t->nodes[b].is_switch)
                    continue;
                rifl_topo_route r[8];
                unsigned n = 0;
                if (rifl_topo_routes_hosts(t, a, b, r, 8, &n, err, sizeof err) != RIFL_OK) {
                    wrong++;
                    continue;
                }
                for (unsigned i = 0; i < n; i++) {
                    wrong += rifl_topo_follow(t, a, r[i].rel, r[i].hops) != (int)b;
                    /* the header as it arrives gives the way back */
                    rifl_l2_hdr h;
                    rifl_l2_hdr_make(&h, r[i].rel, r[i].hops);
                    for (unsigned k = 0; k < r[i].hops; k++)
                        rifl_l2_hdr_advance(&h, r[i].in_port[k], r[i].out_port[k]);
                    uint8_t back[RIFL_L2_MAX_HOPS];
                    unsigned hops;
                    wrong += rifl_l2_reverse_route(&h, back, &hops) != RIFL_OK ||
                             rifl_topo_follow(t, b, back, hops) != (int)a;
                    checked++;
                }
            }
        CHECK_EQ_U(wrong, 0);
        CHECK(checked > 100);
        /* one hop short ends at a switch; a port beyond the switch leads nowhere */
        unsigned a = (unsigned)rifl_topo_find(t, "h0"), b = (unsigned)rifl_topo_find(t, "h8");
        rifl_topo_route r;
        REQUIRE(rifl_topo_route_hosts(t, a, b, &r, err, sizeof err) == RIFL_OK);
        CHECK(r.hops > 1 && rifl_topo_follow(t, a, r.rel, r.hops - 1) == -1);
        uint8_t far[RIFL_L2_MAX_HOPS] = { 250 };
        CHECK_EQ_I(rifl_topo_follow(t, a, far, 1), -1);
        CHECK_EQ_I(rifl_topo_follow(t, a, r.rel, 0), -1);
        rifl_topo_free(t);
    }
}

/* Every host's routes to one destination at once are those asked pair by
 * pair, in the same order; an unreachable source gets the pair's error. */
static void t_routes_to(void)
{
    const char *specs[] = { "single:5", "leafspine:4x3x2", "fattree:4", "fattree:6" };
    for (unsigned k = 0; k < 4; k++) {
        rifl_topology *t = NULL;
        char err[256];
        REQUIRE(rifl_topo_generate(specs[k], &t, err, sizeof err) == RIFL_OK);
        enum { MAX = 4 }; /* fewer than fattree:6 has between pods: the cap counts */
        rifl_topo_route *all = calloc((size_t)t->nnodes * MAX, sizeof *all);
        unsigned *counts = calloc(t->nnodes, sizeof *counts);
        rifl_topo_route one[MAX];
        REQUIRE(all && counts);
        unsigned differ = 0, pairs = 0;
        for (unsigned d = 0; d < t->nnodes; d++) {
            if (t->nodes[d].is_switch)
                continue;
            REQUIRE(rifl_topo_routes_to(t, d, all, MAX, counts, err, sizeof err) == RIFL_OK);
            for (unsigned s = 0; s < t->nnodes; s++) {
                if (t->nodes[s].is_switch || s == d) {
                    differ += counts[s] != 0;
                    continue;
                }
                unsigned c = 0;
                REQUIRE(rifl_topo_routes_hosts(t, s, d, one, MAX, &c, err, sizeof err) ==
                        RIFL_OK);
                differ += c != counts[s] ||
                          memcmp(one, all + (size_t)s * MAX, c * sizeof *one) != 0;
                pairs++;
            }
        }
        CHECK_EQ_U(differ, 0);
        CHECK(pairs > 10);
        free(all);
        free(counts);
        rifl_topo_free(t);
    }
    /* a host in a part of its own */
    const char *text = "switch s1 2\nswitch s2 2\nhost a\nhost b\nhost c\n"
                       "link a s1:0\nlink b s1:1\nlink c s2:0\n";
    rifl_topology *t = NULL;
    char err[256];
    REQUIRE(rifl_topo_parse(text, strlen(text), &t, err, sizeof err) == RIFL_OK);
    rifl_topo_route r[5 * 2];
    unsigned counts[5];
    CHECK_EQ_I(rifl_topo_routes_to(t, (unsigned)rifl_topo_find(t, "c"), r, 2, counts, err,
                                   sizeof err),
               RIFL_ERR_UNREACHABLE);
    CHECK(strstr(err, "disconnected") != NULL);
    CHECK_EQ_I(rifl_topo_routes_to(t, (unsigned)rifl_topo_find(t, "s1"), r, 2, counts, err,
                                   sizeof err),
               RIFL_ERR_INVALID_ARG);
    rifl_topo_free(t);
}

static void t_flow_paths(void)
{
    /* a flow keeps its path; flows spread over every path */
    unsigned use[8] = { 0 }, moved = 0;
    for (uint64_t f = 0; f < 8000; f++) {
        unsigned p = rifl_topo_flow_path(3, 60, f, 8);
        moved += p != rifl_topo_flow_path(3, 60, f, 8) || p >= 8;
        use[p & 7]++;
    }
    CHECK_EQ_U(moved, 0);
    for (unsigned p = 0; p < 8; p++)
        CHECK_MSG(use[p] > 800 && use[p] < 1200, "path %u: %u of 8000 flows", p, use[p]);
    CHECK_EQ_U(rifl_topo_flow_path(1, 2, 99, 1), 0);
    CHECK_EQ_U(rifl_topo_flow_path(1, 2, 99, 0), 0);
}

/* A ring of n 4-port switches (two hosts each, port 2 to the next switch's
 * port 3), optionally with one link cut, as topology text. */
static void ring_text(char *buf, size_t n_buf, unsigned n, bool cut)
{
    size_t at = 0;
    for (unsigned k = 0; k < n; k++)
        at += (size_t)snprintf(buf + at, n_buf - at,
                               "switch s%u 4\nhost a%u\nhost b%u\nlink a%u s%u:0\n"
                               "link b%u s%u:1\n", k, k, k, k, k, k, k);
    for (unsigned k = 0; k < n - (cut ? 1 : 0); k++)
        at += (size_t)snprintf(buf + at, n_buf - at, "link s%u:2 s%u:3\n", k, (k + 1) % n);
}

/* The VOQ waits of a cycle found: each VOQ's output port leads to the next
 * VOQ's switch and input port, the last to the first. */
static bool cycle_closes(const rifl_topology *t, const rifl_topo_voq *c, unsigned len)
{
    for (unsigned k = 0; k < len; k++) {
        const rifl_topo_voq *a = &c[k], *b = &c[(k + 1) % len];
        const rifl_topo_node *S = &t->nodes[a->sw];
        if (!S->is_switch || S->peer[a->out_port] != b->sw ||
            S->peer_port[a->out_port] != b->in_port)
            return false;
    }
    return true;
}

static void t_wait_cycles(void)
{
    char text[4096], err[256];
    int rc;
    rifl_topo_voq cyc[16];
    unsigned len = 99;
    /* shortest routes round a ring of 6 (3 hops either way: the lowest
     * ports win the ties) wait on each other all the way round */
    ring_text(text, sizeof text, 6, false);
    rifl_topology *t = parse(text, err, sizeof err, &rc);
    REQUIRE(rc == RIFL_OK && t);
    CHECK_EQ_I(rifl_topo_wait_cycle(t, 1, cyc, 16, &len, err, sizeof err), RIFL_OK);
    CHECK_EQ_U(len, 6);
    CHECK(len <= 16 && cycle_closes(t, cyc, len));
    /* only the first VOQs when there is less room */
    rifl_topo_voq two[2];
    CHECK_EQ_I(rifl_topo_wait_cycle(t, 1, two, 2, &len, err, sizeof err), RIFL_OK);
    CHECK(len == 6 && two[0].sw == cyc[0].sw && two[1].sw == cyc[1].sw);
    CHECK_EQ_I(rifl_topo_wait_cycle(t, 1, NULL, 0, &len, err, sizeof err), RIFL_OK);
    CHECK_EQ_U(len, 6);
    rifl_topo_free(t);
    /* a ring of 4: shortest routes cross at most two links, both ways
     * round with two paths, so a VOQ from one ring link to the next waits
     * only on VOQs to hosts: no cycle */
    ring_text(text, sizeof text, 4, false);
    t = parse(text, err, sizeof err, &rc);
    REQUIRE(rc == RIFL_OK && t);
    len = 99;
    CHECK_EQ_I(rifl_topo_wait_cycle(t, 2, cyc, 16, &len, err, sizeof err), RIFL_OK);
    CHECK_EQ_U(len, 0);
    rifl_topo_free(t);
    /* a ring of 5 cut open is a line: no cycle */
    ring_text(text, sizeof text, 5, true);
    t = parse(text, err, sizeof err, &rc);
    REQUIRE(rc == RIFL_OK && t);
    len = 99;
    CHECK_EQ_I(rifl_topo_wait_cycle(t, 1, cyc, 16, &len, err, sizeof err), RIFL_OK);
    CHECK_EQ_U(len, 0);
    CHECK_EQ_I(rifl_topo_wait_cycle(t, 0, cyc, 16, &len, err, sizeof err),
               RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_topo_wait_cycle(t, 1, NULL, 4, &len, err, sizeof err),
               RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_topo_wait_cycle(t, 1, cyc, 16, NULL, err, sizeof err),
               RIFL_ERR_INVALID_ARG);
    rifl_topo_free(t);
    CHECK_EQ_I(rifl_topo_wait_cycle(NULL, 1, cyc, 16, &len, err, sizeof err),
               RIFL_ERR_INVALID_ARG);
    /* trees: a leaf-spine and a fat tree, with every shortest path */
    const char *trees[] = { "leafspine:4x4x2", "fattree:4", "single:8" };
    for (unsigned k = 0; k < 3; k++) {
        REQUIRE(rifl_topo_generate(trees[k], &t, err, sizeof err) == RIFL_OK);
        len = 99;
        CHECK_EQ_I(rifl_topo_wait_cycle(t, 64, cyc, 16, &len, err, sizeof err), RIFL_OK);
        CHECK_MSG(len == 0, "%s: a cycle of %u", trees[k], len);
        rifl_topo_free(t);
    }
}

TEST_MAIN({ "parse_ok", t_parse_ok }, { "parse_errors", t_parse_errors },
          { "wait_cycles", t_wait_cycles },
          { "link_settings", t_link_settings },
          { "chain_routes", t_chain_routes },
          { "shortest_and_disconnected", t_shortest_and_disconnected },
          { "generators", t_generators }, { "all_routes", t_all_routes },
          { "follow", t_follow }, { "routes_to", t_routes_to },
          { "flow_paths", t_flow_paths })

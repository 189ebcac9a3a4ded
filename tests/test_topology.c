/* Topology files: parsing, line-numbered errors, shortest routes of at most
 * five hops, unreachable and too-far destinations. */
#include "testlib.h"

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
        { "host a\nswitch s 4\nlink a s:0 wait 3\n", "expected 'link" },
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

TEST_MAIN({ "parse_ok", t_parse_ok }, { "parse_errors", t_parse_errors },
          { "chain_routes", t_chain_routes },
          { "shortest_and_disconnected", t_shortest_and_disconnected })

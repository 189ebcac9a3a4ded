/* `sim net`: a rack over real lanes.  Lossless under bit errors and
 * overload, the unloaded path of 17 cell times, the same results by
 * reference as by content, reproducible from the seed, per-VOQ flow control
 * protecting a victim flow, bonded links, and refusals of bad
 * configurations. */
#include "testlib.h"

#include <math.h>

#include "rifl/frame.h"
#include "rifl/nic.h"
#include "rifl/sim/netsim.h"

static rifl_topology *gen(const char *spec)
{
    rifl_topology *t = NULL;
    char err[256];
    return rifl_topo_generate(spec, &t, err, sizeof err) == RIFL_OK ? t : NULL;
}

static int run(const rifl_net_config *c, rifl_net_result *r)
{
    rifl_net *n = NULL;
    char err[256];
    int rc = rifl_net_create(c, &n, err, sizeof err);
    if (rc != RIFL_OK) {
        printf("  create: %s\n", err);
        return rc;
    }
    while ((rc = rifl_net_run(n, 50000)) == 0)
        ;
    if (rc < 0) {
        rifl_net_free(n);
        return rc;
    }
    rc = rifl_net_result_get(n, r);
    rifl_net_free(n);
    return rc;
}

static void clean(const rifl_net_result *r)
{
    CHECK(r->finished);
    CHECK_EQ_U(r->dropped, 0);
    CHECK_EQ_U(r->lost, 0);
    CHECK_EQ_U(r->corrupt, 0);
    CHECK_EQ_U(r->undelivered, 0);
    CHECK_EQ_U(r->delivered_cells, r->generated_cells);
    CHECK(r->generated_cells > 0);
}

static void t_unloaded_path(void)
{
    rifl_topology *t = gen("single:32");
    REQUIRE(t);
    rifl_net_config c = rifl_net_default_config;
    c.topo = t;
    c.load = 0.01;
    rifl_net_result r;
    REQUIRE(run(&c, &r) == RIFL_OK);
    clean(&r);
    /* the paper's 17 cell times, every cell alike when nothing queues */
    CHECK_MSG(fabs(r.latency.p50 - 17 * r.cell_ns) < 0.01, "p50 %.2f ns, cell %.2f ns",
              r.latency.p50, r.cell_ns);
    CHECK_EQ_U(r.path_cells[1], r.delivered_cells);
    double sum = 0;
    for (unsigned k = 0; k < 5; k++)
        sum += r.segment_ns[1][k];
    CHECK(fabs(sum - r.latency.mean) < 0.5);
    rifl_net_result_free(&r);
    rifl_topo_free(t);
}

/* Bursty messages of 1 to 1500 bytes at a high BER on topology t: the
 * lossless runs below start from it. */
static rifl_net_config bursty_ber(const rifl_topology *t, double load, double long_window_ns)
{
    rifl_net_config c = rifl_net_default_config;
    c.topo = t;
    c.load = load;
    c.arrivals = RIFL_NET_BURSTY;
    c.msg_min = 1;
    c.msg_max = 1500;
    c.ber = 2e-6;
    c.warmup_ns = 3000;
    c.window_ns = test_long_run ? long_window_ns : 15000;
    c.seed = test_seed;
    return c;
}

/* Run `c` again with every frame by content: the same result as `a`. */
static void same_by_content(rifl_net_config c, const rifl_net_result *a)
{
    rifl_net_result b;
    c.by_content = true;
    REQUIRE(run(&c, &b) == RIFL_OK);
    clean(&b);
    CHECK_EQ_U(a->replays, b.replays);
    CHECK_EQ_U(a->delivered_cells, b.delivered_cells);
    CHECK_EQ_U(a->fc_frames, b.fc_frames);
    CHECK(a->latency.mean == b.latency.mean && a->latency.max == b.latency.max);
    CHECK(a->mct.p99 == b.mct.p99);
    rifl_net_result_free(&b);
}

/* Replays at a high BER, bursts at high load across three switch hops:
 * every cell arrives once with its bytes; by reference as by content. */
static void t_lossless_ber(void)
{
    rifl_topology *t = gen("leafspine:3x2x3");
    REQUIRE(t);
    /* replays take a share of the links at this BER: a load they can still
     * carry, so that the window drains */
    rifl_net_config c = bursty_ber(t, test_long_run ? 0.6 : 0.9, 200000);
    if (test_long_run)
        c.ber = 1e-6;
    rifl_net_result a;
    REQUIRE(run(&c, &a) == RIFL_OK);
    clean(&a);
    CHECK(a.replays > 0);
    CHECK(a.verify_fails > 0);
    CHECK(a.path_cells[3] > 0 && a.path_cells[1] > 0);
    same_by_content(c, &a);
    rifl_net_result_free(&a);
    rifl_topo_free(t);
}

/* An ON notice held up by a replay on its link comes after its VOQ's
 * headroom is gone: the switch input keeps the cell and stops reading its
 * lane (the lane's flow control holds the sender) instead of dropping it.
 * leafspine:2x2x2 at 70% load and BER 1e-6, seed 1, fills a VOQ so. */
static void t_full_voq_waits(void)
{
    rifl_topology *t = gen("leafspine:2x2x2");
    REQUIRE(t);
    rifl_net_config c = rifl_net_default_config;
    c.topo = t;
    c.load = 0.7;
    c.ber = 1e-6;
    c.seed = 1;
    rifl_net_result a;
    REQUIRE(run(&c, &a) == RIFL_OK);
    clean(&a);
    CHECK(a.voq_full_waits > 0);
    CHECK(a.replays > 0);
    rifl_net_result_free(&a);
    rifl_topo_free(t);
}

static void t_reproducible(void)
{
    rifl_topology *t = gen("single:8");
    REQUIRE(t);
    rifl_net_config c = rifl_net_default_config;
    c.topo = t;
    c.load = 0.8;
    c.window_ns = 10000;
    c.seed = 11;
    rifl_net_result a, b, d;
    REQUIRE(run(&c, &a) == RIFL_OK);
    REQUIRE(run(&c, &b) == RIFL_OK);
    c.seed = 12;
    REQUIRE(run(&c, &d) == RIFL_OK);
    clean(&a);
    CHECK_EQ_U(a.generated_cells, b.generated_cells);
    CHECK(a.latency.mean == b.latency.mean && a.latency.p99 == b.latency.p99);
    CHECK(a.generated_cells != d.generated_cells || a.latency.mean != d.latency.mean);
    rifl_net_result_free(&a);
    rifl_net_result_free(&b);
    rifl_net_result_free(&d);
    rifl_topo_free(t);
}

/* Incast at full load: nothing is dropped under either flow control; with
 * per-VOQ flow control the victim flow (h1 to h6) keeps its share, with the
 * lanes' ON/OFF alone it waits behind the paused incast. */
/* Five hosts of single:8 overloading h0 at full load, h1 also sending to
 * h6 (the victim flow). */
static rifl_net_config incast_config(const rifl_topology *t)
{
    rifl_net_config c = rifl_net_default_config;
    c.topo = t;
    c.pattern = RIFL_NET_INCAST;
    c.incast = 5;
    c.load = 1.0;
    c.window_ns = 20000;
    return c;
}

static void t_incast_victim(void)
{
    rifl_topology *t = gen("single:8");
    REQUIRE(t);
    rifl_net_config c = incast_config(t);
    rifl_net_result v, l;
    REQUIRE(run(&c, &v) == RIFL_OK);
    c.fc = RIFL_NET_FC_LINK;
    REQUIRE(run(&c, &l) == RIFL_OK);
    clean(&v);
    clean(&l);
    CHECK(v.fc_frames > 0);
    CHECK(v.max_voq_cells <= rifl_switch_min_voq_cells(1000));
    /* five senders share h0's link: h1 sends half its trains to the
     * victim, which per-VOQ flow control lets through at its own pace */
    CHECK_MSG(v.victim_gbps > 2 * l.victim_gbps, "victim %.2f Gbit/s with voq, %.2f with link",
              v.victim_gbps, l.victim_gbps);
    CHECK(v.victim_gbps > 20);
    rifl_net_result_free(&v);
    rifl_net_result_free(&l);
    rifl_topo_free(t);
}

/* A finite workload under every pattern: exactly the bytes owed arrive,
 * every message measured, and the run ends when they have. */
static void t_finite(void)
{
    rifl_topology *t = gen("single:6");
    REQUIRE(t);
    const rifl_net_pattern pats[] = { RIFL_NET_UNIFORM, RIFL_NET_PERMUTATION, RIFL_NET_INCAST,
                                      RIFL_NET_ALL_TO_ALL };
    for (unsigned k = 0; k < 4; k++) {
        rifl_net_config c = rifl_net_default_config;
        c.topo = t;
        c.pattern = pats[k];
        c.incast = 3;
        c.load = 0.8;
        c.arrivals = RIFL_NET_BURSTY;
        c.msg_min = 100;
        c.msg_max = 700;
        c.bytes_per_flow = 20000;
        c.seed = test_seed + k;
        rifl_net_result r;
        REQUIRE(run(&c, &r) == RIFL_OK);
        clean(&r);
        CHECK(r.finite);
        /* flows: 6 x 5, 6, 3 + the victim, 6 x 5 */
        unsigned flows = k == 1 ? 6 : k == 2 ? 4 : 30;
        CHECK_MSG(r.completed_messages >= flows * (20000 / 700) &&
                      r.completed_messages <= flows * (20000 / 100 + 1),
                  "pattern %u: %llu messages", k, (unsigned long long)r.completed_messages);
        /* payload delivered: exactly the bytes owed (throughput x time) */
        double bytes = r.throughput_gbps_mean * r.hosts * r.sim_ns / 8;
        CHECK_MSG(fabs(bytes - 20000.0 * flows) < 1, "pattern %u: %.0f bytes", k, bytes);
        rifl_net_result_free(&r);
    }
    rifl_topo_free(t);
}

/* Incast: only its senders offer load, so the offered mean over hosts
 * counts the others as 0 and matches what arrives while host 0's link
 * keeps up. */
static void t_incast_offered(void)
{
    rifl_topology *t = gen("single:16");
    REQUIRE(t);
    rifl_net_config c = rifl_net_default_config;
    c.topo = t;
    c.pattern = RIFL_NET_INCAST;
    c.incast = 4;
    c.load = 0.1;
    c.warmup_ns = 3000;
    c.window_ns = 100000;
    c.seed = test_seed;
    rifl_net_result r;
    REQUIRE(run(&c, &r) == RIFL_OK);
    clean(&r);
    CHECK_MSG(fabs(r.throughput_gbps_mean / r.offered_gbps - 1) < 0.1,
              "incast: %.3f Gbit/s per host against %.3f offered", r.throughput_gbps_mean,
              r.offered_gbps);
    rifl_net_result_free(&r);
    rifl_topo_free(t);
}

/* Bursty trains count cells: a train's draw is geometric in cells
 * (burst_bytes / 256 on average) and ends with the message in which it
 * runs out, so trains of large messages hold more than one.  The idle
 * gaps keep the offered load exact all the same, and bursty traffic of
 * variable messages is no longer Bernoulli traffic under another name. */
static void t_bursts_in_cells(void)
{
    rifl_topology *t = gen("single:8");
    REQUIRE(t);
    double p99[2];
    for (unsigned k = 0; k < 2; k++) {
        rifl_net_config c = rifl_net_default_config;
        c.topo = t;
        c.load = 0.3;
        c.arrivals = k ? RIFL_NET_BURSTY : RIFL_NET_BERNOULLI;
        c.msg_min = 64;
        c.msg_max = 2048;
        c.warmup_ns = 3000;
        c.window_ns = 300000;
        c.seed = test_seed;
        rifl_net_result r;
        REQUIRE(run(&c, &r) == RIFL_OK);
        clean(&r);
        CHECK_MSG(fabs(r.throughput_gbps_mean / r.offered_gbps - 1) < 0.04,
                  "%s: %.3f Gbit/s per host against %.3f offered", k ? "bursty" : "bernoulli",
                  r.throughput_gbps_mean, r.offered_gbps);
        p99[k] = r.latency.p99;
        rifl_net_result_free(&r);
    }
    /* several messages back to back to one host wait behind each other */
    CHECK_MSG(p99[1] > 1.08 * p99[0], "p99 %.1f ns bursty, %.1f Bernoulli", p99[1], p99[0]);
    rifl_topo_free(t);
}

static void t_cdf(void)
{
    rifl_net_cdf c;
    char err[256];
    const char *ok = "# sizes\n100 0.25\n  1000 0.5 # half\n\n10000 1\n";
    REQUIRE(rifl_net_cdf_parse(ok, strlen(ok), &c, err, sizeof err) == RIFL_OK);
    CHECK_EQ_U(c.n, 3);
    CHECK_EQ_U(rifl_net_cdf_size(&c, 0.0), 100);
    CHECK_EQ_U(rifl_net_cdf_size(&c, 0.2), 100);
    CHECK_EQ_U(rifl_net_cdf_size(&c, 0.375), 550);  /* halfway from 100 to 1000 */
    CHECK_EQ_U(rifl_net_cdf_size(&c, 0.75), 5500);
    CHECK_EQ_U(rifl_net_cdf_size(&c, 0.999999), 10000);
    const char *pct = "64 50\n1500 100\n";
    REQUIRE(rifl_net_cdf_parse(pct, strlen(pct), &c, err, sizeof err) == RIFL_OK);
    CHECK(c.p[0] == 0.5 && c.p[1] == 1.0);
    static const struct {
        const char *text, *want;
    } bad[] = {
        { "", "no points" },           { "100\n", "not two numbers" },
        { "100 0.5 x\n", "after" },    { "0 1\n", "whole number" },
        { "2000000 1\n", "whole number" }, { "10.5 1\n", "whole number" },
        { "10 -1\n", "fraction" },     { "10 0.5\n5 1\n", "not decrease" },
        { "10 0.6\n20 0.5\n", "not decrease" }, { "10 0.5\n", "must be 1" },
    };
    for (unsigned k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        err[0] = 0;
        CHECK_EQ_I(rifl_net_cdf_parse(bad[k].text, strlen(bad[k].text), &c, err, sizeof err),
                   RIFL_ERR_PARSE);
        CHECK_MSG(strstr(err, bad[k].want) != NULL, "'%s': %s", bad[k].text, err);
    }
    /* the last P not 1: the line of the last point, not of a blank or
     * comment line after it */
    static const char tail[] = "100 0.5\n200 0.9\n\n\n# end of table\n";
    err[0] = 0;
    CHECK_EQ_I(rifl_net_cdf_parse(tail, sizeof tail - 1, &c, err, sizeof err), RIFL_ERR_PARSE);
    CHECK_MSG(strstr(err, "line 2: the last P is 0.9") != NULL, "%s", err);
    /* a NUL byte anywhere on a line, also first, is refused */
    static const char nul[] = "\0junk\n100 1\n";
    err[0] = 0;
    CHECK_EQ_I(rifl_net_cdf_parse(nul, sizeof nul - 1, &c, err, sizeof err), RIFL_ERR_PARSE);
    CHECK_MSG(strstr(err, "line 1: a NUL byte") != NULL, "%s", err);
    /* a CDF built by hand: every point checked, the bad one named */
    {
        rifl_topology *t1 = gen("single:4");
        REQUIRE(t1);
        static const struct {
            unsigned n;
            uint32_t bytes[3];
            double p[3];
            const char *want; /* NULL: taken */
        } hand[] = {
            { 3, { 100, 1000, 10000 }, { 0.25, 0.5, 1 }, NULL },
            { 3, { 100, 4000000000u, 4000000000u }, { 0.25, 0.5, 1 }, "point 2 of 3: 4000000000 bytes" },
            { 3, { 0, 1000, 10000 }, { 0.25, 0.5, 1 }, "point 1 of 3: 0 bytes" },
            { 3, { 100, 1000, 10000 }, { 0.25, NAN, 1 }, "point 2 of 3: P = nan" },
            { 3, { 100, 1000, 10000 }, { -0.1, 0.5, 1 }, "point 1 of 3: P = -0.1" },
            { 3, { 100, 1000, 10000 }, { 0.25, 0.5, 0.6 }, "point 3 of 3: the last P is 0.6" },
            { 3, { 100, 1000, 10000 }, { 0.25, 0.5, 50 }, "point 3 of 3: P = 50" },
            { 3, { 100, 50, 10000 }, { 0.25, 0.5, 1 }, "point 2 of 3: 50 bytes" },
            { 3, { 100, 1000, 10000 }, { 0.5, 0.25, 1 }, "point 2 of 3: 1000 bytes at P = 0.25" },
            { 0, { 0, 0, 0 }, { 0, 0, 0 }, "0 points" },
        };
        for (unsigned k = 0; k < sizeof hand / sizeof hand[0]; k++) {
            rifl_net_cdf h;
            memset(&h, 0, sizeof h);
            h.n = hand[k].n;
            memcpy(h.bytes, hand[k].bytes, sizeof hand[k].bytes);
            memcpy(h.p, hand[k].p, sizeof hand[k].p);
            rifl_net_config hc = rifl_net_default_config;
            hc.topo = t1;
            hc.sizes = &h;
            rifl_net *n = NULL;
            err[0] = 0;
            int rc = rifl_net_create(&hc, &n, err, sizeof err);
            CHECK_MSG(rc == (hand[k].want ? RIFL_ERR_CONFIG : RIFL_OK), "CDF %u: %d (%s)", k, rc,
                      err);
            CHECK_MSG(!hand[k].want || strstr(err, hand[k].want), "CDF %u: '%s' lacks '%s'", k,
                      err, hand[k].want ? hand[k].want : "");
            rifl_net_free(n);
        }
        rifl_topo_free(t1);
    }
    /* a run with sizes from a CDF: lossless, and the mean size as the CDF's */
    rifl_topology *t = gen("single:4");
    REQUIRE(t);
    const char *two = "100 0.5\n700 1\n";
    REQUIRE(rifl_net_cdf_parse(two, strlen(two), &c, err, sizeof err) == RIFL_OK);
    rifl_net_config cfg = rifl_net_default_config;
    cfg.topo = t;
    cfg.sizes = &c;
    cfg.load = 0.5;
    cfg.bytes_per_flow = 30000;
    rifl_net_result r;
    REQUIRE(run(&cfg, &r) == RIFL_OK);
    clean(&r);
    /* mean size 250 bytes: 12 flows of 30000 bytes in about 1440 messages */
    CHECK_MSG(r.completed_messages > 1300 && r.completed_messages < 1600, "%llu messages",
              (unsigned long long)r.completed_messages);
    rifl_net_result_free(&r);
    rifl_topo_free(t);
}

static rifl_topology *parse_text(const char *text)
{
    rifl_topology *t = NULL;
    char err[256] = "";
    if (rifl_topo_parse(text, strlen(text), &t, err, sizeof err) != RIFL_OK)
        printf("  parse: %s\n", err);
    return t;
}

/* A topology file's links with their own cable, transceivers and bit error
 * rates: a file giving every link the run's settings runs exactly as the
 * run's settings; a link of its own BER replays alone; a long cable gets
 * its own K and delay, and its host's cells take that much longer. */
static void t_link_settings(void)
{
    /* single:4 as a file, every link at 2e-6 both ways, against --ber 2e-6 */
    rifl_topology *g = gen("single:4");
    rifl_topology *f = parse_text("switch s0 4\n"
                                  "host h0\nlink h0 s0:0 ber 2e-6\n"
                                  "host h1\nlink h1 s0:1 ber-ab 2e-6 ber-ba 2e-6\n"
                                  "host h2\nlink h2 s0:2 ber 2e-6 cable 2 transceiver 80\n"
                                  "host h3\nlink h3 s0:3 ber 2e-6\n");
    REQUIRE(g && f);
    rifl_net_config c = rifl_net_default_config;
    c.load = 0.8;
    c.window_ns = 10000;
    c.seed = test_seed;
    c.topo = g;
    c.ber = 2e-6;
    rifl_net_result a, b;
    REQUIRE(run(&c, &a) == RIFL_OK);
    c.topo = f;
    c.ber = 0;
    REQUIRE(run(&c, &b) == RIFL_OK);
    clean(&a);
    clean(&b);
    CHECK(a.replays > 0);
    CHECK_EQ_U(a.replays, b.replays);
    CHECK_EQ_U(a.delivered_cells, b.delivered_cells);
    CHECK(a.latency.mean == b.latency.mean && a.latency.max == b.latency.max);
    for (unsigned i = 0; i < 2 * b.links; i++)
        CHECK(b.link[i].ber == 2e-6 && b.link[i].cable_m == 2);
    rifl_net_result_free(&a);
    rifl_net_result_free(&b);
    rifl_topo_free(f);

    /* one bad direction (s0 to h1), one 100 m cable (h2) */
    f = parse_text("switch s0 4\n"
                   "host h0\nlink h0 s0:0\n"
                   "host h1\nlink h1 s0:1 ber-ba 1e-5\n"
                   "host h2\nlink h2 s0:2 cable 100\n"
                   "host h3\nlink h3 s0:3\n");
    REQUIRE(f);
    c.topo = f;
    c.ber = 0;
    REQUIRE(run(&c, &b) == RIFL_OK);
    clean(&b);
    c.topo = g;
    REQUIRE(run(&c, &a) == RIFL_OK);
    clean(&a);
    CHECK_EQ_U(a.replays, 0);
    unsigned bad = 0;
    for (unsigned i = 0; i < 2 * b.links; i++) {
        const rifl_net_link *l = &b.link[i];
        bool is_bad = !strcmp(l->from, "s0:1") && !strcmp(l->to, "h1");
        bool is_long = !strcmp(l->from, "h2") || !strcmp(l->to, "h2");
        bad += is_bad;
        CHECK_MSG(is_bad ? l->replays > 0 && l->ber == 1e-5 : l->replays == 0 && l->ber == 0,
                  "%s -> %s: %" PRIu64 " replays at BER %g", l->from, l->to, l->replays,
                  l->ber);
        if (is_long) {
            /* 100 m: 500 ns more each way than 2 m's 10 ns */
            CHECK(l->cable_m == 100 && l->fid_bits > a.link[i].fid_bits);
            CHECK_MSG(l->delay_frames > a.link[i].delay_frames + 180, "%u against %u",
                      l->delay_frames, a.link[i].delay_frames);
        } else {
            CHECK(l->cable_m == 2 && l->fid_bits == a.link[i].fid_bits &&
                  l->delay_frames == a.link[i].delay_frames);
        }
    }
    CHECK_EQ_U(bad, 1);
    CHECK(b.latency.max > a.latency.max + 900); /* h2's cells cross 98 m twice as far */
    rifl_net_result_free(&a);
    rifl_net_result_free(&b);
    rifl_topo_free(f);

    /* a cable too long for any K on one link: refused, naming it */
    f = parse_text("switch s0 2\nhost h0\nlink h0 s0:0\nhost h1\nlink h1 s0:1 cable 1000\n");
    REQUIRE(f);
    c.topo = f;
    c.link_gbps = 400;
    rifl_net *n = NULL;
    char err[256] = "";
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(err, "the link s0:1 - h1 of 1000 m") != NULL, "%s", err);
    CHECK(n == NULL);
    rifl_topo_free(f);
    rifl_topo_free(g);
}

/* Links slower than the network's rate: a file giving every link the
 * network's rate runs as without; a 25 Gbit/s host link steps one slot in
 * four, has its own (shorter) delay in frames, carries its host's load of
 * its own rate, and its cells take longer.  Uplinks faster than the
 * hosts' links: the fastest link's slot is the time step, every cell
 * arrives, and a 400 Gbit/s uplink carries the two hosts behind it at
 * about a quarter of the utilisation of their own links. */
static void t_link_rates(void)
{
    rifl_topology *g = gen("single:4");
    rifl_topology *f = parse_text("switch s0 4\n"
                                  "host h0\nlink h0 s0:0 rate 100\n"
                                  "host h1\nlink h1 s0:1 rate 100\n"
                                  "host h2\nlink h2 s0:2 rate 100\n"
                                  "host h3\nlink h3 s0:3 rate 100\n");
    REQUIRE(g && f);
    rifl_net_config c = rifl_net_default_config;
    c.load = 0.3;
    c.window_ns = 20000;
    c.seed = test_seed;
    c.topo = g;
    rifl_net_result a, b;
    REQUIRE(run(&c, &a) == RIFL_OK);
    c.topo = f;
    REQUIRE(run(&c, &b) == RIFL_OK);
    clean(&a);
    clean(&b);
    CHECK_EQ_U(a.delivered_cells, b.delivered_cells);
    CHECK(a.latency.mean == b.latency.mean && a.latency.max == b.latency.max);
    rifl_net_result_free(&b);
    rifl_topo_free(f);

    f = parse_text("switch s0 4\n"
                   "host h0\nlink h0 s0:0\n"
                   "host h1\nlink h1 s0:1 rate 25\n"
                   "host h2\nlink h2 s0:2\n"
                   "host h3\nlink h3 s0:3\n");
    REQUIRE(f);
    c.topo = f;
    REQUIRE(run(&c, &b) == RIFL_OK);
    clean(&b);
    for (unsigned i = 0; i < 2 * b.links; i++) {
        const rifl_net_link *l = &b.link[i], *o = &a.link[i];
        bool slow = !strcmp(l->from, "h1") || !strcmp(l->to, "h1");
        CHECK_MSG(l->rate_gbps == (slow ? 25 : 100), "%s -> %s at %g", l->from, l->to,
                  l->rate_gbps);
        /* 90 ns of cable and transceivers: 35 slots of 2.56 ns, 9 of 10.24 */
        CHECK_EQ_U(l->delay_frames, slow ? 9u : o->delay_frames);
        CHECK(l->utilisation > 0 && l->utilisation < 1);
    }
    /* h1 offers 0.3 of 25 Gbit/s: its link up carries about a quarter of
     * what h0's does, at about the same utilisation */
    const rifl_net_link *up0 = NULL, *up1 = NULL;
    for (unsigned i = 0; i < 2 * b.links; i++) {
        if (!strcmp(b.link[i].from, "h0"))
            up0 = &b.link[i];
        if (!strcmp(b.link[i].from, "h1"))
            up1 = &b.link[i];
    }
    REQUIRE(up0 && up1);
    CHECK_MSG(fabs(up1->utilisation - up0->utilisation) < 0.1, "h1 %.3f, h0 %.3f",
              up1->utilisation, up0->utilisation);
    /* the three others send h1 about 26 Gbit/s, more than its link's 21.9
     * of payload: busy all through the window (what it sends in the drain
     * after it is not counted) */
    for (unsigned i = 0; i < 2 * b.links; i++)
        if (!strcmp(b.link[i].to, "h1"))
            CHECK_MSG(b.link[i].utilisation > 0.9 && b.link[i].utilisation <= 1.0,
                      "s0 -> h1: %.3f", b.link[i].utilisation);
    CHECK(b.latency.max > a.latency.max + 50);
    CHECK(b.offered_gbps < a.offered_gbps * 0.85 && b.offered_gbps > a.offered_gbps * 0.75);
    rifl_net_result_free(&a);
    rifl_net_result_free(&b);
    rifl_topo_free(f);

    /* faster uplinks: two leaves of two hosts, one spine at 400 Gbit/s */
    f = parse_text("switch l0 3\nswitch l1 3\nswitch sp 2\n"
                   "host h0\nhost h1\nhost h2\nhost h3\n"
                   "link h0 l0:0\nlink h1 l0:1\nlink h2 l1:0\nlink h3 l1:1\n"
                   "link l0:2 sp:0 rate 400\nlink l1:2 sp:1 rate 400\n");
    REQUIRE(f);
    c.topo = f;
    c.load = 0.8;
    c.pattern = RIFL_NET_PERMUTATION;
    REQUIRE(run(&c, &b) == RIFL_OK);
    clean(&b);
    CHECK(fabs(b.slot_ns - 256.0 / 400) < 1e-9);
    double host_up = 0, uplink = 0;
    for (unsigned i = 0; i < 2 * b.links; i++) {
        const rifl_net_link *l = &b.link[i];
        bool fast = l->from[0] != 'h' && l->to[0] != 'h';
        CHECK_EQ_U((unsigned)l->rate_gbps, fast ? 400u : 100u);
        CHECK(l->utilisation <= 1.0);
        if (!strcmp(l->from, "h0"))
            host_up = l->utilisation;
        if (!strcmp(l->from, "l0:2"))
            uplink = l->utilisation;
    }
    CHECK_MSG(host_up > 0.7, "h0's link %.3f", host_up);
    /* the permutation sends some of l0's traffic across the spine: at most
     * its two hosts' 200 Gbit/s into 400 */
    CHECK_MSG(uplink < 0.55, "l0 -> spine %.3f", uplink);
    rifl_net_result_free(&b);
    rifl_topo_free(f);
    rifl_topo_free(g);
}

/* The NIC's host interface: unloaded, a read's round trip and a write's
 * half plus each message's bytes at the DMA rate come on top of the 17 cell
 * times (and up to a cell time for the host to take the message read);
 * a DMA slower than the offered load caps what each host receives, the
 * sources wait, and nothing is lost. */
static void t_host_interface(void)
{
    rifl_topology *t = gen("single:8");
    REQUIRE(t);
    rifl_net_config c = rifl_net_default_config;
    c.topo = t;
    c.load = 0.01;
    c.pcie_gbps = 90;
    c.pcie_rtt_ns = 2500;
    rifl_net_result r;
    REQUIRE(run(&c, &r) == RIFL_OK);
    clean(&r);
    double bytes_ns = 252 * 8 / 90.0, slot = r.slot_ns;
    double want = 17 * r.cell_ns + 2500 + 1250 + 2 * bytes_ns;
    CHECK_MSG(r.latency.p50 >= want - slot && r.latency.p50 <= want + r.cell_ns + 2 * slot,
              "p50 %.2f ns, model %.2f ns", r.latency.p50, want);
    double want_head = 17 * r.cell_ns + 1250 + bytes_ns;
    CHECK_MSG(fabs(r.latency_head.p50 - want_head) <= 2 * slot, "head p50 %.2f ns, model %.2f",
              r.latency_head.p50, want_head);
    CHECK(fabs(r.mct.p50 - r.latency.p50) <= slot);
    rifl_net_result_free(&r);
    /* 20 Gbit/s of DMA against 0.5 x 87.5 offered: the sources wait (a
     * closed loop, whose window holds few messages) */
    c.load = 0.5;
    c.pcie_gbps = 20;
    c.window_ns = 20000;
    c.nic_messages = 64;
    REQUIRE(run(&c, &r) == RIFL_OK);
    CHECK_EQ_U(r.dropped, 0);
    CHECK_EQ_U(r.lost, 0);
    CHECK_EQ_U(r.corrupt, 0);
    CHECK_MSG(r.throughput_gbps_max <= 20 * 1.02 && r.throughput_gbps_mean > 20 * 0.9,
              "throughput %.2f .. %.2f Gbit/s per host", r.throughput_gbps_min,
              r.throughput_gbps_max);
    CHECK(r.source_stalls > 0);
    rifl_net_result_free(&r);
    /* four senders to host 0, whose writes to memory take 20 Gbit/s: its
     * NIC stops reading the link, the cells wait in the switch's VOQs,
     * which pause the senders; nothing is lost */
    c.pattern = RIFL_NET_INCAST;
    c.incast = 4;
    c.load = 0.2;
    c.nic_messages = rifl_net_default_config.nic_messages;
    REQUIRE(run(&c, &r) == RIFL_OK);
    clean(&r);
    CHECK(r.throughput_gbps_max <= 20 * 1.02);
    CHECK_MSG(r.max_voq_cells > 4 && r.fc_frames > 0, "VOQs up to %" PRIu64 " cells, %" PRIu64
              " flow-control frames", r.max_voq_cells, r.fc_frames);
    rifl_net_result_free(&r);
    /* refused */
    rifl_net *n = NULL;
    char err[256] = "";
    c.pcie_gbps = 0.5;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(err, "host interface") != NULL, "%s", err);
    c.pcie_gbps = 90;
    c.pcie_rtt_ns = -1;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(n == NULL);
    rifl_topo_free(t);
}

/* Credits per virtual lane on every link: lossless under bit errors and
 * overload, the same by reference as by content, reproducible, inputs
 * holding no more than their credit, and VLs keeping a victim flow apart
 * from an incast as per-VOQ flow control does. */
static void t_credit(void)
{
    rifl_topology *t = gen("leafspine:3x2x3");
    REQUIRE(t);
    rifl_net_config c = bursty_ber(t, 0.9, 200000);
    c.fc = RIFL_NET_FC_CREDIT;
    rifl_net_result a, b, d;
    REQUIRE(run(&c, &a) == RIFL_OK);
    clean(&a);
    CHECK(a.replays > 0);
    CHECK(a.fc_frames > 0);
    CHECK_EQ_U(a.vls, 4);
    CHECK(a.credit_cells > 0);
    c.by_content = true;
    REQUIRE(run(&c, &b) == RIFL_OK);
    c.by_content = false;
    REQUIRE(run(&c, &d) == RIFL_OK);
    CHECK_EQ_U(a.delivered_cells, b.delivered_cells);
    CHECK_EQ_U(a.fc_frames, b.fc_frames);
    CHECK_EQ_U(a.credit_waits, b.credit_waits);
    CHECK(a.latency.mean == b.latency.mean && a.mct.p99 == b.mct.p99);
    CHECK_EQ_U(a.delivered_cells, d.delivered_cells);
    CHECK(a.latency.max == d.latency.max && a.latency.mean == d.latency.mean);
    rifl_net_result_free(&a);
    rifl_net_result_free(&b);
    rifl_net_result_free(&d);
    /* overload on tight credit: no VOQ holds more than its input's credit */
    c.load = 1.0;
    c.ber = 0;
    c.vls = 2;
    c.credit_cells = 3;
    c.pattern = RIFL_NET_ALL_TO_ALL;
    REQUIRE(run(&c, &a) == RIFL_OK);
    CHECK_EQ_U(a.dropped, 0);
    CHECK_EQ_U(a.lost, 0);
    CHECK_EQ_U(a.corrupt, 0);
    CHECK(a.delivered_cells > 0);
    CHECK(a.credit_waits > 0);
    CHECK_MSG(a.max_voq_cells <= 2 * 3, "a VOQ held %llu cells, the input's credit is 6",
              (unsigned long long)a.max_voq_cells);
    rifl_net_result_free(&a);
    rifl_topo_free(t);
    /* incast with a victim: h1 sends to h0 (VL 0) and h6 (VL 6 mod vls) */
    t = gen("single:8");
    REQUIRE(t);
    c = incast_config(t);
    c.fc = RIFL_NET_FC_CREDIT;
    c.vls = 4;
    rifl_net_result four, one;
    REQUIRE(run(&c, &four) == RIFL_OK);
    c.vls = 1;
    REQUIRE(run(&c, &one) == RIFL_OK);
    CHECK_EQ_U(four.dropped + one.dropped, 0);
    CHECK_EQ_U(four.lost + one.lost, 0);
    CHECK_MSG(four.victim_gbps > 2 * one.victim_gbps,
              "victim %.2f Gbit/s on its own VL, %.2f sharing one", four.victim_gbps,
              one.victim_gbps);
    rifl_net_result_free(&four);
    rifl_net_result_free(&one);
    /* refusals */
    rifl_net *n = NULL;
    char err[256];
    c.vls = 16;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "virtual lanes") != NULL);
    c.vls = 4;
    c.credit_cells = 410;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "2048 blocks") != NULL);
    c.credit_cells = 0;
    c.frame_bits = 64;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "128-bit") != NULL);
    c.frame_bits = 256;
    c.cable_m = 700; /* a round trip of about 300 cells */
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "credit-cells") != NULL);
    CHECK(n == NULL);
    rifl_topo_free(t);
}

/* Bonded links (rifl/bond.h): four lanes per link, each at a quarter of
 * the link's rate with errors of its own, in groups of 4 (spatial), 2 and
 * 1 (temporal).  Lossless through replays at a high BER across three
 * switch hops, the same by reference as by content; every lane stepped in
 * a quarter of the slots; and at full load a link carries what the word
 * rules leave of it: a cell of RIFL_L2_CELL_BYTES takes whole narrow words
 * of S lanes' payload. */
static void t_bonded(void)
{
    rifl_topology *t = gen("leafspine:3x2x3");
    REQUIRE(t);
    static const unsigned groups[] = { 4, 2, 1 };
    for (unsigned g = 0; g < 3; g++) {
        rifl_net_config c = bursty_ber(t, 0.5, 100000);
        c.lanes = 4;
        c.group_lanes = groups[g];
        c.seed = test_seed + g;
        rifl_net_result a;
        REQUIRE(run(&c, &a) == RIFL_OK);
        clean(&a);
        CHECK(a.replays > 0);
        CHECK(a.verify_fails > 0);
        CHECK(a.path_cells[3] > 0);
        CHECK_EQ_U(a.link[0].lanes, 4);
        /* 2 ends x 4 lanes per link, each lane a frame slot every 4th slot */
        uint64_t want = 2 * (uint64_t)a.links * 4 * (a.slots / 4);
        CHECK_MSG(a.lane_slots >= want && a.lane_slots <= want + 8ull * a.links,
                  "lane slots %llu, want about %llu", (unsigned long long)a.lane_slots,
                  (unsigned long long)want);
        same_by_content(c, &a);
        rifl_net_result_free(&a);
    }
    rifl_topo_free(t);
    /* full load, permutation: a host's throughput against one lane's */
    t = gen("single:4");
    REQUIRE(t);
    rifl_net_config c = rifl_net_default_config;
    c.topo = t;
    c.pattern = RIFL_NET_PERMUTATION;
    c.load = 1.0;
    c.window_ns = 20000;
    rifl_net_result one;
    REQUIRE(run(&c, &one) == RIFL_OK);
    CHECK_EQ_U(one.dropped, 0);
    unsigned pb = rifl_payload_bytes(c.frame_bits);
    unsigned C = (RIFL_L2_CELL_BYTES + pb - 1) / pb;
    for (unsigned g = 0; g < 3; g++) {
        unsigned L = 4, S = groups[g];
        c.lanes = L;
        c.group_lanes = S;
        rifl_net_result r;
        REQUIRE(run(&c, &r) == RIFL_OK);
        CHECK_EQ_U(r.dropped, 0);
        CHECK_EQ_U(r.lost, 0);
        CHECK_EQ_U(r.corrupt, 0);
        /* a cell is W words of S x pb bytes, G = L / S groups taking one
         * each per lane slot of L network slots: W / G lane slots, at
         * least one */
        unsigned W = (RIFL_L2_CELL_BYTES + S * pb - 1) / (S * pb), G = L / S;
        double slots = (double)L * (W > G ? (double)W / G : 1.0);
        double want = (double)C / slots;
        if (want > 1)
            want = 1;
        double got = r.throughput_gbps_mean / one.throughput_gbps_mean;
        CHECK_MSG(fabs(got - want) < 0.02, "groups of %u: %.4f of one lane's throughput, "
                  "want %.4f", S, got, want);
        rifl_net_result_free(&r);
    }
    rifl_net_result_free(&one);
    rifl_topo_free(t);
    /* links of their own lanes: a file giving every link 4 lanes runs as
     * --lanes 4; a leaf-spine with bonded 400 Gbit/s uplinks (4 lanes of
     * 100) and single-lane hosts at BER 1e-6 loses nothing, and each link
     * reports its lanes */
    rifl_topology *g = gen("single:4");
    rifl_topology *f = parse_text("switch s0 4\n"
                                  "host h0\nlink h0 s0:0 lanes 4\n"
                                  "host h1\nlink h1 s0:1 lanes 4\n"
                                  "host h2\nlink h2 s0:2 lanes 4\n"
                                  "host h3\nlink h3 s0:3 lanes 4\n");
    REQUIRE(g && f);
    c = rifl_net_default_config;
    c.load = 0.6;
    c.window_ns = 10000;
    c.topo = g;
    c.lanes = 4;
    rifl_net_result x, y;
    REQUIRE(run(&c, &x) == RIFL_OK);
    c.topo = f;
    c.lanes = 1;
    REQUIRE(run(&c, &y) == RIFL_OK);
    clean(&x);
    clean(&y);
    CHECK_EQ_U(x.delivered_cells, y.delivered_cells);
    CHECK(x.latency.mean == y.latency.mean && x.latency.max == y.latency.max);
    rifl_net_result_free(&x);
    rifl_net_result_free(&y);
    rifl_topo_free(f);
    rifl_topo_free(g);
    f = parse_text("switch l0 4\nswitch l1 4\nswitch sp 2\n"
                   "host a\nhost b\nhost c\nhost d\n"
                   "link a l0:0\nlink b l0:1\nlink c l1:0\nlink d l1:1\n"
                   "link l0:2 sp:0 rate 400 lanes 4\nlink l1:2 sp:1 rate 400 lanes 4\n");
    REQUIRE(f);
    c = rifl_net_default_config;
    c.topo = f;
    c.load = 0.7;
    c.ber = 1e-6;
    c.window_ns = 10000;
    c.seed = test_seed;
    REQUIRE(run(&c, &x) == RIFL_OK);
    clean(&x);
    CHECK(x.replays > 0);
    unsigned bonded = 0;
    for (unsigned k = 0; k < 2 * x.links; k++) {
        const rifl_net_link *lk = &x.link[k];
        bool up = lk->rate_gbps == 400;
        CHECK_EQ_U(lk->lanes, up ? 4 : 1);
        bonded += up;
    }
    CHECK_EQ_U(bonded, 4); /* two uplinks, both ways */
    rifl_net_result_free(&x);
    /* groups larger than a link's lanes are refused, naming the link */
    c.group_lanes = 8;
    rifl_net *n = NULL;
    char err[256];
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(err, "l0:2 - sp:0") != NULL, "%s", err);
    rifl_topo_free(f);
}

/* Idle links go through their idle stretches in one call each (the lanes'
 * accelerator, rifl_pair_idle_skip): an incast of 2 on single:16 leaves 12
 * hosts' links idle; with bit errors on every link the run is the same as
 * stepping every slot by content, counter for counter. */
static void idle_case(bool sparse)
{
    rifl_topology *t = gen(sparse ? "single:8" : "single:16");
    REQUIRE(t);
    rifl_net_config c = rifl_net_default_config;
    c.topo = t;
    c.pattern = sparse ? RIFL_NET_UNIFORM : RIFL_NET_INCAST;
    c.incast = 2;
    c.load = sparse ? 0.004 : 0.3;
    c.ber = 1e-6;
    c.window_ns = sparse ? 200000 : 30000;
    c.seed = test_seed;
    rifl_net_result a, b;
    REQUIRE(run(&c, &a) == RIFL_OK);
    c.by_content = true;
    REQUIRE(run(&c, &b) == RIFL_OK);
    clean(&a);
    clean(&b);
    CHECK_MSG(a.idle_lane_slots > a.lane_slots / (sparse ? 4 : 2),
              "%llu of %llu lane slots idle-skipped",
              (unsigned long long)a.idle_lane_slots, (unsigned long long)a.lane_slots);
    CHECK_EQ_U(b.idle_lane_slots, 0);
    CHECK_EQ_U(a.lane_slots, b.lane_slots);
    CHECK(a.replays > 0);
    CHECK_EQ_U(a.replays, b.replays);
    CHECK_EQ_U(a.verify_fails, b.verify_fails);
    CHECK_EQ_U(a.fc_frames, b.fc_frames);
    CHECK_EQ_U(a.delivered_cells, b.delivered_cells);
    CHECK(a.latency.mean == b.latency.mean && a.latency.max == b.latency.max);
    for (unsigned k = 0; k < 2 * a.links; k++) {
        CHECK_EQ_U(a.link[k].replays, b.link[k].replays);
        CHECK_EQ_U(a.link[k].verify_fails, b.link[k].verify_fails);
    }
    rifl_net_result_free(&a);
    rifl_net_result_free(&b);
    rifl_topo_free(t);
}

/* ... and at a load so low that links go idle between messages, cells are
 * sent on links brought up to date from their idle stretches. */
static void t_idle_links(void)
{
    idle_case(false);
    idle_case(true);
}

static void t_refusals(void)
{
    rifl_topology *t = gen("single:4");
    REQUIRE(t);
    rifl_net_config c = rifl_net_default_config;
    rifl_net *n = NULL;
    char err[256];
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG); /* no topology */
    CHECK(strstr(err, "topology") != NULL);
    c.topo = t;
    c.load = 0;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "load") != NULL);
    c.load = 0.5;
    c.pattern = RIFL_NET_INCAST;
    c.incast = 3;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(err, "give incast (--incast) 1 to 2 senders") != NULL, "%s", err);
    c.pattern = RIFL_NET_UNIFORM;
    /* an absurd queue per NIC is refused up front, naming the setting and
     * its limit (not an allocation that fails, or the NIC's own name) */
    const unsigned nics[] = { UINT32_MAX, (1u << 24) + 1, 0 };
    for (unsigned i = 0; i < 3; i++) {
        c.nic_messages = nics[i];
        CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
        CHECK_MSG(strstr(err, "give nic_messages (--nic-messages) of 1 to 16777216") != NULL,
                  "%s", err);
    }
    c.nic_messages = rifl_net_default_config.nic_messages;
    c.msg_min = 10;
    c.msg_max = 5;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    c.msg_max = 10;
    c.cable_m = 5000;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    c.cable_m = 900;
    c.link_gbps = 400;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "frame-ID") != NULL);
    c.cable_m = 2;
    c.link_gbps = 100;
    c.lanes = 3;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "lanes per link") != NULL);
    c.lanes = 4;
    c.group_lanes = 8;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "groups of 8") != NULL);
    CHECK(n == NULL);
    rifl_topo_free(t);
}

/* The memory estimate: the part that grows with the paths is the map's
 * routes and the NICs' receive contexts, by the sizes they allocate; a
 * network above max_memory_gb is refused at once, naming the estimate and
 * the fix, and one below it (or without a limit) is made. */
static void t_memory(void)
{
    rifl_topology *big = gen("fattree:22"), *small = gen("fattree:4");
    REQUIRE(big && small);
    rifl_net_config c = rifl_net_default_config;
    c.topo = big;
    c.max_paths = 64;
    uint64_t m64 = rifl_net_memory(&c);
    c.max_paths = 8;
    uint64_t m8 = rifl_net_memory(&c);
    rifl_nic_config nc = rifl_nic_default_config;
    nc.tx_messages = c.nic_messages;
    unsigned H = big->nhosts;
    uint64_t grow = rifl_nic_map_memory(big, 64) - rifl_nic_map_memory(big, 8) +
                    (uint64_t)H * (rifl_nic_memory(&nc, H, 64) - rifl_nic_memory(&nc, H, 8));
    CHECK(m64 - m8 == grow);
    /* 2662^2 pairs x 56 more paths: 7 bytes of route and 16 of context each */
    CHECK(grow == (uint64_t)H * H * 56 * (7 + 16) + (uint64_t)big->nnodes * 56 *
                  sizeof(rifl_topo_route));
    CHECK_MSG(m64 > 10e9 && m64 < 13e9, "%g GB", m64 / 1e9);
    CHECK(rifl_net_memory(NULL) == 0);

    rifl_net *n = NULL;
    char err[512];
    c.max_paths = 64;
    c.max_memory_gb = 8;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(n == NULL);
    char want[64];
    snprintf(want, sizeof want, "would take about %.3g GB of memory", m64 / 1e9);
    CHECK_MSG(strstr(err, want) != NULL, "%s", err);
    CHECK_MSG(strstr(err, "(max_paths, --paths)") != NULL, "%s", err);
    CHECK_MSG(strstr(err, "(max_memory_gb, --max-memory-gb; 0: none)") != NULL, "%s", err);
    c.max_memory_gb = -1;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK_MSG(strstr(err, "memory limit") != NULL, "%s", err);

    c.topo = small;
    c.window_ns = 1000;
    const double limits[] = { 0, 8 };
    for (unsigned i = 0; i < 2; i++) {
        c.max_memory_gb = limits[i];
        CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_OK);
        rifl_net_free(n);
        n = NULL;
    }
    c.max_memory_gb = rifl_net_memory(&c) / 1e9 * 0.99;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_ERR_CONFIG);
    c.max_memory_gb = rifl_net_memory(&c) / 1e9 * 1.01;
    CHECK_EQ_I(rifl_net_create(&c, &n, err, sizeof err), RIFL_OK);
    rifl_net_free(n);
    rifl_topo_free(big);
    rifl_topo_free(small);
}

/* A host application: every host sends MSGS messages of its own prefix and
 * bytes to the next host over a leaf-spine at BER 1e-6; each arrives whole,
 * in order per route, byte for byte; every `sent` frees a buffer; the run
 * ends when the application says so, measured whole. */
#define APP_HOSTS 4
#define APP_MSGS 20
struct app_state {
    uint8_t msg[APP_HOSTS][APP_MSGS][4 + 700];
    unsigned posted[APP_HOSTS], sent[APP_HOSTS], got[APP_HOSTS];
    uint8_t rx[APP_HOSTS][8][4 + 700]; /* per receive context */
    size_t rx_len[APP_HOSTS][8];
    unsigned bad, ticks;
    unsigned paths;
};

static size_t app_len(unsigned h, unsigned k) { return 100 + (h * 37 + k * 53) % 600; }

static int app_tick(void *ctx, rifl_net *n, unsigned host, double now_ns)
{
    struct app_state *a = ctx;
    (void)now_ns;
    a->ticks++;
    unsigned dst = (host + 1) % APP_HOSTS;
    unsigned k = a->posted[host];
    if (k == APP_MSGS)
        return 0;
    size_t len = app_len(host, k);
    uint8_t *m = a->msg[host][k];
    m[0] = 0x01; /* a data message */
    m[1] = 0;
    m[2] = (uint8_t)(len >> 8);
    m[3] = (uint8_t)len;
    for (size_t i = 0; i < len; i++)
        m[4 + i] = (uint8_t)(host * 101 + k * 7 + i);
    a->paths = rifl_net_paths(n, host, dst);
    int rc = rifl_net_post(n, host, dst, k % a->paths, m, 4 + len, k);
    if (rc == RIFL_OK)
        a->posted[host]++;
    return rc == RIFL_ERR_AGAIN ? 0 : rc;
}

static void app_deliver(void *ctx, rifl_net *n, unsigned host, const rifl_nic_rx *rx,
                        double now_ns)
{
    struct app_state *a = ctx;
    (void)n;
    (void)now_ns;
    if (rx->context >= 8) {
        a->bad++;
        return;
    }
    uint8_t *buf = a->rx[host][rx->context];
    size_t *have = &a->rx_len[host][rx->context];
    if (rx->first) {
        memcpy(buf, rx->prefix, 4);
        *have = 4;
    }
    memcpy(buf + *have, rx->data, rx->len);
    *have += rx->len;
    if (!rx->last)
        return;
    /* cells of one message come in order on its route, but messages on two
     * routes interleave: find which message this is */
    unsigned src = (host + APP_HOSTS - 1) % APP_HOSTS, k;
    for (k = 0; k < APP_MSGS; k++)
        if (4 + app_len(src, k) == *have && !memcmp(a->msg[src][k], buf, *have))
            break;
    if (k == APP_MSGS || rx->src != src)
        a->bad++;
    a->got[host]++;
}

static void app_sent(void *ctx, unsigned host, uint64_t tag)
{
    struct app_state *a = ctx;
    if (tag != a->sent[host]) /* one destination and its messages leave in order */
        a->bad++;
    a->sent[host]++;
}

static bool app_done(void *ctx)
{
    struct app_state *a = ctx;
    for (unsigned h = 0; h < APP_HOSTS; h++)
        if (a->got[h] < APP_MSGS)
            return false;
    return true;
}

static void t_app(void)
{
    rifl_topology *t = gen("leafspine:2x2x2");
    REQUIRE(t);
    static struct app_state a;
    memset(&a, 0, sizeof a);
    rifl_net_app app = { &a, app_tick, app_deliver, app_sent, app_done };
    rifl_net_config c = rifl_net_default_config;
    c.topo = t;
    c.ber = 1e-6;
    c.app = &app;
    rifl_net_result r;
    REQUIRE(run(&c, &r) == RIFL_OK);
    CHECK(r.finished);
    CHECK(r.finite);
    CHECK_EQ_U(a.bad, 0);
    for (unsigned h = 0; h < APP_HOSTS; h++) {
        CHECK_EQ_U(a.got[h], APP_MSGS);
        CHECK_EQ_U(a.sent[h], APP_MSGS);
    }
    CHECK(a.paths == 2); /* to a host on the other leaf: one route per spine */
    CHECK_EQ_U(r.delivered_cells, r.generated_cells);
    CHECK_EQ_U(r.dropped, 0);
    CHECK(r.replays > 0);
    CHECK(r.latency.samples == r.delivered_cells);
    rifl_net_result_free(&r);
    /* without an application nothing may be posted; a bad application is refused */
    rifl_net_config d = rifl_net_default_config;
    d.topo = t;
    rifl_net *n = NULL;
    char err[256];
    REQUIRE(rifl_net_create(&d, &n, err, sizeof err) == RIFL_OK);
    CHECK_EQ_I(rifl_net_post(n, 0, 1, 0, a.msg[0][0], 4 + app_len(0, 0), 0), RIFL_ERR_STATE);
    rifl_net_free(n);
    rifl_net_app half = { &a, app_tick, NULL, app_sent, app_done };
    d.app = &half;
    CHECK_EQ_I(rifl_net_create(&d, &n, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "deliver") != NULL);
    rifl_topo_free(t);
}

/* An application whose tick fails: the run returns its error, and the
 * links, parked while idle, are still brought up to the slot reached, so
 * their counters read true afterwards. */
static unsigned fail_ticks;
static int fail_tick(void *ctx, rifl_net *n, unsigned host, double now_ns)
{
    (void)ctx;
    (void)n;
    (void)host;
    (void)now_ns;
    return ++fail_ticks >= 4 * 3000 ? RIFL_ERR_STATE : 0;
}
static void fail_deliver(void *ctx, rifl_net *n, unsigned host, const rifl_nic_rx *rx,
                         double now_ns)
{
    (void)ctx, (void)n, (void)host, (void)rx, (void)now_ns;
}
static void fail_sent(void *ctx, unsigned host, uint64_t tag) { (void)ctx, (void)host, (void)tag; }
static bool fail_done(void *ctx) { (void)ctx; return false; }

static void t_app_error(void)
{
    rifl_topology *t = gen("single:4");
    REQUIRE(t);
    rifl_net_app app = { NULL, fail_tick, fail_deliver, fail_sent, fail_done };
    rifl_net_config c = rifl_net_default_config;
    c.topo = t;
    c.app = &app;
    fail_ticks = 0;
    rifl_net *n = NULL;
    char err[256];
    REQUIRE(rifl_net_create(&c, &n, err, sizeof err) == RIFL_OK);
    int rc;
    while ((rc = rifl_net_run(n, 50000)) == 0)
        ;
    CHECK_EQ_I(rc, RIFL_ERR_STATE);
    rifl_net_result r;
    REQUIRE(rifl_net_result_get(n, &r) == RIFL_OK);
    CHECK(r.slots > 0);
    CHECK(r.idle_lane_slots > 0); /* the links were parked */
    CHECK_MSG(r.lane_slots == 2ull * r.links * r.slots, "%llu lane slots, %u links, %llu slots",
              (unsigned long long)r.lane_slots, r.links, (unsigned long long)r.slots);
    rifl_net_result_free(&r);
    rifl_net_free(n);
    rifl_topo_free(t);
}

TEST_MAIN({ "unloaded_path", t_unloaded_path }, { "lossless_ber", t_lossless_ber },
          { "full_voq_waits", t_full_voq_waits },
          { "reproducible", t_reproducible }, { "incast_victim", t_incast_victim },
          { "finite", t_finite }, { "bursts_in_cells", t_bursts_in_cells },
          { "incast_offered", t_incast_offered }, { "cdf", t_cdf },
          { "link_settings", t_link_settings }, { "link_rates", t_link_rates },
          { "host_interface", t_host_interface },
          { "credit", t_credit }, { "bonded", t_bonded }, { "idle_links", t_idle_links }, { "refusals", t_refusals },
          { "memory", t_memory },
          { "app", t_app }, { "app_error", t_app_error })

/* The switch simulator: lossless, in-order delivery for every traffic mix,
 * the latency floor, reproducibility, flow control under overload, a
 * multi-switch topology, and refused configurations. */
#include "testlib.h"

#include <math.h>

#include "rifl/sim/switch_sim.h"

static int simulate(const rifl_ssim_config *c, rifl_ssim_result *r)
{
    rifl_ssim *s;
    char err[256];
    int rc = rifl_ssim_create(c, &s, err, sizeof err);
    if (rc) {
        fprintf(stderr, "  create: %s\n", err);
        return rc;
    }
    int rr;
    while (!(rr = rifl_ssim_run(s, 100000))) {
        rifl_ssim_result tmp;
        rifl_ssim_result_get(s, &tmp);
        if (c->max_slots && tmp.slots >= c->max_slots)
            break;
    }
    if (rr < 0) {
        rifl_ssim_free(s);
        return rr;
    }
    rifl_ssim_result_get(s, r);
    rifl_ssim_free(s);
    return RIFL_OK;
}

static void check_clean(const rifl_ssim_result *r)
{
    CHECK(r->finished);
    CHECK_EQ_U(r->cells_delivered, r->cells_generated);
    CHECK_EQ_U(r->lost, 0);
    CHECK_EQ_U(r->duplicated, 0);
    CHECK_EQ_U(r->misdelivered, 0);
    CHECK_EQ_U(r->dropped, 0);
    CHECK_EQ_U(r->sw.fabric_collisions, 0);
    CHECK(r->sw.max_voq_cells <= r->voq_cells);
    CHECK_EQ_U(r->fc_decode_errors, 0);
}

static void t_mixes_lossless(void)
{
    uint64_t per_pair = test_long_run ? 200000 : 20000;
    unsigned runs = 0;
    for (int sched = 0; sched < 2; sched++)
        for (int tr = 0; tr < 2; tr++)
            for (int var = 0; var < 2; var++) {
                rifl_ssim_config c = rifl_ssim_default_config;
                c.nports = 16;
                c.scheduler = sched ? RIFL_SCHED_SAFC : RIFL_SCHED_ISLIP;
                c.traffic = tr ? RIFL_TRAFFIC_BURSTY : RIFL_TRAFFIC_BERNOULLI;
                c.packet_bytes = var ? 0 : 512;
                c.load = 0.95;
                c.bytes_per_pair = per_pair;
                c.seed = test_seed + (uint64_t)(sched * 4 + tr * 2 + var);
                rifl_ssim_result r;
                {
                    int req_rc_ = simulate(&c, &r);
                    REQUIRE(req_rc_ == RIFL_OK);
                }
                check_clean(&r);
                /* every byte of every pair was generated */
                CHECK_EQ_U(r.payload_bytes, per_pair * 16 * 15);
                runs++;
            }
    CHECK_EQ_U(runs, 8);
}

/* At light load the utilization follows the load and the fastest cell
 * takes the fixed latency plus the one scheduling slot. */
static void t_light_load(void)
{
    rifl_ssim_config c = rifl_ssim_default_config;
    c.nports = 8;
    c.load = 0.2;
    c.latency = 11;
    c.bytes_per_pair = 100000;
    c.seed = test_seed;
    rifl_ssim_result r;
    {
        int req_rc_ = simulate(&c, &r);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    check_clean(&r);
    CHECK_EQ_U(r.lat_pct[0], 12);
    CHECK_MSG(r.utilization > 0.17 && r.utilization < 0.23, "utilization %f", r.utilization);
    CHECK(r.lat_pct[1] <= 13);
}

static void t_reproducible(void)
{
    rifl_ssim_config c = rifl_ssim_default_config;
    c.nports = 8;
    c.traffic = RIFL_TRAFFIC_BURSTY;
    c.packet_bytes = 0;
    c.bytes_per_pair = 30000;
    c.seed = 77;
    rifl_ssim_result a, b, d;
    {
        int req_rc_ = simulate(&c, &a);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    {
        int req_rc_ = simulate(&c, &b);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    c.seed = 78;
    {
        int req_rc_ = simulate(&c, &d);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    CHECK_EQ_U(a.slots, b.slots);
    CHECK_EQ_U(a.payload_bytes, b.payload_bytes);
    CHECK_EQ_U(a.cells_generated, b.cells_generated);
    CHECK(!memcmp(a.lat_pct, b.lat_pct, sizeof a.lat_pct));
    CHECK_EQ_U(a.sw.fc_on_sent, b.sw.fc_on_sent);
    CHECK(a.slots != d.slots || a.cells_generated != d.cells_generated ||
          memcmp(a.lat_pct, d.lat_pct, sizeof a.lat_pct));
}

/* Latency from generation: never below the latency from leaving the host,
 * the same for the fastest cells at light load, and above it at high load
 * by the hosts' mean wait, which Little's law gives from their mean
 * backlog. */
static void t_latency_from_generation(void)
{
    for (int mode = 0; mode < 3; mode++) {
        rifl_ssim_config c = rifl_ssim_default_config;
        c.nports = 16;
        c.load = 0.95;
        c.bytes_per_pair = 40000;
        c.seed = test_seed;
        if (mode == 1) { /* variable sizes in bursts */
            c.traffic = RIFL_TRAFFIC_BURSTY;
            c.packet_bytes = 0;
        } else if (mode == 2) { /* one FIFO per host */
            c.host_fifo = true;
            c.host_fifo_cells = 64;
        }
        rifl_ssim_result r;
        REQUIRE(simulate(&c, &r) == RIFL_OK);
        check_clean(&r);
        for (unsigned k = 0; k < RIFL_SSIM_NPCT; k++)
            CHECK_MSG(r.gen_pct[k] >= r.lat_pct[k], "mode %d p%g: %llu from generation, %llu "
                      "from leaving", mode, rifl_ssim_percentiles[k],
                      (unsigned long long)r.gen_pct[k], (unsigned long long)r.lat_pct[k]);
        CHECK(r.gen_pct[5] > r.lat_pct[5]);
        double wait = r.gen_mean - r.lat_mean;
        double little = r.host_backlog_mean * r.hosts * (double)r.slots /
                        (double)r.cells_generated;
        CHECK_MSG(fabs(wait - little) <= 0.05 * little + 0.05,
                  "mode %d: mean wait %.3f cells, Little's law %.3f", mode, wait, little);
    }
    rifl_ssim_config c = rifl_ssim_default_config;
    c.nports = 8;
    c.load = 0.2;
    c.bytes_per_pair = 50000;
    c.seed = test_seed;
    rifl_ssim_result r;
    REQUIRE(simulate(&c, &r) == RIFL_OK);
    CHECK_EQ_U(r.gen_pct[0], r.lat_pct[0]);
}

/* Overload with the smallest safe VOQs: flow control keeps every VOQ within
 * its space, nothing overflows. */
static void t_overload_small_voqs(void)
{
    rifl_ssim_config c = rifl_ssim_default_config;
    c.nports = 16;
    c.load = 1.0;
    c.traffic = RIFL_TRAFFIC_BURSTY;
    c.burst_bytes = 16384; /* long bursts pile up on single outputs */
    c.bytes_per_pair = test_long_run ? 500000 : 60000;
    c.seed = test_seed;
    rifl_ssim_result r;
    {
        int req_rc_ = simulate(&c, &r);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    check_clean(&r);
    CHECK(r.sw.fc_on_sent > 100);
    CHECK_EQ_U(r.voq_cells, (3 * r.rtt_slots + 1) / 2);
    CHECK(r.sw.max_voq_cells > r.fc_on); /* the headroom was used */
}

/* Two switches joined by one link: traffic from four hosts on s1 to four on
 * s2 shares it, so s2's input VOQs push back on s1's output. */
static void t_two_switches(void)
{
    const char *text = "switch s1 5\nswitch s2 5\n"
                       "host a0\nhost a1\nhost a2\nhost a3\nhost b0\nhost b1\nhost b2\nhost b3\n"
                       "link a0 s1:0\nlink a1 s1:1\nlink a2 s1:2\nlink a3 s1:3\n"
                       "link b0 s2:0\nlink b1 s2:1\nlink b2 s2:2\nlink b3 s2:3\n"
                       "link s1:4 s2:4 delay 3\n";
    rifl_topology *t;
    char err[256];
    {
        int req_rc_ = rifl_topo_parse(text, strlen(text), &t, err, sizeof err);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    for (int sched = 0; sched < 2; sched++) {
        rifl_ssim_config c = rifl_ssim_default_config;
        c.topo = t;
        c.load = 1.0;
        c.traffic = RIFL_TRAFFIC_BURSTY;
        c.burst_bytes = 16384; /* bursts from both sides meet on s2's outputs */
        c.scheduler = sched ? RIFL_SCHED_SAFC : RIFL_SCHED_ISLIP;
        c.bytes_per_pair = test_long_run ? 200000 : 30000;
        c.seed = test_seed;
        rifl_ssim_result r;
        {
            int req_rc_ = simulate(&c, &r);
            REQUIRE(req_rc_ == RIFL_OK);
        }
        check_clean(&r);
        CHECK_EQ_U(r.switches, 2);
        CHECK_EQ_U(r.hosts, 8);
        CHECK(r.sw.fc_on_received > 0);        /* s1 heard from s2 */
        CHECK(r.sw.fc_blocked_requests > 0);   /* and held cells back */
        CHECK_EQ_U(r.rtt_slots, 17); /* host links (8 slots) set it */
    }
    rifl_topo_free(t);
}

/* Routes round a ring of switches: each switch's ring VOQ waits on the
 * next one's, and under full load the cycle closes (no cell lost: flow
 * control holds them all).  The run says it stalled and ends, instead of
 * running for ever; a light load over the same ring finishes. */
static void t_ring_stalls(void)
{
    char text[2048];
    size_t n = 0;
    for (int k = 0; k < 6; k++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "switch s%d 4\nhost a%d\nhost b%d\nlink a%d s%d:0\nlink b%d s%d:1\n",
                              k, k, k, k, k, k, k);
    for (int k = 0; k < 6; k++)
        n += (size_t)snprintf(text + n, sizeof text - n, "link s%d:2 s%d:3 delay 2\n", k,
                              (k + 1) % 6);
    rifl_topology *t;
    char err[256];
    REQUIRE(rifl_topo_parse(text, n, &t, err, sizeof err) == RIFL_OK);
    rifl_ssim_config c = rifl_ssim_default_config;
    c.topo = t;
    c.load = 1.0;
    c.bytes_per_pair = 200000;
    c.seed = 1;
    c.max_slots = 5000000; /* (a bound for the test: the stall ends it long before) */
    rifl_ssim_result r;
    REQUIRE(simulate(&c, &r) == RIFL_OK);
    CHECK(!r.finished);
    CHECK(r.stalled);
    CHECK(r.stalled_cells > 0 && r.stalled_cells == r.cells_generated - r.cells_delivered);
    CHECK(r.stalled_slots > 200000);
    CHECK(r.slots < 1000000);
    CHECK_EQ_U(r.lost + r.duplicated + r.misdelivered + r.dropped, 0);
    c.load = 0.05;
    c.bytes_per_pair = 20000;
    REQUIRE(simulate(&c, &r) == RIFL_OK);
    CHECK(r.finished && !r.stalled);
    check_clean(&r);
    rifl_topo_free(t);
}

/* One switch given by --ports and the same switch given as a topology (host
 * k on port k, links of half the latency each way) are the same system: the
 * single-switch mode derives routes from the ports and writes the cells the
 * switch sends straight into the hosts' receive ring, the topology mode
 * reads routes from tables and passes the cells along link by link, and
 * both give the same run, flow control included. */
static void t_single_equals_topology(void)
{
    const unsigned N = 12, delay = 6;
    char text[2048];
    size_t n = (size_t)snprintf(text, sizeof text, "switch s %u\n", N);
    for (unsigned k = 0; k < N; k++)
        n += (size_t)snprintf(text + n, sizeof text - n, "host h%u\n", k);
    for (unsigned k = 0; k < N; k++)
        n += (size_t)snprintf(text + n, sizeof text - n, "link h%u s:%u delay %u\n", k, k,
                              delay);
    rifl_topology *t;
    char err[256];
    REQUIRE(rifl_topo_parse(text, n, &t, err, sizeof err) == RIFL_OK);
    unsigned runs = 0;
    for (int sched = 0; sched < 2; sched++)
        for (int tr = 0; tr < 2; tr++)
            for (int fifo = 0; fifo < 2; fifo++) {
                rifl_ssim_config c = rifl_ssim_default_config;
                c.nports = N;
                c.latency = 2 * delay;
                c.scheduler = sched ? RIFL_SCHED_SAFC : RIFL_SCHED_ISLIP;
                c.traffic = tr ? RIFL_TRAFFIC_BURSTY : RIFL_TRAFFIC_BERNOULLI;
                c.burst_bytes = 8192;
                c.host_fifo = fifo != 0;
                c.load = 1.0;
                c.voq_cells = 30;
                c.fc_on = 4; /* low thresholds: many ON and OFF frames */
                c.fc_off = 1;
                c.bytes_per_pair = 20000;
                c.seed = test_seed + (uint64_t)(sched * 4 + tr * 2 + fifo);
                rifl_ssim_result a, b;
                REQUIRE(simulate(&c, &a) == RIFL_OK);
                c.topo = t;
                REQUIRE(simulate(&c, &b) == RIFL_OK);
                check_clean(&a);
                CHECK(a.sw.fc_on_sent > 0);
                CHECK_EQ_U(a.rtt_slots, b.rtt_slots);
                CHECK_EQ_U(a.slots, b.slots);
                CHECK_EQ_U(a.cells_delivered, b.cells_delivered);
                CHECK_EQ_U(a.lat_samples, b.lat_samples);
                CHECK(!memcmp(a.lat_pct, b.lat_pct, sizeof a.lat_pct));
                CHECK(a.lat_mean == b.lat_mean);
                CHECK_EQ_U(a.fc_frames_to_hosts, b.fc_frames_to_hosts);
                CHECK_EQ_U(a.host_backlog_max, b.host_backlog_max);
                CHECK_EQ_U(a.source_stalls, b.source_stalls);
                CHECK_EQ_U(a.hol_blocked, b.hol_blocked);
                CHECK(!memcmp(&a.sw, &b.sw, sizeof a.sw));
                runs++;
            }
    CHECK_EQ_U(runs, 8);
    rifl_topo_free(t);
}

/* Hosts at both ends of a chain of five switches (the longest route a
 * header holds) and hosts on the middle switch: every route works, and a
 * sixth switch makes the far hosts unreachable. */
static void t_five_hop_chain(void)
{
    for (unsigned k = 5; k <= 6; k++) {
        char text[2048];
        size_t n = 0;
        for (unsigned s = 0; s < k; s++)
            n += (size_t)snprintf(text + n, sizeof text - n, "switch s%u 4\n", s);
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "host a\nhost b\nhost m\nlink a s0:0\nlink b s%u:3\n"
                              "link m s2:3 delay 2\n", k - 1);
        for (unsigned s = 0; s + 1 < k; s++)
            n += (size_t)snprintf(text + n, sizeof text - n, "link s%u:1 s%u:2 delay 4\n", s,
                                  s + 1);
        rifl_topology *t;
        char err[256];
        int rc = rifl_topo_parse(text, n, &t, err, sizeof err);
        REQUIRE(rc == RIFL_OK);
        rifl_ssim_config c = rifl_ssim_default_config;
        c.topo = t;
        c.load = 0.8;
        c.traffic = RIFL_TRAFFIC_BURSTY;
        c.bytes_per_pair = 40000;
        c.seed = test_seed;
        rifl_ssim_result r;
        if (k == 5) {
            rc = simulate(&c, &r);
            REQUIRE(rc == RIFL_OK);
            check_clean(&r);
            CHECK_EQ_U(r.switches, 5);
            /* a -> b: two 8-slot host links, four 4-slot switch links, 5 switches */
            CHECK(r.lat_pct[RIFL_SSIM_NPCT - 1] >= 8 + 4 * 4 + 8 + 5);
        } else {
            rifl_ssim *s = NULL;
            CHECK_EQ_I(rifl_ssim_create(&c, &s, err, sizeof err), RIFL_ERR_UNREACHABLE);
            CHECK(strstr(err, "at most 5 hops") != NULL);
        }
        rifl_topo_free(t);
    }
}

/* Runs of cells that host 0 sends back to back to one destination: at
 * light load every train leaves as it is made, so these are the trains. */
struct trains {
    uint64_t last_t;
    unsigned last_dst;
    uint64_t cells, runs;
};

static void watch_trains(void *ctx, const rifl_ssim_watch *w)
{
    struct trains *tr = ctx;
    if (!w->up_valid)
        return;
    if (tr->cells == 0 || w->t != tr->last_t + 1 || w->up.dst != tr->last_dst)
        tr->runs++;
    tr->cells++;
    tr->last_t = w->t;
    tr->last_dst = w->up.dst;
}

/* Bursts are counted in cells (a geometric draw of burst_bytes / 256 on
 * average), and a train ends with the packet in which its draw runs out:
 * a train of packets of c cells then holds E[c] / E[1 - (1 - p)^c] cells
 * (p = 256 / burst_bytes).  Bernoulli trains are one packet.  The offered
 * payload is the load either way. */
static void t_bursts_in_cells(void)
{
    struct {
        rifl_traffic traffic;
        unsigned packet_bytes;
        double expect; /* mean train, cells */
    } cases[] = {
        /* 64..2048 bytes: 1 to 8 cells, 256 sizes each but 64..256 (193) */
        { RIFL_TRAFFIC_BURSTY, 0, 0 },
        { RIFL_TRAFFIC_BERNOULLI, 0, 0 },
        { RIFL_TRAFFIC_BURSTY, 512, 2 / (1 - 0.75 * 0.75) },
        { RIFL_TRAFFIC_BURSTY, 256, 4 },
    };
    /* the variable sizes' expectations, worked out over the byte sizes */
    double sc = 0, sq = 0, n = 0;
    for (unsigned b = 64; b <= 2048; b++) {
        double cells = (double)((b + 255) / 256);
        sc += cells;
        sq += 1 - pow(0.75, cells);
        n++;
    }
    cases[0].expect = sc / sq;
    cases[1].expect = sc / n;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct trains tr = { 0 };
        rifl_ssim_config c = rifl_ssim_default_config;
        c.nports = 16;
        c.load = 0.1;
        c.traffic = cases[i].traffic;
        c.packet_bytes = cases[i].packet_bytes;
        c.bytes_per_pair = 150000;
        c.seed = test_seed;
        c.watch = watch_trains;
        c.watch_ctx = &tr;
        c.watch_host = 0;
        rifl_ssim_result r;
        REQUIRE(simulate(&c, &r) == RIFL_OK);
        check_clean(&r);
        double mean = (double)tr.cells / (double)tr.runs;
        CHECK_MSG(fabs(mean / cases[i].expect - 1) < 0.06, "case %zu: %.3f cells per train, %.3f expected",
                  i, mean, cases[i].expect);
        /* the payload offered over the run, before the hosts run dry */
        CHECK_MSG(r.utilization > 0.09 && r.utilization < 0.105, "case %zu: utilization %f", i,
                  r.utilization);
    }
}

/* Broadcast-heavy bursty load on the default 32-port switch with VOQs of
 * the size the simulator derives, hosts with a queue per destination and
 * FIFO hosts, a few seeds: a broadcast cell crosses the ON threshold of
 * many VOQs of its input at once, and yet no VOQ overflows and every copy
 * is delivered in order. */
static void t_broadcast_lossless(void)
{
    unsigned runs = 0;
    for (uint64_t seed = 1; seed <= 3; seed++)
        for (int fifo = 0; fifo < 2; fifo++) {
            rifl_ssim_config c = rifl_ssim_default_config;
            c.traffic = RIFL_TRAFFIC_BURSTY;
            c.broadcast = fifo ? 0.1 : 0.5;
            c.host_fifo = fifo != 0;
            c.bytes_per_pair = test_long_run ? 200000 : 40000;
            c.seed = seed;
            rifl_ssim_result r;
            REQUIRE(simulate(&c, &r) == RIFL_OK);
            CHECK_MSG(r.sw.drop_overflow == 0, "seed %llu, %s hosts: %llu cells dropped for "
                      "want of VOQ space", (unsigned long long)seed, fifo ? "FIFO" : "per-dest",
                      (unsigned long long)r.sw.drop_overflow);
            check_clean(&r);
            CHECK(r.sw.broadcasts > 1000);
            /* every broadcast cell a copy to each of the 31 other hosts */
            CHECK(r.sw.cells_stored == r.cells_generated);
            runs++;
        }
    CHECK_EQ_U(runs, 6);
}

static void t_refused_configs(void)
{
    rifl_ssim *s = NULL;
    char err[256];
    rifl_ssim_config c = rifl_ssim_default_config;
    c.voq_cells = 10;
    CHECK_EQ_I(rifl_ssim_create(&c, &s, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "1.5 round trips") != NULL);
    c = rifl_ssim_default_config;
    c.load = 0;
    CHECK_EQ_I(rifl_ssim_create(&c, &s, err, sizeof err), RIFL_ERR_CONFIG);
    c = rifl_ssim_default_config;
    c.packet_bytes = 300;
    CHECK_EQ_I(rifl_ssim_create(&c, &s, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "multiple of 256") != NULL);
    c = rifl_ssim_default_config;
    c.nports = 300;
    CHECK_EQ_I(rifl_ssim_create(&c, &s, err, sizeof err), RIFL_ERR_CONFIG);
    /* more iSLIP iterations than ports is refused, not quietly cut */
    c = rifl_ssim_default_config;
    c.nports = 4;
    c.iterations = 5;
    CHECK_EQ_I(rifl_ssim_create(&c, &s, err, sizeof err), RIFL_ERR_CONFIG);
    CHECK(strstr(err, "iterations = 5") != NULL && strstr(err, "4-port") != NULL);
    c.iterations = 0;
    CHECK_EQ_I(rifl_ssim_create(&c, &s, err, sizeof err), RIFL_ERR_CONFIG);
    /* a host that cannot reach another */
    const char *text = "switch x 4\nswitch y 4\nhost a\nhost b\nlink a x:0\nlink b y:0\n";
    rifl_topology *t;
    {
        int req_rc_ = rifl_topo_parse(text, strlen(text), &t, err, sizeof err);
        REQUIRE(req_rc_ == RIFL_OK);
    }
    c = rifl_ssim_default_config;
    c.topo = t;
    CHECK_EQ_I(rifl_ssim_create(&c, &s, err, sizeof err), RIFL_ERR_UNREACHABLE);
    CHECK(strstr(err, "no route") != NULL);
    CHECK(s == NULL);
    rifl_topo_free(t);
}

TEST_MAIN({ "mixes_lossless", t_mixes_lossless }, { "light_load", t_light_load },
          { "latency_from_generation", t_latency_from_generation },
          { "reproducible", t_reproducible }, { "bursts_in_cells", t_bursts_in_cells }, { "overload_small_voqs", t_overload_small_voqs },
          { "two_switches", t_two_switches }, { "ring_stalls", t_ring_stalls },
          { "single_equals_topology", t_single_equals_topology }, { "five_hop_chain", t_five_hop_chain },
          { "broadcast_lossless", t_broadcast_lossless }, { "refused_configs", t_refused_configs })

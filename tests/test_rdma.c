/* The RDMA engine (rifl/rdma.h): engines joined back to back by a wire in
 * this file that can lose, duplicate, reorder and damage bundles; every
 * transfer checked byte for byte, target memory checked with canaries
 * where an access must fail. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/rdma.h"
#include "rifl/rng.h"
#include "rifl/sim/rdmasim.h"
#include "testlib.h"

#define NODES 3
#define PD 7
#define MEM (1u << 20)

struct pkt_msg {
    uint64_t at;
    unsigned to;
    rifl_rdma_route from;
    size_t len;
    uint8_t b[RIFL_RDMA_BUNDLE_CAP];
};

struct wire {
    rifl_rdma *e[NODES];
    uint8_t *mem[NODES];
    rifl_rdma_mr mr[NODES];
    struct pkt_msg *q;
    size_t qn, qcap;
    uint64_t now, delay;
    rifl_rng rng;
    double loss, dup, reorder;
    /* called on every bundle before it travels: may change its bytes;
     * returns false to drop it */
    bool (*tamper)(struct wire *w, struct pkt_msg *m);
    unsigned tampered;
    bool serve_faults;
    uint64_t sent;
};

/* Node n + 1's engine: every node over 2 routes, domain PD, its memory
 * registered. */
static void wire_engine(struct wire *w, unsigned n, const rifl_rdma_config *base)
{
    rifl_rdma_config c = base ? *base : rifl_rdma_default_config;
    c.node = n + 1;
    char msg[128];
    REQUIRE(rifl_rdma_open(&c, &w->e[n], msg, sizeof msg) == RIFL_OK);
    for (unsigned m = 0; m < NODES; m++)
        REQUIRE(rifl_rdma_add_node(w->e[n], m + 1, 2) == RIFL_OK);
    REQUIRE(rifl_rdma_alloc_pd(w->e[n], PD) == RIFL_OK);
    REQUIRE(rifl_rdma_reg_mr(w->e[n], PD, w->mem[n], MEM,
                             RIFL_RDMA_LOCAL_WRITE | RIFL_RDMA_REMOTE_WRITE |
                                 RIFL_RDMA_REMOTE_READ,
                             &w->mr[n]) == RIFL_OK);
}

static void wire_init(struct wire *w, const rifl_rdma_config *base, uint64_t seed)
{
    memset(w, 0, sizeof *w);
    w->delay = 500;
    rifl_rng_seed(&w->rng, seed);
    for (unsigned n = 0; n < NODES; n++) {
        w->mem[n] = calloc(MEM, 1);
        REQUIRE(w->mem[n] != NULL);
        wire_engine(w, n, base);
    }
    w->qcap = 64;
    w->q = malloc(w->qcap * sizeof *w->q);
}

/* Node n + 1 restarts: its engine is replaced by a new one (the same node,
 * routes, domain and memory, registered again at the same VA), which
 * knows nothing of the old one. */
static void wire_restart(struct wire *w, unsigned n, const rifl_rdma_config *base)
{
    uint64_t va = w->mr[n].va;
    rifl_rdma_close(w->e[n]);
    wire_engine(w, n, base);
    CHECK_EQ_U(w->mr[n].va, va);
}

static void wire_free(struct wire *w)
{
    for (unsigned n = 0; n < NODES; n++) {
        rifl_rdma_close(w->e[n]);
        free(w->mem[n]);
    }
    free(w->q);
}

static void wire_push(struct wire *w, const struct pkt_msg *m)
{
    if (w->qn == w->qcap) {
        w->qcap *= 2;
        w->q = realloc(w->q, w->qcap * sizeof *w->q);
    }
    w->q[w->qn++] = *m;
}

/* One step of 100 ns: engines send (one bundle each), messages due are
 * delivered, timers run. */
static void wire_step(struct wire *w)
{
    w->now += 100;
    for (unsigned n = 0; n < NODES; n++) {
        struct pkt_msg m;
        rifl_rdma_route to;
        size_t len = rifl_rdma_output(w->e[n], w->now, true, m.b, sizeof m.b, &to);
        if (!len)
            continue;
        w->sent++;
        m.len = len;
        m.to = to.node - 1;
        m.from = (rifl_rdma_route){ n + 1, to.route };
        m.at = w->now + w->delay;
        if (w->reorder > 0 && rifl_rng_double(&w->rng) < w->reorder)
            m.at += rifl_rng_below(&w->rng, 20 * w->delay);
        if (w->tamper && !w->tamper(w, &m))
            continue;
        if (w->loss > 0 && rifl_rng_double(&w->rng) < w->loss)
            continue;
        wire_push(w, &m);
        if (w->dup > 0 && rifl_rng_double(&w->rng) < w->dup) {
            m.at += rifl_rng_below(&w->rng, 4 * w->delay);
            wire_push(w, &m);
        }
    }
    for (size_t i = 0; i < w->qn;) {
        if (w->q[i].at <= w->now) {
            struct pkt_msg *m = &w->q[i];
            CHECK_EQ_I(rifl_rdma_input(w->e[m->to], w->now, m->b, m->len, m->from), RIFL_OK);
            w->q[i] = w->q[--w->qn];
        } else {
            i++;
        }
    }
    for (unsigned n = 0; n < NODES; n++) {
        if (w->serve_faults) {
            uint64_t page;
            while (rifl_rdma_poll_fault(w->e[n], &page))
                rifl_rdma_page_in(w->e[n], page, w->now);
        }
        if (rifl_rdma_next_due(w->e[n]) <= w->now)
            rifl_rdma_advance(w->e[n], w->now);
    }
}

/* Run until `e` has `want` completions (into wc) or `limit` ns pass. */
static unsigned wire_wait(struct wire *w, unsigned node, rifl_rdma_wc *wc, unsigned want,
                          uint64_t limit)
{
    unsigned got = 0;
    uint64_t end = w->now + limit;
    while (got < want && w->now < end) {
        wire_step(w);
        got += rifl_rdma_poll_cq(w->e[node], wc + got, want - got);
    }
    return got;
}

static void fill_random(uint8_t *p, size_t n, uint64_t seed)
{
    rifl_rng r;
    rifl_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rifl_rng_next(&r);
}

/* ---- cases --------------------------------------------------------------------------------- */

static void t_config_refused(void)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    rifl_rdma *e = NULL;
    char msg[160] = "";
    c.bundle_packets = 256;
    CHECK_EQ_I(rifl_rdma_open(&c, &e, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "bundle_packets") != NULL);
    c = rifl_rdma_default_config;
    c.mapping = RIFL_RDMA_MAP_CELL;
    c.bundle_packets = 2;
    CHECK_EQ_I(rifl_rdma_open(&c, &e, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "cell") != NULL);
    c = rifl_rdma_default_config;
    c.mapping = (rifl_rdma_mapping)3;
    CHECK_EQ_I(rifl_rdma_open(&c, &e, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "mapping") != NULL);
    c = rifl_rdma_default_config;
    c.node = 0x3FFFFF;
    CHECK_EQ_I(rifl_rdma_open(&c, &e, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "node") != NULL);
    CHECK(e == NULL);
    /* a block remembered less than twice its longest life: 2 x 16 x 16 ms by
     * default, 2 x 16 x 2 x 8 us here */
    c = rifl_rdma_default_config;
    c.block_memory_ns = 511999999;
    CHECK_EQ_I(rifl_rdma_open(&c, &e, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "block_memory_ns") != NULL && strstr(msg, "512000000") != NULL);
    c.block_timeout_ns = 1000;
    c.block_timeout_max_ns = 8000;
    c.page_fault_retry_ns = 1000;
    c.no_context_retry_ns = 1000;
    c.block_memory_ns = 512000;
    REQUIRE(rifl_rdma_open(&c, &e, msg, sizeof msg) == RIFL_OK);
    rifl_rdma_close(e);
    c.block_memory_ns = 511999;
    CHECK_EQ_I(rifl_rdma_open(&c, &e, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(e == NULL);
    CHECK_EQ_I(rifl_rdma_open(NULL, &e, msg, sizeof msg), RIFL_ERR_INVALID_ARG);
    CHECK(strcmp(rifl_rdma_strerror(RIFL_ERR_RETRY_EXCEEDED), "E_RETRY_EXCEEDED") == 0);
    CHECK(strcmp(rifl_rdma_strerror(RIFL_ERR_AGAIN), "E_NO_RESOURCES") == 0);
}

static void t_write_notify(void)
{
    struct wire w;
    wire_init(&w, NULL, 1);
    fill_random(w.mem[0], 20000, 11);
    rifl_rdma_notification n = { rifl_rdma_gva_word(2, w.mr[1].va + 900000), 0xC0FFEE, 77 };
    /* 20000 bytes to an address 100 bytes past a 256 boundary: three blocks */
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va + 16284, 20000, 3, &n,
                                    42, w.now),
               RIFL_OK);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_U(wc.wr_id, 42);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK_EQ_U(wc.op, RIFL_RDMA_OP_WRITE);
    CHECK_EQ_U(wc.bytes, 20000);
    CHECK(memcmp(w.mem[1] + 16284, w.mem[0], 20000) == 0);
    CHECK(w.mem[1][16283] == 0 && w.mem[1][16284 + 20000] == 0);
    rifl_rdma_record rec;
    rifl_rdma_record_unpack(w.mem[1] + 900000, &rec);
    CHECK_EQ_U(rec.cookie, 0xC0FFEE);
    CHECK_EQ_U(rec.transfer_length, 20000);
    CHECK_EQ_U(rec.immediate, 77);
    CHECK_EQ_U(rec.src_node, 1);
    CHECK_EQ_U(rec.pdid, PD);
    CHECK(rec.written);
    const rifl_rdma_stats *s = rifl_rdma_get_stats(w.e[0]), *t = rifl_rdma_get_stats(w.e[1]);
    CHECK_EQ_U(s->blocks_acked, 3);
    CHECK_EQ_U(t->acks_tx, 3);
    CHECK_EQ_U(t->notifications_written, 1);
    CHECK_EQ_U(s->retransmitted_blocks, 0);
    CHECK_EQ_U(rifl_rdma_pending(w.e[0]), 0);
    wire_free(&w);
}

/* The packets the engine cuts from a block are the layout's. */
static uint64_t cut_seen;
static rifl_rdma_seg cut_list[256];
static unsigned cut_n;
static bool record_cuts(struct wire *w, struct pkt_msg *m)
{
    rifl_rdma_bundle_reader rd;
    rifl_rdma_bundle_reader_init(&rd, m->b + 4, m->len - 4, m->b[1]);
    rifl_rdma_packet p;
    rifl_rdma_check ck;
    while (rifl_rdma_bundle_next(&rd, &p, &ck) == RIFL_RDMA_WALK_PACKET)
        if (p.hdr.type == RIFL_RDMA_WRITE && cut_n < 256)
            cut_list[cut_n++] = (rifl_rdma_seg){ p.hdr.dst_va, p.hdr.length, p.ftr.pkt_index,
                                                 p.ftr.first, p.ftr.last };
    cut_seen++;
    return true;
}

static void t_packets_follow_layout(void)
{
    struct wire w;
    wire_init(&w, NULL, 2);
    w.tamper = record_cuts;
    cut_n = 0;
    uint64_t dst = w.mr[1].va + 16384 + 77; /* one block: inside one 16 KB window */
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va + 5, 2, dst, 9000, 0, NULL, 1, w.now),
               RIFL_OK);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    rifl_rdma_seg want[64];
    unsigned n = rifl_rdma_block_packets(dst, 9000, false, want);
    CHECK_EQ_U(cut_n, n);
    for (unsigned i = 0; i < n && i < cut_n; i++) {
        CHECK_EQ_U(cut_list[i].dst_va, want[i].dst_va);
        CHECK_EQ_U(cut_list[i].len, want[i].len);
        CHECK_EQ_U(cut_list[i].pkt_index, want[i].pkt_index);
        CHECK_EQ_U(cut_list[i].first, want[i].first);
        CHECK_EQ_U(cut_list[i].last, want[i].last);
    }
    CHECK(cut_list[0].len == 256 - 77);
    wire_free(&w);
}

static void t_read_and_send(void)
{
    struct wire w;
    wire_init(&w, NULL, 3);
    fill_random(w.mem[2] + 1000, 50000, 5);
    CHECK_EQ_I(rifl_rdma_post_read(w.e[0], PD, w.mr[0].va + 300, 3, w.mr[2].va + 1000, 50000, 1,
                                   99, w.now),
               RIFL_OK);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 2000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK_EQ_U(wc.op, RIFL_RDMA_OP_READ);
    CHECK_EQ_U(wc.wr_id, 99);
    CHECK(memcmp(w.mem[0] + 300, w.mem[2] + 1000, 50000) == 0);

    REQUIRE(rifl_rdma_create_mailbox(w.e[1], PD, 5, 2) == RIFL_OK);
    const char hello[] = "hello, mailbox";
    CHECK_EQ_I(rifl_rdma_post_send(w.e[0], PD, 2, 5, hello, sizeof hello, 7, w.now), RIFL_OK);
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK_EQ_U(wc.op, RIFL_RDMA_OP_SEND);
    char got[300];
    size_t len = 0;
    uint32_t src = 0;
    CHECK_EQ_I(rifl_rdma_poll_mailbox(w.e[1], PD, 5, got, sizeof got, &len, &src), 1);
    CHECK_EQ_U(len, sizeof hello);
    CHECK_EQ_U(src, 1);
    CHECK(memcmp(got, hello, sizeof hello) == 0);
    CHECK_EQ_I(rifl_rdma_poll_mailbox(w.e[1], PD, 5, got, sizeof got, &len, &src), 0);
    /* a full mailbox NACKs NO_CONTEXT; the send goes through once it is read */
    for (int i = 0; i < 3; i++)
        CHECK_EQ_I(rifl_rdma_post_send(w.e[0], PD, 2, 5, hello, 4, 10 + i, w.now), RIFL_OK);
    rifl_rdma_wc wcs[3];
    unsigned got_n = wire_wait(&w, 0, wcs, 2, 1000000);
    CHECK_EQ_U(got_n, 2);
    CHECK(rifl_rdma_get_stats(w.e[1])->nacks_tx[RIFL_RDMA_NACK_NO_CONTEXT] > 0);
    for (int i = 0; i < 2; i++)
        CHECK_EQ_I(rifl_rdma_poll_mailbox(w.e[1], PD, 5, got, sizeof got, &len, &src), 1);
    CHECK_EQ_U(wire_wait(&w, 0, wcs, 1, 1000000), 1);
    CHECK_EQ_I(wcs[0].status, RIFL_OK);
    CHECK_EQ_I(rifl_rdma_poll_mailbox(w.e[1], PD, 5, got, sizeof got, &len, &src), 1);
    /* the node that served the read saw its blocks acknowledged */
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[2])->read_requests_served, 1);
    wire_free(&w);
}

/* Every access the target must refuse: its memory stays as it was. */
static void t_protection(void)
{
    struct wire w;
    wire_init(&w, NULL, 4);
    memset(w.mem[1], 0xA5, MEM);
    uint8_t other[8192], ro[8192], edge[8192];
    memset(other, 0x3C, sizeof other);
    memset(ro, 0x3C, sizeof ro);
    memset(edge, 0x3C, sizeof edge);
    rifl_rdma_mr mr_other, mr_ro, mr_edge;
    /* only the first half of `edge` is registered: the rest is a canary */
    REQUIRE(rifl_rdma_reg_mr(w.e[1], PD, edge, 4096, RIFL_RDMA_REMOTE_WRITE, &mr_edge) == RIFL_OK);
    REQUIRE(rifl_rdma_alloc_pd(w.e[1], 9) == RIFL_OK);
    REQUIRE(rifl_rdma_reg_mr(w.e[1], 9, other, sizeof other, RIFL_RDMA_REMOTE_WRITE, &mr_other) ==
            RIFL_OK);
    REQUIRE(rifl_rdma_reg_mr(w.e[1], PD, ro, sizeof ro, RIFL_RDMA_REMOTE_READ, &mr_ro) == RIFL_OK);
    fill_random(w.mem[0], 8192, 9);
    uint8_t first50[50];
    memcpy(first50, w.mem[0], sizeof first50); /* a read below overwrites them */
    struct {
        uint64_t dst, len;
    } bad[] = {
        { mr_other.va, 100 },                 /* another domain's region */
        { mr_ro.va + 10, 100 },               /* no remote write */
        { mr_edge.va + 4096 - 50, 100 },      /* past the region's end: the
                                                 packet inside it is written */
        { w.mr[1].va - 4096, 100 },           /* between regions */
    };
    rifl_rdma_wc wc;
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, bad[i].dst, bad[i].len, 0,
                                        NULL, i, w.now),
                   RIFL_OK);
        REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
        CHECK_EQ_I(wc.status, RIFL_ERR_REMOTE_PROTECTION);
    }
    /* a notification aimed at memory of another domain */
    rifl_rdma_notification n = { rifl_rdma_gva_word(2, mr_other.va), 1, 2 };
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va + 4096, 64, 0, &n, 5,
                                    w.now),
               RIFL_OK);
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_ERR_REMOTE_PROTECTION);
    /* a read of memory without remote read */
    CHECK_EQ_I(rifl_rdma_post_read(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va, 64, 0, 6, w.now),
               RIFL_OK);
    /* (the target's main region has every right: allowed) */
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK_EQ_I(rifl_rdma_post_read(w.e[0], PD, w.mr[0].va, 2, mr_other.va, 64, 0, 7, w.now),
               RIFL_OK);
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_ERR_REMOTE_PROTECTION);
    /* canaries: nothing written where it was refused (protection is per
     * packet: a packet inside a region is written, the one outside is not) */
    for (size_t i = 0; i < sizeof other; i++)
        if (other[i] != 0x3C || ro[i] != 0x3C) {
            CHECK_MSG(0, "byte %zu of a protected region changed", i);
            break;
        }
    for (size_t i = 4096; i < sizeof edge; i++)
        if (edge[i] != 0x3C) {
            CHECK_MSG(0, "byte %zu past the region's end changed", i);
            break;
        }
    CHECK(memcmp(edge + 4096 - 50, first50, 50) == 0);
    CHECK(rifl_rdma_get_stats(w.e[1])->protection_violations >= 6);
    /* local checks refuse before anything is sent */
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va + MEM - 10, 2, w.mr[1].va, 100, 0,
                                    NULL, 8, w.now),
               RIFL_ERR_PROTECTION);
    CHECK_EQ_I(rifl_rdma_post_read(w.e[0], 9, w.mr[0].va, 2, w.mr[1].va, 100, 0, 8, w.now),
               RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 77, w.mr[1].va, 100, 0, NULL, 8,
                                    w.now),
               RIFL_ERR_UNREACHABLE);
    wire_free(&w);
}

/* A damaged payload is NACKed and nothing of it is written; the block is
 * sent again. */
static bool damage_first(struct wire *w, struct pkt_msg *m)
{
    if (w->tampered || m->from.node != 1)
        return true;
    /* the first WRITE packet's first payload byte */
    m->b[4 + 16] ^= 0xFF;
    w->tampered++;
    return true;
}

static void t_payload_crc(void)
{
    struct wire w;
    wire_init(&w, NULL, 5);
    w.tamper = damage_first;
    memset(w.mem[1], 0x11, 4096);
    fill_random(w.mem[0], 200, 3);
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va, 200, 0, NULL, 1, w.now),
               RIFL_OK);
    /* deliver the damaged bundle alone: the target memory is untouched */
    for (int i = 0; i < 7; i++)
        wire_step(&w);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[1])->nacks_tx[RIFL_RDMA_NACK_CRC], 1);
    CHECK(w.mem[1][0] == 0x11 && w.mem[1][199] == 0x11);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK(memcmp(w.mem[1], w.mem[0], 200) == 0);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->retransmitted_blocks, 1);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->nacks_rx[RIFL_RDMA_NACK_CRC], 1);
    wire_free(&w);
}

/* A bundle of one crafted packet, into msg (RIFL_RDMA_BUNDLE_CAP bytes):
 * its length, 0 when it could not be built. */
static size_t one_packet_bundle(const rifl_rdma_hdr *h, const rifl_rdma_ftr *f,
                                const uint8_t *payload, uint8_t *msg)
{
    uint8_t pkt[RIFL_RDMA_MAX_PACKET];
    size_t len = 0, mlen = 0;
    rifl_rdma_bundle b;
    bool ok = rifl_rdma_packet_build(h, f, payload, pkt, sizeof pkt, &len) == RIFL_OK &&
              rifl_rdma_bundle_init(&b, msg, RIFL_RDMA_BUNDLE_CAP) == RIFL_OK &&
              rifl_rdma_bundle_add(&b, pkt, len) == RIFL_OK &&
              rifl_rdma_bundle_finish(&b, &mlen) == RIFL_OK;
    CHECK(ok);
    return ok ? mlen : 0;
}

/* One crafted WRITE packet of a block from node 1 to node 2 (engine 1),
 * packet `idx` of the block at dst, fed to the engine alone in a bundle. */
static void feed_write(struct wire *w, unsigned tid, unsigned attempt, uint32_t dst_node,
                       uint64_t dst, unsigned idx, unsigned count)
{
    uint8_t payload[256], msg[RIFL_RDMA_BUNDLE_CAP];
    fill_random(payload, sizeof payload, tid * 64 + idx);
    uint64_t va = dst + 256u * idx;
    rifl_rdma_hdr h = { .type = RIFL_RDMA_WRITE, .pdid = PD, .dst_node = dst_node, .dst_va = va,
                        .length = 256, .path = 0 };
    rifl_rdma_ftr f = { .src_node = 1, .tid = tid, .gen = 1, .attempt = attempt,
                        .first = idx == 0, .last = idx + 1 == count,
                        .pkt_index = (unsigned)(va >> 8) & 63u };
    size_t mlen = one_packet_bundle(&h, &f, payload, msg);
    w->now += 10;
    CHECK_EQ_I(rifl_rdma_input(w->e[1], w->now, msg, mlen, (rifl_rdma_route){ 1, 0 }), RIFL_OK);
}

/* Responses node 2 has for node 1: the NACKs of each status. */
static void count_nacks(struct wire *w, unsigned nacks[RIFL_RDMA_STATUS_COUNT])
{
    memset(nacks, 0, RIFL_RDMA_STATUS_COUNT * sizeof *nacks);
    uint8_t msg[RIFL_RDMA_BUNDLE_CAP];
    rifl_rdma_route to;
    size_t len;
    while ((len = rifl_rdma_output(w->e[1], w->now, true, msg, sizeof msg, &to)) > 0) {
        rifl_rdma_bundle_reader r;
        REQUIRE(len > RIFL_RDMA_BUNDLE_PREFIX);
        rifl_rdma_bundle_reader_init(&r, msg + RIFL_RDMA_BUNDLE_PREFIX,
                                     len - RIFL_RDMA_BUNDLE_PREFIX, msg[1]);
        rifl_rdma_packet p;
        rifl_rdma_check check;
        while (rifl_rdma_bundle_next(&r, &p, &check) == RIFL_RDMA_WALK_PACKET) {
            CHECK_EQ_U(p.hdr.type, RIFL_RDMA_RESP);
            const rifl_rdma_ftr f = p.ftr;
            if (f.status < RIFL_RDMA_STATUS_COUNT)
                nacks[f.status]++;
        }
    }
}

/* A NACK without a context to mark the attempt failed (no way free in the
 * set; a packet that does not decode) still goes once per attempt: the
 * attempt's other packets are dropped unanswered and counted. */
static void t_nack_once(void)
{
    struct wire w;
    wire_init(&w, NULL, 9);
    uint64_t base = (w.mr[1].va + RIFL_RDMA_PAGE - 1) & ~(uint64_t)(RIFL_RDMA_PAGE - 1);
    /* 16 blocks left open fill the set of TIDs 0, 16, 32, ... from node 1
     * (set = (tid ^ 1) mod 16) */
    for (unsigned k = 0; k < 16; k++)
        feed_write(&w, 1 + 16 * k, 0, 2, base + RIFL_RDMA_PAGE * k, 0, 2);
    unsigned n[RIFL_RDMA_STATUS_COUNT];
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_NACK_NO_CONTEXT], 0);
    const rifl_rdma_stats *st = rifl_rdma_get_stats(w.e[1]);
    /* a 4-packet block of the same set finds no way: one NACK */
    for (unsigned i = 0; i < 4; i++)
        feed_write(&w, 1 + 16 * 16, 0, 2, base + RIFL_RDMA_PAGE * 20, i, 4);
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_NACK_NO_CONTEXT], 1);
    CHECK_EQ_U(st->nacks_tx[RIFL_RDMA_NACK_NO_CONTEXT], 1);
    CHECK_EQ_U(st->nacks_coalesced, 3);
    /* its next attempt is NACKed again, once */
    for (unsigned i = 0; i < 4; i++)
        feed_write(&w, 1 + 16 * 16, 1, 2, base + RIFL_RDMA_PAGE * 20, i, 4);
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_NACK_NO_CONTEXT], 1);
    CHECK_EQ_U(st->nacks_coalesced, 6);
    /* a block of another set is taken as usual */
    for (unsigned i = 0; i < 2; i++)
        feed_write(&w, 2, 0, 2, base + RIFL_RDMA_PAGE * 21, i, 2);
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_ACK], 1);
    CHECK_EQ_U(n[RIFL_RDMA_NACK_NO_CONTEXT], 0);
    /* packets for another node fail decoding: one NACK for their attempt */
    for (unsigned i = 0; i < 3; i++)
        feed_write(&w, 3, 0, 3, base + RIFL_RDMA_PAGE * 22, i, 3);
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_NACK_DECODE], 1);
    CHECK_EQ_U(st->nacks_coalesced, 8);
    wire_free(&w);
}

/* One crafted send from node 1 to mailbox 2 of node 2 (engine 1): 16
 * bytes of `byte`, fed to the engine alone in a bundle. */
static void feed_send(struct wire *w, unsigned tid, unsigned gen, unsigned attempt, uint8_t byte)
{
    uint8_t payload[16], msg[RIFL_RDMA_BUNDLE_CAP];
    memset(payload, byte, sizeof payload);
    rifl_rdma_hdr h = { .type = RIFL_RDMA_WRITE, .pdid = PD, .dst_node = 2,
                        .dst_va = RIFL_RDMA_PERIPHERAL(2), .length = sizeof payload };
    rifl_rdma_ftr f = { .src_node = 1, .tid = tid, .gen = gen, .attempt = attempt,
                        .first = true, .last = true };
    size_t mlen = one_packet_bundle(&h, &f, payload, msg);
    w->now += 10;
    CHECK_EQ_I(rifl_rdma_input(w->e[1], w->now, msg, mlen, (rifl_rdma_route){ 1, 0 }), RIFL_OK);
}

/* Messages waiting in mailbox 2 of node 2, taken out; each one's first
 * byte into `first` (when not NULL). */
static unsigned drain_mailbox2(struct wire *w, uint8_t *first)
{
    uint8_t m[256];
    size_t len;
    uint32_t src;
    unsigned n = 0;
    while (rifl_rdma_poll_mailbox(w->e[1], PD, 2, m, sizeof m, &len, &src) == 1) {
        if (first)
            first[n] = m[0];
        n++;
    }
    return n;
}

/* A send whose ACK was lost, sent again after its context went to other
 * blocks (the way done longest ago is taken on a miss): ACKed again, once
 * per attempt, and never put in the mailbox a second time. */
static void t_send_retry_after_context_reused(void)
{
    struct wire w;
    wire_init(&w, NULL, 13);
    REQUIRE(rifl_rdma_create_mailbox(w.e[1], PD, 2, 64) == RIFL_OK);
    const rifl_rdma_stats *st = rifl_rdma_get_stats(w.e[1]);
    unsigned n[RIFL_RDMA_STATUS_COUNT];
    uint8_t first[64];
    feed_send(&w, 1, 1, 0, 'A'); /* TID 1: set (1 ^ 1) mod 16 = 0 */
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_ACK], 1); /* (lost on its way back) */
    CHECK_EQ_U(drain_mailbox2(&w, first), 1);
    CHECK_EQ_U(first[0], 'A');
    /* 16 more sends of set 0 complete: the last takes TID 1's way */
    for (unsigned k = 1; k <= 16; k++)
        feed_send(&w, 1 + 16 * k, 1, 0, (uint8_t)k);
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_ACK], 16);
    CHECK_EQ_U(drain_mailbox2(&w, NULL), 16);
    /* TID 1's sender timed out and sends it again */
    feed_send(&w, 1, 1, 1, 'A');
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_ACK], 1);
    CHECK_EQ_U(drain_mailbox2(&w, NULL), 0);
    CHECK_EQ_U(st->duplicates_remembered, 1);
    /* the same attempt again: dropped unanswered; a later one: ACKed */
    feed_send(&w, 1, 1, 1, 'A');
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_ACK], 0);
    feed_send(&w, 1, 1, 2, 'A');
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_ACK], 1);
    CHECK_EQ_U(drain_mailbox2(&w, NULL), 0);
    /* with no way to take (16 blocks of set 0 left open), still ACKed */
    uint64_t base = (w.mr[1].va + RIFL_RDMA_PAGE - 1) & ~(uint64_t)(RIFL_RDMA_PAGE - 1);
    for (unsigned k = 0; k < 16; k++)
        feed_write(&w, 1 + 16 * (17 + k), 0, 2, base + RIFL_RDMA_PAGE * k, 0, 2);
    feed_send(&w, 1, 1, 3, 'A');
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_ACK], 1);
    CHECK_EQ_U(n[RIFL_RDMA_NACK_NO_CONTEXT], 0);
    CHECK_EQ_U(drain_mailbox2(&w, NULL), 0);
    /* the TID's next block is a new message */
    for (unsigned k = 0; k < 16; k++)
        feed_write(&w, 1 + 16 * (17 + k), 0, 2, base + RIFL_RDMA_PAGE * k, 1, 2);
    feed_send(&w, 1, 2, 0, 'B');
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_ACK], 17);
    CHECK_EQ_U(drain_mailbox2(&w, first), 1);
    CHECK_EQ_U(first[0], 'B');
    CHECK_EQ_U(st->duplicates_remembered, 2);
    CHECK_EQ_U(st->mailbox_messages, 18);
    wire_free(&w);
}

/* A send completed by a retry (its first attempt held up on its way)
 * whose earlier attempt, or the same one again, turns up after the
 * send's context went to other blocks: the block is done whatever the
 * attempt, so it is dropped (no new attempt, so no ACK) and never put in
 * the mailbox a second time; a later attempt is still ACKed once. */
static void t_send_late_attempt_after_context_reused(void)
{
    struct wire w;
    wire_init(&w, NULL, 14);
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed + 900);
    REQUIRE(rifl_rdma_create_mailbox(w.e[1], PD, 2, 64) == RIFL_OK);
    const rifl_rdma_stats *st = rifl_rdma_get_stats(w.e[1]);
    unsigned n[RIFL_RDMA_STATUS_COUNT];
    uint8_t first[64];
    unsigned filler = 1; /* the next of the other TIDs of set 0 (1 + 16 k) */
    uint64_t remembered = 0;
    /* late attempts: the first, the completing one, one between */
    for (unsigned round = 0; round < 3; round++) {
        unsigned tid = 1 + 16 * (60 + round); /* set (tid ^ 1) mod 16 = 0 */
        unsigned done = 1 + (unsigned)rifl_rng_below(&rng, 14);
        unsigned late = round == 0   ? 0
                        : round == 1 ? done
                                     : (unsigned)rifl_rng_below(&rng, done + 1);
        uint8_t byte = (uint8_t)('A' + round);
        feed_send(&w, tid, 5, done, byte); /* the retry completes it */
        count_nacks(&w, n);
        CHECK_EQ_U(n[RIFL_RDMA_ACK], 1);
        CHECK_EQ_U(drain_mailbox2(&w, first), 1);
        CHECK_EQ_U(first[0], byte);
        /* 16 other sends of set 0 complete: the way goes to one of them */
        for (unsigned k = 0; k < 16; k++, filler++)
            feed_send(&w, 1 + 16 * filler, 1, 0, 'z');
        count_nacks(&w, n);
        CHECK_EQ_U(n[RIFL_RDMA_ACK], 16);
        CHECK_EQ_U(drain_mailbox2(&w, NULL), 16);
        feed_send(&w, tid, 5, late, byte); /* held up on its way */
        count_nacks(&w, n);
        CHECK_MSG(n[RIFL_RDMA_ACK] == 0, "attempt %u after %u ACKed", late, done);
        CHECK_MSG(drain_mailbox2(&w, NULL) == 0, "attempt %u after %u delivered again", late,
                  done);
        remembered++;
        CHECK_EQ_U(st->duplicates_remembered, remembered);
        /* the sender, its ACK lost, tries again: ACKed, not delivered */
        if (done < 15) {
            feed_send(&w, tid, 5, done + 1, byte);
            count_nacks(&w, n);
            CHECK_EQ_U(n[RIFL_RDMA_ACK], 1);
            CHECK_EQ_U(drain_mailbox2(&w, NULL), 0);
            /* (the way the late attempt took holds the block as done) */
            CHECK_EQ_U(st->duplicates_remembered, remembered);
        }
    }
    CHECK_EQ_U(st->mailbox_messages, 3 + 3 * 16);
    wire_free(&w);
}

/* A TID's generations come to a node in order: a packet of an older
 * block of the TID still on its way (any attempt) after the TID's next
 * block began here, and after that block's context went to other blocks,
 * is stale: dropped unanswered, never in the mailbox. */
static void t_send_older_block_after_context_reused(void)
{
    struct wire w;
    wire_init(&w, NULL, 16);
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed + 960);
    REQUIRE(rifl_rdma_create_mailbox(w.e[1], PD, 2, 64) == RIFL_OK);
    const rifl_rdma_stats *st = rifl_rdma_get_stats(w.e[1]);
    unsigned n[RIFL_RDMA_STATUS_COUNT];
    unsigned tid = 1 + 16 * (unsigned)rifl_rng_below(&rng, 32); /* set 0 */
    bool complete = rifl_rng_below(&rng, 2); /* the newer block completed, or only began */
    /* (feed_write's generation is 1) */
    unsigned gen = complete ? (unsigned)rifl_rng_below(&rng, 1024) : 1;
    unsigned behind = 1 + (unsigned)rifl_rng_below(&rng, 511);
    unsigned old = (gen - behind) & 1023u, attempt = (unsigned)rifl_rng_below(&rng, 16);
    uint64_t base = (w.mr[1].va + RIFL_RDMA_PAGE - 1) & ~(uint64_t)(RIFL_RDMA_PAGE - 1);
    if (complete) {
        feed_send(&w, tid, gen, 0, 'N');
        CHECK_EQ_U(drain_mailbox2(&w, NULL), 1);
    } else { /* 1 of 2 packets; its context idle long enough to be taken */
        feed_write(&w, tid, 0, 2, base + RIFL_RDMA_PAGE * 40, 0, 2);
        w.now += rifl_rdma_default_config.context_idle_ns;
    }
    count_nacks(&w, n);
    /* 16 other sends of set 0 complete: the way goes to one of them */
    for (unsigned k = 0; k < 16; k++)
        feed_send(&w, 1 + 16 * (40 + k), 1, 0, 'z');
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_ACK], 16);
    CHECK_EQ_U(drain_mailbox2(&w, NULL), 16);
    uint64_t stale = st->stale_dropped;
    feed_send(&w, tid, old, attempt, 'O');
    count_nacks(&w, n);
    CHECK_MSG(n[RIFL_RDMA_ACK] == 0, "gen %u after %u (%s)", old, gen,
              complete ? "completed" : "begun");
    CHECK_MSG(drain_mailbox2(&w, NULL) == 0, "gen %u after %u delivered", old, gen);
    CHECK_EQ_U(st->stale_dropped, stale + 1);
    /* the TID's next block is new */
    feed_send(&w, tid, (gen + 1) & 1023u, 0, 'M');
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_ACK], 1);
    CHECK_EQ_U(drain_mailbox2(&w, NULL), 1);
    wire_free(&w);
}

/* Node 1 writes 8 bytes to node 3 `count` times, one block each, as many
 * at once as it takes: every TID of node 1 is used about count / 1024
 * times, none of them towards node 2. */
static void writes_to_node3(struct wire *w, unsigned count)
{
    unsigned posted = 0, done = 0, bad = 0;
    uint64_t end = w->now + 100000ull * count + 10000000;
    while (done < count && w->now < end) {
        while (posted < count) {
            int rc = rifl_rdma_post_write(w->e[0], PD, w->mr[0].va, 3,
                                          w->mr[2].va + 8 * (posted % 1024), 8, 0, NULL,
                                          posted, w->now);
            if (rc == RIFL_ERR_AGAIN)
                break;
            CHECK_EQ_I(rc, RIFL_OK);
            posted++;
        }
        wire_step(w);
        rifl_rdma_wc wc[64];
        unsigned got = rifl_rdma_poll_cq(w->e[0], wc, 64);
        for (unsigned i = 0; i < got; i++)
            bad += wc[i].status != RIFL_OK;
        done += got;
    }
    CHECK_EQ_U(done, count);
    CHECK_EQ_U(bad, 0);
}

/* Node 1 sends `count` messages (phase, index) to mailbox 2 of node 2;
 * returns those put in the mailbox exactly once, every send completed
 * and checked. */
static unsigned sends_to_node2(struct wire *w, uint8_t phase, unsigned count)
{
    static uint8_t seen[1024];
    if (count > 1024)
        count = 1024;
    memset(seen, 0, sizeof seen);
    unsigned posted = 0, done = 0, bad = 0, wrong = 0;
    uint64_t end = w->now + 100000000;
    while (done < count && w->now < end) {
        while (posted < count) {
            uint8_t m[3] = { phase, (uint8_t)posted, (uint8_t)(posted >> 8) };
            int rc = rifl_rdma_post_send(w->e[0], PD, 2, 2, m, sizeof m, posted, w->now);
            if (rc == RIFL_ERR_AGAIN)
                break;
            CHECK_EQ_I(rc, RIFL_OK);
            posted++;
        }
        wire_step(w);
        rifl_rdma_wc wc[64];
        unsigned got = rifl_rdma_poll_cq(w->e[0], wc, 64);
        for (unsigned i = 0; i < got; i++)
            bad += wc[i].status != RIFL_OK;
        done += got;
        uint8_t m[256];
        size_t len;
        uint32_t src;
        while (rifl_rdma_poll_mailbox(w->e[1], PD, 2, m, sizeof m, &len, &src) == 1) {
            unsigned i = (unsigned)m[1] | (unsigned)m[2] << 8;
            if (len != 3 || src != 1 || m[0] != phase || i >= count)
                wrong++;
            else
                seen[i]++;
        }
    }
    CHECK_EQ_U(done, count);
    CHECK_MSG(bad == 0, "phase %u: %u sends failed", phase, bad);
    CHECK_EQ_U(wrong, 0);
    unsigned once = 0;
    for (unsigned i = 0; i < count; i++)
        once += seen[i] == 1;
    return once;
}

/* A TID's generation wraps after 1024 uses.  Node 1 sends 1024 messages
 * to node 2 (each TID once, in the order they are taken: node 2 remembers
 * every TID's generation, and holds the last 256 in its contexts), uses
 * each TID 1023 times for blocks to node 3 alone, and sends 1024 more
 * messages to node 2, each with the generation node 2 remembers for its
 * TID, one wrap on.  Then it uses each TID another 511-1022 times
 * elsewhere and sends 256 messages to node 2 on the TIDs whose contexts
 * node 2 still holds, each with a generation 512-1023 ahead of the
 * context's ("older" by the half window).  Every message is a new one
 * and arrives, once. */
static void t_generation_wrap(void)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    c.block_timeout_ns = 20000;
    c.block_timeout_max_ns = 100000;
    c.blocks_per_node = 64;
    c.transfers_per_pd = 256;
    struct wire w;
    wire_init(&w, &c, 15);
    w.delay = 100;
    rifl_rng rng;
    rifl_rng_seed(&rng, test_seed + 950);
    REQUIRE(rifl_rdma_create_mailbox(w.e[1], PD, 2, 1024) == RIFL_OK);
    CHECK_EQ_U(sends_to_node2(&w, 0, 1024), 1024);
    writes_to_node3(&w, 1023 * 1024);
    unsigned once = sends_to_node2(&w, 1, 1024);
    CHECK_MSG(once == 1024, "after a wrap: %u of 1024 arrived once", once);
    unsigned k = 511 + (unsigned)rifl_rng_below(&rng, 512);
    writes_to_node3(&w, k * 1024 + 768);
    once = sends_to_node2(&w, 2, 256);
    CHECK_MSG(once == 256, "after %u uses elsewhere: %u of 256 arrived once", k, once);
    const rifl_rdma_stats *st = rifl_rdma_get_stats(w.e[1]);
    CHECK_EQ_U(st->mailbox_messages, 2 * 1024 + 256);
    wire_free(&w);
}

/* Drops `ack_loss` of node 2's bundles (its ACKs) on top of the wire's
 * loss. */
static double ack_loss;
static bool lose_acks(struct wire *w, struct pkt_msg *m)
{
    return m->from.node != 2 || rifl_rng_double(&w->rng) >= ack_loss;
}

/* Seeded: nodes 1 and 3 send messages of 2 to 256 bytes to node 2 while
 * most of its ACKs are lost, so that retries come long after their
 * contexts went to other blocks: every message arrives, exactly once. */
static void send_once_run(uint64_t seed, unsigned per_sender)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    c.block_timeout_ns = 50000;
    c.block_timeout_max_ns = 400000;
    struct wire w;
    wire_init(&w, &c, seed);
    w.loss = 0.02;
    w.reorder = 0.05;
    ack_loss = 0.5;
    w.tamper = lose_acks;
    REQUIRE(rifl_rdma_create_mailbox(w.e[1], PD, 2, 1024) == RIFL_OK);
    enum { MAXN = 1024 };
    REQUIRE(per_sender <= MAXN);
    static uint8_t seen[2][MAXN];
    memset(seen, 0, sizeof seen);
    unsigned posted[2] = { 0, 0 }, done[2] = { 0, 0 }, out[2] = { 0, 0 }, twice = 0, wrong = 0;
    while ((done[0] < per_sender || done[1] < per_sender) && w.now < 2000000000ull) {
        for (unsigned s = 0; s < 2; s++) {
            unsigned node = s ? 2 : 0; /* engines of nodes 1 and 3 */
            while (posted[s] < per_sender && out[s] < 16) {
                uint8_t m[256];
                unsigned i = posted[s];
                size_t len = 2 + rifl_rng_below(&w.rng, 255);
                fill_random(m, len, seed * 4096 + s * MAXN + i);
                m[0] = (uint8_t)i, m[1] = (uint8_t)(i >> 8); /* which message */
                int rc = rifl_rdma_post_send(w.e[node], PD, 2, 2, m, len, i, w.now);
                if (rc == RIFL_ERR_AGAIN)
                    break;
                CHECK_EQ_I(rc, RIFL_OK);
                posted[s]++;
                out[s]++;
            }
        }
        wire_step(&w);
        for (unsigned s = 0; s < 2; s++) {
            rifl_rdma_wc wc;
            while (rifl_rdma_poll_cq(w.e[s ? 2 : 0], &wc, 1)) {
                CHECK_EQ_I(wc.status, RIFL_OK);
                out[s]--;
                done[s]++;
            }
        }
        uint8_t m[256], want[256];
        size_t len;
        uint32_t src;
        while (rifl_rdma_poll_mailbox(w.e[1], PD, 2, m, sizeof m, &len, &src) == 1) {
            unsigned s = src == 3, i = len >= 2 ? (unsigned)m[0] | (unsigned)m[1] << 8 : MAXN;
            if ((src != 1 && src != 3) || i >= posted[s]) {
                wrong++;
                continue;
            }
            fill_random(want, len, seed * 4096 + s * MAXN + i);
            want[0] = m[0], want[1] = m[1];
            if (memcmp(want, m, len))
                wrong++;
            else if (seen[s][i]++)
                twice++;
        }
    }
    CHECK_EQ_U(done[0], per_sender);
    CHECK_EQ_U(done[1], per_sender);
    CHECK_EQ_U(wrong, 0);
    CHECK_MSG(twice == 0, "%u messages delivered twice", twice);
    unsigned once = 0;
    for (unsigned s = 0; s < 2; s++)
        for (unsigned i = 0; i < per_sender; i++)
            once += seen[s][i] == 1;
    CHECK_EQ_U(once, 2 * per_sender);
    const rifl_rdma_stats *st = rifl_rdma_get_stats(w.e[1]);
    CHECK(st->duplicates_remembered > 0); /* the case came up */
    CHECK_EQ_U(st->mailbox_messages, 2 * per_sender);
    wire_free(&w);
}

static void t_send_once_random(void)
{
    send_once_run(test_seed + 800, test_long_run ? 1024 : 600);
}

/* A block is remembered block_memory_ns after its last packet came, and no
 * longer (docs/rdma.md, "Forgetting").  Within that time a retry whose ACK
 * was lost is a duplicate (ACKed, never delivered) and the memory lasts
 * from it, and an older block's packet is stale; after it, the TID's next
 * packet starts a new block, although its generation is "older" than the
 * one remembered (512 or more uses of the TID the node never saw, all
 * lost) or the same (1024 uses on): both are delivered, once.  The memory
 * is looked at through the TID's context and, once other blocks have
 * taken the context, through the node's memory of the TID alone. */
static void t_memory_ages_out(void)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    c.block_memory_ns = 600000000;
    const uint64_t mem = c.block_memory_ns;
    struct wire w;
    wire_init(&w, &c, 19);
    REQUIRE(rifl_rdma_create_mailbox(w.e[1], PD, 2, 64) == RIFL_OK);
    const rifl_rdma_stats *st = rifl_rdma_get_stats(w.e[1]);
    unsigned n[RIFL_RDMA_STATUS_COUNT], filler = 1;
    uint8_t first[64];
    const unsigned tid = 1 + 16 * 60; /* set (tid ^ 1) mod 16 = 0 */
    feed_send(&w, tid, 1, 0, 'A');
    uint64_t last = w.now; /* the block's last packet */
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_ACK], 1);
    CHECK_EQ_U(drain_mailbox2(&w, first), 1);
    CHECK_EQ_U(first[0], 'A');
    /* 16 other sends of set 0 take the TID's context */
    for (unsigned k = 0; k < 16; k++, filler++)
        feed_send(&w, 1 + 16 * filler, 1, 0, 'z');
    count_nacks(&w, n);
    CHECK_EQ_U(drain_mailbox2(&w, NULL), 16);
    /* retries at the end of the memory, each renewing it: duplicates */
    for (unsigned attempt = 1; attempt <= 2; attempt++) {
        w.now = last + mem - 10; /* (feed_send adds 10) */
        feed_send(&w, tid, 1, attempt, 'A');
        last = w.now;
        count_nacks(&w, n);
        CHECK_EQ_U(n[RIFL_RDMA_ACK], 1);
        CHECK_EQ_U(drain_mailbox2(&w, NULL), 0);
    }
    /* an older block's packet, as late: stale (and it renews nothing) */
    uint64_t stale = st->stale_dropped;
    w.now = last + mem - 10;
    feed_send(&w, tid, 1020, 3, 'O');
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_ACK], 0);
    CHECK_EQ_U(drain_mailbox2(&w, NULL), 0);
    CHECK_EQ_U(st->stale_dropped, stale + 1);
    CHECK_EQ_U(st->memory_expired, 0);
    /* the context goes to other blocks again; just past the memory a
     * block 600 uses on ("older" by the half window) is a new one */
    for (unsigned k = 0; k < 16; k++, filler++)
        feed_send(&w, 1 + 16 * filler, 1, 0, 'z');
    count_nacks(&w, n);
    CHECK_EQ_U(drain_mailbox2(&w, NULL), 16);
    w.now = last + mem + 1 - 10;
    feed_send(&w, tid, 601, 0, 'B');
    count_nacks(&w, n);
    CHECK_MSG(n[RIFL_RDMA_ACK] == 1, "gen 601 after gen 1 forgotten: %u ACKs", n[RIFL_RDMA_ACK]);
    CHECK_EQ_U(drain_mailbox2(&w, first), 1);
    CHECK_EQ_U(first[0], 'B');
    CHECK_EQ_U(st->memory_expired, 1);
    /* and is remembered in turn: its retry is a duplicate */
    feed_send(&w, tid, 601, 1, 'B');
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_ACK], 1);
    CHECK_EQ_U(drain_mailbox2(&w, NULL), 0);
    /* another TID, 1024 uses on, past the memory: the same generation, a
     * new block (its context still holds the last one), delivered; its
     * retry is ACKed again, not delivered */
    const unsigned tid2 = 1 + 16 * 61;
    feed_send(&w, tid2, 5, 0, 'C');
    count_nacks(&w, n);
    CHECK_EQ_U(drain_mailbox2(&w, NULL), 1);
    w.now += mem + 1;
    unsigned acks = 0, got = 0;
    for (unsigned attempt = 0; attempt < 2; attempt++) {
        feed_send(&w, tid2, 5, attempt, 'D');
        count_nacks(&w, n);
        acks += n[RIFL_RDMA_ACK];
        got += drain_mailbox2(&w, first + got);
    }
    CHECK_MSG(acks == 2 && got == 1 && first[0] == 'D',
              "gen 5 again after it was forgotten: %u ACKs, %u delivered", acks, got);
    CHECK_EQ_U(st->memory_expired, 2);
    CHECK_EQ_U(st->mailbox_messages, 4 + 32);
    wire_free(&w);
}

/* Drops node 1's bundles to node 2 while set. */
static bool lose_to_node2;
static bool drop_to_node2(struct wire *w, struct pkt_msg *m)
{
    (void)w;
    return !(lose_to_node2 && m->from.node == 1 && m->to == 1);
}

/* Nothing on the wire and nothing staged: jump to just before the next
 * timer of any engine. */
static void wire_skip_idle(struct wire *w)
{
    if (w->qn)
        return;
    uint64_t due = UINT64_MAX;
    for (unsigned n = 0; n < NODES; n++) {
        if (rifl_rdma_staged(w->e[n]))
            return;
        uint64_t d = rifl_rdma_next_due(w->e[n]);
        due = d < due ? d : due;
    }
    if (due != UINT64_MAX && due > w->now + 100)
        w->now = due - 100;
}

/* Node 1's next completion, idle times skipped; 0 when none came within
 * `limit` ns. */
static unsigned wire_complete(struct wire *w, rifl_rdma_wc *wc, uint64_t limit)
{
    uint64_t end = w->now + limit;
    while (w->now < end) {
        wire_skip_idle(w);
        wire_step(w);
        if (rifl_rdma_poll_cq(w->e[0], wc, 1))
            return 1;
    }
    return 0;
}

/* The case the memory's limit is for, on real engines: node 1 has one TID
 * free (a chain to node 3 whose first write waits for a source page holds
 * the others), so that every send it makes to node 2 uses that TID.  One
 * send arrives; then 512 in a row are lost whole and fail, and the next
 * one's generation is "older" than the one node 2 remembers by the half
 * window; then another 1023, and the next has the very generation of a
 * block node 2 completed.  Both must arrive, once: neither dropped as
 * stale nor ACKed as a duplicate. */
static void t_loss_past_half_window(void)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    c.blocks_per_node = 1024;
    c.max_transfers = 2048;
    c.transfers_per_pd = 1024;
    struct wire w;
    wire_init(&w, &c, 20);
    w.tamper = drop_to_node2;
    lose_to_node2 = false;
    REQUIRE(rifl_rdma_create_mailbox(w.e[1], PD, 2, 64) == RIFL_OK);
    REQUIRE(rifl_rdma_set_resident(w.e[0], w.mr[0].va + 8192, 1, false) == RIFL_OK);
    static rifl_rdma_wr wr[1023];
    for (unsigned i = 0; i < 1023; i++)
        wr[i] = (rifl_rdma_wr){ .op = i ? RIFL_RDMA_OP_SEND : RIFL_RDMA_OP_WRITE, .pdid = PD,
                                .node = 3, .local_va = w.mr[0].va + 8192,
                                .remote_va = w.mr[2].va, .len = i ? 1 : 64, .mailbox = 2,
                                .buf = "x", .wr_id = 100000 + i };
    unsigned posted = 0;
    CHECK_EQ_I(rifl_rdma_post_chain(w.e[0], wr, 1023, &posted, w.now), RIFL_OK);
    CHECK_EQ_U(posted, 1023);
    const unsigned lost[3] = { 0, 512, 1023 };
    unsigned failed = 0;
    for (unsigned round = 0; round < 3; round++) {
        lose_to_node2 = true;
        for (unsigned i = 0; i < lost[round]; i++) {
            uint8_t m = 'x';
            REQUIRE(rifl_rdma_post_send(w.e[0], PD, 2, 2, &m, 1, i, w.now) == RIFL_OK);
            rifl_rdma_wc wc;
            REQUIRE(wire_complete(&w, &wc, 1000000000) == 1);
            failed += wc.status == RIFL_ERR_RETRY_EXCEEDED;
        }
        lose_to_node2 = false;
        uint8_t m = (uint8_t)('A' + round);
        REQUIRE(rifl_rdma_post_send(w.e[0], PD, 2, 2, &m, 1, 7, w.now) == RIFL_OK);
        rifl_rdma_wc wc;
        REQUIRE(wire_complete(&w, &wc, 1000000000) == 1);
        uint8_t first[64];
        unsigned got = drain_mailbox2(&w, first);
        CHECK_MSG(wc.status == RIFL_OK && got == 1 && first[0] == m,
                  "after %u lost: %s, %u in the mailbox", lost[round],
                  rifl_rdma_strerror(wc.status), got);
    }
    CHECK_EQ_U(failed, 512 + 1023);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[1])->mailbox_messages, 3);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[1])->memory_expired, 2);
    CHECK_EQ_U(rifl_rdma_pending(w.e[0]), 1023); /* (the chain still waits) */
    wire_free(&w);
}

/* Drops node 2's bundles (its ACKs) while set. */
static bool lose_from_node2;
static bool drop_from_node2(struct wire *w, struct pkt_msg *m)
{
    (void)w;
    return !(lose_from_node2 && m->from.node == 2);
}

/* A write with a notification to a mailbox whose ACK is lost, and whose
 * retry then waits for a source page: served within the block's longest
 * life, the retry goes and is a duplicate (ACKed, the record not written
 * again); served later, when node 2 may have forgotten the block, the
 * write gives up (E_RETRY_EXCEEDED, blocks_expired) instead of sending a
 * retry node 2 would take for a new block, writing the record twice. */
static void t_source_page_past_block_life(void)
{
    struct wire w;
    wire_init(&w, NULL, 21);
    w.tamper = drop_from_node2;
    REQUIRE(rifl_rdma_create_mailbox(w.e[1], PD, 2, 8) == RIFL_OK);
    const rifl_rdma_stats *s0 = rifl_rdma_get_stats(w.e[0]), *s1 = rifl_rdma_get_stats(w.e[1]);
    const uint64_t wait[2] = { 100000000, 600000000 }; /* within L (256 ms); past M (512) */
    for (unsigned round = 0; round < 2; round++) {
        lose_from_node2 = true;
        fill_random(w.mem[0] + 8192, 64, 30 + round);
        rifl_rdma_notification nt = { rifl_rdma_gva_word(2, RIFL_RDMA_PERIPHERAL(2)), round, 0 };
        REQUIRE(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va + 8192, 2, w.mr[1].va, 64, 0, &nt,
                                     round, w.now) == RIFL_OK);
        uint64_t written = s1->notifications_written;
        for (unsigned i = 0; i < 100 && s1->notifications_written == written; i++)
            wire_step(&w);
        REQUIRE(s1->notifications_written == written + 1); /* (its ACK lost) */
        REQUIRE(rifl_rdma_set_resident(w.e[0], w.mr[0].va + 8192, 1, false) == RIFL_OK);
        uint64_t page = 0, until = w.now + 10000000;
        while (!rifl_rdma_poll_fault(w.e[0], &page) && w.now < until) {
            wire_skip_idle(&w);
            wire_step(&w);
        }
        REQUIRE(page == w.mr[0].va + 8192); /* the retry waits for it */
        lose_from_node2 = false;
        w.now += wait[round];
        CHECK_EQ_I(rifl_rdma_page_in(w.e[0], page, w.now), RIFL_OK);
        rifl_rdma_wc wc;
        REQUIRE(wire_complete(&w, &wc, 100000000) == 1);
        CHECK_EQ_I(wc.status, round ? RIFL_ERR_RETRY_EXCEEDED : RIFL_OK);
        CHECK_EQ_U(s0->blocks_expired, round);
        CHECK_EQ_U(s1->notifications_written, written + 1);
        CHECK(memcmp(w.mem[1], w.mem[0] + 8192, 64) == 0);
    }
    uint8_t rec[256];
    size_t len;
    uint32_t src;
    unsigned records = 0;
    while (rifl_rdma_poll_mailbox(w.e[1], PD, 2, rec, sizeof rec, &len, &src) == 1)
        records++;
    CHECK_EQ_U(records, 2);
    wire_free(&w);
}

/* Node 1 restarts (a new engine for the same node, whose TIDs'
 * generations start again from the beginning) after sending node 2 1032
 * messages: TIDs 0-7 twice (generation 2), the others once (1).  Node 2
 * remembers those blocks, completed; unless it forgets node 1's old engine
 * (rifl_rdma_forget_node), the new engine's blocks on TIDs 0-7 look older
 * (dropped as stale until they fail) and those on TIDs 8 and up look like
 * the completed ones (ACKed, never delivered).  Forgotten, the two
 * exchange as they did before: 16 sends each in the mailbox once, a write
 * of two blocks and its notification record written, and node 2's write
 * to node 1 landing in the new engine's memory. */
static void t_restart_forget_node(void)
{
    struct wire w;
    wire_init(&w, NULL, 22);
    REQUIRE(rifl_rdma_create_mailbox(w.e[1], PD, 2, 1024) == RIFL_OK);
    rifl_rdma_wc wc;
    /* before: both ways */
    CHECK_EQ_U(sends_to_node2(&w, 0, 1024), 1024);
    CHECK_EQ_U(sends_to_node2(&w, 1, 8), 8);
    fill_random(w.mem[1], 5000, 40);
    CHECK_EQ_I(rifl_rdma_post_write(w.e[1], PD, w.mr[1].va, 1, w.mr[0].va + 200000, 5000, 0, NULL,
                                    1, w.now),
               RIFL_OK);
    REQUIRE(wire_wait(&w, 1, &wc, 1, 10000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    for (unsigned i = 0; i < 100; i++) /* (the last ACKs arrive) */
        wire_step(&w);
    REQUIRE(w.qn == 0);
    /* node 1 restarts; node 2 learns it */
    wire_restart(&w, 0, NULL);
    memset(w.mem[0], 0, MEM);
    CHECK_EQ_I(rifl_rdma_forget_node(w.e[1], 77, 0, w.now), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_rdma_forget_node(NULL, 1, 0, w.now), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_rdma_forget_node(w.e[1], 1, 0, w.now), RIFL_OK);
    /* after: sends (TIDs 0-15) */
    unsigned once = sends_to_node2(&w, 2, 16);
    CHECK_MSG(once == 16, "after the restart %u of 16 sends arrived once", once);
    /* a write of two blocks (TIDs 16, 17) with its notification */
    fill_random(w.mem[0], 20000, 41);
    rifl_rdma_notification nt = { rifl_rdma_gva_word(2, w.mr[1].va + 900000), 0xBEEF, 9 };
    memset(w.mem[1] + 900000, 0, 32);
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va + 100000, 20000, 0, &nt,
                                    2, w.now),
               RIFL_OK);
    REQUIRE(wire_wait(&w, 0, &wc, 1, 200000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK_MSG(memcmp(w.mem[1] + 100000, w.mem[0], 20000) == 0,
              "the new engine's write completed but its bytes are not there");
    rifl_rdma_record r;
    rifl_rdma_record_unpack(w.mem[1] + 900000, &r);
    CHECK(r.written && r.cookie == 0xBEEF && r.immediate == 9 && r.transfer_length == 20000 &&
          r.src_node == 1);
    /* node 2 writes to the new engine */
    fill_random(w.mem[1], 5000, 42);
    CHECK_EQ_I(rifl_rdma_post_write(w.e[1], PD, w.mr[1].va, 1, w.mr[0].va + 200000, 5000, 0, NULL,
                                    3, w.now),
               RIFL_OK);
    REQUIRE(wire_wait(&w, 1, &wc, 1, 10000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK(memcmp(w.mem[0] + 200000, w.mem[1], 5000) == 0);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[1])->mailbox_messages, 1032 + 16);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->failed_transfers, 0);
    wire_free(&w);
}

/* Node 1 restarts while node 2 writes 200 KB to it and serves its read
 * of 200 KB.  Forgetting node 1 ends both at node 2: the write completes
 * with E_PEER_RESTARTED, the serve fails, the packets staged for node 1
 * are dropped, and nothing of either reaches the new engine's memory (the
 * link's joint reset dropped what was on its way), where before their
 * blocks went on, into the new engine's memory, and the write completed
 * OK with half its bytes in the old engine's.  A new write then goes as
 * usual. */
static void t_restart_fails_transfers(void)
{
    struct wire w;
    wire_init(&w, NULL, 25);
    fill_random(w.mem[1], 400000, 43);
    rifl_rdma_wc wc;
    REQUIRE(rifl_rdma_post_write(w.e[1], PD, w.mr[1].va, 1, w.mr[0].va + 100000, 200000, 0,
                                 NULL, 5, w.now) == RIFL_OK);
    REQUIRE(rifl_rdma_post_read(w.e[0], PD, w.mr[0].va + 500000, 2, w.mr[1].va + 200000, 200000,
                                0, 6, w.now) == RIFL_OK);
    const rifl_rdma_stats *st = rifl_rdma_get_stats(w.e[1]);
    for (unsigned i = 0; i < 60; i++)
        wire_step(&w);
    REQUIRE(rifl_rdma_poll_cq(w.e[1], &wc, 1) == 0);
    REQUIRE(st->acks_rx > 0 && st->read_requests_served == 0);
    wire_restart(&w, 0, NULL);
    memset(w.mem[0], 0, MEM);
    w.qn = 0; /* (the link's joint reset) */
    unsigned staged = rifl_rdma_staged(w.e[1]);
    uint64_t failed = st->failed_transfers;
    CHECK_EQ_I(rifl_rdma_forget_node(w.e[1], 1, 0, w.now), RIFL_OK);
    CHECK_EQ_U(rifl_rdma_staged(w.e[1]), 0);
    CHECK_EQ_U(st->restart_dropped, staged);
    CHECK_EQ_U(st->restart_failed, 2);
    CHECK_EQ_U(st->failed_transfers, failed + 2);
    REQUIRE(rifl_rdma_poll_cq(w.e[1], &wc, 1) == 1);
    CHECK_EQ_U(wc.wr_id, 5);
    CHECK_EQ_I(wc.status, RIFL_ERR_PEER_RESTARTED);
    CHECK(strcmp(rifl_rdma_strerror(wc.status), "E_PEER_RESTARTED") == 0);
    for (unsigned i = 0; i < 100000; i++) /* 10 ms: past the blocks' timeouts */
        wire_step(&w);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->rx_packets, 0);
    size_t nz = 0;
    for (size_t i = 0; i < MEM; i++)
        nz += w.mem[0][i] != 0;
    CHECK_MSG(nz == 0, "%zu bytes of the old transfers reached the new engine's memory", nz);
    CHECK_EQ_U(rifl_rdma_poll_cq(w.e[1], &wc, 1), 0);
    /* a new write */
    CHECK_EQ_I(rifl_rdma_post_write(w.e[1], PD, w.mr[1].va, 1, w.mr[0].va + 100000, 50000, 0,
                                    NULL, 7, w.now),
               RIFL_OK);
    REQUIRE(wire_wait(&w, 1, &wc, 1, 10000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK(memcmp(w.mem[0] + 100000, w.mem[1], 50000) == 0);
    wire_free(&w);
}

/* Takes node 1's next bundle to node 2 off the wire, into `in_lane`. */
static bool hold_next;
static struct pkt_msg in_lane;
static bool hold_one(struct wire *w, struct pkt_msg *m)
{
    (void)w;
    if (!hold_next || m->from.node != 1 || m->to != 1)
        return true;
    in_lane = *m;
    hold_next = false;
    return false;
}

/* Node 1 restarts with a send of its old engine still on its way to node
 * 2, on a TID and generation its new engine uses too.  Node 2 forgets
 * node 1 with a quiet time of 1 ms: the old packet, arriving after the
 * restart, is dropped and counted, not delivered (nor taken for the new
 * engine's block, which would then be ACKed and never delivered); the new
 * engine's sends, their first attempts dropped in the quiet time too,
 * arrive once each after their timeouts. */
static void t_restart_old_packet_in_lane(void)
{
    struct wire w;
    wire_init(&w, NULL, 23);
    w.tamper = hold_one;
    hold_next = false;
    REQUIRE(rifl_rdma_create_mailbox(w.e[1], PD, 2, 1024) == RIFL_OK);
    const rifl_rdma_stats *st = rifl_rdma_get_stats(w.e[1]);
    CHECK_EQ_U(sends_to_node2(&w, 0, 3), 3); /* TIDs 0-2 */
    for (unsigned i = 0; i < 100; i++)
        wire_step(&w);
    REQUIRE(w.qn == 0);
    hold_next = true;
    uint8_t m[3] = { 9, 9, 9 };
    REQUIRE(rifl_rdma_post_send(w.e[0], PD, 2, 2, m, sizeof m, 99, w.now) == RIFL_OK); /* TID 3 */
    for (unsigned i = 0; i < 100 && hold_next; i++)
        wire_step(&w);
    REQUIRE(!hold_next);
    wire_restart(&w, 0, NULL);
    CHECK_EQ_I(rifl_rdma_forget_node(w.e[1], 1, 1000000, w.now), RIFL_OK);
    w.now += 500;
    CHECK_EQ_I(rifl_rdma_input(w.e[1], w.now, in_lane.b, in_lane.len, in_lane.from), RIFL_OK);
    unsigned n[RIFL_RDMA_STATUS_COUNT];
    count_nacks(&w, n);
    CHECK_EQ_U(n[RIFL_RDMA_ACK], 0);
    CHECK_MSG(drain_mailbox2(&w, NULL) == 0, "the old engine's send was delivered after the "
                                             "restart");
    CHECK_EQ_U(st->quiet_dropped, 1);
    unsigned once = sends_to_node2(&w, 1, 5); /* TIDs 0-4 */
    CHECK_MSG(once == 5, "after the restart %u of 5 sends arrived once", once);
    CHECK(st->quiet_dropped > 1);
    CHECK_EQ_U(st->mailbox_messages, 3 + 5);
    wire_free(&w);
}

/* Node 1 restarts and is not forgotten, but node 2 hears nothing from it
 * for longer than block_memory_ns: the memory of the old engine's blocks
 * has lapsed, and the new engine's sends arrive once each. */
static void t_restart_after_pause(void)
{
    struct wire w;
    wire_init(&w, NULL, 24);
    REQUIRE(rifl_rdma_create_mailbox(w.e[1], PD, 2, 1024) == RIFL_OK);
    CHECK_EQ_U(sends_to_node2(&w, 0, 1024), 1024);
    CHECK_EQ_U(sends_to_node2(&w, 1, 8), 8);
    for (unsigned i = 0; i < 100; i++)
        wire_step(&w);
    REQUIRE(w.qn == 0);
    wire_restart(&w, 0, NULL);
    w.now += 512000001; /* (twice 16 x 16 ms, the default) */
    unsigned once = sends_to_node2(&w, 2, 16);
    CHECK_MSG(once == 16, "after the restart %u of 16 sends arrived once", once);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[1])->memory_expired, 16);
    wire_free(&w);
}

/* Header and footer check codes: dropped without a word, counted. */
static bool flip_header(struct wire *w, struct pkt_msg *m)
{
    if (w->tampered < 2 && m->from.node == 1) {
        m->b[4 + (w->tampered ? 16 + 256 + 3 : 5)] ^= 0x10;
        w->tampered++;
    }
    return true;
}

static void t_check_codes(void)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    c.block_timeout_ns = 20000;
    struct wire w;
    wire_init(&w, &c, 6);
    w.tamper = flip_header;
    fill_random(w.mem[0], 4096, 4);
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va, 4096, 0, NULL, 1, w.now),
               RIFL_OK);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK(memcmp(w.mem[1], w.mem[0], 4096) == 0);
    const rifl_rdma_stats *t = rifl_rdma_get_stats(w.e[1]);
    CHECK_EQ_U(t->hdr_edc_errors, 1);
    CHECK_EQ_U(t->ftr_crc_errors, 1);
    CHECK(rifl_rdma_get_stats(w.e[0])->timeouts >= 1);
    uint64_t nacks = 0;
    for (unsigned i = 1; i < RIFL_RDMA_STATUS_COUNT; i++)
        nacks += t->nacks_tx[i];
    CHECK_EQ_U(nacks, 0);
    wire_free(&w);
}

/* Destination pages not resident: NACKed, raised, served, sent again. */
static void t_page_faults(void)
{
    struct wire w;
    wire_init(&w, NULL, 7);
    w.serve_faults = true;
    fill_random(w.mem[0], 65536, 8);
    CHECK_EQ_I(rifl_rdma_set_resident(w.e[1], w.mr[1].va + 8192, 3 * 4096, false), RIFL_OK);
    CHECK_EQ_I(rifl_rdma_set_resident(w.e[0], w.mr[0].va + 40000, 1, false), RIFL_OK);
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va, 65536, 0, NULL, 1,
                                    w.now),
               RIFL_OK);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 5000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK(memcmp(w.mem[1], w.mem[0], 65536) == 0);
    CHECK(rifl_rdma_get_stats(w.e[1])->nacks_tx[RIFL_RDMA_NACK_PAGE_FAULT] >= 1);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->src_page_faults, 1);
    CHECK(rifl_rdma_get_stats(w.e[0])->retransmitted_blocks >= 2);
    wire_free(&w);
}

/* Two nodes that each post all the reads they can from the other: some
 * transfer slots stay for serving, so every read completes. */
static void t_reads_both_ways(void)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    c.max_transfers = 32;
    struct wire w;
    wire_init(&w, &c, 23);
    fill_random(w.mem[0], 65536, 24);
    fill_random(w.mem[1] + 65536, 65536, 25);
    unsigned posted[2] = { 0, 0 };
    for (unsigned a = 0; a < 2; a++) {
        unsigned b = 1 - a;
        for (unsigned i = 0; i < 64; i++) {
            /* node a reads 2 KB piece i of node b's half into its other half */
            uint64_t from = w.mr[b].va + (a ? 0 : 65536) + 2048u * (i % 32);
            uint64_t into = w.mr[a].va + (a ? 0 : 65536) + 2048u * (i % 32);
            int rc = rifl_rdma_post_read(w.e[a], PD, into, b + 1, from, 2048, 0, i, w.now);
            if (rc == RIFL_ERR_AGAIN)
                break;
            CHECK_EQ_I(rc, RIFL_OK);
            posted[a]++;
        }
    }
    /* all but the slots kept for serving */
    CHECK_EQ_U(posted[0], 30);
    CHECK_EQ_U(posted[1], 30);
    rifl_rdma_wc wc[64];
    for (unsigned a = 0; a < 2; a++) {
        unsigned got = wire_wait(&w, a, wc, posted[a], 50000000);
        CHECK_EQ_U(got, posted[a]);
        for (unsigned i = 0; i < got; i++)
            CHECK_EQ_I(wc[i].status, RIFL_OK);
    }
    CHECK(memcmp(w.mem[1], w.mem[0], 2048u * posted[1]) == 0);
    CHECK(memcmp(w.mem[0] + 65536, w.mem[1] + 65536, 2048u * posted[0]) == 0);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->timeouts + rifl_rdma_get_stats(w.e[1])->timeouts, 0);
    wire_free(&w);
}

/* A domain at its limit of reads served does not hold back another
 * domain's request queued behind it. */
static void t_serve_per_domain(void)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    c.transfers_per_pd = 1;
    struct wire w;
    wire_init(&w, &c, 27);
    enum { PD2 = 8 };
    static uint8_t server8[8192], reader8[8192];
    rifl_rdma_mr s8, r8;
    REQUIRE(rifl_rdma_alloc_pd(w.e[0], PD2) == RIFL_OK && rifl_rdma_alloc_pd(w.e[2], PD2) == RIFL_OK);
    REQUIRE(rifl_rdma_reg_mr(w.e[0], PD2, server8, sizeof server8, RIFL_RDMA_REMOTE_READ, &s8) ==
            RIFL_OK);
    REQUIRE(rifl_rdma_reg_mr(w.e[2], PD2, reader8, sizeof reader8,
                             RIFL_RDMA_LOCAL_WRITE | RIFL_RDMA_REMOTE_WRITE, &r8) == RIFL_OK);
    fill_random(server8, sizeof server8, 28);
    /* node 2 reads 512 KB of node 1 in domain 7; then node 3 reads 4 KB in
     * domain 7 (it waits: one serve per domain) and 4 KB in domain 8 */
    CHECK_EQ_I(rifl_rdma_post_read(w.e[1], PD, w.mr[1].va, 1, w.mr[0].va, 524288, 0, 1, w.now),
               RIFL_OK);
    for (int i = 0; i < 20; i++)
        wire_step(&w);
    CHECK_EQ_I(rifl_rdma_post_read(w.e[2], PD, w.mr[2].va, 1, w.mr[0].va, 4096, 0, 2, w.now),
               RIFL_OK);
    CHECK_EQ_I(rifl_rdma_post_read(w.e[2], PD2, r8.va, 1, s8.va, 4096, 0, 3, w.now), RIFL_OK);
    uint64_t done[4] = { 0, 0, 0, 0 };
    for (int i = 0; i < 200000 && !(done[1] && done[2] && done[3]); i++) {
        wire_step(&w);
        rifl_rdma_wc wc;
        for (unsigned n = 1; n < 3; n++)
            while (rifl_rdma_poll_cq(w.e[n], &wc, 1) == 1) {
                CHECK_EQ_I(wc.status, RIFL_OK);
                if (wc.wr_id < 4)
                    done[wc.wr_id] = w.now;
            }
    }
    REQUIRE(done[1] && done[2] && done[3]);
    /* domain 8's read is served at once, domain 7's second after the first */
    CHECK(done[3] < done[1]);
    CHECK(done[2] > done[1]);
    CHECK(memcmp(reader8, server8, 4096) == 0);
    wire_free(&w);
}

/* Data staged on many routes leaves room in the packet pool for the
 * responses: an ACK goes out, none is dropped. */
static void t_pool_keeps_responses(void)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    c.node = 1;
    rifl_rdma *e = NULL;
    char msg[200];
    REQUIRE(rifl_rdma_open(&c, &e, msg, sizeof msg) == RIFL_OK);
    enum { PEERS = 24, ROUTES = 32, BLOCKS = 32 };
    size_t mem_len = (size_t)BLOCKS * 16384 + 16384;
    uint8_t *mem = calloc(mem_len, 1);
    REQUIRE(mem);
    rifl_rdma_mr mr;
    REQUIRE(rifl_rdma_alloc_pd(e, PD) == RIFL_OK);
    REQUIRE(rifl_rdma_reg_mr(e, PD, mem, mem_len, RIFL_RDMA_LOCAL_WRITE | RIFL_RDMA_REMOTE_WRITE,
                             &mr) == RIFL_OK);
    for (unsigned n = 2; n < 2 + PEERS; n++) {
        REQUIRE(rifl_rdma_add_node(e, n, ROUTES) == RIFL_OK);
        /* a block on each of the node's routes */
        CHECK_EQ_I(rifl_rdma_post_write(e, PD, mr.va, n, 0x100000, BLOCKS * 16384, 0, NULL, n, 0),
                   RIFL_OK);
    }
    /* one output call stages data on every route */
    static uint8_t out[RIFL_RDMA_BUNDLE_CAP];
    rifl_rdma_route to;
    REQUIRE(rifl_rdma_output(e, 1, true, out, sizeof out, &to) > 0);
    /* 16 one-packet blocks from node 2: their ACKs must all be staged */
    enum { ACKS = 16 };
    for (unsigned k = 0; k < ACKS; k++) {
        uint8_t payload[256] = { 0 }, in[RIFL_RDMA_BUNDLE_CAP];
        uint64_t dst = ((mr.va + 16383) & ~(uint64_t)16383) + 256u * k;
        rifl_rdma_hdr h = { .type = RIFL_RDMA_WRITE, .pdid = PD, .dst_node = 1, .dst_va = dst,
                            .length = 256, .path = 3 };
        rifl_rdma_ftr f = { .src_node = 2, .tid = 9 + k, .gen = 1, .first = true, .last = true,
                            .pkt_index = (unsigned)(dst >> 8) & 63u };
        size_t mlen = one_packet_bundle(&h, &f, payload, in);
        CHECK_EQ_I(rifl_rdma_input(e, 2, in, mlen, (rifl_rdma_route){ 2, 3 }), RIFL_OK);
    }
    const rifl_rdma_stats *st = rifl_rdma_get_stats(e);
    CHECK_EQ_U(st->acks_tx, ACKS);
    CHECK_EQ_U(st->responses_dropped, 0);
    free(mem);
    rifl_rdma_close(e);
}

/* Writes go to memory: a destination in the peripherals' window, or a
 * notification to the engine's own mailboxes, is refused before anything
 * is sent. */
static void t_write_refused(void)
{
    struct wire w;
    wire_init(&w, NULL, 19);
    rifl_rdma *e = w.e[0];
    uint64_t src = w.mr[0].va;
    CHECK_EQ_I(rifl_rdma_post_write(e, PD, src, 2, RIFL_RDMA_PERIPHERAL(2), 300, 0, NULL, 1, 0),
               RIFL_ERR_INVALID_ARG);
    CHECK_EQ_I(rifl_rdma_post_write(e, PD, src, 2, RIFL_RDMA_PERIPHERAL_BASE - 100, 200, 0, NULL,
                                    1, 0),
               RIFL_ERR_INVALID_ARG);
    for (unsigned p = 0; p < 2; p++) {
        rifl_rdma_notification n = { rifl_rdma_gva_word(2, RIFL_RDMA_PERIPHERAL(p)), 5, 0 };
        CHECK_EQ_I(rifl_rdma_post_write(e, PD, src, 2, w.mr[1].va, 100, 0, &n, 1, 0),
                   RIFL_ERR_INVALID_ARG);
    }
    /* a notification to a user mailbox is fine */
    rifl_rdma_notification n = { rifl_rdma_gva_word(2, RIFL_RDMA_PERIPHERAL(2)), 5, 0 };
    CHECK_EQ_I(rifl_rdma_post_write(e, PD, src, 2, w.mr[1].va, 100, 0, &n, 1, 0), RIFL_OK);
    CHECK_EQ_U(rifl_rdma_get_stats(e)->tx_packets, 0);
    wire_free(&w);
}

/* A source page made resident by rifl_rdma_set_resident, not page_in: the
 * block that stopped at it goes again. */
static void t_set_resident_wakes(void)
{
    struct wire w;
    wire_init(&w, NULL, 17);
    fill_random(w.mem[0], 16384, 18);
    CHECK_EQ_I(rifl_rdma_set_resident(w.e[0], w.mr[0].va + 8192, 1, false), RIFL_OK);
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va, 16384, 0, NULL, 1,
                                    w.now),
               RIFL_OK);
    uint64_t page = 0;
    bool raised = false;
    for (int i = 0; i < 2000 && !raised; i++) {
        wire_step(&w);
        raised = rifl_rdma_poll_fault(w.e[0], &page);
    }
    REQUIRE(raised);
    CHECK_EQ_U(page, w.mr[0].va + 8192);
    CHECK_EQ_I(rifl_rdma_set_resident(w.e[0], page, RIFL_RDMA_PAGE, true), RIFL_OK);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 5000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK(memcmp(w.mem[1], w.mem[0], 16384) == 0);
    wire_free(&w);
}

/* A link that swallows everything: 16 retries, then RETRY_EXCEEDED; a read
 * that never gets its data times out. */
static bool drop_all(struct wire *w, struct pkt_msg *m)
{
    (void)w;
    (void)m;
    return false;
}

static void t_give_up(void)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    c.block_timeout_ns = 10000;
    c.block_timeout_max_ns = 20000;
    c.read_timeout_ns = 100000;
    struct wire w;
    wire_init(&w, &c, 8);
    w.tamper = drop_all;
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va, 100, 0, NULL, 1, w.now),
               RIFL_OK);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 10000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_ERR_RETRY_EXCEEDED);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->timeouts, 16);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->retransmitted_blocks, 15);
    CHECK_EQ_I(rifl_rdma_post_read(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va, 100, 0, 2, w.now),
               RIFL_OK);
    REQUIRE(wire_wait(&w, 0, &wc, 1, 10000000) == 1);
    CHECK(wc.status == RIFL_ERR_TIMEOUT || wc.status == RIFL_ERR_RETRY_EXCEEDED);
    CHECK_EQ_U(rifl_rdma_pending(w.e[0]), 0);
    wire_free(&w);
}

/* Holds node 1's first bundle (a read's request) 150 us and its second 60
 * us on the way. */
static bool hold_requests(struct wire *w, struct pkt_msg *m)
{
    if (m->from.node == 1 && w->tampered < 2)
        m->at += w->tampered++ ? 60000 : 150000;
    return true;
}

/* A read that timed out may still be served: its late record must not
 * complete a newer read posted with the same wr_id (each READ_REQ carries
 * its own immediate, which the record echoes). */
static void t_read_late_record(void)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    c.read_timeout_ns = 100000;
    struct wire w;
    wire_init(&w, &c, 9);
    w.tamper = hold_requests;
    fill_random(w.mem[1] + 200000, 3000, 31);
    fill_random(w.mem[1] + 300000, 3000, 32);
    CHECK_EQ_I(rifl_rdma_post_read(w.e[0], PD, w.mr[0].va + 200000, 2, w.mr[1].va + 200000, 3000,
                                   0, 7, w.now),
               RIFL_OK);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_ERR_TIMEOUT);
    /* the same wr_id again; the first read's record comes (at about 152 us)
     * before this one's data (about 162 us) */
    CHECK_EQ_I(rifl_rdma_post_read(w.e[0], PD, w.mr[0].va + 300000, 2, w.mr[1].va + 300000, 3000,
                                   0, 7, w.now),
               RIFL_OK);
    REQUIRE(wire_wait(&w, 0, &wc, 1, 1000000) == 1);
    CHECK_EQ_U(wc.wr_id, 7);
    CHECK_EQ_I(wc.status, RIFL_OK);
    CHECK(memcmp(w.mem[0] + 300000, w.mem[1] + 300000, 3000) == 0);
    CHECK(w.now > 160000);
    /* the first read's data landed too, late; the ACK of its request and
     * its record were stale */
    CHECK(memcmp(w.mem[0] + 200000, w.mem[1] + 200000, 3000) == 0);
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->stale_responses, 2);
    CHECK_EQ_U(rifl_rdma_pending(w.e[0]), 0);
    wire_free(&w);
}

/* Seeded random transfers both ways through loss, duplication and
 * reordering: every one completes, every byte arrives. */
static void random_run(uint64_t seed, double loss, double dup, double reorder, bool gbn,
                       unsigned transfers, rifl_rdma_mapping mapping)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    c.mapping = mapping;
    c.block_timeout_ns = 50000;
    c.block_timeout_max_ns = 400000;
    c.go_back_n = gbn;
    struct wire w;
    wire_init(&w, &c, seed);
    w.loss = loss;
    w.dup = dup;
    w.reorder = reorder;
    rifl_rng r;
    rifl_rng_seed(&r, seed * 31 + 7);
    for (unsigned n = 0; n < NODES; n++)
        fill_random(w.mem[n], MEM / 2, seed + n);
    /* each transfer: node a writes [src, src+len) of its lower half to a
     * slice of node b's upper half no other transfer touches */
    unsigned done = 0, posted = 0;
    uint64_t slot = (MEM / 2) / 16;
    struct {
        unsigned a, b;
        uint64_t src, dst, len;
        bool read;
    } t[16];
    unsigned active = 0;
    bool busy[16] = { false };
    while (done < transfers && w.now < 2000000000ull) {
        while (posted < transfers && active < 8) {
            unsigned k = 0;
            while (busy[k])
                k++;
            unsigned a = (unsigned)rifl_rng_below(&r, NODES), b = (a + 1 + (unsigned)rifl_rng_below(&r, NODES - 1)) % NODES;
            uint64_t len = 1 + rifl_rng_below(&r, rifl_rng_below(&r, 2) ? 300 : slot - 300);
            uint64_t src = rifl_rng_below(&r, MEM / 2 - len);
            uint64_t dst = MEM / 2 + k * slot + rifl_rng_below(&r, slot - len);
            bool read = rifl_rng_below(&r, 3) == 0;
            t[k].a = a, t[k].b = b, t[k].src = src, t[k].dst = dst, t[k].len = len, t[k].read = read;
            int rc = read ? rifl_rdma_post_read(w.e[b], PD, w.mr[b].va + dst, a + 1,
                                                w.mr[a].va + src, len,
                                                (unsigned)rifl_rng_below(&r, 32), k, w.now)
                          : rifl_rdma_post_write(w.e[a], PD, w.mr[a].va + src, b + 1,
                                                 w.mr[b].va + dst, len,
                                                 (unsigned)rifl_rng_below(&r, 32), NULL, k, w.now);
            CHECK_EQ_I(rc, RIFL_OK);
            busy[k] = true;
            active++;
            posted++;
        }
        wire_step(&w);
        for (unsigned n = 0; n < NODES; n++) {
            rifl_rdma_wc wc;
            while (rifl_rdma_poll_cq(w.e[n], &wc, 1)) {
                unsigned k = (unsigned)wc.wr_id;
                CHECK_EQ_I(wc.status, RIFL_OK);
                CHECK(k < 16 && busy[k]);
                if (k >= 16 || !busy[k])
                    continue;
                CHECK_MSG(memcmp(w.mem[t[k].b] + t[k].dst, w.mem[t[k].a] + t[k].src, t[k].len) == 0,
                          "transfer %u (%s of %llu bytes) arrived damaged", done,
                          t[k].read ? "read" : "write", (unsigned long long)t[k].len);
                busy[k] = false;
                active--;
                done++;
            }
        }
    }
    CHECK_EQ_U(done, transfers);
    uint64_t retx = 0;
    for (unsigned n = 0; n < NODES; n++)
        retx += rifl_rdma_get_stats(w.e[n])->retransmitted_blocks;
    if (loss > 0)
        CHECK(retx > 0);
    else
        CHECK_EQ_U(retx, 0);
    wire_free(&w);
}

static void t_random_clean(void)
{
    random_run(test_seed + 100, 0, 0, 0, false, 60, RIFL_RDMA_MAP_BUNDLE);
}
static void t_random_lossy(void)
{
    unsigned n = test_long_run ? 2000 : 60;
    random_run(test_seed + 200, 0.02, 0.02, 0.1, false, n, RIFL_RDMA_MAP_BUNDLE);
}
static void t_random_go_back_n(void)
{
    random_run(test_seed + 300, 0.02, 0.01, 0.05, true, 40, RIFL_RDMA_MAP_BUNDLE);
}
static void t_random_cell(void)
{
    random_run(test_seed + 400, 0, 0, 0, false, 40, RIFL_RDMA_MAP_CELL);
    /* a packet per message: a 12 KB block is 55 messages, so 2% loss would
     * fail two attempts in three and now and then all 16; 0.5% fails one in four */
    random_run(test_seed + 500, 0.005, 0.02, 0.1, false, test_long_run ? 1000 : 40,
               RIFL_RDMA_MAP_CELL);
}
static void t_random_compact(void)
{
    random_run(test_seed + 600, 0, 0, 0, false, 40, RIFL_RDMA_MAP_COMPACT);
    random_run(test_seed + 700, 0.02, 0.02, 0.1, false, test_long_run ? 1000 : 40,
               RIFL_RDMA_MAP_COMPACT);
}

/* The cell mapping: one packet per message, no prefix, at most one cell,
 * packets cut at 224 bytes and 4 KB pages with indexes from 0, blocks of
 * at most 12 KB.  The compact mapping: packets of 22 + length bytes in
 * bundles of 11. */
static rifl_rdma_mapping seen_mapping;
static unsigned seen_msgs, seen_bad;
static uint64_t cut_lo;
static bool check_mapping(struct wire *w, struct pkt_msg *m)
{
    (void)w;
    seen_msgs++;
    rifl_rdma_packet p;
    if (seen_mapping == RIFL_RDMA_MAP_CELL) {
        if (m->len > 256 || rifl_rdma_packet_parse(m->b, m->len, &p) != RIFL_RDMA_PKT_OK ||
            p.bytes != m->len || (p.hdr.type == RIFL_RDMA_WRITE && p.hdr.length > 224))
            seen_bad++;
        /* the first block's packets (the round robin interleaves blocks) */
        if (m->from.node == 1 && cut_n < 256 && p.hdr.type == RIFL_RDMA_WRITE &&
            p.hdr.dst_va >= cut_lo && p.hdr.dst_va < cut_lo + 12288)
            cut_list[cut_n++] = (rifl_rdma_seg){ p.hdr.dst_va, p.hdr.length, p.ftr.pkt_index,
                                                 p.ftr.first, p.ftr.last };
        return true;
    }
    rifl_rdma_bundle_reader rd;
    rifl_rdma_bundle_reader_init(&rd, m->b + 4, m->len - 4, m->b[1]);
    rd.compact = true;
    rifl_rdma_check ck;
    unsigned n = 0;
    rifl_rdma_walk wk;
    while ((wk = rifl_rdma_bundle_next(&rd, &p, &ck)) == RIFL_RDMA_WALK_PACKET) {
        n++;
        if (ck != RIFL_RDMA_PKT_OK || p.bytes != rifl_rdma_compact_bytes(p.hdr.type, p.hdr.length))
            seen_bad++;
    }
    if (wk != RIFL_RDMA_WALK_END || n > 11)
        seen_bad++;
    return true;
}

static void t_mappings(void)
{
    for (int k = 0; k < 2; k++) {
        rifl_rdma_config c = rifl_rdma_default_config;
        c.mapping = seen_mapping = k ? RIFL_RDMA_MAP_COMPACT : RIFL_RDMA_MAP_CELL;
        struct wire w;
        wire_init(&w, &c, 9 + k);
        w.tamper = check_mapping;
        seen_msgs = seen_bad = cut_n = 0;
        fill_random(w.mem[0], 40000, 21);
        uint64_t dst = cut_lo = w.mr[1].va + 16384 + 100;
        CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, dst, 40000, 0, NULL, 1, w.now),
                   RIFL_OK);
        rifl_rdma_wc wc;
        REQUIRE(wire_wait(&w, 0, &wc, 1, 2000000) == 1);
        CHECK_EQ_I(wc.status, RIFL_OK);
        CHECK(memcmp(w.mem[1] + 16384 + 100, w.mem[0], 40000) == 0);
        CHECK(seen_msgs > 0);
        CHECK_EQ_U(seen_bad, 0);
        const rifl_rdma_stats *s = rifl_rdma_get_stats(w.e[0]);
        if (k == 0) {
            /* 16284 bytes in the first window: 12288 + 3996; then 16384: 12288 +
             * 4096; then 7332 */
            CHECK_EQ_U(s->blocks_acked, 5);
            CHECK_EQ_U(s->bundles_tx, s->cells_tx);
            /* the first block's packets, against the layout's */
            rifl_rdma_seg want[64];
            unsigned n = rifl_rdma_block_packets(dst, 12288, true, want);
            CHECK(n > 0 && cut_n == n);
            for (unsigned i = 0; i < n && i < cut_n; i++) {
                CHECK_EQ_U(cut_list[i].dst_va, want[i].dst_va);
                CHECK_EQ_U(cut_list[i].len, want[i].len);
                CHECK_EQ_U(cut_list[i].pkt_index, want[i].pkt_index);
            }
        } else {
            CHECK_EQ_U(s->blocks_acked, 3);
            CHECK(s->cells_tx < s->tx_bytes / 256 + s->bundles_tx + 1);
        }
        wire_free(&w);
    }
    /* the compact format against the spec's: the same fields, fewer bytes */
    rifl_rdma_hdr h = { RIFL_RDMA_WRITE, 7, 2, 0x10004100, 16, 1 };
    rifl_rdma_ftr f = { .src_node = 1, .tid = 5, .gen = 3, .first = true, .last = true,
                        .pkt_index = 1 };
    uint8_t pl[16], a[64], b[64];
    for (int i = 0; i < 16; i++)
        pl[i] = (uint8_t)i;
    size_t la, lb;
    REQUIRE(rifl_rdma_packet_build(&h, &f, pl, a, sizeof a, &la) == RIFL_OK);
    REQUIRE(rifl_rdma_compact_build(&h, &f, pl, b, sizeof b, &lb) == RIFL_OK);
    CHECK_EQ_U(la, 48);
    CHECK_EQ_U(lb, 38);
    CHECK(memcmp(a, b, 14) == 0 && memcmp(a + 16, b + 14, 16) == 0 && memcmp(a + 32, b + 30, 8) == 0);
    rifl_rdma_packet p;
    CHECK_EQ_I(rifl_rdma_compact_parse(b, lb, &p), RIFL_RDMA_PKT_OK);
    CHECK_EQ_U(p.hdr.dst_va, 0x10004100);
    CHECK_EQ_U(p.ftr.tid, 5);
    CHECK(p.payload == b + 14);
    CHECK_EQ_I(rifl_rdma_compact_parse(b, lb - 1, &p), RIFL_RDMA_PKT_SHORT);
    CHECK_EQ_U(rifl_rdma_compact_bytes(RIFL_RDMA_RESP, 0), 22);
    /* capacity: compact bundles of 11 in 12 cells, 91.7% of the cells' bytes */
    CHECK(fabs(rifl_rdma_capacity_map_gbps(100, 256, 11, RIFL_RDMA_MAP_COMPACT) -
               100.0 * 2816 / (12 * 9 * 32)) < 1e-9);
    CHECK(fabs(rifl_rdma_capacity_map_gbps(100, 256, 1, RIFL_RDMA_MAP_CELL) -
               rifl_rdma_capacity_gbps(100, 256, 7, true)) < 1e-9);
}

/* ---- chains (rifl_rdma_post_chain) ---------------------------------------------------------- */

/* Every WRITE and READ_REQ node 1 sends, in the order its bundles leave;
 * optionally the chain's first block has its last packet of attempt 0
 * damaged (NACK CRC) or taken out of its bundle (a timeout). */
struct sent_pkt {
    unsigned type, tid, gen, attempt, len;
    uint64_t dst;
    bool first, last;
    unsigned path, route; /* the header's path, the route its bundle took */
};
static struct sent_pkt sent[8192];
static unsigned sent_n;
static enum { HIT_NONE, HIT_DAMAGE, HIT_CUT } hit_mode;
static unsigned hit_tid;
static bool hit_seen, hit_done;

static bool record_sent(struct wire *w, struct pkt_msg *m)
{
    (void)w;
    if (m->from.node != 1)
        return true;
    rifl_rdma_bundle_reader rd;
    rifl_rdma_bundle_reader_init(&rd, m->b + 4, m->len - 4, m->b[1]);
    rifl_rdma_packet p;
    rifl_rdma_check ck;
    size_t at = 0, bytes = 0;
    while (rifl_rdma_bundle_next(&rd, &p, &ck) == RIFL_RDMA_WALK_PACKET) {
        if (p.hdr.type != RIFL_RDMA_WRITE && p.hdr.type != RIFL_RDMA_READ_REQ)
            continue;
        CHECK(sent_n < sizeof sent / sizeof sent[0]);
        if (sent_n < sizeof sent / sizeof sent[0])
            sent[sent_n++] = (struct sent_pkt){ p.hdr.type, p.ftr.tid, p.ftr.gen, p.ftr.attempt,
                                                p.hdr.length, p.hdr.dst_va, p.ftr.first,
                                                p.ftr.last, p.hdr.path, m->from.route };
        if (hit_mode == HIT_NONE || hit_done || p.hdr.type != RIFL_RDMA_WRITE)
            continue;
        if (!hit_seen && p.ftr.first) { /* the chain's first block */
            hit_seen = true;
            hit_tid = p.ftr.tid;
        }
        if (hit_seen && p.ftr.tid == hit_tid && p.ftr.last && p.ftr.attempt == 0) {
            hit_done = true;
            at = (size_t)(p.payload - m->b) - RIFL_RDMA_HDR_BYTES;
            bytes = p.bytes;
        }
    }
    if (!bytes)
        return true;
    if (hit_mode == HIT_DAMAGE) {
        m->b[at + RIFL_RDMA_HDR_BYTES] ^= 0xFF;
        return true;
    }
    if (m->b[1] == 1)
        return false; /* the packet was the bundle */
    memmove(m->b + at, m->b + at + bytes, m->len - at - bytes);
    m->len -= bytes;
    m->b[1]--;
    m->b[2] = (uint8_t)((m->len - 4) >> 8);
    m->b[3] = (uint8_t)(m->len - 4);
    return true;
}

static void record_start(struct wire *w)
{
    w->tamper = record_sent;
    sent_n = 0;
    hit_mode = HIT_NONE;
    hit_seen = hit_done = false;
}

/* Block k of a transfer goes on path (p0 + k) mod n, n the node's routes,
 * and on that route. */
static void t_paths_mod_routes(void)
{
    struct wire w;
    wire_init(&w, NULL, 21);
    REQUIRE(rifl_rdma_add_node(w.e[0], 2, 3) == RIFL_OK);
    record_start(&w);
    uint64_t base = (w.mr[1].va + 16383) & ~(uint64_t)16383;
    enum { BLOCKS = 40 };
    CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, base, BLOCKS * 16384, 2, NULL, 1,
                                    w.now),
               RIFL_OK);
    rifl_rdma_wc wc;
    REQUIRE(wire_wait(&w, 0, &wc, 1, 5000000) == 1);
    CHECK_EQ_I(wc.status, RIFL_OK);
    unsigned firsts = 0, wrong = 0;
    for (unsigned i = 0; i < sent_n; i++) {
        const struct sent_pkt *q = &sent[i];
        if (!q->first || q->attempt)
            continue;
        uint64_t k = (q->dst - base) / 16384;
        firsts++;
        wrong += q->path != (2 + k) % 3 || q->route != q->path;
    }
    CHECK_EQ_U(firsts, BLOCKS);
    CHECK_EQ_U(wrong, 0);
    wire_free(&w);
}

/* Node 1 reaches the others over one route, so that its bundles leave in
 * the order their packets were cut. */
static void one_route(struct wire *w)
{
    for (unsigned m = 2; m <= NODES; m++)
        REQUIRE(rifl_rdma_add_node(w->e[0], m, 1) == RIFL_OK);
}

/* The packets sent to [dst, dst + len) with `attempt` (-1: any): how many,
 * and the places in `sent` of the first and the last. */
struct span {
    unsigned n, first, last;
};
static struct span span_of(unsigned type, uint64_t dst, uint64_t len, int attempt)
{
    struct span s = { 0, ~0u, 0 };
    for (unsigned i = 0; i < sent_n; i++)
        if (sent[i].type == type && sent[i].dst >= dst && sent[i].dst < dst + len &&
            (attempt < 0 || sent[i].attempt == (unsigned)attempt)) {
            if (!s.n)
                s.first = i;
            s.last = i;
            s.n++;
        }
    return s;
}

/* The blocks of writes of len[k] bytes to va + dst[k], in chain order. */
struct xblk {
    uint64_t dst;
    uint32_t len;
    unsigned pkts;
};
static unsigned chain_blocks(uint64_t va, const uint64_t *dst, const uint64_t *len, unsigned n,
                             struct xblk *out)
{
    unsigned nb = 0;
    for (unsigned k = 0; k < n; k++)
        for (uint64_t off = 0; off < len[k];) {
            uint32_t bl = rifl_rdma_block_len(va + dst[k] + off, len[k] - off, false);
            rifl_rdma_seg segs[RIFL_RDMA_BLOCK_PACKETS];
            out[nb] = (struct xblk){ va + dst[k] + off, bl,
                                     rifl_rdma_block_packets(va + dst[k] + off, bl, false, segs) };
            nb++;
            off += bl;
        }
    return nb;
}

static rifl_rdma_wr write_wr(const struct wire *w, unsigned to, uint64_t src, uint64_t dst,
                             uint64_t len, uint64_t wr_id)
{
    return (rifl_rdma_wr){ .op = RIFL_RDMA_OP_WRITE, .pdid = PD, .node = to + 1,
                           .local_va = w->mr[0].va + src, .remote_va = w->mr[to].va + dst,
                           .len = len, .path = 0, .wr_id = wr_id };
}

/* Three writes of several blocks each: chained, every block's packets
 * leave back to back and the blocks in chain order (although the chain
 * goes down and up the target's memory); posted one by one, the round
 * robin interleaves them. */
static void t_chain_order(void)
{
    static const uint64_t src[3] = { 0, 100000, 300000 }, dst[3] = { 600100, 200007, 400000 },
                          len[3] = { 40000, 30000, 20000 };
    for (int chained = 1; chained >= 0; chained--) {
        struct wire w;
        wire_init(&w, NULL, 31 + (uint64_t)chained);
        one_route(&w);
        record_start(&w);
        fill_random(w.mem[0], MEM / 2, 12);
        struct xblk b[32];
        unsigned nb = chain_blocks(w.mr[1].va, dst, len, 3, b);
        CHECK_EQ_U(nb, 9); /* 6108, 2 x 16384, 1124; 12985, 16384, 631; 9600, 10400 */
        rifl_rdma_wr wr[3];
        for (unsigned k = 0; k < 3; k++)
            wr[k] = write_wr(&w, 1, src[k], dst[k], len[k], 10 + k);
        if (chained) {
            unsigned posted = 99;
            CHECK_EQ_I(rifl_rdma_post_chain(w.e[0], wr, 3, &posted, w.now), RIFL_OK);
            CHECK_EQ_U(posted, 3);
        } else {
            for (unsigned k = 0; k < 3; k++)
                CHECK_EQ_I(rifl_rdma_post_write(w.e[0], PD, wr[k].local_va, 2, wr[k].remote_va,
                                                len[k], 0, NULL, wr[k].wr_id, w.now),
                           RIFL_OK);
        }
        rifl_rdma_wc wc[3];
        REQUIRE(wire_wait(&w, 0, wc, 3, 2000000) == 3);
        for (unsigned k = 0; k < 3; k++) {
            CHECK_EQ_I(wc[k].status, RIFL_OK);
            CHECK_MSG(memcmp(w.mem[1] + dst[k], w.mem[0] + src[k], len[k]) == 0,
                      "write %u arrived damaged", k);
        }
        const rifl_rdma_stats *s = rifl_rdma_get_stats(w.e[0]);
        CHECK_EQ_U(s->retransmitted_blocks, 0);
        unsigned apart = 0; /* blocks whose packets did not leave back to back */
        for (unsigned i = 0; i < nb; i++) {
            struct span sp = span_of(RIFL_RDMA_WRITE, b[i].dst, b[i].len, -1);
            CHECK_EQ_U(sp.n, b[i].pkts);
            if (sp.last - sp.first + 1 != sp.n)
                apart++;
            if (chained) {
                CHECK_MSG(sp.last - sp.first + 1 == sp.n, "block %u interleaved", i);
                /* the next block's first packet right after this one's last */
                CHECK_EQ_U(sp.first, i ? span_of(RIFL_RDMA_WRITE, b[i - 1].dst, b[i - 1].len, -1).last + 1
                                       : 0);
                CHECK(sent[sp.first].first && sent[sp.last].last);
            }
        }
        CHECK_EQ_U(sent_n, chained ? span_of(RIFL_RDMA_WRITE, b[nb - 1].dst, b[nb - 1].len, -1).last + 1
                                   : sent_n);
        if (chained) {
            CHECK_EQ_U(apart, 0);
            CHECK_EQ_U(s->chain_waits, nb - 1);
        } else {
            CHECK(apart >= nb - 1);
            CHECK_EQ_U(s->chain_waits, 0);
        }
        CHECK_EQ_U(rifl_rdma_pending(w.e[0]), 0);
        wire_free(&w);
    }
}

/* A chained block sent again (its last packet damaged: NACK CRC; or lost:
 * a timeout) after its successor was let go: the successor is not held or
 * restarted (every other block's packets leave once, attempt 0), and the
 * chain completes with every byte right. */
static void t_chain_retry(void)
{
    static const uint64_t src[3] = { 0, 65536, 131072 }, dst[3] = { 327680, 163840, 491520 },
                          len[3] = { 32768, 32768, 32768 };
    for (int mode = HIT_DAMAGE; mode <= HIT_CUT; mode++) {
        rifl_rdma_config c = rifl_rdma_default_config;
        c.block_timeout_ns = 50000;
        struct wire w;
        wire_init(&w, &c, 40 + (uint64_t)mode);
        one_route(&w);
        record_start(&w);
        hit_mode = mode;
        fill_random(w.mem[0], MEM / 2, 13);
        struct xblk b[8];
        unsigned nb = chain_blocks(w.mr[1].va, dst, len, 3, b);
        REQUIRE(nb == 6);
        rifl_rdma_wr wr[3];
        for (unsigned k = 0; k < 3; k++)
            wr[k] = write_wr(&w, 1, src[k], dst[k], len[k], 20 + k);
        unsigned posted = 0;
        CHECK_EQ_I(rifl_rdma_post_chain(w.e[0], wr, 3, &posted, w.now), RIFL_OK);
        CHECK_EQ_U(posted, 3);
        rifl_rdma_wc wc[3];
        REQUIRE(wire_wait(&w, 0, wc, 3, 5000000) == 3);
        CHECK(hit_done);
        for (unsigned k = 0; k < 3; k++) {
            CHECK_EQ_I(wc[k].status, RIFL_OK);
            CHECK_MSG(memcmp(w.mem[1] + dst[k], w.mem[0] + src[k], len[k]) == 0,
                      "write %u arrived damaged", k);
        }
        const rifl_rdma_stats *s = rifl_rdma_get_stats(w.e[0]);
        CHECK_EQ_U(s->retransmitted_blocks, 1);
        if (mode == HIT_DAMAGE) {
            CHECK_EQ_U(s->nacks_rx[RIFL_RDMA_NACK_CRC], 1);
            CHECK_EQ_U(s->timeouts, 0);
        } else {
            CHECK_EQ_U(s->timeouts, 1);
        }
        CHECK_EQ_U(s->chain_waits, nb - 1);
        /* the first block: attempt 0 whole (the hit packet counted before
         * the wire hit it), then attempt 1 whole */
        struct span a0 = span_of(RIFL_RDMA_WRITE, b[0].dst, b[0].len, 0);
        struct span a1 = span_of(RIFL_RDMA_WRITE, b[0].dst, b[0].len, 1);
        CHECK_EQ_U(a0.n, b[0].pkts);
        CHECK_EQ_U(a1.n, b[0].pkts);
        CHECK_EQ_U(span_of(RIFL_RDMA_WRITE, b[0].dst, b[0].len, -1).n, 2 * b[0].pkts);
        /* the second block went right after the first attempt, before the
         * retry */
        struct span next = span_of(RIFL_RDMA_WRITE, b[1].dst, b[1].len, -1);
        CHECK_EQ_U(next.first, a0.last + 1);
        CHECK(next.first < a1.first);
        /* every other block: once, attempt 0, in chain order behind the
         * first attempt of the block before it */
        unsigned prev_last = a0.last;
        for (unsigned i = 1; i < nb; i++) {
            struct span any = span_of(RIFL_RDMA_WRITE, b[i].dst, b[i].len, -1);
            struct span z = span_of(RIFL_RDMA_WRITE, b[i].dst, b[i].len, 0);
            CHECK_MSG(any.n == b[i].pkts && z.n == b[i].pkts,
                      "block %u: %u packets, %u of attempt 0, for %u", i, any.n, z.n, b[i].pkts);
            CHECK_MSG(z.first > prev_last, "block %u left before block %u was cut", i, i - 1);
            prev_last = z.last;
        }
        CHECK_EQ_U(rifl_rdma_pending(w.e[0]), 0);
        wire_free(&w);
    }
}

/* A source page of the chain's first write not resident: its block stops
 * there and holds the rest of the chain (the write's later blocks and the
 * next write) until the page is served; then the block is sent again and
 * the chain goes on in order. */
static void t_chain_page_fault(void)
{
    static const uint64_t src[2] = { 0, 100000 }, dst[2] = { 0, 200000 }, len[2] = { 40000, 20000 };
    struct wire w;
    wire_init(&w, NULL, 50);
    one_route(&w);
    record_start(&w);
    fill_random(w.mem[0], MEM / 2, 14);
    struct xblk b[8];
    unsigned nb = chain_blocks(w.mr[1].va, dst, len, 2, b);
    REQUIRE(nb == 5); /* 16384, 16384, 7232; 16384 - 200000 % 16384 = 12832, 7168 */
    CHECK_EQ_I(rifl_rdma_set_resident(w.e[0], w.mr[0].va + 20480, 1, false), RIFL_OK);
    rifl_rdma_wr wr[2] = { write_wr(&w, 1, src[0], dst[0], len[0], 30),
                           write_wr(&w, 1, src[1], dst[1], len[1], 31) };
    unsigned posted = 0;
    CHECK_EQ_I(rifl_rdma_post_chain(w.e[0], wr, 2, &posted, w.now), RIFL_OK);
    CHECK_EQ_U(posted, 2);
    rifl_rdma_wc wc[2];
    CHECK_EQ_U(wire_wait(&w, 0, wc, 1, 300000), 0); /* nothing completes */
    uint64_t page = 0;
    CHECK(rifl_rdma_poll_fault(w.e[0], &page));
    CHECK_EQ_U(page, w.mr[0].va + 20480);
    const rifl_rdma_stats *s = rifl_rdma_get_stats(w.e[0]);
    CHECK_EQ_U(s->src_page_faults, 1);
    CHECK_EQ_U(s->blocks_acked, 1);
    CHECK_EQ_U(s->chain_waits, nb - 1);
    /* the first block whole; the second up to the page (16 packets of
     * 256 bytes); nothing of the others */
    CHECK_EQ_U(span_of(RIFL_RDMA_WRITE, b[0].dst, b[0].len, -1).n, b[0].pkts);
    struct span held = span_of(RIFL_RDMA_WRITE, b[1].dst, b[1].len, -1);
    CHECK_EQ_U(held.n, 16);
    CHECK(held.n && sent[held.last].dst + sent[held.last].len == b[1].dst + 4096);
    for (unsigned i = 2; i < nb; i++)
        CHECK_MSG(span_of(RIFL_RDMA_WRITE, b[i].dst, b[i].len, -1).n == 0,
                  "block %u left while the chain was held", i);
    CHECK_EQ_U(rifl_rdma_pending(w.e[0]), 2);
    unsigned before = sent_n;
    CHECK_EQ_I(rifl_rdma_page_in(w.e[0], page, w.now), RIFL_OK);
    REQUIRE(wire_wait(&w, 0, wc, 2, 2000000) == 2);
    for (unsigned k = 0; k < 2; k++) {
        CHECK_EQ_I(wc[k].status, RIFL_OK);
        CHECK_MSG(memcmp(w.mem[1] + dst[k], w.mem[0] + src[k], len[k]) == 0,
                  "write %u arrived damaged", k);
    }
    /* after the page came in: the second block again, whole, then the
     * others in chain order, each back to back */
    struct span again = span_of(RIFL_RDMA_WRITE, b[1].dst, b[1].len, 1);
    CHECK_EQ_U(again.n, b[1].pkts);
    CHECK_EQ_U(again.first, before);
    unsigned prev_last = again.last;
    for (unsigned i = 2; i < nb; i++) {
        struct span sp = span_of(RIFL_RDMA_WRITE, b[i].dst, b[i].len, -1);
        CHECK_EQ_U(sp.n, b[i].pkts);
        CHECK_EQ_U(sp.first, prev_last + 1);
        CHECK_EQ_U(sp.last - sp.first + 1, sp.n);
        prev_last = sp.last;
    }
    CHECK_EQ_U(s->retransmitted_blocks, 1);
    CHECK_EQ_U(rifl_rdma_pending(w.e[0]), 0);
    wire_free(&w);
}

/* Refusals: NULL, no requests, a bad request in the middle; those before
 * it are posted (and complete), nothing crashes. */
static void t_chain_args(void)
{
    struct wire w;
    wire_init(&w, NULL, 60);
    fill_random(w.mem[0], 65536, 15);
    rifl_rdma_wr wr[3] = { write_wr(&w, 1, 0, 0, 1000, 1), write_wr(&w, 1, 1000, 1000, 1000, 2),
                           write_wr(&w, 1, 2000, 2000, 1000, 3) };
    unsigned posted = 99;
    CHECK_EQ_I(rifl_rdma_post_chain(NULL, wr, 3, &posted, w.now), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_U(posted, 0);
    posted = 99;
    CHECK_EQ_I(rifl_rdma_post_chain(w.e[0], NULL, 3, &posted, w.now), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_U(posted, 0);
    posted = 99;
    CHECK_EQ_I(rifl_rdma_post_chain(w.e[0], wr, 0, &posted, w.now), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_U(posted, 0);
    CHECK_EQ_I(rifl_rdma_post_chain(w.e[0], wr, 0, NULL, w.now), RIFL_ERR_INVALID_ARG);
    CHECK_EQ_U(rifl_rdma_pending(w.e[0]), 0);
    /* a bad request in the middle, of each kind: what was before it is
     * posted, it and what follows are not */
    struct {
        rifl_rdma_wr bad;
        int rc;
    } bad[] = {
        { write_wr(&w, 1, 0, 0, 0, 9), RIFL_ERR_INVALID_ARG },              /* no bytes */
        { write_wr(&w, 1, MEM - 10, 0, 100, 9), RIFL_ERR_PROTECTION },      /* past the region */
        { write_wr(&w, 1, 0, 0, 100, 9), RIFL_ERR_UNREACHABLE },            /* unknown node */
        { { .op = (rifl_rdma_op)99, .pdid = PD, .node = 2, .len = 1 }, RIFL_ERR_INVALID_ARG },
        { { .op = RIFL_RDMA_OP_SEND, .pdid = PD, .node = 2, .mailbox = 5, .len = 4 },
          RIFL_ERR_INVALID_ARG },                                           /* no buffer */
        { { .op = RIFL_RDMA_OP_SEND, .pdid = PD, .node = 2, .mailbox = 5, .buf = "x",
            .len = 1ull << 32 }, RIFL_ERR_INVALID_ARG },                    /* too long */
        { { .op = RIFL_RDMA_OP_READ, .pdid = 9, .node = 2, .local_va = w.mr[0].va,
            .remote_va = w.mr[1].va, .len = 100 }, RIFL_ERR_INVALID_ARG },  /* no such domain */
    };
    bad[2].bad.node = 77;
    unsigned ok = 0;
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rifl_rdma_wr c[3] = { wr[0], bad[i].bad, wr[2] };
        c[0].wr_id = 100 + i;
        c[0].remote_va += 4096 * i;
        posted = 99;
        CHECK_EQ_I(rifl_rdma_post_chain(w.e[0], c, 3, &posted, w.now), bad[i].rc);
        CHECK_EQ_U(posted, 1);
        ok++;
        /* the same request first: nothing posted */
        c[0] = bad[i].bad;
        posted = 99;
        CHECK_EQ_I(rifl_rdma_post_chain(w.e[0], c, 3, &posted, w.now), bad[i].rc);
        CHECK_EQ_U(posted, 0);
    }
    CHECK_EQ_U(rifl_rdma_pending(w.e[0]), ok);
    /* without *posted: the whole chain */
    CHECK_EQ_I(rifl_rdma_post_chain(w.e[0], wr, 3, NULL, w.now), RIFL_OK);
    rifl_rdma_wc wc[16];
    REQUIRE(wire_wait(&w, 0, wc, ok + 3, 2000000) == ok + 3);
    for (unsigned i = 0; i < ok + 3; i++) {
        CHECK_EQ_I(wc[i].status, RIFL_OK);
        CHECK(wc[i].wr_id >= 100 ? wc[i].wr_id < 100 + ok : wc[i].wr_id >= 1 && wc[i].wr_id <= 3);
    }
    for (unsigned i = 0; i < ok; i++)
        CHECK(memcmp(w.mem[1] + 4096 * i, w.mem[0], 1000) == 0);
    CHECK(memcmp(w.mem[1] + 1000, w.mem[0] + 1000, 2000) == 0);
    CHECK_EQ_U(rifl_rdma_pending(w.e[0]), 0);
    wire_free(&w);
}

/* A transfer that fails leaves its chain; the others are never left
 * waiting for it.  (a) The first write's target refuses it (PROTECTION)
 * while its later blocks and the next write are held: the next write runs
 * and completes.  (b) A read in the middle times out while it is held
 * behind a write stopped at a source page: the write after the read now
 * waits for that write, and goes once it has been cut. */
static void t_chain_failure(void)
{
    {
        struct wire w;
        wire_init(&w, NULL, 70);
        one_route(&w);
        record_start(&w);
        static uint8_t other[81920];
        memset(other, 0x3C, sizeof other);
        rifl_rdma_mr mr_other;
        REQUIRE(rifl_rdma_alloc_pd(w.e[1], 9) == RIFL_OK);
        REQUIRE(rifl_rdma_reg_mr(w.e[1], 9, other, sizeof other, RIFL_RDMA_REMOTE_WRITE,
                                 &mr_other) == RIFL_OK);
        fill_random(w.mem[0], MEM / 2, 16);
        rifl_rdma_wr wr[2] = { write_wr(&w, 1, 0, 0, 70000, 1), write_wr(&w, 1, 100000, 300000,
                                                                         20000, 2) };
        wr[0].remote_va = mr_other.va;
        CHECK_EQ_I(rifl_rdma_post_chain(w.e[0], wr, 2, NULL, w.now), RIFL_OK);
        CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->chain_waits, 5 + 2 - 1);
        rifl_rdma_wc wc[2];
        REQUIRE(wire_wait(&w, 0, wc, 2, 2000000) == 2);
        CHECK_EQ_U(wc[0].wr_id, 1);
        CHECK_EQ_I(wc[0].status, RIFL_ERR_REMOTE_PROTECTION);
        CHECK_EQ_U(wc[1].wr_id, 2);
        CHECK_EQ_I(wc[1].status, RIFL_OK);
        CHECK(memcmp(w.mem[1] + 300000, w.mem[0] + 100000, 20000) == 0);
        for (size_t i = 0; i < sizeof other; i++)
            if (other[i] != 0x3C) {
                CHECK_MSG(0, "byte %zu of the refused region changed", i);
                break;
            }
        /* the first write never got to its last block */
        CHECK(span_of(RIFL_RDMA_WRITE, mr_other.va + 65536, 4464, -1).n == 0);
        CHECK_EQ_U(rifl_rdma_pending(w.e[0]), 0);
        wire_free(&w);
    }
    {
        rifl_rdma_config c = rifl_rdma_default_config;
        c.read_timeout_ns = 100000;
        struct wire w;
        wire_init(&w, &c, 71);
        one_route(&w);
        record_start(&w);
        fill_random(w.mem[0], MEM / 2, 17);
        fill_random(w.mem[1] + 800000, 5000, 18);
        CHECK_EQ_I(rifl_rdma_set_resident(w.e[0], w.mr[0].va + 20480, 1, false), RIFL_OK);
        rifl_rdma_wr wr[3] = {
            write_wr(&w, 1, 0, 0, 40000, 1),
            { .op = RIFL_RDMA_OP_READ, .pdid = PD, .node = 2, .local_va = w.mr[0].va + 600000,
              .remote_va = w.mr[1].va + 800000, .len = 5000, .wr_id = 2 },
            write_wr(&w, 1, 100000, 300000, 20000, 3),
        };
        unsigned posted = 0;
        CHECK_EQ_I(rifl_rdma_post_chain(w.e[0], wr, 3, &posted, w.now), RIFL_OK);
        CHECK_EQ_U(posted, 3);
        rifl_rdma_wc wc[2];
        REQUIRE(wire_wait(&w, 0, wc, 1, 1000000) == 1);
        CHECK_EQ_U(wc[0].wr_id, 2);
        CHECK_EQ_I(wc[0].status, RIFL_ERR_TIMEOUT);
        CHECK_EQ_U(wire_wait(&w, 0, wc, 1, 200000), 0); /* the rest still held */
        CHECK_EQ_U(span_of(RIFL_RDMA_READ_REQ, RIFL_RDMA_PERIPHERAL(0), 1, -1).n, 0);
        CHECK_EQ_U(span_of(RIFL_RDMA_WRITE, w.mr[1].va + 300000, 20000, -1).n, 0);
        uint64_t page = 0;
        CHECK(rifl_rdma_poll_fault(w.e[0], &page));
        CHECK_EQ_I(rifl_rdma_page_in(w.e[0], page, w.now), RIFL_OK);
        REQUIRE(wire_wait(&w, 0, wc, 2, 2000000) == 2);
        CHECK(wc[0].wr_id == 1 || wc[1].wr_id == 1);
        CHECK(wc[0].wr_id == 3 || wc[1].wr_id == 3);
        CHECK(wc[0].status == RIFL_OK && wc[1].status == RIFL_OK);
        CHECK(memcmp(w.mem[1], w.mem[0], 40000) == 0);
        CHECK(memcmp(w.mem[1] + 300000, w.mem[0] + 100000, 20000) == 0);
        /* the last write went after every packet of the first */
        struct span first = span_of(RIFL_RDMA_WRITE, w.mr[1].va, 40000, -1);
        struct span last = span_of(RIFL_RDMA_WRITE, w.mr[1].va + 300000, 20000, -1);
        CHECK(last.n > 0 && last.first == first.last + 1);
        CHECK_EQ_U(rifl_rdma_pending(w.e[0]), 0);
        wire_free(&w);
    }
}

/* A write, a read and a send in one chain: the read's request leaves after
 * the write's last packet and the send after the request; and a chain to
 * two nodes with 2 blocks in flight per node: the second node's write
 * waits until the first write has issued all its blocks, so its packets
 * come after the first write's last block began. */
static void t_chain_mixed(void)
{
    {
        struct wire w;
        wire_init(&w, NULL, 80);
        one_route(&w);
        record_start(&w);
        REQUIRE(rifl_rdma_create_mailbox(w.e[1], PD, 5, 4) == RIFL_OK);
        fill_random(w.mem[0], 65536, 19);
        fill_random(w.mem[1] + 500000, 30000, 20);
        const char hello[] = "after the read";
        rifl_rdma_wr wr[3] = {
            write_wr(&w, 1, 0, 0, 20000, 1),
            { .op = RIFL_RDMA_OP_READ, .pdid = PD, .node = 2, .local_va = w.mr[0].va + 600000,
              .remote_va = w.mr[1].va + 500000, .len = 30000, .path = 1, .wr_id = 2 },
            { .op = RIFL_RDMA_OP_SEND, .pdid = PD, .node = 2, .mailbox = 5, .buf = hello,
              .len = sizeof hello, .wr_id = 3 },
        };
        unsigned posted = 0;
        CHECK_EQ_I(rifl_rdma_post_chain(w.e[0], wr, 3, &posted, w.now), RIFL_OK);
        CHECK_EQ_U(posted, 3);
        rifl_rdma_wc wc[3];
        REQUIRE(wire_wait(&w, 0, wc, 3, 2000000) == 3);
        bool seen[4] = { false };
        for (unsigned k = 0; k < 3; k++) {
            CHECK_EQ_I(wc[k].status, RIFL_OK);
            if (wc[k].wr_id >= 1 && wc[k].wr_id <= 3)
                seen[wc[k].wr_id] = true;
        }
        CHECK(seen[1] && seen[2] && seen[3]);
        CHECK(memcmp(w.mem[1], w.mem[0], 20000) == 0);
        CHECK(memcmp(w.mem[0] + 600000, w.mem[1] + 500000, 30000) == 0);
        char got[64];
        size_t glen = 0;
        CHECK_EQ_I(rifl_rdma_poll_mailbox(w.e[1], PD, 5, got, sizeof got, &glen, NULL), 1);
        CHECK(glen == sizeof hello && memcmp(got, hello, sizeof hello) == 0);
        struct span wsp = span_of(RIFL_RDMA_WRITE, w.mr[1].va, 20000, -1);
        struct span req = span_of(RIFL_RDMA_READ_REQ, RIFL_RDMA_PERIPHERAL(0), 1, -1);
        struct span snd = span_of(RIFL_RDMA_WRITE, RIFL_RDMA_PERIPHERAL(5), 1, -1);
        CHECK(wsp.n == 64 + 15 && req.n == 1 && snd.n == 1); /* 16384 + 3616 bytes */
        CHECK_EQ_U(req.first, wsp.last + 1);
        CHECK_EQ_U(snd.first, req.first + 1);
        CHECK_EQ_U(rifl_rdma_get_stats(w.e[0])->chain_waits, 2 + 1 + 1 - 1);
        wire_free(&w);
    }
    {
        rifl_rdma_config c = rifl_rdma_default_config;
        c.blocks_per_node = 2;
        struct wire w;
        wire_init(&w, &c, 81);
        one_route(&w);
        record_start(&w);
        fill_random(w.mem[0], MEM / 2, 21);
        rifl_rdma_wr wr[2] = { write_wr(&w, 1, 0, 0, 81920, 1),
                               write_wr(&w, 2, 100000, 200000, 20000, 2) };
        CHECK_EQ_I(rifl_rdma_post_chain(w.e[0], wr, 2, NULL, w.now), RIFL_OK);
        rifl_rdma_wc wc[2];
        REQUIRE(wire_wait(&w, 0, wc, 2, 4000000) == 2);
        CHECK(wc[0].status == RIFL_OK && wc[1].status == RIFL_OK);
        CHECK(memcmp(w.mem[1], w.mem[0], 81920) == 0);
        CHECK(memcmp(w.mem[2] + 200000, w.mem[0] + 100000, 20000) == 0);
        /* node 3's packets: none before node 2's last block began */
        struct span lastb = span_of(RIFL_RDMA_WRITE, w.mr[1].va + 65536, 16384, -1);
        unsigned first3 = ~0u;
        for (unsigned i = 0; i < sent_n && first3 == ~0u; i++)
            if (sent[i].type == RIFL_RDMA_WRITE && sent[i].dst >= w.mr[2].va + 200000 &&
                sent[i].dst < w.mr[2].va + 220000)
                first3 = i;
        CHECK(lastb.n == 64 && first3 != ~0u && first3 > lastb.first);
        CHECK_EQ_U(rifl_rdma_pending(w.e[0]), 0);
        wire_free(&w);
    }
}

/* Seeded random chains of 1-4 writes and reads, each chain posted on one
 * node to the others, through loss, duplication and reordering: every
 * transfer completes, every byte arrives. */
static void chain_random_run(uint64_t seed, double loss, double dup, double reorder,
                             unsigned transfers, rifl_rdma_mapping mapping)
{
    rifl_rdma_config c = rifl_rdma_default_config;
    c.mapping = mapping;
    c.block_timeout_ns = 50000;
    c.block_timeout_max_ns = 400000;
    struct wire w;
    wire_init(&w, &c, seed);
    w.loss = loss;
    w.dup = dup;
    w.reorder = reorder;
    rifl_rng r;
    rifl_rng_seed(&r, seed * 17 + 3);
    for (unsigned n = 0; n < NODES; n++)
        fill_random(w.mem[n], MEM / 2, seed + n);
    uint64_t slot = (MEM / 2) / 16;
    struct {
        unsigned a, b; /* the data's node and where it lands */
        uint64_t src, dst, len;
    } t[16];
    bool busy[16] = { false };
    unsigned active = 0, posted = 0, done = 0;
    while (done < transfers && w.now < 2000000000ull) {
        while (posted < transfers && active <= 12) {
            unsigned p = (unsigned)rifl_rng_below(&r, NODES), n = 1 + (unsigned)rifl_rng_below(&r, 4);
            if (n > transfers - posted)
                n = transfers - posted;
            rifl_rdma_wr wr[4];
            unsigned ks[4];
            for (unsigned i = 0; i < n; i++) {
                unsigned k = 0;
                while (busy[k] || (i && k <= ks[i - 1]))
                    k++;
                ks[i] = k;
                unsigned q = (p + 1 + (unsigned)rifl_rng_below(&r, NODES - 1)) % NODES;
                bool read = rifl_rng_below(&r, 3) == 0;
                uint64_t len = 1 + rifl_rng_below(&r, rifl_rng_below(&r, 2) ? 300 : slot - 300);
                uint64_t src = rifl_rng_below(&r, MEM / 2 - len);
                uint64_t dst = MEM / 2 + k * slot + rifl_rng_below(&r, slot - len);
                t[k].a = read ? q : p, t[k].b = read ? p : q;
                t[k].src = src, t[k].dst = dst, t[k].len = len;
                wr[i] = (rifl_rdma_wr){ .op = read ? RIFL_RDMA_OP_READ : RIFL_RDMA_OP_WRITE,
                                        .pdid = PD, .node = q + 1,
                                        .local_va = w.mr[p].va + (read ? dst : src),
                                        .remote_va = w.mr[q].va + (read ? src : dst), .len = len,
                                        .path = (unsigned)rifl_rng_below(&r, 32), .wr_id = k };
            }
            unsigned got = 0;
            CHECK_EQ_I(rifl_rdma_post_chain(w.e[p], wr, n, &got, w.now), RIFL_OK);
            CHECK_EQ_U(got, n);
            for (unsigned i = 0; i < n; i++)
                busy[ks[i]] = true;
            active += n;
            posted += n;
        }
        wire_step(&w);
        for (unsigned n = 0; n < NODES; n++) {
            rifl_rdma_wc wc;
            while (rifl_rdma_poll_cq(w.e[n], &wc, 1)) {
                unsigned k = (unsigned)wc.wr_id;
                CHECK_EQ_I(wc.status, RIFL_OK);
                CHECK(k < 16 && busy[k]);
                if (k >= 16 || !busy[k])
                    continue;
                CHECK_MSG(memcmp(w.mem[t[k].b] + t[k].dst, w.mem[t[k].a] + t[k].src, t[k].len) == 0,
                          "transfer %u of %llu bytes arrived damaged", done,
                          (unsigned long long)t[k].len);
                busy[k] = false;
                active--;
                done++;
            }
        }
    }
    CHECK_EQ_U(done, transfers);
    /* the reads served finish once their blocks are acknowledged */
    for (uint64_t end = w.now + 20000000; w.now < end;) {
        unsigned left = 0;
        for (unsigned n = 0; n < NODES; n++)
            left += rifl_rdma_pending(w.e[n]);
        if (!left)
            break;
        wire_step(&w);
    }
    uint64_t waits = 0, retx = 0;
    for (unsigned n = 0; n < NODES; n++) {
        waits += rifl_rdma_get_stats(w.e[n])->chain_waits;
        retx += rifl_rdma_get_stats(w.e[n])->retransmitted_blocks;
        CHECK_EQ_U(rifl_rdma_pending(w.e[n]), 0);
    }
    CHECK(waits > 0);
    CHECK(loss > 0 ? retx > 0 : retx == 0);
    wire_free(&w);
}

static void t_chain_random(void)
{
    chain_random_run(test_seed + 800, 0, 0, 0, 60, RIFL_RDMA_MAP_BUNDLE);
    chain_random_run(test_seed + 900, 0.02, 0.02, 0.1, test_long_run ? 2000 : 60,
                     RIFL_RDMA_MAP_BUNDLE);
    chain_random_run(test_seed + 1000, 0.005, 0.02, 0.1, test_long_run ? 500 : 30,
                     RIFL_RDMA_MAP_CELL);
    chain_random_run(test_seed + 1100, 0.02, 0.02, 0.1, test_long_run ? 500 : 30,
                     RIFL_RDMA_MAP_COMPACT);
}

/* The simulator: the route's capacity at 16 KB writes, and a run whose
 * faults all recover. */
static void t_sim(void)
{
    rifl_rdmasim_config c = rifl_rdmasim_default_config;
    c.size = 16384;
    c.bytes = 4000000;
    c.link_gbps = 100;
    rifl_rdmasim_result r;
    char msg[200];
    REQUIRE(rifl_rdmasim_run(&c, &r, msg, sizeof msg) == RIFL_OK);
    CHECK(r.verified);
    CHECK(r.ratio >= 0.97 && r.ratio <= 1.0);
    CHECK_EQ_U(r.failed, 0);
    /* the compact mapping carries more over the same link, and near its own
     * capacity; the cell mapping delivers too */
    double bundle_gbps = r.throughput_gbps;
    c.mapping = RIFL_RDMA_MAP_COMPACT;
    REQUIRE(rifl_rdmasim_run(&c, &r, msg, sizeof msg) == RIFL_OK);
    CHECK(r.verified);
    CHECK_EQ_U(r.bundle_packets, 11);
    CHECK(r.ratio >= 0.97);
    CHECK(r.throughput_gbps > 1.03 * bundle_gbps);
    c.mapping = RIFL_RDMA_MAP_CELL;
    REQUIRE(rifl_rdmasim_run(&c, &r, msg, sizeof msg) == RIFL_OK);
    CHECK(r.verified);
    CHECK_EQ_U(r.cells, r.bundles);
    c.mapping = RIFL_RDMA_MAP_BUNDLE;
    c.page_fault = 0.02;
    c.payload_crc = 0.001;
    c.drop = 0.0002;
    c.op = RIFL_RDMASIM_READ;
    REQUIRE(rifl_rdmasim_run(&c, &r, msg, sizeof msg) == RIFL_OK);
    CHECK(r.verified);
    CHECK(r.sender.retransmitted_blocks > 0);
    c.size = 300;
    c.op = RIFL_RDMASIM_SEND;
    CHECK_EQ_I(rifl_rdmasim_check(&c, msg, sizeof msg), RIFL_ERR_CONFIG);
    CHECK(strstr(msg, "256") != NULL);
}

/* The network's lanes and credit settings: refused without a topology,
 * outside what the network takes, or where nothing would use them; each
 * refusal names the setting. */
static void t_sim_net_settings(void)
{
    rifl_topology *single = NULL, *bonded = NULL;
    char msg[300];
    REQUIRE(rifl_topo_generate("single:4", &single, msg, sizeof msg) == RIFL_OK);
    static const char two_lanes[] = "switch s0 4\nhost h0\nhost h1\n"
                                    "link h0 s0:0 lanes 2\nlink h1 s0:1 lanes 4\n";
    REQUIRE(rifl_topo_parse(two_lanes, sizeof two_lanes - 1, &bonded, msg, sizeof msg) ==
            RIFL_OK);
    const struct {
        const rifl_topology *topo;
        rifl_net_fc fc;
        unsigned lanes, group_lanes, vls, credit_cells;
        const char *want; /* NULL: accepted */
    } k[] = {
        { NULL, RIFL_NET_FC_VOQ, 2, 0, 0, 0, "lanes is 2 without a network" },
        { NULL, RIFL_NET_FC_VOQ, 1, 0, 0, 0, NULL },
        { NULL, RIFL_NET_FC_VOQ, 0, 2, 0, 0, "group_lanes is 2 without a network" },
        { NULL, RIFL_NET_FC_CREDIT, 0, 0, 4, 0, "vls is 4 without a network" },
        { NULL, RIFL_NET_FC_CREDIT, 0, 0, 0, 8, "credit_cells is 8 without a network" },
        { single, RIFL_NET_FC_VOQ, 3, 0, 0, 0, "lanes is 3" },
        { single, RIFL_NET_FC_VOQ, 32, 0, 0, 0, "lanes is 32" },
        { single, RIFL_NET_FC_VOQ, 4, 3, 0, 0, "group_lanes is 3" },
        { single, RIFL_NET_FC_VOQ, 4, 8, 0, 0, "give group_lanes up to 4" },
        { single, RIFL_NET_FC_VOQ, 4, 4, 0, 0, NULL },
        { single, RIFL_NET_FC_VOQ, 1, 2, 0, 0, "group_lanes is 2 without bonded links" },
        { single, RIFL_NET_FC_VOQ, 0, 0, 4, 0, "vls is 4 with per-VOQ" },
        { single, RIFL_NET_FC_LINK, 0, 0, 0, 8, "credit_cells is 8 with link-level" },
        { single, RIFL_NET_FC_CREDIT, 0, 0, 16, 0, "vls is 16" },
        { single, RIFL_NET_FC_CREDIT, 0, 0, 0, 410, "credit_cells is 410" },
        { single, RIFL_NET_FC_CREDIT, 0, 0, 15, 409, NULL },
        { bonded, RIFL_NET_FC_VOQ, 0, 2, 0, 0, NULL },  /* the links' own lanes */
        { bonded, RIFL_NET_FC_VOQ, 0, 4, 0, 0, "give group_lanes up to 2" },
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        rifl_rdmasim_config c = rifl_rdmasim_default_config;
        c.topo = k[i].topo;
        c.fc = k[i].fc;
        c.lanes = k[i].lanes;
        c.group_lanes = k[i].group_lanes;
        c.vls = k[i].vls;
        c.credit_cells = k[i].credit_cells;
        msg[0] = '\0';
        int rc = rifl_rdmasim_check(&c, msg, sizeof msg);
        CHECK_MSG(rc == (k[i].want ? RIFL_ERR_CONFIG : RIFL_OK), "case %zu: %d (%s)", i, rc, msg);
        CHECK_MSG(!k[i].want || strstr(msg, k[i].want), "case %zu: '%s' lacks '%s'", i, msg,
                  k[i].want ? k[i].want : "");
    }
    rifl_topo_free(single);
    rifl_topo_free(bonded);
}

/* Bundles for one destination only (rifl_rdma_output_to): a port with a
 * queue per destination asks for node 3's while node 2's stay staged; full
 * bundles unless the port is idle; an unknown node gives none; what was
 * taken this way and what the wire carries after completes byte for byte. */
static void t_output_to(void)
{
    struct wire w;
    wire_init(&w, NULL, 5);
    fill_random(w.mem[0], 2 * 65536, 3);
    REQUIRE(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va, 2, w.mr[1].va, 65536, 0, NULL, 1,
                                 w.now) == RIFL_OK);
    REQUIRE(rifl_rdma_post_write(w.e[0], PD, w.mr[0].va + 65536, 3, w.mr[2].va, 65536, 0, NULL,
                                 2, w.now) == RIFL_OK);
    static uint8_t b[RIFL_RDMA_BUNDLE_CAP];
    rifl_rdma_route to;
    CHECK_EQ_U(rifl_rdma_output_to(w.e[0], w.now, 9, true, b, sizeof b, &to), 0);
    CHECK_EQ_U(rifl_rdma_output_to(NULL, w.now, 3, true, b, sizeof b, &to), 0);
    CHECK_EQ_U(rifl_rdma_output_to(w.e[0], w.now, 3, true, b, 100, &to), 0); /* too small */
    unsigned got = 0;
    for (unsigned k = 0; k < 40; k++) {
        size_t len = rifl_rdma_output_to(w.e[0], w.now, 3, false, b, sizeof b, &to);
        if (!len)
            break;
        got++;
        CHECK_EQ_U(to.node, 3);
        CHECK_EQ_U(b[0], 0x02);
        CHECK_EQ_U(b[1], 7); /* not idle: full bundles only */
        REQUIRE(rifl_rdma_input(w.e[2], w.now, b, len, (rifl_rdma_route){ 1, to.route }) ==
                RIFL_OK);
    }
    CHECK(got >= 4);
    CHECK(rifl_rdma_staged(w.e[0]) > 0);            /* node 2's wait */
    CHECK_EQ_U(rifl_rdma_get_stats(w.e[1])->rx_packets, 0); /* none went to node 2 */
    rifl_rdma_wc wc[2];
    REQUIRE(wire_wait(&w, 0, wc, 2, 1000000) == 2);
    CHECK(wc[0].status == RIFL_OK && wc[1].status == RIFL_OK);
    CHECK(memcmp(w.mem[1], w.mem[0], 65536) == 0);
    CHECK(memcmp(w.mem[2], w.mem[0] + 65536, 65536) == 0);
    wire_free(&w);
}

TEST_MAIN({ "config_refused", t_config_refused }, { "write_notify", t_write_notify },
          { "packets_follow_layout", t_packets_follow_layout },
          { "read_and_send", t_read_and_send }, { "protection", t_protection },
          { "payload_crc", t_payload_crc }, { "nack_once", t_nack_once },
          { "send_retry_after_context_reused", t_send_retry_after_context_reused },
          { "send_late_attempt_after_context_reused", t_send_late_attempt_after_context_reused },
          { "send_older_block_after_context_reused", t_send_older_block_after_context_reused },
          { "generation_wrap", t_generation_wrap },
          { "send_once_random", t_send_once_random }, { "memory_ages_out", t_memory_ages_out },
          { "loss_past_half_window", t_loss_past_half_window },
          { "source_page_past_block_life", t_source_page_past_block_life },
          { "restart_forget_node", t_restart_forget_node },
          { "restart_fails_transfers", t_restart_fails_transfers },
          { "restart_old_packet_in_lane", t_restart_old_packet_in_lane },
          { "restart_after_pause", t_restart_after_pause },
          { "check_codes", t_check_codes },
          { "page_faults", t_page_faults },
          { "set_resident_wakes", t_set_resident_wakes },
          { "write_refused", t_write_refused }, { "paths_mod_routes", t_paths_mod_routes },
          { "pool_keeps_responses", t_pool_keeps_responses },
          { "reads_both_ways", t_reads_both_ways },
          { "serve_per_domain", t_serve_per_domain }, { "give_up", t_give_up },
          { "read_late_record", t_read_late_record },
          { "random_clean", t_random_clean }, { "random_lossy", t_random_lossy },
          { "random_go_back_n", t_random_go_back_n }, { "random_cell", t_random_cell },
          { "random_compact", t_random_compact }, { "mappings", t_mappings },
          { "chain_order", t_chain_order }, { "chain_retry", t_chain_retry },
          { "chain_page_fault", t_chain_page_fault }, { "chain_args", t_chain_args },
          { "chain_failure", t_chain_failure }, { "chain_mixed", t_chain_mixed },
          { "chain_random", t_chain_random },
          { "output_to", t_output_to }, { "sim", t_sim },
          { "sim_net_settings", t_sim_net_settings })

/* Fuzz the RDMA engine's receive side: any bytes arrive as a message from
 * node 1 (route 0) at three engines of node 2, one per mapping (the spec's
 * bundles, one packet per cell, compact bundles), kept from input to input, with
 * domain 7, a 64 KiB region of it open to every access and its mailbox 2.
 * Any input: no crash; every bundle the engine sends in answer (responses,
 * reads served) goes to a node it knows on one of its routes and reads to
 * its end, every packet checking clean; the timers run, the mailbox never
 * holds more than its depth, and with no work request posted the
 * completion queue stays empty. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/l2.h"
#include "rifl/rdma.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NODE 2
#define PEER 1
#define ROUTES 2
#define PDID 7
#define MAILBOX 2
#define DEPTH 4
#define STEP_NS 100000 /* 100 us of `now` per input: the timers come due */

static rifl_rdma *engines[3];
static const rifl_rdma_mapping mappings[3] = { RIFL_RDMA_MAP_BUNDLE, RIFL_RDMA_MAP_CELL,
                                               RIFL_RDMA_MAP_COMPACT };
static uint8_t mem[64 * 1024];
static uint8_t out[RIFL_RDMA_BUNDLE_CAP];
static uint64_t now;

static void setup(rifl_rdma **engp, rifl_rdma_mapping mapping)
{
    rifl_rdma_config cfg = rifl_rdma_default_config;
    cfg.node = NODE;
    cfg.mapping = mapping;
    rifl_rdma *eng;
    char msg[256];
    rifl_rdma_mr mr;
    if (rifl_rdma_open(&cfg, &eng, msg, sizeof msg) != RIFL_OK ||
        rifl_rdma_add_node(eng, PEER, ROUTES) != RIFL_OK ||
        rifl_rdma_add_node(eng, NODE, ROUTES) != RIFL_OK ||
        rifl_rdma_alloc_pd(eng, PDID) != RIFL_OK ||
        rifl_rdma_reg_mr(eng, PDID, mem, sizeof mem,
                         RIFL_RDMA_LOCAL_WRITE | RIFL_RDMA_REMOTE_WRITE | RIFL_RDMA_REMOTE_READ,
                         &mr) != RIFL_OK ||
        rifl_rdma_create_mailbox(eng, PDID, MAILBOX, DEPTH) != RIFL_OK)
        abort();
    *engp = eng;
}

/* A bundle the engine wrote: the prefix agrees with its length, and the
 * packets it counts fill it exactly, each one checking clean and sent by
 * this node. */
static void check_bundle(const uint8_t *b, size_t len, rifl_rdma_route to,
                         rifl_rdma_mapping mapping)
{
    if ((to.node != PEER && to.node != NODE) || to.route >= ROUTES)
        abort();
    if (mapping == RIFL_RDMA_MAP_CELL) { /* one packet, one cell */
        rifl_rdma_packet p;
        if (len > 256 || rifl_rdma_packet_parse(b, len, &p) != RIFL_RDMA_PKT_OK ||
            p.bytes != len || p.ftr.src_node != NODE)
            abort();
        return;
    }
    if (len < RIFL_RDMA_BUNDLE_PREFIX || len > sizeof out || b[0] != RIFL_L2_PROTO_RDMA ||
        b[1] == 0 || ((size_t)b[2] << 8 | b[3]) != len - RIFL_RDMA_BUNDLE_PREFIX)
        abort();
    rifl_rdma_bundle_reader r;
    rifl_rdma_bundle_reader_init(&r, b + RIFL_RDMA_BUNDLE_PREFIX, len - RIFL_RDMA_BUNDLE_PREFIX,
                                 b[1]);
    r.compact = mapping == RIFL_RDMA_MAP_COMPACT;
    for (;;) {
        rifl_rdma_packet p;
        rifl_rdma_check c = RIFL_RDMA_PKT_OK;
        rifl_rdma_walk w = rifl_rdma_bundle_next(&r, &p, &c);
        if (w == RIFL_RDMA_WALK_END)
            break;
        if (w != RIFL_RDMA_WALK_PACKET || c != RIFL_RDMA_PKT_OK || p.ftr.src_node != NODE)
            abort();
    }
    if (r.seen != b[1] || r.off != r.len)
        abort();
}

static void one(rifl_rdma *eng, rifl_rdma_mapping mapping, const uint8_t *data, size_t size)
{
    if (rifl_rdma_input(eng, now, data, size, (rifl_rdma_route){ PEER, 0 }) != RIFL_OK)
        abort();
    rifl_rdma_route to;
    size_t len;
    unsigned bundles = 0;
    while ((len = rifl_rdma_output(eng, now, true, out, sizeof out, &to)) != 0) {
        check_bundle(out, len, to, mapping);
        if (++bundles > 100000) /* the engine never stops sending */
            abort();
    }
    rifl_rdma_advance(eng, now);
    uint8_t m[RIFL_RDMA_MAX_PAYLOAD];
    size_t mlen;
    uint32_t src;
    unsigned msgs = 0;
    while (rifl_rdma_poll_mailbox(eng, PDID, MAILBOX, m, sizeof m, &mlen, &src) == 1)
        if (++msgs > DEPTH || mlen == 0 || mlen > sizeof m)
            abort();
    rifl_rdma_wc wc[16];
    if (rifl_rdma_poll_cq(eng, wc, 16) != 0) /* nothing was posted */
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!engines[0])
        for (unsigned i = 0; i < 3; i++)
            setup(&engines[i], mappings[i]);
    now += STEP_NS;
    for (unsigned i = 0; i < 3; i++)
        one(engines[i], mappings[i], data, size);
    return 0;
}

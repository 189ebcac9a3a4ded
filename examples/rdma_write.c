/* An RDMA write with a completion and a notification between two nodes,
 * through librifl: each node registers memory in protection domain 7,
 * node 1 writes 100 KB into node 2's memory, and the bundles the engines
 * hand out are carried by the loop below (here a wire of 1 us; over a
 * real network they go through the NIC and the links).
 * Build: cc rdma_write.c $(pkg-config --cflags --libs rifl) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rifl/rdma.h>

#define BYTES 100000

int main(void)
{
    rifl_rdma *node[2];
    static uint8_t mem[2][BYTES + 4096];
    rifl_rdma_mr mr[2];
    char msg[200];
    for (int i = 0; i < 2; i++) {
        rifl_rdma_config cfg = rifl_rdma_default_config;
        cfg.node = (uint32_t)i + 1;
        if (rifl_rdma_open(&cfg, &node[i], msg, sizeof msg) != RIFL_OK) {
            fprintf(stderr, "rifl_rdma_open: %s\n", msg);
            return 1;
        }
        rifl_rdma_add_node(node[i], 1, 1); /* the route table: one route each */
        rifl_rdma_add_node(node[i], 2, 1);
        rifl_rdma_alloc_pd(node[i], 7);
        rifl_rdma_reg_mr(node[i], 7, mem[i], sizeof mem[i],
                         RIFL_RDMA_LOCAL_WRITE | RIFL_RDMA_REMOTE_WRITE, &mr[i]);
    }
    for (int i = 0; i < BYTES; i++)
        mem[0][i] = (uint8_t)(i * 7 + 3);

    /* write, and have node 2 write a 32-byte notification record after the data */
    rifl_rdma_notification note = { rifl_rdma_gva_word(2, mr[1].va + BYTES), 0xC0FFEE, 42 };
    int rc = rifl_rdma_post_write(node[0], 7, mr[0].va, 2, mr[1].va, BYTES, 0, &note, 1, 0);
    if (rc != RIFL_OK) {
        fprintf(stderr, "post_write: %s\n", rifl_rdma_strerror(rc));
        return 1;
    }

    /* the loop a network would run: bundles out of one engine into the other */
    static uint8_t bundle[RIFL_RDMA_BUNDLE_CAP];
    rifl_rdma_wc wc;
    uint64_t now = 0;
    int done = 0;
    while (!done && now < 10000000) {
        now += 1000;
        for (int i = 0; i < 2; i++) {
            rifl_rdma_route to;
            size_t len;
            while ((len = rifl_rdma_output(node[i], now, true, bundle, sizeof bundle, &to)))
                rifl_rdma_input(node[to.node - 1], now, bundle, len,
                                (rifl_rdma_route){ (uint32_t)i + 1, to.route });
            if (rifl_rdma_next_due(node[i]) <= now)
                rifl_rdma_advance(node[i], now);
        }
        done = rifl_rdma_poll_cq(node[0], &wc, 1);
    }
    int ok = done && wc.status == RIFL_OK && memcmp(mem[0], mem[1], BYTES) == 0 &&
             mem[1][BYTES + 31] == 1;
    printf("write of %d bytes: %s after %llu us; data %s; notification record %s; "
           "%llu packets in %llu bundles\n",
           BYTES, done ? rifl_rdma_strerror(wc.status) : "not completed",
           (unsigned long long)(now / 1000), memcmp(mem[0], mem[1], BYTES) ? "differs" : "equal",
           mem[1][BYTES + 31] == 1 ? "written" : "missing",
           (unsigned long long)rifl_rdma_get_stats(node[0])->tx_packets,
           (unsigned long long)rifl_rdma_get_stats(node[0])->bundles_tx);
    rifl_rdma_close(node[0]);
    rifl_rdma_close(node[1]);
    return ok ? 0 : 1;
}

/* Fuzz the topology parser and the route computation: any text either
 * parses or fails with a message; every route found must forward correctly
 * hop by hop and reverse to the route computed the other way. */
#include <stdint.h>
#include <string.h>

#include "rifl/l2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rifl_topology *t = NULL;
    char err[256];
    err[0] = '\0';
    int rc = rifl_topo_parse((const char *)data, size, &t, err, sizeof err);
    if (rc != RIFL_OK) {
        if (t || err[0] == '\0')
            __builtin_trap(); /* failures carry a message and no result */
        return 0;
    }
    /* routes between the first few hosts */
    unsigned hosts[8], nh = 0;
    for (unsigned i = 0; i < t->nnodes && nh < 8; i++)
        if (!t->nodes[i].is_switch)
            hosts[nh++] = i;
    for (unsigned a = 0; a < nh; a++)
        for (unsigned b = 0; b < nh; b++) {
            if (a == b)
                continue;
            rifl_topo_route r;
            rc = rifl_topo_route_hosts(t, hosts[a], hosts[b], &r, err, sizeof err);
            if (rc != RIFL_OK) {
                if (rc != RIFL_ERR_UNREACHABLE || err[0] == '\0')
                    __builtin_trap();
                continue;
            }
            if (r.hops < 1 || r.hops > RIFL_L2_MAX_HOPS)
                __builtin_trap();
            rifl_l2_hdr h;
            rifl_l2_hdr_make(&h, r.rel, r.hops);
            for (unsigned k = 0; k < r.hops; k++) {
                unsigned o;
                const rifl_topo_node *sw = &t->nodes[r.sw[k]];
                if (rifl_l2_forward(sw->nports, r.in_port[k], &h, &o) != RIFL_L2_FWD_UNICAST ||
                    o != r.out_port[k])
                    __builtin_trap();
                rifl_l2_hdr_advance(&h, r.in_port[k], o);
            }
            uint8_t back[RIFL_L2_MAX_HOPS];
            unsigned hops;
            if (rifl_l2_reverse_route(&h, back, &hops) != RIFL_OK || hops != r.hops)
                __builtin_trap();
        }
    rifl_topo_free(t);
    return 0;
}

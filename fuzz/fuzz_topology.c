/* Fuzz the topology parser, the generators and the route computation: any
 * text either parses or fails with a message (as a generator's name too,
 * when short); a link's own settings are in range, or not given, and its
 * cable and transceivers the same at both ends; every route found must forward correctly hop by hop and
 * reverse to the route computed the other way, and every shortest route
 * listed must be as long and forward as well, the first the route found. */
#include <stdint.h>
#include <string.h>

#include "rifl/l2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A route's header walked through the topology by the forwarding rule. */
static void walk(const rifl_topology *t, const rifl_topo_route *r)
{
    rifl_l2_hdr h;
    if (rifl_l2_hdr_make(&h, r->rel, r->hops) != RIFL_OK)
        __builtin_trap();
    for (unsigned k = 0; k < r->hops; k++) {
        unsigned o;
        const rifl_topo_node *sw = &t->nodes[r->sw[k]];
        if (rifl_l2_forward(sw->nports, r->in_port[k], &h, &o) != RIFL_L2_FWD_UNICAST ||
            o != r->out_port[k] ||
            (k + 1 < r->hops && (sw->peer[o] != r->sw[k + 1] ||
                                 sw->peer_port[o] != r->in_port[k + 1])))
            __builtin_trap();
        rifl_l2_hdr_advance(&h, r->in_port[k], o);
    }
}

static void generator(const uint8_t *data, size_t size)
{
    char spec[32];
    memcpy(spec, data, size);
    spec[size] = '\0';
    rifl_topology *t = NULL;
    char err[256] = "";
    int rc = rifl_topo_generate(spec, &t, err, sizeof err);
    if (rc == RIFL_OK ? (!t || !t->nhosts) : (t || !err[0]))
        __builtin_trap();
    rifl_topo_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 24)
        generator(data, size);
    rifl_topology *t = NULL;
    char err[256];
    err[0] = '\0';
    int rc = rifl_topo_parse((const char *)data, size, &t, err, sizeof err);
    if (rc != RIFL_OK) {
        if (t || err[0] == '\0')
            __builtin_trap(); /* failures carry a message and no result */
        return 0;
    }
    /* each linked port's settings */
    for (unsigned v = 0; v < t->nnodes; v++)
        for (unsigned p = 0; p < t->nodes[v].nports; p++) {
            const rifl_topo_node *nd = &t->nodes[v];
            const rifl_topo_link_attr *a = &nd->attr[p];
            if (!(a->cable_m == -1 || (a->cable_m >= 0 && a->cable_m <= RIFL_TOPO_MAX_CABLE_M)) ||
                !(a->transceiver_ns == -1 ||
                  (a->transceiver_ns >= 0 && a->transceiver_ns <= RIFL_TOPO_MAX_TRANSCEIVER_NS)) ||
                !(a->tx_ber == -1 || (a->tx_ber >= 0 && a->tx_ber < RIFL_TOPO_MAX_BER)) ||
                !(a->rate_gbps == -1 ||
                  (a->rate_gbps >= 1 && a->rate_gbps <= RIFL_TOPO_MAX_RATE_GBPS)) ||
                a->lanes < 0 || a->lanes > RIFL_TOPO_MAX_LANES || (a->lanes & (a->lanes - 1)))
                __builtin_trap();
            if (nd->peer[p] < 0)
                continue;
            const rifl_topo_link_attr *b = &t->nodes[nd->peer[p]].attr[nd->peer_port[p]];
            if (a->cable_m != b->cable_m || a->transceiver_ns != b->transceiver_ns ||
                a->rate_gbps != b->rate_gbps || a->lanes != b->lanes)
                __builtin_trap();
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
            rifl_topo_route all[8];
            unsigned n = 0;
            if (rifl_topo_routes_hosts(t, hosts[a], hosts[b], all, 8, &n, err, sizeof err) !=
                    RIFL_OK ||
                n < 1 || all[0].hops != r.hops ||
                memcmp(all[0].out_port, r.out_port, sizeof r.out_port))
                __builtin_trap();
            for (unsigned i = 0; i < n; i++) {
                if (all[i].hops != r.hops)
                    __builtin_trap();
                walk(t, &all[i]);
            }
        }
    rifl_topo_free(t);
    return 0;
}

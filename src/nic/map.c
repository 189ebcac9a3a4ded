/* The NIC's central map: every host's shortest routes to every other host,
 * computed once from the topology. */
#include <stdlib.h>
#include <string.h>

#include "nic_priv.h"

void rifl_nic_map_free(rifl_nic_map *m)
{
    if (!m)
        return;
    free(m->host_node);
    free(m->node_host);
    free(m->routes);
    free(m->count);
    free(m);
}

/* The arrays rifl_nic_map_create allocates, in elements: its own and,
 * while it works, one destination's routes from every node.  The routes
 * grow as hosts^2 x max_paths; rifl_nic_map_memory counts by these so an
 * estimate is what the map then takes. */
struct map_sizes {
    size_t host_node, node_host, routes, count; /* the map's */
    size_t tmp, cnt;                            /* while it is built */
};

static struct map_sizes map_sizes(unsigned nodes, unsigned hosts, unsigned max_paths)
{
    size_t H = hosts;
    return (struct map_sizes){ .host_node = H, .node_host = nodes,
                               .routes = H * H * max_paths, .count = H * H,
                               .tmp = (size_t)nodes * max_paths, .cnt = nodes };
}

uint64_t rifl_nic_map_memory(const rifl_topology *t, unsigned max_paths)
{
    if (!t)
        return 0;
    struct map_sizes z = map_sizes(t->nnodes, t->nhosts, max_paths);
    return sizeof(rifl_nic_map) + (uint64_t)z.host_node * sizeof(unsigned) +
           (uint64_t)z.node_host * sizeof(int) + (uint64_t)z.routes * sizeof(rifl_nic_route) +
           (uint64_t)z.count * sizeof(uint8_t) + (uint64_t)z.tmp * sizeof(rifl_topo_route) +
           (uint64_t)z.cnt * sizeof(unsigned);
}

int rifl_nic_map_create(const rifl_topology *t, unsigned max_paths, rifl_nic_map **out,
                        char *msg, size_t msglen)
{
    if (!out || !t) {
        rifl_msg(msg, msglen, "rifl_nic_map_create: %s is NULL", !out ? "out" : "topo");
        return RIFL_ERR_INVALID_ARG;
    }
    *out = NULL;
    if (max_paths < 1 || max_paths > RIFL_NIC_MAX_PATHS) {
        rifl_msg(msg, msglen, "max_paths = %u: give 1 to %u routes per destination",
                 max_paths, RIFL_NIC_MAX_PATHS);
        return RIFL_ERR_CONFIG;
    }
    if (t->nhosts < 2) {
        rifl_msg(msg, msglen, "the topology has %u host%s: a network needs two or more",
                 t->nhosts, t->nhosts == 1 ? "" : "s");
        return RIFL_ERR_CONFIG;
    }
    rifl_nic_map *m = calloc(1, sizeof *m);
    if (!m)
        return RIFL_ERR_NOMEM;
    m->topo = t;
    m->hosts = t->nhosts;
    m->paths = max_paths;
    size_t H = m->hosts;
    struct map_sizes z = map_sizes(t->nnodes, m->hosts, max_paths);
    m->host_node = calloc(z.host_node, sizeof *m->host_node);
    m->node_host = calloc(z.node_host, sizeof *m->node_host);
    m->routes = calloc(z.routes, sizeof *m->routes);
    m->count = calloc(z.count, sizeof *m->count);
    /* every source's routes to one destination at a time */
    rifl_topo_route *tmp = calloc(z.tmp, sizeof *tmp);
    unsigned *cnt = calloc(z.cnt, sizeof *cnt);
    if (!m->host_node || !m->node_host || !m->routes || !m->count || !tmp || !cnt) {
        free(tmp);
        free(cnt);
        rifl_nic_map_free(m);
        return RIFL_ERR_NOMEM;
    }
    unsigned h = 0;
    for (unsigned n = 0; n < t->nnodes; n++) {
        m->node_host[n] = -1;
        if (!t->nodes[n].is_switch) {
            m->node_host[n] = (int)h;
            m->host_node[h++] = n;
        }
    }
    for (unsigned d = 0; d < H; d++) {
        char err[256] = "";
        int rc = rifl_topo_routes_to(t, m->host_node[d], tmp, max_paths, cnt, err, sizeof err);
        for (unsigned s = 0; s < H && rc == RIFL_OK; s++)
            if (s != d && cnt[m->host_node[s]] == 0)
                rc = RIFL_ERR_UNREACHABLE;
        if (rc != RIFL_OK) {
            rifl_msg(msg, msglen, "no route to %s: %s", t->nodes[m->host_node[d]].name,
                     rc == RIFL_ERR_UNREACHABLE && !err[0] ? "none found" : err);
            free(tmp);
            free(cnt);
            rifl_nic_map_free(m);
            return rc == RIFL_ERR_NOMEM ? rc : RIFL_ERR_CONFIG;
        }
        for (unsigned s = 0; s < H; s++) {
            if (s == d)
                continue;
            unsigned c = cnt[m->host_node[s]];
            const rifl_topo_route *from = tmp + (size_t)m->host_node[s] * max_paths;
            rifl_nic_route *r = m->routes + ((size_t)s * H + d) * max_paths;
            for (unsigned k = 0; k < c; k++) {
                memcpy(r[k].rel, from[k].rel, RIFL_L2_MAX_HOPS);
                r[k].hops = (uint8_t)from[k].hops;
                r[k].voq = (uint8_t)from[k].out_port[0];
            }
            m->count[(size_t)s * H + d] = (uint8_t)c;
        }
    }
    free(cnt);
    free(tmp);
    *out = m;
    return RIFL_OK;
}

unsigned rifl_nic_map_hosts(const rifl_nic_map *m) { return m ? m->hosts : 0; }
unsigned rifl_nic_map_max_paths(const rifl_nic_map *m) { return m ? m->paths : 0; }

int rifl_nic_map_node(const rifl_nic_map *m, unsigned host)
{
    return m && host < m->hosts ? (int)m->host_node[host] : -1;
}

int rifl_nic_map_host_of(const rifl_nic_map *m, unsigned node)
{
    return m && node < m->topo->nnodes ? m->node_host[node] : -1;
}

const rifl_nic_route *rifl_nic_map_routes(const rifl_nic_map *m, unsigned src, unsigned dst,
                                          unsigned *count)
{
    if (count)
        *count = 0;
    if (!m || src >= m->hosts || dst >= m->hosts || src == dst)
        return NULL;
    size_t pair = (size_t)src * m->hosts + dst;
    if (count)
        *count = m->count[pair];
    return m->routes + pair * m->paths;
}

int rifl_nic_map_follow(const rifl_nic_map *m, unsigned from, const uint8_t *route,
                        unsigned hops)
{
    if (!m || from >= m->hosts || !route)
        return -1;
    int node = rifl_topo_follow(m->topo, m->host_node[from], route, hops);
    return node < 0 ? -1 : m->node_host[node];
}

/* Topology files (hosts, switches, links between numbered ports) and
 * shortest source routes between hosts. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/l2.h"


void rifl_topo_free(rifl_topology *t)
{
    if (!t)
        return;
    for (unsigned i = 0; i < t->nnodes; i++) {
        free(t->nodes[i].peer);
        free(t->nodes[i].peer_port);
        free(t->nodes[i].delay);
        free(t->nodes[i].attr);
    }
    free(t->nodes);
    free(t);
}

int rifl_topo_find(const rifl_topology *t, const char *name)
{
    for (unsigned i = 0; t && name && i < t->nnodes; i++)
        if (!strcmp(t->nodes[i].name, name))
            return (int)i;
    return -1;
}

static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= RIFL_TOPO_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!isalnum(c) && c != '_' && c != '.' && c != '-')
            return 0;
    }
    return 1;
}

/* strict unsigned decimal in [lo, hi] */
static int parse_num(const char *s, unsigned long lo, unsigned long hi, unsigned *out)
{
    if (!*s || strlen(s) > 9)
        return -1;
    unsigned long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (unsigned long)(*p - '0');
    }
    if (v < lo || v > hi)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* strict decimal number (digits, '.', an exponent) in [lo, hi], or below
 * hi when hi_open */
static int parse_real(const char *s, double lo, double hi, bool hi_open, double *out)
{
    if (!*s || strlen(s) > 24 || strspn(s, "0123456789.eE+-") != strlen(s))
        return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !(v >= lo) || !(hi_open ? v < hi : v <= hi))
        return -1;
    *out = v;
    return 0;
}

static int add_node(rifl_topology *t, const char *name, bool sw, unsigned nports,
                    unsigned *cap)
{
    if (t->nnodes == *cap) {
        unsigned nc = *cap ? *cap * 2 : 16;
        rifl_topo_node *nn = realloc(t->nodes, nc * sizeof *nn);
        if (!nn)
            return RIFL_ERR_NOMEM;
        t->nodes = nn;
        *cap = nc;
    }
    rifl_topo_node *n = &t->nodes[t->nnodes];
    memset(n, 0, sizeof *n);
    snprintf(n->name, sizeof n->name, "%s", name);
    n->is_switch = sw;
    n->nports = nports;
    n->peer = malloc(nports * sizeof *n->peer);
    n->peer_port = calloc(nports, sizeof *n->peer_port);
    n->delay = calloc(nports, sizeof *n->delay);
    n->attr = malloc(nports * sizeof *n->attr);
    if (!n->peer || !n->peer_port || !n->delay || !n->attr) {
        free(n->peer);
        free(n->peer_port);
        free(n->delay);
        free(n->attr);
        return RIFL_ERR_NOMEM;
    }
    for (unsigned p = 0; p < nports; p++) {
        n->peer[p] = -1;
        n->attr[p] = (rifl_topo_link_attr){ -1, -1, -1, -1, 0 };
    }
    t->nnodes++;
    if (sw)
        t->nswitches++;
    else
        t->nhosts++;
    return RIFL_OK;
}

/* "name" or "name:port" -> node and port; message on failure */
static int parse_end(const rifl_topology *t, char *tok, int *node, unsigned *port,
                     unsigned line, char *err, size_t errlen)
{
    char *colon = strchr(tok, ':');
    if (colon)
        *colon = '\0';
    int n = rifl_topo_find(t, tok);
    if (n < 0) {
        rifl_msg(err, errlen, "line %u: unknown node '%s'; declare it with 'switch' or "
               "'host' before the link", line, tok);
        return RIFL_ERR_PARSE;
    }
    const rifl_topo_node *nd = &t->nodes[n];
    if (!nd->is_switch) {
        if (colon && strcmp(colon + 1, "0")) {
            rifl_msg(err, errlen, "line %u: host '%s' has a single port; write '%s' or '%s:0'",
                   line, tok, tok, tok);
            return RIFL_ERR_PARSE;
        }
        *port = 0;
    } else {
        if (!colon) {
            rifl_msg(err, errlen, "line %u: switch end '%s' needs a port: write '%s:PORT' "
                   "with PORT from 0 to %u", line, tok, tok, nd->nports - 1);
            return RIFL_ERR_PARSE;
        }
        if (parse_num(colon + 1, 0, nd->nports - 1, port)) {
            rifl_msg(err, errlen, "line %u: bad port '%s' on switch '%s'; use 0 to %u",
                   line, colon + 1, tok, nd->nports - 1);
            return RIFL_ERR_PARSE;
        }
    }
    if (nd->peer[*port] >= 0) {
        rifl_msg(err, errlen, "line %u: port %u of '%s' is already linked to '%s'; "
               "each port takes one link", line, *port, tok,
               t->nodes[nd->peer[*port]].name);
        return RIFL_ERR_PARSE;
    }
    *node = n;
    return RIFL_OK;
}

/* Copy the line starting at *pos into buf (size bufsize) and move *pos past
 * it; refuses lines that are too long or hold a NUL byte. */
static int read_line(const char *text, size_t len, size_t *pos, unsigned line, char *buf,
                     size_t bufsize, char *err, size_t errlen)
{
    size_t end = *pos;
    while (end < len && text[end] != '\n')
        end++;
    size_t n = end - *pos;
    if (n >= bufsize) {
        rifl_msg(err, errlen, "line %u: line longer than %zu characters; split it",
               line, bufsize - 1);
        return RIFL_ERR_PARSE;
    }
    if (memchr(text + *pos, '\0', n)) {
        rifl_msg(err, errlen, "line %u: NUL byte in the text; topology files are plain text",
               line);
        return RIFL_ERR_PARSE;
    }
    memcpy(buf, text + *pos, n);
    buf[n] = '\0';
    *pos = end + 1;
    return RIFL_OK;
}

#define MAX_WORDS 19 /* 'link A B' and eight settings with their values */

/* Cut a comment off buf and split the rest into words; returns the number
 * of words, or MAX_WORDS + 1 when there are more. */
static int split_words(char *buf, char *tok[MAX_WORDS])
{
    char *hash = strchr(buf, '#');
    if (hash)
        *hash = '\0';
    int nt = 0;
    char *save = NULL;
    for (char *p = strtok_r(buf, " \t\r\v\f", &save); p;
         p = strtok_r(NULL, " \t\r\v\f", &save)) {
        if (nt == MAX_WORDS) {
            nt = MAX_WORDS + 1;
            break;
        }
        tok[nt++] = p;
    }
    return nt;
}

/* A 'switch NAME PORTS' or 'host NAME' statement. */
static int parse_node(rifl_topology *t, char **tok, int nt, unsigned line, unsigned *cap,
                      char *err, size_t errlen)
{
    bool sw = tok[0][0] == 's';
    unsigned nports = 1;
    int rc = RIFL_OK;
    if (nt != (sw ? 3 : 2)) {
        rifl_msg(err, errlen, "line %u: expected '%s'", line,
               sw ? "switch NAME PORTS" : "host NAME");
        rc = RIFL_ERR_PARSE;
    } else if (!valid_name(tok[1])) {
        rifl_msg(err, errlen, "line %u: bad name '%s'; use 1 to %d characters "
               "from A-Z a-z 0-9 _ . -", line, tok[1], RIFL_TOPO_NAME_MAX - 1);
        rc = RIFL_ERR_PARSE;
    } else if (rifl_topo_find(t, tok[1]) >= 0) {
        rifl_msg(err, errlen, "line %u: '%s' is declared twice; give each node "
               "its own name", line, tok[1]);
        rc = RIFL_ERR_PARSE;
    } else if (sw && parse_num(tok[2], 2, RIFL_L2_MAX_PORTS, &nports)) {
        rifl_msg(err, errlen, "line %u: bad port count '%s' for switch '%s'; use "
               "2 to %d", line, tok[2], tok[1], RIFL_L2_MAX_PORTS);
        rc = RIFL_ERR_PARSE;
    } else if (t->nnodes >= RIFL_TOPO_MAX_NODES) {
        rifl_msg(err, errlen, "line %u: more than %d nodes; split the topology",
               line, RIFL_TOPO_MAX_NODES);
        rc = RIFL_ERR_PARSE;
    } else {
        rc = add_node(t, tok[1], sw, nports, cap);
        if (rc)
            rifl_msg(err, errlen, "line %u: out of memory", line);
    }
    return rc;
}

/* The settings a link statement takes after its ends. */
enum { LK_DELAY, LK_CABLE, LK_TRANSCEIVER, LK_RATE, LK_LANES, LK_BER, LK_BER_AB, LK_BER_BA,
       LK_COUNT };
static const char *const link_keys[LK_COUNT] = { "delay", "cable", "transceiver", "rate",
                                                  "lanes", "ber", "ber-ab", "ber-ba" };

/* The settings after a link's ends: `tok` holds n words, key and value in
 * turn; given[k] says which came, v[k] their values. */
static int parse_link_settings(char **tok, int n, unsigned line, bool given[LK_COUNT],
                               double v[LK_COUNT], char *err, size_t errlen)
{
    for (int i = 0; i < n; i += 2) {
        int k = 0;
        while (k < LK_COUNT && strcmp(tok[i], link_keys[k]))
            k++;
        if (k == LK_COUNT) {
            rifl_msg(err, errlen, "line %u: unknown link setting '%.40s'; use delay, cable, "
                     "transceiver, rate, lanes, ber, ber-ab or ber-ba", line, tok[i]);
            return RIFL_ERR_PARSE;
        }
        if (i + 1 == n) {
            rifl_msg(err, errlen, "line %u: '%s' needs a value, e.g. '%s %s'", line, tok[i],
                     tok[i], k == LK_DELAY ? "8" : k == LK_CABLE ? "2" :
                     k == LK_TRANSCEIVER ? "80" : k == LK_RATE ? "100" : k == LK_LANES ? "4"
                                                                                    : "1e-9");
            return RIFL_ERR_PARSE;
        }
        if (given[k] || (k == LK_BER && (given[LK_BER_AB] || given[LK_BER_BA])) ||
            (k >= LK_BER_AB && given[LK_BER])) {
            rifl_msg(err, errlen, "line %u: '%s' given twice (or with 'ber'); give each of "
                     "a link's settings once, 'ber' or 'ber-ab'/'ber-ba'", line, tok[i]);
            return RIFL_ERR_PARSE;
        }
        const char *val = tok[i + 1];
        unsigned u = 0;
        bool bad;
        if (k == LK_DELAY) {
            bad = parse_num(val, 0, 100000, &u) != 0;
            v[k] = u;
        } else if (k == LK_CABLE) {
            bad = parse_real(val, 0, RIFL_TOPO_MAX_CABLE_M, false, &v[k]) != 0;
        } else if (k == LK_TRANSCEIVER) {
            bad = parse_real(val, 0, RIFL_TOPO_MAX_TRANSCEIVER_NS, false, &v[k]) != 0;
        } else if (k == LK_RATE) {
            bad = parse_real(val, 1, RIFL_TOPO_MAX_RATE_GBPS, false, &v[k]) != 0;
        } else if (k == LK_LANES) {
            bad = parse_num(val, 1, RIFL_TOPO_MAX_LANES, &u) != 0 || (u & (u - 1));
            v[k] = u;
        } else {
            bad = parse_real(val, 0, RIFL_TOPO_MAX_BER, true, &v[k]) != 0;
        }
        if (bad) {
            if (k == LK_DELAY)
                rifl_msg(err, errlen, "line %u: bad delay '%s'; use 0 to 100000 cell slots",
                         line, val);
            else if (k == LK_CABLE)
                rifl_msg(err, errlen, "line %u: bad cable length '%s'; use 0 to %g metres",
                         line, val, RIFL_TOPO_MAX_CABLE_M);
            else if (k == LK_TRANSCEIVER)
                rifl_msg(err, errlen, "line %u: bad transceiver latency '%s'; use 0 to %g ns",
                         line, val, RIFL_TOPO_MAX_TRANSCEIVER_NS);
            else if (k == LK_RATE)
                rifl_msg(err, errlen, "line %u: bad rate '%s'; use 1 to %g Gbit/s", line, val,
                         RIFL_TOPO_MAX_RATE_GBPS);
            else if (k == LK_LANES)
                rifl_msg(err, errlen, "line %u: bad lane count '%s'; use 1, 2, 4, 8 or 16 "
                         "(more than 1: a bonded link)", line, val);
            else
                rifl_msg(err, errlen, "line %u: bad bit error rate '%s' for '%s'; use 0 up to "
                         "(not including) %g, e.g. 1e-9", line, val, tok[i], RIFL_TOPO_MAX_BER);
            return RIFL_ERR_PARSE;
        }
        given[k] = true;
    }
    return RIFL_OK;
}

/* A 'link A[:PORT] B[:PORT] [SETTING VALUE]...' statement. */
static int parse_link(rifl_topology *t, char **tok, int nt, unsigned line, char *err,
                      size_t errlen)
{
    bool given[LK_COUNT] = { false };
    double v[LK_COUNT] = { 0 };
    int na = -1, nb = -1;
    unsigned pa = 0, pb = 0;
    int rc = RIFL_OK;
    if (nt < 3) {
        rifl_msg(err, errlen, "line %u: expected 'link A[:PORT] B[:PORT] "
               "[delay SLOTS] [cable M] [transceiver NS] [rate GBPS] [lanes N] [ber X]'", line);
        rc = RIFL_ERR_PARSE;
    } else if ((rc = parse_link_settings(tok + 3, nt - 3, line, given, v, err, errlen)) ==
                   RIFL_OK &&
               (rc = parse_end(t, tok[1], &na, &pa, line, err, errlen)) == RIFL_OK &&
               (rc = parse_end(t, tok[2], &nb, &pb, line, err, errlen)) == RIFL_OK) {
        rifl_topo_node *A = &t->nodes[na], *B = &t->nodes[nb];
        if (na == nb) {
            rifl_msg(err, errlen, "line %u: link from '%s' to itself; connect two "
                   "different nodes", line, A->name);
            rc = RIFL_ERR_PARSE;
        } else if (!A->is_switch && !B->is_switch) {
            rifl_msg(err, errlen, "line %u: link between two hosts ('%s', '%s'); "
                   "hosts connect to switches", line, A->name, B->name);
            rc = RIFL_ERR_PARSE;
        } else {
            unsigned delay = given[LK_DELAY] ? (unsigned)v[LK_DELAY] : RIFL_TOPO_DEFAULT_DELAY;
            rifl_topo_link_attr at = {
                given[LK_CABLE] ? v[LK_CABLE] : -1,
                given[LK_TRANSCEIVER] ? v[LK_TRANSCEIVER] : -1,
                given[LK_BER] ? v[LK_BER] : given[LK_BER_AB] ? v[LK_BER_AB] : -1,
                given[LK_RATE] ? v[LK_RATE] : -1,
                given[LK_LANES] ? (int)v[LK_LANES] : 0,
            };
            rifl_topo_link_attr bt = at;
            bt.tx_ber = given[LK_BER] ? v[LK_BER] : given[LK_BER_BA] ? v[LK_BER_BA] : -1;
            A->peer[pa] = nb;
            A->peer_port[pa] = pb;
            A->delay[pa] = delay;
            A->attr[pa] = at;
            B->peer[pb] = na;
            B->peer_port[pb] = pa;
            B->delay[pb] = delay;
            B->attr[pb] = bt;
            t->nlinks++;
        }
    }
    return rc;
}

int rifl_topo_parse(const char *text, size_t len, rifl_topology **out, char *err,
                    size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!out || (!text && len))
        return RIFL_ERR_INVALID_ARG;
    *out = NULL;
    rifl_topology *t = calloc(1, sizeof *t);
    if (!t)
        return RIFL_ERR_NOMEM;
    unsigned cap = 0, line = 0;
    int rc = RIFL_OK;
    size_t pos = 0;
    char buf[1024];
    while (pos < len && rc == RIFL_OK) {
        line++;
        rc = read_line(text, len, &pos, line, buf, sizeof buf, err, errlen);
        if (rc != RIFL_OK)
            break;
        char *tok[MAX_WORDS];
        int nt = split_words(buf, tok);
        if (nt == 0)
            continue;
        if (nt > MAX_WORDS) {
            rifl_msg(err, errlen, "line %u: too many words; a link takes each of its eight "
                   "settings at most once", line);
            rc = RIFL_ERR_PARSE;
        } else if (!strcmp(tok[0], "switch") || !strcmp(tok[0], "host")) {
            rc = parse_node(t, tok, nt, line, &cap, err, errlen);
        } else if (!strcmp(tok[0], "link")) {
            rc = parse_link(t, tok, nt, line, err, errlen);
        } else {
            rifl_msg(err, errlen, "line %u: unknown statement '%.40s'; use 'switch', "
                   "'host' or 'link'", line, tok[0]);
            rc = RIFL_ERR_PARSE;
        }
    }
    if (rc == RIFL_OK && t->nhosts == 0) {
        rifl_msg(err, errlen, "line %u: no host declared; add 'host NAME' lines", line);
        rc = RIFL_ERR_PARSE;
    }
    if (rc != RIFL_OK) {
        rifl_topo_free(t);
        return rc;
    }
    *out = t;
    return RIFL_OK;
}

int rifl_topo_route_hosts(const rifl_topology *t, unsigned src, unsigned dst,
                          rifl_topo_route *route, char *err, size_t errlen)
{
    if (!t || !route || src >= t->nnodes || dst >= t->nnodes || src == dst ||
        t->nodes[src].is_switch || t->nodes[dst].is_switch) {
        rifl_msg(err, errlen, "route: source and destination must be two different hosts");
        return RIFL_ERR_INVALID_ARG;
    }
    const rifl_topo_node *S = &t->nodes[src], *D = &t->nodes[dst];
    if (S->peer[0] < 0 || D->peer[0] < 0) {
        rifl_msg(err, errlen, "no route from '%s' to '%s': host '%s' is not linked to any "
               "switch; add a link", S->name, D->name, S->peer[0] < 0 ? S->name : D->name);
        return RIFL_ERR_UNREACHABLE;
    }
    unsigned n = t->nnodes;
    int *dist = malloc(n * sizeof *dist);
    int *prev = malloc(n * sizeof *prev);
    unsigned *inp = malloc(n * sizeof *inp);
    unsigned *queue = malloc(n * sizeof *queue);
    if (!dist || !prev || !inp || !queue) {
        free(dist); free(prev); free(inp); free(queue);
        rifl_msg(err, errlen, "route: out of memory");
        return RIFL_ERR_NOMEM;
    }
    for (unsigned i = 0; i < n; i++)
        dist[i] = -1;
    unsigned qh = 0, qt = 0;
    unsigned first = (unsigned)S->peer[0];
    dist[first] = 0;
    prev[first] = -1;
    inp[first] = S->peer_port[0];
    queue[qt++] = first;
    while (qh < qt) {
        unsigned u = queue[qh++];
        const rifl_topo_node *U = &t->nodes[u];
        for (unsigned p = 0; p < U->nports; p++) {
            int v = U->peer[p];
            if (v < 0 || !t->nodes[v].is_switch || dist[v] >= 0)
                continue;
            dist[v] = dist[u] + 1;
            prev[v] = (int)u;
            inp[v] = U->peer_port[p];
            queue[qt++] = (unsigned)v;
        }
    }
    unsigned last = (unsigned)D->peer[0];
    int rc = RIFL_OK;
    if (dist[last] < 0) {
        rifl_msg(err, errlen, "no route from '%s' to '%s': they are in disconnected parts "
               "of the topology; add a link between them", S->name, D->name);
        rc = RIFL_ERR_UNREACHABLE;
    } else if (dist[last] + 1 > RIFL_L2_MAX_HOPS) {
        rifl_msg(err, errlen, "no route from '%s' to '%s': the shortest path crosses %d "
               "switches and a Layer 2 header holds at most %d hops; add a shorter path",
               S->name, D->name, dist[last] + 1, RIFL_L2_MAX_HOPS);
        rc = RIFL_ERR_UNREACHABLE;
    } else {
        unsigned hops = (unsigned)dist[last] + 1;
        route->hops = hops;
        unsigned out_port = D->peer_port[0];
        unsigned u = last;
        for (int k = (int)hops - 1; k >= 0; k--) {
            const rifl_topo_node *U = &t->nodes[u];
            route->sw[k] = (int)u;
            route->in_port[k] = inp[u];
            route->out_port[k] = out_port;
            route->rel[k] = (uint8_t)rifl_l2_rel_port(U->nports, inp[u], out_port);
            if (prev[u] >= 0) {
                /* output port on prev that leads to u = peer of u's input port */
                out_port = U->peer_port[inp[u]];
                u = (unsigned)prev[u];
            }
        }
        for (unsigned k = hops; k < RIFL_L2_MAX_HOPS; k++) {
            route->rel[k] = 0;
            route->sw[k] = -1;
            route->in_port[k] = route->out_port[k] = 0;
        }
    }
    free(dist); free(prev); free(inp); free(queue);
    return rc;
}

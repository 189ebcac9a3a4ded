/* VL arbiter: VL15 first; then high- and low-priority weighted round-robin
 * tables of (VL, weight) entries, with a limit on how much high-priority
 * traffic may pass while a low-priority packet waits. */
#include "rifl/credit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rifl_vlarb_parse_table(const char *s, rifl_vlarb_entry *out, unsigned *n,
                           char *msg, size_t msglen)
{
    if (!out || !n) {
        if (msg && msglen)
            snprintf(msg, msglen, "arbitration table: no place for the entries given");
        return RIFL_ERR_INVALID_ARG;
    }
    unsigned k = 0;
    const char *p = s ? s : "";
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        if (!*p)
            break;
        char *end;
        long vl = strtol(p, &end, 10);
        if (end == p || *end != ':') {
            if (msg)
                snprintf(msg, msglen, "arbitration table '%s': expected VL:WEIGHT pairs"
                         " separated by commas, e.g. 0:32,1:16", s);
            return RIFL_ERR_PARSE;
        }
        p = end + 1;
        long w = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',' && *end != ' ')) {
            if (msg)
                snprintf(msg, msglen, "arbitration table '%s': weight after '%ld:' is not"
                         " a number; write e.g. %ld:16", s, vl, vl);
            return RIFL_ERR_PARSE;
        }
        p = end;
        if (vl < 0 || vl >= (long)RIFL_FC_MAX_DATA_VLS || w < 0 || w > 255) {
            if (msg)
                snprintf(msg, msglen, "arbitration table '%s': entry %ld:%ld out of range;"
                         " VLs are 0..14 and weights 0..255", s, vl, w);
            return RIFL_ERR_PARSE;
        }
        if (k >= RIFL_VLARB_MAX_ENTRIES) {
            if (msg)
                snprintf(msg, msglen, "arbitration table '%s' has more than %u entries",
                         s, RIFL_VLARB_MAX_ENTRIES);
            return RIFL_ERR_PARSE;
        }
        out[k].vl = (uint8_t)vl;
        out[k].weight = (uint8_t)w;
        k++;
    }
    *n = k;
    return RIFL_OK;
}

void rifl_vlarb_default_config(rifl_vlarb_config *cfg, unsigned n_vls)
{
    memset(cfg, 0, sizeof *cfg);
    if (n_vls > RIFL_FC_MAX_DATA_VLS)
        n_vls = RIFL_FC_MAX_DATA_VLS;
    for (unsigned v = 0; v < n_vls; v++) {
        cfg->low[v].vl = (uint8_t)v;
        cfg->low[v].weight = 16;
    }
    cfg->n_low = n_vls;
    cfg->high_limit = RIFL_VLARB_UNLIMITED;
}

static int check_table(const rifl_vlarb_entry *t, unsigned n, unsigned n_vls,
                       const char *name, char *msg, size_t msglen)
{
    if (n > RIFL_VLARB_MAX_ENTRIES) {
        if (msg)
            snprintf(msg, msglen, "%s-priority table has %u entries; at most %u",
                     name, n, RIFL_VLARB_MAX_ENTRIES);
        return RIFL_ERR_CONFIG;
    }
    for (unsigned i = 0; i < n; i++)
        if (t[i].vl >= n_vls) {
            if (msg)
                snprintf(msg, msglen, "%s-priority table entry %u names VL%u but the link"
                         " has %u data VLs (0..%u); remove the entry or add VLs",
                         name, i, t[i].vl, n_vls, n_vls - 1);
            return RIFL_ERR_CONFIG;
        }
    return RIFL_OK;
}

int rifl_vlarb_init(rifl_vlarb *arb, const rifl_vlarb_config *cfg, unsigned n_vls,
                    char *msg, size_t msglen)
{
    if (!arb || !cfg)
        return RIFL_ERR_INVALID_ARG;
    if (n_vls < 1 || n_vls > RIFL_FC_VL15) {
        if (msg)
            snprintf(msg, msglen, "%u data VLs: a link has 1 to %u (VL0..VL14; VL15 is "
                     "management and needs no table)", n_vls, (unsigned)RIFL_FC_VL15);
        return RIFL_ERR_CONFIG;
    }
    int rc = check_table(cfg->high, cfg->n_high, n_vls, "high", msg, msglen);
    if (rc == RIFL_OK)
        rc = check_table(cfg->low, cfg->n_low, n_vls, "low", msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    if (cfg->high_limit > 255) {
        if (msg)
            snprintf(msg, msglen, "high-priority limit %u out of range; use 0..254 (units"
                     " of 4096 bytes) or 255 for no limit", cfg->high_limit);
        return RIFL_ERR_CONFIG;
    }
    /* every data VL must be reachable, or its packets wait for ever */
    for (unsigned v = 0; v < n_vls; v++) {
        int found = 0;
        for (unsigned i = 0; i < cfg->n_high; i++)
            found |= cfg->high[i].vl == v && cfg->high[i].weight > 0;
        for (unsigned i = 0; i < cfg->n_low; i++)
            found |= cfg->low[i].vl == v && cfg->low[i].weight > 0;
        if (!found) {
            if (msg)
                snprintf(msg, msglen, "VL%u has no arbitration entry with a weight above 0,"
                         " so its packets could never be sent; add e.g. '%u:16' to a table",
                         v, v);
            return RIFL_ERR_CONFIG;
        }
    }
    memset(arb, 0, sizeof *arb);
    arb->cfg = *cfg;
    /* (each table's first turn moves on to its entry 0) */
    arb->cur[0] = cfg->n_high ? cfg->n_high - 1 : 0;
    arb->cur[1] = cfg->n_low ? cfg->n_low - 1 : 0;
    return RIFL_OK;
}

static int ready(const uint32_t *head, uint32_t sendable, unsigned vl)
{
    return head[vl] > 0 && (sendable >> vl & 1u);
}

/* Any entry of the table whose VL could go? */
static int table_ready(const rifl_vlarb_entry *t, unsigned n, const uint32_t *head,
                       uint32_t sendable)
{
    for (unsigned i = 0; i < n; i++)
        if (t[i].weight > 0 && ready(head, sendable, t[i].vl))
            return 1;
    return 0;
}

/* Weighted round robin over one table: stay on the current entry while it
 * has weight left and its VL is ready, else move on to the next ready entry
 * and give it its weight.  A packet may overrun the weight left; the overrun
 * is owed by that entry and taken off its next turn (an entry owing more
 * than its weight sits the turn out), so over time every entry gets its
 * weight's share of the bytes.  An entry whose VL has nothing to send loses
 * what it owes. */
static int table_pick(rifl_vlarb *arb, int which, const rifl_vlarb_entry *t, unsigned n,
                      const uint32_t *head, uint32_t sendable)
{
    unsigned cur = arb->cur[which];
    if (!(cur < n && arb->left[which] > 0 && ready(head, sendable, t[cur].vl))) {
        int any = 0;
        for (unsigned i = 0; i < n; i++) {
            if (t[i].weight > 0 && ready(head, sendable, t[i].vl))
                any = 1;
            else
                arb->debt[which][i] = 0;
        }
        if (!any)
            return -1;
        for (;;) {
            cur = (cur + 1) % n;
            if (t[cur].weight == 0 || !ready(head, sendable, t[cur].vl))
                continue;
            int32_t w = (int32_t)t[cur].weight - arb->debt[which][cur];
            if (w > 0) {
                arb->debt[which][cur] = 0;
                arb->left[which] = w;
                break;
            }
            arb->debt[which][cur] = -w; /* sits this turn out */
        }
        arb->cur[which] = cur;
    }
    unsigned vl = t[cur].vl;
    arb->left[which] -= (int32_t)rifl_fc_blocks(head[vl]);
    if (arb->left[which] < 0) {
        arb->debt[which][cur] = -arb->left[which];
        arb->left[which] = 0;
    }
    return (int)vl;
}

int rifl_vlarb_pick(rifl_vlarb *arb, const uint32_t head_bytes[RIFL_FC_NUM_VLS],
                    uint32_t sendable)
{
    if (!arb || !head_bytes)
        return -1;
    if (head_bytes[RIFL_FC_VL15] > 0) {
        arb->picks[RIFL_FC_VL15]++;
        arb->bytes[RIFL_FC_VL15] += head_bytes[RIFL_FC_VL15];
        return (int)RIFL_FC_VL15;
    }
    const rifl_vlarb_config *c = &arb->cfg;
    int hi = table_ready(c->high, c->n_high, head_bytes, sendable);
    int lo = table_ready(c->low, c->n_low, head_bytes, sendable);
    int use_high = 0;
    if (hi) {
        if (!lo || c->high_limit == RIFL_VLARB_UNLIMITED || arb->high_bytes == 0 ||
            arb->high_bytes < (uint64_t)c->high_limit * 4096u)
            use_high = 1;
        else
            arb->high_limit_yields++;
    } else if (!lo) {
        return RIFL_ERR_AGAIN;
    }
    int vl;
    if (use_high) {
        vl = table_pick(arb, 0, c->high, c->n_high, head_bytes, sendable);
        if (vl >= 0 && lo)
            arb->high_bytes += head_bytes[vl];
    } else {
        vl = table_pick(arb, 1, c->low, c->n_low, head_bytes, sendable);
        arb->high_bytes = 0;
    }
    if (vl < 0)
        return RIFL_ERR_AGAIN;
    arb->picks[vl]++;
    arb->bytes[vl] += head_bytes[vl];
    return vl;
}

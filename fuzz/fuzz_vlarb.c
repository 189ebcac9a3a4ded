/* Fuzz the VL arbitration table parser (rifl_vlarb_parse_table, the
 * --high/--low tables of `sim credit`): any text, NUL-terminated, parses or
 * is refused with a message and *n untouched.  A table that parses has at
 * most RIFL_VLARB_MAX_ENTRIES entries (written into an array of exactly that
 * many), one per ':' of the text, each a data VL; written back as
 * "VL:WEIGHT,..." it parses to the same entries; the answer does not depend
 * on the message buffer (a short one is never overrun).  Loaded as an
 * arbiter's low table, it is accepted exactly when every VL up to its
 * highest has an entry of weight above 0, and one round of 64-byte packets
 * from every VL gives each VL as many packets as its entries' weights add
 * up to. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/credit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define UNTOUCHED 0xdeadbeefu

static rifl_vlarb_entry *table(void)
{
    rifl_vlarb_entry *t = malloc(RIFL_VLARB_MAX_ENTRIES * sizeof *t);
    if (!t)
        __builtin_trap();
    return t;
}

/* The answer with a short message buffer and with none is the same. */
static void same_answer(const char *s, int rc, const rifl_vlarb_entry *t, unsigned n)
{
    rifl_vlarb_entry *t2 = table();
    unsigned n2 = UNTOUCHED, n3 = UNTOUCHED;
    char *small = malloc(3);
    if (!small)
        __builtin_trap();
    small[0] = '\0';
    if (rifl_vlarb_parse_table(s, t2, &n2, small, 3) != rc || !memchr(small, '\0', 3) ||
        n2 != n || (rc == RIFL_OK && memcmp(t, t2, n * sizeof *t)))
        __builtin_trap();
    if (rifl_vlarb_parse_table(s, t2, &n3, NULL, 0) != rc || n3 != n)
        __builtin_trap();
    free(small);
    free(t2);
}

/* "VL:WEIGHT,..." of the entries parses to the same entries. */
static void written_back(const rifl_vlarb_entry *t, unsigned n)
{
    char text[RIFL_VLARB_MAX_ENTRIES * 8 + 1];
    size_t L = 0;
    text[0] = '\0';
    for (unsigned i = 0; i < n; i++)
        L += (size_t)snprintf(text + L, sizeof text - L, "%s%u:%u", i ? "," : "", t[i].vl,
                              t[i].weight);
    rifl_vlarb_entry *t2 = table();
    unsigned n2 = UNTOUCHED;
    char msg[256];
    if (rifl_vlarb_parse_table(text, t2, &n2, msg, sizeof msg) != RIFL_OK || n2 != n ||
        memcmp(t, t2, n * sizeof *t))
        __builtin_trap();
    free(t2);
}

/* The table as an arbiter's low table: accepted when it should be, and one
 * round of the table in picks. */
static void arbitrate(const rifl_vlarb_entry *t, unsigned n)
{
    unsigned n_vls = 1, want[RIFL_FC_NUM_VLS] = { 0 }, round = 0;
    for (unsigned i = 0; i < n; i++) {
        if (t[i].vl + 1u > n_vls)
            n_vls = t[i].vl + 1u;
        want[t[i].vl] += t[i].weight;
        round += t[i].weight;
    }
    int reachable = 1;
    for (unsigned v = 0; v < n_vls; v++)
        reachable &= want[v] > 0;
    static rifl_vlarb_config cfg;
    static rifl_vlarb arb;
    memset(&cfg, 0, sizeof cfg);
    memcpy(cfg.low, t, n * sizeof *t);
    cfg.n_low = n;
    cfg.high_limit = RIFL_VLARB_UNLIMITED;
    char msg[256] = "";
    int rc = rifl_vlarb_init(&arb, &cfg, n_vls, msg, sizeof msg);
    if (rc != (reachable ? RIFL_OK : RIFL_ERR_CONFIG) || (rc != RIFL_OK && !msg[0]))
        __builtin_trap();
    if (rc != RIFL_OK || round > 4096)
        return;
    uint32_t head[RIFL_FC_NUM_VLS] = { 0 }, got[RIFL_FC_NUM_VLS] = { 0 };
    for (unsigned v = 0; v < n_vls; v++)
        head[v] = RIFL_FC_BLOCK_BYTES;
    for (unsigned i = 0; i < round; i++) {
        int vl = rifl_vlarb_pick(&arb, head, (1u << n_vls) - 1);
        if (vl < 0 || (unsigned)vl >= n_vls)
            __builtin_trap();
        got[vl]++;
    }
    for (unsigned v = 0; v < n_vls; v++)
        if (got[v] != want[v])
            __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        __builtin_trap();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    rifl_vlarb_entry *t = table();
    unsigned n = UNTOUCHED;
    char msg[256] = "";
    int rc = rifl_vlarb_parse_table(s, t, &n, msg, sizeof msg);
    same_answer(s, rc, t, n);
    if (rc != RIFL_OK) {
        if (rc != RIFL_ERR_PARSE || !msg[0] || n != UNTOUCHED)
            __builtin_trap();
    } else {
        unsigned colons = 0;
        for (const char *p = s; *p; p++)
            colons += *p == ':';
        if (n > RIFL_VLARB_MAX_ENTRIES || n != colons)
            __builtin_trap();
        for (unsigned i = 0; i < n; i++)
            if (t[i].vl >= RIFL_FC_MAX_DATA_VLS)
                __builtin_trap();
        written_back(t, n);
        arbitrate(t, n);
    }
    free(t);
    free(s);
    return 0;
}

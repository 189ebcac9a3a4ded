/* The RIFL switch model: input modules with statically allocated VOQs,
 * per-VOQ flow control, iSLIP + Batcher-Banyan or the ideal SAFC switch. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/switch.h"
#include "switch_priv.h"

const rifl_switch_config rifl_switch_default_config = {
    .nports = 32,
    .scheduler = RIFL_SCHED_ISLIP,
    .iterations = 3,
    .voq_cells = 27,
    .rtt_slots = 18,
    .fc_on = 0,
    .fc_off = 0,
    .flow_control = true,
    .check_fabric = true,
    .broadcast = false,
};

/* A stored cell: one entry of the cell pool, 32 bytes.  Its link into
 * its VOQ is kept apart, in rifl_switch.link. */
struct voq_entry {
    rifl_cell cell;
    uint64_t arrive;      /* slot the cell was stored */
};
_Static_assert(sizeof(struct voq_entry) == 32, "a stored cell takes 32 bytes");

/* A VOQ: a circular list of pool entries, known by its newest (whose
 * successor is the oldest); 8 bytes, so that the n^2 of them stay in the
 * cache. */
struct voq {
    uint32_t tail;
    uint32_t len;
};

#define VOQ_NIL UINT32_MAX

struct rifl_switch {
    rifl_switch_config cfg;
    unsigned n, words, cap;
    struct voq *voq;      /* [n*n], by input then output */
    /* The cell pool: entries are handed out from a free list of entries
     * used before, then from `fresh` upwards.  It is sized for every VOQ
     * full, but only entries that have held a cell are ever touched, so the
     * memory in use follows the most cells held at once. */
    struct voq_entry *pool;
    /* [pool entries] the next entry of the same VOQ (the newest links to
     * the oldest), or of the free list.  Apart from the cells, the links
     * of the cells held fit in the cache when the cells do not: finding a
     * VOQ's oldest cell or linking a new one reads no cell. */
    uint32_t *link;
    uint32_t free_head;   /* entries given back, most recent first */
    uint32_t fresh;       /* entries [fresh, end) never used */
    uint64_t held;
    /* VOQ lengths at which flow control marks a queue: the length before a
     * store that makes it pass fc_on, the length after a dequeue that
     * brings it to fc_off; UINT32_MAX (never) without flow control */
    uint32_t fc_on_len, fc_off_len;
    uint64_t next_step;   /* cell slots step in order: the least next `now` */
    rifl_islip *islip;
    rifl_fabric *fabric;
    uint64_t *nonemptyT;  /* [n][words] by output: inputs with cells */
    uint64_t *out_busy;   /* [words] outputs with a non-empty VOQ */
    uint16_t *out_nq;     /* [n] per output: its non-empty VOQs */
    uint64_t *reqT;       /* [n][words] iSLIP requests when flow control holds some back */
    uint64_t *fc_on_pend; /* [n][words] per input: queues owing an ON */
    uint64_t *fc_off_pend;
    uint64_t *fc_stopped; /* [n][words] per input: queues upstream is (or
                             will be, once the notices owed are sent) told
                             to stop sending to */
    unsigned *fc_pending; /* per input: set bits in both */
    uint16_t *fc_on_rr;   /* per input: the queue the round robin of ONs
                             looks at first */
    uint64_t *fc_inputs;  /* [words] inputs with fc_pending > 0 */
    /* downstream flow control, per output */
    uint16_t *down_nports, *down_in;
    uint64_t *down_paused; /* [n][4] queues paused downstream */
    uint16_t *down_npaused;
    uint32_t *vl_block;    /* [n] per output: VLs without credit */
    unsigned outputs_paused; /* outputs with any paused queue or blocked VL */
    uint64_t *out_held;    /* [words] outputs the caller holds (link busy) */
    unsigned outputs_held;
    uint16_t *rr;          /* SAFC tie-break pointer per output */
    int16_t *match, *dest, *at_out;
    unsigned iter_matches[RIFL_L2_MAX_PORTS];
    rifl_switch_stats st;
};


unsigned rifl_switch_min_voq_cells(unsigned rtt_slots)
{
    uint64_t n = (3 * (uint64_t)rtt_slots + 1) / 2;
    return n > UINT_MAX ? UINT_MAX : (unsigned)n;
}

unsigned rifl_switch_broadcast_room(unsigned nports)
{
    return nports < 2 ? 0 : nports - 2;
}

int rifl_switch_config_check(rifl_switch_config *c, char *err, size_t errlen)
{
    if (!c)
        return rifl_null_arg(err, errlen, "rifl_switch_config_check", "the configuration");
    if (c->nports < 2 || c->nports > RIFL_L2_MAX_PORTS) {
        rifl_msg(err, errlen, "ports = %u: a switch has 2 to %d ports", c->nports,
               RIFL_L2_MAX_PORTS);
        return RIFL_ERR_CONFIG;
    }
    if (c->scheduler != RIFL_SCHED_ISLIP && c->scheduler != RIFL_SCHED_SAFC) {
        rifl_msg(err, errlen, "unknown scheduler; use islip or safc");
        return RIFL_ERR_CONFIG;
    }
    if (c->iterations < 1 || c->iterations > c->nports) {
        rifl_msg(err, errlen, "iterations = %u: iSLIP runs 1 to %u iterations on a %u-port "
               "switch", c->iterations, c->nports, c->nports);
        return RIFL_ERR_CONFIG;
    }
    if (c->rtt_slots < 1 || c->rtt_slots > RIFL_SWITCH_MAX_RTT) {
        rifl_msg(err, errlen, "link round trip = %u slots: use 1 to %d", c->rtt_slots,
                 RIFL_SWITCH_MAX_RTT);
        return RIFL_ERR_CONFIG;
    }
    if (c->voq_cells > 65535) {
        rifl_msg(err, errlen, "voq-cells = %u: at most 65535 cells per VOQ", c->voq_cells);
        return RIFL_ERR_CONFIG;
    }
    if ((uint64_t)c->voq_cells * c->nports * c->nports > (1ull << 26)) {
        /* smaller VOQs only where flow control lets them: 1.5 round trips */
        unsigned need = c->flow_control ? rifl_switch_min_voq_cells(c->rtt_slots) : 1;
        bool smaller = (uint64_t)need * c->nports * c->nports <= (1ull << 26);
        rifl_msg(err, errlen, "voq-cells = %u with %u ports needs %llu cells of VOQ space "
               "(limit %llu); use fewer ports%s", c->voq_cells, c->nports,
               (unsigned long long)c->voq_cells * c->nports * c->nports, 1ull << 26,
               smaller ? " or smaller VOQs"
                       : ", or a shorter link round trip (VOQs hold 1.5 round trips)");
        return RIFL_ERR_CONFIG;
    }
    if (!c->flow_control) {
        if (c->voq_cells < 1) {
            rifl_msg(err, errlen, "voq-cells = 0: a VOQ needs space for at least one cell");
            return RIFL_ERR_CONFIG;
        }
        c->fc_on = c->fc_off = 0;
        return RIFL_OK;
    }
    /* with broadcast, the ONs one cell raises in every VOQ of its input
     * leave one per slot: the last waits `room` slots, and its VOQ takes as
     * many more cells */
    unsigned room = c->broadcast ? rifl_switch_broadcast_room(c->nports) : 0;
    unsigned need = rifl_switch_min_voq_cells(c->rtt_slots);
    if (room && (uint64_t)c->voq_cells < (uint64_t)need + room) {
        rifl_msg(err, errlen, "voq-cells = %u is unsafe with broadcast: one broadcast cell "
                 "can raise the ONs of all %u VOQs of its input, which leave one per slot, so "
                 "a VOQ needs 1.5 round trips (%u cells) plus %u; raise voq-cells to %llu or "
                 "turn broadcast off", c->voq_cells, c->nports - 1, need, room,
                 (unsigned long long)need + room);
        return RIFL_ERR_CONFIG;
    }
    if (c->voq_cells < need) {
        rifl_msg(err, errlen, "voq-cells = %u is unsafe: each VOQ must hold 1.5 round trips "
               "of its link (%u slots round trip -> at least %u cells); raise voq-cells to "
               "%u or shorten the link", c->voq_cells, c->rtt_slots, need, need);
        return RIFL_ERR_CONFIG;
    }
    /* (voq_cells >= need + room > rtt_slots + room here) */
    unsigned on = c->fc_on ? c->fc_on : c->voq_cells - c->rtt_slots - room;
    if (on < 1 || (uint64_t)on + c->rtt_slots + room > c->voq_cells) {
        unsigned top = c->voq_cells - c->rtt_slots - room;
        if (room)
            rifl_msg(err, errlen, "fc-on = %u is unsafe with broadcast: after the ON threshold "
                     "is crossed up to %u more cells can arrive (%u in the round trip, %u while "
                     "the ONs of the other VOQs go first), so the threshold must be 1 to %u for "
                     "%u-cell VOQs; lower fc-on or raise voq-cells", on,
                     c->rtt_slots - 1 + room, c->rtt_slots - 1, room, top, c->voq_cells);
        else
            rifl_msg(err, errlen, "fc-on = %u is unsafe: after the ON threshold is crossed up "
                     "to %u more cells can arrive, so the threshold must be 1 to %u for %u-cell "
                     "VOQs; lower fc-on or raise voq-cells", on, c->rtt_slots - 1, top,
                     c->voq_cells);
        return RIFL_ERR_CONFIG;
    }
    unsigned off = c->fc_off ? c->fc_off : on / 2;
    if (off >= on) {
        rifl_msg(err, errlen, "fc-off = %u must be below fc-on = %u; lower fc-off", off, on);
        return RIFL_ERR_CONFIG;
    }
    c->fc_on = on;
    c->fc_off = off;
    return RIFL_OK;
}

void rifl_switch_free(rifl_switch *sw)
{
    if (!sw)
        return;
    free(sw->voq);
    free(sw->pool);
    free(sw->link);
    rifl_islip_free(sw->islip);
    rifl_fabric_free(sw->fabric);
    free(sw->nonemptyT);
    free(sw->out_nq);
    free(sw->reqT);
    free(sw->out_busy);
    free(sw->fc_on_pend);
    free(sw->fc_off_pend);
    free(sw->fc_stopped);
    free(sw->fc_pending);
    free(sw->fc_on_rr);
    free(sw->fc_inputs);
    free(sw->down_nports);
    free(sw->down_in);
    free(sw->down_paused);
    free(sw->down_npaused);
    free(sw->vl_block);
    free(sw->out_held);
    free(sw->rr);
    free(sw->match);
    free(sw->dest);
    free(sw->at_out);
    free(sw);
}

int rifl_switch_create(const rifl_switch_config *cfg, rifl_switch **out, char *err,
                       size_t errlen)
{
    if (!out || !cfg)
        return rifl_null_arg(err, errlen, "rifl_switch_create", cfg ? "out" : "cfg");
    *out = NULL;
    rifl_switch_config c = *cfg;
    int rc = rifl_switch_config_check(&c, err, errlen);
    if (rc)
        return rc;
    rifl_switch *sw = calloc(1, sizeof *sw);
    if (!sw)
        return RIFL_ERR_NOMEM;
    sw->cfg = c;
    unsigned n = sw->n = c.nports;
    sw->words = BS_WORDS(n);
    sw->cap = c.voq_cells;
    sw->fc_on_len = c.flow_control ? c.fc_on : UINT32_MAX;
    sw->fc_off_len = c.flow_control ? c.fc_off : UINT32_MAX;
    size_t q = (size_t)n * n, W = (size_t)n * sw->words;
    /* malloc, not calloc: the pool's pages are touched only when used */
    sw->pool = malloc(q * sw->cap * sizeof *sw->pool);
    sw->link = malloc(q * sw->cap * sizeof *sw->link);
    sw->voq = calloc(q, sizeof *sw->voq);
    sw->free_head = VOQ_NIL;
    sw->out_nq = calloc(n, sizeof *sw->out_nq);
    sw->nonemptyT = calloc(W, sizeof(uint64_t));
    sw->reqT = calloc(W, sizeof(uint64_t));
    sw->out_busy = calloc(sw->words, sizeof(uint64_t));
    sw->fc_on_pend = calloc(W, sizeof(uint64_t));
    sw->fc_off_pend = calloc(W, sizeof(uint64_t));
    sw->fc_stopped = calloc(W, sizeof(uint64_t));
    sw->fc_pending = calloc(n, sizeof *sw->fc_pending);
    sw->fc_on_rr = calloc(n, sizeof *sw->fc_on_rr);
    sw->fc_inputs = calloc(sw->words, sizeof(uint64_t));
    sw->down_nports = calloc(n, sizeof *sw->down_nports);
    sw->down_in = calloc(n, sizeof *sw->down_in);
    sw->down_paused = calloc((size_t)n * 4, sizeof(uint64_t));
    sw->down_npaused = calloc(n, sizeof *sw->down_npaused);
    sw->vl_block = calloc(n, sizeof *sw->vl_block);
    sw->out_held = calloc(sw->words, sizeof(uint64_t));
    sw->rr = calloc(n, sizeof *sw->rr);
    sw->match = calloc(n, sizeof *sw->match);
    sw->dest = calloc(n, sizeof *sw->dest);
    sw->at_out = calloc(n, sizeof *sw->at_out);
    if (!sw->pool || !sw->link || !sw->voq || !sw->out_nq ||
        !sw->nonemptyT || !sw->reqT || !sw->out_busy || !sw->fc_on_pend || !sw->fc_off_pend || !sw->fc_stopped || !sw->fc_pending || !sw->fc_on_rr || !sw->fc_inputs ||
        !sw->down_nports || !sw->down_in || !sw->down_paused || !sw->down_npaused ||
        !sw->vl_block ||
        !sw->out_held || !sw->rr || !sw->match || !sw->dest || !sw->at_out ||
        rifl_islip_create(n, c.iterations, &sw->islip) ||
        rifl_fabric_create(n, &sw->fabric)) {
        unsigned cap = sw->cap;
        rifl_switch_free(sw);
        rifl_msg(err, errlen, "out of memory for a %u-port switch with %u-cell VOQs", n, cap);
        return RIFL_ERR_NOMEM;
    }
    *out = sw;
    return RIFL_OK;
}

const rifl_switch_config *rifl_switch_get_config(const rifl_switch *sw)
{
    return sw ? &sw->cfg : NULL;
}

unsigned rifl_switch_voq_len(const rifl_switch *sw, unsigned in, unsigned out)
{
    if (!sw || in >= sw->n || out >= sw->n)
        return 0;
    return sw->voq[(size_t)in * sw->n + out].len;
}

uint64_t rifl_switch_cells_held(const rifl_switch *sw) { return sw ? sw->held : 0; }

void rifl_switch_get_stats(const rifl_switch *sw, rifl_switch_stats *st)
{
    if (st)
        *st = sw ? sw->st : (rifl_switch_stats){ 0 };
}

/* The oldest entry of a non-empty VOQ: the newest's successor (which is
 * the newest itself when it is alone). */
static inline uint32_t voq_head(const rifl_switch *sw, const struct voq *v)
{
    return sw->link[v->tail];
}

static void fc_mark(rifl_switch *sw, unsigned in, unsigned q, int on)
{
    uint64_t *mine = (on ? sw->fc_on_pend : sw->fc_off_pend) + (size_t)in * sw->words;
    uint64_t *other = (on ? sw->fc_off_pend : sw->fc_on_pend) + (size_t)in * sw->words;
    uint64_t *stopped = sw->fc_stopped + (size_t)in * sw->words;
    /* upstream hears of changes only: an OFF for a queue it was told to
     * stop sending to, an ON for one it was not (a queue that fills to
     * the ON mark again before draining to the OFF mark, or drains to the
     * OFF mark without having filled to the ON mark, owes nothing) */
    if ((bs_get(stopped, q) != 0) == (on != 0))
        return;
    if (on)
        bs_set(stopped, q);
    else
        bs_clr(stopped, q);
    /* a change back before the notice of the first was sent: upstream
     * never learns of either */
    if (bs_get(other, q)) {
        bs_clr(other, q);
        sw->fc_pending[in]--;
        return;
    }
    if (!bs_get(mine, q)) {
        bs_set(mine, q);
        sw->fc_pending[in]++;
        bs_set(sw->fc_inputs, in);
    }
}

static inline __attribute__((always_inline)) int store(rifl_switch *sw, unsigned in,
                                                      unsigned o, const rifl_cell *cell,
                                                      uint64_t now)
{
    struct voq *v = &sw->voq[(size_t)in * sw->n + o];
    unsigned l = v->len;
    if (l >= sw->cap) {
        sw->st.drop_overflow++;
        return RIFL_SW_DROP_OVERFLOW;
    }
    /* every VOQ holds at most cap cells, so the pool never runs out */
    uint32_t e = sw->free_head;
    if (e != VOQ_NIL)
        sw->free_head = sw->link[e];
    else
        e = sw->fresh++;
    struct voq_entry *x = &sw->pool[e];
    x->cell = *cell;
    x->arrive = now;
    /* Link e after the newest entry t, or to itself in an empty VOQ,
     * without a branch on the length (whether a VOQ is empty follows the
     * traffic, not a pattern): with t = e the reads and writes below
     * fall on e, and e's link ends as e. */
    uint32_t full = 0 - (uint32_t)(l != 0); /* masks: GCC made branches of ?: */
    uint32_t t = (v->tail & full) | (e & ~full);
    uint32_t oldest = sw->link[t];
    sw->link[e] = (oldest & full) | (e & ~full);
    sw->link[t] = e;
    v->tail = e;
    v->len = l + 1;
    sw->held++;
    sw->st.cells_stored++;
    if (l + 1 > sw->st.max_voq_cells)
        sw->st.max_voq_cells = l + 1;
    /* the VOQ is not empty now: its bits are set, whether or not they were */
    bs_set(sw->nonemptyT + (size_t)o * sw->words, in);
    sw->out_nq[o] = (uint16_t)(sw->out_nq[o] + (l == 0));
    bs_set(sw->out_busy, o);
    if (l == sw->fc_on_len)
        fc_mark(sw, in, o, 1);
    return RIFL_SW_STORED;
}

int rifl_switch_input(rifl_switch *sw, unsigned port, const rifl_cell *cell, uint64_t now)
{
    if (!sw || !cell || port >= sw->n)
        return RIFL_ERR_INVALID_ARG;
    sw->st.cells_in++;
    unsigned o = 0;
    int f = rifl_l2_forward(sw->n, port, &cell->hdr, &o);
    switch (f) {
    case RIFL_L2_FWD_UNICAST:
        return store(sw, port, o, cell, now);
    case RIFL_L2_FWD_BROADCAST: {
        if (!sw->cfg.broadcast) {
            /* without the headroom for broadcast, a broadcast cell could
             * overflow a VOQ flow control keeps within its space */
            sw->st.drop_invalid++;
            return RIFL_SW_DROP_INVALID;
        }
        int verdict = RIFL_SW_STORED;
        sw->st.broadcasts++;
        for (unsigned d = 0; d < sw->n; d++)
            if (d != port && store(sw, port, d, cell, now) != RIFL_SW_STORED)
                verdict = RIFL_SW_DROP_OVERFLOW;
        return verdict;
    }
    case RIFL_L2_FWD_MISROUTED:
        sw->st.drop_misrouted++;
        return RIFL_SW_DROP_MISROUTED;
    default:
        sw->st.drop_invalid++;
        return RIFL_SW_DROP_INVALID;
    }
}

/* rifl_l2_forward's rule for the common case, without a branch per rule:
 * 1 with *o set when the cell entering input p goes to one output, 0 for
 * every other case (left to rifl_switch_input). */
static inline int unicast_to(unsigned n, unsigned p, const rifl_l2_hdr *h, unsigned *o)
{
    const unsigned total = h->b[0] >> 4, remain = h->b[0] & 15u, j = h->b[1];
    *o = j + (j >= p);
    return (remain != 0) & (total <= RIFL_L2_MAX_HOPS) & (remain <= total) &
           (j != RIFL_L2_BROADCAST) & (*o < n);
}

/* The flags f[0..n) (n <= 64) as bits, bit p set when f[p] != 0: whether an
 * input has a cell follows the traffic, so a loop over the set bits
 * mispredicts once at its end where a test per input mispredicts at random. */
static inline uint64_t flag_bits(const uint8_t *f, unsigned n)
{
    uint64_t bits = 0;
    unsigned p = 0;
    for (; p + 8 <= n; p += 8) {
        uint64_t v;
        memcpy(&v, f + p, sizeof v);
        v |= v >> 4; /* the low bit of each byte: any bit of the byte */
        v |= v >> 2;
        v |= v >> 1;
        /* the low bits of the 8 bytes gathered in the top byte */
        bits |= (((v & 0x0101010101010101ull) * 0x0102040810204080ull) >> 56) << p;
    }
    for (; p < n; p++)
        bits |= (uint64_t)(f[p] != 0) << p;
    return bits;
}

int rifl_switch_input_row(rifl_switch *sw, const rifl_cell *cells, const uint8_t *valid,
                          uint64_t now)
{
    if (!sw || !cells || !valid)
        return RIFL_ERR_INVALID_ARG;
    const unsigned n = sw->n;
    for (unsigned base = 0; base < n; base += 64) {
        uint64_t bits = flag_bits(valid + base, n - base < 64 ? n - base : 64);
        for (; bits; bits &= bits - 1) {
            const unsigned p = base + (unsigned)__builtin_ctzll(bits);
            unsigned o;
            if (unicast_to(n, p, &cells[p].hdr, &o)) {
                sw->st.cells_in++;
                store(sw, p, o, &cells[p], now);
            } else {
                rifl_switch_input(sw, p, &cells[p], now);
            }
        }
    }
    return RIFL_OK;
}

int rifl_switch_set_downstream(rifl_switch *sw, unsigned port, unsigned nports,
                               unsigned in_port)
{
    if (!sw || port >= sw->n || nports < 2 || nports > RIFL_L2_MAX_PORTS || in_port >= nports)
        return RIFL_ERR_INVALID_ARG;
    sw->down_nports[port] = (uint16_t)nports;
    sw->down_in[port] = (uint16_t)in_port;
    return RIFL_OK;
}

/* Keep the count of outputs with a paused queue or a blocked VL. */
static void paused_update(rifl_switch *sw, unsigned o, bool before)
{
    bool now = sw->down_npaused[o] || sw->vl_block[o];
    if (!before && now)
        sw->outputs_paused++;
    else if (before && !now)
        sw->outputs_paused--;
}

int rifl_switch_fc_receive(rifl_switch *sw, unsigned port, const rifl_l2_fc *fc)
{
    if (!sw || !fc || port >= sw->n)
        return RIFL_ERR_INVALID_ARG;
    uint64_t *p = sw->down_paused + (size_t)port * 4;
    bool before = sw->down_npaused[port] || sw->vl_block[port];
    /* (queues are the downstream switch's outputs) */
    unsigned dn = sw->down_nports[port] ? sw->down_nports[port] : RIFL_L2_MAX_PORTS;
    rifl_l2_fc f = *fc;
    bool bad = false;
    if (f.on_valid && f.on_queue >= dn) {
        sw->st.fc_bad_queue++;
        bad = true;
        f.on_valid = false;
    }
    if (f.off_valid && f.off_queue >= dn) {
        sw->st.fc_bad_queue++;
        bad = true;
        f.off_valid = false;
    }
    fc = &f;
    if (fc->on_valid) {
        sw->st.fc_on_received++;
        if (!bs_get(p, fc->on_queue)) {
            bs_set(p, fc->on_queue);
            sw->down_npaused[port]++;
        }
    }
    if (fc->off_valid) {
        sw->st.fc_off_received++;
        if (bs_get(p, fc->off_queue)) {
            bs_clr(p, fc->off_queue);
            sw->down_npaused[port]--;
        }
    }
    paused_update(sw, port, before);
    return bad ? RIFL_ERR_FRAME : RIFL_OK;
}

int rifl_switch_block_vls(rifl_switch *sw, unsigned port, uint32_t mask)
{
    if (!sw || port >= sw->n || mask >> 15)
        return RIFL_ERR_INVALID_ARG;
    bool before = sw->down_npaused[port] || sw->vl_block[port];
    sw->vl_block[port] = mask;
    paused_update(sw, port, before);
    return RIFL_OK;
}

int rifl_switch_hold_output(rifl_switch *sw, unsigned port, bool hold)
{
    if (!sw || port >= sw->n)
        return RIFL_ERR_INVALID_ARG;
    bool was = bs_get(sw->out_held, port);
    if (hold && !was) {
        bs_set(sw->out_held, port);
        sw->outputs_held++;
    } else if (!hold && was) {
        bs_clr(sw->out_held, port);
        sw->outputs_held--;
    }
    return RIFL_OK;
}

/* Is the head cell of VOQ (i, o) held back: 1 by downstream flow control,
 * 2 for want of credit on its VL, 0 not? */
static int head_blocked(const rifl_switch *sw, unsigned i, unsigned o)
{
    if (!sw->down_npaused[o] && !sw->vl_block[o])
        return 0;
    const rifl_cell *c = &sw->pool[voq_head(sw, &sw->voq[(size_t)i * sw->n + o])].cell;
    if ((sw->vl_block[o] >> c->vl) & 1)
        return 2;
    if (!sw->down_npaused[o])
        return 0;
    const uint64_t *p = sw->down_paused + (size_t)o * 4;
    if (!sw->down_nports[o])
        return bs_get(p, 0); /* an endpoint pauses its single queue 0 */
    unsigned j = c->hdr.b[2]; /* dst port 1 after this switch's update */
    unsigned din = sw->down_in[o], dn = sw->down_nports[o];
    if (j == RIFL_L2_BROADCAST)
        return 1;
    unsigned q = j < din ? j : j + 1;
    if (q >= dn)
        return 0; /* the downstream switch will drop it as invalid */
    return bs_get(p, q);
}

static inline __attribute__((always_inline)) void dequeue(rifl_switch *sw, unsigned i,
                                                          unsigned o, rifl_cell *out)
{
    struct voq *v = &sw->voq[(size_t)i * sw->n + o];
    uint32_t e = voq_head(sw, v);
    const struct voq_entry *x = &sw->pool[e];
    *out = x->cell;
    /* rifl_l2_hdr_advance(&out->hdr, i, o), from the stored header: every
     * cell stored passed rifl_l2_forward, so it has a hop left (the low
     * nibble of byte 0 is not 0), and i != o */
    out->hdr.b[0] = (uint8_t)(x->cell.hdr.b[0] - 1);
    memcpy(&out->hdr.b[1], &x->cell.hdr.b[2], RIFL_L2_MAX_HOPS - 1);
    out->hdr.b[RIFL_L2_MAX_HOPS] = (uint8_t)(i - (i > o));
    /* unlink e (alone in the VOQ, e is the newest and this writes e's own
     * link, which the next line overwrites) */
    sw->link[v->tail] = sw->link[e];
    sw->link[e] = sw->free_head;
    sw->free_head = e;
    unsigned l = --v->len;
    sw->held--;
    /* without branches: an emptied VOQ clears its bit, and an output left
     * with no non-empty VOQ its own */
    uint64_t emptied = l == 0;
    sw->nonemptyT[(size_t)o * sw->words + (i >> 6)] &= ~(emptied << (i & 63));
    unsigned nq = sw->out_nq[o] - (unsigned)emptied;
    sw->out_nq[o] = (uint16_t)nq;
    sw->out_busy[o >> 6] &= ~((uint64_t)(nq == 0) << (o & 63));
    if (l == sw->fc_off_len)
        fc_mark(sw, i, o, 0);
}

static void emit_fc(rifl_switch *sw, rifl_l2_fc *fc, uint8_t *fc_valid)
{
    if (fc_valid)
        memset(fc_valid, 0, sw->n);
    for (unsigned w = 0; w < sw->words; w++) {
        uint64_t bits = sw->fc_inputs[w];
        sw->fc_inputs[w] = 0;
        for (; bits; bits &= bits - 1) {
            unsigned i = w * 64 + (unsigned)__builtin_ctzll(bits);
            rifl_l2_fc f = { 0 };
            uint64_t *on = sw->fc_on_pend + (size_t)i * sw->words;
            uint64_t *off = sw->fc_off_pend + (size_t)i * sw->words;
            /* round robin: an ON waits for at most one of each other
             * queue (several are owed only after a broadcast cell) */
            int q = bs_next_rr(on, NULL, sw->words, sw->fc_on_rr[i]);
            if (q >= 0) {
                f.on_valid = true;
                f.on_queue = (uint8_t)q;
                sw->fc_on_rr[i] = (uint16_t)((unsigned)q + 1 == sw->n ? 0 : (unsigned)q + 1);
                bs_clr(on, (unsigned)q);
                sw->fc_pending[i]--;
                sw->st.fc_on_sent++;
            }
            q = bs_next_rr(off, NULL, sw->words, 0);
            if (q >= 0) {
                f.off_valid = true;
                f.off_queue = (uint8_t)q;
                bs_clr(off, (unsigned)q);
                sw->fc_pending[i]--;
                sw->st.fc_off_sent++;
            }
            /* (the notices of this input may all have been taken back:
             * nothing to send then) */
            if (!f.on_valid && !f.off_valid)
                continue;
            sw->st.fc_frames_sent++;
            if (sw->fc_pending[i])
                bs_set(sw->fc_inputs, i); /* more to send next slot */
            if (fc)
                fc[i] = f;
            if (fc_valid)
                fc_valid[i] = 1;
        }
    }
}

/* iSLIP requests with downstream flow control in force: the non-empty
 * VOQs but those whose head cell is held back. */
static const uint64_t *islip_requests(rifl_switch *sw)
{
    const unsigned n = sw->n, W = sw->words;
    if (!sw->outputs_paused)
        return sw->nonemptyT;
    memcpy(sw->reqT, sw->nonemptyT, (size_t)n * W * sizeof(uint64_t));
    for (unsigned o = 0; o < n; o++) {
        if (!sw->down_npaused[o] && !sw->vl_block[o])
            continue;
        uint64_t *row = sw->reqT + (size_t)o * W;
        for (unsigned w = 0; w < W; w++) {
            uint64_t bits = row[w];
            while (bits) {
                unsigned i = w * 64 + (unsigned)__builtin_ctzll(bits);
                bits &= bits - 1;
                int why = head_blocked(sw, i, o);
                if (why) {
                    if (why == 2)
                        sw->st.credit_blocked_requests++;
                    else
                        sw->st.fc_blocked_requests++;
                    bs_clr(row, i);
                }
            }
        }
    }
    return sw->reqT;
}

static int islip_slot(rifl_switch *sw, rifl_cell *out, uint8_t *out_valid)
{
    uint64_t matched[BS_WORDS(RIFL_L2_MAX_PORTS)];
    const uint64_t *outs = sw->out_busy;
    uint64_t open[BS_WORDS(RIFL_L2_MAX_PORTS)];
    if (sw->outputs_held) {
        /* a held output grants nothing */
        for (unsigned w = 0; w < sw->words; w++) {
            open[w] = sw->out_busy[w] & ~sw->out_held[w];
            sw->st.held_outputs += (uint64_t)__builtin_popcountll(sw->out_busy[w] &
                                                                  sw->out_held[w]);
        }
        outs = open;
    }
    unsigned m = islip_run_on(sw->islip, islip_requests(sw), outs, sw->match,
                              sw->iter_matches, matched);
    for (unsigned it = 0; it < sw->cfg.iterations; it++)
        sw->st.islip_matches_iter[it < 3 ? it : 3] += sw->iter_matches[it];
    if (!m)
        return 0;
    /* The cells cross in input order.  The fabric check is
     * rifl_fabric_check on the matching: with distinct outputs (what iSLIP
     * gives) it finds 0 collisions without routing, so the outputs are
     * checked for repeats here, on the way, and only a matching with a
     * repeated output goes to the model. */
    const unsigned W = sw->words;
    /* the oldest cells of the matched VOQs, fetched all at once: on a
     * switch of more than 64 ports they are seldom in the cache (on smaller
     * ones this costs more than it saves) */
    for (unsigned w = 0; W > 1 && w < W; w++)
        for (uint64_t bits = matched[w]; bits; bits &= bits - 1) {
            unsigned i = w * 64 + (unsigned)__builtin_ctzll(bits);
            const struct voq *v = &sw->voq[(size_t)i * sw->n + (unsigned)sw->match[i]];
            __builtin_prefetch(&sw->pool[voq_head(sw, v)]);
        }
    uint64_t seen[BS_WORDS(RIFL_L2_MAX_PORTS)] = { 0 };
    uint64_t repeat = 0;
    for (unsigned w = 0; w < W; w++)
        for (uint64_t bits = matched[w]; bits; bits &= bits - 1) {
            unsigned i = w * 64 + (unsigned)__builtin_ctzll(bits);
            unsigned o = (unsigned)sw->match[i];
            uint64_t ob = 1ull << (o & 63);
            repeat |= seen[o >> 6] & ob;
            seen[o >> 6] |= ob;
            dequeue(sw, i, o, &out[o]);
            out_valid[o] = 1;
        }
    if (sw->cfg.check_fabric) {
        sw->st.fabric_checks++;
        if (repeat) {
            for (unsigned i = 0; i < sw->n; i++)
                sw->dest[i] = bs_get(matched, i) ? sw->match[i] : -1;
            sw->st.fabric_collisions += rifl_fabric_check(sw->fabric, sw->dest, sw->at_out);
        }
    }
    return (int)m;
}

/* SAFC: every output takes its oldest cell from any input */
static int safc_slot(rifl_switch *sw, rifl_cell *out, uint8_t *out_valid)
{
    const unsigned n = sw->n, W = sw->words;
    int switched = 0;
    for (unsigned o = 0; o < n; o++) {
        if (sw->outputs_held && bs_get(sw->out_held, o)) {
            sw->st.held_outputs += sw->out_nq[o] != 0;
            continue;
        }
        const uint64_t *req = sw->nonemptyT + (size_t)o * W;
        int best = -1;
        uint64_t best_t = UINT64_MAX;
        unsigned start = sw->rr[o];
        for (unsigned w = 0; w < W; w++) {
            uint64_t bits = req[w];
            while (bits) {
                unsigned i = w * 64 + (unsigned)__builtin_ctzll(bits);
                bits &= bits - 1;
                int why = sw->outputs_paused ? head_blocked(sw, i, o) : 0;
                if (why) {
                    if (why == 2)
                        sw->st.credit_blocked_requests++;
                    else
                        sw->st.fc_blocked_requests++;
                    continue;
                }
                uint64_t t = sw->pool[voq_head(sw, &sw->voq[(size_t)i * n + o])].arrive;
                /* ties: first input at or after the pointer */
                unsigned rank = (i + n - start) % n;
                unsigned brank = best < 0 ? n : ((unsigned)best + n - start) % n;
                if (t < best_t || (t == best_t && rank < brank)) {
                    best_t = t;
                    best = (int)i;
                }
            }
        }
        if (best >= 0) {
            dequeue(sw, (unsigned)best, o, &out[o]);
            out_valid[o] = 1;
            sw->rr[o] = (uint16_t)(((unsigned)best + 1) % n);
            switched++;
        }
    }
    return switched;
}

int rifl_switch_step(rifl_switch *sw, uint64_t now, rifl_cell *out, uint8_t *out_valid,
                     rifl_l2_fc *fc, uint8_t *fc_valid)
{
    if (!sw || !out || !out_valid || now == UINT64_MAX) /* (the last slot: no next) */
        return RIFL_ERR_INVALID_ARG;
    if (now < sw->next_step) {
        sw->st.slot_errors++; /* a slot stepped twice, or time going back */
        return RIFL_ERR_STATE;
    }
    sw->next_step = now + 1;
    sw->st.slots++;
    sw->st.occupancy_sum += sw->held;
    memset(out_valid, 0, sw->n);
    int switched = sw->cfg.scheduler == RIFL_SCHED_ISLIP ? islip_slot(sw, out, out_valid)
                                                         : safc_slot(sw, out, out_valid);
    sw->st.cells_out += (uint64_t)switched;
    emit_fc(sw, fc, fc_valid);
    return switched;
}

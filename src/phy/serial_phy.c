/* The serial lane PHY (rifl/phy.h): frames as a bit stream on a line of
 * fixed length, with bit errors, bit slips at the receiving transceiver and
 * the receive aligner.
 *
 * The line is a ring of 64-bit words addressed by bit: the sender writes
 * F/64 words per slot at the write position, the receiving transceiver
 * reads F/64 words per slot from the read position, which trails by the
 * line's length in bits.  A slip moves the read position one bit on (a bit
 * lost) or back (a bit read twice). */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/frame.h"
#include "rifl/phy.h"
#include "rifl/rng.h"
#include "rifl/serial.h"

/* Room for the line to grow or shrink by slips, in bits each way. */
#define SLIP_ROOM 4096u

struct serial_phy {
    rifl_phy phy;
    rifl_phy_serial_config cfg;
    unsigned F, wpf, fbytes;
    uint8_t *content;          /* the sender's frame by content */
    uint8_t wire[RIFL_FRAME_MAX_BYTES];
    uint64_t *ring;            /* the line */
    uint64_t mask;             /* words in the ring - 1 */
    uint64_t wpos, rpos;       /* bit positions, counted from the start */
    uint64_t length;           /* the line's length in bits, without slips */
    uint64_t gap;              /* error-free bits before the next error */
    uint64_t slip_gap;         /* words received before the next slip */
    double slip_p;             /* slip probability per received word */
    rifl_rng rng;              /* bit errors */
    rifl_rng srng;             /* slips and the line's first bits */
    rifl_aligner al;
    uint8_t out[2][RIFL_FRAME_MAX_BYTES];
    rifl_phy_serial_rx state[2];
    rifl_phy_serial_stats sst;
    /* a slip not recovered from yet: its kind (1 lost, 2 repeated), the
     * frames handed out by then, whether rx_up has fallen since, and the
     * bits lost less the bits repeated since (until rx_up fell) */
    unsigned slip_kind;
    uint64_t slip_at;
    bool slip_down;
    int slip_net;
};

static struct serial_phy *as_serial(rifl_phy *p) { return (struct serial_phy *)p; }
static const struct serial_phy *as_cserial(const rifl_phy *p)
{
    return (const struct serial_phy *)p;
}

/* The 64-bit word of the line from bit position b on. */
static inline uint64_t line_read(const struct serial_phy *sp, uint64_t b)
{
    uint64_t w = b / 64;
    unsigned off = (unsigned)(b % 64);
    uint64_t lo = sp->ring[w & sp->mask];
    if (!off)
        return lo;
    return lo >> off | sp->ring[(w + 1) & sp->mask] << (64 - off);
}

/* Word v onto the line at the write position; the bits after it are
 * cleared. */
static inline void line_write(struct serial_phy *sp, uint64_t v)
{
    uint64_t w = sp->wpos / 64;
    unsigned off = (unsigned)(sp->wpos % 64);
    if (!off) {
        sp->ring[w & sp->mask] = v;
    } else {
        uint64_t *a = &sp->ring[w & sp->mask];
        *a = (*a & ((1ULL << off) - 1)) | v << off;
        sp->ring[(w + 1) & sp->mask] = v >> (64 - off);
    }
    sp->wpos += 64;
}

/* The error bits of the next 64 wire bits. */
static inline uint64_t word_errors(struct serial_phy *sp)
{
    if (sp->gap >= 64) {
        if (sp->gap != UINT64_MAX)
            sp->gap -= 64;
        return 0;
    }
    uint64_t m = 0;
    unsigned b = (unsigned)sp->gap;
    for (;;) {
        m |= 1ULL << b;
        uint64_t g = rifl_rng_geometric(&sp->rng, sp->cfg.ber);
        if (g >= 63u - b) {
            sp->gap = g == UINT64_MAX ? g : g - (63u - b);
            break;
        }
        b += 1 + (unsigned)g;
    }
    return m;
}

/* A slip made while the lane is up starts a recovery (one in progress goes
 * on).  One the other way before the aligner unlocked puts the bits back
 * where they were: nothing is left to recover from. */
static void slip_made(struct serial_phy *sp, unsigned kind)
{
    if (sp->slip_kind) {
        if (!sp->slip_down) {
            sp->slip_net += kind == 1 ? 1 : -1;
            if (sp->slip_net == 0) {
                sp->slip_kind = 0;
                sp->sst.slips_undone++;
            }
        }
        return;
    }
    if (!rifl_aligner_up(&sp->al))
        return;
    sp->slip_kind = kind;
    sp->slip_net = kind == 1 ? 1 : -1;
    sp->slip_at = rifl_aligner_get_stats(&sp->al)->frames;
    sp->slip_down = false;
}

/* rx_up fell and rose again after a slip: a recovery, in frames. */
static void recovery_event(struct serial_phy *sp, unsigned events)
{
    if (!sp->slip_kind)
        return;
    if (events & RIFL_ALIGNER_DOWN)
        sp->slip_down = true;
    if (!(events & RIFL_ALIGNER_UP) || !sp->slip_down)
        return;
    uint64_t n = rifl_aligner_get_stats(&sp->al)->frames - sp->slip_at;
    if (sp->slip_kind == 1) {
        sp->sst.recovered_lost++;
        sp->sst.recovery_frames_lost += n;
        if (n > sp->sst.recovery_max_lost)
            sp->sst.recovery_max_lost = n;
    } else {
        sp->sst.recovered_repeated++;
        sp->sst.recovery_frames_repeated += n;
        if (n > sp->sst.recovery_max_repeated)
            sp->sst.recovery_max_repeated = n;
    }
    sp->slip_kind = 0;
}

/* One slip before the next word is read: a lost bit or a repeated one,
 * when the line has room for it (refused and counted when not). */
static bool slip(struct serial_phy *sp, bool lose)
{
    uint64_t held = sp->wpos - sp->rpos; /* bits on the line now */
    if (lose && held + SLIP_ROOM > sp->length + 64 && held > 64 * (uint64_t)sp->wpf) {
        sp->rpos++;
        sp->sst.slips_lost++;
        slip_made(sp, 1);
    } else if (!lose && held < sp->length + SLIP_ROOM + 64 * (uint64_t)sp->wpf) {
        sp->rpos--;
        sp->sst.slips_repeated++;
        slip_made(sp, 2);
    } else {
        sp->sst.slips_refused++;
        return false;
    }
    return true;
}

/* A slip of the receiving transceiver, when one is due before this word. */
static inline void maybe_slip(struct serial_phy *sp)
{
    if (sp->slip_gap == UINT64_MAX)
        return;
    if (sp->slip_gap) {
        sp->slip_gap--;
        return;
    }
    sp->slip_gap = rifl_rng_geometric(&sp->srng, sp->slip_p);
    slip(sp, rifl_rng_next(&sp->srng) & 1u);
}

static unsigned serial_exchange(rifl_phy *p, uint64_t now, rifl_phy_form form,
                                rifl_phy_frame *out, unsigned max)
{
    struct serial_phy *sp = as_serial(p);
    (void)now;
    /* the sender's frame onto the line (no frame: the line carries zeros) */
    if (form == RIFL_PHY_CONTENT)
        sp->cfg.encode(sp->content, sp->wire, sp->cfg.encode_ctx);
    else if (form != RIFL_PHY_WIRE)
        memset(sp->wire, 0, sp->fbytes);
    uint64_t words[RIFL_FRAME_MAX_BYTES / 8];
    rifl_serial_words(sp->wire, sp->F, words);
    unsigned flipped = 0;
    for (unsigned i = 0; i < sp->wpf; i++) {
        uint64_t e = word_errors(sp);
        flipped += (unsigned)__builtin_popcountll(e);
        line_write(sp, words[i] ^ e);
    }
    if (form == RIFL_PHY_CONTENT || form == RIFL_PHY_WIRE) {
        /* (the zeros of a slot without a frame are no frame put on the
         * medium, and their errors hit none) */
        p->st.frames++;
        p->st.bits += sp->F;
        p->st.bit_errors += flipped;
        p->st.frames_hit += flipped != 0;
    }
    /* the receiving transceiver's words into the aligner */
    unsigned n = 0;
    for (unsigned i = 0; i < sp->wpf; i++) {
        maybe_slip(sp);
        uint64_t v = line_read(sp, sp->rpos);
        sp->rpos += 64;
        rifl_aligner_result r = rifl_aligner_push(&sp->al, v, n < 2 ? sp->out[n] : NULL);
        if (r.events & (RIFL_ALIGNER_UP | RIFL_ALIGNER_DOWN))
            recovery_event(sp, r.events);
        if ((r.events & RIFL_ALIGNER_FRAME) && n < 2) {
            sp->state[n] = (rifl_phy_serial_rx){ r.aligned, r.up };
            n++;
        }
    }
    unsigned k = n < max ? n : max;
    for (unsigned i = 0; i < k; i++) {
        out[i].form = RIFL_PHY_WIRE;
        out[i].data = sp->out[i];
    }
    p->st.delivered += k;
    p->st.dropped += n - k;
    return k;
}

static void serial_destroy(rifl_phy *p)
{
    struct serial_phy *sp = as_serial(p);
    free(sp->ring);
    free(sp->content);
    free(sp);
}

static const rifl_phy_ops serial_ops = {
    .name = "serial",
    .exchange = serial_exchange,
    .destroy = serial_destroy,
};

int rifl_phy_serial_create(const rifl_phy_serial_config *cfg, rifl_phy **out, char *msg,
                           size_t msglen)
{
    if (!cfg || !out)
        return rifl_null_arg(msg, msglen, "rifl_phy_serial_create", cfg ? "out" : "cfg");
    *out = NULL;
    rifl_aligner_config ac = { .frame_bits = cfg->frame_bits, .up_log2 = cfg->up_log2 };
    rifl_aligner al;
    int rc = rifl_aligner_init(&al, &ac, msg, msglen);
    if (rc != RIFL_OK)
        return rc;
    if (!(cfg->ber >= 0.0 && cfg->ber <= 0.5)) {
        rifl_msg(msg, msglen, "serial lane: bit error rate %g is out of range; use a value "
                 "from 0 to 0.5", cfg->ber);
        return RIFL_ERR_CONFIG;
    }
    if (!(cfg->slip_rate >= 0.0 && cfg->slip_rate <= 1.0)) {
        rifl_msg(msg, msglen, "serial lane: slip rate %g per frame is out of range; use a "
                 "value from 0 to 1", cfg->slip_rate);
        return RIFL_ERR_CONFIG;
    }
    if (cfg->delay_frames > (1u << 24) || cfg->delay_bits > (1u << 24)) {
        rifl_msg(msg, msglen, "serial lane: a line of %u frames and %u bits is too long; use "
                 "at most 16777216 of each", cfg->delay_frames, cfg->delay_bits);
        return RIFL_ERR_CONFIG;
    }
    if (cfg->content_bytes && !cfg->encode) {
        rifl_msg(msg, msglen, "serial lane: a sender that gives frames by content needs its "
                 "encode function");
        return RIFL_ERR_CONFIG;
    }
    if (cfg->content_bytes > (1u << 16)) {
        rifl_msg(msg, msglen, "serial lane: frame content of %zu bytes: use at most 65536",
                 cfg->content_bytes);
        return RIFL_ERR_CONFIG;
    }
    /* the line, the slots' words and room for slips, in a power of two */
    uint64_t length = (uint64_t)cfg->delay_frames * cfg->frame_bits + cfg->delay_bits;
    uint64_t need = (length + 2u * SLIP_ROOM) / 64 + 4u * (cfg->frame_bits / 64) + 4;
    uint64_t words = 1;
    while (words < need)
        words <<= 1;
    uint64_t bytes = words * 8 + cfg->content_bytes;
    if (bytes > RIFL_PHY_MAX_BYTES) {
        rifl_msg(msg, msglen, "serial lane: a line of %u frames of %u bits and %u bits takes "
                 "%llu MiB, more than the %llu MiB a PHY may take; lower delay_frames, "
                 "delay_bits or frame_bits", cfg->delay_frames, cfg->frame_bits,
                 cfg->delay_bits, (unsigned long long)(bytes >> 20),
                 (unsigned long long)(RIFL_PHY_MAX_BYTES >> 20));
        return RIFL_ERR_CONFIG;
    }
    struct serial_phy *sp = calloc(1, sizeof *sp);
    if (!sp)
        return RIFL_ERR_NOMEM;
    sp->phy.ops = &serial_ops;
    sp->phy.forms = 1u << RIFL_PHY_WIRE | (cfg->content_bytes ? 1u << RIFL_PHY_CONTENT : 0);
    sp->phy.frame_bytes = cfg->frame_bits / 8;
    sp->cfg = *cfg;
    sp->F = cfg->frame_bits;
    sp->wpf = cfg->frame_bits / 64;
    sp->fbytes = cfg->frame_bits / 8;
    sp->al = al;
    sp->length = length;
    sp->ring = calloc(words, sizeof *sp->ring);
    if (cfg->content_bytes)
        sp->content = calloc(1, cfg->content_bytes);
    if (!sp->ring || (cfg->content_bytes && !sp->content)) {
        serial_destroy(&sp->phy);
        return RIFL_ERR_NOMEM;
    }
    sp->mask = words - 1;
    rifl_rng_seed(&sp->rng, cfg->seed);
    rifl_rng_seed(&sp->srng, cfg->seed ^ 0x5e71a1u);
    /* the bits on the line before the sender's first frame: noise */
    sp->wpos = SLIP_ROOM + 64; /* keeps positions clear of zero */
    sp->rpos = sp->wpos;
    for (uint64_t b = 0; b < sp->length; b += 64) {
        unsigned k = sp->length - b < 64 ? (unsigned)(sp->length - b) : 64;
        uint64_t v = rifl_rng_next(&sp->srng);
        line_write(sp, v);
        sp->wpos -= 64 - k;
    }
    sp->gap = rifl_rng_geometric(&sp->rng, cfg->ber);
    sp->slip_p = cfg->slip_rate / sp->wpf;
    sp->slip_gap = cfg->slip_rate > 0 ? rifl_rng_geometric(&sp->srng, sp->slip_p) : UINT64_MAX;
    sp->phy.tx[RIFL_PHY_WIRE] = sp->wire;
    sp->phy.tx[RIFL_PHY_CONTENT] = sp->content;
    *out = &sp->phy;
    return RIFL_OK;
}

static bool is_serial(const rifl_phy *p) { return p && p->ops == &serial_ops; }

rifl_phy_serial_rx rifl_phy_serial_rx_state(const rifl_phy *p, unsigned k)
{
    if (!is_serial(p) || k > 1)
        return (rifl_phy_serial_rx){ false, false };
    return as_cserial(p)->state[k];
}

const rifl_aligner *rifl_phy_serial_aligner(const rifl_phy *p)
{
    return is_serial(p) ? &as_cserial(p)->al : NULL;
}

int rifl_phy_serial_slip(rifl_phy *p, bool lose)
{
    if (!is_serial(p))
        return RIFL_ERR_INVALID_ARG;
    return slip(as_serial(p), lose) ? RIFL_OK : RIFL_ERR_STATE;
}

const rifl_phy_serial_stats *rifl_phy_serial_get_stats(const rifl_phy *p)
{
    return is_serial(p) ? &as_cserial(p)->sst : NULL;
}

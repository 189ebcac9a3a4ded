/* The simulated cable PHY: a delay line of whole frames with independent
 * random bit errors, skipping ahead to the next error instead of drawing per
 * bit.  Frames travel by content (copied, never read) and are built by the
 * sender's encode function only when an error falls in them. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/frame.h"
#include "rifl/phy.h"
#include "rifl/rng.h"

#include "delay_line.h"

struct channel {
    rifl_phy phy;
    rifl_phy_channel_config cfg;
    unsigned fbytes;
    struct delay_line dl;
    uint8_t *wire;          /* wire bytes of each entry */
    uint8_t *content;       /* content of each entry */
    size_t cstride;         /* content_bytes rounded up to the strictest
                               alignment, so every entry is aligned */
    uint64_t gap;           /* error-free bits before the next error */
    rifl_rng rng;
};

static const rifl_phy_ops channel_ops;

static struct channel *as_channel(rifl_phy *p) { return (struct channel *)p; }
static const struct channel *as_cchannel(const rifl_phy *p) { return (const struct channel *)p; }

/* point the header's tx buffers at entry `pos` */
static void set_tx(struct channel *ch)
{
    unsigned pos = ch->dl.pos;
    ch->phy.tx[RIFL_PHY_WIRE] = ch->wire + (size_t)pos * ch->fbytes;
    ch->phy.tx[RIFL_PHY_CONTENT] = ch->content ? ch->content + pos * ch->cstride : NULL;
}

/* Account for one frame put on the wire; true when the next error falls
 * inside it (then flip_bits must follow). */
static inline bool frame_hit(struct channel *ch)
{
    unsigned F = ch->cfg.frame_bits;
    ch->phy.st.frames++;
    ch->phy.st.bits += F;
    if (ch->gap >= F) {
        if (ch->gap != UINT64_MAX)
            ch->gap -= F;
        return false;
    }
    return true;
}

/* The error bits of a hit frame (the first at *gap < F), drawing the gaps
 * that follow from *rng; *gap ends as the gap after the frame.  Each bit
 * goes to `slot` (flipped) when there is one, and its position to `at`
 * (at most `max`).  Returns the bits hit. */
static unsigned draw_bits(uint64_t *gap, rifl_rng *rng, double ber, unsigned F, uint8_t *slot,
                          uint16_t *at, unsigned max)
{
    unsigned bit = (unsigned)*gap;
    unsigned hits = 0;
    while (bit < F) {
        if (slot)
            slot[bit >> 3] ^= (uint8_t)(0x80u >> (bit & 7));
        if (hits < max)
            at[hits] = (uint16_t)bit;
        hits++;
        uint64_t g = rifl_rng_geometric(rng, ber);
        if (g >= (uint64_t)F) {
            *gap = g == UINT64_MAX ? g : g - (F - 1 - bit);
            bit = F;
        } else if (bit + 1 + (unsigned)g >= F) {
            *gap = (uint64_t)(bit + 1 + (unsigned)g - F);
            bit = F;
        } else {
            bit += 1 + (unsigned)g;
        }
    }
    return hits;
}

/* Flip this frame's error bits, drawing the gaps that follow. */
static void flip_bits(struct channel *ch, uint8_t *slot)
{
    ch->phy.st.bit_errors += draw_bits(&ch->gap, &ch->rng, ch->cfg.ber, ch->cfg.frame_bits, slot,
                                       NULL, 0);
    ch->phy.st.frames_hit++;
}

/* An error falls in the frame of this slot: build it and flip its bits. */
static __attribute__((noinline)) void hit(struct channel *ch, rifl_phy_form form)
{
    unsigned pos = ch->dl.pos;
    uint8_t *w = ch->wire + (size_t)pos * ch->fbytes;
    if (form == RIFL_PHY_CONTENT)
        ch->cfg.encode(ch->content + pos * ch->cstride, w, ch->cfg.encode_ctx);
    flip_bits(ch, w);
}

unsigned rifl_phy_channel_exchange(rifl_phy *p, uint64_t now, rifl_phy_form form,
                                   rifl_phy_frame *out, unsigned max)
{
    if (!p || p->ops != &channel_ops || (max && !out))
        return 0;
    struct channel *ch = as_channel(p);
    (void)now;
    form = rifl_phy_sent_form(p, form);
    if (form != RIFL_PHY_NONE && frame_hit(ch)) {
        hit(ch, form);
        form = RIFL_PHY_WIRE;
    }
    struct delay_line *dl = &ch->dl;
    dl->form[dl->pos] = (uint8_t)form;
    rifl_phy_form got = form;
    const void *data = p->tx[form];
    if (dl->delay) {
        /* the entry after this one holds the frame sent `delay` slots ago,
         * and takes the next slot's frame once it has left */
        unsigned next = dl->pos + 1;
        if (next == dl->slots) {
            next = 0;
            p->tx[RIFL_PHY_WIRE] = ch->wire;
            p->tx[RIFL_PHY_CONTENT] = ch->content;
        } else {
            p->tx[RIFL_PHY_WIRE] = (uint8_t *)p->tx[RIFL_PHY_WIRE] + ch->fbytes;
            if (ch->content)
                p->tx[RIFL_PHY_CONTENT] = (uint8_t *)p->tx[RIFL_PHY_CONTENT] + ch->cstride;
        }
        dl->pos = dl->out = next;
        got = (rifl_phy_form)dl->form[next];
        data = p->tx[got];
    }
    if (got == RIFL_PHY_NONE || max == 0)
        return 0;
    out->form = got;
    out->data = data;
    p->st.delivered++;
    return 1;
}

int rifl_phy_channel_pass(rifl_phy *p, const void *content, uint8_t *wire)
{
    if (!p || p->ops != &channel_ops || !as_channel(p)->content || !content || !wire)
        return RIFL_ERR_INVALID_ARG;
    struct channel *ch = as_channel(p);
    ch->phy.st.delivered++;
    ch->dl.pos = ch->dl.pos + 1 == ch->dl.slots ? 0 : ch->dl.pos + 1;
    set_tx(ch);
    if (!frame_hit(ch))
        return 0;
    ch->cfg.encode(content, wire, ch->cfg.encode_ctx);
    flip_bits(ch, wire);
    return 1;
}

unsigned rifl_phy_channel_peek(const rifl_phy *p, rifl_phy_hit *out, unsigned max)
{
    if (!p || p->ops != &channel_ops || (max && !out))
        return 0;
    const struct channel *ch = as_cchannel(p);
    unsigned F = ch->cfg.frame_bits;
    uint64_t gap = ch->gap, at = 0;
    rifl_rng rng = ch->rng;
    unsigned n = 0;
    while (n < max && gap != UINT64_MAX) {
        at += gap / F;
        gap %= F;
        memset(&out[n], 0, sizeof out[n]);
        out[n].frame = at;
        out[n].nbits = draw_bits(&gap, &rng, ch->cfg.ber, F, NULL, out[n].bit, RIFL_PHY_HIT_BITS);
        n++;
        at++;
    }
    return n;
}

int rifl_phy_channel_skip_hits(rifl_phy *p, uint64_t frames)
{
    if (!p || p->ops != &channel_ops)
        return RIFL_ERR_INVALID_ARG;
    struct channel *ch = as_channel(p);
    unsigned F = ch->cfg.frame_bits;
    if (frames > (UINT64_MAX - ch->phy.st.bits) / F)
        return RIFL_ERR_INVALID_ARG;
    while (frames) {
        uint64_t clear = ch->gap == UINT64_MAX ? UINT64_MAX : ch->gap / F;
        uint64_t k = clear < frames ? clear : frames;
        if (k) {
            int rc = rifl_phy_skip(p, k);
            if (rc != RIFL_OK)
                return rc;
            frames -= k;
            continue;
        }
        /* a hit frame: what rifl_phy_channel_pass does, but its bytes */
        ch->phy.st.delivered++;
        ch->dl.pos = ch->dl.pos + 1 == ch->dl.slots ? 0 : ch->dl.pos + 1;
        set_tx(ch);
        if (frame_hit(ch))
            flip_bits(ch, NULL);
        frames--;
    }
    return RIFL_OK;
}

static uint64_t ch_clear_slots(const rifl_phy *p)
{
    const struct channel *ch = as_cchannel(p);
    if (ch->gap == UINT64_MAX)
        return UINT64_MAX;
    return ch->gap / ch->cfg.frame_bits;
}

static int ch_skip(rifl_phy *p, uint64_t frames)
{
    struct channel *ch = as_channel(p);
    unsigned F = ch->cfg.frame_bits;
    if ((ch->gap != UINT64_MAX && frames > ch->gap / F) ||
        frames > (UINT64_MAX - ch->phy.st.bits) / F) /* (the bit count would wrap) */
        return RIFL_ERR_INVALID_ARG;
    ch->phy.st.frames += frames;
    ch->phy.st.bits += frames * F;
    ch->phy.st.delivered += frames;
    if (ch->gap != UINT64_MAX)
        ch->gap -= frames * F;
    ch->dl.pos = (unsigned)((ch->dl.pos + frames % ch->dl.slots) % ch->dl.slots);
    set_tx(ch);
    return RIFL_OK;
}

static void *ch_inflight(rifl_phy *p, unsigned k, rifl_phy_form form)
{
    struct channel *ch = as_channel(p);
    if (k >= ch->dl.delay || form == RIFL_PHY_NONE || (form == RIFL_PHY_CONTENT && !ch->content))
        return NULL;
    unsigned e = delay_line_ahead(&ch->dl, k);
    ch->dl.form[e] = (uint8_t)form;
    return form == RIFL_PHY_WIRE ? (void *)(ch->wire + (size_t)e * ch->fbytes)
                                 : (void *)(ch->content + e * ch->cstride);
}

static rifl_phy_form ch_inflight_form(const rifl_phy *p, unsigned k)
{
    const struct channel *ch = as_cchannel(p);
    if (k >= ch->dl.delay)
        return RIFL_PHY_NONE;
    return (rifl_phy_form)ch->dl.form[delay_line_ahead(&ch->dl, k)];
}

static void ch_destroy(rifl_phy *p)
{
    struct channel *ch = as_channel(p);
    delay_line_free(&ch->dl);
    free(ch->wire);
    free(ch->content);
    free(ch);
}

static const rifl_phy_ops channel_ops = {
    .name = "channel", .exchange = rifl_phy_channel_exchange, .clear_slots = ch_clear_slots, .skip = ch_skip, .inflight = ch_inflight,
    .inflight_form = ch_inflight_form,
    .destroy = ch_destroy,
};

int rifl_phy_channel_create(const rifl_phy_channel_config *cfg, rifl_phy **out, char *msg,
                            size_t msglen)
{
    if (!cfg || !out)
        return rifl_null_arg(msg, msglen, "rifl_phy_channel_create", cfg ? "out" : "cfg");
    *out = NULL;
    if (rifl_frame_width_check(cfg->frame_bits) != RIFL_OK) {
        rifl_msg(msg, msglen, "frame width %u is not supported; use 64, 128, 256, 512, 1024 "
                 "or 2048", cfg->frame_bits);
        return RIFL_ERR_CONFIG;
    }
    if (!(cfg->ber >= 0.0 && cfg->ber <= 0.5)) {
        rifl_msg(msg, msglen, "bit error rate %g is out of range; use a value from 0 to 0.5",
                 cfg->ber);
        return RIFL_ERR_CONFIG;
    }
    if (cfg->delay_frames > (1u << 24)) {
        rifl_msg(msg, msglen, "channel delay of %u frames is too long; use at most 16777216",
                 cfg->delay_frames);
        return RIFL_ERR_CONFIG;
    }
    if (cfg->content_bytes && !cfg->encode) {
        rifl_msg(msg, msglen, "a channel that carries frames by content needs the sender's "
                 "encode function");
        return RIFL_ERR_CONFIG;
    }
    if (cfg->content_bytes > (1u << 16)) {
        rifl_msg(msg, msglen, "frame content of %zu bytes: use at most 65536", cfg->content_bytes);
        return RIFL_ERR_CONFIG;
    }
    /* each entry of the delay line: its wire bytes, its content, its form */
    size_t a = _Alignof(max_align_t);
    size_t cstride = (cfg->content_bytes + a - 1) / a * a;
    uint64_t bytes = ((uint64_t)cfg->delay_frames + 1) * (cfg->frame_bits / 8 + cstride + 1);
    if (bytes > RIFL_PHY_MAX_BYTES) {
        rifl_msg(msg, msglen, "channel delay of %u frames of %u bits%s takes %llu MiB, more "
                 "than the %llu MiB a PHY may take; lower delay_frames (a shorter cable)%s",
                 cfg->delay_frames, cfg->frame_bits,
                 cfg->content_bytes ? " carried by content" : "",
                 (unsigned long long)(bytes >> 20),
                 (unsigned long long)(RIFL_PHY_MAX_BYTES >> 20),
                 cfg->content_bytes ? ", frame_bits or content_bytes" : " or frame_bits");
        return RIFL_ERR_CONFIG;
    }
    struct channel *ch = calloc(1, sizeof *ch);
    if (!ch)
        return RIFL_ERR_NOMEM;
    ch->phy.ops = &channel_ops;
    ch->phy.forms = 1u << RIFL_PHY_WIRE | (cfg->content_bytes ? 1u << RIFL_PHY_CONTENT : 0);
    ch->phy.frame_bytes = cfg->frame_bits / 8;
    ch->cfg = *cfg;
    ch->fbytes = cfg->frame_bits / 8;
    ch->cstride = cstride;
    int rc = delay_line_init(&ch->dl, cfg->delay_frames);
    ch->wire = calloc(ch->dl.slots, ch->fbytes);
    if (cfg->content_bytes)
        ch->content = calloc(ch->dl.slots, ch->cstride);
    if (rc || !ch->wire || (cfg->content_bytes && !ch->content)) {
        ch_destroy(&ch->phy);
        return RIFL_ERR_NOMEM;
    }
    rifl_rng_seed(&ch->rng, cfg->seed);
    ch->gap = rifl_rng_geometric(&ch->rng, cfg->ber);
    set_tx(ch);
    *out = &ch->phy;
    return RIFL_OK;
}

int rifl_phy_channel_set_ber(rifl_phy *p, double ber)
{
    if (!p || p->ops != &channel_ops || !(ber >= 0.0 && ber <= 0.5))
        return RIFL_ERR_INVALID_ARG;
    struct channel *ch = as_channel(p);
    ch->cfg.ber = ber;
    ch->gap = rifl_rng_geometric(&ch->rng, ber);
    return RIFL_OK;
}

/* One-way channel: a delay line of whole frames with independent random bit
 * errors, skipping ahead to the next error instead of drawing per bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/sim.h"
#include "../common/msg.h"

struct rifl_channel {
    rifl_channel_config cfg;
    unsigned fbytes;
    unsigned slots;        /* delay_frames + 1 ring entries */
    unsigned pos;          /* next entry to write */
    uint8_t *ring;         /* frames in flight */
    uint8_t *valid;        /* entry holds a frame */
    rifl_channel_frame *frames; /* frames by content, and their records */
    uint8_t *recs;
    unsigned stride;
    uint64_t gap;          /* error-free bits before the next error */
    rifl_rng rng;
    rifl_channel_stats st;
};

int rifl_channel_create(const rifl_channel_config *cfg, rifl_channel **out,
                        char *msg, size_t msglen)
{
    if (!cfg || !out)
        return rifl_null_arg(msg, msglen, "rifl_channel_create", cfg ? "out" : "cfg");
    *out = NULL;
    if (rifl_frame_width_check(cfg->frame_bits) != RIFL_OK) {
        if (msg)
            snprintf(msg, msglen, "frame width %u is not supported; use 64, 128, 256, "
                     "512, 1024 or 2048", cfg->frame_bits);
        return RIFL_ERR_CONFIG;
    }
    if (!(cfg->ber >= 0.0 && cfg->ber <= 0.5)) {
        if (msg)
            snprintf(msg, msglen, "bit error rate %g is out of range; use a value from "
                     "0 to 0.5", cfg->ber);
        return RIFL_ERR_CONFIG;
    }
    if (cfg->delay_frames > (1u << 24)) {
        if (msg)
            snprintf(msg, msglen, "channel delay of %u frames is too long; use at most "
                     "16777216", cfg->delay_frames);
        return RIFL_ERR_CONFIG;
    }
    rifl_channel *ch = calloc(1, sizeof *ch);
    if (!ch)
        return RIFL_ERR_NOMEM;
    ch->cfg = *cfg;
    ch->fbytes = cfg->frame_bits / 8;
    ch->slots = cfg->delay_frames + 1;
    ch->stride = ch->fbytes - 1;
    ch->ring = calloc(ch->slots, ch->fbytes);
    ch->valid = calloc(ch->slots, 1);
    ch->frames = calloc(ch->slots, sizeof *ch->frames);
    ch->recs = calloc(ch->slots, ch->stride);
    if (!ch->ring || !ch->valid || !ch->frames || !ch->recs) {
        rifl_channel_free(ch);
        return RIFL_ERR_NOMEM;
    }
    rifl_rng_seed(&ch->rng, cfg->seed);
    ch->gap = rifl_rng_geometric(&ch->rng, cfg->ber);
    *out = ch;
    return RIFL_OK;
}

void rifl_channel_free(rifl_channel *ch)
{
    if (!ch)
        return;
    free(ch->ring);
    free(ch->valid);
    free(ch->frames);
    free(ch->recs);
    free(ch);
}

const rifl_channel_stats *rifl_channel_get_stats(const rifl_channel *ch)
{
    return &ch->st;
}

/* Account for one frame put on the wire; true when the next error falls
 * inside it (then flip_bits must follow). */
static inline bool frame_hit(rifl_channel *ch)
{
    unsigned F = ch->cfg.frame_bits;
    ch->st.frames++;
    ch->st.bits += F;
    if (ch->gap >= F) {
        if (ch->gap != UINT64_MAX)
            ch->gap -= F;
        return false;
    }
    return true;
}

/* Flip this frame's error bits, drawing the gaps that follow. */
static void flip_bits(rifl_channel *ch, uint8_t *slot)
{
    unsigned F = ch->cfg.frame_bits;
    unsigned bit = (unsigned)ch->gap;
    unsigned hits = 0;
    while (bit < F) {
        slot[bit >> 3] ^= (uint8_t)(0x80u >> (bit & 7));
        hits++;
        uint64_t g = rifl_rng_geometric(&ch->rng, ch->cfg.ber);
        if (g >= (uint64_t)F) {
            ch->gap = g == UINT64_MAX ? g : g - (F - 1 - bit);
            bit = F;
        } else if (bit + 1 + (unsigned)g >= F) {
            ch->gap = (uint64_t)(bit + 1 + (unsigned)g - F);
            bit = F;
        } else {
            bit += 1 + (unsigned)g;
        }
    }
    ch->st.bit_errors += hits;
    ch->st.frames_hit++;
}

/* The ring entry leaving in this slot (written `delay` slots ago); moves the
 * ring on. */
static inline unsigned advance(rifl_channel *ch)
{
    unsigned next = ch->pos + 1 == ch->slots ? 0 : ch->pos + 1;
    unsigned outpos = ch->cfg.delay_frames == 0 ? ch->pos : next;
    ch->pos = next;
    return outpos;
}

const uint8_t *rifl_channel_step(rifl_channel *ch, const uint8_t *sent)
{
    uint8_t *slot = ch->ring + (size_t)ch->pos * ch->fbytes;
    if (sent) {
        memcpy(slot, sent, ch->fbytes);
        ch->valid[ch->pos] = 1;
        if (frame_hit(ch))
            flip_bits(ch, slot);
    } else {
        ch->valid[ch->pos] = 0;
    }
    unsigned outpos = advance(ch);
    return ch->valid[outpos] ? ch->ring + (size_t)outpos * ch->fbytes : NULL;
}

/* Entry `idx` now holds the frame written into it: keep its record. */
static void keep_frame(rifl_channel *ch, unsigned idx)
{
    rifl_channel_frame *e = &ch->frames[idx];
    if (e->f.rec) {
        uint8_t *rec = ch->recs + (size_t)idx * ch->stride;
        memcpy(rec, e->f.rec, ch->stride);
        e->f.rec = rec;
    }
    e->wire = NULL;
    ch->valid[idx] = 1;
}

rifl_lane_frame *rifl_channel_frame_in(rifl_channel *ch)
{
    return &ch->frames[ch->pos].f;
}

const rifl_channel_frame *rifl_channel_step_frame(rifl_channel *ch, bool sent)
{
    if (sent) {
        rifl_channel_frame *e = &ch->frames[ch->pos];
        keep_frame(ch, ch->pos);
        if (frame_hit(ch)) {
            uint8_t *slot = ch->ring + (size_t)ch->pos * ch->fbytes;
            rifl_lane_frame_encode(&e->f, ch->cfg.frame_bits, slot);
            flip_bits(ch, slot);
            e->wire = slot;
        }
    } else {
        ch->valid[ch->pos] = 0;
    }
    unsigned outpos = advance(ch);
    return ch->valid[outpos] ? &ch->frames[outpos] : NULL;
}

void rifl_channel_inflight_frame(rifl_channel *ch, unsigned k, const rifl_lane_frame *f)
{
    unsigned idx = (ch->pos + 1 + k) % ch->slots;
    ch->frames[idx].f = *f;
    keep_frame(ch, idx);
}

int rifl_channel_set_ber(rifl_channel *ch, double ber)
{
    if (!ch || !(ber >= 0.0 && ber <= 0.5))
        return RIFL_ERR_INVALID_ARG;
    ch->cfg.ber = ber;
    ch->gap = rifl_rng_geometric(&ch->rng, ber);
    return RIFL_OK;
}

uint64_t rifl_channel_clear_frames(const rifl_channel *ch)
{
    if (ch->gap == UINT64_MAX)
        return UINT64_MAX;
    return ch->gap / ch->cfg.frame_bits;
}

void rifl_channel_skip(rifl_channel *ch, uint64_t frames)
{
    unsigned F = ch->cfg.frame_bits;
    ch->st.frames += frames;
    ch->st.bits += frames * F;
    if (ch->gap != UINT64_MAX)
        ch->gap -= frames * F;
    ch->pos = (unsigned)((ch->pos + frames % ch->slots) % ch->slots);
}

uint8_t *rifl_channel_inflight(rifl_channel *ch, unsigned k)
{
    unsigned idx = (ch->pos + 1 + k) % ch->slots;
    ch->valid[idx] = 1;
    return ch->ring + (size_t)idx * ch->fbytes;
}

/* A lane as a serial bit stream (rifl/serial.h): transceiver words and the
 * receive aligner of rifl-multilane §1-§2.
 *
 * The aligner keeps the last word received and a candidate start (a bit
 * offset in a word and the word at which the next frame begins).  Each
 * received word completes one 64-bit window at that offset, made of the
 * previous word's upper bits and this word's lower ones: a frame word.  The
 * first word of every frame is its header check; F/64 of them make the
 * frame.  A slide moves the start one bit later from the next frame on:
 * past bit 63 the offset wraps to 0 and the frame starts a word later (one
 * window is dropped). */
#include <string.h>

#include "link_priv.h"
#include "rifl/serial.h"

static bool serial_width_ok(unsigned F)
{
    return F >= 64 && F <= 2048 && (F & (F - 1)) == 0;
}

int rifl_serial_words(const uint8_t *frame, unsigned frame_bits, uint64_t *words)
{
    if (!frame || !words || !serial_width_ok(frame_bits))
        return RIFL_ERR_INVALID_ARG;
    for (unsigned w = 0; w < frame_bits / 64; w++) {
        uint64_t v = 0;
        for (unsigned i = 0; i < 8; i++)
            v = v << 8 | frame[8 * w + i];
        words[w] = v;
    }
    return RIFL_OK;
}

int rifl_serial_frame(const uint64_t *words, unsigned frame_bits, uint8_t *frame)
{
    if (!frame || !words || !serial_width_ok(frame_bits))
        return RIFL_ERR_INVALID_ARG;
    for (unsigned w = 0; w < frame_bits / 64; w++)
        for (unsigned i = 0; i < 8; i++)
            frame[8 * w + i] = (uint8_t)(words[w] >> (56 - 8 * i));
    return RIFL_OK;
}

int rifl_aligner_init(rifl_aligner *a, const rifl_aligner_config *cfg, char *msg, size_t msglen)
{
    if (!a || !cfg)
        return rifl_null_arg(msg, msglen, "rifl_aligner_init", a ? "cfg" : "a");
    if (!serial_width_ok(cfg->frame_bits)) {
        rifl_msg(msg, msglen,
                 "aligner: frame_bits %u: a serial lane carries frames of 64, 128, 256, 512, "
                 "1024 or 2048 bits",
                 cfg->frame_bits);
        return RIFL_ERR_CONFIG;
    }
    unsigned up = cfg->up_log2 ? cfg->up_log2 : RIFL_ALIGNER_UP_LOG2;
    if (up > 24) {
        rifl_msg(msg, msglen,
                 "aligner: up_log2 %u: rx_up counts at most 2^24 words; use 20 (the "
                 "reference) or 12 (its simulation build)",
                 cfg->up_log2);
        return RIFL_ERR_CONFIG;
    }
    memset(a, 0, sizeof *a);
    a->F = cfg->frame_bits;
    a->words_per_frame = cfg->frame_bits / 64;
    a->up_max = (uint32_t)1 << up;
    return RIFL_OK;
}

/* The header check of one frame (rifl-multilane §2): windows of 17 checks;
 * the first 16 headers counted, the 17th check clears the counts; lock at
 * the 17th with all 16 valid; slide at the first check after two invalid
 * headers in a window.  Every decision uses the counts as they were before
 * this check. */
static void check_header(rifl_aligner *a, uint64_t word0, rifl_aligner_result *r)
{
    unsigned v = a->valid, u = a->invalid;
    if (a->window == 16 || u >= 2) {
        a->valid = a->invalid = 0;
    } else if (rifl_serial_header_valid(word0)) {
        a->valid++;
        a->st.headers_valid++;
    } else {
        a->invalid++;
        a->st.headers_invalid++;
    }
    if (u >= 2) {
        if (a->aligned) {
            a->aligned = false;
            a->st.unlocks++;
            r->events |= RIFL_ALIGNER_UNLOCK;
        }
        a->slide_pending = true;
        a->candidate = (a->candidate + 1) & (a->F - 1);
        a->st.slides++;
        r->events |= RIFL_ALIGNER_SLIDE;
    } else if (v >= 16 && !a->aligned) {
        a->aligned = true;
        a->st.locks++;
        r->events |= RIFL_ALIGNER_LOCK;
    }
    a->window = a->window == 16 ? 0 : a->window + 1;
}

/* rx_up: up while the counter is at its top (counted with the alignment
 * the word was received under). */
static void count_up(rifl_aligner *a, bool aligned, rifl_aligner_result *r)
{
    if (aligned) {
        if (a->up_count < a->up_max)
            a->up_count++;
    } else if (a->up_count) {
        a->up_count--;
    }
    bool up = a->up_count == a->up_max;
    if (up != a->up) {
        a->up = up;
        if (up) {
            a->st.ups++;
            r->events |= RIFL_ALIGNER_UP;
        } else {
            a->st.downs++;
            r->events |= RIFL_ALIGNER_DOWN;
        }
    }
}

rifl_aligner_result rifl_aligner_push(rifl_aligner *a, uint64_t word, uint8_t *frame)
{
    rifl_aligner_result r = { 0, false, false };
    if (!a || !a->F)
        return r;
    bool was_aligned = a->aligned;
    a->st.words++;
    if (a->have_prev) {
        uint64_t x = a->bit ? (a->prev >> a->bit) | (word << (64 - a->bit)) : a->prev;
        if (a->skip) {
            a->skip--;
        } else {
            a->frame[a->phase] = x;
            if (a->phase == 0)
                check_header(a, x, &r);
            if (++a->phase == a->words_per_frame) {
                a->phase = 0;
                a->st.frames++;
                r.events |= RIFL_ALIGNER_FRAME;
                if (frame)
                    rifl_serial_frame(a->frame, a->F, frame);
                if (a->slide_pending) {
                    a->slide_pending = false;
                    if (++a->bit == 64) {
                        a->bit = 0;
                        a->skip = 1;
                    }
                }
            }
        }
    }
    a->prev = word;
    a->have_prev = true;
    count_up(a, was_aligned, &r);
    r.aligned = a->aligned;
    r.up = a->up;
    return r;
}

unsigned rifl_aligner_offset(const rifl_aligner *a) { return a ? a->candidate : 0; }
bool rifl_aligner_aligned(const rifl_aligner *a) { return a && a->aligned; }
bool rifl_aligner_up(const rifl_aligner *a) { return a && a->up; }
uint32_t rifl_aligner_up_count(const rifl_aligner *a) { return a ? a->up_count : 0; }
const rifl_aligner_stats *rifl_aligner_get_stats(const rifl_aligner *a) { return a ? &a->st : NULL; }

#define C(f, m) RIFL_COUNTER(rifl_aligner_stats, f, m)
static const rifl_counter aligner_counters[] = {
    C(words, "transceiver words received"),
    C(frames, "frames assembled at the candidate start"),
    C(headers_valid, "frame headers checked and valid (SYN 01 or 10)"),
    C(headers_invalid, "frame headers checked and invalid (SYN 00 or 11)"),
    C(locks, "times the lane became aligned"),
    C(unlocks, "times the lane lost alignment (two invalid headers in a window)"),
    C(slides, "moves to the next candidate frame start"),
    C(ups, "times rx_up rose"),
    C(downs, "times rx_up fell"),
};
RIFL_COUNTER_TABLE(rifl_aligner_counters, aligner_counters, rifl_aligner_stats)

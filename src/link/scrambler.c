/* Self-synchronising scrambler 1 + x^13 + x^33 (link rules §5) applied to
 * byte-array frames.  The core is in link_priv.h. */
#include "rifl/frame.h"
#include "link_priv.h"

uint64_t rifl_scramble(uint8_t *frame, unsigned frame_bits, uint64_t state)
{
    if (!frame || rifl_frame_width_check(frame_bits) != RIFL_OK)
        return RIFL_SCRAMBLER_INVALID;
    unsigned m = frame_bits / 64;
    uint64_t w[RIFL_FRAME_MAX_BITS / 64], c[RIFL_FRAME_MAX_BITS / 64];
    for (unsigned i = 0; i < m; i++)
        w[i] = rifl_load_be64(frame + 8 * i);
    for (unsigned i = 0; i < m; i++) {
        c[i] = rifl_scr_chunk(rifl_region_chunk(w, i, m), state);
        state = rifl_hist_after(state, c[i], i + 1 == m);
    }
    rifl_region_store(w, c, m);
    for (unsigned i = 0; i < m; i++)
        rifl_store_be64(frame + 8 * i, w[i]);
    return state & RIFL_SCRAMBLER_MASK;
}

uint64_t rifl_descramble(uint8_t *frame, unsigned frame_bits, uint64_t state)
{
    if (!frame || rifl_frame_width_check(frame_bits) != RIFL_OK)
        return RIFL_SCRAMBLER_INVALID;
    unsigned m = frame_bits / 64;
    uint64_t w[RIFL_FRAME_MAX_BITS / 64], c[RIFL_FRAME_MAX_BITS / 64];
    for (unsigned i = 0; i < m; i++)
        w[i] = rifl_load_be64(frame + 8 * i);
    for (unsigned i = 0; i < m; i++) {
        uint64_t s = rifl_region_chunk(w, i, m);
        c[i] = rifl_descr_chunk(s, state);
        state = rifl_hist_after(state, s, i + 1 == m);
    }
    rifl_region_store(w, c, m);
    for (unsigned i = 0; i < m; i++)
        rifl_store_be64(frame + 8 * i, w[i]);
    return state & RIFL_SCRAMBLER_MASK;
}

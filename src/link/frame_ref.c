/* Bit-at-a-time reference implementations of the CRC and the scrambler,
 * written straight from the link rules.  They are the oracle the fast versions are
 * tested against; nothing on a hot path calls them. */
#include "rifl/frame.h"
#include "link_priv.h"

static unsigned get_bit(const uint8_t *f, unsigned i)
{
    return (f[i >> 3] >> (7 - (i & 7))) & 1u;
}

static void put_bit(uint8_t *f, unsigned i, unsigned v)
{
    uint8_t m = (uint8_t)(1u << (7 - (i & 7)));
    f[i >> 3] = (uint8_t)(v ? (f[i >> 3] | m) : (f[i >> 3] & ~m));
}

uint16_t rifl_crc12_ref(const uint8_t *frame, unsigned frame_bits)
{
    if (!frame || rifl_frame_width_check(frame_bits) != RIFL_OK)
        return RIFL_CRC12_INVALID;
    /* direct-form shift register (input bit XORed into the feedback), MSB
     * first, over all F bits with the 12 VCODE bits taken as zero */
    unsigned reg = 0;
    for (unsigned i = 0; i < frame_bits; i++) {
        unsigned in = i < frame_bits - 12 ? get_bit(frame, i) : 0;
        unsigned fb = ((reg >> 11) & 1u) ^ in;
        reg = (reg << 1) & 0xFFFu;
        if (fb)
            reg ^= RIFL_CRC12_POLY;
    }
    return (uint16_t)reg;
}

static uint64_t scr_ref(uint8_t *frame, unsigned frame_bits, uint64_t state, int descr)
{
    for (unsigned i = 2; i < frame_bits - 12; i++) {
        unsigned in = get_bit(frame, i);
        unsigned fb = (unsigned)(((state >> 12) ^ (state >> 32)) & 1u);
        unsigned out = in ^ fb;
        unsigned sent = descr ? in : out; /* the bit that is on the wire */
        put_bit(frame, i, out);
        state = ((state << 1) | sent) & RIFL_SCRAMBLER_MASK;
    }
    return state;
}

uint64_t rifl_scramble_ref(uint8_t *frame, unsigned frame_bits, uint64_t state)
{
    if (!frame || rifl_frame_width_check(frame_bits) != RIFL_OK)
        return RIFL_SCRAMBLER_INVALID;
    return scr_ref(frame, frame_bits, state & RIFL_SCRAMBLER_MASK, 0);
}

uint64_t rifl_descramble_ref(uint8_t *frame, unsigned frame_bits, uint64_t state)
{
    if (!frame || rifl_frame_width_check(frame_bits) != RIFL_OK)
        return RIFL_SCRAMBLER_INVALID;
    return scr_ref(frame, frame_bits, state & RIFL_SCRAMBLER_MASK, 1);
}

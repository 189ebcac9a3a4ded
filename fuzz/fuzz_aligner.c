/* Fuzz the receive aligner: any bit stream, cut into 64-bit transceiver
 * words, at any frame width and rx_up length, must never crash, and the
 * aligner's state and counters must stay within the rules' bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/serial.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    rifl_aligner_config cfg = { .frame_bits = 64u << (data[0] % 6),
                                .up_log2 = (data[0] >> 3) % 25 }; /* 0: the default */
    rifl_aligner a;
    if (rifl_aligner_init(&a, &cfg, NULL, 0) != RIFL_OK)
        abort();
    const uint32_t up_words = 1u << (cfg.up_log2 ? cfg.up_log2 : RIFL_ALIGNER_UP_LOG2);
    data++;
    size--;
    uint8_t frame[256];
    uint64_t words = 0, frames = 0, locks = 0, unlocks = 0;
    /* the stream is repeated to at least 40 frames, so that a lock (17
     * headers at one offset) fits at every frame width: 2048-bit frames
     * need 4,352 bytes for one, more than most inputs */
    const size_t in_words = size / 8, want = 40u * (cfg.frame_bits / 64);
    size_t rounds = in_words ? (want + in_words - 1) / in_words : 1;
    for (size_t r = 0; r < rounds; r++) {
        for (size_t i = 0; i + 8 <= size; i += 8) {
            uint64_t w;
            memcpy(&w, data + i, 8);
            rifl_aligner_result res = rifl_aligner_push(&a, w, frame);
            words++;
            frames += (res.events & RIFL_ALIGNER_FRAME) != 0;
            locks += (res.events & RIFL_ALIGNER_LOCK) != 0;
            unlocks += (res.events & RIFL_ALIGNER_UNLOCK) != 0;
            if (res.aligned != rifl_aligner_aligned(&a) || res.up != rifl_aligner_up(&a))
                abort();
            if (res.up && !(rifl_aligner_up_count(&a) == up_words))
                abort();
            if ((res.events & RIFL_ALIGNER_LOCK) && (res.events & RIFL_ALIGNER_UNLOCK))
                abort();
        }
    }
    /* a header is checked at its frame's first word, before the frame is out */
    const rifl_aligner_stats *st = rifl_aligner_get_stats(&a);
    if (st->words != words || st->frames != frames || st->locks != locks ||
        st->unlocks != unlocks || st->unlocks > st->locks || st->locks > st->unlocks + 1 ||
        st->slides < st->unlocks || st->headers_valid + st->headers_invalid > frames + 1 ||
        frames > words || rifl_aligner_offset(&a) >= cfg.frame_bits ||
        rifl_aligner_up_count(&a) > up_words || st->ups < st->downs ||
        st->ups > st->downs + 1)
        abort();
    return 0;
}

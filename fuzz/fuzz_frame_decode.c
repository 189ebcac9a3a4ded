/* Fuzz the frame decoder: any bytes as a frame of any supported width, with
 * any descrambler state, must decode without a crash, and a frame that is
 * re-encoded from its decoded fields must verify; the batch calls (the
 * receiver's check among them) agree with the frame-at-a-time one. */
#include <stdint.h>
#include <string.h>

#include "rifl/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const unsigned widths[] = { 64, 128, 256, 512, 1024, 2048 };
    if (size < 6)
        return 0;
    unsigned F = widths[data[0] % 6];
    uint64_t state = 0;
    memcpy(&state, data + 1, 5);
    data += 6;
    size -= 6;
    uint8_t frame[RIFL_FRAME_MAX_BYTES] = { 0 };
    memcpy(frame, data, size < F / 8 ? size : F / 8);

    uint64_t d = state, e = state;
    uint8_t payload[RIFL_PAYLOAD_MAX_BYTES];
    rifl_frame_info info;
    rifl_frame_decode(frame, F, &d, payload, &info);
    if (info.kind >= RIFL_KIND_COUNT || info.payload_len > rifl_payload_bytes(F))
        __builtin_trap();
    /* the decoder's descrambler state after a frame equals the encoder's */
    uint8_t again[RIFL_FRAME_MAX_BYTES];
    rifl_frame_encode(again, F, info.syn, info.meta, payload, info.id, &e);
    rifl_frame_info info2;
    uint64_t d2 = state;
    rifl_frame_decode(again, F, &d2, NULL, &info2);
    if (info2.id != info.id || info2.meta != info.meta || d2 != d || e != d)
        __builtin_trap();
    if (memcmp(again, frame, F / 8))
        __builtin_trap(); /* decode then encode must give the frame back */

    /* the batch decoder agrees with the frame-at-a-time one (8 frames of
     * 256 bits: the vector path where the CPU has it) */
    enum { NB = 9 };
    uint8_t many[NB * 32] = { 0 };
    memcpy(many, data, size < sizeof many ? size : sizeof many);
    rifl_frame_info bi[NB], si;
    uint8_t bp[NB * 30], sp[30];
    uint64_t bd = state & RIFL_SCRAMBLER_MASK, sd = bd;
    rifl_frame_decode_batch(many, 256, NB, &bd, bp, bi);
    for (int j = 0; j < NB; j++) {
        rifl_frame_decode(many + 32 * j, 256, &sd, sp, &si);
        if (si.id != bi[j].id || si.kind != bi[j].kind || si.key != bi[j].key ||
            si.payload_len != bi[j].payload_len || memcmp(sp, bp + 30 * j, 30))
            __builtin_trap();
    }
    if (sd != bd)
        __builtin_trap();
    /* the receiver's call: expecting each frame's own ID when the input says
     * so, a wrong one otherwise; it flags exactly the frames that are not
     * good data frames inside a packet, with the same records */
    uint16_t expect[NB];
    for (int j = 0; j < NB; j++)
        expect[j] = (uint16_t)(bi[j].id ^ ((state >> j) & 1));
    uint64_t odd[1], vd = state & RIFL_SCRAMBLER_MASK;
    rifl_frame_info vi[NB];
    uint8_t vp[NB * 30];
    int nodd = rifl_frame_decode_verify(many, 256, NB, &vd, expect, vp, odd, vi), want = 0;
    for (int j = 0; j < NB; j++) {
        int plain = bi[j].syn == RIFL_SYN_DATA && bi[j].meta == RIFL_META_FULL &&
                    bi[j].id == expect[j];
        want += !plain;
        if (plain == (int)((odd[0] >> j) & 1) || memcmp(vp + 30 * j, bp + 30 * j, 30))
            __builtin_trap();
        if (!plain && (vi[j].id != bi[j].id || vi[j].kind != bi[j].kind ||
                       vi[j].payload_len != bi[j].payload_len || vi[j].key != bi[j].key))
            __builtin_trap();
    }
    if (nodd != want || vd != bd)
        __builtin_trap();
    return 0;
}

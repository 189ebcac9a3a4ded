/* Fuzz the Layer 2 cell paths: any header through the forwarding rule and
 * the header update (checking the rule's invariants), and any payload
 * through the flow-control decoder (what decodes must re-encode to the same
 * bytes). */
#include <stdint.h>
#include <string.h>

#include "rifl/l2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8)
        return 0;
    unsigned nports = 2 + data[0] % 255;
    unsigned in = data[1] % nports;
    rifl_l2_hdr h;
    memcpy(h.b, data + 2, RIFL_L2_HDR_BYTES);
    unsigned out = 0;
    int f = rifl_l2_forward(nports, in, &h, &out);
    if (f == RIFL_L2_FWD_UNICAST) {
        if (out >= nports || out == in || rifl_l2_rel_port(nports, in, out) != h.b[1])
            __builtin_trap();
        unsigned remain = rifl_l2_remain_hops(&h);
        rifl_l2_hdr_advance(&h, in, out);
        if (rifl_l2_remain_hops(&h) != remain - 1 ||
            h.b[5] != (uint8_t)rifl_l2_rel_port(nports, out, in))
            __builtin_trap();
    } else if (f == RIFL_L2_FWD_MISROUTED) {
        if (rifl_l2_remain_hops(&h) != 0)
            __builtin_trap();
    } else if (f < 0)
        __builtin_trap();
    const uint8_t *p = data + 8;
    size_t n = size - 8;
    rifl_l2_fc fc;
    if (n >= 4 && rifl_l2_fc_decode(p, n, &fc) == RIFL_OK) {
        uint8_t again[512];
        if (n > sizeof again)
            return 0;
        rifl_l2_fc_encode(&fc, again, n);
        if (memcmp(again, p, n))
            __builtin_trap();
    }
    return 0;
}

/* Fuzz the UDP encapsulation (rifl/phy.h, "UDP"): any bytes are read without
 * a crash; a datagram that reads well has a frame width, a count in range
 * and exactly the length its header claims, and its header written again
 * gives the same 20 bytes. */
#include <stdint.h>
#include <string.h>

#include "rifl/phy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rifl_udp_header h;
    if (rifl_udp_header_read(data, size, &h) != RIFL_OK)
        return 0;
    if (h.frame_bits < 64 || h.frame_bits > 2048 || (h.frame_bits & (h.frame_bits - 1)) ||
        h.count == 0 || h.count > RIFL_UDP_MAX_FRAMES ||
        size != RIFL_UDP_HEADER_BYTES + (size_t)h.count * (h.frame_bits / 8))
        __builtin_trap();
    uint8_t again[RIFL_UDP_HEADER_BYTES];
    if (rifl_udp_header_write(&h, again) != RIFL_OK || memcmp(again, data, sizeof again))
        __builtin_trap();
    return 0;
}

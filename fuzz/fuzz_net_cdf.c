/* Fuzz the message-size CDF parser of `sim net`: any text parses or is
 * refused with a message, without a crash; a CDF that parses is
 * non-decreasing, ends at 1, and every draw lies within its sizes. */
#include <stdint.h>
#include <string.h>

#include "rifl/sim/netsim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rifl_net_cdf c;
    char err[256];
    err[0] = 0;
    int rc = rifl_net_cdf_parse((const char *)data, size, &c, err, sizeof err);
    if (rc != RIFL_OK) {
        if (rc != RIFL_ERR_PARSE || !err[0])
            __builtin_trap();
        return 0;
    }
    if (c.n < 1 || c.n > RIFL_NET_CDF_MAX || c.p[c.n - 1] != 1.0)
        __builtin_trap();
    for (unsigned k = 1; k < c.n; k++)
        if (c.bytes[k] < c.bytes[k - 1] || c.p[k] < c.p[k - 1])
            __builtin_trap();
    for (unsigned i = 0; i < 64; i++) {
        uint32_t b = rifl_net_cdf_size(&c, i / 64.0);
        if (b < c.bytes[0] || b > c.bytes[c.n - 1])
            __builtin_trap();
    }
    return 0;
}

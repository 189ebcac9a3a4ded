/* Per-VOQ flow-control frame codec (extension frame format code 0x03). */
#include <string.h>

#include "rifl/l2.h"

void rifl_l2_fc_pack(const rifl_l2_fc *fc, uint8_t data[3])
{
    if (!fc || !data)
        return;
    data[0] = (uint8_t)((fc->on_valid ? RIFL_L2_FC_ON_VALID : 0) |
                        (fc->off_valid ? RIFL_L2_FC_OFF_VALID : 0));
    data[1] = fc->on_valid ? fc->on_queue : 0;
    data[2] = fc->off_valid ? fc->off_queue : 0;
}

int rifl_l2_fc_unpack(const uint8_t *data, size_t len, rifl_l2_fc *fc)
{
    if (!data || !fc || len < 3)
        return RIFL_ERR_FRAME;
    /* the padding must be zero: OR it together eight bytes at a time */
    uint64_t pad = 0;
    size_t k = 3;
    for (; k + 8 <= len; k += 8) {
        uint64_t w;
        memcpy(&w, data + k, sizeof w);
        pad |= w;
    }
    for (; k < len; k++)
        pad |= data[k];
    if (pad)
        return RIFL_ERR_FRAME;
    uint8_t flags = data[0];
    if (flags & ~(RIFL_L2_FC_ON_VALID | RIFL_L2_FC_OFF_VALID))
        return RIFL_ERR_FRAME;
    fc->on_valid = (flags & RIFL_L2_FC_ON_VALID) != 0;
    fc->off_valid = (flags & RIFL_L2_FC_OFF_VALID) != 0;
    if ((!fc->on_valid && data[1]) || (!fc->off_valid && data[2]))
        return RIFL_ERR_FRAME;
    fc->on_queue = data[1];
    fc->off_queue = data[2];
    return RIFL_OK;
}

int rifl_l2_fc_encode(const rifl_l2_fc *fc, uint8_t *payload, size_t payload_len)
{
    if (!fc || !payload || payload_len < 4)
        return RIFL_ERR_INVALID_ARG;
    memset(payload, 0, payload_len);
    rifl_l2_fc_pack(fc, payload);
    payload[payload_len - 1] = RIFL_L2_FC_CODE;
    return RIFL_OK;
}

int rifl_l2_fc_decode(const uint8_t *payload, size_t payload_len, rifl_l2_fc *fc)
{
    if (!payload || !fc || payload_len < 4 || payload[payload_len - 1] != RIFL_L2_FC_CODE)
        return RIFL_ERR_FRAME;
    return rifl_l2_fc_unpack(payload, payload_len - 1, fc);
}

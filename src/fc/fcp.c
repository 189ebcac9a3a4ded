/* Flow Control Packet codec: 8 bytes, Op/FCTBS/VL/FCCL in a big-endian
 * 32-bit word, then the 16-bit LPCRC and 16 reserved bits. */
#include "rifl/credit.h"

#define LPCRC_POLY 0x100Bu
#define LPCRC_INIT 0xFFFFu

/* Bitwise, most significant bit first: four bytes per FCP do not justify a
 * lookup table. */
uint16_t rifl_fcp_crc16(const uint8_t *p, size_t n)
{
    uint16_t crc = LPCRC_INIT;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)((uint16_t)p[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ LPCRC_POLY)
                                  : (uint16_t)(crc << 1);
    }
    return crc;
}

const char *rifl_fcp_status_name(rifl_fcp_status s)
{
    switch (s) {
    case RIFL_FCP_GOOD: return "good";
    case RIFL_FCP_SHORT: return "short";
    case RIFL_FCP_BAD_CRC: return "bad_lpcrc";
    case RIFL_FCP_BAD_OP: return "bad_op";
    default: return "unknown";
    }
}

void rifl_fcp_encode(const rifl_fcp *f, uint8_t out[RIFL_FC_FCP_BYTES])
{
    uint32_t w = ((uint32_t)(f->op & 0xFu) << 28) |
                 ((uint32_t)(f->fctbs & RIFL_FC_REG_MASK) << 16) |
                 ((uint32_t)(f->vl & 0xFu) << 12) |
                 (uint32_t)(f->fccl & RIFL_FC_REG_MASK);
    out[0] = (uint8_t)(w >> 24);
    out[1] = (uint8_t)(w >> 16);
    out[2] = (uint8_t)(w >> 8);
    out[3] = (uint8_t)w;
    uint16_t crc = rifl_fcp_crc16(out, 4);
    out[4] = (uint8_t)(crc >> 8);
    out[5] = (uint8_t)crc;
    out[6] = 0;
    out[7] = 0;
}

int rifl_fcp_decode(const uint8_t *in, size_t len, rifl_fcp *out,
                    rifl_fcp_status *status)
{
    rifl_fcp_status st = RIFL_FCP_GOOD;
    if (!in || len < RIFL_FC_FCP_BYTES) {
        st = RIFL_FCP_SHORT;
    } else {
        uint16_t crc = (uint16_t)((in[4] << 8) | in[5]);
        if (crc != rifl_fcp_crc16(in, 4))
            st = RIFL_FCP_BAD_CRC;
        else if ((in[0] >> 4) > RIFL_FCP_OP_INIT)
            st = RIFL_FCP_BAD_OP;
    }
    if (status)
        *status = st;
    if (st != RIFL_FCP_GOOD)
        return RIFL_ERR_FRAME;
    if (out) {
        out->op = (uint8_t)(in[0] >> 4);
        out->fctbs = (uint16_t)(((in[0] & 0xFu) << 8) | in[1]);
        out->vl = (uint8_t)(in[2] >> 4);
        out->fccl = (uint16_t)(((in[2] & 0xFu) << 8) | in[3]);
    }
    return RIFL_OK;
}

/* Fuzz the FCP codec and the credit engine's FCP receive path: any bytes
 * decode without a crash; a packet that decodes re-encodes to the same
 * first six bytes; a stream of arbitrary FCPs, data arrivals and releases
 * never breaks the engine's invariants (credit <= 2048, space <= capacity,
 * nothing sent without credit). */
#include <stdint.h>
#include <string.h>

#include "rifl/credit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rifl_fcp f;
    rifl_fcp_status st;
    if (rifl_fcp_decode(data, size, &f, &st) == RIFL_OK) {
        uint8_t again[RIFL_FC_FCP_BYTES];
        rifl_fcp_encode(&f, again);
        if (memcmp(again, data, 6) || f.op > 1)
            __builtin_trap();
    } else if (st == RIFL_FCP_GOOD || st >= RIFL_FCP_STATUS_COUNT) {
        __builtin_trap();
    }

    rifl_credit *e;
    rifl_credit_config c = rifl_credit_default_config;
    c.data_vls = 3;
    c.rx_buffer_bytes = 8192;
    c.max_packet_bytes = 1024;
    c.tx_queue_packets = 8;
    if (rifl_credit_create(&c, &e, NULL, 0) != RIFL_OK)
        __builtin_trap();
    uint64_t now = 0;
    uint32_t held[3] = { 0 };
    for (size_t i = 0; i + 9 <= size; i += 9) {
        const uint8_t *p = data + i;
        uint8_t op = p[0];
        now += op;
        switch (op & 3) {
        case 0: { /* an FCP, often with a valid LPCRC */
            uint8_t b[8];
            memcpy(b, p + 1, 8);
            if (op & 4) {
                uint16_t crc = rifl_fcp_crc16(b, 4);
                b[4] = (uint8_t)(crc >> 8);
                b[5] = (uint8_t)crc;
            }
            rifl_credit_rx_fcp(e, b, 8, now);
            break;
        }
        case 1: { /* data arrives */
            unsigned vl = p[1] % 3;
            uint32_t len = 1 + (uint32_t)(p[2] | p[3] << 8) % 1024;
            if (rifl_credit_rx_data(e, vl, len) == RIFL_OK)
                held[vl] += rifl_fc_blocks(len);
            break;
        }
        case 2: { /* release a block-sized packet */
            unsigned vl = p[1] % 3;
            if (held[vl] && rifl_credit_rx_release(e, vl, 64, now) == RIFL_OK)
                held[vl]--;
            break;
        }
        default: { /* queue and send */
            rifl_credit_enqueue(e, p[1] % 3, 1 + p[2] * 4u, p[3]);
            rifl_credit_item it;
            for (int k = 0; k < 4; k++) {
                uint32_t credit[3];
                for (unsigned v = 0; v < 3; v++)
                    credit[v] = rifl_fc_tx_credit(rifl_credit_tx_regs(e, v));
                if (rifl_credit_poll(e, now, &it) != RIFL_OK)
                    break;
                if (it.kind == RIFL_CREDIT_ITEM_DATA && it.vl < 3 &&
                    (rifl_credit_state(e) != RIFL_FC_LINK_ACTIVE ||
                     rifl_fc_blocks(it.len) > credit[it.vl]))
                    __builtin_trap(); /* sent without credit */
                if (it.kind == RIFL_CREDIT_ITEM_FCP) {
                    rifl_fcp g;
                    if (rifl_fcp_decode(it.fcp, 8, &g, NULL) != RIFL_OK)
                        __builtin_trap();
                }
            }
            break;
        }
        }
        for (unsigned v = 0; v < 3; v++) {
            const rifl_fc_rx *rx = rifl_credit_rx_regs(e, v);
            if (rifl_fc_tx_credit(rifl_credit_tx_regs(e, v)) > RIFL_FC_CREDIT_CAP ||
                rx->free_chunks > rx->capacity)
                __builtin_trap();
        }
    }
    rifl_credit_free(e);
    return 0;
}

/* Fuzz the NIC's receive side: the input is a sequence of cells (a length
 * byte, 0 meaning a whole cell, then that many bytes) arriving at host 0 of
 * leafspine:2x2x2.  Any bytes: no crash, every delivered piece lies inside
 * its cell and its message, pieces of one context follow each other, and
 * each cell is delivered or counted as exactly one drop. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/nic.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static rifl_topology *topo;
static rifl_nic_map *map;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    if (!topo && (rifl_topo_generate("leafspine:2x2x2", &topo, err, sizeof err) != RIFL_OK ||
                  rifl_nic_map_create(topo, 2, &map, err, sizeof err) != RIFL_OK))
        __builtin_trap();
    rifl_nic *nic = NULL;
    if (rifl_nic_create(&rifl_nic_default_config, map, 0, &nic, err, sizeof err) != RIFL_OK)
        __builtin_trap();
    uint64_t next[4][2] = { { 0 } }; /* per (source, context): next offset */
    uint64_t calls = 0, delivered = 0;
    size_t off = 0;
    while (off < size) {
        size_t len = data[off++];
        if (len == 0)
            len = RIFL_L2_CELL_BYTES;
        if (len > size - off)
            len = size - off;
        uint8_t cell[RIFL_L2_CELL_BYTES + 255];
        memcpy(cell, data + off, len);
        off += len;
        rifl_nic_rx rx;
        calls++;
        if (rifl_nic_receive(nic, calls, cell, len, &rx) != RIFL_OK)
            continue;
        delivered++;
        if (rx.src == 0 || rx.src >= 4 || rx.context >= 2 || rx.len == 0 ||
            rx.data < cell + RIFL_L2_HDR_BYTES || rx.data + rx.len > cell + len ||
            rx.offset + rx.len > rx.msg_len || rx.last != (rx.offset + rx.len == rx.msg_len) ||
            rx.first != (rx.offset == 0))
            __builtin_trap();
        uint64_t *n = &next[rx.src][rx.context];
        if (!rx.first && rx.offset != *n)
            __builtin_trap();
        *n = rx.last ? 0 : rx.offset + rx.len;
    }
    const rifl_nic_stats *st = rifl_nic_get_stats(nic);
    if (st->cells_rx != delivered ||
        st->cells_rx + st->rx_bad_len + st->rx_bad_header + st->rx_bad_route + st->rx_reserved +
                st->rx_no_context !=
            calls)
        __builtin_trap();
    rifl_nic_free(nic);
    return 0;
}

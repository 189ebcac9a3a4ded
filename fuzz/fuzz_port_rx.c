/* Fuzz a port's receive side: any packets a peer lane can send (any
 * length, any first byte as VL byte, any cell header and message prefix)
 * through the port's sorting into VLs, with either flow control, and
 * through its Layer 2 endpoint.  It must never crash, never hand out a
 * packet longer than it takes, and its counters must add up. */
#include <stdint.h>
#include <string.h>

#include "rifl/port.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void slot(rifl_lane *peer, rifl_port *p, uint64_t t)
{
    uint8_t w[2][RIFL_FRAME_MAX_BYTES], junk[64];
    size_t n;
    rifl_lane_tx(peer, t, w[0]);
    rifl_port_tx(p, t, w[1]);
    rifl_lane_rx(peer, t, w[1], NULL);
    rifl_port_rx(p, t, w[0], NULL);
    while (rifl_lane_read(peer, junk, sizeof junk, &n, NULL) == RIFL_OK)
        ;
    uint8_t code;
    while (rifl_lane_read_ext(peer, &code, junk, sizeof junk, &n) == RIFL_OK)
        ;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    rifl_port_config c = rifl_port_default_config;
    c.lane.rx_lock_frames = 0;
    c.fc = data[0] & 1 ? RIFL_PORT_FC_CREDIT : RIFL_PORT_FC_LANE;
    c.vls = 1 + (data[0] >> 1) % 3;
    c.vl_byte = c.vls > 1 || c.fc == RIFL_PORT_FC_CREDIT || (data[0] & 0x40);
    c.max_packet = 300;
    c.rx_queue_bytes = data[1] & 1 ? 0 : 2048;
    c.credit.rx_buffer_bytes = 4096;
    c.l2_sources = 1 + (data[1] >> 1) % 4;
    c.l2_max_msg = 1000;
    bool msgs = data[1] & 0x40; /* read messages, or packets */
    rifl_lane_config lc = c.lane;
    lc.fc_mode = c.fc == RIFL_PORT_FC_CREDIT ? RIFL_LANE_FC_NONE : RIFL_LANE_FC_ONOFF;
    rifl_lane *peer;
    rifl_port *p;
    if (rifl_lane_create(&lc, &peer, NULL, 0) != RIFL_OK)
        return 0;
    if (rifl_port_create(&c, NULL, &p, NULL, 0) != RIFL_OK) {
        rifl_lane_free(peer);
        return 0;
    }
    data += 2;
    size -= 2;
    uint64_t t = 0, packets = 0;
    /* packets: a length byte (x 2), then that many bytes; a zero length
     * lets slots go by while the port's reader takes what it has */
    while (size) {
        size_t len = (size_t)data[0] * 2;
        data++;
        size--;
        if (len > size)
            len = size;
        if (len && rifl_lane_send(peer, data, len) == RIFL_OK)
            packets++;
        data += len;
        size -= len;
        for (int k = 0; k < (len ? 12 : 40); k++)
            slot(peer, p, t++);
        uint8_t buf[1200];
        size_t n;
        for (unsigned v = 0; v < c.vls; v++) {
            if (msgs) {
                while (rifl_port_read_msg(p, v, t, buf, sizeof buf, &n, NULL, NULL, NULL) ==
                       RIFL_OK)
                    if (n > c.l2_max_msg)
                        __builtin_trap();
            } else if (rifl_port_read(p, v, t, buf, sizeof buf, &n) == RIFL_OK &&
                       n > c.max_packet) {
                __builtin_trap();
            }
        }
    }
    const rifl_port_stats *s = rifl_port_get_stats(p);
    uint64_t in = s->rx_bad_vl + s->rx_credit_drops + s->rx_queue_full;
    for (unsigned v = 0; v < c.vls; v++)
        in += s->rx_packets[v];
    if (in > packets || s->msg_rx > s->cells_rx)
        __builtin_trap();
    rifl_port_free(p);
    rifl_lane_free(peer);
    return 0;
}

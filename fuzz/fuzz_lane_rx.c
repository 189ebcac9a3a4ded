/* Fuzz the lane receiver, with or without lane tags and now and then with
 * alignment from outside and a hold: any sequence of frames (bytes cut into
 * frames of the chosen width, with occasional empty slots), as wire bytes
 * or by content (rifl_lane_rx_frame with any record, key, ID and scrambler
 * states), interleaved with sends and reads, must never crash, and the
 * counters must stay consistent. */
#include <stdint.h>
#include <string.h>

#include "rifl/lane.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const unsigned widths[] = { 64, 128, 256, 512 };
    if (size < 2)
        return 0;
    rifl_lane_config c = rifl_lane_default_config;
    c.frame_bits = widths[data[0] & 3];
    c.fid_bits = 5 + (data[0] >> 2) % 8;
    c.link.cable_m = 0;
    c.link.transceiver_ns = 0;
    c.rx_lock_frames = data[1] & 1 ? 0 : 4;
    c.tx_queue_frames = 16;
    c.rx_buffer_frames = 0;
    /* lane tags, and alignment from outside with the hold, now and then */
    c.lane_tags = data[1] & 2;
    c.lane_index = (data[1] >> 2) & 3;
    c.lane_count = 4;
    c.rx_hold_frames = (data[1] >> 4) & 7;
    rifl_lane *l;
    if (rifl_lane_create(&c, &l, NULL, 0) != RIFL_OK)
        return 0;
    if (data[1] & 0x80)
        rifl_lane_set_rx_aligned(l, true);
    data += 2;
    size -= 2;
    unsigned fb = c.frame_bits / 8;
    uint8_t out[RIFL_FRAME_MAX_BYTES], buf[64];
    uint64_t frames = 0, t = 0;
    while (size >= 1) {
        uint8_t op = data[0];
        data++;
        size--;
        if (op & 128) {
            rifl_lane_frame sent;
            rifl_lane_tx_frame(l, t, &sent);
        } else {
            rifl_lane_tx(l, t, out);
        }
        /* now and then a slot repeated: refused, counted, no harm */
        if ((op & 0x87) == 0x87 && rifl_lane_tx(l, t, out) != RIFL_ERR_STATE)
            __builtin_trap();
        t++;
        if ((op & 7) == 0) {
            rifl_lane_rx(l, t - 1, NULL, NULL);
        } else if (size >= fb) {
            rifl_frame_info fi;
            if (op & 64) {
                /* by content: the record is the frame's bytes after the first */
                rifl_lane_frame f = {
                    .scr = (uint64_t)data[0] << 25 | (uint64_t)data[1] << 17 | data[2],
                    .scr_next = (uint64_t)data[3] << 9 | data[4],
                    .data = data[0] & 1,
                    .key = (uint16_t)(data[1] << 8 | data[2]),
                    .id = (uint16_t)((data[3] << 8 | data[4]) & 0xFFF),
                };
                memcpy(f.rec, data + 1, fb - 1);
                rifl_lane_rx_frame(l, t - 1, &f, (op & 7) == 1 ? &fi : NULL);
            } else {
                rifl_lane_rx(l, t - 1, data, &fi);
            }
            data += fb;
            size -= fb;
            frames++;
        } else {
            break;
        }
        if (op & 8)
            rifl_lane_send(l, data, size < 40 ? size : 40);
        if (op & 16) {
            size_t n;
            int eop;
            rifl_lane_read(l, buf, sizeof buf, &n, &eop);
        }
        if (op & 32) {
            uint8_t code;
            size_t n;
            rifl_lane_read_ext(l, &code, buf, sizeof buf, &n);
        }
    }
    const rifl_lane_stats *st = rifl_lane_get_stats(l);
    if (st->rx_verify_fail + st->rx_good_data + st->rx_control + st->rx_not_aligned >
        st->rx_slots)
        __builtin_trap();
    rifl_lane_free(l);
    return 0;
}

/* Packet captures of simulated lanes: what arrived at each end in a slot,
 * as wire bytes, into a capture file (docs/capture.md). */
#include "cli.h"
#include "rifl/capture.h"
#include "rifl/lane.h"

int cli_pcap_arrivals(struct rifl_capture *cap, const rifl_phy_frame arrived[2],
                      unsigned frame_bits, uint64_t seq, uint64_t t_ns)
{
    for (int i = 0; i < 2; i++) {
        const rifl_phy_frame *a = &arrived[i];
        uint8_t buf[RIFL_FRAME_MAX_BYTES];
        const uint8_t *wire = a->data;
        if (a->form == RIFL_PHY_NONE)
            continue;
        if (a->form == RIFL_PHY_CONTENT) {
            rifl_lane_frame_encode(a->data, frame_bits, buf);
            wire = buf;
        }
        /* what reached lane 1 (B) went A -> B: direction 0 */
        if (rifl_capture_frame(cap, i == 1 ? 0 : 1, seq, t_ns, wire) != RIFL_OK)
            return RIFL_ERR_IO;
    }
    return RIFL_OK;
}

/* The lane's counters: one table, name and meaning (rifl/counter.h). */
#include "rifl/lane.h"

#define C(f, m) { #f, m, offsetof(rifl_lane_stats, f) }
#define A(name, f, i, m) { name, m, offsetof(rifl_lane_stats, f) + (i) * sizeof(uint64_t) }

static const rifl_counter lane_counters[] = {
    C(tx_slots, "frame slots sent (rifl_lane_tx calls)"),
    C(tx_idle, "IDLE control frames sent"),
    C(tx_pause, "PAUSE control frames sent"),
    C(tx_retransmit, "RETRANSMIT control frames sent"),
    C(tx_replayed, "data frames sent again in replays"),
    C(tx_replay_cycles, "replay cycles started"),
    C(tx_clock_comp, "pause slots spent for clock compensation"),
    C(tx_fc_wait, "slots idled because the peer's flow control was ON"),
    C(tx_err_wait, "slots idled after a local frame error"),
    C(tx_packets, "user packets accepted"),
    C(tx_bytes, "user bytes accepted"),
    C(tx_rejected, "rifl_lane_send calls refused: transmit queue full"),
    C(tx_ext, "extension frames accepted"),
    C(rx_slots, "frame slots received (rifl_lane_rx calls)"),
    C(rx_empty, "slots with no frame"),
    C(rx_not_aligned, "frames ignored while not aligned"),
    C(rx_bad_syn, "frames with an illegal SYN (00 or 11)"),
    C(rx_align_lost, "times alignment was lost"),
    C(rx_verify_fail, "frames failing verification (CRC with frame ID)"),
    C(rx_frame_errors, "times the frame error flag was raised"),
    C(rx_good_data, "good data frames"),
    C(rx_skipped, "good data frames not delivered: replays, verification run"),
    C(rx_control, "good control frames"),
    C(rx_bad_format, "delivered partial frames with a bad byte count"),
    C(rx_overflow, "new frames refused: receive buffer full (retransmission asked)"),
    C(rx_unknown_key, "control frames with an unknown key"),
    C(flag_pause_raised, "times the peer-pause flag rose"),
    C(flag_retransmit_raised, "times the peer-retransmit flag rose"),
    C(fc_on_sent, "flow-control ON notices sent"),
    C(fc_off_sent, "flow-control OFF notices sent"),
    C(fc_on_received, "flow-control ON notices received"),
    C(fc_off_received, "flow-control OFF notices received"),
    C(rx_packets, "user packets read"),
    C(rx_bytes, "user bytes read"),
    C(rx_ext, "extension frames read by the user"),
    A("tx_state_init", tx_state_slots, RIFL_TX_INIT, "slots sent in state INIT"),
    A("tx_state_send_pause", tx_state_slots, RIFL_TX_SEND_PAUSE, "slots sent in state SEND_PAUSE"),
    A("tx_state_pause", tx_state_slots, RIFL_TX_PAUSE, "slots sent in state PAUSE"),
    A("tx_state_retrans", tx_state_slots, RIFL_TX_RETRANS, "slots sent in state RETRANS"),
    A("tx_state_send_retrans", tx_state_slots, RIFL_TX_SEND_RETRANS,
      "slots sent in state SEND_RETRANS"),
    A("tx_state_normal", tx_state_slots, RIFL_TX_NORMAL, "slots sent in state NORMAL"),
    A("tx_frames_data", tx_frames, RIFL_KIND_DATA, "new data frames sent"),
    A("rx_delivered_data", rx_delivered, RIFL_KIND_DATA, "new data frames delivered"),
    A("tx_frames_filler", tx_frames, RIFL_KIND_FILLER, "new filler frames sent"),
    A("rx_delivered_filler", rx_delivered, RIFL_KIND_FILLER, "new filler frames delivered"),
    A("tx_frames_fc_on", tx_frames, RIFL_KIND_FC_ON, "new flow-control ON frames sent"),
    A("rx_delivered_fc_on", rx_delivered, RIFL_KIND_FC_ON,
      "new flow-control ON frames delivered"),
    A("tx_frames_fc_off", tx_frames, RIFL_KIND_FC_OFF, "new flow-control OFF frames sent"),
    A("rx_delivered_fc_off", rx_delivered, RIFL_KIND_FC_OFF,
      "new flow-control OFF frames delivered"),
    A("tx_frames_ext", tx_frames, RIFL_KIND_EXT, "new extension frames sent"),
    A("rx_delivered_ext", rx_delivered, RIFL_KIND_EXT, "new extension frames delivered"),
    A("tx_frames_control", tx_frames, RIFL_KIND_CONTROL, "(always 0: control frames are "
      "counted by key)"),
    A("rx_delivered_control", rx_delivered, RIFL_KIND_CONTROL, "(always 0)"),
    A("tx_frames_invalid", tx_frames, RIFL_KIND_INVALID, "(always 0)"),
    A("rx_delivered_invalid", rx_delivered, RIFL_KIND_INVALID, "(always 0)"),
    A("rx_key_idle", rx_keys, RIFL_KEYIDX_IDLE, "IDLE control frames received"),
    A("rx_key_pause", rx_keys, RIFL_KEYIDX_PAUSE, "PAUSE control frames received"),
    A("rx_key_retransmit", rx_keys, RIFL_KEYIDX_RETRANSMIT, "RETRANSMIT control frames received"),
    C(slot_errors, "calls refused: a transmit slot repeated or skipped, or a receive "
                   "slot before the last"),
};

_Static_assert(sizeof lane_counters / sizeof lane_counters[0] ==
                   sizeof(rifl_lane_stats) / sizeof(uint64_t),
               "every lane counter has its entry");

const rifl_counter *rifl_lane_counters(size_t *count)
{
    if (count)
        *count = sizeof lane_counters / sizeof lane_counters[0];
    return lane_counters;
}

/* The switch's counters: one table, name and meaning (rifl/counter.h). */
#include "rifl/switch.h"

#define C(f, m) RIFL_COUNTER(rifl_switch_stats, f, m)
#define A(name, f, i, m) RIFL_COUNTER_AT(rifl_switch_stats, name, f, i, m)

static const rifl_counter switch_counters[] = {
    C(slots, "cell slots stepped (rifl_switch_step calls)"),
    C(cells_in, "cells offered to inputs"),
    C(cells_stored, "VOQ insertions (each broadcast copy counts)"),
    C(cells_out, "cells switched"),
    C(broadcasts, "broadcast cells accepted"),
    C(drop_misrouted, "cells dropped: no hops left at a switch"),
    C(drop_invalid, "cells dropped: bad dst port or hop counts, or broadcast on a switch without it"),
    C(drop_overflow, "cells dropped: VOQ full"),
    C(fabric_collisions, "cells the Batcher-Banyan model found colliding"),
    C(fabric_checks, "slots checked by the fabric model: those with cells through it"),
    C(fc_frames_sent, "flow-control frames sent upstream"),
    C(fc_on_sent, "ON notices sent upstream"),
    C(fc_off_sent, "OFF notices sent upstream"),
    C(fc_on_received, "ON notices from downstream"),
    C(fc_off_received, "OFF notices from downstream"),
    C(fc_blocked_requests, "VOQ heads held back by downstream flow control"),
    C(credit_blocked_requests, "VOQ heads held back: no credit on their virtual lane"),
    C(held_outputs, "slots x outputs with cells that waited because the output was held"),
    C(max_voq_cells, "highest VOQ occupancy seen"),
    C(occupancy_sum, "sum over slots of cells held"),
    A("islip_matches_iter1", islip_matches_iter, 0, "iSLIP matches made in iteration 1"),
    A("islip_matches_iter2", islip_matches_iter, 1, "iSLIP matches made in iteration 2"),
    A("islip_matches_iter3", islip_matches_iter, 2, "iSLIP matches made in iteration 3"),
    A("islip_matches_iter4_or_more", islip_matches_iter, 3, "iSLIP matches made in iteration 4 or more"),
    C(slot_errors, "steps refused: a slot stepped again or earlier"),
    C(fc_bad_queue, "flow-control notices from downstream naming a queue it lacks: ignored"),
};

RIFL_COUNTER_TABLE(rifl_switch_counters, switch_counters, rifl_switch_stats)

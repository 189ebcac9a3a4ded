/* The checks of rifl_pair_create that need no lanes made, shared with the
 * link simulator's configuration check so that both refuse the same. */
#ifndef RIFL_SIM_PAIR_PRIV_H
#define RIFL_SIM_PAIR_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "rifl/sim/pair.h"

/* The longest one-way delay of a pair, frames (that of its PHYs). */
#define PAIR_MAX_DELAY (1u << 24)

/* The one-way delay `cfg` gives (delay_frames, or from lane.link when it is
 * 0; saturates at UINT_MAX), and whether the pair's frames in flight both
 * ways, with its cables' delay lines, fit in RIFL_PHY_MAX_BYTES:
 * RIFL_ERR_CONFIG with a message naming the settings to lower. */
unsigned pair_delay(const rifl_pair_config *cfg);
int pair_check(const rifl_pair_config *cfg, char *msg, size_t msglen);
/* What pair_check counts: the bytes of the frames in flight both ways, the
 * cables' delay lines and the pair's records of them (0 for a frame width
 * the lanes refuse).  rifl_net_create's memory estimate counts a link's by
 * it. */
uint64_t pair_flight_bytes(const rifl_pair_config *cfg);

#endif

/* The checks of rifl_pair_create that need no lanes made, shared with the
 * link simulator's configuration check so that both refuse the same; and
 * how a cable's hit damages a frame, shared with the link simulator's
 * recoveries carried as counts. */
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

/* Hit h flipped into the wire bytes of a frame of frame_bits bits: false,
 * with the frame partly flipped, for a hit whose bits are not all known
 * (none, or more than RIFL_PHY_HIT_BITS) or one with a bit beyond the
 * frame, which a frame of zeros cannot stand for. */
bool pair_hit_flip(const rifl_phy_hit *h, uint8_t *wire, unsigned frame_bits);

#endif

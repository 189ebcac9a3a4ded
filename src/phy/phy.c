/* The PHY boundary: the calls that are not inline, dispatched to the PHY's
 * operations. */
#include <stddef.h>
#include <string.h>

#include "rifl/phy.h"

uint64_t rifl_phy_next_due(const rifl_phy *phy, uint64_t now)
{
    if (!phy)
        return UINT64_MAX;
    return phy->ops->next_due ? phy->ops->next_due(phy, now) : UINT64_MAX;
}

void rifl_phy_free(rifl_phy *phy)
{
    if (phy)
        phy->ops->destroy(phy);
}

uint64_t rifl_phy_clear_slots(const rifl_phy *phy)
{
    if (!phy)
        return 0;
    return phy->ops->clear_slots ? phy->ops->clear_slots(phy) : 0;
}

int rifl_phy_skip(rifl_phy *phy, uint64_t slots)
{
    if (!phy)
        return RIFL_ERR_INVALID_ARG;
    return phy->ops->skip ? phy->ops->skip(phy, slots) : RIFL_ERR_STATE;
}

void *rifl_phy_inflight(rifl_phy *phy, unsigned k, rifl_phy_form form)
{
    if (!phy)
        return NULL;
    return phy->ops->inflight ? phy->ops->inflight(phy, k, form) : NULL;
}

rifl_phy_form rifl_phy_inflight_form(const rifl_phy *phy, unsigned k)
{
    if (!phy)
        return RIFL_PHY_NONE;
    return phy->ops->inflight_form ? phy->ops->inflight_form(phy, k) : RIFL_PHY_NONE;
}

const uint8_t *rifl_phy_step(rifl_phy *phy, uint64_t now, const uint8_t *sent)
{
    if (!phy)
        return NULL;
    if (sent) {
        uint8_t *buf = rifl_phy_tx_buffer(phy, RIFL_PHY_WIRE);
        if (!buf)
            return NULL;
        memcpy(buf, sent, phy->frame_bytes);
    }
    rifl_phy_frame in;
    if (!rifl_phy_exchange(phy, now, sent ? RIFL_PHY_WIRE : RIFL_PHY_NONE, &in, 1) ||
        in.form != RIFL_PHY_WIRE)
        return NULL;
    return in.data;
}

#define C(f, m) RIFL_COUNTER(rifl_phy_stats, f, m)
static const rifl_counter phy_counters[] = {
    C(frames, "frames put on the medium"),
    C(bits, "their bits"),
    C(bit_errors, "bits flipped on the way"),
    C(frames_hit, "frames with at least one bit flipped"),
    C(delivered, "frames handed to the far end"),
    C(dropped, "frames that never arrive"),
};
#undef C

RIFL_COUNTER_TABLE(rifl_phy_counters, phy_counters, rifl_phy_stats)

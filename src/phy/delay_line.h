/* A ring of frames in flight, the delay line of the simulated PHYs (private
 * to src/phy).  Entry `pos` takes the frame sent in this slot; the frame
 * sent `delay` slots ago leaves in the same slot. */
#ifndef RIFL_PHY_DELAY_LINE_H
#define RIFL_PHY_DELAY_LINE_H

#include <stdint.h>
#include <stdlib.h>

#include "rifl/phy.h"

struct delay_line {
    unsigned delay, slots, pos;   /* slots = delay + 1 entries */
    unsigned out;                 /* entry leaving in the current slot */
    uint8_t *form;                /* rifl_phy_form of each entry */
};

static inline int delay_line_init(struct delay_line *d, unsigned delay)
{
    d->delay = delay;
    d->slots = delay + 1;
    d->pos = d->out = 0;
    d->form = calloc(d->slots, 1);
    return d->form ? 0 : -1;
}

static inline void delay_line_free(struct delay_line *d) { free(d->form); }

/* The frame of this slot is in entry `pos` with `form`: move on; returns the
 * entry that leaves now. */
static inline unsigned delay_line_step(struct delay_line *d, rifl_phy_form form)
{
    d->form[d->pos] = (uint8_t)form;
    unsigned next = d->pos + 1 == d->slots ? 0 : d->pos + 1;
    d->out = d->delay == 0 ? d->pos : next;
    d->pos = next;
    return d->out;
}

/* The entry of the frame that leaves k + 1 slots from now. */
static inline unsigned delay_line_ahead(const struct delay_line *d, unsigned k)
{
    return (d->pos + 1 + k) % d->slots;
}

#endif

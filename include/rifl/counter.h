/* rifl: counters, declared once.  An engine's statistics structure is a set
 * of uint64_t counters; its table (rifl_lane_counters, rifl_phy_counters,
 * rifl_port_counters, rifl_switch_counters) names each one and says what it
 * counts, in the order tools print them.  Tools print from the tables, so a
 * new counter shows up everywhere at once. */
#ifndef RIFL_COUNTER_H
#define RIFL_COUNTER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rifl_counter {
    const char *name;     /* lower case, words joined by '_' */
    const char *meaning;  /* one line */
    size_t offset;        /* of its uint64_t in the statistics structure */
} rifl_counter;

/* The value of counter `c` in a statistics structure of its kind. */
static inline uint64_t rifl_counter_value(const rifl_counter *c, const void *stats)
{
    uint64_t v;
    memcpy(&v, (const char *)stats + c->offset, sizeof v);
    return v;
}

#ifdef __cplusplus
}
#endif
#endif

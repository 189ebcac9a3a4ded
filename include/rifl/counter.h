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

/* Building a table (for a statistics structure T of uint64_t counters):
 * RIFL_COUNTER(T, field, meaning) names a counter by its field,
 * RIFL_COUNTER_AT(T, "name", array, index, meaning) one element of an array
 * of counters, and RIFL_COUNTER_TABLE(fn, table, T) defines the function
 * `fn` that hands out `table` (a compile error unless it covers every
 * counter of T). */
#define RIFL_COUNTER(T, f, m) { #f, m, offsetof(T, f) }
#define RIFL_COUNTER_AT(T, name, f, i, m) { name, m, offsetof(T, f) + (i) * sizeof(uint64_t) }
#define RIFL_COUNTER_TABLE(fn, table, T)                                                   \
    _Static_assert(sizeof table / sizeof table[0] == sizeof(T) / sizeof(uint64_t),         \
                   "every counter of " #T " has its entry in " #table);                   \
    const rifl_counter *fn(size_t *count)                                                  \
    {                                                                                      \
        if (count)                                                                         \
            *count = sizeof table / sizeof table[0];                                       \
        return table;                                                                      \
    }

#ifdef __cplusplus
}
#endif
#endif

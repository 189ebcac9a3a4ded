/* rifl simulation: traffic for simulated links, a deterministic packet
 * source and a validator that checks every delivered byte.  Randomness
 * comes only from the seeds given. */
#ifndef RIFL_SIM_TRAFFIC_H
#define RIFL_SIM_TRAFFIC_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/error.h"
#include "rifl/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- deterministic packets ----------------------------------------------- */

/* Packet `seq` of stream `seed`: its length (uniform in [min_len, max_len])
 * and content are a pure function of (seed, seq), so a receiver can check a
 * packet without a copy of what was sent. */
RIFL_API size_t rifl_packet_len(uint64_t seed, uint64_t seq, size_t min_len, size_t max_len);
RIFL_API void rifl_packet_fill(uint64_t seed, uint64_t seq, uint8_t *buf, size_t len);

/* ---- validator ------------------------------------------------------------ */

typedef struct rifl_validator_stats {
    uint64_t packets_ok, bytes_ok;
    uint64_t lost;        /* packets skipped over (detected by a later one) */
    uint64_t duplicated;  /* a packet delivered again */
    uint64_t reordered;   /* an older packet after a newer one */
    uint64_t corrupted;   /* a packet matching no expected one */
} rifl_validator_stats;

typedef struct rifl_validator {
    uint64_t seed;
    size_t min_len, max_len;
    uint64_t next_seq;     /* sequence number expected next */
    uint8_t *buf;          /* packet being assembled (max_len bytes) */
    uint8_t *ref;          /* scratch for the expected packet */
    size_t have;           /* bytes of the current packet so far */
    bool overlong;
    rifl_validator_stats st;
    /* optional packet-length model replacing rifl_packet_len(seed, seq,
     * min_len, max_len) (min_len/max_len then only bound the buffer) */
    size_t (*len_fn)(void *ctx, uint64_t seq);
    void *len_ctx;
} rifl_validator;

/* The longest packet a validator takes: it keeps two buffers of max_len
 * bytes. */
#define RIFL_VALIDATOR_MAX_LEN ((size_t)1 << 30)

/* RIFL_ERR_INVALID_ARG for a NULL validator, min_len 0, max_len below
 * min_len or above RIFL_VALIDATOR_MAX_LEN (nothing is allocated then);
 * RIFL_ERR_NOMEM. */
RIFL_API int rifl_validator_init(rifl_validator *v, uint64_t seed, size_t min_len, size_t max_len);
RIFL_API void rifl_validator_free(rifl_validator *v);
/* Feed bytes as read from a lane; `eop` ends a packet.  Returns the sequence
 * number of the packet completed (>= 0) when eop is set and it matched,
 * -1 when no packet completed, -2 when a completed packet was wrong. */
RIFL_API int64_t rifl_validator_feed(rifl_validator *v, const uint8_t *data, size_t len, int eop);
/* True when nothing was lost, duplicated, reordered or corrupted. */
RIFL_API bool rifl_validator_clean(const rifl_validator *v);

#ifdef __cplusplus
}
#endif
#endif

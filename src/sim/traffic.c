/* Deterministic packet source and the validator that checks delivered
 * bytes against it. */
#include <stdlib.h>
#include <string.h>

#include "rifl/sim/traffic.h"

static uint64_t mix(uint64_t seed, uint64_t seq)
{
    uint64_t x = seed ^ (seq * 0xd1342543de82ef95ULL);
    return rifl_splitmix64(&x);
}

size_t rifl_packet_len(uint64_t seed, uint64_t seq, size_t min_len, size_t max_len)
{
    if (max_len <= min_len)
        return min_len;
    uint64_t h = mix(seed, seq);
    return min_len + (size_t)(h % (uint64_t)(max_len - min_len + 1));
}

void rifl_packet_fill(uint64_t seed, uint64_t seq, uint8_t *buf, size_t len)
{
    uint64_t x = mix(seed ^ 0x5bd1e995u, seq);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t v = rifl_splitmix64(&x);
        memcpy(buf + i, &v, 8);
    }
    if (i < len) {
        uint64_t v = rifl_splitmix64(&x);
        memcpy(buf + i, &v, len - i);
    }
}

int rifl_validator_init(rifl_validator *v, uint64_t seed, size_t min_len, size_t max_len)
{
    if (!v || min_len == 0 || max_len < min_len)
        return RIFL_ERR_INVALID_ARG;
    memset(v, 0, sizeof *v);
    v->seed = seed;
    v->min_len = min_len;
    v->max_len = max_len;
    v->buf = malloc(max_len);
    v->ref = malloc(max_len);
    if (!v->buf || !v->ref) {
        rifl_validator_free(v);
        return RIFL_ERR_NOMEM;
    }
    return RIFL_OK;
}

void rifl_validator_free(rifl_validator *v)
{
    if (!v)
        return;
    free(v->buf);
    free(v->ref);
    v->buf = v->ref = NULL;
}

static bool matches(rifl_validator *v, uint64_t seq)
{
    size_t n = v->len_fn ? v->len_fn(v->len_ctx, seq)
                         : rifl_packet_len(v->seed, seq, v->min_len, v->max_len);
    if (n != v->have)
        return false;
    rifl_packet_fill(v->seed, seq, v->ref, n);
    return memcmp(v->ref, v->buf, n) == 0;
}

int64_t rifl_validator_feed(rifl_validator *v, const uint8_t *data, size_t len, int eop)
{
    if (len) {
        size_t room = v->max_len - v->have;
        size_t take = len < room ? len : room;
        memcpy(v->buf + v->have, data, take);
        v->have += take;
        if (take < len)
            v->overlong = true;
    }
    if (!eop)
        return -1;
    int64_t result = -2;
    uint64_t seq = v->next_seq;
    if (!v->overlong && matches(v, seq)) {
        v->st.packets_ok++;
        v->st.bytes_ok += v->have;
        v->next_seq = seq + 1;
        result = (int64_t)seq;
    } else if (!v->overlong && seq > 0 && matches(v, seq - 1)) {
        v->st.duplicated++;
    } else {
        /* a later packet: the ones in between were lost */
        bool found = false;
        for (uint64_t k = 1; !v->overlong && k <= 64 && !found; k++) {
            if (matches(v, seq + k)) {
                v->st.lost += k;
                v->st.packets_ok++;
                v->st.bytes_ok += v->have;
                v->next_seq = seq + k + 1;
                found = true;
            }
        }
        if (!found) {
            bool older = false;
            for (uint64_t k = 2; !v->overlong && k <= 64 && k <= seq && !older; k++)
                older = matches(v, seq - k);
            if (older)
                v->st.reordered++;
            else
                v->st.corrupted++;
        }
    }
    v->have = 0;
    v->overlong = false;
    return result;
}

bool rifl_validator_clean(const rifl_validator *v)
{
    return v->st.lost == 0 && v->st.duplicated == 0 && v->st.reordered == 0 &&
           v->st.corrupted == 0;
}

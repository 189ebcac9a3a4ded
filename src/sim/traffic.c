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
    uint64_t h = mix(seed, seq), n = (uint64_t)(max_len - min_len + 1);
    /* (the same value; a mask costs far less than a division) */
    return min_len + (size_t)((n & (n - 1)) == 0 ? h & (n - 1) : h % n);
}

/* Word j of a packet (from 0) is splitmix64's output for the state x0 plus
 * j + 1 steps: the words are independent, so blocks of eight are worked out
 * side by side (vectorised where the CPU has 64-bit vector multiplies). */
#define FILL_GAMMA 0x9e3779b97f4a7c15ULL

static inline uint64_t fill_word(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#define FILL_BLOCKS(name, attr)                                                        \
    attr static size_t name(uint64_t x, uint8_t *buf, size_t words)                   \
    {                                                                                  \
        uint64_t st[8], w[8];                                                          \
        for (unsigned j = 0; j < 8; j++)                                               \
            st[j] = x + (j + 1) * FILL_GAMMA;                                          \
        size_t i = 0;                                                                  \
        for (; i + 8 <= words; i += 8) {                                               \
            for (unsigned j = 0; j < 8; j++) {                                         \
                w[j] = fill_word(st[j]);                                               \
                st[j] += 8 * FILL_GAMMA;                                               \
            }                                                                          \
            memcpy(buf + 8 * i, w, sizeof w);                                          \
        }                                                                              \
        return i;                                                                      \
    }

FILL_BLOCKS(fill_blocks, )
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
FILL_BLOCKS(fill_blocks_avx512, __attribute__((target("avx512f,avx512dq,avx512vl"))))
#define FILL_HAVE_AVX512 1
#endif

void rifl_packet_fill(uint64_t seed, uint64_t seq, uint8_t *buf, size_t len)
{
    uint64_t x = mix(seed ^ 0x5bd1e995u, seq);
    size_t words = len / 8, i;
#ifdef FILL_HAVE_AVX512
    if (words >= 8 && __builtin_cpu_supports("avx512dq"))
        i = fill_blocks_avx512(x, buf, words);
    else
#endif
        i = fill_blocks(x, buf, words);
    for (; i < words; i++) {
        uint64_t v = fill_word(x + (uint64_t)(i + 1) * FILL_GAMMA);
        memcpy(buf + 8 * i, &v, 8);
    }
    if (8 * words < len) {
        uint64_t v = fill_word(x + (uint64_t)(words + 1) * FILL_GAMMA);
        memcpy(buf + 8 * words, &v, len - 8 * words);
    }
}

int rifl_validator_init(rifl_validator *v, uint64_t seed, size_t min_len, size_t max_len)
{
    if (!v || min_len == 0 || max_len < min_len || max_len > RIFL_VALIDATOR_MAX_LEN)
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
    if (!v || (len && !data))
        return -1;
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

/* Frame encode / decode (link rules §2-§5). */
#include "rifl/frame.h"
#include "link_priv.h"

static const char *const kind_names[RIFL_KIND_COUNT] = {
    [RIFL_KIND_DATA] = "data",     [RIFL_KIND_FILLER] = "filler",
    [RIFL_KIND_FC_ON] = "fc_on",   [RIFL_KIND_FC_OFF] = "fc_off",
    [RIFL_KIND_EXT] = "ext",       [RIFL_KIND_CONTROL] = "control",
    [RIFL_KIND_INVALID] = "invalid",
};

const char *rifl_frame_kind_name(rifl_frame_kind k)
{
    return (unsigned)k < RIFL_KIND_COUNT ? kind_names[k] : "unknown";
}

int rifl_frame_width_check(unsigned frame_bits)
{
    switch (frame_bits) {
    case 64: case 128: case 256: case 512: case 1024: case 2048:
        return RIFL_OK;
    default:
        return RIFL_ERR_INVALID_ARG;
    }
}

/* Encode with a constant number of words m = F/64 (inlined per width). */
/* The payload's 8m - 2 bytes as m words, the last 16 bits zero. */
static inline __attribute__((always_inline)) void
load_payload_m(unsigned m, uint64_t *p, const uint8_t *payload)
{
    _Pragma("GCC unroll 32")
    for (unsigned i = 0; i + 1 < m; i++)
        p[i] = rifl_load_be64(payload + 8 * i);
    if (m > 1) {
        /* the last 6 bytes: one 8-byte load ending at the payload's end */
        p[m - 1] = rifl_load_be64(payload + 8 * m - 10) << 16;
    } else {
        uint8_t tail[8] = { 0 };
        memcpy(tail, payload, 6);
        p[0] = rifl_load_be64(tail);
    }
}

/* Encode payload words p (m words, last 16 bits zero) with a constant m. */
static inline __attribute__((always_inline)) void
encode_m(unsigned m, const uint64_t *p, uint64_t *c, uint64_t *w, uint8_t *wire, unsigned syn,
         unsigned meta, unsigned frame_id, uint64_t *scr)
{
    /* c, w: m words each, declared by the caller with exactly m elements so
     * that the compiler can keep them in registers */

    /* plain region chunks: META then payload, scrambled on the fly */
    uint64_t h = *scr;
    uint64_t prev = meta;
    _Pragma("GCC unroll 32")
    for (unsigned i = 0; i < m; i++) {
        uint64_t d = rifl_funnel(prev, p[i], 2);
        c[i] = rifl_scr_chunk(d, h);
        h = rifl_hist_after(h, c[i], i + 1 == m);
        prev = p[i];
    }
    /* frame words: SYN, region, VCODE */
    _Pragma("GCC unroll 32")
    for (unsigned i = 0; i < m; i++) {
        w[i] = i > 0 ? rifl_funnel(c[i - 1], c[i], 2) : c[i] >> 2;
    }
    w[0] = (w[0] & 0x3FFFFFFFFFFFFFFFULL) | ((uint64_t)syn << 62);
    w[m - 1] &= ~(uint64_t)0xFFF;
    uint16_t crc = rifl_crc12_words(w, m);
    w[m - 1] |= (uint64_t)((crc ^ frame_id) & 0xFFFu);
    _Pragma("GCC unroll 32")
    for (unsigned i = 0; i < m; i++)
        rifl_store_be64(wire + 8 * i, w[i]);
    *scr = h & RIFL_SCRAMBLER_MASK;
}

/* The scrambler state after a frame's region (META then payload words p),
 * without building the frame: the first loop of encode_m alone. */
static inline __attribute__((always_inline)) uint64_t
scramble_state_m(unsigned m, const uint64_t *p, unsigned meta, uint64_t scr)
{
    uint64_t h = scr;
    uint64_t prev = meta;
    _Pragma("GCC unroll 32")
    for (unsigned i = 0; i < m; i++) {
        uint64_t c = rifl_scr_chunk(rifl_funnel(prev, p[i], 2), h);
        h = rifl_hist_after(h, c, i + 1 == m);
        prev = p[i];
    }
    return h & RIFL_SCRAMBLER_MASK;
}

/* One small function per width: exact-size word arrays the compiler keeps
 * in registers, and a short path from the dispatcher. */
#define RIFL_ENCODE_WIDTH(M)                                                     \
    static __attribute__((noinline)) void encode_w##M(                          \
        uint8_t *wire, unsigned syn, unsigned meta, const uint8_t *payload,      \
        unsigned frame_id, uint64_t *scr)                                        \
    {                                                                            \
        uint64_t p[M], c[M], w[M];                                               \
        load_payload_m(M, p, payload);                                           \
        encode_m(M, p, c, w, wire, syn, meta, frame_id, scr);                    \
    }                                                                            \
    static __attribute__((noinline)) void control_w##M(                         \
        uint8_t *wire, uint16_t key, unsigned frame_id, uint64_t *scr)           \
    {                                                                            \
        /* the key's last 14 bits lead the payload; built as words, never as   \
         * bytes, so no store has to be reloaded at another width */            \
        uint64_t p[M], c[M], w[M];                                               \
        for (unsigned i = 0; i < M; i++)                                         \
            p[i] = 0;                                                            \
        p[0] = (uint64_t)(key & 0x3FFFu) << 50;                                  \
        encode_m(M, p, c, w, wire, RIFL_SYN_CONTROL, key >> 14, frame_id, scr);  \
    }                                                                            \
    static __attribute__((noinline)) uint64_t after_w##M(                       \
        unsigned meta, const uint8_t *payload, uint64_t scr)                     \
    {                                                                            \
        uint64_t p[M];                                                           \
        load_payload_m(M, p, payload);                                           \
        return scramble_state_m(M, p, meta, scr);                                \
    }                                                                            \
    static __attribute__((noinline)) uint64_t after_control_w##M(               \
        uint16_t key, uint64_t scr)                                              \
    {                                                                            \
        uint64_t p[M];                                                           \
        for (unsigned i = 0; i < M; i++)                                         \
            p[i] = 0;                                                            \
        p[0] = (uint64_t)(key & 0x3FFFu) << 50;                                  \
        return scramble_state_m(M, p, key >> 14, scr);                           \
    }
RIFL_ENCODE_WIDTH(1)
RIFL_ENCODE_WIDTH(2)
RIFL_ENCODE_WIDTH(4)
RIFL_ENCODE_WIDTH(8)
RIFL_ENCODE_WIDTH(16)
RIFL_ENCODE_WIDTH(32)

int rifl_frame_encode(uint8_t *wire, unsigned frame_bits, unsigned syn,
                      unsigned meta, const uint8_t *payload, unsigned frame_id,
                      uint64_t *scr)
{
    if (!wire || !scr || syn > 3 || meta > 3 || frame_id > 0xFFF || *scr == RIFL_SCRAMBLER_INVALID)
        return RIFL_ERR_INVALID_ARG;
    static const uint8_t zero[RIFL_PAYLOAD_MAX_BYTES];
    if (!payload)
        payload = zero;
    switch (frame_bits) {
    case 64: encode_w1(wire, syn, meta, payload, frame_id, scr); break;
    case 128: encode_w2(wire, syn, meta, payload, frame_id, scr); break;
    case 256: encode_w4(wire, syn, meta, payload, frame_id, scr); break;
    case 512: encode_w8(wire, syn, meta, payload, frame_id, scr); break;
    case 1024: encode_w16(wire, syn, meta, payload, frame_id, scr); break;
    case 2048: encode_w32(wire, syn, meta, payload, frame_id, scr); break;
    default: return RIFL_ERR_INVALID_ARG;
    }
    return RIFL_OK;
}

int rifl_frame_encode_control(uint8_t *wire, unsigned frame_bits, uint16_t key,
                              unsigned frame_id, uint64_t *scr)
{
    if (!wire || !scr || frame_id > 0xFFF)
        return RIFL_ERR_INVALID_ARG;
    switch (frame_bits) {
    case 64: control_w1(wire, key, frame_id, scr); break;
    case 128: control_w2(wire, key, frame_id, scr); break;
    case 256: control_w4(wire, key, frame_id, scr); break;
    case 512: control_w8(wire, key, frame_id, scr); break;
    case 1024: control_w16(wire, key, frame_id, scr); break;
    case 2048: control_w32(wire, key, frame_id, scr); break;
    default: return RIFL_ERR_INVALID_ARG;
    }
    return RIFL_OK;
}

uint64_t rifl_frame_scrambler_after(unsigned frame_bits, unsigned meta, const uint8_t *payload,
                                    uint64_t scr)
{
    switch (frame_bits) {
    case 64: return after_w1(meta, payload, scr);
    case 128: return after_w2(meta, payload, scr);
    case 256: return after_w4(meta, payload, scr);
    case 512: return after_w8(meta, payload, scr);
    case 1024: return after_w16(meta, payload, scr);
    default: return after_w32(meta, payload, scr);
    }
}

uint64_t rifl_frame_scrambler_after_control(unsigned frame_bits, uint16_t key, uint64_t scr)
{
    switch (frame_bits) {
    case 64: return after_control_w1(key, scr);
    case 128: return after_control_w2(key, scr);
    case 256: return after_control_w4(key, scr);
    case 512: return after_control_w8(key, scr);
    case 1024: return after_control_w16(key, scr);
    default: return after_control_w32(key, scr);
    }
}

void rifl_scr_map_init(rifl_scr_map *t, unsigned frame_bits)
{
    /* the map is linear: the image of each state bit, then every byte value
     * as the XOR of its bits' images */
    static const uint8_t zero[RIFL_PAYLOAD_MAX_BYTES];
    uint64_t bit[33];
    for (unsigned j = 0; j < 33; j++)
        bit[j] = rifl_frame_scrambler_after(frame_bits, 0, zero, 1ULL << j);
    for (unsigned k = 0; k < 4; k++) {
        t->byte[k][0] = 0;
        for (unsigned b = 1; b < 256; b++)
            t->byte[k][b] = t->byte[k][b & (b - 1)] ^ bit[8 * k + (unsigned)__builtin_ctz(b)];
    }
    t->top = bit[32];
}

/* Decode with a constant number of words; fills everything but the kind. */
static inline __attribute__((always_inline)) void
decode_m(unsigned m, uint64_t *w, uint64_t *d, const uint8_t *wire, uint64_t *descr,
         uint8_t *payload, rifl_frame_info *info)
{
    /* w, d: m words each, declared by the caller with exactly m elements so
     * that the compiler can keep them in registers */
    for (unsigned i = 0; i < m; i++)
        w[i] = rifl_load_be64(wire + 8 * i);

    info->syn = (unsigned)(w[0] >> 62);
    info->vcode = (uint16_t)(w[m - 1] & 0xFFF);
    info->crc = rifl_crc12_wire(wire, m);
    info->id = (uint16_t)(info->crc ^ info->vcode);

    uint64_t h = *descr;
    _Pragma("GCC unroll 32")
    for (unsigned i = 0; i < m; i++) {
        uint64_t s = rifl_region_chunk(w, i, m);
        d[i] = rifl_descr_chunk(s, h);
        h = rifl_hist_after(h, s, i + 1 == m);
    }
    *descr = h & RIFL_SCRAMBLER_MASK;
    info->meta = (unsigned)(d[0] >> 62);
    /* payload words: the region shifted left by the two META bits */
    uint64_t first = d[0] << 2 | (m > 1 ? d[1] >> 62 : 0);
    uint64_t lastw = d[m - 1] << 2;
    info->key = (uint16_t)((info->meta << 14) | (unsigned)(first >> 50));
    info->format = (uint8_t)(lastw >> 16); /* payload byte 8m-3 */
    if (payload) {
        _Pragma("GCC unroll 32")
        for (unsigned i = 0; i + 1 < m; i++)
            rifl_store_be64(payload + 8 * i, rifl_funnel(d[i], d[i + 1], 62));
        if (m > 1) {
            /* the last 6 bytes with one 8-byte store that rewrites the two
             * bytes before them with their own value */
            uint64_t prevw = rifl_funnel(d[m - 2], d[m - 1], 62);
            rifl_store_be64(payload + 8 * m - 10, rifl_funnel(prevw, lastw, 16));
        } else {
            uint8_t tail[8];
            rifl_store_be64(tail, lastw);
            memcpy(payload, tail, 6);
        }
    }
}

#define RIFL_DECODE_WIDTH(M)                                                     \
    static __attribute__((noinline)) void decode_w##M(                          \
        const uint8_t *wire, uint64_t *descr, uint8_t *payload, rifl_frame_info *info) \
    {                                                                            \
        uint64_t w[M], d[M];                                                     \
        decode_m(M, w, d, wire, descr, payload, info);                           \
    }
RIFL_DECODE_WIDTH(1)
RIFL_DECODE_WIDTH(2)
RIFL_DECODE_WIDTH(4)
RIFL_DECODE_WIDTH(8)
RIFL_DECODE_WIDTH(16)
RIFL_DECODE_WIDTH(32)

int rifl_frame_decode(const uint8_t *wire, unsigned frame_bits, uint64_t *descr,
                      uint8_t *payload, rifl_frame_info *info)
{
    if (!wire || !descr || !info)
        return RIFL_ERR_INVALID_ARG;
    switch (frame_bits) {
    case 64: decode_w1(wire, descr, payload, info); break;
    case 128: decode_w2(wire, descr, payload, info); break;
    case 256: decode_w4(wire, descr, payload, info); break;
    case 512: decode_w8(wire, descr, payload, info); break;
    case 1024: decode_w16(wire, descr, payload, info); break;
    case 2048: decode_w32(wire, descr, payload, info); break;
    default: return RIFL_ERR_INVALID_ARG;
    }
    return rifl_frame_classify(info, rifl_payload_bytes(frame_bits));
}

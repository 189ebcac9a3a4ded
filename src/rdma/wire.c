/* The RDMA engine's wire formats (docs/rdma.md, "Packets"): a 16-byte word
 * is held as two 64-bit halves, bit 127 the top bit of its first byte, and
 * every field is read or written by its bit positions. */
#include <string.h>

#include "rifl/rdma_wire.h"

/* ---- 128-bit words ------------------------------------------------------------ */

struct w128 {
    uint64_t hi, lo; /* bits 127:64 and 63:0 */
};

static uint64_t load_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static void store_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

static struct w128 load128(const uint8_t *p) { return (struct w128){ load_be64(p), load_be64(p + 8) }; }

static void store128(uint8_t *p, struct w128 w)
{
    store_be64(p, w.hi);
    store_be64(p + 8, w.lo);
}

static uint64_t mask_of(unsigned width) { return width >= 64 ? ~0ull : (1ull << width) - 1; }

/* Bits msb..msb-width+1 (width <= 64). */
static uint64_t get_field(struct w128 w, unsigned msb, unsigned width)
{
    unsigned lsb = msb + 1 - width;
    if (lsb >= 64)
        return (w.hi >> (lsb - 64)) & mask_of(width);
    if (msb < 64)
        return (w.lo >> lsb) & mask_of(width);
    unsigned low = 64 - lsb; /* bits that sit in the low half */
    return ((w.hi << low) | (w.lo >> lsb)) & mask_of(width);
}

static void set_field(struct w128 *w, unsigned msb, unsigned width, uint64_t v)
{
    unsigned lsb = msb + 1 - width;
    v &= mask_of(width);
    if (lsb >= 64) {
        w->hi = (w->hi & ~(mask_of(width) << (lsb - 64))) | v << (lsb - 64);
    } else if (msb < 64) {
        w->lo = (w->lo & ~(mask_of(width) << lsb)) | v << lsb;
    } else {
        unsigned low = 64 - lsb, high = width - low;
        w->lo = (w->lo & mask_of(lsb)) | v << lsb;
        w->hi = (w->hi & ~mask_of(high)) | v >> low;
    }
}

/* ---- names ---------------------------------------------------------------------- */

const char *rifl_rdma_type_name(unsigned type)
{
    switch (type) {
    case RIFL_RDMA_WRITE: return "write";
    case RIFL_RDMA_READ_REQ: return "read_req";
    case RIFL_RDMA_NOTIFY: return "notify";
    case RIFL_RDMA_RESP: return "resp";
    case RIFL_RDMA_RELEASE: return "release";
    case RIFL_RDMA_FLOW_RATE: return "flow_rate";
    default: return "reserved";
    }
}

static const char *const status_names[RIFL_RDMA_STATUS_COUNT] = {
    "ack", "page_fault", "no_context", "crc", "decode", "protection",
};

const char *rifl_rdma_status_name(unsigned status)
{
    return status < RIFL_RDMA_STATUS_COUNT ? status_names[status] : "reserved";
}

static const char *const check_names[RIFL_RDMA_PKT_CHECK_COUNT] = {
    "ok", "short", "bad_hdr_edc", "reserved_type", "oversize", "skipped_type", "bad_ftr_crc",
    "bad_length", "bad_payload_crc", "no_output",
};

const char *rifl_rdma_check_name(rifl_rdma_check c)
{
    return (unsigned)c < RIFL_RDMA_PKT_CHECK_COUNT ? check_names[c] : "?";
}

/* ---- check codes ------------------------------------------------------------------ */

uint16_t rifl_rdma_crc16(const uint8_t *p, size_t n)
{
    uint16_t crc = 0xFFFF;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)(p[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    }
    return crc;
}

uint8_t rifl_rdma_crc8(const uint8_t *p, size_t n)
{
    uint8_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x80u) ? (uint8_t)((crc << 1) ^ 0x07u) : (uint8_t)(crc << 1);
    }
    return crc;
}

/* Reflected: the polynomial 0x1EDC6F41 bit-reversed is 0x82F63B78.  A
 * nibble table keeps it short and fast enough for 256-byte payloads. */
static uint32_t crc32c_nibbles(const uint8_t *p, size_t n)
{
    static const uint32_t nib[16] = {
        0x00000000u, 0x105EC76Fu, 0x20BD8EDEu, 0x30E349B1u, 0x417B1DBCu, 0x5125DAD3u,
        0x61C69362u, 0x7198540Du, 0x82F63B78u, 0x92A8FC17u, 0xA24BB5A6u, 0xB21572C9u,
        0xC38D26C4u, 0xD3D3E1ABu, 0xE330A81Au, 0xF36E6F75u,
    };
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        crc = (crc >> 4) ^ nib[crc & 15u];
        crc = (crc >> 4) ^ nib[crc & 15u];
    }
    return crc ^ 0xFFFFFFFFu;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* SSE 4.2's crc32 instruction computes exactly this CRC, 8 bytes at a time. */
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(const uint8_t *p, size_t n)
{
    uint64_t crc = 0xFFFFFFFFu;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        crc = __builtin_ia32_crc32di(crc, v);
    }
    uint32_t c = (uint32_t)crc;
    for (; n; p++, n--)
        c = __builtin_ia32_crc32qi(c, *p);
    return c ^ 0xFFFFFFFFu;
}
#endif

uint32_t rifl_crc32c(const uint8_t *p, size_t n)
{
    if (!p)
        n = 0; /* (no bytes: the code of none) */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (__builtin_cpu_supports("sse4.2"))
        return crc32c_sse42(p, n);
#endif
    return crc32c_nibbles(p, n);
}

uint32_t rifl_crc32c_portable(const uint8_t *p, size_t n)
{
    return crc32c_nibbles(p, p ? n : 0);
}

/* ---- header and footer ------------------------------------------------------------ */

static bool hdr_fits(const rifl_rdma_hdr *h)
{
    return h->type <= 15 && h->dst_node <= 0x3FFFFFu && h->dst_va <= RIFL_RDMA_VA_MASK &&
           h->length <= RIFL_RDMA_MAX_PAYLOAD && h->path <= 31;
}

static bool ftr_fits(const rifl_rdma_ftr *f)
{
    return f->src_node <= 0x3FFFFFu && f->tid <= 1023 && f->gen <= 1023 && f->attempt <= 15 &&
           f->pkt_index <= 63 && f->status <= 15;
}

int rifl_rdma_hdr_pack(const rifl_rdma_hdr *h, uint8_t out[RIFL_RDMA_HDR_BYTES])
{
    if (!h || !out || !hdr_fits(h))
        return RIFL_ERR_INVALID_ARG;
    struct w128 w = { 0, 0 };
    set_field(&w, 127, 4, h->type);
    set_field(&w, 123, 16, h->pdid);
    set_field(&w, 107, 22, h->dst_node);
    set_field(&w, 85, 42, h->dst_va);
    set_field(&w, 43, 9, h->length);
    set_field(&w, 34, 5, h->path);
    store128(out, w);
    uint16_t edc = rifl_rdma_crc16(out, 14);
    out[14] = (uint8_t)(edc >> 8);
    out[15] = (uint8_t)edc;
    return RIFL_OK;
}

int rifl_rdma_hdr_unpack(const uint8_t in[RIFL_RDMA_HDR_BYTES], rifl_rdma_hdr *h)
{
    if (!in || !h)
        return RIFL_ERR_INVALID_ARG;
    struct w128 w = load128(in);
    h->type = (unsigned)get_field(w, 127, 4);
    h->pdid = (uint16_t)get_field(w, 123, 16);
    h->dst_node = (uint32_t)get_field(w, 107, 22);
    h->dst_va = get_field(w, 85, 42);
    h->length = (unsigned)get_field(w, 43, 9);
    h->path = (unsigned)get_field(w, 34, 5);
    uint16_t edc = (uint16_t)get_field(w, 15, 16);
    return edc == rifl_rdma_crc16(in, 14) ? RIFL_OK : RIFL_ERR_FRAME;
}

int rifl_rdma_ftr_pack(const rifl_rdma_ftr *f, uint8_t out[RIFL_RDMA_FTR_BYTES])
{
    if (!f || !out || !ftr_fits(f))
        return RIFL_ERR_INVALID_ARG;
    struct w128 w = { 0, 0 };
    set_field(&w, 127, 22, f->src_node);
    set_field(&w, 105, 10, f->tid);
    set_field(&w, 95, 10, f->gen);
    set_field(&w, 85, 4, f->attempt);
    set_field(&w, 81, 1, f->first);
    set_field(&w, 80, 1, f->last);
    set_field(&w, 79, 1, f->notify);
    set_field(&w, 78, 6, f->pkt_index);
    set_field(&w, 72, 4, f->status);
    set_field(&w, 39, 32, f->payload_crc);
    store128(out, w);
    out[15] = rifl_rdma_crc8(out, 15);
    return RIFL_OK;
}

int rifl_rdma_ftr_unpack(const uint8_t in[RIFL_RDMA_FTR_BYTES], rifl_rdma_ftr *f)
{
    if (!in || !f)
        return RIFL_ERR_INVALID_ARG;
    struct w128 w = load128(in);
    f->src_node = (uint32_t)get_field(w, 127, 22);
    f->tid = (unsigned)get_field(w, 105, 10);
    f->gen = (unsigned)get_field(w, 95, 10);
    f->attempt = (unsigned)get_field(w, 85, 4);
    f->first = get_field(w, 81, 1) != 0;
    f->last = get_field(w, 80, 1) != 0;
    f->notify = get_field(w, 79, 1) != 0;
    f->pkt_index = (unsigned)get_field(w, 78, 6);
    f->status = (unsigned)get_field(w, 72, 4);
    f->payload_crc = (uint32_t)get_field(w, 39, 32);
    return in[15] == rifl_rdma_crc8(in, 15) ? RIFL_OK : RIFL_ERR_FRAME;
}

/* ---- whole packets ---------------------------------------------------------------- */

/* Whether `length` is allowed for `type` (types with a footer only). */
static bool length_ok(unsigned type, unsigned length)
{
    switch (type) {
    case RIFL_RDMA_WRITE: return length >= 1 && length <= RIFL_RDMA_MAX_PAYLOAD;
    case RIFL_RDMA_READ_REQ: return length == RIFL_RDMA_READ_REQ_BYTES;
    case RIFL_RDMA_NOTIFY: return length == RIFL_RDMA_NOTIFY_BYTES;
    case RIFL_RDMA_RESP: return length == 0;
    default: return false;
    }
}

static bool header_only(unsigned type)
{
    return type == RIFL_RDMA_RELEASE || type == RIFL_RDMA_FLOW_RATE;
}

static bool known(unsigned type)
{
    return type == RIFL_RDMA_WRITE || type == RIFL_RDMA_READ_REQ || type == RIFL_RDMA_NOTIFY ||
           type == RIFL_RDMA_RESP || header_only(type);
}

static size_t padded(unsigned length) { return (length + 15u) / 16u * 16u; }

size_t rifl_rdma_packet_bytes(unsigned type, unsigned length)
{
    if (header_only(type))
        return RIFL_RDMA_HDR_BYTES;
    if (!length_ok(type, length))
        return 0;
    return RIFL_RDMA_HDR_BYTES + padded(length) + RIFL_RDMA_FTR_BYTES;
}

int rifl_rdma_packet_build(const rifl_rdma_hdr *h, const rifl_rdma_ftr *f, const uint8_t *payload,
                           uint8_t *out, size_t cap, size_t *len)
{
    if (!h || !out || !len)
        return RIFL_ERR_INVALID_ARG;
    *len = 0;
    size_t bytes = rifl_rdma_packet_bytes(h->type, h->length);
    if (!bytes || (!header_only(h->type) && !f) || (h->length && !payload))
        return RIFL_ERR_INVALID_ARG;
    if (bytes > cap)
        return RIFL_ERR_TOO_BIG;
    int rc = rifl_rdma_hdr_pack(h, out);
    if (rc != RIFL_OK || header_only(h->type)) {
        *len = rc == RIFL_OK ? bytes : 0;
        return rc;
    }
    uint8_t *pl = out + RIFL_RDMA_HDR_BYTES;
    size_t pad = padded(h->length);
    if (h->length)
        memcpy(pl, payload, h->length);
    memset(pl + h->length, 0, pad - h->length);
    rifl_rdma_ftr ft = *f;
    ft.payload_crc = h->length ? rifl_crc32c(payload, h->length) : 0;
    rc = rifl_rdma_ftr_pack(&ft, pl + pad);
    if (rc == RIFL_OK)
        *len = bytes;
    return rc;
}

rifl_rdma_check rifl_rdma_packet_parse(const uint8_t *in, size_t len, rifl_rdma_packet *p)
{
    if (!p)
        return RIFL_RDMA_PKT_NO_OUTPUT;
    memset(p, 0, sizeof *p);
    if (!in || len < RIFL_RDMA_HDR_BYTES)
        return RIFL_RDMA_PKT_SHORT;
    if (rifl_rdma_hdr_unpack(in, &p->hdr) != RIFL_OK)
        return RIFL_RDMA_PKT_BAD_HDR;
    unsigned type = p->hdr.type, length = p->hdr.length;
    if (!known(type))
        return RIFL_RDMA_PKT_RESERVED;
    if (header_only(type)) {
        p->bytes = RIFL_RDMA_HDR_BYTES;
        return RIFL_RDMA_PKT_SKIPPED;
    }
    if (length > RIFL_RDMA_MAX_PAYLOAD)
        return RIFL_RDMA_PKT_OVERSIZE; /* the 9-bit field goes to 511 */
    /* the header checks, so its length gives the packet's size */
    p->bytes = RIFL_RDMA_HDR_BYTES + padded(length) + RIFL_RDMA_FTR_BYTES;
    if (len < p->bytes)
        return RIFL_RDMA_PKT_SHORT;
    const uint8_t *pl = in + RIFL_RDMA_HDR_BYTES;
    if (rifl_rdma_ftr_unpack(pl + padded(length), &p->ftr) != RIFL_OK)
        return RIFL_RDMA_PKT_BAD_FTR;
    if (!length_ok(type, length))
        return RIFL_RDMA_PKT_BAD_LENGTH;
    p->payload = length ? pl : NULL;
    uint32_t crc = length ? rifl_crc32c(pl, length) : 0;
    return crc == p->ftr.payload_crc ? RIFL_RDMA_PKT_OK : RIFL_RDMA_PKT_BAD_PAYLOAD;
}

/* ---- payloads, descriptor ------------------------------------------------------------ */

void rifl_rdma_notify_pack(const rifl_rdma_notify *n, uint8_t out[RIFL_RDMA_NOTIFY_BYTES])
{
    store_be64(out, n->target);
    store_be64(out + 8, n->cookie);
    store_be64(out + 16, (uint64_t)n->transfer_length << 32 | n->immediate);
    store_be64(out + 24, 0);
}

int rifl_rdma_notify_unpack(const uint8_t in[RIFL_RDMA_NOTIFY_BYTES], rifl_rdma_notify *n)
{
    n->target = load_be64(in);
    n->cookie = load_be64(in + 8);
    uint64_t w2 = load_be64(in + 16);
    n->transfer_length = (uint32_t)(w2 >> 32);
    n->immediate = (uint32_t)w2;
    return load_be64(in + 24) == 0 ? RIFL_OK : RIFL_ERR_FRAME;
}

void rifl_rdma_read_req_pack(const rifl_rdma_read_req *r, uint8_t out[RIFL_RDMA_READ_REQ_BYTES])
{
    store_be64(out, r->src_va);
    store_be64(out + 8, r->dst);
    store_be64(out + 16, (uint64_t)r->length << 32 | r->immediate);
    store_be64(out + 24, r->cookie);
    store_be64(out + 32, r->notify_target);
}

void rifl_rdma_read_req_unpack(const uint8_t in[RIFL_RDMA_READ_REQ_BYTES], rifl_rdma_read_req *r)
{
    r->src_va = load_be64(in);
    r->dst = load_be64(in + 8);
    uint64_t w2 = load_be64(in + 16);
    r->length = (uint32_t)(w2 >> 32);
    r->immediate = (uint32_t)w2;
    r->cookie = load_be64(in + 24);
    r->notify_target = load_be64(in + 32);
}

static uint64_t bits64(uint64_t w, unsigned msb, unsigned width)
{
    return (w >> (msb + 1 - width)) & mask_of(width);
}

static uint64_t put64(uint64_t v, unsigned msb, unsigned width)
{
    return (v & mask_of(width)) << (msb + 1 - width);
}

int rifl_rdma_desc_pack(const rifl_rdma_desc *d, uint64_t words[4])
{
    if (!d || !words || d->bytes_sent > 0x7FFF || d->dependency_id > 1023 ||
        d->transfer_length < 1 || d->transfer_length > RIFL_RDMA_BLOCK_MAX || d->gen > 1023 ||
        d->attempt > 15 || d->path > 31)
        return RIFL_ERR_INVALID_ARG;
    words[0] = d->src_va;
    words[1] = d->dst;
    words[2] = put64(d->db, 63, 1) | put64(d->error, 62, 1) | put64(d->send_notify, 59, 1) |
               put64(d->acked, 58, 1) | put64(d->done, 57, 1) | put64(d->bytes_sent, 56, 15) |
               put64(d->dependency_id, 41, 10) | put64(d->chained, 31, 1) |
               put64(d->transfer_length, 30, 15) | put64(d->pd, 15, 16);
    words[3] = put64(d->gen, 18, 10) | put64(d->attempt, 8, 4) | put64(d->path, 4, 5);
    return RIFL_OK;
}

int rifl_rdma_desc_unpack(const uint64_t words[4], rifl_rdma_desc *d)
{
    if (!words || !d)
        return RIFL_ERR_INVALID_ARG;
    uint64_t w2 = words[2], w3 = words[3];
    d->src_va = words[0];
    d->dst = words[1];
    d->db = bits64(w2, 63, 1);
    d->error = bits64(w2, 62, 1);
    d->send_notify = bits64(w2, 59, 1);
    d->acked = bits64(w2, 58, 1);
    d->done = bits64(w2, 57, 1);
    d->bytes_sent = (unsigned)bits64(w2, 56, 15);
    d->dependency_id = (unsigned)bits64(w2, 41, 10);
    d->chained = bits64(w2, 31, 1);
    d->transfer_length = (unsigned)bits64(w2, 30, 15);
    d->pd = (uint16_t)bits64(w2, 15, 16);
    d->gen = (unsigned)bits64(w3, 18, 10);
    d->attempt = (unsigned)bits64(w3, 8, 4);
    d->path = (unsigned)bits64(w3, 4, 5);
    bool reserved = bits64(w2, 61, 2) || bits64(w3, 63, 45);
    bool length_bad = d->transfer_length < 1 || d->transfer_length > RIFL_RDMA_BLOCK_MAX;
    return reserved || length_bad ? RIFL_ERR_FRAME : RIFL_OK;
}

/* ---- the compact mapping ------------------------------------------------------------ */

size_t rifl_rdma_compact_bytes(unsigned type, unsigned length)
{
    if (header_only(type))
        return RIFL_RDMA_COMPACT_HDR;
    if (!length_ok(type, length))
        return 0;
    return RIFL_RDMA_COMPACT_HDR + length + RIFL_RDMA_COMPACT_FTR;
}

int rifl_rdma_compact_build(const rifl_rdma_hdr *h, const rifl_rdma_ftr *f,
                            const uint8_t *payload, uint8_t *out, size_t cap, size_t *len)
{
    if (!h || !out || !len)
        return RIFL_ERR_INVALID_ARG;
    *len = 0;
    size_t bytes = rifl_rdma_compact_bytes(h->type, h->length);
    if (!bytes || (!header_only(h->type) && (!f || !ftr_fits(f))) || (h->length && !payload) ||
        !hdr_fits(h))
        return RIFL_ERR_INVALID_ARG;
    if (bytes > cap)
        return RIFL_ERR_TOO_BIG;
    /* the default header and footer, less their check codes */
    uint8_t word[RIFL_RDMA_HDR_BYTES];
    rifl_rdma_hdr_pack(h, word);
    memcpy(out, word, RIFL_RDMA_COMPACT_HDR);
    if (!header_only(h->type)) {
        if (h->length)
            memcpy(out + RIFL_RDMA_COMPACT_HDR, payload, h->length);
        rifl_rdma_ftr ft = *f;
        ft.payload_crc = 0;
        rifl_rdma_ftr_pack(&ft, word);
        memcpy(out + RIFL_RDMA_COMPACT_HDR + h->length, word, RIFL_RDMA_COMPACT_FTR);
    }
    *len = bytes;
    return RIFL_OK;
}

rifl_rdma_check rifl_rdma_compact_parse(const uint8_t *in, size_t len, rifl_rdma_packet *p)
{
    if (!p)
        return RIFL_RDMA_PKT_NO_OUTPUT;
    memset(p, 0, sizeof *p);
    if (!in || len < RIFL_RDMA_COMPACT_HDR)
        return RIFL_RDMA_PKT_SHORT;
    uint8_t word[RIFL_RDMA_HDR_BYTES] = { 0 };
    memcpy(word, in, RIFL_RDMA_COMPACT_HDR);
    rifl_rdma_hdr_unpack(word, &p->hdr); /* no check code to compare */
    unsigned type = p->hdr.type, length = p->hdr.length;
    if (!known(type))
        return RIFL_RDMA_PKT_RESERVED;
    if (header_only(type)) {
        p->bytes = RIFL_RDMA_COMPACT_HDR;
        return RIFL_RDMA_PKT_SKIPPED;
    }
    if (length > RIFL_RDMA_MAX_PAYLOAD)
        return RIFL_RDMA_PKT_OVERSIZE;
    p->bytes = RIFL_RDMA_COMPACT_HDR + length + RIFL_RDMA_COMPACT_FTR;
    if (len < p->bytes)
        return RIFL_RDMA_PKT_SHORT;
    memset(word, 0, sizeof word);
    memcpy(word, in + RIFL_RDMA_COMPACT_HDR + length, RIFL_RDMA_COMPACT_FTR);
    rifl_rdma_ftr_unpack(word, &p->ftr);
    p->ftr.payload_crc = 0;
    if (!length_ok(type, length))
        return RIFL_RDMA_PKT_BAD_LENGTH;
    p->payload = length ? in + RIFL_RDMA_COMPACT_HDR : NULL;
    return RIFL_RDMA_PKT_OK;
}

/* How the RDMA engine lays data out (docs/rdma.md): transfers cut into
 * blocks, blocks into packets, packets' source bytes into page-bound reads,
 * packets into bundles (one Layer 2 message each), a block's notification
 * record, and what a route can carry. */
#include <string.h>

#include "rifl/frame.h"
#include "rifl/l2.h"
#include "rifl/rdma_wire.h"

#define WINDOW 16384u /* blocks never cross a multiple of 16 KB */
#define DST_PAGE 4096u
#define SRC_PAGE 4096u

uint32_t rifl_rdma_block_len(uint64_t dst_va, uint64_t left, bool cell_mode)
{
    uint64_t room = WINDOW - (dst_va % WINDOW);
    uint64_t n = left < room ? left : room;
    if (cell_mode && n > RIFL_RDMA_CELL_BLOCK_MAX)
        n = RIFL_RDMA_CELL_BLOCK_MAX;
    return (uint32_t)n;
}

unsigned rifl_rdma_block_packets(uint64_t dst_va, uint32_t len, bool cell_mode,
                                 rifl_rdma_seg out[RIFL_RDMA_BLOCK_PACKETS])
{
    if (!out || len == 0 || len > (cell_mode ? RIFL_RDMA_CELL_BLOCK_MAX : RIFL_RDMA_BLOCK_MAX) ||
        dst_va > RIFL_RDMA_VA_MASK || (dst_va % WINDOW) + len > WINDOW)
        return 0;
    unsigned n = 0;
    uint64_t at = dst_va, end = dst_va + len;
    while (at < end) {
        uint64_t cut;
        if (cell_mode) {
            uint64_t page_end = (at / DST_PAGE + 1) * DST_PAGE;
            cut = at + RIFL_RDMA_CELL_PAYLOAD < page_end ? at + RIFL_RDMA_CELL_PAYLOAD : page_end;
        } else {
            cut = (at / RIFL_RDMA_MAX_PAYLOAD + 1) * RIFL_RDMA_MAX_PAYLOAD;
        }
        if (cut > end)
            cut = end;
        if (n == RIFL_RDMA_BLOCK_PACKETS)
            return 0; /* cannot happen within one window; kept as a guard */
        out[n] = (rifl_rdma_seg){ .dst_va = at, .len = (unsigned)(cut - at),
                                  .pkt_index = cell_mode ? n : (unsigned)((at >> 8) & 63u),
                                  .first = n == 0, .last = cut == end };
        n++;
        at = cut;
    }
    return n;
}

unsigned rifl_rdma_source_reads(uint64_t src_va, unsigned len, unsigned piece[2])
{
    uint64_t room = SRC_PAGE - (src_va % SRC_PAGE);
    if (len <= room) {
        piece[0] = len;
        piece[1] = 0;
        return len ? 1 : 0;
    }
    piece[0] = (unsigned)room;
    piece[1] = len - (unsigned)room;
    return 2;
}

/* ---- bundles ---------------------------------------------------------------------- */

int rifl_rdma_bundle_init(rifl_rdma_bundle *b, uint8_t *buf, size_t cap)
{
    if (!b || !buf || cap < RIFL_RDMA_BUNDLE_PREFIX + RIFL_RDMA_HDR_BYTES)
        return RIFL_ERR_INVALID_ARG;
    *b = (rifl_rdma_bundle){ buf, cap, RIFL_RDMA_BUNDLE_PREFIX, 0, false };
    return RIFL_OK;
}

int rifl_rdma_bundle_add(rifl_rdma_bundle *b, const uint8_t *pkt, size_t len)
{
    if (!b || !pkt || len > RIFL_RDMA_MAX_PACKET ||
        (b->compact ? len < RIFL_RDMA_COMPACT_HDR : len < RIFL_RDMA_HDR_BYTES || len % 16))
        return RIFL_ERR_INVALID_ARG;
    if (b->count == RIFL_RDMA_BUNDLE_MAX_PACKETS ||
        b->len - RIFL_RDMA_BUNDLE_PREFIX + len > RIFL_RDMA_BUNDLE_MAX_BYTES ||
        b->len + len > b->cap)
        return RIFL_ERR_TOO_BIG;
    memcpy(b->buf + b->len, pkt, len);
    b->len += len;
    b->count++;
    return RIFL_OK;
}

int rifl_rdma_bundle_finish(rifl_rdma_bundle *b, size_t *len)
{
    if (!b || !len)
        return RIFL_ERR_INVALID_ARG;
    if (!b->count)
        return RIFL_ERR_STATE;
    size_t bytes = b->len - RIFL_RDMA_BUNDLE_PREFIX;
    b->buf[0] = RIFL_L2_PROTO_RDMA;
    b->buf[1] = (uint8_t)b->count;
    b->buf[2] = (uint8_t)(bytes >> 8);
    b->buf[3] = (uint8_t)bytes;
    *len = b->len;
    return RIFL_OK;
}

void rifl_rdma_bundle_reader_init(rifl_rdma_bundle_reader *r, const uint8_t *data, size_t len,
                                  unsigned count)
{
    *r = (rifl_rdma_bundle_reader){ data, data ? len : 0, 0, count, 0, false, false };
}

rifl_rdma_walk rifl_rdma_bundle_next(rifl_rdma_bundle_reader *r, rifl_rdma_packet *p,
                                     rifl_rdma_check *check)
{
    if (r->stopped)
        return RIFL_RDMA_WALK_DROPPED;
    if (r->seen == r->count || r->off == r->len) {
        /* the prefix's count and bytes must both run out here */
        bool agree = r->seen == r->count && r->off == r->len && r->count;
        r->stopped = !agree;
        return agree ? RIFL_RDMA_WALK_END : RIFL_RDMA_WALK_DROPPED;
    }
    rifl_rdma_check c = r->compact ? rifl_rdma_compact_parse(r->data + r->off, r->len - r->off, p)
                                   : rifl_rdma_packet_parse(r->data + r->off, r->len - r->off, p);
    *check = c;
    if (c == RIFL_RDMA_PKT_SHORT || c == RIFL_RDMA_PKT_BAD_HDR || c == RIFL_RDMA_PKT_RESERVED ||
        c == RIFL_RDMA_PKT_OVERSIZE) {
        r->stopped = true;
        return RIFL_RDMA_WALK_DROPPED;
    }
    r->off += p->bytes;
    r->seen++;
    return RIFL_RDMA_WALK_PACKET;
}

/* ---- records and capacity ------------------------------------------------------------ */

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

void rifl_rdma_record_pack(uint64_t cookie, uint32_t transfer_length, uint32_t immediate,
                           uint32_t src_node, uint16_t pdid, unsigned tid,
                           uint8_t out[RIFL_RDMA_RECORD_BYTES])
{
    put_be64(out, cookie);
    put_be64(out + 8, (uint64_t)transfer_length << 32 | immediate);
    put_be64(out + 16, (uint64_t)(src_node & 0x3FFFFFu) << 42 | (uint64_t)pdid << 26 |
                           (uint64_t)(tid & 1023u) << 16);
    put_be64(out + 24, 1);
}

static uint64_t get_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

void rifl_rdma_record_unpack(const uint8_t in[RIFL_RDMA_RECORD_BYTES], rifl_rdma_record *r)
{
    uint64_t w1 = get_be64(in + 8), w2 = get_be64(in + 16);
    *r = (rifl_rdma_record){ .cookie = get_be64(in),
                             .transfer_length = (uint32_t)(w1 >> 32),
                             .immediate = (uint32_t)w1,
                             .src_node = (uint32_t)(w2 >> 42),
                             .pdid = (uint16_t)(w2 >> 26),
                             .tid = (unsigned)(w2 >> 16) & 1023u,
                             .written = in[31] == 1 };
}

const char *rifl_rdma_mapping_name(rifl_rdma_mapping m)
{
    switch (m) {
    case RIFL_RDMA_MAP_BUNDLE: return "bundle";
    case RIFL_RDMA_MAP_CELL: return "cell";
    case RIFL_RDMA_MAP_COMPACT: return "compact";
    default: return NULL;
    }
}

unsigned rifl_rdma_mapping_packets(rifl_rdma_mapping m)
{
    switch (m) {
    case RIFL_RDMA_MAP_BUNDLE: return 7;
    case RIFL_RDMA_MAP_CELL: return 1;
    case RIFL_RDMA_MAP_COMPACT: return 11;
    default: return 0;
    }
}

double rifl_rdma_capacity_gbps(double frame_rate_gbps, unsigned frame_bits,
                               unsigned bundle_packets, bool cell_mode)
{
    return rifl_rdma_capacity_map_gbps(frame_rate_gbps, frame_bits, bundle_packets,
                                       cell_mode ? RIFL_RDMA_MAP_CELL : RIFL_RDMA_MAP_BUNDLE);
}

double rifl_rdma_capacity_map_gbps(double frame_rate_gbps, unsigned frame_bits,
                                   unsigned bundle_packets, rifl_rdma_mapping m)
{
    if (rifl_frame_width_check(frame_bits) != RIFL_OK || !(frame_rate_gbps > 0) ||
        !rifl_rdma_mapping_name(m))
        return 0;
    unsigned per_frame = frame_bits / 8 - 2;
    unsigned f = (RIFL_L2_CELL_BYTES + per_frame - 1) / per_frame; /* frames per cell */
    double user, cells;
    if (m == RIFL_RDMA_MAP_CELL) {
        user = RIFL_RDMA_CELL_PAYLOAD;
        cells = 1;
    } else {
        unsigned packet = m == RIFL_RDMA_MAP_COMPACT
                              ? RIFL_RDMA_COMPACT_HDR + RIFL_RDMA_MAX_PAYLOAD + RIFL_RDMA_COMPACT_FTR
                              : RIFL_RDMA_MAX_PACKET;
        if (bundle_packets < 1 || bundle_packets > RIFL_RDMA_BUNDLE_MAX_PACKETS)
            return 0;
        unsigned bytes = RIFL_RDMA_BUNDLE_PREFIX + bundle_packets * packet;
        if (bytes - RIFL_RDMA_BUNDLE_PREFIX > RIFL_RDMA_BUNDLE_MAX_BYTES)
            return 0;
        user = (double)bundle_packets * RIFL_RDMA_MAX_PAYLOAD;
        cells = (bytes + RIFL_L2_CELL_PAYLOAD - 1) / RIFL_L2_CELL_PAYLOAD;
    }
    return frame_rate_gbps * user / (cells * f * (frame_bits / 8));
}

/* rifl: the RDMA engine's wire formats (docs/rdma.md): packet header and
 * footer, their check codes, the NOTIFY and READ_REQ payloads, the send
 * descriptor and the global-address word; and the rules that lay data out in
 * them: blocks, packets, source reads, bundles, notification records.  Fields are read and written
 * through these accessors, never by casting a struct over a buffer: every
 * field is MSB first (bit 127 of a 16-byte word is the top bit of byte 0),
 * every multi-byte value big-endian. */
#ifndef RIFL_RDMA_WIRE_H
#define RIFL_RDMA_WIRE_H

#include "rifl/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIFL_RDMA_HDR_BYTES 16
#define RIFL_RDMA_FTR_BYTES 16
#define RIFL_RDMA_MAX_PAYLOAD 256
#define RIFL_RDMA_MAX_PACKET (RIFL_RDMA_HDR_BYTES + RIFL_RDMA_MAX_PAYLOAD + RIFL_RDMA_FTR_BYTES)
#define RIFL_RDMA_NOTIFY_BYTES 32
#define RIFL_RDMA_READ_REQ_BYTES 40
#define RIFL_RDMA_NODE_MAX 0x3FFFFEu    /* 0x3FFFFF is reserved */
#define RIFL_RDMA_VA_MASK 0x3FFFFFFFFFFull /* 42 bits */
#define RIFL_RDMA_BLOCK_MAX 16384       /* a transaction's bytes */
#define RIFL_RDMA_TIDS 1024
#define RIFL_RDMA_ATTEMPT_MAX 15

/* Packet types (numbered as the thesis lists them). */
typedef enum rifl_rdma_type {
    RIFL_RDMA_WRITE = 1,      /* header, payload 1-256, footer */
    RIFL_RDMA_READ_REQ = 2,   /* header, payload 40, footer */
    RIFL_RDMA_NOTIFY = 3,     /* header, payload 32, footer */
    RIFL_RDMA_RESP = 8,       /* header, footer: ACK or NACK */
    RIFL_RDMA_RELEASE = 9,    /* header only; reserved: skipped, counted */
    RIFL_RDMA_FLOW_RATE = 10  /* header only; reserved: skipped, counted */
} rifl_rdma_type;

/* The status a RESP carries (0 an ACK, the others NACKs). */
typedef enum rifl_rdma_status {
    RIFL_RDMA_ACK = 0,
    RIFL_RDMA_NACK_PAGE_FAULT = 1, /* destination page not resident: retry later */
    RIFL_RDMA_NACK_NO_CONTEXT = 2, /* no receiver context or mailbox full: retry later */
    RIFL_RDMA_NACK_CRC = 3,        /* payload CRC wrong: retry now */
    RIFL_RDMA_NACK_DECODE = 4,     /* inconsistent fields: retry now */
    RIFL_RDMA_NACK_PROTECTION = 5, /* PD, registration, bounds or rights: fail */
    RIFL_RDMA_STATUS_COUNT
} rifl_rdma_status;

RIFL_API const char *rifl_rdma_type_name(unsigned type);
RIFL_API const char *rifl_rdma_status_name(unsigned status);

/* ---- check codes ------------------------------------------------------------ */

/* CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF): the header's hdr_edc. */
RIFL_API uint16_t rifl_rdma_crc16(const uint8_t *p, size_t n);
/* CRC-8 (poly 0x07, init 0): the footer's ftr_crc. */
RIFL_API uint8_t rifl_rdma_crc8(const uint8_t *p, size_t n);
/* CRC-32C (poly 0x1EDC6F41 reflected, init and xorout 0xFFFFFFFF): the
 * payload's check. */
RIFL_API uint32_t rifl_crc32c(const uint8_t *p, size_t n);
/* The same without the CPU's CRC instruction (rifl_crc32c uses SSE 4.2's
 * crc32 where the CPU has it): for tests and comparison. */
RIFL_API uint32_t rifl_crc32c_portable(const uint8_t *p, size_t n);

/* ---- header and footer ------------------------------------------------------ */

typedef struct rifl_rdma_hdr {
    unsigned type;            /* 4 bits: rifl_rdma_type */
    uint16_t pdid;            /* protection domain */
    uint32_t dst_node;        /* 22 bits */
    uint64_t dst_va;          /* 42 bits */
    unsigned length;          /* payload bytes, 0-256 */
    unsigned path;            /* 5 bits */
} rifl_rdma_hdr;

typedef struct rifl_rdma_ftr {
    uint32_t src_node;        /* 22 bits */
    unsigned tid;             /* 10 bits */
    unsigned gen;             /* 10 bits: the TID's use */
    unsigned attempt;         /* 4 bits: the block's re-initiation */
    bool first, last, notify;
    unsigned pkt_index;       /* 6 bits: the packet's bit in the block's bitmap */
    unsigned status;          /* 4 bits: rifl_rdma_status in a RESP, else 0 */
    uint32_t payload_crc;     /* CRC-32C of the payload, 0 without one */
} rifl_rdma_ftr;

/* Write the header with its hdr_edc.  RIFL_ERR_INVALID_ARG when a field
 * does not fit its width (type above 15, node above 0x3FFFFF, VA above 42
 * bits, length above 256, path above 31). */
RIFL_API int rifl_rdma_hdr_pack(const rifl_rdma_hdr *h, uint8_t out[RIFL_RDMA_HDR_BYTES]);
/* Read a header.  RIFL_ERR_FRAME when hdr_edc does not check (the fields
 * are still read, for counting and capture), RIFL_OK otherwise; reserved
 * bits are ignored. */
RIFL_API int rifl_rdma_hdr_unpack(const uint8_t in[RIFL_RDMA_HDR_BYTES], rifl_rdma_hdr *h);
/* Write the footer with its ftr_crc (payload_crc as given).
 * RIFL_ERR_INVALID_ARG when a field does not fit its width. */
RIFL_API int rifl_rdma_ftr_pack(const rifl_rdma_ftr *f, uint8_t out[RIFL_RDMA_FTR_BYTES]);
/* Read a footer: RIFL_ERR_FRAME when ftr_crc does not check. */
RIFL_API int rifl_rdma_ftr_unpack(const uint8_t in[RIFL_RDMA_FTR_BYTES], rifl_rdma_ftr *f);

/* ---- whole packets ------------------------------------------------------------ */

/* Bytes of a packet of `type` with `length` payload bytes: 16 for a
 * header-only type, 32 for a RESP, 32 + length rounded up to 16 for the
 * others; 0 for a reserved type or a length its type does not allow. */
RIFL_API size_t rifl_rdma_packet_bytes(unsigned type, unsigned length);

/* Build a packet: header, payload padded with zeros to 16 bytes, footer
 * with the payload's CRC-32C (computed here, f->payload_crc ignored).
 * RIFL_ERR_INVALID_ARG for a field out of range, a length the type does not
 * allow or a missing payload; RIFL_ERR_TOO_BIG when `cap` is short. */
RIFL_API int rifl_rdma_packet_build(const rifl_rdma_hdr *h, const rifl_rdma_ftr *f,
                                    const uint8_t *payload, uint8_t *out, size_t cap,
                                    size_t *len);

/* What a received packet is, in the order the receiver checks it. */
typedef enum rifl_rdma_check {
    RIFL_RDMA_PKT_OK = 0,
    RIFL_RDMA_PKT_SHORT,        /* fewer bytes than a header, or than its type needs */
    RIFL_RDMA_PKT_BAD_HDR,      /* hdr_edc wrong: dropped silently, counted */
    RIFL_RDMA_PKT_RESERVED,     /* a reserved type: the rest of its bundle dropped */
    RIFL_RDMA_PKT_OVERSIZE,     /* a length field above 256: no packet has that
                                 * size, so the rest of its bundle is dropped */
    RIFL_RDMA_PKT_SKIPPED,      /* release or flow rate: skipped, counted */
    RIFL_RDMA_PKT_BAD_FTR,      /* ftr_crc wrong: dropped silently, counted */
    RIFL_RDMA_PKT_BAD_LENGTH,   /* a length its type does not allow: NACK DECODE */
    RIFL_RDMA_PKT_BAD_PAYLOAD,  /* payload CRC-32C wrong: NACK CRC */
    RIFL_RDMA_PKT_NO_OUTPUT,    /* the call gave no packet to parse into */
    RIFL_RDMA_PKT_CHECK_COUNT
} rifl_rdma_check;

RIFL_API const char *rifl_rdma_check_name(rifl_rdma_check c);

typedef struct rifl_rdma_packet {
    rifl_rdma_hdr hdr;
    rifl_rdma_ftr ftr;        /* valid when the type has a footer */
    const uint8_t *payload;   /* into the buffer parsed; NULL without one */
    size_t bytes;             /* the packet's size on the wire */
} rifl_rdma_packet;

/* Parse the packet at the start of `in` (`len` bytes available; a bundle
 * may hold more behind it).  Fills what it could read and returns where
 * the checks stopped; p->bytes is set whenever the type is known and the
 * length fits a packet (never above RIFL_RDMA_MAX_PACKET), so the caller can
 * step to the next packet of a bundle. */
RIFL_API rifl_rdma_check rifl_rdma_packet_parse(const uint8_t *in, size_t len,
                                                rifl_rdma_packet *p);

/* ---- the compact mapping (docs/rdma.md, a project rule) -------------------------------
 * A RIFL link delivers every byte unchanged, so the compact mapping drops
 * what only guards against damage: a packet is the header's first 14
 * bytes (hdr_edc left out), the payload's `length` bytes without padding,
 * and the footer's first 8 bytes (payload_crc and ftr_crc left out); a
 * header-only type is its 14 bytes.  Fields keep their bits. */
#define RIFL_RDMA_COMPACT_HDR 14
#define RIFL_RDMA_COMPACT_FTR 8

/* 14, 22 + length, or 0 as rifl_rdma_packet_bytes. */
RIFL_API size_t rifl_rdma_compact_bytes(unsigned type, unsigned length);
/* As rifl_rdma_packet_build, in the compact format. */
RIFL_API int rifl_rdma_compact_build(const rifl_rdma_hdr *h, const rifl_rdma_ftr *f,
                                     const uint8_t *payload, uint8_t *out, size_t cap,
                                     size_t *len);
/* As rifl_rdma_packet_parse, in the compact format: never BAD_HDR,
 * BAD_FTR or BAD_PAYLOAD (there is no check code). */
RIFL_API rifl_rdma_check rifl_rdma_compact_parse(const uint8_t *in, size_t len,
                                                 rifl_rdma_packet *p);

/* ---- payloads, descriptor, addresses --------------------------------------------- */

/* A node and VA in one 64-bit word: node in 63:42, VA in 41:0. */
static inline uint64_t rifl_rdma_gva_word(uint32_t node, uint64_t va)
{
    return ((uint64_t)(node & 0x3FFFFFu) << 42) | (va & RIFL_RDMA_VA_MASK);
}
static inline uint32_t rifl_rdma_gva_node(uint64_t w) { return (uint32_t)(w >> 42); }
static inline uint64_t rifl_rdma_gva_va(uint64_t w) { return w & RIFL_RDMA_VA_MASK; }

typedef struct rifl_rdma_notify {
    uint64_t target;          /* node | VA of the notification */
    uint64_t cookie;
    uint32_t transfer_length;
    uint32_t immediate;
} rifl_rdma_notify;

typedef struct rifl_rdma_read_req {
    uint64_t src_va;          /* on the data's node */
    uint64_t dst;             /* initiator's node | VA of its buffer */
    uint32_t length;
    uint32_t immediate;
    uint64_t cookie;
    uint64_t notify_target;   /* at the initiator */
} rifl_rdma_read_req;

RIFL_API void rifl_rdma_notify_pack(const rifl_rdma_notify *n, uint8_t out[RIFL_RDMA_NOTIFY_BYTES]);
/* RIFL_ERR_FRAME when the fourth word is not zero. */
RIFL_API int rifl_rdma_notify_unpack(const uint8_t in[RIFL_RDMA_NOTIFY_BYTES], rifl_rdma_notify *n);
RIFL_API void rifl_rdma_read_req_pack(const rifl_rdma_read_req *r,
                                      uint8_t out[RIFL_RDMA_READ_REQ_BYTES]);
RIFL_API void rifl_rdma_read_req_unpack(const uint8_t in[RIFL_RDMA_READ_REQ_BYTES],
                                        rifl_rdma_read_req *r);

/* The send descriptor: four 64-bit words. */
typedef struct rifl_rdma_desc {
    uint64_t src_va;          /* word 0 */
    uint64_t dst;             /* word 1: node | VA */
    bool db;                  /* double buffered: waits for a predecessor */
    bool error, acked, done;  /* written by the engine */
    bool send_notify;
    unsigned bytes_sent;      /* 15 bits, written by the engine */
    unsigned dependency_id;   /* 10 bits */
    bool chained;
    unsigned transfer_length; /* 1-16384 */
    uint16_t pd;
    unsigned gen, attempt;    /* word 3: seq */
    unsigned path;            /* 5 bits */
} rifl_rdma_desc;

/* RIFL_ERR_INVALID_ARG when a field does not fit its width or the length
 * is outside 1-16384. */
RIFL_API int rifl_rdma_desc_pack(const rifl_rdma_desc *d, uint64_t words[4]);
/* RIFL_ERR_FRAME when reserved bits are set or the length is outside
 * 1-16384 (the fields are read all the same). */
RIFL_API int rifl_rdma_desc_unpack(const uint64_t words[4], rifl_rdma_desc *d);

/* ---- cutting transfers, blocks and source reads (docs/rdma.md) ----------------- */

#define RIFL_RDMA_CELL_PAYLOAD 224      /* cell_mode: a packet's payload at most */
#define RIFL_RDMA_CELL_BLOCK_MAX 12288  /* cell_mode: a block's bytes at most */
#define RIFL_RDMA_BLOCK_PACKETS 64      /* a block's packets at most */

/* The next block of a transfer with `left` bytes still to go to `dst_va`:
 * up to the next multiple of 16 KB of the destination address, and in
 * cell_mode at most 12 KB.  0 when left is 0. */
RIFL_API uint32_t rifl_rdma_block_len(uint64_t dst_va, uint64_t left, bool cell_mode);

/* One packet of a block. */
typedef struct rifl_rdma_seg {
    uint64_t dst_va;
    unsigned len;
    unsigned pkt_index;
    bool first, last;
} rifl_rdma_seg;

/* The packets of a block of `len` bytes to `dst_va`, in order: cut at every
 * multiple of 256 of the destination address (pkt_index = dst_va[13:8]), or
 * in cell_mode at 224 bytes and at every 4 KB destination page (pkt_index
 * counting from 0).  Returns how many (at most 64), or 0 for a block that
 * is empty, longer than a block may be or not within one 16 KB window of
 * the destination. */
RIFL_API unsigned rifl_rdma_block_packets(uint64_t dst_va, uint32_t len, bool cell_mode,
                                          rifl_rdma_seg out[RIFL_RDMA_BLOCK_PACKETS]);

/* The pieces in which `len` source bytes at `src_va` are read: one, or two
 * when they span a 4 KB source page (len[1] is then the second piece). */
RIFL_API unsigned rifl_rdma_source_reads(uint64_t src_va, unsigned len, unsigned piece[2]);

/* ---- bundles: RDMA packets in one Layer 2 message ------------------------------ */

#define RIFL_RDMA_BUNDLE_PREFIX 4
#define RIFL_RDMA_BUNDLE_MAX_PACKETS 255
#define RIFL_RDMA_BUNDLE_MAX_BYTES 65535 /* of packets, after the prefix */

/* A bundle being built in a caller's buffer: the 4-byte prefix (0x02, the
 * packet count, the bytes of packets) and the packets back to back. */
typedef struct rifl_rdma_bundle {
    uint8_t *buf;
    size_t cap, len;          /* len: prefix included */
    unsigned count;
    bool compact;             /* packets in the compact format (false after init) */
} rifl_rdma_bundle;

RIFL_API int rifl_rdma_bundle_init(rifl_rdma_bundle *b, uint8_t *buf, size_t cap);
/* Append one packet (as rifl_rdma_packet_build wrote it).  RIFL_ERR_TOO_BIG
 * when it would make more than 255 packets or 65535 bytes, or overrun the
 * buffer (the bundle is unchanged: send it and start the next). */
RIFL_API int rifl_rdma_bundle_add(rifl_rdma_bundle *b, const uint8_t *pkt, size_t len);
/* Write the prefix; the message is b->buf, *len bytes.  RIFL_ERR_STATE
 * for an empty bundle. */
RIFL_API int rifl_rdma_bundle_finish(rifl_rdma_bundle *b, size_t *len);

/* Walking a received bundle: its packets' bytes (after the prefix) and the
 * count the prefix gave. */
typedef struct rifl_rdma_bundle_reader {
    const uint8_t *data;
    size_t len, off;
    unsigned count, seen;
    bool stopped;
    bool compact;             /* packets in the compact format (false after init) */
} rifl_rdma_bundle_reader;

typedef enum rifl_rdma_walk {
    RIFL_RDMA_WALK_PACKET = 0, /* *p is the next packet (its check in *check) */
    RIFL_RDMA_WALK_END,        /* every packet seen, every byte used */
    RIFL_RDMA_WALK_DROPPED     /* the rest of the bundle is dropped: a header
                                  that does not check, a reserved type, or the
                                  count and bytes disagreeing with the prefix */
} rifl_rdma_walk;

RIFL_API void rifl_rdma_bundle_reader_init(rifl_rdma_bundle_reader *r, const uint8_t *data,
                                           size_t len, unsigned count);
RIFL_API rifl_rdma_walk rifl_rdma_bundle_next(rifl_rdma_bundle_reader *r, rifl_rdma_packet *p,
                                              rifl_rdma_check *check);

/* ---- notification records and capacity -------------------------------------------- */

#define RIFL_RDMA_RECORD_BYTES 32

/* The 32-byte record a completed block's notification writes: cookie,
 * transfer length | immediate, src_node | pdid | tid, and byte 31 = 0x01
 * (written last by the receiver). */
RIFL_API void rifl_rdma_record_pack(uint64_t cookie, uint32_t transfer_length,
                                    uint32_t immediate, uint32_t src_node, uint16_t pdid,
                                    unsigned tid, uint8_t out[RIFL_RDMA_RECORD_BYTES]);

/* A notification record read back: `written` is byte 31 (set last). */
typedef struct rifl_rdma_record {
    uint64_t cookie;
    uint32_t transfer_length, immediate;
    uint32_t src_node;
    uint16_t pdid;
    unsigned tid;
    bool written;
} rifl_rdma_record;

RIFL_API void rifl_rdma_record_unpack(const uint8_t in[RIFL_RDMA_RECORD_BYTES],
                                      rifl_rdma_record *r);

/* User bytes per second a route can carry, in Gbit/s: the frame bit rate of
 * its slowest link (all lanes) times user bytes per wire byte with full
 * bundles of `bundle_packets` packets of 256 bytes (or, in cell_mode, one
 * packet of 224 bytes per cell), each cell of 6 + 256 bytes one link packet
 * of ceil(262 / (F/8 - 2)) frames.  0 for a bad width or bundle size. */
RIFL_API double rifl_rdma_capacity_gbps(double frame_rate_gbps, unsigned frame_bits,
                                        unsigned bundle_packets, bool cell_mode);

/* How RDMA packets ride on Layer 2 (docs/rdma.md; both ends must agree):
 * bundles of packets in the spec's format (the default), one packet per
 * cell (the spec's cell_mode), or bundles of compact packets. */
typedef enum rifl_rdma_mapping {
    RIFL_RDMA_MAP_BUNDLE = 0,
    RIFL_RDMA_MAP_CELL = 1,
    RIFL_RDMA_MAP_COMPACT = 2
} rifl_rdma_mapping;

/* "bundle", "cell", "compact"; NULL for another value. */
RIFL_API const char *rifl_rdma_mapping_name(rifl_rdma_mapping m);
/* A full bundle's packets when the configuration leaves it to the
 * mapping: 7 (8 cells), 1, and 11 for compact packets (3062 bytes, 12
 * cells); 0 for another value. */
RIFL_API unsigned rifl_rdma_mapping_packets(rifl_rdma_mapping m);
/* rifl_rdma_capacity_gbps for any mapping (bundle_packets is ignored by
 * the cell mapping). */
RIFL_API double rifl_rdma_capacity_map_gbps(double frame_rate_gbps, unsigned frame_bits,
                                            unsigned bundle_packets, rifl_rdma_mapping m);

/* Whether generation g1 is newer than g0: (g1 - g0) mod 1024 in 1-511. */
static inline bool rifl_rdma_gen_newer(unsigned g1, unsigned g0)
{
    unsigned d = (g1 - g0) & 1023u;
    return d >= 1 && d <= 511;
}

#ifdef __cplusplus
}
#endif
#endif

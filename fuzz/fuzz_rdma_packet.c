/* Fuzz the RDMA packet parser as a bundle reader uses it: any bytes parse
 * without a crash, packet after packet while the sizes the parser reports
 * let it step on; a packet that parses clean rebuilds to the same fields;
 * the bundle reader ends only where count and bytes agree; the descriptor
 * and payload readers take any words. */
#include <stdint.h>
#include <string.h>

#include "rifl/rdma_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t off = 0;
    while (off < size) {
        rifl_rdma_packet p;
        rifl_rdma_check c = rifl_rdma_packet_parse(data + off, size - off, &p);
        if ((unsigned)c >= RIFL_RDMA_PKT_CHECK_COUNT || p.bytes > RIFL_RDMA_MAX_PACKET)
            __builtin_trap();
        if (c == RIFL_RDMA_PKT_OK) {
            uint8_t again[RIFL_RDMA_MAX_PACKET];
            size_t len;
            /* reserved bits are ignored on reading and written as zeros, so
             * compare the fields the rebuilt packet reads back as */
            if (rifl_rdma_packet_build(&p.hdr, &p.ftr, p.payload, again, sizeof again, &len) !=
                    RIFL_OK ||
                len != p.bytes)
                __builtin_trap();
            rifl_rdma_packet q;
            if (rifl_rdma_packet_parse(again, len, &q) != RIFL_RDMA_PKT_OK ||
                q.hdr.type != p.hdr.type || q.hdr.dst_va != p.hdr.dst_va ||
                q.hdr.length != p.hdr.length || q.ftr.tid != p.ftr.tid ||
                q.ftr.payload_crc != p.ftr.payload_crc ||
                (p.payload && memcmp(q.payload, p.payload, p.hdr.length)))
                __builtin_trap();
        }
        if (c == RIFL_RDMA_PKT_OK || c == RIFL_RDMA_PKT_SKIPPED || c == RIFL_RDMA_PKT_BAD_FTR ||
            c == RIFL_RDMA_PKT_BAD_LENGTH || c == RIFL_RDMA_PKT_BAD_PAYLOAD)
            off += p.bytes; /* the header checked: its size is known */
        else
            break;          /* the rest of the bundle is dropped */
    }
    /* the same bytes through the bundle reader, the first byte as the count */
    if (size) {
        rifl_rdma_bundle_reader r;
        rifl_rdma_bundle_reader_init(&r, data + 1, size - 1, data[0]);
        rifl_rdma_packet p;
        rifl_rdma_check c;
        rifl_rdma_walk w;
        unsigned steps = 0;
        while ((w = rifl_rdma_bundle_next(&r, &p, &c)) == RIFL_RDMA_WALK_PACKET) {
            if (++steps > data[0] || r.off > r.len || p.bytes == 0)
                __builtin_trap();
        }
        if (w == RIFL_RDMA_WALK_END && (steps != data[0] || r.off != r.len))
            __builtin_trap();
    }
    if (size >= 40) {
        rifl_rdma_read_req r;
        rifl_rdma_notify n;
        rifl_rdma_desc d;
        uint64_t w[4];
        memcpy(w, data, sizeof w);
        rifl_rdma_read_req_unpack(data, &r);
        (void)rifl_rdma_notify_unpack(data, &n);
        if (rifl_rdma_desc_unpack(w, &d) == RIFL_OK) {
            uint64_t again[4];
            if (rifl_rdma_desc_pack(&d, again) != RIFL_OK || memcmp(again, w, sizeof w))
                __builtin_trap();
        }
    }
    return 0;
}

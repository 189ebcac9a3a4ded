/* Packet capture (rifl/capture.h): a pcap file, nanosecond time stamps,
 * link type Ethernet, one record per frame. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rifl/capture.h"
#include "rifl/frame.h"
#include "rifl/phy.h"

#define PCAP_MAGIC_NS 0xa1b23c4du
#define LINKTYPE_ETHERNET 1u
#define ETH_HEADER 14u
#define ETH_MIN_PAYLOAD 46u

struct rifl_capture {
    FILE *f;
    unsigned frame_bits, fb;
    uint32_t epoch;
    int err;                      /* errno of the first failed write, or 0 */
    rifl_capture_stats st;
    uint8_t rec[16 + ETH_HEADER + RIFL_UDP_HEADER_BYTES + RIFL_FRAME_MAX_BYTES];
};

static const uint8_t mac[2][6] = { { 0x02, 0x52, 0x46, 0x00, 0x00, 0x0a },
                                   { 0x02, 0x52, 0x46, 0x00, 0x00, 0x0b } };

/* pcap's own fields are in the writer's byte order, marked by the magic */
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }

static void emit(rifl_capture *c, const void *p, size_t n)
{
    if (c->err)
        return;
    if (fwrite(p, 1, n, c->f) != n)
        c->err = errno ? errno : EIO;
    else
        c->st.bytes += n;
}

int rifl_capture_open(const char *path, unsigned frame_bits, uint32_t epoch, rifl_capture **out,
                      char *msg, size_t msglen)
{
    if (!path || !out)
        return rifl_null_arg(msg, msglen, "rifl_capture_open", path ? "out" : "path");
    *out = NULL;
    if (rifl_frame_width_check(frame_bits) != RIFL_OK || epoch == 0) {
        rifl_msg(msg, msglen, "a capture needs a frame width of 64 to 2048 bits (a power of "
                 "two) and a non-zero epoch; got %u bits, epoch %u", frame_bits, epoch);
        return RIFL_ERR_CONFIG;
    }
    rifl_capture *c = calloc(1, sizeof *c);
    if (!c)
        return RIFL_ERR_NOMEM;
    c->f = fopen(path, "wb");
    if (!c->f) {
        rifl_msg(msg, msglen, "cannot create the capture file '%s': %s; choose a writable "
                 "path", path, strerror(errno));
        free(c);
        return RIFL_ERR_IO;
    }
    c->frame_bits = frame_bits;
    c->fb = frame_bits / 8;
    c->epoch = epoch;
    uint8_t h[24];
    put32(h, PCAP_MAGIC_NS);
    put16(h + 4, 2);
    put16(h + 6, 4);
    put32(h + 8, 0);
    put32(h + 12, 0);
    put32(h + 16, 65535);
    put32(h + 20, LINKTYPE_ETHERNET);
    emit(c, h, sizeof h);
    *out = c;
    return RIFL_OK;
}

int rifl_capture_frame(rifl_capture *c, unsigned dir, uint64_t seq, uint64_t t_ns,
                       const uint8_t *wire)
{
    return c ? rifl_capture_frame_epoch(c, dir, c->epoch, seq, t_ns, wire) : RIFL_ERR_INVALID_ARG;
}

int rifl_capture_frame_epoch(rifl_capture *c, unsigned dir, uint32_t epoch, uint64_t seq,
                             uint64_t t_ns, const uint8_t *wire)
{
    if (!c || dir > 1 || !wire || !epoch)
        return RIFL_ERR_INVALID_ARG;
    size_t payload = RIFL_UDP_HEADER_BYTES + c->fb;
    size_t pad = payload < ETH_MIN_PAYLOAD ? ETH_MIN_PAYLOAD - payload : 0;
    size_t len = ETH_HEADER + payload + pad;
    uint8_t *r = c->rec;
    uint64_t sec = t_ns / 1000000000u;
    put32(r, (uint32_t)sec);
    put32(r + 4, (uint32_t)(t_ns % 1000000000u));
    put32(r + 8, (uint32_t)len);
    put32(r + 12, (uint32_t)len);
    uint8_t *e = r + 16;
    memcpy(e, mac[1 - dir], 6);
    memcpy(e + 6, mac[dir], 6);
    e[12] = RIFL_ETHERTYPE >> 8;
    e[13] = RIFL_ETHERTYPE & 0xFF;
    rifl_udp_header h = { c->frame_bits, 1, epoch, seq };
    if (rifl_udp_header_write(&h, e + ETH_HEADER) != RIFL_OK)
        return RIFL_ERR_INVALID_ARG;
    memcpy(e + ETH_HEADER + RIFL_UDP_HEADER_BYTES, wire, c->fb);
    memset(e + ETH_HEADER + payload, 0, pad);
    emit(c, r, 16 + len);
    if (c->err)
        return RIFL_ERR_IO;
    c->st.frames++;
    return RIFL_OK;
}

const rifl_capture_stats *rifl_capture_get_stats(const rifl_capture *c)
{
    return c ? &c->st : NULL;
}

int rifl_capture_close(rifl_capture *c, char *msg, size_t msglen)
{
    if (!c)
        return RIFL_OK;
    if (fclose(c->f) != 0 && !c->err)
        c->err = errno ? errno : EIO;
    int err = c->err;
    free(c);
    if (err) {
        rifl_msg(msg, msglen, "writing the capture failed: %s; check the disk space and the "
                 "path", strerror(err));
        return RIFL_ERR_IO;
    }
    return RIFL_OK;
}

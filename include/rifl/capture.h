/* Packet capture of a link's frames (docs/capture.md): every frame as an
 * Ethernet frame with the raw-Ethernet encapsulation of docs/udp.md
 * (EtherType 0x88B5, the 20-byte "RF" header, then the frame's F/8 wire
 * bytes), in a pcap file with nanosecond time stamps that Wireshark and
 * tshark read; tools/wireshark/rifl.lua dissects it.  Direction 0 goes from
 * end A (MAC 02:52:46:00:00:0a) to end B (02:52:46:00:00:0b), direction 1
 * back.  One frame per record, its header's sequence number the frame's
 * slot on that direction. */
#ifndef RIFL_CAPTURE_H
#define RIFL_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "rifl/api.h"
#include "rifl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIFL_ETHERTYPE 0x88B5 /* IEEE 802 local experimental EtherType 1 */

typedef struct rifl_capture rifl_capture;

typedef struct rifl_capture_stats {
    uint64_t frames;    /* frames written */
    uint64_t bytes;     /* bytes written, file header included */
} rifl_capture_stats;

/* Create `path` (replacing it) for frames of `frame_bits` bits; `epoch` is
 * written into every record's header (not 0).  RIFL_ERR_CONFIG for a bad
 * width or epoch, RIFL_ERR_IO when the file cannot be created, with the
 * reason in msg. */
RIFL_API int rifl_capture_open(const char *path, unsigned frame_bits, uint32_t epoch,
                               rifl_capture **out, char *msg, size_t msglen);
/* Write one frame's wire bytes (F/8), direction 0 or 1, sequence number
 * `seq`, at `t_ns` nanoseconds from the start of the capture. */
RIFL_API int rifl_capture_frame(rifl_capture *c, unsigned dir, uint64_t seq, uint64_t t_ns,
                                const uint8_t *wire);
/* The same with the record's epoch given (not 0): a real link's two
 * directions carry their senders' epochs, which change at a joint reset. */
RIFL_API int rifl_capture_frame_epoch(rifl_capture *c, unsigned dir, uint32_t epoch, uint64_t seq,
                                      uint64_t t_ns, const uint8_t *wire);
RIFL_API const rifl_capture_stats *rifl_capture_get_stats(const rifl_capture *c);
/* Flush and close; RIFL_ERR_IO (reason in msg) when any write failed.  NULL
 * is accepted. */
RIFL_API int rifl_capture_close(rifl_capture *c, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif
#endif

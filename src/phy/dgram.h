/* The datagram logic the UDP and raw-Ethernet PHYs share (docs/udp.md): the
 * header, frames gathered into datagrams, the sequence and epoch rules,
 * erasures, probes, the injected loss, duplication and bit errors, and the
 * counters.  Only the socket differs: each PHY gives the core a way to send
 * one datagram and to read a batch of them. */
#ifndef RIFL_PHY_DGRAM_H
#define RIFL_PHY_DGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rifl/frame.h"
#include "rifl/phy.h"
#include "rifl/rng.h"

#define DGRAM_RX_BATCH 16   /* datagrams read per receive call */
#define DGRAM_GSO_MAX 64    /* datagrams held for one send, at most */
#define DGRAM_GSO_BYTES 65000 /* and their bytes (a UDP datagram's limit) */
#define DGRAM_PROBE_RING 64 /* probe answers kept until the driver takes them */
/* a probe datagram: the header with no frames, then an 8-byte value, the
 * epoch the sender knows for the peer and the sender's epoch before its
 * last rejoin (4 bytes each) */
#define DGRAM_PROBE_BYTES (RIFL_UDP_HEADER_BYTES + 16)
#define DGRAM_RETIRED 8     /* epochs the peer left, remembered */
/* frames a datagram may start beyond the next one expected and be taken at
 * once; a jump further is taken only when a second datagram confirms it */
#define DGRAM_NEAR (UINT64_C(1) << 12)
/* a length the socket gives for a datagram it dropped and counted itself */
#define DGRAM_SKIP ((size_t)-1)

struct dgram;

typedef struct dgram_io {
    /* Send one datagram; false with errno set when the socket refused it. */
    bool (*send)(struct dgram *d, const uint8_t *buf, size_t len);
    /* Send `len` bytes as datagrams of `seg` bytes (the last may be
     * shorter) in one call; NULL when the PHY cannot.  False with errno set
     * when the socket refused them. */
    bool (*send_segments)(struct dgram *d, const uint8_t *buf, size_t len, size_t seg);
    /* Read up to `n` datagrams waiting now into bufs[i] (at most `cap`
     * bytes each), their lengths into lens[i] (DGRAM_SKIP for one the
     * socket dropped and counted); the number read, 0 for none. */
    unsigned (*recv)(struct dgram *d, uint8_t *const *bufs, size_t cap, size_t *lens,
                     unsigned n);
} dgram_io;

struct dgram {
    rifl_phy phy;
    rifl_phy_udp_config cfg;      /* the common settings (fd, local and
                                     remote are the UDP PHY's) */
    const dgram_io *io;
    int fd;
    unsigned fb;                  /* F/8 */
    size_t dgram_bytes;           /* largest datagram */
    /* sending: datagrams held for one call (gso), end to end in txbuf, then
     * the one being filled */
    uint8_t *txbuf;
    size_t held_bytes;
    unsigned held, hold_max;      /* hold_max 1: each goes at once */
    size_t full_len;              /* a datagram of frames_per_datagram frames */
    bool gso_off;                 /* the kernel refused UDP_SEGMENT */
    uint16_t held_len[DGRAM_GSO_MAX + 2];
    uint8_t *out;                 /* the datagram being filled: txbuf + held_bytes */
    unsigned out_count;
    /* frames given by content (rifl_phy_udp_set_encoder): their records,
     * encoded into the datagram in one call when it is complete; frames
     * out_wire.. of the datagram being filled are still records */
    uint8_t *recs;
    size_t rec_bytes;
    rifl_phy_encode_batch_fn encode;
    void *encode_ctx;
    unsigned out_wire;
    uint64_t out_first;           /* slot of its first frame */
    uint64_t tx_seq;              /* sequence number of the next frame */
    rifl_rng rng;
    /* receiving */
    uint8_t *in[DGRAM_RX_BATCH];
    uint64_t rx_next;             /* sequence number of the next frame to take */
    uint8_t *q;                   /* queue of frames received, a ring */
    unsigned q_cap, q_head, q_count;
    uint8_t *handed;              /* frames handed out by the last exchange */
    uint8_t erasure[RIFL_FRAME_MAX_BYTES]; /* a frame that fails verification */
    bool erase;                   /* frames went missing: an erasure goes first */
    bool far_held;                /* a jump (beyond DGRAM_NEAR) was held ... */
    uint64_t far_seq, far_end;    /* ... whose frames started and ended here */
    uint64_t gap;                 /* bits sent until the next bit error (ber) */
    unsigned since_rx;            /* exchanges since the socket was read */
    uint64_t answers[DGRAM_PROBE_RING]; /* tokens of probe answers not taken yet */
    uint64_t probe_value;         /* the value our probes and answers carry */
    unsigned ans_head, ans_count;
    /* epochs (docs/udp.md, "Epochs and restarts") */
    uint32_t retired[DGRAM_RETIRED]; /* the peer's epochs it left, a ring */
    unsigned n_retired;
    uint32_t new_prev;            /* the epoch before peer_epoch_new, as its
                                     probe said (0: not said) */
    uint32_t prev_epoch;          /* this end's epoch before its last rejoin */
    rifl_phy_udp_stats st;
};

/* Check the common settings of `c` (defaults filled in) and make a PHY of
 * `size` bytes (at least sizeof(struct dgram), the rest zeroed for the
 * socket's own state) with fd -1: RIFL_ERR_CONFIG with a message for a
 * refused setting, RIFL_ERR_NOMEM.  `ops` must use dgram_exchange,
 * dgram_next_due and dgram_destroy. */
int dgram_create(const rifl_phy_udp_config *c, const rifl_phy_ops *ops, const dgram_io *io,
                 size_t size, struct dgram **out, char *msg, size_t msglen);
/* The common settings checked and with their defaults, without a PHY. */
int dgram_check(rifl_phy_udp_config *c, char *msg, size_t msglen);
unsigned dgram_exchange(rifl_phy *p, uint64_t now, rifl_phy_form form, rifl_phy_frame *out,
                        unsigned max);
uint64_t dgram_next_due(const rifl_phy *p, uint64_t now);
void dgram_destroy(rifl_phy *p);
/* The core of a UDP or raw-Ethernet PHY, NULL for any other PHY. */
struct dgram *dgram_of(rifl_phy *p);
const struct dgram *dgram_cof(const rifl_phy *p);
/* Ask for socket buffers of DGRAM_SOCKET_BUFFER bytes each way (the
 * kernel caps them at net.core.rmem_max / wmem_max); the receive buffer's
 * size granted goes in st.rx_buffer_bytes. */
#define DGRAM_SOCKET_BUFFER (4u << 20)
void dgram_socket_buffers(struct dgram *d);

/* One non-blocking recvmmsg of up to n (at most DGRAM_RX_BATCH) datagrams
 * into bufs, cap bytes each; their sizes go in lens.  With `names`, sender
 * i's address goes to names + i x name_size and its length to
 * name_lens[i].  Returns how many were read. */
unsigned dgram_recv_batch(int fd, uint8_t *const *bufs, size_t cap, size_t *lens, unsigned n,
                          void *names, unsigned name_size, unsigned *name_lens);
/* The length the header of a received datagram claims (DGRAM_PROBE_BYTES
 * for a probe), 0 when it has no readable header. */
size_t dgram_claimed_bytes(const uint8_t *d, size_t len);

#endif

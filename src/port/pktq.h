/* A queue of packets in a fixed byte ring: each packet is a 4-byte length
 * followed by its bytes, wrapping at the end of the ring.  Made once, never
 * allocates afterwards. */
#ifndef RIFL_PORT_PKTQ_H
#define RIFL_PORT_PKTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PKTQ_HDR 4u

struct pktq {
    uint8_t *buf;
    size_t cap;        /* bytes of the ring */
    size_t head;       /* first byte of the oldest packet */
    size_t used;       /* bytes in use, headers included */
    unsigned count;    /* packets */
};

static inline int pktq_init(struct pktq *q, size_t cap)
{
    memset(q, 0, sizeof *q);
    q->cap = cap;
    if (!cap)
        return 0;
    q->buf = malloc(cap);
    return q->buf ? 0 : -1;
}

static inline void pktq_free(struct pktq *q)
{
    free(q->buf);
    q->buf = NULL;
}

/* A packet of len bytes would fit now. */
static inline bool pktq_fits(const struct pktq *q, size_t len)
{
    return q->cap - q->used >= len + PKTQ_HDR;
}

static inline void pktq_write(struct pktq *q, size_t at, const void *src, size_t n)
{
    at %= q->cap;
    size_t first = q->cap - at < n ? q->cap - at : n;
    memcpy(q->buf + at, src, first);
    memcpy(q->buf, (const uint8_t *)src + first, n - first);
}

static inline void pktq_read(const struct pktq *q, size_t at, void *dst, size_t n)
{
    at %= q->cap;
    size_t first = q->cap - at < n ? q->cap - at : n;
    memcpy(dst, q->buf + at, first);
    memcpy((uint8_t *)dst + first, q->buf, n - first);
}

/* Append a packet (the caller checked pktq_fits). */
static inline void pktq_push(struct pktq *q, const void *p, size_t len)
{
    uint32_t n = (uint32_t)len;
    size_t tail = q->head + q->used;
    pktq_write(q, tail, &n, PKTQ_HDR);
    pktq_write(q, tail + PKTQ_HDR, p, len);
    q->used += PKTQ_HDR + len;
    q->count++;
}

/* Length of the oldest packet (the queue is not empty). */
static inline size_t pktq_head_len(const struct pktq *q)
{
    uint32_t n;
    pktq_read(q, q->head, &n, PKTQ_HDR);
    return n;
}

/* Copy the oldest packet out (len bytes) and drop it. */
static inline void pktq_pop(struct pktq *q, void *out, size_t len)
{
    if (out)
        pktq_read(q, q->head + PKTQ_HDR, out, len);
    q->head = (q->head + PKTQ_HDR + len) % q->cap;
    q->used -= PKTQ_HDR + len;
    q->count--;
    if (!q->count)
        q->head = 0;
}

#endif

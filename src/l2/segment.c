/* Endpoint segmentation of messages into 256-byte cells and reassembly
 * (project message format, docs/layer2.md section 3: a 4-byte prefix with
 * the protocol and the length, then the bytes). */
#include <string.h>

#include "rifl/l2.h"

size_t rifl_l2_msg_cells(size_t msg_len)
{
    if ((uint64_t)msg_len > RIFL_L2_MSG_MAX)
        return 0; /* no such message (and the sum below would wrap) */
    return (msg_len + RIFL_L2_MSG_PREFIX_BYTES + RIFL_L2_CELL_PAYLOAD - 1) / RIFL_L2_CELL_PAYLOAD;
}

int rifl_l2_msg_cell(const void *msg, size_t msg_len, size_t index,
                     uint8_t cell[RIFL_L2_CELL_PAYLOAD])
{
    if (!cell || !msg || msg_len == 0 || (uint64_t)msg_len > RIFL_L2_MSG_MAX ||
        index >= rifl_l2_msg_cells(msg_len))
        return RIFL_ERR_INVALID_ARG;
    const uint8_t *m = msg;
    memset(cell, 0, RIFL_L2_CELL_PAYLOAD);
    /* position of this cell in the stream "prefix + message" */
    size_t start = index * RIFL_L2_CELL_PAYLOAD;
    size_t pos = 0;
    if (index == 0) {
        cell[0] = RIFL_L2_PROTO_DATA;
        cell[1] = (uint8_t)(msg_len >> 16);
        cell[2] = (uint8_t)(msg_len >> 8);
        cell[3] = (uint8_t)msg_len;
        pos = RIFL_L2_MSG_PREFIX_BYTES;
    }
    size_t moff = start + pos - RIFL_L2_MSG_PREFIX_BYTES;
    size_t n = RIFL_L2_CELL_PAYLOAD - pos;
    if (moff < msg_len) {
        if (n > msg_len - moff)
            n = msg_len - moff;
        memcpy(cell + pos, m + moff, n);
    }
    return RIFL_OK;
}

void rifl_l2_reasm_init(rifl_l2_reasm *r, uint8_t *buf, size_t cap)
{
    if (!r)
        return;
    memset(r, 0, sizeof *r);
    r->buf = buf;
    r->cap = buf ? cap : 0;
}

/* A first cell: read its prefix.  RIFL_ERR_FRAME for a reserved protocol
 * or a zero length. */
static int start_message(rifl_l2_reasm *r, const uint8_t *cell)
{
    uint64_t L;
    unsigned count = 0;
    if (cell[0] == RIFL_L2_PROTO_DATA) {
        L = ((uint64_t)cell[1] << 16) | ((uint64_t)cell[2] << 8) | cell[3];
    } else if (cell[0] == RIFL_L2_PROTO_RDMA) {
        count = cell[1];
        L = ((uint64_t)cell[2] << 8) | cell[3];
    } else {
        L = 0;
    }
    if (L == 0) {
        r->reserved++;
        return RIFL_ERR_FRAME;
    }
    r->in_msg = true;
    r->proto = cell[0];
    r->count = count;
    r->msg_len = L;
    r->need = L;
    r->got = 0;
    r->skipping = L > r->cap;
    if (r->skipping) {
        r->too_big++;
        return RIFL_ERR_TOO_BIG;
    }
    return 0;
}

int rifl_l2_reasm_push(rifl_l2_reasm *r, const uint8_t cell[RIFL_L2_CELL_PAYLOAD],
                       size_t *msg_len)
{
    if (!r || !cell || !msg_len)
        return RIFL_ERR_INVALID_ARG;
    r->cells++;
    size_t pos = 0;
    int rc = 0;
    if (!r->in_msg) {
        rc = start_message(r, cell);
        if (rc == RIFL_ERR_FRAME)
            return rc;
        pos = RIFL_L2_MSG_PREFIX_BYTES;
    }
    size_t n = RIFL_L2_CELL_PAYLOAD - pos;
    if (n > r->need)
        n = (size_t)r->need;
    if (!r->skipping && n)
        memcpy(r->buf + r->got, cell + pos, n);
    r->got += n;
    r->need -= n;
    if (r->need == 0) {
        r->in_msg = false;
        if (r->skipping) {
            r->skipping = false;
            return rc;
        }
        r->messages++;
        if (msg_len)
            *msg_len = (size_t)r->msg_len;
        return 1;
    }
    return rc;
}

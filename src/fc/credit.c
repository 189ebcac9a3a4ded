/* Per-VL credit registers: the sender's FCTBS and CL, the receiver's ABR,
 * Free Space Count and FCCL.  All counters are 12 bits wide and wrap. */
#include "rifl/credit.h"

#include <stdio.h>
#include <string.h>

uint16_t rifl_fc_sub_ones_complement(uint16_t a, uint16_t b)
{
    uint32_t nb = (~(uint32_t)b) & RIFL_FC_REG_MASK; /* ones' complement */
    return (uint16_t)((a + nb + 1u) & RIFL_FC_REG_MASK);
}

void rifl_fc_tx_reset(rifl_fc_tx *tx)
{
    tx->fctbs = 0;
    tx->cl = 0;
}

bool rifl_fc_tx_may_send(const rifl_fc_tx *tx, uint32_t blocks)
{
    /* The modular test is exact only for NP < 2048: with no credit at all
     * (CL = FCTBS) a packet of exactly 2048 blocks gives (CL - CR) mod 4096 =
     * 2048 and would pass.  Packets of 2048 blocks or more never go. */
    if (blocks >= RIFL_FC_CREDIT_CAP)
        return false;
    return rifl_fc_may_send(tx->cl, tx->fctbs, blocks);
}

int rifl_fc_tx_sent(rifl_fc_tx *tx, uint32_t blocks)
{
    if (!tx)
        return RIFL_ERR_INVALID_ARG;
    if (!rifl_fc_tx_may_send(tx, blocks))
        return RIFL_ERR_AGAIN;
    tx->fctbs = (uint16_t)((tx->fctbs + blocks) & RIFL_FC_REG_MASK);
    return RIFL_OK;
}

void rifl_fc_tx_set_limit(rifl_fc_tx *tx, uint16_t fccl)
{
    tx->cl = fccl & RIFL_FC_REG_MASK;
}

uint32_t rifl_fc_tx_credit(const rifl_fc_tx *tx)
{
    uint32_t d = rifl_fc_sub(tx->cl, tx->fctbs);
    return d <= RIFL_FC_CREDIT_CAP ? d : 0;
}

int rifl_fc_rx_init(rifl_fc_rx *rx, uint64_t buffer_bytes, uint32_t chunk_bytes,
                    char *msg, size_t msglen)
{
    if (!rx)
        return RIFL_ERR_INVALID_ARG;
    if (chunk_bytes == 0 || chunk_bytes % RIFL_FC_BLOCK_BYTES) {
        if (msg)
            snprintf(msg, msglen,
                     "receive chunk of %u bytes is not a whole number of 64-byte blocks;"
                     " use 64, 128, 256, ...", chunk_bytes);
        return RIFL_ERR_CONFIG;
    }
    uint64_t chunks = buffer_bytes / chunk_bytes;
    if (chunks == 0) {
        if (msg)
            snprintf(msg, msglen,
                     "receive buffer of %llu bytes holds no %u-byte chunk;"
                     " give it at least %u bytes",
                     (unsigned long long)buffer_bytes, chunk_bytes, chunk_bytes);
        return RIFL_ERR_CONFIG;
    }
    if (chunks > RIFL_FC_REG_MASK) {
        if (msg)
            snprintf(msg, msglen,
                     "receive buffer of %llu bytes is %llu chunks, more than the 12-bit Free"
                     " Space Count holds (4095); use at most %llu bytes (credit above 2048"
                     " blocks is never advertised anyway)",
                     (unsigned long long)buffer_bytes, (unsigned long long)chunks,
                     (unsigned long long)RIFL_FC_REG_MASK * chunk_bytes);
        return RIFL_ERR_CONFIG;
    }
    memset(rx, 0, sizeof *rx);
    rx->chunk_blocks = chunk_bytes / RIFL_FC_BLOCK_BYTES;
    rx->capacity = (uint32_t)chunks;
    rx->free_chunks = (uint32_t)chunks;
    return RIFL_OK;
}

uint32_t rifl_fc_rx_chunks(const rifl_fc_rx *rx, uint32_t blocks)
{
    if (!rx || !rx->chunk_blocks)
        return UINT32_MAX; /* (no receiver: room for nothing) */
    return (uint32_t)(((uint64_t)blocks + rx->chunk_blocks - 1) / rx->chunk_blocks);
}

uint32_t rifl_fc_rx_space(const rifl_fc_rx *rx)
{
    /* Every free chunk takes at least one block of any packet, and a run of
     * 1-block packets takes exactly one block per chunk: the guaranteed
     * space is one block per free chunk. */
    return rx->free_chunks;
}

uint16_t rifl_fc_rx_fccl(const rifl_fc_rx *rx)
{
    uint32_t space = rifl_fc_rx_space(rx);
    if (space > RIFL_FC_CREDIT_CAP)
        space = RIFL_FC_CREDIT_CAP;
    return (uint16_t)((rx->abr + space) & RIFL_FC_REG_MASK);
}

int rifl_fc_rx_accept(rifl_fc_rx *rx, uint32_t blocks)
{
    if (!rx)
        return RIFL_ERR_INVALID_ARG;
    uint32_t need = rifl_fc_rx_chunks(rx, blocks);
    /* (no packet takes the whole credit window: larger ones are refused) */
    if (blocks == 0 || blocks >= RIFL_FC_CREDIT_CAP || need > rx->free_chunks) {
        rx->overflow++;
        return RIFL_ERR_AGAIN;
    }
    rx->free_chunks -= need;
    rx->abr = (uint16_t)((rx->abr + blocks) & RIFL_FC_REG_MASK);
    rx->accepted++;
    rx->accepted_blocks += blocks;
    return RIFL_OK;
}

int rifl_fc_rx_release(rifl_fc_rx *rx, uint32_t blocks)
{
    if (!rx)
        return RIFL_ERR_INVALID_ARG;
    uint32_t n = rifl_fc_rx_chunks(rx, blocks);
    if (blocks == 0 || blocks >= RIFL_FC_CREDIT_CAP || n > rx->capacity - rx->free_chunks)
        return RIFL_ERR_INVALID_ARG;
    rx->free_chunks += n;
    rx->released++;
    rx->released_blocks += blocks;
    return RIFL_OK;
}

void rifl_fc_rx_resync(rifl_fc_rx *rx, uint16_t fctbs)
{
    fctbs &= RIFL_FC_REG_MASK;
    if (fctbs != rx->abr) {
        rx->resyncs++;
        rx->resync_blocks += rifl_fc_sub(fctbs, rx->abr);
        rx->abr = fctbs;
    }
}

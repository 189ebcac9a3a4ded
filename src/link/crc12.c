/* CRC-12 of a RIFL frame (link rules §4), table driven.
 *
 * The CRC of a frame is what a direct-form (XOR at the input) shift register
 * holds after all F bits, VCODE bits zero: the frame polynomial times x^12,
 * reduced modulo G = x^12 + x^5 + x^3 + x^2 + x + 1.  That value is linear in
 * the bytes, so it is the XOR of one table entry per byte:
 * pos[d][b] = b * x^(8d+12) mod G, with d the byte's distance from the end of
 * the frame.  All lookups of a frame are independent of each other, which
 * lets the CPU run them in parallel.  Frames longer than 32 bytes are cut into
 * 32-byte blocks whose remainders are chained with r <- r * x^256 + block. */
#include "rifl/frame.h"
#include "link_priv.h"

uint64_t rifl_crc12_xpow_quotient(unsigned e)
{
    /* long division: bring down the e zero bits after the leading 1 */
    uint64_t q = 0;
    uint32_t rem = 1;
    for (unsigned k = 0; k < e; k++) {
        rem <<= 1;
        q <<= 1;
        if (rem & 0x1000u) {
            rem ^= 0x1000u | RIFL_CRC12_POLY;
            q |= 1;
        }
    }
    return q;
}

static uint16_t mulx_mod(uint16_t r)
{
    /* r * x mod G, r of degree < 12 */
    r = (uint16_t)(r << 1);
    if (r & 0x1000u)
        r ^= 0x1000u | RIFL_CRC12_POLY;
    return r;
}

uint16_t rifl_crc12_xpow(unsigned e)
{
    uint16_t r = 1;
    for (unsigned k = 0; k < e; k++)
        r = mulx_mod(r);
    return r;
}

static uint16_t pos_table[32][256];   /* b * x^(8d+12) mod G, d = 0..31 */
static uint16_t chain_table[2][256];  /* b * x^(256+8k) mod G, k = 0, 1 */

#ifdef RIFL_CRC_CLMUL
struct rifl_crc_clmul rifl_crc_clmul_consts;

static void clmul_consts_init(void)
{
    struct rifl_crc_clmul *c = &rifl_crc_clmul_consts;
    for (unsigned j = 0; j < 32; j++)
        c->k[j] = rifl_crc12_xpow(12 + 64 * j);
    uint16_t r = rifl_crc12_xpow(64);
    c->x64 = r;
    c->fold = _mm_set_epi64x(0, (long long)r);
    for (int j = 0; j < 16; j++)
        c->kp[j] = _mm_set_epi64x((long long)c->k[2 * j], (long long)c->k[2 * j + 1]);
    c->g = 0x1000u | RIFL_CRC12_POLY;
    c->mu = rifl_crc12_xpow_quotient(64); /* degree 52 */
}
#endif

__attribute__((constructor)) static void crc12_tables_init(void)
{
#ifdef RIFL_CRC_CLMUL
    clmul_consts_init();
#endif
    for (unsigned b = 0; b < 256; b++) {
        /* b * x^12 mod G: the CRC register (direct form) of a frame is the
         * frame polynomial times x^12, reduced */
        uint16_t r = (uint16_t)b;
        for (int k = 0; k < 12; k++)
            r = mulx_mod(r);
        for (unsigned d = 0; d < 32; d++) {
            pos_table[d][b] = r;
            for (int k = 0; k < 8; k++)
                r = mulx_mod(r);
        }
        /* chaining multiplies an already-scaled remainder by x^256 */
        r = (uint16_t)b;
        for (int k = 0; k < 256; k++)
            r = mulx_mod(r);
        chain_table[0][b] = r;
        for (int k = 0; k < 8; k++)
            r = mulx_mod(r);
        chain_table[1][b] = r;
    }
}

/* Remainder of a 32-byte block (bytes at distances 31..0). */
static inline uint16_t block32(const uint8_t *p)
{
    uint16_t a = 0, b = 0, c = 0, d = 0;
    for (unsigned i = 0; i < 32; i += 4) {
        a ^= pos_table[31 - i][p[i]];
        b ^= pos_table[30 - i][p[i + 1]];
        c ^= pos_table[29 - i][p[i + 2]];
        d ^= pos_table[28 - i][p[i + 3]];
    }
    return (uint16_t)(a ^ b ^ c ^ d);
}

static inline uint16_t chain(uint16_t r)
{
    return (uint16_t)(chain_table[0][r & 0xFF] ^ chain_table[1][r >> 8]);
}

static uint16_t crc_bytes(const uint8_t *f, unsigned nbytes, uint8_t last2[2])
{
    /* `last2` holds the frame's last two bytes with the VCODE bits cleared. */
    uint16_t r = 0;
    unsigned i = 0;
    if (nbytes >= 32) {
        for (; i + 32 < nbytes; i += 32)
            r = (uint16_t)(chain(r) ^ block32(f + i));
        /* final block of exactly 32 bytes, ends with the masked last2 */
        uint16_t a = 0, b = 0;
        for (unsigned j = 0; j < 30; j += 2) {
            a ^= pos_table[31 - j][f[i + j]];
            b ^= pos_table[30 - j][f[i + j + 1]];
        }
        a ^= pos_table[1][last2[0]];
        /* last2[1] is all VCODE bits: zero, contributes nothing */
        return (uint16_t)(chain(r) ^ a ^ b);
    }
    /* short frame (8 or 16 bytes): one partial block */
    uint16_t a = 0;
    for (unsigned j = 0; j + 2 < nbytes; j++)
        a ^= pos_table[nbytes - 1 - j][f[j]];
    a ^= pos_table[1][last2[0]];
    return a;
}

uint16_t rifl_crc12(const uint8_t *frame, unsigned frame_bits)
{
    if (!frame || rifl_frame_width_check(frame_bits) != RIFL_OK)
        return RIFL_CRC12_INVALID;
    unsigned n = frame_bits / 8;
    uint8_t last2[2] = { (uint8_t)(frame[n - 2] & 0xF0), 0 };
    return crc_bytes(frame, n, last2);
}

const uint16_t (*rifl_crc12_pos_table(void))[256] { return (const uint16_t (*)[256])pos_table; }
const uint16_t (*rifl_crc12_chain_table(void))[256] { return (const uint16_t (*)[256])chain_table; }

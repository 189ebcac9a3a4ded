/* The paper's equations, framing models and the undetected-error
 * measurement (see include/rifl/sim/analysis.h). */
#include <math.h>
#include <string.h>

#include "rifl/sim/analysis.h"
#include "rifl/phy.h"
#include "rifl/frame.h"
#include "rifl/sim/sim.h"

#define SECONDS_PER_YEAR (365.25 * 24 * 3600)

double rifl_eq_efficiency(unsigned F, unsigned sv)
{
    return 1.0 - (double)(sv + 4) / (double)F;
}

unsigned rifl_eq_fid_bits(double rate_gbps, double rtt_ns, unsigned F)
{
    double need = rate_gbps * rtt_ns / (double)F;
    unsigned k = 0;
    while ((double)(1ull << k) < need && k < 40)
        k++;
    return k;
}

static double log_binom_term(unsigned F, unsigned i, double ber)
{
    return lgamma(F + 1.0) - lgamma(i + 1.0) - lgamma(F - i + 1.0) + i * log(ber) +
           (F - i) * log1p(-ber);
}

double rifl_eq_tail(unsigned F, unsigned n, double ber)
{
    if (ber <= 0)
        return 0;
    if (n >= F)
        return 0;
    double sum = 0;
    for (unsigned i = n + 1; i <= F; i++) {
        double t = exp(log_binom_term(F, i, ber));
        sum += t;
        if (i > n + 3 && t < sum * 1e-17)
            break;
    }
    return sum > 1 ? 1 : sum;
}

double rifl_eq_ffr(unsigned F, unsigned m, unsigned hd, double ber)
{
    return ldexp(rifl_eq_tail(F, hd ? hd - 1 : 0, ber), -(int)m);
}

double rifl_eq_mtbf_years(double ffr, double rate_gbps, unsigned F, double p_fail)
{
    if (ffr <= 0)
        return INFINITY;
    double frames = log1p(-p_fail) / log1p(-ffr);
    return frames * F / (rate_gbps * 1e9) / SECONDS_PER_YEAR;
}

double rifl_eq_mean_years(double ffr, double rate_gbps, unsigned F)
{
    if (ffr <= 0)
        return INFINITY;
    return 1.0 / ffr * F / (rate_gbps * 1e9) / SECONDS_PER_YEAR;
}

unsigned rifl_eq_verification_bits(unsigned need)
{
    unsigned v = need;
    while (v % 8 != 4)
        v++;
    return v;
}

unsigned rifl_eq_hd4_crc_bits(unsigned covered)
{
    unsigned m = 2;
    while (((1ull << (m - 1)) - 1) < covered)
        m++;
    return m;
}

rifl_fc_sizing rifl_eq_fc(double rtt, double buf)
{
    rifl_fc_sizing s = { 1.5 * rtt, buf * 2.0 / 3.0, buf / 3.0 };
    return s;
}

static const char *const model_names[RIFL_MODEL_COUNT] = {
    "rifl", "aurora64b66b", "interlaken", "ethernet100g",
};

const char *rifl_model_name(rifl_model m)
{
    return (unsigned)m < RIFL_MODEL_COUNT ? model_names[m] : "?";
}

double rifl_model_efficiency(rifl_model m, unsigned F, unsigned long L)
{
    double bits = 8.0 * (double)L;
    switch (m) {
    case RIFL_MODEL_RIFL: {
        if (F < 64 || F > 2048 || (F & (F - 1)))
            return 0; /* not a RIFL frame width */
        unsigned long p = F / 8 - 2;
        unsigned long frames = (L + p - 1) / p;
        return bits / ((double)frames * F);
    }
    case RIFL_MODEL_AURORA: {
        /* 32-byte user flits, a partial last flit is padded; 64b/66b; clock
         * compensation: 3 idle blocks every 10000 */
        unsigned long flits = (L + 31) / 32;
        double line = (double)flits * 256.0 * 66.0 / 64.0;
        return bits / line * (1.0 - 3.0 / 10000.0);
    }
    case RIFL_MODEL_INTERLAKEN: {
        /* 64-byte user flits padded; one 8-byte burst control word per
         * burst of up to 256 bytes; 64b/67b; 4 words of meta frame per
         * 2048 */
        unsigned long flits = (L + 63) / 64;
        unsigned long bursts = (L + 255) / 256;
        double words = (double)flits * 8.0 + (double)bursts;
        double line = words * 64.0 * 67.0 / 64.0 * 2048.0 / 2044.0;
        return bits / line;
    }
    case RIFL_MODEL_ETHERNET: {
        /* the user hands over whole MAC frames of at least 64 bytes without
         * FCS; on the wire: + 4 FCS + 8 preamble/SFD + 12 inter-packet gap;
         * 64b/66b */
        if (L < 64)
            return 0;
        double line = ((double)L + 24.0) * 8.0 * 66.0 / 64.0;
        return bits / line;
    }
    default:
        return 0;
    }
}

int rifl_ffr_measure(unsigned F, double ber, uint64_t frames, uint64_t seed,
                     rifl_ffr_count *out)
{
    if (!out)
        return RIFL_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    rifl_phy *ch;
    rifl_phy_channel_config cc = { .frame_bits = F, .delay_frames = 0, .ber = ber, .seed = seed };
    int rc = rifl_phy_channel_create(&cc, &ch, NULL, 0);
    if (rc != RIFL_OK)
        return rc;
    rifl_rng rng;
    rifl_rng_seed(&rng, seed ^ 0xfeedULL);
    uint8_t payload[RIFL_PAYLOAD_MAX_BYTES], wire[RIFL_FRAME_MAX_BYTES];
    unsigned pb = rifl_payload_bytes(F), fb = F / 8;
    uint64_t scr = 0, descr = 0;
    for (uint64_t n = 0; n < frames; n++) {
        for (unsigned i = 0; i < pb; i += 8) {
            uint64_t v = rifl_rng_next(&rng);
            memcpy(payload + i, &v, pb - i < 8 ? pb - i : 8);
        }
        unsigned id = (unsigned)(rifl_rng_next(&rng) & 0xFFF);
        rifl_frame_encode(wire, F, RIFL_SYN_DATA, RIFL_META_FULL, payload, id, &scr);
        const uint8_t *rx = rifl_phy_step(ch, n, wire);
        unsigned w = 0;
        for (unsigned i = 0; i < fb; i++)
            w += (unsigned)__builtin_popcount((unsigned)(rx[i] ^ wire[i]));
        rifl_frame_info fi;
        rifl_frame_decode(rx, F, &descr, NULL, &fi);
        out->frames++;
        if (w) {
            unsigned k = w > 16 ? 16 : w;
            out->hit++;
            out->hit_by_w[k]++;
            if (fi.id == id) {
                out->undetected++;
                out->undetected_by_w[k]++;
            }
        }
    }
    rifl_phy_free(ch);
    return RIFL_OK;
}

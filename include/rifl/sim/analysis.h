/* rifl: the sizing and reliability equations (Eqs. 11-26) of the paper "RIFL:
 * A Reliable Link Layer Network Protocol for Data Center Communication" (see
 * docs/paper-results.md), framing-efficiency models of RIFL and
 * of other link layers for comparison, and a measurement of the rate of
 * corrupted frames that pass verification. */
#ifndef RIFL_ANALYSIS_H
#define RIFL_ANALYSIS_H

#include "rifl/api.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Eq. 11: bandwidth efficiency of full data frames, 1 - (S_ver + 4) / F. */
RIFL_API double rifl_eq_efficiency(unsigned frame_bits, unsigned verification_bits);

/* Eq. 13: smallest frame-ID width with 2^K >= rate x RTT / F. */
RIFL_API unsigned rifl_eq_fid_bits(double rate_gbps, double rtt_ns, unsigned frame_bits);

/* Eq. 16 summed: probability that an F-bit frame carries more than n bit
 * errors (computed directly, without cancellation). */
RIFL_API double rifl_eq_tail(unsigned frame_bits, unsigned n, double ber);

/* Eq. 15: frame failure ratio of an m-bit CRC with Hamming distance hd. */
RIFL_API double rifl_eq_ffr(unsigned frame_bits, unsigned crc_bits, unsigned hd, double ber);

/* Eqs. 14 / 26: time in years until the probability of at least one
 * undetected frame reaches `p_fail` (the paper's footnote: 1%), at
 * `rate_gbps` counted in F-bit frames. */
RIFL_API double rifl_eq_mtbf_years(double ffr, double rate_gbps, unsigned frame_bits,
                                   double p_fail);
/* Mean time to the first undetected frame, 1 / (FFR x frame rate), years. */
RIFL_API double rifl_eq_mean_years(double ffr, double rate_gbps, unsigned frame_bits);

/* Eq. 19: smallest S_ver >= need with S_ver = 4 (mod 8). */
RIFL_API unsigned rifl_eq_verification_bits(unsigned need);

/* Smallest CRC width whose HD-4 length limit (2^(m-1) - 1 bits for a
 * (x+1) x primitive generator) covers `covered_bits`. */
RIFL_API unsigned rifl_eq_hd4_crc_bits(unsigned covered_bits);

/* Eqs. 20-25: flow-control buffer and thresholds in frames. */
typedef struct rifl_fc_sizing {
    double min_buffer;     /* Eq. 23: 1.5 x RTT in frames */
    double on, off;        /* Eqs. 24, 25 for a given buffer */
} rifl_fc_sizing;
RIFL_API rifl_fc_sizing rifl_eq_fc(double rtt_frames, double buffer_frames);

/* Framing efficiency (payload bits / line bits) of an L-byte packet sent
 * back to back, error-free, under the models written down in
 * docs/paper-results.md. */
typedef enum rifl_model {
    RIFL_MODEL_RIFL = 0,      /* F-bit frames, payload F/8 - 2 bytes */
    RIFL_MODEL_AURORA,        /* Aurora 64b/66b, 4 lanes, 256-bit user flits */
    RIFL_MODEL_INTERLAKEN,    /* Interlaken, 64b/67b, 512-bit user flits */
    RIFL_MODEL_ETHERNET,      /* 100G Ethernet MAC (64b/66b PCS) */
    RIFL_MODEL_COUNT
} rifl_model;
RIFL_API double rifl_model_efficiency(rifl_model m, unsigned frame_bits, unsigned long len);
RIFL_API const char *rifl_model_name(rifl_model m);

/* Measure undetected frame errors: `frames` data frames with random payloads
 * and IDs are encoded, sent over a channel with the given BER, and checked;
 * counts are kept by the number of flipped bits (index 16 = 16 or more). */
typedef struct rifl_ffr_count {
    uint64_t frames, hit, undetected;
    uint64_t hit_by_w[17], undetected_by_w[17];
} rifl_ffr_count;
RIFL_API int rifl_ffr_measure(unsigned frame_bits, double ber, uint64_t frames, uint64_t seed,
                              rifl_ffr_count *out);

#ifdef __cplusplus
}
#endif
#endif

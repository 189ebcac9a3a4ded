/* `rifl sim switch --pcap`: the frames of one host's link.
 *
 * The switch simulator moves whole cells between hosts and the switch with
 * fixed delays; it builds no frames.  To capture a host's link, the cells and
 * per-VOQ flow-control frames that cross it are handed, as they leave their
 * end, to a pair of real lanes run back to back without errors (end A the
 * host, end B the switch port), which carry them as RIFL frames: a cell as
 * one packet of its 6-byte Layer 2 header and 256 bytes, a flow-control frame
 * as an extension frame of format 0x03 (docs/layer2.md).  The lanes run
 * `per_cell` frame slots per cell time, enough for one cell and one
 * flow-control frame per direction, and every frame that arrives at either
 * end is written to the capture.  The simulator carries no message bytes: a
 * captured cell's 256 bytes hold its source host, destination host and
 * sequence number (16, 16 and 32 bits, big-endian), then zeros. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rifl/capture.h"
#include "rifl/l2.h"
#include "rifl/sim/pair.h"
#include "rifl/sim/switch_sim.h"

#define SWCAP_CELL_BYTES RIFL_L2_CELL_BYTES

struct cli_swcap {
    rifl_pair *pair;
    rifl_capture *cap;
    unsigned per_cell;       /* frame slots per cell time */
    double frame_ns;
    uint64_t slots;          /* cell times to capture */
    uint64_t frame;          /* the pair's next frame slot */
    uint64_t start;          /* frame slot of cell time 0 (after start-up) */
    uint64_t cells_up, cells_down, fc_down;
    unsigned host;           /* the watched host */
    unsigned fid_bits;       /* K of its link */
    bool failed;
    char msg[256];
};

/* One frame slot: both lanes send and receive; what arrived is captured
 * and read off the lanes (no ON/OFF flow control comes up). */
static void step(struct cli_swcap *c)
{
    rifl_pair_slot seen;
    rifl_pair_step(c->pair, &seen);
    uint64_t t_ns = (uint64_t)llround((double)c->frame * c->frame_ns);
    if (!c->failed && cli_pcap_arrivals(c->cap, seen.arrived, rifl_lane_default_config.frame_bits,
                                        c->frame, t_ns) != RIFL_OK) {
        c->failed = true;
        snprintf(c->msg, sizeof c->msg, "writing the capture failed");
    }
    for (int i = 0; i < 2; i++) {
        rifl_lane *l = c->pair->lane[i];
        uint8_t buf[SWCAP_CELL_BYTES], code;
        size_t len;
        int eop;
        while (rifl_lane_read(l, buf, sizeof buf, &len, &eop) == RIFL_OK) {
        }
        while (rifl_lane_read_ext(l, &code, buf, sizeof buf, &len) == RIFL_OK) {
        }
    }
    c->frame++;
}

int cli_swcap_open(struct cli_swcap **out, const char *path, double cell_ns, unsigned latency,
                   unsigned host, uint64_t slots, char *msg, size_t msglen)
{
    *out = NULL;
    struct cli_swcap *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(msg, msglen, "out of memory");
        return RIFL_ERR_NOMEM;
    }
    rifl_pair_config pc = { .lane = rifl_lane_default_config };
    unsigned P = rifl_payload_bytes(pc.lane.frame_bits);
    c->per_cell = (SWCAP_CELL_BYTES + P - 1) / P + 1;
    c->frame_ns = cell_ns / c->per_cell;
    c->slots = slots;
    c->host = host;
    /* the host's link takes half the fixed latency, as in the simulator */
    pc.delay_frames = (latency + 1) / 2 * c->per_cell;
    unsigned K = 5;
    while (K < 12 && (1u << K) < 32 + 2 * pc.delay_frames + 2)
        K++;
    if ((1u << K) < 32 + 2 * pc.delay_frames + 2) {
        snprintf(msg, msglen, "a host link of %u cell times is too long for the 12-bit frame IDs "
                 "of a captured link: use --latency %u or less", latency,
                 2 * ((4096 - 34) / 2 / c->per_cell));
        free(c);
        return RIFL_ERR_CONFIG;
    }
    pc.lane.fid_bits = K;
    c->fid_bits = K;
    pc.lane.tx_queue_frames = 64 * c->per_cell;
    int rc = rifl_pair_create(&pc, &c->pair, msg, msglen);
    if (rc == RIFL_OK)
        rc = rifl_capture_open(path, pc.lane.frame_bits, 1, &c->cap, msg, msglen);
    if (rc != RIFL_OK) {
        rifl_pair_free(c->pair);
        free(c);
        return rc;
    }
    /* start-up (INIT, fillers) before the first cell time */
    for (uint64_t guard = 0; guard < 64u << K; guard++) {
        if (rifl_lane_tx_ready(c->pair->lane[0]) && rifl_lane_tx_ready(c->pair->lane[1]))
            break;
        step(c);
    }
    c->start = c->frame;
    *out = c;
    return RIFL_OK;
}

/* The pair's frames up to the start of cell time t. */
static void catch_up(struct cli_swcap *c, uint64_t t)
{
    uint64_t to = c->start + t * c->per_cell;
    while (c->frame < to)
        step(c);
}

static void cell_bytes(const rifl_cell *cell, uint8_t out[SWCAP_CELL_BYTES])
{
    memset(out, 0, SWCAP_CELL_BYTES);
    memcpy(out, cell->hdr.b, RIFL_L2_HDR_BYTES);
    uint8_t *p = out + RIFL_L2_HDR_BYTES;
    p[0] = (uint8_t)(cell->src >> 8);
    p[1] = (uint8_t)cell->src;
    p[2] = (uint8_t)(cell->dst >> 8);
    p[3] = (uint8_t)cell->dst;
    for (int k = 0; k < 4; k++)
        p[4 + k] = (uint8_t)(cell->seq >> (24 - 8 * k));
}

static void hand_over(struct cli_swcap *c, int rc, const char *what)
{
    if (rc != RIFL_OK && !c->failed) {
        c->failed = true;
        snprintf(c->msg, sizeof c->msg, "the captured link's lane refused %s (%s)", what,
                 rifl_strerror(rc));
    }
}

void cli_swcap_watch(void *ctx, const rifl_ssim_watch *w)
{
    struct cli_swcap *c = ctx;
    if (c->failed || w->t >= c->slots)
        return;
    catch_up(c, w->t);
    uint8_t buf[SWCAP_CELL_BYTES];
    rifl_lane *host = c->pair->lane[0], *port = c->pair->lane[1];
    if (w->up_valid) {
        cell_bytes(&w->up, buf);
        hand_over(c, rifl_lane_send(host, buf, sizeof buf), "a cell from the host");
        c->cells_up++;
    }
    if (w->down_valid) {
        cell_bytes(&w->down, buf);
        hand_over(c, rifl_lane_send(port, buf, sizeof buf), "a cell to the host");
        c->cells_down++;
    }
    if (w->fc_valid) {
        uint8_t fc[3];
        rifl_l2_fc_pack(&w->fc, fc);
        hand_over(c, rifl_lane_send_ext(port, RIFL_L2_FC_CODE, fc, sizeof fc),
                  "a flow-control frame");
        c->fc_down++;
    }
}

int cli_swcap_close(struct cli_swcap *c, uint64_t run_slots, const char *path, char *msg,
                    size_t msglen)
{
    if (!c)
        return RIFL_OK;
    /* the last cell time captured (or of the run), then until everything
     * handed over has arrived */
    if (run_slots < c->slots)
        c->slots = run_slots;
    catch_up(c, c->slots);
    for (uint64_t guard = 0; guard < 1000000; guard++) {
        rifl_lane *a = c->pair->lane[0], *b = c->pair->lane[1];
        if (!rifl_lane_tx_backlog(a) && !rifl_lane_tx_backlog(b) &&
            rifl_lane_get_stats(a)->tx_frames[RIFL_KIND_DATA] ==
                rifl_lane_get_stats(b)->rx_delivered[RIFL_KIND_DATA] &&
            rifl_lane_get_stats(b)->tx_frames[RIFL_KIND_DATA] ==
                rifl_lane_get_stats(a)->rx_delivered[RIFL_KIND_DATA] &&
            rifl_lane_get_stats(b)->tx_frames[RIFL_KIND_EXT] ==
                rifl_lane_get_stats(a)->rx_delivered[RIFL_KIND_EXT])
            break;
        step(c);
    }
    uint64_t frames = rifl_capture_get_stats(c->cap)->frames;
    int rc = rifl_capture_close(c->cap, msg, msglen);
    if (rc == RIFL_OK && c->failed) {
        snprintf(msg, msglen, "%s", c->msg);
        rc = RIFL_ERR_IO;
    }
    if (rc == RIFL_OK)
        fprintf(stderr,
                "rifl sim switch: %llu frames captured to %s (K=%u; the first %llu cell times of "
                "host %u's link: %llu cells up, %llu cells and %llu flow-control frames down)\n",
                (unsigned long long)frames, path, c->fid_bits, (unsigned long long)c->slots,
                c->host, (unsigned long long)c->cells_up, (unsigned long long)c->cells_down,
                (unsigned long long)c->fc_down);
    rifl_pair_free(c->pair);
    free(c);
    return rc;
}

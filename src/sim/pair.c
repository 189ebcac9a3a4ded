/* Two lanes connected back to back by two channels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "rifl/sim.h"
#include "../common/msg.h"

unsigned rifl_link_delay_frames(const rifl_link_params *link, unsigned frame_bits)
{
    double ns = link->transceiver_ns + link->cable_m * link->ns_per_m;
    double frames = ns * link->lane_rate_gbps / (double)frame_bits;
    return (unsigned)llround(frames);
}

void rifl_pair_free(rifl_pair *p)
{
    if (!p)
        return;
    for (int i = 0; i < 2; i++) {
        rifl_lane_free(p->lane[i]);
        rifl_channel_free(p->ch[i]);
    }
    free(p);
}

int rifl_pair_create(const rifl_pair_config *cfg, rifl_pair **out, char *msg,
                     size_t msglen)
{
    if (!cfg || !out)
        return rifl_null_arg(msg, msglen, "rifl_pair_create", cfg ? "out" : "cfg");
    *out = NULL;
    rifl_pair *p = calloc(1, sizeof *p);
    if (!p)
        return RIFL_ERR_NOMEM;
    p->encode_all = cfg->encode_all;
    p->delay_frames = cfg->delay_frames ? cfg->delay_frames
                                        : rifl_link_delay_frames(&cfg->lane.link,
                                                                 cfg->lane.frame_bits);
    int rc = RIFL_OK;
    for (int i = 0; i < 2 && rc == RIFL_OK; i++) {
        rc = rifl_lane_create(&cfg->lane, &p->lane[i], msg, msglen);
        if (rc != RIFL_OK)
            break;
        rifl_channel_config cc = {
            .frame_bits = cfg->lane.frame_bits,
            .delay_frames = p->delay_frames,
            .ber = cfg->ber[i],
            .seed = cfg->seed[i],
        };
        rc = rifl_channel_create(&cc, &p->ch[i], msg, msglen);
    }
    if (rc != RIFL_OK) {
        rifl_pair_free(p);
        return rc;
    }
    *out = p;
    return RIFL_OK;
}

/* A frame leaving a channel that carries frames by content. */
static int receive(rifl_lane *l, const rifl_channel_frame *e)
{
    if (e && e->wire)
        return rifl_lane_rx(l, e->wire, NULL);
    return rifl_lane_rx_frame(l, e ? &e->f : NULL, NULL);
}

void rifl_pair_step(rifl_pair *p, int res[2])
{
    int ra, rb;
    if (p->encode_all) {
        rifl_lane_tx(p->lane[0], p->wire[0]);
        rifl_lane_tx(p->lane[1], p->wire[1]);
        const uint8_t *to_b = rifl_channel_step(p->ch[0], p->wire[0]);
        const uint8_t *to_a = rifl_channel_step(p->ch[1], p->wire[1]);
        ra = rifl_lane_rx(p->lane[0], to_a, NULL);
        rb = rifl_lane_rx(p->lane[1], to_b, NULL);
    } else {
        rifl_lane_tx_frame(p->lane[0], rifl_channel_frame_in(p->ch[0]));
        rifl_lane_tx_frame(p->lane[1], rifl_channel_frame_in(p->ch[1]));
        const rifl_channel_frame *to_b = rifl_channel_step_frame(p->ch[0], true);
        const rifl_channel_frame *to_a = rifl_channel_step_frame(p->ch[1], true);
        ra = receive(p->lane[0], to_a);
        rb = receive(p->lane[1], to_b);
    }
    if (res) {
        res[0] = ra;
        res[1] = rb;
    }
    p->slot++;
}

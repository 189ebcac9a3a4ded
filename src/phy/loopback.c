/* The loopback PHY: wire bytes back, unchanged, after a fixed delay. */
#include <stdlib.h>
#include <string.h>

#include "rifl/frame.h"
#include "rifl/phy.h"

#include "delay_line.h"

struct loopback {
    rifl_phy phy;
    unsigned fbytes;
    struct delay_line dl;
    uint8_t *wire;
};

static struct loopback *as_loopback(rifl_phy *p) { return (struct loopback *)p; }

static unsigned lb_exchange(rifl_phy *p, uint64_t now, rifl_phy_form form, rifl_phy_frame *out,
                            unsigned max)
{
    struct loopback *lb = as_loopback(p);
    (void)now;
    if (form == RIFL_PHY_CONTENT)
        form = RIFL_PHY_NONE; /* wire bytes only: it never had a buffer for content */
    if (form == RIFL_PHY_WIRE) {
        lb->phy.st.frames++;
        lb->phy.st.bits += 8u * lb->fbytes;
    }
    unsigned e = delay_line_step(&lb->dl, form);
    lb->phy.tx[RIFL_PHY_WIRE] = lb->wire + (size_t)lb->dl.pos * lb->fbytes;
    if (lb->dl.form[e] != RIFL_PHY_WIRE || max == 0)
        return 0;
    out->form = RIFL_PHY_WIRE;
    out->data = lb->wire + (size_t)e * lb->fbytes;
    lb->phy.st.delivered++;
    return 1;
}

static void lb_destroy(rifl_phy *p)
{
    struct loopback *lb = as_loopback(p);
    delay_line_free(&lb->dl);
    free(lb->wire);
    free(lb);
}

static const rifl_phy_ops loopback_ops = {
    .name = "loopback", .exchange = lb_exchange, .destroy = lb_destroy,
};

int rifl_phy_loopback_create(unsigned frame_bits, unsigned delay_frames, rifl_phy **out,
                             char *msg, size_t msglen)
{
    if (!out)
        return rifl_null_arg(msg, msglen, "rifl_phy_loopback_create", "out");
    *out = NULL;
    if (rifl_frame_width_check(frame_bits) != RIFL_OK) {
        rifl_msg(msg, msglen, "frame width %u is not supported; use 64, 128, 256, 512, 1024 "
                 "or 2048", frame_bits);
        return RIFL_ERR_CONFIG;
    }
    if (delay_frames > (1u << 24)) {
        rifl_msg(msg, msglen, "loopback delay of %u frames is too long; use at most 16777216",
                 delay_frames);
        return RIFL_ERR_CONFIG;
    }
    uint64_t bytes = ((uint64_t)delay_frames + 1) * (frame_bits / 8 + 1);
    if (bytes > RIFL_PHY_MAX_BYTES) {
        rifl_msg(msg, msglen, "loopback delay of %u frames of %u bits takes %llu MiB, more "
                 "than the %llu MiB a PHY may take; lower delay_frames or frame_bits",
                 delay_frames, frame_bits, (unsigned long long)(bytes >> 20),
                 (unsigned long long)(RIFL_PHY_MAX_BYTES >> 20));
        return RIFL_ERR_CONFIG;
    }
    struct loopback *lb = calloc(1, sizeof *lb);
    if (!lb)
        return RIFL_ERR_NOMEM;
    lb->phy.ops = &loopback_ops;
    lb->phy.forms = 1u << RIFL_PHY_WIRE;
    lb->phy.frame_bytes = frame_bits / 8;
    lb->fbytes = frame_bits / 8;
    int rc = delay_line_init(&lb->dl, delay_frames);
    lb->wire = calloc(lb->dl.slots, lb->fbytes);
    if (rc || !lb->wire) {
        lb_destroy(&lb->phy);
        return RIFL_ERR_NOMEM;
    }
    lb->phy.tx[RIFL_PHY_WIRE] = lb->wire;
    *out = &lb->phy;
    return RIFL_OK;
}

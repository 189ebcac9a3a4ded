/* Layer 2 header: construction, forwarding rule, header update with the
 * return index, and route reversal. */
#include <string.h>

#include "rifl/l2.h"

int rifl_l2_hdr_make(rifl_l2_hdr *h, const uint8_t *route, unsigned hops)
{
    if (!h || hops < 1 || hops > RIFL_L2_MAX_HOPS || !route)
        return RIFL_ERR_INVALID_ARG;
    memset(h, 0, sizeof *h);
    h->b[0] = (uint8_t)((hops << 4) | hops);
    for (unsigned k = 0; k < hops; k++)
        h->b[1 + k] = route[k];
    return RIFL_OK;
}

int rifl_l2_rel_port(unsigned nports, unsigned in, unsigned out)
{
    if (nports > RIFL_L2_MAX_PORTS || in >= nports || out >= nports || in == out)
        return -1;
    return out < in ? (int)out : (int)out - 1;
}

int rifl_l2_forward(unsigned nports, unsigned in_port, const rifl_l2_hdr *h,
                    unsigned *out_port)
{
    if (!h || nports < 2 || nports > RIFL_L2_MAX_PORTS || in_port >= nports)
        return RIFL_ERR_INVALID_ARG;
    unsigned total = rifl_l2_total_hops(h), remain = rifl_l2_remain_hops(h);
    if (remain == 0)
        return RIFL_L2_FWD_MISROUTED;
    if (total > RIFL_L2_MAX_HOPS || remain > total)
        return RIFL_L2_FWD_INVALID;
    unsigned j = h->b[1];
    if (j == RIFL_L2_BROADCAST)
        return RIFL_L2_FWD_BROADCAST;
    /* relative port j: the outputs below the input keep their number, the
     * others are one up (no branch on which: it follows the traffic) */
    unsigned o = j + (j >= in_port);
    if (o >= nports)
        return RIFL_L2_FWD_INVALID; /* only j >= in_port can get here */
    if (out_port)
        *out_port = o;
    return RIFL_L2_FWD_UNICAST;
}

void rifl_l2_hdr_advance(rifl_l2_hdr *h, unsigned in_port, unsigned out_port)
{
    if (!h)
        return;
    unsigned remain = rifl_l2_remain_hops(h);
    rifl_l2_set_remain_hops(h, remain ? remain - 1 : 0);
    uint8_t r = (uint8_t)(in_port < out_port ? in_port : in_port - 1);
    memmove(&h->b[1], &h->b[2], RIFL_L2_MAX_HOPS - 1);
    h->b[RIFL_L2_MAX_HOPS] = r;
}

int rifl_l2_reverse_route(const rifl_l2_hdr *arrived, uint8_t route[RIFL_L2_MAX_HOPS],
                          unsigned *hops)
{
    if (!arrived || !route)
        return RIFL_ERR_INVALID_ARG;
    unsigned total = rifl_l2_total_hops(arrived);
    if (rifl_l2_remain_hops(arrived) != 0 || total < 1 || total > RIFL_L2_MAX_HOPS)
        return RIFL_ERR_FRAME;
    /* return indices sit in the last `total` fields, oldest first */
    for (unsigned k = 0; k < total; k++)
        route[k] = arrived->b[RIFL_L2_MAX_HOPS - k];
    for (unsigned k = total; k < RIFL_L2_MAX_HOPS; k++)
        route[k] = 0;
    if (hops)
        *hops = total;
    return RIFL_OK;
}

int rifl_l2_hdr_reply(const rifl_l2_hdr *arrived, rifl_l2_hdr *reply)
{
    if (!arrived || !reply)
        return RIFL_ERR_INVALID_ARG;
    uint8_t route[RIFL_L2_MAX_HOPS];
    unsigned hops;
    int rc = rifl_l2_reverse_route(arrived, route, &hops);
    if (rc != RIFL_OK)
        return rc;
    return rifl_l2_hdr_make(reply, route, hops);
}

/* The rules rifl_net_create holds a network's links to, shared with the
 * RDMA simulator's check of a run over a network so that both refuse the
 * same; each caller says what is wrong in its own words. */
#ifndef RIFL_SIM_NETSIM_PRIV_H
#define RIFL_SIM_NETSIM_PRIV_H

#include "rifl/sim/netsim.h"

/* The lane rule a network's settings break, the first of them. */
enum net_lanes_fault {
    NET_LANES_OK = 0,
    NET_LANES_COUNT, /* lanes per link: neither 0 (one) nor 1, 2, 4, 8 or 16 */
    NET_LANES_GROUP, /* lanes per group: neither 0 (all of a link's) nor a
                        power of two up to 16 */
    NET_LANES_UNFIT  /* a group of more lanes than the bonded link has */
};

/* The network's lanes per link and group_lanes per group against the lane
 * rule, and the groups against a link of link_lanes lanes (bonded when 2 or
 * more; 0 or 1: no link to fit). */
enum net_lanes_fault net_lanes_rule(unsigned lanes, unsigned group_lanes, unsigned link_lanes);

/* The lanes of the link at port p of node v: its own (a topology file's
 * 'lanes'), else the network's `lanes`, 1 when that is 0. */
unsigned net_link_lanes(const rifl_topology *t, unsigned lanes, unsigned v, unsigned p);

#endif

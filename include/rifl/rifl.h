/* rifl: umbrella header of the engine library (librifl, rifl.pc): the
 * link layer, flow control, Layer 2 and the switch, the port, the PHY
 * boundary.  The
 * simulation library has its own: rifl/sim/sim.h. */
#ifndef RIFL_RIFL_H
#define RIFL_RIFL_H

#include "rifl/error.h"
#include "rifl/rng.h"
#include "rifl/text.h"

/* link layer */
#include "rifl/frame.h"
#include "rifl/lane.h"
#include "rifl/serial.h"

/* channel bonding */
#include "rifl/bond.h"

/* the PHY boundary */
#include "rifl/phy.h"
#include "rifl/capture.h"
#include "rifl/udplink.h"

/* credit-based flow control */
#include "rifl/credit.h"

/* Layer 2 and the switch */
#include "rifl/l2.h"
#include "rifl/switch.h"
#include "rifl/nic.h"

/* a port: lane, flow control, virtual lanes, Layer 2 endpoint */
#include "rifl/port.h"

/* RDMA: the engine's wire formats */
#include "rifl/rdma.h"
#include "rifl/rdma_wire.h"

#endif

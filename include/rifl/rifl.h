/* rifl: umbrella header, includes the whole public API. */
#ifndef RIFL_RIFL_H
#define RIFL_RIFL_H

#include "rifl/error.h"
#include "rifl/rng.h"
#include "rifl/text.h"

/* link layer */
#include "rifl/frame.h"
#include "rifl/lane.h"

/* Layer 2 and the switch */
#include "rifl/l2.h"
#include "rifl/switch.h"

/* credit-based flow control */
#include "rifl/credit.h"

/* simulation and analysis */
#include "rifl/analysis.h"
#include "rifl/credit_sim.h"
#include "rifl/latency.h"
#include "rifl/linksim.h"
#include "rifl/sim.h"
#include "rifl/switch_sim.h"

#endif

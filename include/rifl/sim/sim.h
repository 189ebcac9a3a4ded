/* rifl simulation: umbrella header of the simulation library (librifl-sim,
 * rifl-sim.pc): traffic and validation, two lanes back to back, the link
 * simulator, latency histograms, the paper's equations, the switch and
 * credit simulators.  The engines it drives are in librifl (rifl/rifl.h). */
#ifndef RIFL_SIM_SIM_H
#define RIFL_SIM_SIM_H

#include "rifl/rifl.h"

#include "rifl/sim/analysis.h"
#include "rifl/sim/credit_sim.h"
#include "rifl/sim/latency.h"
#include "rifl/sim/linksim.h"
#include "rifl/sim/netsim.h"
#include "rifl/sim/pair.h"
#include "rifl/sim/rdmasim.h"
#include "rifl/sim/switch_sim.h"
#include "rifl/sim/traffic.h"

#endif

/* rifl: umbrella header, includes the whole public API. */
#ifndef RIFL_RIFL_H
#define RIFL_RIFL_H

#include "rifl/error.h"
#include "rifl/frame.h"
#include "rifl/lane.h"
#include "rifl/rng.h"
#include "rifl/sim.h"
#include "rifl/text.h"

#endif

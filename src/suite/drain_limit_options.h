// The detector's drain limits (suite/detector_drain.h) as options: `gcm agent` and `gcm drainer` take the same two,
// with the same names, defaults and checks, in [gcm.agent] and [gcm.drainer].
#pragma once

#include "cli/cli_fwd.h"
#include "suite/detector_drain.h"

namespace gcm {

void add_drain_limit_options(OptionBinder& b, suite::DrainLimits& limits);

}  // namespace gcm

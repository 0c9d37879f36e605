// slurm_monitor's Sdiag record (slurm/sdiag.h reads it from sdiag) is registered among the collectors' records, in
// the place it had before its parser moved to slurm/: `gcm schemas` (and what is generated from it) lists the
// records in registration order, which is the link order of these files. Only the pointer is stored, so kSdiag
// being built in another file later in static initialisation does not matter.
#include "core/schema.h"
#include "slurm/sdiag.h"

namespace gcm::slurm_monitor {
namespace {

const bool kSdiagRegistered = register_schema(&slurm::kSdiag);

}  // namespace
}  // namespace gcm::slurm_monitor

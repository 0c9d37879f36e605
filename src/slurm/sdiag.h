// slurmctld's statistics as GCM's Sdiag record (gcm-newer.md §1.6): from `sdiag --all --json` (Slurm 23.02 and
// later) or from the text of `sdiag --all` (every version; 22.05 has no --json). slurm_monitor writes one Sdiag LOG
// record per round and copies the same fields into its SLURMLog records. The parsers live here, beside the other
// parsers of Slurm's outputs, so that any collector (or a REST back end later) reads sdiag the same way.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <vector>

#include "core/record.h"

namespace gcm::slurm {

// The Sdiag record: cluster, then every statistic (ints unless noted), null where the source has no such value.
extern const LazySchema kSdiag;

struct Sdiag {
  Sdiag();
  Record record;  // of kSdiag; cluster is left null (the collector sets it)

  // An integer statistic by its field name; nullopt when null. Throws std::out_of_range for a name not in kSdiag.
  std::optional<int64_t> get(std::string_view field) const;
};

// kSdiag's fields from this index on are the statistics (before it: cluster); SLURMLog embeds them in this order.
constexpr size_t kSdiagFirstStatistic = 1;
// The statistic fields alone (usable during static initialisation, unlike kSdiag from another file).
const std::vector<FieldSpec>& sdiag_statistic_fields();

// `sdiag --all` text. The five controller-load lines (Server thread count, Agent queue size, Agent count, Agent
// thread count, DBD Agent queue size) must be there (slurm::ParseError naming the missing one); the other values
// are read section by section (the main scheduler's "Total cycles:" is not the backfill's), and whatever the text
// does not show (sums, parts_packed, ...) stays null.
Sdiag parse_sdiag_text(std::string_view text);

// `sdiag --all --json` (the "statistics" object). Numbers may be plain or Slurm's {set, infinite, number}; an unset
// or infinite one is null. The RPC tables become JSON strings as Python's json.dumps writes them ("[]" when absent).
// Throws slurm::ParseError for invalid JSON, a missing controller-load value or a value of the wrong type.
Sdiag parse_sdiag_json(std::string_view text);

}  // namespace gcm::slurm

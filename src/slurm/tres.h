// Trackable resources ("cpu=8,mem=16G,node=1,billing=8,gres/gpu=2"): sacct AllocTRES/ReqTRES, squeue TRES-ALLOC,
// scontrol TRES= and TRESBillingWeights=.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "slurm/parse_error.h"

namespace gcm::slurm {

// One "key=value" item; views into the parsed text.
struct TresEntry {
  std::string_view key, value;
};

// All items in order. "", "(null)" and "N/A" give none. An item without exactly one '=' throws ParseError.
std::vector<TresEntry> parse_tres_entries(std::string_view tres);

// An item's value as a number: memory ("mem", and "gres/gpumem") in decimal MB via convert_memory_to_mb, every
// other key an integer. Throws ParseError.
int64_t tres_entry_number(const TresEntry& entry);

// The reference's parse_value_from_tres (§1.9): "" or "(null)" -> 0; every item must be "k=v" (else ParseError);
// the value of the last item whose key equals key exactly, as an integer (mem: MB); 0 when absent.
// Keys the reference reads: "gres/gpu", "cpu", "mem", "node", "billing".
int64_t tres_value(std::string_view tres, std::string_view key);

}  // namespace gcm::slurm

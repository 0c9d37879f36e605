// libFuzzer: scontrol records from the streaming parser (fed line copies that die at once) equal those parsed from
// the whole text, and config lines never crash.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "slurm/delimited.h"
#include "slurm/scontrol.h"
#include "fuzz_target.h"

namespace {

using Owned = std::vector<std::pair<std::string, std::string>>;

Owned owned(const gcm::slurm::ScontrolRecord& r) {
  Owned out;
  for (const auto& kv : r.fields) out.emplace_back(kv.key, kv.value);
  for (auto w : r.loose_words) out.emplace_back("", w);
  return out;
}

}  // namespace

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  using namespace gcm::slurm;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<Owned> whole;
  for (const auto& r : parse_scontrol_records(text)) whole.push_back(owned(r));
  std::vector<Owned> streamed;
  ScontrolParser parser;
  for_each_line(text, [&](std::string_view line) {
    std::string copy(line);
    const ScontrolRecord* r = parser.feed(copy);
    copy.assign(copy.size(), '\0');
    if (r) streamed.push_back(owned(*r));
  });
  if (const ScontrolRecord* r = parser.finish()) streamed.push_back(owned(*r));
  if (streamed != whole) std::abort();
  (void)parse_scontrol_config(text);
  return 0;
}

const bool kScontrolFuzzRegistered = gcm::fuzz::register_target("scontrol_fuzz", fuzz_one);

}  // namespace

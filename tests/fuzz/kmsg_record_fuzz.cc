// libFuzzer: the /dev/kmsg record parser never crashes, and what it accepts keeps its invariants: the views lie
// inside the input, the level is the priority's low three bits, and a rejected record always says why.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "agent/kmsg_record.h"
#include "fuzz_target.h"

namespace {

bool inside(std::string_view part, std::string_view whole) {
  return part.empty() || (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

}  // namespace

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string error;
  auto r = gcm::agent::parse_kmsg_record(text, &error);
  if (!r) {
    if (error.empty()) std::abort();
    return 0;
  }
  if (r->level < 0 || r->level > 7 || r->facility < 0) std::abort();
  if (!inside(r->message, text) || r->message.find('\n') != std::string_view::npos) std::abort();
  for (const auto& e : r->dict) {
    if (e.key.empty() || !inside(e.key, text) || !inside(e.value, text)) std::abort();
    if (e.key.find('=') != std::string_view::npos) std::abort();
  }
  return 0;
}

const bool kKmsgRecordFuzzRegistered = gcm::fuzz::register_target("kmsg_record_fuzz", fuzz_one);

}  // namespace

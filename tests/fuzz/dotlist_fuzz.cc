// libFuzzer: the sink-option (dot-list / YAML flow) parser never crashes; it returns a value or a DotlistError.
#include <cstdint>
#include <string>

#include "core/dotlist.h"
#include "core/json.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  std::string item(reinterpret_cast<const char*>(data), size);
  try {
    gcm::Value v = gcm::parse_dotlist({item});
    (void)gcm::to_json(v);
  } catch (const gcm::DotlistError&) {
  }
  return 0;
}

const bool kDotlistFuzzRegistered = gcm::fuzz::register_target("dotlist_fuzz", fuzz_one);

}  // namespace

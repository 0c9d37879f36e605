// libFuzzer: the smartctl -xj reader never crashes on arbitrary text; bad input is a SmartctlError.
#include <cstdint>
#include <string_view>

#include "health/checks/smartctl.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  try {
    (void)gcm::health::parse_smartctl_json(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const gcm::health::SmartctlError&) {
  }
  return 0;
}

const bool kSmartctlJsonFuzzRegistered = gcm::fuzz::register_target("smartctl_json_fuzz", fuzz_one);

}  // namespace

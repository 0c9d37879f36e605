// libFuzzer: the node manifest reader never crashes on arbitrary text; bad input is a ManifestError.
#include <cstdint>
#include <string_view>

#include "health/checks/manifest.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  try {
    (void)gcm::health::parse_manifest(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const gcm::health::ManifestError&) {
  }
  return 0;
}

const bool kHostManifestFuzzRegistered = gcm::fuzz::register_target("host_manifest_fuzz", fuzz_one);

}  // namespace

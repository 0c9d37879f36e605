// libFuzzer: the node manifest reader never crashes on arbitrary text; bad input is a ManifestError.
#include <cstdint>
#include <string_view>

#include "health/checks/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)gcm::health::parse_manifest(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const gcm::health::ManifestError&) {
  }
  return 0;
}

// libFuzzer: the mountinfo parser never crashes on arbitrary text.
#include <cstdint>
#include <string_view>

#include "storage/mountinfo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)gcm::parse_mountinfo(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const gcm::MountInfoError&) {
  }
  return 0;
}

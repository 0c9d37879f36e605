// libFuzzer: the mountinfo parser never crashes on arbitrary text.
#include <cstdint>
#include <string_view>

#include "storage/mountinfo.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  try {
    (void)gcm::parse_mountinfo(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const gcm::MountInfoError&) {
  }
  return 0;
}

const bool kMountinfoFuzzRegistered = gcm::fuzz::register_target("mountinfo_fuzz", fuzz_one);

}  // namespace

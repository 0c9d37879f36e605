// libFuzzer: the web config parser (YAML through libyaml, then exporter-toolkit's keys) never crashes; it returns a
// configuration or a WebConfigError naming the line. File references point nowhere, so only parsing is exercised.
#include <cstdint>
#include <string>

#include "core/web_config.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)gcm::parse_web_config(text, "fuzz.yml", "/nonexistent");
  } catch (const gcm::WebConfigError&) {
  }
  return 0;
}

const bool kWebConfigFuzzRegistered = gcm::fuzz::register_target("web_config_fuzz", fuzz_one);

}  // namespace

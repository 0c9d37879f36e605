// libFuzzer: the dcgmi output readers (diag JSON, nvlink JSON, nvlink status text) never crash or throw on
// arbitrary input and always give a verdict.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "health/dcgmi_output.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using gcm::health::ExitCode;
  auto check = [](const gcm::health::DcgmiVerdict& v) {
    if (v.code == ExitCode::UNKNOWN) std::abort();  // every reader decides OK, WARN or CRITICAL
  };
  check(gcm::health::evaluate_dcgmi_diag(text, {"Memtest"}));
  check(gcm::health::evaluate_dcgmi_nvlink_errors(text, {}));
  check(gcm::health::evaluate_dcgmi_nvlink_status(text));
  return 0;
}

const bool kDcgmiOutputFuzzRegistered = gcm::fuzz::register_target("dcgmi_output_fuzz", fuzz_one);

}  // namespace

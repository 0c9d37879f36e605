// slurm_processor's request path on arbitrary bodies: protobuf and JSON decoding of every signal, enrichment of
// whatever decodes (with a job table, so the attribute code runs), re-encoding, and gzip inflation. The first byte
// picks the signal and the encoding; nothing may crash, leak or read out of bounds, and whatever is forwarded must
// decode again.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "processor/otlp_request.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  using namespace gcm::processor;
  static const auto jobs = [] {
    gcm::JobInfo j;
    j.job_id = 7;
    j.job_name = "fuzz";
    return std::make_shared<const NodeJobs>(node_jobs_from({{0, {j}}, {1, {j}}}));
  }();
  if (size == 0) return 0;
  uint8_t mode = data[0];
  std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  Signal signal = static_cast<Signal>(mode % 3);
  const char* ct = (mode / 3) % 2 ? "application/json" : "application/x-protobuf";
  const char* enc = (mode / 6) % 2 ? "gzip" : "";
  RequestResult r = process_request(signal, ct, enc, body, 1 << 20, [](std::string_view) { return jobs; });
  if (r.status == 200) {
    RequestResult again = process_request(signal, "application/x-protobuf", "", r.forward, 1 << 22,
                                          [](std::string_view) { return jobs; });
    if (again.status != 200 || again.items != r.items) __builtin_trap();
  }
  return 0;
}

const bool kOtlpRequestFuzzRegistered = gcm::fuzz::register_target("otlp_request_fuzz", fuzz_one);

}  // namespace

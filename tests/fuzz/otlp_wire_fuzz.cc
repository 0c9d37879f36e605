// The wire rewriter against the message path on arbitrary protobuf bodies. The first byte picks the signal; hosts
// resolve to a job table (this host and node1), to a host without jobs (idle-node) or to nothing. Nothing may crash
// or read out of bounds; when the rewriter takes a body, protobuf must take it too, the rewritten bytes must decode
// to the message enrich() makes of it, and the counts must agree (with the count read from the framing alone too);
// and process_request answers the same either way.
#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "processor/enrich.h"
#include "processor/otlp_request.h"
#include "processor/wire_enrich.h"
#include "fuzz_target.h"

namespace {

using namespace gcm::processor;

HostLookup lookup() {
  static const auto jobs = [] {
    gcm::JobInfo a;
    a.job_id = 7;
    a.job_name = "fuzz";
    a.job_user = "u";
    gcm::JobInfo b = a;
    b.job_id = 8;
    b.array_job_id = 8;
    b.array_task_id = 2;
    return std::make_shared<const NodeJobs>(node_jobs_from({{0, {a}}, {1, {a, b}}, {2, {}}}));
  }();
  static const auto idle = std::make_shared<const NodeJobs>(node_jobs_from({}));
  return [](std::string_view host) -> std::shared_ptr<const NodeJobs> {
    if (host.empty() || host == "node1") return jobs;
    if (host == "idle-node") return idle;
    return nullptr;
  };
}

template <typename Req>
void differential(std::string_view body, WireOutcome (*wire)(std::string_view, const HostLookup&, std::string&, size_t),
                  std::optional<uint64_t> (*count)(std::string_view)) {
  std::optional<uint64_t> counted = count(body);  // what a request refused before its enrichment counts
  HostLookup l = lookup();
  std::string out;
  WireOutcome w = wire(body, l, out, 0);
  if (!w.ok) return;
  if (counted != w.stats.items) __builtin_trap();
  Req expected;
  // Taken, but protobuf refuses it.
  if (!expected.ParseFromArray(body.data(), static_cast<int>(body.size()))) __builtin_trap();
  EnrichStats st = enrich(expected, l);
  if (st.items != w.stats.items || st.enriched != w.stats.enriched) __builtin_trap();
  Req got;
  if (!got.ParseFromString(out)) __builtin_trap();
  google::protobuf::util::DefaultFieldComparator nan_is_nan;  // a NaN double copied is the same NaN
  nan_is_nan.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer d;
  d.set_field_comparator(&nan_is_nan);
  if (!d.Compare(expected, got)) __builtin_trap();
}

}  // namespace

namespace pbcm = opentelemetry::proto::collector::metrics::v1;
namespace pbcl = opentelemetry::proto::collector::logs::v1;
namespace pbct = opentelemetry::proto::collector::trace::v1;

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  Signal signal = static_cast<Signal>(data[0] % 3);
  switch (signal) {
    case Signal::Metrics:
      differential<pbcm::ExportMetricsServiceRequest>(body, wire_enrich_metrics, wire_count_metric_points);
      break;
    case Signal::Logs:
      differential<pbcl::ExportLogsServiceRequest>(body, wire_enrich_logs, wire_count_records);
      break;
    case Signal::Traces:
      differential<pbct::ExportTraceServiceRequest>(body, wire_enrich_traces, wire_count_records);
      break;
  }
  HostLookup l = lookup();
  RequestResult a = process_request(signal, "application/x-protobuf", "", body, 1 << 20, l, Decoder::Wire);
  RequestResult b = process_request(signal, "application/x-protobuf", "", body, 1 << 20, l, Decoder::Messages);
  bool same = a.status == b.status && a.message == b.message && a.items == b.items && a.enriched == b.enriched;
  if (!same) __builtin_trap();
  return 0;
}

const bool kOtlpWireFuzzRegistered = gcm::fuzz::register_target("otlp_wire_fuzz", fuzz_one);

}  // namespace

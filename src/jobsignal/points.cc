#include "jobsignal/points.h"

#include <charconv>
#include <cmath>

#include "metrics_service.pb.h"

namespace gcm::jobsignal {
namespace {

namespace pbm = opentelemetry::proto::metrics::v1;
namespace pbc = opentelemetry::proto::common::v1;

constexpr double kLongestStepSeconds = 86400;

std::string string_of(const pbc::AnyValue& v) {
  if (v.has_string_value()) return v.string_value();
  if (v.has_int_value()) return std::to_string(v.int_value());
  return "";
}

void note_claims(const google::protobuf::RepeatedPtrField<pbc::KeyValue>& attrs, std::vector<std::string>& claims) {
  for (const auto& kv : attrs)
    if (kv.key() == "slurm.job.id" || kv.key() == "slurm_job_id" || kv.key() == "job_id") {
      std::string v = string_of(kv.value());
      if (!v.empty() && v != "unknown" && claims.size() < 8) claims.push_back(std::move(v));
    }
}

// "GPU3" -> 3 (NCCL Inspector's gpu attribute); -1 otherwise.
int gpu_ordinal(const google::protobuf::RepeatedPtrField<pbc::KeyValue>& attrs) {
  for (const auto& kv : attrs) {
    if (kv.key() != "gpu" || !kv.value().has_string_value()) continue;
    std::string_view s = kv.value().string_value();
    if (s.substr(0, 3) != "GPU") return -1;
    int n = -1;
    auto [end, ec] = std::from_chars(s.data() + 3, s.data() + s.size(), n);
    return ec == std::errc() && end == s.data() + s.size() && n >= 0 ? n : -1;
  }
  return -1;
}

bool kind_of(std::string_view name, PointKind& kind) {
  if (name == kStepDuration) kind = PointKind::StepDuration;
  else if (name == kStepComputeDuration) kind = PointKind::ComputeDuration;
  else if (name == kStepTokens) kind = PointKind::Tokens;
  else if (name == kNcclCollectiveTime) kind = PointKind::CollectiveTime;
  else return false;
  return true;
}

void add(ExtractedPoints& out, PointKind kind, double sum, uint64_t count, int ordinal) {
  if (kind == PointKind::CollectiveTime) sum /= 1e6;
  bool duration = kind != PointKind::Tokens;
  if (!std::isfinite(sum) || sum < 0 || count == 0 ||
      (duration && sum / static_cast<double>(count) > kLongestStepSeconds)) {
    ++out.bad_values;
    return;
  }
  out.points.push_back({kind, sum, count, ordinal});
}

template <typename Points>
void add_numbers(ExtractedPoints& out, PointKind kind, const Points& points) {
  for (const auto& p : points) {
    note_claims(p.attributes(), out.claimed_jobs);
    double v = p.has_as_int() ? static_cast<double>(p.as_int()) : p.as_double();
    add(out, kind, v, 1, gpu_ordinal(p.attributes()));
  }
}

}  // namespace

ExtractedPoints extract_points(const opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest& req) {
  ExtractedPoints out;
  for (const auto& rm : req.resource_metrics()) {
    note_claims(rm.resource().attributes(), out.claimed_jobs);
    for (const auto& sm : rm.scope_metrics()) {
      for (const auto& m : sm.metrics()) {
        PointKind kind = PointKind::StepDuration;
        bool ours = kind_of(m.name(), kind);
        if (m.has_gauge()) {
          if (ours) add_numbers(out, kind, m.gauge().data_points());
          else out.ignored += static_cast<uint64_t>(m.gauge().data_points_size());
        } else if (m.has_sum()) {
          // A cumulative sum (an SDK counter) is a running total, not a step's: only delta sums are steps.
          bool delta = m.sum().aggregation_temporality() == pbm::AGGREGATION_TEMPORALITY_DELTA;
          if (ours && delta) add_numbers(out, kind, m.sum().data_points());
          else out.ignored += static_cast<uint64_t>(m.sum().data_points_size());
        } else if (m.has_histogram()) {
          for (const auto& p : m.histogram().data_points()) {
            if (!ours || !p.has_sum()) {
              ++(ours ? out.bad_values : out.ignored);
              continue;
            }
            note_claims(p.attributes(), out.claimed_jobs);
            add(out, kind, p.sum(), p.count(), gpu_ordinal(p.attributes()));
          }
        } else if (m.has_exponential_histogram()) {
          out.ignored += static_cast<uint64_t>(m.exponential_histogram().data_points_size());
        } else if (m.has_summary()) {
          out.ignored += static_cast<uint64_t>(m.summary().data_points_size());
        }
      }
    }
  }
  return out;
}

}  // namespace gcm::jobsignal

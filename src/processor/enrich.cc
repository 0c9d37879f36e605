#include "processor/enrich.h"

#include <string>

#include <fmt/format.h>

namespace gcm::processor {

namespace {

namespace pbc = opentelemetry::proto::common::v1;
namespace pbm = opentelemetry::proto::metrics::v1;
using Attrs = google::protobuf::RepeatedPtrField<pbc::KeyValue>;

constexpr std::string_view kGpu = "gpu";
constexpr std::string_view kUUID = "UUID";
constexpr std::string_view kUuid = "uuid";

bool is_added_key(std::string_view key) {
  if (key == kUuid) return true;
  for (const char* k : kJobKeys)
    if (key == k) return true;
  for (const char* k : kPodKeys)
    if (key == k) return true;
  return false;
}

// The value of an existing key, else a new attribute: the processor puts (replaces) as the reference's Put* did.
pbc::AnyValue* put(Attrs* attrs, std::string_view key, bool may_exist) {
  if (may_exist)
    for (auto& kv : *attrs)
      if (kv.key() == key) return kv.mutable_value();
  pbc::KeyValue* kv = attrs->Add();
  kv->set_key(key.data(), key.size());
  return kv->mutable_value();
}

struct Scan {
  const pbc::KeyValue* gpu = nullptr;
  const pbc::KeyValue* uuid = nullptr;
  bool has_added_keys = false;  // a key we write is already there: replace instead of append
};

Scan scan(const Attrs& attrs) {
  Scan s;
  for (const auto& kv : attrs) {
    std::string_view k = kv.key();
    if (k == kGpu) {
      s.gpu = &kv;
    } else if (k == kUUID) {
      s.uuid = &kv;
    } else if (is_added_key(k)) {
      s.has_added_keys = true;
    }
  }
  return s;
}

// The GPU a `gpu` attribute (string or integer) names; nullopt for another type or spelling.
std::optional<int64_t> gpu_index(const pbc::KeyValue& gpu) {
  const pbc::AnyValue& v = gpu.value();
  if (v.value_case() == pbc::AnyValue::kStringValue) return gpu_index_of(v.string_value());
  if (v.value_case() == pbc::AnyValue::kIntValue) return v.int_value();
  return std::nullopt;
}

// What the enrichment of one request has added, counted before each addition is made, against its bound.
class Added {
 public:
  explicit Added(uint64_t max) : max_(max) {}
  void count(uint64_t bytes) {
    bytes_ += bytes;
    if (max_ && bytes_ > max_)
      throw EnrichedTooLarge(fmt::format("the job attributes would add more than {} bytes", max_));
  }

 private:
  uint64_t max_;
  uint64_t bytes_ = 0;
};

uint64_t keys_size() {
  uint64_t n = 0;
  for (const char* k : kJobKeys) n += std::char_traits<char>::length(k);
  return n;
}

void put_strings(Attrs* attrs, const JobFields& f, bool may_exist, Added& added) {
  static const uint64_t kKeys = keys_size();
  uint64_t bytes = kKeys + kJobKeys.size() * kObjectBytes;
  for (size_t k = 0; k < f.size(); ++k) bytes += f[k].size();
  added.count(bytes);
  for (size_t k = 0; k < kJobKeys.size(); ++k) put(attrs, kJobKeys[k], may_exist)->set_string_value(std::string(f[k]));
}

// The pod keys the kubelet named (an empty value is left out, as nvml_monitor leaves the label out).
void put_pod(Attrs* attrs, const PodValues& pod, bool may_exist, Added& added) {
  uint64_t bytes = 0;
  for (size_t k = 0; k < kPodKeys.size(); ++k)
    if (!pod[k].empty()) bytes += std::char_traits<char>::length(kPodKeys[k]) + pod[k].size() + kObjectBytes;
  added.count(bytes);
  for (size_t k = 0; k < kPodKeys.size(); ++k)
    if (!pod[k].empty()) put(attrs, kPodKeys[k], may_exist)->set_string_value(pod[k]);
}

// A GPU's job and pod; whether either was there.
bool put_gpu(Attrs* attrs, const pbc::KeyValue& gpu, const NodeJobs& jobs, bool may_exist, Added& added) {
  auto index = gpu_index(gpu);
  if (!index) return false;
  const JobFields* f = jobs.gpu(*index);
  const PodValues* pod = jobs.pod(*index);
  if (f) put_strings(attrs, *f, may_exist, added);
  if (pod) put_pod(attrs, *pod, may_exist, added);
  return f || pod;
}

using JobLists = std::array<std::vector<std::string_view>, 9>;  // NodeJobs::lists(), made once per resource

void put_lists(Attrs* attrs, const JobLists& lists, bool may_exist, Added& added) {
  static const uint64_t kKeys = keys_size();
  uint64_t bytes = kKeys + kJobKeys.size() * kObjectBytes;
  for (const auto& list : lists)
    for (const auto& v : list) bytes += v.size() + kObjectBytes;
  added.count(bytes);
  for (size_t k = 0; k < kJobKeys.size(); ++k) {
    pbc::ArrayValue* arr = put(attrs, kJobKeys[k], may_exist)->mutable_array_value();
    arr->clear_values();
    for (const auto& v : lists[k]) arr->add_values()->set_string_value(std::string(v));
  }
}

// A metric data point: strings for its GPU's job, lists without `gpu`, UUID copied to uuid.
void enrich_point(Attrs* attrs, const NodeJobs& jobs, const JobLists& lists, EnrichStats& st, Added& added) {
  ++st.items;
  Scan s = scan(*attrs);
  if (s.gpu) {
    if (put_gpu(attrs, *s.gpu, jobs, s.has_added_keys, added)) ++st.enriched;
  } else {
    put_lists(attrs, lists, s.has_added_keys, added);
    ++st.enriched;
  }
  // A repeated message field holds its elements by pointer: s.uuid stays valid while attributes are added.
  if (s.uuid) {
    added.count(kUuid.size() + s.uuid->value().ByteSizeLong() + kObjectBytes);
    put(attrs, kUuid, s.has_added_keys)->CopyFrom(s.uuid->value());
  }
}

// A log record or span: strings for its GPU's job, nothing otherwise.
void enrich_record(Attrs* attrs, const NodeJobs& jobs, EnrichStats& st, Added& added) {
  ++st.items;
  Scan s = scan(*attrs);
  if (!s.gpu) return;
  if (put_gpu(attrs, *s.gpu, jobs, s.has_added_keys, added)) ++st.enriched;
}

std::string_view host_of(const opentelemetry::proto::resource::v1::Resource& r) {
  for (const auto& kv : r.attributes())
    if (kv.key() == "host.name" && kv.value().value_case() == pbc::AnyValue::kStringValue)
      return kv.value().string_value();
  return {};
}

template <typename Points>
void enrich_points(Points* points, const NodeJobs& jobs, const JobLists& lists, EnrichStats& st, Added& added) {
  for (auto& p : *points) enrich_point(p.mutable_attributes(), jobs, lists, st, added);
}

template <typename Points>
uint64_t size_of(const Points& points) {
  return static_cast<uint64_t>(points.size());
}

uint64_t points_of(const pbm::Metric& m) {
  switch (m.data_case()) {
    case pbm::Metric::kGauge:
      return size_of(m.gauge().data_points());
    case pbm::Metric::kSum:
      return size_of(m.sum().data_points());
    case pbm::Metric::kHistogram:
      return size_of(m.histogram().data_points());
    case pbm::Metric::kExponentialHistogram:
      return size_of(m.exponential_histogram().data_points());
    case pbm::Metric::kSummary:
      return size_of(m.summary().data_points());
    default:
      return 0;
  }
}

void put_resource_job_ids(opentelemetry::proto::resource::v1::Resource* r, const NodeJobs& jobs, Added& added) {
  std::string job_ids = jobs.job_ids_joined();
  if (job_ids.empty()) return;
  added.count(job_ids.size() + kObjectBytes);
  put(r->mutable_attributes(), "job_id", true)->set_string_value(std::move(job_ids));
}

}  // namespace

EnrichStats enrich(opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest& req,
                   const HostLookup& lookup, uint64_t max_added) {
  EnrichStats st;
  Added added(max_added);
  for (auto& rm : *req.mutable_resource_metrics()) {
    auto jobs = lookup(host_of(rm.resource()));
    const JobLists lists = jobs ? jobs->lists() : JobLists();
    for (auto& sm : *rm.mutable_scope_metrics()) {
      for (auto& m : *sm.mutable_metrics()) {
        if (!jobs) {
          st.items += points_of(m);
          continue;
        }
        switch (m.data_case()) {
          case pbm::Metric::kGauge:
            enrich_points(m.mutable_gauge()->mutable_data_points(), *jobs, lists, st, added);
            break;
          case pbm::Metric::kSum:
            enrich_points(m.mutable_sum()->mutable_data_points(), *jobs, lists, st, added);
            break;
          case pbm::Metric::kHistogram:
            enrich_points(m.mutable_histogram()->mutable_data_points(), *jobs, lists, st, added);
            break;
          case pbm::Metric::kExponentialHistogram:
            enrich_points(m.mutable_exponential_histogram()->mutable_data_points(), *jobs, lists, st, added);
            break;
          case pbm::Metric::kSummary:
            enrich_points(m.mutable_summary()->mutable_data_points(), *jobs, lists, st, added);
            break;
          default:
            break;
        }
      }
    }
  }
  return st;
}

EnrichStats enrich(opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest& req, const HostLookup& lookup,
                   uint64_t max_added) {
  EnrichStats st;
  Added added(max_added);
  for (auto& rl : *req.mutable_resource_logs()) {
    auto jobs = lookup(host_of(rl.resource()));
    if (jobs) put_resource_job_ids(rl.mutable_resource(), *jobs, added);
    for (auto& sl : *rl.mutable_scope_logs()) {
      if (!jobs) {
        st.items += static_cast<uint64_t>(sl.log_records_size());
        continue;
      }
      for (auto& r : *sl.mutable_log_records()) enrich_record(r.mutable_attributes(), *jobs, st, added);
    }
  }
  return st;
}

EnrichStats enrich(opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest& req, const HostLookup& lookup,
                   uint64_t max_added) {
  EnrichStats st;
  Added added(max_added);
  for (auto& rs : *req.mutable_resource_spans()) {
    auto jobs = lookup(host_of(rs.resource()));
    if (jobs) put_resource_job_ids(rs.mutable_resource(), *jobs, added);
    for (auto& ss : *rs.mutable_scope_spans()) {
      if (!jobs) {
        st.items += static_cast<uint64_t>(ss.spans_size());
        continue;
      }
      for (auto& s : *ss.mutable_spans()) enrich_record(s.mutable_attributes(), *jobs, st, added);
    }
  }
  return st;
}

uint64_t count_items(const opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest& req) {
  uint64_t n = 0;
  for (const auto& rm : req.resource_metrics())
    for (const auto& sm : rm.scope_metrics())
      for (const auto& m : sm.metrics()) n += points_of(m);
  return n;
}

uint64_t count_items(const opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest& req) {
  uint64_t n = 0;
  for (const auto& rl : req.resource_logs())
    for (const auto& sl : rl.scope_logs()) n += static_cast<uint64_t>(sl.log_records_size());
  return n;
}

uint64_t count_items(const opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest& req) {
  uint64_t n = 0;
  for (const auto& rs : req.resource_spans())
    for (const auto& ss : rs.scope_spans()) n += static_cast<uint64_t>(ss.spans_size());
  return n;
}

}  // namespace gcm::processor

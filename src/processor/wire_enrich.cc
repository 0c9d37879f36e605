#include "processor/wire_enrich.h"

#include <array>
#include <bit>

#include "processor/wire_attribute_memo.h"
#include "processor/wire_attributes.h"
#include "processor/wire_job_puts.h"
#include "processor/wire_schema.h"
#include "processor/wire_writer.h"

namespace gcm::processor {

namespace {

// Named one by one: a using-directive here would reach the files compiled after this one in a unity batch.
using wire::any_value_case;
using wire::AnyValueCase;
using wire::Attr;
using wire::AttributeMemo;
using wire::check_message;
using wire::EncodedPuts;
using wire::Field;
using wire::ItemScan;
using wire::ItemWriter;
using wire::JobPuts;
using wire::kLen;
using wire::kMaxDepth;
using wire::kUuidKeyBit;
using wire::MessageRules;
using wire::Put;
using wire::read_field;
using wire::reject;
using wire::rules_of;
using wire::scan_item;
using wire::WireReject;
using wire::Writer;
namespace pbc = opentelemetry::proto::common::v1;
namespace pbr = opentelemetry::proto::resource::v1;
namespace pbm = opentelemetry::proto::metrics::v1;
namespace pbl = opentelemetry::proto::logs::v1;
namespace pbt = opentelemetry::proto::trace::v1;
namespace cm = opentelemetry::proto::collector::metrics::v1;
namespace cl = opentelemetry::proto::collector::logs::v1;
namespace ct = opentelemetry::proto::collector::trace::v1;

// Where a level's items are and how they are built: the walk is the same for the three signals down to the scopes.
struct ItemType {
  uint32_t attributes;        // the item's attributes field
  const MessageRules* rules;  // the item's message
  bool metric_point;          // points without `gpu` get the host's lists, UUID is copied to uuid
};

template <typename Point>
ItemType point_type() {
  return {Point::kAttributesFieldNumber, &rules_of<Point>(), true};
}

// The data oneof of Metric: its member's field number, the member's message and its points' type.
struct MetricData {
  uint32_t number;
  const MessageRules* rules;
  ItemType points;
};

const MetricData* metric_data(uint32_t number) {
  static const MetricData kData[] = {
      {pbm::Metric::kGaugeFieldNumber, &rules_of<pbm::Gauge>(), point_type<pbm::NumberDataPoint>()},
      {pbm::Metric::kSumFieldNumber, &rules_of<pbm::Sum>(), point_type<pbm::NumberDataPoint>()},
      {pbm::Metric::kHistogramFieldNumber, &rules_of<pbm::Histogram>(), point_type<pbm::HistogramDataPoint>()},
      {pbm::Metric::kExponentialHistogramFieldNumber, &rules_of<pbm::ExponentialHistogram>(),
       point_type<pbm::ExponentialHistogramDataPoint>()},
      {pbm::Metric::kSummaryFieldNumber, &rules_of<pbm::Summary>(), point_type<pbm::SummaryDataPoint>()},
  };
  for (const auto& d : kData)
    if (d.number == number) return &d;
  return nullptr;
}

// The data_points field is 1 in all five data messages.
static_assert(pbm::Gauge::kDataPointsFieldNumber == 1 && pbm::Sum::kDataPointsFieldNumber == 1 &&
              pbm::Histogram::kDataPointsFieldNumber == 1 && pbm::ExponentialHistogram::kDataPointsFieldNumber == 1 &&
              pbm::Summary::kDataPointsFieldNumber == 1);
constexpr uint32_t kDataPoints = 1;

// The three signals share the shape request > resource level > scope level > items; the field numbers agree too.
static_assert(cm::ExportMetricsServiceRequest::kResourceMetricsFieldNumber == 1 &&
              cl::ExportLogsServiceRequest::kResourceLogsFieldNumber == 1 &&
              ct::ExportTraceServiceRequest::kResourceSpansFieldNumber == 1);
static_assert(pbm::ResourceMetrics::kResourceFieldNumber == 1 && pbl::ResourceLogs::kResourceFieldNumber == 1 &&
              pbt::ResourceSpans::kResourceFieldNumber == 1);
static_assert(pbm::ResourceMetrics::kScopeMetricsFieldNumber == 2 && pbl::ResourceLogs::kScopeLogsFieldNumber == 2 &&
              pbt::ResourceSpans::kScopeSpansFieldNumber == 2);
static_assert(pbm::ScopeMetrics::kMetricsFieldNumber == 2 && pbl::ScopeLogs::kLogRecordsFieldNumber == 2 &&
              pbt::ScopeSpans::kSpansFieldNumber == 2);
constexpr uint32_t kResourceLevels = 1;
constexpr uint32_t kResource = 1;
constexpr uint32_t kScopeLevels = 2;
constexpr uint32_t kScopeItems = 2;
constexpr uint32_t kResourceAttributes = pbr::Resource::kAttributesFieldNumber;

// The message types of one signal's levels.
struct SignalType {
  const MessageRules* request;
  const MessageRules* resource_level;
  const MessageRules* scope_level;
  const MessageRules* scope_item;  // Metric, LogRecord, Span
  ItemType records;                // logs and traces: the scope's items are the enriched items
  bool resource_job_ids;           // logs and traces: the resource gets job_id
};

// How large a request comes out enriched, learnt from the requests of about the same size that this thread enriched
// before, so that the room made for the output at first is about what it needs. Growing costs a copy of what is
// written, and room made but never written is zero-filled all the same (std::string cannot grow without filling): a
// fixed 2.5 times the body, which some requests outgrew (a copy and a zero-fill of twice the size) while it was far
// more than others needed, was one of slurm_processor's largest costs (bench/README.md). The ratio depends on the
// exporter (how many attributes a point has), and one exporter sends requests of about one size while another sends
// another size, so the ratio is kept per size class (a quarter of an octave): one thread's requests from two kinds of
// exporter each get their own.
class OutputEstimate {
 public:
  size_t bytes_for(size_t body_size) const {
    return static_cast<size_t>(static_cast<double>(body_size) * ratio_[size_class(body_size)]) + 4096;
  }
  void saw(size_t body_size, size_t out_size) {
    largest_ = std::max(out_size + out_size / 8, largest_ - largest_ / 64);
    if (body_size == 0) return;
    ratio_[size_class(body_size)] = static_cast<double>(out_size) / static_cast<double>(body_size) * 1.03;
  }
  // The room for a new buffer: about the largest output of the requests before. Buffers go round the receiving
  // threads and the forwarder (a sent request's buffer serves the next request of any thread), so one made only as
  // large as its own request was too small for a larger exporter's next time, and with two kinds of exporter many
  // requests threw away the buffer they were given for a new one, zero-filled whole. A one-off large request is
  // forgotten after a few hundred others (1/64 less per request).
  size_t fresh_room() const { return largest_; }

 private:
  // Four classes per power of two: the bit length and the two bits below the top one.
  static size_t size_class(size_t n) {
    int bits = std::bit_width(n);
    size_t below = bits >= 3 ? (n >> (bits - 3)) & 3 : 0;
    return static_cast<size_t>(bits) * 4 + below;
  }
  std::array<double, 65 * 4> ratio_ = filled(2.5);  // before any: dcgm-exporter's points of five attributes gain ten
  size_t largest_ = 0;                              // an eighth over the largest output of late, decaying
  static std::array<double, 65 * 4> filled(double r) {
    std::array<double, 65 * 4> a;
    a.fill(r);
    return a;
  }
};

class Rewriter {
 public:
  Rewriter(const SignalType& type, const HostLookup& lookup, std::string& out, size_t expected_size, size_t limit,
           size_t fresh_room, AttributeMemo& memo)
      : type_(type), lookup_(lookup), w_(out, expected_size, limit, fresh_room), memo_(memo) {
    memo_.forget();
  }

  EnrichStats run(std::string_view body) {
    // Depth 0: the request.
    walk(
        body, 0,
        [&](const Field& f) {
          if (f.number != kResourceLevels || f.type != kLen) return false;
          resource_level(f.bytes, 1);
          return true;
        },
        *type_.request);
    w_.finish();
    return st_;
  }

 private:
  // Calls descend(f) for each field; a field it does not take is checked and copied.
  template <typename Descend>
  void walk(std::string_view content, int depth, Descend descend, const MessageRules& rules) {
    if (depth > kMaxDepth) reject("nesting too deep");
    const char* p = content.data();
    const char* end = p + content.size();
    Field f;
    while (p != end) {
      p = read_field(p, end, f);
      if (descend(f)) continue;
      check_field(rules[f.number], f, depth);
      w_.append({f.begin, static_cast<size_t>(f.end - f.begin)});
    }
  }

  // ResourceMetrics / ResourceLogs / ResourceSpans.
  void resource_level(std::string_view content, int depth) {
    std::string_view resource;
    bool has_resource = find_resource(content, resource);
    scan_item(resource, kResourceAttributes, rules_of<pbr::Resource>(), depth + 1, resource_scan_);
    jobs_ = lookup_(host_of(resource_scan_));
    if (jobs_) held_.push_back(jobs_);
    bool put_job_ids = type_.resource_job_ids && jobs_ && !jobs_->jobs.empty();
    w_.open(kResourceLevels);
    if (put_job_ids && !has_resource) {
      // mutable_resource() makes one: a resource holding only job_id, first as protobuf writes it.
      const EncodedPuts& e = job_puts_.job_ids(*jobs_, kResourceAttributes);
      w_.len_field(kResource, e.puts[0].field);
    }
    walk(
        content, depth,
        [&](const Field& f) {
          if (f.number == kResource && f.type == kLen) {
            if (put_job_ids) {
              const EncodedPuts& e = job_puts_.job_ids(*jobs_, kResourceAttributes);
              item_writer_.write(w_, kResource, f.bytes, kResourceAttributes, resource_scan_, e.puts.data(), e.count);
            } else {
              w_.append({f.begin, static_cast<size_t>(f.end - f.begin)});  // checked by scan_item
            }
            return true;
          }
          if (f.number != kScopeLevels || f.type != kLen) return false;
          scope_level(f.bytes, depth + 1);
          return true;
        },
        *type_.resource_level);
    w_.close();
  }

  // The resource field (protobuf merges two of them: refused); false without one.
  static bool find_resource(std::string_view content, std::string_view& resource) {
    const char* p = content.data();
    const char* end = p + content.size();
    bool found = false;
    Field f;
    while (p != end) {
      p = read_field(p, end, f);
      if (f.number != kResource || f.type != kLen) continue;
      if (found) reject("a resource twice");
      found = true;
      resource = f.bytes;
    }
    return found;
  }

  // As the message path's host_of: the first `host.name` holding a string; else empty (this host).
  static std::string_view host_of(const ItemScan& resource) {
    for (const Attr& a : resource.attrs) {
      if (a.key != "host.name") continue;
      if (a.value_twice) reject("host.name with its value twice");
      AnyValueCase c = any_value_case(a.value);
      if (c.member == pbc::AnyValue::kStringValueFieldNumber) return c.string;
    }
    return {};
  }

  // ScopeMetrics / ScopeLogs / ScopeSpans.
  void scope_level(std::string_view content, int depth) {
    w_.open(kScopeLevels);
    walk(
        content, depth,
        [&](const Field& f) {
          if (f.number != kScopeItems || f.type != kLen) return false;
          if (type_.resource_job_ids) {
            item(kScopeItems, f.bytes, depth + 1, type_.records);
          } else {
            metric(f.bytes, depth + 1);
          }
          return true;
        },
        *type_.scope_level);
    w_.close();
  }

  void metric(std::string_view content, int depth) {
    w_.open(kScopeItems);
    bool has_data = false;
    walk(
        content, depth,
        [&](const Field& f) {
          const MetricData* d = f.type == kLen ? metric_data(f.number) : nullptr;
          if (!d) return false;
          // A second member switches the oneof or merges into it: refused.
          if (has_data) reject("a metric's data twice");
          has_data = true;
          w_.open(d->number);
          walk(
              f.bytes, depth + 1,
              [&](const Field& p) {
                if (p.number != kDataPoints || p.type != kLen) return false;
                item(kDataPoints, p.bytes, depth + 2, d->points);
                return true;
              },
              *d->rules);
          w_.close();
          return true;
        },
        *type_.scope_item);
    w_.close();
  }

  // A data point, log record or span: field `field_no` of its parent.
  void item(uint32_t field_no, std::string_view content, int depth, const ItemType& type) {
    ++st_.items;
    if (!jobs_) {  // a host the sources cannot attribute: untouched
      check_message(*type.rules, content, depth);
      w_.len_field(field_no, content);
      return;
    }
    memo_.scan(content, type.attributes, *type.rules, depth, scan_);
    const EncodedPuts* job = nullptr;
    if (scan_.gpu) {
      job = gpu_puts(type);
      if (job) ++st_.enriched;
    } else if (type.metric_point) {
      job = &job_puts_.lists(*jobs_, type.attributes);
      ++st_.enriched;
    }
    const Attr* uuid = type.metric_point && scan_.uuid ? &*scan_.uuid : nullptr;
    if (uuid && uuid->value_twice) reject("UUID with its value twice");
    if (!job && !uuid) {
      w_.len_field(field_no, content);
    } else if (!(scan_.added_keys & ((job ? job->key_bits : 0) | (uuid ? kUuidKeyBit : 0)))) {
      // Nothing to replace, one insertion: nearly every item, our agent's too (their "uuid" is not put again
      // when they have no "UUID").
      ItemWriter::write_appended(w_, field_no, content, type.attributes, scan_, job ? job->bytes : std::string_view(),
                                 uuid ? "uuid" : "", uuid ? uuid->value : std::string_view());
    } else {
      size_t n = 0;
      for (size_t i = 0; job && i < job->count; ++i) puts_[n++] = job->puts[i];
      // CopyFrom the UUID's value (of a KeyValue without one: an empty value).
      if (uuid) puts_[n++] = {"uuid", uuid->value, {}, Put::Mode::Copy};
      memo_.complete(scan_);
      item_writer_.write(w_, field_no, content, type.attributes, scan_, puts_.data(), n);
    }
  }

  // The attributes to put for the item's `gpu`, null when that GPU has no job or pod. Kept per attribute list: the
  // points of one GPU repeat its list (AttributeMemo), so the value is read, its GPU found and its puts encoded once
  // per list rather than once per point.
  const EncodedPuts* gpu_puts(const ItemType& type) {
    GpuPuts* kept = scan_.list_id ? &gpu_puts_[scan_.list_id % gpu_puts_.size()] : nullptr;
    if (kept && kept->list_id == scan_.list_id && kept->jobs == jobs_.get() && kept->type == &type) return kept->puts;
    const EncodedPuts* puts = nullptr;
    if (auto index = gpu_index(*scan_.gpu)) {
      const JobFields* f = jobs_->gpu(*index);
      const PodValues* pod = jobs_->pod(*index);
      if (f || pod) puts = &job_puts_.strings(f, pod, type.attributes);
    }
    if (kept) *kept = {scan_.list_id, jobs_.get(), &type, puts};
    return puts;
  }

  // The GPU a `gpu` attribute names (a string, or an integer); nullopt for another type or spelling.
  static std::optional<int64_t> gpu_index(const Attr& gpu) {
    if (gpu.value_twice) reject("gpu with its value twice");
    AnyValueCase c = any_value_case(gpu.value);
    if (c.member == pbc::AnyValue::kStringValueFieldNumber) return gpu_index_of(c.string);
    if (c.member == pbc::AnyValue::kIntValueFieldNumber) return c.integer;
    return std::nullopt;
  }

  const SignalType& type_;
  const HostLookup& lookup_;
  Writer w_;
  EnrichStats st_;
  std::shared_ptr<const NodeJobs> jobs_;               // the current resource's
  std::vector<std::shared_ptr<const NodeJobs>> held_;  // job_puts_ is keyed by their addresses: keep them alive
  JobPuts job_puts_;
  ItemScan resource_scan_;
  ItemScan scan_;
  AttributeMemo& memo_;  // the items' attribute lists read so far in this request
  struct GpuPuts {
    uint64_t list_id = 0;            // ItemScan::list_id (0: empty slot)
    const NodeJobs* jobs = nullptr;  // the resource's table it was found in (one of held_)
    const ItemType* type = nullptr;
    const EncodedPuts* puts = nullptr;  // gpu_puts()'s answer
  };
  std::array<GpuPuts, 16> gpu_puts_{};  // by list_id: the memo's lists are numbered in order, 16 at most are alive
  ItemWriter item_writer_;
  std::array<Put, ItemWriter::kMaxPuts> puts_;
};

WireOutcome rewrite(const SignalType& type, std::string_view body, const HostLookup& lookup, std::string& out,
                    size_t max_output, OutputEstimate& estimate) {
  WireOutcome o;
  // `out` is not cleared: the writer writes over what a recycled buffer holds, which spares a zero-fill of it.
  try {
    // The thread's memo, so that its lists keep their room from one request to the next (a memo per request
    // would allocate its sixteen lists again each time).
    thread_local AttributeMemo memo;
    Rewriter r(type, lookup, out, estimate.bytes_for(body.size()), max_output, estimate.fresh_room(), memo);
    o.stats = r.run(body);
    o.ok = true;
    estimate.saw(body.size(), out.size());
    // The buffer keeps its capacity: the forwarder copies the request into its batch, and the receiver hands the
    // buffer back for the next request (process_request's `recycled`).
  } catch (const WireReject& e) {
    o.why = e.why;
  }
  return o;
}

}  // namespace

WireOutcome wire_enrich_metrics(std::string_view body, const HostLookup& lookup, std::string& out, size_t max_output) {
  static const SignalType t{&rules_of<cm::ExportMetricsServiceRequest>(),
                            &rules_of<pbm::ResourceMetrics>(),
                            &rules_of<pbm::ScopeMetrics>(),
                            &rules_of<pbm::Metric>(),
                            {},
                            false};
  thread_local OutputEstimate estimate;
  return rewrite(t, body, lookup, out, max_output, estimate);
}

WireOutcome wire_enrich_logs(std::string_view body, const HostLookup& lookup, std::string& out, size_t max_output) {
  static const SignalType t{&rules_of<cl::ExportLogsServiceRequest>(),
                            &rules_of<pbl::ResourceLogs>(),
                            &rules_of<pbl::ScopeLogs>(),
                            &rules_of<pbl::LogRecord>(),
                            {pbl::LogRecord::kAttributesFieldNumber, &rules_of<pbl::LogRecord>(), false},
                            true};
  thread_local OutputEstimate estimate;
  return rewrite(t, body, lookup, out, max_output, estimate);
}

WireOutcome wire_enrich_traces(std::string_view body, const HostLookup& lookup, std::string& out, size_t max_output) {
  static const SignalType t{&rules_of<ct::ExportTraceServiceRequest>(),
                            &rules_of<pbt::ResourceSpans>(),
                            &rules_of<pbt::ScopeSpans>(),
                            &rules_of<pbt::Span>(),
                            {pbt::Span::kAttributesFieldNumber, &rules_of<pbt::Span>(), false},
                            true};
  thread_local OutputEstimate estimate;
  return rewrite(t, body, lookup, out, max_output, estimate);
}

namespace {

// Calls f(content) for each length-delimited field `number` of `content`; the other fields are stepped over.
template <typename F>
void each_len_field(std::string_view content, uint32_t number, F f) {
  const char* p = content.data();
  const char* end = p + content.size();
  Field field;
  while (p != end) {
    p = read_field(p, end, field);
    if (field.number == number && field.type == kLen) f(field.bytes);
  }
}

struct TwoDataFields {};

template <typename Count>
std::optional<uint64_t> count_items(std::string_view body, Count count_scope_items) {
  uint64_t n = 0;
  try {
    each_len_field(body, kResourceLevels, [&](std::string_view resource_level) {
      each_len_field(resource_level, kScopeLevels, [&](std::string_view scope_level) {
        each_len_field(scope_level, kScopeItems, [&](std::string_view item) { n += count_scope_items(item); });
      });
    });
  } catch (const WireReject&) {
    return std::nullopt;
  } catch (const TwoDataFields&) {
    return std::nullopt;
  }
  return n;
}

}  // namespace

std::optional<uint64_t> wire_count_metric_points(std::string_view body) {
  return count_items(body, [](std::string_view metric) {
    uint64_t points = 0;
    bool has_data = false;
    const char* p = metric.data();
    const char* end = p + metric.size();
    Field f;
    while (p != end) {
      p = read_field(p, end, f);
      if (f.type != kLen || !metric_data(f.number)) continue;
      if (has_data) throw TwoDataFields{};
      has_data = true;
      each_len_field(f.bytes, kDataPoints, [&](std::string_view) { ++points; });
    }
    return points;
  });
}

std::optional<uint64_t> wire_count_records(std::string_view body) {
  return count_items(body, [](std::string_view) { return uint64_t{1}; });
}

}  // namespace gcm::processor

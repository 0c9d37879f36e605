// The enrichment of the reference's slurmprocessor (§4.2), applied to decoded OTLP requests in place:
//   metrics  every data point (gauge, sum, histogram, exponential histogram, summary) with a `gpu` attribute whose
//            GPU has a job gets the nine job keys as strings; a point without `gpu` gets them as lists of the
//            host's values (empty lists when it runs no job); `UUID` is copied to `uuid`.
//   logs     the resource gets `job_id` (the host's job ids, comma-joined) when there are any; log records with a
//   traces   `gpu` attribute whose GPU has a job get the nine job keys as strings (spans likewise).
// The `gpu` attribute may be a string (DCGM exporter) or an integer (our exporter); the reference read only strings.
// The host is the resource's `host.name` when present, else this host (empty name); a lookup that answers null
// (a host the sources cannot attribute) leaves that resource's items untouched.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "logs_service.pb.h"
#include "metrics_service.pb.h"
#include "processor/node_jobs.h"
#include "trace_service.pb.h"

namespace gcm::processor {

using HostLookup = std::function<std::shared_ptr<const NodeJobs>(std::string_view host)>;

struct EnrichStats {
  uint64_t items = 0;     // data points, log records or spans seen
  uint64_t enriched = 0;  // of those, the ones given job attributes
};

// Enriching a request may not take it past a size: every item gains up to nine attributes (and a point without
// `gpu` the host's lists), so a request of millions of tiny items grows by hundreds of times (a 15 MB body of empty
// data points came to 2.4 GB rewritten as bytes, and to 21 GB of messages). Both paths throw this when the request
// would grow past its bound; the receiver answers 413.
struct EnrichedTooLarge : std::length_error {
  using std::length_error::length_error;
};

// max_added: the bytes the enrichment may add, each attribute counted as its encoded size plus kObjectBytes for the
// KeyValue and AnyValue objects that hold it as a message (0: no bound). Throws EnrichedTooLarge past it.
inline constexpr uint64_t kObjectBytes = 128;
EnrichStats enrich(opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest& req,
                   const HostLookup& lookup, uint64_t max_added = 0);
EnrichStats enrich(opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest& req, const HostLookup& lookup,
                   uint64_t max_added = 0);
EnrichStats enrich(opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest& req, const HostLookup& lookup,
                   uint64_t max_added = 0);

// Items (data points, log records, spans) in a request, without changing it.
uint64_t count_items(const opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest& req);
uint64_t count_items(const opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest& req);
uint64_t count_items(const opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest& req);

}  // namespace gcm::processor

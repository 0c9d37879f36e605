#include "processor/service.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "otlp/proto/lazy_registration.h"
#include "processor/wire_enrich.h"

namespace gcm::processor {

Service::Service(ServiceOptions opts, std::shared_ptr<spdlog::logger> log)
    : opts_(std::move(opts)), log_(std::move(log)) {
  resolver_ = std::make_unique<JobResolver>(opts_.resolver, log_);
  forwarder_ = std::make_unique<otlp::Delivery>(opts_.forward, log_);
  server_ = std::make_unique<HttpListener>(opts_.listen, [this](const HttpRequest& r) { return handle(r); });
  if (opts_.grpc) {
    opts_.grpc->max_message = opts_.listen.max_body;
    grpc_ = std::make_unique<GrpcReceiver>(
        *opts_.grpc, [this](std::string_view method, std::string_view body, std::string_view encoding) {
          return handle_grpc(method, body, encoding);
        });
    grpc_->on_unauthenticated([this] {
      grpc_errors_[static_cast<size_t>(GrpcCode::Unauthenticated)].fetch_add(1, std::memory_order_relaxed);
    });
  }
}

Service::~Service() { stop(); }

namespace {

constexpr const char* kNoRoom = "slurm_processor: the forwarding queue and spool are full";

// The enriched request's buffer of this receiving thread, handed from one request to the next (process_request's
// `recycled`): the forwarder keeps a request it takes and gives back the buffer of one it has sent.
std::string& forward_buffer() {
  thread_local std::string kept;
  return kept;
}

// Keeps the request's buffer for the next request when it has been answered, whatever the answer (a forwarded
// request's buffer is by then the one the forwarder gave back for it).
struct ReturnForwardBuffer {
  RequestResult& r;
  ~ReturnForwardBuffer() { recycle_forward_buffer(forward_buffer(), std::move(r.forward)); }
};

}  // namespace

void Service::start() {
  otlp::register_proto_descriptors();  // before the receiving and sending threads share protobuf
  resolver_->start();
  forwarder_->start();
  server_->start();
  if (grpc_) grpc_->start();
}

// Receiver first (no new requests), then the forwarder drains or spools what it holds.
void Service::stop() {
  if (grpc_) grpc_->stop();
  server_->stop();
  forwarder_->stop();
  resolver_->stop();
}

HttpReply Service::export_request(Signal signal, const HttpRequest& req) {
  counters_[static_cast<size_t>(signal)].requests[kHttp].fetch_add(1, std::memory_order_relaxed);
  RequestResult r;
  if (req.too_large) {
    r.status = 413;
    r.json = req.header("content-type").find("json") != std::string::npos;
    r.message = fmt::format("the body exceeds the limit of {} bytes", opts_.listen.max_body);
  } else if (refused_before_enrichment(signal, req.header("content-type"), req.header("content-encoding"), req.body)) {
    return {503, "application/x-protobuf", error_body(false, 503, kNoRoom), "Retry-After: 5\r\n"};
  } else {
    r = process_request(
        signal, req.header("content-type"), req.header("content-encoding"), req.body, opts_.listen.max_body,
        [this](std::string_view host) { return resolver_->lookup(host); }, Decoder::Wire, std::move(forward_buffer()),
        opts_.forward.queue_bytes);
    count_path(signal, r);
  }
  ReturnForwardBuffer returned{r};
  const char* ct = r.json ? "application/json" : "application/x-protobuf";
  if (r.status != 200) {
    (r.status == 413 ? bad_413_ : r.status == 415 ? bad_415_ : bad_400_).fetch_add(1, std::memory_order_relaxed);
    if (log_) log_->warn("slurm_processor: POST /{} answered {}: {}", signal_path(signal), r.status, r.message);
    return {r.status, ct, error_body(r.json, r.status, r.message), ""};
  }
  // No room: 503 with Retry-After, which OTLP/HTTP clients retry with backoff, so nothing is lost while the
  // downstream catches up (a 200 with a partial success would tell the client to drop the data).
  if (!forward(signal, r)) return {503, ct, error_body(r.json, 503, kNoRoom), "Retry-After: 5\r\n"};
  return {200, ct, success_body(signal, r.json, 0, ""), ""};
}

bool Service::refused_before_enrichment(Signal signal, std::string_view content_type,
                                        std::string_view content_encoding, std::string_view body) {
  // The body's size is the least its enriched form takes (enrichment only adds), so a body with no room now would be
  // refused after its rewriting all the same: under overload the rewriting of refused requests took the CPU of those
  // that could be taken. JSON and compressed bodies, rarer, take the usual path.
  // A body larger than the whole queue takes the usual path too: its answer is 413 (never retried), not 503.
  if (!plain_protobuf(content_type, content_encoding) || body.size() > opts_.forward.queue_bytes ||
      forwarder_->has_room(body.size()))
    return false;
  std::optional<uint64_t> items =
      signal == Signal::Metrics ? wire_count_metric_points(body) : wire_count_records(body);
  if (!items || *items == 0) return false;
  auto& c = counters_[static_cast<size_t>(signal)];
  c.items.fetch_add(*items, std::memory_order_relaxed);
  c.refused.fetch_add(*items, std::memory_order_relaxed);
  forwarder_->refused(signal, *items);
  return true;
}

void Service::count_path(Signal signal, const RequestResult& r) {
  if (r.message_path) counters_[static_cast<size_t>(signal)].message_path.fetch_add(1, std::memory_order_relaxed);
}

bool Service::forward(Signal signal, RequestResult& r) {
  auto& c = counters_[static_cast<size_t>(signal)];
  c.items.fetch_add(r.items, std::memory_order_relaxed);
  c.enriched.fetch_add(r.enriched, std::memory_order_relaxed);
  if (r.items == 0) return true;
  uint64_t items = r.items;
  if (forwarder_->take(signal, r.forward, items)) return true;
  c.refused.fetch_add(items, std::memory_order_relaxed);
  return false;
}

namespace {
// The OTLP/gRPC service methods (opentelemetry/proto/collector/*/v1/*_service.proto).
std::optional<Signal> signal_of_method(std::string_view method) {
  if (method == "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export") return Signal::Metrics;
  if (method == "/opentelemetry.proto.collector.logs.v1.LogsService/Export") return Signal::Logs;
  if (method == "/opentelemetry.proto.collector.trace.v1.TraceService/Export") return Signal::Traces;
  return std::nullopt;
}
}  // namespace

GrpcReply Service::grpc_error(GrpcCode code, Signal signal, std::string message) {
  grpc_errors_[static_cast<size_t>(code)].fetch_add(1, std::memory_order_relaxed);
  // A refusal is logged by the forwarder already.
  if (log_ && code != GrpcCode::Unavailable)
    log_->warn("slurm_processor: gRPC {} export answered {}: {}", signal_name(signal), grpc_code_name(code), message);
  return {code, std::move(message), ""};
}

// The OTLP/gRPC answers: OK with an ExportXServiceResponse; INVALID_ARGUMENT for what cannot be decoded,
// RESOURCE_EXHAUSTED over the size limit (not retryable); UNAVAILABLE when the forwarder has no room, which OTLP
// clients retry with backoff (OTLP/HTTP answers that case with 503 and Retry-After: see export_request).
GrpcReply Service::handle_grpc(std::string_view method, std::string_view body, std::string_view encoding) {
  auto signal = signal_of_method(method);
  if (!signal) {
    grpc_errors_[static_cast<size_t>(GrpcCode::Unimplemented)].fetch_add(1, std::memory_order_relaxed);
    return {GrpcCode::Unimplemented,
            fmt::format("unknown method {} (slurm_processor serves the OTLP Export methods of MetricsService, "
                        "LogsService and TraceService)",
                        method),
            ""};
  }
  counters_[static_cast<size_t>(*signal)].requests[kGrpc].fetch_add(1, std::memory_order_relaxed);
  if (refused_before_enrichment(*signal, "application/x-protobuf", encoding, body))
    return grpc_error(GrpcCode::Unavailable, *signal, kNoRoom);
  // gRPC has enforced the size limit as received; process_request inflates compressed messages within it.
  RequestResult r = process_request(
      *signal, "application/x-protobuf", encoding, body, opts_.listen.max_body,
      [this](std::string_view host) { return resolver_->lookup(host); }, Decoder::Wire, std::move(forward_buffer()),
      opts_.forward.queue_bytes);
  ReturnForwardBuffer returned{r};
  count_path(*signal, r);
  if (r.status != 200)
    return grpc_error(r.status == 413   ? GrpcCode::ResourceExhausted
                      : r.status == 400 ? GrpcCode::InvalidArgument
                                        : GrpcCode::Internal,
                      *signal, std::move(r.message));
  if (!forward(*signal, r)) return grpc_error(GrpcCode::Unavailable, *signal, kNoRoom);
  return {GrpcCode::Ok, "", success_body(*signal, false, 0, "")};
}

HttpReply Service::handle(const HttpRequest& req) {
  if (req.path == "/v1/metrics" || req.path == "/v1/logs" || req.path == "/v1/traces") {
    if (req.method != "POST")
      return {405, "text/plain; charset=utf-8", "OTLP export requests are POSTed\n", "Allow: POST\r\n"};
    Signal s = req.path == "/v1/metrics" ? Signal::Metrics : req.path == "/v1/logs" ? Signal::Logs : Signal::Traces;
    return export_request(s, req);
  }
  if (req.method != "GET" && req.method != "HEAD") {
    not_found_.fetch_add(1, std::memory_order_relaxed);
    return {404, "text/plain; charset=utf-8", "not found\n", ""};
  }
  if (req.path == "/health") {
    auto f = forwarder_->stats();
    nlohmann::json j = {{"status", "ok"},
                        {"downstream", otlp::to_string(f.downstream)},
                        {"queued_items", f.queued_items},
                        {"spooled_items", f.spool.points}};
    return {200, "application/json", j.dump() + "\n", ""};
  }
  if (req.path == "/metrics") return {200, "text/plain; version=0.0.4; charset=utf-8", metrics_text(), ""};
  not_found_.fetch_add(1, std::memory_order_relaxed);
  return {404, "text/plain; charset=utf-8",
          "not found (POST /v1/metrics, /v1/logs, /v1/traces; GET /health, /metrics)\n", ""};
}

std::string Service::metrics_text() const {
  std::string out;
  auto family = [&](const char* name, const char* type, const char* help) {
    out += fmt::format("# HELP gcm_slurm_processor_{} {}\n# TYPE gcm_slurm_processor_{} {}\n", name, help, name, type);
  };
  auto per_signal = [&](const char* name, const char* help, auto get) {
    family(name, "counter", help);
    for (Signal s : {Signal::Metrics, Signal::Logs, Signal::Traces})
      out += fmt::format("gcm_slurm_processor_{}{{signal=\"{}\"}} {}\n", name, signal_name(s),
                         get(counters_[static_cast<size_t>(s)]));
  };
  auto one = [&](const char* name, const char* type, const char* help, auto value) {
    family(name, type, help);
    out += fmt::format("gcm_slurm_processor_{} {}\n", name, value);
  };
  family("requests_total", "counter", "Export requests received, by transport.");
  for (Signal s : {Signal::Metrics, Signal::Logs, Signal::Traces})
    for (auto [t, name] : {std::pair{kHttp, "http"}, std::pair{kGrpc, "grpc"}})
      out += fmt::format("gcm_slurm_processor_requests_total{{signal=\"{}\",transport=\"{}\"}} {}\n", signal_name(s),
                         name, counters_[static_cast<size_t>(s)].requests[t].load());
  per_signal("received_total", "Items (data points, log records, spans) received in decodable requests.",
             [](const SignalCounters& c) { return c.items.load(); });
  per_signal("enriched_total", "Items given Slurm job attributes.",
             [](const SignalCounters& c) { return c.enriched.load(); });
  per_signal(
      "refused_total",
      "Items refused because the queue and spool were full (answered HTTP 503 or gRPC UNAVAILABLE, which clients "
      "retry).",
      [](const SignalCounters& c) { return c.refused.load(); });
  per_signal("message_path_requests_total",
             "Protobuf requests the wire rewriter did not take, decoded and enriched as messages instead (slower; "
             "the malformed ones, answered 400 from there, among them).",
             [](const SignalCounters& c) { return c.message_path.load(); });
  family("bad_requests_total", "counter",
         "Requests answered with an error status: HTTP status codes; gRPC status names (a message over the size "
         "limit as received is refused by gRPC before the service sees it and is not counted).");
  for (auto [code, n] : {std::pair{"400", &bad_400_}, std::pair{"413", &bad_413_}, std::pair{"415", &bad_415_},
                         std::pair{"404", &not_found_}})
    out +=
        fmt::format("gcm_slurm_processor_bad_requests_total{{transport=\"http\",code=\"{}\"}} {}\n", code, n->load());
  for (GrpcCode code : {GrpcCode::InvalidArgument, GrpcCode::ResourceExhausted, GrpcCode::Unimplemented,
                        GrpcCode::Unavailable, GrpcCode::Internal, GrpcCode::Unauthenticated})
    out += fmt::format("gcm_slurm_processor_bad_requests_total{{transport=\"grpc\",code=\"{}\"}} {}\n",
                       grpc_code_name(code), grpc_errors_[static_cast<size_t>(code)].load());
  auto h = server_->stats();
  one("http_connections", "gauge", "OTLP/HTTP connections open.", h.open);
  one("http_connections_accepted_total", "counter", "OTLP/HTTP connections accepted.", h.accepted);
  family("http_connections_closed_total", "counter",
         "OTLP/HTTP connections the receiver closed: evicted to make room at --max-connections, refused at the "
         "limit, cut at a deadline (--header-timeout, --request-timeout, or an answer not read), or malformed.");
  for (auto [why, n] : {std::pair{"evicted", h.evicted}, std::pair{"refused", h.refused},
                        std::pair{"timeout", h.timed_out}, std::pair{"bad_request", h.bad_requests}})
    out += fmt::format("gcm_slurm_processor_http_connections_closed_total{{reason=\"{}\"}} {}\n", why, n);
  one("http_tls_handshake_failures_total", "counter",
      "OTLP/HTTP connections whose TLS handshake failed (not TLS, no or an untrusted client certificate).",
      h.tls_failed);
  one("http_unauthorized_total", "counter", "OTLP/HTTP requests answered 401 (missing or wrong credentials).",
      h.unauthorized);
  one("http_in_flight_bytes", "gauge", "Bytes of request bodies being received or processed.", h.in_flight_bytes);
  one("http_over_budget_total", "counter",
      "Requests answered 503 because the bodies in flight reached --max-in-flight-size.", h.over_budget);
  auto f = forwarder_->stats();
  one("forwarded_total", "counter", "Items the downstream accepted.", f.delivered);
  one("forward_requests_total", "counter", "Requests the downstream accepted.", f.requests);
  one("retried_total", "counter", "Downstream attempts that failed and were retried.", f.retried);
  one("spooled_total", "counter", "Items written to the disk spool.", f.spooled);
  one("unspooled_total", "counter", "Items sent from the disk spool.", f.unspooled);
  one("dropped_total", "counter",
      "Items lost (rejected by the downstream, spool unwritable or full, no room at shutdown).", f.lost());
  one("downstream_rejected_total", "counter", "Items the downstream reported as rejected (partial success).",
      f.rejected_partial);
  one("queue_items", "gauge", "Items waiting in memory.", f.queued_items);
  one("queue_bytes", "gauge", "Bytes waiting in memory.", f.queue_bytes);
  one("spool_items", "gauge", "Items waiting in the spool.", f.spool.points);
  one("spool_bytes", "gauge", "Bytes of the spool's files on disk.", f.spool.bytes);
  one("spool_corrupt_total", "counter",
      "Spool entries found torn or corrupt (cut off when the spool was opened, or skipped when read back).",
      f.spool.corrupt_tails + f.spool.corrupt_entries);
  // No sample before the first attempt: "unknown" is neither up (1) nor down (0), and an alert on == 0 must not
  // fire for a processor nobody has sent to yet.
  family("downstream_up", "gauge",
         "1 when the last downstream attempt got a final answer, 0 when it failed; no sample before the first "
         "attempt.");
  if (f.downstream != otlp::DownstreamState::Unknown)
    out += fmt::format("gcm_slurm_processor_downstream_up {}\n", f.downstream == otlp::DownstreamState::Up ? 1 : 0);
  auto r = resolver_->stats();
  one("attribution_cache_hits_total", "counter", "Job lookups answered from memory.", r.hits);
  one("attribution_cache_misses_total", "counter", "Job lookups that asked the sources.", r.misses);
  one("attribution_refreshes_total", "counter",
      "Background refreshes of this host's jobs or of the cluster's job table (other hosts).", r.refreshes);
  one("attribution_errors_total", "counter", "Attribution source failures.", r.errors);
  one("attribution_hosts", "gauge", "Hosts whose jobs are kept in memory.", r.hosts);
  one("attribution_cluster_jobs", "gauge", "Jobs holding an allocation in the cluster's job table (other hosts).",
      r.cluster_jobs);
  one("attribution_cluster_nodes", "gauge", "Nodes with a GPU in one of those jobs.", r.cluster_nodes);
  return out;
}

}  // namespace gcm::processor

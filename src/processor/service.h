// slurm_processor as a whole: the OTLP/HTTP receiver, the optional OTLP/gRPC receiver, the enrichment with the
// resolver's job tables, the forwarding (otlp/delivery.h), and the service's own endpoints (GET /health, GET /metrics in the Prometheus
// text format) on the HTTP port.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <optional>

#include <spdlog/logger.h>

#include "processor/grpc_receiver.h"
#include "core/http_listener.h"
#include "otlp/delivery.h"
#include "processor/job_resolver.h"
#include "processor/otlp_request.h"

namespace gcm::processor {

struct ServiceOptions {
  HttpListenerOptions listen;
  std::optional<GrpcReceiverOptions> grpc;  // absent: no gRPC receiver (its max_message follows listen.max_body)
  ResolverOptions resolver;
  std::string downstream;        // the base URL, for messages (forward.transport has every signal's URL)
  otlp::DeliveryOptions forward;  // OnOutage: memory first, the spool during an outage
};

class Service {
 public:
  Service(ServiceOptions opts, std::shared_ptr<spdlog::logger> log);
  ~Service();
  void start();
  void stop();
  int port() const { return server_->port(); }
  int grpc_port() const { return grpc_ ? grpc_->port() : 0; }
  HttpReply handle(const HttpRequest& req);
  // One gRPC call: the three OTLP Export methods, anything else UNIMPLEMENTED.
  GrpcReply handle_grpc(std::string_view method, std::string_view body, std::string_view encoding);
  std::string metrics_text() const;

 private:
  enum Transport { kHttp, kGrpc };
  struct SignalCounters {
    std::array<std::atomic<uint64_t>, 2> requests{};  // per transport
    std::atomic<uint64_t> items{0}, enriched{0}, refused{0}, message_path{0};
  };
  HttpReply export_request(Signal signal, const HttpRequest& req);
  // Counts a decoded request's items and hands them to the forwarder; false when it has no room (counted refused).
  bool forward(Signal signal, RequestResult& r);
  // Counts a protobuf request that went through decoded messages (whatever its answer).
  void count_path(Signal signal, const RequestResult& r);
  // A plain protobuf request whose body alone would find no room in the forwarder is refused before it is enriched,
  // its items counted from its framing as a refused request's are (received and refused). Returns whether it was;
  // a request whose framing is broken, or without items, takes the usual path.
  bool refused_before_enrichment(Signal signal, std::string_view content_type, std::string_view content_encoding,
                                 std::string_view body);
  GrpcReply grpc_error(GrpcCode code, Signal signal, std::string message);

  ServiceOptions opts_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<JobResolver> resolver_;
  std::unique_ptr<otlp::Delivery> forwarder_;
  std::unique_ptr<HttpListener> server_;
  std::unique_ptr<GrpcReceiver> grpc_;
  std::array<SignalCounters, 3> counters_;
  std::atomic<uint64_t> bad_400_{0}, bad_413_{0}, bad_415_{0}, not_found_{0};
  // gRPC calls answered with an error status, by code (GrpcCode values are below 17).
  std::array<std::atomic<uint64_t>, 17> grpc_errors_{};
};

}  // namespace gcm::processor

// slurm_processor as a whole: the OTLP/HTTP receiver, the enrichment with the resolver's job tables, the forwarder,
// and the service's own endpoints (GET /health, GET /metrics in the Prometheus text format) on the same port.
#pragma once

#include <array>
#include <atomic>
#include <memory>

#include <spdlog/logger.h>

#include "processor/forwarder.h"
#include "processor/http_server.h"
#include "processor/job_resolver.h"

namespace gcm::processor {

struct ServiceOptions {
  HttpServerOptions listen;
  ResolverOptions resolver;
  ForwarderOptions forward;
};

class Service {
 public:
  Service(ServiceOptions opts, std::shared_ptr<spdlog::logger> log);
  ~Service();
  void start();
  void stop();
  int port() const { return server_->port(); }
  HttpReply handle(const HttpRequest& req);
  std::string metrics_text() const;

 private:
  struct SignalCounters {
    std::atomic<uint64_t> requests{0}, items{0}, enriched{0}, refused{0};
  };
  HttpReply export_request(Signal signal, const HttpRequest& req);

  ServiceOptions opts_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<JobResolver> resolver_;
  std::unique_ptr<Forwarder> forwarder_;
  std::unique_ptr<HttpServer> server_;
  std::array<SignalCounters, 3> counters_;
  std::atomic<uint64_t> bad_400_{0}, bad_413_{0}, bad_415_{0}, not_found_{0};
};

}  // namespace gcm::processor

#include "agent/metrics_endpoint.h"

#include <stdexcept>

#include <spdlog/spdlog.h>

#include "core/web_config.h"

namespace gcm::agent {

HttpReply metrics_endpoint_reply(const HttpRequest& req, const WindowExport& page) {
  HttpReply rep;
  if (req.path == "/metrics") {
    rep.content_type = "text/plain; version=0.0.4; charset=utf-8";
    rep.body = page.page();
  } else if (req.path == "/health" || req.path == "/-/healthy") {
    rep.body = "OK\n";
  } else {
    rep.status = 404;
    rep.body = "not found: try /metrics\n";
  }
  return rep;
}

std::unique_ptr<HttpListener> start_metrics_endpoint(const AgentOptions& opts, const WindowExport& page,
                                                     spdlog::logger& log) {
  if (opts.listen.empty()) return nullptr;
  HttpListenerOptions lo;
  try {
    std::tie(lo.host, lo.port) = parse_listen_address(opts.listen, "--listen");
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
  lo.workers = 0;  // every answer is a copy of the cached page: nothing to hand to a worker
  if (!opts.web_config_file.empty()) apply_web_config(lo, load_web_config(opts.web_config_file));
  auto listener =
      std::make_unique<HttpListener>(lo, [&page](const HttpRequest& req) { return metrics_endpoint_reply(req, page); });
  listener->start();
  log.info("agent: serving /metrics on {}:{}", lo.host.empty() ? "0.0.0.0" : lo.host, listener->port());
  return listener;
}

}  // namespace gcm::agent

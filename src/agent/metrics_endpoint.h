// The agent's /metrics (and /health) on --listen: every answer is a copy of the last window's page, so a scrape
// never waits on NVML. The listener's I/O thread reads the page through WindowExport::page().
#pragma once

#include <memory>

#include "agent/agent_options.h"
#include "agent/window_export.h"
#include "core/http_listener.h"

namespace spdlog {
class logger;
}

namespace gcm::agent {

// The endpoint's answer to one request.
HttpReply metrics_endpoint_reply(const HttpRequest& req, const WindowExport& page);

// Started and serving; null without --listen. Throws std::runtime_error when --listen or the web config is bad or
// the address cannot be bound. `page` must outlive the listener.
std::unique_ptr<HttpListener> start_metrics_endpoint(const AgentOptions& opts, const WindowExport& page,
                                                     spdlog::logger& log);

}  // namespace gcm::agent

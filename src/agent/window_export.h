// Where each window's records go: the Prometheus page (/metrics and the textfile) and, with --otlp-endpoint, one
// OTLP metrics request and one logs request per window, appended to the on-disk spool before the sender takes them
// (otlp/delivery.h), so that an outage of the collector costs no window while the spool lasts.
//
// Threads: the sampling thread (Agent::run) publishes, renders and pushes; the HTTP listener's I/O thread reads the
// rendered page through page(), under page_mu_; the delivery's own thread sends from the spool.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/agent_counters.h"
#include "agent/agent_options.h"
#include "core/record.h"
#include "core/thread_annotations.h"
#include "core/value.h"
#include "sinks/prometheus_store.h"

namespace spdlog {
class logger;
}

namespace gcm::otlp {
class Delivery;
}

namespace gcm::agent {

class WindowExport {
 public:
  WindowExport(AgentCounters& counters, std::shared_ptr<spdlog::logger> log);
  ~WindowExport();

  // Starts pushing to --otlp-endpoint through the spool in --spool-dir (nothing without an endpoint). Throws
  // AgentUsageError for options that cannot work (a header without a colon, a bad endpoint or spool).
  void start_otlp(const AgentOptions& opts);
  bool pushes_otlp() const { return otlp_ != nullptr; }

  // The records of `schema` this window: they replace the schema's series on the page, and join the window's OTLP
  // metrics request.
  void publish(const Schema& schema, const std::vector<Record>& records);
  // An event of this window (an XID, a health transition, a check's result) for the OTLP logs request.
  void add_log(Record record);
  // Forgets the OTLP records gathered so far (the page keeps them): the first sample's early page is not part of
  // the first window's request.
  void forget_window_records();

  // Renders the store into the page /metrics serves.
  void render_page();
  // The page as last rendered; any thread.
  std::string page() const;
  size_t page_size() const;
  // Writes the page to `path` atomically (a file beside it, renamed); a failure goes to the "textfile" source.
  void write_textfile(const std::string& path);

  // kAgentExport (what the delivery sent, dropped, holds on disk) and the "otlp" source; nothing without OTLP.
  void publish_export_stats();
  // The window's two OTLP requests, ending at `end_ms`, into the spool.
  void push_otlp(int64_t end_ms);
  // At shutdown: sends what the receiver takes within 5 s; the rest stays in the spool for the next start.
  void stop_otlp();

 private:
  AgentCounters& counters_;  // the sampling thread's
  std::shared_ptr<spdlog::logger> log_;

  // The sampling thread's.
  PrometheusStore store_;
  std::unique_ptr<otlp::Delivery> otlp_;  // null: no OTLP push
  uint64_t spool_limit_bytes_ = 0;        // --spool-max-bytes, exported beside the spool's size
  Object otlp_resource_;
  std::vector<Record> window_metrics_, window_logs_;  // what this window pushes over OTLP

  mutable std::mutex page_mu_;
  std::string page_ GCM_GUARDED_BY(page_mu_);
};

}  // namespace gcm::agent

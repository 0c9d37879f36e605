// The sinks' tests' shared pieces: three schemas and their records, one round sent as the loop sends it, quick
// retries, an HTTP receiver on the project's listener that records every request and answers what a test scripts,
// and the texts of a sink's errors.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/http_listener.h"
#include "fixture_records.h"
#include "sinks/sink.h"
#include "temp_dir.h"

namespace gcm::sink_testing {

// A test's own directory for the files a sink writes. gtest wants one fixture class per suite: each suite derives
// its own (class FileSinkFiles : public SinkFiles {};).
class SinkFiles : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return dir_.file(name); }
  gcm::testing::TempDir dir_;
};

inline const Schema& log_schema() {
  static const Schema s = make_schema("TestLog", "a test record", "test", DataType::Log,
                                      {{"cluster", FieldType::String, FieldRole::Identity},
                                       {"value", FieldType::Int, FieldRole::Gauge},
                                       {"extra", FieldType::Object},
                                       {"gone", FieldType::String}});
  return s;
}

inline const Schema& metric_schema() {
  static const Schema s = make_schema("TestMetric", "a test metric", "test", DataType::Metric,
                                      {{"cluster", FieldType::String, FieldRole::Identity},
                                       {"value", FieldType::Int, FieldRole::Gauge},
                                       {"extra", FieldType::Object},
                                       {"gone", FieldType::String}});
  return s;
}

// A second record type with other columns (as Statvfs and PureInfo share storage's file_path).
inline const Schema& other_schema() {
  static const Schema s = make_schema("TestOther", "another record", "other", DataType::Log,
                                      {{"cluster", FieldType::String}, {"user", FieldType::Int}});
  return s;
}

inline Record rec(const Schema& s, const std::string& cluster, int64_t value,
                  Object extra = {{"k", Value("v\xc3\xa9")}}) {
  Record r(s);
  r[0] = cluster;
  r[1] = value;
  r[2] = Value(std::move(extra));
  return r;  // "gone" stays null
}

// One round of one chunk, as the collection loop sends it.
inline void send(Sink& sink, const std::vector<Record>& records) {
  BatchInfo info;
  info.ts = 1700000000;
  info.schema = records.at(0).schema;
  info.data_type = info.schema->data_type;
  info.identifier = info.schema->identifier;
  sink.begin_round(info);
  sink.begin_chunk(info);
  for (const auto& r : records) sink.write(r);
  sink.end_chunk();
  sink.end_round(info);
}

inline SinkContext quick_retries(int retries) {
  SinkContext ctx;
  ctx.command = "test";
  ctx.retry.retries = retries;
  ctx.retry.initial_backoff_s = 0.01;
  return ctx;
}

struct Answer {
  int status = 200;
  std::string body;
  std::string retry_after;
};

// An HTTP receiver on the project's listener that records every request and answers what the test scripts
// (200 once the script is used up).
class Receiver {
 public:
  explicit Receiver(std::deque<Answer> answers = {}, std::shared_ptr<const TlsServerContext> tls = nullptr)
      : answers_(std::move(answers)) {
    HttpListenerOptions o;
    o.workers = 1;
    o.tls = std::move(tls);
    scheme_ = o.tls ? "https" : "http";
    server_ = std::make_unique<HttpListener>(o, [this](const HttpRequest& req) {
      std::lock_guard lock(mu_);
      requests_.push_back(req);
      times_.push_back(std::chrono::steady_clock::now());
      Answer a;
      if (!answers_.empty()) {
        a = answers_.front();
        answers_.pop_front();
      }
      HttpReply reply{a.status, "text/plain", a.body, ""};
      if (!a.retry_after.empty()) reply.extra_headers = "Retry-After: " + a.retry_after + "\r\n";
      return reply;
    });
    server_->start();
  }
  ~Receiver() { server_->stop(); }
  std::string url(const std::string& path = "/hook") const {
    return scheme_ + "://127.0.0.1:" + std::to_string(server_->port()) + path;
  }
  std::vector<HttpRequest> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  std::vector<std::chrono::steady_clock::time_point> times() {
    std::lock_guard lock(mu_);
    return times_;
  }

 private:
  std::mutex mu_;
  std::deque<Answer> answers_;
  std::vector<HttpRequest> requests_;
  std::vector<std::chrono::steady_clock::time_point> times_;
  std::string scheme_;
  std::unique_ptr<HttpListener> server_;
};

inline std::string sink_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const SinkError& e) {
    return e.what();
  }
  return "(no SinkError)";
}

inline std::string usage_error(const std::string& sink, const std::vector<std::string>& opts) {
  try {
    make_sink(sink, opts, quick_retries(0));
  } catch (const SinkUsageError& e) {
    return e.what();
  }
  return "(no SinkUsageError)";
}

}  // namespace gcm::sink_testing

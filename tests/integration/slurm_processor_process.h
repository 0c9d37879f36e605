// Test helpers around `gcm slurm_processor`: the process itself, and the real OTLP receiver downstream of it
// (tests/integration/otlp_receiver/receiver.js, @elastic/mockotlpserver).
#pragma once

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "helpers.h"
#include "process.h"

namespace gcm::testing {

// The receiver prints one JSON line per request received.
class OtlpReceiverProcess {
 public:
  explicit OtlpReceiverProcess(const std::string& dir, int port = 0)
      : proc_({"node", std::string(GCM_SOURCE_DIR) + "/tests/integration/otlp_receiver/receiver.js"},
              dir + "/receiver.stderr", {"OTLP_HTTP_PORT=" + std::to_string(port), "OTLP_GRPC_PORT=0"}) {
    auto first = proc_.read_line(std::chrono::seconds(30));
    if (!first) throw std::runtime_error("the OTLP receiver did not start: " + read_text(dir + "/receiver.stderr"));
    url = nlohmann::json::parse(*first)["http"].get<std::string>();
    if (!url.empty() && url.back() == '/') url.pop_back();
  }
  // The next request of the signal, or null when none arrives within the timeout.
  nlohmann::json next(const std::string& signal, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    while (auto line = proc_.read_line(timeout)) {
      auto j = nlohmann::json::parse(*line);
      if (j.value("signal", "") == signal) return j["data"];
    }
    return nullptr;
  }
  int port() const { return std::stoi(url.substr(url.rfind(':') + 1)); }
  // SIGKILL: an outage, not a shutdown (and node's close() would wait for the processor's keep-alive connection).
  void kill() { proc_.stop(SIGKILL, std::chrono::seconds(10)); }
  std::string url;

 private:
  BackgroundProcess proc_;
};

// The attribute of a normalised data point (mockotlpserver renders attributes as an object).
inline std::string attr(const nlohmann::json& point, const std::string& key) {
  if (!point.contains("attributes") || !point["attributes"].contains(key)) return "<absent>";
  const nlohmann::json& v = point["attributes"][key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// Every gauge and sum point the receiver gets until none arrives for 2 s: how many, and the job_id values seen on
// the points of each `gpu` attribute.
struct JobsByGpu {
  size_t points = 0;
  std::map<std::string, std::set<std::string>> job_ids;
};
inline JobsByGpu jobs_by_gpu(OtlpReceiverProcess& rx) {
  using namespace std::chrono_literals;
  JobsByGpu seen;
  for (nlohmann::json data = rx.next("metrics"); !data.is_null(); data = rx.next("metrics", 2s))
    for (const auto& rm : data["resourceMetrics"])
      for (const auto& sm : rm["scopeMetrics"])
        for (const auto& m : sm["metrics"])
          for (const char* kind : {"gauge", "sum"})
            if (m.contains(kind))
              for (const auto& p : m[kind]["dataPoints"]) {
                ++seen.points;
                if (attr(p, "gpu") != "<absent>") seen.job_ids[attr(p, "gpu")].insert(attr(p, "job_id"));
              }
  return seen;
}

// slurm_processor on any free port, logging into `dir`. With --grpc-listen among the arguments, the gRPC port it
// printed on its second line is in grpc_target.
class ProcessorProcess {
 public:
  ProcessorProcess(const std::string& dir, std::vector<std::string> args, std::vector<std::string> env = {})
      : dir_(dir), proc_(argv(dir, args), dir + "/processor.stderr", std::move(env)) {
    auto line = proc_.read_line(std::chrono::seconds(30));
    if (!line || line->find("listening on") == std::string::npos) fail();
    url = "http://127.0.0.1:" + line->substr(line->rfind(':') + 1);
    if (std::find(args.begin(), args.end(), "--grpc-listen") != args.end()) {
      line = proc_.read_line(std::chrono::seconds(10));
      if (!line || line->find("OTLP/gRPC listening on") == std::string::npos) fail();
      grpc_target = "127.0.0.1:" + line->substr(line->rfind(':') + 1);
    }
  }
  int stop() { return proc_.stop(SIGTERM, std::chrono::seconds(30)); }
  // A crash: nothing flushed, nothing closed.
  int kill9() { return proc_.stop(SIGKILL, std::chrono::seconds(10)); }
  std::string url;          // http://127.0.0.1:PORT
  std::string grpc_target;  // 127.0.0.1:PORT

 private:
  [[noreturn]] void fail() {
    throw std::runtime_error("slurm_processor did not start: " + read_text(dir_ + "/processor.stderr") +
                             read_text(dir_ + "/slurm_processor_logs/slurm_processor.log"));
  }
  static std::vector<std::string> argv(const std::string& dir, const std::vector<std::string>& args) {
    std::vector<std::string> a = {gcm_binary(), "slurm_processor", "--listen", "127.0.0.1:0", "--log-folder", dir};
    a.insert(a.end(), args.begin(), args.end());
    return a;
  }
  std::string dir_;
  BackgroundProcess proc_;
};

}  // namespace gcm::testing

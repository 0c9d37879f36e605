// Test helper: the real OTLP receiver (@elastic/mockotlpserver behind tests/integration/otlp_receiver/receiver.js)
// on fixed ports (free_port(), which a sender's retries during an outage cannot take), so that a restart listens
// where a sender keeps sending. Each request it receives comes back as one JSON object ({"signal":
// "metrics"|"logs"|"traces", "data": <OTLP/JSON>}).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "helpers.h"
#include "process.h"

namespace gcm::testing {

class OtlpReceiverProcess {
 public:
  OtlpReceiverProcess(const std::string& dir, int http_port, int grpc_port)
      : stderr_(dir + "/receiver-" + std::to_string(++starts_) + ".stderr"),
        proc_({"node", std::string(GCM_SOURCE_DIR) + "/tests/integration/otlp_receiver/receiver.js"}, stderr_,
              {"OTLP_HTTP_PORT=" + std::to_string(http_port), "OTLP_GRPC_PORT=" + std::to_string(grpc_port)}) {
    auto first = proc_.read_line(std::chrono::seconds(30));
    if (!first || !nlohmann::json::accept(*first) || !nlohmann::json::parse(*first).value("ready", false)) {
      // What it printed and how it ended, besides its stderr: CI once saw it end with an empty stderr.
      int status = proc_.stop(SIGKILL, std::chrono::seconds(5));  // 137: it was still running
      throw std::runtime_error(
          "the OTLP receiver did not start (first line: " + (first ? "'" + *first + "'" : std::string("none")) +
          ", exit status " + std::to_string(status) + "): " + read_text(stderr_));
    }
  }
  // The next request received, or nullopt after the timeout.
  std::optional<nlohmann::json> next(std::chrono::milliseconds timeout) {
    auto line = proc_.read_line(timeout);
    if (!line) return std::nullopt;
    return nlohmann::json::parse(*line);
  }
  void kill9() { ASSERT_GE(proc_.stop(SIGKILL, std::chrono::seconds(10)), 0) << "the receiver did not die"; }

 private:
  static inline int starts_ = 0;
  std::string stderr_;
  BackgroundProcess proc_;
};

}  // namespace gcm::testing

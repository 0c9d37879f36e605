// Test helper: the real OTLP receiver (@elastic/mockotlpserver behind tests/integration/otlp_receiver/receiver.js)
// on fixed ports, so that a restart listens where a sender keeps sending. Each request it receives comes back as
// one JSON object ({"signal": "metrics"|"logs"|"traces", "data": <OTLP/JSON>}).
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

// A loopback port for a receiver that is killed and started again on the same port (an outage), taken below the
// kernel's ephemeral range (ip_local_port_range, from 32768 by default), where no outgoing connection is given a
// port. With a port from bind(0), inside that range, the sender's own retries during the outage could take it: a
// connect to a port nothing listens on can be given that very port as its source and connect to itself (a TCP
// self-connect), and the restarted receiver then cannot bind (seen once in CI: "the OTLP receiver did not start").
// Never the same port twice in one process (two calls in a row from bind(0) could be).
inline int restartable_port() {
  static int next = 20000 + static_cast<int>(::getpid() % 5000);
  for (int tries = 0; tries < 12000; ++tries, next = next + 1 >= 32000 ? 20000 : next + 1) {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(next));
    bool ok = ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(s);
    if (ok) return next++;
  }
  throw std::runtime_error("no free loopback port in 20000-31999");
}

class OtlpReceiverProcess {
 public:
  OtlpReceiverProcess(const std::string& dir, int http_port, int grpc_port)
      : stderr_(dir + "/receiver-" + std::to_string(++starts_) + ".stderr"),
        proc_({"node", std::string(GCM_SOURCE_DIR) + "/tests/integration/otlp_receiver/receiver.js"}, stderr_,
              {"OTLP_HTTP_PORT=" + std::to_string(http_port), "OTLP_GRPC_PORT=" + std::to_string(grpc_port)}) {
    auto first = proc_.read_line(std::chrono::seconds(30));
    if (!first || !nlohmann::json::parse(*first).value("ready", false))
      throw std::runtime_error("the OTLP receiver did not start: " + read_text(stderr_));
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

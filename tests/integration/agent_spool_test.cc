// The agent's OTLP push with its spool against the real OTLP receiver (@elastic/mockotlpserver): the receiver is
// killed (SIGKILL, by pid) while windows keep coming, started again on the same ports, and every window arrives
// once and in order; with the spool too small for the outage, the oldest windows are dropped and counted; and a
// kill -9 of the agent itself, whose spool a new agent replays.
//
// The test stops the receiver for 60 s, 2 windows at the agent's default --window of 30 s; here the outage
// lasts 3 s and 60 windows. Nothing in the mechanism depends on the length in seconds: the sender keeps retrying the
// same front entry with its backoff capped (1 s here, 30 s by default) while the windows of the outage go to disk;
// what a long outage changes is the backlog, and 60 windows are 30 times the issue's.
#include <gtest/gtest.h>

#include <signal.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "otlp/delivery.h"
#include "otlp/encode.h"
#include "otlp/spool_format.h"
#include "agent_node.h"
#include "core/logging.h"
#include "helpers.h"
#include "otlp_receiver_process.h"
#include "process.h"
#include "sinks/otel_config.h"

namespace gcm::testing {
namespace {

using namespace std::chrono_literals;
using otlp::Delivery;

// The receiver, and the window each request it got belongs to.
class Receiver {
 public:
  Receiver(const std::string& dir, int http_port, int grpc_port) : rx_(dir, http_port, grpc_port) {}
  // "m<window>" or "l<window>" for each request received, until `count` arrived or the deadline passed.
  std::vector<std::string> receive(size_t count, std::chrono::seconds deadline) {
    std::vector<std::string> got;
    auto end = std::chrono::steady_clock::now() + deadline;
    while (got.size() < count) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      auto j = rx_.next(left);
      if (!j) break;
      got.push_back(window_of(*j));
    }
    return got;
  }
  // What arrives within `quiet` when nothing more should.
  std::vector<std::string> extra(std::chrono::milliseconds quiet) {
    std::vector<std::string> got;
    while (auto j = rx_.next(quiet)) got.push_back(window_of(*j));
    return got;
  }
  void kill9() { rx_.kill9(); }

 private:
  static std::string window_of(const nlohmann::json& j) {
    const auto& d = j["data"];
    const nlohmann::json* attrs = nullptr;
    if (j["signal"] == "metrics")
      attrs = &d["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["gauge"]["dataPoints"][0]["attributes"];
    else if (j["signal"] == "logs")
      attrs = &d["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]["attributes"];
    if (!attrs) return "?" + j.dump().substr(0, 200);
    const auto& w = (*attrs)["window"];  // a number over HTTP, a decimal string over gRPC
    std::string n = w.is_string() ? w.get<std::string>() : std::to_string(w.get<int64_t>());
    return (j["signal"] == "metrics" ? "m" : "l") + n;
  }
  OtlpReceiverProcess rx_;
};

const Schema& window_schema() {
  static Schema s = [] {
    Schema x;
    x.name = "AgentWindow";
    x.metric_prefix = "agent_test";
    x.data_type = DataType::Metric;
    x.fields = {{"window", FieldType::Int, FieldRole::Identity},
                {"value", FieldType::Double, FieldRole::Gauge, "", "the window's number"}};
    return x;
  }();
  return s;
}

// One window: a metrics request and a logs request, both carrying the window's number as an attribute.
void enqueue_window(Delivery& sp, int w, bool with_logs = true) {
  Record r(window_schema());
  r[0] = w;
  r[1] = static_cast<double>(w);
  otlp::MetricsBuilder m({{"service.name", Value("gcm-agent-test")}});
  m.add(r, 1700000000 + 30 * w);
  ASSERT_TRUE(sp.submit(otlp::Signal::Metrics, m.request().SerializeAsString(), m.points()));
  if (!with_logs) return;
  otlp::LogsBuilder l({{"service.name", Value("gcm-agent-test")}});
  l.add(r, 1700000000 + 30 * w, 1);
  ASSERT_TRUE(sp.submit(otlp::Signal::Logs, l.request().SerializeAsString(), l.records()));
}

std::vector<std::string> expected_windows(int from, int to, bool with_logs = true) {
  std::vector<std::string> out;
  for (int w = from; w < to; ++w) {
    out.push_back("m" + std::to_string(w));
    if (with_logs) out.push_back("l" + std::to_string(w));
  }
  return out;
}

// The delivery configured as `gcm agent` configures it: the transport through the otel sink's own option parsing,
// every window on the spool first, refusals kept; its backoff capped at 1 s (30 s by default).
std::unique_ptr<Delivery> agent_delivery(const std::string& protocol, int http_port, int grpc_port,
                                         const std::string& spool, uint64_t spool_bytes) {
  if (protocol == "grpc") setenv("GCM_OTLP_GRPC_MODULE", GCM_GRPC_MODULE, 1);
  int port = protocol == "grpc" ? grpc_port : http_port;
  Object o{{"otel_endpoint", Value("http://127.0.0.1:" + std::to_string(port))},
           {"protocol", Value(protocol)},
           {"otel_timeout", Value(5)}};
  otlp::DeliveryOptions d;
  d.transport = std::make_shared<otlp::TransportConfig>(otel_transport_config(SinkOptions("otel", Value(o))));
  d.name = "agent";
  d.spool_policy = otlp::SpoolPolicy::Always;
  d.spool_dir = spool;
  d.spool_bytes = spool_bytes;
  d.keep_refused = true;
  d.backoff = RetryPolicy{0, 0.2, 2, 1};
  auto delivery = std::make_unique<Delivery>(std::move(d), stderr_logger("agent-spool"));
  delivery->start();
  return delivery;
}

class AgentSpool : public ::testing::TestWithParam<std::string> {};

TEST_P(AgentSpool, EveryWindowArrivesOnceAndInOrderAcrossAReceiverOutage) {
  ASSERT_FALSE(find_executable("node").empty()) << "node is not installed";
  auto dir = temp_dir("agent-spool");
  int http_port = free_port(), grpc_port = free_port();
  auto rx = std::make_unique<Receiver>(dir, http_port, grpc_port);
  auto delivery = agent_delivery(GetParam(), http_port, grpc_port, dir + "/spool", 64 << 20);
  Delivery& sp = *delivery;

  for (int w = 0; w < 5; ++w) enqueue_window(sp, w);
  EXPECT_EQ(rx->receive(10, 30s), expected_windows(0, 5));
  ASSERT_TRUE(eventually([&] { return sp.stats().spool.entries == 0; }, 10s));

  rx->kill9();
  auto outage_start = std::chrono::steady_clock::now();
  rx.reset();
  RefusedPorts outage({http_port, grpc_port});
  for (int w = 5; w < 65; ++w) enqueue_window(sp, w);
  // Down for 3 s, and the sender has been failing, and backing off, all along.
  ASSERT_TRUE(eventually(
      [&] { return std::chrono::steady_clock::now() - outage_start >= 3s && sp.stats().retried >= 3; }, 30s))
      << sp.stats().last_error;
  auto during = sp.stats();
  EXPECT_EQ(during.spool.entries, 120u) << "every window of the outage is on disk";
  EXPECT_GT(during.oldest_age_seconds, 1.0);
  EXPECT_EQ(during.requests, 10u);

  outage.release();
  rx = std::make_unique<Receiver>(dir, http_port, grpc_port);
  EXPECT_EQ(rx->receive(120, 60s), expected_windows(5, 65)) << sp.stats().last_error;
  ASSERT_TRUE(eventually([&] { return sp.stats().spool.entries == 0; }, 10s));
  for (int w = 65; w < 67; ++w) enqueue_window(sp, w);
  EXPECT_EQ(rx->receive(4, 30s), expected_windows(65, 67));
  EXPECT_TRUE(sp.flush(10s));
  EXPECT_EQ(rx->extra(1500ms), std::vector<std::string>{}) << "nothing arrives twice";
  auto after = sp.stats();
  EXPECT_EQ(after.requests, 134u);
  EXPECT_EQ(after.delivered, 134u);
  EXPECT_EQ(after.lost(), 0u);
  EXPECT_EQ(after.spool.bytes, 0u);
}

TEST_P(AgentSpool, ASpoolTooSmallForTheOutageDropsTheOldestAndCountsThem) {
  auto dir = temp_dir("agent-spool-full");
  int http_port = free_port(), grpc_port = free_port();
  RefusedPorts receiver_away({http_port, grpc_port});
  // Room for four metrics windows: the request size is the same for windows 0-9.
  Record r(window_schema());
  r[0] = 0;
  r[1] = 0.0;
  otlp::MetricsBuilder probe({{"service.name", Value("gcm-agent-test")}});
  probe.add(r, 1700000000);
  uint64_t frame = otlp::kFrameHeaderBytes + probe.request().ByteSizeLong();
  {
    // The receiver is not running: every window goes to the spool.
    auto delivery = agent_delivery(GetParam(), http_port, grpc_port, dir + "/spool", 4 * frame);
    Delivery& sp = *delivery;
    for (int w = 0; w < 10; ++w) enqueue_window(sp, w, false);
    auto st = sp.stats();
    EXPECT_EQ(st.spool.entries, 4u);
    EXPECT_EQ(st.spool.dropped_entries, 6u);
    EXPECT_EQ(st.spool.dropped_points, 6u);
    EXPECT_EQ(st.lost(), 6u) << "what gcm_agent_dropped_points_total reports";
    EXPECT_FALSE(sp.flush(500ms));
  }
  // The next start delivers what was kept, oldest first.
  receiver_away.release();
  Receiver rx(dir, http_port, grpc_port);
  auto delivery = agent_delivery(GetParam(), http_port, grpc_port, dir + "/spool", 4 * frame);
  Delivery& sp = *delivery;
  EXPECT_EQ(rx.receive(4, 60s), expected_windows(6, 10, false));
  EXPECT_TRUE(sp.flush(10s));
  EXPECT_EQ(rx.extra(1000ms), std::vector<std::string>{});
}

// kill -9 of `gcm agent` loses at most the window in progress. With the receiver down from the start, the agent
// closes windows into its spool (each appended with fdatasync before the next sample); it is killed with SIGKILL
// (no flush, no last window); a second agent on the same spool directory starts, then the receiver. Every window the
// first agent closed arrives, in order, once, and before the second agent's own windows. The two runs are told apart
// by a resource attribute (OTEL_RESOURCE_ATTRIBUTES), since each run numbers its windows from 1.
TEST(AgentKill9, LosesAtMostTheWindowInProgress) {
  ASSERT_FALSE(find_executable("node").empty()) << "node is not installed";
  AgentNode n(2);
  int http_port = free_port(), grpc_port = free_port();
  RefusedPorts receiver_away({http_port, grpc_port});
  std::vector<std::string> otlp = {"--otlp-endpoint", "http://127.0.0.1:" + std::to_string(http_port)};
  auto env = [&](const std::string& run) {
    return std::vector<std::string>{"GCM_FAKE_NVML_SCENARIO=" + n.dir + "/scenario.json",
                                    std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML,
                                    "OTEL_RESOURCE_ATTRIBUTES=gcm.test.run=" + run};
  };
  n.start(otlp, env("1"));
  ASSERT_TRUE(eventually([&] { return n.value("gcm_agent_spool_entries").value_or(0) >= 5; }, 30s))
      << n.metrics().substr(0, 2000) << n.diagnosis();
  // The page of window W is rendered just before W's requests are spooled: W may be the one in progress.
  int64_t rendered = static_cast<int64_t>(n.value("gcm_agent_windows_total").value_or(0));
  ASSERT_EQ(n.proc->stop(SIGKILL, 10s), 128 + SIGKILL);
  int64_t closed = rendered - 1;

  n.port = free_port();
  n.start(otlp, env("2"));
  receiver_away.release();
  OtlpReceiverProcess rx(n.dir, http_port, grpc_port);
  std::vector<int64_t> first, second;  // window numbers of each run's metrics requests, as received
  bool second_started = false, interleaved = false;
  auto end = std::chrono::steady_clock::now() + 60s;
  while (second.size() < 3 && std::chrono::steady_clock::now() < end) {
    auto j = rx.next(std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()));
    if (!j) break;
    int64_t w = window_number(*j);
    if (w < 0) continue;  // a logs request
    std::string run = resource_attribute(*j, "gcm.test.run");
    if (run == "2") {
      second_started = true;
      second.push_back(w);
    } else {
      ASSERT_EQ(run, "1") << j->dump().substr(0, 400);
      interleaved = interleaved || second_started;
      first.push_back(w);
    }
  }
  ASSERT_EQ(second.size(), 3u) << n.diagnosis();
  EXPECT_FALSE(interleaved) << "the killed agent's windows come first";
  ASSERT_GE(static_cast<int64_t>(first.size()), closed) << "every closed window arrives";
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i], static_cast<int64_t>(i) + 1) << "in order, once";
  for (size_t i = 0; i < second.size(); ++i) EXPECT_EQ(second[i], static_cast<int64_t>(i) + 1);
  EXPECT_EQ(n.value("gcm_agent_dropped_points_total"), 0);
  EXPECT_EQ(n.proc->stop(SIGTERM, 20s), 0);
}

INSTANTIATE_TEST_SUITE_P(Protocols, AgentSpool, ::testing::Values("http/protobuf", "http/json", "grpc"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;
                           for (char& c : n)
                             if (c == '/') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace gcm::testing

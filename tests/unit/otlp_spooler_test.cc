// The agent's OTLP sender against a small scripted receiver: in order, popped only after a 2xx, the same entry
// retried after a transient failure, a refused entry dropped without holding the queue, and what a flush leaves.
#include "agent/otlp_spooler.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "core/logging.h"
#include "metrics_service.pb.h"
#include "refused_port.h"
#include "temp_dir.h"

namespace gcm::agent {
namespace {

using namespace std::chrono_literals;
namespace pb_metrics = opentelemetry::proto::collector::metrics::v1;
using gcm::testing::TempDir;

class Receiver {
 public:
  explicit Receiver(std::deque<int> statuses = {}, int port = 0) : statuses_(std::move(statuses)) {
    server_.Post("/v1/metrics", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      pb_metrics::ExportMetricsServiceRequest r;
      r.ParseFromString(req.body);
      windows_.push_back(
          static_cast<int>(r.resource_metrics(0).scope_metrics(0).metrics(0).gauge().data_points(0).as_double()));
      res.status = statuses_.empty() ? 200 : statuses_.front();
      if (!statuses_.empty()) statuses_.pop_front();
      res.set_content(res.status == 400 ? "bad window" : "", "text/plain");
    });
    port_ = port ? (server_.bind_to_port("127.0.0.1", port) ? port : -1) : server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(1ms);
  }
  ~Receiver() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  // Every window number received, in arrival order, retries included.
  std::vector<int> windows() {
    std::lock_guard lock(mu_);
    return windows_;
  }

 private:
  std::mutex mu_;
  std::deque<int> statuses_;
  std::vector<int> windows_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

std::string window(int i) {
  pb_metrics::ExportMetricsServiceRequest r;
  auto* m = r.add_resource_metrics()->add_scope_metrics()->add_metrics();
  m->set_name("gcm.test.window");
  m->mutable_gauge()->add_data_points()->set_as_double(i);
  return r.SerializeAsString();
}

otlp::ExporterConfig config_for(int port) {
  otlp::ExporterConfig cfg;
  cfg.metrics_url = "http://127.0.0.1:" + std::to_string(port) + "/v1/metrics";
  cfg.logs_url = "http://127.0.0.1:" + std::to_string(port) + "/v1/logs";
  cfg.timeout = 2s;
  return cfg;
}

bool eventually(const std::function<bool()>& pred, std::chrono::seconds deadline = 10s) {
  auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

const SpoolerOptions kFast{20ms, 100ms};

TEST(OtlpSpooler, DeliversInOrderAndEmptiesTheSpool) {
  TempDir dir;
  Receiver rx;
  OtlpSpooler sp(config_for(rx.port()), Spool::open(dir.file("spool"), 1 << 20), stderr_logger("test"), kFast);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(sp.enqueue(SpoolKind::Metrics, 3, window(i)));
  ASSERT_TRUE(sp.flush(10s));
  EXPECT_EQ(rx.windows(), (std::vector<int>{0, 1, 2, 3, 4}));
  auto st = sp.stats();
  EXPECT_EQ(st.sent_entries, 5u);
  EXPECT_EQ(st.sent_points, 15u);
  EXPECT_EQ(st.send_failures, 0u);
  EXPECT_EQ(st.spool.entries, 0u);
  EXPECT_EQ(st.dropped_points(), 0u);
}

TEST(OtlpSpooler, ATransientFailureRetriesTheSameEntryBeforeTheNext) {
  TempDir dir;
  Receiver rx({503, 502, 200});
  OtlpSpooler sp(config_for(rx.port()), Spool::open(dir.file("spool"), 1 << 20), stderr_logger("test"), kFast);
  sp.enqueue(SpoolKind::Metrics, 1, window(0));
  sp.enqueue(SpoolKind::Metrics, 1, window(1));
  ASSERT_TRUE(sp.flush(10s));
  EXPECT_EQ(rx.windows(), (std::vector<int>{0, 0, 0, 1}));
  auto st = sp.stats();
  EXPECT_EQ(st.send_failures, 2u);
  EXPECT_EQ(st.sent_entries, 2u);
  EXPECT_NE(st.last_error.find("HTTP 502"), std::string::npos) << st.last_error;
}

TEST(OtlpSpooler, ARefusedEntryIsDroppedAndCountedWithoutHoldingTheQueue) {
  TempDir dir;
  Receiver rx({400});
  OtlpSpooler sp(config_for(rx.port()), Spool::open(dir.file("spool"), 1 << 20), stderr_logger("test"), kFast);
  sp.enqueue(SpoolKind::Metrics, 8, window(0));
  sp.enqueue(SpoolKind::Metrics, 8, window(1));
  ASSERT_TRUE(sp.flush(10s));
  EXPECT_EQ(rx.windows(), (std::vector<int>{0, 1}));
  auto st = sp.stats();
  EXPECT_EQ(st.rejected_entries, 1u);
  EXPECT_EQ(st.rejected_points, 8u);
  EXPECT_EQ(st.dropped_points(), 8u);
  EXPECT_EQ(st.sent_entries, 1u);
  EXPECT_NE(st.last_error.find("bad window"), std::string::npos) << "the receiver's message: " << st.last_error;
}

TEST(OtlpSpooler, BytesThatAreNotARequestAreDroppedNotSentForever) {
  TempDir dir;
  Receiver rx;
  OtlpSpooler sp(config_for(rx.port()), Spool::open(dir.file("spool"), 1 << 20), stderr_logger("test"), kFast);
  sp.enqueue(SpoolKind::Metrics, 2, "\xff\xff\xff not protobuf");
  sp.enqueue(SpoolKind::Metrics, 1, window(7));
  ASSERT_TRUE(sp.flush(10s));
  EXPECT_EQ(rx.windows(), std::vector<int>{7});
  EXPECT_EQ(sp.stats().rejected_points, 2u);
}

TEST(OtlpSpooler, AFlushThatTimesOutLeavesTheRestOnDiskForTheNextStart) {
  TempDir dir;
  {
    gcm::testing::RefusedPort refused;
    OtlpSpooler sp(config_for(refused.port()), Spool::open(dir.file("spool"), 1 << 20), stderr_logger("test"), kFast);
    for (int i = 0; i < 3; ++i) sp.enqueue(SpoolKind::Metrics, 1, window(i));
    EXPECT_FALSE(sp.flush(300ms));
    auto st = sp.stats();
    EXPECT_GE(st.send_failures, 1u);
    EXPECT_EQ(st.spool.entries, 3u);
    EXPECT_GE(st.oldest_age_seconds, 0.0);
  }
  // The spool directory carries what is left; the receiver of the next start may listen anywhere (asking for the
  // same port again could lose it to another process).
  Receiver rx;
  OtlpSpooler sp(config_for(rx.port()), Spool::open(dir.file("spool"), 1 << 20), stderr_logger("test"), kFast);
  ASSERT_TRUE(sp.flush(10s));
  EXPECT_EQ(rx.windows(), (std::vector<int>{0, 1, 2}));
}

TEST(OtlpSpooler, ANewWindowWakesTheSenderOutOfItsBackoff) {
  TempDir dir;
  Receiver rx({503});
  // A backoff far longer than the test: only the new window can make the sender try again in time.
  OtlpSpooler sp(config_for(rx.port()), Spool::open(dir.file("spool"), 1 << 20), stderr_logger("test"), {60s, 60s});
  sp.enqueue(SpoolKind::Metrics, 1, window(0));
  ASSERT_TRUE(eventually([&] { return sp.stats().send_failures == 1; }));
  sp.enqueue(SpoolKind::Metrics, 1, window(1));
  ASSERT_TRUE(eventually([&] { return sp.stats().sent_entries == 2; }));
  EXPECT_EQ(rx.windows(), (std::vector<int>{0, 0, 1}));
}

}  // namespace
}  // namespace gcm::agent

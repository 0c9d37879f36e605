// slurm_processor's forwarder against a downstream of the test's own that can be "down" (503 or not listening):
// batches wait in memory, overflow to the spool, every item arrives exactly once when the downstream is back, a
// restart picks up what an earlier run spooled, and items that cannot be kept are counted.
#include "processor/forwarder.h"
#include "processor/service.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sstream>

#include "metrics_service.pb.h"
#include "temp_dir.h"

namespace gcm::processor {
namespace {

using gcm::testing::TempDir;

using MetricsReq = opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest;

class Downstream {
 public:
  Downstream() {
    server_.new_task_queue = [] { return new httplib::ThreadPool(16); };
    server_.Post("/v1/metrics", [this](const httplib::Request& req, httplib::Response& res) {
      int now = ++in_flight;
      for (int seen = most_in_flight; now > seen && !most_in_flight.compare_exchange_weak(seen, now);) {
      }
      if (int ms = latency_ms) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      struct Leave {
        std::atomic<int>& n;
        ~Leave() { --n; }
      } leave{in_flight};
      if (down) {
        res.status = 503;
        return;
      }
      MetricsReq m;
      if (!m.ParseFromString(req.body)) {
        res.status = 400;
        return;
      }
      std::lock_guard lock(mu);
      ++requests;
      for (const auto& rm : m.resource_metrics())
        for (const auto& sm : rm.scope_metrics())
          for (const auto& metric : sm.metrics())
            for (const auto& p : metric.gauge().data_points()) ++seen[p.as_int()];
      res.status = 200;
    });
    port = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Downstream() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  std::atomic<bool> down{false};
  std::atomic<int> latency_ms{0};  // each answer that much later
  std::atomic<int> in_flight{0}, most_in_flight{0};
  std::mutex mu;
  std::map<int64_t, int> seen;  // point value -> times received
  int requests = 0;
  int port = 0;

 private:
  httplib::Server server_;
  std::thread thread_;
};

// One request with one gauge point whose value is `id`.
std::string request(int64_t id) {
  MetricsReq m;
  m.add_resource_metrics()->add_scope_metrics()->add_metrics()->mutable_gauge()->add_data_points()->set_as_int(id);
  return m.SerializeAsString();
}

bool eventually(const std::function<bool()>& f, std::chrono::seconds limit = std::chrono::seconds(20)) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return f();
}

ForwarderOptions options(const std::string& url, const std::string& spool) {
  ForwarderOptions o;
  o.endpoint = url;
  o.batch_items = 10;
  o.batch_timeout = std::chrono::milliseconds(20);
  o.queue_bytes = 200;  // a few batches: the rest must go to the spool
  o.spool_dir = spool;
  o.backoff_initial_s = 0.01;
  o.backoff_max_s = 0.05;
  o.timeout = std::chrono::milliseconds(2000);
  o.drain_timeout = std::chrono::milliseconds(2000);
  return o;
}

// The forwarder makes its spool directory: a path inside the test's own directory, which goes with the test.
std::string spool_in(const TempDir& dir) { return dir.file("spool"); }

size_t files_in(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(SlurmProcessorForwarder, BatchesReachTheDownstreamExactlyOnce) {
  Downstream d;
  TempDir tmp;
  ForwarderOptions o = options(d.url(), spool_in(tmp));
  o.queue_bytes = 1 << 20;  // room for everything: no spooling
  Forwarder f(o, nullptr);
  f.start();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(f.submit(Signal::Metrics, request(i), 1));
  ASSERT_TRUE(eventually([&] { return f.stats().forwarded == 100; }));
  std::lock_guard lock(d.mu);
  EXPECT_EQ(d.seen.size(), 100u);
  for (const auto& [id, n] : d.seen) EXPECT_EQ(n, 1) << id;
  EXPECT_LE(d.requests, 20) << "requests are batched (10 items each, or what 20 ms gathered)";
  EXPECT_EQ(f.stats().spooled, 0u);
  EXPECT_EQ(f.stats().dropped, 0u);
}

// A downstream that answers each request after a round trip is sent `concurrency` batches at once, each arriving
// once; one at a time (the old forwarder) it would take at most one batch per round trip.
TEST(SlurmProcessorForwarder, BatchesAreSentConcurrentlyAndEachArrivesOnce) {
  for (unsigned concurrency : {1u, 4u}) {
    Downstream d;
    d.latency_ms = 100;
    ForwarderOptions o = options(d.url(), "");
    o.queue_bytes = 1 << 20;
    o.concurrency = concurrency;
    Forwarder f(o, nullptr);
    f.start();
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(f.submit(Signal::Metrics, request(i), 1));  // 20 batches of 10
    ASSERT_TRUE(eventually([&] { return f.stats().forwarded == 200; }));
    f.stop();
    std::lock_guard lock(d.mu);
    EXPECT_EQ(d.seen.size(), 200u);
    for (const auto& [id, n] : d.seen) EXPECT_EQ(n, 1) << id;
    EXPECT_EQ(d.most_in_flight.load(), static_cast<int>(concurrency)) << "batches in flight at once";
  }
}

TEST(SlurmProcessorForwarder, AnOutageGoesToTheSpoolAndNothingIsLost) {
  Downstream d;
  d.down = true;
  TempDir tmp;
  std::string spool = spool_in(tmp);
  Forwarder f(options(d.url(), spool), nullptr);
  f.start();
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(f.submit(Signal::Metrics, request(i), 1));
  ASSERT_TRUE(eventually([&] { return f.stats().retried >= 3 && f.stats().spooled > 0; }));
  EXPECT_GT(files_in(spool), 0u);
  d.down = false;
  ASSERT_TRUE(eventually([&] { return f.stats().forwarded == 500; })) << f.stats().forwarded;
  auto st = f.stats();
  EXPECT_EQ(st.dropped, 0u);
  EXPECT_EQ(st.unspooled, st.spooled);
  EXPECT_EQ(st.spool_items, 0u);
  EXPECT_EQ(files_in(spool), 0u);
  std::lock_guard lock(d.mu);
  ASSERT_EQ(d.seen.size(), 500u);
  for (const auto& [id, n] : d.seen) EXPECT_EQ(n, 1) << id;
}

TEST(SlurmProcessorForwarder, WhatIsLeftAtStopIsSentByTheNextRun) {
  Downstream d;
  d.down = true;
  TempDir tmp;
  std::string spool = spool_in(tmp);
  {
    Forwarder f(options(d.url(), spool), nullptr);
    f.start();
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(f.submit(Signal::Metrics, request(i), 1));
    ASSERT_TRUE(eventually([&] { return f.stats().retried >= 1; }));
    f.stop();
    EXPECT_EQ(f.stats().dropped, 0u);
  }
  EXPECT_GT(files_in(spool), 0u);
  d.down = false;
  Forwarder again(options(d.url(), spool), nullptr);
  again.start();
  ASSERT_TRUE(eventually([&] { return again.stats().forwarded == 50; })) << again.stats().forwarded;
  std::lock_guard lock(d.mu);
  ASSERT_EQ(d.seen.size(), 50u);
  for (const auto& [id, n] : d.seen) EXPECT_EQ(n, 1) << id;
}

TEST(SlurmProcessorForwarder, WithoutRoomRequestsAreRefusedAndCounted) {
  Downstream d;
  d.down = true;
  ForwarderOptions o = options(d.url(), "");
  o.queue_bytes = 100;
  Forwarder f(o, nullptr);
  f.start();
  int refused = 0;
  for (int i = 0; i < 100; ++i) refused += f.submit(Signal::Metrics, request(i), 1) ? 0 : 1;
  EXPECT_GT(refused, 0);
  EXPECT_EQ(f.stats().refused_requests, static_cast<uint64_t>(refused));
  EXPECT_EQ(f.stats().dropped, 0u);  // the client was told to retry: nothing lost here
}

// One request with one gauge point whose value is `id`, its metric named with `name_bytes` bytes.
std::string sized_request(int64_t id, size_t name_bytes) {
  MetricsReq m;
  auto* metric = m.add_resource_metrics()->add_scope_metrics()->add_metrics();
  metric->set_name(std::string(name_bytes, 'm'));
  metric->mutable_gauge()->add_data_points()->set_as_int(id);
  return m.SerializeAsString();
}

// Batches reserve memory by estimate, and requests of a signal differ in size: whatever a batch's reservation, a
// request the forwarder took is sent, never dropped for want of room it had promised (without a spool, room is
// checked once, when the request is taken).
TEST(SlurmProcessorForwarder, WhatItTakesItSendsWhateverTheSizesOfItsRequests) {
  Downstream d;
  d.down = true;
  ForwarderOptions o = options(d.url(), "");
  o.queue_bytes = 4096;
  o.batch_timeout = std::chrono::seconds(60);  // batches are sealed by their item count only
  Forwarder f(o, nullptr);
  f.start();
  std::vector<int64_t> taken;
  // Batches of ten requests, large and small by turns: a batch of small ones reserves what the large ones before it
  // needed, until the queue is full.
  for (int64_t i = 0; i < 400; ++i) {
    bool large = (i / 10) % 2 == 0;
    if (f.submit(Signal::Metrics, sized_request(i, large ? 300 : 4), 1)) taken.push_back(i);
  }
  ASSERT_GT(taken.size(), 20u);
  ASSERT_LT(taken.size(), 400u) << "the queue never filled: the test shows nothing";
  EXPECT_EQ(f.stats().dropped, 0u);
  d.down = false;
  EXPECT_TRUE(eventually([&] {
    std::lock_guard lock(d.mu);
    return d.seen.size() >= taken.size() - taken.size() % 10;  // the batch still filling waits for its tenth
  }));
  f.stop();  // sends the batch still filling
  EXPECT_EQ(f.stats().dropped, 0u);
  std::lock_guard lock(d.mu);
  EXPECT_EQ(d.seen.size(), taken.size());
  for (int64_t id : taken) EXPECT_EQ(d.seen[id], 1) << id;
}

// A request taken is the batch's part as it is, not a copy: once its batch is sent, its buffer is what take() gives
// back to the next request (the receivers write into memory already touched). The queue counts what the buffers
// hold in memory, not only what is written in them.
TEST(SlurmProcessorForwarder, ATakenRequestsBufferIsSentAsItIsAndComesBackForTheNextOne) {
  Downstream d;
  d.down = true;
  ForwarderOptions o = options(d.url(), "");
  o.queue_bytes = 1 << 20;
  o.batch_items = 1;
  Forwarder f(o, nullptr);
  f.start();
  std::string first = sized_request(1, 12000);
  first.reserve(20000);
  const char* first_buffer = first.data();
  ASSERT_TRUE(f.take(Signal::Metrics, first, 1));
  EXPECT_EQ(first.capacity(), std::string().capacity()) << "nothing sent yet: an empty buffer comes back";
  EXPECT_GE(f.stats().queue_bytes, 20000u) << "the queue counts the buffer's 20 000 bytes, not the 12 000 written";
  d.down = false;
  ASSERT_TRUE(eventually([&] { return f.stats().forwarded == 1; }));
  std::string second = request(2);
  ASSERT_TRUE(f.take(Signal::Metrics, second, 1));
  EXPECT_EQ(second.data(), first_buffer) << "the first request's own buffer went out and came back";
  ASSERT_TRUE(eventually([&] { return f.stats().forwarded == 2; }));
  // One grown far past what it holds (a huge request before) is given back first: it would hold the queue's room.
  d.down = true;
  std::string small_in_large = request(3);
  small_in_large.reserve(1 << 20);
  ASSERT_TRUE(f.take(Signal::Metrics, small_in_large, 1));
  EXPECT_LT(f.stats().queue_bytes, 1000u);
  d.down = false;
  ASSERT_TRUE(eventually([&] { return f.stats().forwarded == 3; }));
  std::lock_guard lock(d.mu);
  EXPECT_EQ(d.seen.size(), 3u);
  for (int64_t id : {1, 2, 3}) EXPECT_EQ(d.seen[id], 1) << id;
}

TEST(SlurmProcessorForwarder, RefusalsAreLoggedOnceEveryTenSecondsNotOncePerRequest) {
  Downstream d;
  d.down = true;
  ForwarderOptions o = options(d.url(), "");
  o.queue_bytes = 100;
  auto lines = std::make_shared<std::ostringstream>();
  auto log =
      std::make_shared<spdlog::logger>("forwarder-test", std::make_shared<spdlog::sinks::ostream_sink_mt>(*lines));
  Forwarder f(o, log);
  f.start();
  int refused = 0;
  for (int i = 0; i < 500; ++i) refused += f.submit(Signal::Metrics, request(i), 1) ? 0 : 1;
  ASSERT_GT(refused, 1);
  std::string text = lines->str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_NE(text.find("1 request(s) refused (1 data points)"), std::string::npos) << text;
  EXPECT_EQ(f.stats().refused_requests, static_cast<uint64_t>(refused));  // every one counted
  f.stop();
}

TEST(SlurmProcessorForwarder, ARejectingDownstreamDropsWithACount) {
  Downstream d;
  TempDir tmp;
  Forwarder f(options(d.url(), spool_in(tmp)), nullptr);
  f.start();
  ASSERT_TRUE(f.submit(Signal::Metrics, "\xff\xff garbage", 3));  // the downstream answers 400
  ASSERT_TRUE(eventually([&] { return f.stats().dropped == 3; }));
  EXPECT_EQ(f.stats().forwarded, 0u);
}

// Nothing is known of the downstream before something was sent to it: a processor that just started, or that no
// client has sent to yet, must not report it up (it may not even exist). Unknown, then up or down after an attempt.
TEST(SlurmProcessorForwarder, TheDownstreamIsUnknownUntilAnAttemptEnds) {
  Downstream d;
  Forwarder f(options(d.url(), ""), nullptr);
  EXPECT_EQ(f.stats().downstream, DownstreamState::Unknown);
  f.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // batch timeouts pass: still nothing to send
  EXPECT_EQ(f.stats().downstream, DownstreamState::Unknown);
  ASSERT_TRUE(f.submit(Signal::Metrics, request(1), 1));
  ASSERT_TRUE(eventually([&] { return f.stats().forwarded == 1; }));
  EXPECT_EQ(f.stats().downstream, DownstreamState::Up);
  d.down = true;
  ASSERT_TRUE(f.submit(Signal::Metrics, request(2), 1));
  ASSERT_TRUE(eventually([&] { return f.stats().downstream == DownstreamState::Down; }));
  d.down = false;
  ASSERT_TRUE(eventually([&] { return f.stats().downstream == DownstreamState::Up && f.stats().forwarded == 2; }));
}

TEST(SlurmProcessorService, HealthSaysUnknownAndMetricsHaveNoUpSampleBeforeAnythingWasSent) {
  Downstream d;
  ServiceOptions o;
  o.forward = options(d.url(), "");
  Service svc(o, nullptr);
  HttpRequest get;
  get.method = "GET";
  get.path = "/health";
  HttpReply health = svc.handle(get);
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(nlohmann::json::parse(health.body)["downstream"], "unknown") << health.body;
  std::string metrics = svc.metrics_text();
  EXPECT_NE(metrics.find("# TYPE gcm_slurm_processor_downstream_up gauge\n"), std::string::npos);
  // A sample line starts with the name (the HELP line mentions it after "# HELP ").
  EXPECT_EQ(metrics.find("\ngcm_slurm_processor_downstream_up "), std::string::npos) << "no guess of up or down";
}

TEST(SlurmProcessorService, DownstreamStatesAreNamed) {
  EXPECT_STREQ(to_string(DownstreamState::Unknown), "unknown");
  EXPECT_STREQ(to_string(DownstreamState::Up), "up");
  EXPECT_STREQ(to_string(DownstreamState::Down), "down");
}

}  // namespace
}  // namespace gcm::processor

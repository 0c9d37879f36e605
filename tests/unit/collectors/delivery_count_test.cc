// Nothing counted as delivered that the sink did not acknowledge: ChunkWriter's acknowledged and failed chunks, and
// sacct_publish's report against a receiver that refuses (HTTP 400), as a whole process.
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "collectors/loop.h"
#include "core/subprocess.h"
#include "sinks/sink.h"
#include "temp_dir.h"

namespace gcm {
namespace {

using gcm::testing::TempDir;

// Takes every chunk but the one numbered `refused` (1-based), whose end_chunk throws as a refused request does.
class RefusingSink : public Sink {
 public:
  explicit RefusingSink(int refused) : refused_(refused) {}
  void begin_chunk(const BatchInfo&) override { ++chunk_; }
  void write(const Record&) override {}
  void end_chunk() override {
    if (chunk_ == refused_) throw SinkError("HTTP 400 Bad Request");
  }

 private:
  int refused_;
  int chunk_ = 0;
};

TEST(DeliveryCount, OnlyAcknowledgedChunksCount) {
  Schema s;
  s.name = "C";
  s.fields = {{"v"}};
  BatchInfo info;
  info.schema = &s;
  Record r(s);
  r[0] = "xxxxx";  // 13 bytes as JSON: 3 records per 45-byte chunk
  RefusingSink sink(2);
  ChunkWriter w(sink, info, 45);
  EXPECT_THROW(
      {
        for (int i = 0; i < 9; ++i) w.emit(r);
        w.finish();
      },
      SinkError);
  EXPECT_EQ(w.chunks(), 2u);
  EXPECT_EQ(w.acknowledged_chunks(), 1u);
  EXPECT_EQ(w.acknowledged_records(), 3u);
  EXPECT_EQ(w.failed_chunks(), 1u);

  RefusingSink none(0);
  ChunkWriter all(none, info, 45);
  for (int i = 0; i < 7; ++i) all.emit(r);
  all.finish();
  EXPECT_EQ(all.acknowledged_chunks(), 3u);
  EXPECT_EQ(all.acknowledged_records(), 7u);
  EXPECT_EQ(all.failed_chunks(), 0u);
}

// Answers 200 to the first `accepted` requests, then 400.
class RefusingReceiver {
 public:
  explicit RefusingReceiver(int accepted) : accepted_(accepted) {
    server_.Post(R"(/v1/.*)", [this](const httplib::Request&, httplib::Response& res) {
      res.status = requests_++ < accepted_ ? 200 : 400;
      res.set_content("", "application/x-protobuf");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~RefusingReceiver() {
    server_.stop();
    thread_.join();
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int accepted_;
  std::atomic<int> requests_{0};
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

CommandResult publish_to(const RefusingReceiver& rx, const std::string& input, const std::string& dir) {
  CommandSpec spec;
  spec.argv = {GCM_BINARY,     "sacct_publish",
               "--delimiter",  "|",
               "--cluster",    "c",
               "--log-folder", dir,
               "--chunk-size", "20k",
               "--retries",    "0",
               "--sink",       "otel",
               "-o",           "otel_endpoint=" + rx.endpoint(),
               input};
  spec.extra_env = {"TZ=America/Los_Angeles"};
  spec.timeout = std::chrono::seconds(60);
  return run_command(spec);
}

TEST(DeliveryCount, SacctPublishReportsSentAcknowledgedFailed) {
  std::string input = std::string(GCM_SOURCE_DIR) + "/../shared/fixtures/gcm/sample-sacct-output.txt";
  if (!std::filesystem::exists(input)) GTEST_SKIP() << "no fixture " << input;
  // The sanitizer tree builds the unit tests without the gcm program; this case runs in the main tree's stage.
  if (!std::filesystem::exists(GCM_BINARY)) GTEST_SKIP() << GCM_BINARY << " is not built in this tree";
  TempDir tmp;
  const std::string& dir = tmp.path();
  {
    RefusingReceiver rx(0);
    auto r = publish_to(rx, input, dir);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("1 chunk(s) sent, 0 acknowledged (0 record(s)), 1 failed"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("0 record(s) were published before it"), std::string::npos) << r.err;
  }
  {
    RefusingReceiver rx(1);
    auto r = publish_to(rx, input, dir);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("2 chunk(s) sent, 1 acknowledged ("), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("), 1 failed"), std::string::npos) << r.err;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gcm

// NvmlEventWatcher against the project's fake libnvidia-ml.so.1: XID events delivered with their GPU, a GPU that
// refuses registration, a library without the event API, and a prompt stop().
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "agent/nvml_events.h"
#include "gpu/nvml_library.h"

namespace gcm::agent {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// Writes a scenario file and points the fake at it while the object lives.
class Scenario {
 public:
  explicit Scenario(const json& j) {
    char tmpl[] = "/tmp/gcm-nvml-events-XXXXXX";
    int fd = ::mkstemp(tmpl);
    ::close(fd);
    path_ = tmpl;
    std::ofstream(path_) << j.dump();
    ::setenv("GCM_FAKE_NVML_SCENARIO", path_.c_str(), 1);
  }
  ~Scenario() {
    std::filesystem::remove(path_);
    ::unsetenv("GCM_FAKE_NVML_SCENARIO");
  }

 private:
  std::string path_;
};

json gpu(int i) { return {{"name", "NVIDIA H100"}, {"uuid", "GPU-" + std::to_string(i)}}; }

std::shared_ptr<NvmlLibrary> open_fake() {
  const char* env = std::getenv("GCM_FAKE_NVML");
  return NvmlLibrary::open(env && *env ? env : GCM_FAKE_NVML, 2000ms);
}

template <typename Pred>
bool wait_until(Pred pred, std::chrono::milliseconds limit = 5000ms) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(2ms);
  }
  return pred();
}

class Events {
 public:
  NvmlEventWatcher::Callback callback() {
    return [this](const NvmlXid& x) {
      std::lock_guard lock(mu_);
      seen_.push_back(x);
    };
  }
  std::vector<NvmlXid> seen() const {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<NvmlXid> seen_;
};

NvmlEventWatcherOptions quick() {
  NvmlEventWatcherOptions o;
  o.wait_timeout = 100ms;
  return o;
}

TEST(NvmlEventWatcher, DeliversEachXidWithItsGpu) {
  json g1 = gpu(1);
  g1["xid_events"] = json::array({{{"xid", 48}, {"at_ms", 0}}, {{"xid", 79}, {"at_ms", 150}}});
  Scenario s(json{{"devices", json::array({gpu(0), g1})}});
  auto lib = open_fake();
  Events e;
  NvmlEventWatcher w(lib->api(), e.callback(), quick());
  double before = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  w.start();
  ASSERT_TRUE(wait_until([&] { return e.seen().size() == 2; })) << e.seen().size();
  auto seen = e.seen();
  EXPECT_EQ(seen[0].gpu, 1u);
  EXPECT_EQ(seen[0].xid, 48u);
  EXPECT_EQ(seen[1].gpu, 1u);
  EXPECT_EQ(seen[1].xid, 79u);
  EXPECT_GE(seen[0].unix_s, before);
  NvmlEventWatcherStats st = w.stats();
  EXPECT_TRUE(st.running);
  EXPECT_TRUE(st.supported);
  EXPECT_EQ(st.gpus_registered, 2u);
  EXPECT_EQ(st.events, 2u);
  EXPECT_TRUE(st.problems.empty());
  w.stop();
  EXPECT_FALSE(w.stats().running);
}

TEST(NvmlEventWatcher, AGpuThatRefusesRegistrationIsReportedOnceAndTheOthersWatched) {
  json g0 = gpu(0);
  g0["errors"] = {{"nvmlDeviceRegisterEvents", "NOT_SUPPORTED"}};
  g0["xid_events"] = json::array({{{"xid", 13}}});
  json g1 = gpu(1);
  g1["xid_events"] = json::array({{{"xid", 31}}});
  Scenario s(json{{"devices", json::array({g0, g1})}});
  auto lib = open_fake();
  Events e;
  NvmlEventWatcher w(lib->api(), e.callback(), quick());
  w.start();
  ASSERT_TRUE(wait_until([&] { return e.seen().size() == 1; }));
  EXPECT_EQ(e.seen()[0].gpu, 1u);
  EXPECT_EQ(e.seen()[0].xid, 31u);
  NvmlEventWatcherStats st = w.stats();
  EXPECT_TRUE(st.supported);
  EXPECT_EQ(st.gpus_registered, 1u);
  ASSERT_EQ(st.problems.size(), 1u);
  EXPECT_NE(st.problems[0].find("GPU 0"), std::string::npos) << st.problems[0];
  EXPECT_NE(st.problems[0].find("Not Supported"), std::string::npos) << st.problems[0];
}

// A GPU whose NVML calls hang (wedged, or fallen off the bus): its registration times out, the others are watched,
// and stop() still returns (it once joined a thread stuck in nvmlDeviceGetHandleByIndex for ever).
TEST(NvmlEventWatcher, AGpuWhoseRegistrationHangsIsLeftOutAndStopStillReturns) {
  json g0 = gpu(0);
  g0["delays"] = {{"nvmlDeviceGetHandleByIndex_v2", {{"hang", true}}}};
  json g1 = gpu(1);
  g1["xid_events"] = json::array({{{"xid", 31}}});
  Scenario s(json{{"devices", json::array({g0, g1})}});
  auto lib = open_fake();
  Events e;
  NvmlEventWatcherOptions o = quick();
  o.call_timeout = 200ms;
  {
    NvmlEventWatcher w(lib->api(), e.callback(), o);
    w.start();
    ASSERT_TRUE(wait_until([&] { return e.seen().size() == 1; }));
    EXPECT_EQ(e.seen()[0].gpu, 1u);
    NvmlEventWatcherStats st = w.stats();
    EXPECT_EQ(st.gpus_registered, 1u);
    ASSERT_EQ(st.problems.size(), 1u);
    EXPECT_NE(st.problems[0].find("GPU 0: registering for XID events: nvmlDeviceGetHandleByIndex_v2 did not return"),
              std::string::npos)
        << st.problems[0];
    auto t0 = std::chrono::steady_clock::now();
    w.stop();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  }
  // The thread stuck in the fake's hung call holds an init reference for good: drop it for the next test.
  lib->api().Shutdown();
}

TEST(NvmlEventWatcher, ALibraryWithoutTheEventApiIsUnsupported) {
  Scenario s(json{{"devices", json::array({gpu(0)})}});
  auto lib = open_fake();
  nvml::Api api = lib->api();
  api.EventSetWait = nullptr;  // an older driver
  Events e;
  NvmlEventWatcher w(api, e.callback(), quick());
  w.start();
  ASSERT_TRUE(wait_until([&] { return !w.stats().supported; }));
  NvmlEventWatcherStats st = w.stats();
  EXPECT_FALSE(st.running);
  ASSERT_EQ(st.problems.size(), 1u);
  EXPECT_NE(st.problems[0].find("lacks the event API"), std::string::npos) << st.problems[0];
}

TEST(NvmlEventWatcher, NoGpuRegisteredIsUnsupported) {
  json g0 = gpu(0);
  g0["errors"] = {{"nvmlDeviceRegisterEvents", "NOT_SUPPORTED"}};
  Scenario s(json{{"devices", json::array({g0})}});
  auto lib = open_fake();
  Events e;
  NvmlEventWatcher w(lib->api(), e.callback(), quick());
  w.start();
  ASSERT_TRUE(wait_until([&] { return !w.stats().supported; }));
  EXPECT_EQ(w.stats().gpus_registered, 0u);
}

TEST(NvmlEventWatcher, StopReturnsWithinAboutOneWaitTimeout) {
  Scenario s(json{{"devices", json::array({gpu(0)})}});
  auto lib = open_fake();
  Events e;
  NvmlEventWatcherOptions o;
  o.wait_timeout = 300ms;
  NvmlEventWatcher w(lib->api(), e.callback(), o);
  w.start();
  ASSERT_TRUE(wait_until([&] { return w.stats().running; }));
  auto t0 = std::chrono::steady_clock::now();
  w.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1000ms);
  EXPECT_TRUE(e.seen().empty());
}

}  // namespace
}  // namespace gcm::agent

// The agent's hold on NVML against the project's fake libnvidia-ml.so.1: a host without a driver is asked again
// only after the backoff, a host with GPUs is sampled into the window, and unloading stops what uses the library
// first.
#include "agent/gpu_session.h"

#include <stdlib.h>

#include <cstdlib>

#include <gtest/gtest.h>

#include "core/logging.h"

namespace gcm::agent {
namespace {

std::string fake_nvml() {
  const char* env = std::getenv("GCM_FAKE_NVML");
  return env && *env ? env : GCM_FAKE_NVML;
}

AgentOptions fake_options() {
  AgentOptions o;
  o.nvml_library = fake_nvml();
  o.nvml_timeout_s = 2;
  o.path_procfs = "/nonexistent/proc";  // no host GPU list: only NVML's identities
  o.path_sysfs = "/nonexistent/sys";
  return o;
}

// Points the fake at a scenario (or at none: a host without a driver) while it lives.
class FakeScenario {
 public:
  explicit FakeScenario(const char* name) {
    if (name)
      ::setenv("GCM_FAKE_NVML_SCENARIO", (std::string(GCM_SOURCE_DIR) + "/tests/fake_nvml/scenarios/" + name).c_str(),
               1);
    else
      ::unsetenv("GCM_FAKE_NVML_SCENARIO");
  }
  ~FakeScenario() { ::unsetenv("GCM_FAKE_NVML_SCENARIO"); }
};

TEST(GpuSession, AHostWithoutADriverIsAskedAgainOnlyAfterTheBackoff) {
  FakeScenario none(nullptr);
  XidTracker xids;
  AgentCounters counters;
  GpuSession nvml(xids, counters, stderr_logger("nvml-session-test"), nullptr);
  AgentOptions opts = fake_options();
  EXPECT_FALSE(nvml.ensure_loaded(opts));
  EXPECT_FALSE(nvml.loaded());
  EXPECT_FALSE(nvml.error().empty());
  EXPECT_EQ(counters.source("nvml").errors, 1u);
  EXPECT_FALSE(counters.source("nvml").up);
  // Within the backoff's first second the library is not opened again.
  EXPECT_FALSE(nvml.ensure_loaded(opts));
  EXPECT_EQ(counters.source("nvml").errors, 1u);
}

TEST(GpuSession, EachSampleGoesIntoTheWindowOfItsGpu) {
  FakeScenario h100x8("h100x8.json");
  XidTracker xids;
  AgentCounters counters;
  GpuSession nvml(xids, counters, stderr_logger("nvml-session-test"), nullptr);
  ASSERT_TRUE(nvml.ensure_loaded(fake_options())) << nvml.error();
  EXPECT_EQ(nvml.gpu_count(), 8u);
  EXPECT_FALSE(nvml.window_has_samples());
  std::vector<DeviceResult> results = nvml.sample("node1");
  ASSERT_EQ(results.size(), 8u);
  EXPECT_EQ(counters.samples(), 1u);
  EXPECT_TRUE(counters.source("nvml").up);
  EXPECT_TRUE(nvml.window_has_samples());
  ASSERT_EQ(nvml.accumulators().size(), 8u);
  EXPECT_EQ(nvml.accumulators()[3].samples(), 1);
  // The GPUs' UUIDs are known from their answers.
  EXPECT_FALSE(nvml.addresses().uuid_of(3).empty());
}

TEST(GpuSession, UnloadingStopsWhatUsesTheLibraryFirstAndWaitsForTheBackoff) {
  FakeScenario h100x8("h100x8.json");
  XidTracker xids;
  AgentCounters counters;
  bool loaded_at_unload = false;
  int unloads = 0;
  GpuSession* self = nullptr;
  GpuSession nvml(xids, counters, stderr_logger("nvml-session-test"), [&] {
    ++unloads;
    loaded_at_unload = self->loaded();
  });
  self = &nvml;
  AgentOptions opts = fake_options();
  ASSERT_TRUE(nvml.ensure_loaded(opts)) << nvml.error();
  nvml.unload("the NVML options changed");
  EXPECT_EQ(unloads, 1);
  EXPECT_TRUE(loaded_at_unload);
  EXPECT_FALSE(nvml.loaded());
  EXPECT_EQ(nvml.error(), "the NVML options changed");
  EXPECT_FALSE(nvml.ensure_loaded(opts));  // the backoff's first wait has not passed
}

}  // namespace
}  // namespace gcm::agent

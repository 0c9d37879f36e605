// gcm agent on an AMD node: the fake libamd_smi.so as an 8 x MI300X node (gcm --backend amdsmi), with a GPU whose
// graphics clock falls 10 % under load, uncorrected ECC errors that grow, a GPU whose amdsmi calls hang, amdsmi's
// event notifications (a ring hang, a thermal throttle), and a host without amdsmi; the prolog's agent-verdict check
// reading what the agent judged, as on an NVIDIA node.
#include <signal.h>

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agent_node.h"
#include "helpers.h"

namespace gcm::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json mi300x_node() {
  return json::parse(read_text(std::string(GCM_SOURCE_DIR) + "/tests/fake_amdsmi/scenarios/mi300x8.json"));
}

// An agent on the fake amdsmi: [gcm] backend = "amdsmi" in its config, and an NVML path that does not exist, so
// that nothing reaches NVML unless the backend is wrong.
struct AmdAgentNode : AgentNode {
  AmdAgentNode() : AgentNode(0) {
    scenario = mi300x_node();
    std::ofstream(dir + "/config.toml") << "[gcm]\nbackend = \"amdsmi\"\n[gcm.agent]\n";
    for (int i = 0; i < 8; ++i) std::ofstream(dir + "/gpu-jobs/" + std::to_string(i)) << "5\n";
  }
  std::string uuid(int gpu) const { return scenario["devices"][gpu]["uuid"]; }
  std::string gpu_labels(int gpu) const { return "{gpu=\"" + std::to_string(gpu) + "\",uuid=\"" + uuid(gpu) + "\""; }
  void start_amd(std::vector<std::string> extra = {}, std::vector<std::string> more_env = {}) {
    std::vector<std::string> env = {"GCM_FAKE_AMDSMI_SCENARIO=" + dir + "/scenario.json",
                                    std::string("GCM_AMDSMI_LIBRARY=") + GCM_FAKE_AMDSMI,
                                    "GCM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1"};
    env.insert(env.end(), more_env.begin(), more_env.end());
    start(std::move(extra), env);
  }
};

TEST(AgentOnAmd, FindsTheGpuWhoseGraphicsClockFellAndThePrologFailsIt) {
  AmdAgentNode n;
  // From t = 60 s of scenario time (3 s at the time scale below) GPU 3 runs 10 % slower with no violation active:
  // the silent straggler, on the clock AMD's compute units run at.
  n.scenario["devices"][3]["clocks"]["gfx"]["clk"] = {
      {"schedule", json::array({{{"from_s", 0}, {"value", 2100}}, {{"from_s", 60}, {"value", 1890}}})}};
  n.collect_interval = "0.03";
  n.window = "0.3";
  n.start_amd({}, {"GCM_FAKE_AMDSMI_TIME_SCALE=0.05"});
  std::string gpu3 = "gcm_gpu_health_state" + n.gpu_labels(3) + "}";
  ASSERT_TRUE(eventually([&] { return n.value(gpu3) == 2.0; }, 40s)) << n.metrics().substr(0, 2000) << n.diagnosis();
  std::string page = n.metrics();
  EXPECT_NE(page.find("gcm_gpu_health_reason" + n.gpu_labels(3) + ",reason=\"peer_slow\"} 1"), std::string::npos)
      << page.substr(0, 3000);
  for (int i : {0, 1, 2, 4, 5, 6, 7}) EXPECT_EQ(n.value("gcm_gpu_health_state" + n.gpu_labels(i)), 0.0) << "GPU " << i;
  auto dev = n.value("gcm_gpu_peer_deviation_ratio" + n.gpu_labels(3) + ",signal=\"sm_clock\"");
  ASSERT_TRUE(dev.has_value()) << page.substr(0, 3000);
  EXPECT_LT(*dev, -0.05);
  EXPECT_NE(n.log().find("agent: 8 amd GPU(s), driver 6.10.5"), std::string::npos) << n.log().substr(0, 2000);
  EXPECT_EQ(n.log().find("NVML"), std::string::npos) << n.log().substr(0, 2000);
  auto r = n.run_prolog(", stale_windows = 100");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("GPU 3 degraded (peer_slow)"), std::string::npos) << r.out;
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

TEST(AgentOnAmd, GrowingUncorrectedEccFailsItsGpuAndAHungGpuIsNotRespondingWhileTheOthersAreSampled) {
  AmdAgentNode n;
  // GPU 2's uncorrected count grows after a few samples; GPU 5's activity call hangs from its 4th call on.
  n.scenario["devices"][2]["ecc"]["uncorrectable"] = {0, 0, 0, 0, 0, 0, 1, 2};
  n.scenario["devices"][5]["delays"] = {{"amdsmi_get_gpu_activity", {{"hang", true}, {"after_calls", 3}}}};
  n.start_amd({"--nvml-timeout", "0.3"});
  ASSERT_TRUE(eventually([&] { return n.value("gcm_gpu_up" + n.gpu_labels(5)) == 0.0; }, 30s))
      << n.metrics().substr(0, 3000) << n.diagnosis();
  ASSERT_TRUE(eventually(
      [&] {
        return n.metrics().find("gcm_gpu_health_reason" + n.gpu_labels(2) + ",reason=\"ecc_dbe\"} 1") !=
               std::string::npos;
      },
      30s))
      << n.metrics().substr(0, 3000) << n.diagnosis();
  for (int i : {0, 1, 3, 4, 6, 7}) EXPECT_EQ(n.value("gcm_gpu_up" + n.gpu_labels(i)), 1.0) << "GPU " << i;
  // Sampling goes on while GPU 5 is stuck in its call.
  double before = n.value("gcm_agent_samples_total").value_or(0);
  EXPECT_TRUE(eventually([&] { return n.value("gcm_agent_samples_total").value_or(0) >= before + 5; }, 20s));
  ASSERT_TRUE(eventually(
      [&] {
        auto j = json::parse(read_text(n.dir + "/run/agent-state.json"));
        return j["gpus"][2]["health"] == "failed" && j["gpus"][5]["health"] != "ok";
      },
      20s))
      << read_text(n.dir + "/run/agent-state.json");
  auto j = json::parse(read_text(n.dir + "/run/agent-state.json"));
  EXPECT_EQ(j["gpu_library"], "amdsmi") << j.dump(1);
  EXPECT_EQ(j["gpus"][0]["health"], "ok") << j.dump(1);
  EXPECT_EQ(j["gpus"][2]["uuid"], n.uuid(2)) << j.dump(1);
  auto r = n.run_prolog();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("GPU 2 failed (ecc_dbe"), std::string::npos) << r.out;
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

TEST(AgentOnAmd, ARingHangEventFailsItsGpuAndAThermalThrottleEventIsOnlyCounted) {
  AmdAgentNode n;
  n.scenario["devices"][2]["events"] = {{{"type", "RING_HANG"}, {"at_ms", 800}, {"message", "ring gfx_0.0.0 timeout"}}};
  n.scenario["devices"][4]["events"] = {{{"type", "THERMAL_THROTTLE"}, {"at_ms", 800}, {"message", "hotspot"}}};
  n.start_amd();
  std::string hang = "gcm_gpu_amd_events_total" + n.gpu_labels(2) + ",event=\"RING_HANG\"}";
  ASSERT_TRUE(eventually([&] { return n.value(hang) == 1.0; }, 20s)) << n.metrics().substr(0, 3000) << n.diagnosis();
  EXPECT_EQ(n.value("gcm_gpu_amd_events_total" + n.gpu_labels(4) + ",event=\"THERMAL_THROTTLE\"}"), 1.0);
  ASSERT_TRUE(eventually(
      [&] {
        auto j = json::parse(read_text(n.dir + "/run/agent-state.json"));
        return j["gpus"][2]["health"] == "failed";
      },
      20s))
      << read_text(n.dir + "/run/agent-state.json");
  auto j = json::parse(read_text(n.dir + "/run/agent-state.json"));
  EXPECT_EQ(j["gpus"][4]["health"], "ok") << j.dump(1);
  EXPECT_NE(j["gpus"][2]["evidence"].get<std::string>().find("xid: RING_HANG(RESET_GPU,critical)"), std::string::npos)
      << j.dump(1);
  EXPECT_NE(n.log().find("[GPU 2] amdsmi event RING_HANG (RESET_GPU): ring gfx_0.0.0 timeout"), std::string::npos)
      << n.log().substr(0, 3000);
  EXPECT_EQ(n.value("gcm_agent_source_up{source=\"amdsmi_events\""), 1.0) << n.metrics().substr(0, 3000);
  auto r = n.run_prolog();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("GPU 2 failed (xid"), std::string::npos) << r.out;
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

TEST(AgentOnAmd, WithoutAmdsmiItKeepsServingAndSaysWhyNamingAmdsmi) {
  AmdAgentNode n;
  n.start({}, {"GCM_AMDSMI_LIBRARY=/nonexistent/libamd_smi.so", "GCM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1"});
  ASSERT_TRUE(eventually(
      [&] {
        return read_text(n.dir + "/run/agent-state.json").find("/nonexistent/libamd_smi.so") != std::string::npos;
      },
      20s))
      << n.diagnosis();
  auto j = json::parse(read_text(n.dir + "/run/agent-state.json"));
  EXPECT_EQ(j["gpu_library"], "amdsmi") << j.dump(1);
  ASSERT_FALSE(j["problems"].empty()) << j.dump(1);
  EXPECT_EQ(j["problems"][0].get<std::string>().rfind("amdsmi unavailable: ", 0), 0u) << j.dump(1);
  EXPECT_NE(n.log().find("agent: amdsmi unavailable ("), std::string::npos) << n.log();
  EXPECT_EQ(n.value("gcm_agent_source_up{source=\"amdsmi\""), 0.0) << n.metrics().substr(0, 3000);
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

}  // namespace
}  // namespace gcm::testing

// gcm agent end to end with the fake libnvidia-ml.so.1: /metrics while it runs, attribution from mapping files
// (inotify), a hung and a lost GPU that do not stall the others, NVML missing, SIGHUP, SIGTERM, a malformed config,
// the state file and `gcm agent status`, and the prolog failing through agent-verdict.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agent_node.h"
#include "core/http_client.h"
#include "helpers.h"
#include "otlp_receiver_process.h"
#include "process.h"

namespace gcm::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

TEST(Agent, ServesEveryGpuAndAttributesJobsFromMappingFilesAsTheyChange) {
  AgentNode n(4);
  std::ofstream(n.dir + "/gpu-jobs/0") << "77\n";
  std::ofstream(n.dir + "/gpu-jobs/1") << "77\n";
  n.start();
  ASSERT_TRUE(
      eventually([&] { return n.value("gcm_gpu_job_info{gpu=\"1\",uuid=\"GPU-1\",job_id=\"77\"").has_value(); }, 20s))
      << n.metrics().substr(0, 3000) << n.diagnosis();
  EXPECT_EQ(n.value("gcm_gpu_up{gpu=\"3\""), 1);
  EXPECT_EQ(n.value("gcm_gpu_clock_sm_hertz{gpu=\"2\""), 1980e6);
  EXPECT_EQ(n.value("gcm_agent_gpus"), 4);
  EXPECT_FALSE(n.value("gcm_gpu_job_info{gpu=\"2\""));
  // The prolog of a new job writes GPU 2's mapping file: seen through inotify, well before --attribution-refresh.
  std::ofstream(n.dir + "/gpu-jobs/2") << "88\n";
  EXPECT_TRUE(
      eventually([&] { return n.value("gcm_gpu_job_info{gpu=\"2\",uuid=\"GPU-2\",job_id=\"88\"").has_value(); }, 10s))
      << n.metrics().substr(0, 3000);
  // The state file and `gcm agent status` show the same.
  ASSERT_TRUE(
      eventually([&] { return read_text(n.dir + "/run/agent-state.json").find("\"88\"") != std::string::npos; }, 10s));
  auto st = run_gcm({"agent", "status", "--path.run", n.dir + "/run"});
  EXPECT_EQ(st.exit_code, 0) << st.err;
  EXPECT_NE(st.out.find("GPU-2"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("88"), std::string::npos) << st.out;
  auto js = run_gcm({"agent", "status", "--json", "--path.run", n.dir + "/run"});
  ASSERT_EQ(js.exit_code, 0) << js.err;
  auto j = json::parse(js.out);
  EXPECT_EQ(j["gpus"].size(), 4u);
  EXPECT_EQ(j["gpus"][0]["job_id"], "77");
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

TEST(Agent, AHungAndALostGpuDoNotStallTheOthers) {
  AgentNode n(4);
  n.scenario["devices"][1]["delays"] = {{"nvmlDeviceGetTemperature", {{"hang", true}, {"after_calls", 3}}}};
  n.scenario["devices"][2]["errors"] = {{"nvmlDeviceGetUtilizationRates", "GPU_IS_LOST"}};
  n.start({"--nvml-timeout", "0.3"});
  ASSERT_TRUE(eventually([&] { return n.value("gcm_gpu_up{gpu=\"1\"") == 0.0; }, 30s))
      << n.metrics().substr(0, 3000) << n.diagnosis();
  EXPECT_EQ(n.value("gcm_gpu_up{gpu=\"2\""), 0);
  EXPECT_EQ(n.value("gcm_gpu_up{gpu=\"0\""), 1);
  EXPECT_EQ(n.value("gcm_gpu_up{gpu=\"3\""), 1);
  // Sampling goes on: the sample count keeps growing while GPU 1 is stuck in its call.
  double before = n.value("gcm_agent_samples_total").value_or(0);
  EXPECT_TRUE(eventually([&] { return n.value("gcm_agent_samples_total").value_or(0) >= before + 5; }, 20s));
  // The lost GPU is failed in the state file, with the reason.
  ASSERT_TRUE(eventually(
      [&] {
        auto t = read_text(n.dir + "/run/agent-state.json");
        return t.find("\"lost\"") != std::string::npos;
      },
      10s));
  auto j = json::parse(read_text(n.dir + "/run/agent-state.json"));
  EXPECT_EQ(j["gpus"][2]["health"], "failed") << j.dump(1);
  EXPECT_EQ(j["gpus"][0]["health"], "ok") << j.dump(1);
  EXPECT_NE(n.log().find("[GPU 2] lost"), std::string::npos) << n.log();
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

TEST(Agent, WithoutNvmlItKeepsServingAndSaysWhy) {
  AgentNode n(1);
  n.start({}, {"GCM_NVML_LIBRARY=" + n.dir + "/no-such-libnvidia-ml.so.1"});
  ASSERT_TRUE(eventually([&] { return n.value("gcm_agent_nvml_up") == 0.0; }, 20s)) << n.diagnosis();
  EXPECT_TRUE(eventually([&] { return n.value("gcm_agent_source_up{source=\"nvml\"") == 0.0; }, 10s));
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(n.dir + "/run/agent-state.json"); }, 10s));
  auto j = json::parse(read_text(n.dir + "/run/agent-state.json"));
  EXPECT_NE(j["nvml_error"].get<std::string>().find("no-such-libnvidia-ml"), std::string::npos) << j.dump(1);
  // Said once, not once per retry.
  std::this_thread::sleep_for(3s);  // several retry periods of the backoff (1 s, 2 s) pass
  std::string log = n.log();
  size_t count = 0;
  for (size_t p = 0; (p = log.find("NVML unavailable", p)) != std::string::npos; ++p) ++count;
  EXPECT_EQ(count, 1u) << log;
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

TEST(Agent, SighupReadsTheConfigAgainAndSigtermExitsZero) {
  AgentNode n(2);
  std::ofstream(n.dir + "/config.toml") << "[gcm.agent]\ntextfile = \"" << n.dir << "/a.prom\"\n";
  n.start();
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(n.dir + "/a.prom"); }, 20s)) << n.diagnosis();
  std::ofstream(n.dir + "/config.toml") << "[gcm.agent]\ntextfile = \"" << n.dir << "/b.prom\"\n";
  ASSERT_EQ(::kill(n.proc->pid(), SIGHUP), 0);
  EXPECT_TRUE(eventually([&] { return std::filesystem::exists(n.dir + "/b.prom"); }, 20s)) << n.diagnosis();
  EXPECT_NE(read_text(n.dir + "/b.prom").find("gcm_gpu_up{gpu=\"1\""), std::string::npos);
  // A bad value on reload is refused and the agent runs on with what it had.
  std::ofstream(n.dir + "/config.toml") << "[gcm.agent]\nxid_clear_after = \"soon\"\n";
  ASSERT_EQ(::kill(n.proc->pid(), SIGHUP), 0);
  EXPECT_TRUE(eventually([&] { return n.log().find("reload refused") != std::string::npos; }, 20s)) << n.diagnosis();
  EXPECT_TRUE(n.value("gcm_agent_windows_total").has_value());
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

TEST(Agent, AMalformedConfigIsExit2NamingTheKeyAndLine) {
  auto dir = temp_dir("agent-config");
  std::ofstream(dir + "/config.toml") << "[gcm.agent]\nlisten = \":0\"\n\ncollect_interval = \"often\"\n";
  auto r = run_gcm({"--config", dir + "/config.toml", "agent", "--path.run", dir});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir + "/config.toml:4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("collect_interval"), std::string::npos) << r.err;
  auto bad = run_gcm({"--config", "/dev/null", "agent", "--spool-max-bytes", "lots"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--spool-max-bytes"), std::string::npos) << bad.err;
  std::filesystem::remove_all(dir);
}

TEST(Agent, StatusWithoutAnAgentIsExit1AndSaysWhere) {
  auto dir = temp_dir("agent-status");
  auto r = run_gcm({"agent", "status", "--path.run", dir});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(dir + "/agent-state.json"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

// The [agent] profile of the suite file runs in the agent: verdicts as gcm_health_check_status, a check that hangs
// is reported at its timeout while sampling goes on, and the state file lists the checks.
TEST(Agent, RunsTheSuitesAgentChecksInProcessAndReportsAHungOne) {
  AgentNode n(2);
  std::ofstream(n.dir + "/suite.toml")
      << "[suite]\ncluster = \"c\"\n[environment]\nGCM_FAKE_NVML_SCENARIO = \"" << n.dir << "/scenario.json\"\n"
      << "[agent]\ntimeout = 2\n"
      << "[[agent.checks]]\nname = \"gpu count\"\ncheck = \"check-nvidia-smi\"\nargs = [\"-c\", \"gpu_num\"]\n"
      << "options = { gpu_num = 2 }\n"
      << "[[agent.checks]]\nname = \"disk\"\ncommand = [\"/bin/sh\", \"-c\", \"echo 'CRITICAL: /scratch is full'; exit "
         "2\"]\n"
      << "[[agent.checks]]\nname = \"stuck\"\ncommand = [\"/bin/sleep\", \"30\"]\ntimeout = 1\n";
  n.start({"--check-interval", "60"});
  ASSERT_TRUE(eventually([&] { return n.value("gcm_health_check_status{check=\"gpu count\"") == 0.0; }, 20s))
      << n.metrics().substr(0, 4000) << n.diagnosis();
  EXPECT_TRUE(eventually([&] { return n.value("gcm_health_check_status{check=\"disk\"") == 2.0; }, 10s));
  EXPECT_TRUE(eventually([&] { return n.value("gcm_health_check_status{check=\"stuck\"") == 2.0; }, 10s))
      << n.metrics().substr(0, 4000);
  double before = n.value("gcm_agent_samples_total").value_or(0);
  EXPECT_TRUE(eventually([&] { return n.value("gcm_agent_samples_total").value_or(0) > before + 3; }, 10s));
  auto j = json::parse(read_text(n.dir + "/run/agent-state.json"));
  bool listed = false;
  for (const auto& c : j["checks"])
    if (c["name"] == "disk") listed = c["message"].get<std::string>().find("/scratch is full") != std::string::npos;
  EXPECT_TRUE(listed) << j.dump(1);
  // SIGUSR1 runs them again now rather than at the next --check-interval.
  auto count_runs = [&] {
    std::string log = n.log();
    size_t c = 0;
    for (size_t p = 0; (p = log.find("check 'disk'", p)) != std::string::npos; ++p) ++c;
    return c;
  };
  size_t runs = count_runs();
  ASSERT_EQ(::kill(n.proc->pid(), SIGUSR1), 0);
  EXPECT_TRUE(eventually([&] { return count_runs() > runs; }, 10s)) << n.log();
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

// A built-in check that hangs for real: check-syslogs link-flaps reading a "syslog" that is a FIFO whose writer holds
// it open and never writes, as a log on a hung NFS mount would; its own --timeout (3600 s) is longer than the
// [agent] entry's 1 s, so only the agent's timeout can end the wait. The agent reports it at its timeout (CRITICAL,
// and gcm_agent_source_timeouts_total{source="checks"}), does not start it again while it is stuck though rounds
// keep coming every second, and windows keep closing; once the writer goes away the check returns and its real
// verdict replaces the timeout.
TEST(Agent, AHungBuiltInCheckIsAbandonedAtItsTimeoutWhileWindowsKeepClosing) {
  AgentNode n(2);
  std::string fifo = n.dir + "/syslog";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int writer = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);  // the FIFO has a writer that sends nothing
  ASSERT_GE(writer, 0);
  std::ofstream(n.dir + "/suite.toml")
      << "[suite]\ncluster = \"c\"\n[agent]\n"
      << "[[agent.checks]]\nname = \"flaps\"\ncheck = \"check-syslogs link-flaps\"\ntimeout = 1\n"
      << "options = { syslog_file = \"" << fifo << "\", timeout = 3600 }\n";
  n.start({"--check-interval", "1"});
  ASSERT_TRUE(eventually([&] { return n.value("gcm_health_check_status{check=\"flaps\"") == 2.0; }, 20s))
      << n.metrics().substr(0, 4000) << n.diagnosis();
  EXPECT_EQ(n.value("gcm_agent_source_timeouts_total{source=\"checks\""), 1.0);
  // Several check rounds and windows later it is still the one timeout: the stuck check was not started again.
  double windows = n.value("gcm_agent_windows_total").value_or(0);
  EXPECT_TRUE(eventually([&] { return n.value("gcm_agent_windows_total").value_or(0) >= windows + 8; }, 30s))
      << n.diagnosis();
  EXPECT_EQ(n.value("gcm_agent_source_timeouts_total{source=\"checks\""), 1.0) << n.log();
  EXPECT_EQ(n.value("gcm_health_check_status{check=\"flaps\""), 2.0);
  auto state = json::parse(read_text(n.dir + "/run/agent-state.json"));
  bool reported = false;
  for (const auto& c : state["checks"])
    if (c["name"] == "flaps") reported = c["message"].get<std::string>().find("abandoned") != std::string::npos;
  EXPECT_TRUE(reported) << state.dump(1);
  ::close(writer);  // the read returns (end of file): the check finishes and says what it found
  EXPECT_TRUE(eventually([&] { return n.value("gcm_health_check_status{check=\"flaps\"") == 0.0; }, 20s))
      << n.metrics().substr(0, 4000) << n.diagnosis();
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

// The kernel log's other hardware events reach /metrics: the recorded kmsg fixture (the kernel's record format,
// dictionary lines included) written to the FIFO standing in for /dev/kmsg gives a series of each kind, an SXid
// series per NVSwitch and code, and a log line per event; the GPU XID in it still goes to the XID counters.
TEST(Agent, KernelEventsOfEveryKindFromTheKernelLogReachMetrics) {
  AgentNode n(2);
  ASSERT_EQ(::mkfifo((n.dir + "/kmsg").c_str(), 0600), 0);
  n.start();
  std::ofstream kmsg(n.dir + "/kmsg");
  kmsg << read_text(std::string(GCM_SOURCE_DIR) + "/tests/fixtures/health/kernel-log/hw-events-kmsg.txt") << std::flush;
  ASSERT_TRUE(eventually(
      [&] {
        return n.value("gcm_nvswitch_sxid_errors_total{nvswitch=\"1\",pci_bus_id=\"0000:a6:00.0\",sxid=\"12028\"}") ==
               1.0;
      },
      20s))
      << n.metrics().substr(0, 4000) << n.diagnosis();
  std::string page = n.metrics();
  for (const char* series : {
           "gcm_node_kernel_events_total{kind=\"sxid\",class=\"fatal\",device=\"0000:a6:00.0\"} 1\n",
           "gcm_node_kernel_events_total{kind=\"link_down\",class=\"infiniband\",device=\"ib1\"} 1\n",
           "gcm_node_kernel_events_total{kind=\"link_up\",class=\"ethernet\",device=\"eth2\"} 1\n",
           "gcm_node_kernel_events_total{kind=\"mce\",class=\"uncorrected\",device=\"cpu20\"} 1\n",
           "gcm_node_kernel_events_total{kind=\"pcie_aer\",class=\"fatal\",device=\"0000:01:00.0\"} 1\n",
           "gcm_nvswitch_sxid_errors_total{nvswitch=\"1\",pci_bus_id=\"0000:a6:00.0\",sxid=\"20034\"} 1\n",
           "gcm_gpu_xid_errors_total{gpu=\"-1\",uuid=\"unknown\",xid=\"74\"} 1\n",
       })
    EXPECT_NE(page.find(series), std::string::npos) << "missing: " << series << page.substr(0, 6000);
  EXPECT_TRUE(n.value("gcm_node_kernel_events_last_timestamp_seconds{kind=\"mce\",class=\"fatal\"").has_value());
  EXPECT_TRUE(
      eventually([&] { return n.log().find("kernel log: link_down (infiniband) on 'ib1'") != std::string::npos; }, 10s))
      << n.log();
  // Each reaches the node's state by the catalogue: the fatal SXid, the uncorrected machine checks and the fatal
  // AER on 0000:01:00.0 (none of the fake GPUs, at 0000:1N:00.0) fail the node; ib1, down with no link up after,
  // degrades it. The corrected and non-fatal SXid, the Ethernet flap and the thermal events are counted only.
  ASSERT_TRUE(eventually([&] { return n.value("gcm_node_health_state{reason=\"ib_link_down\"") == 2.0; }, 10s))
      << n.metrics().substr(0, 6000);
  EXPECT_EQ(n.value("gcm_node_health_state{reason=\"sxid_fatal\""), 3.0);
  EXPECT_EQ(n.value("gcm_node_health_state{reason=\"mce_uncorrected\""), 3.0);
  EXPECT_EQ(n.value("gcm_node_health_state{reason=\"pcie_aer\""), 3.0);
  EXPECT_EQ(n.value("gcm_node_health_state{reason=\"fabric_manager\""), 0.0) << "no NVSwitch under --path.sysfs";
  ASSERT_TRUE(eventually(
      [&] { return read_text(n.dir + "/run/agent-state.json").find("\"ib_link_down\"") != std::string::npos; }, 10s));
  auto j = json::parse(read_text(n.dir + "/run/agent-state.json"));
  ASSERT_EQ(j["node"].size(), 4u) << j.dump(1);
  EXPECT_EQ(j["node"][0]["reason"], "sxid_fatal") << j.dump(1);
  EXPECT_EQ(j["node"][0]["health"], "failed") << j.dump(1);
  EXPECT_EQ(j["gpus"][0]["health"], "ok") << "the node's events are none of its GPUs'" << j.dump(1);
  auto st = run_gcm({"agent", "status", "--path.run", n.dir + "/run"});
  EXPECT_NE(st.out.find("failed    mce_uncorrected: mce uncorrected on cpu"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("degraded  ib_link_down: link_down infiniband on ib1"), std::string::npos) << st.out;
  auto r = n.run_prolog();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("CRITICAL: the node is unhealthy: node failed (sxid_fatal)"), std::string::npos) << r.out;
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

// An NVLink that goes inactive with no error counted (what gpud's users met: dead links, GPUs reported healthy):
// GPU 1 has 4 links up, then link 2 goes down 2 s in (the fake's schedule) with its CRC counters still at 0. The
// GPU is degraded for nvlink_down though idle (no job), the prolog fails it, GPU 0 stays ok.
TEST(Agent, AnNvlinkThatGoesInactiveWithoutErrorsIsNvlinkDown) {
  AgentNode n(2);
  for (int gpu : {0, 1}) {
    json links = json::array();
    for (int l = 0; l < 4; ++l)
      links.push_back({{"state", 1}, {"replay", 0}, {"recovery", 0}, {"crc_flit", 0}, {"crc_data", 0}});
    if (gpu == 1)
      links[2]["state"] = {{"schedule", json::array({{{"from_s", 0}, {"value", 1}}, {{"from_s", 2}, {"value", 0}}})}};
    n.scenario["devices"][gpu]["nvlinks"] = links;
    n.scenario["devices"][gpu]["utilization"] = {{"gpu", 0}, {"memory", 0}};  // idle: the rule does not wait for a job
  }
  n.start();
  ASSERT_TRUE(eventually([&] { return n.value("gcm_gpu_nvlink_links_active{gpu=\"1\"") == 4.0; }, 20s))
      << n.metrics().substr(0, 4000) << n.diagnosis();
  EXPECT_EQ(n.value("gcm_gpu_health_state{gpu=\"1\""), 0.0) << "all its links up";
  ASSERT_TRUE(eventually([&] { return n.value("gcm_gpu_health_state{gpu=\"1\"") == 2.0; }, 20s))
      << n.metrics().substr(0, 4000);
  EXPECT_EQ(n.value("gcm_gpu_nvlink_links_active{gpu=\"1\""), 3.0);
  EXPECT_EQ(n.value("gcm_gpu_health_reason{gpu=\"1\",uuid=\"GPU-1\",reason=\"nvlink_down\""), 1.0);
  EXPECT_EQ(n.value("gcm_gpu_health_reason{gpu=\"1\",uuid=\"GPU-1\",reason=\"nvlink_errors\""), 0.0);
  EXPECT_EQ(n.value("gcm_gpu_health_state{gpu=\"0\""), 0.0);
  auto r = n.run_prolog();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("GPU 1 degraded (nvlink_down)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nvlink_down: 3 of the 4 NVLinks it had are active"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

// The node's reasons clear by their rules, and an AER error on a GPU's own address is that GPU's: GPU 1 (0000:11:00.0)
// is failed with pcie_aer and the node has no pcie_aer; an InfiniBand port that comes back clears ib_link_down; on
// an NVSwitch system (a nvidia-nvswitch device under --path.sysfs) a stopped Fabric Manager unit (a systemctl on
// PATH that says "inactive") is the node's fabric_manager reason until the unit is active again.
TEST(Agent, NodeReasonsClearByTheirRulesAndAnAerOnAGpusAddressIsThatGpus) {
  AgentNode n(2);
  ASSERT_EQ(::mkfifo((n.dir + "/kmsg").c_str(), 0600), 0);
  std::filesystem::create_directories(n.dir + "/sys/bus/pci/drivers/nvidia-nvswitch/0000:a6:00.0");
  std::filesystem::create_directories(n.dir + "/bin");
  std::ofstream(n.dir + "/fm-state") << "inactive\n";
  {
    std::ofstream sc(n.dir + "/bin/systemctl");
    sc << "#!/bin/sh\n[ \"$1 $2\" = \"is-active nvidia-fabricmanager.service\" ] || exit 4\nstate=$(cat " << n.dir
       << "/fm-state)\necho \"$state\"\n[ \"$state\" = active ]\n";
  }
  std::filesystem::permissions(n.dir + "/bin/systemctl", std::filesystem::perms::owner_all);
  n.start({"--path.sysfs", n.dir + "/sys"},
          {"GCM_FAKE_NVML_SCENARIO=" + n.dir + "/scenario.json", std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML,
           "PATH=" + n.dir + "/bin:" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin")});
  ASSERT_TRUE(eventually([&] { return n.value("gcm_node_health_state{reason=\"fabric_manager\"") == 2.0; }, 20s))
      << n.metrics().substr(0, 6000) << n.diagnosis();
  auto r = n.run_prolog();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("nvidia-fabricmanager.service is inactive"), std::string::npos) << r.out;
  std::ofstream(n.dir + "/fm-state") << "active\n";
  EXPECT_TRUE(eventually([&] { return n.value("gcm_node_health_state{reason=\"fabric_manager\"") == 0.0; }, 20s))
      << n.log();

  std::ofstream kmsg(n.dir + "/kmsg");
  double uptime = std::stod(read_text("/proc/uptime"));
  std::string ts = std::to_string(static_cast<int64_t>(uptime * 1e6));
  kmsg << "6,2001," << ts << ",-;mlx5_core 0000:18:00.0 ib0: Lost carrier\n"
       << "3,2002," << ts << ",-;pcieport 0000:10:01.0: AER: Uncorrectable (Fatal) error message received from "
       << "0000:11:00.0\n"
       << "3,2003," << ts << ",-;nvidia 0000:11:00.0: PCIe Bus Error: severity=Uncorrectable (Fatal), "
       << "type=Inaccessible, (Unregistered Agent ID)\n"
       << std::flush;
  ASSERT_TRUE(eventually([&] { return n.value("gcm_node_health_state{reason=\"ib_link_down\"") == 2.0; }, 20s))
      << n.metrics().substr(0, 6000);
  ASSERT_TRUE(eventually([&] { return n.value("gcm_gpu_health_state{gpu=\"1\"") == 3.0; }, 20s))
      << n.metrics().substr(0, 6000);
  EXPECT_EQ(n.value("gcm_gpu_health_reason{gpu=\"1\",uuid=\"GPU-1\",reason=\"pcie_aer\""), 1.0);
  EXPECT_EQ(n.value("gcm_gpu_health_state{gpu=\"0\""), 0.0);
  EXPECT_EQ(n.value("gcm_node_health_state{reason=\"pcie_aer\""), 0.0) << "the GPU's, not the node's";
  kmsg << "6,2004," << ts << ",-;IPv6: ADDRCONF(NETDEV_CHANGE): ib0: link becomes ready\n" << std::flush;
  EXPECT_TRUE(eventually([&] { return n.value("gcm_node_health_state{reason=\"ib_link_down\"") == 0.0; }, 20s))
      << n.metrics().substr(0, 6000);
  EXPECT_NE(n.log().find("node reason ib_link_down cleared"), std::string::npos) << n.log();
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

// An XID of a GPU that does not answer is its own: GPU 1's NVML calls hang from the agent's start (it never gave
// its UUID or address), GPU 2 answers, then hangs. The driver's view of the GPUs (a fixture under --path.procfs and
// --path.sysfs) gives GPU 1's address and UUID; GPU 2 keeps what NVML said before it went silent. Only an address
// no GPU of the node has is gpu -1.
TEST(Agent, AnXidOfAGpuThatDoesNotAnswerIsCountedUnderThatGpu) {
  AgentNode n(3);
  n.scenario["devices"][1]["delays"] = {{"nvmlDeviceGetHandleByIndex_v2", {{"hang", true}}}};
  n.scenario["devices"][2]["delays"] = {{"nvmlDeviceGetTemperature", {{"hang", true}, {"after_calls", 3}}}};
  for (int i = 0; i < 3; ++i) {
    std::string address = "0000:1" + std::to_string(i) + ":00.0";
    std::filesystem::create_directories(n.dir + "/proc/driver/nvidia/gpus/" + address);
    std::ofstream(n.dir + "/proc/driver/nvidia/gpus/" + address + "/information")
        << "Model: \t\t NVIDIA H100 80GB HBM3\nGPU UUID: \t GPU-" << i << "\nBus Location: \t " << address
        << "\nDevice Minor: \t " << i << "\n";
    std::filesystem::create_directories(n.dir + "/sys/bus/pci/drivers/nvidia/" + address);
    std::ofstream(n.dir + "/sys/bus/pci/drivers/nvidia/" + address + "/class") << "0x030200\n";
  }
  ASSERT_EQ(::mkfifo((n.dir + "/kmsg").c_str(), 0600), 0);
  n.start({"--nvml-timeout", "0.3", "--path.procfs", n.dir + "/proc", "--path.sysfs", n.dir + "/sys"});
  std::ofstream kmsg(n.dir + "/kmsg");
  double uptime = std::stod(read_text("/proc/uptime"));
  std::string ts = std::to_string(static_cast<int64_t>(uptime * 1e6));
  kmsg << "4,1001," << ts << ",-;NVRM: Xid (PCI:0000:11:00): 79, pid=1234, GPU has fallen off the bus.\n"
       << "4,1002," << ts << ",-;NVRM: Xid (PCI:0000:4e:00): 13, pid=1234, Graphics Exception\n"
       << std::flush;
  ASSERT_TRUE(
      eventually([&] { return n.value("gcm_gpu_xid_errors_total{gpu=\"1\",uuid=\"GPU-1\",xid=\"79\"}") == 1.0; }, 20s))
      << n.metrics().substr(0, 4000) << n.diagnosis();
  EXPECT_EQ(n.value("gcm_gpu_xid_errors_total{gpu=\"-1\",uuid=\"unknown\",xid=\"13\"}"), 1.0) << "no GPU's address";
  EXPECT_EQ(n.value("gcm_gpu_up{gpu=\"1\",uuid=\"GPU-1\"}"), 0.0) << "its uuid label, though NVML never said it";
  // GPU 2 goes silent after its first samples; an XID on its address afterwards is still its own.
  ASSERT_TRUE(eventually([&] { return n.value("gcm_gpu_up{gpu=\"2\"") == 0.0; }, 20s)) << n.metrics().substr(0, 3000);
  kmsg << "4,1003," << ts << ",-;NVRM: Xid (PCI:0000:12:00): 79, pid=1234, GPU has fallen off the bus.\n" << std::flush;
  ASSERT_TRUE(
      eventually([&] { return n.value("gcm_gpu_xid_errors_total{gpu=\"2\",uuid=\"GPU-2\",xid=\"79\"}") == 1.0; }, 20s))
      << n.metrics().substr(0, 4000);
  // The detector fails both (XID 79 needs a reboot) and the prolog says so.
  ASSERT_TRUE(eventually(
      [&] {
        auto j = json::parse(read_text(n.dir + "/run/agent-state.json"), nullptr, false);
        return !j.is_discarded() && j["gpus"][1]["health"] == "failed" && j["gpus"][2]["health"] == "failed";
      },
      20s))
      << read_text(n.dir + "/run/agent-state.json");
  auto j = json::parse(read_text(n.dir + "/run/agent-state.json"));
  EXPECT_EQ(j["gpus"][1]["uuid"], "GPU-1") << j.dump(1);
  EXPECT_EQ(j["gpus"][1]["active_xids"], json::array({79})) << j.dump(1);
  EXPECT_EQ(j["gpus"][0]["health"], "ok") << j.dump(1);
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

// XIDs from NVML's event API (GPU 0, XID 79 at 0.5 s) and from the kernel log (a FIFO standing in for /dev/kmsg:
// XID 48 on GPU 1's PCI address, and the same XID 79 on GPU 0, which is counted once) reach a real Prometheus
// scraping the agent, and PromQL's increase() answers.
TEST(Agent, XidsFromNvmlEventsAndTheKernelLogReachPrometheus) {
  ASSERT_FALSE(find_executable("prometheus").empty()) << "prometheus is not installed (scripts/install-deps.sh)";
  AgentNode n(2);
  n.scenario["devices"][0]["xid_events"] = json::array({{{"xid", 79}, {"at_ms", 500}}});
  ASSERT_EQ(::mkfifo((n.dir + "/kmsg").c_str(), 0600), 0);
  n.start();
  // The writer side of the FIFO: the kernel's record format, one record per line.
  std::ofstream kmsg(n.dir + "/kmsg");
  ASSERT_TRUE(eventually([&] { return n.value("gcm_gpu_xid_errors_total{gpu=\"0\"").has_value(); }, 20s))
      << n.metrics().substr(0, 3000) << n.diagnosis();
  // Records stamped now (microseconds since boot), as the kernel would: the XID 79 both sources report at about
  // the same time is one event.
  double uptime = std::stod(read_text("/proc/uptime"));
  std::string ts = std::to_string(static_cast<int64_t>(uptime * 1e6));
  kmsg << "4,1001," << ts
       << ",-;NVRM: Xid (PCI:0000:11:00): 48, pid=1234, name=python, An uncorrectable double bit "
          "error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.\n"
       << "4,1002," << ts << ",-;NVRM: Xid (PCI:0000:10:00): 79, pid=1234, GPU has fallen off the bus.\n"
       << std::flush;
  ASSERT_TRUE(
      eventually([&] { return n.value("gcm_gpu_xid_errors_total{gpu=\"1\",uuid=\"GPU-1\",xid=\"48\"") == 1.0; }, 20s))
      << n.metrics().substr(0, 4000) << n.diagnosis();
  EXPECT_EQ(n.value("gcm_gpu_xid_errors_total{gpu=\"0\",uuid=\"GPU-0\",xid=\"79\""), 1.0) << "counted once";
  EXPECT_EQ(n.value("gcm_gpu_xid_active{gpu=\"1\",uuid=\"GPU-1\",xid=\"48\""), 1.0);
  EXPECT_TRUE(n.value("gcm_gpu_xid_last_timestamp_seconds{gpu=\"1\"").has_value());
  // The detector fails GPU 1 (XID 48 needs a reset) and the state file says why.
  EXPECT_TRUE(eventually([&] { return n.value("gcm_gpu_health_state{gpu=\"1\"") == 3.0; }, 10s))
      << n.metrics().substr(0, 4000);
  EXPECT_TRUE(
      eventually([&] { return n.value("gcm_gpu_health_reason{gpu=\"1\",uuid=\"GPU-1\",reason=\"xid\"") == 1.0; }, 10s));

  int prom_port = free_port();
  std::ofstream(n.dir + "/prometheus.yml") << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                           << "scrape_configs:\n  - job_name: agent\n    static_configs:\n"
                                           << "      - targets: ['127.0.0.1:" << n.port << "']\n";
  BackgroundProcess prom(
      {"prometheus", "--config.file=" + n.dir + "/prometheus.yml", "--storage.tsdb.path=" + n.dir + "/tsdb",
       "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
      n.dir + "/prometheus.stderr");
  HttpClient http;
  std::string query = "http://127.0.0.1:" + std::to_string(prom_port) +
                      "/api/v1/query?query=sum%20by%20(xid)%20(gcm_gpu_xid_errors_total)";
  json result;
  ASSERT_TRUE(eventually(
      [&] {
        try {
          auto r = http.get(query, 2s);
          result = json::parse(r.body)["data"]["result"];
          return result.size() == 2;
        } catch (const std::exception&) {
          return false;
        }
      },
      60s))
      << result.dump() << read_text(n.dir + "/prometheus.stderr").substr(0, 2000);
  std::map<std::string, std::string> by_xid;
  for (const auto& r : result) by_xid[r["metric"]["xid"]] = r["value"][1];
  EXPECT_EQ(by_xid["48"], "1");
  EXPECT_EQ(by_xid["79"], "1");
  // increase() over the window: the counter is monotonic, so it answers without resets (0 while nothing new).
  // (It needs two scrapes in its range.)
  json inc;
  EXPECT_TRUE(eventually(
      [&] {
        inc = json::parse(http.get("http://127.0.0.1:" + std::to_string(prom_port) +
                                       "/api/v1/query?query=increase(gcm_gpu_xid_errors_total%5B5m%5D)",
                                   2s)
                              .body);
        return inc["status"] == "success" && inc["data"]["result"].size() == 2;
      },
      30s))
      << inc.dump();
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

// The zombie GPU end to end, in compressed time: 8 busy GPUs of one job (tests/fake_nvml/scenarios/
// h100x8-slow-gpu3.json); from t = 60 s of scenario time GPU 3's SM clock is 10 % lower with no throttle reason.
// At time scale 0.05 (60 s in 3 s) and 0.3 s windows, the agent's detector finds it, degrades it with the reason
// peer_slow, leaves the other seven ok, and the prolog's agent-verdict fails the node.
TEST(Agent, FindsTheSlowGpuOfAJobAndThePrologFailsIt) {
  AgentNode n(0);
  n.scenario = json::parse(read_text(std::string(GCM_SOURCE_DIR) + "/tests/fake_nvml/scenarios/h100x8-slow-gpu3.json"));
  for (int i = 0; i < 8; ++i) std::ofstream(n.dir + "/gpu-jobs/" + std::to_string(i)) << "5\n";
  n.collect_interval = "0.03";
  n.window = "0.3";
  n.start({}, {"GCM_FAKE_NVML_SCENARIO=" + n.dir + "/scenario.json", std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML,
               "GCM_FAKE_NVML_TIME_SCALE=0.05"});
  std::string gpu3 = "gcm_gpu_health_state{gpu=\"3\",uuid=\"GPU-00000003-1111-2222-3333-444455550003\"}";
  ASSERT_TRUE(eventually([&] { return n.value(gpu3) == 2.0; }, 40s)) << n.metrics().substr(0, 2000) << n.diagnosis();
  std::string page = n.metrics();
  EXPECT_NE(page.find("gcm_gpu_health_reason{gpu=\"3\",uuid=\"GPU-00000003-1111-2222-3333-444455550003\","
                      "reason=\"peer_slow\"} 1"),
            std::string::npos)
      << page.substr(0, 3000);
  for (int i : {0, 1, 2, 4, 5, 6, 7})
    EXPECT_EQ(n.value("gcm_gpu_health_state{gpu=\"" + std::to_string(i) + "\""), 0.0) << "GPU " << i;
  auto dev = n.value(
      "gcm_gpu_peer_deviation_ratio{gpu=\"3\",uuid=\"GPU-00000003-1111-2222-3333-444455550003\","
      "signal=\"sm_clock\"");
  ASSERT_TRUE(dev.has_value());
  EXPECT_LT(*dev, -0.05);
  EXPECT_NE(n.log().find("[GPU 3] ok -> suspect"), std::string::npos) << n.log().substr(0, 3000);
  auto r = n.run_prolog(", stale_windows = 100");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("GPU 3 degraded (peer_slow)"), std::string::npos) << r.out;
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
}

// OTLP push through the spool: the receiver is killed while windows keep coming and started again on the same
// port; every window arrives, in order, none twice.
//
// The outage is 60 s: 2 windows at the default --window of 30 s. Here windows are 0.1 s and the outage lasts
// 60 of them (about 6 s): 30 times the backlog in the spool, and more failed sends than the outage
// brings (about 7: after 0, 1, 3, 7 and 15 s, then one per window). That is the same test in compressed time because
// neither the spool nor the sender looks at the clock, except for the sender's backoff between attempts, and that
// wait ends at each new window (its 30 s cap is reached after 5 failures in both cases); what a longer outage
// changes is how many windows wait on disk, and that is what is scaled up.
TEST(Agent, EveryWindowReachesTheOtlpReceiverInOrderAcrossAnOutage) {
  AgentNode n(2);
  n.collect_interval = "0.02";
  n.window = "0.1";
  int http_port = free_port(), grpc_port = free_port();
  auto rx = std::make_unique<OtlpReceiverProcess>(n.dir, http_port, grpc_port);
  n.start({"--otlp-endpoint", "http://127.0.0.1:" + std::to_string(http_port)});
  std::vector<int64_t> windows;
  auto collect_until = [&](int64_t last, std::chrono::seconds deadline) {
    auto end = std::chrono::steady_clock::now() + deadline;
    while (windows.empty() || windows.back() < last) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      auto j = rx->next(left);
      if (!j) return false;
      if (int64_t w = window_number(*j); w >= 0) windows.push_back(w);
    }
    return true;
  };
  ASSERT_TRUE(collect_until(3, 30s)) << n.diagnosis();
  rx->kill9();
  RefusedPorts outage({http_port, grpc_port});
  double down_at = n.value("gcm_agent_windows_total").value_or(0);
  // The outage: 60 windows close into the spool.
  ASSERT_TRUE(eventually([&] { return n.value("gcm_agent_windows_total").value_or(0) >= down_at + 60; }, 60s))
      << n.metrics().substr(0, 2000) << n.diagnosis();
  EXPECT_GE(n.value("gcm_agent_export_failures_total").value_or(0), 7);
  EXPECT_GE(n.value("gcm_agent_spool_entries").value_or(0), 50) << "the outage's windows wait on disk";
  int64_t during = static_cast<int64_t>(n.value("gcm_agent_windows_total").value_or(0));
  outage.release();
  rx = std::make_unique<OtlpReceiverProcess>(n.dir, http_port, grpc_port);
  ASSERT_TRUE(collect_until(during + 2, 60s)) << n.diagnosis();
  for (size_t i = 0; i < windows.size(); ++i) ASSERT_EQ(windows[i], windows[0] + static_cast<int64_t>(i)) << i << n.diagnosis();
  EXPECT_EQ(windows[0], 1);
  EXPECT_GE(static_cast<int64_t>(windows.size()), during + 2);
  EXPECT_EQ(n.value("gcm_agent_dropped_points_total"), 0);
  EXPECT_EQ(n.proc->stop(SIGTERM, 20s), 0);
}

// The prolog's agent-verdict: a node whose agent saw a lost GPU fails its next prolog with the agent's reason; once
// the agent is gone for more than 3 windows the same state is only a warning.
TEST(Agent, PrologFailsThroughAgentVerdictWhenAGpuFailed) {
  AgentNode n(2);
  n.scenario["devices"][1]["errors"] = {{"nvmlDeviceGetUtilizationRates", "GPU_IS_LOST"}};
  n.start();
  ASSERT_TRUE(eventually(
      [&] { return read_text(n.dir + "/run/agent-state.json").find("\"failed\"") != std::string::npos; }, 20s))
      << n.diagnosis();
  auto r = n.run_prolog();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("GPU 1 failed (lost)"), std::string::npos) << r.out;
  // The agent stops: its last state ages past 3 windows of 0.5 s, and the prolog passes with a warning.
  EXPECT_EQ(n.proc->stop(SIGTERM, 10s), 0);
  std::this_thread::sleep_for(2s);  // more than 3 windows of 0.5 s: what the check's rule is about
  auto later = n.run_prolog();
  EXPECT_EQ(later.exit_code, 0) << later.out << later.err;
  EXPECT_NE(later.out.find("is `gcm agent` running?"), std::string::npos) << later.out;
}

}  // namespace
}  // namespace gcm::testing

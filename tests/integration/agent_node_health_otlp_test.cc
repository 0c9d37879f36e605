// A node-level reason reaches the OTLP receiver as a NodeHealthEvent log record, from `gcm agent` as a process: on
// an NVSwitch system (a nvidia-nvswitch device under --path.sysfs) whose Fabric Manager unit is stopped (a
// systemctl on PATH that says "inactive"), the agent raises the node's fabric_manager reason and pushes one record
// (ok -> degraded, with the evidence); once the unit is active again, one more (degraded -> ok). The records'
// building is HardwareEvents.EachNodeReasonChangeIsOneLogRecord; this is the whole path through the spool, the
// sender and the real receiver.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent_node.h"
#include "helpers.h"
#include "otlp_receiver_process.h"

namespace gcm::testing {
namespace {

// The NodeHealthEvent records of a logs request (the receiver prints each record's attributes as one object): those
// with exactly NodeHealthEvent's attributes.
std::vector<json> node_health_events(const json& request) {
  static const std::set<std::string> kAttributes = {"hostname", "time",         "reason",  "from_state",
                                                    "to_state", "health_state", "evidence"};
  std::vector<json> out;
  if (request["signal"] != "logs") return out;
  for (const auto& rl : request["data"]["resourceLogs"])
    for (const auto& sl : rl["scopeLogs"])
      for (const auto& lr : sl["logRecords"]) {
        const json& a = lr["attributes"];
        if (!a.is_object()) continue;
        std::set<std::string> keys;
        for (const auto& [k, unused] : a.items()) keys.insert(k);
        if (keys == kAttributes) out.push_back(a);
      }
  return out;
}

// A number attribute as the receiver prints it: a JSON number, or a decimal string (int64 in OTLP/JSON).
int64_t as_int(const json& v) { return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>(); }

// The next NodeHealthEvent the receiver gets within `deadline`, skipping requests without one.
std::optional<json> next_node_health_event(OtlpReceiverProcess& rx, std::chrono::seconds deadline,
                                           std::vector<json>& pending) {
  auto end = std::chrono::steady_clock::now() + deadline;
  while (pending.empty()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    auto j = rx.next(left);
    if (!j) return std::nullopt;
    for (auto& e : node_health_events(*j)) pending.push_back(std::move(e));
  }
  json e = pending.front();
  pending.erase(pending.begin());
  return e;
}

TEST(AgentNodeHealthOtlp, AFabricManagerThatStopsAndRunsAgainIsTwoLogRecordsAtTheReceiver) {
  AgentNode n(2);
  std::filesystem::create_directories(n.dir + "/sys/bus/pci/drivers/nvidia-nvswitch/0000:a6:00.0");
  std::filesystem::create_directories(n.dir + "/bin");
  std::ofstream(n.dir + "/fm-state") << "inactive\n";
  {
    std::ofstream sc(n.dir + "/bin/systemctl");
    sc << "#!/bin/sh\n[ \"$1 $2\" = \"is-active nvidia-fabricmanager.service\" ] || exit 4\nstate=$(cat " << n.dir
       << "/fm-state)\necho \"$state\"\n[ \"$state\" = active ]\n";
  }
  std::filesystem::permissions(n.dir + "/bin/systemctl", std::filesystem::perms::owner_all);
  ASSERT_EQ(::mkfifo((n.dir + "/kmsg").c_str(), 0600), 0);  // a kernel log that stays quiet
  int http_port = free_port(), grpc_port = free_port();
  OtlpReceiverProcess rx(n.dir, http_port, grpc_port);
  const int64_t started = time(nullptr);
  n.start({"--path.sysfs", n.dir + "/sys", "--otlp-endpoint", "http://127.0.0.1:" + std::to_string(http_port)},
          {"GCM_FAKE_NVML_SCENARIO=" + n.dir + "/scenario.json", std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML,
           "PATH=" + n.dir + "/bin:" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin")});
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);

  std::vector<json> pending;
  auto began = next_node_health_event(rx, 30s, pending);
  ASSERT_TRUE(began) << "no NodeHealthEvent reached the receiver\n" << n.diagnosis();
  EXPECT_EQ((*began)["reason"], "fabric_manager") << began->dump();
  EXPECT_EQ((*began)["from_state"], "ok");
  EXPECT_EQ((*began)["to_state"], "degraded");
  EXPECT_EQ(as_int((*began)["health_state"]), 2);
  EXPECT_NE((*began)["evidence"].get<std::string>().find("nvidia-fabricmanager.service is inactive"), std::string::npos)
      << began->dump();
  EXPECT_EQ((*began)["hostname"], host);
  EXPECT_GE(as_int((*began)["time"]), started - 1);
  // The reason holds: /metrics says so while no further event comes.
  EXPECT_EQ(n.value("gcm_node_health_state{reason=\"fabric_manager\""), 2.0);

  std::ofstream(n.dir + "/fm-state") << "active\n";
  auto cleared = next_node_health_event(rx, 30s, pending);
  ASSERT_TRUE(cleared) << "the clearing NodeHealthEvent did not reach the receiver\n" << n.diagnosis();
  EXPECT_EQ((*cleared)["reason"], "fabric_manager") << cleared->dump();
  EXPECT_EQ((*cleared)["from_state"], "degraded");
  EXPECT_EQ((*cleared)["to_state"], "ok");
  EXPECT_EQ(as_int((*cleared)["health_state"]), 0);
  EXPECT_EQ((*cleared)["evidence"], "");
  EXPECT_EQ((*cleared)["hostname"], host);
  EXPECT_GE(as_int((*cleared)["time"]), as_int((*began)["time"]));
  EXPECT_EQ(n.value("gcm_node_health_state{reason=\"fabric_manager\""), 0.0);
  // Nothing else about the node: one record each way, none repeated while the reason held or after it cleared.
  EXPECT_TRUE(pending.empty()) << pending.front().dump();
  auto more = next_node_health_event(rx, 2s, pending);
  EXPECT_FALSE(more) << more->dump();
  EXPECT_EQ(n.proc->stop(SIGTERM, 20s), 0);
}

}  // namespace
}  // namespace gcm::testing

// The agent's Kubernetes action (kubernetes/node_health.h) against the scripted API server: the GcmGpuHealthy
// condition patched into nodes/status, the cordon and the taint with the node's resourceVersion, the drain limits
// counted over the cluster's nodes, and nothing undone that gcm did not do.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "kube_api_server.h"
#include "kubernetes/node_health.h"

namespace gcm {
namespace {

using testing::KubeApiServer;

constexpr int64_t kNow = 1772362800;  // 2026-03-01T11:00:00Z

class KubeNodeHealth : public ::testing::Test {
 protected:
  KubeNodeHealth() {
    for (int i = 0; i < 10; ++i) server_.add_node(KubeApiServer::node_object("node-" + std::to_string(i)));
  }
  kube::ApiClient client() { return kube::ApiClient(server_.connection()); }
  kube::NodeHealthOptions options(const std::string& node = "node-3") {
    kube::NodeHealthOptions o;
    o.node = node;
    o.limits.max_per_hour = 3;
    o.limits.max_partition_fraction = 0.5;
    o.limits.settle_seconds = 0;  // no other agent here, but in SimultaneousMarksOverTheLimitAreTakenBack
    return o;
  }
  static const nlohmann::json* condition(const nlohmann::json& node) {
    for (const auto& c : node["status"]["conditions"])
      if (c["type"] == kube::kGpuHealthyCondition) return &c;
    return nullptr;
  }
  static void mark_by_hand(nlohmann::json& node, const std::string& when) {
    node["status"]["conditions"].push_back({{"type", "GcmGpuHealthy"},
                                            {"status", "False"},
                                            {"reason", "GpuUnhealthy"},
                                            {"message", "gcm: detector: earlier"},
                                            {"lastTransitionTime", when}});
  }
  KubeApiServer server_;
};

TEST_F(KubeNodeHealth, TheConditionCarriesTheEvidenceAndTheKubeletsStay) {
  auto api = client();
  auto out = kube::mark_node_unhealthy(api, options(), "GPU 1 failed: xid 79", false, kNow);
  EXPECT_EQ(out.action, kube::NodeMarkAction::Marked) << out.message;
  auto node = server_.node("node-3");
  const auto* c = condition(node);
  ASSERT_TRUE(c) << node.dump();
  EXPECT_EQ((*c)["status"], "False");
  EXPECT_EQ((*c)["reason"], "GpuUnhealthy");
  EXPECT_EQ((*c)["message"], "gcm: detector: GPU 1 failed: xid 79");
  EXPECT_EQ((*c)["lastTransitionTime"], "2026-03-01T11:00:00Z");
  EXPECT_EQ(node["status"]["conditions"].size(), 3u);    // Ready and MemoryPressure untouched
  EXPECT_FALSE(node["spec"].contains("unschedulable"));  // neither cordon nor taint asked for
  auto reqs = server_.requests();
  ASSERT_EQ(reqs.back().method, "PATCH");
  EXPECT_EQ(reqs.back().path, "/api/v1/nodes/node-3/status");
  EXPECT_EQ(reqs.back().header("content-type"), "application/strategic-merge-patch+json");

  // A second bad episode finds the mark and sends nothing.
  size_t before = server_.requests().size();
  EXPECT_EQ(kube::mark_node_unhealthy(api, options(), "again", false, kNow).action,
            kube::NodeMarkAction::AlreadyMarked);
  EXPECT_EQ(server_.requests().size(), before + 1);  // the node list only
}

TEST_F(KubeNodeHealth, ReportOnlySendsNothing) {
  auto api = client();
  auto out = kube::mark_node_unhealthy(api, options(), "GPU 0 degraded", true, kNow);
  EXPECT_EQ(out.action, kube::NodeMarkAction::WouldMark);
  EXPECT_FALSE(condition(server_.node("node-3")));
  for (const auto& r : server_.requests()) EXPECT_EQ(r.method, "GET");
}

TEST_F(KubeNodeHealth, CordonAndTaintAreLiftedOnlyWhereGcmSetThem) {
  auto api = client();
  auto o = options();
  o.cordon = true;
  o.taint = true;
  // An operator's taint, put there through the API like any client would.
  api.patch("/api/v1/nodes/node-3", R"({"spec":{"taints":[{"key":"example.com/maintenance","effect":"NoSchedule"}]}})",
            "application/merge-patch+json", {"patch", "nodes", "", ""});
  auto out = kube::mark_node_unhealthy(api, o, "GPU 2 failed: lost", false, kNow);
  ASSERT_EQ(out.action, kube::NodeMarkAction::Marked) << out.message;
  auto node = server_.node("node-3");
  EXPECT_EQ(node["spec"]["unschedulable"], true);
  EXPECT_EQ(node["metadata"]["annotations"][kube::kCordonedByGcmAnnotation], "true");
  ASSERT_EQ(node["spec"]["taints"].size(), 2u) << node.dump();
  EXPECT_EQ(node["spec"]["taints"][1]["key"], kube::kGpuUnhealthyTaint);
  EXPECT_EQ(node["spec"]["taints"][1]["effect"], "NoSchedule");

  auto cleared = kube::clear_node_mark(api, o, kNow + 600);
  ASSERT_EQ(cleared.action, kube::NodeMarkAction::Cleared) << cleared.message;
  node = server_.node("node-3");
  EXPECT_EQ((*condition(node))["status"], "True");
  EXPECT_FALSE(node["spec"].contains("unschedulable")) << node.dump();
  EXPECT_FALSE(node["metadata"]["annotations"].contains(kube::kCordonedByGcmAnnotation));
  ASSERT_EQ(node["spec"]["taints"].size(), 1u);
  EXPECT_EQ(node["spec"]["taints"][0]["key"], "example.com/maintenance");
}

TEST_F(KubeNodeHealth, AnOperatorsCordonStays) {
  auto api = client();
  api.patch("/api/v1/nodes/node-4", R"({"spec":{"unschedulable":true}})", "application/merge-patch+json",
            {"patch", "nodes", "", ""});
  auto o = options("node-4");
  o.cordon = true;
  ASSERT_EQ(kube::mark_node_unhealthy(api, o, "GPU 0 failed", false, kNow).action, kube::NodeMarkAction::Marked);
  EXPECT_FALSE(server_.node("node-4")["metadata"].contains("annotations") &&
               server_.node("node-4")["metadata"]["annotations"].contains(kube::kCordonedByGcmAnnotation));
  ASSERT_EQ(kube::clear_node_mark(api, o, kNow + 60).action, kube::NodeMarkAction::Cleared);
  EXPECT_EQ(server_.node("node-4")["spec"]["unschedulable"], true);  // the operator's, not gcm's
}

TEST_F(KubeNodeHealth, NothingOfGcmsIsNothingToClear) {
  auto api = client();
  EXPECT_EQ(kube::clear_node_mark(api, options(), kNow).action, kube::NodeMarkAction::NotMarked);
  for (const auto& r : server_.requests()) EXPECT_EQ(r.method, "GET");
}

// Three nodes marked in the last hour (limit 3): the fourth waits. Marks older than an hour do not count to the
// hourly limit but still count to the fraction.
TEST_F(KubeNodeHealth, TheHourlyLimitCountsTheClustersMarks) {
  std::vector<kube::Node> nodes;
  auto api = client();
  for (int i = 0; i < 3; ++i) {
    auto o = options("node-" + std::to_string(i));
    ASSERT_EQ(kube::mark_node_unhealthy(api, o, "bad", false, kNow - 600).action, kube::NodeMarkAction::Marked);
  }
  auto out = kube::mark_node_unhealthy(api, options("node-5"), "bad", false, kNow);
  EXPECT_EQ(out.action, kube::NodeMarkAction::OverBudget);
  EXPECT_NE(out.message.find("3 node(s) marked GcmGpuHealthy=False in the last hour"), std::string::npos)
      << out.message;
  EXPECT_FALSE(condition(server_.node("node-5")));
  // An hour later the hourly limit is free again.
  EXPECT_EQ(kube::mark_node_unhealthy(api, options("node-5"), "bad", false, kNow + 3600).action,
            kube::NodeMarkAction::Marked);
}

// Two agents judge the limit at the same moment and both mark: after settling, the one later in the order every
// agent sees (transition time, then name) takes its mark back, with its taint.
TEST_F(KubeNodeHealth, SimultaneousMarksOverTheLimitAreTakenBack) {
  auto api = client();
  ASSERT_EQ(kube::mark_node_unhealthy(api, options("node-0"), "earlier", false, kNow - 600).action,
            kube::NodeMarkAction::Marked);
  auto o = options("node-5");
  o.limits.max_per_hour = 2;
  o.limits.settle_seconds = 1;
  o.taint = true;
  std::thread other([&] {
    // The other agent's mark of node-2 lands in the same second, after node-5's was sent.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!condition(server_.node("node-5")) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    kube::ApiClient other_api(server_.connection());
    nlohmann::json c = {{"type", "GcmGpuHealthy"},
                        {"status", "False"},
                        {"reason", "GpuUnhealthy"},
                        {"message", "gcm: detector: other"},
                        {"lastTransitionTime", kube::format_rfc3339(kNow)}};
    other_api.patch("/api/v1/nodes/node-2/status", nlohmann::json{{"status", {{"conditions", {c}}}}}.dump(),
                    "application/strategic-merge-patch+json", {"patch", "nodes/status", "", ""});
  });
  auto out = kube::mark_node_unhealthy(api, o, "GPU 0 failed", false, kNow);
  other.join();
  EXPECT_EQ(out.action, kube::NodeMarkAction::OverBudget) << out.message;
  EXPECT_NE(out.message.find("took back"), std::string::npos) << out.message;
  auto n5 = server_.node("node-5");
  EXPECT_EQ((*condition(n5))["status"], "Unknown");
  EXPECT_EQ((*condition(n5))["reason"], "GcmMarkLimitReached");
  EXPECT_TRUE(n5["spec"]["taints"].empty()) << n5.dump();
  EXPECT_EQ((*condition(server_.node("node-2")))["status"], "False");  // the earlier in the order keeps its mark
}

TEST(KubeMarkBudget, AtMostAFractionOfTheCluster) {
  std::vector<kube::Node> nodes(10);
  for (int i = 0; i < 10; ++i) nodes[i].name = "n" + std::to_string(i);
  for (int i = 0; i < 5; ++i)
    nodes[i].conditions.push_back(
        {nodes[i].name, "GcmGpuHealthy", "False", "GpuUnhealthy", "", "2026-01-01T00:00:00Z"});
  suite::DrainLimits limits;
  limits.max_per_hour = 100;
  limits.max_partition_fraction = 0.5;
  auto b = kube::judge_mark_budget("n7", nodes, limits, kNow);
  EXPECT_FALSE(b.allowed);
  EXPECT_NE(b.why.find("5 of the cluster's 10 nodes"), std::string::npos) << b.why;
  limits.max_partition_fraction = 0.6;
  EXPECT_TRUE(kube::judge_mark_budget("n7", nodes, limits, kNow).allowed);
  // One node is always allowed, even in a small cluster with a small fraction.
  std::vector<kube::Node> two(2);
  two[0].name = "a";
  two[1].name = "b";
  limits.max_partition_fraction = 0.1;
  EXPECT_TRUE(kube::judge_mark_budget("a", two, limits, kNow).allowed);
}

TEST_F(KubeNodeHealth, AForbiddenStatusPatchNamesTheVerb) {
  server_.forbid("patch nodes/status");
  auto api = client();
  auto out = kube::mark_node_unhealthy(api, options(), "bad", false, kNow);
  EXPECT_EQ(out.action, kube::NodeMarkAction::Failed);
  EXPECT_NE(out.message.find("RBAC verb \"patch\" on \"nodes/status\""), std::string::npos) << out.message;
}

TEST_F(KubeNodeHealth, ALongEvidenceIsClipped) {
  auto api = client();
  ASSERT_EQ(kube::mark_node_unhealthy(api, options(), std::string(5000, 'x'), false, kNow).action,
            kube::NodeMarkAction::Marked);
  std::string msg = (*condition(server_.node("node-3")))["message"];
  EXPECT_EQ(msg.size(), kube::kConditionMessageMax);
  EXPECT_EQ(msg.substr(msg.size() - 3), "...");
}

}  // namespace
}  // namespace gcm

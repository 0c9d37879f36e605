// The detector's drain rules on scontrol's real output format (recorded from the Slurm 22.05 testbed): whose reason
// a drain carries, the cluster and partition limits, and what is sent to scontrol.
#include "suite/detector_drain.h"

#include <condition_variable>
#include <ctime>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

namespace gcm::suite {
namespace {

// One node of `scontrol show node` as slurmctld 22.05 prints it (a subset of its lines, in their order).
std::string node_text(const std::string& name, const std::string& state, const std::string& partitions,
                      const std::string& reason = "") {
  std::string s = "NodeName=" + name +
                  " Arch=x86_64 CoresPerSocket=4 \n   CPUAlloc=0 CPUEfctv=4 CPUTot=4 "
                  "CPULoad=1.95\n   Gres=gpu:fake:2\n   State=" +
                  state + " ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n   Partitions=" + partitions +
                  " \n   BootTime=2026-12-01T08:35:12 SlurmdStartTime=2026-12-01T13:51:49\n";
  if (!reason.empty()) s += "   Reason=" + reason + "\n";
  return s + "   CfgTRES=cpu=4,mem=4000M,billing=12,gres/gpu=2\n\n";
}

std::string local_stamp(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

const int64_t kNow = 1796000000;

// The defaults without the settling wait: these stand-ins have no other agents whose drains could land meanwhile.
DrainLimits no_wait() {
  DrainLimits l;
  l.settle_seconds = 0;
  return l;
}

// Answers `show node` with `nodes` and records every other call.
struct FakeScontrol {
  std::string nodes;
  std::vector<std::vector<std::string>> updates;
  ScontrolRunner runner() {
    return [this](const std::vector<std::string>& args) -> std::string {
      if (args.size() >= 2 && args[0] == "show" && args[1] == "node") return nodes;
      updates.push_back(args);
      return "";
    };
  }
};

TEST(DetectorDrain, ParsesStateReasonTimePartitionsAndBusyFromScontrol) {
  std::string out =
      node_text("node1", "MIXED", "gpu") +
      node_text("node7", "IDLE+DRAIN", "gpu,debug", "operator: maintenance [root@" + local_stamp(kNow - 60) + "]") +
      node_text("node8", "DOWN*+DRAIN", "debug", "Not responding [slurm@2026-12-01T13:00:00]");
  auto nodes = parse_node_records(out);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].name, "node1");
  EXPECT_TRUE(nodes[0].busy);
  EXPECT_FALSE(nodes[0].drain);
  EXPECT_EQ(nodes[0].partitions, std::vector<std::string>{"gpu"});
  EXPECT_EQ(nodes[1].reason, "operator: maintenance");
  ASSERT_TRUE(nodes[1].reason_time);
  EXPECT_EQ(*nodes[1].reason_time, kNow - 60);
  EXPECT_EQ(nodes[1].partitions, (std::vector<std::string>{"gpu", "debug"}));
  EXPECT_TRUE(nodes[1].drain);
  EXPECT_FALSE(nodes[1].busy);
  EXPECT_TRUE(nodes[2].drain);  // "DOWN*": the star is the not-responding mark, not part of the flag
}

TEST(DetectorDrain, OnlyTheDetectorsReasonsWaitForConfirmation) {
  EXPECT_TRUE(needs_confirmation(detector_reason("GPU 1 degraded: peer_slow", 255)));
  EXPECT_EQ(detector_reason("GPU 1 degraded: peer_slow", 255), "gcm: detector: GPU 1 degraded: peer_slow");
  EXPECT_FALSE(needs_confirmation("gcm: gpu memory errors: 1 uncorrectable"));
  EXPECT_FALSE(needs_confirmation("operator: gcm: detector: copied"));
  EXPECT_LE(detector_reason(std::string(400, 'x'), 64).size(), 64u);
}

TEST(DetectorDrain, DrainsAnIdleOrBusyNodeWithTheDetectorsReason) {
  FakeScontrol s;
  s.nodes = node_text("node3", "ALLOCATED", "gpu");
  for (int i = 1; i <= 9; ++i) s.nodes += node_text("n" + std::to_string(i), "IDLE", "gpu");
  DrainOutcome o =
      drain_for_detector(s.runner(), "node3", "GPU 1 degraded: peer_slow sm_clock -30%", no_wait(), false, kNow);
  EXPECT_EQ(o.action, DrainAction::Drained) << o.message;
  ASSERT_EQ(s.updates.size(), 1u);
  EXPECT_EQ(s.updates[0], (std::vector<std::string>{"update", "NodeName=node3", "State=DRAIN",
                                                    "Reason=gcm: detector: GPU 1 degraded: peer_slow sm_clock -30%"}));
}

TEST(DetectorDrain, ReportOnlySendsNothing) {
  FakeScontrol s;
  s.nodes = node_text("node3", "ALLOCATED", "gpu");
  DrainOutcome o = drain_for_detector(s.runner(), "node3", "x", {}, true, kNow);
  EXPECT_EQ(o.action, DrainAction::WouldDrain);
  EXPECT_TRUE(s.updates.empty());
}

TEST(DetectorDrain, NeverTouchesADrainOrAReasonItDidNotSet) {
  FakeScontrol s;
  s.nodes = node_text("node7", "IDLE+DRAIN", "gpu", "operator: maintenance [root@2026-12-01T13:51:53]");
  EXPECT_EQ(drain_for_detector(s.runner(), "node7", "x", {}, false, kNow).action, DrainAction::AlreadyDrained);
  s.nodes = node_text("node7", "DOWN*", "gpu", "Not responding [slurm@2026-12-01T13:51:53]");
  EXPECT_EQ(drain_for_detector(s.runner(), "node7", "x", {}, false, kNow).action, DrainAction::OtherReason);
  EXPECT_TRUE(s.updates.empty());
  std::string why;
  s.nodes = node_text("node7", "IDLE+DRAIN", "gpu", "operator: maintenance [root@2026-12-01T13:51:53]");
  EXPECT_FALSE(resume_detector_drain(s.runner(), "node7", why));
  EXPECT_NE(why.find("never resumed"), std::string::npos) << why;
  s.nodes = node_text("node7", "IDLE+DRAIN", "gpu", "gcm: gpu memory errors: 1 [root@2026-12-01T13:51:53]");
  EXPECT_FALSE(resume_detector_drain(s.runner(), "node7", why));  // the healthcheck's own: it resumes those
  EXPECT_TRUE(s.updates.empty());
}

TEST(DetectorDrain, ResumesOnlyItsOwnDrainOnceNoJobIsLeft) {
  FakeScontrol s;
  std::string reason = "gcm: detector: GPU 1 degraded [root@" + local_stamp(kNow - 600) + "]";
  s.nodes = node_text("node3", "MIXED+DRAIN", "gpu", reason);
  std::string why;
  EXPECT_FALSE(resume_detector_drain(s.runner(), "node3", why));
  EXPECT_NE(why.find("still runs a job"), std::string::npos) << why;
  s.nodes = node_text("node3", "IDLE+DRAIN", "gpu", reason);
  EXPECT_TRUE(resume_detector_drain(s.runner(), "node3", why)) << why;
  ASSERT_EQ(s.updates.size(), 1u);
  EXPECT_EQ(s.updates[0], (std::vector<std::string>{"update", "NodeName=node3", "State=RESUME"}));
}

TEST(DetectorDrain, TheClusterLimitCountsDetectorDrainsOfTheLastHourOnly) {
  DrainLimits limits;
  limits.max_per_hour = 2;
  limits.max_partition_fraction = 1;
  std::string nodes = node_text("node1", "MIXED", "gpu");
  nodes += node_text("node2", "IDLE+DRAIN", "gpu", "gcm: detector: a [root@" + local_stamp(kNow - 100) + "]");
  nodes += node_text("node4", "IDLE+DRAIN", "gpu", "gcm: detector: b [root@" + local_stamp(kNow - 7200) + "]");
  nodes += node_text("node5", "IDLE+DRAIN", "gpu", "operator: x [root@" + local_stamp(kNow - 10) + "]");
  nodes += node_text("node6", "IDLE+DRAIN", "gpu", "gcm: ecc: y [root@" + local_stamp(kNow - 10) + "]");
  auto parsed = parse_node_records(nodes);
  EXPECT_TRUE(judge_drain_budget("node1", parsed, limits, kNow).allowed);  // one in the last hour: node2
  nodes += node_text("node9", "MIXED+DRAIN", "gpu", "gcm: detector: c [root@" + local_stamp(kNow - 3000) + "]");
  parsed = parse_node_records(nodes);
  DrainBudget b = judge_drain_budget("node1", parsed, limits, kNow);
  EXPECT_FALSE(b.allowed);
  EXPECT_NE(b.why.find("2 detector drain(s) in the last hour"), std::string::npos) << b.why;
}

TEST(DetectorDrain, PartitionCapIsTheFloorOfTheFractionButAtLeastOneNode) {
  EXPECT_EQ(partition_cap(0.1, 0), 1);    // an empty partition (never seen) still allows one
  EXPECT_EQ(partition_cap(0.0, 100), 1);  // a zero fraction still allows one
  EXPECT_EQ(partition_cap(0.1, 9), 1);
  EXPECT_EQ(partition_cap(0.1, 19), 1);
  EXPECT_EQ(partition_cap(0.1, 20), 2);
  EXPECT_EQ(partition_cap(0.1, 29), 2);     // floor, not round
  EXPECT_EQ(partition_cap(0.29, 100), 29);  // 0.29 * 100 is 28.999... in binary
  EXPECT_EQ(partition_cap(0.57, 100), 57);
  EXPECT_EQ(partition_cap(1.0, 7), 7);
}

TEST(DetectorDrain, ThePartitionLimitAllowsAFractionButAlwaysOneNode) {
  DrainLimits limits;
  limits.max_per_hour = 100;
  limits.max_partition_fraction = 0.25;
  std::string nodes;
  for (int i = 1; i <= 8; ++i) nodes += node_text("node" + std::to_string(i), "MIXED", i <= 4 ? "gpu" : "big");
  // 4 nodes in gpu: 25 % is one node; none drained yet -> allowed.
  EXPECT_TRUE(judge_drain_budget("node1", parse_node_records(nodes), limits, kNow).allowed);
  nodes += node_text("node9", "IDLE+DRAIN", "gpu", "gcm: detector: a [root@" + local_stamp(kNow - 100) + "]");
  DrainBudget b = judge_drain_budget("node1", parse_node_records(nodes), limits, kNow);
  EXPECT_FALSE(b.allowed);
  EXPECT_NE(b.why.find("partition gpu has 1 of its 5 nodes"), std::string::npos) << b.why;
  // Another partition is not held back by gpu's drains.
  EXPECT_TRUE(judge_drain_budget("node5", parse_node_records(nodes), limits, kNow).allowed);
  // A tiny partition still gets one.
  limits.max_partition_fraction = 0.01;
  EXPECT_TRUE(judge_drain_budget("node5", parse_node_records(nodes), limits, kNow).allowed);
}

// Two agents judge the budget at the same moment, both see room for one more drain and both drain: reading the
// limits back, the one past the limit in slurmctld's order (same reason second: node name) resumes its node.
// The stand-in slurmctld holds every first read until both agents have read, and every second read until both
// drains have landed: the race, made certain.
TEST(DetectorDrain, AgentsThatDrainAtTheSameMomentKeepOnlyWhatTheLimitAllows) {
  struct Cluster {
    std::mutex m;
    std::condition_variable cv;
    std::map<std::string, std::string> reason;  // node -> reason (drained when set)
    int reads = 0, drains = 0;
    std::string show() {
      std::string out;
      for (std::string n : {"node1", "node2", "node3", "node4"}) {
        auto r = reason.find(n);
        out += r == reason.end() ? node_text(n, "MIXED", "gpu")
                                 : node_text(n, "MIXED+DRAIN", "gpu", r->second + " [root@" + local_stamp(kNow) + "]");
      }
      return out;
    }
    ScontrolRunner runner() {
      return [this](const std::vector<std::string>& args) -> std::string {
        std::unique_lock<std::mutex> lock(m);
        if (args.size() >= 2 && args[0] == "show") {
          int mine = ++reads;
          std::string answer = show();  // slurmctld answers with the state as the read arrived
          cv.notify_all();
          bool ok = cv.wait_for(lock, std::chrono::seconds(10), [&] { return mine <= 2 ? reads >= 2 : drains >= 2; });
          if (!ok) throw std::runtime_error("the other agent never came");
          return mine <= 2 ? answer : show();
        }
        std::string node = args.at(1).substr(std::string("NodeName=").size());
        if (args.at(2) == "State=DRAIN") {
          reason[node] = args.at(3).substr(std::string("Reason=").size());
          ++drains;
        } else if (args.at(2) == "State=RESUME") {
          reason.erase(node);
        }
        cv.notify_all();
        return "";
      };
    }
  } cluster;
  DrainLimits limits;
  limits.max_per_hour = 1;
  limits.max_partition_fraction = 1;
  limits.settle_seconds = 0;  // the stand-in's second barrier is the settling
  DrainOutcome a, b;
  std::thread ta([&] { a = drain_for_detector(cluster.runner(), "node1", "peer_slow", limits, false, kNow); });
  std::thread tb([&] { b = drain_for_detector(cluster.runner(), "node2", "peer_slow", limits, false, kNow); });
  ta.join();
  tb.join();
  EXPECT_EQ(a.action, DrainAction::Drained) << a.message;
  EXPECT_EQ(b.action, DrainAction::OverBudget) << b.message;
  EXPECT_NE(b.message.find("then resumed it"), std::string::npos) << b.message;
  EXPECT_EQ(cluster.reason.size(), 1u);
  EXPECT_EQ(cluster.reason.count("node1"), 1u);
}

}  // namespace
}  // namespace gcm::suite

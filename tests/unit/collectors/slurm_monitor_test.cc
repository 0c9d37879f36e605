// slurm_monitor on the Slurm 22.05 outputs recorded from the testbed (tests/fixtures/slurm-22.05/), every aggregate
// checked against values worked out by hand from the fixture files; plus parsers and failures.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "collectors/slurm_monitor.h"
#include "fixture_records.h"
#include "slurm_monitor_fixtures.h"

namespace gcm::slurm_monitor {
namespace {

using gcm::testing::Collect;
using gcm::testing::slurp;
using testing::canned_2205;
using testing::k2205;
using testing::kNow;
using testing::params_2205;

double num(const Record& r, const char* f) {
  const Value& v = r.at(f);
  EXPECT_TRUE(v.is_number()) << f << " is " << v.to_display_string();
  return v.is_number() ? v.as_number() : -1;
}

TEST(SlurmMonitor, Golden2205ClusterWide) {
  auto c = canned_2205();
  Collect out;
  collect(c, c, params_2205(), out);
  ASSERT_EQ(out.records.size(), 5u);  // 4 accounts with running jobs, then SLURMLog
  const Record& r = out.records.back();
  ASSERT_EQ(r.schema, &kSlurmLog.get());
  EXPECT_EQ(r.at("cluster").as_string(), "testbed");
  EXPECT_EQ(r.at("derived_cluster").as_string(), "testbed");
  // sinfo: node6 is listed in gpu and debug but counted once.
  EXPECT_EQ(num(r, "nodes_total"), 8);
  EXPECT_EQ(num(r, "nodes_mixed"), 4);
  EXPECT_EQ(num(r, "nodes_allocated"), 1);
  EXPECT_EQ(num(r, "nodes_idle"), 1);
  EXPECT_EQ(num(r, "nodes_drained"), 1);
  EXPECT_EQ(num(r, "nodes_down"), 1);
  EXPECT_EQ(num(r, "nodes_not_responding"), 0);
  EXPECT_EQ(num(r, "nodes_unknown_state"), 0);
  EXPECT_EQ(num(r, "total_down_nodes"), 2);
  EXPECT_EQ(num(r, "total_cpus_avail"), 32);
  EXPECT_EQ(num(r, "total_cpus_up"), 24);
  EXPECT_EQ(num(r, "total_cpus_down"), 8);
  EXPECT_EQ(num(r, "total_gpus_avail"), 16);
  EXPECT_EQ(num(r, "total_gpus_up"), 12);
  EXPECT_EQ(num(r, "total_gpus_down"), 4);
  EXPECT_EQ(num(r, "total_cpus_alloc"), 12);  // node1 2 + node2 1 + node3 4 + node4 2 + node6 3
  EXPECT_EQ(num(r, "total_gpus_alloc"), 9);   // 2 + 2 + 2 + 2 + 1
  EXPECT_EQ(num(r, "total_nodes_alloc"), 5);
  // sdiag
  EXPECT_EQ(num(r, "server_thread_count"), 3);
  EXPECT_EQ(num(r, "agent_queue_size"), 0);
  EXPECT_EQ(num(r, "dbd_agent_queue_size"), 0);
  // sacct: 16 jobs, 10 running, 2 pending (61: 1 node; 76: 4 nodes, 8 GPUs), TIMEOUT/FAILED/CANCELLED failed.
  EXPECT_EQ(num(r, "jobs_running"), 10);
  EXPECT_EQ(num(r, "jobs_pending"), 2);
  EXPECT_EQ(num(r, "gpus_pending"), 8);
  EXPECT_EQ(num(r, "nodes_pending"), 5);
  EXPECT_EQ(num(r, "jobs_failed"), 3);
  EXPECT_EQ(num(r, "jobs_without_user"), 0);
  EXPECT_EQ(num(r, "active_users"), 4);
  EXPECT_EQ(num(r, "running_and_pending_users"), 4);
  EXPECT_TRUE(r.at("runaway_jobs").is_null());
  // per user: alice 3, bob 5, carol 1, root 1
  EXPECT_DOUBLE_EQ(num(r, "jobs_per_user_mean"), 2.5);
  EXPECT_NEAR(num(r, "jobs_per_user_variance"), 11.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(num(r, "job_runtime_mean"), 89);
  EXPECT_DOUBLE_EQ(num(r, "job_runtime_variance"), 0);
  EXPECT_DOUBLE_EQ(num(r, "job_suspended_mean"), 0);
  // waits: 2, 2 and eight 1s
  EXPECT_DOUBLE_EQ(num(r, "job_wait_time_mean"), 1.2);
  EXPECT_NEAR(num(r, "job_wait_time_variance"), 1.6 / 9, 1e-12);
  EXPECT_DOUBLE_EQ(num(r, "jobs_dist_training_percent"), 0.1);
  // every running job overlaps the window equally: plain means of AllocCPUS (12/10) and GPUs (9/10)
  EXPECT_DOUBLE_EQ(num(r, "avg_cpus_alloc_per_job"), 1.2);
  EXPECT_DOUBLE_EQ(num(r, "avg_gpus_alloc_per_job"), 0.9);

  // Accounts in order of first running job: ml, infra, research, root.
  const char* accounts[] = {"ml", "infra", "research", "root"};
  double gpus[] = {5, 0, 4, 0}, cpus[] = {6, 1, 3, 2}, nodes[] = {6, 1, 3, 1}, users[] = {2, 1, 1, 1},
         dist[] = {0, 0, 0.5, 0};
  for (int i = 0; i < 4; ++i) {
    const Record& a = out.records[static_cast<size_t>(i)];
    ASSERT_EQ(a.schema, &kSlurmLogAccountMetrics.get());
    EXPECT_EQ(a.at("account").as_string(), accounts[i]);
    EXPECT_EQ(a.at("prefix").as_string(), std::string("gcm.") + accounts[i] + ".");
    EXPECT_EQ(a.at("derived_cluster").as_string(), "testbed");
    EXPECT_EQ(num(a, "total_gpus_alloc"), gpus[i]) << accounts[i];
    EXPECT_EQ(num(a, "total_cpus_alloc"), cpus[i]) << accounts[i];
    EXPECT_EQ(num(a, "total_nodes_alloc"), nodes[i]) << accounts[i];
    EXPECT_EQ(num(a, "active_users"), users[i]) << accounts[i];
    EXPECT_DOUBLE_EQ(num(a, "jobs_dist_training_percent"), dist[i]) << accounts[i];
    EXPECT_DOUBLE_EQ(num(a, "job_runtime_mean"), 89);
    EXPECT_DOUBLE_EQ(num(a, "job_runtime_variance"), 0);
  }
  // The queries: version once, sdiag as text (22.05 has no --json), sacct window without offsets or spaces.
  bool saw_sacct = false;
  for (const auto& q : c.queries()) {
    if (q.name == "sdiag") {
      EXPECT_EQ(q.argv, (std::vector<std::string>{"sdiag", "--all"}));
    }
    if (q.name == "slurm_monitor_sacct") {
      saw_sacct = true;
      EXPECT_EQ(q.argv[6], "-S");
      EXPECT_EQ(q.argv[7], "2026-11-29T18:54:26");
      EXPECT_EQ(q.argv[8], "-E");
      EXPECT_EQ(q.argv[9], "2026-11-29T18:56:56");
    }
  }
  EXPECT_TRUE(saw_sacct);
}

TEST(SlurmMonitor, PerPartitionWithHeterogeneousFlag) {
  auto c = canned_2205();
  Params p = params_2205();
  p.heterogeneous_cluster_v1 = true;
  Collect out;
  collect(c, c, p, out);
  std::vector<const Record*> logs;
  for (const auto& r : out.records)
    if (r.schema == &kSlurmLog.get()) logs.push_back(&r);
  ASSERT_EQ(logs.size(), 3u);
  EXPECT_EQ(logs[0]->at("derived_cluster").as_string(), "testbed.gpu");
  EXPECT_EQ(num(*logs[0], "nodes_total"), 6);
  EXPECT_EQ(num(*logs[0], "total_gpus_avail"), 12);
  EXPECT_EQ(num(*logs[0], "total_down_nodes"), 0);
  EXPECT_EQ(logs[1]->at("derived_cluster").as_string(), "testbed.debug");
  EXPECT_EQ(num(*logs[1], "nodes_total"), 3);
  EXPECT_EQ(num(*logs[1], "total_down_nodes"), 2);
  EXPECT_EQ(num(*logs[1], "total_gpus_alloc"), 1);
  EXPECT_EQ(logs[2]->at("derived_cluster").as_string(), "testbed");
  EXPECT_EQ(num(*logs[2], "nodes_total"), 8);
  std::vector<std::string> partitions;
  for (const auto& q : c.queries()) {
    if (q.name == "slurm_monitor_sacct")
      partitions.push_back(q.argv.size() > 11 && q.argv[11] == "--partition" ? q.argv[12] : "");
  }
  EXPECT_EQ(partitions, (std::vector<std::string>{"gpu", "debug", ""}));
}

TEST(SlurmMonitor, NoJobsLeavesJobMetricsNullAndNoNodesLeavesStatesNull) {
  slurm::CannedSlurmClient c;
  c.set_output("slurm_monitor_sinfo", "");
  c.set_output("sinfo_version", "slurm 24.11.4");
  c.set_output("sdiag_json", R"({"statistics":{"server_thread_count":1,"agent_queue_size":2,"agent_count":3,)"
                             R"("agent_thread_count":4,"dbd_agent_queue_size":5}})");
  c.set_output("slurm_monitor_sacct", slurp(k2205 + "sacct-slurm-monitor.txt"));  // GCM's argv: header only
  Collect out;
  collect(c, c, params_2205(), out);
  ASSERT_EQ(out.records.size(), 1u);
  const Record& r = out.records[0];
  EXPECT_TRUE(r.at("nodes_total").is_null());
  EXPECT_TRUE(r.at("jobs_running").is_null());
  EXPECT_TRUE(r.at("job_runtime_mean").is_null());
  EXPECT_EQ(num(r, "total_cpus_avail"), 0);
  EXPECT_EQ(num(r, "agent_count"), 3);
  EXPECT_EQ(num(r, "dbd_agent_queue_size"), 5);
}

TEST(SlurmMonitor, StatesWithFlagsAndCompoundStates) {
  slurm::CannedSlurmClient c;
  c.set_output("slurm_monitor_sinfo",
               "a|gpu:h100:8(S:0-1)|gpu:h100:8(IDX:0-7)|96|96/0/0/96|allocated+|p\n"
               "b|gpu:nvidia_h100:8|gpu:nvidia_h100:2(IDX:0-1)|96|10/86/0/96|failing|p\n"
               "c|(null)|(null)|8|0/8/0/8|idle*|p\n"
               "d|gpu:2|gpu:0(IDX:N/A)|8|0/8/0/8|mixed+drain|p\n");
  c.set_output("sdiag", slurp(k2205 + "sdiag.txt"));
  c.set_output("slurm_monitor_sacct", "");
  Params p = params_2205();
  p.slurm_version = std::make_pair(22, 5);
  Collect out;
  collect(c, c, p, out);
  const Record& r = out.records.back();
  EXPECT_EQ(num(r, "nodes_allocated"), 1);  // allocated+ (GCM crashed)
  EXPECT_EQ(num(r, "nodes_failing"), 1);
  EXPECT_EQ(num(r, "nodes_idle"), 1);
  EXPECT_EQ(num(r, "nodes_not_responding"), 1);
  EXPECT_EQ(num(r, "nodes_unknown_state"), 1);  // mixed+drain
  EXPECT_EQ(num(r, "total_down_nodes"), 0);     // failing is not down (GCM counted it)
  EXPECT_EQ(num(r, "total_gpus_avail"), 18);    // gpu types with '_' are understood
  EXPECT_EQ(num(r, "total_gpus_alloc"), 10);    // a, b (d: mixed+drain runs jobs too, 0 used)
  EXPECT_EQ(num(r, "total_nodes_alloc"), 3);
}

TEST(SlurmMonitor, GarbageSinfoNamesCommandAndLine) {
  slurm::CannedSlurmClient c;
  c.set_output("slurm_monitor_sinfo", "a|gpu:2|gpu:0|8|0/8/0/8|idle|p\nthis is not sinfo output\n");
  Collect out;
  try {
    collect(c, c, params_2205(), out);
    FAIL() << "expected SlurmError";
  } catch (const slurm::SlurmError& e) {
    EXPECT_EQ(e.line(), 2u);
    EXPECT_NE(std::string(e.what()).find("sinfo --all -N -O"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

TEST(SlurmMonitor, GarbageSacctRowNamesLine) {
  auto c = canned_2205();
  c.set_output("slurm_monitor_sacct",
               "JobID|User|AllocCPUS|AllocTRES|ReqNodes|ReqTRES|Submit|Start|End|State|"
               "AllocNodes|Elapsed|Suspended|Account\n1|u|x|||||||RUNNING||||a\n");
  Collect out;
  try {
    collect(c, c, params_2205(), out);
    FAIL() << "expected SlurmError";
  } catch (const slurm::SlurmError& e) {
    EXPECT_EQ(e.line(), 2u) << e.what();
    EXPECT_NE(std::string(e.what()).find("sacct -a -D -X -P"), std::string::npos) << e.what();
  }
}

TEST(SlurmMonitor, FailedPartitionSacctStillEmitsTheOtherScopes) {
  struct Failing : slurm::CannedSlurmClient {
    size_t fetch_lines(const slurm::SlurmQuery& q, const slurm::LineHandler& h) override {
      if (q.argv.back() == "debug") throw slurm::SlurmError(q.name, "sacct", 0, "sacct failed for debug");
      return CannedSlurmClient::fetch_lines(q, h);
    }
  };
  Failing f;
  f.set_output("slurm_monitor_sacct", slurp(k2205 + "sacct-slurm-monitor-local.txt"));
  auto c = canned_2205();
  Params p = params_2205();
  p.heterogeneous_cluster_v1 = true;
  Collect out;
  EXPECT_THROW(collect(c, f, p, out), std::runtime_error);
  std::vector<std::string> derived;
  for (const auto& r : out.records)
    if (r.schema == &kSlurmLog.get()) derived.push_back(r.at("derived_cluster").as_string());
  EXPECT_EQ(derived, (std::vector<std::string>{"testbed.gpu", "testbed"}));
}

}  // namespace
}  // namespace gcm::slurm_monitor

namespace gcm::slurm_monitor {
namespace {

// The window is written in the zone sacct runs in, without an offset or a leading space (GCM's "-S <start>" with a
// -08:00 offset gave no jobs on 22.05).
TEST(SlurmMonitor, SacctWindowIsNaiveTimeInSacctsZone) {
  TimeZone pacific = TimeZone::from_posix_rule("PST8PDT,M3.2.0,M11.1.0");
  auto q = sacct_query(kNow - 300, kNow, pacific, "gpu", std::chrono::seconds(5));
  EXPECT_EQ(q.argv, (std::vector<std::string>{
                        "sacct", "-a", "-D", "-X", "-P", "--noconvert", "-S", "2026-11-29T10:51:56", "-E",
                        "2026-11-29T10:56:56",
                        "--format=jobid,user,alloccpus,alloctres,reqnodes,reqtres,submit,start,end,state,allocnodes,"
                        "elapsed,suspended,account",
                        "--partition", "gpu"}));
  EXPECT_EQ(q.timeout, std::chrono::milliseconds(5000));
  auto utc = sacct_query(kNow - 300, kNow, TimeZone(), "", std::chrono::seconds(5));
  EXPECT_EQ(utc.argv[7], "2026-11-29T18:51:56");
  EXPECT_EQ(utc.argv.size(), 11u);
}

}  // namespace
}  // namespace gcm::slurm_monitor

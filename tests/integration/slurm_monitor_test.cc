// slurm_monitor as a whole process: on fake Slurm commands put first on PATH (the recorded 22.05 outputs, hangs,
// garbage, an unreachable controller, a daemon that recovers), and on the live testbed, where every figure is compared
// with what sinfo/squeue answer in the same test.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <thread>

#include "slurm_fakes.h"

namespace gcm::testing {
namespace {

TEST(SlurmMonitorFake, OnceOnRecordedOutputs) {
  FakeSlurm f;
  auto r = run_gcm({"slurm_monitor", "--once", "--cluster", "tb", "--interval", "150", "--log-folder", f.dir},
                   std::chrono::seconds(30), f.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto recs = records(r.out);
  ASSERT_EQ(recs.size(), 6u) << r.out;  // 4 accounts, SLURMLog, Sdiag
  EXPECT_EQ(recs[0]["account"], "ml");
  EXPECT_EQ(recs[0]["total_gpus_alloc"], 5);
  // The Sdiag record comes last, in a sink round of its own, with every statistic of the recorded sdiag.txt.
  const json& sdiag = recs.back();
  EXPECT_EQ(sdiag["cluster"], "tb");
  EXPECT_FALSE(sdiag.contains("nodes_total"));
  EXPECT_EQ(sdiag["schedule_cycle_max"], 31572);
  EXPECT_EQ(sdiag["bf_cycle_counter"], 3);
  EXPECT_EQ(json::parse(sdiag["rpcs_by_user_json"].get<std::string>()).size(), 4u);
  const json& log = recs[recs.size() - 2];
  EXPECT_EQ(log["schedule_cycle_max"], 31572);
  EXPECT_EQ(log["cluster"], "tb");
  EXPECT_EQ(log["nodes_total"], 8);
  EXPECT_EQ(log["total_gpus_avail"], 16);
  EXPECT_EQ(log["total_gpus_alloc"], 9);
  EXPECT_EQ(log["jobs_running"], 10);
  EXPECT_EQ(log["jobs_pending"], 2);
  EXPECT_EQ(log["server_thread_count"], 3);
  // sacct ran in UTC with the window as two plain argv elements, no offset, no leading space.
  EXPECT_EQ(read_text(f.dir + "/sacct.tz"), "UTC\n");
  std::istringstream args(read_text(f.dir + "/sacct.args"));
  std::vector<std::string> a;
  for (std::string l; std::getline(args, l);) a.push_back(l);
  ASSERT_GE(a.size(), 10u);
  EXPECT_EQ(a[5], "-S");
  EXPECT_EQ(a[7], "-E");
  std::regex naive(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)");
  EXPECT_TRUE(std::regex_match(a[6], naive)) << a[6];
  EXPECT_TRUE(std::regex_match(a[8], naive)) << a[8];
  time_t now = time(nullptr);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M", gmtime(&now));
  EXPECT_EQ(a[8].substr(0, 13), std::string(buf).substr(0, 13));  // UTC, to the hour
}

TEST(SlurmMonitorFake, HungSdiagIsKilledAtTheTimeout) {
  FakeSlurm f;
  write_script(f.dir + "/sdiag", "exec sleep 60");
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_gcm({"slurm_monitor", "--once", "--cluster", "tb", "--slurm-timeout", "1", "--log-folder", f.dir},
                   std::chrono::seconds(30), f.env());
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_LT(s, 10);
  EXPECT_NE(r.err.find("sdiag --all"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("timed out"), std::string::npos) << r.err;
}

TEST(SlurmMonitorFake, GarbageSinfoNamesCommandAndLine) {
  FakeSlurm f;
  write_script(f.dir + "/sinfo",
               "if [ \"$1\" = -V ]; then echo 'slurm 22.05.8'; exit 0; fi\n"
               "echo 'Segmentation fault in the matrix'");
  auto r =
      run_gcm({"slurm_monitor", "--once", "--cluster", "tb", "--log-folder", f.dir}, std::chrono::seconds(30), f.env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("sinfo --all -N -O"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("line 1"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(SlurmMonitorFake, UnreachableControllerExitsOneWithSlurmsMessage) {
  FakeSlurm f;
  write_script(f.dir + "/sinfo",
               "if [ \"$1\" = -V ]; then echo 'slurm 22.05.8'; exit 0; fi\n"
               "echo 'sinfo: error: Unable to contact slurm controller (connect failure)' >&2\nexit 1");
  auto r =
      run_gcm({"slurm_monitor", "--once", "--cluster", "tb", "--log-folder", f.dir}, std::chrono::seconds(30), f.env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Unable to contact slurm controller"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sinfo --all -N -O"), std::string::npos) << r.err;
}

TEST(SlurmMonitorFake, DaemonLogsAFailedRoundAndRecovers) {
  FakeSlurm f;
  std::ofstream(f.dir + "/sdiag.fail") << "1";
  std::string err = f.dir + "/daemon.err";
  BackgroundProcess p({gcm_binary(), "slurm_monitor", "--cluster", "tb", "--interval", "1", "--log-folder", f.dir}, err,
                      f.env());
  ASSERT_TRUE(eventually([&] { return read_text(err).find("Unable to contact slurm controller") != std::string::npos; },
                         std::chrono::seconds(15)))
      << read_text(err);
  std::filesystem::remove(f.dir + "/sdiag.fail");
  bool got = false;
  for (int i = 0; i < 20 && !got; ++i) {
    auto line = p.read_line(std::chrono::seconds(5));
    if (!line) break;
    got = line->find("\"nodes_total\": 8") != std::string::npos;
  }
  EXPECT_TRUE(got) << read_text(err);
  EXPECT_EQ(p.stop(SIGTERM, std::chrono::seconds(10)), 0);
}

// --- the live testbed -------------------------------------------------------------------------------------------

// What the cluster says right now: node states, running/pending jobs and the GPUs the running ones hold.
struct ClusterView {
  int nodes = 0, drained = 0, down = 0, running = 0, pending = 0, gpus_alloc = 0;
  // The reference counts REQUEUED among the pending states: with --duplicates, sacct gives each requeue of a job a
  // record of its own in that state, which squeue never shows (the suite tests leave such records behind).
  int requeued_in_window = 0;
  static ClusterView take() {
    ClusterView v;
    std::set<std::string> seen;
    std::istringstream n(run_ok({"sinfo", "-h", "-N", "-o", "%N %T"}));
    for (std::string name, state; n >> name >> state;) {
      if (!seen.insert(name).second) continue;
      ++v.nodes;
      while (!state.empty() && std::string("*~#!%$@^-").find(state.back()) != std::string::npos) state.pop_back();
      v.drained += state == "drained";
      v.down += state == "down";
    }
    // sacct's window holds the pending jobs that are eligible to start (not those held or waiting on a dependency).
    std::istringstream j(run_ok({"squeue", "-h", "-a", "-O", "state:20,eligibletime:30,tres-alloc:200"}));
    for (std::string line; std::getline(j, line);) {
      std::istringstream ls(line);
      std::string state, eligible, tres;
      ls >> state >> eligible >> tres;
      if (state == "RUNNING") {
        ++v.running;
        std::smatch m;
        if (std::regex_search(tres, m, std::regex(R"(gres/gpu=(\d+))"))) v.gpus_alloc += std::stoi(m[1]);
      } else if ((state == "PENDING" && eligible != "N/A" && eligible != "Unknown") || state == "SUSPENDED") {
        ++v.pending;
      }
    }
    // The window of slurm_monitor --once: the 300 s before now.
    std::istringstream q(
        run_ok({"sacct", "-a", "-D", "-X", "-P", "-n", "--noconvert", "-S", "now-300", "-E", "now", "-o", "state"}));
    for (std::string state; std::getline(q, state);) v.requeued_in_window += state == "REQUEUED";
    return v;
  }
  bool operator==(const ClusterView&) const = default;
};

TEST(SlurmMonitorTestbed, AgreesWithTheCluster) {
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  Job gpu({"-p", "gpu", "--gres=gpu:1", "-J", "slurmmon-gpu", "--wrap", "exec sleep 300"});
  Job held({"-p", "gpu", "-H", "-J", "slurmmon-held", "--wrap", "exec sleep 300"});  // not in sacct's window
  // carol's QOS (limited) allows one running job: the second pends, eligible.
  Job carol1({"-p", "gpu", "-J", "slurmmon-carol1", "--wrap", "exec sleep 300"}, "carol");
  Job carol2({"-p", "gpu", "-J", "slurmmon-carol2", "--wrap", "exec sleep 300"}, "carol");
  ASSERT_TRUE(eventually(
      [&] {
        return run_ok({"squeue", "-h", "-j", gpu.id, "-o", "%T"}).find("RUNNING") == 0;
      },
      std::chrono::seconds(30)));
  // Other tests' jobs may start or end meanwhile, and slurmdbd (which sacct asks) learns of a job start a moment
  // after slurmctld (which squeue asks): retry until the cluster stood still around our run and the figures agree.
  json log;
  ClusterView before, after;
  auto agrees = [&] {
    return before == after && log["jobs_running"] == before.running &&
           log["jobs_pending"] == before.pending + before.requeued_in_window &&
           log["total_gpus_alloc"] == before.gpus_alloc;
  };
  for (int attempt = 0; attempt < 10; ++attempt) {
    if (attempt) std::this_thread::sleep_for(std::chrono::seconds(1));
    before = ClusterView::take();
    auto r = run_gcm({"slurm_monitor", "--once", "--sink", "stdout", "--cluster", "testbed", "--log-folder",
                      temp_dir("slurmmon-tb")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    log = json();
    for (auto& rec : records(r.out))
      if (rec.contains("nodes_total") && rec["derived_cluster"] == "testbed") log = rec;
    ASSERT_FALSE(log.is_null()) << r.out;
    after = ClusterView::take();
    if (agrees()) break;
  }
  ASSERT_TRUE(before == after) << "the cluster kept changing";
  EXPECT_EQ(log["nodes_total"], 8);
  EXPECT_EQ(log["total_gpus_avail"], 16);
  EXPECT_EQ(log["nodes_drained"], before.drained);
  EXPECT_EQ(log["nodes_down"], before.down);
  EXPECT_GE(log["total_down_nodes"].get<int>(), before.drained + before.down);
  EXPECT_EQ(log["total_gpus_alloc"], before.gpus_alloc);
  EXPECT_GE(before.gpus_alloc, 1);
  EXPECT_EQ(log["jobs_running"], before.running);
  EXPECT_EQ(log["jobs_pending"], before.pending + before.requeued_in_window);
  EXPECT_GE(before.pending, 1);
  EXPECT_GE(log["server_thread_count"].get<int>(), 1);
}

TEST(SlurmMonitorTestbed, HeterogeneousGivesEachPartition) {
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  auto r = run_gcm({"slurm_monitor", "--once", "--cluster", "testbed", "--heterogeneous-cluster-v1", "--log-folder",
                    temp_dir("slurmmon-het")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, int> nodes;
  for (auto& rec : records(r.out))
    if (rec.contains("nodes_total")) nodes[rec["derived_cluster"]] = rec["nodes_total"];
  EXPECT_EQ(nodes, (std::map<std::string, int>{{"testbed", 8}, {"testbed.debug", 3}, {"testbed.gpu", 6}}));
}

TEST(SlurmMonitorTestbed, SdiagRecordAndReset) {
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  Job job({"-p", "gpu", "-J", "sdiag-reset", "--wrap", "exec sleep 300"});  // at least one submission counted
  const int64_t before = time(nullptr);
  auto r = run_gcm(
      {"slurm_monitor", "--once", "--sdiag-reset", "--cluster", "testbed", "--log-folder", temp_dir("sdiag-tb")});
  const int64_t after = time(nullptr);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json sdiag;
  for (auto& rec : records(r.out))
    if (rec.contains("rpcs_by_message_type_json") && !rec.contains("nodes_total")) sdiag = rec;
  ASSERT_FALSE(sdiag.is_null()) << r.out;
  EXPECT_EQ(sdiag["cluster"], "testbed");
  EXPECT_GE(sdiag["server_thread_count"].get<int>(), 1);
  EXPECT_GE(sdiag["req_time"].get<int64_t>(), before - 1);
  EXPECT_LE(sdiag["req_time"].get<int64_t>(), after + 1);
  // The sinfo it ran before sdiag is among the RPCs slurmctld counted.
  auto types = json::parse(sdiag["rpcs_by_message_type_json"].get<std::string>());
  bool node_info = false;
  for (auto& t : types) node_info |= t["message_type"] == "REQUEST_NODE_INFO";
  EXPECT_TRUE(node_info) << sdiag["rpcs_by_message_type_json"];
  // The counters were reset after the scrape: sdiag's data now starts at or after the scrape.
  std::string text = run_ok({"sdiag", "--all"});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(Data since .*\((\d+)\))"))) << text;
  EXPECT_GE(std::stoll(m[1]), sdiag["req_time"].get<int64_t>());
}

}  // namespace
}  // namespace gcm::testing

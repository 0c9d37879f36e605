// slurm_monitor against slurmctld's own OpenMetrics on the Slurm 25.11 recordings (tests/fixtures/slurm-25.11/:
// record-fixtures.sh reads the four endpoints right after the commands slurm_monitor runs, so they show the same
// moment): the numbers docs/reference/collectors.md says agree are equal, and those it says differ differ for the
// reasons it gives. The live form of the same comparison is integration/slurm_openmetrics_testbed_test.cc.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "collectors/slurm_monitor.h"
#include "exposition_text.h"
#include "fixture_records.h"
#include "slurm_openmetrics_pairs.h"

namespace gcm::slurm_monitor {
namespace {

using gcm::testing::Exposition;
using gcm::testing::parse_exposition;
using gcm::testing::slurp;

const std::string k2511 = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-25.11/";

Exposition endpoint(const std::string& name) {
  std::string file = k2511 + "openmetrics-" + name + ".txt";
  return parse_exposition(slurp(file), file);
}

// The round of the recording: the sacct window of sacct-slurm-monitor-local.txt, -S 10:09:35 -E 10:12:05 (UTC), and
// sdiag as JSON (25.11 has --json).
Record recorded_slurm_log() {
  slurm::CannedSlurmClient c;
  c.set_output("slurm_monitor_sinfo", slurp(k2511 + "sinfo-O-nodes.txt"));
  c.set_output("sinfo_version", slurp(k2511 + "sinfo-V.txt"));
  c.set_output("sdiag_json", slurp(k2511 + "sdiag-json.txt"));
  c.set_output("slurm_monitor_sacct", slurp(k2511 + "sacct-slurm-monitor-local.txt"));
  Params p;
  p.cluster = "testbed";
  p.interval = 150;
  p.now = 1796638325;  // 2026-12-07T10:12:05Z, sdiag's req_time
  gcm::testing::Collect out;
  collect(c, c, p, out);
  EXPECT_FALSE(out.records.empty());
  for (const auto& q : c.queries())
    if (q.name == "sdiag_json") {
      EXPECT_EQ(q.argv, (std::vector<std::string>{"sdiag", "--all", "--json"}));
    }
  return out.records.back();
}

double num(const Record& r, const char* f) {
  const Value& v = r.at(f);
  EXPECT_TRUE(v.is_number()) << f << " is " << v.to_display_string();
  return v.is_number() ? v.as_number() : -1;
}

TEST(SlurmMonitorOpenMetrics, TheFourRecordingsParseStrictly) {
  for (const char* name : {"nodes", "jobs", "partitions", "scheduler"}) {
    Exposition e = endpoint(name);
    EXPECT_FALSE(e.eof) << name << ": 25.11 serves the Prometheus text format, without OpenMetrics' # EOF";
    EXPECT_GT(e.samples.size(), 20u) << name;
    for (const auto& s : e.samples) {
      EXPECT_TRUE(e.types.count(s.name)) << name << ":" << s.line << ": " << s.name << " has no TYPE";
      EXPECT_TRUE(e.help.count(s.name)) << name << ":" << s.line << ": " << s.name << " has no HELP";
    }
  }
  // Every node has its series, labelled by name.
  EXPECT_EQ(endpoint("nodes").all("slurm_node_cpus").size(), 8u);
  EXPECT_EQ(endpoint("partitions").value("slurm_partition_nodes", {{"partition", "debug"}}), 3);
}

TEST(SlurmMonitorOpenMetrics, DocumentedEqualNumbersAreEqual) {
  Record log = recorded_slurm_log();
  std::map<std::string, Exposition> endpoints;
  for (const char* name : {"nodes", "jobs", "scheduler"}) endpoints.emplace(name, endpoint(name));
  for (const auto* pairs : {&gcm::testing::openmetrics_cluster_pairs(), &gcm::testing::openmetrics_sdiag_pairs()})
    for (const auto& p : *pairs)
      EXPECT_EQ(num(log, p.field), endpoints.at(p.endpoint).value(p.series)) << p.field << " against " << p.series;
  EXPECT_EQ(log.at("bf_active").as_bool() ? 1 : 0, endpoints.at("scheduler").value("slurm_bf_active"));
  // Not trivially equal: the workload of the recording is there.
  EXPECT_EQ(num(log, "nodes_total"), 8);
  EXPECT_EQ(num(log, "jobs_running"), 10);
  EXPECT_EQ(num(log, "total_cpus_alloc"), 12);
  EXPECT_EQ(num(log, "bf_cycle_counter"), 17);
}

TEST(SlurmMonitorOpenMetrics, DocumentedDifferencesDifferForTheirReasons) {
  Record log = recorded_slurm_log();
  Exposition nodes = endpoint("nodes"), jobs = endpoint("jobs"), sched = endpoint("scheduler");

  // Node states. slurmctld's base states (idle, allocated, mixed, down, ...) part the nodes; Planned is a flag on
  // top of them. sinfo shows one state a node: node4 "planned" (idle, planned to slurmctld), node7 "drained" (idle,
  // drain), node1-3 "mixed-" (mixed, planned), which slurm_monitor counts as planned, drained and mixed.
  EXPECT_EQ(nodes.value("slurm_nodes_idle"), 2);
  EXPECT_EQ(num(log, "nodes_idle"), 0);
  EXPECT_EQ(nodes.value("slurm_nodes_planned"), 4);
  EXPECT_EQ(num(log, "nodes_planned"), 1);
  EXPECT_EQ(nodes.value("slurm_nodes_idle") + nodes.value("slurm_nodes_alloc") + nodes.value("slurm_nodes_mixed") +
                nodes.value("slurm_nodes_down"),
            nodes.value("slurm_nodes"));
  EXPECT_EQ(nodes.value("slurm_nodes_idle"),
            num(log, "nodes_idle") + num(log, "nodes_planned") + num(log, "nodes_drained"));

  // Pending jobs: slurmctld counts every pending job it holds (squeue's of the same moment: held and waiting on a
  // dependency included), sacct's window only those eligible to start.
  int squeue_pending = 0;
  const auto squeue = nlohmann::json::parse(slurp(k2511 + "squeue.json"));
  for (const auto& j : squeue.at("jobs"))
    for (const auto& s : j.at("job_state")) squeue_pending += s == "PENDING";
  EXPECT_EQ(jobs.value("slurm_jobs_pending"), squeue_pending);
  EXPECT_EQ(jobs.value("slurm_jobs_pending"), 4);
  EXPECT_EQ(num(log, "jobs_pending"), 2);

  // Failed jobs: slurmctld's FAILED state alone, of the jobs still in its memory; slurm_monitor's every failed end
  // (FAILED, TIMEOUT, CANCELLED, ...) of the window.
  EXPECT_EQ(jobs.value("slurm_jobs_failed"), 1);
  EXPECT_EQ(num(log, "jobs_failed"), 3);  // jobs 1 (TIMEOUT), 11 (FAILED), 12 (CANCELLED after it ran)

  // No GPU (GRES) series anywhere: total_gpus_* and the GPU job statistics have no counterpart.
  for (const char* name : {"nodes", "jobs", "partitions", "scheduler"})
    for (const auto& s : endpoint(name).samples) {
      EXPECT_EQ(s.name.find("gpu"), std::string::npos) << name << ": " << s.name;
      EXPECT_EQ(s.name.find("gres"), std::string::npos) << name << ": " << s.name;
    }
  EXPECT_EQ(num(log, "total_gpus_alloc"), 9);

  // sdiag's RPC is served by one more slurmctld thread than the HTTP request.
  EXPECT_EQ(num(log, "server_thread_count"), sched.value("slurm_server_thread_cnt") + 1);
  // `sdiag --json` of 25.11 gives the backfill queue length's mean as bf_table_size_mean; slurmctld's and sdiag's
  // text give the table size's (sum over cycles).
  EXPECT_EQ(num(log, "bf_table_size_mean"), num(log, "bf_queue_len_mean"));
  EXPECT_EQ(sched.value("slurm_bf_mean_table_sz"), num(log, "bf_table_size_sum") / num(log, "bf_cycle_counter"));
  EXPECT_NE(num(log, "bf_table_size_mean"), sched.value("slurm_bf_mean_table_sz"));
}

}  // namespace
}  // namespace gcm::slurm_monitor

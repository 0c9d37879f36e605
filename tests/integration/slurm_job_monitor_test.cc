// gcm slurm_job_monitor, scontrol and scontrol_config as processes: with fake Slurm commands first on PATH (the
// reference's and our fixtures, a hanging squeue, garbage, a controller that is down), and on the live testbed.
#include <sys/stat.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "helpers.h"
#include "testbed_workload.h"

namespace gcm::testing {
namespace {

using nlohmann::json;

const std::string kOurs = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-22.05/";
const std::string kReference = std::string(GCM_SOURCE_DIR) + "/../shared/fixtures/gcm/";

// The internal logs of every run go to one temporary folder (removed at exit), not to the working directory.
const std::string& log_dir() {
  static const std::string dir = [] {
    std::string d = temp_dir("sjm-logs");
    static struct Remove {
      std::string d;
      ~Remove() { std::filesystem::remove_all(d); }
    } remove{d};
    return d;
  }();
  return dir;
}

std::vector<std::string> logged(std::vector<std::string> args) {
  args.push_back("--log-folder");
  args.push_back(log_dir());
  return args;
}

// A directory of fake Slurm commands put first on PATH.
class FakeSlurm {
 public:
  FakeSlurm() : dir_(temp_dir("fake-slurm")) {}
  ~FakeSlurm() { std::filesystem::remove_all(dir_); }
  void add(const std::string& name, const std::string& body) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
  }
  void cat(const std::string& name, const std::string& file) { add(name, "exec cat '" + file + "'"); }
  std::vector<std::string> env() const {
    const char* path = std::getenv("PATH");
    return {"PATH=" + dir_ + ":" + (path ? path : "/usr/bin:/bin")};
  }

 private:
  std::string dir_;
};

// Every record of the stdout sink's output (one JSON list per line; log lines are skipped).
TEST(SlurmJobMonitorCli, OnceWithFakeCommandsWritesNodesAndJobs) {
  FakeSlurm fake;
  fake.cat("sinfo", kOurs + "sinfo-all.txt");
  fake.cat("squeue", kOurs + "squeue-O.txt");
  auto r = run_gcm(logged({"slurm_job_monitor", "--once", "--sink", "stdout", "--cluster", "tb", "--stdout"}),
                   std::chrono::seconds(30), fake.env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto records = records_of(r.out);
  auto nodes = with_key(records, "NODE_NAME");
  auto jobs = with_key(records, "JOBID_RAW");
  EXPECT_EQ(nodes.size(), 9u);
  EXPECT_EQ(jobs.size(), 14u);
  EXPECT_EQ(nodes.at(0)["num_rows"], 9);
  EXPECT_EQ(nodes.at(0)["cluster"], "tb");
  EXPECT_FALSE(jobs.at(0).contains("EXC_NODES")) << "null fields are dropped by the stdout sink";
}

TEST(SlurmJobMonitorCli, ReferenceCorpusThroughTheBinary) {
  if (!std::filesystem::exists(kReference + "sample-squeue-output.txt"))
    GTEST_SKIP() << "reference corpus not present under " << kReference;
  FakeSlurm fake;
  fake.cat("sinfo", kReference + "sample-sinfo-output.txt");
  fake.cat("squeue", kReference + "sample-squeue-output.txt");
  fake.cat("scontrol", kReference + "sample-scontrol-output.txt");
  auto r = run_gcm(logged({"slurm_job_monitor", "--once", "--cluster", "c", "--heterogeneous-cluster-v1"}),
                   std::chrono::seconds(30), fake.env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto records = records_of(r.out);
  EXPECT_EQ(with_key(records, "NODE_NAME").size(), 4u);
  auto jobs = with_key(records, "JOBID_RAW");
  ASSERT_EQ(jobs.size(), 5u);
  EXPECT_EQ(jobs[4]["JOBID"], "42271120_[7-8%1]");
  EXPECT_EQ(jobs[2]["NODELIST"].size(), 32u);
  r = run_gcm(logged({"scontrol", "--once", "--cluster", "c", "--heterogeneous-cluster-v1"}), std::chrono::seconds(30),
              fake.env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto parts = records_of(r.out);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0]["derived_cluster"], "c.partition1");
  EXPECT_EQ(parts[0]["TresBillingWeightMEM"], 125);
  EXPECT_FALSE(parts[1].contains("TresCPU"));
  fake.cat("scontrol", kReference + "sample-scontrol-show-config-output.txt");
  r = run_gcm(logged({"scontrol_config", "--once", "--cluster", "c"}), std::chrono::seconds(30), fake.env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto config = records_of(r.out);
  ASSERT_EQ(config.size(), 1u);
  EXPECT_EQ(config[0]["AccountingStoragePort"], 6819);
  EXPECT_EQ(config[0]["AcctGatherNodeFreq"], "0 sec");
}

TEST(SlurmJobMonitorCli, HangingSqueueIsKilledAtTheTimeout) {
  FakeSlurm fake;
  fake.cat("sinfo", kOurs + "sinfo-all.txt");
  fake.add("squeue", "head -3 '" + kOurs + "squeue-O.txt'; exec sleep 60");
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_gcm(logged({"slurm_job_monitor", "--once", "--cluster", "tb", "--stdout", "--slurm-timeout", "1"}),
                   std::chrono::seconds(30), fake.env());
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_LT(took, 10.0);
  EXPECT_NE(r.out.find("squeue --all -O"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("timed out"), std::string::npos) << r.out;
  auto records = records_of(r.out);
  EXPECT_EQ(with_key(records, "NODE_NAME").size(), 9u) << "the node snapshot is still written";
  EXPECT_EQ(with_key(records, "JOBID_RAW").size(), 3u) << "jobs read before the timeout are still written";
}

TEST(SlurmJobMonitorCli, ControllerDownFailsTheRoundWithSlurmsMessage) {
  FakeSlurm fake;
  fake.add("sinfo", "echo 'slurm_load_partitions: Unable to contact slurm controller (connect failure)' >&2; exit 1");
  fake.cat("squeue", kOurs + "squeue-O.txt");
  auto r = run_gcm(logged({"slurm_job_monitor", "--once", "--cluster", "tb", "--stdout"}), std::chrono::seconds(30),
                   fake.env());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("sinfo --all -N -o %all"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Unable to contact slurm controller"), std::string::npos) << r.out;
  EXPECT_EQ(with_key(records_of(r.out), "JOBID_RAW").size(), 14u) << "the other task still ran";
}

TEST(SlurmJobMonitorCli, MissingCommandAndGarbageNameTheCommand) {
  FakeSlurm fake;
  fake.cat("sinfo", kOurs + "sinfo-all.txt");
  fake.add("squeue", "echo 'this is|#not squeue'");
  auto r = run_gcm(logged({"slurm_job_monitor", "--once", "--cluster", "tb", "--stdout"}), std::chrono::seconds(30),
                   fake.env());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("squeue --all -O"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("line 1"), std::string::npos) << r.out;
  r = run_gcm(logged({"scontrol_config", "--once", "--cluster", "tb", "--stdout"}), std::chrono::seconds(30),
              {"PATH=/nonexistent"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("scontrol"), std::string::npos) << r.out;
}

TEST(SlurmJobMonitorCli, DaemonLogsFailuresAndKeepsGoing) {
  FakeSlurm fake;
  fake.add("sinfo", "echo 'sinfo: error: Unable to contact slurm controller' >&2; exit 1");
  fake.cat("squeue", kOurs + "squeue-O.txt");
  auto r = run_gcm(logged({"slurm_job_monitor", "--interval", "1", "--cluster", "tb", "--stdout"}),
                   std::chrono::seconds(3), fake.env());
  EXPECT_TRUE(r.timed_out) << "a daemon does not exit on a failed round: " << r.out;
  EXPECT_GE(with_key(records_of(r.out), "JOBID_RAW").size(), 28u) << "two rounds or more: " << r.out;
  size_t errors = 0;
  for (size_t p = 0; (p = r.out.find("Unable to contact slurm controller", p)) != std::string::npos; ++p) ++errors;
  EXPECT_GE(errors, 2u) << r.out;
}

// --sinfo-format auto asks `sinfo -V`: Slurm 23.11 and later get the JSON source (GCM's 2026 one), older ones the
// text; --sinfo-format json forces it (22.05's node records are read too).
TEST(SlurmJobMonitorCli, SinfoFormatFollowsTheSlurmVersion) {
  const std::string docs = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-docs/";
  auto nodes_with = [&](const std::string& version, const std::string& json_file, std::vector<std::string> extra) {
    FakeSlurm fake;
    fake.add("sinfo", "case \"$*\" in\n  -V) echo '" + version + "' ;;\n  '--all -N --json') cat '" + json_file +
                          "' ;;\n  '--all -N -o %all') cat '" + kOurs +
                          "sinfo-all.txt' ;;\n  *) echo \"unexpected: $*\" >&2; exit 1 ;;\nesac");
    fake.cat("squeue", kOurs + "squeue-O.txt");
    std::vector<std::string> args = {"slurm_job_monitor", "--once",      "--cluster", "tb",
                                     "--stdout",          "--log-level", "DEBUG"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_gcm(logged(args), std::chrono::seconds(30), fake.env());
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return std::make_pair(with_key(records_of(r.out), "NODE_NAME"), r.out + r.err);
  };
  auto [json24, log24] = nodes_with("slurm 24.05.4", docs + "sinfo-all-N-json-24.05.json", {});
  ASSERT_EQ(json24.size(), 9u) << log24;
  EXPECT_EQ(json24[0]["PARTITION"], "gpu") << "the JSON source: no '*' on the default partition";
  EXPECT_EQ(json24[7]["STATE"], "drained");
  EXPECT_NE(log24.find("nodes from sinfo --json"), std::string::npos) << log24;

  auto [text22, log22] = nodes_with("slurm-wlm 22.05.8", kOurs + "sinfo-all-N.json", {});
  ASSERT_EQ(text22.size(), 9u) << log22;
  EXPECT_EQ(text22[0]["PARTITION"], "gpu*") << "the text source";
  EXPECT_NE(log22.find("nodes from sinfo -o %all"), std::string::npos) << log22;

  auto [json22, log22json] = nodes_with("slurm-wlm 22.05.8", kOurs + "sinfo-all-N.json", {"--sinfo-format", "json"});
  ASSERT_EQ(json22.size(), 9u) << log22json;
  EXPECT_EQ(json22[0]["PARTITION"], "gpu");
  EXPECT_EQ(json22[7]["CPUS_OTHER"], 4);

  auto bad = run_gcm(logged({"slurm_job_monitor", "--once", "--sinfo-format", "xml"}));
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE((bad.out + bad.err).find("--sinfo-format"), std::string::npos) << bad.out << bad.err;
}

TEST(SlurmJobMonitorCli, HelpDescribesTheCollectorsAndTheTimeout) {
  for (const char* cmd : {"slurm_job_monitor", "scontrol", "scontrol_config"}) {
    auto r = run_gcm(logged({cmd, "--help"}));
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("--slurm-timeout"), std::string::npos) << cmd << r.out;
    EXPECT_NE(r.out.find("--interval"), std::string::npos) << cmd;
  }
}

// --- the live testbed ---

#define REQUIRE_TESTBED()                                                                                       \
  if (!testbed_up())                                                                                            \
  GTEST_SKIP() << "the Slurm testbed is not running (SLURM_CONF unset or scontrol ping failed); start it with " \
                  "tests/testbed/start.sh and source tests/testbed/env.sh"

TEST(SlurmJobMonitorTestbed, AgreesWithTheCluster) {
  REQUIRE_TESTBED();
  Workload workload;
  auto r = run_gcm(logged({"slurm_job_monitor", "--once", "--sink", "stdout", "--stdout"}), std::chrono::seconds(60));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto records = records_of(r.out);
  auto nodes = with_key(records, "NODE_NAME");
  std::map<std::string, json> by_node;
  for (const auto& n : nodes) by_node[n["NODE_NAME"]] = n;
  EXPECT_EQ(by_node.size(), 8u);
  int64_t gpus = 0;
  for (const auto& [name, n] : by_node) gpus += n["NUM_GPUS"].get<int64_t>();
  EXPECT_EQ(gpus, 16);
  EXPECT_EQ(nodes.at(0)["num_rows"].get<size_t>(), nodes.size());
  EXPECT_TRUE(by_node["node7"]["STATE"].get<std::string>().starts_with("drain")) << by_node["node7"];
  EXPECT_NE(by_node["node7"]["REASON"].get<std::string>().find("GPU fell off the bus"), std::string::npos);
  EXPECT_TRUE(by_node["node8"]["STATE"].get<std::string>().starts_with("down")) << by_node["node8"];
  EXPECT_EQ(by_node["node8"]["cluster"], "testbed");

  auto jobs = with_key(records, "JOBID_RAW");
  std::set<std::string> reasons;
  bool pending_resources = false, multinode = false;
  for (const auto& j : jobs) {
    if (j["STATE"] == "PENDING") reasons.insert(j["REASON"].get<std::string>());
    if (j["PENDING_RESOURCES"] == "True") pending_resources = true;
    if (j.contains("NODELIST") && j["NODELIST"].size() == 2 && j["TRES_GPUS_ALLOCATED"].get<int>() >= 2)
      multinode = true;
  }
  EXPECT_TRUE(reasons.count("Resources")) << r.out;
  EXPECT_TRUE(reasons.count("Dependency")) << r.out;
  bool qos = false;
  for (const auto& reason : reasons) qos = qos || reason.starts_with("QOS");
  EXPECT_TRUE(qos) << r.out;
  EXPECT_TRUE(pending_resources);
  EXPECT_TRUE(multinode);
  // The same count as squeue reports, give or take jobs of other tests starting or ending meanwhile.
  CommandSpec s;
  s.argv = {"squeue", "-h", "-o", "%i"};
  s.timeout = std::chrono::seconds(10);
  auto squeue = run_command(s).out;
  size_t n = static_cast<size_t>(std::count(squeue.begin(), squeue.end(), '\n'));
  EXPECT_NEAR(static_cast<double>(jobs.size()), static_cast<double>(n), 3.0);
}

// The two node sources on the live cluster, one after the other: the same NodeData, field by field, except
// PARTITION (the JSON does not mark the default partition) and FREE_MEM (slurmd's free memory moves between the two
// calls). Both run with TZ=UTC, where sinfo's text TIMESTAMP and the JSON's UTC one are the same.
TEST(SlurmJobMonitorTestbed, JsonNodeSourceAgreesWithTheText) {
  REQUIRE_TESTBED();
  Workload workload;
  auto nodes = [](const char* format) {
    auto r = run_gcm(logged({"slurm_job_monitor", "--once", "--sink", "stdout", "--stdout", "--sinfo-format", format}),
                     std::chrono::seconds(60), {"TZ=UTC"});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return with_key(records_of(r.out), "NODE_NAME");
  };
  // Keyed by node and partition: sinfo does not order a node's partitions the same way in both forms.
  auto by_row = [](const std::vector<json>& records) {
    std::map<std::string, json> out;
    for (const auto& r : records) {
      std::string p = r["PARTITION"].get<std::string>();
      if (p.ends_with("*")) p.pop_back();
      out[r["NODE_NAME"].get<std::string>() + "/" + p] = r;
    }
    return out;
  };
  auto text = by_row(nodes("text")), from_json = by_row(nodes("json"));
  ASSERT_GE(text.size(), 9u);
  ASSERT_EQ(from_json.size(), text.size());
  for (const auto& [row, t] : text) {
    ASSERT_TRUE(from_json.count(row)) << row;
    const json& j = from_json.at(row);
    for (const auto& [key, value] : t.items()) {
      if (key == "collection_unixtime") continue;
      if (key == "PARTITION") {
        std::string p = value.get<std::string>();
        if (p.ends_with("*")) p.pop_back();
        EXPECT_EQ(j[key], p) << row;
      } else if (key == "FREE_MEM") {
        EXPECT_NEAR(j[key].get<double>(), value.get<double>(), 200.0) << row;
      } else {
        EXPECT_EQ(j[key], value) << row << " " << key;
      }
    }
    EXPECT_EQ(j.size(), t.size()) << j << "\n" << t;
  }
}

TEST(SlurmJobMonitorTestbed, ScontrolAndConfig) {
  REQUIRE_TESTBED();
  auto r = run_gcm(logged({"scontrol", "--once", "--stdout", "--heterogeneous-cluster-v1"}), std::chrono::seconds(60));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto parts = records_of(r.out);
  std::map<std::string, json> by_name;
  for (const auto& p : parts) by_name[p["Partition"]] = p;
  ASSERT_EQ(by_name.size(), 2u) << r.out;
  EXPECT_EQ(by_name["gpu"]["TresGRESGPU"], 12);
  EXPECT_EQ(by_name["gpu"]["TotalNodes"], 6);
  EXPECT_EQ(by_name["debug"]["MaxNodes"], 2);
  EXPECT_EQ(by_name["debug"]["derived_cluster"], "testbed.debug");
  r = run_gcm(logged({"scontrol_config", "--once", "--stdout"}), std::chrono::seconds(60));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto config = records_of(r.out);
  ASSERT_EQ(config.size(), 1u);
  EXPECT_EQ(config[0]["ClusterName"], "testbed");
  EXPECT_EQ(config[0]["cluster"], "testbed");
  EXPECT_TRUE(config[0]["SlurmdPort"].is_number_integer());
  const auto [major, minor] = testbed_release();
  EXPECT_TRUE(config[0]["SLURM_VERSION"].get<std::string>().starts_with(fmt::format("{}.{:02}", major, minor)))
      << config[0]["SLURM_VERSION"];
}

}  // namespace
}  // namespace gcm::testing

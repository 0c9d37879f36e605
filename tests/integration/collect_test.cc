// gcm collect as a process, on fake Slurm commands that log every invocation: slurm_job_monitor and slurm_monitor in
// one daemon ask sinfo for the nodes once per cycle and the cluster name once, write the records their own commands
// write, and the daemon's self-metrics count the queries that really ran.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "core/http_client.h"
#include "helpers.h"
#include "process.h"

namespace gcm::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const std::string k2205 = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-22.05/";

// Fake Slurm commands answering with the 22.05 fixtures; each invocation appends "command args" to <dir>/calls.
struct FakeSlurm {
  std::string dir = temp_dir("collect");
  FakeSlurm() {
    const std::string log = "echo \"$(basename \"$0\") $*\" >> '" + dir + "/calls'\n";
    write_script(dir + "/sinfo", log +
                                     "case \"$*\" in\n"
                                     "  -V) cat '" +
                                     k2205 +
                                     "sinfo-V.txt' ;;\n"
                                     "  *--json*) cat '" +
                                     k2205 +
                                     "sinfo-all-N.json' ;;\n"
                                     "  *-O*) cat '" +
                                     k2205 +
                                     "sinfo-O-nodes.txt' ;;\n"
                                     "  *%all*) cat '" +
                                     k2205 +
                                     "sinfo-all.txt' ;;\n"
                                     "  *) echo \"fake sinfo: unexpected $*\" >&2; exit 2 ;;\nesac");
    write_script(dir + "/squeue", log + "cat '" + k2205 + "squeue-O.txt'");
    write_script(dir + "/sdiag", log + "cat '" + k2205 + "sdiag.txt'");
    write_script(dir + "/sacct", log + "cat '" + k2205 + "sacct-slurm-monitor-local.txt'");
    write_script(dir + "/scontrol", log + "cat '" + k2205 + "scontrol-config.txt'");
  }
  std::vector<std::string> env() const { return {"PATH=" + dir + ":" + std::getenv("PATH")}; }

  // Invocations whose line starts with `prefix`.
  size_t calls(const std::string& prefix) const {
    std::istringstream in(read_text(dir + "/calls"));
    size_t n = 0;
    for (std::string line; std::getline(in, line);)
      if (line.rfind(prefix, 0) == 0) ++n;
    return n;
  }
  size_t all_calls() const { return calls(""); }

  // A config running both node collectors into files of this directory.
  std::string config(const std::string& extra = "") const {
    std::string path = dir + "/gcm.toml";
    std::ofstream(path) << "[gcm.collect]\ncollectors = [\"slurm_job_monitor\", \"slurm_monitor\"]\n"
                        << extra << "\n[gcm.slurm_job_monitor]\nsink = \"file\"\nsink_opts = [\"file_path=" << dir
                        << "/job_monitor.jsonl\"]\nsinfo_format = \"json\"\n"
                        << "\n[gcm.slurm_monitor]\nsink = \"file\"\nsink_opts = [\"file_path=" << dir
                        << "/monitor.jsonl\"]\ninterval = 300\n";
    return path;
  }
  std::vector<json> records(const std::string& file) const {
    std::vector<json> v;
    std::istringstream in(read_text(dir + "/" + file));
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) v.push_back(json::parse(line));
    return v;
  }
};

TEST(Collect, OneSinfoAndOneClusterLookupServeBothCollectors) {
  FakeSlurm f;
  auto r = run_gcm({"--config", f.config(), "collect", "--once", "--log-folder", f.dir}, 60s, f.env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << read_text(f.dir + "/calls");
  EXPECT_EQ(f.calls("sinfo --all -N --json"), 1u) << read_text(f.dir + "/calls");
  EXPECT_EQ(f.calls("sinfo --all -N -O"), 0u) << "slurm_monitor's nodes come from the JSON answer";
  EXPECT_EQ(f.calls("scontrol show config"), 1u) << "the cluster name is asked once for both";
  EXPECT_EQ(f.calls("squeue"), 1u);
  EXPECT_EQ(f.calls("sdiag"), 1u);
  EXPECT_EQ(f.calls("sacct"), 1u);

  auto jobs_file = f.records("job_monitor.jsonl");
  EXPECT_EQ(with_key(jobs_file, "NODE_NAME").size(), 9u);
  EXPECT_EQ(with_key(jobs_file, "JOBID_RAW").size(), 14u);
  auto monitor = f.records("monitor.jsonl");
  auto log = with_key(monitor, "nodes_total");
  ASSERT_EQ(log.size(), 1u) << read_text(f.dir + "/monitor.jsonl");
  // The figures of slurm_monitor's own `sinfo -O` on the same cluster state (SlurmMonitorFake.OnceOnRecordedOutputs).
  EXPECT_EQ(log[0]["nodes_total"], 8);
  EXPECT_EQ(log[0]["total_gpus_avail"], 16);
  EXPECT_EQ(log[0]["total_gpus_alloc"], 9);
  // scontrol-config.txt's ClusterName, on every record (the account records carry it as derived_cluster).
  for (const auto& rec : monitor)
    EXPECT_EQ(rec.contains("cluster") ? rec["cluster"] : rec["derived_cluster"], "testbed") << rec.dump();
  // The summary counts exactly the commands the rounds ran (all but the cluster-name lookup), and one shared answer:
  // the nodes, asked by both.
  std::regex summary(R"((\w+): \d+ record\(s\), 0 failed round\(s\), Slurm queries: (\d+) run, (\d+) shared)");
  size_t run = 0, shared = 0, collectors = 0;
  for (std::sregex_iterator it(r.err.begin(), r.err.end(), summary), end; it != end; ++it) {
    ++collectors;
    run += std::stoul((*it)[2]);
    shared += std::stoul((*it)[3]);
  }
  EXPECT_EQ(collectors, 2u) << r.err;
  EXPECT_EQ(run, f.all_calls() - 1) << r.err << read_text(f.dir + "/calls");
  EXPECT_EQ(shared, 1u) << r.err;
}

TEST(Collect, SeparateQueriesAskAsSeparateProcessesDo) {
  FakeSlurm f;
  auto r =
      run_gcm({"--config", f.config(), "collect", "--once", "--separate-queries", "--log-folder", f.dir}, 60s, f.env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(f.calls("sinfo --all -N --json"), 1u);
  EXPECT_EQ(f.calls("sinfo --all -N -O"), 1u);
  // The records are the same as with the shared snapshot.
  auto log = with_key(f.records("monitor.jsonl"), "nodes_total");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["total_gpus_alloc"], 9);
  EXPECT_EQ(with_key(f.records("job_monitor.jsonl"), "NODE_NAME").size(), 9u);
}

TEST(Collect, BadConfigurationIsAUsageError) {
  FakeSlurm f;
  auto none = run_gcm({"--config", "/dev/null", "collect", "--once", "--log-folder", f.dir}, 30s, f.env());
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_NE(none.err.find("no collectors"), std::string::npos) << none.err;
  auto unknown =
      run_gcm({"--config", "/dev/null", "collect", "--once", "--collector", "slurm_monitr", "--log-folder", f.dir}, 30s,
              f.env());
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("unknown collector 'slurm_monitr'"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("slurm_monitor"), std::string::npos) << "the known ones are listed: " << unknown.err;
  auto twice = run_gcm({"--config", f.config(), "collect", "--once", "--collector", "scontrol", "--collector",
                        "scontrol", "--log-folder", f.dir},
                       30s, f.env());
  EXPECT_EQ(twice.exit_code, 2) << twice.err;
  EXPECT_NE(twice.err.find("named twice"), std::string::npos) << twice.err;
  EXPECT_EQ(f.calls(""), 0u) << "nothing ran";
}

// A failed Slurm query fails that collector's round (exit 1 with --once) and not the other's.
TEST(Collect, AFailedQueryFailsOnlyItsCollector) {
  FakeSlurm f;
  write_script(f.dir + "/squeue",
               "echo 'squeue: error: slurm_load_jobs error: Unable to contact slurm controller' >&2; "
               "exit 1");
  auto r = run_gcm({"--config", f.config(), "collect", "--once", "--log-folder", f.dir}, 60s, f.env());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("slurm_job_monitor: "), std::string::npos) << r.err;
  std::regex job_failed(R"(slurm_job_monitor: \d+ record\(s\), 1 failed round)");
  std::regex monitor_ok(R"(slurm_monitor: \d+ record\(s\), 0 failed round)");
  EXPECT_TRUE(std::regex_search(r.err, job_failed)) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, monitor_ok)) << r.err;
  EXPECT_EQ(with_key(f.records("monitor.jsonl"), "nodes_total").size(), 1u);
}

double metric(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  return -1;
}

// As a daemon: rounds every interval on a shared schedule, and /metrics counts exactly the commands that ran.
TEST(Collect, DaemonMetricsCountTheQueriesThatRan) {
  FakeSlurm f;
  int port = free_port();
  std::string config = f.dir + "/daemon.toml";
  std::ofstream(config) << "[gcm.collect]\ncollectors = [\"slurm_job_monitor\", \"slurm_monitor\"]\n"
                        << "listen = \"127.0.0.1:" << port << "\"\n"
                        << "\n[gcm.slurm_job_monitor]\nsink = \"do_nothing\"\nsinfo_format = \"json\"\ninterval = 1\n"
                        << "\n[gcm.slurm_monitor]\nsink = \"do_nothing\"\ninterval = 1\n";
  BackgroundProcess p({gcm_binary(), "--config", config, "collect", "--log-folder", f.dir}, f.dir + "/stderr", f.env());
  HttpClient http;
  std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  std::string text;
  ASSERT_TRUE(eventually(
      [&] {
        try {
          text = http.get(url, 2s).body;
          return metric(text, "gcm_collect_rounds_total{collector=\"slurm_monitor\"}") >= 3 &&
                 metric(text, "gcm_collect_rounds_total{collector=\"slurm_job_monitor\"}") >= 3;
        } catch (const std::exception&) {
          return false;
        }
      },
      30s))
      << text << read_text(f.dir + "/stderr");
  EXPECT_EQ(p.stop(SIGTERM, 10s), 0) << read_text(f.dir + "/stderr");

  EXPECT_EQ(metric(text, "gcm_collect_round_failures_total{collector=\"slurm_monitor\"}"), 0) << text;
  EXPECT_EQ(metric(text, "gcm_collect_round_failures_total{collector=\"slurm_job_monitor\"}"), 0) << text;
  double run = metric(text, "gcm_collect_slurm_queries_total{collector=\"slurm_monitor\",answer=\"run\"}") +
               metric(text, "gcm_collect_slurm_queries_total{collector=\"slurm_job_monitor\",answer=\"run\"}");
  double shared = metric(text, "gcm_collect_slurm_queries_total{collector=\"slurm_monitor\",answer=\"shared\"}") +
                  metric(text, "gcm_collect_slurm_queries_total{collector=\"slurm_job_monitor\",answer=\"shared\"}");
  // Each cycle both ask for the nodes and one of them runs sinfo: a shared answer per cycle, three cycles at least.
  EXPECT_GE(shared, 3) << text;
  EXPECT_GT(metric(text, "gcm_collect_snapshot_bytes"), 0) << text;
  // The rounds counted no more commands than the fake logged (the log may be a round ahead of the scrape), and the
  // cluster name was asked once in all.
  EXPECT_EQ(f.calls("scontrol show config"), 1u);
  EXPECT_LE(run, static_cast<double>(f.all_calls() - 1)) << text << read_text(f.dir + "/calls");
  EXPECT_GE(f.calls("sinfo --all -N --json"), 3u);
  EXPECT_EQ(f.calls("sinfo --all -N -O"), 0u);
}

}  // namespace
}  // namespace gcm::testing

// --slurm-backend rest on the live testbed: slurmrestd (rest_auth/local on its unix socket) gives slurm_job_monitor,
// slurm_monitor, scontrol, sacctmgr_qos, sacctmgr_user, sacct_running and sshare the same records as Slurm's commands,
// field by field, apart from the fields listed in docs/reference/collectors.md ("Slurm REST backend") with the reason
// each cannot agree. Each test runs with the API version negotiated (the newest /openapi/v3 lists) and then with every
// version the server offers forced once (--slurm-rest-api-version), on whichever Slurm the testbed runs
// (GCM_TESTBED_SLURM: 22.05, 24.11, 25.11).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "helpers.h"
#include "sacct/sacct_records.h"
#include "slurm/rest_client.h"
#include "slurm/rest_render_sacct.h"
#include "slurm_fakes.h"
#include "testbed_workload.h"

namespace gcm::testing {
namespace {

using nlohmann::json;

#define REQUIRE_TESTBED()                                                                                       \
  if (!testbed_up() || !std::getenv("GCM_TESTBED_REST_SOCKET"))                                                 \
  GTEST_SKIP() << "the Slurm testbed is not running (SLURM_CONF unset or scontrol ping failed); start it with " \
                  "tests/testbed/start.sh and source tests/testbed/env.sh"

std::string rest_url() { return std::string("unix:") + std::getenv("GCM_TESTBED_REST_SOCKET"); }

// "v0.0.41" -> 41.
int api_minor(const std::string& api) { return std::stoi(api.substr(api.rfind('.') + 1)); }

// The REST API versions slurmrestd offers, oldest first: the /slurm/vX.Y.Z/ paths its /openapi/v3 lists (Slurm writes
// a / in a JSON string as \/ from 23.02 on; nlohmann reads both).
const std::vector<std::string>& offered_apis() {
  static const std::vector<std::string> apis = [] {
    std::string file = temp_dir("rest-openapi") + "/openapi.json";
    run_ok({"curl", "-sS", "--fail", "--max-time", "30", "--unix-socket", std::getenv("GCM_TESTBED_REST_SOCKET"), "-o",
            file, "http://slurmrestd/openapi/v3"});
    std::ifstream in(file);
    json doc = json::parse(in);
    std::set<std::string> found;
    for (const auto& [path, unused] : doc.at("paths").items())
      if (path.rfind("/slurm/v", 0) == 0) found.insert(path.substr(7, path.find('/', 7) - 7));
    std::vector<std::string> out(found.begin(), found.end());
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return api_minor(a) < api_minor(b); });
    return out;
  }();
  return apis;
}

// The API versions each REST test runs with: "" (negotiated) and every one offered from v0.0.38 on, forced. 22.05's
// slurmrestd also offers v0.0.36 and v0.0.37, whose layouts the renderers do not read (docs/reference/collectors.md).
std::vector<std::string> apis_to_test() {
  std::vector<std::string> out = {""};
  for (const auto& a : offered_apis())
    if (api_minor(a) >= 38) out.push_back(a);
  return out;
}
// The version a run with `api` uses: the newest offered when negotiated.
std::string api_in_use(const std::string& api) { return api.empty() ? offered_apis().back() : api; }
std::string api_label(const std::string& api) { return api.empty() ? "negotiated (" + api_in_use(api) + ")" : api; }

std::vector<std::string> rest_backend(const std::string& api) {
  std::vector<std::string> args = {"--slurm-backend", "rest", "--slurm-rest-url", rest_url()};
  if (!api.empty()) args.insert(args.end(), {"--slurm-rest-api-version", api});
  return args;
}
std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

struct Collected {
  std::vector<json> records;
  std::string log;
};

Collected run(const std::string& dir, std::vector<std::string> args, std::vector<std::string> env = {}) {
  args.insert(args.end(), {"--once", "--sink", "stdout", "--stdout", "--log-folder", dir});
  env.push_back("TZ=UTC");
  auto r = run_gcm(args, std::chrono::seconds(60), env);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return {records_of(r.out), r.out + r.err};
}

std::map<std::string, json> keyed(const std::vector<json>& records, const std::string& key) {
  std::map<std::string, json> out;
  for (const auto& r : records)
    if (r.contains(key)) {
      std::string k = r[key].get<std::string>();
      if (r.contains("PARTITION") && key == "NODE_NAME") k += "/" + r["PARTITION"].get<std::string>();
      out[k] = r;
    }
  return out;
}

// "1:58:18" / "58:17" / "1-01:00:00" -> seconds.
int64_t seconds_of(const std::string& t) {
  int64_t days = 0, total = 0;
  std::string rest = t;
  if (auto dash = rest.find('-'); dash != std::string::npos) {
    days = std::stoll(rest.substr(0, dash));
    rest = rest.substr(dash + 1);
  }
  for (size_t at = 0; at <= rest.size();) {
    size_t colon = rest.find(':', at);
    total = total * 60 + std::stoll(rest.substr(at, colon - at));
    if (colon == std::string::npos) break;
    at = colon + 1;
  }
  return days * 86400 + total;
}

// The API versions offered are those of the Slurm the testbed runs, and the one negotiated is the newest.
TEST(SlurmRestBackendTestbed, TheNewestApiVersionOfferedIsNegotiated) {
  REQUIRE_TESTBED();
  const auto release = testbed_release();
  const std::vector<std::string>& apis = offered_apis();
  ASSERT_FALSE(apis.empty());
  if (release == std::make_pair(24, 11)) {
    EXPECT_EQ(apis, (std::vector<std::string>{"v0.0.40", "v0.0.41", "v0.0.42"}));
  } else if (release == std::make_pair(25, 11)) {
    EXPECT_EQ(apis, (std::vector<std::string>{"v0.0.41", "v0.0.42", "v0.0.43", "v0.0.44"}));
  }
  gcm::slurm::CannedSlurmClient cli;
  gcm::slurm::SlurmRestOptions o;
  o.url = rest_url();
  gcm::slurm::RestSlurmClient rest(o, cli);
  EXPECT_EQ(rest.api_version(), apis.back());
  EXPECT_EQ(rest.requests(), 1u) << "asked once";
  EXPECT_EQ(rest.api_version(), apis.back());
  EXPECT_EQ(rest.requests(), 1u) << "and kept";
}

TEST(SlurmRestBackendTestbed, SlurmJobMonitorRecordsAgreeWithTheCli) {
  REQUIRE_TESTBED();
  std::string dir = temp_dir("rest-backend");
  Workload workload;
  const bool json_by_default = testbed_release() >= std::make_pair(23, 11);
  for (const std::string& api : apis_to_test()) {
    SCOPED_TRACE("API " + api_label(api));
    // The CLI with the JSON node source, which reads the same node records slurmrestd serves: what
    // --sinfo-format auto (the default) picks from Slurm 23.11 on, forced on older ones.
    Collected cli = run(dir, json_by_default ? std::vector<std::string>{"slurm_job_monitor", "--log-level", "DEBUG"}
                                             : std::vector<std::string>{"slurm_job_monitor", "--sinfo-format", "json"});
    if (json_by_default) {
      EXPECT_NE(cli.log.find(": nodes from sinfo --json"), std::string::npos) << cli.log;
    }
    Collected rest = run(dir, with({"slurm_job_monitor"}, rest_backend(api)));
    EXPECT_NE(rest.log.find("nodes and jobs from slurmrestd at " + rest_url()), std::string::npos) << rest.log;

    auto cli_nodes = keyed(cli.records, "NODE_NAME"), rest_nodes = keyed(rest.records, "NODE_NAME");
    ASSERT_GE(cli_nodes.size(), 9u);
    ASSERT_EQ(rest_nodes.size(), cli_nodes.size());
    for (const auto& [row, c] : cli_nodes) {
      const json& r = rest_nodes.at(row);
      for (const auto& [key, value] : c.items()) {
        if (key == "collection_unixtime") continue;
        if (key == "FREE_MEM") {  // slurmd's free memory moves between the two runs
          EXPECT_NEAR(r[key].get<double>(), value.get<double>(), 200.0) << row;
        } else {
          EXPECT_EQ(r[key], value) << row << " " << key;
        }
      }
      EXPECT_EQ(r.size(), c.size()) << r << "\n" << c;
    }

    auto cli_jobs = keyed(cli.records, "JOBID"), rest_jobs = keyed(rest.records, "JOBID");
    ASSERT_GE(cli_jobs.size(), 14u);
    ASSERT_EQ(rest_jobs.size(), cli_jobs.size());
    size_t gpu_indices = 0;
    for (const auto& [id, c] : cli_jobs) {
      ASSERT_TRUE(rest_jobs.count(id)) << id;
      const json& r = rest_jobs.at(id);
      for (const auto& [key, value] : c.items()) {
        if (key == "collection_unixtime") continue;
        // Not in slurmrestd's v0.0.38 jobs: null from REST. From v0.0.39 on it is compared in the golden tests (a
        // recording of one instant): here the backfill scheduler may plan a pending job again between the two runs.
        if (key == "SCHEDNODES") continue;
        if (key == "TIME_LEFT" || key == "TIME_USED") {  // counted from each run's own clock
          EXPECT_NEAR(seconds_of(r[key]), seconds_of(value), 5) << id << " " << key;
        } else if (key == "PENDING_TIME" || key == "LAST_SCHED_EVAL") {
          if (key == "PENDING_TIME") {
            EXPECT_NEAR(r[key].get<double>(), value.get<double>(), 5.0) << id;
          }
          // the scheduler may evaluate a pending job between the two runs; the field is there in both
          EXPECT_TRUE(r.contains(key)) << id;
        } else {
          EXPECT_EQ(r[key], value) << id << " " << key;
        }
      }
      EXPECT_FALSE(c.contains("GRES_GPU_INDICES")) << "squeue has no gres_detail";
      if (r.contains("GRES_GPU_INDICES")) {
        ++gpu_indices;
        EXPECT_EQ(r["NODES"], 1) << "only a one-node job has its GPU indices: " << r;
      }
    }
    EXPECT_GE(gpu_indices, 3u) << "the running one-node GPU jobs";
  }
  std::filesystem::remove_all(dir);
}

// [gcm] slurm_backend in the config chooses the REST back end for every collector; a command's own table or option
// still wins; a bad URL or an unreachable slurmrestd is a clear error.
TEST(SlurmRestBackendTestbed, ConfigChoosesTheBackendAndFailuresAreClear) {
  REQUIRE_TESTBED();
  std::string dir = temp_dir("rest-config");
  std::ofstream(dir + "/config.toml") << "[gcm]\nslurm_backend = \"rest\"\nslurm_rest_url = \"" << rest_url()
                                      << "\"\n\n[gcm.slurm_monitor]\nslurm_backend = \"cli\"\n";
  Collected rest = run(dir, {"--config", dir + "/config.toml", "slurm_job_monitor"});
  EXPECT_NE(rest.log.find("from slurmrestd"), std::string::npos) << rest.log;
  EXPECT_EQ(rest.log.find("unknown key"), std::string::npos) << rest.log;
  auto r =
      run_gcm({"--config", dir + "/config.toml", "slurm_monitor", "--once", "--sink", "stdout", "--log-folder", dir},
              std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ((r.out + r.err).find("slurmrestd"), std::string::npos) << "[gcm.slurm_monitor] keeps the CLI";

  r = run_gcm({"slurm_job_monitor", "--once", "--slurm-backend", "rest", "--log-folder", dir});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("needs --slurm-rest-url"), std::string::npos) << r.err;
  r = run_gcm({"slurm_job_monitor", "--once", "--slurm-backend", "rest", "--slurm-rest-url", "unix:" + dir + "/none",
               "--log-folder", dir});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("slurmrestd did not answer"), std::string::npos) << r.out << r.err;
  // An API version whose layouts are not read (22.05's slurmrestd offers v0.0.36 and v0.0.37) is refused up front,
  // rather than its answers written as wrong values.
  r = run_gcm({"slurm_job_monitor", "--once", "--slurm-backend", "rest", "--slurm-rest-url", rest_url(),
               "--slurm-rest-api-version", "v0.0.37", "--log-folder", dir});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--slurm-rest-api-version v0.0.37: older than v0.0.38"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

// A PATH for a REST run on which `command` refuses when its arguments match the shell pattern `refused`: what the
// collector should ask slurmrestd must come from it, not from a silent fall-back to the command (which would give the
// same records). Every other use of the command runs the real one.
std::string path_refusing(const std::string& dir, const std::string& command, const std::string& refused) {
  std::string real;
  for (std::string_view path = std::getenv("PATH"); real.empty() && !path.empty();) {
    std::string dir_of_path(path.substr(0, path.find(':')));
    path.remove_prefix(std::min(path.size(), dir_of_path.size() + 1));
    if (!dir_of_path.empty() && ::access((dir_of_path + "/" + command).c_str(), X_OK) == 0)
      real = dir_of_path + "/" + command;
  }
  EXPECT_FALSE(real.empty()) << command << " is not on PATH";
  std::filesystem::create_directories(dir + "/bin");
  write_script(dir + "/bin/" + command, "case \"$*\" in " + refused + ") echo '" + command +
                                            " '\"$*\"' ran' >&2; exit 1;; esac\nexec " + real + " \"$@\"");
  return "PATH=" + dir + "/bin:" + std::getenv("PATH");
}

TEST(SlurmRestBackendTestbed, ScontrolPartitionsAgreeWithTheCli) {
  REQUIRE_TESTBED();
  std::string dir = temp_dir("rest-scontrol");
  Collected cli = run(dir, {"scontrol", "--heterogeneous-cluster-v1"});
  ASSERT_EQ(cli.records.size(), 2u) << cli.log;
  std::string no_scontrol = path_refusing(dir, "scontrol", "*partition*");
  for (const std::string& api : apis_to_test()) {
    SCOPED_TRACE("API " + api_label(api));
    Collected rest = run(dir, with({"scontrol", "--heterogeneous-cluster-v1"}, rest_backend(api)), {no_scontrol});
    ASSERT_EQ(rest.records.size(), cli.records.size()) << rest.log;
    for (size_t i = 0; i < cli.records.size(); ++i) {
      json c = cli.records[i], r = rest.records[i];
      c.erase("collection_unixtime");
      r.erase("collection_unixtime");
      // The partitions of v0.0.40 and later carry no PreemptMode (docs/reference/collectors.md): null from REST.
      if (api_minor(api_in_use(api)) >= 40) {
        EXPECT_FALSE(c["PreemptMode"].is_null()) << "scontrol prints it, so the difference is seen";
        EXPECT_TRUE(!r.contains("PreemptMode") || r["PreemptMode"].is_null()) << r;
        c.erase("PreemptMode");
        r.erase("PreemptMode");
      }
      EXPECT_EQ(r, c) << rest.log;
    }
  }
  std::filesystem::remove_all(dir);
}

// sacctmgr_qos and sacctmgr_user from slurmdbd through slurmrestd: the same records as sacctmgr's, the QOS `capped`
// (every limit set) included, apart from the two QOS columns API versions before v0.0.42 have no key for.
TEST(SlurmRestBackendTestbed, SacctmgrQosAndUsersAgreeWithTheCli) {
  REQUIRE_TESTBED();
  std::string dir = temp_dir("rest-sacctmgr");
  std::string no_sacctmgr = path_refusing(dir, "sacctmgr", "*");
  for (const std::string& api : apis_to_test()) {
    SCOPED_TRACE("API " + api_label(api));
    auto both = [&](const std::string& collector) {
      std::vector<std::string> args = {collector, "--cluster", "testbed"};
      Collected cli = run(dir, args);
      Collected rest = run(dir, with(args, rest_backend(api)), {no_sacctmgr});
      EXPECT_NE(rest.log.find("from slurmrestd at " + rest_url()), std::string::npos) << rest.log;
      return std::make_pair(cli, rest);
    };
    // GrpTRESMins and GrpSubmit: keys of v0.0.42 and later only (limits.max.tres.minutes.total, limits.max.jobs.count).
    const std::vector<const char*> absent = api_minor(api_in_use(api)) < 42
                                                ? std::vector<const char*>{"GrpTRESMins", "GrpSubmit"}
                                                : std::vector<const char*>{};

    auto [cli_qos, rest_qos] = both("sacctmgr_qos");
    ASSERT_EQ(cli_qos.records.size(), 4u) << cli_qos.log;
    ASSERT_EQ(rest_qos.records.size(), cli_qos.records.size()) << rest_qos.log;
    bool capped = false;
    for (size_t i = 0; i < cli_qos.records.size(); ++i) {
      json c = cli_qos.records[i], r = rest_qos.records[i];
      capped |= c["sacctmgr_qos"]["Name"] == "capped";
      EXPECT_FALSE(c["sacctmgr_qos"]["GrpSubmit"].get<std::string>().empty() && c["sacctmgr_qos"]["Name"] == "capped")
          << "the testbed's capped QOS sets GrpSubmit, so the difference below is seen";
      for (const char* column : absent) {
        EXPECT_EQ(r["sacctmgr_qos"][column], "") << column;
        c["sacctmgr_qos"][column] = "";
      }
      EXPECT_EQ(r, c) << "QOS " << c["sacctmgr_qos"]["Name"];
    }
    EXPECT_TRUE(capped);

    auto [cli_users, rest_users] = both("sacctmgr_user");
    ASSERT_EQ(cli_users.records.size(), 5u) << cli_users.log;
    EXPECT_EQ(rest_users.records, cli_users.records) << rest_users.log;
  }
  std::filesystem::remove_all(dir);
}

// sacct_running: every running job and step sacct lists comes from slurmdbd's /jobs?state=running with the same
// values, with sacct refused on PATH for the REST run (the test fails when the route falls back to the CLI).
TEST(SlurmRestBackendTestbed, SacctRunningRecordsAgreeWithTheCli) {
  REQUIRE_TESTBED();
  std::string dir = temp_dir("rest-sacct");
  Workload workload;
  // A job whose first step has ended: sacct -s running lists only its running steps, and so does slurmdbd for
  // /jobs?state=running (the same query in slurmdbd).
  // --priority=TOP: the workload's pending 4-node job would otherwise keep it waiting for the backfill scheduler.
  Job two_steps({"-p", "gpu", "-N1", "-n1", "--priority=TOP", "-J", "gcm-rest-sacct-steps", "--wrap",
                 "srun true; srun sleep 300"});
  // Until sacct -s running lists it as it should: its running step and not the ended one (slurmdbd keeps a step that
  // ended in the current second, and a job that has just started appears a few seconds after sacct -j shows it).
  auto listed_by_sacct = [&] {
    std::string rows = "\n" + run_ok({"sacct", "-n", "-P", "-s", "running,r", "-a", "--duplicates", "-o", "jobid"});
    return rows.find("\n" + two_steps.id + ".1\n") != std::string::npos &&
           rows.find("\n" + two_steps.id + ".0\n") == std::string::npos;
  };
  ASSERT_TRUE(eventually(listed_by_sacct, std::chrono::seconds(60)))
      << "job " << two_steps.id << ": sacct -s running did not come to list step 1 without step 0";
  std::string no_sacct = path_refusing(dir, "sacct", "*");
  const auto release = testbed_release();
  for (const std::string& api : apis_to_test()) {
    SCOPED_TRACE("API " + api_label(api));
    Collected cli = run(dir, {"sacct_running", "--cluster", "testbed"});
    Collected rest = run(dir, with({"sacct_running", "--cluster", "testbed"}, rest_backend(api)), {no_sacct});
    EXPECT_NE(rest.log.find("running jobs and steps from slurmrestd at " + rest_url()), std::string::npos) << rest.log;
    auto by_job = [](const std::vector<json>& records) {
      std::map<std::string, json> out;
      for (const auto& r : records)
        if (r.contains("JobID") && r["JobID"].is_string()) out[r["JobID"].get<std::string>()] = r;
      return out;
    };
    auto c = by_job(cli.records), r = by_job(rest.records);
    ASSERT_GE(c.size(), 10u) << "the workload's running jobs and their batch steps: " << cli.log;
    std::set<std::string> cli_ids, rest_ids;
    for (const auto& [id, unused] : c) cli_ids.insert(id);
    for (const auto& [id, unused] : r) rest_ids.insert(id);
    std::vector<std::string> both;
    std::set_intersection(cli_ids.begin(), cli_ids.end(), rest_ids.begin(), rest_ids.end(), std::back_inserter(both));
    // A job that ends between the two runs (the workload's TIMEOUT job, a previous test's cancelled job) is listed,
    // with its steps, by one of them only: at most two such jobs.
    std::string only_one;
    std::set<std::string> jobs_in_one;
    for (const auto* ids : {&cli_ids, &rest_ids})
      for (const auto& id : *ids)
        if (!std::binary_search(both.begin(), both.end(), id)) {
          only_one += " " + id;
          jobs_in_one.insert(id.substr(0, id.find('.')));
        }
    ASSERT_LE(jobs_in_one.size(), 2u) << "listed by one run only:" << only_one;
    for (const auto* ids : {&cli_ids, &rest_ids}) {
      std::string listed;
      for (const auto& id : *ids) listed += " " + id;
      EXPECT_TRUE(ids->count(two_steps.id + ".1")) << "the running step of " << two_steps.id << "; listed:" << listed;
      EXPECT_FALSE(ids->count(two_steps.id + ".0")) << "the completed step; listed:" << listed;
    }

    // Null from REST: the columns the renderer leaves out of its header (docs/reference/collectors.md, "The Slurm REST
    // backend"; which they are is pinned by the golden test of tests/unit/slurm/rest_render_sacct_test.cc), those of the
    // testbed's release. derived_cluster is the collector's own field, not a column.
    std::set<std::string> rest_columns;
    for (std::string_view column : gcm::slurm::rest_sacct_columns(release)) rest_columns.emplace(column);
    // The record keeps GCM's field names where sacct of 24.11 on prints new ones (Reserved for Planned).
    auto not_in_v0038 = [&](const std::string& field) {
      return field != "derived_cluster" && !rest_columns.count(field) &&
             !rest_columns.count(std::string(gcm::sacct::sacct_renamed_column(field)));
    };
    // Computed by slurmdbd at the moment of each query (now - start), so they move between the two runs: compared
    // within the seconds the runs are apart.
    const std::set<std::string> moving = {"Elapsed", "ElapsedRaw", "CPUTime", "CPUTimeRAW"};
    const int64_t apart_s = 30;
    size_t compared = 0;
    for (const auto& id : both) {
      json cr = c.at(id), rr = r.at(id);
      for (const auto& [field, value] : cr.items()) {
        if (not_in_v0038(field)) {
          EXPECT_TRUE(rr[field].is_null()) << id << "." << field;
          continue;
        }
        if (moving.count(field)) {
          int64_t a = value.is_string() ? seconds_of(value.get<std::string>()) : value.get<int64_t>();
          int64_t b = rr[field].is_string() ? seconds_of(rr[field].get<std::string>()) : rr[field].get<int64_t>();
          int64_t cpus = field.starts_with("CPU")
                             ? std::max<int64_t>(1, cr["NCPUS"].is_number() ? cr["NCPUS"].get<int64_t>() : 1)
                             : 1;
          EXPECT_GE(b, a) << id << "." << field << ": the REST run came second";
          EXPECT_LE(b - a, apart_s * cpus) << id << "." << field;
          continue;
        }
        if (field == "Flags" && api_minor(api_in_use(api)) < 40) {
          // v0.0.38 has no name for the flag sacct prints as StartRecieved (SLURMDB_JOB_FLAG_START_R).
          std::string flags = value.get<std::string>();
          EXPECT_EQ(rr[field], flags.substr(0, flags.find(",StartRecieved"))) << id;
          continue;
        }
        const std::string step = id.find('.') == std::string::npos ? "" : id.substr(id.find('.') + 1);
        if (field == "SubmitLine" && !step.empty() && std::isdigit(static_cast<unsigned char>(step[0]))) {
          // sacct prints a numbered step's own `srun ...`, which no API version's step has (collectors.md).
          EXPECT_EQ(rr[field], "") << id;
          continue;
        }
        EXPECT_EQ(rr[field], value) << id << "." << field;
        ++compared;
      }
    }
    // 71 fields a row compared exactly (Flags apart; 24.11's sacct prints Reserved, ResvCPU and ResvCPURAW as Planned,
    // PlannedCPU and PlannedCPURAW, and both back ends give them GCM's names).
    EXPECT_GE(compared, both.size() * 70) << "most fields compared exactly";
  }
  std::filesystem::remove_all(dir);
}

// slurm_monitor: the node aggregates from slurmrestd's nodes equal those from sinfo, and the Sdiag record comes
// from /diag (v0.0.38 has fewer statistics than the text: the others are null).
TEST(SlurmRestBackendTestbed, SlurmMonitorNodesAndSdiag) {
  REQUIRE_TESTBED();
  std::string dir = temp_dir("rest-monitor");
  for (const std::string& api : apis_to_test()) {
    SCOPED_TRACE("API " + api_label(api));
    Collected cli = run(dir, {"slurm_monitor"});
    Collected rest = run(dir, with({"slurm_monitor"}, rest_backend(api)));
    auto pick = [](const std::vector<json>& records, const char* key) {
      for (const auto& r : records)
        if (r.contains(key) && !r.contains("account")) return r;
      return json();
    };
    json c = pick(cli.records, "nodes_total"), r = pick(rest.records, "nodes_total");
    ASSERT_FALSE(c.is_null()) << cli.log;
    ASSERT_FALSE(r.is_null()) << rest.log;
    for (const char* key : {"nodes_total", "nodes_allocated", "nodes_idle", "nodes_mixed", "nodes_drained",
                            "nodes_down", "total_cpus_avail", "total_gpus_avail", "total_gpus_alloc", "total_gpus_up"})
      if (c.contains(key)) {
        EXPECT_EQ(r[key], c[key]) << key;
      }
    json cs = pick(cli.records, "schedule_cycle_max"), rs = pick(rest.records, "schedule_cycle_max");
    ASSERT_FALSE(rs.is_null()) << rest.log;
    EXPECT_TRUE(rs.contains("server_thread_count"));
    EXPECT_TRUE(cs.contains("server_thread_count"));
  }
  std::filesystem::remove_all(dir);
}

// sshare over GET /slurm/vX/shares (v0.0.39 and later; with v0.0.38 the collector runs sshare): the same tree as
// sshare's, row by row. RawShares and NormShares are compared exactly; the usage columns grow while jobs run, so they
// are only required to be there in both.
TEST(SlurmRestBackendTestbed, SshareOverSharesAgreesWithTheCli) {
  REQUIRE_TESTBED();
  std::string dir = temp_dir("rest-sshare");
  std::string no_sshare = path_refusing(dir, "sshare", "*");
  auto rows = [](const Collected& c) {
    std::vector<json> out;
    for (const auto& r : c.records)
      if (r.contains("sshare")) out.push_back(r["sshare"]);
    return out;
  };
  for (const std::string& api : apis_to_test()) {
    SCOPED_TRACE("API " + api_label(api));
    const bool has_shares = api_minor(api_in_use(api)) >= 39;
    Collected cli = run(dir, {"sshare", "--cluster", "testbed"});
    Collected rest = run(dir, with({"sshare", "--cluster", "testbed"}, rest_backend(api)),
                         has_shares ? std::vector<std::string>{no_sshare} : std::vector<std::string>{});
    std::vector<json> c = rows(cli), r = rows(rest);
    ASSERT_GE(c.size(), 9u) << cli.log;
    ASSERT_EQ(r.size(), c.size()) << rest.log;
    for (size_t i = 0; i < c.size(); ++i) {
      for (const char* key : {"Account", "User", "RawShares", "NormShares"}) {
        EXPECT_EQ(r[i][key], c[i][key]) << "row " << i << " " << key;
      }
      for (const char* key : {"RawUsage", "EffectvUsage"}) {
        EXPECT_TRUE(r[i].contains(key) && c[i].contains(key)) << "row " << i << " " << key;
      }
      EXPECT_EQ(r[i].size(), c[i].size()) << r[i] << "\n" << c[i];
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gcm::testing

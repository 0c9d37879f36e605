// slurmrestd's running jobs (GET /slurmdb/vX/jobs?state=running) written as sacct_running's sacct output: golden
// against sacct's rows recorded in the same second on the testbed (tests/fixtures/slurmrestd-<version>/, every API
// version of Slurm 22.05, 24.11 and 25.11), compared as the Sacct records sacct_running builds from each, and against
// hand-made answers for the error paths.
#include "slurm/rest_render_sacct.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "core/json.h"
#include "sacct/sacct_records.h"
#include "sacct/sacct_running.h"
#include "slurm/client.h"
#include "recorded_slurm.h"
#include "text_file.h"

namespace gcm::slurm {
namespace {

using gcm::testing::read_file;
using nlohmann::json;

using gcm::testing::recorded_apis;
using gcm::testing::RecordedApi;
using gcm::testing::RecordedApiName;

// Slurm 22.05's recording (API v0.0.38), for the tests of particular values.
const std::string kDir = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurmrestd-22.05/";
const std::string kApiDir = kDir + "v0.0.38/";

// The columns of `sacct -o all` that API v0.0.38 has no key for (rest_render_sacct.h): null in REST's records.
const std::set<std::string> kNotInV0038 = {
    "AssocID",
    "DBIndex",
    "GID",
    "UID",
    "QOSRAW",
    "WCKeyID",
    "SubmitLine",
    "MaxDiskReadNode",
    "MaxDiskReadTask",
    "MaxDiskWriteNode",
    "MaxDiskWriteTask",
    "MaxPagesNode",
    "MaxPagesTask",
    "MaxRSSNode",
    "MaxRSSTask",
    "MaxVMSizeNode",
    "MaxVMSizeTask",
    "MinCPUNode",
    "MinCPUTask",
    "TRESUsageInMaxNode",
    "TRESUsageInMaxTask",
    "TRESUsageInMinNode",
    "TRESUsageInMinTask",
    "TRESUsageOutMaxNode",
    "TRESUsageOutMaxTask",
    "TRESUsageOutMinNode",
    "TRESUsageOutMinTask",
};

struct Captured : RecordOut {
  std::vector<json> records;
  void emit(const Record& r) override { records.push_back(json::parse(to_json(r))); }
};

// sacct_running's records from a sacct text, keyed by JobID.
std::map<std::string, json> records_of(const std::string& sacct_text) {
  CannedSlurmClient client;
  client.set_output("sacct_running", sacct_text);
  CollectorContext ctx;
  ctx.cluster = "testbed";
  sacct::SacctRunningOptions o;  // the zone is UTC, as on the testbed when the fixtures were recorded
  Captured out;
  sacct::SacctRunningStats stats = sacct::collect_sacct_running(client, ctx, o, out);
  EXPECT_EQ(stats.skipped_rows + stats.not_sacct_rows + stats.bad_values, 0u);
  EXPECT_FALSE(stats.unterminated);
  std::map<std::string, json> by_id;
  for (const json& r : out.records) by_id[r["JobID"].get<std::string>()] = r;
  EXPECT_EQ(by_id.size(), out.records.size()) << "a JobID twice";
  return by_id;
}

std::string rendered_fixture(std::string_view delimiter = "|#") {
  return render_sacct_running(read_file(kApiDir + "slurmdb-jobs-running.json"), delimiter, TimeZone());
}

std::vector<std::string> split(const std::string& line, const std::string& delimiter) {
  std::vector<std::string> out;
  for (size_t at = 0;;) {
    size_t end = line.find(delimiter, at);
    out.push_back(line.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) return out;
    at = end + delimiter.size();
  }
}

// The columns of `sacct -o all` that the renderer does not write for an API version: null in REST's records. From
// v0.0.40 (the oldest newer API recorded) AssocID and SubmitLine are written from association.id and submit_line,
// and must agree with sacct's; the columns the sacct of Slurm 24.11 and 25.11 added that the Sacct record does not
// have (gcm-reference.md §1.13 lists 22.05's columns) are left out: the collector drops them either way.
std::set<std::string> sacct_columns_without_key(const RecordedApi& p) {
  std::set<std::string> out = kNotInV0038;
  if (p.minor() >= 40) {
    out.erase("AssocID");
    out.erase("SubmitLine");
    for (const char* c : {"Extra", "FailedNode", "Licenses", "QOSREQ", "Restarts", "SLUID", "StdErr", "StdIn", "StdOut",
                          "ReqReservation", "SegmentSize"})
      out.insert(c);
  }
  return out;
}

class RestRenderSacctRecorded : public ::testing::TestWithParam<RecordedApi> {};

TEST_P(RestRenderSacctRecorded, TheHeaderIsSacctsLessTheColumnsTheApiHasNoKeyFor) {
  const RecordedApi& p = GetParam();
  std::string cli = read_file(p.cli("sacct-running.txt"));
  std::vector<std::string> cli_header = split(cli.substr(0, cli.find('\n')), "|#");
  std::string rest = render_sacct_running(read_file(p.rest("slurmdb-jobs-running.json")), "|#", TimeZone());
  std::vector<std::string> rest_header = split(rest.substr(0, rest.find('\n')), "|#");
  const std::set<std::string> absent = sacct_columns_without_key(p);
  std::vector<std::string> expected;
  for (const auto& c : cli_header)
    if (!absent.count(c)) expected.push_back(c);
  EXPECT_EQ(rest_header, expected) << "sacct's order and names";
  size_t absent_in_cli = 0;
  for (const auto& c : absent) absent_in_cli += std::count(cli_header.begin(), cli_header.end(), c);
  EXPECT_EQ(absent_in_cli, absent.size() - (p.slurm.version == "24.11" ? 2 : 0))
      << "every left-out column is one of sacct's (24.11's has no ReqReservation and SegmentSize)";
}

// Every job and step sacct lists, with every value the collector records equal, apart from Flags (below) and the
// columns REST leaves out. Recorded in one second, so even Elapsed and CPUTime agree.
TEST_P(RestRenderSacctRecorded, TheRecordsAreSacctsFieldByField) {
  const RecordedApi& p = GetParam();
  auto cli = records_of(read_file(p.cli("sacct-running.txt")));
  auto rest = records_of(render_sacct_running(read_file(p.rest("slurmdb-jobs-running.json")), "|#", TimeZone()));
  ASSERT_GE(cli.size(), 20u) << "the workload's running jobs and their steps";
  std::set<std::string> cli_ids, rest_ids;
  for (const auto& [id, r] : cli) cli_ids.insert(id);
  for (const auto& [id, r] : rest) rest_ids.insert(id);
  ASSERT_EQ(rest_ids, cli_ids);
  const std::set<std::string> absent = sacct_columns_without_key(p);
  size_t compared = 0;
  for (const auto& [id, c] : cli) {
    const json& r = rest.at(id);
    for (const auto& [field, value] : c.items()) {
      if (absent.count(field)) {
        EXPECT_TRUE(r[field].is_null()) << id << "." << field;
        continue;
      }
      if (field == "SubmitLine" && id.find('.') != std::string::npos) {
        // A step's own command line (srun's): slurmdbd stores it, but no API version's step record carries it.
        EXPECT_TRUE(r[field].is_null() || r[field] == "") << id;
        continue;
      }
      if (field == "Flags" && p.minor() < 40) {
        // v0.0.38 has no name for SLURMDB_JOB_FLAG_START_R: sacct's "SchedMain,StartRecieved" is "SchedMain".
        std::string cli_flags = value.get<std::string>(), rest_flags = r[field].get<std::string>();
        EXPECT_EQ(cli_flags.substr(0, cli_flags.find(",StartRecieved")), rest_flags) << id;
        continue;
      }
      EXPECT_EQ(r[field], value) << id << "." << field;
      ++compared;
    }
  }
  EXPECT_GT(compared, cli.size() * 70);
  if (p.minor() >= 40) {
    for (const auto& [id, r] : rest) {
      EXPECT_FALSE(r["AssocID"].is_null()) << id;
      if (id.find('.') == std::string::npos) {
        EXPECT_NE(r["SubmitLine"], "") << id;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Recorded, RestRenderSacctRecorded, ::testing::ValuesIn(recorded_apis()), RecordedApiName());

// In the 22.05 recording: the multi-node job, a numbered step, an array task and the two-line job.
TEST(RestRenderSacct, The2205RecordingHasTheWorkloadsKindsOfJob) {
  auto cli = records_of(read_file(kDir + "sacct-running.txt"));
  for (const char* id : {"5", "5.batch", "8.0", "6_0", "6_0.batch", "9"}) EXPECT_TRUE(cli.count(id)) << id;
  ASSERT_EQ(rest_sacct_columns().size(),
            split(rendered_fixture().substr(0, rendered_fixture().find('\n')), "|#").size());
}

TEST(RestRenderSacct, ValuesAsSacctNoconvertPrintsThem) {
  std::string text = rendered_fixture();
  auto rest = records_of(text);
  const json& train = rest.at("5");
  EXPECT_EQ(train["AllocTRES"], "billing=18,cpu=2,gres/gpu=4,mem=1000M,node=2");
  EXPECT_EQ(train["ReqMem"], "1000M");
  EXPECT_EQ(train["NodeList"], (json{"node5", "node6"}));
  EXPECT_EQ(train["Timelimit"], "02:00:00");
  EXPECT_EQ(train["ExitCode"], "0:0");
  EXPECT_EQ(train["End"], "Unknown");
  EXPECT_EQ(train["State"], "RUNNING");
  const json& step = rest.at("8.0");
  EXPECT_EQ(step["Layout"], "Block");
  EXPECT_EQ(step["NTasks"], 2);
  EXPECT_EQ(step["ReqCPUFreqGov"], "Unknown") << "slurmrestd's every-governor list is NO_VAL";
  EXPECT_EQ(step["Partition"], "");
  EXPECT_EQ(rest.at("6_0")["JobIDRaw"].get<std::string>().find('_'), std::string::npos);
  // Another delimiter is used throughout.
  std::string tilde = rendered_fixture("~");
  EXPECT_EQ(tilde.find("|#"), std::string::npos);
  EXPECT_EQ(std::count(tilde.begin(), tilde.end(), '\n'), std::count(text.begin(), text.end(), '\n'));
}

// A minimal v0.0.38 job with the keys the renderer requires.
json job(int id) {
  json tres = json::array({{{"type", "cpu"}, {"name", nullptr}, {"id", 1}, {"count", 1}}});
  json cpu = {{"seconds", 5}, {"microseconds", 500000}};
  return {{"job_id", id},
          {"account", "ml"},
          {"cluster", "c"},
          {"allocation_nodes", 1},
          {"derived_exit_code", {{"status", "SUCCESS"}, {"return_code", 0}}},
          {"exit_code", {{"status", "SIGNALED"}, {"return_code", 0}, {"signal", {{"signal_id", 9}}}}},
          {"group", "g"},
          {"name", "n"},
          {"nodes", "node1"},
          {"partition", "p"},
          {"priority", 1},
          {"qos", "normal"},
          {"required", {{"CPUs", 1}, {"memory", 100}}},
          {"state", {{"current", "RUNNING"}, {"reason", "None"}}},
          {"time",
           {{"elapsed", 90061},
            {"eligible", 100},
            {"end", 0},
            {"start", 160},
            {"submission", 90},
            {"suspended", 0},
            {"limit", 4294967295},
            {"system", cpu},
            {"total", cpu},
            {"user", {{"seconds", 3700}, {"microseconds", 0}}}}},
          {"tres", {{"allocated", tres}, {"requested", tres}}},
          {"user", "u"},
          {"working_directory", "/w"},
          {"steps", json::array()}};
}

std::string render(const json& jobs) { return render_sacct_running(json{{"jobs", jobs}}.dump(), "|#", TimeZone()); }

TEST(RestRenderSacct, TimesDurationsAndAValueThatWouldBreakItsRow) {
  json j = job(7);
  j["name"] = "two\nlines|#and a delimiter";
  std::string text = render(json::array({j}));
  std::vector<std::string> lines = split(text, "\n");
  ASSERT_EQ(lines.size(), 3u) << "the header, one row and the end";
  std::vector<std::string> header = split(lines[0], "|#"), row = split(lines[1], "|#");
  ASSERT_EQ(row.size(), header.size());
  std::map<std::string, std::string> v;
  for (size_t i = 0; i < header.size(); ++i) v[header[i]] = row[i];
  EXPECT_EQ(v["JobName"], "two lines and a delimiter");
  EXPECT_EQ(v["Elapsed"], "1-01:01:01");
  EXPECT_EQ(v["CPUTime"], "1-01:01:01");
  EXPECT_EQ(v["Start"], "1970-01-01T00:02:40");
  EXPECT_EQ(v["End"], "Unknown");
  EXPECT_EQ(v["Reserved"], "00:01:00");
  EXPECT_EQ(v["Timelimit"], "UNLIMITED");
  EXPECT_EQ(v["TotalCPU"], "00:05.500") << "sacct's milliseconds below an hour";
  EXPECT_EQ(v["UserCPU"], "01:01:40");
  EXPECT_EQ(v["ExitCode"], "0:9");
}

// A v0.0.38 step with the keys the renderer requires, its CPU time in microseconds.
json step(json id, int64_t total_us) {
  json cpu = {{"seconds", total_us / 1000000}, {"microseconds", total_us % 1000000}};
  json zero = {{"seconds", 0}, {"microseconds", 0}};
  return {
      {"step", {{"id", id}, {"name", "s"}}},
      {"nodes", {{"count", 1}, {"range", "node1"}}},
      {"tres", {{"allocated", json::array()}}},
      {"time",
       {{"elapsed", 1}, {"start", 160}, {"end", 0}, {"suspended", 0}, {"system", zero}, {"total", cpu}, {"user", cpu}}},
      {"exit_code", {{"status", "SUCCESS"}, {"return_code", 0}}},
      {"tasks", {{"count", 1}}},
      {"state", "RUNNING"},
      {"task", {{"distribution", "Block"}}},
      {"statistics", {{"CPU", {{"actual_frequency", 0}}}, {"energy", {{"consumed", 0}}}}}};
}

// sacct adds up the CPU times of the steps it lists for the job's row (slurmdbd's running job has none of its own).
TEST(RestRenderSacct, TheJobsCpuTimesAreThoseOfItsSteps) {
  json j = job(7);
  j["steps"] = json::array({step("batch", 1000), step(0, 1571)});
  std::vector<std::string> lines = split(render(json::array({j})), "\n");
  ASSERT_EQ(lines.size(), 5u);
  std::vector<std::string> header = split(lines[0], "|#");
  auto column = [&](const char* name) { return std::find(header.begin(), header.end(), name) - header.begin(); };
  ASSERT_LT(column("TotalCPU"), static_cast<std::ptrdiff_t>(header.size()));
  EXPECT_EQ(split(lines[1], "|#")[column("TotalCPU")], "00:00.002") << "7: 2571 us, whatever the job's own 5.5 s";
  EXPECT_EQ(split(lines[2], "|#")[column("TotalCPU")], "00:00.001") << "7.batch";
  EXPECT_EQ(split(lines[3], "|#")[column("TotalCPU")], "00:00.001") << "7.0: 1571 us";
  EXPECT_EQ(split(lines[3], "|#")[column("JobID")], "7.0");
  EXPECT_EQ(split(lines[3], "|#")[column("Layout")], "Block");
}

TEST(RestRenderSacct, ErrorsNameTheJobAndTheKeyOrTheInput) {
  json j = job(42);
  j["time"].erase("start");
  try {
    render(json::array({job(41), j}));
    FAIL() << "no error";
  } catch (const ParseError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("jobs[1] (job 42)"), std::string::npos) << what;
    EXPECT_NE(what.find("time.start"), std::string::npos) << what;
  }
  json s = job(43);
  s["steps"] = json::array({json{{"step", {{"id", "batch"}}}}});
  try {
    render(json::array({s}));
    FAIL() << "no error";
  } catch (const ParseError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("(job 43): steps[0]"), std::string::npos) << what;
  }
  try {
    render_sacct_running("{\"jobs\": [", "|#", TimeZone());
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("slurmrestd jobs (slurmdb)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(render_sacct_running(R"({"errors": []})", "|#", TimeZone()), ParseError) << "no jobs list";
}

}  // namespace
}  // namespace gcm::slurm

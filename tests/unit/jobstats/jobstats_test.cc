// gcm jobstats and gcm usage: the Prometheus answers, sacct's rows, the report built from hand-made series (notes,
// totals, slow and idle GPUs), its three renderings, the usage join, and the whole command against a stand-in
// sacct and a scripted Prometheus (cpp-httplib).
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "core/subprocess.h"
#include "jobstats/job_report.h"
#include "jobstats/job_series.h"
#include "jobstats/prometheus_api.h"
#include "jobstats/report_render.h"
#include "jobstats/sacct_jobs.h"
#include "jobstats/usage.h"
#include "refused_port.h"
#include "temp_dir.h"

namespace gcm::jobstats {
namespace {

using gcm::testing::TempDir;
using nlohmann::json;

// --- Prometheus API ---

TEST(JobstatsPrometheus, ParsesMatrixAndVectorAnswers) {
  auto m = parse_query_answer(
      R"({"status":"success","data":{"resultType":"matrix","result":[
          {"metric":{"node":"node1","gpu":"0"},"values":[[1700000000,"12.5"],[1700000060,"NaN"]]}]}})",
      "q");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].label("node"), "node1");
  ASSERT_EQ(m[0].points.size(), 2u);
  EXPECT_EQ(m[0].points[1].t, 1700000060);
  EXPECT_DOUBLE_EQ(m[0].points[0].v, 12.5);
  EXPECT_TRUE(std::isnan(m[0].points[1].v));
  auto v = parse_query_answer(
      R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1.5,"3"]}]}})", "q");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_DOUBLE_EQ(v[0].points[0].v, 3);
}

TEST(JobstatsPrometheus, ErrorAnswersNameTheQueryAndTheError) {
  try {
    parse_query_answer(R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})", "Q1");
    FAIL();
  } catch (const PrometheusError& e) {
    EXPECT_NE(std::string(e.what()).find("Q1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad_data: parse error at char 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_query_answer("<html>proxy error</html>", "q"), PrometheusError);
  EXPECT_THROW(parse_query_answer(R"({"status":"success","data":{"resultType":"scalar","result":[1,"2"]}})", "q"),
               PrometheusError);
  EXPECT_THROW(parse_query_answer(R"({"status":"success","data":{"resultType":"vector","result":[
                   {"metric":{},"value":[1,"x2"]}]}})",
                                  "q"),
               PrometheusError);
}

TEST(JobstatsPrometheus, EncodesFormsAndPromqlStrings) {
  EXPECT_EQ(form_encode({{"query", "a{b=\"1\"} + 2"}, {"step", "60"}}), "query=a%7Bb%3D%221%22%7D%20%2B%202&step=60");
  EXPECT_EQ(promql_string("12"), "\"12\"");
  EXPECT_EQ(promql_string("a\"}or vector(1)#\\"), "\"a\\\"}or vector(1)#\\\\\"");
  EXPECT_THROW(PrometheusApi("file:///etc/passwd", std::chrono::seconds(1)), std::invalid_argument);
}

TEST(JobstatsPrometheus, JobQueriesJoinThroughJobInfo) {
  std::string info = job_info_selector("42", "");
  EXPECT_EQ(info, "gcm_gpu_job_info{job_id=\"42\"}");
  EXPECT_EQ(job_info_selector("42", "c1"), "gcm_gpu_job_info{job_id=\"42\",cluster=\"c1\"}");
  EXPECT_EQ(job_metric_expr(info, "gcm_gpu_power_watts"),
            "max by (cluster, node, gpu) (gcm_gpu_job_info{job_id=\"42\"}) * on(cluster, node, gpu) "
            "group_left(uuid) max by (cluster, node, gpu, uuid) (gcm_gpu_power_watts)");
  EXPECT_EQ(choose_step(0, 3600, 15), 15);        // an hour: the scrape interval
  EXPECT_EQ(choose_step(0, 86400 * 7, 15), 605);  // a week: about 1000 points
}

// --- sacct ---

constexpr const char* kSacctHeader =
    "JobIDRaw|#JobID|#JobName|#User|#Account|#Partition|#Cluster|#State|#Start|#End|#NodeList|#AllocTRES\n";

TEST(JobstatsSacct, ParsesRunningFinishedAndPendingRows) {
  std::string out = std::string(kSacctHeader) +
                    "7|#7|#train|a|#alice|#ml|#gpu|#tb|#RUNNING|#2025-12-01T10:00:00|#Unknown|#node[1-2]|#"
                    "billing=18,cpu=2,gres/gpu=4,mem=1000M,node=2\n"
                    "8|#8|#eval|#bob|#research|#gpu|#tb|#COMPLETED|#2025-12-01T09:00:00|#2025-12-01T09:30:00|#"
                    "node3|#cpu=1,gres/gpu=1,node=1\n"
                    "9|#9|#wait|#bob|#research|#gpu|#tb|#PENDING|#Unknown|#Unknown|#None assigned|#\n";
  // The job name "train|a" holds a '|': the |# delimiter keeps it whole.
  auto jobs = parse_sacct_allocations(out, TimeZone(), "sacct");
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].job_name, "train|a");
  EXPECT_EQ(jobs[0].gpus, 4);
  EXPECT_EQ(jobs[0].nodes, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_TRUE(jobs[0].running());
  EXPECT_EQ(*jobs[0].start, 1764583200);
  EXPECT_EQ(*jobs[1].end - *jobs[1].start, 1800);
  EXPECT_FALSE(jobs[2].start);
  EXPECT_TRUE(jobs[2].nodes.empty());
  EXPECT_EQ(jobs[2].gpus, 0);
}

TEST(JobstatsSacct, BadOutputNamesTheCommandAndLine) {
  try {
    parse_sacct_allocations("JobID|#User\n1|#a\n", TimeZone(), "sacct -j 1");
    FAIL();
  } catch (const SacctError& e) {
    EXPECT_NE(std::string(e.what()).find("sacct -j 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("JobIDRaw"), std::string::npos) << e.what();
  }
  std::string bad_time =
      std::string(kSacctHeader) + "7|#7|#x|#a|#b|#gpu|#tb|#RUNNING|#yesterday|#Unknown|#node1|#gres/gpu=1\n";
  try {
    parse_sacct_allocations(bad_time, TimeZone(), "sacct");
    FAIL();
  } catch (const SacctError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2 (job 7)"), std::string::npos) << e.what();
  }
}

TEST(JobstatsSacct, JobIdsAreCheckedBeforeAnythingRuns) {
  EXPECT_FALSE(job_id_problem("123"));
  EXPECT_FALSE(job_id_problem("5_1"));
  EXPECT_FALSE(job_id_problem("5+1"));
  for (const char* bad : {"", "abc", "1,2", "1 2", "-1", "5_", "5_1_2", "1;rm"}) {
    auto p = job_id_problem(bad);
    ASSERT_TRUE(p) << bad;
    EXPECT_NE(p->find(std::string("'") + bad + "'"), std::string::npos) << *p;
  }
}

std::string write_script(const std::string& dir, const std::string& name, const std::string& body) {
  std::string path = dir + "/" + name;
  std::ofstream(path) << "#!/bin/sh\n" << body;
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(JobstatsSacct, RunsSacctAndReportsAJobItDoesNotKnow) {
  TempDir dir;
  // The stand-in logs its argv and answers job 7 only, as sacct does: a header and no row for other ids.
  std::string sacct = write_script(dir.path(), "sacct",
                                   "echo \"$@\" >> " + dir.file("argv") +
                                       "\n"
                                       "printf '%s' '" +
                                       std::string(kSacctHeader) +
                                       "'\n"
                                       "case \"$*\" in *'-j 7 '*) echo "
                                       "'7|#7|#t|#u|#a|#gpu|#tb|#COMPLETED|#2026-12-01T10:00:00|#2026-12-01T11:00:00|#"
                                       "node1|#gres/gpu=2' ;; esac\n");
  SacctOptions o;
  o.sacct = sacct;
  o.zone = TimeZone();
  auto j = sacct_job(o, "7");
  EXPECT_EQ(j.gpus, 2);
  std::string argv;
  std::getline(std::ifstream(dir.file("argv")), argv);
  EXPECT_EQ(argv,
            "-j 7 -X -P --delimiter=|# --format=JobIDRaw,JobID,JobName,User,Account,Partition,Cluster,State,"
            "Start,End,NodeList,AllocTRES");
  try {
    sacct_job(o, "8");
    FAIL();
  } catch (const SacctError& e) {
    EXPECT_NE(std::string(e.what()).find("job 8 does not exist"), std::string::npos) << e.what();
  }
  o.sacct = write_script(dir.path(), "failing", "echo 'sacct: error: Problem talking to the database' >&2; exit 1\n");
  try {
    sacct_job(o, "7");
    FAIL();
  } catch (const SacctError& e) {
    EXPECT_NE(std::string(e.what()).find("Problem talking to the database"), std::string::npos) << e.what();
  }
}

// --- the report ---

constexpr int64_t kT0 = 1764583200, kStep = 60, kSamples = 60;  // one hour at 1 min

Series series(const std::string& node, const std::string& gpu, const std::function<double(int)>& value,
              Labels extra = {}) {
  Series s;
  s.labels = {{"cluster", "tb"}, {"node", node}, {"gpu", gpu}, {"uuid", "GPU-" + node + "-" + gpu}};
  for (auto& [k, v] : extra) s.labels[k] = v;
  for (int i = 0; i < kSamples; ++i) s.points.push_back({kT0 + i * kStep, value(i)});
  return s;
}

// 4 GPUs: node1 GPU 0 busy at 1980 MHz; node1 GPU 1 busy, at 1620 MHz (18 % slower) with HW slowdown from minute
// 20 on; node2 GPUs 0 and 1 idle. Power 300 W busy, 60 W idle; an XID 79 on node1 GPU 1 at minute 30.
JobSeries four_gpu_job() {
  JobSeries js;
  const std::vector<std::pair<std::string, std::string>> gpus = {
      {"node1", "0"}, {"node1", "1"}, {"node2", "0"}, {"node2", "1"}};
  for (const auto& [n, g] : gpus) {
    bool busy = n == "node1";
    bool slow = n == "node1" && g == "1";
    js.job_info.push_back(series(n, g, [](int) { return 1; }));
    js.utilization.push_back(series(n, g, [busy](int) { return busy ? 100 : 0; }));
    js.memory_used.push_back(series(n, g, [busy](int) { return busy ? 60e9 : 1e8; }));
    js.memory_total.push_back(series(n, g, [](int) { return 80.0 * (1ull << 30); }));
    js.sm_clock.push_back(series(n, g, [busy, slow](int i) {
      return !busy ? 210e6 : slow && i >= 20 ? 1620e6 : 1980e6;
    }));
    js.power.push_back(series(n, g, [busy](int) { return busy ? 300 : 60; }));
    js.energy.push_back(series(n, g, [busy](int i) { return 5e6 + i * (busy ? 300 : 60) * kStep; }));
    js.clock_events.push_back(series(n, g, [busy, slow](int i) { return !busy ? 0x1 : slow && i >= 20 ? 0x8 : 0; }));
    js.health_state.push_back(series(n, g, [slow](int i) { return slow && i >= 25 ? 2 : 0; }));
    if (slow) {
      js.health_reason.push_back(series(n, g, [](int i) { return i >= 25 ? 1 : 0; }, {{"reason", "hw_slowdown"}}));
      Series x = series(n, g, [](int) { return 1; }, {{"xid", "79"}});
      x.points.erase(x.points.begin(), x.points.begin() + 30);  // the counter appears with the XID
      js.xid_errors.push_back(x);
    }
  }
  return js;
}

JobAllocation four_gpu_allocation() {
  JobAllocation j;
  j.job_id = j.job_id_display = "42";
  j.job_name = "train <big>";
  j.user = "alice";
  j.account = "ml";
  j.partition = "gpu";
  j.cluster = "tb";
  j.state = "COMPLETED";
  j.node_list = "node[1-2]";
  j.nodes = {"node1", "node2"};
  j.gpus = 4;
  j.start = kT0;
  j.end = kT0 + kSamples * kStep;
  return j;
}

JobReport four_gpu_report() {
  return build_job_report(four_gpu_allocation(), kT0, kT0 + kSamples * kStep, kStep, four_gpu_job());
}

bool has_note(const JobReport& r, const std::string& text) {
  for (const auto& n : r.notes)
    if (n == text) return true;
  return false;
}

std::string all_notes(const JobReport& r) {
  std::string s;
  for (const auto& n : r.notes) s += n + "\n";
  return s;
}

TEST(JobstatsReport, PerGpuFiguresAndJobTotals) {
  auto r = four_gpu_report();
  ASSERT_EQ(r.gpus.size(), 4u);
  const auto& g0 = r.gpus[0];
  const auto& g1 = r.gpus[1];
  EXPECT_EQ(g0.name(), "GPU 0 on node1");
  EXPECT_DOUBLE_EQ(g0.utilization_percent.mean, 100);
  EXPECT_DOUBLE_EQ(g0.sm_clock_hertz.max, 1980e6);
  EXPECT_NEAR(g1.sm_clock_hertz.mean, (20 * 1980e6 + 40 * 1620e6) / 60, 1);
  EXPECT_DOUBLE_EQ(g0.memory_used_bytes.max, 60e9);
  // Energy from the counter: 59 intervals of 300 W x 60 s.
  EXPECT_TRUE(g0.energy_from_counter);
  EXPECT_NEAR(g0.energy_kwh, 59 * 300.0 * 60 / 3.6e6, 1e-9);
  EXPECT_EQ(g1.throttled_seconds, 40 * 60);
  EXPECT_EQ(g1.throttle_seconds.at("hw_slowdown"), 40 * 60);
  EXPECT_EQ(g0.throttled_seconds, 0);  // gpu_idle is no throttling, and g0 was never slowed
  EXPECT_EQ(r.gpus[2].throttled_seconds, 0);
  EXPECT_EQ(g1.xids.at("79"), 1);
  EXPECT_EQ(g1.worst_health_state, 2);
  EXPECT_EQ(g1.health_reason_seconds.at("hw_slowdown"), 35 * 60);
  ASSERT_TRUE(g1.slow);
  EXPECT_EQ(g1.slow->seconds, 40 * 60);
  EXPECT_NEAR(g1.slow->mean_deviation, 1620.0 / 1980 - 1, 1e-9);
  EXPECT_EQ(g1.slow->cause, "hw_slowdown");
  EXPECT_FALSE(g0.slow);  // faster than its peer: not slow
  EXPECT_TRUE(r.gpus[3].idle_whole_job());
  EXPECT_DOUBLE_EQ(r.gpu_hours_allocated, 4);
  EXPECT_DOUBLE_EQ(r.gpu_hours_seen, 4);
  EXPECT_NEAR(r.gpu_hours_used, 2, 1e-9);  // 2 busy GPUs x 60 samples of a minute
  EXPECT_NEAR(r.energy_kwh, 59 * 60.0 * (300 + 300 + 60 + 60) / 3.6e6, 1e-9);
}

TEST(JobstatsReport, PlainLanguageNotes) {
  auto r = four_gpu_report();
  EXPECT_TRUE(has_note(r, "GPU 1 on node1 ran 18 % slower than the job's other GPUs for 40 min: HW slowdown."))
      << all_notes(r);
  EXPECT_TRUE(has_note(r, "2 of 4 GPUs were idle for the whole job (GPU 0 on node2 and GPU 1 on node2)."))
      << all_notes(r);
  EXPECT_TRUE(has_note(r, "XID 79 on GPU 1 on node1 (1 time).")) << all_notes(r);
  EXPECT_TRUE(has_note(r, "The node agent judged GPU 1 on node1 degraded during the job (HW slowdown 35 min)."))
      << all_notes(r);
  // The slowdown explains the slow spell: no second note about the same throttling.
  for (const auto& n : r.notes) EXPECT_EQ(n.find("was throttled"), std::string::npos) << n;
}

TEST(JobstatsReport, NoSeriesAndMissingGpusAreSaid) {
  auto job = four_gpu_allocation();
  auto empty = build_job_report(job, kT0, kT0 + 3600, kStep, JobSeries{});
  ASSERT_EQ(empty.notes.size(), 1u);
  EXPECT_NE(empty.notes[0].find("Prometheus has no GPU series for job 42"), std::string::npos) << empty.notes[0];
  EXPECT_DOUBLE_EQ(empty.gpu_hours_allocated, 4);
  auto js = four_gpu_job();
  // node2 GPU 1 has no series at all (its agent was not scraped): every query joined through job_info misses it.
  for (auto* v : {&js.job_info, &js.utilization, &js.memory_used, &js.memory_total, &js.sm_clock, &js.power, &js.energy,
                  &js.clock_events, &js.health_state})
    v->resize(3);
  auto partial = build_job_report(job, kT0, kT0 + 3600, kStep, js);
  EXPECT_EQ(partial.gpus.size(), 3u);
  EXPECT_TRUE(has_note(partial, "sacct allocated 4 GPUs; Prometheus has series for 3 of them.")) << all_notes(partial);
  EXPECT_DOUBLE_EQ(partial.gpu_hours_seen, 3);
}

TEST(JobstatsReport, EqualGpusGiveNoSlowOrIdleNotes) {
  auto js = four_gpu_job();
  for (auto& s : js.utilization)
    for (auto& p : s.points) p.v = 97;
  for (auto& s : js.sm_clock)
    for (auto& p : s.points) p.v = 1980e6;
  for (auto& s : js.clock_events)
    for (auto& p : s.points) p.v = 0;
  js.health_reason.clear();
  js.health_state.clear();
  js.xid_errors.clear();
  auto r = build_job_report(four_gpu_allocation(), kT0, kT0 + kSamples * kStep, kStep, js);
  EXPECT_TRUE(r.notes.empty()) << all_notes(r);
  for (const auto& g : r.gpus) EXPECT_FALSE(g.slow);
}

TEST(JobstatsReport, ShortSlowStretchesAreNoise) {
  auto js = four_gpu_job();
  // node1 GPU 1 slow at two instants (minutes 10 and 11) only; no throttling.
  for (auto& s : js.sm_clock)
    for (auto& p : s.points)
      if (s.label("node") == "node1" && s.label("gpu") == "1")
        p.v = p.t == kT0 + 10 * kStep || p.t == kT0 + 11 * kStep ? 1500e6 : 1980e6;
  NoteThresholds th;
  th.min_slow_seconds = 3 * kStep;
  auto r = build_job_report(four_gpu_allocation(), kT0, kT0 + kSamples * kStep, kStep, js, th);
  EXPECT_FALSE(r.gpus[1].slow);
  th.min_slow_seconds = 2 * kStep;
  r = build_job_report(four_gpu_allocation(), kT0, kT0 + kSamples * kStep, kStep, js, th);
  ASSERT_TRUE(r.gpus[1].slow);
  EXPECT_EQ(r.gpus[1].slow->seconds, 2 * kStep);
  EXPECT_NEAR(r.gpus[1].slow->mean_deviation, 1500.0 / 1980 - 1, 1e-9);
  EXPECT_EQ(r.gpus[1].marked.size(), 40u + 2u);  // 40 throttled instants (from minute 20), 2 slow ones
}

// --- the step-time lane ---

// The series of one node of the job's own signal (no gpu label).
Series node_series(const std::string& node, const std::function<double(int)>& value, Labels extra = {}) {
  Series s;
  s.labels = {{"cluster", "tb"}, {"node", node}};
  for (auto& [k, v] : extra) s.labels[k] = v;
  for (int i = 0; i < kSamples; ++i) s.points.push_back({kT0 + i * kStep, value(i)});
  return s;
}

// four_gpu_job() whose ranks report their steps: 0.5 s a step, 10 % slower from minute 20 on both nodes (a
// synchronous job), confirmed at minute 23. node1's agent found HW slowdown on GPU 1 (its rank 1); node2's found
// nothing on its GPUs. Back to its pace at minute 50.
JobSeries stepping_job() {
  JobSeries js = four_gpu_job();
  auto slowed = [](int i) { return i >= 23 && i < 50; };
  for (const std::string node : {"node1", "node2"}) {
    bool cause = node == "node1";
    js.steps.step_duration.push_back(node_series(node, [](int i) { return i >= 20 && i < 50 ? 0.55 : 0.5; }));
    js.steps.step_ratio.push_back(node_series(node, [](int i) { return i >= 20 && i < 50 ? 1.1 : 1.0; }));
    js.steps.slowed.push_back(node_series(node, [&](int i) { return slowed(i) ? 1 : 0; }));
    auto from_23 = [](Series s) {
      s.points.erase(s.points.begin(), s.points.begin() + 23);  // the series exist from the first slowdown on
      return s;
    };
    js.steps.change_time.push_back(from_23(node_series(node, [](int) { return kT0 + 20 * kStep; })));
    js.steps.rise.push_back(from_23(node_series(node, [](int) { return 0.1; })));
    js.steps.rank.push_back(from_23(node_series(node, [cause](int) { return cause ? 1 : 2; })));
    js.steps.gpu.push_back(from_23(node_series(node, [cause](int) { return cause ? 1 : 0; })));
    js.steps.cause_gpu.push_back(from_23(node_series(node, [cause](int) { return cause ? 1 : -1; })));
    js.steps.info.push_back(
        from_23(node_series(node, [](int) { return 1; }, {{"hardware_cause", cause ? "hw_slowdown" : "none"}})));
  }
  return js;
}

JobReport stepping_report() {
  return build_job_report(four_gpu_allocation(), kT0, kT0 + kSamples * kStep, kStep, stepping_job());
}

TEST(JobstatsSteps, TheNodesReportsOfOneSlowdownAreOneToldByTheNodeThatFoundTheCause) {
  JobReport r = stepping_report();
  ASSERT_EQ(r.steps.nodes.size(), 2u);
  EXPECT_NEAR(r.steps.nodes[0].mean_step_seconds, (30 * 0.5 + 30 * 0.55) / 60, 1e-9);
  ASSERT_EQ(r.steps.slowdowns.size(), 1u);
  const JobSlowdown& d = r.steps.slowdowns[0];
  EXPECT_EQ(d.node, "node1");
  EXPECT_EQ(d.nodes, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(d.change_time, kT0 + 20 * kStep);
  EXPECT_EQ(d.recovered_time, kT0 + 50 * kStep);
  EXPECT_EQ(d.cause, "hw_slowdown");
  EXPECT_TRUE(has_note(r, "Step time of job 42 rose 10 % at 10:20 UTC (seen on node1 and node2): rank 1 (GPU 1 on "
                          "node1) was its node's slowest; the node agent found on GPU 1 of node1: HW slowdown; back "
                          "to its old pace at 10:50 UTC."))
      << all_notes(r);
}

TEST(JobstatsSteps, ASlowdownWithNoCauseOnAnyNodeSaysSo) {
  JobSeries js = stepping_job();
  for (auto& s : js.steps.info) s.labels["hardware_cause"] = "none";
  for (auto& s : js.steps.cause_gpu)
    for (auto& p : s.points) p.v = -1;
  JobReport r = build_job_report(four_gpu_allocation(), kT0, kT0 + kSamples * kStep, kStep, js);
  ASSERT_EQ(r.steps.slowdowns.size(), 1u);
  EXPECT_NE(r.steps.slowdowns[0].sentence.find("; no hardware cause found on the job's GPUs (software or data)"),
            std::string::npos)
      << r.steps.slowdowns[0].sentence;
}

// A stalled rank on node2 and no hardware cause anywhere: node1's report comes first, but node2's slowest rank
// computed longest, so node2 tells it and names its rank.
TEST(JobstatsSteps, WithNoCauseTheNodeOfTheSlowestRankTellsTheSlowdown) {
  JobSeries js = stepping_job();
  for (auto& s : js.steps.info) s.labels["hardware_cause"] = "none";
  for (auto& s : js.steps.cause_gpu)
    for (auto& p : s.points) p.v = -1;
  for (const std::string node : {"node1", "node2"})
    js.steps.slowest_compute.push_back(
        node_series(node, [&](int i) { return node == "node2" && i >= 20 && i < 50 ? 0.44 : 0.4; }));
  JobReport r = build_job_report(four_gpu_allocation(), kT0, kT0 + kSamples * kStep, kStep, js);
  ASSERT_EQ(r.steps.slowdowns.size(), 1u);
  const JobSlowdown& d = r.steps.slowdowns[0];
  EXPECT_EQ(d.node, "node2");
  EXPECT_EQ(d.nodes, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(d.rank, 2);
  EXPECT_NE(d.sentence.find("(seen on node1 and node2): rank 2 (GPU 0 on node2) was its node's slowest; no hardware "
                            "cause found"),
            std::string::npos)
      << d.sentence;
  // Without the slowest ranks' series, the first node's report tells it, as before.
  js.steps.slowest_compute.clear();
  r = build_job_report(four_gpu_allocation(), kT0, kT0 + kSamples * kStep, kStep, js);
  ASSERT_EQ(r.steps.slowdowns.size(), 1u);
  EXPECT_EQ(r.steps.slowdowns[0].node, "node1");
}

TEST(JobstatsSteps, AJobThatReportsNoStepsHasNoLane) {
  JobReport r = four_gpu_report();
  EXPECT_TRUE(r.steps.empty());
  EXPECT_EQ(render_text(r).find("Step time"), std::string::npos);
  EXPECT_EQ(render_html(r).find("steptime"), std::string::npos);
  EXPECT_TRUE(render_json(r)["step_time"]["slowdowns"].empty());
}

TEST(JobstatsSteps, TheLaneInTextJsonAndHtml) {
  JobReport r = stepping_report();
  std::string t = render_text(r);
  EXPECT_NE(t.find("Step time (the job's own signal, per node):\n  node1          mean 0.525 s, at most 10 % over its "
                   "usual pace, 1 slowdown\n  node2          mean 0.525 s, at most 10 % over its usual pace, 0 "
                   "slowdowns\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("  * Step time of job 42 rose 10 %"), std::string::npos) << t;
  json j = render_json(r);
  ASSERT_EQ(j["step_time"]["nodes"].size(), 2u);
  EXPECT_EQ(j["step_time"]["nodes"][0]["step_seconds"].size(), static_cast<size_t>(kSamples));
  ASSERT_EQ(j["step_time"]["slowdowns"].size(), 1u);
  EXPECT_EQ(j["step_time"]["slowdowns"][0]["hardware_cause"], "hw_slowdown");
  EXPECT_EQ(j["step_time"]["slowdowns"][0]["cause_gpu"], 1);
  EXPECT_NEAR(j["step_time"]["slowdowns"][0]["rise_ratio"].get<double>(), 0.1, 1e-9);
  std::string h = render_html(r);
  size_t lane = h.find("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"steptime\"");
  ASSERT_NE(lane, std::string::npos);
  std::string svg = h.substr(lane, h.find("</svg>", lane) - lane);
  size_t lines = 0, marks = 0;
  for (size_t p = svg.find("<polyline"); p != std::string::npos; p = svg.find("<polyline", p + 1)) ++lines;
  for (size_t p = svg.find("<title>Step time of job 42"); p != std::string::npos;
       p = svg.find("<title>Step time of job 42", p + 1))
    ++marks;
  EXPECT_EQ(lines, 2u);  // one per node
  EXPECT_EQ(marks, 1u);  // the slowdown, on the node that told it
  EXPECT_EQ(h.find("<script"), std::string::npos);
}

// --- rendering ---

TEST(JobstatsRender, TextHasTheHeaderTableAndNotes) {
  auto t = render_text(four_gpu_report());
  EXPECT_NE(t.find("Job ID: 42"), std::string::npos) << t;
  EXPECT_NE(t.find("User / account: alice / ml"), std::string::npos) << t;
  EXPECT_NE(t.find("GPU-hours: 4.00 allocated, 2.00 used (50 %)"), std::string::npos) << t;
  EXPECT_NE(t.find("node1            1"), std::string::npos) << t;
  EXPECT_NE(t.find("  * GPU 1 on node1 ran 18 % slower"), std::string::npos) << t;
  EXPECT_NE(t.find("throttle hw_slowdown 40 min; XIDs 79 1"), std::string::npos) << t;
}

TEST(JobstatsRender, JsonCarriesEveryFigure) {
  auto j = render_json(four_gpu_report());
  EXPECT_EQ(j["job"]["job_id"], "42");
  EXPECT_EQ(j["job"]["gpus"], 4);
  EXPECT_NEAR(j["totals"]["gpu_hours_used"].get<double>(), 2, 1e-9);
  ASSERT_EQ(j["gpus"].size(), 4u);
  const auto& g1 = j["gpus"][1];
  EXPECT_EQ(g1["node"], "node1");
  EXPECT_EQ(g1["gpu"], "1");
  EXPECT_EQ(g1["slow"]["cause"], "hw_slowdown");
  EXPECT_EQ(g1["xids"]["79"], 1);
  EXPECT_EQ(g1["throttle_seconds"]["hw_slowdown"], 2400);
  EXPECT_EQ(j["gpus"][3]["idle_whole_job"], true);
  EXPECT_TRUE(j["gpus"][0]["slow"].is_null());
  EXPECT_GE(j["notes"].size(), 4u);
}

TEST(JobstatsRender, HtmlIsSelfContainedWithATimeline) {
  auto h = render_html(four_gpu_report());
  EXPECT_EQ(h.find("<script"), std::string::npos);
  EXPECT_EQ(h.find("src="), std::string::npos);   // no image or script from elsewhere
  EXPECT_EQ(h.find("href="), std::string::npos);  // no style sheet from elsewhere
  EXPECT_NE(h.find("<svg"), std::string::npos);
  EXPECT_NE(h.find("train &lt;big&gt;"), std::string::npos);  // the job name is escaped
  EXPECT_EQ(h.find("train <big>"), std::string::npos);
  EXPECT_NE(h.find(std::string("fill=\"") + kColourBusy), std::string::npos);
  EXPECT_NE(h.find(std::string("fill=\"") + kColourIdle), std::string::npos);
  EXPECT_NE(h.find(std::string("fill=\"") + kColourSlow), std::string::npos);
  // Neighbouring samples of one colour are one rectangle: each lane has 1 utilisation rect here.
  size_t rects = 0;
  for (size_t p = h.find("<rect"); p != std::string::npos; p = h.find("<rect", p + 1)) ++rects;
  EXPECT_EQ(rects, 4u /*frames*/ + 4u /*lanes*/ + 1u /*slow bar*/);
}

// --- usage ---

TEST(JobstatsUsage, AllocationsAreClippedToThePeriodAndJoinedWithUse) {
  int64_t since = kT0, until = kT0 + 10 * 3600;
  std::vector<JobAllocation> jobs(4);
  jobs[0].job_id = "1", jobs[0].account = "ml", jobs[0].gpus = 8, jobs[0].start = since - 3600,
  jobs[0].end = since + 3600;                                                                    // 1 h inside: 8 GPU-h
  jobs[1].job_id = "2", jobs[1].account = "ml", jobs[1].gpus = 2, jobs[1].start = since + 3600;  // running: 9 h
  jobs[2].job_id = "3", jobs[2].account = "bio", jobs[2].gpus = 1, jobs[2].start = since,
  jobs[2].end = since + 1800;                                       // 0.5 GPU-h
  jobs[3].job_id = "4", jobs[3].account = "bio", jobs[3].gpus = 4;  // pending: nothing
  std::map<std::string, JobUse> use = {
      {"1", {6, "u", "ml", "gpu"}}, {"2", {9, "u", "ml", "gpu"}}, {"99", {1.5, "x", "other", "gpu"}}};  // not in sacct
  auto u = build_usage(UsageBy::Account, since, until, jobs, use);
  ASSERT_EQ(u.rows.size(), 3u);
  EXPECT_EQ(u.rows[0].group, "ml");
  EXPECT_EQ(u.rows[0].jobs, 2u);
  EXPECT_DOUBLE_EQ(u.rows[0].gpu_hours_allocated, 8 + 18);
  EXPECT_DOUBLE_EQ(u.rows[0].gpu_hours_used, 15);
  EXPECT_EQ(u.rows[1].group, "bio");
  EXPECT_DOUBLE_EQ(u.rows[1].gpu_hours_allocated, 0.5);
  EXPECT_EQ(u.rows[2].group, "other");
  EXPECT_DOUBLE_EQ(u.rows[2].gpu_hours_used, 1.5);
  EXPECT_DOUBLE_EQ(u.total.gpu_hours_allocated, 26.5);
  EXPECT_DOUBLE_EQ(u.total.gpu_hours_used, 16.5);
  EXPECT_EQ(render_usage_csv(u),
            "account,jobs,gpu_hours_allocated,gpu_hours_used\nml,2,26.0000,15.0000\n"
            "bio,1,0.5000,0.0000\nother,1,0.0000,1.5000\n");
  EXPECT_NE(render_usage_text(u).find("total"), std::string::npos);
  EXPECT_THROW(parse_usage_by("qos"), std::invalid_argument);
  auto by_user = build_usage(UsageBy::User, since, until, jobs, use);
  // sacct's user of a listed job wins over the series' label (here "" against "u"); job 99 counts under "x".
  ASSERT_EQ(by_user.rows.size(), 2u);
  EXPECT_EQ(by_user.rows[0].group, "");
  EXPECT_EQ(by_user.rows[1].group, "x");
}

TEST(JobstatsUsage, ExpressionSumsUtilisationPerJobOverThePeriod) {
  EXPECT_EQ(usage_expr(0, 3600, 60, "c1"),
            "sum by (job_id, user, account, partition) (sum_over_time(("
            "max by (cluster, node, gpu, job_id, user, account, partition) (gcm_gpu_job_info{cluster=\"c1\"})"
            " * on(cluster, node, gpu) group_left() "
            "clamp(max by (cluster, node, gpu) (gcm_gpu_utilization_percent), 0, 100))[3599s:60s]))");
}

// --- the command, against a stand-in sacct and a scripted Prometheus ---

class ScriptedPrometheus {
 public:
  // answer(query) gives the JSON body for a query, or "" for HTTP 400 with an API error.
  explicit ScriptedPrometheus(std::function<std::string(const std::string&)> answer) : answer_(std::move(answer)) {
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      std::string q = req.get_param_value("query");
      {
        std::lock_guard lock(mu_);
        queries.push_back(q);
      }
      std::string body = answer_(q);
      if (body.empty()) {
        res.status = 400;
        body = R"({"status":"error","errorType":"bad_data","error":"unexpected query"})";
      }
      res.set_content(body, "application/json");
    };
    server_.Post("/api/v1/query_range", handler);
    server_.Post("/api/v1/query", handler);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~ScriptedPrometheus() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> queries;

 private:
  std::function<std::string(const std::string&)> answer_;
  std::mutex mu_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

std::string matrix(const std::vector<Series>& ss) {
  json r = json::array();
  for (const auto& s : ss) {
    json v = json::array();
    for (const auto& p : s.points) v.push_back({p.t, fmt::format("{}", p.v)});
    r.push_back({{"metric", s.labels}, {"values", v}});
  }
  return json{{"status", "success"}, {"data", {{"resultType", "matrix"}, {"result", r}}}}.dump();
}

// The series of four_gpu_job() by the metric its query names.
std::string answer_for(const std::string& q) {
  auto js = four_gpu_job();
  auto has = [&](const char* m) { return q.find(m) != std::string::npos; };
  if (q.find("job_id=\"42\"") == std::string::npos) return matrix({});
  if (has("gcm_gpu_utilization_percent")) return matrix(js.utilization);
  if (has("gcm_gpu_memory_used_bytes")) return matrix(js.memory_used);
  if (has("gcm_gpu_memory_total_bytes")) return matrix(js.memory_total);
  if (has("gcm_gpu_clock_sm_hertz")) return matrix(js.sm_clock);
  if (has("gcm_gpu_power_watts")) return matrix(js.power);
  if (has("gcm_gpu_energy_joules_total")) return matrix(js.energy);
  if (has("gcm_gpu_clock_event_reasons")) return matrix(js.clock_events);
  if (has("gcm_gpu_health_state")) return matrix(js.health_state);
  if (has("gcm_gpu_health_reason")) return matrix(js.health_reason);
  if (has("gcm_gpu_xid_errors_total")) return matrix(js.xid_errors);
  if (has("gcm_job_")) return matrix({});  // the job's own signal: this job reports no steps
  if (q.rfind("max by (cluster, node, gpu, uuid) (gcm_gpu_job_info", 0) == 0) return matrix(js.job_info);
  return "";
}

CommandResult gcm(std::vector<std::string> args, const std::string& dir) {
  CommandSpec spec;
  spec.argv = {GCM_BINARY};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.timeout = std::chrono::seconds(60);
  spec.extra_env = {"TZ=UTC", "PATH=" + dir + ":/usr/bin:/bin"};
  return run_command(spec);
}

class JobstatsCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(GCM_BINARY)) GTEST_SKIP() << GCM_BINARY << " is not built in this tree";
    write_script(dir.path(), "sacct",
                 "printf '%s' '" + std::string(kSacctHeader) +
                     "'\n"
                     "case \"$*\" in *'-j 42 '*) echo '42|#42|#train|#alice|#ml|#gpu|#tb|#COMPLETED|#"
                     "2025-12-01T10:00:00|#2025-12-01T11:00:00|#node[1-2]|#gres/gpu=4' ;; esac\n");
  }
  TempDir dir;
};

TEST_F(JobstatsCommand, JsonAndHtmlFromSacctAndPrometheus) {
  ScriptedPrometheus prom(answer_for);
  auto r =
      gcm({"jobstats", "42", "--prometheus-url", prom.url(), "--json", "--html", dir.file("42.html"), "--step", "60"},
          dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto j = json::parse(r.out);
  EXPECT_EQ(j["job"]["user"], "alice");
  EXPECT_EQ(j["start"], kT0);
  EXPECT_EQ(j["elapsed_seconds"], 3600);
  EXPECT_EQ(j["gpus"].size(), 4u);
  EXPECT_NEAR(j["totals"]["gpu_hours_used"].get<double>(), 2, 1e-9);
  EXPECT_EQ(j["gpus"][1]["slow"]["cause"], "hw_slowdown");
  EXPECT_NE(std::ifstream(dir.file("42.html")).peek(), EOF);
  // Every device series came through the job_info join; the job's own signal is asked once (it reports no steps).
  for (const auto& q : prom.queries) {
    if (q.find("gcm_job_") != std::string::npos) continue;
    EXPECT_NE(q.find("gcm_gpu_job_info{job_id=\"42\"}"), std::string::npos) << q;
  }
  EXPECT_EQ(prom.queries.size(), 12u);
  EXPECT_NE(prom.queries.back().find("gcm_job_step_duration_seconds{job_id=\"42\"}"), std::string::npos);
}

TEST_F(JobstatsCommand, UnknownJobAndSilentPrometheusAreClearErrors) {
  ScriptedPrometheus prom(answer_for);
  auto r = gcm({"jobstats", "43", "--prometheus-url", prom.url()}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("job 43 does not exist"), std::string::npos) << r.err;
  EXPECT_TRUE(prom.queries.empty());
  gcm::testing::RefusedPort refused;  // a port nothing listens on
  std::string dead = refused.url();
  r = gcm({"jobstats", "42", "--prometheus-url", dead, "--prometheus-timeout", "5"}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Prometheus at " + dead + " does not answer"), std::string::npos) << r.err;
  r = gcm({"jobstats", "4x2", "--prometheus-url", prom.url()}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("invalid job id '4x2'"), std::string::npos) << r.err;
  r = gcm({"usage", "--since", "2025-12-01", "--by", "qos"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--by 'qos': expected account, user or partition"), std::string::npos) << r.err;
}

TEST_F(JobstatsCommand, TextReportOfAJobWithoutSeries) {
  ScriptedPrometheus prom([](const std::string&) { return matrix({}); });
  auto r = gcm({"jobstats", "42", "--prometheus-url", prom.url()}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Prometheus has no GPU series for job 42"), std::string::npos) << r.out;
  EXPECT_EQ(prom.queries.size(), 1u);  // nothing more asked once the job has no GPUs in Prometheus
}

}  // namespace
}  // namespace gcm::jobstats

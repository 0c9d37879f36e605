// sacct_publish, fsacct and sacct_backfill as whole processes: on the reference's fixtures, on fake `sacct` commands
// put first on PATH (faults: killed mid-stream, hung, failing publish, an interrupted backfill), and on the live
// Slurm testbed (sacct_running while jobs run, a backfill of the window afterwards).
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "helpers.h"

namespace gcm::testing {
namespace {

using json = nlohmann::json;
const std::string kFixtures = std::string(GCM_SOURCE_DIR) + "/../shared/fixtures/gcm";

void write_file(const std::string& path, const std::string& text, bool executable = false) {
  std::ofstream(path) << text;
  if (executable) ::chmod(path.c_str(), 0755);
}

std::vector<std::string> with_env_path(const std::string& dir) {
  return {"PATH=" + dir + ":" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin"), "TZ=UTC"};
}

// --- sacct_publish ---

TEST(SacctPublishCli, SampleOutputToStdoutAndDoNothing) {
  if (!std::filesystem::exists(kFixtures + "/sample-sacct-output.txt")) GTEST_SKIP() << "no fixture";
  std::string dir = temp_dir("sacct-pub");
  auto r = run_gcm({"sacct_publish", "--delimiter", "|", "--cluster", "c", "--log-folder", dir, "--sink", "stdout",
                    kFixtures + "/sample-sacct-output.txt"},
                   std::chrono::seconds(60), {"TZ=America/Los_Angeles"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto records = records_of(r.out);
  ASSERT_EQ(records.size(), 68u);
  for (const auto& rec : records) EXPECT_EQ(rec["end_ds"], "2020-11-16");
  // stdin, chunked at 20k: the same records in several chunks.
  CommandSpec s;
  s.argv = {gcm_binary(), "sacct_publish", "--delimiter", "|", "--cluster", "c", "--log-folder",
            dir,          "--chunk-size",  "20k"};
  s.stdin_data = read_text(kFixtures + "/sample-sacct-output.txt");
  s.extra_env = {"TZ=America/Los_Angeles"};
  auto c = run_command(s);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(records_of(c.out).size(), 68u);
  EXPECT_GT(std::count(c.out.begin(), c.out.end(), '\n'), 5);
  auto n = run_gcm({"sacct_publish", "--delimiter", "|", "--cluster", "c", "--log-folder", dir, "--sink", "do_nothing",
                    kFixtures + "/sample-sacct-output.txt"});
  EXPECT_EQ(n.exit_code, 0) << n.err;
  EXPECT_EQ(n.out, "");
}

TEST(SacctPublishCli, InvalidLinesAndUtf8) {
  if (!std::filesystem::exists(kFixtures + "/sample-sacct-output-with-invalid-lines.txt")) GTEST_SKIP();
  std::string dir = temp_dir("sacct-pub");
  std::string bad = kFixtures + "/sample-sacct-output-with-invalid-lines.txt";
  auto r = run_gcm({"sacct_publish", "--delimiter", "|", "--cluster", "c", "--log-folder", dir, bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("Invalid input on line 2"), std::string::npos) << r.err;
  r = run_gcm(
      {"sacct_publish", "--delimiter", "|", "--cluster", "c", "--log-folder", dir, "--ignore-line-errors", bad});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("skipped 1 invalid line(s): 2 ("), std::string::npos) << r.err;
  EXPECT_NE(read_text(dir + "/sacct_publish_logs/sacct_publish.log").find("Skipping invalid input on line 2"),
            std::string::npos);

  std::string utf8 = dir + "/utf8.txt";
  write_file(utf8, "JobID|JobName|End\n1|ok|2021-04-07T10:00:00\n2|bad\xff|2021-04-07T11:00:00\n");
  r = run_gcm({"sacct_publish", "--delimiter", "|", "--cluster", "c", "--log-folder", dir, utf8});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("'utf-8' codec can't decode"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("line 3"), std::string::npos) << r.err;
  for (const char* mode : {"ignore", "replace"}) {
    r = run_gcm({"sacct_publish", "--delimiter", "|", "--cluster", "c", "--log-folder", dir, "--sacct-output-io-errors",
                 mode, utf8});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(records_of(r.out).size(), 2u) << mode;
  }
  r = run_gcm({"sacct_publish", "--sacct-timezone", "Mars/Olympus", "--cluster", "c", "--log-folder", dir, utf8});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'Mars/Olympus' is not a valid timezone"), std::string::npos) << r.err;
}

// --- fsacct on a fake sacct ---

TEST(FsacctCli, MidnightSmallThroughAFakeSacct) {
  if (!std::filesystem::exists(kFixtures + "/sample-sacct-output-midnight-edge-case-small.txt")) GTEST_SKIP();
  std::string dir = temp_dir("fsacct");
  write_file(dir + "/sacct",
             "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" + dir + "/args'\ncat '" + kFixtures +
                 "/sample-sacct-output-midnight-edge-case-small.txt'\nexit 0\n",
             true);
  std::string states =
      "boot_fail,cancelled,completed,deadline,failed,node_fail,out_of_memory,preempted,requeued,resizing,revoked,"
      "timeout";
  for (const char* batch : {"1", "1000"}) {
    auto r = run_gcm({"fsacct", "-P", "-S", "2021-04-07T00:00:00", "-E", "2021-04-07T23:59:59", "--delimiter", "|",
                      "-s", states, "-a", "-o", "jobid,state", "--wrapper-batch-size", batch},
                     std::chrono::seconds(30), {with_env_path(dir)[0], "TZ=America/Los_Angeles"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, read_text(kFixtures + "/sample-sacct-output-midnight-edge-case-small-expected.txt"));
  }
  EXPECT_EQ(read_text(dir + "/args"), "-P\n-a\n-E\n2021-04-07T23:59:59\n--delimiter\n|\n--state\n" + states +
                                          "\n-o\njobid,state,end\n-S\n2021-04-06T23:58:00\n");
  // Not patched (a running state): sacct runs unchanged and its exit code comes back.
  write_file(dir + "/sacct", "#!/bin/sh\nprintf '%s\\n' \"$@\"\nexit 3\n", true);
  auto r = run_gcm({"fsacct", "-P", "-S", "now", "-s", "running", "--wrapper-batch-size", "5", "-h"},
                   std::chrono::seconds(30), with_env_path(dir));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "-P\n-S\nnow\n-s\nrunning\n-h\n");
}

// --- sacct_backfill on a fake sacct: one job every 10 minutes of the window, faults on demand ---

struct FakeCluster {
  std::string dir = temp_dir("backfill");
  FakeCluster() {
    // -S is 2 minutes before the window (fsacct widens it); rows of the widened part are filtered by fsacct.
    write_file(dir + "/sacct", R"SH(#!/bin/bash
set -u
D=$(dirname "$0")
while [ $# -gt 0 ]; do case "$1" in -S) S=$2; shift;; -E) E=$2; shift;; esac; shift; done
n=$(( $(cat "$D/sacct.calls" 2>/dev/null || echo 0) + 1 )); echo $n > "$D/sacct.calls"
s=$(date -u -d "$S" +%s); e=$(date -u -d "$E" +%s)
echo "JobID|#State|#SubmitLine|#End"
t=$(( (s + 599) / 600 * 600 )); i=0
while [ $t -le $e ]; do
  echo "job$t|#COMPLETED|#sbatch --wrap 'echo one"
  echo "two'|#$(date -u -d @$t +%Y-%m-%dT%H:%M:%S)"
  i=$((i+1))
  if [ "${FAULT:-}" = kill ] && [ $n -eq 2 ] && [ $i -eq 2 ]; then kill -9 $$; fi
  t=$((t + 600))
done
if [ "${FAULT:-}" = hang ] && [ $n -eq 3 ]; then exec sleep 600; fi
exit 0
)SH",
               true);
    // Appends the chunk's rows (without the header); fails or kills the backfill on the call FAULT_PUBLISH names.
    write_file(dir + "/publish", R"SH(#!/bin/bash
D=$(dirname "$0")
n=$(( $(cat "$D/publish.calls" 2>/dev/null || echo 0) + 1 )); echo $n > "$D/publish.calls"
if [ "${FAULT_PUBLISH:-}" = "fail$n" ]; then echo "publish: refusing call $n" >&2; exit 1; fi
if [ "${FAULT_PUBLISH:-}" = "kill$n" ]; then kill -9 $PPID; exit 1; fi
# Kills the backfill, then goes on to publish its chunk, as a slow publisher would once its parent is gone.
if [ "${FAULT_PUBLISH:-}" = "orphan$n" ]; then echo $$ > "$D/orphan.pid"; kill -9 $PPID; sleep 2; fi
tail -n +2 >> "$D/published"
)SH",
               true);
  }
  CommandResult backfill(const std::string& fault, const std::string& publish_fault,
                         std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"sacct_backfill",  "--once", "--sleep",      "0", "--retry-wait", "0",
                                     "--cluster",       "fake",   "--log-folder", dir, "--state-file", dir + "/state",
                                     "--sacct-timeout", "3"};
    args.insert(args.end(), extra.begin(), extra.end());
    for (const char* a : {"new", "-s", "2021-04-07T00:00:00", "-e", "2021-04-07T03:59:59", "--step", "1", "--"})
      args.push_back(a);
    args.push_back(dir + "/publish");
    auto env = with_env_path(dir);
    env.push_back("FAULT=" + fault);
    env.push_back("FAULT_PUBLISH=" + publish_fault);
    return run_gcm(args, std::chrono::seconds(120), env);
  }
  // Job ids published, with their counts.
  std::map<std::string, int> published() {
    std::map<std::string, int> ids;
    std::istringstream in(read_text(dir + "/published"));
    for (std::string line; std::getline(in, line);) ids[line.substr(0, line.find('|'))]++;
    return ids;
  }
  std::string log() { return read_text(dir + "/sacct_backfill_logs/fake.log"); }
};

void expect_each_once(const std::map<std::string, int>& ids) {
  EXPECT_EQ(ids.size(), 24u);  // 4 hours, one job every 10 minutes
  for (const auto& [id, n] : ids) EXPECT_EQ(n, 1) << id;
}

TEST(SacctBackfillCli, PublishesEveryChunkOnceWithMultilineRecordsJoined) {
  FakeCluster f;
  auto r = f.backfill("", "");
  ASSERT_EQ(r.exit_code, 0) << r.err << f.log();
  expect_each_once(f.published());
  EXPECT_NE(read_text(f.dir + "/published").find("echo one\\ntwo'"), std::string::npos);
  EXPECT_NE(f.log().find("chunk 4/4"), std::string::npos) << f.log();
  // A second run publishes nothing again.
  r = f.backfill("", "");
  EXPECT_EQ(r.exit_code, 0);
  expect_each_once(f.published());
  EXPECT_NE(f.log().find("4 of 4 chunk(s) already published"), std::string::npos) << f.log();
}

TEST(SacctBackfillCli, SacctKilledMidStreamIsRetriedWithoutPartialPublish) {
  FakeCluster f;
  auto r = f.backfill("kill", "");
  ASSERT_EQ(r.exit_code, 0) << r.err << f.log();
  expect_each_once(f.published());
  EXPECT_NE(f.log().find("killed by signal 9"), std::string::npos) << f.log();
  EXPECT_NE(f.log().find("(attempt 2)"), std::string::npos) << f.log();
}

TEST(SacctBackfillCli, ChunkTimeoutAndFailingPublishAreReportedAndRetried) {
  FakeCluster f;
  auto r = f.backfill("hang", "fail2");
  ASSERT_EQ(r.exit_code, 0) << r.err << f.log();
  expect_each_once(f.published());
  EXPECT_NE(f.log().find("timed out after 3 s (--sacct-timeout)"), std::string::npos) << f.log();
  EXPECT_NE(f.log().find("the publish command"), std::string::npos) << f.log();
}

TEST(SacctBackfillCli, FailureAfterRetriesIsReportedAndARestartFinishesIt) {
  FakeCluster f;
  auto r = f.backfill("", "fail2", {"--retries", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("1 of 4 chunk(s) failed"), std::string::npos) << r.err;
  EXPECT_NE(f.log().find("Failed to publish 2021-04-07T01:00:00+00:00"), std::string::npos) << f.log();
  EXPECT_EQ(f.published().size(), 18u);
  r = f.backfill("", "", {"--retries", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_each_once(f.published());
}

TEST(SacctBackfillCli, KilledBackfillResumesWithoutPublishingAChunkTwice) {
  FakeCluster f;
  auto r = f.backfill("", "kill3");  // the third publish kills the backfill itself
  EXPECT_EQ(r.term_signal, SIGKILL) << r.exit_code << r.err;
  EXPECT_EQ(f.published().size(), 12u);
  r = f.backfill("", "");
  ASSERT_EQ(r.exit_code, 0) << r.err << f.log();
  expect_each_once(f.published());
  EXPECT_NE(f.log().find("2 of 4 chunk(s) already published"), std::string::npos) << f.log();
}

// SIGKILL of the backfill while its publish command runs: the publisher dies with it (it once finished its chunk
// unrecorded, and the rerun published the chunk again), and the state file tells the rerun which chunk was cut off.
TEST(SacctBackfillCli, PublisherDiesWithAKilledBackfillAndTheRerunNamesTheChunk) {
  for (const char* point : {"orphan1", "orphan3", "orphan4"}) {
    FakeCluster f;
    auto r = f.backfill("", point);
    EXPECT_EQ(r.term_signal, SIGKILL) << point << ": " << r.exit_code << r.err;
    pid_t orphan = 0;
    std::ifstream(f.dir + "/orphan.pid") >> orphan;
    ASSERT_GT(orphan, 0) << point;
    EXPECT_TRUE(eventually([&] { return ::kill(orphan, 0) != 0; }, std::chrono::seconds(5)))
        << point << ": the publisher outlived the backfill";
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // an orphan would have published by now
    size_t before = f.published().size();
    EXPECT_EQ(before, static_cast<size_t>((point[6] - '1') * 6)) << point;
    EXPECT_NE(read_text(f.dir + "/state").find("publishing "), std::string::npos) << point;
    r = f.backfill("", "");
    ASSERT_EQ(r.exit_code, 0) << point << ": " << r.err << f.log();
    expect_each_once(f.published());
    EXPECT_NE(f.log().find("was cut off while its publish command ran"), std::string::npos) << point << f.log();
  }
}

TEST(SacctBackfillCli, FromFileAndConcurrency) {
  FakeCluster f;
  write_file(f.dir + "/intervals",
             "2021-04-07T00:00:00,2021-04-07T01:59:59\n2021-04-07T02:00:00,2021-04-07T03:59:59\n");
  auto env = with_env_path(f.dir);
  auto r = run_gcm(
      {"sacct_backfill", "--once", "--sleep", "0", "--concurrently", "0", "--cluster", "fake", "--log-folder", f.dir,
       "--state-file", "none", "from_file", "--intervals", f.dir + "/intervals", "--", f.dir + "/publish"},
      std::chrono::seconds(60), env);
  ASSERT_EQ(r.exit_code, 0) << r.err << f.log();
  expect_each_once(f.published());
  r = run_gcm(
      {"sacct_backfill", "--once", "--cluster", "fake", "--log-folder", f.dir, "new", "--step", "0.0001", "--", "true"},
      std::chrono::seconds(30), env);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("more than 1 second"), std::string::npos) << r.err;
}

// --- the live testbed ---

#define REQUIRE_TESTBED() \
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (start tests/testbed/start.sh, source env.sh)"

std::string submit(std::vector<std::string> args) {
  std::vector<std::string> argv = {"sbatch", "--parsable", "--chdir=/tmp", "--output=/dev/null"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string out = run_ok(argv);
  return out.substr(0, out.find_first_of(";\n"));
}

TEST(SacctTestbed, RunningJobsThenABackfillOfTheWindowMatchSacct) {
  REQUIRE_TESTBED();
  ::setenv("TZ", "UTC", 1);  // sacct here prints the same wall clock as gcm's sacct (TZ=UTC below)
  std::string dir = temp_dir("sacct-tb");
  int64_t t0 = std::time(nullptr) - 60;
  std::string running = submit(
      {"-J", "sacct-two-lines", "-p", "gpu", "--gres=gpu:1", "--time=10", "--wrap", "echo first\nexec sleep 600"});
  std::string quick = submit({"-J", "sacct-quick", "-p", "gpu", "--time=5", "--wrap", "true"});
  ASSERT_TRUE(eventually([&] { return sacct_field(running, "state") == "RUNNING"; }, std::chrono::seconds(30)));
  ASSERT_TRUE(eventually([&] { return sacct_field(quick, "state") == "COMPLETED"; }, std::chrono::seconds(30)));

  auto r = run_gcm({"sacct_running", "--once", "--sink", "stdout", "--log-folder", dir}, std::chrono::seconds(60),
                   {"TZ=UTC"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int found = 0;
  for (const auto& rec : records_of(r.out)) {
    if (rec["JobID"] != running) continue;
    ++found;
    EXPECT_EQ(rec["State"], "RUNNING");
    EXPECT_NE(rec["AllocTRES"].get<std::string>().find("gres/gpu=1"), std::string::npos) << rec["AllocTRES"];
    EXPECT_EQ(rec["Start"], sacct_field(running, "start") + "+00:00");
    EXPECT_NE(rec["SubmitLine"].get<std::string>().find("echo first\\nexec sleep 600"), std::string::npos)
        << rec["SubmitLine"];
    EXPECT_EQ(rec["End"], "Unknown");
  }
  EXPECT_EQ(found, 1) << r.out.substr(0, 2000);

  run_ok({"scancel", running});
  ASSERT_TRUE(
      eventually([&] { return sacct_field(running, "state").starts_with("CANCELLED"); }, std::chrono::seconds(30)));
  int64_t t1 = std::time(nullptr) + 5;
  std::string out = dir + "/published.jsonl";
  r = run_gcm({"sacct_backfill", "--once", "--sleep", "0", "--log-folder", dir, "--state-file", dir + "/state", "new",
               "-s", "@" + std::to_string(t0), "-e", "@" + std::to_string(t1), "--step", "0.1", "--", "sh", "-c",
               "exec '" + gcm_binary() + "' sacct_publish --log-folder '" + dir + "' --sink stdout >> '" + out + "'"},
              std::chrono::seconds(120), {"TZ=UTC"});
  ASSERT_EQ(r.exit_code, 0) << r.err << read_text(dir + "/sacct_backfill_logs");
  std::map<std::string, std::vector<json>> by_job;
  for (const auto& rec : records_of(read_text(out))) by_job[rec["sacct"]["JobID"]].push_back(rec);
  ASSERT_EQ(by_job[running].size(), 1u);  // the allocation row, once, though its record spans two lines
  ASSERT_EQ(by_job[quick].size(), 1u);
  const json& c = by_job[running][0]["sacct"];
  EXPECT_EQ(c["State"], sacct_field(running, "state"));
  EXPECT_EQ(c["End"], sacct_field(running, "end") + "+00:00");
  EXPECT_NE(c["AllocTRES"].get<std::string>().find("gres/gpu=1"), std::string::npos);
  EXPECT_NE(c["SubmitLine"].get<std::string>().find("echo first\\nexec sleep 600"), std::string::npos);
  EXPECT_EQ(by_job[quick][0]["sacct"]["State"], "COMPLETED");
  EXPECT_EQ(by_job[quick][0]["sacct"]["End"], sacct_field(quick, "end") + "+00:00");
}

}  // namespace
}  // namespace gcm::testing

#include "agent/agent_state.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agent/agent_options.h"
#include "agent/job_signal_ranks.h"
#include "agent/status_text.h"
#include "core/subprocess.h"
#include "temp_dir.h"

namespace gcm::agent {
namespace {

using gcm::testing::TempDir;

AgentState two_gpus(Health second, int64_t written_ms) {
  AgentState s;
  s.written_unix_ms = written_ms;
  s.window_seconds = 30;
  s.hostname = "node7";
  GpuStateEntry a;
  a.gpu = 0;
  a.uuid = "GPU-a";
  GpuStateEntry b;
  b.gpu = 1;
  b.uuid = "GPU-b";
  b.health = second;
  b.job_id = "1234";
  if (second != Health::Ok) {
    b.reasons = {"xid"};
    b.evidence = "XID 79 (RESET_GPU): GPU has fallen off the bus";
    b.active_xids = {79};
  }
  s.gpus = {a, b};
  return s;
}

TEST(AgentState, WrittenAtomicallyReadBackAndReadableByOthers) {
  TempDir dir;
  std::string path = dir.file("run/agent-state.json");
  write_agent_state(path, two_gpus(Health::Failed, 5000));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  auto back = read_agent_state(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->hostname, "node7");
  ASSERT_EQ(back->gpus.size(), 2u);
  EXPECT_EQ(back->gpus[1].health, Health::Failed);
  EXPECT_EQ(back->gpus[1].active_xids, std::vector<int>{79});
  EXPECT_EQ(back->gpus[1].job_id, "1234");
  // No temporary file is left beside it.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.file("run")), {}), 1);
}

TEST(AgentState, MissingFileIsNulloptAndAWritableByOthersFileIsRefused) {
  TempDir dir;
  EXPECT_FALSE(read_agent_state(dir.file("none.json")));
  std::string path = dir.file("agent-state.json");
  write_agent_state(path, two_gpus(Health::Ok, 1));
  ::chmod(path.c_str(), 0666);
  EXPECT_THROW(read_agent_state(path), std::runtime_error);
}

TEST(AgentState, GarbageNamesTheFile) {
  try {
    parse_agent_state("{\"version\": 1, \"gpus\": []}", "/run/gcm/agent-state.json");
    FAIL() << "no written_unix_ms must be refused";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/run/gcm/agent-state.json"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_agent_state("[[[[", "x"), std::runtime_error);
  EXPECT_THROW(parse_agent_state("{\"version\": 2, \"written_unix_ms\": 1}", "x"), std::runtime_error);
}

TEST(AgentVerdict, FailedOrDegradedGpuIsCriticalWithTheAgentsReason) {
  int64_t now = 100000;
  auto v = judge_agent_state(two_gpus(Health::Failed, now - 10000), now, "p");
  EXPECT_EQ(v.code, 2);
  EXPECT_NE(v.message.find("GPU 1 failed (xid)"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("XID 79"), std::string::npos) << v.message;
  EXPECT_EQ(judge_agent_state(two_gpus(Health::Degraded, now), now, "p").code, 2);
}

TEST(AgentVerdict, HealthyOrSuspectIsOk) {
  int64_t now = 100000;
  EXPECT_EQ(judge_agent_state(two_gpus(Health::Ok, now), now, "p").code, 0);
  auto v = judge_agent_state(two_gpus(Health::Suspect, now), now, "p");
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.message.find("suspect: GPU 1"), std::string::npos) << v.message;
}

TEST(AgentVerdict, AStaleOrMissingStateIsAWarningNeverAFailure) {
  int64_t now = 1000000;
  // Older than 3 windows of 30 s, even with a failed GPU in it: the agent died, the node is not drained for it.
  auto v = judge_agent_state(two_gpus(Health::Failed, now - 91000), now, "/run/gcm/agent-state.json");
  EXPECT_EQ(v.code, 1);
  EXPECT_NE(v.message.find("91 s old"), std::string::npos) << v.message;
  EXPECT_EQ(judge_agent_state(two_gpus(Health::Failed, now - 89000), now, "p").code, 2);
  EXPECT_EQ(judge_agent_state(std::nullopt, now, "p").code, 1);
}

TEST(AgentVerdict, ADegradedOrFailedNodeReasonIsCriticalThoughEveryGpuIsHealthy) {
  int64_t now = 100000;
  auto s = two_gpus(Health::Ok, now);
  s.node.push_back({"ib_link_down", Health::Degraded, "link_down infiniband on ib0: ib0: Lost carrier", now - 5000});
  auto v = judge_agent_state(s, now, "p");
  EXPECT_EQ(v.code, 2);
  EXPECT_NE(v.message.find("CRITICAL: the node is unhealthy: node degraded (ib_link_down): link_down"),
            std::string::npos)
      << v.message;
  auto both = two_gpus(Health::Failed, now);
  both.node = s.node;
  v = judge_agent_state(both, now, "p");
  EXPECT_EQ(v.code, 2);
  EXPECT_NE(v.message.find("1 GPU(s) and the node unhealthy: GPU 1 failed (xid)"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("; node degraded (ib_link_down)"), std::string::npos) << v.message;
}

TEST(AgentState, NodeReasonsRoundTripAndAnUnknownHealthNamesTheReason) {
  auto s = two_gpus(Health::Ok, 1000);
  s.node.push_back({"sxid_fatal", Health::Failed, "sxid fatal on 0000:a6:00.0", 900});
  AgentState back = parse_agent_state(to_json(s), "f");
  ASSERT_EQ(back.node.size(), 1u);
  EXPECT_EQ(back.node[0].reason, "sxid_fatal");
  EXPECT_EQ(back.node[0].health, Health::Failed);
  EXPECT_EQ(back.node[0].evidence, "sxid fatal on 0000:a6:00.0");
  EXPECT_EQ(back.node[0].since_unix_ms, 900);
  std::string bad = to_json(s);
  bad.replace(bad.find("\"failed\""), 8, "\"broken\"");
  try {
    parse_agent_state(bad, "f");
    FAIL() << "accepted an unknown health";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("node reason sxid_fatal: unknown health 'broken'"), std::string::npos)
        << e.what();
  }
  // A state file of before the node's reasons has none.
  std::string old = to_json(two_gpus(Health::Ok, 1000));
  EXPECT_TRUE(parse_agent_state(old, "f").node.empty());
}

TEST(AgentStatus, TextShowsTheNodesReasons) {
  auto s = two_gpus(Health::Ok, 1000);
  EXPECT_NE(status_text(s, 2000).find("Node: ok\n"), std::string::npos);
  s.node.push_back({"fabric_manager", Health::Degraded, "NVSwitch system and nvidia-fabricmanager.service is inactive",
                    900});
  std::string t = status_text(s, 2000);
  EXPECT_NE(t.find("Node:\n  degraded  fabric_manager: NVSwitch system and nvidia-fabricmanager.service is inactive"),
            std::string::npos)
      << t;
}

TEST(AgentStatus, TextShowsEachGpuItsJobHealthAndEvidence) {
  auto s = two_gpus(Health::Failed, 1000);
  s.problems = {"GPU 1 failed: XID 79"};
  std::string t = status_text(s, 4000);
  EXPECT_NE(t.find("node7"), std::string::npos) << t;
  EXPECT_NE(t.find("3 s old"), std::string::npos) << t;
  EXPECT_NE(t.find("GPU-b"), std::string::npos) << t;
  EXPECT_NE(t.find("failed"), std::string::npos) << t;
  EXPECT_NE(t.find("1234"), std::string::npos) << t;
  EXPECT_NE(t.find("fallen off the bus"), std::string::npos) << t;
  EXPECT_NE(t.find("Active problems:"), std::string::npos) << t;
}

TEST(AgentStatus, TheJobSignalRanksRoundTripAndAreShownByJobAndRank) {
  auto s = two_gpus(Health::Ok, 1000);
  EXPECT_EQ(status_text(s, 2000).find("Job-signal ranks"), std::string::npos) << "no ranks, no section";
  jobsignal::RankJudgement slow;
  slow.job_id = "4242";
  slow.rank = 19;
  slow.gpu = 3;
  slow.judgement = jobsignal::Judgement::Slow;
  slow.signal = "compute";
  slow.value = 0.412;
  jobsignal::RankJudgement clean = slow, warm = slow;
  clean.rank = 18;
  clean.gpu = 2;
  clean.judgement = jobsignal::Judgement::Clean;
  clean.value = 0.388;
  warm.job_id = "77";
  warm.rank = -1;  // not numbered by Slurm or the launcher
  warm.gpu = -1;
  warm.judgement = jobsignal::Judgement::Held;
  warm.signal = "";
  s.ranks = rank_state_entries({slow, warm, clean});
  ASSERT_EQ(s.ranks.size(), 3u);
  EXPECT_EQ(s.ranks[0].rank, 18);  // by job, then rank
  EXPECT_EQ(s.ranks[2].job_id, "77");
  EXPECT_EQ(s.ranks[2].seconds, 0) << "nothing compared, no time";
  AgentState back = parse_agent_state(to_json(s), "f");
  ASSERT_EQ(back.ranks.size(), 3u);
  EXPECT_EQ(back.ranks[1].rank, 19);
  EXPECT_EQ(back.ranks[1].gpu, 3);
  EXPECT_EQ(back.ranks[1].signal, "compute");
  EXPECT_DOUBLE_EQ(back.ranks[1].seconds, 0.412);
  EXPECT_EQ(back.ranks[1].judgement, "slow");
  std::string t = status_text(back, 2000);
  EXPECT_NE(t.find("Job-signal ranks (last window):\n"
                   "  JOB          RANK   GPU  TIME                   RANK_SLOW\n"
                   "  4242         18     2    0.388 s compute        clean\n"
                   "  4242         19     3    0.412 s compute        slow\n"
                   "  77           -      -    -                      held\n"),
            std::string::npos)
      << t;
  // A state file of before the ranks has none.
  EXPECT_TRUE(parse_agent_state(to_json(two_gpus(Health::Ok, 1000)), "f").ranks.empty());
}

TEST(AgentOptions, ByteSizesWithSuffixes) {
  EXPECT_EQ(parse_byte_size("1024"), 1024u);
  EXPECT_EQ(parse_byte_size("256MiB"), 256u << 20);
  EXPECT_EQ(parse_byte_size("1GB"), 1000000000u);
  EXPECT_EQ(parse_byte_size("512k"), 512000u);
  EXPECT_THROW(parse_byte_size("lots"), std::invalid_argument);
  EXPECT_THROW(parse_byte_size("12XB"), std::invalid_argument);
  EXPECT_THROW(parse_byte_size("0"), std::invalid_argument);
}

TEST(AgentVerdictNpd, NagiosCodesAsNodeProblemDetectorsPluginCodes) {
  EXPECT_EQ(npd_exit_code(0), 0);
  EXPECT_EQ(npd_exit_code(2), 1);  // CRITICAL: NonOK
  EXPECT_EQ(npd_exit_code(1), 2);  // WARNING (agent not running): Unknown
  EXPECT_EQ(npd_exit_code(3), 2);
}

// The check as NPD's custom plugin monitor runs it: `health_checks agent-verdict --npd`, the exit code and the
// stdout line that becomes the condition's message.
TEST(AgentVerdictNpd, AsACustomPlugin) {
  std::string bin = std::filesystem::path(GCM_BINARY).parent_path() / "health_checks";
  if (!std::filesystem::exists(bin)) GTEST_SKIP() << bin << " is not built in this tree";
  TempDir dir;
  auto run = [&] {
    CommandSpec spec;
    spec.argv = {bin,
                 "agent-verdict",
                 "c",
                 "app",
                 "--npd",
                 "--verbose-out",
                 "--path.run",
                 dir.file("run"),
                 "--log-folder",
                 dir.file("logs")};
    spec.timeout = std::chrono::seconds(30);
    return run_command(spec);
  };
  auto missing = run();
  EXPECT_EQ(missing.exit_code, 2) << missing.out << missing.err;
  int64_t now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  write_agent_state(dir.file("run/agent-state.json"), two_gpus(Health::Ok, now));
  auto ok = run();
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  write_agent_state(dir.file("run/agent-state.json"), two_gpus(Health::Failed, now));
  auto bad = run();
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("XID 79"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace gcm::agent

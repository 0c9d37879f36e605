// The suite file, drain reasons and node state, and the supervisor that runs checks in child processes.
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "health/check.h"
#include "suite/slurm_node.h"
#include "suite/prepared_check.h"
#include "suite/suite_file.h"
#include "suite/supervisor.h"
#include "temp_dir.h"

namespace gcm::suite {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_suite(text, "s.toml");
  } catch (const SuiteError& e) {
    return e.what();
  }
  return "";
}

TEST(SuiteFile, ReadsProfilesEntriesAndDefaults) {
  SuiteFile s = parse_suite(R"(
[suite]
cluster = "c1"
[slurm]
scontrol = "/opt/x/scontrol"
reason_max_length = 100
[environment]
A = "1"
[prolog]
budget = 12
timeout = 3
[[prolog.checks]]
check = "check-storage disk-usage"
args = ["-v", "/", "--usage-critical-threshold", 90]
options = { inode_check = true }
[[prolog.checks]]
name = "tool"
command = ["/bin/true"]
timeout = 60
severity = "warn"
fail_on = "warning"
exit_codes = "zero-ok"
[healthcheck]
)",
                            "s.toml");
  EXPECT_EQ(s.cluster, "c1");
  EXPECT_EQ(s.scontrol, "/opt/x/scontrol");
  EXPECT_EQ(s.reason_max_length, 100u);
  ASSERT_EQ(s.environment.size(), 1u);
  const ProfileSpec& p = s.profiles.at(Profile::Prolog);
  EXPECT_EQ(p.budget_s, 12);
  EXPECT_FALSE(p.drain);
  ASSERT_EQ(p.checks.size(), 2u);
  EXPECT_EQ(p.checks[0].name, "check-storage disk-usage");
  EXPECT_EQ(p.checks[0].check, (std::vector<std::string>{"check-storage", "disk-usage"}));
  EXPECT_EQ(p.checks[0].args, (std::vector<std::string>{"-v", "/", "--usage-critical-threshold", "90"}));
  EXPECT_EQ(p.checks[0].timeout_s, 3);
  EXPECT_EQ(p.checks[0].severity, Severity::Drain);
  EXPECT_EQ(p.checks[1].timeout_s, 60) << "kept as written: the budget ends it (tested in Supervisor)";
  EXPECT_EQ(p.checks[1].severity, Severity::Warn);
  EXPECT_TRUE(p.checks[1].fail_on_warning);
  EXPECT_FALSE(p.checks[1].nagios_exit_codes);
  EXPECT_TRUE(s.profiles.at(Profile::HealthCheck).drain) << "health-check mode drains by default";
  EXPECT_FALSE(s.profiles.count(Profile::Epilog));
}

TEST(SuiteFile, ErrorsNameTheFileTheEntryTheLineAndWhatWasExpected) {
  EXPECT_EQ(error_of("[prolog]\nbugdet = 3\n"),
            "suite s.toml: [prolog] (line 2): unknown key 'bugdet' (expected one of: budget, checks, drain, timeout)");
  EXPECT_EQ(error_of("[prolog]\n[[prolog.checks]]\nname = \"x\"\n"),
            "suite s.toml: [[prolog.checks]] #1 (line 2): needs exactly one of 'check' (a built-in check, e.g. "
            "\"check-nvidia-smi\") or 'command' (an external tool's argv)");
  EXPECT_NE(error_of("[prolog]\n[[prolog.checks]]\ncheck = \"a\"\n[[prolog.checks]]\ncheck = \"a\"\n")
                .find("#2 (line 4): a second check named 'a'"),
            std::string::npos);
  EXPECT_NE(error_of("[epilog]\n[[epilog.checks]]\ncheck = \"a\"\nseverity = \"fatal\"\n")
                .find("severity 'fatal' is not one of drain, warn, ignore"),
            std::string::npos);
  EXPECT_NE(error_of("[epilog]\nbudget = 0\n").find("'budget' must be a number of seconds greater than 0"),
            std::string::npos);
  EXPECT_NE(error_of("[prolog]\n[[prolog.checks]]\ncommand = [\"/bin/x\"]\nargs = [\"y\"]\n")
                .find("'args' and 'options' belong to built-in checks"),
            std::string::npos);
  EXPECT_NE(error_of("[prolog\n").find("suite s.toml: line 1"), std::string::npos);
  EXPECT_NE(error_of("[sutie]\n").find("unknown key 'sutie'"), std::string::npos);
}

TEST(SuiteFile, TheShippedSuiteParsesAndNamesOnlyChecksOfTheReferenceTree) {
  SuiteFile s = load_suite(std::string(GCM_SOURCE_DIR) + "/deploy/etc/gcm/suite.toml");
  ASSERT_EQ(s.profiles.size(), 5u);
  EXPECT_FALSE(s.profiles.at(Profile::Prolog).drain);
  // The confirmation of a detector drain resolves as `gcm agent --drain` prepares it.
  EXPECT_EQ(prepare(s.profiles.at(Profile::Confirm)).size(), 1u);
  EXPECT_FALSE(s.profiles.at(Profile::Agent).drain);
  // The agent's checks resolve and their options parse, as `gcm agent` does at start.
  EXPECT_EQ(prepare(s.profiles.at(Profile::Agent)).size(), s.profiles.at(Profile::Agent).checks.size());
  EXPECT_TRUE(s.profiles.at(Profile::HealthCheck).drain);
  EXPECT_LT(s.profiles.at(Profile::HealthCheck).budget_s, 60) << "Slurm kills HealthCheckProgram at 60 s";
  // Every check is one of the reference's command tree (so it resolves once that check is in the build); the
  // ones this build has must resolve now (tests/integration/suite_test.cc runs them).
  const std::set<std::string> groups = {"check-nvidia-smi", "check-syslogs", "check-ib",     "check-storage",
                                        "check-dcgmi",      "cuda",          "agent-verdict"};
  for (const auto& [profile, spec] : s.profiles) {
    EXPECT_FALSE(spec.checks.empty()) << to_string(profile);
    for (const auto& e : spec.checks) {
      ASSERT_FALSE(e.check.empty()) << e.where;
      EXPECT_TRUE(groups.count(e.check[0])) << e.where << ": " << e.check[0];
    }
  }
}

TEST(DrainReason, PrefixFirstLineAndSlurmsLengthLimit) {
  EXPECT_EQ(drain_reason("ecc", "GPU 1: 3 errors\nGPU 2: 1 error", 255), "gcm: ecc: GPU 1: 3 errors");
  std::string r = drain_reason("ecc", std::string(400, 'x'), 64);
  EXPECT_EQ(r.size(), 64u);
  EXPECT_EQ(r.substr(0, 10), "gcm: ecc: ");
  EXPECT_EQ(r.substr(61), "...");
  // Never cut inside a UTF-8 sequence.
  std::string u = drain_reason("t", std::string(20, 'a') + "\xC3\xA9\xC3\xA9\xC3\xA9", 32);
  EXPECT_LE(u.size(), 32u);
  EXPECT_NE(static_cast<unsigned char>(u[u.size() - 4]), 0xC3) << u;
}

TEST(NodeState, ParsesScontrolShowNodeAndOwnership) {
  ScontrolRunner fake = [](const std::vector<std::string>& args) -> std::string {
    EXPECT_EQ(args, (std::vector<std::string>{"show", "node", "node3"}));
    return "NodeName=node3 Arch=x86_64 CoresPerSocket=4\n   CPUAlloc=0 CPUEfctv=4 CPUTot=4 CPULoad=0.00\n"
           "   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
           "   Reason=gcm: ecc: GPU 1: count=3 [root@2026-11-29T21:00:00]\n";
  };
  NodeState s = show_node(fake, "node3");
  EXPECT_EQ(s.state, "IDLE+DRAIN");
  EXPECT_TRUE(s.drain);
  EXPECT_EQ(s.reason, "gcm: ecc: GPU 1: count=3");
  EXPECT_EQ(reason_owner(s, {}), Ownership::Gcm);
  s.reason = "Prolog error";
  EXPECT_EQ(reason_owner(s, {}), Ownership::Other);
  EXPECT_EQ(reason_owner(s, {"Prolog error"}), Ownership::Gcm);
  s.reason = "";
  EXPECT_EQ(reason_owner(s, {}), Ownership::None);
  ScontrolRunner unknown = [](const std::vector<std::string>&) -> std::string { return "Node node9 not found\n"; };
  EXPECT_THROW(show_node(unknown, "node9"), std::runtime_error);
}

TEST(NodeName, SlurmdNodenameThenShortHostname) {
  ::setenv("SLURMD_NODENAME", "node7", 1);
  EXPECT_EQ(slurm_node_name(), "node7");
  ::unsetenv("SLURMD_NODENAME");
  std::string h = slurm_node_name();
  EXPECT_FALSE(h.empty());
  EXPECT_EQ(h.find('.'), std::string::npos);
}

using gcm::testing::TempDir;

TEST(LocateSlurm, ConfiguredPathsWinAndClusterNameIsReadLocally) {
  EXPECT_EQ(locate_scontrol(std::string("/x/scontrol")), "/x/scontrol");
  TempDir dir;
  std::string conf = dir.file("slurm.conf");
  std::ofstream(conf) << "# c\nSlurmctldHost=localhost\nclustername = mycluster # comment\n";
  EXPECT_EQ(cluster_name_of(conf), "mycluster");
  EXPECT_EQ(locate_slurm_conf(conf), conf);
}

TEST(Supervisor, RunsEveryJobKillsOverrunsAndKeepsResults) {
  std::vector<Job> jobs;
  jobs.push_back({"ok", 10, [](int fd) {
                    (void)!::write(fd, "r1\n", 3);
                    std::printf("hello\n");
                    std::fflush(stdout);
                    ::_exit(0);
                  }});
  jobs.push_back({"hang", 0.3, [](int) {
                    for (;;) ::pause();
                  }});
  jobs.push_back({"crash", 10, [](int) { std::raise(SIGABRT); }});
  jobs.push_back({"over budget", 100, [](int) {
                    for (;;) ::pause();
                  }});
  auto out = run_jobs(jobs, 1.0);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(out[0].exited);
  EXPECT_EQ(out[0].exit_code, 0);
  EXPECT_EQ(out[0].results, "r1\n");
  EXPECT_EQ(out[0].output, "hello\n");
  EXPECT_TRUE(out[1].timed_out);
  EXPECT_FALSE(out[1].budget_exhausted);
  EXPECT_EQ(out[2].term_signal, SIGABRT);
  EXPECT_TRUE(out[3].budget_exhausted);
  EXPECT_FALSE(out[3].timed_out);
}

// The deadlines below leave the forked job time to start its tool and write the pid on a loaded machine: the kill
// at the deadline comes with no grace.
TEST(Supervisor, AKilledCheckTakesTheToolsItStartedWithIt) {
  TempDir dir;
  std::string pidfile = dir.file("grandchild.pid");
  std::vector<Job> jobs;
  jobs.push_back({"starts a tool", 2, [pidfile](int) {
                    ::execl("/bin/sh", "sh", "-c", ("sleep 600 & echo $! > " + pidfile + "; wait").c_str(),
                            static_cast<char*>(nullptr));
                    ::_exit(127);
                  }});
  auto out = run_jobs(jobs, 5);
  EXPECT_TRUE(out[0].timed_out);
  std::ifstream in(pidfile);
  pid_t grandchild = 0;
  ASSERT_TRUE(in >> grandchild);
  // SIGKILL went to the whole process group; the grandchild is gone (or a zombie awaiting init) within moments.
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string s;
    gone = !std::getline(stat, s) || s.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "pid " << grandchild;
}

// Whether `pid` is gone (or a zombie waiting for init), waiting up to 2 s.
bool process_gone(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string s;
    if (!std::getline(stat, s) || s.find(") Z") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(Supervisor, AKilledCheckTakesToolsInProcessGroupsOfTheirOwnWithIt) {
  // core/subprocess puts each tool in a process group of its own; the kill at the deadline must reach it anyway.
  TempDir dir;
  std::string pidfile = dir.file("tool.pid");
  std::vector<Job> jobs;
  jobs.push_back({"runs a tool", 2, [pidfile](int) {
                    pid_t tool = ::fork();
                    if (tool == 0) {
                      ::setpgid(0, 0);
                      ::execl("/bin/sleep", "sleep", "600", static_cast<char*>(nullptr));
                      ::_exit(127);
                    }
                    std::ofstream(pidfile) << tool << "\n";
                    for (;;) ::pause();
                  }});
  auto out = run_jobs(jobs, 5);
  EXPECT_TRUE(out[0].timed_out);
  std::ifstream in(pidfile);
  pid_t tool = 0;
  ASSERT_TRUE(in >> tool);
  EXPECT_TRUE(process_gone(tool)) << "pid " << tool;
}

void write_str(int fd, const std::string& s) { (void)!::write(fd, s.data(), s.size()); }

TEST(SupervisorGroup, PartsKeepTheirOwnDeadlinesAndAnOverrunInterruptsTheUnfinished) {
  GroupJob g;
  g.name = "g";
  g.timeouts_s = {5, 1.0, 5};  // part 1's deadline leaves the quick part time to finish on a loaded machine
  g.child_main = [](const std::vector<PartFds>& parts) {
    std::thread quick([f = parts[0]] {
      write_str(f.out_fd, "log of quick\n");
      write_str(f.result_fd, "done\n");
      ::close(f.out_fd);
      ::close(f.result_fd);
    });
    std::thread slow([f = parts[2]] {
      std::this_thread::sleep_for(std::chrono::seconds(3));
      write_str(f.result_fd, "late\n");
      ::close(f.result_fd);
    });
    write_str(parts[1].result_fd, "started\n");  // part 1 hangs on the main thread
    for (;;) ::pause();
  };
  auto t0 = std::chrono::steady_clock::now();
  RunResult r = run_all({}, {g}, 10);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.groups.size(), 1u);
  const auto& parts = r.groups[0];
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].results, "done\n");
  EXPECT_EQ(parts[0].output, "log of quick\n");
  EXPECT_FALSE(parts[0].timed_out);
  EXPECT_FALSE(parts[0].interrupted);
  EXPECT_TRUE(parts[1].timed_out);
  EXPECT_EQ(parts[1].results, "started\n");
  EXPECT_FALSE(parts[2].timed_out);
  EXPECT_TRUE(parts[2].interrupted);
  EXPECT_EQ(parts[2].results, "");
  EXPECT_LT(took, 2.5) << "the group was not killed at part 1's deadline";
}

TEST(SupervisorGroup, AProcessThatDiesEndsEveryPartStillRunningAndKeepsWhatFinished) {
  GroupJob g;
  g.name = "g";
  g.timeouts_s = {5, 5};
  g.child_main = [](const std::vector<PartFds>& parts) {
    write_str(parts[0].result_fd, "{\"rc\": 0}\n");
    ::close(parts[0].result_fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::raise(SIGABRT);
  };
  std::vector<Job> jobs;
  jobs.push_back({"plain", 5, [](int fd) {
                    write_str(fd, "plain\n");
                    ::_exit(0);
                  }});
  RunResult r = run_all(jobs, {g}, 10);
  ASSERT_EQ(r.jobs.size(), 1u);
  EXPECT_EQ(r.jobs[0].results, "plain\n");
  EXPECT_EQ(r.jobs[0].exit_code, 0);
  const auto& parts = r.groups[0];
  EXPECT_EQ(parts[0].results, "{\"rc\": 0}\n");
  for (const auto& p : parts) {
    EXPECT_TRUE(p.exited);
    EXPECT_EQ(p.term_signal, SIGABRT);
    EXPECT_FALSE(p.timed_out);
    EXPECT_FALSE(p.interrupted);
  }
}

TEST(SupervisorGroup, TheBudgetEndsAGroupAsItEndsAJob) {
  GroupJob g;
  g.name = "g";
  g.timeouts_s = {100, 100};
  g.child_main = [](const std::vector<PartFds>&) {
    for (;;) ::pause();
  };
  RunResult r = run_all({}, {g}, 0.3);
  for (const auto& p : r.groups[0]) {
    EXPECT_TRUE(p.budget_exhausted);
    EXPECT_FALSE(p.timed_out);
  }
}

}  // namespace
}  // namespace gcm::suite

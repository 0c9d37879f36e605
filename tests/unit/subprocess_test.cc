#include "core/subprocess.h"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

namespace gcm {
namespace {

using namespace std::chrono_literals;

TEST(Subprocess, CapturesOutputAndExitCode) {
  auto r = run_command({{"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.ok());
}

TEST(Subprocess, ArgvIsNeverInterpretedByAShell) {
  auto r = run_command({{"/bin/echo", "a b", "$(id)", ";", "|"}});
  EXPECT_EQ(r.out, "a b $(id) ; |\n");
}

TEST(Subprocess, MissingExecutableNamesItAndPath) {
  try {
    run_command({{"definitely-not-a-command-xyz", "x"}});
    FAIL();
  } catch (const CommandError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("definitely-not-a-command-xyz"), std::string::npos);
    EXPECT_NE(msg.find("PATH="), std::string::npos);
  }
}

TEST(Subprocess, TimeoutKillsTheWholeProcessGroupIncludingGrandchildren) {
  char tmpl[] = "/tmp/gcm-subprocess-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string pidfile = std::string(tmpl) + "/grandchild.pid";
  CommandSpec spec;
  // The grandchild holds stdout open and would keep a naive reader waiting forever.
  spec.argv = {"/bin/sh", "-c", "sleep 30 & echo $! > " + pidfile + "; wait"};
  spec.timeout = 300ms;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_command(spec);
  auto elapsed = std::chrono::steady_clock::now() - t0;
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(elapsed, 10s);  // bounded by the timeout, not by the 30 s sleep
  std::ifstream in(pidfile);
  pid_t grandchild = 0;
  in >> grandchild;
  ASSERT_GT(grandchild, 0);
  // The grandchild is gone (or a zombie about to be reaped by init).
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::ifstream st("/proc/" + std::to_string(grandchild) + "/stat");
    std::string line;
    gone = !st || !std::getline(st, line) || line.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(gone);
  std::string msg = describe_failure(spec, r);
  EXPECT_NE(msg.find("timed out"), std::string::npos);
  EXPECT_NE(msg.find("/bin/sh -c"), std::string::npos);
}

TEST(Subprocess, StreamsHugeOutputLineByLineWithoutHoldingIt) {
  CommandSpec spec;
  // ~100 MB of output: 1.5 M lines of 64 bytes.
  spec.argv = {"/bin/sh", "-c", "yes 012345678901234567890123456789012345678901234567890123456789012 | head -n 1500000"};
  size_t lines = 0, bytes = 0;
  size_t n = stream_command_lines(spec, [&](std::string_view line) {
    ++lines;
    bytes += line.size();
  });
  EXPECT_EQ(n, 1500000u);
  EXPECT_EQ(lines, 1500000u);
  EXPECT_EQ(bytes, 1500000u * 63);
}

TEST(Subprocess, StreamingReportsFailureWithStderrAndKeepsLinesAlreadySeen) {
  CommandSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo one; echo two; echo boom >&2; exit 1"};
  std::vector<std::string> seen;
  try {
    stream_command_lines(spec, [&](std::string_view l) { seen.emplace_back(l); });
    FAIL();
  } catch (const CommandError& e) {
    EXPECT_NE(std::string(e.what()).find("exited with status 1: boom"), std::string::npos) << e.what();
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"one", "two"}));
}

TEST(Subprocess, FinalLineWithoutNewlineIsDelivered) {
  std::vector<std::string> seen;
  stream_command_lines({{"/usr/bin/printf", "a\nb"}}, [&](std::string_view l) { seen.emplace_back(l); });
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b"}));
}

TEST(Subprocess, StdinAndBoundedCapture) {
  CommandSpec spec;
  spec.argv = {"/bin/cat"};
  spec.stdin_data = std::string(200000, 'x');
  spec.max_stdout = 1000;
  auto r = run_command(spec);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_TRUE(r.stdout_truncated);
}

TEST(Subprocess, ExtraEnvironment) {
  CommandSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo $GCM_TEST_VAR"};
  spec.extra_env = {"GCM_TEST_VAR=a=b"};
  EXPECT_EQ(run_command(spec).out, "a=b\n");
}

TEST(Subprocess, ABareKeyRemovesAVariableFromTheChildOnly) {
  ::setenv("GCM_TEST_UNSET", "x", 1);
  CommandSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo ${GCM_TEST_UNSET-unset}"};
  spec.extra_env = {"GCM_TEST_UNSET"};
  EXPECT_EQ(run_command(spec).out, "unset\n");
  EXPECT_STREQ(std::getenv("GCM_TEST_UNSET"), "x");
  ::unsetenv("GCM_TEST_UNSET");
}

}  // namespace
}  // namespace gcm

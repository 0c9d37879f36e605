#include "core/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "temp_dir.h"

namespace gcm {
namespace {

using namespace std::chrono_literals;
using gcm::testing::TempDir;

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
  TempDir dir;
  std::string pidfile = dir.file("grandchild.pid");
  CommandSpec spec;
  // The grandchild holds stdout open and would keep a naive reader waiting forever.
  spec.argv = {"/bin/sh", "-c", "sleep 30 & echo $! > " + pidfile + "; wait"};
  // Long enough for sh to start and write the pid on a loaded machine (the kill comes with no grace).
  spec.timeout = 2s;
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
  spec.argv = {"/bin/sh", "-c",
               "yes 012345678901234567890123456789012345678901234567890123456789012 | head -n 1500000"};
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

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Subprocess, StreamsCanComeFromAndGoToTheCallersFiles) {
  TempDir dir;
  std::ofstream(dir.file("in")) << "from a file\n";
  // O_CLOEXEC, as the callers' files are: the child must still get them as its streams.
  int in = ::open(dir.file("in").c_str(), O_RDONLY | O_CLOEXEC);
  int out = ::open(dir.file("out").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  int err = ::open(dir.file("err").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  CommandSpec spec;
  spec.argv = {"/bin/sh", "-c", "cat; echo oops >&2; exit 4"};
  spec.stdin_from = in;
  spec.stdout_to = out;
  spec.stderr_to = err;
  auto r = run_command(spec);
  for (int fd : {in, out, err}) ::close(fd);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.out, "");  // not captured: it went to the file
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(read_all(dir.file("out")), "from a file\n");
  EXPECT_EQ(read_all(dir.file("err")), "oops\n");
}

TEST(Subprocess, StreamingHandsOverChunksAndReturnsTheStatus) {
  std::string seen;
  auto r = run_command_streaming({{"/bin/sh", "-c", "echo one; echo two; exit 5"}},
                                 [&](std::string_view chunk) { seen += chunk; });
  EXPECT_EQ(seen, "one\ntwo\n");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_FALSE(r.timed_out);
}

// /proc/<pid>/stat of the command itself: its pid (field 1) and process group (field 5).
std::pair<long, long> pid_and_group_of_child(const CommandSpec& base) {
  CommandSpec spec = base;
  spec.argv = {"/bin/sh", "-c", "exec cat /proc/self/stat"};
  auto r = run_command(spec);
  std::string rest = r.out.substr(r.out.rfind(')') + 2);  // after "pid (comm) "
  long pid = std::stol(r.out);
  char state = 0;
  long ppid = 0, pgrp = 0;
  std::sscanf(rest.c_str(), "%c %ld %ld", &state, &ppid, &pgrp);
  return {pid, pgrp};
}

TEST(Subprocess, AGroupOfItsOwnOrTheCallersGroup) {
  CommandSpec spec;
  auto [pid, group] = pid_and_group_of_child(spec);
  EXPECT_EQ(group, pid);
  spec.own_process_group = false;
  auto [pid2, group2] = pid_and_group_of_child(spec);
  EXPECT_NE(group2, pid2);
  EXPECT_EQ(group2, static_cast<long>(::getpgrp()));
}

TEST(Subprocess, AGraceLetsTheCommandCleanUpAfterSigterm) {
  TempDir dir;
  CommandSpec spec;
  spec.argv = {"/bin/sh", "-c", "trap 'echo cleaned > " + dir.file("bye") + "; exit 0' TERM; sleep 30 & wait"};
  spec.stdout_to = ::open("/dev/null", O_WRONLY | O_CLOEXEC);  // nothing piped: the wait for the exit times out
  spec.timeout = 1500ms;  // long enough for sh to install its trap on a loaded machine
  spec.term_grace = 5s;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_command(spec);
  ::close(*spec.stdout_to);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);  // it exited on SIGTERM, before the grace ran out
  EXPECT_EQ(read_all(dir.file("bye")), "cleaned\n");
}

TEST(Subprocess, AStopEndsTheCommandWhetherItsOutputIsPipedOrNot) {
  for (bool piped : {true, false}) {
    auto t0 = std::chrono::steady_clock::now();
    CommandSpec spec;
    spec.argv = {"/bin/sh", "-c", "exec sleep 30"};
    if (!piped) spec.stdout_to = spec.stderr_to = 2;
    spec.stop_requested = [&] { return std::chrono::steady_clock::now() - t0 > 200ms; };
    auto r = run_command(spec);
    EXPECT_TRUE(r.stopped) << piped;
    EXPECT_FALSE(r.timed_out) << piped;
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.term_signal, SIGKILL);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s) << piped;
    EXPECT_NE(describe_failure(spec, r).find("stopped"), std::string::npos);
  }
}

}  // namespace
}  // namespace gcm

namespace gcm {
namespace {

TEST(SubprocessLines, ALongLineOfOutputIsSkippedAndReported) {
  CommandSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo a; head -c 3000000 /dev/zero | tr '\\0' x; echo; echo b"};
  spec.max_line = 1u << 20;
  std::vector<std::pair<size_t, size_t>> longs;
  spec.on_long_line = [&](size_t n, size_t bytes) { longs.emplace_back(n, bytes); };
  std::vector<std::string> got;
  size_t n = stream_command_lines(spec, [&](std::string_view l) { got.emplace_back(l); });
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(longs, (std::vector<std::pair<size_t, size_t>>{{2, 3000000}}));
}

}  // namespace
}  // namespace gcm

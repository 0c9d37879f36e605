// Shared helpers of the integration tests: temp dirs, free ports, running the gcm binary, polling with a deadline,
// reading the records a command printed.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/subprocess.h"
#include "refused_port.h"

namespace gcm::testing {

// The temp dirs this test process made, removed when its tests end: ctest runs each test in its own process, so a
// passing test leaves nothing under /tmp, and a failing one keeps its dirs (named on stderr) for a look at its logs.
// At the end of the whole process rather than of each test, because a suite's SetUpTestSuite may make a dir its
// later tests still use.
class TempDirsOfThisProcess : public ::testing::Environment {
 public:
  static TempDirsOfThisProcess& instance() {
    static TempDirsOfThisProcess* made = [] {
      auto* environment = new TempDirsOfThisProcess;  // owned by gtest from here on
      ::testing::AddGlobalTestEnvironment(environment);
      return environment;
    }();
    return *made;
  }
  void add(const std::string& dir) {
    std::lock_guard<std::mutex> lock(mu_);
    dirs_.push_back(dir);
  }
  void TearDown() override {
    std::lock_guard<std::mutex> lock(mu_);
    const bool passed = ::testing::UnitTest::GetInstance()->Passed();
    for (const auto& dir : dirs_) {
      std::error_code ignored;  // a dir a test removed itself is gone already
      if (passed)
        std::filesystem::remove_all(dir, ignored);
      else
        std::fprintf(stderr, "kept for a look: %s\n", dir.c_str());
    }
    dirs_.clear();
  }

 private:
  std::mutex mu_;
  std::vector<std::string> dirs_;
};
// Registered before RUN_ALL_TESTS (global environments added later are never torn down).
inline TempDirsOfThisProcess& temp_dirs_of_this_process = TempDirsOfThisProcess::instance();

inline std::string temp_dir(const std::string& name) {
  std::string tmpl = "/tmp/gcm-" + name + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
  TempDirsOfThisProcess::instance().add(tmpl);
  return tmpl;
}

// The ports free_port() hands out: from 20000 up to just below the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range, from 32768 by default), where no outgoing connection is ever given a
// source port. A port from bind(0) lies inside that range, so a sender's connects could take it: a connect to a port
// nothing listens on yet (a receiver being restarted after an outage) can be given that very port as its source and
// connect to itself (a TCP self-connect), and the receiver then cannot bind (seen once in CI: "the OTLP receiver did
// not start"). Where the ephemeral range leaves too little room below it, the ports above it.
inline std::pair<int, int> test_port_range() {
  int low = 32768, high = 60999;
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int lo = 0, hi = 0;
  if (in >> lo >> hi && lo > 0 && hi >= lo) low = lo, high = hi;
  if (low - 1 - 20000 >= 1000) return {20000, low - 1};
  if (65535 - (high + 1) >= 1000) return {high + 1, 65535};
  throw std::runtime_error("ip_local_port_range leaves no room for test ports below or above it");
}

// A TCP port nothing is bound to (checked on every address), for a server the test starts. Never the same port
// twice in one process, and each process starts at its own pid-derived place in the range, so that the integration
// tests ctest runs in parallel processes rarely reach for the same port at once.
inline int free_port() {
  static std::mutex mu;
  static const std::pair<int, int> range = test_port_range();
  const int span = range.second - range.first + 1;
  static int offset = static_cast<int>((static_cast<int64_t>(::getpid()) * 7919) % span);
  std::lock_guard<std::mutex> lock(mu);
  for (int tries = 0; tries < span; ++tries) {
    int port = range.first + offset;
    offset = (offset + 1) % span;
    int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<uint16_t>(port));
    bool ok = ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(s);
    if (ok) return port;
  }
  throw std::runtime_error("no free TCP port in " + std::to_string(range.first) + "-" + std::to_string(range.second));
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string gcm_binary() { return GCM_BINARY; }

inline CommandResult run_gcm(std::vector<std::string> args, std::chrono::seconds timeout = std::chrono::seconds(60),
                             std::vector<std::string> env = {}) {
  CommandSpec spec;
  spec.argv = {gcm_binary()};
  for (auto& a : args) spec.argv.push_back(a);
  spec.timeout = timeout;
  spec.extra_env = std::move(env);
  return run_command(spec);
}

// Polls until pred() is true or the deadline passes (real services need a moment; never a blind sleep).
inline bool eventually(const std::function<bool()>& pred, std::chrono::seconds deadline) {
  auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return pred();
}

// True when the Slurm testbed (tests/testbed/) answers: SLURM_CONF is set and `scontrol ping` succeeds.
inline bool testbed_up() {
  if (!std::getenv("SLURM_CONF")) return false;
  CommandSpec s;
  s.argv = {"scontrol", "ping"};
  s.timeout = std::chrono::seconds(10);
  try {
    return run_command(s).ok();
  } catch (const CommandError&) {
    return false;
  }
}

// Runs a command (30 s timeout) and returns its stdout; throws naming the command when it fails.
inline std::string run_ok(std::vector<std::string> argv) {
  CommandSpec s;
  s.argv = std::move(argv);
  s.timeout = std::chrono::seconds(30);
  auto r = run_command(s);
  if (!r.ok()) throw std::runtime_error(describe_failure(s, r));
  return r.out;
}

// `scontrol reconfigure`, then waits (30 s at most) until every node has registered with the controller again.
// From Slurm 23.11 a reconfigure restarts slurmctld, and until a node registers its base state is UNKNOWN, with its
// flags kept (UNKNOWN+DRAIN): RESUME then fails with "Invalid node state specified". Throws naming the nodes that
// had not registered.
inline void reconfigure_testbed() {
  run_ok({"scontrol", "reconfigure"});
  std::string unregistered;
  auto all_registered = [&] {
    CommandSpec s;
    s.argv = {"scontrol", "-o", "show", "nodes"};
    s.timeout = std::chrono::seconds(10);
    CommandResult r;
    try {
      r = run_command(s);
    } catch (const CommandError&) {
      return false;
    }
    if (!r.ok()) return false;  // the controller is still restarting
    unregistered.clear();
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.find(" State=UNKNOWN") == std::string::npos) continue;
      size_t name = line.find("NodeName=") + 9;
      unregistered += " " + line.substr(name, line.find(' ', name) - name);
    }
    return unregistered.empty();
  };
  if (!eventually(all_registered, std::chrono::seconds(30)))
    throw std::runtime_error("after scontrol reconfigure these nodes had not registered in 30 s:" +
                             (unregistered.empty() ? std::string(" (the controller did not answer)") : unregistered));
}

// The Slurm release the testbed runs, as (major, minor), from `sinfo -V` ("slurm 24.11.7", "slurm-wlm 22.05.8").
inline std::pair<int, int> testbed_release() {
  std::string v = run_ok({"sinfo", "-V"});
  int major = 0, minor = 0;
  size_t blank = v.find(' ');
  if (blank == std::string::npos || std::sscanf(v.c_str() + blank + 1, "%d.%d", &major, &minor) != 2)
    throw std::runtime_error("sinfo -V: not a Slurm version: " + v);
  return {major, minor};
}

// One field of `scontrol -o show node NODE` on the testbed ("" when absent); Reason without Slurm's " [user@time]".
inline std::string slurm_node_field(const std::string& node, const std::string& key) {
  std::string out = run_ok({"scontrol", "-o", "show", "node", node});
  size_t p = out.find(" " + key + "=");
  if (p == std::string::npos) return "";
  p += key.size() + 2;
  size_t end = key == "Reason" ? out.find(" [", p) : out.find(' ', p);
  return out.substr(p, end == std::string::npos ? std::string::npos : end - p);
}

// The testbed's hooks.conf (Prolog=, Epilog=: slurm.conf includes it) for one test. install() writes the test's hooks
// and waits until the controller has them; the destructor, however the test ends, puts back what was there, cancels
// the test's jobs (by name) and resumes the nodes it names that are still drained, so that the tests that follow
// find the testbed as it was.
class TestbedHooks {
 public:
  explicit TestbedHooks(std::string job_name, std::vector<std::string> resume = {})
      : path_(std::filesystem::path(std::getenv("SLURM_CONF")).parent_path().string() + "/hooks.conf"),
        job_name_(std::move(job_name)),
        resume_(std::move(resume)) {
    std::ifstream in(path_);
    saved_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  TestbedHooks(const TestbedHooks&) = delete;
  TestbedHooks& operator=(const TestbedHooks&) = delete;
  ~TestbedHooks() {
    try {
      std::ofstream(path_) << saved_;
      reconfigure_testbed();
      run_ok({"scancel", "--name=" + job_name_});
      for (const auto& n : resume_)
        if (slurm_node_field(n, "State").find("DRAIN") != std::string::npos)
          run_ok({"scontrol", "update", "NodeName=" + n, "State=RESUME"});
    } catch (const std::exception& e) {
      ADD_FAILURE() << "restoring the testbed: " << e.what();
    }
  }
  // Throws when the controller does not show the prolog in its configuration within 20 s.
  void install(const std::string& prolog, const std::string& epilog) const {
    std::ofstream(path_) << "Prolog=" << prolog << "\nEpilog=" << epilog << "\n";
    reconfigure_testbed();
    if (!eventually([&] { return run_ok({"scontrol", "show", "config"}).find(prolog) != std::string::npos; },
                    std::chrono::seconds(20)))
      throw std::runtime_error("the testbed's controller did not take Prolog=" + prolog + " within 20 s");
  }

 private:
  std::string path_, saved_, job_name_;
  std::vector<std::string> resume_;
};

// One field of the job's allocation line in `sacct -X -n -P --noconvert` on the testbed, without trailing blanks.
inline std::string sacct_field(const std::string& job, const std::string& field) {
  std::string out = run_ok({"sacct", "-X", "-n", "-P", "--noconvert", "-j", job, "--format=" + field});
  out = out.substr(0, out.find('\n'));
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Every record of the JSON-array lines a command printed with `--sink stdout`; other lines (log lines with
// "[time] [level]" included) are skipped.
inline std::vector<nlohmann::json> records_of(const std::string& out) {
  std::vector<nlohmann::json> records;
  std::istringstream in(out);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (!line.starts_with("[{")) continue;
    nlohmann::json chunk;
    try {
      chunk = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      // A sink's line that is not one JSON list means another write landed inside it: show what landed where.
      size_t from = e.byte > 200 ? e.byte - 200 : 0;
      throw std::runtime_error("output line " + std::to_string(number) + " (" + std::to_string(line.size()) +
                               " bytes) is not one JSON list: " + e.what() + "; around it: " + line.substr(from, 400));
    }
    for (auto& r : chunk) records.push_back(r);
  }
  return records;
}

// The records that have `key` (a collector's records of one type, out of records_of's mixed list).
inline std::vector<nlohmann::json> with_key(const std::vector<nlohmann::json>& records, const std::string& key) {
  std::vector<nlohmann::json> out;
  for (const auto& r : records)
    if (r.contains(key)) out.push_back(r);
  return out;
}

// An executable /bin/sh script at path: a fake command for PATH.
inline void write_script(const std::string& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
}

}  // namespace gcm::testing

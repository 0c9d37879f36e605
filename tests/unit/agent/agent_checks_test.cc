// The agent's checks: a round starts at the interval or at once when asked, each window takes the results that
// came in, and the last result of each check is kept and published.
#include "agent/agent_checks.h"

#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/logging.h"
#include "temp_dir.h"

namespace gcm::agent {
namespace {

// Collects until `check` has a result or 10 s pass.
bool collect_until(AgentChecks& checks, WindowExport& out, AgentCounters& counters, const std::string& check) {
  for (int i = 0; i < 1000 && !checks.last().count(check); ++i) {
    checks.collect(out, counters);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return checks.last().count(check) > 0;
}

TEST(AgentChecks, ResultsAreKeptByNameAndPublished) {
  gcm::testing::TempDir dir;
  std::ofstream(dir.file("suite.toml"))
      << "[suite]\ncluster = \"c\"\n[agent]\ntimeout = 5\n"
      << "[[agent.checks]]\nname = \"disk\"\ncommand = [\"/bin/sh\", \"-c\", \"echo 'CRITICAL: /scratch is full'; "
         "exit 2\"]\n"
      << "[[agent.checks]]\nname = \"ok\"\ncommand = [\"/bin/true\"]\n";
  AgentCounters counters;
  WindowExport out(counters, stderr_logger("agent-checks-test"));
  AgentChecks checks(stderr_logger("agent-checks-test"));
  checks.load(dir.file("suite.toml"), 3600);
  checks.maybe_start(false, 3600);
  ASSERT_TRUE(collect_until(checks, out, counters, "disk"));
  ASSERT_TRUE(collect_until(checks, out, counters, "ok"));
  EXPECT_EQ(checks.last().at("disk").code, 2);
  EXPECT_NE(checks.last().at("disk").message.find("/scratch is full"), std::string::npos);
  EXPECT_EQ(checks.last().at("ok").code, 0);
  EXPECT_TRUE(counters.source("checks").up);
  out.render_page();
  EXPECT_NE(out.page().find("gcm_health_check_status{check=\"disk\""), std::string::npos) << out.page();
}

TEST(AgentChecks, ARoundStartsAgainOnlyAtTheIntervalOrWhenAsked) {
  gcm::testing::TempDir dir;
  std::ofstream(dir.file("suite.toml")) << "[suite]\ncluster = \"c\"\n[agent]\n"
                                        << "[[agent.checks]]\nname = \"count\"\ncommand = [\"/bin/sh\", \"-c\", "
                                        << "\"echo x >> " << dir.file("runs") << "\"]\n";
  AgentCounters counters;
  WindowExport out(counters, stderr_logger("agent-checks-test"));
  AgentChecks checks(stderr_logger("agent-checks-test"));
  checks.load(dir.file("suite.toml"), 3600);
  auto runs = [&] {
    std::ifstream in(dir.file("runs"));
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  };
  auto wait_runs = [&](int n) {
    for (int i = 0; i < 1000 && runs() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    checks.collect(out, counters);
    return runs();
  };
  checks.maybe_start(false, 3600);
  EXPECT_EQ(wait_runs(1), 1);
  checks.maybe_start(false, 3600);  // the interval has not passed
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(wait_runs(1), 1);
  checks.maybe_start(true, 3600);  // SIGUSR1
  EXPECT_EQ(wait_runs(2), 2);
}

TEST(AgentChecks, NoSuiteFileNoChecks) {
  AgentCounters counters;
  WindowExport out(counters, stderr_logger("agent-checks-test"));
  AgentChecks checks(stderr_logger("agent-checks-test"));
  checks.load("/nonexistent/suite.toml", 60);
  checks.maybe_start(true, 60);
  checks.collect(out, counters);
  EXPECT_TRUE(checks.last().empty());
}

}  // namespace
}  // namespace gcm::agent

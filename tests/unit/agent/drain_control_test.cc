// The agent's drain control against a stand-in scontrol (a shell script that answers `show node` from a file and
// records every update): a drain that slurmctld did not take is sent again after the retry delay, once.
#include "agent/drain_control.h"

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/logging.h"

namespace gcm::agent {
namespace {

struct FakeScontrol {
  std::string dir;
  FakeScontrol() {
    char tmpl[] = "/tmp/gcm-drain-control-XXXXXX";
    dir = ::mkdtemp(tmpl);
    std::ofstream(dir + "/scontrol") << "#!/bin/sh\n"
                                        "if [ \"$1\" = show ]; then\n"
                                        "  [ -f "
                                     << dir
                                     << "/down ] && { echo 'slurm_load_node error' >&2; exit 1; }\n"
                                        "  cat "
                                     << dir
                                     << "/nodes; exit 0\n"
                                        "fi\n"
                                        "echo \"$@\" >> "
                                     << dir << "/updates\n";
    ::chmod((dir + "/scontrol").c_str(), 0755);
    std::ofstream(dir + "/nodes")
        << "NodeName=node5 Arch=x86_64\n   State=MIXED ThreadsPerCore=1\n   Partitions=gpu \n\n"
        << "NodeName=node6 Arch=x86_64\n   State=IDLE ThreadsPerCore=1\n   Partitions=gpu \n\n";
  }
  ~FakeScontrol() { std::filesystem::remove_all(dir); }
  std::string updates() const {
    std::ifstream in(dir + "/updates");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

std::vector<detector::GpuVerdict> one_failed_gpu() {
  detector::GpuVerdict v;
  v.gpu = 1;
  v.state = detector::HealthState::Failed;
  v.reasons.add(detector::Reason::Lost);
  v.evidence = "lost";
  return {v};
}

// Calls on_window until `done` or 5 s pass, as the agent does once per window.
template <typename F>
bool windows_until(DrainControl& c, const std::vector<detector::GpuVerdict>& v, F done) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < until) {
    c.on_window(v, true);
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(DrainControl, ADrainSlurmctldDidNotTakeIsSentAgainAfterTheRetryDelay) {
  FakeScontrol s;
  std::ofstream(s.dir + "/down") << "";
  DrainControlOptions o;
  o.drain = true;
  o.limits.settle_seconds = 0;  // the stand-in scontrol has no other agents to wait for
  o.node = "node5";
  o.retry_s = 0.2;
  o.scontrol = s.dir + "/scontrol";
  DrainControl c(o, stderr_logger("drain-control-test"));
  auto v = one_failed_gpu();
  ASSERT_TRUE(windows_until(c, v, [&] { return c.counts()["failed"] == 1; }));
  EXPECT_EQ(s.updates(), "");
  std::filesystem::remove(s.dir + "/down");
  ASSERT_TRUE(windows_until(c, v, [&] { return c.counts()["drained"] == 1; })) << c.counts().size();
  EXPECT_EQ(s.updates(), "update NodeName=node5 State=DRAIN Reason=gcm: detector: GPU 1 failed: lost\n");
  // Drained once: later windows of the same episode send nothing more.
  for (int i = 0; i < 20; ++i) {
    c.on_window(v, true);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(c.counts()["failed"], 1u);
  EXPECT_EQ(c.counts()["drained"], 1u);
}

TEST(DrainControl, ReportOnlySendsNothingAndSaysSoOncePerEpisode) {
  FakeScontrol s;
  DrainControlOptions o;
  o.node = "node5";
  o.scontrol = s.dir + "/scontrol";
  DrainControl c(o, stderr_logger("drain-control-test"));
  auto v = one_failed_gpu();
  ASSERT_TRUE(windows_until(c, v, [&] { return c.counts()["would_drain"] == 1; }));
  for (int i = 0; i < 10; ++i) {
    c.on_window(v, true);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(c.counts()["would_drain"], 1u);
  EXPECT_EQ(s.updates(), "");
}

}  // namespace
}  // namespace gcm::agent

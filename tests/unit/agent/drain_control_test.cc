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
#include "kube_api_server.h"

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

// --kubernetes-condition without --drain, on a Kubernetes node without Slurm: the bad episode marks the node (no
// scontrol is run), the idle node runs the [confirm] checks, and their pass clears the mark.
TEST(DrainControl, KubernetesMarkThenConfirmationClearsIt) {
  gcm::testing::KubeApiServer api;
  api.add_node(gcm::testing::KubeApiServer::node_object("gpu-node-1"));
  for (int i = 2; i <= 4; ++i) api.add_node(gcm::testing::KubeApiServer::node_object("gpu-node-" + std::to_string(i)));
  api.connection();  // the token file
  std::ofstream(api.dir().file("kubeconfig"))
      << "current-context: t\nclusters: [{name: c, cluster: {server: '" << api.server_url()
      << "', certificate-authority: '" << api.ca_file() << "'}}]\n"
      << "contexts: [{name: t, context: {cluster: c, user: u}}]\n"
      << "users: [{name: u, user: {token: " << gcm::testing::KubeApiServer::kToken << "}}]\n";
  std::ofstream(api.dir().file("suite.toml")) << "[suite]\ncluster = \"c\"\n[confirm]\n[[confirm.checks]]\n"
                                              << "name = \"passes\"\ncommand = [\"/bin/true\"]\n"
                                              << "exit_codes = \"zero-ok\"\n";
  DrainControlOptions o;
  o.kubernetes = true;
  o.kubernetes_node.node = "gpu-node-1";
  o.kubernetes_node.taint = true;
  o.kubernetes_api.kubeconfig = api.dir().file("kubeconfig");
  o.limits.max_partition_fraction = 0.5;
  o.limits.settle_seconds = 0.1;
  o.scontrol = "/nonexistent/scontrol";  // Slurm must not be asked
  o.suite_path = api.dir().file("suite.toml");
  o.poll_interval_s = 0.05;
  DrainControl c(o, stderr_logger("drain-control-test"));
  auto bad = one_failed_gpu();
  ASSERT_TRUE(windows_until(c, bad, [&] { return c.counts()["kubernetes_marked"] == 1; })) << c.counts().size();
  auto node = api.node("gpu-node-1");
  bool marked = false;
  for (const auto& cond : node["status"]["conditions"])
    if (cond["type"] == "GcmGpuHealthy")
      marked = cond["status"] == "False" && cond["message"] == "gcm: detector: GPU 1 failed: lost";
  EXPECT_TRUE(marked) << node.dump();
  EXPECT_EQ(node["spec"]["taints"].at(0)["key"], "gcm.dev/gpu-unhealthy");
  EXPECT_EQ(c.counts().count("failed"), 0u);  // no scontrol was run

  // The GPU is fine again and no pod holds it: the confirmation passes and the mark goes.
  std::vector<detector::GpuVerdict> good(1);
  good[0].gpu = 1;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (c.counts()["kubernetes_cleared"] == 0 && std::chrono::steady_clock::now() < until) {
    c.on_window(good, false);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(c.counts()["kubernetes_cleared"], 1u);
  EXPECT_EQ(c.counts()["confirm_passed"], 1u);
  node = api.node("gpu-node-1");
  for (const auto& cond : node["status"]["conditions"])
    if (cond["type"] == "GcmGpuHealthy") {
      EXPECT_EQ(cond["status"], "True");
    }
  EXPECT_TRUE(node["spec"]["taints"].empty()) << node.dump();
}

}  // namespace
}  // namespace gcm::agent

// The drain's options as the agent builds them: the Slurm node from --slurm-node, the suite file's scontrol and
// reason length where it loads, the Kubernetes node from $NODE_NAME where --kubelet-node-name is not given.
#include "agent/agent_drain.h"

#include <stdlib.h>

#include <fstream>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace gcm::agent {
namespace {

TEST(AgentDrain, OptionsComeFromTheAgentsAndTheSuiteFile) {
  gcm::testing::TempDir dir;
  std::ofstream(dir.file("suite.toml")) << "[slurm]\nscontrol = \"/opt/slurm/bin/scontrol\"\nreason_max_length = 40\n";
  AgentOptions opts;
  opts.drain = true;
  opts.slurm_node = "gpu017";
  opts.suite = dir.file("suite.toml");
  opts.kubernetes_condition = true;
  ::setenv("NODE_NAME", "k8s-gpu017", 1);
  DrainControlOptions d = drain_control_options(opts);
  ::unsetenv("NODE_NAME");
  EXPECT_TRUE(d.drain);
  EXPECT_EQ(d.node, "gpu017");
  EXPECT_EQ(d.suite_path, opts.suite);
  EXPECT_EQ(d.scontrol, std::optional<std::string>("/opt/slurm/bin/scontrol"));
  EXPECT_EQ(d.limits.reason_max_length, 40u);
  EXPECT_TRUE(d.kubernetes);
  EXPECT_EQ(d.kubernetes_node.node, "k8s-gpu017");
}

TEST(AgentDrain, WithoutASuiteFileScontrolIsLookedFor) {
  AgentOptions opts;
  opts.slurm_node = "gpu001";
  opts.suite = "/nonexistent/suite.toml";
  opts.kubelet.node_name = "given";
  ::setenv("NODE_NAME", "ignored", 1);
  DrainControlOptions d = drain_control_options(opts);
  ::unsetenv("NODE_NAME");
  EXPECT_FALSE(d.drain);
  EXPECT_FALSE(d.scontrol.has_value());
  EXPECT_EQ(d.kubernetes_node.node, "given");
}

}  // namespace
}  // namespace gcm::agent

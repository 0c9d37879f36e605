// gcm scontrol_topology on canned outputs: the testbed's recorded tree topology, a block topology written from Slurm's
// documentation (tests/fixtures/slurm-docs/), the 10 000-node cap and bad lines.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/json.h"
#include "scheduler_fixtures.h"

namespace gcm::scheduler {
namespace {

using gcm::testing::Collect;
using gcm::testing::slurp;
using namespace gcm::scheduler::fixtures;

TEST(ScontrolTopology, Recorded2205Tree) {
  slurm::CannedSlurmClient c;
  c.set_output("scontrol_topology", slurp(k2205 + "scontrol-show-topo.txt"));
  Collect out;
  ASSERT_EQ(collect_scontrol_topology(c, params(), out), 3u);
  EXPECT_EQ(c.queries()[0].argv, (std::vector<std::string>{"scontrol", "show", "topo"}));
  const Record& leaf = out.records[1];  // SwitchName=leaf2 Level=0 LinkSpeed=100 Nodes=node[5-8]
  EXPECT_EQ(leaf.at("cluster").as_string(), "testbed");
  EXPECT_EQ(leaf.at("SwitchName").as_string(), "leaf2");
  EXPECT_EQ(leaf.at("Level").as_int(), 0);
  EXPECT_EQ(leaf.at("LinkSpeed").as_int(), 100);
  EXPECT_EQ(leaf.at("Nodes").as_string(), "node5,node6,node7,node8");
  EXPECT_EQ(leaf.at("node_count").as_int(), 4);
  EXPECT_TRUE(leaf.at("Switches").is_null());
  EXPECT_TRUE(leaf.at("BlockName").is_null());
  const Record& spine = out.records[2];
  EXPECT_EQ(spine.at("Level").as_int(), 1);
  EXPECT_EQ(spine.at("Switches").as_string(), "leaf[1-2]");
  EXPECT_EQ(spine.at("node_count").as_int(), 8);
  EXPECT_EQ(spine.at("Nodes").as_string(), "node1,node2,node3,node4,node5,node6,node7,node8");
}

TEST(ScontrolTopology, BlockFromTheDocumentation) {
  slurm::CannedSlurmClient c;
  c.set_output("scontrol_topology", slurp(kDocs + "scontrol-show-topo-block.txt"));
  Collect out;
  ASSERT_EQ(collect_scontrol_topology(c, params(), out), 3u);
  const Record& b = out.records[2];  // BlockName=rack3 BlockIndex=2 Nodes=gb300-[145-180] BlockSize=72
  EXPECT_EQ(b.at("BlockName").as_string(), "rack3");
  EXPECT_EQ(b.at("BlockIndex").as_int(), 2);
  EXPECT_EQ(b.at("BlockSize").as_int(), 72);
  EXPECT_EQ(b.at("node_count").as_int(), 36);
  const std::string& nodes = b.at("Nodes").as_string();
  EXPECT_EQ(nodes.substr(0, 20), "gb300-145,gb300-146,");
  EXPECT_EQ(nodes.substr(nodes.size() - 10), ",gb300-180");
  EXPECT_EQ(std::count(nodes.begin(), nodes.end(), ','), 35);
  EXPECT_TRUE(b.at("SwitchName").is_null());
  EXPECT_TRUE(b.at("Level").is_null());
}

TEST(ScontrolTopology, NodesCappedAtTenThousandWithTheFullCount) {
  slurm::CannedSlurmClient c;
  c.set_output("scontrol_topology", "SwitchName=spine Level=2 LinkSpeed=1 Nodes=n[00001-12000] Switches=s[1-10]\n");
  Collect out;
  collect_scontrol_topology(c, params(), out);
  const std::string& nodes = out.records.at(0).at("Nodes").as_string();
  EXPECT_EQ(out.records[0].at("node_count").as_int(), 12000);
  EXPECT_EQ(nodes.substr(0, 12), "n00001,n0000");
  EXPECT_EQ(nodes.substr(nodes.size() - 11), ",n10000,...");
  EXPECT_EQ(std::count(nodes.begin(), nodes.end(), ','), 10000);  // 10 000 names and "..."
}

TEST(ScontrolTopology, BadLinesNameTheLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"SwitchName=s1 Level=0 Nodes=n1\nSwitchName=s2 Level=zero Nodes=n2\n", "Level 'zero'"},
      {"SwitchName=s1 Level=0 Nodes=n1\nSwitchName=s2 garbage\n", "token 'garbage'"},
      {"SwitchName=s1 Level=0 Nodes=n1\nLevel=0 Nodes=n2\n", "neither SwitchName= nor BlockName="},
      {"SwitchName=s1 Level=0 Nodes=n1\nSwitchName=s2 Nodes=n[3-\n", "n[3-"},
  };
  for (const auto& [text, why] : cases) {
    slurm::CannedSlurmClient c;
    c.set_output("scontrol_topology", text);
    Collect out;
    try {
      collect_scontrol_topology(c, params(), out);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const slurm::SlurmError& e) {
      EXPECT_EQ(e.line(), 2u) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("scontrol show topo"), std::string::npos) << e.what();
    }
    EXPECT_EQ(out.records.size(), 1u);
  }
}

}  // namespace
}  // namespace gcm::scheduler

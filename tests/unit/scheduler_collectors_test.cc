// gcm sprio, gcm sshare and gcm scontrol_topology on canned outputs: the 22.05 recordings of the testbed
// (tests/fixtures/slurm-22.05/), a topology/block output written from Slurm's documentation
// (tests/fixtures/slurm-docs/), and bad lines. Expected values are read off the fixture files.
#include "fixture_records.h"
#include "collectors/scheduler_collectors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/json.h"

namespace gcm::scheduler {
namespace {

const std::string k2205 = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-22.05/";
const std::string kDocs = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-docs/";

using gcm::testing::slurp;

using gcm::testing::Collect;

constexpr int64_t kNow = 1796141600;  // 2026-12-01T16:13:20Z: 08:13 in Los Angeles, same date

Params params(bool heterogeneous = false) { return {"testbed", heterogeneous, kNow, std::chrono::seconds(5)}; }

const Value& member(const Value& object, std::string_view key) {
  for (const auto& m : object.as_object())
    if (m.key == key) return m.value;
  throw std::out_of_range(std::string(key));
}

std::vector<std::string> keys(const Value& object) {
  std::vector<std::string> out;
  for (const auto& m : object.as_object()) out.push_back(m.key);
  return out;
}

// --- sprio -------------------------------------------------------------------------------------------------------

TEST(Sprio, ExactArgvWithGcmsCodesInOrder) {
  EXPECT_EQ(
      sprio_query(std::chrono::seconds(1)).argv,
      (std::vector<std::string>{"sprio", "-h", "--sort=r,-y", "-o", "%i|%r|%u|%o|%Y|%S|%a|%A|%F|%J|%P|%n|%Q|%N"}));
  EXPECT_EQ(kSprioPayload->data_type, DataType::Log);
}

TEST(Sprio, Recorded2205RowsLackAccountAndQosName) {
  slurm::CannedSlurmClient c;
  c.set_output("sprio", slurp(k2205 + "sprio.txt"));
  Collect out;
  ASSERT_EQ(collect_sprio(c, params(), out), 2u);
  const Record& r = out.records[0];  // 58|debug|carol|100|0|0.0000000|0|0|0|100|0|0
  EXPECT_EQ(r.at("ds").as_string(), "2026-12-01");
  EXPECT_EQ(r.at("collection_unixtime").as_int(), kNow);
  EXPECT_EQ(r.at("cluster").as_string(), "testbed");
  EXPECT_EQ(r.at("derived_cluster").as_string(), "testbed");
  const Value& s = r.at("sprio");
  EXPECT_EQ(keys(s),
            (std::vector<std::string>{"JOBID", "PARTITION", "USER", "ACCOUNT", "PRIORITY", "SITE", "AGE", "ASSOC",
                                      "FAIRSHARE", "JOBSIZE", "PARTITION_PRIO", "QOSNAME", "QOS", "NICE"}));
  EXPECT_DOUBLE_EQ(member(s, "JOBID").as_double(), 58);
  EXPECT_EQ(member(s, "PARTITION").as_string(), "debug");
  EXPECT_EQ(member(s, "USER").as_string(), "carol");
  EXPECT_TRUE(member(s, "ACCOUNT").is_null());  // GCM's records put PRIORITY's 100 here
  EXPECT_DOUBLE_EQ(member(s, "PRIORITY").as_double(), 100);
  EXPECT_DOUBLE_EQ(member(s, "SITE").as_double(), 0);
  EXPECT_DOUBLE_EQ(member(s, "AGE").as_double(), 0);
  EXPECT_DOUBLE_EQ(member(s, "PARTITION_PRIO").as_double(), 100);
  EXPECT_TRUE(member(s, "QOSNAME").is_null());
  EXPECT_DOUBLE_EQ(member(s, "QOS").as_double(), 0);
  EXPECT_DOUBLE_EQ(member(s, "NICE").as_double(), 0);
  EXPECT_EQ(member(out.records[1].at("sprio"), "PARTITION").as_string(), "gpu");
  // Floats as Python writes them.
  EXPECT_NE(to_json(r, false, JsonStyle::Python).find(R"("JOBID": 58.0)"), std::string::npos);
}

TEST(Sprio, FullRowOfANewerSlurmAndDerivedClusterPerPartition) {
  slurm::CannedSlurmClient c;
  c.set_output("sprio", "4107|gpu_h100|alice|ml|15120|0|120.5|0|5000|0|10000|high|0|N/A\n");
  Collect out;
  collect_sprio(c, params(true), out);
  ASSERT_EQ(out.records.size(), 1u);
  const Value& s = out.records[0].at("sprio");
  EXPECT_EQ(out.records[0].at("derived_cluster").as_string(), "testbed.gpu_h100");
  EXPECT_EQ(member(s, "ACCOUNT").as_string(), "ml");
  EXPECT_EQ(member(s, "QOSNAME").as_string(), "high");
  EXPECT_DOUBLE_EQ(member(s, "AGE").as_double(), 120.5);
  EXPECT_DOUBLE_EQ(member(s, "FAIRSHARE").as_double(), 5000);
  EXPECT_DOUBLE_EQ(member(s, "PARTITION_PRIO").as_double(), 10000);
  EXPECT_TRUE(member(s, "NICE").is_null());  // not a number: null, as maybe_float
}

TEST(Sprio, WrongFieldCountNamesCommandAndLine) {
  slurm::CannedSlurmClient c;
  c.set_output("sprio", "1|gpu|alice|ml|1|0|0|0|0|0|0|normal|0|0\n2|gpu|bob|1|0\n");
  Collect out;
  try {
    collect_sprio(c, params(), out);
    FAIL() << "expected SlurmError";
  } catch (const slurm::SlurmError& e) {
    EXPECT_EQ(e.line(), 2u);
    EXPECT_NE(std::string(e.what()).find("sprio -h --sort=r,-y"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("got 5"), std::string::npos) << e.what();
  }
  EXPECT_EQ(out.records.size(), 1u);  // the good row before it was written
}

// --- sshare ------------------------------------------------------------------------------------------------------

TEST(Sshare, Recorded2205TreeWithAbsentColumnsNull) {
  slurm::CannedSlurmClient c;
  c.set_output("sshare", slurp(k2205 + "sshare.txt"));
  Collect out;
  ASSERT_EQ(collect_sshare(c, params(true), out), 9u);
  EXPECT_EQ(c.queries()[0].argv, (std::vector<std::string>{"sshare", "-a", "-P"}));
  const Record& alice = out.records[5];                           //   research|alice|1|0.500000|7083|0.517495|0.200000
  EXPECT_EQ(alice.at("derived_cluster").as_string(), "testbed");  // no partition in sshare
  const Value& s = alice.at("sshare");
  EXPECT_EQ(keys(s), sshare_keys());
  EXPECT_EQ(member(s, "Account").as_string(), "  research");
  EXPECT_EQ(member(s, "User").as_string(), "alice");
  EXPECT_EQ(member(s, "RawShares").as_string(), "1");
  EXPECT_EQ(member(s, "NormShares").as_string(), "0.500000");
  EXPECT_EQ(member(s, "RawUsage").as_string(), "7083");
  EXPECT_EQ(member(s, "EffectvUsage").as_string(), "0.517495");
  EXPECT_EQ(member(s, "FairShare").as_string(), "0.200000");
  for (const char* absent : {"NormUsage", "GrpTRESMins", "TRESRunMins"}) EXPECT_TRUE(member(s, absent).is_null());
  const Value& root = out.records[0].at("sshare");  // root|||0.000000|14693|1.000000|
  EXPECT_EQ(member(root, "User").as_string(), "");
  EXPECT_EQ(member(root, "FairShare").as_string(), "");
}

TEST(Sshare, LongFormatColumnsAndBadRows) {
  slurm::CannedSlurmClient c;
  c.set_output("sshare",
               "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|GrpTRESMins|"
               "TRESRunMins\n ml|bob|1|0.5|6408|0.4|0.95|0.4|1.2|cpu=100|cpu=0,mem=0\n");
  Collect out;
  collect_sshare(c, params(), out);
  const Value& s = out.records.at(0).at("sshare");
  EXPECT_EQ(member(s, "NormUsage").as_string(), "0.4");
  EXPECT_EQ(member(s, "GrpTRESMins").as_string(), "cpu=100");
  EXPECT_EQ(member(s, "TRESRunMins").as_string(), "cpu=0,mem=0");
  EXPECT_EQ(s.as_object().size(), 10u);  // LevelFS is not an SshareRow key

  slurm::CannedSlurmClient bad;
  bad.set_output("sshare", "Account|User|RawShares\nroot||1\nroot|1\n");
  Collect o2;
  try {
    collect_sshare(bad, params(), o2);
    FAIL() << "expected SlurmError";
  } catch (const slurm::SlurmError& e) {
    EXPECT_EQ(e.line(), 3u) << e.what();
    EXPECT_NE(std::string(e.what()).find("sshare -a -P"), std::string::npos) << e.what();
  }
  slurm::CannedSlurmClient no_header;
  no_header.set_output("sshare", "root|x|1\nroot|y|1\n");  // the first line is taken for the header
  EXPECT_THROW(collect_sshare(no_header, params(), o2), slurm::SlurmError);
}

// --- scontrol_topology -------------------------------------------------------------------------------------------

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

// gcm sshare on canned outputs: the testbed's 22.05 recording of `sshare -a -P`, the long format and bad rows.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/json.h"
#include "scheduler_fixtures.h"

namespace gcm::scheduler {
namespace {

using gcm::testing::Collect;
using gcm::testing::slurp;
using namespace gcm::scheduler::fixtures;

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

}  // namespace
}  // namespace gcm::scheduler

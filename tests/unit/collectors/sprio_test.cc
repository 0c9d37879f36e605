// gcm sprio on canned outputs: the exact argv, the testbed's 22.05 recording (tests/fixtures/slurm-22.05/), a row of a
// newer Slurm and bad rows. Expected values are read off the fixture files.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/json.h"
#include "scheduler_fixtures.h"

namespace gcm::scheduler {
namespace {

using gcm::testing::Collect;
using gcm::testing::slurp;
using namespace gcm::scheduler::fixtures;

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

}  // namespace
}  // namespace gcm::scheduler

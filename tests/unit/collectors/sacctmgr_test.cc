// sacctmgr_qos and sacctmgr_user on the reference corpus (gcm-reference.md §7.1: the expected JSON files) and on the
// Slurm 22.05 outputs recorded from the testbed; short rows are errors naming the line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "fixture_records.h"
#include "collectors/sacctmgr.h"

namespace gcm::sacctmgr {
namespace {

const std::string kRef = std::string(GCM_SOURCE_DIR) + "/../shared/fixtures/gcm/";
const std::string k2205 = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-22.05/";

using gcm::testing::slurp;

using gcm::testing::Collect;

nlohmann::json to_json(const Value& v) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& m : v.as_object()) j[m.key] = m.value.as_string();
  return j;
}

// Keys in order, as printed.
std::vector<std::string> keys(const Value& v) {
  std::vector<std::string> out;
  for (const auto& m : v.as_object()) out.push_back(m.key);
  return out;
}

bool have_zoneinfo() { return std::filesystem::exists("/usr/share/zoneinfo/America/Los_Angeles"); }

constexpr int64_t kNow = 1795978616;  // 2026-11-29T18:56:56Z = 10:56:56 in Los Angeles

TEST(SacctmgrQos, ReferenceCorpus) {
  if (!std::filesystem::exists(kRef + "sample-sacctmgr-qos.txt"))
    GTEST_SKIP() << "reference fixtures not present under " << kRef;
  if (!have_zoneinfo()) GTEST_SKIP() << "no zoneinfo";
  slurm::CannedSlurmClient c;
  c.set_output("sacctmgr_qos", slurp(kRef + "sample-sacctmgr-qos.txt"));
  Collect out;
  collect_qos(c, {"fair_cluster", false, kNow}, out);
  auto expected = nlohmann::json::parse(slurp(kRef + "sample-sacctmgr-qos-expected.json"));
  ASSERT_EQ(out.records.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(to_json(out.records[i].at("sacctmgr_qos")), expected[i]) << i;
    EXPECT_EQ(out.records[i].at("ds").as_string(), "2026-11-29");
    EXPECT_EQ(out.records[i].at("cluster").as_string(), "fair_cluster");
    EXPECT_EQ(out.records[i].at("derived_cluster").as_string(), "fair_cluster");
  }
  EXPECT_EQ(keys(out.records[0].at("sacctmgr_qos")).front(), "Name");
  EXPECT_EQ(keys(out.records[0].at("sacctmgr_qos")).back(), "MinTRES");
  ASSERT_EQ(c.queries().size(), 1u);
  EXPECT_EQ(c.queries()[0].argv, (std::vector<std::string>{"sacctmgr", "show", "qos", "-P"}));
}

TEST(SacctmgrQos, DerivedClusterFromQosName) {
  if (!have_zoneinfo()) GTEST_SKIP() << "no zoneinfo";
  slurm::CannedSlurmClient c;
  c.set_output("sacctmgr_qos", "Name|Priority\nh100_high|10\nnormal|0\n");
  Collect out;
  collect_qos(c, {"c", true, kNow}, out);
  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_EQ(out.records[0].at("derived_cluster").as_string(), "c.h100");
  EXPECT_EQ(out.records[1].at("derived_cluster").as_string(), "c.normal");
}

TEST(SacctmgrQos, Testbed2205) {
  if (!have_zoneinfo()) GTEST_SKIP() << "no zoneinfo";
  slurm::CannedSlurmClient c;
  c.set_output("sacctmgr_qos", slurp(k2205 + "sacctmgr-qos.txt"));
  Collect out;
  collect_qos(c, {"testbed", false, kNow}, out);
  ASSERT_EQ(out.records.size(), 3u);
  std::vector<std::string> names;
  for (const auto& r : out.records) names.push_back(r.at("sacctmgr_qos").find("Name")->as_string());
  EXPECT_EQ(names, (std::vector<std::string>{"normal", "high", "limited"}));
  EXPECT_EQ(out.records[1].at("sacctmgr_qos").find("Priority")->as_string(), "100");
  EXPECT_EQ(out.records[2].at("sacctmgr_qos").find("MaxJobsPU")->as_string(), "1");
  EXPECT_EQ(out.records[2].at("sacctmgr_qos").find("MaxWall")->as_string(), "02:00:00");
}

TEST(SacctmgrQos, ShortRowIsAnErrorNamingTheLineAfterTheGoodRows) {
  if (!have_zoneinfo()) GTEST_SKIP() << "no zoneinfo";
  slurm::CannedSlurmClient c;
  c.set_output("sacctmgr_qos", "Name|Priority|Flags\na|1|x\nb|2\nc|3|z\n");
  Collect out;
  try {
    collect_qos(c, {"c", false, kNow}, out);
    FAIL() << "expected SlurmError";
  } catch (const slurm::SlurmError& e) {
    EXPECT_EQ(e.line(), 3u);
    EXPECT_NE(std::string(e.what()).find("sacctmgr show qos -P"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2 fields, the header has 3"), std::string::npos) << e.what();
  }
  ASSERT_EQ(out.records.size(), 2u);  // a and c
  EXPECT_EQ(out.records[1].at("sacctmgr_qos").find("Name")->as_string(), "c");
}

// A row longer than the header was cut to the header by the parser and published: it is reported like a short one.
TEST(SacctmgrQos, LongRowIsAnErrorNamingTheLineNotCutToTheHeader) {
  if (!have_zoneinfo()) GTEST_SKIP() << "no zoneinfo";
  slurm::CannedSlurmClient c;
  c.set_output("sacctmgr_qos", "Name|Priority|Flags\na|1|x\nb|2|y|extra\nc|3|z\n");
  Collect out;
  try {
    collect_qos(c, {"c", false, kNow}, out);
    FAIL() << "a long row was published: " << out.records.size() << " records";
  } catch (const slurm::SlurmError& e) {
    EXPECT_EQ(e.line(), 3u);
    EXPECT_NE(std::string(e.what()).find("4 fields, the header has 3"), std::string::npos) << e.what();
  }
  ASSERT_EQ(out.records.size(), 2u);  // a and c
  EXPECT_EQ(out.records[1].at("sacctmgr_qos").find("Name")->as_string(), "c");
}

TEST(SacctmgrUser, LongAssociationRowIsAnError) {
  if (!have_zoneinfo()) GTEST_SKIP() << "no zoneinfo";
  slurm::CannedSlurmClient c;
  c.set_output("sacctmgr_users", "alice\n");
  c.set_output("sacctmgr_user_assoc",
               "User|Def Acct|Account|Def QOS|QOS\nalice|research|research|normal|normal\n"
               "alice|ml|ml|normal|normal|high\n");
  Collect out;
  try {
    collect_users(c, {"c", false, kNow}, out);
    FAIL() << "a long row was published: " << out.records.size() << " records";
  } catch (const slurm::SlurmError& e) {
    EXPECT_EQ(e.line(), 3u);
    EXPECT_NE(std::string(e.what()).find("6 fields, the header has 5"), std::string::npos) << e.what();
  }
  EXPECT_EQ(out.records.size(), 1u);
}

TEST(SacctmgrUser, ReferenceCorpus) {
  if (!std::filesystem::exists(kRef + "sample-sacctmgr-user-info.txt"))
    GTEST_SKIP() << "reference fixtures not present under " << kRef;
  if (!have_zoneinfo()) GTEST_SKIP() << "no zoneinfo";
  slurm::CannedSlurmClient c;
  c.set_output("sacctmgr_users", slurp(kRef + "sample-sacctmgr-user.txt"));
  c.set_output("sacctmgr_user_assoc", slurp(kRef + "sample-sacctmgr-user-info.txt"));
  Collect out;
  collect_users(c, {"fair_cluster", false, kNow}, out);
  auto expected = nlohmann::json::parse(slurp(kRef + "sample-sacctmgr-user-expected.json"));
  ASSERT_EQ(out.records.size(), 4u);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(to_json(out.records[i].at("sacctmgr_user")), expected[i]) << i;
    EXPECT_EQ(out.records[i].at("derived_cluster").as_string(), "fair_cluster");
  }
  ASSERT_EQ(c.queries().size(), 2u);
  EXPECT_EQ(c.queries()[1].argv, (std::vector<std::string>{"sacctmgr", "show", "user", "test_user1", "withassoc",
                                                           "format=User,DefaultAccount,Account,DefaultQOS,QOS", "-P"}));
}

// Answers the per-user query from the recorded file of that user.
struct PerUser : slurm::CannedSlurmClient {
  size_t fetch_lines(const slurm::SlurmQuery& q, const slurm::LineHandler& h) override {
    if (q.name == "sacctmgr_user_assoc") set_output(q.name, slurp(k2205 + "sacctmgr-user-" + q.argv[3] + ".txt"));
    return CannedSlurmClient::fetch_lines(q, h);
  }
};

// GCM zips sacctmgr's header with each row, so on Slurm 22.05 its records carry "Def Acct" and "Def QOS" (the
// headers that version prints for DefaultAccount and DefaultQOS); tables built on GCM's records expect them.
TEST(SacctmgrUser, Testbed2205RecordsKeepSacctmgrsHeadersAsGcmDoes) {
  if (!have_zoneinfo()) GTEST_SKIP() << "no zoneinfo";
  PerUser c;
  c.set_output("sacctmgr_users", slurp(k2205 + "sacctmgr-users.txt"));
  Collect out;
  collect_users(c, {"testbed", false, kNow}, out);
  std::set<std::string> seen;
  for (const auto& r : out.records) {
    const Value& u = r.at("sacctmgr_user");
    EXPECT_EQ(keys(u), (std::vector<std::string>{"User", "Def Acct", "Account", "Def QOS", "QOS"}));
    seen.insert(u.find("User")->as_string() + ":" + u.find("Account")->as_string());
  }
  EXPECT_TRUE(seen.count("alice:research")) << out.records.size();
  EXPECT_TRUE(seen.count("alice:ml"));
  EXPECT_TRUE(seen.count("root:root"));
  std::set<std::string> users;
  for (const auto& s : seen) users.insert(s.substr(0, s.find(':')));
  EXPECT_EQ(users, (std::set<std::string>{"alice", "bob", "carol", "root"}));
  EXPECT_EQ(out.records[0].at("sacctmgr_user").find("Def Acct")->as_string(), "research");
  EXPECT_EQ(out.records[0].at("sacctmgr_user").find("Def QOS")->as_string(), "normal");
  EXPECT_EQ(out.records[0].at("sacctmgr_user").find("DefaultAccount"), nullptr) << "no renamed key next to GCM's";
}

TEST(SacctmgrUser, FailingUserListFailsTheRound) {
  slurm::CannedSlurmClient c;
  c.set_failure("sacctmgr_users", "sacctmgr: error: Problem talking to the database: Connection refused");
  Collect out;
  EXPECT_THROW(collect_users(c, {"c", false, kNow}, out), slurm::SlurmError);
  EXPECT_TRUE(out.records.empty());
}

TEST(Sacctmgr, PacificDate) {
  if (!have_zoneinfo()) GTEST_SKIP() << "no zoneinfo";
  EXPECT_EQ(pacific_date(1795978616), "2026-11-29");
  EXPECT_EQ(pacific_date(1796000000), "2026-11-29");  // 00:53 UTC on the 30th is still the 29th in LA
}

}  // namespace
}  // namespace gcm::sacctmgr

// slurmrestd's fair-share tree (GET /slurm/vX/shares) written as `sshare -a -P`: golden against sshare's text recorded
// at the same moment on the testbed (every API version with /shares of Slurm 24.11 and 25.11; 22.05's v0.0.38 has
// none), and against answers written from Slurm's documentation for a tree the testbed does not have
// (tests/fixtures/slurmrestd-shares/: Fairshare=parent, unset shares); the sshare collector's records from both
// compared field by field.
#include "slurm/rest_render_sshare.h"

#include <gtest/gtest.h>

#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "recorded_slurm.h"
#include "scheduler_fixtures.h"
#include "text_file.h"

namespace gcm::slurm {
namespace {

using gcm::testing::read_file;
using nlohmann::json;

const std::string kDir = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurmrestd-shares/";

// The sshare collector's records from `output` given as the answer of its query.
std::vector<Record> sshare_records(const std::string& output) {
  CannedSlurmClient c;
  c.set_output("sshare", output);
  gcm::testing::Collect out;
  scheduler::collect_sshare(c, scheduler::fixtures::params(), out);
  return out.records;
}

class RestRenderSshare : public ::testing::TestWithParam<const char*> {};

TEST_P(RestRenderSshare, TheTreeIsSsharesTextAndGivesTheSameRecords) {
  std::string cli = read_file(kDir + "sshare-a-P.txt");
  std::string rest = render_sshare(read_file(kDir + GetParam()));
  EXPECT_EQ(rest, cli);

  std::vector<Record> from_cli = sshare_records(cli), from_rest = sshare_records(rest);
  ASSERT_EQ(from_cli.size(), 12u) << "the testbed's nine associations and the three of scratch";
  ASSERT_EQ(from_rest.size(), from_cli.size());
  for (size_t i = 0; i < from_cli.size(); ++i) {
    const Schema& schema = *from_cli[i].schema;
    for (size_t f = 0; f < schema.fields.size(); ++f) {
      if (schema.fields[f].name != "sshare") {
        EXPECT_EQ(from_rest[i][f], from_cli[i][f]) << "record " << i << " " << schema.fields[f].name;
        continue;
      }
      for (const std::string& key : scheduler::sshare_keys())
        EXPECT_EQ(scheduler::fixtures::member(from_rest[i][f], key), scheduler::fixtures::member(from_cli[i][f], key))
            << "record " << i << " sshare." << key;
    }
  }
  // What the comparison stands on: the tree's indentation, "parent" shares and unset values as sshare prints them.
  const Value& bob = from_rest[8].at("sshare");
  EXPECT_EQ(scheduler::fixtures::member(bob, "Account").as_string(), "   ml");
  EXPECT_EQ(scheduler::fixtures::member(bob, "User").as_string(), "bob");
  const Value& dave = from_rest[10].at("sshare");
  EXPECT_EQ(scheduler::fixtures::member(dave, "RawShares").as_string(), "parent");
  const Value& eve = from_rest[11].at("sshare");
  for (const char* unset : {"RawShares", "NormShares", "RawUsage"})
    EXPECT_EQ(scheduler::fixtures::member(eve, unset).as_string(), "") << unset;
  EXPECT_EQ(scheduler::fixtures::member(from_rest[0].at("sshare"), "FairShare").as_string(), "")
      << "Fair Tree gives accounts no factor";
}

INSTANTIATE_TEST_SUITE_P(PlainAndNoValNumbers, RestRenderSshare,
                         ::testing::Values("shares-v0.0.39.json", "shares-v0.0.44.json"));

// Every recorded API version with /shares: the records from slurmrestd's tree are sshare's, field by field.
class RestRenderSshareRecorded : public ::testing::TestWithParam<gcm::testing::RecordedApi> {};

TEST_P(RestRenderSshareRecorded, TheTreeGivesSsharesRecords) {
  const gcm::testing::RecordedApi& p = GetParam();
  std::string cli = read_file(p.cli("sshare.txt"));
  std::string rest = render_sshare(read_file(p.rest("shares.json")));
  std::vector<Record> from_cli = sshare_records(cli), from_rest = sshare_records(rest);
  ASSERT_GE(from_cli.size(), 9u) << "root, the accounts research, ml, infra and their users";
  ASSERT_EQ(from_rest.size(), from_cli.size()) << rest;
  for (size_t i = 0; i < from_cli.size(); ++i) {
    const Schema& schema = *from_cli[i].schema;
    for (size_t f = 0; f < schema.fields.size(); ++f) {
      if (schema.fields[f].name != "sshare") {
        EXPECT_EQ(from_rest[i][f], from_cli[i][f]) << "record " << i << " " << schema.fields[f].name;
        continue;
      }
      for (const std::string& key : scheduler::sshare_keys())
        EXPECT_EQ(scheduler::fixtures::member(from_rest[i][f], key), scheduler::fixtures::member(from_cli[i][f], key))
            << "record " << i << " sshare." << key;
    }
  }
  EXPECT_EQ(rest, cli) << "the text itself";
}

std::vector<gcm::testing::RecordedApi> apis_with_shares() {
  std::vector<gcm::testing::RecordedApi> out;
  for (const auto& a : gcm::testing::recorded_apis())
    if (a.minor() >= 39) out.push_back(a);
  return out;
}
INSTANTIATE_TEST_SUITE_P(Recorded, RestRenderSshareRecorded, ::testing::ValuesIn(apis_with_shares()),
                         gcm::testing::RecordedApiName());

// The plain v0.0.39 answer with one change made by `edit`, rendered; the error's text when it throws, else "".
std::string error_of(const std::function<void(json&)>& edit) {
  json doc = json::parse(read_file(kDir + "shares-v0.0.39.json"));
  edit(doc);
  try {
    render_sshare(doc.dump());
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(RestRenderSshareErrors, NameTheAssociationAndTheKey) {
  auto entry = [](json& doc, size_t i) -> json& { return doc["shares"]["shares"][i]; };
  EXPECT_EQ(error_of([](json&) {}), "") << "the fixture itself renders";
  EXPECT_EQ(error_of([&](json& d) { entry(d, 5)["shares"] = "one"; }),
            "slurmrestd shares: shares[5] (alice): shares is not an integer");
  EXPECT_EQ(error_of([&](json& d) { entry(d, 8)["effective_usage"] = "high"; }),
            "slurmrestd shares: shares[8] (bob): effective_usage is not a number");
  EXPECT_EQ(error_of([&](json& d) {
              entry(d, 1)["fairshare"]["factor"] = json{{"set", "yes"}, {"number", 1}};
            }),
            "slurmrestd shares: shares[1] (root): fairshare.factor has a set or infinite that is not a boolean");
  EXPECT_EQ(error_of([&](json& d) { entry(d, 3).erase("usage"); }),
            "slurmrestd shares: shares[3] (carol): no \"usage\"")
      << "a key every version has: renamed, not unset";
  EXPECT_EQ(error_of([&](json& d) { entry(d, 2)["type"] = json::array({"WCKEY"}); }),
            "slurmrestd shares: shares[2] (infra): type is neither USER nor ASSOCIATION");
  EXPECT_EQ(error_of([&](json& d) { entry(d, 4)["name"] = "re|search"; }),
            "slurmrestd shares: shares[4] (re|search): name holds a '|' or a line break");
  EXPECT_EQ(error_of([&](json& d) { entry(d, 7)["parent"] = ""; }),
            "slurmrestd shares: shares[7] (alice): parent is empty")
      << "a user's row shows its account";
  EXPECT_EQ(error_of([&](json& d) { entry(d, 6)["usage"] = -3; }),
            "slurmrestd shares: shares[6] (ml): usage is negative");
  EXPECT_EQ(error_of([&](json& d) { d["shares"]["shares"][0] = 7; }), "slurmrestd shares: shares[0] is not an object");
  EXPECT_EQ(error_of([](json& d) { d["shares"] = json::array(); }), "slurmrestd shares: no \"shares\" object");
  EXPECT_EQ(error_of([](json& d) { d["shares"].erase("shares"); }),
            "slurmrestd shares: no \"shares\" list in the \"shares\" object");
  EXPECT_THROW(render_sshare("{\"shares\": "), ParseError) << "not JSON";
}

TEST(RestRenderSshareTree, AnAccountWhoseParentIsNotListedStartsAtTheLeftAsSshareDoes) {
  json doc = {{"shares",
               {{"shares",
                 {{{"name", "orphan"},
                   {"parent", "gone"},
                   {"type", "ASSOCIATION"},
                   {"shares", 1},
                   {"shares_normalized", 1.0},
                   {"usage", 5},
                   {"effective_usage", 0.5}},
                  {{"name", "zoe"},
                   {"parent", "orphan"},
                   {"type", "USER"},
                   {"shares", 1},
                   {"shares_normalized", 1.0},
                   {"usage", 5.9},
                   {"effective_usage", 1.0},
                   {"fairshare", {{"factor", 0.25}}}}}}}}};
  EXPECT_EQ(render_sshare(doc.dump()),
            "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare\n"
            "orphan||1|1.000000|5|0.500000|\n"
            " orphan|zoe|1|1.000000|5|1.000000|0.250000\n")
      << "a fractional usage is cut, as sshare's cast cuts it";
  EXPECT_EQ(render_sshare(R"({"shares": {"shares": [], "total_shares": 0}})"),
            "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare\n")
      << "no association: the header alone, as sshare prints it";
}

}  // namespace
}  // namespace gcm::slurm

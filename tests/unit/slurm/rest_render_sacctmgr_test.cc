// slurmrestd's accounting answers written as sacctmgr's output: golden against the CLI output recorded at the same
// moment on the testbed (tests/fixtures/slurmrestd-<version>/: every API version of Slurm 22.05, 24.11 and 25.11),
// where the QOS `capped` sets every limit sacctmgr prints, and against hand-made answers for what the testbed does not
// show.
#include "slurm/rest_render_sacctmgr.h"

#include "slurm/rest_render.h"

#include <gtest/gtest.h>

#include <set>

#include "recorded_slurm.h"
#include "text_file.h"

namespace gcm::slurm {
namespace {

using gcm::testing::read_file;
using gcm::testing::recorded_apis;
using gcm::testing::RecordedApi;
using gcm::testing::RecordedApiName;

// The lines of a '|' table, split into fields.
std::vector<std::vector<std::string>> table(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::vector<std::string> fields;
    std::string line = text.substr(at, end - at);
    for (size_t f = 0;;) {
      size_t bar = line.find('|', f);
      fields.push_back(line.substr(f, bar == std::string::npos ? std::string::npos : bar - f));
      if (bar == std::string::npos) break;
      f = bar + 1;
    }
    rows.push_back(fields);
    at = end + 1;
  }
  return rows;
}

class RestRenderSacctmgrRecorded : public ::testing::TestWithParam<RecordedApi> {};

// The columns of `sacctmgr show qos -P` that an API version has no key for: empty from REST.
std::set<std::string> qos_columns_without_key(const RecordedApi& p) {
  // v0.0.38 to v0.0.41 have no key for a QOS's GrpTRESMins and GrpSubmit (slurmrestd's parser skips both; v0.0.42
  // adds limits.max.tres.minutes.total and limits.max.jobs.count).
  if (p.minor() < 42) return {"GrpTRESMins", "GrpSubmit"};
  return {};
}

TEST_P(RestRenderSacctmgrRecorded, TheQosTableIsSacctmgrs) {
  const RecordedApi& p = GetParam();
  auto cli = table(read_file(p.cli("sacctmgr-qos.txt")));
  auto rest = table(render_sacctmgr_qos(read_file(p.rest("qos.json"))));
  ASSERT_EQ(rest.size(), cli.size());
  ASSERT_GE(cli.size(), 5u) << "the header, normal, high, limited and capped";
  ASSERT_EQ(rest[0], cli[0]) << "the header";
  const std::set<std::string> absent = qos_columns_without_key(p);
  bool capped_seen = false;
  for (size_t row = 1; row < cli.size(); ++row) {
    ASSERT_EQ(rest[row].size(), cli[row].size()) << "row " << row;
    const bool capped = cli[row][0] == "capped";
    capped_seen |= capped;
    for (size_t col = 0; col < cli[0].size(); ++col) {
      if (absent.count(cli[0][col])) {
        EXPECT_EQ(rest[row][col], "") << cli[0][col];
        if (capped) {
          EXPECT_NE(cli[row][col], "") << cli[0][col] << ": capped sets it, so the difference is seen";
        }
        continue;
      }
      EXPECT_EQ(rest[row][col], cli[row][col]) << cli[row][0] << "." << cli[0][col];
    }
  }
  EXPECT_TRUE(capped_seen) << "the QOS with every limit is in the recording";
}

TEST_P(RestRenderSacctmgrRecorded, UsersAndTheirAssociationsAreSacctmgrs) {
  const RecordedApi& p = GetParam();
  EXPECT_EQ(render_sacctmgr_users(read_file(p.rest("users.json"))), read_file(p.cli("sacctmgr-users.txt")));
  for (const char* user : {"alice", "bob", "carol", "root"})
    EXPECT_EQ(render_sacctmgr_user_assoc(read_file(p.rest(std::string("associations-") + user + ".json")), user),
              read_file(p.cli(std::string("sacctmgr-user-") + user + ".txt")))
        << user;
  // The answer for one user lists only theirs here; a wider answer (every association) gives the same rows.
  EXPECT_EQ(render_sacctmgr_user_assoc(read_file(p.rest("associations.json")), "alice"),
            read_file(p.cli("sacctmgr-user-alice.txt")));
}

INSTANTIATE_TEST_SUITE_P(Recorded, RestRenderSacctmgrRecorded, ::testing::ValuesIn(recorded_apis()), RecordedApiName());

TEST(RestRenderSacctmgr, ValuesAreWrittenWithSacctmgrsWords) {
  const std::string qos = R"({"qos": [{"name": "q", "priority": {"set": true, "infinite": false, "number": 7},
      "flags": ["NO_DECAY", "DENY_LIMIT", "SOME_NEW_FLAG"],
      "limits": {"grace_time": 90061, "max": {"tres": {"total": [
          {"type": "cpu", "name": "", "id": 1, "count": 8}, {"type": "mem", "name": null, "id": 2, "count": 1536},
          {"type": "mem", "id": 2, "count": 2097152}, {"type": "gres", "name": "gpu", "id": 1001, "count": 4},
          {"type": "node", "id": 4, "count": null}]},
        "wall_clock": {"per": {"job": 2880}}}},
      "preempt": {"list": ["zeta", "alpha"], "mode": ["SUSPEND", "GANG"], "exempt_time": 59},
      "usage_factor": 0.5, "usage_threshold": {"set": false, "infinite": false, "number": 0}}]})";
  auto rows = table(render_sacctmgr_qos(qos));
  ASSERT_EQ(rows.size(), 2u);
  std::map<std::string, std::string> q;
  for (size_t i = 0; i < rows[0].size(); ++i) q[rows[0][i]] = rows[1][i];
  EXPECT_EQ(q["Priority"], "7");
  EXPECT_EQ(q["Flags"], "DenyOnLimit,NoDecay,SOME_NEW_FLAG") << "sacctmgr's order; an unknown flag is kept";
  EXPECT_EQ(q["GraceTime"], "1-01:01:01");
  EXPECT_EQ(q["GrpTRES"], "cpu=8,gres/gpu=4,mem=1.50G,mem=2T") << "sorted; an unset count is left out";
  EXPECT_EQ(q["MaxWall"], "2-00:00:00");
  EXPECT_EQ(q["Preempt"], "alpha,zeta");
  EXPECT_EQ(q["PreemptExemptTime"], "00:00:59");
  EXPECT_EQ(q["PreemptMode"], "gang,suspend");
  EXPECT_EQ(q["UsageFactor"], "0.500000");
  EXPECT_EQ(q["UsageThres"], "");
  EXPECT_EQ(q["MaxTRESPU"], "") << "a limit the answer does not have is unset";
  EXPECT_EQ(slurm_duration(0, /*always_hours=*/true), "00:00:00");
  EXPECT_EQ(slurm_duration(7200, /*always_hours=*/true), "02:00:00");
  EXPECT_EQ(slurm_duration(7200), "2:00:00") << "squeue's form";
}

TEST(RestRenderSacctmgr, BadAnswersNameTheRecordAndTheKey) {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message([] { render_sacctmgr_qos(R"({"meta": {}})"); }), "slurmrestd qos: no \"qos\" list");
  EXPECT_EQ(message([] { render_sacctmgr_qos(R"({"QOS": [{"priority": 1}]})"); }),
            "slurmrestd qos: qos[0]: no \"name\"");
  EXPECT_EQ(message([] { render_sacctmgr_qos(R"({"QOS": [{"name": "q", "usage_factor": "x"}]})"); }),
            "slurmrestd qos: qos[0]: usage_factor is not a number");
  EXPECT_NE(message([] { render_sacctmgr_qos(R"({"QOS": [{"name": "a|b"}]})"); }).find("holds '|'"), std::string::npos);
  EXPECT_EQ(message([] { render_sacctmgr_users(R"({"users": [{"name": ""}]})"); }),
            "slurmrestd users: users[0]: name is not a user name");
  EXPECT_EQ(message([] { render_sacctmgr_user_assoc(R"({"associations": [{"user": "u"}]})", "u"); }),
            "slurmrestd associations: associations[0]: no \"account\"");
  EXPECT_NE(message([] { render_sacctmgr_qos("{"); }).find("slurmrestd qos"), std::string::npos);
  EXPECT_EQ(
      message([] {
        render_sacctmgr_qos(R"({"QOS": [{"name": "q", "limits": {"max": {"tres": {"total": [{"count": 1}]}}}}]})");
      }),
      "slurmrestd qos: qos[0]: limits.max.tres.total[0]: no \"type\"")
      << "a TRES entry is named with its record";
}

}  // namespace
}  // namespace gcm::slurm

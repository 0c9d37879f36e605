// slurm_monitor's Sdiag task and --sdiag-reset on the Slurm 22.05 outputs recorded from the testbed (the parser
// itself: slurm_sdiag_test.cc).
#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <sstream>

#include "collectors/slurm_monitor.h"
#include "fixture_records.h"
#include "slurm_monitor_fixtures.h"

namespace gcm::slurm_monitor {
namespace {

using slurm::Sdiag;
using testing::canned_2205;
using testing::params_2205;
// Moved from Sdiag.SchemaHasGcmsFieldsInOrder, which now tests slurm/sdiag alone.
TEST(SlurmMonitorSdiag, SlurmLogCarriesEveryStatisticInSdiagsOrder) {
  // SLURMLog carries every statistic as well, in the same order after its own fields.
  for (size_t i = slurm::kSdiagFirstStatistic; i < slurm::kSdiag->fields.size(); ++i)
    EXPECT_GE(kSlurmLog->index_of(slurm::kSdiag->fields[i].name), 0) << slurm::kSdiag->fields[i].name;
}

using gcm::testing::Collect;

TEST(SlurmMonitorSdiag, SlurmLogCarriesEveryStatisticAndTheResetRunsOnlyWhenAsked) {
  auto c = canned_2205();
  Collect out;
  Sdiag sdiag;
  collect(c, c, params_2205(), out, nullptr, nullptr, &sdiag);
  EXPECT_EQ(sdiag.get("schedule_cycle_max"), 31572);
  const Record& log = out.records.back();
  EXPECT_EQ(log.schema->name, "SLURMLog");
  EXPECT_EQ(log.at("schedule_cycle_max").as_int(), 31572);
  EXPECT_EQ(log.at("bf_when_last_cycle").as_int(), 1795978615);
  EXPECT_EQ(log.at("rpcs_by_user_json").as_string(), sdiag.record.at("rpcs_by_user_json").as_string());
  for (const auto& q : c.queries()) EXPECT_NE(q.name, "sdiag_reset");

  auto r = canned_2205();
  r.set_output("sdiag_reset", "Reset scheduling statistics");
  Params p = params_2205();
  p.sdiag_reset = true;
  Collect out2;
  collect(r, r, p, out2);
  std::vector<std::string> names;
  for (const auto& q : r.queries()) names.push_back(q.name);
  auto sd = std::find(names.begin(), names.end(), "sdiag");
  auto reset = std::find(names.begin(), names.end(), "sdiag_reset");
  ASSERT_NE(reset, names.end());
  EXPECT_LT(sd, reset);  // after the scrape
  EXPECT_EQ(r.queries()[static_cast<size_t>(reset - names.begin())].argv,
            (std::vector<std::string>{"sdiag", "--reset"}));
}

TEST(SlurmMonitorSdiag, FailedResetIsAWarningNotAFailedRound) {
  auto c = canned_2205();
  c.set_failure("sdiag_reset", "sdiag: error: slurm_reset_statistics: Access/permission denied");
  Params p = params_2205();
  p.sdiag_reset = true;
  std::ostringstream logged;
  auto log = std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::ostream_sink_mt>(logged));
  Collect out;
  EXPECT_NO_THROW(collect(c, c, p, out, log.get()));
  EXPECT_EQ(out.records.back().schema->name, "SLURMLog");
  EXPECT_NE(logged.str().find("permission denied"), std::string::npos) << logged.str();
  EXPECT_NE(logged.str().find("warning"), std::string::npos) << logged.str();
}

}  // namespace
}  // namespace gcm::slurm_monitor

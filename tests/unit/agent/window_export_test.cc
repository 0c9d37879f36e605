// The agent's window export without a receiver: the page /metrics serves is what was published as of the last
// render, the textfile is that page, and OTLP options that cannot work are the operator's error.
#include "agent/window_export.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "agent/agent.h"
#include "agent/agent_schemas.h"
#include "core/logging.h"
#include "temp_dir.h"

namespace gcm::agent {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Record self_with_samples(int64_t n) {
  AgentCounters c;
  for (int64_t i = 0; i < n; ++i) c.sampled(0.1);
  return c.self_record({"node1", false, 0, 0});
}

TEST(WindowExport, ThePageChangesOnlyWhenRendered) {
  AgentCounters counters;
  WindowExport out(counters, stderr_logger("window-export-test"));
  EXPECT_EQ(out.page(), "");
  out.publish(kAgentSelf, {self_with_samples(3)});
  EXPECT_EQ(out.page(), "");
  out.render_page();
  std::string page = out.page();
  EXPECT_NE(page.find("\ngcm_agent_samples_total 3\n"), std::string::npos) << page;
  EXPECT_EQ(out.page_size(), page.size());
  // A schema published again replaces its series: the old values are gone from the next page.
  out.publish(kAgentSelf, {});
  out.render_page();
  EXPECT_EQ(out.page().find("gcm_agent_samples_total"), std::string::npos) << out.page();
}

TEST(WindowExport, TheTextfileIsThePageAndAFailureIsCountedUnderItsSource) {
  gcm::testing::TempDir dir;
  AgentCounters counters;
  WindowExport out(counters, stderr_logger("window-export-test"));
  out.publish(kAgentSelf, {self_with_samples(1)});
  out.render_page();
  out.write_textfile(dir.file("agent.prom"));
  EXPECT_EQ(slurp(dir.file("agent.prom")), out.page());
  EXPECT_EQ(counters.source("textfile").errors, 0u);

  out.write_textfile(dir.file("missing/agent.prom"));
  out.write_textfile(dir.file("missing/agent.prom"));
  EXPECT_EQ(counters.source("textfile").errors, 2u);
  EXPECT_NE(counters.source("textfile").last_error.find("missing/agent.prom"), std::string::npos);
}

TEST(WindowExport, WithoutAnEndpointNothingIsPushedAndNoExportSeriesAppear) {
  AgentCounters counters;
  WindowExport out(counters, stderr_logger("window-export-test"));
  AgentOptions opts;
  out.start_otlp(opts);
  EXPECT_FALSE(out.pushes_otlp());
  out.add_log(self_with_samples(1));
  out.publish_export_stats();
  out.push_otlp(1700000000000);
  out.render_page();
  EXPECT_EQ(out.page().find("gcm_agent_export"), std::string::npos) << out.page();
}

TEST(WindowExport, AHeaderWithoutAColonIsAUsageError) {
  gcm::testing::TempDir dir;
  AgentCounters counters;
  WindowExport out(counters, stderr_logger("window-export-test"));
  AgentOptions opts;
  opts.otlp_endpoint = "http://127.0.0.1:4318";
  opts.spool_dir = dir.path();
  opts.otlp_headers = {"Authorization Bearer x"};
  try {
    out.start_otlp(opts);
    FAIL() << "expected AgentUsageError";
  } catch (const AgentUsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--otlp-header 'Authorization Bearer x'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(out.pushes_otlp());
}

}  // namespace
}  // namespace gcm::agent

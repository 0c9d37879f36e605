// The agent's /metrics answers with the last rendered page, /health with OK, anything else 404; no --listen, no
// listener.
#include "agent/metrics_endpoint.h"

#include <gtest/gtest.h>

#include "agent/agent_schemas.h"
#include "core/logging.h"

namespace gcm::agent {
namespace {

TEST(MetricsEndpoint, MetricsIsTheRenderedPageAndHealthIsOk) {
  AgentCounters counters;
  WindowExport page(counters, stderr_logger("metrics-endpoint-test"));
  page.publish(kAgentSelf, {counters.self_record({"node9", false, 0, 0})});
  page.render_page();
  HttpRequest req;
  req.path = "/metrics";
  HttpReply rep = metrics_endpoint_reply(req, page);
  EXPECT_EQ(rep.status, 200);
  EXPECT_EQ(rep.body, page.page());
  EXPECT_NE(rep.content_type.find("version=0.0.4"), std::string::npos);
  req.path = "/-/healthy";
  EXPECT_EQ(metrics_endpoint_reply(req, page).body, "OK\n");
  req.path = "/metrics/extra";
  EXPECT_EQ(metrics_endpoint_reply(req, page).status, 404);
}

TEST(MetricsEndpoint, NoListenNoListenerAndABadAddressIsAnError) {
  AgentCounters counters;
  WindowExport page(counters, stderr_logger("metrics-endpoint-test"));
  auto log = stderr_logger("metrics-endpoint-test");
  AgentOptions opts;
  opts.listen = "";
  EXPECT_EQ(start_metrics_endpoint(opts, page, *log), nullptr);
  opts.listen = "127.0.0.1:notaport";
  EXPECT_THROW(start_metrics_endpoint(opts, page, *log), std::runtime_error);
  opts.listen = "127.0.0.1:0";
  auto listener = start_metrics_endpoint(opts, page, *log);
  ASSERT_NE(listener, nullptr);
  EXPECT_GT(listener->port(), 0);
  listener->stop();
}

}  // namespace
}  // namespace gcm::agent

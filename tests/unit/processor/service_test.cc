// slurm_processor's own endpoints before anything was forwarded: /health says the downstream is unknown, /metrics
// has no up sample (neither a guess of up nor of down).
#include "processor/service.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gcm::processor {
namespace {

TEST(SlurmProcessorService, HealthSaysUnknownAndMetricsHaveNoUpSampleBeforeAnythingWasSent) {
  ServiceOptions o;
  auto t = std::make_shared<otlp::TransportConfig>();
  t->set_endpoint("http://127.0.0.1:1");
  o.forward.transport = t;
  Service svc(o, nullptr);
  HttpRequest get;
  get.method = "GET";
  get.path = "/health";
  HttpReply health = svc.handle(get);
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(nlohmann::json::parse(health.body)["downstream"], "unknown") << health.body;
  std::string metrics = svc.metrics_text();
  EXPECT_NE(metrics.find("# TYPE gcm_slurm_processor_downstream_up gauge\n"), std::string::npos);
  // A sample line starts with the name (the HELP line mentions it after "# HELP ").
  EXPECT_EQ(metrics.find("\ngcm_slurm_processor_downstream_up "), std::string::npos) << "no guess of up or down";
}

TEST(SlurmProcessorService, DownstreamStatesAreNamed) {
  EXPECT_STREQ(otlp::to_string(otlp::DownstreamState::Unknown), "unknown");
  EXPECT_STREQ(otlp::to_string(otlp::DownstreamState::Up), "up");
  EXPECT_STREQ(otlp::to_string(otlp::DownstreamState::Down), "down");
}

}  // namespace
}  // namespace gcm::processor

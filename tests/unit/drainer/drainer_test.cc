// gcm drainer: Alertmanager's webhook payload (the format of Alertmanager 0.25, Debian 12's), what is drained for
// it, what is refused, and the answers a hostile or broken sender gets.
#include "drainer/drainer.h"

#include <gtest/gtest.h>

#include "core/http_client.h"
#include "core/logging.h"

namespace gcm::drainer {
namespace {

// One alert group as Alertmanager 0.25 posts it (fields it sends that the drainer ignores included).
std::string payload(const std::string& status, const std::string& node, const std::string& action = "drain") {
  return R"({"receiver":"gcm-drainer","status":")" + status + R"(","alerts":[{"status":")" + status +
         R"(","labels":{"alertname":"GcmPeerSlowNode","gcm_action":")" + action + R"(","job_id":"42","node":")" + node +
         R"(","reason":"peer_slow_node","severity":"critical"},"annotations":{"gcm_evidence":"peer_slow_node: job 42 SM clock -15% vs the median of 4 nodes, z=-15.0","summary":"s"},"startsAt":"2026-12-01T14:00:00.000Z","endsAt":"0001-01-01T00:00:00Z","generatorURL":"http://prometheus/graph","fingerprint":"a1b2c3"}],"groupLabels":{"alertname":"GcmPeerSlowNode"},"commonLabels":{},"commonAnnotations":{},"externalURL":"http://alertmanager:9093","version":"4","groupKey":"{}:{alertname=\"GcmPeerSlowNode\"}","truncatedAlerts":0})";
}

TEST(AlertmanagerWebhook, ParsesAlertsWithLabelsAndAnnotations) {
  auto alerts = parse_alertmanager_webhook(payload("firing", "node3"));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].status, "firing");
  EXPECT_EQ(alerts[0].labels.at("node"), "node3");
  EXPECT_EQ(alerts[0].annotations.at("gcm_evidence").rfind("peer_slow_node: job 42", 0), 0u);
  EXPECT_EQ(alerts[0].fingerprint, "a1b2c3");
}

TEST(AlertmanagerWebhook, NamesWhatIsWrong) {
  auto err = [](const std::string& body) {
    try {
      parse_alertmanager_webhook(body);
    } catch (const WebhookError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(err("{").find("not JSON"), std::string::npos);
  EXPECT_NE(err("[]").find("expected a JSON object"), std::string::npos);
  EXPECT_NE(err(R"({"alerts":{}})").find("alerts: expected an array"), std::string::npos);
  EXPECT_NE(err(R"({"alerts":[{"status":"firing","labels":{"node":3}}]})")
                .find("alerts[0].labels.node: expected a "
                      "string"),
            std::string::npos);
  EXPECT_NE(err(R"({"alerts":[{"status":"maybe"}]})").find("alerts[0].status"), std::string::npos);
  EXPECT_NE(err(std::string(1000, '[') + std::string(1000, ']')).find("deeper"), std::string::npos);
}

struct FakeSlurm {
  std::string nodes;
  std::mutex mu;
  std::vector<std::vector<std::string>> updates;
  suite::ScontrolRunner runner() {
    return [this](const std::vector<std::string>& args) -> std::string {
      std::lock_guard<std::mutex> g(mu);
      if (args.size() >= 2 && args[0] == "show") return nodes;
      updates.push_back(args);
      return "";
    };
  }
};

std::string node(const std::string& name, const std::string& state, const std::string& reason = "") {
  return "NodeName=" + name + " Arch=x86_64\n   State=" + state + " ThreadsPerCore=1\n   Partitions=gpu \n" +
         (reason.empty() ? "" : "   Reason=" + reason + "\n") + "\n";
}

struct DrainerFixture : ::testing::Test {
  FakeSlurm slurm;
  std::unique_ptr<Drainer> d;
  void start(bool drain) {
    DrainerOptions o;
    o.drain = drain;
    o.scontrol = slurm.runner();
    o.limits.max_partition_fraction = 0.5;
    o.limits.settle_seconds = 0;
    d = std::make_unique<Drainer>(o, stderr_logger("drainer-test"));
    d->start();
  }
  std::string url(const std::string& path) { return "http://127.0.0.1:" + std::to_string(d->port()) + path; }
  HttpResponse post(const std::string& body) {
    HttpClient c;
    return c.post(url("/alertmanager"), body, {"Content-Type: application/json"}, std::chrono::seconds(5));
  }
};

TEST_F(DrainerFixture, DrainsTheNodeOfAFiringDrainAlertWithItsEvidence) {
  slurm.nodes = node("node1", "MIXED") + node("node2", "MIXED") + node("node3", "MIXED") + node("node4", "MIXED");
  start(true);
  HttpResponse r = post(payload("firing", "node3"));
  EXPECT_EQ(r.status, 200) << r.body;
  d->wait_idle();
  ASSERT_EQ(slurm.updates.size(), 1u);
  EXPECT_EQ(slurm.updates[0],
            (std::vector<std::string>{"update", "NodeName=node3", "State=DRAIN",
                                      "Reason=gcm: detector: peer_slow_node: job 42 SM clock -15% vs the median of 4 "
                                      "nodes, z=-15.0"}));
  EXPECT_NE(d->metrics_text().find("gcm_drainer_actions_total{action=\"drained\"} 1"), std::string::npos);
}

TEST_F(DrainerFixture, ResolvedOtherActionsAndOperatorDrainsAreLeftAlone) {
  slurm.nodes =
      node("node3", "MIXED") + node("node7", "IDLE+DRAIN", "operator: maintenance [root@2026-12-01T13:51:53]");
  start(true);
  EXPECT_EQ(post(payload("resolved", "node3")).status, 200);
  EXPECT_EQ(post(payload("firing", "node3", "page")).status, 200);
  EXPECT_EQ(post(payload("firing", "node7")).status, 200);
  d->wait_idle();
  EXPECT_TRUE(slurm.updates.empty());
  std::string m = d->metrics_text();
  EXPECT_NE(m.find("gcm_drainer_alerts_total{status=\"resolved\"} 1"), std::string::npos) << m;
  EXPECT_NE(m.find("gcm_drainer_alerts_total{status=\"ignored\"} 1"), std::string::npos) << m;
  EXPECT_NE(m.find("gcm_drainer_actions_total{action=\"already_drained\"} 1"), std::string::npos) << m;
}

TEST_F(DrainerFixture, ReportOnlyByDefault) {
  slurm.nodes = node("node3", "MIXED") + node("node4", "MIXED");
  start(false);
  EXPECT_EQ(post(payload("firing", "node3")).status, 200);
  d->wait_idle();
  EXPECT_TRUE(slurm.updates.empty());
  EXPECT_NE(d->metrics_text().find("gcm_drainer_actions_total{action=\"would_drain\"} 1"), std::string::npos);
}

TEST_F(DrainerFixture, ABadPayloadIs400AndAGetIs405) {
  start(true);
  HttpResponse r = post(R"({"alerts":[{"status":"firing","labels":[]}]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("alerts[0].labels: expected an object"), std::string::npos) << r.body;
  HttpClient c;
  EXPECT_EQ(c.get(url("/alertmanager"), std::chrono::seconds(5)).status, 405);
  EXPECT_TRUE(slurm.updates.empty());
}

}  // namespace
}  // namespace gcm::drainer

// The Kubernetes API client, the kubeconfig reader and kubernetes_monitor, against the scripted API server
// (kube_api_server.h: HTTPS with a test CA, a bearer token, pages, 410 on an expired continue token, 403).
#include <gtest/gtest.h>

#include <filesystem>

#include <fstream>

#include "core/subprocess.h"
#include "kube_api_server.h"
#include "kubernetes/api_client.h"
#include "kubernetes/json_filter.h"
#include "kubernetes/objects.h"

namespace gcm {
namespace {

using testing::KubeApiServer;

std::string b64(const std::string& s) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < s.size(); i += 3) {
    uint32_t v = (uint8_t(s[i]) << 16) | (uint8_t(s[i + 1]) << 8) | uint8_t(s[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out.push_back(t[(v >> k) & 63]);
  }
  if (i + 1 == s.size()) {
    uint32_t v = uint8_t(s[i]) << 16;
    out += {t[(v >> 18) & 63], t[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == s.size()) {
    uint32_t v = (uint8_t(s[i]) << 16) | (uint8_t(s[i + 1]) << 8);
    out += {t[(v >> 18) & 63], t[(v >> 12) & 63], t[(v >> 6) & 63], '='};
  }
  return out;
}

std::string slurp_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(KubeConfig, Base64RoundTrip) {
  for (std::string s : {"", "a", "ab", "abc", "-----BEGIN CERTIFICATE-----\nMIIB\n"})
    EXPECT_EQ(kube::base64_decode(b64(s), "x"), s);
  EXPECT_THROW(kube::base64_decode("ab$c", "the field"), kube::KubeConfigError);
}

TEST(KubeConfig, CurrentContextWithInlineCaAndToken) {
  std::string cfg =
      "apiVersion: v1\nkind: Config\ncurrent-context: prod\nclusters:\n- name: c1\n  cluster:\n"
      "    server: https://10.0.0.1:6443/\n    certificate-authority-data: " +
      b64("CA PEM") +
      "\n- name: c2\n  cluster:\n    server: https://other:6443\n    certificate-authority: ca.crt\n"
      "contexts:\n- name: prod\n  context: {cluster: c1, user: u1, namespace: slurm}\n"
      "- name: dev\n  context: {cluster: c2, user: u2}\nusers:\n- name: u1\n  user:\n    token: abc\n"
      "- name: u2\n  user:\n    client-certificate: c.crt\n    client-key-data: " +
      b64("KEY") + "\n";
  auto c = kube::parse_kubeconfig(cfg, "/etc/k/config", "/etc/k", "");
  EXPECT_EQ(c.server, "https://10.0.0.1:6443");
  EXPECT_EQ(c.tls.ca_pem, "CA PEM");
  EXPECT_EQ(c.token, "abc");
  EXPECT_EQ(c.namespace_, "slurm");
  EXPECT_EQ(c.origin, "kubeconfig /etc/k/config context prod");
  auto d = kube::parse_kubeconfig(cfg, "/etc/k/config", "/etc/k", "dev");
  EXPECT_EQ(d.tls.ca_file, "/etc/k/ca.crt");
  EXPECT_EQ(d.tls.cert_file, "/etc/k/c.crt");
  EXPECT_EQ(d.tls.key_pem, "KEY");
  try {
    kube::parse_kubeconfig(cfg, "/etc/k/config", "/etc/k", "staging");
    FAIL();
  } catch (const kube::KubeConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no context named 'staging'"), std::string::npos) << e.what();
  }
}

TEST(KubeConfig, ExecPluginsAreRefusedByName) {
  std::string cfg =
      "current-context: x\nclusters: [{name: c, cluster: {server: 'https://h'}}]\n"
      "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
      "users: [{name: u, user: {exec: {command: aws}}}]\n";
  try {
    kube::parse_kubeconfig(cfg, "k.yaml", "", "");
    FAIL();
  } catch (const kube::KubeConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("k.yaml: user 'u' authenticates with exec"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kube::parse_kubeconfig("a: [", "bad.yaml", "", ""), kube::KubeConfigError);
}

TEST(KubeJsonFilter, KeepsOnlyThePathsNamed) {
  kube::JsonFilter f;
  f.keep({"items", "*", "metadata", "name"});
  f.keep({"items", "*", "metadata", "annotations", "slurm.coreweave.com/job-id"});
  f.keep({"items", "*", "status", "containerStatuses", "*", "restartCount"});
  nlohmann::json doc = {
      {"items",
       {KubeApiServer::pod("ns", "p1", "n1", {{"a", 2}, {"b", 0}}, "42"), KubeApiServer::pod("ns", "p2", "n1", {})}},
      {"metadata", {{"continue", "x"}}}};
  std::string err;
  auto out = f.parse(doc.dump(), &err);
  ASSERT_TRUE(out) << err;
  nlohmann::json want = {
      {"items",
       {{{"metadata", {{"name", "p1"}, {"annotations", {{"slurm.coreweave.com/job-id", "42"}}}}},
         {"status", {{"containerStatuses", {{{"restartCount", 2}}, {{"restartCount", 0}}}}}}},
        {{"metadata", {{"name", "p2"}}}, {"status", {{"containerStatuses", nlohmann::json::array()}}}}}}};
  EXPECT_EQ(*out, want) << out->dump();
  EXPECT_FALSE(f.parse("{\"items\": [", &err));
}

class KubeApi : public ::testing::Test {
 protected:
  KubeApi() {
    for (int i = 0; i < 1200; ++i)
      server_.add_pod(KubeApiServer::pod(i % 2 ? "slurm" : "default", "pod-" + std::to_string(i),
                                         "node-" + std::to_string(i % 7), {{"main", i % 3}},
                                         i % 5 == 0 ? std::to_string(1000 + i) : ""));
    for (int i = 0; i < 3; ++i) server_.add_node(KubeApiServer::node_object("node-" + std::to_string(i)));
  }
  kube::ApiClient client(int page = 500) {
    kube::ApiClientOptions o;
    o.page_size = page;
    o.timeout = std::chrono::seconds(10);
    return kube::ApiClient(server_.connection(), o);
  }
  KubeApiServer server_;
};

TEST_F(KubeApi, ListsEveryPageWithTheContinueToken) {
  auto api = client(500);
  auto pods = kube::list_pods(api, {});
  ASSERT_EQ(pods.size(), 1200u);
  EXPECT_EQ(pods[5].name, "pod-5");
  EXPECT_EQ(pods[5].annotation(kube::kSunkJobIdAnnotation), "1005");
  EXPECT_FALSE(pods[5].annotation("other"));  // filtered out while parsing
  EXPECT_EQ(pods[5].containers.at(0).restart_count, 2);
  auto reqs = server_.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].query, "limit=500");
  EXPECT_EQ(reqs[1].query, "limit=500&continue=off-500");
  EXPECT_EQ(reqs[2].query, "limit=500&continue=off-1000");
}

TEST_F(KubeApi, NamespaceAndLabelSelector) {
  auto api = client();
  kube::PodQuery q;
  q.namespace_ = "slurm";
  q.label_selector = "app=trainer";
  auto pods = kube::list_pods(api, q);
  EXPECT_EQ(pods.size(), 600u);
  EXPECT_EQ(server_.requests().at(0).path, "/api/v1/namespaces/slurm/pods");
  EXPECT_EQ(server_.requests().at(0).query, "labelSelector=app%3Dtrainer&limit=500");
}

TEST_F(KubeApi, AnExpiredContinueTokenRestartsTheListOnce) {
  auto api = client(500);
  server_.expire_next_continue();
  int restarts = 0;
  std::vector<std::string> names;
  kube::for_each_pod(
      api, {}, [&](const kube::Pod& p) { names.push_back(p.name); },
      [&] {
        ++restarts;
        names.clear();
      });
  EXPECT_EQ(restarts, 1);
  EXPECT_EQ(names.size(), 1200u);
  EXPECT_EQ(server_.requests().size(), 5u);  // page 1, 410, then pages 1-3 again
}

TEST_F(KubeApi, AForbiddenListNamesTheRbacVerbAndResource) {
  server_.forbid("list pods");
  auto api = client();
  try {
    kube::PodQuery q;
    q.namespace_ = "slurm";
    kube::list_pods(api, q);
    FAIL();
  } catch (const kube::ApiError& e) {
    std::string m = e.what();
    EXPECT_EQ(e.status, 403);
    EXPECT_NE(m.find("GET " + server_.server_url() + "/api/v1/namespaces/slurm/pods?limit=500: HTTP 403 Forbidden"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("cannot list resource \"pods\""), std::string::npos) << m;
    EXPECT_NE(m.find("needs RBAC verb \"list\" on \"pods\" (core API group) in namespace slurm"), std::string::npos)
        << m;
  }
}

TEST_F(KubeApi, AWrongTokenIsA401NamingTheCredentials) {
  kube::Connection c = server_.connection();
  c.token_file.clear();
  c.token = "stale";
  kube::ApiClient api(c);
  try {
    kube::list_nodes(api);
    FAIL();
  } catch (const kube::ApiError& e) {
    EXPECT_EQ(e.status, 401);
    EXPECT_NE(std::string(e.what()).find("did not accept the credentials of the test service account"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(KubeApi, AnUnknownCaIsATransportErrorNamingTheServer) {
  kube::Connection c = server_.connection();
  c.tls.ca_file.clear();  // the system's CAs do not know the test CA
  kube::ApiClient api(c);
  try {
    kube::list_nodes(api);
    FAIL();
  } catch (const kube::ApiError& e) {
    EXPECT_EQ(e.status, 0);
    EXPECT_NE(std::string(e.what()).find("/api/v1/nodes?limit=500"), std::string::npos) << e.what();
  }
}

TEST_F(KubeApi, AnAnswerOverTheLimitIsRefused) {
  kube::ApiClientOptions o;
  o.page_size = 0;
  o.max_body_bytes = 100000;
  kube::ApiClient api(server_.connection(), o);
  EXPECT_THROW(kube::list_pods(api, {}), kube::ApiError);
}

TEST_F(KubeApi, NodesAndTheirConditions) {
  auto api = client();
  auto nodes = kube::list_nodes(api);
  ASSERT_EQ(nodes.size(), 3u);
  ASSERT_EQ(nodes[0].conditions.size(), 2u);
  EXPECT_EQ(nodes[0].conditions[0].type, "Ready");
  EXPECT_EQ(nodes[0].conditions[0].reason, "KubeletReady");
  EXPECT_EQ(kube::parse_rfc3339(nodes[0].conditions[0].last_transition_time), 1772359200);
  EXPECT_EQ(kube::parse_rfc3339("2026-03-01T11:00:00.5+01:00"), 1772359200);
  EXPECT_FALSE(kube::parse_rfc3339("yesterday"));
}

// The collector as an operator runs it: the binary, a kubeconfig with the test CA and token, --once, stdout.
TEST_F(KubeApi, KubernetesMonitorWritesGcmsRecords) {
  // The sanitizer tree builds the unit tests only; the plain tree runs this one.
  if (!std::filesystem::exists(GCM_BINARY)) GTEST_SKIP() << GCM_BINARY << " is not built in this tree";
  std::string cfg = server_.dir().file("kubeconfig");
  std::ofstream(cfg) << "current-context: t\nclusters: [{name: c, cluster: {server: '" << server_.server_url()
                     << "', certificate-authority: ca.crt}}]\ncontexts: [{name: t, context: {cluster: c, user: u}}]\n"
                     << "users: [{name: u, user: {tokenFile: token}}]\n";
  server_.connection();  // writes the token file
  server_.add_pod(KubeApiServer::pod("slurm", "pending-pod", "", {}));
  auto run = [&](std::vector<std::string> sink) {
    CommandSpec spec;
    spec.argv = {GCM_BINARY,     "kubernetes_monitor",
                 "--once",       "--cluster",
                 "k1",           "--no-in-cluster",
                 "--kubeconfig", cfg,
                 "--namespace",  "slurm",
                 "--chunk-size", "0",
                 "--log-folder", server_.dir().file("logs")};
    spec.argv.insert(spec.argv.end(), sink.begin(), sink.end());
    return run_command(spec);
  };
  // GCM's stdout form of a METRIC record: flattened, a nested object with a "name" keyed by it.
  auto out = run({"--sink", "stdout"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find("\"pod.pod-5.restart_count\": 2, \"pod.pod-5.container_name\": \"main\", "
                         "\"pod.pod-5.slurm_job_id\": \"1005\""),
            std::string::npos);
  std::string file = server_.dir().file("records.ndjson");
  auto r = run({"--sink", "telemetry", "-o", "file_path=" + file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> rows;
  std::istringstream lines(slurp_file(file));
  for (std::string line; std::getline(lines, line);) rows.push_back(nlohmann::json::parse(line));
  size_t pods = 0, conditions = 0;
  for (const auto& row : rows) {
    if (row.contains("pod")) {
      ++pods;
      EXPECT_EQ(row["cluster"], "k1");
      EXPECT_EQ(row["derived_cluster"], "k1");
      EXPECT_TRUE(row["ds"].is_string());
      const auto& p = row["pod"];
      if (p["name"] == "pod-5") {
        EXPECT_EQ(p, nlohmann::json({{"name", "pod-5"},
                                     {"namespace", "slurm"},
                                     {"node_name", "node-5"},
                                     {"phase", "Running"},
                                     {"restart_count", 2},
                                     {"container_name", "main"},
                                     {"slurm_job_id", "1005"}}));
      }
      if (p["name"] == "pending-pod") {
        EXPECT_EQ(p["restart_count"], 0);
        EXPECT_FALSE(p.contains("container_name") && !p["container_name"].is_null());
      }
    } else if (row.contains("node_condition")) {
      ++conditions;
      EXPECT_TRUE(row["node_condition"].contains("condition_type"));
    }
  }
  EXPECT_EQ(pods, 601u);
  EXPECT_EQ(conditions, 6u);
}

}  // namespace
}  // namespace gcm

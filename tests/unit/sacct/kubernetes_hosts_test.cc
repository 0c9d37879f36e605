// sacct_publish --resolve-kubernetes-hosts (gcm-newer.md §1.6): sc_host and sc_node_hosts from the slurmd pods'
// nodes, as GCM resolves and writes them; the command against the scripted API server.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "core/subprocess.h"
#include "kube_api_server.h"
#include "sacct/publish.h"
#include "sacct/sacct_records.h"
#include "temp_dir.h"

namespace gcm::sacct {
namespace {

using Hosts = std::map<std::string, std::string, std::less<>>;

TEST(SacctKubernetesHosts, ScHostOnlyForOneKnownNode) {
  Hosts h = {{"g3-130-015", "sf8gg2h4"}};
  EXPECT_EQ(resolve_sc_host("g3-130-015", h), "sf8gg2h4");
  EXPECT_EQ(resolve_sc_host("g3-130-[015,021]", h), std::nullopt);
  EXPECT_EQ(resolve_sc_host("None assigned", h), std::nullopt);
  EXPECT_EQ(resolve_sc_host("unknown-node", h), std::nullopt);
}

// The known nodes of the expanded list, keys sorted, in json.dumps' form.
TEST(SacctKubernetesHosts, NodeHostsOverTheExpandedList) {
  Hosts h = {{"g3-130-015", "sf8gg2h4"}, {"g3-130-021", "sf8gg2h9"}, {"g3-131-001", "sf8gg3h1"}};
  EXPECT_EQ(resolve_sc_node_hosts("g3-130-015", h), R"({"g3-130-015": "sf8gg2h4"})");
  EXPECT_EQ(resolve_sc_node_hosts("g3-130-[021,015]", h), R"({"g3-130-015": "sf8gg2h4", "g3-130-021": "sf8gg2h9"})");
  EXPECT_EQ(resolve_sc_node_hosts("g3-131-001,g3-130-[015,021]", h),
            R"({"g3-130-015": "sf8gg2h4", "g3-130-021": "sf8gg2h9", "g3-131-001": "sf8gg3h1"})");
  Hosts one = {{"g3-130-015", "sf8gg2h4"}};
  EXPECT_EQ(resolve_sc_node_hosts("g3-130-[015,021]", one), R"({"g3-130-015": "sf8gg2h4"})");
  EXPECT_EQ(resolve_sc_node_hosts("None assigned", one), std::nullopt);
  EXPECT_EQ(resolve_sc_node_hosts("unknown-node", one), std::nullopt);
  EXPECT_EQ(resolve_sc_node_hosts("n[1-", one), std::nullopt);  // unparsable: nothing known
}

struct SizeCheck : RecordOut {
  const SacctPublisher* p = nullptr;
  std::vector<nlohmann::json> records;
  void emit(const Record& r) override {
    EXPECT_EQ(p->last_record_size(), compact_json_size(r)) << to_json(r);
    records.push_back(nlohmann::json::parse(to_json(r)));
  }
};

// The fields are in every payload (null without the option), and the chunking size the publisher computes counts them.
TEST(SacctKubernetesHosts, PayloadsCarryBothFieldsAndTheirSize) {
  PublishOptions o;
  o.delimiter = "|";
  o.cluster = "c";
  o.time = 1700000000;
  for (bool resolve : {false, true}) {
    PublishOptions po = o;
    if (resolve)
      po.kubernetes_hosts =
          std::make_shared<const Hosts>(Hosts{{"node077", "physical-host-1"}, {"node078", "h\u00e9"}});
    SacctPublisher p(po, nullptr);
    SizeCheck out;
    out.p = &p;
    for (const auto& line : {"JobID|NodeList|End", "1|node077|2021-04-07T10:00:00",
                             "2|node[077-078]|2021-04-07T10:00:00", "3|None assigned|2021-04-07T10:00:00"})
      p.feed_line(line, out);
    ASSERT_EQ(out.records.size(), 3u);
    for (const auto& r : out.records) {
      ASSERT_TRUE(r.contains("sc_host")) << r.dump();
      ASSERT_TRUE(r.contains("sc_node_hosts")) << r.dump();
    }
    if (!resolve) {
      EXPECT_TRUE(out.records[0]["sc_host"].is_null());
      continue;
    }
    EXPECT_EQ(out.records[0]["sc_host"], "physical-host-1");
    EXPECT_EQ(out.records[0]["sc_node_hosts"], R"({"node077": "physical-host-1"})");
    EXPECT_TRUE(out.records[1]["sc_host"].is_null());
    EXPECT_EQ(out.records[1]["sc_node_hosts"], R"({"node077": "physical-host-1", "node078": "h\u00e9"})");
    EXPECT_TRUE(out.records[2]["sc_node_hosts"].is_null());
  }
}

class SacctPublishKubernetes : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(GCM_BINARY)) GTEST_SKIP() << GCM_BINARY << " is not built in this tree";
    std::ofstream(dir_.file("sacct.txt")) << "JobID|NodeList|End\n1|node077|2021-04-07T10:00:00\n";
    server_.connection();  // writes the token file
    std::ofstream(dir_.file("kubeconfig"))
        << "current-context: t\nclusters: [{name: c, cluster: {server: '" << server_.server_url()
        << "', certificate-authority: '" << server_.ca_file() << "'}}]\n"
        << "contexts: [{name: t, context: {cluster: c, user: u}}]\n"
        << "users: [{name: u, user: {token: " << testing::KubeApiServer::kToken << "}}]\n";
  }
  CommandResult publish(std::vector<std::string> extra) {
    CommandSpec spec;
    spec.argv = {GCM_BINARY,
                 "sacct_publish",
                 "-n",
                 "--cluster",
                 "c",
                 "--delimiter",
                 "|",
                 "--log-folder",
                 dir_.file("logs"),
                 "--kubeconfig",
                 dir_.file("kubeconfig")};
    spec.argv.insert(spec.argv.end(), extra.begin(), extra.end());
    spec.argv.push_back(dir_.file("sacct.txt"));
    spec.timeout = std::chrono::seconds(30);
    return run_command(spec);
  }
  static nlohmann::json first_record(const std::string& out) {
    auto chunk = nlohmann::json::parse(out.substr(0, out.find('\n')));
    return chunk.at(0);
  }
  testing::TempDir dir_;
  testing::KubeApiServer server_;
};

TEST_F(SacctPublishKubernetes, TheSlurmdPodsNodeIsTheHost) {
  server_.add_pod(testing::KubeApiServer::pod("tenant-slurm", "node077", "physical-host-1", {{"slurmd", 0}}));
  server_.add_pod(testing::KubeApiServer::pod("other", "node077", "wrong-namespace", {{"slurmd", 0}}));
  auto r = publish({"--resolve-kubernetes-hosts", "--kubernetes-namespace", "tenant-slurm",
                    "--kubernetes-label-selector", "app=trainer"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rec = first_record(r.out);
  EXPECT_EQ(rec["sc_host"], "physical-host-1");
  EXPECT_EQ(rec["sc_node_hosts"], R"({"node077": "physical-host-1"})");
  auto reqs = server_.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].path, "/api/v1/namespaces/tenant-slurm/pods");
  EXPECT_NE(reqs[0].query.find("labelSelector=app%3Dtrainer"), std::string::npos) << reqs[0].query;
}

TEST_F(SacctPublishKubernetes, AFailureIsAWarningAndTheRecordsGoOut) {
  server_.forbid("list pods");
  auto r = publish({"--resolve-kubernetes-hosts", "--kubernetes-namespace", "tenant-slurm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("Warning: cannot resolve Kubernetes hosts"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("RBAC verb \"list\" on \"pods\""), std::string::npos) << r.err;
  auto rec = first_record(r.out);
  EXPECT_TRUE(rec["sc_host"].is_null());
  EXPECT_TRUE(rec["sc_node_hosts"].is_null());
}

TEST_F(SacctPublishKubernetes, AnEmptyMappingIsAWarning) {
  auto r = publish({"--resolve-kubernetes-hosts", "--kubernetes-namespace", "tenant-slurm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("Warning: no scheduled pod in namespace tenant-slurm"), std::string::npos) << r.err;
  EXPECT_TRUE(first_record(r.out)["sc_host"].is_null());
}

TEST_F(SacctPublishKubernetes, TheNamespaceIsRequiredAndNothingIsAsked) {
  auto r = publish({"--resolve-kubernetes-hosts"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--kubernetes-namespace is required"), std::string::npos) << r.err;
  EXPECT_TRUE(server_.requests().empty());
}

TEST_F(SacctPublishKubernetes, OffByDefault) {
  auto r = publish({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(first_record(r.out)["sc_host"].is_null());
  EXPECT_TRUE(server_.requests().empty());
}

}  // namespace
}  // namespace gcm::sacct

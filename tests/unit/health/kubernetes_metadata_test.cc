// HealthCheckLog's Kubernetes metadata (GCM's two unmerged branches): the settings from the environment, the
// fields made from the node's pods, the request asked of a scripted API server, and a check's record as a process
// writes it, with each branch on and with neither (GCM's record, nothing asked).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "core/subprocess.h"
#include "health/health_record.h"
#include "health/kubernetes_metadata.h"
#include "kube_api_server.h"
#include "kubernetes/objects.h"
#include "temp_dir.h"

namespace gcm::health {
namespace {

using json = nlohmann::json;

std::function<const char*(const char*)> env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

kube::Pod pod(const std::string& ns, const std::string& name, const std::string& phase,
              std::map<std::string, std::string> labels, std::map<std::string, std::string> annotations = {}) {
  kube::Pod p;
  p.namespace_ = ns;
  p.name = name;
  p.phase = phase;
  p.labels = std::move(labels);
  p.annotations = std::move(annotations);
  return p;
}

TEST(KubernetesMetadataSettings, EachBranchByItsOwnVariableAndWhatItRequires) {
  auto none = kubernetes_metadata_settings(env_of({}), "host1");
  EXPECT_FALSE(none.enabled());
  EXPECT_EQ(none.node_name, "host1");
  auto jobs = kubernetes_metadata_settings(env_of({{"GCM_KUBERNETES_JOB_METADATA_ENABLED", "True"},
                                                   {"GCM_KUBERNETES_JOB_NAMESPACE", "training"},
                                                   {"GCM_KUBERNETES_JOB_ID_LABEL", "job-id"},
                                                   {"GCM_KUBERNETES_USER_LABEL", "user"},
                                                   {"NODE_NAME", "k8s-node-7"}}),
                                           "host1");
  EXPECT_TRUE(jobs.jobs);
  EXPECT_FALSE(jobs.pods);
  EXPECT_EQ(jobs.job_namespace, "training");
  EXPECT_EQ(jobs.user_label, "user");
  EXPECT_EQ(jobs.node_name, "k8s-node-7");
  try {
    kubernetes_metadata_settings(
        env_of({{"GCM_KUBERNETES_JOB_METADATA_ENABLED", "true"}, {"GCM_KUBERNETES_JOB_NAMESPACE", "training"}}), "h");
    FAIL() << "the job id label is required";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "GCM_KUBERNETES_JOB_ID_LABEL is required with GCM_KUBERNETES_JOB_METADATA_ENABLED=true");
  }
  auto pods = kubernetes_metadata_settings(
      env_of({{"GCM_KUBERNETES_METADATA_ENABLED", "true"}, {"GCM_KUBERNETES_METADATA_KEYS", " team , run-id,"}}), "h");
  EXPECT_TRUE(pods.pods);
  EXPECT_EQ(pods.metadata_keys, (std::vector<std::string>{"team", "run-id"}));
  EXPECT_THROW(kubernetes_metadata_settings(env_of({{"GCM_KUBERNETES_METADATA_ENABLED", "true"}}), "h"),
               std::invalid_argument);
  EXPECT_FALSE(kubernetes_metadata_settings(env_of({{"GCM_KUBERNETES_METADATA_ENABLED", "yes"}}), "h").pods)
      << "only true turns a branch on, as in GCM";
}

// One entry per job, the pod with the smallest name, sorted by job id; finished pods and pods of no job left out;
// a label the pod lacks is "".
TEST(KubernetesMetadata, JobFieldsOneEntryPerJobFromItsSmallestPod) {
  KubernetesMetadataSettings s;
  s.jobs = true;
  s.job_id_label = "job-id";
  s.user_label = "user";
  s.org_id_label = "org";
  s.project_id_label = "project";
  std::vector<kube::Pod> pods = {
      pod("t", "train-b-1", "Running", {{"job-id", "b"}, {"user", "bob"}, {"org", "o2"}}),
      pod("t", "train-b-0", "Pending", {{"job-id", "b"}, {"user", "bob0"}, {"org", "o2"}, {"project", "p"}}),
      pod("t", "train-a-0", "Unknown", {{"job-id", "a"}, {"user", "alice"}}),
      pod("t", "done-c-0", "Succeeded", {{"job-id", "c"}}),
      pod("t", "failed-d-0", "Failed", {{"job-id", "d"}}),
      pod("t", "no-job", "Running", {{"user", "x"}}),
  };
  KubernetesJobMetadata m = job_metadata_of(pods, s);
  EXPECT_EQ(m.job_ids, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(m.pod_names, (std::vector<std::string>{"train-a-0", "train-b-0"}));
  EXPECT_EQ(m.users, (std::vector<std::string>{"alice", "bob0"}));
  EXPECT_EQ(m.org_ids, (std::vector<std::string>{"", "o2"}));
  EXPECT_EQ(m.project_ids, (std::vector<std::string>{"", "p"}));
}

TEST(KubernetesMetadata, PodFieldIsCompactJsonOfTheSelectedKeysSortedByNamespaceAndName) {
  std::vector<kube::Pod> pods = {
      pod("ml", "b", "Running", {{"team", "vision"}, {"other", "x"}}, {{"run-id", "r7"}}),
      pod("dev", "z", "Pending", {}, {{"team", "infra"}}),
      pod("ml", "a", "Running", {{"unrelated", "1"}}),
      pod("ml", "c", "Succeeded", {{"team", "vision"}}),
  };
  EXPECT_EQ(pod_metadata_of(pods, {"team", "run-id"}),
            (std::vector<std::string>{
                R"({"annotations":{"team":"infra"},"labels":{},"name":"z","namespace":"dev"})",
                R"({"annotations":{"run-id":"r7"},"labels":{"team":"vision"},"name":"b","namespace":"ml"})"}));
}

json api_pod(const std::string& ns, const std::string& name, const std::string& node, json labels) {
  json p = testing::KubeApiServer::pod(ns, name, node, {{"main", 0}});
  p["metadata"]["labels"] = std::move(labels);
  return p;
}

// The request each branch makes: the job namespace with the label selector (jobs), every namespace (pods), both
// only for this node; a branch whose request fails is null with its error, the other still answers.
TEST(KubernetesMetadata, EachBranchAsksForThisNodesPods) {
  testing::KubeApiServer server;
  server.add_pod(api_pod("training", "t-0", "k8s-node", {{"job-id", "42"}, {"team", "vision"}, {"app", "x"}}));
  server.add_pod(api_pod("training", "t-1", "other-node", {{"job-id", "43"}, {"app", "x"}}));
  server.add_pod(api_pod("training", "t-2", "k8s-node", {{"job-id", "44"}}));
  server.add_pod(api_pod("dev", "nb", "k8s-node", {{"team", "infra"}}));
  KubernetesMetadataSettings s;
  s.jobs = true;
  s.job_namespace = "training";
  s.job_id_label = "job-id";
  s.job_label_selector = "app=x";
  s.pods = true;
  s.metadata_keys = {"team"};
  s.node_name = "k8s-node";
  kube::ApiClient api(server.connection());
  std::vector<std::string> errors;
  KubernetesMetadata m = fetch_kubernetes_metadata(s, api, errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  ASSERT_TRUE(m.jobs);
  EXPECT_EQ(m.jobs->job_ids, (std::vector<std::string>{"42"})) << "t-1 is on another node, t-2 lacks app=x";
  ASSERT_TRUE(m.pod_metadata);
  EXPECT_EQ(m.pod_metadata->size(), 2u);

  server.forbid("list pods");
  errors.clear();
  m = fetch_kubernetes_metadata(s, api, errors);
  EXPECT_FALSE(m.jobs);
  EXPECT_FALSE(m.pod_metadata);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("Kubernetes job metadata: "), std::string::npos);
  EXPECT_NE(errors[0].find("403"), std::string::npos) << errors[0];
}

// Without either branch the record is GCM's; each branch adds its fields (null when not answered).
TEST(KubernetesMetadata, TheRecordHasEachEnabledBranchsFieldsOnly) {
  HealthCheckResult r;
  EXPECT_EQ(health_check_record(r).schema->index_of("active_job_ids"), -1);
  EXPECT_EQ(health_check_record(r).schema->index_of("pod_metadata"), -1);
  r.kubernetes_jobs = true;
  Record jobs_only = health_check_record(r);
  ASSERT_GE(jobs_only.schema->index_of("active_job_ids"), 0);
  EXPECT_TRUE(jobs_only.at("active_job_ids").is_null()) << "enabled, not answered";
  EXPECT_EQ(jobs_only.schema->index_of("pod_metadata"), -1);
  r.kubernetes_pods = true;
  r.kubernetes.pod_metadata = std::vector<std::string>{"{}"};
  Record both = health_check_record(r);
  ASSERT_TRUE(both.at("pod_metadata").is_list());
  EXPECT_EQ(both.at("pod_metadata").as_list().size(), 1u);
  EXPECT_EQ(both.schema->name, "HealthCheckLog");
}

class HealthCheckKubernetesRecord : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(GCM_BINARY)) GTEST_SKIP() << GCM_BINARY << " is not built in this tree";
    server_.connection();  // writes the token file
    std::ofstream(dir_.file("kubeconfig"))
        << "current-context: t\nclusters: [{name: c, cluster: {server: '" << server_.server_url()
        << "', certificate-authority: '" << server_.ca_file() << "'}}]\n"
        << "contexts: [{name: t, context: {cluster: c, user: u}}]\n"
        << "users: [{name: u, user: {token: " << testing::KubeApiServer::kToken << "}}]\n";
    server_.add_pod(api_pod("training", "t-0", "k8s-node", {{"job-id", "42"}, {"user", "alice"}}));
  }
  json record(std::vector<std::string> env) {
    CommandSpec spec;
    spec.argv = {GCM_BINARY,
                 "health_checks",
                 "check-telemetry",
                 "c",
                 "prolog",
                 "--exit-code",
                 "0",
                 "--health-check-name",
                 "check zombie",
                 "--node",
                 "k8s-node",
                 "--job-id",
                 "7",
                 "--sink",
                 "stdout",
                 "--log-folder",
                 dir_.file("logs")};
    env.push_back("KUBECONFIG=" + dir_.file("kubeconfig"));
    env.push_back("KUBERNETES_SERVICE_HOST");
    env.push_back("NODE_NAME=k8s-node");
    spec.extra_env = env;
    spec.timeout = std::chrono::seconds(30);
    CommandResult r = run_command(spec);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json out = json::parse(r.out.substr(0, r.out.find('\n')));
    return out.is_array() ? out.at(0) : out;
  }
  testing::TempDir dir_;
  testing::KubeApiServer server_;
};

TEST_F(HealthCheckKubernetesRecord, NeitherBranchIsGcmsRecordAndAsksNothing) {
  json r = record({"GCM_KUBERNETES_JOB_METADATA_ENABLED", "GCM_KUBERNETES_METADATA_ENABLED"});
  EXPECT_FALSE(r.contains("active_job_ids")) << r.dump();
  EXPECT_FALSE(r.contains("pod_metadata"));
  EXPECT_EQ(server_.requests().size(), 0u);
}

TEST_F(HealthCheckKubernetesRecord, TheJobsBranchNamesTheNodesJobs) {
  json r = record({"GCM_KUBERNETES_JOB_METADATA_ENABLED=true", "GCM_KUBERNETES_JOB_NAMESPACE=training",
                   "GCM_KUBERNETES_JOB_ID_LABEL=job-id", "GCM_KUBERNETES_USER_LABEL=user",
                   "GCM_KUBERNETES_METADATA_ENABLED"});
  EXPECT_EQ(r.at("active_job_ids"), json::array({"42"})) << r.dump();
  EXPECT_EQ(r.at("active_users"), json::array({"alice"}));
  EXPECT_EQ(r.at("active_pod_names"), json::array({"t-0"}));
  EXPECT_FALSE(r.contains("pod_metadata"));
}

TEST_F(HealthCheckKubernetesRecord, AnUnreachableApiServerIsAWarningInTheMessage) {
  server_.forbid("list pods");
  json r = record({"GCM_KUBERNETES_METADATA_ENABLED=true", "GCM_KUBERNETES_METADATA_KEYS=team",
                   "GCM_KUBERNETES_JOB_METADATA_ENABLED"});
  EXPECT_FALSE(r.contains("pod_metadata")) << "null, which the sinks leave out as every null field";
  EXPECT_NE(r.at("_msg").get<std::string>().find("WARNING: Kubernetes pod metadata: "), std::string::npos) << r.dump();
}

}  // namespace
}  // namespace gcm::health

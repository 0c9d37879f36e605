// GPU -> pod attribution from the kubelet's pod-resources API, against a test kubelet on a real unix socket
// (fake_kubelet.h) and, for DRA claims, the scripted API server's ResourceSlices (kube_api_server.h).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "attribution/gpu_jobs.h"
#include "attribution/kubelet_pods.h"
#include "fake_kubelet.h"
#include "gpu/gpu_records.h"
#include "kube_api_server.h"
#include "temp_dir.h"

namespace gcm {
namespace {

using testing::FakeKubelet;
using testing::KubeApiServer;

constexpr const char* kUuid0 = "GPU-8b9c1f2e-0000-4a1b-9c3d-000000000000";
constexpr const char* kUuid1 = "GPU-8b9c1f2e-1111-4a1b-9c3d-111111111111";
constexpr const char* kUuid2 = "GPU-8b9c1f2e-2222-4a1b-9c3d-222222222222";

std::vector<DeviceResult> three_gpus() {
  std::vector<DeviceResult> d(3);
  const char* uuids[] = {kUuid0, kUuid1, kUuid2};
  for (unsigned i = 0; i < 3; ++i) {
    d[i].index = i;
    d[i].sample.uuid = uuids[i];
  }
  return d;
}

struct KubeletAttribution : ::testing::Test {
  void SetUp() override { setenv("GCM_OTLP_GRPC_MODULE", GCM_GRPC_MODULE, 1); }
  KubeletAttributionOptions options(const FakeKubelet& k) {
    KubeletAttributionOptions o;
    o.socket = k.socket();
    o.timeout_s = 5;
    o.node_name = "gpu-node-1";
    return o;
  }
};

// The device plugin's answer: whole GPUs by UUID, a time-sliced replica "<uuid>::<n>", a MIG device (no whole GPU of
// this list), a GPU this host does not have, and a container with CPUs only.
TEST_F(KubeletAttribution, DevicePluginGpusByUuidAndReplica) {
  FakeKubelet kubelet;
  testing::podresources::ListPodResourcesResponse list;
  FakeKubelet::add_container(list, "ml", "trainer-0", "main", "nvidia.com/gpu", {kUuid0, kUuid1});
  FakeKubelet::add_container(list, "ml", "trainer-0", "sidecar", "", {});
  FakeKubelet::add_container(list, "dev", "notebook-7", "jupyter", "nvidia.com/gpu", {std::string(kUuid2) + "::3"});
  FakeKubelet::add_container(list, "dev", "mig-user", "c", "nvidia.com/mig-1g.10gb",
                             {"MIG-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"});
  FakeKubelet::add_container(list, "dev", "elsewhere", "c", "nvidia.com/gpu", {"GPU-not-on-this-host"});
  kubelet.set_pods(list);

  auto got = attribute_kubelet(three_gpus(), options(kubelet));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], (std::vector<PodAssignment>{{"trainer-0", "ml", "main"}}));
  EXPECT_EQ(got[1], (std::vector<PodAssignment>{{"trainer-0", "ml", "main"}}));
  EXPECT_EQ(got[2], (std::vector<PodAssignment>{{"notebook-7", "dev", "jupyter"}}));
  EXPECT_EQ(kubelet.methods(), (std::vector<std::string>{"/v1.PodResourcesLister/List"}));
}

// Time-slicing hands one GPU to many containers; each is a join series, so they stop at kMaxPodsPerGpu.
TEST_F(KubeletAttribution, ContainersOfOneGpuAreBounded) {
  FakeKubelet kubelet;
  testing::podresources::ListPodResourcesResponse list;
  for (int i = 0; i < 20; ++i)
    FakeKubelet::add_container(list, "dev", "shared-" + std::to_string(i), "c", "nvidia.com/gpu",
                               {std::string(kUuid0) + "::" + std::to_string(i)});
  kubelet.set_pods(list);
  auto got = attribute_kubelet(three_gpus(), options(kubelet));
  ASSERT_EQ(got[0].size(), kMaxPodsPerGpu);
  EXPECT_EQ(got[0].front().pod, "shared-0");
  EXPECT_EQ(got[0].back().pod, "shared-" + std::to_string(kMaxPodsPerGpu - 1));
}

// The plug-in's index strategy reports indices instead of UUIDs.
TEST_F(KubeletAttribution, DeviceIndicesAreGpuIndices) {
  std::vector<PodDevice> entries = {{{"p", "ns", "c"}, "nvidia.com/gpu", "1", "", "", ""},
                                    {{"q", "ns", "c"}, "nvidia.com/gpu", "7", "", "", ""}};
  auto got = assign_pod_devices(three_gpus(), entries, {});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[1], (std::vector<PodAssignment>{{"p", "ns", "c"}}));
}

// No kubelet on the socket: the error names the socket and gRPC's status; attribute_gpus reports it under
// "kubelet" and keeps the other sources' answers.
TEST_F(KubeletAttribution, NoKubeletIsAnErrorNamingTheSocket) {
  testing::TempDir dir;
  KubeletAttributionOptions o;
  o.socket = dir.file("absent.sock");
  o.timeout_s = 1;
  try {
    attribute_kubelet(three_gpus(), o);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(o.socket), std::string::npos) << msg;
    EXPECT_NE(msg.find("gRPC status 14"), std::string::npos) << msg;  // UNAVAILABLE
  }
  std::ofstream(dir.file("1")) << "4242\n";
  AttributionOptions ao;
  ao.sources = {"mapping-files", "kubelet"};
  ao.mapping_dir = dir.path();
  ao.kubelet = o;
  std::vector<std::string> errors;
  auto jobs = attribute_gpus(three_gpus(), ao, &errors);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[1].at(0).job_id, 4242);
  EXPECT_FALSE(jobs[1].at(0).pod);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("kubelet: ", 0), 0u) << errors[0];
}

TEST_F(KubeletAttribution, AKubeletErrorStatusIsReported) {
  FakeKubelet kubelet;
  kubelet.fail_with(14);
  try {
    attribute_kubelet(three_gpus(), options(kubelet));
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the kubelet is not ready"), std::string::npos) << e.what();
  }
}

// Slurm on Kubernetes: the mapping file knows the job, the kubelet the pod; the GPU's record carries both. On a
// GPU no Slurm source knows, the pod stands alone (no job id).
TEST_F(KubeletAttribution, JobAndPodMeetInOneRecord) {
  FakeKubelet kubelet;
  testing::podresources::ListPodResourcesResponse list;
  FakeKubelet::add_container(list, "slurm", "slurm-gpu-node-1-slurmd", "slurmd", "nvidia.com/gpu", {kUuid0});
  FakeKubelet::add_container(list, "ml", "inference-5", "server", "nvidia.com/gpu", {kUuid2});
  kubelet.set_pods(list);
  testing::TempDir dir;
  std::ofstream(dir.file("0")) << "777\n";
  AttributionOptions ao;
  ao.sources = {"mapping-files", "kubelet"};
  ao.mapping_dir = dir.path();
  ao.kubelet = options(kubelet);
  std::vector<std::string> errors;
  auto jobs = attribute_gpus(three_gpus(), ao, &errors);
  EXPECT_TRUE(errors.empty()) << errors.at(0);
  ASSERT_EQ(jobs.size(), 2u);
  ASSERT_EQ(jobs[0].size(), 1u);
  EXPECT_EQ(jobs[0][0].job_id, 777);
  EXPECT_EQ(jobs[0][0].pod, "slurm-gpu-node-1-slurmd");
  EXPECT_EQ(jobs[0][0].pod_namespace, "slurm");
  EXPECT_EQ(jobs[0][0].container, "slurmd");
  ASSERT_EQ(jobs[2].size(), 1u);
  EXPECT_FALSE(jobs[2][0].has_job());
  EXPECT_EQ(jobs[2][0].pod, "inference-5");

  Record both = job_info_record(0, std::string(kUuid0), jobs[0][0]);
  EXPECT_EQ(both.at("job_id").as_int(), 777);
  EXPECT_EQ(both.at("pod").as_string(), "slurm-gpu-node-1-slurmd");
  EXPECT_EQ(both.at("namespace").as_string(), "slurm");
  EXPECT_EQ(both.at("container").as_string(), "slurmd");
  Record pod_only = job_info_record(2, std::string(kUuid2), jobs[2][0]);
  EXPECT_TRUE(pod_only.at("job_id").is_null());
  EXPECT_EQ(pod_only.at("pod").as_string(), "inference-5");
}

nlohmann::json resource_slice(const std::string& node, const std::string& api, bool basic) {
  auto device = [&](const std::string& name, const char* uuid) {
    nlohmann::json attrs = {{"index", {{"int", name.back() - '0'}}},
                            {"uuid", {{"string", uuid}}},
                            {"productName", {{"string", "NVIDIA H100 80GB HBM3"}}}};
    nlohmann::json d = {{"name", name}};
    if (basic)
      d["basic"] = {{"attributes", attrs}};
    else
      d["attributes"] = attrs;
    return d;
  };
  return {{"apiVersion", "resource.k8s.io/" + api},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", node + "-gpu.nvidia.com-x7k2p"}}},
          {"spec",
           {{"driver", "gpu.nvidia.com"},
            {"nodeName", node},
            {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", nlohmann::json::array({device("gpu-0", kUuid1), device("gpu-1", kUuid0)})}}}};
}

// Both API versions' layouts: resource.k8s.io/v1 (attributes on the device) and v1beta1 (under "basic").
TEST(KubeletResourceSlices, UuidOfEachDeviceInBothLayouts) {
  auto v1 = resource_slice_uuids({resource_slice("n1", "v1", false)});
  EXPECT_EQ(v1.at("gpu.nvidia.com/n1/gpu-0"), kUuid1);
  EXPECT_EQ(v1.at("gpu.nvidia.com/n1/gpu-1"), kUuid0);
  auto beta = resource_slice_uuids({resource_slice("n1", "v1beta1", true)});
  EXPECT_EQ(beta, v1);
}

// A DRA claim: the device's UUID comes from this node's ResourceSlices (the scripted API server), not from its name
// (here the driver's gpu-0 is GPU 1).
TEST_F(KubeletAttribution, DraClaimsResolveThroughResourceSlices) {
  KubeApiServer api;
  api.add_resource_slice("v1", resource_slice("gpu-node-1", "v1", false));
  api.add_resource_slice("v1", resource_slice("gpu-node-2", "v1", false));
  FakeKubelet kubelet;
  testing::podresources::ListPodResourcesResponse list;
  FakeKubelet::add_container(list, "ml", "dra-job", "main", "", {}, {{"gpu.nvidia.com", "gpu-node-1", "gpu-0"}});
  kubelet.set_pods(list);
  testing::TempDir dir;
  std::ofstream(dir.file("kubeconfig")) << "apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n- name: c\n"
                                        << "  cluster:\n    server: " << api.server_url()
                                        << "\n    certificate-authority: " << api.ca_file() << "\n"
                                        << "users:\n- name: u\n  user:\n    token: " << KubeApiServer::kToken << "\n"
                                        << "contexts:\n- name: t\n  context:\n    cluster: c\n    user: u\n";
  auto o = options(kubelet);
  o.api.kubeconfig = dir.file("kubeconfig");
  std::vector<std::string> errors;
  auto got = attribute_kubelet(three_gpus(), o, &errors);
  EXPECT_TRUE(errors.empty()) << errors.at(0);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[1], (std::vector<PodAssignment>{{"dra-job", "ml", "main"}}));
  auto requests = api.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/apis/resource.k8s.io/v1/resourceslices");
  EXPECT_NE(requests[0].query.find("fieldSelector=spec.nodeName%3Dgpu-node-1"), std::string::npos) << requests[0].query;

  // A second pass finds every device in the cache: no new request.
  attribute_kubelet(three_gpus(), o, &errors);
  EXPECT_EQ(api.requests().size(), 1u);
}

// Without the RBAC to list ResourceSlices the claim's device is read by the NVIDIA driver's name (gpu-<index>), and
// the error says which verb is missing.
TEST_F(KubeletAttribution, AForbiddenSliceListFallsBackToTheDeviceName) {
  KubeApiServer api;
  api.forbid("list resourceslices");
  FakeKubelet kubelet;
  testing::podresources::ListPodResourcesResponse list;
  FakeKubelet::add_container(list, "ml", "dra-job", "main", "", {}, {{"gpu.nvidia.com", "gpu-node-1", "gpu-2"}});
  kubelet.set_pods(list);
  testing::TempDir dir;
  std::ofstream(dir.file("kubeconfig")) << "apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n- name: c\n"
                                        << "  cluster:\n    server: " << api.server_url()
                                        << "\n    certificate-authority: " << api.ca_file() << "\n"
                                        << "users:\n- name: u\n  user:\n    token: " << KubeApiServer::kToken << "\n"
                                        << "contexts:\n- name: t\n  context:\n    cluster: c\n    user: u\n";
  auto o = options(kubelet);
  o.api.kubeconfig = dir.file("kubeconfig");
  std::vector<std::string> errors;
  auto got = attribute_kubelet(three_gpus(), o, &errors);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[2], (std::vector<PodAssignment>{{"dra-job", "ml", "main"}}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("resourceslices"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("\"list\""), std::string::npos) << errors[0];
}

TEST(KubeletAttributionSources, KubeletIsAKnownSource) {
  EXPECT_NO_THROW(check_attribution_sources({"nvml-processes", "kubelet"}));
  try {
    check_attribution_sources({"kubelets"});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("kubelet"), std::string::npos);
  }
}

}  // namespace
}  // namespace gcm

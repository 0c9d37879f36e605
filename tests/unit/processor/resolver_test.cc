// slurm_processor's job resolver for other hosts: one `scontrol show job -d` for the whole cluster per refresh,
// read into every node's GPU table (only jobs that hold an allocation; nodes with the same jobs share a table).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "attribution/slurmctld_jobs.h"
#include "fake_kubelet.h"
#include "processor/job_resolver.h"
#include "processor/node_jobs.h"
#include "temp_dir.h"

namespace gcm::processor {
namespace {

using gcm::testing::TempDir;
using namespace std::chrono_literals;

const std::string kJobsD = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-22.05/scontrol-jobs-d.txt";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

JobInfo job_on(const ClusterJobs& c, const std::string& host, unsigned gpu, size_t nth = 0) {
  return c.jobs.at(c.gpus_of(host).at(gpu).at(nth)).info();
}

// A job of the cluster's table gives back the JobInfo it was made of: each value, and which were absent (an empty
// string is not an absent one).
TEST(ClusterJobs, AJobOfTheTableKeepsWhatItWasMadeOf) {
  JobInfo full;
  full.job_id = 42;
  full.job_name = "train";
  full.job_user = "alice";
  full.job_account = "";
  full.job_partition = "gpu";
  full.job_qos = "high";
  full.job_num_nodes = 16;
  full.array_job_id = 40;
  full.array_task_id = 0;
  JobInfo back = ClusterJob(full).info();
  EXPECT_EQ(back.job_id, 42);
  EXPECT_EQ(back.job_name, "train");
  EXPECT_EQ(back.job_user, "alice");
  EXPECT_EQ(back.job_account, std::optional<std::string>(""));
  EXPECT_EQ(back.job_partition, "gpu");
  EXPECT_EQ(back.job_qos, "high");
  EXPECT_EQ(back.job_num_nodes, 16);
  EXPECT_EQ(back.array_job_id, 40);
  EXPECT_EQ(back.array_task_id, 0);
  JobInfo sparse;
  sparse.job_id = 7;
  sparse.job_qos = "normal";
  back = ClusterJob(sparse).info();
  EXPECT_EQ(back.job_id, 7);
  EXPECT_FALSE(back.job_name || back.job_user || back.job_account || back.job_partition);
  EXPECT_EQ(back.job_qos, "normal");
  EXPECT_FALSE(back.job_num_nodes || back.array_job_id || back.array_task_id);
  EXPECT_FALSE(ClusterJob(JobInfo()).has_job());
  EXPECT_LT(sizeof(ClusterJob), sizeof(JobInfo) / 3);
}

TEST(ClusterJobs, TheTestbedsJobTableGivesEveryNodeItsGpus) {
  std::string text = read(kJobsD);
  ASSERT_FALSE(text.empty()) << kJobsD;
  ClusterJobs c = cluster_jobs_from(text);
  // Of the 19 jobs, six running ones hold GPUs; the pending, ended and CPU-only ones are not kept.
  EXPECT_EQ(c.jobs.size(), 6u);
  ASSERT_EQ(c.hosts.size(), 5u);  // node1, node2 (the 2-node job 62), node3, node4, node6
  EXPECT_EQ(job_on(c, "node1", 0).job_id, 62);
  EXPECT_EQ(job_on(c, "node2", 1).job_id, 62);
  EXPECT_EQ(job_on(c, "node2", 1).job_name, "train-llm");
  EXPECT_EQ(job_on(c, "node3", 0).job_id, 74);
  EXPECT_EQ(job_on(c, "node3", 1).job_id, 75);
  EXPECT_EQ(job_on(c, "node3", 1).array_job_id, 63);
  EXPECT_EQ(job_on(c, "node3", 1).array_task_id, 2);
  EXPECT_EQ(job_on(c, "node4", 0).job_id, 63);
  EXPECT_EQ(job_on(c, "node4", 1).job_id, 64);
  EXPECT_EQ(job_on(c, "node6", 0).job_id, 73);
  EXPECT_EQ(c.skipped_lists, 0u);
}

TEST(ClusterJobs, OnlyJobsHoldingAnAllocationAndEachDetailLineForItsOwnNodes) {
  const char* text =
      "JobId=7 JobName=big\n"
      "   UserId=alice(1000) Account=ml QOS=normal Partition=gpu\n"
      "   JobState=RUNNING NodeList=n[1-3] NumNodes=3\n"
      "     Nodes=n[1-2] CPU_IDs=0-3 Mem=0 GRES=gpu:h100:8(IDX:0-7)\n"
      "     Nodes=n3 CPU_IDs=0-3 Mem=0 GRES=gpu:h100:2(IDX:6-7)\n"
      "\n"
      "JobId=8 JobName=ended\n"
      "   JobState=TIMEOUT NodeList=n4\n"
      "     Nodes=n4 GRES=gpu:1(IDX:0)\n"
      "\n"
      "JobId=9 JobName=leaving\n"
      "   JobState=COMPLETING NodeList=n4\n"
      "     Nodes=n4 GRES=gpu:1(IDX:1)\n"
      "\n"
      "JobId=10 JobName=odd\n"
      "   JobState=RUNNING NodeList=n5\n"
      "     Nodes=n[5 GRES=gpu:1(IDX:0)\n";
  ClusterJobs c = cluster_jobs_from(text);
  ASSERT_EQ(c.jobs.size(), 2u);  // 7 and 9; 8 ended, 10's only list is not a hostlist
  EXPECT_EQ(c.gpus_of("n1").size(), 8u);
  EXPECT_EQ(c.gpus_of("n2").size(), 8u);
  EXPECT_EQ(c.gpus_of("n3").size(), 2u);
  EXPECT_EQ(job_on(c, "n3", 7).job_name, "big");
  EXPECT_EQ(c.gpus_of("n4").size(), 1u);
  EXPECT_EQ(job_on(c, "n4", 1).job_id, 9);
  EXPECT_TRUE(c.gpus_of("n5").empty());
  EXPECT_EQ(std::count(c.hosts.begin(), c.hosts.end(), "n5"), 0);
  EXPECT_EQ(c.skipped_lists, 1u);
  for (std::string_view held : {"RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING"})
    EXPECT_TRUE(job_state_holds_allocation(held)) << held;
  for (std::string_view over : {"PENDING", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"})
    EXPECT_FALSE(job_state_holds_allocation(over)) << over;
}

TEST(ClusterJobs, NodesWithTheSameJobsShareOneTable) {
  ClusterNodeJobs t = cluster_node_jobs(cluster_jobs_from(read(kJobsD)));
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t.at("node1").get(), t.at("node2").get());
  EXPECT_NE(t.at("node3").get(), t.at("node4").get());
  const NodeJobs& n3 = *t.at("node3");
  ASSERT_EQ(n3.by_gpu.size(), 2u);
  ASSERT_TRUE(n3.gpu("0") && n3.gpu("1"));
  EXPECT_EQ((*n3.gpu("0"))[0], "74");
  EXPECT_EQ((*n3.gpu("1"))[0], "75");
  EXPECT_EQ(n3.gpu(int64_t{1}), n3.gpu("1"));
  EXPECT_EQ(n3.values(0), (std::vector<std::string_view>{"74", "75"}));
  // One job's fields are made once, for every GPU and node of it.
  ASSERT_TRUE(t.at("node1")->gpu("0"));
  EXPECT_EQ(t.at("node1")->gpu("0"), t.at("node2")->gpu("1"));
  EXPECT_EQ(n3.job_ids_joined(), "74,75");
}

// One job's block of `scontrol show job -d`, holding `gres` on `nodes`.
std::string job_block(int id, const std::string& name, const std::string& nodes, const std::string& gres) {
  return "JobId=" + std::to_string(id) + " JobName=" + name + "\n   UserId=u(1) GroupId=g(1)\n" +
         "   Account=a QOS=normal\n   JobState=RUNNING Reason=None\n   Partition=gpu\n   NumNodes=1\n" +
         "     Nodes=" + nodes + " CPU_IDs=0 Mem=0 GRES=" + gres + "\n\n";
}

// Everything a node's table says, to compare tables made in different ways.
std::string contents(const NodeJobs& n) {
  std::string out;
  for (const auto& [gpu, fields] : n.by_gpu) {
    out += std::to_string(gpu) + ":";
    for (size_t k = 0; k < fields->size(); ++k) out += std::string((*fields)[k]) + "|";
  }
  for (const auto& list : n.lists())
    for (const auto& v : list) out += std::string(v) + ",";
  return out + n.job_ids_joined();
}

// A refresh builds on the table before: a node whose GPUs hold the same jobs, with the same fields, keeps its table
// (the same object); a node where anything changed gets a new one, and every table is what a build from scratch
// gives.
TEST(ClusterJobs, ARefreshKeepsTheTablesOfNodesThatDidNotChange) {
  const std::string before =
      job_block(10, "train", "n[1-2]", "gpu:h100:2(IDX:0-1)") + job_block(11, "a", "n3", "gpu:h100:1(IDX:0)") +
      job_block(12, "b", "n3", "gpu:h100:1(IDX:1)") + job_block(13, "c", "n4", "gpu:h100:1(IDX:0)") +
      job_block(14, "d", "n4", "gpu:h100:1(IDX:0)") + job_block(16, "e", "n6", "gpu:h100:1(IDX:0)") +
      job_block(17, "f", "n6", "gpu:h100:1(IDX:1)");
  const std::string after = job_block(10, "train", "n[1-2]", "gpu:h100:2(IDX:0-1)") +
                            job_block(11, "a", "n3", "gpu:h100:1(IDX:0)") +
                            job_block(12, "b-renamed", "n3", "gpu:h100:1(IDX:1)") +  // a field changed
                            job_block(13, "c", "n4", "gpu:h100:1(IDX:0)") +          // 14 ended: one job left
                            job_block(15, "new", "n5", "gpu:h100:1(IDX:3)") +        // a node gains a job
                            job_block(16, "e", "n6", "gpu:h100:1(IDX:1)") +          // the same jobs, GPUs swapped
                            job_block(17, "f", "n6", "gpu:h100:1(IDX:0)");
  ClusterNodeJobs old_table = cluster_node_jobs(cluster_jobs_from(before));
  ASSERT_EQ(old_table.size(), 5u);
  ASSERT_EQ((*old_table.at("n4")->gpu("0"))[1], "c,d");  // two jobs on one GPU: joined

  ClusterJobs read = cluster_jobs_from(after);
  ClusterNodeJobs refreshed = cluster_node_jobs(read, &old_table);
  ClusterNodeJobs scratch = cluster_node_jobs(read);
  ASSERT_EQ(refreshed.size(), scratch.size());
  for (const auto& [node, table] : scratch) {
    ASSERT_TRUE(refreshed.count(node)) << node;
    EXPECT_EQ(contents(*refreshed.at(node)), contents(*table)) << node;
  }
  EXPECT_EQ(refreshed.at("n1").get(), old_table.at("n1").get());
  EXPECT_EQ(refreshed.at("n2").get(), old_table.at("n2").get());
  for (const char* changed : {"n3", "n4", "n6"})
    EXPECT_NE(refreshed.at(changed).get(), old_table.at(changed).get()) << changed;
  EXPECT_EQ((*refreshed.at("n3")->gpu("1"))[1], "b-renamed");
  EXPECT_EQ((*refreshed.at("n4")->gpu("0"))[1], "c");
  EXPECT_EQ((*refreshed.at("n6")->gpu("0"))[0], "17");
  EXPECT_EQ(refreshed.count("n5"), 1u);

  // The same answer again: every table is kept, and nodes of one job still share one.
  ClusterNodeJobs again = cluster_node_jobs(cluster_jobs_from(after), &refreshed);
  for (const auto& [node, table] : refreshed) EXPECT_EQ(again.at(node).get(), table.get()) << node;
  EXPECT_EQ(again.at("n1").get(), again.at("n2").get());
  // A table with several jobs on one GPU is compared too, not only rebuilt.
  ClusterNodeJobs twice = cluster_node_jobs(cluster_jobs_from(before), &old_table);
  EXPECT_EQ(twice.at("n4").get(), old_table.at("n4").get());
}

// The index of an item's `gpu` attribute names a GPU as decimal text or as an integer, as the old map of "0", "1", ...
// keys did: any other spelling names none.
TEST(NodeJobs, AGpuIsNamedByItsDecimalIndexOrAnInteger) {
  std::map<unsigned, std::vector<JobInfo>> jobs;
  for (unsigned gpu : {0u, 3u, 12u}) {
    JobInfo j;
    j.job_id = 100 + gpu;
    jobs[gpu].push_back(j);
  }
  NodeJobs n = node_jobs_from(jobs);
  ASSERT_EQ(n.by_gpu.size(), 3u);
  for (auto [name, id] : {std::pair{"0", "100"}, std::pair{"3", "103"}, std::pair{"12", "112"}}) {
    ASSERT_TRUE(n.gpu(name)) << name;
    EXPECT_EQ((*n.gpu(name))[0], id) << name;
  }
  EXPECT_EQ(n.gpu(int64_t{12}), n.gpu("12"));
  for (std::string_view none : {"1", "00", "03", "+3", " 3", "3 ", "-0", "", "4294967296", "99999999999", "x"})
    EXPECT_EQ(n.gpu(none), nullptr) << "'" << none << "'";
  for (int64_t none : {int64_t{1}, int64_t{-1}, int64_t{4294967296}, INT64_MIN})
    EXPECT_EQ(n.gpu(none), nullptr) << none;
}

// A fake scontrol that logs each call and fails while `fail` exists.
struct FakeCluster {
  TempDir tmp;
  std::string scontrol = tmp.file("scontrol");
  FakeCluster() {
    std::ofstream(scontrol) << "#!/bin/sh\necho \"$*\" >> " << tmp.file("calls") << "\n"
                            << "[ -e " << tmp.file("fail") << " ] && { echo 'slurm_load_jobs error' >&2; exit 1; }\n"
                            << "exec cat " << kJobsD << "\n";
    std::filesystem::permissions(scontrol, std::filesystem::perms::owner_all);
  }
  std::string calls() const { return read(tmp.file("calls")); }
  size_t call_count() const {
    std::string c = calls();
    return static_cast<size_t>(std::count(c.begin(), c.end(), '\n'));
  }
};

ResolverOptions cluster_options(const FakeCluster& f, std::chrono::milliseconds refresh) {
  ResolverOptions o;
  o.attribution.sources = {"slurmctld"};
  o.attribution.scontrol = f.scontrol;
  o.host = "processor-host";
  o.refresh = refresh;
  return o;
}

TEST(JobResolver, OtherHostsAreAnsweredFromOneClusterReadPerRefresh) {
  FakeCluster f;
  JobResolver r(cluster_options(f, 1h), nullptr);
  auto n3 = r.lookup("node3");
  ASSERT_TRUE(n3);
  EXPECT_EQ(n3->job_ids_joined(), "74,75");
  EXPECT_EQ(r.lookup("node1.cluster.example")->job_ids_joined(), "62");  // a domain name is its node's
  EXPECT_EQ(r.lookup("node2").get(), r.lookup("node1").get());
  auto idle = r.lookup("node5");  // in no job: attributed, nothing to add
  ASSERT_TRUE(idle);
  EXPECT_TRUE(idle->by_gpu.empty());
  EXPECT_EQ(f.calls(), "show job -d\n") << "one call for every host";
  auto s = r.stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 4u);  // five lookups, the first of them a miss
  EXPECT_EQ(s.cluster_jobs, 6u);
  EXPECT_EQ(s.cluster_nodes, 5u);
}

TEST(JobResolver, AFailedRefreshKeepsTheLastTableAndAFailedFirstReadIsNotRetriedPerRequest) {
  FakeCluster f;
  JobResolver r(cluster_options(f, 20ms), nullptr);
  ASSERT_EQ(r.lookup("node3")->job_ids_joined(), "74,75");
  std::ofstream(f.tmp.file("fail")).close();
  r.start();
  auto until = [&](auto done) {
    for (auto deadline = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < deadline;) {
      if (done()) return true;
      r.lookup("node3");  // in use: the refresher keeps reading it
      std::this_thread::sleep_for(5ms);
    }
    return false;
  };
  ASSERT_TRUE(until([&] { return r.stats().errors >= 2; }));
  EXPECT_EQ(r.lookup("node3")->job_ids_joined(), "74,75") << "kept through failed refreshes";
  ASSERT_TRUE(until([&] { return !r.lookup("node3"); })) << "dropped after ten failed rounds";
  r.stop();

  FakeCluster g;
  std::ofstream(g.tmp.file("fail")).close();
  JobResolver first_fails(cluster_options(g, 1h), nullptr);
  EXPECT_FALSE(first_fails.lookup("node3"));
  EXPECT_FALSE(first_fails.lookup("node4"));
  EXPECT_EQ(g.call_count(), 1u) << "requests do not wait for scontrol again; the refresher retries";
  EXPECT_EQ(first_fails.stats().errors, 1u);
}

// After a failed first read, requests do not queue behind the refresher's next one: here that read hangs (its
// scontrol waits for a file to go), and a lookup returns while that scontrol still runs.
TEST(JobResolver, RequestsDoNotWaitForARefreshAfterAFailedFirstRead) {
  TempDir tmp;
  std::string scontrol = tmp.file("scontrol");
  std::ofstream(scontrol) << "#!/bin/sh\necho $$ >> " << tmp.file("pids") << "\n"
                          << "[ -e " << tmp.file("fail") << " ] && exit 1\n"
                          << "while [ -e " << tmp.file("hang") << " ]; do sleep 0.02; done\nexit 1\n";
  std::filesystem::permissions(scontrol, std::filesystem::perms::owner_all);
  std::ofstream(tmp.file("fail")).close();
  std::ofstream(tmp.file("hang")).close();
  ResolverOptions o;
  o.attribution.sources = {"slurmctld"};
  o.attribution.scontrol = scontrol;
  o.attribution.command_timeout = std::chrono::seconds(3);
  o.host = "processor-host";
  o.refresh = 20ms;
  JobResolver r(o, nullptr);
  EXPECT_FALSE(r.lookup("node3"));  // the first read failed
  std::filesystem::remove(tmp.file("fail"));
  r.start();
  pid_t hanging = 0;
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       !hanging && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(5ms);
    std::istringstream pids(read(tmp.file("pids")));
    std::vector<pid_t> all{std::istream_iterator<pid_t>(pids), {}};
    if (all.size() >= 2) hanging = all[1];
  }
  ASSERT_NE(hanging, 0) << "the refresher did not read again";
  EXPECT_FALSE(r.lookup("node3"));
  EXPECT_EQ(::kill(hanging, 0), 0) << "the lookup waited for the hanging read to end";
  std::filesystem::remove(tmp.file("hang"));
  r.stop();
}

TEST(JobResolver, WithoutTheSlurmctldSourceOtherHostsPassUnchanged) {
  FakeCluster f;
  ResolverOptions o = cluster_options(f, 1h);
  o.attribution.sources = {"slurmd-local"};
  JobResolver r(o, nullptr);
  EXPECT_FALSE(r.lookup("node3"));
  EXPECT_EQ(f.call_count(), 0u);
}

// The kubelet source on a Kubernetes node: the kubelet names GPUs by UUID, NVML (the fake here) turns them into
// indices, and the table carries each given GPU's pod beside its job (none here: a plain Kubernetes pod).
TEST(JobResolver, TheKubeletSourceGivesEachGpuItsPod) {
  ::setenv("GCM_OTLP_GRPC_MODULE", GCM_GRPC_MODULE, 1);
  TempDir dir;
  std::ofstream(dir.file("scenario.json"))
      << R"({"devices": [{"uuid": "GPU-k8s-0"}, {"uuid": "GPU-k8s-1"}, {"uuid": "GPU-k8s-2"}]})";
  ::setenv("GCM_FAKE_NVML_SCENARIO", dir.file("scenario.json").c_str(), 1);
  gcm::testing::FakeKubelet kubelet;
  gcm::kubelet::podresources::ListPodResourcesResponse list;
  gcm::testing::FakeKubelet::add_container(list, "ml", "trainer-0", "main", "nvidia.com/gpu", {"GPU-k8s-1"});
  gcm::testing::FakeKubelet::add_container(list, "ml", "trainer-0", "sidecar", "", {});
  kubelet.set_pods(list);
  ResolverOptions o;
  o.attribution.sources = {"kubelet"};
  o.attribution.kubelet.socket = kubelet.socket();
  o.attribution.kubelet.node_name = "k8s-node";
  o.attribution.kubelet.dra_api = false;
  o.nvml_library = GCM_FAKE_NVML;
  o.host = "k8s-node";
  JobResolver r(o, nullptr);
  auto table = r.lookup("k8s-node");
  ::unsetenv("GCM_FAKE_NVML_SCENARIO");
  ASSERT_TRUE(table);
  EXPECT_TRUE(table->by_gpu.empty()) << "no Slurm job on any GPU";
  ASSERT_EQ(table->pods_by_gpu.size(), 1u);
  EXPECT_EQ(table->pods_by_gpu[0].first, 1u);
  EXPECT_EQ(table->pods_by_gpu[0].second, (PodValues{"trainer-0", "ml", "main"}));
  EXPECT_NE(table->pod(1), nullptr);
  EXPECT_EQ(table->pod(0), nullptr);
  EXPECT_EQ(r.stats().errors, 0u);
}

}  // namespace
}  // namespace gcm::processor

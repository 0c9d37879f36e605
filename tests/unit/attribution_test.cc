// Job attribution from process environments and prolog mapping files.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "attribution/gpu_jobs.h"
#include "attribution/job_info.h"

namespace gcm {
namespace {

std::string environ_of(std::initializer_list<std::string> entries) {
  std::string raw;
  for (const auto& e : entries) raw += e + '\0';
  return raw;
}

TEST(Environ, SplitsOnTheFirstEqualsSignAndKeepsTheRest) {
  Environ env = parse_environ(environ_of({"A=1", "OPTS=--x=1 --y=2", "EMPTY=", "NOEQUALS"}));
  EXPECT_EQ(env.at("A"), "1");
  EXPECT_EQ(env.at("OPTS"), "--x=1 --y=2");
  EXPECT_EQ(env.at("EMPTY"), "");
  EXPECT_EQ(env.count("NOEQUALS"), 0u);
}

TEST(JobInfo, FromSlurmEnvironmentAsTheReference) {
  Environ env = parse_environ(environ_of({"SLURM_JOB_ID=1234", "SLURM_JOB_USER=alice", "GPU_DEVICE_ORDINAL=0,1",
                                          "SLURM_JOB_GPUS=0,1", "SLURM_CPUS_ON_NODE=40", "SLURM_JOB_NAME=train",
                                          "SLURM_JOB_PARTITION=gpu", "SLURM_NNODES=2", "SLURM_JOB_ACCOUNT=ml",
                                          "SLURM_ARRAY_JOB_ID=1200", "SLURM_ARRAY_TASK_ID=34"}));
  auto j = job_info_from_environ(env);
  ASSERT_TRUE(j);
  EXPECT_EQ(j->job_id, 1234);
  EXPECT_EQ(j->job_user, "alice");
  EXPECT_EQ(j->job_num_gpus, 2);
  EXPECT_EQ(j->job_cpus_per_gpu, 20.0);
  EXPECT_EQ(j->job_num_nodes, 2);
  EXPECT_EQ(j->job_account, "ml");
  EXPECT_EQ(j->array_task_id, 34);
}

TEST(JobInfo, InconsistentGpuListsOrBadNumbersGiveNoResult) {
  EXPECT_FALSE(job_info_from_environ(
      parse_environ(environ_of({"SLURM_JOB_ID=1", "SLURM_JOB_GPUS=0,1", "GPU_DEVICE_ORDINAL=0"}))));
  EXPECT_FALSE(job_info_from_environ(parse_environ(environ_of({"SLURM_JOB_ID=abc"}))));
  auto no_job = job_info_from_environ(parse_environ(environ_of({"HOME=/root"})));
  ASSERT_TRUE(no_job);
  EXPECT_FALSE(no_job->has_job());
  // SLURM_GPUS counts when SLURM_JOB_GPUS is absent.
  auto j = job_info_from_environ(parse_environ(environ_of({"SLURM_JOB_ID=5", "SLURM_GPUS=1", "GPU_DEVICE_ORDINAL=3"})));
  ASSERT_TRUE(j);
  EXPECT_EQ(j->job_num_gpus, 1);
}

class FakeProc {
 public:
  FakeProc() {
    char tmpl[] = "/tmp/gcm-procfs-XXXXXX";
    root_ = mkdtemp(tmpl);
  }
  ~FakeProc() { std::filesystem::remove_all(root_); }
  void add(uint32_t pid, const std::string& environ) {
    std::filesystem::create_directories(root_ + "/" + std::to_string(pid));
    std::ofstream(root_ + "/" + std::to_string(pid) + "/environ", std::ios::binary) << environ;
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

TEST(Attribution, EveryProcessCountsNotOnlyTheFirst) {
  FakeProc proc;
  proc.add(10, environ_of({"HOME=/"}));  // a non-Slurm process first (e.g. a monitoring agent)
  proc.add(11, environ_of({"SLURM_JOB_ID=7", "SLURM_JOB_GPUS=0", "GPU_DEVICE_ORDINAL=0"}));
  proc.add(12, environ_of({"SLURM_JOB_ID=7", "SLURM_JOB_GPUS=0", "GPU_DEVICE_ORDINAL=0"}));
  proc.add(13, environ_of({"SLURM_JOB_ID=8", "SLURM_JOB_GPUS=0", "GPU_DEVICE_ORDINAL=0"}));
  auto jobs = jobs_from_processes({{10, {}}, {11, {}}, {99, {}}, {12, {}}, {13, {}}}, proc.root());
  ASSERT_EQ(jobs.size(), 2u);  // pid 99 is gone: skipped
  EXPECT_EQ(jobs[0].job_id, 7);
  EXPECT_EQ(jobs[1].job_id, 8);
}

TEST(Attribution, SourcesAreTriedInOrderPerGpu) {
  FakeProc proc;
  proc.add(11, environ_of({"SLURM_JOB_ID=7", "SLURM_JOB_GPUS=0", "GPU_DEVICE_ORDINAL=0"}));
  char tmpl[] = "/tmp/gcm-mapping-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::ofstream(dir + "/0") << "7\n";
  std::ofstream(dir + "/1") << "42\n";  // GPU 1 is allocated but has no process yet
  std::ofstream(dir + "/2") << "garbage\n";
  std::vector<DeviceResult> devices(3);
  for (unsigned i = 0; i < 3; ++i) devices[i].index = i;
  devices[0].sample.processes = std::vector<GpuProcess>{{11, {}}};
  devices[1].sample.processes = std::vector<GpuProcess>{};
  AttributionOptions o;
  o.procfs = proc.root();
  o.mapping_dir = dir;
  o.sources = {"nvml-processes", "mapping-files"};
  auto m = attribute_gpus(devices, o);
  ASSERT_EQ(m.count(0), 1u);
  EXPECT_EQ(m[0][0].job_id, 7);
  ASSERT_EQ(m.count(1), 1u);
  EXPECT_EQ(m[1][0].job_id, 42);
  EXPECT_EQ(m.count(2), 0u);
  o.sources = {"nvml-processes"};
  EXPECT_EQ(attribute_gpus(devices, o).count(1), 0u);
  EXPECT_THROW(check_attribution_sources({"cgroup-v3"}), std::invalid_argument);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gcm

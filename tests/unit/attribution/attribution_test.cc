// Job attribution from process environments and prolog mapping files.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "attribution/cgroup_jobs.h"
#include "attribution/gpu_jobs.h"
#include "attribution/gpu_list.h"
#include "attribution/slurmd_local.h"
#include "attribution/job_info.h"
#include "temp_dir.h"

namespace gcm {
namespace {

using gcm::testing::TempDir;

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
  Environ env = parse_environ(
      environ_of({"SLURM_JOB_ID=1234", "SLURM_JOB_USER=alice", "GPU_DEVICE_ORDINAL=0,1", "SLURM_JOB_GPUS=0,1",
                  "SLURM_CPUS_ON_NODE=40", "SLURM_JOB_NAME=train", "SLURM_JOB_PARTITION=gpu", "SLURM_NNODES=2",
                  "SLURM_JOB_ACCOUNT=ml", "SLURM_ARRAY_JOB_ID=1200", "SLURM_ARRAY_TASK_ID=34"}));
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

TEST(JobInfo, AnAmdJobsGpusComeFromRocrOrHipVisibleDevicesWithoutGpuDeviceOrdinal) {
  auto rocr = job_info_from_environ(parse_environ(
      environ_of({"SLURM_JOB_ID=7", "SLURM_JOB_GPUS=2,3", "ROCR_VISIBLE_DEVICES=2,3", "SLURM_CPUS_ON_NODE=96"})));
  ASSERT_TRUE(rocr);
  EXPECT_EQ(rocr->job_gpus, "2,3");
  EXPECT_EQ(rocr->job_cpus_per_gpu, 48.0);
  auto hip =
      job_info_from_environ(parse_environ(environ_of({"SLURM_JOB_ID=8", "SLURM_JOB_GPUS=5", "HIP_VISIBLE_DEVICES=5"})));
  ASSERT_TRUE(hip);
  EXPECT_EQ(hip->job_gpus, "5");
  // GPU_DEVICE_ORDINAL, the reference's, wins where Slurm set it.
  auto both = job_info_from_environ(parse_environ(
      environ_of({"SLURM_JOB_ID=9", "SLURM_JOB_GPUS=1", "GPU_DEVICE_ORDINAL=1", "ROCR_VISIBLE_DEVICES=0"})));
  ASSERT_TRUE(both);
  EXPECT_EQ(both->job_gpus, "1");
  EXPECT_FALSE(job_info_from_environ(
      parse_environ(environ_of({"SLURM_JOB_ID=10", "SLURM_JOB_GPUS=0,1", "ROCR_VISIBLE_DEVICES=0"}))));
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
  TempDir tmp;
  const std::string& dir = tmp.path();
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

namespace gcm {
namespace {

TEST(GpuList, IndicesRangesAndUuidsAsSlurmAndCudaWriteThem) {
  EXPECT_EQ(parse_gpu_index_list("0,1,3"), (std::vector<unsigned>{0, 1, 3}));
  EXPECT_EQ(parse_gpu_index_list("0-2,6"), (std::vector<unsigned>{0, 1, 2, 6}));
  EXPECT_EQ(parse_gpu_index_list("GPU-8e1a,GPU-77"), (std::vector<unsigned>{}));
  EXPECT_EQ(parse_gpu_index_list("1,1, 2"), (std::vector<unsigned>{1, 2}));
  EXPECT_EQ(parse_gpu_index_list("0-4000000000"), (std::vector<unsigned>{}));  // absurd range: ignored
}

TEST(SlurmdLocal, ListpidsRowsSkipTheHeaderAndSlurmstepd) {
  auto rows = parse_listpids(
      "PID      JOBID    STEPID   LOCALID GLOBALID\n"
      "1234     56       0        0       0\n"
      "1200     -1       -        -       -\n"
      "1235     57       batch    0       0\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::pair<uint32_t, int64_t>{1234, 56}));
  EXPECT_EQ(rows[1], (std::pair<uint32_t, int64_t>{1235, 57}));
}

TEST(SlurmdLocal, EveryJobOfTheNodeIncludingGpusWithoutProcesses) {
  FakeProc proc;
  proc.add(100,
           environ_of({"SLURM_JOB_ID=56", "SLURM_JOB_GPUS=0,1", "SLURM_JOB_USER=alice", "GPU_DEVICE_ORDINAL=0,1"}));
  proc.add(200, environ_of({"HOME=/"}));  // a job whose first pid has no GPU variables (e.g. an extern step)
  proc.add(201, environ_of({"SLURM_JOB_ID=57", "SLURM_JOB_GPUS=3", "SLURM_JOB_USER=bob"}));
  std::string scontrol = proc.root() + "/scontrol";
  std::ofstream(scontrol) << "#!/bin/sh\n[ \"$1\" = listpids ] || exit 3\n"
                             "printf 'PID JOBID STEPID LOCALID GLOBALID\\n100 56 batch 0 0\\n"
                             "999 56 0 0 0\\n200 57 extern 0 0\\n201 57 batch 0 0\\n'\n";
  std::filesystem::permissions(scontrol, std::filesystem::perms::owner_all);
  auto m = attribute_slurmd_local({scontrol, proc.root(), std::chrono::seconds(10)});
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0][0].job_id, 56);
  EXPECT_EQ(m[1][0].job_user, "alice");
  EXPECT_EQ(m[3][0].job_id, 57);  // the pid 200 without GPUs did not stop the search (shelper's partial result)
  EXPECT_EQ(m[3][0].job_user, "bob");
}

TEST(SlurmdLocal, AFailingScontrolIsAnErrorNamingIt) {
  FakeProc proc;
  std::string scontrol = proc.root() + "/scontrol";
  std::ofstream(scontrol)
      << "#!/bin/sh\necho 'slurm_load_jobs error: Unable to contact slurm controller' >&2\nexit 1\n";
  std::filesystem::permissions(scontrol, std::filesystem::perms::owner_all);
  try {
    attribute_slurmd_local({scontrol, proc.root(), std::chrono::seconds(10)});
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("listpids"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Unable to contact"), std::string::npos) << e.what();
  }
  // Through the resolver: the source is skipped, its error reported, the next source still answers.
  std::ofstream(proc.root() + "/0") << "9\n";
  AttributionOptions o;
  o.sources = {"slurmd-local", "mapping-files"};
  o.scontrol = scontrol;
  o.mapping_dir = proc.root();
  std::vector<DeviceResult> devices(1);
  std::vector<std::string> errors;
  auto m = attribute_gpus(devices, o, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("slurmd-local: ", 0), 0u) << errors[0];
  EXPECT_EQ(m[0][0].job_id, 9);
}

TEST(Cgroup, JobOfAProcessFromV1AndV2Paths) {
  EXPECT_EQ(job_id_from_cgroup_path("0::/system.slice/slurmstepd.scope/job_123/step_0/user/task_0"), 123);
  EXPECT_EQ(job_id_from_cgroup_path("5:devices:/slurm/uid_1000/job_77/step_batch"), 77);
  EXPECT_FALSE(job_id_from_cgroup_path("0::/user.slice/user-1000.slice/session-3.scope"));
  FakeProc proc;
  std::filesystem::create_directories(proc.root() + "/42");
  std::ofstream(proc.root() + "/42/cgroup") << "12:pids:/\n0::/system.slice/slurmstepd.scope/job_9001/step_0/user\n";
  EXPECT_EQ(job_id_of_process(proc.root(), 42), 9001);
  EXPECT_FALSE(job_id_of_process(proc.root(), 43));
}

TEST(Cgroup, V1DeviceAllowListsAttributeGpusWithoutProcesses) {
  EXPECT_EQ(nvidia_minors_in_devices_list("c 195:255 rwm\nc 195:2 rwm\nc 195:3 rw\nb 8:0 r\na *:* rwm\n"),
            (std::vector<unsigned>{2, 3}));
  FakeProc proc;
  std::string job = proc.root() + "/cg/devices/slurm/uid_1000/job_55";
  std::filesystem::create_directories(job);
  std::ofstream(job + "/devices.list") << "c 195:255 rwm\nc 195:1 rwm\n";
  std::vector<DeviceResult> devices(2);
  devices[0].index = 0;
  devices[1].index = 1;  // minor number unknown: the index stands in for it
  auto m = attribute_cgroups(devices, {proc.root(), proc.root() + "/cg"});
  EXPECT_EQ(m.count(0), 0u);
  ASSERT_EQ(m.count(1), 1u);
  EXPECT_EQ(m[1][0].job_id, 55);
}

}  // namespace
}  // namespace gcm

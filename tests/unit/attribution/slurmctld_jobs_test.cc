// The slurmctld attribution source: shelper's golden job blocks, this node's detail line only, and the cache.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "attribution/slurmctld_jobs.h"
#include "temp_dir.h"

namespace gcm {
namespace {

using gcm::testing::TempDir;

const std::string kShelper = std::string(GCM_SOURCE_DIR) + "/../shared/fixtures/gcm/shelper/";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SlurmctldAttribution, ShelperGoldenBlocks) {
  if (!std::filesystem::exists(kShelper)) GTEST_SKIP() << "reference fixtures absent: " << kShelper;
  std::string all = read(kShelper + "scontrol_out_all_gpus.txt");
  auto m = gpus_from_job_blocks(all, "node1751");
  ASSERT_EQ(m.size(), 8u);
  for (unsigned g = 0; g < 8; ++g) {
    ASSERT_EQ(m[g].size(), 1u);
    const JobInfo& j = m[g][0];
    EXPECT_EQ(j.job_id, 30214);
    EXPECT_EQ(j.job_user, "test_username");
    EXPECT_EQ(j.job_name, "demo_ods");
    EXPECT_EQ(j.job_qos, "normal");
    EXPECT_EQ(j.array_job_id, 30185);
    EXPECT_EQ(j.array_task_id, 28);
    EXPECT_EQ(j.job_account, "test_account");
    EXPECT_EQ(j.job_partition, "learn");
    EXPECT_EQ(j.job_num_nodes, 1);
  }
  EXPECT_TRUE(gpus_from_job_blocks(all, "node1752").empty());
  std::string some = read(kShelper + "scontrol_out_some_gpus.txt");
  auto s = gpus_from_job_blocks(some, "node1751");
  EXPECT_EQ(s.size(), 4u);
  EXPECT_EQ(s.count(4), 0u);
  std::string none = read(kShelper + "scontrol_out_no_gpus.txt");
  EXPECT_TRUE(gpus_from_job_blocks(none, "node1751").empty());
  std::string arrays = read(kShelper + "scontrol_out_main_array_job.txt");
  auto a = gpus_from_job_blocks(arrays, "node1751");
  ASSERT_EQ(a.count(0), 1u);
  EXPECT_FALSE(a[0][0].array_task_id) << "ArrayTaskId=28-59%100 names many tasks";
  ASSERT_EQ(a.count(5), 1u);
  EXPECT_EQ(a[5][0].job_id, 31214);
  EXPECT_EQ(a[5][0].array_task_id, 128);
}

TEST(SlurmctldAttribution, EachNodeGetsOnlyItsOwnDetailLine) {
  const char* block =
      "JobId=7 JobName=two nodes\n"
      "   UserId=alice(1000) GroupId=alice(1000)\n"
      "   Account=ml QOS=normal Partition=gpu\n"
      "   NodeList=node[1-2] NumNodes=2\n"
      "   JOB_GRES=gpu:4\n"
      "     Nodes=node1 CPU_IDs=0-3 Mem=0 GRES=gpu:a100:2(IDX:0-1)\n"
      "     Nodes=node2 CPU_IDs=0-3 Mem=0 GRES=gpu:a100:2(IDX:2-3)\n";
  auto n2 = gpus_from_job_blocks(block, "node2");
  ASSERT_EQ(n2.size(), 2u);  // shelper merged both lines and gave node2 all four GPUs
  EXPECT_EQ(n2.count(2), 1u);
  EXPECT_EQ(n2.count(3), 1u);
  EXPECT_EQ(n2[2][0].job_name, "two nodes");
  EXPECT_EQ(n2[2][0].job_user, "alice");
  EXPECT_EQ(gpus_from_job_blocks(block, "node1").count(0), 1u);
}

TEST(SlurmctldAttribution, AnswersAreCachedForTheConfiguredTime) {
  TempDir tmp;
  const std::string& dir = tmp.path();
  std::string scontrol = dir + "/scontrol";
  std::ofstream(scontrol)
      << "#!/bin/sh\necho called >> " << dir << "/calls\n"
      << "case \"$1\" in\n"
      << "listpids) printf 'PID JOBID STEPID LOCALID GLOBALID\\n10 5 batch 0 0\\n';;\n"
      << "show) printf 'JobId=5 JobName=x\\n   NodeList=n1\\n     Nodes=n1 GRES=gpu:1(IDX:1)\\n';;\n"
      << "esac\n";
  std::filesystem::permissions(scontrol, std::filesystem::perms::owner_all);
  SlurmctldOptions o;
  o.scontrol = scontrol;
  o.node = "n1";
  o.cache_file = dir + "/cache/gpu2slurm.json";
  o.cache_duration = std::chrono::seconds(300);
  auto first = attribute_slurmctld(o);
  ASSERT_EQ(first.count(1), 1u);
  EXPECT_EQ(first[1][0].job_id, 5);
  auto second = attribute_slurmctld(o);
  ASSERT_EQ(second.count(1), 1u);
  EXPECT_EQ(second[1][0].job_name, "x");
  EXPECT_EQ(read(dir + "/calls"), "called\ncalled\n") << "the second answer must come from the cache";
  EXPECT_EQ(std::filesystem::status(o.cache_file).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  o.cache_duration = std::chrono::seconds(0);
  attribute_slurmctld(o);
  EXPECT_EQ(read(dir + "/calls"), "called\ncalled\ncalled\ncalled\n");
  o.node = "";
  EXPECT_THROW(attribute_slurmctld(o), std::runtime_error);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gcm

// check-nccl's plan: the host groups of each mode, the mpirun command line and the bus bandwidth read off its output.
#include <gtest/gtest.h>

#include <algorithm>

#include "health/nccl_plan.h"
#include "health/tool_run.h"

namespace gcm::health {
namespace {

TEST(NcclPlan, HostGroupsOfEachMode) {
  std::vector<std::string> h = {"a", "b", "c"};
  EXPECT_EQ(nccl_host_groups(h, NcclMode::Single).size(), 3u);
  auto pw = nccl_host_groups(h, NcclMode::Pairwise);
  ASSERT_EQ(pw.size(), 3u);
  EXPECT_EQ(pw[2], (std::vector<std::string>{"b", "c"}));
  auto quick = nccl_host_groups(h, NcclMode::PairwiseQuick);
  ASSERT_EQ(quick.size(), 2u);
  EXPECT_EQ(quick[0], (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(quick[1], (std::vector<std::string>{"c", "a"}));
  EXPECT_EQ(nccl_host_groups({"a", "b", "c", "d"}, NcclMode::PairwiseQuick).size(), 2u);
  EXPECT_THROW(nccl_host_groups({"a"}, NcclMode::Pairwise), std::invalid_argument);
}

TEST(NcclPlan, CommandLine) {
  NcclCommand c;
  c.mpi_opts = split_words("-mca coll_hcoll_enable 0 --bind-to numa");
  c.exports = {"NCCL_DEBUG=WARN"};
  c.tests_dir = "/opt/nccl-tests/build";
  c.op = "all_reduce";
  c.test_opts = split_words("-g 1 -b 32M -e 1G -f 2");
  auto argv = nccl_argv(c, {"h1", "h2"});
  std::vector<std::string> want = {"mpirun",
                                   "--host",
                                   "h1:8,h2:8",
                                   "--np",
                                   "16",
                                   "-mca",
                                   "coll_hcoll_enable",
                                   "0",
                                   "--bind-to",
                                   "numa",
                                   "-x",
                                   "NCCL_DEBUG=WARN",
                                   "-x",
                                   "NCCL_P2P_DISABLE=1",
                                   "-x",
                                   "NCCL_SHM_DISABLE=1",
                                   "/opt/nccl-tests/build/all_reduce_perf",
                                   "-g",
                                   "1",
                                   "-b",
                                   "32M",
                                   "-e",
                                   "1G",
                                   "-f",
                                   "2"};
  EXPECT_EQ(argv, want);
  c.nvlink = true;
  c.np = 4;
  argv = nccl_argv(c, {"h1"});
  EXPECT_EQ(argv[2], "h1:8");
  EXPECT_EQ(argv[4], "4");
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "NCCL_P2P_DISABLE=1"), 0);
}

TEST(NcclPlan, AvgBusBandwidth) {
  EXPECT_EQ(nccl_avg_bus_bandwidth("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 182.314 \n#\n"), 182.314);
  EXPECT_EQ(nccl_avg_bus_bandwidth("# Avg bus bandwidth    : .5\n"), 0.5);
  EXPECT_FALSE(nccl_avg_bus_bandwidth("no figure here\n"));
  EXPECT_FALSE(nccl_avg_bus_bandwidth("# Avg bus bandwidth    : n/a\n"));
}

}  // namespace
}  // namespace gcm::health

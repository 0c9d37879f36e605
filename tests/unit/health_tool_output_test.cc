// dcgmi output judging and check-nccl's plan, on recorded outputs.
#include <gtest/gtest.h>

#include "health/dcgmi_output.h"
#include "health/nccl_plan.h"
#include "health/tool_run.h"

namespace gcm::health {
namespace {

std::string diag_json(const std::string& persistence, const std::string& env_vars, const std::string& memory) {
  return R"({"DCGM GPU Diagnostic": {"test_categories": [
    {"category": "Deployment", "tests": [
      {"name": "Blacklist", "results": [{"status": "Pass"}]},
      {"name": "Persistence Mode", "results": [{"status": ")" +
         persistence + R"("}]},
      {"name": "Environment Variables", "results": [{"status": ")" +
         env_vars + R"("}]}]},
    {"category": "Hardware", "tests": [
      {"name": "GPU Memory", "results": [{"gpu_ids": "0", "status": "Pass"}, {"gpu_ids": "1", "status": ")" +
         memory + R"(", "warnings": [{"warning": "Memory test found 2 errors", "error_id": 40}]}]}]}]}})";
}

TEST(DcgmiDiag, PassFailWarnAsTheReference) {
  auto ok = evaluate_dcgmi_diag(diag_json("Pass", "Pass", "Pass"), {});
  EXPECT_EQ(ok.code, ExitCode::OK);
  EXPECT_EQ(ok.msg, "All checks passed.");
  auto fail = evaluate_dcgmi_diag(diag_json("Fail", "Warn", "Pass"), {});
  EXPECT_EQ(fail.code, ExitCode::CRITICAL);
  EXPECT_EQ(fail.msg, "Persistence Mode failed.\nEnvironment Variables warning.");
  auto warn = evaluate_dcgmi_diag(diag_json("Pass", "Warn", "Pass"), {});
  EXPECT_EQ(warn.code, ExitCode::WARN);
  auto excluded = evaluate_dcgmi_diag(diag_json("Fail", "Warn", "Pass"), {"Persistence Mode", "Environment Variables"});
  EXPECT_EQ(excluded.code, ExitCode::OK);
}

TEST(DcgmiDiag, EveryGpuResultCountsAndIsNamed) {
  // The reference looked at results[0] only and would call this a pass.
  auto v = evaluate_dcgmi_diag(diag_json("Pass", "Pass", "Fail"), {});
  EXPECT_EQ(v.code, ExitCode::CRITICAL);
  EXPECT_EQ(v.msg, "GPU Memory failed on GPU 1: Memory test found 2 errors.");
}

TEST(DcgmiDiag, UnreadableOutputIsWarning) {
  EXPECT_EQ(evaluate_dcgmi_diag("not json", {}).code, ExitCode::WARN);
  EXPECT_EQ(evaluate_dcgmi_diag(R"({"DCGM GPU Diagnostic": {}})", {}).code, ExitCode::WARN);
  EXPECT_EQ(evaluate_dcgmi_diag(R"([1,2])", {}).code, ExitCode::WARN);
}

std::string nvlink_json(const std::string& data_errors) {
  return R"({"body": {"Link 0": {"children": {"CRC FLIT Error": {"value": "0"}, "CRC Data Error": {"value": "0"},
    "Replay Error": {"value": "0"}, "Recovery Error": {"value": "0"}}},
    "Link 1": {"children": {"CRC FLIT Error": {"value": "Not Supported"}, "CRC Data Error": {"value": ")" +
         data_errors + R"("}, "Replay Error": {"value": "0"}, "Recovery Error": {"value": "0"}}}},
    "header": ["NVLINK Error Counts", "GPU 0"]})";
}

TEST(DcgmiNvlink, ErrorCountersAgainstThresholds) {
  auto ok = evaluate_dcgmi_nvlink_errors(nvlink_json("0"), {});
  EXPECT_EQ(ok.code, ExitCode::OK);
  auto bad = evaluate_dcgmi_nvlink_errors(nvlink_json("12"), {});
  EXPECT_EQ(bad.code, ExitCode::CRITICAL);
  EXPECT_EQ(bad.msg, "High CRC Data Error count detected link: Link 1, error count: 12.");
  NvlinkThresholds t;
  t.data = 12;
  EXPECT_EQ(evaluate_dcgmi_nvlink_errors(nvlink_json("12"), t).code, ExitCode::OK);
  EXPECT_EQ(evaluate_dcgmi_nvlink_errors("{}", {}).code, ExitCode::WARN);
  EXPECT_EQ(evaluate_dcgmi_nvlink_errors("", {}).code, ExitCode::WARN);
}

TEST(DcgmiNvlink, LinkStatus) {
  const std::string up =
      "+----------------------+\n|  NvLink Link Status  |\n+----------------------+\nGPUs:\n"
      "    gpuId 0:\n        U U U U U U U U U U U U\n    gpuId 1:\n        U U U U U U U U U U U U\n"
      "NvSwitches:\n    No NvSwitches found.\n\nKey: Up=U, Down=D, Disabled=X, Not Supported=_\n";
  auto ok = evaluate_dcgmi_nvlink_status(up);
  EXPECT_EQ(ok.code, ExitCode::OK);
  EXPECT_EQ(ok.msg, "All nvlink links are up for all GPUs.");
  std::string down = up;
  down.replace(down.find("gpuId 1:\n        U U") + 17, 3, "D X");
  auto bad = evaluate_dcgmi_nvlink_status(down);
  EXPECT_EQ(bad.code, ExitCode::CRITICAL);
  EXPECT_EQ(bad.msg, "gpuId 1 has 1 links down and 1 links disabled.");
}

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

TEST(SplitWords, QuotesGroup) {
  EXPECT_EQ(split_words("  -a 'b c'  \"d e\" f"), (std::vector<std::string>{"-a", "b c", "d e", "f"}));
  EXPECT_TRUE(split_words("   ").empty());
}

}  // namespace
}  // namespace gcm::health

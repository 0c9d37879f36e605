// dcgmi's outputs judged as check-dcgmi does: `dcgmi diag` JSON of DCGM 3.x and 4.x (the recorded 4.x documents in
// tests/fixtures/health_checks/), NVLink error counters and link status.
#include <gtest/gtest.h>

#include "fixture_records.h"
#include "health/dcgmi_output.h"

namespace gcm::health {
namespace {

const std::string kFixtures = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/health_checks/";

std::string fixture(const std::string& name) { return gcm::testing::slurp(kFixtures + name); }

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

// ---- dcgmi diag, DCGM 4.x ----

TEST(DcgmiDiag4, FailingGpuIsNamedFromEntityId) {
  auto v = evaluate_dcgmi_diag(fixture("dcgmi_diag_4x_memory_fail.json"), {});
  EXPECT_EQ(v.code, ExitCode::CRITICAL);
  EXPECT_EQ(v.msg, "memory failed on GPU 1: Found 2 uncorrectable memory errors on GPU 1.");
}

TEST(DcgmiDiag4, ExclusionsTakeThe3xNames) {
  auto v = evaluate_dcgmi_diag(fixture("dcgmi_diag_4x_memory_fail.json"), {"GPU Memory"});
  EXPECT_EQ(v.code, ExitCode::OK) << v.msg;  // 3.x's "GPU Memory" is 4.x's "memory"
  EXPECT_EQ(v.msg, "All checks passed.");
}

TEST(DcgmiDiag4, TestSummaryAloneDecides) {
  // A test with no per-GPU result (a skipped or system-wide test) but a failing summary, as GCM judges 4.x.
  std::string doc = R"({"DCGM Diagnostic": {"test_categories": [{"category": "Stress", "tests": [
      {"name": "targeted_power", "results": [], "test_summary": {"status": "Warn",
       "warnings": [{"warning": "Power limit reached"}]}}]}]}})";
  auto v = evaluate_dcgmi_diag(doc, {});
  EXPECT_EQ(v.code, ExitCode::WARN);
  EXPECT_EQ(v.msg, "targeted_power warning: Power limit reached.");
  EXPECT_EQ(evaluate_dcgmi_diag(doc, {"Targeted Power"}).code, ExitCode::OK);
  EXPECT_EQ(evaluate_dcgmi_diag(doc, {"Targeted Stress"}).code, ExitCode::WARN);
}

TEST(DcgmiDiag4, NeitherDocumentKeyCannotBeJudged) {
  auto v = evaluate_dcgmi_diag(R"({"DCGM Diagnostics": {"test_categories": []}})", {});
  EXPECT_EQ(v.code, ExitCode::WARN);
  EXPECT_NE(v.msg.find("\"DCGM Diagnostic\""), std::string::npos) << v.msg;
}

}  // namespace
}  // namespace gcm::health

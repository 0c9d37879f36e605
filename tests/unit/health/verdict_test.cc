// health/verdict.h and CheckRun::run_standard: a check returns its verdict and the framework alone applies the
// killswitches, prints the stdout line and sends the records, in the reference's shapes (one record for a plain
// check; one record per sub-check and none for the whole for check-nvidia-smi and check-dcgmi nvlink).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <utility>
#include <vector>

#include "health/check.h"
#include "temp_dir.h"

namespace gcm::health {
namespace {

using gcm::testing::TempDir;

struct SentRecord {
  std::string health_check, msg;
  int64_t result = 0;
};

class RecordingSink : public Sink {
 public:
  explicit RecordingSink(std::vector<SentRecord>* out) : out_(out) {}
  void write(const Record& r) override {
    out_->push_back({r.at("health_check").as_string(), r.at("_msg").as_string(), r.at("result").as_int()});
  }

 private:
  std::vector<SentRecord>* out_;
};

Killswitches killswitches(const std::string& toml) {
  TempDir tmp;
  const std::string& dir = tmp.path();
  std::ofstream(dir + "/f.toml") << "[HealthChecksFeatures]\n" << toml;
  Killswitches k = Killswitches::load(dir + "/f.toml");
  return k;
}

struct Harness {
  CheckRun run;
  std::vector<SentRecord> sent;
  std::vector<std::pair<std::string, CheckOutcome>> printed;
  Harness() {
    run.sink = std::make_unique<RecordingSink>(&sent);
    run.on_output = [this](const std::string& name, const CheckOutcome& o) { printed.emplace_back(name, o); };
  }
};

TEST(Verdict, APlainCheckIsOneLineAndOneRecord) {
  Harness h;
  int rc = h.run.run_standard("check x", "disable_check_zombie", [] {
    return CheckOutcome{ExitCode::WARN, "a little wrong"};
  });
  EXPECT_EQ(rc, 1);
  ASSERT_EQ(h.printed.size(), 1u);
  EXPECT_EQ(h.printed[0].first, "check x");
  EXPECT_EQ(h.printed[0].second.msg, "a little wrong");
  ASSERT_EQ(h.sent.size(), 1u);
  EXPECT_EQ(h.sent[0].health_check, "check x");
  EXPECT_EQ(h.sent[0].result, 1);
}

TEST(Verdict, TheFrameworkAppliesTheCheckKillswitchWithoutRunningIt) {
  Harness h;
  h.run.killswitches = killswitches("disable_check_zombie = true\n");
  bool ran = false;
  int rc = h.run.run_standard("check zombie", "disable_check_zombie", [&] {
    ran = true;
    return CheckOutcome{ExitCode::CRITICAL, "zombies"};
  });
  EXPECT_FALSE(ran);
  EXPECT_EQ(rc, 0);
  ASSERT_EQ(h.sent.size(), 1u);
  EXPECT_EQ(h.sent[0].msg, "check zombie is disabled by killswitch.");
}

TEST(Verdict, SubChecksSendOneRecordEachAndTheOverallIsOnlyTheLine) {
  Harness h;
  h.run.killswitches = killswitches("disable_nvidia_smi_gpu_temp = true\n");
  bool disabled_ran = false;
  int rc = h.run.run_standard("nvidia smi", "disable_nvidia_smi", [&]() -> Verdict {
    SubChecks parts(h.run.killswitches);
    parts.run("nvidia smi gpu_num", {"disable_nvidia_smi_gpu_num"}, [] { return CheckOutcome{ExitCode::OK, ""}; });
    parts.run("nvidia smi gpu_temp", {"disable_nvidia_smi_gpu_temp"}, [&] {
      disabled_ran = true;
      return CheckOutcome{ExitCode::CRITICAL, "hot"};
    });
    parts.run_each("nvidia smi row_remap", {"disable_nvidia_smi_row_remap"}, [](const SubChecks::Emit& emit) {
      emit({ExitCode::WARN, "GPU 0: pending"});
      emit({ExitCode::OK, ""});
    });
    return std::move(parts).verdict();
  });
  EXPECT_FALSE(disabled_ran);
  EXPECT_EQ(rc, 1) << "the worst of OK, OK (disabled), WARNING, OK";
  ASSERT_EQ(h.sent.size(), 4u) << "one record per part, none for the whole";
  EXPECT_EQ(h.sent[0].health_check, "nvidia smi gpu_num");
  EXPECT_EQ(h.sent[1].health_check, "nvidia smi gpu_temp");
  EXPECT_EQ(h.sent[1].msg, "nvidia smi gpu_temp is disabled by killswitch.");
  EXPECT_EQ(h.sent[2].health_check, "nvidia smi row_remap");
  EXPECT_EQ(h.sent[3].health_check, "nvidia smi row_remap");
  ASSERT_EQ(h.printed.size(), 1u);
  EXPECT_EQ(h.printed[0].first, "nvidia smi");
  EXPECT_EQ(h.printed[0].second.code, ExitCode::WARN);
  EXPECT_EQ(h.printed[0].second.msg, "nvidia smi gpu_temp is disabled by killswitch.\nGPU 0: pending")
      << "the non-empty messages, one per line";
}

TEST(Verdict, AnyOfASubChecksKillswitchesDisablesIt) {
  auto k = killswitches("disable_dcgmi_nvlink = true\n");
  SubChecks parts(k);
  parts.run("check dcgmi nvlink status", {"disable_dcgmi_nvlink", "disable_dcgmi_nvlink_status"}, [] {
    return CheckOutcome{ExitCode::CRITICAL, "down"};
  });
  Verdict v = std::move(parts).verdict();
  EXPECT_FALSE(v.overall_record);
  ASSERT_EQ(v.parts.size(), 1u);
  EXPECT_EQ(v.parts[0].outcome.code, ExitCode::OK);
}

TEST(Verdict, NoSubCheckRunLeavesTheOverallUnknown) {
  Killswitches none;
  Verdict v = SubChecks(none).verdict();
  EXPECT_EQ(v.overall.code, ExitCode::UNKNOWN);
  EXPECT_TRUE(v.parts.empty());
}

}  // namespace
}  // namespace gcm::health

// The health-check framework's rules: exit-code aggregation (UNKNOWN lowest), status words, the stdout line per
// TYPE, killswitch files, gpu_node_id.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "health/check.h"
#include "temp_dir.h"

namespace gcm::health {
namespace {

using gcm::testing::TempDir;

TEST(HealthExitCodes, UnknownRanksLowest) {
  EXPECT_EQ(worse(ExitCode::UNKNOWN, ExitCode::OK), ExitCode::OK);
  EXPECT_EQ(worse(ExitCode::OK, ExitCode::WARN), ExitCode::WARN);
  EXPECT_EQ(worse(ExitCode::CRITICAL, ExitCode::WARN), ExitCode::CRITICAL);
  EXPECT_EQ(worse(ExitCode::UNKNOWN, ExitCode::UNKNOWN), ExitCode::UNKNOWN);
  EXPECT_STREQ(status_word(ExitCode::WARN), "WARNING");
  EXPECT_FALSE(exit_code_from_int(4));
  EXPECT_FALSE(parse_check_type("Nagios"));  // case-sensitive, as the reference
}

TEST(HealthOutput, LinePerType) {
  CheckRun r;
  CheckOutcome o{ExitCode::CRITICAL, "GPU 3 is hot"};
  r.type = CheckType::Nagios;
  EXPECT_EQ(r.output_line("check x", o), "CRITICAL - check x");
  r.type = CheckType::App;
  EXPECT_EQ(r.output_line("check x", o), "CRITICAL - check x. GPU 3 is hot");
  EXPECT_EQ(r.output_line("check x", {ExitCode::OK, ""}), "OK - check x");
  r.type = CheckType::Prolog;
  EXPECT_FALSE(r.output_line("check x", o));
  r.verbose_out = true;
  EXPECT_EQ(r.output_line("check x", o), "CRITICAL - check x. GPU 3 is hot");
}

TEST(HealthKillswitches, FileFlagsTypesAndUnknownNames) {
  TempDir tmp;
  const std::string& dir = tmp.path();
  std::ofstream(dir + "/f.toml") << "[HealthChecksFeatures]\ndisable_check_zombie = true\n"
                                    "disable_check_dstate = false\ndisable_chek_typo = true\n";
  std::vector<std::string> warnings;
  auto k = Killswitches::load(dir + "/f.toml", &warnings);
  EXPECT_TRUE(k.disabled("disable_check_zombie"));
  EXPECT_FALSE(k.disabled("disable_check_dstate"));
  EXPECT_FALSE(k.disabled("disable_link_flap"));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("unknown flag disable_chek_typo"), std::string::npos) << warnings[0];
  std::ofstream(dir + "/bad.toml") << "[HealthChecksFeatures]\ndisable_check_zombie = 1\n";
  EXPECT_THROW(Killswitches::load(dir + "/bad.toml"), KillswitchError);
  EXPECT_THROW(Killswitches::load(dir + "/missing.toml"), KillswitchError);
  // Not TOML at all: every check stays enabled, with a warning (one bad push must not stop every prolog).
  std::ofstream(dir + "/broken.toml") << "[HealthChecksFeatures\ndisable_check_zombie = true\n";
  warnings.clear();
  auto none = Killswitches::load(dir + "/broken.toml", &warnings);
  EXPECT_FALSE(none.disabled("disable_check_zombie"));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("not loaded"), std::string::npos) << warnings[0];
  ASSERT_TRUE(none.load_failure());
  EXPECT_NE(none.load_failure()->find(dir + "/broken.toml:1:"), std::string::npos) << *none.load_failure();
  EXPECT_FALSE(k.load_failure());
  std::filesystem::remove_all(dir);
}

TEST(HealthKillswitches, DirectoryOrUnreadableFileIsAFileError) {
  TempDir tmp;
  const std::string& dir = tmp.path();
  try {
    Killswitches::load(dir);
    ADD_FAILURE() << "a directory left every check enabled";
  } catch (const KillswitchFileError& e) {
    EXPECT_NE(std::string(e.what()).find(dir + " is a directory"), std::string::npos) << e.what();
  }
  std::string locked = dir + "/locked.toml";
  std::ofstream(locked) << "[HealthChecksFeatures]\ndisable_check_zombie = true\n";
  ::chmod(locked.c_str(), 0);
  if (::geteuid() != 0) {  // root reads a mode-0 file
    try {
      Killswitches::load(locked);
      ADD_FAILURE() << "an unreadable killswitch file left every check enabled";
    } catch (const KillswitchFileError& e) {
      EXPECT_NE(std::string(e.what()).find(locked + " cannot be read: Permission denied"), std::string::npos)
          << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(HealthTelemetry, SetupWarningsAreInEveryRecordMessage) {
  TempDir tmp;
  const std::string& dir = tmp.path();
  std::vector<std::string> opts = {"file_path=" + dir + "/out.json"};
  SinkContext sctx;
  sctx.command = "health_checks";
  CheckRun r;
  r.cluster = "c";
  r.sink = make_sink("file", opts, sctx);
  r.telemetry_warnings.push_back("features config f.toml:1:1: not valid TOML");
  r.send_telemetry("check x", {ExitCode::OK, "all good"}, CheckRun::now());
  r.sink.reset();
  std::ifstream in(dir + "/out.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("all good\\nWARNING: features config f.toml:1:1: not valid TOML"), std::string::npos) << text;
  std::filesystem::remove_all(dir);
}

TEST(HealthRecord, GpuNodeIdIsStableAndOrderFree) {
  EXPECT_EQ(gpu_node_id_of({"GPU-a", "GPU-b"}), gpu_node_id_of({"GPU-b", "GPU-a"}));
  EXPECT_NE(gpu_node_id_of({"GPU-a", "GPU-b"}), gpu_node_id_of({"GPU-a", "GPU-c"}));
  EXPECT_EQ(gpu_node_id_of({"GPU-a"}).size(), 16u);
}

}  // namespace
}  // namespace gcm::health

// cli/command_startup.h: the one start-up path of the commands and its exit codes.
#include "cli/command_startup.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "cli/option_binder.h"
#include "core/usage_error.h"

namespace gcm {
namespace {

struct Startup : ::testing::Test {
  std::string dir = (std::filesystem::temp_directory_path() / ("gcm-startup-" + std::to_string(::getpid()))).string();
  CLI::App app{"test"};
  OptionBinder binder{app};
  int64_t count = 1;
  std::string level = "INFO";

  void SetUp() override {
    std::filesystem::create_directories(dir);
    binder.option("--count", "count", count, "A number.");
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  CommandStartup startup() {
    CommandStartup s{"test", {{{"test"}, &binder}}};
    s.log = [this] { return LogSetup{"test", "", dir, level, false}; };
    return s;
  }
  // Runs `body` through run_command with `config` as the [gcm] file; returns the exit code and what went to stderr.
  std::pair<int, std::string> run(const std::string& config, CommandStartup s, const CommandBody& body,
                                  std::vector<std::string> root_warnings = {}) {
    ConfigFile cfg = ConfigFile::from_string(config, "gcm");
    Invocation inv{cfg};
    inv.warnings = std::move(root_warnings);
    ::testing::internal::CaptureStderr();
    int rc = run_command(inv, s, body);
    return {rc, ::testing::internal::GetCapturedStderr()};
  }
};

TEST_F(Startup, TheConfigFillsOptionsAndWarningsReachStderrAndTheLog) {
  auto [rc, err] = run("[gcm.test]\ncount = 7\ncolour = 'red'\n", startup(),
                       [&](const auto& log) {
                         log->flush();
                         return static_cast<int>(count);
                       },
                       {"config file '/x' does not exist; using defaults"});
  EXPECT_EQ(rc, 7);
  EXPECT_NE(err.find("Warning: config file '/x' does not exist"), std::string::npos) << err;
  EXPECT_NE(err.find("colour"), std::string::npos) << err;
}

TEST_F(Startup, ABadConfigValueOrValidationIsExit2BeforeTheBodyRuns) {
  bool ran = false;
  auto body = [&](const auto&) {
    ran = true;
    return 0;
  };
  auto [rc, err] = run("[gcm.test]\ncount = 'many'\n", startup(), body);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("Error: "), std::string::npos) << err;
  CommandStartup s = startup();
  s.validate = [] { throw std::invalid_argument("--count must be odd"); };
  std::tie(rc, err) = run("", s, body);
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(err, "Error: --count must be odd\n");
  EXPECT_FALSE(ran);
}

TEST_F(Startup, ABadLogLevelOrPrepareIsExit2) {
  level = "LOUD";
  auto [rc, err] = run("", startup(), [](const auto&) { return 0; });
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("Error: --log-level: "), std::string::npos) << err;
  level = "INFO";
  CommandStartup s = startup();
  s.prepare = [](const auto&) { throw UsageError("Sink 'nope' could not be found"); };
  std::tie(rc, err) = run("", s, [](const auto&) { return 0; });
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("Error: Sink 'nope' could not be found"), std::string::npos) << err;
}

TEST_F(Startup, FailuresOfTheWorkMapToOneSetOfExitCodes) {
  auto code_of = [&](const std::function<void()>& fail) {
    return run("", startup(), [&](const auto&) {
      fail();
      return 0;
    });
  };
  auto [rc, err] = code_of([] { throw UsageError("--x and --y exclude each other"); });
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(err, "Error: --x and --y exclude each other\n");
  std::tie(rc, err) = code_of([] { throw UnavailableError("NVML", "libnvidia-ml.so.1 not found"); });
  EXPECT_EQ(rc, kExitUnavailable);
  EXPECT_EQ(err, "Error: NVML is unavailable: libnvidia-ml.so.1 not found\n");
  std::tie(rc, err) = code_of([] { throw std::runtime_error("slurmctld did not answer"); });
  EXPECT_EQ(rc, 1);
  // The log copies critical lines to stderr too; the error line is there once.
  EXPECT_NE(err.find("Error: slurmctld did not answer\n"), std::string::npos) << err;
}

TEST_F(Startup, ACommandWithoutALogWritesNoFile) {
  CommandStartup s{"report", {{{"test"}, &binder}}};
  auto [rc, err] = run("", s, [](const auto& log) {
    log->warn("nowhere");
    return 0;
  });
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(ParseCommandLine, HelpIsExit0AndAParseErrorExit2WithTheHint) {
  CLI::App app{"t"};
  int n = 0;
  app.add_option("--n", n, "n");
  ::testing::internal::CaptureStdout();
  auto help = parse_command_line(
      app, [&] { app.parse(std::vector<std::string>{"--help"}); }, "hint");
  ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(help.has_value());
  EXPECT_EQ(*help, 0);
  ::testing::internal::CaptureStderr();
  auto bad = parse_command_line(
      app, [&] { app.parse(std::vector<std::string>{"--nope"}); }, "Try 't --help'.");
  std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(*bad, 2);
  EXPECT_NE(err.find("Try 't --help'."), std::string::npos) << err;
  EXPECT_FALSE(parse_command_line(
                   app,
                   [&] {
                     app.parse(std::vector<std::string>{"3", "--n"});  // CLI11 takes a vector last word first
                   },
                   "")
                   .has_value());
  EXPECT_EQ(n, 3);
}

}  // namespace
}  // namespace gcm

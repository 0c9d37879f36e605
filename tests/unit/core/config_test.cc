#include "core/config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli/option_binder.h"
#include "temp_dir.h"

namespace gcm {
namespace {

using gcm::testing::TempDir;

struct Opts {
  std::string sink = "stdout";
  int64_t interval = 300;
  bool once = false;
  std::vector<std::string> sink_opts;
  std::string log_folder = "default_logs";
};

struct Fixture {
  CLI::App app{"t"};
  CLI::App* sub = nullptr;
  CLI::App* nested = nullptr;
  Opts opts, nested_opts;
  std::unique_ptr<OptionBinder> binder, nested_binder;
  std::vector<std::string> warnings;

  Fixture() {
    sub = app.add_subcommand("slurm_monitor");
    binder = std::make_unique<OptionBinder>(*sub);
    add(*binder, opts);
    CLI::App* group = app.add_subcommand("sacct_backfill");
    nested = group->add_subcommand("new");
    nested_binder = std::make_unique<OptionBinder>(*nested);
    add(*nested_binder, nested_opts);
  }
  static void add(OptionBinder& b, Opts& o) {
    b.option("--sink", "sink", o.sink, "");
    b.option("--interval", "interval", o.interval, "");
    b.flag("--once", "once", o.once, "");
    b.option("-o,--sink-opt", "sink_opts", o.sink_opts, "")->allow_extra_args(false);
    b.option("--log-folder", "log_folder", o.log_folder, "");
  }
  void run(std::vector<std::string> args, const std::string& toml) {
    std::vector<const char*> argv = {"t"};
    for (auto& a : args) argv.push_back(a.c_str());
    app.parse(static_cast<int>(argv.size()), argv.data());
    ConfigFile cfg = ConfigFile::from_string(toml, "gcm", "test.toml");
    auto warn = [&](const std::string& w) { warnings.push_back(w); };
    if (sub->parsed()) apply_config(cfg, {"slurm_monitor"}, *binder, {}, warn);
    if (nested->parsed()) apply_config(cfg, {"sacct_backfill", "new"}, *nested_binder, {}, warn);
  }
};

TEST(Config, DefaultThenConfigThenCommandLine) {
  Fixture f;
  f.run({"slurm_monitor", "--interval", "5"},
        "[gcm.slurm_monitor]\nsink = 'otel'\ninterval = 60\nlog_folder = '/var/log'\n");
  EXPECT_EQ(f.opts.sink, "otel");  // config over default
  EXPECT_EQ(f.opts.interval, 5);   // command line over config
  EXPECT_EQ(f.opts.log_folder, "/var/log");
  EXPECT_TRUE(f.warnings.empty());
}

TEST(Config, UntouchedOptionsKeepDefaults) {
  Fixture f;
  f.run({"slurm_monitor"}, "[gcm.other]\nsink = 'otel'\n");
  EXPECT_EQ(f.opts.sink, "stdout");
  EXPECT_EQ(f.opts.interval, 300);
}

TEST(Config, BooleansAndLists) {
  Fixture f;
  f.run({"slurm_monitor"}, "[gcm.slurm_monitor]\nonce = true\nsink_opts = ['a=1', \"b={'k': 'v'}\"]\n");
  EXPECT_TRUE(f.opts.once);
  EXPECT_EQ(f.opts.sink_opts, (std::vector<std::string>{"a=1", "b={'k': 'v'}"}));
}

TEST(Config, RepeatedOptionOnCommandLineReplacesTheConfigList) {
  Fixture f;
  f.run({"slurm_monitor", "-o", "c=3"}, "[gcm.slurm_monitor]\nsink_opts = ['a=1', 'b=2']\n");
  EXPECT_EQ(f.opts.sink_opts, (std::vector<std::string>{"c=3"}));
}

TEST(Config, NestedSubcommandTables) {
  Fixture f;
  f.run({"sacct_backfill", "new"}, "[gcm.sacct_backfill]\n[gcm.sacct_backfill.new]\ninterval = 7\n");
  EXPECT_EQ(f.nested_opts.interval, 7);
}

TEST(Config, UnknownKeysAreWarnedAboutWithTable) {
  Fixture f;
  f.run({"slurm_monitor"}, "[gcm.slurm_monitor]\nverbose = true\n");
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_NE(f.warnings[0].find("unknown key 'verbose' in [gcm.slurm_monitor]"), std::string::npos);
}

TEST(Config, BadValueNamesFileTableAndKey) {
  Fixture f;
  try {
    f.run({"slurm_monitor"}, "[gcm.slurm_monitor]\ninterval = 'soon'\n");
    FAIL();
  } catch (const ConfigError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("test.toml"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[gcm.slurm_monitor] interval"), std::string::npos) << msg;
  }
}

TEST(Config, InvalidTomlNamesLineAndColumn) {
  try {
    ConfigFile::from_string("[gcm]\na = 1\nb = = 2\n", "gcm", "bad.toml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("bad.toml:3:", 0), 0u) << e.what();
  }
}

TEST(Config, MissingRootTableListsValidNames) {
  try {
    ConfigFile::from_string("[other]\na = 1\n[more]\n", "gcm", "x.toml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(
        std::string(e.what()).find("'gcm' is not a top-level table name in x.toml. Valid names: ['more', 'other']"),
        std::string::npos)
        << e.what();
  }
}

TEST(Config, MissingFileAndDevNullAreEmpty) {
  EXPECT_TRUE(ConfigFile::load(std::string("/nonexistent/x.toml"), "gcm", {}).empty());
  EXPECT_TRUE(ConfigFile::load(std::string("/dev/null"), "gcm", {}).empty());
  EXPECT_TRUE(ConfigFile::load(std::nullopt, "gcm", {"/nonexistent/a.toml"}).empty());
}

TEST(Config, DirectoryOrUnreadableFileIsAnErrorNamingIt) {
  TempDir tmp;
  const std::string& dir = tmp.path();
  try {
    ConfigFile::load(std::string(dir), "gcm", {});
    ADD_FAILURE() << "a directory was taken as an empty config";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(std::string(dir) + ": is a directory"), std::string::npos) << e.what();
  }
  // A default path that is a directory is a mistake too, not "no config".
  EXPECT_THROW(ConfigFile::load(std::nullopt, "gcm", {std::string(dir)}), ConfigError);
  std::string locked = std::string(dir) + "/locked.toml";
  std::ofstream(locked) << "[gcm.x]\na = 1\n";
  ::chmod(locked.c_str(), 0);
  if (::geteuid() != 0) {  // root reads a mode-0 file
    try {
      ConfigFile::load(locked, "gcm", {});
      ADD_FAILURE() << "an unreadable config was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(locked + ": cannot read the config file: Permission denied"),
                std::string::npos)
          << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(Config, DefaultPathsAreTriedInOrder) {
  TempDir tmp;
  const std::string& dir = tmp.path();
  std::string second = std::string(dir) + "/fb-gcm.toml";
  std::ofstream(second) << "[gcm.x]\na = 1\n";
  ConfigFile cfg = ConfigFile::load(std::nullopt, "gcm", {std::string(dir) + "/missing.toml", second});
  EXPECT_EQ(cfg.path(), second);
  ASSERT_NE(cfg.table_for({"x"}), nullptr);
}

}  // namespace
}  // namespace gcm

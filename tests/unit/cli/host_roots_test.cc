// core/host_roots.h: each --path.* option is declared once, under its path_* config key; the kernel-log checks also
// accept their first, dotted spelling (path.kmsg, path.procfs) in a config file.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/option_binder.h"
#include "core/config.h"
#include "core/host_roots.h"
#include "health/checks/kernel_log_source.h"

namespace gcm {
namespace {

TEST(HostRoots, AbsoluteHostPathsAreRebasedUnderTheirRoot) {
  HostRoots r;
  r.procfs = "/fixture/proc";
  r.sysfs = "/fixture/sys";
  r.rootfs = "/fixture/root";
  EXPECT_EQ(r.proc("buddyinfo"), "/fixture/proc/buddyinfo");
  EXPECT_EQ(r.sys("/class/net"), "/fixture/sys/class/net");
  EXPECT_EQ(r.root("/etc/fstab"), "/fixture/root/etc/fstab");
  EXPECT_EQ(HostRoots{}.proc("uptime"), "/proc/uptime");
}

TEST(HostRoots, AnOptionHasTheRootsFlagKeyDefaultAndTheCommandsHelp) {
  CLI::App app;
  OptionBinder b(app);
  std::string procfs = kProcfsRoot.default_value, run;
  add_host_root_option(b, kProcfsRoot, procfs, "Where /proc is mounted (mountinfo).");
  add_host_root_option(b, kRunRoot, run, nullptr, false);
  ASSERT_EQ(b.bindings().size(), 2u);
  EXPECT_EQ(b.bindings()[0].first, "path_procfs");
  EXPECT_EQ(b.bindings()[1].first, "path_run");
  EXPECT_EQ(app.get_option("--path.procfs")->get_description(), "Where /proc is mounted (mountinfo).");
  EXPECT_EQ(app.get_option("--path.procfs")->get_default_str(), "/proc");
  EXPECT_EQ(app.get_option("--path.run")->get_description(), kRunRoot.help);
  EXPECT_EQ(app.get_option("--path.run")->get_default_str(), "") << "its default is resolved later";
}

// The config keys of check-syslogs xid/link-flap/... : path_kmsg and path_procfs, as for every other command, and
// the old path.kmsg and path.procfs, which were these checks' keys first.
std::pair<std::string, std::string> kernel_log_roots_from(const std::string& toml) {
  CLI::App app;
  OptionBinder b(app);
  health::KernelLogSource src;
  src.bind(b);
  app.parse(std::vector<std::string>{});
  ConfigFile cfg = ConfigFile::from_string("[health_checks.check-syslogs.xid]\n" + toml, "health_checks", "t.toml");
  std::vector<std::string> warnings;
  apply_config(cfg, {"check-syslogs", "xid"}, b, {}, [&](const std::string& w) { warnings.push_back(w); });
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  return {src.kmsg, src.procfs};
}

TEST(HostRoots, KernelLogChecksReadTheKeyAndItsOldDottedSpelling) {
  EXPECT_EQ(kernel_log_roots_from("path_kmsg = \"/k\"\npath_procfs = \"/p\"\n"),
            std::make_pair(std::string("/k"), std::string("/p")));
  EXPECT_EQ(kernel_log_roots_from("\"path.kmsg\" = \"/k\"\n\"path.procfs\" = \"/p\"\n"),
            std::make_pair(std::string("/k"), std::string("/p")));
  EXPECT_EQ(kernel_log_roots_from(""), std::make_pair(std::string("/dev/kmsg"), std::string("/proc")));
}

}  // namespace
}  // namespace gcm

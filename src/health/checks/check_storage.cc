// health_checks check-storage: disk-usage, disk-size (statvfs with the check's timeout, under --path.rootfs: what
// `df` prints, without df), mounted-directory and check-mountpoint (the mount table of --path.procfs, fstab under
// --path.rootfs), file-exists, directory-exists.
#include <sys/statvfs.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/option_binder.h"
#include "health/checks/host_check.h"
#include "storage/mountinfo.h"
#include "storage/statvfs_timeout.h"

namespace gcm::health {
namespace {

const bool kCheckStorageGroupRegistered = register_health_group(
    "check-storage", "Storage checks: disk usage and size, mounts, files and directories that must (not) exist.");

struct statvfs stat_volume(const HostRoots& roots, const std::string& volume, int64_t timeout_s) {
  std::string path = roots.root(volume);
  auto r = statvfs_with_timeout(path, std::chrono::seconds(timeout_s));
  if (r.status == StatvfsStatus::TimedOut)
    throw std::runtime_error(fmt::format("statvfs {} did not answer within {} s", volume, timeout_s));
  if (r.status != StatvfsStatus::Ok)
    throw std::runtime_error(fmt::format("statvfs {} failed: {}", volume, std::strerror(r.error)));
  return r.st;
}

// df's percentages: used / (used + available), rounded up.
int df_percent(double used, double avail) {
  if (used + avail <= 0) return 0;
  return static_cast<int>(std::ceil(used * 100.0 / (used + avail)));
}

struct UsageOpts {
  HostRoots roots;
  std::vector<std::string> volumes;
  int critical = 85, warning = 80;
  bool inode_check = false;
};

ExitCode usage_level(int pct, const UsageOpts& o) {
  if (pct > o.critical) return ExitCode::CRITICAL;
  if (pct > o.warning) return ExitCode::WARN;
  return ExitCode::OK;
}

const bool kUsage = register_simple_check<UsageOpts>(
    {"check-storage", "disk-usage"},
    "Block (and with --inode-check inode) usage of each volume against the thresholds (percent used, as df).", true,
    "disk usage", "disable_disk_usage",
    [](OptionBinder& b, UsageOpts& o) {
      b.option("-v,--volume", "volume", o.volumes, "A mounted volume, repeatable.")
          ->required()
          ->allow_extra_args(false);
      b.option("--usage-critical-threshold", "usage_critical_threshold", o.critical, "CRITICAL above this percent.")
          ->capture_default_str();
      b.option("--usage-warning-threshold", "usage_warning_threshold", o.warning, "WARNING above this percent.")
          ->capture_default_str();
      b.flag("--inode-check,!--no-inode-check", "inode_check", o.inode_check, "Also check inode usage.");
      add_rootfs_option(b, o.roots);
    },
    [](CheckRun& r, const UsageOpts& o) -> CheckOutcome {
      Findings v;
      for (const auto& vol : o.volumes) {
        struct statvfs st {};
        try {
          st = stat_volume(o.roots, vol, r.timeout_s);
        } catch (const std::exception& e) {
          v.add(ExitCode::WARN, fmt::format("Volume {}: {}", vol, e.what()));
          continue;
        }
        double f = static_cast<double>(st.f_frsize ? st.f_frsize : st.f_bsize);
        int used = df_percent(static_cast<double>(st.f_blocks - st.f_bfree) * f, static_cast<double>(st.f_bavail) * f);
        ExitCode c = usage_level(used, o);
        std::string msg;
        if (c == ExitCode::OK)
          msg = fmt::format("Volume {}: Disk usage, {}%, is within limits.", vol, used);
        else
          msg = fmt::format("Volume {}: Disk usage, {}%, is above the {} threshold of {}%.", vol, used,
                            c == ExitCode::CRITICAL ? "critical" : "warning",
                            c == ExitCode::CRITICAL ? o.critical : o.warning);
        v.add(c, msg);
        if (o.inode_check) {
          if (st.f_files == 0) {
            v.add(ExitCode::OK, fmt::format("Volume {}: no inode limit.", vol));
          } else {
            int ipct = df_percent(static_cast<double>(st.f_files - st.f_ffree), static_cast<double>(st.f_favail));
            ExitCode ic = usage_level(ipct, o);
            v.add(ic, ic == ExitCode::OK ? fmt::format("Volume {}: Inode usage, {}%, is within limits.", vol, ipct)
                                         : fmt::format("Volume {}: Inode usage, {}%, is above the {} threshold of "
                                                       "{}%.",
                                                       vol, ipct, ic == ExitCode::CRITICAL ? "critical" : "warning",
                                                       ic == ExitCode::CRITICAL ? o.critical : o.warning));
          }
        }
      }
      return v.outcome();
    });

struct SizeOpts {
  HostRoots roots;
  std::string volume;
  std::string unit = "K";
  std::string op;
  long long value = 0;
};

const bool kSize = register_simple_check<SizeOpts>(
    {"check-storage", "disk-size"},
    "CRITICAL unless the volume's size (in --size-unit, rounded up as df -B prints it) satisfies "
    "'size --operator --value'.",
    true, "disk size", "disable_disk_size",
    [](OptionBinder& b, SizeOpts& o) {
      b.option("-v,--volume", "volume", o.volume, "The volume.")->required();
      b.option("--size-unit", "size_unit", o.unit, "K, M, G or T (powers of 1024).")
          ->capture_default_str()
          ->check(CLI::IsMember({"K", "M", "G", "T"}));
      b.option("--operator", "operator", o.op, "One of > < = <= >=.")
          ->required()
          ->check(CLI::IsMember({">", "<", "=", "<=", ">="}));
      b.option("--value", "value", o.value, "The size to compare with, in --size-unit.")->required();
      add_rootfs_option(b, o.roots);
    },
    [](CheckRun& r, const SizeOpts& o) -> CheckOutcome {
      struct statvfs st = stat_volume(o.roots, o.volume, r.timeout_s);
      double unit = std::pow(1024.0, 1 + std::string("KMGT").find(o.unit));
      double bytes = static_cast<double>(st.f_blocks) * static_cast<double>(st.f_frsize ? st.f_frsize : st.f_bsize);
      auto actual = static_cast<long long>(std::ceil(bytes / unit));
      bool ok = o.op == ">"    ? actual > o.value
                : o.op == "<"  ? actual < o.value
                : o.op == "="  ? actual == o.value
                : o.op == "<=" ? actual <= o.value
                               : actual >= o.value;
      return {ok ? ExitCode::OK : ExitCode::CRITICAL, fmt::format("Disk size, {}{} {} {}{}{}", actual, o.unit, o.op,
                                                                  o.value, o.unit, ok ? "" : " is not true.")};
    });

// Mount points of the mount table (<procfs>/self/mountinfo, else <procfs>/mounts).
std::vector<std::string> mount_points(const HostRoots& roots) {
  std::vector<std::string> v;
  if (auto mi = read_file(roots.proc("self/mountinfo"))) {
    for (const auto& m : parse_mountinfo(*mi, roots.proc("self/mountinfo"))) v.push_back(m.mount_point);
    return v;
  }
  auto m = read_file(roots.proc("mounts"));
  if (!m) throw std::runtime_error(fmt::format("cannot read the mount table {}", roots.proc("mounts")));
  for (const auto& line : split_lines(*m)) {
    auto f = split_ws(line);
    if (f.size() >= 2) v.push_back(unescape_octal(f[1]));
  }
  return v;
}

struct MountedOpts {
  HostRoots roots;
  std::vector<std::string> dirs;
};

const bool kMounted = register_simple_check<MountedOpts>(
    {"check-storage", "mounted-directory"}, "CRITICAL when a directory is not a mount point of the mount table.", true,
    "mounted directory", "disable_mounted_dir",
    [](OptionBinder& b, MountedOpts& o) {
      b.option("-d,--directory", "directory", o.dirs, "A directory that must be mounted, repeatable.")
          ->required()
          ->allow_extra_args(false);
      add_procfs_option(b, o.roots);
    },
    [](CheckRun&, const MountedOpts& o) -> CheckOutcome {
      auto mps = mount_points(o.roots);
      Findings v;
      for (auto d : o.dirs) {
        while (d.size() > 1 && d.back() == '/') d.pop_back();
        bool found = std::find(mps.begin(), mps.end(), d) != mps.end();
        v.add(found ? ExitCode::OK : ExitCode::CRITICAL,
              fmt::format("Directory {}: {}", d, found ? "mounted." : "directory is not mounted."));
      }
      return v.outcome();
    });

struct FileOpts {
  HostRoots roots;
  std::vector<std::string> files;
  bool should_not_exist = false;
};

const bool kFile = register_simple_check<FileOpts>(
    {"check-storage", "file-exists"}, "CRITICAL when a file is missing (or, with --should-not-exist, present).", false,
    "file exists check", "disable_file_exists",
    [](OptionBinder& b, FileOpts& o) {
      b.option("-f,--file", "file", o.files, "A regular file, repeatable.")->required()->allow_extra_args(false);
      b.flag("--should-not-exist", "should_not_exist", o.should_not_exist, "The files must be absent instead.");
      add_rootfs_option(b, o.roots);
    },
    [](CheckRun&, const FileOpts& o) -> CheckOutcome {
      Findings v{ExitCode::OK, {}};
      for (const auto& f : o.files) {
        std::error_code ec;
        bool is = std::filesystem::is_regular_file(o.roots.root(f), ec);
        if (is == o.should_not_exist)
          v.add(ExitCode::CRITICAL, is ? fmt::format("File {} exists.", f) : fmt::format("File {} not found.", f));
      }
      if (v.msgs.empty()) v.msgs.push_back(o.should_not_exist ? "All files are absent." : "All files are present.");
      return v.outcome();
    });

struct DirOpts {
  HostRoots roots;
  std::vector<std::string> dirs;
};

const bool kDir = register_simple_check<DirOpts>(
    {"check-storage", "directory-exists"}, "CRITICAL when a directory is missing.", false, "directory exists check",
    "disable_dir_exists",
    [](OptionBinder& b, DirOpts& o) {
      b.option("-d,--directory", "directory", o.dirs, "A directory, repeatable.")->required()->allow_extra_args(false);
      add_rootfs_option(b, o.roots);
    },
    [](CheckRun&, const DirOpts& o) -> CheckOutcome {
      Findings v{ExitCode::OK, {}};
      for (const auto& d : o.dirs) {
        std::error_code ec;
        if (!std::filesystem::is_directory(o.roots.root(d), ec))
          v.add(ExitCode::CRITICAL, fmt::format("Directory {} not found.", d));
      }
      if (v.msgs.empty()) v.msgs.push_back("All directories are present.");
      return v.outcome();
    });

struct MountpointOpts {
  HostRoots roots;
  std::vector<std::string> patterns;
};

// The second field of the lines of a fstab-format file that match the pattern (an awk pattern: "/re/" or a regex).
std::set<std::string> matching_dirs(const std::string& text, const std::regex& re) {
  std::set<std::string> dirs;
  for (const auto& line : split_lines(text)) {
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (!std::regex_search(line, re)) continue;
    auto f = split_ws(line);
    if (f.size() >= 2) dirs.insert(unescape_octal(f[1]));
  }
  return dirs;
}

const bool kMountpoint = register_simple_check<MountpointOpts>(
    {"check-storage", "check-mountpoint"},
    "CRITICAL when a mount point of /etc/fstab whose line matches --mountpoint is not in the mount table.", true,
    "check mountpoint", "disable_check_mountpoint",
    [](OptionBinder& b, MountpointOpts& o) {
      b.option("--mountpoint", "mountpoint", o.patterns,
               "Pattern selecting fstab lines (an awk-style /regex/ or a plain regex), repeatable.")
          ->required()
          ->allow_extra_args(false);
      add_rootfs_option(b, o.roots);
      add_procfs_option(b, o.roots);
    },
    [](CheckRun&, const MountpointOpts& o) -> CheckOutcome {
      auto fstab = read_file(o.roots.root("/etc/fstab"));
      if (!fstab) return {ExitCode::WARN, fmt::format("cannot read {}", o.roots.root("/etc/fstab"))};
      auto mounts = read_file(o.roots.proc("mounts"));
      if (!mounts) return {ExitCode::WARN, fmt::format("cannot read {}", o.roots.proc("mounts"))};
      std::vector<std::string> missing;
      for (auto p : o.patterns) {
        if (p.size() >= 2 && p.front() == '/' && p.back() == '/') p = p.substr(1, p.size() - 2);
        std::regex re;
        try {
          re = std::regex(p, std::regex::extended);
        } catch (const std::regex_error& e) {
          throw CheckUsageError(fmt::format("--mountpoint '{}' is not a valid regex: {}", p, e.what()));
        }
        auto want = matching_dirs(*fstab, re);
        auto have = matching_dirs(*mounts, re);
        for (const auto& d : want)
          if (!have.count(d)) missing.push_back(d);
      }
      if (!missing.empty())
        return {ExitCode::CRITICAL, fmt::format("the following dirs are not mounted: [{}]", fmt::join(missing, ", "))};
      return {ExitCode::OK, "fstab and mounts have the same entries"};
    });

}  // namespace
}  // namespace gcm::health

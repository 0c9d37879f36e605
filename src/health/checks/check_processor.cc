// health_checks check-processor: processor-freq (/proc/cpuinfo), cpufreq-governor and check-clocksource (sysfs
// files), check-buddyinfo (/proc/buddyinfo), check-mem-size (DIMMs from `dmidecode --type 17`). Host files are read
// under --path.procfs/--path.sysfs; a path option given as /proc/... or /sys/... is rebased there.
#include <glob.h>

#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/option_binder.h"
#include "health/checks/host_check.h"

namespace gcm::health {
namespace {

const bool kCheckProcessorGroupRegistered = register_health_group(
    "check-processor",
    "Processor and memory checks: CPU frequency and governor, clock source, DIMMs, memory fragmentation.");

// "/proc/x" under --path.procfs, "/sys/x" under --path.sysfs, anything else as given.
std::string proc_or_sys_path(const HostRoots& r, const std::string& p) {
  if (p.rfind("/proc/", 0) == 0) return r.proc(p.substr(6));
  if (p.rfind("/sys/", 0) == 0) return r.sys(p.substr(5));
  return p;
}

struct FreqOpts {
  HostRoots roots;
  long long proc_freq = 1498;
};

const bool kFreq = register_simple_check<FreqOpts>(
    {"check-processor", "processor-freq"},
    "CRITICAL when the average 'cpu MHz' of /proc/cpuinfo (whole MHz per CPU) is below --proc_freq.", true,
    "processor frequency", "disable_proc_freq",
    [](OptionBinder& b, FreqOpts& o) {
      b.option("--proc_freq,--proc-freq", "proc_freq", o.proc_freq, "Expected minimum average frequency in MHz.")
          ->capture_default_str();
      add_procfs_option(b, o.roots);
      add_sysfs_option(b, o.roots);
    },
    [](CheckRun&, const FreqOpts& o) -> CheckOutcome {
      auto text = read_file(o.roots.proc("cpuinfo"));
      if (!text) return {ExitCode::WARN, fmt::format("cannot read {}", o.roots.proc("cpuinfo"))};
      long long sum = 0, count = 0;
      for (const auto& line : split_lines(*text)) {
        if (line.find("MHz") == std::string::npos) continue;
        size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string v = trim(line.substr(colon + 1));
        try {
          sum += static_cast<long long>(std::stod(v));
        } catch (const std::exception&) {
          return {ExitCode::WARN, fmt::format("cpuinfo line '{}': expected a number of MHz", line)};
        }
        ++count;
      }
      if (count == 0) return {ExitCode::WARN, fmt::format("no 'cpu MHz' line in {}", o.roots.proc("cpuinfo"))};
      long long avg = sum / count;
      if (avg < o.proc_freq)
        return {ExitCode::CRITICAL,
                fmt::format("Processor frequency {} MHz is below the expected {} MHz.", avg, o.proc_freq)};
      return {ExitCode::OK, fmt::format("Processor frequency {} MHz, expected at least {} MHz.", avg, o.proc_freq)};
    });

struct GovOpts {
  HostRoots roots;
  std::string governor = "performance";
  std::string file = "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor";
};

const bool kGov = register_simple_check<GovOpts>(
    {"check-processor", "cpufreq-governor"},
    "CRITICAL when the CPUs' scaling governors differ from each other or from --governor.", true, "frequency governor",
    "disable_freq_governor",
    [](OptionBinder& b, GovOpts& o) {
      b.option("--governor", "governor", o.governor, "Expected governor.")->capture_default_str();
      b.option("--sys_freq_file,--sys-freq-file", "sys_freq_file", o.file, "Glob of the governor files.")
          ->capture_default_str();
      add_procfs_option(b, o.roots);
      add_sysfs_option(b, o.roots);
    },
    [](CheckRun&, const GovOpts& o) -> CheckOutcome {
      std::string pattern = proc_or_sys_path(o.roots, o.file);
      glob_t g{};
      int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
      std::vector<std::string> files(g.gl_pathv, g.gl_pathv + (rc == 0 ? g.gl_pathc : 0));
      ::globfree(&g);
      if (files.empty()) return {ExitCode::WARN, fmt::format("no governor file matches {}", pattern)};
      std::set<std::string> seen;
      for (const auto& f : files) {
        auto v = read_trimmed(f);
        if (!v) return {ExitCode::WARN, fmt::format("cannot read {}", f)};
        seen.insert(*v);
      }
      if (seen.size() > 1)
        return {ExitCode::CRITICAL,
                fmt::format("different governors detected among the cpus: {}", fmt::join(seen, ", "))};
      if (*seen.begin() != o.governor)
        return {ExitCode::CRITICAL, fmt::format("governor is {}, expected {}.", *seen.begin(), o.governor)};
      return {ExitCode::OK, fmt::format("governor is {} on {} cpus.", o.governor, files.size())};
    });

struct MemOpts {
  std::optional<long long> dimms, total;
  bool sudo = true;
};

// The reference's per-host-prefix defaults (DIMMs, total GB).
std::optional<std::pair<long long, long long>> default_mem_for(const std::string& host) {
  static const std::vector<std::tuple<std::string, long long, long long>> table = {
      {"rscadmin", 16, 1024}, {"rsclearn", 32, 2048},  {"rsccache", 8, 512},
      {"rsccpu", 16, 1024},   {"avaadmin", 16, 1024},  {"avacache", 8, 512},
      {"avalearn", 32, 2048}, {"avaworker", 16, 1024}, {"avacpu", 16, 1024}};
  for (const auto& [prefix, d, t] : table)
    if (host.rfind(prefix, 0) == 0) return std::make_pair(d, t);
  return std::nullopt;
}

const bool kMem = register_simple_check<MemOpts>(
    {"check-processor", "check-mem-size"},
    "CRITICAL when the DIMM count or total memory (GB) reported by `dmidecode --type 17` differs from --dimms / "
    "--total-size (both, or neither for the built-in per-host-prefix defaults).",
    true, "check memory size", "disable_check_mem_size",
    [](OptionBinder& b, MemOpts& o) {
      b.option("--dimms", "dimms", o.dimms, "Expected number of DIMMs.");
      b.option("--total-size", "total_size", o.total, "Expected total memory in GB.");
      b.flag("--sudo,!--no-sudo", "sudo", o.sudo, "Run dmidecode through sudo when not root (default: on).");
    },
    [](CheckRun& r, const MemOpts& o) -> CheckOutcome {
      if (o.dimms.has_value() != o.total.has_value())
        throw CheckUsageError("You have to specify both dimms and total-size");
      long long want_d, want_t;
      if (o.dimms) {
        want_d = *o.dimms;
        want_t = *o.total;
      } else {
        auto d = default_mem_for(node_hostname());
        if (!d)
          return {ExitCode::WARN, fmt::format("no default DIMM count and size for host {}; give --dimms and "
                                              "--total-size",
                                              node_hostname())};
        std::tie(want_d, want_t) = *d;
      }
      auto t = run_tool(maybe_sudo({"dmidecode", "--type", "17"}, o.sudo), r.timeout_s);
      if (!t.ok()) return {ExitCode::WARN, t.failure()};
      long long dimms = 0, total = 0;
      for (const auto& line : split_lines(t.out)) {
        if (line.rfind("\tSize: ", 0) != 0) continue;
        auto f = split_ws(line.substr(7));
        if (f.size() != 2) continue;  // "No Module Installed"
        auto n = parse_int(f[0]);
        if (!n) continue;
        if (f[1] == "GB") {
          ++dimms;
          total += *n;
        } else if (f[1] == "TB") {
          ++dimms;
          total += *n * 1024;
        } else if (f[1] == "MB") {
          ++dimms;
          total += *n / 1024;
        }
      }
      if (dimms == want_d && total == want_t)
        return {ExitCode::OK, fmt::format("Memory size as expected. DIMMs: {} and Total size: {} GB", dimms, total)};
      return {ExitCode::CRITICAL,
              fmt::format("Memory size not as expected. Expected DIMMs/Total size GB: {}/{} and found {}/{}.", want_d,
                          want_t, dimms, total)};
    });

struct BuddyOpts {
  HostRoots roots;
  std::string path = "/proc/buddyinfo";
};

const bool kBuddy = register_simple_check<BuddyOpts>(
    {"check-processor", "check-buddyinfo"},
    "CRITICAL when a NUMA node's Normal zone has fewer than 10 free blocks at every order of 8 or higher (memory "
    "too fragmented for large allocations).",
    false, "check buddyinfo", "disable_check_buddyinfo",
    [](OptionBinder& b, BuddyOpts& o) {
      b.option("--buddyinfo_path,--buddyinfo-path", "buddyinfo_path", o.path, "The buddyinfo file.")
          ->capture_default_str();
      add_procfs_option(b, o.roots);
      add_sysfs_option(b, o.roots);
    },
    [](CheckRun&, const BuddyOpts& o) -> CheckOutcome {
      std::string path = proc_or_sys_path(o.roots, o.path);
      auto text = read_file(path);
      if (!text) return {ExitCode::WARN, fmt::format("cannot read {}", path)};
      static const std::regex re(R"(^\s*Node\s+(\d+).*zone\s+(\w+)\s+([\d ]+\s*$))");
      Findings v{ExitCode::OK, {}};
      int zones = 0;
      for (const auto& line : split_lines(*text)) {
        std::smatch m;
        if (!std::regex_match(line, m, re)) continue;
        if (m[2] != "Normal") continue;
        ++zones;
        std::vector<long long> counts;
        for (const auto& w : split_ws(m[3].str())) counts.push_back(parse_int(w).value_or(0));
        bool enough = false;
        for (size_t order = 8; order < counts.size(); ++order) enough = enough || counts[order] >= 10;
        if (!enough)
          v.add(ExitCode::CRITICAL,
                fmt::format("insufficient number of memory blocks of order 8 or higher on node: {} zone: Normal "
                            "blocks: [{}]",
                            m[1].str(), fmt::join(counts, ", ")));
      }
      if (zones == 0) return {ExitCode::WARN, fmt::format("no Normal zone line in {}", path)};
      if (v.msgs.empty()) v.msgs.push_back("sufficient number of memory");
      return v.outcome();
    });

struct ClockOpts {
  HostRoots roots;
  std::string expected;
  std::string file = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
};

const bool kClock = register_simple_check<ClockOpts>(
    {"check-processor", "check-clocksource"}, "CRITICAL when the current clock source is not --expected-source.", true,
    "check clocksource", "disable_check_clocksource",
    [](OptionBinder& b, ClockOpts& o) {
      b.option("--expected-source", "expected_source", o.expected, "e.g. tsc.")->required();
      b.option("--sys-clocksource-file", "sys_clocksource_file", o.file, "The current clock source file.")
          ->capture_default_str();
      add_procfs_option(b, o.roots);
      add_sysfs_option(b, o.roots);
    },
    [](CheckRun&, const ClockOpts& o) -> CheckOutcome {
      std::string path = proc_or_sys_path(o.roots, o.file);
      auto v = read_trimmed(path);
      if (!v) return {ExitCode::WARN, fmt::format("cannot read {}", path)};
      if (*v != o.expected)
        return {ExitCode::CRITICAL, fmt::format("clock source is {}, expected {}.", *v, o.expected)};
      return {ExitCode::OK, fmt::format("clock source is {}.", *v)};
    });

}  // namespace
}  // namespace gcm::health

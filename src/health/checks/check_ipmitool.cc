// health_checks check-ipmitool check-sel (fatal events in the BMC's system event log) and check-sensors (fans and
// power supplies from ipmi-sensors).
#include <algorithm>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "health/checks/host_check.h"

namespace gcm::health {
namespace {

const bool kGroup = register_health_group("check-ipmitool", "BMC checks through ipmitool.");

struct SelOpts {
  long long clear_threshold = 40;
  bool nvipmitool = false;
  bool sudo = true;
};

// Asserted SEL events that make the node unusable.
const std::vector<std::regex>& fatal_sel_events() {
  static const std::vector<std::regex> v = {
      std::regex("Power Supply.*AC lost"), std::regex("NVIDIA_MCA_Error"), std::regex("Uncorrectable error"),
      std::regex("Critical Interrupt.*Bus Fatal Error"), std::regex("Critical Interrupt.*PCI SERR"),
      std::regex("Processor.*Throttled"), std::regex("System Firmwares.*BIOS corruption detected")};
  return v;
}

const bool kSel = register_simple_check<SelOpts>(
    {"check-ipmitool", "check-sel"},
    "CRITICAL when `ipmitool sel list` holds an asserted fatal event (AC lost, MCA error, uncorrectable error, bus "
    "fatal error, PCI SERR, throttled processor, BIOS corruption); the log is cleared once it has more than "
    "--clear_log_threshold lines.",
    true, "ipmitool sel", "disable_ipmi_sel",
    [](OptionBinder& b, SelOpts& o) {
      b.option("--clear_log_threshold,--clear-log-threshold", "clear_log_threshold", o.clear_threshold,
               "Clear the SEL when it has more lines than this.")
          ->capture_default_str();
      b.flag("--nvipmitool,!--ipmitool", "nvipmitool", o.nvipmitool, "Use nvipmitool instead of ipmitool.");
      b.flag("--sudo,!--no-sudo", "sudo", o.sudo, "Run through sudo when not root (default: on).");
    },
    [](CheckRun& r, const SelOpts& o) -> CheckOutcome {
      std::string tool = o.nvipmitool ? "nvipmitool" : "ipmitool";
      auto t = run_tool(maybe_sudo({tool, "sel", "list"}, o.sudo), r.timeout_s);
      if (!t.ok()) return {ExitCode::WARN, t.failure()};
      Verdict v;
      auto lines = split_lines(t.out);
      for (const auto& line : lines) {
        if (line.find("Asserted") == std::string::npos) continue;
        for (const auto& re : fatal_sel_events()) {
          if (!std::regex_search(line, re)) continue;
          std::vector<std::string> f;
          size_t pos = 0;
          while (pos <= line.size()) {
            size_t bar = line.find('|', pos);
            if (bar == std::string::npos) bar = line.size();
            f.push_back(trim(std::string_view(line).substr(pos, bar - pos)));
            pos = bar + 1;
          }
          v.add(ExitCode::CRITICAL, f.size() >= 5 ? fmt::format("Detected error: {}, {}", f[3], f[4])
                                                  : fmt::format("Detected error: {}", trim(line)));
          break;
        }
      }
      if (v.msgs.empty()) v.add(ExitCode::OK, "sel reported no errors.");
      if (static_cast<long long>(lines.size()) > o.clear_threshold) {
        auto c = run_tool(maybe_sudo({tool, "sel", "clear"}, o.sudo), r.timeout_s);
        if (!c.ok())
          v.add(ExitCode::WARN, fmt::format("clearing the SEL ({} lines) failed: {}", lines.size(), c.failure()));
        else
          v.msgs.push_back(fmt::format("SEL cleared ({} lines).", lines.size()));
      }
      return v.outcome();
    });

struct SensorOpts {
  bool sudo = true;
  std::string sdr_cache = "/var/cache/ipmimonitoringsdrcache/sdr.cache";
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// "'OK' 'Device Removed'" -> {"OK", "Device Removed"}
std::vector<std::string> quoted_words(const std::string& s) {
  std::vector<std::string> v;
  size_t pos = 0;
  while ((pos = s.find('\'', pos)) != std::string::npos) {
    size_t end = s.find('\'', pos + 1);
    if (end == std::string::npos) break;
    v.push_back(s.substr(pos + 1, end - pos - 1));
    pos = end + 1;
  }
  if (v.empty() && !trim(s).empty()) v.push_back(trim(s));
  return v;
}

const bool kSensors = register_simple_check<SensorOpts>(
    {"check-sensors"},
    "Fans and power supplies from `ipmi-sensors --sensor-types Fan,Power_Supply`: CRITICAL for a fan or PSU input/"
    "output/power sensor not 'OK' or a PSU status not 'Presence detected', WARNING for PSU redundancy not 'Fully "
    "Redundant'.",
    true, "check sensors", "disable_check_sensors",
    [](OptionBinder& b, SensorOpts& o) {
      b.flag("--sudo,!--no-sudo", "sudo", o.sudo, "Run through sudo when not root (default: on).");
      b.option("--sdr-cache-file", "sdr_cache_file", o.sdr_cache, "ipmi-sensors' SDR cache file.")
          ->capture_default_str();
    },
    [](CheckRun& r, const SensorOpts& o) -> CheckOutcome {
      auto t = run_tool(maybe_sudo({"ipmi-sensors", "--comma-separated-output", "--no-header-output",
                                    "--quiet-cache", "--sdr-cache-recreate", "--sdr-cache-file", o.sdr_cache,
                                    "--sensor-types", "Fan,Power_Supply"},
                                   o.sudo),
                        r.timeout_s);
      if (!t.ok()) return {ExitCode::WARN, "ipmi-sensors command FAILED to execute. " + t.failure()};
      Verdict v;
      std::vector<std::string> errors;
      for (const auto& line : split_lines(t.out)) {
        // id,name,type,reading,unit,'status' 'status'...
        std::vector<std::string> f;
        size_t pos = 0;
        for (int i = 0; i < 5 && pos <= line.size(); ++i) {
          size_t c = line.find(',', pos);
          if (c == std::string::npos) break;
          f.push_back(line.substr(pos, c - pos));
          pos = c + 1;
        }
        if (f.size() < 5) continue;
        std::string name = f[1], type = lower(f[2]), lname = lower(f[1]);
        auto statuses = quoted_words(line.substr(pos));
        std::string expected;
        ExitCode level = ExitCode::CRITICAL;
        if (type == "fan" && lname.find("fan") != std::string::npos) {
          expected = "OK";
        } else if (type == "power supply") {
          if (lname.find("redundancy") != std::string::npos) {
            expected = "Fully Redundant";
            level = ExitCode::WARN;
          } else if (lname.find("status") != std::string::npos) {
            expected = "Presence detected";
          } else if (lname.find("pin") != std::string::npos || lname.find("pout") != std::string::npos ||
                     lname.find("pwr") != std::string::npos) {
            expected = "OK";
          }
        }
        if (expected.empty()) continue;
        std::vector<std::string> others;
        for (const auto& s : statuses)
          if (lower(s) != lower(expected)) others.push_back("'" + s + "'");
        if (others.empty() && !statuses.empty()) {
          v.add(ExitCode::OK, "");
          continue;
        }
        std::string reading = f[3] == "N/A" ? "" : f[3] + (f[4] == "N/A" ? "" : f[4]);
        errors.push_back(fmt::format("Error in {}: {} {} (Expected '{}')", name, reading, fmt::join(others, " "),
                                     expected));
        v.add(level, "");
      }
      if (errors.empty()) return {ExitCode::OK, "No ipmi-sensor errors."};
      return {v.code, fmt::format("{} ipmi-sensor error(s): \n{}", errors.size(), fmt::join(errors, "\n"))};
    });

}  // namespace
}  // namespace gcm::health

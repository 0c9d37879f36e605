// health_checks check-sensors: fans and power supplies from ipmi-sensors.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/option_binder.h"
#include "core/ascii.h"
#include "health/checks/host_check.h"

namespace gcm::health {
namespace {

struct SensorOpts {
  bool sudo = true;
  std::string sdr_cache = "/var/cache/ipmimonitoringsdrcache/sdr.cache";
};

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
      auto t = run_tool(
          maybe_sudo({"ipmi-sensors", "--comma-separated-output", "--no-header-output", "--quiet-cache",
                      "--sdr-cache-recreate", "--sdr-cache-file", o.sdr_cache, "--sensor-types", "Fan,Power_Supply"},
                     o.sudo),
          r.timeout_s);
      if (!t.ok()) return {ExitCode::WARN, "ipmi-sensors command FAILED to execute. " + t.failure()};
      Findings v;
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
        std::string name = f[1], type = ascii_lower(f[2]), lname = ascii_lower(f[1]);
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
          if (ascii_lower(s) != ascii_lower(expected)) others.push_back("'" + s + "'");
        if (others.empty() && !statuses.empty()) {
          v.add(ExitCode::OK, "");
          continue;
        }
        std::string reading = f[3] == "N/A" ? "" : f[3] + (f[4] == "N/A" ? "" : f[4]);
        errors.push_back(
            fmt::format("Error in {}: {} {} (Expected '{}')", name, reading, fmt::join(others, " "), expected));
        v.add(level, "");
      }
      if (errors.empty()) return {ExitCode::OK, "No ipmi-sensor errors."};
      return {v.code, fmt::format("{} ipmi-sensor error(s): \n{}", errors.size(), fmt::join(errors, "\n"))};
    });

}  // namespace
}  // namespace gcm::health

// health_checks check-ipmitool check-sel: fatal events in the BMC's system event log.
#include <algorithm>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/option_binder.h"
#include "health/checks/host_check.h"

namespace gcm::health {
namespace {

const bool kCheckIpmitoolGroupRegistered = register_health_group("check-ipmitool", "BMC checks through ipmitool.");

struct SelOpts {
  long long clear_threshold = 40;
  bool nvipmitool = false;
  bool sudo = true;
};

// Asserted SEL events that make the node unusable.
const std::vector<std::regex>& fatal_sel_events() {
  static const std::vector<std::regex> v = {std::regex("Power Supply.*AC lost"),
                                            std::regex("NVIDIA_MCA_Error"),
                                            std::regex("Uncorrectable error"),
                                            std::regex("Critical Interrupt.*Bus Fatal Error"),
                                            std::regex("Critical Interrupt.*PCI SERR"),
                                            std::regex("Processor.*Throttled"),
                                            std::regex("System Firmwares.*BIOS corruption detected")};
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
      Findings v;
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

}  // namespace
}  // namespace gcm::health

// health_checks check-syslogs mce and pcie-aer: machine-check and PCIe AER lines of the kernel log, counted by
// GCM's classification tables (health/syslog_severity.h). They read the kernel log the way xid and io-errors do
// (--path.kmsg: /dev/kmsg, or a saved dmesg/kmsg/syslog file) instead of GCM's `dmesg | grep`.
#include <fmt/format.h>

#include "health/checks/kernel_log_source.h"
#include "health/syslog_severity.h"

namespace gcm::health {
namespace {

// The first lines of the worst class are shown under the counts, so the operator sees which CPU or device without
// reading the log; a storm of corrected errors must not make a message of megabytes.
constexpr size_t kExampleLines = 5;

struct SeverityScan {
  SeverityTally tally;
  ExitCode worst = ExitCode::OK;
  std::vector<std::string> examples;  // lines of class `worst`, first kExampleLines

  void add(ExitCode c, std::string_view line) {
    tally.add(c);
    if (severity_rank(c) > severity_rank(worst)) {
      worst = c;
      examples.clear();
    }
    if (c == worst && c != ExitCode::OK && examples.size() < kExampleLines) examples.emplace_back(line);
  }
};

class CheckKernelSeverity : public HealthCheck {
 public:
  using Filter = bool (*)(std::string_view);
  using Classifier = ExitCode (*)(std::string_view);

  CheckKernelSeverity(OptionBinder& b, std::string name, std::string flag, Filter filter, Classifier classify,
                      std::string none, std::string what)
      : name_(std::move(name)),
        flag_(std::move(flag)),
        filter_(filter),
        classify_(classify),
        none_(std::move(none)),
        what_(std::move(what)) {
    source_.bind(b);
  }

  int run(CheckRun& r) override {
    return r.run_standard(name_, flag_, [&]() -> CheckOutcome {
      SeverityScan s;
      KernelLogScan scan;
      try {
        scan = source_.scan(r, [&](std::string_view msg) {
          std::string line = trim(msg);
          if (line.empty() || !filter_(line)) return;
          s.add(classify_(line), line);
        });
      } catch (const KernelLogError& e) {
        return {ExitCode::WARN, fmt::format("kernel log could not be read: {}.", e.what())};
      }
      std::string note = skipped_note(scan.long_lines, "the kernel log", KernelLogLimits{}.max_line);
      if (s.tally.total() == 0) return {ExitCode::OK, none_ + note};
      // GCM's line first (alerting may match on it), then examples of the worst class.
      std::string msg = fmt::format("{} {} detected {}.{}", s.tally.total(), what_, s.tally.detail(), note);
      for (const auto& l : s.examples)
        msg += fmt::format("\n{}: {}", s.worst == ExitCode::CRITICAL ? "critical" : "warn", l);
      return {s.tally.code(), msg};
    });
  }

 private:
  static std::string trim(std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t' || v.front() == '\r')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r' || v.back() == '\n'))
      v.remove_suffix(1);
    return std::string(v);
  }

  KernelLogSource source_;
  std::string name_, flag_;
  Filter filter_;
  Classifier classify_;
  std::string none_, what_;
};

const bool kCheckSyslogsHwRegistered = [] {
  register_health_check({{"check-syslogs", "mce"},
                         "Machine Check Exception lines of the kernel log (\"mce:\", \"Machine Check\"), classified "
                         "by GCM's table: CRITICAL for [Hardware Error], processor context corrupt, uncorrected or "
                         "fatal errors; WARNING for corrected errors, thermal throttling, CMCI storms and unknown "
                         "lines; informational for temperature back to normal, CPU offline, disabling lock.",
                         true,
                         [](OptionBinder& b) -> std::unique_ptr<HealthCheck> {
                           return std::make_unique<CheckKernelSeverity>(b, "mce errors", "disable_mce_errors",
                                                                        is_mce_report_line, classify_mce_line,
                                                                        "No MCE errors detected.", "MCE event(s)");
                         }});
  register_health_check({{"check-syslogs", "pcie-aer"},
                         "PCIe Advanced Error Reporting lines of the kernel log (\"AER ... error\"), classified by "
                         "GCM's table: CRITICAL for Uncorrectable (Fatal) and can't recover; WARNING for other "
                         "uncorrectable errors and unknown lines; corrected errors are counted as informational.",
                         true,
                         [](OptionBinder& b) -> std::unique_ptr<HealthCheck> {
                           return std::make_unique<CheckKernelSeverity>(
                               b, "pcie aer errors", "disable_pcie_aer_errors", is_pcie_aer_report_line,
                               classify_pcie_aer_line, "No PCIe AER errors detected.", "PCIe AER error(s)");
                         }});
  return true;
}();

}  // namespace
}  // namespace gcm::health

// health_checks check-syslogs: xid, link-flaps and io-errors. They read the kernel ring buffer (/dev/kmsg, or a saved
// log given by --path.kmsg) and the syslog file directly instead of piping dmesg into grep: no shell, no child process,
// and a scan of a 10 MB log in a few milliseconds.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "cli/option_binder.h"
#include "core/file_lines.h"
#include "health/check.h"
#include "health/checks/kernel_log_source.h"
#include "health/kernel_log.h"
#include "health/link_flap_line.h"
#include "health/xid_catalogue.h"
#include "health/xid_line.h"

namespace gcm::health {
namespace {

const bool kCheckSyslogsGroupRegistered = register_health_group(
    "check-syslogs",
    "Kernel-log and syslog checks: link-flaps, xid (GPU XIDs with NVIDIA's catalogue), io-errors, mce, pcie-aer.");

std::string join_causes(const std::vector<std::string>& causes) {
  return causes.empty() ? std::string("unknown") : fmt::format("{}", fmt::join(causes, ", "));
}

// ---- xid ----

class CheckXid : public HealthCheck {
 public:
  explicit CheckXid(OptionBinder& b) {
    source_.bind(b);
    b.option("--xid-catalogue", "xid_catalogue", catalogue_path_,
             "A site XID catalogue (TOML, the format of data/xid-catalogue.toml) replacing the built-in one.");
    b.option("--xid-severity", "xid_severity", overrides_,
             "Override one XID's severity: CODE=ignore|warn|critical (repeat for several). Default: GCM's rule, "
             "XIDs 13, 31, 43, 45, 63, 68, 92, 109 are WARNING and every other XID CRITICAL.");
  }

  int run(CheckRun& r) override {
    return r.run_standard("xid errors", "disable_xid_errors", [&] { return evaluate(r); });
  }

 private:
  CheckOutcome evaluate(const CheckRun& r) {
    XidCatalogue cat;
    try {
      cat = catalogue_path_ ? XidCatalogue::load_file(*catalogue_path_) : XidCatalogue::builtin();
      for (const auto& o : overrides_) cat.apply_override(o);
    } catch (const XidCatalogueError& e) {
      throw CheckUsageError(e.what());
    }
    XidScanner scanner;
    KernelLogScan scan;
    try {
      scan = source_.scan(r, [&](std::string_view msg) { scanner.feed(msg); });
    } catch (const KernelLogError& e) {
      return {ExitCode::WARN, fmt::format("kernel log could not be read: {}.", e.what())};
    }
    ExitCode code = ExitCode::OK;
    std::string msg;
    std::vector<std::string> ignored;
    for (const XidFinding& f : scanner.findings()) {
      std::string where;
      if (!f.devices.empty()) where = fmt::format("on {}", fmt::join(f.devices, ", "));
      if (f.count > 1) where += fmt::format("{}{} times", where.empty() ? "" : ", ", f.count);
      if (f.kind == XidKind::SXid) {
        // NVSwitch errors say themselves whether they are fatal.
        code = worse(code, f.fatal_hint ? ExitCode::CRITICAL : ExitCode::WARN);
        msg += fmt::format("{} NVSwitch SXid error: {} ({}{}{}). ", f.fatal_hint ? "fatal" : "non-fatal",
                           f.code.value_or(-1), f.first_detail, where.empty() ? "" : "; ", where);
        continue;
      }
      if (!f.code) {
        code = worse(code, ExitCode::CRITICAL);
        msg += fmt::format("XID error: unreadable XID line \"{}\". ", f.first_detail);
        continue;
      }
      XidInfo info = cat.lookup(*f.code);
      if (info.severity == XidSeverity::Ignore) {
        ignored.push_back(std::to_string(*f.code));
        continue;
      }
      bool warn_only = info.severity == XidSeverity::Warn;
      code = worse(code, warn_only ? ExitCode::WARN : ExitCode::CRITICAL);
      std::vector<std::string> facts;
      if (!info.description.empty()) facts.push_back(info.description);
      if (!where.empty()) facts.push_back(where);
      if (!info.immediate_action.empty()) {
        std::string action = "NVIDIA action: " + info.immediate_action;
        if (!info.investigatory_action.empty()) action += ", then " + info.investigatory_action;
        facts.push_back(action);
      }
      msg += fmt::format("{}XID error: {}, XID causes: {}", warn_only ? "non-critical " : "", *f.code,
                         join_causes(info.causes));
      if (!facts.empty()) msg += fmt::format(" ({})", fmt::join(facts, "; "));
      msg += ". ";
    }
    if (!ignored.empty()) msg += fmt::format("Ignored by configuration: XID {}. ", fmt::join(ignored, ", "));
    if (code == ExitCode::OK && ignored.empty()) msg = "No XID error was found.";
    return {code, msg + skipped_note(scan.long_lines, "the kernel log", KernelLogLimits{}.max_line)};
  }

  KernelLogSource source_;
  std::optional<std::string> catalogue_path_;
  std::vector<std::string> overrides_;
};

// ---- io-errors ----

class CheckIoErrors : public HealthCheck {
 public:
  explicit CheckIoErrors(OptionBinder& b) { source_.bind(b); }

  int run(CheckRun& r) override {
    return r.run_standard("io errors", "disable_io_errors", [&]() -> CheckOutcome {
      std::set<std::string> devices;
      KernelLogScan scan;
      try {
        scan = source_.scan(r, [&](std::string_view msg) {
          // "blk_update_request: I/O error, dev nvme2n1, sector ..." (the reference's /I.O error, dev nvme/)
          size_t p = msg.find("O error, dev nvme");
          if (p == std::string_view::npos || p < 2 || msg[p - 2] != 'I') return;
          std::string_view dev = msg.substr(p + 13);
          dev = dev.substr(0, dev.find_first_of(", "));
          devices.emplace(dev);
        });
      } catch (const KernelLogError& e) {
        return {ExitCode::WARN, fmt::format("kernel log could not be read: {}.", e.what())};
      }
      std::string note = skipped_note(scan.long_lines, "the kernel log", KernelLogLimits{}.max_line);
      if (devices.empty()) return {ExitCode::OK, "No IO errors detected." + note};
      return {ExitCode::CRITICAL, fmt::format("IO error detected on: {}{}", fmt::join(devices, " "), note)};
    });
  }

 private:
  KernelLogSource source_;
};

// ---- link-flaps ----

struct FlapTally {
  std::vector<std::string> interfaces;  // distinct, in order
  int count = 0;
  void add(const std::string& ifname) {
    ++count;
    if (!ifname.empty() && std::find(interfaces.begin(), interfaces.end(), ifname) == interfaces.end())
      interfaces.push_back(ifname);
  }
  std::string describe(const char* kind) const {
    std::string s = fmt::format("{} link flap detected", kind);
    if (!interfaces.empty()) s += fmt::format(" on {}", fmt::join(interfaces, ", "));
    if (count > 1) s += fmt::format(" ({} times)", count);
    return s + ".\n";
  }
};

class CheckLinkFlaps : public HealthCheck {
 public:
  explicit CheckLinkFlaps(OptionBinder& b) {
    b.option("--syslog_file,--syslog-file", "syslog_file", syslog_file_,
             "The syslog file to search for "
             "\"Lost carrier\".")
        ->capture_default_str();
  }

  int run(CheckRun& r) override {
    return r.run_standard("link flaps", "disable_link_flap", [&]() -> CheckOutcome {
      FlapTally ib, eth;
      FileLineCounts counts;
      LineReadLimits limits;
      limits.deadline = r.deadline();
      try {
        counts = for_each_file_line(
            syslog_file_,
            [&](std::string_view line) {
              size_t at = 0;
              if (!contains_ci(line, "lost carrier", &at)) return;
              // The reference's classification (health/link_flap_line.h): InfiniBand flaps are CRITICAL, Ethernet
              // ones WARNING. Unlike it, every flap is reported, not the last kind.
              auto kind = gcm_link_flap_kind(line);
              if (!kind) return;
              (*kind == LinkKind::InfiniBand ? ib : eth).add(std::string(link_interface_before(line, at)));
            },
            limits);
      } catch (const FileReadError& e) {
        return {ExitCode::WARN, fmt::format("link flap check FAILED to read the syslog: {}.", e.what())};
      }
      std::string note = skipped_note(counts.long_lines, "the syslog", limits.max_line);
      if (ib.count == 0 && eth.count == 0) return {ExitCode::OK, "No link flaps were detected" + note};
      std::string msg;
      if (eth.count) msg += eth.describe("eth");
      if (ib.count) msg += ib.describe("ib");
      return {ib.count ? ExitCode::CRITICAL : ExitCode::WARN, msg + note};
    });
  }

 private:
  std::string syslog_file_ = "/var/log/syslog";
};

const bool kCheckSyslogsRegistered = [] {
  register_health_check(
      {{"check-syslogs", "xid"},
       "GPU XIDs (and NVSwitch SXids) in the kernel log, each named once with its causes, "
       "NVIDIA's description and action.",
       true,
       [](OptionBinder& b) -> std::unique_ptr<HealthCheck> { return std::make_unique<CheckXid>(b); }});
  register_health_check(
      {{"check-syslogs", "link-flaps"},
       "\"Lost carrier\" lines in the syslog: InfiniBand flaps are CRITICAL, Ethernet WARNING.",
       true,
       [](OptionBinder& b) -> std::unique_ptr<HealthCheck> { return std::make_unique<CheckLinkFlaps>(b); }});
  register_health_check(
      {{"check-syslogs", "io-errors"},
       "NVMe I/O errors in the kernel log (\"I/O error, dev nvme...\").",
       true,
       [](OptionBinder& b) -> std::unique_ptr<HealthCheck> { return std::make_unique<CheckIoErrors>(b); }});
  return true;
}();

}  // namespace
}  // namespace gcm::health

// health_checks check-blockdev: each disk of the manifest through `smartctl -xj /dev/<blockdev>`: health log
// present, size, wear, spare space, plausible counters and SMART's self-assessment. Failures are CRITICAL and
// warnings (wear above 80 %, implausible counters) WARNING; the reference reported both as CRITICAL.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/option_binder.h"
#include "health/checks/host_check.h"
#include "health/checks/manifest.h"
#include "health/checks/smartctl.h"

namespace gcm::health {
namespace {

enum DiskIssue {
  HEALTH_LOG_INVALID = 2,
  SIZE_MISMATCH = 3,
  SPARE_SPACE_LOW = 4,
  LIFETIME_EXCEEDED = 5,
  SMART_FAILED = 6,
  LIFETIME_LOW = 101,
  BAD_SMARTDATA = 102,
};

const char* issue_name(int i) {
  switch (i) {
    case HEALTH_LOG_INVALID:
      return "HEALTH_LOG_INVALID";
    case SIZE_MISMATCH:
      return "SIZE_MISMATCH";
    case SPARE_SPACE_LOW:
      return "SPARE_SPACE_LOW";
    case LIFETIME_EXCEEDED:
      return "LIFETIME_EXCEEDED";
    case SMART_FAILED:
      return "SMART_FAILED";
    case LIFETIME_LOW:
      return "LIFETIME_LOW";
    default:
      return "BAD_SMARTDATA";
  }
}

struct BlockOpts {
  std::string manifest = "/etc/manifest.json";
  bool sudo = true;
};

constexpr int64_t kSmartctlTimeoutS = 30;

CheckOutcome check_blockdev(const BlockOpts& o) {
  Manifest m = load_manifest(o.manifest);
  int worst = 1000;
  std::vector<std::string> bad_slots, lines, metrics;
  metrics.push_back(fmt::format("'block_devices'={}", m.disks.size()));
  for (const auto& d : m.disks) {
    std::vector<std::pair<int, std::string>> issues;
    std::string dev = "/dev/" + d.blockdev;
    auto t = run_tool(maybe_sudo({"smartctl", "-xj", dev}, o.sudo), kSmartctlTimeoutS);
    std::optional<SmartInfo> s;
    if (t.missing || t.timed_out) {
      issues.emplace_back(HEALTH_LOG_INVALID, fmt::format("Unable to read health logs from drive: {}", t.failure()));
    } else {
      try {
        s = parse_smartctl_json(t.out, "smartctl -xj " + dev);
      } catch (const SmartctlError& e) {
        issues.emplace_back(HEALTH_LOG_INVALID, fmt::format("Unable to read health logs from drive: {}", e.what()));
      }
    }
    if (s && !s->health_log) issues.emplace_back(HEALTH_LOG_INVALID, "Unable to read health logs from drive");
    if (s && s->health_log) {
      const auto& h = *s->health_log;
      if (d.size && s->capacity && *s->capacity < *d.size)
        issues.emplace_back(SIZE_MISMATCH, fmt::format("has size {} < expected {}", *s->capacity, *d.size));
      if (h.percentage_used > 100)
        issues.emplace_back(LIFETIME_EXCEEDED, fmt::format("has exceeded its lifetime ({}% used)", h.percentage_used));
      else if (h.percentage_used > 80)
        issues.emplace_back(LIFETIME_LOW, fmt::format("is near the end of its lifetime ({}% used)", h.percentage_used));
      if (h.available_spare < h.available_spare_threshold)
        issues.emplace_back(SPARE_SPACE_LOW, fmt::format("has low spare space ({}% < {}%)", h.available_spare,
                                                         h.available_spare_threshold));
      if ((s->read_kbytes() == 0 && h.host_reads > 100) || (s->written_kbytes() == 0 && h.host_writes > 100))
        issues.emplace_back(BAD_SMARTDATA,
                            fmt::format("reports implausible counters (read {} kB in {} reads, wrote {} kB in {} "
                                        "writes)",
                                        s->read_kbytes(), h.host_reads, s->written_kbytes(), h.host_writes));
      if (s->smart_passed && !*s->smart_passed)
        issues.emplace_back(SMART_FAILED, "SMART overall-health self-assessment FAILED");
      metrics.push_back(
          fmt::format("'{0}_size'={1} '{0}_rkb'={2} '{0}_wkb'={3} '{0}_host_reads'={4} "
                      "'{0}_host_writes'={5} '{0}_used'={6}%;80;100 '{0}_spare'={7}%;;{8}:",
                      d.slot, s->capacity.value_or(0), s->read_kbytes(), s->written_kbytes(), h.host_reads,
                      h.host_writes, h.percentage_used, h.available_spare, h.available_spare_threshold));
    }
    if (s && !s->serial_number.empty()) lines.push_back(fmt::format("{}_serial: {}", d.slot, s->serial_number));
    if (issues.empty()) continue;
    bad_slots.push_back(d.slot);
    for (const auto& [code, text] : issues) {
      worst = std::min(worst, static_cast<int>(code));
      lines.push_back(fmt::format("{}: {} ({}) {}", issue_name(code), d.slot, dev, text));
    }
  }
  if (bad_slots.empty()) return {ExitCode::OK, "blockdev passes"};
  ExitCode code = worst <= 100 ? ExitCode::CRITICAL : ExitCode::WARN;
  // Keep only issue lines and serials of the unhealthy disks in the long output.
  std::vector<std::string> long_out;
  for (const auto& l : lines) {
    bool serial = l.find("_serial: ") != std::string::npos;
    if (!serial) {
      long_out.push_back(l);
      continue;
    }
    for (const auto& slot : bad_slots)
      if (l.rfind(slot + "_serial: ", 0) == 0) long_out.push_back(l);
  }
  return {code, fmt::format("Block device(s) unhealthy: {} | {}\n{}", fmt::join(bad_slots, ", "),
                            fmt::join(metrics, " "), fmt::join(long_out, "\n"))};
}

const bool kBlock = register_simple_check<BlockOpts>(
    {"check-blockdev"},
    "Each disk of the manifest through `smartctl -xj`: CRITICAL for an unreadable health log, a size below the "
    "manifest's, more than 100% of its lifetime used, spare space below its threshold or a failed SMART "
    "self-assessment; WARNING above 80% lifetime used or for implausible read/write counters. smartctl times out "
    "after 30 s.",
    false, "check blockdev", "disable_check_blockdev",
    [](OptionBinder& b, BlockOpts& o) {
      b.option("--manifest_file,--manifest-file", "manifest_file", o.manifest, "The node manifest (JSON).")
          ->capture_default_str();
      b.flag("--sudo,!--no-sudo", "sudo", o.sudo, "Run smartctl through sudo when not root (default: on).");
    },
    [](CheckRun&, const BlockOpts& o) -> CheckOutcome { return check_blockdev(o); });

}  // namespace
}  // namespace gcm::health

// What the kernel-log checks of check-syslogs share (xid, io-errors in check_syslogs.cc; mce, pcie-aer in
// check_syslogs_hw.cc): the --path.kmsg, --path.procfs and --max-age options and the scan of the log up to the
// check's deadline.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "cli/option_binder.h"  // the inline option helpers below use it
#include "core/host_roots.h"
#include "health/check.h"
#include "health/kernel_log.h"

namespace gcm::health {

// Options every kernel-log check shares.
struct KernelLogSource {
  std::string kmsg = "/dev/kmsg";
  std::string procfs = "/proc";
  double max_age_s = 0;

  void bind(OptionBinder& b) {
    CLI::Option* kmsg_opt = add_host_root_option(
        b, kKmsgRoot, kmsg,
        "The kernel log: /dev/kmsg, or a file with /dev/kmsg records, dmesg output or syslog lines.");
    CLI::Option* procfs_opt = add_host_root_option(b, kProcfsRoot, procfs, "Root of /proc (uptime for --max-age).");
    // Every command's keys are path_kmsg and path_procfs; these checks' own dotted spellings came first (path.kmsg
    // was their only key), so config files may hold them.
    accept_old_spelling(b, kKmsgRoot, kmsg_opt);
    accept_old_spelling(b, kProcfsRoot, procfs_opt);
    b.option("--max-age", "max_age", max_age_s,
             "Only look at kernel messages of the last SECONDS (0: the whole log since boot, as GCM does). Lines "
             "without a timestamp always count.")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
  }

  // Calls fn for every message young enough, stopping at the check's deadline. Throws KernelLogError.
  template <typename Fn>
  KernelLogScan scan(const CheckRun& r, Fn&& fn) const {
    std::optional<double> oldest;
    if (max_age_s > 0)
      if (auto up = read_uptime(procfs)) oldest = *up - max_age_s;
    KernelLogLimits limits;
    limits.deadline = r.deadline();
    return scan_kernel_log(
        kmsg,
        [&](const KernelLogLine& l) {
          if (oldest && l.uptime_s && *l.uptime_s < *oldest) return;
          fn(l.message);
        },
        limits);
  }
};

// " (2 lines of the kernel log longer than 1048576 bytes were skipped.)" or "": a skipped line may have held a
// finding, so the verdict says so.
inline std::string skipped_note(size_t long_lines, const char* what, size_t max_line) {
  if (long_lines == 0) return "";
  return fmt::format(" ({} line{} of {} longer than {} bytes {} skipped.)", long_lines, long_lines == 1 ? "" : "s",
                     what, max_line, long_lines == 1 ? "was" : "were");
}

}  // namespace gcm::health

// libFuzzer: the kernel-log line reader, the XID scanner and the mce/pcie-aer classification tables never crash and
// always keep their invariants on arbitrary text (each finding has a count of at least 1 and distinct devices; each
// selected line is counted in exactly one class).
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "health/kernel_log.h"
#include "health/syslog_severity.h"
#include "health/xid_line.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  gcm::health::XidScanner scanner;
  gcm::health::SeverityTally mce, aer;
  size_t mce_lines = 0, aer_lines = 0;
  gcm::health::KernelLog::from_text(text).for_each([&](const gcm::health::KernelLogLine& l) {
    scanner.feed(l.message);
    if (gcm::health::is_mce_report_line(l.message)) {
      ++mce_lines;
      mce.add(gcm::health::classify_mce_line(l.message));
    }
    if (gcm::health::is_pcie_aer_report_line(l.message)) {
      ++aer_lines;
      aer.add(gcm::health::classify_pcie_aer_line(l.message));
    }
  });
  if (mce.total() != mce_lines || aer.total() != aer_lines) std::abort();
  for (const auto& f : scanner.findings()) {
    if (f.count < 1) std::abort();
    std::set<std::string> d(f.devices.begin(), f.devices.end());
    if (d.size() != f.devices.size()) std::abort();
  }
  return 0;
}

const bool kKernelLogXidFuzzRegistered = gcm::fuzz::register_target("kernel_log_xid_fuzz", fuzz_one);

}  // namespace

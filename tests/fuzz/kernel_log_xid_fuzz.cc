// libFuzzer: the kernel-log line reader and the XID scanner never crash and always keep their invariants on
// arbitrary text (each finding has a count of at least 1 and distinct devices).
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "health/kernel_log.h"
#include "health/xid_line.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  gcm::health::XidScanner scanner;
  gcm::health::KernelLog::from_text(text).for_each(
      [&](const gcm::health::KernelLogLine& l) { scanner.feed(l.message); });
  for (const auto& f : scanner.findings()) {
    if (f.count < 1) std::abort();
    std::set<std::string> d(f.devices.begin(), f.devices.end());
    if (d.size() != f.devices.size()) std::abort();
  }
  return 0;
}

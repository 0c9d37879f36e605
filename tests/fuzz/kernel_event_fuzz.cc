// libFuzzer: the kernel-event classifier (link flaps, machine checks, PCIe AER, SXids) never crashes on arbitrary
// text, and every event it returns has its row in the classification table and labels taken from the line.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "health/kernel_event.h"
#include "health/kernel_log.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  gcm::health::KernelLog::from_text(text).for_each([](const gcm::health::KernelLogLine& l) {
    auto e = gcm::health::classify_kernel_event(l.message);
    if (!e) return;
    if (!e->info || gcm::health::find_kernel_event_class(e->info->kind, e->info->cls) != e->info) std::abort();
    // A device label is a word of the line (cpuN: at most 9 digits after "cpu"); it can never outgrow it.
    if (e->device.size() > l.message.size() + 3) std::abort();
    if (e->detail != l.message) std::abort();
  });
  return 0;
}

const bool kKernelEventFuzzRegistered = gcm::fuzz::register_target("kernel_event_fuzz", fuzz_one);

}  // namespace

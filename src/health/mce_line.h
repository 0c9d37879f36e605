// Recognises the x86 machine-check lines of the kernel log and classifies them:
//   "mce: [Hardware Error]: CPU 3: Machine Check: 0 Bank 7: cc00008000010091"      one error of one bank
//   "mce: [Hardware Error]: CPU 2: Machine Check Exception: 5 Bank 4: b200...0f0f"  (the same, raised as #MC)
//   "mce: [Hardware Error]: Machine check events logged"                          errors queued for mcelog/rasdaemon
//   "mce: CMCI storm detected: switching to poll mode"                             a storm of corrected errors
//   "mce: CPU12: Core temperature above threshold, cpu clock throttled (total events = 1)"   (and "Package", and
//   the newer "temperature is above threshold, cpu clock is throttled")
// A bank line's class comes from its MCi_STATUS word (the IA32_MCi_STATUS layout of Intel's SDM vol. 3B, which AMD
// shares): PCC (bit 57, processor context corrupt) is fatal, UC (bit 61) uncorrected, the rest corrected. The lines
// the kernel prints around a bank line (TSC, ADDR, PROCESSOR, "Run the above through 'mcelog --ascii'") are no
// event: one error is counted once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gcm::health {

enum class MceClass { Corrected, Uncorrected, Fatal, Logged, Thermal };
const char* to_string(MceClass c);  // "corrected", "uncorrected", "fatal", "logged", "thermal"

struct MceLine {
  MceClass cls = MceClass::Corrected;
  std::optional<int> cpu;          // "CPU 3" / "CPU12"
  std::optional<int> bank;         // bank lines
  std::optional<uint64_t> status;  // MCi_STATUS of bank lines
};

std::optional<MceLine> parse_mce_line(std::string_view line);

// The class an MCi_STATUS word gives (see above).
MceClass mce_status_class(uint64_t status);

}  // namespace gcm::health

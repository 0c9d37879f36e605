#include "health/pcie_aer_line.h"

namespace gcm::health {

namespace {}  // namespace

const char* to_string(AerClass c) {
  switch (c) {
    case AerClass::Corrected:
      return "corrected";
    case AerClass::NonFatal:
      return "non_fatal";
    case AerClass::Fatal:
      return "fatal";
  }
  return "corrected";
}

std::optional<AerLine> parse_pcie_aer_line(std::string_view line) {
  constexpr std::string_view kMarker = "PCIe Bus Error: severity=";
  size_t at = line.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view sev = line.substr(at + kMarker.size());
  AerLine a;
  if (sev.starts_with("Corrected") || sev.starts_with("Correctable"))
    a.cls = AerClass::Corrected;
  else if (sev.starts_with("Uncorrected (Non-Fatal)") || sev.starts_with("Uncorrectable (Non-Fatal)"))
    a.cls = AerClass::NonFatal;
  else if (sev.starts_with("Uncorrected (Fatal)") || sev.starts_with("Uncorrectable (Fatal)"))
    a.cls = AerClass::Fatal;
  else
    return std::nullopt;
  // The device is the word before ": PCIe Bus Error" (dev_printk's "<driver> <address>: " prefix).
  std::string_view head = line.substr(0, at);
  while (!head.empty() && (head.back() == ' ' || head.back() == ':')) head.remove_suffix(1);
  size_t space = head.find_last_of(' ');
  std::string_view dev = space == std::string_view::npos ? head : head.substr(space + 1);
  if (dev.find(':') != std::string_view::npos) a.device = dev;
  if (size_t t = sev.find("type="); t != std::string_view::npos) {
    std::string_view type = sev.substr(t + 5);
    a.type = type.substr(0, type.find(','));
  }
  return a;
}

}  // namespace gcm::health

// Recognises the PCIe Advanced Error Reporting line the kernel prints for each device that reported an error, and
// classifies it by its severity:
//   "nvidia 0000:3b:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)"
//   "pcieport 0000:00:01.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester ID)"
//   "nvidia 0000:3b:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Inaccessible, (Unregistered Agent ID)"
//   recent kernels spell them "Correctable" and "Uncorrectable (...)"; old ones end in "id=0018(Receiver ID)".
// Only this line counts: the root port's "AER: Corrected error received: 0000:3b:00.0" before it and the
// "device [10de:2330] error status/mask=..." and "[ 0] RxErr" lines after it are the same error.
#pragma once

#include <optional>
#include <string_view>

namespace gcm::health {

enum class AerClass { Corrected, NonFatal, Fatal };
const char* to_string(AerClass c);  // "corrected", "non_fatal", "fatal"

struct AerLine {
  AerClass cls = AerClass::Corrected;
  std::string_view device;  // the PCI address the line is about ("0000:3b:00.0"); may be empty
  std::string_view type;    // "Physical Layer", "Data Link Layer", "Transaction Layer", "Inaccessible"
};

// The views point into `line`.
std::optional<AerLine> parse_pcie_aer_line(std::string_view line);

}  // namespace gcm::health

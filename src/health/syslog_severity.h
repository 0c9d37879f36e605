// GCM's classification tables of check-syslogs mce and pcie-aer (its check_utils/mce_severity.py and
// pcie_severity.py): which kernel-log lines each check looks at (the reference's `dmesg | grep -i 'mce:\|Machine
// Check'` and `dmesg | grep 'AER.*error'`) and the severity of each line, first match wins, case-insensitive
// substrings. A line the table does not know is WARNING ("for safety", as GCM says), except the few notices every
// healthy node prints at boot ("Thermal monitoring enabled", "In-kernel MCE decoding enabled"), informational here.
//
// These are GCM's coarse rules, kept for drop-in compatibility (its alerting counts on them): note that every line
// with "[Hardware Error]" is CRITICAL, also "Machine check events logged". The agent's finer reading of the same
// lines (MCi_STATUS bits, AER severities) is health/mce_line.h and health/pcie_aer_line.h.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "health/exit_code.h"

namespace gcm::health {

bool is_mce_report_line(std::string_view line);       // contains "mce:" or "Machine Check", any case
bool is_pcie_aer_report_line(std::string_view line);  // contains "AER" and, after it, "error" (case-sensitive)

// CRITICAL, WARN or OK (GCM's "info" class).
ExitCode classify_mce_line(std::string_view line);
ExitCode classify_pcie_aer_line(std::string_view line);

struct SeverityTally {
  size_t critical = 0, warn = 0, info = 0;
  void add(ExitCode c);
  size_t total() const { return critical + warn + info; }
  ExitCode code() const;  // CRITICAL if any critical, else WARN if any warn, else OK
  // "(critical=2, warn=1)": the non-zero classes in GCM's order.
  std::string detail() const;
};

}  // namespace gcm::health

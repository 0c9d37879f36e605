// check-syslogs mce and pcie-aer: GCM's classification tables (first match, case-insensitive, unknown lines
// WARNING) and the lines each check selects, on the sample lines of GCM's tables and the kernel's messages.
#include <gtest/gtest.h>

#include "health/syslog_severity.h"

namespace gcm::health {
namespace {

TEST(MceSeverity, GcmTableFirstMatchWins) {
  struct Case {
    const char* line;
    ExitCode code;
  } cases[] = {
      {"mce: [Hardware Error]: Machine check events logged", ExitCode::CRITICAL},
      {"mce: [Hardware Error]: CPU 0: Machine Check Exception: 5 Bank 9", ExitCode::CRITICAL},
      {"mce: Processor context corrupt", ExitCode::CRITICAL},
      {"Machine Check Exception: 4 Bank 5", ExitCode::CRITICAL},
      {"mce: Uncorrected error on CPU 7", ExitCode::CRITICAL},
      {"mce: fatal error in bank 3", ExitCode::CRITICAL},
      // "Corrected error" is a WARN row, but "Uncorrected error" above it matches first.
      {"mce: CPU0: 1 Corrected error(s) detected. Check CMCI storm count.", ExitCode::WARN},
      {"mce: CPU0: Core temperature above threshold, cpu clock throttled (total events = 1)", ExitCode::WARN},
      {"mce: CPU0: Package temperature above threshold, cpu clock throttled", ExitCode::WARN},
      {"mce: CMCI storm detected: switching to poll mode", ExitCode::WARN},
      {"mce: CPU0: Core temperature/speed normal", ExitCode::OK},
      {"MCE: CPU0: PACKAGE TEMPERATURE/SPEED NORMAL", ExitCode::OK},
      {"mce: CPU is offline", ExitCode::OK},
      {"mce: Disabling lock cmpxchg", ExitCode::OK},
      {"mce: something the table does not know", ExitCode::WARN},
      // Boot notices of every healthy node: the project's addition (GCM calls them unknown, WARNING).
      {"mce: CPU0: Thermal monitoring enabled (TM1)", ExitCode::OK},
      {"MCE: In-kernel MCE decoding enabled.", ExitCode::OK},
      {"mce: Using 32 MCE banks", ExitCode::OK},
  };
  for (const auto& c : cases) EXPECT_EQ(classify_mce_line(c.line), c.code) << c.line;
}

TEST(MceSeverity, LinesTheCheckLooksAt) {
  EXPECT_TRUE(is_mce_report_line("[ 12.3] mce: CPU0: Thermal monitoring enabled"));
  EXPECT_TRUE(is_mce_report_line("MCE: In-kernel MCE decoding enabled."));
  EXPECT_TRUE(is_mce_report_line("Kernel panic - not syncing: Fatal machine check"));
  EXPECT_FALSE(is_mce_report_line("EDAC MC0: 1 CE memory read error on CPU_SrcID#0"));
  EXPECT_FALSE(is_mce_report_line("nvidia: loading out-of-tree module"));
}

TEST(PcieAerSeverity, GcmTable) {
  EXPECT_EQ(classify_pcie_aer_line("pcieport 0000:00:03.0: AER: Uncorrectable (Fatal) error received: 0000:86:00.0"),
            ExitCode::CRITICAL);
  EXPECT_EQ(classify_pcie_aer_line("nvidia 0000:01:00.0: AER: can't recover (no error_detected callback)"),
            ExitCode::CRITICAL);
  EXPECT_EQ(classify_pcie_aer_line("pcieport 0000:00:02.0: AER: Multiple Uncorrectable (Non-Fatal) error received"),
            ExitCode::WARN);
  EXPECT_EQ(classify_pcie_aer_line("pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0"), ExitCode::OK);
  EXPECT_EQ(classify_pcie_aer_line("pcieport 0000:00:01.0: AER: Multiple Corrected error received"), ExitCode::OK);
  EXPECT_EQ(classify_pcie_aer_line("pcieport 0000:00:01.0: AER: some new error text"), ExitCode::WARN);
}

TEST(PcieAerSeverity, LinesTheCheckLooksAtAreCaseSensitiveAsGcmsGrep) {
  EXPECT_TRUE(is_pcie_aer_report_line("pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0"));
  EXPECT_FALSE(is_pcie_aer_report_line("pcieport 0000:00:01.0: AER: enabled with IRQ 122"));
  EXPECT_FALSE(is_pcie_aer_report_line("error before AER only"));
  EXPECT_FALSE(is_pcie_aer_report_line("aer: corrected error"));
  EXPECT_FALSE(is_pcie_aer_report_line("nvidia 0000:3b:00.0: PCIe Bus Error: severity=Corrected"));
}

TEST(SeverityTally, GcmsMessageParts) {
  SeverityTally t;
  EXPECT_EQ(t.code(), ExitCode::OK);
  t.add(ExitCode::OK);
  t.add(ExitCode::WARN);
  EXPECT_EQ(t.detail(), "(warn=1, info=1)");
  EXPECT_EQ(t.code(), ExitCode::WARN);
  t.add(ExitCode::CRITICAL);
  t.add(ExitCode::CRITICAL);
  EXPECT_EQ(t.detail(), "(critical=2, warn=1, info=1)");
  EXPECT_EQ(t.total(), 4u);
  EXPECT_EQ(t.code(), ExitCode::CRITICAL);
}

}  // namespace
}  // namespace gcm::health

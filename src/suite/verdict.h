// What a suite run concludes: one verdict per check from the way its process ended and what it reported, the line
// printed for each, and the summary line of the whole profile.
#pragma once

#include <string>
#include <vector>

#include "health/check.h"
#include "suite/suite_file.h"
#include "suite/supervisor.h"

namespace gcm::suite {

struct Verdict {
  std::string name;
  health::ExitCode code = health::ExitCode::UNKNOWN;
  bool timed_out = false;
  bool failed = false;  // the node must not run jobs because of this check
  std::string msg;
  double start = 0, end = 0;
};

// The verdict on one check of `profile` (budget `budget_s`) from its outcome: how its process ended, the result
// lines it wrote (msg, usage_error, error, start_error) and, for external tools, its exit code and last output line.
Verdict judge(Profile profile, double budget_s, const CheckEntry& entry, const JobOutcome& outcome);

// "OK - name [0.12 s]. message" (TIMEOUT in place of the status word when the check was killed).
std::string verdict_line(const Verdict& v);

// Seconds as the suite file writes them: "30" for whole seconds, "2.5" otherwise.
std::string seconds_text(double s);

struct SuiteSummary {
  bool failed = false;
  const Verdict* first_failure = nullptr;  // the check whose reason a drain carries
  std::string line;                        // "gcm prolog node1: PASS - 4 checks ... in 0.21 s (budget 60 s)"
};
SuiteSummary summarize(const std::vector<Verdict>& verdicts, const char* profile_name, const std::string& node,
                       double elapsed_s, double budget_s);

}  // namespace gcm::suite

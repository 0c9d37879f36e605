// Job states (sacct State, squeue STATE/%t) and the reference's state sets (gcm-reference.md §1.10). Every test
// ignores letter case, as the reference lowercases before comparing.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "slurm/parse_error.h"

namespace gcm::slurm {

struct JobState {
  std::string name;                     // the state word, upper case: "CANCELLED", "RUNNING", "PD"
  std::string detail;                   // what follows it: "by 123" (sacct), or empty
  std::optional<int64_t> cancelled_by;  // the uid of "CANCELLED by <uid>"
};

// Splits "CANCELLED by 123" into its parts; a trailing '+' on the word (sacct's mark for more states) is dropped.
// Throws ParseError for an empty state.
JobState parse_job_state(std::string_view text);

// TERMINAL_JOB_STATES (boot_fail, cancelled, completed, deadline, failed, node_fail, out_of_memory, preempted,
// requeued, resizing, revoked, timeout and their two-letter forms), tested on the state word.
// Deviation: the reference compared the whole text, so "CANCELLED by 123" was not terminal; it only ever applied
// the test to user-given state names, where the two agree.
bool is_terminal_job_state(std::string_view state);

// FAILED_JOB_STATES by prefix, exactly as the reference (so "CANCELLED by 123" counts): boot_fail, cancelled,
// deadline, failed, node_fail, out_of_memory, preempted, timeout and their two-letter forms.
bool is_failed_job_state(std::string_view state);

// PENDING_JOB_STATES, exact: pending, pd, requeued, rq, suspended, s.
bool is_pending_job_state(std::string_view state);

// RUNNING_JOB_STATES, exact: running, r.
bool is_running_job_state(std::string_view state);

// squeue's PENDING_RESOURCES: STATE is "PENDING" and REASON is "Resources" or "Priority" (both exact).
bool is_pending_on_resources(std::string_view state, std::string_view reason);

}  // namespace gcm::slurm

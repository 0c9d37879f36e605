#include "slurm/job_state.h"

#include <algorithm>

#include "core/ascii.h"
#include "slurm/coerce.h"

namespace gcm::slurm {

namespace {

bool in(std::string_view word, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), word) != set.end();
}

}  // namespace

JobState parse_job_state(std::string_view text) {
  std::string_view s = ascii_trim(text);
  size_t blank = s.find(' ');
  std::string_view word = s.substr(0, blank);
  if (word.ends_with('+')) word.remove_suffix(1);
  if (word.empty()) throw ParseError(describe_bad_value("job state", text, "is empty"));
  JobState st;
  for (char c : word) st.name.push_back(c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c);
  if (blank != std::string_view::npos) st.detail = ascii_trim(s.substr(blank + 1));
  if (st.name == "CANCELLED" && st.detail.starts_with("by ")) st.cancelled_by = python_int(st.detail.substr(3));
  return st;
}

bool is_terminal_job_state(std::string_view state) {
  std::string_view s = ascii_trim(state);
  std::string word = ascii_lower(s.substr(0, s.find(' ')));
  return in(word, {"boot_fail", "bf", "cancelled", "ca", "completed",     "cd",  "deadline",  "dl",
                   "failed",    "f",  "node_fail", "nf", "out_of_memory", "oom", "preempted", "pr",
                   "requeued",  "rq", "resizing",  "rs", "revoked",       "rv",  "timeout",   "to"});
}

bool is_failed_job_state(std::string_view state) {
  std::string s = ascii_lower(state);
  for (std::string_view prefix : {"boot_fail", "bf", "cancelled", "ca", "deadline", "dl", "failed", "f", "node_fail",
                                  "nf", "out_of_memory", "oom", "preempted", "pr", "timeout", "to"}) {
    if (s.starts_with(prefix)) return true;
  }
  return false;
}

bool is_pending_job_state(std::string_view state) {
  return in(ascii_lower(state), {"pending", "pd", "requeued", "rq", "suspended", "s"});
}

bool is_running_job_state(std::string_view state) { return in(ascii_lower(state), {"running", "r"}); }

bool is_pending_on_resources(std::string_view state, std::string_view reason) {
  return state == "PENDING" && (reason == "Resources" || reason == "Priority");
}

}  // namespace gcm::slurm

#include "health/tool_run.h"

#include <chrono>

namespace gcm::health {

CommandResult run_tool(const std::vector<std::string>& argv, double timeout_s,
                       const std::vector<std::string>& extra_env) {
  CommandSpec spec;
  spec.argv = argv;
  spec.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  spec.extra_env = extra_env;
  CommandResult r;
  try {
    r = run_command(spec);
  } catch (const CommandError& e) {
    r.exit_code = kToolNotFound;
    r.out = e.what();
    return r;
  }
  if (r.timed_out) {
    r.exit_code = kToolTimedOut;
    r.out = "Error command timeout because of timeout setting.\n";
  } else if (r.exit_code < 0) {
    r.exit_code = 128 + r.term_signal;  // killed by a signal, as a shell reports it
  }
  return r;
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (char c : s) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        cur.push_back(c);
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
      continue;
    }
    cur.push_back(c);
    in_word = true;
  }
  if (in_word) words.push_back(std::move(cur));
  return words;
}

}  // namespace gcm::health

// Runs external commands: argv only (never a shell), a timeout that kills the whole process group, bounded
// captured output, and line-by-line streaming for outputs of gigabytes.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/line_splitter.h"

namespace gcm {

struct CommandError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CommandSpec {
  std::vector<std::string> argv;
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  size_t max_stdout = 64u << 20;  // capture limit for run_command(); beyond it the output is truncated and flagged
  size_t max_stderr = 64u << 10;  // the tail of stderr kept for error messages
  std::optional<std::string> stdin_data;  // written to the child's stdin, then closed; /dev/null when absent
  // "KEY=VALUE" entries added to (or replacing in) the child's environment; a bare "KEY" removes KEY from it.
  std::vector<std::string> extra_env;
  // stream_command_lines: longer lines are skipped (memory stays bounded whatever the command prints) and
  // on_long_line, when set, hears of each (its 1-based number and length); it may throw to stop the command.
  size_t max_line = 4 * kMaxLineBytes;
  std::function<void(size_t line_number, size_t bytes)> on_long_line;
};

struct CommandResult {
  int exit_code = -1;    // exit status, or -1 when killed by a signal
  int term_signal = 0;   // the signal that ended the child, or 0
  bool timed_out = false;
  bool stdout_truncated = false;
  std::string out;
  std::string err;       // at most max_stderr bytes: the end of stderr
  bool ok() const { return exit_code == 0 && !timed_out; }
};

// Runs to completion (or timeout) and captures stdout/stderr. Throws CommandError only when the command cannot be
// started (missing executable: the message names it and PATH).
CommandResult run_command(const CommandSpec& spec);

// Streams stdout line by line ("\n" stripped, a final line without newline included) to on_line while the command
// runs; lines longer than spec.max_line are skipped (see on_long_line). Throws CommandError naming the command line
// when it cannot start, times out, is killed or exits non-zero (the message includes the end of stderr). Returns the
// number of lines, skipped ones included.
size_t stream_command_lines(const CommandSpec& spec, const std::function<void(std::string_view line)>& on_line);

// "scontrol show config" style rendering of argv for messages (shell-quoted where needed).
std::string command_line(const std::vector<std::string>& argv);

// The CommandError message for a finished command that failed.
std::string describe_failure(const CommandSpec& spec, const CommandResult& r);

// Looks an executable up on PATH like execvp does; empty when not found.
std::string find_executable(std::string_view name);

}  // namespace gcm

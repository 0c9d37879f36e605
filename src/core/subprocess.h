// Runs external commands: argv only (never a shell), a timeout that kills the whole process group, bounded
// captured output, and line-by-line streaming for outputs of gigabytes. Every external command of gcm starts here,
// except the suite supervisor's checks (suite/supervisor.h says why).
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

  // Where the child's streams go instead of a pipe of this process: an fd of the caller (a file, this process' own
  // 1 or 2 to pass output through), dup'ed onto the child's. A stream sent elsewhere is not captured.
  std::optional<int> stdin_from;  // when stdin_data is absent; /dev/null by default
  std::optional<int> stdout_to;
  std::optional<int> stderr_to;
  // A process group of its own, so that a timeout kills what the command started too. Off: the child stays in the
  // caller's group (a terminal's Ctrl-C reaches both, as for a command the caller merely wraps) and a timeout kills
  // the child alone.
  bool own_process_group = true;
  // The child gets SIGKILL when this process dies (PR_SET_PDEATHSIG), so that it never outlives a killed caller.
  bool die_with_parent = false;
  // At the deadline (or a stop): SIGTERM first, SIGKILL only after this grace; zero: SIGKILL at once.
  std::chrono::milliseconds term_grace{0};
  // Asked while the command runs (every 50 ms at most); true ends it as a timeout does (CommandResult::stopped).
  std::function<bool()> stop_requested;
};

struct CommandResult {
  int exit_code = -1;   // exit status, or -1 when killed by a signal
  int term_signal = 0;  // the signal that ended the child, or 0
  bool timed_out = false;
  bool stopped = false;  // ended because stop_requested said so
  bool stdout_truncated = false;
  std::string out;
  std::string err;  // at most max_stderr bytes: the end of stderr
  bool ok() const { return exit_code == 0 && !timed_out && !stopped; }
};

// Runs to completion (or timeout) and captures stdout/stderr. Throws CommandError only when the command cannot be
// started (missing executable: the message names it and PATH).
CommandResult run_command(const CommandSpec& spec);

// Runs to completion (or timeout, or stop) and hands stdout to on_stdout in chunks as they arrive (for output that
// must not be held in memory, or a filter between two commands). Throws CommandError only when the command cannot
// be started; the outcome is in the result (out stays empty).
CommandResult run_command_streaming(const CommandSpec& spec,
                                    const std::function<void(std::string_view chunk)>& on_stdout);

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

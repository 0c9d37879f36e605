#include "health/checks/host_check.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <algorithm>

#include <fmt/format.h>

#include "core/ascii.h"
#include "core/subprocess.h"

namespace gcm::health {

std::string ToolRun::failure() const {
  std::string tool = argv.empty() ? "?" : argv[0];
  if (tool == "sudo" && argv.size() > 1) tool = argv[1];
  if (missing)
    return err.find("could not find executable") != std::string::npos
               ? fmt::format("{}: not found on PATH (exit {})", tool, rc)
               : fmt::format("{}: could not be started (exit {}): {}", tool, rc, err);
  if (timed_out)
    return fmt::format("{} timed out (exit {}): Error command timeout because of timeout setting.", tool, rc);
  std::string last;
  for (const auto& l : split_lines(err))
    if (!trim(l).empty()) last = trim(l);
  return last.empty() ? fmt::format("{} exited with code {}", tool, rc)
                      : fmt::format("{} exited with code {}: {}", tool, rc, last);
}

ToolRun run_tool(std::vector<std::string> argv, int64_t timeout_s, std::optional<std::string> stdin_data) {
  ToolRun t;
  t.argv = argv;
  CommandSpec s;
  s.argv = std::move(argv);
  s.timeout = std::chrono::seconds(timeout_s);
  s.stdin_data = std::move(stdin_data);
  s.max_stdout = 16u << 20;
  CommandResult r;
  try {
    r = run_command(s);
  } catch (const CommandError& e) {
    t.missing = true;
    t.rc = 127;
    t.err = e.what();
    return t;
  }
  t.out = std::move(r.out);
  t.err = std::move(r.err);
  if (r.timed_out) {
    t.timed_out = true;
    t.rc = 128;
  } else if (r.exit_code < 0) {
    t.rc = 128 + r.term_signal;
  } else {
    t.rc = r.exit_code;
  }
  return t;
}

std::vector<std::string> maybe_sudo(std::vector<std::string> argv, bool sudo) {
  if (sudo && ::geteuid() != 0) argv.insert(argv.begin(), "sudo");
  return argv;
}

std::optional<std::string> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;  // a FIFO with nothing more to give now
    if (n < 0 || out.size() + static_cast<size_t>(n) > kMaxHostFileBytes) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::optional<std::string> read_trimmed(const std::string& path) {
  auto s = read_file(path);
  if (!s) return s;
  return trim(*s);
}

std::string trim(std::string_view s) { return std::string(ascii_trim(s)); }

std::vector<std::string> split_lines(std::string_view s) {
  std::vector<std::string> v;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    if (nl == std::string_view::npos) nl = s.size();
    v.emplace_back(s.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return v;
}

std::vector<std::string> split_ws(std::string_view s) {
  // What `istream >> std::string` splits on (isspace in the C locale), without a stream per call.
  constexpr std::string_view kBlank = " \t\n\v\f\r";
  std::vector<std::string> v;
  for (size_t b = s.find_first_not_of(kBlank); b != std::string_view::npos; b = s.find_first_not_of(kBlank, b)) {
    size_t e = std::min(s.find_first_of(kBlank, b), s.size());
    v.emplace_back(s.substr(b, e - b));
    b = e;
  }
  return v;
}

// In place, without a copy or exceptions: check-zombie parses two per process on the node, and a copy, stoll and its
// try block would cost more than the rest of the parse.
std::optional<long long> parse_int(std::string_view s) {
  std::string_view t = ascii_trim(s);
  if (!t.empty() && t[0] == '+') {  // from_chars takes '-' but not '+'
    t.remove_prefix(1);
    if (t.empty() || !is_ascii_digit(t[0])) return std::nullopt;
  }
  long long v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;  // not all digits, or out of range
  return v;
}

void Findings::add(ExitCode c, std::string msg) {
  code = worse(code, c);
  if (!msg.empty()) msgs.push_back(std::move(msg));
}

CheckOutcome Findings::outcome(const std::string& sep) const {
  std::string m;
  for (size_t i = 0; i < msgs.size(); ++i) m += (i ? sep : "") + msgs[i];
  return {code, m};
}

}  // namespace gcm::health

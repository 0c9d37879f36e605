#include "suite/verdict.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/json_limits.h"

namespace gcm::suite {

namespace {

using health::ExitCode;

std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string last;
  for (std::string l; std::getline(in, l);) {
    size_t b = l.find_first_not_of(" \t\r");
    if (b != std::string::npos) last = l.substr(b);
  }
  if (last.size() > 300) last = last.substr(0, 300) + "...";
  return last;
}

// What a check wrote to its result pipe, one JSON object a line; the last of each key wins.
struct ReportedResult {
  std::optional<std::string> msg, usage_error, error, start_error;
};

ReportedResult read_results(const std::string& results) {
  ReportedResult r;
  std::istringstream in(results);
  for (std::string line; std::getline(in, line);) {
    auto j = parse_json_limited(line);
    if (!j.is_object()) continue;
    if (j.contains("msg")) r.msg = j.value("msg", "");
    if (j.contains("usage_error")) r.usage_error = j.value("usage_error", "");
    if (j.contains("error")) r.error = j.value("error", "");
    if (j.contains("start_error")) r.start_error = j.value("start_error", "");
  }
  return r;
}

}  // namespace

std::string seconds_text(double s) { return s == std::floor(s) ? fmt::format("{}", s) : fmt::format("{:.1f}", s); }

Verdict judge(Profile profile, double budget_s, const CheckEntry& e, const JobOutcome& o) {
  Verdict v;
  v.name = e.name;
  v.start = o.start;
  v.end = o.end > 0 ? o.end : o.start;
  ReportedResult r = read_results(o.results);
  bool builtin = !e.check.empty();
  if (!o.started) {
    v.code = ExitCode::UNKNOWN;
    v.msg = "could not start: " + o.start_error;
  } else if (o.timed_out) {
    v.code = ExitCode::CRITICAL;
    v.timed_out = true;
    v.msg = fmt::format("timed out: killed after its {} s timeout", seconds_text(e.timeout_s));
  } else if (o.budget_exhausted) {
    v.code = ExitCode::CRITICAL;
    v.timed_out = true;
    v.msg =
        fmt::format("timed out: killed when the {} budget of {} s ran out", to_string(profile), seconds_text(budget_s));
  } else if (o.term_signal) {
    v.code = ExitCode::CRITICAL;
    v.msg =
        fmt::format("{} by signal {} ({})", builtin ? "crashed" : "killed", o.term_signal, ::strsignal(o.term_signal));
  } else if (r.start_error) {
    v.code = ExitCode::UNKNOWN;
    v.msg = *r.start_error;
  } else if (r.usage_error) {
    v.code = ExitCode::UNKNOWN;  // a misconfigured entry: reported loudly, but it says nothing about the node
    v.msg = "usage error: " + *r.usage_error;
  } else if (r.error) {
    v.code = ExitCode::WARN;  // the reference's "check did not exit normally"
    v.msg = "check did not exit normally: " + *r.error;
  } else if (builtin || e.nagios_exit_codes) {
    v.code = o.exit_code >= 0 && o.exit_code <= 3 ? static_cast<ExitCode>(o.exit_code)
                                                  : (builtin ? ExitCode::UNKNOWN : ExitCode::CRITICAL);
    v.msg = r.msg ? *r.msg : last_line(o.output);
    if (!builtin && o.exit_code > 3) v.msg = fmt::format("exit {}: {}", o.exit_code, v.msg);
  } else {
    v.code = o.exit_code == 0 ? ExitCode::OK : ExitCode::CRITICAL;
    v.msg = o.exit_code == 0 ? last_line(o.output) : fmt::format("exit {}: {}", o.exit_code, last_line(o.output));
  }
  bool bad = v.code == ExitCode::CRITICAL || (e.fail_on_warning && v.code == ExitCode::WARN);
  v.failed = e.severity == Severity::Drain && bad;
  return v;
}

std::string verdict_line(const Verdict& v) {
  std::string word = v.timed_out ? "TIMEOUT" : health::status_word(v.code);
  std::string line = fmt::format("{} - {} [{:.2f} s]", word, v.name, std::max(0.0, v.end - v.start));
  if (!v.msg.empty()) line += ". " + v.msg.substr(0, v.msg.find('\n'));
  return line;
}

SuiteSummary summarize(const std::vector<Verdict>& verdicts, const char* profile_name, const std::string& node,
                       double elapsed_s, double budget_s) {
  SuiteSummary s;
  std::vector<std::string> failed_names, warned_names, unknown_names;
  for (const auto& v : verdicts) {
    if (v.failed) {
      failed_names.push_back(v.name);
      if (!s.first_failure) s.first_failure = &v;
    } else if (v.code == ExitCode::WARN || v.code == ExitCode::CRITICAL) {
      warned_names.push_back(v.name);
    } else if (v.code == ExitCode::UNKNOWN) {
      unknown_names.push_back(v.name);
    }
  }
  s.failed = s.first_failure != nullptr;
  s.line = fmt::format("gcm {} {}: {} - {} checks", profile_name, node, s.failed ? "FAIL" : "PASS", verdicts.size());
  if (s.failed) s.line += fmt::format(", {} failed ({})", failed_names.size(), fmt::join(failed_names, ", "));
  if (!warned_names.empty())
    s.line += fmt::format(", {} not OK without draining ({})", warned_names.size(), fmt::join(warned_names, ", "));
  if (!unknown_names.empty())
    s.line += fmt::format(", {} unknown ({})", unknown_names.size(), fmt::join(unknown_names, ", "));
  s.line += fmt::format(" in {:.2f} s (budget {} s)", elapsed_s, seconds_text(budget_s));
  return s;
}

}  // namespace gcm::suite

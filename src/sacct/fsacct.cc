#include "sacct/fsacct.h"
#include "core/clock.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <ctime>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>

#include "core/ascii.h"
#include "core/subprocess.h"
#include "sacct/date_expr.h"
#include "sacct/publish.h"
#include "sacct/sacct_records.h"
#include "slurm/parse_error.h"
#include "slurm/timestamp.h"
#include "sinks/fd_writer.h"

namespace gcm::sacct {

namespace {

void split_into(std::string_view s, std::string_view delim, std::vector<std::string_view>& out) {
  out.clear();
  size_t start = 0;
  while (true) {
    size_t at = s.find(delim, start);
    if (at == std::string_view::npos) break;
    out.push_back(s.substr(start, at - start));
    start = at + delim.size();
  }
  out.push_back(s.substr(start));
}

void append_list(std::vector<std::string>& out, std::string_view value) {
  std::vector<std::string_view> parts;
  split_into(value, ",", parts);
  for (auto p : parts)
    if (!p.empty()) out.emplace_back(p);
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

}  // namespace

FsacctArgs parse_fsacct_args(const std::vector<std::string>& args) {
  FsacctArgs a;
  auto take = [&](size_t& i, const std::string& arg, const char* s, const char* l, std::string& value) -> bool {
    // -S X, -SX, --starttime X, --starttime=X
    if ((s && arg == s) || (l && arg == l)) {
      if (i + 1 >= args.size()) throw std::invalid_argument(fmt::format("Option '{}' requires an argument.", arg));
      value = args[++i];
      return true;
    }
    if (l && arg.rfind(std::string(l) + "=", 0) == 0) {
      value = arg.substr(std::strlen(l) + 1);
      return true;
    }
    if (s && arg.size() > 2 && arg.rfind(s, 0) == 0 && arg[1] != '-') {
      value = arg.substr(2);
      return true;
    }
    return false;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string v;
    if (take(i, arg, nullptr, "--wrapper-batch-size", v)) {
      char* endp = nullptr;
      long long n = std::strtoll(v.c_str(), &endp, 10);
      if (v.empty() || *endp || n < 1)
        throw std::invalid_argument(
            fmt::format("Invalid value for '--wrapper-batch-size': '{}' is not an integer of at least 1", v));
      a.batch_size = n;
      continue;  // never passed to sacct
    }
    a.original.push_back(arg);
    if (arg == "--wrapper-help") {
      a.wrapper_help = true;
      a.original.pop_back();
      continue;
    }
    size_t before = i;
    if (take(i, arg, "-S", "--starttime", v)) {
      a.start = v;
    } else if (take(i, arg, "-E", "--endtime", v)) {
      a.end = v;
    } else if (take(i, arg, "-o", "--format", v)) {
      append_list(a.format, v);
    } else if (take(i, arg, "-s", "--state", v)) {
      append_list(a.states, v);
    } else if (take(i, arg, nullptr, "--delimiter", v)) {
      a.delimiter = v;
    } else {
      a.passthrough.push_back(arg);
      continue;
    }
    if (i != before) a.original.push_back(args[i]);  // the value word of "-S X"
  }
  if (a.format.empty()) {
    const char* env = std::getenv("SACCT_FORMAT");
    if (env && *env)
      append_list(a.format, env);
    else
      a.format = {"jobid", "jobname", "partition", "account", "alloccpus", "state", "exitcode"};
  }
  return a;
}

bool fsacct_patches(const FsacctArgs& a) {
  if (!a.start && !a.end) return false;
  if (a.states.empty()) return false;
  const auto& terminal = terminal_job_state_names();
  for (const auto& s : a.states)
    if (std::find(terminal.begin(), terminal.end(), ascii_lower(s)) == terminal.end()) return false;
  bool parsable = false;
  for (const auto& p : a.passthrough) {
    if (p == "-h" || p == "--help") return false;
    parsable = parsable || p == "-P" || p == "--parsable2";
  }
  return parsable;
}

std::vector<std::string> fsacct_sacct_argv(const FsacctArgs& a, int64_t now, const TimeZone& zone,
                                           FsacctWindow& window) {
  window = {};
  if (a.start) window.start = parse_date_expr(*a.start, now, zone);
  if (a.end) window.end = parse_date_expr(*a.end, now, zone);
  std::vector<std::string> argv = {"sacct"};
  argv.insert(argv.end(), a.passthrough.begin(), a.passthrough.end());
  if (window.end) {
    argv.push_back("-E");
    argv.push_back(naive_local_iso(*window.end, zone));
  }
  argv.push_back("--delimiter");
  argv.push_back(a.delimiter);
  if (!a.states.empty()) {
    argv.push_back("--state");
    argv.push_back(join(a.states, ","));
  }
  argv.push_back("-o");
  argv.push_back(join(a.format, ",") + ",end");
  if (window.start) {
    argv.push_back("-S");
    argv.push_back(naive_local_iso(*window.start - 120, zone));
  }
  return argv;
}

FsacctFilter::FsacctFilter(std::string delimiter, bool header, FsacctWindow window, TimeZone zone, int64_t batch_size,
                           std::function<void(std::string_view)> emit)
    : delimiter_(std::move(delimiter)),
      expect_header_(header),
      window_(window),
      zone_(std::move(zone)),
      batch_size_(static_cast<size_t>(batch_size < 1 ? 1 : batch_size)),
      emit_(std::move(emit)),
      repair_(delimiter_) {}

void FsacctFilter::feed(std::string_view physical_line) {
  if (auto logical = repair_.feed(physical_line)) handle(*logical);
}

void FsacctFilter::handle(std::string_view line) {
  if (delimiter_.empty()) {
    emit_(line);
    return;
  }
  split_into(line, delimiter_, fields_);
  if (expect_header_ && !header_seen_) {
    header_seen_ = true;
    for (size_t i = 0; i + 1 < fields_.size(); ++i) {
      std::string_view n = fields_[i];
      if (n == "Start" || n == "Submit" || n == "End" || n == "Eligible") date_columns_.push_back(i);
    }
    size_t cut = line.size() - fields_.back().size() - (fields_.size() > 1 ? delimiter_.size() : 0);
    emit_(line.substr(0, cut));
    return;
  }
  ++rows_in_;
  std::string_view end_text = fields_.back();
  std::optional<int64_t> end;
  try {
    end = slurm::parse_timestamp(end_text, zone_).unix_seconds;
  } catch (const slurm::ParseError&) {
    ++bad_end_;
  }
  if (!end || (window_.start && *end < *window_.start) || (window_.end && *end > *window_.end)) return;
  std::string out;
  out.reserve(line.size() + 16 * date_columns_.size());
  size_t d = 0;
  for (size_t i = 0; i + 1 < fields_.size(); ++i) {
    if (i) out += delimiter_;
    if (d < date_columns_.size() && date_columns_[d] == i) {
      ++d;
      try {
        out += slurm::time_to_time_aware(fields_[i], zone_, zone_);
        continue;
      } catch (const slurm::ParseError&) {
        // kept as sacct printed it
      }
    }
    out += fields_[i];
  }
  batch_.push_back(std::move(out));
  ++rows_out_;
  if (batch_.size() >= batch_size_) flush_batch();
}

void FsacctFilter::flush_batch() {
  for (const auto& l : batch_) emit_(l);
  batch_.clear();
}

void FsacctFilter::finish() { flush_batch(); }

std::string fsacct_help() {
  return "Usage: gcm fsacct [SACCT OPTIONS]... [--wrapper-batch-size N]\n"
         "\n"
         "  Time-bound-strict sacct: with -P, a -S and/or -E window and only terminal states in -s (boot_fail,\n"
         "  cancelled, completed, deadline, failed, node_fail, out_of_memory, preempted, requeued, resizing,\n"
         "  revoked, timeout), only the rows whose End lies inside [start, end] are printed. sacct is asked for one\n"
         "  more column (end) starting 2 minutes early; that column is removed from the output. Start, Submit, End\n"
         "  and Eligible are written as ISO 8601 with the host's offset. Records broken across lines by a newline\n"
         "  in a field are joined (with a literal \\n). Any other command line runs sacct unchanged.\n"
         "\n"
         "Options of the wrapper (everything else goes to sacct):\n"
         "  -S, --starttime DATE     window start (last wins); dates as date -d: ISO 8601, @unix, now, today,\n"
         "                           yesterday, '3 hours ago', '2021-04-07 +2 hours' (parsed in process)\n"
         "  -E, --endtime DATE       window end (last wins)\n"
         "  -o, --format LIST        columns (repeatable; default $SACCT_FORMAT or\n"
         "                           jobid,jobname,partition,account,alloccpus,state,exitcode)\n"
         "  -s, --state LIST         states (repeatable)\n"
         "  --delimiter TEXT         field delimiter (default |#)\n"
         "  --wrapper-batch-size N   rows handled and written at a time (default 1; output is the same)\n"
         "  --wrapper-help           this help (-h/--help go to sacct)\n"
         "\n"
         "sacct may run for at most 2 hours (a hung sacct, e.g. with slurmdbd unreachable, must not hold fsacct\n"
         "forever); then it is killed and fsacct exits 137.\n"
         "\n"
         "Exit status: sacct's (128+N when sacct was killed by signal N).\n";
}

namespace {

void print_missing_sacct(int err) {
  std::cerr << "Error: "
            << fmt::format("Could not find executable 'sacct': {}. Current PATH: {}", std::strerror(err),
                           std::getenv("PATH") ? std::getenv("PATH") : "")
            << "\n";
}

// sacct as fsacct wraps it: in fsacct's own process group (a terminal's Ctrl-C reaches both, as when fsacct was an
// exec of sacct), its stderr straight through, and a bound on how long it may run.
CommandSpec sacct_spec(std::vector<std::string> argv, std::chrono::milliseconds timeout) {
  CommandSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = timeout;
  spec.stdin_from = 0;
  spec.stderr_to = 2;
  spec.own_process_group = false;
  return spec;
}

// sacct's exit code as fsacct's, with a word on stderr when it did not exit by itself.
int sacct_exit_code(const CommandSpec& spec, const CommandResult& r) {
  if (r.timed_out)
    std::cerr << fmt::format("fsacct: sacct ran longer than {} s and was killed\n", spec.timeout.count() / 1000.0);
  else if (r.term_signal)
    std::cerr << "fsacct: sacct was killed by signal " << r.term_signal << "\n";
  if (r.term_signal) return 128 + r.term_signal;
  return r.exit_code >= 0 ? r.exit_code : 1;
}

// Turns sacct's output chunks into lines for the filter (sacct's output is read with errors=replace, as GCM does).
class LineFeeder {
 public:
  explicit LineFeeder(FsacctFilter& filter) : filter_(filter) {}
  void feed(std::string_view chunk) {
    size_t start = 0;
    while (true) {
      size_t nl = chunk.find('\n', start);
      if (nl == std::string_view::npos) break;
      std::string_view line = chunk.substr(start, nl - start);
      if (!partial_.empty()) {
        partial_.append(line);
        line = partial_;
      }
      deliver(line);
      partial_.clear();
      start = nl + 1;
    }
    partial_.append(chunk.substr(start));
  }
  void finish() {
    if (!partial_.empty()) deliver(partial_);
    partial_.clear();
  }

 private:
  void deliver(std::string_view line) {
    if (first_invalid_utf8(line) != std::string_view::npos) {
      fixed_.clear();
      fix_utf8(line, true, fixed_);
      line = fixed_;
    }
    filter_.feed(line);
  }

  FsacctFilter& filter_;
  std::string partial_, fixed_;
};

}  // namespace

int run_fsacct(const std::vector<std::string>& args, std::chrono::milliseconds sacct_timeout) {
  FsacctArgs a;
  try {
    a = parse_fsacct_args(args);
  } catch (const std::invalid_argument& e) {
    std::cerr << "Error: " << e.what() << "\n";
    return 2;
  }
  if (a.wrapper_help) {
    std::cout << fsacct_help();
    return 0;
  }
  std::vector<std::string> argv;
  FsacctWindow window;
  const bool patched = fsacct_patches(a);
  TimeZone zone = TimeZone::host();
  if (patched) {
    try {
      argv = fsacct_sacct_argv(a, unix_time_now(), zone, window);
    } catch (const slurm::ParseError& e) {
      std::cerr << "Error: " << e.what() << "\n";
      return 2;
    }
  } else {
    argv = {"sacct"};
    argv.insert(argv.end(), a.original.begin(), a.original.end());
  }
  if (find_executable("sacct").empty()) {
    print_missing_sacct(ENOENT);
    return 127;
  }
  CommandSpec spec = sacct_spec(std::move(argv), sacct_timeout);
  if (!patched) {  // sacct runs unchanged, its output straight through
    spec.stdout_to = 1;
    try {
      return sacct_exit_code(spec, run_command_streaming(spec, {}));
    } catch (const CommandError& e) {
      std::cerr << "Error: " << e.what() << "\n";
      return 127;
    }
  }

  ::signal(SIGPIPE, SIG_IGN);
  FdWriter out(1, 1u << 16);
  bool header = true;
  for (const auto& p : a.passthrough)
    if (p == "-n" || p == "--noheader") header = false;
  FsacctFilter filter(a.delimiter, header, window, zone, a.batch_size, [&](std::string_view line) {
    out.buffer().append(line);
    out.buffer().push_back('\n');
    out.maybe_flush();
  });
  LineFeeder lines(filter);
  CommandResult result;
  try {
    result = run_command_streaming(spec, [&](std::string_view chunk) { lines.feed(chunk); });
  } catch (const CommandError& e) {
    std::cerr << "Error: " << e.what() << "\n";
    return 127;
  } catch (const std::exception& e) {  // the filter or the write failed: sacct was killed with it
    std::cerr << "Error: fsacct: " << e.what() << "\n";
    return 1;
  }
  int rc = 0;
  try {
    if (!result.timed_out) lines.finish();  // a line cut off by the kill is not a row
    filter.finish();
    out.flush();
  } catch (const std::exception& e) {
    std::cerr << "Error: fsacct: " << e.what() << "\n";
    rc = 1;
  }
  if (filter.bad_end())
    std::cerr << "fsacct: " << filter.bad_end() << " row(s) without a date in the end column were left out\n";
  if (rc) return rc;
  return sacct_exit_code(spec, result);
}

}  // namespace gcm::sacct

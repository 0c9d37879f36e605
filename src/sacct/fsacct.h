// gcm fsacct: the time-bound-strict sacct wrapper (gcm-reference.md §1.15). sacct -S/-E select jobs that were in a
// state at some time in the window; fsacct keeps only the rows whose End lies in [start, end], so consecutive
// windows of a backfill never report a job twice. It asks sacct for one more column (end), starting 2 minutes early,
// and removes that column again. Dates are parsed in process; --wrapper-batch-size only sets how many rows are
// handled (and written) at a time, so batched and unbatched output are identical.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time_zone.h"
#include "slurm/sacct_lines.h"

namespace gcm::sacct {

struct FsacctArgs {
  std::optional<std::string> start, end;  // -S/--starttime, -E/--endtime (last wins)
  std::vector<std::string> format;        // -o/--format, flattened
  std::vector<std::string> states;        // -s/--state, flattened
  std::string delimiter = "|#";           // --delimiter (last wins)
  int64_t batch_size = 1;                 // --wrapper-batch-size
  bool wrapper_help = false;              // --wrapper-help
  std::vector<std::string> passthrough;   // everything else, in order
  std::vector<std::string> original;      // the argv minus --wrapper-batch-size (the unpatched command)
};

// Parses fsacct's own options out of args (the words after `fsacct`). Throws std::invalid_argument naming a bad
// value (a missing value, a batch size below 1).
FsacctArgs parse_fsacct_args(const std::vector<std::string>& args);

// Whether the command line is patched (start or end given, every state terminal, -P/--parsable2, no -h/--help).
bool fsacct_patches(const FsacctArgs& a);

struct FsacctWindow {
  std::optional<int64_t> start, end;  // unix seconds; open when absent
};

// The sacct argv of a patched run, and the window rows are kept in. Throws slurm::ParseError for a bad date.
std::vector<std::string> fsacct_sacct_argv(const FsacctArgs& a, int64_t now, const TimeZone& zone,
                                           FsacctWindow& window);

// Turns the patched sacct output into fsacct's output, a line at a time (with the multi-line repair).
class FsacctFilter {
 public:
  FsacctFilter(std::string delimiter, bool header, FsacctWindow window, TimeZone zone, int64_t batch_size,
               std::function<void(std::string_view line)> emit);
  void feed(std::string_view physical_line);
  void finish();  // writes a partial batch
  uint64_t rows_in() const { return rows_in_; }
  uint64_t rows_out() const { return rows_out_; }
  uint64_t bad_end() const { return bad_end_; }  // rows whose End is not a date (dropped)

 private:
  void handle(std::string_view line);
  void flush_batch();

  std::string delimiter_;
  bool expect_header_;
  FsacctWindow window_;
  TimeZone zone_;
  size_t batch_size_;
  std::function<void(std::string_view)> emit_;
  slurm::SacctLineRepair repair_;
  bool header_seen_ = false;
  std::vector<size_t> date_columns_;
  std::vector<std::string> batch_;
  std::vector<std::string_view> fields_;
  uint64_t rows_in_ = 0, rows_out_ = 0, bad_end_ = 0;
};

// How long sacct may run under fsacct. GCM has no option for it (and a wrapper that passes unknown options to sacct
// should not take one), but a hung sacct (slurmdbd unreachable) must not hold a cron job or a backfill without
// --sacct-timeout forever; two hours is far beyond any query the testbed or GCM's CI (sacct_timeout=1800) runs.
inline constexpr std::chrono::milliseconds kFsacctSacctTimeout = std::chrono::hours(2);

// Runs fsacct with args; returns the exit code (sacct's; 128+9 when sacct ran past sacct_timeout and was killed).
int run_fsacct(const std::vector<std::string>& args, std::chrono::milliseconds sacct_timeout = kFsacctSacctTimeout);

// fsacct's own help (--wrapper-help).
std::string fsacct_help();

}  // namespace gcm::sacct

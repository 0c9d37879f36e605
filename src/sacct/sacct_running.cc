#include "sacct/sacct_running.h"

#include <fmt/format.h>

#include "cli/option_binder.h"
#include "collectors/slurm_backend.h"
#include "collectors/slurm_collectors.h"
#include "core/subprocess.h"
#include "sacct/sacct_records.h"
#include "slurm/coerce.h"
#include "slurm/delimited.h"
#include "slurm/derived_cluster.h"
#include "slurm/hostlist.h"
#include "slurm/sacct_lines.h"
#include "slurm/timestamp.h"

namespace gcm::sacct {

// Named one by one: a using-directive here would reach the files compiled after this one in a unity batch.
using slurm::DelimitedHeader;
using slurm::DelimitedOptions;
using slurm::DelimitedParser;
using slurm::DelimitedRow;
using slurm::derived_cluster;
using slurm::maybe_float;
using slurm::maybe_int;
using slurm::nodelist_or_null;
using slurm::ParseError;
using slurm::RowLengthPolicy;
using slurm::SacctLineRepair;
using slurm::SlurmClient;
using slurm::SlurmError;
using slurm::SlurmQuery;
using slurm::time_to_time_aware;

namespace {

// sacct prints every job and step id starting with the job's number (123, 123_4, 123.batch, 123+0, 123_[1-5]).
bool looks_like_job_id(std::string_view id) { return !id.empty() && id[0] >= '0' && id[0] <= '9'; }

// The start of a line for a message: at most 60 bytes, bytes outside printable ASCII as '?' (the output may be
// binary).
std::string excerpt(std::string_view line) {
  std::string out;
  for (char c : line.substr(0, 60)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return line.size() > 60 ? out + "..." : out;
}

// One sacct column's text as its schema field holds it. A time that cannot be read is kept as sacct printed it (the
// reference aborted the whole round on one such value); the error is returned for the caller to count and log.
std::optional<std::string> set_sacct_value(Value& v, SacctColumnKind kind, std::string_view text,
                                           const TimeZone& zone) {
  switch (kind) {
    case SacctColumnKind::String:
      v.set_string(text);
      break;
    case SacctColumnKind::MaybeInt: {
      auto n = maybe_int(text);
      v = n ? Value(*n) : Value();
      break;
    }
    case SacctColumnKind::MaybeFloat: {
      auto d = maybe_float(text);
      v = d ? Value(*d) : Value();
      break;
    }
    case SacctColumnKind::Time:
      try {
        v.set_string(time_to_time_aware(text, zone, zone));
      } catch (const ParseError& e) {
        v.set_string(text);
        return e.what();
      }
      break;
    case SacctColumnKind::NodeList: {
      auto names = nodelist_or_null(text);
      if (!names) {
        v = Value();
      } else {
        List l;
        l.reserve(names->size());
        for (auto& n : *names) l.emplace_back(std::move(n));
        v = Value(std::move(l));
      }
      break;
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> sacct_running_argv(const std::string& delimiter) {
  return {"sacct", "-P", "-s", "running,r", "--delimiter", delimiter, "-a", "-o", "all", "--duplicates", "--noconvert"};
}

SacctRunningStats collect_sacct_running(SlurmClient& client, const CollectorContext& ctx, const SacctRunningOptions& o,
                                        RecordOut& out) {
  const Schema& schema = sacct_schema();
  SlurmQuery q;
  q.name = "sacct_running";
  q.argv = sacct_running_argv(o.delimiter);
  q.timeout = o.timeout;

  SacctLineRepair repair(o.delimiter);
  DelimitedOptions dopts;
  dopts.delimiter = o.delimiter;
  dopts.length_mismatch = RowLengthPolicy::Skip;  // parse_delimited: a row of the wrong length is skipped, counted
  DelimitedParser parser(dopts);
  SacctRunningStats stats;
  Record r(schema);
  const size_t derived_field = sacct_derived_cluster_field();
  std::vector<std::optional<size_t>> column;  // schema field -> output column
  std::optional<size_t> partition_col, nodelist_col, cluster_col, jobid_col;

  client.stream_lines(q, [&](std::string_view physical) {
    auto logical = repair.feed(physical);
    if (!logical) return;
    size_t skipped = parser.skipped_rows();
    const DelimitedRow* row = parser.feed(*logical);
    if (parser.skipped_rows() != skipped && ctx.log)
      ctx.log->warn("sacct_running: line {} skipped: its field count differs from the header's {}", repair.lines(),
                    parser.header().size());
    if (column.empty() && parser.has_header()) {
      const DelimitedHeader& h = parser.header();
      column.resize(schema.fields.size());
      for (size_t f = 0; f < derived_field; ++f) {
        column[f] = h.first(schema.fields[f].name);
        // The reference's field keeps its name; a Slurm that renamed the column fills it from the new name.
        if (!column[f] && !sacct_renamed_column(schema.fields[f].name).empty())
          column[f] = h.first(sacct_renamed_column(schema.fields[f].name));
        if (!column[f] && ctx.log) ctx.log->debug("sacct_running: no column {}; it is null", schema.fields[f].name);
      }
      partition_col = h.first("Partition");
      nodelist_col = h.first("NodeList");
      cluster_col = h.first("Cluster");
      jobid_col = h.first("JobID");
      // Without it this is not sacct's output (garbage, an error page, binary): every "record" would hold only
      // derived_cluster.
      if (!jobid_col)
        throw SlurmError(q.name, command_line(q.argv), repair.lines(),
                         fmt::format("not a sacct header (no JobID column): '{}'", excerpt(*logical)));
    }
    if (!row) return;
    if (!looks_like_job_id((*row)[*jobid_col])) {
      ++stats.not_sacct_rows;
      if (ctx.log)
        ctx.log->warn("sacct_running: line {} skipped: not a sacct row (JobID '{}' is not a job id): '{}'",
                      repair.lines(), excerpt((*row)[*jobid_col]), excerpt(*logical));
      return;
    }
    for (size_t f = 0; f < derived_field; ++f) {
      Value& v = r[f];
      if (!column[f]) {
        v = Value();
        continue;
      }
      if (auto error = set_sacct_value(v, sacct_column_kind(f), (*row)[*column[f]], o.zone)) {
        ++stats.bad_values;
        if (ctx.log)
          ctx.log->warn("sacct_running: line {}: {} kept as printed: {}", repair.lines(), schema.fields[f].name,
                        *error);
      }
    }
    r[derived_field] = derived_cluster(
        [&](std::string_view key) -> std::optional<std::string_view> {
          std::optional<size_t> c;
          if (key == "Partition") c = partition_col;
          if (key == "NodeList") c = nodelist_col;
          if (key == "Cluster") c = cluster_col;
          if (!c) return std::nullopt;
          return (*row)[*c];
        },
        ctx.heterogeneous_cluster_v1, ctx.cluster);
    out.emit(r);
    ++stats.records;
  });
  stats.skipped_rows = parser.skipped_rows();
  stats.unterminated = repair.pending();
  if (stats.unterminated && ctx.log)
    ctx.log->warn("sacct_running: the output ended inside a record broken across lines (dropped)");
  return stats;
}

namespace {

std::string line_errors_message(const SacctRunningStats& s) {
  std::vector<std::string> what;
  if (s.skipped_rows) what.push_back(fmt::format("{} sacct row(s) had the wrong field count", s.skipped_rows));
  if (s.not_sacct_rows) what.push_back(fmt::format("{} row(s) were not sacct rows (no job id)", s.not_sacct_rows));
  if (s.unterminated) what.push_back("the output ended inside a broken record");
  return fmt::format("{} (the other records were delivered)", fmt::join(what, "; "));
}

class SacctRunning : public Collector {
 public:
  explicit SacctRunning(OptionBinder& b) {
    b.option("--delimiter", "delimiter", delimiter_, "Delimiter sacct is asked to use (--delimiter).")
        ->capture_default_str();
    timeout_s_ = 300;
    add_slurm_timeout_option(b, timeout_s_);
    add_slurm_backend_options(b, backend_);
  }

  std::vector<CollectorTask> tasks(const CollectorContext& context) override {
    if (delimiter_.empty()) throw UsageError("Invalid value for '--delimiter': it must not be empty");
    opts_.delimiter = delimiter_;
    opts_.timeout = slurm_timeout_ms(timeout_s_);
    opts_.zone = TimeZone::host();
    slurm_.configure(backend_, opts_.timeout);
    if (slurm_.rest())
      context.log->info("sacct_running: running jobs and steps from slurmrestd at {}", backend_.rest_url);
    return {{"sacct_running", &sacct_schema(), [this](const CollectorContext& c, RecordOut& o) {
               SacctRunningStats s = collect_sacct_running(slurm_.client(), c, opts_, o);
               c.log->info("sacct_running: {} record(s); {} row(s) skipped, {} time value(s) kept as printed",
                           s.records, s.skipped_rows + s.not_sacct_rows, s.bad_values);
               if (s.skipped_rows || s.not_sacct_rows || s.unterminated)
                 throw std::runtime_error(line_errors_message(s));
             }}};
  }

 private:
  std::string delimiter_ = "|#";
  double timeout_s_ = 300;
  SacctRunningOptions opts_;
  SlurmBackendOptions backend_;
  SlurmBackend slurm_;
};

const bool kSacctRunningRegistered = register_collector({
    "sacct_running",
    "Running jobs and steps from sacct (or slurmrestd)",
    "Running jobs and steps from `sacct -P -s running,r --delimiter '|#' -a -o all --duplicates --noconvert` "
    "(LOG): one Sacct record per row, records broken across lines by a newline in a field joined back. With "
    "--slurm-backend rest the rows come from slurmrestd (GET /slurmdb/vX/jobs?state=running).",
    3600,
    "sacct_running",
    [](OptionBinder& b) { return std::make_unique<SacctRunning>(b); },
});

}  // namespace

}  // namespace gcm::sacct

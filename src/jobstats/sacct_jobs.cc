#include "jobstats/sacct_jobs.h"

#include <fmt/format.h>

#include "core/subprocess.h"
#include "slurm/delimited.h"
#include "slurm/hostlist.h"
#include "slurm/parse_error.h"
#include "slurm/timestamp.h"
#include "slurm/tres.h"
#include "sacct/date_expr.h"

namespace gcm::jobstats {

namespace {

// "|#" as sacct_running uses: job names and accounts may contain '|', this pair they do not.
constexpr std::string_view kDelimiter = "|#";

std::string format_arg() {
  std::string f;
  for (auto c : kSacctColumns) f += (f.empty() ? "" : ",") + std::string(c);
  return "--format=" + f;
}

std::vector<std::string> base_argv(const SacctOptions& o) {
  std::vector<std::string> argv = {o.sacct, "-X", "-P", "--delimiter=" + std::string(kDelimiter)};
  argv.insert(argv.end(), o.extra_args.begin(), o.extra_args.end());
  argv.push_back(format_arg());
  return argv;
}

std::string run_sacct(const SacctOptions& o, const std::vector<std::string>& argv) {
  CommandSpec spec;
  spec.argv = argv;
  spec.timeout = o.timeout;
  CommandResult r;
  try {
    r = run_command(spec);
  } catch (const CommandError& e) {
    throw SacctError(e.what());
  }
  if (!r.ok()) throw SacctError(describe_failure(spec, r));
  if (r.stdout_truncated) throw SacctError(command_line(argv) + ": output larger than the capture limit");
  return r.out;
}

}  // namespace

const std::vector<std::string_view> kSacctColumns = {"JobIDRaw", "JobID", "JobName", "User", "Account",  "Partition",
                                                     "Cluster",  "State", "Start",   "End",  "NodeList", "AllocTRES"};

std::vector<std::string> sacct_job_argv(const SacctOptions& o, std::string_view job_id) {
  auto argv = base_argv(o);
  argv.insert(argv.begin() + 1, {"-j", std::string(job_id)});
  return argv;
}

std::vector<std::string> sacct_window_argv(const SacctOptions& o, int64_t since, int64_t until) {
  auto argv = base_argv(o);
  // Without --state, sacct selects the jobs that existed at any time between -S and -E: every allocation that can
  // overlap the period (pending-only ones are dropped later, they allocated nothing).
  argv.insert(argv.begin() + 1,
              {"-a", "-S", sacct::naive_local_iso(since, o.zone), "-E", sacct::naive_local_iso(until, o.zone)});
  return argv;
}

std::vector<JobAllocation> parse_sacct_allocations(std::string_view output, const TimeZone& zone,
                                                   const std::string& command) {
  slurm::DelimitedOptions opt;
  opt.delimiter = std::string(kDelimiter);
  opt.length_mismatch = slurm::RowLengthPolicy::Error;
  std::vector<JobAllocation> jobs;
  std::vector<size_t> col;
  try {
    slurm::parse_delimited(output, opt, [&](const slurm::DelimitedHeader& h, const slurm::DelimitedRow& row) {
      if (col.empty()) {
        for (auto name : kSacctColumns) {
          auto i = h.first(name);
          if (!i) throw slurm::ParseError(fmt::format("line 1: no column {} in the header", name));
          col.push_back(*i);
        }
      }
      auto f = [&](size_t k) { return std::string(row[col[k]]); };
      JobAllocation j;
      j.job_id = f(0);
      if (j.job_id.empty()) throw slurm::ParseError(fmt::format("line {}: empty JobIDRaw", row.line_number));
      j.job_id_display = f(1);
      j.job_name = f(2);
      j.user = f(3);
      j.account = f(4);
      j.partition = f(5);
      j.cluster = f(6);
      j.state = f(7);
      try {
        j.start = slurm::parse_unix_time(row[col[8]], zone);
        j.end = slurm::parse_unix_time(row[col[9]], zone);
        j.node_list = f(10);
        // "None assigned" while pending.
        if (!j.node_list.empty() && j.node_list.find(' ') == std::string::npos)
          j.nodes = slurm::expand_hostlist(j.node_list);
        j.gpus = slurm::tres_value(row[col[11]], "gres/gpu");
      } catch (const slurm::ParseError& e) {
        throw slurm::ParseError(fmt::format("line {} (job {}): {}", row.line_number, j.job_id, e.what()));
      }
      jobs.push_back(std::move(j));
    });
  } catch (const slurm::ParseError& e) {
    throw SacctError(command + ": " + e.what());
  }
  return jobs;
}

JobAllocation sacct_job(const SacctOptions& o, std::string_view job_id) {
  if (auto p = job_id_problem(job_id)) throw SacctError(*p);
  auto argv = sacct_job_argv(o, job_id);
  auto jobs = parse_sacct_allocations(run_sacct(o, argv), o.zone, command_line(argv));
  // An array id (5_1) asks for a task: its row says JobID 5_1; a plain id may be the raw id of a task.
  for (auto& j : jobs)
    if (j.job_id == job_id || j.job_id_display == job_id) return j;
  if (jobs.size() == 1) return jobs.front();
  if (jobs.size() > 1)
    throw SacctError(
        fmt::format("job {} has {} allocations (an array or heterogeneous job): ask for one of them, "
                    "e.g. {}",
                    job_id, jobs.size(), jobs.front().job_id_display));
  throw SacctError(fmt::format("job {} does not exist: sacct knows no such job ({})", job_id, command_line(argv)));
}

std::vector<JobAllocation> sacct_window(const SacctOptions& o, int64_t since, int64_t until) {
  auto argv = sacct_window_argv(o, since, until);
  return parse_sacct_allocations(run_sacct(o, argv), o.zone, command_line(argv));
}

std::optional<std::string> job_id_problem(std::string_view id) {
  auto bad = [&] {
    return fmt::format("invalid job id '{}': expected a Slurm job id (digits, optionally _TASK or +COMPONENT)", id);
  };
  if (id.empty() || !std::isdigit(static_cast<unsigned char>(id[0]))) return bad();
  bool sep = false;
  for (size_t i = 0; i < id.size(); ++i) {
    char c = id[i];
    if (std::isdigit(static_cast<unsigned char>(c))) continue;
    if ((c == '_' || c == '+') && !sep && i + 1 < id.size()) {
      sep = true;
      continue;
    }
    return bad();
  }
  return std::nullopt;
}

}  // namespace gcm::jobstats

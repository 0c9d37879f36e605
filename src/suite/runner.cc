#include "suite/runner.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/base_sink.h>

#include "cli/option_binder.h"
#include "core/config.h"
#include "core/json_limits.h"
#include "core/logging.h"
#include "health/check.h"
#include "suite/gpu_job_mapping.h"
#include "suite/prepared_check.h"
#include "suite/supervisor.h"
#include "suite/verdict.h"

namespace gcm::suite {

namespace {

using health::CheckOutcome;
using health::ExitCode;

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

void write_result(int fd, const nlohmann::json& j) {
  write_all(fd, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

struct Context {
  const SuiteFile* suite = nullptr;
  Profile profile = Profile::Prolog;
  std::string node;
  std::string cluster;
  health::Killswitches killswitches;
};

health::CheckType check_type(Profile p) {
  switch (p) {
    case Profile::Prolog:
      return health::CheckType::Prolog;
    case Profile::Epilog:
      return health::CheckType::Epilog;
    case Profile::HealthCheck:
    case Profile::Agent:
    case Profile::Confirm:
      return health::CheckType::Nagios;
  }
  return health::CheckType::Nagios;
}

// Writes each formatted log line to a pipe with one write(2), so that what a part logged before it was killed is
// already in the parent (spdlog has no sink for a bare fd; a FILE* would hold lines back in its buffer).
class FdSink : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
 public:
  explicit FdSink(int fd) : fd_(fd) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t buf;
    formatter_->format(msg, buf);
    write_all(fd_, std::string(buf.data(), buf.size()));
  }
  void flush_() override {}

 private:
  int fd_;
};

// Runs one built-in check: its results and then {"rc": exit code} as lines to res_fd, its log lines to log_fd.
int run_builtin(const Context& ctx, Prepared& p, int log_fd, int res_fd) {
  health::CheckRun run;
  run.cluster = ctx.cluster;
  run.type = check_type(ctx.profile);
  run.verbose_out = true;
  run.timeout_s = p.timeout_opt;
  run.killswitches = ctx.killswitches;
  run.log = std::make_shared<spdlog::logger>(p.entry->name, std::make_shared<FdSink>(log_fd));
  run.on_output = [res_fd](const std::string& hc, const CheckOutcome& o) {
    write_result(res_fd, {{"health_check", hc}, {"code", static_cast<int>(o.code)}, {"msg", o.msg}});
  };
  int rc = 3;
  try {
    rc = p.check->run(run);
  } catch (const health::CheckUsageError& e) {
    write_result(res_fd, {{"usage_error", e.what()}});
    rc = 2;
  } catch (const std::exception& e) {
    write_result(res_fd, {{"error", e.what()}});
    rc = 1;
  } catch (...) {  // on a thread of a group, anything uncaught would end every check of the group
    write_result(res_fd, {{"error", "an exception that is not a std::exception"}});
    rc = 1;
  }
  write_result(res_fd, {{"rc", rc}});
  return rc;
}

[[noreturn]] void run_builtin_child(const Context& ctx, Prepared& p, int res_fd) {
  int rc = run_builtin(ctx, p, 2, res_fd);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(rc);
}

// The group child: every part on a thread of its own; each closes its pipes when done, which the parent reads as
// that check's end (its deadline no longer applies).
[[noreturn]] void run_builtin_group(const Context& ctx, const std::vector<Prepared*>& parts,
                                    const std::vector<PartFds>& fds) {
  // A tool that exits before reading its stdin must fail one check's write with EPIPE, not kill every check of
  // the group with SIGPIPE (core/subprocess restores the default in the tools it starts).
  ::signal(SIGPIPE, SIG_IGN);
  auto run_part = [&ctx](Prepared* p, PartFds f) {
    run_builtin(ctx, *p, f.out_fd, f.result_fd);
    ::close(f.out_fd);
    ::close(f.result_fd);
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < parts.size(); ++i) threads.emplace_back(run_part, parts[i], fds[i]);
  run_part(parts[0], fds[0]);  // the first on this thread: one thread fewer to start
  for (auto& t : threads) t.join();
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(0);
}

std::string with_node(std::string value, const std::string& node) {
  for (size_t p; (p = value.find("{node}")) != std::string::npos;) value.replace(p, 6, node);
  return value;
}

void set_environment(const SuiteFile& s, const std::string& node) {
  if (!std::getenv("PATH")) ::setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
  for (const auto& [k, v] : s.environment) ::setenv(k.c_str(), with_node(v, node).c_str(), 1);
}

std::optional<int64_t> env_job_id() {
  const char* id = std::getenv("SLURM_JOB_ID");
  if (!id || !*id) return std::nullopt;
  char* end = nullptr;
  long long v = std::strtoll(id, &end, 10);
  if (*end) return std::nullopt;
  return v;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

// Drains or resumes the node by gcm's ownership rules; everything it decides is logged.
void settle_node(const RunnerOptions& opts, const SuiteFile& suite, const Context& ctx, bool failed,
                 const std::string& reason, spdlog::logger& log) {
  std::string marker = failure_marker_path(suite.state_dir, ctx.node);
  ScontrolRunner scontrol = opts.scontrol;
  if (!scontrol) {
    auto path = locate_scontrol(suite.scontrol);
    if (!path) {
      log.error(
          "cannot {} node {}: scontrol not found (PATH, /usr/bin, /usr/local/bin, /opt/slurm/bin, /usr/sbin; "
          "set [slurm] scontrol in the suite)",
          failed ? "drain" : "check", ctx.node);
      return;
    }
    scontrol = make_scontrol_runner(*path, locate_slurm_conf(suite.slurm_conf), suite.slurm_timeout_s);
  }
  NodeState st;
  try {
    st = show_node(scontrol, ctx.node);
  } catch (const std::exception& e) {
    // Before slurmd has registered, or slurmctld down: nothing to do now; the next run tries again.
    log.warn("cannot read the state of node {} (not registered yet, or slurmctld unreachable): {}", ctx.node, e.what());
    return;
  }
  std::vector<std::string> adopted = read_lines(marker);
  Ownership owner = reason_owner(st, adopted);
  try {
    if (failed) {
      if (owner == Ownership::Other) {
        log.warn(
            "node {} already carries the reason '{}' (state {}), which gcm did not set: adding nothing "
            "(gcm's verdict: '{}')",
            ctx.node, st.reason, st.state, reason);
        return;
      }
      if (st.drain && st.reason == reason) {
        log.info("node {} is already drained with this reason", ctx.node);
        return;
      }
      if (st.drain && needs_confirmation(st.reason)) {
        // Replacing the detector's reason with this check's would let a later passing run resume the node without
        // the confirmation that the detector's drain waits for.
        log.warn("node {} is drained by gcm's detector ('{}'): keeping that reason (this run's verdict: '{}')",
                 ctx.node, st.reason, reason);
        return;
      }
      scontrol({"update", "NodeName=" + ctx.node, "State=DRAIN", "Reason=" + reason});
      log.warn("drained node {} (was {}{}): {}", ctx.node, st.state,
               st.reason.empty() ? "" : ", reason '" + st.reason + "'", reason);
      std::cout << fmt::format("gcm {}: drained node {}: {}", to_string(ctx.profile), ctx.node, reason) << std::endl;
      return;
    }
    if (ctx.profile != Profile::HealthCheck || !st.drain) return;
    if (owner == Ownership::Gcm && needs_confirmation(st.reason)) {
      log.info(
          "node {} is drained by gcm's detector ('{}'): the agent resumes it after its confirmation check, "
          "not this run",
          ctx.node, st.reason);
    } else if (owner == Ownership::Gcm) {
      scontrol({"update", "NodeName=" + ctx.node, "State=RESUME"});
      std::error_code ec;
      std::filesystem::remove(marker, ec);
      log.warn("resumed node {}: its checks pass again (it was drained by gcm: '{}')", ctx.node, st.reason);
      std::cout << fmt::format("gcm healthcheck: resumed node {} (was drained by gcm: {})", ctx.node, st.reason)
                << std::endl;
    } else {
      log.info("node {} is drained with a reason gcm did not set ('{}'): not resuming", ctx.node, st.reason);
    }
  } catch (const std::exception& e) {
    log.error("scontrol failed for node {}: {}", ctx.node, e.what());
  }
}

// Adds the reason Slurm gives a node whose prolog/epilog failed to the node's marker: a failed prolog is followed by
// the job's epilog, which may fail too, while Slurm keeps the first reason ("Prolog error"), so both must count.
void write_marker(const std::string& state_dir, const std::string& node, Profile p, spdlog::logger& log) {
  std::string path = failure_marker_path(state_dir, node);
  std::string slurm_reason = p == Profile::Prolog ? "Prolog error" : "Epilog error";
  std::vector<std::string> lines = read_lines(path);
  if (std::find(lines.begin(), lines.end(), slurm_reason) != lines.end()) return;
  std::error_code ec;
  std::filesystem::create_directories(state_dir, ec);
  std::ofstream out(path, std::ios::app);
  out << slurm_reason << "\n";
  if (!out.flush())
    log.warn("cannot write {}: Slurm's '{}' for this failure will not count as gcm's", path, slurm_reason);
}

// The last {"rc": N} a built-in check wrote: how it ended, whatever happened to its process afterwards.
std::optional<int> result_rc(const std::string& results) {
  std::optional<int> rc;
  std::istringstream in(results);
  for (std::string line; std::getline(in, line);) {
    auto j = parse_json_limited(line);
    if (j.is_object() && j.contains("rc") && j["rc"].is_number_integer()) rc = j["rc"].get<int>();
  }
  return rc;
}

// Runs the profile's checks: the built-in ones together in one child (a group, one thread per check), each external
// command in a child of its own. A check of the group that did not finish because another overran, or because the
// group's process died, runs again in a process of its own with the budget left, so that a hang or a crash is
// blamed on the check that caused it and costs the others nothing but time.
std::vector<JobOutcome> run_checks(const Context& ctx, std::vector<std::unique_ptr<Prepared>>& prepared,
                                   double budget_s, spdlog::logger& log) {
  std::vector<Job> jobs;
  std::vector<size_t> job_check;  // check index of each job
  GroupJob group;
  std::vector<Prepared*> group_parts;
  std::vector<size_t> part_check;
  for (size_t i = 0; i < prepared.size(); ++i) {
    Prepared* pp = prepared[i].get();
    if (pp->spec) {
      group.timeouts_s.push_back(pp->entry->timeout_s);
      group_parts.push_back(pp);
      part_check.push_back(i);
      continue;
    }
    Job j;
    j.name = pp->entry->name;
    j.timeout_s = pp->entry->timeout_s;
    j.argv = pp->entry->command;
    jobs.push_back(std::move(j));
    job_check.push_back(i);
  }
  std::vector<GroupJob> groups;
  // One built-in check alone is a plain job: a group would only add a thread.
  if (group_parts.size() == 1) {
    Prepared* pp = group_parts[0];
    jobs.push_back({pp->entry->name, pp->entry->timeout_s, [&ctx, pp](int fd) { run_builtin_child(ctx, *pp, fd); }});
    job_check.push_back(part_check[0]);
  } else if (!group_parts.empty()) {
    group.name = "built-in checks";
    group.child_main = [&ctx, &group_parts](const std::vector<PartFds>& fds) {
      run_builtin_group(ctx, group_parts, fds);
    };
    groups.push_back(std::move(group));
  }
  // Every child is forked before this process starts any thread (the sink is made afterwards).
  std::cout.flush();
  std::fflush(nullptr);
  double start = health::CheckRun::now();
  RunResult rr = run_all(jobs, groups, budget_s);

  std::vector<JobOutcome> out(prepared.size());
  for (size_t k = 0; k < jobs.size(); ++k) out[job_check[k]] = std::move(rr.jobs[k]);
  std::vector<size_t> again;
  if (!groups.empty()) {
    for (size_t k = 0; k < part_check.size(); ++k) {
      JobOutcome& o = rr.groups[0][k];
      size_t i = part_check[k];
      if (!o.process_output.empty() && k == 0) log.debug("built-in checks process output:\n{}", o.process_output);
      if (auto rc = result_rc(o.results)) {
        // It finished: its own code, even if the process later died of another check.
        o.exit_code = *rc;
        o.term_signal = 0;
      } else if (o.started && !o.timed_out && !o.budget_exhausted) {
        std::string why = o.interrupted   ? "the process it shared was killed when another check overran"
                          : o.term_signal ? fmt::format("the process it shared died of signal {}", o.term_signal)
                                          : fmt::format("the process it shared exited ({}) first", o.exit_code);
        log.warn("{}: did not finish ({}); running it again in a process of its own", prepared[i]->entry->name, why);
        again.push_back(i);
      }
      out[i] = std::move(o);
    }
  }
  if (!again.empty()) {
    double left = budget_s - (health::CheckRun::now() - start);
    std::vector<Job> retry;
    for (size_t i : again) {
      Prepared* pp = prepared[i].get();
      retry.push_back({pp->entry->name, pp->entry->timeout_s, [&ctx, pp](int fd) { run_builtin_child(ctx, *pp, fd); }});
    }
    std::vector<JobOutcome> second = run_jobs(retry, std::max(0.0, left));
    for (size_t k = 0; k < again.size(); ++k) {
      double first_start = out[again[k]].start;
      out[again[k]] = std::move(second[k]);
      out[again[k]].start = first_start;  // its time counts from the first attempt
    }
  }
  return out;
}

}  // namespace

std::string failure_marker_path(const std::string& state_dir, const std::string& node) {
  return fmt::format("{}/{}.failed", state_dir, node);
}

namespace {

void print_plan(const RunnerOptions& opts, const ProfileSpec& spec) {
  std::cout << fmt::format("{}: {} checks, budget {} s, drain {}\n", to_string(opts.profile), spec.checks.size(),
                           seconds_text(spec.budget_s), opts.drain.value_or(spec.drain));
  for (const auto& e : spec.checks) {
    std::string what = e.check.empty() ? fmt::format("command {}", fmt::join(e.command, " "))
                                       : fmt::format("{} {}", fmt::join(e.check, " "), fmt::join(e.args, " "));
    std::cout << fmt::format("  {}: {} [timeout {} s, severity {}{}]\n", e.name, what, seconds_text(e.timeout_s),
                             e.severity == Severity::Drain  ? "drain"
                             : e.severity == Severity::Warn ? "warn"
                                                            : "ignore",
                             e.fail_on_warning ? ", fails on WARNING" : "");
  }
}

// The suite's killswitch file. Returns false (after saying why on stderr) when the file is a mistake of the suite's
// setup; a file that cannot be parsed leaves every check enabled and is said in the log and in each record.
bool load_killswitches(const SuiteFile& suite, Context& ctx, spdlog::logger& log) {
  if (!suite.features_config) return true;
  try {
    std::vector<std::string> warnings;
    ctx.killswitches = health::Killswitches::load(*suite.features_config, &warnings);
    for (const auto& w : warnings) log.warn("{}", w);
    if (auto failure = ctx.killswitches.load_failure()) std::cerr << "Warning: " << *failure << "\n";
  } catch (const health::KillswitchFileError& e) {
    // A directory or an unreadable file is a mistake in the suite's setup, like a bad suite file.
    std::cerr << "Error: suite " << suite.path << ": [suite] features_config: " << e.what() << "\n";
    return false;
  } catch (const std::exception& e) {
    log.error("features_config {}: {} (no killswitch applies)", *suite.features_config, e.what());
  }
  return true;
}

// One verdict per check, each printed and logged at the level its status deserves.
std::vector<Verdict> judge_all(const Context& ctx, const ProfileSpec& spec, const std::vector<JobOutcome>& outcomes,
                               spdlog::logger& log) {
  std::vector<Verdict> verdicts;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const Verdict& v = verdicts.emplace_back(judge(ctx.profile, spec.budget_s, spec.checks[i], outcomes[i]));
    std::string line = verdict_line(v);
    std::cout << line << "\n";
    if (v.failed)
      log.error("{}", line);
    else if (v.code == ExitCode::OK)
      log.info("{}", line);
    else
      log.warn("{}", line);
    if (!outcomes[i].output.empty()) log.debug("{} output:\n{}", v.name, outcomes[i].output);
  }
  return verdicts;
}

// Telemetry: one record per check, one for the suite. A sink failure is logged, never changes the verdict.
void send_suite_telemetry(const Context& ctx, const std::vector<Verdict>& verdicts, const SuiteSummary& summary,
                          double start, std::optional<int64_t> job_id, const std::shared_ptr<spdlog::logger>& log) {
  const SuiteFile& suite = *ctx.suite;
  const char* profile_name = to_string(ctx.profile);
  health::CheckRun tele;
  tele.cluster = ctx.cluster;
  tele.type = check_type(ctx.profile);
  tele.log = log;
  // The suite sends every record (the checks only report verdicts): a killswitch file that fell back to "every
  // check enabled" is said in each of them.
  if (auto failure = ctx.killswitches.load_failure()) tele.telemetry_warnings.push_back(*failure);
  try {
    SinkContext sctx;
    sctx.command = std::string("gcm ") + profile_name;
    sctx.log = log;
    sctx.retry.retries = 0;  // a prolog must not wait for a telemetry backend
    tele.sink = make_sink(suite.sink, suite.sink_opts, sctx);
  } catch (const std::exception& e) {
    log->error("telemetry sink '{}': {} (no records sent)", suite.sink, e.what());
  }
  if (!tele.sink) return;
  for (const auto& v : verdicts) tele.send_telemetry(v.name, {v.code, v.msg}, v.start, job_id, ctx.node);
  tele.send_telemetry(fmt::format("gcm {}", profile_name),
                      {summary.failed ? ExitCode::CRITICAL : ExitCode::OK, summary.line}, start, job_id, ctx.node);
}

// A passed prolog writes the job's GPU mapping files (which the GPU monitors read to attribute GPUs to jobs).
void write_job_mapping(const SuiteFile& suite, std::optional<int64_t> job_id, const std::vector<unsigned>& gpus,
                       spdlog::logger& log) {
  if (!job_id) {
    log.warn("SLURM_JOB_ID is not set: no GPU mapping files written");
    return;
  }
  try {
    write_mapping_files(suite.gpu_job_mapping_dir, *job_id, gpus);
    log.info("job {}: wrote mapping files for GPUs {} in {}", *job_id, fmt::join(gpus, ","), suite.gpu_job_mapping_dir);
  } catch (const std::exception& e) {
    log.error("job {}: {}", *job_id, e.what());
  }
}

}  // namespace

int run_profile(const RunnerOptions& opts) {
  const char* profile_name = to_string(opts.profile);
  SuiteFile suite;
  std::vector<std::unique_ptr<Prepared>> prepared;
  const ProfileSpec* spec = nullptr;
  try {
    suite = load_suite(opts.suite_path);
    auto it = suite.profiles.find(opts.profile);
    if (it == suite.profiles.end())
      throw SuiteError(fmt::format("suite {}: has no [{}] table", suite.path, profile_name));
    spec = &it->second;
    prepared = prepare(*spec);
  } catch (const SuiteError& e) {
    std::cerr << "Error: " << e.what() << "\n";
    return kExitUsage;
  }
  if (opts.validate_only) {
    print_plan(opts, *spec);
    return kExitPass;
  }

  Context ctx;
  ctx.suite = &suite;
  ctx.profile = opts.profile;
  ctx.node = opts.node ? *opts.node : slurm_node_name();
  set_environment(suite, ctx.node);
  // Several slurmd on one host (multiple-slurmd setups, the testbed) need a mapping directory each.
  suite.gpu_job_mapping_dir = with_node(suite.gpu_job_mapping_dir, ctx.node);
  std::optional<std::string> conf = locate_slurm_conf(suite.slurm_conf);
  ctx.cluster = suite.cluster ? *suite.cluster : (conf ? cluster_name_of(*conf) : std::nullopt).value_or("local-node");
  std::shared_ptr<spdlog::logger> log;
  try {
    log = setup_logging({profile_name, ctx.node, suite.log_folder, suite.log_level, opts.log_stdout});
  } catch (const std::invalid_argument& e) {
    std::cerr << "Error: suite " << suite.path << ": [suite] log_level: " << e.what() << "\n";
    return kExitUsage;
  }
  if (!load_killswitches(suite, ctx, *log)) return kExitUsage;

  auto job_id = env_job_id();
  auto gpus = job_gpus_from_environment();
  if (opts.profile == Profile::Epilog && !suite.gpu_job_mapping_dir.empty() && job_id) {
    size_t n = remove_mapping_files(suite.gpu_job_mapping_dir, *job_id, gpus);
    log->info("job {}: removed {} GPU mapping files from {}", *job_id, n, suite.gpu_job_mapping_dir);
  }

  double t0 = health::CheckRun::now();
  std::vector<JobOutcome> outcomes = run_checks(ctx, prepared, spec->budget_s, *log);
  double elapsed = health::CheckRun::now() - t0;
  std::vector<Verdict> verdicts = judge_all(ctx, *spec, outcomes, *log);
  SuiteSummary summary = summarize(verdicts, profile_name, ctx.node, elapsed, spec->budget_s);
  std::cout << summary.line << std::endl;
  if (summary.failed)
    log->error("{}", summary.line);
  else
    log->info("{}", summary.line);
  send_suite_telemetry(ctx, verdicts, summary, t0, job_id, log);

  const Verdict* first_failure = summary.first_failure;
  std::string reason =
      first_failure ? drain_reason(first_failure->name, first_failure->msg, suite.reason_max_length) : "";
  if (opts.profile != Profile::HealthCheck) {
    std::error_code ec;
    if (summary.failed)
      write_marker(suite.state_dir, ctx.node, opts.profile, *log);
    else if (opts.profile == Profile::Prolog)
      std::filesystem::remove(failure_marker_path(suite.state_dir, ctx.node), ec);
  }
  if (opts.drain.value_or(spec->drain))
    settle_node(opts, suite, ctx, summary.failed, reason, *log);
  else if (summary.failed)
    log->info("not calling scontrol from the {} (drain = false): the exit code drains node {}", profile_name, ctx.node);

  if (!summary.failed && opts.profile == Profile::Prolog && !suite.gpu_job_mapping_dir.empty())
    write_job_mapping(suite, job_id, gpus, *log);
  log->flush();
  return summary.failed ? kExitFail : kExitPass;
}

}  // namespace gcm::suite

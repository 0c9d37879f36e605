// gcm slurm_monitor: every --interval seconds, one SLURMLog per scope (the cluster, and each partition with
// --heterogeneous-cluster-v1) with node, CPU and GPU totals from sinfo, controller load from sdiag and job statistics
// from the jobs sacct reports in the last interval, preceded by one SLURMLogAccountMetrics per account with running
// jobs. Formulas: gcm-reference.md §1.11.
#include "collectors/slurm_monitor.h"
#include "core/clock.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/ascii.h"
#include "cli/option_binder.h"
#include "collectors/slurm_backend.h"
#include "collectors/slurm_collectors.h"
#include "core/json_limits.h"
#include "core/subprocess.h"
#include "slurm/coerce.h"
#include "slurm/derived_cluster.h"
#include "slurm/duration.h"
#include "slurm/gres.h"
#include "slurm/job_state.h"
#include "slurm/node_state.h"
#include "slurm/timestamp.h"
#include "slurm/tres.h"
#include "slurm/version.h"

namespace gcm::slurm_monitor {

using slurm::kSdiag;
using slurm::kSdiagFirstStatistic;
using slurm::parse_sdiag_json;
using slurm::parse_sdiag_text;
using slurm::parse_slurm_version;
using slurm::Sdiag;
using slurm::sdiag_statistic_fields;

using slurm::ParseError;

namespace {

FieldSpec gauge(std::string name, FieldType type, std::string help, std::string unit = "") {
  return {std::move(name), type, FieldRole::Gauge, std::move(unit), std::move(help)};
}

// The nodes_<state> fields, in the reference's order (the last three are not states).
const std::vector<std::string> kNodeStateFields = {"allocated",
                                                   "completing",
                                                   "down",
                                                   "drained",
                                                   "draining",
                                                   "fail",
                                                   "failing",
                                                   "future",
                                                   "idle",
                                                   "inval",
                                                   "maint",
                                                   "reboot_issued",
                                                   "reboot_requested",
                                                   "mixed",
                                                   "perfctrs",
                                                   "planned",
                                                   "power_down",
                                                   "powered_down",
                                                   "powering_down",
                                                   "powering_up",
                                                   "reserved",
                                                   "unknown",
                                                   "not_responding",
                                                   "unknown_state",
                                                   "total"};

}  // namespace

constinit const LazySchema kSlurmLog{[] {
  Schema s;
  s.name = "SLURMLog";
  s.description =
      "Cluster (or, with --heterogeneous-cluster-v1, partition) aggregates of sinfo, sdiag and the "
      "jobs sacct reports in the last interval.";
  s.metric_prefix = "slurm";
  s.data_type = DataType::Metric;
  s.identifier = DataIdentifier::Generic;
  auto I = FieldType::Int;
  auto D = FieldType::Double;
  s.fields = {
      {"cluster", FieldType::String, FieldRole::Identity, "", "cluster name"},
      {"derived_cluster", FieldType::String, FieldRole::Identity, "",
       "<cluster>.<partition> for a partition's record with --heterogeneous-cluster-v1, else the cluster"},
      gauge("active_users", I, "users with running jobs"),
      gauge("running_and_pending_users", I, "users with running or pending jobs"),
      {"runaway_jobs", I, FieldRole::Attribute, "", "always null (disabled in the reference too)"},
      gauge("avg_cpus_alloc_per_job", D, "CPUs per running job, weighted by each job's time in the window"),
      gauge("avg_gpus_alloc_per_job", D, "GPUs per running job, weighted by each job's time in the window"),
      gauge("jobs_per_user_mean", D, "mean running jobs per active user"),
      gauge("jobs_per_user_variance", D, "sample variance of running jobs per active user"),
      gauge("job_runtime_mean", D, "mean elapsed time of running jobs", "seconds"),
      gauge("job_runtime_variance", D, "sample variance of the running jobs' elapsed time (s^2)"),
      gauge("job_suspended_mean", D, "mean suspended time of running jobs", "seconds"),
      gauge("job_suspended_variance", D, "sample variance of the running jobs' suspended time (s^2)"),
      gauge("job_wait_time_mean", D, "mean Start - Submit of running jobs", "seconds"),
      gauge("job_wait_time_variance", D, "sample variance of Start - Submit of running jobs (s^2)"),
      gauge("jobs_dist_training_percent", D, "fraction (0..1) of running jobs on more than one node"),
      gauge("jobs_pending", I, "pending (or requeued, suspended) jobs"),
      gauge("gpus_pending", I, "GPUs requested by pending jobs"),
      gauge("nodes_pending", I, "nodes requested by pending jobs"),
      gauge("jobs_failed", I, "jobs of the window that failed, were cancelled, timed out, ..."),
      gauge("jobs_running", I, "running jobs"),
      gauge("jobs_without_user", I, "jobs whose user is shown as a number (no passwd entry)"),
      gauge("total_cpus_alloc", I, "CPUs allocated on nodes running jobs"),
      gauge("total_gpus_alloc", I, "GPUs allocated on nodes running jobs"),
      gauge("total_nodes_alloc", I, "nodes running jobs"),
      gauge("total_down_nodes", I, "nodes in a down state (down, drained, fail, maint, ...)"),
      gauge("total_cpus_avail", I, "CPUs of every node"),
      gauge("total_gpus_avail", I, "GPUs of every node"),
      gauge("total_cpus_up", I, "CPUs of nodes not down"),
      gauge("total_gpus_up", I, "GPUs of nodes not down"),
      gauge("total_cpus_down", I, "CPUs of down nodes"),
      gauge("total_gpus_down", I, "GPUs of down nodes"),
  };
  for (const auto& st : kNodeStateFields) {
    std::string help = st == "not_responding"  ? "nodes not responding (state ends with '*')"
                       : st == "unknown_state" ? "nodes in a state without its own field (compound states too)"
                       : st == "total"         ? "nodes"
                                               : "nodes in state " + st;
    s.fields.push_back(gauge("nodes_" + st, I, help));
  }
  // Every Sdiag statistic, as newer GCM copies them into SLURMLog (its first five were the only ones before).
  for (const FieldSpec& f : sdiag_statistic_fields()) s.fields.push_back(f);
  return s;
}};

constinit const LazySchema kSlurmLogAccountMetrics{[] {
  Schema s;
  s.name = "SLURMLogAccountMetrics";
  s.description = "Aggregates of one account's running jobs in the slurm_monitor window.";
  s.metric_prefix = "slurm_account";
  s.data_type = DataType::Metric;
  s.identifier = DataIdentifier::Generic;
  auto I = FieldType::Int;
  auto D = FieldType::Double;
  s.fields = {
      {"prefix", FieldType::String, FieldRole::Attribute, "", "\"gcm.<account>.\""},
      {"account", FieldType::String, FieldRole::Identity, "", "Slurm account"},
      {"derived_cluster", FieldType::String, FieldRole::Identity, "", "cluster, or <cluster>.<partition>"},
      gauge("total_gpus_alloc", I, "GPUs allocated to the account's running jobs"),
      gauge("total_cpus_alloc", I, "CPUs allocated to the account's running jobs"),
      gauge("total_nodes_alloc", I, "nodes allocated to the account's running jobs"),
      gauge("job_runtime_mean", D, "mean elapsed time of the account's running jobs", "seconds"),
      gauge("job_runtime_variance", D, "sample variance of their elapsed time (s^2)"),
      gauge("active_users", I, "users with running jobs in the account"),
      gauge("jobs_dist_training_percent", D, "fraction (0..1) of the account's running jobs on several nodes"),
  };
  return s;
}};

namespace {

const bool kSlurmMonitorSchemasRegistered = register_schema(&kSlurmLog) && register_schema(&kSlurmLogAccountMetrics);

constexpr const char* kSacctFormat =
    "--format=jobid,user,alloccpus,alloctres,reqnodes,reqtres,submit,start,end,state,allocnodes,elapsed,suspended,"
    "account";

// Mean and unbiased sample variance; nullopt for no values (the reference's failed sub-computation).
struct Stats {
  std::optional<double> mean, variance;
};
Stats stats_of(const std::vector<double>& v) {
  Stats s;
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  double m = sum / static_cast<double>(v.size());
  double sq = 0;
  for (double x : v) sq += (x - m) * (x - m);
  s.mean = m;
  s.variance = v.size() == 1 ? 0.0 : sq / static_cast<double>(v.size() - 1);
  return s;
}

Value opt(const std::optional<double>& d) { return d ? Value(*d) : Value(); }

bool is_numeric_user(std::string_view u) {
  return !u.empty() && std::all_of(u.begin(), u.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int64_t column(const slurm::DelimitedHeader& h, std::string_view name) {
  auto i = h.first(name);
  if (!i) throw ParseError(fmt::format("sacct header has no column '{}'", name));
  return static_cast<int64_t>(*i);
}

}  // namespace

slurm::SlurmQuery sinfo_query(std::chrono::milliseconds timeout) {
  return {
      "slurm_monitor_sinfo",
      {"sinfo", "--all", "-N", "-O",
       "nodelist:256|,gres:256|,gresused:256|,cpus:256|,cpusstate:256|,statelong:256|,partitionname:256", "--noheader"},
      timeout};
}

slurm::SlurmQuery sdiag_query(bool json, std::chrono::milliseconds timeout) {
  if (json) return {"sdiag_json", {"sdiag", "--all", "--json"}, timeout};
  return {"sdiag", {"sdiag", "--all"}, timeout};
}

slurm::SlurmQuery version_query(std::chrono::milliseconds timeout) {
  return {"sinfo_version", {"sinfo", "-V"}, timeout};
}

slurm::SlurmQuery sdiag_reset_query(std::chrono::milliseconds timeout) {
  return {"sdiag_reset", {"sdiag", "--reset"}, timeout};
}

slurm::SlurmQuery sacct_query(int64_t start, int64_t end, const TimeZone& zone, const std::string& partition,
                              std::chrono::milliseconds timeout) {
  // The reference passed "-S <start>" as one argv element with a leading space and a -07:00 offset; Slurm 22.05
  // then returns no jobs. The window is written here as naive wall-clock time in the zone sacct runs in.
  slurm::SlurmQuery q{"slurm_monitor_sacct",
                      {"sacct", "-a", "-D", "-X", "-P", "--noconvert", "-S", slurm::format_naive(start, zone), "-E",
                       slurm::format_naive(end, zone), kSacctFormat},
                      timeout};
  if (!partition.empty()) {
    q.argv.push_back("--partition");
    q.argv.push_back(partition);
  }
  return q;
}

std::vector<SinfoNode> read_sinfo(slurm::SlurmClient& slurm, std::chrono::milliseconds timeout, spdlog::logger* log) {
  std::vector<SinfoNode> nodes;
  std::vector<std::string_view> f;
  size_t extra = 0;
  slurm.stream_lines(sinfo_query(timeout), [&](std::string_view line) {
    if (ascii_trim(line).empty()) return;
    slurm::split_fields(line, "|", f);
    if (f.size() < 7) throw ParseError(fmt::format("expected 7 '|'-separated fields, got {}", f.size()));
    if (f.size() > 7) ++extra;  // the reference warns and drops extra fields
    SinfoNode n;
    n.name = ascii_trim(f[0]);
    if (n.name.empty()) throw ParseError("empty node name");
    n.gpus = slurm::gres_count(slurm::parse_gres_list(ascii_trim(f[1])));
    n.gpus_used = slurm::gres_count(slurm::parse_gres_list(ascii_trim(f[2])));
    n.total_cpus = slurm::strict_int(ascii_trim(f[3]));
    n.alloc_cpus = slurm::parse_cpu_states(ascii_trim(f[4])).allocated;
    n.state_text = ascii_trim(f[5]);
    slurm::parse_node_state(n.state_text);  // validates
    std::string_view p = ascii_trim(f[6]);
    while (!p.empty() && p.back() == '*') p.remove_suffix(1);
    n.partition = p;
    nodes.push_back(std::move(n));
  });
  if (extra && log) log->warn("sinfo: {} line(s) had more than 7 fields; the extra fields were ignored", extra);
  return nodes;
}

SacctJobs read_sacct(slurm::SlurmClient& slurm, const slurm::SlurmQuery& query, int64_t window_end,
                     const TimeZone& zone) {
  SacctJobs jobs;
  slurm::DelimitedOptions o;
  o.delimiter = "|";
  o.length_mismatch = slurm::RowLengthPolicy::Error;
  struct Cols {
    int64_t user, account, state, alloc_cpus, alloc_tres, req_nodes, req_tres, submit, start, end, alloc_nodes, elapsed,
        suspended;
  };
  std::optional<Cols> c;
  auto time_of = [&](std::string_view v) -> std::optional<int64_t> {
    try {
      return slurm::parse_unix_time(v, zone);
    } catch (const ParseError&) {
      return std::nullopt;  // unparsable: the job is left out of the time-based statistics, as in the reference
    }
  };
  slurm.stream_rows(query, o, [&](const slurm::DelimitedHeader& h, const slurm::DelimitedRow& row) {
    if (!c)
      c = Cols{column(h, "User"),      column(h, "Account"),  column(h, "State"),      column(h, "AllocCPUS"),
               column(h, "AllocTRES"), column(h, "ReqNodes"), column(h, "ReqTRES"),    column(h, "Submit"),
               column(h, "Start"),     column(h, "End"),      column(h, "AllocNodes"), column(h, "Elapsed"),
               column(h, "Suspended")};
    SacctJob j;
    j.user = row[c->user];
    j.account = row[c->account];
    j.state = row[c->state];
    j.alloc_cpus = slurm::strict_int(row[c->alloc_cpus]);
    j.alloc_gpus = slurm::tres_value(row[c->alloc_tres], "gres/gpu");
    j.req_nodes = slurm::strict_int(row[c->req_nodes]);
    j.req_gpus = slurm::tres_value(row[c->req_tres], "gres/gpu");
    j.alloc_nodes = slurm::strict_int(row[c->alloc_nodes]);
    j.runtime_s = slurm::elapsed_string_to_seconds(row[c->elapsed]);
    j.suspended_s = slurm::elapsed_string_to_seconds(row[c->suspended]);
    j.submit = time_of(row[c->submit]);
    j.start = time_of(row[c->start]);
    j.end = row[c->end] == "Unknown" ? std::optional<int64_t>(window_end) : time_of(row[c->end]);
    jobs.push_back(std::move(j));
  });
  return jobs;
}

// The node fields of a scope's SlurmLog record: nodes unique by name (the last row wins), counted by state.
void fill_node_fields(Record& r, const std::vector<SinfoNode>& nodes) {
  std::unordered_map<std::string_view, size_t> last;
  std::vector<size_t> order;
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto [it, inserted] = last.try_emplace(nodes[i].name, i);
    if (inserted)
      order.push_back(i);
    else
      it->second = i;
  }
  std::map<std::string, int64_t> states;
  int64_t down_nodes = 0, cpus_avail = 0, gpus_avail = 0, cpus_up = 0, gpus_up = 0, cpus_down = 0, gpus_down = 0;
  int64_t cpus_alloc = 0, gpus_alloc = 0, nodes_alloc = 0;
  for (size_t first : order) {
    const SinfoNode& n = nodes[last[nodes[first].name]];
    slurm::NodeState st = slurm::parse_node_state(n.state_text);
    if (st.has(slurm::NodeFlag::NotResponding)) ++states["not_responding"];
    std::string_view counted = st.counted_state();
    bool has_field = !counted.empty() && std::find(kNodeStateFields.begin(), kNodeStateFields.end() - 3, counted) !=
                                             kNodeStateFields.end() - 3;
    ++states[has_field ? std::string(counted) : "unknown_state"];
    ++states["total"];
    bool down = st.is_down();
    if (down) {
      ++down_nodes;
      cpus_down += n.total_cpus;
      gpus_down += n.gpus;
    } else {
      cpus_up += n.total_cpus;
      gpus_up += n.gpus;
    }
    cpus_avail += n.total_cpus;
    gpus_avail += n.gpus;
    if (st.is_running_jobs()) {
      cpus_alloc += n.alloc_cpus;
      gpus_alloc += n.gpus_used;
      ++nodes_alloc;
    }
  }
  r.at("total_down_nodes") = down_nodes;
  r.at("total_cpus_alloc") = cpus_alloc;
  r.at("total_gpus_alloc") = gpus_alloc;
  r.at("total_nodes_alloc") = nodes_alloc;
  r.at("total_cpus_avail") = cpus_avail;
  r.at("total_gpus_avail") = gpus_avail;
  r.at("total_cpus_up") = cpus_up;
  r.at("total_gpus_up") = gpus_up;
  r.at("total_cpus_down") = cpus_down;
  r.at("total_gpus_down") = gpus_down;
  if (!order.empty())  // with no nodes every nodes_* field stays null
    for (const auto& st : kNodeStateFields) r.at("nodes_" + st) = states[st];
}

// The job fields of a scope's SlurmLog record; returns the running jobs, which the per-account records summarise.
std::vector<const SacctJob*> fill_job_fields(Record& r, const SacctJobs& jobs, int64_t window_start,
                                             int64_t window_end) {
  int64_t pending = 0, gpus_pending = 0, nodes_pending = 0, failed = 0, without_user = 0;
  std::set<std::string_view> rp_users;
  std::vector<const SacctJob*> running;
  for (const auto& j : jobs) {
    bool is_pending = slurm::is_pending_job_state(j.state);
    bool is_running = slurm::is_running_job_state(j.state);
    if (is_pending) {
      ++pending;
      gpus_pending += j.req_gpus;
      nodes_pending += j.req_nodes;
    }
    if (slurm::is_failed_job_state(j.state)) ++failed;
    if (is_numeric_user(j.user)) ++without_user;
    if (is_pending || is_running) rp_users.insert(j.user);
    if (is_running) running.push_back(&j);
  }
  r.at("jobs_pending") = pending;
  r.at("gpus_pending") = gpus_pending;
  r.at("nodes_pending") = nodes_pending;
  r.at("jobs_failed") = failed;
  r.at("jobs_without_user") = without_user;
  r.at("running_and_pending_users") = static_cast<int64_t>(rp_users.size());
  r.at("jobs_running") = static_cast<int64_t>(running.size());

  // Time-weighted allocation over the window.
  if (window_end > window_start) {
    double weight = 0, cpus = 0, gpus = 0;
    for (const SacctJob* j : running) {
      if (!j->start || !j->end) continue;
      double overlap = static_cast<double>(std::min(*j->end, window_end) - std::max(*j->start, window_start));
      weight += overlap;
      cpus += overlap * static_cast<double>(j->alloc_cpus);
      gpus += overlap * static_cast<double>(j->alloc_gpus);
    }
    r.at("avg_cpus_alloc_per_job") = weight > 0 ? cpus / weight : 0.0;
    r.at("avg_gpus_alloc_per_job") = weight > 0 ? gpus / weight : 0.0;
  }
  std::vector<double> wait, runtime, suspended;
  std::map<std::string_view, int64_t> per_user;
  int64_t multi_node = 0;
  for (const SacctJob* j : running) {
    if (j->start && j->submit) wait.push_back(static_cast<double>(*j->start - *j->submit));
    runtime.push_back(static_cast<double>(j->runtime_s));
    suspended.push_back(static_cast<double>(j->suspended_s));
    ++per_user[j->user];
    if (j->alloc_nodes > 1) ++multi_node;
  }
  std::vector<double> jobs_per_user;
  for (const auto& [u, n] : per_user) jobs_per_user.push_back(static_cast<double>(n));
  Stats s = stats_of(jobs_per_user);
  r.at("jobs_per_user_mean") = opt(s.mean);
  r.at("jobs_per_user_variance") = opt(s.variance);
  s = stats_of(runtime);
  r.at("job_runtime_mean") = opt(s.mean);
  r.at("job_runtime_variance") = opt(s.variance);
  s = stats_of(suspended);
  r.at("job_suspended_mean") = opt(s.mean);
  r.at("job_suspended_variance") = opt(s.variance);
  s = stats_of(wait);
  r.at("job_wait_time_mean") = opt(s.mean);
  r.at("job_wait_time_variance") = opt(s.variance);
  r.at("active_users") = static_cast<int64_t>(per_user.size());
  if (!running.empty())
    r.at("jobs_dist_training_percent") = static_cast<double>(multi_node) / static_cast<double>(running.size());

  return running;
}

// One SlurmLogAccountMetrics record per account of the running jobs, in order of first appearance.
void emit_account_metrics(const std::vector<const SacctJob*>& running, const std::string& derived, RecordOut& out) {
  std::vector<std::string_view> accounts;
  std::map<std::string_view, std::vector<const SacctJob*>> by_account;
  for (const SacctJob* j : running) {
    if (j->account.empty()) continue;
    auto& v = by_account[j->account];
    if (v.empty()) accounts.push_back(j->account);
    v.push_back(j);
  }
  Record a(kSlurmLogAccountMetrics);
  for (std::string_view acct : accounts) {
    const auto& v = by_account[acct];
    int64_t g = 0, c = 0, n = 0, multi = 0;
    std::vector<double> rt;
    std::set<std::string_view> users;
    for (const SacctJob* j : v) {
      g += j->alloc_gpus;
      c += j->alloc_cpus;
      n += j->alloc_nodes;
      if (j->alloc_nodes > 1) ++multi;
      rt.push_back(static_cast<double>(j->runtime_s));
      users.insert(j->user);
    }
    Stats rs = stats_of(rt);
    a[0] = fmt::format("gcm.{}.", acct);
    a[1] = acct;
    a[2] = derived;
    a[3] = g;
    a[4] = c;
    a[5] = n;
    a[6] = opt(rs.mean);
    a[7] = opt(rs.variance);
    a[8] = static_cast<int64_t>(users.size());
    a[9] = static_cast<double>(multi) / static_cast<double>(v.size());
    out.emit(a);
  }
}

void emit_scope(const std::string& cluster, const std::string& derived, const std::vector<SinfoNode>& nodes,
                const SacctJobs& jobs, const Sdiag& sdiag, int64_t window_start, int64_t window_end, RecordOut& out,
                RecordOut* logs_out) {
  Record r(kSlurmLog);
  r.at("cluster") = cluster;
  r.at("derived_cluster") = derived;
  fill_node_fields(r, nodes);

  static const size_t first_sdiag = static_cast<size_t>(kSlurmLog->index_of("server_thread_count"));
  const size_t stats = kSdiag->fields.size() - kSdiagFirstStatistic;
  for (size_t i = 0; i < stats; ++i) r[first_sdiag + i] = sdiag.record[kSdiagFirstStatistic + i];

  // The job fields stay null when sacct reported none.
  if (!jobs.empty()) emit_account_metrics(fill_job_fields(r, jobs, window_start, window_end), derived, out);
  (logs_out ? *logs_out : out).emit(r);
}

void collect(slurm::SlurmClient& slurm, slurm::SlurmClient& sacct, const Params& p, RecordOut& out, spdlog::logger* log,
             RecordOut* logs_out, Sdiag* sdiag_out) {
  const int64_t end = p.now, start = p.now - p.interval;
  std::vector<SinfoNode> nodes = read_sinfo(slurm, p.timeout, log);
  bool json = p.sdiag_json || [&] {
    std::pair<int, int> version = p.slurm_version ? *p.slurm_version : [&] {
      auto q = version_query(p.timeout);
      std::string text = slurm.output(q);
      try {
        return parse_slurm_version(text);
      } catch (const ParseError& e) {
        throw slurm::SlurmError(q.name, command_line(q.argv), 1, e.what());
      }
    }();
    return version >= std::make_pair(23, 2);
  }();
  auto sq = sdiag_query(json, p.timeout);
  std::string sdiag_text = slurm.output(sq);
  Sdiag sdiag;
  try {
    sdiag = json ? parse_sdiag_json(sdiag_text) : parse_sdiag_text(sdiag_text);
  } catch (const ParseError& e) {
    throw slurm::SlurmError(sq.name, command_line(sq.argv), 0,
                            fmt::format("`{}`: {}", command_line(sq.argv), e.what()));
  }
  if (p.sdiag_reset) {
    auto rq = sdiag_reset_query(p.timeout);
    try {
      slurm.output(rq);
    } catch (const std::exception& e) {
      if (log) log->warn("slurm_monitor: the sdiag counters were not reset: {}", e.what());
    }
  }
  if (sdiag_out) *sdiag_out = sdiag;

  std::optional<std::string> first_error;
  if (p.heterogeneous_cluster_v1) {
    std::vector<std::string> partitions;
    for (const auto& n : nodes)
      if (!n.partition.empty() && std::find(partitions.begin(), partitions.end(), n.partition) == partitions.end())
        partitions.push_back(n.partition);
    for (const auto& part : partitions) {
      std::vector<SinfoNode> mine;
      for (const auto& n : nodes)
        if (n.partition == part) mine.push_back(n);
      SacctJobs jobs;
      try {
        jobs = read_sacct(sacct, sacct_query(start, end, p.sacct_zone, part, p.timeout), end, p.sacct_zone);
      } catch (const std::exception& e) {
        if (log) log->error("slurm_monitor: partition {} skipped: {}", part, e.what());
        if (!first_error) first_error = e.what();
        continue;
      }
      std::string derived = slurm::derived_cluster(
          [&](std::string_view key) -> std::optional<std::string_view> {
            if (key == "PARTITION") return part;
            return std::nullopt;
          },
          true, p.cluster);
      emit_scope(p.cluster, derived, mine, jobs, sdiag, start, end, out, logs_out);
    }
  }
  SacctJobs jobs = read_sacct(sacct, sacct_query(start, end, p.sacct_zone, "", p.timeout), end, p.sacct_zone);
  emit_scope(p.cluster, p.cluster, nodes, jobs, sdiag, start, end, out, logs_out);
  if (first_error) throw std::runtime_error(*first_error);
}

namespace {

class SlurmMonitor : public Collector {
 public:
  explicit SlurmMonitor(OptionBinder& b) {
    add_slurm_timeout_option(b, timeout_s_,
                             "Seconds each Slurm command (sinfo, sdiag, sacct) may run before it is killed and the "
                             "round fails.");
    b.flag("--sdiag-reset", "sdiag_reset", sdiag_reset_,
           "Run `sdiag --reset` after each scrape, so each Sdiag record counts one interval (GCM resets always; "
           "it needs root or SlurmUser, and a failed reset is only a warning).");

    add_slurm_backend_options(b, backend_);
  }

  // Three tasks, so that each record type has its own sink round (the Prometheus sink retires a schema's series
  // that a round did not renew): the first queries Slurm and writes the account records, keeping the SLURMLog
  // records and the statistics, which the second and third write. A round whose scrape failed leaves both empty.
  std::vector<CollectorTask> tasks(const CollectorContext&) override {
    slurm_.configure(backend_, slurm_timeout_ms(timeout_s_));
    return {{"slurm_monitor accounts", &kSlurmLogAccountMetrics.get(),
             [this](const CollectorContext& ctx, RecordOut& out) { round(ctx, out); }},
            {"slurm_monitor", &kSlurmLog.get(),
             [this](const CollectorContext&, RecordOut& out) {
               for (const auto& r : logs_.records) out.emit(r);
               logs_.records.clear();
             }},
            {"sdiag", &kSdiag.get(), [this](const CollectorContext& ctx, RecordOut& out) {
               if (!sdiag_) return;
               sdiag_->record.at("cluster") = ctx.cluster;
               out.emit(sdiag_->record);
               sdiag_.reset();
             }}};
  }

 private:
  void round(const CollectorContext& ctx, RecordOut& out) {
    Params p;
    p.cluster = ctx.cluster;
    p.heterogeneous_cluster_v1 = ctx.heterogeneous_cluster_v1;
    p.interval = ctx.interval;
    p.now = unix_time_now();
    p.timeout = slurm_timeout_ms(timeout_s_);
    p.sdiag_json = slurm_.rest();  // slurmrestd's /diag is the JSON form, whatever the version
    p.slurm_version = version_;    // asked once, on the first round that gets an answer
    if (!version_ && !p.sdiag_json) {
      // As the reference, an unknown version means the text sdiag, which every Slurm version has.
      p.slurm_version = std::make_pair(0, 0);
      try {
        version_ = parse_slurm_version(slurm_.client().output(version_query(p.timeout)));
        p.slurm_version = version_;
      } catch (const std::exception& e) {
        ctx.log->warn("slurm_monitor: the Slurm version is unknown (`sinfo -V`: {}); using `sdiag --all`", e.what());
      }
    }
    p.sdiag_reset = sdiag_reset_;
    logs_.records.clear();
    sdiag_.reset();
    Sdiag sdiag;
    // The statistics are written even when a later query (sacct) fails the round: they were read.
    auto keep_statistics = [&] {
      if (!sdiag.record.at("server_thread_count").is_null()) sdiag_ = sdiag;
    };
    try {
      collect(slurm_.client(), sacct_, p, out, ctx.log.get(), &logs_, &sdiag);
    } catch (...) {
      keep_statistics();
      throw;
    }
    keep_statistics();
  }

  struct Keep : RecordOut {
    std::vector<Record> records;
    void emit(const Record& r) override { records.push_back(r); }
  };

  double timeout_s_ = 60;
  bool sdiag_reset_ = false;
  Keep logs_;
  std::optional<Sdiag> sdiag_;
  std::optional<std::pair<int, int>> version_;
  SlurmBackendOptions backend_;
  SlurmBackend slurm_;  // sinfo and sdiag (slurmrestd with --slurm-backend rest)

  // sacct runs in UTC, so the window written without an offset means the same instants to it as to us, whatever
  // the host's zone (and no local time is ambiguous at a DST change).
  slurm::CliSlurmClient sacct_{slurm::CliSlurmClient::Options{{"TZ=UTC"}}};
};

const bool kSlurmMonitorRegistered = register_collector({
    "slurm_monitor",
    "Cluster aggregates: node states, CPU/GPU totals, scheduler, job statistics",
    "Cluster aggregates every --interval seconds (METRIC): node states and CPU/GPU totals from sinfo, controller "
    "load from sdiag, and statistics of the jobs sacct reports in the last interval (running, pending, failed, "
    "users, wait/run times, time-weighted allocation), one SLURMLogAccountMetrics per account with running jobs "
    "and one SLURMLog; per partition too with --heterogeneous-cluster-v1. Each round also writes one Sdiag LOG "
    "record with every scheduler, backfill, job and RPC statistic of sdiag.",
    300,
    "gcm.monitoring.cli.slurm_monitor",
    [](OptionBinder& b) -> std::unique_ptr<Collector> { return std::make_unique<SlurmMonitor>(b); },
});

}  // namespace
}  // namespace gcm::slurm_monitor

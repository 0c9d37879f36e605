#include "health/check.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "core/host_text.h"
#include "slurm/derived_cluster.h"

namespace gcm::health {

namespace {

std::vector<HealthCheckSpec>& checks() {
  static std::vector<HealthCheckSpec> v;
  return v;
}

std::vector<std::pair<std::string, std::string>>& groups() {
  static std::vector<std::pair<std::string, std::string>> v;
  return v;
}

}  // namespace

bool register_health_check(HealthCheckSpec spec) {
  checks().push_back(std::move(spec));
  return true;
}
const std::vector<HealthCheckSpec>& health_check_registry() { return checks(); }

bool register_health_group(const std::string& name, const std::string& help) {
  groups().emplace_back(name, help);
  return true;
}
const std::vector<std::pair<std::string, std::string>>& health_group_registry() { return groups(); }

std::string node_hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::optional<std::chrono::steady_clock::time_point> CheckRun::deadline() const {
  if (timeout_s <= 0) return std::nullopt;
  return started + std::chrono::seconds(timeout_s);
}

std::optional<std::string> CheckRun::output_line(const std::string& health_check, const CheckOutcome& o) const {
  bool shown = verbose_out || type == CheckType::Nagios || type == CheckType::App;
  if (!shown) return std::nullopt;
  std::string line = fmt::format("{} - {}", status_word(o.code), health_check);
  if ((verbose_out || type == CheckType::App) && !o.msg.empty()) line += ". " + o.msg;
  return line;
}

void CheckRun::print_output(const std::string& health_check, const CheckOutcome& o) const {
  if (on_output) return on_output(health_check, o);
  if (auto line = output_line(health_check, o)) std::cout << *line << std::endl;
}

void CheckRun::send_telemetry(const std::string& health_check, const CheckOutcome& o, double start_time,
                              std::optional<int64_t> job_id, std::optional<std::string> node) {
  HealthCheckResult r;
  r.node = node ? *node : node_hostname();
  r.cluster = cluster;
  r.derived_cluster = slurm::derived_cluster(
      [&](std::string_view key) -> std::optional<std::string_view> {
        if (key == "Node") return std::string_view(r.node);
        return std::nullopt;
      },
      heterogeneous_cluster_v1, cluster);
  r.health_check = health_check;
  r.type = to_string(type);
  r.result = static_cast<int>(o.code);
  r.msg = o.msg;
  r.gpu_node_id = gpu_node_id ? gpu_node_id : read_gpu_node_id();
  if (job_id) {
    r.job_id = *job_id;
  } else if (type == CheckType::Prolog || type == CheckType::Epilog) {
    const char* id = std::getenv("SLURM_JOB_ID");
    char* end = nullptr;
    long long v = id ? std::strtoll(id, &end, 10) : 0;
    if (id && *id && end && *end == '\0') {
      r.job_id = v;
    } else {
      if (log) log->error("SLURM_JOB_ID is not set for prolog/epilog check.");
      r.msg += "\nSLURM_JOB_ID is not set for prolog/epilog check.";
    }
  }
  if (sink) add_kubernetes_metadata(r);
  for (const auto& w : telemetry_warnings) r.msg += "\nWARNING: " + w;
  r.start_time = start_time;
  r.end_time = now();
  if (!sink) return;
  try {
    BatchInfo info;
    info.ts = static_cast<int64_t>(r.end_time);
    info.schema = &health_check_schema(r.kubernetes_jobs, r.kubernetes_pods);
    info.data_type = DataType::Log;
    info.heterogeneous_cluster_v1 = heterogeneous_cluster_v1;
    sink->begin_round(info);
    sink->begin_chunk(info);
    sink->write(health_check_record(r));
    sink->end_chunk();
    sink->end_round(info);
    sink->flush();
  } catch (const std::exception& e) {
    if (log) log->error("Telemetry failed with exception: {}", e.what());
  }
}

int CheckRun::run_standard(const std::string& health_check, const std::string& killswitch,
                           const std::function<Verdict()>& fn) {
  double start = now();
  started = std::chrono::steady_clock::now();
  Verdict v;
  if (!killswitch.empty() && killswitches.disabled(killswitch)) {
    v = CheckOutcome{ExitCode::OK, fmt::format("{} is disabled by killswitch.", health_check)};
  } else {
    v = fn();
  }
  for (auto& part : v.parts) {
    part.outcome.msg = bounded_message(part.outcome.msg);
    if (log) log->info("{}: {} {}", part.health_check, status_word(part.outcome.code), part.outcome.msg);
    send_telemetry(part.health_check, part.outcome, part.start_time);
  }
  CheckOutcome& o = v.overall;
  // Every verdict quotes the host somewhere (sysfs values, tool output): one place makes the stdout line, the log
  // and the record valid UTF-8, free of terminal controls and bounded.
  o.msg = bounded_message(o.msg);
  if (log) log->info("{}: {} {}", health_check, status_word(o.code), o.msg);
  print_output(health_check, o);
  if (v.overall_record) send_telemetry(health_check, o, start);
  return static_cast<int>(o.code);
}

}  // namespace gcm::health

#include "agent/check_runner.h"

#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/subprocess.h"
#include "health/check.h"
#include "health/health_record.h"
#include "slurm/derived_cluster.h"
#include "suite/prepared_check.h"
#include "suite/suite_file.h"

namespace gcm::agent {

namespace {

double unix_now() { return health::CheckRun::now(); }

}  // namespace

// One check and what is known of its current run; shared with the thread that runs it, which may outlive the
// runner when it is stuck.
struct CheckSlot {
  std::shared_ptr<suite::SuiteFile> suite;  // owns the entry the prepared check points into
  std::unique_ptr<suite::Prepared> prepared;
  double timeout_s = 10;
  std::mutex m;
  bool running = false;
  bool reported_timeout = false;
  double started = 0;
  std::vector<CheckResult> finished;
};

struct CheckRunner::Impl {
  std::shared_ptr<spdlog::logger> log;
  std::string cluster;
  std::vector<std::shared_ptr<CheckSlot>> slots;
};

CheckRunner::CheckRunner(const std::string& suite_path, std::string cluster, std::shared_ptr<spdlog::logger> log,
                         suite::Profile profile)
    : impl_(std::make_shared<Impl>()) {
  impl_->log = std::move(log);
  impl_->cluster = std::move(cluster);
  if (suite_path.empty() || !std::filesystem::exists(suite_path)) {
    impl_->log->info("agent: no suite file at '{}': no health checks in the agent", suite_path);
    return;
  }
  auto suite = std::make_shared<suite::SuiteFile>(suite::load_suite(suite_path));
  auto it = suite->profiles.find(profile);
  if (it == suite->profiles.end() || it->second.checks.empty()) {
    impl_->log->info("agent: {} has no [{}] checks", suite_path, suite::to_string(profile));
    return;
  }
  const suite::ProfileSpec& spec = it->second;
  auto prepared = suite::prepare(spec);
  for (auto& p : prepared) {
    auto slot = std::make_shared<CheckSlot>();
    slot->suite = suite;
    slot->timeout_s = p->entry->timeout_s > 0 ? p->entry->timeout_s : spec.default_timeout_s;
    slot->prepared = std::move(p);
    impl_->slots.push_back(std::move(slot));
  }
  if (!impl_->cluster.empty() || !suite->cluster) return;
  impl_->cluster = *suite->cluster;
}

CheckRunner::~CheckRunner() = default;

size_t CheckRunner::size() const { return impl_->slots.size(); }

namespace {

CheckResult run_builtin(CheckSlot& slot, const std::string& cluster, const std::shared_ptr<spdlog::logger>& log) {
  suite::Prepared& p = *slot.prepared;
  CheckResult res;
  res.name = p.entry->name;
  health::CheckRun run;
  run.cluster = cluster;
  run.type = health::CheckType::Nagios;
  run.verbose_out = true;
  run.timeout_s = p.timeout_opt;
  run.log = log;
  bool got = false;
  run.on_output = [&](const std::string&, const health::CheckOutcome& o) {
    res.code = static_cast<int>(o.code);
    res.message = o.msg;
    got = true;
  };
  try {
    int rc = p.check->run(run);
    if (!got) {
      res.code = rc >= 0 && rc <= 3 ? rc : 3;
      res.message = fmt::format("exit code {} and no message", rc);
    }
  } catch (const std::exception& e) {
    res.code = 3;
    res.message = fmt::format("UNKNOWN: the check failed: {}", e.what());
  }
  return res;
}

CheckResult run_external(CheckSlot& slot) {
  const suite::CheckEntry& e = *slot.prepared->entry;
  CheckResult res;
  res.name = e.name;
  CommandSpec spec;
  spec.argv = e.command;
  spec.timeout = std::chrono::milliseconds(static_cast<int64_t>(slot.timeout_s * 1000));
  spec.max_stdout = 64u << 10;
  try {
    CommandResult r = run_command(spec);
    std::string text = r.out.empty() ? r.err : r.out;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    if (auto nl = text.rfind('\n'); nl != std::string::npos) text = text.substr(nl + 1);
    if (r.timed_out) {
      res.code = 2;
      res.timed_out = true;
      res.message = fmt::format("CRITICAL: did not finish within {:g} s (killed)", slot.timeout_s);
    } else if (e.nagios_exit_codes && r.exit_code >= 0 && r.exit_code <= 3) {
      res.code = r.exit_code;
      res.message = text;
    } else {
      res.code = r.exit_code == 0 ? 0 : 2;
      res.message = text.empty() ? fmt::format("exit code {}", r.exit_code) : text;
    }
  } catch (const std::exception& ex) {
    res.code = 3;
    res.message = fmt::format("UNKNOWN: {}", ex.what());
  }
  return res;
}

}  // namespace

void CheckRunner::start_round() {
  for (const auto& slot : impl_->slots) {
    {
      std::lock_guard<std::mutex> g(slot->m);
      if (slot->running) continue;  // still in its earlier run (or stuck in it): not started twice
      slot->running = true;
      slot->reported_timeout = false;
      slot->started = unix_now();
    }
    std::string cluster = impl_->cluster;
    auto log = impl_->log;
    std::thread([slot, cluster, log] {
      double start = unix_now();
      CheckResult r = slot->prepared->spec ? run_builtin(*slot, cluster, log) : run_external(*slot);
      r.start = start;
      r.end = unix_now();
      std::lock_guard<std::mutex> g(slot->m);
      slot->running = false;
      // A result that comes after its timeout was reported is still the check's latest verdict.
      slot->finished.push_back(std::move(r));
    }).detach();
  }
}

std::vector<CheckResult> CheckRunner::take_results() {
  std::vector<CheckResult> out;
  double now = unix_now();
  for (const auto& slot : impl_->slots) {
    std::lock_guard<std::mutex> g(slot->m);
    for (auto& r : slot->finished) out.push_back(std::move(r));
    slot->finished.clear();
    if (slot->running && !slot->reported_timeout && now - slot->started > slot->timeout_s) {
      slot->reported_timeout = true;
      CheckResult r;
      r.name = slot->prepared->entry->name;
      r.code = 2;
      r.timed_out = true;
      r.start = slot->started;
      r.end = now;
      r.message = fmt::format(
          "CRITICAL: did not finish within {:g} s; abandoned (it is not started again until it "
          "returns)",
          slot->timeout_s);
      impl_->log->error("agent: check '{}' {}", r.name, r.message);
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::vector<Record> CheckRunner::records(const std::vector<CheckResult>& results) const {
  std::vector<Record> out;
  for (const auto& r : results) {
    health::HealthCheckResult h;
    h.node = health::node_hostname();
    h.cluster = impl_->cluster;
    h.derived_cluster = slurm::derived_cluster(
        [&](std::string_view key) -> std::optional<std::string_view> {
          if (key == "Node") return std::string_view(h.node);
          return std::nullopt;
        },
        false, impl_->cluster);
    h.health_check = r.name;
    h.type = "nagios";
    h.msg = r.message;
    h.result = r.code;
    h.start_time = r.start;
    h.end_time = r.end;
    h.gpu_node_id = health::read_gpu_node_id();
    out.push_back(health::health_check_record(h));
  }
  return out;
}

}  // namespace gcm::agent

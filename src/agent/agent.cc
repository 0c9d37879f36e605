#include "agent/agent.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/agent_checks.h"
#include "agent/agent_counters.h"
#include "agent/agent_drain.h"
#include "agent/agent_job_signals.h"
#include "agent/agent_schemas.h"
#include "agent/agent_state.h"
#include "agent/fabric_manager.h"
#include "agent/hardware_events.h"
#include "agent/job_attribution.h"
#include "agent/metrics_endpoint.h"
#include "agent/gpu_session.h"
#include "agent/window_export.h"
#include "agent/window_state.h"
#include "core/clock.h"
#include "core/host_roots.h"
#include "core/http_listener.h"
#include "core/logging.h"
#include "core/shutdown.h"
#include "core/thread_annotations.h"
#include "detector/detector.h"
#include "detector/health_records.h"
#include "gpu/gpu_records.h"
#include "health/check.h"

namespace gcm::agent {

namespace {

std::atomic<bool> g_reload{false};
std::atomic<bool> g_run_checks{false};
void on_sighup(int) { g_reload = true; }
void on_sigusr1(int) { g_run_checks = true; }

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

void install_reload_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_sighup;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGHUP, &sa, nullptr);
  sa.sa_handler = on_sigusr1;
  ::sigaction(SIGUSR1, &sa, nullptr);
}

bool take_reload_request() { return g_reload.exchange(false); }

// The sampling loop and what one window does with its parts. Everything here is the sampling thread's (run()),
// except `pending`, which reload() sets from any thread; each part says which of its own members another thread
// reaches (the page, the hardware-event trackers).
struct Agent::Impl {
  AgentOptions opts;
  std::shared_ptr<spdlog::logger> log;
  std::string hostname = health::node_hostname();

  std::mutex pending_mu;
  std::optional<AgentOptions> pending GCM_GUARDED_BY(pending_mu);
  std::function<std::optional<AgentOptions>()> reload_source;

  AgentCounters counters;
  WindowExport out{counters, log};
  std::unique_ptr<HttpListener> listener;
  HardwareEvents hardware{opts.xid_clear_after_s, log};
  GpuSession gpus{hardware.xids(), counters, log, [this] { hardware.stop_gpu_events(); }};
  JobAttribution attribution{log};
  FabricManagerWatch fabric_manager;
  // The zombie-GPU detector: judges each window's summaries against the GPU's own job peers.
  detector::Detector detector;
  AgentJobSignals job_signals{log};
  AgentDrain drain{log};
  AgentChecks checks{log};
  Clock::time_point window_started = Clock::now();

  Impl(AgentOptions o, std::shared_ptr<spdlog::logger> l) : opts(std::move(o)), log(std::move(l)) {}
  // The NVML event watcher reads the library's table: it stops before `gpus` lets the library go.
  ~Impl() { hardware.stop(); }

  std::chrono::milliseconds nvml_timeout() const {
    return std::chrono::milliseconds(static_cast<int64_t>(opts.nvml_timeout_s * 1000));
  }

  void start_listener() { listener = start_metrics_endpoint(opts, out, *log); }

  void sample_once() {
    std::vector<DeviceResult> results = gpus.sample(hostname);
    attribution.maybe_attribute(results, opts, counters.source("attribution"));
  }

  void close_window() {
    int64_t end_ms = unix_ms_now();
    double seconds = seconds_since(window_started);
    window_started = Clock::now();
    counters.window_closed();

    std::vector<Record> device_records, job_records, idle_records;
    std::vector<detector::GpuWindow> summaries;
    const GpuAddressMap& addresses = gpus.addresses();
    auto& acc = gpus.accumulators();
    for (auto& a : acc) {
      unsigned gpu = static_cast<unsigned>(&a - acc.data());
      std::string uuid = addresses.uuid_of(gpu);
      std::string job = attribution.job_of(gpu);
      auto closed = a.close(end_ms, seconds, job, uuid);
      device_records.push_back(closed.metrics);
      summaries.push_back(closed.summary);
      if (auto it = attribution.jobs().find(gpu); it != attribution.jobs().end())
        for (const auto& j : it->second)
          if (j.has_job() || j.pod)
            job_records.push_back(job_info_record(gpu, uuid.empty() ? std::nullopt : std::optional(uuid), j));
      if (!job.empty() && closed.summary.gpu_util_percent && closed.summary.gpu_util_percent->max == 0) {
        Record r(kGpuAllocatedIdle);
        r.at("gpu") = static_cast<int64_t>(gpu);
        r.at("uuid") = uuid;
        r.at("job_id") = job;
        r.at("allocated_idle") = int64_t{1};
        idle_records.push_back(std::move(r));
      }
    }
    checks.collect(out, counters);
    double now_s = static_cast<double>(end_ms) / 1000.0;
    hardware.add_window_xids(summaries);
    for (const auto& line : route_aer(hardware.node(), addresses, summaries)) log->warn("agent: {}", line);
    job_signals.close_window(summaries, seconds, addresses, attribution, out);
    hardware.publish(now_s, out, counters);
    std::vector<detector::GpuVerdict> verdicts = detector.observe(summaries);
    publish_verdicts(verdicts);
    // A pod holding a GPU counts as a job: no confirmation runs under it.
    bool has_job = std::any_of(summaries.begin(), summaries.end(), [](const auto& w) { return !w.job_id.empty(); }) ||
                   attribution.any_pod();
    drain.on_window(verdicts, has_job, detector, out);
    if (auto said =
            fabric_manager.check(HostRoots{opts.path_procfs, opts.path_sysfs}, nvml_timeout(), hardware.node(), now_s))
      log->warn("agent: Fabric Manager: {}", *said);
    std::vector<NodeStateEntry> node = hardware.node().active(now_s);
    hardware.publish_node_health(node, hostname, now_s, out);
    WindowFacts facts{end_ms, opts.window_s, hostname, gpus.driver_version(), gpus.error(), gpus.library_name()};
    AgentState state = window_state(facts, checks.last(), summaries, verdicts, hardware.xids(), node);
    state.ranks = job_signals.ranks();
    out.publish(kIndexedDeviceMetrics, device_records);
    out.publish(kGpuJobInfo, job_records);
    out.publish(kGpuAllocatedIdle, idle_records);
    out.publish_export_stats();
    publish_self();
    out.render_page();
    write_state(state);
    out.write_textfile(opts.textfile);
    out.push_otlp(end_ms);
  }

  void publish_verdicts(const std::vector<detector::GpuVerdict>& verdicts) {
    std::vector<Record> metrics;
    detector::append_health_metrics(verdicts, metrics);
    std::map<const Schema*, std::vector<Record>> by_schema = {{&detector::kGpuHealthState.get(), {}},
                                                              {&detector::kGpuHealthReason.get(), {}},
                                                              {&detector::kGpuPeerDeviation.get(), {}}};
    for (auto& r : metrics) by_schema[r.schema].push_back(std::move(r));
    for (const auto& [schema, records] : by_schema) out.publish(*schema, records);
    std::vector<Record> events;
    detector::append_health_events(verdicts, hostname, events);
    for (const auto& v : verdicts)
      if (v.event)
        log->warn("agent: [GPU {}] {} -> {}: {}", v.gpu, detector::to_string(v.event->from),
                  detector::to_string(v.event->to), v.event->evidence);
    for (auto& e : events) out.add_log(std::move(e));
  }

  void publish_self() {
    SelfFacts facts{hostname, gpus.loaded(), gpus.gpu_count(), out.page_size()};
    out.publish(kAgentSelf, {counters.self_record(facts)});
    out.publish(kAgentSource, counters.source_records());
  }

  void write_state(const AgentState& st) {
    auto t0 = Clock::now();
    auto& s = counters.source("state_file");
    try {
      write_agent_state(opts.path_run + "/agent-state.json", st);
      s.up = true;
    } catch (const std::exception& e) {
      if (s.failed(e.what())) log->error("agent: {}", e.what());
      s.up = false;
    }
    s.last_duration_s = seconds_since(t0);
  }

  void apply_pending() {
    std::optional<AgentOptions> next;
    {
      std::lock_guard<std::mutex> g(pending_mu);
      next.swap(pending);
    }
    if (!next) return;
    bool listener_changed = next->listen != opts.listen || next->web_config_file != opts.web_config_file;
    bool library_changed = next->backend != opts.backend || next->nvml_library != opts.nvml_library ||
                           next->amdsmi_library != opts.amdsmi_library || next->nvml_timeout_s != opts.nvml_timeout_s ||
                           next->no_extended != opts.no_extended;
    opts = std::move(*next);
    log->set_level(parse_log_level(opts.log_level));
    attribution.reset(opts.gpu_job_mapping_dir);
    if (listener_changed) {
      if (listener) listener->stop();
      listener.reset();
      try {
        start_listener();
      } catch (const std::exception& e) {
        log->error("agent: reload: {}; /metrics is not served until the next reload", e.what());
      }
    }
    if (library_changed && gpus.loaded()) gpus.unload("the GPU library options changed");
    drain.load(opts);
    log->info("agent: configuration reloaded (collect-interval {} s, window {} s)", opts.collect_interval_s,
              opts.window_s);
  }
};

Agent::Agent(AgentOptions opts, std::shared_ptr<spdlog::logger> log)
    : impl_(std::make_unique<Impl>(std::move(opts), std::move(log))) {}

Agent::~Agent() {
  if (impl_->listener) impl_->listener->stop();
}

void Agent::reload(AgentOptions opts) {
  std::lock_guard<std::mutex> g(impl_->pending_mu);
  impl_->pending = std::move(opts);
}

void Agent::set_reload_source(std::function<std::optional<AgentOptions>()> source) {
  impl_->reload_source = std::move(source);
}

int Agent::run() {
  Impl& m = *impl_;
  m.attribution.reset(m.opts.gpu_job_mapping_dir);
  m.gpus.load_host_gpus(m.opts);
  m.checks.load(m.opts.suite, m.opts.check_interval_s);
  m.drain.load(m.opts);
  m.out.start_otlp(m.opts);
  m.start_listener();
  m.job_signals.start(m.opts, m.counters);
  m.out.render_page();
  auto next_sample = Clock::now();
  while (!shutdown_requested()) {
    if (take_reload_request() && m.reload_source) {
      m.log->info("agent: SIGHUP: reading the configuration again");
      if (auto next = m.reload_source()) reload(std::move(*next));
    }
    m.apply_pending();
    m.checks.maybe_start(g_run_checks.exchange(false), m.opts.check_interval_s);
    if (m.gpus.ensure_loaded(m.opts)) {
      if (const NvmlLibrary* nvml = m.gpus.nvml_library()) m.hardware.start_nvml_events(nvml->api(), m.nvml_timeout());
      if (auto amd = m.gpus.amdsmi_library()) m.hardware.start_amdsmi_events(std::move(amd), m.nvml_timeout());
      m.sample_once();
      // The first window is --window away: until then /metrics says at least that the agent runs and sees GPUs.
      if (m.counters.samples() == 1) {
        m.publish_self();
        m.out.render_page();
        m.out.forget_window_records();  // not part of the first window's OTLP request: that one has its own
      }
    }
    // The kernel log is followed once the GPUs' PCI addresses are known (or NVML failed), so its XIDs since boot
    // are counted under their GPU.
    m.hardware.start_kmsg(m.opts.path_kmsg);
    if (seconds_since(m.window_started) >= m.opts.window_s) m.close_window();
    auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(m.opts.collect_interval_s));
    next_sample += period;
    auto now = Clock::now();
    if (next_sample < now) next_sample = now;  // a slow sample (a hung GPU) does not make the next ones burst
    if (!sleep_unless_shutdown(next_sample - now)) break;
  }
  m.log->info("agent: stopping");
  // The window in progress is closed and sent too, so a restart (a package upgrade) loses no samples.
  if (m.gpus.window_has_samples()) m.close_window();
  if (m.listener) m.listener->stop();
  m.job_signals.stop();
  m.hardware.stop();
  m.out.stop_otlp();  // what the receiver does not take within the flush stays in the spool for the next start
  return 0;
}

}  // namespace gcm::agent

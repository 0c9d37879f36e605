#include "agent/agent.h"
#include "core/clock.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/agent_schemas.h"
#include "agent/agent_state.h"
#include "agent/check_runner.h"
#include "agent/dir_watch.h"
#include "agent/drain_control.h"
#include "agent/fabric_manager.h"
#include "agent/gpu_address_map.h"
#include "agent/kernel_event_records.h"
#include "agent/kernel_events.h"
#include "agent/kmsg_follower.h"
#include "agent/node_health.h"
#include "agent/nvml_events.h"
#include "agent/xid_records.h"
#include "agent/xid_tracker.h"
#include "agent/window.h"
#include "attribution/gpu_jobs.h"
#include "detector/detector.h"
#include "detector/health_records.h"
#include "core/http_listener.h"
#include "core/logging.h"
#include "core/retry.h"
#include "core/shutdown.h"
#include "core/web_config.h"
#include "gpu/gpu_records.h"
#include "gpu/gpu_sampler.h"
#include "health/check.h"
#include "health/kernel_event.h"
#include "jobsignal/job_signals.h"
#include "otlp/delivery.h"
#include "otlp/encode.h"
#include "sinks/otel_config.h"
#include "sinks/prometheus_store.h"
#include "suite/slurm_node.h"
#include "suite/suite_file.h"

namespace gcm::agent {

namespace {

std::atomic<bool> g_reload{false};
std::atomic<bool> g_run_checks{false};
void on_sighup(int) { g_reload = true; }
void on_sigusr1(int) { g_run_checks = true; }

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The agent's own CPU time (user + system) and resident set. /proc/self is this process, not the host, so it is
// read directly rather than under --path.procfs (which may be a fixture tree).
double own_cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}
int64_t own_rss_bytes() {
  std::ifstream in("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  if (!(in >> pages_total >> pages_resident)) return 0;
  return static_cast<int64_t>(pages_resident) * ::sysconf(_SC_PAGESIZE);
}

// Per source: whether it works, what its last run cost, its errors and timeouts (kAgentSource).
struct SourceStats {
  bool up = false;
  double last_duration_s = 0;
  uint64_t errors = 0, timeouts = 0;
  std::string last_error;
};

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

struct Agent::Impl {
  AgentOptions opts;
  std::shared_ptr<spdlog::logger> log;
  std::string hostname = health::node_hostname();

  std::mutex pending_mu;
  std::optional<AgentOptions> pending;
  std::function<std::optional<AgentOptions>()> reload_source;

  // NVML.
  std::shared_ptr<NvmlLibrary> lib;
  std::unique_ptr<GpuSampler> sampler;
  std::string nvml_error;
  // NVML missing at start or gone after a driver reload is asked again, 1 s doubling to 5 min: without a crash loop
  // and without a log line per second.
  Backoff nvml_backoff{1, 300};
  Clock::time_point nvml_next_try = Clock::now();
  int all_gone_samples = 0;  // samples in a row in which no GPU answered: the driver may have been reloaded
  std::vector<GpuWindowAccumulator> acc;
  GpuAddressMap addresses;  // PCI address <-> index and UUID, whatever the GPUs answer
  std::map<unsigned, GpuState> last_state;
  std::map<std::string, Health> last_node_health;  // node reason -> its state in the last window
  FabricManagerWatch fabric_manager;

  // Attribution.
  std::map<unsigned, std::vector<JobInfo>> jobs;
  std::optional<Clock::time_point> attributed_at;
  std::string process_signature;  // the GPUs' pids at the last attribution
  std::unique_ptr<DirWatch> mapping_watch;
  std::set<std::string> reported_attribution_errors;

  // Export.
  PrometheusStore store;
  mutable std::mutex page_mu;
  std::string page;
  std::unique_ptr<HttpListener> listener;
  std::unique_ptr<otlp::Delivery> otlp;  // null: no OTLP push
  uint64_t spool_limit_bytes = 0;     // --spool-max-bytes, exported beside the spool's size
  Object otlp_resource;
  std::vector<Record> window_metrics, window_logs;  // what this window pushes over OTLP

  // XIDs: the kernel log and NVML events feed one tracker (thread-safe), which de-duplicates and counts them.
  std::unique_ptr<XidTracker> xids;
  // The kernel log's other hardware events (SXids, link flaps, machine checks, PCIe AER), from the same follower.
  KernelEventTracker kernel_events;
  std::unique_ptr<NodeHealth> node_health;  // the node's own reasons (not one GPU's)
  std::unique_ptr<KmsgFollower> kmsg;
  std::unique_ptr<NvmlEventWatcher> events;
  uint64_t xid_seq = 0;                  // the last tracker event put into a window
  std::map<unsigned, int64_t> recovery;  // each GPU's last recovery action (0: none)

  // The zombie-GPU detector: judges each window's summaries against the GPU's own job peers.
  detector::Detector detector;

  // The jobs' own step times (jobsignal/job_signals.h): rank_slow for the detector, per-job summaries.
  std::unique_ptr<jobsignal::JobSignals> job_signals;

  // Drain and resume (report only without --drain).
  std::unique_ptr<DrainControl> drain;

  // Health checks.
  std::unique_ptr<CheckRunner> checks;
  std::optional<Clock::time_point> checks_started_at;
  std::map<std::string, CheckResult> last_checks;  // by name, in the suite file's order of first result

  // Counters.
  uint64_t samples = 0, windows = 0;
  double last_sample_s = 0;
  std::map<std::string, SourceStats> sources;
  Clock::time_point window_started = Clock::now();
  int64_t window_started_unix_ms = unix_ms_now();

  Impl(AgentOptions o, std::shared_ptr<spdlog::logger> l) : opts(std::move(o)), log(std::move(l)) {
    XidTrackerOptions xo;
    xo.active_window_s = opts.xid_clear_after_s;
    xids = std::make_unique<XidTracker>(xo);
    node_health = std::make_unique<NodeHealth>(opts.xid_clear_after_s);
  }

  // The kernel log is followed once the GPUs' PCI addresses are known (or NVML failed), so its XIDs since boot are
  // counted under their GPU.
  void start_kmsg() {
    if (kmsg) return;
    KmsgFollowerOptions ko;
    ko.path = opts.path_kmsg;
    ko.log = log;
    kmsg = std::make_unique<KmsgFollower>(ko, [this](const KmsgRecord& rec, const std::optional<health::XidLine>& x) {
      double t = kmsg_unix_time(rec.ts_usec);
      if (x && x->kind == health::XidKind::Xid) {
        xids->add_kmsg(*x, t);
        return;
      }
      // The follower read the line's SXid already; any other line may be a link, machine-check or AER event.
      auto e = x ? health::sxid_event(*x, rec.message) : health::classify_host_event(rec.message);
      if (!e) return;
      kernel_events.add(*e, t);
      node_health->add_kernel_event(*e, t);
    });
    kmsg->start();
  }

  void start_events() {
    if (events || !lib) return;
    NvmlEventWatcherOptions eo;
    eo.log = log;
    eo.call_timeout = std::chrono::milliseconds(static_cast<int64_t>(opts.nvml_timeout_s * 1000));
    events = std::make_unique<NvmlEventWatcher>(
        lib->api(),
        [this](const NvmlXid& e) { xids->add_nvml(static_cast<int>(e.gpu), static_cast<int>(e.xid), e.unix_s); }, eo);
    events->start();
  }

  // The driver's own list of the GPUs (under --path.procfs and --path.sysfs), for the GPUs NVML never identified:
  // read at start, before any sample, and again whenever NVML is loaded.
  void load_host_gpus() {
    HostRoots roots;
    roots.procfs = opts.path_procfs;
    roots.sysfs = opts.path_sysfs;
    std::vector<std::string> problems;
    addresses.set_host_gpus(read_host_gpus(roots, &problems));
    for (const auto& p : problems) log->warn("agent: GPU addresses: {}", p);
    xids->set_gpus(addresses.identities());
  }

  // A GPU that was reset (it answers again after being lost, or the driver's recovery action went back to none)
  // clears the XIDs whose catalogue action a reset resolves.
  void note_resets(const DeviceResult& r, GpuState before, bool first) {
    double now = health::CheckRun::now();
    if (r.state != GpuState::Ok) return;
    if (!first && (before == GpuState::Lost || before == GpuState::Error))
      xids->gpu_reset(static_cast<int>(r.index), now);
    if (!r.sample.recovery_action) return;
    int64_t action = *r.sample.recovery_action;
    auto it = recovery.find(r.index);
    // At start, a GPU that needs no recovery has had whatever reset its old XIDs called for.
    if ((it == recovery.end() || it->second != 0) && action == 0) xids->gpu_reset(static_cast<int>(r.index), now);
    recovery[r.index] = action;
  }

  void start_listener() {
    if (opts.listen.empty()) return;
    HttpListenerOptions lo;
    try {
      std::tie(lo.host, lo.port) = parse_listen_address(opts.listen, "--listen");
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(e.what());
    }
    lo.workers = 0;  // every answer is a copy of the cached page: nothing to hand to a worker
    if (!opts.web_config_file.empty()) apply_web_config(lo, load_web_config(opts.web_config_file));
    listener = std::make_unique<HttpListener>(lo, [this](const HttpRequest& req) {
      HttpReply rep;
      if (req.path == "/metrics") {
        rep.content_type = "text/plain; version=0.0.4; charset=utf-8";
        std::lock_guard<std::mutex> g(page_mu);
        rep.body = page;
      } else if (req.path == "/health" || req.path == "/-/healthy") {
        rep.body = "OK\n";
      } else {
        rep.status = 404;
        rep.body = "not found: try /metrics\n";
      }
      return rep;
    });
    listener->start();
    log->info("agent: serving /metrics on {}:{}", lo.host.empty() ? "0.0.0.0" : lo.host, listener->port());
  }

  void start_job_signals() {
    if (opts.no_job_signals) return;
    jobsignal::JobSignalOptions jo;
    jo.socket_path = opts.job_signal_socket.empty() ? opts.path_run + "/job-signals.sock" : opts.job_signal_socket;
    jo.listen = opts.job_signal_listen;
    jo.procfs = opts.path_procfs;
    job_signals = std::make_unique<jobsignal::JobSignals>(jo, log);
    try {
      job_signals->start();
      sources["job_signals"].up = true;
    } catch (const std::invalid_argument& e) {
      throw AgentUsageError(e.what());  // --job-signal-listen is not a loopback HOST:PORT
    } catch (const std::exception& e) {
      // The GPUs are watched without it: the agent goes on, and says so.
      log->error("agent: job signals off: {}", e.what());
      auto& s = sources["job_signals"];
      ++s.errors;
      s.last_error = e.what();
      job_signals.reset();
    }
  }

  // The window's job signals: rank_slow into the detector's input, the per-job summaries onto /metrics and OTLP.
  void take_job_signals(std::vector<detector::GpuWindow>& summaries, double seconds) {
    if (!job_signals) return;
    std::map<std::string, std::string> users;
    for (const auto& [gpu, list] : jobs)
      for (const auto& j : list)
        if (j.has_job() && j.job_user) users[std::to_string(j.job_id)] = *j.job_user;
    std::map<unsigned, std::string> uuids;
    for (const auto& g : addresses.identities())
      if (g.index >= 0 && !g.uuid.empty()) uuids[static_cast<unsigned>(g.index)] = g.uuid;
    job_signals->set_node(uuids, users);
    jobsignal::WindowOutput w = job_signals->close_window(summaries, seconds);
    publish(jobsignal::kJobStepSummary, w.summaries);
    publish(jobsignal::kJobSignalReceiver, w.receiver);
    publish(jobsignal::kJobSignalRefused, w.refused);
    publish(jobsignal::kJobSignalDropped, w.dropped);
  }

  void start_otlp() {
    if (opts.otlp_endpoint.empty()) return;
    Object o{{"otel_endpoint", opts.otlp_endpoint},
             {"protocol", opts.otlp_protocol},
             {"otel_timeout", opts.otlp_timeout_s},
             {"compression", opts.otlp_gzip ? "gzip" : "none"}};
    Object headers;
    for (const auto& h : opts.otlp_headers) {
      auto colon = h.find(':');
      if (colon == std::string::npos)
        throw AgentUsageError(fmt::format("--otlp-header '{}': expected 'Name: value'", h));
      std::string value = h.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      headers.push_back({h.substr(0, colon), value});
    }
    if (!headers.empty()) o.push_back({"headers", Value(std::move(headers))});
    otlp::DeliveryOptions d;
    try {
      d.transport = std::make_shared<otlp::TransportConfig>(otel_transport_config(SinkOptions("otel", Value(std::move(o)))));
    } catch (const SinkUsageError& e) {
      throw AgentUsageError(fmt::format("--otlp-*: {}", e.what()));
    }
    d.name = "agent";
    // Every window is on disk before it is sent, and the windows a receiver refuses for its own reasons (a wrong
    // token, a receiver in trouble) wait there too: an outage of the collector costs no window while the spool lasts.
    d.spool_policy = otlp::SpoolPolicy::Always;
    d.spool_dir = opts.spool_dir;
    d.keep_refused = true;
    d.backoff = RetryPolicy{0, 1, 2, 30};
    try {
      spool_limit_bytes = parse_byte_size(opts.spool_max_bytes);
      d.spool_bytes = spool_limit_bytes;
      otlp = std::make_unique<otlp::Delivery>(std::move(d), log);
    } catch (const otlp::TransportError& e) {
      throw AgentUsageError(fmt::format("--otlp-*: {}", e.what()));
    } catch (const std::exception& e) {
      throw AgentUsageError(fmt::format("--spool-dir: {}", e.what()));
    }
    otlp->start();
    otlp_resource = otel_resource(Object{});
    log->info("agent: pushing OTLP ({}) to {} through the spool in {}", opts.otlp_protocol, opts.otlp_endpoint,
              opts.spool_dir);
  }

  // One window's metrics and logs as one request each, appended to the spool (durably) before the sender takes
  // them: a kill -9 after this point loses nothing of this window.
  void push_otlp(int64_t end_ms) {
    if (!otlp) {
      window_metrics.clear();
      window_logs.clear();
      return;
    }
    int64_t ts = end_ms / 1000;
    otlp::MetricsBuilder mb(otlp_resource);
    for (const auto& r : window_metrics) mb.add(r, ts);
    otlp::LogsBuilder lb(otlp_resource);
    uint64_t observed = static_cast<uint64_t>(end_ms) * 1000000ULL;
    for (const auto& r : window_logs) lb.add(r, ts, observed);
    if (mb.points() > 0) {
      std::string request = mb.request().SerializeAsString();
      otlp->take(otlp::Signal::Metrics, request, mb.points());
    }
    if (lb.records() > 0) {
      std::string request = lb.request().SerializeAsString();
      otlp->take(otlp::Signal::Logs, request, lb.records());
    }
    window_metrics.clear();
    window_logs.clear();
  }

  void publish_export() {
    if (!otlp) return;
    otlp::DeliveryStats st = otlp->stats();
    Record r(kAgentExport);
    r.at("sent_points") = static_cast<int64_t>(st.delivered);
    r.at("dropped_points") = static_cast<int64_t>(st.lost());
    r.at("export_failures") = static_cast<int64_t>(st.retried);
    r.at("spool_entries") = static_cast<int64_t>(st.spool.entries);
    r.at("spool") = static_cast<int64_t>(st.spool.bytes);
    r.at("spool_limit") = static_cast<int64_t>(spool_limit_bytes);
    r.at("spool_oldest_age") = st.oldest_age_seconds;
    publish(kAgentExport, {r});
    auto& s = sources["otlp"];
    s.up = st.spool.entries == 0 || st.last_error.empty();
    s.errors = st.retried;
    s.last_error = st.last_error;
  }

  // Loads NVML when it is not loaded and the backoff allows; true when a sampler is ready.
  bool ensure_nvml() {
    if (sampler) return true;
    if (Clock::now() < nvml_next_try) return false;
    auto timeout = std::chrono::milliseconds(static_cast<int64_t>(opts.nvml_timeout_s * 1000));
    auto t0 = Clock::now();
    try {
      lib = NvmlLibrary::open(nvml_library_path(opts.nvml_library), timeout);
      GpuSamplerOptions so;
      so.call_timeout = timeout;
      so.extended = !opts.no_extended;
      sampler = std::make_unique<GpuSampler>(lib, so);
    } catch (const NvmlUnavailable& e) {
      sampler.reset();
      lib.reset();
      bool new_error = nvml_error != e.what();
      nvml_error = e.what();
      double wait_s = retry_nvml_later();
      auto& s = sources["nvml"];
      s.up = false;
      ++s.errors;
      s.last_error = nvml_error;
      s.last_duration_s = seconds_since(t0);
      if (new_error)
        log->warn("agent: NVML unavailable ({}); retrying with backoff, next in {:.0f} s", nvml_error, wait_s);
      return false;
    }
    nvml_backoff.succeeded();
    if (!nvml_error.empty()) log->info("agent: NVML is back");
    nvml_error.clear();
    addresses.set_gpu_count(sampler->device_count());
    load_host_gpus();
    acc.clear();
    for (unsigned i = 0; i < sampler->device_count(); ++i) acc.emplace_back(i);
    log->info("agent: {} GPU(s), driver {}, library {}", sampler->device_count(),
              sampler->driver_version().empty() ? "unknown" : sampler->driver_version(), lib->path());
    return true;
  }

  void drop_nvml(const std::string& why) {
    log->warn("agent: {}; loading NVML again", why);
    events.reset();  // it uses the library's table
    nvml_error = why;
    sampler.reset();
    lib.reset();
    retry_nvml_later();
  }

  // The seconds until NVML is asked again.
  double retry_nvml_later() {
    double wait_s = nvml_backoff.failed();
    nvml_next_try = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait_s));
    return wait_s;
  }

  // Re-resolves the GPU -> job attribution when something says a job changed: a GPU's processes, a mapping file,
  // or the refresh period. Re-reading cgroups and spawning scontrol every second would cost more than sampling.
  void maybe_attribute(const std::vector<DeviceResult>& results) {
    std::string sig;
    for (const auto& r : results) {
      sig += std::to_string(r.index) + ":";
      if (r.sample.processes)
        for (const auto& p : *r.sample.processes) sig += std::to_string(p.pid) + ",";
      sig += ";";
    }
    bool mapping_changed = mapping_watch && mapping_watch->changed();
    bool due = !attributed_at || seconds_since(*attributed_at) >= opts.attribution_refresh_s ||
               sig != process_signature || mapping_changed;
    if (!due) return;
    AttributionOptions ao;
    ao.sources = opts.attribution;
    ao.procfs = opts.path_procfs;
    ao.cgroupfs = opts.path_sysfs + "/fs/cgroup";
    ao.mapping_dir = opts.gpu_job_mapping_dir;
    ao.slurm_node = opts.slurm_node;
    ao.kubelet = opts.kubelet;
    ao.kubelet.api = opts.kubernetes_api;
    if (ao.slurm_node.empty())
      if (const char* n = std::getenv("SLURMD_NODENAME")) ao.slurm_node = n;
    auto t0 = Clock::now();
    std::vector<std::string> errors;
    jobs = attribute_gpus(results, ao, &errors);
    auto& s = sources["attribution"];
    s.last_duration_s = seconds_since(t0);
    s.up = errors.empty();
    for (const auto& e : errors) {
      ++s.errors;
      s.last_error = e;
      if (reported_attribution_errors.insert(e).second) log->warn("agent: attribution source {}", e);
    }
    attributed_at = Clock::now();
    process_signature = sig;
  }

  std::string job_of(unsigned gpu) const {
    auto it = jobs.find(gpu);
    if (it == jobs.end() || it->second.empty() || !it->second.front().has_job()) return "";
    return std::to_string(it->second.front().job_id);
  }

  void sample_once() {
    auto t0 = Clock::now();
    std::vector<DeviceResult> results = sampler->sample();
    last_sample_s = seconds_since(t0);
    ++samples;
    auto& s = sources["nvml"];
    s.up = true;
    s.last_duration_s = last_sample_s;
    bool any_answer = results.empty();
    bool identities_changed = false;
    for (auto& r : results) {
      identities_changed |= addresses.learn(r.index, r.sample.uuid.value_or(""), r.sample.pci_bus_id.value_or(""));
      if (r.state == GpuState::Ok) any_answer = true;
      if (r.state == GpuState::NotResponding) ++s.timeouts;
      if (r.state == GpuState::Error) ++s.errors;
      bool first = !last_state.count(r.index);
      GpuState before = first ? GpuState::Ok : last_state[r.index];
      note_resets(r, before, first);
      if (r.state != before) {
        if (r.state == GpuState::Ok)
          log->info("agent: [GPU {}] answers again", r.index);
        else
          log->warn("agent: [GPU {}] {}: {}", r.index, to_string(r.state), r.detail);
      }
      last_state[r.index] = r.state;
      std::string uuid = addresses.uuid_of(r.index);
      auto known = uuid.empty() ? std::nullopt : std::optional(uuid);
      Record rec = device_metrics_record(r, hostname, sampler->driver_version(), known);
      if (r.index < acc.size()) acc[r.index].add(r, rec);
    }
    maybe_attribute(results);
    if (identities_changed) xids->set_gpus(addresses.identities());
    // Every GPU erroring (UNINITIALIZED, DRIVER_NOT_LOADED after an unload) for several samples: the library's
    // state is gone, so it is loaded and initialised again rather than asked forever.
    all_gone_samples = any_answer ? 0 : all_gone_samples + 1;
    if (all_gone_samples >= 5) {
      all_gone_samples = 0;
      drop_nvml("no GPU answered in 5 samples in a row");
    }
  }

  void load_checks() {
    checks = std::make_unique<CheckRunner>(opts.suite, "", log);
    if (checks->size() > 0)
      log->info("agent: {} health check(s) from {} every {} s", checks->size(), opts.suite, opts.check_interval_s);
  }

  void load_drain() {
    drain.reset();  // waits for a task in flight
    DrainControlOptions d;
    d.drain = opts.drain;
    d.node = opts.slurm_node.empty() ? suite::slurm_node_name() : opts.slurm_node;
    d.limits = opts.drain_limits;
    d.poll_interval_s = opts.drain_poll_interval_s;
    d.suite_path = opts.suite;
    try {
      suite::SuiteFile s = suite::load_suite(opts.suite);
      d.scontrol = s.scontrol;
      d.slurm_conf = s.slurm_conf;
      d.slurm_timeout_s = s.slurm_timeout_s;
      d.limits.reason_max_length = s.reason_max_length;
    } catch (const std::exception&) {
      // No suite file: scontrol from PATH and the usual places; load_checks() has said what is wrong with it.
    }
    d.kubernetes = opts.kubernetes_condition;
    d.kubernetes_node.node = opts.kubelet.node_name;
    if (d.kubernetes_node.node.empty())
      if (const char* n = std::getenv("NODE_NAME")) d.kubernetes_node.node = n;
    d.kubernetes_node.cordon = opts.kubernetes_cordon;
    d.kubernetes_node.taint = opts.kubernetes_taint;
    d.kubernetes_api = opts.kubernetes_api;
    if (d.kubernetes)
      log->info("agent: Kubernetes node {} is marked {}=False on a bad verdict{}{}", d.kubernetes_node.node,
                kube::kGpuHealthyCondition, d.kubernetes_node.cordon ? ", cordoned" : "",
                d.kubernetes_node.taint ? ", tainted" : "");
    if (opts.drain)
      log->info("agent: drain on for node {} (at most {} detector drains an hour, {:g} % of a partition)", d.node,
                d.limits.max_per_hour, d.limits.max_partition_fraction * 100);
    drain = std::make_unique<DrainControl>(std::move(d), log);
  }

  void act_on_verdicts(const std::vector<detector::GpuVerdict>& verdicts,
                       const std::vector<detector::GpuWindow>& summaries) {
    if (!drain) return;
    // A pod holding a GPU counts as a job: no confirmation runs under it.
    bool has_job =
        std::any_of(summaries.begin(), summaries.end(), [](const auto& w) { return !w.job_id.empty(); }) ||
        std::any_of(jobs.begin(), jobs.end(), [](const auto& g) {
          return std::any_of(g.second.begin(), g.second.end(), [](const JobInfo& j) { return j.pod.has_value(); });
        });
    if (drain->on_window(verdicts, has_job)) detector.forgive_load_only_reasons();
    std::vector<Record> counts;
    for (const auto& [action, n] : drain->counts()) {
      Record r(kAgentDrain);
      r.at("action") = action;
      r.at("actions") = static_cast<int64_t>(n);
      counts.push_back(std::move(r));
    }
    publish(kAgentDrain, counts);
  }

  void maybe_start_checks() {
    if (!checks || checks->size() == 0) return;
    bool now = g_run_checks.exchange(false);
    if (!now && checks_started_at && seconds_since(*checks_started_at) < opts.check_interval_s) return;
    checks_started_at = Clock::now();
    checks->start_round();
  }

  void collect_checks() {
    if (!checks || checks->size() == 0) return;
    auto results = checks->take_results();
    if (results.empty()) return;
    auto& s = sources["checks"];
    s.up = true;
    for (const auto& r : results) {
      s.last_duration_s = r.end - r.start;
      if (r.timed_out) ++s.timeouts;
      if (r.code != 0) log->warn("agent: check '{}': {}", r.name, r.message);
      last_checks[r.name] = r;
    }
    if (otlp)
      for (auto& rec : checks->records(results)) window_logs.push_back(std::move(rec));
    std::vector<Record> status;
    for (const auto& [name, r] : last_checks) {
      Record rec(kHealthCheckStatus);
      rec.at("check") = name;
      rec.at("status") = static_cast<int64_t>(r.code);
      rec.at("message") = r.message;
      status.push_back(std::move(rec));
    }
    publish(kHealthCheckStatus, status);
  }

  void close_window() {
    int64_t end_ms = unix_ms_now();
    double seconds = seconds_since(window_started);
    window_started = Clock::now();
    window_started_unix_ms = end_ms;
    ++windows;

    std::vector<Record> device_records, job_records, idle_records;
    std::vector<detector::GpuWindow> summaries;
    for (auto& a : acc) {
      unsigned gpu = static_cast<unsigned>(&a - acc.data());
      std::string uuid = addresses.uuid_of(gpu);
      std::string job = job_of(gpu);
      auto closed = a.close(end_ms, seconds, job, uuid);
      device_records.push_back(closed.metrics);
      summaries.push_back(closed.summary);
      if (auto it = jobs.find(gpu); it != jobs.end())
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
    collect_checks();
    double now_s = static_cast<double>(end_ms) / 1000.0;
    add_window_xids(summaries);
    for (const auto& line : route_aer(*node_health, addresses, summaries)) log->warn("agent: {}", line);
    take_job_signals(summaries, seconds);
    publish_xids(now_s);
    std::vector<detector::GpuVerdict> verdicts = detector.observe(summaries);
    publish_verdicts(verdicts);
    act_on_verdicts(verdicts, summaries);
    auto fm_timeout = std::chrono::milliseconds(static_cast<int64_t>(opts.nvml_timeout_s * 1000));
    if (auto said = fabric_manager.check(HostRoots{opts.path_procfs, opts.path_sysfs}, fm_timeout, *node_health, now_s))
      log->warn("agent: Fabric Manager: {}", *said);
    std::vector<NodeStateEntry> node = node_health->active(now_s);
    publish_node_health(node);
    AgentState state = build_state(summaries, verdicts, end_ms);
    state.node = node;
    for (const auto& n : node)
      state.problems.push_back(fmt::format("node {} ({}): {}", to_string(n.health), n.reason, n.evidence));
    publish(kIndexedDeviceMetrics, device_records);
    publish(kGpuJobInfo, job_records);
    publish(kGpuAllocatedIdle, idle_records);
    publish_export();
    publish_self();
    render_page();
    write_state(state);
    write_textfile();
    push_otlp(end_ms);
  }

  // Node reasons that changed are said once in the agent's log; the series say the rest.
  void publish_node_health(const std::vector<NodeStateEntry>& node) {
    std::map<std::string, Health> now;
    for (const auto& n : node) {
      now[n.reason] = n.health;
      auto it = last_node_health.find(n.reason);
      if (it == last_node_health.end() || it->second != n.health)
        log->warn("agent: node {} ({}): {}", to_string(n.health), n.reason, n.evidence);
    }
    for (const auto& [reason, h] : last_node_health)
      if (!now.count(reason)) log->info("agent: node reason {} cleared", reason);
    last_node_health = std::move(now);
    std::vector<Record> records;
    NodeHealth::append_metrics(node, records);
    publish(kNodeHealthState.get(), records);
  }

  void publish_verdicts(const std::vector<detector::GpuVerdict>& verdicts) {
    std::vector<Record> metrics;
    detector::append_health_metrics(verdicts, metrics);
    std::map<const Schema*, std::vector<Record>> by_schema = {{&detector::kGpuHealthState.get(), {}},
                                                              {&detector::kGpuHealthReason.get(), {}},
                                                              {&detector::kGpuPeerDeviation.get(), {}}};
    for (auto& r : metrics) by_schema[r.schema].push_back(std::move(r));
    for (const auto& [schema, records] : by_schema) publish(*schema, records);
    std::vector<Record> events;
    detector::append_health_events(verdicts, hostname, events);
    for (const auto& v : verdicts)
      if (v.event)
        log->warn("agent: [GPU {}] {} -> {}: {}", v.gpu, detector::to_string(v.event->from),
                  detector::to_string(v.event->to), v.event->evidence);
    if (otlp)
      for (auto& e : events) window_logs.push_back(std::move(e));
  }

  AgentState build_state(const std::vector<detector::GpuWindow>& summaries,
                         const std::vector<detector::GpuVerdict>& verdicts, int64_t end_ms) {
    AgentState st;
    st.written_unix_ms = end_ms;
    st.window_seconds = opts.window_s;
    st.hostname = hostname;
    st.driver_version = sampler ? sampler->driver_version() : "";
    st.nvml_error = nvml_error;
    if (!nvml_error.empty()) st.problems.push_back("NVML unavailable: " + nvml_error);
    for (const auto& [name, r] : last_checks) {
      st.checks.push_back({name, r.code, r.message, static_cast<int64_t>(r.end * 1000)});
      if (r.code == 2) st.problems.push_back(fmt::format("check '{}': {}", name, r.message));
    }
    for (size_t i = 0; i < summaries.size(); ++i) {
      const detector::GpuWindow& w = summaries[i];
      GpuStateEntry e;
      e.gpu = w.gpu;
      e.uuid = w.uuid;
      e.job_id = w.job_id;
      e.presence = w.presence == detector::Presence::Ok              ? "ok"
                   : w.presence == detector::Presence::NotResponding ? "not_responding"
                                                                     : "lost";
      if (i < verdicts.size()) {
        const detector::GpuVerdict& v = verdicts[i];
        e.health = static_cast<Health>(static_cast<int>(v.state));
        for (int r = 0; r < detector::kReasonCount; ++r)
          if (v.reasons.has(static_cast<detector::Reason>(r)))
            e.reasons.push_back(detector::reason_name(static_cast<detector::Reason>(r)));
        e.evidence = v.evidence;
      }
      for (const auto& x : xids->active_for_gpu(static_cast<int>(w.gpu), static_cast<double>(end_ms) / 1000.0))
        e.active_xids.push_back(x.code);
      if (e.health >= Health::Degraded)
        st.problems.push_back(fmt::format("GPU {} {}: {}", e.gpu, to_string(e.health), e.evidence));
      st.gpus.push_back(std::move(e));
    }
    return st;
  }

  void publish(const Schema& schema, const std::vector<Record>& records) {
    store.begin_round(schema);
    for (const auto& r : records) store.add(r);
    store.end_round(schema);
    if (otlp) window_metrics.insert(window_metrics.end(), records.begin(), records.end());
  }

  void publish_self() {
    Record self(kAgentSelf);
    self.at("hostname") = hostname;
    self.at("cpu") = own_cpu_seconds();
    self.at("resident_memory") = own_rss_bytes();
    self.at("samples") = static_cast<int64_t>(samples);
    self.at("windows") = static_cast<int64_t>(windows);
    self.at("nvml_up") = int64_t{sampler ? 1 : 0};
    self.at("gpus") = static_cast<int64_t>(sampler ? sampler->device_count() : 0);
    self.at("last_sample_duration") = last_sample_s;
    {
      std::lock_guard<std::mutex> g(page_mu);
      self.at("metrics_bytes") = static_cast<int64_t>(page.size());
    }
    publish(kAgentSelf, {self});
    std::vector<Record> src;
    for (const auto& [name, s] : sources) {
      Record r(kAgentSource);
      r.at("source") = name;
      r.at("up") = int64_t{s.up ? 1 : 0};
      r.at("last_duration") = s.last_duration_s;
      r.at("errors") = static_cast<int64_t>(s.errors);
      r.at("timeouts") = static_cast<int64_t>(s.timeouts);
      if (!s.last_error.empty()) r.at("last_error") = s.last_error;
      src.push_back(std::move(r));
    }
    publish(kAgentSource, src);
  }

  void render_page() {
    std::string text = store.render();
    std::lock_guard<std::mutex> g(page_mu);
    page = std::move(text);
  }

  void write_state(const AgentState& st) {
    auto t0 = Clock::now();
    auto& s = sources["state_file"];
    try {
      write_agent_state(opts.path_run + "/agent-state.json", st);
      s.up = true;
    } catch (const std::exception& e) {
      if (s.last_error != e.what()) log->error("agent: {}", e.what());
      s.up = false;
      ++s.errors;
      s.last_error = e.what();
    }
    s.last_duration_s = seconds_since(t0);
  }

  void write_textfile() {
    if (opts.textfile.empty()) return;
    std::string text;
    {
      std::lock_guard<std::mutex> g(page_mu);
      text = page;
    }
    std::string tmp = fmt::format("{}.tmp.{}", opts.textfile, ::getpid());
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    out.close();
    if (!out || std::rename(tmp.c_str(), opts.textfile.c_str()) != 0) {
      std::remove(tmp.c_str());
      auto& s = sources["textfile"];
      ++s.errors;
      std::string err = fmt::format("cannot write the textfile {}", opts.textfile);
      if (s.last_error != err) log->error("agent: {}", err);
      s.last_error = err;
    }
  }

  void publish_xids(double now) {
    std::vector<Record> errors, active;
    for (auto& r : xids->records(now)) (r.schema == &kGpuXidActive.get() ? active : errors).push_back(std::move(r));
    publish(kGpuXidErrors, errors);
    publish(kGpuXidActive, active);
    for (auto& r : xids->take_log_records())
      if (otlp) window_logs.push_back(std::move(r));
    publish_kernel_events();
    if (kmsg) {
      KmsgFollowerStats ks = kmsg->stats();
      auto& s = sources["kmsg"];
      s.up = ks.open;
      s.errors = ks.open_errors + ks.bad_records + ks.overflows;
      s.last_error = ks.last_error;
    }
    if (events) {
      NvmlEventWatcherStats es = events->stats();
      auto& s = sources["nvml_events"];
      s.up = es.running && es.supported;
      s.errors = es.wait_errors;
      s.last_error = es.problems.empty() ? "" : es.problems.back();
    }
  }

  void publish_kernel_events() {
    std::vector<Record> events, sxids;
    for (auto& r : kernel_events.records())
      (r.schema == &kNvswitchSxidErrors.get() ? sxids : events).push_back(std::move(r));
    publish(kNodeKernelEvents, events);
    publish(kNvswitchSxidErrors, sxids);
    // Each event is a log line too, as an XID is; a boot's worth of corrected errors replayed at start is not
    // hundreds of lines: the first few per window are, then a count.
    constexpr size_t kLinesPerWindow = 10;
    size_t logged = 0, unlogged = 0;
    for (auto& r : kernel_events.take_log_records()) {
      auto text = [&r](const char* field) { return r.at(field).is_null() ? std::string() : r.at(field).as_string(); };
      if (text("severity") != "ignore") {
        if (logged < kLinesPerWindow) {
          ++logged;
          log->warn("agent: kernel log: {} ({}) on '{}': {}", text("kind"), text("class"), text("device"),
                    text("cause"));
        } else {
          ++unlogged;
        }
      }
      if (otlp) window_logs.push_back(std::move(r));
    }
    if (unlogged)
      log->warn("agent: kernel log: {} more event(s) this window (see gcm_node_kernel_events_total)", unlogged);
  }

  // The XIDs counted since the last window, into the summary of their GPU (the detector's `xid` reason).
  void add_window_xids(std::vector<detector::GpuWindow>& summaries) {
    for (const XidEvent& e : xids->events_since(xid_seq)) {
      xid_seq = std::max(xid_seq, e.seq);
      log->warn("agent: [GPU {}] XID {} ({}) from {}", e.gpu, e.xid, e.action,
                e.source == XidSource::Kmsg ? "the kernel log" : "NVML events");
      for (auto& w : summaries)
        if (static_cast<int>(w.gpu) == e.gpu) w.xids.push_back({e.xid, e.action, e.critical});
    }
  }

  void apply_pending() {
    std::optional<AgentOptions> next;
    {
      std::lock_guard<std::mutex> g(pending_mu);
      next.swap(pending);
    }
    if (!next) return;
    bool listener_changed = next->listen != opts.listen || next->web_config_file != opts.web_config_file;
    bool nvml_changed = next->nvml_library != opts.nvml_library || next->nvml_timeout_s != opts.nvml_timeout_s ||
                        next->no_extended != opts.no_extended;
    opts = std::move(*next);
    log->set_level(parse_log_level(opts.log_level));
    mapping_watch = std::make_unique<DirWatch>(opts.gpu_job_mapping_dir);
    attributed_at.reset();
    if (listener_changed) {
      if (listener) listener->stop();
      listener.reset();
      try {
        start_listener();
      } catch (const std::exception& e) {
        log->error("agent: reload: {}; /metrics is not served until the next reload", e.what());
      }
    }
    if (nvml_changed && sampler) drop_nvml("the NVML options changed");
    load_drain();
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
  m.mapping_watch = std::make_unique<DirWatch>(m.opts.gpu_job_mapping_dir);
  m.load_host_gpus();
  m.load_checks();
  m.load_drain();
  m.start_otlp();
  m.start_listener();
  m.start_job_signals();
  m.render_page();
  auto next_sample = Clock::now();
  while (!shutdown_requested()) {
    if (take_reload_request() && m.reload_source) {
      m.log->info("agent: SIGHUP: reading the configuration again");
      if (auto next = m.reload_source()) reload(std::move(*next));
    }
    m.apply_pending();
    m.maybe_start_checks();
    if (m.ensure_nvml()) {
      m.start_events();
      m.sample_once();
      // The first window is --window away: until then /metrics says at least that the agent runs and sees GPUs.
      if (m.samples == 1) {
        m.publish_self();
        m.render_page();
        m.window_metrics.clear();  // not part of the first window's OTLP request: that one has its own
      }
    }
    m.start_kmsg();
    if (seconds_since(m.window_started) >= m.opts.window_s) m.close_window();
    auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(m.opts.collect_interval_s));
    next_sample += period;
    auto now = Clock::now();
    if (next_sample < now) next_sample = now;  // a slow sample (a hung GPU) does not make the next ones burst
    if (!sleep_unless_shutdown(next_sample - now)) break;
  }
  m.log->info("agent: stopping");
  // The window in progress is closed and sent too, so a restart (a package upgrade) loses no samples.
  bool partial = false;
  for (const auto& a : m.acc) partial = partial || a.samples() > 0;
  if (partial) m.close_window();
  if (m.listener) m.listener->stop();
  m.job_signals.reset();
  m.kmsg.reset();
  m.events.reset();
  if (m.otlp) {
    // What the receiver does not take within the flush stays in the spool for the next start.
    bool all = m.otlp->flush(std::chrono::seconds(5));
    otlp::DeliveryStats st = m.otlp->stats();
    m.log->info("agent: OTLP flushed{}; {} window request(s) left in the spool", all ? "" : " in part",
                st.spool.entries);
    m.otlp.reset();
  }
  return 0;
}

}  // namespace gcm::agent

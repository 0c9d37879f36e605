// gcm nvml_monitor and gcm rocm_monitor: sample every GPU each --collect-interval for --push-interval seconds, then
// write per GPU the window's maximum with the GPU's Slurm job (LOG, DevicePlusJobMetrics) and the metric records
// (IndexedDeviceMetrics with every extended field, HostMetrics, and the GpuJobInfo join series). One command with two
// names, as GCM's rocm_monitor is nvml_monitor with another telemetry client: the GPU library is nvml_monitor's
// NVML and rocm_monitor's amdsmi unless `gcm --backend` says otherwise (gpu_backend_choice.h).
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>

#include "cli/option_binder.h"
#include "cli/option_limits.h"
#include "attribution/gpu_jobs.h"
#include "collectors/collector.h"
#include "core/host_roots.h"
#include "core/json.h"
#include "core/shutdown.h"
#include "gpu/gpu_backend_choice.h"
#include "gpu/gpu_records.h"
#include "gpu/gpu_sampler.h"

namespace gcm {
namespace {

std::string short_hostname_without_maas() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  std::string h = buf;
  for (size_t p; (p = h.find(".maas")) != std::string::npos;) h.erase(p, 5);
  return h;
}

// What differs between the two names of the command.
struct GpuMonitorFlavour {
  const char* command;          // "nvml_monitor": its log lines start with it
  const char* default_backend;  // without gcm --backend
  const char* timeout_option;   // "--nvml-timeout"
  const char* timeout_key;
};
constexpr GpuMonitorFlavour kNvmlMonitor{"nvml_monitor", "nvml", "--nvml-timeout", "nvml_timeout"};
constexpr GpuMonitorFlavour kRocmMonitor{"rocm_monitor", "amdsmi", "--amdsmi-timeout", "amdsmi_timeout"};

class GpuMonitor : public Collector {
 public:
  GpuMonitor(OptionBinder& b, const GpuMonitorFlavour& flavour) : flavour_(flavour) {
    b.option("--push-interval", "push_interval", push_interval_,
             "Seconds of sampling whose maximum is written as one record per GPU (the reference takes whole "
             "seconds; fractions are accepted).")
        ->capture_default_str()
        ->check(CLI::PositiveNumber)
        ->check(sampling_seconds());
    b.option("--collect-interval", "collect_interval", collect_interval_, "Seconds between two samples.")
        ->capture_default_str()
        ->check(CLI::PositiveNumber)
        ->check(sampling_seconds());
    b.option("--nvml-library", "nvml_library", backend_.nvml_library,
             "Path of libnvidia-ml.so.1 (default: $GCM_NVML_LIBRARY, else the dynamic loader's search).");
    b.option("--amdsmi-library", "amdsmi_library", backend_.amdsmi_library,
             "Path of AMD's libamd_smi.so, used when the GPU library is amdsmi (default: $GCM_AMDSMI_LIBRARY, else the "
             "dynamic loader's search).");
    b.option(flavour.timeout_option, flavour.timeout_key, timeout_s_,
             "Seconds one GPU library call (NVML or amdsmi, whichever gcm --backend chose) may take (a whole sample "
             "of a GPU: three times that) before the GPU is reported not responding (lost after 3 rounds).")
        ->capture_default_str()
        ->check(CLI::PositiveNumber)
        ->check(timeout_seconds());
    add_host_root_option(b, kProcfsRoot, attribution_.procfs,
                         "Where /proc is mounted (process environments for job attribution, meminfo).");
    add_host_root_option(b, kSysfsRoot, sysfs_, "Where /sys is mounted (job cgroups under fs/cgroup).");
    b.option("--attribution", "attribution", attribution_.sources,
             "GPU -> job sources, tried in order per GPU: nvml-processes (the Slurm environment of the GPU's "
             "processes), slurmd-local (`scontrol listpids` and each job's SLURM_JOB_GPUS), slurmctld (`scontrol show "
             "job -d` of this node's jobs: GRES indices and full metadata), cgroup (the job cgroup "
             "of the GPU's processes; v1 device allow-lists), mapping-files (one file per GPU index holding the job "
             "id), kubelet (the pod, namespace and container the kubelet's pod-resources API gave each GPU to; added "
             "to the job the other sources find).")
        ->delimiter(',')
        ->capture_default_str();
    b.option("--slurm-node", "slurm_node", attribution_.slurm_node,
             "This node's Slurm name (default: $SLURMD_NODENAME): slurmd-local needs it where several slurmd "
             "share one host (else scontrol asks the local slurmd); slurmctld matches job nodes against it (else "
             "the short hostname).");
    b.option("--slurmctld-cache-file", "slurmctld_cache_file", attribution_.slurmctld_cache_file,
             "Where the slurmctld source caches its answers (JSON, mode 0600); unset: no cache.");
    b.option("--slurmctld-cache-duration", "slurmctld_cache_duration", slurmctld_cache_s_,
             "Seconds a cached slurmctld answer is used before scontrol is asked again (0: no cache).")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber)
        ->check(seconds_or_zero());
    b.option("--gpu-job-mapping-dir", "gpu_job_mapping_dir", attribution_.mapping_dir,
             "Directory of the mapping-files source (one file per GPU index, as written by a prolog).");
    add_kubelet_attribution_options(b, attribution_.kubelet);
    kube::add_access_options(b, attribution_.kubelet.api, /*in_cluster_flag=*/false);
    b.flag("--no-extended", "no_extended", no_extended_,
           "Sample only the reference's fields (utilisation, memory, temperature, power, retired pages).");
  }

  std::vector<CollectorTask> tasks(const CollectorContext& ctx) override {
    try {
      check_attribution_sources(attribution_.sources);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("Invalid value for '--attribution': {}", e.what()));
    }
    if (std::find(attribution_.sources.begin(), attribution_.sources.end(), "mapping-files") !=
            attribution_.sources.end() &&
        attribution_.mapping_dir.empty())
      throw UsageError("--attribution mapping-files needs --gpu-job-mapping-dir");
    attribution_.cgroupfs = sysfs_ + "/fs/cgroup";
    attribution_.slurmctld_cache_duration = std::chrono::seconds(slurmctld_cache_s_);
    if (attribution_.slurm_node.empty())
      if (const char* n = std::getenv("SLURMD_NODENAME")) attribution_.slurm_node = n;
    backend_.call_timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s_ * 1000));
    backend_.backend = ctx.gpu_backend.value_or(flavour_.default_backend);
    GpuSamplerOptions so;
    so.call_timeout = backend_.call_timeout;
    so.extended = !no_extended_;
    sampler_ = open_gpu_sampler(backend_, so);
    hostname_ = short_hostname_without_maas();
    const GpuBackend& lib = sampler_->backend();
    ctx.log->info("{}: {} GPU(s), driver {}, {} library {}", flavour_.command, sampler_->device_count(),
                  sampler_->driver_version().empty() ? "unknown" : sampler_->driver_version(), lib.library_name(),
                  lib.library_path());
    for (const auto& m : lib.missing_symbols()) ctx.log->debug("{}: the library has no {}", flavour_.command, m);
    return {
        {"device_plus_job", &kDevicePlusJobMetrics.get(),
         [this](const CollectorContext& c, RecordOut& out) { sample_window(c, out); }},
        {"device_metrics", &kIndexedDeviceMetrics.get(),
         [this](const CollectorContext&, RecordOut& out) {
           for (const auto& r : window_) out.emit(r.metrics);
         }},
        {"host_metrics", &kHostMetrics.get(),
         [this](const CollectorContext& c, RecordOut& out) {
           if (!window_valid_) return;
           std::vector<Record> devices;
           for (const auto& r : window_) devices.push_back(r.metrics);
           out.emit(host_metrics_record(devices, read_ram_util(attribution_.procfs)));
           (void)c;
         }},
        {"job_info", &kGpuJobInfo.get(),
         [this](const CollectorContext&, RecordOut& out) {
           for (const auto& r : window_)
             for (const auto& j : r.jobs) {
               const Value& uuid = r.metrics.at("uuid");
               out.emit(job_info_record(r.index, uuid.is_string() ? std::optional(uuid.as_string()) : std::nullopt, j));
             }
         }},
    };
  }

 private:
  struct WindowResult {
    unsigned index = 0;
    Record metrics;             // max over the window of the Ok samples, or the last state record when not Ok
    std::vector<JobInfo> jobs;  // the last non-empty attribution in the window
  };

  // The reference's inner loop: sample every GPU, then sleep collect_interval, until push_interval has passed.
  void sample_window(const CollectorContext& ctx, RecordOut& out) {
    window_.clear();
    window_valid_ = false;
    unsigned n = sampler_->device_count();
    std::vector<std::optional<Record>> acc(n);
    std::vector<Record> last_state(n);
    std::vector<bool> last_ok(n, false);
    std::vector<std::vector<JobInfo>> jobs(n);
    auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    int samples = 0;
    do {
      ++samples;
      std::vector<DeviceResult> results = sampler_->sample();
      std::vector<std::string> attribution_errors;
      auto attributed = attribute_gpus(results, attribution_, &attribution_errors);
      for (const auto& e : attribution_errors)
        if (reported_errors_.insert(e).second) ctx.log->warn("{}: attribution source {}", flavour_.command, e);
      for (auto& r : results) {
        if (r.sample.uuid) known_uuid_[r.index] = *r.sample.uuid;
        auto known = known_uuid_.count(r.index) ? std::optional(known_uuid_[r.index]) : std::nullopt;
        Record rec = device_metrics_record(r, hostname_, sampler_->driver_version(), known);
        last_ok[r.index] = r.state == GpuState::Ok;
        if (r.state == GpuState::Ok) {
          if (acc[r.index])
            max_merge(*acc[r.index], rec);
          else
            acc[r.index] = rec;
        } else {
          ctx.log->warn("{}: [GPU# {}] {}: {}", flavour_.command, r.index, to_string(r.state), r.detail);
          last_state[r.index] = rec;
        }
        for (const auto& e : r.sample.errors) ctx.log->debug("{}: [GPU# {}] {}", flavour_.command, r.index, e);
        if (auto it = attributed.find(r.index); it != attributed.end()) jobs[r.index] = it->second;
      }
      if (elapsed() >= push_interval_) break;
      if (!sleep_unless_shutdown(std::chrono::duration<double>(collect_interval_))) break;
    } while (elapsed() < push_interval_);
    ctx.log->debug("{}: {} sample(s) of {} GPU(s) in {:.3f} s", flavour_.command, samples, n, elapsed());

    for (unsigned i = 0; i < n; ++i) {
      WindowResult w;
      w.index = i;
      // Never stale values: a GPU whose last sample failed is reported by its state alone.
      w.metrics = last_ok[i] && acc[i] ? *acc[i] : last_state[i];
      w.jobs = jobs[i];
      JobInfo job = w.jobs.empty() ? JobInfo{} : w.jobs.front();
      Record log_rec = device_plus_job_record(w.metrics, job, i, hostname_);
      if (ctx.log->should_log(spdlog::level::debug))
        ctx.log->debug("{}: [GPU# {}] {}", flavour_.command, i, to_json(log_rec));
      out.emit(log_rec);
      window_.push_back(std::move(w));
    }
    window_valid_ = true;
  }

  const GpuMonitorFlavour& flavour_;
  double push_interval_ = 60;
  double collect_interval_ = 10;
  GpuBackendChoice backend_;
  double timeout_s_ = 5;
  bool no_extended_ = false;
  AttributionOptions attribution_;
  std::unique_ptr<GpuSampler> sampler_;
  std::string hostname_;
  std::map<unsigned, std::string> known_uuid_;
  std::set<std::string> reported_errors_;  // each attribution failure is logged once, not every sample
  std::string sysfs_ = "/sys";
  int64_t slurmctld_cache_s_ = 0;
  std::vector<WindowResult> window_;
  bool window_valid_ = false;
};

const bool kNvmlMonitorRegistered = register_collector({
    "nvml_monitor",
    "Sample every GPU through NVML and attribute it to its Slurm job",
    "Sample every GPU through NVML (utilisation, memory, temperature, power, clocks, throttling, PCIe, NVLink, ECC, "
    "retired pages, remapped rows, processes, MIG) and attribute each GPU to its Slurm job. Each NVML call has a "
    "timeout; a hung or lost GPU is reported with gpu_up 0, never with stale values. Exit code 69 when NVML is "
    "unavailable.",
    90,
    "nvml_monitor",
    [](OptionBinder& b) -> std::unique_ptr<Collector> { return std::make_unique<GpuMonitor>(b, kNvmlMonitor); },
    /*log_file_per_host=*/true,
});

const bool kRocmMonitorRegistered = register_collector({
    "rocm_monitor",
    "Sample every AMD GPU through amdsmi and attribute it to its Slurm job",
    "Sample every AMD GPU through amdsmi, libamd_smi.so (activity, VRAM, temperature, power, energy, clocks, "
    "throttling, PCIe, ECC, bad pages, XGMI errors, partition modes, processes) and attribute each GPU to its Slurm "
    "job; the records are nvml_monitor's, with vendor amd, and a value AMD does not report is null. Each amdsmi call "
    "has a timeout; a hung GPU is reported with gpu_up 0, never with stale values. Exit code 69 when amdsmi is "
    "unavailable.",
    90,
    "rocm_monitor",
    [](OptionBinder& b) -> std::unique_ptr<Collector> { return std::make_unique<GpuMonitor>(b, kRocmMonitor); },
    /*log_file_per_host=*/true,
});

}  // namespace
}  // namespace gcm

// health_checks check-amd-smi: AMD GPUs through amdsmi (libamd_smi.so), with the sub-checks of GCM's check-amd-smi
// (upstream PR #80: gpu_num, clock_freq, running_procs, running_procs_and_kill, gpu_temperature, gpu_mem_usage; its
// option names, defaults and killswitches) and three of this project's, on AMD's memory and links: ecc_uncorrected,
// bad_pages, xgmi. GCM's version runs amd-smi or rocm-smi and parses their JSON; this one reads the GPUs as
// rocm_monitor does, through the sampler (gpu/gpu_sampler.h) over the amdsmi backend: one worker per GPU, every
// call under --amdsmi-timeout, so a GPU that stops answering makes its sub-checks CRITICAL instead of hanging the
// prolog. One table (sub_checks()) gives each sub-check's -c name, telemetry name, killswitch, help line and rule,
// as check-nvidia-smi's does.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attribution/gpu_list.h"
#include "cli/option_binder.h"
#include "cli/option_limits.h"
#include "core/host_roots.h"
#include "gpu/amdsmi_library.h"
#include "gpu/gpu_backend_choice.h"
#include "health/check.h"
#include "health/checks/gpu_processes.h"
#include "health/checks/sub_check_table.h"

namespace gcm::health {
namespace {

class CheckAmdSmi : public HealthCheck {
 public:
  explicit CheckAmdSmi(OptionBinder& b);

  int run(CheckRun& r) override;

  struct SubCheck {
    const char* option;      // -c value
    const char* name;        // telemetry health_check
    const char* killswitch;  // its own flag
    const char* help;        // its line in --help
    CheckOutcome (CheckAmdSmi::*rule)(const CheckRun&);
  };
  static const std::vector<SubCheck>& sub_checks();

 private:
  // The GPUs a prolog/epilog may look at: the job's (SLURM_JOB_GPUS, else the ROCm and HIP visibility lists, else
  // CUDA_VISIBLE_DEVICES, which HIP honours too); all otherwise.
  std::vector<unsigned> selected_gpus(const CheckRun& r) const {
    if (r.type == CheckType::Prolog || r.type == CheckType::Epilog) {
      for (const char* var : {"SLURM_JOB_GPUS", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"})
        if (const char* v = std::getenv(var)) return parse_gpu_index_list(v);
      return {};
    }
    return all_gpus();
  }
  std::vector<unsigned> all_gpus() const {
    std::vector<unsigned> all(sampler_->device_count());
    for (unsigned i = 0; i < all.size(); ++i) all[i] = i;
    return all;
  }

  // GPU `g` of the last sample; null (with *why) when it did not answer.
  const GpuSample* sample_of(unsigned g, std::string* why) const {
    for (const auto& d : samples_)
      if (d.index == g) {
        if (d.state == GpuState::Ok) return &d.sample;
        *why = fmt::format("GPU {} {}: {}", g, to_string(d.state), d.detail);
        return nullptr;
      }
    *why = fmt::format("GPU {} is not on this host ({} GPUs)", g, sampler_->device_count());
    return nullptr;
  }

  // Runs one per-GPU rule over `gpus` on the last sample; the rule returns a failure message or "". A GPU that did
  // not answer is CRITICAL: one that stops answering is as broken as a lost one.
  template <typename Rule>
  CheckOutcome per_gpu(const char* label, const std::vector<unsigned>& gpus, Rule rule) const {
    ExitCode code = ExitCode::OK;
    std::string msg;
    auto add = [&](const std::string& m) { msg += (msg.empty() ? "" : "\n") + m; };
    for (unsigned g : gpus) {
      std::string why;
      const GpuSample* s = sample_of(g, &why);
      std::string failure = s ? rule(g, *s) : why;
      if (failure.empty()) continue;
      code = ExitCode::CRITICAL;
      add(s ? fmt::format("{} check: GPU {}: {}", label, g, failure) : fmt::format("{} check: {}", label, failure));
    }
    return {code, msg};
  }

  CheckOutcome gpu_num(const CheckRun&) {
    unsigned n = sampler_->device_count();
    if (static_cast<int64_t>(n) == gpu_num_) return {ExitCode::OK, ""};
    return {ExitCode::CRITICAL, fmt::format("gpu_num check: exit_code: ExitCode.CRITICAL, Number of GPUs present, {}, "
                                            "is different than expected, {}",
                                            n, gpu_num_)};
  }

  // The GPUs' maximum clocks, not their current ones: an idle MI300X runs its graphics clock at about 130 MHz, so a
  // current-clock rule would fail every idle node; the maximum is what a job gets, as NVIDIA's applications clocks.
  CheckOutcome clock_freq(const CheckRun&) {
    return per_gpu("clock_freq", all_gpus(), [&](unsigned, const GpuSample& s) -> std::string {
      if (!s.max_clock_graphics_mhz || !s.max_clock_mem_mhz) return "amdsmi reports no maximum clocks";
      if (*s.max_clock_graphics_mhz < app_freq_ || *s.max_clock_mem_mhz < app_mem_freq_)
        return fmt::format("maximum clocks graphics {} MHz (minimum {}), memory {} MHz (minimum {})",
                           *s.max_clock_graphics_mhz, app_freq_, *s.max_clock_mem_mhz, app_mem_freq_);
      return "";
    });
  }

  // The live pids on the selected GPUs, from a fresh sample (running_procs_and_kill scans again after waiting).
  CheckOutcome running_procs(const CheckRun& r, const char* label, std::vector<unsigned>* seen, bool resample) {
    if (resample) samples_ = sampler_->sample();
    std::vector<unsigned> gpus = selected_gpus(r);
    if (gpus.empty()) return {ExitCode::OK, "No GPU devices were found."};
    ExitCode code = ExitCode::OK;
    std::string msg;
    auto add = [&](const std::string& m) { msg += (msg.empty() ? "" : "\n") + m; };
    for (unsigned g : gpus) {
      std::string why;
      const GpuSample* s = sample_of(g, &why);
      if (!s || !s->processes) {
        code = ExitCode::CRITICAL;
        add(fmt::format("{} check: {}", label, s ? fmt::format("GPU {}: amdsmi lists no processes", g) : why));
        continue;
      }
      std::vector<unsigned> listed;
      for (const auto& p : *s->processes) listed.push_back(p.pid);
      auto pids = live_gpu_pids(listed, procfs_);
      if (pids.empty()) continue;
      if (seen) seen->insert(seen->end(), pids.begin(), pids.end());
      code = ExitCode::CRITICAL;
      add(fmt::format("{} check: GPU {} has running processes: {}", label, g, fmt::join(pids, ", ")));
    }
    return {code, msg};
  }
  CheckOutcome running_procs_rule(const CheckRun& r) { return running_procs(r, "running_procs", nullptr, false); }
  CheckOutcome running_procs_and_kill(const CheckRun& r) {
    const char* label = "running_procs_and_kill";
    bool first = true;
    return health::running_procs_and_kill(label, procs_, [&](std::vector<unsigned>* seen) {
      bool resample = !first;
      first = false;
      return running_procs(r, label, seen, resample);
    });
  }

  CheckOutcome gpu_temperature(const CheckRun&) {
    return per_gpu("gpu_temperature", all_gpus(), [&](unsigned, const GpuSample& s) -> std::string {
      if (!s.temperature) return "amdsmi reports no temperature";
      if (*s.temperature > *temp_threshold_)
        return fmt::format("temperature {} C is above the threshold {} C", *s.temperature, *temp_threshold_);
      return "";
    });
  }

  CheckOutcome gpu_mem_usage(const CheckRun& r) {
    std::vector<unsigned> gpus = selected_gpus(r);
    if (gpus.empty()) return {ExitCode::OK, "No GPU devices were found."};
    return per_gpu("gpu_mem_usage", gpus, [&](unsigned, const GpuSample& s) -> std::string {
      if (!s.memory_used_bytes) return "amdsmi reports no VRAM use";
      double mib = static_cast<double>(*s.memory_used_bytes) / (1024.0 * 1024.0);
      if (mib > static_cast<double>(mem_threshold_))
        return fmt::format("{:.0f} MiB of VRAM in use, above the threshold {} MiB", mib, mem_threshold_);
      return "";
    });
  }

  // amdsmi_get_gpu_total_ecc_count: the errors since the driver loaded, as NVML's volatile counts.
  CheckOutcome ecc_uncorrected(const CheckRun&) {
    return per_gpu("ecc_uncorrected", all_gpus(), [&](unsigned, const GpuSample& s) -> std::string {
      if (!s.ecc_volatile_uncorrected) return "amdsmi reports no ECC count";
      if (*s.ecc_volatile_uncorrected > ecc_unc_threshold_)
        return fmt::format("{} uncorrected ECC errors, above the threshold {}", *s.ecc_volatile_uncorrected,
                           ecc_unc_threshold_);
      return "";
    });
  }

  CheckOutcome bad_pages(const CheckRun&) {
    return per_gpu("bad_pages", all_gpus(), [&](unsigned, const GpuSample& s) -> std::string {
      if (!s.bad_pages) return "amdsmi reports no bad page count";
      int64_t pending = s.bad_pages_pending.value_or(0);
      if (*s.bad_pages > bad_pages_threshold_ || pending > 0)
        return fmt::format("bad pages: {} retired (threshold {}), {} pending", *s.bad_pages, bad_pages_threshold_,
                           pending);
      return "";
    });
  }

  CheckOutcome xgmi(const CheckRun&) {
    return per_gpu("xgmi", all_gpus(), [&](unsigned, const GpuSample& s) -> std::string {
      if (!s.xgmi_error_status) return "amdsmi reports no XGMI error status";
      if (*s.xgmi_error_status == 0) return "";
      return *s.xgmi_error_status == 1 ? "an XGMI link error" : "several XGMI link errors";
    });
  }

  void check_required_options() const {
    if (checks_.empty()) throw CheckUsageError("Missing option '-c' / '--check'.");
    if (selected("gpu_temperature") && !temp_threshold_)
      throw CheckUsageError("gpu_temperature_threshold is required for gpu_temperature check");
  }
  bool selected(const char* option) const { return std::find(checks_.begin(), checks_.end(), option) != checks_.end(); }

  std::vector<std::string> checks_;
  int64_t gpu_num_ = 8;
  int64_t app_freq_ = 800, app_mem_freq_ = 800;
  std::optional<int64_t> temp_threshold_;
  int64_t mem_threshold_ = 15;
  uint64_t ecc_unc_threshold_ = 0;
  int64_t bad_pages_threshold_ = 10;
  ProcsAndKillOptions procs_;
  std::optional<std::string> amdsmi_library_;
  double amdsmi_timeout_s_ = 10;
  std::string procfs_ = "/proc";

  std::unique_ptr<GpuSampler> sampler_;
  std::vector<DeviceResult> samples_;
};

int CheckAmdSmi::run(CheckRun& r) {
  return r.run_standard("amd smi", "disable_amd_smi", [&]() -> Verdict {
    check_required_options();
    GpuBackendChoice choice;
    choice.backend = "amdsmi";
    choice.amdsmi_library = amdsmi_library_;
    choice.call_timeout = std::chrono::milliseconds(static_cast<int64_t>(amdsmi_timeout_s_ * 1000));
    GpuSamplerOptions so;
    so.call_timeout = choice.call_timeout;
    try {
      sampler_ = open_gpu_sampler(choice, so);
    } catch (const AmdsmiUnavailable& e) {
      // As check-nvidia-smi: a library that hangs in its init is CRITICAL; one that is absent or refuses is WARNING.
      return CheckOutcome{e.status == amdsmi::STATUS_TIMEOUT ? ExitCode::CRITICAL : ExitCode::WARN,
                          fmt::format("amdsmi is unavailable: {}", e.what())};
    }
    samples_ = sampler_->sample();
    SubChecks parts(r.killswitches);
    for (const auto& sc : sub_checks()) {
      if (!selected(sc.option)) continue;
      parts.run(sc.name, {sc.killswitch}, [&] { return (this->*sc.rule)(r); });
    }
    return std::move(parts).verdict();
  });
}

CheckAmdSmi::CheckAmdSmi(OptionBinder& b) {
  std::vector<std::string> names;
  for (const auto& s : sub_checks()) names.push_back(s.option);
  b.option("-c,--check", "check", checks_, sub_check_option_help(sub_checks()))->check(CLI::IsMember(names));
  b.option("--gpu_num", "gpu_num", gpu_num_, "Expected number of GPUs.")->capture_default_str();
  b.option("--gpu_app_freq", "gpu_app_freq", app_freq_, "Minimum maximum graphics clock, MHz.")->capture_default_str();
  b.option("--gpu_app_mem_freq", "gpu_app_mem_freq", app_mem_freq_, "Minimum maximum memory clock, MHz.")
      ->capture_default_str();
  b.option("--gpu_temperature_threshold", "gpu_temperature_threshold", temp_threshold_,
           "Highest acceptable GPU temperature, Celsius (required by gpu_temperature).");
  b.option("--gpu_mem_usage_threshold", "gpu_mem_usage_threshold", mem_threshold_,
           "Most VRAM a GPU may have in use before a job, MiB (GCM's default; an idle MI300X reports about 280 MiB, "
           "which the driver holds).")
      ->capture_default_str();
  b.option("--ecc_uncorrected_threshold", "ecc_uncorrected_threshold", ecc_unc_threshold_,
           "Most uncorrected ECC errors since the driver loaded.")
      ->capture_default_str();
  b.option("--bad_pages_threshold", "bad_pages_threshold", bad_pages_threshold_,
           "Most retired (bad) memory pages; any page pending retirement fails.")
      ->capture_default_str();
  add_running_procs_options(b, procs_);
  b.option("--amdsmi-library", "amdsmi_library", amdsmi_library_,
           "libamd_smi.so to load (default: $GCM_AMDSMI_LIBRARY, else the loader's search).");
  b.option("--amdsmi-timeout", "amdsmi_timeout", amdsmi_timeout_s_,
           "Seconds one amdsmi call may take (then its GPU's sub-checks are CRITICAL).")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(timeout_seconds());
  add_host_root_option(b, kProcfsRoot, procfs_, "Where /proc is mounted (is a GPU process alive).");
}

const std::vector<CheckAmdSmi::SubCheck>& CheckAmdSmi::sub_checks() {
  using C = CheckAmdSmi;
  static const std::vector<SubCheck> table = {
      {"gpu_num", "amd smi gpu_num", "disable_amd_smi_gpu_num", "the number of GPUs is --gpu_num", &C::gpu_num},
      {"clock_freq", "amd smi clock_freq", "disable_amd_smi_clock_freq",
       "maximum graphics and memory clocks at least --gpu_app_freq / --gpu_app_mem_freq", &C::clock_freq},
      {"running_procs", "amd smi running_procs", "disable_amd_smi_running_procs", "no process on the (job's) GPUs",
       &C::running_procs_rule},
      {"running_procs_and_kill", "amd smi running_procs_and_kill", "disable_amd_smi_running_procs_and_kill",
       "running_procs, retried (--running_procs_*), then SIGKILL with --running_procs_force_kill",
       &C::running_procs_and_kill},
      {"gpu_temperature", "amd smi gpu_temp", "disable_amd_smi_gpu_temp",
       "temperature at most --gpu_temperature_threshold", &C::gpu_temperature},
      {"gpu_mem_usage", "amd smi mem_usage", "disable_amd_smi_mem_usage",
       "VRAM in use on the (job's) GPUs at most --gpu_mem_usage_threshold", &C::gpu_mem_usage},
      // Not in GCM's check: AMD's memory and links.
      {"ecc_uncorrected", "amd smi ecc_uncorrected", "disable_amd_smi_ecc_uncorrected",
       "uncorrected ECC errors at most --ecc_uncorrected_threshold", &C::ecc_uncorrected},
      {"bad_pages", "amd smi bad_pages", "disable_amd_smi_bad_pages",
       "retired pages at most --bad_pages_threshold, none pending", &C::bad_pages},
      {"xgmi", "amd smi xgmi", "disable_amd_smi_xgmi", "no XGMI link error", &C::xgmi},
  };
  return table;
}

const bool kCheckAmdSmiRegistered = register_health_check({
    {"check-amd-smi"},
    "AMD GPU checks through amdsmi (libamd_smi.so): -c " + sub_check_names(CheckAmdSmi::sub_checks()) + ".",
    false,
    [](OptionBinder& b) -> std::unique_ptr<HealthCheck> { return std::make_unique<CheckAmdSmi>(b); },
});

}  // namespace
}  // namespace gcm::health

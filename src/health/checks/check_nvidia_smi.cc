// health_checks check-nvidia-smi: the reference's NVML sub-checks (clock_policy is GCM's 2026 addition) and
// persistence_mode (-c, repeatable). One table (sub_checks()) gives each sub-check's -c name, telemetry name,
// killswitch, help line and rule; they run in its order, each with its own telemetry record, under one overall
// stdout line ("nvidia smi"). NVML calls run on a worker thread under --nvml-timeout (gpu/nvml_caller.h
// TimedCaller), so a hung GPU makes the check CRITICAL instead of hanging the prolog.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <fstream>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "cli/option_binder.h"
#include "cli/option_limits.h"
#include "attribution/gpu_list.h"
#include "core/host_roots.h"
#include "gpu/nvml_caller.h"
#include "gpu/nvml_library.h"
#include "health/check.h"
#include "health/clock_policy.h"
#include "health/checks/gpu_processes.h"
#include "health/checks/nvml_error_code.h"
#include "health/checks/sub_check_table.h"

namespace gcm::health {
namespace {

// One NVML call that failed: it raises the sub-check to the mapped level and is named in the message. A hang is
// CRITICAL: a GPU that stops answering is as broken as a lost one.
ExitCode exit_code_of(const NvmlCallFailed& e) { return e.rc ? exit_code_of_nvml_error(*e.rc) : ExitCode::CRITICAL; }

using Nvml = TimedCaller;

class CheckNvidiaSmi : public HealthCheck {
 public:
  explicit CheckNvidiaSmi(OptionBinder& b);

  int run(CheckRun& r) override;

  // The table of sub-checks, in the reference's fixed execution order.
  struct SubCheck {
    const char* option;      // -c value
    const char* name;        // telemetry health_check
    const char* killswitch;  // its own flag (the reference reused running_procs' for running_procs_and_kill)
    const char* help;        // its line in --help
    CheckOutcome (CheckNvidiaSmi::*rule)(Nvml&, const CheckRun&);
  };
  static const std::vector<SubCheck>& sub_checks();

 private:
  // The GPUs a prolog/epilog may look at: the job's (SLURM_JOB_GPUS, else CUDA_VISIBLE_DEVICES); all otherwise.
  std::vector<unsigned> selected_gpus(Nvml& nv, const CheckRun& r) {
    if (r.type == CheckType::Prolog || r.type == CheckType::Epilog) {
      for (const char* var : {"SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES"})
        if (const char* v = std::getenv(var)) return parse_gpu_index_list(v);
      return {};
    }
    std::vector<unsigned> all(nv.count());
    for (unsigned i = 0; i < all.size(); ++i) all[i] = i;
    return all;
  }

  std::vector<unsigned> all_gpus(Nvml& nv) {
    std::vector<unsigned> all(nv.count());
    for (unsigned i = 0; i < all.size(); ++i) all[i] = i;
    return all;
  }

  void remember_gpu_node_id(Nvml& nv, CheckRun& r);

  // Live pids among the GPU's compute processes.
  std::vector<unsigned> live_pids(Nvml& nv, unsigned gpu);

  CheckOutcome running_procs(Nvml& nv, const CheckRun& r, const char* label, std::vector<unsigned>* seen) {
    std::vector<unsigned> gpus = selected_gpus(nv, r);
    if (gpus.empty()) return {ExitCode::OK, "No GPU devices were found."};
    std::string msg;
    for (unsigned g : gpus) {
      auto pids = live_pids(nv, g);
      if (pids.empty()) continue;
      if (seen) seen->insert(seen->end(), pids.begin(), pids.end());
      msg += fmt::format("{}{} check: GPU {} has running processes: {}", msg.empty() ? "" : "\n", label, g,
                         fmt::join(pids, ", "));
    }
    return {msg.empty() ? ExitCode::OK : ExitCode::CRITICAL, msg};
  }

  CheckOutcome running_procs_and_kill(Nvml& nv, const CheckRun& r);

  // Runs one per-GPU rule over `gpus`; rule returns a failure message or "".
  template <typename Rule>
  CheckOutcome per_gpu(const char* label, const std::vector<unsigned>& gpus, Rule rule);

  // One line per GPU in GCM's words (its alerting and dashboards parse them), the worst severity; a GPU whose clocks
  // cannot be read is named with the NVML error's level.
  CheckOutcome clock_policy(Nvml& nv, const std::vector<unsigned>& gpus);

  void check_required_options() const {
    // Required, but checked here: the list may come from the config file, applied after parsing.
    if (checks_.empty()) throw CheckUsageError("Missing option '-c' / '--check'.");
    if (selected("gpu_temperature") && !temp_threshold_)
      throw CheckUsageError("gpu_temperature_threshold is required for gpu_temperature check");
    if (selected("clock_policy") && policy_.critical_delta_mhz < policy_.warn_delta_mhz)
      throw CheckUsageError(
          fmt::format("Invalid value for '--critical-delta-mhz': {}: critical-delta-mhz must be "
                      "greater than or equal to warn-delta-mhz ({})",
                      policy_.critical_delta_mhz, policy_.warn_delta_mhz));
  }

  bool selected(const char* option) const { return std::find(checks_.begin(), checks_.end(), option) != checks_.end(); }

  CheckOutcome run_sub_check(const SubCheck& sc, Nvml& nv, const CheckRun& r) {
    try {
      return (this->*sc.rule)(nv, r);
    } catch (const NvmlCallFailed& e) {
      return {exit_code_of(e), fmt::format("{} check: {}", sc.option, e.what())};
    }
  }

  using A = nvml::Api;
  using D = nvml::Device;

  CheckOutcome gpu_num(Nvml& nv, const CheckRun&) {
    unsigned n = nv.count();
    if (static_cast<int64_t>(n) == gpu_num_) return {ExitCode::OK, ""};
    // The reference's exact text: alerting rules match on it.
    return {ExitCode::CRITICAL, fmt::format("gpu_num check: exit_code: ExitCode.CRITICAL, Number of GPUs "
                                            "present, {}, is different than expected, {}",
                                            n, gpu_num_)};
  }

  CheckOutcome clock_freq(Nvml& nv, const CheckRun&) {
    return per_gpu("clock_freq", all_gpus(nv), [&](unsigned g) -> std::string {
      auto gr = nv.get<unsigned>("nvmlDeviceGetApplicationsClock", g, [](const A& a, D h, unsigned* v) {
        return a.DeviceGetApplicationsClock(h, nvml::CLOCK_GRAPHICS, v);
      });
      auto mem = nv.get<unsigned>("nvmlDeviceGetApplicationsClock", g, [](const A& a, D h, unsigned* v) {
        return a.DeviceGetApplicationsClock(h, nvml::CLOCK_MEM, v);
      });
      if (gr < app_freq_ || mem < app_mem_freq_)
        return fmt::format("applications clocks graphics {} MHz (minimum {}), memory {} MHz (minimum {})", gr,
                           app_freq_, mem, app_mem_freq_);
      return "";
    });
  }

  CheckOutcome clock_policy_rule(Nvml& nv, const CheckRun&) { return clock_policy(nv, all_gpus(nv)); }

  CheckOutcome running_procs_rule(Nvml& nv, const CheckRun& r) {
    return running_procs(nv, r, "running_procs", nullptr);
  }

  CheckOutcome gpu_temperature(Nvml& nv, const CheckRun&) {
    return per_gpu("gpu_temperature", all_gpus(nv), [&](unsigned g) -> std::string {
      auto t = nv.get<unsigned>("nvmlDeviceGetTemperature", g, [](const A& a, D h, unsigned* v) {
        return a.DeviceGetTemperature(h, nvml::kTemperatureGpu, v);
      });
      if (static_cast<int64_t>(t) > *temp_threshold_)
        return fmt::format("temperature {} C is above the threshold {} C", t, *temp_threshold_);
      return "";
    });
  }

  CheckOutcome gpu_mem_usage(Nvml& nv, const CheckRun& r) {
    all_gpus(nv);  // counted first, as every per-GPU rule: a failing count is this sub-check's error in a prolog too
    std::vector<unsigned> gpus = selected_gpus(nv, r);
    if (gpus.empty()) return {ExitCode::OK, "No GPU devices were found."};
    return per_gpu("gpu_mem_usage", gpus, [&](unsigned g) -> std::string {
      auto m = nv.get<nvml::Memory>("nvmlDeviceGetMemoryInfo", g,
                                    [](const A& a, D h, nvml::Memory* v) { return a.DeviceGetMemoryInfo(h, v); });
      double mib = static_cast<double>(m.used) / (1024.0 * 1024.0);
      if (mib > static_cast<double>(mem_threshold_))
        return fmt::format("{:.0f} MiB of memory in use, above the threshold {} MiB", mib, mem_threshold_);
      return "";
    });
  }

  CheckOutcome gpu_retired_pages(Nvml& nv, const CheckRun&);

  CheckOutcome ecc(Nvml& nv, const char* label, unsigned type, uint64_t threshold) {
    return per_gpu(label, all_gpus(nv), [&](unsigned g) -> std::string {
      auto v = nv.get<unsigned long long>("nvmlDeviceGetTotalEccErrors", g,
                                          [type](const A& a, D h, unsigned long long* out) {
                                            return a.DeviceGetTotalEccErrors(h, type, nvml::ECC_VOLATILE, out);
                                          });
      if (v > threshold) return fmt::format("{} volatile ECC errors, above the threshold {}", v, threshold);
      return "";
    });
  }
  CheckOutcome ecc_uncorrected(Nvml& nv, const CheckRun&) {
    return ecc(nv, "ecc_uncorrected_volatile_total", nvml::ECC_UNCORRECTED, ecc_unc_threshold_);
  }
  CheckOutcome ecc_corrected(Nvml& nv, const CheckRun&) {
    return ecc(nv, "ecc_corrected_volatile_total", nvml::ECC_CORRECTED, ecc_corr_threshold_);
  }

  CheckOutcome persistence_mode(Nvml& nv, const CheckRun&) {
    return per_gpu("persistence_mode", all_gpus(nv), [&](unsigned g) -> std::string {
      auto m = nv.get<unsigned>("nvmlDeviceGetPersistenceMode", g,
                                [](const A& a, D h, unsigned* v) { return a.DeviceGetPersistenceMode(h, v); });
      return m == 1 ? "" : "persistence mode is disabled";
    });
  }

  CheckOutcome vbios_mismatch(Nvml& nv, const CheckRun&) {
    std::string expected = vbios_;
    return per_gpu("vbios_mismatch", all_gpus(nv), [&](unsigned g) -> std::string {
      auto b = nv.get<std::array<char, nvml::kVbiosBuffer>>(
          "nvmlDeviceGetVbiosVersion", g, [](const A& a, D h, std::array<char, nvml::kVbiosBuffer>* out) {
            return a.DeviceGetVbiosVersion(h, out->data(), nvml::kVbiosBuffer);
          });
      std::string v(b.data());
      if (expected.empty()) expected = v;  // the first GPU's version is the reference
      if (v != expected) return fmt::format("VBIOS {} differs from {}", v, expected);
      return "";
    });
  }

  struct RemappedRows {
    unsigned corr = 0, unc = 0, pending = 0, failure = 0;
  };
  RemappedRows remapped_rows(Nvml& nv, unsigned g) {
    return nv.get<RemappedRows>("nvmlDeviceGetRemappedRows", g, [](const A& a, D h, RemappedRows* v) {
      return a.DeviceGetRemappedRows(h, &v->corr, &v->unc, &v->pending, &v->failure);
    });
  }
  CheckOutcome row_remap(Nvml& nv, const CheckRun&) {
    return per_gpu("row_remap", all_gpus(nv), [&](unsigned g) -> std::string {
      RemappedRows x = remapped_rows(nv, g);
      if (x.pending > 0 || x.failure > 0)
        return fmt::format("row remapping pending {}, failed {}", x.pending, x.failure);
      return "";
    });
  }
  CheckOutcome row_remap_pending(Nvml& nv, const CheckRun&) {
    return per_gpu("row_remap_pending", all_gpus(nv), [&](unsigned g) -> std::string {
      return remapped_rows(nv, g).pending > 0 ? "a row remapping is pending (reset the GPU)" : "";
    });
  }
  CheckOutcome row_remap_failed(Nvml& nv, const CheckRun&) {
    return per_gpu("row_remap_failed", all_gpus(nv), [&](unsigned g) -> std::string {
      return remapped_rows(nv, g).failure > 0 ? "a row remapping failed" : "";
    });
  }

  std::vector<std::string> checks_;
  int64_t gpu_num_ = 8;
  unsigned app_freq_ = 1155, app_mem_freq_ = 1593;
  ClockPolicy policy_;
  std::optional<int64_t> temp_threshold_;
  int64_t mem_threshold_ = 15;
  unsigned retired_threshold_ = 10;
  std::string vbios_;
  uint64_t ecc_unc_threshold_ = 0, ecc_corr_threshold_ = 50000000;
  ProcsAndKillOptions procs_;
  std::optional<std::string> nvml_library_;
  double nvml_timeout_s_ = 10;
  std::string procfs_ = "/proc";
};

int CheckNvidiaSmi::run(CheckRun& r) {
  return r.run_standard("nvidia smi", "disable_nvidia_smi", [&]() -> Verdict {
    check_required_options();
    auto timeout = std::chrono::milliseconds(static_cast<int64_t>(nvml_timeout_s_ * 1000));
    std::shared_ptr<NvmlLibrary> lib;
    try {
      lib = NvmlLibrary::open_shared(nvml_library_path(nvml_library_), timeout);
    } catch (const NvmlUnavailable& e) {
      // A driver wedged in nvmlInit is as broken as a GPU hanging later: CRITICAL, not the TIMEOUT code's WARNING.
      return CheckOutcome{
          e.nvml_return == nvml::ERROR_TIMEOUT ? ExitCode::CRITICAL : exit_code_of_nvml_error(e.nvml_return), e.what()};
    }
    Nvml nv(lib, timeout, "gcm-hc-nvml");
    remember_gpu_node_id(nv, r);
    SubChecks parts(r.killswitches);
    for (const auto& sc : sub_checks()) {
      if (!selected(sc.option)) continue;
      parts.run(sc.name, {sc.killswitch}, [&] { return run_sub_check(sc, nv, r); });
    }
    return std::move(parts).verdict();
  });
}

void CheckNvidiaSmi::remember_gpu_node_id(Nvml& nv, CheckRun& r) {
  try {
    std::vector<std::string> uuids;
    for (unsigned g : all_gpus(nv)) {
      auto buf = nv.get<std::array<char, nvml::kUuidBuffer>>(
          "nvmlDeviceGetUUID", g, [](const nvml::Api& a, nvml::Device h, std::array<char, nvml::kUuidBuffer>* b) {
            return a.DeviceGetUUID ? a.DeviceGetUUID(h, b->data(), nvml::kUuidBuffer) : nvml::ERROR_FUNCTION_NOT_FOUND;
          });
      uuids.emplace_back(buf.data());
    }
    if (uuids.empty()) return;
    r.gpu_node_id = gpu_node_id_of(uuids);
    if (read_gpu_node_id() != r.gpu_node_id) write_gpu_node_id(*r.gpu_node_id);
  } catch (const NvmlCallFailed& e) {
    r.log->warn("gpu_node_id unavailable: {}", e.what());
    nv.defer_if_hung(e.what());
  } catch (const std::exception& e) {
    r.log->warn("gpu_node_id unavailable: {}", e.what());
  }
}

template <typename Rule>
CheckOutcome CheckNvidiaSmi::per_gpu(const char* label, const std::vector<unsigned>& gpus, Rule rule) {
  ExitCode code = ExitCode::OK;
  std::string msg;
  auto add = [&](const std::string& m) { msg += (msg.empty() ? "" : "\n") + m; };
  for (unsigned g : gpus) {
    try {
      std::string failure = rule(g);
      if (!failure.empty()) {
        code = worse(code, ExitCode::CRITICAL);
        add(fmt::format("{} check: GPU {}: {}", label, g, failure));
      }
    } catch (const NvmlCallFailed& e) {
      code = worse(code, exit_code_of(e));
      add(fmt::format("{} check: {}", label, e.what()));
    }
  }
  return {code, msg};
}

CheckOutcome CheckNvidiaSmi::gpu_retired_pages(Nvml& nv, const CheckRun&) {
  return per_gpu("gpu_retired_pages", all_gpus(nv), [&](unsigned g) -> std::string {
    auto count = [&](unsigned cause) {
      nvml::Device h = nv.handle(g);
      auto n = std::make_shared<unsigned>(0);
      nv.call("nvmlDeviceGetRetiredPages", g, [h, n, cause](const A& a) {
        nvml::Return rc = a.DeviceGetRetiredPages(h, cause, n.get(), nullptr);
        return rc == nvml::ERROR_INSUFFICIENT_SIZE ? nvml::SUCCESS : rc;  // a size query
      });
      return *n;
    };
    unsigned single = count(nvml::RETIRED_MULTIPLE_SINGLE_BIT), dbl = count(nvml::RETIRED_DOUBLE_BIT);
    auto pending = nv.get<unsigned>("nvmlDeviceGetRetiredPagesPendingStatus", g, [](const A& a, D h, unsigned* v) {
      return a.DeviceGetRetiredPagesPendingStatus(h, v);
    });
    if (single > retired_threshold_ || dbl > retired_threshold_ || pending > 0)
      return fmt::format("retired pages: {} single-bit, {} double-bit (threshold {}), pending {}", single, dbl,
                         retired_threshold_, pending);
    return "";
  });
}

CheckNvidiaSmi::CheckNvidiaSmi(OptionBinder& b) {
  std::vector<std::string> names;
  for (const auto& s : sub_checks()) names.push_back(s.option);
  b.option("-c,--check", "check", checks_, sub_check_option_help(sub_checks()))->check(CLI::IsMember(names));
  b.option("--gpu_num", "gpu_num", gpu_num_, "Expected number of GPUs.")->capture_default_str();
  b.option("--gpu_app_freq", "gpu_app_freq", app_freq_, "Minimum applications graphics clock, MHz.")
      ->capture_default_str();
  b.option("--gpu_app_mem_freq", "gpu_app_mem_freq", app_mem_freq_, "Minimum applications memory clock, MHz.")
      ->capture_default_str();
  b.option("--expected-graphics-freq", "expected_graphics_freq", policy_.expected_graphics_mhz,
           "clock_policy: expected applications graphics clock, MHz.")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  b.option("--expected-memory-freq", "expected_memory_freq", policy_.expected_memory_mhz,
           "clock_policy: expected applications memory clock, MHz.")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  b.option("--warn-delta-mhz", "warn_delta_mhz", policy_.warn_delta_mhz,
           "clock_policy: WARNING when a clock drifts from the policy by more than this many MHz.")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  b.option("--critical-delta-mhz", "critical_delta_mhz", policy_.critical_delta_mhz,
           "clock_policy: CRITICAL when a clock drifts from the policy by more than this many MHz (not below "
           "--warn-delta-mhz).")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  b.option("--gpu_temperature_threshold", "gpu_temperature_threshold", temp_threshold_,
           "Highest acceptable GPU temperature, Celsius (required by gpu_temperature).");
  b.option("--gpu_mem_usage_threshold", "gpu_mem_usage_threshold", mem_threshold_,
           "Most memory a GPU may have in use before a job, MiB.")
      ->capture_default_str();
  b.option("--gpu_retired_pages_threshold", "gpu_retired_pages_threshold", retired_threshold_,
           "Most retired pages of each cause.")
      ->capture_default_str();
  b.option("--gpu_vbios", "gpu_vbios", vbios_, "Expected VBIOS version (default: the first GPU's).");
  b.option("--ecc_uncorrected_volatile_threshold", "ecc_uncorrected_volatile_threshold", ecc_unc_threshold_,
           "Most volatile uncorrected ECC errors.")
      ->capture_default_str();
  b.option("--ecc_corrected_volatile_threshold", "ecc_corrected_volatile_threshold", ecc_corr_threshold_,
           "Most volatile corrected ECC errors.")
      ->capture_default_str();
  add_running_procs_options(b, procs_);
  b.option("--nvml-library", "nvml_library", nvml_library_,
           "libnvidia-ml.so.1 to load (default: "
           "$GCM_NVML_LIBRARY, else the loader's search).");
  b.option("--nvml-timeout", "nvml_timeout", nvml_timeout_s_, "Seconds one NVML call may take (then CRITICAL).")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(timeout_seconds());
  add_host_root_option(b, kProcfsRoot, procfs_, "Where /proc is mounted (is a GPU process alive).");
}

std::vector<unsigned> CheckNvidiaSmi::live_pids(Nvml& nv, unsigned gpu) {
  nvml::Device h = nv.handle(gpu);
  // Size the buffer from a count query (MPS can put hundreds of clients on a GPU); processes may start between
  // the two calls, hence the headroom and the retries.
  auto n = std::make_shared<unsigned>(0);
  auto infos = std::make_shared<std::vector<nvml::ProcessInfo>>();
  for (int attempt = 0;; ++attempt) {
    infos->resize(*n + 16);
    *n = static_cast<unsigned>(infos->size());
    try {
      nv.call("nvmlDeviceGetComputeRunningProcesses_v3", gpu, [h, infos, n](const nvml::Api& a) {
        return a.DeviceGetComputeRunningProcesses(h, n.get(), infos->data());
      });
      break;
    } catch (const NvmlCallFailed&) {
      if (attempt >= 3 || *n < infos->size()) throw;  // not a size problem, or still growing after 4 tries
    }
  }
  std::vector<unsigned> listed;
  for (unsigned i = 0; i < *n && i < infos->size(); ++i) listed.push_back((*infos)[i].pid);
  return live_gpu_pids(listed, procfs_);
}

CheckOutcome CheckNvidiaSmi::running_procs_and_kill(Nvml& nv, const CheckRun& r) {
  const char* label = "running_procs_and_kill";
  return health::running_procs_and_kill(label, procs_,
                                        [&](std::vector<unsigned>* seen) { return running_procs(nv, r, label, seen); });
}

CheckOutcome CheckNvidiaSmi::clock_policy(Nvml& nv, const std::vector<unsigned>& gpus) {
  if (gpus.empty()) return {ExitCode::WARN, "clock_policy check: No GPUs were detected on this host."};
  ExitCode code = ExitCode::OK;
  std::string msg;
  auto add = [&](const std::string& m) { msg += (msg.empty() ? "" : "\n") + m; };
  for (unsigned g : gpus) {
    try {
      auto clock = [&](unsigned type) {
        return nv.get<unsigned>("nvmlDeviceGetApplicationsClock", g,
                                [type](const nvml::Api& a, nvml::Device h, unsigned* v) {
                                  return a.DeviceGetApplicationsClock(h, type, v);
                                });
      };
      unsigned gr = clock(nvml::CLOCK_GRAPHICS), mem = clock(nvml::CLOCK_MEM);
      ClockPolicyResult res = evaluate_clock_policy(gr, mem, policy_);
      code = worse(code, res.severity);
      add(fmt::format(
          "clock_policy check: GPU {}, severity={}, expected=(graphics:{}, memory:{}), "
          "observed=(graphics:{}, memory:{}), delta_mhz=(graphics:{}, memory:{})",
          g, res.severity == ExitCode::WARN ? "WARN" : status_word(res.severity), policy_.expected_graphics_mhz,
          policy_.expected_memory_mhz, gr, mem, res.graphics_delta_mhz, res.memory_delta_mhz));
    } catch (const NvmlCallFailed& e) {
      code = worse(code, exit_code_of(e));
      add(fmt::format("clock_policy check: {}", e.what()));
    }
  }
  return {code, msg};
}

const std::vector<CheckNvidiaSmi::SubCheck>& CheckNvidiaSmi::sub_checks() {
  using C = CheckNvidiaSmi;
  static const std::vector<SubCheck> table = {
      {"gpu_num", "nvidia smi gpu_num", "disable_nvidia_smi_gpu_num", "the number of GPUs is --gpu_num", &C::gpu_num},
      {"clock_freq", "nvidia smi clock_freq", "disable_nvidia_smi_clock_freq",
       "applications clocks at least --gpu_app_freq / --gpu_app_mem_freq", &C::clock_freq},
      {"clock_policy", "nvidia smi clock policy", "disable_nvidia_smi_clock_policy",
       "applications clocks within --warn-delta-mhz / --critical-delta-mhz of the --expected-*-freq policy",
       &C::clock_policy_rule},
      {"running_procs", "nvidia smi running_procs", "disable_nvidia_smi_running_procs",
       "no process on the (job's) GPUs", &C::running_procs_rule},
      {"running_procs_and_kill", "nvidia smi running_procs_and_kill", "disable_nvidia_smi_running_procs_and_kill",
       "running_procs, retried (--running_procs_*), then SIGKILL with --running_procs_force_kill",
       &C::running_procs_and_kill},
      {"gpu_temperature", "nvidia smi gpu_temp", "disable_nvidia_smi_gpu_temp",
       "temperature at most --gpu_temperature_threshold", &C::gpu_temperature},
      {"gpu_mem_usage", "nvidia smi mem_usage", "disable_nvidia_smi_mem_usage",
       "memory in use on the (job's) GPUs at most --gpu_mem_usage_threshold", &C::gpu_mem_usage},
      {"gpu_retired_pages", "nvidia smi retired_pages", "disable_nvidia_smi_retired_pages",
       "retired pages at most --gpu_retired_pages_threshold, none pending", &C::gpu_retired_pages},
      {"ecc_uncorrected_volatile_total", "nvidia smi ecc_uncorrected", "disable_nvidia_smi_ecc_uncorrected",
       "volatile uncorrected ECC errors at most --ecc_uncorrected_volatile_threshold", &C::ecc_uncorrected},
      {"ecc_corrected_volatile_total", "nvidia smi ecc_corrected", "disable_nvidia_smi_ecc_corrected",
       "volatile corrected ECC errors at most --ecc_corrected_volatile_threshold", &C::ecc_corrected},
      {"vbios_mismatch", "nvidia smi bios version mismatch", "disable_nvidia_smi_vbios_mismatch",
       "every GPU has the VBIOS --gpu_vbios (default: the first GPU's)", &C::vbios_mismatch},
      {"row_remap", "nvidia smi row_remap", "disable_nvidia_smi_row_remap", "no row remapping pending or failed",
       &C::row_remap},
      {"row_remap_pending", "nvidia smi row_remap_pending", "disable_nvidia_smi_row_remap_pending",
       "no row remapping pending", &C::row_remap_pending},
      {"row_remap_failed", "nvidia smi row_remap_failed", "disable_nvidia_smi_row_remap_failed",
       "no row remapping failed", &C::row_remap_failed},
      // Not in the reference: a GPU without persistence mode re-initialises at every job start (seconds).
      {"persistence_mode", "nvidia smi persistence_mode", "disable_nvidia_smi_persistence_mode",
       "persistence mode is on", &C::persistence_mode},
  };
  return table;
}

const bool kCheckNvidiaSmiRegistered = register_health_check({
    {"check-nvidia-smi"},
    "GPU checks through NVML: -c " + sub_check_names(CheckNvidiaSmi::sub_checks()) + ".",
    false,
    [](OptionBinder& b) -> std::unique_ptr<HealthCheck> { return std::make_unique<CheckNvidiaSmi>(b); },
});

}  // namespace
}  // namespace gcm::health

#include "agent/gpu_session.h"

#include <spdlog/spdlog.h>

#include "core/host_roots.h"
#include "gpu/gpu_records.h"
#include "gpu/amdsmi_backend.h"
#include "gpu/nvml_backend.h"
#include "health/check.h"

namespace gcm::agent {

namespace {

using NvmlClock = std::chrono::steady_clock;

double nvml_seconds_since(NvmlClock::time_point t) {
  return std::chrono::duration<double>(NvmlClock::now() - t).count();
}

GpuBackendChoice backend_choice(const AgentOptions& opts) {
  GpuBackendChoice c;
  c.backend = opts.backend;
  c.nvml_library = opts.nvml_library;
  c.amdsmi_library = opts.amdsmi_library;
  c.call_timeout = std::chrono::milliseconds(static_cast<int64_t>(opts.nvml_timeout_s * 1000));
  return c;
}

}  // namespace

GpuSession::GpuSession(XidTracker& xids, AgentCounters& counters, std::shared_ptr<spdlog::logger> log,
                       std::function<void()> before_unload)
    : xids_(xids), counters_(counters), log_(std::move(log)), before_unload_(std::move(before_unload)) {}

void GpuSession::load_host_gpus(const AgentOptions& opts) {
  HostRoots roots;
  roots.procfs = opts.path_procfs;
  roots.sysfs = opts.path_sysfs;
  std::vector<std::string> problems;
  addresses_.set_host_gpus(read_host_gpus(roots, &problems));
  for (const auto& p : problems) log_->warn("agent: GPU addresses: {}", p);
  xids_.set_gpus(addresses_.identities());
}

bool GpuSession::ensure_loaded(const AgentOptions& opts) {
  if (sampler_) return true;
  if (NvmlClock::now() < next_try_) return false;
  GpuBackendChoice choice = backend_choice(opts);
  auto t0 = NvmlClock::now();
  try {
    GpuSamplerOptions so;
    so.call_timeout = choice.call_timeout;
    so.extended = !opts.no_extended;
    sampler_ = open_gpu_sampler(choice, so);
  } catch (const UnavailableError& e) {
    sampler_.reset();
    library_name_ = e.missing;
    bool new_error = error_ != e.what();
    error_ = e.what();
    double wait_s = retry_later();
    auto& s = counters_.source(source_name());
    s.up = false;
    s.failed(error_);
    s.last_duration_s = nvml_seconds_since(t0);
    if (new_error)
      log_->warn("agent: {} unavailable ({}); retrying with backoff, next in {:.0f} s", library_name_, error_, wait_s);
    return false;
  }
  library_name_ = sampler_->backend().library_name();
  backoff_.succeeded();
  if (!error_.empty()) log_->info("agent: {} is back", library_name_);
  error_.clear();
  addresses_.set_gpu_count(sampler_->device_count());
  load_host_gpus(opts);
  acc_.clear();
  for (unsigned i = 0; i < sampler_->device_count(); ++i) acc_.emplace_back(i);
  log_->info("agent: {} {} GPU(s), driver {}, library {}", sampler_->device_count(), sampler_->backend().vendor(),
             sampler_->driver_version().empty() ? "unknown" : sampler_->driver_version(),
             sampler_->backend().library_path());
  return true;
}

const NvmlLibrary* GpuSession::nvml_library() const {
  if (!sampler_) return nullptr;
  const auto* nvml = dynamic_cast<const NvmlBackend*>(&sampler_->backend());
  return nvml ? nvml->library().get() : nullptr;
}

std::shared_ptr<AmdsmiLibrary> GpuSession::amdsmi_library() const {
  if (!sampler_) return nullptr;
  const auto* amd = dynamic_cast<const AmdsmiBackend*>(&sampler_->backend());
  return amd ? amd->library() : nullptr;
}

const char* GpuSession::source_name() const { return library_name_ == "amdsmi" ? "amdsmi" : "nvml"; }

void GpuSession::unload(const std::string& why) {
  log_->warn("agent: {}; loading {} again", why, library_name_);
  if (before_unload_) before_unload_();
  error_ = why;
  sampler_.reset();
  retry_later();
}

double GpuSession::retry_later() {
  double wait_s = backoff_.failed();
  next_try_ = NvmlClock::now() + std::chrono::duration_cast<NvmlClock::duration>(std::chrono::duration<double>(wait_s));
  return wait_s;
}

// A GPU that was reset (it answers again after being lost, or the driver's recovery action went back to none)
// clears the XIDs whose catalogue action a reset resolves.
void GpuSession::note_resets(const DeviceResult& r, GpuState before, bool first) {
  double now = health::CheckRun::now();
  if (r.state != GpuState::Ok) return;
  if (!first && (before == GpuState::Lost || before == GpuState::Error))
    xids_.gpu_reset(static_cast<int>(r.index), now);
  if (!r.sample.recovery_action) return;
  int64_t action = *r.sample.recovery_action;
  auto it = recovery_.find(r.index);
  // At start, a GPU that needs no recovery has had whatever reset its old XIDs called for.
  if ((it == recovery_.end() || it->second != 0) && action == 0) xids_.gpu_reset(static_cast<int>(r.index), now);
  recovery_[r.index] = action;
}

std::vector<DeviceResult> GpuSession::sample(const std::string& hostname) {
  auto t0 = NvmlClock::now();
  std::vector<DeviceResult> results = sampler_->sample();
  double took = nvml_seconds_since(t0);
  counters_.sampled(took);
  auto& s = counters_.source(source_name());
  s.up = true;
  s.last_duration_s = took;
  bool any_answer = results.empty();
  bool identities_changed = false;
  for (auto& r : results) {
    identities_changed |= addresses_.learn(r.index, r.sample.uuid.value_or(""), r.sample.pci_bus_id.value_or(""));
    if (r.state == GpuState::Ok) any_answer = true;
    if (r.state == GpuState::NotResponding) ++s.timeouts;
    if (r.state == GpuState::Error) ++s.errors;
    bool first = !last_state_.count(r.index);
    GpuState before = first ? GpuState::Ok : last_state_[r.index];
    note_resets(r, before, first);
    if (r.state != before) {
      if (r.state == GpuState::Ok)
        log_->info("agent: [GPU {}] answers again", r.index);
      else
        log_->warn("agent: [GPU {}] {}: {}", r.index, to_string(r.state), r.detail);
    }
    last_state_[r.index] = r.state;
    std::string uuid = addresses_.uuid_of(r.index);
    auto known = uuid.empty() ? std::nullopt : std::optional(uuid);
    Record rec = device_metrics_record(r, hostname, sampler_->driver_version(), known);
    if (r.index < acc_.size()) acc_[r.index].add(r, rec);
  }
  if (identities_changed) xids_.set_gpus(addresses_.identities());
  all_gone_samples_ = any_answer ? 0 : all_gone_samples_ + 1;
  if (all_gone_samples_ >= 5) {
    all_gone_samples_ = 0;
    unload("no GPU answered in 5 samples in a row");
  }
  return results;
}

bool GpuSession::window_has_samples() const {
  for (const auto& a : acc_)
    if (a.samples() > 0) return true;
  return false;
}

}  // namespace gcm::agent

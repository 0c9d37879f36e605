// health_checks check-dcgmi: `diag` (DCGM's diagnostic levels 1-4) and `nvlink` (error counters and link states),
// running dcgmi by argv with a timeout and judging its output with health/dcgmi_output.h.
#include <algorithm>

#include <fmt/format.h>

#include "cli/option_binder.h"
#include "health/check.h"
#include "health/dcgmi_output.h"
#include "health/tool_run.h"

namespace gcm::health {
namespace {

const bool kCheckDcgmiGroupRegistered =
    register_health_group("check-dcgmi", "DCGM checks through dcgmi: diag, nvlink.");

std::string failed_to_run(const char* what, const CommandResult& r) {
  return fmt::format("{} command FAILED to execute. error_code: {} output: {}.", what, r.exit_code, r.out);
}

class CheckDcgmiDiag : public HealthCheck {
 public:
  explicit CheckDcgmiDiag(OptionBinder& b) {
    std::vector<std::string> names(dcgm_diag_test_names().begin(), dcgm_diag_test_names().end());
    b.option("-x,--exclude_category", "exclude_category", excluded_,
             "A DCGM test to leave out of the verdict; repeat for several.")
        ->check(CLI::IsMember(names));
    b.option("--diag_level", "diag_level", level_, "dcgmi diag -r level, 1 (seconds) to 4 (hours).")
        ->capture_default_str()
        ->check(CLI::Range(1, 4));
    b.option("--host", "host", host_, "The DCGM host engine.")->capture_default_str();
    b.option("--dcgmi-bin", "dcgmi_bin", dcgmi_, "The dcgmi executable (looked up on PATH).")->capture_default_str();
  }

  int run(CheckRun& r) override {
    return r.run_standard("check dcgmi diag", "disable_dcgmi_diag", [&]() -> CheckOutcome {
      CommandResult res = run_tool({dcgmi_, "diag", "--host", host_, "-j", "-r", std::to_string(level_)},
                                   static_cast<double>(r.timeout_s));
      // 205 is dcgmi's "a test failed" status: the JSON still says which.
      if (res.exit_code > 0 && res.exit_code != 205) return {ExitCode::WARN, failed_to_run("dcgmi diag", res)};
      if (res.out.empty()) return {ExitCode::WARN, "dcgmi diag FAILED to execute."};
      std::set<std::string> excluded(excluded_.begin(), excluded_.end());
      DcgmiVerdict v = evaluate_dcgmi_diag(res.out, excluded);
      return {v.code, v.msg};
    });
  }

 private:
  std::vector<std::string> excluded_;
  int level_ = 1;
  std::string host_ = "localhost";
  std::string dcgmi_ = "dcgmi";
};

class CheckDcgmiNvlink : public HealthCheck {
 public:
  explicit CheckDcgmiNvlink(OptionBinder& b) {
    b.option("-c,--check", "check", checks_, "nvlink_errors and/or nvlink_status (required; repeat for both).")
        ->check(CLI::IsMember({"nvlink_errors", "nvlink_status"}));
    b.option("-g,--gpu_num", "gpu_num", gpu_num_, "GPUs 0..N-1 to read error counters of.")->capture_default_str();
    b.option("--data_error_threshold", "data_error_threshold", thresholds_.data, "Most CRC data errors per link.")
        ->capture_default_str();
    b.option("--flit_error_threshold", "flit_error_threshold", thresholds_.flit, "Most CRC FLIT errors per link.")
        ->capture_default_str();
    b.option("--recovery_error_threshold", "recovery_error_threshold", thresholds_.recovery,
             "Most recovery errors per link.")
        ->capture_default_str();
    b.option("--replay_error_threshold", "replay_error_threshold", thresholds_.replay, "Most replay errors per link.")
        ->capture_default_str();
    b.option("--host", "host", host_, "The DCGM host engine.")->capture_default_str();
    b.option("--dcgmi-bin", "dcgmi_bin", dcgmi_, "The dcgmi executable (looked up on PATH).")->capture_default_str();
  }

  int run(CheckRun& r) override {
    // Required, but checked here: the list may come from the config file.
    if (checks_.empty()) throw CheckUsageError("Missing option '-c' / '--check' (nvlink_errors, nvlink_status).");
    auto has = [&](const char* c) { return std::find(checks_.begin(), checks_.end(), c) != checks_.end(); };
    return r.run_standard("check dcgmi nvlink", "", [&]() -> Verdict {
      SubChecks parts(r.killswitches);
      if (has("nvlink_errors"))
        parts.run_each("check dcgmi nvlink error", {"disable_dcgmi_nvlink", "disable_dcgmi_nvlink_error"},
                       [&](const SubChecks::Emit& emit) {
                         // One record per GPU (the reference sent only the last GPU's).
                         for (int64_t gpu = 0; gpu < gpu_num_; ++gpu) emit(nvlink_errors(gpu, r));
                       });
      if (has("nvlink_status"))
        parts.run("check dcgmi nvlink status", {"disable_dcgmi_nvlink", "disable_dcgmi_nvlink_status"},
                  [&] { return nvlink_status(r); });
      return std::move(parts).verdict();
    });
  }

 private:
  CheckOutcome nvlink_errors(int64_t gpu, const CheckRun& r) const {
    CommandResult res = run_tool({dcgmi_, "nvlink", "--host", host_, "-j", "-e", "-g", std::to_string(gpu)},
                                 static_cast<double>(r.timeout_s));
    CheckOutcome o;
    if (res.exit_code > 0) {
      o = {ExitCode::WARN, failed_to_run("dcgmi nvlink", res)};
    } else if (res.out.empty()) {
      o = {ExitCode::WARN, "dcgmi nvlink FAILED to execute."};
    } else {
      DcgmiVerdict v = evaluate_dcgmi_nvlink_errors(res.out, thresholds_);
      o = {v.code, v.msg};
    }
    o.msg = fmt::format("GPU: {}: {}", gpu, o.msg);
    return o;
  }

  CheckOutcome nvlink_status(const CheckRun& r) const {
    CommandResult res = run_tool({dcgmi_, "nvlink", "--host", host_, "-s"}, static_cast<double>(r.timeout_s));
    if (res.exit_code > 0) return {ExitCode::WARN, failed_to_run("dcgmi nvlink -s", res)};
    DcgmiVerdict v = evaluate_dcgmi_nvlink_status(res.out);
    return {v.code, v.msg};
  }

  std::vector<std::string> checks_;
  int64_t gpu_num_ = 8;
  NvlinkThresholds thresholds_;
  std::string host_ = "localhost";
  std::string dcgmi_ = "dcgmi";
};

const bool kCheckDcgmiRegistered = [] {
  register_health_check(
      {{"check-dcgmi", "diag"},
       "Run `dcgmi diag -r LEVEL -j`: a failed DCGM test is CRITICAL, a warning WARNING.",
       true,
       [](OptionBinder& b) -> std::unique_ptr<HealthCheck> { return std::make_unique<CheckDcgmiDiag>(b); }});
  register_health_check(
      {{"check-dcgmi", "nvlink"},
       "NVLink error counters (-c nvlink_errors, per GPU) and link states (-c nvlink_status) "
       "through dcgmi.",
       true,
       [](OptionBinder& b) -> std::unique_ptr<HealthCheck> { return std::make_unique<CheckDcgmiNvlink>(b); }});
  return true;
}();

}  // namespace
}  // namespace gcm::health

// health_checks cuda memtest: runs the CUDA memory test program (tools/cuda_memtest, built when nvcc is found) on
// each selected GPU in parallel, one process per GPU, each under --timeout.
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "attribution/gpu_list.h"
#include "cli/option_binder.h"
#include "health/check.h"
#include "health/tool_run.h"

namespace gcm::health {
namespace {

const bool kCudaMemtestGroupRegistered = register_health_group("cuda", "CUDA checks: memtest.");

class CudaMemtest : public HealthCheck {
 public:
  explicit CudaMemtest(OptionBinder& b) {
    b.option("--size", "size", size_gb_, "GB to allocate and test on each GPU.")->capture_default_str();
    b.option("--memtest-bin", "memtest_bin", bin_,
             "The memory test program (default: cudaMemTest on PATH; `make` builds it when nvcc is found).")
        ->capture_default_str();
    // "-gpu" (one dash, as the reference spells it) is rewritten to --gpu-devices before parsing.
    b.option("--gpu-devices", "gpu_devices", devices_,
             "GPU index to test (repeat for several; also -gpu). Default: the job's GPUs (SLURM_JOB_GPUS, else "
             "CUDA_VISIBLE_DEVICES) for prolog/epilog, none otherwise.");
  }

  int run(CheckRun& r) override {
    return r.run_standard("cuda memtest", "disable_cuda_memtest", [&]() -> CheckOutcome {
      std::vector<unsigned> gpus(devices_.begin(), devices_.end());
      if (gpus.empty() && (r.type == CheckType::Prolog || r.type == CheckType::Epilog))
        for (const char* var : {"SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES"})
          if (const char* v = std::getenv(var); v && *v) {
            gpus = parse_gpu_index_list(v);
            break;
          }
      if (gpus.empty()) return {ExitCode::UNKNOWN, "CUDA memory test failed to execute: no GPU selected."};
      std::string exe = bin_.find('/') == std::string::npos ? find_executable(bin_) : bin_;
      if (exe.empty())
        return {ExitCode::WARN, fmt::format("CUDA memory test failed to execute: {} is not on PATH (build it with "
                                            "nvcc, see tools/cuda_memtest, or give --memtest-bin).",
                                            bin_)};
      // Each test must see every GPU by its index: the job's CUDA_VISIBLE_DEVICES would renumber them. Removed from
      // the tools' environment only: this process' own may be read by other checks running on other threads.
      std::vector<CommandResult> results(gpus.size());
      std::vector<std::thread> threads;
      for (size_t i = 0; i < gpus.size(); ++i)
        threads.emplace_back([&, i] {
          results[i] = run_tool({exe, fmt::format("--device={}", gpus[i]), fmt::format("--alloc_mem_gb={}", size_gb_)},
                                static_cast<double>(r.timeout_s), {"CUDA_VISIBLE_DEVICES"});
        });
      for (auto& t : threads) t.join();
      ExitCode code = ExitCode::UNKNOWN;
      std::string msg = "Running cuda memory test in parallel.";
      for (size_t i = 0; i < gpus.size(); ++i) {
        const CommandResult& res = results[i];
        if (res.exit_code == kToolTimedOut || res.exit_code == kToolNotFound) {
          code = worse(code, ExitCode::WARN);
          msg += fmt::format("\ndeviceID: {} could not be tested: {}", gpus[i], res.out);
        } else if (res.exit_code == 0) {
          code = worse(code, ExitCode::OK);
          msg += fmt::format("\ndeviceID: {} passed", gpus[i]);
        } else {
          code = worse(code, ExitCode::CRITICAL);
          msg += fmt::format("\ndeviceID: {} output: {} error: {}", gpus[i], res.out, res.err);
        }
      }
      return {code, msg};
    });
  }

 private:
  int64_t size_gb_ = 4;
  std::string bin_ = "cudaMemTest";
  std::vector<unsigned> devices_;
};

const bool kCudaMemtestRegistered = register_health_check({
    {"cuda", "memtest"},
    "Allocate and test --size GB on each GPU with the CUDA memory test program, GPUs in parallel.",
    true,
    [](OptionBinder& b) -> std::unique_ptr<HealthCheck> { return std::make_unique<CudaMemtest>(b); },
});

}  // namespace
}  // namespace gcm::health

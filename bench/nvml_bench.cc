// GPU sampling and attribution costs with the fake NVML (8 H100s, every field): CPU time of one sample of all GPUs
// through the per-GPU workers, of turning it into records, and of attributing 8 GPUs per source. The baseline is the
// same NVML calls made directly on the calling thread, one GPU after the other, so the ratio is what the workers
// and timeouts cost.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "attribution/gpu_jobs.h"
#include "gpu/gpu_records.h"
#include "gpu/gpu_sampler.h"
#include "gpu/sample_device.h"

namespace gcm {
namespace {

std::shared_ptr<NvmlLibrary> library() {
  static std::shared_ptr<NvmlLibrary> lib = [] {
    ::setenv("GCM_FAKE_NVML_SCENARIO", GCM_SOURCE_DIR "/tests/fake_nvml/scenarios/h100x8.json", 1);
    return NvmlLibrary::open(GCM_FAKE_NVML, std::chrono::seconds(5));
  }();
  return lib;
}

void BM_BaselineDirectCallsOnOneThread(benchmark::State& state) {
  auto lib = library();
  std::vector<nvml::Device> handles(8);
  for (unsigned i = 0; i < 8; ++i) lib->api().DeviceGetHandleByIndex(i, &handles[i]);
  CallWatch watch;
  for (auto _ : state) {
    for (auto h : handles) {
      GpuSample s;
      sample_device(*lib, h, watch, {false, true}, s);
      benchmark::DoNotOptimize(s);
    }
  }
  state.SetItemsProcessed(state.iterations() * 8);
}
BENCHMARK(BM_BaselineDirectCallsOnOneThread)->MeasureProcessCPUTime()->UseRealTime();

void BM_SampleEightGpusThroughWorkers(benchmark::State& state) {
  GpuSampler sampler(library(), {});
  for (auto _ : state) benchmark::DoNotOptimize(sampler.sample());
  state.SetItemsProcessed(state.iterations() * 8);
}
BENCHMARK(BM_SampleEightGpusThroughWorkers)->MeasureProcessCPUTime()->UseRealTime();

void BM_SampleAndBuildRecords(benchmark::State& state) {
  GpuSampler sampler(library(), {});
  for (auto _ : state) {
    auto results = sampler.sample();
    for (const auto& r : results) benchmark::DoNotOptimize(device_metrics_record(r, "host", "550", std::nullopt));
  }
  state.SetItemsProcessed(state.iterations() * 8);
}
BENCHMARK(BM_SampleAndBuildRecords)->MeasureProcessCPUTime()->UseRealTime();

// Attribution of 8 GPUs, each with 4 processes of one job, from a procfs tree of 32 environments.
struct AttributionFixture {
  std::string root;
  std::vector<DeviceResult> devices;
  AttributionFixture() {
    char tmpl[] = "/tmp/gcm-bench-proc-XXXXXX";
    root = mkdtemp(tmpl);
    devices.resize(8);
    for (unsigned g = 0; g < 8; ++g) {
      devices[g].index = g;
      devices[g].sample.processes.emplace();
      for (unsigned p = 0; p < 4; ++p) {
        unsigned pid = 1000 + g * 10 + p;
        std::filesystem::create_directories(root + "/proc/" + std::to_string(pid));
        std::string env = "PATH=/usr/bin";
        env += '\0';
        for (int k = 0; k < 60; ++k) env += "VAR" + std::to_string(k) + "=some value of a typical length" + '\0';
        env += "SLURM_JOB_ID=" + std::to_string(5000 + g) + '\0' + "SLURM_JOB_GPUS=" + std::to_string(g) + '\0' +
               "GPU_DEVICE_ORDINAL=" + std::to_string(g) + '\0' + "SLURM_JOB_USER=alice" + '\0';
        std::ofstream(root + "/proc/" + std::to_string(pid) + "/environ") << env;
        std::ofstream(root + "/proc/" + std::to_string(pid) + "/cgroup")
            << "0::/system.slice/slurmstepd.scope/job_" << 5000 + g << "/step_0/user/task_0\n";
        listpids += std::to_string(pid) + " " + std::to_string(5000 + g) + " 0 0 0\n";
        devices[g].sample.processes->push_back({pid, {}});
      }
      std::filesystem::create_directories(root + "/map");
      std::ofstream(root + "/map/" + std::to_string(g)) << 5000 + g << "\n";
    }
    // A fake scontrol: what slurmd-local costs beyond scontrol itself (a real one adds an RPC to slurmd).
    std::ofstream(root + "/listpids.txt") << listpids;
    std::ofstream(root + "/scontrol") << "#!/bin/sh\nexec cat " << root << "/listpids.txt\n";
    std::filesystem::permissions(root + "/scontrol", std::filesystem::perms::owner_all);
  }
  std::string listpids = "PID JOBID STEPID LOCALID GLOBALID\n";
  ~AttributionFixture() { std::filesystem::remove_all(root); }
};

void BM_AttributeEightGpus(benchmark::State& state, const char* source) {
  AttributionFixture f;
  AttributionOptions o;
  o.sources = {source};
  o.procfs = f.root + "/proc";
  o.mapping_dir = f.root + "/map";
  o.cgroupfs = f.root + "/nonexistent";
  o.scontrol = f.root + "/scontrol";
  for (auto _ : state) {
    auto m = attribute_gpus(f.devices, o);
    if (m.size() != 8) state.SkipWithError("attribution incomplete");
    benchmark::DoNotOptimize(m);
  }
  state.SetItemsProcessed(state.iterations() * 8);
}
BENCHMARK_CAPTURE(BM_AttributeEightGpus, nvml_processes, "nvml-processes");
BENCHMARK_CAPTURE(BM_AttributeEightGpus, mapping_files, "mapping-files");
BENCHMARK_CAPTURE(BM_AttributeEightGpus, cgroup, "cgroup");
BENCHMARK_CAPTURE(BM_AttributeEightGpus, slurmd_local_with_a_fake_scontrol, "slurmd-local")->UseRealTime();

}  // namespace
}  // namespace gcm

BENCHMARK_MAIN();

// The agent's sampling path run 100 000 times without sleeping: one sample of 8 fake GPUs through the per-GPU
// workers, the window accumulators, and every 30 samples a window closed, judged by the detector and rendered
// into the Prometheus page, as `gcm agent` does. It prints the CPU per sample and the resident set at 1 000,
// 10 000, 50 000 and 100 000 samples: memory that grew with the number of samples would show here (a whole-process
// run at the agent's 10 ms floor would take 17 minutes for the same count).
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include "agent/window.h"
#include "detector/detector.h"
#include "detector/health_records.h"
#include "gpu/gpu_records.h"
#include "gpu/gpu_sampler.h"
#include "sinks/prometheus_store.h"

namespace {

long rss_kib() {
  std::ifstream in("/proc/self/statm");
  long total = 0, resident = 0;
  in >> total >> resident;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

double cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gcm;
  long total = argc > 1 ? std::atol(argv[1]) : 100000;
  ::setenv("GCM_FAKE_NVML_SCENARIO", GCM_SOURCE_DIR "/tests/fake_nvml/scenarios/h100x8.json", 1);
  auto lib = NvmlLibrary::open(GCM_FAKE_NVML, std::chrono::seconds(5));
  GpuSampler sampler(lib, GpuSamplerOptions{});
  std::vector<agent::GpuWindowAccumulator> acc;
  for (unsigned i = 0; i < sampler.device_count(); ++i) acc.emplace_back(i);
  detector::Detector det;
  PrometheusStore store;
  size_t page_bytes = 0;
  double cpu0 = cpu_seconds();
  std::printf("%-10s %12s %14s %10s\n", "samples", "RSS KiB", "CPU us/sample", "page bytes");
  for (long n = 1; n <= total; ++n) {
    for (auto& r : sampler.sample()) acc[r.index].add(r, device_metrics_record(r, "node", "550", r.sample.uuid));
    if (n % 30 == 0) {
      std::vector<Record> records;
      std::vector<detector::GpuWindow> windows;
      for (auto& a : acc) {
        auto c = a.close(n * 1000, 30, "42", "");
        records.push_back(std::move(c.metrics));
        windows.push_back(std::move(c.summary));
      }
      auto verdicts = det.observe(windows);
      detector::append_health_metrics(verdicts, records);
      std::map<const Schema*, std::vector<Record>> by;
      for (auto& r : records) by[r.schema].push_back(std::move(r));
      for (auto& [s, rs] : by) {
        store.begin_round(*s);
        for (auto& r : rs) store.add(r);
        store.end_round(*s);
      }
      page_bytes = store.render().size();
    }
    if (n == 1000 || n == 10000 || n == 50000 || n == total)
      std::printf("%-10ld %12ld %14.1f %10zu\n", n, rss_kib(), (cpu_seconds() - cpu0) / static_cast<double>(n) * 1e6,
                  page_bytes);
  }
  return 0;
}

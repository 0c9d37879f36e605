#include "suite/slurm_node.h"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "core/ascii.h"
#include "core/subprocess.h"

namespace gcm::suite {

namespace {

bool executable(const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0; }

}  // namespace

std::string slurm_node_name() {
  if (const char* n = std::getenv("SLURMD_NODENAME"); n && *n) return n;
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  std::string h = buf;
  return h.substr(0, h.find('.'));
}

std::optional<std::string> locate_scontrol(const std::optional<std::string>& configured) {
  if (configured && !configured->empty()) return configured;
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH"); path && *path) {
    std::stringstream ss(path);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  for (const char* d : {"/usr/bin", "/usr/local/bin", "/opt/slurm/bin", "/usr/sbin", "/usr/local/sbin"})
    dirs.emplace_back(d);
  for (const auto& d : dirs)
    if (executable(d + "/scontrol")) return d + "/scontrol";
  return std::nullopt;
}

std::optional<std::string> locate_slurm_conf(const std::optional<std::string>& configured) {
  if (configured && !configured->empty()) return configured;
  if (const char* c = std::getenv("SLURM_CONF"); c && *c) return std::string(c);
  for (const char* p : {"/etc/slurm/slurm.conf", "/etc/slurm-llnl/slurm.conf", "/usr/local/etc/slurm.conf",
                        "/opt/slurm/etc/slurm.conf"})
    if (::access(p, R_OK) == 0) return std::string(p);
  return std::nullopt;
}

std::optional<std::string> cluster_name_of(const std::string& slurm_conf) {
  std::ifstream in(slurm_conf);
  for (std::string line; std::getline(in, line);) {
    line = std::string(ascii_trim(std::string_view(line).substr(0, line.find('#'))));
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key(ascii_trim(std::string_view(line).substr(0, eq)));
    for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (key == "clustername") {
      std::string v(ascii_trim(std::string_view(line).substr(eq + 1)));
      if (!v.empty()) return v;
    }
  }
  return std::nullopt;
}

std::string drain_reason(const std::string& check, const std::string& message, size_t max_len) {
  std::string msg = message.substr(0, message.find('\n'));
  std::string r = fmt::format("{}{}: {}", kReasonPrefix, check, ascii_trim(msg));
  if (r.size() <= max_len) return r;
  size_t cut = max_len >= 3 ? max_len - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(r[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
  return r.substr(0, cut) + "...";
}

ScontrolRunner make_scontrol_runner(const std::string& scontrol, const std::optional<std::string>& slurm_conf,
                                    double timeout_s) {
  return [=](const std::vector<std::string>& args) {
    CommandSpec spec;
    spec.argv = {scontrol};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    if (slurm_conf) spec.extra_env.push_back("SLURM_CONF=" + *slurm_conf);
    CommandResult r = run_command(spec);
    if (!r.ok())
      throw std::runtime_error(fmt::format(
          "{} {}: {}", command_line(spec.argv),
          r.timed_out ? fmt::format("timed out after {} s", timeout_s) : fmt::format("exit {}", r.exit_code),
          ascii_trim(r.err)));
    return r.out;
  };
}

namespace {

// "2026-01-02T03:04:05" (local time, as slurmctld writes reason times) to Unix seconds.
std::optional<int64_t> parse_local_time(const std::string& text) {
  std::tm tm{};
  std::istringstream in(text);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return std::nullopt;
  tm.tm_isdst = -1;
  std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<int64_t>(t);
}

void finish_record(NodeState& s) {
  std::stringstream flags(s.state);
  for (std::string f; std::getline(flags, f, '+');) {
    if (!f.empty() && f.back() == '*') f.pop_back();  // "DOWN*": not responding
    if (f == "DRAIN" || f == "DRAINED" || f == "DRAINING") s.drain = true;
    if (f == "ALLOCATED" || f == "MIXED" || f == "COMPLETING") s.busy = true;
  }
}

}  // namespace

std::vector<NodeState> parse_node_records(const std::string& out) {
  std::vector<NodeState> nodes;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::string t(ascii_trim(line));
    if (t.rfind("NodeName=", 0) == 0) {
      if (!nodes.empty()) finish_record(nodes.back());
      nodes.emplace_back();
      std::string v = t.substr(9);
      nodes.back().name = v.substr(0, v.find(' '));
      continue;
    }
    if (nodes.empty()) continue;
    NodeState& s = nodes.back();
    if (t.rfind("State=", 0) == 0) {
      std::string v = t.substr(6);
      s.state = v.substr(0, v.find(' '));
    } else if (t.rfind("Partitions=", 0) == 0) {
      std::stringstream parts{std::string(ascii_trim(std::string_view(t).substr(11)))};
      for (std::string p; std::getline(parts, p, ',');)
        if (!p.empty()) s.partitions.push_back(p);
    } else if (t.rfind("Reason=", 0) == 0) {
      std::string v = t.substr(7);
      // "gcm: ecc: 1 error [root@2026-01-02T03:04:05]": the suffix is Slurm's, not part of the reason.
      if (size_t b = v.rfind(" ["); b != std::string::npos && v.back() == ']') {
        if (size_t at = v.find('@', b); at != std::string::npos) {
          s.reason_time = parse_local_time(v.substr(at + 1, v.size() - at - 2));
          v.erase(b);
        }
      }
      s.reason = v;
    }
  }
  if (!nodes.empty()) finish_record(nodes.back());
  for (const auto& n : nodes)
    if (n.state.empty()) throw std::runtime_error(fmt::format("scontrol show node: node {} has no State=", n.name));
  return nodes;
}

NodeState show_node(const ScontrolRunner& scontrol, const std::string& node) {
  std::vector<NodeState> nodes = parse_node_records(scontrol({"show", "node", node}));
  for (auto& n : nodes)
    if (n.name == node) return std::move(n);
  throw std::runtime_error(fmt::format("scontrol show node {}: no such node in the answer", node));
}

std::vector<NodeState> show_nodes(const ScontrolRunner& scontrol) {
  return parse_node_records(scontrol({"show", "node"}));
}

bool needs_confirmation(const std::string& reason) {
  return reason.rfind(fmt::format("{}{}: ", kReasonPrefix, kDetectorCheckName), 0) == 0;
}

Ownership reason_owner(const NodeState& s, const std::vector<std::string>& adopted) {
  if (s.reason.empty()) return Ownership::None;
  if (s.reason.rfind(kReasonPrefix, 0) == 0) return Ownership::Gcm;
  for (const auto& a : adopted)
    if (s.reason == a) return Ownership::Gcm;
  return Ownership::Other;
}

}  // namespace gcm::suite

#include "slurm/sinfo_json.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/ascii.h"
#include "slurm/json_reader.h"
#include "slurm/timestamp.h"

namespace gcm::slurm {

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

// sinfo's TIMESTAMP of a reason: UTC, no offset, as GCM's JSON client writes it; "Unknown" when never set.
std::string reason_time(int64_t unix_seconds) {
  return unix_seconds <= 0 ? "Unknown" : format_naive(unix_seconds, TimeZone());
}

void set_reason(SinfoJsonNode& n, std::string reason, std::string user, int64_t when) {
  n.reason = reason.empty() ? "none" : std::move(reason);
  n.user = user.empty() ? "Unknown" : std::move(user);
  n.timestamp = reason_time(when);
}

// Slurm 23.11+: rows of sinfo_data_t; with -N each holds one node, but a row of several is read node by node.
void read_rows(const nlohmann::json& rows, std::vector<SinfoJsonNode>& out) {
  if (!rows.is_array()) throw ParseError("sinfo --json: \"sinfo\" is not a list");
  for (size_t i = 0; i < rows.size(); ++i) {
    JsonReader r(rows[i], fmt::format("sinfo --json: sinfo[{}]", i));
    SinfoJsonNode n;
    n.partition = r.str({"partition", "name"});
    n.cpus_allocated = r.integer({"cpus", "allocated"});
    n.cpus_idle = r.integer({"cpus", "idle"});
    n.cpus_total = r.integer({"cpus", "total"});
    // GCM's split: the other CPUs are what is neither allocated nor idle.
    n.cpus_other = std::max<int64_t>(n.cpus_total - n.cpus_allocated - n.cpus_idle, 0);
    n.free_mem = r.number({"memory", "free", "minimum"});
    n.memory = r.integer({"memory", "minimum"});
    n.gres = r.str({"gres", "total"});
    n.gres_used = r.str({"gres", "used"});
    int64_t when = r.number({"reason", "time"}).value_or(0);
    set_reason(n, r.str({"reason", "description"}), r.str({"reason", "user"}), when);
    n.active_features = r.str({"features", "active"});
    n.state = sinfo_long_state(r.words({"node", "state"}));
    n.reservation = r.str({"reservation"});
    for (auto& name : r.strings({"nodes", "nodes"})) {
      n.name = std::move(name);
      out.push_back(n);
    }
  }
}

// Slurm 22.05-23.02's sinfo --json, and slurmrestd's /nodes of every version: node records. sinfo -N prints a row per
// partition, and counts every CPU of a node that is down, drained or failed as "other" (the record's idle_cpus counts
// them as idle).
void read_nodes(const nlohmann::json& nodes, std::vector<SinfoJsonNode>& out) {
  if (!nodes.is_array()) throw ParseError("sinfo --json: \"nodes\" is not a list");
  for (size_t i = 0; i < nodes.size(); ++i) {
    JsonReader r(nodes[i], fmt::format("sinfo --json: nodes[{}]", i));
    SinfoJsonNode n;
    n.name = r.str({"name"});
    // 22.05: "state": "idle" and "state_flags": ["DRAIN"]; slurmrestd 23.11+: "state": ["IDLE", "DRAIN"].
    std::vector<std::string> words = r.words({"state"});
    if (r.has("state_flags"))
      for (auto& f : r.strings({"state_flags"})) words.push_back(std::move(f));
    n.state = sinfo_long_state(words);
    bool unusable = false;
    for (const auto& w : words) {
      std::string u = upper(w);
      unusable = unusable || u == "DOWN" || u == "DRAIN" || u == "FAIL";
    }
    n.cpus_total = r.integer({"cpus"});
    n.cpus_allocated = r.integer({"alloc_cpus"});
    // v0.0.38 (22.05) names the idle CPUs idle_cpus, v0.0.40 and later (slurmrestd of 23.11+) alloc_idle_cpus.
    n.cpus_idle = unusable ? 0 : r.integer({r.has("idle_cpus") ? "idle_cpus" : "alloc_idle_cpus"});
    n.cpus_other = std::max<int64_t>(n.cpus_total - n.cpus_allocated - n.cpus_idle, 0);
    n.free_mem = r.number({r.has("free_mem") ? "free_mem" : "free_memory"});
    n.memory = r.integer({"real_memory"});
    n.gres = r.str({"gres"});
    n.gres_used = r.str({"gres_used"});
    set_reason(n, r.str({"reason"}), r.str({"reason_set_by_user"}), r.number({"reason_changed_at"}).value_or(0));
    n.active_features = r.joined({"active_features"});
    if (r.has("reservation")) n.reservation = r.str({"reservation"});
    std::vector<std::string> partitions = r.strings({"partitions"});
    if (partitions.empty()) partitions.emplace_back();  // sinfo -N lists a node in no partition once
    for (auto& p : partitions) {
      n.partition = std::move(p);
      out.push_back(n);
    }
  }
}

}  // namespace

std::vector<SinfoJsonNode> parse_sinfo_json(std::string_view text) {
  nlohmann::json j = parse_slurm_json(text, "sinfo --json output");
  std::vector<SinfoJsonNode> out;
  if (j.contains("sinfo"))
    read_rows(j["sinfo"], out);
  else if (j.contains("nodes"))
    read_nodes(j["nodes"], out);
  else
    throw ParseError("sinfo --json output has neither \"sinfo\" (Slurm 23.11+) nor \"nodes\" (22.05-23.02)");
  return out;
}

std::string sinfo_long_state(const std::vector<std::string>& words) {
  if (words.empty()) throw ParseError("node state: an empty list of state words");
  const std::string base = ascii_lower(words.front());
  std::vector<std::string> flags;
  for (size_t i = 1; i < words.size(); ++i) flags.push_back(upper(words[i]));
  auto has = [&](std::string_view f) { return std::find(flags.begin(), flags.end(), f) != flags.end(); };
  const bool completing = has("COMPLETING"), drain = has("DRAIN"), fail = has("FAIL"), maint = has("MAINTENANCE"),
             reboot_requested = has("REBOOT_REQUESTED"), reboot_issued = has("REBOOT_ISSUED"),
             no_respond = has("NOT_RESPONDING");
  const bool allocated = base == "allocated", mixed = base == "mixed", down = base == "down";
  // One symbol, by Slurm's priority.
  const char* suffix = maint                  ? "$"
                       : reboot_issued        ? "^"
                       : reboot_requested     ? "@"
                       : has("POWERING_UP")   ? "#"
                       : has("POWERING_DOWN") ? "%"
                       : has("POWERED_DOWN")  ? "~"
                       : has("POWER_DOWN")    ? "!"
                       : no_respond           ? "*"
                                              : "";
  const std::string s = suffix;
  if (has("INVALID_REG")) return "inval";
  if (maint && !(drain || allocated || down || mixed)) return no_respond ? "maint*" : "maint";
  if ((reboot_requested || reboot_issued) && !(allocated || mixed))
    return reboot_issued ? "reboot^" : no_respond ? "reboot*" : "reboot";
  if (drain) return (completing || allocated || mixed ? "draining" : "drained") + s;
  if (fail) return (completing || allocated ? "failing" : "fail") + s;
  if (down) return "down" + s;
  if (allocated) return s.empty() && completing ? "allocated+" : "allocated" + s;
  if (completing) return "completing" + s;
  if (base == "idle" && s.empty()) {
    if (has("RESERVED")) return "reserved";
    if (has("BLOCKED")) return "blocked";
    if (has("PLANNED")) return "planned";
  }
  // A mixed node the backfill scheduler plans a job for: sinfo of 23.11 and later prints "mixed-" (recorded on 24.11
  // and 25.11); the other base states have no mark for it.
  if (mixed && s.empty() && has("PLANNED")) return "mixed-";
  return base + s;  // idle, mixed, future, unknown, error
}

}  // namespace gcm::slurm

#include "slurm/rest_render.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "slurm/json_reader.h"
#include "slurm/sinfo_json.h"
#include "slurm/timestamp.h"

namespace gcm::slurm {

namespace {

// squeue's naive local time ("2026-12-02T05:23:42"); "N/A" for an unset one.
std::string naive_local(std::optional<int64_t> unix_seconds, const TimeZone& zone) {
  if (!unix_seconds || *unix_seconds <= 0) return "N/A";
  return format_naive(*unix_seconds, zone);
}

// squeue prints "(null)" for an unset string field.
std::string or_null(std::string s) { return s.empty() ? "(null)" : s; }

// A value on one output line: the CLI's own output breaks a line at an embedded newline; here it becomes a blank.
std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

std::string job_state(const JsonReader& r) {
  std::vector<std::string> words = r.words({"job_state"});
  if (words.empty()) r.fail({"job_state"}, "is empty");
  if (std::find(words.begin(), words.end(), "COMPLETING") != words.end()) return "COMPLETING";
  return words.front();
}

bool squeue_shows(const std::string& state) {
  return state == "PENDING" || state == "RUNNING" || state == "SUSPENDED" || state == "COMPLETING";
}

}  // namespace

std::string slurm_duration(int64_t seconds, bool always_hours) {
  if (seconds < 0) seconds = 0;
  int64_t days = seconds / 86400, hours = seconds / 3600 % 24, minutes = seconds / 60 % 60, secs = seconds % 60;
  if (days) return fmt::format("{}-{:02}:{:02}:{:02}", days, hours, minutes, secs);
  if (always_hours) return fmt::format("{:02}:{:02}:{:02}", hours, minutes, secs);
  if (hours) return fmt::format("{}:{:02}:{:02}", hours, minutes, secs);
  return fmt::format("{}:{:02}", minutes, secs);
}

std::string slurm_time_limit(std::optional<int64_t> minutes) {
  if (!minutes) return "UNLIMITED";
  return slurm_duration(*minutes * 60);
}

std::string render_squeue_jobs(std::string_view jobs_json, int64_t now, const TimeZone& zone) {
  nlohmann::json doc = parse_slurm_json(jobs_json, "slurmrestd jobs");
  if (!doc.contains("jobs") || !doc["jobs"].is_array()) throw ParseError("slurmrestd jobs: no \"jobs\" list");
  std::string out;
  const nlohmann::json& jobs = doc["jobs"];
  for (size_t i = 0; i < jobs.size(); ++i) {
    JsonReader r(jobs[i], fmt::format("slurmrestd jobs: jobs[{}]", i));
    const std::string state = job_state(r);
    if (!squeue_shows(state)) continue;
    const int64_t job_id = r.integer({"job_id"});
    const int64_t array_job = r.number({"array_job_id"}).value_or(0);
    std::string array_id = std::to_string(job_id);
    if (array_job != 0) {
      auto task = r.has("array_task_id") ? r.number({"array_task_id"}) : std::nullopt;
      array_id = task ? fmt::format("{}_{}", array_job, *task)
                      : fmt::format("{}_[{}]", array_job, r.str({"array_task_string"}));
    }
    const std::optional<int64_t> limit = r.number({"time_limit"});
    const int64_t submit = r.number({"submit_time"}).value_or(0), eligible = r.number({"eligible_time"}).value_or(0);
    const int64_t start = r.number({"start_time"}).value_or(0);
    const bool pending = state == "PENDING";
    const int64_t used = pending || start <= 0 ? 0 : now - start;
    const std::string left = pending ? slurm_time_limit(limit)
                             : limit ? slurm_duration(*limit * 60 - used)
                                     : "UNLIMITED";
    // squeue's PENDINGTIME: from submission to the start, or to now while pending.
    const int64_t pending_time = std::max<int64_t>((pending ? now : start) - submit, 0);
    std::optional<int64_t> memory = r.number({"memory_per_node"});
    if (!memory) memory = r.number({"memory_per_cpu"});
    std::string tres_alloc = r.str({"tres_alloc_str"});
    if (tres_alloc.empty()) tres_alloc = r.str({"tres_req_str"});
    std::string tres_per_node = r.str({"tres_per_node"});
    std::string gres_detail;
    if (r.has("gres_detail"))
      for (const auto& g : r.strings({"gres_detail"})) gres_detail += (gres_detail.empty() ? "" : ";") + g;
    const std::string fields[] = {
        tres_per_node.empty() ? "N/A" : tres_per_node,
        std::to_string(r.number({"minimum_cpus_per_node"}).value_or(0)),
        array_id,
        std::to_string(job_id),
        one_line(r.str({"name"})),
        slurm_time_limit(limit),
        memory ? fmt::format("{}M", *memory) : "0",
        or_null(one_line(r.str({"command"}))),
        fmt::format("{:.14f}", static_cast<double>(r.number({"priority"}).value_or(0)) / 4294967296.0),
        state,
        r.str({"user_name"}),
        std::to_string(r.number({"cpus"}).value_or(0)),
        std::to_string(r.number({"node_count"}).value_or(0)),
        left,
        slurm_duration(used),
        r.str({"nodes"}),
        or_null(r.str({"dependency"})),
        r.str({"excluded_nodes"}),
        naive_local(start, zone),
        naive_local(submit, zone),
        naive_local(eligible, zone),
        naive_local(r.number({"accrue_time"}), zone),
        std::to_string(pending_time),
        or_null(one_line(r.str({"comment"}))),
        r.str({"partition"}),
        r.str({"account"}),
        r.str({"qos"}),
        r.str({"state_reason"}),
        tres_alloc,
        or_null(r.str({"resv_name"})),
        r.boolean({"requeue"}) ? "1" : "0",
        or_null(r.str({"features"})),
        std::to_string(r.number({"restart_cnt"}).value_or(0)),
        or_null(r.has("scheduled_nodes") ? r.str({"scheduled_nodes"}) : ""),
        naive_local(r.number({"last_sched_evaluation"}), zone),
        gres_detail,
    };
    for (const auto& f : fields) {
      out += f;
      out += "|#";
    }
    out.push_back('\n');
  }
  return out;
}

std::string render_sinfo_nodes(std::string_view nodes_json) {
  std::string out;
  for (const SinfoJsonNode& n : parse_sinfo_json(nodes_json)) {
    out += fmt::format("{}|{}|{}|{}|{}/{}/{}/{}|{}|{}\n", n.name, n.gres.empty() ? "(null)" : n.gres,
                       n.gres_used.empty() ? "(null)" : n.gres_used, n.cpus_total, n.cpus_allocated, n.cpus_idle,
                       n.cpus_other, n.cpus_total, n.state, n.partition);
  }
  return out;
}

std::string render_scontrol_partitions(std::string_view partitions_json) {
  nlohmann::json doc = parse_slurm_json(partitions_json, "slurmrestd partitions");
  if (!doc.contains("partitions") || !doc["partitions"].is_array())
    throw ParseError("slurmrestd partitions: no \"partitions\" list");
  std::string out;
  const nlohmann::json& parts = doc["partitions"];
  for (size_t i = 0; i < parts.size(); ++i) {
    JsonReader r(parts[i], fmt::format("slurmrestd partitions: partitions[{}]", i));
    const bool flat = r.has("maximum_nodes_per_job");  // v0.0.36-v0.0.39
    // -1 (the flat records) or unset/infinite (the nested ones): unlimited.
    const int64_t max_nodes =
        (flat ? r.number({"maximum_nodes_per_job"}) : r.number({"maximums", "nodes"})).value_or(-1);
    std::string qos = flat ? r.str({"qos"}) : r.str({"qos", "assigned"});
    std::string weights = flat ? r.str({"billing_weights"}) : r.str({"tres", "billing_weights"});
    out +=
        fmt::format("PartitionName={} QoS={} MaxNodes={} Nodes={} PriorityJobFactor={} PriorityTier={}",
                    r.str({"name"}), qos.empty() ? "N/A" : qos, max_nodes < 0 ? "UNLIMITED" : std::to_string(max_nodes),
                    flat ? r.str({"nodes"}) : r.str({"nodes", "configured"}),
                    r.integer(flat ? std::initializer_list<const char*>{"priority_job_factor"}
                                   : std::initializer_list<const char*>{"priority", "job_factor"}),
                    r.integer(flat ? std::initializer_list<const char*>{"priority_tier"}
                                   : std::initializer_list<const char*>{"priority", "tier"}));
    if (flat) {
      // scontrol's words for the preemption modes slurmrestd lists ("disabled" is OFF).
      std::string mode;
      for (const auto& w : r.words({"preemption_mode"})) {
        std::string word = w == "disabled" ? "OFF" : w;
        for (auto& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        mode += (mode.empty() ? "" : ",") + word;
      }
      out += " PreemptMode=" + (mode.empty() ? std::string("OFF") : mode);
    }
    out += fmt::format(" TotalCPUs={} TotalNodes={} TRES={}",
                       r.integer(flat ? std::initializer_list<const char*>{"total_cpus"}
                                      : std::initializer_list<const char*>{"cpus", "total"}),
                       r.integer(flat ? std::initializer_list<const char*>{"total_nodes"}
                                      : std::initializer_list<const char*>{"nodes", "total"}),
                       flat ? r.str({"tres"}) : r.str({"tres", "configured"}));
    if (!weights.empty()) out += " TRESBillingWeights=" + weights;
    out.push_back('\n');
  }
  return out;
}

}  // namespace gcm::slurm

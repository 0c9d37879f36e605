#include "slurm/sdiag.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/ascii.h"
#include "core/schema.h"
#include "core/json.h"
#include "core/json_limits.h"
#include "slurm/coerce.h"
#include "slurm/delimited.h"
#include "slurm/parse_error.h"

namespace gcm::slurm {

namespace {

// One statistic: its field, where `sdiag --all --json` has it (statistics.<key>, or statistics.<key>.<sub>), and
// its help text.
struct Stat {
  const char* field;
  const char* key;
  const char* sub;  // nullptr: statistics.<key> itself
  FieldType type;
  const char* help;
};

constexpr FieldType I = FieldType::Int;

const Stat kStats[] = {
    {"server_thread_count", "server_thread_count", nullptr, I, "slurmctld threads serving RPCs"},
    {"agent_queue_size", "agent_queue_size", nullptr, I, "RPCs queued for the agent threads"},
    {"agent_count", "agent_count", nullptr, I, "agent threads"},
    {"agent_thread_count", "agent_thread_count", nullptr, I, "threads the agents use"},
    {"dbd_agent_queue_size", "dbd_agent_queue_size", nullptr, I, "messages queued for slurmdbd"},
    {"schedule_cycle_max", "schedule_cycle_max", nullptr, I, "longest main scheduler cycle (microseconds)"},
    {"schedule_cycle_mean", "schedule_cycle_mean", nullptr, I, "mean main scheduler cycle (microseconds)"},
    {"schedule_cycle_sum", "schedule_cycle_sum", nullptr, I, "sum of the main scheduler cycles (microseconds)"},
    {"schedule_cycle_total", "schedule_cycle_total", nullptr, I, "main scheduler cycles"},
    {"schedule_cycle_per_minute", "schedule_cycle_per_minute", nullptr, I, "main scheduler cycles per minute"},
    {"schedule_cycle_last", "schedule_cycle_last", nullptr, I, "last main scheduler cycle (microseconds)"},
    {"schedule_cycle_mean_depth", "schedule_cycle_mean_depth", nullptr, I, "mean jobs examined per cycle"},
    {"schedule_cycle_depth", "schedule_cycle_depth", nullptr, I, "jobs examined by all cycles"},
    {"schedule_queue_length", "schedule_queue_length", nullptr, I, "pending jobs queue length at the last cycle"},
    {"schedule_exit_end_job_queue", "schedule_exit", "end_job_queue", I, "cycles that reached the end of the queue"},
    {"schedule_exit_default_queue_depth", "schedule_exit", "default_queue_depth", I,
     "cycles stopped by default_queue_depth"},
    {"schedule_exit_max_job_start", "schedule_exit", "max_job_start", I, "cycles stopped by sched_max_job_start"},
    {"schedule_exit_max_rpc_cnt", "schedule_exit", "max_rpc_cnt", I, "cycles stopped by max_rpc_cnt"},
    {"schedule_exit_max_sched_time", "schedule_exit", "max_sched_time", I, "cycles stopped by max_sched_time"},
    {"schedule_exit_licenses", "schedule_exit", "licenses", I, "cycles blocked on licenses"},
    {"sdiag_jobs_submitted", "jobs_submitted", nullptr, I, "jobs submitted since the last reset"},
    {"sdiag_jobs_started", "jobs_started", nullptr, I, "jobs started since the last reset"},
    {"sdiag_jobs_completed", "jobs_completed", nullptr, I, "jobs completed since the last reset"},
    {"sdiag_jobs_canceled", "jobs_canceled", nullptr, I, "jobs cancelled since the last reset"},
    {"sdiag_jobs_failed", "jobs_failed", nullptr, I, "jobs failed since the last reset"},
    {"sdiag_jobs_pending", "jobs_pending", nullptr, I, "jobs pending at job_states_ts"},
    {"sdiag_jobs_running", "jobs_running", nullptr, I, "jobs running at job_states_ts"},
    {"bf_backfilled_jobs", "bf_backfilled_jobs", nullptr, I, "jobs started by backfill since slurmctld started"},
    {"bf_last_backfilled_jobs", "bf_last_backfilled_jobs", nullptr, I, "jobs backfilled since the last reset"},
    {"bf_backfilled_het_jobs", "bf_backfilled_het_jobs", nullptr, I, "heterogeneous job components backfilled"},
    {"bf_cycle_counter", "bf_cycle_counter", nullptr, I, "backfill cycles"},
    {"bf_cycle_mean", "bf_cycle_mean", nullptr, I, "mean backfill cycle (microseconds)"},
    {"bf_cycle_sum", "bf_cycle_sum", nullptr, I, "sum of the backfill cycles (microseconds)"},
    {"bf_cycle_max", "bf_cycle_max", nullptr, I, "longest backfill cycle (microseconds)"},
    {"bf_cycle_last", "bf_cycle_last", nullptr, I, "last backfill cycle (microseconds)"},
    {"bf_depth_mean", "bf_depth_mean", nullptr, I, "mean jobs processed per backfill cycle"},
    {"bf_depth_mean_try", "bf_depth_mean_try", nullptr, I, "mean jobs tried per backfill cycle"},
    {"bf_depth_sum", "bf_depth_sum", nullptr, I, "jobs processed by all backfill cycles"},
    {"bf_depth_try_sum", "bf_depth_try_sum", nullptr, I, "jobs tried by all backfill cycles"},
    {"bf_last_depth", "bf_last_depth", nullptr, I, "jobs processed by the last backfill cycle"},
    {"bf_last_depth_try", "bf_last_depth_try", nullptr, I, "jobs tried by the last backfill cycle"},
    {"bf_queue_len", "bf_queue_len", nullptr, I, "backfill queue length at the last cycle"},
    {"bf_queue_len_mean", "bf_queue_len_mean", nullptr, I, "mean backfill queue length"},
    {"bf_queue_len_sum", "bf_queue_len_sum", nullptr, I, "sum of the backfill queue lengths"},
    {"bf_table_size", "bf_table_size", nullptr, I, "backfill table size at the last cycle"},
    {"bf_table_size_sum", "bf_table_size_sum", nullptr, I, "sum of the backfill table sizes"},
    {"bf_table_size_mean", "bf_table_size_mean", nullptr, I, "mean backfill table size"},
    {"bf_when_last_cycle", "bf_when_last_cycle", nullptr, I, "unix time of the last backfill cycle"},
    {"bf_active", "bf_active", nullptr, FieldType::Bool, "a backfill cycle was running when sdiag answered"},
    {"bf_exit_end_job_queue", "bf_exit", "end_job_queue", I, "backfill cycles that reached the end of the queue"},
    {"bf_exit_max_job_start", "bf_exit", "bf_max_job_start", I, "backfill cycles stopped by bf_max_job_start"},
    {"bf_exit_max_job_test", "bf_exit", "bf_max_job_test", I, "backfill cycles stopped by bf_max_job_test"},
    {"bf_exit_max_time", "bf_exit", "bf_max_time", I, "backfill cycles stopped by bf_max_time"},
    {"bf_exit_node_space_size", "bf_exit", "bf_node_space_size", I, "backfill cycles stopped by bf_node_space_size"},
    {"bf_exit_state_changed", "bf_exit", "state_changed", I, "backfill cycles stopped by a system state change"},
    {"req_time", "req_time", nullptr, I, "unix time slurmctld answered"},
    {"req_time_start", "req_time_start", nullptr, I, "unix time the statistics were last reset"},
    {"gettimeofday_latency", "gettimeofday_latency", nullptr, I, "microseconds for 1000 gettimeofday() calls"},
    {"job_states_ts", "job_states_ts", nullptr, I, "unix time of the jobs_pending/jobs_running counts"},
    {"parts_packed", "parts_packed", nullptr, I, "partition data packed (JSON only)"},
    {"rpcs_by_message_type_json", "rpcs_by_message_type", nullptr, FieldType::String,
     "RPC statistics per message type, as a JSON list"},
    {"rpcs_by_user_json", "rpcs_by_user", nullptr, FieldType::String, "RPC statistics per user, as a JSON list"},
};
constexpr size_t kStatCount = sizeof kStats / sizeof kStats[0];
constexpr size_t kRequired = 5;  // the controller-load values every sdiag version prints

size_t index_of(std::string_view field) {
  int i = kSdiag->index_of(field);
  if (i < 0) throw std::out_of_range(fmt::format("Sdiag has no field '{}'", field));
  return static_cast<size_t>(i);
}

}  // namespace

const std::vector<FieldSpec>& sdiag_statistic_fields() {
  static const std::vector<FieldSpec> fields = [] {
    std::vector<FieldSpec> out;
    for (const Stat& st : kStats) {
      FieldRole role = st.type == FieldType::String ? FieldRole::Attribute : FieldRole::Gauge;
      out.push_back({st.field, st.type, role, "", std::string("sdiag: ") + st.help});
    }
    return out;
  }();
  return fields;
}

constinit const LazySchema kSdiag{[] {
  Schema s;
  s.name = "Sdiag";
  s.description = "slurmctld's scheduler, backfill, job and RPC statistics (`sdiag`), one record per round.";
  s.metric_prefix = "sdiag";
  s.data_type = DataType::Log;
  // GCM routes Sdiag by DataIdentifier.SDIAG to a Meta-internal graph_api table; that sink is not part of this
  // project (design.md §5) and the others route JOB and NODE only, so Sdiag is a GENERIC LOG record here.
  s.identifier = DataIdentifier::Generic;
  s.fields.push_back({"cluster", FieldType::String, FieldRole::Identity, "", "cluster name"});
  for (const FieldSpec& f : sdiag_statistic_fields()) s.fields.push_back(f);
  return s;
}};

// The record is registered by slurm_monitor, which writes it (collectors/sdiag_record.cc).

Sdiag::Sdiag() : record(kSdiag) {}

std::optional<int64_t> Sdiag::get(std::string_view field) const {
  const Value& v = record[index_of(field)];
  if (v.is_null()) return std::nullopt;
  return v.as_int();
}

// --- text ---------------------------------------------------------------------------------------------------------

namespace {

enum class Section { Top, Main, MainExit, Backfill, BackfillExit, RpcByType, RpcByUser, Other };

struct Label {
  Section section;
  std::string_view label;  // with its ':'
  const char* field;
};

// Labels as Slurm prints them; the same label means different things in different sections.
const Label kLabels[] = {
    {Section::Top, "Server thread count:", "server_thread_count"},
    {Section::Top, "Agent queue size:", "agent_queue_size"},
    {Section::Top, "Agent count:", "agent_count"},
    {Section::Top, "Agent thread count:", "agent_thread_count"},
    {Section::Top, "DBD Agent queue size:", "dbd_agent_queue_size"},
    {Section::Top, "Jobs submitted:", "sdiag_jobs_submitted"},
    {Section::Top, "Jobs started:", "sdiag_jobs_started"},
    {Section::Top, "Jobs completed:", "sdiag_jobs_completed"},
    {Section::Top, "Jobs canceled:", "sdiag_jobs_canceled"},
    {Section::Top, "Jobs failed:", "sdiag_jobs_failed"},
    {Section::Top, "Jobs pending:", "sdiag_jobs_pending"},
    {Section::Top, "Jobs running:", "sdiag_jobs_running"},
    {Section::Top, "Job states ts:", "job_states_ts"},
    {Section::Main, "Last cycle:", "schedule_cycle_last"},
    {Section::Main, "Max cycle:", "schedule_cycle_max"},
    {Section::Main, "Total cycles:", "schedule_cycle_total"},
    {Section::Main, "Mean cycle:", "schedule_cycle_mean"},
    {Section::Main, "Mean depth cycle:", "schedule_cycle_mean_depth"},
    {Section::Main, "Cycles per minute:", "schedule_cycle_per_minute"},
    {Section::Main, "Last queue length:", "schedule_queue_length"},
    {Section::MainExit, "End of job queue:", "schedule_exit_end_job_queue"},
    {Section::MainExit, "Hit default_queue_depth:", "schedule_exit_default_queue_depth"},
    {Section::MainExit, "Hit sched_max_job_start:", "schedule_exit_max_job_start"},
    {Section::MainExit, "Blocked on licenses:", "schedule_exit_licenses"},
    {Section::MainExit, "Hit max_rpc_cnt:", "schedule_exit_max_rpc_cnt"},
    {Section::MainExit, "Timeout (max_sched_time):", "schedule_exit_max_sched_time"},
    {Section::Backfill, "Total backfilled jobs (since last slurm start):", "bf_backfilled_jobs"},
    {Section::Backfill, "Total backfilled jobs (since last stats cycle start):", "bf_last_backfilled_jobs"},
    {Section::Backfill, "Total backfilled heterogeneous job components:", "bf_backfilled_het_jobs"},
    {Section::Backfill, "Total cycles:", "bf_cycle_counter"},
    {Section::Backfill, "Last cycle when:", "bf_when_last_cycle"},
    {Section::Backfill, "Last cycle:", "bf_cycle_last"},
    {Section::Backfill, "Max cycle:", "bf_cycle_max"},
    {Section::Backfill, "Mean cycle:", "bf_cycle_mean"},
    {Section::Backfill, "Last depth cycle:", "bf_last_depth"},
    {Section::Backfill, "Last depth cycle (try sched):", "bf_last_depth_try"},
    {Section::Backfill, "Depth Mean:", "bf_depth_mean"},
    {Section::Backfill, "Depth Mean (try depth):", "bf_depth_mean_try"},
    {Section::Backfill, "Last queue length:", "bf_queue_len"},
    {Section::Backfill, "Queue length mean:", "bf_queue_len_mean"},
    {Section::Backfill, "Last table size:", "bf_table_size"},
    {Section::Backfill, "Mean table size:", "bf_table_size_mean"},
    {Section::BackfillExit, "End of job queue:", "bf_exit_end_job_queue"},
    {Section::BackfillExit, "Hit bf_max_job_start:", "bf_exit_max_job_start"},
    {Section::BackfillExit, "Hit bf_max_job_test:", "bf_exit_max_job_test"},
    {Section::BackfillExit, "System state changed:", "bf_exit_state_changed"},
    {Section::BackfillExit, "Hit table size limit (bf_node_space_size):", "bf_exit_node_space_size"},
    {Section::BackfillExit, "Timeout (bf_max_time):", "bf_exit_max_time"},
};

// "Tue Dec 01 16:08:52 2026 (1796141332)" -> 1796141332; "N/A" -> null.
Value unix_in_parentheses(std::string_view what, std::string_view v) {
  if (v == "N/A" || v.empty()) return Value();
  size_t open = v.rfind('('), close = v.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    throw ParseError(describe_bad_value(what, v, "expected a date followed by (unix time)"));
  auto n = python_int(v.substr(open + 1, close - open - 1));
  if (!n) throw ParseError(describe_bad_value(what, v, "expected a date followed by (unix time)"));
  return Value(*n);
}

// "\tREQUEST_NODE_INFO  ( 2007) count:1  ave_time:196  total_time:196" (by type) or "\troot  (  0) count:13 ..."
// (by user) -> an object keyed as `sdiag --json` names them.
Value rpc_entry(std::string_view line, bool by_user) {
  std::string_view l = ascii_trim(line);
  size_t open = l.find('('), close = l.find(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open || open == 0)
    throw ParseError(describe_bad_value("RPC statistics line", l, "expected NAME (ID) count:N ..."));
  auto id = python_int(l.substr(open + 1, close - open - 1));
  if (!id) throw ParseError(describe_bad_value("RPC statistics line", l, "the (ID) is not an integer"));
  Object o;
  o.push_back({by_user ? "user" : "message_type", Value(ascii_trim(l.substr(0, open)))});
  o.push_back({by_user ? "user_id" : "type_id", Value(*id)});
  std::vector<std::string_view> tokens;
  split_fields(l.substr(close + 1), "", tokens);
  for (std::string_view t : tokens) {
    size_t colon = t.find(':');
    auto n = colon == std::string_view::npos ? std::nullopt : python_int(t.substr(colon + 1));
    if (!n) throw ParseError(describe_bad_value("RPC statistics item", t, "expected NAME:INTEGER"));
    std::string_view key = t.substr(0, colon);
    o.push_back({key == "ave_time" ? std::string("average_time") : std::string(key), Value(*n)});
  }
  return Value(std::move(o));
}

}  // namespace

Sdiag parse_sdiag_text(std::string_view text) {
  Sdiag out;
  Record& r = out.record;
  Section section = Section::Top;
  List by_type, by_user;
  size_t number = 0;
  for_each_line(text, [&](std::string_view raw) {
    ++number;
    std::string_view l = ascii_trim(raw);  // values are indented by tabs under their section
    if (l.empty() || l.starts_with("****")) return;
    try {
      if (l.starts_with("sdiag output at")) {
        r[index_of("req_time")] = unix_in_parentheses("sdiag output at", l.substr(15));
        return;
      }
      if (l.starts_with("Data since")) {
        r[index_of("req_time_start")] = unix_in_parentheses("Data since", ascii_trim(l.substr(10)));
        return;
      }
      if (l.starts_with("Main schedule statistics")) return void(section = Section::Main);
      if (l.starts_with("Main scheduler exit")) return void(section = Section::MainExit);
      if (l.starts_with("Backfilling stats")) {
        section = Section::Backfill;
        // Slurm adds "(WARNING: data obtained in the middle of backfilling execution.)" while a cycle runs.
        r[index_of("bf_active")] = l.find("WARNING") != std::string_view::npos;
        return;
      }
      if (l.starts_with("Backfill exit")) return void(section = Section::BackfillExit);
      if (l.starts_with("Latency for 1000 calls to gettimeofday():")) {
        section = Section::Other;
        std::vector<std::string_view> words;
        split_fields(l.substr(41), "", words);
        auto n = words.empty() ? std::nullopt : python_int(words[0]);
        if (!n) throw ParseError(describe_bad_value("gettimeofday latency", l, "expected N microseconds"));
        r[index_of("gettimeofday_latency")] = *n;
        return;
      }
      if (l.starts_with("Remote Procedure Call statistics by message type")) return void(section = Section::RpcByType);
      if (l.starts_with("Remote Procedure Call statistics by user")) return void(section = Section::RpcByUser);
      if (l.starts_with("Pending RPC statistics")) return void(section = Section::Other);
      if (section == Section::RpcByType || section == Section::RpcByUser) {
        (section == Section::RpcByType ? by_type : by_user).push_back(rpc_entry(l, section == Section::RpcByUser));
        return;
      }
      // The longest label that matches wins: "Last depth cycle (try sched):" over "Last depth cycle:".
      const Label* best = nullptr;
      for (const Label& lab : kLabels)
        if (lab.section == section && l.starts_with(lab.label) && (!best || lab.label.size() > best->label.size()))
          best = &lab;
      if (!best) return;  // a line this version adds, or one the record has no field for
      std::string_view v = ascii_trim(l.substr(best->label.size()));
      size_t f = index_of(best->field);
      if (std::string_view(best->field) == "job_states_ts" || std::string_view(best->field) == "bf_when_last_cycle") {
        r[f] = unix_in_parentheses(best->label, v);
        return;
      }
      auto n = python_int(v);
      if (!n) throw ParseError(describe_bad_value(best->label, v, "expected an integer"));
      r[f] = *n;
    } catch (const ParseError& e) {
      throw ParseError(fmt::format("line {}: {}", number, e.what()));
    }
  });
  for (size_t i = 0; i < kRequired; ++i)
    if (r[kSdiagFirstStatistic + i].is_null())
      throw ParseError(fmt::format("sdiag output has no '{}' line", kLabels[i].label));
  // The text shows both tables (empty ones too) on every version; as JSON strings like the JSON form's.
  r[index_of("rpcs_by_message_type_json")] = to_json(Value(std::move(by_type)), JsonStyle::Python);
  r[index_of("rpcs_by_user_json")] = to_json(Value(std::move(by_user)), JsonStyle::Python);
  return out;
}

// --- JSON ---------------------------------------------------------------------------------------------------------

namespace {

using Json = nlohmann::ordered_json;  // keeps the RPC tables' key order, as Python's json.loads does

// A JSON value as a Value (objects keep their order). Depth is bounded by the caller's json_depth_error check.
Value to_value(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return Value();
    case Json::value_t::boolean:
      return Value(j.get<bool>());
    case Json::value_t::number_integer:
      return Value(j.get<int64_t>());
    case Json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
      return Value(static_cast<int64_t>(u));
    }
    case Json::value_t::number_float:
      return Value(j.get<double>());
    case Json::value_t::string:
      return Value(j.get<std::string>());
    case Json::value_t::array: {
      List l;
      for (const auto& e : j) l.push_back(to_value(e));
      return Value(std::move(l));
    }
    case Json::value_t::object: {
      Object o;
      for (const auto& [k, v] : j.items()) o.push_back({k, to_value(v)});
      return Value(std::move(o));
    }
    default:
      return Value();
  }
}

// A Slurm JSON integer: a number, or {set, infinite, number} (null unless set and finite). Null or absent: null.
Value json_int(const Json& v, const std::string& where) {
  const Json* n = &v;
  if (v.is_object()) {
    if (!v.value("set", true) || v.value("infinite", false)) return Value();
    if (!v.contains("number")) return Value();
    n = &v["number"];
  }
  if (n->is_null()) return Value();
  if (n->is_number_integer()) return to_value(*n);
  if (n->is_number_float()) {
    double d = n->get<double>();
    if (d == static_cast<double>(static_cast<int64_t>(d))) return Value(static_cast<int64_t>(d));
  }
  throw ParseError(fmt::format("sdiag --json: {} is {}, expected an integer", where, n->dump()));
}

}  // namespace

Sdiag parse_sdiag_json(std::string_view text) {
  if (auto deep = json_depth_error(text)) throw ParseError(fmt::format("sdiag --json output: {}", *deep));
  Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw ParseError("sdiag --json output is not valid JSON");
  if (!j.is_object() || !j.contains("statistics") || !j["statistics"].is_object())
    throw ParseError("sdiag --json output is not a JSON object with \"statistics\"");
  const Json& st = j["statistics"];
  Sdiag out;
  Record& r = out.record;
  for (size_t i = 0; i < kStatCount; ++i) {
    const Stat& s = kStats[i];
    Value& dest = r[kSdiagFirstStatistic + i];
    std::string where = s.sub ? fmt::format("statistics.{}.{}", s.key, s.sub) : fmt::format("statistics.{}", s.key);
    const Json* v = nullptr;
    if (st.contains(s.key) && !st[s.key].is_null()) {
      v = &st[s.key];
      if (s.sub) {
        if (!v->is_object()) throw ParseError(fmt::format("sdiag --json: statistics.{} is not an object", s.key));
        v = v->contains(s.sub) ? &(*v)[s.sub] : nullptr;
      }
    }
    if (s.type == FieldType::String) {  // the RPC tables
      if (v && !v->is_array()) throw ParseError(fmt::format("sdiag --json: {} is not a list", where));
      dest = to_json(v ? to_value(*v) : Value(List{}), JsonStyle::Python);
      continue;
    }
    if (!v) {
      if (i < kRequired) throw ParseError(fmt::format("sdiag --json: {} is missing", where));
      continue;
    }
    if (s.type == FieldType::Bool) {
      if (v->is_boolean())
        dest = v->get<bool>();
      else if (v->is_number_integer())
        dest = v->get<int64_t>() != 0;
      else
        throw ParseError(fmt::format("sdiag --json: {} is {}, expected a boolean", where, v->dump()));
      continue;
    }
    dest = json_int(*v, where);
    if (i < kRequired && dest.is_null()) throw ParseError(fmt::format("sdiag --json: {} is not set", where));
  }
  return out;
}

}  // namespace gcm::slurm

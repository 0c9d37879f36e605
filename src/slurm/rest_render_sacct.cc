#include "slurm/rest_render_sacct.h"

#include <algorithm>
#include <initializer_list>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "slurm/json_reader.h"
#include "slurm/rest_render.h"
#include "slurm/timestamp.h"

namespace gcm::slurm {

// Named, inside the anonymous namespace: this file is compiled in a unity batch with the other renderers, whose
// helpers (Column, tres_field, ...) would otherwise meet these.
namespace {
namespace sacct_rows {

using nlohmann::json;
using Path = std::initializer_list<const char*>;

// Slurm's INFINITE and NO_VAL as slurmrestd v0.0.38 writes them: plain 32-bit numbers.
constexpr int64_t kInfinite = 0xFFFFFFFF;
constexpr int64_t kNoVal = 0xFFFFFFFE;

// One row being written: the job, and the step when the row is one of its steps.
struct Row {
  const JsonReader& job;
  const JsonReader* step;  // nullptr on the job's own row
  const TimeZone& zone;
  const JsonReader& own() const { return step ? *step : job; }
};

std::string number_text(std::optional<int64_t> n) { return n ? std::to_string(*n) : ""; }

// A count in a TRES list ([{type, name, id, count}]) of a type without a name (cpu, mem, node); nullopt when absent.
std::optional<int64_t> tres_count(const JsonReader& r, Path path, std::string_view type) {
  const json* v = r.find(path);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_array()) r.fail(path, "is not a TRES list");
  for (const json& t : *v)
    // v0.0.38 gives an unnamed TRES no name (or null), v0.0.40 and later "".
    if (t.is_object() && t.value("type", "") == type &&
        (!t.contains("name") || t["name"].is_null() ||
         (t["name"].is_string() && t["name"].get<std::string>().empty())) &&
        t.contains("count") && t["count"].is_number_integer())
      return t["count"].get<int64_t>();
  return std::nullopt;
}

// A TRES list as sacct --noconvert prints it: "billing=18,cpu=2,gres/gpu=4,mem=1000M,node=2", sorted by name, memory
// (MB) with its "M", TRES without a count (energy on a job that measured none: no count in v0.0.38, -2 from v0.0.40
// on) left out.
std::string tres_text(const JsonReader& r, Path path) {
  const json* v = r.find(path);
  if (!v || v->is_null()) return "";
  if (!v->is_array()) r.fail(path, "is not a TRES list");
  std::vector<std::string> items;
  for (size_t i = 0; i < v->size(); ++i) {
    JsonReader t((*v)[i], fmt::format("{}: {}[{}]", r.where(), fmt::join(path, "."), i));
    std::optional<int64_t> count = t.number({"count"});
    if (!count || *count < 0) continue;
    std::string type = t.str({"type"});
    std::string name = t.has("name") ? t.str({"name"}) : "";
    std::string key = name.empty() ? type : type + "/" + name;
    items.push_back(fmt::format("{}={}{}", key, *count, type == "mem" ? "M" : ""));
  }
  std::sort(items.begin(), items.end());
  return fmt::format("{}", fmt::join(items, ","));
}

// sacct's times: naive local, "Unknown" for 0 (unset).
std::string local_time(const Row& row, const JsonReader& r, Path path) {
  std::optional<int64_t> t = r.number(path);
  if (!t || *t <= 0) return "Unknown";
  return format_naive(*t, row.zone);
}

// Elapsed, Suspended, Reserved, CPUTime: [D-]HH:MM:SS.
std::string duration_text(int64_t seconds) { return slurm_duration(seconds, /*always_hours=*/true); }

// A CPU time ({seconds, microseconds}) in microseconds.
int64_t cpu_microseconds(const JsonReader& r, Path path) {
  const json& v = r.at(path);
  if (!v.is_object()) r.fail(path, "is not {seconds, microseconds}");
  JsonReader t(v, fmt::format("{}: {}", r.where(), fmt::join(path, ".")));
  return t.number({"seconds"}).value_or(0) * 1000000 + t.number({"microseconds"}).value_or(0);
}

// TotalCPU, UserCPU, SystemCPU as sacct's _elapsed_time prints them: milliseconds shown only below an hour
// ("00:05.500"), "00:MM:SS" when there are none.
std::string cpu_time_text(int64_t usecs) {
  int64_t secs = usecs / 1000000, msecs = usecs % 1000000 / 1000;
  int64_t days = secs / 86400, hours = secs / 3600 % 24, minutes = secs / 60 % 60, s = secs % 60;
  if (days) return fmt::format("{}-{:02}:{:02}:{:02}", days, hours, minutes, s);
  if (hours) return fmt::format("{:02}:{:02}:{:02}", hours, minutes, s);
  if (msecs) return fmt::format("{:02}:{:02}.{:03}", minutes, s, msecs);
  return fmt::format("00:{:02}:{:02}", minutes, s);
}

// A step's own CPU time; on the job's row the sum over the steps listed, as sacct adds up the steps it receives
// (slurmdbd's job record holds none while the job runs: a job whose step 0 used 1.5 ms shows 00:00.001 while that
// step is listed, 00:00:00 once sacct -s running leaves the completed step out), or the job's own without steps.
std::string cpu_time(const Row& row, const char* which) {
  if (row.step) return cpu_time_text(cpu_microseconds(*row.step, {"time", which}));
  const json& steps = row.job.at({"steps"});
  if (!steps.is_array() || steps.empty()) return cpu_time_text(cpu_microseconds(row.job, {"time", which}));
  int64_t sum = 0;
  for (size_t i = 0; i < steps.size(); ++i)
    sum += cpu_microseconds(JsonReader(steps[i], fmt::format("{}: steps[{}]", row.job.where(), i)), {"time", which});
  return cpu_time_text(sum);
}

// "return_code:signal" ({status, return_code[, signal {signal_id}]}).
std::string exit_code(const JsonReader& r, Path path) {
  const json& v = r.at(path);
  if (!v.is_object()) r.fail(path, "is not an exit code");
  JsonReader e(v, fmt::format("{}: {}", r.where(), fmt::join(path, ".")));
  int64_t code = e.number({"return_code"}).value_or(0);
  // The signal is signal.signal_id in v0.0.38, signal.id from v0.0.40 on.
  int64_t signal = 0;
  if (e.find({"signal", "signal_id"}))
    signal = e.number({"signal", "signal_id"}).value_or(0);
  else if (e.find({"signal", "id"}))
    signal = e.number({"signal", "id"}).value_or(0);
  return fmt::format("{}:{}", code, signal);
}

// sacct's JobID: "123", an array task "6_0", a heterogeneous component "40+1".
std::string job_id_text(const JsonReader& job) {
  int64_t id = job.integer({"job_id"});
  if (job.find({"array", "job_id"})) {
    std::optional<int64_t> array = job.number({"array", "job_id"});
    std::optional<int64_t> task = job.find({"array", "task_id"}) ? job.number({"array", "task_id"}) : std::nullopt;
    if (array && *array != 0 && task) return fmt::format("{}_{}", *array, *task);
  }
  if (job.find({"het", "job_id"}) && job.find({"het", "job_offset"})) {
    std::optional<int64_t> het = job.number({"het", "job_id"});
    std::optional<int64_t> offset = job.number({"het", "job_offset"});
    if (het && *het != 0 && offset) return fmt::format("{}+{}", *het, *offset);
  }
  return std::to_string(id);
}

// sacct's State of a running job or step: the base state, a word in v0.0.38 and the first of a list ("RUNNING" and
// its flags) from v0.0.40 on.
std::string base_state(const JsonReader& r, Path path) {
  std::vector<std::string> words = r.words(path);
  if (words.empty()) r.fail(path, "names no state");
  return words.front();
}

// A step's own part of its id: "batch", "extern", "interactive" or its number.
std::string step_part(const JsonReader& step) {
  const json& v = step.at({"step", "id"});
  // v0.0.38 gives the step's own part ("batch", 0), v0.0.40 and later the whole id ("20.batch", "6_0.0").
  if (v.is_string()) {
    const std::string id = v.get<std::string>();
    return id.substr(id.rfind('.') + 1);
  }
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  step.fail({"step", "id"}, "is neither a name nor a number");
}

std::string job_id_of(const Row& row) {
  std::string id = job_id_text(row.job);
  return row.step ? id + "." + step_part(*row.step) : id;
}
std::string job_id_raw_of(const Row& row) {
  std::string id = std::to_string(row.job.integer({"job_id"}));
  return row.step ? id + "." + step_part(*row.step) : id;
}

// The CPUs of the row: the job's or the step's allocated cpu TRES.
std::optional<int64_t> alloc_cpus(const Row& row) {
  return row.step ? tres_count(*row.step, {"tres", "allocated"}, "cpu")
                  : tres_count(row.job, {"tres", "allocated"}, "cpu");
}

int64_t elapsed(const Row& row) { return row.own().number({"time", "elapsed"}).value_or(0); }

// Start minus eligible, for the job's row (Reserved, ResvCPU).
std::optional<int64_t> reserved(const Row& row) {
  std::optional<int64_t> start = row.job.number({"time", "start"}), eligible = row.job.number({"time", "eligible"});
  if (!start || !eligible || *start <= 0 || *eligible <= 0 || *start < *eligible) return std::nullopt;
  return *start - *eligible;
}

std::string reserved_text(const Row& r) { return reserved(r) ? duration_text(*reserved(r)) : std::string(); }
std::string reserved_cpu_text(const Row& r) {
  auto t = reserved(r);
  return t ? duration_text(*t * r.job.number({"required", "CPUs"}).value_or(0)) : std::string();
}
std::string reserved_cpu_raw(const Row& r) {
  auto t = reserved(r);
  return t ? std::to_string(*t * r.job.number({"required", "CPUs"}).value_or(0)) : std::string();
}

// Timelimit in minutes as mins2time_str prints it; TimelimitRaw the minutes.
std::string time_limit(const Row& row, bool raw) {
  std::optional<int64_t> minutes = row.job.number({"time", "limit"});
  if (!minutes || *minutes == kInfinite) return "UNLIMITED";
  if (*minutes == kNoVal) return "Partition_Limit";
  return raw ? std::to_string(*minutes) : duration_text(*minutes * 60);
}

// A step's requested CPU frequency (min or max): "Unknown" for NO_VAL (null in the answer).
std::string cpu_frequency(const Row& row, const char* which) {
  const JsonReader& s = *row.step;
  std::optional<int64_t> khz =
      s.find({"CPU", "requested_frequency", which}) ? s.number({"CPU", "requested_frequency", which}) : std::nullopt;
  return khz && *khz != kNoVal ? std::to_string(*khz) : "Unknown";
}

// A step's requested governor: slurmrestd decodes the governor bits of NO_VAL as every governor, which sacct prints
// "Unknown"; none is 0.
std::string cpu_governor(const Row& row) {
  const JsonReader& s = *row.step;
  if (!s.find({"CPU", "governor"})) return "Unknown";
  std::vector<std::string> g = s.words({"CPU", "governor"});
  if (g.empty()) return "0";
  static const char* const kEvery[] = {"Conservative", "Performance", "PowerSave", "OnDemand", "UserSpace"};
  if (std::all_of(std::begin(kEvery), std::end(kEvery),
                  [&](const char* name) { return std::find(g.begin(), g.end(), name) != g.end(); }))
    return "Unknown";
  return fmt::format("{}", fmt::join(g, ","));
}

// A string that only the job's row has, absent (older or newer layouts) as empty.
std::string job_str(const Row& row, Path path) { return row.job.find(path) ? row.job.str(path) : ""; }

// The reservation's name: v0.0.38 writes 0 (a number) when the job has none.
std::string reservation_name(const Row& row) {
  const json* v = row.job.find({"reservation", "name"});
  return v && v->is_string() ? v->get<std::string>() : "";
}

// The per-step usage lists (TRESUsageIn*, TRESUsageOut*): v0.0.38 names those read "requested" and those written
// "consumed". slurmdbd stores them when a step ends, so a running step has none and sacct prints them empty.
std::string usage(const Row& row, const char* in_or_out, const char* stat) {
  if (!row.step) return "";
  return tres_text(*row.step, {"tres", in_or_out, stat});
}

using Field = std::string (*)(const Row&);
struct Column {
  std::string_view name;
  Field job;   // the job's row
  Field step;  // a step's row
  // The Slurm releases whose sacct prints the column (major * 100 + minor): from `since` up to before `until`.
  int since = 0;
  int until = 10000;
  // A key the job records of API v0.0.38 do not have: the column is written only when the answer's jobs carry it
  // (any other API version), so that v0.0.38's rows leave it out and the collector makes it null.
  const char* newer_key = nullptr;
  const char* newer_subkey = nullptr;
  bool printed_by(int release) const { return since <= release && release < until; }
};

// The first release whose slurmrestd serves an API newer than v0.0.38 (23.02: v0.0.39), for rest_sacct_columns.
constexpr int kNewerKeysSince = 2302;

// The job's association id (sacct prints it on the steps' rows too), from API v0.0.39 on.
std::string assoc_id(const Row& r) { return number_text(r.job.find({"association", "id"}) ?
                                                            r.job.number({"association", "id"}) : std::nullopt); }

// The job's submit line. sacct prints an embedded newline as it is, and sacct_running joins the broken record with a
// literal \n; the same two characters here give the same record.
std::string submit_line(const Row& r) {
  std::string line = job_str(r, {"submit_line"});
  for (size_t at = 0; (at = line.find('\n', at)) != std::string::npos; at += 2) line.replace(at, 1, "\\n");
  return line;
}

// sacct of Slurm 24.11 calls Reserved, ResvCPU and ResvCPURAW Planned, PlannedCPU and PlannedCPURAW (both recorded on
// the testbed: 22.05 prints the old names, 24.11 and 25.11 the new).
constexpr int kPlannedSince = 2411;

std::string none(const Row&) { return ""; }

// `sacct -o all` in sacct's order, less the columns v0.0.38 has no key for (rest_render_sacct.h). For a step sacct
// prints the job's Account and Cluster, and the step's start as its Submit and Eligible.
const Column kColumns[] = {
    {"Account", [](const Row& r) { return r.job.str({"account"}); },
     [](const Row& r) { return r.job.str({"account"}); }},
    {"AdminComment",
     [](const Row& r) {
       return job_str(r, {"comment", "administrator"});
     },
     none},
    {"AllocCPUS", [](const Row& r) { return number_text(alloc_cpus(r)); },
     [](const Row& r) { return number_text(alloc_cpus(r)); }},
    {"AllocNodes",
     [](const Row& r) {
       return number_text(tres_count(r.job, {"tres", "allocated"}, "node"));
     },
     [](const Row& r) {
       return number_text(r.step->number({"nodes", "count"}));
     }},
    {"AllocTRES",
     [](const Row& r) {
       return tres_text(r.job, {"tres", "allocated"});
     },
     [](const Row& r) {
       return tres_text(*r.step, {"tres", "allocated"});
     }},
    {"AssocID", assoc_id, assoc_id, 0, 10000, "association", "id"},
    {"AveCPU", none, none},
    {"AveCPUFreq", none,
     [](const Row& r) {
       return number_text(r.step->number({"statistics", "CPU", "actual_frequency"}));
     }},
    {"AveDiskRead", none, none},
    {"AveDiskWrite", none, none},
    {"AvePages", none, none},
    {"AveRSS", none, none},
    {"AveVMSize", none, none},
    {"BlockID", none, none},
    {"Cluster", [](const Row& r) { return r.job.str({"cluster"}); },
     [](const Row& r) { return r.job.str({"cluster"}); }},
    {"Comment",
     [](const Row& r) {
       return job_str(r, {"comment", "job"});
     },
     none},
    {"Constraints", [](const Row& r) { return job_str(r, {"constraints"}); }, none},
    {"ConsumedEnergy", none,
     [](const Row& r) {
       return number_text(r.step->number({"statistics", "energy", "consumed"}));
     }},
    {"ConsumedEnergyRaw", none,
     [](const Row& r) {
       return number_text(r.step->number({"statistics", "energy", "consumed"}));
     }},
    {"Container", [](const Row& r) { return job_str(r, {"container"}); }, none},
    {"CPUTime", [](const Row& r) { return duration_text(elapsed(r) * alloc_cpus(r).value_or(0)); },
     [](const Row& r) { return duration_text(elapsed(r) * alloc_cpus(r).value_or(0)); }},
    {"CPUTimeRAW", [](const Row& r) { return std::to_string(elapsed(r) * alloc_cpus(r).value_or(0)); },
     [](const Row& r) { return std::to_string(elapsed(r) * alloc_cpus(r).value_or(0)); }},
    {"DerivedExitCode", [](const Row& r) { return exit_code(r.job, {"derived_exit_code"}); }, none},
    {"Elapsed", [](const Row& r) { return duration_text(elapsed(r)); },
     [](const Row& r) { return duration_text(elapsed(r)); }},
    {"ElapsedRaw", [](const Row& r) { return std::to_string(elapsed(r)); },
     [](const Row& r) { return std::to_string(elapsed(r)); }},
    {"Eligible",
     [](const Row& r) {
       return local_time(r, r.job, {"time", "eligible"});
     },
     [](const Row& r) {
       return local_time(r, *r.step, {"time", "start"});
     }},
    {"End",
     [](const Row& r) {
       return local_time(r, r.job, {"time", "end"});
     },
     [](const Row& r) {
       return local_time(r, *r.step, {"time", "end"});
     }},
    {"ExitCode", [](const Row& r) { return exit_code(r.job, {"exit_code"}); },
     [](const Row& r) { return exit_code(*r.step, {"exit_code"}); }},
    {"Flags",
     [](const Row& r) {
       // slurmdb_job_flags_str's scheduler word, then ",StartReceived" for SLURMDB_JOB_FLAG_START_R. v0.0.38 has no
       // name for that flag (22.05's sacct spells it ",StartRecieved"), so it is written from v0.0.40 on only.
       static constexpr std::pair<std::string_view, std::string_view> kSched[] = {
           {"NOT_SET", "SchedNotSet"},
           {"STARTED_ON_SUBMIT", "SchedSubmit"},
           {"STARTED_ON_SCHEDULE", "SchedMain"},
           {"STARTED_ON_BACKFILL", "SchedBackfill"},
       };
       if (!r.job.find({"flags"})) return std::string();
       std::vector<std::string> flags = r.job.words({"flags"});
       std::string out;
       for (const auto& [rest, cli] : kSched)
         if (std::find(flags.begin(), flags.end(), rest) != flags.end()) {
           out = cli;
           break;
         }
       if (std::find(flags.begin(), flags.end(), "START_RECEIVED") != flags.end())
         out += out.empty() ? "StartReceived" : ",StartReceived";
       return out;
     },
     none},
    {"Group", [](const Row& r) { return r.job.str({"group"}); }, none},
    {"JobID", job_id_of, job_id_of},
    {"JobIDRaw", job_id_raw_of, job_id_raw_of},
    {"JobName", [](const Row& r) { return r.job.str({"name"}); },
     [](const Row& r) {
       return r.step->str({"step", "name"});
     }},
    {"Layout", none,
     [](const Row& r) {
       return r.step->str({"task", "distribution"});
     }},
    {"MaxDiskRead", none, none},
    {"MaxDiskWrite", none, none},
    {"MaxPages", none, none},
    {"MaxRSS", none, none},
    {"MaxVMSize", none, none},
    {"McsLabel",
     [](const Row& r) {
       return job_str(r, {"mcs", "label"});
     },
     none},
    {"MinCPU", none, none},
    {"NCPUS", [](const Row& r) { return number_text(alloc_cpus(r)); },
     [](const Row& r) { return number_text(alloc_cpus(r)); }},
    {"NNodes", [](const Row& r) { return number_text(r.job.number({"allocation_nodes"})); },
     [](const Row& r) {
       return number_text(r.step->number({"nodes", "count"}));
     }},
    {"NodeList", [](const Row& r) { return r.job.str({"nodes"}); },
     [](const Row& r) {
       return r.step->str({"nodes", "range"});
     }},
    {"NTasks", none,
     [](const Row& r) {
       return number_text(r.step->number({"tasks", "count"}));
     }},
    {"Partition", [](const Row& r) { return r.job.str({"partition"}); }, none},
    {"Planned", reserved_text, none, kPlannedSince},
    {"PlannedCPU", reserved_cpu_text, none, kPlannedSince},
    {"PlannedCPURAW", reserved_cpu_raw, none, kPlannedSince},
    {"Priority", [](const Row& r) { return number_text(r.job.number({"priority"})); }, none},
    {"QOS", [](const Row& r) { return r.job.str({"qos"}); }, none},
    {"Reason",
     [](const Row& r) {
       return r.job.str({"state", "reason"});
     },
     none},
    {"ReqCPUFreq", [](const Row&) { return std::string("Unknown"); },
     [](const Row& r) { return cpu_frequency(r, "max"); }},
    {"ReqCPUFreqGov", [](const Row&) { return std::string("Unknown"); }, cpu_governor},
    {"ReqCPUFreqMax", [](const Row&) { return std::string("Unknown"); },
     [](const Row& r) { return cpu_frequency(r, "max"); }},
    {"ReqCPUFreqMin", [](const Row&) { return std::string("Unknown"); },
     [](const Row& r) { return cpu_frequency(r, "min"); }},
    {"ReqCPUS",
     [](const Row& r) {
       return number_text(r.job.number({"required", "CPUs"}));
     },
     [](const Row& r) { return number_text(alloc_cpus(r)); }},
    // Slurm 21.08 and later print the requested memory in total (the mem of ReqTRES), without the n/c suffix.
    {"ReqMem",
     [](const Row& r) {
       std::optional<int64_t> mb = tres_count(r.job, {"tres", "requested"}, "mem");
       return mb ? fmt::format("{}M", *mb) : std::string();
     },
     none},
    {"ReqNodes",
     [](const Row& r) {
       return number_text(tres_count(r.job, {"tres", "requested"}, "node"));
     },
     [](const Row& r) {
       return number_text(r.step->number({"nodes", "count"}));
     }},
    {"ReqTRES",
     [](const Row& r) {
       return tres_text(r.job, {"tres", "requested"});
     },
     none},
    {"Reservation", reservation_name, none},
    {"ReservationId",
     [](const Row& r) {
       std::optional<int64_t> id =
           r.job.find({"reservation", "id"}) ? r.job.number({"reservation", "id"}) : std::nullopt;
       return id && *id != 0 ? std::to_string(*id) : std::string();
     },
     none},
    {"Reserved", reserved_text, none, 0, kPlannedSince},
    {"ResvCPU", reserved_cpu_text, none, 0, kPlannedSince},
    {"ResvCPURAW", reserved_cpu_raw, none, 0, kPlannedSince},
    {"Start",
     [](const Row& r) {
       return local_time(r, r.job, {"time", "start"});
     },
     [](const Row& r) {
       return local_time(r, *r.step, {"time", "start"});
     }},
    {"State",
     [](const Row& r) {
       return base_state(r.job, {"state", "current"});
     },
     [](const Row& r) { return base_state(*r.step, {"state"}); }},
    {"Submit",
     [](const Row& r) {
       return local_time(r, r.job, {"time", "submission"});
     },
     [](const Row& r) {
       return local_time(r, *r.step, {"time", "start"});
     }},
    {"SubmitLine", submit_line, none, 0, 10000, "submit_line"},
    {"Suspended",
     [](const Row& r) {
       return duration_text(r.own().number({"time", "suspended"}).value_or(0));
     },
     [](const Row& r) {
       return duration_text(r.own().number({"time", "suspended"}).value_or(0));
     }},
    {"SystemComment",
     [](const Row& r) {
       return job_str(r, {"comment", "system"});
     },
     none},
    {"SystemCPU", [](const Row& r) { return cpu_time(r, "system"); },
     [](const Row& r) { return cpu_time(r, "system"); }},
    {"Timelimit", [](const Row& r) { return time_limit(r, false); }, none},
    {"TimelimitRaw", [](const Row& r) { return time_limit(r, true); }, none},
    {"TotalCPU", [](const Row& r) { return cpu_time(r, "total"); }, [](const Row& r) { return cpu_time(r, "total"); }},
    {"TRESUsageInAve", none, [](const Row& r) { return usage(r, "requested", "average"); }},
    {"TRESUsageInMax", none, [](const Row& r) { return usage(r, "requested", "max"); }},
    {"TRESUsageInMin", none, [](const Row& r) { return usage(r, "requested", "min"); }},
    {"TRESUsageInTot", none, [](const Row& r) { return usage(r, "requested", "total"); }},
    {"TRESUsageOutAve", none, [](const Row& r) { return usage(r, "consumed", "average"); }},
    {"TRESUsageOutMax", none, [](const Row& r) { return usage(r, "consumed", "max"); }},
    {"TRESUsageOutMin", none, [](const Row& r) { return usage(r, "consumed", "min"); }},
    {"TRESUsageOutTot", none, [](const Row& r) { return usage(r, "consumed", "total"); }},
    {"User", [](const Row& r) { return r.job.str({"user"}); }, none},
    {"UserCPU", [](const Row& r) { return cpu_time(r, "user"); }, [](const Row& r) { return cpu_time(r, "user"); }},
    {"WCKey",
     [](const Row& r) {
       return job_str(r, {"wckey", "wckey"});
     },
     none},
    {"WorkDir", [](const Row& r) { return r.job.str({"working_directory"}); }, none},
};

// A value on its row: sacct's own output breaks at an embedded newline (sacct_running repairs that); here a newline,
// and the delimiter itself, become a blank, so that no value can shift the columns after it.
void append_value(std::string& out, std::string value, std::string_view delimiter) {
  std::replace(value.begin(), value.end(), '\n', ' ');
  for (size_t at = 0; (at = value.find(delimiter, at)) != std::string::npos;) value.replace(at, delimiter.size(), " ");
  out += value;
}

// The columns of an answer: those of its release's sacct, less a newer key's that its first job does not carry
// (every job of one answer has the same keys; an answer without jobs is taken for a newer API's).
std::vector<bool> answer_columns(int release, const nlohmann::json& jobs) {
  std::vector<bool> out;
  for (const Column& c : kColumns) {
    bool printed = c.printed_by(release);
    if (printed && c.newer_key && !jobs.empty() && jobs[0].is_object()) {
      auto it = jobs[0].find(c.newer_key);
      printed = it != jobs[0].end() && (!c.newer_subkey || (it->is_object() && it->contains(c.newer_subkey)));
    }
    out.push_back(printed);
  }
  return out;
}

void append_row(std::string& out, const Row& row, std::string_view delimiter, const std::vector<bool>& printed) {
  bool first = true;
  size_t i = 0;
  for (const Column& c : kColumns) {
    if (!printed[i++]) continue;
    if (!first) out += delimiter;
    first = false;
    append_value(out, (row.step ? c.step : c.job)(row), delimiter);
  }
  out.push_back('\n');
}

}  // namespace sacct_rows
}  // namespace

std::vector<std::string_view> rest_sacct_columns(std::pair<int, int> release) {
  std::vector<std::string_view> v;
  const int r = release.first * 100 + release.second;
  for (const sacct_rows::Column& c : sacct_rows::kColumns)
    if (c.printed_by(r) && (!c.newer_key || r >= sacct_rows::kNewerKeysSince)) v.push_back(c.name);
  return v;
}

std::string render_sacct_running(std::string_view jobs_json, std::string_view delimiter, const TimeZone& zone) {
  using nlohmann::json;
  using sacct_rows::Column;
  using sacct_rows::kColumns;
  using sacct_rows::Row;
  if (delimiter.empty()) throw ParseError("slurmrestd jobs: the delimiter is empty");
  json doc = parse_slurm_json(jobs_json, "slurmrestd jobs (slurmdb)");
  if (!doc.is_object() || !doc.contains("jobs") || !doc["jobs"].is_array())
    throw ParseError("slurmrestd jobs (slurmdb): no \"jobs\" list");
  // The columns are those of the sacct of the Slurm that answered; an answer that does not say is taken for 22.05's.
  const auto [major, minor] = answer_slurm_release(doc).value_or(std::make_pair(22, 5));
  const int release = major * 100 + minor;
  if (!doc["jobs"].is_array()) throw ParseError("slurmrestd jobs (slurmdb): no \"jobs\" list");
  const std::vector<bool> printed = sacct_rows::answer_columns(release, doc["jobs"]);
  std::string out;
  bool first = true;
  size_t column = 0;
  for (const Column& c : kColumns) {
    if (!printed[column++]) continue;
    if (!first) out += delimiter;
    first = false;
    out += c.name;
  }
  out.push_back('\n');
  const json& jobs = doc["jobs"];
  for (size_t i = 0; i < jobs.size(); ++i) {
    JsonReader probe(jobs[i], fmt::format("slurmrestd jobs (slurmdb): jobs[{}]", i));
    if (!jobs[i].is_object()) throw ParseError(probe.where() + " is not an object");
    // Errors name the job by its id once it is known: "jobs[3] (job 59): time.start is missing".
    std::string where = probe.where();
    if (probe.has("job_id")) where += fmt::format(" (job {})", jobs[i]["job_id"].dump());
    JsonReader job(jobs[i], where);
    sacct_rows::append_row(out, Row{job, nullptr, zone}, delimiter, printed);
    const json& steps = job.at({"steps"});
    if (!steps.is_array()) job.fail({"steps"}, "is not a list");
    for (size_t s = 0; s < steps.size(); ++s) {
      JsonReader step(steps[s], fmt::format("{}: steps[{}]", where, s));
      sacct_rows::append_row(out, Row{job, &step, zone}, delimiter, printed);
    }
  }
  return out;
}

}  // namespace gcm::slurm

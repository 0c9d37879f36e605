#include "attribution/slurmctld_jobs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "attribution/slurmd_local.h"
#include "core/json_limits.h"
#include "core/private_file.h"
#include "core/subprocess.h"
#include "slurm/coerce.h"
#include "slurm/gres.h"
#include "slurm/hostlist.h"
#include "slurm/scontrol.h"

namespace gcm {
namespace {

std::optional<std::string> str(std::optional<std::string_view> v) {
  if (!v || v->empty() || slurm::is_null_like(*v)) return std::nullopt;
  return std::string(*v);
}

std::optional<int64_t> num(std::optional<std::string_view> v) {
  if (!v) return std::nullopt;
  return slurm::python_int(*v);
}

bool host_in(std::string_view list, std::string_view host) {
  try {
    return slurm::hostlist_contains(list, host);
  } catch (const std::exception&) {
    return false;  // a malformed list names no host
  }
}

JobInfo job_of_block(const slurm::ScontrolRecord& r) {
  JobInfo j;
  j.job_id = num(r.get("JobId")).value_or(-1);
  j.job_name = str(r.get("JobName"));
  if (auto u = r.get("UserId")) j.job_user = std::string(u->substr(0, u->find('(')));
  j.job_account = str(r.get("Account"));
  j.job_partition = str(r.get("Partition"));
  j.job_qos = str(r.get("QOS"));
  j.job_num_nodes = num(r.get("NumNodes"));
  j.array_job_id = num(r.get("ArrayJobId"));
  j.array_task_id = num(r.get("ArrayTaskId"));  // "28-59%100" names many tasks: null
  return j;
}

nlohmann::json to_cache(const std::map<unsigned, std::vector<JobInfo>>& m) {
  nlohmann::json out = nlohmann::json::object();
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  for (const auto& [gpu, jobs] : m) {
    auto& list = out[std::to_string(gpu)] = nlohmann::json::array();
    for (const auto& j : jobs)
      list.push_back({{"job_id", j.job_id},
                      {"job_name", opt(j.job_name)},
                      {"user", opt(j.job_user)},
                      {"account", opt(j.job_account)},
                      {"partition", opt(j.job_partition)},
                      {"qos", opt(j.job_qos)},
                      {"num_nodes", opt(j.job_num_nodes)},
                      {"array_job_id", opt(j.array_job_id)},
                      {"array_task_id", opt(j.array_task_id)}});
  }
  return out;
}

std::map<unsigned, std::vector<JobInfo>> from_cache(const nlohmann::json& in) {
  std::map<unsigned, std::vector<JobInfo>> m;
  auto s = [](const nlohmann::json& v) { return v.is_string() ? std::optional(v.get<std::string>()) : std::nullopt; };
  auto n = [](const nlohmann::json& v) { return v.is_number() ? std::optional(v.get<int64_t>()) : std::nullopt; };
  for (const auto& [gpu, jobs] : in.items())
    for (const auto& j : jobs) {
      JobInfo ji;
      ji.job_id = j.at("job_id").get<int64_t>();
      ji.job_name = s(j["job_name"]);
      ji.job_user = s(j["user"]);
      ji.job_account = s(j["account"]);
      ji.job_partition = s(j["partition"]);
      ji.job_qos = s(j["qos"]);
      ji.job_num_nodes = n(j["num_nodes"]);
      ji.array_job_id = n(j["array_job_id"]);
      ji.array_task_id = n(j["array_task_id"]);
      m[static_cast<unsigned>(std::stoul(gpu))].push_back(std::move(ji));
    }
  return m;
}

// A cache another local user could have planted or changed is not used (GCM trusted /tmp/slurmprocessor_cache.json
// whoever owned it: a planted file attributed every GPU to the planter's job and user); scontrol is asked instead.
std::optional<std::map<unsigned, std::vector<JobInfo>>> read_fresh_cache(const SlurmctldOptions& o) {
  if (o.cache_file.empty() || o.cache_duration.count() <= 0) return std::nullopt;
  struct stat st {};
  if (::stat(o.cache_file.c_str(), &st) != 0) return std::nullopt;
  if (::time(nullptr) - st.st_mtime > o.cache_duration.count()) return std::nullopt;
  auto text = read_private_file(o.cache_file);
  if (!text) return std::nullopt;
  try {
    return from_cache(parse_json_limited_or_throw(*text));
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged cache is only a miss
  }
}

// Written to a fresh temporary file and renamed, so a reader never sees half a cache and a planted symlink is not
// followed; the directory is private (0700: shelper's 0600 directory had no search permission).
void write_cache(const SlurmctldOptions& o, const std::map<unsigned, std::vector<JobInfo>>& m) {
  if (o.cache_file.empty() || o.cache_duration.count() <= 0) return;
  write_private_file(o.cache_file, to_cache(m).dump());
}

std::string run(const SlurmctldOptions& o, std::vector<std::string> argv) {
  CommandSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = o.timeout;
  CommandResult r = run_command(spec);
  if (!r.ok()) throw std::runtime_error(describe_failure(spec, r));
  return r.out;
}

}  // namespace

std::map<unsigned, std::vector<JobInfo>> gpus_from_job_blocks(std::string_view text, std::string_view host) {
  std::map<unsigned, std::vector<JobInfo>> out;
  for (const slurm::ScontrolRecord& r : slurm::parse_scontrol_records(text)) {
    auto nodelist = r.get("NodeList");
    if (!nodelist || !host_in(*nodelist, host)) continue;
    JobInfo job = job_of_block(r);
    // Detail lines pair Nodes= with the GRES= that follows it.
    std::set<int> gpus;
    bool this_node = false;
    for (const auto& kv : r.fields) {
      if (kv.key == "Nodes") this_node = host_in(kv.value, host);
      if (kv.key == "GRES" && this_node) {
        try {
          for (int i : slurm::gres_indices(slurm::parse_gres_list(kv.value))) gpus.insert(i);
        } catch (const std::exception&) {
          for (int i : slurm::shelper_gres_indices(kv.value)) gpus.insert(i);
        }
      }
    }
    for (int g : gpus) out[static_cast<unsigned>(g)].push_back(job);
  }
  return out;
}

std::map<unsigned, std::vector<JobInfo>> attribute_slurmctld(const SlurmctldOptions& o) {
  if (o.node.empty()) throw std::runtime_error("the slurmctld source needs this node's Slurm name (--slurm-node)");
  if (auto cached = read_fresh_cache(o)) return *cached;
  std::set<int64_t> seen;
  std::vector<int64_t> jobs;
  for (auto [pid, job] : parse_listpids(run(o, {o.scontrol, "listpids", "*", o.node})))
    if (seen.insert(job).second) jobs.push_back(job);
  std::map<unsigned, std::vector<JobInfo>> out;
  for (int64_t job : jobs) {
    std::string text = run(o, {o.scontrol, "show", "job", "-d", std::to_string(job)});
    for (auto& [gpu, infos] : gpus_from_job_blocks(text, o.node))
      for (auto& j : infos) out[gpu].push_back(std::move(j));
  }
  write_cache(o, out);
  return out;
}

namespace {
// The members ClusterJob keeps, in its order.
constexpr std::optional<std::string> JobInfo::*kClusterJobStrings[5] = {
    &JobInfo::job_name, &JobInfo::job_user, &JobInfo::job_account, &JobInfo::job_partition, &JobInfo::job_qos};
constexpr std::optional<int64_t> JobInfo::*kClusterJobNumbers[3] = {&JobInfo::job_num_nodes, &JobInfo::array_job_id,
                                                                    &JobInfo::array_task_id};
}  // namespace

ClusterJob::ClusterJob(const JobInfo& job) : job_id_(job.job_id) {
  for (size_t i = 0; i < 5; ++i) {
    if (const auto& v = job.*kClusterJobStrings[i]) {
      text_ += *v;
      present_ |= static_cast<uint8_t>(1u << i);
    }
    ends_[i] = static_cast<uint32_t>(text_.size());  // one block of scontrol's output: far below 4 GiB
  }
  text_.shrink_to_fit();
  for (size_t i = 0; i < 3; ++i)
    if (const auto& v = job.*kClusterJobNumbers[i]) {
      numbers_[i] = *v;
      present_ |= static_cast<uint8_t>(1u << (5 + i));
    }
}

JobInfo ClusterJob::info() const {
  JobInfo j;
  j.job_id = job_id_;
  for (size_t i = 0; i < 5; ++i)
    if (present_ & (1u << i)) {
      size_t begin = i ? ends_[i - 1] : 0;
      j.*kClusterJobStrings[i] = text_.substr(begin, ends_[i] - begin);
    }
  for (size_t i = 0; i < 3; ++i)
    if (present_ & (1u << (5 + i))) j.*kClusterJobNumbers[i] = numbers_[i];
  return j;
}

bool job_state_holds_allocation(std::string_view state) {
  // scontrol prints the base state, or a flag that overrides it (COMPLETING, CONFIGURING, RESIZING, ...).
  static constexpr std::string_view kHolding[] = {"RUNNING",  "SUSPENDED", "COMPLETING", "CONFIGURING",
                                                  "RESIZING", "SIGNALING", "STAGE_OUT"};
  return std::find(std::begin(kHolding), std::end(kHolding), state) != std::end(kHolding);
}

ClusterJobsReader::ClusterJobsReader(ClusterSizes expected) {
  // A little more than last time: a cluster that gained a few jobs does not double the list for them.
  auto more = [](size_t n) { return n + n / 16; };
  out_.jobs.reserve(more(expected.jobs));
  out_.hosts.reserve(more(expected.hosts));
  out_.gpu_jobs.reserve(more(expected.gpu_jobs));
  host_indices_.reserve(more(expected.hosts));
}

void ClusterJobsReader::feed(std::string_view line) {
  if (const slurm::ScontrolRecord* r = parser_.feed(line)) add(*r);
}

ClusterJobs ClusterJobsReader::finish() {
  if (const slurm::ScontrolRecord* r = parser_.finish()) add(*r);
  std::stable_sort(out_.gpu_jobs.begin(), out_.gpu_jobs.end(),
                   [](const auto& a, const auto& b) { return a.host != b.host ? a.host < b.host : a.gpu < b.gpu; });
  host_indices_ = {};
  return std::move(out_);
}

uint32_t ClusterJobsReader::host_index(const std::string& host) {
  auto [it, added] = host_indices_.try_emplace(host, static_cast<uint32_t>(out_.hosts.size()));
  if (added) out_.hosts.push_back(host);
  return it->second;
}

std::map<unsigned, std::vector<uint32_t>> ClusterJobs::gpus_of(std::string_view host) const {
  std::map<unsigned, std::vector<uint32_t>> out;
  auto named = std::find(hosts.begin(), hosts.end(), host);
  if (named == hosts.end()) return out;
  auto index = static_cast<uint32_t>(named - hosts.begin());
  for (const GpuJob& g : gpu_jobs)
    if (g.host == index) out[g.gpu].push_back(g.job);
  return out;
}

void ClusterJobsReader::add(const slurm::ScontrolRecord& r) {
  auto state = r.get("JobState");
  if (!state || !job_state_holds_allocation(*state)) return;
  auto index = static_cast<uint32_t>(out_.jobs.size());
  bool any = false;
  std::vector<std::string> hosts;
  // Detail lines pair Nodes= with the GRES= that follows it; each node of the list gets that line's GPUs.
  for (size_t i = 0; i < r.fields.size(); ++i) {
    if (r.fields[i].key != "Nodes") continue;
    std::string_view gres;
    for (size_t k = i + 1; k < r.fields.size() && r.fields[k].key != "Nodes"; ++k)
      if (r.fields[k].key == "GRES") {
        gres = r.fields[k].value;
        break;
      }
    std::set<int> gpus;
    try {
      for (int g : slurm::gres_indices(slurm::parse_gres_list(gres))) gpus.insert(g);
    } catch (const std::exception&) {
      for (int g : slurm::shelper_gres_indices(gres)) gpus.insert(g);
    }
    if (gpus.empty()) continue;
    hosts.clear();
    try {
      slurm::Hostlist::parse(r.fields[i].value).append_to(hosts);
    } catch (const std::exception&) {
      ++out_.skipped_lists;
      continue;
    }
    for (const auto& host : hosts) {
      uint32_t h = host_index(host);
      for (int g : gpus) out_.gpu_jobs.push_back({h, static_cast<uint32_t>(g), index});
    }
    any = true;
  }
  if (any) out_.jobs.emplace_back(job_of_block(r));
}

ClusterJobs cluster_jobs_from(std::string_view text) {
  ClusterJobsReader reader;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    reader.feed(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return reader.finish();
}

ClusterJobs attribute_cluster(const std::string& scontrol, std::chrono::milliseconds timeout, ClusterSizes expected) {
  CommandSpec spec;
  spec.argv = {scontrol, "show", "job", "-d"};
  spec.timeout = timeout;
  ClusterJobsReader reader(expected);
  stream_command_lines(spec, [&](std::string_view line) { reader.feed(line); });  // CommandError names the command
  return reader.finish();
}

}  // namespace gcm

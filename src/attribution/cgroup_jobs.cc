#include "attribution/cgroup_jobs.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gcm {
namespace {

std::string read_small_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<int64_t> number_after(std::string_view s, std::string_view prefix) {
  size_t p = s.find(prefix);
  if (p == std::string_view::npos) return std::nullopt;
  std::string_view rest = s.substr(p + prefix.size());
  int64_t v = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
  if (ec != std::errc() || end == rest.data()) return std::nullopt;
  return v;
}

void add_job(std::vector<JobInfo>& jobs, int64_t id, std::optional<std::string> user = std::nullopt) {
  for (const auto& j : jobs)
    if (j.job_id == id) return;
  JobInfo j;
  j.job_id = id;
  j.job_user = std::move(user);
  jobs.push_back(std::move(j));
}

// v1 job directories: <cgroupfs>/devices/slurm*/uid_<uid>/job_<id>.
void scan_v1_device_lists(const std::string& cgroupfs, std::map<unsigned, std::vector<int64_t>>& jobs_by_minor) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path devices = fs::path(cgroupfs) / "devices";
  if (!fs::is_directory(devices, ec)) return;
  for (const auto& top : fs::directory_iterator(devices, ec)) {
    if (top.path().filename().string().rfind("slurm", 0) != 0) continue;
    for (const auto& uid : fs::directory_iterator(top.path(), ec)) {
      if (uid.path().filename().string().rfind("uid_", 0) != 0) continue;
      for (const auto& job : fs::directory_iterator(uid.path(), ec)) {
        auto id = job_id_from_cgroup_path("/" + job.path().filename().string());
        if (!id) continue;
        for (unsigned minor : nvidia_minors_in_devices_list(read_small_file((job.path() / "devices.list").string())))
          jobs_by_minor[minor].push_back(*id);
      }
    }
  }
}

}  // namespace

std::optional<int64_t> job_id_from_cgroup_path(std::string_view path) { return number_after(path, "/job_"); }

std::optional<int64_t> job_id_of_process(const std::string& procfs, uint32_t pid) {
  std::string text = read_small_file(procfs + "/" + std::to_string(pid) + "/cgroup");
  std::string_view t = text;
  size_t i = 0;
  while (i < t.size()) {
    size_t j = t.find('\n', i);
    if (j == std::string_view::npos) j = t.size();
    if (auto id = job_id_from_cgroup_path(t.substr(i, j - i))) return id;
    i = j + 1;
  }
  return std::nullopt;
}

std::vector<unsigned> nvidia_minors_in_devices_list(std::string_view list) {
  std::vector<unsigned> minors;
  size_t i = 0;
  while (i < list.size()) {
    size_t j = list.find('\n', i);
    if (j == std::string_view::npos) j = list.size();
    std::string_view line = list.substr(i, j - i);
    i = j + 1;
    // "c 195:3 rwm"; 195:255 is /dev/nvidiactl, shared by every job, not a GPU.
    if (line.rfind("c 195:", 0) != 0) continue;
    unsigned minor = 0;
    std::string_view rest = line.substr(6);
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), minor);
    if (ec == std::errc() && end != rest.data() && minor < 255) minors.push_back(minor);
  }
  return minors;
}

std::map<unsigned, std::vector<JobInfo>> attribute_cgroups(const std::vector<DeviceResult>& devices,
                                                           const CgroupOptions& opts) {
  std::map<unsigned, std::vector<JobInfo>> out;
  for (const auto& d : devices) {
    if (d.state != GpuState::Ok || !d.sample.processes) continue;
    for (const auto& p : *d.sample.processes)
      if (auto id = job_id_of_process(opts.procfs, p.pid)) add_job(out[d.index], *id);
  }
  std::map<unsigned, std::vector<int64_t>> jobs_by_minor;
  scan_v1_device_lists(opts.cgroupfs, jobs_by_minor);
  for (const auto& d : devices) {
    unsigned minor = d.sample.minor_number ? static_cast<unsigned>(*d.sample.minor_number) : d.index;
    if (auto it = jobs_by_minor.find(minor); it != jobs_by_minor.end())
      for (int64_t id : it->second) add_job(out[d.index], id);
  }
  return out;
}

}  // namespace gcm

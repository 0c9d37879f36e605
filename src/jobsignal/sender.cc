#include "jobsignal/sender.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

#include "attribution/process_environ.h"

namespace gcm::jobsignal {
namespace {

std::optional<int64_t> to_int(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::vector<std::string> split_commas(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= s.size() && !s.empty()) {
    size_t j = s.find(',', i);
    if (j == std::string_view::npos) j = s.size();
    out.emplace_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// "0100007F:1F90" (net/tcp: the address as the 32-bit word in host order, the port in hex) to ("127.0.0.1", 8080);
// net/tcp6 prints the 16 bytes of an IPv6 address as four such words ("00000000000000000000000001000000:1F90" is
// ::1). The text is inet_ntop's, the form canonical_address() gives the listener's addresses too.
std::optional<std::pair<std::string, int>> parse_tcp_endpoint(std::string_view field) {
  size_t colon = field.find(':');
  if (colon != 8 && colon != 32) return std::nullopt;
  unsigned port = 0;
  auto p = std::from_chars(field.data() + colon + 1, field.data() + field.size(), port, 16);
  if (p.ec != std::errc() || p.ptr != field.data() + field.size()) return std::nullopt;
  uint32_t words[4] = {};
  for (size_t w = 0; w < colon / 8; ++w) {
    auto a = std::from_chars(field.data() + 8 * w, field.data() + 8 * w + 8, words[w], 16);
    if (a.ec != std::errc() || a.ptr != field.data() + 8 * w + 8) return std::nullopt;
  }
  char text[INET6_ADDRSTRLEN] = "";
  if (colon == 8) {
    in_addr addr{};
    addr.s_addr = words[0];
    ::inet_ntop(AF_INET, &addr, text, sizeof text);
  } else {
    in6_addr addr{};
    std::memcpy(&addr, words, sizeof addr);
    ::inet_ntop(AF_INET6, &addr, text, sizeof text);
  }
  return std::pair<std::string, int>{text, static_cast<int>(port)};
}

// An address as inet_ntop writes it ("[::1]" and "0:0::1" -> "::1"), so that the listener's text and the socket
// table's compare equal; anything else as it is.
std::string canonical_address(std::string a) {
  if (a.size() > 2 && a.front() == '[' && a.back() == ']') a = a.substr(1, a.size() - 2);
  in6_addr v6{};
  char text[INET6_ADDRSTRLEN] = "";
  if (a.find(':') != std::string::npos && ::inet_pton(AF_INET6, a.c_str(), &v6) == 1 &&
      ::inet_ntop(AF_INET6, &v6, text, sizeof text))
    return text;
  return a;
}

std::optional<int64_t> owner_uid_from_cgroup(const std::string& procfs, int64_t pid, std::string* job_out) {
  std::ifstream in(fmt::format("{}/{}/cgroup", procfs, pid));
  std::string line;
  std::optional<int64_t> uid;
  while (std::getline(in, line)) {
    size_t job = line.find("/job_");
    if (job == std::string::npos) continue;
    size_t end = line.find_first_not_of("0123456789", job + 5);
    std::string id = line.substr(job + 5, end == std::string::npos ? std::string::npos : end - job - 5);
    if (id.empty()) continue;
    if (job_out->empty()) *job_out = id;
    size_t u = line.rfind("/uid_", job);
    if (u != std::string::npos && !uid) {
      size_t ue = line.find('/', u + 1);
      uid = to_int(std::string_view(line).substr(u + 5, ue - u - 5));
    }
  }
  return uid;
}

}  // namespace

std::optional<ProcessCredentials> tcp_peer_process(const std::string& procfs, const std::string& peer_address,
                                                   int peer_port, const std::string& local_address, int local_port) {
  const std::string peer = canonical_address(peer_address), local_side = canonical_address(local_address);
  int64_t uid = -1;
  std::string inode;
  // An IPv6 connection (the endpoint on [::1], or a v4 one accepted on a v6 socket: ::ffff:127.0.0.1) is in tcp6.
  for (const char* table : {"/net/tcp", "/net/tcp6"}) {
    std::ifstream in(procfs + table);
    std::string line;
    std::getline(in, line);  // the header
    while (inode.empty() && std::getline(in, line)) {
      std::istringstream f(line);
      std::string sl, local, remote, st, queues, timer, retr, uid_s, timeout, ino;
      if (!(f >> sl >> local >> remote >> st >> queues >> timer >> retr >> uid_s >> timeout >> ino)) continue;
      auto l = parse_tcp_endpoint(local), r = parse_tcp_endpoint(remote);
      if (!l || !r) continue;
      if (l->first == peer && l->second == peer_port && r->first == local_side && r->second == local_port) {
        uid = to_int(uid_s).value_or(-1);
        inode = ino;
      }
    }
    if (!inode.empty()) break;
  }
  if (inode.empty() || inode == "0") return std::nullopt;
  const std::string want = "socket:[" + inode + "]";
  DIR* proc = ::opendir(procfs.c_str());
  if (!proc) return std::nullopt;
  std::optional<ProcessCredentials> found;
  while (dirent* e = ::readdir(proc)) {
    auto pid = to_int(e->d_name);
    if (!pid) continue;
    std::string dir = fmt::format("{}/{}", procfs, *pid);
    struct stat st {};
    // A process of another uid cannot hold the socket (unless passed to it, which is then its own business): not
    // reading its descriptors keeps the scan to the sender's own processes.
    if (::stat(dir.c_str(), &st) != 0 || (uid >= 0 && static_cast<int64_t>(st.st_uid) != uid)) continue;
    DIR* fds = ::opendir((dir + "/fd").c_str());
    if (!fds) continue;
    while (dirent* fe = ::readdir(fds)) {
      if (fe->d_name[0] == '.') continue;
      char target[64];
      ssize_t n = ::readlink(fmt::format("{}/fd/{}", dir, fe->d_name).c_str(), target, sizeof target - 1);
      if (n > 0 && std::string_view(target, static_cast<size_t>(n)) == want) {
        found = ProcessCredentials{*pid, uid};
        break;
      }
    }
    ::closedir(fds);
    if (found) break;
  }
  ::closedir(proc);
  return found;
}

std::optional<Sender> identify_sender(const std::string& procfs, const ProcessCredentials& cred, const GpuUuids& uuids,
                                      std::string* why) {
  if (cred.pid <= 0) {
    *why = "the sending process could not be identified";
    return std::nullopt;
  }
  auto env = read_process_environ(procfs, static_cast<uint32_t>(cred.pid));
  if (!env) {
    *why = fmt::format("the environment of the sending process {} cannot be read", cred.pid);
    return std::nullopt;
  }
  Sender s;
  s.pid = cred.pid;
  s.uid = cred.uid;
  std::string cgroup_job;
  s.job_owner_uid = owner_uid_from_cgroup(procfs, cred.pid, &cgroup_job);
  auto get = [&](const char* a, const char* b = nullptr) -> std::string {
    if (auto it = env->find(a); it != env->end() && !it->second.empty()) return it->second;
    if (b)
      if (auto it = env->find(b); it != env->end()) return it->second;
    return "";
  };
  // The cgroup is slurmstepd's and cannot be rewritten by the job; the environment can, so it only fills in.
  s.job_id = !cgroup_job.empty() ? cgroup_job : get("SLURM_JOB_ID");
  if (s.job_id.empty() || !to_int(s.job_id)) {
    *why = fmt::format("the sending process {} belongs to no Slurm job (no job cgroup, no SLURM_JOB_ID)", cred.pid);
    return std::nullopt;
  }
  s.rank = to_int(get("SLURM_PROCID", "RANK")).value_or(-1);
  s.local_rank = to_int(get("SLURM_LOCALID", "LOCAL_RANK")).value_or(-1);
  // Slurm's own list of the step's (or job's) GPUs is their physical indices; CUDA_VISIBLE_DEVICES counts within it
  // when the devices are constrained, and is the physical index when they are not (then both lists agree).
  std::vector<std::string> physical = split_commas(get("SLURM_STEP_GPUS", "SLURM_JOB_GPUS"));
  std::string cvd = get("CUDA_VISIBLE_DEVICES");
  if (split_commas(cvd) == physical) physical.clear();  // the same list: not renumbered
  for (const auto& entry : split_commas(cvd)) {
    int gpu = -1;
    if (auto n = to_int(entry)) {
      if (*n >= 0 && static_cast<size_t>(*n) < physical.size())
        gpu = static_cast<int>(to_int(physical[static_cast<size_t>(*n)]).value_or(*n));
      else
        gpu = static_cast<int>(*n);
    } else if (auto it = uuids.find(entry); it != uuids.end()) {
      gpu = static_cast<int>(it->second);
    }
    s.visible_gpus.push_back(gpu);
  }
  if (s.visible_gpus.size() == 1) {
    s.gpu = s.visible_gpus[0];
  } else if (s.local_rank >= 0 && static_cast<size_t>(s.local_rank) < s.visible_gpus.size()) {
    s.gpu = s.visible_gpus[static_cast<size_t>(s.local_rank)];
  } else if (cvd.empty() && s.local_rank >= 0) {
    s.gpu = static_cast<int>(s.local_rank);
  }
  return s;
}

std::optional<uint64_t> process_start_time(const std::string& procfs, int64_t pid) {
  std::ifstream in(fmt::format("{}/{}/stat", procfs, pid));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream f(text.substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i)  // fields 3 (state) to 22 (starttime)
    if (!(f >> field)) return std::nullopt;
  auto v = to_int(field);
  if (!v) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

std::optional<Sender> SenderCache::identify(const std::string& procfs, const ProcessCredentials& cred,
                                            const GpuUuids& uuids, std::string* why, double now_s) {
  auto start = process_start_time(procfs, cred.pid);
  if (start) {
    auto it = entries_.find(cred.pid);
    if (it != entries_.end() && it->second.start_time == *start && it->second.uid == cred.uid &&
        now_s - it->second.at_s < ttl_s_)
      return it->second.sender;
  }
  std::optional<Sender> s = identify_sender(procfs, cred, uuids, why);
  if (!s || !start) return s;
  if (entries_.size() >= max_) entries_.clear();
  entries_[cred.pid] = Entry{*start, cred.uid, now_s, *s};
  return s;
}

int gpu_of(const Sender& s, int ordinal) {
  if (ordinal < 0) return s.gpu;
  if (static_cast<size_t>(ordinal) < s.visible_gpus.size()) return s.visible_gpus[static_cast<size_t>(ordinal)];
  return s.visible_gpus.empty() ? ordinal : -1;
}

}  // namespace gcm::jobsignal

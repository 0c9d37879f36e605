// Who sent a job-signal request, from the kernel's word only (docs/reference/job-signals.md, "Attribution"): the
// connecting process (SO_PEERCRED on the unix socket; for loopback TCP its socket in <procfs>/net/tcp and the process
// holding that socket), then that process's cgroup and environment under --path.procfs: job, rank, GPU.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gcm::jobsignal {

// A process and its uid, as the kernel reports them.
struct ProcessCredentials {
  int64_t pid = -1;
  int64_t uid = -1;
};

struct Sender {
  int64_t pid = -1;
  int64_t uid = -1;
  std::string job_id;
  std::optional<int64_t> job_owner_uid;  // from the cgroup path (v1 .../uid_<uid>/job_<id>) where it says
  int64_t rank = -1;                     // SLURM_PROCID, else RANK; -1 unknown
  int64_t local_rank = -1;               // SLURM_LOCALID, else LOCAL_RANK
  // CUDA_VISIBLE_DEVICES resolved to NVML indices, one per visible device in order (-1 where it cannot be).
  std::vector<int> visible_gpus;
  int gpu = -1;  // the rank's own GPU (NVML index), -1 unknown
};

// The GPUs the agent sees: NVML index by UUID (CUDA_VISIBLE_DEVICES may name them by UUID).
using GpuUuids = std::map<std::string, unsigned>;

// The process at the other end of a loopback TCP connection: the line of <procfs>/net/tcp whose local address is the
// peer's and whose remote address is the agent's (its uid and socket inode), then the process with a
// <procfs>/<pid>/fd link to socket:[inode] (only processes of that uid are looked at). nullopt when none is found.
std::optional<ProcessCredentials> tcp_peer_process(const std::string& procfs, const std::string& peer_address,
                                                   int peer_port, const std::string& local_address, int local_port);

// The sender from its credentials; nullopt when its environment cannot be read or names no job (an unknown sender).
// `why` says which, for the refusal's message.
std::optional<Sender> identify_sender(const std::string& procfs, const ProcessCredentials& cred, const GpuUuids& uuids,
                                      std::string* why);

// The start time of a process (<procfs>/<pid>/stat, field 22, clock ticks since boot): with the pid, it names one
// process for the life of the host. nullopt when the process is gone.
std::optional<uint64_t> process_start_time(const std::string& procfs, int64_t pid);

// identify_sender's answers kept per process (pid and start time, so a pid reused by another process is never
// taken for the old one), for `ttl_s`: a rank reports every few seconds, and reading its environment and cgroup
// each time cost most of a request. At most `max_entries`; full, it starts again.
class SenderCache {
 public:
  explicit SenderCache(double ttl_s = 60, size_t max_entries = 1024) : ttl_s_(ttl_s), max_(max_entries) {}
  std::optional<Sender> identify(const std::string& procfs, const ProcessCredentials& cred, const GpuUuids& uuids,
                                 std::string* why, double now_s);

 private:
  struct Entry {
    uint64_t start_time = 0;
    int64_t uid = -1;
    double at_s = 0;
    Sender sender;
  };
  double ttl_s_;
  size_t max_;
  std::map<int64_t, Entry> entries_;
};

// The NVML index of the visible device at `ordinal` (an Inspector point's GPU<n>), or the sender's own GPU when
// ordinal is negative.
int gpu_of(const Sender& s, int ordinal);

}  // namespace gcm::jobsignal

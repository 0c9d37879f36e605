// A procfs tree for the job-signal tests: processes with an environment and a cgroup, sockets in net/tcp and the
// fd links that hold them, as the kernel lays them out.
#pragma once

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>

#include "temp_dir.h"

namespace gcm::jobsignal::test {

class FakeProcfs {
 public:
  const std::string& root() const { return dir_.path(); }

  void add_process(int64_t pid, std::initializer_list<std::string> environ, const std::string& cgroup = "") {
    std::string d = dir_.file(std::to_string(pid));
    std::filesystem::create_directories(d + "/fd");
    std::string raw;
    for (const auto& e : environ) raw += e + '\0';
    std::ofstream(d + "/environ") << raw;
    if (!cgroup.empty()) std::ofstream(d + "/cgroup") << cgroup << "\n";
  }
  // A rank of job `job` as srun starts it.
  void add_rank(int64_t pid, const std::string& job, int rank, int local_rank, const std::string& cvd,
                const std::string& cgroup = "") {
    add_process(pid,
                {"SLURM_JOB_ID=" + job, "SLURM_PROCID=" + std::to_string(rank),
                 "SLURM_LOCALID=" + std::to_string(local_rank), "CUDA_VISIBLE_DEVICES=" + cvd, "HOME=/home/x"},
                cgroup);
  }
  // <pid>/stat with the given start time (field 22); the command name holds a space and a parenthesis, as they may.
  void stat(int64_t pid, uint64_t start_time) {
    std::ofstream(dir_.file(std::to_string(pid) + "/stat"))
        << pid << " (python3 x) ) S 1 " << pid << " " << pid
        << " 0 -1 4194560 100 0 0 0 5 1 0 0 20 0 3 0 " << start_time << " 1000000 100 18446744073709551615\n";
  }
  void hold_socket(int64_t pid, int fd, uint64_t inode) {
    std::filesystem::create_symlink("socket:[" + std::to_string(inode) + "]",
                                    dir_.file(std::to_string(pid) + "/fd/" + std::to_string(fd)));
  }
  // /proc/net/tcp as the kernel writes it: addresses as the 32-bit word in host order, ports in hex.
  // net/tcp6: each address as four such words.
  void net_tcp(const std::string& lines, const std::string& table = "tcp") {
    std::filesystem::create_directories(dir_.file("net"));
    std::ofstream(dir_.file("net/" + table))
        << "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        << lines;
  }

 private:
  gcm::testing::TempDir dir_;
};

}  // namespace gcm::jobsignal::test

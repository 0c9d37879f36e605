// What the job's ranks reported during the current window, per job and rank, bounded (docs/reference/job-signals.md,
// "Limits"): at most max_jobs jobs, max_ranks ranks per job, max_steps values per rank and window. Thread-safe: the
// endpoint's handler threads add, the agent's window closes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jobsignal/points.h"
#include "jobsignal/sender.h"

namespace gcm::jobsignal {

struct StoreLimits {
  size_t max_jobs = 16;
  size_t max_ranks = 64;
  // Jobs one uid may open on its environment's word alone (no cgroup and no attribution of the agent names the job):
  // without it, one user forging SLURM_JOB_ID could take every job slot of the node.
  size_t max_unverified_jobs_per_uid = 4;
  size_t max_steps = 1024;       // values kept per rank, kind and window
  int forget_after_windows = 10;  // a job silent this long is forgotten (its owner too)
};

enum class AddStatus { Ok, WrongOwner, JobLimit, RankLimit };

struct AddResult {
  AddStatus status = AddStatus::Ok;
  std::string message;  // why, when not Ok
  uint64_t accepted = 0;
  uint64_t dropped_full = 0;  // the rank's window already holds max_steps values
};

// One rank over one window.
struct RankWindow {
  int64_t rank = -1;
  int gpu = -1;
  int64_t pid = -1;
  uint64_t steps = 0;
  std::optional<double> step_duration;     // median of the window's steps, seconds
  std::optional<double> compute_duration;  // median, seconds
  std::optional<double> collective_time;   // mean of the collectives, seconds
  double tokens = 0;
};

struct JobWindow {
  std::string job_id;
  std::vector<RankWindow> ranks;  // the ranks that reported in the window, by rank
};

class Store {
 public:
  // The uid that owns a job where the agent knows it (its GPU attribution names the job's user), consulted when the
  // sender's cgroup does not say; nullopt: unknown.
  using OwnerLookup = std::function<std::optional<int64_t>(const std::string& job_id)>;

  explicit Store(StoreLimits limits = {}, OwnerLookup owner = {}) : limits_(limits), owner_(std::move(owner)) {}

  AddResult add(const Sender& sender, const ExtractedPoints& points);
  // The window's jobs (those with at least one rank reporting), and a new window.
  std::vector<JobWindow> close_window();
  size_t jobs() const;

 private:
  struct Values {
    std::vector<double> per_step;  // value per step (a histogram point: its mean, once per point)
    double sum = 0;
    uint64_t count = 0;
  };
  struct Rank {
    int gpu = -1;
    int64_t pid = -1;
    Values duration, compute, collective;
    double tokens = 0;
    int silent_windows = 0;
  };
  struct Job {
    int64_t owner_uid = -1;
    bool owner_from_cgroup = false;
    std::map<int64_t, Rank> ranks;
    int silent_windows = 0;
  };

  StoreLimits limits_;
  OwnerLookup owner_;
  mutable std::mutex mu_;
  std::map<std::string, Job> jobs_;
};

}  // namespace gcm::jobsignal

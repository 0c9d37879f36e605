// The node-local straggler rule (docs/reference/job-signals.md, "rank_slow"): each window, every rank of a job is
// compared with the job's other ranks on the node, with the zombie-GPU detector's robust statistics
// (detector/peer_compare.h: leave-one-out median, MAD with a floor, the rank's own baseline taken out) and its
// thresholds (detector/config.h). The signal is the compute time when enough ranks report it, else NCCL's collective
// time, where the straggler is the rank whose collectives are SHORTER: in a synchronous collective the others wait
// for it. The judgement of one window only; the persistence is the detector's (reason rank_slow on the GPU).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "detector/config.h"
#include "jobsignal/store.h"

namespace gcm::jobsignal {

enum class Judgement {
  Held,   // the rank reported but could not be judged (warm-up, too few peers, no comparable value)
  Clean,
  Slow,
};

struct RankJudgement {
  std::string job_id;
  int64_t rank = -1;
  int64_t pid = -1;
  int gpu = -1;
  Judgement judgement = Judgement::Held;
  const char* signal = "";  // "compute" or "collective"
  double value = 0, peer_median = 0, deviation = 0, zscore = 0;
  int peers = 0;
  bool job_effect = false;  // would deviate, but so do more than a quarter of its peers: the job's own phase
  std::string evidence;     // for Slow: one line
};

class RankSlowJudge {
 public:
  explicit RankSlowJudge(detector::DetectorConfig c = {}) : config_(std::move(c)) {}
  std::vector<RankJudgement> judge(const std::vector<JobWindow>& jobs);

 private:
  struct RankTrack {
    double baseline = 0;
    int baseline_windows = 0;
  };
  struct JobTrack {
    int windows = 0;
    const char* signal = "";
    std::map<int64_t, RankTrack> ranks;  // by rank (or -pid)
    int silent = 0;
  };
  void judge_job(const JobWindow& jw, JobTrack& t, std::vector<RankJudgement>& out);

  detector::DetectorConfig config_;
  std::map<std::string, JobTrack> jobs_;
};

}  // namespace gcm::jobsignal

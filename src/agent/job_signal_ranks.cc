#include "agent/job_signal_ranks.h"

#include <algorithm>

namespace gcm::agent {

std::vector<RankStateEntry> rank_state_entries(const std::vector<jobsignal::RankJudgement>& judgements) {
  std::vector<RankStateEntry> out;
  out.reserve(judgements.size());
  for (const auto& j : judgements) {
    RankStateEntry e;
    e.job_id = j.job_id;
    e.rank = j.rank;
    e.gpu = j.gpu;
    e.signal = j.signal ? j.signal : "";
    e.seconds = e.signal.empty() ? 0 : j.value;
    e.judgement = j.judgement == jobsignal::Judgement::Slow    ? "slow"
                  : j.judgement == jobsignal::Judgement::Clean ? "clean"
                                                               : "held";
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const RankStateEntry& a, const RankStateEntry& b) {
    return a.job_id != b.job_id ? a.job_id < b.job_id : a.rank < b.rank;
  });
  return out;
}

}  // namespace gcm::agent

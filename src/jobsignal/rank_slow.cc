#include "jobsignal/rank_slow.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "detector/peer_compare.h"

namespace gcm::jobsignal {
namespace {

int64_t key_of(const RankWindow& r) { return r.rank >= 0 ? r.rank : -r.pid; }

std::string rank_name(const RankJudgement& j) {
  return j.rank >= 0 ? fmt::format("rank {}", j.rank) : fmt::format("pid {}", j.pid);
}

}  // namespace

std::vector<RankJudgement> RankSlowJudge::judge(const std::vector<JobWindow>& jobs) {
  std::vector<RankJudgement> out;
  for (auto& [id, t] : jobs_) ++t.silent;
  for (const JobWindow& jw : jobs) {
    JobTrack& t = jobs_[jw.job_id];
    t.silent = 0;
    judge_job(jw, t, out);
  }
  // A job silent for as long as the store keeps it is gone: its warm-up starts again if it comes back.
  for (auto it = jobs_.begin(); it != jobs_.end();) it = it->second.silent > 10 ? jobs_.erase(it) : std::next(it);
  return out;
}

void RankSlowJudge::judge_job(const JobWindow& jw, JobTrack& t, std::vector<RankJudgement>& out) {
  const size_t first = out.size();
  size_t with_compute = 0, with_collective = 0;
  for (const RankWindow& r : jw.ranks) {
    RankJudgement j;
    j.job_id = jw.job_id;
    j.rank = r.rank;
    j.pid = r.pid;
    j.gpu = r.gpu;
    out.push_back(j);
    if (r.compute_duration && *r.compute_duration > 0) ++with_compute;
    if (r.collective_time && *r.collective_time > 0) ++with_collective;
  }
  ++t.windows;
  const size_t needed = static_cast<size_t>(config_.min_peers) + 1;
  bool compute = with_compute >= needed;
  if (!compute && with_collective < needed) return;  // every rank held: nothing comparable
  // The signal the job is judged on changes its baselines' meaning: they start again.
  const char* signal = compute ? "compute" : "collective";
  if (t.signal != signal) {
    t.signal = signal;
    t.ranks.clear();
  }
  std::array<double, detector::kMaxPeerGroup> values{}, bases{};
  std::array<size_t, detector::kMaxPeerGroup> at{};
  std::array<detector::SignalDeviation, detector::kMaxPeerGroup> dev{};
  size_t k = 0;
  for (size_t i = 0; i < jw.ranks.size() && k < detector::kMaxPeerGroup; ++i) {
    const RankWindow& r = jw.ranks[i];
    std::optional<double> v = compute ? r.compute_duration : r.collective_time;
    if (!v || *v <= 0) continue;
    values[k] = *v;
    bases[k] = t.ranks[key_of(r)].baseline;
    at[k++] = first + i;
  }
  detector::compare_with_peers({values.data(), k}, {bases.data(), k}, config_.mad_floor, {dev.data(), k});
  // Slower is a longer compute time, or a shorter collective (the others waited for this rank).
  const double sign = compute ? 1.0 : -1.0;
  const bool warm = t.windows > config_.warmup_windows;
  size_t deviating = 0;
  for (size_t a = 0; a < k; ++a) {
    RankJudgement& j = out[at[a]];
    const detector::SignalDeviation& d = dev[a];
    j.signal = signal;
    j.value = d.value;
    j.peer_median = d.peer_median;
    j.deviation = d.deviation;
    j.zscore = d.zscore;
    j.peers = static_cast<int>(k - 1);
    if (!d.evaluated || !warm) continue;  // held
    bool slow = sign * d.deviation >= config_.slow_deviation && sign * d.zscore >= config_.slow_zscore;
    j.judgement = slow ? Judgement::Slow : Judgement::Clean;
    if (slow) ++deviating;
  }
  for (size_t a = 0; a < k; ++a) {
    RankJudgement& j = out[at[a]];
    if (j.judgement != Judgement::Slow) continue;
    double others = static_cast<double>(deviating - 1);
    if (others > config_.max_deviating_peer_fraction * j.peers) {
      j.judgement = Judgement::Clean;
      j.job_effect = true;
      continue;
    }
    j.evidence = fmt::format(
        "rank_slow: {} {} {:.4g} s vs peers' median {:.4g} s ({:+.1f} %, z {:.1f}, {} peers, job {}){}",
        rank_name(j), compute ? "compute" : "collective", j.value, j.peer_median, j.deviation * 100, j.zscore,
        j.peers, j.job_id, compute ? "" : ": the others wait for it");
  }
  // Each rank's usual place among its peers, learned like the detector's and frozen while it looks slow.
  for (size_t a = 0; a < k; ++a) {
    const RankJudgement& j = out[at[a]];
    if (j.judgement == Judgement::Slow || j.job_effect || !dev[a].evaluated) continue;
    RankTrack& rt = t.ranks[j.rank >= 0 ? j.rank : -j.pid];
    double alpha = rt.baseline_windows < config_.warmup_windows ? 1.0 / (rt.baseline_windows + 1)
                                                                : 1.0 / std::max(1, config_.baseline_windows);
    rt.baseline = std::clamp(rt.baseline + alpha * (dev[a].raw_deviation - rt.baseline), -config_.baseline_clamp,
                             config_.baseline_clamp);
    ++rt.baseline_windows;
  }
}

}  // namespace gcm::jobsignal

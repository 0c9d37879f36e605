#include "jobsignal/store.h"

#include <algorithm>

#include <fmt/format.h>

#include "detector/peer_compare.h"

namespace gcm::jobsignal {
namespace {

std::optional<double> median_of(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  return detector::median_in_place(v.data(), v.size());
}

}  // namespace

AddResult Store::add(const Sender& sender, const ExtractedPoints& points) {
  AddResult r;
  std::lock_guard<std::mutex> g(mu_);
  auto it = jobs_.find(sender.job_id);
  if (it == jobs_.end()) {
    if (jobs_.size() >= limits_.max_jobs) {
      r.status = AddStatus::JobLimit;
      r.message = fmt::format("{} jobs already report on this node (the limit); job {} is not taken until one ends",
                              limits_.max_jobs, sender.job_id);
      return r;
    }
    bool verified = sender.job_owner_uid || (owner_ && owner_(sender.job_id));
    if (!verified && sender.uid != 0) {
      size_t opened = 0;
      for (const auto& [id, j] : jobs_) opened += !j.owner_from_cgroup && j.owner_uid == sender.uid;
      if (opened >= limits_.max_unverified_jobs_per_uid) {
        r.status = AddStatus::JobLimit;
        r.message = fmt::format(
            "uid {} already reports for {} jobs that neither a cgroup nor the agent's attribution names (the limit); "
            "job {} is not taken",
            sender.uid, opened, sender.job_id);
        return r;
      }
    }
    it = jobs_.emplace(sender.job_id, Job{}).first;
  }
  Job& job = it->second;
  // The job's owner: the cgroup's word when it has one, else the agent's attribution of the job, else the first
  // process that reported for the job here.
  if (sender.job_owner_uid && !job.owner_from_cgroup) {
    job.owner_uid = *sender.job_owner_uid;
    job.owner_from_cgroup = true;
  } else if (!job.owner_from_cgroup && owner_) {
    if (auto uid = owner_(sender.job_id)) {
      job.owner_uid = *uid;
      job.owner_from_cgroup = true;  // as authoritative
    }
  }
  if (job.owner_uid < 0 && sender.uid != 0) {
    job.owner_uid = sender.uid;
  }
  if (sender.uid != 0 && job.owner_uid >= 0 && sender.uid != job.owner_uid) {
    r.status = AddStatus::WrongOwner;
    r.message = fmt::format("process {} (uid {}) may not report for job {}, which belongs to uid {}", sender.pid,
                            sender.uid, sender.job_id, job.owner_uid);
    if (job.ranks.empty()) jobs_.erase(it);  // a refused sender holds no job slot
    return r;
  }
  // A rank that Slurm or the launcher did not number is told apart by its process.
  int64_t key = sender.rank >= 0 ? sender.rank : -sender.pid;
  auto rit = job.ranks.find(key);
  if (rit == job.ranks.end()) {
    if (job.ranks.size() >= limits_.max_ranks) {
      r.status = AddStatus::RankLimit;
      r.message = fmt::format("job {} already has {} ranks reporting on this node (the limit)", sender.job_id,
                              limits_.max_ranks);
      return r;
    }
    rit = job.ranks.emplace(key, Rank{}).first;
  }
  Rank& rank = rit->second;
  rank.pid = sender.pid;
  rank.silent_windows = 0;
  job.silent_windows = 0;
  for (const StepPoint& p : points.points) {
    if (rank.gpu < 0 || p.gpu_ordinal >= 0) {
      int gpu = gpu_of(sender, p.gpu_ordinal);
      if (gpu >= 0) rank.gpu = gpu;
    }
    if (p.kind == PointKind::Tokens) {
      rank.tokens += p.sum;
      ++r.accepted;
      continue;
    }
    Values& v = p.kind == PointKind::StepDuration      ? rank.duration
                : p.kind == PointKind::ComputeDuration ? rank.compute
                                                       : rank.collective;
    if (v.per_step.size() >= limits_.max_steps) {
      ++r.dropped_full;
      continue;
    }
    v.per_step.push_back(p.sum / static_cast<double>(p.count));
    v.sum += p.sum;
    v.count += p.count;
    ++r.accepted;
  }
  return r;
}

std::vector<JobWindow> Store::close_window() {
  std::vector<JobWindow> out;
  std::lock_guard<std::mutex> g(mu_);
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    Job& job = it->second;
    JobWindow jw;
    jw.job_id = it->first;
    for (auto rit = job.ranks.begin(); rit != job.ranks.end();) {
      Rank& r = rit->second;
      bool reported = r.duration.count + r.compute.count + r.collective.count > 0 || r.tokens > 0;
      if (reported) {
        RankWindow w;
        w.rank = rit->first >= 0 ? rit->first : -1;
        w.gpu = r.gpu;
        w.pid = r.pid;
        w.steps = r.duration.count > 0 ? r.duration.count : r.compute.count;
        w.step_duration = median_of(r.duration.per_step);
        w.compute_duration = median_of(r.compute.per_step);
        if (r.collective.count > 0) w.collective_time = r.collective.sum / static_cast<double>(r.collective.count);
        w.tokens = r.tokens;
        jw.ranks.push_back(w);
        r.duration = {};
        r.compute = {};
        r.collective = {};
        r.tokens = 0;
        r.silent_windows = 0;
      } else if (++r.silent_windows >= limits_.forget_after_windows) {
        rit = job.ranks.erase(rit);
        continue;
      }
      ++rit;
    }
    if (!jw.ranks.empty()) {
      job.silent_windows = 0;
      out.push_back(std::move(jw));
    } else if (++job.silent_windows >= limits_.forget_after_windows) {
      it = jobs_.erase(it);
      continue;
    }
    ++it;
  }
  return out;
}

size_t Store::jobs() const {
  std::lock_guard<std::mutex> g(mu_);
  return jobs_.size();
}

}  // namespace gcm::jobsignal

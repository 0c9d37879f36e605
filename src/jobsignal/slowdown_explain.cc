#include "jobsignal/slowdown_explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <set>

#include "detector/peer_compare.h"

namespace gcm::jobsignal {
namespace {

// A clock event reason counts for a window when it was set in at least this share of its samples: a one-sample
// blip is not what made every step of a window slower.
constexpr double kReasonShare = 0.1;
// An SM clock this much under the GPU's own clock before the change is a clock drop (rank_slow's threshold).
constexpr double kClockDrop = 0.03;
// Evidence must start within this many windows of the change point (either side).
constexpr int64_t kAround = 2;

struct ReasonBit {
  const char* kind;
  const char* words;
  int weight;
  double detector::GpuWindow::*share;
};
constexpr ReasonBit kReasonBits[] = {
    {"hw_thermal", "HW thermal slowdown", 90, &detector::GpuWindow::hw_thermal_fraction},
    {"power_brake", "HW power brake", 90, &detector::GpuWindow::power_brake_fraction},
    {"hw_slowdown", "HW slowdown", 85, &detector::GpuWindow::hw_slowdown_fraction},
    {"sw_thermal", "SW thermal slowdown", 60, &detector::GpuWindow::sw_thermal_fraction},
    {"sw_power_cap", "the power cap", 40, &detector::GpuWindow::sw_power_cap_fraction},
};

}  // namespace

std::string clock_minutes(int64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:02}:{:02}", tm.tm_hour, tm.tm_min);
}

void SlowdownExplainer::observe(int64_t window, const std::vector<detector::GpuWindow>& gpus,
                                const std::vector<RankJudgement>& ranks) {
  Seen s;
  s.window = window;
  for (const auto& g : gpus) {
    s.gpus[static_cast<int>(g.gpu)] = g;
    s.end_ms = std::max(s.end_ms, g.end_unix_ms);
  }
  for (const auto& r : ranks)
    if (r.judgement == Judgement::Slow) s.slow_ranks[{r.job_id, r.rank}] = r.gpu;
  seen_.push_back(std::move(s));
  while (seen_.size() > keep_) seen_.pop_front();
}

int64_t SlowdownExplainer::window_end_ms(int64_t window) const {
  for (const auto& s : seen_)
    if (s.window == window) return s.end_ms;
  return 0;
}

SlowdownExplanation SlowdownExplainer::explain(const std::string& job_id, const StepChange& change,
                                               const std::vector<int>& job_gpus, int64_t slowest_rank,
                                               int slowest_gpu, const std::string& hostname) const {
  SlowdownExplanation e;
  int64_t c = change.change_window;
  auto around = [&](int64_t w) { return w >= c - kAround && w <= c + kAround; };
  std::set<int> gpus(job_gpus.begin(), job_gpus.end());

  // The rank named: the one judged rank_slow longest without a break up to now and since around the change; else
  // the slowest of the last window.
  int64_t rank_since = -1;
  for (auto it = seen_.rbegin(); it != seen_.rend(); ++it) {
    bool any = false;
    for (const auto& [key, gpu] : it->slow_ranks)
      if (key.first == job_id && (e.rank < 0 || key.second == e.rank)) {
        e.rank = key.second;
        e.gpu = gpu;
        any = true;
        break;
      }
    if (!any) break;
    rank_since = it->window;
  }
  if (e.rank < 0) {
    e.rank = slowest_rank;
    e.gpu = slowest_gpu;
  }

  for (int gpu : gpus) {
    std::vector<const detector::GpuWindow*> before, after;  // before: windows before c - kAround
    std::vector<std::pair<int64_t, const detector::GpuWindow*>> near;
    for (const auto& s : seen_) {
      auto g = s.gpus.find(gpu);
      if (g == s.gpus.end()) continue;
      if (s.window < c - kAround) before.push_back(&g->second);
      if (s.window >= c) after.push_back(&g->second);
      if (around(s.window)) near.push_back({s.window, &g->second});
    }
    if (near.empty()) continue;
    // A reason that started around the change: set in a window near it, and not in the window before that stretch.
    const ReasonBit* reason = nullptr;
    int64_t reason_start = 0;
    for (const ReasonBit& b : kReasonBits) {
      if (!before.empty() && before.back()->*b.share >= kReasonShare) continue;
      for (const auto& [w, g] : near)
        if (g->*b.share >= kReasonShare) {
          if (!reason || b.weight > reason->weight) {
            reason = &b;
            reason_start = w;
          }
          break;
        }
    }
    // The clock: the mean SM clock of the windows since the change against its median before.
    std::optional<double> drop;
    {
      std::vector<double> b, a;
      for (const auto* g : before)
        if (g->sm_clock_mhz) b.push_back(g->sm_clock_mhz->mean);
      for (const auto* g : after)
        if (g->sm_clock_mhz) a.push_back(g->sm_clock_mhz->mean);
      if (!b.empty() && !a.empty()) {
        double ref = detector::median_in_place(b.data(), b.size());
        double now = detector::median_in_place(a.data(), a.size());
        if (ref > 0 && now < ref * (1 - kClockDrop)) drop = 1 - now / ref;
      }
    }
    if (drop || reason) {
      SlowdownFinding f;
      f.gpu = gpu;
      f.start_window = reason ? reason_start : c;
      if (drop && reason) {
        f.kind = reason->kind;
        f.weight = reason->weight + 5;
        f.text = fmt::format("its SM clock fell {:.0f} % under {}", *drop * 100, reason->words);
      } else if (drop) {
        f.kind = "clock_drop";
        f.weight = 80;
        f.text = fmt::format("its SM clock fell {:.0f} % (no clock event reason set)", *drop * 100);
      } else {
        f.kind = reason->kind;
        f.weight = reason->weight - 20;
        f.text = fmt::format("it entered {}", reason->words);
      }
      e.findings.push_back(std::move(f));
    }
    // Errors counted in the windows around the change.
    for (const auto& [w, g] : near) {
      for (const auto& x : g->xids)
        e.findings.push_back({x.critical ? 100 : 70, gpu, w, "xid", fmt::format("XID {} ({})", x.code, x.action)});
      int64_t nvlink = g->nvlink_crc_errors.value_or(0) + g->nvlink_replay_errors.value_or(0) +
                       g->nvlink_recovery_errors.value_or(0);
      if (nvlink > 0)
        e.findings.push_back({75, gpu, w, "nvlink_errors", fmt::format("{} NVLink error(s) (CRC, replay, recovery)", nvlink)});
      if (g->pcie_aer_fatal + g->pcie_aer_non_fatal > 0)
        e.findings.push_back({85, gpu, w, "pcie_aer",
                              fmt::format("PCIe AER errors ({} fatal, {} non-fatal)", g->pcie_aer_fatal,
                                          g->pcie_aer_non_fatal)});
      if (g->pcie_replays.value_or(0) > 0)
        e.findings.push_back({50, gpu, w, "pcie_replays", fmt::format("{} PCIe replay(s)", *g->pcie_replays)});
    }
  }
  // One finding of a kind per GPU (the earliest), best first; the named rank's GPU first among equals.
  std::sort(e.findings.begin(), e.findings.end(), [&](const SlowdownFinding& a, const SlowdownFinding& b) {
    if (a.weight != b.weight) return a.weight > b.weight;
    if ((a.gpu == e.gpu) != (b.gpu == e.gpu)) return a.gpu == e.gpu;
    return a.start_window < b.start_window;
  });
  std::set<std::pair<int, std::string>> kinds;
  std::erase_if(e.findings, [&](const SlowdownFinding& f) { return !kinds.insert({f.gpu, f.kind}).second; });

  // The sentence.
  int64_t at_ms = window_end_ms(c);
  std::string s = fmt::format("step time of job {} rose {:.0f} %{}", job_id, change.rise() * 100,
                              at_ms ? " at " + clock_minutes(at_ms) : "");
  if (change.kind == StepChange::Kind::Recovery) {
    e.sentence = fmt::format("step time of job {} is back within 2 % of its level before the slowdown{}", job_id,
                             at_ms ? " since " + clock_minutes(at_ms) : "");
    e.findings.clear();
    return e;
  }
  auto gpu_name = [&](int gpu) { return fmt::format("GPU {} on {}", gpu, hostname); };
  const SlowdownFinding* on_rank = nullptr;
  for (const auto& f : e.findings)
    if (f.gpu == e.gpu) {
      on_rank = &f;
      break;
    }
  if (e.rank >= 0 || e.gpu >= 0) {
    std::string who = e.rank >= 0 ? fmt::format("rank {} ({})", e.rank, gpu_name(e.gpu)) : gpu_name(e.gpu);
    int64_t since_ms = rank_since >= 0 ? window_end_ms(rank_since) : 0;
    if (rank_since >= 0)
      s += fmt::format("; {} has been the slowest{}", who, since_ms ? " since " + clock_minutes(since_ms) : "");
    else
      s += fmt::format("; {} is the slowest", who);
    if (on_rank) {
      int64_t f_ms = window_end_ms(on_rank->start_window);
      s += fmt::format(", when {}", on_rank->text);
      if (f_ms && f_ms != since_ms) s += " (" + clock_minutes(f_ms) + ")";
    }
  }
  std::vector<std::string> others;
  for (const auto& f : e.findings)
    if (&f != on_rank && others.size() < 3) others.push_back(fmt::format("{}: {}", gpu_name(f.gpu), f.text));
  if (!others.empty()) s += fmt::format("; {}: {}", on_rank ? "also" : "on the job's GPUs", fmt::join(others, "; "));
  if (e.findings.empty()) s += "; no hardware cause found on the job's GPUs (software or data)";
  e.sentence = std::move(s);
  return e;
}

}  // namespace gcm::jobsignal

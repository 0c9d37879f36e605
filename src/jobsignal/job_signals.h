// The agent's intake of the jobs' own signal (docs/reference/job-signals.md): the local OTLP/HTTP endpoint (a unix
// socket under --path.run, optionally loopback TCP), attribution of every request by its sender's credentials, the
// per-window store of step times, the rank_slow judgement handed to the detector, and the per-job summary series.
// The agent owns one; it calls close_window() at each window before the detector judges.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/http_listener.h"
#include "core/record.h"
#include "detector/config.h"
#include "detector/gpu_window.h"
#include "jobsignal/rank_slow.h"
#include "jobsignal/records.h"
#include "jobsignal/sender.h"
#include "jobsignal/slowdown_explain.h"
#include "jobsignal/step_change.h"
#include "jobsignal/store.h"

namespace spdlog {
class logger;
}

namespace gcm::jobsignal {

struct JobSignalOptions {
  std::string socket_path;  // "" : no unix socket
  std::string listen;       // "" : no TCP; else a loopback HOST:PORT
  std::string procfs = "/proc";
  std::string hostname;   // the records' hostname
  std::string node_name;  // for the explanations ("GPU 3 on node50"): the node's Slurm name ("": the hostname)
  StepChangeConfig step_change;
  size_t max_body = 4u << 20;
  int max_connections = 64;
  StoreLimits limits;
  detector::DetectorConfig detector;
};

// Why a request was refused: the label of gcm_jobsignal_requests_refused_total.
enum class Refusal { UnknownSender, WrongOwner, TooLarge, BadRequest, JobLimit, RankLimit, NotFound, Count };
const char* refusal_name(Refusal r);

struct WindowOutput {
  std::vector<Record> summaries;  // kJobStepSummary, one per job
  std::vector<Record> receiver;   // kJobSignalReceiver
  std::vector<Record> refused;    // kJobSignalRefused
  std::vector<Record> dropped;    // kJobSignalDropped
  std::vector<RankJudgement> judgements;
  std::vector<Record> slowdown_state;   // kJobSlowdownState, one per job with a reference
  std::vector<Record> slowdown_last;    // kJobSlowdownLast, one per job that had a slowdown
  std::vector<Record> slowdown_events;  // kJobSlowdownEvent (LOG), the window's confirmed changes
};

class JobSignals {
 public:
  JobSignals(JobSignalOptions opts, std::shared_ptr<spdlog::logger> log);
  ~JobSignals();
  // Binds the endpoints; throws std::runtime_error naming the address that cannot be used, std::invalid_argument
  // for a --job-signal-listen that is not a loopback HOST:PORT.
  void start();
  void stop();
  int tcp_port() const;  // 0 without TCP

  // What the agent knows of its GPUs (UUID -> index, for CUDA_VISIBLE_DEVICES by UUID) and of the jobs' owners
  // (job id -> user name, from its attribution).
  void set_node(const std::map<unsigned, std::string>& gpu_uuids, const std::map<std::string, std::string>& job_users);

  // Closes the window: sets each GPU window's rank_signal (and evidence) for the detector, and returns the series.
  WindowOutput close_window(std::vector<detector::GpuWindow>& gpus, double window_seconds);

  // One request as the endpoint's handler sees it (public for tests: a request with its HttpPeer filled in).
  HttpReply handle(const HttpRequest& req);

 private:
  HttpReply refuse(Refusal why, int status, bool json, const std::string& message);
  std::optional<int64_t> owner_of(const std::string& job_id);

  JobSignalOptions opts_;
  std::shared_ptr<spdlog::logger> log_;
  Store store_;
  RankSlowJudge judge_;
  std::unique_ptr<HttpListener> unix_listener_, tcp_listener_;
  std::string tcp_url_host_;  // the TCP endpoint's host as a URL writes it ([::1])

  mutable std::mutex node_mu_;
  GpuUuids uuids_;
  SenderCache senders_;  // under node_mu_
  std::map<std::string, std::string> job_users_;

  std::atomic<uint64_t> requests_{0}, points_{0}, ignored_{0}, claims_ignored_{0}, bad_values_{0}, full_{0};
  std::array<std::atomic<uint64_t>, static_cast<size_t>(Refusal::Count)> refused_{};
  // The job slowdowns (window thread only): a change-point test per job, the evidence of the last windows.
  struct JobSlowdowns {
    StepChangeDetector detector;
    uint64_t events = 0;
    std::optional<Record> last;
    int silent = 0;
  };
  void take_slowdowns(const std::vector<JobWindow>& jobs, const std::vector<detector::GpuWindow>& gpus,
                      WindowOutput& out);
  std::map<std::string, JobSlowdowns> slowdowns_;
  SlowdownExplainer explainer_;
  int64_t windows_ = 0;
  std::map<std::string, uint64_t> steps_total_;  // per job, for gcm_job_steps_total (window thread only)
  std::atomic<uint64_t> logged_refusals_{0};
};

}  // namespace gcm::jobsignal

// `gcm drainer`: the receiver of Alertmanager's webhook that turns gcm's drain-worthy alerts (gcm_action="drain":
// the cross-node GcmPeerSlowNode, and any other rule that carries the label) into Slurm drains, through the same
// rules as the agent's own drains (suite/detector_drain.h): gcm's reason only, never another reason's drain, the
// cluster and partition limits. Report-only unless --drain.
//
// A webhook is answered at once (Alertmanager waits at most its timeout, and retries what was not answered 2xx): the
// drains are queued and sent by one worker thread in arrival order, so two alerts for one node never race and the
// limits are judged one drain at a time. A full queue answers 503, which Alertmanager retries.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/http_listener.h"
#include "drainer/alertmanager_webhook.h"
#include "suite/detector_drain.h"

namespace spdlog {
class logger;
}

namespace gcm::drainer {

struct DrainerOptions {
  HttpListenerOptions listen;
  bool drain = false;
  suite::DrainLimits limits;
  std::string node_label = "node";                   // the alert label that names the Slurm node
  std::string action_label = "gcm_action";           // alerts act only when it is "drain"
  std::string evidence_annotation = "gcm_evidence";  // the drain reason's text (else the summary)
  size_t max_queue = 1000;
  suite::ScontrolRunner scontrol;  // how Slurm is reached
};

class Drainer {
 public:
  Drainer(DrainerOptions opts, std::shared_ptr<spdlog::logger> log);
  ~Drainer();
  void start();
  void stop();
  int port() const { return listener_->port(); }
  HttpReply handle(const HttpRequest& req);
  std::string metrics_text() const;
  // Blocks until the queue is empty and nothing is being sent (tests, shutdown).
  void wait_idle();

 private:
  struct Job {
    std::string node, evidence, alertname;
  };
  void work();
  HttpReply webhook(const HttpRequest& req);

  DrainerOptions opts_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<HttpListener> listener_;
  mutable std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<Job> queue_;
  bool busy_ = false, stopping_ = false;
  std::thread worker_;
  std::map<std::string, uint64_t> actions_;  // by suite::to_string(DrainAction)
  std::map<std::string, uint64_t> notices_;  // by status: firing, resolved, ignored
  uint64_t bad_requests_ = 0, queue_full_ = 0;
};

}  // namespace gcm::drainer

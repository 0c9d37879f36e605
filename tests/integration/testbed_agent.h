// One `gcm agent` per testbed node, as the agent and zombie testbed tests start them: the node's fake-NVML scenario
// in DIR/nvml-NODE.json (the caller writes it), the mapping files the prolog writes in DIR/gpu-jobs/NODE, its own run
// directory DIR/run/NODE, no kernel log, a 0.2 s sample and a 1 s window, listening on 127.0.0.1:PORT, logging into
// DIR/LOGS/NODE; `extra` follows (the suite, --drain, ...), and `env` adds to its environment.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "helpers.h"
#include "process.h"

namespace gcm::testing {

inline std::unique_ptr<BackgroundProcess> start_testbed_agent(const std::string& dir, const std::string& node, int port,
                                                              const std::vector<std::string>& extra,
                                                              const std::string& logs = "agent-logs",
                                                              const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv = {gcm_binary(),
                                   "--config",
                                   "/dev/null",
                                   "agent",
                                   "--slurm-node",
                                   node,
                                   "--collect-interval",
                                   "0.2",
                                   "--window",
                                   "1",
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(port),
                                   "--path.run",
                                   dir + "/run/" + node,
                                   "--path.kmsg",
                                   dir + "/no-kmsg",
                                   "--attribution",
                                   "mapping-files",
                                   "--gpu-job-mapping-dir",
                                   dir + "/gpu-jobs/" + node,
                                   "--log-folder",
                                   dir + "/" + logs + "/" + node};
  argv.insert(argv.end(), extra.begin(), extra.end());
  std::vector<std::string> environment = {"GCM_FAKE_NVML_SCENARIO=" + dir + "/nvml-" + node + ".json",
                                          std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML};
  environment.insert(environment.end(), env.begin(), env.end());
  return std::make_unique<BackgroundProcess>(argv, dir + "/agent-" + node + ".stderr", environment);
}

}  // namespace gcm::testing

// The testbed in tests/testbed/workload.sh's state, for the tests that read a busy cluster.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "helpers.h"

namespace gcm::testing {

// The testbed in workload.sh's state: node7 drained, node8 down, pending jobs. When it is not, workload.sh is run
// (it is idempotent) and, at the end of the test, its jobs are cancelled and its nodes resumed, so the testbed is
// left as it was found (other tests want free nodes). When it already is, it is left alone.
class Workload {
 public:
  Workload() {
    if (present()) return;
    CommandSpec w;
    w.argv = {"bash", std::string(GCM_SOURCE_DIR) + "/tests/testbed/workload.sh"};
    w.timeout = std::chrono::seconds(120);
    auto r = run_command(w);
    if (!r.ok()) throw std::runtime_error(describe_failure(w, r));
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
      if (auto eq = line.find('='); eq != std::string::npos) ids_.push_back(line.substr(eq + 1));
    started_ = true;
  }
  ~Workload() {
    if (!started_) return;
    CommandSpec s;
    s.timeout = std::chrono::seconds(30);
    s.argv = {"scancel"};
    for (const auto& id : ids_) s.argv.push_back(id);
    run_command(s);
    for (const char* node : {"node7", "node8"}) {
      s.argv = {"scontrol", "update", std::string("nodename=") + node, "state=resume"};
      run_command(s);
    }
    // Back to idle (resumed nodes answer again and cancelled jobs finish completing within seconds).
    s.argv = {"sinfo", "-h", "-N", "-o", "%t"};
    eventually(
        [&] {
          auto out = run_command(s).out;
          std::istringstream in(out);
          for (std::string state; std::getline(in, state);)
            if (state != "idle") return false;
          return true;
        },
        std::chrono::seconds(30));
  }

 private:
  static bool present() {
    CommandSpec s;
    s.argv = {"sinfo", "-h", "-N", "-o", "%N %t"};
    s.timeout = std::chrono::seconds(10);
    auto nodes = run_command(s).out;
    s.argv = {"squeue", "-h", "-t", "PD", "-o", "%r"};
    auto pending = run_command(s).out;
    return nodes.find("node7 drain") != std::string::npos && nodes.find("node8 down") != std::string::npos &&
           pending.find("Dependency") != std::string::npos && pending.find("Resources") != std::string::npos;
  }
  bool started_ = false;
  std::vector<std::string> ids_;
};

}  // namespace gcm::testing

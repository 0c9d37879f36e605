// health_checks end to end on a fake host (host_checks_fixture.h): the Slurm checks (check-slurm ...) on the live
// testbed.
#include "host_checks_fixture.h"

namespace gcm::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ------------------------------------------------------------------------------------- Slurm checks on the testbed

#define REQUIRE_TESTBED()                                                                                       \
  if (!testbed_up())                                                                                            \
  GTEST_SKIP() << "the Slurm testbed is not running (SLURM_CONF unset or scontrol ping failed); start it with " \
                  "tests/testbed/start.sh and source tests/testbed/env.sh"

std::string run_slurm(std::vector<std::string> argv) {
  CommandSpec s;
  s.argv = std::move(argv);
  s.timeout = std::chrono::seconds(30);
  auto r = run_command(s);
  if (!r.ok()) throw std::runtime_error(describe_failure(s, r));
  return r.out;
}

// Drains node5 and downs node6 for the test's duration; puts them back and waits for them to be idle.
class DrainedAndDown {
 public:
  DrainedAndDown() {
    run_slurm({"scontrol", "update", "nodename=node5", "state=drain", "reason=hc2 test drain"});
    run_slurm({"scontrol", "update", "nodename=node6", "state=down", "reason=hc2 test down"});
  }
  ~DrainedAndDown() {
    for (const char* n : {"node5", "node6"}) {
      try {
        run_slurm({"scontrol", "update", std::string("nodename=") + n, "state=resume"});
      } catch (const std::exception&) {
      }
    }
    eventually(
        [] {
          auto out = run_slurm({"sinfo", "-h", "-n", "node5,node6", "-o", "%t"});
          return out.find("drain") == std::string::npos && out.find("down") == std::string::npos;
        },
        std::chrono::seconds(30));
  }
};

TEST(HostChecksSlurmTestbed, NodeStatesAvailabilityAndControllers) {
  REQUIRE_TESTBED();
  Host h;
  auto hc = [&](std::vector<std::string> a) {
    CommandSpec s;
    s.argv = {health_checks_path()};
    s.argv.insert(s.argv.end(), a.begin(), a.end());
    s.argv.insert(s.argv.end(), {"--log-folder", h.dir + "/logs"});
    s.timeout = std::chrono::seconds(60);
    return run_command(s);  // the real PATH and SLURM_CONF
  };
  EXPECT_VERDICT(hc({"check-service", "slurmctld-count", "testbed", "app", "--slurmctld-count", "1"}), OK,
                 "slurmctld daemons up: 1");
  EXPECT_VERDICT(hc({"check-service", "slurmctld-count", "testbed", "app", "--slurmctld-count", "2"}), CRIT,
                 "Insufficient slurmctld daemon count. Expected: 2, found: 1.");
  // Nodes already drained or down (another test's workload may have left some): the expectations count them.
  auto bad_now = [] {
    std::map<std::string, std::string> states;  // a node in two partitions has two rows
    std::istringstream in(run_slurm({"sinfo", "-h", "-N", "-o", "%N %T"}));
    for (std::string node, state; in >> node >> state;) states[node] = state;
    int n = 0;
    for (const auto& [node, state] : states)
      n += state.find("drain") != std::string::npos || state.find("down") != std::string::npos;
    return n;
  };
  int before = bad_now();
  {
    DrainedAndDown nodes;
    EXPECT_VERDICT(hc({"check-service", "node-slurm-state", "testbed", "app", "--node", "node1"}), OK,
                   "node node1 is in state idle.");
    EXPECT_VERDICT(hc({"check-service", "node-slurm-state", "testbed", "app", "--node", "node5"}), WARN,
                   "node node5 is in bad state: drained, and cannot accept jobs.");
    EXPECT_VERDICT(hc({"check-service", "node-slurm-state", "testbed", "app", "--node", "node6"}), WARN,
                   "node node6 is in bad state: down");
    int bad = bad_now();
    ASSERT_EQ(bad, before + 2);
    double pct = bad * 100.0 / 8;
    std::string share = fmt::format("{:.1f}% of nodes are down or drained ({}/8)", pct, bad);
    if (before == 0)  // 2 of 8 nodes: 25 %, not above the default critical 25 but above the warning 15
      EXPECT_VERDICT(hc({"check-service", "cluster-availability", "testbed", "app"}), WARN, share);
    auto avail = [&](int warn, int crit) {
      return hc({"check-service", "cluster-availability", "testbed", "app", "--warning_threshold", std::to_string(warn),
                 "--critical_threshold", std::to_string(crit)});
    };
    EXPECT_VERDICT(avail(static_cast<int>(pct) - 1, 100), WARN, share);
    EXPECT_VERDICT(avail(0, static_cast<int>(pct) - 1), CRIT, share);
    EXPECT_VERDICT(avail(100, 100), OK, share);
  }
  if (before == 0)
    EXPECT_VERDICT(hc({"check-service", "cluster-availability", "testbed", "app"}), OK,
                   "0.0% of nodes are down or drained (0/8)");
  // The controller unreachable, as when slurmctld is stopped: the client's configuration points at a port where no
  // slurmctld listens (the shared testbed keeps running for the other tests).
  std::string conf = read_text(std::getenv("SLURM_CONF"));
  std::string dead = h.dir + "/slurm.conf";
  std::ofstream(dead) << std::regex_replace(conf, std::regex("SlurmctldPort=\\d+"),
                                            "SlurmctldPort=" + std::to_string(free_port()));
  CommandSpec s;
  s.argv = {health_checks_path(), "check-service", "slurmctld-count", "testbed", "app", "--slurmctld-count", "1",
            "--log-folder",       h.dir + "/logs", "--timeout",       "20"};
  s.extra_env = {"SLURM_CONF=" + dead};
  s.timeout = std::chrono::seconds(60);
  auto r = run_command(s);
  EXPECT_VERDICT(r, CRIT, "Insufficient slurmctld daemon count. Expected: 1, found: 0.");
  s.argv = {health_checks_path(),
            "check-service",
            "cluster-availability",
            "testbed",
            "app",
            "--log-folder",
            h.dir + "/logs",
            "--timeout",
            "20"};
  EXPECT_VERDICT(run_command(s), WARN, "scontrol exited with code 1");
  s.argv = {health_checks_path(), "check-service", "node-slurm-state", "testbed", "app", "--node", "node1",
            "--log-folder",       h.dir + "/logs", "--timeout",        "20"};
  EXPECT_VERDICT(run_command(s), WARN, "sinfo exited with code 1");
}

}  // namespace
}  // namespace gcm::testing

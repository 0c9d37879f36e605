// sprio, sshare and scontrol_topology as whole processes on the live testbed, each compared with what the Slurm
// command itself answers in the same test.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <thread>

#include "slurm_fakes.h"

namespace gcm::testing {
namespace {

TEST(SchedulerCollectorsTestbed, SprioAgreesWithSprio) {
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  // carol's QOS (limited) allows one running job: the second pends, and sprio lists it.
  Job carol1({"-p", "gpu", "-J", "sprio-carol1", "--wrap", "exec sleep 300"}, "carol");
  Job carol2({"-p", "gpu", "-J", "sprio-carol2", "--wrap", "exec sleep 300"}, "carol");
  ASSERT_TRUE(eventually(
      [&] {
        return run_ok({"sprio", "-h", "-j", carol2.id, "-o", "%i"}).find(carol2.id) == 0;
      },
      std::chrono::seconds(30)));
  // sprio's own view of every pending job: id, partition and priority.
  std::set<std::string> expected, got;
  // 22.05's sprio knows no %o (account): the collector's ACCOUNT is null there, and sprio's own from 23.02 on.
  const bool has_account = testbed_release() > std::make_pair(22, 5);
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::map<int64_t, std::string> accounts;
    if (has_account) {
      std::istringstream ain(run_ok({"sprio", "-h", "-o", "%i|%o"}));
      for (std::string line; std::getline(ain, line);)
        accounts[std::stoll(line.substr(0, line.find('|')))] = line.substr(line.find('|') + 1);
    }
    std::istringstream in(run_ok({"sprio", "-h", "-o", "%i|%r|%Y"}));
    expected.clear();
    for (std::string line; std::getline(in, line);) expected.insert(line);
    auto r = run_gcm({"sprio", "--once", "--cluster", "testbed", "--log-folder", temp_dir("sprio-tb")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    got.clear();
    for (auto& rec : records(r.out)) {
      const json& s = rec["sprio"];
      got.insert(std::to_string(s["JOBID"].get<int64_t>()) + "|" + s["PARTITION"].get<std::string>() + "|" +
                 std::to_string(s["PRIORITY"].get<int64_t>()));
      EXPECT_EQ(rec["cluster"], "testbed");
      if (!has_account) {
        EXPECT_TRUE(s["ACCOUNT"].is_null()) << s;
      } else if (accounts.count(s["JOBID"].get<int64_t>())) {
        EXPECT_EQ(s["ACCOUNT"], accounts[s["JOBID"].get<int64_t>()]) << s;
      }
      EXPECT_EQ(s["PARTITION_PRIO"], 100);  // PriorityWeightPartition=100
    }
    if (got == expected) break;
  }
  EXPECT_EQ(got, expected);
  std::string priority = run_ok({"sprio", "-h", "-j", carol2.id, "-o", "%Y"});
  EXPECT_TRUE(got.count(carol2.id + "|gpu|" + std::to_string(std::stoll(priority)))) << carol2.id;
}

TEST(SchedulerCollectorsTestbed, SshareAgreesWithSlurm) {
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  auto r = run_gcm({"sshare", "--once", "--cluster", "testbed", "--log-folder", temp_dir("sshare-tb")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::multiset<std::string> got, expected;
  for (auto& rec : records(r.out))
    got.insert(rec["sshare"]["Account"].get<std::string>() + "|" + rec["sshare"]["User"].get<std::string>() + "|" +
               rec["sshare"]["RawShares"].get<std::string>());
  std::istringstream in(run_ok({"sshare", "-a", "-P", "-n", "-o", "Account,User,RawShares"}));
  for (std::string line; std::getline(in, line);) expected.insert(line);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(got.count("   ml|bob|1"), 1u);
}

TEST(SchedulerCollectorsTestbed, TopologyAgreesWithSlurm) {
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  auto t = run_gcm({"scontrol_topology", "--once", "--cluster", "testbed", "--log-folder", temp_dir("topo-tb")});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  std::map<std::string, json> by_switch;
  for (auto& rec : records(t.out)) by_switch[rec["SwitchName"]] = rec;
  ASSERT_EQ(by_switch.size(), 3u) << t.out;  // tests/testbed/start.sh's topology.conf
  EXPECT_EQ(by_switch["leaf1"]["Nodes"], "node1,node2,node3,node4");
  EXPECT_EQ(by_switch["leaf2"]["node_count"], 4);
  EXPECT_EQ(by_switch["spine"]["Level"], 1);
  EXPECT_EQ(by_switch["spine"]["Switches"], "leaf[1-2]");
  EXPECT_EQ(by_switch["spine"]["node_count"], 8);
}

}  // namespace
}  // namespace gcm::testing

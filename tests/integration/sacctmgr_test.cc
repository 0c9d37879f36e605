// sacctmgr_qos and sacctmgr_user as whole processes: on a fake sacctmgr answering with the recorded 22.05 outputs
// (and a short row), and on the live testbed.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <thread>

#include "slurm_fakes.h"

namespace gcm::testing {
namespace {

TEST(SacctmgrFake, QosAndUsersOnRecordedOutputs) {
  FakeSlurm f;
  auto q =
      run_gcm({"sacctmgr_qos", "--once", "--cluster", "tb", "--log-folder", f.dir}, std::chrono::seconds(30), f.env());
  ASSERT_EQ(q.exit_code, 0) << q.err;
  auto qr = records(q.out);
  ASSERT_EQ(qr.size(), 3u);
  EXPECT_EQ(qr[2]["sacctmgr_qos"]["Name"], "limited");
  EXPECT_EQ(qr[2]["cluster"], "tb");
  EXPECT_TRUE(std::regex_match(qr[2]["ds"].get<std::string>(), std::regex(R"(\d{4}-\d\d-\d\d)")));
  auto u =
      run_gcm({"sacctmgr_user", "--once", "--cluster", "tb", "--log-folder", f.dir}, std::chrono::seconds(30), f.env());
  ASSERT_EQ(u.exit_code, 0) << u.err;
  auto ur = records(u.out);
  ASSERT_EQ(ur.size(), 5u) << u.out;  // alice has two associations
  EXPECT_EQ(ur[0]["sacctmgr_user"]["Def Acct"], "research") << "GCM's key on Slurm 22.05: the header as printed";
}

TEST(SacctmgrFake, ShortRowExitsOneNamingTheLine) {
  FakeSlurm f;
  write_script(f.dir + "/sacctmgr", "printf 'Name|Priority\\nnormal|0\\nbroken\\n'");
  auto q =
      run_gcm({"sacctmgr_qos", "--once", "--cluster", "tb", "--log-folder", f.dir}, std::chrono::seconds(30), f.env());
  EXPECT_EQ(q.exit_code, 1);
  EXPECT_NE(q.err.find("sacctmgr show qos -P`, line 3"), std::string::npos) << q.err;
  EXPECT_EQ(records(q.out).size(), 1u);  // the good row is delivered
}

TEST(SacctmgrTestbed, QosAndUsers) {
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  auto q = run_gcm({"sacctmgr_qos", "--once", "--cluster", "testbed", "--log-folder", temp_dir("qos-tb")});
  ASSERT_EQ(q.exit_code, 0) << q.err;
  std::set<std::string> qos;
  for (auto& rec : records(q.out)) qos.insert(rec["sacctmgr_qos"]["Name"]);
  EXPECT_EQ(qos, (std::set<std::string>{"normal", "high", "limited", "capped"}));
  auto u = run_gcm({"sacctmgr_user", "--once", "--cluster", "testbed", "--log-folder", temp_dir("user-tb")});
  ASSERT_EQ(u.exit_code, 0) << u.err;
  std::set<std::string> assoc;
  for (auto& rec : records(u.out))
    assoc.insert(rec["sacctmgr_user"]["User"].get<std::string>() + ":" +
                 rec["sacctmgr_user"]["Account"].get<std::string>());
  for (const char* a : {"root:root", "alice:research", "alice:ml", "bob:ml", "carol:infra"})
    EXPECT_TRUE(assoc.count(a)) << a << " missing; got " << u.out;
}

}  // namespace
}  // namespace gcm::testing

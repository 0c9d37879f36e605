#include "slurm/cluster_name.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <spdlog/sinks/ostream_sink.h>

#include "collectors/loop.h"
#include "core/shutdown.h"

namespace gcm {
namespace {

TEST(ClusterName, FirstLineWithClusterName) {
  EXPECT_EQ(parse_cluster_name("Configuration data as of 2023\nAccountingStorageHost = db\nClusterName             = "
                               "fair_cluster\nClusterName = other\n"),
            "fair_cluster");
  EXPECT_EQ(parse_cluster_name("ClusterName=x"), "x");
  EXPECT_FALSE(parse_cluster_name("SlurmUser = slurm\n").has_value());
  EXPECT_FALSE(parse_cluster_name("ClusterName =  \n").has_value());
}

TEST(ClusterName, ReferenceScontrolShowConfigFixture) {
  std::string path = std::string(GCM_SOURCE_DIR) + "/../shared/fixtures/gcm/sample-scontrol-show-config-output.txt";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared fixtures not present: " << path;
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(parse_cluster_name(text), "cluster_name");
}

// A PATH holding only a fake scontrol running `script`; restored by the destructor.
class FakeScontrol {
 public:
  explicit FakeScontrol(const std::string& script) {
    char tmpl[] = "/tmp/gcm-scontrol-XXXXXX";
    dir_ = mkdtemp(tmpl);
    if (!script.empty()) {
      std::ofstream(dir_ + "/scontrol") << "#!/bin/sh\n" << script << "\n";
      ::chmod((dir_ + "/scontrol").c_str(), 0755);
    }
    old_path_ = getenv("PATH") ? getenv("PATH") : "";
    setenv("PATH", dir_.c_str(), 1);  // only the fake: the host may have a real scontrol
  }
  ~FakeScontrol() {
    setenv("PATH", old_path_.c_str(), 1);
    std::filesystem::remove_all(dir_);
  }
  std::string dir_;

 private:
  std::string old_path_;
};

// A Slurm hiccup at start-up once gave local-node without a word: each failure is named, the absence of Slurm is
// not (GCM's quiet local-node).
TEST(ClusterName, SlurmHiccupIsNamedNoSlurmIsQuiet) {
  {
    FakeScontrol fake("echo 'slurm_load_ctl_conf error: Unable to contact slurm controller' >&2; exit 1");
    ClusterNameLookup l = look_up_cluster_name(std::chrono::seconds(5));
    EXPECT_FALSE(l.name);
    EXPECT_NE(l.problem.find("`scontrol show config` exited with status 1: slurm_load_ctl_conf error"),
              std::string::npos)
        << l.problem;
    std::vector<std::string> warned;
    EXPECT_EQ(detect_cluster(std::chrono::seconds(5), [&](const std::string& w) { warned.push_back(w); }),
              "local-node");
    ASSERT_EQ(warned.size(), 1u);
    EXPECT_NE(warned[0].find("cannot read the cluster name from `scontrol show config`"), std::string::npos);
    EXPECT_NE(warned[0].find("using local-node"), std::string::npos) << warned[0];
  }
  {
    // scontrol on a host without a Slurm configuration: four lines of errors, said in one line.
    FakeScontrol fake(
        "printf 'scontrol: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\\n"
        "scontrol: error: fetch_config: DNS SRV lookup failed\\nscontrol: error: _establish_config_source: failed "
        "to fetch config\\nscontrol: fatal: Could not establish a configuration source\\n' >&2; exit 1");
    std::vector<std::string> warned;
    detect_cluster(std::chrono::seconds(5), [&](const std::string& w) { warned.push_back(w); });
    ASSERT_EQ(warned.size(), 1u);
    EXPECT_EQ(warned[0].find('\n'), std::string::npos) << warned[0];
    EXPECT_NE(warned[0].find("exited with status 1: scontrol: fatal: Could not establish a configuration source; "
                             "using local-node"),
              std::string::npos)
        << warned[0];
  }
  {
    FakeScontrol fake("exec /bin/sleep 30");
    ClusterNameLookup l = look_up_cluster_name(std::chrono::milliseconds(300));
    EXPECT_FALSE(l.name);
    EXPECT_NE(l.problem.find("timed out"), std::string::npos) << l.problem;
  }
  {
    FakeScontrol fake("echo 'SlurmUser = slurm'");
    EXPECT_NE(look_up_cluster_name().problem.find("printed no ClusterName"), std::string::npos);
  }
  {
    FakeScontrol fake("echo 'ClusterName = fair'");
    ClusterNameLookup l = look_up_cluster_name();
    EXPECT_EQ(l.name, "fair");
    EXPECT_EQ(l.problem, "");
  }
  {
    FakeScontrol none("");
    ClusterNameLookup l = look_up_cluster_name();
    EXPECT_FALSE(l.name);
    EXPECT_EQ(l.problem, "") << "no Slurm on the host is not a hiccup";
  }
}

// One record per round carrying ctx.cluster; stops the loop after `rounds` rounds.
class ClusterEcho : public Collector {
 public:
  explicit ClusterEcho(int rounds) : rounds_(rounds) {
    schema_.name = "Echo";
    schema_.fields = {{"cluster"}};
  }
  std::vector<CollectorTask> tasks(const CollectorContext&) override {
    return {{"echo", &schema_, [this](const CollectorContext& ctx, RecordOut& out) {
               seen.push_back(ctx.cluster);
               if (static_cast<int>(seen.size()) >= rounds_) request_shutdown();
               Record r(schema_);
               r[0] = ctx.cluster;
               out.emit(r);
             }}};
  }
  std::vector<std::string> seen;

 private:
  int rounds_;
  Schema schema_;
};

TEST(ClusterName, DaemonAsksAgainUntilSlurmAnswers) {
  reset_shutdown();
  std::ostringstream logged;
  CollectorContext ctx;
  ctx.cluster = "local-node";
  ctx.log = std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::ostream_sink_mt>(logged));
  int asked = 0;
  ctx.retry_cluster = [&]() -> std::optional<std::string> {
    if (++asked < 2) return std::nullopt;
    return std::string("fair");
  };
  SharedOptions opts;
  opts.sink = "do_nothing";
  opts.interval = 0;
  ClusterEcho collector(4);
  run_collection_loop("echo", opts, collector, ctx);
  reset_shutdown();
  EXPECT_EQ(collector.seen, (std::vector<std::string>{"local-node", "local-node", "fair", "fair"}));
  EXPECT_EQ(asked, 2) << "not asked again once it answered";
  EXPECT_NE(logged.str().find("cluster name fair read from Slurm"), std::string::npos) << logged.str();
}

}  // namespace
}  // namespace gcm

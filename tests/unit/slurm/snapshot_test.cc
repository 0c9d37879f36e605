// The Slurm snapshot of `gcm collect`: a query asked twice in one cycle runs once (and once only while both ask), a
// failure reaches every asker, another cycle or another answerer asks again, and slurm_monitor's nodes read from
// `sinfo --json` are the nodes it reads from `sinfo -O`.
#include "slurm/snapshot.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <thread>

#include "collectors/slurm_monitor.h"
#include "slurm/parse_error.h"
#include "slurm/rest_render.h"
#include "text_file.h"

namespace gcm::slurm {
namespace {

using gcm::testing::read_file;

// Answers every query with "<argv0> answer <n>", n counting its own fetches; can hold a fetch until released, so
// that a second asker arrives while the first one's command still runs.
class CountingClient : public SlurmClient {
 public:
  explicit CountingClient(std::string who = "counting") : who_(std::move(who)) {}

  size_t fetch_lines(const SlurmQuery& query, const LineHandler& on_line) override {
    int n;
    {
      std::unique_lock lock(mu_);
      n = ++fetches_;
      started_.notify_all();
      released_.wait(lock, [&] { return !hold_; });
      if (!failure_.empty()) throw SlurmError(query.name, query.argv.at(0), 0, failure_);
    }
    return deliver_lines(query, query.argv.at(0), query.argv.at(0) + " answer " + std::to_string(n) + "\n", on_line);
  }
  std::string answerer(const SlurmQuery&) const override { return who_; }

  int fetches() {
    std::lock_guard lock(mu_);
    return fetches_;
  }
  void hold() {
    std::lock_guard lock(mu_);
    hold_ = true;
  }
  void release() {
    std::lock_guard lock(mu_);
    hold_ = false;
    released_.notify_all();
  }
  void wait_for_fetch(int n) {
    std::unique_lock lock(mu_);
    started_.wait(lock, [&] { return fetches_ >= n; });
  }
  void fail_with(std::string message) {
    std::lock_guard lock(mu_);
    failure_ = std::move(message);
  }

 private:
  std::string who_;
  std::mutex mu_;
  std::condition_variable started_, released_;
  int fetches_ = 0;
  bool hold_ = false;
  std::string failure_;
};

SlurmQuery query(std::string name, std::vector<std::string> argv) { return {std::move(name), std::move(argv), {}}; }

TEST(SlurmSnapshot, AQueryAskedTwiceInOneCycleRunsOnce) {
  Snapshot snapshot;
  CountingClient client;
  std::string first, second;
  {
    SnapshotRound round(snapshot, 60);
    first = client.output(query("a", {"squeue", "--json"}));
    EXPECT_EQ(round.counters().run, 1u);
    EXPECT_EQ(round.counters().shared, 0u);
  }
  {
    SnapshotRound round(snapshot, 60);
    second = client.output(query("b", {"squeue", "--json"}));  // another name, the same command: the same answer
    EXPECT_EQ(round.counters().asked, 1u);
    EXPECT_EQ(round.counters().run, 0u);
    EXPECT_EQ(round.counters().shared, 1u);
  }
  EXPECT_EQ(client.fetches(), 1);
  EXPECT_EQ(first, "squeue answer 1");
  EXPECT_EQ(second, first);
  EXPECT_EQ(snapshot.held_queries(), 1u);
  EXPECT_EQ(snapshot.held_bytes(), std::string("squeue answer 1\n").size());
}

TEST(SlurmSnapshot, ANewCycleAsksAgainAndReplacesTheAnswer) {
  Snapshot snapshot;
  CountingClient client;
  auto ask = [&](int64_t cycle) {
    SnapshotRound round(snapshot, cycle);
    return client.output(query("a", {"sinfo"}));
  };
  EXPECT_EQ(ask(0), "sinfo answer 1");
  EXPECT_EQ(ask(60), "sinfo answer 2");
  EXPECT_EQ(ask(60), "sinfo answer 2");
  // A round of an older cycle that overran asks Slurm itself, and the newer answer stays.
  EXPECT_EQ(ask(0), "sinfo answer 3");
  EXPECT_EQ(ask(60), "sinfo answer 2");
  EXPECT_EQ(client.fetches(), 3);
  EXPECT_EQ(snapshot.held_queries(), 1u);
}

TEST(SlurmSnapshot, DifferentArgvOrAnswererIsNotShared) {
  Snapshot snapshot;
  CountingClient one("cli SLURM_CONF=/a"), other("cli SLURM_CONF=/b");
  SnapshotRound round(snapshot, 0);
  one.output(query("a", {"sinfo", "-a b"}));
  one.output(query("a", {"sinfo", "-a", "b"}));  // the same words joined differently: another query
  other.output(query("a", {"sinfo", "-a", "b"}));
  EXPECT_EQ(one.fetches(), 2);
  EXPECT_EQ(other.fetches(), 1);
  EXPECT_EQ(round.counters().run, 3u);
  EXPECT_EQ(round.counters().shared, 0u);
}

TEST(SlurmSnapshot, OutsideARoundEveryQueryRuns) {
  CountingClient client;
  client.output(query("a", {"sinfo"}));
  client.output(query("a", {"sinfo"}));
  EXPECT_EQ(client.fetches(), 2);
}

TEST(SlurmSnapshot, ASecondAskerWaitsForTheFirstOnesCommand) {
  Snapshot snapshot;
  CountingClient client;
  client.hold();
  std::string a, b;
  SnapshotCounters second_counters;
  std::thread first([&] {
    SnapshotRound round(snapshot, 0);
    a = client.output(query("a", {"squeue"}));
  });
  client.wait_for_fetch(1);  // the first asker's command runs, held
  std::atomic<bool> second_started = false;
  std::thread second([&] {
    SnapshotRound round(snapshot, 0);
    second_started = true;
    b = client.output(query("a", {"squeue"}));
    second_counters = round.counters();
  });
  while (!second_started) std::this_thread::yield();
  // Give the second asker time to reach the held query. Either way it must not run the command itself: waiting for
  // the first one's answer, or reading it once there, both leave one fetch (an asker that ran its own would be
  // held too, and count a second).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  client.release();
  first.join();
  second.join();
  EXPECT_EQ(client.fetches(), 1);
  EXPECT_EQ(a, "squeue answer 1");
  EXPECT_EQ(b, a);
  EXPECT_EQ(second_counters.shared, 1u);
  EXPECT_EQ(second_counters.run, 0u);
}

TEST(SlurmSnapshot, AFailureReachesEveryAskerOfTheCycle) {
  Snapshot snapshot;
  CountingClient client;
  client.fail_with("slurmctld did not answer");
  for (int i = 0; i < 2; ++i) {
    SnapshotRound round(snapshot, 0);
    try {
      client.output(query("jobs", {"squeue"}));
      ADD_FAILURE() << "no error for asker " << i;
    } catch (const SlurmError& e) {
      EXPECT_NE(std::string(e.what()).find("slurmctld did not answer"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(client.fetches(), 1);  // the failed answer is the cycle's answer: no retry storm
  EXPECT_EQ(snapshot.held_bytes(), 0u);
  SnapshotRound next(snapshot, 60);  // the next cycle asks again
  client.fail_with("");
  EXPECT_EQ(client.output(query("jobs", {"squeue"})), "squeue answer 2");
}

// A handler that throws stops the delivery with a SlurmError naming the line, as outside a snapshot.
TEST(SlurmSnapshot, AHandlerErrorNamesTheLine) {
  Snapshot snapshot;
  CountingClient client;
  SnapshotRound round(snapshot, 0);
  try {
    client.stream_lines(query("a", {"sinfo"}), [](std::string_view) { throw ParseError("bad row"); });
    ADD_FAILURE() << "no error";
  } catch (const SlurmError& e) {
    EXPECT_EQ(e.line(), 1u);
    EXPECT_NE(std::string(e.what()).find("bad row"), std::string::npos) << e.what();
  }
}

// Answers by name from fixtures; counts what it ran.
class FixtureClient : public SlurmClient {
 public:
  size_t fetch_lines(const SlurmQuery& q, const LineHandler& on_line) override {
    asked.push_back(q.name);
    auto it = outputs.find(q.name);
    if (it == outputs.end()) throw SlurmError(q.name, q.name, 0, "no fixture");
    return deliver_lines(q, q.name, it->second, on_line);
  }
  std::string answerer(const SlurmQuery&) const override { return "fixtures"; }
  std::map<std::string, std::string> outputs;
  std::vector<std::string> asked;
};

const std::string kDir = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-22.05/";

// slurm_monitor's node rows read from the `sinfo --json` answer (the derivation `gcm collect` sets up) are the rows
// it reads from its own `sinfo -O`, on the same cluster state.
TEST(SlurmSnapshot, SlurmMonitorsNodesDerivedFromSinfoJson) {
  FixtureClient client;
  client.outputs["slurm_monitor_sinfo"] = read_file(kDir + "sinfo-O-nodes.txt");
  client.outputs["sinfo_all_nodes_json"] = read_file(kDir + "sinfo-all-N.json");
  auto own = slurm_monitor::read_sinfo(client, std::chrono::seconds(5), nullptr);
  ASSERT_EQ(client.asked, std::vector<std::string>{"slurm_monitor_sinfo"});

  Snapshot snapshot;
  snapshot.derive("slurm_monitor_sinfo", query("sinfo_all_nodes_json", {"sinfo", "--all", "-N", "--json"}),
                  [](std::string_view json) { return render_sinfo_nodes(json); });
  SnapshotRound round(snapshot, 0);
  client.asked.clear();
  client.output(query("sinfo_all_nodes_json", {"sinfo", "--all", "-N", "--json"}));  // slurm_job_monitor asks
  auto derived = slurm_monitor::read_sinfo(client, std::chrono::seconds(5), nullptr);
  EXPECT_EQ(client.asked, std::vector<std::string>{"sinfo_all_nodes_json"});  // sinfo ran once for both
  EXPECT_EQ(round.counters().derived, 1u);
  EXPECT_EQ(round.counters().shared, 1u);

  ASSERT_EQ(own.size(), 9u);
  ASSERT_EQ(derived.size(), own.size());
  for (size_t i = 0; i < own.size(); ++i) {
    SCOPED_TRACE(own[i].name + "/" + own[i].partition);
    EXPECT_EQ(derived[i].name, own[i].name);
    EXPECT_EQ(derived[i].partition, own[i].partition);
    EXPECT_EQ(derived[i].state_text, own[i].state_text);
    EXPECT_EQ(derived[i].total_cpus, own[i].total_cpus);
    EXPECT_EQ(derived[i].alloc_cpus, own[i].alloc_cpus);
    EXPECT_EQ(derived[i].gpus, own[i].gpus);
    EXPECT_EQ(derived[i].gpus_used, own[i].gpus_used);
  }
}

TEST(SlurmSnapshot, AnUnreadableSourceNamesBothQueries) {
  FixtureClient client;
  client.outputs["sinfo_all_nodes_json"] = "{\"nodes\": 3}";
  Snapshot snapshot;
  snapshot.derive("slurm_monitor_sinfo", query("sinfo_all_nodes_json", {"sinfo", "--json"}),
                  [](std::string_view json) { return render_sinfo_nodes(json); });
  SnapshotRound round(snapshot, 0);
  try {
    client.output(query("slurm_monitor_sinfo", {"sinfo", "-O", "x"}));
    ADD_FAILURE() << "no error";
  } catch (const SlurmError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("sinfo --json"), std::string::npos) << what;
    EXPECT_NE(what.find("slurm_monitor_sinfo"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace gcm::slurm

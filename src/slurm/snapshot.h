// One Slurm snapshot per collection cycle, shared by the collectors of one process (`gcm collect`). Run as separate
// processes, slurm_job_monitor and slurm_monitor each ask slurmctld for the nodes every cycle, and every process
// asks again for the cluster name: the load operators of Slurm exporters complain about. In one process, a
// collector's round runs inside a SnapshotRound; its client's stream_lines then answers a query that another
// collector asked in the same cycle from that answer, and runs each query at most once per cycle (a second asker
// waits for the first one's answer, or its failure).
//
// What counts as the same query: the same argv asked of the same answerer (SlurmClient::answerer: the CLI with the
// same environment, slurmrestd at the same URL as the same user). A derived query is answered from another query's
// output: slurm_monitor's `sinfo -O` lines are written from `sinfo --json` (or slurmrestd's /nodes), which
// slurm_job_monitor's JSON node source reads, so one sinfo a cycle serves both.
//
// Memory: the last answer of each distinct query is held until the next cycle's answer replaces it (a 20 000-job
// squeue is about 12 MB of text).
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "slurm/client.h"

namespace gcm::slurm {

// What one collector's round asked, and how it was answered.
struct SnapshotCounters {
  uint64_t asked = 0;    // queries the collector asked
  uint64_t run = 0;      // of which this round ran (a command, a REST request)
  uint64_t shared = 0;   // answered from what another round of the same cycle ran
  uint64_t derived = 0;  // answered by rendering another query's output (counted once more, as run or shared)
};

class Snapshot {
 public:
  // Answers the query named `query_name` from the output of `source` (asked of the same client) through `render`,
  // which throws ParseError for an output it cannot read.
  using Render = std::function<std::string(std::string_view source_output)>;
  void derive(std::string query_name, SlurmQuery source, Render render);

  // The output of `query` for cycle `cycle` (a number that grows: the scheduled time of the round), asked of
  // `client` unless an answer of this cycle is held or being fetched. Throws the SlurmError of the fetch.
  std::shared_ptr<const std::string> answer(SlurmClient& client, const SlurmQuery& query, int64_t cycle,
                                            SnapshotCounters& counters);

  size_t held_queries() const;
  size_t held_bytes() const;

 private:
  using Answer = std::shared_ptr<const std::string>;
  struct Entry {
    int64_t cycle = 0;
    std::shared_future<Answer> answer;
  };
  struct Derivation {
    SlurmQuery source;
    Render render;
  };
  Answer fetch_once(SlurmClient& client, const SlurmQuery& query, int64_t cycle, SnapshotCounters& counters);

  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;  // answerer + argv -> the newest cycle's answer
  std::map<std::string, Derivation> derivations_;
};

// The snapshot cycle that the calling thread's collector round runs in: installed for the round's lifetime
// (collectors never see it; SlurmClient::stream_lines looks it up).
class SnapshotRound {
 public:
  SnapshotRound(Snapshot& snapshot, int64_t cycle);
  ~SnapshotRound();
  SnapshotRound(const SnapshotRound&) = delete;
  SnapshotRound& operator=(const SnapshotRound&) = delete;

  static SnapshotRound* current();
  size_t stream_lines(SlurmClient& client, const SlurmQuery& query, const LineHandler& on_line);
  const SnapshotCounters& counters() const { return counters_; }

 private:
  Snapshot& snapshot_;
  int64_t cycle_;
  SnapshotCounters counters_;
  SnapshotRound* outer_;
};

}  // namespace gcm::slurm

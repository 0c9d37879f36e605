// The collection loop (the reference's run_data_collection_loop): build the sink, then every --interval seconds
// run each task, cut its records into chunks of at most --chunk-size bytes of compact JSON and hand them to the sink.
// Failures are reported, never lost: with --once any failure gives exit 1; as a daemon it is logged, counted, and
// the next round runs. SIGTERM/SIGINT end the loop after the write in progress; sinks are flushed; exit 0.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectors/collector.h"
#include "collectors/shared_options.h"
#include "sinks/sink.h"

namespace gcm {

// Chunks records for a sink: a chunk's records, as a compact JSON list, stay within chunk_size bytes (0: one chunk
// per round). A single record larger than the limit goes alone in its own chunk (the reference raises instead).
class ChunkWriter : public RecordOut {
 public:
  ChunkWriter(Sink& sink, const BatchInfo& info, int64_t chunk_size) : sink_(sink), info_(info), limit_(chunk_size) {}
  // Where a record's compact-JSON size comes from when its producer knows it without encoding it (sacct_publish
  // computes it from the line); by default the record is measured.
  void size_from(std::function<size_t(const Record&)> size_of) { size_of_ = std::move(size_of); }
  void emit(const Record& r) override;
  void finish();
  uint64_t records() const { return records_; }  // handed to the sink
  uint64_t chunks() const { return chunks_; }    // begun (sent, or being sent)
  uint64_t oversized() const { return oversized_; }
  // Delivered: a chunk counts once the sink's end_chunk returned, i.e. the sink took it (for otel: the receiver
  // answered 2xx); a chunk whose write or end_chunk threw is failed, and its records are not acknowledged.
  uint64_t acknowledged_chunks() const { return acked_chunks_; }
  uint64_t acknowledged_records() const { return acked_records_; }
  uint64_t failed_chunks() const { return failed_chunks_; }

 private:
  Sink& sink_;
  BatchInfo info_;
  int64_t limit_;
  std::function<size_t(const Record&)> size_of_;
  bool open_ = false;
  int64_t bytes_ = 0;
  uint64_t records_ = 0;
  uint64_t chunks_ = 0;
  uint64_t oversized_ = 0;
  uint64_t acked_chunks_ = 0;
  uint64_t acked_records_ = 0;
  uint64_t failed_chunks_ = 0;

  void end_chunk();
};

struct LoopStats {
  uint64_t rounds = 0;
  uint64_t records = 0;
  uint64_t failures = 0;  // task or sink failures
};

// One collector's rounds: its tasks and its sink, built once; run_round() runs every task once (what the loop below
// does every --interval seconds, and `gcm collect` on its own schedule). Throws UsageError for a bad option
// (--chunk-size, the collector's own) and SinkUsageError for the sink's.
class CollectionRounds {
 public:
  CollectionRounds(std::string command, const SharedOptions& opts, Collector& collector, CollectorContext ctx);
  // Every task once; failures are logged and counted. False when a task or a write failed.
  bool run_round();
  // Flushes and shuts the sink down; false (logged) when the rest could not be delivered.
  bool shutdown_sink();
  const LoopStats& stats() const { return stats_; }
  const CollectorContext& context() const { return ctx_; }

 private:
  std::string command_;
  const SharedOptions& opts_;
  CollectorContext ctx_;  // the cluster name may still change (retry_cluster)
  int64_t chunk_size_ = 0;
  std::vector<CollectorTask> tasks_;
  std::unique_ptr<Sink> sink_;
  LoopStats stats_;
};

// Runs the loop; returns the process exit code (0 ok, 1 runtime failure with --once, 2 usage error).
int run_collection_loop(const std::string& command, const SharedOptions& opts, Collector& collector,
                        const CollectorContext& ctx, LoopStats* stats = nullptr);

// Builds the sink for the shared options (dry-run -> stdout). Throws SinkUsageError.
std::unique_ptr<Sink> make_sink_for(const std::string& command, const SharedOptions& opts,
                                    std::shared_ptr<spdlog::logger> log);

}  // namespace gcm

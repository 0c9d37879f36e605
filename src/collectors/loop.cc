#include "collectors/loop.h"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "core/json.h"
#include "core/shutdown.h"
#include "core/si_size.h"

namespace gcm {

void ChunkWriter::end_chunk() {
  open_ = false;
  try {
    sink_.end_chunk();
  } catch (...) {
    ++failed_chunks_;
    throw;
  }
  ++acked_chunks_;
  acked_records_ = records_;
}

void ChunkWriter::emit(const Record& r) {
  if (limit_ > 0) {
    int64_t size = static_cast<int64_t>(size_of_ ? size_of_(r) : compact_json_size(r));
    if (open_ && bytes_ + 1 + size > limit_) end_chunk();
    if (size + 2 > limit_) ++oversized_;
    bytes_ = open_ ? bytes_ + 1 + size : 2 + size;
  }
  if (!open_) {
    sink_.begin_chunk(info_);
    open_ = true;
    ++chunks_;
  }
  try {
    sink_.write(r);  // a sink may send part of a large chunk from here
  } catch (...) {
    open_ = false;
    ++failed_chunks_;
    throw;
  }
  ++records_;
}

void ChunkWriter::finish() {
  if (open_) end_chunk();
}

std::unique_ptr<Sink> make_sink_for(const std::string& command, const SharedOptions& opts,
                                    std::shared_ptr<spdlog::logger> log) {
  SinkContext ctx;
  ctx.command = command;
  if (!opts.once) ctx.interval_seconds = static_cast<double>(opts.interval);
  ctx.retry.retries = opts.retries;
  ctx.retry.initial_backoff_s = opts.retry_backoff;
  ctx.log = log;
  if (opts.dry_run) {
    if (!opts.sink_opts.empty() && log) log->warn("--dry-run: ignoring the sink options of sink '{}'", opts.sink);
    return make_sink("stdout", {}, ctx);
  }
  return make_sink(opts.sink, opts.sink_opts, ctx);
}

namespace {

// Before a later round: the cluster name Slurm did not give at start-up, if it answers now.
void retry_cluster_name(const std::string& command, CollectorContext& ctx) {
  if (!ctx.retry_cluster) return;
  if (auto name = ctx.retry_cluster()) {
    ctx.log->info("{}: cluster name {} read from Slurm; records carry it from this round on", command, *name);
    ctx.cluster = *name;
    ctx.retry_cluster = nullptr;
  }
}

}  // namespace

int run_collection_loop(const std::string& command, const SharedOptions& opts, Collector& collector,
                        const CollectorContext& start_ctx, LoopStats* stats_out) {
  CollectorContext ctx = start_ctx;  // the cluster name may still change (retry_cluster)
  auto log = ctx.log;
  LoopStats stats;
  int64_t chunk_size;
  try {
    chunk_size = parse_si_size(opts.chunk_size);
  } catch (const SiSizeError& e) {
    throw UsageError(fmt::format("Invalid value for '--chunk-size': {}", e.what()));
  }
  std::vector<CollectorTask> tasks = collector.tasks(ctx);
  std::unique_ptr<Sink> sink = make_sink_for(command, opts, log);
  install_shutdown_handlers();

  using Clock = std::chrono::steady_clock;
  bool failed_once = false;
  while (!shutdown_requested()) {
    auto t0 = Clock::now();
    if (stats.rounds > 0) retry_cluster_name(command, ctx);
    int64_t log_time = static_cast<int64_t>(std::time(nullptr));
    for (const auto& task : tasks) {
      BatchInfo info;
      info.ts = log_time;
      info.schema = task.schema;
      info.data_type = task.schema->data_type;
      info.identifier = task.schema->identifier;
      info.heterogeneous_cluster_v1 = opts.heterogeneous_cluster_v1;
      ChunkWriter writer(*sink, info, chunk_size);
      bool ok = true;
      try {
        sink->begin_round(info);
        try {
          task.collect(ctx, writer);
        } catch (const SinkError&) {
          throw;
        } catch (const std::exception& e) {
          ok = false;
          // Records produced before the failure are still delivered below.
          log->error("{}: collecting {} failed: {}", command, task.name, e.what());
        }
        writer.finish();
        if (ok) sink->end_round(info);
      } catch (const SinkError& e) {
        ok = false;
        log->error("{}: writing {} records to sink '{}' failed: {}", command, task.name,
                   opts.dry_run ? "stdout" : opts.sink, e.what());
      }
      if (writer.oversized())
        log->warn("{}: {} record(s) of {} were larger than --chunk-size {} and were sent alone", command,
                  writer.oversized(), task.name, opts.chunk_size);
      stats.records += writer.records();
      if (!ok) {
        ++stats.failures;
        failed_once = true;
        try {
          sink->round_failed(info);
        } catch (const std::exception& e) {
          log->error("{}: sink '{}' could not record the failed round: {}", command, opts.sink, e.what());
        }
      }
      log->debug("{}: {} records of {} in {} chunk(s)", command, writer.records(), task.name, writer.chunks());
    }
    ++stats.rounds;
    if (opts.once) break;
    if (stats.failures) log->info("{}: {} failure(s) so far in {} round(s)", command, stats.failures, stats.rounds);
    auto elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    double wait = std::max(0.0, static_cast<double>(opts.interval) - elapsed);
    if (!sleep_unless_shutdown(std::chrono::duration<double>(wait))) break;
  }
  int rc = 0;
  try {
    sink->shutdown();  // explicitly, so a failure to deliver the rest is the exit code and not only a log line
  } catch (const std::exception& e) {
    log->error("{}: shutting down sink '{}' failed: {}", command, opts.dry_run ? "stdout" : opts.sink, e.what());
    rc = 1;
  }
  if (stats_out) *stats_out = stats;
  if (shutdown_requested()) {
    log->info("{}: stopped by signal after {} round(s)", command, stats.rounds);
    return rc;
  }
  if (opts.once && failed_once) return 1;
  return rc;
}

}  // namespace gcm

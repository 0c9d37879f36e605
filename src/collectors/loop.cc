#include "collectors/loop.h"
#include "core/clock.h"

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

CollectionRounds::CollectionRounds(std::string command, const SharedOptions& opts, Collector& collector,
                                   CollectorContext ctx)
    : command_(std::move(command)), opts_(opts), ctx_(std::move(ctx)) {
  try {
    chunk_size_ = parse_si_size(opts.chunk_size);
  } catch (const SiSizeError& e) {
    throw UsageError(fmt::format("Invalid value for '--chunk-size': {}", e.what()));
  }
  tasks_ = collector.tasks(ctx_);
  sink_ = make_sink_for(command_, opts, ctx_.log);
}

bool CollectionRounds::run_round() {
  const std::string& command = command_;
  auto& log = ctx_.log;
  if (stats_.rounds > 0) retry_cluster_name(command, ctx_);
  int64_t log_time = unix_time_now();
  bool round_ok = true;
  for (const auto& task : tasks_) {
    BatchInfo info;
    info.ts = log_time;
    info.schema = task.schema;
    info.data_type = task.schema->data_type;
    info.identifier = task.schema->identifier;
    info.heterogeneous_cluster_v1 = opts_.heterogeneous_cluster_v1;
    ChunkWriter writer(*sink_, info, chunk_size_);
    bool ok = true;
    try {
      sink_->begin_round(info);
      try {
        task.collect(ctx_, writer);
      } catch (const SinkError&) {
        throw;
      } catch (const std::exception& e) {
        ok = false;
        // Records produced before the failure are still delivered below.
        log->error("{}: collecting {} failed: {}", command, task.name, e.what());
      }
      writer.finish();
      if (ok) sink_->end_round(info);
    } catch (const SinkError& e) {
      ok = false;
      log->error("{}: writing {} records to sink '{}' failed: {}", command, task.name,
                 opts_.dry_run ? "stdout" : opts_.sink, e.what());
    }
    if (writer.oversized())
      log->warn("{}: {} record(s) of {} were larger than --chunk-size {} and were sent alone", command,
                writer.oversized(), task.name, opts_.chunk_size);
    stats_.records += writer.records();
    if (!ok) {
      ++stats_.failures;
      round_ok = false;
      try {
        sink_->round_failed(info);
      } catch (const std::exception& e) {
        log->error("{}: sink '{}' could not record the failed round: {}", command, opts_.sink, e.what());
      }
    }
    log->debug("{}: {} records of {} in {} chunk(s)", command, writer.records(), task.name, writer.chunks());
  }
  ++stats_.rounds;
  return round_ok;
}

bool CollectionRounds::shutdown_sink() {
  try {
    sink_->shutdown();  // explicitly, so a failure to deliver the rest is the exit code and not only a log line
    return true;
  } catch (const std::exception& e) {
    ctx_.log->error("{}: shutting down sink '{}' failed: {}", command_, opts_.dry_run ? "stdout" : opts_.sink,
                    e.what());
    return false;
  }
}

int run_collection_loop(const std::string& command, const SharedOptions& opts, Collector& collector,
                        const CollectorContext& start_ctx, LoopStats* stats_out) {
  auto log = start_ctx.log;
  CollectionRounds rounds(command, opts, collector, start_ctx);
  install_shutdown_handlers();

  using Clock = std::chrono::steady_clock;
  bool failed_once = false;
  while (!shutdown_requested()) {
    auto t0 = Clock::now();
    if (!rounds.run_round()) failed_once = true;
    if (opts.once) break;
    const LoopStats& stats = rounds.stats();
    if (stats.failures) log->info("{}: {} failure(s) so far in {} round(s)", command, stats.failures, stats.rounds);
    auto elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    double wait = std::max(0.0, static_cast<double>(opts.interval) - elapsed);
    if (!sleep_unless_shutdown(std::chrono::duration<double>(wait))) break;
  }
  int rc = rounds.shutdown_sink() ? 0 : 1;
  if (stats_out) *stats_out = rounds.stats();
  if (shutdown_requested()) {
    log->info("{}: stopped by signal after {} round(s)", command, rounds.stats().rounds);
    return rc;
  }
  if (opts.once && failed_once) return 1;
  return rc;
}

}  // namespace gcm

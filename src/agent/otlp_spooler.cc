#include "agent/otlp_spooler.h"

#include <algorithm>

#include "logs_service.pb.h"
#include "metrics_service.pb.h"

namespace gcm::agent {

namespace {

otlp::ExporterConfig without_exporter_retries(otlp::ExporterConfig cfg) {
  cfg.retry.retries = 0;
  return cfg;
}

double age_seconds(int64_t since_unix_ms) {
  if (since_unix_ms == 0) return 0;
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                 .count();
  return std::max<double>(0, static_cast<double>(now - since_unix_ms) / 1000.0);
}

}  // namespace

OtlpSpooler::OtlpSpooler(otlp::ExporterConfig cfg, std::unique_ptr<Spool> spool, std::shared_ptr<spdlog::logger> log,
                         SpoolerOptions opts)
    : exporter_(without_exporter_retries(std::move(cfg)), log),
      spool_(std::move(spool)),
      log_(std::move(log)),
      opts_(opts) {
  thread_ = std::thread([this] { run(); });
}

OtlpSpooler::~OtlpSpooler() { stop(); }

bool OtlpSpooler::enqueue(const otlp::MetricsBuilder& metrics) {
  if (metrics.points() == 0) return true;
  return enqueue(SpoolKind::Metrics, metrics.points(), metrics.request().SerializeAsString());
}

bool OtlpSpooler::enqueue(const otlp::LogsBuilder& logs) {
  if (logs.records() == 0) return true;
  return enqueue(SpoolKind::Logs, logs.records(), logs.request().SerializeAsString());
}

bool OtlpSpooler::enqueue(SpoolKind kind, uint64_t points, const std::string& serialized_request) {
  bool spooled = false;
  try {
    spooled = spool_->append(kind, points, serialized_request);  // an oversized entry is counted by the spool
  } catch (const SpoolError& e) {
    unspooled_points_ += points;
    if (log_) log_->error("{}; a window of {} points is lost", e.what(), points);
    std::lock_guard lock(mu_);
    last_error_ = e.what();
    return false;
  }
  {
    std::lock_guard lock(mu_);
    ++appends_;
  }
  wake_.notify_all();
  return spooled;
}

void OtlpSpooler::fail(const std::string& why) {
  ++send_failures_;
  std::lock_guard lock(mu_);
  last_error_ = why;
}

// A request the receiver parsed and refused, or bytes that are not a request: sending it again cannot help, and
// keeping it would hold every later window behind it.
OtlpSpooler::Outcome OtlpSpooler::send(const SpoolEntry& e) {
  try {
    if (e.kind == SpoolKind::Metrics) {
      opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest req;
      if (!req.ParseFromString(e.bytes))
        throw otlp::RejectedRequestError("the spooled entry is not an OTLP metrics request");
      exporter_.send(otlp::Signal::Metrics, req);
    } else if (e.kind == SpoolKind::Logs) {
      opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest req;
      if (!req.ParseFromString(e.bytes))
        throw otlp::RejectedRequestError("the spooled entry is not an OTLP logs request");
      exporter_.send(otlp::Signal::Logs, req);
    } else {
      throw otlp::RejectedRequestError("the spooled entry has an unknown kind " +
                                       std::to_string(static_cast<int>(e.kind)));
    }
  } catch (const otlp::TransientExportError& err) {
    fail(err.what());
    if (log_) log_->warn("OTLP export failed, {} entries spooled: {}", spool_->stats().entries, err.what());
    return Outcome::Failed;
  } catch (const otlp::RejectedRequestError& err) {
    return drop(e, err.what());
  } catch (const otlp::ExportError& err) {
    // A wrong token, a wrong path or a receiver in trouble (401, 403, 404, 5xx): the windows are kept and sent
    // again once that is fixed; until then the spool fills and drops its oldest, counted, as in an outage.
    fail(err.what());
    if (log_)
      log_->error("OTLP export refused, kept in the spool ({} entries) and retried: {}", spool_->stats().entries,
                  err.what());
    return Outcome::Failed;
  }
  // Counted before the pop: flush() returns once the spool is empty, and its caller reads the counts.
  ++sent_entries_;
  sent_points_ += e.points;
  spool_->pop_front(e.seq);
  return Outcome::Delivered;
}

OtlpSpooler::Outcome OtlpSpooler::drop(const SpoolEntry& e, const std::string& why) {
  ++rejected_entries_;
  rejected_points_ += e.points;
  {
    std::lock_guard lock(mu_);
    last_error_ = why;
  }
  if (log_) log_->error("OTLP export of spool entry {} ({} points) refused, dropped: {}", e.seq, e.points, why);
  spool_->pop_front(e.seq);
  return Outcome::Dropped;
}

// `appends` is the count read before the failed attempt: a window appended during the attempt (or while its
// failure was logged) ends the wait at once, never after a whole backoff.
void OtlpSpooler::wait_after_failure(std::chrono::milliseconds backoff, uint64_t appends) {
  std::unique_lock lock(mu_);
  bool flushing = flushing_;
  if (flushing) backoff = std::min(backoff, opts_.initial_backoff);
  // A new window or a flush starting is a good moment to try again: the receiver may be back.
  wake_.wait_for(lock, backoff, [&] { return stopping_ || appends_ != appends || (flushing_ && !flushing); });
}

void OtlpSpooler::run() {
  auto backoff = opts_.initial_backoff;
  while (true) {
    uint64_t appends;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      appends = appends_;  // before front(): an append after it wakes the idle wait below
    }
    Outcome outcome = Outcome::Failed;
    bool idle = false;
    try {
      auto e = spool_->front();
      if (e)
        outcome = send(*e);
      else
        idle = true;
    } catch (const std::exception& err) {  // SpoolError reading or acknowledging: the disk, not the receiver
      fail(err.what());
      if (log_) log_->error("OTLP spool: {}", err.what());
    }
    {
      std::lock_guard lock(mu_);  // flush() checks the spool under mu_: taking it here means it cannot miss this
    }
    progress_.notify_all();
    if (idle) {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || appends_ != appends; });
      continue;
    }
    if (outcome != Outcome::Failed) {
      backoff = opts_.initial_backoff;
      continue;
    }
    wait_after_failure(backoff, appends);
    backoff = std::min(backoff * 2, opts_.max_backoff);
  }
}

bool OtlpSpooler::flush(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(mu_);
  flushing_ = true;
  wake_.notify_all();
  bool empty = progress_.wait_until(lock, deadline, [&] { return stopping_ || spool_->stats().entries == 0; });
  flushing_ = false;
  return empty && spool_->stats().entries == 0;
}

void OtlpSpooler::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  progress_.notify_all();
  if (thread_.joinable()) thread_.join();
}

SpoolerStats OtlpSpooler::stats() const {
  SpoolerStats s;
  s.sent_entries = sent_entries_;
  s.sent_points = sent_points_;
  s.send_failures = send_failures_;
  s.rejected_entries = rejected_entries_;
  s.rejected_points = rejected_points_;
  s.unspooled_points = unspooled_points_;
  s.spool = spool_->stats();
  s.oldest_age_seconds = age_seconds(s.spool.oldest_unix_ms);
  std::lock_guard lock(mu_);
  s.last_error = last_error_;
  return s;
}

}  // namespace gcm::agent

#include "otlp/delivery.h"
#include "core/clock.h"

#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace gcm::otlp {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

namespace {

size_t slot_of(Signal s) { return static_cast<size_t>(s); }

// The largest body sent from the spool at once: the batch a memory queue would have sent, in bytes.
constexpr uint64_t kSpoolBatchBytes = 8u << 20;
// Requests appended with Sync::Later are made durable at least this often.
constexpr auto kSpoolSyncInterval = std::chrono::seconds(1);

double age_seconds(int64_t since_unix_ms) {
  if (since_unix_ms == 0) return 0;
  return std::max<double>(0, static_cast<double>(unix_ms_now() - since_unix_ms) / 1000.0);
}

// slurm_processor before the shared spool wrote one file per batch, "<seq>-<signal>-<items>.pb", in its spool
// directory. An upgrade must not lose them: they are appended to the spool, in order, and deleted.
void import_batch_files(Spool& spool, const std::string& dir, spdlog::logger* log) {
  struct Old {
    unsigned long long seq, items;
    Signal signal;
    fs::path path;
  };
  std::vector<Old> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    unsigned long long seq = 0, items = 0;
    char sig[16] = {};
    int end = 0;
    if (std::sscanf(name.c_str(), "%llu-%15[a-z]-%llu.pb%n", &seq, sig, &items, &end) != 3 ||
        static_cast<size_t>(end) != name.size())
      continue;
    std::string s = sig;
    if (s != "metrics" && s != "logs" && s != "traces") continue;
    Signal signal = s == "metrics" ? Signal::Metrics : s == "logs" ? Signal::Logs : Signal::Traces;
    found.push_back({seq, items, signal, e.path()});
  }
  std::sort(found.begin(), found.end(), [](const Old& a, const Old& b) { return a.seq < b.seq; });
  for (const Old& f : found) {
    std::ifstream in(f.path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) {
      if (log) log->error("spool: cannot read the batch file {}; left where it is", f.path.string());
      continue;
    }
    spool.append(f.signal, f.items, bytes);
    fs::remove(f.path, ec);
  }
  if (!found.empty() && log) log->info("spool: {} batch file(s) of an earlier version taken into the spool", found.size());
}

}  // namespace

const char* to_string(DownstreamState s) {
  switch (s) {
    case DownstreamState::Unknown:
      return "unknown";
    case DownstreamState::Up:
      return "up";
    case DownstreamState::Down:
      return "down";
  }
  return "unknown";
}

Delivery::Delivery(DeliveryOptions opts, std::shared_ptr<spdlog::logger> log)
    : opts_(std::move(opts)), log_(std::move(log)), backoff_(opts_.backoff) {
  if (!opts_.transport) throw TransportError("OTLP delivery without a transport configuration");
  now_transport_ = std::make_unique<Transport>(opts_.transport);  // throws when the configuration cannot work
  if (opts_.spool_policy == SpoolPolicy::Always) {
    if (opts_.spool_dir.empty()) throw SpoolError("spool: SpoolPolicy::Always needs a spool directory");
    opts_.concurrency = 1;  // entries leave the spool in order
  }
  if (!opts_.spool_dir.empty()) {
    spool_ = Spool::open(opts_.spool_dir, opts_.spool_bytes, log_);
    import_batch_files(*spool_, opts_.spool_dir, log_.get());
  }
  // What the queue's swings hold while the receiver keeps up (it answers late now and then): the buffers a swing
  // took are then there for the next, instead of freed and allocated again (figures in bench/README.md).
  spare_limit_ = std::min<uint64_t>(opts_.queue_bytes / 2, 32u << 20);
}

Delivery::~Delivery() { stop(); }

void Delivery::start() {
  std::lock_guard lock(mu_);
  if (started_ || stopping_) return;
  started_ = true;
  if (spool_ && log_) {
    SpoolStats s = spool_->stats();
    if (s.entries > 0)
      log_->info("{}: {} spooled request(s) ({} items) from an earlier run will be sent first", opts_.name, s.entries,
                 s.points);
  }
  for (unsigned i = 0; i < std::max(1u, opts_.concurrency); ++i) {
    senders_.emplace_back([this] { run(); });
    ::pthread_setname_np(senders_.back().native_handle(), "otlp-sender");  // for top -H and perf
  }
}

void Delivery::stop() {
  std::unique_lock lock(mu_);
  if (stopping_) return;
  draining_ = true;
  for (auto& p : pending_)
    if (p) {
      seal(*p);
      p.reset();
    }
  cv_.notify_all();
  if (started_)
    cv_.wait_for(lock, opts_.drain_timeout,
                 [this] { return queue_.empty() || st_.downstream == DownstreamState::Down; });
  stopping_ = true;
  cv_.notify_all();
  std::vector<std::thread> senders = std::move(senders_);
  lock.unlock();
  for (auto& t : senders) t.join();
  lock.lock();
  uint64_t lost = 0;
  while (!queue_.empty()) {
    Batch& b = queue_.front();
    st_.queued_items -= b.items;
    st_.queue_bytes -= b.held;
    uint64_t dropped_before = st_.dropped;
    spool_batch(b);
    lost += st_.dropped - dropped_before;
    queue_.pop_front();
  }
  if (spool_) {
    try {
      spool_->sync();
    } catch (const SpoolError& e) {
      if (log_) log_->error("{}: {}", opts_.name, e.what());
    }
  }
  if (lost && log_)
    log_->error("{}: {} items could not be delivered or spooled at shutdown and are lost", opts_.name, lost);
}

bool Delivery::empty() const {
  for (const auto& p : pending_)
    if (p) return false;
  return queue_.empty() && !spool_busy_ && (!spool_ || spool_->stats().entries == 0);
}

bool Delivery::flush(std::chrono::milliseconds timeout) {
  auto deadline = SteadyClock::now() + timeout;
  std::unique_lock lock(mu_);
  flushing_ = true;
  // The receiver may be back: try at the first backoff from now rather than at the end of a long one.
  auto soon = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                       std::chrono::duration<double>(opts_.backoff.initial_backoff_s));
  next_try_ = std::min(next_try_, soon);
  cv_.notify_all();
  bool done = cv_.wait_until(lock, deadline, [this] { return stopping_ || empty(); });
  flushing_ = false;
  return done && empty();
}

void Delivery::note_error(const std::string& what) { st_.last_error = what; }

bool Delivery::append_to_spool(Signal signal, std::span<const std::string> parts, uint64_t items, Spool::Sync sync,
                               std::unique_lock<std::mutex>* unlock_while_writing) {
  std::optional<std::string> error;
  bool appended = false;
  if (unlock_while_writing) unlock_while_writing->unlock();
  try {
    appended = spool_->append(signal, items, parts, sync);  // false: larger than the spool, counted by it
  } catch (const SpoolError& e) {
    error = e.what();
  }
  if (unlock_while_writing) unlock_while_writing->lock();
  if (appended) {
    st_.spooled += items;
    if (sync == Spool::Sync::Later) spool_dirty_ = true;
  } else if (error) {
    st_.dropped += items;
    note_error(*error);
    if (log_) log_->error("{}: {}; {} {} lost", opts_.name, *error, items, item_name(signal));
  }
  return appended;
}

bool Delivery::submit(Signal signal, std::string_view request, uint64_t items) {
  std::string copy(request);
  return take(signal, copy, items);
}

bool Delivery::take(Signal signal, std::string& request, uint64_t items) {
  if (opts_.spool_policy == SpoolPolicy::Always) {
    std::unique_lock lock(mu_);
    // Written without the lock: the senders go on while it is synced.
    bool ok = append_to_spool(signal, {&request, 1}, items, Spool::Sync::Now, &lock);
    // One request a window: its arrival is a good moment to try a receiver that was away, so it ends a backoff.
    if (ok) next_try_ = SteadyClock::now();
    cv_.notify_all();
    return ok;
  }
  // A buffer far larger than what it holds (one huge request grew it) would hold the queue's room for nothing.
  if (request.capacity() > 2 * request.size() + 4096) request.shrink_to_fit();
  std::unique_lock lock(mu_);
  if (!room_for(request.capacity(), request.size()) || stopping_) {
    count_refused(lock, signal, items);
    return false;
  }
  if (spooling()) {
    // Written before the answer, so that a kill -9 during an outage loses nothing that was accepted. Under the lock,
    // so that requests reach the spool in the order they were taken.
    bool ok = append_to_spool(signal, {&request, 1}, items, Spool::Sync::Later, nullptr);
    cv_.notify_all();
    return ok;
  }
  auto& p = pending_[slot_of(signal)];
  bool wake = false;
  if (!p) {
    p = Batch{signal, {}, 0, 0, 0, SteadyClock::now()};
    wake = true;  // a sender sets its timer to seal it after batch_timeout
  }
  std::string next;
  if (!spare_parts_.empty()) {
    next = std::move(spare_parts_.back());
    spare_parts_.pop_back();
    spare_bytes_ -= next.capacity();
  }
  p->size += request.size();
  p->held += request.capacity();
  p->items += items;
  p->parts.push_back(std::exchange(request, std::move(next)));
  if (p->items >= opts_.batch_items) {
    seal(*p);
    p.reset();
    wake = true;
  }
  lock.unlock();
  if (wake) cv_.notify_all();
  return true;
}

bool Delivery::spooling() const {
  if (!spool_) return false;
  return st_.downstream == DownstreamState::Down || spool_busy_ || spool_->stats().entries > 0;
}

void Delivery::spool_batch(const Batch& b) {
  if (!spool_) {
    st_.dropped += b.items;
    return;
  }
  append_to_spool(b.signal, b.parts, b.items, Spool::Sync::Later, nullptr);
}

void Delivery::seal(Batch& b) {
  // Once spooling has begun, later batches follow the spool so the receiver sees them in order.
  if (!spooling() && st_.queue_bytes + b.held <= opts_.queue_bytes) {
    st_.queue_bytes += b.held;
    st_.queued_items += b.items;
    queue_.push_back(std::move(b));
  } else {
    spool_batch(b);
    reuse_parts(b);
  }
}

void Delivery::spill() {
  if (!spool_) return;
  uint64_t items = 0;
  for (auto& p : pending_)
    if (p) {
      items += p->items;
      spool_batch(*p);
      reuse_parts(*p);
      p.reset();
    }
  while (!queue_.empty()) {
    Batch& b = queue_.front();
    items += b.items;
    st_.queued_items -= b.items;
    st_.queue_bytes -= b.held;
    spool_batch(b);
    reuse_parts(b);
    queue_.pop_front();
  }
  if (items && log_) log_->warn("{}: the receiver is away: {} items moved to the spool", opts_.name, items);
}

Delivery::Outcome Delivery::outcome_of(const ExportAnswer& a, Signal signal, uint64_t items) {
  switch (a.kind) {
    case AnswerKind::Accepted:
      st_.downstream = DownstreamState::Up;
      st_.delivered += items;
      ++st_.requests;
      if (a.partial()) {
        st_.rejected_partial += static_cast<uint64_t>(std::max<int64_t>(a.rejected_items, 0));
        if (log_) log_->error("{}: {}", opts_.name, a.what);
      }
      return Outcome::Delivered;
    case AnswerKind::Retry:
      st_.downstream = DownstreamState::Down;
      ++st_.retried;
      note_error(a.what);
      if (log_) log_->warn("{}: {} (will retry)", opts_.name, a.what);
      return Outcome::Retry;
    case AnswerKind::Refused:
      if (opts_.keep_refused) {
        // A wrong token, a wrong path or a receiver in trouble: kept and sent again once that is fixed; until then
        // the spool fills and drops its oldest, counted, as in an outage.
        st_.downstream = DownstreamState::Down;
        ++st_.retried;
        note_error(a.what);
        if (log_) log_->error("{}: {}; kept and retried", opts_.name, a.what);
        return Outcome::Retry;
      }
      [[fallthrough]];
    case AnswerKind::Rejected:
      st_.downstream = DownstreamState::Up;
      st_.dropped += items;
      note_error(a.what);
      if (log_) log_->error("{}: {}; {} {} dropped", opts_.name, a.what, items, item_name(signal));
      return Outcome::Dropped;
  }
  return Outcome::Dropped;
}

void Delivery::after_failure(const ExportAnswer& a) {
  double wait = backoff_.failed(a.retry_after);
  if (flushing_) wait = std::min(wait, opts_.backoff.initial_backoff_s);
  next_try_ = SteadyClock::now() +
              std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(wait));
}

void Delivery::send_from_queue(std::unique_lock<std::mutex>& lock, Transport& transport) {
  // Taken out while it is sent; put back in front (or into the spool) when it must be retried.
  Batch b = std::move(queue_.front());
  queue_.pop_front();
  lock.unlock();
  ExportAnswer answer = transport.send(b.signal, b.parts);
  lock.lock();
  Outcome o = outcome_of(answer, b.signal, b.items);
  if (o == Outcome::Retry) {
    if (spool_) {
      st_.queued_items -= b.items;
      st_.queue_bytes -= b.held;
      spool_batch(b);
      reuse_parts(b);
      spill();
    } else {
      queue_.push_front(std::move(b));
    }
    after_failure(answer);
    cv_.notify_all();  // a draining stop() gives up on a receiver that is away
    return;
  }
  backoff_.succeeded();
  st_.queued_items -= b.items;
  st_.queue_bytes -= b.held;
  reuse_parts(b);
  cv_.notify_all();
  if (!b.parts.empty()) {  // what the spare buffers had no room for is freed without the lock
    lock.unlock();
    b = Batch{};
    lock.lock();
  }
}

void Delivery::send_from_spool(std::unique_lock<std::mutex>& lock, Transport& transport) {
  spool_busy_ = true;  // the front stays the spool's until it is acknowledged: no other sender takes it
  lock.unlock();
  std::vector<SpoolEntry> entries;
  ExportAnswer answer;
  uint64_t items = 0;
  try {
    // The agent's windows go one a request, as they were made (a receiver bounds a request's size: gRPC's default is
    // 4 MiB); an outage's backlog of slurm_processor's requests goes in batches, as its memory queue sends them.
    entries = opts_.spool_policy == SpoolPolicy::Always ? spool_->front_batch(0, 0)
                                                        : spool_->front_batch(opts_.batch_items, kSpoolBatchBytes);
    if (!entries.empty()) {
      std::vector<std::string> parts;
      parts.reserve(entries.size());
      for (auto& e : entries) {
        items += e.points;
        parts.push_back(std::move(e.bytes));
      }
      answer = transport.send(entries.front().signal, parts);
    }
  } catch (const SpoolError& e) {  // the disk, not the receiver
    lock.lock();
    spool_busy_ = false;
    note_error(e.what());
    if (log_) log_->error("{}: {}", opts_.name, e.what());
    after_failure(ExportAnswer{AnswerKind::Retry, e.what(), std::nullopt, 0, ""});
    cv_.notify_all();
    return;
  }
  lock.lock();
  if (entries.empty()) {  // emptied meanwhile (its entries dropped for room, or skipped as corrupt)
    spool_busy_ = false;
    cv_.notify_all();
    return;
  }
  Outcome o = outcome_of(answer, entries.front().signal, items);
  if (o == Outcome::Retry) {
    spool_busy_ = false;  // still the front, for the next try
    after_failure(answer);
    cv_.notify_all();
    return;
  }
  backoff_.succeeded();
  if (o == Outcome::Delivered) st_.unspooled += items;
  lock.unlock();
  try {
    spool_->pop_through(entries.back().seq);
  } catch (const SpoolError& e) {
    lock.lock();
    note_error(e.what());
    if (log_) log_->error("{}: {}", opts_.name, e.what());
    lock.unlock();
  }
  lock.lock();
  spool_busy_ = false;
  cv_.notify_all();
}

// One of opts_.concurrency senders. Batches leave the memory queue oldest first, up to `concurrency` at once (a
// receiver across a network answers each request after a round trip: one at a time, a 20 ms collector would take
// at most 50 batches a second however fast it is); the spool is sent by one sender at a time, oldest first, so its
// front stays the batch in flight and later requests stay behind it.
void Delivery::run() {
  std::unique_ptr<Transport> transport;
  try {
    transport = std::make_unique<Transport>(opts_.transport);
  } catch (const TransportError& e) {  // the constructor checked the same configuration: only a vanished file
    if (log_) log_->error("{}: {}; this sender stops", opts_.name, e.what());
    return;
  }
  std::unique_lock lock(mu_);
  while (!stopping_) {
    auto now = SteadyClock::now();
    std::optional<SteadyClock::time_point> next_seal;
    for (auto& p : pending_) {
      if (!p) continue;
      auto due = p->started + opts_.batch_timeout;
      if (due <= now || draining_) {
        seal(*p);
        p.reset();
      } else if (!next_seal || due < *next_seal) {
        next_seal = due;
      }
    }
    if (spool_dirty_ && now - synced_at_ >= kSpoolSyncInterval) {
      spool_dirty_ = false;
      synced_at_ = now;
      lock.unlock();
      try {
        spool_->sync();
      } catch (const SpoolError& e) {
        if (log_) log_->error("{}: {}", opts_.name, e.what());
      }
      lock.lock();
      continue;
    }
    bool from_queue = !queue_.empty();
    bool work = from_queue || (spool_ && !spool_busy_ && spool_->stats().entries > 0);
    if (!work || now < next_try_) {
      auto until = work ? next_try_ : now + std::chrono::seconds(1);
      if (next_seal && *next_seal < until) until = *next_seal;
      if (spool_dirty_) until = std::min(until, synced_at_ + kSpoolSyncInterval);
      cv_.wait_until(lock, until);
      continue;
    }
    if (from_queue)
      send_from_queue(lock, *transport);
    else
      send_from_spool(lock, *transport);
  }
}

void Delivery::deliver_now(Signal signal, const std::string& request, uint64_t items, const RetryPolicy& policy) {
  std::lock_guard now_lock(now_mu_);
  auto once = [&] {
    ExportAnswer a = now_transport_->send(signal, {&request, 1});
    std::lock_guard lock(mu_);
    switch (a.kind) {
      case AnswerKind::Accepted:
        outcome_of(a, signal, items);
        return;
      case AnswerKind::Retry:
        st_.downstream = DownstreamState::Down;
        note_error(a.what);
        throw RetryableError(a.what, a.retry_after);
      case AnswerKind::Rejected:
        note_error(a.what);
        throw RejectedRequestError(a.what);
      case AnswerKind::Refused:
        note_error(a.what);
        throw ExportError(a.what);
    }
  };
  try {
    retry_with_backoff(policy, once, [this, &policy](const RetryableError& e, int retry, double delay) {
      {
        std::lock_guard lock(mu_);
        ++st_.retried;
      }
      if (log_) log_->warn("{}; retry {}/{} in {:.1f} s", e.what(), retry + 1, policy.retries, delay);
    });
  } catch (const RetriesExhausted& e) {
    throw TransientExportError(e.what());
  }
}

DeliveryStats Delivery::stats() const {
  std::lock_guard lock(mu_);
  DeliveryStats s = st_;
  for (const auto& p : pending_)
    if (p) {
      s.queued_items += p->items;
      s.queue_bytes += p->held;
    }
  if (spool_) {
    s.spool = spool_->stats();
    s.oldest_age_seconds = age_seconds(s.spool.oldest_unix_ms);
  }
  return s;
}

bool Delivery::room_for(uint64_t capacity, uint64_t size) const {
  uint64_t held = st_.queue_bytes;
  for (const auto& p : pending_)
    if (p) held += p->held;
  if (held + capacity <= opts_.queue_bytes) return true;
  return spool_ && spool_->stats().bytes + size + 64 <= opts_.spool_bytes;  // 64: the frame's header, and then some
}

bool Delivery::has_room(uint64_t bytes) const {
  std::lock_guard lock(mu_);
  return !stopping_ && room_for(bytes, bytes);
}

void Delivery::refused(Signal signal, uint64_t items) {
  std::unique_lock lock(mu_);
  count_refused(lock, signal, items);
}

void Delivery::count_refused(std::unique_lock<std::mutex>& lock, Signal signal, uint64_t items) {
  ++st_.refused_requests;  // the client is told to retry: not lost here, so not in dropped
  // Under overload thousands of requests a second are refused: one line every 10 s says how many, so that the log
  // neither floods the disk nor costs the CPU the process is short of.
  ++unlogged_.requests;
  unlogged_.items[slot_of(signal)] += items;
  auto now = SteadyClock::now();
  if (unlogged_.last_line.time_since_epoch().count() != 0 && now - unlogged_.last_line < std::chrono::seconds(10))
    return;
  Unlogged said = std::exchange(unlogged_, Unlogged{});
  unlogged_.last_line = now;
  lock.unlock();
  if (!log_) return;
  std::string what;
  for (Signal s : {Signal::Metrics, Signal::Logs, Signal::Traces})
    if (uint64_t n = said.items[slot_of(s)]) what += fmt::format("{}{} {}", what.empty() ? "" : ", ", n, item_name(s));
  log_->error("{}: no room in the queue ({} bytes) {}: {} request(s) refused ({}){}", opts_.name, opts_.queue_bytes,
              spool_ ? "or the spool" : "and no spool", said.requests, what,
              said.last_line.time_since_epoch().count() != 0 ? " since the last such line" : "");
}

void Delivery::reuse_parts(Batch& sent) {
  // Each keeps its size: the writer overwrites what it holds, and only zero-fills what it adds past that.
  while (!sent.parts.empty() && spare_bytes_ + sent.parts.back().capacity() <= spare_limit_) {
    spare_bytes_ += sent.parts.back().capacity();
    spare_parts_.push_back(std::move(sent.parts.back()));
    sent.parts.pop_back();
  }
}

}  // namespace gcm::otlp

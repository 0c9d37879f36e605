#include "processor/forwarder.h"

#include <pthread.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/http_client.h"
#include "logs_service.pb.h"
#include "metrics_service.pb.h"
#include "status.pb.h"
#include "trace_service.pb.h"

namespace gcm::processor {

namespace fs = std::filesystem;

namespace {

size_t slot(Signal s) { return static_cast<size_t>(s); }

bool retryable_status(long s) { return s == 429 || s == 502 || s == 503 || s == 504; }

// "<seq>-<signal>-<items>.pb"
std::optional<std::tuple<uint64_t, Signal, uint64_t>> parse_spool_name(const std::string& name) {
  unsigned long long seq = 0, items = 0;
  char sig[16] = {};
  if (std::sscanf(name.c_str(), "%llu-%15[a-z]-%llu.pb", &seq, sig, &items) != 3) return std::nullopt;
  std::string s = sig;
  Signal signal = s == "metrics" ? Signal::Metrics : s == "logs" ? Signal::Logs : Signal::Traces;
  if (s != "metrics" && s != "logs" && s != "traces") return std::nullopt;
  return std::make_tuple(static_cast<uint64_t>(seq), signal, static_cast<uint64_t>(items));
}

int64_t rejected_in(Signal signal, const std::string& body, std::string* message) {
  namespace pbl = opentelemetry::proto::collector::logs::v1;
  namespace pbm = opentelemetry::proto::collector::metrics::v1;
  namespace pbt = opentelemetry::proto::collector::trace::v1;
  if (body.empty()) return 0;
  switch (signal) {
    case Signal::Metrics: {
      pbm::ExportMetricsServiceResponse r;
      if (!r.ParseFromString(body)) return 0;
      *message = r.partial_success().error_message();
      return r.partial_success().rejected_data_points();
    }
    case Signal::Logs: {
      pbl::ExportLogsServiceResponse r;
      if (!r.ParseFromString(body)) return 0;
      *message = r.partial_success().error_message();
      return r.partial_success().rejected_log_records();
    }
    case Signal::Traces: {
      pbt::ExportTraceServiceResponse r;
      if (!r.ParseFromString(body)) return 0;
      *message = r.partial_success().error_message();
      return r.partial_success().rejected_spans();
    }
  }
  return 0;
}

std::string answer_text(const HttpResponse& res) {
  gcm::otlp::Status st;
  if (res.header("content-type").find("protobuf") != std::string::npos && st.ParseFromString(res.body) &&
      !st.message().empty())
    return st.message();
  std::string b = res.body.substr(0, 300);
  std::replace(b.begin(), b.end(), '\n', ' ');
  return b;
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

Forwarder::Forwarder(ForwarderOptions opts, std::shared_ptr<spdlog::logger> log)
    : opts_(std::move(opts)), log_(std::move(log)) {
  if (!opts_.endpoint.empty() && opts_.endpoint.back() == '/') opts_.endpoint.pop_back();
  // What the queue's swings hold while the downstream keeps up (it answers late now and then): the buffers a swing
  // took are then there for the next, instead of freed and allocated again. With 8 MiB, bench/cluster_load's queue
  // (0-22 MiB) emptied the spares, and a quarter of all requests were written into a new buffer, zero-filled whole
  // (memset 6 % of the process); with 32 MiB, 2 %. Memory freed would stay the arenas' free heap all the same.
  spare_limit_ = std::min<uint64_t>(opts_.queue_bytes / 2, 32u << 20);
}

Forwarder::~Forwarder() { stop(); }

void Forwarder::load_spool() {
  if (opts_.spool_dir.empty()) return;
  std::error_code ec;
  fs::create_directories(opts_.spool_dir, ec);
  if (ec)
    throw std::runtime_error(fmt::format("cannot create the spool directory {}: {}", opts_.spool_dir, ec.message()));
  std::vector<std::pair<uint64_t, SpoolFile>> found;
  for (const auto& e : fs::directory_iterator(opts_.spool_dir)) {
    std::string name = e.path().filename().string();
    auto parsed = parse_spool_name(name);
    if (!parsed) {
      if (name.size() > 4 && name.substr(name.size() - 4) == ".tmp") fs::remove(e.path(), ec);  // an unfinished write
      continue;
    }
    auto [seq, signal, items] = *parsed;
    found.push_back({seq, {e.path().string(), signal, items, static_cast<uint64_t>(e.file_size())}});
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [seq, f] : found) {
    spool_seq_ = std::max(spool_seq_, seq + 1);
    st_.spool_items += f.items;
    st_.spool_bytes += f.bytes;
    spool_.push_back(std::move(f));
  }
  if (!spool_.empty() && log_)
    log_->info("slurm_processor: {} spooled batches ({} items) from an earlier run will be sent", spool_.size(),
               st_.spool_items);
}

void Forwarder::start() {
  std::lock_guard lock(mu_);
  load_spool();
  for (unsigned i = 0; i < std::max(1u, opts_.concurrency); ++i) {
    senders_.emplace_back([this] { run(); });
    ::pthread_setname_np(senders_.back().native_handle(), "forward-sender");  // for top -H and perf
  }
}

void Forwarder::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || senders_.empty()) {
      stopping_ = true;
      return;
    }
    draining_ = true;
    for (auto& p : pending_)
      if (p) {
        seal(*p);
        p.reset();
      }
  }
  cv_.notify_all();
  {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, opts_.drain_timeout,
                 [this] { return queue_.empty() || st_.downstream == DownstreamState::Down; });
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : senders_) t.join();
  senders_.clear();
  std::lock_guard lock(mu_);
  uint64_t lost = 0;
  while (!queue_.empty()) {
    Batch& b = queue_.front();
    st_.queued_items -= b.items;
    st_.queue_bytes -= b.held;
    if (!spool(b)) lost += b.items;
    queue_.pop_front();
  }
  if (lost && log_)
    log_->error("slurm_processor: {} items could not be forwarded or spooled at shutdown and are lost", lost);
}

bool Forwarder::spool(const Batch& b) {
  if (opts_.spool_dir.empty()) {
    st_.dropped += b.items;
    return false;
  }
  if (st_.spool_bytes + b.size > opts_.spool_bytes) {
    st_.dropped += b.items;
    if (log_)
      log_->error("slurm_processor: the spool {} is full ({} bytes): {} {} dropped", opts_.spool_dir, st_.spool_bytes,
                  b.items, item_name(b.signal));
    return false;
  }
  std::string name = fmt::format("{:016}-{}-{}.pb", spool_seq_++, signal_name(b.signal), b.items);
  std::string path = opts_.spool_dir + "/" + name;
  std::string tmp = path + ".tmp";
  bool ok = false;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    for (const std::string& part : b.parts) out.write(part.data(), static_cast<std::streamsize>(part.size()));
    out.flush();
    ok = static_cast<bool>(out);
  }
  std::error_code ec;
  if (ok) {
    fs::rename(tmp, path, ec);
    ok = !ec;
  }
  if (!ok) {
    fs::remove(tmp, ec);
    st_.dropped += b.items;
    if (log_)
      log_->error("slurm_processor: cannot write the spool file {}: {} {} dropped", path, b.items, item_name(b.signal));
    return false;
  }
  spool_.push_back({path, b.signal, b.items, b.size});
  st_.spooled += b.items;
  st_.spool_items += b.items;
  st_.spool_bytes += b.size;
  return true;
}

void Forwarder::seal(Batch& b) {
  // Once spooling has begun, later batches follow the spool so the downstream sees them in order.
  if (spool_.empty() && st_.queue_bytes + b.held <= opts_.queue_bytes) {
    st_.queue_bytes += b.held;
    st_.queued_items += b.items;
    queue_.push_back(std::move(b));
  } else {
    spool(b);
  }
}

bool Forwarder::submit(Signal signal, std::string_view request, uint64_t items) {
  std::string copy(request);
  return take(signal, copy, items);
}

bool Forwarder::take(Signal signal, std::string& request, uint64_t items) {
  // A buffer far larger than what it holds (one huge request grew it) would hold the queue's room for nothing.
  if (request.capacity() > 2 * request.size() + 4096) request.shrink_to_fit();
  std::unique_lock lock(mu_);
  if (!room_for(request.capacity(), request.size()) || stopping_) {
    count_refused(lock, signal, items);
    return false;
  }
  auto& p = pending_[slot(signal)];
  if (!p) p = Batch{signal, {}, 0, 0, 0, std::chrono::steady_clock::now()};
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
  bool wake = false;
  if (p->items >= opts_.batch_items) {
    seal(*p);
    p.reset();
    wake = true;
  }
  lock.unlock();
  if (wake) cv_.notify_all();
  return true;
}

ForwarderStats Forwarder::stats() const {
  std::lock_guard lock(mu_);
  ForwarderStats s = st_;
  for (const auto& p : pending_)
    if (p) {
      s.queued_items += p->items;
      s.queue_bytes += p->held;
    }
  return s;
}

Forwarder::Outcome Forwarder::send(Signal signal, const std::vector<std::string>& body, uint64_t items,
                                   double* retry_after) {
  static thread_local HttpClient http;
  std::string url = opts_.endpoint + "/" + signal_path(signal);
  std::vector<std::string> headers = opts_.headers;
  headers.push_back("Content-Type: application/x-protobuf");
  HttpResponse res;
  try {
    res = http.post(url, body, headers, opts_.timeout);
  } catch (const HttpTransportError& e) {
    if (log_) log_->warn("slurm_processor: POST {}: {} (will retry)", url, e.what());
    return Outcome::Retry;
  }
  if (res.status >= 200 && res.status < 300) {
    std::string msg;
    int64_t rejected = rejected_in(signal, res.body, &msg);
    if (rejected > 0 || !msg.empty()) {
      std::lock_guard lock(mu_);
      st_.rejected_downstream += static_cast<uint64_t>(std::max<int64_t>(rejected, 0));
      if (log_)
        log_->error("slurm_processor: {} rejected {} of {} {}: {}", url, rejected, items, item_name(signal), msg);
    }
    return Outcome::Sent;
  }
  if (retryable_status(res.status)) {
    if (auto ra = parse_retry_after(res.header("retry-after"))) *retry_after = *ra;
    if (log_)
      log_->warn("slurm_processor: POST {} answered HTTP {} (will retry): {}", url, res.status, answer_text(res));
    return Outcome::Retry;
  }
  if (log_)
    log_->error("slurm_processor: POST {} answered HTTP {}: {}; {} {} dropped", url, res.status, answer_text(res),
                items, item_name(signal));
  return Outcome::Dropped;
}

// One of opts_.concurrency senders. Batches leave the memory queue oldest first, up to `concurrency` at once (a
// downstream across a network answers each request after a round trip: one at a time, a 20 ms collector would take
// at most 50 batches a second however fast it is); the spool is sent by one sender at a time, oldest first, so its
// front stays the batch in flight and seal() keeps later batches behind it.
void Forwarder::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    auto now = std::chrono::steady_clock::now();
    // Seal pending batches that waited long enough.
    std::optional<std::chrono::steady_clock::time_point> next_seal;
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
    bool work = !queue_.empty() || (!spool_.empty() && !spool_busy_);
    if (!work || now < next_try_) {
      auto until = work ? next_try_ : now + std::chrono::seconds(1);
      if (next_seal && *next_seal < until) until = *next_seal;
      cv_.wait_until(lock, until);
      continue;
    }
    // The oldest batch: the memory queue holds batches older than any spooled one (see seal()).
    bool from_queue = !queue_.empty();
    Batch b;
    std::string spool_path;
    if (from_queue) {  // taken out while it is sent, put back in front when it must be retried
      b = std::move(queue_.front());
      queue_.pop_front();
    } else {
      spool_busy_ = true;
      const SpoolFile& f = spool_.front();  // stays the front: push_back keeps references, nobody else pops
      b.signal = f.signal;
      b.items = f.items;
      spool_path = f.path;
      std::ifstream in(f.path, std::ios::binary);
      b.parts.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      if (!in.good() && !in.eof()) {
        if (log_)
          log_->error("slurm_processor: cannot read the spool file {}: {} {} dropped", f.path, b.items,
                      item_name(b.signal));
        st_.dropped += b.items;
        st_.spool_items -= f.items;
        st_.spool_bytes -= f.bytes;
        std::error_code ec;
        fs::remove(f.path, ec);
        spool_.pop_front();
        spool_busy_ = false;
        continue;
      }
    }
    lock.unlock();
    double retry_after = -1;
    Outcome o = send(b.signal, b.parts, b.items, &retry_after);
    lock.lock();
    st_.downstream = o == Outcome::Retry ? DownstreamState::Down : DownstreamState::Up;
    if (o == Outcome::Retry && from_queue) queue_.push_front(std::move(b));
    if (!from_queue && o == Outcome::Retry) spool_busy_ = false;  // still the front, for the next try
    if (o == Outcome::Retry) {
      ++st_.retried;
      backoff_ = backoff_ == 0 ? opts_.backoff_initial_s : std::min(opts_.backoff_max_s, backoff_ * 2);
      double wait = retry_after >= 0 ? std::min(retry_after, opts_.backoff_max_s) : backoff_;
      next_try_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(wait * 1000));
      cv_.notify_all();  // a draining stop() gives up on a downstream that is away
      continue;
    }
    backoff_ = 0;
    if (o == Outcome::Sent) {
      st_.forwarded += b.items;
      ++st_.requests;
    } else {
      st_.dropped += b.items;
    }
    if (from_queue) {
      st_.queued_items -= b.items;
      st_.queue_bytes -= b.held;
      reuse_parts(b);
    } else {
      if (o == Outcome::Sent) st_.unspooled += b.items;
      st_.spool_items -= spool_.front().items;
      st_.spool_bytes -= spool_.front().bytes;
      std::error_code ec;
      fs::remove(spool_path, ec);
      spool_.pop_front();
      spool_busy_ = false;
    }
    cv_.notify_all();
    if (!b.parts.empty()) {  // what the spare buffers had no room for is freed without the lock
      lock.unlock();
      b = Batch{};
      lock.lock();
    }
  }
}

bool Forwarder::room_for(uint64_t capacity, uint64_t size) const {
  uint64_t held = st_.queue_bytes;
  for (const auto& p : pending_)
    if (p) held += p->held;
  return held + capacity <= opts_.queue_bytes ||
         (!opts_.spool_dir.empty() && st_.spool_bytes + size <= opts_.spool_bytes);
}

bool Forwarder::has_room(uint64_t bytes) const {
  std::lock_guard lock(mu_);
  return !stopping_ && room_for(bytes, bytes);
}

void Forwarder::refused(Signal signal, uint64_t items) {
  std::unique_lock lock(mu_);
  count_refused(lock, signal, items);
}

void Forwarder::count_refused(std::unique_lock<std::mutex>& lock, Signal signal, uint64_t items) {
  ++st_.refused_requests;  // the client is told to retry: not lost here, so not in dropped
  // Under overload thousands of requests a second are refused: one line every 10 s says how many, so that the log
  // neither floods the disk nor costs the CPU the processor is short of.
  ++unlogged_.requests;
  unlogged_.items[slot(signal)] += items;
  auto now = std::chrono::steady_clock::now();
  if (unlogged_.last_line.time_since_epoch().count() != 0 && now - unlogged_.last_line < std::chrono::seconds(10)) {
    return;
  }
  Unlogged said = std::exchange(unlogged_, Unlogged{});
  unlogged_.last_line = now;
  lock.unlock();
  if (log_) {
    std::string what;
    for (Signal s : {Signal::Metrics, Signal::Logs, Signal::Traces})
      if (uint64_t n = said.items[slot(s)]) what += fmt::format("{}{} {}", what.empty() ? "" : ", ", n, item_name(s));
    log_->error("slurm_processor: no room in the queue ({} bytes) {}: {} request(s) refused ({}){}", opts_.queue_bytes,
                opts_.spool_dir.empty() ? "and no spool" : "or the spool", said.requests, what,
                said.last_line.time_since_epoch().count() != 0 ? " since the last such line" : "");
  }
}

void Forwarder::reuse_parts(Batch& sent) {
  // Each keeps its size: the writer overwrites what it holds, and only zero-fills what it adds past that.
  while (!sent.parts.empty() && spare_bytes_ + sent.parts.back().capacity() <= spare_limit_) {
    spare_bytes_ += sent.parts.back().capacity();
    spare_parts_.push_back(std::move(sent.parts.back()));
    sent.parts.pop_back();
  }
}

}  // namespace gcm::processor

#include "otlp/spool.h"
#include "core/clock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <deque>
#include <map>

#include <fmt/format.h>

#include "otlp/spool_files.h"
#include "otlp/spool_format.h"
#include "core/private_file.h"

namespace gcm::otlp {

namespace {

// Where a live entry is: enough to read it back without keeping its bytes in memory.
struct Slot {
  uint64_t seq;
  uint64_t segment;  // first seq of its segment file
  uint64_t offset;
  uint32_t length;
  uint8_t kind;
  uint64_t points;
  int64_t appended_unix_ms;
};

// On disk a signal is 1 + its value (metrics 1, logs 2, traces 3): the agent's spools from before traces read alike.
uint8_t kind_byte(Signal s) { return static_cast<uint8_t>(static_cast<uint8_t>(s) + 1); }
std::optional<Signal> signal_of_kind(uint8_t kind) {
  if (kind < 1 || kind > kSignalCount) return std::nullopt;
  return static_cast<Signal>(kind - 1);
}

}  // namespace

struct Spool::State {
  std::string dir;
  uint64_t max_bytes = 0;
  uint64_t segment_bytes = 0;  // a segment is closed once it reaches this size
  std::shared_ptr<spdlog::logger> log;
  int lock_fd = -1;
  int active_fd = -1;  // the segment being appended to; -1 until the first append after open
  uint64_t active_segment = 0;
  int read_fd = -1;  // the segment front() last read from
  uint64_t read_segment = 0;
  std::map<uint64_t, uint64_t> segment_sizes;  // first seq -> bytes on disk
  std::deque<Slot> live;
  uint64_t live_points = 0;  // the points of `live`, kept beside it (every push and pop goes through these two)
  void push_live(const Slot& slot) {
    live.push_back(slot);
    live_points += slot.points;
  }
  void pop_live() {
    live_points -= live.front().points;
    live.pop_front();
  }
  uint64_t acked = 0;
  uint64_t next_seq = 1;
  uint64_t disk_bytes = 0;
  SpoolStats counters;

  ~State() {
    for (int fd : {active_fd, read_fd, lock_fd})
      if (fd >= 0) ::close(fd);
  }
  std::string path_of(uint64_t segment) const { return dir + "/" + segment_name(segment); }

  void read_ack();
  void scan_segment(uint64_t segment, uint64_t& last_seq);
  void write_ack(uint64_t seq);
  void delete_dead_segments();
  void delete_segment(uint64_t segment);
  void drop_oldest_segment();
  void start_segment();
  std::optional<SpoolEntry> read_front();
  std::optional<SpoolEntry> read_slot(const Slot& s);
  void skip_front(const char* why);
  void pop_through(uint64_t seq);
};

void Spool::State::read_ack() {
  std::string why;
  auto text = read_private_file(dir + "/ack", &why);
  if (!text) {
    if (!why.empty()) throw SpoolError("spool: " + why);
    return;  // a new spool
  }
  uint64_t seq = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), seq);
  if (ec != std::errc() || end == text->data()) {
    // Only damage makes this happen (the file is replaced by rename). Replaying everything duplicates; losing the
    // spool would be worse.
    if (log) log->error("spool: '{}/ack' is unreadable; every entry in the spool will be sent again", dir);
    return;
  }
  acked = seq;
}

// Indexes the live entries of one segment. The first frame that is torn or fails its CRC ends the segment: it and
// everything after it are cut off (framing cannot be trusted past it), and the segments after it are still read.
void Spool::State::scan_segment(uint64_t segment, uint64_t& last_seq) {
  std::string path = path_of(segment);
  int fd = open_spool_file(path, O_RDWR);
  std::string data;
  try {
    data = read_all(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  size_t at = 0;
  size_t live_before = live.size();
  std::string_view all(data);
  while (at < data.size()) {
    auto h = decode_frame_header(all.substr(at), UINT32_MAX);
    bool whole = h && data.size() - at - kFrameHeaderBytes >= h->length;
    if (!whole || !frame_crc_ok(*h, all.substr(at, kFrameHeaderBytes), all.substr(at + kFrameHeaderBytes, h->length)) ||
        h->seq <= last_seq) {
      ++counters.corrupt_tails;
      if (log)
        log->warn("spool: '{}' has a {} entry at byte {}; the {} bytes from there on are cut off", path,
                  whole ? "corrupt" : "torn", at, data.size() - at);
      if (::ftruncate(fd, static_cast<off_t>(at)) != 0 || ::fdatasync(fd) != 0) {
        ::close(fd);
        throw SpoolError(fmt::format("spool: cannot truncate '{}'", path));
      }
      data.resize(at);
      break;
    }
    last_seq = h->seq;
    if (h->seq > acked) push_live({h->seq, segment, at, h->length, h->kind, h->points, h->appended_unix_ms});
    at += kFrameHeaderBytes + h->length;
  }
  ::close(fd);
  if (live.size() == live_before) {
    // Empty, or every entry in it acknowledged: garbage left by a crash between the ack and the deletion.
    ::unlink(path.c_str());
    return;
  }
  segment_sizes[segment] = data.size();
  disk_bytes += data.size();
}

void Spool::State::write_ack(uint64_t seq) {
  replace_file_durably(dir, "ack", fmt::format("{}\n", seq));
  acked = seq;
}

void Spool::State::delete_segment(uint64_t segment) {
  if (segment == active_segment && active_fd >= 0) {
    ::close(active_fd);
    active_fd = -1;
  }
  if (segment == read_segment && read_fd >= 0) {
    ::close(read_fd);
    read_fd = -1;
  }
  ::unlink(path_of(segment).c_str());  // after the ack is durable: a segment that survives a crash is all acked
  disk_bytes -= segment_sizes[segment];
  segment_sizes.erase(segment);
}

// Segments holding no live entry; the active one too once the spool is empty, so an empty spool has no segments.
void Spool::State::delete_dead_segments() {
  uint64_t first_live = live.empty() ? UINT64_MAX : live.front().segment;
  while (!segment_sizes.empty() && segment_sizes.begin()->first < first_live)
    delete_segment(segment_sizes.begin()->first);
}

// Room is made a segment at a time: dropping part of a segment frees no disk.
void Spool::State::drop_oldest_segment() {
  uint64_t segment = live.front().segment;
  uint64_t entries = 0, points = 0, last = 0;
  while (!live.empty() && live.front().segment == segment) {
    ++entries;
    points += live.front().points;
    last = live.front().seq;
    pop_live();
  }
  counters.dropped_entries += entries;
  counters.dropped_points += points;
  if (log)
    log->error("spool: full ({} bytes, max {}): dropped the {} oldest entr{} ({} points)", disk_bytes, max_bytes,
               entries, entries == 1 ? "y" : "ies", points);
  write_ack(last);
  delete_dead_segments();
}

void Spool::State::start_segment() {
  if (active_fd >= 0) ::close(active_fd);
  active_fd = -1;
  std::string path = path_of(next_seq);
  active_fd = open_spool_file(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND);
  active_segment = next_seq;
  segment_sizes[next_seq] = 0;
  fsync_dir(dir);  // the new name survives a power cut along with the entry about to be synced into it
}

// The entry in `s`, read back and checked; nullopt when it no longer reads back intact.
std::optional<SpoolEntry> Spool::State::read_slot(const Slot& s) {
  if (read_fd < 0 || read_segment != s.segment) {
    if (read_fd >= 0) ::close(read_fd);
    read_fd = -1;
    read_fd = open_spool_file(path_of(s.segment), O_RDONLY);
    read_segment = s.segment;
  }
  auto signal = signal_of_kind(s.kind);
  std::string buf(kFrameHeaderBytes + s.length, '\0');
  ssize_t n = ::pread(read_fd, buf.data(), buf.size(), static_cast<off_t>(s.offset));
  std::string_view v(buf);
  auto h = n == static_cast<ssize_t>(buf.size()) ? decode_frame_header(v, UINT32_MAX) : std::nullopt;
  if (!signal || !h || h->seq != s.seq ||
      !frame_crc_ok(*h, v.substr(0, kFrameHeaderBytes), v.substr(kFrameHeaderBytes)))
    return std::nullopt;
  buf.erase(0, kFrameHeaderBytes);
  return SpoolEntry{s.seq, *signal, s.points, s.appended_unix_ms, std::move(buf)};
}

// Changed on disk since open() checked it, or of a kind this build does not send: skipped rather than sent as
// garbage or left to stall the queue.
void Spool::State::skip_front(const char* why) {
  const Slot& s = live.front();
  ++counters.corrupt_entries;
  if (log) log->error("spool: entry {} in '{}' {}; skipped", s.seq, path_of(s.segment), why);
  uint64_t seq = s.seq;
  pop_live();
  write_ack(seq);
  delete_dead_segments();
}

std::optional<SpoolEntry> Spool::State::read_front() {
  while (!live.empty()) {
    if (auto e = read_slot(live.front())) return e;
    skip_front(signal_of_kind(live.front().kind) ? "no longer reads back intact" : "has an unknown kind");
  }
  return std::nullopt;
}

void Spool::State::pop_through(uint64_t seq) {
  if (live.empty() || live.front().seq > seq) return;
  while (!live.empty() && live.front().seq <= seq) pop_live();
  write_ack(seq);
  delete_dead_segments();
}

std::unique_ptr<Spool> Spool::open(const std::string& dir, uint64_t max_bytes, std::shared_ptr<spdlog::logger> log) {
  if (max_bytes < kFrameHeaderBytes + 1) throw SpoolError("spool: max_bytes is too small to hold any entry");
  auto s = std::make_unique<State>();
  s->dir = dir;
  s->max_bytes = max_bytes;
  // Small enough that dropping the oldest segment when full loses about 1/16 of the spool, not all of it.
  s->segment_bytes = std::clamp<uint64_t>(max_bytes / 16, 1, 8u << 20);
  s->log = std::move(log);
  prepare_spool_dir(dir);
  s->lock_fd = lock_spool_dir(dir);
  remove_files_starting(dir, "ack.");  // temporaries of an ack write that a crash interrupted
  s->read_ack();
  uint64_t last_seq = 0;
  for (uint64_t segment : list_segments(dir)) s->scan_segment(segment, last_seq);
  s->next_seq = std::max(last_seq, s->acked) + 1;
  while (s->disk_bytes > max_bytes && !s->live.empty()) s->drop_oldest_segment();  // max_bytes was lowered
  return std::unique_ptr<Spool>(new Spool(std::move(s)));
}

Spool::Spool(std::unique_ptr<State> state) : s_(std::move(state)) {}
Spool::~Spool() = default;

bool Spool::append(Signal signal, uint64_t points, std::span<const std::string> parts, Sync sync) {
  std::lock_guard lock(mu_);
  State& s = *s_;
  uint64_t length = 0;
  for (const auto& p : parts) length += p.size();
  uint64_t frame_bytes = kFrameHeaderBytes + length;
  if (frame_bytes > s.max_bytes || length > UINT32_MAX) {
    ++s.counters.refused_entries;
    ++s.counters.dropped_entries;
    s.counters.dropped_points += points;
    if (s.log)
      s.log->error("spool: an entry of {} bytes ({} points) is larger than the spool's max_bytes ({}); dropped",
                   length, points, s.max_bytes);
    return false;
  }
  while (s.disk_bytes + frame_bytes > s.max_bytes && !s.live.empty()) s.drop_oldest_segment();
  if (s.active_fd < 0 || s.segment_sizes[s.active_segment] >= s.segment_bytes) s.start_segment();
  FrameHeader h;
  h.kind = kind_byte(signal);
  h.points = points;
  h.seq = s.next_seq;
  h.appended_unix_ms = unix_ms_now();
  std::vector<std::string_view> payload(parts.begin(), parts.end());
  std::string header = encode_frame_header(h, payload);
  payload.insert(payload.begin(), header);
  uint64_t offset = s.segment_sizes[s.active_segment];
  try {
    append_pieces(s.active_fd, s.path_of(s.active_segment), payload, sync == Sync::Now);
  } catch (const SpoolError&) {
    // Cut a partial frame off, so the entries appended after it stay readable; failing that, the next append
    // starts a new segment and open() will cut this one at the partial frame.
    if (::ftruncate(s.active_fd, static_cast<off_t>(offset)) != 0) {
      ::close(s.active_fd);
      s.active_fd = -1;
      ++s.next_seq;  // a gap in the numbers is harmless; reusing the broken segment's name would fail
    }
    throw;
  }
  s.push_live({h.seq, s.active_segment, offset, static_cast<uint32_t>(length), h.kind, points, h.appended_unix_ms});
  s.segment_sizes[s.active_segment] += frame_bytes;
  s.disk_bytes += frame_bytes;
  ++s.next_seq;
  return true;
}

void Spool::sync() {
  std::lock_guard lock(mu_);
  if (s_->active_fd >= 0) sync_file(s_->active_fd, s_->path_of(s_->active_segment));
}

std::optional<SpoolEntry> Spool::front() {
  std::lock_guard lock(mu_);
  return s_->read_front();
}

std::vector<SpoolEntry> Spool::front_batch(uint64_t max_points, uint64_t max_bytes) {
  std::lock_guard lock(mu_);
  State& s = *s_;
  std::vector<SpoolEntry> out;
  auto first = s.read_front();
  if (!first) return out;
  uint64_t points = first->points, bytes = first->bytes.size();
  out.push_back(std::move(*first));
  for (size_t i = 1; i < s.live.size(); ++i) {
    const Slot& next = s.live[i];
    if (next.kind != kind_byte(out.front().signal) || points + next.points > max_points ||
        bytes + next.length > max_bytes)
      break;
    auto e = s.read_slot(next);
    if (!e) break;  // the next call skips it when it is the front
    points += e->points;
    bytes += e->bytes.size();
    out.push_back(std::move(*e));
  }
  return out;
}

void Spool::pop_front(uint64_t seq) {
  std::lock_guard lock(mu_);
  State& s = *s_;
  if (s.live.empty() || s.live.front().seq != seq) return;
  s.pop_through(seq);
}

void Spool::pop_through(uint64_t seq) {
  std::lock_guard lock(mu_);
  s_->pop_through(seq);
}

SpoolStats Spool::stats() const {
  std::lock_guard lock(mu_);
  SpoolStats out = s_->counters;
  out.entries = s_->live.size();
  out.points = s_->live_points;
  out.bytes = s_->disk_bytes;
  out.oldest_unix_ms = s_->live.empty() ? 0 : s_->live.front().appended_unix_ms;
  return out;
}

const std::string& Spool::dir() const { return s_->dir; }

}  // namespace gcm::otlp

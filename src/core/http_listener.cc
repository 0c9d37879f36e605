#include "core/http_listener.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "core/http_chunked_body.h"
#include "core/http_auth.h"
#include "core/http_request_head.h"
#include "core/spare_buffers.h"
#include "core/tls.h"
#include "core/web_config.h"

namespace gcm {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kListenTag = 0;
constexpr uint64_t kWakeTag = 1;
constexpr size_t kReadBlock = 64 * 1024;  // one recv
// One recv of a Content-Length body, straight into the request: a large body in fewer system calls.
constexpr size_t kBodyRead = 256 * 1024;
constexpr size_t kReadPerEvent = 4 * kReadBlock;  // bytes taken from one connection before serving the others
// One recv while a head is awaited: a head is a few hundred bytes, and what a larger read takes of the body goes
// through the head buffer (two copies more than a body received in place: a sixth of slurm_processor's copying).
constexpr size_t kHeadRead = 4 * 1024;
constexpr size_t kSpareBodyBytes = 4u << 20;       // buffers of bodies answered, kept for the next bodies
constexpr auto kLinger = std::chrono::seconds(1);  // reading what a refused client still sends, so it gets the answer
constexpr auto kSweepEvery = std::chrono::milliseconds(100);

const char* reason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

HttpReply text_reply(int status, std::string message, std::string extra = "") {
  return {status, "text/plain; charset=utf-8", std::move(message) + "\n", std::move(extra)};
}

std::string serialize(const HttpReply& r, bool head_only, bool close, bool http10) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}{}\r\n", r.status,
                                reason(r.status), r.content_type, r.body.size(), r.extra_headers,
                                close    ? "Connection: close\r\n"
                                : http10 ? "Connection: keep-alive\r\n"
                                         : "");
  if (!head_only) out += r.body;
  return out;
}

int bind_listener(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0) throw std::runtime_error(fmt::format("cannot resolve {}:{}: {}", host, port, gai_strerror(rc)));
  std::string last_error = "no address";
  int listen_fd = -1;
  for (addrinfo* a = res; a && listen_fd < 0; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) {
      listen_fd = fd;
    } else {
      last_error = std::strerror(errno);
      ::close(fd);
    }
  }
  ::freeaddrinfo(res);
  if (listen_fd < 0) throw std::runtime_error(fmt::format("cannot listen on {}:{}: {}", host, port, last_error));
  return listen_fd;
}

// A unix socket at `path`: a socket file left by a process before (a crash) is removed, anything else there is not
// ours to remove.
int bind_unix_listener(const std::string& path, unsigned mode) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path)
    throw std::runtime_error(fmt::format("cannot listen on {}: the path is longer than {} bytes", path,
                                         sizeof addr.sun_path - 1));
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      throw std::runtime_error(fmt::format("cannot listen on {}: a file that is not a socket is there", path));
    ::unlink(path.c_str());
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot listen on {}: {}", path, std::strerror(errno)));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::chmod(path.c_str(), mode) != 0 ||
      ::listen(fd, 1024) != 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error(fmt::format("cannot listen on {}: {}", path, why));
  }
  return fd;
}

std::pair<std::string, int> numeric_address(const sockaddr_storage& a) {
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    return {text, ntohs(v4->sin_port)};
  }
  if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    return {text, ntohs(v6->sin6_port)};
  }
  return {"", 0};
}

HttpPeer peer_of(int fd, bool unix_socket) {
  HttpPeer p;
  p.unix_socket = unix_socket;
  if (unix_socket) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
      p.pid = cred.pid;
      p.uid = cred.uid;
      p.gid = cred.gid;
    }
    return p;
  }
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) std::tie(p.address, p.port) = numeric_address(a);
  len = sizeof a;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    std::tie(p.local_address, p.local_port) = numeric_address(a);
  return p;
}

int bound_port(int fd) {
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  return bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

}  // namespace

struct HttpListener::Impl {
  // Where a connection is in its life; the I/O thread alone reads and changes it.
  enum class Phase {
    Handshake,  // TLS: the handshake, before the first request (bounded by the head deadline)
    Idle,       // waiting for a request's first byte
    Head,       // receiving the request line and headers
    Body,       // receiving the body
    Handling,   // the handler has the request; the socket is not read
    Writing,    // the answer is being sent
    Lingering,  // answered and half-closed; reading what the client still sends until it closes, then closing
  };

  struct Conn {
    uint64_t id = 0;
    int fd = -1;
    HttpPeer peer;
    Phase phase = Phase::Idle;
    bool dead = false;  // the peer went away while the handler had its request: closed when the answer comes
    std::string in;     // received, not consumed yet
    size_t scan_from = 0;
    HttpRequest req;
    RequestFraming framing;
    ChunkedBodyDecoder chunked;
    uint64_t remaining = 0;  // Content-Length body bytes still expected
    size_t reserved = 0;  // bytes of max_in_flight this request holds
    bool linger_after = false;
    bool head_only = false;      // a HEAD request: the answer has no body
    Clock::time_point started;   // the current request's first byte, or the accept (for eviction order)
    Clock::time_point deadline;  // of the current phase
    Clock::time_point request_deadline;
    std::string out;
    size_t out_off = 0;
    uint32_t events = 0;  // registered with epoll
    std::unique_ptr<TlsSession> tls;
    bool tls_read_wants_write = false;  // OpenSSL must send (a key update) before it can go on reading
    bool tls_write_wants_read = false;  // ... or receive before it can go on writing
  };

  struct Job {
    uint64_t id;
    HttpRequest req;
    bool verify = false;  // the credentials need bcrypt before the handler may run
  };
  struct Done {
    uint64_t id;
    HttpReply reply;
    std::string body;  // the request's, handed back for the bodies to come (spare_bodies)
  };

  // Who may touch what. Three kinds of thread share this object: the caller's (the constructor, start() and stop(),
  // which join the others before anything is destroyed), the I/O thread (run(): every socket and every Conn), and
  // the handler threads (work()). They meet only at the two queues below, each under its own mutex, and at the
  // atomics.

  // Set by the constructor; read by every thread, changed by none.
  HttpListenerOptions opts;
  Handler handler;
  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;
  int port = 0;

  // The caller's thread.
  std::thread io;
  std::vector<std::thread> workers;
  bool started = false;
  std::atomic<bool> stopping{false};  // set by stop(), read by every thread

  // The I/O thread's alone.
  std::unordered_map<uint64_t, std::unique_ptr<Conn>> conns;
  // TLS connections with decrypted bytes inside OpenSSL: epoll cannot report them, so the loop reads them itself.
  std::unordered_set<uint64_t> tls_ready;
  uint64_t next_id = 2;  // 0 and 1 tag the listening socket and the wake-up eventfd
  size_t in_flight = 0;  // body bytes the open requests hold (max_in_flight bounds it)
  SpareBuffers spare_bodies{kSpareBodyBytes};  // for the next Content-Length bodies

  // Requests for the handler threads: pushed by the I/O thread, popped by a handler thread, under jobs_mu.
  std::mutex jobs_mu;
  std::condition_variable jobs_cv;
  std::deque<Job> jobs;
  // Answers for the I/O thread: pushed by a handler thread (which then wakes the loop), popped by the I/O thread,
  // under done_mu.
  std::mutex done_mu;
  std::deque<Done> done;

  // Written by the I/O thread, read by any (stats()).
  struct Counters {
    std::atomic<uint64_t> accepted{0}, requests{0}, open{0}, evicted{0}, refused{0}, timed_out{0}, bad{0},
        over_budget{0}, in_flight{0}, tls_failed{0}, unauthorized{0};
  } counters;

  Impl(HttpListenerOptions o, Handler h);
  ~Impl();
  void add_fd(int fd, uint64_t tag, uint32_t events);
  void wake();  // any thread: the loop looks at the answers and at `stopping`

  // The I/O thread. The loop, accepting and evicting:
  void run();
  void accept_all();
  bool evict_one();
  void close_conn(uint64_t id);
  void sweep(Clock::time_point now);  // deadlines
  // One connection's events, TLS and plain I/O:
  void want(Conn& c, uint32_t events);
  void on_event(Conn& c, uint32_t events);
  static bool reading(Phase p);
  void handshake_step(Conn& c);
  ssize_t recv_some(Conn& c, char* buf, size_t cap);
  ssize_t send_some(Conn& c, const char* buf, size_t len);
  void on_readable(Conn& c);
  // A request, phase by phase (Conn::phase):
  bool advance(Conn& c);
  void begin_request(Conn& c);
  void read_head(Conn& c);
  char* body_room(Conn& c, size_t n);
  void read_body(Conn& c);
  bool reserve(Conn& c, size_t bytes);
  void release(Conn& c);
  void too_large(Conn& c);
  void over_budget(Conn& c);
  void refuse(Conn& c, HttpReply r);
  void dispatch(Conn& c);  // to a handler thread, or the handler on this thread when there are none
  // Answers:
  void take_done();
  void answer(Conn& c, HttpReply r);
  bool queue_output(Conn& c, std::string_view bytes);
  bool flush_some(Conn& c);
  void flush(Conn& c);

  // A handler thread (the I/O thread itself when opts.workers is 0, and for GETs with opts.inline_get):
  void work();
  HttpReply unauthorized();
  HttpReply call_handler(const HttpRequest& req);
};

HttpListener::Impl::Impl(HttpListenerOptions o, Handler h) : opts(std::move(o)), handler(std::move(h)) {
  // bcrypt is never run on the I/O thread: it needs a handler thread.
  if (opts.auth && opts.auth->enabled() && opts.workers == 0) opts.workers = 1;
  if (opts.auth && !opts.auth->enabled()) opts.auth.reset();
  if (opts.unix_path.empty()) {
    listen_fd = bind_listener(opts.host, opts.port);
    port = bound_port(listen_fd);
  } else {
    listen_fd = bind_unix_listener(opts.unix_path, opts.unix_mode);
  }
  epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd < 0 || wake_fd < 0) throw std::runtime_error(fmt::format("epoll/eventfd: {}", std::strerror(errno)));
  add_fd(listen_fd, kListenTag, EPOLLIN);
  add_fd(wake_fd, kWakeTag, EPOLLIN);
}

HttpListener::Impl::~Impl() {
  for (int fd : {listen_fd, epoll_fd, wake_fd})
    if (fd >= 0) ::close(fd);
  if (!opts.unix_path.empty()) ::unlink(opts.unix_path.c_str());
}

void HttpListener::Impl::add_fd(int fd, uint64_t tag, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = tag;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
}

void HttpListener::Impl::want(Conn& c, uint32_t events) {
  if (c.events == events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = c.id;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &ev);
  c.events = events;
}

void HttpListener::Impl::wake() {
  uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd, &one, sizeof one);
}

void HttpListener::Impl::run() {
  if (opts.tls) {
    // OpenSSL writes to the socket with write(), not send(MSG_NOSIGNAL): a peer that has gone would raise SIGPIPE.
    // Blocked on this thread, the write fails with EPIPE instead, and the rest of the process is unaffected.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  }
  epoll_event evs[64];
  auto next_sweep = Clock::now() + kSweepEvery;
  while (!stopping.load()) {
    int n = ::epoll_wait(epoll_fd, evs, 64, tls_ready.empty() ? static_cast<int>(kSweepEvery.count()) : 0);
    for (int i = 0; i < n; ++i) {
      uint64_t tag = evs[i].data.u64;
      if (tag == kListenTag) {
        accept_all();
      } else if (tag == kWakeTag) {
        uint64_t v;
        [[maybe_unused]] auto r = ::read(wake_fd, &v, sizeof v);
        take_done();
      } else if (auto it = conns.find(tag); it != conns.end()) {
        on_event(*it->second, evs[i].events);
      }
    }
    if (!tls_ready.empty()) {
      std::unordered_set<uint64_t> ready;
      ready.swap(tls_ready);
      for (uint64_t id : ready)
        if (auto it = conns.find(id); it != conns.end() && reading(it->second->phase)) on_readable(*it->second);
    }
    if (Clock::now() >= next_sweep) {
      sweep(Clock::now());
      next_sweep = Clock::now() + kSweepEvery;
    }
  }
  std::vector<uint64_t> ids;
  for (auto& [id, c] : conns) ids.push_back(id);
  for (uint64_t id : ids) close_conn(id);
}

void HttpListener::Impl::accept_all() {
  for (;;) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN, or an error the next event retries (EMFILE among them)
    counters.accepted.fetch_add(1, std::memory_order_relaxed);
    if (static_cast<int>(conns.size()) >= opts.max_connections && !evict_one()) {
      counters.refused.fetch_add(1, std::memory_order_relaxed);
      // A TLS client would read a plain-text answer as a protocol error: it is only closed.
      if (!opts.tls) {
        std::string r = serialize(text_reply(503, "too many connections", "Retry-After: 1\r\n"), false, true, false);
        [[maybe_unused]] auto s = ::send(fd, r.data(), r.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      ::close(fd);
      continue;
    }
    int one = 1;
    bool unix_socket = !opts.unix_path.empty();
    if (!unix_socket) ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Conn>();
    c->id = next_id++;
    c->fd = fd;
    c->peer = peer_of(fd, unix_socket);
    if (opts.tls) {
      try {
        c->tls = opts.tls->session(fd);
      } catch (const TlsError&) {
        ::close(fd);
        continue;
      }
      c->phase = Phase::Handshake;
    }
    c->started = Clock::now();
    // A new connection has the head's deadline to start a request, not the (longer) keep-alive one.
    c->deadline = c->started + opts.head_timeout;
    c->events = EPOLLIN | EPOLLRDHUP;
    add_fd(fd, c->id, c->events);
    conns.emplace(c->id, std::move(c));
    counters.open.store(conns.size(), std::memory_order_relaxed);
  }
}

// At the connection limit: the oldest idle connection goes first (its client reconnects when it needs to), then
// the one that has spent longest sending its head (a slow or hostile client). Bodies being received and requests
// being handled are never cut.
bool HttpListener::Impl::evict_one() {
  Conn* victim = nullptr;
  for (Phase phase : {Phase::Idle, Phase::Handshake, Phase::Head, Phase::Lingering}) {
    for (auto& [id, c] : conns)
      if (c->phase == phase && (!victim || c->started < victim->started)) victim = c.get();
    if (victim) break;
  }
  if (!victim) return false;
  counters.evicted.fetch_add(1, std::memory_order_relaxed);
  close_conn(victim->id);
  return true;
}

void HttpListener::Impl::close_conn(uint64_t id) {
  auto it = conns.find(id);
  if (it == conns.end()) return;
  Conn& c = *it->second;
  release(c);
  if (c.tls) c.tls->shutdown();  // close_notify, so the client knows the answer is complete
  ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c.fd, nullptr);
  ::close(c.fd);
  conns.erase(it);
  counters.open.store(conns.size(), std::memory_order_relaxed);
}

void HttpListener::Impl::release(Conn& c) {
  in_flight -= c.reserved;
  c.reserved = 0;
  counters.in_flight.store(in_flight, std::memory_order_relaxed);
}

bool HttpListener::Impl::reserve(Conn& c, size_t bytes) {
  if (in_flight + bytes > opts.max_in_flight) return false;
  in_flight += bytes;
  c.reserved += bytes;
  counters.in_flight.store(in_flight, std::memory_order_relaxed);
  return true;
}

void HttpListener::Impl::on_event(Conn& c, uint32_t events) {
  uint64_t id = c.id;
  if (c.phase == Phase::Handling) {
    // The socket is not read while its request is handled. It stays watched for reading meanwhile (dispatch does
    // not disarm it: two epoll_ctl calls per request saved, and a client rarely sends before its answer); bytes or
    // a half-close that arrive now disarm it until the answer is out, when flush() arms it again.
    if (!(events & (EPOLLHUP | EPOLLERR))) {
      want(c, 0);
      return;
    }
    // A hang-up: nobody is left to answer, stop watching it.
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c.fd, nullptr);
    c.events = 0;
    c.dead = true;
    return;
  }
  if (c.phase == Phase::Handshake) {
    handshake_step(c);
    return;
  }
  if ((events & EPOLLOUT) || (c.tls_write_wants_read && (events & EPOLLIN))) {
    flush(c);
    if (!conns.count(id) || !advance(c)) return;
  }
  if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) || c.tls_read_wants_write) on_readable(c);
}

bool HttpListener::Impl::reading(Phase p) {
  return p == Phase::Idle || p == Phase::Head || p == Phase::Body || p == Phase::Lingering;
}

void HttpListener::Impl::handshake_step(Conn& c) {
  switch (c.tls->handshake()) {
    case TlsStatus::Done:
      c.phase = Phase::Idle;  // the deadline stays the accept's: handshake and first request share it
      want(c, EPOLLIN | EPOLLRDHUP);
      on_readable(c);  // the first request may have come with the handshake's last flight
      return;
    case TlsStatus::WantRead:
      want(c, EPOLLIN | EPOLLRDHUP);
      return;
    case TlsStatus::WantWrite:
      want(c, EPOLLOUT);
      return;
    case TlsStatus::Closed:
    case TlsStatus::Failed:
      counters.tls_failed.fetch_add(1, std::memory_order_relaxed);
      close_conn(c.id);
      return;
  }
}

// One receive, through TLS when the connection has it: >0 bytes, 0 when the peer closed, -1 with errno (EAGAIN:
// wait for the socket).
ssize_t HttpListener::Impl::recv_some(Conn& c, char* buf, size_t cap) {
  if (!c.tls || c.phase == Phase::Lingering) return ::recv(c.fd, buf, cap, 0);  // lingering discards raw bytes
  size_t n = 0;
  c.tls_read_wants_write = false;
  switch (c.tls->read(buf, cap, n)) {
    case TlsStatus::Done:
      return static_cast<ssize_t>(n);
    case TlsStatus::WantWrite:
      c.tls_read_wants_write = true;
      [[fallthrough]];
    case TlsStatus::WantRead:
      errno = EAGAIN;
      return -1;
    case TlsStatus::Closed:
      return 0;
    case TlsStatus::Failed:
      break;
  }
  errno = EPROTO;
  return -1;
}

ssize_t HttpListener::Impl::send_some(Conn& c, const char* buf, size_t len) {
  if (!c.tls) return ::send(c.fd, buf, len, MSG_NOSIGNAL);
  size_t n = 0;
  c.tls_write_wants_read = false;
  switch (c.tls->write(buf, len, n)) {
    case TlsStatus::Done:
      return static_cast<ssize_t>(n);
    case TlsStatus::WantRead:
      c.tls_write_wants_read = true;
      [[fallthrough]];
    case TlsStatus::WantWrite:
      errno = EAGAIN;
      return -1;
    default:
      break;
  }
  errno = EPIPE;
  return -1;
}

void HttpListener::Impl::on_readable(Conn& c) {
  if (c.phase == Phase::Handshake) {
    handshake_step(c);
    return;
  }
  size_t taken = 0;
  while (taken < kReadPerEvent && reading(c.phase)) {
    ssize_t n;
    if (c.phase == Phase::Body && !c.framing.chunked && c.in.empty()) {
      // A Content-Length body is received straight into the request: one copy of it is held, not two.
      size_t want_bytes = static_cast<size_t>(std::min<uint64_t>(c.remaining, kBodyRead));
      n = recv_some(c, body_room(c, want_bytes), want_bytes);
      if (n > 0) c.remaining -= static_cast<uint64_t>(n);
    } else {
      char buf[kReadBlock];
      bool awaiting_head = c.phase == Phase::Idle || c.phase == Phase::Head;
      n = recv_some(c, buf, awaiting_head ? kHeadRead : sizeof buf);
      if (n > 0 && c.phase != Phase::Lingering) c.in.append(buf, static_cast<size_t>(n));
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (c.tls_read_wants_write) want(c, c.events | EPOLLOUT);
      return;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // closed by the peer or failed: whatever was unfinished cannot be finished
      close_conn(c.id);
      return;
    }
    taken += static_cast<size_t>(n);
    if (c.phase != Phase::Lingering && !advance(c)) return;  // the connection was closed
  }
  if (c.tls && c.tls->pending()) tls_ready.insert(c.id);
}

// Parses what has arrived as far as it goes, answering each complete request in turn (pipelined ones included:
// a loop, not a recursion, however many arrive at once); false when the connection was closed on the way.
bool HttpListener::Impl::advance(Conn& c) {
  uint64_t id = c.id;
  for (;;) {
    Phase before = c.phase;
    switch (c.phase) {
      case Phase::Idle:
        // Blank lines before a request line are allowed (RFC 9112 2.2).
        c.in.erase(0, std::min(c.in.find_first_not_of("\r\n"), c.in.size()));
        if (c.in.empty()) return true;
        begin_request(c);
        continue;
      case Phase::Head:
        read_head(c);
        break;
      case Phase::Body:
        read_body(c);
        break;
      default:
        return true;
    }
    if (!conns.count(id)) return false;
    if (c.phase == before) return true;  // waiting for more bytes
  }
}

void HttpListener::Impl::begin_request(Conn& c) {
  auto now = Clock::now();
  c.phase = Phase::Head;
  c.started = now;
  c.deadline = now + opts.head_timeout;
  c.request_deadline = now + opts.request_timeout;
  c.scan_from = 0;
  c.req = HttpRequest{};
  c.req.peer = c.peer;
  c.framing = RequestFraming{};
  c.chunked.reset(opts.max_head);
  c.remaining = 0;
  c.head_only = false;
  c.linger_after = false;
}

// Moves on to Body or to the handler once the head is complete; refuses a bad one (which may close the connection).
void HttpListener::Impl::read_head(Conn& c) {
  size_t end = c.in.find("\r\n\r\n", c.scan_from);
  if (end == std::string::npos) {
    if (c.in.size() > opts.max_head)
      refuse(c, text_reply(431, fmt::format("the request head exceeds {} bytes", opts.max_head)));
    else
      c.scan_from = c.in.size() >= 3 ? c.in.size() - 3 : 0;
    return;
  }
  if (end > opts.max_head) {
    refuse(c, text_reply(431, fmt::format("the request head exceeds {} bytes", opts.max_head)));
    return;
  }
  auto error = parse_request_head(std::string_view(c.in).substr(0, end), c.req, c.framing);
  c.in.erase(0, end + 4);
  if (error) {
    refuse(c, text_reply(error->status, error->message));
    return;
  }
  counters.requests.fetch_add(1, std::memory_order_relaxed);
  if (!c.framing.chunked && c.framing.content_length == 0) {
    dispatch(c);
    return;
  }
  if (!c.framing.chunked && c.framing.content_length > opts.max_body) {
    too_large(c);
    return;
  }
  if (!c.framing.chunked) {
    if (!reserve(c, c.framing.content_length)) {
      over_budget(c);
      return;
    }
    c.remaining = c.framing.content_length;
    c.req.body = spare_bodies.take(static_cast<size_t>(c.framing.content_length));
  }
  if (c.framing.expect_continue && !queue_output(c, "HTTP/1.1 100 Continue\r\n\r\n")) return;
  c.phase = Phase::Body;
  c.deadline = c.request_deadline;
}

// Where the next n bytes of a Content-Length body go: their place in it (the buffer may hold a body before's bytes,
// SpareBuffers). The body is grown (zero-filled) only past what it holds, never past its Content-Length, and not
// shrunk again after a short read: each byte is zero-filled at most once, however many reads it takes.
char* HttpListener::Impl::body_room(Conn& c, size_t n) {
  size_t at = static_cast<size_t>(c.framing.content_length - c.remaining);
  if (c.req.body.size() < at + n) c.req.body.resize(at + n);
  return c.req.body.data() + at;
}

// Takes what has arrived of the body; hands the request on when it is complete.
void HttpListener::Impl::read_body(Conn& c) {
  if (!c.framing.chunked) {
    size_t take = static_cast<size_t>(std::min<uint64_t>(c.remaining, c.in.size()));
    std::memcpy(body_room(c, take), c.in.data(), take);
    c.in.erase(0, take);
    c.remaining -= take;
    if (c.remaining > 0) return;
    dispatch(c);
    return;
  }
  auto r = c.chunked.feed(c.in, c.req.body, [&](uint64_t size) {
    // Compared without adding, so that no size can wrap the check (a chunk of 2^64 - 1 bytes is too large).
    if (size > opts.max_body - c.req.body.size()) return ChunkedBodyDecoder::ChunkVerdict::TooLarge;
    if (!reserve(c, static_cast<size_t>(size))) return ChunkedBodyDecoder::ChunkVerdict::OverBudget;
    return ChunkedBodyDecoder::ChunkVerdict::Take;
  });
  switch (r.kind) {
    case ChunkedBodyDecoder::Result::NeedMore:
      return;
    case ChunkedBodyDecoder::Result::Complete:
      dispatch(c);
      return;
    case ChunkedBodyDecoder::Result::Bad:
      refuse(c, text_reply(r.status, r.message));
      return;
    case ChunkedBodyDecoder::Result::TooLarge:
      too_large(c);
      return;
    case ChunkedBodyDecoder::Result::OverBudget:
      over_budget(c);
      return;
  }
}

// Over max_body: the handler answers (413 in its own format) without the body, which is never read.
void HttpListener::Impl::too_large(Conn& c) {
  c.req.too_large = true;
  c.req.body.clear();
  c.linger_after = true;
  dispatch(c);
}

void HttpListener::Impl::over_budget(Conn& c) {
  counters.over_budget.fetch_add(1, std::memory_order_relaxed);
  c.linger_after = true;
  answer(c, text_reply(503, "too many request bodies in flight; retry later", "Retry-After: 1\r\n"));
}

// A malformed request: answered and the connection closed (its framing cannot be trusted for a next request).
void HttpListener::Impl::refuse(Conn& c, HttpReply r) {
  counters.bad.fetch_add(1, std::memory_order_relaxed);
  c.linger_after = true;
  answer(c, std::move(r));
}

void HttpListener::Impl::dispatch(Conn& c) {
  c.phase = Phase::Handling;
  c.head_only = c.req.method == "HEAD";
  bool verify = false;
  if (opts.auth) {
    HttpAuth::Verdict v = opts.auth->quick(c.req.header("authorization"));
    if (v == HttpAuth::Verdict::Denied) {
      answer(c, unauthorized());
      return;
    }
    verify = v == HttpAuth::Verdict::NeedsVerify;
  }
  bool get = c.req.method == "GET" || c.req.method == "HEAD";
  if (!verify && (opts.workers == 0 || (opts.inline_get && get))) {
    answer(c, call_handler(c.req));
    return;
  }
  {
    std::lock_guard lock(jobs_mu);
    jobs.push_back({c.id, std::move(c.req), verify});
  }
  jobs_cv.notify_one();
}

HttpReply HttpListener::Impl::unauthorized() {
  counters.unauthorized.fetch_add(1, std::memory_order_relaxed);
  return text_reply(401, "authentication required", opts.auth->challenge());
}

HttpReply HttpListener::Impl::call_handler(const HttpRequest& req) {
  try {
    return handler(req);
  } catch (const std::exception& e) {
    return text_reply(500, e.what());
  }
}

// Called after the wake is read, never before: an answer queued behind others sends no wake of its own (work()).
void HttpListener::Impl::take_done() {
  std::deque<Done> ready;
  {
    std::lock_guard lock(done_mu);
    ready.swap(done);
  }
  for (auto& d : ready) {
    auto it = conns.find(d.id);
    if (it == conns.end()) continue;
    if (it->second->dead) {
      close_conn(d.id);
      continue;
    }
    answer(*it->second, std::move(d.reply));
    if (auto again = conns.find(d.id); again != conns.end()) advance(*again->second);
  }
  for (auto& d : ready) spare_bodies.keep(std::move(d.body));
}

void HttpListener::Impl::answer(Conn& c, HttpReply r) {
  release(c);
  bool close = c.framing.close || c.linger_after || stopping.load();
  c.framing.close = close;
  r.extra_headers += opts.extra_headers;
  // Writing before queueing: outside Writing queue_output sends at once, and a send that fails (the peer reset
  // the connection while its request was handled) closes the connection and frees `c` under this function.
  c.phase = Phase::Writing;
  queue_output(c, serialize(r, c.head_only, close, c.framing.http10));
  c.deadline = Clock::now() + opts.write_timeout;
  flush(c);
}

// Appends to what is to be sent; outside Writing (a 100 Continue) also sends it. False when that closed it.
bool HttpListener::Impl::queue_output(Conn& c, std::string_view bytes) {
  if (c.out_off == c.out.size()) {
    c.out.clear();
    c.out_off = 0;
  }
  c.out.append(bytes);
  if (c.phase == Phase::Writing) return true;
  uint64_t id = c.id;
  flush_some(c);
  if (!conns.count(id)) return false;
  if (c.out_off < c.out.size()) want(c, EPOLLIN | EPOLLRDHUP | EPOLLOUT);
  return true;
}

// Sends what it can of c.out without blocking; false when the connection failed and was closed.
bool HttpListener::Impl::flush_some(Conn& c) {
  while (c.out_off < c.out.size()) {
    ssize_t n = send_some(c, c.out.data() + c.out_off, c.out.size() - c.out_off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n < 0) {
      close_conn(c.id);
      return false;
    }
    c.out_off += static_cast<size_t>(n);
  }
  return true;
}

void HttpListener::Impl::flush(Conn& c) {
  uint64_t id = c.id;
  if (!flush_some(c)) return;
  if (c.out_off < c.out.size()) {
    want(c, c.tls_write_wants_read ? EPOLLIN : EPOLLOUT);
    return;
  }
  c.out.clear();
  c.out_off = 0;
  if (c.phase != Phase::Writing) {  // a 100 Continue went out while the body is being received
    want(c, EPOLLIN | EPOLLRDHUP);
    return;
  }
  if (c.framing.close) {
    if (!c.linger_after) {
      close_conn(id);
      return;
    }
    // Closing with unread bytes would reset the connection and the client could lose the answer: half-close,
    // and read what it still sends for a while.
    if (c.tls) c.tls->shutdown();
    ::shutdown(c.fd, SHUT_WR);
    c.phase = Phase::Lingering;
    c.deadline = Clock::now() + kLinger;
    want(c, EPOLLIN | EPOLLRDHUP);
    return;
  }
  // Ready for the next request; one that was pipelined may be waiting in c.in already (the caller advances).
  c.phase = Phase::Idle;
  c.started = Clock::now();
  c.deadline = c.started + opts.idle_timeout;
  want(c, EPOLLIN | EPOLLRDHUP);
  if (c.tls && c.tls->pending()) tls_ready.insert(c.id);  // a pipelined request decrypted already
}

void HttpListener::Impl::sweep(Clock::time_point now) {
  std::vector<uint64_t> expired;
  for (auto& [id, c] : conns)
    if (c->phase != Phase::Handling && now >= c->deadline) expired.push_back(id);
  for (uint64_t id : expired) {
    Conn& c = *conns.at(id);
    if (c.phase == Phase::Head || c.phase == Phase::Body) {
      counters.timed_out.fetch_add(1, std::memory_order_relaxed);
      c.linger_after = false;
      c.framing.close = true;
      // Best effort: a client that is merely slow learns why; nothing more is waited for.
      std::string r = serialize(text_reply(408, "the request was not received in time"), false, true, false);
      if (c.tls) {
        size_t sent;
        c.tls->write(r.data(), r.size(), sent);
      } else {
        [[maybe_unused]] auto s = ::send(c.fd, r.data(), r.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      }
    } else if (c.phase == Phase::Writing || c.phase == Phase::Handshake) {
      counters.timed_out.fetch_add(1, std::memory_order_relaxed);
    }
    close_conn(id);
  }
}

void HttpListener::Impl::work() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(jobs_mu);
      jobs_cv.wait(lock, [&] { return stopping.load() || !jobs.empty(); });
      // At stop, requests not started yet are dropped: their clients get no answer and send them again.
      if (stopping.load()) return;
      job = std::move(jobs.front());
      jobs.pop_front();
    }
    HttpReply r;
    bool allowed = true;
    if (job.verify) {
      try {
        allowed = opts.auth->verify(job.req.header("authorization"));
      } catch (const std::exception&) {
        allowed = false;
      }
    }
    r = allowed ? call_handler(job.req) : unauthorized();
    bool first;
    {
      std::lock_guard lock(done_mu);
      first = done.empty();
      done.push_back({job.id, std::move(r), std::move(job.req.body)});
    }
    // One wake per batch of answers: a queue that held answers already has a wake on its way, and the I/O thread
    // takes the whole queue after it reads the wake (take_done), so an answer added meanwhile goes with them.
    if (first) wake();
  }
}

HttpListener::HttpListener(HttpListenerOptions opts, Handler handler)
    : impl_(std::make_unique<Impl>(std::move(opts), std::move(handler))) {}

HttpListener::~HttpListener() { stop(); }

int HttpListener::port() const { return impl_->port; }

void HttpListener::start() {
  if (impl_->started) return;
  impl_->started = true;
  // Named for top -H and perf: which of a daemon's threads takes the CPU (15 characters at most).
  for (int i = 0; i < impl_->opts.workers; ++i) {
    impl_->workers.emplace_back([this] { impl_->work(); });
    ::pthread_setname_np(impl_->workers.back().native_handle(), "http-handler");
  }
  impl_->io = std::thread([this] { impl_->run(); });
  ::pthread_setname_np(impl_->io.native_handle(), "http-io");
}

void HttpListener::stop() {
  if (impl_->stopping.exchange(true)) return;
  impl_->wake();
  impl_->jobs_cv.notify_all();
  for (auto& t : impl_->workers)
    if (t.joinable()) t.join();
  if (impl_->io.joinable()) impl_->io.join();
}

HttpListenerStats HttpListener::stats() const {
  const auto& c = impl_->counters;
  return {c.accepted.load(),  c.requests.load(),   c.open.load(),        c.evicted.load(),
          c.refused.load(),   c.timed_out.load(),  c.bad.load(),         c.over_budget.load(),
          c.in_flight.load(), c.tls_failed.load(), c.unauthorized.load()};
}

void apply_web_config(HttpListenerOptions& opts, const WebConfig& cfg, const std::string& bearer_token) {
  if (cfg.tls) opts.tls = TlsServerContext::create(*cfg.tls, cfg.path);
  if (!cfg.basic_auth_users.empty() || !bearer_token.empty())
    opts.auth = std::make_shared<HttpAuth>(cfg.basic_auth_users, bearer_token);
  opts.extra_headers.clear();
  for (const auto& h : cfg.headers) opts.extra_headers += h + "\r\n";
}

std::pair<std::string, int> parse_listen_address(const std::string& value, const std::string& what) {
  size_t colon = value.rfind(':');
  auto invalid = [&] {
    return std::invalid_argument(
        fmt::format("Invalid value for '{}': '{}' (expected HOST:PORT with a port from 0 to 65535; :PORT listens on "
                    "every IPv4 address)",
                    what, value));
  };
  if (colon == std::string::npos) throw invalid();
  std::string host = value.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "0.0.0.0";
  std::string digits = value.substr(colon + 1);
  if (digits.empty() || digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos)
    throw invalid();
  int port = std::stoi(digits);
  if (port > 65535) throw invalid();
  return {host, port};
}

}  // namespace gcm

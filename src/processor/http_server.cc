#include "processor/http_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

namespace gcm::processor {

namespace {

const char* reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Unknown";
  }
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// A connection's bytes: what has been received but not consumed yet, refilled from the socket on demand.
class Reader {
 public:
  explicit Reader(int fd) : fd_(fd) {}
  // Appends what the socket has; false on close, error or idle timeout.
  bool fill() {
    char buf[65536];
    ssize_t n;
    do n = ::recv(fd_, buf, sizeof buf, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return false;
    data_.append(buf, static_cast<size_t>(n));
    return true;
  }
  // Everything up to and excluding `delim` (consumed with it), reading at most `limit` bytes; nullopt on failure.
  std::optional<std::string> until(std::string_view delim, size_t limit, bool* too_long) {
    size_t from = 0;
    for (;;) {
      size_t p = data_.find(delim, from);
      if (p != std::string::npos) {
        std::string out = data_.substr(0, p);
        data_.erase(0, p + delim.size());
        return out;
      }
      if (data_.size() > limit) {
        *too_long = true;
        return std::nullopt;
      }
      from = data_.size() >= delim.size() ? data_.size() - delim.size() + 1 : 0;
      if (!fill()) return std::nullopt;
    }
  }
  bool take(size_t n, std::string& out) {
    while (data_.size() < n)
      if (!fill()) return false;
    out.append(data_, 0, n);
    data_.erase(0, n);
    return true;
  }
  bool empty() const { return data_.empty(); }

 private:
  int fd_;
  std::string data_;
};

void reply(int fd, const HttpReply& r, bool close) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}{}\r\n", r.status,
                                reason(r.status), r.content_type, r.body.size(), r.extra_headers,
                                close ? "Connection: close\r\n" : "");
  out += r.body;
  write_all(fd, out);
}

// After answering a request whose body is not read: closing with unread bytes would reset the connection and the
// client could lose the answer, so read (and discard) what it still sends, for a second at most.
void discard_rest(int fd) {
  ::shutdown(fd, SHUT_WR);
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[65536];
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (std::chrono::steady_clock::now() < until && ::recv(fd, buf, sizeof buf, 0) > 0) {
  }
}

HttpReply text(int status, std::string msg) { return {status, "text/plain; charset=utf-8", std::move(msg) + "\n", ""}; }

}  // namespace

HttpServer::HttpServer(HttpServerOptions opts, Handler handler) : opts_(std::move(opts)), handler_(std::move(handler)) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string service = std::to_string(opts_.port);
  int rc = ::getaddrinfo(opts_.host.empty() ? nullptr : opts_.host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0) throw std::runtime_error(fmt::format("cannot resolve {}:{}: {}", opts_.host, opts_.port, gai_strerror(rc)));
  std::string last_error = "no address";
  for (addrinfo* a = res; a; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 256) == 0) {
      listen_fd_ = fd;
      sockaddr_storage bound{};
      socklen_t len = sizeof bound;
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
      port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                          : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
      break;
    }
    last_error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(res);
  if (listen_fd_ < 0) throw std::runtime_error(fmt::format("cannot listen on {}:{}: {}", opts_.host, opts_.port, last_error));
  if (::pipe2(wake_, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
}

HttpServer::~HttpServer() {
  stop();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  for (int fd : wake_)
    if (fd >= 0) ::close(fd);
}

void HttpServer::start() { thread_ = std::thread([this] { accept_loop(); }); }

void HttpServer::stop() {
  if (stopping_.exchange(true)) return;
  char c = 1;
  [[maybe_unused]] auto n = ::write(wake_[1], &c, 1);
  if (thread_.joinable()) thread_.join();
  std::unique_lock lock(mu_);
  for (int fd : open_) ::shutdown(fd, SHUT_RDWR);  // wakes their reads; the threads close them
  cv_.wait(lock, [this] { return open_.empty(); });
}

void HttpServer::accept_loop() {
  while (!stopping_) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    {
      std::lock_guard lock(mu_);
      if (static_cast<int>(open_.size()) >= opts_.max_connections) {
        reply(fd, text(503, "too many connections"), true);
        ::close(fd);
        continue;
      }
      open_.insert(fd);
    }
    std::thread([this, fd] {
      serve(fd);
      ::close(fd);
      std::lock_guard lock(mu_);
      open_.erase(fd);
      cv_.notify_all();
    }).detach();
  }
}

void HttpServer::serve(int fd) {
  timeval tv{static_cast<time_t>(opts_.idle_timeout.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  Reader in(fd);
  while (!stopping_) {
    bool too_long = false;
    auto head = in.until("\r\n\r\n", 65536, &too_long);
    if (!head) {
      if (too_long) reply(fd, text(431, "the request head exceeds 64 KiB"), true);
      return;
    }
    HttpRequest req;
    std::string_view h(*head);
    std::string_view line = h.substr(0, h.find("\r\n"));
    size_t sp1 = line.find(' ');
    size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos) {
      reply(fd, text(400, "bad request line"), true);
      return;
    }
    req.method = line.substr(0, sp1);
    req.path = line.substr(sp1 + 1, sp2 - sp1 - 1);
    req.path = req.path.substr(0, req.path.find('?'));
    bool http10 = line.substr(sp2 + 1) == "HTTP/1.0";
    size_t pos = line.size() + 2;
    while (pos < h.size()) {
      size_t end = h.find("\r\n", pos);
      if (end == std::string_view::npos) end = h.size();
      std::string_view hl = h.substr(pos, end - pos);
      size_t colon = hl.find(':');
      if (colon != std::string_view::npos) req.headers[lower(trim(hl.substr(0, colon)))] = trim(hl.substr(colon + 1));
      pos = end + 2;
    }
    std::string conn = lower(req.header("connection"));
    bool close = http10 ? conn != "keep-alive" : conn == "close";
    bool chunked = lower(req.header("transfer-encoding")).find("chunked") != std::string::npos;
    std::string cl = req.header("content-length");
    size_t length = 0;
    if (!cl.empty()) {
      auto [p, ec] = std::from_chars(cl.data(), cl.data() + cl.size(), length);
      if (ec != std::errc() || p != cl.data() + cl.size()) {
        reply(fd, text(400, fmt::format("bad Content-Length '{}'", cl)), true);
        return;
      }
      if (length > opts_.max_body) {
        // Answered before reading: the body is never held, and the connection closes.
        req.too_large = true;
        reply(fd, handler_(req), true);
        discard_rest(fd);
        return;
      }
    }
    if (lower(req.header("expect")) == "100-continue") write_all(fd, "HTTP/1.1 100 Continue\r\n\r\n");
    if (chunked) {
      for (;;) {
        auto size_line = in.until("\r\n", 1024, &too_long);
        if (!size_line) return;
        size_t n = 0;
        std::string_view sl = trim(std::string_view(*size_line).substr(0, size_line->find(';')));
        auto [p, ec] = std::from_chars(sl.data(), sl.data() + sl.size(), n, 16);
        if (ec != std::errc() || sl.empty()) {
          reply(fd, text(400, fmt::format("bad chunk size '{}'", sl)), true);
          return;
        }
        if (req.body.size() + n > opts_.max_body) {
          req.too_large = true;
          reply(fd, handler_(req), true);
          discard_rest(fd);
          return;
        }
        if (n == 0) {
          if (!in.until("\r\n", 65536, &too_long)) return;  // (trailers are not supported: the empty line ends)
          break;
        }
        std::string crlf;
        if (!in.take(n, req.body) || !in.take(2, crlf)) return;
      }
    } else if (length > 0 && !in.take(length, req.body)) {
      return;
    }
    HttpReply r;
    try {
      r = handler_(req);
    } catch (const std::exception& e) {
      r = text(500, e.what());
    }
    reply(fd, r, close);
    if (close) return;
  }
}

}  // namespace gcm::processor

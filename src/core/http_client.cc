#include "core/http_client.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <climits>
#include <cerrno>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

#include <fmt/format.h>

#include "core/ascii.h"
#include "core/endpoint_url.h"
#include "core/http_response_reader.h"

namespace gcm {

namespace {

// libcurl is loaded on first use rather than linked: it pulls in some twenty libraries (TLS, LDAP, Kerberos, ...)
// whose loading would otherwise dominate the start-up of every command, including the many that never send HTTP.
struct Curl {
  CURLcode (*global_init)(long);
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL*);
  void (*easy_reset)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
  CURLcode (*easy_send)(CURL*, const void*, size_t, size_t*);
  CURLcode (*easy_recv)(CURL*, void*, size_t, size_t*);
  CURLU* (*url)();
  void (*url_cleanup)(CURLU*);
  CURLUcode (*url_set)(CURLU*, CURLUPart, const char*, unsigned int);
  CURLUcode (*url_get)(const CURLU*, CURLUPart, char**, unsigned int);
  void (*free)(void*);
};

const Curl& curl() {
  static const Curl api = [] {
    void* h = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!h) throw HttpTransportError(fmt::format("cannot load libcurl.so.4 (install libcurl4): {}", ::dlerror()));
    auto sym = [h](const char* name) {
      void* p = ::dlsym(h, name);
      if (!p) throw HttpTransportError(fmt::format("libcurl.so.4 lacks {}", name));
      return p;
    };
    Curl c;
    c.global_init = reinterpret_cast<decltype(c.global_init)>(sym("curl_global_init"));
    c.easy_init = reinterpret_cast<decltype(c.easy_init)>(sym("curl_easy_init"));
    c.easy_cleanup = reinterpret_cast<decltype(c.easy_cleanup)>(sym("curl_easy_cleanup"));
    c.easy_reset = reinterpret_cast<decltype(c.easy_reset)>(sym("curl_easy_reset"));
    c.easy_setopt = reinterpret_cast<decltype(c.easy_setopt)>(sym("curl_easy_setopt"));
    c.easy_perform = reinterpret_cast<decltype(c.easy_perform)>(sym("curl_easy_perform"));
    c.easy_getinfo = reinterpret_cast<decltype(c.easy_getinfo)>(sym("curl_easy_getinfo"));
    c.easy_strerror = reinterpret_cast<decltype(c.easy_strerror)>(sym("curl_easy_strerror"));
    c.slist_append = reinterpret_cast<decltype(c.slist_append)>(sym("curl_slist_append"));
    c.slist_free_all = reinterpret_cast<decltype(c.slist_free_all)>(sym("curl_slist_free_all"));
    c.easy_send = reinterpret_cast<decltype(c.easy_send)>(sym("curl_easy_send"));
    c.easy_recv = reinterpret_cast<decltype(c.easy_recv)>(sym("curl_easy_recv"));
    c.url = reinterpret_cast<decltype(c.url)>(sym("curl_url"));
    c.url_cleanup = reinterpret_cast<decltype(c.url_cleanup)>(sym("curl_url_cleanup"));
    c.url_set = reinterpret_cast<decltype(c.url_set)>(sym("curl_url_set"));
    c.url_get = reinterpret_cast<decltype(c.url_get)>(sym("curl_url_get"));
    c.free = reinterpret_cast<decltype(c.free)>(sym("curl_free"));
    c.global_init(CURL_GLOBAL_DEFAULT);
    return c;
  }();
  return api;
}

void global_init() { (void)curl(); }

struct BodySink {
  HttpResponse* response;
  size_t max_bytes;  // 0: no limit
  bool too_large = false;
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  if (sink->max_bytes && sink->response->body.size() + size * n > sink->max_bytes) {
    sink->too_large = true;
    return 0;  // libcurl stops the transfer with CURLE_WRITE_ERROR
  }
  sink->response->body.append(data, size * n);
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  std::string_view line(data, size * n);
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name;
    for (char c : line.substr(0, colon)) name.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
      value.remove_suffix(1);
    static_cast<HttpResponse*>(user)->headers[name] = std::string(value);
  }
  return size * n;
}

using Deadline = std::chrono::steady_clock::time_point;

void set_tls_options(const Curl& api, CURL* c, const HttpClientTls& tls) {
  if (!tls.ca_file.empty()) api.easy_setopt(c, CURLOPT_CAINFO, tls.ca_file.c_str());
  if (!tls.cert_file.empty()) api.easy_setopt(c, CURLOPT_SSLCERT, tls.cert_file.c_str());
  if (!tls.key_file.empty()) api.easy_setopt(c, CURLOPT_SSLKEY, tls.key_file.c_str());
  // In-memory PEM (libcurl >= 7.77 copies the blob with CURL_BLOB_COPY).
  auto blob = [&](CURLoption opt, const std::string& pem) {
    if (pem.empty()) return;
    curl_blob b{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
    api.easy_setopt(c, opt, &b);
  };
  if (tls.ca_file.empty()) blob(CURLOPT_CAINFO_BLOB, tls.ca_pem);
  if (tls.cert_file.empty()) blob(CURLOPT_SSLCERT_BLOB, tls.cert_pem);
  if (tls.key_file.empty()) blob(CURLOPT_SSLKEY_BLOB, tls.key_pem);
  if (!tls.verify) {
    api.easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    api.easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
}

// A kept-alive connection that broke before any byte of the answer came: the server had closed it while it was
// idle (or reset it). The request is sent once more on a new connection, as a browser or libcurl would.
struct ConnectionLost : HttpTransportError {
  using HttpTransportError::HttpTransportError;
};

std::string url_part(const Curl& api, CURLU* u, CURLUPart part, unsigned flags = 0) {
  char* value = nullptr;
  if (api.url_get(u, part, &value, flags) != CURLUE_OK || !value) return {};
  std::string out(value);
  api.free(value);
  return out;
}

std::string base64(std::string_view in) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << 16;
    if (i + 1 < in.size()) n |= static_cast<uint32_t>(static_cast<unsigned char>(in[i + 1])) << 8;
    if (i + 2 < in.size()) n |= static_cast<unsigned char>(in[i + 2]);
    out += kDigits[(n >> 18) & 63];
    out += kDigits[(n >> 12) & 63];
    out += i + 1 < in.size() ? kDigits[(n >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kDigits[n & 63] : '=';
  }
  return out;
}

// What a POST needs of its URL besides the address libcurl connects to: the origin that a kept-alive connection
// serves, the request target, the Host field, and the credentials of a user@ in it (sent as Basic, as libcurl does).
struct PostTarget {
  std::string origin;  // scheme://host:port
  std::string target;  // /path?query
  std::string host;    // host[:port] as written
  std::string authorization;
};

PostTarget post_target(const std::string& url) {
  const Curl& api = curl();
  std::unique_ptr<CURLU, void (*)(CURLU*)> u(api.url(), api.url_cleanup);
  if (!u || api.url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK)
    throw HttpTransportError(fmt::format("POST {}: refused: not a URL", url));
  PostTarget t;
  std::string host = url_part(api, u.get(), CURLUPART_HOST);
  std::string port = url_part(api, u.get(), CURLUPART_PORT);
  t.origin = ascii_lower(url_part(api, u.get(), CURLUPART_SCHEME)) + "://" + host + ":" +
             url_part(api, u.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
  t.host = port.empty() ? host : host + ":" + port;
  t.target = url_part(api, u.get(), CURLUPART_PATH);
  if (t.target.empty()) t.target = "/";
  std::string query = url_part(api, u.get(), CURLUPART_QUERY);
  if (!query.empty()) t.target += "?" + query;
  std::string user = url_part(api, u.get(), CURLUPART_USER, CURLU_URLDECODE);
  if (!user.empty())
    t.authorization = "Basic " + base64(user + ":" + url_part(api, u.get(), CURLUPART_PASSWORD, CURLU_URLDECODE));
  return t;
}

// The request head. The caller's fields come as libcurl takes them ("Name: value"; "Name:" drops a field of ours);
// Content-Length is always ours.
std::string post_head(const PostTarget& t, const std::vector<std::string>& headers, uint64_t length) {
  std::string own;  // the caller's fields, and the names they set
  std::vector<std::string> named;
  for (const std::string& h : headers) {
    size_t colon = h.find(':');
    if (colon == std::string::npos) continue;
    std::string name = ascii_lower(ascii_trim(std::string_view(h).substr(0, colon), " \t"));
    named.push_back(name);
    if (name == "content-length" || ascii_trim(std::string_view(h).substr(colon + 1), " \t").empty()) continue;
    own += h;
    own += "\r\n";
  }
  auto ours = [&](std::string_view name) { return std::find(named.begin(), named.end(), name) == named.end(); };
  std::string head = fmt::format("POST {} HTTP/1.1\r\n", t.target);
  if (ours("host")) head += fmt::format("Host: {}\r\n", t.host);
  if (ours("user-agent")) head += "User-Agent: gcm/" GCM_VERSION "\r\n";
  if (ours("accept")) head += "Accept: */*\r\n";
  if (!t.authorization.empty() && ours("authorization")) head += fmt::format("Authorization: {}\r\n", t.authorization);
  head += own;
  head += fmt::format("Content-Length: {}\r\n\r\n", length);
  return head;
}

// Waits until the socket is ready for `events` or the deadline passes (HttpTransportError "timed out").
void wait_for(curl_socket_t fd, short events, Deadline deadline, std::chrono::milliseconds timeout) {
  for (;;) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw HttpTransportError(fmt::format("timed out after {} ms", timeout.count()));
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX)));
    if (r > 0) return;
    if (r < 0 && errno != EINTR) throw HttpTransportError(fmt::format("poll: {}", std::strerror(errno)));
  }
}

// Blocks SIGPIPE on this thread while a TLS connection is written: OpenSSL writes with write(), not
// send(MSG_NOSIGNAL), and a server that has gone would raise it. A SIGPIPE raised meanwhile is taken off the
// thread's pending signals before the old mask returns, so the write fails with EPIPE and nothing else happens.
class SigpipeBlocked {
 public:
  explicit SigpipeBlocked(bool active) : active_(active) {
    if (!active_) return;
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlocked() {
    if (!active_) return;
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      timespec now{};
      sigtimedwait(&pipe_, nullptr, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  bool active_;
  bool was_pending_ = false;
  sigset_t pipe_{}, old_{};
};

}  // namespace

HttpClient::HttpClient(HttpClientTls tls) : tls_(std::move(tls)) {
  global_init();
  curl_ = curl().easy_init();
  if (!curl_) throw HttpTransportError("curl_easy_init failed");
}

HttpResponse HttpClient::get(const std::string& url, std::chrono::milliseconds timeout,
                             const std::vector<std::string>& headers) {
  return perform("GET", url, nullptr, headers, timeout);
}

HttpResponse HttpClient::request(const std::string& method, const std::string& url, const std::string& body,
                                 const std::vector<std::string>& headers, std::chrono::milliseconds timeout) {
  return perform(method, url, &body, headers, timeout);
}

HttpResponse HttpClient::perform(const std::string& method, const std::string& url, const std::string* body,
                                 const std::vector<std::string>& headers, std::chrono::milliseconds timeout) {
  // The options were checked where they were given; this keeps any other caller from reaching libcurl's other
  // protocols (file://, gopher://, ...).
  if (auto problem = http_url_problem(url))
    throw HttpTransportError(fmt::format("{} {}: refused: {}", method, url, *problem));
  const Curl& api = curl();
  CURL* c = static_cast<CURL*>(curl_);
  api.easy_reset(c);
  HttpResponse res;
  curl_slist* hdrs = nullptr;
  for (const auto& h : headers) hdrs = api.slist_append(hdrs, h.c_str());
  hdrs = api.slist_append(hdrs, "Expect:");  // no 100-continue round trip for large bodies
  api.easy_setopt(c, CURLOPT_URL, url.c_str());
  api.easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
  if (body) {
    api.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
    api.easy_setopt(c, CURLOPT_POSTFIELDS, body->data());
  }
  if (method != "GET") api.easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  api.easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  api.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout.count()));
  api.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  api.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  BodySink sink{&res, max_body_bytes_};
  api.easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  if (!unix_socket_.empty()) api.easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, unix_socket_.c_str());
  api.easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  api.easy_setopt(c, CURLOPT_HEADERDATA, &res);
  api.easy_setopt(c, CURLOPT_USERAGENT, "gcm/" GCM_VERSION);
  set_tls_options(api, c, tls_);
  CURLcode rc = api.easy_perform(c);
  api.slist_free_all(hdrs);
  if (sink.too_large)
    throw HttpTransportError(fmt::format("{} {}: the response is larger than {} bytes", method, url, max_body_bytes_));
  if (rc != CURLE_OK) {
    throw HttpTransportError(fmt::format("{} {}{}: {}", method, url,
                                         unix_socket_.empty() ? "" : " on unix socket " + unix_socket_,
                                         api.easy_strerror(rc)));
  }
  api.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res.status);
  return res;
}

HttpResponse HttpClient::post(const std::string& url, const std::string& body, const std::vector<std::string>& headers,
                              std::chrono::milliseconds timeout) {
  return post(url, std::span<const std::string>(&body, 1), headers, timeout);
}

// One kept-alive HTTP/1.1 connection for POSTs. libcurl opens it (DNS, TCP or the unix socket, TLS, a proxy's
// tunnel: CURLOPT_CONNECT_ONLY), and the request is written on it straight from the caller's buffers
// (curl_easy_send: send() for plain HTTP, SSL_write for HTTPS); the answer is read with curl_easy_recv and framed by
// HttpResponseReader. Not curl_easy_perform: libcurl copies every byte of a request body into its upload buffer
// before it sends it, a copy of everything slurm_processor forwards (bench/README.md).
struct HttpClient::PostConnection {
  CURL* handle = nullptr;
  curl_socket_t fd = CURL_SOCKET_BAD;
  std::string origin;      // what it is connected to: scheme://host:port
  std::string target_url;  // the URL `target` was read from: a sender posts to the same few URLs again and again
  PostTarget target;
  bool plain = false;  // straight to the server without TLS: the socket can be written directly

  ~PostConnection() { close(); }

  void close() {
    if (handle) curl().easy_cleanup(handle);
    handle = nullptr;
    fd = CURL_SOCKET_BAD;
    origin.clear();
    plain = false;
  }

  const PostTarget& target_of(const std::string& url) {
    if (url != target_url) {
      target = post_target(url);
      target_url = url;
    }
    return target;
  }

  // Whether it can carry a request to `to`: connected there, and not closed by the server meanwhile.
  bool usable_for(const std::string& to) {
    if (!handle || origin != to) return false;
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, 0);
    if (r == 0) return true;
    if (r < 0 || (p.revents & (POLLERR | POLLHUP | POLLNVAL))) return false;
    // Readable while no request is out: a TLS session ticket (read and dropped by libcurl, which then answers
    // "again"), or the end of the connection, or bytes no request asked for.
    char c;
    size_t n = 0;
    return curl().easy_recv(handle, &c, 1, &n) == CURLE_AGAIN;
  }

  void open(const std::string& url, const std::string& to, const HttpClientTls& tls, const std::string& unix_socket,
            Deadline deadline, std::chrono::milliseconds timeout) {
    close();
    const Curl& api = curl();
    handle = api.easy_init();
    if (!handle) throw HttpTransportError("curl_easy_init failed");
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw HttpTransportError(fmt::format("timed out after {} ms", timeout.count()));
    api.easy_setopt(handle, CURLOPT_URL, url.c_str());
    api.easy_setopt(handle, CURLOPT_CONNECT_ONLY, 1L);
    api.easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    api.easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(left.count()));
    api.easy_setopt(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(left.count()));
    // Through a proxy (http_proxy and the like), the request written here is for the server: a tunnel carries it.
    api.easy_setopt(handle, CURLOPT_HTTPPROXYTUNNEL, 1L);
    if (!unix_socket.empty()) api.easy_setopt(handle, CURLOPT_UNIX_SOCKET_PATH, unix_socket.c_str());
    set_tls_options(api, handle, tls);
    CURLcode rc = api.easy_perform(handle);
    if (rc == CURLE_OK) rc = api.easy_getinfo(handle, CURLINFO_ACTIVESOCKET, &fd);
    if (rc != CURLE_OK || fd == CURL_SOCKET_BAD) {
      std::string why = rc != CURLE_OK ? api.easy_strerror(rc) : "no socket";
      long proxy_answer = 0;
      api.easy_getinfo(handle, CURLINFO_HTTP_CONNECTCODE, &proxy_answer);
      if (proxy_answer >= 300)
        why += fmt::format(
            " (the proxy answered CONNECT with HTTP {}: list the server in no_proxy, or let the proxy "
            "tunnel to its port)",
            proxy_answer);
      close();
      throw HttpTransportError(why);
    }
    long tunnel = 0;  // the proxy's answer to CONNECT; 0 without one
    api.easy_getinfo(handle, CURLINFO_HTTP_CONNECTCODE, &tunnel);
    plain = !to.starts_with("https:") && tunnel == 0;
    origin = to;
  }

  // The head and the pieces of the body. On a plain connection, one sendmsg over all of them as far as the socket
  // takes them at a time (a batch of dozens of requests in a few system calls, none of them copied in user space);
  // over TLS or a proxy's tunnel (which may be TLS too), libcurl writes each one.
  void send_request(std::string_view head, std::span<const std::string> body, Deadline deadline,
                    std::chrono::milliseconds timeout) {
    if (!plain) {
      send(head, deadline, timeout);
      for (const std::string& piece : body) send(piece, deadline, timeout);
      return;
    }
    std::vector<iovec> iov;
    iov.reserve(body.size() + 1);
    iov.push_back({const_cast<char*>(head.data()), head.size()});
    for (const std::string& piece : body)
      if (!piece.empty()) iov.push_back({const_cast<char*>(piece.data()), piece.size()});
    size_t at = 0;  // the first piece not sent whole
    while (at < iov.size()) {
      msghdr m{};
      m.msg_iov = &iov[at];
      m.msg_iovlen = std::min<size_t>(iov.size() - at, IOV_MAX);
      ssize_t n = ::sendmsg(fd, &m, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          wait_for(fd, POLLOUT, deadline, timeout);
        } else if (errno != EINTR) {
          throw ConnectionLost(fmt::format("send: {}", std::strerror(errno)));
        }
        continue;
      }
      for (auto sent = static_cast<size_t>(n); sent > 0;) {
        size_t take = std::min(sent, iov[at].iov_len);
        iov[at].iov_base = static_cast<char*>(iov[at].iov_base) + take;
        iov[at].iov_len -= take;
        sent -= take;
        if (iov[at].iov_len == 0) ++at;
      }
    }
  }

  void send(std::string_view data, Deadline deadline, std::chrono::milliseconds timeout) {
    while (!data.empty()) {
      size_t n = 0;
      CURLcode rc = curl().easy_send(handle, data.data(), data.size(), &n);
      if (rc == CURLE_AGAIN) {
        wait_for(fd, POLLOUT, deadline, timeout);
        continue;
      }
      if (rc != CURLE_OK) throw ConnectionLost(curl().easy_strerror(rc));
      data.remove_prefix(n);
    }
  }

  void receive(HttpResponseReader& reader, Deadline deadline, std::chrono::milliseconds timeout) {
    char buf[16384];
    for (;;) {
      size_t n = 0;
      CURLcode rc = curl().easy_recv(handle, buf, sizeof buf, &n);
      if (rc == CURLE_AGAIN) {
        wait_for(fd, POLLIN, deadline, timeout);
        continue;
      }
      if (rc != CURLE_OK) {
        if (!reader.started()) throw ConnectionLost(curl().easy_strerror(rc));
        throw HttpTransportError(curl().easy_strerror(rc));
      }
      if (n == 0) {
        if (!reader.started()) throw ConnectionLost("the server closed the connection without an answer");
        reader.end_of_stream();
        return;
      }
      if (reader.feed(std::string_view(buf, n))) return;
    }
  }
};

HttpClient::~HttpClient() { curl().easy_cleanup(static_cast<CURL*>(curl_)); }  // post_ closes its own

HttpResponse HttpClient::post(const std::string& url, std::span<const std::string> body,
                              const std::vector<std::string>& headers, std::chrono::milliseconds timeout) {
  if (auto problem = http_url_problem(url))
    throw HttpTransportError(fmt::format("POST {}: refused: {}", url, *problem));
  auto deadline = std::chrono::steady_clock::now() + timeout;
  if (!post_) post_ = std::make_unique<PostConnection>();
  const PostTarget& target = post_->target_of(url);
  uint64_t length = 0;
  for (const std::string& piece : body) length += piece.size();
  std::string head = post_head(target, headers, length);
  SigpipeBlocked pipe_blocked(target.origin.starts_with("https:"));
  auto failed = [&](const std::exception& e) {
    return HttpTransportError(
        fmt::format("POST {}{}: {}", url, unix_socket_.empty() ? "" : " on unix socket " + unix_socket_, e.what()));
  };
  for (int attempt = 0;; ++attempt) {
    bool reused = post_->usable_for(target.origin);
    bool sending = false;
    try {
      if (!reused) post_->open(url, target.origin, tls_, unix_socket_, deadline, timeout);
      sending = true;
      post_->send_request(head, body, deadline, timeout);
      sending = false;
      HttpResponseReader reader(max_body_bytes_);
      post_->receive(reader, deadline, timeout);
      if (!reader.keep_alive()) post_->close();
      return std::move(reader.response());
    } catch (const ConnectionLost& e) {
      if (sending) {
        // A server may answer before it has read the whole request (413, 401) and close the connection: its answer,
        // when it came, is the result.
        HttpResponseReader early(max_body_bytes_);
        try {
          post_->receive(early, deadline, timeout);
        } catch (const HttpTransportError&) {
        }
        if (early.done()) {
          post_->close();
          return std::move(early.response());
        }
      }
      post_->close();
      if (reused && attempt == 0) continue;  // the server had closed the kept-alive connection: once more, anew
      throw failed(e);
    } catch (const HttpTransportError& e) {
      post_->close();
      throw failed(e);
    }
  }
}

std::optional<double> parse_retry_after(const std::string& value) {
  if (value.empty()) return std::nullopt;
  bool digits = true;
  for (char c : value) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (digits) return std::stod(value);
  std::tm tm{};
  if (strptime(value.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm)) {
    double delta = std::difftime(timegm(&tm), std::time(nullptr));
    return delta > 0 ? delta : 0.0;
  }
  return std::nullopt;
}

}  // namespace gcm

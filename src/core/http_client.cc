#include "core/http_client.h"

#include <curl/curl.h>
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

#include <fmt/format.h>

#include "core/endpoint_url.h"

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

// The request body as libcurl reads it: the pieces in order, and where the next read starts. libcurl seeks back to
// the start when it sends the request again on a new connection (a kept-alive one the server had closed).
struct BodySource {
  std::span<const std::string> parts;
  size_t part = 0;    // the piece the next read starts in
  size_t offset = 0;  // within it
};

size_t on_read(char* into, size_t size, size_t n, void* user) {
  auto* src = static_cast<BodySource*>(user);
  size_t room = size * n, filled = 0;
  while (filled < room && src->part < src->parts.size()) {
    const std::string& piece = src->parts[src->part];
    size_t take = std::min(room - filled, piece.size() - src->offset);
    std::memcpy(into + filled, piece.data() + src->offset, take);
    filled += take;
    src->offset += take;
    if (src->offset == piece.size()) {
      ++src->part;
      src->offset = 0;
    }
  }
  return filled;
}

int on_seek(void* user, curl_off_t to, int origin) {
  auto* src = static_cast<BodySource*>(user);
  if (origin != SEEK_SET || to < 0) return CURL_SEEKFUNC_CANTSEEK;
  src->part = 0;
  src->offset = 0;
  auto left = static_cast<size_t>(to);
  while (src->part < src->parts.size() && left >= src->parts[src->part].size()) {
    left -= src->parts[src->part].size();
    ++src->part;
  }
  if (left > 0 && src->part == src->parts.size()) return CURL_SEEKFUNC_FAIL;  // past the end
  src->offset = left;
  return CURL_SEEKFUNC_OK;
}

}  // namespace

HttpClient::HttpClient(HttpClientTls tls) : tls_(std::move(tls)) {
  global_init();
  curl_ = curl().easy_init();
  if (!curl_) throw HttpTransportError("curl_easy_init failed");
}

HttpClient::~HttpClient() { curl().easy_cleanup(static_cast<CURL*>(curl_)); }

HttpResponse HttpClient::perform(const std::string& url, const std::span<const std::string>* body,
                                 const std::vector<std::string>& headers, std::chrono::milliseconds timeout) {
  // The options were checked where they were given; this keeps any other caller from reaching libcurl's other
  // protocols (file://, gopher://, ...).
  if (auto problem = http_url_problem(url))
    throw HttpTransportError(fmt::format("{} {}: refused: {}", body ? "POST" : "GET", url, *problem));
  const Curl& api = curl();
  CURL* c = static_cast<CURL*>(curl_);
  api.easy_reset(c);
  HttpResponse res;
  curl_slist* hdrs = nullptr;
  for (const auto& h : headers) hdrs = api.slist_append(hdrs, h.c_str());
  hdrs = api.slist_append(hdrs, "Expect:");  // no 100-continue round trip for large bodies
  api.easy_setopt(c, CURLOPT_URL, url.c_str());
  api.easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
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
  if (!tls_.ca_file.empty()) api.easy_setopt(c, CURLOPT_CAINFO, tls_.ca_file.c_str());
  if (!tls_.cert_file.empty()) api.easy_setopt(c, CURLOPT_SSLCERT, tls_.cert_file.c_str());
  if (!tls_.key_file.empty()) api.easy_setopt(c, CURLOPT_SSLKEY, tls_.key_file.c_str());
  if (!tls_.verify) {
    api.easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    api.easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  BodySource source;
  if (body) {
    source.parts = *body;
    curl_off_t total = 0;
    for (const std::string& piece : *body) total += static_cast<curl_off_t>(piece.size());
    api.easy_setopt(c, CURLOPT_POST, 1L);
    api.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, total);  // a Content-Length, not chunked
    api.easy_setopt(c, CURLOPT_READFUNCTION, on_read);
    api.easy_setopt(c, CURLOPT_READDATA, &source);
    api.easy_setopt(c, CURLOPT_SEEKFUNCTION, on_seek);
    api.easy_setopt(c, CURLOPT_SEEKDATA, &source);
    if (upload_buffer_bytes_) api.easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, static_cast<long>(upload_buffer_bytes_));
  }
  CURLcode rc = api.easy_perform(c);
  api.slist_free_all(hdrs);
  if (sink.too_large)
    throw HttpTransportError(
        fmt::format("{} {}: the response is larger than {} bytes", body ? "POST" : "GET", url, max_body_bytes_));
  if (rc != CURLE_OK) {
    throw HttpTransportError(fmt::format("{} {}{}: {}", body ? "POST" : "GET", url,
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

HttpResponse HttpClient::post(const std::string& url, std::span<const std::string> body,
                              const std::vector<std::string>& headers, std::chrono::milliseconds timeout) {
  return perform(url, &body, headers, timeout);
}

HttpResponse HttpClient::get(const std::string& url, std::chrono::milliseconds timeout,
                             const std::vector<std::string>& headers) {
  return perform(url, nullptr, headers, timeout);
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

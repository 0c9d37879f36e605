#include "core/http_client.h"

#include <curl/curl.h>
#include <zlib.h>

#include <cctype>
#include <ctime>
#include <mutex>

#include <fmt/format.h>

namespace gcm {

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  static_cast<HttpResponse*>(user)->body.append(data, size * n);
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

}  // namespace

HttpClient::HttpClient() {
  global_init();
  curl_ = curl_easy_init();
  if (!curl_) throw HttpTransportError("curl_easy_init failed");
}

HttpClient::~HttpClient() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

HttpResponse HttpClient::perform(const std::string& url, const std::string* body,
                                 const std::vector<std::string>& headers, std::chrono::milliseconds timeout) {
  CURL* c = static_cast<CURL*>(curl_);
  curl_easy_reset(c);
  HttpResponse res;
  curl_slist* hdrs = nullptr;
  for (const auto& h : headers) hdrs = curl_slist_append(hdrs, h.c_str());
  hdrs = curl_slist_append(hdrs, "Expect:");  // no 100-continue round trip for large bodies
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &res);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &res);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "gcm/" GCM_VERSION);
  if (body) {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  }
  CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(hdrs);
  if (rc != CURLE_OK) {
    throw HttpTransportError(fmt::format("{} {}: {}", body ? "POST" : "GET", url, curl_easy_strerror(rc)));
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res.status);
  return res;
}

HttpResponse HttpClient::post(const std::string& url, const std::string& body, const std::vector<std::string>& headers,
                              std::chrono::milliseconds timeout) {
  return perform(url, &body, headers, timeout);
}

HttpResponse HttpClient::get(const std::string& url, std::chrono::milliseconds timeout) {
  return perform(url, nullptr, {}, timeout);
}

std::string gzip_compress(const std::string& data) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::string out;
  out.resize(deflateBound(&zs, data.size()) + 32);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("gzip compression failed");
  out.resize(zs.total_out);
  return out;
}

std::string gzip_decompress(const std::string& data) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw std::runtime_error("inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[65536];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      throw std::runtime_error("invalid gzip data");
    }
    out.append(buf, sizeof buf - zs.avail_out);
  } while (rc != Z_STREAM_END);
  inflateEnd(&zs);
  return out;
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

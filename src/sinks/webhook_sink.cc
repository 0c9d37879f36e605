// webhook: POSTs each chunk as one JSON array to a URL (GCM's webhook exporter): LOG records with null fields
// removed, METRIC records flattened, in Python's json.dumps form, i.e. the same body the stdout sink prints for the
// chunk. `Content-Type: application/json`, `Authorization: Bearer <token>` when a token is given. Failed POSTs go
// through the common retry policy (core/retry.h): connection failures, timeouts, 429, 502, 503 and 504 are
// retried with backoff, honouring Retry-After; any other non-2xx answer fails the chunk at once with the
// receiver's status and message.
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/endpoint_url.h"
#include "core/http_client.h"
#include "core/json.h"
#include "core/retry.h"
#include "sinks/sink.h"

namespace gcm {
namespace {

// Webhook URLs often carry their secret in the path or query (Slack's /services/T../B../<secret>), so messages and
// logs name the endpoint by its origin only.
std::string origin_of(const std::string& url) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return url;
  size_t host_start = scheme_end + 3;
  size_t path = url.find_first_of("/?#", host_start);
  std::string authority = url.substr(host_start, path == std::string::npos ? std::string::npos : path - host_start);
  if (size_t at = authority.rfind('@'); at != std::string::npos) authority = authority.substr(at + 1);  // user:pass
  return url.substr(0, host_start) + authority + (path == std::string::npos ? "" : "/...");
}

// A token goes into a request header: a CR, LF or other control character would end the header early and let the
// value inject headers of its own.
void check_token(const std::string& token, const std::string& what) {
  if (token.empty()) throw SinkUsageError(fmt::format("sink 'webhook': {} is empty", what));
  for (unsigned char c : token) {
    if (c < 0x20 || c == 0x7f)
      throw SinkUsageError(fmt::format("sink 'webhook': {} contains a control character (a line break?)", what));
  }
}

std::string read_token_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SinkUsageError(fmt::format("sink 'webhook': cannot read bearer_token_file '{}'", path));
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  check_token(line, fmt::format("the first line of bearer_token_file '{}'", path));
  return line;
}

// The body of an error answer, shortened to one line: enough to see why the receiver refused.
std::string answer_excerpt(const std::string& body) {
  std::string s = body.substr(0, 300);
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (body.size() > 300) s += "...";
  return s.empty() ? "(no body)" : s;
}

class WebhookSink : public Sink {
 public:
  WebhookSink(const SinkOptions& o, const SinkContext& ctx) : retry_(ctx.retry), log_(ctx.log) {
    url_ = o.get_string("url");
    if (url_.empty())
      throw SinkUsageError("sink 'webhook' needs -o url=http(s)://HOST/PATH (where the JSON arrays are POSTed)");
    if (auto problem = http_url_problem(url_))
      throw SinkUsageError(invalid_url_message("-o url", origin_of(url_), *problem));
    double timeout_s = o.get_double("timeout", 30);
    if (!(timeout_s > 0) || timeout_s > 3600)
      throw SinkUsageError(fmt::format("sink 'webhook': timeout must be more than 0 and at most 3600 seconds, got {}",
                                       o.find("timeout")->to_display_string()));
    timeout_ = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    if (o.has("bearer_token") && o.has("bearer_token_file"))
      throw SinkUsageError("sink 'webhook': give bearer_token or bearer_token_file, not both");
    std::string token;
    if (o.has("bearer_token")) {
      token = o.get_string("bearer_token");
      check_token(token, "bearer_token");
    } else if (o.has("bearer_token_file")) {
      token = read_token_file(o.get_string("bearer_token_file"));
    }
    headers_.push_back("Content-Type: application/json");
    if (!token.empty()) headers_.push_back("Authorization: Bearer " + token);
    HttpClientTls tls;
    tls.verify = o.get_bool("verify_ssl", true);
    tls.ca_file = o.get_string("ca_file");
    if (!tls.verify && !tls.ca_file.empty())
      throw SinkUsageError("sink 'webhook': ca_file has no effect with verify_ssl=false (nothing is verified)");
    if (!tls.ca_file.empty() && !std::ifstream(tls.ca_file))
      throw SinkUsageError(fmt::format("sink 'webhook': cannot read ca_file '{}'", tls.ca_file));
    if (log_ && !tls.verify)
      log_->warn("sink 'webhook': verify_ssl=false: the certificate of {} is not checked", origin_of(url_));
    if (log_ && !token.empty() && url_.rfind("http://", 0) == 0)
      log_->warn("sink 'webhook': the bearer token is sent to {} without TLS", origin_of(url_));
    http_ = std::make_unique<HttpClient>(tls);
  }

  void begin_chunk(const BatchInfo& info) override {
    metric_ = info.data_type == DataType::Metric;
    body_.clear();
    body_.push_back('[');  // (assign("[") trips GCC 12's -Wrestrict false positive)
    records_ = 0;
  }

  void write(const Record& r) override {
    if (records_++ > 0) body_.append(", ");
    JsonWriter w(body_, JsonStyle::Python);
    if (metric_)
      w.flat_record(r);
    else
      w.record(r, /*drop_nulls=*/true);
  }

  // The chunk is cleared whether or not it was delivered: the loop reports a failure, and resending it with the
  // next chunk would duplicate it at the receiver when the failure was only the answer getting lost.
  void end_chunk() override {
    if (records_ == 0) return;
    body_.push_back(']');
    struct Clear {
      WebhookSink* s;
      ~Clear() {
        s->body_.clear();
        s->records_ = 0;
      }
    } clear{this};
    post();
  }

  void flush() override { end_chunk(); }

 private:
  void post() {
    auto attempt = [this] {
      HttpResponse res;
      try {
        res = http_->post(url_, body_, headers_, timeout_);
      } catch (const HttpTransportError& e) {
        throw RetryableError(fmt::format("webhook {}: {}", origin_of(url_), transport_reason(e.what())));
      }
      if (res.status >= 200 && res.status < 300) return;
      std::string why =
          fmt::format("webhook {} answered HTTP {}: {}", origin_of(url_), res.status, answer_excerpt(res.body));
      if (is_retryable_http_status(res.status)) throw RetryableError(why, parse_retry_after(res.header("retry-after")));
      throw SinkError(why);
    };
    try {
      retry_with_backoff(retry_, attempt, [this](const RetryableError& e, int retry, double delay) {
        if (log_) log_->warn("{}; retry {}/{} in {:.1f} s", e.what(), retry + 1, retry_.retries, delay);
      });
    } catch (const RetriesExhausted& e) {
      throw SinkError(e.what());
    }
  }

  // libcurl's message starts with "POST <full url>: ", which would put the URL's secret in the log.
  std::string transport_reason(const std::string& what) const {
    std::string prefix = "POST " + url_ + ": ";
    return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
  }

  std::string url_;
  std::chrono::milliseconds timeout_{30000};
  std::vector<std::string> headers_;
  RetryPolicy retry_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<HttpClient> http_;
  std::string body_;
  size_t records_ = 0;
  bool metric_ = false;
};

const bool kWebhookSinkRegistered = register_sink({
    "webhook",
    "POSTs each chunk as one JSON array (the stdout sink's form) to a URL, with retries.",
    {
        {"url", "str", "http:// or https:// URL the arrays are POSTed to (required)", ""},
        {"timeout", "float", "seconds one POST may take, connecting included", "30"},
        {"bearer_token", "str", "sent as 'Authorization: Bearer <token>'", ""},
        {"bearer_token_file", "path", "a file whose first line is the bearer token (keeps it out of ps and configs)",
         ""},
        {"verify_ssl", "bool", "check the https:// server's certificate and name; false accepts any", "true"},
        {"ca_file", "path", "PEM CA certificate(s) that verify the server (a private CA)", "the system's CAs"},
    },
    [](const SinkOptions& o, const SinkContext& ctx) { return std::make_unique<WebhookSink>(o, ctx); },
});

}  // namespace
}  // namespace gcm

// The part of Prometheus's HTTP API that jobstats and usage read: instant and range queries
// (/api/v1/query, /api/v1/query_range), through the project's HTTP client, with a timeout on every request.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/http_client.h"

namespace gcm::jobstats {

// Prometheus did not answer, answered with an error, or answered something that is not its API's JSON. The message
// names the server's URL and the query.
struct PrometheusError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Labels = std::map<std::string, std::string>;

struct Point {
  int64_t t = 0;  // Unix seconds (the evaluation instants of a range query are whole seconds here)
  double v = 0;
};

struct Series {
  Labels labels;
  std::vector<Point> points;  // ascending t
  std::string label(const std::string& name) const {
    auto it = labels.find(name);
    return it == labels.end() ? std::string() : it->second;
  }
};

// "a=1&b=x%20y": form encoding of the request parameters (RFC 3986 unreserved characters kept).
std::string form_encode(const std::vector<std::pair<std::string, std::string>>& params);

// The series of a successful API answer: a "matrix" (range query) or a "vector" (instant query, one point each).
// Throws PrometheusError (with `what` in the message) on an error answer or JSON that is not the API's.
std::vector<Series> parse_query_answer(std::string_view body, const std::string& what);

class PrometheusApi {
 public:
  // base_url: "http://host:9090" (a path prefix such as ".../prometheus" is kept). Throws std::invalid_argument
  // when it is not an http(s) URL.
  PrometheusApi(std::string base_url, std::chrono::milliseconds timeout);

  std::vector<Series> query_range(const std::string& expr, int64_t start, int64_t end, int64_t step_s);
  std::vector<Series> query(const std::string& expr, int64_t time);

  const std::string& base_url() const { return base_; }

 private:
  std::vector<Series> post(const std::string& path, const std::vector<std::pair<std::string, std::string>>& params,
                           const std::string& expr);
  std::string base_;
  std::chrono::milliseconds timeout_;
  HttpClient http_;
};

// A PromQL string literal for value: double quotes, with backslashes and quotes escaped (a job id or account from
// the command line never breaks out of its label matcher).
std::string promql_string(std::string_view value);

}  // namespace gcm::jobstats

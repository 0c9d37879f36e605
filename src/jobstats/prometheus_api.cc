#include "jobstats/prometheus_api.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "core/endpoint_url.h"
#include "core/json_limits.h"

namespace gcm::jobstats {

namespace {

// Prometheus writes sample values as strings ("1.5", "NaN", "+Inf"); strtod reads all of them.
double sample_value(const nlohmann::json& v, const std::string& what) {
  if (!v.is_string()) throw PrometheusError(what + ": a sample value is not a string");
  const std::string& s = v.get_ref<const std::string&>();
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') throw PrometheusError(what + ": sample value '" + s + "' is not a number");
  return d;
}

Point parse_point(const nlohmann::json& p, const std::string& what) {
  if (!p.is_array() || p.size() != 2 || !p[0].is_number())
    throw PrometheusError(what + ": a sample is not [time, \"value\"]");
  return {static_cast<int64_t>(std::llround(p[0].get<double>())), sample_value(p[1], what)};
}

}  // namespace

std::string form_encode(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out;
  for (const auto& [k, v] : params) {
    if (!out.empty()) out += '&';
    out += k;
    out += '=';
    for (unsigned char c : v) {
      if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
        out += static_cast<char>(c);
      else
        out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::vector<Series> parse_query_answer(std::string_view body, const std::string& what) {
  nlohmann::json j;
  try {
    j = parse_json_limited_or_throw(body);
  } catch (const JsonInputError& e) {
    throw PrometheusError(what + ": the answer is not JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw PrometheusError(what + ": the answer is not a JSON object");
  if (j.value("status", "") != "success") {
    std::string type = j.contains("errorType") && j["errorType"].is_string() ? j["errorType"].get<std::string>() : "";
    std::string err = j.contains("error") && j["error"].is_string() ? j["error"].get<std::string>()
                                                                    : std::string(body.substr(0, 200));
    throw PrometheusError(what + ": Prometheus answered " + (type.empty() ? "an error" : type) + ": " + err);
  }
  const auto& data = j["data"];
  if (!data.is_object() || !data["result"].is_array()) throw PrometheusError(what + ": no data.result in the answer");
  std::string type = data.value("resultType", "");
  if (type != "matrix" && type != "vector")
    throw PrometheusError(what + ": resultType '" + type + "', expected matrix or vector");
  std::vector<Series> out;
  for (const auto& r : data["result"]) {
    Series s;
    if (r.contains("metric") && r["metric"].is_object())
      for (const auto& [k, v] : r["metric"].items())
        if (v.is_string()) s.labels[k] = v.get<std::string>();
    if (type == "matrix") {
      if (!r.contains("values") || !r["values"].is_array()) throw PrometheusError(what + ": a series has no values");
      for (const auto& p : r["values"]) s.points.push_back(parse_point(p, what));
    } else {
      if (!r.contains("value")) throw PrometheusError(what + ": a sample has no value");
      s.points.push_back(parse_point(r["value"], what));
    }
    out.push_back(std::move(s));
  }
  return out;
}

PrometheusApi::PrometheusApi(std::string base_url, std::chrono::milliseconds timeout)
    : base_(std::move(base_url)), timeout_(timeout) {
  if (auto problem = http_url_problem(base_))
    throw std::invalid_argument(invalid_url_message("--prometheus-url", base_, *problem));
  while (!base_.empty() && base_.back() == '/') base_.pop_back();
}

std::vector<Series> PrometheusApi::query_range(const std::string& expr, int64_t start, int64_t end, int64_t step_s) {
  return post("/api/v1/query_range",
              {{"query", expr},
               {"start", std::to_string(start)},
               {"end", std::to_string(end)},
               {"step", std::to_string(step_s)}},
              expr);
}

std::vector<Series> PrometheusApi::query(const std::string& expr, int64_t time) {
  return post("/api/v1/query", {{"query", expr}, {"time", std::to_string(time)}}, expr);
}

std::vector<Series> PrometheusApi::post(const std::string& path,
                                        const std::vector<std::pair<std::string, std::string>>& params,
                                        const std::string& expr) {
  // POST with a form body, as Grafana does: long PromQL never meets a URL length limit of a proxy.
  std::string what = "Prometheus at " + base_ + " (query " + expr + ")";
  HttpResponse res;
  try {
    res = http_.post(base_ + path, form_encode(params), {"Content-Type: application/x-www-form-urlencoded"}, timeout_);
  } catch (const HttpTransportError& e) {
    throw PrometheusError("Prometheus at " + base_ + " does not answer: " + e.what());
  }
  // 400 and 422 carry the API's JSON error (a bad expression, too many points): parse_query_answer reports it.
  if (res.status != 200 && res.status != 400 && res.status != 422)
    throw PrometheusError(
        fmt::format("{}: HTTP {} from {}{}: {}", what, res.status, base_, path, res.body.substr(0, 200)));
  return parse_query_answer(res.body, what);
}

std::string promql_string(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace gcm::jobstats

#include "slurm/rest_client.h"
#include "core/clock.h"

#include <ctime>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/endpoint_url.h"
#include "core/http_client.h"
#include "core/time_zone.h"
#include "slurm/json_reader.h"
#include "slurm/rest_render.h"
#include "slurm/rest_render_sacct.h"
#include "slurm/rest_render_sacctmgr.h"
#include "slurm/rest_render_sshare.h"

namespace gcm::slurm {

namespace {

constexpr std::string_view kUnix = "unix:";

// "v0.0.38" -> (0, 0, 38), for picking the newest version; nullopt for anything else.
std::optional<std::tuple<int, int, int>> api_version_number(const std::string& v) {
  static const std::regex re(R"(v(\d+)\.(\d+)\.(\d+))");
  std::smatch m;
  if (!std::regex_match(v, m, re)) return std::nullopt;
  return std::make_tuple(std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3]));
}

// slurmrestd's own words for a failed request: the "errors" list of its answer, when it has one.
std::string slurm_errors(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("errors") || !j["errors"].is_array()) return "";
  std::string out;
  for (const auto& e : j["errors"]) {
    std::string text;
    for (const char* key : {"description", "error"})
      if (e.is_object() && e.contains(key) && e[key].is_string() && !e[key].get<std::string>().empty()) {
        if (!text.empty()) text += ": ";
        text += e[key].get<std::string>();
      }
    if (!text.empty()) out += (out.empty() ? "" : "; ") + text;
  }
  return out;
}

// What the REST client answers: one row per query name, its endpoint (under /slurm/vX.Y.Z for slurmctld's data,
// /slurmdb/vX.Y.Z for slurmdbd's) and how the answer becomes the CLI output that the query's collector reads.
// serves(), answers_itself() and answer() all read this table, so a query is served exactly when it has a row and the
// API version in use is at least the row's `since`.
enum class RestRender {
  AsIs,
  SqueueJobs,
  SinfoNodes,
  ScontrolPartitions,
  SacctmgrQos,
  SacctmgrUsers,
  SacctmgrUserAssoc,
  SacctRunning,
  Sshare,
};
enum class RestApi { Slurm, Slurmdb };
// An API version as (major, minor, patch), compared as api_version_number's tuples are.
using ApiVersion = std::tuple<int, int, int>;
// The oldest API version whose layouts the renderers read: v0.0.36 and v0.0.37 (also offered by Slurm 22.05's
// slurmrestd) name and nest keys otherwise, and would be written as wrong values rather than fail.
constexpr ApiVersion kOldestApiRead{0, 0, 38};
struct RestRoute {
  std::string_view query;
  RestApi api;
  std::string_view endpoint;
  RestRender render;
  // The first API version with the endpoint: below it, the query runs its command (RestSlurmClient::answers_itself).
  ApiVersion since{0, 0, 0};
};
constexpr RestRoute kRestRoutes[] = {
    {"sinfo_all_nodes_json", RestApi::Slurm, "/nodes", RestRender::AsIs},  // sinfo --json is the REST answer itself
    {"slurm_monitor_sinfo", RestApi::Slurm, "/nodes", RestRender::SinfoNodes},
    {"squeue_jobs", RestApi::Slurm, "/jobs", RestRender::SqueueJobs},
    {"sdiag_json", RestApi::Slurm, "/diag", RestRender::AsIs},  // so is sdiag --json
    {"scontrol_partitions", RestApi::Slurm, "/partitions", RestRender::ScontrolPartitions},
    {"sacctmgr_qos", RestApi::Slurmdb, "/qos", RestRender::SacctmgrQos},
    {"sacctmgr_users", RestApi::Slurmdb, "/users", RestRender::SacctmgrUsers},
    // + "?user=<the user>": the query's argv is `sacctmgr show user <user> withassoc ...`.
    {"sacctmgr_user_assoc", RestApi::Slurmdb, "/associations", RestRender::SacctmgrUserAssoc},
    // The jobs slurmdbd has as running, each with its steps: sacct -s running's rows (--delimiter from the argv).
    {"sacct_running", RestApi::Slurmdb, "/jobs?state=running", RestRender::SacctRunning},
    // The fair-share tree as `sshare -a -P` prints it. /shares came with v0.0.39 (Slurm 23.02): v0.0.38 (Slurm
    // 22.05) has none, so there sshare runs.
    {"sshare", RestApi::Slurm, "/shares", RestRender::Sshare, {0, 0, 39}},
};

const RestRoute* rest_route(std::string_view query_name) {
  for (const RestRoute& r : kRestRoutes)
    if (r.query == query_name) return &r;
  return nullptr;
}

// The user a `sacctmgr show user <user> withassoc ...` query asks for.
const std::string& assoc_user(const SlurmQuery& query) {
  if (query.argv.size() < 4 || query.argv[3].empty())
    throw SlurmError(query.name, "slurmrestd", 0, "the query names no user (expected sacctmgr show user <user> ...)");
  return query.argv[3];
}

// The --delimiter of a `sacct ... --delimiter D ...` query: the rows REST gives are written with it.
const std::string& sacct_delimiter(const SlurmQuery& query) {
  for (size_t i = 0; i + 1 < query.argv.size(); ++i)
    if (query.argv[i] == "--delimiter" && !query.argv[i + 1].empty()) return query.argv[i + 1];
  throw SlurmError(query.name, "slurmrestd", 0, "the query names no delimiter (expected sacct ... --delimiter D ...)");
}

}  // namespace

std::optional<std::string> slurm_rest_url_problem(std::string_view url) {
  if (url.empty()) return "empty; expected http(s)://HOST:PORT or unix:/PATH";
  if (url.starts_with(kUnix)) {
    std::string_view path = url.substr(kUnix.size());
    if (path.empty() || path.front() != '/')
      return "a unix socket needs an absolute path (unix:/run/slurmrestd.socket)";
    return std::nullopt;
  }
  if (auto problem = http_url_problem(url)) return *problem;
  return std::nullopt;
}

std::optional<std::string> slurm_rest_api_version_problem(std::string_view version) {
  std::optional<ApiVersion> n = api_version_number(std::string(version));
  if (n && *n < kOldestApiRead)
    return std::string(
        "older than v0.0.38, the oldest API whose answers are read (Slurm 22.05's slurmrestd offers v0.0.36 and "
        "v0.0.37 "
        "too; leave the option unset to take the newest)");
  return std::nullopt;
}

bool RestSlurmClient::serves(std::string_view query_name) { return rest_route(query_name) != nullptr; }

bool RestSlurmClient::answers_itself(const SlurmQuery& query) {
  const RestRoute* route = rest_route(query.name);
  if (!route) return false;
  if (route->since == ApiVersion{0, 0, 0}) return true;  // every version has the endpoint: nothing to ask
  const std::string& version = api_version();
  std::optional<ApiVersion> number = api_version_number(version);
  if (!number)
    throw SlurmError(query.name, "slurmrestd", 0,
                     fmt::format("the API version '{}' is not of the form vX.Y.Z (check --slurm-rest-api-version), so "
                                 "whether it has {} is not known",
                                 version, route->endpoint));
  return *number >= route->since;
}

RestSlurmClient::RestSlurmClient(SlurmRestOptions options, SlurmClient& fallback)
    : options_(std::move(options)), fallback_(fallback), http_(std::make_unique<HttpClient>()) {
  if (auto problem = slurm_rest_url_problem(options_.url))
    throw std::invalid_argument(fmt::format("slurmrestd URL '{}': {}", options_.url, *problem));
  if (auto problem = slurm_rest_api_version_problem(options_.api_version))
    throw std::invalid_argument(fmt::format("--slurm-rest-api-version {}: {}", options_.api_version, *problem));
  if (options_.url.starts_with(kUnix)) {
    http_->set_unix_socket(options_.url.substr(kUnix.size()));
    base_ = "http://slurmrestd";  // the Host header; the socket is the address
  } else {
    base_ = options_.url;
    while (!base_.empty() && base_.back() == '/') base_.pop_back();
  }
  http_->set_max_body_bytes(options_.max_response_bytes);
}

RestSlurmClient::~RestSlurmClient() = default;

std::string RestSlurmClient::get(const SlurmQuery& query, const std::string& path) {
  std::string url = base_ + path;
  std::string where =
      options_.url.starts_with(kUnix) ? fmt::format("GET {} on {}", path, options_.url) : fmt::format("GET {}", url);
  std::vector<std::string> headers = {"Accept: application/json"};
  // The token goes in a header only: it is never part of a URL, a log line or an error message.
  if (!options_.token.empty()) headers.push_back("X-SLURM-USER-TOKEN: " + options_.token);
  if (!options_.user.empty()) headers.push_back("X-SLURM-USER-NAME: " + options_.user);
  HttpResponse res;
  ++requests_;
  try {
    res = http_->get(url, std::chrono::duration_cast<std::chrono::milliseconds>(options_.timeout), headers);
  } catch (const HttpTransportError& e) {
    throw SlurmError(query.name, where, 0, fmt::format("slurmrestd did not answer: {}", e.what()));
  }
  if (res.status != 200) {
    std::string slurm = slurm_errors(res.body);
    std::string hint = res.status == 401 || res.status == 403
                           ? " (check --slurm-rest-token, --slurm-rest-token-file or $SLURM_JWT)"
                           : "";
    throw SlurmError(query.name, where, 0,
                     fmt::format("{}: HTTP {}{}{}", where, res.status, slurm.empty() ? "" : ": " + slurm, hint));
  }
  return std::move(res.body);
}

const std::string& RestSlurmClient::api_version() {
  if (!version_.empty()) return version_;
  if (!options_.api_version.empty()) return version_ = options_.api_version;
  SlurmQuery q{"slurmrestd_openapi", {}, options_.timeout};
  std::string body = get(q, "/openapi/v3");
  std::optional<std::tuple<int, int, int>> best;
  std::string best_name;
  try {
    nlohmann::json doc = parse_slurm_json(body, "slurmrestd /openapi/v3");
    if (!doc.contains("paths") || !doc["paths"].is_object()) throw ParseError("slurmrestd /openapi/v3: no \"paths\"");
    static const std::regex path_re(R"(^/slurm/(v\d+\.\d+\.\d+)/)");
    for (const auto& [path, unused] : doc["paths"].items()) {
      std::smatch m;
      if (!std::regex_search(path, m, path_re)) continue;
      std::string v = m[1];
      auto n = api_version_number(v);
      if (n && (!best || *n > *best)) {
        best = n;
        best_name = v;
      }
    }
  } catch (const ParseError& e) {
    throw SlurmError(q.name, "GET /openapi/v3", 0, e.what());
  }
  if (!best) throw SlurmError(q.name, "GET /openapi/v3", 0, "slurmrestd lists no /slurm/vX.Y.Z/ endpoint");
  if (*best < kOldestApiRead)
    throw SlurmError(q.name, "GET /openapi/v3", 0,
                     fmt::format("the newest API slurmrestd offers is {}, older than v0.0.38 (Slurm 22.05), the oldest "
                                 "whose answers are read",
                                 best_name));
  return version_ = best_name;
}

std::string RestSlurmClient::path_of(const SlurmQuery& query) {
  const RestRoute& route = *rest_route(query.name);  // fetch_lines asked serves() first
  std::string path =
      (route.api == RestApi::Slurm ? "/slurm/" : "/slurmdb/") + api_version() + std::string(route.endpoint);
  if (route.render == RestRender::SacctmgrUserAssoc) path += "?user=" + percent_encoded(assoc_user(query));
  return path;
}

std::string RestSlurmClient::answer(const SlurmQuery& query, const std::string& path) {
  const RestRoute& route = *rest_route(query.name);
  std::string body = get(query, path);
  try {
    switch (route.render) {
      case RestRender::AsIs:
        return body;
      case RestRender::SqueueJobs:
        // The host's zone is read once per client, not per answer (it is a file read and a parse).
        if (!host_zone_) host_zone_ = TimeZone::host();
        return render_squeue_jobs(body, unix_time_now(), *host_zone_);
      case RestRender::SinfoNodes:
        return render_sinfo_nodes(body);
      case RestRender::ScontrolPartitions:
        return render_scontrol_partitions(body);
      case RestRender::SacctmgrQos:
        return render_sacctmgr_qos(body);
      case RestRender::SacctmgrUsers:
        return render_sacctmgr_users(body);
      case RestRender::SacctmgrUserAssoc:
        return render_sacctmgr_user_assoc(body, assoc_user(query));
      case RestRender::SacctRunning:
        if (!host_zone_) host_zone_ = TimeZone::host();
        return render_sacct_running(body, sacct_delimiter(query), *host_zone_);
      case RestRender::Sshare:
        return render_sshare(body);
    }
  } catch (const ParseError& e) {
    throw SlurmError(query.name, "GET " + path, 0, fmt::format("GET {}: {}", path, e.what()));
  }
  return body;
}

std::string RestSlurmClient::answerer(const SlurmQuery& query) const {
  const RestRoute* route = rest_route(query.name);
  if (!route) return fallback_.answerer(query);
  std::string rest = "rest " + options_.url + " " + options_.user + " " + options_.api_version;
  // Which of the two answers a version-gated query is the same for every client with this URL, user and version
  // option (the server's version decides), so the key names both without asking the server here.
  if (route->since != ApiVersion{0, 0, 0}) return rest + " or " + fallback_.answerer(query);
  return rest;
}

size_t RestSlurmClient::fetch_lines(const SlurmQuery& query, const LineHandler& on_line) {
  if (!answers_itself(query)) return fallback_.fetch_lines(query, on_line);
  std::string path = path_of(query);
  std::string text = answer(query, path);
  return deliver_lines(query, "GET " + path, text, on_line);
}

}  // namespace gcm::slurm

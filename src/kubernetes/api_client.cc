#include "kubernetes/api_client.h"

#include <fmt/format.h>

#include "core/json_limits.h"

namespace gcm::kube {

namespace {

// The API server's Status message ("pods is forbidden: User ... cannot list ..."), else the start of the body.
std::string status_message(const std::string& body) {
  auto j = parse_json_limited(body);
  if (!j.is_discarded() && j.is_object() && j.contains("message") && j["message"].is_string())
    return j["message"].get<std::string>();
  std::string s = body.substr(0, 200);
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

const char* http_reason_phrase(long status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 422:
      return "Unprocessable Entity";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "";
  }
}

}  // namespace

std::string url_escape(const std::string& text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

std::string rbac_advice(long status, const Access& access, const Connection& connection) {
  if (status == 401)
    return fmt::format(
        "the API server did not accept the credentials of the {} (an expired or revoked token, or a certificate "
        "of another cluster)",
        connection.origin);
  std::string group = access.api_group.empty() ? "core API group" : "API group " + access.api_group;
  std::string where = access.namespace_.empty() ? "cluster-wide" : "in namespace " + access.namespace_;
  std::string kind = access.namespace_.empty() ? "ClusterRole" : "Role (or ClusterRole bound in the namespace)";
  std::string resource = access.resource, sub;
  if (auto slash = resource.find('/'); slash != std::string::npos) {
    sub = resource.substr(slash);
    resource = resource.substr(0, slash);
  }
  return fmt::format(
      "the {} needs RBAC verb \"{}\" on \"{}{}\" ({}) {}: a {} rule {{apiGroups: [\"{}\"], resources: [\"{}{}\"], "
      "verbs: [\"{}\"]}} bound to it (deploy/kubernetes/ has the project's)",
      connection.origin, access.verb, resource, sub, group, where, kind, access.api_group, resource, sub, access.verb);
}

ApiClient::ApiClient(Connection connection, ApiClientOptions options)
    : connection_(std::move(connection)), options_(options), http_(std::make_unique<HttpClient>(connection_.tls)) {
  http_->set_max_body_bytes(options_.max_body_bytes);
}

ApiClient::~ApiClient() = default;

std::string ApiClient::url(const std::string& path, const Query& query) const {
  std::string u = connection_.server + path;
  char sep = '?';
  for (const auto& [k, v] : query) {
    u += sep + url_escape(k) + "=" + url_escape(v);
    sep = '&';
  }
  return u;
}

std::vector<std::string> ApiClient::headers(const std::string& content_type) const {
  std::vector<std::string> h = {"Accept: application/json"};
  if (!content_type.empty()) h.push_back("Content-Type: " + content_type);
  std::string token = current_token(connection_);
  if (!token.empty()) h.push_back("Authorization: Bearer " + token);
  return h;
}

void ApiClient::check(const std::string& method, const std::string& url, long status, const std::string& body,
                      const Access& access) const {
  if (status >= 200 && status < 300) return;
  std::string msg =
      fmt::format("{} {}: HTTP {} {}: {}", method, url, status, http_reason_phrase(status), status_message(body));
  if (status == 401 || status == 403) msg += "; " + rbac_advice(status, access, connection_);
  throw ApiError(status, msg);
}

nlohmann::json ApiClient::get(const std::string& path, const Query& query, const Access& access,
                              const JsonFilter* keep) {
  std::string u = url(path, query);
  HttpResponse res;
  try {
    ++requests_;
    res = http_->get(u, options_.timeout, headers(""));
  } catch (const HttpTransportError& e) {
    throw ApiError(0, fmt::format("{} (the API server at {}, {})", e.what(), connection_.server, connection_.origin));
  }
  check("GET", u, res.status, res.body, access);
  std::string error;
  std::optional<nlohmann::json> j;
  if (keep) {
    j = keep->parse(res.body, &error);
  } else {
    auto parsed = parse_json_limited(res.body);
    if (!parsed.is_discarded())
      j = std::move(parsed);
    else
      error = "not valid JSON";
  }
  if (!j) throw ApiError(res.status, fmt::format("GET {}: the answer is not JSON the client can read: {}", u, error));
  return std::move(*j);
}

size_t ApiClient::list(const std::string& path, const Query& query, const Access& access, const JsonFilter& keep,
                       const std::function<void(const nlohmann::json&)>& on_item,
                       const std::function<void()>& on_restart) {
  JsonFilter page_filter;
  page_filter.keep_under({"items", "*"}, keep);
  page_filter.keep({"metadata", "continue"});
  page_filter.keep({"metadata", "resourceVersion"});
  for (int attempt = 0;; ++attempt) {
    size_t items = 0;
    std::string cont;
    try {
      do {
        Query q = query;
        if (options_.page_size > 0) q.emplace_back("limit", std::to_string(options_.page_size));
        if (!cont.empty()) q.emplace_back("continue", cont);
        nlohmann::json page = get(path, q, access, &page_filter);
        if (!page.is_object())
          throw ApiError(200, fmt::format("GET {}: the answer is not a list object", url(path, q)));
        if (auto it = page.find("items"); it != page.end() && it->is_array())
          for (const auto& item : *it) {
            on_item(item);
            ++items;
          }
        cont.clear();
        if (auto m = page.find("metadata"); m != page.end() && m->is_object())
          if (auto c = m->find("continue"); c != m->end() && c->is_string()) cont = c->get<std::string>();
      } while (!cont.empty());
      return items;
    } catch (const ApiError& e) {
      // 410 Gone: the snapshot the continue token named was compacted away; a consistent list needs a new start.
      if (e.status != 410 || cont.empty() || attempt >= options_.max_list_restarts) throw;
      if (on_restart) on_restart();
    }
  }
}

nlohmann::json ApiClient::patch(const std::string& path, const std::string& body, const std::string& content_type,
                                const Access& access) {
  std::string u = url(path, {});
  HttpResponse res;
  try {
    ++requests_;
    res = http_->request("PATCH", u, body, headers(content_type), options_.timeout);
  } catch (const HttpTransportError& e) {
    throw ApiError(0, fmt::format("{} (the API server at {}, {})", e.what(), connection_.server, connection_.origin));
  }
  check("PATCH", u, res.status, res.body, access);
  auto j = parse_json_limited(res.body);
  return j.is_discarded() ? nlohmann::json() : j;
}

}  // namespace gcm::kube

// A client of the Kubernetes API server on the project's HTTP client (core/http_client.h): bearer token or client
// certificate, the cluster's CA, a timeout on every request, answers bounded in size, lists read page by page
// (`limit` and `continue`) and filtered while they are parsed, so a 5 000-pod listing never holds more than one
// page of text and the fields asked for. Errors name the request; a 401 or 403 also says which credential or which
// RBAC verb on which resource is missing, so an operator can fix the Role without reading the API server's log.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubernetes/json_filter.h"
#include "kubernetes/kube_config.h"

namespace gcm::kube {

// What a request is for, in RBAC terms: the verb and resource a Role must grant, and where.
struct Access {
  std::string verb;        // get, list, patch
  std::string resource;    // pods, nodes, nodes/status, resourceslices
  std::string api_group;   // "" for the core group, e.g. resource.k8s.io
  std::string namespace_;  // "" for cluster-wide
};

// An answer other than 2xx, or no answer. `status` is 0 for a transport failure (refused, timeout, TLS).
struct ApiError : std::runtime_error {
  ApiError(long status, const std::string& message) : std::runtime_error(message), status(status) {}
  long status;
};

struct ApiClientOptions {
  std::chrono::milliseconds timeout{10000};  // per request
  size_t max_body_bytes = 64u << 20;         // one answer (one page of a list)
  int page_size = 500;                       // `limit` of a list; 0 reads it in one answer
  int max_list_restarts = 2;                 // a list whose continue token expired (410) is read again from the start
};

using Query = std::vector<std::pair<std::string, std::string>>;

class ApiClient {
 public:
  ApiClient(Connection connection, ApiClientOptions options = {});
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // GET `path` (e.g. /api/v1/nodes/n1) with the query; the body parsed (only what `keep` keeps, when given).
  nlohmann::json get(const std::string& path, const Query& query, const Access& access,
                     const JsonFilter* keep = nullptr);

  // Every item of a list (`path` names a collection), page by page: `on_item` gets each item of `items` as kept by
  // `keep` (a filter rooted at the item). When the server says the continue token expired (410 Gone) the list is
  // read again from its start, after `on_restart` (the caller drops what it took), at most max_list_restarts times.
  // Returns the number of items.
  size_t list(const std::string& path, const Query& query, const Access& access, const JsonFilter& keep,
              const std::function<void(const nlohmann::json& item)>& on_item,
              const std::function<void()>& on_restart = {});

  // PATCH with the body and its content type (application/strategic-merge-patch+json, application/merge-patch+json).
  nlohmann::json patch(const std::string& path, const std::string& body, const std::string& content_type,
                       const Access& access);

  const Connection& connection() const { return connection_; }
  size_t requests() const { return requests_; }

 private:
  std::string url(const std::string& path, const Query& query) const;
  std::vector<std::string> headers(const std::string& content_type) const;
  // Throws ApiError for a transport failure or a non-2xx answer, with the request and the RBAC advice.
  void check(const std::string& method, const std::string& url, long status, const std::string& body,
             const Access& access) const;

  Connection connection_;
  ApiClientOptions options_;
  std::unique_ptr<HttpClient> http_;
  size_t requests_ = 0;
};

// "%2F"-style escaping of a query value or a path segment (label selectors hold '=', ',', '!').
std::string url_escape(const std::string& text);

// The advice for a 401/403 on `access`, e.g. "the service account needs RBAC verb \"list\" on \"pods\" (core API
// group) cluster-wide: a ClusterRole rule {apiGroups: [\"\"], resources: [\"pods\"], verbs: [\"list\"]}".
std::string rbac_advice(long status, const Access& access, const Connection& connection);

}  // namespace gcm::kube

// A scripted Kubernetes API server for the tests: HTTPS with a throw-away CA (tls_certs.h), a bearer token, pods and
// nodes served page by page as the real server does (`limit`, `continue`, the continue token of the next page in
// metadata.continue), a 410 Gone on a continue token the test expires, a 403 Forbidden Status for the access the
// test forbids, and node patches applied (JSON merge patch on the node; the strategic merge of status.conditions by
// type on nodes/<name>/status). Every request is recorded.
#pragma once

#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/http_listener.h"
#include "core/web_config.h"
#include "kubernetes/kube_config.h"
#include "temp_dir.h"
#include "tls_certs.h"

namespace gcm::testing {

class KubeApiServer {
 public:
  static constexpr const char* kToken = "test-token-1";

  KubeApiServer() {
    pki_ = make_test_pki(dir_.path());
    std::ofstream(dir_.file("web.yml")) << "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";
    HttpListenerOptions o;
    o.workers = 1;
    apply_web_config(o, load_web_config(dir_.file("web.yml")));
    server_ = std::make_unique<HttpListener>(o, [this](const HttpRequest& r) { return handle(r); });
    server_->start();
  }
  ~KubeApiServer() { server_->stop(); }

  // The connection a client would have in a pod (token file, the CA).
  kube::Connection connection() const {
    kube::Connection c;
    c.server = "https://127.0.0.1:" + std::to_string(server_->port());
    c.tls.ca_file = pki_.ca_crt;
    std::ofstream(dir_.file("token")) << kToken << "\n";
    c.token_file = dir_.file("token");
    c.origin = "test service account";
    return c;
  }
  std::string ca_file() const { return pki_.ca_crt; }
  std::string server_url() const { return "https://127.0.0.1:" + std::to_string(server_->port()); }
  const TempDir& dir() const { return dir_; }

  void add_pod(nlohmann::json pod) {
    std::lock_guard lock(mu_);
    pods_.push_back(std::move(pod));
  }
  void add_node(nlohmann::json node) {
    std::lock_guard lock(mu_);
    nodes_.push_back(std::move(node));
  }
  // A ResourceSlice served at /apis/resource.k8s.io/<version>/resourceslices (other versions: 404, as on a server
  // without them).
  void add_resource_slice(const std::string& version, nlohmann::json slice) {
    std::lock_guard lock(mu_);
    slices_[version].push_back(std::move(slice));
  }
  nlohmann::json node(const std::string& name) {
    std::lock_guard lock(mu_);
    for (const auto& n : nodes_)
      if (n["metadata"]["name"] == name) return n;
    return nullptr;
  }
  // "list pods", "patch nodes/status", ...: answered 403 with the API server's Status.
  void forbid(const std::string& verb_resource) {
    std::lock_guard lock(mu_);
    forbidden_.insert(verb_resource);
  }
  // The next request carrying a continue token is answered 410 Gone.
  void expire_next_continue() {
    std::lock_guard lock(mu_);
    expire_continue_ = true;
  }
  std::vector<HttpRequest> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }

  static nlohmann::json pod(const std::string& ns, const std::string& name, const std::string& node,
                            std::vector<std::pair<std::string, int>> containers, const std::string& job_id = "") {
    nlohmann::json p = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata",
         {{"name", name},
          {"namespace", ns},
          {"uid", "uid-" + name},
          {"labels", {{"app", "trainer"}}},
          {"managedFields", nlohmann::json::array({{{"manager", "kubectl"}, {"fieldsV1", {{"f:x", 1}}}}})}}},
        {"spec", {{"nodeName", node}, {"containers", nlohmann::json::array()}}},
        {"status", {{"phase", "Running"}, {"containerStatuses", nlohmann::json::array()}}}};
    if (!job_id.empty()) p["metadata"]["annotations"] = {{"slurm.coreweave.com/job-id", job_id}, {"other", "x"}};
    for (const auto& [c, restarts] : containers) {
      p["spec"]["containers"].push_back({{"name", c}, {"image", "registry.example/" + c + ":1"}});
      p["status"]["containerStatuses"].push_back({{"name", c}, {"restartCount", restarts}, {"ready", true}});
    }
    return p;
  }
  static nlohmann::json node_object(const std::string& name) {
    return {{"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata", {{"name", name}, {"resourceVersion", "1"}, {"labels", {{"kubernetes.io/hostname", name}}}}},
            {"spec", nlohmann::json::object()},
            {"status",
             {{"conditions", nlohmann::json::array({{{"type", "Ready"},
                                                     {"status", "True"},
                                                     {"reason", "KubeletReady"},
                                                     {"message", "kubelet is posting ready status"},
                                                     {"lastTransitionTime", "2026-03-01T10:00:00Z"}},
                                                    {{"type", "MemoryPressure"},
                                                     {"status", "False"},
                                                     {"reason", "KubeletHasSufficientMemory"},
                                                     {"message", "kubelet has sufficient memory available"},
                                                     {"lastTransitionTime", "2026-03-01T10:00:00Z"}}})}}}};
  }

 private:
  static HttpReply status_reply(int code, const std::string& reason, const std::string& message) {
    nlohmann::json s = {{"kind", "Status"},   {"apiVersion", "v1"}, {"status", "Failure"},
                        {"message", message}, {"reason", reason},   {"code", code}};
    return {code, "application/json", s.dump(), ""};
  }
  static std::string query_value(const std::string& query, const std::string& key) {
    size_t pos = 0;
    while (pos <= query.size()) {
      size_t amp = query.find('&', pos);
      std::string item = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
      if (item.rfind(key + "=", 0) == 0) {
        std::string v = item.substr(key.size() + 1), out;
        for (size_t i = 0; i < v.size(); ++i) {
          if (v[i] == '%' && i + 2 < v.size()) {
            out.push_back(static_cast<char>(std::stoi(v.substr(i + 1, 2), nullptr, 16)));
            i += 2;
          } else {
            out.push_back(v[i]);
          }
        }
        return out;
      }
      if (amp == std::string::npos) break;
      pos = amp + 1;
    }
    return "";
  }
  // A page of `items` from the offset the continue token holds.
  HttpReply page(const HttpRequest& r, const std::vector<nlohmann::json>& items, const std::string& kind) {
    std::string cont = query_value(r.query, "continue");
    if (!cont.empty() && expire_continue_) {
      expire_continue_ = false;
      return status_reply(410, "Expired",
                          "The provided continue parameter is too old to display a consistent list result.");
    }
    size_t from = cont.empty() ? 0 : std::stoul(cont.substr(4));
    std::string limit_text = query_value(r.query, "limit");
    size_t limit = limit_text.empty() ? items.size() : std::stoul(limit_text);
    std::string field = query_value(r.query, "fieldSelector");
    nlohmann::json list = {{"kind", kind},
                           {"apiVersion", "v1"},
                           {"metadata", {{"resourceVersion", "100"}}},
                           {"items", nlohmann::json::array()}};
    size_t i = from;
    for (; i < items.size() && list["items"].size() < limit; ++i) {
      if (field.rfind("spec.nodeName=", 0) == 0 && items[i]["spec"].value("nodeName", "") != field.substr(14)) continue;
      list["items"].push_back(items[i]);
    }
    if (i < items.size()) list["metadata"]["continue"] = "off-" + std::to_string(i);
    return {200, "application/json", list.dump(), ""};
  }
  HttpReply handle(const HttpRequest& r) {
    std::lock_guard lock(mu_);
    requests_.push_back(r);
    if (r.header("authorization") != std::string("Bearer ") + kToken)
      return status_reply(401, "Unauthorized", "Unauthorized");
    std::string path = r.path;
    auto forbidden = [&](const std::string& vr, const std::string& what) -> std::optional<HttpReply> {
      if (!forbidden_.count(vr)) return std::nullopt;
      return status_reply(403, "Forbidden",
                          what + " is forbidden: User \"system:serviceaccount:gcm:gcm\" cannot " +
                              vr.substr(0, vr.find(' ')) + " resource \"" + vr.substr(vr.find(' ') + 1) + "\"");
    };
    if (r.method == "GET" && (path == "/api/v1/pods" || (path.rfind("/api/v1/namespaces/", 0) == 0 && path.size() > 5 &&
                                                         path.substr(path.size() - 5) == "/pods"))) {
      if (auto f = forbidden("list pods", "pods")) return *f;
      std::vector<nlohmann::json> sel;
      std::string ns = path == "/api/v1/pods" ? "" : path.substr(19, path.size() - 19 - 5);
      std::string label = query_value(r.query, "labelSelector");
      for (const auto& p : pods_) {
        if (!ns.empty() && p["metadata"]["namespace"] != ns) continue;
        if (!label.empty()) {
          auto eq = label.find('=');
          auto& labels = p["metadata"]["labels"];
          if (!labels.contains(label.substr(0, eq)) || labels[label.substr(0, eq)] != label.substr(eq + 1)) continue;
        }
        sel.push_back(p);
      }
      return page(r, sel, "PodList");
    }
    if (r.method == "GET" && path.rfind("/apis/resource.k8s.io/", 0) == 0 && path.size() > 15 &&
        path.substr(path.size() - 15) == "/resourceslices") {
      std::string version = path.substr(22, path.size() - 22 - 15);
      // The API server authorizes before it routes: a forbidden list is 403 even for a version it does not serve.
      if (auto f = forbidden("list resourceslices", "resourceslices.resource.k8s.io")) return *f;
      if (!slices_.count(version))
        return status_reply(404, "NotFound", "the server could not find the requested resource");
      return page(r, slices_[version], "ResourceSliceList");
    }
    if (r.method == "GET" && path == "/api/v1/nodes") {
      if (auto f = forbidden("list nodes", "nodes")) return *f;
      return page(r, nodes_, "NodeList");
    }
    if (path.rfind("/api/v1/nodes/", 0) == 0) {
      std::string rest = path.substr(14);
      bool status = rest.size() > 7 && rest.substr(rest.size() - 7) == "/status";
      std::string name = status ? rest.substr(0, rest.size() - 7) : rest;
      nlohmann::json* n = nullptr;
      for (auto& x : nodes_)
        if (x["metadata"]["name"] == name) n = &x;
      if (!n) return status_reply(404, "NotFound", "nodes \"" + name + "\" not found");
      if (r.method == "GET") {
        if (auto f = forbidden("get nodes", "nodes")) return *f;
        return {200, "application/json", n->dump(), ""};
      }
      if (r.method != "PATCH") return status_reply(405, "MethodNotAllowed", "method not allowed");
      if (auto f = forbidden(status ? "patch nodes/status" : "patch nodes", "nodes")) return *f;
      auto patch = nlohmann::json::parse(r.body, nullptr, false);
      if (patch.is_discarded()) return status_reply(400, "BadRequest", "the patch is not JSON");
      std::string type = r.header("content-type");
      if (status) {
        if (type != "application/strategic-merge-patch+json")
          return status_reply(415, "UnsupportedMediaType", "want a strategic merge patch");
        for (const auto& c : patch["status"]["conditions"]) {
          bool merged = false;
          for (auto& have : (*n)["status"]["conditions"])
            if (have["type"] == c["type"]) {
              have.merge_patch(c);
              merged = true;
            }
          if (!merged) (*n)["status"]["conditions"].push_back(c);
        }
      } else {
        if (type != "application/merge-patch+json")
          return status_reply(415, "UnsupportedMediaType", "want a merge patch");
        std::string rv = patch.contains("metadata") ? patch["metadata"].value("resourceVersion", "") : "";
        if (!rv.empty() && rv != (*n)["metadata"]["resourceVersion"])
          return status_reply(409, "Conflict", "the object has been modified");
        if (patch.contains("metadata")) patch["metadata"].erase("resourceVersion");
        n->merge_patch(patch);
      }
      (*n)["metadata"]["resourceVersion"] =
          std::to_string(std::stoi((*n)["metadata"]["resourceVersion"].get<std::string>()) + 1);
      return {200, "application/json", n->dump(), ""};
    }
    return status_reply(404, "NotFound", "the server could not find the requested resource");
  }

  TempDir dir_;
  TestPki pki_;
  std::mutex mu_;
  std::vector<nlohmann::json> pods_, nodes_;
  std::map<std::string, std::vector<nlohmann::json>> slices_;
  std::set<std::string> forbidden_;
  bool expire_continue_ = false;
  std::vector<HttpRequest> requests_;
  std::unique_ptr<HttpListener> server_;
};

}  // namespace gcm::testing

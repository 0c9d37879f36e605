#include "kubernetes/objects.h"

#include <ctime>

#include <fmt/format.h>

namespace gcm::kube {

namespace {

std::string kube_string_at(const nlohmann::json& o, const char* key) {
  if (!o.is_object()) return "";
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

void string_map_into(const nlohmann::json& o, std::map<std::string, std::string>& out) {
  if (!o.is_object()) return;
  for (auto it = o.begin(); it != o.end(); ++it)
    if (it->is_string()) out[it.key()] = it->get<std::string>();
}

void keep_map_keys(JsonFilter& f, const std::vector<std::string>& prefix, const std::vector<std::string>& keys) {
  for (const auto& k : keys) {
    std::vector<std::string> path = prefix;
    path.push_back(k);
    f.keep(path);
  }
}

JsonFilter pod_filter(const PodQuery& q) {
  JsonFilter f;
  f.keep({"metadata", "name"});
  f.keep({"metadata", "namespace"});
  keep_map_keys(f, {"metadata", "labels"}, q.label_keys);
  keep_map_keys(f, {"metadata", "annotations"}, q.annotation_keys);
  f.keep({"spec", "nodeName"});
  f.keep({"status", "phase"});
  f.keep({"status", "containerStatuses", "*", "name"});
  f.keep({"status", "containerStatuses", "*", "restartCount"});
  return f;
}

std::string pods_path(const std::string& ns) {
  return ns.empty() ? "/api/v1/pods" : "/api/v1/namespaces/" + url_escape(ns) + "/pods";
}

}  // namespace

std::optional<std::string> Pod::annotation(const std::string& key) const {
  auto it = annotations.find(key);
  return it == annotations.end() ? std::nullopt : std::optional(it->second);
}

std::optional<std::string> Pod::label(const std::string& key) const {
  auto it = labels.find(key);
  return it == labels.end() ? std::nullopt : std::optional(it->second);
}

Pod pod_from_json(const nlohmann::json& item) {
  Pod p;
  const nlohmann::json empty = nlohmann::json::object();
  const auto& meta = item.is_object() && item.contains("metadata") ? item["metadata"] : empty;
  p.name = kube_string_at(meta, "name");
  p.namespace_ = kube_string_at(meta, "namespace");
  if (meta.is_object() && meta.contains("labels")) string_map_into(meta["labels"], p.labels);
  if (meta.is_object() && meta.contains("annotations")) string_map_into(meta["annotations"], p.annotations);
  if (item.is_object() && item.contains("spec")) p.node_name = kube_string_at(item["spec"], "nodeName");
  if (item.is_object() && item.contains("status")) {
    const auto& st = item["status"];
    p.phase = kube_string_at(st, "phase");
    if (st.is_object() && st.contains("containerStatuses") && st["containerStatuses"].is_array())
      for (const auto& c : st["containerStatuses"]) {
        ContainerState cs;
        cs.name = kube_string_at(c, "name");
        if (c.is_object() && c.contains("restartCount") && c["restartCount"].is_number_integer())
          cs.restart_count = c["restartCount"].get<int64_t>();
        p.containers.push_back(std::move(cs));
      }
  }
  return p;
}

size_t for_each_pod(ApiClient& api, const PodQuery& q, const std::function<void(const Pod&)>& on_pod,
                    const std::function<void()>& on_restart) {
  Query query;
  if (!q.label_selector.empty()) query.emplace_back("labelSelector", q.label_selector);
  if (!q.field_selector.empty()) query.emplace_back("fieldSelector", q.field_selector);
  return api.list(
      pods_path(q.namespace_), query, {"list", "pods", "", q.namespace_}, pod_filter(q),
      [&](const nlohmann::json& item) { on_pod(pod_from_json(item)); }, on_restart);
}

std::vector<Pod> list_pods(ApiClient& api, const PodQuery& q) {
  std::vector<Pod> out;
  for_each_pod(
      api, q, [&](const Pod& p) { out.push_back(p); }, [&] { out.clear(); });
  return out;
}

JsonFilter node_filter(const std::vector<std::string>& annotation_keys) {
  JsonFilter f;
  f.keep({"metadata", "name"});
  f.keep({"metadata", "resourceVersion"});
  keep_map_keys(f, {"metadata", "annotations"}, annotation_keys);
  f.keep({"spec", "unschedulable"});
  f.keep({"spec", "taints"});
  for (const char* k : {"type", "status", "reason", "message", "lastTransitionTime"})
    f.keep({"status", "conditions", "*", k});
  return f;
}

Node node_from_json(const nlohmann::json& item) {
  Node n;
  if (!item.is_object()) return n;
  if (item.contains("metadata")) {
    const auto& meta = item["metadata"];
    n.name = kube_string_at(meta, "name");
    n.resource_version = kube_string_at(meta, "resourceVersion");
    if (meta.is_object() && meta.contains("annotations")) string_map_into(meta["annotations"], n.annotations);
  }
  if (item.contains("spec") && item["spec"].is_object()) {
    const auto& spec = item["spec"];
    n.unschedulable =
        spec.contains("unschedulable") && spec["unschedulable"].is_boolean() && spec["unschedulable"].get<bool>();
    if (spec.contains("taints") && spec["taints"].is_array()) n.taints = spec["taints"];
  }
  if (item.contains("status") && item["status"].is_object() && item["status"].contains("conditions") &&
      item["status"]["conditions"].is_array())
    for (const auto& c : item["status"]["conditions"]) {
      NodeCondition nc;
      nc.node = n.name;
      nc.type = kube_string_at(c, "type");
      nc.status = kube_string_at(c, "status");
      nc.reason = kube_string_at(c, "reason");
      nc.message = kube_string_at(c, "message");
      nc.last_transition_time = kube_string_at(c, "lastTransitionTime");
      n.conditions.push_back(std::move(nc));
    }
  return n;
}

std::vector<Node> list_nodes(ApiClient& api, const std::string& label_selector,
                             const std::vector<std::string>& annotation_keys) {
  std::vector<Node> out;
  Query query;
  if (!label_selector.empty()) query.emplace_back("labelSelector", label_selector);
  api.list(
      "/api/v1/nodes", query, {"list", "nodes", "", ""}, node_filter(annotation_keys),
      [&](const nlohmann::json& item) { out.push_back(node_from_json(item)); }, [&] { out.clear(); });
  return out;
}

Node get_node(ApiClient& api, const std::string& name, const std::vector<std::string>& annotation_keys) {
  JsonFilter f = node_filter(annotation_keys);
  return node_from_json(api.get("/api/v1/nodes/" + url_escape(name), {}, {"get", "nodes", "", ""}, &f));
}

std::optional<int64_t> parse_rfc3339(const std::string& t) {
  int y, mo, d, h, mi, s;
  if (t.size() < 20 || std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &s) != 6)
    return std::nullopt;
  size_t i = 19;
  if (i < t.size() && t[i] == '.')
    for (++i; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
    }
  int64_t offset = 0;
  if (i < t.size() && (t[i] == 'Z' || t[i] == 'z')) {
    ++i;
  } else if (i + 6 == t.size() && (t[i] == '+' || t[i] == '-')) {
    int oh, om;
    if (std::sscanf(t.c_str() + i + 1, "%2d:%2d", &oh, &om) != 2) return std::nullopt;
    offset = (oh * 3600 + om * 60) * (t[i] == '+' ? 1 : -1);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != t.size()) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<int64_t>(timegm(&tm)) - offset;
}

std::string format_rfc3339(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace gcm::kube

#include "health/kubernetes_metadata.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "kubernetes/objects.h"

namespace gcm::health {

namespace {

bool env_true(const std::function<const char*(const char*)>& getenv, const char* name) {
  const char* v = getenv(name);
  if (!v) return false;
  std::string s(v);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s == "true";
}

std::string env_text(const std::function<const char*(const char*)>& getenv, const char* name) {
  const char* v = getenv(name);
  return v ? v : "";
}

std::string required(const std::function<const char*(const char*)>& getenv, const char* name, const char* by) {
  std::string v = env_text(getenv, name);
  if (v.empty()) throw std::invalid_argument(std::string(name) + " is required with " + by + "=true");
  return v;
}

std::vector<std::string> csv(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(begin, end - begin);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
    begin = end + 1;
  }
  return out;
}

bool is_active(const kube::Pod& p) { return p.phase == "Pending" || p.phase == "Running" || p.phase == "Unknown"; }

std::string label_or_empty(const kube::Pod& p, const std::string& key) {
  if (key.empty()) return "";
  return p.label(key).value_or("");
}

}  // namespace

KubernetesMetadataSettings kubernetes_metadata_settings(const std::function<const char*(const char*)>& getenv,
                                                        const std::string& host_name) {
  KubernetesMetadataSettings s;
  s.jobs = env_true(getenv, "GCM_KUBERNETES_JOB_METADATA_ENABLED");
  if (s.jobs) {
    const char* by = "GCM_KUBERNETES_JOB_METADATA_ENABLED";
    s.job_namespace = required(getenv, "GCM_KUBERNETES_JOB_NAMESPACE", by);
    s.job_id_label = required(getenv, "GCM_KUBERNETES_JOB_ID_LABEL", by);
    s.job_label_selector = env_text(getenv, "GCM_KUBERNETES_JOB_LABEL_SELECTOR");
    s.user_label = env_text(getenv, "GCM_KUBERNETES_USER_LABEL");
    s.org_id_label = env_text(getenv, "GCM_KUBERNETES_ORG_ID_LABEL");
    s.project_id_label = env_text(getenv, "GCM_KUBERNETES_PROJECT_ID_LABEL");
  }
  s.pods = env_true(getenv, "GCM_KUBERNETES_METADATA_ENABLED");
  if (s.pods) {
    s.metadata_keys = csv(required(getenv, "GCM_KUBERNETES_METADATA_KEYS", "GCM_KUBERNETES_METADATA_ENABLED"));
    if (s.metadata_keys.empty())
      throw std::invalid_argument("GCM_KUBERNETES_METADATA_KEYS names no key (expected a comma-separated list)");
  }
  s.node_name = env_text(getenv, "NODE_NAME");
  if (s.node_name.empty()) s.node_name = host_name;
  return s;
}

KubernetesJobMetadata job_metadata_of(const std::vector<kube::Pod>& pods, const KubernetesMetadataSettings& s) {
  std::map<std::string, const kube::Pod*> by_job;  // sorted by job id; each job's pod with the smallest name
  for (const auto& p : pods) {
    if (!is_active(p)) continue;
    auto id = p.label(s.job_id_label);
    if (!id || id->empty()) continue;
    auto [it, fresh] = by_job.emplace(*id, &p);
    if (!fresh && p.name < it->second->name) it->second = &p;
  }
  KubernetesJobMetadata m;
  for (const auto& [id, p] : by_job) {
    m.job_ids.push_back(id);
    m.users.push_back(label_or_empty(*p, s.user_label));
    m.org_ids.push_back(label_or_empty(*p, s.org_id_label));
    m.project_ids.push_back(label_or_empty(*p, s.project_id_label));
    m.pod_names.push_back(p->name);
  }
  return m;
}

std::vector<std::string> pod_metadata_of(const std::vector<kube::Pod>& pods, const std::vector<std::string>& keys) {
  std::vector<const kube::Pod*> selected;
  for (const auto& p : pods) {
    if (!is_active(p)) continue;
    bool has_key = std::any_of(keys.begin(), keys.end(),
                               [&](const std::string& k) { return p.labels.count(k) || p.annotations.count(k); });
    if (has_key) selected.push_back(&p);
  }
  std::sort(selected.begin(), selected.end(), [](const kube::Pod* a, const kube::Pod* b) {
    return std::tie(a->namespace_, a->name) < std::tie(b->namespace_, b->name);
  });
  std::vector<std::string> out;
  for (const kube::Pod* p : selected) {
    // nlohmann's object is a sorted map: the members come out in key order, as the branch's sort_keys dump.
    nlohmann::json o = {{"annotations", nlohmann::json::object()},
                        {"labels", nlohmann::json::object()},
                        {"name", p->name},
                        {"namespace", p->namespace_}};
    for (const auto& k : keys) {
      if (auto it = p->labels.find(k); it != p->labels.end()) o["labels"][k] = it->second;
      if (auto it = p->annotations.find(k); it != p->annotations.end()) o["annotations"][k] = it->second;
    }
    out.push_back(o.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return out;
}

KubernetesMetadata fetch_kubernetes_metadata(const KubernetesMetadataSettings& s, kube::ApiClient& api,
                                             std::vector<std::string>& errors) {
  KubernetesMetadata m;
  const std::string on_node = "spec.nodeName=" + s.node_name;
  if (s.jobs) {
    kube::PodQuery q;
    q.namespace_ = s.job_namespace;
    q.label_selector = s.job_label_selector;
    q.field_selector = on_node;
    q.annotation_keys = {};
    for (const std::string* k : {&s.job_id_label, &s.user_label, &s.org_id_label, &s.project_id_label})
      if (!k->empty()) q.label_keys.push_back(*k);
    try {
      m.jobs = job_metadata_of(kube::list_pods(api, q), s);
    } catch (const std::exception& e) {
      errors.push_back(std::string("Kubernetes job metadata: ") + e.what());
    }
  }
  if (s.pods) {
    kube::PodQuery q;
    q.field_selector = on_node;
    q.label_keys = s.metadata_keys;
    q.annotation_keys = s.metadata_keys;
    try {
      m.pod_metadata = pod_metadata_of(kube::list_pods(api, q), s.metadata_keys);
    } catch (const std::exception& e) {
      errors.push_back(std::string("Kubernetes pod metadata: ") + e.what());
    }
  }
  return m;
}

}  // namespace gcm::health

#include "attribution/kubelet_pods.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "cli/option_binder.h"
#include "cli/option_limits.h"
#include "kubernetes/objects.h"
#include "otlp/grpc_loader.h"
#include "otlp/proto/lazy_registration.h"
#include "pod_resources.pb.h"

namespace gcm {

namespace {

namespace pr = gcm::kubelet::podresources;

constexpr size_t kMaxPodResourcesAnswer = 4u << 20;  // gRPC's default receive limit: larger answers fail anyway
constexpr const char* kDraNvidiaDriver = "gpu.nvidia.com";

// "GPU-<uuid>::3" (a time-sliced replica) -> "GPU-<uuid>".
std::string_view device_without_replica(std::string_view id) {
  size_t sep = id.find("::");
  return sep == std::string_view::npos ? id : id.substr(0, sep);
}

std::optional<unsigned> all_digits_index(std::string_view s) {
  if (s.empty() || s.size() > 4) return std::nullopt;
  unsigned v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  return v;
}

// ResourceSlices change when a driver starts or a GPU comes or goes: read at most once a minute, and only when a
// claim names a device the last read did not have. One cache per API server and node.
struct SliceCache {
  std::map<std::string, std::string> uuids;
  std::chrono::steady_clock::time_point read_at{};
  bool read = false;
};

std::mutex slice_cache_mu;

SliceCache& slice_cache(const std::string& key) {
  static std::map<std::string, SliceCache> caches;
  return caches[key];
}

std::vector<nlohmann::json> list_resource_slices(kube::ApiClient& api, const std::string& node) {
  kube::JsonFilter keep;
  keep.keep({"spec", "driver"});
  keep.keep({"spec", "pool", "name"});
  keep.keep({"spec", "devices", "*", "name"});
  keep.keep({"spec", "devices", "*", "attributes"});
  keep.keep({"spec", "devices", "*", "basic", "attributes"});
  std::vector<nlohmann::json> out;
  kube::Query q = {{"fieldSelector", "spec.nodeName=" + node}};
  // resource.k8s.io/v1 from Kubernetes 1.34, v1beta1 before it.
  for (const char* version : {"v1", "v1beta1"}) {
    try {
      out.clear();
      api.list(
          std::string("/apis/resource.k8s.io/") + version + "/resourceslices", q,
          {"list", "resourceslices", "resource.k8s.io", ""}, keep, [&](const nlohmann::json& s) { out.push_back(s); },
          [&] { out.clear(); });
      return out;
    } catch (const kube::ApiError& e) {
      if (e.status != 404) throw;
    }
  }
  return out;
}

std::string node_name_of(const KubeletAttributionOptions& o) {
  if (!o.node_name.empty()) return o.node_name;
  if (const char* n = std::getenv("NODE_NAME"); n && *n) return n;
  return "";
}

}  // namespace

void add_kubelet_attribution_options(OptionBinder& b, KubeletAttributionOptions& o) {
  b.option("--kubelet-socket", "kubelet_socket", o.socket,
           "The kubelet's pod-resources socket, for --attribution kubelet (mount /var/lib/kubelet/pod-resources "
           "into the container).")
      ->capture_default_str();
  b.option("--kubelet-timeout", "kubelet_timeout", o.timeout_s, "Seconds the kubelet's List may take.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(timeout_seconds());
  b.option("--kubernetes-node", "kubernetes_node", o.node_name,
           "This node's Kubernetes name (default: $NODE_NAME, from the downward API): DRA ResourceSlices are read "
           "for it.");
  b.flag("!--no-dra-resource-slices", "dra_resource_slices", o.dra_api,
         "Do not read DRA ResourceSlices from the API server; a DRA device named gpu-<n> by NVIDIA's driver is then "
         "taken as GPU <n>.");
}

std::vector<PodDevice> decode_pod_resources_list(const std::string& bytes) {
  pr::ListPodResourcesResponse res;
  if (!res.ParseFromString(bytes))
    throw std::runtime_error("the kubelet's List answer is not a ListPodResourcesResponse");
  std::vector<PodDevice> out;
  for (const auto& pod : res.pod_resources())
    for (const auto& c : pod.containers()) {
      PodAssignment who{pod.name(), pod.namespace_(), c.name()};
      for (const auto& d : c.devices())
        for (const auto& id : d.device_ids()) out.push_back({who, d.resource_name(), id, "", "", ""});
      for (const auto& dr : c.dynamic_resources())
        for (const auto& cr : dr.claim_resources())
          out.push_back({who, "", "", cr.driver_name(), cr.pool_name(), cr.device_name()});
    }
  return out;
}

std::string call_pod_resources_list(const std::string& socket, std::chrono::milliseconds timeout) {
  auto call = otlp::load_grpc_transport();
  otlp::register_proto_descriptors();  // before any message is used: sinks may use protobuf on other threads
  std::string request;
  pr::ListPodResourcesRequest().SerializeToString(&request);
  std::string answer(kMaxPodResourcesAnswer + 1, '\0');
  size_t len = 0;
  char message[512] = {};
  std::string target = "unix:" + socket;
  int code =
      call(target.c_str(), 0, "/v1.PodResourcesLister/List", request.data(), request.size(),
           static_cast<long>(timeout.count()), nullptr, 0, answer.data(), answer.size(), &len, message, sizeof message);
  if (code != 0)
    throw std::runtime_error(
        fmt::format("the kubelet's pod-resources List on {} failed: gRPC status {}: {}", socket, code, message));
  if (len > kMaxPodResourcesAnswer)
    throw std::runtime_error(fmt::format("the kubelet's pod-resources List on {} answered {} bytes (limit {})", socket,
                                         len, kMaxPodResourcesAnswer));
  answer.resize(len);
  return answer;
}

std::map<std::string, std::string> resource_slice_uuids(const std::vector<nlohmann::json>& slices) {
  std::map<std::string, std::string> out;
  for (const auto& s : slices) {
    if (!s.contains("spec")) continue;
    const auto& spec = s["spec"];
    std::string driver = spec.value("driver", "");
    std::string pool = spec.contains("pool") ? spec["pool"].value("name", "") : "";
    if (!spec.contains("devices") || !spec["devices"].is_array()) continue;
    for (const auto& d : spec["devices"]) {
      const nlohmann::json* attrs = nullptr;
      if (d.contains("attributes"))
        attrs = &d["attributes"];
      else if (d.contains("basic") && d["basic"].contains("attributes"))
        attrs = &d["basic"]["attributes"];
      if (!attrs || !attrs->is_object()) continue;
      for (auto it = attrs->begin(); it != attrs->end(); ++it) {
        // "uuid", or qualified with the driver's domain ("gpu.nvidia.com/uuid").
        const std::string& k = it.key();
        if (k != "uuid" && !(k.size() > 5 && k.compare(k.size() - 5, 5, "/uuid") == 0)) continue;
        if (it->is_object() && it->contains("string") && (*it)["string"].is_string())
          out[driver + "/" + pool + "/" + d.value("name", "")] = (*it)["string"].get<std::string>();
      }
    }
  }
  return out;
}

std::map<unsigned, std::vector<PodAssignment>> assign_pod_devices(
    const std::vector<DeviceResult>& devices, const std::vector<PodDevice>& entries,
    const std::function<std::string(const PodDevice&)>& dra_uuid) {
  std::map<std::string, unsigned, std::less<>> by_uuid;
  std::map<unsigned, bool> have;
  for (const auto& d : devices) {
    have[d.index] = true;
    if (d.sample.uuid) by_uuid[*d.sample.uuid] = d.index;
  }
  std::map<unsigned, std::vector<PodAssignment>> out;
  auto give = [&](unsigned gpu, const PodAssignment& who) {
    if (!have.count(gpu)) return;
    auto& list = out[gpu];
    if (list.size() >= kMaxPodsPerGpu || std::find(list.begin(), list.end(), who) != list.end()) return;
    list.push_back(who);
  };
  for (const auto& e : entries) {
    if (!e.device_id.empty()) {
      std::string_view id = device_without_replica(e.device_id);
      if (auto it = by_uuid.find(id); it != by_uuid.end())
        give(it->second, e.who);
      else if (auto idx = all_digits_index(id))
        give(*idx, e.who);
      continue;  // MIG-<uuid> and other devices name no whole GPU of this list
    }
    std::string uuid = dra_uuid ? dra_uuid(e) : "";
    if (auto it = by_uuid.find(uuid); !uuid.empty() && it != by_uuid.end()) {
      give(it->second, e.who);
    } else if (uuid.empty() && e.driver == kDraNvidiaDriver && e.device.rfind("gpu-", 0) == 0) {
      if (auto idx = all_digits_index(std::string_view(e.device).substr(4))) give(*idx, e.who);
    }
  }
  return out;
}

std::map<unsigned, std::vector<PodAssignment>> attribute_kubelet(const std::vector<DeviceResult>& devices,
                                                                 const KubeletAttributionOptions& opts,
                                                                 std::vector<std::string>* errors) {
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(opts.timeout_s * 1000));
  std::vector<PodDevice> entries = decode_pod_resources_list(call_pod_resources_list(opts.socket, timeout));
  bool has_dra = std::any_of(entries.begin(), entries.end(), [](const PodDevice& e) { return e.device_id.empty(); });
  std::map<std::string, std::string> uuids;
  std::string node = node_name_of(opts);
  if (has_dra && opts.dra_api && node.empty() && errors)
    errors->push_back(
        "kubelet: DRA claims seen but this node's name is unknown (--kubernetes-node or $NODE_NAME): their "
        "devices are read by name only");
  if (has_dra && opts.dra_api && !node.empty()) {
    // A failed lookup (no API access, RBAC) degrades to the device names; the device-plugin GPUs are unaffected.
    try {
      auto api = kube::make_api_client(opts.api);
      std::lock_guard lock(slice_cache_mu);
      SliceCache& cache = slice_cache(api->connection().server + " " + node);
      bool missing = !cache.read;
      for (const auto& e : entries)
        if (e.device_id.empty() && !cache.uuids.count(e.driver + "/" + e.pool + "/" + e.device)) missing = true;
      auto now = std::chrono::steady_clock::now();
      if (missing && (!cache.read || now - cache.read_at > std::chrono::minutes(1))) {
        cache.read_at = now;
        cache.read = true;
        cache.uuids = resource_slice_uuids(list_resource_slices(*api, node));
      }
      uuids = cache.uuids;
    } catch (const std::exception& e) {
      if (errors) errors->push_back(std::string("kubelet: DRA ResourceSlices: ") + e.what());
    }
  }
  return assign_pod_devices(devices, entries, [&](const PodDevice& e) {
    auto it = uuids.find(e.driver + "/" + e.pool + "/" + e.device);
    return it == uuids.end() ? std::string() : it->second;
  });
}

}  // namespace gcm

// GPU -> pod attribution on a Kubernetes node, from the kubelet's pod-resources API (gRPC on
// /var/lib/kubelet/pod-resources/kubelet.sock, v1.PodResourcesLister): the containers each GPU was given to, by a
// device plugin (ContainerDevices.device_ids: the GPU's UUID, "<uuid>::<n>" for a time-sliced replica, or its index
// with the plug-in's index strategy) or by DRA (a claim's driver/pool/device, looked up in the driver's
// ResourceSlices for the device's "uuid" attribute).
//
// The call goes through the project's gRPC module (otlp/grpc_loader.h: a unary call of serialized bytes to any
// target, "unix:/path" included), so the main binary links no gRPC, and the messages are the project's own
// (kubernetes/proto/pod_resources.proto).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cli/cli_fwd.h"
#include "gpu/gpu_sampler.h"
#include "kubernetes/access_options.h"

namespace gcm {

inline constexpr const char* kKubeletPodResourcesSocket = "/var/lib/kubelet/pod-resources/kubelet.sock";
// Containers attributed to one GPU at most: a time-sliced GPU can be handed to many, and every one is a join series.
inline constexpr size_t kMaxPodsPerGpu = 8;

struct KubeletAttributionOptions {
  std::string socket = kKubeletPodResourcesSocket;
  double timeout_s = 5;
  // DRA: ResourceSlices of this node are read through the API server (RBAC: list resourceslices); "" for
  // $NODE_NAME. Without API access the NVIDIA driver's device names ("gpu-<index>") are read as indices.
  std::string node_name;
  bool dra_api = true;
  kube::AccessOptions api;
};

// --kubelet-socket, --kubelet-timeout, --kubernetes-node, --no-dra-resource-slices (the API options are the
// command's own: add_access_options).
void add_kubelet_attribution_options(OptionBinder& b, KubeletAttributionOptions& o);

struct PodAssignment {
  std::string pod, namespace_, container;
  bool operator==(const PodAssignment&) const = default;
};

// The decoded List answer, for tests and the resolver: one entry per (pod, container, device id or DRA device).
struct PodDevice {
  PodAssignment who;
  std::string resource_name;         // device plugin: nvidia.com/gpu; DRA: ""
  std::string device_id;             // device plugin
  std::string driver, pool, device;  // DRA
};
std::vector<PodDevice> decode_pod_resources_list(const std::string& bytes);

// The call itself: /v1.PodResourcesLister/List on `socket`. Throws std::runtime_error naming the socket and the
// gRPC status (UNAVAILABLE: no kubelet listening).
std::string call_pod_resources_list(const std::string& socket, std::chrono::milliseconds timeout);

// GPU index -> its containers, at most kMaxPodsPerGpu each, in the kubelet's order. Throws on a failed call; a failed
// DRA lookup is reported in `errors` and its devices are read by name only.
std::map<unsigned, std::vector<PodAssignment>> attribute_kubelet(const std::vector<DeviceResult>& devices,
                                                                 const KubeletAttributionOptions& opts,
                                                                 std::vector<std::string>* errors = nullptr);
// The same from decoded entries and a DRA lookup ((driver, pool, device) -> GPU UUID, "" when unknown).
std::map<unsigned, std::vector<PodAssignment>> assign_pod_devices(
    const std::vector<DeviceResult>& devices, const std::vector<PodDevice>& entries,
    const std::function<std::string(const PodDevice&)>& dra_uuid);

// The "uuid" attribute of each device of ResourceSlice objects (resource.k8s.io v1: spec.devices[].attributes;
// v1beta1: spec.devices[].basic.attributes), keyed "driver/pool/device".
std::map<std::string, std::string> resource_slice_uuids(const std::vector<nlohmann::json>& slices);

}  // namespace gcm

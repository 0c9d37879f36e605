// A test kubelet: the pod-resources service (v1.PodResourcesLister: List, Get, GetAllocatableResources) on a real
// unix socket, served by the project's gRPC module (otlp/grpc/grpc_server.h) and answering with messages built
// from the kubelet's proto (kubernetes/proto/pod_resources.proto). Every call's method is recorded.
#pragma once

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "otlp/grpc_loader.h"
#include "pod_resources.pb.h"
#include "temp_dir.h"

namespace gcm::testing {

namespace podresources = gcm::kubelet::podresources;

class FakeKubelet {
 public:
  FakeKubelet() : api_(otlp::load_grpc_server()) {
    socket_ = dir_.file("kubelet.sock");
    std::string address = "unix:" + socket_;
    gcm_otlp_grpc_server_options o{};
    o.address = address.c_str();
    o.max_message_bytes = 1 << 20;
    o.max_queued_bytes = 1 << 20;
    o.threads = 1;
    o.handler = &FakeKubelet::on_call;
    o.user = this;
    char why[256] = {};
    int port = 0;
    server_ = api_.start(&o, &port, why, sizeof why);
    if (!server_) throw std::runtime_error(std::string("fake kubelet: ") + why);
  }
  ~FakeKubelet() { api_.stop(server_, 1000); }
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;

  const std::string& socket() const { return socket_; }

  // The pods List answers with (and Get looks up).
  void set_pods(podresources::ListPodResourcesResponse pods) {
    std::lock_guard lock(mu_);
    pods_ = std::move(pods);
  }
  // List answers this gRPC status instead (e.g. 14 UNAVAILABLE, 8 RESOURCE_EXHAUSTED).
  void fail_with(int code) {
    std::lock_guard lock(mu_);
    fail_code_ = code;
  }
  std::vector<std::string> methods() {
    std::lock_guard lock(mu_);
    return methods_;
  }

  // One container of a pod with device-plugin devices of `resource` and DRA claim devices (driver, pool, device).
  struct Dra {
    std::string driver, pool, device;
  };
  static void add_container(podresources::ListPodResourcesResponse& list, const std::string& ns, const std::string& pod,
                            const std::string& container, const std::string& resource,
                            const std::vector<std::string>& device_ids, const std::vector<Dra>& dra = {}) {
    podresources::PodResources* p = nullptr;
    for (auto& have : *list.mutable_pod_resources())
      if (have.name() == pod && have.namespace_() == ns) p = &have;
    if (!p) {
      p = list.add_pod_resources();
      p->set_name(pod);
      p->set_namespace_(ns);
    }
    auto* c = p->add_containers();
    c->set_name(container);
    c->add_cpu_ids(2);
    if (!device_ids.empty()) {
      auto* d = c->add_devices();
      d->set_resource_name(resource);
      for (const auto& id : device_ids) d->add_device_ids(id);
    }
    if (!dra.empty()) {
      auto* r = c->add_dynamic_resources();
      r->set_claim_name(pod + "-gpu");
      r->set_claim_namespace(ns);
      for (const auto& x : dra) {
        auto* cr = r->add_claim_resources();
        cr->set_driver_name(x.driver);
        cr->set_pool_name(x.pool);
        cr->set_device_name(x.device);
        cr->add_cdi_devices()->set_name("k8s." + x.driver + "/claim=" + x.device);
      }
    }
  }

 private:
  static void on_call(void* user, const char* method, const char* body, size_t body_len, const char*,
                      const char* const*, void* call, gcm_otlp_grpc_respond_fn respond) {
    auto* self = static_cast<FakeKubelet*>(user);
    std::lock_guard lock(self->mu_);
    std::string m = method;
    self->methods_.push_back(m);
    std::string out;
    if (m == "/v1.PodResourcesLister/List") {
      if (self->fail_code_) return respond(call, self->fail_code_, "the kubelet is not ready", nullptr, 0);
      self->pods_.SerializeToString(&out);
    } else if (m == "/v1.PodResourcesLister/Get") {
      podresources::GetPodResourcesRequest req;
      if (!req.ParseFromArray(body, static_cast<int>(body_len)))
        return respond(call, 3, "bad GetPodResourcesRequest", nullptr, 0);
      podresources::GetPodResourcesResponse res;
      for (const auto& p : self->pods_.pod_resources())
        if (p.name() == req.pod_name() && p.namespace_() == req.pod_namespace()) *res.mutable_pod_resources() = p;
      if (!res.has_pod_resources())
        return respond(call, 5, ("pod not found: " + req.pod_namespace() + "/" + req.pod_name()).c_str(), nullptr, 0);
      res.SerializeToString(&out);
    } else if (m == "/v1.PodResourcesLister/GetAllocatableResources") {
      podresources::AllocatableResourcesResponse res;
      res.SerializeToString(&out);
    } else {
      return respond(call, 12, "unknown method", nullptr, 0);
    }
    respond(call, 0, "", out.data(), out.size());
  }

  TempDir dir_;
  std::string socket_;
  otlp::GrpcServerApi api_;
  gcm_otlp_grpc_server* server_ = nullptr;
  std::mutex mu_;
  podresources::ListPodResourcesResponse pods_;
  int fail_code_ = 0;
  std::vector<std::string> methods_;
};

}  // namespace gcm::testing

#include "otlp/grpc_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace gcm::otlp {

namespace {
constexpr const char* kModule = "libgcm_otlp_grpc.so";

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("GCM_OTLP_GRPC_MODULE"); env && *env) out.emplace_back(env);
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    out.push_back((exe.parent_path() / kModule).string());
    out.push_back((exe.parent_path() / ".." / "lib" / "gcm" / kModule).lexically_normal().string());
  }
  return out;
}

// The first candidate that loads and has the client entry point (every version of the module has it); loaded once.
void* module_handle() {
  static std::mutex mu;
  static void* handle = nullptr;
  std::lock_guard lock(mu);
  if (handle) return handle;
  std::vector<std::string> tried;
  for (const auto& path : candidates()) {
    if (void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      if (::dlsym(h, "gcm_otlp_grpc_call")) return handle = h;
      tried.push_back(path + " (no gcm_otlp_grpc_call)");
      ::dlclose(h);
    } else {
      tried.push_back(::dlerror());
    }
  }
  throw std::runtime_error(
      fmt::format("the OTLP/gRPC transport module {} could not be loaded; tried: {}", kModule, fmt::join(tried, "; ")));
}

void* symbol(const char* name) {
  void* h = module_handle();
  if (void* sym = ::dlsym(h, name)) return sym;
  throw std::runtime_error(
      fmt::format("the OTLP/gRPC transport module {} has no {} (a module older than this gcm?)", kModule, name));
}
}  // namespace

gcm_otlp_grpc_call_fn load_grpc_transport() {
  return reinterpret_cast<gcm_otlp_grpc_call_fn>(symbol("gcm_otlp_grpc_call"));
}

gcm_otlp_grpc_set_tls_fn load_grpc_set_tls() {
  return reinterpret_cast<gcm_otlp_grpc_set_tls_fn>(symbol("gcm_otlp_grpc_set_tls"));
}

GrpcServerApi load_grpc_server() {
  return {reinterpret_cast<gcm_otlp_grpc_server_start_fn>(symbol("gcm_otlp_grpc_server_start")),
          reinterpret_cast<gcm_otlp_grpc_server_stop_fn>(symbol("gcm_otlp_grpc_server_stop"))};
}

}  // namespace gcm::otlp

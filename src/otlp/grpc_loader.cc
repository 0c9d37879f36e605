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
}  // namespace

gcm_otlp_grpc_call_fn load_grpc_transport() {
  static std::mutex mu;
  static gcm_otlp_grpc_call_fn fn = nullptr;
  std::lock_guard lock(mu);
  if (fn) return fn;
  std::vector<std::string> tried;
  for (const auto& path : candidates()) {
    if (void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      if (auto* sym = ::dlsym(h, "gcm_otlp_grpc_call")) {
        fn = reinterpret_cast<gcm_otlp_grpc_call_fn>(sym);
        return fn;
      }
      tried.push_back(path + " (no gcm_otlp_grpc_call)");
    } else {
      tried.push_back(::dlerror());
    }
  }
  throw std::runtime_error(fmt::format("the OTLP/gRPC transport module {} could not be loaded; tried: {}", kModule,
                                       fmt::join(tried, "; ")));
}

}  // namespace gcm::otlp

#include "core/host_roots.h"

#include <filesystem>

namespace gcm {

namespace {

std::string rebase(const std::string& root, std::string_view rel) {
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  return (std::filesystem::path(root) / std::filesystem::path(rel)).string();
}

}  // namespace

std::string HostRoots::proc(std::string_view rel) const { return rebase(procfs, rel); }
std::string HostRoots::sys(std::string_view rel) const { return rebase(sysfs, rel); }
std::string HostRoots::root(std::string_view abs) const { return rebase(rootfs, abs); }

}  // namespace gcm

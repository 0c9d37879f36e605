// The host roots: every command that reads the host (collectors, health checks, the agent) reads it under these, so
// a container or a test points a whole command elsewhere with one option each, node_exporter's --path.* options.
// Each is declared here once, with its flag, config key and default; a command may word its help for what it reads
// there. Templates on the binder, so that core/ does not depend on cli/.
#pragma once

#include <string>
#include <string_view>

namespace gcm {

struct HostRoot {
  const char* flag;
  const char* key;      // the config-file key
  const char* old_key;  // the first kernel-log checks' dotted spelling, still accepted where they read it
  const char* default_value;
  const char* help;
};

inline constexpr HostRoot kProcfsRoot{"--path.procfs", "path_procfs", "path.procfs", "/proc",
                                      "Where /proc is mounted (containers, tests)."};
inline constexpr HostRoot kSysfsRoot{"--path.sysfs", "path_sysfs", "path.sysfs", "/sys",
                                     "Where /sys is mounted (containers, tests)."};
inline constexpr HostRoot kRootfsRoot{"--path.rootfs", "path_rootfs", "path.rootfs", "/",
                                      "Host files (/etc/...) are read under this root."};
inline constexpr HostRoot kKmsgRoot{"--path.kmsg", "path_kmsg", "path.kmsg", "/dev/kmsg",
                                    "The kernel log: /dev/kmsg, or a file of its records."};
inline constexpr HostRoot kRunRoot{"--path.run", "path_run", "path.run", "/run/gcm",
                                   "Where the agent keeps agent-state.json."};

// The roots a reader of host files needs. Paths given as absolute host paths are rebased.
struct HostRoots {
  std::string procfs = kProcfsRoot.default_value;
  std::string sysfs = kSysfsRoot.default_value;
  std::string rootfs = kRootfsRoot.default_value;
  std::string proc(std::string_view rel) const;  // proc("buddyinfo") -> <procfs>/buddyinfo
  std::string sys(std::string_view rel) const;   // sys("class/net") -> <sysfs>/class/net
  std::string root(std::string_view abs) const;  // root("/etc/fstab") -> <rootfs>/etc/fstab
};

// Adds `root`'s option, bound to `target` under its config key; help: the command's own wording, else the root's.
// show_default false: target starts empty and its real default is resolved later (agent-verdict's --path.run).
template <typename Binder>
auto* add_host_root_option(Binder& b, const HostRoot& root, std::string& target, const char* help = nullptr,
                           bool show_default = true) {
  auto* o = b.option(root.flag, root.key, target, help ? help : root.help);
  if (show_default) o->capture_default_str();
  return o;
}

// Also accepts the root's old dotted config key ("path.procfs") for the same option: config files written for the
// kernel-log checks, which used that spelling first, keep working.
template <typename Binder, typename Option>
void accept_old_spelling(Binder& b, const HostRoot& root, Option* o) {
  b.bind(root.old_key, o);
}

}  // namespace gcm

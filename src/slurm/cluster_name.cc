#include "slurm/cluster_name.h"

#include "core/subprocess.h"

namespace gcm {

std::optional<std::string> parse_cluster_name(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (line.find("ClusterName") != std::string_view::npos) {
      size_t eq = line.find('=');
      if (eq == std::string_view::npos) return std::nullopt;
      std::string_view v = line.substr(eq + 1);
      // The reference takes only the text between the first and second '='; so do we.
      v = v.substr(0, v.find('='));
      while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.remove_prefix(1);
      while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
      if (v.empty()) return std::nullopt;
      return std::string(v);
    }
    pos = end + 1;
  }
  return std::nullopt;
}

std::string detect_cluster(std::chrono::milliseconds timeout) {
  try {
    CommandSpec spec;
    spec.argv = {"scontrol", "show", "config"};
    spec.timeout = timeout;
    CommandResult r = run_command(spec);
    if (r.ok()) {
      if (auto name = parse_cluster_name(r.out)) return *name;
    }
  } catch (const CommandError&) {
  }
  return "local-node";
}

}  // namespace gcm

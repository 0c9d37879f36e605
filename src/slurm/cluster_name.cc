#include "slurm/cluster_name.h"

#include <fmt/format.h>

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

namespace {

const std::vector<std::string> kShowConfig = {"scontrol", "show", "config"};

// scontrol says why it failed in several lines (each step of its configuration lookup, then "fatal: ..."); the
// warning is one line, so only its last line, which says what finally went wrong, is kept.
std::string scontrol_last_line(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) text.remove_suffix(1);
  size_t nl = text.rfind('\n');
  return std::string(nl == std::string_view::npos ? text : text.substr(nl + 1));
}

}  // namespace

ClusterNameLookup look_up_cluster_name(std::chrono::milliseconds timeout) {
  ClusterNameLookup lookup;
  if (find_executable(kShowConfig[0]).empty()) return lookup;  // no Slurm on this host
  CommandSpec spec;
  spec.argv = kShowConfig;
  spec.timeout = timeout;
  try {
    CommandResult r = run_command(spec);
    if (!r.ok()) {
      r.err = scontrol_last_line(r.err);
      lookup.problem = describe_failure(spec, r);
    } else if (auto name = parse_cluster_name(r.out)) {
      lookup.name = *name;
    } else {
      lookup.problem = fmt::format("`{}` printed no ClusterName", command_line(spec.argv));
    }
  } catch (const CommandError& e) {
    lookup.problem = e.what();
  }
  return lookup;
}

std::string cluster_name_warning(const ClusterNameLookup& lookup) {
  return fmt::format("cannot read the cluster name from `{}`: {}; using local-node (give --cluster to set it)",
                     command_line(kShowConfig), lookup.problem);
}

std::string detect_cluster(std::chrono::milliseconds timeout, const std::function<void(const std::string&)>& warn) {
  ClusterNameLookup lookup = look_up_cluster_name(timeout);
  if (!lookup.problem.empty() && warn) warn(cluster_name_warning(lookup));
  return lookup.name.value_or("local-node");
}

}  // namespace gcm

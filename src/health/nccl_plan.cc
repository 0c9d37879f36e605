#include "health/nccl_plan.h"

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace gcm::health {

std::vector<std::vector<std::string>> nccl_host_groups(const std::vector<std::string>& hosts, NcclMode mode) {
  std::vector<std::vector<std::string>> groups;
  if (mode == NcclMode::Single) {
    for (const auto& h : hosts) groups.push_back({h});
    return groups;
  }
  if (hosts.size() < 2) throw std::invalid_argument("pairwise NCCL testing needs at least 2 hosts");
  if (mode == NcclMode::Pairwise) {
    for (size_t i = 0; i < hosts.size(); ++i)
      for (size_t j = i + 1; j < hosts.size(); ++j) groups.push_back({hosts[i], hosts[j]});
    return groups;
  }
  for (size_t i = 0; i + 1 < hosts.size(); i += 2) groups.push_back({hosts[i], hosts[i + 1]});
  if (hosts.size() % 2 == 1) groups.push_back({hosts.back(), hosts.front()});
  return groups;
}

std::vector<std::string> nccl_argv(const NcclCommand& c, const std::vector<std::string>& group) {
  std::vector<std::string> argv{c.mpirun, "--host"};
  std::string host_arg;
  for (const auto& h : group) host_arg += fmt::format("{}{}:{}", host_arg.empty() ? "" : ",", h, c.gpus_per_node);
  argv.push_back(host_arg);
  argv.push_back("--np");
  argv.push_back(std::to_string(c.np ? *c.np : c.gpus_per_node * static_cast<int>(group.size())));
  argv.insert(argv.end(), c.mpi_opts.begin(), c.mpi_opts.end());
  for (const auto& e : c.exports) {
    argv.push_back("-x");
    argv.push_back(e);
  }
  if (!c.nvlink)
    for (const char* e : {"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1"}) {
      argv.push_back("-x");
      argv.push_back(e);
    }
  argv.push_back(fmt::format("{}/{}_perf", c.tests_dir, c.op));
  argv.insert(argv.end(), c.test_opts.begin(), c.test_opts.end());
  return argv;
}

std::optional<double> nccl_avg_bus_bandwidth(std::string_view out) {
  size_t at = out.find("Avg bus bandwidth");
  if (at == std::string_view::npos) return std::nullopt;
  size_t eol = out.find('\n', at);
  std::string_view line = out.substr(at + 17, eol == std::string_view::npos ? std::string_view::npos : eol - at - 17);
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] < '0' || line[i] > '9') continue;
    size_t j = i;
    while (j < line.size() && ((line[j] >= '0' && line[j] <= '9') || line[j] == '.')) ++j;
    // "12.5" or ".5" (a leading dot belongs to the number)
    size_t start = i > 0 && line[i - 1] == '.' ? i - 1 : i;
    std::string num(line.substr(start, j - start));
    return std::strtod(num.c_str(), nullptr);
  }
  return std::nullopt;
}

}  // namespace gcm::health

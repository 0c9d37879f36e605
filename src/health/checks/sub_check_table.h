// The --help texts of a check made of a table of sub-checks (check-nvidia-smi, check-amd-smi): written from the table,
// so that a sub-check added to it cannot be left out of --help. A row has `option` (its -c value) and `help`.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>

namespace gcm::health {

// "gpu_num, clock_freq, ...": every -c value in the table's order.
template <typename SubCheck>
std::string sub_check_names(const std::vector<SubCheck>& table) {
  std::string names;
  for (const auto& s : table) names += (names.empty() ? "" : ", ") + std::string(s.option);
  return names;
}

// -c's help: one line per sub-check.
template <typename SubCheck>
std::string sub_check_option_help(const std::vector<SubCheck>& table) {
  std::string help = "Sub-check to run (required); repeat for several (run in a fixed order):";
  for (const auto& s : table) help += fmt::format("\n  {}: {}", s.option, s.help);
  return help;
}

}  // namespace gcm::health

#include "health/checks/smartctl.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_limits.h"

namespace gcm::health {

SmartInfo parse_smartctl_json(std::string_view text, const std::string& source) {
  nlohmann::json j;
  try {
    j = parse_json_limited_or_throw(text);
  } catch (const JsonInputError& e) {  // syntax, a number too large, too deep
    throw SmartctlError(fmt::format("{}: smartctl output is not JSON: {}", source, e.what()));
  }
  if (!j.is_object()) throw SmartctlError(fmt::format("{}: smartctl output is not a JSON object", source));
  auto str = [&](const char* key) -> std::string {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return "";
    if (!it->is_string()) throw SmartctlError(fmt::format("{}: {}: expected a string", source, key));
    return it->get<std::string>();
  };
  SmartInfo s;
  s.model_name = str("model_name");
  s.serial_number = str("serial_number");
  if (auto it = j.find("nvme_total_capacity"); it != j.end() && it->is_number_integer()) {
    s.capacity = it->get<long long>();
  } else if (auto u = j.find("user_capacity"); u != j.end() && u->is_object()) {
    if (auto b = u->find("bytes"); b != u->end() && b->is_number_integer()) s.capacity = b->get<long long>();
  }
  if (auto st = j.find("smart_status"); st != j.end() && st->is_object()) {
    if (auto p = st->find("passed"); p != st->end() && p->is_boolean()) s.smart_passed = p->get<bool>();
  }
  if (auto lg = j.find("nvme_smart_health_information_log"); lg != j.end() && lg->is_object()) {
    NvmeHealthLog h;
    bool complete = true;
    auto num = [&](const char* key, long long& out) {
      auto it = lg->find(key);
      if (it == lg->end() || !it->is_number()) {
        complete = false;
        return;
      }
      out = it->is_number_integer() ? it->get<long long>() : static_cast<long long>(it->get<double>());
    };
    num("data_units_read", h.data_units_read);
    num("data_units_written", h.data_units_written);
    num("host_reads", h.host_reads);
    num("host_writes", h.host_writes);
    num("percentage_used", h.percentage_used);
    num("available_spare", h.available_spare);
    num("available_spare_threshold", h.available_spare_threshold);
    if (complete) s.health_log = h;
  }
  return s;
}

}  // namespace gcm::health

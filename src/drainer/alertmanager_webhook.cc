#include "drainer/alertmanager_webhook.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_limits.h"

namespace gcm::drainer {

namespace {

using nlohmann::json;

std::map<std::string, std::string> string_map(const json& alert, const char* key, size_t index) {
  std::map<std::string, std::string> out;
  auto it = alert.find(key);
  if (it == alert.end() || it->is_null()) return out;
  if (!it->is_object()) throw WebhookError(fmt::format("alerts[{}].{}: expected an object", index, key));
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string()) throw WebhookError(fmt::format("alerts[{}].{}.{}: expected a string", index, key, k));
    out[k] = v.get<std::string>();
  }
  return out;
}

std::string string_field(const json& alert, const char* key, size_t index) {
  auto it = alert.find(key);
  if (it == alert.end() || it->is_null()) return "";
  if (!it->is_string()) throw WebhookError(fmt::format("alerts[{}].{}: expected a string", index, key));
  return it->get<std::string>();
}

}  // namespace

std::vector<AlertNotice> parse_alertmanager_webhook(std::string_view body) {
  std::string error;
  json doc = parse_json_limited(body, &error);
  if (doc.is_discarded()) throw WebhookError("not JSON: " + error);
  if (!doc.is_object()) throw WebhookError("expected a JSON object (Alertmanager's webhook payload)");
  auto alerts = doc.find("alerts");
  if (alerts == doc.end() || !alerts->is_array()) throw WebhookError("alerts: expected an array");
  std::vector<AlertNotice> out;
  out.reserve(alerts->size());
  for (size_t i = 0; i < alerts->size(); ++i) {
    const json& a = (*alerts)[i];
    if (!a.is_object()) throw WebhookError(fmt::format("alerts[{}]: expected an object", i));
    AlertNotice n;
    n.status = string_field(a, "status", i);
    if (n.status != "firing" && n.status != "resolved")
      throw WebhookError(
          fmt::format("alerts[{}].status: expected \"firing\" or \"resolved\", got \"{}\"", i, n.status));
    n.labels = string_map(a, "labels", i);
    n.annotations = string_map(a, "annotations", i);
    n.fingerprint = string_field(a, "fingerprint", i);
    n.starts_at = string_field(a, "startsAt", i);
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace gcm::drainer

// Alertmanager's webhook payload (version 4): a group of alerts, each firing or resolved, with its labels and
// annotations. Only what `gcm drainer` acts on is kept; the payload comes from the network, so it is parsed with the
// project's JSON limits and every field's type is checked.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gcm::drainer {

struct AlertNotice {
  std::string status;  // "firing" or "resolved"
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::string fingerprint;
  std::string starts_at;
};

struct WebhookError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws WebhookError naming what is wrong ("alerts[2].labels.node: expected a string").
std::vector<AlertNotice> parse_alertmanager_webhook(std::string_view body);

}  // namespace gcm::drainer

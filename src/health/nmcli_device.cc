#include "health/nmcli_device.h"

#include "core/ascii.h"

namespace gcm::health {

std::vector<std::string> nmcli_device_show_argv(const std::string& ifname) {
  return {"nmcli",  "-t",   "-e",
          "no",     "-f",   "GENERAL.HWADDR,GENERAL.DEVICE,GENERAL.TYPE,GENERAL.MTU,GENERAL.STATE,GENERAL.CONNECTION",
          "device", "show", ifname};
}

std::optional<std::map<std::string, std::string>> parse_nmcli_device_show(std::string_view text,
                                                                          const std::string& ifname) {
  std::map<std::string, std::string> props;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    props[std::string(ascii_trim(line.substr(0, colon)))] = std::string(ascii_trim(line.substr(colon + 1)));
  }
  auto get = [&](const char* k) {
    auto it = props.find(k);
    return it == props.end() ? std::string() : it->second;
  };
  if (get("GENERAL.HWADDR").empty()) return std::nullopt;
  std::string type = get("GENERAL.TYPE");
  if (!type.empty()) {
    // Python's str.capitalize(): first letter upper, the rest lower.
    for (auto& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    type[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(type[0])));
  }
  std::string connection = get("GENERAL.CONNECTION");
  if (connection == "--") connection.clear();
  std::string device = props.count("GENERAL.DEVICE") ? get("GENERAL.DEVICE") : ifname;
  return std::map<std::string, std::string>{{"HWADDR", get("GENERAL.HWADDR")},
                                            {"DEVICE", device},
                                            {"NAME", connection.empty() ? ifname : connection},
                                            {"TYPE", type},
                                            {"MTU", get("GENERAL.MTU")},
                                            {"STATE", get("GENERAL.STATE")}};
}

}  // namespace gcm::health

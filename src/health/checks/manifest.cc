#include "health/checks/manifest.h"

#include <climits>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/ascii.h"
#include "core/json_limits.h"

namespace gcm::health {

namespace {

using Json = nlohmann::ordered_json;

struct Ctx {
  const std::string& source;
  [[noreturn]] void fail(const std::string& key, const std::string& what, const Json& got) const {
    std::string shown = got.dump();
    if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
    throw ManifestError(fmt::format("{}: {}: expected {}, got {}", source, key, what, shown));
  }
  const Json& object(const Json& j, const std::string& key) const {
    if (!j.is_object()) fail(key, "an object", j);
    return j;
  }
  std::string str(const Json& j, const std::string& key) const {
    if (j.is_string()) return j.get<std::string>();
    if (j.is_number_integer()) return std::to_string(j.get<long long>());
    fail(key, "a string", j);
  }
  long long integer(const Json& j, const std::string& key) const {
    if (j.is_number_unsigned() && j.get<unsigned long long>() > static_cast<unsigned long long>(LLONG_MAX))
      fail(key, "an integer", j);
    if (j.is_number_integer()) return j.get<long long>();
    if (j.is_number_float()) {
      // A whole number within long long's range: converting one outside it is undefined (a fuzzer finding: 2e102).
      double d = j.get<double>();
      if (d >= -0x1p63 && d < 0x1p63 && d == std::trunc(d)) return static_cast<long long>(d);
    }
    if (j.is_string()) {
      const std::string& s = j.get_ref<const std::string&>();
      size_t pos = 0;
      try {
        long long v = std::stoll(s, &pos);
        if (pos == s.size() && !s.empty()) return v;
      } catch (const std::exception&) {
      }
    }
    fail(key, "an integer", j);
  }
  bool boolean(const Json& j, const std::string& key) const {
    if (j.is_boolean()) return j.get<bool>();
    if (j.is_number_integer() && (j.get<long long>() == 0 || j.get<long long>() == 1)) return j.get<long long>() == 1;
    if (j.is_string()) {
      std::string s = ascii_lower(j.get<std::string>());
      if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
      if (s == "false" || s == "0" || s == "no" || s == "off") return false;
    }
    fail(key, "a boolean", j);
  }
  std::vector<std::string> strings(const Json& j, const std::string& key) const {
    std::vector<std::string> v;
    if (j.is_string()) return {j.get<std::string>()};
    if (!j.is_array()) fail(key, "a list of strings", j);
    for (size_t i = 0; i < j.size(); ++i) v.push_back(str(j[i], fmt::format("{}[{}]", key, i)));
    return v;
  }
};

}  // namespace

Manifest parse_manifest(std::string_view text, const std::string& source) {
  Json root;
  try {
    // The limited parse builds an unordered value; a manifest's file order matters (topology_critical stops the
    // walk in that order), so the depth is checked on its own and the ordered parser reads the text.
    if (auto deep = json_depth_error(text)) throw JsonInputError(*deep);
    root = Json::parse(text);
  } catch (const JsonInputError& e) {  // too deep
    throw ManifestError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number too large
    throw ManifestError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  Ctx c{source};
  c.object(root, "(top level)");
  Manifest m;
  if (auto it = root.find("pci"); it != root.end() && !it->is_null()) {
    c.object(*it, "pci");
    for (const auto& [id, e] : it->items()) {
      std::string k = "pci." + id;
      c.object(e, k);
      PciEntry p;
      p.id = id;
      if (e.contains("type")) p.type = c.str(e["type"], k + ".type");
      if (e.contains("dev")) p.dev = c.str(e["dev"], k + ".dev");
      if (e.contains("zone")) p.zone = c.str(e["zone"], k + ".zone");
      if (e.contains("slot")) p.slot = c.str(e["slot"], k + ".slot");
      if (e.contains("link_speed")) p.link_speed = c.strings(e["link_speed"], k + ".link_speed");
      if (e.contains("link_width") && !e["link_width"].is_null())
        p.link_width = c.integer(e["link_width"], k + ".link_width");
      if (e.contains("topology_critical"))
        p.topology_critical = c.boolean(e["topology_critical"], k + ".topology_critical");
      m.pci.push_back(std::move(p));
    }
  }
  if (auto it = root.find("eth"); it != root.end() && !it->is_null()) {
    c.object(*it, "eth");
    m.eth.emplace();
    for (const auto& [name, e] : it->items()) {
      std::string k = "eth." + name;
      c.object(e, k);
      EthEntry x;
      x.name = name;
      if (!e.contains("netdev")) c.fail(k + ".netdev", "a network device name", Json());
      x.netdev = c.str(e["netdev"], k + ".netdev");
      if (e.contains("phys") && !e["phys"].is_null()) x.phys = c.boolean(e["phys"], k + ".phys");
      if (e.contains("flags")) x.flags = c.strings(e["flags"], k + ".flags");
      if (e.contains("speed") && !e["speed"].is_null()) x.speed = c.integer(e["speed"], k + ".speed");
      if (e.contains("mtu") && !e["mtu"].is_null()) x.mtu = c.integer(e["mtu"], k + ".mtu");
      m.eth->push_back(std::move(x));
    }
  }
  if (auto it = root.find("ib"); it != root.end() && !it->is_null()) {
    c.object(*it, "ib");
    IbSection ib;
    if (it->contains("link_rate")) ib.link_rate = c.str((*it)["link_rate"], "ib.link_rate");
    if (it->contains("firmware_version"))
      ib.firmware_versions = c.strings((*it)["firmware_version"], "ib.firmware_version");
    if (it->contains("interfaces")) {
      const Json& ifs = c.object((*it)["interfaces"], "ib.interfaces");
      for (const auto& [netdev, e] : ifs.items()) {
        std::string k = "ib.interfaces." + netdev;
        c.object(e, k);
        IbInterface i;
        if (e.contains("mlx")) i.mlx = c.str(e["mlx"], k + ".mlx");
        if (e.contains("desc")) i.desc = c.str(e["desc"], k + ".desc");
        ib.interfaces[netdev] = i;
      }
    }
    m.ib = std::move(ib);
  }
  if (auto it = root.find("disks"); it != root.end() && !it->is_null()) {
    c.object(*it, "disks");
    for (const auto& [slot, e] : it->items()) {
      std::string k = "disks." + slot;
      c.object(e, k);
      DiskEntry d;
      d.slot = slot;
      if (!e.contains("blockdev")) c.fail(k + ".blockdev", "a block device name", Json());
      d.blockdev = c.str(e["blockdev"], k + ".blockdev");
      if (e.contains("size") && !e["size"].is_null()) d.size = c.integer(e["size"], k + ".size");
      m.disks.push_back(std::move(d));
    }
  }
  return m;
}

Manifest load_manifest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ManifestError(fmt::format("Unable to open manifest file {}", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_manifest(ss.str(), path);
}

}  // namespace gcm::health

// health_checks check-ethlink: the manifest's Ethernet interfaces, in three stages that stop at the first one that
// fails: configuration (the ifcfg file of each physical interface under --path.rootfs, or where there is none, as on
// CentOS 10, NetworkManager's view from `nmcli device show` (health/nmcli_device.h); its HWADDR against `ethtool
// -P`), state (`ip -j addr`: UP, flags, MTU), speed (<sysfs>/class/net/<netdev>/speed).
#include <nlohmann/json.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/option_binder.h"
#include "core/ascii.h"
#include "core/json_limits.h"
#include "health/checks/host_check.h"
#include "health/checks/manifest.h"
#include "health/nmcli_device.h"

namespace gcm::health {
namespace {

struct EthOpts {
  HostRoots roots;
  std::string manifest = "/etc/manifest.json";
};

constexpr int64_t kEthTimeoutS = 30;

// KEY=VALUE lines, values unquoted.
std::map<std::string, std::string> parse_ifcfg(const std::string& text) {
  std::map<std::string, std::string> kv;
  for (const auto& raw : split_lines(text)) {
    std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string v = trim(line.substr(eq + 1));
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
      v = v.substr(1, v.size() - 2);
    kv[trim(line.substr(0, eq))] = v;
  }
  return kv;
}

CheckOutcome check_ethlink(const EthOpts& o) {
  Manifest m = load_manifest(o.manifest);
  if (!m.eth || m.eth->empty()) return {ExitCode::OK, "No ethernet interface in manifest, skipping"};
  const auto& eth = *m.eth;
  Findings v;
  auto label = [](const EthEntry& e) { return fmt::format("{} ({})", e.name, e.netdev); };

  // 1. Configuration of the physical interfaces.
  for (const auto& e : eth) {
    if (!e.phys) continue;
    std::string path = o.roots.root("/etc/sysconfig/network-scripts/ifcfg-" + e.netdev);
    std::map<std::string, std::string> cfg;
    if (auto text = read_file(path)) {
      cfg = parse_ifcfg(*text);
    } else {
      // GCM's fallback: nmcli failing, missing or printing no HWADDR all mean "no configuration".
      auto n = run_tool(nmcli_device_show_argv(e.netdev), kEthTimeoutS);
      auto from_nm = n.ok() ? parse_nmcli_device_show(n.out, e.netdev) : std::nullopt;
      if (!from_nm) {
        v.add(ExitCode::CRITICAL, fmt::format("Missing interface {}! (no {} and {})", label(e), path,
                                              n.ok() ? "nmcli device show gave no GENERAL.HWADDR" : n.failure()));
        continue;
      }
      cfg = std::move(*from_nm);
    }
    std::string want = ascii_lower(cfg["HWADDR"]);
    auto t = run_tool({"ethtool", "-P", e.netdev}, kEthTimeoutS);
    if (!t.ok()) {
      v.add(ExitCode::WARN, fmt::format("{}: {}", label(e), t.failure()));
      continue;
    }
    std::string mac = ascii_lower(trim(t.out.substr(t.out.find(':') == std::string::npos ? 0 : t.out.find(':') + 1)));
    if (want != mac)
      v.add(ExitCode::CRITICAL, fmt::format("{} has bad cfg (expect: {}, actual: {})!", label(e), want, mac));
  }
  if (!v.msgs.empty()) return v.outcome();

  // 2. State from `ip -j addr`.
  auto t = run_tool({"ip", "-j", "addr"}, kEthTimeoutS);
  if (!t.ok()) return {ExitCode::WARN, t.failure()};
  nlohmann::json ifs;
  try {
    ifs = parse_json_limited_or_throw(t.out);
  } catch (const JsonInputError& ex) {  // syntax, a number too large, too deep
    return {ExitCode::WARN, fmt::format("ip -j addr: not valid JSON: {}", ex.what())};
  }
  if (!ifs.is_array()) return {ExitCode::WARN, "ip -j addr: expected a JSON list of interfaces"};
  for (const auto& e : eth) {
    const nlohmann::json* found = nullptr;
    for (const auto& i : ifs)
      if (i.is_object() && i.value("ifname", "") == e.netdev) found = &i;
    if (!found) {
      v.add(ExitCode::CRITICAL, fmt::format("Missing interface {}!", label(e)));
      continue;
    }
    std::string oper = found->value("operstate", "");
    if (oper != "UP") {
      v.add(ExitCode::CRITICAL, fmt::format("{} is DOWN (operstate {})", label(e), oper));
      continue;
    }
    std::vector<std::string> have, missing;
    if (auto f = found->find("flags"); f != found->end() && f->is_array())
      for (const auto& x : *f)
        if (x.is_string()) have.push_back(x.get<std::string>());
    for (const auto& want : e.flags)
      if (std::find(have.begin(), have.end(), want) == have.end()) missing.push_back(want);
    if (!missing.empty()) {
      v.add(ExitCode::CRITICAL, fmt::format("{} has missing flag(s): {}", label(e), fmt::join(missing, ", ")));
      continue;
    }
    long long mtu =
        found->contains("mtu") && (*found)["mtu"].is_number_integer() ? (*found)["mtu"].get<long long>() : -1;
    if (e.mtu && mtu != *e.mtu)
      v.add(ExitCode::WARN, fmt::format("{} has bad mtu ({} {} {})", label(e), mtu, mtu < *e.mtu ? "<" : ">", *e.mtu));
  }
  if (!v.msgs.empty()) return v.outcome();

  // 3. Speed.
  for (const auto& e : eth) {
    if (!e.speed) continue;
    auto s = read_trimmed(o.roots.sys("class/net/" + e.netdev + "/speed"));
    auto speed = s ? parse_int(*s) : std::nullopt;
    if (!speed) {
      v.add(ExitCode::WARN, fmt::format("{} has an unknown speed (expected {}Mbps)", label(e), *e.speed));
      continue;
    }
    if (*speed != *e.speed)
      v.add(ExitCode::WARN, fmt::format("{} is slower than expected ({}Mbps vs {}Mbps)", label(e), *speed, *e.speed));
  }
  if (!v.msgs.empty()) return v.outcome();
  return {ExitCode::OK, fmt::format("{} ethernet interfaces good", eth.size())};
}

const bool kEth = register_simple_check<EthOpts>(
    {"check-ethlink"},
    "The manifest's Ethernet interfaces: CRITICAL for a missing interface or ifcfg file (without one, nmcli device "
    "show gives the configuration, as on CentOS 10), a HWADDR other than the "
    "permanent MAC, an interface DOWN or missing a flag; WARNING for a wrong MTU or a slower speed. Commands time "
    "out after 30 s.",
    false, "check ethlink", "disable_check_ethlink",
    [](OptionBinder& b, EthOpts& o) {
      b.option("--manifest_file,--manifest-file", "manifest_file", o.manifest, "The node manifest (JSON).")
          ->capture_default_str();
      add_sysfs_option(b, o.roots);
      add_rootfs_option(b, o.roots);
    },
    [](CheckRun&, const EthOpts& o) -> CheckOutcome { return check_ethlink(o); });

}  // namespace
}  // namespace gcm::health

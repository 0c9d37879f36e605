// health_checks check-pci: every PCIe device of the manifest must be present with its expected link width and one
// of its expected link speeds (<sysfs>/class/pci_bus/<domain:bus>/device/<id>/current_link_{speed,width}).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/option_binder.h"
#include "core/host_text.h"
#include "health/checks/host_check.h"
#include "health/checks/manifest.h"

namespace gcm::health {
namespace {

struct PciOpts {
  HostRoots roots;
  std::string manifest = "/etc/manifest.json";
};

const bool kPci = register_simple_check<PciOpts>(
    {"check-pci"},
    "CRITICAL when a PCIe device of the manifest is missing or its link is degraded (width other than link_width, "
    "speed not in link_speed). A missing device marked topology_critical stops the walk.",
    false, "check pci", "disable_check_pci",
    [](OptionBinder& b, PciOpts& o) {
      b.option("--manifest_file,--manifest-file", "manifest_file", o.manifest, "The node manifest (JSON).")
          ->capture_default_str();
      add_sysfs_option(b, o.roots);
    },
    [](CheckRun&, const PciOpts& o) -> CheckOutcome {
      Manifest m;
      try {
        m = load_manifest(o.manifest);
      } catch (const ManifestError& e) {
        return {ExitCode::WARN, e.what()};
      }
      size_t total = m.pci.size(), pass = 0, missing = 0, degraded = 0;
      std::vector<std::string> lines;
      for (const auto& p : m.pci) {
        std::string name = p.slot.empty() ? p.id : p.slot;
        std::string dir = o.roots.sys(fmt::format("class/pci_bus/{}/device/{}", p.id.substr(0, p.id.rfind(':')), p.id));
        auto speed = read_trimmed(dir + "/current_link_speed");
        auto width = read_trimmed(dir + "/current_link_width");
        if (!speed || !width) {
          ++missing;
          lines.push_back(fmt::format("{} is not present at {}.", name, p.id));
          if (p.topology_critical) break;
          continue;
        }
        bool speed_ok =
            p.link_speed.empty() || std::find(p.link_speed.begin(), p.link_speed.end(), *speed) != p.link_speed.end();
        auto w = parse_int(*width);
        bool width_ok = !p.link_width || (w && *w == *p.link_width);
        if (speed_ok && width_ok) {
          ++pass;
          continue;
        }
        ++degraded;
        lines.push_back(fmt::format("{} has degraded PCIe link (current: 'x{} @ {}', expected: 'x{} @ {}').", name,
                                    host_value(*width), host_value(*speed),
                                    p.link_width ? std::to_string(*p.link_width) : "?", fmt::join(p.link_speed, "|")));
      }
      size_t unknown = total - pass - missing - degraded;  // not looked at after a topology-critical device
      if (pass == total) return {ExitCode::OK, fmt::format("PCIe Devices Good | 'pass'={};;;;{}", pass, total)};
      return {ExitCode::CRITICAL,
              fmt::format("PCIe Issues Detected | 'pass'={0};;;;{4} 'missing'={1};;;;{4} 'degraded'={2};;;;{4} "
                          "'unknown'={3};;;;{4}\n{5}",
                          pass, missing, degraded, unknown, total, fmt::join(lines, "\n"))};
    });

}  // namespace
}  // namespace gcm::health

// health_checks check-airstore flash-array-credential-count (kept generic: the entries of a directory whose name
// contains a pattern, against a minimum).
#include <dirent.h>

#include <fmt/format.h>

#include "cli/option_binder.h"
#include "health/checks/host_check.h"

namespace gcm::health {
namespace {

const bool kCheckAirstoreGroupRegistered = register_health_group("check-airstore", "Credential store checks.");

struct CredOpts {
  HostRoots roots;
  long long expected = 0;
  std::string dir = "/var/airstore/cred";
  std::string pattern = "bulk";
};

const bool kCred = register_simple_check<CredOpts>(
    {"check-airstore", "flash-array-credential-count"},
    "CRITICAL when fewer than --expected-count-ge entries of --credential-dir have --pattern in their name.", true,
    "airstore credential count", "disable_airstore_credential_count",
    [](OptionBinder& b, CredOpts& o) {
      b.option("--expected-count-ge", "expected_count_ge", o.expected, "Minimum number of credentials.")->required();
      b.option("--credential-dir", "credential_dir", o.dir, "Directory holding the credentials.")
          ->capture_default_str();
      b.option("--pattern", "pattern", o.pattern, "Substring a credential's name contains.")->capture_default_str();
      add_rootfs_option(b, o.roots);
    },
    [](CheckRun&, const CredOpts& o) -> CheckOutcome {
      std::string dir = o.roots.root(o.dir);
      DIR* d = ::opendir(dir.c_str());
      if (!d) return {ExitCode::WARN, fmt::format("cannot list {}", dir)};
      long long n = 0;
      while (dirent* e = ::readdir(d)) {
        std::string_view name = e->d_name;
        if (name == "." || name == "..") continue;
        if (name.find(o.pattern) != std::string_view::npos) ++n;
      }
      ::closedir(d);
      if (n < o.expected)
        return {ExitCode::CRITICAL, fmt::format("{} credentials matching '{}' in {}, expected at least {}.", n,
                                                o.pattern, o.dir, o.expected)};
      return {ExitCode::OK, fmt::format("{} credentials matching '{}' in {}.", n, o.pattern, o.dir)};
    });

}  // namespace
}  // namespace gcm::health

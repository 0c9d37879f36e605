// health_checks check-authentication: password-status and check-path-access-by-user.
#include <fmt/format.h>

#include "cli/option_binder.h"
#include "health/checks/host_check.h"

namespace gcm::health {
namespace {

const bool kCheckAuthenticationGroupRegistered = register_health_group(
    "check-authentication", "Authentication checks: account password status, path access by a user.");

struct PassOpts {
  std::string user = "root", status = "PS";
  bool sudo = true;
};

const bool kPass = register_simple_check<PassOpts>(
    {"check-authentication", "password-status"},
    "CRITICAL when the status field of `passwd -S USER` (PS: usable password, LK: locked, NP: none) is not "
    "--status.",
    true, "check password status", "disable_pass_status",
    [](OptionBinder& b, PassOpts& o) {
      b.option("-u,--user", "user", o.user, "The account.")->capture_default_str();
      b.option("-s,--status", "status", o.status, "Expected status field.")->capture_default_str();
      b.flag("--sudo,!--no-sudo", "sudo", o.sudo, "Run passwd through sudo when not root (default: on).");
    },
    [](CheckRun& r, const PassOpts& o) -> CheckOutcome {
      auto t = run_tool(maybe_sudo({"passwd", "-S", o.user}, o.sudo), r.timeout_s);
      if (!t.ok()) return {ExitCode::WARN, t.failure()};
      auto f = split_ws(t.out);
      if (f.size() < 2)
        return {ExitCode::WARN, fmt::format("passwd -S printed '{}': expected 'USER STATUS ...'", trim(t.out))};
      if (f[1] == o.status) return {ExitCode::OK, fmt::format("User {}: password status {}.", o.user, f[1])};
      return {ExitCode::CRITICAL, fmt::format("User {}: password status {}, expected {}.", o.user, f[1], o.status)};
    });

struct AccessOpts {
  std::string user = "root", path, operation = "write";
};

const bool kAccess = register_simple_check<AccessOpts>(
    {"check-authentication", "check-path-access-by-user"},
    "CRITICAL when USER cannot read (or write) PATH (`sudo -u USER test -r|-w PATH`).", true, "check path access",
    "disable_user_access_path_check",
    [](OptionBinder& b, AccessOpts& o) {
      b.option("-u,--user", "user", o.user, "The user.")->capture_default_str();
      b.option("-p,--path", "path", o.path, "The path.")->required();
      b.option("-o,--operation", "operation", o.operation,
               "read or write. -o is this option, as in GCM; sink options go by their long name, --sink-opt.")
          ->capture_default_str()
          ->check(CLI::IsMember({"read", "write"}));
    },
    [](CheckRun& r, const AccessOpts& o) -> CheckOutcome {
      std::string flag = o.operation == "read" ? "-r" : "-w";
      auto t = run_tool({"sudo", "-u", o.user, "/usr/bin/test", flag, o.path}, r.timeout_s);
      if (t.ok()) return {ExitCode::OK, fmt::format("User {} can {} {}.", o.user, o.operation, o.path)};
      if (t.missing || t.timed_out) return {ExitCode::CRITICAL, t.failure()};
      return {ExitCode::CRITICAL, fmt::format("User {} cannot {} {}.", o.user, o.operation, o.path)};
    });

}  // namespace
}  // namespace gcm::health

// health_checks check-authentication (password-status, check-path-access-by-user), check-ssh-certs (host keys
// registered in IPA against what the host serves) and check-airstore flash-array-credential-count (kept generic: the
// entries of a directory whose name contains a pattern, against a minimum).
#include <dirent.h>

#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "health/checks/host_check.h"

namespace gcm::health {
namespace {

const bool kGroup = register_health_group("check-authentication",
                                          "Authentication checks: account password status, path access by a user.");
const bool kAirGroup = register_health_group("check-airstore", "Credential store checks.");

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
      if (f.size() < 2) return {ExitCode::WARN, fmt::format("passwd -S printed '{}': expected 'USER STATUS ...'",
                                                            trim(t.out))};
      if (f[1] == o.status) return {ExitCode::OK, fmt::format("User {}: password status {}.", o.user, f[1])};
      return {ExitCode::CRITICAL,
              fmt::format("User {}: password status {}, expected {}.", o.user, f[1], o.status)};
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
      b.option("--operation", "operation", o.operation, "read or write (no -o: that is --sink-opt here).")
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

struct CertOpts {
  std::string host;
};

// The SHA256 fingerprints of `ipa host-show --raw` ("sshpubkeyfp: SHA256:abc (ssh-ed25519)").
std::set<std::string> ipa_fingerprints(const std::string& out) {
  static const std::regex re(R"(\bsshpubkeyfp: (\S+) \()");
  std::set<std::string> v;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it)
    v.insert((*it)[1].str());
  return v;
}

const bool kCerts = register_simple_check<CertOpts>(
    {"check-ssh-certs"},
    "CRITICAL when a host key fingerprint registered in IPA (`ipa host-show --raw HOST`) is not served by the host "
    "(`ssh-keyscan -4 HOST | ssh-keygen -lf -`); UNKNOWN when IPA cannot be asked.",
    true, "check ssh certs", "disable_check_ssh_certs",
    [](OptionBinder& b, CertOpts& o) { b.option("--host", "host", o.host, "The host.")->required(); },
    [](CheckRun& r, const CertOpts& o) -> CheckOutcome {
      auto ipa = run_tool({"ipa", "host-show", "--raw", o.host}, r.timeout_s);
      if (!ipa.ok()) {
        if ((ipa.out + ipa.err).find("host not found") != std::string::npos)
          return {ExitCode::CRITICAL, fmt::format("{}: host not found in IPA.", o.host)};
        return {ExitCode::UNKNOWN, fmt::format("Is IPA down? {}", ipa.failure())};
      }
      auto registered = ipa_fingerprints(ipa.out);
      if (registered.empty()) return {ExitCode::CRITICAL, fmt::format("{}: no ssh key registered in IPA.", o.host)};
      auto scan = run_tool({"ssh-keyscan", "-4", o.host}, r.timeout_s);
      if (!scan.ok()) return {ExitCode::CRITICAL, fmt::format("ssh-keyscan {}: {}", o.host, scan.failure())};
      auto keygen = run_tool({"ssh-keygen", "-lf", "-"}, r.timeout_s, scan.out);
      if (!keygen.ok()) return {ExitCode::CRITICAL, fmt::format("ssh-keygen: {}", keygen.failure())};
      std::set<std::string> served;
      for (const auto& line : split_lines(keygen.out)) {
        auto f = split_ws(line);  // "256 SHA256:xyz host (ED25519)"
        if (f.size() >= 3) served.insert(f[1]);
      }
      std::vector<std::string> missing;
      for (const auto& k : registered)
        if (!served.count(k)) missing.push_back(k);
      if (!missing.empty())
        return {ExitCode::CRITICAL,
                fmt::format("{}/{} certs registered in IPA but not found in {} ssh. Missing: {}", missing.size(),
                            registered.size(), o.host, fmt::join(missing, ", "))};
      return {ExitCode::OK, fmt::format("{} certs registered in IPA and found in {} ssh.", registered.size(), o.host)};
    });

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
        return {ExitCode::CRITICAL,
                fmt::format("{} credentials matching '{}' in {}, expected at least {}.", n, o.pattern, o.dir,
                            o.expected)};
      return {ExitCode::OK, fmt::format("{} credentials matching '{}' in {}.", n, o.pattern, o.dir)};
    });

}  // namespace
}  // namespace gcm::health

// health_checks check-ssh-certs: the host key fingerprints registered in IPA against what the host serves.
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/option_binder.h"
#include "health/checks/host_check.h"

namespace gcm::health {
namespace {

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
        return {ExitCode::CRITICAL, fmt::format("{}/{} certs registered in IPA but not found in {} ssh. Missing: {}",
                                                missing.size(), registered.size(), o.host, fmt::join(missing, ", "))};
      return {ExitCode::OK, fmt::format("{} certs registered in IPA and found in {} ssh.", registered.size(), o.host)};
    });

}  // namespace
}  // namespace gcm::health

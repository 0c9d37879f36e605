// health_checks end to end on a fake host (host_checks_fixture.h): check-authentication, check-ssh-certs and
// check-airstore (one test covers the three).
#include "host_checks_fixture.h"

namespace gcm::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// -------------------------------------------------------------------------- check-authentication, ssh-certs, airstore

TEST(HostChecksAuth, PasswordAccessCertsCredentials) {
  Host h;
  h.tool("passwd",
         "[ \"$2\" = root ] && { echo 'root PS 2024-01-01 0 99999 7 -1 (Password set, SHA512 crypt.)'; "
         "exit 0; }\necho \"$2 LK 2024-01-01 0 99999 7 -1 (Password locked.)\"");
  EXPECT_VERDICT(h.run({"check-authentication", "password-status", "c", "app"}), OK, "User root: password status PS.");
  EXPECT_VERDICT(h.run({"check-authentication", "password-status", "c", "app", "-u", "svc"}), CRIT,
                 "User svc: password status LK, expected PS.");
  h.tool("passwd", "echo 'passwd: user nobody2 does not exist' >&2; exit 3");
  EXPECT_VERDICT(h.run({"check-authentication", "password-status", "c", "app", "-u", "nobody2"}), WARN,
                 "passwd exited with code 3");

  h.write(h.dir + "/readable", "x");
  EXPECT_VERDICT(h.run({"check-authentication", "check-path-access-by-user", "c", "app", "-p", h.dir + "/readable",
                        "--operation", "read"}),
                 OK, "can read");
  EXPECT_VERDICT(h.run({"check-authentication", "check-path-access-by-user", "c", "app", "-p", h.dir + "/absent"}),
                 CRIT, "cannot write");

  h.tool("ipa",
         "[ \"$3\" = node1 ] && { printf '  fqdn: node1\\n  sshpubkeyfp: SHA256:aaa (ssh-ed25519)\\n"
         "  sshpubkeyfp: SHA256:bbb (ecdsa-sha2-nistp256)\\n'; exit 0; }\n"
         "[ \"$3\" = gone ] && { echo 'ipa: ERROR: gone: host not found' >&2; exit 2; }\n"
         "echo 'ipa: ERROR: cannot connect' >&2; exit 1");
  h.tool("ssh-keyscan", "echo \"$2 ssh-ed25519 AAAAC3\"; echo \"$2 ecdsa-sha2-nistp256 AAAAE2\"");
  h.tool("ssh-keygen", "cat >/dev/null; echo '256 SHA256:aaa node1 (ED25519)'; echo '256 SHA256:bbb node1 (ECDSA)'");
  EXPECT_VERDICT(h.run({"check-ssh-certs", "c", "app", "--host", "node1"}), OK,
                 "2 certs registered in IPA and found in node1 ssh.");
  h.tool("ssh-keygen", "cat >/dev/null; echo '256 SHA256:aaa node1 (ED25519)'");
  EXPECT_VERDICT(h.run({"check-ssh-certs", "c", "app", "--host", "node1"}), CRIT,
                 "1/2 certs registered in IPA but not found in node1 ssh. Missing: SHA256:bbb");
  EXPECT_VERDICT(h.run({"check-ssh-certs", "c", "app", "--host", "gone"}), CRIT, "gone: host not found in IPA.");
  EXPECT_VERDICT(h.run({"check-ssh-certs", "c", "app", "--host", "other"}), UNKNOWN, "Is IPA down?");

  for (const char* f : {"bulk-1", "bulk-2", "other"}) h.write(h.root + "/var/airstore/cred/" + f, "k");
  EXPECT_VERDICT(h.run({"check-airstore", "flash-array-credential-count", "c", "app", "--expected-count-ge", "2",
                        "--path.rootfs", h.root}),
                 OK, "2 credentials matching 'bulk'");
  EXPECT_VERDICT(h.run({"check-airstore", "flash-array-credential-count", "c", "app", "--expected-count-ge", "3",
                        "--path.rootfs", h.root}),
                 CRIT, "2 credentials matching 'bulk' in /var/airstore/cred, expected at least 3.");
  EXPECT_VERDICT(h.run({"check-airstore", "flash-array-credential-count", "c", "app", "--expected-count-ge", "1",
                        "--credential-dir", "/nope", "--path.rootfs", h.root}),
                 WARN, "cannot list");
}

}  // namespace
}  // namespace gcm::testing

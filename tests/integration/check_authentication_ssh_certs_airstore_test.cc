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

// GCM's own line (issue 55): the check's -o is --operation, as click resolves GCM's declarations, so `-o read`
// checks read access; a fake sudo records what it was asked to run. Nagios prints the verdict line only.
TEST(HostChecksAuth, GcmsPathAccessLineWithDashOChecksReadAccess) {
  Host h;
  const std::string asked = h.dir + "/sudo-argv", data = h.dir + "/data", absent = h.dir + "/absent";
  h.tool("sudo", "echo \"$*\" >> '" + asked + "'\nwhile [ \"$1\" = -u ]; do shift; shift; done\nexec \"$@\"");
  h.write(data, "x");
  ::chmod(data.c_str(), 0444);  // readable; writable only by root

  auto readable = h.run({"check-authentication", "check-path-access-by-user", "CLUSTER", "nagios", "-p", data, "-o",
                         "read", "--sink", "file", "--sink-opt", "file_path=" + h.dir + "/records.json"});
  EXPECT_EQ(readable.exit_code, OK) << readable.out << readable.err;
  EXPECT_EQ(readable.out, "OK - check path access\n") << readable.err;
  auto unreadable =
      h.run({"check-authentication", "check-path-access-by-user", "CLUSTER", "nagios", "-p", absent, "-o", "read"});
  EXPECT_EQ(unreadable.exit_code, CRIT) << unreadable.out << unreadable.err;
  EXPECT_EQ(unreadable.out, "CRITICAL - check path access\n") << unreadable.err;
  EXPECT_EQ(read_text(asked),
            "-u root /usr/bin/test -r " + data + "\n" + "-u root /usr/bin/test -r " + absent + "\n");
  // --sink-opt keeps its long name: the record went to the file it named.
  json record = json::parse(read_text(h.dir + "/records.json"));
  EXPECT_EQ(record["health_check"], "check path access");
  EXPECT_EQ(record["result"], 0);
  EXPECT_EQ(record["_msg"], "User root can read " + data + ".");

  if (::geteuid() != 0) {  // root reads a file of mode 000; another user cannot
    ::chmod(data.c_str(), 0);
    auto denied =
        h.run({"check-authentication", "check-path-access-by-user", "CLUSTER", "nagios", "-p", data, "-o", "read"});
    EXPECT_EQ(denied.exit_code, CRIT) << denied.out << denied.err;
    ::chmod(data.c_str(), 0644);
  }
  // -o takes read or write only, as in GCM (a sink option there is a usage error, exit 2).
  auto sink_option =
      h.run({"check-authentication", "check-path-access-by-user", "CLUSTER", "nagios", "-p", data, "-o", "a=b"});
  EXPECT_EQ(sink_option.exit_code, 2);
  EXPECT_NE(sink_option.err.find("--operation"), std::string::npos) << sink_option.err;
}

}  // namespace
}  // namespace gcm::testing

// A throw-away PKI for the TLS tests, made with the openssl command (scripts/install-deps.sh): a CA, a server
// certificate for 127.0.0.1/localhost, a client certificate (SAN client.example) signed by the CA, and a second,
// unrelated CA with its own client certificate. EC P-256 keys: generated in milliseconds.
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/subprocess.h"

namespace gcm::testing {

struct TestPki {
  std::string dir, ca_crt, server_crt, server_key, client_crt, client_key, other_client_crt, other_client_key,
      other_ca_crt;
};

inline void openssl_cmd(std::vector<std::string> args) {
  CommandSpec spec;
  spec.argv = {"openssl"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  auto r = run_command(spec);
  if (r.exit_code != 0) {
    std::string line;
    for (const auto& a : spec.argv) line += a + " ";
    throw std::runtime_error("failed: " + line + "\n" + r.err);
  }
}

inline void make_ca(const std::string& dir, const std::string& name) {
  openssl_cmd({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
               dir + "/" + name + ".key", "-out", dir + "/" + name + ".crt", "-days", "2", "-subj",
               "/CN=gcm test " + name});
}

inline void make_leaf(const std::string& dir, const std::string& ca, const std::string& name, const std::string& cn,
                      const std::string& san, const std::string& usage) {
  std::string base = dir + "/" + name;
  openssl_cmd({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", base + ".key",
               "-out", base + ".csr", "-subj", "/CN=" + cn});
  std::ofstream(base + ".ext") << "subjectAltName=" << san << "\nextendedKeyUsage=" << usage << "\n";
  openssl_cmd({"x509", "-req", "-in", base + ".csr", "-CA", dir + "/" + ca + ".crt", "-CAkey", dir + "/" + ca + ".key",
               "-CAcreateserial", "-out", base + ".crt", "-days", "2", "-extfile", base + ".ext"});
}

inline TestPki make_test_pki(const std::string& dir) {
  make_ca(dir, "ca");
  make_ca(dir, "other-ca");
  make_leaf(dir, "ca", "server", "127.0.0.1", "IP:127.0.0.1,DNS:localhost", "serverAuth");
  make_leaf(dir, "ca", "client", "client", "DNS:client.example", "clientAuth");
  make_leaf(dir, "other-ca", "other-client", "intruder", "DNS:client.example", "clientAuth");
  return {dir,
          dir + "/ca.crt",
          dir + "/server.crt",
          dir + "/server.key",
          dir + "/client.crt",
          dir + "/client.key",
          dir + "/other-client.crt",
          dir + "/other-client.key",
          dir + "/other-ca.crt"};
}

// bcrypt hashes (cost 4, so the tests stay fast) made with libxcrypt through Python's crypt module, not by gcm.
inline constexpr const char* kAlicePassword = "wonderland";
inline constexpr const char* kAliceHash = "$2y$04$mppMAGQiP3rFxf.xP1Acv.p/JjiQvtwJvXMaZpctD6pvzAwGXThgW";

}  // namespace gcm::testing

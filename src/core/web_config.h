// The web configuration file of every listener (`--web.config.file`, the prometheus sink's `-o web_config_file=`),
// in the format of Prometheus' exporter-toolkit, so that one file serves node_exporter, Prometheus and gcm alike:
//
//   tls_server_config:
//     cert_file: server.crt          # or cert: <PEM>; paths are relative to this file's directory
//     key_file: server.key           # or key: <PEM>
//     client_auth_type: RequireAndVerifyClientCert   # NoClientCert (default), RequestClientCert,
//                                    # RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert
//     client_ca_file: ca.crt         # or client_ca: <PEM>
//     client_allowed_sans: [node1.example]  # exact DNS/IP/e-mail/URI SANs of the client certificate
//     min_version: TLS12             # TLS10, TLS11, TLS12 (default), TLS13
//     max_version: TLS13
//     curve_preferences: [X25519, CurveP256]
//     prefer_server_cipher_suites: true
//   http_server_config:
//     http2: true                    # accepted; gcm's listener speaks HTTP/1.1
//     headers: {Strict-Transport-Security: max-age=31536000}
//   basic_auth_users:
//     prometheus: $2y$10$...         # bcrypt hashes
//
// As in exporter-toolkit, a key the format does not have is an error naming it; so is one of the format's keys that
// gcm does not implement (cipher_suites: Go's cipher names; rate_limit), rather than a protection silently missing.
// Every error names the file and, where it has one, the line.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gcm {

struct WebConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class ClientAuth {
  NoClientCert,
  RequestClientCert,           // asked for, not verified
  RequireAnyClientCert,        // required, not verified
  VerifyClientCertIfGiven,     // verified when sent
  RequireAndVerifyClientCert,  // required and verified
};
const char* client_auth_name(ClientAuth a);

// 0x0301 (TLS 1.0) ... 0x0304 (TLS 1.3), the protocol's own numbers (as OpenSSL's TLS1_x_VERSION).
struct TlsServerConfig {
  // PEM text, read from the files (or given inline) when the configuration is loaded.
  std::string cert_pem, key_pem, client_ca_pem;
  std::string cert_source, key_source, client_ca_source;  // "FILE" or "inline cert" for messages
  ClientAuth client_auth = ClientAuth::NoClientCert;
  std::vector<std::string> client_allowed_sans;
  int min_version = 0x0303;
  int max_version = 0x0304;
  std::vector<std::string> curves;  // OpenSSL group names, in preference order
  bool prefer_server_ciphers = true;
};

struct WebConfig {
  std::string path;                                     // the file, for messages
  std::optional<TlsServerConfig> tls;                   // absent: plain HTTP (a file with only basic_auth_users)
  std::map<std::string, std::string> basic_auth_users;  // user -> bcrypt hash
  std::vector<std::string> headers;                     // "Name: value" lines added to every answer
  bool empty() const { return !tls && basic_auth_users.empty() && headers.empty(); }
};

// Parses the YAML text of `path` (used in messages; relative file names resolve against `base_dir`). Throws
// WebConfigError "PATH:LINE: what is wrong, what is expected".
WebConfig parse_web_config(const std::string& text, const std::string& path, const std::string& base_dir);
// Reads and parses the file; throws WebConfigError naming it when it cannot be read.
WebConfig load_web_config(const std::string& path);

}  // namespace gcm

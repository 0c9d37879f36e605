#include "core/web_config.h"

#include <yaml.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <sys/stat.h>

#include <fmt/format.h>

namespace gcm {

const char* client_auth_name(ClientAuth a) {
  switch (a) {
    case ClientAuth::NoClientCert:
      return "NoClientCert";
    case ClientAuth::RequestClientCert:
      return "RequestClientCert";
    case ClientAuth::RequireAnyClientCert:
      return "RequireAnyClientCert";
    case ClientAuth::VerifyClientCertIfGiven:
      return "VerifyClientCertIfGiven";
    case ClientAuth::RequireAndVerifyClientCert:
      return "RequireAndVerifyClientCert";
  }
  return "?";
}

namespace {

// A walk over libyaml's document tree that knows the file and reports errors with their line.
class Doc {
 public:
  Doc(const std::string& text, const std::string& path) : path_(path) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()), text.size());
    if (!yaml_parser_load(&parser_, &doc_)) {
      std::string problem = parser_.problem ? parser_.problem : "invalid YAML";
      if (parser_.context) problem = fmt::format("{} {}", parser_.context, problem);
      size_t line = parser_.problem_mark.line + 1;
      yaml_parser_delete(&parser_);
      throw WebConfigError(fmt::format("{}:{}: not valid YAML: {}", path_, line, problem));
    }
    loaded_ = true;
  }
  ~Doc() {
    if (loaded_) {
      yaml_document_delete(&doc_);
      yaml_parser_delete(&parser_);
    }
  }
  Doc(const Doc&) = delete;
  Doc& operator=(const Doc&) = delete;

  yaml_node_t* root() { return yaml_document_get_root_node(&doc_); }
  yaml_node_t* node(int index) { return yaml_document_get_node(&doc_, index); }

  [[noreturn]] void fail(const yaml_node_t* at, const std::string& what) const {
    throw WebConfigError(at ? fmt::format("{}:{}: {}", path_, at->start_mark.line + 1, what)
                            : fmt::format("{}: {}", path_, what));
  }

  static bool is_null(const yaml_node_t* n) {
    if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return false;
    std::string_view v = scalar_view(n);
    return v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL";
  }
  static std::string_view scalar_view(const yaml_node_t* n) {
    return {reinterpret_cast<const char*>(n->data.scalar.value), n->data.scalar.length};
  }

  std::string scalar(const yaml_node_t* n, const std::string& key) const {
    if (is_null(n)) return "";
    if (n->type != YAML_SCALAR_NODE) fail(n, fmt::format("{}: expected a string", key));
    return std::string(scalar_view(n));
  }

  bool boolean(const yaml_node_t* n, const std::string& key) const {
    std::string v = scalar(n, key);
    if (v == "true" || v == "True" || v == "TRUE") return true;
    if (v == "false" || v == "False" || v == "FALSE") return false;
    fail(n, fmt::format("{}: expected true or false, not '{}'", key, v));
  }

  std::vector<std::string> strings(yaml_node_t* n, const std::string& key) {
    std::vector<std::string> out;
    if (is_null(n)) return out;
    if (n->type != YAML_SEQUENCE_NODE) fail(n, fmt::format("{}: expected a list of strings", key));
    for (yaml_node_item_t* i = n->data.sequence.items.start; i < n->data.sequence.items.top; ++i)
      out.push_back(scalar(node(*i), key + " item"));
    return out;
  }

  // Calls `each(key, key node, value node)` for every pair of a mapping, refusing duplicate keys (YAML forbids them;
  // a second tls_server_config silently winning would hide the first).
  void mapping(yaml_node_t* n, const std::string& what,
               const std::function<void(const std::string&, yaml_node_t*, yaml_node_t*)>& each) {
    if (is_null(n)) return;
    if (n->type != YAML_MAPPING_NODE) fail(n, fmt::format("{}: expected a mapping of keys to values", what));
    std::set<std::string> seen;
    for (yaml_node_pair_t* p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; ++p) {
      yaml_node_t* k = node(p->key);
      if (!k || k->type != YAML_SCALAR_NODE) fail(k, fmt::format("{}: keys are strings", what));
      std::string key(scalar_view(k));
      if (!seen.insert(key).second) fail(k, fmt::format("{}: the key '{}' appears twice", what, key));
      each(key, k, node(p->value));
    }
  }

 private:
  std::string path_;
  yaml_parser_t parser_{};
  yaml_document_t doc_{};
  bool loaded_ = false;
};

std::string read_whole(const std::string& path, std::string& error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    error = "is a directory";
    return "";
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = std::strerror(errno);
    return "";
  }
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) error = std::strerror(errno);
  return s.str();
}

int tls_version(const Doc& d, const yaml_node_t* n, const std::string& key, const std::string& v) {
  if (v == "TLS10") return 0x0301;
  if (v == "TLS11") return 0x0302;
  if (v == "TLS12") return 0x0303;
  if (v == "TLS13") return 0x0304;
  d.fail(n, fmt::format("{}: '{}' is not a TLS version (expected TLS10, TLS11, TLS12 or TLS13)", key, v));
}

std::string curve_group(const Doc& d, const yaml_node_t* n, const std::string& v) {
  // Go's names (crypto/tls.CurveID) as exporter-toolkit takes them, into OpenSSL's group names.
  if (v == "CurveP256") return "P-256";
  if (v == "CurveP384") return "P-384";
  if (v == "CurveP521") return "P-521";
  if (v == "X25519") return "X25519";
  d.fail(n, fmt::format("tls_server_config.curve_preferences: '{}' is not a curve (expected CurveP256, CurveP384, "
                        "CurveP521 or X25519)",
                        v));
}

struct PemField {
  std::string inline_pem;
  std::string file;
  const yaml_node_t* inline_at = nullptr;
  const yaml_node_t* file_at = nullptr;
};

// The PEM of a cert/cert_file style pair: inline text, or the file's content (relative to the config's directory).
std::string pem_of(const Doc& d, const PemField& f, const std::string& name, const std::string& base_dir,
                   std::string& source) {
  if (!f.inline_pem.empty() && !f.file.empty())
    d.fail(f.file_at, fmt::format("tls_server_config: {} and {}_file are both set (give one)", name, name));
  if (!f.inline_pem.empty()) {
    source = fmt::format("the inline {} of {}", name, "the web config");
    return f.inline_pem;
  }
  if (f.file.empty()) return "";
  std::string path = f.file.front() == '/' || base_dir.empty() ? f.file : base_dir + "/" + f.file;
  std::string error;
  std::string text = read_whole(path, error);
  if (!error.empty())
    d.fail(f.file_at, fmt::format("tls_server_config.{}_file: cannot read '{}': {}", name, path, error));
  if (text.find("-----BEGIN") == std::string::npos)
    d.fail(f.file_at, fmt::format("tls_server_config.{}_file: '{}' is not PEM (no -----BEGIN line)", name, path));
  source = path;
  return text;
}

void parse_tls(Doc& d, yaml_node_t* n, const std::string& base_dir, WebConfig& out) {
  TlsServerConfig t;
  PemField cert, key, ca;
  std::string auth;
  const yaml_node_t* auth_at = nullptr;
  const yaml_node_t* sans_at = nullptr;
  const yaml_node_t* version_at = nullptr;
  bool any_key = false;
  d.mapping(n, "tls_server_config", [&](const std::string& k, yaml_node_t* kn, yaml_node_t* v) {
    std::string key_name = "tls_server_config." + k;
    any_key = true;
    if (k == "cert")
      cert.inline_pem = d.scalar(v, key_name), cert.inline_at = kn;
    else if (k == "cert_file")
      cert.file = d.scalar(v, key_name), cert.file_at = kn;
    else if (k == "key")
      key.inline_pem = d.scalar(v, key_name), key.inline_at = kn;
    else if (k == "key_file")
      key.file = d.scalar(v, key_name), key.file_at = kn;
    else if (k == "client_ca")
      ca.inline_pem = d.scalar(v, key_name), ca.inline_at = kn;
    else if (k == "client_ca_file")
      ca.file = d.scalar(v, key_name), ca.file_at = kn;
    else if (k == "client_auth_type")
      auth = d.scalar(v, key_name), auth_at = kn;
    else if (k == "client_allowed_sans")
      t.client_allowed_sans = d.strings(v, key_name), sans_at = kn;
    else if (k == "min_version") {
      std::string s = d.scalar(v, key_name);
      if (!s.empty()) t.min_version = tls_version(d, kn, key_name, s);
      version_at = kn;
    } else if (k == "max_version") {
      std::string s = d.scalar(v, key_name);
      if (!s.empty()) t.max_version = tls_version(d, kn, key_name, s);
      version_at = kn;
    } else if (k == "curve_preferences") {
      for (const auto& c : d.strings(v, key_name)) t.curves.push_back(curve_group(d, kn, c));
    } else if (k == "prefer_server_cipher_suites") {
      t.prefer_server_ciphers = d.boolean(v, key_name);
    } else if (k == "cipher_suites") {
      // Go's cipher suite names have no exact OpenSSL counterpart for every entry; silently using others would be
      // worse than saying so.
      if (!d.strings(v, key_name).empty())
        d.fail(kn,
               "tls_server_config.cipher_suites is not supported by gcm (OpenSSL's default TLS 1.2 suites are "
               "used; TLS 1.3 suites are not configurable in exporter-toolkit either): remove it");
    } else {
      d.fail(kn, fmt::format("tls_server_config: unknown key '{}' (expected cert, cert_file, key, key_file, "
                             "client_ca, client_ca_file, client_auth_type, client_allowed_sans, min_version, "
                             "max_version, cipher_suites, prefer_server_cipher_suites, curve_preferences)",
                             k));
    }
  });
  if (!any_key) return;
  t.cert_pem = pem_of(d, cert, "cert", base_dir, t.cert_source);
  t.key_pem = pem_of(d, key, "key", base_dir, t.key_source);
  t.client_ca_pem = pem_of(d, ca, "client_ca", base_dir, t.client_ca_source);
  if (t.cert_pem.empty() && t.key_pem.empty()) {
    // exporter-toolkit serves plain HTTP when no certificate is configured; client settings without one are a
    // mistake worth reporting.
    if (!t.client_ca_pem.empty() || !auth.empty())
      d.fail(n, "tls_server_config: client certificate settings without cert_file and key_file");
    return;
  }
  if (t.cert_pem.empty()) d.fail(n, "tls_server_config: key_file is set but cert_file (or cert) is missing");
  if (t.key_pem.empty()) d.fail(n, "tls_server_config: cert_file is set but key_file (or key) is missing");
  if (auth.empty()) {
    t.client_auth = t.client_ca_pem.empty() ? ClientAuth::NoClientCert : ClientAuth::RequireAndVerifyClientCert;
  } else {
    bool known = false;
    for (ClientAuth a : {ClientAuth::NoClientCert, ClientAuth::RequestClientCert, ClientAuth::RequireAnyClientCert,
                         ClientAuth::VerifyClientCertIfGiven, ClientAuth::RequireAndVerifyClientCert})
      if (auth == client_auth_name(a)) t.client_auth = a, known = true;
    if (!known)
      d.fail(auth_at, fmt::format("tls_server_config.client_auth_type: '{}' is not one of NoClientCert, "
                                  "RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, "
                                  "RequireAndVerifyClientCert",
                                  auth));
  }
  bool verifies =
      t.client_auth == ClientAuth::VerifyClientCertIfGiven || t.client_auth == ClientAuth::RequireAndVerifyClientCert;
  if (verifies && t.client_ca_pem.empty())
    d.fail(auth_at, fmt::format("tls_server_config.client_auth_type {} needs client_ca_file (the CA that signs the "
                                "clients' certificates)",
                                client_auth_name(t.client_auth)));
  if (!t.client_ca_pem.empty() && t.client_auth == ClientAuth::NoClientCert)
    d.fail(auth_at,
           "tls_server_config: client_ca_file is set but client_auth_type is NoClientCert (no client "
           "certificate would be asked for)");
  if (!t.client_allowed_sans.empty() && t.client_auth != ClientAuth::RequireAnyClientCert &&
      t.client_auth != ClientAuth::RequireAndVerifyClientCert)
    d.fail(sans_at,
           "tls_server_config.client_allowed_sans needs client_auth_type RequireAnyClientCert or "
           "RequireAndVerifyClientCert (else a client could connect without a certificate to match)");
  if (t.min_version > t.max_version) d.fail(version_at, "tls_server_config: min_version is above max_version");
  out.tls = std::move(t);
}

void parse_http_server(Doc& d, yaml_node_t* n, WebConfig& out) {
  d.mapping(n, "http_server_config", [&](const std::string& k, yaml_node_t* kn, yaml_node_t* v) {
    if (k == "http2") {
      d.boolean(v, "http_server_config.http2");  // gcm's listener speaks HTTP/1.1 only; the value changes nothing
    } else if (k == "headers") {
      d.mapping(v, "http_server_config.headers", [&](const std::string& name, yaml_node_t* hn, yaml_node_t* hv) {
        static const std::set<std::string> allowed = {"Content-Security-Policy", "X-Frame-Options",
                                                      "X-Content-Type-Options", "X-XSS-Protection",
                                                      "Strict-Transport-Security"};
        if (!allowed.count(name))
          d.fail(hn, fmt::format("http_server_config.headers: '{}' is not one of Content-Security-Policy, "
                                 "X-Frame-Options, X-Content-Type-Options, X-XSS-Protection, "
                                 "Strict-Transport-Security",
                                 name));
        std::string value = d.scalar(hv, "http_server_config.headers." + name);
        if (value.find_first_of("\r\n") != std::string::npos)
          d.fail(hn, fmt::format("http_server_config.headers.{}: a header value is one line", name));
        if (name == "X-Frame-Options" && !value.empty() && value != "deny" && value != "sameorigin" &&
            value != "DENY" && value != "SAMEORIGIN")
          d.fail(hn, "http_server_config.headers.X-Frame-Options: expected deny or sameorigin");
        if (name == "X-Content-Type-Options" && !value.empty() && value != "nosniff")
          d.fail(hn, "http_server_config.headers.X-Content-Type-Options: expected nosniff");
        if (!value.empty()) out.headers.push_back(name + ": " + value);
      });
    } else {
      d.fail(kn, fmt::format("http_server_config: unknown key '{}' (expected http2, headers)", k));
    }
  });
}

void parse_users(Doc& d, yaml_node_t* n, WebConfig& out) {
  d.mapping(n, "basic_auth_users", [&](const std::string& user, yaml_node_t* kn, yaml_node_t* v) {
    if (user.empty() || user.find(':') != std::string::npos)
      d.fail(kn, fmt::format("basic_auth_users: '{}' cannot be a Basic user name (empty, or contains ':')", user));
    std::string hash = d.scalar(v, "basic_auth_users." + user);
    // Only bcrypt, as exporter-toolkit: a plain text password here is a mistake to report, not to accept.
    if (!(hash.starts_with("$2a$") || hash.starts_with("$2b$") || hash.starts_with("$2y$")) || hash.size() != 60)
      d.fail(kn, fmt::format("basic_auth_users.{}: expected a bcrypt hash ($2a$, $2b$ or $2y$, 60 characters, e.g. "
                             "from `htpasswd -nBC 10 \"\" | tr -d ':\\n'`)",
                             user));
    out.basic_auth_users[user] = hash;
  });
}

}  // namespace

WebConfig parse_web_config(const std::string& text, const std::string& path, const std::string& base_dir) {
  WebConfig out;
  out.path = path;
  Doc d(text, path);
  yaml_node_t* root = d.root();
  if (!root || Doc::is_null(root)) return out;  // an empty file: plain HTTP, no authentication
  d.mapping(root, "the web config", [&](const std::string& k, yaml_node_t* kn, yaml_node_t* v) {
    if (k == "tls_server_config")
      parse_tls(d, v, base_dir, out);
    else if (k == "http_server_config")
      parse_http_server(d, v, out);
    else if (k == "basic_auth_users")
      parse_users(d, v, out);
    else if (k == "rate_limit")
      d.fail(kn,
             "rate_limit is not supported by gcm (the listener bounds connections and per-request time "
             "instead): remove it");
    else
      d.fail(kn, fmt::format("unknown key '{}' (expected tls_server_config, http_server_config, basic_auth_users)", k));
  });
  return out;
}

WebConfig load_web_config(const std::string& path) {
  std::string error;
  std::string text = read_whole(path, error);
  if (!error.empty()) throw WebConfigError(fmt::format("cannot read the web config '{}': {}", path, error));
  size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  return parse_web_config(text, path, base);
}

}  // namespace gcm

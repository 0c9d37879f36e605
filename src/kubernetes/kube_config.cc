#include "kubernetes/kube_config.h"

#include <yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gcm::kube {

namespace {

std::string read_kube_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw KubeConfigError(fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string strip_trailing_space(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

// A kubeconfig document as JSON (every scalar a string; kubeconfig has no other scalars that matter here). Nesting
// is bounded so that a hostile file cannot exhaust the stack.
class KubeYaml {
 public:
  KubeYaml(const std::string& text, const std::string& path) : path_(path) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()), text.size());
    if (!yaml_parser_load(&parser_, &doc_)) {
      std::string why = fmt::format("{}: not YAML: {} at line {}", path, parser_.problem ? parser_.problem : "error",
                                    parser_.problem_mark.line + 1);
      yaml_parser_delete(&parser_);
      throw KubeConfigError(why);
    }
    loaded_ = true;
  }
  ~KubeYaml() {
    if (loaded_) yaml_document_delete(&doc_);
    yaml_parser_delete(&parser_);
  }
  KubeYaml(const KubeYaml&) = delete;
  KubeYaml& operator=(const KubeYaml&) = delete;

  nlohmann::json root() {
    yaml_node_t* r = yaml_document_get_root_node(&doc_);
    return r ? convert(r, 0) : nlohmann::json::object();
  }

 private:
  nlohmann::json convert(yaml_node_t* n, int depth) {
    if (depth > 32) throw KubeConfigError(fmt::format("{}: nested deeper than 32 levels", path_));
    switch (n->type) {
      case YAML_SCALAR_NODE: {
        std::string v(reinterpret_cast<const char*>(n->data.scalar.value), n->data.scalar.length);
        bool plain = n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        if (plain && (v.empty() || v == "~" || v == "null")) return nullptr;
        return v;
      }
      case YAML_SEQUENCE_NODE: {
        nlohmann::json a = nlohmann::json::array();
        for (yaml_node_item_t* i = n->data.sequence.items.start; i < n->data.sequence.items.top; ++i)
          a.push_back(convert(yaml_document_get_node(&doc_, *i), depth + 1));
        return a;
      }
      case YAML_MAPPING_NODE: {
        nlohmann::json o = nlohmann::json::object();
        for (yaml_node_pair_t* p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; ++p) {
          yaml_node_t* k = yaml_document_get_node(&doc_, p->key);
          if (!k || k->type != YAML_SCALAR_NODE)
            throw KubeConfigError(
                fmt::format("{}: line {}: a mapping key that is not a string", path_, k ? k->start_mark.line + 1 : 0));
          std::string key(reinterpret_cast<const char*>(k->data.scalar.value), k->data.scalar.length);
          o[key] = convert(yaml_document_get_node(&doc_, p->value), depth + 1);
        }
        return o;
      }
      default:
        return nullptr;
    }
  }

  std::string path_;
  yaml_parser_t parser_{};
  yaml_document_t doc_{};
  bool loaded_ = false;
};

std::string str_at(const nlohmann::json& o, const char* key) {
  if (!o.is_object()) return "";
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

// The entry of a kubeconfig list (clusters, users, contexts) named `name`: its inner object (cluster, user, context).
const nlohmann::json& named_entry(const nlohmann::json& cfg, const char* list, const char* inner,
                                  const std::string& name, const std::string& path) {
  auto it = cfg.find(list);
  if (it != cfg.end() && it->is_array())
    for (const auto& e : *it)
      if (str_at(e, "name") == name && e.contains(inner) && e[inner].is_object()) return e[inner];
  throw KubeConfigError(fmt::format("{}: no {} named '{}' in its {} list", path, inner, name, list));
}

std::string resolve(const std::string& file, const std::string& base_dir) {
  if (file.empty() || std::filesystem::path(file).is_absolute() || base_dir.empty()) return file;
  return (std::filesystem::path(base_dir) / file).string();
}

}  // namespace

// Written here: the project links no base64 decoder (libcrypto is loaded at run time only for TLS servers), and
// the *-data fields are the only base64 the project reads.
std::string base64_decode(const std::string& text, const std::string& what) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
    int v = value(c);
    if (v < 0) throw KubeConfigError(fmt::format("{} is not base64 (character '{}')", what, c));
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

Connection in_cluster_connection(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port)
    throw KubeConfigError(
        "not running in a Kubernetes pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (give "
        "--no-in-cluster and a kubeconfig)");
  Connection c;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // an IPv6 service address
  c.server = fmt::format("https://{}:{}", h, port);
  c.token_file = sa_dir + "/token";
  std::error_code ec;
  if (!std::filesystem::exists(c.token_file, ec))
    throw KubeConfigError(
        fmt::format("no service-account token at {} (automountServiceAccountToken: false?)", c.token_file));
  c.tls.ca_file = sa_dir + "/ca.crt";
  if (!std::filesystem::exists(c.tls.ca_file, ec))
    throw KubeConfigError(fmt::format("no service-account CA at {}", c.tls.ca_file));
  std::ifstream ns(sa_dir + "/namespace");
  if (ns) std::getline(ns, c.namespace_);
  c.origin = "in-cluster service account";
  return c;
}

std::string default_kubeconfig_path() {
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    std::string list = env;
    return list.substr(0, list.find(':'));
  }
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/root") + "/.kube/config";
}

Connection parse_kubeconfig(const std::string& text, const std::string& path, const std::string& base_dir,
                            const std::string& context) {
  nlohmann::json cfg = KubeYaml(text, path).root();
  if (!cfg.is_object()) throw KubeConfigError(fmt::format("{}: not a kubeconfig (expected a mapping)", path));
  std::string ctx_name = context.empty() ? str_at(cfg, "current-context") : context;
  if (ctx_name.empty())
    throw KubeConfigError(fmt::format("{}: no current-context (name one with --kubeconfig-context)", path));
  const nlohmann::json& ctx = named_entry(cfg, "contexts", "context", ctx_name, path);
  std::string cluster_name = str_at(ctx, "cluster"), user_name = str_at(ctx, "user");
  if (cluster_name.empty()) throw KubeConfigError(fmt::format("{}: context '{}' names no cluster", path, ctx_name));
  const nlohmann::json& cluster = named_entry(cfg, "clusters", "cluster", cluster_name, path);
  Connection c;
  c.origin = fmt::format("kubeconfig {} context {}", path, ctx_name);
  c.namespace_ = str_at(ctx, "namespace");
  c.server = str_at(cluster, "server");
  if (c.server.empty()) throw KubeConfigError(fmt::format("{}: cluster '{}' has no server", path, cluster_name));
  while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
  if (!c.server.starts_with("https://") && !c.server.starts_with("http://"))
    throw KubeConfigError(
        fmt::format("{}: cluster '{}' server '{}' is not an http(s) URL", path, cluster_name, c.server));
  c.tls.ca_file = resolve(str_at(cluster, "certificate-authority"), base_dir);
  if (std::string d = str_at(cluster, "certificate-authority-data"); !d.empty())
    c.tls.ca_pem = base64_decode(d, path + ": certificate-authority-data");
  std::string insecure = str_at(cluster, "insecure-skip-tls-verify");
  if (insecure == "true") c.tls.verify = false;
  if (user_name.empty()) return c;
  const nlohmann::json& user = named_entry(cfg, "users", "user", user_name, path);
  for (const char* plugin : {"exec", "auth-provider"})
    if (user.contains(plugin) && !user[plugin].is_null())
      throw KubeConfigError(fmt::format(
          "{}: user '{}' authenticates with {}, which gcm does not run; use a token, tokenFile or client certificate",
          path, user_name, plugin));
  c.token = str_at(user, "token");
  c.token_file = resolve(str_at(user, "tokenFile"), base_dir);
  c.tls.cert_file = resolve(str_at(user, "client-certificate"), base_dir);
  c.tls.key_file = resolve(str_at(user, "client-key"), base_dir);
  if (std::string d = str_at(user, "client-certificate-data"); !d.empty())
    c.tls.cert_pem = base64_decode(d, path + ": client-certificate-data");
  if (std::string d = str_at(user, "client-key-data"); !d.empty())
    c.tls.key_pem = base64_decode(d, path + ": client-key-data");
  if (!str_at(user, "username").empty() && c.token.empty() && c.token_file.empty())
    throw KubeConfigError(
        fmt::format("{}: user '{}' has a username/password, which the API server no longer accepts", path, user_name));
  return c;
}

Connection kubeconfig_connection(const std::string& path, const std::string& context) {
  std::string p = path.empty() ? default_kubeconfig_path() : path;
  std::string text = read_kube_file(p, "the kubeconfig");
  return parse_kubeconfig(text, p, std::filesystem::path(p).parent_path().string(), context);
}

// For the API client: the token to send now.
std::string current_token(const Connection& c) {
  if (!c.token.empty()) return c.token;
  if (c.token_file.empty()) return "";
  return strip_trailing_space(read_kube_file(c.token_file, "the token file"));
}

}  // namespace gcm::kube

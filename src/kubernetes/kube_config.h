// Where the Kubernetes API server is and how to authenticate to it: in a pod, the service account's token and CA
// (what client-go's rest.InClusterConfig reads); elsewhere a kubeconfig file (its current context, or a named one).
// Both come out as the same Connection, so the API client (kubernetes/api_client.h) does not know which it has.
#pragma once

#include <stdexcept>
#include <string>

#include "core/http_client.h"

namespace gcm::kube {

struct KubeConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Connection {
  std::string server;      // https://host:port, no trailing '/'
  HttpClientTls tls;       // the CA (file or inline PEM), a client certificate for x509 users
  std::string token;       // a bearer token given inline ("" for none)
  std::string token_file;  // a token read again before each request (projected service-account tokens rotate)
  std::string origin;      // for messages: "in-cluster service account" or "kubeconfig <path> context <name>"
  std::string namespace_;  // the service account's (in-cluster) or the context's namespace; "" when none
};

inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

// $KUBERNETES_SERVICE_HOST and _PORT with <sa_dir>/token, ca.crt and namespace. Throws KubeConfigError naming what
// is missing (not in a pod, no token mounted).
Connection in_cluster_connection(const std::string& sa_dir = kServiceAccountDir);

// The kubeconfig at `path` ("" for $KUBECONFIG's first file, else ~/.kube/config); `context` "" for its
// current-context. Supports the cluster's server, certificate-authority(-data), insecure-skip-tls-verify and the
// user's token, tokenFile, client-certificate(-data) and client-key(-data); an exec or auth-provider user is an
// error naming it (no plug-in is run). Throws KubeConfigError naming the file and what is wrong.
Connection kubeconfig_connection(const std::string& path, const std::string& context = "");
// The same from the file's text (tests); relative paths are resolved against base_dir.
Connection parse_kubeconfig(const std::string& text, const std::string& path, const std::string& base_dir,
                            const std::string& context);

// The bearer token to send now: the inline one, else the token file read again (a rotated token is picked up);
// "" when the connection authenticates otherwise. Throws KubeConfigError when the file cannot be read.
std::string current_token(const Connection& c);

// The path kubeconfig_connection("") reads.
std::string default_kubeconfig_path();

// RFC 4648 base64 (the *-data fields); throws KubeConfigError naming `what` on a character outside the alphabet.
std::string base64_decode(const std::string& text, const std::string& what);

}  // namespace gcm::kube

// Server-side TLS for the HTTP listener, with OpenSSL 3 loaded at run time.
//
// libssl.so.3 is opened with dlopen the first time a web config enables TLS (or basic authentication, whose cache
// hashes with libcrypto's SHA-256), never at start-up: linked, libssl and libcrypto (about 5,000 exported symbols)
// would be loaded and relocated at the start of every gcm and health_checks process, nearly all of which never
// listen. Only <openssl/*.h> types and constants are used here; every call goes through the loaded table. Loaded
// this way, the system's libssl3 (and its security updates) is what runs, as with libcurl (core/http_client.cc).
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/web_config.h"

namespace gcm {

struct TlsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class TlsStatus {
  Done,       // the operation completed (bytes moved: see `n`)
  WantRead,   // retry once the socket is readable
  WantWrite,  // retry once the socket is writable
  Closed,     // the peer closed the TLS session (close_notify) or the connection
  Failed,     // a protocol or verification failure: close the connection
};

class TlsSession {
 public:
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;
  // Drives the server handshake; after Done, the client certificate (when asked for) is checked against
  // client_allowed_sans.
  TlsStatus handshake();
  TlsStatus read(char* buf, size_t cap, size_t& n);
  TlsStatus write(const char* buf, size_t len, size_t& n);
  // Decrypted bytes held inside OpenSSL that epoll cannot report (the socket may be empty).
  bool pending() const;
  // Sends close_notify when the handshake completed (best effort, never blocks).
  void shutdown();
  bool established() const { return established_; }
  const std::string& error() const { return error_; }

 private:
  friend class TlsServerContext;
  TlsSession(void* ssl, const std::vector<std::string>* allowed_sans) : ssl_(ssl), allowed_sans_(allowed_sans) {}
  TlsStatus status_of(int ret);
  bool sans_allowed();
  void* ssl_;
  const std::vector<std::string>* allowed_sans_;
  bool established_ = false;
  std::string error_;
};

class TlsServerContext {
 public:
  // Loads OpenSSL and builds the server context: certificate chain, key (checked against the certificate), client
  // CA, verification mode, protocol versions, curves. Throws TlsError "<config>: what is wrong".
  static std::shared_ptr<TlsServerContext> create(const TlsServerConfig& cfg, const std::string& config_path);
  ~TlsServerContext();
  TlsServerContext(const TlsServerContext&) = delete;
  TlsServerContext& operator=(const TlsServerContext&) = delete;
  // A server session on the (non-blocking) socket; throws TlsError when OpenSSL cannot make one.
  std::unique_ptr<TlsSession> session(int fd) const;

 private:
  TlsServerContext() = default;
  void* ctx_ = nullptr;
  std::vector<std::string> allowed_sans_;
};

// SHA-256 of `data` (libcrypto, loaded as above). Throws TlsError when OpenSSL cannot be loaded.
std::string sha256(const std::string& data);
// Equal contents, in a time that depends on the length only.
bool constant_time_equal(const std::string& a, const std::string& b);

}  // namespace gcm

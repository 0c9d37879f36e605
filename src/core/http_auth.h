// Authentication of HTTP requests and gRPC calls: HTTP Basic with bcrypt hashes (exporter-toolkit's
// basic_auth_users) and/or a bearer token (as the OpenTelemetry Collector's bearertokenauth extension).
//
// bcrypt is slow on purpose (50-100 ms at cost 10), so a check is split: quick() answers without hashing what it can
// (a bearer token, a password verified before, a header that cannot be right), and only the rest needs verify(),
// which runs on a handler thread, never on the listener's I/O thread. Successful verifications are cached, keyed by
// a salted SHA-256 of the user and password and compared in constant time, so a Prometheus scraping every 15 s pays
// for bcrypt once. Failures are never cached, and the cache holds at most kPerUser entries per configured user, so
// no sequence of requests can grow it.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace gcm {

class HttpAuth {
 public:
  static constexpr size_t kPerUser = 4;
  enum class Verdict { Allowed, Denied, NeedsVerify };

  // users: name -> bcrypt hash; bearer_token: "" for none. Loads libcrypt (bcrypt) and libcrypto (the cache's hash)
  // when there are users; throws std::runtime_error when they cannot be loaded.
  HttpAuth(std::map<std::string, std::string> users, std::string bearer_token);

  bool enabled() const { return !users_.empty() || !bearer_.empty(); }
  // From the Authorization header's value ("" when absent), without bcrypt.
  Verdict quick(std::string_view authorization) const;
  // The full check: quick(), then bcrypt for a Basic password not verified before (cached when it matches).
  bool verify(std::string_view authorization);
  // "WWW-Authenticate: ...\r\n" lines for a 401.
  std::string challenge() const;

 private:
  struct Basic {
    std::string user, password;
  };
  static bool parse_basic(std::string_view authorization, Basic& out);
  std::string cache_key(const Basic& b) const;
  bool cached(const std::string& user, const std::string& key) const;

  std::map<std::string, std::string> users_;
  std::string bearer_;
  std::string salt_;
  mutable std::mutex mu_;
  std::map<std::string, std::vector<std::string>> cache_;  // user -> keys of passwords verified, newest last
};

// bcrypt through libxcrypt's crypt_rn (libcrypt.so.1, loaded on first use): true when `password` matches `hash`
// ($2a$, $2b$, $2y$). Throws std::runtime_error when libcrypt cannot be loaded.
bool bcrypt_matches(const std::string& password, const std::string& hash);

}  // namespace gcm

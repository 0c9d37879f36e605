#include "core/http_auth.h"

#include <crypt.h>
#include <dlfcn.h>
#include <sys/random.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "core/tls.h"

namespace gcm {

namespace {

using CryptRn = decltype(&::crypt_rn);

CryptRn crypt_fn() {
  // Loaded, not linked: libcrypt.so.1 is tiny, but every gcm process but an authenticating listener would load it.
  static CryptRn fn = [] {
    void* h = ::dlopen("libcrypt.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) throw std::runtime_error(fmt::format("cannot load libcrypt.so.1 (install libcrypt1): {}", ::dlerror()));
    auto p = reinterpret_cast<CryptRn>(::dlsym(h, "crypt_rn"));
    if (!p) throw std::runtime_error("libcrypt.so.1 lacks crypt_rn");
    return p;
  }();
  return fn;
}

bool iequal_prefix(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Standard base64 with padding (RFC 7617 uses it for the credentials); false for anything else.
bool base64_decode(std::string_view in, std::string& out) {
  if (in.size() % 4 != 0) return false;
  out.clear();
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      char c = in[i + j];
      if (c == '=' && i + 4 == in.size() && j >= 2) {
        v[j] = 0;
        ++pad;
      } else {
        if (pad) return false;
        v[j] = b64_value(c);
        if (v[j] < 0) return false;
      }
    }
    uint32_t n = (static_cast<uint32_t>(v[0]) << 18) | (static_cast<uint32_t>(v[1]) << 12) |
                 (static_cast<uint32_t>(v[2]) << 6) | static_cast<uint32_t>(v[3]);
    out.push_back(static_cast<char>(n >> 16));
    if (pad < 2) out.push_back(static_cast<char>((n >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(n & 0xff));
  }
  return true;
}

}  // namespace

bool bcrypt_matches(const std::string& password, const std::string& hash) {
  auto data = std::make_unique<crypt_data>();  // 32 KiB: not on a handler thread's stack
  std::memset(data.get(), 0, sizeof *data);
  const char* out = crypt_fn()(password.c_str(), hash.c_str(), data.get(), static_cast<int>(sizeof *data));
  // A failed crypt_rn returns NULL (or, in some versions, a string starting with '*'); neither equals a hash.
  return out && constant_time_equal(out, hash);
}

HttpAuth::HttpAuth(std::map<std::string, std::string> users, std::string bearer_token)
    : users_(std::move(users)), bearer_(std::move(bearer_token)) {
  if (users_.empty()) return;
  crypt_fn();
  char salt[32];
  if (::getrandom(salt, sizeof salt, 0) != static_cast<ssize_t>(sizeof salt))
    throw std::runtime_error("getrandom failed: cannot salt the password cache");
  salt_.assign(salt, sizeof salt);
  sha256(salt_);  // loads libcrypto now, so a bad installation fails at start-up
}

bool HttpAuth::parse_basic(std::string_view authorization, Basic& out) {
  if (!iequal_prefix(authorization, "basic ")) return false;
  std::string_view b64 = authorization.substr(6);
  while (!b64.empty() && b64.front() == ' ') b64.remove_prefix(1);
  while (!b64.empty() && b64.back() == ' ') b64.remove_suffix(1);
  std::string decoded;
  if (!base64_decode(b64, decoded)) return false;
  size_t colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  out.user = decoded.substr(0, colon);
  out.password = decoded.substr(colon + 1);
  return true;
}

std::string HttpAuth::cache_key(const Basic& b) const {
  std::string material = salt_;
  material += b.user;
  material.push_back('\0');
  material += b.password;
  return sha256(material);
}

bool HttpAuth::cached(const std::string& user, const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = cache_.find(user);
  if (it == cache_.end()) return false;
  bool hit = false;
  for (const auto& k : it->second) hit = constant_time_equal(k, key) || hit;  // every entry compared
  return hit;
}

HttpAuth::Verdict HttpAuth::quick(std::string_view authorization) const {
  if (!enabled()) return Verdict::Allowed;
  if (!bearer_.empty() && iequal_prefix(authorization, "bearer ")) {
    std::string_view token = authorization.substr(7);
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
    return constant_time_equal(std::string(token), bearer_) ? Verdict::Allowed : Verdict::Denied;
  }
  Basic b;
  if (users_.empty() || !parse_basic(authorization, b)) return Verdict::Denied;
  if (users_.count(b.user) && cached(b.user, cache_key(b))) return Verdict::Allowed;
  return Verdict::NeedsVerify;
}

bool HttpAuth::verify(std::string_view authorization) {
  Verdict v = quick(authorization);
  if (v != Verdict::NeedsVerify) return v == Verdict::Allowed;
  Basic b;
  parse_basic(authorization, b);
  auto it = users_.find(b.user);
  if (it == users_.end()) {
    // The same bcrypt work as for a known user, so the time of a refusal does not tell which user names exist.
    bcrypt_matches(b.password, users_.begin()->second);
    return false;
  }
  if (!bcrypt_matches(b.password, it->second)) return false;
  std::string key = cache_key(b);
  std::lock_guard lock(mu_);
  auto& keys = cache_[b.user];
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
    // bcrypt reads 72 bytes of a password at most, so a user may have several "right" passwords: bounded.
    if (keys.size() >= kPerUser) keys.erase(keys.begin());
    keys.push_back(std::move(key));
  }
  return true;
}

std::string HttpAuth::challenge() const {
  std::string out;
  if (!users_.empty()) out += "WWW-Authenticate: Basic realm=\"gcm\", charset=\"UTF-8\"\r\n";
  if (!bearer_.empty()) out += "WWW-Authenticate: Bearer realm=\"gcm\"\r\n";
  return out;
}

}  // namespace gcm

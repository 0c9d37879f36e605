#include "core/tls.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <mutex>

#include <fmt/format.h>

namespace gcm {

namespace {

// The OpenSSL functions the listener uses, from libssl.so.3 and (through it) libcrypto.so.3.
struct OpenSsl {
#define GCM_SSL_FN(name) decltype(&::name) name = nullptr
  GCM_SSL_FN(TLS_server_method);
  GCM_SSL_FN(SSL_CTX_new);
  GCM_SSL_FN(SSL_CTX_free);
  GCM_SSL_FN(SSL_CTX_ctrl);
  GCM_SSL_FN(SSL_CTX_set_options);
  GCM_SSL_FN(SSL_CTX_use_certificate);
  GCM_SSL_FN(SSL_CTX_use_PrivateKey);
  GCM_SSL_FN(SSL_CTX_check_private_key);
  GCM_SSL_FN(SSL_CTX_set_verify);
  GCM_SSL_FN(SSL_CTX_get_cert_store);
  GCM_SSL_FN(SSL_CTX_add_client_CA);
  GCM_SSL_FN(SSL_new);
  GCM_SSL_FN(SSL_free);
  GCM_SSL_FN(SSL_set_fd);
  GCM_SSL_FN(SSL_set_accept_state);
  GCM_SSL_FN(SSL_do_handshake);
  GCM_SSL_FN(SSL_read_ex);
  GCM_SSL_FN(SSL_write_ex);
  GCM_SSL_FN(SSL_get_error);
  GCM_SSL_FN(SSL_pending);
  GCM_SSL_FN(SSL_shutdown);
  GCM_SSL_FN(SSL_get1_peer_certificate);
  GCM_SSL_FN(BIO_new_mem_buf);
  GCM_SSL_FN(BIO_free);
  GCM_SSL_FN(PEM_read_bio_X509);
  GCM_SSL_FN(PEM_read_bio_PrivateKey);
  GCM_SSL_FN(X509_free);
  GCM_SSL_FN(EVP_PKEY_free);
  GCM_SSL_FN(X509_STORE_add_cert);
  GCM_SSL_FN(X509_get_ext_d2i);
  GCM_SSL_FN(GENERAL_NAMES_free);
  GCM_SSL_FN(OPENSSL_sk_num);
  GCM_SSL_FN(OPENSSL_sk_value);
  GCM_SSL_FN(ASN1_STRING_get0_data);
  GCM_SSL_FN(ASN1_STRING_length);
  GCM_SSL_FN(ERR_get_error);
  GCM_SSL_FN(ERR_peek_last_error);
  GCM_SSL_FN(ERR_error_string_n);
  GCM_SSL_FN(ERR_clear_error);
  GCM_SSL_FN(EVP_Digest);
  GCM_SSL_FN(EVP_sha256);
#undef GCM_SSL_FN
};

const OpenSsl& ssl() {
  static std::once_flag once;
  static OpenSsl api;
  static std::string failure;
  std::call_once(once, [] {
    void* h = ::dlopen("libssl.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      failure = fmt::format("cannot load libssl.so.3 (install libssl3): {}", ::dlerror());
      return;
    }
    bool ok = true;
    auto sym = [&](auto& fn, const char* name) {
      void* p = ::dlsym(h, name);
      if (!p && ok) failure = fmt::format("libssl.so.3 lacks {}", name), ok = false;
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
#define GCM_SSL_SYM(name) sym(api.name, #name)
    GCM_SSL_SYM(TLS_server_method);
    GCM_SSL_SYM(SSL_CTX_new);
    GCM_SSL_SYM(SSL_CTX_free);
    GCM_SSL_SYM(SSL_CTX_ctrl);
    GCM_SSL_SYM(SSL_CTX_set_options);
    GCM_SSL_SYM(SSL_CTX_use_certificate);
    GCM_SSL_SYM(SSL_CTX_use_PrivateKey);
    GCM_SSL_SYM(SSL_CTX_check_private_key);
    GCM_SSL_SYM(SSL_CTX_set_verify);
    GCM_SSL_SYM(SSL_CTX_get_cert_store);
    GCM_SSL_SYM(SSL_CTX_add_client_CA);
    GCM_SSL_SYM(SSL_new);
    GCM_SSL_SYM(SSL_free);
    GCM_SSL_SYM(SSL_set_fd);
    GCM_SSL_SYM(SSL_set_accept_state);
    GCM_SSL_SYM(SSL_do_handshake);
    GCM_SSL_SYM(SSL_read_ex);
    GCM_SSL_SYM(SSL_write_ex);
    GCM_SSL_SYM(SSL_get_error);
    GCM_SSL_SYM(SSL_pending);
    GCM_SSL_SYM(SSL_shutdown);
    GCM_SSL_SYM(SSL_get1_peer_certificate);
    GCM_SSL_SYM(BIO_new_mem_buf);
    GCM_SSL_SYM(BIO_free);
    GCM_SSL_SYM(PEM_read_bio_X509);
    GCM_SSL_SYM(PEM_read_bio_PrivateKey);
    GCM_SSL_SYM(X509_free);
    GCM_SSL_SYM(EVP_PKEY_free);
    GCM_SSL_SYM(X509_STORE_add_cert);
    GCM_SSL_SYM(X509_get_ext_d2i);
    GCM_SSL_SYM(GENERAL_NAMES_free);
    GCM_SSL_SYM(OPENSSL_sk_num);
    GCM_SSL_SYM(OPENSSL_sk_value);
    GCM_SSL_SYM(ASN1_STRING_get0_data);
    GCM_SSL_SYM(ASN1_STRING_length);
    GCM_SSL_SYM(ERR_get_error);
    GCM_SSL_SYM(ERR_peek_last_error);
    GCM_SSL_SYM(ERR_error_string_n);
    GCM_SSL_SYM(ERR_clear_error);
    GCM_SSL_SYM(EVP_Digest);
    GCM_SSL_SYM(EVP_sha256);
#undef GCM_SSL_SYM
  });
  if (!failure.empty()) throw TlsError(failure);
  return api;
}

// OpenSSL's reason for the last failure on this thread ("" when it queued none); empties the queue.
std::string ssl_reason() {
  const OpenSsl& s = ssl();
  std::string out;
  while (unsigned long e = s.ERR_get_error()) {
    char buf[256];
    s.ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

// Every certificate of a PEM text, in order.
std::vector<X509*> read_certs(const std::string& pem) {
  const OpenSsl& s = ssl();
  std::vector<X509*> out;
  BIO* bio = s.BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (!bio) return out;
  while (X509* x = s.PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) out.push_back(x);
  s.ERR_clear_error();  // the end of the text reads as an error
  s.BIO_free(bio);
  return out;
}

// Accepts whatever certificate the client sends: RequestClientCert and RequireAnyClientCert ask for one without
// verifying it (the application may look at it); as Go's crypto/tls does for those modes.
int accept_any(int, X509_STORE_CTX*) { return 1; }

}  // namespace

std::shared_ptr<TlsServerContext> TlsServerContext::create(const TlsServerConfig& cfg, const std::string& config_path) {
  const OpenSsl& s = ssl();
  s.ERR_clear_error();
  std::shared_ptr<TlsServerContext> out(new TlsServerContext());
  SSL_CTX* ctx = s.SSL_CTX_new(s.TLS_server_method());
  if (!ctx) throw TlsError(fmt::format("{}: OpenSSL cannot make a TLS context: {}", config_path, ssl_reason()));
  out->ctx_ = ctx;
  auto fail = [&](const std::string& what) -> TlsError {
    std::string why = ssl_reason();
    return TlsError(why.empty() ? fmt::format("{}: {}", config_path, what)
                                : fmt::format("{}: {}: {}", config_path, what, why));
  };

  std::vector<X509*> chain = read_certs(cfg.cert_pem);
  if (chain.empty()) throw fail(fmt::format("no certificate could be read from {}", cfg.cert_source));
  bool used = s.SSL_CTX_use_certificate(ctx, chain[0]) == 1;
  s.X509_free(chain[0]);
  for (size_t i = 1; i < chain.size(); ++i)  // the context owns the extra chain certificates once added
    if (s.SSL_CTX_ctrl(ctx, SSL_CTRL_EXTRA_CHAIN_CERT, 0, chain[i]) != 1) s.X509_free(chain[i]);
  if (!used) throw fail(fmt::format("the certificate of {} cannot be used", cfg.cert_source));

  BIO* bio = s.BIO_new_mem_buf(cfg.key_pem.data(), static_cast<int>(cfg.key_pem.size()));
  EVP_PKEY* key = bio ? s.PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr) : nullptr;
  if (bio) s.BIO_free(bio);
  if (!key)
    throw fail(fmt::format("no private key could be read from {} (an encrypted key is not supported)", cfg.key_source));
  used = s.SSL_CTX_use_PrivateKey(ctx, key) == 1;
  s.EVP_PKEY_free(key);
  if (!used || s.SSL_CTX_check_private_key(ctx) != 1)
    throw fail(
        fmt::format("the private key of {} does not match the certificate of {}", cfg.key_source, cfg.cert_source));

  if (!cfg.client_ca_pem.empty()) {
    std::vector<X509*> cas = read_certs(cfg.client_ca_pem);
    if (cas.empty()) throw fail(fmt::format("no CA certificate could be read from {}", cfg.client_ca_source));
    X509_STORE* store = s.SSL_CTX_get_cert_store(ctx);
    for (X509* ca : cas) {
      s.X509_STORE_add_cert(store, ca);  // takes its own reference
      s.SSL_CTX_add_client_CA(ctx, ca);  // named in the CertificateRequest, so clients pick the right certificate
      s.X509_free(ca);
    }
  }
  int mode = SSL_VERIFY_NONE;
  SSL_verify_cb cb = nullptr;
  switch (cfg.client_auth) {
    case ClientAuth::NoClientCert:
      break;
    case ClientAuth::RequestClientCert:
      mode = SSL_VERIFY_PEER, cb = accept_any;
      break;
    case ClientAuth::RequireAnyClientCert:
      mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, cb = accept_any;
      break;
    case ClientAuth::VerifyClientCertIfGiven:
      mode = SSL_VERIFY_PEER;
      break;
    case ClientAuth::RequireAndVerifyClientCert:
      mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
      break;
  }
  s.SSL_CTX_set_verify(ctx, mode, cb);
  if (s.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, cfg.min_version, nullptr) != 1 ||
      s.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MAX_PROTO_VERSION, cfg.max_version, nullptr) != 1)
    throw fail("min_version/max_version cannot be set");
  if (!cfg.curves.empty()) {
    std::string list;
    for (const auto& c : cfg.curves) list += (list.empty() ? "" : ":") + c;
    if (s.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_GROUPS_LIST, 0, list.data()) != 1)
      throw fail(fmt::format("curve_preferences {} cannot be set", list));
  }
  // Renegotiation lets a client make the server redo expensive handshakes on one connection; nothing needs it.
  uint64_t options = SSL_OP_NO_RENEGOTIATION;
  if (cfg.prefer_server_ciphers) options |= SSL_OP_CIPHER_SERVER_PREFERENCE;
  s.SSL_CTX_set_options(ctx, options);
  // The listener's output buffer may grow between the retries of one write, and it sends record by record.
  s.SSL_CTX_ctrl(ctx, SSL_CTRL_MODE, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, nullptr);
  out->allowed_sans_ = cfg.client_allowed_sans;
  return out;
}

TlsServerContext::~TlsServerContext() {
  if (ctx_) ssl().SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
}

std::unique_ptr<TlsSession> TlsServerContext::session(int fd) const {
  const OpenSsl& s = ssl();
  SSL* x = s.SSL_new(static_cast<SSL_CTX*>(ctx_));
  if (!x) throw TlsError("OpenSSL cannot make a TLS session: " + ssl_reason());
  s.SSL_set_fd(x, fd);
  s.SSL_set_accept_state(x);
  return std::unique_ptr<TlsSession>(new TlsSession(x, allowed_sans_.empty() ? nullptr : &allowed_sans_));
}

TlsSession::~TlsSession() { ssl().SSL_free(static_cast<SSL*>(ssl_)); }

TlsStatus TlsSession::status_of(int ret) {
  const OpenSsl& s = ssl();
  switch (s.SSL_get_error(static_cast<SSL*>(ssl_), ret)) {
    case SSL_ERROR_WANT_READ:
      return TlsStatus::WantRead;
    case SSL_ERROR_WANT_WRITE:
      return TlsStatus::WantWrite;
    case SSL_ERROR_ZERO_RETURN:
      return TlsStatus::Closed;
    case SSL_ERROR_SYSCALL:
      s.ERR_clear_error();
      return TlsStatus::Closed;  // the connection went away
    default:
      error_ = ssl_reason();
      return TlsStatus::Failed;
  }
}

TlsStatus TlsSession::handshake() {
  const OpenSsl& s = ssl();
  s.ERR_clear_error();
  int r = s.SSL_do_handshake(static_cast<SSL*>(ssl_));
  if (r != 1) return status_of(r);
  if (allowed_sans_ && !sans_allowed()) return TlsStatus::Failed;
  established_ = true;
  return TlsStatus::Done;
}

// exporter-toolkit's client_allowed_sans: one SAN of the client certificate (DNS, IP, e-mail or URI) equals an
// entry exactly.
bool TlsSession::sans_allowed() {
  const OpenSsl& s = ssl();
  X509* peer = s.SSL_get1_peer_certificate(static_cast<SSL*>(ssl_));
  if (!peer) {
    error_ = "no client certificate to match client_allowed_sans";
    return false;
  }
  auto* names = static_cast<GENERAL_NAMES*>(s.X509_get_ext_d2i(peer, NID_subject_alt_name, nullptr, nullptr));
  bool ok = false;
  std::string seen;
  if (names) {
    auto* stack = reinterpret_cast<const OPENSSL_STACK*>(names);
    for (int i = 0; i < s.OPENSSL_sk_num(stack) && !ok; ++i) {
      auto* name = static_cast<const GENERAL_NAME*>(s.OPENSSL_sk_value(stack, i));
      std::string text;
      if (name->type == GEN_DNS || name->type == GEN_EMAIL || name->type == GEN_URI) {
        const ASN1_STRING* str = name->d.ia5;
        text.assign(reinterpret_cast<const char*>(s.ASN1_STRING_get0_data(str)),
                    static_cast<size_t>(s.ASN1_STRING_length(str)));
      } else if (name->type == GEN_IPADD) {
        const ASN1_STRING* ip = name->d.ip;
        int len = s.ASN1_STRING_length(ip);
        char buf[INET6_ADDRSTRLEN] = "";
        if (len == 4 || len == 16)
          ::inet_ntop(len == 4 ? AF_INET : AF_INET6, s.ASN1_STRING_get0_data(ip), buf, sizeof buf);
        text = buf;
      }
      for (const auto& allowed : *allowed_sans_) ok = ok || (!text.empty() && text == allowed);
      if (!text.empty()) seen += (seen.empty() ? "" : ", ") + text;
    }
    s.GENERAL_NAMES_free(names);
  }
  s.X509_free(peer);
  if (!ok) error_ = fmt::format("the client certificate's SANs ({}) are not in client_allowed_sans", seen);
  return ok;
}

TlsStatus TlsSession::read(char* buf, size_t cap, size_t& n) {
  const OpenSsl& s = ssl();
  s.ERR_clear_error();
  n = 0;
  int r = s.SSL_read_ex(static_cast<SSL*>(ssl_), buf, cap, &n);
  return r == 1 ? TlsStatus::Done : status_of(r);
}

TlsStatus TlsSession::write(const char* buf, size_t len, size_t& n) {
  const OpenSsl& s = ssl();
  s.ERR_clear_error();
  n = 0;
  int r = s.SSL_write_ex(static_cast<SSL*>(ssl_), buf, len, &n);
  return r == 1 ? TlsStatus::Done : status_of(r);
}

bool TlsSession::pending() const { return ssl().SSL_pending(static_cast<SSL*>(ssl_)) > 0; }

void TlsSession::shutdown() {
  if (!established_) return;
  const OpenSsl& s = ssl();
  s.SSL_shutdown(static_cast<SSL*>(ssl_));
  s.ERR_clear_error();
  established_ = false;
}

std::string sha256(const std::string& data) {
  const OpenSsl& s = ssl();
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (s.EVP_Digest(data.data(), data.size(), out, &len, s.EVP_sha256(), nullptr) != 1)
    throw TlsError("OpenSSL cannot compute SHA-256: " + ssl_reason());
  return std::string(reinterpret_cast<const char*>(out), len);
}

bool constant_time_equal(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  volatile unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff = diff | static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace gcm

// The web config (exporter-toolkit's format), the authenticator (Basic with bcrypt, bearer tokens, the cache), and
// the HTTP listener over TLS with them, against libcurl as the client.
#include "core/web_config.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "core/http_auth.h"
#include "core/http_client.h"
#include "core/http_listener.h"
#include "core/subprocess.h"
#include "core/tls.h"
#include "temp_dir.h"
#include "tls_certs.h"

namespace gcm {
namespace {

using namespace std::chrono_literals;
using testing::kAliceHash;
using testing::kAlicePassword;
using testing::TempDir;

std::string error_of(const std::string& yaml, const std::string& base = "/nonexistent") {
  try {
    parse_web_config(yaml, "web.yml", base);
  } catch (const WebConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

std::string basic(const std::string& user, const std::string& password) {
  static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string in = user + ":" + password, out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t n = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (i + 2 < in.size()) n |= static_cast<unsigned char>(in[i + 2]);
    out += tbl[(n >> 18) & 63];
    out += tbl[(n >> 12) & 63];
    out += i + 1 < in.size() ? tbl[(n >> 6) & 63] : '=';
    out += i + 2 < in.size() ? tbl[n & 63] : '=';
  }
  return "Basic " + out;
}

TEST(WebConfig, EmptyFileMeansPlainHttpWithoutAuthentication) {
  auto c = parse_web_config("", "web.yml", ".");
  EXPECT_TRUE(c.empty());
  EXPECT_TRUE(parse_web_config("# only a comment\n", "web.yml", ".").empty());
}

TEST(WebConfig, ReadsUsersHeadersAndTlsRelativeToTheFile) {
  TempDir dir;
  auto pki = testing::make_test_pki(dir.path());
  std::ofstream(dir.file("web.yml")) << "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
                                     << "  client_ca_file: ca.crt\n  min_version: TLS13\n"
                                     << "  curve_preferences: [X25519, CurveP256]\n"
                                     << "http_server_config:\n  http2: false\n  headers:\n"
                                     << "    Strict-Transport-Security: max-age=3600\n"
                                     << "basic_auth_users:\n  alice: '" << kAliceHash << "'\n";
  auto c = load_web_config(dir.file("web.yml"));
  ASSERT_TRUE(c.tls);
  EXPECT_NE(c.tls->cert_pem.find("BEGIN CERTIFICATE"), std::string::npos);
  EXPECT_EQ(c.tls->cert_source, dir.file("server.crt"));
  EXPECT_NE(c.tls->key_pem.find("PRIVATE KEY"), std::string::npos);
  // A client CA without client_auth_type: the clients are verified (exporter-toolkit's default).
  EXPECT_EQ(c.tls->client_auth, ClientAuth::RequireAndVerifyClientCert);
  EXPECT_EQ(c.tls->min_version, 0x0304);
  EXPECT_EQ(c.tls->curves, (std::vector<std::string>{"X25519", "P-256"}));
  EXPECT_EQ(c.basic_auth_users.at("alice"), kAliceHash);
  EXPECT_EQ(c.headers, std::vector<std::string>{"Strict-Transport-Security: max-age=3600"});
  EXPECT_NO_THROW(TlsServerContext::create(*c.tls, c.path));
}

TEST(WebConfig, ErrorsNameTheFileTheLineAndWhatWasExpected) {
  EXPECT_EQ(error_of("tls_server_config:\n  cert_fil: x\n"),
            "web.yml:2: tls_server_config: unknown key 'cert_fil' (expected cert, cert_file, key, key_file, "
            "client_ca, client_ca_file, client_auth_type, client_allowed_sans, min_version, max_version, "
            "cipher_suites, prefer_server_cipher_suites, curve_preferences)");
  EXPECT_EQ(error_of("basic_auth_users: {}\nbasic_auth_user:\n  a: b\n"),
            "web.yml:2: unknown key 'basic_auth_user' (expected tls_server_config, http_server_config, "
            "basic_auth_users)");
  EXPECT_NE(error_of("basic_auth_users:\n  alice: [unclosed\n").find("web.yml:3: not valid YAML"), std::string::npos)
      << error_of("basic_auth_users:\n  alice: [unclosed\n");
  EXPECT_NE(error_of("basic_auth_users:\n  alice: secret\n")
                .find("web.yml:2: basic_auth_users.alice: expected a "
                      "bcrypt hash"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n")
                .find("web.yml:2: tls_server_config.cert_file: cannot read '/nonexistent/a.crt': No such file"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config:\n  client_auth_type: Sometimes\n  cert: x\n  key: y\n")
                .find("web.yml:2: tls_server_config.client_auth_type: 'Sometimes' is not one of NoClientCert"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config:\n  cert: x\n  key: y\n  client_auth_type: RequireAndVerifyClientCert\n")
                .find("needs client_ca_file"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config:\n  cert: x\n  key: y\n  min_version: TLS14\n")
                .find("web.yml:4: tls_server_config.min_version: 'TLS14' is not a TLS version"),
            std::string::npos);
  EXPECT_NE(error_of("tls_server_config:\n  cert: x\n").find("key_file (or key) is missing"), std::string::npos);
  EXPECT_NE(error_of("rate_limit:\n  burst: 2\n").find("web.yml:1: rate_limit is not supported"), std::string::npos);
  EXPECT_NE(error_of("tls_server_config:\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n")
                .find("cipher_suites is not supported"),
            std::string::npos);
  EXPECT_NE(error_of("basic_auth_users: {}\nbasic_auth_users: {}\n")
                .find("web.yml:2: the web config: the key 'basic_auth_users' appears twice"),
            std::string::npos);
  EXPECT_NE(error_of("- a\n- b\n").find("web.yml:1: the web config: expected a mapping"), std::string::npos);
  EXPECT_NE(error_of("http_server_config:\n  headers:\n    X-Powered-By: gcm\n").find("'X-Powered-By' is not one of"),
            std::string::npos);
}

TEST(WebConfig, UnreadableFileAndCertificateProblemsAreNamed) {
  try {
    load_web_config("/nonexistent/web.yml");
    FAIL();
  } catch (const WebConfigError& e) {
    EXPECT_STREQ(e.what(), "cannot read the web config '/nonexistent/web.yml': No such file or directory");
  }
  TempDir dir;
  auto pki = testing::make_test_pki(dir.path());
  // The client's key with the server's certificate.
  std::ofstream(dir.file("web.yml")) << "tls_server_config:\n  cert_file: server.crt\n  key_file: client.key\n";
  auto c = load_web_config(dir.file("web.yml"));
  try {
    TlsServerContext::create(*c.tls, c.path);
    FAIL();
  } catch (const TlsError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("web.yml") + ": the private key of " + dir.file("client.key") +
                                         " does not match "
                                         "the certificate of " +
                                         dir.file("server.crt")),
              std::string::npos)
        << e.what();
  }
  std::ofstream(dir.file("garbage.crt")) << "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
  std::ofstream(dir.file("web.yml")) << "tls_server_config:\n  cert_file: garbage.crt\n  key_file: server.key\n";
  c = load_web_config(dir.file("web.yml"));
  EXPECT_THROW(TlsServerContext::create(*c.tls, c.path), TlsError);
}

TEST(HttpAuth, BcryptOfLibxcrypt) {
  EXPECT_TRUE(bcrypt_matches(kAlicePassword, kAliceHash));
  EXPECT_FALSE(bcrypt_matches("Wonderland", kAliceHash));
  EXPECT_FALSE(bcrypt_matches(kAlicePassword, "$2y$04$invalidinvalidinvalidinvalidinvalidinvalidinvalidinvali"));
}

TEST(HttpAuth, BasicIsVerifiedOnceThenAnsweredFromTheCache) {
  HttpAuth auth({{"alice", kAliceHash}}, "");
  std::string good = basic("alice", kAlicePassword);
  EXPECT_EQ(auth.quick(good), HttpAuth::Verdict::NeedsVerify);
  EXPECT_TRUE(auth.verify(good));
  EXPECT_EQ(auth.quick(good), HttpAuth::Verdict::Allowed);  // no bcrypt: the I/O thread may answer
  // Failures are not cached: each one asks bcrypt again, and leaves nothing behind.
  std::string bad = basic("alice", "guess");
  EXPECT_FALSE(auth.verify(bad));
  EXPECT_EQ(auth.quick(bad), HttpAuth::Verdict::NeedsVerify);
  EXPECT_FALSE(auth.verify(basic("mallory", kAlicePassword)));
  EXPECT_FALSE(auth.verify(basic("alice", "")));
  EXPECT_EQ(auth.quick(""), HttpAuth::Verdict::Denied);
  EXPECT_EQ(auth.quick("Basic !!!"), HttpAuth::Verdict::Denied);
  EXPECT_EQ(auth.quick("Bearer x"), HttpAuth::Verdict::Denied);
  EXPECT_EQ(auth.quick("basic " + good.substr(6)), HttpAuth::Verdict::Allowed);  // the scheme is case-insensitive
  EXPECT_NE(auth.challenge().find("WWW-Authenticate: Basic realm="), std::string::npos);
}

TEST(HttpAuth, BearerToken) {
  HttpAuth auth({}, "s3cret-token");
  EXPECT_TRUE(auth.enabled());
  EXPECT_EQ(auth.quick("Bearer s3cret-token"), HttpAuth::Verdict::Allowed);
  EXPECT_EQ(auth.quick("bearer s3cret-token"), HttpAuth::Verdict::Allowed);
  EXPECT_EQ(auth.quick("Bearer s3cret-tokeN"), HttpAuth::Verdict::Denied);
  EXPECT_EQ(auth.quick("Bearer s3cret-token2"), HttpAuth::Verdict::Denied);
  EXPECT_EQ(auth.quick(basic("a", "s3cret-token")), HttpAuth::Verdict::Denied);
  EXPECT_EQ(auth.challenge(), "WWW-Authenticate: Bearer realm=\"gcm\"\r\n");
}

class TlsListener : public ::testing::Test {
 protected:
  void SetUp() override { pki_ = testing::make_test_pki(dir_.path()); }
  void start(const std::string& yaml, int workers = 0) {
    std::ofstream(dir_.file("web.yml")) << yaml;
    HttpListenerOptions o;
    o.workers = workers;
    apply_web_config(o, load_web_config(dir_.file("web.yml")));
    server_ = std::make_unique<HttpListener>(o, [](const HttpRequest& r) {
      return HttpReply{200, "text/plain", "hello " + r.path + "\n", ""};
    });
    server_->start();
    url_ = "https://127.0.0.1:" + std::to_string(server_->port()) + "/metrics";
  }
  TempDir dir_;  // declared first: removed after the server that reads its certificates
  std::string url_;
  testing::TestPki pki_;
  std::unique_ptr<HttpListener> server_;
};

TEST_F(TlsListener, ServesOverTlsAndRefusesPlainHttp) {
  start(
      "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
      "http_server_config:\n  headers:\n    X-Content-Type-Options: nosniff\n");
  HttpClient https({pki_.ca_crt, "", ""});
  auto r = https.get(url_, 5s);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello /metrics\n");
  EXPECT_EQ(r.header("x-content-type-options"), "nosniff");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(https.get(url_, 5s).status, 200);  // kept alive
  EXPECT_EQ(https.post(url_, std::string(200000, 'x'), {"Content-Type: text/plain"}, 5s).status, 200);
  // The certificate is not trusted without the CA.
  HttpClient system_roots;
  EXPECT_THROW(system_roots.get(url_, 5s), HttpTransportError);
  // Plain HTTP on the TLS port: no answer, the handshake fails.
  HttpClient plain;
  std::string http_url = "http://127.0.0.1:" + std::to_string(server_->port()) + "/metrics";
  EXPECT_THROW(plain.get(http_url, 5s), HttpTransportError);
  EXPECT_GE(server_->stats().tls_failed, 1u);
}

// Pipelined requests in one TLS write: both answered, in order (the second one is already decrypted, or held
// inside OpenSSL where epoll cannot see it).
TEST_F(TlsListener, PipelinedRequestsOverOpenSslSClient) {
  start("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n");
  CommandSpec spec;
  spec.argv = {"openssl", "s_client",  "-connect", "127.0.0.1:" + std::to_string(server_->port()),
               "-CAfile", pki_.ca_crt, "-quiet",   "-ign_eof"};
  spec.timeout = 10s;
  spec.stdin_data = "GET /one HTTP/1.1\r\nHost: x\r\n\r\nGET /two HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  auto r = run_command(spec);
  EXPECT_FALSE(r.timed_out) << r.err;
  size_t one = r.out.find("hello /one"), two = r.out.find("hello /two");
  ASSERT_NE(one, std::string::npos) << r.out << r.err;
  ASSERT_NE(two, std::string::npos) << r.out << r.err;
  EXPECT_LT(one, two);
}

TEST_F(TlsListener, RequireAndVerifyClientCert) {
  start(
      "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: ca.crt\n"
      "  client_auth_type: RequireAndVerifyClientCert\n");
  EXPECT_EQ(HttpClient({pki_.ca_crt, pki_.client_crt, pki_.client_key}).get(url_, 5s).status, 200);
  EXPECT_THROW(HttpClient({pki_.ca_crt, "", ""}).get(url_, 5s), HttpTransportError);
  EXPECT_THROW(HttpClient({pki_.ca_crt, pki_.other_client_crt, pki_.other_client_key}).get(url_, 5s),
               HttpTransportError);
}

TEST_F(TlsListener, ClientAllowedSans) {
  start(
      "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: ca.crt\n"
      "  client_allowed_sans: [other.example]\n");
  EXPECT_THROW(HttpClient({pki_.ca_crt, pki_.client_crt, pki_.client_key}).get(url_, 5s), HttpTransportError);
  server_.reset();
  start(
      "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: ca.crt\n"
      "  client_allowed_sans: [other.example, client.example]\n");
  EXPECT_EQ(HttpClient({pki_.ca_crt, pki_.client_crt, pki_.client_key}).get(url_, 5s).status, 200);
}

TEST_F(TlsListener, BasicAuthOverTls) {
  start(std::string("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
                    "basic_auth_users:\n  alice: ") +
        kAliceHash + "\n");
  HttpClient https({pki_.ca_crt, "", ""});
  auto none = https.get(url_, 5s);
  EXPECT_EQ(none.status, 401);
  EXPECT_NE(none.header("www-authenticate").find("Basic"), std::string::npos);
  EXPECT_EQ(https.get(url_, 5s, {"Authorization: " + basic("alice", "nope")}).status, 401);
  EXPECT_EQ(https.get(url_, 5s, {"Authorization: " + basic("alice", kAlicePassword)}).status, 200);
  EXPECT_EQ(https.get(url_, 5s, {"Authorization: " + basic("alice", kAlicePassword)}).status, 200);  // cached
  EXPECT_EQ(server_->stats().unauthorized, 2u);
}

TEST_F(TlsListener, AStalledHandshakeIsCutAtTheHeadDeadline) {
  std::ofstream(dir_.file("web.yml")) << "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";
  HttpListenerOptions o;
  o.workers = 0;
  o.head_timeout = 300ms;
  apply_web_config(o, load_web_config(dir_.file("web.yml")));
  HttpListener server(o, [](const HttpRequest&) { return HttpReply{}; });
  server.start();
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(server.port()));
  ASSERT_EQ(::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  (void)!::send(s, "\x16\x03\x01", 3, MSG_NOSIGNAL);  // the first bytes of a ClientHello, then nothing
  timeval tv{3, 0};
  ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[64];
  auto t0 = std::chrono::steady_clock::now();
  ssize_t n = ::recv(s, buf, sizeof buf, 0);
  EXPECT_LE(n, 0);  // closed, without a plain-text answer
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  ::close(s);
  EXPECT_EQ(server.stats().timed_out, 1u);
}

}  // namespace
}  // namespace gcm

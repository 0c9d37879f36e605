// TLS and authentication on every listener, with real clients: curl and a real Prometheus scraping the prometheus
// sink over TLS with basic auth (and mutual TLS), and gcm's own OTLP exporter sending to slurm_processor over TLS,
// OTLP/HTTP and OTLP/gRPC, with a bearer token. The certificates are made by the openssl command for each test.
#include <signal.h>

#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "../unit/tls_certs.h"
#include "core/http_client.h"
#include "helpers.h"
#include "process.h"
#include "slurm_processor_process.h"

namespace gcm::testing {
namespace {

using namespace std::chrono_literals;

// curl's answer: the HTTP status ("000" when there was none) and its exit code (non-zero: TLS or connection failed).
struct CurlResult {
  int exit_code;
  std::string status, body;
};

CurlResult curl(std::vector<std::string> args) {
  CommandSpec spec;
  spec.argv = {"curl", "-sS", "--max-time", "10", "-o", "-", "-w", "\n%{http_code}"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  auto r = run_command(spec);
  size_t nl = r.out.rfind('\n');
  return {r.exit_code, nl == std::string::npos ? r.out : r.out.substr(nl + 1),
          nl == std::string::npos ? "" : r.out.substr(0, nl)};
}

// A collector whose prometheus sink serves /metrics with the web config `yaml` (written beside the certificates).
class SecuredCollector {
 public:
  SecuredCollector(const std::string& dir, const std::string& yaml)
      : port_(free_port()),
        proc_((std::ofstream(dir + "/web.yml") << yaml,
               std::vector<std::string>{gcm_binary(), "storage", "--cluster", "it", "--statvfs-patterns", "it=^/$",
                                        "--sink", "prometheus", "-o", "listen=127.0.0.1:" + std::to_string(port_), "-o",
                                        "web_config_file=" + dir + "/web.yml", "--interval", "1", "--log-folder", dir}),
              dir + "/gcm.stderr") {}
  int port() const { return port_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_) + "/metrics"; }
  int stop() { return proc_.stop(SIGTERM, 10s); }

 private:
  int port_;
  BackgroundProcess proc_;
};

// The value of a sample line "NAME VALUE" in a Prometheus exposition; -1 when absent.
double sample(const std::string& text, const std::string& name) {
  size_t at = text.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + name.size() + 2));
}

std::string tls_users_yaml(const std::string& client_auth) {
  std::string y = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";
  if (!client_auth.empty()) y += "  client_ca_file: ca.crt\n  client_auth_type: " + client_auth + "\n";
  return y + "basic_auth_users:\n  alice: " + kAliceHash + "\n";
}

TEST(Tls, CurlScrapesThePrometheusSinkOverTlsWithBasicAuth) {
  ASSERT_FALSE(find_executable("curl").empty()) << "curl is not installed (scripts/install-deps.sh)";
  auto dir = temp_dir("tls-curl");
  auto pki = make_test_pki(dir);
  SecuredCollector gcm(dir, tls_users_yaml(""));
  std::string good = std::string("alice:") + kAlicePassword;
  ASSERT_TRUE(eventually(
      [&] {
        auto r = curl({"--cacert", pki.ca_crt, "-u", good, gcm.url()});
        return r.status == "200" && r.body.find("gcm_statvfs_f_blocks") != std::string::npos;
      },
      30s))
      << read_text(dir + "/gcm.stderr");
  auto wrong = curl({"--cacert", pki.ca_crt, "-u", "alice:wrong", gcm.url()});
  EXPECT_EQ(wrong.status, "401");
  EXPECT_EQ(wrong.body.find("gcm_"), std::string::npos) << "metrics leaked with a wrong password";
  EXPECT_EQ(curl({"--cacert", pki.ca_crt, gcm.url()}).status, "401");
  EXPECT_EQ(curl({"--cacert", pki.ca_crt, "-u", "bob:" + std::string(kAlicePassword), gcm.url()}).status, "401");
  auto head = curl({"--cacert", pki.ca_crt, "-D", "-", gcm.url()});
  EXPECT_NE(head.body.find("WWW-Authenticate: Basic"), std::string::npos) << head.body;
  // Not trusted without the CA; plain HTTP on the TLS port gets no answer.
  EXPECT_NE(curl({"-u", good, gcm.url()}).exit_code, 0);
  EXPECT_EQ(curl({"http://127.0.0.1:" + std::to_string(gcm.port()) + "/metrics"}).status, "000");
  EXPECT_EQ(gcm.stop(), 0);
}

TEST(Tls, RequireAndVerifyClientCertRefusesTheHandshakeWithoutOne) {
  ASSERT_FALSE(find_executable("curl").empty()) << "curl is not installed (scripts/install-deps.sh)";
  auto dir = temp_dir("tls-mtls");
  auto pki = make_test_pki(dir);
  SecuredCollector gcm(dir, tls_users_yaml("RequireAndVerifyClientCert"));
  std::string good = std::string("alice:") + kAlicePassword;
  std::vector<std::string> with_cert = {"--cacert", pki.ca_crt, "--cert", pki.client_crt, "--key", pki.client_key};
  ASSERT_TRUE(eventually(
      [&] {
        auto args = with_cert;
        args.insert(args.end(), {"-u", good, gcm.url()});
        return curl(args).status == "200";
      },
      30s))
      << read_text(dir + "/gcm.stderr");
  auto no_cert = curl({"--cacert", pki.ca_crt, "-u", good, gcm.url()});
  EXPECT_NE(no_cert.exit_code, 0);
  EXPECT_EQ(no_cert.status, "000");  // no HTTP at all: the handshake failed
  auto other = curl(
      {"--cacert", pki.ca_crt, "--cert", pki.other_client_crt, "--key", pki.other_client_key, "-u", good, gcm.url()});
  EXPECT_EQ(other.status, "000") << "a certificate of another CA was accepted";
  auto args = with_cert;
  args.insert(args.end(), {"-u", "alice:wrong", gcm.url()});
  EXPECT_EQ(curl(args).status, "401");
  EXPECT_EQ(gcm.stop(), 0);
}

TEST(Tls, PrometheusScrapesOverTlsWithBasicAuthAndAClientCertificate) {
  ASSERT_FALSE(find_executable("prometheus").empty()) << "prometheus is not installed (scripts/install-deps.sh)";
  auto dir = temp_dir("tls-prometheus");
  auto pki = make_test_pki(dir);
  SecuredCollector gcm(dir, tls_users_yaml("RequireAndVerifyClientCert"));
  int prom_port = free_port();
  auto job = [&](const std::string& name, const std::string& password) {
    return "  - job_name: " + name + "\n    scheme: https\n    tls_config:\n      ca_file: " + pki.ca_crt +
           "\n      cert_file: " + pki.client_crt + "\n      key_file: " + pki.client_key +
           "\n    basic_auth:\n      username: alice\n      password: " + password +
           "\n    static_configs:\n      - targets: ['127.0.0.1:" + std::to_string(gcm.port()) + "']\n";
  };
  std::ofstream(dir + "/prometheus.yml") << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                         << "scrape_configs:\n"
                                         << job("gcm", kAlicePassword) << job("intruder", "guess");
  BackgroundProcess prom(
      {"prometheus", "--config.file=" + dir + "/prometheus.yml", "--storage.tsdb.path=" + dir + "/tsdb",
       "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
      dir + "/prometheus.stderr");
  HttpClient http;
  std::string base = "http://127.0.0.1:" + std::to_string(prom_port);
  nlohmann::json result;
  bool found = eventually(
      [&] {
        try {
          auto res = http.get(base + "/api/v1/query?query=gcm_statvfs_f_blocks", 2s);
          if (res.status != 200) return false;
          result = nlohmann::json::parse(res.body)["data"]["result"];
          return result.is_array() && !result.empty();
        } catch (const std::exception&) {
          return false;
        }
      },
      60s);
  ASSERT_TRUE(found) << read_text(dir + "/prometheus.stderr").substr(0, 2000) << read_text(dir + "/gcm.stderr");
  EXPECT_EQ(result[0]["metric"]["job"], "gcm");
  EXPECT_EQ(result.size(), 1u) << "the job with the wrong password got metrics: " << result.dump();
  // Both targets have been scraped: the right password is up, the wrong one down with the server's 401.
  nlohmann::json targets;
  ASSERT_TRUE(eventually(
      [&] {
        targets = nlohmann::json::parse(http.get(base + "/api/v1/targets", 2s).body)["data"]["activeTargets"];
        int scraped = 0;
        for (const auto& t : targets) scraped += t["health"] != "unknown";
        return scraped == 2;
      },
      30s))
      << targets.dump();
  for (const auto& t : targets) {
    if (t["labels"]["job"] == "gcm") {
      EXPECT_EQ(t["health"], "up") << t.dump();
    } else {
      EXPECT_EQ(t["health"], "down") << t.dump();
      EXPECT_NE(t["lastError"].get<std::string>().find("401"), std::string::npos) << t.dump();
    }
  }
  EXPECT_EQ(gcm.stop(), 0);
}

// The processor with a web config (TLS, client certificates verified) and a bearer token, downstream a real OTLP
// receiver; gcm's nvml_monitor (fake NVML) sends with its otel sink.
class SecuredProcessor : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(find_executable("node").empty()) << "node is not installed";
    dir_ = temp_dir("tls-processor");
    pki_ = make_test_pki(dir_);
    std::ofstream(dir_ + "/web.yml") << "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
                                     << "  client_ca_file: ca.crt\n";
    std::ofstream(dir_ + "/token") << "t0ken-for-the-test\n";
    std::ofstream(dir_ + "/scenario.json")
        << R"({"devices": [{"uuid": "GPU-tls-0", "utilization": {"gpu": 50, "memory": 5}}]})";
    env_ = {"GCM_FAKE_NVML_SCENARIO=" + dir_ + "/scenario.json", std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML};
  }
  CommandResult send(std::vector<std::string> sink_options) {
    std::vector<std::string> args = {
        "nvml_monitor", "--once",         "--push-interval", "0.1", "--collect-interval", "0.1", "--sink", "otel",
        "-o",           "otel_timeout=3", "--log-folder",    dir_};
    for (auto& o : sink_options) args.insert(args.end(), {"-o", o});
    return run_gcm(args, 60s, env_);
  }
  std::vector<std::string> client_tls() const {
    return {"otel_ca_file=" + pki_.ca_crt, "otel_client_cert_file=" + pki_.client_crt,
            "otel_client_key_file=" + pki_.client_key};
  }
  std::string dir_;
  TestPki pki_;
  std::vector<std::string> env_;
};

TEST_F(SecuredProcessor, OtlpHttpExporterSendsOverTlsWithABearerToken) {
  OtlpReceiverProcess rx(dir_);
  ProcessorProcess proc(
      dir_,
      {"--downstream", rx.url, "--attribution", "slurmd-local", "--scontrol", "/bin/false", "--batch-timeout", "0.05",
       "--web.config.file", dir_ + "/web.yml", "--auth-bearer-token-file", dir_ + "/token"},
      env_);
  std::string endpoint = "otel_endpoint=https" + proc.url.substr(4);
  auto opts = client_tls();
  opts.push_back(endpoint);
  opts.push_back("headers={'Authorization': 'Bearer t0ken-for-the-test'}");
  auto r = send(opts);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(jobs_by_gpu(rx).points, 0u);

  // A wrong token: 401, which the exporter does not retry.
  opts = client_tls();
  opts.insert(opts.end(), {endpoint, "headers={'Authorization': 'Bearer guess'}"});
  r = send(opts);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE((r.err + r.out).find("401"), std::string::npos) << r.err << r.out;
  // The standard environment variables instead of the options.
  env_.push_back("OTEL_EXPORTER_OTLP_CERTIFICATE=" + pki_.ca_crt);
  env_.push_back("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE=" + pki_.client_crt);
  env_.push_back("OTEL_EXPORTER_OTLP_CLIENT_KEY=" + pki_.client_key);
  env_.push_back("OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20t0ken-for-the-test");
  r = send({endpoint});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(jobs_by_gpu(rx).points, 0u);

  HttpClient https({pki_.ca_crt, pki_.client_crt, pki_.client_key});
  std::string base = "https" + proc.url.substr(4);
  EXPECT_EQ(https.get(base + "/health", 5s).status, 401);
  auto metrics = https.get(base + "/metrics", 5s, {"Authorization: Bearer t0ken-for-the-test"});
  EXPECT_EQ(metrics.status, 200);
  // The wrong token's requests and the /health above.
  EXPECT_GE(sample(metrics.body, "gcm_slurm_processor_http_unauthorized_total"), 2) << metrics.body;
  EXPECT_EQ(proc.stop(), 0);
}

TEST_F(SecuredProcessor, OtlpGrpcExporterSendsOverTls) {
  OtlpReceiverProcess rx(dir_);
  ProcessorProcess proc(dir_,
                        {"--grpc-listen", "127.0.0.1:0", "--downstream", rx.url, "--attribution", "slurmd-local",
                         "--scontrol", "/bin/false", "--batch-timeout", "0.05", "--web.config.file", dir_ + "/web.yml",
                         "--auth-bearer-token-file", dir_ + "/token"},
                        env_);
  auto opts = client_tls();
  opts.insert(opts.end(), {"otel_endpoint=https://" + proc.grpc_target, "protocol=grpc",
                           "headers={'Authorization': 'Bearer t0ken-for-the-test'}"});
  auto r = send(opts);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(jobs_by_gpu(rx).points, 0u);

  opts = client_tls();
  opts.insert(opts.end(), {"otel_endpoint=https://" + proc.grpc_target, "protocol=grpc",
                           "headers={'Authorization': 'Bearer guess'}"});
  r = send(opts);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE((r.err + r.out).find("UNAUTHENTICATED"), std::string::npos) << r.err << r.out;
  HttpClient https({pki_.ca_crt, pki_.client_crt, pki_.client_key});
  auto metrics = https.get("https" + proc.url.substr(4) + "/metrics", 5s, {"Authorization: Bearer t0ken-for-the-test"});
  EXPECT_GE(sample(metrics.body, "gcm_slurm_processor_bad_requests_total{transport=\"grpc\",code=\"UNAUTHENTICATED\"}"),
            1)
      << metrics.body;
  EXPECT_EQ(proc.stop(), 0);
}

TEST_F(SecuredProcessor, ABadWebConfigIsExit2NamingTheFile) {
  std::ofstream(dir_ + "/mismatch.yml") << "tls_server_config:\n  cert_file: server.crt\n  key_file: client.key\n";
  std::ofstream(dir_ + "/typo.yml") << "tls_server_config:\n  cert_file: server.crt\n  keyfile: server.key\n";
  for (auto [file, expected] : {std::pair{"mismatch.yml", "does not match the certificate"},
                                std::pair{"typo.yml", "typo.yml:3: tls_server_config: unknown key 'keyfile'"}}) {
    auto r = run_gcm(
        {"slurm_processor", "--listen", "127.0.0.1:0", "--downstream", "http://127.0.0.1:9", "--attribution",
         "slurmd-local", "--scontrol", "/bin/false", "--log-folder", dir_, "--web.config.file", dir_ + "/" + file},
        30s);
    EXPECT_EQ(r.exit_code, 2) << file << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    r = run_gcm({"storage", "--once", "--cluster", "c", "--statvfs-patterns", "c=^/$", "--sink", "prometheus", "-o",
                 "listen=127.0.0.1:0", "-o", "web_config_file=" + dir_ + "/" + file, "--log-folder", dir_});
    EXPECT_EQ(r.exit_code, 2) << file << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace gcm::testing

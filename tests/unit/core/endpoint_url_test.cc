// Every URL the tools send to is http:// or https:// with a host, refused before any I/O otherwise: the otel sink's
// endpoint (option and environment), the HTTP client underneath, slurm_processor --downstream.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "core/endpoint_url.h"
#include "core/http_client.h"
#include "sinks/sink.h"
#include "temp_dir.h"

namespace gcm {
namespace {

using gcm::testing::TempDir;

TEST(EndpointUrl, OnlyHttpAndHttpsWithAHost) {
  EXPECT_FALSE(http_url_problem("http://collector:4318"));
  EXPECT_FALSE(http_url_problem("https://collector"));
  EXPECT_FALSE(http_url_problem("HTTP://collector:4318/prefix"));
  EXPECT_FALSE(http_url_problem("http://user:pw@[::1]:4318"));
  for (const char* bad : {"file:///etc/passwd", "gopher://h:70/", "ftp://h/x", "dict://h:11211/", "unix:///run/x",
                          "collector:4318", "http://", "https:///path", "http://:4318", ""})
    EXPECT_TRUE(http_url_problem(bad)) << bad;
  EXPECT_EQ(*http_url_problem("gopher://h:70/"), "scheme 'gopher' is not http or https");
  EXPECT_EQ(invalid_url_message("--downstream", "ftp://h", "scheme 'ftp' is not http or https"),
            "Invalid value for '--downstream': 'ftp://h' (scheme 'ftp' is not http or https; only http:// and "
            "https:// URLs are allowed)");
}

std::string otel_usage_error(const std::vector<std::string>& opts) {
  SinkContext ctx;
  ctx.command = "test";
  try {
    make_sink("otel", opts, ctx);
  } catch (const SinkUsageError& e) {
    return e.what();
  }
  return "";
}

TEST(EndpointUrl, OtelSinkRefusesOtherSchemesBeforeAnyIo) {
  TempDir tmp;
  std::string secret = tmp.file("secret");
  std::ofstream(secret) << "TOP-SECRET-CONTENT\n";
  std::string err = otel_usage_error({"otel_endpoint=file://" + secret});
  EXPECT_NE(err.find("Invalid value for 'otel_endpoint': 'file://" + secret + "'"), std::string::npos) << err;
  EXPECT_NE(err.find("only http:// and https://"), std::string::npos) << err;
  EXPECT_EQ(err.find("TOP-SECRET"), std::string::npos) << err;
  EXPECT_NE(otel_usage_error({"otel_endpoint=gopher://127.0.0.1:70"}).find("scheme 'gopher'"), std::string::npos);
  EXPECT_NE(otel_usage_error({"otel_endpoint=ftp://127.0.0.1/x", "protocol=grpc"}).find("scheme 'ftp'"),
            std::string::npos);
  ::setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://127.0.0.1/", 1);
  EXPECT_NE(otel_usage_error({}).find("'OTEL_EXPORTER_OTLP_ENDPOINT': 'ftp://127.0.0.1/'"), std::string::npos);
  ::setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1", 1);
  ::setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "file:///etc/hostname", 1);
  ::setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://127.0.0.1:1/v1/metrics", 1);
  EXPECT_NE(otel_usage_error({}).find("'OTEL_EXPORTER_OTLP_LOGS_ENDPOINT': 'file:///etc/hostname'"), std::string::npos);
  EXPECT_EQ(otel_usage_error({"otel_endpoint=http://127.0.0.1:1"}), "") << "the option wins over the variables";
  ::unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
  ::unsetenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT");
  ::unsetenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
}

TEST(EndpointUrl, HttpClientRefusesOtherSchemes) {
  HttpClient client;
  try {
    client.get("file:///etc/hostname", std::chrono::milliseconds(1000));
    ADD_FAILURE() << "file:// was fetched";
  } catch (const HttpTransportError& e) {
    EXPECT_NE(std::string(e.what()).find("refused: scheme 'file'"), std::string::npos) << e.what();
  }
}

TEST(EndpointUrl, QueryValuesArePercentEncoded) {
  EXPECT_EQ(percent_encoded("alice"), "alice");
  EXPECT_EQ(percent_encoded("a.b-c_d~e9"), "a.b-c_d~e9") << "the unreserved bytes stay";
  EXPECT_EQ(percent_encoded("eve&user=x/../y?#"), "eve%26user%3Dx%2F..%2Fy%3F%23");
  EXPECT_EQ(percent_encoded(std::string("a b\n\xC3\xA9", 6)), "a%20b%0A%C3%A9");
  EXPECT_EQ(percent_encoded(""), "");
}

}  // namespace
}  // namespace gcm

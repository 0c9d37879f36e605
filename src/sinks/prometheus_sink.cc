// prometheus: keeps the latest value of every measurement and serves it on /metrics (-o listen=HOST:PORT) and/or
// writes it atomically to a file for node_exporter's textfile collector (-o textfile=PATH) after each round. With
// -o web_config_file=FILE (exporter-toolkit's format, core/web_config.h) /metrics is served over TLS and/or behind
// basic authentication.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "core/http_listener.h"
#include "core/tls.h"
#include "core/web_config.h"
#include "sinks/prometheus_store.h"
#include "sinks/sink.h"

namespace gcm {
namespace {

class PrometheusSink : public Sink {
 public:
  PrometheusSink(const SinkOptions& o, const SinkContext& ctx) : log_(ctx.log) {
    store_.set_collector(ctx.command, ctx.interval_seconds);
    textfile_ = o.get_string("textfile");
    std::string listen = o.get_string("listen");
    if (listen.empty() && textfile_.empty())
      throw SinkUsageError("sink 'prometheus' needs -o listen=HOST:PORT (serve /metrics) or -o textfile=PATH");
    std::string web_config = o.get_string("web_config_file");
    if (!web_config.empty() && listen.empty())
      throw SinkUsageError("sink 'prometheus': web_config_file needs -o listen=HOST:PORT (it configures /metrics)");
    if (!listen.empty()) start_server(listen, web_config);
  }

  ~PrometheusSink() override {
    if (server_) server_->stop();
  }

  void begin_round(const BatchInfo& info) override { store_.begin_round(*info.schema); }
  void write(const Record& r) override { store_.add(r); }
  void end_round(const BatchInfo& info) override {
    store_.end_round(*info.schema);
    store_.round_succeeded(*info.schema, info.ts);
    if (!textfile_.empty()) write_textfile();
  }
  void round_failed(const BatchInfo& info) override {
    store_.round_failed(*info.schema);
    if (!textfile_.empty()) write_textfile();  // the failure count must reach the textfile too
  }

  // The textfile was written at the end of each round; what is left is to stop serving and free the port.
  void shutdown() override {
    if (server_) server_->stop();
  }

 private:
  void start_server(const std::string& listen, const std::string& web_config) {
    HttpListenerOptions o;
    try {
      std::tie(o.host, o.port) = parse_listen_address(listen, "-o listen");
    } catch (const std::invalid_argument& e) {
      throw SinkUsageError(fmt::format("sink 'prometheus': {}", e.what()));
    }
    // Scrapes are answered on the listener's I/O thread from the last round's values (rendering never waits on a
    // collector); a scrape has no body.
    o.workers = 0;
    o.max_body = 0;
    o.max_connections = 64;
    if (!web_config.empty()) {
      // A bad file is a usage error (exit 2) naming it, before anything is served.
      try {
        apply_web_config(o, load_web_config(web_config));
      } catch (const std::runtime_error& e) {
        throw SinkUsageError(fmt::format("sink 'prometheus': web_config_file: {}", e.what()));
      }
    }
    try {
      server_ = std::make_unique<HttpListener>(o, [this](const HttpRequest& req) { return serve(req); });
    } catch (const std::runtime_error& e) {
      throw SinkError(fmt::format("sink 'prometheus': {}", e.what()));
    }
    server_->start();
    if (log_)
      log_->info("prometheus sink: serving {}://{}:{}/metrics{}", o.tls ? "https" : "http", o.host, server_->port(),
                 o.auth ? " (authentication required)" : "");
  }

  HttpReply serve(const HttpRequest& req) {
    if (req.method != "GET" && req.method != "HEAD")
      return {405, "text/plain; charset=utf-8", "only GET and HEAD are served\n", "Allow: GET, HEAD\r\n"};
    if (req.too_large) return {413, "text/plain; charset=utf-8", "a scrape has no body\n", ""};
    if (req.path == "/metrics") return {200, "text/plain; version=0.0.4; charset=utf-8", store_.render(), ""};
    if (req.path == "/") return {200, "text/html", "<html><body><a href=\"/metrics\">/metrics</a></body></html>\n", ""};
    return {404, "text/plain; charset=utf-8", "not found; metrics are on /metrics\n", ""};
  }

  void write_textfile() {
    std::string tmp = fmt::format("{}.tmp.{}", textfile_, ::getpid());
    std::string text = store_.render();
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) throw SinkError(fmt::format("sink 'prometheus': cannot write '{}'", tmp));
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = (std::fclose(f) == 0) && ok;
    if (!ok || std::rename(tmp.c_str(), textfile_.c_str()) != 0) {
      std::remove(tmp.c_str());
      throw SinkError(fmt::format("sink 'prometheus': cannot write '{}'", textfile_));
    }
  }

  std::shared_ptr<spdlog::logger> log_;
  PrometheusStore store_;
  std::string textfile_;
  std::unique_ptr<HttpListener> server_;
};

const bool kPrometheusSinkRegistered = register_sink({
    "prometheus",
    "Latest value of every measurement, served on /metrics and/or written to a textfile (format 0.0.4).",
    {
        {"listen", "str",
         "HOST:PORT to serve /metrics on (:PORT: every IPv4 address, 0.0.0.0; port 0 picks a free one; a port over "
         "65535 is an error); for daemons",
         ""},
        {"textfile", "path", "file rewritten atomically after each round, for node_exporter's textfile collector", ""},
        {"web_config_file", "path",
         "web config of /metrics in Prometheus exporter-toolkit's format (YAML): tls_server_config (cert_file, "
         "key_file, client_ca_file, client_auth_type, min_version, ...), basic_auth_users (bcrypt hashes), "
         "http_server_config.headers; relative paths from the file's directory",
         ""},
    },
    [](const SinkOptions& o, const SinkContext& ctx) { return std::make_unique<PrometheusSink>(o, ctx); },
});

}  // namespace
}  // namespace gcm

// prometheus: keeps the latest value of every measurement and serves it on /metrics (-o listen=HOST:PORT) and/or
// writes it atomically to a file for node_exporter's textfile collector (-o textfile=PATH) after each round.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "core/tiny_http_server.h"
#include "sinks/prometheus_store.h"
#include "sinks/sink.h"

namespace gcm {
namespace {

class PrometheusSink : public Sink {
 public:
  PrometheusSink(const SinkOptions& o, const SinkContext& ctx) : log_(ctx.log) {
    textfile_ = o.get_string("textfile");
    std::string listen = o.get_string("listen");
    if (listen.empty() && textfile_.empty())
      throw SinkUsageError("sink 'prometheus' needs -o listen=HOST:PORT (serve /metrics) or -o textfile=PATH");
    if (!listen.empty()) start_server(listen);
  }

  ~PrometheusSink() override {
    if (server_) server_->stop();
  }

  void begin_round(const BatchInfo& info) override { store_.begin_round(*info.schema); }
  void write(const Record& r) override { store_.add(r); }
  void end_round(const BatchInfo& info) override {
    store_.end_round(*info.schema);
    if (!textfile_.empty()) write_textfile();
  }

 private:
  void start_server(const std::string& listen) {
    size_t colon = listen.rfind(':');
    if (colon == std::string::npos)
      throw SinkUsageError(fmt::format("sink 'prometheus': listen='{}' is not HOST:PORT", listen));
    std::string host = listen.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host.empty()) host = "0.0.0.0";
    int port = 0;
    try {
      port = std::stoi(listen.substr(colon + 1));
    } catch (...) {
      throw SinkUsageError(fmt::format("sink 'prometheus': listen='{}' has no valid port", listen));
    }
    try {
      server_ = std::make_unique<TinyHttpServer>(host, port, [this](std::string_view, std::string_view path) {
        if (path == "/metrics") return HttpAnswer{200, "text/plain; version=0.0.4; charset=utf-8", store_.render()};
        if (path == "/") return HttpAnswer{200, "text/html", "<html><body><a href=\"/metrics\">/metrics</a></body></html>\n"};
        return HttpAnswer{404, "text/plain; charset=utf-8", "not found; metrics are on /metrics\n"};
      });
    } catch (const std::runtime_error& e) {
      throw SinkError(fmt::format("sink 'prometheus': {}", e.what()));
    }
    server_->start();
    if (log_) log_->info("prometheus sink: serving http://{}:{}/metrics", host, server_->port());
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
  std::unique_ptr<TinyHttpServer> server_;
};

const bool registered = register_sink({
    "prometheus",
    "Latest value of every measurement, served on /metrics and/or written to a textfile (format 0.0.4).",
    {
        {"listen", "str", "HOST:PORT to serve /metrics on (port 0 picks a free one); for daemons", ""},
        {"textfile", "path", "file rewritten atomically after each round, for node_exporter's textfile collector",
         ""},
    },
    [](const SinkOptions& o, const SinkContext& ctx) { return std::make_unique<PrometheusSink>(o, ctx); },
});

}  // namespace
}  // namespace gcm

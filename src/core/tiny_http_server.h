// A minimal HTTP/1.1 server for GET endpoints such as /metrics: one background thread, one connection at a time,
// every read and write bounded by a timeout, `Connection: close` after each answer.
//
// Written by hand because the Debian build of cpp-httplib is a shared library linked with OpenSSL and Brotli whose
// loading costs about 11 ms at every start of every gcm command (measured with perf stat), while serving a scrape
// needs nothing more than this. Clients that need more (OTLP receivers) use a library.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

namespace gcm {

struct HttpAnswer {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class TinyHttpServer {
 public:
  using Handler = std::function<HttpAnswer(std::string_view method, std::string_view path)>;

  // Binds HOST:PORT at once (port 0 picks a free port); throws std::runtime_error naming the address on failure.
  TinyHttpServer(const std::string& host, int port, Handler handler);
  ~TinyHttpServer();
  TinyHttpServer(const TinyHttpServer&) = delete;
  TinyHttpServer& operator=(const TinyHttpServer&) = delete;

  int port() const { return port_; }
  void start();
  void stop();

 private:
  void serve();
  void handle(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
};

}  // namespace gcm

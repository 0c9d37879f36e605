// The HTTP/1.1 server of slurm_processor's OTLP/HTTP receiver: a thread per connection (at most max_connections;
// more are answered 503 and closed), keep-alive, Content-Length and chunked request bodies, `Expect: 100-continue`
// (curl sends it for large bodies and would otherwise wait a second), a body limit enforced before the body is read
// (413), and every read bounded by an idle timeout.
//
// Written here rather than taken from cpp-httplib: the Debian build of cpp-httplib is a shared library linked with
// OpenSSL and Brotli whose loading costs about 11 ms at every start of every gcm command (see
// core/tiny_http_server.h), and all a receiver needs is this small subset of HTTP/1.1.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace gcm::processor {

struct HttpRequest {
  std::string method;
  std::string path;                            // without the query
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  bool too_large = false;  // the body exceeds max_body and was not read: the handler answers 413
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::string extra_headers;  // "Name: value\r\n" lines
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 4318;  // 0: any free port
  size_t max_body = 16u << 20;
  int max_connections = 256;
  std::chrono::seconds idle_timeout{60};
};

class HttpServer {
 public:
  using Handler = std::function<HttpReply(const HttpRequest&)>;
  // Binds at once; throws std::runtime_error naming the address when it cannot.
  HttpServer(HttpServerOptions opts, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  void start();
  // Stops accepting, ends open connections and waits for their threads.
  void stop();

 private:
  void accept_loop();
  void serve(int fd);

  HttpServerOptions opts_;
  Handler handler_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<int> open_;  // connections being served
};

}  // namespace gcm::processor

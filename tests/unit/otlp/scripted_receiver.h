// A small OTLP/HTTP receiver of the tests' own that answers what each test scripts (status, body, content type,
// Retry-After) and records what it was sent: bodies (inflated), encodings, paths, content types, times.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/gzip.h"

namespace gcm::testing {

struct Answer {
  int status;
  std::string body;
  std::string content_type = "application/x-protobuf";
  std::string retry_after;
};

class ScriptedReceiver {
 public:
  explicit ScriptedReceiver(std::deque<Answer> answers) : answers_(std::move(answers)) {
    server_.Post(R"(/v1/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      // cpp-httplib inflates gzip bodies itself when built with zlib; inflate here only if it did not.
      bool gz = req.body.size() > 2 && req.body[0] == '\x1f' && req.body[1] == static_cast<char>(0x8b);
      bodies.push_back(gz ? inflate_bounded(req.body, SIZE_MAX) : req.body);
      encodings.push_back(req.get_header_value("Content-Encoding"));
      times.push_back(std::chrono::steady_clock::now());
      paths.push_back(req.path);
      content_types.push_back(req.get_header_value("Content-Type"));
      custom_headers.push_back(req.get_header_value("X-Tenant"));
      Answer a = answers_.empty() ? Answer{200, ""} : answers_.front();
      if (!answers_.empty()) answers_.pop_front();
      res.status = a.status;
      if (!a.retry_after.empty()) res.set_header("Retry-After", a.retry_after);
      res.set_content(a.body, a.content_type.c_str());
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~ScriptedReceiver() {
    server_.stop();
    thread_.join();
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

  std::vector<std::string> bodies, encodings, paths, content_types, custom_headers;
  std::vector<std::chrono::steady_clock::time_point> times;

 private:
  std::mutex mu_;
  std::deque<Answer> answers_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace gcm::testing

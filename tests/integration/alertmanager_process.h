// Test helper: Debian's Alertmanager (prometheus-alertmanager) on a free port with a given configuration, its
// state in the test's directory, gossip off (a lone instance must not look for peers on 9094), stopped by its pid
// when the test ends (BackgroundProcess). scripts/alertmanager.sh does the same for the demo.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "core/http_client.h"
#include "helpers.h"
#include "process.h"

namespace gcm::testing {

class AlertmanagerProcess {
 public:
  AlertmanagerProcess(const std::string& dir, const std::string& config_file)
      : dir_(dir),
        port_(free_port()),
        proc_({binary(), "--config.file=" + config_file, "--storage.path=" + dir + "/alertmanager-data",
               "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--cluster.listen-address="},
              dir + "/alertmanager.stderr") {
    HttpClient http;
    bool ready = eventually(
        [&] {
          try {
            return http.get(url() + "/-/ready", std::chrono::seconds(2)).status == 200;
          } catch (const std::exception&) {
            return false;
          }
        },
        std::chrono::seconds(30));
    if (!ready) throw std::runtime_error("Alertmanager did not start: " + read_text(dir + "/alertmanager.stderr"));
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  // GET /api/v2/alerts: the alerts Alertmanager holds now (active, silenced and inhibited ones alike).
  nlohmann::json alerts() {
    HttpClient http;
    auto r = http.get(url() + "/api/v2/alerts", std::chrono::seconds(5));
    if (r.status != 200) return nlohmann::json::array();
    return nlohmann::json::parse(r.body);
  }
  std::string log() const { return read_text(dir_ + "/alertmanager.stderr"); }
  // Debian names it prometheus-alertmanager; upstream tarballs alertmanager.
  static std::string binary() {
    for (const char* name : {"prometheus-alertmanager", "alertmanager"})
      if (!find_executable(name).empty()) return name;
    return "";
  }

 private:
  std::string dir_;
  int port_;
  BackgroundProcess proc_;
};

}  // namespace gcm::testing

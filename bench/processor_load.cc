// Whole-process load run of `gcm slurm_processor` on loopback: a downstream of its own (cpp-httplib, answers 200),
// the processor started under /usr/bin/time -v with the mapping-files source on 8 fake GPUs, and CLIENTS threads
// POSTing dcgm-like metric requests for SECONDS. Prints throughput, the latency of a request through the processor
// against the same request sent straight to the downstream (the baseline; the difference is the latency added),
// the processor's RSS during the run, its CPU time and the data points per CPU second. With PROTOCOL grpc the clients
// send to the processor's OTLP/gRPC receiver instead (the transport module's client, libgcm_otlp_grpc.so beside GCM).
// With HOSTILE > 0, that many sockets trickle request heads at the HTTP port all along, a byte every 2 s, and
// reconnect whenever they are cut (the slow-head attack); GET /health is asked every 20 ms throughout and its
// latency reported, with and without them.
// Usage: [MAX_CONNECTIONS=N] processor_load GCM FAKE_NVML SECONDS CLIENTS HOSTS_PER_REQUEST [http|grpc] [HOSTILE]
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/http_client.h"
#include "load_stats.h"
#include "metrics_service.pb.h"
#include "otlp/grpc_loader.h"

namespace {

using gcm::bench::pct;
using gcm::bench::rss_kib;
namespace pbc = opentelemetry::proto::common::v1;
using Clock = std::chrono::steady_clock;

void put(google::protobuf::RepeatedPtrField<pbc::KeyValue>* a, const std::string& k, const std::string& v) {
  auto* kv = a->Add();
  kv->set_key(k);
  kv->mutable_value()->set_string_value(v);
}

std::pair<std::string, int> request(int hosts) {
  opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest req;
  int points = 0;
  for (int h = 0; h < hosts; ++h) {
    auto* sm = req.add_resource_metrics()->add_scope_metrics();
    for (int m = 0; m < 20; ++m) {
      auto* metric = sm->add_metrics();
      metric->set_name("DCGM_FI_DEV_METRIC_" + std::to_string(m));
      for (int g = 0; g < 8; ++g, ++points) {
        auto* p = metric->mutable_gauge()->add_data_points();
        p->set_time_unix_nano(1700000000000000000ull);
        p->set_as_double(42.5 + g);
        put(p->mutable_attributes(), "gpu", std::to_string(g));
        put(p->mutable_attributes(), "UUID", "GPU-0000000" + std::to_string(g) + "-aaaa-bbbb-cccc-dddddddddddd");
        put(p->mutable_attributes(), "device", "nvidia" + std::to_string(g));
        put(p->mutable_attributes(), "modelName", "NVIDIA H100 80GB HBM3");
      }
    }
  }
  return {req.SerializeAsString(), points};
}

// One export request to the processor (or the downstream): true when it was accepted whole.
using Send = std::function<bool()>;

Send http_sender(const std::string& url, const std::string& body) {
  auto http = std::make_shared<gcm::HttpClient>();
  return [http, url, &body] {
    try {
      auto res = http->post(url, body, {"Content-Type: application/x-protobuf"}, std::chrono::seconds(10));
      return res.status == 200 && res.body.empty();
    } catch (const std::exception&) {  // no answer in 10 s, or the connection refused: a failed request
      return false;
    }
  };
}

Send grpc_sender(const std::string& target, const std::string& body) {
  auto call = gcm::otlp::load_grpc_transport();
  return [call, target, &body] {
    char response[256], message[256];
    size_t len = 0;
    int code = call(target.c_str(), 0, "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export", body.data(),
                    body.size(), 10000, nullptr, 0, response, sizeof response, &len, message, sizeof message);
    return code == 0 && len == 0;
  };
}

std::vector<double> latencies(const Send& send, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    if (!send()) throw std::runtime_error("a request was not accepted");
    out.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  return out;
}

int connect_to(int port) {
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(s);
    return -1;
  }
  return s;
}

// `count` sockets sending a request head a byte every 2 s, reconnecting when the server cuts one.
class Tricklers {
 public:
  Tricklers(int port, int count) : port_(port), fds_(static_cast<size_t>(count), -1) {
    thread_ = std::thread([this] { run(); });
  }
  ~Tricklers() {
    stop_ = true;
    thread_.join();
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
  }
  uint64_t reconnects() const { return reconnects_; }

 private:
  void run() {
    const std::string head = "POST /v1/metrics HTTP/1.1\r\nContent-Type: application/x-protobuf\r\nX-Pad: ";
    size_t step = 0;
    while (!stop_) {
      for (int& fd : fds_) {
        if (fd < 0) {
          fd = connect_to(port_);
          if (fd >= 0) ++reconnects_;
        }
        if (fd >= 0 && ::send(fd, &head[step % head.size()], 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
          ::close(fd);
          fd = -1;
        }
      }
      ++step;
      for (int i = 0; i < 20 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  int port_;
  std::vector<int> fds_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> reconnects_{0};
  std::thread thread_;
};

// GET /health every 20 ms until stopped; the latencies in microseconds (a failure counts as 10 s).
class HealthProbe {
 public:
  explicit HealthProbe(std::string url) : url_(std::move(url)) {
    thread_ = std::thread([this] {
      gcm::HttpClient http;
      while (!stop_) {
        auto t0 = Clock::now();
        bool ok = false;
        try {
          ok = http.get(url_, std::chrono::seconds(10)).status == 200;
        } catch (const std::exception&) {
        }
        double us = ok ? std::chrono::duration<double, std::micro>(Clock::now() - t0).count() : 1e7;
        {
          std::lock_guard lock(mu_);
          latencies_.push_back(us);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  }
  std::vector<double> stop() {
    stop_ = true;
    thread_.join();
    return latencies_;
  }

 private:
  std::string url_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<double> latencies_;
  std::thread thread_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6 || argc > 8) {
    std::cerr << "usage: processor_load GCM FAKE_NVML SECONDS CLIENTS HOSTS_PER_REQUEST [http|grpc] [HOSTILE]\n";
    return 2;
  }
  gcm::bench::raise_open_files_limit();
  bool grpc = argc >= 7 && std::string(argv[6]) == "grpc";
  int hostile = argc == 8 ? std::stoi(argv[7]) : 0;
  if (grpc)
    setenv("GCM_OTLP_GRPC_MODULE", (std::filesystem::path(argv[1]).parent_path() / "libgcm_otlp_grpc.so").c_str(), 1);
  std::string gcm = argv[1], fake_nvml = argv[2];
  double seconds = std::stod(argv[3]);
  int clients = std::stoi(argv[4]);
  auto [body, points_per_request] = request(std::stoi(argv[5]));

  std::atomic<uint64_t> down_bytes{0}, down_requests{0};
  httplib::Server downstream;
  downstream.Post(R"(/v1/.*)", [&](const httplib::Request& req, httplib::Response& res) {
    down_bytes += req.body.size();
    ++down_requests;
    res.status = 200;
  });
  int down_port = downstream.bind_to_any_port("127.0.0.1");
  std::thread down_thread([&] { downstream.listen_after_bind(); });
  while (!downstream.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  std::string dir = std::filesystem::temp_directory_path() / fmt::format("gcm-proc-load-{}", ::getpid());
  std::filesystem::create_directories(dir + "/map");
  std::ofstream scenario(dir + "/scenario.json");
  scenario << R"({"devices":[)";
  for (int g = 0; g < 8; ++g) {
    scenario << (g ? "," : "") << fmt::format(R"({{"uuid":"GPU-{}"}})", g);
    std::ofstream(dir + "/map/" + std::to_string(g)) << 1000 + g / 2 << "\n";
  }
  scenario << "]}";
  scenario.close();

  int out[2];
  if (pipe(out) != 0) return 1;
  pid_t time_pid = fork();
  if (time_pid == 0) {
    dup2(out[1], 1);
    setenv("GCM_NVML_LIBRARY", fake_nvml.c_str(), 1);
    setenv("GCM_FAKE_NVML_SCENARIO", (dir + "/scenario.json").c_str(), 1);
    std::string downstream_url = fmt::format("http://127.0.0.1:{}", down_port);
    // With gRPC the HTTP receiver listens too (it always does) but gets nothing.
    // MAX_CONNECTIONS="" runs a build older than --max-connections (a baseline).
    const char* mc = std::getenv("MAX_CONNECTIONS");
    std::string max_connections = mc ? mc : "4096";
    std::vector<std::string> args = {"time",
                                     "-v",
                                     "-o",
                                     dir + "/time.txt",
                                     gcm,
                                     "slurm_processor",
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--grpc-listen",
                                     grpc ? "127.0.0.1:0" : "",
                                     "--downstream",
                                     downstream_url,
                                     "--attribution",
                                     "mapping-files",
                                     "--gpu-job-mapping-dir",
                                     dir + "/map",
                                     "--log-folder",
                                     dir,
                                     "--queue-size",
                                     "256"};
    if (!max_connections.empty()) args.insert(args.end(), {"--max-connections", max_connections});
    std::vector<char*> argv_c;
    for (auto& a : args) argv_c.push_back(a.data());
    argv_c.push_back(nullptr);
    execv("/usr/bin/time", argv_c.data());
    _exit(127);
  }
  close(out[1]);
  auto read_line = [&] {
    std::string line;
    char c;
    while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
    return line;
  };
  std::string line = read_line();
  if (line.find("listening on") == std::string::npos) {
    std::cerr << "slurm_processor did not start: " << line << "\n";
    return 1;
  }
  int http_port = std::stoi(line.substr(line.rfind(':') + 1));
  std::string url = fmt::format("http://127.0.0.1:{}/v1/metrics", http_port);
  std::string health_url = fmt::format("http://127.0.0.1:{}/health", http_port);
  std::string grpc_target;
  if (grpc) {
    line = read_line();
    if (line.find("OTLP/gRPC listening on") == std::string::npos) {
      std::cerr << "slurm_processor's gRPC receiver did not start: " << line << "\n";
      return 1;
    }
    grpc_target = "127.0.0.1:" + line.substr(line.rfind(':') + 1);
  }
  auto sender = [&] { return grpc ? grpc_sender(grpc_target, body) : http_sender(url, body); };
  pid_t proc_pid = -1;
  {
    std::ifstream children(fmt::format("/proc/{}/task/{}/children", time_pid, time_pid));
    children >> proc_pid;
  }
  std::string direct = fmt::format("http://127.0.0.1:{}/v1/metrics", down_port);

  // Latency of one request at a time, straight to the downstream and through the processor.
  auto base = latencies(http_sender(direct, body), 200);
  auto via = latencies(sender(), 200);
  long rss_idle = rss_kib(proc_pid);
  {
    HealthProbe idle_probe(health_url);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    auto h = idle_probe.stop();
    fmt::print("GET /health alone: p50 {:.0f} us p99 {:.0f} us\n", pct(h, 0.5), pct(h, 0.99));
  }
  std::unique_ptr<Tricklers> tricklers;
  if (hostile > 0) tricklers = std::make_unique<Tricklers>(http_port, hostile);
  HealthProbe probe(health_url);

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> sent{0}, failed{0};
  std::vector<std::vector<double>> lat(clients);
  std::vector<std::thread> threads;
  auto t0 = Clock::now();
  for (int i = 0; i < clients; ++i)
    threads.emplace_back([&, i] {
      Send send = sender();
      while (!stop) {
        auto s = Clock::now();
        bool ok = send();
        lat[i].push_back(std::chrono::duration<double, std::micro>(Clock::now() - s).count());
        (ok ? sent : failed)++;
      }
    });
  std::vector<long> rss;
  while (Clock::now() - t0 < std::chrono::duration<double>(seconds)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    rss.push_back(rss_kib(proc_pid));
  }
  stop = true;
  for (auto& t : threads) t.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  auto health = probe.stop();
  uint64_t reconnects = tricklers ? tricklers->reconnects() : 0;
  tricklers.reset();
  std::vector<double> all;
  for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
  ::kill(proc_pid, SIGTERM);
  int st = 0;
  waitpid(time_pid, &st, 0);
  downstream.stop();
  down_thread.join();

  gcm::bench::TimeReport report = gcm::bench::read_time_report(dir + "/time.txt");
  double user = report.user_s, sys = report.system_s;
  long max_rss = report.max_rss_kib;
  uint64_t points = (sent + 200) * static_cast<uint64_t>(points_per_request);
  fmt::print("request ({}): {} points, {} bytes; {} clients for {:.1f} s\n", grpc ? "OTLP/gRPC" : "OTLP/HTTP",
             points_per_request, body.size(), clients, elapsed);
  fmt::print("throughput: {:.0f} requests/s, {:.0f} points/s (wall), {} refused or failed\n", sent / elapsed,
             sent * points_per_request / elapsed, failed.load());
  fmt::print(
      "processor CPU: {:.2f} s user + {:.2f} s sys -> {:.0f} points per CPU second (whole process: HTTP, "
      "decode, enrich, encode, forward)\n",
      user, sys, points / std::max(1e-9, user + sys));
  fmt::print(
      "latency one at a time: direct p50 {:.0f} us p99 {:.0f} us; via slurm_processor p50 {:.0f} us p99 {:.0f} us; "
      "added p50 {:.0f} us ({:.2f}x)\n",
      pct(base, 0.5), pct(base, 0.99), pct(via, 0.5), pct(via, 0.99), pct(via, 0.5) - pct(base, 0.5),
      pct(via, 0.5) / std::max(1.0, pct(base, 0.5)));
  fmt::print("latency under load: p50 {:.0f} us p99 {:.0f} us\n", pct(all, 0.5), pct(all, 0.99));
  fmt::print(
      "GET /health under load with {} trickling sockets ({} connections made, cut at their head deadline and "
      "made again): {} probes, p50 {:.0f} us p99 {:.0f} us max {:.0f} us\n",
      hostile, reconnects, health.size(), pct(health, 0.5), pct(health, 0.99), pct(health, 1.0));
  std::string rs;
  for (long r : rss) rs += fmt::format("{} ", r / 1024);
  fmt::print("processor RSS: idle {} MiB; under load (MiB, every 0.5 s): {}; max {} MiB\n", rss_idle / 1024, rs,
             max_rss / 1024);
  fmt::print("downstream received {} requests, {} MiB\n", down_requests.load(), down_bytes.load() >> 20);
  std::filesystem::remove_all(dir);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

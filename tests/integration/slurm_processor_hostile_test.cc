// `gcm slurm_processor` against hostile peers and a hostile local user: slow sockets that once locked every client
// out (`/health` included), sizes that wrapped its checks, and a planted slurmctld cache file.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/http_client.h"
#include "helpers.h"
#include "slurm_processor_process.h"

namespace gcm::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

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

// What the server sends until it closes, or until the timeout.
std::string read_until_closed(int s, std::chrono::milliseconds timeout) {
  std::string out;
  for (auto until = Clock::now() + timeout; Clock::now() < until;) {
    pollfd p{s, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    ssize_t n = ::recv(s, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

int port_of(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

TEST(SlurmProcessorHostile, TricklingSocketsDoNotLockOutHealthAndAreCutAtTheirDeadline) {
  auto dir = temp_dir("slurm-processor-hostile");
  ProcessorProcess proc(dir, {"--downstream", "http://127.0.0.1:9", "--attribution", "slurmd-local", "--scontrol",
                              "/bin/false", "--header-timeout", "1", "--max-connections", "512"});
  int port = port_of(proc.url);
  std::vector<int> slow;
  for (int i = 0; i < 256; ++i) {
    int s = connect_to(port);
    ASSERT_GE(s, 0);
    slow.push_back(s);
  }
  std::atomic<bool> done{false};
  std::thread trickler([&] {
    const std::string head = "POST /v1/metrics HTTP/1.1\r\nContent-Type: application/x-protobuf\r\n";
    for (size_t i = 0; i < head.size() && !done; ++i) {
      for (int s : slow) (void)!::send(s, &head[i], 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(200ms);
    }
  });
  HttpClient http;
  std::chrono::nanoseconds slowest{0};
  for (int i = 0; i < 20; ++i) {
    auto t0 = Clock::now();
    auto res = http.get(proc.url + "/health", 2s);
    slowest = std::max(slowest, Clock::now() - t0);
    EXPECT_EQ(res.status, 200) << "round " << i;
    std::this_thread::sleep_for(100ms);
  }
  std::cout << "slowest /health while 256 sockets trickle: "
            << std::chrono::duration_cast<std::chrono::microseconds>(slowest).count() << " us\n";
  // Every trickling socket was cut at its 1 s head deadline, however steadily it sent.
  std::string cut = read_until_closed(slow[0], 5s);
  EXPECT_EQ(cut.rfind("HTTP/1.1 408", 0), 0u) << cut;
  done = true;
  trickler.join();
  for (int s : slow) ::close(s);
  auto metrics = http.get(proc.url + "/metrics", 5s).body;
  auto closed_by_timeout = [&] {
    size_t p = metrics.find("gcm_slurm_processor_http_connections_closed_total{reason=\"timeout\"} ");
    return p == std::string::npos ? -1 : std::stol(metrics.substr(metrics.find('}', p) + 2));
  };
  EXPECT_GE(closed_by_timeout(), 256) << metrics;
  EXPECT_EQ(proc.stop(), 0);
  std::filesystem::remove_all(dir);
}

TEST(SlurmProcessorHostile, SizesThatWouldWrapAreRefusedBeforeTheBodyIsRead) {
  auto dir = temp_dir("slurm-processor-sizes");
  ProcessorProcess proc(dir, {"--downstream", "http://127.0.0.1:9", "--attribution", "slurmd-local", "--scontrol",
                              "/bin/false", "--max-request-size", "1"});
  int port = port_of(proc.url);
  const std::string chunked =
      "POST /v1/metrics HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const std::string& attack :
       {chunked + "2\r\n{}\r\nffffffffffffffff\r\n" + std::string(65536, 'a'),
        chunked + "2\r\n{}\r\n10000000000000001\r\n",
        std::string("POST /v1/metrics HTTP/1.1\r\nContent-Length: 18446744073709551615\r\n\r\n")}) {
    int s = connect_to(port);
    ASSERT_GE(s, 0);
    (void)!::send(s, attack.data(), attack.size(), MSG_NOSIGNAL);
    std::string answer = read_until_closed(s, 5s);
    ::close(s);
    EXPECT_TRUE(answer.rfind("HTTP/1.1 413", 0) == 0 || answer.rfind("HTTP/1.1 400", 0) == 0) << answer;
  }
  // Request smuggling: both framings, or two lengths, are refused and what follows is never answered.
  int s = connect_to(port);
  std::string smuggle =
      "POST /v1/metrics HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
      "GET /health HTTP/1.1\r\n\r\n";
  (void)!::send(s, smuggle.data(), smuggle.size(), MSG_NOSIGNAL);
  std::string answer = read_until_closed(s, 5s);
  ::close(s);
  EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
  EXPECT_EQ(answer.find("\"status\""), std::string::npos) << "the smuggled /health was answered: " << answer;
  HttpClient http;
  EXPECT_EQ(http.get(proc.url + "/health", 5s).status, 200);
  EXPECT_EQ(proc.stop(), 0);
  std::filesystem::remove_all(dir);
}

TEST(SlurmProcessorHostile, ACacheFileAnotherUserCouldHavePlantedIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the planted file to another user";
  auto dir = temp_dir("slurm-processor-cache");
  std::string planted = dir + "/slurmprocessor_cache.json";
  std::ofstream(planted) << R"({"0": [{"job_id": 666, "user": "mallory"}]})";
  ASSERT_EQ(::chown(planted.c_str(), 65534, 65534), 0);
  auto r = run_gcm({"slurm_processor", "--listen", "127.0.0.1:0", "--downstream", "http://127.0.0.1:9",
                    "--cache-filepath", planted, "--log-folder", dir});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("owned by uid 65534"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(planted), std::string::npos) << r.err;
  ASSERT_EQ(::chown(planted.c_str(), 0, 0), 0);
  ASSERT_EQ(::chmod(planted.c_str(), 0666), 0);
  r = run_gcm({"slurm_processor", "--listen", "127.0.0.1:0", "--downstream", "http://127.0.0.1:9", "--cache-filepath",
               planted, "--log-folder", dir});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("writable by other users"), std::string::npos) << r.err;
  // A directory where anyone may rename files (world-writable, no sticky bit) cannot keep a cache safe either.
  std::string open_dir = dir + "/open";
  std::filesystem::create_directory(open_dir);
  ASSERT_EQ(::chmod(open_dir.c_str(), 0777), 0);
  r = run_gcm({"slurm_processor", "--listen", "127.0.0.1:0", "--downstream", "http://127.0.0.1:9", "--cache-filepath",
               open_dir + "/cache.json", "--log-folder", dir});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("directory"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gcm::testing

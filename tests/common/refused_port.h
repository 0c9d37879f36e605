// Local TCP ports that refuse every connection for as long as they are held: a socket bound to the port that never
// listens. A connect to one is refused, as to a receiver that is down, and no other process can bind it meanwhile.
// A port that was merely free a moment ago can be taken by another test process (the unit shards and the
// integration shards run side by side, the latter all in the same range) and answer: once a parallel test's server
// took a port during an outage and answered the sender's requests in its receiver's place. Shared by the unit and
// the integration tests.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace gcm::testing {

class RefusedPort {
 public:
  // Any free port of 127.0.0.1.
  RefusedPort() { bind_to(INADDR_LOOPBACK, 0, false); }
  // `port` on every address (where the receiver that will take it over listens), with SO_REUSEADDR so that it binds
  // over the connections a killed receiver left in TIME_WAIT. Throws when another socket holds it.
  explicit RefusedPort(int port) { bind_to(INADDR_ANY, port, true); }
  ~RefusedPort() { release(); }
  RefusedPort(const RefusedPort&) = delete;
  RefusedPort& operator=(const RefusedPort&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Just before the receiver that binds the port starts.
  void release() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  void bind_to(in_addr_t address, int port, bool reuse) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (reuse && fd_ >= 0) ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(address);
    a.sin_port = htons(static_cast<uint16_t>(port));
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      release();
      throw std::runtime_error(port ? "cannot hold port " + std::to_string(port) + ": it is in use"
                                    : std::string("RefusedPort: cannot bind a local port"));
    }
    port_ = ntohs(a.sin_port);
  }

  int fd_ = -1;
  int port_ = 0;
};

// Several ports held together: all of them, or none (the constructor throws, holding nothing).
class RefusedPorts {
 public:
  explicit RefusedPorts(const std::vector<int>& ports) {
    for (int port : ports) held_.push_back(std::make_unique<RefusedPort>(port));
  }
  void release() {
    for (auto& p : held_) p->release();
  }

 private:
  std::vector<std::unique_ptr<RefusedPort>> held_;
};

}  // namespace gcm::testing

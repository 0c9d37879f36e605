// Fixtures for the tests of bounded reads: a FIFO that blocks a reader forever, and a path under /tmp of this
// process.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace gcm::testing {

inline std::string temp_path(const std::string& stem) {
  return (std::filesystem::temp_directory_path() / (stem + std::to_string(::getpid()))).string();
}

// A FIFO with a writer that holds it open and sends nothing: a reader waits for data forever.
struct SilentFifo {
  std::string path = temp_path("gcm-fifo-");
  int writer = -1;
  SilentFifo() {
    ::unlink(path.c_str());
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    writer = ::open(path.c_str(), O_RDWR | O_CLOEXEC);  // O_RDWR: a FIFO end that opens without a peer
    EXPECT_GE(writer, 0);
  }
  ~SilentFifo() {
    ::close(writer);
    ::unlink(path.c_str());
  }
};

}  // namespace gcm::testing

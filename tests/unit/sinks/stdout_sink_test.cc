// The stdout sink shares standard output with the log (--stdout): a chunk larger than the sink's 64 KiB buffer is
// written in pieces, and a log line that comes between two of them, from this thread or another, must come out after
// the chunk's line, not inside it.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/logging.h"
#include "sink_fixtures.h"

namespace gcm {
namespace {

using namespace gcm::sink_testing;
using gcm::testing::slurp;

// Standard output of this process goes to a file for the scope's lifetime.
class StdoutToFile {
 public:
  explicit StdoutToFile(const std::string& path) : saved_(::dup(STDOUT_FILENO)) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ::dup2(fd, STDOUT_FILENO);
    ::close(fd);
  }
  ~StdoutToFile() {
    ::dup2(saved_, STDOUT_FILENO);
    ::close(saved_);
  }

 private:
  int saved_;
};

class StdoutSinkFiles : public SinkFiles {};

TEST_F(StdoutSinkFiles, LogLinesThatComeWhileAChunkIsWrittenFollowItsLine) {
  const std::string out = path("stdout");
  {
    StdoutToFile redirect(out);
    auto log = setup_logging({.name = "stdout_sink_test", .to_stdout = true});
    auto sink = make_sink("stdout", {}, {});
    BatchInfo info;
    info.data_type = DataType::Log;
    sink->begin_chunk(info);
    const std::string big(1000, 'x');  // 300 records of 1 KB: the buffer is written out several times
    for (int i = 0; i < 300; ++i) {
      sink->write(rec(log_schema(), big, i));
      if (i == 100) log->info("logged from the sink's thread while its line is open");
      if (i == 200) std::thread([&] { log->warn("logged from another thread"); }).join();
    }
    sink->end_chunk();
    log->info("after the chunk");
    sink->begin_chunk(info);
    sink->write(rec(log_schema(), "small", 1));
    sink->end_chunk();
    sink->shutdown();
  }
  std::istringstream lines(slurp(out));
  std::vector<std::string> got;
  for (std::string line; std::getline(lines, line);) got.push_back(line);
  ASSERT_EQ(got.size(), 5u) << slurp(out).substr(0, 2000);
  auto chunk = nlohmann::json::parse(got[0]);  // throws where a log line landed inside it
  ASSERT_EQ(chunk.size(), 300u);
  EXPECT_EQ(chunk[299]["value"], 299);
  EXPECT_NE(got[1].find("[INFO] - [stdout_sink_test] - logged from the sink's thread"), std::string::npos) << got[1];
  EXPECT_NE(got[2].find("[WARNING] - [stdout_sink_test] - logged from another thread"), std::string::npos) << got[2];
  EXPECT_NE(got[3].find("after the chunk"), std::string::npos) << got[3];
  EXPECT_EQ(nlohmann::json::parse(got[4])[0]["cluster"], "small");
}

// A chunk that never reaches end_chunk (its collector failed, its write threw) still lets the held log lines out:
// at the next chunk, or when the sink goes away.
TEST_F(StdoutSinkFiles, AnAbandonedChunkDoesNotHoldTheLogBack) {
  const std::string out = path("stdout");
  {
    StdoutToFile redirect(out);
    auto log = setup_logging({.name = "stdout_sink_test", .to_stdout = true});
    auto sink = make_sink("stdout", {}, {});
    BatchInfo info;
    info.data_type = DataType::Log;
    sink->begin_chunk(info);
    sink->write(rec(log_schema(), "abandoned", 1));
    log->error("collecting failed");
    sink.reset();
    log->info("the sink is gone");
  }
  std::string text = slurp(out);
  size_t failed = text.find("collecting failed"), gone = text.find("the sink is gone");
  ASSERT_NE(failed, std::string::npos) << text;
  ASSERT_NE(gone, std::string::npos) << text;
  EXPECT_LT(failed, gone);
  EXPECT_LT(text.find("abandoned"), failed);
}

}  // namespace
}  // namespace gcm

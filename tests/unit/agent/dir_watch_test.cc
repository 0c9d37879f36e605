#include "agent/dir_watch.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gcm::agent {
namespace {

TEST(AgentDirWatch, SeesFilesWrittenAndRemovedAndADirectoryThatAppearsLater) {
  auto d = std::filesystem::temp_directory_path() / ("gcm-dirwatch-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  DirWatch w(d.string());
  EXPECT_FALSE(w.changed());  // no directory yet
  std::filesystem::create_directories(d);
  EXPECT_TRUE(w.changed());   // it appeared
  EXPECT_FALSE(w.changed());  // nothing since
  std::ofstream(d / "3") << "1234\n";
  EXPECT_TRUE(w.changed());
  EXPECT_FALSE(w.changed());
  std::filesystem::remove(d / "3");
  EXPECT_TRUE(w.changed());
  // The directory is removed and made again (an epilog that cleans up): still watched.
  std::filesystem::remove_all(d);
  EXPECT_TRUE(w.changed());
  std::filesystem::create_directories(d);
  EXPECT_TRUE(w.changed());
  std::ofstream(d / "0") << "7\n";
  EXPECT_TRUE(w.changed());
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace gcm::agent

#include "sinks/rotating_file.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "temp_dir.h"

namespace gcm {
namespace {

using gcm::testing::TempDir;

TEST(RotatingFile, RotatesBetweenLinesAndKeepsBackups) {
  TempDir dir;
  std::string path = dir.file("data.jsonl");
  RotatingFile f(path, 100, 2);
  std::string line(39, 'a');
  line += '\n';  // 40 bytes: two lines fit in 100, a third does not
  for (int i = 0; i < 7; ++i) f.append_lines(line);
  EXPECT_EQ(std::filesystem::file_size(path), 40u);
  EXPECT_EQ(std::filesystem::file_size(path + ".1"), 80u);
  EXPECT_EQ(std::filesystem::file_size(path + ".2"), 80u);
  EXPECT_FALSE(std::filesystem::exists(path + ".3"));
}

// Two processes append numbered lines to the same file with aggressive rotation and enough backups to keep every
// line: each line must appear exactly once, whole.
TEST(RotatingFile, TwoWriterProcessesLoseAndCorruptNothing) {
  TempDir dir;  // the children _exit, so only this process removes it
  std::string path = dir.file("shared.jsonl");
  const int kLines = 3000;
  const int kBackups = 1000;
  pid_t pids[2];
  for (int w = 0; w < 2; ++w) {
    pids[w] = fork();
    ASSERT_GE(pids[w], 0);
    if (pids[w] == 0) {
      try {
        RotatingFile f(path, 4096, kBackups);
        for (int i = 0; i < kLines; ++i) {
          std::string batch;
          batch += "{\"writer\":" + std::to_string(w) + ",\"i\":" + std::to_string(i) + ",\"pad\":\"" +
                   std::string(static_cast<size_t>(i % 97), 'x') + "\"}\n";
          f.append_lines(batch);
        }
      } catch (...) {
        _exit(1);
      }
      _exit(0);
    }
  }
  for (pid_t p : pids) {
    int status = 0;
    waitpid(p, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::map<int, std::set<int>> seen;
  size_t lines = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    if (e.path().filename().string().find(".lock") != std::string::npos) continue;
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) {
      ++lines;
      int w = -1, i = -1;
      ASSERT_EQ(std::sscanf(line.c_str(), "{\"writer\":%d,\"i\":%d,", &w, &i), 2) << "corrupt line: " << line;
      std::string expected = "{\"writer\":" + std::to_string(w) + ",\"i\":" + std::to_string(i) + ",\"pad\":\"" +
                             std::string(static_cast<size_t>(i % 97), 'x') + "\"}";
      ASSERT_EQ(line, expected);
      EXPECT_TRUE(seen[w].insert(i).second) << "duplicate line " << line;
    }
  }
  EXPECT_EQ(lines, 2u * kLines);
  EXPECT_EQ(seen[0].size(), static_cast<size_t>(kLines));
  EXPECT_EQ(seen[1].size(), static_cast<size_t>(kLines));
}

}  // namespace
}  // namespace gcm

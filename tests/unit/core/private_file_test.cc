#include "core/private_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include "fixture_records.h"
#include "temp_dir.h"

namespace gcm {
namespace {

using gcm::testing::slurp;
using gcm::testing::TempDir;

TEST(PrivateFile, WrittenWithMode0600AndReadBack) {
  TempDir dir;  // mode 0700, as mkdtemp makes it
  std::string f = dir.file("sub/cache.json");
  ASSERT_TRUE(write_private_file(f, "{\"a\": 1}"));
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(read_private_file(f).value_or("<none>"), "{\"a\": 1}");
  EXPECT_FALSE(untrusted_file_reason(f));
  EXPECT_FALSE(untrusted_file_reason(dir.file("missing.json")));
}

TEST(PrivateFile, AFileOthersCanWriteOrASymlinkIsNotTrusted) {
  TempDir dir;
  std::string f = dir.file("cache.json");
  std::ofstream(f) << "planted";
  ::chmod(f.c_str(), 0666);
  std::string why;
  EXPECT_FALSE(read_private_file(f, &why));
  EXPECT_NE(why.find("writable by other users"), std::string::npos) << why;
  ASSERT_TRUE(untrusted_file_reason(f));
  std::string target = dir.file("target");
  std::ofstream(target) << "secret";
  ::chmod(target.c_str(), 0600);
  std::string link = dir.file("link.json");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_FALSE(read_private_file(link, &why));
  EXPECT_NE(why.find("symbolic link"), std::string::npos) << why;
  EXPECT_NE(untrusted_file_reason(link).value_or("").find("symbolic link"), std::string::npos);
}

// The old writer used the predictable name <file>.tmp<pid>: a symlink planted there made root truncate its target.
TEST(PrivateFile, WritingNeverFollowsASymlinkAndReplacesOne) {
  TempDir dir;
  std::string target = dir.file("victim");
  std::ofstream(target) << "keep me";
  std::string f = dir.file("cache.json");
  ASSERT_EQ(::symlink(target.c_str(), (f + ".tmp" + std::to_string(::getpid())).c_str()), 0);
  ASSERT_EQ(::symlink(target.c_str(), f.c_str()), 0);
  ASSERT_TRUE(write_private_file(f, "new"));
  EXPECT_EQ(slurp(target), "keep me");
  struct stat st {};
  ASSERT_EQ(::lstat(f.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(slurp(f), "new");
}

TEST(PrivateFile, ADirectoryOthersCanRenameInIsNotTrusted) {
  TempDir dir;
  ::chmod(dir.path().c_str(), 0777);
  std::string f = dir.file("cache.json");
  EXPECT_NE(untrusted_file_reason(f).value_or("").find("directory"), std::string::npos);
  EXPECT_FALSE(write_private_file(f, "x"));
  ::chmod(dir.path().c_str(), 01777);  // sticky, as /tmp: others cannot rename or remove our files there
  EXPECT_FALSE(untrusted_file_reason(f));
  EXPECT_TRUE(write_private_file(f, "x"));
}

}  // namespace
}  // namespace gcm

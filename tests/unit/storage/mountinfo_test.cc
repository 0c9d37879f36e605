#include "storage/mountinfo.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gcm {
namespace {

TEST(MountInfo, ParsesAllFields) {
  auto m = parse_mountinfo_line(
      "36 35 98:0 /mnt1 /mnt/my\\040disk rw,noatime master:1 shared:2 - ext3 /dev/root rw,errors=continue");
  EXPECT_EQ(m.mount_id, "36");
  EXPECT_EQ(m.parent_id, "35");
  EXPECT_EQ(m.device_id, "98:0");
  EXPECT_EQ(m.root, "/mnt1");
  EXPECT_EQ(m.mount_point, "/mnt/my disk");
  EXPECT_EQ(m.mount_options, (std::vector<std::string>{"rw", "noatime"}));
  EXPECT_EQ(m.optional_fields, (std::vector<std::string>{"master:1", "shared:2"}));
  EXPECT_EQ(m.filesystem_type, "ext3");
  EXPECT_EQ(m.mount_source, "/dev/root");
  EXPECT_EQ(m.super_options, (std::vector<std::string>{"rw", "errors=continue"}));
}

TEST(MountInfo, NoOptionalFields) {
  auto m = parse_mountinfo_line("1 0 0:1 / / rw - rootfs rootfs rw");
  EXPECT_TRUE(m.optional_fields.empty());
  EXPECT_EQ(m.filesystem_type, "rootfs");
}

TEST(MountInfo, BadLineNamesSourceAndLine) {
  try {
    parse_mountinfo("1 0 0:1 / / rw - rootfs rootfs rw\n2 1 0:2 / /x rw shared:1 nfs\n", "mountinfo");
    FAIL();
  } catch (const MountInfoError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("mountinfo:2: ", 0), 0u) << e.what();
  }
}

TEST(MountInfo, ReferenceFixture) {
  std::string path = std::string(GCM_SOURCE_DIR) + "/../shared/fixtures/gcm/sample-proc-self-mountinfo-output.txt";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared fixtures not present: " << path;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto mounts = parse_mountinfo(ss.str(), path);
  ASSERT_EQ(mounts.size(), 3u);
  EXPECT_EQ(mounts[0].mount_point, "/logs");
  EXPECT_EQ(mounts[0].mount_source, "node101:/syslog");
  EXPECT_EQ(mounts[0].filesystem_type, "nfs");
  EXPECT_EQ(mounts[2].mount_point, "/public");
  EXPECT_EQ(mounts[2].mount_source, "node101:/public");
  EXPECT_EQ(mounts[1].mount_point, "/le/cmd");
}

}  // namespace
}  // namespace gcm

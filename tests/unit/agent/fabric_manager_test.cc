#include "agent/fabric_manager.h"

#include <stdlib.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "temp_dir.h"

namespace gcm::agent {
namespace {

using gcm::testing::TempDir;

// PATH for one test: the fake systemctl's directory, restored after.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& dir) : old_(std::getenv("PATH") ? std::getenv("PATH") : "") {
    ::setenv("PATH", dir.c_str(), 1);
  }
  ~ScopedPath() { ::setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

void fake_systemctl(const TempDir& d, const std::string& state) {
  std::filesystem::create_directories(d.file("bin"));
  std::ofstream(d.file("bin/systemctl")) << "#!/bin/sh\necho " << state << "\n[ " << state << " = active ]\n";
  std::filesystem::permissions(d.file("bin/systemctl"), std::filesystem::perms::owner_all);
}

TEST(FabricManager, OnlyANodeWithAnNvswitchNeedsItAndNoAnswerLeavesTheLastOne) {
  TempDir d;
  HostRoots roots{d.file("proc"), d.file("sys")};
  NodeHealth node;
  FabricManagerWatch watch;
  fake_systemctl(d, "inactive");
  ScopedPath path(d.file("bin") + ":/bin:/usr/bin");
  EXPECT_FALSE(has_nvswitch(roots));
  EXPECT_FALSE(watch.check(roots, std::chrono::seconds(5), node, 1));
  EXPECT_TRUE(node.active(1).empty()) << "no NVSwitch: no Fabric Manager to need";

  std::filesystem::create_directories(d.file("sys/bus/pci/drivers/nvidia-nvswitch/0000:a6:00.0"));
  EXPECT_TRUE(has_nvswitch(roots));
  EXPECT_FALSE(watch.check(roots, std::chrono::seconds(5), node, 2));
  auto active = node.active(2);
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0].reason, "fabric_manager");
  EXPECT_EQ(active[0].evidence, "NVSwitch system and nvidia-fabricmanager.service is inactive");

  {
    ScopedPath none(d.file("nothing-here"));  // systemctl cannot be found
    auto said = watch.check(roots, std::chrono::seconds(5), node, 3);
    ASSERT_TRUE(said);
    EXPECT_NE(said->find("systemctl"), std::string::npos) << *said;
    EXPECT_FALSE(watch.check(roots, std::chrono::seconds(5), node, 4)) << "said once";
    EXPECT_EQ(node.active(4).size(), 1u) << "the last answer stands";
  }
  fake_systemctl(d, "active");
  EXPECT_FALSE(watch.check(roots, std::chrono::seconds(5), node, 5));
  EXPECT_TRUE(node.active(5).empty());
}

}  // namespace
}  // namespace gcm::agent

#include "slurm/cluster_name.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gcm {
namespace {

TEST(ClusterName, FirstLineWithClusterName) {
  EXPECT_EQ(parse_cluster_name("Configuration data as of 2023\nAccountingStorageHost = db\nClusterName             = "
                               "fair_cluster\nClusterName = other\n"),
            "fair_cluster");
  EXPECT_EQ(parse_cluster_name("ClusterName=x"), "x");
  EXPECT_FALSE(parse_cluster_name("SlurmUser = slurm\n").has_value());
  EXPECT_FALSE(parse_cluster_name("ClusterName =  \n").has_value());
}

TEST(ClusterName, ReferenceScontrolShowConfigFixture) {
  std::string path = std::string(GCM_SOURCE_DIR) + "/../shared/fixtures/gcm/sample-scontrol-show-config-output.txt";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared fixtures not present: " << path;
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(parse_cluster_name(text), "cluster_name");
}

}  // namespace
}  // namespace gcm

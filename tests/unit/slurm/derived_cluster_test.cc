// derived_cluster with the reference's test cases (gcm-reference.md §1.6).
#include <gtest/gtest.h>

#include <map>

#include "slurm/derived_cluster.h"

namespace gcm::slurm {
namespace {

FieldLookup from(std::map<std::string, std::string> m) {
  return [m = std::move(m)](std::string_view key) -> std::optional<std::string_view> {
    auto it = m.find(std::string(key));
    if (it == m.end()) return std::nullopt;
    return std::string_view(it->second);
  };
}

TEST(DerivedCluster, TheReferenceCases) {
  EXPECT_EQ(derived_cluster(from({{"PARTITION", "p"}, {"CLUSTER", "c"}}), true, "x"), "c.p");
  EXPECT_EQ(derived_cluster(from({{"PARTITION", ""}}), true, "c"), "c");
  EXPECT_EQ(derived_cluster(from({{"Partition", ""}, {"NodeList", "p-node[47-50]"}}), true, "c"), "c.p");
  EXPECT_EQ(derived_cluster(from({{"Name", "relevantname_qos"}}), true, "c", true), "c.relevantname");
  EXPECT_EQ(derived_cluster(from({{"Name", "relevantname_qos"}}), true, "c"), "c");  // QOS rule only when asked
}

TEST(DerivedCluster, RulesInOrderAndTheFlagOff) {
  EXPECT_EQ(derived_cluster(from({{"PARTITION", "gpu*"}}), true, "c"), "c.gpu");
  EXPECT_EQ(derived_cluster(from({{"PartitionName", "debug"}}), true, "c"), "c.debug");
  EXPECT_EQ(derived_cluster(from({{"Node", "h100-12-003"}}), true, "c"), "c.h100");
  EXPECT_EQ(derived_cluster(from({{"Partition", "a"}, {"PartitionName", "b"}}), true, "c"), "c.a");
  EXPECT_EQ(derived_cluster(from({{"Partition", "a"}, {"cluster", "k"}, {"CLUSTER", "z"}}), true, "c"), "k.a");
  EXPECT_EQ(derived_cluster(from({{"PARTITION", "p"}}), false, "c"), "c");
  EXPECT_EQ(derived_cluster(from({}), true, "c"), "c");
}

}  // namespace
}  // namespace gcm::slurm

#include "slurm/gres.h"

#include <gtest/gtest.h>

namespace gcm::slurm {
namespace {

using Ints = std::vector<int>;

TEST(SlurmGres, StructuredForms) {
  auto one = [](std::string_view s) {
    auto l = parse_gres_list(s);
    EXPECT_EQ(l.size(), 1u) << s;
    return l.empty() ? Gres{} : l[0];
  };
  Gres g = one("gpu:ampere:8(IDX:0-7)");
  EXPECT_EQ(g.name, "gpu");
  EXPECT_EQ(g.type, "ampere");
  EXPECT_EQ(g.count, 8);
  EXPECT_EQ(g.indices, (Ints{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(g.sockets.empty());

  g = one("gpu:8");
  EXPECT_EQ(g.type, "");
  EXPECT_EQ(g.count, 8);

  g = one("gpu:a100:2(S:0-1)");
  EXPECT_EQ(g.type, "a100");
  EXPECT_EQ(g.count, 2);
  EXPECT_EQ(g.sockets, (Ints{0, 1}));
  EXPECT_TRUE(g.indices.empty());

  g = one("gpu:2(IDX:0,2)");
  EXPECT_EQ(g.count, 2);
  EXPECT_EQ(g.indices, (Ints{0, 2}));

  g = one("gpu:ampere:0(IDX:N/A)");
  EXPECT_EQ(g.count, 0);
  EXPECT_TRUE(g.indices.empty());

  g = one("gres/gpu:8");
  EXPECT_EQ(g.name, "gpu");
  EXPECT_EQ(g.count, 8);
  EXPECT_EQ(one("gres:gpu:1").count, 1);

  EXPECT_EQ(one("gpu").count, 1) << "Slurm's default count";
  EXPECT_EQ(one("gpu:tesla").type, "tesla");
  EXPECT_EQ(one("gpu:tesla").count, 1);
  EXPECT_EQ(one("gpu(IDX:0-1)").count, 2) << "old GRES_IDX form: the count is the number of indices";
  EXPECT_EQ(one("gpu:nvidia_a100-sxm4-80gb:4").type, "nvidia_a100-sxm4-80gb");
  EXPECT_EQ(one("gpu:a100_3g.20gb:1").type, "a100_3g.20gb");

  g = one("gpu:a100:no_consume:4");
  EXPECT_EQ(g.type, "a100");
  EXPECT_EQ(g.flags, std::vector<std::string>{"no_consume"});
  EXPECT_EQ(g.count, 4);

  g = one("gpu:h100:8(S:0-1,IDX:0-3,6)");
  EXPECT_EQ(g.sockets, (Ints{0, 1}));
  EXPECT_EQ(g.indices, (Ints{0, 1, 2, 3, 6}));
  EXPECT_EQ(one("gpu:1(IDX:0,FUTURE:x)").indices, Ints{0}) << "unknown detail keys are skipped";
  EXPECT_EQ(one("  gpu:gen:8  ").count, 8);
}

TEST(SlurmGres, ListsAndNulls) {
  EXPECT_TRUE(parse_gres_list("(null)").empty());
  EXPECT_TRUE(parse_gres_list("N/A").empty());
  EXPECT_TRUE(parse_gres_list("").empty());
  auto l = parse_gres_list("gpu:a100:2(IDX:0,2),gpu:v100:1(IDX:5),nic:1,shard:a100:64(S:0-1)");
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[2].name, "nic");
  EXPECT_EQ(l[3].name, "shard");
  EXPECT_EQ(gres_count(l), 3);
  EXPECT_EQ(gres_count(l, "shard"), 64);
  EXPECT_EQ(gres_indices(l), (Ints{0, 2, 5}));
}

TEST(SlurmGres, MalformedThrows) {
  for (const char* v :
       {"gpu:", "gpu::8", ":8", "gpu:8(IDX:0-7", "gpu:8)", "gpu:8(IDX:7-0)", "gpu:8(IDX:a)", "gpu:8(0-7)",
        "gpu:8(IDX:0-7)x", "gpu:1,,nic:1", "gpu:8((IDX:0))", "gpu 8", "gpu:8(IDX:0-99999999)"})
    EXPECT_THROW(parse_gres_list(v), ParseError) << v;
}

TEST(SlurmGres, ReferenceGpuCount) {
  EXPECT_EQ(gres_gpu_count("gpu:volta:8(S:0-1)"), 8);
  EXPECT_EQ(gres_gpu_count("gpu:pascal:2"), 2);
  EXPECT_EQ(gres_gpu_count("gpu:8"), 8);
  EXPECT_EQ(gres_gpu_count("gpu:ampere:8(IDX:0-7)"), 8);
  EXPECT_EQ(gres_gpu_count("gpu:ampere:0(IDX:N/A)"), 0);
  EXPECT_EQ(gres_gpu_count("N/A"), 0);
  EXPECT_EQ(gres_gpu_count("(null)"), 0);
  EXPECT_EQ(gres_gpu_count("gres/gpu:4"), 4);
  EXPECT_EQ(gres_gpu_count("gres:gpu:a100:3"), 3);
  EXPECT_EQ(gres_gpu_count("gpu:8:x"), 8) << "the reference's regex backtracks";
  EXPECT_EQ(gres_gpu_count("gpu:1080:2"), 2);
  for (const char* v : {"gpu:", "", "laser:1", "tpu:2", "gpu::8", "gpu", "gpu:a_b:", "gpu:a b:1", "gpu:a_b::1"})
    EXPECT_THROW(gres_gpu_count(v), ParseError) << v;
  // Fix: NVML-autodetected type names with '_', '-' and '.' are accepted (the reference rejected them).
  EXPECT_EQ(gres_gpu_count("gpu:nvidia_a100-sxm4-80gb:8"), 8);
  EXPECT_EQ(gres_gpu_count("gpu:nvidia_a100-sxm4-80gb:8(S:0-1)"), 8);
  EXPECT_EQ(gres_gpu_count("gpu:a100_3g.20gb:1"), 1);
  EXPECT_EQ(gres_gpu_count("gres/gpu:x-y:4"), 4);
  EXPECT_EQ(gres_or_tres_gpu_count("gres/gpu:nvidia_h100_80gb_hbm3:8"), 8);
}

TEST(SlurmGres, ReferenceTresAndFallbacks) {
  EXPECT_EQ(tres_per_node_gpu_count("gres/gpu:8"), 8);
  EXPECT_EQ(tres_per_node_gpu_count("gres:gpu:1"), 1);
  EXPECT_EQ(tres_per_node_gpu_count("N/A"), 0);
  EXPECT_THROW(tres_per_node_gpu_count("gres/gpu:a100:8"), ParseError);
  EXPECT_THROW(tres_per_node_gpu_count("gres/gpu=2"), ParseError);
  EXPECT_EQ(gres_or_tres_gpu_count("gres/gpu:8"), 8);
  EXPECT_EQ(gres_or_tres_gpu_count("gres/gpu:a100:8"), 8);
  EXPECT_EQ(gres_or_tres_gpu_count("N/A"), 0);
  EXPECT_EQ(gres_or_tres_gpu_count("gres/nic:1"), 0);
  EXPECT_EQ(gres_or_tres_gpu_count("garbage"), 0);
  EXPECT_EQ(gpus_in_gres_list("gpu:a100:2(IDX:0,2),nic:1"), 2);
  EXPECT_EQ(gpus_in_gres_list("gpu:a:1,gpu:b:3"), 3) << "the last gpu item wins";
  EXPECT_EQ(gpus_in_gres_list("nic:1"), 0);
  EXPECT_EQ(gpus_in_gres_list(""), 0);
  EXPECT_EQ(gpus_in_gres_list("gpu:nvidia_a100-sxm4-80gb:4(S:0),nic:1"), 4);
  EXPECT_THROW(gpus_in_gres_list("gpu:bad type:1"), ParseError);
}

TEST(SlurmGres, ShelperIndices) {
  EXPECT_EQ(shelper_gres_indices("gpu:ampere:1(IDX:0-2,4,5-7)"), (Ints{0, 1, 2, 4, 5, 6, 7}));
  EXPECT_EQ(shelper_gres_indices("gpu:ampere:1(IDX:)"), Ints{});
  EXPECT_EQ(shelper_gres_indices("gpu:ampere:8"), Ints{});
  EXPECT_EQ(shelper_gres_indices("gpu:ampere:8(IDX:N/A)"), Ints{});
  EXPECT_EQ(shelper_gres_indices("gpu:2(IDX:x,3)"), Ints{3}) << "non-numeric items are skipped";
  EXPECT_EQ(shelper_gres_indices(""), Ints{});
}

// JobData GRES_GPU_INDICES from slurmrestd's gres_detail (gcm-newer.md §1.6): one node's GPU indices, else null.
TEST(SlurmGres, GpuIndicesOfAOneNodeJobFromItsGresDetail) {
  EXPECT_EQ(gres_detail_gpu_indices({"gpu:ampere:4(IDX:0-3)"}), "0,1,2,3");
  EXPECT_EQ(gres_detail_gpu_indices({"gpu:a100:3(IDX:0,2,5-6)"}), "0,2,5,6");
  EXPECT_EQ(gres_detail_gpu_indices({"nic:1,gpu:fake:2(IDX:0-1)"}), "0,1");
  EXPECT_EQ(gres_detail_gpu_indices({"gpu:ampere:4(IDX:0-3)", "gpu:ampere:4(IDX:0-3)"}), std::nullopt)
      << "a job on several nodes";
  EXPECT_EQ(gres_detail_gpu_indices({}), std::nullopt);
  EXPECT_EQ(gres_detail_gpu_indices({"gpu:2(IDX:N/A)"}), std::nullopt);
  EXPECT_EQ(gres_detail_gpu_indices({"nic:1"}), std::nullopt);
  EXPECT_THROW(gres_detail_gpu_indices({"gpu:2(IDX:0-x)"}), ParseError);
}

}  // namespace
}  // namespace gcm::slurm

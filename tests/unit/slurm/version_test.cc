// slurm/version: `sinfo -V` as (major, minor).
#include "slurm/version.h"

#include <gtest/gtest.h>

#include "slurm/parse_error.h"

namespace gcm::slurm {
namespace {

TEST(SlurmVersion, MajorAndMinorOfSinfoV) {
  EXPECT_EQ(parse_slurm_version("slurm-wlm 22.05.8\n"), std::make_pair(22, 5));
  EXPECT_EQ(parse_slurm_version("slurm 24.11.4"), std::make_pair(24, 11));
  EXPECT_THROW(parse_slurm_version("garbage"), ParseError);
}

}  // namespace
}  // namespace gcm::slurm

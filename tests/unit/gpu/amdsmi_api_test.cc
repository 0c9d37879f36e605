#include "gpu/amdsmi_api.h"

#include <gtest/gtest.h>

namespace gcm::amdsmi {

TEST(AmdsmiApi, StatusNamesRoundTripWithOrWithoutThePrefix) {
  EXPECT_STREQ(status_name(STATUS_NOT_SUPPORTED), "NOT_SUPPORTED");
  EXPECT_EQ(status_from_name("NOT_SUPPORTED"), STATUS_NOT_SUPPORTED);
  EXPECT_EQ(status_from_name("AMDSMI_STATUS_DRIVER_NOT_LOADED"), STATUS_DRIVER_NOT_LOADED);
  EXPECT_EQ(status_from_name("NO_SUCH_STATUS"), -1);
  EXPECT_EQ(status_name(12345), nullptr);
}

TEST(AmdsmiApi, BdfDecodesThePackedBitFields) {
  // 0000:c1:00.1 packed as amdsmi_bdf_t: function 1, device 0, bus 0xc1, domain 0.
  uint64_t v = (uint64_t{0} << 16) | (0xc1u << 8) | (0u << 3) | 1u;
  EXPECT_EQ(bdf_function(v), 1u);
  EXPECT_EQ(bdf_device(v), 0u);
  EXPECT_EQ(bdf_bus(v), 0xc1u);
  EXPECT_EQ(bdf_domain(v), 0u);
  uint64_t w = (uint64_t{2} << 16) | (0x18u << 8) | (0x1fu << 3) | 7u;
  EXPECT_EQ(bdf_domain(w), 2u);
  EXPECT_EQ(bdf_device(w), 0x1fu);
  EXPECT_EQ(bdf_function(w), 7u);
}

TEST(AmdsmiApi, EventMaskBitIsTypeMinusOne) {
  EXPECT_EQ(event_mask_bit(kEvtVmFault), 1u);
  EXPECT_EQ(event_mask_bit(kEvtGpuPreReset), 4u);
  EXPECT_EQ(event_mask_bit(kEvtGpuPostReset), 8u);
}

TEST(AmdsmiApi, DeclaredStructsFitTheSlackBuffer) {
  EXPECT_LE(sizeof(ViolationStatus), kStructSlack);
  EXPECT_LE(sizeof(PcieInfo), kStructSlack);
  EXPECT_LE(sizeof(ProcInfo), kStructSlack);
}

}  // namespace gcm::amdsmi

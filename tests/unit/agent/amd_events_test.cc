// The agent's AMD event tracker: each amdsmi event type's name and action, the window's events under their GPU's
// UUID, and the counters that outlive the window.
#include "agent/amd_events.h"

#include <gtest/gtest.h>

#include "gpu/amdsmi_api.h"

namespace gcm::agent {
namespace {

TEST(AmdEvents, EachTypeHasItsNameAndTheActionTheDetectorJudgesItBy) {
  EXPECT_EQ(amd_event_kind(amdsmi::kEvtRingHang).name, "RING_HANG");
  EXPECT_EQ(amd_event_kind(amdsmi::kEvtRingHang).action, "RESET_GPU");
  EXPECT_TRUE(amd_event_kind(amdsmi::kEvtRingHang).critical);
  EXPECT_EQ(amd_event_kind(amdsmi::kEvtVmFault).action, "RESTART_APP");
  EXPECT_EQ(amd_event_kind(amdsmi::kEvtThermalThrottle).action, "IGNORE");
  EXPECT_EQ(amd_event_kind(amdsmi::kEvtGpuPreReset).name, "GPU_PRE_RESET");
  EXPECT_EQ(amd_event_kind(amdsmi::kEvtGpuPostReset).name, "GPU_POST_RESET");
  EXPECT_EQ(amd_event_kind(99).name, "EVENT_99");
  EXPECT_EQ(amd_event_kind(99).action, "IGNORE");
}

TEST(AmdEvents, AWindowTakesItsEventsOnceAndTheCountsStay) {
  AmdEventTracker t;
  t.add(3, amdsmi::kEvtRingHang, "ring gfx timeout", 100.0);
  t.add(3, amdsmi::kEvtRingHang, "ring gfx timeout", 101.0);
  t.add(7, amdsmi::kEvtVmFault, "page fault", 102.0);
  auto uuid_of = [](int gpu) { return gpu == 3 ? std::string("uuid-3") : std::string(); };
  auto events = t.take_window_events(uuid_of);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].gpu, 3);
  EXPECT_EQ(events[0].uuid, "uuid-3");
  EXPECT_EQ(events[0].xid.name, "RING_HANG");
  EXPECT_EQ(events[0].xid.code, static_cast<int>(amdsmi::kEvtRingHang));
  EXPECT_EQ(events[0].message, "ring gfx timeout");
  EXPECT_EQ(events[2].uuid, "unknown");
  EXPECT_TRUE(t.take_window_events(uuid_of).empty()) << "each event goes into one window";
  auto recs = t.records();
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].at("event").as_string(), "RING_HANG");
  EXPECT_EQ(recs[0].at("events").as_number(), 2);
  EXPECT_EQ(recs[0].at("last_timestamp").as_number(), 101.0);
  EXPECT_EQ(recs[1].at("uuid").as_string(), "unknown");
}

}  // namespace
}  // namespace gcm::agent

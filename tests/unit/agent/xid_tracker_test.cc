// The XID tracker: bus ids, de-duplication across the kernel log and NVML, counters, each clearing rule, the LOG
// records, and the Prometheus names of its METRIC records (a contract with dashboards).
#include <gtest/gtest.h>

#include <thread>

#include "agent/xid_tracker.h"
#include "sinks/prometheus_store.h"

namespace gcm::agent {
namespace {

std::vector<GpuIdentity> two_gpus() { return {{0, "GPU-aaa", "00000000:3B:00.0"}, {1, "GPU-bbb", "00000000:3C:00.0"}}; }

TEST(XidTracker, NormalisesPciBusIdsOfEveryForm) {
  EXPECT_EQ(normalize_pci_bus_id("PCI:0000:3b:00"), "0000:3b:00");
  EXPECT_EQ(normalize_pci_bus_id("0000:3b:00.0"), "0000:3b:00");
  EXPECT_EQ(normalize_pci_bus_id("00000000:3B:00.0"), "0000:3b:00");
  EXPECT_EQ(normalize_pci_bus_id("000d:00:00"), "000d:00:00");
  EXPECT_EQ(normalize_pci_bus_id("0001:3b:00.0"), "0001:3b:00");
  EXPECT_EQ(normalize_pci_bus_id("Garbage"), "garbage");
  EXPECT_EQ(normalize_pci_bus_id("PCI:zz:00:00"), "zz:00:00");
}

TEST(XidTracker, ClearingRuleFollowsTheCatalogueAction) {
  EXPECT_EQ(clearing_rule("RESET_GPU"), XidClearing::GpuReset);
  EXPECT_EQ(clearing_rule("WORKFLOW_XID_48"), XidClearing::GpuReset);
  EXPECT_EQ(clearing_rule("WORKFLOW_NVLINK5_ERR"), XidClearing::GpuReset);
  EXPECT_EQ(clearing_rule("RESTART_BM"), XidClearing::Reboot);
  EXPECT_EQ(clearing_rule("RESTART_VM"), XidClearing::Reboot);
  EXPECT_EQ(clearing_rule("CONTACT_SUPPORT"), XidClearing::Reboot);
  EXPECT_EQ(clearing_rule("RESTART_APP"), XidClearing::Window);
  EXPECT_EQ(clearing_rule("IGNORE"), XidClearing::Window);
  EXPECT_EQ(clearing_rule(""), XidClearing::Window);
  EXPECT_EQ(clearing_rule("SOMETHING_NEW"), XidClearing::Window);
}

TEST(XidTracker, TheSameXidFromBothSourcesCountsOnce) {
  XidTracker t;
  t.set_gpus(two_gpus());
  EXPECT_TRUE(t.add_kmsg("PCI:0000:3b:00", 79, 1000.0, "GPU has fallen off the bus."));
  EXPECT_FALSE(t.add_nvml(0, 79, 1002.5));              // the NVML event of the same XID
  EXPECT_TRUE(t.add_nvml(0, 79, 1003.0));               // another one: the kernel-log report was paired already
  EXPECT_TRUE(t.add_nvml(1, 79, 1000.0));               // another GPU
  EXPECT_TRUE(t.add_nvml(0, 48, 1000.0));               // another code
  EXPECT_TRUE(t.add_kmsg("0000:3b:00.0", 79, 1010.0));  // out of the window of the event at 1003
  auto ev = t.events_since(0);
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[0].gpu, 0);
  EXPECT_EQ(ev[0].uuid, "GPU-aaa");
  EXPECT_EQ(ev[0].pci_bus_id, "0000:3b:00");
  EXPECT_EQ(ev[0].source, XidSource::Kmsg);
  EXPECT_EQ(ev[1].source, XidSource::Nvml);
  EXPECT_EQ(t.events_since(ev[3].seq).size(), 1u);
  EXPECT_TRUE(t.events_since(ev[4].seq).empty());
}

TEST(XidTracker, TakesTheFollowersXidLinesButNoSxid) {
  XidTracker t;
  t.set_gpus(two_gpus());
  auto bus = health::parse_xid_line("NVRM: GPU 0000:3c:00.0: GPU has fallen off the bus.");
  ASSERT_TRUE(bus);
  EXPECT_TRUE(t.add_kmsg(*bus, 10.0));
  EXPECT_TRUE(t.is_active(1, 79, 11.0));
  auto sxid = health::parse_xid_line("nvidia-nvswitch3: SXid (PCI:0000:c5:00.0): 20034, Fatal, Link 45");
  ASSERT_TRUE(sxid);
  EXPECT_FALSE(t.add_kmsg(*sxid, 10.0));
  auto unreadable = health::parse_xid_line("NVRM: Xid (PCI:0000:3b:00): abc");
  ASSERT_TRUE(unreadable);
  EXPECT_FALSE(t.add_kmsg(*unreadable, 10.0));
  EXPECT_EQ(t.events_since(0).size(), 1u);
}

TEST(XidTracker, RepeatsFromOneSourceAllCount) {
  XidTrackerOptions o;
  o.dedup_window_s = 1;
  XidTracker t(o);
  t.set_gpus(two_gpus());
  EXPECT_TRUE(t.add_kmsg("PCI:0000:3b:00", 13, 100.0));
  EXPECT_TRUE(t.add_kmsg("PCI:0000:3b:00", 13, 100.0));  // two channels fault at once: two XIDs
  EXPECT_FALSE(t.add_nvml(0, 13, 100.5));
  EXPECT_FALSE(t.add_nvml(0, 13, 100.9));
  EXPECT_TRUE(t.add_nvml(0, 13, 100.9));  // both kernel-log reports are paired
  EXPECT_EQ(t.events_since(0).size(), 3u);
}

TEST(XidTracker, AnUnknownBusIdIsKeptUnderGpuMinusOne) {
  XidTracker t;
  t.set_gpus(two_gpus());
  EXPECT_TRUE(t.add_kmsg("PCI:0000:99:00", 79, 5.0));
  auto ev = t.events_since(0);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].gpu, -1);
  EXPECT_EQ(ev[0].uuid, "unknown");
  EXPECT_EQ(ev[0].pci_bus_id, "0000:99:00");
  EXPECT_TRUE(t.is_active(-1, 79, 6.0));
  XidTracker none;  // no GPUs known yet: NVML's index is still known
  EXPECT_TRUE(none.add_nvml(2, 31, 1.0));
  EXPECT_EQ(none.events_since(0)[0].gpu, 2);
  EXPECT_EQ(none.events_since(0)[0].uuid, "unknown");
}

TEST(XidTracker, ResetTypeXidIsActiveUntilTheGpuIsReset) {
  XidTracker t;
  t.set_gpus(two_gpus());
  t.add_nvml(0, 46, 100.0);                        // RESET_GPU
  t.add_nvml(0, 13, 100.0);                        // RESTART_APP
  t.add_nvml(0, 79, 100.0);                        // RESTART_BM
  EXPECT_TRUE(t.is_active(0, 46, 100.0 + 86400));  // no time limit
  t.gpu_reset(0, 50.0);                            // a reset before the XID clears nothing
  EXPECT_TRUE(t.is_active(0, 46, 200.0));
  t.gpu_reset(1, 150.0);  // another GPU's reset
  EXPECT_TRUE(t.is_active(0, 46, 200.0));
  t.gpu_reset(0, 150.0);
  EXPECT_FALSE(t.is_active(0, 46, 200.0));
  EXPECT_FALSE(t.is_active(0, 13, 200.0));  // a reset ends the application's fault too
  EXPECT_TRUE(t.is_active(0, 79, 200.0));   // but not what needs a reboot
  t.add_nvml(0, 46, 300.0);                 // it happens again after the reset
  EXPECT_TRUE(t.is_active(0, 46, 301.0));
}

TEST(XidTracker, RebootTypeXidStaysActiveForTheBoot) {
  XidTracker t;
  t.set_gpus(two_gpus());
  t.add_kmsg("PCI:0000:3c:00", 79, 100.0);
  t.gpu_reset(1, 500.0);
  EXPECT_TRUE(t.is_active(1, 79, 100.0 + 365 * 86400.0));
  auto a = t.active_for_gpu(1, 1000.0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].code, 79);
  EXPECT_EQ(a[0].action, "RESTART_BM");
  EXPECT_TRUE(a[0].critical);
}

TEST(XidTracker, WindowTypeXidClearsAfterTheWindowWithoutARepeat) {
  XidTrackerOptions o;
  o.active_window_s = 600;
  XidTracker t(o);
  t.set_gpus(two_gpus());
  t.add_nvml(0, 31, 1000.0);  // RESTART_APP, warn
  t.add_nvml(0, 63, 1000.0);  // IGNORE
  t.add_nvml(0, 5, 1000.0);   // no action in the catalogue
  EXPECT_TRUE(t.is_active(0, 31, 1599.0));
  EXPECT_FALSE(t.is_active(0, 31, 1600.0));
  EXPECT_FALSE(t.is_active(0, 63, 1600.0));
  EXPECT_FALSE(t.is_active(0, 5, 1600.0));
  auto a = t.active_for_gpu(0, 1000.0);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].code, 5);
  EXPECT_EQ(a[0].action, "UNKNOWN");
  EXPECT_EQ(a[2].code, 63);
  EXPECT_FALSE(a[2].critical);
  t.add_nvml(0, 31, 1500.0);  // a repeat restarts the window
  EXPECT_TRUE(t.is_active(0, 31, 2000.0));
  EXPECT_FALSE(t.is_active(0, 31, 2100.0));
  EXPECT_TRUE(t.active_for_gpu(0, 5000.0).empty());
  EXPECT_TRUE(t.active_for_gpu(1, 1000.0).empty());
}

TEST(XidTracker, EachCountedXidIsOneLogRecordWithTheCatalogueText) {
  XidTracker t;
  t.set_gpus(two_gpus());
  t.add_kmsg("PCI:0000:3b:00", 48, 1000.0, "pid=1, DBE");
  t.add_nvml(0, 48, 1000.1);  // duplicate: no second record
  auto logs = t.take_log_records();
  ASSERT_EQ(logs.size(), 1u);
  const Record& r = logs[0];
  EXPECT_EQ(r.schema, &kGpuXidEvent.get());
  EXPECT_EQ(r.at("gpu").as_int(), 0);
  EXPECT_EQ(r.at("uuid").as_string(), "GPU-aaa");
  EXPECT_EQ(r.at("xid").as_int(), 48);
  EXPECT_EQ(r.at("source").as_string(), "kmsg");
  EXPECT_EQ(r.at("description").as_string(), "Double Bit ECC Error");
  EXPECT_EQ(r.at("immediate_action").as_string(), "WORKFLOW_XID_48");
  EXPECT_EQ(r.at("clears_on").as_string(), "gpu_reset");
  ASSERT_TRUE(r.at("causes").is_list());
  EXPECT_EQ(r.at("causes").as_list(), List{Value("HW Error")});
  EXPECT_EQ(r.at("detail").as_string(), "pid=1, DBE");
  EXPECT_TRUE(t.take_log_records().empty());
}

TEST(XidTracker, MetricsRenderTheContractNamesInPrometheus) {
  XidTracker t;
  t.set_gpus(two_gpus());
  t.add_kmsg("PCI:0000:3b:00", 79, 1700000000.0);
  t.add_nvml(0, 79, 1700000001.0);  // duplicate
  t.add_nvml(1, 13, 1700000100.0);
  t.add_nvml(1, 13, 1700000200.0);
  double now = 1700000200.0 + 7200;  // XID 13 cleared by its window
  PrometheusStore store;
  store.begin_round(kGpuXidErrors);
  store.begin_round(kGpuXidActive);
  for (const Record& r : t.records(now)) store.add(r);
  store.end_round(kGpuXidErrors);
  store.end_round(kGpuXidActive);
  std::string text = store.render();
  for (const char* line : {
           "# TYPE gcm_gpu_xid_errors_total counter\n",
           "gcm_gpu_xid_errors_total{gpu=\"0\",uuid=\"GPU-aaa\",xid=\"79\"} 1\n",
           "gcm_gpu_xid_errors_total{gpu=\"1\",uuid=\"GPU-bbb\",xid=\"13\"} 2\n",
           "# TYPE gcm_gpu_xid_last_timestamp_seconds gauge\n",
           "gcm_gpu_xid_last_timestamp_seconds{gpu=\"0\",uuid=\"GPU-aaa\",xid=\"79\"} 1700000000\n",
           "gcm_gpu_xid_last_timestamp_seconds{gpu=\"1\",uuid=\"GPU-bbb\",xid=\"13\"} 1700000200\n",
           "# TYPE gcm_gpu_xid_active gauge\n",
           "gcm_gpu_xid_active{gpu=\"0\",uuid=\"GPU-aaa\",xid=\"79\",action=\"RESTART_BM\"} 1\n",
           "gcm_gpu_xid_active{gpu=\"1\",uuid=\"GPU-bbb\",xid=\"13\",action=\"RESTART_APP\"} 0\n",
       })
    EXPECT_NE(text.find(line), std::string::npos) << "missing: " << line << "in:\n" << text;
  EXPECT_EQ(store.series_count(), 6u) << text;
  EXPECT_EQ(prometheus_metric_name(kGpuXidErrors, kGpuXidErrors->fields[3]), "gcm_gpu_xid_errors_total");
}

TEST(XidTracker, CountsEventsFromTwoThreadsWhileAThirdReads) {
  XidTracker t;
  t.set_gpus(two_gpus());
  constexpr int kEach = 500;
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done) {
      t.records(0);
      t.active_for_gpu(0, 0);
      t.take_log_records();
    }
  });
  // Times 100 s apart: nothing pairs, every event counts.
  std::thread kmsg([&] {
    for (int i = 0; i < kEach; ++i) t.add_kmsg("PCI:0000:3b:00", 31, i * 100.0);
  });
  std::thread nvml([&] {
    for (int i = 0; i < kEach; ++i) t.add_nvml(0, 31, i * 100.0 + 50);
  });
  kmsg.join();
  nvml.join();
  done = true;
  reader.join();
  auto recs = t.records(0);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].at("errors").as_int(), 2 * kEach);
}

}  // namespace
}  // namespace gcm::agent

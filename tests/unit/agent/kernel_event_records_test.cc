// The agent's kernel-event tracker: counts per kind, class and device, per-NVSwitch SXid counts, one LOG record per
// event with the classification's cause and action, the bound on label sets, and the Prometheus names (a contract).
#include <gtest/gtest.h>

#include "agent/kernel_event_records.h"
#include "agent/kernel_events.h"
#include "health/kernel_event.h"
#include "sinks/prometheus_store.h"

namespace gcm::agent {
namespace {

health::KernelEvent event(std::string_view line) {
  auto e = health::classify_kernel_event(line);
  EXPECT_TRUE(e) << line;
  return e ? *e : health::KernelEvent{};
}

std::string render(const KernelEventTracker& t) {
  PrometheusStore store;
  store.begin_round(kNodeKernelEvents);
  store.begin_round(kNvswitchSxidErrors);
  for (const Record& r : t.records()) store.add(r);
  store.end_round(kNodeKernelEvents);
  store.end_round(kNvswitchSxidErrors);
  return store.render();
}

TEST(KernelEventTracker, CountsEachKindAndRendersTheContractNames) {
  KernelEventTracker t;
  t.add(event("mlx5_core 0000:18:00.0 ib1: Lost carrier"), 1700000000.0);
  t.add(event("mlx5_core 0000:18:00.0 ib1: Lost carrier"), 1700000060.0);
  t.add(event("nvidia-nvswitch1: SXid (PCI:0000:a6:00.0): 20034, Fatal, Link 08 LTSSM Fault Up"), 1700000001.0);
  t.add(event("mce: [Hardware Error]: CPU 3: Machine Check: 0 Bank 7: cc00008000010091"), 1700000002.0);
  t.add(event("nvidia 0000:3b:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)"),
        1700000003.0);
  EXPECT_EQ(t.total(), 5u);
  std::string text = render(t);
  for (const char* line : {
           "# TYPE gcm_node_kernel_events_total counter\n",
           "gcm_node_kernel_events_total{kind=\"link_down\",class=\"infiniband\",device=\"ib1\"} 2\n",
           "gcm_node_kernel_events_total{kind=\"sxid\",class=\"fatal\",device=\"0000:a6:00.0\"} 1\n",
           "gcm_node_kernel_events_total{kind=\"mce\",class=\"corrected\",device=\"cpu3\"} 1\n",
           "gcm_node_kernel_events_total{kind=\"pcie_aer\",class=\"corrected\",device=\"0000:3b:00.0\"} 1\n",
           "# TYPE gcm_node_kernel_events_last_timestamp_seconds gauge\n",
           "gcm_node_kernel_events_last_timestamp_seconds{kind=\"link_down\",class=\"infiniband\",device=\"ib1\"} "
           "1700000060\n",
           "# TYPE gcm_nvswitch_sxid_errors_total counter\n",
           "gcm_nvswitch_sxid_errors_total{nvswitch=\"1\",pci_bus_id=\"0000:a6:00.0\",sxid=\"20034\"} 1\n",
           "gcm_nvswitch_sxid_last_timestamp_seconds{nvswitch=\"1\",pci_bus_id=\"0000:a6:00.0\",sxid=\"20034\"} "
           "1700000001\n",
       })
    EXPECT_NE(text.find(line), std::string::npos) << "missing: " << line << "in:\n" << text;
}

TEST(KernelEventTracker, EachEventIsOneLogRecordWithItsCauseAndAction) {
  KernelEventTracker t;
  t.add(event("nvidia-nvswitch1: SXid (PCI:0000:a6:00.0): 12028, Non-fatal, Link 08 egress error"), 10.0);
  t.add(event("IPv6: ADDRCONF(NETDEV_CHANGE): ib0: link becomes ready"), 11.0);
  auto logs = t.take_log_records();
  ASSERT_EQ(logs.size(), 2u);
  const Record& s = logs[0];
  EXPECT_EQ(s.schema, &kNodeKernelEvent.get());
  EXPECT_EQ(s.at("kind").as_string(), "sxid");
  EXPECT_EQ(s.at("class").as_string(), "non_fatal");
  EXPECT_EQ(s.at("device").as_string(), "0000:a6:00.0");
  EXPECT_EQ(s.at("nvswitch").as_int(), 1);
  EXPECT_EQ(s.at("sxid").as_int(), 12028);
  EXPECT_EQ(s.at("severity").as_string(), "warn");
  const auto* row = health::find_kernel_event_class(health::KernelEventKind::SXid, "non_fatal");
  EXPECT_EQ(s.at("cause").as_string(), row->cause);
  EXPECT_EQ(s.at("action").as_string(), row->action);
  EXPECT_NE(s.at("detail").as_string().find("egress error"), std::string::npos);
  EXPECT_EQ(logs[1].at("severity").as_string(), "ignore");
  EXPECT_TRUE(logs[1].at("sxid").is_null()) << "only SXids carry a code";
  EXPECT_TRUE(t.take_log_records().empty());
}

TEST(KernelEventTracker, LabelSetsAreBoundedAndTheRestCountedAsOther) {
  KernelEventTrackerOptions o;
  o.max_series = 3;
  o.max_logs = 2;
  KernelEventTracker t(o);
  for (int i = 0; i < 10; ++i)
    t.add(event("ixgbe 0000:01:00.0 eth" + std::to_string(i) + ": NIC Link is Down"), 100.0 + i);
  std::string text = render(t);
  EXPECT_NE(text.find("device=\"eth2\"} 1\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("device=\"eth3\""), std::string::npos) << text;
  EXPECT_NE(text.find("gcm_node_kernel_events_total{kind=\"link_down\",class=\"ethernet\",device=\"other\"} 7\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(t.total(), 10u);
  auto logs = t.take_log_records();
  ASSERT_EQ(logs.size(), 2u) << "the newest are kept";
  EXPECT_EQ(logs[1].at("device").as_string(), "eth9");
}

}  // namespace
}  // namespace gcm::agent

// The PCI address -> GPU map the kernel log's XIDs are attributed by: NVML's answers, then the driver's own view
// under --path.procfs/--path.sysfs for the GPUs that never answered, kept when a GPU goes silent.
#include "agent/gpu_address_map.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace gcm::agent {
namespace {

namespace fs = std::filesystem;

// /proc/driver/nvidia/gpus/<address>/information as the driver writes it (tabs and all).
void write_information(const std::string& procfs, const std::string& address, const std::string& uuid) {
  fs::create_directories(procfs + "/driver/nvidia/gpus/" + address);
  std::ofstream(procfs + "/driver/nvidia/gpus/" + address + "/information")
      << "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 0\nGPU UUID: \t " << uuid
      << "\nVideo BIOS: \t 96.00.89.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nBus Location: \t " << address
      << "\nDevice Minor: \t 0\nGPU Excluded:\t No\n";
}

void bind_device(const std::string& sysfs, const std::string& address, const std::string& pci_class) {
  std::string dir = sysfs + "/bus/pci/drivers/nvidia/" + address;
  fs::create_directories(dir);
  std::ofstream(dir + "/class") << pci_class << "\n";
}

TEST(GpuAddressMap, TheDriversViewListsGpusWithTheirUuids) {
  testing::TempDir t;
  HostRoots roots;
  roots.procfs = t.file("proc");
  roots.sysfs = t.file("sys");
  write_information(roots.procfs, "0000:18:00.0", "GPU-aaaa-0001");
  bind_device(roots.sysfs, "0000:18:00.0", "0x030200");
  bind_device(roots.sysfs, "0000:2a:00.0", "0x030200");  // bound, no information file (procfs not mounted there)
  bind_device(roots.sysfs, "0000:c5:00.0", "0x068000");  // an NVSwitch: no GPU
  std::ofstream(roots.sysfs + "/bus/pci/drivers/nvidia/bind") << "";
  auto gpus = read_host_gpus(roots);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].pci_bus_id, "0000:18:00");
  EXPECT_EQ(gpus[0].uuid, "GPU-aaaa-0001");
  EXPECT_EQ(gpus[1].pci_bus_id, "0000:2a:00");
  EXPECT_EQ(gpus[1].uuid, "");
  HostRoots none;
  none.procfs = t.file("nothing");
  none.sysfs = t.file("nothing");
  EXPECT_TRUE(read_host_gpus(none).empty());
}

// GPU 1 never answered NVML (hung from the start): it gets the host's address NVML's answers did not claim.
TEST(GpuAddressMap, AGpuThatNeverAnsweredGetsTheUnclaimedAddress) {
  GpuAddressMap m;
  m.set_host_gpus({{"0000:10:00", "GPU-0"}, {"0000:11:00", "GPU-1"}, {"0000:12:00", "GPU-2"}});
  m.set_gpu_count(3);
  // Before any sample: the address order.
  EXPECT_EQ(m.index_of("PCI:0000:11:00"), 1u);
  EXPECT_EQ(m.uuid_of(1), "GPU-1");
  m.learn(0, "GPU-0", "00000000:10:00.0");
  m.learn(2, "GPU-2", "00000000:12:00.0");
  EXPECT_EQ(m.index_of("0000:11:00.0"), 1u);
  EXPECT_EQ(m.uuid_of(1), "GPU-1");
  EXPECT_EQ(m.index_of("0000:12:00"), 2u);
  EXPECT_FALSE(m.index_of("0000:4e:00")) << "no GPU of this node";
  EXPECT_EQ(m.identities().size(), 3u);
}

// NVML's answer wins over the address order, and is kept when the GPU goes silent (nothing unlearns it).
TEST(GpuAddressMap, NvmlsAnswerWinsAndIsKept) {
  GpuAddressMap m;
  m.set_host_gpus({{"0000:10:00", ""}, {"0000:11:00", ""}});
  m.set_gpu_count(2);
  EXPECT_TRUE(m.learn(0, "GPU-b", "00000000:11:00.0"));  // NVML numbers them otherwise here
  EXPECT_FALSE(m.learn(0, "GPU-b", "00000000:11:00.0"));
  EXPECT_EQ(m.index_of("0000:11:00"), 0u);
  EXPECT_EQ(m.index_of("0000:10:00"), 1u) << "the one left";
  EXPECT_FALSE(m.learn(0, "", "")) << "a silent sample says nothing new";
  EXPECT_EQ(m.uuid_of(0), "GPU-b");
  // The host's UUID completes NVML's address.
  GpuAddressMap partial;
  partial.set_host_gpus({{"0000:10:00", "GPU-z"}});
  partial.learn(0, "", "0000:10:00.0");
  EXPECT_EQ(partial.uuid_of(0), "GPU-z");
}

TEST(GpuAddressMap, WithoutNvmlEveryHostGpuHasItsAddressOrder) {
  GpuAddressMap m;
  m.set_host_gpus({{"0000:8a:00", "GPU-x"}, {"0000:1b:00", "GPU-y"}});
  EXPECT_EQ(m.index_of("0000:1b:00"), 0u);
  EXPECT_EQ(m.index_of("0000:8a:00"), 1u);
  m.set_gpu_count(1);  // NVML sees one GPU: the other address is no index of it
  EXPECT_FALSE(m.index_of("0000:8a:00"));
}

}  // namespace
}  // namespace gcm::agent

// The readers under the host checks: the node manifest (coercions, errors naming the key), smartctl's JSON, and
// /proc/<pid>/stat lines and the process scan.
#include <unistd.h>

#include <climits>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "health/checks/host_check.h"
#include "health/checks/manifest.h"
#include "health/checks/proc_table.h"
#include "health/checks/smartctl.h"
#include "fixture_records.h"
#include "temp_dir.h"

namespace gcm::health {
namespace {

const std::string kShared = std::string(GCM_SOURCE_DIR) + "/../shared/fixtures/gcm/health_checks/";

using gcm::testing::slurp;
using gcm::testing::TempDir;

TEST(HostManifest, SharedManifestsLoadWithTheirCoercions) {
  if (!std::filesystem::exists(kShared)) GTEST_SKIP() << "shared fixtures not present: " << kShared;
  Manifest m = load_manifest(kShared + "DGX_A100.json");
  ASSERT_EQ(m.pci.size(), 36u);
  EXPECT_EQ(m.pci[0].id, "0000:c4:00.0");   // file order kept: topology_critical stops the walk in that order
  EXPECT_EQ(m.pci[0].link_width, 2);        // "2"
  EXPECT_TRUE(m.pci[0].topology_critical);  // "true"
  EXPECT_EQ(m.pci[0].link_speed, (std::vector<std::string>{"8 GT/s", "8.0 GT/s PCIe"}));
  ASSERT_TRUE(m.eth);
  EXPECT_EQ(m.eth->size(), 3u);
  ASSERT_TRUE(m.ib);
  EXPECT_EQ(m.ib->link_rate, "200 Gb/sec (4X HDR)");
  EXPECT_EQ(m.ib->interfaces.at("ib6").mlx, "mlx5_8");
  EXPECT_EQ(m.disks.size(), 10u);
  EXPECT_EQ(m.disks[0].size, 3840000000000LL);
  for (const char* f : {"Altus_XE1211_Cache_Milan.json", "Altus_XE1211_Cache_Rome.json", "cache_milan.json",
                        "cache_rome.json", "empty.json"})
    EXPECT_NO_THROW(load_manifest(kShared + f)) << f;
  EXPECT_FALSE(load_manifest(kShared + "empty.json").eth);
}

TEST(HostManifest, BadValuesNameTheFileAndKey) {
  auto err = [](const std::string& text) {
    try {
      parse_manifest(text, "m.json");
    } catch (const ManifestError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(err(R"({"pci": {"0000:01:00.0": {"link_width": "x16"}}})"),
            "m.json: pci.0000:01:00.0.link_width: expected an integer, got \"x16\"");
  EXPECT_EQ(err(R"({"pci": {"0000:01:00.0": {"topology_critical": "maybe"}}})"),
            "m.json: pci.0000:01:00.0.topology_critical: expected a boolean, got \"maybe\"");
  EXPECT_EQ(err(R"({"disks": {"U.2_0": {"size": 1}}})"),
            "m.json: disks.U.2_0.blockdev: expected a block device name, got null");
  EXPECT_EQ(err(R"({"eth": []})"), "m.json: eth: expected an object, got []");
  EXPECT_NE(err("{").find("m.json: not valid JSON"), std::string::npos);
  // nlohmann::json throws out_of_range, not parse_error, for a number too large (a fuzzer finding).
  EXPECT_NE(err("1e999999").find("m.json: not valid JSON"), std::string::npos);
  EXPECT_NE(err(R"({"disks": {"a": {"size": 9e99999}}})").find("m.json: not valid JSON"), std::string::npos);
  EXPECT_EQ(err("[]"), "m.json: (top level): expected an object, got []");
  // A whole number outside long long's range is no integer, rather than an undefined conversion (a fuzzer finding).
  EXPECT_EQ(err(R"({"pci": {"a": {"link_width": 2.2e102}}})"),
            "m.json: pci.a.link_width: expected an integer, got 2.2e+102");
  EXPECT_EQ(err(R"({"pci": {"a": {"link_width": 18446744073709551615}}})"),
            "m.json: pci.a.link_width: expected an integer, got 18446744073709551615");
  EXPECT_EQ(parse_manifest(R"({"pci": {"a": {"link_width": -9.223372036854775808e18}}})", "m").pci[0].link_width,
            LLONG_MIN);
  Manifest m = parse_manifest(R"({"pci": {"a": {"link_width": 4.0, "link_speed": "8 GT/s"}}})", "m");
  EXPECT_EQ(m.pci[0].link_width, 4);
  EXPECT_EQ(m.pci[0].link_speed, std::vector<std::string>{"8 GT/s"});
}

TEST(HostSmartctl, SharedDumpsAndBrokenOnes) {
  if (!std::filesystem::exists(kShared)) GTEST_SKIP() << "shared fixtures not present: " << kShared;
  SmartInfo good = parse_smartctl_json(slurp(kShared + "smartctl_dumps/learn_good/nvme0.json"), "nvme0");
  ASSERT_TRUE(good.health_log);
  EXPECT_EQ(good.capacity, 3840755982336LL);
  EXPECT_EQ(good.health_log->available_spare, 100);
  EXPECT_EQ(good.read_kbytes(), 7482LL * 512);
  EXPECT_EQ(good.smart_passed, true);
  SmartInfo missing = parse_smartctl_json(slurp(kShared + "smartctl_dumps/learn_missing_smartdata/nvme7.json"), "n7");
  EXPECT_FALSE(missing.health_log);
  EXPECT_THROW(parse_smartctl_json("Smartctl open device failed", "x"), SmartctlError);
  EXPECT_THROW(parse_smartctl_json("[1]", "x"), SmartctlError);
  EXPECT_THROW(parse_smartctl_json(R"({"model_name": 5})", "x"), SmartctlError);
  // Found by smartctl_json_fuzz: a number too large for a double is out_of_range, not a parse_error.
  EXPECT_THROW(parse_smartctl_json("999e99999999999999999999999999{}", "x"), SmartctlError);
  EXPECT_THROW(parse_smartctl_json(R"({"nvme_total_capacity": 1e999999})", "x"), SmartctlError);
  // A health log missing a field counts as unreadable.
  EXPECT_FALSE(parse_smartctl_json(R"({"nvme_smart_health_information_log": {"available_spare": 3}})", "x").health_log);
  // SATA disks: user_capacity.
  EXPECT_EQ(parse_smartctl_json(R"({"user_capacity": {"bytes": 500}})", "x").capacity, 500);
}

TEST(HostProcStat, NamesWithSpacesAndParentheses) {
  auto p =
      parse_proc_stat("42 (tmux: server) (x)) D 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 500 0 0", 100.0, 100);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pid, 42);
  EXPECT_EQ(p->comm, "tmux: server) (x)");
  EXPECT_EQ(p->state, 'D');
  EXPECT_DOUBLE_EQ(p->elapsed_s, 95.0);
  EXPECT_FALSE(parse_proc_stat("42 (x) D 1", 100.0, 100));
  EXPECT_FALSE(parse_proc_stat("garbage", 100.0, 100));
  // Runs of blanks, tabs and the line's newline separate words like one space.
  auto q = parse_proc_stat("7 (a b)  S\t1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0   300\n", 100.0, 100);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->state, 'S');
  EXPECT_DOUBLE_EQ(q->elapsed_s, 97.0);
  EXPECT_FALSE(parse_proc_stat("7 (a) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 \n", 100.0, 100));  // no starttime
}

// The scan the process checks share: every numeric directory with a well-formed stat file, each read whole by one
// read; anything else is skipped, and a missing uptime is an error naming the file.
TEST(HostProcStat, ScanVisitsEveryReadableProcess) {
  TempDir proc;
  auto put = [&](const std::string& rel, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(proc.path() + "/" + rel).parent_path());
    std::ofstream(proc.path() + "/" + rel) << text;
  };
  EXPECT_THROW(for_each_process(proc.path(), [](const ProcStat&) {}), std::runtime_error);
  put("uptime", "1000.50 10.00\n");
  put("1/stat", "1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0\n");
  put("77/stat", "77 (defunct (x)) Z 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 50000 0 0\n");
  put("78/stat", "78 (truncated) S 1");                    // malformed: skipped
  put("79/status", "Name: gone\n");                         // no stat: exited meanwhile
  put("self/stat", "1 (init) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0\n");  // not a process number
  put("80/stat", std::string(5000, '8'));                   // longer than any stat line: skipped, not cut
  std::map<int, std::pair<std::string, char>> seen;
  std::map<int, double> age;
  for_each_process(proc.path(), [&](const ProcStat& p) {
    seen[p.pid] = {std::string(p.comm), p.state};
    age[p.pid] = p.elapsed_s;
  });
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1], std::make_pair(std::string("init"), 'S'));
  EXPECT_EQ(seen[77], std::make_pair(std::string("defunct (x)"), 'Z'));
  long ticks = ::sysconf(_SC_CLK_TCK);
  EXPECT_DOUBLE_EQ(age[1], 1000.5 - 100.0 / static_cast<double>(ticks));
  // The copying table gives the same processes, with "[comm]" for a process without a command line.
  auto table = read_process_table(proc.path(), true);
  ASSERT_EQ(table.size(), 2u);
  for (const auto& p : table) EXPECT_EQ(p.cmdline, "[" + p.comm + "]");
}

TEST(HostParseInt, OneWholeIntegerAfterTrimming) {
  EXPECT_EQ(parse_int(" 42\n"), 42);
  EXPECT_EQ(parse_int("+7"), 7);
  EXPECT_EQ(parse_int("-3"), -3);
  EXPECT_EQ(parse_int("0"), 0);
  EXPECT_EQ(parse_int("9223372036854775807"), LLONG_MAX);
  EXPECT_EQ(parse_int("-9223372036854775808"), LLONG_MIN);
  for (const char* bad : {"", " ", "+", "-", "+-5", "-+5", "++5", "4 2", "42x", "0x10", "1e3", "4.2",
                          "9223372036854775808", "-9223372036854775809"})
    EXPECT_FALSE(parse_int(bad)) << bad;
}

}  // namespace
}  // namespace gcm::health

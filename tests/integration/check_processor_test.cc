// health_checks end to end on a fake host (host_checks_fixture.h): check-processor: every check.
#include "host_checks_fixture.h"

namespace gcm::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------- check-processor

TEST(HostChecksProcessor, EveryCheck) {
  Host h;
  std::vector<std::string> roots = {"--path.procfs", h.proc, "--path.sysfs", h.sys};
  auto with = [&](std::vector<std::string> a) {
    a.insert(a.end(), roots.begin(), roots.end());
    return a;
  };
  h.write(h.proc + "/cpuinfo", "processor\t: 0\ncpu MHz\t\t: 2450.000\n\nprocessor\t: 1\ncpu MHz\t\t: 1500.900\n");
  EXPECT_VERDICT(h.run(with({"check-processor", "processor-freq", "c", "app"})), OK, "Processor frequency 1975 MHz");
  EXPECT_VERDICT(h.run(with({"check-processor", "processor-freq", "c", "app", "--proc_freq", "2000"})), CRIT,
                 "Processor frequency 1975 MHz is below the expected 2000 MHz.");
  h.write(h.proc + "/cpuinfo", "processor\t: 0\n");
  EXPECT_VERDICT(h.run(with({"check-processor", "processor-freq", "c", "app"})), WARN, "no 'cpu MHz' line");

  for (int i = 0; i < 4; ++i)
    h.write(h.sys + "/devices/system/cpu/cpu" + std::to_string(i) + "/cpufreq/scaling_governor", "performance\n");
  EXPECT_VERDICT(h.run(with({"check-processor", "cpufreq-governor", "c", "app"})), OK, "governor is performance on 4");
  EXPECT_VERDICT(h.run(with({"check-processor", "cpufreq-governor", "c", "app", "--governor", "schedutil"})), CRIT,
                 "governor is performance, expected schedutil.");
  h.write(h.sys + "/devices/system/cpu/cpu2/cpufreq/scaling_governor", "powersave\n");
  EXPECT_VERDICT(h.run(with({"check-processor", "cpufreq-governor", "c", "app"})), CRIT,
                 "different governors detected among the cpus: performance, powersave");
  Host none;
  EXPECT_VERDICT(none.run({"check-processor", "cpufreq-governor", "c", "app", "--path.sysfs", none.sys}), WARN,
                 "no governor file matches");

  h.write(h.sys + "/devices/system/clocksource/clocksource0/current_clocksource", "tsc\n");
  EXPECT_VERDICT(h.run(with({"check-processor", "check-clocksource", "c", "app", "--expected-source", "tsc"})), OK,
                 "clock source is tsc.");
  EXPECT_VERDICT(h.run(with({"check-processor", "check-clocksource", "c", "app", "--expected-source", "hpet"})), CRIT,
                 "clock source is tsc, expected hpet.");
  EXPECT_VERDICT(none.run({"check-processor", "check-clocksource", "c", "app", "--expected-source", "tsc",
                           "--path.sysfs", none.sys}),
                 WARN, "cannot read");

  h.write(h.proc + "/buddyinfo",
          "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3\n"
          "Node 0, zone    DMA32      6      5      6      7      5      6      6      6      7      5    466\n"
          "Node 0, zone   Normal   5000   3000   2000   1000    500    200    100     50     20     12    900\n"
          "Node 1, zone   Normal   5000   3000   2000   1000    500    200    100     50     20     12    900\n");
  EXPECT_VERDICT(h.run(with({"check-processor", "check-buddyinfo", "c", "app"})), OK, "sufficient number of memory");
  h.write(h.proc + "/buddyinfo",
          "Node 0, zone   Normal   5000   3000   2000   1000    500    200    100     50     20     12    900\n"
          "Node 1, zone   Normal   5000   3000   2000   1000    500    200    100     50      9      2      0\n");
  EXPECT_VERDICT(h.run(with({"check-processor", "check-buddyinfo", "c", "app"})), CRIT,
                 "insufficient number of memory blocks of order 8 or higher on node: 1 zone: Normal blocks: [5000, ");
  EXPECT_VERDICT(none.run({"check-processor", "check-buddyinfo", "c", "app", "--path.procfs", none.proc}), WARN,
                 "cannot read");

  h.tool_prints("dmidecode", kOurs + "dmidecode_16x64.txt");
  EXPECT_VERDICT(h.run({"check-processor", "check-mem-size", "c", "app", "--dimms", "16", "--total-size", "1024"}), OK,
                 "Memory size as expected. DIMMs: 16 and Total size: 1024 GB");
  h.tool_prints("dmidecode", kOurs + "dmidecode_15x64.txt");
  EXPECT_VERDICT(h.run({"check-processor", "check-mem-size", "c", "app", "--dimms", "16", "--total-size", "1024"}),
                 CRIT, "Memory size not as expected. Expected DIMMs/Total size GB: 16/1024 and found 15/960.");
  auto r = h.run({"check-processor", "check-mem-size", "c", "app", "--dimms", "16"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("You have to specify both dimms and total-size"), std::string::npos) << r.err;
  h.tool("dmidecode", "echo '/dev/mem: Permission denied' >&2; exit 1");
  EXPECT_VERDICT(h.run({"check-processor", "check-mem-size", "c", "app", "--dimms", "16", "--total-size", "1024"}),
                 WARN, "dmidecode exited with code 1: /dev/mem: Permission denied");
}

}  // namespace
}  // namespace gcm::testing

// health_checks end to end for the kernel-log checks (xid, link-flaps, io-errors) on recorded logs, and for the
// checks that run external tools (check-dcgmi, check-nccl, cuda memtest) against fake executables; plus the
// killswitch sweep over every command of the tree.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "health/check.h"
#include "helpers.h"

namespace gcm::testing {
namespace {

using nlohmann::json;

const std::string kLogs = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/health/kernel-log/";
const std::string kSyslog = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/health/syslog/";

std::string health_checks_path() {
  std::string gcm = GCM_BINARY;
  return gcm.substr(0, gcm.rfind('/')) + "/health_checks";
}

struct Sandbox {
  std::string dir = temp_dir("hct");
  ~Sandbox() { std::filesystem::remove_all(dir); }

  // An executable script in <dir>/bin.
  std::string script(const std::string& name, const std::string& body) {
    std::filesystem::create_directories(dir + "/bin");
    std::string path = dir + "/bin/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    ::chmod(path.c_str(), 0755);
    return path;
  }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir + "/" + name) << text; }

  CommandResult run(std::vector<std::string> args, std::vector<std::string> env = {}) {
    CommandSpec s;
    s.argv = {health_checks_path()};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    s.argv.insert(s.argv.end(), {"--log-folder", dir + "/logs"});
    s.timeout = std::chrono::seconds(60);
    env.push_back("PATH=" + dir + "/bin:/usr/bin:/bin");
    env.push_back("GCM_GPU_NODE_ID_FILE=" + dir + "/gpu_node_id");
    for (const char* v : {"SLURM_JOB_ID=", "SLURM_JOB_GPUS=", "CUDA_VISIBLE_DEVICES="}) {
      std::string key = std::string(v);
      bool given = false;
      for (const auto& e : env) given = given || e.rfind(key, 0) == 0;
      if (!given) env.push_back(v);
    }
    s.extra_env = env;
    return run_command(s);
  }
};

// ---- check-syslogs xid ----

TEST(HealthXid, NamesEachXidOnceWithCausesDescriptionAndAction) {
  Sandbox s;
  auto r = s.run({"check-syslogs", "xid", "c", "app", "--path.kmsg", kLogs + "xid-kmsg.txt", "--sink", "stdout"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("CRITICAL - xid errors. non-critical XID error: 31, XID causes: Driver Error, HW Error, "
                        "User App Error (GPU memory page fault; on PCI:0000:0d:00, 2 times; NVIDIA action: "
                        "RESTART_APP, then WORKFLOW_XID_31). XID error: 48, XID causes: HW Error (Double Bit ECC "
                        "Error; on PCI:0000:0d:00, PCI:0000:4e:00, 2 times; NVIDIA action: WORKFLOW_XID_48, then "
                        "WORKFLOW_XID_48). ",
                        0),
            0u)
      << r.out;
  auto recs = records_of(r.out);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0]["health_check"], "xid errors");
  EXPECT_EQ(recs[0]["result"], 2);
}

TEST(HealthXid, SeverityOverridesFromOptionsAndConfig) {
  Sandbox s;
  auto warn =
      s.run({"check-syslogs", "xid", "c", "app", "--path.kmsg", kLogs + "xid-kmsg.txt", "--xid-severity", "48=warn"});
  EXPECT_EQ(warn.exit_code, 1) << warn.out << warn.err;
  EXPECT_NE(warn.out.find("non-critical XID error: 48"), std::string::npos) << warn.out;
  s.write("hc.toml", "[health_checks.check-syslogs.xid]\nxid_severity = [\"31=ignore\", \"48=ignore\"]\n");
  auto quiet = s.run(
      {"--config", s.dir + "/hc.toml", "check-syslogs", "xid", "c", "app", "--path.kmsg", kLogs + "xid-kmsg.txt"});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.out << quiet.err;
  EXPECT_NE(quiet.out.find("Ignored by configuration: XID 31, 48."), std::string::npos) << quiet.out;
  auto bad =
      s.run({"check-syslogs", "xid", "c", "app", "--path.kmsg", kLogs + "xid-kmsg.txt", "--xid-severity", "48=loud"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("48=loud"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.out.find("CRITICAL - xid"), std::string::npos) << "a usage error is not a verdict: " << bad.out;
}

TEST(HealthXid, SiteCatalogueReplacesTheBuiltinOne) {
  Sandbox s;
  s.write("site.toml",
          "[[xid]]\ncode = 48\nseverity = \"warn\"\ncauses = [\"Site Label\"]\n"
          "immediate_action = \"CALL_ONCALL\"\n");
  auto r = s.run({"check-syslogs", "xid", "c", "app", "--path.kmsg", kLogs + "xid-kmsg.txt", "--xid-catalogue",
                  s.dir + "/site.toml"});
  // 31 is not in the site's catalogue: critical, as every unknown XID.
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("XID error: 31, XID causes: unknown"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("non-critical XID error: 48, XID causes: Site Label"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CALL_ONCALL"), std::string::npos) << r.out;
}

TEST(HealthXid, KernelForms) {
  Sandbox s;
  auto r = s.run({"check-syslogs", "xid", "c", "app", "--path.kmsg", kLogs + "xid-dmesg-forms.txt"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  for (const char* want : {"non-critical XID error: 31",
                           "XID error: 74, XID causes: Bus Error, Driver Error, HW "
                           "Error (NVLINK Error",
                           "non-fatal NVSwitch SXid error: 12028",
                           "fatal NVSwitch SXid error: "
                           "20034",
                           "XID error: 79", "on 0000:3b:00.0", "non-critical XID error: 63"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
}

TEST(HealthXid, CleanLogMissingLogAndAge) {
  Sandbox s;
  auto clean = s.run({"check-syslogs", "xid", "c", "app", "--path.kmsg", kLogs + "clean-dmesg.txt"});
  EXPECT_EQ(clean.exit_code, 0) << clean.out;
  EXPECT_EQ(clean.out, "OK - xid errors. No XID error was found.\n");
  auto missing = s.run({"check-syslogs", "xid", "c", "app", "--path.kmsg", s.dir + "/nope"});
  EXPECT_EQ(missing.exit_code, 1) << missing.out;
  EXPECT_NE(missing.out.find("kernel log could not be read"), std::string::npos) << missing.out;
  EXPECT_NE(missing.out.find(s.dir + "/nope"), std::string::npos) << missing.out;
  // Uptime 5000.35 s, --max-age 0.1: only the last XID 31 (at 5000.3 s) is young enough.
  std::filesystem::create_directories(s.dir + "/proc");
  s.write("proc/uptime", "5000.35 9000.00\n");
  auto recent = s.run({"check-syslogs", "xid", "c", "app", "--path.kmsg", kLogs + "xid-kmsg.txt", "--path.procfs",
                       s.dir + "/proc", "--max-age", "0.1"});
  EXPECT_EQ(recent.exit_code, 1) << recent.out;
  EXPECT_EQ(recent.out.find("XID error: 48"), std::string::npos) << recent.out;
  EXPECT_NE(recent.out.find("non-critical XID error: 31"), std::string::npos) << recent.out;
}

// The config key is path_procfs, as for every other command; check-syslogs' earlier "path.procfs" still works.
TEST(HealthXid, ProcfsFromTheConfigFileUnderEitherSpelling) {
  Sandbox s;
  std::filesystem::create_directories(s.dir + "/proc");
  s.write("proc/uptime", "5000.35 9000.00\n");
  for (std::string key : {"path_procfs", "\"path.procfs\""}) {
    s.write("config.toml", "[health_checks.check-syslogs.xid]\n" + key + " = \"" + s.dir + "/proc\"\nmax_age = 0.1\n");
    auto r = s.run({"--config", s.dir + "/config.toml", "check-syslogs", "xid", "c", "app", "--path.kmsg",
                    kLogs + "xid-kmsg.txt"});
    EXPECT_EQ(r.exit_code, 1) << key << "\n" << r.out << r.err;
    EXPECT_EQ(r.out.find("XID error: 48"), std::string::npos) << key << "\n" << r.out;
    EXPECT_NE(r.out.find("non-critical XID error: 31"), std::string::npos) << key << "\n" << r.out;
    EXPECT_EQ(r.err.find("unknown key"), std::string::npos) << key << "\n" << r.err;
  }
}

TEST(HealthXid, ReadsTheRealKernelRingBuffer) {
  Sandbox s;
  auto r = s.run({"check-syslogs", "xid", "c", "app"});
  bool readable = ::access("/dev/kmsg", R_OK) == 0;
  if (readable) {
    EXPECT_EQ(r.out.find("could not be read"), std::string::npos) << r.out;
    EXPECT_NE(r.exit_code, 3) << r.out;
  } else {
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("kernel log could not be read: cannot open the kernel log /dev/kmsg"), std::string::npos)
        << r.out;
  }
}

// ---- link-flaps, io-errors ----

TEST(HealthSyslogs, LinkFlapsReportsEveryFlap) {
  Sandbox s;
  auto r = s.run({"check-syslogs", "link-flaps", "c", "app", "--syslog_file", kSyslog + "link-flaps.log"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out,
            "CRITICAL - link flaps. eth link flap detected on eth0.\nib link flap detected on ib1, ib3 "
            "(3 times).\n\n");
  auto eth = s.run({"check-syslogs", "link-flaps", "c", "app", "--syslog_file", kSyslog + "eth-flap.log"});
  EXPECT_EQ(eth.exit_code, 1) << eth.out;
  auto quiet = s.run({"check-syslogs", "link-flaps", "c", "app", "--syslog-file", kSyslog + "quiet.log"});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.out;
  EXPECT_EQ(quiet.out, "OK - link flaps. No link flaps were detected\n");
  auto missing = s.run({"check-syslogs", "link-flaps", "c", "app", "--syslog_file", s.dir + "/syslog"});
  EXPECT_EQ(missing.exit_code, 1) << missing.out;
  EXPECT_NE(missing.out.find(s.dir + "/syslog"), std::string::npos) << missing.out;
}

// The issue's attacks: /dev/zero as the syslog grew to 11.5 GB in 30 s; a FIFO as the kernel log never returned.
TEST(HealthSyslogs, DevZeroAndASilentFifoEndAtTheDeadline) {
  Sandbox s;
  auto start = std::chrono::steady_clock::now();
  auto zero = s.run({"check-syslogs", "link-flaps", "c", "app", "--syslog_file", "/dev/zero", "--timeout", "2"});
  EXPECT_EQ(zero.exit_code, 1) << zero.out << zero.err;
  EXPECT_NE(zero.out.find("/dev/zero did not finish before the check's deadline"), std::string::npos) << zero.out;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  std::string fifo = s.dir + "/kmsg";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int writer = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);  // holds the FIFO open and sends nothing
  ASSERT_GE(writer, 0);
  auto hung = s.run({"check-syslogs", "xid", "c", "app", "--path.kmsg", fifo, "--timeout", "1"});
  ::close(writer);
  EXPECT_EQ(hung.exit_code, 1) << hung.out << hung.err;
  EXPECT_NE(hung.out.find("deadline"), std::string::npos) << hung.out;
  EXPECT_NE(hung.out.find(fifo), std::string::npos) << hung.out;
  auto zero_kmsg = s.run({"check-syslogs", "io-errors", "c", "app", "--path.kmsg", "/dev/zero"});
  EXPECT_EQ(zero_kmsg.exit_code, 1) << zero_kmsg.out << zero_kmsg.err;
  EXPECT_NE(zero_kmsg.out.find("not a kernel ring buffer"), std::string::npos) << zero_kmsg.out;
}

TEST(HealthSyslogs, OverlongLinesAreSkippedAndCounted) {
  Sandbox s;
  s.write("syslog", "Oct 14 15:01:00 node1 kernel: ib0: Lost carrier\n" + std::string(3u << 20, 'x') + "\n");
  auto r = s.run({"check-syslogs", "link-flaps", "c", "app", "--syslog_file", s.dir + "/syslog"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("ib link flap detected on ib0."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(1 line of the syslog longer than 1048576 bytes was skipped.)"), std::string::npos)
      << r.out.substr(0, 400);
}

TEST(HealthSyslogs, IoErrors) {
  Sandbox s;
  auto r = s.run({"check-syslogs", "io-errors", "c", "app", "--path.kmsg", kLogs + "io-errors-dmesg.txt"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "CRITICAL - io errors. IO error detected on: nvme0n1 nvme2n1\n");
  auto clean = s.run({"check-syslogs", "io-errors", "c", "nagios", "--path.kmsg", kLogs + "clean-dmesg.txt"});
  EXPECT_EQ(clean.exit_code, 0);
  EXPECT_EQ(clean.out, "OK - io errors\n");
}

// ---- check-dcgmi ----

const char* kDiagPass = R"({"DCGM GPU Diagnostic": {"test_categories": [{"category": "Deployment", "tests": [
  {"name": "Persistence Mode", "results": [{"status": "Pass"}]}]}]}})";
const char* kDiagFail = R"({"DCGM GPU Diagnostic": {"test_categories": [{"category": "Deployment", "tests": [
  {"name": "Persistence Mode", "results": [{"status": "Fail"}]},
  {"name": "Environment Variables", "results": [{"status": "Warn"}]}]}]}})";

// A fake dcgmi: prints $FAKE/<name> for each request and exits with $FAKE/<name>.rc (0 when absent).
std::string fake_dcgmi(Sandbox& s) {
  return s.script("dcgmi",
                  "echo \"$@\" >> \"$FAKE/calls\"\n"
                  "case \"$*\" in\n"
                  "  diag*) f=diag ;;\n"
                  "  *' -e -g '*) f=nvlink-e-$(echo \"$*\" | sed 's/.* -g //') ;;\n"
                  "  *' -s') f=nvlink-s ;;\n"
                  "esac\n"
                  "[ -n \"$SLEEP\" ] && sleep \"$SLEEP\"\n"
                  "[ -f \"$FAKE/$f\" ] && cat \"$FAKE/$f\"\n"
                  "[ -f \"$FAKE/$f.rc\" ] && exit $(cat \"$FAKE/$f.rc\")\n"
                  "exit 0\n");
}

TEST(HealthDcgmi, DiagVerdicts) {
  Sandbox s;
  fake_dcgmi(s);
  std::vector<std::string> env = {"FAKE=" + s.dir};
  s.write("diag", kDiagPass);
  auto ok = s.run({"check-dcgmi", "diag", "c", "app", "--diag_level", "2"}, env);
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_EQ(ok.out, "OK - check dcgmi diag. All checks passed.\n");
  EXPECT_NE(read_text(s.dir + "/calls").find("diag --host localhost -j -r 2"), std::string::npos);
  s.write("diag", kDiagFail);
  s.write("diag.rc", "205\n");  // dcgmi's "a test failed": the JSON is still judged
  auto fail = s.run({"check-dcgmi", "diag", "c", "app"}, env);
  EXPECT_EQ(fail.exit_code, 2) << fail.out;
  EXPECT_EQ(fail.out, "CRITICAL - check dcgmi diag. Persistence Mode failed.\nEnvironment Variables warning.\n");
  auto excluded = s.run({"check-dcgmi", "diag", "c", "app", "-x", "Persistence Mode"}, env);
  EXPECT_EQ(excluded.exit_code, 1) << excluded.out;
  s.write("diag.rc", "127\n");
  auto broken = s.run({"check-dcgmi", "diag", "c", "app"}, env);
  EXPECT_EQ(broken.exit_code, 1) << broken.out;
  EXPECT_NE(broken.out.find("dcgmi diag command FAILED to execute. error_code: 127"), std::string::npos);
  auto absent = s.run({"check-dcgmi", "diag", "c", "app", "--dcgmi-bin", "no-such-dcgmi"}, env);
  EXPECT_EQ(absent.exit_code, 1) << absent.out;
  EXPECT_NE(absent.out.find("no-such-dcgmi"), std::string::npos) << absent.out;
  std::filesystem::remove(s.dir + "/diag.rc");
  env.push_back("SLEEP=5");
  auto hung = s.run({"check-dcgmi", "diag", "c", "app", "--timeout", "1"}, env);
  EXPECT_EQ(hung.exit_code, 1) << hung.out;
  EXPECT_NE(hung.out.find("error_code: 128 output: Error command timeout because of timeout setting."),
            std::string::npos)
      << hung.out;
}

TEST(HealthDcgmi, NvlinkErrorsPerGpuAndStatus) {
  Sandbox s;
  fake_dcgmi(s);
  std::vector<std::string> env = {"FAKE=" + s.dir};
  auto counters = [](int data) {
    return json{{"body",
                 {{"Link 0",
                   {{"children",
                     {{"CRC Data Error", {{"value", std::to_string(data)}}}, {"CRC FLIT Error", {{"value", "0"}}}}}}}}}}
        .dump();
  };
  s.write("nvlink-e-0", counters(0));
  s.write("nvlink-e-1", counters(12));
  s.write("nvlink-s", "GPUs:\n    gpuId 0:\n        U U U U\n    gpuId 1:\n        U U U U\n");
  auto r = s.run({"check-dcgmi", "nvlink", "c", "app", "-c", "nvlink_errors", "-c", "nvlink_status", "-g", "2",
                  "--sink", "stdout"},
                 env);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  auto recs = records_of(r.out);
  ASSERT_EQ(recs.size(), 3u) << r.out;  // one per GPU (the reference sent the last GPU's only) and the status
  EXPECT_EQ(recs[0]["health_check"], "check dcgmi nvlink error");
  EXPECT_EQ(recs[0]["result"], 0);
  EXPECT_EQ(recs[1]["result"], 2);
  EXPECT_EQ(recs[1]["_msg"], "GPU: 1: High CRC Data Error count detected link: Link 0, error count: 12.");
  EXPECT_EQ(recs[2]["health_check"], "check dcgmi nvlink status");
  EXPECT_EQ(recs[2]["result"], 0);
  EXPECT_NE(r.out.find("CRITICAL - check dcgmi nvlink. "), std::string::npos) << r.out;
  // Each sub-check honours its own killswitch; the other still runs (the reference exited on the first).
  s.write("f.toml", "[HealthChecksFeatures]\ndisable_dcgmi_nvlink_error = true\n");
  s.write("nvlink-s", "GPUs:\n    gpuId 0:\n        U D U X\n");
  auto ks = s.run({"--features-config", s.dir + "/f.toml", "check-dcgmi", "nvlink", "c", "app", "-c", "nvlink_errors",
                   "-c", "nvlink_status", "--sink", "stdout"},
                  env);
  EXPECT_EQ(ks.exit_code, 2) << ks.out;
  auto ks_recs = records_of(ks.out);
  ASSERT_EQ(ks_recs.size(), 2u) << ks.out;
  EXPECT_EQ(ks_recs[0]["_msg"], "check dcgmi nvlink error is disabled by killswitch.");
  EXPECT_EQ(ks_recs[1]["_msg"], "gpuId 0 has 1 links down and 1 links disabled.");
  auto no_check = s.run({"check-dcgmi", "nvlink", "c", "app"}, env);
  EXPECT_EQ(no_check.exit_code, 2);
  EXPECT_NE(no_check.err.find("--check"), std::string::npos) << no_check.err;
}

// ---- check-nccl ----

TEST(HealthNccl, PairwiseRunsAndThresholds) {
  Sandbox s;
  s.script("mpirun",
           "echo \"$@\" >> \"$FAKE/calls\"\n"
           "[ -n \"$FAIL\" ] && { echo 'mpirun: cannot reach host' >&2; exit 1; }\n"
           "echo '#  out-of-place in-place'\n"
           "echo \"# Avg bus bandwidth    : $BW \"\n");
  auto run = [&](const std::string& bw, std::vector<std::string> extra, std::vector<std::string> env = {}) {
    std::vector<std::string> args = {"check-nccl",
                                     "c",
                                     "app",
                                     "--nccl-tdir",
                                     "/opt/nccl-tests",
                                     "-p",
                                     "all_reduce",
                                     "--critical-threshold",
                                     "40",
                                     "--warn-threshold",
                                     "60"};
    args.insert(args.end(), extra.begin(), extra.end());
    env.push_back("FAKE=" + s.dir);
    env.push_back("BW=" + bw);
    return s.run(args, env);
  };
  auto ok = run("100.5", {"--pairwise", "--hostlist", "node[1-3]"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  std::string calls = read_text(s.dir + "/calls");
  EXPECT_NE(calls.find("--host node1:8,node2:8 --np 16 -mca coll_hcoll_enable 0 --bind-to numa -x "
                       "NCCL_IB_PCI_RELAXED_ORDERING=1 -x CUDA_DEVICE_ORDER=PCI_BUS_ID -x NCCL_SOCKET_IFNAME=eth0 -x "
                       "NCCL_DEBUG=WARN -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 /opt/nccl-tests/all_reduce_perf "
                       "-g 1 -b 32M -e 1G -f 2"),
            std::string::npos)
      << calls;
  EXPECT_NE(calls.find("--host node2:8,node3:8"), std::string::npos) << calls;
  EXPECT_EQ(std::count(calls.begin(), calls.end(), '\n'), 3);
  EXPECT_NE(ok.out.find("all_reduce on node1,node3: Avg bus bandwidth 100.5 GB/s."), std::string::npos) << ok.out;
  auto warn = run("50", {"--hostlist", "node1", "--nvlink"});
  EXPECT_EQ(warn.exit_code, 1) << warn.out;
  EXPECT_NE(warn.out.find("below the warning threshold 60"), std::string::npos) << warn.out;
  auto crit = run("30", {"--hostlist", "node1", "-p", "alltoall"});
  EXPECT_EQ(crit.exit_code, 2) << crit.out;
  auto failed = run("30", {"--hostlist", "node1"}, {"FAIL=1"});
  EXPECT_EQ(failed.exit_code, 1) << failed.out;
  EXPECT_NE(failed.out.find("error_code: 1"), std::string::npos) << failed.out;
  auto no_hosts = run("30", {"--pairwise"});
  EXPECT_EQ(no_hosts.exit_code, 2);
  EXPECT_NE(no_hosts.err.find("Host list required for pairwise NCCL testing"), std::string::npos) << no_hosts.err;
  auto bad_list = run("30", {"--hostlist", "node[1-"});
  EXPECT_EQ(bad_list.exit_code, 2);
  auto missing = s.run({"check-nccl", "c", "app", "-p", "all_reduce", "--critical-threshold", "1"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--nccl-tdir"), std::string::npos) << missing.err;
}

// ---- cuda memtest ----

TEST(HealthCudaMemtest, PerGpuVerdictsAndDeviceSelection) {
  Sandbox s;
  std::string bin =
      s.script("fake-memtest",
               "[ -n \"${CUDA_VISIBLE_DEVICES+x}\" ] && { echo \"CUDA_VISIBLE_DEVICES is set\"; exit 9; }\n"
               "echo \"$@\" >> \"$FAKE/calls\"\n"
               "case \"$1\" in\n"
               "  --device=1) echo 'free mem 1 total mem 2'; echo 'Test failed: 7 words' >&2; exit 1 ;;\n"
               "esac\n"
               "echo 'CUDA memory test PASSED'\n");
  std::vector<std::string> env = {"FAKE=" + s.dir};
  auto r = s.run({"cuda", "memtest", "c", "app", "--memtest-bin", bin, "-gpu", "0", "-gpu", "1", "--size", "2"}, env);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("CRITICAL - cuda memtest. Running cuda memory test in parallel."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("deviceID: 0 passed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("deviceID: 1 output: free mem 1 total mem 2\n error: Test failed: 7 words"), std::string::npos)
      << r.out;
  EXPECT_NE(read_text(s.dir + "/calls").find("--device=0 --alloc_mem_gb=2"), std::string::npos);
  // A prolog tests the job's GPUs, with the job's CUDA_VISIBLE_DEVICES removed.
  auto job = s.run({"cuda", "memtest", "c", "prolog", "--memtest-bin", bin, "--verbose-out"},
                   {"FAKE=" + s.dir, "SLURM_JOB_GPUS=0,2", "SLURM_JOB_ID=7", "CUDA_VISIBLE_DEVICES=0,1"});
  EXPECT_EQ(job.exit_code, 0) << job.out;
  EXPECT_NE(job.out.find("deviceID: 2 passed"), std::string::npos) << job.out;
  auto none = s.run({"cuda", "memtest", "c", "app", "--memtest-bin", bin}, env);
  EXPECT_EQ(none.exit_code, 3) << none.out;
  auto absent = s.run({"cuda", "memtest", "c", "app", "--gpu-devices", "0"}, env);  // no cudaMemTest on PATH
  EXPECT_EQ(absent.exit_code, 1) << absent.out;
  EXPECT_NE(absent.out.find("cudaMemTest is not on PATH"), std::string::npos) << absent.out;
}

TEST(HealthCudaMemtest, TheProgramBuiltWithNvcc) {
  std::string prog = std::string(GCM_BINARY).substr(0, std::string(GCM_BINARY).rfind('/')) + "/cudaMemTest";
  if (!std::filesystem::exists(prog)) GTEST_SKIP() << "cudaMemTest was not built (no nvcc)";
  CommandSpec usage;
  usage.argv = {prog};
  auto u = run_command(usage);
  EXPECT_EQ(u.exit_code, 0);
  EXPECT_NE(u.out.find("--device=N"), std::string::npos) << u.out;
  CommandSpec on_gpu;
  on_gpu.argv = {prog, "--device=0", "--alloc_mem_gb=1"};
  on_gpu.timeout = std::chrono::seconds(120);
  auto g = run_command(on_gpu);
  if (std::filesystem::exists("/dev/nvidia0")) {
    EXPECT_EQ(g.exit_code, 0) << g.out << g.err;
    EXPECT_NE(g.out.find("CUDA memory test PASSED"), std::string::npos) << g.out;
  } else {
    EXPECT_EQ(g.exit_code, 1) << g.out;
    EXPECT_NE(g.out.find("Invalid device id or device already in use"), std::string::npos) << g.out;
  }
}

// ---- killswitches over the whole tree ----

// Arguments a command needs to get past its parser (required options); the killswitch is consulted before the check
// validates anything else.
const std::map<std::string, std::vector<std::string>> kRequiredArgs = {
    {"check-nvidia-smi", {"-c", "gpu_num"}},
    {"check-dcgmi nvlink", {"-c", "nvlink_errors", "-c", "nvlink_status"}},
    {"check-telemetry", {"--exit_code", "2", "--health-check-name", "x", "--node", "n"}},
    {"check-process check-running-process", {"-p", "x"}},
    {"check-storage disk-usage", {"-v", "/x"}},
    {"check-storage disk-size", {"-v", "/x", "--operator", ">", "--value", "1"}},
    {"check-storage mounted-directory", {"-d", "/x"}},
    {"check-storage file-exists", {"-f", "/x"}},
    {"check-storage directory-exists", {"-d", "/x"}},
    {"check-storage check-mountpoint", {"--mountpoint", "/x"}},
    {"check-processor check-mem-size", {"--dimms", "1", "--total-size", "1"}},
    {"check-processor check-clocksource", {"--expected-source", "tsc"}},
    {"check-service service-status", {"-s", "x"}},
    {"check-service package-version", {"-p", "x", "-v", "1"}},
    {"check-service slurmctld-count", {"--slurmctld-count", "1"}},
    {"check-service ssh-connection", {"--host", "x"}},
    {"check-node check-module", {"-m", "x"}},
    {"check-ib check-iblink", {"--manifest_file", "/x"}},
    {"check-hca", {"--expected-count", "1"}},
    {"check-pci", {"--manifest_file", "/x"}},
    {"check-ethlink", {"--manifest_file", "/x"}},
    {"check-blockdev", {"--manifest_file", "/x"}},
    {"check-authentication check-path-access-by-user", {"-p", "/x"}},
    {"check-ssh-certs", {"--host", "x"}},
    {"check-airstore flash-array-credential-count", {"--expected-count-ge", "1"}},
};

TEST(HealthKillswitches, EveryCommandOfTheTreeExitsOkAndStillSendsTelemetry) {
  Sandbox s;
  std::string flags = "[HealthChecksFeatures]\n";
  for (const auto& f : health::known_killswitch_flags()) flags += f + " = true\n";
  s.write("features.toml", flags);
  size_t checked = 0;
  for (const auto& spec : health::health_check_registry()) {
    std::string path;
    for (const auto& p : spec.path) path += (path.empty() ? "" : " ") + p;
    std::vector<std::string> args = {"--features-config", s.dir + "/features.toml"};
    args.insert(args.end(), spec.path.begin(), spec.path.end());
    args.insert(args.end(), {"c", "nagios", "--verbose-out", "--sink", "stdout"});
    if (auto it = kRequiredArgs.find(path); it != kRequiredArgs.end())
      args.insert(args.end(), it->second.begin(), it->second.end());
    auto r = s.run(args);
    auto recs = records_of(r.out);
    EXPECT_FALSE(recs.empty()) << path << ": no telemetry\n" << r.out << r.err;
    if (path == "check-telemetry") {  // it records a given verdict and has no killswitch
      EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
      continue;
    }
    EXPECT_EQ(r.exit_code, 0) << path << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("disabled by killswitch"), std::string::npos) << path << "\n" << r.out;
    for (const auto& rec : recs) EXPECT_EQ(rec["result"], 0) << path << ": " << rec;
    ++checked;
  }
  EXPECT_GE(checked, 40u);  // GCM's tree: 44 commands besides check-telemetry
}

}  // namespace
}  // namespace gcm::testing

namespace gcm::testing {
namespace {

// The suite the package ships names only checks this build has, with options they accept (--validate resolves
// every entry through the registry and parses its options, running nothing).
TEST(ShippedSuite, EveryProfileValidates) {
  for (const char* profile : {"prolog", "epilog", "healthcheck"}) {
    auto r = run_gcm({profile, "--validate", "--suite", std::string(GCM_SOURCE_DIR) + "/deploy/etc/gcm/suite.toml"});
    EXPECT_EQ(r.exit_code, 0) << profile << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find(std::string(profile) + ": "), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace gcm::testing

// health_checks command lines as GCM's documentation writes them (its README and systemd/NPD examples, the
// reference's §3 and the newer NPD conditions), parsed in many orders: options before, between and after CLUSTER and
// TYPE, in every order of the option groups for short lines. Click gives each occurrence of a repeatable option
// exactly one value wherever it stands, so every order must give the same values; `-c gpu_num CLUSTER TYPE` once
// gave -c all three words.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "health/health_checks_command.h"

namespace gcm {
namespace {

struct DocumentedLine {
  std::string source;                                      // where the reference shows it
  std::vector<std::string> path;                           // group and check
  std::vector<std::vector<std::string>> groups;            // each option with its value(s), as one unit
  std::map<std::string, std::vector<std::string>> expect;  // parameter -> values (sorted), besides cluster/type
};

const std::vector<DocumentedLine>& documented_lines() {
  static const std::vector<DocumentedLine> lines = {
      {"reference §3 prolog example",
       {"check-nvidia-smi"},
       {{"-c", "gpu_num"}, {"-c", "running_procs"}},
       {{"check", {"gpu_num", "running_procs"}}}},
      {"issue 19: the line that failed", {"check-nvidia-smi"}, {{"-c", "gpu_num"}}, {{"check", {"gpu_num"}}}},
      {"NPD GcmSmiEccProblem through run_health_check.sh",
       {"check-nvidia-smi"},
       {{"-c", "ecc_uncorrected_volatile_total"},
        {"-c", "ecc_corrected_volatile_total"},
        {"--ecc_uncorrected_volatile_threshold=0"},
        {"--ecc_corrected_volatile_threshold=50000000"},
        {"--sink=otel"},
        {"--log-level=CRITICAL"},
        {"--sink-opt=log_resource_attributes={'k': 'v'}"},
        {"--verbose-out"}},
       {{"check", {"ecc_corrected_volatile_total", "ecc_uncorrected_volatile_total"}},
        {"ecc_uncorrected_volatile_threshold", {"0"}},
        {"ecc_corrected_volatile_threshold", {"50000000"}},
        {"sink", {"otel"}},
        {"log_level", {"CRITICAL"}},
        {"sink_opts", {"log_resource_attributes={'k': 'v'}"}}}},
      {"NPD GcmSmiDisconnectedProblem",
       {"check-nvidia-smi"},
       {{"-c", "gpu_num"}, {"--gpu_num=8"}, {"--sink=do_nothing"}, {"--verbose-out"}},
       {{"check", {"gpu_num"}}, {"gpu_num", {"8"}}, {"sink", {"do_nothing"}}}},
      {"NPD GcmDcgmiNvlinkStatusProblem",
       {"check-dcgmi", "nvlink"},
       {{"-c", "nvlink_status"}, {"--host", "10.0.0.7"}, {"-o", "a=1"}, {"-o", "b=2"}},
       {{"check", {"nvlink_status"}}, {"host", {"10.0.0.7"}}, {"sink_opts", {"a=1", "b=2"}}}},
      {"issue 55: GCM's prolog line for check-path-access-by-user, whose -o is --operation",
       {"check-authentication", "check-path-access-by-user"},
       {{"-p", "/data"}, {"-o", "read"}, {"--sink-opt", "a=1"}},
       {{"path", {"/data"}}, {"operation", {"read"}}, {"sink_opts", {"a=1"}}}},
      {"NPD GcmDcgmiDiagProblem",
       {"check-dcgmi", "diag"},
       {{"--diag_level=1"}, {"--host", "10.0.0.7"}},
       {{"diag_level", {"1"}}, {"host", {"10.0.0.7"}}}},
      {"NPD GcmXidErrorsProblem", {"check-syslogs", "xid"}, {{"--verbose-out"}}, {}},
      {"NPD GcmProcZombieProblem", {"check-process", "check-zombie"}, {{"--log-level=CRITICAL"}}, {}},
      {"reference check-telemetry example",
       {"check-telemetry"},
       {{"--exit_code=2"},
        {"--health-check-name=check zombie"},
        {"--msg=test zombie"},
        {"--node=node1000"},
        {"--job-id=21"},
        {"--sink=stdout"},
        {"-o", "app_secret=x"}},
       {{"exit_code", {"2"}},
        {"health_check_name", {"check zombie"}},
        {"msg", {"test zombie"}},
        {"node", {"node1000"}},
        {"job_id", {"21"}},
        {"sink_opts", {"app_secret=x"}}}},
      {"reference check-service service-status (-s multiple)",
       {"check-service", "service-status"},
       {{"-s", "slurmd"}, {"-s", "sshd"}, {"--timeout", "30"}},
       {{"service", {"slurmd", "sshd"}}, {"timeout", {"30"}}}},
      {"reference check-storage directory-exists (-d multiple)",
       {"check-storage", "directory-exists"},
       {{"-d", "/tmp"}, {"-d", "/var"}},
       {{"directory", {"/tmp", "/var"}}}},
      {"reference cuda memtest (-gpu multiple ints, one dash)",
       {"cuda", "memtest"},
       {{"-gpu", "0"}, {"-gpu", "1"}, {"--size", "4"}},
       {{"gpu_devices", {"0", "1"}}, {"size", {"4"}}}},
  };
  return lines;
}

// Every order of the groups when there are at most 4 of them; else the written order, its reverse and every
// rotation. CLUSTER and TYPE go into every pair of slots (they keep their order, as positionals must).
std::vector<std::vector<std::string>> orders_of(const DocumentedLine& l, const std::string& cluster,
                                                const std::string& type) {
  std::vector<std::vector<std::vector<std::string>>> group_orders;
  std::vector<size_t> idx(l.groups.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  auto add = [&] {
    std::vector<std::vector<std::string>> g;
    for (size_t i : idx) g.push_back(l.groups[i]);
    group_orders.push_back(std::move(g));
  };
  if (l.groups.size() <= 4) {
    do add();
    while (std::next_permutation(idx.begin(), idx.end()));
  } else {
    for (size_t r = 0; r < idx.size(); ++r) {
      add();
      std::rotate(idx.begin(), idx.begin() + 1, idx.end());
    }
    std::reverse(idx.begin(), idx.end());
    add();
  }
  std::vector<std::vector<std::string>> lines;
  for (const auto& groups : group_orders) {
    size_t n = groups.size();
    for (size_t a = 0; a <= n; ++a)
      for (size_t b = a; b <= n; ++b) {  // CLUSTER before group a, TYPE before group b (n: at the end)
        std::vector<std::string> words = l.path;
        for (size_t i = 0; i <= n; ++i) {
          if (i == a) words.push_back(cluster);
          if (i == b) words.push_back(type);
          if (i < n) words.insert(words.end(), groups[i].begin(), groups[i].end());
        }
        lines.push_back(std::move(words));
      }
  }
  return lines;
}

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

TEST(HealthChecksCommandLine, TheReferencesLinesGiveTheSameValuesInEveryOrder) {
  size_t parsed = 0;
  for (const auto& line : documented_lines()) {
    for (const auto& words : orders_of(line, "fair_cluster", "prolog")) {
      ParsedCheckLine p = parse_health_checks_line(words);
      ++parsed;
      ASSERT_EQ(p.error, "") << line.source << ": health_checks " << joined(words);
      ASSERT_EQ(p.path, line.path) << joined(words);
      EXPECT_EQ(p.values["cluster"], std::vector<std::string>{"fair_cluster"}) << joined(words);
      EXPECT_EQ(p.values["type"], std::vector<std::string>{"prolog"}) << joined(words);
      for (const auto& [param, expected] : line.expect) {
        std::vector<std::string> got = p.values[param];
        std::sort(got.begin(), got.end());  // -c a -c b and -c b -c a select the same sub-checks
        EXPECT_EQ(got, expected) << line.source << ": " << param << " in health_checks " << joined(words);
      }
    }
  }
  EXPECT_GT(parsed, 1000u) << "the orders were generated";
}

TEST(HealthChecksCommandLine, EachOccurrenceTakesOneValueSoAStrayWordIsAnError) {
  // Before the fix the words after -c went into -c; now a third positional is refused, naming it.
  ParsedCheckLine p = parse_health_checks_line({"check-nvidia-smi", "-c", "gpu_num", "c1", "app", "extra"});
  EXPECT_NE(p.error.find("extra"), std::string::npos) << p.error;
  // A value list is given by repeating the option, not by listing words after it.
  p = parse_health_checks_line({"check-nvidia-smi", "c1", "app", "-c", "gpu_num", "row_remap"});
  EXPECT_NE(p.error.find("row_remap"), std::string::npos) << p.error;
}

TEST(HealthChecksCommandLine, DetachIsARootOptionBesideTheChecksOwnDashD) {
  for (const char* flag : {"-d", "--detach"}) {
    ParsedCheckLine p =
        parse_health_checks_line({flag, "check-storage", "directory-exists", "-d", "/tmp", "c1", "nagios"});
    ASSERT_EQ(p.error, "") << flag;
    EXPECT_TRUE(p.detach) << flag;
    EXPECT_EQ(p.path, (std::vector<std::string>{"check-storage", "directory-exists"}));
    EXPECT_EQ(p.values["directory"], std::vector<std::string>{"/tmp"}) << "the check's -d is its own";
  }
  ParsedCheckLine p = parse_health_checks_line({"check-storage", "directory-exists", "-d", "/tmp", "c1", "nagios"});
  ASSERT_EQ(p.error, "");
  EXPECT_FALSE(p.detach) << "-d after the check name is the check's --directory";
  p = parse_health_checks_line({"--config", "/dev/null", "-d", "check-nvidia-smi", "-c", "gpu_num", "c1", "app"});
  ASSERT_EQ(p.error, "");
  EXPECT_TRUE(p.detach);
  EXPECT_EQ(p.values["check"], std::vector<std::string>{"gpu_num"});
}

// What a command prints to stdout, and its exit code.
std::pair<int, std::string> printed_by(int (*main_fn)(int, char**), std::vector<std::string> words) {
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  testing::internal::CaptureStdout();
  int rc = main_fn(static_cast<int>(argv.size()), argv.data());
  return {rc, testing::internal::GetCapturedStdout()};
}

TEST(HealthChecksHelp, EverySubCheckOfCheckNvidiaSmiIsInItsHelp) {
  auto [rc, help] = printed_by(health_checks_main, {"health_checks", "check-nvidia-smi", "--help"});
  EXPECT_EQ(rc, 0);
  // persistence_mode was once missing from a help text written by hand; each sub-check has its line under -c.
  for (const char* sub :
       {"gpu_num", "clock_freq", "clock_policy", "running_procs", "running_procs_and_kill", "gpu_temperature",
        "gpu_mem_usage", "gpu_retired_pages", "ecc_uncorrected_volatile_total", "ecc_corrected_volatile_total",
        "vbios_mismatch", "row_remap", "row_remap_pending", "row_remap_failed", "persistence_mode"})
    EXPECT_NE(help.find(std::string(sub) + ": "), std::string::npos) << sub << " is not in --help:\n" << help;
}

}  // namespace
}  // namespace gcm

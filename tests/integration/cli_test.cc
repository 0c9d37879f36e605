// The gcm binary as an operator runs it: exit codes, messages, config files, signals, and the storage collector on
// the reference's mountinfo fixture.
#include <signal.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/http_client.h"
#include "helpers.h"
#include "process.h"

namespace gcm::testing {
namespace {

using namespace std::chrono_literals;

TEST(Cli, HelpListsOptionsWithDefaultsAndSinks) {
  auto r = run_gcm({"storage", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--chunk-size TEXT=1M"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--interval INT:NONNEGATIVE=86400"), std::string::npos);
  EXPECT_NE(r.out.find("otel_endpoint=<str>"), std::string::npos);
  EXPECT_NE(r.out.find("max_bytes=<int>"), std::string::npos);
  auto root = run_gcm({"--help"});
  EXPECT_EQ(root.exit_code, 0);
  EXPECT_NE(root.out.find("storage"), std::string::npos);
  auto v = run_gcm({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("gcm, version"), std::string::npos);
}

// Every collector that can ask slurmrestd says so in its help (sacct_running failed this before it took the options).
TEST(Cli, TheSlurmBackendOptionsAreInTheHelpOfEveryCollectorThatTakesThem) {
  for (const char* collector :
       {"slurm_job_monitor", "slurm_monitor", "scontrol", "sacctmgr_qos", "sacctmgr_user", "sacct_running", "sshare"}) {
    auto r = run_gcm({collector, "--help"});
    EXPECT_EQ(r.exit_code, 0) << collector;
    for (const char* option : {"--slurm-backend", "--slurm-rest-url", "--slurm-rest-token-file", "--slurm-rest-user",
                               "--slurm-rest-api-version"})
      EXPECT_NE(r.out.find(option), std::string::npos) << collector << " " << option << "\n" << r.out;
  }
}

TEST(Cli, HealthChecksIsTheSameProgramUnderASecondName) {
  CommandSpec spec;
  spec.argv = {std::filesystem::path(gcm_binary()).parent_path() / "health_checks", "--version"};
  auto r = run_command(spec);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("health_checks, version"), std::string::npos);
}

// `gcm health_checks --help` is the health_checks program's help (its groups), not an empty stub of gcm's.
TEST(Cli, GcmHealthChecksHelpIsTheHealthChecksHelp) {
  CommandSpec spec;
  spec.argv = {std::filesystem::path(gcm_binary()).parent_path() / "health_checks", "--help"};
  auto direct = run_command(spec);
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  auto r = run_gcm({"health_checks", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* group : {"check-process", "check-syslogs", "check-nvidia-smi"})
    EXPECT_NE(r.out.find(group), std::string::npos) << group << "\n" << r.out;
  EXPECT_EQ(r.out, direct.out);
  auto sub = run_gcm({"health_checks", "check-syslogs", "--help"});
  EXPECT_EQ(sub.exit_code, 0) << sub.err;
  EXPECT_NE(sub.out.find("xid"), std::string::npos) << sub.out;
}

// `gcm --help <command>` is the root's help, as click's eager --help gives it: every command is listed, not only the
// one named (only the named command's options are built, for start-up time).
TEST(Cli, RootHelpBeforeACommandListsEveryCommand) {
  auto full = run_gcm({"--help"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  auto r = run_gcm({"--help", "health_checks"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* command : {"health_checks", "storage", "slurm_processor", "prolog", "schemas"})
    EXPECT_NE(r.out.find(command), std::string::npos) << command << "\n" << r.out;
  EXPECT_EQ(r.out, full.out);
}

// An unknown command is a usage error also with --help (CLI11 would print the root help and exit 0).
TEST(Cli, UnknownCommandExits2AndNamesItEvenWithHelp) {
  // (This used `sprio`, GCM's own name of a then-missing command; gcm sprio exists now.)
  for (std::vector<std::string> args : {std::vector<std::string>{"no_such_collector", "--help"},
                                        {"no_such_collector"},
                                        {"--config", "/dev/null", "no_such_collector", "-h"}}) {
    auto r = run_gcm(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("unknown command 'no_such_collector'"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("Subcommands"), std::string::npos) << r.out;
  }
}

// check-nvidia-smi's help lists the sub-checks from the table the check runs, persistence_mode included.
TEST(Cli, NvidiaSmiHelpListsEverySubCheck) {
  auto r = run_gcm({"health_checks", "check-nvidia-smi", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("-c gpu_num, clock_freq, clock_policy, running_procs, running_procs_and_kill, gpu_temperature, "
                       "gpu_mem_usage, gpu_retired_pages, ecc_uncorrected_volatile_total, "
                       "ecc_corrected_volatile_total, vbios_mismatch, row_remap, row_remap_pending, "
                       "row_remap_failed, persistence_mode."),
            std::string::npos)
      << r.out;
}

TEST(Cli, UsageErrorsExit2AndNameTheProblem) {
  auto dir = temp_dir("cli");
  auto bad_option = run_gcm({"storage", "--no-such-option"});
  EXPECT_EQ(bad_option.exit_code, 2);
  EXPECT_NE(bad_option.err.find("--no-such-option"), std::string::npos);

  auto bad_sink = run_gcm(
      {"storage", "--once", "--sink", "nope", "--log-folder", dir, "--cluster", "c", "--statvfs-patterns", "c=^/$"});
  EXPECT_EQ(bad_sink.exit_code, 2);
  EXPECT_NE(bad_sink.err.find("Sink 'nope' could not be found"), std::string::npos) << bad_sink.err;

  auto bad_opt = run_gcm({"storage", "--once", "--sink", "file", "-o", "file_path=/tmp/x", "-o", "colour=red",
                          "--log-folder", dir, "--cluster", "c", "--statvfs-patterns", "c=^/$"});
  EXPECT_EQ(bad_opt.exit_code, 2);
  EXPECT_NE(bad_opt.err.find("does not accept option colour"), std::string::npos) << bad_opt.err;
  EXPECT_NE(bad_opt.err.find("file_path, job_file_path"), std::string::npos) << bad_opt.err;

  auto bad_chunk = run_gcm({"storage", "--once", "--chunk-size", "3G", "--log-folder", dir, "--cluster", "c",
                            "--statvfs-patterns", "c=^/$"});
  EXPECT_EQ(bad_chunk.exit_code, 2);
  EXPECT_NE(bad_chunk.err.find("Unrecognized SI symbol 'G'"), std::string::npos) << bad_chunk.err;

  auto bad_level = run_gcm({"storage", "--log-level", "LOUD"});
  EXPECT_EQ(bad_level.exit_code, 2);
}

// Safety switches that fail loudly: sizes that would wrap, intervals that would spin, URLs that are not http(s) and
// config files that are directories are usage errors (exit 2) naming the value, before any I/O.
TEST(Cli, UnsafeSizesIntervalsUrlsAndConfigPathsExit2) {
  auto dir = temp_dir("cli-unsafe");
  std::vector<std::string> storage = {"storage", "--log-folder", dir, "--cluster", "c", "--statvfs-patterns", "c=^/$"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = storage;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_gcm(args, 20s);
  };
  auto wrapped = with({"--once", "--chunk-size", "18446744073710M"});
  EXPECT_EQ(wrapped.exit_code, 2) << wrapped.out << wrapped.err;
  EXPECT_NE(wrapped.err.find("'18446744073710M' is too large"), std::string::npos) << wrapped.err;

  auto spin = with({"--interval", "0", "--sink", "do_nothing"});
  EXPECT_EQ(spin.exit_code, 2) << "--interval 0 ran: " << spin.err;
  EXPECT_NE(spin.err.find("--interval"), std::string::npos) << spin.err;
  EXPECT_NE(spin.err.find("at least 1 second"), std::string::npos) << spin.err;
  auto forever = with({"--interval", "100000000000", "--sink", "do_nothing"});
  EXPECT_EQ(forever.exit_code, 2) << forever.err;
  EXPECT_NE(forever.err.find("at most 366 days"), std::string::npos) << forever.err;
  auto huge_timeout = with({"--once", "--statvfs-timeout", "1e300"});
  EXPECT_EQ(huge_timeout.exit_code, 2) << huge_timeout.err;
  // gcm drainer declares --slurm-timeout as the Slurm collectors do; it had no upper bound, and 1e300 s overflowed
  // the conversion to milliseconds of every scontrol call.
  auto drainer_timeout = run_gcm({"drainer", "--slurm-timeout", "1e300", "--log-folder", dir}, 20s);
  EXPECT_EQ(drainer_timeout.exit_code, 2) << drainer_timeout.err;
  EXPECT_NE(drainer_timeout.err.find("--slurm-timeout"), std::string::npos) << drainer_timeout.err;
  EXPECT_NE(drainer_timeout.err.find("at most 366 days"), std::string::npos) << drainer_timeout.err;

  for (std::string url : {"file:///etc/hostname", "gopher://127.0.0.1:70", "ftp://127.0.0.1/x"}) {
    auto r = with({"--once", "--sink", "otel", "-o", "otel_endpoint=" + url});
    EXPECT_EQ(r.exit_code, 2) << url << ": " << r.err;
    EXPECT_NE(r.err.find("Invalid value for 'otel_endpoint': '" + url + "'"), std::string::npos) << r.err;
  }
  auto downstream = run_gcm(
      {"slurm_processor", "--listen", "127.0.0.1:0", "--downstream", "gopher://127.0.0.1:70", "--log-folder", dir},
      20s);
  EXPECT_EQ(downstream.exit_code, 2) << downstream.err;
  EXPECT_NE(downstream.err.find("Invalid value for '--downstream': 'gopher://127.0.0.1:70' (scheme 'gopher'"),
            std::string::npos)
      << downstream.err;

  auto config_dir = run_gcm({"--config", dir, "storage", "--once"}, 20s);
  EXPECT_EQ(config_dir.exit_code, 2) << config_dir.err;
  EXPECT_NE(config_dir.err.find(dir + ": is a directory"), std::string::npos) << config_dir.err;
}

TEST(Cli, ConfigFileErrorsAndWarnings) {
  auto dir = temp_dir("cli-config");
  std::ofstream(dir + "/bad.toml") << "[gcm.storage]\ninterval = 5\nsink = \n";
  auto bad = run_gcm({"--config", dir + "/bad.toml", "storage", "--once"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find(dir + "/bad.toml:3:"), std::string::npos) << bad.err;

  std::ofstream(dir + "/ok.toml") << "[gcm.storage]\nverbose = true\nsink = 'do_nothing'\ncluster = 'c'\n"
                                  << "statvfs_patterns = ['c=^/$']\nlog_folder = '" << dir << "'\n";
  auto ok = run_gcm({"--config", dir + "/ok.toml", "storage", "--once"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.err.find("unknown key 'verbose' in [gcm.storage]"), std::string::npos) << ok.err;
  EXPECT_EQ(ok.out, "");  // sink do_nothing came from the config

  auto cli_wins = run_gcm({"--config", dir + "/ok.toml", "storage", "--once", "--sink", "stdout"});
  EXPECT_EQ(cli_wins.exit_code, 0);
  EXPECT_NE(cli_wins.out.find("\"directory\": \"/\""), std::string::npos) << cli_wins.out;
}

// The reference's test_storage: pattern ^/logs.*$|^/public$ on its mountinfo sample gives two Statvfs records.
TEST(Cli, StorageOnTheReferenceMountinfoFixture) {
  std::string fixture = std::string(GCM_SOURCE_DIR) + "/../shared/fixtures/gcm/sample-proc-self-mountinfo-output.txt";
  if (!std::filesystem::exists(fixture)) GTEST_SKIP() << "shared fixtures not present: " << fixture;
  auto dir = temp_dir("storage");
  std::filesystem::create_directories(dir + "/proc/self");
  std::filesystem::copy_file(fixture, dir + "/proc/self/mountinfo");
  for (const char* d : {"/root/logs", "/root/le/cmd", "/root/public"}) std::filesystem::create_directories(dir + d);
  auto r = run_gcm({"storage", "--once", "--cluster", "fair_cluster", "--statvfs-patterns",
                    "fair_cluster=^/logs.*$|^/public$", "--path.procfs", dir + "/proc", "--path.rootfs", dir + "/root",
                    "--log-folder", dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u) << r.out;
  EXPECT_EQ(j[0]["cluster"], "fair_cluster");
  EXPECT_EQ(j[0]["directory"], "/logs");
  EXPECT_EQ(j[0]["file_system"], "node101:/syslog");
  EXPECT_EQ(j[1]["directory"], "/public");
  EXPECT_EQ(j[1]["file_system"], "node101:/public");
  struct statvfs st;
  ASSERT_EQ(statvfs((dir + "/root/public").c_str(), &st), 0);
  EXPECT_EQ(j[1]["f_blocks"], static_cast<int64_t>(st.f_blocks));
  EXPECT_EQ(j[1]["f_namemax"], static_cast<int64_t>(st.f_namemax));
}

TEST(Cli, StorageMissingMountIsReportedAndExitsOneWithTheOthersDelivered) {
  std::string fixture = std::string(GCM_SOURCE_DIR) + "/../shared/fixtures/gcm/sample-proc-self-mountinfo-output.txt";
  if (!std::filesystem::exists(fixture)) GTEST_SKIP() << "shared fixtures not present";
  auto dir = temp_dir("storage-missing");
  std::filesystem::create_directories(dir + "/proc/self");
  std::filesystem::copy_file(fixture, dir + "/proc/self/mountinfo");
  std::filesystem::create_directories(dir + "/root/logs");  // /public is missing
  auto r = run_gcm({"storage", "--once", "--cluster", "c", "--statvfs-patterns", "c=^/logs.*$|^/public$",
                    "--path.procfs", dir + "/proc", "--path.rootfs", dir + "/root", "--log-folder", dir});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("statvfs of /public"), std::string::npos) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["directory"], "/logs");
}

TEST(Cli, PureUsageFiles) {
  auto dir = temp_dir("pure");
  std::ofstream(dir + "/usage.jsonl") << "{\"user\": 0, \"used\": 1024, \"sample_time\": 1700000000, "
                                         "\"directory\": \"//a/./b//\"}\n"
                                      << "{\"user\": 4000321, \"used\": 7, \"sample_time\": 1700000001, "
                                         "\"directory\": \"/x\"}\n";
  auto r = run_gcm(
      {"storage", "--once", "--cluster", "c", "--pure-json-file-path", dir + "/usage.jsonl", "--log-folder", dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["user"], 0);
  EXPECT_EQ(j[0]["used_bytes"], 1024);
  EXPECT_EQ(j[0]["directory"], "//a/b");
  EXPECT_EQ(j[0]["username"], "root");
  EXPECT_FALSE(j[1].contains("username"));  // unknown uid: null, dropped from the stdout form

  std::ofstream(dir + "/bad.jsonl") << "{\"user\": 1, \"used\": 2, \"sample_time\": 3, \"directory\": \"/ok\"}\n"
                                    << "not json\n";
  auto bad = run_gcm(
      {"storage", "--once", "--cluster", "c", "--pure-json-file-path", dir + "/bad.jsonl", "--log-folder", dir});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find(dir + "/bad.jsonl:2: not a JSON object"), std::string::npos) << bad.err;
  EXPECT_NE(bad.out.find("\"/ok\""), std::string::npos);  // the good line was still delivered
}

TEST(Cli, SigtermFinishesFlushesAndExitsZero) {
  auto dir = temp_dir("sigterm");
  BackgroundProcess p({gcm_binary(), "storage", "--cluster", "c", "--statvfs-patterns", "c=^/$", "--interval", "3600",
                       "--log-folder", dir},
                      dir + "/stderr");
  auto line = p.read_line(20s);
  ASSERT_TRUE(line.has_value());
  EXPECT_NE(line->find("\"directory\": \"/\""), std::string::npos);
  EXPECT_EQ(p.stop(SIGTERM, 10s), 0);
  EXPECT_NE(read_text(dir + "/storage_logs/storage.log").find("stopped by signal"), std::string::npos);
}

// Without --cluster the name comes from `scontrol show config` (a fake one first on PATH here), and is
// "local-node" when scontrol fails or is missing.
TEST(Cli, ClusterIsDetectedFromScontrolOrFallsBackToLocalNode) {
  auto dir = temp_dir("cluster");
  std::filesystem::create_directories(dir + "/bin");
  std::ofstream(dir + "/bin/scontrol") << "#!/bin/sh\n[ \"$1 $2\" = \"show config\" ] || exit 1\n"
                                       << "echo 'Configuration data as of 2026-01-01T00:00:00'\n"
                                       << "echo 'ClusterName             = fake_cluster'\n";
  std::filesystem::permissions(dir + "/bin/scontrol", std::filesystem::perms::owner_all);
  std::string path = "PATH=" + dir + "/bin:/usr/bin:/bin";
  auto r = run_gcm({"storage", "--once", "--statvfs-patterns", "fake_cluster=^/$", "--log-folder", dir}, 60s, {path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"cluster\": \"fake_cluster\""), std::string::npos) << r.out;

  std::ofstream(dir + "/bin/scontrol", std::ios::trunc) << "#!/bin/sh\necho 'slurm_load_ctl_conf error' >&2\nexit 1\n";
  auto down = run_gcm({"storage", "--once", "--statvfs-patterns", "local-node=^/$", "--log-folder", dir}, 60s, {path});
  ASSERT_EQ(down.exit_code, 0) << down.err;
  EXPECT_NE(down.out.find("\"cluster\": \"local-node\""), std::string::npos) << down.out;
}

TEST(Cli, LogsGoToTheReferenceLayout) {
  auto dir = temp_dir("logs");
  auto r = run_gcm({"storage", "--once", "--cluster", "c", "--statvfs-patterns", "c=^/$", "--log-folder", dir,
                    "--log-level", "debug"});
  ASSERT_EQ(r.exit_code, 0);
  std::string log = read_text(dir + "/storage_logs/storage.log");
  EXPECT_NE(log.find("] - [DEBUG] - [storage] - "), std::string::npos) << log;
}

TEST(Cli, DryRunForcesStdout) {
  auto dir = temp_dir("dry");
  auto r = run_gcm({"storage", "--once", "-n", "--sink", "otel", "-o", "otel_endpoint=http://127.0.0.1:1", "--cluster",
                    "c", "--statvfs-patterns", "c=^/$", "--log-folder", dir});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("[{\"cluster\": \"c\"", 0), 0u) << r.out;
}

TEST(Cli, UnreachableOtlpEndpointFailsWithExitOneAndSaysWhy) {
  auto dir = temp_dir("otel-down");
  auto r = run_gcm({"storage", "--once", "--sink", "otel", "-o", "otel_endpoint=http://127.0.0.1:1", "--retries", "1",
                    "--retry-backoff", "0.01", "--cluster", "c", "--statvfs-patterns", "c=^/$", "--log-folder", dir});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("http://127.0.0.1:1/v1/logs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gave up after 1 retry"), std::string::npos) << r.err;
}

// gcm -d: slurm_processor goes into the background once its options, config and log are good (a bad option is still
// an error on the terminal); the suites refuse it, because slurmd reads a prolog's exit status.
TEST(Cli, DetachRunsSlurmProcessorInTheBackgroundAndIsRefusedByTheSuites) {
  auto bad = run_gcm({"-d", "slurm_processor", "--listen", "127.0.0.1:0"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--downstream is required"), std::string::npos) << bad.err;
  for (const char* suite : {"prolog", "epilog", "healthcheck"}) {
    auto r = run_gcm({"-d", suite});
    EXPECT_EQ(r.exit_code, 2) << suite;
    EXPECT_NE(r.err.find("-d/--detach does not apply to '" + std::string(suite) + "'"), std::string::npos) << r.err;
  }
  auto dir = temp_dir("cli-detach-processor");
  int port = free_port();
  auto r = run_gcm({"-d", "slurm_processor", "--listen", "127.0.0.1:" + std::to_string(port), "--downstream",
                    "http://127.0.0.1:9/v1/metrics", "--attribution", "slurmd-local", "--scontrol", "/bin/false",
                    "--log-folder", dir});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  HttpClient http;
  std::string health = "http://127.0.0.1:" + std::to_string(port) + "/health";
  EXPECT_TRUE(eventually(
      [&] {
        try {
          return http.get(health, 1000ms).status == 200;
        } catch (const std::exception&) {
          return false;
        }
      },
      20s))
      << "the detached slurm_processor never answered " << health;
  // The daemon is nobody's child: find it by its log folder, which names this test's directory, and stop it.
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = read_text(e.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find("slurm_processor") != std::string::npos && cmdline.find(dir) != std::string::npos)
      ::kill(std::stoi(pid), SIGTERM);
  }
}

}  // namespace
}  // namespace gcm::testing

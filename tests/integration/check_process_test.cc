// health_checks end to end on a fake host (host_checks_fixture.h): check-process: zombies, D-state and running
// processes from procfs.
#include "host_checks_fixture.h"

namespace gcm::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ------------------------------------------------------------------------------------------------ check-process

// A fake /proc: uptime 10 000 s, processes given as (pid, comm, state, age in seconds, cmdline).
void proc_entry(Host& h, int pid, const std::string& comm, char state, double age, const std::string& cmdline,
                long long ctxt = 5) {
  long ticks = ::sysconf(_SC_CLK_TCK);
  long long start = static_cast<long long>((10000.0 - age) * static_cast<double>(ticks));
  std::string stat = std::to_string(pid) + " (" + comm + ") " + state +
                     " 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 " + std::to_string(start) + " 0 0\n";
  std::string d = h.proc + "/" + std::to_string(pid);
  h.write(d + "/stat", stat);
  h.write(d + "/status", "Name:\t" + comm + "\nUid:\t0\t0\t0\t0\nvoluntary_ctxt_switches:\t" + std::to_string(ctxt) +
                             "\nnonvoluntary_ctxt_switches:\t1\n");
  std::string c = cmdline;
  for (auto& ch : c)
    if (ch == ' ') ch = '\0';
  h.write(d + "/cmdline", c.empty() ? "" : c + '\0');
}

TEST(HostChecksProcess, ZombieDstateRunning) {
  Host h;
  h.write(h.proc + "/uptime", "10000.00 39000.00\n");
  proc_entry(h, 1, "systemd", 'S', 10000, "/sbin/init");
  proc_entry(h, 200, "slurmd", 'S', 9000, "/usr/sbin/slurmd -D");
  proc_entry(h, 300, "kworker/0:1 (x)", 'I', 9000, "");
  proc_entry(h, 400, "python", 'Z', 100, "");
  std::vector<std::string> pf = {"--path.procfs", h.proc};
  auto with = [&](std::vector<std::string> a) {
    a.insert(a.end(), pf.begin(), pf.end());
    return a;
  };
  // A young zombie is not counted; an old one is a WARNING.
  EXPECT_VERDICT(h.run(with({"check-process", "check-zombie", "c", "app"})), OK, "No zombie processes were found.");
  proc_entry(h, 401, "python", 'Z', 4000, "");
  EXPECT_VERDICT(h.run(with({"check-process", "check-zombie", "c", "app"})), WARN,
                 "Found zombie processes. Node needs a reboot. pids: [401]");
  EXPECT_VERDICT(h.run(with({"check-process", "check-zombie", "c", "app", "--elapsed", "5000"})), OK, "No zombie");

  EXPECT_VERDICT(h.run(with({"check-process", "check-dstate", "c", "app", "--sample-interval", "0"})), OK,
                 "stuck processes: []");
  proc_entry(h, 500, "nfsd", 'D', 3000, "");    // its counters never move in a file
  proc_entry(h, 501, "cp", 'D', 10, "cp a b");  // too young
  EXPECT_VERDICT(h.run(with({"check-process", "check-dstate", "c", "app", "--sample-interval", "0.05"})), CRIT,
                 "stuck processes: [500]");
  EXPECT_VERDICT(
      h.run(with({"check-process", "check-dstate", "c", "app", "--sample-interval", "0", "--process-name", "^ls$"})),
      OK, "stuck processes: []");
  EXPECT_VERDICT(h.run(with({"check-process", "check-dstate", "c", "app", "--sample-interval", "0", "--process-name",
                             "^ls$", "--process-name", "fs"})),
                 CRIT, "stuck processes: [500]");

  EXPECT_VERDICT(h.run(with({"check-process", "check-running-process", "c", "app", "-p", "slurmd"})), OK,
                 "Process slurmd: running. output:\n 200 /usr/sbin/slurmd -D");
  EXPECT_VERDICT(h.run(with({"check-process", "check-running-process", "c", "app", "-p", "slurmd", "-p", "munged"})),
                 CRIT, "Process munged: not running.");
  // No uptime file: the table cannot be read, named.
  fs::remove(h.proc + "/uptime");
  EXPECT_VERDICT(h.run(with({"check-process", "check-zombie", "c", "app"})), WARN, "cannot read");
}

TEST(HostChecksProcess, ReadsTheRealProc) {
  Host h;
  std::string self = fs::read_symlink("/proc/self/exe").filename().string();  // this test binary
  auto r = h.run({"check-process", "check-running-process", "c", "app", "-p", self});
  EXPECT_VERDICT(r, OK, "Process " + self + ": running.");
  EXPECT_VERDICT(h.run({"check-process", "check-running-process", "c", "app", "-p", "no-such-process-hc2"}), CRIT,
                 "not running.");
}

}  // namespace
}  // namespace gcm::testing

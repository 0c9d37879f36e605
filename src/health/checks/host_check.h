// What the host checks (check-process, check-storage, check-ib, ...) share: the --path.procfs/--path.sysfs/
// --path.rootfs roots through which every host file is read, running a tool by argv with the check's timeout (a
// missing tool or a timeout comes back as the exit status the reference's shell would have given, with a message
// naming the tool), `sudo` only where it is needed, findings that keep the worst result and every message, and a
// registration helper for checks that are one options struct and one function.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/option_binder.h"  // the inline option helpers below use it
#include "core/host_roots.h"
#include "health/check.h"

namespace gcm::health {

// The host roots (core/host_roots.h), each option with the roots' own help.
using gcm::HostRoots;
inline void add_procfs_option(OptionBinder& b, HostRoots& r) { add_host_root_option(b, kProcfsRoot, r.procfs); }
inline void add_sysfs_option(OptionBinder& b, HostRoots& r) { add_host_root_option(b, kSysfsRoot, r.sysfs); }
inline void add_rootfs_option(OptionBinder& b, HostRoots& r) { add_host_root_option(b, kRootfsRoot, r.rootfs); }

// A finished tool. rc follows the reference's shell: 127 when the tool is not on PATH, 128 on timeout (its
// "Error command timeout because of timeout setting."), else the exit status (128+signal when killed).
struct ToolRun {
  std::vector<std::string> argv;
  int rc = 0;
  bool missing = false;
  bool timed_out = false;
  std::string out, err;
  bool ok() const { return rc == 0; }
  // "ibstat: not found on PATH (exit 127)", "ibstat timed out after 300 s (exit 128)",
  // "ibstat exited with code 1: <stderr's last line>".
  std::string failure() const;
};
ToolRun run_tool(std::vector<std::string> argv, int64_t timeout_s, std::optional<std::string> stdin_data = {});
// Prefixes "sudo" when asked and not already root (a root prolog needs no sudo, and many nodes have none).
std::vector<std::string> maybe_sudo(std::vector<std::string> argv, bool sudo = true);

// The largest host file read whole (sysfs and procfs values, manifests): far above any real one.
inline constexpr size_t kMaxHostFileBytes = 16u << 20;
// Whole file; nullopt when it cannot be read or holds more than kMaxHostFileBytes (a /dev/zero or a runaway file
// given as a root or path never grows memory without end). Opened non-blocking, so a FIFO without data is empty
// rather than a hang.
std::optional<std::string> read_file(const std::string& path);
// The file with surrounding white space removed.
std::optional<std::string> read_trimmed(const std::string& path);
std::string trim(std::string_view s);
std::vector<std::string> split_lines(std::string_view s);  // without empty trailing line
std::vector<std::string> split_ws(std::string_view s);
std::optional<long long> parse_int(std::string_view s);  // whole string (after trimming) as an integer

// What a check found in its parts: the worst result (UNKNOWN ranks lowest) and their messages.
struct Findings {
  ExitCode code = ExitCode::UNKNOWN;
  std::vector<std::string> msgs;
  void add(ExitCode c, std::string msg);
  CheckOutcome outcome(const std::string& sep = "\n") const;
};

// A check that is an options struct plus a function. An exception from the function (an unreadable file, bad
// tool output) is WARN with its message, as the reference's per-check handlers; CheckUsageError stays exit 2.
template <typename Opts>
class SimpleCheck : public HealthCheck {
 public:
  using Body = std::function<CheckOutcome(CheckRun&, const Opts&)>;
  SimpleCheck(std::string name, std::string flag, Body body)
      : name_(std::move(name)), flag_(std::move(flag)), body_(std::move(body)) {}
  Opts opts;
  int run(CheckRun& r) override {
    return r.run_standard(name_, flag_, [&]() -> CheckOutcome {
      try {
        return body_(r, opts);
      } catch (const CheckUsageError&) {
        throw;
      } catch (const std::exception& e) {
        if (r.log) r.log->error("{}: {}", name_, e.what());
        return {ExitCode::WARN, e.what()};
      }
    });
  }

 private:
  std::string name_, flag_;
  Body body_;
};

// path: {"check-process", "check-zombie"}; name: the telemetry health_check ("check zombie"); flag: its killswitch.
template <typename Opts>
bool register_simple_check(std::vector<std::string> path, std::string help, bool has_timeout, std::string name,
                           std::string flag, std::function<void(OptionBinder&, Opts&)> options,
                           typename SimpleCheck<Opts>::Body body) {
  return register_health_check(
      {std::move(path), std::move(help), has_timeout, [=](OptionBinder& b) -> std::unique_ptr<HealthCheck> {
         auto c = std::make_unique<SimpleCheck<Opts>>(name, flag, body);
         options(b, c->opts);
         return c;
       }});
}

}  // namespace gcm::health

// A fake host for running `health_checks` end to end: a temporary root with bin/ (fake tools, first on PATH),
// sys/, proc/ and root/ to give as --path.sysfs/--path.procfs/--path.rootfs. The host-check tests add a sudo
// to it (host_checks_fixture.h).
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "helpers.h"

namespace gcm::testing {

inline std::string health_checks_path() {
  std::string g = GCM_BINARY;
  return g.substr(0, g.rfind('/')) + "/health_checks";
}

struct FakeHost {
  std::string dir = temp_dir("hc19");
  std::string bin = dir + "/bin", sys = dir + "/sys", proc = dir + "/proc", root = dir + "/root";
  FakeHost() {
    for (const auto& d : {bin, sys, proc, root}) std::filesystem::create_directories(d);
  }
  ~FakeHost() { std::filesystem::remove_all(dir); }
  FakeHost(const FakeHost&) = delete;
  FakeHost& operator=(const FakeHost&) = delete;

  void write(const std::string& path, const std::string& content) const {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << content;
  }
  // A fake executable: a /bin/sh script.
  void tool(const std::string& name, const std::string& body) const {
    write(bin + "/" + name, "#!/bin/sh\n" + body + "\n");
    ::chmod((bin + "/" + name).c_str(), 0755);
  }
  // A tool that prints a file and exits with rc.
  void tool_prints(const std::string& name, const std::string& file, int rc = 0) const {
    tool(name, "cat '" + file + "'\nexit " + std::to_string(rc));
  }
  // A {"/sys/...": "content"} snapshot written under sys/.
  void sysfs_snapshot(const std::string& json_file) const {
    auto j = nlohmann::json::parse(read_text(json_file));
    for (const auto& [path, content] : j.items()) {
      std::string rel = path.rfind("/sys/", 0) == 0 ? path.substr(5) : path;
      write(sys + "/" + rel, content.get<std::string>());
    }
  }
  CommandResult run(std::vector<std::string> args, std::vector<std::string> env = {}) const {
    CommandSpec s;
    s.argv = {health_checks_path()};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    s.argv.insert(s.argv.end(), {"--log-folder", dir + "/logs"});
    s.timeout = std::chrono::seconds(60);
    s.extra_env = {"SLURM_JOB_ID=", "GCM_GPU_NODE_ID_FILE=" + dir + "/gpu_node_id"};
    bool path_given = false;
    for (auto& e : env) {
      s.extra_env.push_back(e);
      path_given = path_given || e.rfind("PATH=", 0) == 0;
    }
    if (!path_given) s.extra_env.push_back("PATH=" + bin + ":/usr/bin:/bin:/usr/sbin:/sbin");
    return run_command(s);
  }
};

// The exit code, and `text` in what the check printed. `r` is evaluated once (a check run with side effects, such as
// check-ufm-health --truncate, must not run twice).
#define EXPECT_CHECK(r, code, text)                                                                               \
  do {                                                                                                            \
    const CommandResult& check_result_ = (r);                                                                     \
    const std::string check_text_ = (text);                                                                       \
    EXPECT_EQ(check_result_.exit_code, code) << check_result_.out << check_result_.err;                           \
    EXPECT_NE(check_result_.out.find(check_text_), std::string::npos) << "expected '" << check_text_ << "' in:\n" \
                                                                      << check_result_.out << check_result_.err;  \
  } while (0)

}  // namespace gcm::testing

// What the Slurm collectors' process tests share: fake Slurm commands answering with the recorded 22.05 outputs, the
// records the stdout sink prints, and a batch job on the live testbed that is cancelled when the test ends.
#pragma once

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "helpers.h"
#include "process.h"

namespace gcm::testing {

using nlohmann::json;

inline const std::string k2205 = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-22.05/";

// A directory of fake Slurm commands answering with the 22.05 fixtures. sdiag fails while <dir>/sdiag.fail exists.
struct FakeSlurm {
  std::string dir = temp_dir("fake-slurm");
  FakeSlurm() {
    write_script(dir + "/sinfo", "if [ \"$1\" = -V ]; then cat '" + k2205 + "sinfo-V.txt'; exit 0; fi\ncat '" + k2205 +
                                     "sinfo-O-nodes.txt'");
    write_script(dir + "/sdiag", "if [ -e '" + dir +
                                     "/sdiag.fail' ]; then echo 'sdiag: error: slurm_get_statistics: Unable to "
                                     "contact slurm controller (connect failure)' >&2; exit 1; fi\ncat '" +
                                     k2205 + "sdiag.txt'");
    write_script(dir + "/sacct", "printf '%s\\n' \"$@\" > '" + dir + "/sacct.args'\necho \"$TZ\" > '" + dir +
                                     "/sacct.tz'\ncat '" + k2205 + "sacct-slurm-monitor-local.txt'");
    write_script(dir + "/sacctmgr",
                 "case \"$*\" in\n"
                 "  'show qos -P') cat '" +
                     k2205 +
                     "sacctmgr-qos.txt' ;;\n"
                     "  'show user format=User -nP') cat '" +
                     k2205 +
                     "sacctmgr-users.txt' ;;\n"
                     "  *withassoc*) cat '" +
                     k2205 +
                     "sacctmgr-user-'\"$3\"'.txt' ;;\n"
                     "  *) echo \"fake sacctmgr: unexpected $*\" >&2; exit 2 ;;\n"
                     "esac");
  }
  std::vector<std::string> env() const { return {"PATH=" + dir + ":" + std::getenv("PATH")}; }
};

// The JSON lists printed by the stdout sink, one per line.
inline std::vector<json> chunks(const std::string& out) {
  std::vector<json> v;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) v.push_back(json::parse(line));
  return v;
}

// Every record of every chunk.
inline std::vector<json> records(const std::string& out) {
  std::vector<json> v;
  for (auto& c : chunks(out))
    for (auto& r : c) v.push_back(r);
  return v;
}

struct Job {
  std::string id;
  // As user (through runuser) when given, so that the user's QOS applies.
  explicit Job(std::vector<std::string> args, const std::string& user = "") {
    std::vector<std::string> argv;
    if (!user.empty()) argv = {"runuser", "-u", user, "--"};
    for (const char* a : {"sbatch", "--parsable", "-o", "/dev/null", "--chdir", "/tmp"}) argv.push_back(a);
    argv.insert(argv.end(), args.begin(), args.end());
    id = run_ok(argv);
    while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  }
  ~Job() {
    try {
      run_ok({"scancel", id});
    } catch (...) {
    }
  }
};

}  // namespace gcm::testing

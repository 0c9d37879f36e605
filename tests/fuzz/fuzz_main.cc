// libFuzzer's two entry points for the program of every fuzz target (fuzz_target.h): LLVMFuzzerInitialize picks the
// target named by the program's own name (argv[0], a link build/fuzz/<name> -> gcm_fuzzers) or by GCM_FUZZ_TARGET,
// LLVMFuzzerTestOneInput runs it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "fuzz_target.h"

namespace gcm::fuzz {
namespace {

std::map<std::string, Target>& targets() {
  static std::map<std::string, Target> all;
  return all;
}

Target g_selected = nullptr;

}  // namespace

bool register_target(const char* name, Target target) {
  targets()[name] = target;
  return true;
}

}  // namespace gcm::fuzz

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  using namespace gcm::fuzz;
  const char* env = std::getenv("GCM_FUZZ_TARGET");
  std::string name = env && *env ? env : "";
  if (name.empty() && *argc > 0) {
    const char* self = (*argv)[0];
    const char* slash = std::strrchr(self, '/');
    name = slash ? slash + 1 : self;
  }
  auto it = targets().find(name);
  if (it == targets().end()) {
    std::fprintf(stderr,
                 "gcm_fuzzers: no fuzz target '%s'; run it as one of (a link of that name, or "
                 "GCM_FUZZ_TARGET=NAME):\n",
                 name.c_str());
    for (const auto& [n, t] : targets()) std::fprintf(stderr, "  %s\n", n.c_str());
    std::exit(2);
  }
  g_selected = it->second;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return gcm::fuzz::g_selected(data, size); }

// What the host-check tests share (one test file per check group, tests/integration/check_<group>_test.cc): a
// fake host — procfs/sysfs trees built from the shared {path: content} snapshots or written by the test, fake tools
// on PATH replaying the tools' output formats (tests/fixtures/health_checks/) — and health_checks run against it.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fake_host.h"
#include "helpers.h"

namespace gcm::testing {

inline const std::string kShared = std::string(GCM_SOURCE_DIR) + "/../shared/fixtures/gcm/health_checks/";
inline const std::string kOurs = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/health_checks/";

#define REQUIRE_SHARED() \
  if (!std::filesystem::exists(kShared)) GTEST_SKIP() << "shared fixtures not present: " << kShared

// The fake host of fake_host.h, with a sudo that runs its command (these tests may run as an ordinary user).
struct Host : FakeHost {
  Host() {
    tool("sudo", "while [ \"$1\" = -u ] || [ \"$1\" = -n ]; do [ \"$1\" = -u ] && shift; shift; done\nexec \"$@\"");
  }
};

// exit code and the stdout line's message contain `text`.
#define EXPECT_VERDICT(r, code, text)                                                                              \
  do {                                                                                                             \
    EXPECT_EQ((r).exit_code, code) << (r).out << (r).err;                                                          \
    EXPECT_NE((r).out.find(text), std::string::npos) << "expected '" << (text) << "' in:\n" << (r).out << (r).err; \
  } while (0)

inline constexpr int OK = 0, WARN = 1, CRIT = 2, UNKNOWN = 3;

}  // namespace gcm::testing

// What the sprio, sshare and scontrol_topology unit tests share: where the recorded outputs are, the collection
// instant, and reading a record's object value.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/scheduler_collectors.h"
#include "core/value.h"
#include "fixture_records.h"

namespace gcm::scheduler::fixtures {

// The testbed's 22.05 recordings, and outputs written from Slurm's documentation (the block topology).
inline const std::string k2205 = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-22.05/";
inline const std::string kDocs = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-docs/";

inline constexpr int64_t kNow = 1796141600;  // 2026-12-01T16:13:20Z: 08:13 in Los Angeles, same date

inline Params params(bool heterogeneous = false) { return {"testbed", heterogeneous, kNow, std::chrono::seconds(5)}; }

inline const Value& member(const Value& object, std::string_view key) {
  for (const auto& m : object.as_object())
    if (m.key == key) return m.value;
  throw std::out_of_range(std::string(key));
}

inline std::vector<std::string> keys(const Value& object) {
  std::vector<std::string> out;
  for (const auto& m : object.as_object()) out.push_back(m.key);
  return out;
}

}  // namespace gcm::scheduler::fixtures

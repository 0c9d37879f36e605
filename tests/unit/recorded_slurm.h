// The Slurm versions recorded on the project's testbed, for the golden tests that run on every one of them: the CLI
// outputs of tests/testbed/record-fixtures.sh in tests/fixtures/slurm-<version>/, and the slurmrestd answers of
// tests/testbed/record-rest-fixtures.sh in tests/fixtures/slurmrestd-<version>/ (the CLI outputs of the same moment
// at its top, each API version's answers in <api>/).
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <tuple>
#include <vector>

namespace gcm::testing {

struct RecordedSlurm {
  std::string version;            // "25.11"
  std::vector<std::string> apis;  // the REST API versions its slurmrestd offers, oldest first

  std::string cli_dir() const { return std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-" + version + "/"; }
  std::string rest_dir() const { return std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurmrestd-" + version + "/"; }
};

inline const std::vector<RecordedSlurm>& recorded_slurms() {
  static const std::vector<RecordedSlurm> v = {
      {"22.05", {"v0.0.38"}},
      {"24.11", {"v0.0.40", "v0.0.41", "v0.0.42"}},
      {"25.11", {"v0.0.41", "v0.0.42", "v0.0.43", "v0.0.44"}},
  };
  return v;
}

// One API version of one recorded Slurm: its answers and the CLI outputs recorded with them.
struct RecordedApi {
  RecordedSlurm slurm;
  std::string api;  // "v0.0.44"

  std::string cli(const std::string& file) const { return slurm.rest_dir() + file; }
  std::string rest(const std::string& file) const { return slurm.rest_dir() + api + "/" + file; }
  // The API version as a number: 38 for v0.0.38.
  int minor() const { return std::stoi(api.substr(api.rfind('.') + 1)); }
};

inline std::vector<RecordedApi> recorded_apis() {
  std::vector<RecordedApi> out;
  for (const auto& s : recorded_slurms())
    for (const auto& a : s.apis) out.push_back({s, a});
  return out;
}

// gtest's names for the parameters: "Slurm2511_v0044".
inline std::string slurm_name(const std::string& version) {
  std::string out = "Slurm";
  for (char c : version)
    if (c != '.') out += c;
  return out;
}
struct RecordedApiName {
  std::string operator()(const ::testing::TestParamInfo<RecordedApi>& info) const {
    std::string api;
    for (char c : info.param.api)
      if (c != '.') api += c;
    return slurm_name(info.param.slurm.version) + "_" + api;
  }
};
struct RecordedSlurmName {
  std::string operator()(const ::testing::TestParamInfo<RecordedSlurm>& info) const {
    return slurm_name(info.param.version);
  }
};

inline void PrintTo(const RecordedApi& a, std::ostream* os) { *os << "Slurm " << a.slurm.version << " " << a.api; }
inline void PrintTo(const RecordedSlurm& s, std::ostream* os) { *os << "Slurm " << s.version; }

}  // namespace gcm::testing

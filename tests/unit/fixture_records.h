// What the unit tests share: a file's text (a missing file fails the test rather than reading as empty), and a
// RecordOut that keeps every record emitted.
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectors/collector.h"

namespace gcm::testing {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Collect : RecordOut {
  std::vector<Record> records;
  void emit(const Record& r) override { records.push_back(r); }
};

}  // namespace gcm::testing

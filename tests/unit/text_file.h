// A whole file as a string, for tests that read fixtures ("" when it cannot be read: the assertion on the content
// then fails and names what was expected).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace gcm::testing {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace gcm::testing

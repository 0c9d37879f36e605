// The one exception type of the Slurm value parsers: a value that does not follow the grammar. Collectors catch it
// per field or per row; the message quotes the value and says what was expected.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace gcm::slurm {

struct ParseError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// "<what> '<value>': <why>", the common shape of every message.
inline std::string describe_bad_value(std::string_view what, std::string_view value, std::string_view why) {
  std::string m(what);
  m += " '";
  m += value;
  m += "': ";
  m += why;
  return m;
}

}  // namespace gcm::slurm

#include "slurm/sacct_lines.h"

#include "slurm/delimited.h"

namespace gcm::slurm {

size_t SacctLineRepair::count_delimiters(std::string_view s) const {
  if (delimiter_.empty()) return 0;
  size_t n = 0;
  for (size_t at = s.find(delimiter_); at != std::string_view::npos; at = s.find(delimiter_, at + delimiter_.size()))
    ++n;
  return n;
}

std::optional<std::string_view> SacctLineRepair::feed(std::string_view line) {
  ++line_number_;
  if (!have_header_) {
    have_header_ = true;
    expected_ = count_delimiters(line);
    return line;
  }
  size_t count = count_delimiters(line);
  if (count >= expected_) return line;
  if (carried_count_ + count == expected_) {
    joined_.swap(carried_);
    joined_.append(line);
    carried_.clear();
    carried_count_ = 0;
    return std::string_view(joined_);
  }
  if (carried_count_ + count > expected_) {
    throw DelimitedError(line_number_,
                         "the following sacct line has more delimiters than expected: " + std::string(line));
  }
  carried_.append(line);
  carried_.append("\\n");
  carried_count_ += count;
  return std::nullopt;
}

}  // namespace gcm::slurm

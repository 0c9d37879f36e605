// sacct prints a field containing a newline (SubmitLine, Comment) as it is, so one record spans several physical
// lines. The reference's get_sacct_lines (gcm-reference.md §1.7) joins them back; this is the same repair, fed one
// line at a time.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "slurm/parse_error.h"

namespace gcm::slurm {

class SacctLineRepair {
 public:
  explicit SacctLineRepair(std::string delimiter) : delimiter_(std::move(delimiter)) {}

  // Feeds one physical line (without '\n'). Returns the logical line when one is complete (a view valid until the
  // next call), nullopt while a broken record is still open.
  // - The first line is the header: returned unchanged; its delimiter count D is what a record must have.
  // - A line with at least D delimiters is returned as it is.
  // - A shorter line is appended to the open record (joined by the two characters '\' 'n'); when the record
  //   reaches exactly D delimiters it is returned. Exceeding D throws DelimitedError naming the line.
  std::optional<std::string_view> feed(std::string_view line);

  // True when a broken record is still open (the input ended inside it; the reference drops it silently).
  bool pending() const { return !carried_.empty(); }
  size_t lines() const { return line_number_; }

 private:
  size_t count_delimiters(std::string_view s) const;

  std::string delimiter_;
  size_t expected_ = 0;
  bool have_header_ = false;
  std::string carried_;
  size_t carried_count_ = 0;
  size_t line_number_ = 0;
  std::string joined_;
};

}  // namespace gcm::slurm

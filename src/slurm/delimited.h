// Delimited Slurm output (sinfo/squeue -O with a suffix, sacct/sacctmgr -P, `-o %all`): a streaming row splitter
// that works on string_views of the lines it is fed, copying nothing. Rules from gcm-reference.md §1.8 and §1.14.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/parse_error.h"

namespace gcm::slurm {

// A bad line of an output (a row whose field count differs from the header's, a broken sacct record); the message
// is "line <n>: <reason>".
class DelimitedError : public ParseError {
 public:
  DelimitedError(size_t line, const std::string& reason);
  size_t line() const { return line_; }
  const std::string& reason() const { return reason_; }

 private:
  size_t line_;
  std::string reason_;
};

// What to do with a row whose field count differs from the header's.
enum class RowLengthPolicy {
  Error,  // throw DelimitedError naming the line (sacct_publish without --ignore-line-errors)
  Skip,   // drop the row and count it (parse_delimited's warning; sacct_publish --ignore-line-errors)
  Zip,    // keep it: missing fields read as absent, extra fields are dropped (sacctmgr, sinfo -O)
  // parse_delimited's rule (§1.8): it zips each row with the header, so extra fields are dropped (sinfo -o %all
  // ends some rows with a '|') and only short rows are skipped and counted.
  DropExtraSkipShort,
  // Deliver the row with every field it has, short or long: the caller reports it with its line (sacctmgr tables,
  // whose README promises that a row longer than the header is reported, not cut to fit).
  Keep,
};

struct DelimitedOptions {
  std::string delimiter = "|";       // "" splits on runs of blanks, as Python's str.split() does
  bool header = true;                // the first non-empty line names the columns
  std::vector<std::string> columns;  // the names when header is false (squeue -O ... --noheader)
  bool trailing_delimiter = false;   // each field ends with the delimiter (-O "name:|#"): drop the empty last field
  bool trim_values = true;           // strip blanks around every value and name (§1.8)
  bool trim_line = false;            // strip blanks at both ends of each line before splitting (sacct_publish)
  RowLengthPolicy length_mismatch = RowLengthPolicy::Error;
  // How many of the last columns a row may lack without counting as mismatched (they read as absent): a column that
  // newer versions append (squeue's LASTSCHEDEVAL), where a recorded or older output stops before it, as the
  // reference's zip of row and names reads it.
  size_t optional_trailing_columns = 0;
};

// Splits line on delimiter into out (cleared first); "" splits on runs of blanks and drops empty fields.
void split_fields(std::string_view line, std::string_view delimiter, std::vector<std::string_view>& out);

class DelimitedHeader {
 public:
  DelimitedHeader() = default;
  explicit DelimitedHeader(std::vector<std::string> names) : names_(std::move(names)) {}

  const std::vector<std::string>& names() const { return names_; }
  size_t size() const { return names_.size(); }

  std::optional<size_t> first(std::string_view name) const;
  std::optional<size_t> last(std::string_view name) const;

  // The column the reference reads for name when the header repeats names (sinfo -o %all repeats PARTITION, STATE
  // and USER): the first occurrence, except STATE (the last: the long form such as "drained*"), and JOBID_RAW
  // (the last JOBID_RAW or second-or-later JOBID, since the reference renames a repeated JOBID to JOBID_RAW).
  std::optional<size_t> reference_index(std::string_view name) const;

 private:
  std::vector<std::string> names_;
};

// One data row. Views into the fed line; valid until the next feed().
struct DelimitedRow {
  size_t line_number = 0;  // 1-based, counting every line fed (header and blank lines included)
  std::string_view line;
  std::span<const std::string_view> fields;

  // The field at column i; "" when the row is shorter (RowLengthPolicy::Zip).
  std::string_view operator[](size_t i) const { return i < fields.size() ? fields[i] : std::string_view(); }
  bool has(size_t i) const { return i < fields.size(); }
};

class DelimitedParser {
 public:
  explicit DelimitedParser(DelimitedOptions options);

  // Feeds one line (without its '\n'; a trailing '\r' is ignored). Returns the data row, or nullptr for the header,
  // a blank line or a skipped row. Throws DelimitedError (RowLengthPolicy::Error) naming the line.
  const DelimitedRow* feed(std::string_view line);

  // Available once the header line was fed (or at once when options.header is false).
  const DelimitedHeader& header() const { return header_; }
  bool has_header() const { return have_header_; }

  size_t lines() const { return line_number_; }
  size_t rows() const { return rows_; }
  size_t skipped_rows() const { return skipped_; }        // RowLengthPolicy::Skip and DropExtraSkipShort
  size_t mismatched_rows() const { return mismatched_; }  // every row of the wrong length, whatever the policy

 private:
  void split(std::string_view line);

  DelimitedOptions options_;
  DelimitedHeader header_;
  bool have_header_ = false;
  std::vector<std::string_view> fields_;
  DelimitedRow row_;
  size_t line_number_ = 0, rows_ = 0, skipped_ = 0, mismatched_ = 0;
};

// Calls on_line for every line of text ('\n'-separated; a final line without '\n' included, a trailing "\r"
// dropped). Views into text.
void for_each_line(std::string_view text, const std::function<void(std::string_view line)>& on_line);

// Parses a whole output; on_row receives each data row with the header. Returns the number of rows delivered.
size_t parse_delimited(std::string_view text, const DelimitedOptions& options,
                       const std::function<void(const DelimitedHeader&, const DelimitedRow&)>& on_row);

}  // namespace gcm::slurm

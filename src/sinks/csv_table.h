// CSV for the file sink (-o format=csv) and the telemetry sink (-o format=csv): cells written as Python's csv module
// writes them (GCM's writer: RFC 4180 quoting only where needed, "\r\n" line ends, None as an empty cell, True and
// False for booleans, Python's float repr), and a file that keeps one header for all its rows.
//
// GCM wrote the header once per path and process and every later batch in that batch's own column order under
// it, so a batch with other columns (another record type, a field null in a whole batch) was silently misaligned,
// and a restarted process wrote a second header into the middle of the file. Here the header is read back from
// the file itself (under the file lock, so several writers agree); a batch whose columns the header has is written
// under it, in its order; a batch with columns it lacks starts a new file (the old one rotated to PATH.1) whose
// header is the union, so alternating record types settle on one header after one rotation and every file is
// one well-formed table.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/logger.h>

#include "core/value.h"
#include "sinks/rotating_file.h"

namespace gcm {

// One cell: null -> "", bool -> True/False, numbers as Python's str(), strings as they are (invalid UTF-8
// replaced), lists and objects as compact JSON.
std::string csv_cell(const Value& v);
// Appends one field with RFC 4180 quoting where the text needs it (a comma, a quote, CR or LF).
void append_csv_field(std::string& out, std::string_view field);
// One record of fields, ending in "\r\n". A record of one empty field is written "\"\"" (as Python's csv module
// does), so that it is not a blank line.
std::string csv_record(const std::vector<std::string>& fields);
// Splits one CSV record (a header line) into its fields; ok is false when a quoted field does not end.
std::vector<std::string> parse_csv_record(std::string_view line, bool& ok);

// How a new header is formed when a batch brings columns the file's header lacks.
enum class CsvColumnOrder {
  Sorted,    // the file sink: GCM's sorted key union
  Appended,  // the telemetry sink: the header's columns, then the new ones in the batch's order
};

class CsvFile {
 public:
  CsvFile(std::string path, uint64_t max_bytes, int backup_count, CsvColumnOrder order,
          std::shared_ptr<spdlog::logger> log);
  // Appends rows, each aligned with `columns` (cells already rendered with csv_cell), under the file's header.
  void append(const std::vector<std::string>& columns, const std::vector<std::vector<std::string>>& rows);
  const std::string& path() const { return file_.path(); }

 private:
  RotatingFile file_;
  CsvColumnOrder order_;
  std::shared_ptr<spdlog::logger> log_;
};

}  // namespace gcm

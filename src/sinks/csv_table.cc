#include "sinks/csv_table.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "core/json.h"

namespace gcm {

std::string csv_cell(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Null:
      return "";
    case Value::Kind::Bool:
      return v.as_bool() ? "True" : "False";
    case Value::Kind::Int:
      return std::to_string(v.as_int());
    case Value::Kind::Double:
      return python_float_repr(v.as_double());
    case Value::Kind::String: {
      std::string out;
      append_valid_utf8(out, v.as_string());
      return out;
    }
    case Value::Kind::List:
    case Value::Kind::Object:
      return to_json(v);
  }
  return "";
}

void append_csv_field(std::string& out, std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
    out.append(field);
    return;
  }
  out.push_back('"');
  for (char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

std::string csv_record(const std::vector<std::string>& fields) {
  std::string out;
  if (fields.size() == 1 && fields[0].empty()) return "\"\"\r\n";
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) out.push_back(',');
    append_csv_field(out, fields[i]);
  }
  out += "\r\n";
  return out;
}

std::vector<std::string> parse_csv_record(std::string_view line, bool& ok) {
  std::vector<std::string> fields(1);
  ok = true;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c != '"') {
        fields.back().push_back(c);
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        fields.back().push_back('"');
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '"' && fields.back().empty()) {
      quoted = true;
    } else {
      fields.back().push_back(c);
    }
  }
  if (quoted) ok = false;
  return fields;
}

CsvFile::CsvFile(std::string path, uint64_t max_bytes, int backup_count, CsvColumnOrder order,
                 std::shared_ptr<spdlog::logger> log)
    : file_(std::move(path), max_bytes, backup_count), order_(order), log_(std::move(log)) {}

void CsvFile::append(const std::vector<std::string>& columns, const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return;
  file_.append_under_header([&](std::string_view current) {
    RotatingFile::HeaderedRows out;
    std::vector<std::string> header;
    bool ok = true;
    if (!current.empty()) header = parse_csv_record(current, ok);
    std::set<std::string> have(header.begin(), header.end());
    std::vector<std::string> missing;
    for (const auto& c : columns)
      if (!have.count(c)) missing.push_back(c);
    if (current.empty()) {
      header = columns;
    } else if (!ok) {
      out.start_new_file = true;
      header = columns;
      if (log_)
        log_->warn("{}: its first line is not a CSV header; starting a new file (the old one is {}.1)", path(), path());
    } else if (!missing.empty()) {
      out.start_new_file = true;
      header.insert(header.end(), missing.begin(), missing.end());
      if (log_)
        log_->warn(
            "{}: rows with column(s) its header lacks ({}); starting a new file with the union of the "
            "columns (the old one is {}.1)",
            path(), fmt::join(missing, ", "), path());
    }
    if ((current.empty() || out.start_new_file) && order_ == CsvColumnOrder::Sorted)
      std::sort(header.begin(), header.end());
    out.header = csv_record(header);
    // Where each header column is found in the batch's columns (-1: absent in this batch, an empty cell).
    std::unordered_map<std::string, size_t> index;
    for (size_t i = 0; i < columns.size(); ++i) index.emplace(columns[i], i);
    std::vector<long> at(header.size(), -1);
    for (size_t h = 0; h < header.size(); ++h)
      if (auto it = index.find(header[h]); it != index.end()) at[h] = static_cast<long>(it->second);
    std::vector<std::string> cells(header.size());
    out.rows.reserve(rows.size());
    for (const auto& row : rows) {
      for (size_t h = 0; h < header.size(); ++h)
        cells[h] =
            at[h] >= 0 && static_cast<size_t>(at[h]) < row.size() ? row[static_cast<size_t>(at[h])] : std::string();
      out.rows.push_back(csv_record(cells));
    }
    return out;
  });
}

}  // namespace gcm

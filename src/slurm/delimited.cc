#include "slurm/delimited.h"

#include <cstring>

#include "core/ascii.h"
#include "slurm/coerce.h"

namespace gcm::slurm {

DelimitedError::DelimitedError(size_t line, const std::string& reason)
    : ParseError("line " + std::to_string(line) + ": " + reason), line_(line), reason_(reason) {}

void split_fields(std::string_view line, std::string_view delimiter, std::vector<std::string_view>& out) {
  out.clear();
  if (delimiter.empty()) {
    size_t i = 0;
    while (true) {
      while (i < line.size() && is_ascii_space(line[i])) ++i;
      if (i == line.size()) return;
      size_t start = i;
      while (i < line.size() && !is_ascii_space(line[i])) ++i;
      out.push_back(line.substr(start, i - start));
    }
  }
  const char* p = line.data();
  const char* end = p + line.size();
  if (delimiter.size() == 1) {
    // memchr is the fast path: sinfo/sacct -P use one character.
    const char d = delimiter[0];
    while (true) {
      const void* hit = std::memchr(p, d, static_cast<size_t>(end - p));
      if (!hit) break;
      const char* h = static_cast<const char*>(hit);
      out.emplace_back(p, static_cast<size_t>(h - p));
      p = h + 1;
    }
    out.emplace_back(p, static_cast<size_t>(end - p));
    return;
  }
  size_t start = 0;
  while (true) {
    size_t hit = line.find(delimiter, start);
    if (hit == std::string_view::npos) break;
    out.push_back(line.substr(start, hit - start));
    start = hit + delimiter.size();
  }
  out.push_back(line.substr(start));
}

std::optional<size_t> DelimitedHeader::first(std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return i;
  }
  return std::nullopt;
}

std::optional<size_t> DelimitedHeader::last(std::string_view name) const {
  for (size_t i = names_.size(); i-- > 0;) {
    if (names_[i] == name) return i;
  }
  return std::nullopt;
}

std::optional<size_t> DelimitedHeader::reference_index(std::string_view name) const {
  if (name == "STATE") return last(name);
  if (name == "JOBID_RAW") {
    std::optional<size_t> found;
    bool seen_jobid = false;
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == "JOBID_RAW" || (names_[i] == "JOBID" && seen_jobid)) found = i;
      if (names_[i] == "JOBID") seen_jobid = true;
    }
    return found;
  }
  return first(name);
}

DelimitedParser::DelimitedParser(DelimitedOptions options) : options_(std::move(options)) {
  if (!options_.header) {
    header_ = DelimitedHeader(options_.columns);
    have_header_ = true;
  }
}

void DelimitedParser::split(std::string_view line) {
  if (options_.trim_line) line = ascii_trim(line);
  if (options_.trailing_delimiter && !options_.delimiter.empty() && line.ends_with(options_.delimiter))
    line.remove_suffix(options_.delimiter.size());
  split_fields(line, options_.delimiter, fields_);
  if (options_.trim_values) {
    for (auto& f : fields_) f = ascii_trim(f);
  }
}

const DelimitedRow* DelimitedParser::feed(std::string_view line) {
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (ascii_trim(line).empty()) return nullptr;
  split(line);
  if (!have_header_) {
    std::vector<std::string> names;
    names.reserve(fields_.size());
    for (auto f : fields_) names.emplace_back(ascii_trim(f));  // header names are always stripped (§1.8)
    header_ = DelimitedHeader(std::move(names));
    have_header_ = true;
    return nullptr;
  }
  const bool lacks_only_optional =
      fields_.size() < header_.size() && header_.size() - fields_.size() <= options_.optional_trailing_columns;
  if (fields_.size() != header_.size() && !lacks_only_optional) {
    ++mismatched_;
    switch (options_.length_mismatch) {
      case RowLengthPolicy::Error:
        throw DelimitedError(line_number_, "row has " + std::to_string(fields_.size()) + " fields, the header has " +
                                               std::to_string(header_.size()));
      case RowLengthPolicy::Skip:
        ++skipped_;
        return nullptr;
      case RowLengthPolicy::Zip:
        if (fields_.size() > header_.size()) fields_.resize(header_.size());
        break;
      case RowLengthPolicy::DropExtraSkipShort:
        if (fields_.size() < header_.size()) {
          ++skipped_;
          return nullptr;
        }
        fields_.resize(header_.size());
        break;
      case RowLengthPolicy::Keep:
        break;
    }
  }
  ++rows_;
  row_.line_number = line_number_;
  row_.line = line;
  row_.fields = fields_;
  return &row_;
}

void for_each_line(std::string_view text, const std::function<void(std::string_view)>& on_line) {
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    on_line(line);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
}

size_t parse_delimited(std::string_view text, const DelimitedOptions& options,
                       const std::function<void(const DelimitedHeader&, const DelimitedRow&)>& on_row) {
  DelimitedParser parser(options);
  for_each_line(text, [&](std::string_view line) {
    if (const DelimitedRow* row = parser.feed(line)) on_row(parser.header(), *row);
  });
  return parser.rows();
}

}  // namespace gcm::slurm

#include "storage/mountinfo.h"

#include <fmt/format.h>

namespace gcm {

std::string unescape_octal(std::string_view s) {
  auto oct = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && oct(s[i + 1]) && oct(s[i + 2]) && oct(s[i + 3])) {
      out.push_back(static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
      continue;
    }
    out.push_back(s[i]);
  }
  return out;
}

namespace {

std::vector<std::string_view> split_ws(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

std::vector<std::string> split_commas(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t c = s.find(',', start);
    out.push_back(unescape_octal(s.substr(start, c == std::string_view::npos ? std::string_view::npos : c - start)));
    if (c == std::string_view::npos) break;
    start = c + 1;
  }
  return out;
}

}  // namespace

MountInfo parse_mountinfo_line(std::string_view line) {
  auto f = split_ws(line);
  if (f.size() < 10)
    throw MountInfoError(
        fmt::format("expected at least 10 fields (id parent major:minor root mount-point options "
                    "[optional...] - fstype source super-options), got {}",
                    f.size()));
  MountInfo m;
  m.mount_id = f[0];
  m.parent_id = f[1];
  m.device_id = f[2];
  m.root = unescape_octal(f[3]);
  m.mount_point = unescape_octal(f[4]);
  m.mount_options = split_commas(f[5]);
  size_t i = 6;
  while (i < f.size() && f[i] != "-") m.optional_fields.emplace_back(f[i++]);
  if (i >= f.size()) throw MountInfoError("expected the '-' separator before the filesystem type");
  if (i + 3 > f.size()) throw MountInfoError("expected fstype, source and super options after '-'");
  m.filesystem_type = unescape_octal(f[i + 1]);
  m.mount_source = unescape_octal(f[i + 2]);
  m.super_options = i + 3 < f.size() ? split_commas(f[i + 3]) : std::vector<std::string>{};
  return m;
}

std::vector<MountInfo> parse_mountinfo(std::string_view text, const std::string& source) {
  std::vector<MountInfo> out;
  size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.find_first_not_of(" \t\r") != std::string_view::npos) {
      try {
        out.push_back(parse_mountinfo_line(line));
      } catch (const MountInfoError& e) {
        throw MountInfoError(fmt::format("{}:{}: {}", source, line_no, e.what()));
      }
    }
    pos = end + 1;
  }
  return out;
}

}  // namespace gcm

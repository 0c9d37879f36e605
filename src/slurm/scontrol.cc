#include "slurm/scontrol.h"

#include <array>
#include <cstdint>

#include "core/ascii.h"
#include "slurm/coerce.h"
#include "slurm/delimited.h"

namespace gcm::slurm {

namespace {

// Character classes for the word splitter, one table lookup per byte: a cluster's `scontrol show job -d` is tens of
// megabytes read again at every refresh, and testing each byte against each class in turn costs several compares
// a byte, the bulk of slurm_processor's table refresh (figures in bench/README.md).
enum : uint8_t { kBlank = 1, kLetter = 2, kKeyChar = 4 };
constexpr std::array<uint8_t, 256> kClasses = [] {
  std::array<uint8_t, 256> t{};
  for (unsigned char c : {' ', '\t', '\r'}) t[c] = kBlank;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = kLetter | kKeyChar;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = kLetter | kKeyChar;
  for (int c = '0'; c <= '9'; ++c) t[c] = kKeyChar;
  for (unsigned char c : {'_', ':', '/'}) t[c] = kKeyChar;
  return t;
}();
uint8_t class_of(char c) { return kClasses[static_cast<unsigned char>(c)]; }
bool is_blank(char c) { return class_of(c) & kBlank; }

bool starts_record(std::string_view line) { return !line.empty() && !is_blank(line[0]); }

bool is_blank_line(std::string_view line) {
  for (char c : line) {
    if (!is_blank(c)) return false;
  }
  return true;
}

// Splits a record's text (its lines joined by '\n') into record.
void parse_record_text(std::string_view text, ScontrolRecord& record) {
  record.clear();
  for_each_line(text, [&](std::string_view line) { split_scontrol_line(line, record); });
}

}  // namespace

std::optional<std::string_view> ScontrolRecord::get(std::string_view key) const {
  for (const auto& kv : fields) {
    if (kv.key == key) return kv.value;
  }
  return std::nullopt;
}

std::vector<std::string_view> ScontrolRecord::all(std::string_view key) const {
  std::vector<std::string_view> out;
  for (const auto& kv : fields) {
    if (kv.key == key) out.push_back(kv.value);
  }
  return out;
}

void split_scontrol_line(std::string_view line, ScontrolRecord& record) {
  const size_t n = line.size();
  size_t i = 0;
  size_t value_start = std::string_view::npos;  // where the value of this line's last pair starts
  while (true) {
    while (i < n && (class_of(line[i]) & kBlank)) ++i;
    if (i == n) return;
    size_t start = i;
    // "Key=": a letter, then letters, digits, '_', ':' or '/', then '='.
    size_t key = 0;
    if (class_of(line[i]) & kLetter) {
      ++i;
      while (i < n && (class_of(line[i]) & kKeyChar)) ++i;
      if (i < n && line[i] == '=') key = i - start;
    }
    while (i < n && !(class_of(line[i]) & kBlank)) ++i;
    if (key) {
      value_start = start + key + 1;
      record.fields.push_back({line.substr(start, key), line.substr(value_start, i - value_start)});
    } else if (value_start != std::string_view::npos) {
      record.fields.back().value = line.substr(value_start, i - value_start);
    } else {
      record.loose_words.push_back(line.substr(start, i - start));
    }
  }
}

const ScontrolRecord* ScontrolParser::complete() {
  if (open_.empty()) return nullptr;
  done_.swap(open_);
  open_.clear();
  done_line_ = open_line_;
  parse_record_text(done_, record_);
  return &record_;
}

const ScontrolRecord* ScontrolParser::feed(std::string_view line) {
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (is_blank_line(line)) return complete();
  const ScontrolRecord* finished = starts_record(line) ? complete() : nullptr;
  if (open_.empty()) {
    open_line_ = line_number_;
  } else {
    open_.push_back('\n');
  }
  open_.append(line);
  return finished;
}

const ScontrolRecord* ScontrolParser::finish() { return complete(); }

std::vector<ScontrolRecord> parse_scontrol_records(std::string_view text) {
  std::vector<ScontrolRecord> records;
  size_t record_start = std::string_view::npos, record_end = 0;
  auto close = [&] {
    if (record_start == std::string_view::npos) return;
    records.emplace_back();
    parse_record_text(text.substr(record_start, record_end - record_start), records.back());
    record_start = std::string_view::npos;
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(pos, end - pos);
    if (is_blank_line(line)) {
      close();
    } else {
      if (starts_record(line)) close();
      if (record_start == std::string_view::npos) record_start = pos;
      record_end = end;
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  close();
  return records;
}

std::optional<KeyValue> parse_config_line(std::string_view line) {
  size_t eq = line.find('=');
  if (eq == std::string_view::npos || eq == 0) return std::nullopt;
  return KeyValue{ascii_trim(line.substr(0, eq)), ascii_trim(line.substr(eq + 1))};
}

std::vector<KeyValue> parse_scontrol_config(std::string_view text) {
  std::vector<KeyValue> out;
  for_each_line(text, [&](std::string_view line) {
    if (auto kv = parse_config_line(line)) out.push_back(*kv);
  });
  return out;
}

}  // namespace gcm::slurm

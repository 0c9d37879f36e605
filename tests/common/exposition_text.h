// A strict reader of the Prometheus text exposition format (0.0.4) and of OpenMetrics text (the same lines, ended by
// "# EOF"), for tests that check what an exporter serves: Slurm's slurmctld (MetricsType=metrics/openmetrics), the
// project's own endpoints. Written by hand because no Debian 12 package parses the format for C++ (prometheus-cpp
// only writes it). Strict: a line that is not a well-formed HELP, TYPE, comment or sample, a repeated TYPE or HELP,
// a TYPE after its family's samples, a family split in two groups, a repeated series, a bad escape, a bad number or
// anything after "# EOF" is an ExpositionError naming the source, the line and what was expected. Bounded: lines
// longer than ExpositionLimits::max_line_bytes, more series or more labels than the limits, are errors too.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gcm::testing {

struct ExpositionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ExpositionLimits {
  size_t max_line_bytes = 16 * 1024;
  size_t max_series = 100'000;
  size_t max_labels = 64;  // per series
};

using ExpositionLabels = std::vector<std::pair<std::string, std::string>>;  // sorted by name

struct ExpositionSample {
  std::string name;
  ExpositionLabels labels;
  double value = 0;
  std::optional<int64_t> timestamp_ms;
  size_t line = 0;
};

struct Exposition {
  std::map<std::string, std::string> types;  // family name -> counter, gauge, ...
  std::map<std::string, std::string> help;
  std::vector<ExpositionSample> samples;  // in the order served
  bool eof = false;                       // ended by "# EOF" (OpenMetrics)
  std::string source;

  // The sample of exactly this name and these labels (any order); nullopt when there is none.
  std::optional<double> find(std::string_view name, ExpositionLabels labels = {}) const {
    std::sort(labels.begin(), labels.end());
    for (const auto& s : samples)
      if (s.name == name && s.labels == labels) return s.value;
    return std::nullopt;
  }
  // As find, but a missing series is an ExpositionError naming it.
  double value(std::string_view name, ExpositionLabels labels = {}) const {
    auto v = find(name, labels);
    if (!v) {
      std::string series(name);
      for (const auto& [k, val] : labels) series += " " + k + "=\"" + val + "\"";
      throw ExpositionError(source + ": no series " + series);
    }
    return *v;
  }
  // Every sample of this name, whatever its labels.
  std::vector<const ExpositionSample*> all(std::string_view name) const {
    std::vector<const ExpositionSample*> out;
    for (const auto& s : samples)
      if (s.name == name) out.push_back(&s);
    return out;
  }
};

namespace exposition_detail {

inline bool name_start(char c, bool colon) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
}
inline bool name_char(char c, bool colon) { return name_start(c, colon) || (c >= '0' && c <= '9'); }

class LineReader {
 public:
  LineReader(std::string_view source, size_t number, std::string_view line)
      : source_(source), number_(number), line_(line) {}

  [[noreturn]] void fail(const std::string& expected) const {
    std::string got = pos_ < line_.size() ? "'" + std::string(line_.substr(pos_, 40)) + "'" : "the end of the line";
    throw ExpositionError(std::string(source_) + ":" + std::to_string(number_) + ": expected " + expected +
                          " at column " + std::to_string(pos_ + 1) + ", got " + got);
  }
  bool at_end() const { return pos_ >= line_.size(); }
  char peek() const { return at_end() ? '\0' : line_[pos_]; }
  bool take(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c, const std::string& what) {
    if (!take(c)) fail(what);
  }
  // One or more blanks (space or tab).
  void blanks(const std::string& what) {
    if (peek() != ' ' && peek() != '\t') fail(what);
    while (peek() == ' ' || peek() == '\t') ++pos_;
  }
  void skip_blanks() {
    while (peek() == ' ' || peek() == '\t') ++pos_;
  }
  std::string name(bool colon, const std::string& what) {
    size_t from = pos_;
    if (!name_start(peek(), colon)) fail(what);
    while (!at_end() && name_char(line_[pos_], colon)) ++pos_;
    return std::string(line_.substr(from, pos_ - from));
  }
  // Up to the next blank or the end of the line.
  std::string_view token() {
    size_t from = pos_;
    while (!at_end() && line_[pos_] != ' ' && line_[pos_] != '\t') ++pos_;
    return line_.substr(from, pos_ - from);
  }
  std::string_view rest() {
    auto r = line_.substr(std::min(pos_, line_.size()));
    pos_ = line_.size();
    return r;
  }
  // A double-quoted label value with the escapes \\, \" and \n.
  std::string quoted() {
    expect('"', "'\"' opening a label value");
    std::string out;
    while (true) {
      if (at_end()) fail("'\"' closing the label value");
      char c = line_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      char e = peek();
      if (e == '\\' || e == '"')
        out += e;
      else if (e == 'n')
        out += '\n';
      else
        fail("an escape \\\\, \\\" or \\n in the label value");
      ++pos_;
    }
  }
  size_t pos() const { return pos_; }
  void set_pos(size_t p) { pos_ = p; }

 private:
  std::string_view source_;
  size_t number_;
  std::string_view line_;
  size_t pos_ = 0;
};

// A sample value: a decimal or exponent float, NaN, or +Inf/-Inf/Inf; nothing else (no hex, no "infinity").
inline std::optional<double> parse_value(std::string_view t) {
  if (t == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (t == "+Inf" || t == "Inf") return std::numeric_limits<double>::infinity();
  if (t == "-Inf") return -std::numeric_limits<double>::infinity();
  std::string_view digits = t;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty() || !(std::isdigit(static_cast<unsigned char>(digits[0])) || digits[0] == '.')) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, std::chars_format::general);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return negative ? -v : v;
}

inline const std::set<std::string>& known_types() {
  static const std::set<std::string> t = {"counter", "gauge", "histogram", "summary",       "untyped",
                                          "unknown", "info",  "stateset",  "gaugehistogram"};
  return t;
}

// The family a sample belongs to: its own name, or the typed family its suffix (_total, _bucket, ...) belongs to.
inline std::string family_of(const std::string& name, const std::map<std::string, std::string>& types) {
  if (types.count(name)) return name;
  for (std::string_view suffix : {"_total", "_created", "_bucket", "_count", "_sum", "_gcount", "_gsum", "_info"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      std::string base = name.substr(0, name.size() - suffix.size());
      if (types.count(base)) return base;
    }
  }
  return name;
}

}  // namespace exposition_detail

// Parses a whole exposition; `source` names it in errors (a file name or a URL).
inline Exposition parse_exposition(std::string_view text, std::string source, const ExpositionLimits& limits = {}) {
  using exposition_detail::LineReader;
  Exposition out;
  out.source = source;
  if (!text.empty() && text.back() != '\n') {
    size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    throw ExpositionError(source + ":" + std::to_string(lines) + ": expected a line feed ending the last line");
  }
  std::map<std::string, size_t> family_first_line, series_line;
  std::set<std::string> closed_families;  // families whose group of samples has ended
  std::string current_family;
  size_t number = 0;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    std::string_view line = text.substr(at, nl - at);
    at = nl + 1;
    ++number;
    if (line.size() > limits.max_line_bytes)
      throw ExpositionError(source + ":" + std::to_string(number) + ": expected a line of at most " +
                            std::to_string(limits.max_line_bytes) + " bytes, got " + std::to_string(line.size()));
    LineReader r(source, number, line);
    if (out.eof) r.fail("nothing after '# EOF'");
    if (line.empty()) continue;
    if (r.take('#')) {
      size_t after_hash = r.pos();
      r.skip_blanks();
      std::string_view keyword = r.token();
      if (keyword == "EOF" && r.at_end() && r.pos() == after_hash + 4) {
        out.eof = true;
        continue;
      }
      if (keyword != "HELP" && keyword != "TYPE") continue;  // any other comment
      r.blanks("a blank after " + std::string(keyword));
      std::string name = r.name(true, "a metric name after " + std::string(keyword));
      if (keyword == "TYPE") {
        r.blanks("a blank before the type");
        std::string type(r.token());
        if (!exposition_detail::known_types().count(type))
          r.fail("a type (counter, gauge, histogram, summary, untyped, ...) for " + name);
        r.skip_blanks();
        if (!r.at_end()) r.fail("the end of the line after the type");
        if (out.types.count(name)) r.fail("one TYPE line for " + name + " (it has one already)");
        if (family_first_line.count(name))
          r.fail("the TYPE of " + name + " before its samples (line " + std::to_string(family_first_line[name]) + ")");
        out.types[name] = type;
      } else {
        if (out.help.count(name)) r.fail("one HELP line for " + name + " (it has one already)");
        std::string_view doc;
        if (!r.at_end()) {
          r.blanks("a blank before the help text");
          doc = r.rest();
        }
        out.help[name] = std::string(doc);
      }
      continue;
    }
    ExpositionSample s;
    s.line = number;
    s.name = r.name(true, "a metric name, '#' or an empty line");
    if (r.take('{')) {
      r.skip_blanks();
      while (!r.take('}')) {
        std::string label = r.name(false, "a label name or '}'");
        r.skip_blanks();
        r.expect('=', "'=' after the label name " + label);
        r.skip_blanks();
        std::string v = r.quoted();
        for (const auto& [k, unused] : s.labels)
          if (k == label) r.fail("label " + label + " once in the series (it is repeated)");
        s.labels.emplace_back(std::move(label), std::move(v));
        if (s.labels.size() > limits.max_labels) r.fail("at most " + std::to_string(limits.max_labels) + " labels");
        r.skip_blanks();
        if (r.take(',')) {
          r.skip_blanks();
          continue;
        }
        if (r.peek() != '}') r.fail("',' or '}' after the label value");
      }
      std::sort(s.labels.begin(), s.labels.end());
    }
    r.blanks("a blank before the value");
    size_t value_at = r.pos();
    std::string_view value = r.token();
    auto v = exposition_detail::parse_value(value);
    if (!v) {
      r.set_pos(value_at);
      r.fail("a number, NaN, +Inf or -Inf as the value");
    }
    s.value = *v;
    r.skip_blanks();
    if (!r.at_end()) {
      size_t ts_at = r.pos();
      std::string_view ts = r.token();
      int64_t t = 0;
      auto [end, ec] = std::from_chars(ts.data(), ts.data() + ts.size(), t);
      if (ec != std::errc() || end != ts.data() + ts.size()) {
        r.set_pos(ts_at);
        r.fail("an integer timestamp (milliseconds) or the end of the line");
      }
      s.timestamp_ms = t;
      r.skip_blanks();
      if (!r.at_end()) r.fail("the end of the line after the timestamp");
    }
    std::string family = exposition_detail::family_of(s.name, out.types);
    if (family != current_family) {
      if (closed_families.count(family))
        r.fail("the samples of " + family + " in one group (its group began on line " +
               std::to_string(family_first_line[family]) + ")");
      if (!current_family.empty()) closed_families.insert(current_family);
      current_family = family;
      family_first_line.emplace(family, number);
    }
    std::string key = s.name;
    for (const auto& [k, val] : s.labels) key += '\0' + k + '\0' + val;
    auto [it, fresh] = series_line.emplace(key, number);
    if (!fresh) r.fail("a new series (" + s.name + " with these labels is on line " + std::to_string(it->second) + ")");
    if (out.samples.size() >= limits.max_series) r.fail("at most " + std::to_string(limits.max_series) + " series");
    out.samples.push_back(std::move(s));
  }
  return out;
}

}  // namespace gcm::testing

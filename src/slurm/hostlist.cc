#include "slurm/hostlist.h"

#include <algorithm>
#include <cstring>

#include "core/ascii.h"

namespace gcm::slurm {

namespace {

constexpr size_t kMaxDigits = 18;  // every 18-digit number fits in uint64_t with room for +1

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_ascii_digit(c) || c == '-' || c == '.' || c == '_';
}

uint64_t digits_value(std::string_view digits) {
  uint64_t v = 0;
  for (char c : digits) v = v * 10 + static_cast<uint64_t>(c - '0');
  return v;
}

size_t decimal_length(uint64_t v) {
  size_t n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

// The decimal text of v, zero-padded to width, appended to out.
void append_padded(std::string& out, uint64_t v, size_t width) {
  char tmp[24];
  size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  for (size_t i = n; i < width; ++i) out.push_back('0');
  while (n) out.push_back(tmp[--n]);
}

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

uint64_t saturating_add(uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

// Adds one to the decimal number spelled by d[begin, end), in place. Returns false when it needs one more digit
// (999 -> 1000): the caller then inserts the leading '1'. Counting in the text is cheaper than formatting every
// value, which is what keeps expansion at a few nanoseconds per host.
inline bool increment_digits(char* d, size_t begin, size_t end) {
  size_t i = end;
  while (i > begin && d[i - 1] == '9') d[--i] = '0';
  if (i == begin) return false;
  ++d[i - 1];
  return true;
}

class Parser {
 public:
  Parser(std::string_view text, uint64_t max_hosts) : s_(text), max_hosts_(max_hosts) {}

  std::vector<Hostlist::Item> parse(uint64_t& total) {
    std::vector<Hostlist::Item> items;
    total = 0;
    size_t first = 0;
    while (first < s_.size() && is_ascii_space(s_[first])) ++first;
    if (first == s_.size()) fail(0, "empty hostlist");
    while (true) {
      skip_blanks();
      if (pos_ == s_.size()) break;
      if (s_[pos_] == ',') {  // an empty item, as in "a,,b" or a trailing comma: Slurm skips it
        ++pos_;
        continue;
      }
      size_t item_start = pos_;
      items.push_back(parse_item());
      total = saturating_add(total, item_size(items.back()));
      if (total > max_hosts_) fail(item_start, "expands to more than " + std::to_string(max_hosts_) + " hosts");
      skip_blanks();
      if (pos_ == s_.size()) break;
      if (s_[pos_] != ',') fail(pos_, "expected ',' between names");
      ++pos_;
    }
    if (items.empty()) fail(first, "no host names");
    return items;
  }

 private:
  [[noreturn]] void fail(size_t at, std::string_view why) const { throw HostlistError(s_, at, why); }

  static Hostlist::Span span(size_t begin, size_t end) {
    return {static_cast<uint32_t>(begin), static_cast<uint32_t>(end - begin)};
  }

  void skip_blanks() {
    while (pos_ < s_.size() && is_ascii_space(s_[pos_])) ++pos_;
  }

  Hostlist::Item parse_item() {
    Hostlist::Item item;
    size_t text_start = pos_;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (is_name_char(c)) {
        ++pos_;
      } else if (c == '[') {
        item.texts.push_back(span(text_start, pos_));
        item.groups.push_back(parse_group());
        text_start = pos_;
      } else if (c == ']') {
        fail(pos_, "']' without a matching '['");
      } else if (c == ',' || is_ascii_space(c)) {
        break;
      } else {
        fail(pos_, std::string("unexpected character '") + c + "'");
      }
    }
    item.texts.push_back(span(text_start, pos_));
    return item;
  }

  Hostlist::Group parse_group() {
    size_t open = pos_++;
    Hostlist::Group g;
    while (true) {
      if (pos_ == s_.size()) fail(open, "unbalanced '['");
      if (s_[pos_] == ']' && g.ranges.empty()) fail(pos_, "empty brackets");
      size_t lo_at = pos_;
      std::string_view lo = read_number(open);
      Hostlist::Range r;
      r.lo = r.hi = digits_value(lo);
      r.width = static_cast<uint8_t>(lo.size());
      if (pos_ < s_.size() && s_[pos_] == '-') {
        ++pos_;
        std::string_view hi = read_number(open);
        r.hi = digits_value(hi);
        if (r.hi < r.lo) fail(lo_at, "reversed range " + std::string(lo) + "-" + std::string(hi));
      }
      g.ranges.push_back(r);
      if (pos_ == s_.size()) fail(open, "unbalanced '['");
      char c = s_[pos_++];
      if (c == ']') return g;
      if (c == ',') continue;
      if (c == '[') fail(pos_ - 1, "nested '['");
      fail(pos_ - 1, std::string("unexpected character '") + c + "' in range");
    }
  }

  std::string_view read_number(size_t open) {
    size_t start = pos_;
    while (pos_ < s_.size() && is_ascii_digit(s_[pos_])) ++pos_;
    if (pos_ == start) {
      if (pos_ == s_.size()) fail(open, "unbalanced '['");
      fail(pos_, std::string("expected a number, found '") + s_[pos_] + "'");
    }
    if (pos_ - start > kMaxDigits) fail(start, "number longer than 18 digits");
    return s_.substr(start, pos_ - start);
  }

  static uint64_t item_size(const Hostlist::Item& item) {
    uint64_t n = 1;
    for (const auto& g : item.groups) {
      uint64_t in_group = 0;
      for (const auto& r : g.ranges) in_group = saturating_add(in_group, r.hi - r.lo + 1);
      n = saturating_mul(n, in_group);
    }
    return n;
  }

  std::string_view s_;
  uint64_t max_hosts_;
  size_t pos_ = 0;
};

// Expands groups[level..] of an item, buf holding the text before groups[level]. Each name is built once in buf:
// the digits of the current number are incremented where they stand, and deeper levels append after them and
// restore the length when done. The name is read through a local pointer and length so that the compiler need not
// reload them from buf after every emit.
template <typename Emit>
void expand_level(std::string_view text, const Hostlist::Item& item, size_t level, std::string& buf, Emit& emit) {
  const size_t base = buf.size();
  const std::string_view after = text.substr(item.texts[level + 1].pos, item.texts[level + 1].len);
  const bool innermost = level + 1 == item.groups.size();
  for (const auto& r : item.groups[level].ranges) {
    buf.resize(base);
    append_padded(buf, r.lo, r.width);
    size_t digits_end = buf.size();
    buf.append(after);
    char* name = buf.data();
    size_t length = buf.size();
    for (uint64_t n = r.lo;; ++n) {
      if (innermost) {
        emit(std::string_view(name, length));
      } else {
        expand_level(text, item, level + 1, buf, emit);
        buf.resize(length);  // deeper levels restore the length, but may have moved the buffer
        name = buf.data();
      }
      if (n == r.hi) break;
      if (!increment_digits(name, base, digits_end)) {
        buf.insert(base, 1, '1');
        ++digits_end;
        name = buf.data();
        length = buf.size();
      }
    }
  }
  buf.resize(base);
}

template <typename Emit>
void expand_items(std::string_view text, const std::vector<Hostlist::Item>& items, Emit& emit) {
  std::string buf;
  buf.reserve(64);
  for (const auto& item : items) {
    buf.assign(text.substr(item.texts[0].pos, item.texts[0].len));
    if (item.groups.empty())
      emit(std::string_view(buf));
    else
      expand_level(text, item, 0, buf, emit);
  }
}

// Does host[pos..] match groups[level..] of item (with the text before groups[level] already matched)?
bool match_from(std::string_view hostlist, const Hostlist::Item& item, size_t level, std::string_view host,
                size_t pos) {
  std::string_view text = hostlist.substr(item.texts[level].pos, item.texts[level].len);
  if (host.substr(pos, text.size()) != text) return false;
  pos += text.size();
  if (level == item.groups.size()) return pos == host.size();
  size_t end = pos;
  while (end < host.size() && is_ascii_digit(host[end]) && end - pos < kMaxDigits) ++end;
  // The digit run may continue into the following text ("n[1-2]0"), so try every length.
  for (size_t len = 1; pos + len <= end; ++len) {
    uint64_t v = digits_value(host.substr(pos, len));
    for (const auto& r : item.groups[level].ranges) {
      // The name's digits must be exactly the padded spelling of v, not merely the same value.
      if (v >= r.lo && v <= r.hi && len == std::max<size_t>(r.width, decimal_length(v)) &&
          match_from(hostlist, item, level + 1, host, pos + len))
        return true;
    }
  }
  return false;
}

// A host name split for compression: prefix, number (the last run of digits), suffix.
struct SplitName {
  std::string_view prefix, digits, suffix;
  uint64_t value = 0;
};

SplitName split_name(std::string_view name) {
  SplitName s;
  size_t end = name.size();
  while (end > 0 && !is_ascii_digit(name[end - 1])) --end;
  size_t start = end;
  while (start > 0 && is_ascii_digit(name[start - 1])) --start;
  if (end == start || end - start > kMaxDigits) {  // no number we can range over: the name stays as it is
    s.prefix = name;
    return s;
  }
  s.prefix = name.substr(0, start);
  s.digits = name.substr(start, end - start);
  s.suffix = name.substr(end);
  s.value = digits_value(s.digits);
  return s;
}

void check_compressible(std::string_view name) {
  if (name.empty()) throw HostlistError(name, 0, "empty host name");
  for (size_t i = 0; i < name.size(); ++i) {
    if (!is_name_char(name[i]))
      throw HostlistError(name, i, std::string("character '") + name[i] + "' cannot appear in a hostlist");
  }
}

template <typename Name>
std::string compress_names(std::span<const Name> hosts) {
  std::string out;
  // The run being built: names sharing prefix and suffix whose numbers form the ranges below.
  std::string_view prefix, suffix;
  std::vector<Hostlist::Range> ranges;
  std::string_view first_digits;  // spelling of a run's only number, for writing it plainly
  auto flush = [&] {
    if (ranges.empty()) return;
    if (!out.empty()) out.push_back(',');
    out.append(prefix);
    if (ranges.size() == 1 && ranges[0].lo == ranges[0].hi) {
      out.append(first_digits);
    } else {
      out.push_back('[');
      for (size_t i = 0; i < ranges.size(); ++i) {
        if (i) out.push_back(',');
        append_padded(out, ranges[i].lo, ranges[i].width);
        if (ranges[i].hi != ranges[i].lo) {
          out.push_back('-');
          append_padded(out, ranges[i].hi, ranges[i].width);
        }
      }
      out.push_back(']');
    }
    out.append(suffix);
    ranges.clear();
  };
  for (const auto& host : hosts) {
    std::string_view name(host);
    check_compressible(name);
    SplitName s = split_name(name);
    if (s.digits.empty()) {
      flush();
      if (!out.empty()) out.push_back(',');
      out.append(name);
      continue;
    }
    if (!ranges.empty() && s.prefix == prefix && s.suffix == suffix) {
      Hostlist::Range& last = ranges.back();
      bool next_number = last.hi != UINT64_MAX && s.value == last.hi + 1;
      if (next_number && s.digits.size() == std::max<size_t>(last.width, decimal_length(s.value))) {
        last.hi = s.value;
      } else {
        ranges.push_back({s.value, s.value, static_cast<uint8_t>(s.digits.size())});
      }
      continue;
    }
    flush();
    prefix = s.prefix;
    suffix = s.suffix;
    first_digits = s.digits;
    ranges.push_back({s.value, s.value, static_cast<uint8_t>(s.digits.size())});
  }
  flush();
  return out;
}

}  // namespace

HostlistError::HostlistError(std::string_view hostlist, size_t position, std::string_view why)
    : ParseError("invalid hostlist '" + std::string(hostlist) + "': " + std::string(why) + " at position " +
                 std::to_string(position)),
      position_(position) {}

Hostlist Hostlist::parse(std::string_view text, uint64_t max_hosts) {
  if (text.size() > UINT32_MAX) throw HostlistError(text.substr(0, 64), 0, "longer than 4 GiB");
  Hostlist h;
  h.text_ = std::string(text);
  h.items_ = Parser(h.text_, max_hosts).parse(h.size_);
  return h;
}

void Hostlist::for_each(const std::function<void(std::string_view)>& on_host) const {
  expand_items(text_, items_, on_host);
}

void Hostlist::append_to(std::vector<std::string>& out) const {
  out.reserve(out.size() + static_cast<size_t>(size_));
  auto push = [&out](std::string_view host) { out.emplace_back(host); };
  expand_items(text_, items_, push);
}

bool Hostlist::contains(std::string_view host) const {
  if (host.empty()) return false;
  for (const auto& item : items_) {
    if (match_from(text_, item, 0, host, 0)) return true;
  }
  return false;
}

std::vector<std::string> expand_hostlist(std::string_view hostlist) {
  std::vector<std::string> out;
  Hostlist::parse(hostlist).append_to(out);
  return out;
}

void expand_hostlist_into(std::string_view hostlist, std::vector<std::string>& out) {
  Hostlist::parse(hostlist).append_to(out);
}

std::optional<std::vector<std::string>> nodelist_or_null(std::string_view hostlist) {
  // Slurm's usual "no list" spellings, answered without the cost of a thrown HostlistError (squeue prints one or
  // more per pending job).
  std::string_view t = hostlist;
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  if (t.empty() || t == "(null)" || t == "None assigned" || t == "N/A") return std::nullopt;
  try {
    return expand_hostlist(hostlist);
  } catch (const HostlistError&) {
    return std::nullopt;
  }
}

std::string compress_hostlist(std::span<const std::string> hosts) { return compress_names(hosts); }

std::string compress_hostlist(std::span<const std::string_view> hosts) { return compress_names(hosts); }

std::string canonical_hostlist(std::string_view hostlist) { return compress_hostlist(expand_hostlist(hostlist)); }

bool hostlist_contains(std::string_view hostlist, std::string_view host) {
  try {
    return Hostlist::parse(hostlist).contains(host);
  } catch (const HostlistError&) {
    return false;
  }
}

}  // namespace gcm::slurm

#include "slurm/gres.h"

#include <charconv>
#include <optional>

#include "core/ascii.h"
#include "slurm/coerce.h"

namespace gcm::slurm {

namespace {

constexpr int kMaxIndexRange = 1 << 16;  // far above any node's device count; bounds memory on garbage input

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_alnum(char c) { return is_alpha(c) || is_ascii_digit(c); }
bool is_field_char(char c) { return is_alnum(c) || c == '_' || c == '.' || c == '-'; }

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!is_ascii_digit(c)) return false;
  }
  return true;
}

std::string_view drop_gres_prefix(std::string_view s) {
  if (s.starts_with("gres:") || s.starts_with("gres/")) s.remove_prefix(5);
  return s;
}

[[noreturn]] void bad_gres(std::string_view item, std::string_view why) {
  throw ParseError(describe_bad_value("GRES", item, why));
}

std::optional<int> small_int(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !is_ascii_digit(s.front())) return std::nullopt;
  return v;
}

// One part of an index list, "3" or "0-7", as its bounds; nullopt when it is neither. The strict list reader and
// the lenient one (shelper's) differ only in what they do with a part that does not read.
struct IndexRange {
  int lo = 0, hi = 0;
  bool sensible() const { return hi >= lo && hi - lo <= kMaxIndexRange; }
};
std::optional<IndexRange> index_range(std::string_view part) {
  size_t dash = part.find('-');
  auto lo = small_int(part.substr(0, dash));
  auto hi = dash == std::string_view::npos ? lo : small_int(part.substr(dash + 1));
  if (!lo || !hi) return std::nullopt;
  return IndexRange{*lo, *hi};
}

// Calls `each` with every comma-separated part of `list` ("" is one empty part).
template <typename Each>
void for_each_part(std::string_view list, Each each) {
  size_t start = 0;
  while (true) {
    size_t comma = list.find(',', start);
    each(list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return;
    start = comma + 1;
  }
}

// "0-2,4" -> 0 1 2 4, appended to out. "" and "N/A" add nothing.
void parse_index_list(std::string_view list, std::string_view item, std::vector<int>& out) {
  if (list.empty() || list == "N/A") return;
  for_each_part(list, [&](std::string_view part) {
    auto r = index_range(part);
    if (!r) bad_gres(item, "index '" + std::string(part) + "' is not a number or range");
    if (!r->sensible()) bad_gres(item, "bad index range '" + std::string(part) + "'");
    for (int i = r->lo; i <= r->hi; ++i) out.push_back(i);
  });
}

// The text between the parentheses: "IDX:0-7", "S:0-1", possibly several "KEY:list" joined by ','.
void parse_details(std::string_view details, std::string_view item, Gres& g) {
  size_t pos = 0;
  while (pos < details.size()) {
    size_t key_end = pos;
    while (key_end < details.size() && is_alpha(details[key_end])) ++key_end;
    if (key_end == pos || key_end == details.size() || details[key_end] != ':')
      bad_gres(item, "expected KEY:list inside the parentheses");
    std::string_view key = details.substr(pos, key_end - pos);
    // The list runs to the next ",<letter>" (the next key) or the end.
    size_t end = key_end + 1;
    while (end < details.size() && !(details[end] == ',' && end + 1 < details.size() && is_alpha(details[end + 1]) &&
                                     details.substr(end + 1, 3) != "N/A"))
      ++end;
    std::string_view list = details.substr(key_end + 1, end - key_end - 1);
    if (key == "IDX")
      parse_index_list(list, item, g.indices);
    else if (key == "S")
      parse_index_list(list, item, g.sockets);
    pos = end < details.size() ? end + 1 : end;
  }
}

Gres parse_one_gres(std::string_view item) {
  Gres g;
  std::string_view head = drop_gres_prefix(item);
  size_t open = head.find('(');
  if (open != std::string_view::npos) {
    if (head.back() != ')') bad_gres(item, "text after ')'");
    parse_details(head.substr(open + 1, head.size() - open - 2), item, g);
    head = head.substr(0, open);
  }
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t colon = head.find(':', start);
    std::string_view f = head.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start);
    if (f.empty()) bad_gres(item, "empty field");
    for (char c : f) {
      if (!is_field_char(c)) bad_gres(item, std::string("unexpected character '") + c + "'");
    }
    fields.push_back(f);
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  g.name = fields[0];
  size_t middle_end = fields.size();
  bool has_count = fields.size() > 1 && all_digits(fields.back());
  if (has_count) {
    auto count = python_int(fields.back());
    if (!count) bad_gres(item, "count out of range");
    g.count = *count;
    --middle_end;
  } else {
    g.count = g.indices.empty() ? 1 : static_cast<int64_t>(g.indices.size());
  }
  for (size_t i = 1; i < middle_end; ++i) {
    if (i == 1)
      g.type = fields[i];
    else
      g.flags.emplace_back(fields[i]);
  }
  return g;
}

}  // namespace

std::vector<Gres> parse_gres_list(std::string_view text) {
  std::vector<Gres> list;
  text = ascii_trim(text);
  if (text.empty() || text == "(null)" || text == "N/A") return list;
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ',';
    if (c == '(') {
      if (++depth > 1) bad_gres(text, "nested '('");
    } else if (c == ')') {
      if (--depth < 0) bad_gres(text, "')' without '('");
    } else if (c == ',' && depth == 0) {
      std::string_view item = ascii_trim(text.substr(start, i - start));
      if (item.empty()) bad_gres(text, "empty item");
      list.push_back(parse_one_gres(item));
      start = i + 1;
    }
  }
  if (depth != 0) bad_gres(text, "unbalanced '('");
  return list;
}

int64_t gres_count(const std::vector<Gres>& list, std::string_view name) {
  int64_t n = 0;
  for (const auto& g : list) {
    if (g.name == name) n += g.count;
  }
  return n;
}

std::vector<int> gres_indices(const std::vector<Gres>& list, std::string_view name) {
  std::vector<int> out;
  for (const auto& g : list) {
    if (g.name == name) out.insert(out.end(), g.indices.begin(), g.indices.end());
  }
  return out;
}

std::vector<int> shelper_gres_indices(std::string_view gres) {
  std::vector<int> out;
  size_t open = gres.find('(');
  if (open == std::string_view::npos) return out;
  size_t close = gres.find(')', open + 1);
  if (close == std::string_view::npos || close == open + 1) return out;
  std::string_view inside = gres.substr(open + 1, close - open - 1);
  size_t colon = inside.find(':');
  if (colon == std::string_view::npos) return out;
  // A part that does not read is skipped, as shelper does.
  for_each_part(inside.substr(colon + 1), [&](std::string_view part) {
    auto r = index_range(part);
    if (r && r->sensible())
      for (int i = r->lo; i <= r->hi; ++i) out.push_back(i);
  });
  return out;
}

int64_t gres_gpu_count(std::string_view value) {
  if (value == "N/A" || value == "(null)") return 0;
  std::string_view s = drop_gres_prefix(value);
  if (!s.starts_with("gpu:")) bad_gres(value, "expected 'gpu:' followed by a count");
  s.remove_prefix(4);
  // The reference's regex "gpu:([A-Za-z0-9]+:)*([0-9]+)" backtracks: the count comes after the longest run of
  // type fields that is followed by a digit ("gpu:8:x" -> 8). Type fields may also hold '_', '.' and '-'
  // (design.md-style fix: NVML autodetection names types "nvidia_a100-sxm4-80gb"; the reference rejected them,
  // aborting the whole round).
  std::vector<size_t> starts{0};
  size_t pos = 0;
  while (true) {
    size_t end = pos;
    while (end < s.size() && is_field_char(s[end])) ++end;
    if (end == pos || end == s.size() || s[end] != ':') break;
    pos = end + 1;
    starts.push_back(pos);
  }
  for (size_t i = starts.size(); i-- > 0;) {
    size_t begin = starts[i];
    size_t end = begin;
    while (end < s.size() && is_ascii_digit(s[end])) ++end;
    if (end > begin) {
      auto n = python_int(s.substr(begin, end - begin));
      if (!n) bad_gres(value, "count out of range");
      return *n;
    }
  }
  bad_gres(value, "expected 'gpu:' followed by a count");
}

int64_t tres_per_node_gpu_count(std::string_view value) {
  if (value == "N/A" || value == "(null)") return 0;
  std::string_view s = drop_gres_prefix(value);
  if (s.starts_with("gpu:")) {
    size_t end = 4;
    while (end < s.size() && is_ascii_digit(s[end])) ++end;
    if (end > 4) {
      if (auto n = python_int(s.substr(4, end - 4))) return *n;
    }
  }
  throw ParseError(describe_bad_value("TRES per node", value, "expected 'gpu:<count>'"));
}

int64_t gres_or_tres_gpu_count(std::string_view value) noexcept {
  try {
    return gres_gpu_count(value);
  } catch (const ParseError&) {
  }
  try {
    return tres_per_node_gpu_count(value);
  } catch (const ParseError&) {
  }
  return 0;
}

int64_t gpus_in_gres_list(std::string_view value) {
  int64_t gpus = 0;
  size_t start = 0;
  while (true) {
    size_t comma = value.find(',', start);
    std::string_view item =
        value.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.starts_with("gpu:")) gpus = gres_gpu_count(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return gpus;
}

std::optional<std::string> gres_detail_gpu_indices(const std::vector<std::string>& gres_detail) {
  if (gres_detail.size() != 1) return std::nullopt;
  std::vector<int> indices = gres_indices(parse_gres_list(gres_detail.front()), "gpu");
  if (indices.empty()) return std::nullopt;
  std::string out;
  for (int i : indices) {
    if (!out.empty()) out.push_back(',');
    out += std::to_string(i);
  }
  return out;
}

}  // namespace gcm::slurm

#include "sacct/publish.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "core/json_scan.h"
#include "sacct/sacct_records.h"
#include "slurm/derived_cluster.h"
#include "slurm/hostlist.h"
#include "slurm/parse_error.h"
#include "slurm/timestamp.h"

namespace gcm::sacct {

namespace {

// Python's str.strip() on ASCII: blanks, \t \n \v \f \r and the separators \x1c-\x1f.
bool is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

std::string_view strip(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && is_space(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool all_ascii(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t acc = 0;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    acc |= w;
    p += 8;
    n -= 8;
  }
  while (n--) acc |= static_cast<unsigned char>(*p++);
  return (acc & 0x8080808080808080ull) == 0;
}

size_t json_string_size(std::string_view s) { return is_json_plain_ascii(s) ? s.size() + 2 : to_json(Value(s)).size(); }

// Length of the valid UTF-8 sequence at s[i], or 0.
size_t utf8_sequence(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  size_t n = s.size() - i;
  unsigned char b0 = b(0);
  if (b0 < 0x80) return 1;
  auto cont = [&](size_t k) { return k < n && (b(k) & 0xC0) == 0x80; };
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (b0 == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (b0 == 0xED && b(1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (b0 == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (b0 == 0xF4 && b(1) >= 0x90) return 0;  // beyond U+10FFFF
    return 4;
  }
  return 0;
}

// Splits s on a one-byte delimiter, 16 bytes a step with SSE2 (part of every x86-64): sacct's fields are short (a
// 1 KB row has ~100), so a memchr call per field costs more than the scan itself. The same pass tells whether s
// needs JSON escaping (is_json_plain_ascii), which the record's size needs.
bool split_on_byte(std::string_view s, char delim, std::vector<std::string_view>& out) {
  const char* p = s.data();
  const size_t n = s.size();
  size_t start = 0, i = 0;
  bool plain = true;
#if defined(__SSE2__)
  const __m128i delims = _mm_set1_epi8(delim);
  __m128i special = _mm_setzero_si128();
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    special = _mm_or_si128(special, json_scan::special_lanes(v));
    auto hits = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, delims)));
    while (hits) {
      size_t at = i + static_cast<size_t>(__builtin_ctz(hits));
      out.emplace_back(p + start, at - start);
      start = at + 1;
      hits &= hits - 1;
    }
  }
  plain = _mm_movemask_epi8(special) == 0;
#endif
  const size_t tail = i;
  for (; i < n; ++i)
    if (p[i] == delim) {
      out.emplace_back(p + start, i - start);
      start = i + 1;
    }
  out.emplace_back(p + start, n - start);
  return plain && is_json_plain_ascii(s.substr(tail));
}

// Splits s on delim (non-empty) into out, as Python's str.split(delim). Returns is_json_plain_ascii(s).
bool split(std::string_view s, std::string_view delim, std::vector<std::string_view>& out) {
  out.clear();
  if (delim.size() == 1) return split_on_byte(s, delim[0], out);
  const char first = delim[0];
  const size_t dn = delim.size();
  size_t start = 0, pos = 0;
  while (true) {
    const void* hit = pos < s.size() ? std::memchr(s.data() + pos, first, s.size() - pos) : nullptr;
    if (!hit) break;
    size_t at = static_cast<size_t>(static_cast<const char*>(hit) - s.data());
    if (s.compare(at, dn, delim) == 0) {
      out.emplace_back(s.data() + start, at - start);
      start = pos = at + dn;
    } else {
      pos = at + 1;
    }
  }
  out.emplace_back(s.data() + start, s.size() - start);
  return is_json_plain_ascii(s);
}

}  // namespace

Utf8Errors parse_utf8_errors(std::string_view text) {
  if (text == "strict") return Utf8Errors::Strict;
  if (text == "ignore") return Utf8Errors::Ignore;
  if (text == "replace") return Utf8Errors::Replace;
  throw std::invalid_argument(fmt::format("'{}' is not one of 'strict', 'ignore', 'replace'", text));
}

size_t first_invalid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = utf8_sequence(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

void fix_utf8(std::string_view s, bool replace, std::string& out) {
  size_t i = 0;
  while (i < s.size()) {
    size_t n = utf8_sequence(s, i);
    if (n == 0) {
      if (replace) out.append("\xEF\xBF\xBD");
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
}

SacctPublisher::SacctPublisher(PublishOptions options, std::shared_ptr<spdlog::logger> log)
    : o_(std::move(options)), log_(std::move(log)), record_(sacct_payload_schema()) {
  if (o_.delimiter.empty()) throw std::invalid_argument("the delimiter must not be empty");
  record_[kPayloadTime] = o_.time;
  record_[kPayloadCluster] = o_.cluster;
  derived_ = o_.cluster;
  record_[kPayloadDerived] = derived_;
  record_[kPayloadEndDs] = std::string();
  record_[kPayloadSacct] = Object{};
}

void SacctPublisher::run(int fd, RecordOut& out) {
  std::vector<char> buf(size_t{1} << 20);
  size_t have = 0;
  bool eof = false;
  while (!eof) {
    if (have == buf.size()) buf.resize(buf.size() * 2);  // a line longer than the buffer
    ssize_t n = ::read(fd, buf.data() + have, buf.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "reading " + o_.input_name);
    }
    if (n == 0) eof = true;
    stats_.bytes += static_cast<uint64_t>(n);
    size_t scan_from = have;
    have += static_cast<size_t>(n);
    const char* p = buf.data();
    size_t start = 0;
    while (scan_from < have) {
      const void* nl = std::memchr(p + scan_from, '\n', have - scan_from);
      if (!nl) break;
      size_t end = static_cast<size_t>(static_cast<const char*>(nl) - p);
      feed_line(std::string_view(p + start, end - start), out);
      line_offset_ += end - start + 1;
      start = scan_from = end + 1;
    }
    if (eof && start < have) {
      feed_line(std::string_view(p + start, have - start), out);
      start = have;
    }
    if (start > 0) {
      std::memmove(buf.data(), buf.data() + start, have - start);
      have -= start;
    }
  }
}

std::string_view SacctPublisher::repair_utf8(std::string_view line) {
  size_t bad = first_invalid_utf8(line);
  if (bad == std::string_view::npos) return line;
  if (o_.io_errors == Utf8Errors::Strict) {
    throw PublishError(
        stats_.lines,
        fmt::format("{}: line {}: invalid UTF-8 at byte offset {} (byte {} of the line): 'utf-8' codec can't decode "
                    "byte 0x{:02x}; use --sacct-output-io-errors=replace or ignore to read it anyway",
                    o_.input_name, stats_.lines, line_offset_ + bad, bad + 1, static_cast<unsigned char>(line[bad])));
  }
  ++stats_.utf8_fixed_lines;
  scratch_.clear();
  fix_utf8(line, o_.io_errors == Utf8Errors::Replace, scratch_);
  return scratch_;
}

void SacctPublisher::feed_line(std::string_view line, RecordOut& out) {
  ++stats_.lines;
  if (!all_ascii(line)) line = repair_utf8(line);
  line = strip(line);
  if (!have_header_) {
    set_header(line);
    return;
  }
  process(line, out);
}

void SacctPublisher::set_header(std::string_view line) {
  split(line, o_.delimiter, fields_);
  columns_ = fields_.size();
  Object& obj = record_[kPayloadSacct].as_object();
  obj.clear();
  // A repeated name is one key, at its first position, holding the last column's value (a Python dict from zip).
  member_of_.clear();
  for (std::string_view name : fields_) {
    size_t m = 0;
    while (m < obj.size() && obj[m].key != name) ++m;
    if (m == obj.size()) obj.push_back(Member{std::string(name), Value(std::string())});
    member_of_.push_back(m);
  }
  key_size_.clear();
  keys_plain_ = true;
  for (const Member& m : obj) {
    key_size_.push_back(json_string_size(m.key));
    keys_plain_ = keys_plain_ && is_json_plain_ascii(m.key);
  }
  {
    // {"time":T,"end_ds":...,"cluster":...,"derived_cluster":...,"sacct":{...}}: names, colons, commas, T.
    const Schema& schema = sacct_payload_schema();
    fixed_size_ = 2 + (schema.fields.size() - 1);
    for (const auto& f : schema.fields) fixed_size_ += json_string_size(f.name) + 1;
    fixed_size_ += std::to_string(o_.time).size();
    fixed_size_ += 2 + (obj.empty() ? 0 : obj.size() - 1);  // the sacct object's braces and commas
    for (size_t k : key_size_) fixed_size_ += k + 1;
  }
  auto column = [&](std::string_view name) {
    size_t found = SIZE_MAX;
    for (size_t i = 0; i < fields_.size(); ++i)
      if (fields_[i] == name) found = i;
    return found;
  };
  eligible_.index = column("Eligible");
  start_.index = column("Start");
  submit_.index = column("Submit");
  end_index_ = column("End");
  partition_ = column("Partition");
  nodelist_ = column("NodeList");
  cluster_cols_[0] = column("cluster");
  cluster_cols_[1] = column("CLUSTER");
  cluster_cols_[2] = column("Cluster");
  if (end_index_ == SIZE_MAX)
    throw PublishError(stats_.lines,
                       fmt::format("{}: line {}: the header has no End column (delimiter '{}'): {}", o_.input_name,
                                   stats_.lines, o_.delimiter, std::string(line.substr(0, 200))));
  have_header_ = true;
}

void SacctPublisher::invalid(const std::string& reason) {
  if (!o_.ignore_line_errors)
    throw PublishError(stats_.lines,
                       fmt::format("{}: Invalid input on line {}: {}", o_.input_name, stats_.lines, reason));
  ++stats_.invalid_lines;
  if (stats_.invalid_line_numbers.size() < PublishStats::kMaxListed) {
    stats_.invalid_line_numbers.push_back(stats_.lines);
    stats_.invalid_reasons.push_back(reason);
    if (log_) log_->warn("Skipping invalid input on line {}: {}", stats_.lines, reason);
  }
}

const std::string& SacctPublisher::convert_time(TimeColumn& c, std::string_view value) {
  if (value != c.last_in || c.last_in.empty()) {
    c.last_out = slurm::time_to_time_aware(value, o_.sacct_zone, o_.naive_zone);
    c.last_in.assign(value);
  }
  return c.last_out;
}

void SacctPublisher::convert_end(std::string_view value) {
  if (end_ok_ && value == end_in_) return;
  end_ok_ = false;
  slurm::Timestamp t = slurm::parse_timestamp(value, o_.naive_zone);
  end_out_ = slurm::format_iso(slurm::in_zone(t, o_.sacct_zone));
  end_ds_ = slurm::format_date(slurm::in_zone(t, o_.end_ds_zone));
  end_in_.assign(value);
  end_ok_ = true;
}

void SacctPublisher::process(std::string_view line, RecordOut& out) {
  const bool line_plain = split(line, o_.delimiter, fields_);
  if (fields_.size() != columns_) {
    invalid(fmt::format("{} field(s) where the header has {}", fields_.size(), columns_));
    return;
  }
  const std::string* times[3] = {nullptr, nullptr, nullptr};
  TimeColumn* cols[3] = {&eligible_, &start_, &submit_};
  try {
    for (size_t k = 0; k < 3; ++k)
      if (cols[k]->index != SIZE_MAX) times[k] = &convert_time(*cols[k], fields_[cols[k]->index]);
  } catch (const slurm::ParseError& e) {
    invalid(e.what());
    return;
  }
  try {
    convert_end(fields_[end_index_]);
  } catch (const slurm::ParseError& e) {
    invalid(fmt::format("End: {}", e.what()));
    return;
  }

  Object& obj = record_[kPayloadSacct].as_object();
  for (size_t i = 0; i < columns_; ++i) {
    // clear() + append(): the reused strings keep their capacity, and append's path (copy, set the length) is
    // shorter than assign's, which also handles a source inside the string itself.
    std::string& value = obj[member_of_[i]].value.as_string();
    value.clear();
    value.append(fields_[i]);
  }
  for (size_t k = 0; k < 3; ++k)
    if (times[k]) obj[member_of_[cols[k]->index]].value.as_string() = *times[k];
  obj[member_of_[end_index_]].value.as_string() = end_out_;
  record_[kPayloadEndDs].as_string() = end_ds_;

  if (o_.heterogeneous_cluster_v1) {
    auto field = [&](size_t i) { return i == SIZE_MAX ? std::string_view() : fields_[i]; };
    std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}", field(cluster_cols_[0]), field(cluster_cols_[1]),
                                  field(cluster_cols_[2]), field(partition_), field(nodelist_));
    if (key != derived_key_) {
      derived_ = slurm::derived_cluster(
          [&](std::string_view name) -> std::optional<std::string_view> {
            size_t i = SIZE_MAX;
            if (name == "Partition") i = partition_;
            if (name == "NodeList") i = nodelist_;
            if (name == "cluster") i = cluster_cols_[0];
            if (name == "CLUSTER") i = cluster_cols_[1];
            if (name == "Cluster") i = cluster_cols_[2];
            if (i == SIZE_MAX) return std::nullopt;
            return fields_[i];
          },
          true, o_.cluster);
      derived_key_ = std::move(key);
      record_[kPayloadDerived].as_string() = derived_;
    }
  }
  if (o_.kubernetes_hosts) {
    std::string_view nodes = nodelist_ == SIZE_MAX ? std::string_view() : fields_[nodelist_];
    if (!hosts_resolved_ || nodes != hosts_key_) {
      sc_host_ = resolve_sc_host(nodes, *o_.kubernetes_hosts);
      sc_node_hosts_ = resolve_sc_node_hosts(nodes, *o_.kubernetes_hosts);
      hosts_key_.assign(nodes);
      hosts_resolved_ = true;
    }
    record_[kPayloadScHost] = sc_host_ ? Value(*sc_host_) : Value();
    record_[kPayloadScNodeHosts] = sc_node_hosts_ ? Value(*sc_node_hosts_) : Value();
  }
  last_size_ = fixed_size_ + end_ds_.size() + 2;
  last_size_ += sc_host_ ? json_string_size(*sc_host_) : 4;  // "null"
  last_size_ += sc_node_hosts_ ? json_string_size(*sc_node_hosts_) : 4;
  if (sized_cluster_ != o_.cluster || cluster_size_ == 0) {
    sized_cluster_ = o_.cluster;
    cluster_size_ = json_string_size(o_.cluster);
  }
  if (sized_derived_ != derived_ || derived_size_ == 0) {
    sized_derived_ = derived_;
    derived_size_ = json_string_size(derived_);
  }
  last_size_ += cluster_size_ + derived_size_;
  if (line_plain) {
    for (const Member& m : obj) last_size_ += m.value.as_string().size() + 2;
  } else {
    for (const Member& m : obj) last_size_ += json_string_size(m.value.as_string());
  }
  // The split has looked at every byte of the line, so the JSON writers need not look again (a third of
  // `--sink stdout` was scanning ~100 keys and values per record a second time). The strings that do not come from
  // the line's fields as they are (the converted times, the cluster names, end_ds) are checked here.
  bool plain = line_plain && keys_plain_ && is_json_plain_ascii(end_out_) && is_json_plain_ascii(end_ds_) &&
               is_json_plain_ascii(o_.cluster) && is_json_plain_ascii(derived_) &&
               (!sc_host_ || is_json_plain_ascii(*sc_host_)) &&
               (!sc_node_hosts_ || is_json_plain_ascii(*sc_node_hosts_));
  for (size_t k = 0; k < 3 && plain; ++k)
    if (times[k]) plain = is_json_plain_ascii(*times[k]);
  record_.strings_json_plain = plain;
  out.emit(record_);
  ++stats_.records;
}

std::optional<std::string> resolve_sc_host(std::string_view node_list,
                                           const std::map<std::string, std::string, std::less<>>& hosts) {
  std::vector<std::string> nodes;
  try {
    nodes = slurm::expand_hostlist(node_list);
  } catch (const slurm::HostlistError&) {
    return std::nullopt;
  }
  if (nodes.size() != 1) return std::nullopt;
  auto it = hosts.find(nodes[0]);
  return it == hosts.end() ? std::nullopt : std::optional(it->second);
}

std::optional<std::string> resolve_sc_node_hosts(std::string_view node_list,
                                                 const std::map<std::string, std::string, std::less<>>& hosts) {
  std::vector<std::string> nodes;
  try {
    nodes = slurm::expand_hostlist(node_list);
  } catch (const slurm::HostlistError&) {
    return std::nullopt;
  }
  std::map<std::string, std::string> known;  // sorted keys, as json.dumps(sort_keys=True)
  for (const auto& n : nodes)
    if (auto it = hosts.find(n); it != hosts.end()) known[n] = it->second;
  if (known.empty()) return std::nullopt;
  auto quoted = [](const std::string& s) { return nlohmann::json(s).dump(-1, ' ', /*ensure_ascii=*/true); };
  std::string out = "{";
  for (const auto& [k, v] : known) {
    if (out.size() > 1) out += ", ";
    out += quoted(k) + ": " + quoted(v);
  }
  return out + "}";
}

std::string SacctPublisher::invalid_summary() const {
  if (stats_.invalid_lines == 0) return "";
  std::string s = fmt::format("skipped {} invalid line(s):", stats_.invalid_lines);
  for (size_t i = 0; i < stats_.invalid_line_numbers.size(); ++i)
    s += fmt::format("{} {} ({})", i ? "," : "", stats_.invalid_line_numbers[i], stats_.invalid_reasons[i]);
  if (stats_.invalid_lines > stats_.invalid_line_numbers.size())
    s += fmt::format(", and {} more", stats_.invalid_lines - stats_.invalid_line_numbers.size());
  return s;
}

}  // namespace gcm::sacct

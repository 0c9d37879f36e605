#include "agent/kmsg_record.h"

#include <limits>

namespace gcm::agent {

namespace {

// A field of the header: digits only, without overflow.
bool parse_u64(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

// The next ','-separated field of the header; advances `head` past it and its comma.
std::string_view next_field(std::string_view& head) {
  size_t comma = head.find(',');
  std::string_view f = head.substr(0, comma);
  head.remove_prefix(comma == std::string_view::npos ? head.size() : comma + 1);
  return f;
}

bool fail(std::string* error, std::string what) {
  if (error) *error = std::move(what);
  return false;
}

bool parse_header(std::string_view head, KmsgRecord& r, std::string* error) {
  uint64_t prio = 0;
  if (!parse_u64(next_field(head), &prio) || prio > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    return fail(error, "expected digits (the priority) before the first ','");
  r.facility = static_cast<int>(prio >> 3);
  r.level = static_cast<int>(prio & 7);
  if (head.empty()) return fail(error, "expected the sequence number after the priority");
  if (!parse_u64(next_field(head), &r.seq)) return fail(error, "expected digits (the sequence number) before ','");
  if (head.empty()) return fail(error, "expected the timestamp after the sequence number");
  if (!parse_u64(next_field(head), &r.ts_usec))
    return fail(error, "expected digits (the timestamp in microseconds) before ','");
  // The flag is the last mandatory field; later kernels may add more (",caller=T123"), which we ignore.
  std::string_view flag = next_field(head);
  if (flag.size() != 1) return fail(error, "expected one flag character ('-', 'c' or '+') after the timestamp");
  r.flag = flag[0];
  return true;
}

bool parse_dict(std::string_view rest, KmsgRecord& r, std::string* error) {
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    if (line.empty() || line[0] != ' ')
      return fail(error, "expected a dictionary line beginning with ' ' (\" KEY=value\") after the message");
    line.remove_prefix(1);
    size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) return fail(error, "expected KEY=value in a dictionary line");
    r.dict.push_back({line.substr(0, eq), line.substr(eq + 1)});
  }
  return true;
}

}  // namespace

std::optional<std::string_view> KmsgRecord::dict_value(std::string_view key) const {
  for (const auto& e : dict)
    if (e.key == key) return e.value;
  return std::nullopt;
}

std::optional<KmsgRecord> parse_kmsg_record(std::string_view text, std::string* error) {
  size_t semi = text.find(';');
  size_t nl = text.find('\n');
  if (semi == std::string_view::npos || (nl != std::string_view::npos && nl < semi)) {
    fail(error, "expected a header \"prio,seq,ts_usec,flag;\" ending in ';' on the record's first line");
    return std::nullopt;
  }
  KmsgRecord r;
  if (!parse_header(text.substr(0, semi), r, error)) return std::nullopt;
  std::string_view body = text.substr(semi + 1);
  size_t end = body.find('\n');
  r.message = body.substr(0, end);
  if (end != std::string_view::npos && !parse_dict(body.substr(end + 1), r, error)) return std::nullopt;
  return r;
}

}  // namespace gcm::agent

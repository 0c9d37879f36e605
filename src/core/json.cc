#include "core/json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/flatten.h"
#include "core/json_scan.h"

namespace gcm {

namespace {

const char kHex[] = "0123456789abcdef";

// Copies n bytes with fixed-size moves the compiler inlines (two overlapping ones per size class): the parts of a
// JSON member are ~10 bytes, and a call of the library's memcpy for each was a tenth of `sacct_publish --sink stdout`.
inline char* put_small(char* dst, const char* src, size_t n) {
  auto two = [&](auto word) {
    constexpr size_t w = sizeof word;
    decltype(word) head, tail;
    std::memcpy(&head, src, w);
    std::memcpy(&tail, src + n - w, w);
    std::memcpy(dst, &head, w);
    std::memcpy(dst + n - w, &tail, w);
  };
  if (n >= 16) {
    std::memcpy(dst, src, n);
  } else if (n >= 8) {
    two(uint64_t{});
  } else if (n >= 4) {
    two(uint32_t{});
  } else {
    for (size_t i = 0; i < n; ++i) dst[i] = src[i];
  }
  return dst + n;
}

// Decodes one UTF-8 sequence at s[i]; returns its length and code point, or 0 for an invalid sequence.
size_t decode_utf8(std::string_view s, size_t i, uint32_t& cp) {
  auto b0 = static_cast<unsigned char>(s[i]);
  size_t n = s.size() - i;
  auto cont = [&](size_t k) { return k < n && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80; };
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  if (b0 >= 0xC2 && b0 <= 0xDF && cont(1)) {
    cp = ((b0 & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu);
    return 2;
  }
  if (b0 >= 0xE0 && b0 <= 0xEF && cont(1) && cont(2)) {
    cp = ((b0 & 0x0Fu) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) |
         (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
    if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;  // overlong or surrogate
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4 && cont(1) && cont(2) && cont(3)) {
    cp = ((b0 & 0x07u) << 18) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 12) |
         ((static_cast<unsigned char>(s[i + 2]) & 0x3Fu) << 6) | (static_cast<unsigned char>(s[i + 3]) & 0x3Fu);
    if (cp < 0x10000 || cp > 0x10FFFF) return 0;
    return 4;
  }
  return 0;
}

void append_u_escape(std::string& out, uint32_t unit) {
  char buf[6] = {
      '\\', 'u', kHex[(unit >> 12) & 0xF], kHex[(unit >> 8) & 0xF], kHex[(unit >> 4) & 0xF], kHex[unit & 0xF]};
  out.append(buf, 6);
}

// The index of the first byte at or after i that is not plain printable ASCII (a control byte, '"', '\\' or a byte
// >= 0x80), or s.size(): the encoder's hot loop.
size_t plain_ascii_end(std::string_view s, size_t i) {
  return i + json_scan::first_special(s.data() + i, s.size() - i);
}

}  // namespace

bool is_json_plain_ascii(std::string_view s) { return plain_ascii_end(s, 0) == s.size(); }

bool is_valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    uint32_t cp;
    size_t len = decode_utf8(s, i, cp);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

size_t append_valid_utf8(std::string& out, std::string_view s) {
  size_t replaced = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t run = i;
    while (run < s.size() && static_cast<unsigned char>(s[run]) < 0x80) ++run;
    out.append(s.data() + i, run - i);
    i = run;
    if (i >= s.size()) break;
    uint32_t cp;
    size_t len = decode_utf8(s, i, cp);
    if (len == 0) {
      out.append("\xEF\xBF\xBD");
      ++replaced;
      ++i;
    } else {
      out.append(s.data() + i, len);
      i += len;
    }
  }
  return replaced;
}

bool JsonWriter::plain(std::string_view s) const {
  return known_plain_ || json_scan::first_special(s.data(), s.size()) == s.size();
}

void JsonWriter::string(std::string_view s) {
  size_t run = known_plain_ ? s.size() : json_scan::first_special(s.data(), s.size());
  if (run == s.size()) {  // nearly every string: quotes and bytes in one growth of the buffer
    size_t at = out_.size();
    out_.append(s.size() + 2, '"');
    if (!s.empty()) std::memcpy(out_.data() + at + 1, s.data(), s.size());
    return;
  }
  const bool ascii_only = style_ == JsonStyle::Python;
  out_.push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    // Copy the longest run that needs no escaping in one append (the first run is known).
    if (i > 0) run = plain_ascii_end(s, i);
    out_.append(s.data() + i, run - i);
    i = run;
    if (i >= s.size()) break;
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out_.append("\\\"");
          break;
        case '\\':
          out_.append("\\\\");
          break;
        case '\n':
          out_.append("\\n");
          break;
        case '\r':
          out_.append("\\r");
          break;
        case '\t':
          out_.append("\\t");
          break;
        case '\b':
          out_.append("\\b");
          break;
        case '\f':
          out_.append("\\f");
          break;
        default:
          append_u_escape(out_, c);
      }
      ++i;
      continue;
    }
    uint32_t cp;
    size_t len = decode_utf8(s, i, cp);
    if (len == 0) {
      cp = 0xFFFD;  // invalid byte: replaced, never emitted raw
      len = 1;
      if (!ascii_only) {
        out_.append("\xEF\xBF\xBD");
        i += len;
        continue;
      }
    } else if (!ascii_only) {
      out_.append(s.data() + i, len);
      i += len;
      continue;
    }
    if (cp >= 0x10000) {
      uint32_t v = cp - 0x10000;
      append_u_escape(out_, 0xD800 + (v >> 10));
      append_u_escape(out_, 0xDC00 + (v & 0x3FF));
    } else {
      append_u_escape(out_, cp);
    }
    i += len;
  }
  out_.push_back('"');
}

bool JsonWriter::plain_string_member(std::string_view key, std::string_view value, bool first) {
  // A sacct record is ~100 such members of ~25 bytes: five appends each (two of them fills of quotes, then copies
  // over them) were a third of `sacct_publish --sink stdout`. One append from the stack, same bytes.
  const std::string_view sep = first ? std::string_view() : comma(), col = colon();
  const size_t n = sep.size() + key.size() + col.size() + value.size() + 4;
  char buf[256];
  if (n > sizeof buf) return false;
  if (!plain(key) || !plain(value)) return false;
  char* p = buf;
  auto put = [&p](std::string_view part) { p = put_small(p, part.data(), part.size()); };
  put(sep);
  *p++ = '"';
  put(key);
  *p++ = '"';
  put(col);
  *p++ = '"';
  put(value);
  *p++ = '"';
  out_.append(buf, n);
  return true;
}

void JsonWriter::number(int64_t v) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, res.ptr);
}

std::string python_float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Shortest round-trip digits in scientific form, then laid out as Python's repr does: positional when
  // -4 <= exponent < 16, scientific otherwise ("1e-05", "1.5e+16").
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  bool neg = sci[0] == '-';
  if (neg) sci.remove_prefix(1);
  size_t e_pos = sci.find('e');
  std::string digits;
  digits.push_back(sci[0]);
  if (e_pos > 1) digits.append(sci.substr(2, e_pos - 2));  // skip "d."
  int exp = 0;
  std::from_chars(sci.data() + e_pos + 1 + (sci[e_pos + 1] == '+' ? 1 : 0), sci.data() + sci.size(), exp);
  std::string out = neg ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      if (digits.size() <= static_cast<size_t>(exp) + 1) {
        out += digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
      } else {
        out += digits.substr(0, static_cast<size_t>(exp) + 1) + "." + digits.substr(static_cast<size_t>(exp) + 1);
      }
    } else {
      out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char ebuf[8];
    int n = std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out.append(ebuf, static_cast<size_t>(n));
  }
  return out;
}

void JsonWriter::number(double d) {
  if (std::isnan(d)) {
    out_.append(style_ == JsonStyle::Python ? "NaN" : "null");
    return;
  }
  if (std::isinf(d)) {
    if (style_ == JsonStyle::Python)
      out_.append(d > 0 ? "Infinity" : "-Infinity");
    else
      out_.append("null");
    return;
  }
  out_.append(python_float_repr(d));
}

void JsonWriter::value(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Null:
      out_.append("null");
      break;
    case Value::Kind::Bool:
      out_.append(v.as_bool() ? "true" : "false");
      break;
    case Value::Kind::Int:
      number(v.as_int());
      break;
    case Value::Kind::Double:
      number(v.as_double());
      break;
    case Value::Kind::String:
      string(v.as_string());
      break;
    case Value::Kind::List: {
      out_.push_back('[');
      bool first = true;
      for (const auto& e : v.as_list()) {
        if (!first) out_.append(comma());
        first = false;
        value(e);
      }
      out_.push_back(']');
      break;
    }
    case Value::Kind::Object: {
      out_.push_back('{');
      bool first = true;
      for (const auto& m : v.as_object()) {
        if (m.value.kind() == Value::Kind::String && plain_string_member(m.key, m.value.as_string(), first)) {
          first = false;
          continue;
        }
        if (!first) out_.append(comma());
        first = false;
        string(m.key);
        out_.append(colon());
        value(m.value);
      }
      out_.push_back('}');
      break;
    }
  }
}

void JsonWriter::record(const Record& r, bool drop_nulls) {
  out_.push_back('{');
  bool first = true;
  for (size_t i = 0; i < r.values.size(); ++i) {
    if (drop_nulls && r.values[i].is_null()) continue;
    if (!first) out_.append(comma());
    first = false;
    string(r.schema->fields[i].name);  // the schema's names are not the record's strings: always scanned
    out_.append(colon());
    known_plain_ = r.strings_json_plain;
    value(r.values[i]);
    known_plain_ = false;
  }
  out_.push_back('}');
}

void JsonWriter::flat_record(const Record& r) {
  out_.push_back('{');
  bool first = true;
  flatten_record(r, [&](std::string_view key, const Value& v) {
    if (!first) out_.append(comma());
    first = false;
    string(key);
    out_.append(colon());
    value(v);
  });
  out_.push_back('}');
}

std::string to_json(const Value& v, JsonStyle style) {
  std::string out;
  JsonWriter(out, style).value(v);
  return out;
}

std::string to_json(const Record& r, bool drop_nulls, JsonStyle style) {
  std::string out;
  JsonWriter(out, style).record(r, drop_nulls);
  return out;
}

namespace {

size_t compact_string_size(std::string_view s) {
  size_t n = 2;
  size_t i = 0;
  while (i < s.size()) {
    size_t run = plain_ascii_end(s, i);
    n += run - i;
    i = run;
    if (i >= s.size()) break;
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++n;
      ++i;
    } else if (c < 0x80) {
      n += (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f') ? 2 : 6;
      ++i;
    } else {
      uint32_t cp;
      size_t len = decode_utf8(s, i, cp);
      if (len == 0) {
        n += 3;
        ++i;
      } else {
        n += len;
        i += len;
      }
    }
  }
  return n;
}

size_t compact_value_size(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Null:
      return 4;
    case Value::Kind::Bool:
      return v.as_bool() ? 4 : 5;
    case Value::Kind::Int: {
      char buf[24];
      return static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v.as_int()).ptr - buf);
    }
    case Value::Kind::Double: {
      double d = v.as_double();
      if (!std::isfinite(d)) return 4;
      return python_float_repr(d).size();
    }
    case Value::Kind::String:
      return compact_string_size(v.as_string());
    case Value::Kind::List: {
      size_t n = 2;
      const auto& l = v.as_list();
      for (size_t i = 0; i < l.size(); ++i) n += compact_value_size(l[i]) + (i ? 1 : 0);
      return n;
    }
    case Value::Kind::Object: {
      size_t n = 2;
      const auto& o = v.as_object();
      for (size_t i = 0; i < o.size(); ++i)
        n += compact_string_size(o[i].key) + 1 + compact_value_size(o[i].value) + (i ? 1 : 0);
      return n;
    }
  }
  return 0;
}

}  // namespace

size_t compact_json_size(const Record& r) {
  size_t n = 2;
  for (size_t i = 0; i < r.values.size(); ++i) {
    n += compact_string_size(r.schema->fields[i].name) + 1 + compact_value_size(r.values[i]) + (i ? 1 : 0);
  }
  return n;
}

}  // namespace gcm

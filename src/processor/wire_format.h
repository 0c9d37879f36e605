// The protobuf wire format at the level the wire rewriter needs: reading one field (tag and value) with every bound
// checked, and writing varints. Stricter than protobuf's parser where strictness is cheap: groups, tags over five
// bytes and varints whose tenth byte carries more than the 64th bit are refused (WireReject), and the caller falls
// back to the message path, which has the final word on whether such a body is valid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace gcm::processor::wire {

// Thrown for bodies the wire path does not take (malformed, or valid but outside what it handles).
struct WireReject {
  const char* why;
};

[[noreturn]] inline void reject(const char* why) { throw WireReject{why}; }

enum WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

struct Field {
  const char* begin = nullptr;  // the tag's first byte
  const char* end = nullptr;    // one past the value
  uint32_t number = 0;
  uint8_t type = 0;
  uint64_t varint = 0;     // kVarint
  std::string_view bytes;  // kLen: the content; kFixed64/kFixed32: the raw bytes
};

inline const char* read_varint(const char* p, const char* end, uint64_t& v, int max_bytes) {
  uint64_t result = 0;
  for (int i = 0; i < max_bytes; ++i) {
    if (p == end) reject("truncated varint");
    uint8_t b = static_cast<uint8_t>(*p++);
    if (i == 9 && b > 1) reject("varint over 64 bits");
    result |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if (b < 0x80) {
      v = result;
      return p;
    }
  }
  reject("varint too long");
}

// The field at p (p < end); returns one past it.
inline const char* read_field(const char* p, const char* end, Field& f) {
  f.begin = p;
  uint64_t tag;
  if (static_cast<uint8_t>(*p) < 0x80) {  // one-byte tags are nearly all of them
    tag = static_cast<uint8_t>(*p++);
  } else {
    p = read_varint(p, end, tag, 5);
    if (tag > UINT32_MAX) reject("tag over 32 bits");
  }
  f.number = static_cast<uint32_t>(tag >> 3);
  f.type = static_cast<uint8_t>(tag & 7);
  if (f.number == 0) reject("field number 0");
  switch (f.type) {
    case kVarint:
      p = read_varint(p, end, f.varint, 10);
      break;
    case kFixed64:
      if (end - p < 8) reject("truncated fixed64");
      f.bytes = {p, 8};
      p += 8;
      break;
    case kFixed32:
      if (end - p < 4) reject("truncated fixed32");
      f.bytes = {p, 4};
      p += 4;
      break;
    case kLen: {
      uint64_t n;
      if (p != end && static_cast<uint8_t>(*p) < 0x80) {
        n = static_cast<uint8_t>(*p++);
      } else {
        p = read_varint(p, end, n, 5);
      }
      if (n > static_cast<uint64_t>(end - p)) reject("length past the end");
      f.bytes = {p, static_cast<size_t>(n)};
      p += n;
      break;
    }
    case 3:
    case 4:
      reject("group");  // valid protobuf (unknown groups are kept), not taken here
    default:
      reject("invalid wire type");
  }
  f.end = p;
  return p;
}

// memcpy that returns the end, and takes empty ranges of null pointers (an empty string_view's data may be null,
// which memcpy itself does not allow even for zero bytes).
inline char* copy_bytes(char* out, const char* src, size_t n) {
  if (n) std::memcpy(out, src, n);
  return out + n;
}

constexpr size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline char* write_varint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

constexpr uint32_t len_tag(uint32_t number) { return number << 3 | kLen; }

// Size of a length-delimited field (tag, length, content).
constexpr size_t len_field_size(uint32_t number, size_t content) {
  return varint_size(len_tag(number)) + varint_size(content) + content;
}

}  // namespace gcm::processor::wire

#include "otlp/spool_format.h"

#include <zlib.h>

namespace gcm::otlp {

namespace {

constexpr size_t kCrcCovered = kFrameHeaderBytes - 4;  // the header up to the CRC field

// Little-endian on disk whatever the host, so a spool is readable after a move between hosts.
void put(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t get(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return v;
}

uLong crc_add(uLong c, std::string_view bytes) {
  // zlib's crc32 takes uInt lengths; payloads are bounded by max_bytes, but feed large ones in pieces anyway.
  for (size_t at = 0; at < bytes.size(); at += 1u << 30) {
    std::string_view piece = bytes.substr(at, 1u << 30);
    c = crc32(c, reinterpret_cast<const Bytef*>(piece.data()), static_cast<uInt>(piece.size()));
  }
  return c;
}

uint32_t crc_of(std::string_view covered_header, std::span<const std::string_view> payload) {
  uLong c = crc_add(crc32(0L, Z_NULL, 0), covered_header);
  for (std::string_view part : payload) c = crc_add(c, part);
  return static_cast<uint32_t>(c);
}

}  // namespace

std::string encode_frame_header(const FrameHeader& h, std::span<const std::string_view> payload) {
  size_t length = 0;
  for (std::string_view part : payload) length += part.size();
  std::string out;
  out.reserve(kFrameHeaderBytes);
  put(out, kFrameMagic, 4);
  put(out, length, 4);
  put(out, h.kind, 1);
  put(out, h.points, 8);
  put(out, h.seq, 8);
  put(out, static_cast<uint64_t>(h.appended_unix_ms), 8);
  put(out, crc_of(out, payload), 4);
  return out;
}

std::string encode_frame(const FrameHeader& h, std::string_view payload) {
  std::string out = encode_frame_header(h, {&payload, 1});
  out.append(payload);
  return out;
}

std::optional<FrameHeader> decode_frame_header(std::string_view bytes, uint64_t max_payload) {
  if (bytes.size() < kFrameHeaderBytes || get(bytes, 0, 4) != kFrameMagic) return std::nullopt;
  FrameHeader h;
  h.length = static_cast<uint32_t>(get(bytes, 4, 4));
  if (h.length > max_payload) return std::nullopt;
  h.kind = static_cast<uint8_t>(get(bytes, 8, 1));
  h.points = get(bytes, 9, 8);
  h.seq = get(bytes, 17, 8);
  h.appended_unix_ms = static_cast<int64_t>(get(bytes, 25, 8));
  h.crc = static_cast<uint32_t>(get(bytes, 33, 4));
  return h;
}

bool frame_crc_ok(const FrameHeader& h, std::string_view header_bytes, std::string_view payload) {
  return header_bytes.size() >= kCrcCovered && crc_of(header_bytes.substr(0, kCrcCovered), {&payload, 1}) == h.crc;
}

}  // namespace gcm::otlp

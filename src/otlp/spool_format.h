// How one spool entry is framed in a segment file: a fixed header (magic, payload length, kind, points, seq, append
// time) and a CRC32 (zlib) over the header and the payload, then the payload. A frame whose magic, length or CRC
// does not hold is where a segment stops: a write torn by a crash, or a damaged disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gcm::otlp {

inline constexpr size_t kFrameHeaderBytes = 37;
inline constexpr uint32_t kFrameMagic = 0x31505347;  // "GSP1" little-endian

struct FrameHeader {
  uint32_t length = 0;  // payload bytes
  uint8_t kind = 0;
  uint64_t points = 0;
  uint64_t seq = 0;
  int64_t appended_unix_ms = 0;
  uint32_t crc = 0;  // over the first 33 header bytes and the payload
};

// The header of a frame whose payload is `payload`'s pieces one after the other (h.length and h.crc are computed).
std::string encode_frame_header(const FrameHeader& h, std::span<const std::string_view> payload);
// Header and payload, ready to append.
std::string encode_frame(const FrameHeader& h, std::string_view payload);
// The header in `bytes` (at least kFrameHeaderBytes), or nullopt when its magic is wrong or its length exceeds
// max_payload. The CRC is checked separately, once the payload is read.
std::optional<FrameHeader> decode_frame_header(std::string_view bytes, uint64_t max_payload);
bool frame_crc_ok(const FrameHeader& h, std::string_view header_bytes, std::string_view payload);

}  // namespace gcm::otlp

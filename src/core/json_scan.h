// Which bytes a JSON string must escape: control bytes (< 0x20), '"', '\\', and bytes >= 0x80 (checked as UTF-8 by
// the slow path). The one definition behind the encoder's fast path (core/json.cc) and the sacct splitter's "does
// this line need escaping" (sacct/publish.cc), which scan 16 bytes a step with SSE2 (part of every x86-64) and in
// 8- or 4-byte words elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gcm::json_scan {

inline bool is_special(unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c >= 0x80; }

#if defined(__SSE2__)
// 0xff in each lane that needs escaping. Signed compare: bytes >= 0x80 are negative, so "< 0x20" takes them with
// the control bytes.
inline __m128i special_lanes(__m128i v) {
  return _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
}
inline unsigned special_mask(const char* p) {  // bit k: p[k] needs escaping
  return static_cast<unsigned>(_mm_movemask_epi8(special_lanes(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))));
}
#endif

// The high bit of each byte of w that needs escaping, in 8 or 4 bytes. A byte above a flagged one may be flagged too
// (a borrow), but only above a byte that really needs escaping: a word without one is never flagged, and the lowest
// flagged byte is always a true one, so "none" and "the first" are exact.
template <typename Word>
Word special_word(Word w) {
  constexpr Word kOnes = static_cast<Word>(0x0101010101010101ull), kHigh = static_cast<Word>(0x8080808080808080ull);
  auto has_zero = [](Word v) { return static_cast<Word>((v - kOnes) & ~v & kHigh); };
  return static_cast<Word>((w & kHigh) | ((w - kOnes * 0x20) & ~w & kHigh) | has_zero(w ^ (kOnes * '"')) |
                           has_zero(w ^ (kOnes * '\\')));
}

template <typename Word>
Word load(const char* p) {
  Word w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// The index of the first of the n bytes at p that needs escaping, or n. Records hold mostly short plain strings
// (sacct's fields average ~10 bytes), so a short answer comes from two overlapping loads instead of a loop over the
// bytes; the bytes an overlapping load sees twice were found plain by the first, so its lowest flag is the first.
// Nothing is read outside [p, p + n). (Words are little-endian here, as on every machine the project builds on.)
inline size_t first_special(const char* p, size_t n) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the word scan takes the lowest byte as the first");
  if (n >= 16) {
#if defined(__SSE2__)
    size_t at = 0;
    for (; at + 16 <= n; at += 16)
      if (unsigned m = special_mask(p + at)) return at + static_cast<size_t>(__builtin_ctz(m));
    if (at == n) return n;
    unsigned m = special_mask(p + n - 16);
    return m ? n - 16 + static_cast<size_t>(__builtin_ctz(m)) : n;
#else
    size_t at = 0;
    for (; at + 8 <= n; at += 8)
      if (uint64_t w = special_word(load<uint64_t>(p + at))) return at + static_cast<size_t>(__builtin_ctzll(w)) / 8;
    if (at == n) return n;
    uint64_t w = special_word(load<uint64_t>(p + n - 8));
    return w ? n - 8 + static_cast<size_t>(__builtin_ctzll(w)) / 8 : n;
#endif
  }
  if (n >= 8) {
    if (uint64_t w = special_word(load<uint64_t>(p))) return static_cast<size_t>(__builtin_ctzll(w)) / 8;
    uint64_t w = special_word(load<uint64_t>(p + n - 8));
    return w ? n - 8 + static_cast<size_t>(__builtin_ctzll(w)) / 8 : n;
  }
  if (n >= 4) {
    if (uint32_t w = special_word(load<uint32_t>(p))) return static_cast<size_t>(__builtin_ctz(w)) / 8;
    uint32_t w = special_word(load<uint32_t>(p + n - 4));
    return w ? n - 4 + static_cast<size_t>(__builtin_ctz(w)) / 8 : n;
  }
  for (size_t k = 0; k < n; ++k)
    if (is_special(static_cast<unsigned char>(p[k]))) return k;
  return n;
}

}  // namespace gcm::json_scan

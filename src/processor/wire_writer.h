// The output of the wire rewriter. Enrichment changes the sizes of the messages that contain enriched items, and a
// length prefix comes before its content: a message whose size is not known when it starts (a metric, a scope, a
// resource) gets five bytes reserved for its length, filled when it ends; finish() then closes the gaps the shorter
// varints leave in one pass over the buffer (each byte moves once, however deep the nesting). Items, whose sizes are
// computed before they are written, get exact prefixes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "processor/wire_format.h"

namespace gcm::processor::wire {

class Writer {
 public:
  // expected: the output size to allocate at first (growing costs a copy and a zero-fill of the new part). What buf
  // holds already is overwritten, not cleared first: a recycled buffer's bytes need no zero-fill again.
  // limit: the most the output may take (0: no bound); growing past it throws EnrichedTooLarge.
  // fresh_room: the capacity to give a new buffer when buf is too small for expected (at least a quarter over it).
  Writer(std::string& buf, size_t expected, size_t limit = 0, size_t fresh_room = 0) : buf_(buf), limit_(limit) {
    if (limit_ && expected > limit_) expected = limit_;
    if (buf_.capacity() < expected) {
      // A new allocation either way: what the buffer holds is not copied over (it would be overwritten). The room
      // asked for lets the requests to come take the buffer as it is: it is recycled to whichever request comes next
      // on some receiving thread, so a buffer made for a small request would be too small for a larger exporter's.
      std::string().swap(buf_);
      size_t room = std::max(expected + expected / 4, fresh_room);
      buf_.reserve(limit_ ? std::min(room, limit_) : room);  // expected is within the limit already
    }
    if (buf_.size() < expected) buf_.resize(expected);
    end_ = usable();
  }

  // Room for n more bytes at the write position (advance() past what was written there).
  char* room(size_t n) {
    if (n > end_ - pos_) grow(n);
    return buf_.data() + pos_;
  }
  void advance(size_t n) { pos_ += n; }
  void append(std::string_view s) {
    copy_bytes(room(s.size()), s.data(), s.size());
    pos_ += s.size();
  }
  void varint(uint64_t v) { pos_ = static_cast<size_t>(write_varint(room(10), v) - buf_.data()); }
  void len_prefix(uint32_t number, size_t content) {
    char* p = write_varint(room(20), len_tag(number));
    pos_ = static_cast<size_t>(write_varint(p, content) - buf_.data());
  }
  void len_field(uint32_t number, std::string_view content) {
    len_prefix(number, content.size());
    append(content);
  }

  // A length-delimited field whose content follows until close().
  void open(uint32_t number);
  void close();

  // Fills the reserved prefixes and closes their gaps; the buffer then holds exactly the output.
  void finish();

 private:
  static constexpr size_t kReserved = 5;  // a varint of up to 2^35 - 1
  struct Frame {
    size_t patch;   // index in patches_
    size_t start;   // content start in buf_
    size_t shrink;  // bytes the reserved prefixes inside this content will lose in finish()
  };
  struct Patch {
    size_t at;        // the reserved bytes
    uint64_t length;  // the content's final length
  };
  void grow(size_t n);
  // Where writing must stop: the buffer's end, or the limit where the buffer (a recycled one) is larger.
  size_t usable() const { return limit_ ? std::min(buf_.size(), limit_) : buf_.size(); }

  std::string& buf_;
  size_t limit_;
  size_t end_ = 0;
  size_t pos_ = 0;
  std::vector<Frame> frames_;
  std::vector<Patch> patches_;  // in buffer order: frames open in order
  size_t shrink_ = 0;           // the whole buffer's
};

}  // namespace gcm::processor::wire

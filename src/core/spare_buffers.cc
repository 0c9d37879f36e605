#include "core/spare_buffers.h"

namespace gcm {

void SpareBuffers::keep(std::string&& buffer) {
  // A string's own inline room (no allocation behind it) is no buffer to keep.
  static const size_t kInline = std::string().capacity();
  if (buffer.capacity() <= kInline || bytes_ + buffer.capacity() > max_bytes_) return;
  bytes_ += buffer.capacity();
  buffers_.push_back(std::move(buffer));
}

std::string SpareBuffers::take(size_t size) {
  for (size_t i = buffers_.size(); i-- > 0;) {  // the most recent first: its pages are the likeliest cached
    if (buffers_[i].capacity() < size) continue;
    std::string b = std::move(buffers_[i]);
    buffers_[i] = std::move(buffers_.back());
    buffers_.pop_back();
    bytes_ -= b.capacity();
    if (b.size() > size) b.resize(size);
    return b;
  }
  std::string b;
  b.reserve(size);
  return b;
}

}  // namespace gcm

#include "processor/wire_writer.h"

#include <fmt/format.h>

#include "processor/enrich.h"

namespace gcm::processor::wire {

void Writer::grow(size_t n) {
  if (limit_ && pos_ + n > limit_)
    throw EnrichedTooLarge(fmt::format("the enriched request would take more than {} bytes", limit_));
  // resize() zero-fills, so grow geometrically to keep that cost linear (and no further than the limit).
  size_t size = std::max(buf_.size() * 2, pos_ + n + 4096);
  if (size > buf_.size()) buf_.resize(limit_ ? std::max(std::min(size, limit_), buf_.size()) : size);
  end_ = usable();
}

void Writer::open(uint32_t number) {
  char* p = write_varint(room(10 + kReserved), len_tag(number));
  pos_ = static_cast<size_t>(p - buf_.data());
  patches_.push_back({pos_, 0});
  pos_ += kReserved;
  frames_.push_back({patches_.size() - 1, pos_, 0});
}

void Writer::close() {
  Frame f = frames_.back();
  frames_.pop_back();
  uint64_t length = pos_ - f.start - f.shrink;
  if (length > UINT32_MAX) reject("message over 4 GiB");
  patches_[f.patch].length = length;
  size_t shrink = f.shrink + kReserved - varint_size(length);
  (frames_.empty() ? shrink_ : frames_.back().shrink) += shrink;
}

void Writer::finish() {
  char* b = buf_.data();
  size_t w = patches_.empty() ? pos_ : patches_.front().at;  // bytes before the first patch stay where they are
  size_t r = w;
  for (const Patch& p : patches_) {
    std::memmove(b + w, b + r, p.at - r);
    w += p.at - r;
    w = static_cast<size_t>(write_varint(b + w, p.length) - b);
    r = p.at + kReserved;
  }
  std::memmove(b + w, b + r, pos_ - r);
  w += pos_ - r;
  buf_.resize(w);
  patches_.clear();
}

}  // namespace gcm::processor::wire

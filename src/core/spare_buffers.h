// Buffers of bodies already answered, kept for the bodies to come: a body received into a new buffer costs its
// allocation and the zero-fill of every byte before recv writes it, while a buffer of a body before holds bytes
// already and is written over. Bounded by the bytes they hold. One thread's (the HTTP listener's I/O thread): not
// locked.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gcm {

class SpareBuffers {
 public:
  explicit SpareBuffers(size_t max_bytes) : max_bytes_(max_bytes) {}

  // Keeps `buffer` when there is room for its capacity; drops it otherwise.
  void keep(std::string&& buffer);
  // A kept buffer with room for `size` bytes, holding at most `size` of its old bytes (to be written over), else a
  // new one with the room reserved.
  std::string take(size_t size);

  size_t bytes() const { return bytes_; }
  size_t count() const { return buffers_.size(); }

 private:
  std::vector<std::string> buffers_;
  size_t bytes_ = 0;
  size_t max_bytes_;
};

}  // namespace gcm

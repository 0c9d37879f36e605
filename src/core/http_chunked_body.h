// A request body in the chunked transfer coding (RFC 9112 §7.1), decoded as its bytes arrive: the HTTP listener's
// decoder, apart from its sockets so that each framing rule has a test of its own. The listener's I/O thread owns
// one per connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace gcm {

class ChunkedBodyDecoder {
 public:
  // Asked before a chunk's bytes are taken, so that the caller can bound the body and its memory.
  enum class ChunkVerdict { Take, TooLarge, OverBudget };
  using ChunkCheck = std::function<ChunkVerdict(uint64_t chunk_size)>;

  struct Result {
    enum Kind { NeedMore, Complete, Bad, TooLarge, OverBudget } kind = NeedMore;
    int status = 0;       // for Bad: 400, or 431 for trailer fields too large
    std::string message;  // for Bad: what was wrong, for the answer's body
  };

  static constexpr size_t kMaxChunkLine = 4096;  // a chunk-size line with its extensions

  // max_trailers bounds the trailer section (the listener's max_head).
  explicit ChunkedBodyDecoder(size_t max_trailers = 0) : max_trailers_(max_trailers) {}

  // Consumes what it can of `in` into `body`; trailer fields are read and ignored. Once it returned anything but
  // NeedMore, reset() before the next body.
  Result feed(std::string& in, std::string& body, const ChunkCheck& check);
  void reset(size_t max_trailers);

 private:
  enum class Step { Size, Data, DataEnd, Trailers };
  Step step_ = Step::Size;
  uint64_t remaining_ = 0;  // of the current chunk
  size_t trailer_bytes_ = 0;
  size_t max_trailers_;
};

}  // namespace gcm

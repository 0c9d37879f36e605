#include "core/http_chunked_body.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/ascii.h"
#include "core/http_request_head.h"

namespace gcm {

namespace {

ChunkedBodyDecoder::Result bad(int status, std::string message) {
  return {ChunkedBodyDecoder::Result::Bad, status, std::move(message)};
}

}  // namespace

void ChunkedBodyDecoder::reset(size_t max_trailers) {
  max_trailers_ = max_trailers;
  step_ = Step::Size;
  remaining_ = 0;
  trailer_bytes_ = 0;
}

ChunkedBodyDecoder::Result ChunkedBodyDecoder::feed(std::string& in, std::string& body, const ChunkCheck& check) {
  for (;;) {
    switch (step_) {
      case Step::Size: {
        size_t eol = in.find("\r\n");
        if (eol == std::string::npos) {
          if (in.size() > kMaxChunkLine)
            return bad(400, fmt::format("a chunk-size line is longer than {} bytes", kMaxChunkLine));
          return {};
        }
        auto size = parse_chunk_size(std::string_view(in).substr(0, eol));
        if (!size) return bad(400, fmt::format("unreadable chunk size '{}'", ascii_shown(in.substr(0, eol))));
        in.erase(0, eol + 2);
        if (*size == 0) {
          step_ = Step::Trailers;
          break;
        }
        switch (check(*size)) {
          case ChunkVerdict::TooLarge:
            return {Result::TooLarge, 0, ""};
          case ChunkVerdict::OverBudget:
            return {Result::OverBudget, 0, ""};
          case ChunkVerdict::Take:
            break;
        }
        remaining_ = *size;
        step_ = Step::Data;
        break;
      }
      case Step::Data: {
        size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, in.size()));
        body.append(in, 0, take);
        in.erase(0, take);
        remaining_ -= take;
        if (remaining_ > 0) return {};
        step_ = Step::DataEnd;
        break;
      }
      case Step::DataEnd:
        if (in.size() < 2) return {};
        if (in.compare(0, 2, "\r\n") != 0) return bad(400, "a chunk is longer than its size (no CRLF after its bytes)");
        in.erase(0, 2);
        step_ = Step::Size;
        break;
      case Step::Trailers: {
        size_t eol = in.find("\r\n");
        if (eol == std::string::npos) {
          if (trailer_bytes_ + in.size() > max_trailers_) return bad(431, "the trailer fields are too large");
          return {};
        }
        trailer_bytes_ += eol + 2;
        if (trailer_bytes_ > max_trailers_) return bad(431, "the trailer fields are too large");
        in.erase(0, eol + 2);
        if (eol == 0) return {Result::Complete, 0, ""};  // the blank line that ends the message
        break;
      }
    }
  }
}

}  // namespace gcm

#include "core/http_response_reader.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/ascii.h"

namespace gcm {

namespace {

std::string_view trimmed(std::string_view s) { return ascii_trim(s, " \t"); }  // optional whitespace (RFC 9110)

// Whether a comma-separated header value (Connection, Transfer-Encoding) has `token`, without regard to case.
bool has_token(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    if (ascii_lower(trimmed(value.substr(0, comma))) == token) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

// The last coding of a Transfer-Encoding value ("gzip, chunked" -> "chunked").
std::string last_coding(std::string_view value) {
  size_t comma = value.rfind(',');
  std::string_view last = comma == std::string_view::npos ? value : value.substr(comma + 1);
  last = last.substr(0, last.find(';'));
  return ascii_lower(trimmed(last));
}

std::string shown(std::string_view line) { return ascii_shown(line); }

}  // namespace

bool HttpResponseReader::parse_head(std::string_view head) {
  size_t eol = head.find("\r\n");
  std::string_view status_line = head.substr(0, eol);
  // "HTTP/1.x NNN reason": the reason may be empty, and so may the space before it.
  bool valid = status_line.size() >= 12 && status_line.substr(0, 7) == "HTTP/1." && is_ascii_digit(status_line[7]) &&
               status_line[8] == ' ' && is_ascii_digit(status_line[9]) && is_ascii_digit(status_line[10]) &&
               is_ascii_digit(status_line[11]) && (status_line.size() == 12 || status_line[12] == ' ');
  if (!valid) throw HttpTransportError(fmt::format("the answer is not HTTP/1.x: '{}'", shown(status_line)));
  bool http10 = status_line[7] == '0';
  long status = (status_line[9] - '0') * 100 + (status_line[10] - '0') * 10 + (status_line[11] - '0');
  if (status < 100) throw HttpTransportError(fmt::format("the answer has no valid status: '{}'", shown(status_line)));

  response_.status = status;
  response_.headers.clear();  // an interim answer's fields are not the final answer's
  std::string_view rest = eol == std::string_view::npos ? std::string_view() : head.substr(eol + 2);
  while (!rest.empty()) {
    size_t end = rest.find("\r\n");
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 2);
    size_t colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos || line.front() == ' ' || line.front() == '\t')
      throw HttpTransportError(fmt::format("the answer has a malformed header line: '{}'", shown(line)));
    response_.headers[ascii_lower(line.substr(0, colon))] = std::string(trimmed(line.substr(colon + 1)));
  }

  if (status < 200) {
    if (status == 101) throw HttpTransportError("the server switched protocols (HTTP 101), which was not asked for");
    return false;  // 100 Continue, 102, 103: the final answer follows
  }
  std::string connection = response_.header("connection");
  keep_alive_ = http10 ? has_token(connection, "keep-alive") : !has_token(connection, "close");
  std::string transfer_encoding = response_.header("transfer-encoding");
  std::string content_length = response_.header("content-length");
  if (status == 204 || status == 304) {
    state_ = State::Done;
  } else if (!transfer_encoding.empty()) {
    // Chunked as the last coding frames the body; any other coding leaves it to the end of the connection.
    if (last_coding(transfer_encoding) == "chunked") {
      state_ = State::Chunked;
      chunked_.reset(kMaxHead);
    } else {
      state_ = State::UntilClose;
      keep_alive_ = false;
    }
  } else if (response_.headers.count("content-length")) {
    uint64_t n = 0;
    bool digits = !content_length.empty() && content_length.size() <= 18;
    for (char c : content_length) {
      digits = digits && is_ascii_digit(c);
      n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    if (!digits)
      throw HttpTransportError(fmt::format("the answer's Content-Length is not a number: '{}'", shown(content_length)));
    if (max_body_ && n > max_body_)
      throw HttpTransportError(fmt::format("the response is larger than {} bytes", max_body_));
    left_ = n;
    state_ = n ? State::Body : State::Done;
  } else {
    state_ = State::UntilClose;
    keep_alive_ = false;
  }
  return true;
}

void HttpResponseReader::add_body(std::string_view bytes) {
  if (max_body_ && response_.body.size() + bytes.size() > max_body_)
    throw HttpTransportError(fmt::format("the response is larger than {} bytes", max_body_));
  response_.body.append(bytes);
}

bool HttpResponseReader::take_counted(std::string_view& bytes) {
  size_t take = static_cast<size_t>(std::min<uint64_t>(left_, bytes.size()));
  add_body(bytes.substr(0, take));
  bytes.remove_prefix(take);
  left_ -= take;
  return left_ == 0;
}

bool HttpResponseReader::feed(std::string_view bytes) {
  if (!bytes.empty()) started_ = true;
  while (!bytes.empty() && state_ != State::Done) {
    switch (state_) {
      case State::Head: {
        // The blank line that ends a head may come split over any number of reads.
        size_t before = pending_.size();
        size_t take = std::min(bytes.size(), kMaxHead + 4 - std::min(before, kMaxHead + 4));
        pending_.append(bytes.substr(0, take));
        size_t end = pending_.find("\r\n\r\n", before < 3 ? 0 : before - 3);
        if (end == std::string::npos) {
          if (pending_.size() >= kMaxHead + 4)
            throw HttpTransportError(fmt::format("the answer's head is larger than {} bytes", kMaxHead));
          bytes.remove_prefix(take);
          break;
        }
        bytes.remove_prefix(end + 4 - before);
        std::string head = std::move(pending_);
        pending_.clear();
        head.resize(end);
        if (!parse_head(head)) state_ = State::Head;
        break;
      }
      case State::Body:
        if (take_counted(bytes)) state_ = State::Done;
        break;
      case State::UntilClose:
        add_body(bytes);
        bytes = {};
        break;
      case State::Chunked: {
        pending_.append(bytes);
        bytes = {};
        auto r = chunked_.feed(pending_, response_.body, [&](uint64_t size) {
          // Compared without adding, so that no size can wrap the check.
          bool over = max_body_ && (size > max_body_ || response_.body.size() > max_body_ - size);
          return over ? ChunkedBodyDecoder::ChunkVerdict::TooLarge : ChunkedBodyDecoder::ChunkVerdict::Take;
        });
        switch (r.kind) {
          case ChunkedBodyDecoder::Result::NeedMore:
            break;
          case ChunkedBodyDecoder::Result::Complete:
            state_ = State::Done;  // trailer fields are not kept
            if (!pending_.empty()) extra_bytes_ = true;
            pending_.clear();
            break;
          case ChunkedBodyDecoder::Result::TooLarge:
          case ChunkedBodyDecoder::Result::OverBudget:
            throw HttpTransportError(fmt::format("the response is larger than {} bytes", max_body_));
          case ChunkedBodyDecoder::Result::Bad:
            throw HttpTransportError("the answer's chunked body: " + r.message);
        }
        break;
      }
      case State::Done:
        break;
    }
  }
  if (state_ == State::Done && !bytes.empty()) extra_bytes_ = true;
  return state_ == State::Done;
}

void HttpResponseReader::end_of_stream() {
  keep_alive_ = false;
  if (state_ == State::UntilClose) state_ = State::Done;
  if (state_ == State::Done) return;
  if (!started_) throw HttpTransportError("the server closed the connection without an answer");
  if (state_ == State::Head) throw HttpTransportError("the server closed the connection in the middle of its head");
  throw HttpTransportError(
      fmt::format("the server closed the connection {} bytes into the body of its answer", response_.body.size()));
}

}  // namespace gcm

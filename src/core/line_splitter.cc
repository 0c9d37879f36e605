#include "core/line_splitter.h"

namespace gcm {

void LineSplitter::append(std::string_view part) {
  pending_size_ += part.size();
  if (pending_size_ > max_line_) {
    pending_.clear();  // drop what was kept: the line will not be delivered
    pending_.shrink_to_fit();
    return;
  }
  pending_.append(part);
}

void LineSplitter::end_line(const LineFn& on_line, const LongLineFn& on_long) {
  ++lines_;
  if (pending_size_ > max_line_) {
    ++long_lines_;
    if (on_long) on_long(lines_, pending_size_);
  } else {
    on_line(pending_);
  }
  pending_.clear();
  pending_size_ = 0;
}

void LineSplitter::feed(std::string_view chunk, const LineFn& on_line, const LongLineFn& on_long) {
  while (!chunk.empty()) {
    size_t nl = chunk.find('\n');
    if (nl == std::string_view::npos) {
      append(chunk);
      return;
    }
    if (pending_size_ == 0 && nl <= max_line_) {
      ++lines_;
      on_line(chunk.substr(0, nl));  // the common case: a whole line inside the chunk, no copy
    } else {
      append(chunk.substr(0, nl));
      end_line(on_line, on_long);
    }
    chunk.remove_prefix(nl + 1);
  }
}

void LineSplitter::finish(const LineFn& on_line, const LongLineFn& on_long) {
  if (pending_size_ > 0) end_line(on_line, on_long);
}

}  // namespace gcm

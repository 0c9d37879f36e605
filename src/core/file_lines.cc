#include "core/file_lines.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace gcm {

size_t for_each_file_line(const std::string& path, const std::function<void(std::string_view)>& on_line) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw FileReadError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  std::string carry;  // the unfinished last line of the previous block
  std::string block(1 << 16, '\0');
  size_t lines = 0;
  for (;;) {
    ssize_t n = ::read(fd, block.data(), block.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      throw FileReadError(fmt::format("cannot read {}: {}", path, std::strerror(e)));
    }
    if (n == 0) break;
    std::string_view data(block.data(), static_cast<size_t>(n));
    while (!data.empty()) {
      size_t nl = data.find('\n');
      if (nl == std::string_view::npos) {
        carry.append(data);
        break;
      }
      if (carry.empty()) {
        on_line(data.substr(0, nl));
      } else {
        carry.append(data.substr(0, nl));
        on_line(carry);
        carry.clear();
      }
      ++lines;
      data.remove_prefix(nl + 1);
    }
  }
  ::close(fd);
  if (!carry.empty()) {
    on_line(carry);
    ++lines;
  }
  return lines;
}

}  // namespace gcm

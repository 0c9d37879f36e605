#include "attribution/process_environ.h"

#include <fcntl.h>
#include <unistd.h>

namespace gcm {

Environ parse_environ(std::string_view raw) {
  Environ env;
  size_t i = 0;
  while (i < raw.size()) {
    size_t end = raw.find('\0', i);
    if (end == std::string_view::npos) end = raw.size();
    std::string_view entry = raw.substr(i, end - i);
    if (size_t eq = entry.find('='); eq != std::string_view::npos && eq > 0)
      env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
    i = end + 1;
  }
  return env;
}

std::optional<Environ> read_process_environ(const std::string& procfs, uint32_t pid) {
  std::string path = procfs + "/" + std::to_string(pid) + "/environ";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string raw;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    raw.append(buf, static_cast<size_t>(n));
    if (raw.size() > (4u << 20)) break;  // an environment is at most a few hundred KiB; stop on anything absurd
  }
  ::close(fd);
  return parse_environ(raw);
}

}  // namespace gcm

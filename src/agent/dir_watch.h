// Tells whether anything changed in a directory since the last question, through inotify, so the agent re-resolves
// the GPU -> job attribution when the prolog writes or the epilog removes a mapping file, instead of every sample.
// A directory that does not exist yet is watched as soon as it appears (asked again at each question).
#pragma once

#include <string>

namespace gcm::agent {

class DirWatch {
 public:
  explicit DirWatch(std::string dir);
  ~DirWatch();
  DirWatch(const DirWatch&) = delete;
  DirWatch& operator=(const DirWatch&) = delete;
  // True when a file was created, written, moved or removed since the last call (and on the first call after the
  // directory appeared). Never blocks.
  bool changed();
  bool watching() const { return wd_ >= 0; }

 private:
  std::string dir_;
  int fd_ = -1;
  int wd_ = -1;
};

}  // namespace gcm::agent

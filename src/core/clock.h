// The wall clock as records, files and the OTLP wire carry it: time since the Unix epoch. Durations, timeouts and
// deadlines use std::chrono::steady_clock instead, because the wall clock steps when NTP corrects it.
#pragma once

#include <chrono>
#include <cstdint>

namespace gcm {

// Whole seconds, as the records' time fields and Slurm's time arguments take them.
inline int64_t unix_time_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

inline double unix_seconds_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

inline int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline uint64_t unix_ns_now() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

}  // namespace gcm

// Splits a byte stream into lines in memory bounded by a maximum line length. Every line reader of host data (files,
// the kernel log, command output) goes through it: a 100 MB line, or /dev/zero, must not become a 100 MB string.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace gcm {

// The default longest line kept, 1 MiB: a syslog line is at most 8 KiB in rsyslog's default, a kernel record 1 KiB,
// the longest Slurm row (a job's SubmitLine) tens of KiB.
inline constexpr size_t kMaxLineBytes = 1u << 20;

class LineSplitter {
 public:
  using LineFn = std::function<void(std::string_view line)>;
  // A line longer than the limit, skipped: its 1-based number and its length in bytes (without the "\n").
  using LongLineFn = std::function<void(size_t line_number, size_t bytes)>;

  explicit LineSplitter(size_t max_line = kMaxLineBytes) : max_line_(max_line) {}

  // Delivers every line chunk completes ("\n" stripped). Holds at most max_line bytes of an unfinished line.
  void feed(std::string_view chunk, const LineFn& on_line, const LongLineFn& on_long = nullptr);
  // The last line when the stream did not end with "\n".
  void finish(const LineFn& on_line, const LongLineFn& on_long = nullptr);

  size_t lines() const { return lines_; }            // every line seen, skipped ones included
  size_t long_lines() const { return long_lines_; }  // lines skipped for their length
  size_t max_line() const { return max_line_; }

 private:
  // Adds part of the current line; past max_line the line is dropped and only its length counted.
  void append(std::string_view part);
  void end_line(const LineFn& on_line, const LongLineFn& on_long);

  size_t max_line_;
  std::string pending_;      // the unfinished line, at most max_line_ bytes
  size_t pending_size_ = 0;  // its full length so far (more than pending_ once it is too long)
  size_t lines_ = 0;
  size_t long_lines_ = 0;
};

}  // namespace gcm

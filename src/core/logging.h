// Internal logging (spdlog): the reference's layout `<log_folder>/<name>_logs/<name>.log` (rotating, 1 MiB, 2
// backups) with lines `[2024-01-01 12:00:00,123] - [INFO] - [name] - message`, or stdout with --stdout.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace gcm {

struct LogSetup {
  std::string name;       // logger name (the reference's LOGGER_NAME)
  std::string file_stem;  // file name without ".log"; defaults to name
  std::string folder;     // --log-folder
  std::string level = "INFO";
  bool to_stdout = false;
};

// Parses DEBUG|INFO|WARNING|ERROR|CRITICAL (any case); throws std::invalid_argument otherwise.
spdlog::level::level_enum parse_log_level(const std::string& level);

// Creates the logger and makes it the default one. Falls back to stderr (with a warning) when the log folder
// cannot be created, so a read-only log folder never stops a collector.
std::shared_ptr<spdlog::logger> setup_logging(const LogSetup& setup);

// A logger that writes to stderr only (before the command's options are known, and in tests).
std::shared_ptr<spdlog::logger> stderr_logger(const std::string& name);

}  // namespace gcm

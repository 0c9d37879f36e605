#include "core/logging.h"

#include <filesystem>
#include <stdexcept>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "core/stdout_lines.h"

namespace gcm {

namespace {

// spdlog names levels "info", "warning"...; the reference (Python logging) writes INFO, WARNING.
class UpperLevelFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    static const char* names[] = {"TRACE", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL", "OFF"};
    std::string_view n = names[static_cast<int>(msg.level)];
    dest.append(n.data(), n.data() + n.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<UpperLevelFlag>(); }
};

// --stdout: the log shares standard output with the stdout sink, and goes through stdout_lines so that no log line
// lands inside one of the sink's lines.
class SharedStdoutSink : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    stdout_lines::write_log_line(std::string_view(line.data(), line.size()));
  }
  void flush_() override {}  // every line is written (or held) whole when it comes
};

std::unique_ptr<spdlog::formatter> make_formatter() {
  auto f = std::make_unique<spdlog::pattern_formatter>();
  f->add_flag<UpperLevelFlag>('*').set_pattern("[%Y-%m-%d %H:%M:%S,%e] - [%*] - [%n] - %v");
  return f;
}

}  // namespace

spdlog::level::level_enum parse_log_level(const std::string& level) {
  std::string up;
  for (char c : level) up.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (up == "DEBUG") return spdlog::level::debug;
  if (up == "INFO") return spdlog::level::info;
  if (up == "WARNING" || up == "WARN") return spdlog::level::warn;
  if (up == "ERROR") return spdlog::level::err;
  if (up == "CRITICAL") return spdlog::level::critical;
  throw std::invalid_argument("log level '" + level + "' is not one of DEBUG, INFO, WARNING, ERROR, CRITICAL");
}

std::shared_ptr<spdlog::logger> stderr_logger(const std::string& name) {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>(name, sink);
  logger->set_formatter(make_formatter());
  return logger;
}

std::shared_ptr<spdlog::logger> setup_logging(const LogSetup& setup) {
  std::shared_ptr<spdlog::logger> logger;
  if (setup.to_stdout) {
    logger = std::make_shared<spdlog::logger>(setup.name, std::make_shared<SharedStdoutSink>());
  } else {
    std::string stem = setup.file_stem.empty() ? setup.name : setup.file_stem;
    std::filesystem::path dir = std::filesystem::path(setup.folder) / (setup.name + "_logs");
    try {
      std::filesystem::create_directories(dir);
      auto sink = std::make_shared<spdlog::sinks::rotating_file_sink_mt>((dir / (stem + ".log")).string(), 1u << 20, 2);
      // Errors also reach stderr, so an operator running a command by hand sees why it failed.
      auto err = std::make_shared<spdlog::sinks::stderr_sink_mt>();
      err->set_level(spdlog::level::err);
      logger = std::make_shared<spdlog::logger>(setup.name, spdlog::sinks_init_list{sink, err});
    } catch (const std::exception& e) {
      logger = stderr_logger(setup.name);
      logger->set_formatter(make_formatter());
      logger->warn("cannot write logs under '{}' ({}); logging to stderr instead", dir.string(), e.what());
    }
  }
  logger->set_formatter(make_formatter());
  logger->set_level(parse_log_level(setup.level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return logger;
}

}  // namespace gcm

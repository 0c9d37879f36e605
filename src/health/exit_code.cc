#include "health/exit_code.h"

namespace gcm::health {

int severity_rank(ExitCode c) {
  switch (c) {
    case ExitCode::UNKNOWN:
      return 0;
    case ExitCode::OK:
      return 1;
    case ExitCode::WARN:
      return 2;
    case ExitCode::CRITICAL:
      return 3;
  }
  return 0;
}

ExitCode worse(ExitCode a, ExitCode b) { return severity_rank(b) > severity_rank(a) ? b : a; }

const char* status_word(ExitCode c) {
  switch (c) {
    case ExitCode::OK:
      return "OK";
    case ExitCode::WARN:
      return "WARNING";
    case ExitCode::CRITICAL:
      return "CRITICAL";
    case ExitCode::UNKNOWN:
      return "UNKNOWN";
  }
  return "UNKNOWN";
}

std::optional<ExitCode> exit_code_from_int(int v) {
  if (v < 0 || v > 3) return std::nullopt;
  return static_cast<ExitCode>(v);
}

std::optional<CheckType> parse_check_type(std::string_view s) {
  if (s == "prolog") return CheckType::Prolog;
  if (s == "epilog") return CheckType::Epilog;
  if (s == "nagios") return CheckType::Nagios;
  if (s == "app") return CheckType::App;
  return std::nullopt;
}

const char* to_string(CheckType t) {
  switch (t) {
    case CheckType::Prolog:
      return "prolog";
    case CheckType::Epilog:
      return "epilog";
    case CheckType::Nagios:
      return "nagios";
    case CheckType::App:
      return "app";
  }
  return "?";
}

}  // namespace gcm::health

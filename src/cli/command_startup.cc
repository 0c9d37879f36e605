#include "cli/command_startup.h"

#include <iostream>
#include <stdexcept>

#include <fmt/format.h>

#include "cli/detach.h"
#include "cli/option_binder.h"
#include "core/usage_error.h"

namespace gcm {

int usage_error(const std::string& message) {
  std::cerr << "Error: " << message << "\n";
  return 2;
}

std::optional<int> parse_command_line(CLI::App& app, const std::function<void()>& parse, const std::string& hint) {
  try {
    parse();
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "Error: " << e.what() << "\n" << hint << "\n";
    return 2;
  }
  return std::nullopt;
}

int run_command(const Invocation& inv, const CommandStartup& s, const CommandBody& body) {
  std::vector<std::string> warnings = inv.warnings;
  try {
    std::function<void(const std::string&)> warn = [&](const std::string& w) { warnings.push_back(w); };
    std::function<void(const std::string&)> quiet = [](const std::string&) {};
    for (const ConfigTable& t : s.tables)
      apply_config(inv.config, t.path, *t.binder, t.known_subtables, t.quiet ? quiet : warn, t.shared_keys,
                   t.only_shared);
    s.validate();
  } catch (const std::exception& e) {  // the config file or an option value: every failure here is one of usage
    return usage_error(e.what());
  }

  std::shared_ptr<spdlog::logger> log;
  try {
    // A command without a log (a report for a terminal) gets a logger that writes nowhere: stderr has it all.
    log = s.log ? setup_logging(s.log()) : std::make_shared<spdlog::logger>(s.name);
  } catch (const std::invalid_argument& e) {
    return usage_error(fmt::format("--log-level: {}", e.what()));
  }
  for (const auto& w : warnings) {
    std::cerr << "Warning: " << w << "\n";
    log->warn("{}: {}", s.name, w);
  }

  try {
    s.prepare(log);
  } catch (const std::exception& e) {
    log->warn("{}: exiting on a usage error: {}", s.name, e.what());
    return usage_error(e.what());
  }

  try {
    // Into the background only once the options, config and log are known good, so that a usage error still
    // reaches the terminal.
    if (inv.detach) detach();
    return body(log);
  } catch (const UsageError& e) {
    log->warn("{}: exiting on a usage error: {}", s.name, e.what());  // stderr gets the message once
    return usage_error(e.what());
  } catch (const UnavailableError& e) {
    log->warn("{}: {} is unavailable: {}", s.name, e.missing, e.what());
    std::cerr << "Error: " << e.missing << " is unavailable: " << e.what() << "\n";
    return kExitUnavailable;
  } catch (const std::exception& e) {
    log->critical("{}: {}", s.name, e.what());
    std::cerr << "Error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gcm

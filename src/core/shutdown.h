// SIGTERM/SIGINT handling: a flag the loop polls and a self-pipe that wakes any sleep at once, so a daemon finishes
// the write in progress, flushes its sinks and exits 0.
#pragma once

#include <chrono>

namespace gcm {

// Installs the handlers (idempotent).
void install_shutdown_handlers();
bool shutdown_requested();
// Sleeps up to d; returns false when a shutdown was requested before or during the sleep.
bool sleep_unless_shutdown(std::chrono::duration<double> d);
// For tests: request a shutdown as a signal would.
void request_shutdown();
// For tests: forget an earlier request.
void reset_shutdown();

}  // namespace gcm

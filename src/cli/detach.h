// The reference's -d/--detach root option of `gcm` and `health_checks` (python-daemon's DaemonContext): the command
// goes on in the background, detached from the terminal, and the process that was started exits 0 at once.
#pragma once

namespace gcm {

// fork, setsid, fork again (so the daemon can never reacquire a terminal), stdin/stdout/stderr to /dev/null. The
// working directory is kept, unlike GCM's daemon context (which moved to /), so relative paths given on the command
// line keep their meaning. Throws std::runtime_error when the first fork fails; the caller is then still in the
// foreground and can report it.
void detach();

}  // namespace gcm

// Standard output is shared by two writers: the stdout sink, whose line (one chunk, a JSON list) is written in pieces
// of 64 KiB as it is encoded, and, with --stdout, the log. A log line written between two pieces would land inside
// the sink's line and break it (seen in CI: sacct_running's summary inside a 66 KB chunk). So the sink says when its
// line is open, and log lines that come meanwhile, from any thread, are held and written right after it closes.
#pragma once

#include <string_view>

namespace gcm::stdout_lines {

// The sink begins a line it writes in pieces; only it writes to stdout until close_line().
void open_line();
// After the line's last piece (or when the line was abandoned): writes the log lines held meanwhile.
void close_line();
// A whole log line (with its newline): written now, or held while a line is open (up to 4 MiB; lines past that are
// counted, and the count is written when the line closes, so none go missing unsaid).
void write_log_line(std::string_view line);

}  // namespace gcm::stdout_lines

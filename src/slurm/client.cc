#include "slurm/client.h"

#include <fmt/format.h>

#include "core/subprocess.h"
#include "slurm/snapshot.h"

namespace gcm::slurm {

std::string describe_query(const SlurmQuery& q) { return q.argv.empty() ? q.name : command_line(q.argv); }

namespace {

// Thrown out of a line callback so that the runner stops (and kills the command); carries what went wrong.
struct LineFailure {
  size_t line;
  std::string message;
};

// Calls on_line, turning any exception into a LineFailure for the given line.
void handle_line(const LineHandler& on_line, std::string_view line, size_t number) {
  try {
    on_line(line);
  } catch (const DelimitedError& e) {
    throw LineFailure{number, e.reason()};  // its own "line N: " prefix would repeat ours
  } catch (const std::exception& e) {
    throw LineFailure{number, e.what()};
  }
}

}  // namespace

SlurmError::SlurmError(std::string query, std::string command, size_t line, const std::string& message)
    : std::runtime_error(line ? fmt::format("`{}`, line {}: {}", command, line, message) : message),
      query_(std::move(query)),
      command_(std::move(command)),
      line_(line) {}

size_t SlurmClient::stream_lines(const SlurmQuery& query, const LineHandler& on_line) {
  if (SnapshotRound* round = SnapshotRound::current()) return round->stream_lines(*this, query, on_line);
  return fetch_lines(query, on_line);
}

std::string SlurmClient::output(const SlurmQuery& query) {
  std::string out;
  stream_lines(query, [&](std::string_view line) {
    if (!out.empty()) out.push_back('\n');
    out.append(line);
  });
  return out;
}

size_t SlurmClient::stream_rows(const SlurmQuery& query, const DelimitedOptions& options, const RowHandler& on_row) {
  DelimitedParser parser(options);
  stream_lines(query, [&](std::string_view line) {
    if (const DelimitedRow* row = parser.feed(line)) on_row(parser.header(), *row);
  });
  return parser.rows();
}

size_t SlurmClient::stream_records(const SlurmQuery& query, const RecordHandler& on_record) {
  ScontrolParser parser;
  size_t n = 0;
  // A failure while handling a record names the record's first line, not the line that closed it.
  auto deliver = [&](const ScontrolRecord& r) {
    try {
      on_record(r);
    } catch (const std::exception& e) {
      throw LineFailure{parser.record_line(), e.what()};
    }
    ++n;
  };
  try {
    stream_lines(query, [&](std::string_view line) {
      if (const ScontrolRecord* r = parser.feed(line)) deliver(*r);
    });
    if (const ScontrolRecord* r = parser.finish()) deliver(*r);  // complete only once the output ended
  } catch (const LineFailure& f) {
    throw SlurmError(query.name, describe_query(query), f.line, f.message);
  }
  return n;
}

std::string CliSlurmClient::answerer(const SlurmQuery&) const {
  std::string who = "cli";
  for (const auto& e : options_.extra_env) who += " " + e;
  return who;
}

size_t CliSlurmClient::fetch_lines(const SlurmQuery& query, const LineHandler& on_line) {
  CommandSpec spec;
  spec.argv = query.argv;
  spec.timeout = query.timeout;
  spec.extra_env = options_.extra_env;
  // A line longer than any Slurm row (4 MiB) is not Slurm's output: a line error, like any row that does not parse,
  // rather than a silent gap in the records.
  spec.on_long_line = [&](size_t line, size_t bytes) {
    throw LineFailure{line, fmt::format("a line of {} bytes, longer than the {} bytes a line of Slurm output may have",
                                        bytes, spec.max_line)};
  };
  size_t number = 0;
  try {
    return stream_command_lines(spec, [&](std::string_view line) { handle_line(on_line, line, ++number); });
  } catch (const LineFailure& f) {
    throw SlurmError(query.name, describe_query(query), f.line, f.message);
  } catch (const CommandError& e) {
    // The runner's message already names the command line and says why (missing, exit status, timeout, stderr).
    throw SlurmError(query.name, describe_query(query), 0, e.what());
  }
}

void CannedSlurmClient::set_output(std::string query_name, std::string output) {
  answers_.push_back({std::move(query_name), std::move(output), {}});
}

void CannedSlurmClient::set_failure(std::string query_name, std::string message) {
  answers_.push_back({std::move(query_name), {}, std::move(message)});
}

size_t CannedSlurmClient::fetch_lines(const SlurmQuery& query, const LineHandler& on_line) {
  queries_.push_back(query);
  const Answer* answer = nullptr;
  for (const auto& a : answers_) {
    if (a.name == query.name) answer = &a;  // the latest answer for a name wins
  }
  if (!answer)
    throw SlurmError(query.name, describe_query(query), 0, "no canned output for query '" + query.name + "'");
  if (!answer->failure.empty()) throw SlurmError(query.name, describe_query(query), 0, answer->failure);
  return deliver_lines(query, describe_query(query), answer->output, on_line);
}

size_t deliver_lines(const SlurmQuery& query, const std::string& command, std::string_view text,
                     const LineHandler& on_line) {
  size_t number = 0;
  try {
    for_each_line(text, [&](std::string_view line) { handle_line(on_line, line, ++number); });
  } catch (const LineFailure& f) {
    throw SlurmError(query.name, command, f.line, f.message);
  }
  return number;
}

}  // namespace gcm::slurm

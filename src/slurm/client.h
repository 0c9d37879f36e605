// How collectors reach Slurm. A collector names what it asks for (a SlurmQuery: a stable name plus the CLI argv
// that answers it) and reads the answer as lines, delimited rows or scontrol records. The CLI back end runs the
// argv; a slurmrestd back end can answer the same query names later without touching collectors.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/delimited.h"
#include "slurm/scontrol.h"

namespace gcm::slurm {

// A failed query: the command could not run, failed, timed out, or a line of its output could not be handled.
// The message names the command line and, for a bad line, its number.
class SlurmError : public std::runtime_error {
 public:
  SlurmError(std::string query, std::string command, size_t line, const std::string& message);
  const std::string& query() const { return query_; }
  const std::string& command() const { return command_; }
  size_t line() const { return line_; }  // 0 when the failure is not about one line

 private:
  std::string query_, command_;
  size_t line_;
};

struct SlurmQuery {
  std::string name;               // stable identity of the question ("sinfo_nodes", "squeue_jobs", ...)
  std::vector<std::string> argv;  // the command line that answers it
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

// How an error message names the query: its command line, or its name when it has none (a REST query).
std::string describe_query(const SlurmQuery& q);

using LineHandler = std::function<void(std::string_view line)>;
using RowHandler = std::function<void(const DelimitedHeader& header, const DelimitedRow& row)>;
using RecordHandler = std::function<void(const ScontrolRecord& record)>;

class SlurmClient {
 public:
  virtual ~SlurmClient() = default;

  // Streams the output lines (without '\n') to on_line as they arrive; returns their number. Throws SlurmError.
  // An exception from on_line stops the query (the command is killed) and comes back as a SlurmError naming the
  // command and the line. Inside a snapshot cycle (slurm/snapshot.h: `gcm collect`), the answer comes from the
  // cycle's snapshot: a query that another collector asked in the same cycle is not asked again.
  size_t stream_lines(const SlurmQuery& query, const LineHandler& on_line);

  // Asks Slurm, whatever the snapshot holds: what stream_lines does outside a snapshot cycle. Each back end
  // implements it.
  virtual size_t fetch_lines(const SlurmQuery& query, const LineHandler& on_line) = 0;
  // Who answers `query`, for the snapshot's key: two clients whose answerers are equal print the same output for the
  // same argv (the CLI client's environment, slurmrestd's URL and user are part of it).
  virtual std::string answerer(const SlurmQuery& query) const = 0;

  // The whole output, lines joined by '\n'.
  std::string output(const SlurmQuery& query);
  // The output as delimited rows (see DelimitedParser); returns the number of rows delivered.
  size_t stream_rows(const SlurmQuery& query, const DelimitedOptions& options, const RowHandler& on_row);
  // The output as scontrol records (see ScontrolParser); returns their number.
  size_t stream_records(const SlurmQuery& query, const RecordHandler& on_record);
};

// Delivers a whole answer's lines to on_line, for back ends that get the answer at once (canned outputs, slurmrestd):
// an exception from on_line becomes a SlurmError naming `command` and the line. Returns the number of lines.
size_t deliver_lines(const SlurmQuery& query, const std::string& command, std::string_view text,
                     const LineHandler& on_line);

// Runs the argv with the project's subprocess runner: no shell, the query's timeout kills the whole process group.
class CliSlurmClient : public SlurmClient {
 public:
  struct Options {
    std::vector<std::string> extra_env;  // "KEY=VALUE" added to the commands' environment (SLURM_CONF, ...)
  };
  CliSlurmClient() = default;
  explicit CliSlurmClient(Options options) : options_(std::move(options)) {}

  size_t fetch_lines(const SlurmQuery& query, const LineHandler& on_line) override;
  std::string answerer(const SlurmQuery& query) const override;

 private:
  Options options_;
};

// Answers queries by name from fixed outputs: for collectors' tests and the demo. Records every query asked.
class CannedSlurmClient : public SlurmClient {
 public:
  void set_output(std::string query_name, std::string output);
  void set_failure(std::string query_name, std::string message);
  const std::vector<SlurmQuery>& queries() const { return queries_; }

  size_t fetch_lines(const SlurmQuery& query, const LineHandler& on_line) override;
  std::string answerer(const SlurmQuery&) const override {
    return "canned " + std::to_string(reinterpret_cast<uintptr_t>(this));
  }

 private:
  struct Answer {
    std::string name, output, failure;
  };
  std::vector<Answer> answers_;
  std::vector<SlurmQuery> queries_;
};

}  // namespace gcm::slurm

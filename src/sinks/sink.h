// The sink plug-in interface and registry. A collector never knows which sink receives its records: the collection
// loop hands each record to the sink chosen with --sink, in chunks and rounds.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "core/record.h"
#include "core/retry.h"
#include "core/usage_error.h"
#include "core/value.h"

namespace gcm {

// What a chunk of records is: the reference's Log.ts plus SinkAdditionalParams.
struct BatchInfo {
  int64_t ts = 0;  // unix seconds of the collection round
  DataType data_type = DataType::Log;
  DataIdentifier identifier = DataIdentifier::Generic;
  const Schema* schema = nullptr;
  bool heterogeneous_cluster_v1 = false;
};

class Sink {
 public:
  virtual ~Sink() = default;
  // A collection round of one task starts / ends (all its chunks are in between). Sinks that publish a snapshot
  // (prometheus) swap it at end_round.
  virtual void begin_round(const BatchInfo&) {}
  virtual void end_round(const BatchInfo&) {}
  // A round of one task failed (a command or a chunk failed): end_round is not called for it, and sinks that
  // report their collector's freshness (prometheus) count it.
  virtual void round_failed(const BatchInfo&) {}
  // One chunk: begin_chunk, write for each record, end_chunk. Sinks that send requests do so at end_chunk.
  virtual void begin_chunk(const BatchInfo&) {}
  virtual void write(const Record& r) = 0;
  virtual void end_chunk() {}
  // Everything buffered so far is delivered; the sink stays usable (a health check flushes after each record).
  virtual void flush() {}
  // The sink's last call (GCM's SinkImpl.shutdown()): everything buffered is delivered, then connections, files
  // and listeners are released. Nothing is written after it. A sink made by make_sink() is shut down exactly once
  // whatever way its owner leaves (an exception, a signal): explicitly by the owner, which then hears of a failure,
  // or else when it is destroyed, which logs a failure. The default delivers what flush() delivers.
  virtual void shutdown() { flush(); }
};

// A sink failure that the loop reports (the sink already retried what it could).
struct SinkError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Bad sink options: a usage error (exit 2).
struct SinkUsageError : UsageError {
  using UsageError::UsageError;
};

struct SinkOptionSpec {
  std::string name;
  std::string type;  // "str", "int", "float", "bool", "dict", "list", "path"
  std::string help;
  std::string default_text;  // shown in --help; empty when the option has no default
};

// What every sink gets besides its options.
struct SinkContext {
  std::string command;          // the collector's name, for messages
  double interval_seconds = 0;  // seconds between two rounds of a daemon; 0 with --once and outside collectors
  RetryPolicy retry;            // --retries and the backoff schedule
  std::shared_ptr<spdlog::logger> log;
};

// Validated -o options of one sink.
class SinkOptions {
 public:
  SinkOptions(std::string sink, Value options) : sink_(std::move(sink)), options_(std::move(options)) {}
  const Value* find(const std::string& key) const { return options_.find(key); }
  bool has(const std::string& key) const { return find(key) && !find(key)->is_null(); }
  std::string get_string(const std::string& key, const std::string& fallback = "") const;
  int64_t get_int(const std::string& key, int64_t fallback) const;
  double get_double(const std::string& key, double fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;
  // A dict option (e.g. log_resource_attributes={'k': 'v'}); empty when absent.
  Object get_dict(const std::string& key) const;
  const std::string& sink() const { return sink_; }

 private:
  [[noreturn]] void bad_type(const std::string& key, const char* expected) const;
  std::string sink_;
  Value options_;
};

struct SinkFactory {
  std::string name;
  std::string summary;  // one line for --help
  std::vector<SinkOptionSpec> options;
  std::function<std::unique_ptr<Sink>(const SinkOptions&, const SinkContext&)> make;
};

// Registers a sink (from a static initialiser in the sink's own file). A duplicate name aborts at start-up.
bool register_sink(SinkFactory factory);
const std::map<std::string, SinkFactory>& sink_registry();

// Builds the named sink from `-o key=value` items. Unknown sink names and unknown options are SinkUsageError
// messages that list what is accepted. The sink returned is shut down once: by an explicit shutdown() (a second
// call does nothing, a write after it is a SinkError) or, failing that, when it is destroyed (a failure is then
// logged to ctx.log, or stderr without one).
std::unique_ptr<Sink> make_sink(const std::string& name, const std::vector<std::string>& sink_opts,
                                const SinkContext& ctx);

// The "Sinks" section of --help: every sink, its summary and its options with defaults.
std::string sinks_help();
// The registered sink names, "a, b, c" (for option help that must not go stale when a sink is added).
std::string sink_names();

}  // namespace gcm

// The collector plug-in interface and registry. A collector adds its own options to its subcommand, then produces
// records for one or more tasks per round through a RecordOut; it never knows which sink receives them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "cli/cli_fwd.h"
#include "core/record.h"
#include "core/usage_error.h"

namespace gcm {

class RecordOut {
 public:
  virtual ~RecordOut() = default;
  virtual void emit(const Record& r) = 0;
};

struct CollectorContext {
  std::string cluster;
  bool heterogeneous_cluster_v1 = false;
  int64_t interval = 0;
  std::shared_ptr<spdlog::logger> log;
  // Set when the cluster name had to be detected and Slurm did not answer (cluster is "local-node" meanwhile): the
  // loop asks again before each later round until it returns a name, so one hiccup at start-up does not label a
  // daemon's records wrongly for its whole life.
  std::function<std::optional<std::string>()> retry_cluster;
  std::optional<std::string> gpu_backend;  // gcm --backend (Invocation::gpu_backend)
};

// One kind of data a collector produces each round (the reference's (get_data, SinkAdditionalParams) pairs).
struct CollectorTask {
  std::string name;
  const Schema* schema = nullptr;  // data type and identifier come from the schema
  std::function<void(const CollectorContext&, RecordOut&)> collect;
};

class Collector {
 public:
  virtual ~Collector() = default;
  // Called once after options are parsed (and the cluster is known); validates options and returns the tasks.
  // Throws UsageError for bad option values.
  virtual std::vector<CollectorTask> tasks(const CollectorContext& ctx) = 0;
};

struct CollectorSpec {
  std::string name;          // subcommand name, e.g. "storage"
  std::string summary;       // its line in `gcm --help`
  std::string help;          // one paragraph for `gcm <name> --help`
  int64_t default_interval;  // seconds
  std::string logger_name;   // the reference's LOGGER_NAME
  // Adds the collector's own options to its subcommand and returns the collector that will hold their values.
  std::function<std::unique_ptr<Collector>(OptionBinder&)> setup;
  // The log file is <log_folder>/<logger_name>_logs/<hostname>.log rather than .../<logger_name>.log: GCM's
  // nvml_monitor runs on every node, often with a shared log folder, and names its file after the host.
  bool log_file_per_host = false;
};

bool register_collector(CollectorSpec spec);
const std::map<std::string, CollectorSpec>& collector_registry();

}  // namespace gcm

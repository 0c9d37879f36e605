// gcm sacct_publish [OPTIONS] [SACCT_OUTPUT]: sacct parsable output (a file, or stdin with "-") to SacctPayload
// records in the chosen sink, once (gcm-reference.md §1.14). Exit codes: 0, 2 for a bad option or a bad input line
// (without --ignore-line-errors) or invalid UTF-8 under strict, 1 for a sink or read failure. Records read before
// a failure are delivered, never dropped.
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/command_registry.h"
#include "core/clock.h"
#include "cli/command_startup.h"
#include "cli/option_binder.h"
#include "collectors/loop.h"
#include "collectors/shared_options.h"
#include "core/config.h"
#include "core/logging.h"
#include "core/shutdown.h"
#include "core/si_size.h"
#include "kubernetes/access_options.h"
#include "kubernetes/objects.h"
#include "sacct/publish.h"
#include "sacct/sacct_records.h"
#include "sinks/sink.h"
#include "slurm/cluster_name.h"

namespace gcm::sacct {

namespace {

struct PublishCommand {
  std::unique_ptr<OptionBinder> binder;
  SharedOptions shared;
  std::string input = "-";
  bool ignore_line_errors = false;
  std::string io_errors = "strict";
  std::string delimiter = "|#";
  std::optional<std::string> sacct_timezone;
  bool resolve_kubernetes_hosts = false;
  std::string kubernetes_namespace, kubernetes_label_selector;
  kube::AccessOptions kubernetes{.timeout_s = 5};

  int run(const Invocation& inv);
  std::shared_ptr<const std::map<std::string, std::string, std::less<>>> kubernetes_hosts(
      const std::shared_ptr<spdlog::logger>& log);
  int publish(const std::shared_ptr<spdlog::logger>& log);
};

int PublishCommand::run(const Invocation& inv) {
  CommandStartup startup{"sacct_publish", {{{"sacct_publish"}, binder.get()}}};
  startup.log = [&] { return LogSetup{"sacct_publish", "", shared.log_folder, shared.log_level, shared.log_stdout}; };
  return run_command(inv, startup, [&](const std::shared_ptr<spdlog::logger>& log) { return publish(log); });
}

// Slurm node -> Kubernetes node, from the pods of the namespace (SUNK names each slurmd pod after its Slurm node).
// A failure is a warning: the records are published anyway, with sc_host and sc_node_hosts null.
std::shared_ptr<const std::map<std::string, std::string, std::less<>>> PublishCommand::kubernetes_hosts(
    const std::shared_ptr<spdlog::logger>& log) {
  auto hosts = std::make_shared<std::map<std::string, std::string, std::less<>>>();
  auto warn = [&](const std::string& w) {
    log->warn("sacct_publish: {}", w);
    std::cerr << "Warning: " << w << "\n";
  };
  try {
    auto api = kube::make_api_client(kubernetes);
    kube::PodQuery q;
    q.namespace_ = kubernetes_namespace;
    q.label_selector = kubernetes_label_selector;
    q.annotation_keys = {};
    for (const auto& p : kube::list_pods(*api, q))
      if (!p.node_name.empty()) (*hosts)[p.name] = p.node_name;
    if (hosts->empty())
      warn(fmt::format("no scheduled pod in namespace {}{}: sc_host and sc_node_hosts stay null", kubernetes_namespace,
                       kubernetes_label_selector.empty() ? "" : " with labels " + kubernetes_label_selector));
  } catch (const std::exception& e) {
    warn(fmt::format("cannot resolve Kubernetes hosts, publishing without them: {}", e.what()));
  }
  return hosts;
}

int PublishCommand::publish(const std::shared_ptr<spdlog::logger>& log) {
  PublishOptions o;
  if (resolve_kubernetes_hosts && kubernetes_namespace.empty())
    return usage_error("--kubernetes-namespace is required with --resolve-kubernetes-hosts");
  int64_t chunk_size = 0;
  try {
    chunk_size = parse_si_size(shared.chunk_size);
  } catch (const SiSizeError& e) {
    return usage_error(fmt::format("Invalid value for '--chunk-size': {}", e.what()));
  }
  try {
    o.io_errors = parse_utf8_errors(io_errors);
  } catch (const std::invalid_argument& e) {
    return usage_error(fmt::format("Invalid value for '--sacct-output-io-errors': {}", e.what()));
  }
  if (delimiter.empty()) return usage_error("Invalid value for '--delimiter': it must not be empty");
  o.delimiter = delimiter;
  o.ignore_line_errors = ignore_line_errors;
  o.naive_zone = TimeZone::host();
  try {
    o.sacct_zone = sacct_timezone ? TimeZone::load(*sacct_timezone) : o.naive_zone;
  } catch (const TimeZoneError&) {
    return usage_error(
        fmt::format("Invalid value for '--sacct-timezone': '{}' is not a valid timezone", *sacct_timezone));
  }
  try {
    o.end_ds_zone = TimeZone::load("America/Los_Angeles");
  } catch (const TimeZoneError& e) {
    log->critical("sacct_publish: {}", e.what());
    std::cerr << "Error: end_ds needs the America/Los_Angeles zone: " << e.what() << "\n";
    return 1;
  }
  o.time = unix_time_now();
  o.input_name = input == "-" ? "<stdin>" : input;

  int fd = 0;
  if (input != "-") {
    fd = ::open(input.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return usage_error(fmt::format("Invalid value for '[SACCT_OUTPUT]': '{}': {}", input, std::strerror(errno)));
  }
  struct Closer {
    int fd;
    ~Closer() {
      if (fd > 0) ::close(fd);
    }
  } closer{fd};

  std::unique_ptr<Sink> sink;
  try {
    o.cluster = shared.cluster ? *shared.cluster : detect_cluster(std::chrono::seconds(10), [&](const std::string& w) {
      log->warn("{}", w);
      std::cerr << "Warning: " << w << "\n";
    });
    o.heterogeneous_cluster_v1 = shared.heterogeneous_cluster_v1;
    sink = make_sink_for("sacct_publish", shared, log);
  } catch (const SinkUsageError& e) {
    return usage_error(e.what());
  }
  ::signal(SIGPIPE, SIG_IGN);  // a closed stdout is a write error to report
  if (resolve_kubernetes_hosts) o.kubernetes_hosts = kubernetes_hosts(log);

  BatchInfo info;
  info.ts = o.time;
  info.schema = &sacct_payload_schema();
  info.data_type = DataType::Log;
  info.identifier = DataIdentifier::Generic;
  info.heterogeneous_cluster_v1 = shared.heterogeneous_cluster_v1;
  ChunkWriter writer(*sink, info, chunk_size);
  SacctPublisher publisher(o, log);
  // The publisher knows each record's JSON size from its line: cheaper than measuring the record again.
  writer.size_from([&publisher](const Record&) { return publisher.last_record_size(); });
  int rc = 0;
  std::string failure;
  try {
    sink->begin_round(info);
    try {
      publisher.run(fd, writer);
    } catch (const PublishError& e) {
      rc = 2;
      failure = e.what();
    } catch (const std::system_error& e) {
      rc = 1;
      failure = e.what();
    }
    writer.finish();  // what was read before a failure is still delivered
    sink->end_round(info);
    sink->shutdown();
  } catch (const SinkError& e) {
    rc = 1;
    failure = fmt::format("writing to sink '{}' failed: {}", shared.dry_run ? "stdout" : shared.sink, e.what());
  }
  const PublishStats& st = publisher.stats();
  std::string summary = fmt::format("{}: {} record(s) from {} line(s) ({} bytes) in {} chunk(s)", o.input_name,
                                    writer.acknowledged_records(), st.lines, st.bytes, writer.acknowledged_chunks());
  if (st.utf8_fixed_lines)
    summary += fmt::format("; {} line(s) with invalid UTF-8 read with errors={}", st.utf8_fixed_lines, io_errors);
  if (writer.oversized())
    log->warn("sacct_publish: {} record(s) were larger than --chunk-size {} and were sent alone", writer.oversized(),
              shared.chunk_size);
  if (!failure.empty()) {
    // Only what the sink acknowledged counts as published: the chunk that failed is not (a receiver answering 400
    // took none of it), and neither is anything after it.
    std::string delivery =
        fmt::format("{} chunk(s) sent, {} acknowledged ({} record(s)), {} failed", writer.chunks(),
                    writer.acknowledged_chunks(), writer.acknowledged_records(), writer.failed_chunks());
    log->error("sacct_publish: {} ({}; {} line(s) read)", failure, delivery, st.lines);
    std::cerr << "Error: " << failure << "\n"
              << "(" << o.input_name << ": " << delivery << "; " << writer.acknowledged_records()
              << " record(s) were published before it)\n";
    return rc;
  }
  if (st.invalid_lines) {
    std::string skipped = publisher.invalid_summary();
    log->warn("sacct_publish: {}", skipped);
    std::cerr << "Warning: " << o.input_name << ": " << skipped << "\n";
  }
  log->info("sacct_publish: {}", summary);
  return 0;
}

const bool kSacctPublishCommandRegistered = register_app_command({
    "sacct_publish",
    "Turn sacct parsable output into SacctPayload records, once",
    "Turn sacct parsable output (`sacct -P ...`, from a file or stdin) into SacctPayload records, once.",
    [](CLI::App& sub) -> CommandRunner {
      auto cmd = std::make_shared<PublishCommand>();
      cmd->binder = std::make_unique<OptionBinder>(sub);
      OptionBinder& b = *cmd->binder;
      sub.footer(sinks_help());
      b.option("sacct_output", "sacct_output", cmd->input,
               "SACCT_OUTPUT: the sacct -P output to read; - (the default) reads stdin.")
          ->capture_default_str();
      b.flag("--ignore-line-errors", "ignore_line_errors", cmd->ignore_line_errors,
             "Skip invalid lines (wrong field count, End not a date) instead of failing; they are counted and "
             "reported by line number.");
      b.option("--sacct-output-io-errors", "sacct_output_io_errors", cmd->io_errors,
               "Invalid UTF-8 in the input: strict (fail, naming the line and byte offset), ignore (drop the bytes) "
               "or replace (U+FFFD).")
          ->capture_default_str()
          ->check(CLI::IsMember({"strict", "ignore", "replace"}));
      b.option("--delimiter", "delimiter", cmd->delimiter, "Field delimiter of the input.")->capture_default_str();
      b.option("--sacct-timezone", "sacct_timezone", cmd->sacct_timezone,
               "IANA zone the times are written in (default: the host's zone).");
      b.flag("--resolve-kubernetes-hosts", "resolve_kubernetes_hosts", cmd->resolve_kubernetes_hosts,
             "Add sc_host and sc_node_hosts: the Kubernetes node of each Slurm node of the job, from the pods of "
             "--kubernetes-namespace (a slurmd pod is named after its Slurm node; RBAC: list pods there). A failure "
             "is a warning and the records go out without them.");
      b.option("--kubernetes-namespace", "kubernetes_namespace", cmd->kubernetes_namespace,
               "The namespace of the slurmd pods (required with --resolve-kubernetes-hosts).");
      b.option("--kubernetes-label-selector", "kubernetes_label_selector", cmd->kubernetes_label_selector,
               "Label selector of the slurmd pods, e.g. app.kubernetes.io/component=compute.");
      kube::add_access_options(b, cmd->kubernetes, /*in_cluster_flag=*/false);
      // The shared options, less --interval and --once: sacct_publish always runs once.
      OptionBinder all(sub);
      cmd->shared.add_to(all, 0);
      for (const auto& [param, opt] : all.bindings()) {
        if (param == "interval" || param == "once")
          sub.remove_option(opt);
        else
          b.bind(param, opt);
      }
      cmd->shared.once = true;
      return [cmd](const Invocation& inv) { return cmd->run(inv); };
    },
});

}  // namespace

}  // namespace gcm::sacct

// `gcm slurm_processor`: the OTLP enrichment service (processor/service.h) as a command with a [gcm.slurm_processor]
// config table.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "attribution/kubelet_pods.h"
#include "cli/command_registry.h"
#include "cli/command_startup.h"
#include "cli/option_binder.h"
#include "cli/option_limits.h"
#include "core/config.h"
#include "core/endpoint_url.h"
#include "core/http_listener.h"
#include "core/private_file.h"
#include "core/logging.h"
#include "core/shutdown.h"
#include "core/tls.h"
#include "core/web_config.h"
#include "kubernetes/access_options.h"
#include "processor/service.h"

namespace gcm {

namespace {

struct SlurmProcessorCommand {
  std::unique_ptr<OptionBinder> binder;
  std::string listen = "127.0.0.1:4318";
  std::string grpc_listen;  // empty: no gRPC receiver
  std::string web_config_file;
  std::string bearer_token_file;
  std::string downstream;
  std::vector<std::string> headers;
  std::string metadata_source = "slurmctld";
  int64_t cache_duration = 60;
  std::string cache_filepath = "/var/cache/gcm/slurmprocessor_cache.json";
  bool query_slurmctld = false;
  std::vector<std::string> attribution;
  std::string slurm_node;
  double refresh_s = 5;
  std::string scontrol = "scontrol";
  std::string procfs = "/proc";
  std::string sysfs = "/sys";
  std::string mapping_dir;
  std::optional<std::string> nvml_library;
  KubeletAttributionOptions kubelet;
  double max_request_mib = 16;
  double max_in_flight_mib = 128;
  int max_connections = 1024;
  double header_timeout_s = 10;
  double request_timeout_s = 60;
  double idle_timeout_s = 60;
  int http_workers = 0;  // 0: one per core, at least 2
  uint64_t batch_size = 8192;
  unsigned downstream_concurrency = 4;
  double batch_timeout_s = 0.2;
  double queue_mib = 64;
  std::string spool_dir;
  double spool_mib = 1024;
  double timeout_s = 10;
  double retry_initial_s = 0.5;
  double retry_max_s = 30;
  std::string log_level = "INFO";
  std::string log_folder = "/var/log/fb-gcm";
  bool log_stdout = false;
};

const char* const kHelp =
    "OTLP enrichment service: receives OTLP/HTTP (protobuf or JSON) on /v1/metrics, /v1/logs and /v1/traces "
    "(and OTLP/gRPC with --grpc-listen), adds "
    "the Slurm job of each GPU (job_id, job_name, qos, array_job_id, array_task_id, username, partition, account, "
    "num_nodes; UUID copied to uuid) as GCM's slurmprocessor does (with --attribution kubelet also the pod, namespace "
    "and container), and forwards to a downstream OTLP/HTTP endpoint "
    "with batching, retries and a disk spool. GET /health and GET /metrics report on the service itself.";

std::shared_ptr<SlurmProcessorCommand> add_options(CLI::App& app) {
  auto c = std::make_shared<SlurmProcessorCommand>();
  app.footer(
      "Points with a `gpu` attribute (string or integer) get the GPU's job as strings; metric points without `gpu` "
      "get the host's jobs as lists; logs and traces get a resource `job_id` (the host's jobs). Telemetry whose "
      "resource names another host.name is attributed to that host by the slurmctld source, else passed unchanged: "
      "for every other host at once, one `scontrol show job -d` of the whole cluster per --refresh-interval "
      "(jobs that hold an allocation), whatever the number of hosts.");
  OptionBinder& b = *(c->binder = std::make_unique<OptionBinder>(app));
  b.option("--listen", "listen", c->listen, "HOST:PORT of the OTLP/HTTP receiver (port 0: any free port).")
      ->capture_default_str();
  b.option("--grpc-listen", "grpc_listen", c->grpc_listen,
           "HOST:PORT of an OTLP/gRPC receiver (the MetricsService, LogsService and TraceService Export methods; "
           "OTLP's port is 4317; port 0: any free port); unset: none. Loads libgcm_otlp_grpc.so. Answers: "
           "INVALID_ARGUMENT for undecodable messages, RESOURCE_EXHAUSTED over --max-request-size, UNAVAILABLE "
           "(retryable) when the queue and spool are full, UNIMPLEMENTED for other methods.");
  b.option("--web.config.file", "web_config_file", c->web_config_file,
           "TLS and authentication of both receivers, in Prometheus exporter-toolkit's web config format (YAML): "
           "tls_server_config (cert_file, key_file, client_ca_file, client_auth_type, min_version, ...), "
           "basic_auth_users (user: bcrypt hash), http_server_config.headers. Relative paths are from the file's "
           "directory. Credentials are asked of every request (/health and /metrics too): HTTP 401, gRPC "
           "UNAUTHENTICATED. A bad file is an error at start (exit 2).");
  b.option("--auth-bearer-token-file", "auth_bearer_token_file", c->bearer_token_file,
           "File holding a bearer token (one line; the OpenTelemetry Collector's bearertokenauth): requests with "
           "`Authorization: Bearer TOKEN` (gRPC: `authorization` metadata) are accepted, alongside any "
           "basic_auth_users.");
  b.option("--downstream", "downstream", c->downstream,
           "Base URL of the downstream OTLP/HTTP endpoint, e.g. http://collector:4318 (/v1/<signal> is appended); "
           "required (here or in the config table).");
  b.option("--downstream-header", "downstream_headers", c->headers,
           "'Name: value' header sent downstream (repeatable).");
  b.option("--metadata-source", "metadata_source", c->metadata_source,
           "The reference's source: nvml (GPU processes' environments), slurmd (`scontrol listpids` and job "
           "environments) or slurmctld (`scontrol show job -d`); \"\" picks slurmctld with --query-slurmctld, else "
           "slurmd. --attribution overrides it.")
      ->capture_default_str();
  b.option("--cache-duration", "cache_duration", c->cache_duration,
           "Seconds the slurmctld source's cache file is used before scontrol is asked again.")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->check(seconds_or_zero());
  b.option("--cache-filepath", "cache_filepath", c->cache_filepath,
           "The slurmctld source's cache file (JSON, 0600; the systemd unit's CacheDirectory). A file that is not "
           "this service's user's own, is writable by others, or sits in a directory others can rename files in is "
           "refused (GCM's /tmp/slurmprocessor_cache.json is accepted only when it is safe).")
      ->capture_default_str();
  b.flag("--query-slurmctld", "query_slurmctld", c->query_slurmctld,
         "Legacy: with --metadata-source \"\", use slurmctld rather than slurmd.");
  b.option("--attribution", "attribution", c->attribution,
           "GPU -> job sources tried in order per GPU (overrides --metadata-source): nvml-processes, slurmd-local, "
           "slurmctld, cgroup, mapping-files, kubelet (on a Kubernetes node: the kubelet's pod-resources API adds "
           "pod, namespace and container to the points of each GPU given to a pod, beside its job if any; this "
           "node's GPUs only).")
      ->delimiter(',');
  add_kubelet_attribution_options(b, c->kubelet);
  kube::add_access_options(b, c->kubelet.api, /*in_cluster_flag=*/false);
  b.option("--slurm-node", "slurm_node", c->slurm_node,
           "The host to attribute for: this node's Slurm name (default: $SLURMD_NODENAME, else the short hostname). "
           "Telemetry without host.name, or naming this host, is attributed to it.");
  b.option("--refresh-interval", "refresh_interval", c->refresh_s,
           "Seconds between background refreshes of the job tables in memory (this host's, and the cluster's for "
           "other hosts: one `scontrol show job -d` each time while telemetry of other hosts arrives; nodes whose "
           "jobs did not change keep their tables).")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(timeout_seconds());
  b.option("--scontrol", "scontrol", c->scontrol, "The scontrol command (a name on PATH or a path).")
      ->capture_default_str();
  b.option("--procfs", "procfs", c->procfs, "Root of procfs.")->capture_default_str();
  b.option("--sysfs", "sysfs", c->sysfs, "Root of sysfs (cgroups under <sysfs>/fs/cgroup).")->capture_default_str();
  b.option("--gpu-job-mapping-dir", "gpu_job_mapping_dir", c->mapping_dir,
           "Directory of the mapping-files source (one file per GPU index holding the job id).");
  b.option("--nvml-library", "nvml_library", c->nvml_library,
           "libnvidia-ml to load for the sources that list GPUs (default: $GCM_NVML_LIBRARY, else the system's).");
  b.option("--max-request-size", "max_request_size", c->max_request_mib,
           "Largest request body in MiB, as received and after gzip inflation (larger: HTTP 413, gRPC "
           "RESOURCE_EXHAUSTED).")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(mebibytes_at_most_a_tebibyte());
  b.option("--max-in-flight-size", "max_in_flight_size", c->max_in_flight_mib,
           "MiB of request bodies received or being processed at once, over every connection (more: HTTP 503 with "
           "Retry-After, which clients retry); at least --max-request-size.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(mebibytes_at_most_a_tebibyte());
  b.option("--max-connections", "max_connections", c->max_connections,
           "Open OTLP/HTTP connections at most; at the limit the oldest idle connection, then the one that has spent "
           "longest sending its head, is closed to make room (else the new one is answered 503).")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  b.option("--header-timeout", "header_timeout", c->header_timeout_s,
           "Seconds from a request's first byte to the end of its head (later: 408 and closed, however steadily the "
           "bytes trickle in).")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(timeout_seconds());
  b.option("--request-timeout", "request_timeout", c->request_timeout_s,
           "Seconds from a request's first byte to the end of its body.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(timeout_seconds());
  b.option("--idle-timeout", "idle_timeout", c->idle_timeout_s,
           "Seconds a kept-alive connection may wait for its next request.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(timeout_seconds());
  b.option("--http-workers", "http_workers", c->http_workers,
           "Threads decoding and enriching OTLP/HTTP requests (0: one per core, at least 2). GET /health and "
           "/metrics are answered apart from them, so they answer while every worker is busy.")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  b.option("--batch-size", "batch_size", c->batch_size, "Items per downstream request (a batch is sent when full).")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  b.option("--batch-timeout", "batch_timeout", c->batch_timeout_s, "Seconds a batch waits to fill before it is sent.")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->check(seconds_or_zero());
  b.option("--downstream-concurrency", "downstream_concurrency", c->downstream_concurrency,
           "Batches sent to the downstream at once, each on its own connection (a collector across a network "
           "answers each after a round trip; one at a time it would take 50 batches a second at 20 ms). The spool "
           "is sent one batch at a time, oldest first.")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  b.option("--queue-size", "queue_size", c->queue_mib,
           "MiB of batches kept in memory while the downstream lags (the memory their requests' buffers hold); "
           "also the most one enriched request may take (413 past it: every item gains the job attributes). "
           "Requests that find no room are answered 503 with Retry-After (a protobuf body that alone would not fit, "
           "before it is enriched).")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(mebibytes_at_most_a_tebibyte());
  b.option("--spool-dir", "spool_dir", c->spool_dir,
           "Directory where batches go when the memory queue is full (sent when the downstream is back, also after "
           "a restart); unset: no spool, and what does not fit in memory is refused, counted and logged.");
  b.option("--spool-size", "spool_size", c->spool_mib, "MiB the spool may hold.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(mebibytes_at_most_a_tebibyte());
  b.option("--timeout", "timeout", c->timeout_s, "Seconds one downstream request may take.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(timeout_seconds());
  b.option("--retry-initial-backoff", "retry_initial_backoff", c->retry_initial_s,
           "Seconds before the first retry of a failed downstream request (doubling up to --retry-max-backoff).")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(timeout_seconds());
  b.option("--retry-max-backoff", "retry_max_backoff", c->retry_max_s, "Longest wait between retries, in seconds.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(timeout_seconds());
  b.option("--log-level", "log_level", c->log_level, "DEBUG, INFO, WARNING, ERROR or CRITICAL.")->capture_default_str();
  b.option("--log-folder", "log_folder", c->log_folder, "Folder of the log file slurm_processor.log.")
      ->capture_default_str();
  b.flag("--stdout", "stdout", c->log_stdout, "Write internal logs to stdout instead of the log file.");
  return c;
}

std::vector<std::string> sources_of(const SlurmProcessorCommand& c) {
  if (!c.attribution.empty()) return c.attribution;
  std::string m = c.metadata_source.empty() ? (c.query_slurmctld ? "slurmctld" : "slurmd") : c.metadata_source;
  if (m == "nvml") return {"nvml-processes"};
  if (m == "slurmd") return {"slurmd-local"};
  if (m == "slurmctld") return {"slurmctld"};
  throw std::invalid_argument(
      fmt::format("Invalid value for '--metadata-source': '{}' (expected nvml, slurmd or slurmctld)", m));
}

uint64_t mib(double v) { return static_cast<uint64_t>(v * 1024 * 1024); }

std::string read_token(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in) throw std::invalid_argument(fmt::format("--auth-bearer-token-file '{}' cannot be read", path));
  std::string token = s.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.front()))) token.erase(0, 1);
  if (token.empty() || token.find_first_of(" \t\r\n") != std::string::npos)
    throw std::invalid_argument(
        fmt::format("--auth-bearer-token-file '{}': expected one token on one line (no spaces)", path));
  return token;
}

// The web config and bearer token into both receivers; every problem is a usage error naming the file.
void load_web_settings(const SlurmProcessorCommand& c, processor::ServiceOptions& o) {
  std::string token = c.bearer_token_file.empty() ? "" : read_token(c.bearer_token_file);
  WebConfig web;
  try {
    if (!c.web_config_file.empty()) web = load_web_config(c.web_config_file);
    apply_web_config(o.listen, web, token);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(fmt::format("--web.config.file: {}", e.what()));
  }
  if (!o.grpc) return;
  o.grpc->auth = o.listen.auth;
  o.grpc->tls = web.tls;
  if (web.tls) {
    // gRPC's own TLS (SslServerCredentials) speaks TLS 1.2 and 1.3 and does not check SANs: refuse what it
    // cannot honour rather than serve with less than the file asks for.
    if (web.tls->min_version > 0x0303 || web.tls->max_version < 0x0303)
      throw std::invalid_argument(
          fmt::format("--web.config.file {}: the gRPC receiver (--grpc-listen) serves TLS 1.2 "
                      "and 1.3; min_version TLS13 or max_version below TLS12 cannot apply to it",
                      web.path));
    if (!web.tls->client_allowed_sans.empty())
      throw std::invalid_argument(
          fmt::format("--web.config.file {}: client_allowed_sans is not supported on the gRPC "
                      "receiver (--grpc-listen); use a client CA of its own clients",
                      web.path));
  }
}

// The options as the service's; throws std::invalid_argument (a usage error) naming the option.
void to_service_options(const SlurmProcessorCommand& c, processor::ServiceOptions& o) {
  auto [host, port] = parse_listen_address(c.listen, "--listen");
  o.listen.host = host;
  o.listen.port = port;
  if (!c.grpc_listen.empty()) {
    auto [ghost, gport] = parse_listen_address(c.grpc_listen, "--grpc-listen");
    o.grpc.emplace();
    o.grpc->host = ghost;
    o.grpc->port = gport;
  }
  o.resolver.attribution.sources = sources_of(c);
  check_attribution_sources(o.resolver.attribution.sources);
  if (std::find(o.resolver.attribution.sources.begin(), o.resolver.attribution.sources.end(), "mapping-files") !=
          o.resolver.attribution.sources.end() &&
      c.mapping_dir.empty())
    throw std::invalid_argument("--attribution mapping-files needs --gpu-job-mapping-dir");
  if (c.cache_duration > 0)
    if (auto why = untrusted_file_reason(c.cache_filepath))
      throw std::invalid_argument(
          fmt::format("refusing the --cache-filepath: {} (remove it, or choose a file of "
                      "this service's own)",
                      *why));
  load_web_settings(c, o);
  if (c.downstream.empty())
    throw std::invalid_argument("--downstream is required (the OTLP/HTTP endpoint to forward to)");
  if (auto problem = http_url_problem(c.downstream))
    throw std::invalid_argument(invalid_url_message("--downstream", c.downstream, *problem));
}

// The sizes, timeouts and paths, as they are.
void fill_service_options(const SlurmProcessorCommand& c, processor::ServiceOptions& o) {
  o.listen.max_body = mib(c.max_request_mib);
  o.listen.max_in_flight = std::max(mib(c.max_in_flight_mib), o.listen.max_body);
  o.listen.max_connections = c.max_connections;
  o.listen.head_timeout = std::chrono::milliseconds(static_cast<int64_t>(c.header_timeout_s * 1000));
  o.listen.request_timeout = std::chrono::milliseconds(static_cast<int64_t>(c.request_timeout_s * 1000));
  o.listen.idle_timeout = std::chrono::milliseconds(static_cast<int64_t>(c.idle_timeout_s * 1000));
  o.listen.workers =
      c.http_workers > 0 ? c.http_workers : std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  auto& a = o.resolver.attribution;
  a.scontrol = c.scontrol;
  a.procfs = c.procfs;
  a.cgroupfs = c.sysfs + "/fs/cgroup";
  a.mapping_dir = c.mapping_dir;
  a.slurmctld_cache_file = c.cache_filepath;
  a.slurmctld_cache_duration = std::chrono::seconds(c.cache_duration);
  a.kubelet = c.kubelet;
  o.resolver.host = c.slurm_node;
  if (o.resolver.host.empty())
    if (const char* n = std::getenv("SLURMD_NODENAME")) o.resolver.host = n;
  o.resolver.refresh = std::chrono::milliseconds(static_cast<int64_t>(c.refresh_s * 1000));
  o.resolver.nvml_library = c.nvml_library;
  o.downstream = c.downstream;
  auto transport = std::make_shared<otlp::TransportConfig>();
  transport->set_endpoint(c.downstream);
  transport->headers = c.headers;
  transport->timeout = std::chrono::milliseconds(static_cast<int64_t>(c.timeout_s * 1000));
  o.forward.transport = std::move(transport);
  o.forward.name = "slurm_processor";
  o.forward.batch_items = c.batch_size;
  o.forward.concurrency = c.downstream_concurrency;
  o.forward.batch_timeout = std::chrono::milliseconds(static_cast<int64_t>(c.batch_timeout_s * 1000));
  o.forward.queue_bytes = mib(c.queue_mib);
  o.forward.spool_dir = c.spool_dir;
  o.forward.spool_bytes = mib(c.spool_mib);
  o.forward.backoff.initial_backoff_s = c.retry_initial_s;
  o.forward.backoff.max_backoff_s = c.retry_max_s;
}

int serve(const processor::ServiceOptions& o, const std::shared_ptr<spdlog::logger>& log) {
  install_shutdown_handlers();
  processor::Service svc(o, log);
  svc.start();
  std::string sources;
  for (const auto& s : o.resolver.attribution.sources) sources += (sources.empty() ? "" : ",") + s;
  log->info("slurm_processor: listening on {}:{}{}{}, forwarding to {}, attribution {}", o.listen.host, svc.port(),
            o.listen.tls ? " (TLS)" : "", o.listen.auth ? " (authentication required)" : "", o.downstream, sources);
  // The port, for scripts and tests that asked for port 0 (stdout: logs go to the log file unless --stdout).
  std::cout << fmt::format("slurm_processor listening on {}:{}\n", o.listen.host, svc.port());
  if (o.grpc) {
    log->info("slurm_processor: OTLP/gRPC receiver on {}:{}", o.grpc->host, svc.grpc_port());
    // A line of its own after the HTTP one, which scripts already read.
    std::cout << fmt::format("slurm_processor OTLP/gRPC listening on {}:{}\n", o.grpc->host, svc.grpc_port());
  }
  std::cout << std::flush;
  while (sleep_unless_shutdown(std::chrono::hours(1))) {
  }
  log->info("slurm_processor: shutting down");
  svc.stop();
  log->flush();
  return 0;
}

int run(SlurmProcessorCommand& c, const Invocation& inv) {
  auto o = std::make_shared<processor::ServiceOptions>();
  CommandStartup startup{"slurm_processor", {{{"slurm_processor"}, c.binder.get()}}};
  startup.validate = [&] {
    to_service_options(c, *o);
    fill_service_options(c, *o);
  };
  startup.log = [&] { return LogSetup{"slurm_processor", "", c.log_folder, c.log_level, c.log_stdout}; };
  return run_command(inv, startup, [&](const std::shared_ptr<spdlog::logger>& log) { return serve(*o, log); });
}

const bool kSlurmProcessorCommandRegistered =
    register_app_command({"slurm_processor", "OTLP service that adds each GPU's Slurm job and forwards it", kHelp,
                          [](CLI::App& sub) -> CommandRunner {
                            auto c = add_options(sub);
                            return [c](const Invocation& inv) { return run(*c, inv); };
                          }});

}  // namespace
}  // namespace gcm

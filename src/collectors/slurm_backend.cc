#include "collectors/slurm_backend.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cli/option_binder.h"
#include "core/usage_error.h"
#include "slurm/rest_client.h"

namespace gcm {

void add_slurm_backend_options(OptionBinder& b, SlurmBackendOptions& o) {
  b.option("--slurm-backend", "slurm_backend", o.backend,
           "How Slurm is asked: `cli` runs its commands (sinfo, squeue, sdiag, ...); `rest` asks slurmrestd "
           "(--slurm-rest-url) for what it has an endpoint for (nodes, jobs, sdiag, partitions, QOS, users, "
           "associations, slurmdbd's running jobs and, from API v0.0.39, the fair-share tree) and runs the commands "
           "for the rest. Also [gcm] slurm_backend in the config, for every collector.")
      ->capture_default_str()
      ->check(CLI::IsMember({"cli", "rest"}));
  b.option("--slurm-rest-url", "slurm_rest_url", o.rest_url,
           "slurmrestd's address with --slurm-backend rest: http(s)://HOST:PORT or unix:/PATH (its unix socket).");
  b.option("--slurm-rest-token", "slurm_rest_token", o.rest_token,
           "JWT sent as X-SLURM-USER-TOKEN (scontrol token); prefer --slurm-rest-token-file or $SLURM_JWT, which "
           "other users cannot read in the process list. None for rest_auth/local on a unix socket.");
  b.option("--slurm-rest-token-file", "slurm_rest_token_file", o.rest_token_file,
           "File holding the JWT (read at start; surrounding blanks ignored).");
  b.option("--slurm-rest-user", "slurm_rest_user", o.rest_user,
           "X-SLURM-USER-NAME, for a token issued to another user (SlurmUser or root may act for others).");
  b.option("--slurm-rest-api-version", "slurm_rest_api_version", o.rest_api_version,
           "slurmrestd API version, v0.0.38 to v0.0.44 (such as v0.0.42); by default the newest it lists in /openapi/v3.");
}

const std::vector<std::string>& slurm_backend_config_keys() {
  static const std::vector<std::string> keys = {"slurm_backend",         "slurm_rest_url",  "slurm_rest_token",
                                                "slurm_rest_token_file", "slurm_rest_user", "slurm_rest_api_version"};
  return keys;
}

SlurmBackend::SlurmBackend(slurm::CliSlurmClient::Options cli) : cli_(std::move(cli)) {}
SlurmBackend::~SlurmBackend() = default;

namespace {

std::string trimmed(std::string s) {
  const char* blanks = " \t\r\n";
  s.erase(0, s.find_first_not_of(blanks));
  s.erase(s.find_last_not_of(blanks) + 1);
  return s;
}

}  // namespace

void SlurmBackend::configure(const SlurmBackendOptions& o, std::chrono::milliseconds timeout) {
  rest_.reset();
  if (o.backend == "cli") return;
  if (o.backend != "rest") throw UsageError(fmt::format("--slurm-backend '{}': expected cli or rest", o.backend));
  slurm::SlurmRestOptions r;
  r.url = o.rest_url;
  if (r.url.empty())
    throw UsageError("--slurm-backend rest needs --slurm-rest-url (http(s)://HOST:PORT or unix:/PATH)");
  if (auto problem = slurm::slurm_rest_url_problem(r.url))
    throw UsageError(fmt::format("--slurm-rest-url '{}': {}", r.url, *problem));
  r.token = o.rest_token;
  if (r.token.empty() && !o.rest_token_file.empty()) {
    std::ifstream in(o.rest_token_file);
    if (!in) throw UsageError(fmt::format("--slurm-rest-token-file '{}': cannot be read", o.rest_token_file));
    std::stringstream ss;
    ss << in.rdbuf();
    r.token = trimmed(ss.str());
    if (r.token.empty()) throw UsageError(fmt::format("--slurm-rest-token-file '{}': empty", o.rest_token_file));
  }
  if (r.token.empty())
    if (const char* env = std::getenv("SLURM_JWT")) r.token = trimmed(env);
  if (r.token.find_first_of("\r\n") != std::string::npos)
    throw UsageError("the slurmrestd token holds a line break; it must be one line");
  r.user = o.rest_user;
  r.api_version = o.rest_api_version;
  if (auto problem = slurm::slurm_rest_api_version_problem(r.api_version))
    throw UsageError(fmt::format("--slurm-rest-api-version {}: {}", r.api_version, *problem));
  r.timeout = timeout;
  rest_ = std::make_unique<slurm::RestSlurmClient>(std::move(r), cli_);
}

slurm::SlurmClient& SlurmBackend::client() {
  if (rest_) return *rest_;
  return cli_;
}

}  // namespace gcm

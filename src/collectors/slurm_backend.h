// How the Slurm collectors (slurm_job_monitor, slurm_monitor, scontrol, sacctmgr_qos, sacctmgr_user, sacct_running,
// sshare) reach Slurm, declared one way by each of them: the CLI (every command runs, as GCM's collectors do) or
// slurmrestd (gcm-newer.md §2), where the queries slurmrestd answers go to its REST API and every other one still runs
// its command (slurm/rest_client.h). Chosen per command with --slurm-backend, or for every collector at once with
// `slurm_backend` (and the other keys below) in the config's [gcm] table.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli_fwd.h"
#include "slurm/client.h"

namespace gcm {

namespace slurm {
class RestSlurmClient;
}

struct SlurmBackendOptions {
  std::string backend = "cli";  // "cli" or "rest"
  std::string rest_url;         // http(s)://HOST:PORT or unix:/PATH
  std::string rest_token;       // a JWT; also from rest_token_file or $SLURM_JWT
  std::string rest_token_file;
  std::string rest_user;
  std::string rest_api_version;
};

// Adds --slurm-backend, --slurm-rest-url, --slurm-rest-token, --slurm-rest-token-file, --slurm-rest-user and
// --slurm-rest-api-version (config keys slurm_backend, slurm_rest_url, ...).
void add_slurm_backend_options(OptionBinder& b, SlurmBackendOptions& o);
// The config keys a collector also takes from the [gcm] table (the root command knows them, so they are no warning).
const std::vector<std::string>& slurm_backend_config_keys();

// The client a collector asks: the CLI client, or the REST client in front of it.
class SlurmBackend {
 public:
  explicit SlurmBackend(slurm::CliSlurmClient::Options cli = {});
  ~SlurmBackend();

  // Builds the REST client for backend "rest": the token from the option, else the token file, else $SLURM_JWT.
  // Throws UsageError for a missing or bad URL, an unreadable token file or an unknown backend.
  void configure(const SlurmBackendOptions& o, std::chrono::milliseconds timeout);

  slurm::SlurmClient& client();
  bool rest() const { return rest_ != nullptr; }

 private:
  slurm::CliSlurmClient cli_;
  std::unique_ptr<slurm::RestSlurmClient> rest_;
};

}  // namespace gcm

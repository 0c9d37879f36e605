// slurmrestd as a SlurmClient (gcm-newer.md §2): the queries it has an endpoint for are answered from Slurm's REST API
// and written as the CLI output the collectors read (slurm/rest_render.h); every other query goes to the CLI client,
// per call. So a collector does not know which back end answered, and both can be compared on one cluster.
//
// Served here: sinfo_all_nodes_json and slurm_monitor_sinfo (GET /slurm/vX/nodes), squeue_jobs (GET /slurm/vX/jobs),
// sdiag_json (GET /slurm/vX/diag), scontrol_partitions (GET /slurm/vX/partitions), and from the accounting database
// sacctmgr_qos (GET /slurmdb/vX/qos), sacctmgr_users (GET /slurmdb/vX/users) and sacctmgr_user_assoc (GET
// /slurmdb/vX/associations?user=U; slurm/rest_render_sacctmgr.h), sacct_running (GET
// /slurmdb/vX/jobs?state=running, with the --delimiter of its argv; slurm/rest_render_sacct.h) and, from API v0.0.39
// on, sshare (GET /slurm/vX/shares; slurm/rest_render_sshare.h: v0.0.38 has no /shares, so there sshare runs). The API
// version is the newest /openapi/v3 lists (or --slurm-rest-api-version), asked once. slurmrestd is a peer like any
// other: every request has a timeout, an answer is bounded in size, and a status other than 200 is an error naming the
// URL and Slurm's own message.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/time_zone.h"
#include "slurm/client.h"

namespace gcm {
class HttpClient;
}

namespace gcm::slurm {

struct SlurmRestOptions {
  // "http://host:6820", "https://host:6820" or "unix:/run/slurmrestd/slurmrestd.socket".
  std::string url;
  std::string token;        // X-SLURM-USER-TOKEN (a JWT); "" for none (rest_auth/local on a unix socket)
  std::string user;         // X-SLURM-USER-NAME, with a token issued for another user; "" for none
  std::string api_version;  // "v0.0.38"; "" to take the newest /openapi/v3 lists
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  size_t max_response_bytes = size_t{512} << 20;
};

// Checks a --slurm-rest-url value: nullopt when usable, else what is wrong with it.
std::optional<std::string> slurm_rest_url_problem(std::string_view url);
// Checks a --slurm-rest-api-version value: what is wrong with a version older than v0.0.38, whose layouts are not
// read; nullopt otherwise.
std::optional<std::string> slurm_rest_api_version_problem(std::string_view version);

class RestSlurmClient : public SlurmClient {
 public:
  RestSlurmClient(SlurmRestOptions options, SlurmClient& fallback);
  ~RestSlurmClient() override;

  size_t fetch_lines(const SlurmQuery& query, const LineHandler& on_line) override;
  std::string answerer(const SlurmQuery& query) const override;

  // True for the query names this client has an endpoint for, in some API version (see answers_itself).
  static bool serves(std::string_view query_name);
  // True when this client answers `query` itself: it has an endpoint for it in the API version in use (asking the
  // version first when a route needs a newer one than the oldest). Throws SlurmError when that version is not known.
  bool answers_itself(const SlurmQuery& query);
  // REST requests made so far (the API version negotiation included), for tests and figures.
  size_t requests() const { return requests_; }
  const std::string& api_version();

 private:
  std::string get(const SlurmQuery& query, const std::string& path);
  // The request path of a served query: /slurm/vX/... or /slurmdb/vX/..., with its parameters.
  std::string path_of(const SlurmQuery& query);
  std::string answer(const SlurmQuery& query, const std::string& path);

  SlurmRestOptions options_;
  SlurmClient& fallback_;
  std::unique_ptr<HttpClient> http_;
  std::string base_;  // scheme://host[:port] for requests (a placeholder host on a unix socket)
  std::string version_;
  std::optional<TimeZone> host_zone_;  // squeue's naive times are written in it
  size_t requests_ = 0;
};

}  // namespace gcm::slurm

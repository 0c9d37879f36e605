// The slurmrestd back end against a scripted local HTTP server: the token and user headers, the API version taken
// from /openapi/v3, the per-query fallback to the CLI, and every failure (HTTP errors with Slurm's message, a
// refused connection, an answer too large, a bad URL) as a SlurmError that names the request and never the token.
#include "slurm/rest_client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "collectors/slurm_backend.h"
#include "sacct/sacct_running.h"
#include "slurm/rest_render_sacct.h"
#include "core/usage_error.h"
#include "refused_port.h"
#include "temp_dir.h"
#include "text_file.h"

namespace gcm::slurm {
namespace {

const std::string kDir = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurmrestd-22.05/";
const std::string kApiDir = kDir + "v0.0.38/";
// Written from the documentation, not recorded: no Slurm with /shares (23.02+) runs here (see its README.md).
const std::string kSharesDir = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurmrestd-shares/";

using gcm::testing::read_file;

class ScriptedSlurmrestd {
 public:
  ScriptedSlurmrestd() {
    server_.Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard lock(mu_);
        std::string path = req.path;
        for (const char* param : {"user", "state"})
          if (req.has_param(param)) path += fmt::format("?{}={}", param, req.get_param_value(param));
        paths_.push_back(path);
        token_ = req.get_header_value("X-SLURM-USER-TOKEN");
        user_ = req.get_header_value("X-SLURM-USER-NAME");
      }
      if (req.path == "/openapi/v3") {
        res.set_content(openapi_, "application/json");
      } else if ((req.path == "/slurm/v0.0.39/shares" || req.path == "/slurm/v0.0.40/shares") && token_ == "good") {
        res.set_content(bad_shares_ ? R"({"shares": {"shares": [{"name": "root", "type": 7}]}})"
                                    : read_file(kSharesDir + "shares-v0.0.39.json"),
                        "application/json");
      } else if (req.path == "/slurm/v0.0.40/jobs" && token_ == "good") {
        res.set_content(read_file(kApiDir + "jobs.json"), "application/json");
      } else if (req.path == "/slurmdb/v0.0.40/associations" && token_ == "good") {
        res.set_content(read_file(kApiDir + "associations-alice.json"), "application/json");
      } else if (req.path == "/slurmdb/v0.0.40/jobs" && token_ == "good") {
        res.set_content(read_file(kApiDir + "slurmdb-jobs-running.json"), "application/json");
      } else if (req.path == "/slurm/v0.0.40/diag" && token_ == "good") {
        res.set_content(big_ ? std::string(4096, ' ') + "{}" : read_file(kApiDir + "diag.json"), "application/json");
      } else if (token_ != "good") {
        res.status = 401;
        res.set_content(R"({"errors": [{"error": "Authentication failure", "description": "token rejected"}]})",
                        "application/json");
      } else {
        res.status = 404;
        res.set_content("not found", "text/plain");
      }
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~ScriptedSlurmrestd() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> paths() {
    std::lock_guard lock(mu_);
    return paths_;
  }
  std::string token() {
    std::lock_guard lock(mu_);
    return token_;
  }
  std::string user() {
    std::lock_guard lock(mu_);
    return user_;
  }
  bool big_ = false;
  bool bad_shares_ = false;
  // What /openapi/v3 lists: the newest /slurm/ version is v0.0.40 unless a test sets another list.
  std::string openapi_ = R"({"paths": {"/slurm/v0.0.38/jobs": {}, "/slurm/v0.0.40/jobs": {}, "/slurm/v0.0.39/diag": {},
                           "/slurmdb/v0.0.41/jobs": {}, "/openapi/v3": {}}})";

 private:
  std::mutex mu_;
  std::vector<std::string> paths_;
  std::string token_, user_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

SlurmQuery query(const char* name) { return {name, {"squeue", "--all"}, std::chrono::seconds(5)}; }

// The options of a client of `server` with a token it takes and the API version set (empty: negotiated).
SlurmRestOptions options_of(const ScriptedSlurmrestd& server, std::string api_version = "v0.0.40") {
  SlurmRestOptions o;
  o.url = server.url();
  o.token = "good";
  o.api_version = std::move(api_version);
  return o;
}

// v0.0.36 and v0.0.37 (offered by Slurm 22.05's slurmrestd beside v0.0.38) have layouts the renderers do not read.
TEST(RestSlurmClient, AnApiVersionOlderThanV0038IsRefused) {
  EXPECT_EQ(slurm_rest_api_version_problem(""), std::nullopt);
  EXPECT_EQ(slurm_rest_api_version_problem("v0.0.38"), std::nullopt);
  EXPECT_EQ(slurm_rest_api_version_problem("v0.0.44"), std::nullopt);
  ASSERT_TRUE(slurm_rest_api_version_problem("v0.0.37"));
  EXPECT_NE(slurm_rest_api_version_problem("v0.0.36")->find("older than v0.0.38"), std::string::npos);
  CannedSlurmClient cli;
  SlurmRestOptions o;
  o.url = "unix:/nonexistent.sock";
  o.api_version = "v0.0.37";
  EXPECT_THROW(RestSlurmClient(o, cli), std::invalid_argument);
}

TEST(RestSlurmClient, AsksTheNewestApiVersionWithTheTokenAndRendersSqueueLines) {
  ScriptedSlurmrestd server;
  CannedSlurmClient cli;
  SlurmRestOptions o;
  o.url = server.url() + "/";
  o.token = "good";
  o.user = "gcm";
  RestSlurmClient rest(o, cli);
  std::string lines = rest.output(query("squeue_jobs"));
  EXPECT_EQ(rest.api_version(), "v0.0.40") << "the newest /slurm/ version listed";
  EXPECT_EQ(server.paths(), (std::vector<std::string>{"/openapi/v3", "/slurm/v0.0.40/jobs"}));
  EXPECT_EQ(server.token(), "good");
  EXPECT_EQ(server.user(), "gcm");
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n') + 1, 15) << lines;
  EXPECT_NE(lines.find("|#big-pretrain|#"), std::string::npos);
  EXPECT_EQ(rest.requests(), 2u);
  EXPECT_TRUE(cli.queries().empty()) << "nothing went to the CLI";

  // A query slurmrestd has no endpoint for runs its command (here: the canned CLI), per call.
  cli.set_output("sprio", "JOBID|PRIORITY\n7|100");
  EXPECT_EQ(rest.output(query("sprio")), "JOBID|PRIORITY\n7|100");
  EXPECT_EQ(cli.queries().size(), 1u);
  EXPECT_EQ(rest.requests(), 2u);
  EXPECT_TRUE(RestSlurmClient::serves("sdiag_json"));
  EXPECT_TRUE(RestSlurmClient::serves("sacctmgr_qos"));
  EXPECT_FALSE(RestSlurmClient::serves("sdiag"));
}

TEST(RestSlurmClient, AUsersAssociationsComeFromSlurmdbdWithTheNameAsOneQueryValue) {
  ScriptedSlurmrestd server;
  CannedSlurmClient cli;
  SlurmRestOptions o = options_of(server);
  RestSlurmClient rest(o, cli);
  SlurmQuery q{
      "sacctmgr_user_assoc",
      {"sacctmgr", "show", "user", "alice", "withassoc", "format=User,DefaultAccount,Account,DefaultQOS,QOS", "-P"},
      std::chrono::seconds(5)};
  std::string alice = read_file(kDir + "sacctmgr-user-alice.txt");
  EXPECT_EQ(rest.output(q) + "\n", alice) << "output() gives the lines without the last line break";
  // A name that would add a parameter or a path is sent as one value (the server decodes it back).
  q.argv[3] = "eve&user=alice/../x";
  EXPECT_EQ(rest.output(q), "User|Def Acct|Account|Def QOS|QOS") << "none of alice's rows";
  EXPECT_EQ(server.paths(), (std::vector<std::string>{"/slurmdb/v0.0.40/associations?user=alice",
                                                      "/slurmdb/v0.0.40/associations?user=eve&user=alice/../x"}));
  EXPECT_TRUE(cli.queries().empty());
  q.argv.resize(3);
  EXPECT_THROW(rest.output(q), SlurmError) << "a query without a user";
}

// sacct_running's query goes to slurmdbd's running jobs, written with the delimiter of the query's argv.
TEST(RestSlurmClient, RunningJobsComeFromSlurmdbdWithTheQuerysDelimiter) {
  ScriptedSlurmrestd server;
  CannedSlurmClient cli;
  SlurmRestOptions o = options_of(server);
  RestSlurmClient rest(o, cli);
  EXPECT_TRUE(RestSlurmClient::serves("sacct_running"));
  for (const char* delimiter : {"|#", "~"}) {
    SlurmQuery q{"sacct_running", sacct::sacct_running_argv(delimiter), std::chrono::seconds(5)};
    std::string text = rest.output(q);
    std::string header = text.substr(0, text.find('\n'));
    EXPECT_EQ(header, fmt::format("{}", fmt::join(rest_sacct_columns(), delimiter)));
    EXPECT_NE(text.find(fmt::format("{}train-llm{}", delimiter, delimiter)), std::string::npos) << text;
  }
  EXPECT_EQ(server.paths(),
            (std::vector<std::string>{"/slurmdb/v0.0.40/jobs?state=running", "/slurmdb/v0.0.40/jobs?state=running"}));
  EXPECT_TRUE(cli.queries().empty()) << "sacct did not run";
  SlurmQuery no_delimiter{"sacct_running", {"sacct", "-P"}, std::chrono::seconds(5)};
  EXPECT_THROW(rest.output(no_delimiter), SlurmError);
}

// sshare's query: from /shares where the API version has it (v0.0.39 and later), from the sshare command below.
SlurmQuery sshare_query() { return {"sshare", {"sshare", "-a", "-P"}, std::chrono::seconds(5)}; }

TEST(RestSlurmClient, SshareRunsItsCommandOnV0038AndComesFromSharesFromV0039) {
  ScriptedSlurmrestd server;
  CannedSlurmClient cli;
  cli.set_output("sshare", "Account|User|RawShares\nroot||");
  SlurmRestOptions o = options_of(server, "");
  EXPECT_TRUE(RestSlurmClient::serves("sshare")) << "it has a route, gated by the version";

  o.api_version = "v0.0.38";
  RestSlurmClient old_api(o, cli);
  EXPECT_FALSE(old_api.answers_itself(sshare_query()));
  EXPECT_EQ(old_api.output(sshare_query()), "Account|User|RawShares\nroot||") << "the command's output";
  EXPECT_EQ(cli.queries().size(), 1u);
  EXPECT_EQ(old_api.requests(), 0u) << "a set version is not asked, and v0.0.38 has no /shares to ask";

  std::string expected = read_file(kSharesDir + "sshare-a-P.txt");
  expected.pop_back();  // output() gives the lines without the last line break
  o.api_version = "v0.0.39";
  RestSlurmClient first_api(o, cli);
  EXPECT_TRUE(first_api.answers_itself(sshare_query()));
  EXPECT_EQ(first_api.output(sshare_query()), expected);
  EXPECT_EQ(cli.queries().size(), 1u) << "sshare did not run again";

  // Negotiated: the newest version /openapi/v3 lists decides, asked once.
  o.api_version.clear();
  RestSlurmClient negotiated(o, cli);
  EXPECT_EQ(negotiated.output(sshare_query()), expected);
  EXPECT_EQ(negotiated.output(sshare_query()), expected);
  server.openapi_ = R"({"paths": {"/slurm/v0.0.37/jobs": {}, "/slurm/v0.0.38/shares_not_here": {}}})";
  RestSlurmClient negotiated_old(o, cli);
  EXPECT_EQ(negotiated_old.output(sshare_query()), "Account|User|RawShares\nroot||");
  EXPECT_EQ(negotiated_old.api_version(), "v0.0.38");
  EXPECT_EQ(cli.queries().size(), 2u);
  EXPECT_EQ(server.paths(), (std::vector<std::string>{"/slurm/v0.0.39/shares", "/openapi/v3", "/slurm/v0.0.40/shares",
                                                      "/slurm/v0.0.40/shares", "/openapi/v3"}));

  // The snapshot's key names both answerers: a gated query is not taken for another client's.
  std::string key = first_api.answerer(sshare_query());
  EXPECT_NE(key.find("rest " + server.url()), std::string::npos) << key;
  EXPECT_NE(key.find(cli.answerer(sshare_query())), std::string::npos) << key;
  EXPECT_EQ(first_api.answerer(query("squeue_jobs")).find(cli.answerer(sshare_query())), std::string::npos);
}

TEST(RestSlurmClient, SshareFailuresNameTheRequestAndTheKey) {
  ScriptedSlurmrestd server;
  CannedSlurmClient cli;
  SlurmRestOptions o = options_of(server);
  server.bad_shares_ = true;
  RestSlurmClient rest(o, cli);
  try {
    rest.output(sshare_query());
    ADD_FAILURE() << "a bad /shares answer was accepted";
  } catch (const SlurmError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("GET /slurm/v0.0.40/shares: slurmrestd shares: shares[0] (root): type is neither a string nor "
                     "a list of strings"),
              std::string::npos)
        << m;
  }
  o.api_version = "latest";
  RestSlurmClient unknown(o, cli);
  try {
    unknown.output(sshare_query());
    ADD_FAILURE() << "a version that is not vX.Y.Z was taken";
  } catch (const SlurmError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("the API version 'latest' is not of the form vX.Y.Z (check --slurm-rest-api-version)"),
              std::string::npos)
        << m;
  }
  EXPECT_TRUE(cli.queries().empty()) << "a failure is not hidden by running sshare";
}

TEST(RestSlurmClient, FailuresNameTheRequestAndSlurmsWordsButNotTheToken) {
  ScriptedSlurmrestd server;
  CannedSlurmClient cli;
  SlurmRestOptions o;
  o.url = server.url();
  o.token = "s3cret-token";
  o.api_version = "v0.0.40";
  RestSlurmClient rest(o, cli);
  try {
    rest.output(query("squeue_jobs"));
    ADD_FAILURE() << "a 401 was accepted";
  } catch (const SlurmError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("GET " + server.url() + "/slurm/v0.0.40/jobs: HTTP 401"), std::string::npos) << m;
    EXPECT_NE(m.find("token rejected: Authentication failure"), std::string::npos) << m;
    EXPECT_NE(m.find("--slurm-rest-token-file"), std::string::npos) << m;
    EXPECT_EQ(m.find("s3cret"), std::string::npos) << m;
  }
  EXPECT_EQ(server.paths(), std::vector<std::string>{"/slurm/v0.0.40/jobs"}) << "a set version is not negotiated";

  o.token = "good";
  o.max_response_bytes = 1024;
  server.big_ = true;
  RestSlurmClient small(o, cli);
  try {
    small.output(query("sdiag_json"));
    ADD_FAILURE() << "an answer over the limit was accepted";
  } catch (const SlurmError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than 1024 bytes"), std::string::npos) << e.what();
  }

  gcm::testing::RefusedPort refused;
  o.url = refused.url();
  RestSlurmClient away(o, cli);
  try {
    away.output(query("squeue_jobs"));
    ADD_FAILURE() << "a refused connection was accepted";
  } catch (const SlurmError& e) {
    EXPECT_NE(std::string(e.what()).find("slurmrestd did not answer"), std::string::npos) << e.what();
  }
}

TEST(RestSlurmClient, UrlsAreCheckedWhereTheyAreGiven) {
  EXPECT_EQ(slurm_rest_url_problem("unix:/run/slurmrestd.socket"), std::nullopt);
  EXPECT_EQ(slurm_rest_url_problem("http://ctl:6820"), std::nullopt);
  EXPECT_TRUE(slurm_rest_url_problem("unix:relative.sock"));
  EXPECT_TRUE(slurm_rest_url_problem("ftp://ctl"));
  EXPECT_TRUE(slurm_rest_url_problem(""));
}

TEST(SlurmBackend, TokenFromTheOptionTheFileOrSlurmJwt) {
  ScriptedSlurmrestd server;
  gcm::testing::TempDir dir;
  std::string file = dir.path() + "/token";
  std::ofstream(file) << "  good\n";
  auto jobs_with = [&](SlurmBackendOptions o) {
    SlurmBackend b;
    b.configure(o, std::chrono::seconds(5));
    EXPECT_TRUE(b.rest());
    return b.client().output(query("squeue_jobs")).size();
  };
  SlurmBackendOptions o;
  o.backend = "rest";
  o.rest_url = server.url();
  o.rest_token_file = file;
  EXPECT_GT(jobs_with(o), 1000u);
  EXPECT_EQ(server.token(), "good");

  o.rest_token_file.clear();
  ::setenv("SLURM_JWT", "good", 1);
  EXPECT_GT(jobs_with(o), 1000u);
  ::unsetenv("SLURM_JWT");

  SlurmBackend b;
  o.rest_url.clear();
  EXPECT_THROW(b.configure(o, std::chrono::seconds(5)), UsageError);
  o.rest_url = server.url();
  o.rest_token_file = dir.path() + "/missing";
  EXPECT_THROW(b.configure(o, std::chrono::seconds(5)), UsageError);
  o.backend = "cli";
  b.configure(o, std::chrono::seconds(5));
  EXPECT_FALSE(b.rest());
}

}  // namespace
}  // namespace gcm::slurm

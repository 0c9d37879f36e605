// The job-signal endpoint: requests in OTLP/JSON and protobuf attributed by their sender's credentials, refusals
// (unknown senders, another uid, limits) with their reasons, an NCCL Inspector request as the plugin writes it, and
// the real unix socket and loopback TCP paths.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/record.h"
#include "fake_procfs.h"
#include "jobsignal/job_signals.h"
#include "jobsignal/records.h"
#include "metrics_service.pb.h"

namespace gcm::jobsignal {
namespace {

using test::FakeProcfs;
namespace pbcm = opentelemetry::proto::collector::metrics::v1;

HttpRequest post(int64_t pid, int64_t uid, std::string body, std::string type = "application/json") {
  HttpRequest r;
  r.method = "POST";
  r.path = "/v1/metrics";
  r.headers["content-type"] = std::move(type);
  r.body = std::move(body);
  r.peer.unix_socket = true;
  r.peer.pid = pid;
  r.peer.uid = uid;
  return r;
}

// One gauge of steps, as the gcm reporter writes it.
std::string steps_json(const std::vector<double>& durations, const std::vector<double>& computes,
                       const std::string& resource_job = "") {
  auto points = [](const std::vector<double>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i)
      out += fmt::format("{}{{\"timeUnixNano\":\"{}\",\"asDouble\":{},\"attributes\":[{{\"key\":\"step\",\"value\":"
                         "{{\"intValue\":\"{}\"}}}}]}}",
                         i ? "," : "", 1700000000000000000ull + i, v[i], i);
    return out;
  };
  std::string res = resource_job.empty() ? "" : fmt::format(
      "\"resource\":{{\"attributes\":[{{\"key\":\"slurm.job.id\",\"value\":{{\"stringValue\":\"{}\"}}}}]}},",
      resource_job);
  return fmt::format(
      "{{\"resourceMetrics\":[{{{}\"scopeMetrics\":[{{\"scope\":{{\"name\":\"gcm-reporter\"}},\"metrics\":["
      "{{\"name\":\"gcm.job.step.duration\",\"unit\":\"s\",\"gauge\":{{\"dataPoints\":[{}]}}}},"
      "{{\"name\":\"gcm.job.step.compute_duration\",\"unit\":\"s\",\"gauge\":{{\"dataPoints\":[{}]}}}},"
      "{{\"name\":\"gcm.job.step.tokens\",\"gauge\":{{\"dataPoints\":[{{\"asInt\":\"4096\"}}]}}}},"
      "{{\"name\":\"process.cpu.time\",\"gauge\":{{\"dataPoints\":[{{\"asDouble\":1}}]}}}}"
      "]}}]}}]}}",
      res, points(durations), points(computes));
}

int64_t field(const Record& r, const char* name) { return r.at(name).as_int(); }

const Record* find_by(const std::vector<Record>& rs, const char* key, const std::string& value) {
  for (const auto& r : rs)
    if (r.at(key).as_string() == value) return &r;
  return nullptr;
}

struct Node {
  FakeProcfs proc;
  std::unique_ptr<JobSignals> js;
  explicit Node(StoreLimits limits = {}, size_t max_body = 4u << 20) {
    JobSignalOptions o;
    o.procfs = proc.root();
    o.limits = limits;
    o.max_body = max_body;
    js = std::make_unique<JobSignals>(o, nullptr);
  }
  WindowOutput close(int gpus = 8) {
    std::vector<detector::GpuWindow> ws(static_cast<size_t>(gpus));
    for (int g = 0; g < gpus; ++g) ws[static_cast<size_t>(g)].gpu = static_cast<unsigned>(g);
    return js->close_window(ws, 30);
  }
};

TEST(JobSignalEndpoint, JsonStepsAreTakenForTheSendersJobRankAndGpu) {
  Node n;
  n.proc.add_rank(100, "4242", 0, 0, "0");
  n.proc.add_rank(101, "4242", 1, 1, "1");
  HttpReply a = n.js->handle(post(100, 1000, steps_json({1.0, 1.1, 1.0}, {0.50, 0.52, 0.51})));
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.body, "{}");
  EXPECT_EQ(n.js->handle(post(101, 1000, steps_json({1.0, 1.0, 1.0}, {0.60, 0.61, 0.62}))).status, 200);
  WindowOutput w = n.close();
  ASSERT_EQ(w.summaries.size(), 1u);
  const Record& s = w.summaries[0];
  EXPECT_EQ(s.at("job_id").as_string(), "4242");
  EXPECT_EQ(field(s, "ranks"), 2);
  EXPECT_EQ(field(s, "steps"), 6);
  EXPECT_DOUBLE_EQ(s.at("step_duration").as_double(), 1.0);  // median over ranks of their medians (1.0, 1.0)
  EXPECT_DOUBLE_EQ(s.at("slowest_compute_duration").as_double(), 0.61);
  EXPECT_DOUBLE_EQ(s.at("compute_duration").as_double(), (0.51 + 0.61) / 2);  // the node's median of 2 ranks
  EXPECT_EQ(field(s, "slowest_rank"), 1);
  EXPECT_EQ(field(s, "slowest_gpu"), 1);
  EXPECT_DOUBLE_EQ(s.at("tokens_per_second").as_double(), 2 * 4096 / 30.0);
  EXPECT_EQ(field(w.receiver[0], "points"), 2 * 7);
  EXPECT_EQ(field(w.receiver[0], "points_ignored"), 2);  // process.cpu.time, ignored not refused
  // The running step count goes on across windows.
  n.js->handle(post(100, 1000, steps_json({1.0}, {0.5})));
  EXPECT_EQ(field(n.close().summaries[0], "steps"), 7);
}

TEST(JobSignalEndpoint, ProtobufRequestsAreTakenToo) {
  Node n;
  n.proc.add_rank(100, "77", 5, 0, "3");
  pbcm::ExportMetricsServiceRequest req;
  auto* m = req.add_resource_metrics()->add_scope_metrics()->add_metrics();
  m->set_name("gcm.job.step.compute_duration");
  auto* h = m->mutable_histogram();
  auto* p = h->add_data_points();
  p->set_count(4);
  p->set_sum(2.0);  // four steps of 0.5 s
  auto* d = req.mutable_resource_metrics(0)->mutable_scope_metrics(0)->add_metrics();
  d->set_name("gcm.job.step.duration");
  d->mutable_gauge()->add_data_points()->set_as_double(0.9);
  HttpReply r = n.js->handle(post(100, 1000, req.SerializeAsString(), "application/x-protobuf"));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/x-protobuf");
  WindowOutput w = n.close();
  ASSERT_EQ(w.summaries.size(), 1u);
  EXPECT_DOUBLE_EQ(w.summaries[0].at("slowest_compute_duration").as_double(), 0.5);
  EXPECT_EQ(field(w.summaries[0], "slowest_rank"), 5);
  EXPECT_EQ(field(w.summaries[0], "slowest_gpu"), 3);
}

TEST(JobSignalEndpoint, ClaimsInTheRequestAreIgnoredAndCounted) {
  Node n;
  n.proc.add_rank(100, "4242", 0, 0, "0");
  // The request says job 999: its points go to the sender's job, 4242.
  EXPECT_EQ(n.js->handle(post(100, 1000, steps_json({1.0}, {0.5}, "999"))).status, 200);
  EXPECT_EQ(n.js->handle(post(100, 1000, steps_json({1.0}, {0.5}, "4242"))).status, 200);  // agrees: no claim
  WindowOutput w = n.close();
  ASSERT_EQ(w.summaries.size(), 1u);
  EXPECT_EQ(w.summaries[0].at("job_id").as_string(), "4242");
  EXPECT_EQ(field(w.receiver[0], "claims_ignored"), 1);
}

TEST(JobSignalEndpoint, AProcessOfAnotherUidCannotWriteIntoTheJob) {
  Node n;
  // The cgroup says job 4242 belongs to uid 1000; uid 1001 forges SLURM_JOB_ID=4242 in its environment.
  n.proc.add_rank(100, "4242", 0, 0, "0", "0::/slurm/uid_1000/job_4242/step_0");
  n.proc.add_rank(300, "4242", 1, 1, "1");
  EXPECT_EQ(n.js->handle(post(100, 1000, steps_json({1.0}, {0.5}))).status, 200);
  HttpReply r = n.js->handle(post(300, 1001, steps_json({1.0}, {0.5})));
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.body.find("uid 1001) may not report for job 4242, which belongs to uid 1000"), std::string::npos)
      << r.body;
  // Root may (a launcher or a sidecar of the site).
  EXPECT_EQ(n.js->handle(post(300, 0, steps_json({1.0}, {0.5}))).status, 200);
  // Without a cgroup owner, the first uid to report owns the job on this node.
  n.proc.add_rank(400, "555", 0, 0, "2");
  n.proc.add_rank(401, "555", 1, 1, "3");
  EXPECT_EQ(n.js->handle(post(400, 2000, steps_json({1.0}, {0.5}))).status, 200);
  EXPECT_EQ(n.js->handle(post(401, 2001, steps_json({1.0}, {0.5}))).status, 403);
  WindowOutput w = n.close();
  EXPECT_EQ(field(*find_by(w.refused, "why", "wrong_owner"), "requests_refused"), 2);
  EXPECT_EQ(field(*find_by(w.summaries, "job_id", "4242"), "ranks"), 2);  // ranks 0 and (root's) 1
  EXPECT_EQ(field(*find_by(w.summaries, "job_id", "555"), "ranks"), 1);
}

TEST(JobSignalEndpoint, UnknownSendersAreRefusedWithAClearErrorAndCounted) {
  Node n;
  n.proc.add_process(100, {"HOME=/root"});
  HttpReply r = n.js->handle(post(100, 0, steps_json({1.0}, {0.5})));
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.body.find("unknown sender: the sending process 100 belongs to no Slurm job"), std::string::npos)
      << r.body;
  EXPECT_EQ(n.js->handle(post(12345, 0, steps_json({1.0}, {0.5}))).status, 403);  // gone
  HttpRequest tcp = post(0, 0, steps_json({1.0}, {0.5}));
  tcp.peer = HttpPeer{};
  tcp.peer.address = "127.0.0.1";
  tcp.peer.port = 40000;
  tcp.peer.local_address = "127.0.0.1";
  tcp.peer.local_port = 4318;
  r = n.js->handle(tcp);
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.body.find("no process of this node holds the connection from 127.0.0.1:40000"), std::string::npos);
  WindowOutput w = n.close();
  EXPECT_EQ(field(*find_by(w.refused, "why", "unknown_sender"), "requests_refused"), 3);
  EXPECT_TRUE(w.summaries.empty());
}

TEST(JobSignalEndpoint, LimitsOnBodiesRanksJobsAndStepsAreRefusalsWithTheirReason) {
  StoreLimits l;
  l.max_jobs = 2;
  l.max_ranks = 2;
  l.max_steps = 3;
  Node n(l, 2048);
  for (int r = 0; r < 3; ++r) n.proc.add_rank(100 + r, "1", r, r, std::to_string(r));
  n.proc.add_rank(200, "2", 0, 0, "4");
  n.proc.add_rank(300, "3", 0, 0, "5");
  EXPECT_EQ(n.js->handle(post(100, 1000, steps_json({1, 1, 1, 1, 1}, {0.5}))).status, 200);
  EXPECT_EQ(n.js->handle(post(101, 1000, steps_json({1}, {0.5}))).status, 200);
  HttpReply rank = n.js->handle(post(102, 1000, steps_json({1}, {0.5})));
  EXPECT_EQ(rank.status, 429);
  EXPECT_NE(rank.body.find("job 1 already has 2 ranks reporting on this node (the limit)"), std::string::npos);
  EXPECT_EQ(n.js->handle(post(200, 1000, steps_json({1}, {0.5}))).status, 200);
  HttpReply job = n.js->handle(post(300, 1000, steps_json({1}, {0.5})));
  EXPECT_EQ(job.status, 429);
  EXPECT_NE(job.body.find("2 jobs already report on this node (the limit)"), std::string::npos) << job.body;
  std::vector<double> many(60, 1.0);
  HttpReply big = n.js->handle(post(100, 1000, steps_json(many, many)));
  EXPECT_EQ(big.status, 413);
  EXPECT_NE(big.body.find("exceeds the limit of 2048 bytes"), std::string::npos) << big.body;
  HttpReply bad = n.js->handle(post(100, 1000, "{\"resourceMetrics\": 5}"));
  EXPECT_EQ(bad.status, 400);
  HttpReply type = n.js->handle(post(100, 1000, "x", "text/plain"));
  EXPECT_EQ(type.status, 415);
  WindowOutput w = n.close();
  EXPECT_EQ(field(*find_by(w.refused, "why", "rank_limit"), "requests_refused"), 1);
  EXPECT_EQ(field(*find_by(w.refused, "why", "job_limit"), "requests_refused"), 1);
  EXPECT_EQ(field(*find_by(w.refused, "why", "too_large"), "requests_refused"), 1);
  EXPECT_EQ(field(*find_by(w.refused, "why", "bad_request"), "requests_refused"), 2);
  // Rank 0 sent 5 steps, 3 are kept: 2 counted as dropped, and its step count is what was kept.
  EXPECT_EQ(field(*find_by(w.dropped, "why", "rank_window_full"), "points_dropped"), 2);
  EXPECT_EQ(field(*find_by(w.summaries, "job_id", "1"), "steps"), 3 + 1);
}

TEST(JobSignalEndpoint, OneUserForgingJobIdsCannotTakeEveryJobSlot) {
  StoreLimits l;
  l.max_unverified_jobs_per_uid = 2;
  Node n(l);
  for (int j = 0; j < 3; ++j) n.proc.add_rank(100 + j, std::to_string(900 + j), 0, 0, "0");
  n.proc.add_rank(200, "4242", 0, 0, "1", "0::/slurm/uid_1000/job_4242/step_0");
  EXPECT_EQ(n.js->handle(post(100, 1001, steps_json({1.0}, {0.5}))).status, 200);
  EXPECT_EQ(n.js->handle(post(101, 1001, steps_json({1.0}, {0.5}))).status, 200);
  HttpReply r = n.js->handle(post(102, 1001, steps_json({1.0}, {0.5})));
  EXPECT_EQ(r.status, 429);
  EXPECT_NE(r.body.find("uid 1001 already reports for 2 jobs that neither a cgroup nor the agent's attribution"),
            std::string::npos)
      << r.body;
  // A job its cgroup names is taken whatever that uid did.
  EXPECT_EQ(n.js->handle(post(200, 1000, steps_json({1.0}, {0.5}))).status, 200);
  // A refused sender holds no slot: a forged claim on a job of another uid leaves nothing behind.
  n.proc.add_rank(300, "4243", 0, 0, "2", "0::/slurm/uid_1000/job_4243/step_0");
  EXPECT_EQ(n.js->handle(post(300, 1001, steps_json({1.0}, {0.5}))).status, 403);
  EXPECT_EQ(n.close().summaries.size(), 3u);
  EXPECT_EQ(field(n.close().receiver[0], "jobs"), 3);
}

TEST(JobSignalEndpoint, BadValuesAreDroppedCountedAndSaidInThePartialSuccess) {
  Node n;
  n.proc.add_rank(100, "1", 0, 0, "0");
  HttpReply r = n.js->handle(post(100, 1000, steps_json({1.0, -2.0, 100000.0}, {0.5})));
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("\"rejectedDataPoints\":\"2\""), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("negative, non-finite or over-a-day"), std::string::npos) << r.body;
  WindowOutput w = n.close();
  EXPECT_EQ(field(*find_by(w.dropped, "why", "bad_value"), "points_dropped"), 2);
}

// An aggregated export of NCCL's Inspector plugin (NCCL_INSPECTOR_OTEL_EXPORT=1), written from its documented
// format: resource service.name and slurm.job.id, scope nccl-inspector, gauges with asDouble points whose
// attributes are all strings, gpu as GPU<cuda device id>.
std::string inspector_json(const std::string& job, const std::string& gpu, double exec_us, double busbw) {
  std::string attrs = fmt::format(
      "[{{\"key\":\"gpu\",\"value\":{{\"stringValue\":\"{}\"}}}},"
      "{{\"key\":\"comm_name\",\"value\":{{\"stringValue\":\"DP\"}}}},"
      "{{\"key\":\"version\",\"value\":{{\"stringValue\":\"v5.1\"}}}},"
      "{{\"key\":\"node\",\"value\":{{\"stringValue\":\"node50\"}}}},"
      "{{\"key\":\"n_nodes\",\"value\":{{\"stringValue\":\"4\"}}}},"
      "{{\"key\":\"nranks\",\"value\":{{\"stringValue\":\"32\"}}}},"
      "{{\"key\":\"message_size\",\"value\":{{\"stringValue\":\"8-9MB\"}}}},"
      "{{\"key\":\"collective\",\"value\":{{\"stringValue\":\"AllReduce\"}}}},"
      "{{\"key\":\"algo_proto\",\"value\":{{\"stringValue\":\"Ring_Simple\"}}}}]",
      gpu);
  return fmt::format(
      "{{\"resourceMetrics\":[{{\"resource\":{{\"attributes\":["
      "{{\"key\":\"service.name\",\"value\":{{\"stringValue\":\"nccl-inspector\"}}}},"
      "{{\"key\":\"slurm.job.id\",\"value\":{{\"stringValue\":\"{}\"}}}}]}},"
      "\"scopeMetrics\":[{{\"scope\":{{\"name\":\"nccl-inspector\"}},\"metrics\":["
      "{{\"name\":\"nccl_bus_bandwidth_gbs\",\"description\":\"NCCL bus bandwidth for collective operations\","
      "\"unit\":\"GB/s\",\"gauge\":{{\"dataPoints\":[{{\"attributes\":{},\"timeUnixNano\":\"1765223116927674000\","
      "\"asDouble\":{}}}]}}}},"
      "{{\"name\":\"nccl_collective_exec_time_microseconds\",\"description\":\"NCCL collective execution time\","
      "\"unit\":\"us\",\"gauge\":{{\"dataPoints\":[{{\"attributes\":{},\"timeUnixNano\":\"1765223116927674000\","
      "\"asDouble\":{}}}]}}}}]}}]}}]}}",
      job, attrs, busbw, attrs, exec_us);
}

TEST(JobSignalEndpoint, AnNcclInspectorRequestIsTakenAsItIs) {
  Node n;
  // One process per GPU, each seeing only its own device: its GPU0 is the node's GPU 2.
  n.proc.add_rank(100, "4242", 10, 2, "2");
  HttpReply r = n.js->handle(post(100, 1000, inspector_json("4242", "GPU0", 1500.0, 180.5)));
  EXPECT_EQ(r.status, 200) << r.body;
  WindowOutput w = n.close();
  ASSERT_EQ(w.summaries.size(), 1u);
  EXPECT_DOUBLE_EQ(w.summaries[0].at("collective_duration").as_double(), 0.0015);
  EXPECT_EQ(field(w.receiver[0], "points"), 1);
  EXPECT_EQ(field(w.receiver[0], "points_ignored"), 1);  // the bus bandwidth
  EXPECT_EQ(field(w.receiver[0], "claims_ignored"), 0);  // its slurm.job.id agrees
}

TEST(JobSignalEndpoint, OnlyPostV1MetricsIsServed) {
  Node n;
  HttpRequest r = post(1, 0, "{}");
  r.path = "/v1/logs";
  EXPECT_EQ(n.js->handle(r).status, 404);
  r.path = "/v1/metrics";
  r.method = "GET";
  EXPECT_EQ(n.js->handle(r).status, 405);
}

std::string raw_post(const std::string& body) {
  return fmt::format("POST /v1/metrics HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                     "{}\r\nConnection: close\r\n\r\n{}",
                     body.size(), body);
}

std::string round_trip(int fd, const std::string& request) {
  EXPECT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  std::string answer;
  char buf[4096];
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) answer.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return answer;
}

TEST(JobSignalEndpoint, TheUnixSocketAttributesByThePeersCredentials) {
  FakeProcfs proc;
  // This test process, as the kernel will name it through SO_PEERCRED, is rank 3 of job 4242 in the fake procfs.
  proc.add_rank(::getpid(), "4242", 3, 0, "1");
  gcm::testing::TempDir run;
  JobSignalOptions o;
  o.procfs = proc.root();
  o.socket_path = run.file("job-signals.sock");
  JobSignals js(o, nullptr);
  js.start();
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", o.socket_path.c_str());
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  std::string answer = round_trip(fd, raw_post(steps_json({1.0}, {0.5}, "999")));
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  std::vector<detector::GpuWindow> ws(2);
  ws[1].gpu = 1;
  WindowOutput w = js.close_window(ws, 30);
  ASSERT_EQ(w.summaries.size(), 1u);
  EXPECT_EQ(w.summaries[0].at("job_id").as_string(), "4242");
  EXPECT_EQ(field(w.summaries[0], "slowest_rank"), 3);
  EXPECT_EQ(field(w.summaries[0], "slowest_gpu"), 1);
  EXPECT_EQ(field(w.receiver[0], "claims_ignored"), 1);
  js.stop();
  EXPECT_FALSE(std::filesystem::exists(o.socket_path)) << "the socket file goes with the listener";
}

TEST(JobSignalEndpoint, OnlyALoopbackTcpAddressIsAccepted) {
  JobSignalOptions o;
  o.listen = "0.0.0.0:0";
  JobSignals js(o, nullptr);
  EXPECT_THROW(js.start(), std::invalid_argument);
}

TEST(JobSignalEndpoint, TheTcpPeerIsFoundThroughTheRealSocketTable) {
  // The real /proc: the sender is this test process, which is in no Slurm job, so it is refused as unknown, and the
  // refusal names it: its socket was traced to its pid.
  JobSignalOptions o;
  o.listen = "127.0.0.1:0";
  JobSignals js(o, nullptr);
  js.start();
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(js.tcp_port()));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  std::string answer = round_trip(fd, raw_post(steps_json({1.0}, {0.5})));
  if (std::getenv("SLURM_JOB_ID")) GTEST_SKIP() << "this test process runs inside a Slurm job: it is no stranger";
  EXPECT_EQ(answer.rfind("HTTP/1.1 403", 0), 0u) << answer;
  EXPECT_NE(answer.find(fmt::format("the sending process {} belongs to no Slurm job", ::getpid())),
              std::string::npos)
        << answer;
}

TEST(JobSignalEndpoint, TheTcpPeerOnIpv6LoopbackIsFoundThroughTheRealTcp6Table) {
  // As above on [::1]: the connection is in /proc/net/tcp6 only.
  if (::access("/proc/net/tcp6", R_OK) != 0) GTEST_SKIP() << "this kernel has no IPv6";
  JobSignalOptions o;
  o.listen = "[::1]:0";
  JobSignals js(o, nullptr);
  js.start();
  int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_port = htons(static_cast<uint16_t>(js.tcp_port()));
  a.sin6_addr = in6addr_loopback;
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  std::string answer = round_trip(fd, raw_post(steps_json({1.0}, {0.5})));
  if (std::getenv("SLURM_JOB_ID")) GTEST_SKIP() << "this test process runs inside a Slurm job: it is no stranger";
  EXPECT_EQ(answer.rfind("HTTP/1.1 403", 0), 0u) << answer;
  EXPECT_NE(answer.find(fmt::format("the sending process {} belongs to no Slurm job", ::getpid())),
            std::string::npos)
      << answer;
}

}  // namespace
}  // namespace gcm::jobsignal

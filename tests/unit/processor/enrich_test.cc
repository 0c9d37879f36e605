// slurm_processor's enrichment as the reference's slurmprocessor (§4.2): every metric type, logs and traces; string
// attributes for a point's GPU, lists without `gpu`, UUID -> uuid, resource job_id; unknown fields survive the
// decode/re-encode; the OTLP/HTTP answers for bad input.
#include <gtest/gtest.h>

#include <google/protobuf/unknown_field_set.h>

#include "core/gzip.h"
#include "processor/enrich.h"
#include "processor/otlp_request.h"
#include "slurm_processor_fixtures.h"
#include "status.pb.h"

namespace gcm::processor {
namespace {

using namespace fixtures;  // NOLINT: shared aliases and helpers (slurm_processor_fixtures.h)

HostLookup local_only() {
  auto t = node1_jobs();
  return [t](std::string_view host) { return host.empty() || host == "node1" ? t : nullptr; };
}

const pbc::AnyValue* find(const Attrs& attrs, const std::string& key) {
  for (const auto& kv : attrs)
    if (kv.key() == key) return &kv.value();
  return nullptr;
}

std::string str(const Attrs& attrs, const std::string& key) {
  const pbc::AnyValue* v = find(attrs, key);
  return v ? v->string_value() : "<absent>";
}

std::vector<std::string> list(const Attrs& attrs, const std::string& key) {
  const pbc::AnyValue* v = find(attrs, key);
  if (!v || !v->has_array_value()) return {"<no list>"};
  std::vector<std::string> out;
  for (const auto& e : v->array_value().values()) out.push_back(e.string_value());
  return out;
}

MetricsReq every_metric_type() {
  MetricsReq req;
  auto* rm = req.add_resource_metrics();
  set_str(rm->mutable_resource()->mutable_attributes(), "service.name", "test");
  auto* sm = rm->add_scope_metrics();
  auto* m = sm->add_metrics();
  m->set_name("gauge");
  add_points(m->mutable_gauge()->mutable_data_points());
  m = sm->add_metrics();
  m->set_name("sum");
  add_points(m->mutable_sum()->mutable_data_points());
  m = sm->add_metrics();
  m->set_name("histogram");
  add_points(m->mutable_histogram()->mutable_data_points());
  m = sm->add_metrics();
  m->set_name("exp_histogram");
  add_points(m->mutable_exponential_histogram()->mutable_data_points());
  m = sm->add_metrics();
  m->set_name("summary");
  add_points(m->mutable_summary()->mutable_data_points());
  return req;
}

template <typename Points>
void expect_enriched(const Points& pts, const std::string& metric) {
  SCOPED_TRACE(metric);
  ASSERT_EQ(pts.size(), 4);
  const Attrs& g0 = pts[0].attributes();
  EXPECT_EQ(str(g0, "job_id"), "11");
  EXPECT_EQ(str(g0, "job_name"), "prep");
  EXPECT_EQ(str(g0, "username"), "alice");
  EXPECT_EQ(str(g0, "qos"), "normal");
  EXPECT_EQ(str(g0, "partition"), "gpu");
  EXPECT_EQ(str(g0, "account"), "acct");
  EXPECT_EQ(str(g0, "num_nodes"), "1");
  EXPECT_EQ(str(g0, "array_job_id"), "");
  EXPECT_EQ(str(g0, "array_task_id"), "");
  EXPECT_EQ(str(g0, "uuid"), "GPU-aaaa");
  EXPECT_EQ(str(g0, "UUID"), "GPU-aaaa");
  EXPECT_EQ(g0.size(), 2 + 9 + 1);
  const Attrs& g1 = pts[1].attributes();  // two jobs: sorted, comma-joined values
  EXPECT_EQ(str(g1, "job_id"), "12,13");
  EXPECT_EQ(str(g1, "job_name"), "eval,train");
  EXPECT_EQ(str(g1, "username"), "bob,carol");
  EXPECT_EQ(str(g1, "array_job_id"), "12");
  EXPECT_EQ(str(g1, "array_task_id"), "1");
  EXPECT_EQ(str(g1, "qos"), "normal");
  EXPECT_EQ(find(g1, "uuid"), nullptr);
  EXPECT_EQ(pts[2].attributes().size(), 1) << "a GPU without a job stays untouched";
  const Attrs& none = pts[3].attributes();  // no gpu: the host's values as lists
  EXPECT_EQ(list(none, "job_id"), (std::vector<std::string>{"11", "12", "13"}));
  EXPECT_EQ(list(none, "username"), (std::vector<std::string>{"alice", "bob", "carol"}));
  EXPECT_EQ(list(none, "array_task_id"), (std::vector<std::string>{"1"}));
  EXPECT_EQ(list(none, "num_nodes"), (std::vector<std::string>{"1"}));
  EXPECT_EQ(none.size(), 1 + 9);
}

TEST(SlurmProcessorEnrich, EveryMetricType) {
  MetricsReq req = every_metric_type();
  EnrichStats st = enrich(req, local_only());
  EXPECT_EQ(st.items, 20u);
  EXPECT_EQ(st.enriched, 15u);  // per metric: gpu 0, gpu 1 and the point without gpu
  const auto& ms = req.resource_metrics(0).scope_metrics(0).metrics();
  expect_enriched(ms[0].gauge().data_points(), "gauge");
  expect_enriched(ms[1].sum().data_points(), "sum");
  expect_enriched(ms[2].histogram().data_points(), "histogram");
  expect_enriched(ms[3].exponential_histogram().data_points(), "exponential histogram");
  expect_enriched(ms[4].summary().data_points(), "summary");
  EXPECT_EQ(find(req.resource_metrics(0).resource().attributes(), "job_id"), nullptr)
      << "no resource attribute for metrics (as the reference)";
  EXPECT_EQ(count_items(req), 20u);
}

TEST(SlurmProcessorEnrich, NoJobsOnTheHostGivesEmptyLists) {
  auto empty = std::make_shared<const NodeJobs>(node_jobs_from({}));
  MetricsReq req;
  auto* p = req.add_resource_metrics()->add_scope_metrics()->add_metrics()->mutable_gauge()->add_data_points();
  set_str(p->mutable_attributes(), "other", "x");
  auto* g =
      req.mutable_resource_metrics(0)->mutable_scope_metrics(0)->mutable_metrics(0)->mutable_gauge()->add_data_points();
  set_str(g->mutable_attributes(), "gpu", "0");
  enrich(req, [&](std::string_view) { return empty; });
  const auto& pts = req.resource_metrics(0).scope_metrics(0).metrics(0).gauge().data_points();
  const pbc::AnyValue* ids = find(pts[0].attributes(), "job_id");
  ASSERT_NE(ids, nullptr);
  ASSERT_TRUE(ids->has_array_value());
  EXPECT_EQ(ids->array_value().values_size(), 0);
  EXPECT_EQ(pts[1].attributes().size(), 1);
}

// The kubelet source: a GPU given to a pod gets pod, namespace and container (the labels of gcm_gpu_job_info)
// beside its job's keys, or alone on a plain Kubernetes pod; a GPU without a pod, and a point without `gpu`, get
// none of them.
TEST(SlurmProcessorEnrich, APodsGpuGetsItsPodNamespaceAndContainer) {
  auto k8s = k8s_node_jobs();
  MetricsReq req;
  auto* g = req.add_resource_metrics()->add_scope_metrics()->add_metrics()->mutable_gauge();
  for (const char* gpu : {"0", "1", "2", "3"}) set_str(g->add_data_points()->mutable_attributes(), "gpu", gpu);
  g->add_data_points();
  EnrichStats st = enrich(req, [&](std::string_view) { return k8s; });
  EXPECT_EQ(st.items, 5u);
  EXPECT_EQ(st.enriched, 4u) << "GPUs 0, 1, 2 and the point without gpu; GPU 3 is idle";
  const auto& pts = g->data_points();
  EXPECT_EQ(str(pts[0].attributes(), "job_id"), "11");
  EXPECT_EQ(str(pts[0].attributes(), "pod"), "slurm-gpu-node-0");
  EXPECT_EQ(str(pts[0].attributes(), "namespace"), "slurm");
  EXPECT_EQ(str(pts[0].attributes(), "container"), "slurmd");
  EXPECT_EQ(str(pts[1].attributes(), "job_id"), "12");
  EXPECT_EQ(str(pts[1].attributes(), "pod"), "<absent>");
  EXPECT_EQ(str(pts[2].attributes(), "job_id"), "<absent>") << "a pod without a Slurm job has no job keys";
  EXPECT_EQ(str(pts[2].attributes(), "pod"), "notebook-7");
  EXPECT_EQ(str(pts[2].attributes(), "namespace"), "dev");
  EXPECT_EQ(str(pts[2].attributes(), "container"), "<absent>") << "the kubelet named no container";
  EXPECT_EQ(pts[3].attributes().size(), 1);
  EXPECT_EQ(find(pts[4].attributes(), "pod"), nullptr);
  EXPECT_EQ(list(pts[4].attributes(), "job_id"), (std::vector<std::string>{"11", "12"}));
}

TEST(SlurmProcessorEnrich, ExistingKeysAreReplacedNotDuplicated) {
  MetricsReq req;
  auto* p = req.add_resource_metrics()->add_scope_metrics()->add_metrics()->mutable_gauge()->add_data_points();
  set_str(p->mutable_attributes(), "job_id", "stale");
  set_str(p->mutable_attributes(), "gpu", "0");
  set_str(p->mutable_attributes(), "uuid", "old");
  set_str(p->mutable_attributes(), "UUID", "GPU-new");
  enrich(req, local_only());
  const Attrs& a = req.resource_metrics(0).scope_metrics(0).metrics(0).gauge().data_points(0).attributes();
  EXPECT_EQ(str(a, "job_id"), "11");
  EXPECT_EQ(str(a, "uuid"), "GPU-new");
  EXPECT_EQ(a.size(), 4 + 8);
}

TEST(SlurmProcessorEnrich, OtherHostsAreAttributedByTheirHostName) {
  MetricsReq req;
  for (const char* host : {"node1.example.org", "node9"}) {
    auto* rm = req.add_resource_metrics();
    set_str(rm->mutable_resource()->mutable_attributes(), "host.name", host);
    set_str(rm->add_scope_metrics()->add_metrics()->mutable_gauge()->add_data_points()->mutable_attributes(), "gpu",
            "0");
  }
  auto t = node1_jobs();
  std::vector<std::string> asked;
  enrich(req, [&](std::string_view host) {
    asked.emplace_back(host);
    return host == "node1.example.org" ? t : nullptr;
  });
  EXPECT_EQ(asked, (std::vector<std::string>{"node1.example.org", "node9"}));
  EXPECT_EQ(str(req.resource_metrics(0).scope_metrics(0).metrics(0).gauge().data_points(0).attributes(), "job_id"),
            "11");
  EXPECT_EQ(req.resource_metrics(1).scope_metrics(0).metrics(0).gauge().data_points(0).attributes().size(), 1)
      << "a host the sources cannot attribute passes unchanged";
}

TEST(SlurmProcessorEnrich, LogsGetResourceJobIdsAndTheirGpusJob) {
  LogsReq req;
  auto* rl = req.add_resource_logs();
  auto* sl = rl->add_scope_logs();
  set_int(sl->add_log_records()->mutable_attributes(), "gpu", 0);
  set_str(sl->add_log_records()->mutable_attributes(), "msg", "no gpu");
  set_str(sl->add_log_records()->mutable_attributes(), "gpu", "1");
  EnrichStats st = enrich(req, local_only());
  EXPECT_EQ(st.items, 3u);
  EXPECT_EQ(st.enriched, 2u);
  EXPECT_EQ(str(rl->resource().attributes(), "job_id"), "11,12,13");
  EXPECT_EQ(str(sl->log_records(0).attributes(), "job_id"), "11");
  EXPECT_EQ(str(sl->log_records(0).attributes(), "username"), "alice");
  EXPECT_EQ(sl->log_records(1).attributes().size(), 1) << "log records without gpu get no lists";
  EXPECT_EQ(str(sl->log_records(2).attributes(), "job_id"), "12,13");
}

TEST(SlurmProcessorEnrich, TracesGetResourceJobIdsAndTheirGpusJob) {
  TracesReq req;
  auto* rs = req.add_resource_spans();
  auto* ss = rs->add_scope_spans();
  auto* s = ss->add_spans();
  s->set_name("step");
  set_str(s->mutable_attributes(), "gpu", "0");
  set_str(ss->add_spans()->mutable_attributes(), "gpu", "2");
  EnrichStats st = enrich(req, local_only());
  EXPECT_EQ(st.items, 2u);
  EXPECT_EQ(st.enriched, 1u);
  EXPECT_EQ(str(rs->resource().attributes(), "job_id"), "11,12,13");
  EXPECT_EQ(str(ss->spans(0).attributes(), "job_name"), "prep");
  EXPECT_EQ(ss->spans(1).attributes().size(), 1);
}

TEST(SlurmProcessorEnrich, NoResourceJobIdWithoutJobs) {
  auto empty = std::make_shared<const NodeJobs>(node_jobs_from({}));
  LogsReq req;
  req.add_resource_logs()->add_scope_logs()->add_log_records();
  enrich(req, [&](std::string_view) { return empty; });
  EXPECT_EQ(req.resource_logs(0).resource().attributes_size(), 0);
}

// Unknown fields: a top-level field, one in a metric and one in a data point, all kept by decode/re-encode.
TEST(SlurmProcessorRequest, UnknownFieldsSurviveTheRoundTrip) {
  MetricsReq req = every_metric_type();
  auto* metric = req.mutable_resource_metrics(0)->mutable_scope_metrics(0)->mutable_metrics(0);
  metric->GetReflection()->MutableUnknownFields(metric)->AddVarint(1999, 42);
  auto* point = metric->mutable_gauge()->mutable_data_points(0);
  point->GetReflection()->MutableUnknownFields(point)->AddLengthDelimited(2999, "future");
  req.GetReflection()->MutableUnknownFields(&req)->AddFixed64(3999, 7);
  RequestResult r =
      process_request(Signal::Metrics, "application/x-protobuf", "", req.SerializeAsString(), 1 << 20, local_only());
  ASSERT_EQ(r.status, 200) << r.message;
  MetricsReq out;
  ASSERT_TRUE(out.ParseFromString(r.forward));
  const auto& top = out.GetReflection()->GetUnknownFields(out);
  ASSERT_EQ(top.field_count(), 1);
  EXPECT_EQ(top.field(0).number(), 3999);
  EXPECT_EQ(top.field(0).fixed64(), 7u);
  const auto& m = out.resource_metrics(0).scope_metrics(0).metrics(0);
  ASSERT_EQ(m.GetReflection()->GetUnknownFields(m).field_count(), 1);
  EXPECT_EQ(m.GetReflection()->GetUnknownFields(m).field(0).varint(), 42u);
  const auto& p = m.gauge().data_points(0);
  ASSERT_EQ(p.GetReflection()->GetUnknownFields(p).field_count(), 1);
  EXPECT_EQ(p.GetReflection()->GetUnknownFields(p).field(0).length_delimited(), "future");
  EXPECT_EQ(str(p.attributes(), "job_id"), "11");
  EXPECT_EQ(r.items, 20u);
}

TEST(SlurmProcessorRequest, JsonIsDecodedWithHexIdsAndForwardedAsProtobuf) {
  std::string body =
      R"({"resourceSpans":[{"resource":{"attributes":[{"key":"host.name","value":{"stringValue":"node1"}}]},
    "scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"s",
    "kind":2,"startTimeUnixNano":"1544712660000000000","futureField":1,
    "attributes":[{"key":"gpu","value":{"intValue":"0"}}]}]}]}]})";
  RequestResult r = process_request(Signal::Traces, "application/json; charset=utf-8", "", body, 1 << 20, local_only());
  ASSERT_EQ(r.status, 200) << r.message;
  EXPECT_TRUE(r.json);
  TracesReq out;
  ASSERT_TRUE(out.ParseFromString(r.forward));
  const auto& span = out.resource_spans(0).scope_spans(0).spans(0);
  EXPECT_EQ(span.trace_id().size(), 16u);
  EXPECT_EQ(static_cast<unsigned char>(span.trace_id()[0]), 0x5bu);
  EXPECT_EQ(static_cast<unsigned char>(span.span_id()[7]), 0x74u);
  EXPECT_EQ(span.start_time_unix_nano(), 1544712660000000000u);
  EXPECT_EQ(str(span.attributes(), "job_id"), "11");
  EXPECT_EQ(str(out.resource_spans(0).resource().attributes(), "job_id"), "11,12,13");
  EXPECT_EQ(success_body(Signal::Traces, true, 0, ""), "{}");
}

// The remote crash of the issue: 100 000 nested '[' (200 KB, or a 178-byte gzip) overflowed the stack. Now a 400
// naming the depth limit, before a DOM exists.
TEST(SlurmProcessorRequest, DeeplyNestedJsonIsA400NamingTheLimit) {
  std::string deep = R"({"resourceMetrics": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  RequestResult r = process_request(Signal::Metrics, "application/json", "", deep, 1 << 20, local_only());
  EXPECT_EQ(r.status, 400) << r.message;
  EXPECT_NE(r.message.find("JSON nested deeper than 128 levels"), std::string::npos) << r.message;
  std::string gz = gzip_compress(deep);
  EXPECT_LT(gz.size(), 1024u);
  r = process_request(Signal::Logs, "application/json", "gzip", gz, 1 << 20, local_only());
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.message.find("JSON nested deeper than 128 levels"), std::string::npos) << r.message;
  // Nesting within the limit still reaches protobuf's JSON reader, which words its own error.
  std::string fine = R"({"resourceMetrics": [{"resource": [[[1]]]}]})";
  r = process_request(Signal::Metrics, "application/json", "", fine, 1 << 20, local_only());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.message.find("nested deeper"), std::string::npos) << r.message;
}

TEST(SlurmProcessorRequest, GzipBodies) {
  MetricsReq req = every_metric_type();
  RequestResult r = process_request(Signal::Metrics, "application/x-protobuf", "gzip",
                                    gzip_compress(req.SerializeAsString()), 1 << 20, local_only());
  ASSERT_EQ(r.status, 200) << r.message;
  EXPECT_EQ(r.items, 20u);
  // A gzip bomb: small on the wire, over the limit once inflated.
  std::string zeros(2 << 20, '\0');
  r = process_request(Signal::Metrics, "application/x-protobuf", "gzip", gzip_compress(zeros), 1 << 20, local_only());
  EXPECT_EQ(r.status, 413);
  r = process_request(Signal::Metrics, "application/x-protobuf", "gzip", "not gzip", 1 << 20, local_only());
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.message.find("gzip"), std::string::npos) << r.message;
  r = process_request(Signal::Metrics, "application/x-protobuf", "br", "x", 1 << 20, local_only());
  EXPECT_EQ(r.status, 415);
}

// Every item gains the job attributes, so a body of many tiny items grows by hundreds of times when enriched (a
// 15 MB body of empty data points took a processor to 2.4 GB through the wire path and to 21 GB through messages).
// Past max_output both paths stop and answer 413, the wire path without handing the body to the message path.
TEST(SlurmProcessorRequest, AnEnrichedRequestPastItsBoundIsRefusedOnBothPaths) {
  MetricsReq req;
  auto* rm = req.add_resource_metrics();
  auto* g = rm->add_scope_metrics()->add_metrics()->mutable_gauge();
  for (int i = 0; i < 20000; ++i) g->add_data_points();  // 2 bytes each on the wire; no gpu: the host's lists
  std::string body = req.SerializeAsString();
  ASSERT_LT(body.size(), 50000u);
  for (Decoder d : {Decoder::Wire, Decoder::Messages}) {
    SCOPED_TRACE(d == Decoder::Wire ? "wire" : "messages");
    RequestResult whole =
        process_request(Signal::Metrics, "application/x-protobuf", "", body, 1 << 20, local_only(), d, {}, 64u << 20);
    ASSERT_EQ(whole.status, 200) << whole.message;
    ASSERT_GT(whole.forward.size(), 40 * body.size()) << "what the bound is for";
    RequestResult r =
        process_request(Signal::Metrics, "application/x-protobuf", "", body, 1 << 20, local_only(), d, {}, 1 << 20);
    EXPECT_EQ(r.status, 413);
    EXPECT_NE(r.message.find("at most 1048576 bytes"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("fewer items"), std::string::npos) << r.message;
    EXPECT_FALSE(r.message_path) << "the wire path refuses it itself; the message path was asked directly";
  }
  // A body only the message path takes (an unknown group first): bounded there too, and counted as its request.
  std::string grouped = std::string("\x9b\x06\x9c\x06", 4) + body;  // field 99, start group and end group
  RequestResult r = process_request(Signal::Metrics, "application/x-protobuf", "", grouped, 1 << 20, local_only(),
                                    Decoder::Wire, {}, 1 << 20);
  EXPECT_EQ(r.status, 413) << r.message;
  EXPECT_TRUE(r.message_path);
  // JSON goes through messages as well.
  std::string json = R"({"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"m","gauge":{"dataPoints":[)";
  for (int i = 0; i < 20000; ++i) json += i ? ",{}" : "{}";
  json += "]}}]}]}]}";
  r = process_request(Signal::Metrics, "application/json", "", json, 1 << 20, local_only(), Decoder::Wire, {}, 1 << 20);
  EXPECT_EQ(r.status, 413) << r.message;
  EXPECT_TRUE(r.json);
}

TEST(SlurmProcessorRequest, BadInputGetsTheRightStatusAndMessage) {
  std::string good = every_metric_type().SerializeAsString();
  RequestResult r = process_request(Signal::Metrics, "text/plain", "", good, 1 << 20, local_only());
  EXPECT_EQ(r.status, 415);
  EXPECT_NE(r.message.find("text/plain"), std::string::npos);
  r = process_request(Signal::Metrics, "application/x-protobuf", "", good.substr(0, good.size() - 3), 1 << 20,
                      local_only());
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.message.find("ExportMetricsServiceRequest"), std::string::npos) << r.message;
  r = process_request(Signal::Metrics, "application/x-protobuf", "", good, 100, local_only());
  EXPECT_EQ(r.status, 413);
  r = process_request(Signal::Logs, "application/json", "", "{not json", 1 << 20, local_only());
  EXPECT_EQ(r.status, 400);
  r = process_request(Signal::Logs, "application/json", "", R"({"resourceLogs":7})", 1 << 20, local_only());
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.message.find("ExportLogsServiceRequest"), std::string::npos) << r.message;
  gcm::otlp::Status st;
  ASSERT_TRUE(st.ParseFromString(error_body(false, 400, "why")));
  EXPECT_EQ(st.code(), 3);
  EXPECT_EQ(st.message(), "why");
}

TEST(SlurmProcessorRequest, PartialSuccessAnswers) {
  opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceResponse m;
  ASSERT_TRUE(m.ParseFromString(success_body(Signal::Metrics, false, 5, "full")));
  EXPECT_EQ(m.partial_success().rejected_data_points(), 5);
  EXPECT_EQ(m.partial_success().error_message(), "full");
  EXPECT_EQ(success_body(Signal::Logs, false, 0, ""), "");
  EXPECT_EQ(success_body(Signal::Logs, true, 2, "x"),
            R"({"partialSuccess":{"errorMessage":"x","rejectedLogRecords":"2"}})");
}

}  // namespace
}  // namespace gcm::processor

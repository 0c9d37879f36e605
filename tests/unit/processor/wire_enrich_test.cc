// The wire rewriter against the message path: for every kind of request the rewritten bytes decode to the message
// enrich() makes, with the same counts (canonical bodies even come out byte for byte the same); what it does not take
// it refuses, and process_request then answers exactly as the message path does, malformed bodies included.
#include <gtest/gtest.h>

#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/unknown_field_set.h>
#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>

#include <fstream>
#include <random>

#include "processor/enrich.h"
#include "processor/otlp_request.h"
#include "slurm_processor_fixtures.h"
#include "processor/wire_enrich.h"
#include "processor/wire_schema.h"

namespace gcm::processor {
namespace {

using namespace fixtures;  // NOLINT: shared aliases and helpers (slurm_processor_fixtures.h)

// node1 (and this host, ""): GPU 0 runs job 11, GPU 1 jobs 12 and 13, GPU 2 idle; idle-node: no jobs at all
// (empty lists); k8s-node: k8s_node_jobs(), with pods; anything else: not attributable (null).
HostLookup lookup() {
  auto t = node1_jobs();
  auto idle = std::make_shared<const NodeJobs>(node_jobs_from({}));
  auto k8s = k8s_node_jobs();
  return [t, idle, k8s](std::string_view host) -> std::shared_ptr<const NodeJobs> {
    if (host.empty() || host == "node1") return t;
    if (host == "idle-node") return idle;
    if (host == "k8s-node") return k8s;
    return nullptr;
  };
}

std::string kv(const std::string& key, const std::string& any_value) { return len(1, key) + len(2, any_value); }
std::string string_value(const std::string& s) { return len(1, s); }

struct Signals {
  Signal signal;
  WireOutcome (*wire)(std::string_view, const HostLookup&, std::string&, size_t);
  std::optional<uint64_t> (*count)(std::string_view);
};

template <typename Req>
Signals signals_of() {
  if constexpr (std::is_same_v<Req, MetricsReq>)
    return {Signal::Metrics, wire_enrich_metrics, wire_count_metric_points};
  if constexpr (std::is_same_v<Req, LogsReq>) return {Signal::Logs, wire_enrich_logs, wire_count_records};
  if constexpr (std::is_same_v<Req, TracesReq>) return {Signal::Traces, wire_enrich_traces, wire_count_records};
}

std::string differences(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  google::protobuf::util::DefaultFieldComparator nan_is_nan;  // a NaN double copied is the same NaN
  nan_is_nan.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer d;
  d.set_field_comparator(&nan_is_nan);
  std::string report;
  d.ReportDifferencesToString(&report);
  return d.Compare(a, b) ? "" : report;
}

// The wire path's output against enrich() of the decoded body; and process_request's answers through both paths.
// Returns whether the rewriter took the body.
template <typename Req>
bool expect_same(const std::string& body, bool expect_taken = true) {
  google::protobuf::LogSilencer quiet;  // protobuf logs every invalid UTF-8 string it refuses
  Signals s = signals_of<Req>();
  HostLookup l = lookup();
  std::string out;
  WireOutcome w = s.wire(body, l, out, 0);
  Req expected;
  bool decodes = expected.ParseFromString(body);
  if (w.ok) {
    EXPECT_TRUE(decodes) << "the rewriter took a body protobuf refuses";
    EnrichStats st = enrich(expected, l);
    Req got;
    EXPECT_TRUE(got.ParseFromString(out));
    EXPECT_EQ(differences(expected, got), "");
    EXPECT_EQ(w.stats.items, st.items);
    EXPECT_EQ(w.stats.enriched, st.enriched);
    // What a request refused before its enrichment counts, from its framing alone, is what the rewriter counts.
    EXPECT_EQ(s.count(body), std::optional<uint64_t>(w.stats.items));
  }
  if (expect_taken) {
    EXPECT_TRUE(w.ok) << w.why;
  }
  RequestResult by_wire = process_request(s.signal, "application/x-protobuf", "", body, 1 << 24, l, Decoder::Wire);
  RequestResult by_messages =
      process_request(s.signal, "application/x-protobuf", "", body, 1 << 24, l, Decoder::Messages);
  EXPECT_EQ(by_wire.status, by_messages.status);
  EXPECT_EQ(by_wire.message, by_messages.message);
  EXPECT_EQ(by_wire.items, by_messages.items);
  EXPECT_EQ(by_wire.enriched, by_messages.enriched);
  if (by_wire.status == 200) {
    Req a, b;
    EXPECT_TRUE(a.ParseFromString(by_wire.forward));
    EXPECT_TRUE(b.ParseFromString(by_messages.forward));
    EXPECT_EQ(differences(b, a), "");
  }
  return w.ok;
}

MetricsReq every_metric_type(const std::string& host) {
  MetricsReq req;
  auto* rm = req.add_resource_metrics();
  if (!host.empty()) set_str(rm->mutable_resource()->mutable_attributes(), "host.name", host);
  set_str(rm->mutable_resource()->mutable_attributes(), "service.name", "test");
  auto* sm = rm->add_scope_metrics();
  sm->mutable_scope()->set_name("scope");
  auto* m = sm->add_metrics();
  m->set_name("gauge");
  add_points(m->mutable_gauge()->mutable_data_points());
  m->mutable_gauge()->mutable_data_points(0)->set_as_double(1.5);
  m->mutable_gauge()->mutable_data_points(1)->set_flags(1);  // a field after the attributes
  m = sm->add_metrics();
  m->set_name("sum");
  m->mutable_sum()->set_is_monotonic(true);
  add_points(m->mutable_sum()->mutable_data_points());
  m = sm->add_metrics();
  m->set_name("histogram");
  add_points(m->mutable_histogram()->mutable_data_points());
  m->mutable_histogram()->mutable_data_points(0)->add_bucket_counts(3);
  m->mutable_histogram()->mutable_data_points(0)->add_explicit_bounds(0.5);
  m = sm->add_metrics();
  m->set_name("exp_histogram");
  add_points(m->mutable_exponential_histogram()->mutable_data_points());
  m->mutable_exponential_histogram()->mutable_data_points(0)->mutable_positive()->add_bucket_counts(9);
  m = sm->add_metrics();
  m->set_name("summary");
  add_points(m->mutable_summary()->mutable_data_points());
  m->mutable_summary()->mutable_data_points(0)->add_quantile_values()->set_quantile(0.5);
  sm->add_metrics()->set_name("no data");
  return req;
}

TEST(SlurmProcessorWire, EveryMetricTypeMatchesTheMessagePathByteForByte) {
  MetricsReq req = every_metric_type("");
  std::string body = req.SerializeAsString();
  expect_same<MetricsReq>(body);
  // A canonical body stays canonical: the new attributes go where protobuf writes them.
  std::string out;
  HostLookup l = lookup();
  ASSERT_TRUE(wire_enrich_metrics(body, l, out, 0).ok);
  EnrichStats st = enrich(req, l);
  EXPECT_EQ(out, req.SerializeAsString());
  EXPECT_EQ(st.items, 20u);
}

// The output buffer is a recycled one, written over without being cleared: whatever it held before (more, less, or
// nothing), the output is the same bytes; and requests of one size, then of another, each come out whole however the
// size of the room made first was learnt.
TEST(SlurmProcessorWire, AnyBufferWrittenOverGivesTheSameOutput) {
  HostLookup l = lookup();
  MetricsReq small_req = every_metric_type(""), large_req;
  for (int i = 0; i < 40; ++i) large_req.MergeFrom(every_metric_type(i % 2 ? "node1" : ""));
  for (const MetricsReq* req : {&small_req, &large_req, &small_req}) {
    std::string body = req->SerializeAsString();
    std::string fresh;
    ASSERT_TRUE(wire_enrich_metrics(body, l, fresh, 0).ok);
    for (std::string recycled : {std::string(3 * fresh.size(), '\xff'), std::string(fresh.size() / 3, 'x'),
                                 std::string(fresh.size(), '\0'), std::string()}) {
      ASSERT_TRUE(wire_enrich_metrics(body, l, recycled, 0).ok);
      EXPECT_EQ(recycled, fresh);
    }
  }
}

// A new buffer gets the room of the larger requests this thread enriched lately, not only its own request's: buffers
// go round the receiving threads and the forwarder, so one made for a small request would be thrown away (and a new
// one zero-filled) when a larger exporter's request is next written into it. A limit still bounds the room.
TEST(SlurmProcessorWire, NewBufferHasRoomForTheLargerRequestsSeenLately) {
  HostLookup l = lookup();
  MetricsReq small_req = every_metric_type(""), large_req;
  for (int i = 0; i < 40; ++i) large_req.MergeFrom(every_metric_type("node1"));
  std::string small_body = small_req.SerializeAsString(), large_body = large_req.SerializeAsString();
  std::string large_out, small_out, bounded_out;
  ASSERT_TRUE(wire_enrich_metrics(large_body, l, large_out, 0).ok);
  ASSERT_TRUE(wire_enrich_metrics(small_body, l, small_out, 0).ok);
  ASSERT_LT(4 * small_out.size(), large_out.size()) << "what the test is for";
  EXPECT_GE(small_out.capacity(), large_out.size());
  // The room given is learnt from the outputs, not asked of the limit: under a limit only the small request's fits.
  size_t limit = 2 * small_out.size();
  ASSERT_TRUE(wire_enrich_metrics(small_body, l, bounded_out, limit).ok);
  EXPECT_LE(bounded_out.capacity(), limit);
  EXPECT_EQ(bounded_out, small_out);
}

TEST(SlurmProcessorWire, HostsAttributedUnattributableAndIdle) {
  MetricsReq req;
  for (const char* host : {"node1", "node9", "idle-node", ""}) req.MergeFrom(every_metric_type(host));
  req.add_resource_metrics();  // no resource, no scopes
  expect_same<MetricsReq>(req.SerializeAsString());
}

TEST(SlurmProcessorWire, HostNameIsTheFirstStringOne) {
  MetricsReq req = every_metric_type("");
  auto* attrs = req.mutable_resource_metrics(0)->mutable_resource()->mutable_attributes();
  set_int(attrs, "host.name", 5);
  set_str(attrs, "host.name", "node9");
  set_str(attrs, "host.name", "node1");
  expect_same<MetricsReq>(req.SerializeAsString());
}

TEST(SlurmProcessorWire, ExistingKeysAreReplacedInPlace) {
  MetricsReq req;
  auto* g = req.add_resource_metrics()->add_scope_metrics()->add_metrics()->mutable_gauge();
  auto* p = g->add_data_points();
  set_str(p->mutable_attributes(), "job_id", "stale");
  set_str(p->mutable_attributes(), "gpu", "0");
  set_str(p->mutable_attributes(), "uuid", "old");
  set_str(p->mutable_attributes(), "job_id", "second stays");
  set_str(p->mutable_attributes(), "UUID", "GPU-new");
  p = g->add_data_points();  // no gpu: lists replace a string and a list
  set_str(p->mutable_attributes(), "username", "x");
  p->mutable_attributes()->Add()->set_key("qos");  // no value at all
  auto* list = p->mutable_attributes()->Add();
  list->set_key("account");
  list->mutable_value()->mutable_array_value()->add_values()->set_string_value("old");
  p = g->add_data_points();  // an idle GPU: only uuid, replacing
  set_str(p->mutable_attributes(), "gpu", "2");
  set_str(p->mutable_attributes(), "uuid", "x");
  set_int(p->mutable_attributes(), "UUID", 77);
  p = g->add_data_points();  // UUID without a value
  set_str(p->mutable_attributes(), "gpu", "0");
  p->mutable_attributes()->Add()->set_key("UUID");
  // Every point again: its list is then one the attribute memo remembers, and the writer that replaces in place
  // reads it whole from there.
  for (int i = 0, n = g->data_points_size(); i < n; ++i) *g->add_data_points() = g->data_points(i);
  expect_same<MetricsReq>(req.SerializeAsString());
  // Enriched twice: the second pass replaces everything it added the first time.
  MetricsReq once = req;
  enrich(once, lookup());
  expect_same<MetricsReq>(once.SerializeAsString());
}

// The kubelet source's pod keys: after the job keys where the GPU has both, alone where it has only a pod, a key the
// kubelet left empty not put, one already there replaced; a point without `gpu` gets the job lists only.
TEST(SlurmProcessorWire, PodKeysOfTheKubeletSourceMatchTheMessagePath) {
  MetricsReq req;
  auto* rm = req.add_resource_metrics();
  set_str(rm->mutable_resource()->mutable_attributes(), "host.name", "k8s-node");
  auto* g = rm->add_scope_metrics()->add_metrics()->mutable_gauge();
  for (const char* gpu : {"0", "1", "2", "3", "7"}) set_str(g->add_data_points()->mutable_attributes(), "gpu", gpu);
  set_int(g->add_data_points()->mutable_attributes(), "gpu", 2);
  auto* p = g->add_data_points();
  set_str(p->mutable_attributes(), "namespace", "stale");
  set_str(p->mutable_attributes(), "gpu", "2");
  g->add_data_points();  // no gpu
  for (int i = 0, n = g->data_points_size(); i < n; ++i) *g->add_data_points() = g->data_points(i);
  expect_same<MetricsReq>(req.SerializeAsString());
  MetricsReq once = req;
  enrich(once, lookup());
  expect_same<MetricsReq>(once.SerializeAsString());
  LogsReq logs;
  auto* rl = logs.add_resource_logs();
  set_str(rl->mutable_resource()->mutable_attributes(), "host.name", "k8s-node");
  auto* sl = rl->add_scope_logs();
  for (const char* gpu : {"0", "2", "3"}) set_str(sl->add_log_records()->mutable_attributes(), "gpu", gpu);
  expect_same<LogsReq>(logs.SerializeAsString());
}

// Our agent's points name their GPU's "uuid" themselves and have no "UUID": the job keys go after it (appended,
// nothing replaced), and a "uuid" is replaced only where a "UUID" is copied into it; a job key already there is.
TEST(SlurmProcessorWire, AnAgentsOwnUuidStaysAndTheJobKeysFollowIt) {
  MetricsReq req;
  auto* g = req.add_resource_metrics()->add_scope_metrics()->add_metrics()->mutable_gauge();
  for (int i = 0; i < 3; ++i) {  // the same list again: the attribute memo's copy of it
    auto* p = g->add_data_points();
    set_str(p->mutable_attributes(), "gpu", "0");
    set_str(p->mutable_attributes(), "uuid", "GPU-agent");
  }
  auto* p = g->add_data_points();  // a job key there: replaced, the uuid kept
  set_str(p->mutable_attributes(), "uuid", "GPU-agent");
  set_str(p->mutable_attributes(), "gpu", "0");
  set_str(p->mutable_attributes(), "partition", "stale");
  p = g->add_data_points();  // no gpu: the lists after it
  set_str(p->mutable_attributes(), "uuid", "GPU-agent");
  expect_same<MetricsReq>(req.SerializeAsString());
  std::string out;
  ASSERT_TRUE(wire_enrich_metrics(req.SerializeAsString(), lookup(), out, 0).ok);
  MetricsReq got;
  ASSERT_TRUE(got.ParseFromString(out));
  const auto& a = got.resource_metrics(0).scope_metrics(0).metrics(0).gauge().data_points(1).attributes();
  ASSERT_EQ(a.size(), 11);
  EXPECT_EQ(a[1].key(), "uuid");
  EXPECT_EQ(a[1].value().string_value(), "GPU-agent");
  EXPECT_EQ(a[2].key(), "job_id");
  EXPECT_EQ(a[2].value().string_value(), "11");
  const auto& replaced = got.resource_metrics(0).scope_metrics(0).metrics(0).gauge().data_points(3).attributes();
  ASSERT_EQ(replaced.size(), 11);
  EXPECT_EQ(replaced[2].key(), "partition");
  EXPECT_NE(replaced[2].value().string_value(), "stale");
}

TEST(SlurmProcessorWire, GpuValues) {
  MetricsReq req;
  auto* g = req.add_resource_metrics()->add_scope_metrics()->add_metrics()->mutable_gauge();
  set_int(g->add_data_points()->mutable_attributes(), "gpu", -1);
  set_int(g->add_data_points()->mutable_attributes(), "gpu", 2);
  set_str(g->add_data_points()->mutable_attributes(), "gpu", "7");
  g->add_data_points()->add_attributes()->set_key("gpu");                        // no value: no job, no lists
  g->add_data_points()->add_attributes()->mutable_value()->set_double_value(0);  // empty key
  auto* dbl = g->add_data_points()->add_attributes();
  dbl->set_key("gpu");
  dbl->mutable_value()->set_double_value(0);
  auto* p = g->add_data_points();  // the last gpu counts
  set_str(p->mutable_attributes(), "gpu", "9");
  set_int(p->mutable_attributes(), "gpu", 0);
  g->add_data_points();  // no attributes at all
  expect_same<MetricsReq>(req.SerializeAsString());
}

// The value of an attribute: a string, then an int, then a string: the last member wins; and unknown fields in
// values and KeyValues that are replaced stay where protobuf keeps them.
TEST(SlurmProcessorWire, OddButValidAttributes) {
  std::string gpu_last_member = kv("gpu", string_value("9") + varint(3 << 3) + varint(1));
  std::string stale_with_unknowns = kv("job_id", string_value("stale") + len(99, "u")) + len(7, "kv-unknown");
  std::string key_twice = len(1, "nothing") + len(1, "username") + len(2, string_value("old"));
  std::string wrong_type_value = len(1, "qos") + varint(2 << 3) + varint(5);  // value as a varint: unknown
  std::string point = len(7, gpu_last_member) + len(7, stale_with_unknowns) + len(7, key_twice) +
                      len(7, wrong_type_value) + varint(8 << 3) + varint(1);
  std::string list_point = len(7, kv("job_id", len(5, len(1, string_value("x"))) + len(99, "u")));
  std::string body = len(1, len(2, len(2, len(5, len(1, point) + len(1, list_point)))));
  expect_same<MetricsReq>(body);
}

TEST(SlurmProcessorWire, UnknownFieldsAtEveryLevelAndFieldsInAnyOrder) {
  MetricsReq req = every_metric_type("node1");
  req.GetReflection()->MutableUnknownFields(&req)->AddFixed64(3999, 7);
  auto* rm = req.mutable_resource_metrics(0);
  rm->GetReflection()->MutableUnknownFields(rm)->AddVarint(88, 1);
  auto* sm = rm->mutable_scope_metrics(0);
  sm->GetReflection()->MutableUnknownFields(sm)->AddLengthDelimited(77, "x");
  auto* m = sm->mutable_metrics(0);
  m->GetReflection()->MutableUnknownFields(m)->AddVarint(1999, 42);
  auto* g = m->mutable_gauge();
  g->GetReflection()->MutableUnknownFields(g)->AddFixed32(66, 3);
  auto* p = g->mutable_data_points(0);
  p->GetReflection()->MutableUnknownFields(p)->AddLengthDelimited(2999, "future");
  auto* kvp = p->mutable_attributes(0);
  kvp->GetReflection()->MutableUnknownFields(kvp)->AddVarint(5, 5);
  expect_same<MetricsReq>(req.SerializeAsString());

  // The resource after the scopes, attributes between other fields, the metric's name after its data.
  std::string point = varint(3 << 3 | 1) + std::string(8, '\1') + len(7, kv("other", string_value("x"))) +
                      varint(4 << 3 | 1) + std::string(8, '\2') + len(7, kv("gpu", string_value("0")));
  std::string metric = len(5, len(1, point) + len(1, point)) + len(1, "late name");
  std::string resource = len(1, kv("host.name", string_value("node1")));
  std::string body = len(1, len(2, len(2, metric)) + len(3, "schema") + len(1, resource)) + len(1, "");
  expect_same<MetricsReq>(body);
}

TEST(SlurmProcessorWire, LogsGetResourceJobIds) {
  LogsReq req;
  for (const char* host : {"node1", "node9", "idle-node"}) {
    auto* rl = req.add_resource_logs();
    set_str(rl->mutable_resource()->mutable_attributes(), "host.name", host);
    auto* sl = rl->add_scope_logs();
    set_int(sl->add_log_records()->mutable_attributes(), "gpu", 0);
    set_str(sl->add_log_records()->mutable_attributes(), "msg", "no gpu");
    auto* r = sl->add_log_records();
    set_str(r->mutable_attributes(), "gpu", "1");
    set_str(r->mutable_attributes(), "UUID", "not copied for logs");
    r->mutable_body()->set_string_value("Xid 79");
    r->set_time_unix_nano(5);
  }
  req.add_resource_logs()->add_scope_logs()->add_log_records();  // no resource: made for job_id
  auto* stale = req.add_resource_logs()->mutable_resource();     // a job_id already there
  set_str(stale->mutable_attributes(), "job_id", "old");
  set_str(stale->mutable_attributes(), "job_id", "second");
  expect_same<LogsReq>(req.SerializeAsString());
  expect_same<LogsReq>(len(1, len(2, "") + len(1, "")));  // an empty resource after the scopes
}

TEST(SlurmProcessorWire, TracesGetResourceJobIds) {
  TracesReq req;
  for (const char* host : {"node1", "node9", ""}) {
    auto* rs = req.add_resource_spans();
    if (*host) set_str(rs->mutable_resource()->mutable_attributes(), "host.name", host);
    auto* ss = rs->add_scope_spans();
    auto* s = ss->add_spans();
    s->set_name("step");
    s->set_trace_id(std::string(16, '\x11'));
    s->add_events()->set_name("event");
    s->add_links()->set_trace_id("t");
    s->mutable_status()->set_message("ok");
    set_str(s->mutable_attributes(), "gpu", "0");
    set_str(ss->add_spans()->mutable_attributes(), "gpu", "2");
    set_int(ss->add_spans()->mutable_attributes(), "gpu", 1);
  }
  expect_same<TracesReq>(req.SerializeAsString());
}

TEST(SlurmProcessorWire, EmptyRequests) {
  expect_same<MetricsReq>("");
  expect_same<LogsReq>("");
  expect_same<TracesReq>("");
  MetricsReq req;
  req.add_resource_metrics()->add_scope_metrics()->add_metrics();
  expect_same<MetricsReq>(req.SerializeAsString());
}

// The count of a request refused before it is enriched reads only the framing: broken framing, or a metric with two
// data fields (which protobuf merges or replaces), is not counted there (the request takes the usual path).
TEST(SlurmProcessorWire, ItemsCountedFromTheFramingAlone) {
  std::string point = len(1, len(7, kv("gpu", string_value("0"))));
  EXPECT_EQ(wire_count_metric_points(len(1, len(2, len(2, len(5, point + point))))), std::optional<uint64_t>(2));
  EXPECT_EQ(wire_count_metric_points(len(1, len(2, len(2, len(9, point) + len(3, "unit"))))),
            std::optional<uint64_t>(1));
  EXPECT_EQ(wire_count_metric_points(""), std::optional<uint64_t>(0));
  EXPECT_EQ(wire_count_metric_points(len(1, len(2, len(2, len(5, point) + len(7, point))))), std::nullopt);
  std::string body = len(1, len(2, len(2, len(5, point))));
  EXPECT_EQ(wire_count_metric_points(body.substr(0, body.size() - 1)), std::nullopt);  // truncated
  EXPECT_EQ(wire_count_records(len(1, len(2, len(2, "a") + len(2, "b") + len(1, "scope")))),
            std::optional<uint64_t>(2));
  EXPECT_EQ(wire_count_records("\xff"), std::nullopt);
}

// Valid bodies the rewriter leaves to protobuf: the answer is still the message path's.
TEST(SlurmProcessorWire, MergedFieldsGroupsAndDeepNestingFallBack) {
  std::string point = len(1, len(7, kv("gpu", string_value("0"))));
  std::string resource = len(1, kv("host.name", string_value("node1")));
  EXPECT_FALSE(expect_same<MetricsReq>(len(1, resource + resource + len(2, len(2, len(5, point)))), false));
  EXPECT_FALSE(expect_same<MetricsReq>(len(1, len(2, len(2, len(5, point) + len(7, point)))), false));
  EXPECT_FALSE(expect_same<MetricsReq>(len(1, len(2, len(2, len(5, point) + len(5, point)))), false));
  std::string gpu_value_twice = len(1, len(7, len(1, "gpu") + len(2, string_value("0")) + len(2, string_value("1"))));
  EXPECT_FALSE(expect_same<MetricsReq>(len(1, len(2, len(2, len(5, gpu_value_twice)))), false));
  std::string group = varint(50 << 3 | 3) + varint(1 << 3) + varint(1) + varint(50 << 3 | 4);
  EXPECT_FALSE(expect_same<MetricsReq>(len(1, len(2, group)), false));
  // An attribute value nested 95 deep (arrays in arrays): protobuf takes it, the rewriter leaves it.
  std::string deep = string_value("x");
  for (int i = 0; i < 44; ++i) deep = len(5, len(1, deep));  // the innermost value 95 deep
  EXPECT_FALSE(expect_same<MetricsReq>(len(1, len(2, len(2, len(5, len(1, len(7, kv("k", deep))))))), false));
}

// Bodies protobuf refuses are refused, with the message path's answer.
TEST(SlurmProcessorWire, MalformedBodiesAreRefused) {
  google::protobuf::LogSilencer quiet;
  std::string good = every_metric_type("node1").SerializeAsString();
  std::string bad_utf8 = "\xc0\xaf";
  auto in_metric = [](const std::string& metric) { return len(1, len(2, len(2, metric))); };
  auto in_gauge_point = [&](const std::string& point) { return in_metric(len(5, len(1, point))); };
  std::vector<std::string> bodies = {
      in_metric(len(1, bad_utf8)),                     // a metric's name (a copied field)
      in_gauge_point(len(7, kv("k" + bad_utf8, ""))),  // an attribute's key
      in_gauge_point(len(7, kv("k", len(6, len(1, kv("x", string_value(bad_utf8))))))),  // in a kvlist value
      in_metric(len(9, len(1, len(6, "1234567")))),        // packed fixed64 bucket counts, 7 bytes
      in_metric(len(10, len(1, len(8, len(2, "\x80"))))),  // packed varint cut short
      std::string("\x0f", 1),                              // wire type 7
      std::string("\x02\x05", 2),                          // field number 0
      std::string("\x0a\x80\x80\x80\x80\x10", 6),          // a length over 2^32
      std::string("\x0a\x7f", 2),                          // a length past the end
      len(1, varint(2 << 3) + std::string(11, '\xff')),    // an 11-byte varint
      len(1, std::string("\x0c", 1)),                      // an end-group tag
  };
  for (size_t i = 0; i < bodies.size(); ++i) {
    SCOPED_TRACE(i);
    MetricsReq probe;
    EXPECT_FALSE(probe.ParseFromString(bodies[i]));
    EXPECT_FALSE(expect_same<MetricsReq>(bodies[i], false));
    RequestResult r = process_request(Signal::Metrics, "application/x-protobuf", "", bodies[i], 1 << 20, lookup());
    EXPECT_EQ(r.status, 400);
    EXPECT_NE(r.message.find("ExportMetricsServiceRequest"), std::string::npos);
  }
  // Every truncation of a good body: refused exactly where protobuf refuses, equal where both take it.
  for (size_t n = 0; n < good.size(); ++n) {
    SCOPED_TRACE(n);
    expect_same<MetricsReq>(good.substr(0, n), false);
  }
}

// The rewriter's UTF-8 check refuses exactly what protobuf's does, around every boundary of the encoding (overlong
// forms, surrogates, noncharacters, the end of Unicode, stray and truncated bytes).
TEST(SlurmProcessorWire, Utf8CheckAgreesWithProtobuf) {
  google::protobuf::LogSilencer quiet;
  pbc::KeyValue probe;
  auto agree = [&](const std::string& s) {
    bool wire_ok = true;
    try {
      wire::check_utf8(s);
    } catch (const wire::WireReject&) {
      wire_ok = false;
    }
    bool protobuf_ok = probe.ParseFromString(len(1, s));
    if (wire_ok != protobuf_ok) ADD_FAILURE() << "differ on " << testing::PrintToString(s);
    return wire_ok == protobuf_ok;
  };
  std::string s;
  for (int a = 0; a < 256; ++a) {
    agree(std::string(1, static_cast<char>(a)));
    for (int b = 0; b < 256; ++b) {
      std::string two{static_cast<char>(a), static_cast<char>(b)};
      if (!agree(two) || !agree("abcdefgh" + two) || !agree(two + "abcdefgh")) return;
    }
  }
  for (int a : {0xe0, 0xe1, 0xed, 0xee, 0xef})
    for (int b = 0; b < 256; ++b)
      for (int c = 0; c < 256; ++c)
        if (!agree({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)})) return;
  for (int a : {0xf0, 0xf1, 0xf4, 0xf5, 0xf7, 0xf8, 0xff})
    for (int b = 0; b < 256; ++b)
      for (int c : {0x00, 0x7f, 0x80, 0xbf, 0xc0})
        for (int d : {0x00, 0x80, 0xbf, 0xc0})
          if (!agree({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c), static_cast<char>(d)})) return;
}

// Random damage to good bodies of the three signals: never a difference from the message path.
TEST(SlurmProcessorWire, MutatedBodiesAgreeWithTheMessagePath) {
  std::mt19937 rng(7);
  MetricsReq m = every_metric_type("node1");
  LogsReq l;
  set_int(l.add_resource_logs()->add_scope_logs()->add_log_records()->mutable_attributes(), "gpu", 0);
  TracesReq t;
  set_str(t.add_resource_spans()->add_scope_spans()->add_spans()->mutable_attributes(), "gpu", "1");
  int taken = 0;
  for (int i = 0; i < 3000; ++i) {
    int which = i % 3;
    std::string body = which == 0 ? m.SerializeAsString() : which == 1 ? l.SerializeAsString() : t.SerializeAsString();
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) body[rng() % body.size()] = static_cast<char>(rng());
    SCOPED_TRACE(i);
    bool ok = which == 0   ? expect_same<MetricsReq>(body, false)
              : which == 1 ? expect_same<LogsReq>(body, false)
                           : expect_same<TracesReq>(body, false);
    taken += ok;
    if (HasFailure()) break;
  }
  EXPECT_GT(taken, 100) << "the rewriter should take many damaged but valid bodies";
}

// WIRE_CASE=path reproduces a finding of tests/fuzz/otlp_wire_fuzz (its first byte picks the signal); with
// WIRE_TAKEN set, the rewriter must also take it (for seeds).
TEST(SlurmProcessorWire, CaseFromFile) {
  const char* path = getenv("WIRE_CASE");
  if (!path) GTEST_SKIP() << "WIRE_CASE not set";
  std::ifstream f(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(f)), {});
  ASSERT_FALSE(s.empty());
  std::string body = s.substr(1);
  bool taken = getenv("WIRE_TAKEN") != nullptr;
  switch (s[0] % 3) {
    case 0:
      expect_same<MetricsReq>(body, taken);
      break;
    case 1:
      expect_same<LogsReq>(body, taken);
      break;
    default:
      expect_same<TracesReq>(body, taken);
      break;
  }
}

}  // namespace
}  // namespace gcm::processor

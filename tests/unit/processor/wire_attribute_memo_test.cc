// AttributeMemo against scan_item: on every item, remembered or not, it gives scan_item's reading (the same
// attributes at the same addresses, the same roles, the same insertion point) and refuses what scan_item refuses.
#include "processor/wire_attribute_memo.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "metrics.pb.h"
#include "slurm_processor_fixtures.h"

namespace gcm::processor::wire {
namespace {

namespace pbm = opentelemetry::proto::metrics::v1;
constexpr uint32_t kAttrs = pbm::NumberDataPoint::kAttributesFieldNumber;

using fixtures::len;
using fixtures::varint;
// An attribute field of a data point: KeyValue{key, value{string_value}}.
std::string attr(const std::string& key, const std::string& value) {
  return len(kAttrs, len(1, key) + len(2, len(1, value)));
}
std::string fixed64(uint32_t field, uint64_t v) {
  std::string s = varint(field << 3 | 1);
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
  return s;
}
// time_unix_nano, as_double, then the attributes, as protobuf writes a NumberDataPoint.
std::string point(uint64_t t, const std::string& attrs, const std::string& after = "") {
  return fixed64(3, t) + fixed64(4, 0x3ff0000000000000ull) + attrs + after;
}
std::string dcgm_labels(int gpu) {
  return attr("gpu", std::to_string(gpu)) + attr("UUID", "GPU-" + std::to_string(gpu)) + attr("device", "nvidia0") +
         attr("modelName", "NVIDIA H100") + attr("Hostname", "node1");
}

void expect_same_attr(const Attr& x, const Attr& y, const std::string& which) {
  SCOPED_TRACE(which);
  EXPECT_EQ(x.begin, y.begin);
  EXPECT_EQ(x.end, y.end);
  EXPECT_EQ(x.kv.data(), y.kv.data());
  EXPECT_EQ(x.kv.size(), y.kv.size());
  EXPECT_EQ(x.key.data(), y.key.data());
  EXPECT_EQ(x.key, y.key);
  EXPECT_EQ(x.value.data(), y.value.data());
  EXPECT_EQ(x.value.size(), y.value.size());
  EXPECT_EQ(x.has_value, y.has_value);
  EXPECT_EQ(x.value_twice, y.value_twice);
}

// `a` by the memo, `b` by scan_item. The memo may leave the whole list out until complete() (the list is read only
// by the writer that replaces values); after it, the list is scan_item's.
void expect_same(const ItemScan& a, const ItemScan& b, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(a.attrs.size(), b.attrs.size());
  for (size_t i = 0; i < a.attrs.size(); ++i)
    expect_same_attr(a.attrs[i], b.attrs[i], "attribute " + std::to_string(i));
  EXPECT_EQ(a.insert_at, b.insert_at);
  ASSERT_EQ(a.gpu.has_value(), b.gpu.has_value());
  if (a.gpu) expect_same_attr(*a.gpu, *b.gpu, "gpu");
  ASSERT_EQ(a.uuid.has_value(), b.uuid.has_value());
  if (a.uuid) expect_same_attr(*a.uuid, *b.uuid, "UUID");
  EXPECT_EQ(a.added_keys, b.added_keys);
}

// Every item through one memo, in order, each compared with scan_item's reading of it.
void expect_as_scan_item(const std::vector<std::string>& items, int depth = 6) {
  const MessageRules& rules = rules_of<pbm::NumberDataPoint>();
  AttributeMemo memo;
  for (size_t i = 0; i < items.size(); ++i) {
    ItemScan by_memo, by_scan;
    memo.scan(items[i], kAttrs, rules, depth, by_memo);
    memo.complete(by_memo);
    scan_item(items[i], kAttrs, rules, depth, by_scan);
    expect_same(by_memo, by_scan, "item " + std::to_string(i));
  }
}

TEST(WireAttributeMemo, RepeatedLabelSetsReadAsScanItemReadsThem) {
  // 3 metrics x 4 GPUs: each label set comes back three times, at other addresses.
  std::vector<std::string> items;
  for (int m = 0; m < 3; ++m)
    for (int g = 0; g < 4; ++g) items.push_back(point(1000 + m, dcgm_labels(g)));
  expect_as_scan_item(items);
}

// The whole list of a remembered item comes only when asked (complete(): the writer that replaces values in place
// reads it again); until then an item gets what is read of every item, its gpu and UUID and which added keys it has.
TEST(WireAttributeMemo, AnItemsWholeListComesWhenAskedItsGpuAndUuidAlways) {
  std::vector<std::string> items;
  for (int m = 0; m < 3; ++m)
    for (int g = 0; g < 2; ++g) {
      items.push_back(point(1000 + m, dcgm_labels(g) + attr("job_id", "7")));
      items.push_back(point(2000 + m, attr("Hostname", "node1") + attr("gpu", std::to_string(g))));
    }
  expect_as_scan_item(items);
  const MessageRules& rules = rules_of<pbm::NumberDataPoint>();
  AttributeMemo memo;
  ItemScan s;
  for (const std::string& item : items) memo.scan(item, kAttrs, rules, 6, s);  // the last one is remembered
  EXPECT_TRUE(s.attrs.empty());
  ASSERT_TRUE(s.gpu);
  EXPECT_EQ(s.gpu->value, std::string_view(items.back()).substr(items.back().size() - 3, 3));  // string_value "1"
  memo.scan(items[0], kAttrs, rules, 6, s);
  EXPECT_TRUE(s.attrs.empty()) << "not asked for";
  EXPECT_TRUE(s.has_added_keys());
  memo.complete(s);
  EXPECT_EQ(s.attrs.size(), 6u) << "asked for: the whole list";
  memo.complete(s);
  EXPECT_EQ(s.attrs.size(), 6u) << "given once";
}

TEST(WireAttributeMemo, ALabelSetThatDiffersInItsLastByteIsReadAgain) {
  std::vector<std::string> items = {point(1, attr("gpu", "0") + attr("Hostname", "node1")),
                                    point(2, attr("gpu", "0") + attr("Hostname", "node2")),
                                    point(3, attr("gpu", "0") + attr("Hostname", "node1"))};
  expect_as_scan_item(items);
}

TEST(WireAttributeMemo, ARememberedRunFollowedByMoreAttributesIsScanItems) {
  std::string labels = attr("gpu", "1") + attr("UUID", "GPU-1");
  std::vector<std::string> items = {
      point(1, labels), point(2, labels, attr("gpu", "7")),     // one more attribute right after the run
      point(3, labels, fixed64(3, 5) + attr("uuid", "again")),  // after another field: attributes in two runs
      point(4, labels + varint(8 << 3) + varint(1)),            // flags after the run: the run is taken
  };
  expect_as_scan_item(items);
}

TEST(WireAttributeMemo, RunsArePerDepthAndLongerRunsDoNotReadPastTheItem) {
  const MessageRules& rules = rules_of<pbm::NumberDataPoint>();
  std::string two = attr("gpu", "2") + attr("UUID", "GPU-2");
  // The memo reads the items where they are (a request body outlives it): each item is kept while it is used.
  AttributeMemo memo;
  ItemScan s, t;
  std::string first = point(1, two);
  memo.scan(first, kAttrs, rules, 6, s);
  // A prefix of the remembered run: the run is longer than what is left of this item.
  std::string one = point(2, attr("gpu", "2"));
  memo.scan(one, kAttrs, rules, 6, s);
  scan_item(one, kAttrs, rules, 6, t);
  expect_same(s, t, "prefix");
  // The same bytes deeper than any AnyValue may nest: scan_item's refusal, not a remembered reading.
  std::string deep = point(3, two);
  EXPECT_THROW(scan_item(deep, kAttrs, rules, kMaxDepth, t), WireReject);
  EXPECT_THROW(memo.scan(deep, kAttrs, rules, kMaxDepth, s), WireReject);
}

TEST(WireAttributeMemo, AMalformedFieldAfterARememberedRunIsRefused) {
  const MessageRules& rules = rules_of<pbm::NumberDataPoint>();
  std::string labels = dcgm_labels(3);
  AttributeMemo memo;
  ItemScan s;
  std::string first = point(1, labels);
  memo.scan(first, kAttrs, rules, 6, s);
  std::string truncated = point(2, labels, varint(1 << 3 | 1) + "abc");  // a fixed64 of three bytes
  try {
    memo.scan(truncated, kAttrs, rules, 6, s);
    FAIL() << "a truncated field was taken";
  } catch (const WireReject& e) {
    EXPECT_STREQ(e.why, "truncated fixed64");
  }
  std::string bad_utf8 = point(3, labels, attr("Hostname", "\xff"));
  EXPECT_THROW(memo.scan(bad_utf8, kAttrs, rules, 6, s), WireReject);
}

TEST(WireAttributeMemo, MoreLabelSetsThanItRemembersStillReadRight) {
  std::vector<std::string> items;
  for (int round = 0; round < 3; ++round)
    for (int g = 0; g < 40; ++g) items.push_back(point(round, dcgm_labels(g)));
  expect_as_scan_item(items);
}

}  // namespace
}  // namespace gcm::processor::wire

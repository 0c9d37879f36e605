// The enrichment of enrich.h applied to serialized OTLP requests directly: the rewriter walks the known nesting down
// to the items (data points, log records, spans), adds their attributes, and copies every other field byte for byte,
// without building messages (decoding into messages, allocating nine KeyValues per point and encoding again cost
// about three times as much).
//
// It gives what the message path gives: the output decodes to the message enrich() makes of the decoded input, and
// the counts are the same. What it does not take it refuses rather than approximates, and the caller then uses the
// message path: malformed bodies (whose error message the message path words), and valid ones it leaves to protobuf:
// unknown groups, nesting deeper than kMaxDepth, a resource or a metric's data appearing twice (protobuf merges
// them), an attribute read or replaced whose value appears twice, a list attribute to replace that carries unknown
// fields. Every field it does not interpret is checked as protobuf's parser checks it (wire_schema.h), so a body it
// forwards is one the message path would have accepted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "processor/enrich.h"

namespace gcm::processor {

struct WireOutcome {
  bool ok = false;
  const char* why = nullptr;  // when !ok: what the rewriter did not take
  EnrichStats stats;
};

// Writes the enriched request to out (replacing its content, in its allocation when that is large enough;
// unspecified when !ok). Throws EnrichedTooLarge (enrich.h) when the output would pass max_output bytes (0: no
// bound): such a request is refused, not handed to the message path, which would grow it further.
WireOutcome wire_enrich_metrics(std::string_view body, const HostLookup& lookup, std::string& out, size_t max_output);
WireOutcome wire_enrich_logs(std::string_view body, const HostLookup& lookup, std::string& out, size_t max_output);
WireOutcome wire_enrich_traces(std::string_view body, const HostLookup& lookup, std::string& out, size_t max_output);

// How many items a serialized request holds, read from the length prefixes of its nesting alone (nothing else is
// read or checked): the count of a request refused before it is enriched (Service::export_request). nullopt where
// that framing is broken, and for a metric with two data fields (which protobuf would merge or replace): such a
// request takes the usual path, whose answer names what is wrong.
std::optional<uint64_t> wire_count_metric_points(std::string_view body);
std::optional<uint64_t> wire_count_records(std::string_view body);  // log records or spans

}  // namespace gcm::processor

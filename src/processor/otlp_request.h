// One OTLP/HTTP export request through slurm_processor: decode (protobuf or JSON, optionally gzip), enrich, and
// re-encode as protobuf for the downstream; or the error status OTLP/HTTP prescribes (400 undecodable, 413 over the
// size limit, 415 unknown content type) with a google.rpc.Status message naming the problem.
//
// Unknown fields: a protobuf body is rewritten as bytes, or decoded and re-encoded by protobuf; both keep fields this
// build does not declare byte for byte. A JSON body has no such place: protobuf's JSON parser ignores unknown keys
// (as OTLP asks receivers to), so they are not forwarded; the downstream always receives protobuf.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "otlp/signal.h"
#include "processor/enrich.h"

namespace opentelemetry::proto::collector::metrics::v1 {
class ExportMetricsServiceRequest;
}

namespace gcm::processor {

using otlp::Signal;
using otlp::signal_name;
using otlp::signal_path;
using otlp::item_name;

struct RequestResult {
  int status = 200;
  std::string message;  // why, when status is not 200
  bool json = false;    // the client spoke JSON: answer in JSON
  std::string forward;  // the enriched request, protobuf
  uint64_t items = 0;
  uint64_t enriched = 0;
  bool message_path = false;  // a protobuf body the wire rewriter did not take, so decoded as messages instead
};

// How a protobuf body is enriched. Wire: rewritten as bytes (wire_enrich.h), falling back to Messages for what the
// rewriter does not take (malformed bodies among them, whose error the message path words); Messages: decoded,
// enriched and encoded again. JSON bodies always go through messages. Both give the same forwarded request.
enum class Decoder { Wire, Messages };

// content_type and content_encoding are the raw header values (parameters such as "; charset=utf-8" allowed).
// max_body bounds the body both as received and after gzip inflation. `recycled` becomes the result's `forward`
// before it is written: a receiver hands back the `forward` of its previous request, so that the wire path writes
// into memory that is already allocated and touched (a fresh buffer per request costs malloc's consolidation of the
// heap on every large free, and the zero-fill of the new buffer, more than the rewriting itself).
// max_output bounds the enriched request (0: no bound): a request that enrichment would take past it is answered 413
// (a request of millions of tiny items gains attributes on each, hundreds of times its size: enrich.h).
RequestResult process_request(Signal signal, std::string_view content_type, std::string_view content_encoding,
                              std::string_view body, size_t max_body, const HostLookup& lookup,
                              Decoder decoder = Decoder::Wire, std::string recycled = {}, size_t max_output = 0);

// The same checks and decoding as process_request (content type, size before and after gzip, JSON or protobuf), into
// `out`, for a receiver that reads the points itself (the agent's job-signal endpoint): status 200, or the error
// status and message process_request would answer; `json` is the client's encoding. Nothing is forwarded.
RequestResult decode_metrics_request(std::string_view content_type, std::string_view content_encoding,
                                     std::string_view body, size_t max_body,
                                     opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest& out);

// A protobuf body sent as it is (no Content-Encoding, or identity): what the wire path reads without decoding first.
bool plain_protobuf(std::string_view content_type, std::string_view content_encoding);

// What a receiver keeps of a request's `forward` for its next one: the larger of that buffer and `kept` (a request
// answered before decoding never took `kept`), unless one huge request grew it past what a typical one needs (then
// both are given back to the allocator).
void recycle_forward_buffer(std::string& kept, std::string&& forward);

// The success answer (ExportXServiceResponse, with partial_success when rejected > 0) in the client's encoding.
std::string success_body(Signal signal, bool json, int64_t rejected, const std::string& message);
// An error answer: google.rpc.Status {code, message} in the client's encoding (JSON for unknown content types).
std::string error_body(bool json, int http_status, const std::string& message);

}  // namespace gcm::processor
